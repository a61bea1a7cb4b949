// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: a zswap_store_large hook that breaks the rules of a
 * whole-folio store, one way per mode, to show that the kernel (6.12), not
 * the module, holds them: the folio then goes to the swap device, nothing
 * of it stays in zswap, and the kernel logs the module's error. Registers
 * with the hook core in mmtune.ko's place and switches zswap_large on.
 *
 *   insmod zswap_liar.ko mode=lie      return 0, store nothing
 *   insmod zswap_liar.ko mode=partial  store every page but the last,
 *                                      return 0
 *   insmod zswap_liar.ko mode=limits   store every page even when the
 *                                      kernel says a limit refuses the
 *                                      folio, return 0
 *   insmod zswap_liar.ko mode=once     store a folio honestly the first
 *                                      time, then return 0 and store
 *                                      nothing when it is offered again
 *                                      (its old entries must not count)
 *   insmod zswap_liar.ko mode=reverse  an honest store, last page first:
 *                                      stored whole
 *
 * /sys/kernel/debug/zswap_liar/offered counts the offers, refused_offers
 * those the kernel's limit check refused.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/mm.h>
#include <linux/zswap.h>
#include "mmtune_test.h"

static char *mode = "lie";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "lie, partial, limits, once or reverse");

static atomic_long_t offered = ATOMIC_LONG_INIT(0);
static atomic_long_t refused_offers = ATOMIC_LONG_INIT(0);

enum liar_mode { LIE, PARTIAL, LIMITS, ONCE, REVERSE };
static const char *const mode_names[] = { "lie", "partial", "limits", "once", "reverse" };
static enum liar_mode liar_mode;
/* mode once: the swap entry of the last folio stored honestly */
static atomic_long_t stored_swap = ATOMIC_LONG_INIT(0);

/* Stores pages [from, to) of @st's folio, in the order @step gives. */
static int store_range(struct zswap_large_store *st, long from, long to,
		       long step)
{
	long i;
	int err;

	for (i = step > 0 ? from : to - 1; i >= from && i < to; i += step) {
		err = zswap_store_subpage(st, i, false);
		if (err)
			return err;
	}
	return 0;
}

static int liar_store(struct folio *folio, int refused,
		      struct zswap_large_store *st)
{
	long nr = folio_nr_pages(folio);

	atomic_long_inc(&offered);
	if (refused)
		atomic_long_inc(&refused_offers);
	switch (liar_mode) {
	case LIE:
		return 0;
	case PARTIAL:
		return refused ?: store_range(st, 0, nr - 1, 1);
	case LIMITS:
		return store_range(st, 0, nr, 1);
	case ONCE:
		if (atomic_long_read(&stored_swap) == folio->swap.val)
			return 0;
		if (refused || store_range(st, 0, nr, 1))
			return -EIO;
		atomic_long_set(&stored_swap, folio->swap.val);
		return 0;
	case REVERSE:
		return refused ?: store_range(st, 0, nr, -1);
	}
	return -EINVAL;
}

static int counter_get(void *data, u64 *val)
{
	*val = atomic_long_read(data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(counter_fops, counter_get, NULL, "%llu\n");

static struct mmtune_ops liar_ops = {
	.ops_size		= sizeof(struct mmtune_ops),
	.abi_version		= MMTUNE_ABI_VERSION,
	.owner			= THIS_MODULE,
	.zswap_store_large	= liar_store,
};

static int __init zswap_liar_init(void)
{
	struct dentry *dir;
	int ret = match_string(mode_names, ARRAY_SIZE(mode_names), mode);

	if (ret < 0) {
		pr_err("unknown mode %s\n", mode);
		return -EINVAL;
	}
	liar_mode = ret;
	ret = mmtune_test_start(&liar_ops, BIT(MMTUNE_ZSWAP_LARGE));
	if (ret)
		return ret;
	dir = debugfs_create_dir("zswap_liar", NULL);
	debugfs_create_file_unsafe("offered", 0400, dir, &offered, &counter_fops);
	debugfs_create_file_unsafe("refused_offers", 0400, dir, &refused_offers,
				   &counter_fops);
	return 0;
}

MMTUNE_TEST_MODULE(zswap_liar, liar_ops,
		   "A zswap_store_large hook that breaks its rules (tests only)");

// SPDX-License-Identifier: GPL-2.0
/*
 * mmtune: swap and page allocation tuning behind the mmtune hook points of
 * a patched kernel (CONFIG_MMTUNE_HOOKS).
 *
 * This file registers with the hook core and keeps the mask of features
 * that are switched on. Each feature lives in a file of its own and fills
 * in its entry of mmtune_features[].
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/mutex.h>

#include "mmtune.h"
#include "version.h"

const struct mmtune_ops mmtune_ops = {
	.abi_version		= MMTUNE_ABI_VERSION,
	.ops_size		= sizeof(struct mmtune_ops),
	.owner			= THIS_MODULE,
#ifdef CONFIG_ZSWAP
	.zswap_store_large	= mmtune_zswap_store_whole,
#endif
#ifdef CONFIG_SWAP
	.swap_slot_alloc	= mmtune_slots_alloc,
	.swap_slot_free		= mmtune_slots_free,
	.swap_slots_drain	= mmtune_slots_drain,
#endif
#ifdef CONFIG_TRANSPARENT_HUGEPAGE
	.thp_swap_split		= thp_swap_split_hook,
	.split_zero_mark	= split_zero_mark_hook,
	.split_zero_done	= split_zero_done_hook,
#endif
	.pcp_free		= mmtune_pcp_hook_free,
	.pcp_refill		= mmtune_pcp_hook_refill,
	.pcp_decay		= mmtune_pcp_hook_decay,
};

struct mmtune_feature_impl mmtune_features[NR_MMTUNE_FEATURES] = {
#ifdef CONFIG_SWAP
	[MMTUNE_SWAP_SLOTS] = { mmtune_swap_slots_init, mmtune_swap_slots_exit },
#endif
#ifdef CONFIG_ZSWAP
	[MMTUNE_ZSWAP_LARGE] = { mmtune_zswap_init, mmtune_zswap_exit },
#endif
#ifdef CONFIG_TRANSPARENT_HUGEPAGE
	[MMTUNE_THP_SWAP] = { mmtune_thp_swap_init, mmtune_thp_swap_exit },
	[MMTUNE_SPLIT_ZERO] = { mmtune_split_zero_init, mmtune_split_zero_exit },
#endif
	[MMTUNE_PCP_HIGH] = { mmtune_pcp_init, mmtune_pcp_exit },
};

/* Serialises feature switches; protects mmtune_active and mmtune_unloading. */
static DEFINE_MUTEX(mmtune_switch_lock);
static unsigned long mmtune_active;
static bool mmtune_unloading;

bool mmtune_feature_is_on(enum mmtune_feature feature)
{
	return READ_ONCE(mmtune_active) & BIT(feature);
}

/*
 * Turn one feature's hooks on or off. Sleeps: when it turns a feature off,
 * it returns only after every CPU has left that feature's hooks.
 */
int mmtune_feature_switch(enum mmtune_feature feature, bool on)
{
	unsigned long next;
	int ret;

	if (feature >= NR_MMTUNE_FEATURES || !mmtune_features[feature].init)
		return -EOPNOTSUPP;

	mutex_lock(&mmtune_switch_lock);
	if (mmtune_unloading) {
		ret = -ENODEV;
		goto out;
	}
	next = on ? mmtune_active | BIT(feature) : mmtune_active & ~BIT(feature);
	ret = mmtune_set_features(&mmtune_ops, next);
	if (!ret)
		WRITE_ONCE(mmtune_active, next);
out:
	mutex_unlock(&mmtune_switch_lock);
	return ret;
}

static int __init mmtune_init(void)
{
	int ret;

	/* The hook core logs why it refuses (ABI mismatch, already taken). */
	ret = mmtune_register(&mmtune_ops);
	if (ret)
		return ret;

	ret = mmtune_sysfs_init();
	if (ret) {
		mmtune_unregister(&mmtune_ops);
		return ret;
	}
	pr_info("version %s loaded (hook ABI %u)\n", MMTUNE_VERSION,
		MMTUNE_ABI_VERSION);
	return 0;
}

static void __exit mmtune_exit(void)
{
	mutex_lock(&mmtune_switch_lock);
	mmtune_unloading = true;
	WRITE_ONCE(mmtune_active, 0);
	mutex_unlock(&mmtune_switch_lock);

	/* Turns every hook off and waits for callers still inside one. */
	mmtune_unregister(&mmtune_ops);
	/* Only now may features free what their hooks used. */
	mmtune_sysfs_exit();
	pr_info("unloaded\n");
}

module_init(mmtune_init);
module_exit(mmtune_exit);

MODULE_DESCRIPTION("Swap and page allocation tuning for mmtune-enabled kernels");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(MMTUNE);
MODULE_VERSION(MMTUNE_VERSION);

// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: makes reclaim's splits of large anonymous folios fail,
 * the way a racing reference does, so that a test can show what happens to
 * a folio whose split thp_swap asked for and did not get (it must go out
 * whole, as stock's would, and be counted in thp_swap/thp_split_failed).
 *
 * A kretprobe on the kernel's split function (6.12:
 * split_huge_page_to_list_to_order(); 6.1 with the mmtune series:
 * split_huge_page_to_list_reason(); the first this kernel has) takes one reference on the folio on
 * entry and drops it on return: the split then finds an extra reference
 * (can_split_folio() or the refcount freeze) and fails, leaving the folio
 * as it was. Only splits in reclaim context (PF_MEMALLOC: kswapd, direct
 * and memcg reclaim, MADV_PAGEOUT's reclaim_pages()) of anonymous folios
 * are failed, while armed.
 *
 * /sys/kernel/debug/split_pin/
 *   count    write N: fail the next N such splits; reads what is left
 *   failed   splits this module made fail since it was loaded
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>

/* The split function of 6.12, then that of 6.1 with the mmtune series. */
static const char *const split_symbols[] = {
	"split_huge_page_to_list_to_order", "split_huge_page_to_list_reason",
};

static atomic_long_t armed = ATOMIC_LONG_INIT(0);
static atomic_long_t failed = ATOMIC_LONG_INIT(0);

/* Entry: the caller holds the folio locked and referenced. */
static int split_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct page *page = (struct page *)regs_get_kernel_argument(regs, 0);
	struct folio *folio = page_folio(page);

	if (!(current->flags & PF_MEMALLOC) || !folio_test_anon(folio) ||
	    !folio_test_large(folio) ||
	    atomic_long_add_unless(&armed, -1, 0) == 0)
		return 1;	/* no return handler for this call */
	folio_get(folio);
	*(struct folio **)ri->data = folio;
	return 0;
}

/*
 * Return: the caller still holds its own reference, so this put never
 * frees the folio (a successful split is not expected, but would leave
 * the reference on the head page, which is the folio we hold).
 */
static int split_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (regs_return_value(regs))
		atomic_long_inc(&failed);
	folio_put(*(struct folio **)ri->data);
	return 0;
}

static struct kretprobe split_probe = {
	.entry_handler	= split_entry,
	.handler	= split_ret,
	.data_size	= sizeof(struct folio *),
	.maxactive	= 16,
};

static int count_get(void *data, u64 *val)
{
	*val = atomic_long_read(data);
	return 0;
}

static int count_set(void *data, u64 val)
{
	if (val > LONG_MAX)
		return -EINVAL;
	atomic_long_set(&armed, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(count_fops, count_get, count_set, "%llu\n");
DEFINE_DEBUGFS_ATTRIBUTE(failed_fops, count_get, NULL, "%llu\n");

static struct dentry *dir;

static int __init split_pin_init(void)
{
	int ret = -ENOENT;
	int i;

	for (i = 0; i < ARRAY_SIZE(split_symbols) && ret == -ENOENT; i++) {
		split_probe.kp.symbol_name = split_symbols[i];
		split_probe.kp.addr = NULL;
		ret = register_kretprobe(&split_probe);
	}
	if (ret) {
		pr_err("cannot probe the split function (CONFIG_KRETPROBES=y needed): %d\n",
		       ret);
		return ret;
	}
	dir = debugfs_create_dir("split_pin", NULL);
	debugfs_create_file_unsafe("count", 0600, dir, &armed, &count_fops);
	debugfs_create_file_unsafe("failed", 0400, dir, &failed, &failed_fops);
	return 0;
}

static void __exit split_pin_exit(void)
{
	debugfs_remove_recursive(dir);
	/* Waits for running handlers: every reference taken is dropped. */
	unregister_kretprobe(&split_probe);
}

module_init(split_pin_init);
module_exit(split_pin_exit);
MODULE_DESCRIPTION("Make reclaim's splits of large anonymous folios fail (tests only)");
MODULE_LICENSE("GPL");

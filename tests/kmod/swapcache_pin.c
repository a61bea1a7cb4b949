// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: keeps a large folio in the swap cache after reclaim
 * wrote it, so that zswap_large-stale-tail reaches the state that the
 * series' stale-entry fix is about without racing reclaim (6.1: patch
 * 0003's __frontswap_store(); 6.12: patch 0002's zswap_store() of a large
 * folio, which drops every entry at its offsets when it refuses it).
 *
 * A kretprobe on swap_writepage() takes one reference on the first large
 * folio a chosen process writes to swap synchronously (zswap), after the
 * write. pageout() checked is_page_cache_freeable() before the write, so
 * the write happens; the reference then makes __remove_mapping() fail,
 * and the folio stays in the swap cache, unmapped, with its zswap entries.
 * Kprobes on zswap's invalidate_page and load ops count the entries
 * dropped and loaded at that folio's swap offsets: 0003's fix drops them
 * all when the folio is written again by the stock path, the code before
 * it only the head's, and a later swap-in loaded the tails' stale ones.
 *
 * What the probes count, by line. 6.1 (CONFIG_FRONTSWAP): the entries of
 * zswap's frontswap ops invalidate_page and load, which frontswap calls
 * only for an offset it has an entry for. 6.12 has no frontswap and drops
 * entries in more places (zswap_invalidate(), the large-folio walk
 * zswap_invalidate_nr(), zswap_load() itself), all through
 * zswap_entry_free(): a kprobe there counts every entry freed at the
 * folio's offsets, and a kretprobe on zswap_load() the loads that found
 * an entry; a load into the swap cache frees its entry too, so
 * invalidated is the entries freed less those loads.
 *
 * A fault on a subpage of a large swap cache folio maps that subpage only
 * if ksm_might_need_to_copy() finds page->index linear. 6.1 keeps ->index
 * for the head only, so with CONFIG_KSM=y a tail is copied to a new page
 * and the folio is not dirtied again. tail_index gives one tail the index
 * split_huge_page() would give it, so that the fault maps the folio's own
 * tail, as every fault does in a kernel without CONFIG_KSM. 6.12 leaves
 * large folios to do_swap_page(), which maps the whole swap cache folio
 * again: no tail_index there.
 *
 * /sys/kernel/debug/swapcache_pin/
 *   pid          write a tgid: pin the next large folio it writes to zswap
 *                (once); 0 disarms; EBUSY while a folio is pinned
 *   pfn          the pinned folio's head pfn, 0 if none; write 0 to drop
 *                the reference (ENOENT if none is pinned)
 *   tail_index   (6.1) write K (3 <= K < the folio's pages): tail K of the
 *                pinned folio gets ->index = head's + K (tails 1 and 2
 *                keep compound metadata in that word)
 *   invalidated  zswap entries dropped at the pinned folio's offsets since
 *   loaded       it was pinned; loaded: zswap entries read there (both are
 *                kept after the reference is dropped)
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/swap.h>
#include <linux/swapops.h>

/*
 * Protects everything below. Taken in the probes (reclaim and swap-slot
 * freeing paths, which may hold swap locks or run with interrupts off),
 * so always with interrupts off, and nothing is taken inside it.
 */
static DEFINE_SPINLOCK(pin_lock);
static pid_t pin_tgid;			/* armed for this process, 0: not */
static struct folio *pinned;		/* holds one reference */
static unsigned long pinned_pfn;
static unsigned int pin_type;		/* the pinned folio's swap range */
static pgoff_t pin_offset;
static unsigned long pin_nr;		/* 0: no range yet */
static u64 pin_invalidated;
static u64 pin_loaded;
#ifndef CONFIG_FRONTSWAP
static u64 pin_freed;			/* 6.12: entries freed, loads included */
static u64 pin_loaded_freed;		/* 6.12: loads that freed their entry */
#endif

#ifdef CONFIG_FRONTSWAP
#define pin_folio_swap(folio)	folio_swap_entry(folio)
#else
#define pin_folio_swap(folio)	((folio)->swap)
#endif

static int swap_writepage_entry(struct kretprobe_instance *ri,
				struct pt_regs *regs)
{
	struct page *page = (struct page *)regs_get_kernel_argument(regs, 0);

	/* Unlocked peek: only the armed process's large folios go on. */
	if (!READ_ONCE(pin_tgid) || current->tgid != READ_ONCE(pin_tgid) ||
	    !folio_test_large(page_folio(page)))
		return 1;
	*(struct page **)ri->data = page;
	return 0;
}

/*
 * swap_writepage() has returned; the folio is unlocked but reclaim still
 * holds the reference it isolated the folio with, so taking one here is
 * safe. Stored in zswap (frontswap) means: success, still in the swap
 * cache, and neither dirty nor under writeback, as the synchronous
 * frontswap path leaves it (a disk write is left under writeback).
 */
static int swap_writepage_ret(struct kretprobe_instance *ri,
			      struct pt_regs *regs)
{
	struct folio *folio = page_folio(*(struct page **)ri->data);
	unsigned long flags;
	swp_entry_t entry;

	if (regs_return_value(regs) || !folio_test_swapcache(folio) ||
	    folio_test_dirty(folio) || folio_test_writeback(folio))
		return 0;
	entry = pin_folio_swap(folio);

	spin_lock_irqsave(&pin_lock, flags);
	if (pin_tgid == current->tgid && !pinned) {
		folio_get(folio);
		pinned = folio;
		pinned_pfn = folio_pfn(folio);
		pin_type = swp_type(entry);
		pin_offset = swp_offset(entry);
		pin_nr = folio_nr_pages(folio);
		pin_invalidated = 0;
		pin_loaded = 0;
#ifndef CONFIG_FRONTSWAP
		pin_freed = 0;
		pin_loaded_freed = 0;
#endif
		pin_tgid = 0;
	}
	spin_unlock_irqrestore(&pin_lock, flags);
	return 0;
}

static struct kretprobe swap_writepage_probe = {
	.kp.symbol_name	= "swap_writepage",
	.entry_handler	= swap_writepage_entry,
	.handler	= swap_writepage_ret,
	.data_size	= sizeof(struct page *),
	.maxactive	= 16,
};

/* Is (@type, @offset) a swap slot of the pinned folio? Under pin_lock. */
static bool in_pinned_range_of(unsigned int type, pgoff_t offset)
{
	lockdep_assert_held(&pin_lock);
	return pin_nr && type == pin_type && offset >= pin_offset &&
	       offset < pin_offset + pin_nr;
}

/*
 * If (@type, @offset) is a swap slot of the pinned folio, count it in
 * @counter, and in @also unless that is NULL; takes pin_lock.
 */
static void pin_count(unsigned int type, pgoff_t offset, u64 *counter,
		      u64 *also)
{
	unsigned long flags;

	spin_lock_irqsave(&pin_lock, flags);
	if (in_pinned_range_of(type, offset)) {
		(*counter)++;
		if (also)
			(*also)++;
	}
	spin_unlock_irqrestore(&pin_lock, flags);
}

#ifdef CONFIG_FRONTSWAP
/*
 * Entries of zswap's invalidate_page(type, offset) and load(type, offset,
 * page) ops: frontswap calls them only for an offset it has an entry for.
 */
static int zswap_invalidate_pre(struct kprobe *p, struct pt_regs *regs)
{
	pin_count(regs_get_kernel_argument(regs, 0),
		  regs_get_kernel_argument(regs, 1), &pin_invalidated, NULL);
	return 0;
}

static int zswap_load_pre(struct kprobe *p, struct pt_regs *regs)
{
	pin_count(regs_get_kernel_argument(regs, 0),
		  regs_get_kernel_argument(regs, 1), &pin_loaded, NULL);
	return 0;
}

static struct kprobe zswap_invalidate_probe = {
	.symbol_name	= "zswap_frontswap_invalidate_page",
	.pre_handler	= zswap_invalidate_pre,
};

static struct kprobe zswap_load_probe = {
	.symbol_name	= "zswap_frontswap_load",
	.pre_handler	= zswap_load_pre,
};

static struct kprobe *zswap_probes[] = {
	&zswap_invalidate_probe, &zswap_load_probe,
};

static int zswap_probes_register(void)
{
	return register_kprobes(zswap_probes, ARRAY_SIZE(zswap_probes));
}

static void zswap_probes_unregister(void)
{
	unregister_kprobes(zswap_probes, ARRAY_SIZE(zswap_probes));
}
#define ZSWAP_PROBED	"zswap's frontswap ops"
#else /* 6.12: zswap called directly */
/*
 * The head of mm/zswap.c's private struct zswap_entry (6.12): the swap
 * entry is its first member. Test-only: zswap_entry_free() has no other
 * way to name the slot it frees.
 */
struct zswap_entry_head {
	swp_entry_t swpentry;
};

static int zswap_entry_free_pre(struct kprobe *p, struct pt_regs *regs)
{
	const struct zswap_entry_head *e =
		(const void *)regs_get_kernel_argument(regs, 0);

	pin_count(swp_type(e->swpentry), swp_offset(e->swpentry), &pin_freed,
		  NULL);
	return 0;
}

static struct kprobe zswap_entry_free_probe = {
	.symbol_name	= "zswap_entry_free",
	.pre_handler	= zswap_entry_free_pre,
};

/* zswap_load(folio): the folio's slot and whether it is in the swap cache. */
struct zswap_load_call {
	swp_entry_t swp;
	bool swapcache;
};

static int zswap_load_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct folio *folio = (struct folio *)regs_get_kernel_argument(regs, 0);
	struct zswap_load_call *call = (void *)ri->data;

	call->swp = folio->swap;
	call->swapcache = folio_test_swapcache(folio);
	return 0;
}

/* true: zswap had an entry there and read it into the folio. */
static int zswap_load_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	struct zswap_load_call *call = (void *)ri->data;

	if (regs_return_value(regs))
		pin_count(swp_type(call->swp), swp_offset(call->swp),
			  &pin_loaded,
			  call->swapcache ? &pin_loaded_freed : NULL);
	return 0;
}

static struct kretprobe zswap_load_probe = {
	.kp.symbol_name	= "zswap_load",
	.entry_handler	= zswap_load_entry,
	.handler	= zswap_load_ret,
	.data_size	= sizeof(struct zswap_load_call),
	.maxactive	= 16,
};

static int zswap_probes_register(void)
{
	int ret = register_kprobe(&zswap_entry_free_probe);

	if (ret)
		return ret;
	ret = register_kretprobe(&zswap_load_probe);
	if (ret)
		unregister_kprobe(&zswap_entry_free_probe);
	return ret;
}

static void zswap_probes_unregister(void)
{
	unregister_kretprobe(&zswap_load_probe);
	unregister_kprobe(&zswap_entry_free_probe);
}
#define ZSWAP_PROBED	"zswap_entry_free() and zswap_load()"
#endif

static int pin_release(void)
{
	struct folio *folio;
	unsigned long flags;

	spin_lock_irqsave(&pin_lock, flags);
	folio = pinned;
	pinned = NULL;
	pinned_pfn = 0;
	spin_unlock_irqrestore(&pin_lock, flags);
	if (!folio)
		return -ENOENT;
	/* Outside the lock: the last put frees the folio. */
	folio_put(folio);
	return 0;
}

static int pid_get(void *data, u64 *val)
{
	*val = READ_ONCE(pin_tgid);
	return 0;
}

static int pid_set(void *data, u64 val)
{
	unsigned long flags;
	int ret = 0;

	if (val > PID_MAX_LIMIT)
		return -EINVAL;
	spin_lock_irqsave(&pin_lock, flags);
	if (val && pinned)
		ret = -EBUSY;
	else
		pin_tgid = val;
	spin_unlock_irqrestore(&pin_lock, flags);
	return ret;
}
DEFINE_DEBUGFS_ATTRIBUTE(pid_fops, pid_get, pid_set, "%llu\n");

static int pfn_get(void *data, u64 *val)
{
	*val = READ_ONCE(pinned_pfn);
	return 0;
}

static int pfn_set(void *data, u64 val)
{
	return val ? -EINVAL : pin_release();
}
DEFINE_DEBUGFS_ATTRIBUTE(pfn_fops, pfn_get, pfn_set, "%llu\n");

#ifdef CONFIG_FRONTSWAP
/*
 * The folio lock serialises with do_swap_page(), which reads ->index under
 * it (ksm_might_need_to_copy()); our reference keeps the folio.
 */
static int tail_index_set(void *data, u64 val)
{
	struct folio *folio;
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&pin_lock, flags);
	folio = pinned;
	if (folio)
		folio_get(folio);
	spin_unlock_irqrestore(&pin_lock, flags);
	if (!folio)
		return -ENOENT;
	if (val < 3 || val >= folio_nr_pages(folio)) {
		ret = -EINVAL;
		goto out;
	}
	folio_lock(folio);
	folio_page(folio, val)->index = folio->index + val;
	folio_unlock(folio);
out:
	folio_put(folio);
	return ret;
}
DEFINE_DEBUGFS_ATTRIBUTE(tail_index_fops, NULL, tail_index_set, "%llu\n");
#endif

/*
 * invalidated, loaded: @data is the counter, read under pin_lock. On 6.12
 * invalidated has none (NULL): the entries freed at the folio's offsets
 * other than by its loads.
 */
static int counter_get(void *data, u64 *val)
{
	unsigned long flags;

	spin_lock_irqsave(&pin_lock, flags);
#ifdef CONFIG_FRONTSWAP
	*val = *(u64 *)data;
#else
	*val = data ? *(u64 *)data : pin_freed - pin_loaded_freed;
#endif
	spin_unlock_irqrestore(&pin_lock, flags);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(counter_fops, counter_get, NULL, "%llu\n");

static struct dentry *pin_dir;

static int __init swapcache_pin_init(void)
{
	int ret;

	ret = zswap_probes_register();
	if (ret) {
		pr_err("cannot probe %s (CONFIG_ZSWAP=y and CONFIG_KPROBES=y needed): %d\n",
		       ZSWAP_PROBED, ret);
		return ret;
	}
	ret = register_kretprobe(&swap_writepage_probe);
	if (ret) {
		pr_err("cannot probe swap_writepage (CONFIG_KRETPROBES=y needed): %d\n",
		       ret);
		zswap_probes_unregister();
		return ret;
	}
	pin_dir = debugfs_create_dir("swapcache_pin", NULL);
	debugfs_create_file_unsafe("pid", 0600, pin_dir, NULL, &pid_fops);
	debugfs_create_file_unsafe("pfn", 0600, pin_dir, NULL, &pfn_fops);
#ifdef CONFIG_FRONTSWAP
	debugfs_create_file_unsafe("tail_index", 0200, pin_dir, NULL,
				   &tail_index_fops);
	debugfs_create_file_unsafe("invalidated", 0400, pin_dir,
				   &pin_invalidated, &counter_fops);
#else
	debugfs_create_file_unsafe("invalidated", 0400, pin_dir, NULL,
				   &counter_fops);
#endif
	debugfs_create_file_unsafe("loaded", 0400, pin_dir, &pin_loaded,
				   &counter_fops);
	return 0;
}

static void __exit swapcache_pin_exit(void)
{
	debugfs_remove_recursive(pin_dir);
	/* Both wait for running handlers: nothing pins after this. */
	unregister_kretprobe(&swap_writepage_probe);
	zswap_probes_unregister();
	pin_release();
}

module_init(swapcache_pin_init);
module_exit(swapcache_pin_exit);
MODULE_DESCRIPTION("Keep a large folio in the swap cache after reclaim wrote it (tests only)");
MODULE_LICENSE("GPL");

// SPDX-License-Identifier: GPL-2.0
/*
 * zswap stores large folios whole (feature group zswap_large).
 *
 * zswap in 6.1 and 6.12 refuses large folios (6.1: THPs; 6.12: mTHP of
 * every order too), so every large folio that reclaim swaps out whole is
 * written to the swap device even when zswap has room. Behind the kernel's
 * zswap_store_large hook, this file stores every subpage of such a folio
 * in zswap, all or nothing: when one subpage is refused, every entry of the
 * folio is invalidated and the folio takes the stock path to the swap
 * device. Nothing is lost either way, and the kernel's per-page memcg
 * charge makes the rollback exact. On 6.12 a knob per folio size picks the
 * sizes stored (store_<size>kB), and a page that does not compress is
 * stored as it is, up to max_raw_percent of the folio: one bad page no
 * longer throws away the compression of all the others.
 *
 * Swap-in (6.12): with the feature on, the kernel swaps in a large folio
 * from a synchronous device (zram, brd) when no page of its range is in
 * zswap, as if zswap had never been enabled; a range wholly in zswap is
 * loaded whole only for the sizes whose load_<size>kB is 1; a mixed range
 * goes order 0. With the feature off, any swap-in is order 0 once zswap
 * was ever enabled, as stock.
 *
 * Knobs and counters: /sys/kernel/mm/mmtune/zswap_large/, documented in
 * sysfs-docs/sysfs-kernel-mm-mmtune-zswap_large.
 */
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/sysfs.h>

#include "mmtune.h"
#include "cgroup_policy.h"

#define BACKOFF_MS_MAX		600000

/*
 * At most this share of a folio's pages is stored uncompressed (6.12): a
 * few bad pages keep the folio whole, a folio mostly of incompressible
 * data is refused after compressing little more than this share of it,
 * as stock refuses it (a raw page saves no memory).
 */
static u32 max_raw_percent = 12;

/*
 * After an allocation failure, large folios go to the device this long.
 * The end is in 64-bit jiffies: a 32-bit one compared after weeks without
 * a failure would wrap (about 24.8 days at HZ=1000) and start a back-off
 * of its own.
 */
static u32 backoff_ms = 1000;
static atomic64_t backoff_until;

/* Per folio order: store folios of that size (store_<size>kB). */
static u32 store_order[MMTUNE_NR_ORDERS] = {
	[0 ... MMTUNE_NR_ORDERS - 1] = 1
};

#if MMTUNE_ZSWAP_LOAD
/*
 * Per folio order (6.12, below the PMD order, which it never swaps in):
 * load a folio whose range is wholly in zswap whole (load_<size>kB). A
 * fault then decompresses every page of the folio before it maps any,
 * about 2-4 us a page: 16 pages for 64K, 256 (up to a millisecond) for
 * 1M, and reads in all of a range the task may touch once. On by default
 * up to 64K, where that latency is about one order-0 fault from a disk,
 * off above; a 0 swaps such a range in smaller, as stock does.
 */
static u32 load_order[MMTUNE_NR_ORDERS] = {
	[2 ... 4] = 1
};
#endif

struct zswap_large_stats {
	unsigned long thp_stored, subpages_stored, subpages_raw,
		      subpages_rolled_back,
		      rollback_pool_limit, rollback_cgroup_limit, rollback_nomem,
		      rollback_compress, rollback_other, backoff_skipped;
};
static DEFINE_PER_CPU(struct zswap_large_stats, zswap_large_stats);

/* The per-subpage store tells the cause of a refusal by its error code. */
static void zswap_large_count_rollback(int err)
{
	switch (err) {
	case -ENOSPC:
		this_cpu_inc(zswap_large_stats.rollback_pool_limit);
		break;
	case -EDQUOT:
		this_cpu_inc(zswap_large_stats.rollback_cgroup_limit);
		break;
	case -ENOMEM:
		this_cpu_inc(zswap_large_stats.rollback_nomem);
		break;
	case -E2BIG:
	case -EIO:
		this_cpu_inc(zswap_large_stats.rollback_compress);
		break;
	default:
		this_cpu_inc(zswap_large_stats.rollback_other);
	}
}

/*
 * The zswap_store_large hook. Context: the folio is locked and in the swap
 * cache; called from swap_writepage() (6.1) or zswap_store() (6.12) inside
 * the hook core's SRCU read section, so it may sleep (zswap compresses
 * under a mutex and allocates). 6.12 passes the verdict of zswap's limits
 * for the folio (@refused); 6.1 has zswap check them at the first
 * subpage. Return: 0 when every subpage is in zswap; otherwise the caller
 * writes the folio to the swap device, and no entry of the folio is left
 * in zswap (a failed store drops them here, and the kernel makes sure of
 * it before the write).
 */
static bool zswap_large_wanted(struct folio *folio, unsigned int order)
{
	int store = order < MMTUNE_NR_ORDERS ? READ_ONCE(store_order[order]) : 0;
	struct cgp_entry *e;
	int own;

	rcu_read_lock();
	e = cgroup_policy_of_folio(folio);
	own = cgroup_policy_zswap(e, order);
	if (own >= 0)
		store = own;
	if (!own)
		cgroup_policy_count(e, CGP_ZSWAP_REFUSED, order);
	rcu_read_unlock();
	return store;
}

/* The folio's cgroup_policy entry counts a folio stored whole. */
static void zswap_large_count_stored(struct folio *folio, unsigned int order)
{
	rcu_read_lock();
	cgroup_policy_count(cgroup_policy_of_folio(folio), CGP_ZSWAP_STORED,
			    order);
	rcu_read_unlock();
}

/* How many pages of a folio of @nr may be stored as they are. */
static long zswap_large_raw_max(long nr)
{
	u32 pct = READ_ONCE(max_raw_percent);

	if (!MMTUNE_ZSWAP_RAW || !pct)
		return 0;
	return max(nr * pct / 100, 1L);
}

static int zswap_large_store(MMTUNE_ZSWAP_STORE_PROTO)
{
	unsigned int order = folio_order(folio);
	long nr = folio_nr_pages(folio);
	long stored, raw = 0, raw_max;
	int err = 0;

	/*
	 * A size left to the swap device, as stock does: by store_<size>kB or
	 * by the folio's cgroup_policy entry, which wins.
	 */
	if (!zswap_large_wanted(folio, order))
		return MMTUNE_STOCK;

	if (time_before64(get_jiffies_64(), (u64)atomic64_read(&backoff_until))) {
		this_cpu_inc(zswap_large_stats.backoff_skipped);
		return -EAGAIN;
	}
	err = MMTUNE_ZSWAP_REFUSED;
	if (err) {
		zswap_large_count_rollback(err);
		return err;
	}

	raw_max = zswap_large_raw_max(nr);
	for (stored = 0; stored < nr; stored++) {
		/* Memory failure may poison a subpage after the kernel's check. */
		if (PageHWPoison(folio_page(folio, stored))) {
			err = -EHWPOISON;
			break;
		}
		/* 1: stored as is; over the share, -E2BIG ends the folio. */
		err = mmtune_zswap_store_subpage(stored, raw < raw_max);
		if (err < 0)
			break;
		raw += err;
		err = 0;
	}
	if (!err) {
		this_cpu_inc(zswap_large_stats.thp_stored);
		this_cpu_add(zswap_large_stats.subpages_stored, nr);
		this_cpu_add(zswap_large_stats.subpages_raw, raw);
		zswap_large_count_stored(folio, order);
		return 0;
	}

	/*
	 * All, not just the first @stored: a folio stored earlier and dirtied
	 * again still has old entries past the failed subpage.
	 */
	mmtune_zswap_invalidate_folio(folio);
	this_cpu_add(zswap_large_stats.subpages_rolled_back, stored);
	zswap_large_count_rollback(err);
	/*
	 * zswap checks its cgroup and pool limits once per folio, before
	 * anything of it is stored, so a folio over a limit has nothing to
	 * roll back, and the next one costs the same check: no back-off for
	 * those (a global one would also send other cgroups' folios to the
	 * device because of one cgroup's limit). Allocation failure is
	 * different: every folio would compress some subpages first.
	 */
	if (err == -ENOMEM)
		atomic64_set(&backoff_until, get_jiffies_64() +
			     msecs_to_jiffies(READ_ONCE(backoff_ms)));
	return err;
}

#if MMTUNE_ZSWAP_LOAD
/*
 * The zswap_load_large hook: every slot of a swap-in range of @order is in
 * zswap; > 0 loads the folio whole. Under the page table lock or right
 * after swapcache_prepare(), inside the hook core's RCU read section: a
 * knob read, nothing else. The kernel counts folios loaded whole in
 * hugepages-<size>kB/stats/zswpin.
 */
static int zswap_large_load(unsigned int order)
{
	return order < MMTUNE_NR_ORDERS && READ_ONCE(load_order[order]);
}

static MMTUNE_KNOB_ORDER_BOOL(load_16kB, load_order, 2);
static MMTUNE_KNOB_ORDER_BOOL(load_32kB, load_order, 3);
static MMTUNE_KNOB_ORDER_BOOL(load_64kB, load_order, 4);
static MMTUNE_KNOB_ORDER_BOOL(load_128kB, load_order, 5);
static MMTUNE_KNOB_ORDER_BOOL(load_256kB, load_order, 6);
static MMTUNE_KNOB_ORDER_BOOL(load_512kB, load_order, 7);
static MMTUNE_KNOB_ORDER_BOOL(load_1024kB, load_order, 8);

static MMTUNE_HOOKS(zswap_large, .zswap_store_large = zswap_large_store,
		     .zswap_load_large = zswap_large_load);
#else
static MMTUNE_HOOKS(zswap_large, .zswap_store_large = zswap_large_store);
#endif

static MMTUNE_KNOB_U32(backoff_ms, backoff_ms, 0, BACKOFF_MS_MAX, NULL);
#if MMTUNE_ZSWAP_RAW
static MMTUNE_KNOB_U32(max_raw_percent, max_raw_percent, 0, 100, NULL);
#endif
static MMTUNE_KNOB_ORDER_BOOL(store_8kB, store_order, 1);
static MMTUNE_KNOB_ORDER_BOOL(store_16kB, store_order, 2);
static MMTUNE_KNOB_ORDER_BOOL(store_32kB, store_order, 3);
static MMTUNE_KNOB_ORDER_BOOL(store_64kB, store_order, 4);
static MMTUNE_KNOB_ORDER_BOOL(store_128kB, store_order, 5);
static MMTUNE_KNOB_ORDER_BOOL(store_256kB, store_order, 6);
static MMTUNE_KNOB_ORDER_BOOL(store_512kB, store_order, 7);
static MMTUNE_KNOB_ORDER_BOOL(store_1024kB, store_order, 8);
static MMTUNE_KNOB_ORDER_BOOL(store_2048kB, store_order, 9);

/* Every large folio handed back to the stock path, by whatever reason. */
static ssize_t fallback_disk_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n",
			  MMTUNE_COUNTER_SUM(zswap_large_stats, rollback_pool_limit) +
			  MMTUNE_COUNTER_SUM(zswap_large_stats, rollback_cgroup_limit) +
			  MMTUNE_COUNTER_SUM(zswap_large_stats, rollback_nomem) +
			  MMTUNE_COUNTER_SUM(zswap_large_stats, rollback_compress) +
			  MMTUNE_COUNTER_SUM(zswap_large_stats, rollback_other) +
			  MMTUNE_COUNTER_SUM(zswap_large_stats, backoff_skipped));
}
static MMTUNE_ATTR_RO(fallback_disk);

#define STAT(field) MMTUNE_COUNTER(zswap_large_stats, field)
static const struct mmtune_counter zswap_large_counters[] = {
	STAT(thp_stored), STAT(subpages_stored),
#if MMTUNE_ZSWAP_RAW
	STAT(subpages_raw),
#endif
	STAT(subpages_rolled_back),
	STAT(rollback_pool_limit), STAT(rollback_cgroup_limit),
	STAT(rollback_nomem), STAT(rollback_compress), STAT(rollback_other),
	STAT(backoff_skipped),
	{}
};
#undef STAT

static struct attribute *zswap_large_attrs[] = {
	MMTUNE_KNOB_ATTR(backoff_ms),
#if MMTUNE_ZSWAP_RAW
	MMTUNE_KNOB_ATTR(max_raw_percent),
#endif
	MMTUNE_KNOB_ATTR(store_8kB),
	MMTUNE_KNOB_ATTR(store_16kB),
	MMTUNE_KNOB_ATTR(store_32kB),
	MMTUNE_KNOB_ATTR(store_64kB),
	MMTUNE_KNOB_ATTR(store_128kB),
	MMTUNE_KNOB_ATTR(store_256kB),
	MMTUNE_KNOB_ATTR(store_512kB),
	MMTUNE_KNOB_ATTR(store_1024kB),
	MMTUNE_KNOB_ATTR(store_2048kB),
#if MMTUNE_ZSWAP_LOAD
	MMTUNE_KNOB_ATTR(load_16kB),
	MMTUNE_KNOB_ATTR(load_32kB),
	MMTUNE_KNOB_ATTR(load_64kB),
	MMTUNE_KNOB_ATTR(load_128kB),
	MMTUNE_KNOB_ATTR(load_256kB),
	MMTUNE_KNOB_ATTR(load_512kB),
	MMTUNE_KNOB_ATTR(load_1024kB),
#endif
	MMTUNE_ATTR(fallback_disk),
	NULL,
};

MMTUNE_DEFINE_FEATURE(zswap_large, ZSWAP_LARGE);

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
 * sizes stored (store_<size>kB).
 *
 * Knobs and counters: /sys/kernel/mm/mmtune/zswap_large/, documented in
 * sysfs-docs/sysfs-kernel-mm-mmtune-zswap_large.
 */
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/sysfs.h>

#include "mmtune.h"

#define BACKOFF_MS_MAX		600000

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

struct zswap_large_stats {
	unsigned long thp_stored, subpages_stored, subpages_rolled_back,
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
static int zswap_large_store(MMTUNE_ZSWAP_STORE_PROTO)
{
	unsigned int order = folio_order(folio);
	long nr = folio_nr_pages(folio);
	long stored;
	int err = 0;

	/* A size left to the swap device, as stock does. */
	if (order >= MMTUNE_NR_ORDERS || !READ_ONCE(store_order[order]))
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

	for (stored = 0; stored < nr; stored++) {
		/* Memory failure may poison a subpage after the kernel's check. */
		if (PageHWPoison(folio_page(folio, stored))) {
			err = -EHWPOISON;
			break;
		}
		err = mmtune_zswap_store_subpage(folio, stored);
		if (err)
			break;
	}
	if (!err) {
		this_cpu_inc(zswap_large_stats.thp_stored);
		this_cpu_add(zswap_large_stats.subpages_stored, nr);
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

static MMTUNE_KNOB_U32(backoff_ms, backoff_ms, 0, BACKOFF_MS_MAX, NULL);
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
static struct kobj_attribute fallback_disk_attr = __ATTR_RO(fallback_disk);

#define STAT(field) MMTUNE_COUNTER(zswap_large_stats, field)
static const struct mmtune_counter zswap_large_counters[] = {
	STAT(thp_stored), STAT(subpages_stored), STAT(subpages_rolled_back),
	STAT(rollback_pool_limit), STAT(rollback_cgroup_limit),
	STAT(rollback_nomem), STAT(rollback_compress), STAT(rollback_other),
	STAT(backoff_skipped),
	{}
};
#undef STAT

static struct attribute *zswap_large_attrs[] = {
	MMTUNE_KNOB_ATTR(backoff_ms),
	MMTUNE_KNOB_ATTR(store_8kB),
	MMTUNE_KNOB_ATTR(store_16kB),
	MMTUNE_KNOB_ATTR(store_32kB),
	MMTUNE_KNOB_ATTR(store_64kB),
	MMTUNE_KNOB_ATTR(store_128kB),
	MMTUNE_KNOB_ATTR(store_256kB),
	MMTUNE_KNOB_ATTR(store_512kB),
	MMTUNE_KNOB_ATTR(store_1024kB),
	MMTUNE_KNOB_ATTR(store_2048kB),
	&fallback_disk_attr.attr,
	NULL,
};

static const struct mmtune_ops zswap_large_hooks = {
	.zswap_store_large	= zswap_large_store,
};

const struct mmtune_desc zswap_large_feature = {
	MMTUNE_DESC(zswap_large, ZSWAP_LARGE),
};

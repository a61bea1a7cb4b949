// SPDX-License-Identifier: GPL-2.0
/*
 * zswap stores large folios whole (feature group zswap_large).
 *
 * zswap in 6.1 refuses transparent huge pages, so with THP_SWAP every THP
 * that reclaim picks is written to the swap device even when zswap has
 * room. Behind the kernel's zswap_store_large hook, this file stores every
 * subpage of such a folio in zswap, all or nothing: when one subpage is
 * refused, every entry of the folio is invalidated and the folio takes the
 * stock path to the swap device. Nothing is lost either way, and the
 * kernel's per-page memcg charge makes the rollback exact.
 *
 * Knobs and counters: /sys/kernel/mm/mmtune/zswap_large/, documented in
 * sysfs-docs/sysfs-kernel-mm-mmtune-zswap_large.
 */
#include <linux/frontswap.h>
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

struct zswap_large_stats {
	unsigned long thp_stored, subpages_stored, subpages_rolled_back,
		      rollback_pool_limit, rollback_cgroup_limit, rollback_nomem,
		      rollback_compress, rollback_other, backoff_skipped;
};
static DEFINE_PER_CPU(struct zswap_large_stats, zswap_large_stats);

/* zswap_store_page() tells the cause of a refusal by its error code. */
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
 * cache; called from swap_writepage() inside the hook core's SRCU read
 * section, so it may sleep (zswap compresses under a mutex and allocates).
 * Return: 0 when every subpage is in zswap; otherwise no entry of the folio
 * is left in zswap and the caller writes the folio to the swap device.
 */
static int zswap_large_store(struct folio *folio)
{
	long nr = folio_nr_pages(folio);
	long stored;
	int err = 0;

	if (time_before64(get_jiffies_64(), (u64)atomic64_read(&backoff_until))) {
		this_cpu_inc(zswap_large_stats.backoff_skipped);
		return -EAGAIN;
	}

	for (stored = 0; stored < nr; stored++) {
		/* Memory failure may poison a subpage after the kernel's check. */
		if (PageHWPoison(folio_page(folio, stored))) {
			err = -EHWPOISON;
			break;
		}
		err = frontswap_store_subpage(folio, stored);
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
	frontswap_invalidate_folio(folio);
	this_cpu_add(zswap_large_stats.subpages_rolled_back, stored);
	zswap_large_count_rollback(err);
	/*
	 * zswap checks its cgroup and pool limits at the head only, so a
	 * folio over a limit is refused at subpage 0 with nothing to roll
	 * back, and the next one costs the same check: no back-off for
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
	&fallback_disk_attr.attr,
	NULL,
};


static const struct mmtune_ops zswap_large_hooks = {
	.zswap_store_large	= zswap_large_store,
};

const struct mmtune_desc zswap_large_feature = {
	MMTUNE_DESC(zswap_large, ZSWAP_LARGE),
};

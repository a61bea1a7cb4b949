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
 * Knobs and counters: /sys/kernel/mm/mmtune/zswap/, documented in
 * sysfs-docs/sysfs-kernel-mm-mmtune-zswap.
 */
#include <linux/frontswap.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/sysfs.h>

#include "mmtune.h"
#include "parse.h"

#define BACKOFF_MS_MAX		600000

/* After an allocation failure, large folios go to the device this long. */
static u32 backoff_ms = 1000;
static unsigned long backoff_until;

static atomic_long_t thp_stored;
static atomic_long_t subpages_stored;
static atomic_long_t subpages_rolled_back;
static atomic_long_t rollback_pool_limit;
static atomic_long_t rollback_cgroup_limit;
static atomic_long_t rollback_nomem;
static atomic_long_t rollback_compress;
static atomic_long_t rollback_other;
static atomic_long_t backoff_skipped;

/* zswap_store_page() tells the cause of a refusal by its error code. */
static atomic_long_t *rollback_counter(int err)
{
	switch (err) {
	case -ENOSPC:
		return &rollback_pool_limit;
	case -EDQUOT:
		return &rollback_cgroup_limit;
	case -ENOMEM:
		return &rollback_nomem;
	case -E2BIG:
	case -EIO:
		return &rollback_compress;
	default:
		return &rollback_other;
	}
}

/*
 * The zswap_store_large hook. Context: the folio is locked and in the swap
 * cache; called from swap_writepage() inside the hook core's SRCU read
 * section, so it may sleep (zswap compresses under a mutex and allocates).
 * Return: 0 when every subpage is in zswap; otherwise no entry of the folio
 * is left in zswap and the caller writes the folio to the swap device.
 */
int mmtune_zswap_store_whole(struct folio *folio)
{
	long nr = folio_nr_pages(folio);
	long stored;
	int err = 0;

	if (time_before(jiffies, READ_ONCE(backoff_until))) {
		atomic_long_inc(&backoff_skipped);
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
		atomic_long_inc(&thp_stored);
		atomic_long_add(nr, &subpages_stored);
		return 0;
	}

	/*
	 * All, not just the first @stored: a folio stored earlier and dirtied
	 * again still has old entries past the failed subpage.
	 */
	frontswap_invalidate_folio(folio);
	atomic_long_add(stored, &subpages_rolled_back);
	atomic_long_inc(rollback_counter(err));
	if (err == -ENOMEM)
		WRITE_ONCE(backoff_until,
			   jiffies + msecs_to_jiffies(READ_ONCE(backoff_ms)));
	return err;
}

static ssize_t enabled_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  mmtune_feature_is_on(MMTUNE_ZSWAP_LARGE));
}

static ssize_t enabled_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	bool on;
	int ret = mmtune_parse_bool(buf, count, &on);

	if (!ret)
		ret = mmtune_feature_switch(MMTUNE_ZSWAP_LARGE, on);
	return ret ? ret : count;
}
static struct kobj_attribute enabled_attr = __ATTR_RW(enabled);

static ssize_t backoff_ms_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(backoff_ms));
}

static ssize_t backoff_ms_store(struct kobject *kobj,
				struct kobj_attribute *attr, const char *buf,
				size_t count)
{
	u32 val;
	int ret = mmtune_parse_u32(buf, count, 0, BACKOFF_MS_MAX, &val);

	if (ret)
		return ret;
	WRITE_ONCE(backoff_ms, val);
	return count;
}
static struct kobj_attribute backoff_ms_attr = __ATTR_RW(backoff_ms);

static MMTUNE_COUNTER_ATTR(thp_stored, thp_stored);
static MMTUNE_COUNTER_ATTR(subpages_stored, subpages_stored);
static MMTUNE_COUNTER_ATTR(subpages_rolled_back, subpages_rolled_back);
static MMTUNE_COUNTER_ATTR(rollback_pool_limit, rollback_pool_limit);
static MMTUNE_COUNTER_ATTR(rollback_cgroup_limit, rollback_cgroup_limit);
static MMTUNE_COUNTER_ATTR(rollback_nomem, rollback_nomem);
static MMTUNE_COUNTER_ATTR(rollback_compress, rollback_compress);
static MMTUNE_COUNTER_ATTR(rollback_other, rollback_other);
static MMTUNE_COUNTER_ATTR(backoff_skipped, backoff_skipped);

/* Every large folio handed back to the stock path, by whatever reason. */
static ssize_t fallback_disk_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%ld\n",
			  atomic_long_read(&rollback_pool_limit) +
			  atomic_long_read(&rollback_cgroup_limit) +
			  atomic_long_read(&rollback_nomem) +
			  atomic_long_read(&rollback_compress) +
			  atomic_long_read(&rollback_other) +
			  atomic_long_read(&backoff_skipped));
}
static struct kobj_attribute fallback_disk_attr = __ATTR_RO(fallback_disk);

static struct attribute *zswap_attrs[] = {
	&enabled_attr.attr,
	&backoff_ms_attr.attr,
	&thp_stored_attr.kattr.attr,
	&subpages_stored_attr.kattr.attr,
	&subpages_rolled_back_attr.kattr.attr,
	&rollback_pool_limit_attr.kattr.attr,
	&rollback_cgroup_limit_attr.kattr.attr,
	&rollback_nomem_attr.kattr.attr,
	&rollback_compress_attr.kattr.attr,
	&rollback_other_attr.kattr.attr,
	&backoff_skipped_attr.kattr.attr,
	&fallback_disk_attr.attr,
	NULL,
};

static const struct attribute_group zswap_group = {
	.attrs = zswap_attrs,
};

static struct kobject *zswap_kobj;

int mmtune_zswap_init(struct kobject *parent)
{
	int ret;

	backoff_until = jiffies;
	zswap_kobj = kobject_create_and_add("zswap", parent);
	if (!zswap_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(zswap_kobj, &zswap_group);
	if (ret) {
		kobject_put(zswap_kobj);
		zswap_kobj = NULL;
	}
	return ret;
}

void mmtune_zswap_exit(void)
{
	kobject_put(zswap_kobj);
	zswap_kobj = NULL;
}

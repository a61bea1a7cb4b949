// SPDX-License-Identifier: GPL-2.0
/*
 * THP swap-out policy (feature group thp_swap) and zero-subpage dropping
 * (feature group split_zero).
 *
 * thp_swap: behind the kernel's thp_swap_split hook, reclaim asks whether
 * to split a PMD-mapped THP before swap-out. "whole" is stock (the hook is
 * off), "split" always splits, "adaptive" reads sample_size subpages spread
 * over the THP and splits when fewer than threshold of them hold data.
 *
 * split_zero: behind the kernel's split_zero_mark hook, a THP being split
 * has its all-zero subpages marked; the kernel maps the shared zero page
 * instead of them and frees them, so reclaim does not write them to swap
 * and migration does not copy them. "reclaim-only" looks at splits done by
 * reclaim, "always" at every split (reclaim, migration, others).
 *
 * The two work together: on a swap device with THP clusters, reclaim does
 * not split PMD-mapped THPs, so zero subpages are only dropped when the
 * thp_swap policy splits first.
 *
 * Knobs and counters: /sys/kernel/mm/mmtune/thp_swap/ and split_zero/,
 * documented in sysfs-docs/. The decisions are in thp_policy.c.
 */
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/page-flags.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "mmtune.h"
#include "parse.h"
#include "thp_policy.h"

/* Serialises knob writes of both groups (value checks and key switches). */
static DEFINE_MUTEX(thp_knob_lock);

static int policy = THP_SWAP_WHOLE;
static u32 sample_size = THP_SAMPLE_SIZE_DEFAULT;
static u32 threshold = THP_THRESHOLD_DEFAULT;
static int zero_mode = SPLIT_ZERO_NEVER;

/* thp_swap counters */
static atomic_long_t thp_whole;
static atomic_long_t thp_split;
static atomic_long_t subpages_sampled;
static atomic_long_t subpages_sampled_zero;

/* split_zero counters */
static atomic_long_t splits_scanned;
static atomic_long_t subpages_scanned;
static atomic_long_t subpages_zero;
static atomic_long_t zero_ptes_mapped;
static atomic_long_t subpages_dropped;
static atomic_long_t subpages_dropped_reclaim;

/* A subpage holds nothing but zero bytes. Never called for a poisoned one. */
static bool subpage_is_zero(struct page *page)
{
	void *addr = kmap_local_page(page);
	bool zero = !memchr_inv(addr, 0, PAGE_SIZE);

	kunmap_local(addr);
	return zero;
}

/*
 * The thp_swap_split hook. Context: shrink_folio_list(), the folio locked
 * and isolated, inside the hook core's SRCU read section; no mmap_lock, no
 * allocation.
 */
int thp_swap_split_hook(struct folio *folio)
{
	unsigned int nr = folio_nr_pages(folio);
	unsigned int sampled = 0, nonzero = 0, size, thresh, seed;
	enum thp_verdict verdict;

	switch (READ_ONCE(policy)) {
	case THP_SWAP_SPLIT:
		atomic_long_inc(&thp_split);
		return 1;
	case THP_SWAP_ADAPTIVE:
		break;
	default:
		atomic_long_inc(&thp_whole);
		return MMTUNE_STOCK;
	}

	/* Never read a poisoned subpage: leave such a THP to the stock path. */
	if (folio_test_has_hwpoisoned(folio)) {
		atomic_long_inc(&thp_whole);
		return MMTUNE_STOCK;
	}

	/* A concurrent knob write may pair old and new values: clamp. */
	size = min_t(unsigned int, READ_ONCE(sample_size), nr);
	thresh = min_t(unsigned int, READ_ONCE(threshold), size);
	seed = (unsigned int)(folio_pfn(folio) / nr) * 2654435761u;

	while ((verdict = thp_adaptive_verdict(sampled, nonzero, size,
					       thresh)) == THP_SAMPLE_MORE) {
		struct page *page = folio_page(folio,
				thp_sample_index(sampled, size, nr, seed));

		/* PG_has_hwpoisoned is set late: test this subpage. */
		if (PageHWPoison(page)) {
			atomic_long_inc(&thp_whole);
			return MMTUNE_STOCK;
		}
		sampled++;
		if (!subpage_is_zero(page))
			nonzero++;
	}
	atomic_long_add(sampled, &subpages_sampled);
	atomic_long_add(sampled - nonzero, &subpages_sampled_zero);
	if (verdict == THP_SPLIT) {
		atomic_long_inc(&thp_split);
		return 1;
	}
	atomic_long_inc(&thp_whole);
	return MMTUNE_STOCK;
}

/*
 * The split_zero_mark hook. Context: __split_huge_page(), anon_vma locked
 * for write, every subpage locked and unmapped; SRCU read section.
 */
int split_zero_mark_hook(struct page *page, unsigned int nr,
			 enum mmtune_split_reason reason, unsigned long *zero)
{
	unsigned int i, scanned = 0, marked = 0;

	if (!split_zero_wanted(READ_ONCE(zero_mode),
			       reason == MMTUNE_SPLIT_RECLAIM))
		return 0;

	for (i = 0; i < nr; i++) {
		if (PageHWPoison(page + i))
			continue;
		scanned++;
		if (subpage_is_zero(page + i)) {
			__set_bit(i, zero);
			marked++;
		}
	}
	atomic_long_inc(&splits_scanned);
	atomic_long_add(scanned, &subpages_scanned);
	atomic_long_add(marked, &subpages_zero);
	return marked;
}

/* The split_zero_done hook: same context as split_zero_mark. */
void split_zero_done_hook(enum mmtune_split_reason reason,
			  unsigned int ptes, unsigned int unmapped)
{
	atomic_long_add(ptes, &zero_ptes_mapped);
	atomic_long_add(unmapped, &subpages_dropped);
	/* Reclaim frees these instead of writing them to swap. */
	if (reason == MMTUNE_SPLIT_RECLAIM)
		atomic_long_add(unmapped, &subpages_dropped_reclaim);
}

/* --- thp_swap/ -------------------------------------------------------- */

static ssize_t policy_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  thp_swap_policy_names[READ_ONCE(policy)]);
}

static ssize_t policy_store(struct kobject *kobj, struct kobj_attribute *attr,
			    const char *buf, size_t count)
{
	int val = thp_policy_parse_name(buf, count, thp_swap_policy_names,
					NR_THP_SWAP_POLICIES);
	int ret;

	if (val < 0)
		return val;
	mutex_lock(&thp_knob_lock);
	/* Turn the hook on before the policy needs it, off after. */
	ret = mmtune_feature_switch(MMTUNE_THP_SWAP, val != THP_SWAP_WHOLE);
	if (!ret)
		WRITE_ONCE(policy, val);
	mutex_unlock(&thp_knob_lock);
	return ret ? ret : count;
}
static struct kobj_attribute policy_attr = __ATTR_RW(policy);

static ssize_t sample_size_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(sample_size));
}

static ssize_t sample_size_store(struct kobject *kobj,
				 struct kobj_attribute *attr, const char *buf,
				 size_t count)
{
	u32 val;
	int ret = mmtune_parse_u32(buf, count, THP_SAMPLE_SIZE_MIN,
				   THP_SAMPLE_SIZE_MAX, &val);

	if (ret)
		return ret;
	mutex_lock(&thp_knob_lock);
	ret = thp_policy_check(val, threshold);
	if (!ret)
		WRITE_ONCE(sample_size, val);
	mutex_unlock(&thp_knob_lock);
	return ret ? ret : count;
}
static struct kobj_attribute sample_size_attr = __ATTR_RW(sample_size);

static ssize_t threshold_show(struct kobject *kobj,
			      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(threshold));
}

static ssize_t threshold_store(struct kobject *kobj,
			       struct kobj_attribute *attr, const char *buf,
			       size_t count)
{
	u32 val;
	int ret = mmtune_parse_u32(buf, count, 0, THP_THRESHOLD_MAX, &val);

	if (ret)
		return ret;
	mutex_lock(&thp_knob_lock);
	ret = thp_policy_check(sample_size, val);
	if (!ret)
		WRITE_ONCE(threshold, val);
	mutex_unlock(&thp_knob_lock);
	return ret ? ret : count;
}
static struct kobj_attribute threshold_attr = __ATTR_RW(threshold);

static MMTUNE_COUNTER_ATTR(thp_whole, thp_whole);
static MMTUNE_COUNTER_ATTR(thp_split, thp_split);
static MMTUNE_COUNTER_ATTR(subpages_sampled, subpages_sampled);
static MMTUNE_COUNTER_ATTR(subpages_sampled_zero, subpages_sampled_zero);

static struct attribute *thp_swap_attrs[] = {
	&policy_attr.attr,
	&sample_size_attr.attr,
	&threshold_attr.attr,
	&thp_whole_attr.kattr.attr,
	&thp_split_attr.kattr.attr,
	&subpages_sampled_attr.kattr.attr,
	&subpages_sampled_zero_attr.kattr.attr,
	NULL,
};

static const struct attribute_group thp_swap_group = {
	.attrs = thp_swap_attrs,
};

/* --- split_zero/ ------------------------------------------------------ */

static ssize_t mode_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  split_zero_mode_names[READ_ONCE(zero_mode)]);
}

static ssize_t mode_store(struct kobject *kobj, struct kobj_attribute *attr,
			  const char *buf, size_t count)
{
	int val = thp_policy_parse_name(buf, count, split_zero_mode_names,
					NR_SPLIT_ZERO_MODES);
	int ret;

	if (val < 0)
		return val;
	mutex_lock(&thp_knob_lock);
	ret = mmtune_feature_switch(MMTUNE_SPLIT_ZERO, val != SPLIT_ZERO_NEVER);
	if (!ret)
		WRITE_ONCE(zero_mode, val);
	mutex_unlock(&thp_knob_lock);
	return ret ? ret : count;
}
static struct kobj_attribute mode_attr = __ATTR_RW(mode);

static MMTUNE_COUNTER_ATTR(splits_scanned, splits_scanned);
static MMTUNE_COUNTER_ATTR(subpages_scanned, subpages_scanned);
static MMTUNE_COUNTER_ATTR(subpages_zero, subpages_zero);
static MMTUNE_COUNTER_ATTR(zero_ptes_mapped, zero_ptes_mapped);
static MMTUNE_COUNTER_ATTR(subpages_dropped, subpages_dropped);

/* Zero subpages that reclaim freed instead of writing, in bytes. */
static ssize_t bytes_not_written_show(struct kobject *kobj,
				      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n",
			  (unsigned long)atomic_long_read(&subpages_dropped_reclaim) *
			  PAGE_SIZE);
}
static struct kobj_attribute bytes_not_written_attr =
	__ATTR_RO(bytes_not_written);

static struct attribute *split_zero_attrs[] = {
	&mode_attr.attr,
	&splits_scanned_attr.kattr.attr,
	&subpages_scanned_attr.kattr.attr,
	&subpages_zero_attr.kattr.attr,
	&zero_ptes_mapped_attr.kattr.attr,
	&subpages_dropped_attr.kattr.attr,
	&bytes_not_written_attr.attr,
	NULL,
};

static const struct attribute_group split_zero_group = {
	.attrs = split_zero_attrs,
};

/* --- setup ------------------------------------------------------------ */

static struct kobject *thp_swap_kobj;
static struct kobject *split_zero_kobj;

static int group_init(struct kobject *parent, const char *name,
		      const struct attribute_group *group,
		      struct kobject **kobj)
{
	int ret;

	*kobj = kobject_create_and_add(name, parent);
	if (!*kobj)
		return -ENOMEM;
	ret = sysfs_create_group(*kobj, group);
	if (ret) {
		kobject_put(*kobj);
		*kobj = NULL;
	}
	return ret;
}

int mmtune_thp_swap_init(struct kobject *parent)
{
	return group_init(parent, "thp_swap", &thp_swap_group, &thp_swap_kobj);
}

void mmtune_thp_swap_exit(void)
{
	kobject_put(thp_swap_kobj);
	thp_swap_kobj = NULL;
}

int mmtune_split_zero_init(struct kobject *parent)
{
	return group_init(parent, "split_zero", &split_zero_group,
			  &split_zero_kobj);
}

void mmtune_split_zero_exit(void)
{
	kobject_put(split_zero_kobj);
	split_zero_kobj = NULL;
}

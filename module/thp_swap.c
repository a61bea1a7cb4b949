// SPDX-License-Identifier: GPL-2.0
/*
 * THP swap-out policy (feature group thp_swap).
 *
 * Behind the kernel's thp_swap_split hook, reclaim asks whether to split a
 * large anonymous folio before swap-out: a PMD-mapped THP on 6.1, an mTHP
 * of any size (16K to 2M) on 6.12. With the feature off (stock) it goes out
 * whole when the swap device has clusters of its size. policy "split"
 * always splits; "adaptive" reads sample_size subpages spread over the
 * folio (all of a smaller one, against a threshold scaled down to match)
 * and splits when fewer than threshold of them hold data, so dense folios
 * stay whole. On 6.12 policy_<size>kB sets the policy of one size
 * ("inherit": policy; "whole": never split). Splitting first is what lets
 * the zero subpages go without being written: split_zero drops them on
 * 6.1, every 6.12 split does.
 *
 * Knobs and counters: /sys/kernel/mm/mmtune/thp_swap/, documented in
 * sysfs-docs/sysfs-kernel-mm-mmtune-thp_swap. The decisions are in
 * thp_policy.c.
 */
#include <linux/mm.h>
#include <linux/page-flags.h>
#include <linux/string.h>

#include "mmtune.h"
#include "cgroup_policy.h"
#include "thp_policy.h"

static u32 policy = THP_SWAP_ADAPTIVE;
static u32 sample_size = THP_SAMPLE_SIZE_DEFAULT;
static u32 threshold = THP_THRESHOLD_DEFAULT;
/* Per folio order (policy_<size>kB); THP_SIZE_INHERIT is 0. */
static u32 size_policy[MMTUNE_NR_ORDERS];

struct thp_swap_stats {
	unsigned long thp_whole, thp_split, thp_split_failed, subpages_sampled,
		      subpages_sampled_zero;
};
static DEFINE_PER_CPU(struct thp_swap_stats, thp_swap_stats);

/* 1 to split @folio, MMTUNE_STOCK to keep it whole, by size policy @sp. */
static int thp_swap_decide(struct folio *folio, u32 sp)
{
	unsigned int nr = folio_nr_pages(folio);
	unsigned int sampled = 0, nonzero = 0, samples, size, thresh, seed;
	enum thp_size_policy pol;
	enum thp_verdict verdict;

	pol = thp_size_policy_of(sp, READ_ONCE(policy));
	if (pol == THP_SIZE_WHOLE) {
		this_cpu_inc(thp_swap_stats.thp_whole);
		return MMTUNE_STOCK;
	}
	if (pol == THP_SIZE_SPLIT) {
		this_cpu_inc(thp_swap_stats.thp_split);
		return 1;
	}

	/* Never read a poisoned subpage: leave such a THP to the stock path. */
	if (folio_test_has_hwpoisoned(folio)) {
		this_cpu_inc(thp_swap_stats.thp_whole);
		return MMTUNE_STOCK;
	}

	/* A concurrent knob write may pair old and new values: clamp. */
	samples = READ_ONCE(sample_size);
	size = min(samples, nr);
	thresh = min(size, thp_sample_threshold(READ_ONCE(threshold), samples,
						nr));
	seed = (unsigned int)(folio_pfn(folio) / nr) * 2654435761u;

	while ((verdict = thp_adaptive_verdict(sampled, nonzero, size,
					       thresh)) == THP_SAMPLE_MORE) {
		struct page *page = folio_page(folio,
				thp_sample_index(sampled, size, nr, seed));

		/* PG_has_hwpoisoned is set late: test this subpage. */
		if (PageHWPoison(page)) {
			this_cpu_inc(thp_swap_stats.thp_whole);
			return MMTUNE_STOCK;
		}
		sampled++;
		if (!mmtune_page_is_zero(page))
			nonzero++;
	}
	this_cpu_add(thp_swap_stats.subpages_sampled, sampled);
	this_cpu_add(thp_swap_stats.subpages_sampled_zero, sampled - nonzero);
	if (verdict == THP_SPLIT) {
		this_cpu_inc(thp_swap_stats.thp_split);
		return 1;
	}
	this_cpu_inc(thp_swap_stats.thp_whole);
	return MMTUNE_STOCK;
}

/*
 * The thp_swap_split hook. Context: shrink_folio_list(), the folio locked
 * and isolated, inside the hook core's SRCU read section; no mmap_lock, no
 * allocation. The folio's cgroup_policy entry, if any, overrides the size's
 * policy and counts the verdict.
 */
static int thp_swap_split(struct folio *folio)
{
	unsigned int order = folio_order(folio);
	struct cgp_entry *e;
	u32 sp;
	int ret;

	sp = order < MMTUNE_NR_ORDERS ? READ_ONCE(size_policy[order]) :
					THP_SIZE_INHERIT;
	rcu_read_lock();
	e = cgroup_policy_of_folio(folio);
	sp = cgroup_policy_thp_swap(e, order) ?: sp;
	ret = thp_swap_decide(folio, sp);
	cgroup_policy_count(e, ret == 1 ? CGP_THP_SPLIT : CGP_THP_WHOLE, order);
	rcu_read_unlock();
	return ret;
}

/*
 * The thp_swap_split_failed hook: the split asked for above failed, and the
 * kernel swaps the folio out whole, as stock does. Context: as
 * thp_swap_split, inside an RCU read section.
 */
static void thp_swap_split_failed(struct folio *folio)
{
	this_cpu_inc(thp_swap_stats.thp_split_failed);
}

static MMTUNE_HOOKS(thp_swap,
		     .thp_swap_split = thp_swap_split,
		     .thp_swap_split_failed = thp_swap_split_failed);

static int thp_swap_set_sample_size(u32 val)
{
	return thp_policy_check(val, threshold);
}

static int thp_swap_set_threshold(u32 val)
{
	return thp_policy_check(sample_size, val);
}

static MMTUNE_KNOB_CHOICE(policy, policy, thp_swap_policy_names, NULL);
static MMTUNE_KNOB_U32(sample_size, sample_size, THP_SAMPLE_SIZE_MIN,
		       THP_SAMPLE_SIZE_MAX, thp_swap_set_sample_size);
static MMTUNE_KNOB_U32(threshold, threshold, 0, THP_THRESHOLD_MAX,
		       thp_swap_set_threshold);

/* The per-size policies, one knob per mTHP order (2 to PMD). */
#define POLICY_KNOB(_size, _order)					\
	MMTUNE_KNOB_ORDER_CHOICE(policy_##_size, size_policy, _order,	\
				 thp_size_policy_names)
static POLICY_KNOB(16kB, 2);
static POLICY_KNOB(32kB, 3);
static POLICY_KNOB(64kB, 4);
static POLICY_KNOB(128kB, 5);
static POLICY_KNOB(256kB, 6);
static POLICY_KNOB(512kB, 7);
static POLICY_KNOB(1024kB, 8);
static POLICY_KNOB(2048kB, 9);

#define STAT(field) MMTUNE_COUNTER(thp_swap_stats, field)
static const struct mmtune_counter thp_swap_counters[] = {
	STAT(thp_whole), STAT(thp_split), STAT(thp_split_failed),
	STAT(subpages_sampled),
	STAT(subpages_sampled_zero),
	{}
};
#undef STAT

static struct attribute *thp_swap_attrs[] = {
	MMTUNE_KNOB_ATTR(policy),
	MMTUNE_KNOB_ATTR(sample_size),
	MMTUNE_KNOB_ATTR(threshold),
	MMTUNE_KNOB_ATTR(policy_16kB),
	MMTUNE_KNOB_ATTR(policy_32kB),
	MMTUNE_KNOB_ATTR(policy_64kB),
	MMTUNE_KNOB_ATTR(policy_128kB),
	MMTUNE_KNOB_ATTR(policy_256kB),
	MMTUNE_KNOB_ATTR(policy_512kB),
	MMTUNE_KNOB_ATTR(policy_1024kB),
	MMTUNE_KNOB_ATTR(policy_2048kB),
	NULL,
};

MMTUNE_DEFINE_FEATURE(thp_swap, THP_SWAP);

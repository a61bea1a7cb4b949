// SPDX-License-Identifier: GPL-2.0
/*
 * THP swap-out policy (feature group thp_swap).
 *
 * Behind the kernel's thp_swap_split hook, reclaim asks whether to split a
 * PMD-mapped THP before swap-out. With the feature off (stock) it goes out
 * whole when the swap device has THP clusters. policy "split" always
 * splits; "adaptive" reads sample_size subpages spread over the THP and
 * splits when fewer than threshold of them hold data, so dense THPs stay
 * whole. Splitting first is what lets split_zero drop the zero subpages.
 *
 * Knobs and counters: /sys/kernel/mm/mmtune/thp_swap/, documented in
 * sysfs-docs/sysfs-kernel-mm-mmtune-thp_swap. The decisions are in
 * thp_policy.c.
 */
#include <linux/mm.h>
#include <linux/page-flags.h>
#include <linux/string.h>

#include "mmtune.h"
#include "thp_policy.h"

static u32 policy = THP_SWAP_ADAPTIVE;
static u32 sample_size = THP_SAMPLE_SIZE_DEFAULT;
static u32 threshold = THP_THRESHOLD_DEFAULT;

struct thp_swap_stats {
	unsigned long thp_whole, thp_split, subpages_sampled,
		      subpages_sampled_zero;
};
static DEFINE_PER_CPU(struct thp_swap_stats, thp_swap_stats);

/*
 * The thp_swap_split hook. Context: shrink_folio_list(), the folio locked
 * and isolated, inside the hook core's SRCU read section; no mmap_lock, no
 * allocation.
 */
static int thp_swap_split(struct folio *folio)
{
	unsigned int nr = folio_nr_pages(folio);
	unsigned int sampled = 0, nonzero = 0, size, thresh, seed;
	enum thp_verdict verdict;

	if (READ_ONCE(policy) == THP_SWAP_SPLIT) {
		this_cpu_inc(thp_swap_stats.thp_split);
		return 1;
	}

	/* Never read a poisoned subpage: leave such a THP to the stock path. */
	if (folio_test_has_hwpoisoned(folio)) {
		this_cpu_inc(thp_swap_stats.thp_whole);
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

#define STAT(field) MMTUNE_COUNTER(thp_swap_stats, field)
static const struct mmtune_counter thp_swap_counters[] = {
	STAT(thp_whole), STAT(thp_split), STAT(subpages_sampled),
	STAT(subpages_sampled_zero),
	{}
};
#undef STAT

static struct attribute *thp_swap_attrs[] = {
	MMTUNE_KNOB_ATTR(policy),
	MMTUNE_KNOB_ATTR(sample_size),
	MMTUNE_KNOB_ATTR(threshold),
	NULL,
};

static const struct mmtune_ops thp_swap_hooks = {
	.thp_swap_split	= thp_swap_split,
};

const struct mmtune_desc thp_swap_feature = {
	MMTUNE_DESC(thp_swap, THP_SWAP),
};

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * THP swap-out policy and zero-subpage detection: the pure decisions (knob
 * ranges, which subpages to sample, split or keep whole). Pure C:
 * built into the module (thp_swap.c) and, unchanged, into the userspace
 * unit tests (tests/unit/test_thp_policy.c).
 */
#ifndef _MMTUNE_THP_POLICY_H
#define _MMTUNE_THP_POLICY_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/types.h>
#else
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
typedef uint32_t u32;
#endif

/* Subpages of a PMD-sized THP on x86-64 (HPAGE_PMD_NR). */
#define THP_POLICY_MAX_SUBPAGES	512

#define THP_SAMPLE_SIZE_MIN	1
#define THP_SAMPLE_SIZE_MAX	512
#define THP_SAMPLE_SIZE_DEFAULT	32
#define THP_THRESHOLD_MAX	512
#define THP_THRESHOLD_DEFAULT	4

/* thp_swap/policy; thp_swap/enabled 0 is stock (THPs go out whole) */
enum thp_swap_policy {
	THP_SWAP_SPLIT,		/* always split before swap-out */
	THP_SWAP_ADAPTIVE,	/* split sparse THPs, keep dense ones whole */
	NR_THP_SWAP_POLICIES
};

/*
 * thp_swap/policy_<size>kB: the policy of one folio size, on kernel lines
 * with large folios of several sizes (6.12); inherit takes thp_swap/policy.
 */
enum thp_size_policy {
	THP_SIZE_INHERIT,	/* thp_swap/policy */
	THP_SIZE_WHOLE,		/* never split: swap out whole, as stock */
	THP_SIZE_SPLIT,		/* always split before swap-out */
	THP_SIZE_ADAPTIVE,	/* split sparse folios, keep dense ones whole */
	NR_THP_SIZE_POLICIES
};

/* split_zero/mode; split_zero/enabled 0 is stock (every subpage remapped) */
enum split_zero_mode {
	SPLIT_ZERO_RECLAIM_ONLY,	/* only splits done by reclaim */
	SPLIT_ZERO_ALWAYS,	/* every split: reclaim, migration, others */
	NR_SPLIT_ZERO_MODES
};

/* The knobs' words, NULL-terminated for sysfs_match_string(). */
extern const char *const thp_swap_policy_names[NR_THP_SWAP_POLICIES + 1];
extern const char *const split_zero_mode_names[NR_SPLIT_ZERO_MODES + 1];
extern const char *const thp_size_policy_names[NR_THP_SIZE_POLICIES + 1];

/* 0 if @sample_size and @threshold are in range and consistent, or -EINVAL. */
int thp_policy_check(u32 sample_size, u32 threshold);

/*
 * The subpage to read as sample @i (0 <= @i < @sample_size) of a THP of @nr
 * subpages. Samples are evenly spaced; @seed shifts them within their
 * stride, so that data at a fixed offset of every THP is not always missed
 * (or always hit). Indexes are distinct and below @nr. @sample_size is
 * clamped to @nr.
 */
unsigned int thp_sample_index(unsigned int i, unsigned int sample_size,
			      unsigned int nr, unsigned int seed);

/*
 * The policy of a folio whose size has policy @size, with thp_swap/policy
 * @policy: THP_SIZE_WHOLE, THP_SIZE_SPLIT or THP_SIZE_ADAPTIVE.
 */
enum thp_size_policy thp_size_policy_of(enum thp_size_policy size,
					enum thp_swap_policy policy);

/*
 * The threshold of a folio of @nr subpages: the adaptive policy reads
 * min(@sample_size, @nr) of them and splits when fewer than
 * @threshold / @sample_size of those hold data. For a folio smaller than
 * the sample that is the threshold scaled down, rounded up (a 16K folio
 * read whole with 4 of 32: split only when no subpage holds data); for
 * every other folio, @threshold itself.
 */
unsigned int thp_sample_threshold(unsigned int threshold,
				  unsigned int sample_size, unsigned int nr);

enum thp_verdict {
	THP_SAMPLE_MORE,	/* read another sample */
	THP_KEEP_WHOLE,		/* enough data found: swap it out whole */
	THP_SPLIT,		/* sparse: split it before swap-out */
};

/*
 * Adaptive policy after @sampled samples, @nonzero of them holding data:
 * keep whole as soon as @nonzero reaches @threshold, split once every one
 * of @sample_size samples is read with fewer. @threshold 0 never splits.
 */
enum thp_verdict thp_adaptive_verdict(unsigned int sampled,
				      unsigned int nonzero,
				      unsigned int sample_size,
				      unsigned int threshold);

/* Should a split done for @reclaim (true) or another reason look for zeroes? */
bool split_zero_wanted(enum split_zero_mode mode, bool reclaim);

#endif /* _MMTUNE_THP_POLICY_H */

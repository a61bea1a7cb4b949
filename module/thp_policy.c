// SPDX-License-Identifier: GPL-2.0
/*
 * Pure decisions of the THP swap-out policy and of zero-subpage detection;
 * see thp_policy.h. No kernel or libc calls beyond what both provide.
 */
#include "thp_policy.h"

const char *const thp_swap_policy_names[NR_THP_SWAP_POLICIES + 1] = {
	[THP_SWAP_SPLIT]	= "split",
	[THP_SWAP_ADAPTIVE]	= "adaptive",
};

const char *const split_zero_mode_names[NR_SPLIT_ZERO_MODES + 1] = {
	[SPLIT_ZERO_RECLAIM_ONLY]	= "reclaim-only",
	[SPLIT_ZERO_ALWAYS]		= "always",
};

const char *const thp_size_policy_names[NR_THP_SIZE_POLICIES + 1] = {
	[THP_SIZE_INHERIT]	= "inherit",
	[THP_SIZE_WHOLE]	= "whole",
	[THP_SIZE_SPLIT]	= "split",
	[THP_SIZE_ADAPTIVE]	= "adaptive",
};

int thp_policy_check(u32 sample_size, u32 threshold)
{
	if (sample_size < THP_SAMPLE_SIZE_MIN ||
	    sample_size > THP_SAMPLE_SIZE_MAX ||
	    threshold > THP_THRESHOLD_MAX || threshold > sample_size)
		return -EINVAL;
	return 0;
}

unsigned int thp_sample_index(unsigned int i, unsigned int sample_size,
			      unsigned int nr, unsigned int seed)
{
	unsigned int stride;

	if (!nr)
		return 0;
	if (!sample_size)
		sample_size = 1;
	if (sample_size > nr)
		sample_size = nr;
	if (i >= sample_size)
		i = sample_size - 1;
	/*
	 * floor(i * nr / sample_size) are at least floor(nr / sample_size)
	 * apart, and the last one is at most nr - nr / sample_size: shifting
	 * all by less than the stride keeps them distinct and below nr.
	 */
	stride = nr / sample_size;
	return (unsigned int)(((unsigned long)i * nr) / sample_size) +
	       seed % stride;
}

enum thp_size_policy thp_size_policy_of(enum thp_size_policy size,
					enum thp_swap_policy policy)
{
	switch (size) {
	case THP_SIZE_WHOLE:
	case THP_SIZE_SPLIT:
	case THP_SIZE_ADAPTIVE:
		return size;
	default:
		return policy == THP_SWAP_SPLIT ? THP_SIZE_SPLIT :
		       THP_SIZE_ADAPTIVE;
	}
}

unsigned int thp_sample_threshold(unsigned int threshold,
				  unsigned int sample_size, unsigned int nr)
{
	if (!sample_size || nr >= sample_size)
		return threshold;
	return (unsigned int)(((unsigned long)threshold * nr + sample_size - 1) /
			      sample_size);
}

enum thp_verdict thp_adaptive_verdict(unsigned int sampled,
				      unsigned int nonzero,
				      unsigned int sample_size,
				      unsigned int threshold)
{
	if (nonzero >= threshold)
		return THP_KEEP_WHOLE;
	if (sampled >= sample_size)
		return THP_SPLIT;
	return THP_SAMPLE_MORE;
}

bool split_zero_wanted(enum split_zero_mode mode, bool reclaim)
{
	switch (mode) {
	case SPLIT_ZERO_RECLAIM_ONLY:
		return reclaim;
	case SPLIT_ZERO_ALWAYS:
		return true;
	default:
		return false;
	}
}

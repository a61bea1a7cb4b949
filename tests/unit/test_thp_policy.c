// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of module/thp_policy.c: knob words and ranges, which subpages
 * the adaptive policy samples, and when it splits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "thp_policy.h"

/* The words sysfs_match_string() gets: NULL-terminated, in enum order. */
static void policy_names_in_enum_order(void **state)
{
	assert_string_equal(thp_swap_policy_names[THP_SWAP_SPLIT], "split");
	assert_string_equal(thp_swap_policy_names[THP_SWAP_ADAPTIVE], "adaptive");
	assert_null(thp_swap_policy_names[NR_THP_SWAP_POLICIES]);
	assert_string_equal(split_zero_mode_names[SPLIT_ZERO_RECLAIM_ONLY],
			    "reclaim-only");
	assert_string_equal(split_zero_mode_names[SPLIT_ZERO_ALWAYS], "always");
	assert_null(split_zero_mode_names[NR_SPLIT_ZERO_MODES]);
	assert_string_equal(thp_size_policy_names[THP_SIZE_INHERIT], "inherit");
	assert_string_equal(thp_size_policy_names[THP_SIZE_WHOLE], "whole");
	assert_string_equal(thp_size_policy_names[THP_SIZE_SPLIT], "split");
	assert_string_equal(thp_size_policy_names[THP_SIZE_ADAPTIVE], "adaptive");
	assert_null(thp_size_policy_names[NR_THP_SIZE_POLICIES]);
}

/* A size's own policy wins; inherit (and anything unknown) takes policy. */
static void size_policy_over_feature_policy(void **state)
{
	static const enum thp_swap_policy pols[] = { THP_SWAP_SPLIT, THP_SWAP_ADAPTIVE };

	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(thp_size_policy_of(THP_SIZE_WHOLE, pols[i]), THP_SIZE_WHOLE);
		assert_int_equal(thp_size_policy_of(THP_SIZE_SPLIT, pols[i]), THP_SIZE_SPLIT);
		assert_int_equal(thp_size_policy_of(THP_SIZE_ADAPTIVE, pols[i]),
				 THP_SIZE_ADAPTIVE);
	}
	assert_int_equal(thp_size_policy_of(THP_SIZE_INHERIT, THP_SWAP_SPLIT), THP_SIZE_SPLIT);
	assert_int_equal(thp_size_policy_of(THP_SIZE_INHERIT, THP_SWAP_ADAPTIVE),
			 THP_SIZE_ADAPTIVE);
	assert_int_equal(thp_size_policy_of(NR_THP_SIZE_POLICIES, THP_SWAP_SPLIT),
			 THP_SIZE_SPLIT);
}

/*
 * The threshold per folio size: unchanged for a folio at least as large as
 * the sample (every 2M THP: the 6.1 behaviour), scaled down and rounded up
 * for a smaller one, so that the density it splits below stays
 * threshold / sample_size.
 */
static void threshold_scaled_to_small_folios(void **state)
{
	/* Default 4 of 32: 2M, 128K (32 pages) unchanged. */
	assert_int_equal(thp_sample_threshold(4, 32, 512), 4);
	assert_int_equal(thp_sample_threshold(4, 32, 32), 4);
	/* 64K: 16 pages, 2 of 16; 32K: 1 of 8; 16K: 1 of 4. */
	assert_int_equal(thp_sample_threshold(4, 32, 16), 2);
	assert_int_equal(thp_sample_threshold(4, 32, 8), 1);
	assert_int_equal(thp_sample_threshold(4, 32, 4), 1);
	/* 0 never splits at any size; threshold = sample size stays "all". */
	assert_int_equal(thp_sample_threshold(0, 32, 4), 0);
	assert_int_equal(thp_sample_threshold(32, 32, 4), 4);
	assert_int_equal(thp_sample_threshold(512, 512, 16), 16);
	/* Rounded up: 5 of 32 on 16 pages is 2.5, so 3. */
	assert_int_equal(thp_sample_threshold(5, 32, 16), 3);
	/* Every 6.1 case: a 512-page THP, any valid pair, unchanged. */
	for (unsigned int ss = 1; ss <= 512; ss++)
		for (unsigned int t = 0; t <= ss; t += 7)
			assert_int_equal(thp_sample_threshold(t, ss, 512), t);
	assert_int_equal(thp_sample_threshold(4, 0, 4), 4);
}

/* A 64K folio with one page of data in 16 splits; with two it stays whole. */
static void adaptive_on_a_64k_folio(void **state)
{
	unsigned int thresh = thp_sample_threshold(4, 32, 16);

	assert_int_equal(thp_adaptive_verdict(16, 1, 16, thresh), THP_SPLIT);
	assert_int_equal(thp_adaptive_verdict(2, 2, 16, thresh), THP_KEEP_WHOLE);
}

static void sample_size_and_threshold_ranges(void **state)
{
	assert_int_equal(thp_policy_check(THP_SAMPLE_SIZE_DEFAULT,
					  THP_THRESHOLD_DEFAULT), 0);
	assert_int_equal(thp_policy_check(1, 0), 0);
	assert_int_equal(thp_policy_check(1, 1), 0);
	assert_int_equal(thp_policy_check(512, 512), 0);
	assert_int_equal(thp_policy_check(0, 0), -EINVAL);
	assert_int_equal(thp_policy_check(513, 4), -EINVAL);
	assert_int_equal(thp_policy_check(32, 33), -EINVAL);
	assert_int_equal(thp_policy_check(512, 513), -EINVAL);
}

/* Every sample index is in range and distinct, for any size and seed. */
static void sample_indexes_distinct_and_in_range(void **state)
{
	static const unsigned int sizes[] = { 1, 2, 3, 5, 7, 31, 32, 33, 100,
					      255, 256, 257, 500, 511, 512 };
	static const unsigned int seeds[] = { 0, 1, 15, 16, 511, 12345,
					      0xffffffffu };

	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		for (size_t k = 0; k < sizeof(seeds) / sizeof(seeds[0]); k++) {
			unsigned char seen[512] = { 0 };

			for (unsigned int i = 0; i < sizes[s]; i++) {
				unsigned int idx = thp_sample_index(i, sizes[s],
								    512, seeds[k]);

				assert_true(idx < 512);
				assert_int_equal(seen[idx], 0);
				seen[idx] = 1;
			}
		}
	}
}

static void sample_index_spacing_and_clamps(void **state)
{
	/* 32 of 512, seed 0: every 16th subpage from subpage 0. */
	for (unsigned int i = 0; i < 32; i++)
		assert_int_equal(thp_sample_index(i, 32, 512, 0), i * 16);
	/* The seed shifts within the stride only. */
	assert_int_equal(thp_sample_index(0, 32, 512, 5), 5);
	assert_int_equal(thp_sample_index(31, 32, 512, 15), 511);
	assert_int_equal(thp_sample_index(0, 32, 512, 16), 0);
	/* 512 of 512 reads every subpage in order whatever the seed. */
	for (unsigned int i = 0; i < 512; i++)
		assert_int_equal(thp_sample_index(i, 512, 512, 77), i);
	/* Clamps: more samples than subpages, index past the sample size. */
	assert_int_equal(thp_sample_index(3, 600, 4, 9), 3);
	assert_int_equal(thp_sample_index(40, 32, 512, 0), 31 * 16);
	assert_int_equal(thp_sample_index(0, 0, 512, 3), 3);
	assert_int_equal(thp_sample_index(0, 1, 0, 3), 0);
}

static void adaptive_verdicts(void **state)
{
	/* Default 32 samples, threshold 4. */
	assert_int_equal(thp_adaptive_verdict(0, 0, 32, 4), THP_SAMPLE_MORE);
	assert_int_equal(thp_adaptive_verdict(31, 3, 32, 4), THP_SAMPLE_MORE);
	assert_int_equal(thp_adaptive_verdict(32, 3, 32, 4), THP_SPLIT);
	assert_int_equal(thp_adaptive_verdict(32, 0, 32, 4), THP_SPLIT);
	/* Stops early as soon as the threshold is reached. */
	assert_int_equal(thp_adaptive_verdict(4, 4, 32, 4), THP_KEEP_WHOLE);
	assert_int_equal(thp_adaptive_verdict(32, 32, 32, 4), THP_KEEP_WHOLE);
	/* Threshold 0 never splits; threshold = sample size splits unless all hold data. */
	assert_int_equal(thp_adaptive_verdict(0, 0, 32, 0), THP_KEEP_WHOLE);
	assert_int_equal(thp_adaptive_verdict(512, 511, 512, 512), THP_SPLIT);
	assert_int_equal(thp_adaptive_verdict(512, 512, 512, 512), THP_KEEP_WHOLE);
}

/* Best and worst case of the benchmark, simulated on subpage contents. */
static enum thp_verdict simulate(const unsigned char *dirty, unsigned int seed)
{
	unsigned int sampled = 0, nonzero = 0;
	enum thp_verdict v;

	while ((v = thp_adaptive_verdict(sampled, nonzero, 32, 4)) == THP_SAMPLE_MORE)
		nonzero += dirty[thp_sample_index(sampled++, 32, 512, seed)];
	return v;
}

static void adaptive_best_and_worst_case(void **state)
{
	unsigned char dirty[512];

	for (unsigned int seed = 0; seed < 64; seed++) {
		memset(dirty, 0, sizeof(dirty));
		dirty[0] = 1;
		assert_int_equal(simulate(dirty, seed), THP_SPLIT);
		memset(dirty, 1, sizeof(dirty));
		assert_int_equal(simulate(dirty, seed), THP_KEEP_WHOLE);
	}
}

static void zero_detection_by_mode(void **state)
{
	assert_true(split_zero_wanted(SPLIT_ZERO_RECLAIM_ONLY, true));
	assert_false(split_zero_wanted(SPLIT_ZERO_RECLAIM_ONLY, false));
	assert_true(split_zero_wanted(SPLIT_ZERO_ALWAYS, true));
	assert_true(split_zero_wanted(SPLIT_ZERO_ALWAYS, false));
	assert_false(split_zero_wanted(NR_SPLIT_ZERO_MODES, true));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(policy_names_in_enum_order),
		cmocka_unit_test(size_policy_over_feature_policy),
		cmocka_unit_test(threshold_scaled_to_small_folios),
		cmocka_unit_test(adaptive_on_a_64k_folio),
		cmocka_unit_test(sample_size_and_threshold_ranges),
		cmocka_unit_test(sample_indexes_distinct_and_in_range),
		cmocka_unit_test(sample_index_spacing_and_clamps),
		cmocka_unit_test(adaptive_verdicts),
		cmocka_unit_test(adaptive_best_and_worst_case),
		cmocka_unit_test(zero_detection_by_mode),
	};

	return cmocka_run_group_tests_name("thp_policy", tests, NULL, NULL);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of module/pcp_policy.c: how the PCP high tuner raises, lowers
 * and decays high, that high never leaves its bounds, and that huge inputs
 * saturate instead of overflowing.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "pcp_policy.h"

static const struct pcpp_params params = { .scale_max = 5, .decay_percent = 12 };

/* A pageset of a 1 GiB zone on 2 CPUs: batch 63, stock high 186. */
static struct pcpp_state tuned(int count, int high)
{
	struct pcpp_state st = {
		.count = count, .high_min = 186, .high_max = 15600,
		.batch = 63, .high = high,
	};
	return st;
}

static void refill_raises_high_by_the_batch(void **state)
{
	struct pcpp_state st = tuned(0, 186);
	struct pcpp_events ev = {};
	int nr;

	nr = pcpp_refill(&st, 0, &params, &ev);
	assert_int_equal(st.high, 186 + 63);
	assert_int_equal(ev.raised, 1);
	assert_int_equal(nr, 63);
	assert_int_equal(st.alloc_factor, 1);

	/* The next refill of an allocation streak takes a doubled batch. */
	st.count = 0;
	nr = pcpp_refill(&st, 0, &params, &ev);
	assert_int_equal(st.high, 186 + 63 + 126);
	assert_int_equal(nr, 126);
	assert_int_equal(st.alloc_factor, 2);
	assert_int_equal(ev.raised, 2);
}

static void refill_batch_stops_doubling_at_scale_max(void **state)
{
	struct pcpp_state st = tuned(0, 15600);
	struct pcpp_events ev = {};
	int i, nr = 0;

	for (i = 0; i < 20; i++) {
		st.count = 0;
		nr = pcpp_refill(&st, 0, &params, &ev);
	}
	assert_int_equal(st.alloc_factor, 5);
	assert_int_equal(nr, 63 << 5);
	assert_int_equal(st.high, 15600);
}

static void refill_never_raises_past_high_max(void **state)
{
	struct pcpp_state st = tuned(0, 15590);
	struct pcpp_events ev = {};

	pcpp_refill(&st, 0, &params, &ev);
	assert_int_equal(st.high, 15600);
	assert_int_equal(ev.raised, 1);
	pcpp_refill(&st, 0, &params, &ev);
	assert_int_equal(st.high, 15600);
	assert_int_equal(ev.raised, 1);
}

static void refill_does_not_raise_under_pressure(void **state)
{
	struct pcpp_state st = tuned(0, 1000);
	struct pcpp_events ev = {};

	st.below_high = true;
	pcpp_refill(&st, 0, &params, &ev);
	assert_int_equal(st.high, 1000);
	st.below_high = false;
	st.reclaim_active = true;
	pcpp_refill(&st, 0, &params, &ev);
	assert_int_equal(st.high, 1000);
	assert_int_equal(ev.raised, 0);
}

static void refill_with_equal_bounds_is_the_stock_batch(void **state)
{
	struct pcpp_state st = tuned(0, 186);
	struct pcpp_events ev = {};

	st.high_max = 186;
	assert_int_equal(pcpp_refill(&st, 0, &params, &ev), 63);
	assert_int_equal(st.high, 186);
	assert_int_equal(ev.raised, 0);
	assert_int_equal(pcpp_stock_refill(&st, 0), 63);
	/* High orders: batch >> order, at least 2. */
	assert_int_equal(pcpp_refill(&st, 3, &params, &ev), 7);
	assert_int_equal(pcpp_stock_refill(&st, 3), 7);
	assert_int_equal(pcpp_refill(&st, 9, &params, &ev), 2);
	assert_int_equal(pcpp_stock_refill(&st, 9), 2);
}

static void refill_of_a_tiny_pageset_takes_one_block(void **state)
{
	struct pcpp_state st = tuned(0, 10);
	struct pcpp_events ev = {};

	st.high_min = 0;
	st.high_max = 10;
	assert_int_equal(pcpp_refill(&st, 0, &params, &ev), 1);
	st.batch = 1;
	assert_int_equal(pcpp_stock_refill(&st, 0), 1);
}

static void free_below_high_keeps_pages(void **state)
{
	struct pcpp_state st = tuned(100, 1000);
	struct pcpp_events ev = {};

	assert_int_equal(pcpp_free(&st, 0, &params, &ev), 0);
	assert_int_equal(st.high, 1000);
	assert_int_equal(st.free_count, 1);
}

static void free_at_high_raises_high_for_the_streak(void **state)
{
	struct pcpp_state st = tuned(1000, 1000);
	struct pcpp_events ev = {};
	int nr;

	st.free_count = 999;
	nr = pcpp_free(&st, 0, &params, &ev);
	/* high must hold free_count + batch pages. */
	assert_int_equal(st.high, 1000 + 63);
	assert_int_equal(ev.raised, 1);
	/* Frees the streak, leaves at least a batch: clamp(1000, 63, 937). */
	assert_int_equal(nr, 937);
}

static void free_lowers_high_below_the_high_watermark(void **state)
{
	struct pcpp_state st = tuned(500, 1000);
	struct pcpp_events ev = {};
	int nr;

	st.below_high = true;
	st.free_count = 200;
	nr = pcpp_free(&st, 0, &params, &ev);
	assert_int_equal(st.high, 1000 - 201);
	assert_int_equal(ev.lowered, 1);
	/* Everything above high_min may go: clamp(201, 63, 500 - 63). */
	assert_int_equal(nr, 201);

	/* Never below high_min. */
	st = tuned(200, 190);
	st.below_high = true;
	st.free_count = 500;
	pcpp_free(&st, 0, &params, &ev);
	assert_int_equal(st.high, 186);
}

static void free_under_reclaim_holds_four_batches(void **state)
{
	struct pcpp_state st = tuned(252, 5000);
	struct pcpp_events ev = {};
	int nr;

	st.reclaim_active = true;
	nr = pcpp_free(&st, 0, &params, &ev);
	assert_int_equal(st.high, 5000 - 63);
	/* At 4 batches it frees the streak, at least a batch. */
	assert_int_equal(nr, 63);
	st.count = 251;
	assert_int_equal(pcpp_free(&st, 0, &params, &ev), 0);
}

static void free_high_order_streak_drains_a_scaled_batch_only(void **state)
{
	struct pcpp_state st = tuned(5000, 8000);
	struct pcpp_events ev = {};
	int nr;

	/* First high-order free of a streak: no drain yet. */
	st.free_count = 100;
	nr = pcpp_free(&st, 2, &params, &ev);
	assert_int_equal(nr, 0);
	assert_int_equal(st.flags & PCPP_PREV_FREE_HIGH_ORDER,
			 PCPP_PREV_FREE_HIGH_ORDER);
	/* Second: a scaled batch, not the whole pageset (stock: 5000). */
	nr = pcpp_free(&st, 2, &params, &ev);
	assert_int_equal(nr, 63 << 5);
	assert_int_equal(st.high, 8000 - (63 << 5));
	assert_int_equal(ev.free_high, 1);
	assert_int_equal(ev.lowered, 1);
	/* An order-0 free ends the streak. */
	pcpp_free(&st, 0, &params, &ev);
	assert_int_equal(st.flags & PCPP_PREV_FREE_HIGH_ORDER, 0);
	/* Stock 6.1 drains everything on any high-order free after a free. */
	st.count = 5000;
	st.high = 8000;
	assert_true(pcpp_stock_free_drains(&st, 2, 1));
	assert_false(pcpp_stock_free_drains(&st, 2, 0));
}

static void free_clears_the_allocation_streak(void **state)
{
	struct pcpp_state st = tuned(10, 1000);
	struct pcpp_events ev = {};

	st.alloc_factor = 4;
	pcpp_free(&st, 0, &params, &ev);
	assert_int_equal(st.alloc_factor, 2);
}

static void free_of_a_disabled_pageset_frees_everything(void **state)
{
	struct pcpp_state st = tuned(3, 500);
	struct pcpp_events ev = {};

	st.high_min = st.high_max = 0;
	assert_int_equal(pcpp_free(&st, 0, &params, &ev), 3);
	assert_int_equal(st.high, 0);
}

static void free_with_equal_bounds_matches_stock_trigger(void **state)
{
	struct pcpp_state st;
	struct pcpp_events ev = {};
	int count;

	for (count = 150; count < 200; count++) {
		st = tuned(count, 186);
		st.high_max = 186;
		assert_int_equal(pcpp_free(&st, 0, &params, &ev) > 0,
				 pcpp_stock_free_drains(&st, 0, 0));
		assert_int_equal(st.high, 186);
	}
	assert_int_equal(ev.raised + ev.lowered, 0);
}

static void free_count_is_capped(void **state)
{
	struct pcpp_state st = tuned(10, 15600);
	struct pcpp_events ev = {};
	int i;

	for (i = 0; i < 5000; i++)
		pcpp_free(&st, 0, &params, &ev);
	assert_int_equal(st.free_count, 63 << 5);

	st.batch = INT_MAX;
	st.free_count = PCPP_FREE_COUNT_MAX;
	pcpp_free(&st, 9, &params, &ev);
	assert_int_equal(st.free_count, PCPP_FREE_COUNT_MAX);
}

static void decay_lowers_by_the_percentage_toward_high_min(void **state)
{
	struct pcpp_state st = tuned(0, 10000);
	struct pcpp_events ev = {};
	int steps = 0;

	assert_int_equal(pcpp_decay(&st, &params, &ev), 1);
	assert_int_equal(st.high, 10000 - 1200);
	while (pcpp_decay(&st, &params, &ev))
		steps++;
	assert_int_equal(st.high, 186);
	/* 12% a step: 10000 -> 186 in about 31 steps. */
	assert_in_range(steps, 25, 35);
	assert_int_equal(pcpp_decay(&st, &params, &ev), 0);
	assert_int_equal(st.high, 186);
}

static void decay_drops_at_most_a_scaled_batch_below_count(void **state)
{
	struct pcpp_state st = tuned(10000, 10000);
	struct pcpp_events ev = {};
	struct pcpp_params fast = { .scale_max = 5, .decay_percent = 100 };

	pcpp_decay(&st, &fast, &ev);
	assert_int_equal(st.high, 10000 - (63 << 5));
	assert_int_equal(ev.decayed, 1);
}

static void decay_makes_progress_on_small_highs(void **state)
{
	struct pcpp_state st = tuned(0, 190);
	struct pcpp_events ev = {};
	struct pcpp_params slow = { .scale_max = 5, .decay_percent = 1 };

	/* 1% of 190 rounds to 0: still one page a step. */
	pcpp_decay(&st, &slow, &ev);
	assert_int_equal(st.high, 189);
}

static void clamp_keeps_high_in_bounds(void **state)
{
	assert_int_equal(pcpp_clamp_high(5, 10, 20), 10);
	assert_int_equal(pcpp_clamp_high(25, 10, 20), 20);
	assert_int_equal(pcpp_clamp_high(15, 10, 20), 15);
	assert_int_equal(pcpp_clamp_high(INT_MIN, 0, INT_MAX), 0);
	assert_int_equal(pcpp_clamp_high(INT_MAX, 0, 0), 0);
	/* high_max wins if the bounds cross, as the kernel's clamp(). */
	assert_int_equal(pcpp_clamp_high(15, 20, 10), 10);
}

static void every_call_leaves_high_in_bounds(void **state)
{
	static const int highs[] = { INT_MIN, -1, 0, 1, 185, 186, 187, 9000,
				     15599, 15600, 15601, INT_MAX };
	struct pcpp_events ev = {};
	unsigned int order;
	size_t i;

	for (i = 0; i < sizeof(highs) / sizeof(highs[0]); i++) {
		for (order = 0; order <= 10; order++) {
			struct pcpp_state st = tuned(500, highs[i]);

			pcpp_free(&st, order, &params, &ev);
			assert_in_range(st.high, 186, 15600);
			st = tuned(0, highs[i]);
			pcpp_refill(&st, order, &params, &ev);
			assert_in_range(st.high, 186, 15600);
			st = tuned(500, highs[i]);
			st.below_high = true;
			pcpp_free(&st, order, &params, &ev);
			assert_in_range(st.high, 186, 15600);
		}
		{
			struct pcpp_state st = tuned(INT_MAX, highs[i]);

			pcpp_decay(&st, &params, &ev);
			assert_in_range(st.high, 186, 15600);
		}
	}
}

static void huge_values_saturate(void **state)
{
	struct pcpp_state st = {
		.count = 0, .high_min = 0, .high_max = INT_MAX,
		.batch = INT_MAX / 2, .high = INT_MAX - 5,
		.alloc_factor = 5,
	};
	struct pcpp_events ev = {};
	struct pcpp_params big = { .scale_max = 40, .decay_percent = 100 };
	int nr;

	nr = pcpp_refill(&st, 0, &big, &ev);
	assert_int_equal(st.high, INT_MAX);
	assert_true(nr > 0);

	st.count = INT_MAX;
	st.free_count = PCPP_FREE_COUNT_MAX;
	nr = pcpp_free(&st, 0, &big, &ev);
	assert_true(nr >= 0);
	assert_in_range(st.high, 0, INT_MAX);

	st.high = INT_MAX;
	st.count = 0;
	assert_int_equal(pcpp_decay(&st, &big, &ev), 0);
	assert_int_equal(st.high, 0);

	st.high = INT_MAX;
	st.batch = INT_MAX;
	st.reclaim_active = true;
	assert_true(pcpp_stock_free_drains(&st, 0, 0) == (st.count >= INT_MAX));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(refill_raises_high_by_the_batch),
		cmocka_unit_test(refill_batch_stops_doubling_at_scale_max),
		cmocka_unit_test(refill_never_raises_past_high_max),
		cmocka_unit_test(refill_does_not_raise_under_pressure),
		cmocka_unit_test(refill_with_equal_bounds_is_the_stock_batch),
		cmocka_unit_test(refill_of_a_tiny_pageset_takes_one_block),
		cmocka_unit_test(free_below_high_keeps_pages),
		cmocka_unit_test(free_at_high_raises_high_for_the_streak),
		cmocka_unit_test(free_lowers_high_below_the_high_watermark),
		cmocka_unit_test(free_under_reclaim_holds_four_batches),
		cmocka_unit_test(free_high_order_streak_drains_a_scaled_batch_only),
		cmocka_unit_test(free_clears_the_allocation_streak),
		cmocka_unit_test(free_of_a_disabled_pageset_frees_everything),
		cmocka_unit_test(free_with_equal_bounds_matches_stock_trigger),
		cmocka_unit_test(free_count_is_capped),
		cmocka_unit_test(decay_lowers_by_the_percentage_toward_high_min),
		cmocka_unit_test(decay_drops_at_most_a_scaled_batch_below_count),
		cmocka_unit_test(decay_makes_progress_on_small_highs),
		cmocka_unit_test(clamp_keeps_high_in_bounds),
		cmocka_unit_test(every_call_leaves_high_in_bounds),
		cmocka_unit_test(huge_values_saturate),
	};

	return cmocka_run_group_tests_name("pcp_policy", tests, NULL, NULL);
}

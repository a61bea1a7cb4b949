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

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static const struct pcpp_params params = { .scale_max = 5, .decay_percent = 12 };

/* A pageset of a 1 GiB zone on 2 CPUs: batch 63, stock high 186. */
#define PAGESET(...) { .high_min = 186, .high_max = 15600, .batch = 63, __VA_ARGS__ }

static struct pcpp_state tuned(int count, int high)
{
	struct pcpp_state st = PAGESET(.count = count, .high = high);

	return st;
}

/*
 * One call on one pageset, and everything it puts out: what it returns,
 * high, free_count, alloc_factor and the events.
 */

struct one_call {
	const char *name;
	enum { REFILL, FREE, DECAY } call;
	struct pcpp_state st;
	const struct pcpp_params *params;	/* NULL: params */
	struct {
		int ret, high, free_count;
		unsigned int alloc_factor;
		struct pcpp_events ev;
	} want;
};

static const struct one_call one_calls[] = {
	{ "refill_does_not_raise_below_the_high_watermark", REFILL,
	  PAGESET(.count = 0, .high = 1000, .below_high = true),
	  .want = { .ret = 63, .high = 1000, .alloc_factor = 1 } },
	{ "refill_does_not_raise_under_reclaim", REFILL,
	  PAGESET(.count = 0, .high = 1000, .reclaim_active = true),
	  .want = { .ret = 63, .high = 1000, .alloc_factor = 1 } },
	{ "free_below_high_keeps_pages", FREE,
	  PAGESET(.count = 100, .high = 1000),
	  .want = { .ret = 0, .high = 1000, .free_count = 1 } },
	/*
	 * high must hold free_count + batch pages; frees the streak, leaves
	 * at least a batch: clamp(1000, 63, 937).
	 */
	{ "free_at_high_raises_high_for_the_streak", FREE,
	  PAGESET(.count = 1000, .high = 1000, .free_count = 999),
	  .want = { .ret = 937, .high = 1000 + 63, .free_count = 1000,
		    .ev.raised = 1 } },
	/* Everything above high_min may go: clamp(201, 63, 500 - 63). */
	{ "free_lowers_high_below_the_high_watermark", FREE,
	  PAGESET(.count = 500, .high = 1000, .below_high = true, .free_count = 200),
	  .want = { .ret = 201, .high = 1000 - 201, .free_count = 201,
		    .ev.lowered = 1 } },
	{ "free_never_lowers_high_below_high_min", FREE,
	  PAGESET(.count = 200, .high = 190, .below_high = true, .free_count = 500),
	  .want = { .ret = 137, .high = 186, .free_count = 501, .ev.lowered = 1 } },
	{ "free_clears_the_allocation_streak", FREE,
	  PAGESET(.count = 10, .high = 1000, .alloc_factor = 4),
	  .want = { .ret = 0, .high = 1000, .free_count = 1, .alloc_factor = 2 } },
	{ "free_of_a_disabled_pageset_frees_everything", FREE,
	  { .count = 3, .high = 500, .batch = 63 },	/* high_min = high_max = 0 */
	  .want = { .ret = 3, .high = 0, .free_count = 1 } },
	{ "decay_drops_at_most_a_scaled_batch_below_count", DECAY,
	  PAGESET(.count = 10000, .high = 10000),
	  &(const struct pcpp_params){ .scale_max = 5, .decay_percent = 100 },
	  .want = { .ret = 1, .high = 10000 - (63 << 5), .ev.decayed = 1 } },
	/* 1% of 190 rounds to 0: still one page a step. */
	{ "decay_makes_progress_on_small_highs", DECAY,
	  PAGESET(.count = 0, .high = 190),
	  &(const struct pcpp_params){ .scale_max = 5, .decay_percent = 1 },
	  .want = { .ret = 1, .high = 189, .ev.decayed = 1 } },
};

static void one_call(void **state)
{
	const struct one_call *c = *state;
	const struct pcpp_params *p = c->params ? c->params : &params;
	struct pcpp_state st = c->st;
	struct pcpp_events ev = {};
	int ret;

	switch (c->call) {
	case REFILL:
		ret = pcpp_refill(&st, 0, p, &ev);
		break;
	case FREE:
		ret = pcpp_free(&st, 0, p, &ev);
		break;
	default:
		ret = pcpp_decay(&st, p, &ev);
		break;
	}
	assert_int_equal(ret, c->want.ret);
	assert_int_equal(st.high, c->want.high);
	assert_int_equal(st.free_count, c->want.free_count);
	assert_int_equal(st.alloc_factor, c->want.alloc_factor);
	assert_int_equal(ev.raised, c->want.ev.raised);
	assert_int_equal(ev.lowered, c->want.ev.lowered);
	assert_int_equal(ev.decayed, c->want.ev.decayed);
	assert_int_equal(ev.free_high, c->want.ev.free_high);
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
	/* The tests that make several calls, or call pure functions. */
	static const struct CMUnitTest others[] = {
		cmocka_unit_test(refill_raises_high_by_the_batch),
		cmocka_unit_test(refill_batch_stops_doubling_at_scale_max),
		cmocka_unit_test(refill_never_raises_past_high_max),
		cmocka_unit_test(refill_with_equal_bounds_is_the_stock_batch),
		cmocka_unit_test(refill_of_a_tiny_pageset_takes_one_block),
		cmocka_unit_test(free_under_reclaim_holds_four_batches),
		cmocka_unit_test(free_high_order_streak_drains_a_scaled_batch_only),
		cmocka_unit_test(free_with_equal_bounds_matches_stock_trigger),
		cmocka_unit_test(free_count_is_capped),
		cmocka_unit_test(decay_lowers_by_the_percentage_toward_high_min),
		cmocka_unit_test(clamp_keeps_high_in_bounds),
		cmocka_unit_test(every_call_leaves_high_in_bounds),
		cmocka_unit_test(huge_values_saturate),
	};
	struct CMUnitTest tests[ARRAY_SIZE(one_calls) + ARRAY_SIZE(others)];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(one_calls); i++)
		tests[i] = (struct CMUnitTest){ .name = one_calls[i].name,
						.test_func = one_call,
						.initial_state = (void *)&one_calls[i] };
	memcpy(&tests[i], others, sizeof(others));
	return cmocka_run_group_tests_name("pcp_policy", tests, NULL, NULL);
}

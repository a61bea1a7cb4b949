// SPDX-License-Identifier: GPL-2.0
/*
 * PCP high auto-tuning policy; see pcp_policy.h. Pure integer code with no
 * kernel dependencies: every sum and shift saturates at INT_MAX, so that
 * no input, however large, overflows.
 */
#include "pcp_policy.h"

#define PCPP_INT_MAX	((int)(~0U >> 1))

static int imin(int a, int b)
{
	return a < b ? a : b;
}

static int imax(int a, int b)
{
	return a > b ? a : b;
}

/* a + b for a, b >= 0, saturating. */
static int sat_add(int a, int b)
{
	long long r = (long long)a + b;

	return r > PCPP_INT_MAX ? PCPP_INT_MAX : (int)r;
}

/* v << s for v >= 0, saturating. */
static int sat_shl(int v, unsigned int s)
{
	long long r;

	if (v <= 0)
		return v;
	if (s > 31)
		return PCPP_INT_MAX;
	r = (long long)v << s;
	return r > PCPP_INT_MAX ? PCPP_INT_MAX : (int)r;
}

int pcpp_clamp_high(int high, int high_min, int high_max)
{
	if (high < high_min)
		high = high_min;
	if (high > high_max)
		high = high_max;
	return high;
}

static void count_change(int old, int new, unsigned int *up,
			 unsigned int *down)
{
	if (new > old && up)
		(*up)++;
	else if (new < old && down)
		(*down)++;
}

int pcpp_free(struct pcpp_state *st, unsigned int order,
	      const struct pcpp_params *p, struct pcpp_events *ev)
{
	int batch = imax(st->batch, 1);
	int scaled = sat_shl(batch, p->scale_max);
	int high, hi_eff, fc;
	bool free_high = false;

	/* A free ends an allocation streak: shrink the refill batch. */
	st->alloc_factor >>= 1;

	/*
	 * A streak of high-order frees (process exit, page cache of large
	 * folios) used to drain the whole pageset. Keep that for the second
	 * free of a streak only, and drain a scaled batch, not everything.
	 */
	if (order && order <= PCPP_COSTLY_ORDER) {
		free_high = st->free_count >= batch &&
			    (st->flags & PCPP_PREV_FREE_HIGH_ORDER);
		st->flags |= PCPP_PREV_FREE_HIGH_ORDER;
	} else {
		st->flags &= ~PCPP_PREV_FREE_HIGH_ORDER;
	}
	if (st->free_count < scaled)
		st->free_count = imin(sat_add(imax(st->free_count, 0),
					      1 << imin(order, 30)),
				      PCPP_FREE_COUNT_MAX);

	high = pcpp_clamp_high(st->high, st->high_min, st->high_max);
	st->high = high;

	/* Disabled pageset (memory offline, hwpoison): keep nothing. */
	if (high <= 0)
		return st->count;

	if (free_high) {
		st->high = imax(high - scaled, st->high_min);
		count_change(high, st->high, NULL, &ev->lowered);
		ev->free_high++;
		return imin(st->count, scaled);
	}

	fc = imax(st->free_count, batch);
	if (st->reclaim_active) {
		/* Reclaim runs: hold little, as stock does. */
		st->high = imax(high - fc, st->high_min);
		hi_eff = imin(sat_shl(batch, 2), st->high);
	} else if (st->high_min == st->high_max) {
		hi_eff = high;
	} else if (st->below_high) {
		/* Free pages are short: give back what is being freed. */
		st->high = imax(high - fc, st->high_min);
		hi_eff = imax(st->count, st->high_min);
	} else {
		hi_eff = high;
		/* high must hold the pages of a free streak. */
		if (st->count >= high) {
			int need = sat_add(st->free_count, batch);

			if (high < need)
				st->high = pcpp_clamp_high(need, st->high_min,
							   st->high_max);
		}
	}
	count_change(high, st->high, &ev->raised, &ev->lowered);

	if (st->count < hi_eff)
		return 0;
	if (hi_eff < batch)
		return 1;
	/* Free the streak, not a fixed batch; keep at least a batch. */
	return imin(imax(st->free_count, batch), hi_eff - batch);
}

int pcpp_refill(struct pcpp_state *st, unsigned int order,
		const struct pcpp_params *p, struct pcpp_events *ev)
{
	int base = imax(st->batch, 1);
	int high, b;

	high = pcpp_clamp_high(st->high, st->high_min, st->high_max);
	st->high = high;

	/* Too small to hold a batch: one block at a time. */
	if (high < base)
		return 1;

	b = order ? base : sat_shl(base, st->alloc_factor);

	/* A bigger high would have avoided this trip to the zone. */
	if (st->high_min != st->high_max && !st->below_high &&
	    !st->reclaim_active) {
		st->high = imin(sat_add(high, b), st->high_max);
		count_change(high, st->high, &ev->raised, NULL);
		high = st->high;
	}

	if (!order) {
		int max_alloc = imax(high - st->count - base, base);

		/* Double the batch while allocations go on without frees. */
		if (b <= max_alloc && st->alloc_factor < p->scale_max)
			st->alloc_factor++;
		b = imin(b, max_alloc);
	}

	if (b > 1)
		b = imax(b >> imin(order, 30), 2);
	return b;
}

int pcpp_decay(struct pcpp_state *st, const struct pcpp_params *p,
	       struct pcpp_events *ev)
{
	int scaled = sat_shl(imax(st->batch, 1), p->scale_max);
	long long dec;
	int high, next;

	high = pcpp_clamp_high(st->high, st->high_min, st->high_max);
	st->high = high;
	if (high <= st->high_min)
		return 0;

	dec = (long long)high * p->decay_percent / 100;
	if (dec < 1)
		dec = 1;
	next = (int)(high - dec);
	/* Do not ask the kernel to free more than a scaled batch at once. */
	next = imax(next, st->count - scaled);
	next = imax(next, st->high_min);
	st->high = imin(next, high);
	count_change(high, st->high, NULL, &ev->decayed);
	return st->high > st->high_min;
}

bool pcpp_stock_free_drains(const struct pcpp_state *st, unsigned int order,
			    int free_factor)
{
	bool free_high = free_factor && order && order <= PCPP_COSTLY_ORDER;
	int high = st->high;

	if (!high || free_high)
		high = 0;
	else if (st->reclaim_active)
		high = imin(sat_shl(imax(st->batch, 0), 2), high);
	return st->count >= high;
}

int pcpp_stock_refill(const struct pcpp_state *st, unsigned int order)
{
	int batch = st->batch;

	if (batch > 1)
		batch = imax(batch >> imin(order, 30), 2);
	return batch;
}

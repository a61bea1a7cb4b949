// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU pageset high auto-tuning (feature group pcp_high).
 *
 * On 6.1 every CPU's pageset has a static high. Behind the kernel's
 * pcp_free, pcp_refill and pcp_decay hooks this file moves high between
 * the bounds it asks the kernel for with mmtune_pcp_set_bounds(): up when
 * the pageset runs empty and refills from the zone, down when the zone is
 * short of free pages, and back to high_min when idle (pcp_policy.c has
 * the rules). The kernel clamps high into the bounds after every hook, and
 * memory offline or hwpoison set both bounds to 0.
 *
 * enabled=0 or rmmod: the hooks stop, then the kernel puts the bounds back
 * to (0, 0), which restores every pageset's static high exactly.
 * observe=1 keeps the hooks on with stock decisions and static bounds, only
 * to count refills and drains for a comparison with the tuner.
 *
 * Knobs and counters: /sys/kernel/mm/mmtune/pcp_high/, documented in
 * sysfs-docs/sysfs-kernel-mm-mmtune-pcp_high.
 */
#include <linux/cpumask.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/percpu.h>

#include "mmtune.h"
#include "pcp_policy.h"

#define FRACTION_MIN	8	/* as vm.percpu_pagelist_high_fraction */
#define FRACTION_MAX	10000

/* Knobs; written under mmtune_knob_lock, read by the hooks. */
static u32 observe;
static u32 high_max_fraction = 8;
static u32 high_min_fraction;	/* 0: the static (stock) high */
static u32 decay_percent = 12;
/* The hooks tune only while this is set; otherwise stock decisions. */
static bool pcp_tuning;

struct pcp_high_stats {
	unsigned long refill_calls, refill_pages, drains,
		      free_high, raises, lowers,
		      decays;
};
static DEFINE_PER_CPU(struct pcp_high_stats, pcp_high_stats);

/* One hook call: the pageset, the knobs and what the policy did to them. */
struct pcp_call {
	struct pcpp_state st;
	struct pcpp_params p;
	struct pcpp_events ev;
};

static void pcp_load(struct pcp_call *c, struct zone *zone,
		     struct per_cpu_pages *pcp)
{
	struct pcpp_state *st = &c->st;

	st->count = pcp->count;
	st->high_min = READ_ONCE(pcp->high_min);
	st->high_max = READ_ONCE(pcp->high_max);
	st->batch = READ_ONCE(pcp->batch);
	st->below_high = test_bit(ZONE_BELOW_HIGH, &zone->flags);
	st->reclaim_active = test_bit(ZONE_RECLAIM_ACTIVE, &zone->flags);
	st->high = pcp->high;
	st->free_count = pcp->free_count;
	st->alloc_factor = pcp->alloc_factor;
	st->flags = pcp->flags;
}

/* Only where the tuner decides: the knobs it reads, no events yet. */
static const struct pcpp_params *pcp_params(struct pcp_call *c)
{
	c->p.scale_max = CONFIG_PCP_BATCH_SCALE_MAX;
	c->p.decay_percent = READ_ONCE(decay_percent);
	c->ev = (struct pcpp_events){};
	return &c->p;
}

/* After the policy ran: write the pageset back and count what it did. */
static void pcp_store(struct per_cpu_pages *pcp, const struct pcp_call *c)
{
	const struct pcpp_events *ev = &c->ev;

	WRITE_ONCE(pcp->high, c->st.high);
	pcp->free_count = c->st.free_count;
	pcp->alloc_factor = c->st.alloc_factor;
	pcp->flags = c->st.flags;
	if (ev->raised)
		this_cpu_add(pcp_high_stats.raises, ev->raised);
	if (ev->lowered)
		this_cpu_add(pcp_high_stats.lowers, ev->lowered);
	if (ev->decayed)
		this_cpu_add(pcp_high_stats.decays, ev->decayed);
	if (ev->free_high)
		this_cpu_add(pcp_high_stats.free_high, ev->free_high);
}

/*
 * The hooks. Context: the local pcp->lock is held, preemption or migration
 * is off, possibly hard or soft IRQ context, inside rcu_read_lock(). Only
 * per-CPU counters and the given pageset are written.
 */
static int pcp_high_free(struct zone *zone, struct per_cpu_pages *pcp,
			 unsigned int order)
{
	struct pcp_call c;
	int nr;

	pcp_load(&c, zone, pcp);
	if (!READ_ONCE(pcp_tuning)) {
		if (pcpp_stock_free_drains(&c.st, order, pcp->free_factor))
			this_cpu_inc(pcp_high_stats.drains);
		return MMTUNE_STOCK;
	}
	/*
	 * The kernel updates ZONE_BELOW_HIGH on refills and drains only; a
	 * free that may raise high checks the watermark itself.
	 */
	if (!c.st.below_high && c.st.count >= c.st.high)
		c.st.below_high = zone_page_state(zone, NR_FREE_PAGES) <
				  high_wmark_pages(zone);
	nr = pcpp_free(&c.st, order, pcp_params(&c), &c.ev);
	pcp_store(pcp, &c);
	if (nr > 0 || c.st.count > c.st.high)
		this_cpu_inc(pcp_high_stats.drains);
	return nr;
}

static int pcp_high_refill(struct zone *zone, struct per_cpu_pages *pcp,
			   unsigned int order)
{
	struct pcp_call c;
	int nr;

	this_cpu_inc(pcp_high_stats.refill_calls);
	pcp_load(&c, zone, pcp);
	if (!READ_ONCE(pcp_tuning)) {
		this_cpu_add(pcp_high_stats.refill_pages,
			     pcpp_stock_refill(&c.st, order) << order);
		return MMTUNE_STOCK;
	}
	nr = pcpp_refill(&c.st, order, pcp_params(&c), &c.ev);
	pcp_store(pcp, &c);
	/* What the kernel will ask for after its cap (see pcp_tuned_refill). */
	nr = min(nr, max((c.st.high - c.st.count) >> order, 2));
	this_cpu_add(pcp_high_stats.refill_pages, (unsigned long)nr << order);
	return nr;
}

static int pcp_high_decay(struct zone *zone, struct per_cpu_pages *pcp)
{
	struct pcp_call c;
	int more;

	if (!READ_ONCE(pcp_tuning))
		return MMTUNE_STOCK;
	pcp_load(&c, zone, pcp);
	more = pcpp_decay(&c.st, pcp_params(&c), &c.ev);
	pcp_store(pcp, &c);
	return more;
}

static MMTUNE_HOOKS(pcp_high,
		     .pcp_free = pcp_high_free,
		     .pcp_refill = pcp_high_refill,
		     .pcp_decay = pcp_high_decay);

/*
 * Ask the kernel for the bounds the knobs say, static ones while observing,
 * and tune only with the tuner's. Called with mmtune_knob_lock held while
 * the feature is on or about to be; on error nothing changed.
 */
static int pcp_high_apply(u32 obs, u32 min_frac, u32 max_frac)
{
	int ret;

	if (obs) {
		WRITE_ONCE(pcp_tuning, false);
		return mmtune_pcp_set_bounds(&mmtune_ops, 0, 0);
	}
	ret = mmtune_pcp_set_bounds(&mmtune_ops, min_frac, max_frac);
	if (!ret)
		WRITE_ONCE(pcp_tuning, true);
	return ret;
}

static int pcp_high_enable(void)
{
	return pcp_high_apply(observe, high_min_fraction, high_max_fraction);
}

/* The kernel restores the static bounds itself once the hooks are off. */
static void pcp_high_disable(void)
{
	WRITE_ONCE(pcp_tuning, false);
}

static int pcp_high_set_observe(u32 val)
{
	if (!mmtune_feature_is_on(MMTUNE_PCP_HIGH))
		return 0;
	return pcp_high_apply(val, high_min_fraction, high_max_fraction);
}

/*
 * high_min never above high_max: a min fraction of 0 (the static high) or
 * one at least the max fraction; 1 to 7 are refused as by the sysctl.
 */
static int pcp_high_set_fractions(u32 min_frac, u32 max_frac)
{
	if ((min_frac && min_frac < FRACTION_MIN) ||
	    (min_frac && min_frac < max_frac))
		return -EINVAL;
	if (!mmtune_feature_is_on(MMTUNE_PCP_HIGH))
		return 0;
	return pcp_high_apply(observe, min_frac, max_frac);
}

static int pcp_high_set_min_fraction(u32 val)
{
	return pcp_high_set_fractions(val, high_max_fraction);
}

static int pcp_high_set_max_fraction(u32 val)
{
	return pcp_high_set_fractions(high_min_fraction, val);
}

static MMTUNE_KNOB_BOOL(observe, observe, pcp_high_set_observe);
static MMTUNE_KNOB_U32(high_max_fraction, high_max_fraction, FRACTION_MIN,
		       FRACTION_MAX, pcp_high_set_max_fraction);
static MMTUNE_KNOB_U32(high_min_fraction, high_min_fraction, 0, FRACTION_MAX,
		       pcp_high_set_min_fraction);
static MMTUNE_KNOB_U32(decay_percent, decay_percent, 1, 100, NULL);

/*
 * One line per populated zone: node, zone, min/avg/max of high and of count
 * over the online CPUs, and the bounds high_min and high_max.
 */
static int pcp_zone_line(char *buf, int len, int nid, struct zone *zone)
{
	long hmin = LONG_MAX, hmax = 0, hsum = 0;
	long cmin = LONG_MAX, cmax = 0, csum = 0;
	int bmin = 0, bmax = 0, n = 0, cpu;

	for_each_online_cpu(cpu) {
		struct per_cpu_pages *pcp = per_cpu_ptr(zone->per_cpu_pageset,
							cpu);
		long h = READ_ONCE(pcp->high);
		long c = READ_ONCE(pcp->count);

		hmin = min(hmin, h);
		hmax = max(hmax, h);
		hsum += h;
		cmin = min(cmin, c);
		cmax = max(cmax, c);
		csum += c;
		bmin = READ_ONCE(pcp->high_min);
		bmax = READ_ONCE(pcp->high_max);
		n++;
	}
	if (!n)
		return 0;
	return sysfs_emit_at(buf, len,
			     "%d %s high %ld %ld %ld count %ld %ld %ld bounds %d %d\n",
			     nid, zone->name, hmin, hsum / n, hmax,
			     cmin, csum / n, cmax, bmin, bmax);
}

static ssize_t zones_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	int len = 0, nid, zid;

	/* for_each_populated_zone() needs helpers modules cannot call. */
	for_each_online_node(nid) {
		for (zid = 0; zid < MAX_NR_ZONES; zid++) {
			struct zone *zone = &NODE_DATA(nid)->node_zones[zid];

			if (populated_zone(zone))
				len += pcp_zone_line(buf, len, nid, zone);
		}
	}
	return len;
}
static MMTUNE_ATTR_RO(zones);

#define STAT(field) MMTUNE_COUNTER(pcp_high_stats, field)
static const struct mmtune_counter pcp_high_counters[] = {
	STAT(refill_calls), STAT(refill_pages), STAT(drains), STAT(free_high),
	STAT(raises), STAT(lowers), STAT(decays),
	{}
};
#undef STAT

static struct attribute *pcp_high_attrs[] = {
	MMTUNE_KNOB_ATTR(observe),
	MMTUNE_KNOB_ATTR(high_max_fraction),
	MMTUNE_KNOB_ATTR(high_min_fraction),
	MMTUNE_KNOB_ATTR(decay_percent),
	MMTUNE_ATTR(zones),
	NULL,
};

MMTUNE_DEFINE_FEATURE(pcp_high, PCP_HIGH,
		      .enable = pcp_high_enable,
		      .disable = pcp_high_disable);

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
 * enabled=0 or rmmod: the hooks stop, then the bounds go back to (0, 0),
 * which puts every pageset's high back to its static value exactly.
 * observe=1 with enabled=0 keeps the hooks on with stock decisions, only to
 * count refills and drains for a comparison with the tuner on.
 *
 * Knobs and counters: /sys/kernel/mm/mmtune/pcp/, documented in
 * sysfs-docs/sysfs-kernel-mm-mmtune-pcp.
 */
#include <linux/cpumask.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sysfs.h>

#include "mmtune.h"
#include "parse.h"
#include "pcp_policy.h"

#define FRACTION_MIN	8	/* as vm.percpu_pagelist_high_fraction */
#define FRACTION_MAX	10000

/* Knobs; written under pcp_knob_lock, read by the hooks with READ_ONCE. */
static DEFINE_MUTEX(pcp_knob_lock);
static bool pcp_enabled;
static bool pcp_observe;
static u32 pcp_high_max_fraction = 8;
static u32 pcp_high_min_fraction;	/* 0: the static (stock) high */
static u32 pcp_decay_percent = 12;
/* The hooks tune only while this is set; otherwise stock decisions. */
static bool pcp_tuning;

struct pcp_stats {
	unsigned long refill_calls;
	unsigned long refill_pages;
	unsigned long drains;
	unsigned long free_high;
	unsigned long raises;
	unsigned long lowers;
	unsigned long decays;
};
static DEFINE_PER_CPU(struct pcp_stats, pcp_stats);

static void pcp_load(struct pcpp_state *st, struct zone *zone,
		     struct per_cpu_pages *pcp)
{
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

static void pcp_store(struct per_cpu_pages *pcp, const struct pcpp_state *st)
{
	WRITE_ONCE(pcp->high, st->high);
	pcp->free_count = st->free_count;
	pcp->alloc_factor = st->alloc_factor;
	pcp->flags = st->flags;
}

static void pcp_params(struct pcpp_params *p)
{
	p->scale_max = CONFIG_PCP_BATCH_SCALE_MAX;
	p->decay_percent = READ_ONCE(pcp_decay_percent);
}

static void pcp_count_events(const struct pcpp_events *ev)
{
	if (ev->raised)
		this_cpu_add(pcp_stats.raises, ev->raised);
	if (ev->lowered)
		this_cpu_add(pcp_stats.lowers, ev->lowered);
	if (ev->decayed)
		this_cpu_add(pcp_stats.decays, ev->decayed);
	if (ev->free_high)
		this_cpu_add(pcp_stats.free_high, ev->free_high);
}

/*
 * The hooks. Context: the local pcp->lock is held, preemption or migration
 * is off, possibly hard or soft IRQ context, inside rcu_read_lock(). Only
 * per-CPU counters and the given pageset are written.
 */
int mmtune_pcp_hook_free(struct zone *zone, struct per_cpu_pages *pcp,
			   unsigned int order)
{
	struct pcpp_events ev = {};
	struct pcpp_state st;
	struct pcpp_params p;
	int nr;

	pcp_load(&st, zone, pcp);
	if (!READ_ONCE(pcp_tuning)) {
		if (pcpp_stock_free_drains(&st, order, pcp->free_factor))
			this_cpu_inc(pcp_stats.drains);
		return -1;
	}
	/*
	 * The kernel updates ZONE_BELOW_HIGH on refills and drains only; a
	 * free that may raise high checks the watermark itself.
	 */
	if (!st.below_high && st.count >= st.high)
		st.below_high = zone_page_state(zone, NR_FREE_PAGES) <
				high_wmark_pages(zone);
	pcp_params(&p);
	nr = pcpp_free(&st, order, &p, &ev);
	pcp_store(pcp, &st);
	pcp_count_events(&ev);
	if (nr > 0 || st.count > st.high)
		this_cpu_inc(pcp_stats.drains);
	return nr;
}

int mmtune_pcp_hook_refill(struct zone *zone, struct per_cpu_pages *pcp,
			     unsigned int order)
{
	struct pcpp_events ev = {};
	struct pcpp_state st;
	struct pcpp_params p;
	int nr;

	pcp_load(&st, zone, pcp);
	this_cpu_inc(pcp_stats.refill_calls);
	if (!READ_ONCE(pcp_tuning)) {
		this_cpu_add(pcp_stats.refill_pages,
			     pcpp_stock_refill(&st, order) << order);
		return 0;
	}
	pcp_params(&p);
	nr = pcpp_refill(&st, order, &p, &ev);
	pcp_store(pcp, &st);
	pcp_count_events(&ev);
	/* What the kernel will ask for after its cap (see pcp_tuned_refill). */
	nr = min(nr, max((st.high - st.count) >> order, 2));
	this_cpu_add(pcp_stats.refill_pages, (unsigned long)nr << order);
	return nr;
}

int mmtune_pcp_hook_decay(struct zone *zone, struct per_cpu_pages *pcp)
{
	struct pcpp_events ev = {};
	struct pcpp_state st;
	struct pcpp_params p;
	int more;

	if (!READ_ONCE(pcp_tuning))
		return 0;
	pcp_load(&st, zone, pcp);
	pcp_params(&p);
	more = pcpp_decay(&st, &p, &ev);
	pcp_store(pcp, &st);
	pcp_count_events(&ev);
	return more;
}

/*
 * Apply the knobs: bounds first and hooks second when turning on, hooks
 * off first and stock bounds second when turning off. Called with
 * pcp_knob_lock held; on error nothing changed.
 */
static int pcp_apply(bool enabled, bool observe, u32 min_frac, u32 max_frac)
{
	int ret;

	if (enabled) {
		ret = mmtune_pcp_set_bounds(min_frac, max_frac);
		if (ret)
			return ret;
		ret = mmtune_feature_switch(MMTUNE_PCP_HIGH, true);
		if (ret) {
			mmtune_pcp_set_bounds(0, 0);
			return ret;
		}
		WRITE_ONCE(pcp_tuning, true);
		return 0;
	}
	/* From here on the hooks take stock decisions. */
	WRITE_ONCE(pcp_tuning, false);
	ret = mmtune_feature_switch(MMTUNE_PCP_HIGH, observe);
	if (ret && observe)
		return ret;
	/* Every high back to its static value. */
	return mmtune_pcp_set_bounds(0, 0);
}

static ssize_t pcp_bool_store(bool *knob, bool is_enabled, const char *buf,
			      size_t count)
{
	bool val;
	int ret = mmtune_parse_bool(buf, count, &val);

	if (ret)
		return ret;
	mutex_lock(&pcp_knob_lock);
	if (is_enabled)
		ret = pcp_apply(val, pcp_observe, pcp_high_min_fraction,
				pcp_high_max_fraction);
	else
		ret = pcp_apply(pcp_enabled, val, pcp_high_min_fraction,
				pcp_high_max_fraction);
	if (!ret)
		WRITE_ONCE(*knob, val);
	mutex_unlock(&pcp_knob_lock);
	return ret ? ret : count;
}

static ssize_t enabled_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(pcp_enabled));
}

static ssize_t enabled_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	return pcp_bool_store(&pcp_enabled, true, buf, count);
}
static struct kobj_attribute enabled_attr = __ATTR_RW(enabled);

static ssize_t observe_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(pcp_observe));
}

static ssize_t observe_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	return pcp_bool_store(&pcp_observe, false, buf, count);
}
static struct kobj_attribute observe_attr = __ATTR_RW(observe);

/* high_min must not exceed high_max: min fraction 0 or >= max fraction. */
static ssize_t pcp_fraction_store(bool is_max, const char *buf, size_t count)
{
	u32 min_frac, max_frac, val;
	int ret;

	ret = mmtune_parse_u32(buf, count, is_max ? FRACTION_MIN : 0,
			       FRACTION_MAX, &val);
	if (ret)
		return ret;
	if (!is_max && val && val < FRACTION_MIN)
		return -EINVAL;

	mutex_lock(&pcp_knob_lock);
	min_frac = is_max ? pcp_high_min_fraction : val;
	max_frac = is_max ? val : pcp_high_max_fraction;
	if (min_frac && min_frac < max_frac) {
		ret = -EINVAL;
	} else {
		if (pcp_enabled)
			ret = mmtune_pcp_set_bounds(min_frac, max_frac);
		if (!ret) {
			WRITE_ONCE(pcp_high_min_fraction, min_frac);
			WRITE_ONCE(pcp_high_max_fraction, max_frac);
		}
	}
	mutex_unlock(&pcp_knob_lock);
	return ret ? ret : count;
}

static ssize_t high_max_fraction_show(struct kobject *kobj,
				      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(pcp_high_max_fraction));
}

static ssize_t high_max_fraction_store(struct kobject *kobj,
				       struct kobj_attribute *attr,
				       const char *buf, size_t count)
{
	return pcp_fraction_store(true, buf, count);
}
static struct kobj_attribute high_max_fraction_attr =
	__ATTR_RW(high_max_fraction);

static ssize_t high_min_fraction_show(struct kobject *kobj,
				      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(pcp_high_min_fraction));
}

static ssize_t high_min_fraction_store(struct kobject *kobj,
				       struct kobj_attribute *attr,
				       const char *buf, size_t count)
{
	return pcp_fraction_store(false, buf, count);
}
static struct kobj_attribute high_min_fraction_attr =
	__ATTR_RW(high_min_fraction);

static ssize_t decay_percent_show(struct kobject *kobj,
				  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(pcp_decay_percent));
}

static ssize_t decay_percent_store(struct kobject *kobj,
				   struct kobj_attribute *attr,
				   const char *buf, size_t count)
{
	u32 val;
	int ret = mmtune_parse_u32(buf, count, 1, 100, &val);

	if (ret)
		return ret;
	WRITE_ONCE(pcp_decay_percent, val);
	return count;
}
static struct kobj_attribute decay_percent_attr = __ATTR_RW(decay_percent);

static MMTUNE_PERCPU_COUNTER_ATTR(refill_calls, pcp_stats.refill_calls);
static MMTUNE_PERCPU_COUNTER_ATTR(refill_pages, pcp_stats.refill_pages);
static MMTUNE_PERCPU_COUNTER_ATTR(drains, pcp_stats.drains);
static MMTUNE_PERCPU_COUNTER_ATTR(free_high, pcp_stats.free_high);
static MMTUNE_PERCPU_COUNTER_ATTR(raises, pcp_stats.raises);
static MMTUNE_PERCPU_COUNTER_ATTR(lowers, pcp_stats.lowers);
static MMTUNE_PERCPU_COUNTER_ATTR(decays, pcp_stats.decays);

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
static struct kobj_attribute zones_attr = __ATTR_RO(zones);

static struct attribute *pcp_attrs[] = {
	&enabled_attr.attr,
	&observe_attr.attr,
	&high_max_fraction_attr.attr,
	&high_min_fraction_attr.attr,
	&decay_percent_attr.attr,
	&refill_calls_attr.kattr.attr,
	&refill_pages_attr.kattr.attr,
	&drains_attr.kattr.attr,
	&free_high_attr.kattr.attr,
	&raises_attr.kattr.attr,
	&lowers_attr.kattr.attr,
	&decays_attr.kattr.attr,
	&zones_attr.attr,
	NULL,
};

static const struct attribute_group pcp_group = {
	.attrs = pcp_attrs,
};

static struct kobject *pcp_kobj;

int mmtune_pcp_init(struct kobject *parent)
{
	int ret;

	pcp_kobj = kobject_create_and_add("pcp", parent);
	if (!pcp_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(pcp_kobj, &pcp_group);
	if (ret) {
		kobject_put(pcp_kobj);
		pcp_kobj = NULL;
	}
	return ret;
}

/* Called at unload, after the hook core turned every hook off. */
void mmtune_pcp_exit(void)
{
	kobject_put(pcp_kobj);
	pcp_kobj = NULL;
	WRITE_ONCE(pcp_tuning, false);
	/* Every pageset's high back to its static value. */
	mmtune_pcp_set_bounds(0, 0);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU swap slot cache (feature group swap_slots).
 *
 * The stock cache in mm/swap_slots.c holds 64 slots per CPU with fixed
 * activation thresholds and shows nothing of what it does. While this group
 * is on, the kernel's swap_slot_alloc/swap_slot_free hooks hand order-0
 * slot allocation and free to this cache instead: a size operators can set
 * (16..1024), activation thresholds they can set, and counters. Large
 * folios keep getting whole clusters from the kernel.
 *
 * Every CPU has an allocation side (slots taken from the swap devices in
 * one batch, handed out one by one) and a free side (slots collected and
 * returned in one batch). A slot in either side has only SWAP_HAS_CACHE
 * set and holds no data, so returning slots early (drain) is always safe;
 * holding them when swapoff waits for them is not, hence the drains on
 * swapoff, CPU offline, deactivation, resize and unload.
 *
 * Knobs and counters: /sys/kernel/mm/mmtune/swap_slots/, documented in
 * sysfs-docs/sysfs-kernel-mm-mmtune-swap_slots.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpuhotplug.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/swap.h>
#include <linux/sysfs.h>

#include "mmtune.h"
#include "parse.h"

#define CACHE_SIZE_MIN		16
#define CACHE_SIZE_MAX		SWAP_SLOTS_BATCH_MAX
#define ACTIVATE_FACTOR_MAX	64

struct slot_cache {
	struct mutex alloc_lock;	/* slots, nr, cur; sleeps in refill */
	swp_entry_t *slots;
	int nr;				/* slots left, from slots[cur] on */
	int cur;
	spinlock_t free_lock;		/* slots_ret, n_ret; IRQs off */
	swp_entry_t *slots_ret;
	int n_ret;
	/* CPU online; written under both locks, read under either. */
	bool online;
};

static DEFINE_PER_CPU(struct slot_cache, slot_caches);

/*
 * Counters are per CPU so that the hot paths do not share a cache line;
 * the sysfs files sum them over every possible CPU.
 */
enum slot_stat {
	SLOTS_ALLOC,		/* order-0 allocations handled */
	SLOTS_ALLOC_HIT,		/* ... served from slots already cached */
	SLOTS_ALLOC_DIRECT,	/* ... one slot straight from the devices */
	SLOTS_REFILL,		/* get_swap_pages_batch() calls */
	SLOTS_REFILL_SLOTS,	/* slots those calls returned */
	SLOTS_FREE,		/* frees handled */
	SLOTS_FREE_CACHED,	/* ... put in the free side */
	SLOTS_FLUSH,		/* swapcache_free_entries() batches */
	SLOTS_FLUSH_SLOTS,	/* slots those batches returned */
	SLOTS_DRAIN,		/* whole-cache drains (swapoff, resize, ...) */
	SLOTS_ACTIVATIONS,
	SLOTS_DEACTIVATIONS,
	NR_SLOTS_STATS
};

struct slot_stats {
	unsigned long v[NR_SLOTS_STATS];
};

static DEFINE_PER_CPU(struct slot_stats, slot_stats);

static inline void stat_add(enum slot_stat item, long n)
{
	this_cpu_add(slot_stats.v[item], n);
}

/* Knobs; writes serialise on knob_lock. */
static DEFINE_MUTEX(knob_lock);
static u32 cache_size = 64;
static u32 activate_factor = 5;
static u32 deactivate_factor = 2;

/*
 * The cache runs only while free swap exceeds activate_factor full caches
 * per online CPU, and stops (returning every slot) below
 * deactivate_factor: the same hysteresis as the stock cache, tunable.
 */
static DEFINE_MUTEX(active_lock);
static bool cache_active;
static int cpuhp_state;

/* Returns the cached slots of @cpu to the swap devices. */
static void drain_cpu(unsigned int cpu, int online)
{
	struct slot_cache *c = per_cpu_ptr(&slot_caches, cpu);
	int n;

	mutex_lock(&c->alloc_lock);
	n = c->nr;
	if (n) {
		swapcache_free_entries(c->slots + c->cur, n);
		stat_add(SLOTS_FLUSH, 1);
		stat_add(SLOTS_FLUSH_SLOTS, n);
	}
	c->nr = 0;
	c->cur = 0;
	spin_lock_irq(&c->free_lock);
	n = c->n_ret;
	if (n) {
		swapcache_free_entries(c->slots_ret, n);
		stat_add(SLOTS_FLUSH, 1);
		stat_add(SLOTS_FLUSH_SLOTS, n);
	}
	c->n_ret = 0;
	if (online >= 0)
		c->online = online;
	spin_unlock_irq(&c->free_lock);
	mutex_unlock(&c->alloc_lock);
}

/* Offline CPUs were drained by the hotplug callback and stay empty. */
static void drain_all(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		drain_cpu(cpu, -1);
	stat_add(SLOTS_DRAIN, 1);
}

static bool check_active(void)
{
	long unit = (long)num_online_cpus() * READ_ONCE(cache_size);
	long pages = get_nr_swap_pages();
	bool active = READ_ONCE(cache_active);

	if (!active && pages > unit * READ_ONCE(activate_factor)) {
		mutex_lock(&active_lock);
		if (!cache_active) {
			WRITE_ONCE(cache_active, true);
			stat_add(SLOTS_ACTIVATIONS, 1);
		}
		mutex_unlock(&active_lock);
	} else if (active && pages < unit * READ_ONCE(deactivate_factor)) {
		mutex_lock(&active_lock);
		if (cache_active) {
			/* Cleared before the drain takes each CPU's locks. */
			WRITE_ONCE(cache_active, false);
			stat_add(SLOTS_DEACTIVATIONS, 1);
			drain_all();
		}
		mutex_unlock(&active_lock);
	}
	return READ_ONCE(cache_active);
}

/* May this CPU's cache hold slots? Called under one of its locks. */
static bool cache_usable(struct slot_cache *c)
{
	return c->online && READ_ONCE(cache_active) &&
	       swap_slots_cache_usable();
}

/* Called with c->alloc_lock held and the allocation side empty. */
static void refill(struct slot_cache *c)
{
	int want = READ_ONCE(cache_size);
	int got;

	c->cur = 0;
	while (c->nr < want) {
		got = get_swap_pages_batch(want - c->nr, c->slots + c->nr);
		stat_add(SLOTS_REFILL, 1);
		if (!got)
			break;
		stat_add(SLOTS_REFILL_SLOTS, got);
		c->nr += got;
	}
}

/*
 * The swap_slot_alloc hook: process context, may sleep, inside the hook
 * core's SRCU read section. Always handles the request, so the stock cache
 * is not refilled while this group is on.
 */
int mmtune_slots_alloc(swp_entry_t *entry)
{
	struct slot_cache *c;
	bool hit = false;

	entry->val = 0;
	stat_add(SLOTS_ALLOC, 1);
	if (swap_slots_cache_usable() && check_active()) {
		/* Preemptible; the mutex, not the CPU, protects the cache. */
		c = raw_cpu_ptr(&slot_caches);
		mutex_lock(&c->alloc_lock);
		if (cache_usable(c)) {
			hit = c->nr > 0;
			if (!c->nr)
				refill(c);
			if (c->nr) {
				*entry = c->slots[c->cur];
				c->slots[c->cur++].val = 0;
				c->nr--;
			}
		}
		mutex_unlock(&c->alloc_lock);
	}
	if (entry->val) {
		if (hit)
			stat_add(SLOTS_ALLOC_HIT, 1);
		return 0;
	}
	get_swap_pages_batch(1, entry);
	stat_add(SLOTS_ALLOC_DIRECT, 1);
	return 0;
}

/*
 * The swap_slot_free hook: atomic, inside rcu_read_lock(); the caller may
 * hold page table locks. Always handles the slot.
 */
int mmtune_slots_free(swp_entry_t entry)
{
	struct slot_cache *c = raw_cpu_ptr(&slot_caches);
	unsigned long flags;
	bool cached = false;
	int n;

	stat_add(SLOTS_FREE, 1);
	spin_lock_irqsave(&c->free_lock, flags);
	if (cache_usable(c)) {
		n = c->n_ret;
		if (n >= READ_ONCE(cache_size)) {
			swapcache_free_entries(c->slots_ret, n);
			stat_add(SLOTS_FLUSH, 1);
			stat_add(SLOTS_FLUSH_SLOTS, n);
			c->n_ret = 0;
		}
		c->slots_ret[c->n_ret++] = entry;
		cached = true;
	}
	spin_unlock_irqrestore(&c->free_lock, flags);
	if (cached)
		stat_add(SLOTS_FREE_CACHED, 1);
	else
		swapcache_free_entries(&entry, 1);
	return 0;
}

/* The swap_slots_drain hook: swapoff, swap_slots_cache_usable() false. */
void mmtune_slots_drain(void)
{
	drain_all();
}

static int slots_cpu_online(unsigned int cpu)
{
	struct slot_cache *c = per_cpu_ptr(&slot_caches, cpu);

	mutex_lock(&c->alloc_lock);
	spin_lock_irq(&c->free_lock);
	c->online = true;
	spin_unlock_irq(&c->free_lock);
	mutex_unlock(&c->alloc_lock);
	return 0;
}

/*
 * A task that looked up this CPU's cache before migrating away may still
 * come in; with online false it finds the cache closed.
 */
static int slots_cpu_offline(unsigned int cpu)
{
	drain_cpu(cpu, false);
	return 0;
}

/* sysfs */

static ssize_t enabled_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%d\n", mmtune_feature_is_on(MMTUNE_SWAP_SLOTS));
}

static ssize_t enabled_store(struct kobject *kobj, struct kobj_attribute *attr,
			     const char *buf, size_t count)
{
	bool on;
	int ret = mmtune_parse_bool(buf, count, &on);

	if (ret)
		return ret;
	mutex_lock(&knob_lock);
	ret = mmtune_feature_switch(MMTUNE_SWAP_SLOTS, on);
	/* No hook runs any more: hand every slot back. */
	if (!ret && !on)
		drain_all();
	mutex_unlock(&knob_lock);
	return ret ? ret : count;
}
static struct kobj_attribute enabled_attr = __ATTR_RW(enabled);

static ssize_t cache_size_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(cache_size));
}

/*
 * Safe under load: the hooks read cache_size under the CPU's lock; the
 * drain then leaves no CPU holding more than the new size.
 */
static ssize_t cache_size_store(struct kobject *kobj,
				struct kobj_attribute *attr, const char *buf,
				size_t count)
{
	u32 val;
	int ret = mmtune_parse_u32(buf, count, CACHE_SIZE_MIN, CACHE_SIZE_MAX,
				   &val);

	if (ret)
		return ret;
	mutex_lock(&knob_lock);
	if (val != cache_size) {
		WRITE_ONCE(cache_size, val);
		drain_all();
	}
	mutex_unlock(&knob_lock);
	return count;
}
static struct kobj_attribute cache_size_attr = __ATTR_RW(cache_size);

static ssize_t activate_factor_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(activate_factor));
}

static ssize_t activate_factor_store(struct kobject *kobj,
				     struct kobj_attribute *attr,
				     const char *buf, size_t count)
{
	u32 val;
	int ret = mmtune_parse_u32(buf, count, 1, ACTIVATE_FACTOR_MAX, &val);

	if (ret)
		return ret;
	mutex_lock(&knob_lock);
	/* Without a gap the cache would flap on and off. */
	if (val <= deactivate_factor)
		ret = -EINVAL;
	else
		WRITE_ONCE(activate_factor, val);
	mutex_unlock(&knob_lock);
	return ret ? ret : count;
}
static struct kobj_attribute activate_factor_attr =
	__ATTR_RW(activate_factor);

static ssize_t deactivate_factor_show(struct kobject *kobj,
				      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(deactivate_factor));
}

static ssize_t deactivate_factor_store(struct kobject *kobj,
				       struct kobj_attribute *attr,
				       const char *buf, size_t count)
{
	u32 val;
	int ret = mmtune_parse_u32(buf, count, 0, ACTIVATE_FACTOR_MAX - 1,
				   &val);

	if (ret)
		return ret;
	mutex_lock(&knob_lock);
	if (val >= activate_factor)
		ret = -EINVAL;
	else
		WRITE_ONCE(deactivate_factor, val);
	mutex_unlock(&knob_lock);
	return ret ? ret : count;
}
static struct kobj_attribute deactivate_factor_attr =
	__ATTR_RW(deactivate_factor);

/* "1" while the thresholds let the cache hold slots. */
static ssize_t active_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(cache_active));
}
static struct kobj_attribute active_attr = __ATTR_RO(active);

/* One line per possible CPU: "cpu<N> <alloc side> <free side>". */
static ssize_t cached_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	unsigned int cpu;
	int len = 0;

	for_each_possible_cpu(cpu) {
		struct slot_cache *c = per_cpu_ptr(&slot_caches, cpu);

		len += sysfs_emit_at(buf, len, "cpu%u %d %d\n", cpu,
				     READ_ONCE(c->nr), READ_ONCE(c->n_ret));
	}
	return len;
}
static struct kobj_attribute cached_attr = __ATTR_RO(cached);

static MMTUNE_PERCPU_COUNTER_ATTR(alloc, slot_stats.v[SLOTS_ALLOC]);
static MMTUNE_PERCPU_COUNTER_ATTR(alloc_hit, slot_stats.v[SLOTS_ALLOC_HIT]);
static MMTUNE_PERCPU_COUNTER_ATTR(alloc_direct, slot_stats.v[SLOTS_ALLOC_DIRECT]);
static MMTUNE_PERCPU_COUNTER_ATTR(refill, slot_stats.v[SLOTS_REFILL]);
static MMTUNE_PERCPU_COUNTER_ATTR(refill_slots, slot_stats.v[SLOTS_REFILL_SLOTS]);
static MMTUNE_PERCPU_COUNTER_ATTR(free, slot_stats.v[SLOTS_FREE]);
static MMTUNE_PERCPU_COUNTER_ATTR(free_cached, slot_stats.v[SLOTS_FREE_CACHED]);
static MMTUNE_PERCPU_COUNTER_ATTR(flush, slot_stats.v[SLOTS_FLUSH]);
static MMTUNE_PERCPU_COUNTER_ATTR(flush_slots, slot_stats.v[SLOTS_FLUSH_SLOTS]);
static MMTUNE_PERCPU_COUNTER_ATTR(drains, slot_stats.v[SLOTS_DRAIN]);
static MMTUNE_PERCPU_COUNTER_ATTR(activations, slot_stats.v[SLOTS_ACTIVATIONS]);
static MMTUNE_PERCPU_COUNTER_ATTR(deactivations, slot_stats.v[SLOTS_DEACTIVATIONS]);

static struct attribute *swap_slots_attrs[] = {
	&enabled_attr.attr,
	&cache_size_attr.attr,
	&activate_factor_attr.attr,
	&deactivate_factor_attr.attr,
	&active_attr.attr,
	&cached_attr.attr,
	&alloc_attr.kattr.attr,
	&alloc_hit_attr.kattr.attr,
	&alloc_direct_attr.kattr.attr,
	&refill_attr.kattr.attr,
	&refill_slots_attr.kattr.attr,
	&free_attr.kattr.attr,
	&free_cached_attr.kattr.attr,
	&flush_attr.kattr.attr,
	&flush_slots_attr.kattr.attr,
	&drains_attr.kattr.attr,
	&activations_attr.kattr.attr,
	&deactivations_attr.kattr.attr,
	NULL,
};

static const struct attribute_group swap_slots_group = {
	.attrs = swap_slots_attrs,
};

static struct kobject *swap_slots_kobj;

static void free_caches(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct slot_cache *c = per_cpu_ptr(&slot_caches, cpu);

		kvfree(c->slots);
		kvfree(c->slots_ret);
		c->slots = NULL;
		c->slots_ret = NULL;
	}
}

int mmtune_swap_slots_init(struct kobject *parent)
{
	unsigned int cpu;
	int ret;

	/* Sized for the largest cache, so a resize never allocates. */
	for_each_possible_cpu(cpu) {
		struct slot_cache *c = per_cpu_ptr(&slot_caches, cpu);

		mutex_init(&c->alloc_lock);
		spin_lock_init(&c->free_lock);
		c->slots = kvcalloc(CACHE_SIZE_MAX, sizeof(swp_entry_t),
				    GFP_KERNEL);
		c->slots_ret = kvcalloc(CACHE_SIZE_MAX, sizeof(swp_entry_t),
					GFP_KERNEL);
		if (!c->slots || !c->slots_ret) {
			free_caches();
			return -ENOMEM;
		}
	}

	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "mmtune/swap_slots:online",
				slots_cpu_online, slots_cpu_offline);
	if (ret < 0)
		goto free;
	cpuhp_state = ret;

	ret = -ENOMEM;
	swap_slots_kobj = kobject_create_and_add("swap_slots", parent);
	if (!swap_slots_kobj)
		goto cpuhp;
	ret = sysfs_create_group(swap_slots_kobj, &swap_slots_group);
	if (ret)
		goto put;
	return 0;
put:
	kobject_put(swap_slots_kobj);
	swap_slots_kobj = NULL;
cpuhp:
	cpuhp_remove_state(cpuhp_state);
free:
	free_caches();
	return ret;
}

/* The group's hooks are off and no caller is left inside them. */
void mmtune_swap_slots_exit(void)
{
	kobject_put(swap_slots_kobj);
	swap_slots_kobj = NULL;
	/* Drains every online CPU through slots_cpu_offline(). */
	cpuhp_remove_state(cpuhp_state);
	drain_all();
	free_caches();
}

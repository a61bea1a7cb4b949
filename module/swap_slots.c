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
#include <linux/debugfs.h>
#include <linux/fault-inject.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/swap.h>
#include <linux/sysfs.h>

#include "mmtune.h"

#define CACHE_SIZE_MIN		16
#define CACHE_SIZE_MAX		SWAP_SLOTS_BATCH_MAX
#define ACTIVATE_FACTOR_MAX	64

struct slot_cache {
	struct mutex alloc_lock;	/* slots, nr, cur; sleeps in refill */
	swp_entry_t *slots;
	int nr;				/* slots left, from slots[cur] on */
	int cur;
	spinlock_t free_lock;		/* slots_ret, n_ret, spare; IRQs off */
	swp_entry_t *slots_ret;
	int n_ret;
	/*
	 * Where a full free side's batch goes to be returned to the devices
	 * with the lock dropped and interrupts on. NULL while a task is
	 * returning from it.
	 */
	swp_entry_t *spare;
	/* CPU online; written under both locks, read under either. */
	bool online;
};

static DEFINE_PER_CPU(struct slot_cache, slot_caches);

/*
 * Counters: order-0 allocations handled, served from slots already cached,
 * or one slot straight from the devices; get_swap_pages_batch() calls and
 * the slots they returned; frees handled and put in the free side;
 * swapcache_free_entries() batches and their slots; whole-cache drains
 * (swapoff, resize, ...); (de)activations.
 */
struct swap_slots_stats {
	unsigned long alloc, alloc_hit, alloc_direct,
		      refill, refill_slots, free,
		      free_cached, flush, flush_slots,
		      drains, activations, deactivations;
};
static DEFINE_PER_CPU(struct swap_slots_stats, swap_slots_stats);

/* Knobs; written under mmtune_knob_lock. */
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

/* Returns @n slots to the swap devices; counted as one flush. */
static void return_slots(swp_entry_t *slots, int n)
{
	swapcache_free_entries(slots, n);
	this_cpu_inc(swap_slots_stats.flush);
	this_cpu_add(swap_slots_stats.flush_slots, n);
}

/*
 * Returns the cached slots of @cpu to the swap devices SWAP_BATCH at a
 * time, as the free path does: a whole cache (up to 1024 slots) in one
 * swapcache_free_entries() would hold si->lock, and on the free side keep
 * interrupts off, far longer than any stock return. The free side's
 * batches are copied out under free_lock and returned with it dropped;
 * frees that come in meanwhile are drained in the same loop.
 */
static void drain_cpu(unsigned int cpu, int online)
{
	struct slot_cache *c = per_cpu_ptr(&slot_caches, cpu);
	swp_entry_t batch[SWAP_BATCH];
	int n;

	mutex_lock(&c->alloc_lock);
	while (c->nr) {
		n = min_t(int, c->nr, SWAP_BATCH);
		return_slots(c->slots + c->cur, n);
		c->cur += n;
		c->nr -= n;
		cond_resched();
	}
	c->cur = 0;
	do {
		spin_lock_irq(&c->free_lock);
		n = min_t(int, c->n_ret, SWAP_BATCH);
		c->n_ret -= n;
		memcpy(batch, c->slots_ret + c->n_ret, n * sizeof(*batch));
		/* Closed (CPU offline) before the last slots go. */
		if (!c->n_ret && online >= 0)
			c->online = online;
		spin_unlock_irq(&c->free_lock);
		if (n)
			return_slots(batch, n);
		cond_resched();
	} while (n);
	mutex_unlock(&c->alloc_lock);
}

/* Offline CPUs were drained by the hotplug callback and stay empty. */
static void drain_all(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		drain_cpu(cpu, -1);
	this_cpu_inc(swap_slots_stats.drains);
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
			this_cpu_inc(swap_slots_stats.activations);
		}
		mutex_unlock(&active_lock);
	} else if (active && pages < unit * READ_ONCE(deactivate_factor)) {
		mutex_lock(&active_lock);
		if (cache_active) {
			/* Cleared before the drain takes each CPU's locks. */
			WRITE_ONCE(cache_active, false);
			this_cpu_inc(swap_slots_stats.deactivations);
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

#ifdef CONFIG_FAULT_INJECTION_DEBUG_FS
/*
 * Fault injection: debugfs fail_mmtune_slots_refill, with the attributes
 * of Documentation/fault-injection/fault-injection.rst (probability,
 * times, task-filter, fail-nth...). A refill that is made to fail gets no
 * slot from the devices, as when they are full, and the allocation falls
 * back to one slot straight from the devices (alloc_direct).
 */
static DECLARE_FAULT_ATTR(fail_refill);
static struct dentry *fail_refill_dir;

static bool refill_fails(void)
{
	return should_fail(&fail_refill, 1);
}

/* Optional: a load goes on without it. */
static void fail_refill_init(void)
{
	fail_refill_dir = fault_create_debugfs_attr("fail_mmtune_slots_refill",
						    NULL, &fail_refill);
}

static void fail_refill_exit(void)
{
	debugfs_remove_recursive(fail_refill_dir);
	fail_refill_dir = NULL;
}
#else
static bool refill_fails(void) { return false; }
static void fail_refill_init(void) { }
static void fail_refill_exit(void) { }
#endif

/* Called with c->alloc_lock held and the allocation side empty. */
static void refill(struct slot_cache *c)
{
	int want = READ_ONCE(cache_size);
	int got;

	c->cur = 0;
	while (c->nr < want) {
		got = refill_fails() ? 0 :
		      get_swap_pages_batch(want - c->nr, c->slots + c->nr);
		this_cpu_inc(swap_slots_stats.refill);
		if (!got)
			break;
		this_cpu_add(swap_slots_stats.refill_slots, got);
		c->nr += got;
	}
}

/*
 * The swap_slot_alloc hook: process context, may sleep, inside the hook
 * core's SRCU read section. Always handles the request, so the stock cache
 * is not refilled while this group is on.
 */
static int swap_slots_alloc(swp_entry_t *entry)
{
	struct slot_cache *c;
	bool hit = false;

	entry->val = 0;
	this_cpu_inc(swap_slots_stats.alloc);
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
			this_cpu_inc(swap_slots_stats.alloc_hit);
		return 0;
	}
	get_swap_pages_batch(1, entry);
	this_cpu_inc(swap_slots_stats.alloc_direct);
	return 0;
}

/*
 * The swap_slot_free hook: atomic, inside rcu_read_lock(); the caller may
 * hold page table locks. Always handles the slot.
 *
 * A full free side returns at most SWAP_BATCH slots per free, whatever
 * cache_size is: the caller holds its page table lock, so a return runs
 * with preemption off, and 1024 slots in one piece took 1.3 ms (stock
 * returns 64; tests/bench/irqsoff.sh). The batch is moved to the spare
 * buffer under the lock and returned with the lock dropped, so interrupts
 * stay off for a few stores; if the spare is out (another task, preempted,
 * still returns from it), the batch is returned under the lock, as stock
 * does.
 */
static int swap_slots_free(swp_entry_t entry)
{
	struct slot_cache *c = raw_cpu_ptr(&slot_caches);
	swp_entry_t *full = NULL;
	unsigned long flags;
	bool cached = false;
	int n = 0;

	this_cpu_inc(swap_slots_stats.free);
	spin_lock_irqsave(&c->free_lock, flags);
	if (cache_usable(c)) {
		if (c->n_ret >= READ_ONCE(cache_size)) {
			n = min_t(int, c->n_ret, SWAP_BATCH);
			c->n_ret -= n;
			if (c->spare) {
				full = c->spare;
				c->spare = NULL;
				memcpy(full, c->slots_ret + c->n_ret,
				       n * sizeof(*full));
			} else {
				return_slots(c->slots_ret + c->n_ret, n);
			}
		}
		c->slots_ret[c->n_ret++] = entry;
		cached = true;
	}
	spin_unlock_irqrestore(&c->free_lock, flags);
	if (full) {
		/*
		 * Still in the hook's RCU read section: unload and disable
		 * wait for this return before they free or drain the cache.
		 */
		return_slots(full, n);
		spin_lock_irqsave(&c->free_lock, flags);
		c->spare = full;
		spin_unlock_irqrestore(&c->free_lock, flags);
	}
	if (cached)
		this_cpu_inc(swap_slots_stats.free_cached);
	else
		swapcache_free_entries(&entry, 1);
	return 0;
}

/* The swap_slots_drain hook: swapoff, swap_slots_cache_usable() false. */
static void swap_slots_drain(void)
{
	drain_all();
}

static MMTUNE_HOOKS(swap_slots,
		     .swap_slot_alloc = swap_slots_alloc,
		     .swap_slot_free = swap_slots_free,
		     .swap_slots_drain = swap_slots_drain);

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

/*
 * Safe under load: the hooks read cache_size under the CPU's lock; the
 * drain then leaves no CPU holding more than the new size.
 */
static int swap_slots_set_cache_size(u32 val)
{
	if (val != cache_size) {
		WRITE_ONCE(cache_size, val);
		drain_all();
	}
	return 0;
}

/* Without a gap between the two the cache would flap on and off. */
static int swap_slots_set_activate_factor(u32 val)
{
	return val > deactivate_factor ? 0 : -EINVAL;
}

static int swap_slots_set_deactivate_factor(u32 val)
{
	return val < activate_factor ? 0 : -EINVAL;
}

static MMTUNE_KNOB_U32(cache_size, cache_size, CACHE_SIZE_MIN, CACHE_SIZE_MAX,
		       swap_slots_set_cache_size);
static MMTUNE_KNOB_U32(activate_factor, activate_factor, 1,
		       ACTIVATE_FACTOR_MAX, swap_slots_set_activate_factor);
static MMTUNE_KNOB_U32(deactivate_factor, deactivate_factor, 0,
		       ACTIVATE_FACTOR_MAX - 1, swap_slots_set_deactivate_factor);

/* "1" while the thresholds let the cache hold slots. */
static ssize_t active_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(cache_active));
}
static MMTUNE_ATTR_RO(active);

/*
 * "cpu<N> <alloc side> <free side>", for the CPUs whose cache holds slots:
 * an idle host with hundreds of CPUs does not fill the page. Should more
 * CPUs than fit hold slots, the last line is "more <CPUs left out>".
 */
#define CACHED_LINE_MAX	sizeof("cpu4294967295 -2147483648 -2147483648\n")
static ssize_t cached_show(struct kobject *kobj, struct kobj_attribute *attr,
			   char *buf)
{
	unsigned int cpu, more = 0;
	int len = 0;

	for_each_possible_cpu(cpu) {
		struct slot_cache *c = per_cpu_ptr(&slot_caches, cpu);
		int nr = READ_ONCE(c->nr), n_ret = READ_ONCE(c->n_ret);

		if (!nr && !n_ret)
			continue;
		if (len + 2 * CACHED_LINE_MAX > PAGE_SIZE)
			more++;
		else
			len += sysfs_emit_at(buf, len, "cpu%u %d %d\n", cpu,
					     nr, n_ret);
	}
	if (more)
		len += sysfs_emit_at(buf, len, "more %u\n", more);
	return len;
}
static MMTUNE_ATTR_RO(cached);

#define STAT(field) MMTUNE_COUNTER(swap_slots_stats, field)
static const struct mmtune_counter swap_slots_counters[] = {
	STAT(alloc), STAT(alloc_hit), STAT(alloc_direct), STAT(refill),
	STAT(refill_slots), STAT(free), STAT(free_cached), STAT(flush),
	STAT(flush_slots), STAT(drains), STAT(activations),
	STAT(deactivations),
	{}
};
#undef STAT

static struct attribute *swap_slots_attrs[] = {
	MMTUNE_KNOB_ATTR(cache_size),
	MMTUNE_KNOB_ATTR(activate_factor),
	MMTUNE_KNOB_ATTR(deactivate_factor),
	MMTUNE_ATTR(active),
	MMTUNE_ATTR(cached),
	NULL,
};

static void swap_slots_free_caches(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu) {
		struct slot_cache *c = per_cpu_ptr(&slot_caches, cpu);

		kvfree(c->slots);
		kvfree(c->slots_ret);
		kfree(c->spare);
		c->slots = NULL;
		c->slots_ret = NULL;
		c->spare = NULL;
	}
}

static int swap_slots_init(void)
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
		c->spare = kcalloc(SWAP_BATCH, sizeof(swp_entry_t),
				   GFP_KERNEL);
		if (!c->slots || !c->slots_ret || !c->spare) {
			swap_slots_free_caches();
			return -ENOMEM;
		}
	}

	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "mmtune/swap_slots:online",
				slots_cpu_online, slots_cpu_offline);
	if (ret < 0) {
		swap_slots_free_caches();
		return ret;
	}
	cpuhp_state = ret;
	fail_refill_init();
	return 0;
}

/* The group's hooks are off and no caller is left inside them. */
static void swap_slots_exit(void)
{
	fail_refill_exit();
	/* Drains every online CPU through slots_cpu_offline(). */
	cpuhp_remove_state(cpuhp_state);
	drain_all();
	swap_slots_free_caches();
}

MMTUNE_DEFINE_FEATURE(swap_slots, SWAP_SLOTS,
		      .init = swap_slots_init,
		      .exit = swap_slots_exit,
		      /* No hook runs any more: hand every slot back. */
		      .disable = drain_all);

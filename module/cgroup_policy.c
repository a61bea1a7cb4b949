// SPDX-License-Identifier: GPL-2.0
/*
 * Large-folio policy per memory cgroup (feature group cgroup_policy).
 *
 * Workloads that share a host want opposite large-folio policies: a
 * database keeps 2M THPs whole, a pod with a small memory limit is
 * OOM-killed by them. The kernel's settings are global, per size or per
 * process. This file keeps a table of per-cgroup entries, each narrowing
 * (a) the large folio sizes a fault or khugepaged may use (the kernel's
 * thp_orders hook), and overriding per size (b) thp_swap's split policy
 * and (c) zswap_large's store (looked up by those features' hooks).
 *
 * A folio or fault of cgroup C uses C's entry or, without one, its nearest
 * ancestor's, so an entry on a parent slice covers every child created
 * later. Entries are keyed by cgroup id, which the kernel never reuses:
 * an entry of a removed cgroup matches nothing and is dropped when the
 * table is next read or written.
 *
 * Lookups run at every fault that may allocate a large folio: an RCU hash
 * table, and a one-entry cache per CPU (the last memory cgroup asked, by
 * its css serial number, and its entry, valid while the table's
 * generation is unchanged). A hit is a few inline loads and compares.
 *
 * Files: /sys/kernel/mm/mmtune/cgroup_policy/, documented in
 * sysfs-docs/sysfs-kernel-mm-mmtune-cgroup_policy.
 */
#include <linux/cgroup.h>
#include <linux/hashtable.h>
#include <linux/memcontrol.h>
#include <linux/mm.h>
#include <linux/nsproxy.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/sysfs.h>
#include <linux/vmalloc.h>

#include "mmtune.h"
#include "cgroup_policy.h"
#include "thp_policy.h"

#define CGP_MAX_ENTRIES		1024
#define CGP_HASH_BITS		10
#define CGP_LINE_MAX		(PAGE_SIZE - 1)

/*
 * The orders an entry can name: every size this line has (6.12: 8kB to
 * 2M; 6.1: the PMD THP only). Faults start at 16kB: no anonymous or
 * shmem fault allocates an order-1 folio.
 */
#define CGP_ORDERS		(MMTUNE_SIZE_ORDERS ?: BIT(HPAGE_PMD_ORDER))
#define CGP_FAULT_ORDERS	(CGP_ORDERS & ~BIT(1))
#define CGP_SWAP_ORDERS		(CGP_ORDERS & ~BIT(1))

struct cgp_policy {
	/* Fault and collapse orders allowed; ~0UL (all) when unset. */
	unsigned long orders;
	bool orders_set;
	u8 thp_swap[MMTUNE_NR_ORDERS];	/* enum thp_size_policy; 0 unset */
	s8 zswap[MMTUNE_NR_ORDERS];	/* 0, 1; -1 unset */
	struct rcu_head rcu;
};

struct cgp_stats {
	unsigned long n[NR_CGP_COUNTERS][MMTUNE_NR_ORDERS];
};

struct cgp_entry {
	struct hlist_node node;
	u64 id;				/* cgroup id */
	struct cgp_policy __rcu *policy;
	struct cgp_stats __percpu *stats;
	struct rcu_head rcu;
};

static const char *const cgp_counter_names[NR_CGP_COUNTERS] = {
	[CGP_FAULT_NARROWED]	= "fault_narrowed",
	[CGP_THP_WHOLE]		= "thp_whole",
	[CGP_THP_SPLIT]		= "thp_split",
	[CGP_ZSWAP_STORED]	= "zswap_stored",
	[CGP_ZSWAP_REFUSED]	= "zswap_refused",
};

/* Writers hold cgp_lock; readers are RCU. */
static DEFINE_MUTEX(cgp_lock);
static DEFINE_HASHTABLE(cgp_hash, CGP_HASH_BITS);
static unsigned int cgp_nr;
/* Bumped after every change of the table: the CPU caches go stale. */
static atomic_long_t cgp_gen;

/*
 * Keyed by the css's serial number, which, like a cgroup id, is never
 * reused, and is one load away from the memcg.
 */
struct cgp_cache {
	u64 serial;
	long gen;
	struct cgp_entry *entry;
};
static DEFINE_PER_CPU(struct cgp_cache, cgp_cache) = { .gen = -1 };

/* The feature's own counters; the per-entry ones are in stats. */
struct cgroup_policy_stats {
	unsigned long faults_narrowed, entries_pruned;
};
static DEFINE_PER_CPU(struct cgroup_policy_stats, cgroup_policy_stats);

static struct cgp_entry *cgp_find(u64 id)
{
	struct cgp_entry *e;

	hash_for_each_possible_rcu(cgp_hash, e, node, id)
		if (e->id == id)
			return e;
	return NULL;
}

/*
 * For pointers read inside a hook: the hook core's read section is
 * rcu_read_lock() on 6.1 and a preemption-disabled (sched) RCU section for
 * 6.12's atomic hooks; either is an RCU reader to synchronize_rcu() and
 * call_rcu().
 */
#define cgp_deref(p)	rcu_dereference_check(p, rcu_read_lock_any_held())

/* The entry covering @cg: its own or its nearest ancestor's. Inside RCU. */
static struct cgp_entry *cgp_find_covering(struct cgroup *cg)
{
	struct cgp_entry *e;

	for (; cg; cg = cgroup_parent(cg)) {
		e = cgp_find(cgroup_id(cg));
		if (e)
			return e;
	}
	return NULL;
}

/*
 * The CPU's cached entry for @memcg, if the cache holds @memcg at the
 * table's current generation. Inline and call-free: the thp_orders hook
 * runs it at every fault that may allocate a large folio.
 */
static __always_inline bool cgp_cached(struct mem_cgroup *memcg,
				       struct cgp_entry **e)
{
	bool hit;

	/*
	 * No barrier: the cache is this CPU's own, and a generation read
	 * before cgp_changed()'s increment became visible means this RCU
	 * reader began before the grace period that frees a removed entry.
	 */
	preempt_disable();
	hit = __this_cpu_read(cgp_cache.serial) == memcg->css.serial_nr &&
	      __this_cpu_read(cgp_cache.gen) == atomic_long_read(&cgp_gen);
	*e = __this_cpu_read(cgp_cache.entry);
	preempt_enable();
	return hit;
}

/* A cache miss: look @memcg up and cache the answer. Inside RCU. */
static noinline struct cgp_entry *cgp_fill(struct mem_cgroup *memcg)
{
	struct cgp_entry *e;
	struct cgp_cache *c;
	long gen;

	c = get_cpu_ptr(&cgp_cache);
	gen = atomic_long_read(&cgp_gen);
	/* Pairs with cgp_changed(): the table read is at least this new. */
	smp_rmb();
	e = cgp_find_covering(memcg->css.cgroup);
	c->serial = memcg->css.serial_nr;
	c->gen = gen;
	c->entry = e;
	put_cpu_ptr(&cgp_cache);
	return e;
}

/* The entry covering @memcg. Inside RCU. */
static struct cgp_entry *cgp_lookup(struct mem_cgroup *memcg)
{
	struct cgp_entry *e;

	return cgp_cached(memcg, &e) ? e : cgp_fill(memcg);
}

/*
 * The memory cgroup of @mm, as mem_cgroup_from_task() finds it, but inline
 * (the exported function costs a call at every fault). Inside RCU.
 */
static __always_inline struct mem_cgroup *cgp_memcg_of_mm(struct mm_struct *mm)
{
	struct task_struct *owner = cgp_deref(mm->owner);

	return owner ? mem_cgroup_from_css(task_css(owner, memory_cgrp_id)) : NULL;
}

static bool cgp_active(void)
{
	return READ_ONCE(cgp_nr) && mmtune_feature_is_on(MMTUNE_CGROUP_POLICY);
}

struct cgp_entry *cgroup_policy_of_folio(struct folio *folio)
{
	struct mem_cgroup *memcg;

	if (!cgp_active())
		return NULL;
	memcg = folio_memcg(folio);
	return memcg ? cgp_lookup(memcg) : NULL;
}

unsigned int cgroup_policy_thp_swap(const struct cgp_entry *e,
				    unsigned int order)
{
	if (!e || order >= MMTUNE_NR_ORDERS)
		return THP_SIZE_INHERIT;
	return cgp_deref(e->policy)->thp_swap[order];
}

int cgroup_policy_zswap(const struct cgp_entry *e, unsigned int order)
{
	if (!e || order >= MMTUNE_NR_ORDERS)
		return -1;
	return cgp_deref(e->policy)->zswap[order];
}

void cgroup_policy_count(struct cgp_entry *e, enum cgp_counter c,
			 unsigned int order)
{
	if (e && order < MMTUNE_NR_ORDERS)
		this_cpu_inc(e->stats->n[c][order]);
}

/* Count what @e's policy took away from a fault; returns what is left. */
static noinline int cgp_narrowed(struct cgp_entry *e, unsigned long orders,
				 unsigned long allowed)
{
	unsigned long taken = orders & ~allowed;
	unsigned int o;

	for_each_set_bit(o, &taken, MMTUNE_NR_ORDERS)
		this_cpu_inc(e->stats->n[CGP_FAULT_NARROWED][o]);
	this_cpu_inc(cgroup_policy_stats.faults_narrowed);
	return orders & allowed;
}

static __always_inline int cgp_thp_orders(struct cgp_entry *e,
					  unsigned long orders)
{
	unsigned long allowed;

	if (!e)
		return MMTUNE_STOCK;
	allowed = cgp_deref(e->policy)->orders;
	if (likely(!(orders & ~allowed)))
		return MMTUNE_STOCK;
	return cgp_narrowed(e, orders, allowed);
}

static noinline int cgp_thp_orders_miss(struct mem_cgroup *memcg,
					unsigned long orders)
{
	return cgp_thp_orders(cgp_fill(memcg), orders);
}

/*
 * The thp_orders hook. Context: a fault (mmap_lock or the VMA lock held)
 * or khugepaged, inside the hook core's read section; must not sleep. It
 * runs at every fault that may allocate a large folio: the hit path is
 * inline loads and compares, everything else is out of line.
 */
static int cgroup_policy_thp_orders(struct vm_area_struct *vma, int kind,
				    unsigned long orders)
{
	struct mem_cgroup *memcg;
	struct cgp_entry *e;

	memcg = cgp_memcg_of_mm(vma->vm_mm);
	if (!memcg)
		return MMTUNE_STOCK;
	if (unlikely(!cgp_cached(memcg, &e)))
		return cgp_thp_orders_miss(memcg, orders);
	return cgp_thp_orders(e, orders);
}

static MMTUNE_HOOKS(cgroup_policy,
		     .thp_orders = cgroup_policy_thp_orders);

/* After every change of the table, under cgp_lock. */
static void cgp_changed(void)
{
	/* The change is visible before the new generation. */
	smp_wmb();
	atomic_long_inc(&cgp_gen);
}

static void cgp_entry_free(struct cgp_entry *e)
{
	kfree(rcu_dereference_protected(e->policy, true));
	free_percpu(e->stats);
	kfree(e);
}

static void cgp_entry_free_rcu(struct rcu_head *rcu)
{
	cgp_entry_free(container_of(rcu, struct cgp_entry, rcu));
}

static void cgp_remove(struct cgp_entry *e)
{
	lockdep_assert_held(&cgp_lock);
	hash_del_rcu(&e->node);
	cgp_nr--;
	cgp_changed();
	call_rcu(&e->rcu, cgp_entry_free_rcu);
}

/* The cgroup of @e with a reference, or NULL if it was removed. */
static struct cgroup *cgp_cgroup(struct cgp_entry *e)
{
	struct cgroup *cg = cgroup_get_from_id(e->id);

	return IS_ERR(cg) ? NULL : cg;
}

/* Drops the entries of removed cgroups. */
static void cgp_prune(void)
{
	struct hlist_node *tmp;
	struct cgp_entry *e;
	struct cgroup *cg;
	unsigned int b;

	lockdep_assert_held(&cgp_lock);
	hash_for_each_safe(cgp_hash, b, tmp, e, node) {
		cg = cgp_cgroup(e);
		if (cg) {
			cgroup_put(cg);
		} else {
			cgp_remove(e);
			this_cpu_inc(cgroup_policy_stats.entries_pruned);
		}
	}
}

/* "16kB" and the like: the order of that size, or -1. */
static int cgp_parse_size(const char *s, size_t len, unsigned long valid)
{
	unsigned int o;
	char word[16];

	for_each_set_bit(o, &valid, MMTUNE_NR_ORDERS) {
		snprintf(word, sizeof(word), "%lukB", (PAGE_SIZE << o) / SZ_1K);
		if (strlen(word) == len && !strncmp(s, word, len))
			return o;
	}
	return -1;
}

static int cgp_parse_orders(char *val, struct cgp_policy *p)
{
	char *tok;
	int o;

	p->orders_set = true;
	if (!strcmp(val, "all")) {
		p->orders = ~0UL;
		return 0;
	}
	p->orders = 0;
	if (!strcmp(val, "none"))
		return 0;
	while ((tok = strsep(&val, ","))) {
		o = cgp_parse_size(tok, strlen(tok), CGP_FAULT_ORDERS);
		if (o < 0 || (p->orders & BIT(o)))
			return -EINVAL;
		p->orders |= BIT(o);
	}
	return 0;
}

/*
 * "key=value ..." into @p; a key twice, an unknown key, size or value is
 * -EINVAL. A per-size key wins over its feature's shorthand.
 */
static int cgp_parse_keys(char *s, struct cgp_policy *p)
{
	int all_thp = -1, all_zswap = -1, v, o;
	unsigned long set_thp = 0, set_zswap = 0;
	bool seen_orders = false;
	char *tok, *val;
	size_t klen;

	while ((tok = strsep(&s, " \t"))) {
		if (!*tok)
			continue;
		val = strchr(tok, '=');
		if (!val || !val[1])
			return -EINVAL;
		klen = val - tok;
		*val++ = '\0';
		if (!strcmp(tok, "orders")) {
			if (seen_orders || cgp_parse_orders(val, p))
				return -EINVAL;
			seen_orders = true;
		} else if (!strcmp(tok, "thp_swap")) {
			v = match_string(thp_size_policy_names, -1, val);
			if (v < 0 || all_thp >= 0)
				return -EINVAL;
			all_thp = v;
		} else if (!strcmp(tok, "zswap_large")) {
			if (all_zswap >= 0 || kstrtoint(val, 10, &v) || v < 0 || v > 1)
				return -EINVAL;
			all_zswap = v;
		} else if (!strncmp(tok, "thp_swap_", 9)) {
			o = cgp_parse_size(tok + 9, klen - 9, CGP_SWAP_ORDERS);
			v = match_string(thp_size_policy_names, -1, val);
			if (o < 0 || v < 0 || (set_thp & BIT(o)))
				return -EINVAL;
			set_thp |= BIT(o);
			p->thp_swap[o] = v;
		} else if (!strncmp(tok, "zswap_large_", 12)) {
			o = cgp_parse_size(tok + 12, klen - 12, CGP_ORDERS);
			if (o < 0 || (set_zswap & BIT(o)) ||
			    kstrtoint(val, 10, &v) || v < 0 || v > 1)
				return -EINVAL;
			set_zswap |= BIT(o);
			p->zswap[o] = v;
		} else {
			return -EINVAL;
		}
	}
	for (o = 0; o < MMTUNE_NR_ORDERS; o++) {
		if (all_thp >= 0 && (CGP_SWAP_ORDERS & BIT(o)) && !(set_thp & BIT(o)))
			p->thp_swap[o] = all_thp;
		if (all_zswap >= 0 && (CGP_ORDERS & BIT(o)) && !(set_zswap & BIT(o)))
			p->zswap[o] = all_zswap;
	}
	return 0;
}

/* One command of the entries file; see the ABI document. */
static int cgp_command(char *line)
{
	struct cgp_policy *p = NULL, *old;
	struct cgroup *cg;
	struct cgp_entry *e;
	bool del = line[0] == '-';
	char *path, *keys;
	int ret;

	if (del)
		line++;
	keys = line;
	path = strsep(&keys, " \t");
	if (path[0] != '/' || (del && keys))
		return -EINVAL;
	if (!del) {
		p = kzalloc(sizeof(*p), GFP_KERNEL);
		if (!p)
			return -ENOMEM;
		p->orders = ~0UL;
		memset(p->zswap, -1, sizeof(p->zswap));
		ret = keys ? cgp_parse_keys(keys, p) : 0;
		if (ret)
			goto out_free;
	}

	cg = cgroup_get_from_path(path);
	if (IS_ERR(cg)) {
		ret = -EINVAL;
		goto out_free;
	}
	mutex_lock(&cgp_lock);
	/* Only a cgroup with a memory controller has folios of its own. */
	ret = -EINVAL;
	if (!rcu_access_pointer(cg->subsys[memory_cgrp_id]))
		goto unlock;
	e = cgp_find(cgroup_id(cg));
	if (del) {
		ret = -ENOENT;
		if (e) {
			cgp_remove(e);
			ret = 0;
		}
		goto unlock;
	}
	if (e) {
		/* Replaced whole; the counters stay with the cgroup. */
		old = rcu_replace_pointer(e->policy, p, lockdep_is_held(&cgp_lock));
		kfree_rcu(old, rcu);
		p = NULL;
		cgp_changed();
		ret = 0;
		goto unlock;
	}
	cgp_prune();
	ret = -ENOSPC;
	if (cgp_nr >= CGP_MAX_ENTRIES)
		goto unlock;
	ret = -ENOMEM;
	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		goto unlock;
	e->stats = alloc_percpu(struct cgp_stats);
	if (!e->stats) {
		kfree(e);
		goto unlock;
	}
	e->id = cgroup_id(cg);
	RCU_INIT_POINTER(e->policy, p);
	p = NULL;
	hash_add_rcu(cgp_hash, &e->node, e->id);
	cgp_nr++;
	cgp_changed();
	ret = 0;
unlock:
	mutex_unlock(&cgp_lock);
	cgroup_put(cg);
out_free:
	kfree(p);
	return ret;
}

static ssize_t entries_write(struct file *file, struct kobject *kobj,
			     struct bin_attribute *attr, char *buf, loff_t off,
			     size_t count)
{
	char *line;
	int ret;

	/* One command per write(2), as it came. */
	if (off || !count || count > CGP_LINE_MAX)
		return -EINVAL;
	line = kmemdup_nul(buf, count, GFP_KERNEL);
	if (!line)
		return -ENOMEM;
	if (line[count - 1] == '\n')
		line[count - 1] = '\0';
	ret = -EINVAL;
	if (*line) {
		/* As every knob write: none once unloading began. */
		mutex_lock(&mmtune_knob_lock);
		ret = mmtune_is_unloading() ? -ENODEV : cgp_command(line);
		mutex_unlock(&mmtune_knob_lock);
	}
	kfree(line);
	return ret ? ret : count;
}

/* A snapshot of the table for a read: the path and data of each entry. */
struct cgp_row {
	char *path;
	struct cgp_entry *e;
};

static int cgp_row_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cgp_row *)a)->path,
		      ((const struct cgp_row *)b)->path);
}

typedef int (*cgp_emit_fn)(char *buf, size_t size, struct cgp_entry *e);

static int cgp_emit_policy(char *buf, size_t size, struct cgp_entry *e)
{
	const struct cgp_policy *p = rcu_dereference_protected(e->policy, true);
	unsigned long orders = p->orders;
	int len = 0, first = 1;
	unsigned int o;

	if (p->orders_set) {
		len += scnprintf(buf + len, size - len, " orders=%s",
				 !orders ? "none" : orders == ~0UL ? "all" : "");
		if (orders == ~0UL)
			orders = 0;
		for_each_set_bit(o, &orders, MMTUNE_NR_ORDERS) {
			len += scnprintf(buf + len, size - len, "%s%lukB",
					 first ? "" : ",", (PAGE_SIZE << o) / SZ_1K);
			first = 0;
		}
	}
	for (o = 0; o < MMTUNE_NR_ORDERS; o++)
		if (p->thp_swap[o])
			len += scnprintf(buf + len, size - len, " thp_swap_%lukB=%s",
					 (PAGE_SIZE << o) / SZ_1K,
					 thp_size_policy_names[p->thp_swap[o]]);
	for (o = 0; o < MMTUNE_NR_ORDERS; o++)
		if (p->zswap[o] >= 0)
			len += scnprintf(buf + len, size - len, " zswap_large_%lukB=%d",
					 (PAGE_SIZE << o) / SZ_1K, p->zswap[o]);
	return len;
}

static int cgp_emit_stats(char *buf, size_t size, struct cgp_entry *e)
{
	unsigned long n;
	unsigned int c, o;
	int len = 0, cpu;

	for (c = 0; c < NR_CGP_COUNTERS; c++)
		for (o = 0; o < MMTUNE_NR_ORDERS; o++) {
			n = 0;
			for_each_possible_cpu(cpu)
				n += per_cpu_ptr(e->stats, cpu)->n[c][o];
			if (n)
				len += scnprintf(buf + len, size - len, " %s_%lukB=%lu",
						 cgp_counter_names[c],
						 (PAGE_SIZE << o) / SZ_1K, n);
		}
	return len;
}

/*
 * The whole table as text, one line per entry sorted by path (as the
 * reader's cgroup namespace names it), each line's tail from @emit.
 * Returns a kvmalloc'ed buffer and its length in *@len.
 */
static char *cgp_render(cgp_emit_fn emit, size_t *len)
{
	/* A path, its keys or counters (at most 48 bytes each), a newline. */
	const size_t line_max = PATH_MAX + 48 * NR_CGP_COUNTERS * MMTUNE_NR_ORDERS;
	struct cgp_row *rows;
	struct cgp_entry *e;
	struct cgroup *cg;
	size_t size, pos = 0;
	unsigned int n = 0, b, i;
	char *text = NULL;

	mutex_lock(&cgp_lock);
	cgp_prune();
	rows = kvcalloc(cgp_nr + 1, sizeof(*rows), GFP_KERNEL);
	size = (size_t)(cgp_nr + 1) * line_max;
	text = rows ? kvmalloc(size, GFP_KERNEL) : NULL;
	if (!text)
		goto out;
	hash_for_each(cgp_hash, b, e, node) {
		cg = cgp_cgroup(e);
		if (!cg)
			continue;
		rows[n].path = kmalloc(PATH_MAX, GFP_KERNEL);
		if (rows[n].path &&
		    cgroup_path_ns(cg, rows[n].path, PATH_MAX,
				   current->nsproxy->cgroup_ns) >= 0) {
			rows[n].e = e;
			n++;
		} else {
			kfree(rows[n].path);
		}
		cgroup_put(cg);
	}
	sort(rows, n, sizeof(*rows), cgp_row_cmp, NULL);
	for (i = 0; i < n; i++) {
		pos += scnprintf(text + pos, size - pos, "%s", rows[i].path);
		pos += emit(text + pos, size - pos, rows[i].e);
		pos += scnprintf(text + pos, size - pos, "\n");
	}
out:
	mutex_unlock(&cgp_lock);
	for (i = 0; i < n; i++)
		kfree(rows[i].path);
	kvfree(rows);
	*len = pos;
	return text;
}

static ssize_t cgp_read(char *buf, loff_t off, size_t count, cgp_emit_fn emit)
{
	size_t len;
	char *text = cgp_render(emit, &len);

	if (!text)
		return -ENOMEM;
	if (off >= len) {
		count = 0;
	} else {
		count = min_t(size_t, count, len - off);
		memcpy(buf, text + off, count);
	}
	kvfree(text);
	return count;
}

static ssize_t entries_read(struct file *file, struct kobject *kobj,
			    struct bin_attribute *attr, char *buf, loff_t off,
			    size_t count)
{
	return cgp_read(buf, off, count, cgp_emit_policy);
}

static ssize_t stats_read(struct file *file, struct kobject *kobj,
			  struct bin_attribute *attr, char *buf, loff_t off,
			  size_t count)
{
	return cgp_read(buf, off, count, cgp_emit_stats);
}

static BIN_ATTR(entries, 0644, entries_read, entries_write, 0);
static BIN_ATTR_RO(stats, 0);

static ssize_t max_entries_show(struct kobject *kobj,
				struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", CGP_MAX_ENTRIES);
}

static ssize_t nr_entries_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	unsigned int n;

	mutex_lock(&cgp_lock);
	cgp_prune();
	n = cgp_nr;
	mutex_unlock(&cgp_lock);
	return sysfs_emit(buf, "%u\n", n);
}

static ssize_t sizes_show(struct kobject *kobj, struct kobj_attribute *attr,
			  char *buf)
{
	unsigned long orders = CGP_ORDERS;
	unsigned int o;
	int len = 0;

	for_each_set_bit(o, &orders, MMTUNE_NR_ORDERS)
		len += sysfs_emit_at(buf, len, "%s%lukB", len ? " " : "",
				     (PAGE_SIZE << o) / SZ_1K);
	return len + sysfs_emit_at(buf, len, "\n");
}

static MMTUNE_ATTR_RO(max_entries);
static MMTUNE_ATTR_RO(nr_entries);
static MMTUNE_ATTR_RO(sizes);

static struct attribute *cgroup_policy_attrs[] = {
	MMTUNE_ATTR(max_entries),
	MMTUNE_ATTR(nr_entries),
	MMTUNE_ATTR(sizes),
	NULL,
};

static struct bin_attribute *cgroup_policy_bin_attrs[] = {
	&bin_attr_entries,
	&bin_attr_stats,
	NULL,
};

#define STAT(field) MMTUNE_COUNTER(cgroup_policy_stats, field)
static const struct mmtune_counter cgroup_policy_counters[] = {
	STAT(faults_narrowed), STAT(entries_pruned),
	{}
};
#undef STAT

/* At unload: the hooks are off for good, no reader is left. */
static void cgroup_policy_exit(void)
{
	struct hlist_node *tmp;
	struct cgp_entry *e;
	unsigned int b;

	mutex_lock(&cgp_lock);
	hash_for_each_safe(cgp_hash, b, tmp, e, node)
		cgp_remove(e);
	mutex_unlock(&cgp_lock);
	/* The entries' callbacks run in this module's text. */
	rcu_barrier();
}

MMTUNE_DEFINE_FEATURE(cgroup_policy, CGROUP_POLICY,
		      .bin_attrs = cgroup_policy_bin_attrs,
		      .exit = cgroup_policy_exit);

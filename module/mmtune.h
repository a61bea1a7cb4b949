/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared declarations of the mmtune module: the feature descriptor, the knob
 * and counter attributes every feature's sysfs directory is made of, and the
 * list of features (main.c).
 *
 * A feature is one file, <name>.c, that defines one descriptor <name>_feature
 * whose name is the kernel's feature group (mmtune_feature_name()), its
 * sysfs directory /sys/kernel/mm/mmtune/<name>/, and the prefix of its
 * functions. sysfs.c gives every feature the same switch, "enabled".
 */
#ifndef _MMTUNE_H
#define _MMTUNE_H

#include <linux/highmem.h>
#include <linux/kobject.h>
#include <linux/mmtune_hooks.h>
#include <linux/sysfs.h>

#include "compat.h"

struct mmtune_desc {
	/* The kernel's group name: sysfs directory, file and prefix. */
	const char *name;
	enum mmtune_feature id;
	/* This group's hooks; members of other groups are ignored. */
	const struct mmtune_ops *hooks;
	/* Knobs and other files, NULL-terminated; "enabled" is added. */
	struct attribute **attrs;
	/* Files that may be longer than a page (tables), NULL-terminated. */
	struct bin_attribute **bin_attrs;
	/* Its counters: one read-only file each, see MMTUNE_COUNTER(). */
	const struct mmtune_counter *counters;
	const void __percpu *counter_base;
	/* At load, before the directory exists; the feature is off. */
	int (*init)(void);
	/* At unload, after the hooks are off for good. */
	void (*exit)(void);
	/* Before the hooks go on; an error keeps the feature off. */
	int (*enable)(void);
	/* After the hooks went off and no CPU is inside one any more. */
	void (*disable)(void);
};

/*
 * The fields every descriptor has, from the one name: group FEAT (its
 * enum MMTUNE_<ID>), with FEAT_hooks, FEAT_attrs, FEAT_counters and the
 * per-CPU FEAT_stats defined in FEAT.c.
 */
#define MMTUNE_DESC(feat, ID)						\
	.name = #feat, .id = MMTUNE_##ID, .hooks = &feat##_hooks,	\
	.attrs = feat##_attrs, .counters = feat##_counters,		\
	.counter_base = &feat##_stats

/*
 * FEAT_hooks, the hooks of group FEAT: its members of struct mmtune_ops.
 * FEAT_feature, its descriptor (see MMTUNE_DESC), with further fields.
 *
 *	static MMTUNE_HOOKS(foo, .foo_hook = foo_hook);
 *	...
 *	MMTUNE_DEFINE_FEATURE(foo, FOO, .enable = foo_enable);
 */
#define MMTUNE_HOOKS(feat, ...)						\
	const struct mmtune_ops feat##_hooks = { __VA_ARGS__ }
#define MMTUNE_DEFINE_FEATURE(feat, ID, ...)				\
	const struct mmtune_desc feat##_feature = {			\
		MMTUNE_DESC(feat, ID), __VA_ARGS__			\
	}

/* The one ops this module registers (main.c). */
extern struct mmtune_ops mmtune_ops;

bool mmtune_feature_is_on(enum mmtune_feature id);
/* This kernel's hook table has hooks of the group: its line offers it. */
bool mmtune_feature_offered(enum mmtune_feature id);
/* Called with mmtune_knob_lock held. */
bool mmtune_is_unloading(void);
/* Called with mmtune_knob_lock held; sleeps. */
int mmtune_feature_switch(const struct mmtune_desc *f, bool on);
extern const struct mmtune_desc *const mmtune_impl[];
extern const unsigned int mmtune_nr_impl;

int mmtune_sysfs_init(void);
void mmtune_sysfs_exit(void);

/*
 * Serialises every knob write and feature switch, so that a knob's set()
 * can check the other knobs of its feature without a lock of its own. The
 * hooks never take it.
 */
extern struct mutex mmtune_knob_lock;

/*
 * A knob: one u32 in sysfs. bool reads and writes 0 or 1; u32
 * takes a decimal in [min, max]; choice takes one of @choices (the index
 * is stored) and shows every choice with the current one in brackets, as
 * the kernel's THP files do. An out-of-range or unparsable write fails with
 * -EINVAL and keeps the old value. @set, if any, is called with
 * mmtune_knob_lock held and the old value still in place: it can refuse
 * the value (cross-knob rules) or apply it (resize, recompute); the value is
 * stored only if it returns 0.
 *
 * A per-size knob (MMTUNE_KNOB_ORDER_*) tunes the large folios of one
 * order, and is named after their size as the kernel's
 * hugepages-<size>kB directories are. Its file exists only on kernel lines
 * with large folios of several sizes (MMTUNE_SIZE_ORDERS, compat.h); where
 * it does not, its value stays the default.
 */
enum mmtune_knob_type {
	MMTUNE_KNOB_BOOL,
	MMTUNE_KNOB_U32,
	MMTUNE_KNOB_CHOICE,
};

struct mmtune_knob {
	struct kobj_attribute kattr;
	enum mmtune_knob_type type;
	u32 *val;
	u32 min, max;
	const char * const *choices;
	int (*set)(u32 val);
	/* The folio order of a per-size knob; -1 for every other knob. */
	int order;
};

ssize_t mmtune_knob_show(struct kobject *kobj, struct kobj_attribute *attr,
			 char *buf);
ssize_t mmtune_knob_store(struct kobject *kobj, struct kobj_attribute *attr,
			  const char *buf, size_t count);

#define __MMTUNE_KNOB(_name, _type, _var, _min, _max, _choices, _set,	\
		      _order)						\
	struct mmtune_knob _name##_knob = {				\
		.kattr = __ATTR(_name, 0644, mmtune_knob_show,		\
				mmtune_knob_store),			\
		.type = _type, .val = &(_var), .min = _min, .max = _max, \
		.choices = _choices, .set = _set, .order = _order,	\
	}
#define MMTUNE_KNOB_BOOL(_name, _var, _set)				\
	__MMTUNE_KNOB(_name, MMTUNE_KNOB_BOOL, _var, 0, 1, NULL, _set, -1)
#define MMTUNE_KNOB_U32(_name, _var, _min, _max, _set)			\
	__MMTUNE_KNOB(_name, MMTUNE_KNOB_U32, _var, _min, _max, NULL, _set, -1)
#define MMTUNE_KNOB_CHOICE(_name, _var, _choices, _set)		\
	__MMTUNE_KNOB(_name, MMTUNE_KNOB_CHOICE, _var, 0,		\
		      ARRAY_SIZE(_choices) - 2, _choices, _set, -1)
/* Per size: @_array[@_order] is the knob of the folios of that order. */
#define MMTUNE_KNOB_ORDER_BOOL(_name, _array, _order)			\
	__MMTUNE_KNOB(_name, MMTUNE_KNOB_BOOL, (_array)[_order], 0, 1,	\
		      NULL, NULL, _order)
#define MMTUNE_KNOB_ORDER_CHOICE(_name, _array, _order, _choices)	\
	__MMTUNE_KNOB(_name, MMTUNE_KNOB_CHOICE, (_array)[_order], 0,	\
		      ARRAY_SIZE(_choices) - 2, _choices, NULL, _order)

/*
 * A feature's counters, as data: a per-CPU struct of unsigned longs (so that
 * hot paths share no cache line), bumped with this_cpu_inc()/_add(), and a
 * {}-terminated table naming its fields. sysfs.c makes one read-only file
 * per entry, showing the sum over every possible CPU.
 *
 *	struct foo_stats { unsigned long hits, misses; };
 *	static DEFINE_PER_CPU(struct foo_stats, foo_stats);
 *	static const struct mmtune_counter foo_counters[] = {
 *		MMTUNE_COUNTER(foo_stats, hits), MMTUNE_COUNTER(foo_stats, misses),
 *		{}
 *	};
 *	... .counters = foo_counters, .counter_base = &foo_stats,
 */
struct mmtune_counter {
	const char *name;
	size_t offset;
};

#define MMTUNE_COUNTER(stats, field)					\
	{ #field, offsetof(struct stats, field) }

unsigned long mmtune_counter_sum(const void __percpu *base, size_t offset);
/* The sum of one field of a per-CPU stats struct, for derived files. */
#define MMTUNE_COUNTER_SUM(stats, field)				\
	mmtune_counter_sum(&(stats), offsetof(typeof(stats), field))

/* An entry of a feature's attrs[]. */
#define MMTUNE_KNOB_ATTR(_name)		(&_name##_knob.kattr.attr)

/* A read-only file of a feature, shown by _name_show(), and its entry. */
#define MMTUNE_ATTR_RO(_name)						\
	struct kobj_attribute _name##_attr = __ATTR_RO(_name)
#define MMTUNE_ATTR(_name)		(&_name##_attr.attr)

/* A page holds nothing but zero bytes. Never call it for a poisoned one. */
static inline bool mmtune_page_is_zero(struct page *page)
{
	void *addr = kmap_local_page(page);
	bool zero = !memchr_inv(addr, 0, PAGE_SIZE);

	kunmap_local(addr);
	return zero;
}

/* The features; main.c lists them. */
extern const struct mmtune_desc swap_slots_feature;
extern const struct mmtune_desc thp_swap_feature;
extern const struct mmtune_desc split_zero_feature;
extern const struct mmtune_desc zswap_large_feature;
extern const struct mmtune_desc pcp_high_feature;
extern const struct mmtune_desc cgroup_policy_feature;

#endif /* _MMTUNE_H */

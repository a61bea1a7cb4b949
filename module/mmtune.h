/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared declarations of the mmtune module: the feature table and the
 * /sys/kernel/mm/mmtune/ root.
 */
#ifndef _MMTUNE_H
#define _MMTUNE_H

#include <linux/kobject.h>
#include <linux/mmtune_hooks.h>

/*
 * One entry per kernel feature group. A feature file of this module fills in
 * its entry; entries left without init are reported as "unavailable".
 */
struct mmtune_feature_impl {
	/* Set up knobs under @parent; called once at load, feature off. */
	int (*init)(struct kobject *parent);
	/* Undo init; called at unload after the feature's hooks are off. */
	void (*exit)(void);
};

extern struct mmtune_feature_impl mmtune_features[NR_MMTUNE_FEATURES];
extern const struct mmtune_ops mmtune_ops;

bool mmtune_feature_is_on(enum mmtune_feature feature);
int mmtune_feature_switch(enum mmtune_feature feature, bool on);

int mmtune_sysfs_init(void);
void mmtune_sysfs_exit(void);
extern struct kobject *mmtune_kobj;

/* A read-only sysfs file showing one atomic_long_t counter. */
struct mmtune_counter_attr {
	struct kobj_attribute kattr;
	atomic_long_t *counter;
};

ssize_t mmtune_counter_show(struct kobject *kobj, struct kobj_attribute *attr,
			    char *buf);

#define MMTUNE_COUNTER_ATTR(_name, _counter)				\
	struct mmtune_counter_attr _name##_attr = {			\
		.kattr = __ATTR(_name, 0444, mmtune_counter_show, NULL),	\
		.counter = &(_counter),					\
	}

/*
 * A read-only sysfs file showing a per-CPU unsigned long counter, summed
 * over every possible CPU: for counters bumped on hot paths, where one
 * shared atomic would bounce between CPUs.
 */
struct mmtune_percpu_counter_attr {
	struct kobj_attribute kattr;
	unsigned long __percpu *counter;
};

ssize_t mmtune_percpu_counter_show(struct kobject *kobj,
				   struct kobj_attribute *attr, char *buf);

#define MMTUNE_PERCPU_COUNTER_ATTR(_name, _counter)			\
	struct mmtune_percpu_counter_attr _name##_attr = {		\
		.kattr = __ATTR(_name, 0444, mmtune_percpu_counter_show, NULL), \
		.counter = &(_counter),					\
	}

/* Feature files: zswap.c */
int mmtune_zswap_init(struct kobject *parent);
void mmtune_zswap_exit(void);
int mmtune_zswap_store_whole(struct folio *folio);

/* Feature files: swap_slots.c */
int mmtune_swap_slots_init(struct kobject *parent);
void mmtune_swap_slots_exit(void);
int mmtune_slots_alloc(swp_entry_t *entry);
int mmtune_slots_free(swp_entry_t entry);
void mmtune_slots_drain(void);

/* Feature files: thp_swap.c (groups thp_swap and split_zero) */
int mmtune_thp_swap_init(struct kobject *parent);
void mmtune_thp_swap_exit(void);
int mmtune_split_zero_init(struct kobject *parent);
void mmtune_split_zero_exit(void);
int thp_swap_split_hook(struct folio *folio);
int split_zero_mark_hook(struct page *page, unsigned int nr,
			 enum mmtune_split_reason reason, unsigned long *zero);
void split_zero_done_hook(enum mmtune_split_reason reason,
			  unsigned int ptes, unsigned int unmapped);

/* Feature files: pcp.c */
struct per_cpu_pages;
struct zone;
int mmtune_pcp_init(struct kobject *parent);
void mmtune_pcp_exit(void);
int mmtune_pcp_hook_free(struct zone *zone, struct per_cpu_pages *pcp,
			 unsigned int order);
int mmtune_pcp_hook_refill(struct zone *zone, struct per_cpu_pages *pcp,
			   unsigned int order);
int mmtune_pcp_hook_decay(struct zone *zone, struct per_cpu_pages *pcp);

#endif /* _MMTUNE_H */

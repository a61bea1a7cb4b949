/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup_policy's interface to the features whose decisions it overrides
 * per memory cgroup (thp_swap, zswap_large). Without the feature (a
 * kernel line or config that does not build it) every lookup finds no
 * entry, and the callers keep their global settings.
 */
#ifndef _MMTUNE_CGROUP_POLICY_H
#define _MMTUNE_CGROUP_POLICY_H

struct folio;
struct cgp_entry;

/* Per-entry counters, per folio order (cgroup_policy/stats). */
enum cgp_counter {
	CGP_FAULT_NARROWED,
	CGP_THP_WHOLE,
	CGP_THP_SPLIT,
	CGP_ZSWAP_STORED,
	CGP_ZSWAP_REFUSED,
	NR_CGP_COUNTERS
};

#ifdef MMTUNE_BUILD_CGROUP_POLICY
/*
 * The entry that covers @folio's memory cgroup (its own, or its nearest
 * ancestor's), NULL if none or the feature is off. Call and use the
 * result inside rcu_read_lock().
 */
struct cgp_entry *cgroup_policy_of_folio(struct folio *folio);
/* thp_swap_<size>: an enum thp_size_policy, THP_SIZE_INHERIT if unset. */
unsigned int cgroup_policy_thp_swap(const struct cgp_entry *e,
				    unsigned int order);
/* zswap_large_<size>: 0 or 1, or -1 if unset. */
int cgroup_policy_zswap(const struct cgp_entry *e, unsigned int order);
void cgroup_policy_count(struct cgp_entry *e, enum cgp_counter c,
			 unsigned int order);
#else
static inline struct cgp_entry *cgroup_policy_of_folio(struct folio *folio)
{
	return NULL;
}

static inline unsigned int cgroup_policy_thp_swap(const struct cgp_entry *e,
						  unsigned int order)
{
	return 0;
}

static inline int cgroup_policy_zswap(const struct cgp_entry *e,
				      unsigned int order)
{
	return -1;
}

static inline void cgroup_policy_count(struct cgp_entry *e,
				       enum cgp_counter c, unsigned int order)
{
}
#endif

#endif /* _MMTUNE_CGROUP_POLICY_H */

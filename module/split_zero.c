// SPDX-License-Identifier: GPL-2.0
/*
 * Zero subpages dropped on THP split (feature group split_zero).
 *
 * Behind the kernel's split_zero_scan hook, the module decides whether a
 * THP being split is looked at; the kernel then reads each subpage once,
 * maps the shared zero page instead of the all-zero ones and frees them,
 * so reclaim does not write them to swap and migration does not copy
 * them. mode "reclaim-only" looks at splits done by reclaim, "always" at
 * every split (reclaim, migration, others). On a swap device with THP
 * clusters reclaim only splits when the thp_swap feature asks it to.
 *
 * Knobs and counters: /sys/kernel/mm/mmtune/split_zero/, documented in
 * sysfs-docs/sysfs-kernel-mm-mmtune-split_zero.
 */
#include <linux/mm.h>
#include <linux/page-flags.h>
#include <linux/string.h>

#include "mmtune.h"
#include "thp_policy.h"

static u32 mode = SPLIT_ZERO_RECLAIM_ONLY;

struct split_zero_stats {
	unsigned long splits_scanned, subpages_scanned, subpages_zero,
		      zero_ptes_mapped, subpages_dropped;
};
static DEFINE_PER_CPU(struct split_zero_stats, split_zero_stats);
/* Of subpages_dropped, those of reclaim: bytes_not_written. */
static atomic_long_t dropped_by_reclaim;

/*
 * The split_zero_scan hook. Context: __split_huge_page(), anon_vma locked
 * for write, every subpage locked and unmapped; SRCU read section.
 */
static int split_zero_scan(enum mmtune_split_reason reason, unsigned int nr)
{
	return split_zero_wanted(READ_ONCE(mode),
				 reason == MMTUNE_SPLIT_RECLAIM);
}

/* The split_zero_done hook: same context as split_zero_scan. */
static void split_zero_done(enum mmtune_split_reason reason,
			    unsigned int scanned, unsigned int zero,
			    unsigned int ptes, unsigned int unmapped)
{
	this_cpu_inc(split_zero_stats.splits_scanned);
	this_cpu_add(split_zero_stats.subpages_scanned, scanned);
	this_cpu_add(split_zero_stats.subpages_zero, zero);
	this_cpu_add(split_zero_stats.zero_ptes_mapped, ptes);
	this_cpu_add(split_zero_stats.subpages_dropped, unmapped);
	/* Reclaim frees these instead of writing them to swap. */
	if (reason == MMTUNE_SPLIT_RECLAIM)
		atomic_long_add(unmapped, &dropped_by_reclaim);
}

static MMTUNE_HOOKS(split_zero,
		     .split_zero_scan = split_zero_scan,
		     .split_zero_done = split_zero_done);

static MMTUNE_KNOB_CHOICE(mode, mode, split_zero_mode_names, NULL);

/* Zero subpages that reclaim freed instead of writing, in bytes. */
static ssize_t bytes_not_written_show(struct kobject *kobj,
				      struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lu\n",
			  (unsigned long)atomic_long_read(&dropped_by_reclaim) *
			  PAGE_SIZE);
}
static MMTUNE_ATTR_RO(bytes_not_written);

#define STAT(field) MMTUNE_COUNTER(split_zero_stats, field)
static const struct mmtune_counter split_zero_counters[] = {
	STAT(splits_scanned), STAT(subpages_scanned), STAT(subpages_zero),
	STAT(zero_ptes_mapped), STAT(subpages_dropped),
	{}
};
#undef STAT

static struct attribute *split_zero_attrs[] = {
	MMTUNE_KNOB_ATTR(mode),
	MMTUNE_ATTR(bytes_not_written),
	NULL,
};

MMTUNE_DEFINE_FEATURE(split_zero, SPLIT_ZERO);

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PCP high auto-tuning policy: pure integer code, built into the module and,
 * unchanged, into the userspace unit tests (tests/unit/test_pcp_policy.c).
 *
 * The glue (pcp.c) copies a pageset into struct pcpp_state under pcp->lock,
 * runs one of these functions and copies the tuner fields back. The kernel
 * clamps high into [high_min, high_max] afterwards; the policy keeps it
 * there too, so the unit tests can check it on its own.
 *
 * The rules follow upstream 6.7 (Huang Ying's PCP high auto-tuning series):
 * - refill: when the pageset runs empty and refills from the zone, raise
 *   high by the refill batch toward high_max, unless the zone is below its
 *   high watermark or under reclaim; refill batches grow by doubling
 *   (alloc_factor) while allocations continue without frees;
 * - free: frees grow free_count; a pageset that reaches high raises high
 *   enough to hold a scaled batch, then frees free_count pages, not a
 *   fixed batch; below the high watermark or under reclaim, high drops by
 *   free_count toward high_min;
 * - process exit: consecutive high-order frees no longer drain the whole
 *   pageset, only a scaled batch, and lower high by as much;
 * - decay: about once a second, high drops by decay_percent toward
 *   high_min, and never stays more than a scaled batch above count.
 */
#ifndef _MMTUNE_PCP_POLICY_H
#define _MMTUNE_PCP_POLICY_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdbool.h>
#include <stddef.h>
#endif

/* Orders up to this one are cached per order on the pageset (stock: 3). */
#define PCPP_COSTLY_ORDER		3

/* pcpp_state.flags */
#define PCPP_PREV_FREE_HIGH_ORDER	0x01	/* last free was high-order */

/* Largest free_count; the kernel field is a short. */
#define PCPP_FREE_COUNT_MAX		32767

struct pcpp_state {
	/* Read only for the policy. */
	int count;		/* pages on the pageset */
	int high_min;		/* bounds set by the kernel */
	int high_max;
	int batch;		/* zone batch */
	bool below_high;	/* zone free pages < high watermark */
	bool reclaim_active;	/* kswapd may be scanning the zone */
	/* Read and written. */
	int high;
	int free_count;		/* pages freed since the last allocation */
	unsigned int alloc_factor;
	unsigned int flags;
};

struct pcpp_params {
	unsigned int scale_max;		/* CONFIG_PCP_BATCH_SCALE_MAX */
	unsigned int decay_percent;	/* 1..100 */
};

/* What a call did, for the counters. */
struct pcpp_events {
	unsigned int raised;	/* high went up */
	unsigned int lowered;	/* high went down on free (pressure, exit) */
	unsigned int decayed;	/* high went down by decay */
	unsigned int free_high;	/* partial drain of a high-order free streak */
};

/* A page of @order was added (count includes it): pages to free now. */
int pcpp_free(struct pcpp_state *st, unsigned int order,
	      const struct pcpp_params *p, struct pcpp_events *ev);

/* The list of @order is empty: blocks of @order to take from the zone. */
int pcpp_refill(struct pcpp_state *st, unsigned int order,
		const struct pcpp_params *p, struct pcpp_events *ev);

/* Periodic decay of high toward high_min: non-zero while more is wanted. */
int pcpp_decay(struct pcpp_state *st, const struct pcpp_params *p,
	       struct pcpp_events *ev);

/*
 * Stock 6.1, for counting with the tuner off: would this free drain the
 * pageset? (free_factor is the stock field; nothing is changed.)
 */
bool pcpp_stock_free_drains(const struct pcpp_state *st, unsigned int order,
			    int free_factor);

/* Stock 6.1 refill batch, in blocks of @order. */
int pcpp_stock_refill(const struct pcpp_state *st, unsigned int order);

/* Clamp high into [high_min, high_max] (high_max wins if they cross). */
int pcpp_clamp_high(int high, int high_min, int high_max);

#endif /* _MMTUNE_PCP_POLICY_H */

// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: a pcp_high tuner that is as greedy as a buggy module
 * could be. It registers instead of mmtune.ko, widens the bounds of pcp
 * high to the largest the kernel allows, raises every pageset's high to
 * that bound, asks for the largest refill and never frees. The kernel must
 * still hold a pageset to four batches while kswapd may scan its zone
 * (ZONE_RECLAIM_ACTIVE), as stock nr_pcp_high() does.
 *
 * What it saw, in /sys/module/pcp_greedy/parameters/ (read-only):
 *   reclaim_samples  frees seen with reclaim active for at least
 *                    STREAK calls in a row on that CPU and zone (by then
 *                    the kernel has freed what was above the cap before
 *                    reclaim began: each free returns up to 32 batches)
 *   reclaim_over     of those, the frees that found the pageset more than
 *                    OVER pages above 4 * batch
 *   reclaim_excess   the most pages such a pageset held above 4 * batch
 *                    before the free (0 if never above)
 * kswapd clears ZONE_RECLAIM_ACTIVE between its runs: meanwhile no cap
 * applies, and frees the kernel handles without calling the hook can fill
 * a pageset again, unseen here. The next frees under reclaim then find it
 * above the cap until the kernel brought it down, so reclaim_over counts a
 * few such frees even when the kernel enforces the cap; a kernel that does
 * not enforce it leaves nearly every free above.
 */
#include <linux/mmzone.h>
#include <linux/percpu.h>
#include "mmtune_test.h"

#define STREAK	64
/* Two blocks of order PAGE_ALLOC_COSTLY_ORDER: a refill at the cap. */
#define OVER	(2 << PAGE_ALLOC_COSTLY_ORDER)

static ulong reclaim_samples;
module_param(reclaim_samples, ulong, 0444);
static ulong reclaim_over;
module_param(reclaim_over, ulong, 0444);
static int reclaim_excess;
module_param(reclaim_excess, int, 0444);

/* Hook calls in a row that saw reclaim active, per CPU and zone. */
static DEFINE_PER_CPU(unsigned int [MAX_NR_ZONES], streak);

/* A refill or decay without reclaim may raise the pageset: start over. */
static void greedy_note(struct zone *zone)
{
	if (!test_bit(ZONE_RECLAIM_ACTIVE, &zone->flags))
		this_cpu_write(streak[zone_idx(zone)], 0);
}

static void greedy_raise(struct per_cpu_pages *pcp)
{
	WRITE_ONCE(pcp->high, READ_ONCE(pcp->high_max));
}

static int greedy_free(struct zone *zone, struct per_cpu_pages *pcp,
		       unsigned int order)
{
	unsigned int *s = this_cpu_ptr(&streak[zone_idx(zone)]);

	if (test_bit(ZONE_RECLAIM_ACTIVE, &zone->flags)) {
		if (++*s > STREAK) {
			int excess = pcp->count - (1 << order) -
				     (READ_ONCE(pcp->batch) << 2);

			WRITE_ONCE(reclaim_samples, reclaim_samples + 1);
			if (excess > OVER)
				WRITE_ONCE(reclaim_over, reclaim_over + 1);
			if (excess > READ_ONCE(reclaim_excess))
				WRITE_ONCE(reclaim_excess, excess);
		}
	} else {
		*s = 0;
	}
	greedy_raise(pcp);
	return 0;
}

static int greedy_refill(struct zone *zone, struct per_cpu_pages *pcp,
			 unsigned int order)
{
	greedy_note(zone);
	greedy_raise(pcp);
	return INT_MAX;
}

static int greedy_decay(struct zone *zone, struct per_cpu_pages *pcp)
{
	greedy_note(zone);
	greedy_raise(pcp);
	return 0;
}

static struct mmtune_ops greedy_ops = {
	.abi_version	= MMTUNE_ABI_VERSION,
	.ops_size	= sizeof(struct mmtune_ops),
	.owner		= THIS_MODULE,
	.pcp_free	= greedy_free,
	.pcp_refill	= greedy_refill,
	.pcp_decay	= greedy_decay,
};

static int __init pcp_greedy_init(void)
{
	int ret = mmtune_register(&greedy_ops);

	if (ret)
		return ret;
	/* high_min the static high, high_max 1/8 of each zone per CPU. */
	ret = mmtune_pcp_set_bounds(&greedy_ops, 0, 8);
	if (!ret)
		ret = mmtune_set_features(&greedy_ops, BIT(MMTUNE_PCP_HIGH));
	if (ret)
		mmtune_unregister(&greedy_ops);
	return ret;
}

MMTUNE_TEST_MODULE(pcp_greedy, greedy_ops,
		   "mmtune test: a pcp_high tuner that never frees (tests only)");

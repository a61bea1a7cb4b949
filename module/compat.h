/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernel lines mmtune.ko builds for (6.1 and
 * 6.12), besides the hooks. Which hooks a line has is its hook table's
 * business (<linux/mmtune_hook_defs.h>): Kbuild builds a feature only where
 * the table has rows of its group. The rest is here, in one place, so that
 * a feature file reads the same on every line.
 */
#ifndef _MMTUNE_COMPAT_H
#define _MMTUNE_COMPAT_H

#include <linux/bits.h>
#include <linux/kconfig.h>
#include <linux/pgtable.h>
#include <linux/version.h>

/* Large folio orders 0 to PMD size: per-size knob arrays are this long. */
#define MMTUNE_NR_ORDERS	(PMD_SHIFT - PAGE_SHIFT + 1)

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 12, 0)
/*
 * 6.12 calls zswap directly (frontswap is gone since 6.5); the series
 * exports zswap's own per-page store and rollback.
 */
#include <linux/zswap.h>
#define mmtune_zswap_invalidate_folio(folio)	zswap_invalidate_folio(folio)
/* zswap can store a page that does not compress as it is (returns 1). */
#define MMTUNE_ZSWAP_RAW			1
/*
 * The kernel checks zswap's limits and takes what the folio's pages share
 * (objcg, pool) before it offers a large folio: the hook gets the verdict
 * (@refused) and the folio's store (@st), which each page's store passes
 * back. The two macros after it name its parameters: use them only in
 * a function declared with MMTUNE_ZSWAP_STORE_PROTO.
 */
#define MMTUNE_ZSWAP_STORE_PROTO		\
	struct folio *folio, int refused, struct zswap_large_store *st
#define MMTUNE_ZSWAP_REFUSED			refused
#define mmtune_zswap_store_subpage(index, raw_ok)	\
	zswap_store_subpage(st, index, raw_ok)
/*
 * Large swap-in of a range wholly in zswap: the zswap_load_large hook
 * (6.12 series patch 5) asks per folio order.
 */
#define MMTUNE_ZSWAP_LOAD			1

/*
 * 6.12 swaps out large folios of every order whole: anonymous mTHP of
 * orders 2 to PMD (hugepages-<size>kB), shmem folios of orders 1 to PMD.
 * The features that see them have a knob per size for these orders.
 */
#define MMTUNE_SIZE_ORDERS						\
	(IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE) ?			\
	 GENMASK(MMTUNE_NR_ORDERS - 1, 1) : 0)
#else
/* 6.1: the series extends frontswap, zswap's front end. */
#include <linux/frontswap.h>
#define mmtune_zswap_invalidate_folio(folio)	\
	frontswap_invalidate_folio(folio)
/* The limits are checked when the first subpage is stored. */
#define MMTUNE_ZSWAP_STORE_PROTO		struct folio *folio
#define MMTUNE_ZSWAP_REFUSED			0
#define mmtune_zswap_store_subpage(index, raw_ok)	\
	((void)(raw_ok), frontswap_store_subpage(folio, index))
/* zswap refuses a page that does not compress. */
#define MMTUNE_ZSWAP_RAW			0
/* Swap-in from zswap is order 0. */
#define MMTUNE_ZSWAP_LOAD			0

/*
 * 6.1 has PMD-sized THPs only: the feature-wide knobs are theirs, and no
 * per-size knob exists.
 */
#define MMTUNE_SIZE_ORDERS	0UL
#endif

/*
 * Both lines spell symbol namespaces as identifiers
 * (MODULE_IMPORT_NS(MMTUNE)); from 6.13 on they are string literals, which
 * would go here.
 */

#endif /* _MMTUNE_COMPAT_H */

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bytes the swap test programs write: distinct per page, per word and
 * per run (seed), so that a page read back from the wrong place shows.
 */
#ifndef MMTUNE_TEST_PATTERN_H
#define MMTUNE_TEST_PATTERN_H

#include <stdint.h>

#define PAGE_SZ		4096UL
#define THP_SZ		(2UL << 20)
#define WORDS_PER_PAGE	(PAGE_SZ / sizeof(uint64_t))

enum fill { FILL_RANDOM, FILL_COMPRESSIBLE };

static inline uint64_t random_word(uint64_t seed, uint64_t p, uint64_t w)
{
	return ((p + 1) * 0x9E3779B97F4A7C15ULL ^ seed) + w * 0xD1B54A32D192ED03ULL;
}

/*
 * FILL_RANDOM does not compress. FILL_COMPRESSIBLE keeps the first quarter
 * of each page and repeats its first 256 bytes over the rest, so that lz4
 * and zstd shrink a page to about a quarter, as they do ordinary anonymous
 * memory.
 */
static inline uint64_t pattern_word(enum fill fill, uint64_t seed, uint64_t p,
				    uint64_t w)
{
	if (fill == FILL_COMPRESSIBLE && w >= WORDS_PER_PAGE / 4)
		w %= WORDS_PER_PAGE / 16;
	return random_word(seed, p, w);
}

static inline void fill_page(uint64_t *pg, enum fill fill, uint64_t seed,
			     uint64_t p)
{
	for (uint64_t w = 0; w < WORDS_PER_PAGE; w++)
		pg[w] = pattern_word(fill, seed, p, w);
}

#endif

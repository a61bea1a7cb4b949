/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the guest test programs: exit codes, sizes, and the bytes the
 * swap tests write (distinct per page, per word and per run, so that a page
 * read back from the wrong place shows).
 */
#ifndef MMTUNE_TESTPROG_H
#define MMTUNE_TESTPROG_H

#include <stdint.h>

/* kselftest exit codes */
#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif

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

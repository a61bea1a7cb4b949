// SPDX-License-Identifier: GPL-2.0
/*
 * thp_churn: writers rewrite random subpages of THPs while another thread
 * splits (debugfs split_huge_pages), pages out (MADV_PAGEOUT) and collapses
 * (MADV_COLLAPSE) them, over and over.
 *
 *   thp_churn [--mib M] [--writers W] [--seconds S] [--stop-file F]
 *             [--min-rounds R] [--seed N]
 *
 * It runs for S seconds (30), or until file F exists, and in both cases
 * at least until the splitting thread finished --min-rounds rounds (4; at
 * most 10 x S seconds: under TCG on a busy host a round may take 10 s).
 * Subpage p belongs to writer p % W, so the writers share every THP. A
 * writer picks one of its subpages at random, checks that it still holds
 * what the writer last put there (a 64-bit checksum the writer keeps per
 * subpage), and rewrites it: a new pattern, or, one time in four, all
 * zeroes (which split_zero may then drop to the zero page). At the end the
 * main thread checks every subpage against the writers' checksums.
 *
 * Once a round the writers park while a THP just collapsed is paged out:
 * a writer faulting on it holds a reference, and reclaim keeps a folio
 * with an extra reference in the swap cache instead of writing it, so
 * with the writers running a whole THP was written in few rounds and in
 * some runs in none (zswap_large's subpages_stored +0 in thp_swap-split-churn).
 *
 * Prints "thp_churn: writes=... splits=... pageouts=... collapses=..." and
 * "thp_churn: PASS", or each mismatch. Exit status: 0 pass, 1 fail, 4 skip.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define TESTPROG "thp_churn"
#include "testprog.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif
#define NR_SUBPAGES	(THP_SZ / PAGE_SZ)
#define MAX_WRITERS	16

static struct {
	unsigned long mib;
	unsigned int writers;
	double seconds;
	uint64_t seed;
	const char *stop_file;
	unsigned long min_rounds;
} o = { .min_rounds = 4, .mib = 32, .writers = 2, .seconds = 30, .seed = 39 };

static char *region;
static size_t npages, nthps;
static uint64_t *sums;		/* per subpage, written by its writer only */
static volatile bool stop;
/* Parking: the churner raises park_gen; a writer acks it and waits. */
static volatile bool park;
static volatile uint64_t park_gen, parked_gen[MAX_WRITERS];
static uint64_t writes[MAX_WRITERS], mismatches[MAX_WRITERS];
static uint64_t splits, pageouts, collapses, collapse_fail;

/* xorshift64*, one state per thread. */
static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* FNV-1a over 64-bit words, position-mixed: a moved word changes it. */
static uint64_t checksum(const volatile uint64_t *pg)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (uint64_t w = 0; w < WORDS_PER_PAGE; w++)
		h = (h ^ (pg[w] + w)) * 0x100000001b3ULL;
	return h;
}

/* Write generation @gen (0: zeroes) to subpage @p; returns its checksum. */
static uint64_t write_page(size_t p, uint64_t gen)
{
	uint64_t *pg = (uint64_t *)(region + p * PAGE_SZ);

	if (!gen)
		memset(pg, 0, PAGE_SZ);
	else
		fill_page(pg, FILL_COMPRESSIBLE, o.seed ^ gen, p);
	return checksum(pg);
}

static void *writer(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg;
	size_t mine = (npages - id + o.writers - 1) / o.writers;
	uint64_t s = o.seed * 0x9E3779B97F4A7C15ULL + id + 1;

	while (!stop) {
		size_t p;
		uint64_t gen;

		if (park) {
			__atomic_store_n(&parked_gen[id], park_gen, __ATOMIC_RELEASE);
			while (park && !stop)
				usleep(1000);
			continue;
		}
		p = id + (next_rand(&s) % mine) * o.writers;
		gen = next_rand(&s);
		if (checksum((uint64_t *)(region + p * PAGE_SZ)) != sums[p]) {
			if (mismatches[id]++ < 4)
				msg("writer %u: subpage %zu (THP %zu) changed behind its back",
				    id, p, p / NR_SUBPAGES);
			/* Resynchronise, so that one bad page is reported once. */
		}
		sums[p] = write_page(p, gen % 4 ? gen : 0);
		writes[id]++;
	}
	return NULL;
}

static void split_all(int fd)
{
	char cmd[128];
	int len = snprintf(cmd, sizeof(cmd), "%d,0x%lx,0x%lx", getpid(),
			   (unsigned long)region, (unsigned long)(region + npages * PAGE_SZ));

	if (pwrite(fd, cmd, len, 0) != len)
		die(KSFT_FAIL, "split_huge_pages: %s", strerror(errno));
	splits++;
}

/* Until every writer is between two writes and stays there. */
static void park_writers(void)
{
	uint64_t gen = park_gen + 1;

	park_gen = gen;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	park = true;
	for (unsigned int i = 0; i < o.writers; i++)
		while (__atomic_load_n(&parked_gen[i], __ATOMIC_ACQUIRE) != gen && !stop)
			usleep(100);
}

static void unpark_writers(void)
{
	park = false;
}

/*
 * Split everything, page out a quarter of the THPs, collapse two back and
 * page each one out at once (the round's first that collapsed with the
 * writers parked), and every other round page out the whole region.
 * Collapses are slow under TCG (a few per run): a collapsed THP is paged
 * out while it is still whole, since the next split_all() would split it
 * before any other pageout sees it; that is what makes thp_swap decide and
 * zswap_large store a whole THP in every run.
 */
static void *churner(void *arg)
{
	uint64_t s = o.seed ^ 0xc0ffee;
	int fd = open("/sys/kernel/debug/split_huge_pages", O_WRONLY);

	(void)arg;
	if (fd < 0)
		die(KSFT_SKIP, "no /sys/kernel/debug/split_huge_pages: %s", strerror(errno));
	while (!stop) {
		bool parked = false;	/* this round */

		split_all(fd);
		for (size_t i = 0; i < (nthps + 3) / 4; i++) {
			size_t t = next_rand(&s) % nthps;

			if (madvise(region + t * THP_SZ, THP_SZ, MADV_PAGEOUT))
				die(KSFT_FAIL, "MADV_PAGEOUT: %s", strerror(errno));
			pageouts++;
		}
		for (size_t i = 0; i < 2; i++) {
			size_t t = next_rand(&s) % nthps;

			if (madvise(region + t * THP_SZ, THP_SZ, MADV_COLLAPSE)) {
				collapse_fail++;	/* EAGAIN, ENOMEM: try again later */
				continue;
			}
			collapses++;
			if (!parked)
				park_writers();
			if (madvise(region + t * THP_SZ, THP_SZ, MADV_PAGEOUT))
				die(KSFT_FAIL, "MADV_PAGEOUT: %s", strerror(errno));
			if (!parked) {
				unpark_writers();
				parked = true;
			}
			pageouts++;
		}
		if (splits % 2)
			continue;
		if (madvise(region, npages * PAGE_SZ, MADV_PAGEOUT))
			die(KSFT_FAIL, "MADV_PAGEOUT: %s", strerror(errno));
		pageouts++;
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	const struct testopt opts[] = {
		OPT("mib", &o.mib), OPT("writers", &o.writers),
		OPT("seconds", &o.seconds), OPT("seed", &o.seed),
		OPT("stop-file", &o.stop_file), OPT("min-rounds", &o.min_rounds),
	};
	pthread_t wt[MAX_WRITERS], ct;
	uint64_t total = 0, bad = 0, during = 0, zero_pages = 0;
	double t0;
	char *raw;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse_testopts(argc, argv, 1, opts, ARRAY_SIZE(opts)) < 0)
		die(KSFT_FAIL, "usage: thp_churn [--mib M] [--writers W] [--seconds S] [--stop-file F] [--min-rounds R] [--seed N]");
	if (!o.writers || o.writers > MAX_WRITERS || o.mib < 4 || o.mib % 2)
		die(KSFT_FAIL, "need 1-%d writers and an even --mib >= 4", MAX_WRITERS);
	npages = (o.mib << 20) / PAGE_SZ;
	nthps = npages / NR_SUBPAGES;
	sums = calloc(npages, sizeof(*sums));
	raw = mmap(NULL, (o.mib << 20) + THP_SZ, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!sums || raw == MAP_FAILED)
		die(KSFT_FAIL, "out of memory");
	region = (char *)(((uintptr_t)raw + THP_SZ - 1) & ~(THP_SZ - 1));
	if (madvise(region, o.mib << 20, MADV_HUGEPAGE))
		die(KSFT_FAIL, "MADV_HUGEPAGE: %s", strerror(errno));
	/* Start with every other subpage zero. */
	for (size_t p = 0; p < npages; p++)
		sums[p] = write_page(p, p % 2 ? p + 1 : 0);

	t0 = now();
	for (unsigned int i = 0; i < o.writers; i++)
		if (pthread_create(&wt[i], NULL, writer, (void *)(uintptr_t)i))
			die(KSFT_FAIL, "pthread_create");
	if (pthread_create(&ct, NULL, churner, NULL))
		die(KSFT_FAIL, "pthread_create");
	while ((now() - t0 < o.seconds && !(o.stop_file && !access(o.stop_file, F_OK))) ||
	       (__atomic_load_n(&splits, __ATOMIC_RELAXED) < o.min_rounds &&
		now() - t0 < 10 * o.seconds))
		usleep(100 * 1000);
	stop = true;
	pthread_join(ct, NULL);
	for (unsigned int i = 0; i < o.writers; i++) {
		pthread_join(wt[i], NULL);
		total += writes[i];
		during += mismatches[i];
	}

	for (size_t p = 0; p < npages; p++) {
		const uint64_t *pg = (uint64_t *)(region + p * PAGE_SZ);

		if (checksum(pg) != sums[p] && bad++ < 8)
			msg("end: subpage %zu (THP %zu) differs from its writer's checksum",
			    p, p / NR_SUBPAGES);
		zero_pages += pg[0] == 0 && !memcmp(pg, pg + 1, PAGE_SZ - 8);
	}
	msg("writes=%" PRIu64 " splits=%" PRIu64 " pageouts=%" PRIu64 " collapses=%" PRIu64
	    " collapse_failed=%" PRIu64 " zero_subpages=%" PRIu64 " secs=%.1f",
	    total, splits, pageouts, collapses, collapse_fail, zero_pages, now() - t0);
	if (bad || during) {
		msg("FAIL: %" PRIu64 " subpages differ at the end, %" PRIu64 " mismatches seen by the writers",
		    bad, during);
		return KSFT_FAIL;
	}
	msg("PASS: %zu subpages equal to their writers' checksums", npages);
	return KSFT_PASS;
}

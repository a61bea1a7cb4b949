// SPDX-License-Identifier: GPL-2.0
/*
 * zswap_stale: a THP stored in zswap whole, dirtied again while it is still
 * in the swap cache, then written to the swap device by the stock path,
 * must never read back the old data from zswap.
 *
 * The kernel reaches that state when a fault on a subpage waits for the
 * folio lock during the zswap store: reclaim then cannot free the folio,
 * which stays in the swap cache with that subpage mapped again. This
 * program provokes it (a thread keeps writing one tail subpage while the
 * THP is paged out), proves from /proc/self/pagemap and /proc/kpageflags
 * that it happened (retrying a bounded number of times), writes new bytes
 * to that subpage, lets the test script switch the feature off or unload
 * the module, has memcg reclaim write the whole folio out again, and reads
 * everything back.
 *
 *   zswap_stale --hold DIR [--subpage K] [--attempts N]
 *
 * Exit status: 0 pass, 1 fail (data differs), 4 skip (state not reached).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/stat.h>

#define TESTPROG "zswap_stale"
#include "testprog.h"

#define NR_SUBPAGES	(THP_SZ / PAGE_SZ)

#define PM_PRESENT	(1ULL << 63)
#define PM_SWAP		(1ULL << 62)
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define KPF_SWAPCACHE	13
#define KPF_THP		22

/* Generation A is the THP's first content, C what the racing thread
 * writes, B the final content of the subpage: all differ in every word. */
static inline uint64_t word(uint64_t gen, uint64_t page, uint64_t w)
{
	uint64_t v = (gen * 0x9E3779B97F4A7C15ULL) ^ ((page + 1) << 20);

	/* Compressible, so that zswap takes it: repeats after 32 words. */
	return v + (w % 32) * 0xD1B54A32D192ED03ULL;
}

static void fill_gen(uint64_t *pg, uint64_t gen, uint64_t page)
{
	for (uint64_t w = 0; w < WORDS_PER_PAGE; w++)
		pg[w] = word(gen, page, w);
}

static uint64_t read_u64_at(const char *path, uint64_t index)
{
	uint64_t v = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || pread(fd, &v, sizeof(v), index * sizeof(v)) != sizeof(v))
		v = 0;
	if (fd >= 0)
		close(fd);
	return v;
}

static uint64_t swap_cached_kib(void)
{
	return proc_kib("/proc/meminfo", "SwapCached");
}

static uint64_t pagemap(const void *addr)
{
	return read_u64_at("/proc/self/pagemap", (uintptr_t)addr / PAGE_SZ);
}

/* Subpage @k is mapped again and still part of a THP in the swap cache,
 * while subpage 0 is still swapped out. */
static bool in_swapcache_state(char *thp, unsigned int k)
{
	uint64_t pm = pagemap(thp + k * PAGE_SZ), flags;

	if (!(pm & PM_PRESENT) || !(pagemap(thp) & PM_SWAP))
		return false;
	flags = read_u64_at("/proc/kpageflags", pm & PM_PFN_MASK);
	return (flags & (1ULL << KPF_SWAPCACHE)) && (flags & (1ULL << KPF_THP));
}

struct racer {
	uint64_t *page;
	uint64_t page_no;
	long delay_us;
	volatile bool stop;
};

/*
 * Write the subpage once reclaim has unmapped it, @delay_us later. Too
 * early and the fault's folio reference makes pageout() keep the folio
 * without writing it; the fault must land while zswap stores the folio,
 * so that it waits for the folio lock and keeps reclaim from freeing it.
 */
static void *race_writes(void *arg)
{
	struct racer *r = arg;
	double until;

	while (!r->stop && (pagemap(r->page) & PM_PRESENT))
		;
	if (r->stop)
		return NULL;
	until = now() + r->delay_us / 1e6;
	while (now() < until)
		;
	fill_gen(r->page, 3, r->page_no);	/* generation C */
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned int k = 5, attempts = 64, attempt, tries;
	const char *hold = NULL;
	char cg[128], path[256], *thp = NULL;
	void *raw = NULL;
	uint64_t thp_before, zswp_before, bad = 0;
	bool reached = false;
	const struct testopt opts[] = {
		OPT("hold", &hold), OPT("subpage", &k), OPT("attempts", &attempts),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse_testopts(argc, argv, 1, opts, ARRAY_SIZE(opts)) < 0)
		return KSFT_FAIL;
	if (!hold || k == 0 || k >= NR_SUBPAGES) {
		fprintf(stderr, "usage: zswap_stale --hold DIR [--subpage 1..511] [--attempts N]\n");
		return KSFT_FAIL;
	}

	/* A memcg of our own, so that memory.reclaim picks our THP. */
	write_file("/sys/fs/cgroup/cgroup.subtree_control", "+memory");
	snprintf(cg, sizeof(cg), "/sys/fs/cgroup/zswap_stale.%d", getpid());
	mkdir(cg, 0755);
	snprintf(path, sizeof(path), "%s/cgroup.procs", cg);
	if (write_file(path, "0")) {	/* "0": the writing process */
		msg("cannot enter %s", cg);
		return KSFT_FAIL;
	}

	for (attempt = 1; attempt <= attempts && !reached; attempt++) {
		struct racer r;
		pthread_t t;

		if (raw)
			munmap(raw, 2 * THP_SZ);
		thp = mmap_thp_aligned(THP_SZ, &raw);
		if (!thp) {
			msg("mmap: %s", strerror(errno));
			return KSFT_FAIL;
		}
		madvise(thp, THP_SZ, MADV_HUGEPAGE);
		for (uint64_t p = 0; p < NR_SUBPAGES; p++)
			fill_gen((uint64_t *)(thp + p * PAGE_SZ), 1, p);	/* A */
		if (vma_anon_huge_kib(thp) < THP_SZ >> 10)
			continue;	/* no THP this time */

		r = (struct racer){ .page = (uint64_t *)(thp + k * PAGE_SZ),
				    .page_no = k,
				    .delay_us = (attempt % 16) * 150 };
		thp_before = vmstat("thp_swpout");
		zswp_before = vmstat("zswpout");
		pthread_create(&t, NULL, race_writes, &r);
		if (madvise(thp, THP_SZ, MADV_PAGEOUT)) {
			msg("MADV_PAGEOUT: %s", strerror(errno));
			return KSFT_FAIL;
		}
		/* Give a late racer time to fault before it is told to stop. */
		nanosleep(&(struct timespec){ 0, 50 * 1000 * 1000 }, NULL);
		r.stop = true;
		pthread_join(t, NULL);
		if (vmstat("thp_swpout") != thp_before)
			die(KSFT_FAIL, "attempt %u: the THP went to the disk, not to zswap whole",
			    attempt);
		if (vmstat("zswpout") - zswp_before < NR_SUBPAGES)
			continue;	/* the racer was early: nothing written */
		reached = in_swapcache_state(thp, k);
	}
	if (!reached)
		die(KSFT_SKIP, "the THP never stayed in the swap cache with subpage %u mapped again (%u attempts)",
		    k, attempts);
	msg("attempt %u: THP stored whole in zswap, still in the swap cache, subpage %u mapped again",
	    attempt - 1, k);

	/* New bytes for subpage k (generation B): the folio is dirty again. */
	fill_gen((uint64_t *)(thp + k * PAGE_SZ), 2, k);

	snprintf(path, sizeof(path), "%s/ready", hold);
	write_file(path, "1\n");
	snprintf(path, sizeof(path), "%s/go", hold);
	hold_until(path, 20);

	/* Reclaim the whole folio again, now by the stock path. */
	thp_before = vmstat("thp_swpout");
	snprintf(path, sizeof(path), "%s/memory.reclaim", cg);
	for (tries = 0; tries < 200 && (pagemap(thp + k * PAGE_SZ) & PM_PRESENT); tries++)
		write_file(path, "16M");
	if (pagemap(thp + k * PAGE_SZ) & PM_PRESENT)
		die(KSFT_SKIP, "memory.reclaim did not write the folio out again");
	if (vmstat("thp_swpout") == thp_before)
		die(KSFT_SKIP, "the folio was split before it was written again (thp_swpout did not rise)");
	msg("folio written to the swap device whole (thp_swpout +%" PRIu64 ") after %u memory.reclaim writes",
	    vmstat("thp_swpout") - thp_before, tries);
	/*
	 * Until the folio leaves the swap cache, reading it back would come
	 * from memory and never ask zswap: wait for reclaim to free it.
	 */
	for (tries = 0; tries < 200 && swap_cached_kib() >= THP_SZ >> 10; tries++)
		write_file(path, "16M");
	if (swap_cached_kib() >= THP_SZ >> 10)
		die(KSFT_SKIP, "the folio stayed in the swap cache (SwapCached %" PRIu64 " kB)",
		    swap_cached_kib());
	msg("folio freed from the swap cache; reading back from swap");

	for (uint64_t p = 0; p < NR_SUBPAGES; p++) {
		const uint64_t *pg = (const uint64_t *)(thp + p * PAGE_SZ);
		uint64_t gen = p == k ? 2 : 1;

		for (uint64_t w = 0; w < WORDS_PER_PAGE; w++) {
			if (pg[w] == word(gen, p, w))
				continue;
			if (bad++ < 4)
				msg("subpage %" PRIu64 " word %" PRIu64 ": got 0x%016" PRIx64
				    " want 0x%016" PRIx64 "%s", p, w, pg[w], word(gen, p, w),
				    pg[w] == word(1, p, w) || pg[w] == word(3, p, w) ?
				    " (old data: a stale zswap entry)" : "");
		}
	}
	write_file("/sys/fs/cgroup/cgroup.procs", "0");
	rmdir(cg);
	if (bad) {
		msg("FAIL: %" PRIu64 " words differ", bad);
		return KSFT_FAIL;
	}
	msg("PASS: subpage %u reads back its new bytes, the other 511 their old ones", k);
	return KSFT_PASS;
}

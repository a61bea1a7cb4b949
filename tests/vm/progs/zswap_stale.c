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
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testprog.h"

#define NR_SUBPAGES	(THP_SZ / PAGE_SZ)

#define PM_PRESENT	(1ULL << 63)
#define PM_SWAP		(1ULL << 62)
#define PM_PFN_MASK	((1ULL << 55) - 1)
#define KPF_SWAPCACHE	13
#define KPF_THP		22

static void msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("zswap_stale: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
}

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

static uint64_t vmstat(const char *key)
{
	char name[64];
	uint64_t val, ret = 0;
	FILE *f = fopen("/proc/vmstat", "r");

	while (f && fscanf(f, "%63s %" SCNu64, name, &val) == 2)
		if (!strcmp(name, key))
			ret = val;
	if (f)
		fclose(f);
	return ret;
}

static uint64_t meminfo_kib(const char *key)
{
	char line[128];
	uint64_t val = 0;
	size_t len = strlen(key);
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':')
			val = strtoull(line + len + 1, NULL, 10);
	if (f)
		fclose(f);
	return val;
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

static bool thp_backed(const char *thp)
{
	unsigned long lo, hi, kib = 0;
	bool in_vma = false;
	char line[256];
	FILE *f = fopen("/proc/self/smaps", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in_vma = lo <= (uintptr_t)thp && (uintptr_t)thp < hi;
		else if (in_vma)
			sscanf(line, "AnonHugePages: %lu kB", &kib);
	}
	if (f)
		fclose(f);
	return kib >= THP_SZ >> 10;
}

struct racer {
	uint64_t *page;
	uint64_t page_no;
	long delay_us;
	volatile bool stop;
};

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

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
	until = now_us() + r->delay_us;
	while (now_us() < until)
		;
	fill_gen(r->page, 3, r->page_no);	/* generation C */
	return NULL;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "hold", required_argument, NULL, 'H' },
		{ "subpage", required_argument, NULL, 'k' },
		{ "attempts", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int k = 5, attempts = 64, attempt, tries;
	const char *hold = NULL;
	char cg[128], path[256], *raw = NULL, *thp = NULL;
	uint64_t thp_before, zswp_before, bad = 0;
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	bool reached = false;
	int c;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'H': hold = optarg; break;
		case 'k': k = strtoul(optarg, NULL, 0); break;
		case 'a': attempts = strtoul(optarg, NULL, 0); break;
		default: return KSFT_FAIL;
		}
	}
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
		raw = mmap(NULL, 2 * THP_SZ, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (raw == MAP_FAILED) {
			msg("mmap: %s", strerror(errno));
			return KSFT_FAIL;
		}
		thp = (char *)(((uintptr_t)raw + THP_SZ - 1) & ~(THP_SZ - 1));
		madvise(thp, THP_SZ, MADV_HUGEPAGE);
		for (uint64_t p = 0; p < NR_SUBPAGES; p++)
			fill_gen((uint64_t *)(thp + p * PAGE_SZ), 1, p);	/* A */
		if (!thp_backed(thp))
			continue;

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
		if (vmstat("thp_swpout") != thp_before) {
			msg("FAIL: attempt %u: the THP went to the disk, not to zswap whole",
			    attempt);
			return KSFT_FAIL;
		}
		if (vmstat("zswpout") - zswp_before < NR_SUBPAGES)
			continue;	/* the racer was early: nothing written */
		reached = in_swapcache_state(thp, k);
	}
	if (!reached) {
		msg("SKIP: the THP never stayed in the swap cache with subpage %u mapped again (%u attempts)",
		    k, attempts);
		return KSFT_SKIP;
	}
	msg("attempt %u: THP stored whole in zswap, still in the swap cache, subpage %u mapped again",
	    attempt - 1, k);

	/* New bytes for subpage k (generation B): the folio is dirty again. */
	fill_gen((uint64_t *)(thp + k * PAGE_SZ), 2, k);

	snprintf(path, sizeof(path), "%s/ready", hold);
	write_file(path, "1\n");
	snprintf(path, sizeof(path), "%s/go", hold);
	msg("holding: waiting for %s", path);
	while (access(path, F_OK))
		nanosleep(&tick, NULL);

	/* Reclaim the whole folio again, now by the stock path. */
	thp_before = vmstat("thp_swpout");
	snprintf(path, sizeof(path), "%s/memory.reclaim", cg);
	for (tries = 0; tries < 200 && (pagemap(thp + k * PAGE_SZ) & PM_PRESENT); tries++)
		write_file(path, "16M");
	if (pagemap(thp + k * PAGE_SZ) & PM_PRESENT) {
		msg("SKIP: memory.reclaim did not write the folio out again");
		return KSFT_SKIP;
	}
	if (vmstat("thp_swpout") == thp_before) {
		msg("SKIP: the folio was split before it was written again (thp_swpout did not rise)");
		return KSFT_SKIP;
	}
	msg("folio written to the swap device whole (thp_swpout +%" PRIu64 ") after %u memory.reclaim writes",
	    vmstat("thp_swpout") - thp_before, tries);
	/*
	 * Until the folio leaves the swap cache, reading it back would come
	 * from memory and never ask zswap: wait for reclaim to free it.
	 */
	for (tries = 0; tries < 200 && meminfo_kib("SwapCached") >= THP_SZ >> 10; tries++)
		write_file(path, "16M");
	if (meminfo_kib("SwapCached") >= THP_SZ >> 10) {
		msg("SKIP: the folio stayed in the swap cache (SwapCached %" PRIu64 " kB)",
		    meminfo_kib("SwapCached"));
		return KSFT_SKIP;
	}
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

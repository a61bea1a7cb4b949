// SPDX-License-Identifier: GPL-2.0
/*
 * swap_integrity: write known bytes to anonymous memory, force them out to
 * swap, read them back and compare every byte.
 *
 * Every later mmtune feature reuses this program: a swap path that loses
 * or mixes up data shows here as mismatches, with their count and offsets.
 * The vmstat counters are checked too, so that a run in which nothing was
 * swapped cannot pass by accident.
 *
 * Exit status: 0 pass, 1 fail, 4 skip (kselftest convention).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
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

#define MAX_REPORTED	8
#define CGROUP_ROOT	"/sys/fs/cgroup"

enum evict { EVICT_PAGEOUT, EVICT_MEMCG_MAX, EVICT_MEMCG_HIGH };

struct opts {
	unsigned long size_mib;
	bool thp;
	enum evict evict;
	unsigned long limit_mib;	/* memcg limit; 0 = size / 2 */
	unsigned long zero_every;	/* every Nth page stays zero; 0 = none */
	enum fill fill;
	const char *hold_dir;		/* pause between evict and verify */
	unsigned long zswap_max_kib;	/* memory.zswap.max of the memcg */
	unsigned int min_out_pct;	/* of the region, in pswpout + zswpout */
	bool expect_thp_swpout;
	uint64_t seed;
};

struct vmstat {
	uint64_t pswpout, pswpin, zswpout, thp_swpout, thp_swpout_fallback;
};

static void msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("swap_integrity: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
	va_end(ap);
}

static void read_vmstat(struct vmstat *vs)
{
	char name[64];
	uint64_t val;
	FILE *f = fopen("/proc/vmstat", "r");

	memset(vs, 0, sizeof(*vs));
	if (!f)
		return;
	while (fscanf(f, "%63s %" SCNu64, name, &val) == 2) {
		if (!strcmp(name, "pswpout"))
			vs->pswpout = val;
		else if (!strcmp(name, "pswpin"))
			vs->pswpin = val;
		else if (!strcmp(name, "zswpout"))
			vs->zswpout = val;
		else if (!strcmp(name, "thp_swpout"))
			vs->thp_swpout = val;
		else if (!strcmp(name, "thp_swpout_fallback"))
			vs->thp_swpout_fallback = val;
	}
	fclose(f);
}

static enum fill fill_mode;

static inline uint64_t pattern(uint64_t seed, uint64_t p, uint64_t w)
{
	return pattern_word(fill_mode, seed, p, w);
}

static bool page_is_zero(const struct opts *o, uint64_t p)
{
	return o->zero_every && p % o->zero_every == 0;
}

static void fill(const struct opts *o, uint64_t *mem, uint64_t pages)
{
	for (uint64_t p = 0; p < pages; p++) {
		uint64_t *pg = mem + p * WORDS_PER_PAGE;

		if (page_is_zero(o, p)) {
			/* Touch it so that it is populated, but keep it zero. */
			pg[0] = 0;
			continue;
		}
		for (uint64_t w = 0; w < WORDS_PER_PAGE; w++)
			pg[w] = pattern(o->seed, p, w);
	}
}

/* Returns the number of mismatching bytes; reports the first few. */
static uint64_t verify(const struct opts *o, const uint64_t *mem, uint64_t pages)
{
	uint64_t bad_bytes = 0, bad_pages = 0, reported = 0;

	for (uint64_t p = 0; p < pages; p++) {
		const uint64_t *pg = mem + p * WORDS_PER_PAGE;
		bool zero = page_is_zero(o, p);
		uint64_t bad_here = 0;

		for (uint64_t w = 0; w < WORDS_PER_PAGE; w++) {
			uint64_t want = zero ? 0 : pattern(o->seed, p, w);
			uint64_t got = pg[w];

			if (got == want)
				continue;
			for (int b = 0; b < 8; b++)
				bad_here += ((got >> (8 * b)) & 0xff) !=
					    ((want >> (8 * b)) & 0xff);
			if (reported < MAX_REPORTED) {
				msg("mismatch at offset 0x%" PRIx64 " (page %" PRIu64
				    " word %" PRIu64 "): got 0x%016" PRIx64
				    " want 0x%016" PRIx64,
				    (p * WORDS_PER_PAGE + w) * 8, p, w, got, want);
				reported++;
			}
		}
		if (bad_here) {
			bad_bytes += bad_here;
			bad_pages++;
		}
	}
	if (bad_bytes)
		msg("%" PRIu64 " bytes differ in %" PRIu64 " pages", bad_bytes,
		    bad_pages);
	return bad_bytes;
}

static int write_file(const char *path, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	FILE *f;
	int ret;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fputs(buf, f) < 0 ? -EIO : 0;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

/* THPs backing [start, start + len), from AnonHugePages in smaps. */
static uint64_t count_thps(const void *start)
{
	unsigned long lo, hi, kib;
	bool in_vma = false;
	uint64_t thps = 0;
	char line[256];
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in_vma = lo <= (uintptr_t)start && (uintptr_t)start < hi;
		else if (in_vma && sscanf(line, "AnonHugePages: %lu kB", &kib) == 1)
			thps = kib / (THP_SZ >> 10);
	}
	fclose(f);
	return thps;
}

/*
 * A memcg of our own with this process in it: limited for the memcg-*
 * evictions, only with a memory.zswap.max for pageout.
 */
static int memcg_enter(const struct opts *o, char *dir, size_t dirlen)
{
	unsigned long limit = o->limit_mib ? o->limit_mib : o->size_mib / 2;
	const char *knob = o->evict == EVICT_MEMCG_HIGH ? "memory.high" : "memory.max";
	char path[256];
	int ret = 0;

	/* Ignore failure: the controller may already be enabled. */
	write_file(CGROUP_ROOT "/cgroup.subtree_control", "+memory");
	snprintf(dir, dirlen, CGROUP_ROOT "/swap_integrity.%d", getpid());
	if (mkdir(dir, 0755) && errno != EEXIST) {
		msg("cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	if (o->evict != EVICT_PAGEOUT) {
		snprintf(path, sizeof(path), "%s/%s", dir, knob);
		ret = write_file(path, "%lu", limit << 20);
	}
	if (!ret && o->zswap_max_kib) {
		snprintf(path, sizeof(path), "%s/memory.zswap.max", dir);
		ret = write_file(path, "%lu", o->zswap_max_kib << 10);
	}
	if (!ret) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		ret = write_file(path, "%d", getpid());
	}
	if (ret) {
		msg("cannot set up %s: %s", dir, strerror(-ret));
		return -1;
	}
	if (o->evict != EVICT_PAGEOUT)
		msg("in %s with %s=%luM", dir, knob, limit);
	else
		msg("in %s", dir);
	if (o->zswap_max_kib)
		msg("memory.zswap.max=%luK", o->zswap_max_kib);
	return 0;
}

/* Tell the test script that everything is out, then wait for its go. */
static void hold(const char *dir)
{
	char path[256];
	struct timespec tick = { 0, 50 * 1000 * 1000 };

	snprintf(path, sizeof(path), "%s/evicted", dir);
	if (write_file(path, "%d\n", getpid()))
		msg("cannot create %s", path);
	snprintf(path, sizeof(path), "%s/go", dir);
	msg("holding: waiting for %s", path);
	while (access(path, F_OK))
		nanosleep(&tick, NULL);
}

static void memcg_leave(const char *dir)
{
	write_file(CGROUP_ROOT "/cgroup.procs", "%d", getpid());
	rmdir(dir);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: swap_integrity [options]\n"
		"  --size MIB           region size (default 64)\n"
		"  --thp | --no-thp     MADV_HUGEPAGE or MADV_NOHUGEPAGE (default --thp)\n"
		"  --evict HOW          pageout | memcg-max | memcg-high (default pageout)\n"
		"  --limit MIB          memcg limit (default size/2)\n"
		"  --zero-every N       leave every Nth page all zero\n"
		"  --fill KIND          random (incompressible, default) or compressible (~3:1)\n"
		"  --zswap-max KIB      memory.zswap.max of the memcg (memcg-* only)\n"
		"  --hold DIR           after eviction create DIR/evicted, wait for DIR/go\n"
		"  --min-out-pct P      fail unless pswpout+zswpout grew by P%% of the region\n"
		"                       (default 50)\n"
		"  --expect-thp-swpout  fail unless thp_swpout grew\n"
		"  --seed N             pattern seed\n");
	exit(KSFT_FAIL);
}

static void parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "size", required_argument, NULL, 's' },
		{ "thp", no_argument, NULL, 'T' },
		{ "no-thp", no_argument, NULL, 'N' },
		{ "evict", required_argument, NULL, 'e' },
		{ "limit", required_argument, NULL, 'l' },
		{ "zero-every", required_argument, NULL, 'z' },
		{ "min-out-pct", required_argument, NULL, 'm' },
		{ "expect-thp-swpout", no_argument, NULL, 'X' },
		{ "seed", required_argument, NULL, 'S' },
		{ "fill", required_argument, NULL, 'f' },
		{ "hold", required_argument, NULL, 'H' },
		{ "zswap-max", required_argument, NULL, 'Z' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .size_mib = 64, .thp = true, .min_out_pct = 50,
			    .seed = 0x6d6d74756e65ULL };
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o->size_mib = strtoul(optarg, NULL, 0); break;
		case 'T': o->thp = true; break;
		case 'N': o->thp = false; break;
		case 'l': o->limit_mib = strtoul(optarg, NULL, 0); break;
		case 'z': o->zero_every = strtoul(optarg, NULL, 0); break;
		case 'm': o->min_out_pct = strtoul(optarg, NULL, 0); break;
		case 'X': o->expect_thp_swpout = true; break;
		case 'S': o->seed = strtoull(optarg, NULL, 0); break;
		case 'H': o->hold_dir = optarg; break;
		case 'Z': o->zswap_max_kib = strtoul(optarg, NULL, 0); break;
		case 'f':
			if (!strcmp(optarg, "random"))
				o->fill = FILL_RANDOM;
			else if (!strcmp(optarg, "compressible"))
				o->fill = FILL_COMPRESSIBLE;
			else
				usage();
			break;
		case 'e':
			if (!strcmp(optarg, "pageout"))
				o->evict = EVICT_PAGEOUT;
			else if (!strcmp(optarg, "memcg-max"))
				o->evict = EVICT_MEMCG_MAX;
			else if (!strcmp(optarg, "memcg-high"))
				o->evict = EVICT_MEMCG_HIGH;
			else
				usage();
			break;
		default:
			usage();
		}
	}
	if (!o->size_mib || optind != argc || o->min_out_pct > 100)
		usage();
}

int main(int argc, char **argv)
{
	static const char *const evict_names[] = { "pageout", "memcg-max", "memcg-high" };
	struct vmstat before, after;
	char cgdir[128] = "";
	struct opts o;
	uint64_t pages, out, bad, thps;
	uint64_t *mem;
	char *raw;
	int ret = KSFT_PASS;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_opts(argc, argv, &o);
	fill_mode = o.fill;
	pages = (o.size_mib << 20) / PAGE_SZ;
	msg("%lu MiB, %s pages, %s fill, evict by %s, zero every %lu",
	    o.size_mib, o.thp ? "THP" : "4K",
	    o.fill == FILL_COMPRESSIBLE ? "compressible" : "random",
	    evict_names[o.evict], o.zero_every);

	/* Over-allocate so that the region starts on a THP boundary. */
	raw = mmap(NULL, (o.size_mib << 20) + THP_SZ, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED) {
		msg("mmap: %s", strerror(errno));
		return KSFT_FAIL;
	}
	mem = (uint64_t *)(((uintptr_t)raw + THP_SZ - 1) & ~(THP_SZ - 1));
	if (madvise(mem, o.size_mib << 20, o.thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE)) {
		msg("madvise(%s): %s", o.thp ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE",
		    strerror(errno));
		return KSFT_FAIL;
	}

	if ((o.evict != EVICT_PAGEOUT || o.zswap_max_kib) &&
	    memcg_enter(&o, cgdir, sizeof(cgdir)))
		return KSFT_FAIL;

	read_vmstat(&before);
	fill(&o, mem, pages);
	/* Under a memcg limit some THPs may be out already: a lower bound. */
	thps = count_thps(mem);
	if (o.evict == EVICT_PAGEOUT) {
		if (madvise(mem, o.size_mib << 20, MADV_PAGEOUT)) {
			msg("MADV_PAGEOUT: %s", strerror(errno));
			return errno == EINVAL ? KSFT_SKIP : KSFT_FAIL;
		}
	}
	read_vmstat(&after);	/* before reading back: swap-ins evict more */
	if (o.hold_dir)
		hold(o.hold_dir);
	bad = verify(&o, mem, pages);
	if (cgdir[0])
		memcg_leave(cgdir);

	out = (after.pswpout - before.pswpout) + (after.zswpout - before.zswpout);
	/* For test scripts: the counters moved by filling and evicting. */
	printf("deltas: pswpout=%" PRIu64 " zswpout=%" PRIu64 " thp_swpout=%" PRIu64
	       " thp_swpout_fallback=%" PRIu64 " pages=%" PRIu64 " thps=%" PRIu64 "\n",
	       after.pswpout - before.pswpout, after.zswpout - before.zswpout,
	       after.thp_swpout - before.thp_swpout,
	       after.thp_swpout_fallback - before.thp_swpout_fallback, pages, thps);
	msg("pswpout +%" PRIu64 " zswpout +%" PRIu64 " thp_swpout +%" PRIu64
	    " thp_swpout_fallback +%" PRIu64 " of %" PRIu64 " pages",
	    after.pswpout - before.pswpout, after.zswpout - before.zswpout,
	    after.thp_swpout - before.thp_swpout,
	    after.thp_swpout_fallback - before.thp_swpout_fallback, pages);

	if (bad) {
		msg("FAIL: %" PRIu64 " bytes read back differ", bad);
		ret = KSFT_FAIL;
	}
	if (out * 100 < pages * o.min_out_pct) {
		msg("FAIL: only %" PRIu64 " of %" PRIu64 " pages went out (want >= %u%%)",
		    out, pages, o.min_out_pct);
		ret = KSFT_FAIL;
	}
	if (o.expect_thp_swpout && after.thp_swpout == before.thp_swpout) {
		msg("FAIL: thp_swpout did not rise: no THP went out whole");
		ret = KSFT_FAIL;
	}
	if (ret == KSFT_PASS)
		msg("PASS: %" PRIu64 " pages read back equal", pages);
	return ret;
}

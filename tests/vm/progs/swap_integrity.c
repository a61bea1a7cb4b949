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
#include <unistd.h>

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif

#define KSFT_PASS 0
#define KSFT_FAIL 1
#define KSFT_SKIP 4

#define PAGE_SZ		4096UL
#define THP_SZ		(2UL << 20)
#define WORDS_PER_PAGE	(PAGE_SZ / sizeof(uint64_t))
#define MAX_REPORTED	8
#define CGROUP_ROOT	"/sys/fs/cgroup"

enum evict { EVICT_PAGEOUT, EVICT_MEMCG_MAX, EVICT_MEMCG_HIGH };

struct opts {
	unsigned long size_mib;
	bool thp;
	enum evict evict;
	unsigned long limit_mib;	/* memcg limit; 0 = size / 2 */
	unsigned long zero_every;	/* every Nth page stays zero; 0 = none */
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

/* The value of word @w of page @p: distinct per page, per word and per run. */
static inline uint64_t pattern(uint64_t seed, uint64_t p, uint64_t w)
{
	return ((p + 1) * 0x9E3779B97F4A7C15ULL ^ seed) + w * 0xD1B54A32D192ED03ULL;
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

/* A memcg of our own, limited, with this process in it. */
static int memcg_enter(const struct opts *o, char *dir, size_t dirlen)
{
	unsigned long limit = o->limit_mib ? o->limit_mib : o->size_mib / 2;
	const char *knob = o->evict == EVICT_MEMCG_HIGH ? "memory.high" : "memory.max";
	char path[256];
	int ret;

	/* Ignore failure: the controller may already be enabled. */
	write_file(CGROUP_ROOT "/cgroup.subtree_control", "+memory");
	snprintf(dir, dirlen, CGROUP_ROOT "/swap_integrity.%d", getpid());
	if (mkdir(dir, 0755) && errno != EEXIST) {
		msg("cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, knob);
	ret = write_file(path, "%lu", limit << 20);
	if (!ret) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		ret = write_file(path, "%d", getpid());
	}
	if (ret) {
		msg("cannot set up %s: %s", dir, strerror(-ret));
		return -1;
	}
	msg("in %s with %s=%luM", dir, knob, limit);
	return 0;
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
	uint64_t pages, out, bad;
	uint64_t *mem;
	char *raw;
	int ret = KSFT_PASS;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_opts(argc, argv, &o);
	pages = (o.size_mib << 20) / PAGE_SZ;
	msg("%lu MiB, %s pages, evict by %s, zero every %lu", o.size_mib,
	    o.thp ? "THP" : "4K", evict_names[o.evict], o.zero_every);

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

	if (o.evict != EVICT_PAGEOUT && memcg_enter(&o, cgdir, sizeof(cgdir)))
		return KSFT_FAIL;

	read_vmstat(&before);
	fill(&o, mem, pages);
	if (o.evict == EVICT_PAGEOUT) {
		if (madvise(mem, o.size_mib << 20, MADV_PAGEOUT)) {
			msg("MADV_PAGEOUT: %s", strerror(errno));
			return errno == EINVAL ? KSFT_SKIP : KSFT_FAIL;
		}
	}
	read_vmstat(&after);	/* before reading back: swap-ins evict more */
	bad = verify(&o, mem, pages);
	if (cgdir[0])
		memcg_leave(cgdir);

	out = (after.pswpout - before.pswpout) + (after.zswpout - before.zswpout);
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

/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the guest test programs: exit codes, sizes, the bytes the swap
 * tests write (distinct per page, per word and per run, so that a page read
 * back from the wrong place shows), long options as data, and readers of
 * /proc and writers of cgroup files.
 *
 * Header-only, so that tests/vm/run.sh builds each program from its one .c
 * file. A program that defines TESTPROG (its name) before including this
 * also gets msg() and die(), which prefix every line with that name.
 */
#ifndef MMTUNE_TESTPROG_H
#define MMTUNE_TESTPROG_H

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

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
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum fill { FILL_RANDOM, FILL_COMPRESSIBLE };

/* --fill's words, in enum fill's order (for OPT_CHOICE). */
static const char *const fill_names[] = { "random", "compressible", NULL };

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

/*
 * Long options as data: each entry says where its value goes, so that a
 * program lists an option once, not in getopt's table and again in a
 * switch. OPT() takes the type from the pointer: unsigned numbers are read
 * as strtoul(, 0) reads them (0x and 0 prefixes), int, long and double as
 * atoi(), atol() and atof() do, strings are kept as given. OPT_FLAG() stores
 * a bool, OPT_CHOICE() the index of the word in a NULL-terminated list into
 * an enum (whose values must be those indexes).
 */
enum testopt_kind {
	TO_ULONG, TO_UINT, TO_ULLONG, TO_INT, TO_LONG, TO_DOUBLE, TO_STR,
	TO_FLAG, TO_CHOICE,
};

struct testopt {
	const char *name;
	enum testopt_kind kind;
	void *dest;
	bool flag;			/* TO_FLAG: the value to store */
	const char *const *choices;	/* TO_CHOICE */
};

#define OPT(opt, ptr) { .name = (opt), .dest = (ptr), .kind = _Generic((ptr), \
	unsigned long *: TO_ULONG, unsigned int *: TO_UINT,		\
	unsigned long long *: TO_ULLONG, int *: TO_INT, long *: TO_LONG, \
	double *: TO_DOUBLE, const char **: TO_STR) }
#define OPT_FLAG(opt, ptr, val) \
	{ .name = (opt), .dest = (ptr), .kind = _Generic((ptr), bool *: TO_FLAG), .flag = (val) }
#define OPT_CHOICE(opt, ptr, words) \
	{ .name = (opt), .dest = (ptr), .kind = TO_CHOICE, .choices = (words) }

/*
 * getopt_long() from argv[@first] over @n entries of @opts, storing every
 * value. Returns the index of the first argument that is not an option, or
 * -1 at an unknown option (getopt has said which) or a word not among an
 * option's choices.
 */
static inline int parse_testopts(int argc, char **argv, int first,
				 const struct testopt *opts, size_t n)
{
	struct option longopts[n + 1];
	int c, i;

	for (size_t k = 0; k < n; k++)
		longopts[k] = (struct option){ opts[k].name,
			opts[k].kind == TO_FLAG ? no_argument : required_argument,
			NULL, 0 };
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };
	optind = first;
	while ((c = getopt_long(argc, argv, "", longopts, &i)) != -1) {
		const struct testopt *t;

		if (c)
			return -1;
		t = &opts[i];
		switch (t->kind) {
		case TO_ULONG: *(unsigned long *)t->dest = strtoul(optarg, NULL, 0); break;
		case TO_UINT: *(unsigned int *)t->dest = strtoul(optarg, NULL, 0); break;
		case TO_ULLONG: *(unsigned long long *)t->dest = strtoull(optarg, NULL, 0); break;
		case TO_INT: *(int *)t->dest = atoi(optarg); break;
		case TO_LONG: *(long *)t->dest = atol(optarg); break;
		case TO_DOUBLE: *(double *)t->dest = atof(optarg); break;
		case TO_STR: *(const char **)t->dest = optarg; break;
		case TO_FLAG: *(bool *)t->dest = t->flag; break;
		case TO_CHOICE:
			for (c = 0; t->choices[c] && strcmp(optarg, t->choices[c]); c++)
				;
			if (!t->choices[c])
				return -1;
			*(unsigned int *)t->dest = c;
			break;
		}
	}
	return optind;
}

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * @len bytes of fresh anonymous memory that start on a THP boundary; *@raw
 * is the mapping to munmap(), @len + THP_SZ long. NULL if mmap() failed.
 */
static inline void *mmap_thp_aligned(size_t len, void **raw)
{
	*raw = mmap(NULL, len + THP_SZ, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (*raw == MAP_FAILED)
		return NULL;
	return (void *)(((uintptr_t)*raw + THP_SZ - 1) & ~(THP_SZ - 1));
}

/* @n counters of /proc/vmstat (0 for one it lacks); -1 if it is unreadable. */
static inline int vmstat_read(const char *const *keys, uint64_t *vals, size_t n)
{
	char name[64];
	uint64_t val;
	FILE *f = fopen("/proc/vmstat", "r");

	memset(vals, 0, n * sizeof(*vals));
	if (!f)
		return -1;
	while (fscanf(f, "%63s %" SCNu64, name, &val) == 2)
		for (size_t k = 0; k < n; k++)
			if (!strcmp(name, keys[k]))
				vals[k] = val;
	fclose(f);
	return 0;
}

static inline uint64_t vmstat(const char *key)
{
	uint64_t val;

	vmstat_read(&key, &val, 1);
	return val;
}

/* The number of the first "KEY: N kB" line of a /proc file; 0 if none. */
static inline uint64_t proc_kib(const char *path, const char *key)
{
	char line[256];
	uint64_t val = 0;
	size_t len = strlen(key);
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':') {
			val = strtoull(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return val;
}

/* AnonHugePages of the mapping that holds @addr, from /proc/self/smaps. */
static inline uint64_t vma_anon_huge_kib(const void *addr)
{
	unsigned long lo, hi, kib = 0;
	bool in_vma = false;
	char line[256];
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)
			in_vma = lo <= (uintptr_t)addr && (uintptr_t)addr < hi;
		else if (in_vma)
			sscanf(line, "AnonHugePages: %lu kB", &kib);
	}
	fclose(f);
	return kib;
}

/* Write a short printf-formatted string to a (sysfs, cgroup) file: 0 or -errno. */
static inline int __attribute__((format(printf, 2, 3)))
write_file(const char *path, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	int fd, ret = 0;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, strlen(buf)) < 0)
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	return ret;
}

#ifdef TESTPROG
static inline void __attribute__((format(printf, 2, 0)))
vmsg(const char *tag, const char *fmt, va_list ap)
{
	fputs(TESTPROG ": ", stdout);
	fputs(tag, stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	fflush(stdout);
}

/* One line of output, prefixed with the program's name. */
static inline void __attribute__((format(printf, 1, 2))) msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

/* "PROG: SKIP: ..." or "PROG: FAIL: ...", then exit with @code. */
static inline void __attribute__((noreturn, format(printf, 2, 3)))
die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(code == KSFT_SKIP ? "SKIP: " : "FAIL: ", fmt, ap);
	va_end(ap);
	exit(code);
}

/* Wait for the test script to create @path, looking every @tick_ms. */
static inline void hold_until(const char *path, long tick_ms)
{
	struct timespec tick = { 0, tick_ms * 1000 * 1000 };

	msg("holding: waiting for %s", path);
	while (access(path, F_OK))
		nanosleep(&tick, NULL);
}

/* /proc/self/pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst). */
#define PM_PRESENT	(UINT64_C(1) << 63)
#define PM_SWAP		(UINT64_C(1) << 62)
#define PM_UFFD_WP	(UINT64_C(1) << 57)
#define PM_SOFT_DIRTY	(UINT64_C(1) << 55)
#define PM_PFN_MASK	((UINT64_C(1) << 55) - 1)

/* Word @index of a file of 64-bit words (/proc/self/pagemap, /proc/kpageflags). */
static inline uint64_t read_u64_at(const char *path, uint64_t index)
{
	uint64_t v = 0;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || pread(fd, &v, sizeof(v), index * sizeof(v)) != sizeof(v))
		die(KSFT_FAIL, "cannot read %s: %s", path, strerror(errno));
	close(fd);
	return v;
}

static inline uint64_t kpageflags(uint64_t pfn)
{
	return read_u64_at("/proc/kpageflags", pfn);
}

/* The pagemap entry of @addr; @fd is open on /proc/self/pagemap. */
static inline uint64_t pagemap_entry(int fd, const void *addr)
{
	uint64_t e;
	off_t off = (off_t)((uintptr_t)addr / PAGE_SZ) * (off_t)sizeof(e);

	if (pread(fd, &e, sizeof(e), off) != sizeof(e))
		die(KSFT_FAIL, "pagemap read: %s", strerror(errno));
	return e;
}

/* The PFN of the shared zero page: what a read fault on fresh memory maps. */
static inline uint64_t zero_pfn(int fd)
{
	volatile char *p = mmap(NULL, PAGE_SZ, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t e;

	if (p == MAP_FAILED)
		die(KSFT_FAIL, "mmap: %s", strerror(errno));
	madvise((void *)p, PAGE_SZ, MADV_NOHUGEPAGE);
	(void)p[0];
	e = pagemap_entry(fd, (void *)p);
	munmap((void *)p, PAGE_SZ);
	if (!(e & PM_PRESENT) || !(e & PM_PFN_MASK))
		die(KSFT_FAIL, "cannot find the zero page's PFN (pagemap %#llx; not root?)",
		    (unsigned long long)e);
	return e & PM_PFN_MASK;
}
#endif

#endif

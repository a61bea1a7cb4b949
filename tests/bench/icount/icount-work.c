// SPDX-License-Identifier: GPL-2.0
/*
 * icount-work: the guest side of the instruction-count benchmarks. Runs
 * phases of memory operations between marks that the icount.so plugin
 * sees (tests/bench/icount/run.sh boots it).
 *
 *   icount-work [-n OPS] [-r ROUNDS] [-w WARMUP] PHASE...
 *   icount-work --list        "ID NAME DESCRIPTION" of every phase
 *   icount-work --marks       address of the mark stubs (also: nm)
 *
 * Mark scheme. QEMU 7.2's plugin API cannot read guest registers or
 * memory, so a mark's argument is encoded in where it jumps: 256 stubs of
 * one "ret" each, 16 bytes apart, in their own section of this static,
 * non-PIE program (fixed addresses); mark(N) calls stub N, and the plugin,
 * given the stubs' address, reports the counters at every block that
 * starts at a stub. Mark N closes the region since the previous mark and
 * names it: 0 means "not measured" (setup, output, warm-up rounds), any
 * other ID is the phase of that ID in the table below, which --list prints
 * for the host. Each measured region is exactly one phase's run() for OPS
 * operations; setup and teardown happen outside it.
 *
 * Adding a phase: write setup/run/teardown functions and add a line to
 * phases[] with a new ID (IDs must stay stable: reports key on them).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>
#include <sys/mman.h>

#define PAGE		4096UL
#define MARK_STRIDE	16
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#define THP		(2UL << 20)

#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT	21
#endif

/* 256 mark stubs; see the comment at the top. */
asm(".pushsection .text.icount_marks,\"ax\",@progbits\n"
	"\t.globl icount_marks\n"
	"\t.balign 4096\n"
	"icount_marks:\n"
	"\t.rept 256\n"
	"\t.balign 16\n"
	"\tret\n"
	"\t.endr\n"
	"\t.popsection\n");
extern const char icount_marks[];

static void mark(unsigned int id)
{
	void (*stub)(void) = (void (*)(void))(icount_marks + id * MARK_STRIDE);

	stub();
}

static void die(const char *what)
{
	fprintf(stderr, "icount-work: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* State a phase keeps between setup, run and teardown. */
struct ctx {
	char *buf;
	long ops;
	char *map;	/* THP phases: the unaligned mapping buf lies in */
	int fd;
	unsigned long fsize;	/* mTHP phases: the folio size */
	long before;		/* folio fault phases: faults before the run */
};

static char *map_anon(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		die("mmap");
	/* 4K faults, even where THP is "always" (Debian's kernels) */
	if (madvise(p, len, MADV_NOHUGEPAGE))
		die("madvise(MADV_NOHUGEPAGE)");
	return p;
}

static void nothing(struct ctx *c)
{
}

/* fault4k: one op = one write fault on a fresh 4K anonymous page, plus
 * its share of the mmap and munmap (the unmap frees the pages)
 */
static void fault4k_run(struct ctx *c)
{
	char *p = map_anon(c->ops * PAGE);
	long i;

	for (i = 0; i < c->ops; i++)
		p[i * PAGE] = 1;
	if (munmap(p, c->ops * PAGE))
		die("munmap");
}

/* allocfree: one op = mmap one page, write it (page allocated), munmap
 * (page freed): a page alloc+free pair with a VMA's setup around it
 */
static void allocfree_run(struct ctx *c)
{
	long i;

	for (i = 0; i < c->ops; i++) {
		char *p = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			die("mmap");
		*p = 1;
		if (munmap(p, PAGE))
			die("munmap");
	}
}

/* dontneed: one op = write fault on one page of a mapping that stays,
 * then MADV_DONTNEED (page freed): an alloc+free pair without VMA work
 */
static void dontneed_setup(struct ctx *c)
{
	c->buf = map_anon(PAGE);
}

static void dontneed_run(struct ctx *c)
{
	long i;

	for (i = 0; i < c->ops; i++) {
		c->buf[0] = 1;
		if (madvise(c->buf, PAGE, MADV_DONTNEED))
			die("madvise(MADV_DONTNEED)");
	}
}

static void unmap_buf(struct ctx *c)
{
	if (munmap(c->buf, c->ops > 0 ? c->ops * PAGE : PAGE))
		die("munmap");
}

static void dontneed_teardown(struct ctx *c)
{
	if (munmap(c->buf, PAGE))
		die("munmap");
}

/* Pages worth compressing about 2:1, different per page. */
static void fill(char *p, long pages)
{
	long i, j;

	for (i = 0; i < pages; i++)
		for (j = 0; j < (long)(PAGE / 8); j += 2)
			((unsigned long *)(p + i * PAGE))[j] = i * 0x9e3779b97f4a7c15UL + j;
}

/* pageout: one op = one dirty anonymous page written to swap by
 * MADV_PAGEOUT (needs swap on; fails if nothing left memory)
 */
static void pageout_setup(struct ctx *c)
{
	c->buf = map_anon(c->ops * PAGE);
	fill(c->buf, c->ops);
}

/* Pages of [p, p + pages * PAGE) in memory (mincore). */
static long resident_pages(const char *p, long pages)
{
	unsigned char *vec = malloc(pages);
	long i, n = 0;

	if (!vec)
		die("malloc");
	if (mincore((void *)p, pages * PAGE, vec))
		die("mincore");
	for (i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

/* Fails the phase unless all but 1% of those pages left memory. */
static void expect_swapped_out(const char *phase, const char *p, long pages)
{
	long left = resident_pages(p, pages);

	if (left > pages / 100) {
		fprintf(stderr, "icount-work: %s: %ld of %ld pages still resident (swap on?)\n",
			phase, left, pages);
		exit(1);
	}
}

static void pageout_run(struct ctx *c)
{
	if (madvise(c->buf, c->ops * PAGE, MADV_PAGEOUT))
		die("madvise(MADV_PAGEOUT)");
}

static void pageout_teardown(struct ctx *c)
{
	expect_swapped_out("pageout", c->buf, c->ops);
	unmap_buf(c);
}

/* swapin: one op = one read fault on a swapped-out page */
static void swapin_setup(struct ctx *c)
{
	pageout_setup(c);
	pageout_run(c);
	expect_swapped_out("swapin", c->buf, c->ops);
}

static void swapin_run(struct ctx *c)
{
	volatile char *p = c->buf;
	long i;

	for (i = 0; i < c->ops; i++)
		(void)p[i * PAGE];
}

/* ops folios of SIZE in a fresh mapping, c->buf aligned to SIZE (so that
 * a fault there can allocate the folio), c->map the mapping.
 */
static void map_folios(struct ctx *c, unsigned long size)
{
	unsigned long a;

	c->fsize = size;
	c->map = mmap(NULL, (c->ops + 1) * size, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (c->map == MAP_FAILED)
		die("mmap");
	a = ((unsigned long)c->map + size - 1) & ~(size - 1);
	c->buf = (char *)a;
}

/* ops THPs, 2M-aligned, MADV_HUGEPAGE, each faulted in as one THP by its
 * first write (fails if the kernel gave 4K pages: THP "never"?)
 */
static void map_thps(struct ctx *c)
{
	long i;

	map_folios(c, THP);
	if (madvise(c->buf, c->ops * THP, MADV_HUGEPAGE))
		die("madvise(MADV_HUGEPAGE)");
	for (i = 0; i < c->ops; i++)
		c->buf[i * THP] = 1;
}

/* Kernel pages of the range that are THP-mapped: AnonHugePages of smaps
 * is per VMA; the whole mapping is ours, so take the largest.
 */
static long anon_huge_kb(void)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[256];
	long kb, max = 0;

	if (!f)
		die("/proc/self/smaps");
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1 && kb > max)
			max = kb;
	fclose(f);
	return max;
}

static void check_thps(struct ctx *c, const char *phase)
{
	long kb = anon_huge_kb();

	if (kb < c->ops * (long)(THP >> 10)) {
		fprintf(stderr, "icount-work: %s: %ld of %ld kB THP-mapped (THP madvise or always?)\n",
			phase, kb, c->ops * (long)(THP >> 10));
		exit(1);
	}
}

static void unmap_thps(struct ctx *c)
{
	if (munmap(c->map, (c->ops + 1) * THP))
		die("munmap");
}

/* thpout: one op = one THP of data that compresses about 2:1 (the pageout
 * phase's pages) written to swap by MADV_PAGEOUT; with zswap on, mmtune's
 * zswap_large stores it whole, stock 6.1 zswap refuses it (to the disk)
 */
static void thpout_setup(struct ctx *c)
{
	map_thps(c);
	fill(c->buf, c->ops * (THP / PAGE));
	check_thps(c, "thpout");
}

/* thpbadout: thpout with the last page of every THP random (a bad tail:
 * it does not compress). zswap_large stores that page as it is where the
 * kernel can (6.12); stock refuses the THP before compressing.
 */
static void thpbadout_setup(struct ctx *c)
{
	unsigned long x = 0x9e3779b97f4a7c15UL;
	long i, j;

	thpout_setup(c);
	for (i = 0; i < c->ops; i++) {
		unsigned long *tail = (unsigned long *)(c->buf + (i + 1) * THP - PAGE);

		for (j = 0; j < (long)(PAGE / 8); j++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			tail[j] = x;
		}
	}
}

static void thpout_run(struct ctx *c)
{
	if (madvise(c->buf, c->ops * THP, MADV_PAGEOUT))
		die("madvise(MADV_PAGEOUT)");
}

static void thpout_teardown(struct ctx *c)
{
	expect_swapped_out("thpout", c->buf, c->ops * (long)(THP / PAGE));
	unmap_thps(c);
}

/* A counter of FILE ("name value" lines: /proc/vmstat) or, with name
 * NULL, the number FILE holds; -1 if absent.
 */
static long read_counter(const char *file, const char *name)
{
	char key[64];
	long n = -1, v;
	FILE *f = fopen(file, "r");

	if (!f)
		return -1;
	if (!name) {
		if (fscanf(f, "%ld", &v) == 1)
			n = v;
	} else {
		while (fscanf(f, "%63s %ld", key, &v) == 2)
			if (!strcmp(key, name))
				n = v;
	}
	fclose(f);
	return n;
}

/* A counter of the folio size's stats (swpin, zswpout, ...); -1 if absent. */
static long mthp_stat(unsigned long size, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/kernel/mm/transparent_hugepage/hugepages-%lukB/stats/%s",
		 size >> 10, name);
	return read_counter(path, NULL);
}

/* Anonymous faults that got a folio of SIZE: 2M from vmstat's
 * thp_fault_alloc (every kernel), mTHP sizes from the size's stats.
 */
static long folio_faults(unsigned long size)
{
	if (size == THP)
		return read_counter("/proc/vmstat", "thp_fault_alloc");
	return mthp_stat(size, "anon_fault_alloc");
}

/* mthpout (thp16out, thp64out): one op = one anonymous folio of 16K or
 * 64K (mTHP, kernels from 6.8; the run's prep script enables only that
 * size, "always") of 2:1 data written to swap by MADV_PAGEOUT: stock 6.12
 * zswap refuses it (to the disk whole), mmtune's zswap_large stores it
 * whole, 6.13+ zswap stores it page by page. Fails unless every folio was
 * faulted in at that size: the size's stats/anon_fault_alloc must grow by
 * ops.
 */
static void mthp_setup(struct ctx *c, unsigned long size)
{
	long before, got;

	map_folios(c, size);
	before = folio_faults(size);
	fill(c->buf, c->ops * (size / PAGE));
	got = folio_faults(size) - before;
	if (got < c->ops) {
		fprintf(stderr, "icount-work: mthpout: %ld of %ld %lukB folios (hugepages-%lukB enabled?)\n",
			got, c->ops, size >> 10, size >> 10);
		exit(1);
	}
}

static void thp16out_setup(struct ctx *c)
{
	mthp_setup(c, 16UL << 10);
}

static void thp64out_setup(struct ctx *c)
{
	mthp_setup(c, 64UL << 10);
}

static void mthpout_run(struct ctx *c)
{
	if (madvise(c->buf, c->ops * c->fsize, MADV_PAGEOUT))
		die("madvise(MADV_PAGEOUT)");
}

/* faultthp, fault64k, fault16k: one op = one write fault that allocates an
 * anonymous folio of 2M, 64K or 16K, zeroed (the set's prep enables that
 * size only, "always"): the fault's large-folio order decision, where
 * cgroup_policy looks up the faulting task's cgroup. The mapping is made
 * before and unmapped after the measured region; teardown fails unless
 * every fault got its size (2M: vmstat's thp_fault_alloc, on every kernel;
 * the others: the size's anon_fault_alloc).
 */
static void faultfolio_setup(struct ctx *c, unsigned long size)
{
	map_folios(c, size);
	c->before = folio_faults(size);
	if (c->before < 0)
		die("folio fault counter");
}

static void faultthp_setup(struct ctx *c)
{
	faultfolio_setup(c, THP);
}

static void fault64k_setup(struct ctx *c)
{
	faultfolio_setup(c, 64UL << 10);
}

static void fault16k_setup(struct ctx *c)
{
	faultfolio_setup(c, 16UL << 10);
}

static void faultfolio_run(struct ctx *c)
{
	long i;

	for (i = 0; i < c->ops; i++)
		c->buf[i * c->fsize] = 1;
}

static void faultfolio_teardown(struct ctx *c)
{
	long got = folio_faults(c->fsize) - c->before;

	if (got < c->ops) {
		fprintf(stderr, "icount-work: fault folios: %ld of %ld faults got a %lukB folio\n",
			got, c->ops, c->fsize >> 10);
		exit(1);
	}
	if (munmap(c->map, (c->ops + 1) * c->fsize))
		die("munmap");
}

static void mthpout_teardown(struct ctx *c)
{
	expect_swapped_out("mthpout", c->buf, c->ops * (long)(c->fsize / PAGE));
	if (munmap(c->map, (c->ops + 1) * c->fsize))
		die("munmap");
}

/* mthpin (thp16in, thp64in): one op = reading back every page of one 16K
 * or 64K folio that mthpout's MADV_PAGEOUT wrote out. Where zswap stored
 * the folio whole and may load it whole (6.12 with zswap_large and its
 * load_<size>kB), one fault loads all of it; stock 6.12 with zswap
 * enabled (whatever the device) and zswap without large loads fault the
 * pages in one by one. Teardown reports, unmeasured, how many folios came
 * back whole (the size's stats/swpin).
 */
static void mthpin_setup(struct ctx *c, unsigned long size)
{
	mthp_setup(c, size);
	mthpout_run(c);
	expect_swapped_out("mthpin", c->buf, c->ops * (long)(size / PAGE));
	c->before = mthp_stat(size, "swpin");
}

static void thp16in_setup(struct ctx *c)
{
	mthpin_setup(c, 16UL << 10);
}

static void thp64in_setup(struct ctx *c)
{
	mthpin_setup(c, 64UL << 10);
}

static void mthpin_run(struct ctx *c)
{
	volatile char *p = c->buf;
	long i, pages = c->ops * (long)(c->fsize / PAGE);

	for (i = 0; i < pages; i++)
		(void)p[i * PAGE];
}

static void mthpin_teardown(struct ctx *c)
{
	long after = mthp_stat(c->fsize, "swpin");

	if (c->before >= 0 && after >= 0)
		fprintf(stderr, "icount-work: mthpin: %ld of %ld %lukB folios swapped in whole\n",
			after - c->before, c->ops, c->fsize >> 10);
	if (munmap(c->map, (c->ops + 1) * c->fsize))
		die("munmap");
}

/* sparseout: one op = one THP of which only the first SPARSE_DATA
 * subpages hold data (2:1), the rest zero, written to swap by
 * MADV_PAGEOUT: stock 6.1 writes all 512 subpages; mmtune's thp_swap
 * splits it first and split_zero then drops the zero subpages
 */
#define SPARSE_DATA	16

static void sparseout_setup(struct ctx *c)
{
	long i;

	map_thps(c);
	for (i = 0; i < c->ops; i++)
		fill(c->buf + i * THP, SPARSE_DATA);
	check_thps(c, "sparseout");
}

/* The data subpages must be out; zero subpages may be zero-page mapped. */
static void sparseout_teardown(struct ctx *c)
{
	unsigned char vec[SPARSE_DATA];
	long i, j, left = 0;

	for (i = 0; i < c->ops; i++) {
		if (mincore(c->buf + i * THP, SPARSE_DATA * PAGE, vec))
			die("mincore");
		for (j = 0; j < SPARSE_DATA; j++)
			left += vec[j] & 1;
	}
	if (left > c->ops * SPARSE_DATA / 100) {
		fprintf(stderr, "icount-work: sparseout: %ld of %ld data pages still resident (swap on?)\n",
			left, c->ops * SPARSE_DATA);
		exit(1);
	}
	unmap_thps(c);
}

/* splitzero: one op = split_huge_page() of a THP whose first byte only is
 * not zero (511 of 512 subpages zero), through debugfs's split_huge_pages
 * ("PID,START,END": it walks the range's 512 addresses and splits the THP
 * at the first); mmtune's split_zero (mode always) then maps the zero page
 * for the zero subpages and frees them. Needs debugfs at /sys/kernel/debug.
 */
static void splitzero_setup(struct ctx *c)
{
	map_thps(c);
	check_thps(c, "splitzero");
	c->fd = open("/sys/kernel/debug/split_huge_pages", O_WRONLY);
	if (c->fd < 0)
		die("/sys/kernel/debug/split_huge_pages");
}

static void splitzero_run(struct ctx *c)
{
	char cmd[64];
	long i;
	int n;

	for (i = 0; i < c->ops; i++) {
		n = snprintf(cmd, sizeof(cmd), "%d,0x%lx,0x%lx", getpid(),
			     (unsigned long)(c->buf + i * THP),
			     (unsigned long)(c->buf + (i + 1) * THP));
		if (write(c->fd, cmd, n) != n)
			die("write split_huge_pages");
	}
}

static void splitzero_teardown(struct ctx *c)
{
	if (anon_huge_kb()) {
		fprintf(stderr, "icount-work: splitzero: THPs left after the split\n");
		exit(1);
	}
	close(c->fd);
	unmap_thps(c);
}

/* crosscpu: one op = one page faulted in by this thread on CPU 0 and freed
 * (MADV_DONTNEED) by another on CPU 1, in chunks of CROSS_CHUNK pages and
 * two buffers: allocations drain CPU 0's pcp list, frees fill CPU 1's, so
 * both go to the zone (zone->lock) as often as pcp high and batch make
 * them. Needs 2 vCPUs (run.sh --smp 2).
 */
#define CROSS_CHUNK	256

static long cross_made, cross_freed;	/* chunks, __atomic */

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity (2 vCPUs?)");
}

static void wait_for(long *v, long want)
{
	while (__atomic_load_n(v, __ATOMIC_ACQUIRE) < want)
		__builtin_ia32_pause();
}

static void *cross_freer(void *arg)
{
	struct ctx *c = arg;
	long k, chunks = c->ops / CROSS_CHUNK;

	pin(1);
	for (k = 0; k < chunks; k++) {
		wait_for(&cross_made, k + 1);
		if (madvise(c->buf + (k % 2) * CROSS_CHUNK * PAGE,
			    CROSS_CHUNK * PAGE, MADV_DONTNEED))
			die("madvise(MADV_DONTNEED)");
		__atomic_store_n(&cross_freed, k + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void crosscpu_setup(struct ctx *c)
{
	if (c->ops % CROSS_CHUNK) {
		fprintf(stderr, "icount-work: crosscpu: ops must be a multiple of %d\n",
			CROSS_CHUNK);
		exit(2);
	}
	pin(0);
	c->buf = map_anon(2 * CROSS_CHUNK * PAGE);
}

static void crosscpu_run(struct ctx *c)
{
	long k, i, chunks = c->ops / CROSS_CHUNK;
	pthread_t t;

	__atomic_store_n(&cross_made, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&cross_freed, 0, __ATOMIC_RELEASE);
	if (pthread_create(&t, NULL, cross_freer, c))
		die("pthread_create");
	for (k = 0; k < chunks; k++) {
		char *p = c->buf + (k % 2) * CROSS_CHUNK * PAGE;

		wait_for(&cross_freed, k - 1);
		for (i = 0; i < CROSS_CHUNK; i++)
			p[i * PAGE] = 1;
		__atomic_store_n(&cross_made, k + 1, __ATOMIC_RELEASE);
	}
	pthread_join(t, NULL);
}

static void crosscpu_teardown(struct ctx *c)
{
	if (munmap(c->buf, 2 * CROSS_CHUNK * PAGE))
		die("munmap");
}

/* repstos: one op = "rep stosb" of 4096 bytes and "rep stosq" of 512
 * quadwords in user space, to calibrate how string instructions count
 * (QEMU 7.2 counts every iteration: user/op is 4617, not about 10)
 */
static void repstos_setup(struct ctx *c)
{
	c->buf = map_anon(PAGE);
	c->buf[0] = 1;
}

static void repstos_run(struct ctx *c)
{
	long i;

	for (i = 0; i < c->ops; i++) {
		void *d = c->buf;
		unsigned long n = PAGE;

		asm volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(0) : "memory");
		d = c->buf;
		n = PAGE / 8;
		asm volatile("rep stosq" : "+D"(d), "+c"(n) : "a"(0) : "memory");
	}
}

struct phase {
	unsigned int id;	/* mark ID, 1..255, stable */
	const char *name;
	const char *what;	/* what one op is */
	void (*setup)(struct ctx *c);
	void (*run)(struct ctx *c);
	void (*teardown)(struct ctx *c);
};

static const struct phase phases[] = {
	{ 1, "fault4k", "4K anonymous write fault (mmap, touch, munmap)",
	  nothing, fault4k_run, nothing },
	{ 2, "allocfree", "page alloc+free: mmap 1 page, touch, munmap",
	  nothing, allocfree_run, nothing },
	{ 3, "dontneed", "page alloc+free: touch, MADV_DONTNEED",
	  dontneed_setup, dontneed_run, dontneed_teardown },
	{ 4, "pageout", "swap-out of a dirty anon page (MADV_PAGEOUT)",
	  pageout_setup, pageout_run, pageout_teardown },
	{ 5, "swapin", "swap-in read fault",
	  swapin_setup, swapin_run, unmap_buf },
	{ 6, "repstos", "user rep stosb of 4096 bytes + rep stosq of 512 quadwords",
	  repstos_setup, repstos_run, dontneed_teardown },
	{ 7, "thpout", "swap-out of a dirty anon THP (MADV_PAGEOUT), 2:1 data",
	  thpout_setup, thpout_run, thpout_teardown },
	{ 8, "splitzero", "split of a THP with 511 zero subpages (debugfs split_huge_pages)",
	  splitzero_setup, splitzero_run, splitzero_teardown },
	{ 9, "crosscpu", "page faulted in on CPU 0, freed on CPU 1 (needs --smp 2)",
	  crosscpu_setup, crosscpu_run, crosscpu_teardown },
	{ 10, "sparseout", "swap-out of a THP with 16 data subpages, 496 zero (MADV_PAGEOUT)",
	  sparseout_setup, thpout_run, sparseout_teardown },
	{ 11, "thp16out", "swap-out of a dirty anon 16K folio (MADV_PAGEOUT), 2:1 data",
	  thp16out_setup, mthpout_run, mthpout_teardown },
	{ 12, "thp64out", "swap-out of a dirty anon 64K folio (MADV_PAGEOUT), 2:1 data",
	  thp64out_setup, mthpout_run, mthpout_teardown },
	{ 13, "faultthp", "write fault allocating an anon 2M THP (zeroed)",
	  faultthp_setup, faultfolio_run, faultfolio_teardown },
	{ 14, "fault64k", "write fault allocating an anon 64K folio (zeroed)",
	  fault64k_setup, faultfolio_run, faultfolio_teardown },
	{ 15, "fault16k", "write fault allocating an anon 16K folio (zeroed)",
	  fault16k_setup, faultfolio_run, faultfolio_teardown },
	{ 16, "thpbadout", "swap-out of a dirty anon THP (MADV_PAGEOUT), 2:1 data, last page random",
	  thpbadout_setup, thpout_run, thpout_teardown },
	{ 17, "thp16in", "swap-in of a 16K folio swapped out whole (read faults on its 4 pages)",
	  thp16in_setup, mthpin_run, mthpin_teardown },
	{ 18, "thp64in", "swap-in of a 64K folio swapped out whole (read faults on its 16 pages)",
	  thp64in_setup, mthpin_run, mthpin_teardown },
};

#define NPHASES ARRAY_SIZE(phases)

static const struct phase *find_phase(const char *name)
{
	size_t i;

	for (i = 0; i < NPHASES; i++)
		if (!strcmp(phases[i].name, name))
			return &phases[i];
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: icount-work [-n OPS] [-r ROUNDS] [-w WARMUP] PHASE...\n"
		"       icount-work --list | --marks\n");
	exit(2);
}

static long number(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || *end || v < 0)
		usage();
	return v;
}

/* Let the serial port drain, so its interrupts land before the region. */
static void settle(void)
{
	fflush(stdout);
	fflush(stderr);
	tcdrain(STDOUT_FILENO);
	usleep(10000);
}

int main(int argc, char **argv)
{
	const struct phase *run[NPHASES];
	long ops = 16384, rounds = 4, warmup = 1, r;
	int opt, nrun = 0, i;
	size_t k;

	if (argc == 2 && !strcmp(argv[1], "--list")) {
		for (k = 0; k < NPHASES; k++)
			printf("%u %s %s\n", phases[k].id, phases[k].name,
			       phases[k].what);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "--marks")) {
		printf("%p\n", (const void *)icount_marks);
		return 0;
	}
	while ((opt = getopt(argc, argv, "n:r:w:")) != -1) {
		switch (opt) {
		case 'n':
			ops = number(optarg);
			break;
		case 'r':
			rounds = number(optarg);
			break;
		case 'w':
			warmup = number(optarg);
			break;
		default:
			usage();
		}
	}
	if (optind == argc || argc - optind > (int)NPHASES || !ops)
		usage();
	for (i = optind; i < argc; i++) {
		run[nrun] = find_phase(argv[i]);
		if (!run[nrun]) {
			fprintf(stderr, "icount-work: no phase %s (--list)\n", argv[i]);
			return 2;
		}
		nrun++;
	}

	printf("icount-work: marks %p ops %ld rounds %ld warmup %ld\n",
	       (const void *)icount_marks, ops, rounds, warmup);
	for (r = 0; r < warmup + rounds; r++) {
		for (i = 0; i < nrun; i++) {
			struct ctx c = { .ops = ops };

			run[i]->setup(&c);
			settle();
			mark(0);
			run[i]->run(&c);
			mark(r < warmup ? 0 : run[i]->id);
			run[i]->teardown(&c);
		}
	}
	printf("icount-work: done\n");
	settle();
	return 0;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * uffd_wp_split: userfaultfd write-protection survives a THP split that
 * maps the zero page for zero subpages (mmtune split_zero).
 *
 *   uffd_wp_split [--thps N] [--split debugfs|pageout] [--seed S]
 *
 * N THPs, every 8th subpage filled with data and the rest left zero, are
 * registered for userfaultfd write-protect faults and write-protected
 * whole (the uffd-wp bit on each PMD). Then they are split, by debugfs
 * split_huge_pages or by MADV_PAGEOUT (with thp_swap's split policy the
 * split happens in reclaim and the data subpages go to swap). Checked:
 *  - every subpage of the region still carries the uffd-wp bit (pagemap
 *    bit 57), whether it now maps the zero page, its own page, or swap;
 *  - zero subpages map the shared zero page (the split dropped them);
 *  - a write to a formerly zero subpage and to a data subpage of each THP
 *    is delivered as a write-protect fault on the userfaultfd, at that
 *    address, before the write lands (a handler thread un-protects the
 *    page to let it go on);
 *  - afterwards every byte is what was written.
 *
 * Exit status: 0 pass, 1 fail, 4 skip (no userfaultfd or split_huge_pages).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TESTPROG "uffd_wp_split"
#include "testprog.h"

#define NR_SUBPAGES	(THP_SZ / PAGE_SZ)
#define DATA_EVERY	8

enum { SPLIT_DEBUGFS, SPLIT_PAGEOUT };
static const char *const split_names[] = { "debugfs", "pageout", NULL };

static struct {
	unsigned long thps;
	unsigned int split;
	uint64_t seed;
} o = { .thps = 8, .seed = 50 };

static char *region;
static size_t npages;
static int uffd, pagemap_fd;
static volatile uint64_t faults, last_fault_addr, bad_faults;
static volatile bool stop;

static bool is_data(size_t p)
{
	return p % DATA_EVERY == 0;
}

static void wp_range(void *addr, size_t len, bool protect)
{
	struct uffdio_writeprotect wp = {
		.range = { .start = (uintptr_t)addr, .len = len },
		.mode = protect ? UFFDIO_WRITEPROTECT_MODE_WP : 0,
	};

	if (ioctl(uffd, UFFDIO_WRITEPROTECT, &wp))
		die(KSFT_FAIL, "UFFDIO_WRITEPROTECT(%d): %s", protect, strerror(errno));
}

/* Each write-protect fault: record it, then un-protect the page (wakes). */
static void *handler(void *arg)
{
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	struct uffd_msg m;

	(void)arg;
	while (!stop) {
		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (read(uffd, &m, sizeof(m)) != sizeof(m))
			continue;
		if (m.event != UFFD_EVENT_PAGEFAULT ||
		    !(m.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP)) {
			bad_faults++;
			continue;
		}
		last_fault_addr = m.arg.pagefault.address & ~(PAGE_SZ - 1);
		__atomic_add_fetch(&faults, 1, __ATOMIC_SEQ_CST);
		wp_range((void *)(uintptr_t)last_fault_addr, PAGE_SZ, false);
	}
	return NULL;
}

static unsigned char byte_of(size_t p)
{
	return (unsigned char)(1 + random_word(o.seed, p, 0) % 255);
}

static void split(void)
{
	char cmd[128];
	int fd, len;

	if (o.split == SPLIT_PAGEOUT) {
		if (madvise(region, npages * PAGE_SZ, MADV_PAGEOUT))
			die(KSFT_FAIL, "MADV_PAGEOUT: %s", strerror(errno));
		return;
	}
	fd = open("/sys/kernel/debug/split_huge_pages", O_WRONLY);
	if (fd < 0)
		die(KSFT_SKIP, "no /sys/kernel/debug/split_huge_pages: %s", strerror(errno));
	len = snprintf(cmd, sizeof(cmd), "%d,0x%lx,0x%lx", getpid(),
		       (unsigned long)region, (unsigned long)(region + npages * PAGE_SZ));
	if (write(fd, cmd, len) != len)
		die(KSFT_FAIL, "split_huge_pages: %s", strerror(errno));
	close(fd);
}

/* Write @val to byte 7 of subpage @p: must fault once, at that page. */
static bool write_expect_fault(size_t p, unsigned char val)
{
	uint64_t before = faults;
	char *addr = region + p * PAGE_SZ;

	((volatile char *)addr)[7] = val;
	if (faults != before + 1 || last_fault_addr != (uintptr_t)addr) {
		msg("FAIL: write to subpage %zu (%s): %" PRIu64 " write-protect faults, last at %#" PRIx64
		    ", expected 1 at %p", p, is_data(p) ? "data" : "formerly zero",
		    faults - before, last_fault_addr, (void *)addr);
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	const struct testopt opts[] = {
		OPT("thps", &o.thps), OPT_CHOICE("split", &o.split, split_names),
		OPT("seed", &o.seed),
	};
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
	size_t wp = 0, zero = 0, swapped = 0, bad = 0, nwrites = 0;
	uint64_t zpfn, ahp_kib = 0;
	pthread_t th;
	char *raw, line[256];
	bool ok = true;
	FILE *f;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse_testopts(argc, argv, 1, opts, ARRAY_SIZE(opts)) < 0)
		die(KSFT_FAIL, "usage: uffd_wp_split [--thps N] [--split debugfs|pageout] [--seed S]");
	npages = o.thps * NR_SUBPAGES;
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap_fd < 0)
		die(KSFT_FAIL, "/proc/self/pagemap: %s", strerror(errno));
	zpfn = zero_pfn(pagemap_fd);

	raw = mmap(NULL, (o.thps + 1) * THP_SZ, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		die(KSFT_FAIL, "mmap: %s", strerror(errno));
	region = (char *)(((uintptr_t)raw + THP_SZ - 1) & ~(THP_SZ - 1));
	if (madvise(region, npages * PAGE_SZ, MADV_HUGEPAGE))
		die(KSFT_FAIL, "MADV_HUGEPAGE: %s", strerror(errno));
	for (size_t p = 0; p < npages; p++)
		if (is_data(p))
			fill_page((uint64_t *)(region + p * PAGE_SZ), FILL_COMPRESSIBLE, o.seed, p);
	f = fopen("/proc/self/smaps_rollup", "r");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "AnonHugePages: %" SCNu64 " kB", &ahp_kib);
	if (f)
		fclose(f);
	if (ahp_kib < o.thps * (THP_SZ >> 10))
		die(KSFT_SKIP, "only %" PRIu64 " kB of THPs for %lu THPs", ahp_kib, o.thps);
	/* No khugepaged collapse after the split. */
	madvise(region, npages * PAGE_SZ, MADV_NOHUGEPAGE);

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		die(errno == ENOSYS ? KSFT_SKIP : KSFT_FAIL, "userfaultfd: %s", strerror(errno));
	if (ioctl(uffd, UFFDIO_API, &api))
		die(KSFT_FAIL, "UFFDIO_API: %s", strerror(errno));
	if (!(api.features & UFFD_FEATURE_PAGEFAULT_FLAG_WP))
		die(KSFT_SKIP, "no userfaultfd write-protect (features %#llx)",
		    (unsigned long long)api.features);
	reg.range.start = (uintptr_t)region;
	reg.range.len = npages * PAGE_SZ;
	if (ioctl(uffd, UFFDIO_REGISTER, &reg))
		die(KSFT_FAIL, "UFFDIO_REGISTER (WP): %s", strerror(errno));
	wp_range(region, npages * PAGE_SZ, true);
	if (pthread_create(&th, NULL, handler, NULL))
		die(KSFT_FAIL, "pthread_create");
	msg("%lu THPs, every %dth subpage data, write-protected; split by %s",
	    o.thps, DATA_EVERY, o.split == SPLIT_PAGEOUT ? "MADV_PAGEOUT" : "debugfs split_huge_pages");

	split();

	for (size_t p = 0; p < npages; p++) {
		uint64_t e = pagemap_entry(pagemap_fd, region + p * PAGE_SZ);

		wp += !!(e & PM_UFFD_WP);
		swapped += !!(e & PM_SWAP);
		if (!is_data(p) && (e & PM_PRESENT) && (e & PM_PFN_MASK) == zpfn)
			zero++;
	}
	printf("after_split: uffd_wp=%zu zero_mapped=%zu swapped=%zu pages=%zu\n",
	       wp, zero, swapped, npages);
	if (wp != npages) {
		msg("FAIL: %zu of %zu subpages lost the uffd-wp bit in the split", npages - wp, npages);
		ok = false;
	}

	/* One formerly zero and one data subpage of each THP. */
	for (unsigned long i = 0; i < o.thps; i++) {
		size_t pz = i * NR_SUBPAGES + 3, pd = i * NR_SUBPAGES + DATA_EVERY * 5;

		ok &= write_expect_fault(pz, byte_of(pz));
		ok &= write_expect_fault(pd, byte_of(pd));
		nwrites += 2;
	}
	stop = true;
	pthread_join(th, NULL);
	if (bad_faults) {
		msg("FAIL: %" PRIu64 " userfaultfd events that are not write-protect faults", bad_faults);
		ok = false;
	}
	msg("%zu writes, %" PRIu64 " write-protect faults delivered", nwrites, faults);

	for (size_t p = 0; p < npages; p++) {
		const unsigned char *pg = (unsigned char *)region + p * PAGE_SZ;
		bool written = p % NR_SUBPAGES == 3 || p % NR_SUBPAGES == DATA_EVERY * 5;

		for (size_t b = 0; b < PAGE_SZ; b++) {
			unsigned char want;

			if (written && b == 7)
				want = byte_of(p);
			else if (is_data(p))
				want = (unsigned char)(pattern_word(FILL_COMPRESSIBLE, o.seed, p, b / 8) >> (8 * (b % 8)));
			else
				want = 0;
			if (pg[b] != want && bad++ < 8)
				msg("page %zu byte %zu is %#x, expected %#x", p, b, pg[b], want);
		}
	}
	if (bad) {
		msg("FAIL: %zu bytes differ", bad);
		ok = false;
	}
	if (!ok)
		return KSFT_FAIL;
	msg("PASS: every subpage kept uffd-wp, every write faulted first, every byte as written");
	return KSFT_PASS;
}

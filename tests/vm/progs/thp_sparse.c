// SPDX-License-Identifier: GPL-2.0
/*
 * thp_sparse: THPs with only some subpages holding data, pushed out with
 * MADV_PAGEOUT, then checked (the experiment of the zero-subpage series:
 * mmap, MADV_HUGEPAGE, dirty N of the 512 subpages of every THP at a given
 * byte offset, MADV_PAGEOUT).
 *
 *   thp_sparse --size MIB --dirty N [--offset BYTE] [--seed S]
 *              [--split-debugfs] [--cow] [--fork] [--soft-dirty]
 *              [--migrate] [--no-pageout] [--loops N]
 *
 * Each dirty subpage gets one non-zero byte at BYTE (the seed's "memset 1
 * byte"), whose value depends on the subpage and the seed. After the
 * pageout it prints one line "deltas: k=v ..." with the vmstat deltas,
 * how many subpages map the shared zero page (/proc/self/pagemap), and the
 * seconds the pageout took, then (unless told otherwise) reads everything
 * back: the dirty bytes must hold what was written and every other byte
 * must be zero. Options exercise the zero-page mappings further:
 *   --split-debugfs  split the THPs with debugfs split_huge_pages instead
 *                    of paging out (a split that is not reclaim)
 *   --cow            write to subpages that map the zero page: each must
 *                    get a fresh page, and the zero page must stay zero
 *   --fork           a child checks the data, writes to zero-page
 *                    subpages; the parent must not see the child's writes
 *   --soft-dirty     the soft-dirty bit of every subpage survives
 *                    (/proc/self/pagemap bit 55); skip if the kernel lacks
 *                    CONFIG_MEM_SOFT_DIRTY
 *   --migrate        migrate the region (move_pages() to another node if
 *                    there is one, else compaction), then check
 *   --mlock          mlock the region after writing it (no zero page may be
 *                    mapped into it)
 * For benchmarks: --wait-writeback counts the time until the writes have
 * completed (vmstat nr_writeback back to where it was) in pageout_s, and
 * --no-verify skips the read back.
 *
 * Exit status: 0 pass, 1 fail, 4 skip (kselftest convention).
 */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <sys/wait.h>

#define TESTPROG "thp_sparse"
#include "testprog.h"

#define SUBPAGES	512
#ifndef MPOL_MF_MOVE
#define MPOL_MF_MOVE	(1 << 1)
#endif

static struct {
	unsigned long size_mib, dirty, offset, loops;
	uint64_t seed;
	bool split_debugfs, cow, fork, soft_dirty, migrate, no_pageout;
	bool wait_writeback, no_verify, mlock;
} o = { .size_mib = 64, .dirty = 1, .loops = 1, .seed = 1 };

static char *region;
static size_t size, npages;
static int pagemap_fd = -1;

/* Is subpage @p (index in the region) one that holds data? */
static bool is_dirty(size_t p)
{
	return p % SUBPAGES < o.dirty;
}

static unsigned char byte_of(size_t p)
{
	return (unsigned char)(1 + random_word(o.seed, p, 0) % 255);
}

/* The vmstat counters it reports, or dies. */
static void counters(const char *const *keys, uint64_t *vals, size_t n)
{
	if (vmstat_read(keys, vals, n))
		die(KSFT_FAIL, "/proc/vmstat: %s", strerror(errno));
}

static uint64_t nr_writeback(void)
{
	static const char *const key = "nr_writeback";
	uint64_t val;

	counters(&key, &val, 1);
	return val;
}

/* Subpages that map the shared zero page; also counts the soft-dirty ones. */
static size_t count_zero_mapped(uint64_t zpfn, size_t *soft_dirty)
{
	size_t n = 0, sd = 0;

	for (size_t p = 0; p < npages; p++) {
		uint64_t e = pagemap_entry(pagemap_fd, region + p * PAGE_SZ);

		if ((e & PM_PRESENT) && (e & PM_PFN_MASK) == zpfn)
			n++;
		if (e & PM_SOFT_DIRTY)
			sd++;
	}
	if (soft_dirty)
		*soft_dirty = sd;
	return n;
}

/* Every dirty byte as written, every other byte zero. Returns mismatches. */
static size_t verify(const char *who)
{
	static const unsigned char zeroes[PAGE_SZ];
	size_t bad = 0;

	for (size_t p = 0; p < npages; p++) {
		const unsigned char *pg = (unsigned char *)region + p * PAGE_SZ;

		if (!is_dirty(p) ? !memcmp(pg, zeroes, PAGE_SZ) :
		    pg[o.offset] == byte_of(p) && !memcmp(pg, zeroes, o.offset) &&
		    !memcmp(pg + o.offset + 1, zeroes, PAGE_SZ - o.offset - 1))
			continue;
		for (size_t b = 0; b < PAGE_SZ; b++) {
			unsigned char want = is_dirty(p) && b == o.offset ?
					     byte_of(p) : 0;

			if (pg[b] == want)
				continue;
			if (bad++ < 8)
				msg("%s: page %zu byte %zu is %#x, expected %#x",
				    who, p, b, pg[b], want);
		}
	}
	return bad;
}

/* Split every THP of the region with debugfs split_huge_pages. */
static void split_debugfs(void)
{
	char cmd[128];
	int fd = open("/sys/kernel/debug/split_huge_pages", O_WRONLY);
	int len;

	if (fd < 0)
		die(KSFT_SKIP, "no /sys/kernel/debug/split_huge_pages: %s",
		    strerror(errno));
	len = snprintf(cmd, sizeof(cmd), "%d,0x%lx,0x%lx", getpid(),
		       (unsigned long)region, (unsigned long)(region + size));
	if (write(fd, cmd, len) != len)
		die(KSFT_FAIL, "split_huge_pages: %s", strerror(errno));
	close(fd);
}

/* Write to zero-page subpages: each gets its own page, zeroes elsewhere. */
static size_t cow_check(uint64_t zpfn, const char *who, unsigned char val)
{
	size_t written = 0, bad = 0;

	for (size_t p = 0; p < npages; p++) {
		char *pg = region + p * PAGE_SZ;
		uint64_t e = pagemap_entry(pagemap_fd, pg);

		if (is_dirty(p) || !(e & PM_PRESENT) ||
		    (e & PM_PFN_MASK) != zpfn)
			continue;
		pg[PAGE_SZ - 1] = (char)val;
		e = pagemap_entry(pagemap_fd, pg);
		if ((e & PM_PFN_MASK) == zpfn) {
			if (bad++ < 8)
				msg("%s: page %zu still maps the zero page after a write", who, p);
		}
		if (++written >= 64)
			break;
	}
	/* The zero page itself must still read zero. */
	if (zero_pfn(pagemap_fd) != zpfn)
		msg("%s: the zero page moved?", who);
	{
		volatile unsigned char *z = mmap(NULL, PAGE_SZ, PROT_READ,
						 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		for (size_t b = 0; b < PAGE_SZ; b++)
			if (z[b]) {
				msg("%s: the shared zero page holds %#x at %zu", who, z[b], b);
				bad++;
				break;
			}
		munmap((void *)z, PAGE_SZ);
	}
	msg("%s: wrote %zu zero-page subpages", who, written);
	if (!written)
		bad++, msg("%s: no zero-page subpage to write to", who);
	return bad;
}

/* Undo cow_check()'s writes so that verify() expects zeroes again. */
static void cow_undo(void)
{
	for (size_t p = 0; p < npages; p++)
		if (!is_dirty(p) && region[p * PAGE_SZ + PAGE_SZ - 1])
			region[p * PAGE_SZ + PAGE_SZ - 1] = 0;
}

/* Clear the soft-dirty bit of every page of this process, or die with @code. */
static void clear_soft_dirty(int code)
{
	int ret = write_file("/proc/self/clear_refs", "4");

	if (ret)
		die(code, "clear_refs: %s", strerror(-ret));
}

static int numa_nodes(void)
{
	int n = 0;
	char path[64];

	for (;;) {
		snprintf(path, sizeof(path), "/sys/devices/system/node/node%d", n);
		if (access(path, F_OK))
			return n;
		n++;
	}
}

static void migrate(void)
{
	if (numa_nodes() > 1) {
		size_t n = npages;
		void **pages = calloc(n, sizeof(void *));
		int *nodes = calloc(n, sizeof(int)), *status = calloc(n, sizeof(int));
		size_t moved = 0;

		for (size_t p = 0; p < n; p++) {
			pages[p] = region + p * PAGE_SZ;
			nodes[p] = 1;
		}
		if (syscall(SYS_move_pages, 0, n, pages, nodes, status, MPOL_MF_MOVE))
			die(KSFT_FAIL, "move_pages: %s", strerror(errno));
		for (size_t p = 0; p < n; p++)
			moved += status[p] == 1;
		msg("move_pages: %zu of %zu subpages now on node 1", moved, n);
		free(pages), free(nodes), free(status);
	} else {
		int ret = write_file("/proc/sys/vm/compact_memory", "1");

		if (ret)
			die(KSFT_FAIL, "compact_memory: %s", strerror(-ret));
		msg("one NUMA node: compacted memory instead of move_pages");
	}
}

static void parse(int argc, char **argv)
{
	static const struct testopt opts[] = {
		OPT("size", &o.size_mib), OPT("dirty", &o.dirty),
		OPT("offset", &o.offset), OPT("seed", &o.seed),
		OPT("loops", &o.loops),
		OPT_FLAG("split-debugfs", &o.split_debugfs, true),
		OPT_FLAG("cow", &o.cow, true), OPT_FLAG("fork", &o.fork, true),
		OPT_FLAG("soft-dirty", &o.soft_dirty, true),
		OPT_FLAG("migrate", &o.migrate, true),
		OPT_FLAG("no-pageout", &o.no_pageout, true),
		OPT_FLAG("wait-writeback", &o.wait_writeback, true),
		OPT_FLAG("no-verify", &o.no_verify, true),
		OPT_FLAG("mlock", &o.mlock, true),
	};

	if (parse_testopts(argc, argv, 1, opts, ARRAY_SIZE(opts)) < 0)
		die(KSFT_FAIL, "bad arguments");
	if (!o.size_mib || o.size_mib % 2 || o.dirty > SUBPAGES ||
	    o.offset >= PAGE_SZ || !o.loops)
		die(KSFT_FAIL, "need --size even MiB, --dirty 0..512, --offset 0..4095");
}

int main(int argc, char **argv)
{
	static const char *const keys[] = { "pswpout", "pswpin", "zswpout", "thp_swpout",
					    "thp_swpout_fallback", "thp_split_page" };
	enum { NK = ARRAY_SIZE(keys) };
	uint64_t before[NK], after[NK], wb0 = 0;
	size_t thps, dirty_pages = 0, zero_mapped, sd_before = 0, sd_after = 0;
	uint64_t zpfn;
	double secs = 0, fault_secs, t;
	void *raw;

	parse(argc, argv);
	setvbuf(stdout, NULL, _IOLBF, 0);
	size = o.size_mib << 20;
	npages = size / PAGE_SZ;
	pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
	if (pagemap_fd < 0)
		die(KSFT_FAIL, "/proc/self/pagemap: %s", strerror(errno));
	zpfn = zero_pfn(pagemap_fd);

	for (unsigned long loop = 0; loop < o.loops; loop++) {
		region = mmap_thp_aligned(size, &raw);
		if (!region)
			die(KSFT_FAIL, "mmap: %s", strerror(errno));
		if (madvise(region, size, MADV_HUGEPAGE))
			die(KSFT_FAIL, "MADV_HUGEPAGE: %s", strerror(errno));
		if (o.soft_dirty)
			clear_soft_dirty(KSFT_SKIP);	/* the writes set it again */

		t = now();
		dirty_pages = 0;
		for (size_t p = 0; p < npages; p++) {
			if (is_dirty(p)) {
				region[p * PAGE_SZ + o.offset] = (char)byte_of(p);
				dirty_pages++;
			} else if (p % SUBPAGES == 0) {
				/* Fault the THP in without data in this subpage. */
				region[p * PAGE_SZ + o.offset] = 0;
			}
		}
		fault_secs = now() - t;
		/*
		 * The THPs exist now. Keep khugepaged away from the region:
		 * with max_ptes_none at its default of 511 it would collapse a
		 * range of zero-page PTEs back into a THP at any moment, and
		 * the counts below would depend on its timing.
		 */
		if (madvise(region, size, MADV_NOHUGEPAGE))
			die(KSFT_FAIL, "MADV_NOHUGEPAGE: %s", strerror(errno));
		if (o.mlock && mlock(region, size))
			die(KSFT_FAIL, "mlock: %s", strerror(errno));
		thps = proc_kib("/proc/self/smaps_rollup", "AnonHugePages") / 2048;

		count_zero_mapped(zpfn, &sd_before);
		if (o.soft_dirty && sd_before < npages)
			die(KSFT_SKIP, "only %zu of %zu subpages soft-dirty after writing (no CONFIG_MEM_SOFT_DIRTY?)",
			    sd_before, npages);

		counters(keys, before, NK);
		wb0 = nr_writeback();
		t = now();
		if (o.split_debugfs)
			split_debugfs();
		else if (!o.no_pageout && madvise(region, size, MADV_PAGEOUT))
			die(KSFT_FAIL, "MADV_PAGEOUT: %s", strerror(errno));
		while (o.wait_writeback && nr_writeback() > wb0)
			usleep(1000);
		secs = now() - t;
		counters(keys, after, NK);
		zero_mapped = count_zero_mapped(zpfn, &sd_after);

		printf("deltas: thps=%zu dirty_pages=%zu pages=%zu zero_mapped=%zu soft_dirty=%zu rss_anon_kib=%zu",
		       thps, dirty_pages, npages, zero_mapped, sd_after,
		       /* MM_ANONPAGES, which the zero-page remap lowers */
		       (size_t)proc_kib("/proc/self/status", "RssAnon"));
		for (int k = 0; k < NK; k++)
			printf(" %s=%" PRIu64, keys[k], after[k] - before[k]);
		printf(" fault_s=%.3f pageout_s=%.3f\n", fault_secs, secs);

		if (loop + 1 < o.loops) {
			munmap(raw, size + THP_SZ);
			continue;
		}

		if (o.soft_dirty && sd_after != npages)
			die(KSFT_FAIL, "soft-dirty: %zu of %zu subpages kept the bit after the pageout",
			    sd_after, npages);
		if (o.cow) {
			if (cow_check(zpfn, "cow", 0x5a))
				die(KSFT_FAIL, "copy on write of zero-page subpages");
			cow_undo();
		}
		if (o.fork) {
			pid_t pid = fork();
			int status;

			if (pid < 0)
				die(KSFT_FAIL, "fork: %s", strerror(errno));
			if (!pid) {
				size_t bad;

				/* /proc/self was the parent when it was opened. */
				close(pagemap_fd);
				pagemap_fd = open("/proc/self/pagemap", O_RDONLY);
				bad = verify("child");

				if (!bad)
					bad = cow_check(zpfn, "child", 0xa5);
				_exit(bad ? 1 : 0);
			}
			if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
			    WEXITSTATUS(status))
				die(KSFT_FAIL, "the child found bad data or a bad copy on write");
			msg("fork: the child read its data and wrote zero-page subpages");
		}
		if (o.migrate)
			migrate();
		if (!o.no_verify) {
			size_t bad = verify("read back");

			if (bad)
				die(KSFT_FAIL, "%zu bytes differ", bad);
		}
		if (o.soft_dirty) {
			clear_soft_dirty(KSFT_FAIL);
			count_zero_mapped(zpfn, &sd_after);
			if (sd_after)
				die(KSFT_FAIL, "soft-dirty: %zu subpages still soft-dirty after clear_refs",
				    sd_after);
			msg("soft-dirty: every subpage kept the bit, clear_refs cleared it");
		}
		if (!o.no_verify)
			msg("every byte as written (%zu dirty subpages, the rest zero)",
			    dirty_pages);
	}
	return KSFT_PASS;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * zswap_stale: a THP stored in zswap whole, dirtied again while it is still
 * in the swap cache, then written to the swap device by the stock path,
 * must never read back the old data from zswap.
 *
 * The kernel reaches that state when something holds a reference to the
 * folio while reclaim stores it: reclaim then cannot free the folio, which
 * stays in the swap cache, and a fault maps a subpage of it again. The
 * test module swapcache_pin.ko (tests/kmod) takes that reference right
 * after swap_writepage(), so the state is reached every time. This program
 * pages its THP out (MADV_PAGEOUT; the module pins it), proves from
 * /proc/self/pagemap and /proc/kpageflags that the folio stayed in the
 * swap cache, writes new bytes to subpage K (the fault maps the folio's
 * own subpage), lets the test script switch the feature off or unload
 * mmtune, drops the pin, has memcg reclaim write the whole folio out again
 * by the stock path, and reads everything back. The module counts the
 * zswap entries dropped and loaded at the folio's offsets: with the
 * series' fix (6.1: patch 0003; 6.12: patch 0002) the stock write drops
 * all 512 and the read-back loads none; without it the write drops the
 * head's only (6.1) or none (6.12), and the read-back loads the tails'
 * old data from zswap.
 *
 * K = 0 (the head) is what 6.1 does as it is. A fault on a tail is mapped
 * from the swap cache only in a kernel without CONFIG_KSM (see
 * swapcache_pin.c); for K >= 3 the module makes it so for that tail, and
 * without the fix subpage K then reads back its old bytes. 6.12 maps the
 * whole swap cache folio again on the first fault, tails included (its
 * pin has no tail_index file, and none is needed).
 *
 * --zero (kernels with a swap zeromap, 6.12): the whole THP is zeroed
 * instead, so that the next write puts it in the zeromap without
 * zswap_store(). Its old entries must be dropped all the same: otherwise
 * zswap writeback (the memcg shrinker, switched on once the folio has
 * left the swap cache and run through memory.reclaim) brings the old
 * bytes back into the swap cache, ahead of the zeromap, and the read-back
 * maps them instead of zeros. The test keeps the shrinker off before.
 *
 * --exit KB: the slots of a KB folio stored whole are freed while it is
 * still in the swap cache: a child process faults it, pages it out (the
 * module pins it) and exits. Its zswap entries must all be dropped with
 * the slots (put_swap_folio()'s whole-range path), not leak until the
 * slots are reused.
 *
 *   zswap_stale --hold DIR --pin DIR [--subpage 0|3..511] [--zero] [--attempts N]
 *   zswap_stale --pin DIR --exit KB
 *
 * --pin is swapcache_pin's debugfs directory; --attempts bounds the tries
 * to get a THP at all. Exit status: 0 pass, 1 fail.
 */
#define _GNU_SOURCE
#include <sys/stat.h>
#include <sys/wait.h>

#define TESTPROG "zswap_stale"
#include "testprog.h"

#define NR_SUBPAGES	(THP_SZ / PAGE_SZ)

#define KPF_MMAP	11
#define KPF_SWAPCACHE	13
#define KPF_THP		22

/* Generation A is the THP's first content, B the new content of subpage
 * K: the two differ in every word. */
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

/* A number from a debugfs or sysfs file; exits if it cannot be read. */
static uint64_t read_num(const char *dir, const char *name)
{
	char path[256];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%llu", &v) != 1)
		die(KSFT_FAIL, "cannot read %s: %s", path, strerror(errno));
	fclose(f);
	return v;
}

static void write_num(const char *dir, const char *name, uint64_t v)
{
	char path[256];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ret = write_file(path, "%" PRIu64 "\n", v);
	if (ret)
		die(KSFT_FAIL, "cannot write %" PRIu64 " to %s: %s", v, path, strerror(-ret));
}

static uint64_t swap_cached_kib(void)
{
	return proc_kib("/proc/meminfo", "SwapCached");
}

static uint64_t pagemap(const void *addr)
{
	return read_u64_at("/proc/self/pagemap", (uintptr_t)addr / PAGE_SZ);
}

static bool has_flag(uint64_t flags, int bit)
{
	return flags & (1ULL << bit);
}

static uint64_t zswap_stored(void)
{
	return read_num("/sys/kernel/debug/zswap", "stored_pages");
}

/*
 * Subpage @k is mapped again and is the pinned THP's own subpage (pfn
 * @head + @k), a THP in the swap cache. 6.1 maps that subpage only (another
 * one is still swapped out), 6.12 the whole folio.
 */
static bool in_swapcache_state(char *thp, unsigned int k, uint64_t head)
{
	uint64_t pm = pagemap(thp + k * PAGE_SZ), flags;

	if (!(pm & PM_PRESENT))
		return false;
	if ((pm & PM_PFN_MASK) != head + k)
		return false;
	flags = kpageflags(head + k);
	return has_flag(flags, KPF_SWAPCACHE) && has_flag(flags, KPF_THP);
}

/*
 * --exit KB: a child faults one KB folio, pages it out into zswap (pinned
 * in the swap cache by the module) and exits; every entry at the folio's
 * offsets must go with the freed slots.
 */
static int exit_case(const char *pin, unsigned int kb)
{
	uint64_t nr = kb / 4, stored0 = zswap_stored(), inval, head;
	int status;
	pid_t child;

	child = fork();
	if (child < 0)
		die(KSFT_FAIL, "fork: %s", strerror(errno));
	if (!child) {
		void *raw;
		char *p = mmap_thp_aligned(kb << 10, &raw);

		if (!p)
			die(KSFT_FAIL, "mmap: %s", strerror(errno));
		for (uint64_t i = 0; i < nr; i++)
			fill_gen((uint64_t *)(p + i * PAGE_SZ), 1, i);
		if (!has_flag(kpageflags(pagemap(p) & PM_PFN_MASK), KPF_THP))
			die(KSFT_FAIL, "no %ukB folio at the region (the size's enabled \"always\"?)", kb);
		write_num(pin, "pid", getpid());
		if (madvise(p, kb << 10, MADV_PAGEOUT))
			die(KSFT_FAIL, "MADV_PAGEOUT: %s", strerror(errno));
		write_num(pin, "pid", 0);
		if (!read_num(pin, "pfn"))
			die(KSFT_FAIL, "the %ukB folio was not stored whole in zswap (nothing pinned)", kb);
		_exit(KSFT_PASS);
	}
	if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
		die(KSFT_FAIL, "the child did not page out a pinned %ukB folio", kb);
	head = read_num(pin, "pfn");
	inval = read_num(pin, "invalidated");
	msg("%ukB folio (pfn 0x%" PRIx64 ") stored whole, its process gone while it stayed in the swap cache: zswap entries dropped at its offsets %" PRIu64 " of %" PRIu64 ", zswap stored_pages %" PRIu64 " -> %" PRIu64,
	    kb, head, inval, nr, stored0, zswap_stored());
	write_num(pin, "pfn", 0);
	if (inval != nr) {
		msg("FAIL: %" PRIu64 " of the folio's %" PRIu64 " zswap entries left behind its freed slots",
		    nr - inval, nr);
		return KSFT_FAIL;
	}
	msg("PASS: every entry of the %ukB folio went with its slots", kb);
	return KSFT_PASS;
}

/* A number from a "key value" line of a cgroup file; 0 if absent. */
static uint64_t cg_stat(const char *cg, const char *file, const char *key)
{
	char path[256], name[64];
	unsigned long long v, val = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	f = fopen(path, "r");
	while (f && fscanf(f, "%63s %llu", name, &v) == 2)
		if (!strcmp(name, key))
			val = v;
	if (f)
		fclose(f);
	return val;
}

#define SHRINKER "/sys/module/zswap/parameters/shrinker_enabled"

/*
 * --zero: whatever zswap still holds for this memcg is written back by
 * the memcg's zswap shrinker, switched on only now (the test keeps it off
 * until the folio has left the swap cache), one small memory.reclaim at a
 * time, stopping at the first writeback so that what it brought into the
 * swap cache is read before reclaim frees it again.
 */
static void writeback_stale(const char *cg)
{
	uint64_t wb0 = vmstat("zswpwb"), zswapped = cg_stat(cg, "memory.stat", "zswapped");
	char path[256];
	unsigned int tries;

	if (write_file(SHRINKER, "Y\n"))
		die(KSFT_FAIL, "cannot switch the zswap shrinker on");
	snprintf(path, sizeof(path), "%s/memory.reclaim", cg);
	for (tries = 0; tries < 64 && zswapped && vmstat("zswpwb") == wb0; tries++)
		write_file(path, "128K");
	write_file(SHRINKER, "N\n");
	msg("zswap writeback: the memcg's zswapped %" PRIu64 " bytes before, zswpwb +%" PRIu64 " after %u memory.reclaim writes",
	    zswapped, vmstat("zswpwb") - wb0, tries);
}

int main(int argc, char **argv)
{
	unsigned int k = 5, attempts = 8, attempt, tries, exit_kb = 0;
	bool zero = false;
	const char *hold = NULL, *pin = NULL;
	char cg[128], path[256], *thp = NULL;
	void *raw = NULL;
	uint64_t thp_before, zswp_before, zswpin_before, stored_before, head, flags;
	uint64_t bad = 0, inval, loaded;
	bool failed = false;
	const struct testopt opts[] = {
		OPT("hold", &hold), OPT("pin", &pin), OPT("subpage", &k),
		OPT("attempts", &attempts), OPT_FLAG("zero", &zero, true),
		OPT("exit", &exit_kb),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse_testopts(argc, argv, 1, opts, ARRAY_SIZE(opts)) < 0)
		return KSFT_FAIL;
	if (pin && exit_kb >= 8 && exit_kb <= THP_SZ >> 10 && !(exit_kb & (exit_kb - 1)))
		return exit_case(pin, exit_kb);
	if (exit_kb || !hold || !pin || k == 1 || k == 2 || k >= NR_SUBPAGES) {
		fprintf(stderr, "usage: zswap_stale --hold DIR --pin DIR [--subpage 0|3..511] [--zero] [--attempts N]\n"
			"       zswap_stale --pin DIR --exit KB (a power of two, 8..2048)\n");
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

	/* A THP (khugepaged may not be done with memory of an earlier test). */
	for (attempt = 1; attempt <= attempts; attempt++) {
		if (raw)
			munmap(raw, 2 * THP_SZ);
		thp = mmap_thp_aligned(THP_SZ, &raw);
		if (!thp)
			die(KSFT_FAIL, "mmap: %s", strerror(errno));
		madvise(thp, THP_SZ, MADV_HUGEPAGE);
		for (uint64_t p = 0; p < NR_SUBPAGES; p++)
			fill_gen((uint64_t *)(thp + p * PAGE_SZ), 1, p);	/* A */
		if (vma_anon_huge_kib(thp) >= THP_SZ >> 10)
			break;
	}
	if (attempt > attempts)
		die(KSFT_FAIL, "no THP in %u attempts (THP enabled \"always\"?)", attempts);

	/* Page it out; the module pins it once zswap has stored it. */
	thp_before = vmstat("thp_swpout");
	zswp_before = vmstat("zswpout");
	write_num(pin, "pid", getpid());
	if (madvise(thp, THP_SZ, MADV_PAGEOUT))
		die(KSFT_FAIL, "MADV_PAGEOUT: %s", strerror(errno));
	head = read_num(pin, "pfn");
	write_num(pin, "pid", 0);
	msg("MADV_PAGEOUT: zswpout +%" PRIu64 ", thp_swpout +%" PRIu64 ", pinned pfn 0x%" PRIx64,
	    vmstat("zswpout") - zswp_before, vmstat("thp_swpout") - thp_before, head);
	if (vmstat("thp_swpout") != thp_before)
		die(KSFT_FAIL, "the THP went to the disk, not to zswap whole");
	if (vmstat("zswpout") - zswp_before < NR_SUBPAGES)
		die(KSFT_FAIL, "zswap did not store the THP's %lu subpages", NR_SUBPAGES);
	if (!head)
		die(KSFT_FAIL, "swapcache_pin did not pin the folio");
	flags = kpageflags(head);
	if (!(pagemap(thp) & PM_SWAP) || !(pagemap(thp + k * PAGE_SZ) & PM_SWAP) ||
	    !has_flag(flags, KPF_SWAPCACHE) || !has_flag(flags, KPF_THP) ||
	    has_flag(flags, KPF_MMAP))
		die(KSFT_FAIL, "the pinned folio is not an unmapped THP in the swap cache (kpageflags 0x%" PRIx64 ")",
		    flags);

	/*
	 * New bytes for subpage k (generation B): the write fault maps the
	 * folio's subpage from the swap cache, and the folio is dirty again.
	 */
	snprintf(path, sizeof(path), "%s/tail_index", pin);
	if (k && !access(path, F_OK))
		write_num(pin, "tail_index", k);
	if (zero)
		memset(thp, 0, THP_SZ);
	else
		fill_gen((uint64_t *)(thp + k * PAGE_SZ), 2, k);
	if (zero && !in_swapcache_state(thp, NR_SUBPAGES - 1, head))
		die(KSFT_FAIL, "the zeroed THP is not the swap cache folio mapped again whole");
	if (!in_swapcache_state(thp, k, head))
		die(KSFT_FAIL, "subpage %u is not the swap cache THP's own page again (pfn 0x%" PRIx64 ", head 0x%" PRIx64 ", kpageflags 0x%" PRIx64 ")",
		    k, pagemap(thp + k * PAGE_SZ) & PM_PFN_MASK, head,
		    kpageflags(pagemap(thp + k * PAGE_SZ) & PM_PFN_MASK));
	if (zero)
		msg("THP stored whole in zswap, still in the swap cache, mapped again and zeroed");
	else
		msg("THP stored whole in zswap, still in the swap cache, subpage %u mapped again and rewritten (subpage %u %s)",
		    k, k ? 0 : 1, pagemap(thp + (k ? 0 : PAGE_SZ)) & PM_SWAP ? "still swapped out" : "mapped too");

	snprintf(path, sizeof(path), "%s/ready", hold);
	write_file(path, "1\n");
	snprintf(path, sizeof(path), "%s/go", hold);
	hold_until(path, 20);

	/* Drop the pin; reclaim the whole folio again, now by the stock path. */
	write_num(pin, "pfn", 0);
	inval = read_num(pin, "invalidated");
	if (inval)
		die(KSFT_FAIL, "%" PRIu64 " zswap entries of the folio were dropped before it was written again",
		    inval);
	thp_before = vmstat("thp_swpout");
	stored_before = zswap_stored();
	snprintf(path, sizeof(path), "%s/memory.reclaim", cg);
	for (tries = 0; tries < 200 && (pagemap(thp + k * PAGE_SZ) & PM_PRESENT); tries++)
		write_file(path, "16M");
	if (pagemap(thp + k * PAGE_SZ) & PM_PRESENT)
		die(KSFT_FAIL, "memory.reclaim did not write the folio out again");
	/* A zero-filled folio goes to the zeromap, which counts no swpout. */
	if (!zero && vmstat("thp_swpout") == thp_before)
		die(KSFT_FAIL, "the folio was split before it was written again (thp_swpout did not rise)");
	inval = read_num(pin, "invalidated");
	msg("folio written to the swap device whole (thp_swpout +%" PRIu64 ") after %u memory.reclaim writes; zswap entries dropped at its offsets: %" PRIu64 " (zswap stored_pages %" PRIu64 " -> %" PRIu64 ")",
	    vmstat("thp_swpout") - thp_before, tries, inval, stored_before, zswap_stored());
	/*
	 * The fix (6.1: 0003's __frontswap_store(); 6.12: 0002's
	 * zswap_store()) drops the entries of all 512 offsets; before it,
	 * only the head's went (6.1) or none (6.12), and the stale ones
	 * stayed. Read back anyway: the bytes say what the stale entries do.
	 */
	if (inval != NR_SUBPAGES) {
		msg("FAIL: %" PRIu64 " of the folio's %lu zswap entries dropped by the stock write (stale tail entries left)",
		    inval, NR_SUBPAGES);
		failed = true;
	}
	/*
	 * Until the folio leaves the swap cache, reading it back would come
	 * from memory and never ask zswap: wait for reclaim to free it.
	 */
	for (tries = 0; tries < 200 && swap_cached_kib() >= THP_SZ >> 10; tries++)
		write_file(path, "16M");
	if (swap_cached_kib() >= THP_SZ >> 10)
		die(KSFT_FAIL, "the folio stayed in the swap cache (SwapCached %" PRIu64 " kB)",
		    swap_cached_kib());
	msg("folio freed from the swap cache; reading back from swap");
	if (zero)
		writeback_stale(cg);

	zswpin_before = vmstat("zswpin");
	loaded = read_num(pin, "loaded");
	for (uint64_t p = 0; p < NR_SUBPAGES; p++) {
		const uint64_t *pg = (const uint64_t *)(thp + p * PAGE_SZ);
		uint64_t gen = p == k ? 2 : 1;

		for (uint64_t w = 0; w < WORDS_PER_PAGE; w++) {
			uint64_t want = zero ? 0 : word(gen, p, w);

			if (pg[w] == want)
				continue;
			if (bad++ < 4)
				msg("subpage %" PRIu64 " word %" PRIu64 ": got 0x%016" PRIx64
				    " want 0x%016" PRIx64 "%s", p, w, pg[w], want,
				    pg[w] == word(1, p, w) ? " (old data: a stale zswap entry)" : "");
		}
	}
	loaded = read_num(pin, "loaded") - loaded;
	msg("read back: zswap entries loaded at the folio's offsets %" PRIu64 " (zswpin +%" PRIu64 ", pswpin %" PRIu64 ")",
	    loaded, vmstat("zswpin") - zswpin_before, vmstat("pswpin"));
	write_file("/sys/fs/cgroup/cgroup.procs", "0");
	rmdir(cg);
	if (loaded) {
		msg("FAIL: %" PRIu64 " subpages read back from stale zswap entries", loaded);
		failed = true;
	}
	if (bad) {
		msg("FAIL: %" PRIu64 " words differ", bad);
		failed = true;
	}
	if (failed)
		return KSFT_FAIL;
	if (zero)
		msg("PASS: the zeroed THP reads back zeros");
	else
		msg("PASS: subpage %u reads back its new bytes, the other %lu their old ones", k,
		    NR_SUBPAGES - 1);
	return KSFT_PASS;
}

// SPDX-License-Identifier: GPL-2.0
/*
 * thp_hwpoison: a THP with a hardware-poisoned subpage that memory_failure()
 * could not split, paged out next to healthy THPs.
 *
 *   thp_hwpoison [--thps N] [--subpage K] [--watch PATH]... [--seed S]
 *                [--released-kept]
 *
 * What 6.1's memory_failure() does to a THP it cannot split (a vmsplice()
 * into a pipe holds a reference to one of its pages): it sets PG_hwpoison
 * on the subpage and PG_has_hwpoisoned on the head, fails the split, logs
 * "recovery action for unsplit thp: Ignored" and returns -EBUSY; the THP
 * stays mapped by its PMD. 6.12's does the same, but logs "recovery action
 * for unsplit thp: Failed", returns -EHWPOISON and, for MADV_HWPOISON (an
 * action-required failure), sends the caller SIGBUS (BUS_MCEERR_AR) at once
 * (kill_procs_now()); that signal is caught and checked here. This program
 * checks exactly that, then pages out
 * in three steps, printing for each step the change of every --watch file
 * (a counter file, or vmstat:KEY) as "delta STEP NAME VALUE":
 *
 *   pinned    THP 0, poisoned, still pinned by the pipe: reclaim skips a
 *             THP it cannot split (can_split_folio()) before any hook or
 *             swap slot, so it stays whole and mapped, nothing written;
 *   released  THP 1, poisoned while pinned, then the pipe drained: reclaim
 *             swaps it out whole through the stock path (the kernel offers
 *             a THP with PG_has_hwpoisoned to no mmtune hook); on 6.12
 *             (--released-kept) reclaim keeps it whole and mapped instead,
 *             as every large folio with a poisoned page
 *             (folio_contain_hwpoisoned_page() in shrink_folio_list());
 *   healthy   THPs 2..N-1: what the hooks do with THPs they may read.
 *
 * Then it reads everything back: every healthy byte as written, and THP 1's
 * poisoned subpage must raise SIGBUS (BUS_MCEERR_AR): reclaim's unmap turned
 * its PTE into a hwpoison entry, and the page is never mapped again (not
 * with --released-kept: it stays mapped, and is not read).
 *
 * Exit status: 0 pass, 1 fail, 4 skip (no MADV_HWPOISON, no THP).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define TESTPROG "thp_hwpoison"
#include "testprog.h"

#ifndef MADV_HWPOISON
#define MADV_HWPOISON	100
#endif
#ifndef BUS_MCEERR_AR
#define BUS_MCEERR_AR	4
#endif
#define NR_SUBPAGES	(THP_SZ / PAGE_SZ)
#define KPF_HWPOISON	19
#define KPF_THP		22
#define MAX_WATCH	32

static struct {
	unsigned long thps;
	unsigned long subpage;
	uint64_t seed;
	const char *watch[MAX_WATCH];
	int nwatch;
	bool released_kept;
} o = { .thps = 8, .subpage = 5, .seed = 37 };

static char *region;
static uint64_t before[MAX_WATCH];

static uint64_t pfn_of(const void *addr)
{
	uint64_t pm = read_u64_at("/proc/self/pagemap", (uintptr_t)addr / PAGE_SZ);

	return (pm & PM_PRESENT) ? pm & PM_PFN_MASK : 0;
}

static char *thp(unsigned long i)
{
	return region + i * THP_SZ;
}

/* Whole THP: mapped, PFNs contiguous, every page flagged THP. */
static bool is_whole_thp(unsigned long i)
{
	uint64_t pfn0 = pfn_of(thp(i));

	if (!pfn0 || pfn0 % NR_SUBPAGES)
		return false;
	for (unsigned long k = 0; k < NR_SUBPAGES; k++) {
		uint64_t pfn = pfn_of(thp(i) + k * PAGE_SZ);

		if (pfn != pfn0 + k || !(kpageflags(pfn) & (1ULL << KPF_THP)))
			return false;
	}
	return true;
}

/* "/sys/kernel/mm/mmtune/zswap_large/thp_stored" -> "zswap_large/thp_stored" */
static const char *watch_name(const char *path)
{
	const char *p = path + strlen(path);
	int slashes = 0;

	if (!strncmp(path, "vmstat:", 7))
		return path + 7;
	while (p > path && slashes < 2)
		if (*--p == '/')
			slashes++;
	return slashes == 2 ? p + 1 : path;
}

static uint64_t watch_value(const char *path)
{
	char name[64], buf[64];
	uint64_t val, ret = 0;
	FILE *f;

	if (!strncmp(path, "vmstat:", 7)) {
		f = fopen("/proc/vmstat", "r");
		if (!f)
			die(KSFT_FAIL, "/proc/vmstat: %s", strerror(errno));
		while (fscanf(f, "%63s %" SCNu64, name, &val) == 2)
			if (!strcmp(name, path + 7))
				ret = val;
		fclose(f);
		return ret;
	}
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		die(KSFT_FAIL, "cannot read %s", path);
	fclose(f);
	return strtoull(buf, NULL, 10);
}

static void watch_start(void)
{
	for (int i = 0; i < o.nwatch; i++)
		before[i] = watch_value(o.watch[i]);
}

static void watch_report(const char *step)
{
	for (int i = 0; i < o.nwatch; i++)
		printf("delta %s %s %" PRIu64 "\n", step, watch_name(o.watch[i]),
		       watch_value(o.watch[i]) - before[i]);
	fflush(stdout);
}

static void pageout(unsigned long first, unsigned long n, const char *step)
{
	watch_start();
	if (madvise(thp(first), n * THP_SZ, MADV_PAGEOUT))
		die(KSFT_FAIL, "MADV_PAGEOUT (%s): %s", step, strerror(errno));
	watch_report(step);
}

/* The SIGBUS that 6.12's memory_failure() sends the MADV_HWPOISON caller. */
static volatile sig_atomic_t inject_bus_code;
static void *volatile inject_bus_addr;

static void on_inject_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	inject_bus_code = si->si_code;
	inject_bus_addr = si->si_addr;
}

/*
 * Poison subpage o.subpage of THP @i while a pipe holds subpage 0, so that
 * memory_failure() cannot split it. Returns the pipe (still holding it).
 */
static int poison_pinned(unsigned long i, uint64_t *pfn)
{
	char *bad = thp(i) + o.subpage * PAGE_SZ;
	struct iovec iov = { .iov_base = thp(i), .iov_len = PAGE_SZ };
	struct sigaction sa = { .sa_sigaction = on_inject_sigbus, .sa_flags = SA_SIGINFO };
	const char *how;
	int pipefd[2], rc, err;

	if (pipe(pipefd))
		die(KSFT_FAIL, "pipe: %s", strerror(errno));
	if (vmsplice(pipefd[1], &iov, 1, 0) != (ssize_t)PAGE_SZ)
		die(KSFT_FAIL, "vmsplice: %s", strerror(errno));
	*pfn = pfn_of(bad);
	inject_bus_code = 0;
	inject_bus_addr = NULL;
	sigaction(SIGBUS, &sa, NULL);
	rc = madvise(bad, PAGE_SZ, MADV_HWPOISON);
	err = errno;
	signal(SIGBUS, SIG_DFL);
	if (!rc)
		die(KSFT_FAIL, "THP %lu: MADV_HWPOISON succeeded: memory_failure() split a THP a pipe holds",
		    i);
	if (err == EINVAL)
		die(KSFT_SKIP, "MADV_HWPOISON: EINVAL (no CONFIG_MEMORY_FAILURE)");
	if (err == EBUSY && !inject_bus_code) {
		how = "EBUSY";	/* 6.1 */
	} else if (err == EHWPOISON && inject_bus_code == BUS_MCEERR_AR &&
		   inject_bus_addr == bad) {
		how = "EHWPOISON and SIGBUS (BUS_MCEERR_AR) at the subpage";	/* 6.12 */
	} else {
		die(KSFT_FAIL, "THP %lu: MADV_HWPOISON: %s, SIGBUS code %d at %p (subpage at %p), expected EBUSY and no SIGBUS (6.1) or EHWPOISON and BUS_MCEERR_AR there (6.12)",
		    i, strerror(err), (int)inject_bus_code, inject_bus_addr, (void *)bad);
	}
	if (!(kpageflags(*pfn) & (1ULL << KPF_HWPOISON)))
		die(KSFT_FAIL, "THP %lu: subpage %lu (pfn %#" PRIx64 ") is not PG_hwpoison",
		    i, o.subpage, *pfn);
	if (!is_whole_thp(i))
		die(KSFT_FAIL, "THP %lu is no longer a whole, PMD-mapped THP", i);
	msg("THP %lu: subpage %lu (pfn %#" PRIx64 ") poisoned, %s, THP still whole and mapped",
	    i, o.subpage, *pfn, how);
	return pipefd[0] | pipefd[1] << 16;
}

static void unpin(int pipes)
{
	char buf[PAGE_SZ];

	/* read() copies out of subpage 0 and drops the pipe's reference. */
	if (read(pipes & 0xffff, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		die(KSFT_FAIL, "draining the pipe: %s", strerror(errno));
	close(pipes & 0xffff);
	close(pipes >> 16);
}

static sigjmp_buf bus_jmp;
static volatile sig_atomic_t bus_code;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	bus_code = si->si_code;
	siglongjmp(bus_jmp, 1);
}

/* Read a poisoned subpage: it must SIGBUS with BUS_MCEERR_AR. */
static bool poisoned_read_sigbus(unsigned long i)
{
	volatile uint64_t *p = (uint64_t *)(thp(i) + o.subpage * PAGE_SZ);
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO };

	sigaction(SIGBUS, &sa, NULL);
	bus_code = 0;
	if (sigsetjmp(bus_jmp, 1) == 0) {
		(void)*p;
		msg("FAIL: THP %lu: the poisoned subpage %lu read without SIGBUS (mapped again)",
		    i, o.subpage);
		return false;
	}
	signal(SIGBUS, SIG_DFL);
	if (bus_code != BUS_MCEERR_AR) {
		msg("FAIL: THP %lu: SIGBUS code %d, expected BUS_MCEERR_AR", i, (int)bus_code);
		return false;
	}
	msg("THP %lu: the poisoned subpage raises SIGBUS (BUS_MCEERR_AR)", i);
	return true;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "thps", required_argument, NULL, 'n' },
		{ "subpage", required_argument, NULL, 'k' },
		{ "watch", required_argument, NULL, 'w' },
		{ "seed", required_argument, NULL, 's' },
		{ "released-kept", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t pfn_pinned, pfn_released, bad = 0;
	int c, pipe_pinned, pipe_released, ret = KSFT_PASS;
	char *raw;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o.thps = strtoul(optarg, NULL, 0); break;
		case 'k': o.subpage = strtoul(optarg, NULL, 0); break;
		case 's': o.seed = strtoull(optarg, NULL, 0); break;
		case 'r': o.released_kept = true; break;
		case 'w':
			if (o.nwatch == MAX_WATCH)
				die(KSFT_FAIL, "too many --watch");
			o.watch[o.nwatch++] = optarg;
			break;
		default:
			die(KSFT_FAIL, "usage: thp_hwpoison [--thps N] [--subpage K] [--watch PATH]... [--seed S] [--released-kept]");
		}
	}
	if (o.thps < 3 || !o.subpage || o.subpage >= NR_SUBPAGES)
		die(KSFT_FAIL, "need --thps >= 3 and 0 < --subpage < %lu", NR_SUBPAGES);

	raw = mmap(NULL, (o.thps + 1) * THP_SZ, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		die(KSFT_FAIL, "mmap: %s", strerror(errno));
	region = (char *)(((uintptr_t)raw + THP_SZ - 1) & ~(THP_SZ - 1));
	if (madvise(region, o.thps * THP_SZ, MADV_HUGEPAGE))
		die(KSFT_FAIL, "MADV_HUGEPAGE: %s", strerror(errno));
	for (uint64_t p = 0; p < o.thps * NR_SUBPAGES; p++)
		fill_page((uint64_t *)(region + p * PAGE_SZ), FILL_COMPRESSIBLE, o.seed, p);
	for (unsigned long i = 0; i < o.thps; i++)
		if (!is_whole_thp(i))
			die(i < 2 ? KSFT_SKIP : KSFT_FAIL, "region %lu of %lu is not a whole THP",
			    i, o.thps);
	/* khugepaged must not touch the region from here on. */
	madvise(region, o.thps * THP_SZ, MADV_NOHUGEPAGE);
	msg("%lu THPs filled", o.thps);

	pipe_pinned = poison_pinned(0, &pfn_pinned);
	pipe_released = poison_pinned(1, &pfn_released);
	unpin(pipe_released);
	if (!is_whole_thp(1))
		die(KSFT_FAIL, "THP 1 split after its pipe was drained");
	printf("poisoned_pfns %#" PRIx64 " %#" PRIx64 "\n", pfn_pinned, pfn_released);

	pageout(0, 1, "pinned");
	/*
	 * 6.1's reclaim skips a THP it could not split (can_split_folio());
	 * 6.12's skips any large folio with a poisoned page before that.
	 */
	if (!is_whole_thp(0))
		die(KSFT_FAIL, "THP 0 (pinned) is no longer whole and mapped after MADV_PAGEOUT");
	msg("THP 0 (pinned): still whole and mapped after MADV_PAGEOUT (reclaim skipped it)");
	pageout(1, 1, "released");
	if (o.released_kept) {
		if (!is_whole_thp(1))
			die(KSFT_FAIL, "THP 1 (released) is no longer whole and mapped after MADV_PAGEOUT");
		msg("THP 1 (released): still whole and mapped after MADV_PAGEOUT (reclaim kept it)");
	}
	pageout(2, o.thps - 2, "healthy");
	unpin(pipe_pinned);

	for (uint64_t p = 0; p < o.thps * NR_SUBPAGES; p++) {
		const uint64_t *pg = (uint64_t *)(region + p * PAGE_SZ);

		if (p % NR_SUBPAGES == o.subpage && p < 2 * NR_SUBPAGES)
			continue;
		for (uint64_t w = 0; w < WORDS_PER_PAGE; w++) {
			if (pg[w] == pattern_word(FILL_COMPRESSIBLE, o.seed, p, w))
				continue;
			if (bad++ < 8)
				msg("mismatch: THP %" PRIu64 " subpage %" PRIu64 " word %" PRIu64,
				    p / NR_SUBPAGES, p % NR_SUBPAGES, w);
		}
	}
	if (bad) {
		msg("FAIL: %" PRIu64 " words differ", bad);
		ret = KSFT_FAIL;
	} else {
		msg("every healthy subpage reads back as written (%lu THPs)", o.thps);
	}
	/*
	 * THP 0 was never unmapped: its poisoned subpage is still mapped by the
	 * PMD (software-injected poison reads fine; not read here). THP 1's was
	 * replaced by a hwpoison entry when reclaim unmapped it.
	 */
	if (!o.released_kept && !poisoned_read_sigbus(1))
		ret = KSFT_FAIL;
	if (ret == KSFT_PASS)
		msg("PASS");
	return ret;
}

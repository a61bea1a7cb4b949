// SPDX-License-Identifier: GPL-2.0
/*
 * munmap_swapped: munmap() of swapped-out anonymous memory, for
 * tests/bench/irqsoff.sh (issue 26, item 2).
 *
 * Maps SIZE MiB of anonymous memory in 4K pages (MADV_NOHUGEPAGE), writes
 * every page (bytes distinct per page and word, testprog.h), pushes it out
 * to swap (run it in a memcg whose memory.max is far below SIZE; what is
 * still resident at the end goes with MADV_PAGEOUT), counts the pages in
 * swap from /proc/self/pagemap, then munmap()s it all at once:
 * zap_pte_range() hands every swap entry to free_swap_and_cache() and so to
 * the swap slot cache's free side (the kernel's, or mmtune's hook).
 *
 *   munmap_swapped --size MIB [--tracing DIR] [--wakeup-us US] [--min-swapped-pct PCT]
 *
 * --tracing DIR (tracefs): right before the munmap() it writes 0 to
 * DIR/tracing_max_latency and 1 to DIR/tracing_on, right after it 0 to
 * DIR/tracing_on, and reads the maximum back, so the latency tracer of
 * DIR/current_tracer measures the munmap() (and what interrupts it) only.
 *
 * --wakeup-us US: a SCHED_FIFO thread (priority 90) wakes every US
 * microseconds (absolute timer) from just before the munmap() to just after
 * it and measures how late each wakeup runs: the scheduling latency that a
 * waiting task sees while the munmap() holds the CPU (cyclictest's
 * measure). It touches nothing but its stack.
 *
 * Prints one line: "munmap_swapped: mib=... pages=... swapped=...
 * present=... vmswap_kib=... munmap_us=... max_latency_us=..." and, with
 * --wakeup-us, "wakeups=... wakeup_max_us=... wakeup_median_us=...
 * wakeup_p90_us=... wakeup_p99_us=...". Exit
 * status 0; 1 if a step failed or fewer than PCT % (default 90) of the
 * pages were in swap.
 */
#define _GNU_SOURCE
#define TESTPROG "munmap_swapped"
#include <pthread.h>
#include <sched.h>

#include "testprog.h"

#define WAKEUPS_MAX	(1 << 20)

/* The waker thread: its period, stop flag and the lateness of each wakeup. */
static unsigned long wakeup_us;
static volatile int waker_stop;
static uint32_t *late_ns;
static volatile uint64_t wakeups;

static void *waker(void *arg)
{
	struct timespec next, t;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!waker_stop && wakeups < WAKEUPS_MAX) {
		next.tv_nsec += (long)wakeup_us * 1000;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
		clock_gettime(CLOCK_MONOTONIC, &t);
		late_ns[wakeups++] = (uint32_t)((t.tv_sec - next.tv_sec) * 1000000000LL +
						t.tv_nsec - next.tv_nsec);
	}
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

#define PAGEMAP_CHUNK	4096

/* Pages of [@mem, +@pages) in swap and present, from /proc/self/pagemap. */
static void count_pages(const void *mem, uint64_t pages, uint64_t *swapped,
			uint64_t *present)
{
	static uint64_t e[PAGEMAP_CHUNK];
	uint64_t first = (uintptr_t)mem / PAGE_SZ;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		die(KSFT_FAIL, "/proc/self/pagemap: %s", strerror(errno));
	*swapped = *present = 0;
	for (uint64_t p = 0; p < pages; p += PAGEMAP_CHUNK) {
		uint64_t n = pages - p < PAGEMAP_CHUNK ? pages - p : PAGEMAP_CHUNK;
		ssize_t len = (ssize_t)(n * sizeof(e[0]));

		if (pread(fd, e, len, (off_t)((first + p) * sizeof(e[0]))) != len)
			die(KSFT_FAIL, "pagemap read: %s", strerror(errno));
		for (uint64_t i = 0; i < n; i++) {
			*swapped += !!(e[i] & PM_SWAP);
			*present += !!(e[i] & PM_PRESENT);
		}
	}
	close(fd);
}

static void trace_write(const char *dir, const char *file, const char *val)
{
	char path[512];
	int ret;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	ret = write_file(path, "%s", val);
	if (ret)
		die(KSFT_FAIL, "writing %s to %s: %s", val, path, strerror(-ret));
}

static unsigned long trace_read(const char *dir, const char *file)
{
	char path[512];
	unsigned long val;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%lu", &val) != 1)
		die(KSFT_FAIL, "cannot read %s", path);
	fclose(f);
	return val;
}

int main(int argc, char **argv)
{
	unsigned long mib = 0, min_pct = 90, max_lat = 0;
	const char *tracing = NULL;
	const struct testopt opts[] = {
		OPT("size", &mib),
		OPT("tracing", &tracing),
		OPT("min-swapped-pct", &min_pct),
		OPT("wakeup-us", &wakeup_us),
	};
	pthread_t thread;
	pthread_attr_t attr;
	struct sched_param prio = { .sched_priority = 90 };
	uint64_t pages, swapped, present, vmswap;
	double t0, t1;
	size_t len;
	char *mem;

	if (parse_testopts(argc, argv, 1, opts, ARRAY_SIZE(opts)) != argc || !mib) {
		fprintf(stderr, "usage: munmap_swapped --size MIB [--tracing DIR] [--wakeup-us US] [--min-swapped-pct PCT]\n");
		return KSFT_FAIL;
	}
	pages = mib * (1 << 20) / PAGE_SZ;
	len = pages * PAGE_SZ;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die(KSFT_FAIL, "mmap %lu MiB: %s", mib, strerror(errno));
	if (madvise(mem, len, MADV_NOHUGEPAGE))
		die(KSFT_FAIL, "MADV_NOHUGEPAGE: %s", strerror(errno));
	for (uint64_t p = 0; p < pages; p++)
		fill_page((uint64_t *)(mem + p * PAGE_SZ), FILL_RANDOM, 26, p);
	if (madvise(mem, len, MADV_PAGEOUT))
		die(KSFT_FAIL, "MADV_PAGEOUT: %s", strerror(errno));
	count_pages(mem, pages, &swapped, &present);
	vmswap = proc_kib("/proc/self/status", "VmSwap");
	if (swapped * 100 < pages * min_pct)
		die(KSFT_FAIL, "only %" PRIu64 " of %" PRIu64 " pages in swap (%" PRIu64 " present)",
		    swapped, pages, present);

	if (wakeup_us) {
		int ret;

		/* Faulted in now: the waker must not fault during munmap(). */
		late_ns = calloc(WAKEUPS_MAX, sizeof(*late_ns));
		if (!late_ns)
			die(KSFT_FAIL, "calloc");
		memset(late_ns, 0xff, WAKEUPS_MAX * sizeof(*late_ns));
		pthread_attr_init(&attr);
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		pthread_attr_setschedparam(&attr, &prio);
		ret = pthread_create(&thread, &attr, waker, NULL);
		if (ret)
			die(KSFT_FAIL, "SCHED_FIFO thread: %s", strerror(ret));
		while (!wakeups)
			sched_yield();
	}
	if (tracing) {
		trace_write(tracing, "tracing_max_latency", "0");
		trace_write(tracing, "tracing_on", "1");
	}
	t0 = now();
	if (munmap(mem, len))
		die(KSFT_FAIL, "munmap: %s", strerror(errno));
	t1 = now();
	if (tracing) {
		trace_write(tracing, "tracing_on", "0");
		max_lat = trace_read(tracing, "tracing_max_latency");
	}
	if (wakeup_us) {
		waker_stop = 1;
		pthread_join(thread, NULL);
		qsort(late_ns, wakeups, sizeof(*late_ns), cmp_u32);
		msg("mib=%lu pages=%" PRIu64 " swapped=%" PRIu64 " present=%" PRIu64
		    " vmswap_kib=%" PRIu64 " munmap_us=%.0f max_latency_us=%lu wakeups=%" PRIu64
		    " wakeup_max_us=%.1f wakeup_median_us=%.1f wakeup_p90_us=%.1f wakeup_p99_us=%.1f",
		    mib, pages, swapped, present, vmswap, (t1 - t0) * 1e6, max_lat, wakeups,
		    late_ns[wakeups - 1] / 1e3, late_ns[wakeups / 2] / 1e3,
		    late_ns[wakeups * 90 / 100] / 1e3, late_ns[wakeups * 99 / 100] / 1e3);
		return KSFT_PASS;
	}
	msg("mib=%lu pages=%" PRIu64 " swapped=%" PRIu64 " present=%" PRIu64
	    " vmswap_kib=%" PRIu64 " munmap_us=%.0f max_latency_us=%lu",
	    mib, pages, swapped, present, vmswap, (t1 - t0) * 1e6, max_lat);
	return KSFT_PASS;
}

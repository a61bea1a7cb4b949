// SPDX-License-Identifier: GPL-2.0
/*
 * usemem: a swap-out throughput writer in the spirit of vm-scalability's
 * usemem, for the benchmarks in tests/bench/.
 *
 * N processes each map their share of SIZE MiB of anonymous memory (THP by
 * default) and write every word once. Run in a memcg smaller than SIZE,
 * the writes push earlier pages out to swap, so the write rate measures
 * swap-out. After the timed part each process reads its memory back and
 * compares it (untimed), so a run that lost data cannot report a number.
 *
 *   usemem --size MIB [--procs N] [--fill random|compressible] [--no-thp]
 *   usemem --dump FILE --size MIB [--fill ...]   write the same bytes to FILE
 *
 * Prints one line: "usemem: mib=... wall_s=... mbps=... sys_s=... user_s=...".
 * Exit status: 0, or 1 if any process failed or read back other bytes.
 */
#define _GNU_SOURCE
#include <sys/resource.h>
#include <sys/wait.h>

#include "testprog.h"

/* What a child reports once it has written everything. */
struct written {
	double sys_s, user_s;
};

static double tv_s(struct timeval tv)
{
	return tv.tv_sec + tv.tv_usec / 1e6;
}

static int child(int report, uint64_t pages, enum fill fill, bool thp,
		 uint64_t seed)
{
	struct written done;
	struct rusage ru;
	size_t len = pages * PAGE_SZ;
	void *raw;
	uint64_t *mem = mmap_thp_aligned(len, &raw), bad = 0;

	if (!mem) {
		perror("usemem: mmap");
		return 1;
	}
	madvise(mem, len, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	for (uint64_t p = 0; p < pages; p++)
		fill_page(mem + p * WORDS_PER_PAGE, fill, seed, p);
	/* The parent's clock stops at the last report; reading back is untimed. */
	getrusage(RUSAGE_SELF, &ru);
	done = (struct written){ tv_s(ru.ru_stime), tv_s(ru.ru_utime) };
	if (write(report, &done, sizeof(done)) != sizeof(done))
		return 1;
	for (uint64_t p = 0; p < pages; p++)
		for (uint64_t w = 0; w < WORDS_PER_PAGE; w++)
			bad += mem[p * WORDS_PER_PAGE + w] !=
			       pattern_word(fill, seed, p, w);
	if (bad)
		fprintf(stderr, "usemem: %llu words read back differ\n",
			(unsigned long long)bad);
	return bad ? 1 : 0;
}

static int dump(const char *path, uint64_t pages, enum fill fill)
{
	uint64_t pg[WORDS_PER_PAGE];
	FILE *f = fopen(path, "w");

	if (!f) {
		perror(path);
		return 1;
	}
	for (uint64_t p = 0; p < pages; p++) {
		fill_page(pg, fill, 1, p);
		fwrite(pg, sizeof(pg), 1, f);
	}
	return fclose(f) ? 1 : 0;
}

int main(int argc, char **argv)
{
	unsigned long size_mib = 0, procs = 1;
	enum fill fill = FILL_COMPRESSIBLE;
	const char *dump_path = NULL;
	struct written done;
	double start, wall, sys_s = 0, user_s = 0;
	bool thp = true;
	int next, status, failed = 0, report[2];
	const struct testopt opts[] = {
		OPT("size", &size_mib), OPT("procs", &procs),
		OPT_CHOICE("fill", &fill, fill_names),
		OPT_FLAG("no-thp", &thp, false), OPT("dump", &dump_path),
	};

	next = parse_testopts(argc, argv, 1, opts, ARRAY_SIZE(opts));
	if (next < 0)
		return 1;
	if (!size_mib || !procs || next != argc) {
		fprintf(stderr, "usage: usemem --size MIB [--procs N] [--fill random|compressible] [--no-thp] [--dump FILE]\n");
		return 1;
	}
	if (dump_path)
		return dump(dump_path, (size_mib << 20) / PAGE_SZ, fill);

	if (pipe(report)) {
		perror("usemem: pipe");
		return 1;
	}
	start = now();
	for (unsigned long i = 0; i < procs; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("usemem: fork");
			return 1;
		}
		if (!pid)
			_exit(child(report[1], (size_mib << 20) / PAGE_SZ / procs,
				    fill, thp, i + 1));
	}
	close(report[1]);
	for (unsigned long i = 0; i < procs; i++) {
		if (read(report[0], &done, sizeof(done)) != sizeof(done)) {
			failed = 1;	/* a child died before it had written */
			break;
		}
		sys_s += done.sys_s;
		user_s += done.user_s;
	}
	wall = now() - start;
	while (wait(&status) > 0)
		failed |= !WIFEXITED(status) || WEXITSTATUS(status);
	printf("usemem: mib=%lu procs=%lu wall_s=%.3f mbps=%.1f sys_s=%.3f user_s=%.3f%s\n",
	       size_mib, procs, wall, size_mib * 1.048576 / wall, sys_s, user_s,
	       failed ? " FAILED" : "");
	return failed;
}

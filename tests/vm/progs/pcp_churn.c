// SPDX-License-Identifier: GPL-2.0
/*
 * pcp_churn: page allocator churn for the PCP high tests and benchmark.
 *
 *   pcp_churn fault [--threads N] [--mib M] [--rounds R | --seconds S]
 *	each thread maps M MiB of anonymous memory (4 KiB pages, no THP),
 *	writes one byte per page (a fault, a page allocation) and unmaps it
 *	(frees every page), R times or for S seconds.
 *   pcp_churn fork [--threads N] [--mib M] [--rounds R | --seconds S]
 *	each of N workers forks children that write M MiB and exit, R
 *	times or for S seconds: page tables, stacks and exit-time frees.
 *
 * Prints one line: "pcp_churn: mode=... ops=... secs=... rate=..." where an
 * op is one mapped-and-unmapped region (fault) or one child (fork).
 * Exit status: 0, or 1 on any failure.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sys/wait.h>

#include "testprog.h"

#ifndef MADV_NOHUGEPAGE
#define MADV_NOHUGEPAGE 15
#endif

static int fork_mode;
static size_t region;
static long rounds;
static double seconds;
static double start;

static int touch_region(void)
{
	char *p = mmap(NULL, region, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	madvise(p, region, MADV_NOHUGEPAGE);
	for (size_t off = 0; off < region; off += PAGE_SZ)
		p[off] = 1;
	return munmap(p, region);
}

static int one_op(void)
{
	pid_t pid;
	int status;

	if (!fork_mode)
		return touch_region();
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(touch_region() ? 1 : 0);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	return 0;
}

static void *worker(void *arg)
{
	long *ops = arg;

	for (;;) {
		if (rounds && *ops >= rounds)
			break;
		if (!rounds && now() - start >= seconds)
			break;
		if (one_op()) {
			perror("pcp_churn");
			*ops = -1;
			break;
		}
		(*ops)++;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = 2;
	double mib = 8;
	long total = 0;
	pthread_t tid[64];
	long ops[64] = { 0 };
	double secs;
	const struct testopt opts[] = {
		OPT("threads", &threads), OPT("mib", &mib),
		OPT("rounds", &rounds), OPT("seconds", &seconds),
	};

	if (argc < 2 || (strcmp(argv[1], "fault") && strcmp(argv[1], "fork"))) {
		fprintf(stderr, "usage: pcp_churn fault|fork [--threads N] [--mib M] [--rounds R | --seconds S]\n");
		return KSFT_FAIL;
	}
	fork_mode = !strcmp(argv[1], "fork");
	if (parse_testopts(argc, argv, 2, opts, ARRAY_SIZE(opts)) < 0)
		return KSFT_FAIL;
	if (threads < 1 || threads > 64 || mib <= 0 || (!rounds && seconds <= 0)) {
		fprintf(stderr, "pcp_churn: bad arguments\n");
		return KSFT_FAIL;
	}
	region = ((size_t)(mib * (1 << 20)) + PAGE_SZ - 1) & ~(PAGE_SZ - 1);

	start = now();
	for (int i = 0; i < threads; i++)
		if (pthread_create(&tid[i], NULL, worker, &ops[i])) {
			perror("pthread_create");
			return KSFT_FAIL;
		}
	for (int i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		if (ops[i] < 0)
			return KSFT_FAIL;
		total += ops[i];
	}
	secs = now() - start;
	printf("pcp_churn: mode=%s ops=%ld secs=%.3f rate=%.2f\n", argv[1],
	       total, secs, total / secs);
	return KSFT_PASS;
}

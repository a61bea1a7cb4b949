// SPDX-License-Identifier: GPL-2.0
/*
 * malloc_thp: a heap with THP, as glibc's malloc keeps it with
 * glibc.malloc.hugetlb=1 (MADV_HUGEPAGE on its arenas): a sparse phase,
 * small objects spread over a large heap (one 4K page touched in every
 * 2M), then a dense phase, the working set, every page touched. With THP
 * the sparse phase costs a whole 2M per object, charged to the cgroup;
 * in a memory cgroup with a limit and no swap that is an OOM kill at the
 * dense phase.
 *
 *   malloc_thp --sparse MIB --dense MIB
 *
 * Prints "malloc_thp: rss_kib=N anon_huge_kib=M" at the end (the heap's
 * AnonHugePages, PMD THPs only). Exit status: 0 done, 1 setup failed;
 * killed by the OOM killer, it dies of SIGKILL.
 */
#define TESTPROG "malloc_thp"
#include "testprog.h"

int main(int argc, char **argv)
{
	unsigned long sparse_mib = 0, dense_mib = 0;
	const struct testopt opts[] = {
		OPT("sparse", &sparse_mib),
		OPT("dense", &dense_mib),
	};
	size_t sparse, dense, off;
	char *heap;
	void *raw;

	if (parse_testopts(argc, argv, 1, opts, ARRAY_SIZE(opts)) != argc ||
	    !sparse_mib)
		die(KSFT_FAIL, "usage: malloc_thp --sparse MIB --dense MIB");
	sparse = sparse_mib << 20;
	dense = dense_mib << 20;
	heap = mmap_thp_aligned(sparse + dense, &raw);
	if (!heap || madvise(heap, sparse + dense, MADV_HUGEPAGE))
		die(KSFT_FAIL, "mmap/madvise: %s", strerror(errno));
	for (off = 0; off < sparse; off += THP_SZ)
		heap[off] = 1;
	for (off = sparse; off < sparse + dense; off += PAGE_SZ)
		heap[off] = 1;
	msg("rss_kib=%" PRIu64 " anon_huge_kib=%" PRIu64,
	    proc_kib("/proc/self/status", "VmRSS"), vma_anon_huge_kib(heap));
	return KSFT_PASS;
}

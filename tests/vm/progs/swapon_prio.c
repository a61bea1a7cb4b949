// SPDX-License-Identifier: GPL-2.0
/*
 * swapon_prio DEVICE PRIORITY: swapon(2) with a priority. busybox's swapon
 * has no -p, and the multi-device tests need devices of known priorities.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/swap.h>

#include "testprog.h"

int main(int argc, char **argv)
{
	char *end;
	long prio;

	if (argc != 3) {
		fprintf(stderr, "usage: swapon_prio DEVICE PRIORITY (0..%d)\n",
			SWAP_FLAG_PRIO_MASK);
		return KSFT_FAIL;
	}
	prio = strtol(argv[2], &end, 10);
	if (*end || prio < 0 || prio > SWAP_FLAG_PRIO_MASK) {
		fprintf(stderr, "swapon_prio: bad priority '%s'\n", argv[2]);
		return KSFT_FAIL;
	}
	if (swapon(argv[1], SWAP_FLAG_PREFER |
		   ((prio << SWAP_FLAG_PRIO_SHIFT) & SWAP_FLAG_PRIO_MASK))) {
		fprintf(stderr, "swapon_prio: %s: %s\n", argv[1], strerror(errno));
		return KSFT_FAIL;
	}
	return KSFT_PASS;
}

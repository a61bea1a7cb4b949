// SPDX-License-Identifier: GPL-2.0
/*
 * modload: load a module with exactly one finit_module() call and print the
 * kernel's error. busybox insmod retries a failed finit_module() with
 * init_module(), so a refused load would log its refusal twice.
 *
 *   modload [--fail-nth N] FILE.ko [PARAMS...]
 *
 * exit 0 loaded, 1 refused (errno printed).
 *
 * --fail-nth N: fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS): the Nth
 * allocation that failslab or fail_page_alloc considers during the
 * finit_module() call fails (/proc/thread-self/fail-nth, written right
 * before the call, so nothing of this program counts). Then prints
 * "fail-nth: injected" when the Nth point was reached, or "fail-nth: not
 * reached (K calls)" when the load made fewer calls: the end of a loop
 * over N.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char params[1024] = "", nth[32];
	unsigned long fail_nth = 0, left;
	size_t len = 0;
	int fd, nth_fd = -1, first = 1, ret = 0, err = 0;
	ssize_t n;

	if (argc > 2 && !strcmp(argv[1], "--fail-nth")) {
		fail_nth = strtoul(argv[2], NULL, 10);
		first = 3;
	}
	if (argc < first + 1 || (first > 1 && !fail_nth)) {
		fprintf(stderr, "usage: modload [--fail-nth N] FILE.ko [PARAMS...]\n");
		return 2;
	}
	for (int i = first + 1; i < argc; i++)
		len += snprintf(params + len, sizeof(params) - len, "%s%s",
				i > first + 1 ? " " : "", argv[i]);
	fd = open(argv[first], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "modload: %s: %s\n", argv[first], strerror(errno));
		return 2;
	}
	if (fail_nth) {
		nth_fd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
		if (nth_fd < 0) {
			fprintf(stderr, "modload: /proc/thread-self/fail-nth: %s\n",
				strerror(errno));
			return 2;
		}
		len = snprintf(nth, sizeof(nth), "%lu", fail_nth);
		if (write(nth_fd, nth, len) != (ssize_t)len) {
			fprintf(stderr, "modload: writing fail-nth: %s\n",
				strerror(errno));
			return 2;
		}
	}
	if (syscall(SYS_finit_module, fd, params, 0)) {
		err = errno;
		ret = 1;
	}
	if (fail_nth) {
		/* What is left of the count; 0 once the Nth call failed. */
		n = pread(nth_fd, nth, sizeof(nth) - 1, 0);
		nth[n > 0 ? n : 0] = 0;
		left = strtoul(nth, NULL, 10);
		/* Reset, so that nothing after the load fails. */
		if (pwrite(nth_fd, "0", 1, 0) != 1)
			fprintf(stderr, "modload: resetting fail-nth: %s\n",
				strerror(errno));
		if (left)
			printf("fail-nth: not reached (%lu calls)\n",
			       fail_nth - left);
		else
			printf("fail-nth: injected\n");
	}
	if (ret)
		printf("modload: %s: %s (%s)\n", argv[first], strerror(err),
		       strerrorname_np(err));
	return ret;
}

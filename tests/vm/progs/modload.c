// SPDX-License-Identifier: GPL-2.0
/*
 * modload: load a module with exactly one finit_module() call and print the
 * kernel's error. busybox insmod retries a failed finit_module() with
 * init_module(), so a refused load would log its refusal twice.
 *
 *   modload FILE.ko [PARAMS...]    exit 0 loaded, 1 refused (errno printed)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char params[1024] = "";
	size_t len = 0;
	int fd;

	if (argc < 2) {
		fprintf(stderr, "usage: modload FILE.ko [PARAMS...]\n");
		return 2;
	}
	for (int i = 2; i < argc; i++)
		len += snprintf(params + len, sizeof(params) - len, "%s%s",
				i > 2 ? " " : "", argv[i]);
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "modload: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	if (syscall(SYS_finit_module, fd, params, 0)) {
		printf("modload: %s: %s (%s)\n", argv[1], strerror(errno),
		       strerrorname_np(errno));
		return 1;
	}
	return 0;
}

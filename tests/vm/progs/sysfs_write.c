// SPDX-License-Identifier: GPL-2.0
/*
 * sysfs_write FILE VALUE: write VALUE plus a newline to FILE in one write(),
 * as "echo VALUE > FILE" does, and print "ok" or the errno name (EINVAL...).
 * busybox's shell reports a failed write without its errno, and the tests
 * must tell EINVAL from other refusals.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *errno_name(int err)
{
	switch (err) {
	case EINVAL: return "EINVAL";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EBUSY: return "EBUSY";
	case ENOENT: return "ENOENT";
	case ERANGE: return "ERANGE";
	case ENODEV: return "ENODEV";
	case ENOSPC: return "ENOSPC";
	default: return strerror(err);
	}
}

int main(int argc, char **argv)
{
	char *buf;
	int fd, len;

	if (argc != 3) {
		fprintf(stderr, "usage: sysfs_write FILE VALUE\n");
		return 2;
	}
	/* Any length: the tests write lines longer than a page too. */
	len = strlen(argv[2]) + 1;
	buf = malloc(len + 1);
	if (!buf)
		return 2;
	snprintf(buf, len + 1, "%s\n", argv[2]);
	fd = open(argv[1], O_WRONLY);
	if (fd < 0) {
		printf("%s\n", errno_name(errno));
		return 1;
	}
	if (write(fd, buf, len) != len) {
		printf("%s\n", errno_name(errno));
		return 1;
	}
	close(fd);
	printf("ok\n");
	return 0;
}

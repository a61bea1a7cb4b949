/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Strict parsing of sysfs knob writes. Pure C: built into the module and,
 * unchanged, into the userspace unit tests (tests/unit/).
 */
#ifndef _MMTUNE_PARSE_H
#define _MMTUNE_PARSE_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/types.h>
#else
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
typedef uint32_t u32;
typedef uint64_t u64;
#endif

int mmtune_parse_u32(const char *buf, size_t count, u32 min, u32 max,
		     u32 *val);
int mmtune_parse_bool(const char *buf, size_t count, bool *val);

#endif /* _MMTUNE_PARSE_H */

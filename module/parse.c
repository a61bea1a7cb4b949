// SPDX-License-Identifier: GPL-2.0
/*
 * Knob writes are parsed strictly so that a typo is refused with -EINVAL
 * and leaves the old value in place, instead of being read as a prefix
 * ("10x" -> 10) or wrapping around ("4294967296" -> 0).
 */
#include "parse.h"

/* Length without the single trailing newline that echo adds. */
static size_t knob_len(const char *buf, size_t count)
{
	if (count && buf[count - 1] == '\n')
		count--;
	return count;
}

/**
 * mmtune_parse_u32 - parse a decimal knob value within [@min, @max]
 *
 * Return: 0 and *@val set, or -EINVAL with *@val untouched.
 */
int mmtune_parse_u32(const char *buf, size_t count, u32 min, u32 max,
		     u32 *val)
{
	size_t len = knob_len(buf, count);
	u64 v = 0;
	size_t i;

	if (!len)
		return -EINVAL;
	for (i = 0; i < len; i++) {
		if (buf[i] < '0' || buf[i] > '9')
			return -EINVAL;
		v = v * 10 + (u64)(buf[i] - '0');
		/* max <= U32_MAX, so stopping here also prevents overflow. */
		if (v > max)
			return -EINVAL;
	}
	if (v < min)
		return -EINVAL;
	*val = (u32)v;
	return 0;
}

/**
 * mmtune_parse_bool - parse an on/off knob: "0" or "1"
 *
 * Return: 0 and *@val set, or -EINVAL with *@val untouched.
 */
int mmtune_parse_bool(const char *buf, size_t count, bool *val)
{
	u32 v;
	int ret = mmtune_parse_u32(buf, count, 0, 1, &v);

	if (!ret)
		*val = v;
	return ret;
}

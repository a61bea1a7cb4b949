// SPDX-License-Identifier: GPL-2.0
/* Unit tests of module/parse.c: what knob writes are accepted and refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "parse.h"

#define U32_MAX 4294967295U

static int parse_u32(const char *s, u32 min, u32 max, u32 *val)
{
	return mmtune_parse_u32(s, strlen(s), min, max, val);
}

static void accepts_decimal_with_or_without_newline(void **state)
{
	u32 v = 7;

	assert_int_equal(parse_u32("42", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(parse_u32("43\n", 0, 100, &v), 0);
	assert_int_equal(v, 43);
	assert_int_equal(parse_u32("0", 0, 100, &v), 0);
	assert_int_equal(v, 0);
}

static void refuses_junk_and_keeps_old_value(void **state)
{
	static const char *const bad[] = {
		"", "\n", "\n\n", "10x", "x10", " 10", "10 ", "-1", "+1",
		"1.5", "0x10", "1\n\n", "1\n2",
	};
	u32 v = 7;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse_u32(bad[i], 0, 100, &v), -EINVAL);
		assert_int_equal(v, 7);
	}
}

static void enforces_range_inclusive(void **state)
{
	u32 v = 7;

	assert_int_equal(parse_u32("10", 10, 20, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(parse_u32("20", 10, 20, &v), 0);
	assert_int_equal(v, 20);
	assert_int_equal(parse_u32("9", 10, 20, &v), -EINVAL);
	assert_int_equal(parse_u32("21", 10, 20, &v), -EINVAL);
	assert_int_equal(v, 20);
}

static void refuses_overflow(void **state)
{
	u32 v = 7;

	assert_int_equal(parse_u32("4294967295", 0, U32_MAX, &v), 0);
	assert_int_equal(v, U32_MAX);
	v = 7;
	assert_int_equal(parse_u32("4294967296", 0, U32_MAX, &v), -EINVAL);
	assert_int_equal(parse_u32("18446744073709551617", 0, U32_MAX, &v), -EINVAL);
	assert_int_equal(parse_u32("99999999999999999999999999", 0, U32_MAX, &v), -EINVAL);
	assert_int_equal(v, 7);
}

static void accepts_leading_zeros(void **state)
{
	u32 v = 7;

	assert_int_equal(parse_u32("007", 0, 100, &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(parse_u32("0000000000000000000000000001", 0, 100, &v), 0);
	assert_int_equal(v, 1);
}

static void only_counts_given_length(void **state)
{
	u32 v = 7;

	/* sysfs passes a length; bytes beyond it are not ours to read. */
	assert_int_equal(mmtune_parse_u32("12345", 2, 0, 100, &v), 0);
	assert_int_equal(v, 12);
}

static void bool_is_zero_or_one(void **state)
{
	bool b = false;

	assert_int_equal(mmtune_parse_bool("1\n", 2, &b), 0);
	assert_true(b);
	assert_int_equal(mmtune_parse_bool("0", 1, &b), 0);
	assert_false(b);
	b = true;
	assert_int_equal(mmtune_parse_bool("2", 1, &b), -EINVAL);
	assert_int_equal(mmtune_parse_bool("on", 2, &b), -EINVAL);
	assert_int_equal(mmtune_parse_bool("", 0, &b), -EINVAL);
	assert_true(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(accepts_decimal_with_or_without_newline),
		cmocka_unit_test(refuses_junk_and_keeps_old_value),
		cmocka_unit_test(enforces_range_inclusive),
		cmocka_unit_test(refuses_overflow),
		cmocka_unit_test(accepts_leading_zeros),
		cmocka_unit_test(only_counts_given_length),
		cmocka_unit_test(bool_is_zero_or_one),
	};

	return cmocka_run_group_tests_name("parse", tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * test_stamp.c - common/stamp.c, the one formatter and parser of time stamps (PDH log
 * records, relog -b/-e): known instants both ways, the calendar (leap years, days per
 * month, the 24-hour clock), the spellings the parser accepts and the text it refuses,
 * the range ends, and format -> parse round trips over four centuries.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "filetime.h"
#include "stamp.h"

#define DAY (86400LL * PERFLIB_FILETIME_PER_SEC)

/* the local FILETIME of Unix-style seconds (the calendar of both is the same) */
static int64_t ft_of(int64_t unix_secs, int64_t msec)
{
	return perflib_filetime_from_unix(unix_secs, msec * 1000000);
}

static int64_t parse(const char *s)
{
	int64_t ft = -1;

	assert_int_equal(perflib_stamp_parse(s, &ft), 0);
	return ft;
}

static void refused(const char *s)
{
	int64_t ft = 42;

	if (perflib_stamp_parse(s, &ft) != -EINVAL)
		fail_msg("\"%s\" was accepted", s);
	assert_int_equal(ft, 42); /* untouched */
}

static void test_format(void **state)
{
	char buf[PERFLIB_STAMP_SIZE];

	(void)state;
	/* perflib-api.md 8.2: 2024-01-02 03:04:05.678 */
	perflib_stamp_format(133486382456780000LL, buf);
	assert_string_equal(buf, "01/02/2024 03:04:05.678");
	/* tools.md 4.3's transcript: zero-padded, 24-hour, milliseconds truncated */
	perflib_stamp_format(ft_of(1473956456, 2) + 9999, buf);
	assert_string_equal(buf, "09/15/2016 16:20:56.002");
	perflib_stamp_format(0, buf);
	assert_string_equal(buf, "01/01/1601 00:00:00.000");
	perflib_stamp_format(PERFLIB_FILETIME_UNIX_EPOCH - 1, buf);
	assert_string_equal(buf, "12/31/1969 23:59:59.999");
	perflib_stamp_format(ft_of(951782400, 0), buf); /* 2000, divisible by 400: leap */
	assert_string_equal(buf, "02/29/2000 00:00:00.000");
	perflib_stamp_format(ft_of(4107542400LL, 0), buf); /* 2100 is not leap */
	assert_string_equal(buf, "03/01/2100 00:00:00.000");
	/* the range ends: clamped */
	perflib_stamp_format(-1, buf);
	assert_string_equal(buf, "01/01/1601 00:00:00.000");
	perflib_stamp_format(INT64_MAX, buf);
	assert_string_equal(buf, "12/31/9999 23:59:59.999");
}

static void test_parse(void **state)
{
	(void)state;
	assert_int_equal(parse("01/02/2024 03:04:05.678"), 133486382456780000LL);
	assert_int_equal(parse("09/15/2016 16:20:56.002"), ft_of(1473956456, 2));
	/* relog's spellings: one-digit month, day and hour, parts of the time left out */
	assert_int_equal(parse("3/27/2026 15:28:06"), ft_of(1774625286, 0));
	assert_int_equal(parse("3/27/2026 15:28"), ft_of(1774625280, 0));
	assert_int_equal(parse("3/27/2026 15"), ft_of(1774623600, 0));
	assert_int_equal(parse("3/27/2026 9"), ft_of(1774602000, 0));
	assert_int_equal(parse("3/27/2026"), ft_of(1774569600, 0));
	assert_int_equal(parse("03/27/2026 00:00:00.000"), ft_of(1774569600, 0));
	/* the range ends */
	assert_int_equal(parse("1/1/1601"), 0);
	assert_int_equal(parse("12/31/9999 23:59:59.999") + 10000, ft_of(253402300800LL, 0));
}

static void test_calendar(void **state)
{
	(void)state;
	/* February 29 of leap years only: divisible by 4, by 100 only if by 400 */
	assert_int_equal(parse("2/29/2024") + DAY, parse("3/1/2024"));
	assert_int_equal(parse("2/29/2000") + DAY, parse("3/1/2000"));
	assert_int_equal(parse("2/29/1604") + DAY, parse("3/1/1604"));
	refused("2/29/2023");
	refused("2/29/1900");
	refused("2/29/2100");
	refused("2/30/2024");
	refused("2/31/2024");
	/* days per month */
	parse("1/31/2026"), parse("3/31/2026"), parse("4/30/2026"), parse("12/31/2026");
	refused("4/31/2026");
	refused("6/31/2026");
	refused("9/31/2026");
	refused("11/31/2026");
	refused("1/32/2026");
	refused("1/0/2026");
	/* months */
	refused("13/1/2026");
	refused("0/1/2026");
	/* the 24-hour clock */
	parse("3/27/2026 23:59:59.999");
	refused("3/27/2026 24:00:00");
	refused("3/27/2026 24");
	refused("3/27/2026 15:60");
	refused("3/27/2026 15:28:60");
	/* years with four digits, from 1601 */
	refused("12/31/1600 23:59:59");
	refused("1/1/10000");
	refused("1/1/26");
	refused("1/1/02026");
}

static void test_refused_text(void **state)
{
	(void)state;
	/* trailing garbage, after every part */
	refused("3/27/2026x");
	refused("3/27/2026 15x");
	refused("3/27/2026 15:28:06junk");
	refused("3/27/2026 15:28:06.123x");
	refused("3/27/2026 15:28:06.1234");
	refused("3/27/2026 15:28:06 ");
	refused("3/27/2026 15:28:06\r\n");
	/* a separator without its part, a part without its separator */
	refused("3/27/2026 ");
	refused("3/27/2026 15:");
	refused("3/27/2026 15:28:");
	refused("3/27/2026 15:28:06.");
	refused("3/27/2026 15.123");
	refused("3/27/2026T15:28:06");
	/* digits: too few or too many */
	refused("3/27/2026 15:5");
	refused("3/27/2026 15:28:6");
	refused("3/27/2026 15:28:06.12");
	refused("003/27/2026");
	refused("3/027/2026");
	refused("3/27/2026 015");
	/* other spellings */
	refused("");
	refused(" 3/27/2026");
	refused("3-27-2026");
	refused("2026/3/27");
	refused("3/27");
	refused("+3/27/2026");
	refused("-3/27/2026");
	refused("3/27/2026 3:28:06 PM");
}

/* what the formatter writes the parser reads back, every day of 1601..2001 and 9999 */
static void test_round_trip(void **state)
{
	char buf[PERFLIB_STAMP_SIZE];
	struct perflib_stamp s, t;
	int64_t ft, back;

	(void)state;
	for (ft = 0; ft < 146098 * DAY; ft += DAY + 37 * PERFLIB_FILETIME_PER_SEC + 10000) {
		perflib_stamp_format(ft, buf);
		assert_int_equal(perflib_stamp_parse(buf, &back), 0);
		assert_int_equal(back, ft - ft % 10000);
		assert_int_equal(perflib_stamp_split(ft, &s), 0);
		assert_int_equal(perflib_stamp_join(&s, &back), 0);
		assert_int_equal(back, ft - ft % 10000);
	}
	assert_int_equal(perflib_stamp_parse("12/31/9999 23:59:59.999", &ft), 0);
	assert_int_equal(perflib_stamp_split(ft, &s), 0);
	assert_int_equal(s.year, 9999);
	assert_int_equal(s.msec, 999);
	assert_int_equal(perflib_stamp_split(ft + 10000, &t), -ERANGE);
	assert_int_equal(perflib_stamp_split(-1, &t), -ERANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format),	   cmocka_unit_test(test_parse),
		cmocka_unit_test(test_calendar),   cmocka_unit_test(test_refused_text),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests_name("stamp", tests, NULL, NULL);
}

// SPDX-License-Identifier: MIT
/*
 * test_filetime.c - common/filetime.h, the one FILETIME <-> Unix time conversion: known
 * instants (1601, 1970, 2000, the 100 ns unit), and the round trip of every second of a
 * leap day.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "filetime.h"

static void test_known_instants(void **state)
{
	(void)state;
	/* 1601-01-01, the FILETIME epoch */
	assert_int_equal(perflib_filetime_to_unix(0), -11644473600LL);
	/* 1970-01-01 */
	assert_int_equal(perflib_filetime_from_unix(0, 0), 116444736000000000LL);
	assert_int_equal(perflib_filetime_to_unix(116444736000000000LL), 0);
	/* 2000-01-01T00:00:00Z: 946684800 Unix, 125911584000000000 FILETIME */
	assert_int_equal(perflib_filetime_from_unix(946684800, 0), 125911584000000000LL);
	/* 100 ns units: 1 us is 10, 99 ns is 0 */
	assert_int_equal(perflib_filetime_from_unix(0, 1000) - PERFLIB_FILETIME_UNIX_EPOCH, 10);
	assert_int_equal(perflib_filetime_from_unix(0, 99) - PERFLIB_FILETIME_UNIX_EPOCH, 0);
	/* the fraction of a second is dropped */
	assert_int_equal(perflib_filetime_to_unix(perflib_filetime_from_unix(5, 999999999)), 5);
}

static void test_round_trip(void **state)
{
	int64_t t;

	(void)state;
	/* 2024-02-29, every second */
	for (t = 1709164800; t < 1709164800 + 86400; t++)
		assert_int_equal(perflib_filetime_to_unix(perflib_filetime_from_unix(t, 0)), t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_instants),
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests_name("filetime", tests, NULL, NULL);
}

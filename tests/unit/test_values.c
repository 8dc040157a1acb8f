// SPDX-License-Identifier: MIT
/*
 * test_values.c - the counter descriptor of the value functions (userspace/internal.h,
 * used by userspace/values.c): perflib_counter_pack and its unpackers agree for every
 * offset, size and by-reference flag a counter set can have, and the one compare the hot
 * path makes ("a by-value counter of this size") holds for exactly those. The value
 * functions themselves run in test_api_provider.c and test_api_columns.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "testlib.h"
#include "internal.h"

static void test_round_trip(void **state)
{
	static const uint8_t sizes[] = {0, 4, 8};
	struct perflib_counter c = {0};
	uint32_t off, d, k;
	size_t s;
	int byref;

	(void)state;
	/* every counter offset: 32 + 8 * position, up to the 16-bit field's end */
	for (off = sizeof(PERF_COUNTERSET_INSTANCE); off <= 0xFFF8; off += 8) {
		for (s = 0; s < sizeof(sizes); s++) {
			for (byref = 0; byref < 2; byref++) {
				c.offset = off;
				c.size = sizes[s];
				c.byref = (uint8_t)byref;
				d = perflib_counter_pack(&c);
				assert_int_not_equal(d, 0); /* 0 is "no such counter" */
				assert_int_equal(perflib_desc_offset(d), off);
				k = perflib_desc_kind(d);
				assert_int_equal(k & ~PERFLIB_DESC_BYREF, sizes[s]);
				assert_int_equal(!!(k & PERFLIB_DESC_BYREF), byref);
				/* the value functions' check: by value and of the size asked */
				assert_int_equal(k == 4, !byref && sizes[s] == 4);
				assert_int_equal(k == 8, !byref && sizes[s] == 8);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
	};

	return cmocka_run_group_tests_name("values", tests, NULL, NULL);
}

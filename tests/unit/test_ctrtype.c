/* SPDX-License-Identifier: MIT */
/*
 * test_ctrtype.c - the one counter-type table (common/ctrtype.c): every row against the bit
 * fields of its winperf.h value (so a wrong column cannot hide), the lookups, the fallback
 * classification of values outside the table and the one base-counter rule.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "testlib.h"
#include "perflib.h"
#include "ctrtype.h"

/* every row agrees with the bits of its own value */
static void test_rows_match_bits(void **state)
{
	size_t i;

	(void)state;
	assert_int_equal(ctrtype_count(), 37);
	assert_null(ctrtype_at(37));
	for (i = 0; i < ctrtype_count(); i++) {
		const struct ctrtype *t = ctrtype_at(i);
		uint32_t v = t->value;

		assert_non_null(t);
		assert_ptr_equal(ctrtype_find(v), t);
		assert_ptr_equal(ctrtype_by_name(t->name), t);
		/* a base is exactly the BASE subtype of a counter type */
		assert_int_equal(t->calc == CTRTYPE_CALC_BASE,
				 (v & CTRTYPE_TYPE_MASK) == PERF_TYPE_COUNTER &&
					 ctrtype_subtype(v) == PERF_COUNTER_BASE);
		/* every type with the DELTA flag needs two samples */
		if (v & PERF_DELTA_COUNTER)
			assert_int_equal(t->samples, 2);
		/* a time base is that of the timer bits whenever the formula has a time */
		if (t->timebase == CTRTYPE_TB_100NS)
			assert_int_equal(v & CTRTYPE_TIMEBASE_MASK, PERF_TIMER_100NS);
		if (t->timebase == CTRTYPE_TB_OBJECT)
			assert_int_equal(v & CTRTYPE_TIMEBASE_MASK, PERF_OBJECT_TIMER);
		if (t->timebase == CTRTYPE_TB_TICK)
			assert_int_equal(v & CTRTYPE_TIMEBASE_MASK, PERF_TIMER_TICK);
		/* the object clock always comes with perfTimeID/perfFreqID */
		assert_int_equal(t->timebase == CTRTYPE_TB_OBJECT,
				 !!(t->needs & CTRTYPE_NEEDS_TIME));
		/* a required base names a base type */
		if (t->base_type)
			assert_true(ctrtype_is_base(t->base_type));
		assert_int_equal(!!t->base_type,
				 !!(t->needs & (CTRTYPE_NEEDS_BASE | CTRTYPE_NEEDS_BASE_WARN |
						CTRTYPE_NEEDS_MULTI)));
		assert_int_equal(t->percent, (v & CTRTYPE_DISPLAY_MASK) == PERF_DISPLAY_PERCENT);
		assert_int_equal(ctrtype_displayable(v), t->samples > 0);
		assert_int_equal(t->samples == 0,
				 t->calc == CTRTYPE_CALC_BASE || t->calc == CTRTYPE_CALC_HIDDEN);
		assert_int_equal(t->aggregate, PERF_AGGREGATE_TOTAL);
	}
}

static void test_columns(void **state)
{
	(void)state;
	assert_int_equal(ctrtype_size(PERF_COUNTER_RAWCOUNT), 4);
	assert_int_equal(ctrtype_size(PERF_COUNTER_LARGE_RAWCOUNT), 8);
	assert_int_equal(ctrtype_size(PERF_COUNTER_TEXT), 0);
	assert_int_equal(ctrtype_size(PERF_COUNTER_NODATA), 0);
	assert_int_equal(ctrtype_samples(PERF_COUNTER_RAWCOUNT), 1);
	assert_int_equal(ctrtype_samples(PERF_ELAPSED_TIME), 1);
	assert_int_equal(ctrtype_samples(PERF_LARGE_RAW_FRACTION), 1);
	assert_int_equal(ctrtype_samples(PERF_AVERAGE_TIMER), 2); /* no DELTA flag */
	assert_int_equal(ctrtype_samples(PERF_AVERAGE_BULK), 2);
	assert_int_equal(ctrtype_samples(PERF_SAMPLE_BASE), 0);
	assert_int_equal(ctrtype_timebase(PERF_COUNTER_100NS_QUEUELEN_TYPE), CTRTYPE_TB_100NS);
	assert_int_equal(ctrtype_timebase(PERF_ELAPSED_TIME), CTRTYPE_TB_OBJECT);
	assert_int_equal(ctrtype_timebase(PERF_COUNTER_RAWCOUNT), CTRTYPE_TB_NONE);
	assert_int_equal(ctrtype_timebase(0x12345678), CTRTYPE_TB_NONE);
	assert_true(ctrtype_percent(PERF_100NSEC_TIMER));
	assert_false(ctrtype_percent(PERF_COUNTER_COUNTER));
	assert_false(ctrtype_percent(0xFFFFFFFF));
	assert_true(ctrtype_listed(PERF_COUNTER_COUNTER));
	assert_false(ctrtype_listed(PERF_AVERAGE_BULK)); /* NOSHOW, but it cooks */
	assert_true(ctrtype_displayable(PERF_AVERAGE_BULK));
	assert_false(ctrtype_listed(PERF_RAW_BASE));
	assert_int_equal(ctrtype_find(PERF_SAMPLE_FRACTION)->base_type, PERF_SAMPLE_BASE);
	assert_int_equal(ctrtype_find(PERF_PRECISION_SYSTEM_TIMER)->needs, CTRTYPE_NEEDS_BASE_WARN);
	assert_int_equal(ctrtype_find(PERF_COUNTER_MULTI_TIMER)->needs, CTRTYPE_NEEDS_MULTI);
	assert_string_equal(ctrtype_find(PERF_COUNTER_COUNTER)->macro, "PERF_COUNTER_COUNTER");
}

/* values outside the table are classified by their bits */
static void test_outside_table(void **state)
{
	(void)state;
	assert_null(ctrtype_find(PERF_COUNTER_NODATA));
	assert_int_equal(ctrtype_calc(PERF_COUNTER_NODATA), CTRTYPE_CALC_HIDDEN);
	assert_int_equal(ctrtype_calc(PERF_COUNTER_HISTOGRAM_TYPE), CTRTYPE_CALC_UNKNOWN);
	assert_int_equal(ctrtype_calc(PERF_SIZE_DWORD | PERF_TYPE_TEXT | PERF_TEXT_ASCII),
			 CTRTYPE_CALC_HIDDEN);
	/* an unnamed base (subtype BASE, display bits that no row has) */
	assert_int_equal(ctrtype_calc(PERF_SIZE_DWORD | PERF_TYPE_COUNTER | PERF_COUNTER_BASE),
			 CTRTYPE_CALC_BASE);
	assert_true(ctrtype_is_base(CTRTYPE_WMI_LARGE_RAW_BASE));
	assert_ptr_equal(ctrtype_find(CTRTYPE_WMI_LARGE_RAW_BASE),
			 ctrtype_find(PERF_LARGE_RAW_BASE));
	assert_int_equal(ctrtype_calc(PERF_SIZE_LARGE | PERF_TYPE_NUMBER | 0x00030000),
			 CTRTYPE_CALC_UNKNOWN);
	assert_false(ctrtype_displayable(0x00030000));
	assert_null(ctrtype_by_name(NULL));
	assert_null(ctrtype_by_name("PERF_COUNTER_COUNTER"));
}

/* the one base-counter rule */
static void test_base_rule(void **state)
{
	(void)state;
	assert_true(ctrtype_next_is_base(PERF_RAW_FRACTION, PERF_RAW_BASE));
	assert_true(ctrtype_next_is_base(PERF_SAMPLE_FRACTION, PERF_SAMPLE_BASE));
	assert_true(ctrtype_next_is_base(PERF_AVERAGE_TIMER, PERF_AVERAGE_BASE));
	assert_true(ctrtype_next_is_base(PERF_COUNTER_MULTI_TIMER, PERF_COUNTER_MULTI_BASE));
	assert_true(ctrtype_next_is_base(PERF_PRECISION_100NS_TIMER, PERF_LARGE_RAW_BASE));
	assert_true(ctrtype_next_is_base(PERF_PRECISION_SYSTEM_TIMER, CTRTYPE_WMI_LARGE_RAW_BASE));
	/* a counter that divides by nothing never takes the next counter */
	assert_false(ctrtype_next_is_base(PERF_COUNTER_COUNTER, PERF_RAW_BASE));
	assert_false(ctrtype_next_is_base(PERF_PRECISION_OBJECT_TIMER, PERF_LARGE_RAW_BASE));
	assert_false(ctrtype_next_is_base(PERF_RAW_BASE, PERF_RAW_BASE));
	/* nor a next counter that is no base */
	assert_false(ctrtype_next_is_base(PERF_RAW_FRACTION, PERF_COUNTER_RAWCOUNT));
	assert_true(ctrtype_wants_base(PERF_AVERAGE_BULK));
	assert_false(ctrtype_wants_base(PERF_ELAPSED_TIME));
	/* the whole rule: BaseCounterId first, MultiId for multi types, then the neighbour */
	assert_int_equal(ctrtype_base_index(PERF_RAW_FRACTION, 5, 7, 0, 9, PERF_RAW_BASE), 5);
	assert_int_equal(ctrtype_base_index(PERF_RAW_FRACTION, -1, 7, 0, 9, PERF_RAW_BASE), 1);
	assert_int_equal(
		ctrtype_base_index(PERF_COUNTER_MULTI_TIMER, -1, 7, 0, 9, PERF_COUNTER_MULTI_BASE),
		7);
	assert_int_equal(ctrtype_base_index(PERF_COUNTER_MULTI_TIMER, 3, 7, 0, 9, PERF_RAW_BASE),
			 3);
	/* MultiId is no base for a type without PERF_MULTI_COUNTER */
	assert_int_equal(ctrtype_base_index(PERF_RAW_FRACTION, -1, 7, 4, 9, PERF_COUNTER_RAWCOUNT),
			 -1);
	/* the last counter has no neighbour; a type without a base takes none */
	assert_int_equal(ctrtype_base_index(PERF_RAW_FRACTION, -1, -1, 8, 9, PERF_RAW_BASE), -1);
	assert_int_equal(ctrtype_base_index(PERF_COUNTER_COUNTER, -1, -1, 0, 9, PERF_RAW_BASE), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows_match_bits),
		cmocka_unit_test(test_columns),
		cmocka_unit_test(test_outside_table),
		cmocka_unit_test(test_base_rule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}

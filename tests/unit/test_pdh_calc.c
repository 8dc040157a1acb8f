/* SPDX-License-Identifier: MIT */
/*
 * test_pdh_calc.c - pdh/calc.c: the one rule of what PDH_RAW_COUNTER.SecondValue carries
 * (pdh_second_of) for every type of the counter-type table, and the computation reading it
 * back on the production path (PdhFormatFromRawValue -> pdh_calc): the precision timers
 * take their time stamp from SecondValue, fractions their base, rates the clock.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ctrtype.h"
#include "pdh_internal.h"

static void test_second_rule(void **state)
{
	size_t i;

	(void)state;
	assert_int_equal(pdh_second_of(PERF_PRECISION_SYSTEM_TIMER), SECOND_BASE);
	assert_int_equal(pdh_second_of(PERF_PRECISION_100NS_TIMER), SECOND_BASE);
	assert_int_equal(pdh_second_of(PERF_PRECISION_OBJECT_TIMER), SECOND_OBJECT);
	assert_int_equal(pdh_second_of(PERF_RAW_FRACTION), SECOND_BASE);
	assert_int_equal(pdh_second_of(PERF_SAMPLE_FRACTION), SECOND_BASE);
	assert_int_equal(pdh_second_of(PERF_AVERAGE_TIMER), SECOND_BASE);
	assert_int_equal(pdh_second_of(PERF_COUNTER_COUNTER), SECOND_TIME);
	assert_int_equal(pdh_second_of(PERF_100NSEC_TIMER), SECOND_100NS);
	assert_int_equal(pdh_second_of(PERF_ELAPSED_TIME), SECOND_OBJECT);
	assert_int_equal(pdh_second_of(PERF_COUNTER_RAWCOUNT), SECOND_NONE);
	/* every type of the table: a base where the formula divides by one, else its clock */
	for (i = 0; i < ctrtype_count(); i++) {
		const struct ctrtype *t = ctrtype_at(i);
		enum second s = pdh_second_of(t->value);
		bool by_base = t->calc == CTRTYPE_CALC_AVERAGE ||
			       t->calc == CTRTYPE_CALC_RAW_FRACTION ||
			       t->calc == CTRTYPE_CALC_SAMPLE_FRACTION ||
			       t->value == PERF_PRECISION_SYSTEM_TIMER ||
			       t->value == PERF_PRECISION_100NS_TIMER;

		if (by_base) {
			assert_int_equal(s, SECOND_BASE);
			continue;
		}
		switch (t->timebase) {
		case CTRTYPE_TB_TICK:
			assert_int_equal(s, SECOND_TIME);
			break;
		case CTRTYPE_TB_100NS:
			assert_int_equal(s, SECOND_100NS);
			break;
		case CTRTYPE_TB_OBJECT:
			assert_int_equal(s, SECOND_OBJECT);
			break;
		default:
			assert_int_equal(s, SECOND_NONE);
			break;
		}
	}
}

/* the display value of two raw samples (N, SecondValue) of @type, time base @tb */
static double format2(DWORD type, LONGLONG tb, LONGLONG n0, LONGLONG s0, LONGLONG n1, LONGLONG s1)
{
	PDH_RAW_COUNTER r0 = {.CStatus = 0, .FirstValue = n0, .SecondValue = s0, .MultiCount = 1};
	PDH_RAW_COUNTER r1 = {.CStatus = 0, .FirstValue = n1, .SecondValue = s1, .MultiCount = 1};
	PDH_FMT_COUNTERVALUE v;

	assert_int_equal(
		PdhFormatFromRawValue(type, PDH_FMT_DOUBLE | PDH_FMT_NOCAP100, &tb, &r1, &r0, &v),
		0);
	return v.doubleValue;
}

static void test_second_read_back(void **state)
{
	(void)state;
	/* precision timers: 100 * delta(N) / delta(SecondValue), whatever the time base */
	assert_float_equal(format2(PERF_PRECISION_SYSTEM_TIMER, 1000, 0, 100, 40, 200), 40.0, 1e-9);
	assert_float_equal(format2(PERF_PRECISION_100NS_TIMER, 10000000, 0, 100, 40, 200), 40.0,
			   1e-9);
	/* the object timer: the same, SecondValue read as the object clock */
	assert_float_equal(format2(PERF_PRECISION_OBJECT_TIMER, 1000, 0, 0, 40, 80), 50.0, 1e-9);
	/* a sample fraction: 100 * delta(N) / delta(base) */
	assert_float_equal(format2(PERF_SAMPLE_FRACTION, 0, 1, 4, 3, 8), 50.0, 1e-9);
	/* a rate: delta(N) / (delta(time) / F) */
	assert_float_equal(format2(PERF_COUNTER_COUNTER, 1000, 0, 0, 50, 500), 100.0, 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_second_rule),
		cmocka_unit_test(test_second_read_back),
	};

	return cmocka_run_group_tests_name("pdh_calc", tests, NULL, NULL);
}

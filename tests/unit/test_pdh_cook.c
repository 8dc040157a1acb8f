/* SPDX-License-Identifier: MIT */
/*
 * test_pdh_cook.c - the PDH cooking formulas of tools/common/cook.c against values computed
 * by hand from tools.md 5.3, one group of cases per counter type, plus the edge rules.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "testlib.h"
#include "cook.h"
#include "ctrtype.h"

/* both sides printed on failure; relative tolerance for large values */
#define assert_double_eq(a, b)                                                                     \
	do {                                                                                       \
		double a_ = (a), b_ = (b);                                                         \
		if (fabs(a_ - b_) > 1e-9 * fmax(1.0, fabs(b_))) {                                  \
			print_error("%s = %.9f, expected %.9f\n", #a, a_, b_);                     \
			fail();                                                                    \
		}                                                                                  \
	} while (0)

/* cook and expect PDH_COOK_OK with @expect */
static void expect_cooked(uint32_t type, const struct pdh_cook_raw *old,
			  const struct pdh_cook_raw *cur, double expect)
{
	double v = -12345.0;

	assert_int_equal(pdh_cook_value(type, old, cur, &v), PDH_COOK_OK);
	assert_double_eq(v, expect);
}

/* cook and expect @status, with the output left untouched */
static void expect_cook_status(uint32_t type, const struct pdh_cook_raw *old,
			       const struct pdh_cook_raw *cur, enum pdh_cook_status status)
{
	double v = -12345.0;

	assert_int_equal(pdh_cook_value(type, old, cur, &v), status);
	assert_double_eq(v, -12345.0);
}

static void test_rawcount(void **state)
{
	struct pdh_cook_raw cur = {.value = 42};

	(void)state;
	/* N, newest sample only: no older sample needed */
	expect_cooked(PERF_COUNTER_RAWCOUNT, NULL, &cur, 42.0);
	cur.value = 1ULL << 33;
	expect_cooked(PERF_COUNTER_LARGE_RAWCOUNT, NULL, &cur, 8589934592.0);
	cur.value = 0xff;
	expect_cooked(PERF_COUNTER_RAWCOUNT_HEX, NULL, &cur, 255.0);
	cur.value = 0xffffffffffULL;
	expect_cooked(PERF_COUNTER_LARGE_RAWCOUNT_HEX, NULL, &cur, 1099511627775.0);
	/* an older sample does not change a raw count */
	{
		struct pdh_cook_raw old = {.value = 7};

		cur.value = 3;
		expect_cooked(PERF_COUNTER_RAWCOUNT, &old, &cur, 3.0);
	}
}

static void test_counter_rate(void **state)
{
	/* 200 events over 200 ticks at 100 Hz = 2 s: 100/s */
	struct pdh_cook_raw old = {.value = 100, .time = 1000, .freq = 100};
	struct pdh_cook_raw cur = {.value = 300, .time = 1200, .freq = 100};

	(void)state;
	expect_cooked(PERF_COUNTER_COUNTER, &old, &cur, 100.0);
	expect_cooked(PERF_SAMPLE_COUNTER, &old, &cur, 100.0);
	/* 5e9 bytes over 5e9 ns at 1 GHz = 5 s: 1e9 bytes/s */
	old = (struct pdh_cook_raw){.value = 1000000000000ULL, .time = 7, .freq = 1000000000};
	cur = (struct pdh_cook_raw){
		.value = 1005000000000ULL, .time = 5000000007LL, .freq = 1000000000};
	expect_cooked(PERF_COUNTER_BULK_COUNT, &old, &cur, 1e9);
	/* edge rules */
	expect_cook_status(PERF_COUNTER_COUNTER, NULL, &cur, PDH_COOK_FIRST_SAMPLE);
	expect_cook_status(PERF_COUNTER_COUNTER, &cur, &cur, PDH_COOK_NEGATIVE_TIMEBASE);
	expect_cook_status(PERF_COUNTER_COUNTER, &cur, &old, PDH_COOK_NEGATIVE_TIMEBASE);
	cur.freq = 0;
	expect_cook_status(PERF_COUNTER_BULK_COUNT, &old, &cur, PDH_COOK_NEGATIVE_TIMEBASE);
	cur.freq = -5;
	expect_cook_status(PERF_COUNTER_BULK_COUNT, &old, &cur, PDH_COOK_NEGATIVE_TIMEBASE);
	/* N0 > N1 with time advancing: bad data */
	cur = (struct pdh_cook_raw){.value = 5, .time = 9000000000LL, .freq = 1000000000};
	expect_cook_status(PERF_COUNTER_BULK_COUNT, &old, &cur, PDH_COOK_BAD_DATA);
}

static void test_queuelen(void **state)
{
	/* delta(N) / delta(D) in the type's own time base */
	struct pdh_cook_raw old = {.value = 10, .time = 0, .time_100ns = 1000, .obj_time = 5};
	struct pdh_cook_raw cur = {.value = 70, .time = 20, .time_100ns = 1030, .obj_time = 35};

	(void)state;
	expect_cooked(PERF_COUNTER_QUEUELEN_TYPE, &old, &cur, 3.0);	     /* 60 / 20 */
	expect_cooked(PERF_COUNTER_LARGE_QUEUELEN_TYPE, &old, &cur, 3.0);    /* 60 / 20 */
	expect_cooked(PERF_COUNTER_100NS_QUEUELEN_TYPE, &old, &cur, 2.0);    /* 60 / 30 */
	expect_cooked(PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, &old, &cur, 2.0); /* 60 / 30 */
	expect_cook_status(PERF_COUNTER_QUEUELEN_TYPE, NULL, &cur, PDH_COOK_FIRST_SAMPLE);
	/* the object clock must advance for the OBJ_TIME variant only */
	cur.obj_time = 5;
	expect_cook_status(PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, &old, &cur,
			   PDH_COOK_NEGATIVE_TIMEBASE);
	expect_cooked(PERF_COUNTER_QUEUELEN_TYPE, &old, &cur, 3.0);
}

static void test_timers(void **state)
{
	struct pdh_cook_raw old = {.value = 1000, .time = 0, .time_100ns = 0, .obj_time = 100};
	struct pdh_cook_raw cur = {
		.value = 1250, .time = 1000, .time_100ns = 500, .obj_time = 1100};

	(void)state;
	/* 100 * delta(N) / delta(D) */
	expect_cooked(PERF_COUNTER_TIMER, &old, &cur, 25.0);  /* 250 / 1000 ticks */
	expect_cooked(PERF_100NSEC_TIMER, &old, &cur, 50.0);  /* 250 / 500 */
	expect_cooked(PERF_OBJ_TIME_TIMER, &old, &cur, 25.0); /* 250 / 1000 */
	/* not capped at 100 */
	cur.time = 100;
	expect_cooked(PERF_COUNTER_TIMER, &old, &cur, 250.0);
	expect_cook_status(PERF_100NSEC_TIMER, NULL, &cur, PDH_COOK_FIRST_SAMPLE);
	cur.time_100ns = 0;
	expect_cook_status(PERF_100NSEC_TIMER, &old, &cur, PDH_COOK_NEGATIVE_TIMEBASE);
	cur.time_100ns = 500, cur.value = 999;
	expect_cook_status(PERF_100NSEC_TIMER, &old, &cur, PDH_COOK_BAD_DATA);
}

static void test_inverse_timers(void **state)
{
	struct pdh_cook_raw old = {.value = 0, .time = 0, .time_100ns = 0};
	struct pdh_cook_raw cur = {.value = 250, .time = 1000, .time_100ns = 10000000};

	(void)state;
	/* 100 * (1 - delta(N) / delta(D)) */
	expect_cooked(PERF_COUNTER_TIMER_INV, &old, &cur, 75.0);
	cur.value = 10000000;
	expect_cooked(PERF_100NSEC_TIMER_INV, &old, &cur, 0.0);
	/* idle longer than the interval: negative value */
	cur.value = 10000001;
	expect_cook_status(PERF_100NSEC_TIMER_INV, &old, &cur, PDH_COOK_NEGATIVE_VALUE);
	expect_cook_status(PERF_COUNTER_TIMER_INV, NULL, &cur, PDH_COOK_FIRST_SAMPLE);
}

static void test_multi_timers(void **state)
{
	struct pdh_cook_raw old = {.value = 0, .time = 0, .time_100ns = 0, .multi = 4};
	struct pdh_cook_raw cur = {.value = 3000, .time = 1000, .time_100ns = 1000, .multi = 4};

	(void)state;
	/* 100 * delta(N) / delta(D) / B1: 3 busy units of 4 */
	expect_cooked(PERF_COUNTER_MULTI_TIMER, &old, &cur, 75.0);
	expect_cooked(PERF_100NSEC_MULTI_TIMER, &old, &cur, 75.0);
	/* B1 is the newest multi count */
	cur.multi = 6;
	expect_cooked(PERF_100NSEC_MULTI_TIMER, &old, &cur, 50.0);
	/* 100 * (B1 - delta(N) / delta(D)) */
	cur.value = 1000, cur.multi = 4;
	expect_cooked(PERF_COUNTER_MULTI_TIMER_INV, &old, &cur, 300.0);
	expect_cooked(PERF_100NSEC_MULTI_TIMER_INV, &old, &cur, 300.0);
	cur.value = 5000;
	expect_cook_status(PERF_100NSEC_MULTI_TIMER_INV, &old, &cur, PDH_COOK_NEGATIVE_VALUE);
	/* a zero multi count divides nothing */
	cur.multi = 0;
	expect_cook_status(PERF_COUNTER_MULTI_TIMER, &old, &cur, PDH_COOK_NEGATIVE_DENOMINATOR);
	expect_cook_status(PERF_COUNTER_MULTI_TIMER_INV, NULL, &cur, PDH_COOK_FIRST_SAMPLE);
}

static void test_sample_fraction(void **state)
{
	struct pdh_cook_raw old = {.value = 10, .base = 20};
	struct pdh_cook_raw cur = {.value = 13, .base = 24};

	(void)state;
	/* 100 * delta(N) / delta(B) */
	expect_cooked(PERF_SAMPLE_FRACTION, &old, &cur, 75.0);
	expect_cook_status(PERF_SAMPLE_FRACTION, NULL, &cur, PDH_COOK_FIRST_SAMPLE);
	/* no base change: 0 (chosen), base went back: negative denominator */
	cur.base = 20;
	expect_cooked(PERF_SAMPLE_FRACTION, &old, &cur, 0.0);
	cur.base = 19;
	expect_cook_status(PERF_SAMPLE_FRACTION, &old, &cur, PDH_COOK_NEGATIVE_DENOMINATOR);
	cur.base = 24, cur.value = 9;
	expect_cook_status(PERF_SAMPLE_FRACTION, &old, &cur, PDH_COOK_BAD_DATA);
}

static void test_raw_fraction(void **state)
{
	struct pdh_cook_raw cur = {.value = 1, .base = 4};

	(void)state;
	/* 100 * N / B on the newest sample */
	expect_cooked(PERF_RAW_FRACTION, NULL, &cur, 25.0);
	cur = (struct pdh_cook_raw){.value = 1ULL << 32, .base = 1ULL << 34};
	expect_cooked(PERF_LARGE_RAW_FRACTION, NULL, &cur, 25.0);
	/* above 100 is not capped */
	cur = (struct pdh_cook_raw){.value = 3, .base = 2};
	expect_cooked(PERF_RAW_FRACTION, NULL, &cur, 150.0);
	cur.base = 0;
	expect_cooked(PERF_RAW_FRACTION, NULL, &cur, 0.0);
}

static void test_averages(void **state)
{
	/* (delta(N) / F) / delta(B): 3e9 ticks at 1 GHz over 6 operations = 0.5 s */
	struct pdh_cook_raw old = {.value = 0, .base = 10, .freq = 1000000000};
	struct pdh_cook_raw cur = {.value = 3000000000ULL, .base = 16, .freq = 1000000000};

	(void)state;
	expect_cooked(PERF_AVERAGE_TIMER, &old, &cur, 0.5);
	expect_cook_status(PERF_AVERAGE_TIMER, NULL, &cur, PDH_COOK_FIRST_SAMPLE);
	cur.freq = 0;
	expect_cook_status(PERF_AVERAGE_TIMER, &old, &cur, PDH_COOK_NEGATIVE_TIMEBASE);
	cur.freq = 1000000000, cur.base = 10;
	expect_cooked(PERF_AVERAGE_TIMER, &old, &cur, 0.0);
	cur.base = 9;
	expect_cook_status(PERF_AVERAGE_TIMER, &old, &cur, PDH_COOK_NEGATIVE_DENOMINATOR);
	/* delta(N) / delta(B): 500 bytes in 5 operations */
	old = (struct pdh_cook_raw){.value = 100, .base = 5};
	cur = (struct pdh_cook_raw){.value = 600, .base = 10};
	expect_cooked(PERF_AVERAGE_BULK, &old, &cur, 100.0);
	expect_cook_status(PERF_AVERAGE_BULK, NULL, &cur, PDH_COOK_FIRST_SAMPLE);
}

static void test_delta(void **state)
{
	struct pdh_cook_raw old = {.value = 5};
	struct pdh_cook_raw cur = {.value = 12};

	(void)state;
	expect_cooked(PERF_COUNTER_DELTA, &old, &cur, 7.0);
	old.value = 1ULL << 40, cur.value = (1ULL << 40) + 1;
	expect_cooked(PERF_COUNTER_LARGE_DELTA, &old, &cur, 1.0);
	expect_cook_status(PERF_COUNTER_DELTA, NULL, &cur, PDH_COOK_FIRST_SAMPLE);
	expect_cook_status(PERF_COUNTER_LARGE_DELTA, &cur, &old, PDH_COOK_BAD_DATA);
	/* no change is a valid 0 */
	expect_cooked(PERF_COUNTER_DELTA, &cur, &cur, 0.0);
}

static void test_elapsed(void **state)
{
	/* (D - N) / F on one sample, D and F from the object clock */
	struct pdh_cook_raw cur = {.value = 1000, .obj_time = 6000, .obj_freq = 1000};

	(void)state;
	expect_cooked(PERF_ELAPSED_TIME, NULL, &cur, 5.0);
	cur.value = 0;
	expect_cooked(PERF_ELAPSED_TIME, NULL, &cur, 0.0);
	cur.value = 6001;
	expect_cook_status(PERF_ELAPSED_TIME, NULL, &cur, PDH_COOK_NEGATIVE_VALUE);
	cur.value = 1000, cur.obj_freq = 0;
	expect_cook_status(PERF_ELAPSED_TIME, NULL, &cur, PDH_COOK_NEGATIVE_TIMEBASE);
}

static void test_precision(void **state)
{
	/* 100 * delta(N) / delta(D), D = the companion time stamp */
	struct pdh_cook_raw old = {.value = 0, .base = 100, .obj_time = 0};
	struct pdh_cook_raw cur = {.value = 40, .base = 200, .obj_time = 80};

	(void)state;
	expect_cooked(PERF_PRECISION_SYSTEM_TIMER, &old, &cur, 40.0);
	expect_cooked(PERF_PRECISION_100NS_TIMER, &old, &cur, 40.0);
	expect_cooked(PERF_PRECISION_OBJECT_TIMER, &old, &cur, 50.0);
	expect_cook_status(PERF_PRECISION_100NS_TIMER, NULL, &cur, PDH_COOK_FIRST_SAMPLE);
	cur.base = 100;
	expect_cook_status(PERF_PRECISION_SYSTEM_TIMER, &old, &cur, PDH_COOK_NEGATIVE_TIMEBASE);
}

static void test_not_displayable(void **state)
{
	static const uint32_t hidden[] = {
		PERF_SAMPLE_BASE, PERF_AVERAGE_BASE,   PERF_COUNTER_MULTI_BASE,
		PERF_RAW_BASE,	  PERF_LARGE_RAW_BASE, PERF_PRECISION_TIMESTAMP,
		0x40030503,	  PERF_COUNTER_TEXT,   PERF_COUNTER_NODATA,
	};
	struct pdh_cook_raw old = {.value = 1, .base = 1, .time = 1, .freq = 1};
	struct pdh_cook_raw cur = {.value = 2, .base = 2, .time = 2, .freq = 1};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(hidden) / sizeof(hidden[0]); i++) {
		expect_cook_status(hidden[i], &old, &cur, PDH_COOK_NOT_DISPLAYABLE);
		assert_false(ctrtype_displayable(hidden[i]));
		assert_int_not_equal(ctrtype_samples(hidden[i]), 2);
	}
	assert_true(ctrtype_is_base(PERF_SAMPLE_BASE));
	assert_true(ctrtype_is_base(0x40030503));
	assert_false(ctrtype_is_base(PERF_COUNTER_TEXT));
	assert_false(ctrtype_is_base(PERF_RAW_FRACTION));
	/* histograms and made-up values */
	expect_cook_status(PERF_COUNTER_HISTOGRAM_TYPE, &old, &cur, PDH_COOK_UNSUPPORTED);
	expect_cook_status(0x12345478, &old, &cur, PDH_COOK_UNSUPPORTED);
	expect_cook_status(0x12345478, NULL, &cur, PDH_COOK_UNSUPPORTED);
	/* a made-up value of zero size has no value at all (ctrtype.h's rule for the bits) */
	expect_cook_status(0x12345678, &old, &cur, PDH_COOK_NOT_DISPLAYABLE);
	assert_false(ctrtype_displayable(PERF_COUNTER_HISTOGRAM_TYPE));
}

/* every type of the master table (tools.md 5.2): displayable, two-sample */
static void test_master_table(void **state)
{
	static const struct {
		uint32_t type;
		uint32_t value; /* the hex value of the table */
		int two;
		int shown;
	} table[] = {
		{PERF_COUNTER_COUNTER, 0x10410400, 1, 1},
		{PERF_COUNTER_TIMER, 0x20410500, 1, 1},
		{PERF_COUNTER_QUEUELEN_TYPE, 0x00450400, 1, 1},
		{PERF_COUNTER_LARGE_QUEUELEN_TYPE, 0x00450500, 1, 1},
		{PERF_COUNTER_100NS_QUEUELEN_TYPE, 0x00550500, 1, 1},
		{PERF_COUNTER_OBJ_TIME_QUEUELEN_TYPE, 0x00650500, 1, 1},
		{PERF_COUNTER_BULK_COUNT, 0x10410500, 1, 1},
		{PERF_COUNTER_TEXT, 0x00000B00, 0, 0},
		{PERF_COUNTER_RAWCOUNT, 0x00010000, 0, 1},
		{PERF_COUNTER_LARGE_RAWCOUNT, 0x00010100, 0, 1},
		{PERF_COUNTER_RAWCOUNT_HEX, 0x00000000, 0, 1},
		{PERF_COUNTER_LARGE_RAWCOUNT_HEX, 0x00000100, 0, 1},
		{PERF_SAMPLE_FRACTION, 0x20C20400, 1, 1},
		{PERF_SAMPLE_COUNTER, 0x00410400, 1, 1},
		{PERF_COUNTER_NODATA, 0x40000200, 0, 0},
		{PERF_COUNTER_TIMER_INV, 0x21410500, 1, 1},
		{PERF_SAMPLE_BASE, 0x40030401, 0, 0},
		{PERF_AVERAGE_TIMER, 0x30020400, 1, 1},
		{PERF_AVERAGE_BASE, 0x40030402, 0, 0},
		{PERF_AVERAGE_BULK, 0x40020500, 1, 1},
		{PERF_OBJ_TIME_TIMER, 0x20610500, 1, 1},
		{PERF_100NSEC_TIMER, 0x20510500, 1, 1},
		{PERF_100NSEC_TIMER_INV, 0x21510500, 1, 1},
		{PERF_COUNTER_MULTI_TIMER, 0x22410500, 1, 1},
		{PERF_COUNTER_MULTI_TIMER_INV, 0x23410500, 1, 1},
		{PERF_COUNTER_MULTI_BASE, 0x42030500, 0, 0},
		{PERF_100NSEC_MULTI_TIMER, 0x22510500, 1, 1},
		{PERF_100NSEC_MULTI_TIMER_INV, 0x23510500, 1, 1},
		{PERF_RAW_FRACTION, 0x20020400, 0, 1},
		{PERF_LARGE_RAW_FRACTION, 0x20020500, 0, 1},
		{PERF_RAW_BASE, 0x40030403, 0, 0},
		{PERF_LARGE_RAW_BASE, 0x40030500, 0, 0},
		{PERF_ELAPSED_TIME, 0x30240500, 0, 1},
		{PERF_COUNTER_HISTOGRAM_TYPE, 0x80000000, 0, 0},
		{PERF_COUNTER_DELTA, 0x00400400, 1, 1},
		{PERF_COUNTER_LARGE_DELTA, 0x00400500, 1, 1},
		{PERF_PRECISION_SYSTEM_TIMER, 0x20470500, 1, 1},
		{PERF_PRECISION_100NS_TIMER, 0x20570500, 1, 1},
		{PERF_PRECISION_OBJECT_TIMER, 0x20670500, 1, 1},
	};
	struct pdh_cook_raw cur = {.value = 1};
	size_t i;
	double v;

	(void)state;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		assert_int_equal(table[i].type, table[i].value);
		assert_int_equal(ctrtype_samples(table[i].type) == 2, table[i].two);
		assert_int_equal(ctrtype_displayable(table[i].type), table[i].shown);
		/* the first sample of a two-sample type never has a value */
		if (table[i].two)
			assert_int_equal(pdh_cook_value(table[i].type, NULL, &cur, &v),
					 PDH_COOK_FIRST_SAMPLE);
	}
}

static void test_scale_and_status(void **state)
{
	(void)state;
	assert_double_eq(pdh_cook_scale(12.5, -1), 1.25);
	assert_double_eq(pdh_cook_scale(3.0, 2), 300.0);
	assert_double_eq(pdh_cook_scale(7.0, 0), 7.0);
	assert_double_eq(pdh_cook_scale(1.0, -10), 1e-10);
	assert_int_equal(pdh_cook_status_pdh(PDH_COOK_OK), 0);
	assert_int_equal(pdh_cook_status_pdh(PDH_COOK_FIRST_SAMPLE), 0xC0000BBA);
	assert_int_equal(pdh_cook_status_pdh(PDH_COOK_BAD_DATA), 0xC0000BBA);
	assert_int_equal(pdh_cook_status_pdh(PDH_COOK_NEGATIVE_DENOMINATOR), 0x800007D6);
	assert_int_equal(pdh_cook_status_pdh(PDH_COOK_NEGATIVE_TIMEBASE), 0x800007D7);
	assert_int_equal(pdh_cook_status_pdh(PDH_COOK_NEGATIVE_VALUE), 0x800007D8);
	assert_int_equal(pdh_cook_status_pdh(PDH_COOK_NOT_DISPLAYABLE), 0x800007D5);
	assert_int_equal(pdh_cook_status_pdh(PDH_COOK_UNSUPPORTED), 0xC0000BC6);
	assert_string_equal(pdh_cook_status_str(PDH_COOK_NEGATIVE_VALUE), "negative value");
	/* a missing newest sample is reported as such */
	{
		double v;

		assert_int_equal(pdh_cook_value(PERF_COUNTER_RAWCOUNT, NULL, NULL, &v),
				 PDH_COOK_FIRST_SAMPLE);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rawcount),	 cmocka_unit_test(test_counter_rate),
		cmocka_unit_test(test_queuelen),	 cmocka_unit_test(test_timers),
		cmocka_unit_test(test_inverse_timers),	 cmocka_unit_test(test_multi_timers),
		cmocka_unit_test(test_sample_fraction),	 cmocka_unit_test(test_raw_fraction),
		cmocka_unit_test(test_averages),	 cmocka_unit_test(test_delta),
		cmocka_unit_test(test_elapsed),		 cmocka_unit_test(test_precision),
		cmocka_unit_test(test_not_displayable),	 cmocka_unit_test(test_master_table),
		cmocka_unit_test(test_scale_and_status),
	};

	return cmocka_run_group_tests_name("cook", tests, NULL, NULL);
}

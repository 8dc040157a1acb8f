/* SPDX-License-Identifier: MIT */
/*
 * test_pdh_catalog.c - PDH's path resolution (pdh/catalog.c) on a hand-built catalog:
 * wildcards in instance and counter, partial wildcards, "#n" for duplicate instance names,
 * hidden counters, single- versus multi-instance objects, counter-major order. (typeperf's
 * -q/-qx listing, built from PdhEnumObjects/PdhEnumObjectItems: test_typeperf_list.c.)
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "testlib.h"
#include "catalog.h"

#define NO PERFLIB_NO_ID

static struct pdh_cat_counter demo_counters[] = {
	{1, PERF_COUNTER_RAWCOUNT, 0, 0, 0, NO, NO, NO, NO, "Items"},
	{2, PERF_RAW_FRACTION, 0, 0, 0, 3, NO, NO, NO, "Ratio"},
	{3, PERF_RAW_BASE, 0, 0, 0, NO, NO, NO, NO, "Ratio Base"},
	{4, PERF_COUNTER_COUNTER, 0, 0, 0, NO, NO, NO, NO, "Ops/sec"},
	{5, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_NO_DISPLAYABLE, 0, 0, NO, NO, NO, NO, "Secret"},
	{6, PERF_AVERAGE_BULK, 0, 0, 0, NO, NO, NO, NO, "Avg Bulk"},
	{7, PERF_AVERAGE_BASE, 0, 0, 0, NO, NO, NO, NO, "Avg Base"},
	{8, PERF_COUNTER_RAWCOUNT, 0, 0, 0, NO, NO, NO, NO, "items"}, /* same name as id 1 */
};

static struct pdh_cat_instance demo_instances[] = {
	{1, "alpha", 0}, {2, "beta", 0},  {3, "alpha", 1},
	{4, "Alpha", 2}, {5, "pa/ch", 0}, /* a name with the parent separator */
};

static struct pdh_cat_counter single_counters[] = {
	{1, PERF_COUNTER_RAWCOUNT, 0, 0, 0, NO, NO, NO, NO, "Value"},
	{2, PERF_COUNTER_LARGE_RAWCOUNT, 0, 0, 0, NO, NO, NO, NO, "Total"},
	{3, PERF_COUNTER_TEXT, 0, 0, 0, NO, NO, NO, NO, "Label"},
};

static struct pdh_cat_counter empty_counters[] = {
	{1, PERF_COUNTER_RAWCOUNT, 0, 0, 0, NO, NO, NO, NO, "X"},
};

/* sets deliberately not in name order */
static struct pdh_cat_set sets[] = {
	{.name = "TP Single",
	 .instance_type = PERF_COUNTERSET_SINGLE_INSTANCE,
	 .nr_counters = 3,
	 .counters = single_counters},
	{.name = "TP Demo",
	 .instance_type = PERF_COUNTERSET_MULTI_INSTANCES,
	 .nr_counters = 8,
	 .counters = demo_counters,
	 .nr_instances = 5,
	 .instances = demo_instances},
	{.name = "Empty Multi",
	 .instance_type = PERF_COUNTERSET_MULTI_AGGREGATE,
	 .nr_counters = 1,
	 .counters = empty_counters},
};

static const struct pdh_catalog cat = {.nr_sets = 3, .sets = sets};

/* resolve @text; returns the number of targets, which are left in *ret */
static int resolve(const char *text, struct pdh_target **ret)
{
	struct pdh_cpath p;
	size_t nr = 0;
	int n;

	*ret = NULL;
	assert_int_equal(pdh_cpath_parse(text, &p), 0);
	n = pdh_cat_resolve(&cat, &p, ret, &nr);
	pdh_cpath_free(&p);
	assert_true(n >= 0);
	assert_int_equal((size_t)n, nr);
	return n;
}

/* resolve and check the count, then free */
static void expect_count(const char *text, int count)
{
	struct pdh_target *t;
	int n = resolve(text, &t);

	if (n != count)
		print_error("%s: %d targets, expected %d\n", text, n, count);
	assert_int_equal(n, count);
	free(t);
}

static void test_instances(void **state)
{
	struct pdh_target *t;

	(void)state;
	/* a plain name is its first occurrence */
	assert_int_equal(resolve("\\TP Demo(alpha)\\Items", &t), 1);
	assert_int_equal(t[0].set, 1);
	assert_int_equal(t[0].counter, 0);
	assert_int_equal(t[0].instance, 0);
	free(t);
	/* #n picks the n-th duplicate, #0 is the plain name, case-insensitive */
	assert_int_equal(resolve("\\tp demo(ALPHA#1)\\items", &t), 1);
	assert_int_equal(t[0].instance, 2);
	free(t);
	assert_int_equal(resolve("\\TP Demo(alpha#2)\\Items", &t), 1);
	assert_int_equal(t[0].instance, 3);
	free(t);
	assert_int_equal(resolve("\\TP Demo(alpha#0)\\Items", &t), 1);
	assert_int_equal(t[0].instance, 0);
	free(t);
	expect_count("\\TP Demo(alpha#3)\\Items", 0);
	expect_count("\\TP Demo(gamma)\\Items", 0);
	/* wildcards take every duplicate */
	expect_count("\\TP Demo(*)\\Items", 5);
	expect_count("\\TP Demo(a*)\\Items", 3);
	expect_count("\\TP Demo(alpha#*)\\Items", 3);
	expect_count("\\TP Demo(*#1)\\Items", 1);
	expect_count("\\TP Demo(*a)\\Items", 4);
	/* a parent is part of the instance name in V2 counter sets */
	assert_int_equal(resolve("\\TP Demo(pa/ch)\\Items", &t), 1);
	assert_int_equal(t[0].instance, 4);
	free(t);
	expect_count("\\TP Demo(*/ch)\\Items", 1);
	expect_count("\\TP Demo(pa/*)\\Items", 1);
}

static void test_counters(void **state)
{
	struct pdh_target *t;

	(void)state;
	/* a wildcard skips bases, NO_DISPLAYABLE and NOSHOW counters */
	assert_int_equal(resolve("\\TP Demo(beta)\\*", &t), 3);
	assert_int_equal(t[0].counter, 0);
	assert_int_equal(t[1].counter, 1);
	assert_int_equal(t[2].counter, 3);
	free(t);
	expect_count("\\TP Demo(beta)\\*s", 1); /* "Items"; "items" is a duplicate name */
	expect_count("\\TP Demo(beta)\\*/sec", 1);
	/* named exactly: hidden counters with a value are accepted, bases never */
	expect_count("\\TP Demo(beta)\\Secret", 1);
	expect_count("\\TP Demo(beta)\\Avg Bulk", 1);
	expect_count("\\TP Demo(beta)\\Ratio Base", 0);
	expect_count("\\TP Demo(beta)\\Avg Base", 0);
	expect_count("\\TP Demo(beta)\\Nope", 0);
	/* counter-major order: each counter with all its instances */
	assert_int_equal(resolve("\\TP Demo(*)\\*", &t), 15);
	assert_int_equal(t[0].counter, 0);
	assert_int_equal(t[4].counter, 0);
	assert_int_equal(t[4].instance, 4);
	assert_int_equal(t[5].counter, 1);
	assert_int_equal(t[5].instance, 0);
	free(t);
}

static void test_objects(void **state)
{
	struct pdh_target *t;

	(void)state;
	/* multi-instance objects need an instance, single-instance ones refuse it */
	expect_count("\\TP Demo\\Items", 0);
	assert_int_equal(resolve("\\TP Single\\Value", &t), 1);
	assert_int_equal(t[0].set, 0);
	assert_int_equal(t[0].instance, PDH_NO_INSTANCE);
	free(t);
	expect_count("\\tp single\\TOTAL", 1);
	expect_count("\\TP Single(x)\\Value", 0);
	expect_count("\\TP Single(*)\\Value", 0);
	/* text is not displayable, even named exactly */
	expect_count("\\TP Single\\*", 2);
	expect_count("\\TP Single\\Label", 0);
	/* no instances: nothing to expand */
	expect_count("\\Empty Multi(*)\\X", 0);
	expect_count("\\Nope\\X", 0);
	/* the machine part does not matter here */
	expect_count("\\\\somewhere\\TP Single\\Value", 1);
	/* appending keeps earlier targets */
	{
		struct pdh_cpath p;
		size_t nr = 0;

		t = NULL;
		assert_int_equal(pdh_cpath_parse("\\TP Single\\*", &p), 0);
		assert_int_equal(pdh_cat_resolve(&cat, &p, &t, &nr), 2);
		assert_int_equal(pdh_cat_resolve(&cat, &p, &t, &nr), 2);
		assert_int_equal(nr, 4);
		pdh_cpath_free(&p);
		free(t);
	}
}

static void test_base_lookup(void **state)
{
	struct pdh_cat_counter c[] = {
		{1, PERF_SAMPLE_FRACTION, 0, 0, 0, NO, NO, NO, NO, "f"},
		{2, PERF_SAMPLE_BASE, 0, 0, 0, NO, NO, NO, NO, "b"},
		{3, PERF_RAW_FRACTION, 0, 0, 0, 2, NO, NO, NO, "r"},
		{4, PERF_COUNTER_RAWCOUNT, 0, 0, 0, NO, NO, NO, NO, "n"},
	};
	struct pdh_cat_set s = {.nr_counters = 4, .counters = c};

	(void)state;
	/* registered base id, the next counter when it is a base, else none */
	assert_int_equal(pdh_cat_counter_base(&s, 2), 2);
	assert_int_equal(pdh_cat_counter_base(&s, 0), 2);
	assert_int_equal(pdh_cat_counter_base(&s, 3), PERFLIB_NO_ID);
	assert_ptr_equal(pdh_cat_counter_find(&s, 4), &c[3]);
	assert_null(pdh_cat_counter_find(&s, 9));
	assert_int_equal(pdh_cat_set_find(&cat, "tp demo"), 1);
	assert_int_equal(pdh_cat_set_find(&cat, "TP"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_instances),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_objects),
		cmocka_unit_test(test_base_lookup),
	};

	return cmocka_run_group_tests_name("pdh_catalog", tests, NULL, NULL);
}

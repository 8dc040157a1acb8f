/* SPDX-License-Identifier: MIT */
/*
 * test_pdh_enumsnap.c - PDH enumeration answers from snapshots (pdh.md 5.8.2): the size
 * call and the fill call of PdhEnumObjectItems and of PdhEnumObjects give the same lists
 * while an instance or a counter set appears or goes in between (the call then succeeds with
 * the sized buffers, where a live list would answer PDH_MORE_DATA), until PdhEnumObjects
 * with bRefresh TRUE; A and W from the same snapshot; the error paths unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "pdh.h"
#include "perflib-linux.h"
#include "testlib.h"

#define NO 0xFFFFFFFF

static HANDLE prov;
static GUID pguid, set_guid, late_guid;

/* the MULTI_SZ @list holds exactly the strings of @want ("a\0b\0" with its length) */
static void list_is(const char *list, DWORD len, const char *want, size_t want_len)
{
	assert_int_equal(len, want_len + 1);
	assert_memory_equal(list, want, want_len + 1);
}

/* one single-counter set named @name, registered and given to PerfSetCounterSetInfo */
static void add_set(const GUID *g, const char *name)
{
	static const struct perflib_counter_reg ctr = {
		1,  PERF_COUNTER_RAWCOUNT, 0,	    PERF_DETAIL_NOVICE, 0, NO, NO, NO,
		NO, PERF_AGGREGATE_TOTAL,  "Items", "Items help"};
	struct perflib_counterset_reg reg = {0};
	struct {
		PERF_COUNTERSET_INFO set;
		PERF_COUNTER_INFO ctr;
	} t;

	reg.provider_guid = pguid;
	reg.counterset_guid = *g;
	reg.instance_type = PERF_COUNTERSET_MULTI_INSTANCES;
	reg.detail_level = PERF_DETAIL_NOVICE;
	reg.provider_name = "test_pdh_enumsnap";
	reg.name = name;
	reg.help = name;
	reg.nr_counters = 1;
	reg.counters = &ctr;
	assert_int_equal(perflib_register_counterset(&reg, NULL), 0);
	memset(&t, 0, sizeof(t));
	t.set.CounterSetGuid = *g;
	t.set.ProviderGuid = pguid;
	t.set.NumCounters = 1;
	t.set.InstanceType = PERF_COUNTERSET_MULTI_INSTANCES;
	t.ctr.CounterId = 1;
	t.ctr.Type = PERF_COUNTER_RAWCOUNT;
	t.ctr.Size = 4;
	t.ctr.DetailLevel = PERF_DETAIL_NOVICE;
	assert_int_equal(PerfSetCounterSetInfo(prov, &t.set, sizeof(t)), 0);
}

static int setup(void **state)
{
	tl_group_setup(state);
	pguid = tl_guid(300);
	set_guid = tl_guid(301);
	late_guid = tl_guid(302);
	assert_int_equal(PerfStartProvider(&pguid, NULL, &prov), 0);
	add_set(&set_guid, "Snap Set");
	assert_non_null(PerfCreateInstance(prov, &set_guid, u"first", 1));
	return 0;
}

static int teardown(void **state)
{
	PerfStopProvider(prov);
	perflib_unregister_counterset(&set_guid, true);
	perflib_unregister_counterset(&late_guid, true);
	return tl_group_teardown(state);
}

/* an instance appears between the size call and the fill call, another one goes */
static void test_items_between_calls(void **state)
{
	char ctrs[64], insts[64];
	WCHAR wins[64];
	DWORD cl = 0, il = 0;
	PPERF_COUNTERSET_INSTANCE second, late;

	(void)state;
	second = PerfCreateInstance(prov, &set_guid, u"second", 2);
	assert_non_null(second);
	/* the Windows sample's pattern: both sizes from one call, both lists from the next */
	assert_int_equal(PdhEnumObjectItemsA(NULL, NULL, "Snap Set", NULL, &cl, NULL, &il,
					     PERF_DETAIL_WIZARD, 0),
			 PDH_MORE_DATA);
	assert_int_equal(cl, sizeof("Items") + 1);
	assert_int_equal(il, sizeof("first") + sizeof("second") + 1);
	late = PerfCreateInstance(prov, &set_guid, u"a_much_longer_late_instance", 3);
	assert_non_null(late);
	assert_int_equal(PerfDeleteInstance(prov, second), 0);
	assert_int_equal(PdhEnumObjectItemsA(NULL, NULL, "Snap Set", ctrs, &cl, insts, &il,
					     PERF_DETAIL_WIZARD, 0),
			 ERROR_SUCCESS);
	list_is(ctrs, cl, "Items\0", 6);
	list_is(insts, il, "first\0second\0", 13);
	/* the W form answers from the same snapshot */
	il = 64;
	cl = sizeof(ctrs);
	assert_int_equal(PdhEnumObjectItemsW(NULL, NULL, u"snap set", NULL, &cl, wins, &il,
					     PERF_DETAIL_WIZARD, 0),
			 PDH_INVALID_ARGUMENT); /* NULL counter buffer with a size */
	cl = 0;
	il = 64;
	assert_int_equal(PdhEnumObjectItemsW(NULL, NULL, u"snap set", NULL, &cl, wins, &il,
					     PERF_DETAIL_WIZARD, 0),
			 PDH_MORE_DATA);
	assert_int_equal(il, 14);
	assert_memory_equal(wins, u"first\0second\0", 14 * sizeof(WCHAR));
	/* a refresh re-reads: the late instance is listed, the deleted one is not */
	assert_int_equal(PdhEnumObjectsA(NULL, NULL, NULL, &cl, PERF_DETAIL_WIZARD, TRUE),
			 PDH_INVALID_ARGUMENT); /* NULL list, a size: the protocol's error */
	cl = 0;
	assert_int_equal(PdhEnumObjectsA(NULL, NULL, NULL, &cl, PERF_DETAIL_WIZARD, TRUE),
			 PDH_MORE_DATA);
	cl = il = 0;
	assert_int_equal(PdhEnumObjectItemsA(NULL, NULL, "Snap Set", NULL, &cl, NULL, &il,
					     PERF_DETAIL_WIZARD, 0),
			 PDH_MORE_DATA);
	assert_int_equal(il, sizeof("first") + sizeof("a_much_longer_late_instance") + 1);
	assert_int_equal(PdhEnumObjectItemsA(NULL, NULL, "Snap Set", ctrs, &cl, insts, &il,
					     PERF_DETAIL_WIZARD, 0),
			 ERROR_SUCCESS);
	list_is(insts, il, "first\0a_much_longer_late_instance\0", 34);
	assert_int_equal(PerfDeleteInstance(prov, late), 0);
	/* the snapshot still holds it; an unknown object is no snapshot */
	assert_int_equal(PdhEnumObjectItemsA(NULL, NULL, "Snap Set", ctrs, &cl, insts, &il,
					     PERF_DETAIL_WIZARD, 0),
			 ERROR_SUCCESS);
	list_is(insts, il, "first\0a_much_longer_late_instance\0", 34);
	cl = il = 0;
	assert_int_equal(PdhEnumObjectItemsA(NULL, NULL, "Snap Nope", NULL, &cl, NULL, &il,
					     PERF_DETAIL_WIZARD, 0),
			 PDH_CSTATUS_NO_OBJECT);
}

/* a counter set appears between PdhEnumObjects' size call (bRefresh TRUE) and its fill call */
static void test_objects_between_calls(void **state)
{
	char objs[4096];
	DWORD len = 0, want;
	size_t n = 0;

	(void)state;
	assert_int_equal(PdhEnumObjectsA(NULL, NULL, NULL, &len, PERF_DETAIL_WIZARD, TRUE),
			 PDH_MORE_DATA);
	assert_true(len <= sizeof(objs));
	want = len;
	add_set(&late_guid, "Snap Late Set With A Long Name");
	assert_int_equal(PdhEnumObjectsA(NULL, NULL, objs, &len, PERF_DETAIL_WIZARD, FALSE),
			 ERROR_SUCCESS);
	assert_int_equal(len, want);
	for (n = 0; objs[n]; n += strlen(objs + n) + 1)
		assert_string_not_equal(objs + n, "Snap Late Set With A Long Name");
	/* its items are read at their first enumeration, which the object list does not stop */
	len = sizeof(objs);
	assert_int_equal(PdhEnumObjectsA(NULL, NULL, objs, &len, PERF_DETAIL_WIZARD, TRUE),
			 ERROR_SUCCESS);
	assert_true(len > want);
	for (n = 0; objs[n] && strcmp(objs + n, "Snap Late Set With A Long Name");)
		n += strlen(objs + n) + 1;
	assert_string_equal(objs + n, "Snap Late Set With A Long Name");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_items_between_calls),
		cmocka_unit_test(test_objects_between_calls),
	};

	tl_require_bpf();
	return cmocka_run_group_tests(tests, setup, teardown);
}

/* SPDX-License-Identifier: MIT */
/*
 * test_pdh.c - libpdh against ../shared/spec/pdh.md with a live provider in this process:
 * every function of the spec's list, the WT error rows (NULLs, bad and closed handles, small
 * buffers), instances that are missing, appear and vanish, the two-sample rule, wildcard
 * arrays, duplicate names, logs written and replayed. Public headers only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pdh.h"
#include "perflib/pdh-linux.h"
#include "decode.h"
#include "logtext.h"
#include "perflib-linux.h"
#include "testlib.h"

#define NO 0xFFFFFFFF
#define S(x) ((DWORD)(x)) /* a PDH_STATUS code as a CStatus */

#define C(id, type, base, name)                                                                    \
	{                                                                                          \
		id, type, 0, PERF_DETAIL_NOVICE, 0, base, NO, NO, NO, PERF_AGGREGATE_TOTAL, name,  \
			name " help"                                                               \
	}

static const struct perflib_counter_reg multi_ctrs[] = {
	C(1, PERF_COUNTER_RAWCOUNT, NO, "Items"), C(2, PERF_COUNTER_COUNTER, NO, "Ops/sec"),
	C(3, PERF_RAW_FRACTION, 4, "Ratio"),	  C(4, PERF_RAW_BASE, NO, "Ratio Base"),
	C(5, PERF_100NSEC_TIMER, NO, "Busy %"),
};

static const struct perflib_counter_reg single_ctrs[] = {
	C(1, PERF_COUNTER_LARGE_RAWCOUNT, NO, "Value"),
};

static HANDLE prov;
static GUID multi_guid, single_guid;
static PPERF_COUNTERSET_INSTANCE inst_a, inst_b, inst_a2, inst_single;
static char dir[64];

static void add_set(const GUID *g, const char *name, ULONG type,
		    const struct perflib_counter_reg *c, unsigned int n)
{
	struct {
		PERF_COUNTERSET_INFO set;
		PERF_COUNTER_INFO ctr[8];
	} t;
	struct perflib_counterset_reg reg = {0};
	GUID pg = tl_guid(100);
	unsigned int i;

	reg.provider_guid = pg;
	reg.counterset_guid = *g;
	reg.instance_type = type;
	reg.detail_level = PERF_DETAIL_NOVICE;
	reg.provider_name = "test_pdh";
	reg.name = name;
	reg.help = name;
	reg.nr_counters = n;
	reg.counters = c;
	assert_int_equal(perflib_register_counterset(&reg, NULL), 0);
	memset(&t, 0, sizeof(t));
	t.set.CounterSetGuid = *g;
	t.set.ProviderGuid = pg;
	t.set.NumCounters = n;
	t.set.InstanceType = type;
	for (i = 0; i < n; i++) {
		t.ctr[i].CounterId = c[i].id;
		t.ctr[i].Type = c[i].type;
		t.ctr[i].Size = (c[i].type & PERF_SIZE_LARGE) ? 8 : 4;
		t.ctr[i].DetailLevel = PERF_DETAIL_NOVICE;
	}
	assert_int_equal(PerfSetCounterSetInfo(prov, &t.set, sizeof(t.set) + n * sizeof(t.ctr[0])),
			 0);
}

static PPERF_COUNTERSET_INSTANCE make_inst(const WCHAR *name, ULONG id, ULONG items)
{
	PPERF_COUNTERSET_INSTANCE in = PerfCreateInstance(prov, &multi_guid, name, id);

	assert_non_null(in);
	assert_int_equal(PerfSetULongCounterValue(prov, in, 1, items), 0);
	assert_int_equal(PerfSetULongCounterValue(prov, in, 3, 1), 0);
	assert_int_equal(PerfSetULongCounterValue(prov, in, 4, 4), 0);
	return in;
}

static int setup(void **state)
{
	GUID pg = tl_guid(100);

	tl_group_setup(state);
	snprintf(dir, sizeof(dir), "/tmp/test_pdh.%d", (int)getpid());
	assert_int_equal(mkdir(dir, 0700), 0);
	multi_guid = tl_guid(101);
	single_guid = tl_guid(102);
	assert_int_equal(PerfStartProvider(&pg, NULL, &prov), 0);
	add_set(&multi_guid, "PDH Test", PERF_COUNTERSET_MULTI_AGGREGATE, multi_ctrs, 5);
	add_set(&single_guid, "PDH Single", PERF_COUNTERSET_SINGLE_INSTANCE, single_ctrs, 1);
	inst_a = make_inst(u"a", 1, 10);
	inst_b = make_inst(u"b", 2, 20);
	inst_a2 = make_inst(u"a", 3, 30);
	inst_single = PerfCreateInstance(prov, &single_guid, u"s", 0);
	assert_non_null(inst_single);
	assert_int_equal(PerfSetULongLongCounterValue(prov, inst_single, 1, 7000000000ull), 0);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	PerfStopProvider(prov);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	return tl_group_teardown(state);
}

static PDH_HQUERY open_query(void)
{
	PDH_HQUERY q = NULL;

	assert_int_equal(PdhOpenQueryA(NULL, 42, &q), 0);
	assert_non_null(q);
	return q;
}

static PDH_HCOUNTER add(PDH_HQUERY q, const char *path)
{
	PDH_HCOUNTER c = NULL;

	assert_int_equal(PdhAddCounterA(q, path, 7, &c), 0);
	assert_non_null(c);
	return c;
}

static double fmt_double(PDH_HCOUNTER c, DWORD extra)
{
	PDH_FMT_COUNTERVALUE v;

	assert_int_equal(PdhGetFormattedCounterValue(c, PDH_FMT_DOUBLE | extra, NULL, &v), 0);
	assert_true(v.CStatus == S(PDH_CSTATUS_NEW_DATA) || v.CStatus == S(PDH_CSTATUS_VALID_DATA));
	return v.doubleValue;
}

/* ---- queries and counters ------------------------------------------------------------ */

static void test_query_errors(void **state)
{
	PDH_HQUERY q, q2;
	PDH_HCOUNTER c;
	LONGLONG t;
	int local;

	(void)state;
	assert_int_equal(PdhOpenQueryW(NULL, 0, NULL), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhOpenQueryA(NULL, 0, NULL), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhCloseQuery(NULL), PDH_INVALID_HANDLE);
	assert_int_equal(PdhCloseQuery(&local), PDH_INVALID_HANDLE);
	assert_int_equal(PdhCollectQueryData(NULL), PDH_INVALID_HANDLE);
	q = open_query();
	assert_true(PdhIsRealTimeQuery(q));
	assert_false(PdhIsRealTimeQuery(NULL));
	/* a query without counters has no data */
	assert_int_equal(PdhCollectQueryData(q), PDH_NO_DATA);
	assert_int_equal(PdhCollectQueryDataWithTime(NULL, NULL), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhCollectQueryDataWithTime(q, NULL), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhCollectQueryDataWithTime(&local, &t), PDH_INVALID_HANDLE);
	assert_int_equal(PdhCollectQueryDataEx(NULL, 1, NULL), PDH_INVALID_HANDLE);
	assert_int_equal(PdhCollectQueryDataEx(q, 1, NULL), PDH_NO_DATA);
	c = add(q, "\\PDH Test(b)\\Items");
	/* a counter handle is no query */
	assert_int_equal(PdhCollectQueryData(c), PDH_INVALID_HANDLE);
	assert_int_equal(PdhCloseQuery(c), PDH_INVALID_HANDLE);
	assert_int_equal(PdhCollectQueryDataWithTime(q, &t), 0);
	assert_true(t > 116444736000000000ll); /* a FILETIME after 1970 */
	q2 = open_query();
	assert_int_equal(PdhCloseQuery(q2), 0);
	assert_int_equal(PdhCloseQuery(q2), PDH_INVALID_HANDLE);
	assert_int_equal(PdhCloseQuery(q), 0);
	/* counters of a closed query are dead */
	assert_int_equal(PdhRemoveCounter(c), PDH_INVALID_HANDLE);
	assert_int_equal(PdhGetRawCounterValue(c, NULL, &(PDH_RAW_COUNTER){0}), PDH_INVALID_HANDLE);
}

static void test_add_errors(void **state)
{
	PDH_HQUERY q = open_query();
	PDH_HCOUNTER c = (PDH_HCOUNTER)1;

	(void)state;
	assert_int_equal(PdhAddCounterA(NULL, "\\PDH Test(a)\\Items", 0, NULL),
			 PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhAddCounterA(NULL, "\\PDH Test(a)\\Items", 0, &c), PDH_INVALID_HANDLE);
	assert_int_equal(PdhAddEnglishCounterW(NULL, u"\\PDH Test(a)\\Items", 0, NULL),
			 PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhAddEnglishCounterW(NULL, u"\\PDH Test(a)\\Items", 0, &c),
			 PDH_INVALID_HANDLE);
	assert_int_equal(PdhAddCounterA(q, NULL, 0, &c), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhAddCounterA(q, "", 0, &c), PDH_CSTATUS_NO_COUNTERNAME);
	assert_int_equal(PdhAddCounterA(q, "PDH Test\\Items", 0, &c), PDH_CSTATUS_BAD_COUNTERNAME);
	assert_int_equal(PdhAddCounterA(q, "\\PDH Test", 0, &c), PDH_CSTATUS_BAD_COUNTERNAME);
	c = (PDH_HCOUNTER)1;
	assert_int_equal(PdhAddCounterA(q, "\\No Such Object(a)\\Items", 0, &c),
			 PDH_CSTATUS_NO_OBJECT);
	assert_null(c);
	c = (PDH_HCOUNTER)1;
	assert_int_equal(PdhAddCounterA(q, "\\PDH Test(a)\\Nonexistent Counter", 0, &c),
			 PDH_CSTATUS_NO_COUNTER);
	assert_null(c);
	/* a base has no value of its own */
	assert_int_equal(PdhAddCounterA(q, "\\PDH Test(a)\\Ratio Base", 0, &c),
			 PDH_CSTATUS_NO_COUNTER);
	assert_int_equal(PdhAddCounterA(q, "\\\\elsewhere.example\\PDH Test(a)\\Items", 0, &c),
			 PDH_CSTATUS_NO_MACHINE);
	/* an instance part on a single-instance set, none on a multi-instance one */
	assert_int_equal(PdhAddCounterA(q, "\\PDH Single(x)\\Value", 0, &c),
			 PDH_CSTATUS_NO_INSTANCE);
	assert_int_equal(PdhAddCounterA(q, "\\PDH Test\\Items", 0, &c), PDH_CSTATUS_NO_INSTANCE);
	/* names compare without case; W and English variants; the local machine by name */
	c = NULL;
	assert_int_equal(PdhAddCounterW(q, u"\\pdh test(A)\\ITEMS", 0, &c), 0);
	assert_int_equal(PdhRemoveCounter(c), 0);
	assert_int_equal(PdhRemoveCounter(c), PDH_INVALID_HANDLE);
	assert_int_equal(PdhRemoveCounter(NULL), PDH_INVALID_HANDLE);
	assert_int_equal(PdhAddEnglishCounterA(q, "\\\\localhost\\PDH Single\\Value", 0, &c), 0);
	assert_int_equal(PdhCloseQuery(q), 0);
}

/* ---- values -------------------------------------------------------------------------- */

static void test_raw_and_missing(void **state)
{
	PDH_HQUERY q = open_query();
	PDH_HCOUNTER items, big, missing;
	PDH_FMT_COUNTERVALUE v;
	PDH_RAW_COUNTER raw;
	PPERF_COUNTERSET_INSTANCE later;
	DWORD type = 0;

	(void)state;
	items = add(q, "\\PDH Test(b)\\Items");
	/* before any collection: success, CStatus 0 (WT) */
	assert_int_equal(PdhGetRawCounterValue(NULL, NULL, &raw), PDH_INVALID_HANDLE);
	assert_int_equal(PdhGetRawCounterValue(items, NULL, NULL), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhGetRawCounterValue(items, &type, &raw), 0);
	assert_int_equal(raw.CStatus, 0);
	assert_int_equal(type, PERF_COUNTER_RAWCOUNT);
	assert_int_equal(PdhGetFormattedCounterValue(NULL, PDH_FMT_LONG, NULL, NULL),
			 PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhGetFormattedCounterValue(NULL, PDH_FMT_LONG, NULL, &v),
			 PDH_INVALID_HANDLE);
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_int_equal(PdhGetRawCounterValue(items, NULL, &raw), 0);
	assert_int_equal(raw.FirstValue, 20);
	assert_true(raw.CStatus == S(PDH_CSTATUS_NEW_DATA));
	assert_int_equal(PdhGetFormattedCounterValue(items, 0, NULL, &v), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhGetFormattedCounterValue(items, PDH_FMT_LONG, &type, &v), 0);
	assert_int_equal(v.longValue, 20);
	assert_true(v.CStatus == S(PDH_CSTATUS_NEW_DATA));
	/* a second read without a new collection: valid, not new (D-FmtValue) */
	assert_int_equal(PdhGetFormattedCounterValue(items, PDH_FMT_LARGE, NULL, &v), 0);
	assert_int_equal(v.largeValue, 20);
	assert_true(v.CStatus == S(PDH_CSTATUS_VALID_DATA));
	assert_int_equal(PdhCloseQuery(q), 0);

	/* the only counter of a query names an instance that does not exist (pdh.md 6.4) */
	q = open_query();
	missing = add(q, "\\PDH Test(later)\\Items");
	assert_int_equal(PdhCollectQueryData(q), PDH_NO_DATA);
	assert_int_equal(PdhGetRawCounterValue(missing, NULL, &raw), 0);
	assert_true(raw.CStatus == S(PDH_CSTATUS_NO_INSTANCE));
	assert_int_equal(PdhGetFormattedCounterValue(missing, PDH_FMT_LONG, NULL, &v),
			 PDH_INVALID_DATA);
	assert_true(v.CStatus == S(PDH_CSTATUS_NO_INSTANCE));
	/* with another counter the collection succeeds */
	big = add(q, "\\PDH Single\\Value");
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_int_equal(PdhGetFormattedCounterValue(big, PDH_FMT_LARGE, NULL, &v), 0);
	assert_int_equal(v.largeValue, 7000000000ll);
	/* it appears: the next collection has its data */
	later = make_inst(u"later", 9, 99);
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_int_equal(PdhGetFormattedCounterValue(missing, PDH_FMT_LONG, NULL, &v), 0);
	assert_int_equal(v.longValue, 99);
	/* and vanishes again */
	assert_int_equal(PerfDeleteInstance(prov, later), 0);
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_int_equal(PdhGetFormattedCounterValue(missing, PDH_FMT_LONG, NULL, &v),
			 PDH_INVALID_DATA);
	assert_true(v.CStatus == S(PDH_CSTATUS_NO_INSTANCE));
	assert_int_equal(PdhCloseQuery(q), 0);
}

static void test_two_samples(void **state)
{
	PDH_HQUERY q = open_query();
	PDH_HCOUNTER ops, busy;
	PDH_FMT_COUNTERVALUE v, calc;
	PDH_RAW_COUNTER r1, r2;
	LONGLONG tb;
	double rate;

	(void)state;
	ops = add(q, "\\PDH Test(b)\\Ops/sec");
	busy = add(q, "\\PDH Test(b)\\Busy %");
	assert_int_equal(PerfSetULongCounterValue(prov, inst_b, 2, 100), 0);
	/* the first collection succeeds; the value needs a second one (WT, pdh.md 6.1) */
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_int_equal(PdhGetFormattedCounterValue(ops, PDH_FMT_DOUBLE, NULL, &v),
			 PDH_INVALID_DATA);
	assert_true(v.CStatus == S(PDH_CSTATUS_INVALID_DATA));
	assert_int_equal(PdhGetRawCounterValue(ops, NULL, &r1), 0);
	usleep(100000);
	assert_int_equal(PerfSetULongCounterValue(prov, inst_b, 2, 150), 0);
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_int_equal(PdhGetRawCounterValue(ops, NULL, &r2), 0);
	assert_int_equal(r2.FirstValue - r1.FirstValue, 50);
	assert_true(r2.SecondValue > r1.SecondValue);
	rate = fmt_double(ops, 0);
	/* 50 counts over >= 0.1 s, well under 10 s */
	assert_true(rate > 5.0 && rate <= 500.0);
	/* the same value from the caller-held raw samples (newer first) */
	assert_int_equal(PdhCalculateCounterFromRawValue(ops, PDH_FMT_DOUBLE, &r2, &r1, &calc), 0);
	assert_true(calc.doubleValue == rate);
	assert_int_equal(PdhCalculateCounterFromRawValue(ops, PDH_FMT_DOUBLE, &r2, &r1, NULL),
			 PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhCalculateCounterFromRawValue(NULL, PDH_FMT_DOUBLE, &r2, &r1, &calc),
			 PDH_INVALID_HANDLE);
	/* with only one sample: invalid data */
	assert_int_equal(PdhCalculateCounterFromRawValue(ops, PDH_FMT_DOUBLE, &r2, NULL, &calc),
			 PDH_INVALID_DATA);
	/* a counter that went back is invalid data; the next pair is valid again */
	assert_int_equal(PerfSetULongCounterValue(prov, inst_b, 2, 10), 0);
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_int_equal(PdhGetFormattedCounterValue(ops, PDH_FMT_DOUBLE, NULL, &v),
			 PDH_INVALID_DATA);
	assert_int_equal(PerfSetULongCounterValue(prov, inst_b, 2, 20), 0);
	usleep(20000);
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_true(fmt_double(ops, 0) > 0);
	/* PdhFormatFromRawValue with an explicit type and time base */
	assert_int_equal(PdhGetCounterTimeBase(ops, &tb), 0);
	assert_int_equal(tb, 1000000000ll); /* this port's PerfFreq */
	assert_int_equal(
		PdhFormatFromRawValue(PERF_COUNTER_COUNTER, PDH_FMT_DOUBLE, &tb, &r2, &r1, &calc),
		0);
	assert_true(calc.doubleValue == rate);
	assert_int_equal(
		PdhFormatFromRawValue(PERF_COUNTER_COUNTER, PDH_FMT_DOUBLE, NULL, &r2, &r1, &calc),
		PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhFormatFromRawValue(PERF_RAW_BASE, PDH_FMT_DOUBLE, &tb, &r2, &r1, &calc),
			 PDH_FUNCTION_NOT_FOUND);
	/* time bases */
	assert_int_equal(PdhGetCounterTimeBase(NULL, NULL), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhGetCounterTimeBase(NULL, &tb), PDH_INVALID_HANDLE);
	assert_int_equal(PdhGetCounterTimeBase(ops, NULL), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhGetCounterTimeBase(busy, &tb), 0);
	assert_int_equal(tb, 10000000);
	assert_int_equal(PdhCloseQuery(q), 0);
}

static void test_fraction_scale_stats(void **state)
{
	PDH_HQUERY q = open_query();
	PDH_HCOUNTER ratio, items;
	PDH_RAW_COUNTER raws[3];
	PDH_STATISTICS st;

	(void)state;
	ratio = add(q, "\\PDH Test(a)\\Ratio");
	items = add(q, "\\PDH Test(a#1)\\Items"); /* the second "a" */
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_true(fmt_double(ratio, 0) == 25.0);
	assert_true(fmt_double(items, 0) == 30.0);
	/* scale: range, effect, NOSCALE; 1000; cap at 100 unless NOCAP100 */
	assert_int_equal(PdhSetCounterScaleFactor(NULL, 1), PDH_INVALID_HANDLE);
	assert_int_equal(PdhSetCounterScaleFactor(NULL, 8), PDH_INVALID_HANDLE);
	assert_int_equal(PdhSetCounterScaleFactor(ratio, 8), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhSetCounterScaleFactor(ratio, -8), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhSetCounterScaleFactor(ratio, 1), 0);
	assert_true(fmt_double(ratio, 0) == 100.0);
	assert_true(fmt_double(ratio, PDH_FMT_NOCAP100) == 250.0);
	assert_true(fmt_double(ratio, PDH_FMT_NOSCALE) == 25.0);
	assert_int_equal(PdhSetCounterScaleFactor(ratio, -1), 0);
	assert_true(fmt_double(ratio, PDH_FMT_1000) == 100.0);
	assert_true(fmt_double(ratio, PDH_FMT_1000 | PDH_FMT_NOCAP100) == 2500.0);
	assert_int_equal(PdhSetCounterScaleFactor(items, 0), 0);
	assert_true(fmt_double(items, PDH_FMT_1000) == 30000.0);
	/* statistics over caller-held raw samples, with one invalid entry skipped */
	assert_int_equal(PdhGetRawCounterValue(items, NULL, &raws[0]), 0);
	raws[1] = raws[0];
	raws[1].FirstValue = 50;
	raws[2] = raws[0];
	raws[2].CStatus = (DWORD)PDH_CSTATUS_INVALID_DATA;
	assert_int_equal(PdhComputeCounterStatistics(items, PDH_FMT_DOUBLE, 0, 3, raws, &st), 0);
	assert_int_equal(st.count, 2);
	assert_true(st.min.doubleValue == 30.0 && st.max.doubleValue == 50.0);
	assert_true(st.mean.doubleValue == 40.0);
	assert_int_equal(st.dwFormat, PDH_FMT_DOUBLE);
	assert_int_equal(PdhComputeCounterStatistics(items, PDH_FMT_DOUBLE, 3, 3, raws, &st),
			 PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhComputeCounterStatistics(NULL, PDH_FMT_DOUBLE, 0, 3, raws, &st),
			 PDH_INVALID_HANDLE);
	assert_int_equal(PdhComputeCounterStatistics(items, PDH_FMT_DOUBLE, 0, 3, raws, NULL),
			 PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhCloseQuery(q), 0);
}

/* ---- arrays -------------------------------------------------------------------------- */

/* the formatted array of @c as "name=value" pairs joined by ',' */
static void array_text(PDH_HCOUNTER c, char *out, size_t size)
{
	DWORD bytes = 0, n = 0, i;
	PDH_FMT_COUNTERVALUE_ITEM_A *items;
	size_t off = 0;

	assert_int_equal(PdhGetFormattedCounterArrayA(c, PDH_FMT_LONG, &bytes, &n, NULL),
			 PDH_MORE_DATA);
	items = malloc(bytes);
	assert_non_null(items);
	assert_int_equal(PdhGetFormattedCounterArrayA(c, PDH_FMT_LONG, &bytes, &n, items), 0);
	out[0] = '\0';
	for (i = 0; i < n; i++)
		off += (size_t)snprintf(out + off, size - off, "%s%s=%d", i ? "," : "",
					items[i].szName, (int)items[i].FmtValue.longValue);
	free(items);
}

static void test_wildcard_arrays(void **state)
{
	PDH_HQUERY q = open_query();
	PDH_HCOUNTER all, ops;
	PDH_FMT_COUNTERVALUE_ITEM_W *w;
	PDH_RAW_COUNTER_ITEM_W *rw;
	PDH_RAW_COUNTER_ITEM_A *ra;
	PDH_FMT_COUNTERVALUE v;
	PPERF_COUNTERSET_INSTANCE c;
	DWORD bytes = 0, n = 0, small;
	char text[256];

	(void)state;
	all = add(q, "\\PDH Test(*)\\Items");
	ops = add(q, "\\PDH Test(*)\\Ops/sec");
	/* before the first collection: no data (I-DD) */
	assert_int_equal(PdhGetFormattedCounterArrayA(all, PDH_FMT_LONG, &bytes, &n, NULL),
			 PDH_NO_DATA);
	assert_int_equal(PdhGetFormattedCounterValue(all, PDH_FMT_LONG, NULL, &v), PDH_NO_DATA);
	assert_int_equal(PdhCollectQueryData(q), 0);
	/* every instance, duplicates with the plain name, then _Total */
	array_text(all, text, sizeof(text));
	assert_string_equal(text, "a=10,b=20,a=30,_Total=60");
	/* the buffer protocol: NULLs, NULL buffer with a size, too small by one */
	assert_int_equal(PdhGetFormattedCounterArrayW(all, PDH_FMT_LONG, NULL, &n, NULL),
			 PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhGetFormattedCounterArrayW(all, PDH_FMT_LONG, &bytes, NULL, NULL),
			 PDH_INVALID_ARGUMENT);
	bytes = 100;
	assert_int_equal(PdhGetFormattedCounterArrayW(all, PDH_FMT_LONG, &bytes, &n, NULL),
			 PDH_INVALID_ARGUMENT);
	bytes = 0;
	assert_int_equal(PdhGetFormattedCounterArrayW(all, PDH_FMT_LONG, &bytes, &n, NULL),
			 PDH_MORE_DATA);
	/* 4 items of 24 bytes and "a" "b" "a" "_Total" in UTF-16 with NULs */
	assert_int_equal(bytes, 4 * 24 + (2 + 2 + 2 + 7) * 2);
	assert_int_equal(n, 4);
	w = malloc(bytes);
	small = bytes - 1;
	assert_int_equal(PdhGetFormattedCounterArrayW(all, PDH_FMT_LONG, &small, &n, w),
			 PDH_MORE_DATA);
	assert_int_equal(small, bytes);
	assert_int_equal(PdhGetFormattedCounterArrayW(all, PDH_FMT_LONG, &bytes, &n, w), 0);
	assert_int_equal(w[3].szName[0], u'_');
	assert_true((char *)w[0].szName >= (char *)(w + 4) &&
		    (char *)w[3].szName < (char *)w + bytes);
	free(w);
	/* raw arrays, both variants */
	bytes = 0;
	assert_int_equal(PdhGetRawCounterArrayW(all, &bytes, &n, NULL), PDH_MORE_DATA);
	rw = malloc(bytes);
	assert_int_equal(PdhGetRawCounterArrayW(all, &bytes, &n, rw), 0);
	assert_int_equal(rw[1].RawValue.FirstValue, 20);
	assert_int_equal(rw[1].szName[0], u'b');
	free(rw);
	bytes = 0;
	assert_int_equal(PdhGetRawCounterArrayA(all, &bytes, &n, NULL), PDH_MORE_DATA);
	ra = malloc(bytes);
	assert_int_equal(PdhGetRawCounterArrayA(all, &bytes, &n, ra), 0);
	assert_string_equal(ra[3].szName, "_Total");
	assert_int_equal(ra[3].RawValue.FirstValue, 60);
	free(ra);
	/* a rate array after one sample: items with CStatus PDH_CSTATUS_INVALID_DATA */
	bytes = 0;
	assert_int_equal(PdhGetFormattedCounterArrayA(ops, PDH_FMT_LONG, &bytes, &n, NULL),
			 PDH_MORE_DATA);
	{
		PDH_FMT_COUNTERVALUE_ITEM_A *it = malloc(bytes);

		assert_int_equal(PdhGetFormattedCounterArrayA(ops, PDH_FMT_LONG, &bytes, &n, it),
				 0);
		assert_true(it[0].FmtValue.CStatus == S(PDH_CSTATUS_INVALID_DATA));
		free(it);
	}
	/* instances come and go between collections */
	c = make_inst(u"c", 4, 40);
	assert_int_equal(PerfDeleteInstance(prov, inst_b), 0);
	assert_int_equal(PdhCollectQueryData(q), 0);
	array_text(all, text, sizeof(text));
	assert_string_equal(text, "a=10,a=30,c=40,_Total=80");
	assert_int_equal(PerfDeleteInstance(prov, c), 0);
	inst_b = make_inst(u"b", 2, 20);
	assert_int_equal(PdhCollectQueryData(q), 0);
	array_text(all, text, sizeof(text));
	assert_string_equal(text, "a=10,a=30,b=20,_Total=60");
	assert_int_equal(PdhCloseQuery(q), 0);
}

/* the rate of item @name in the Ops/sec array of @c: its CStatus, value in *@v */
static DWORD ops_item(PDH_HCOUNTER c, const char *name, double *v)
{
	DWORD bytes = 0, n = 0, i, cs = 0xFFFFFFFF;
	PDH_FMT_COUNTERVALUE_ITEM_A *it;

	assert_int_equal(PdhGetFormattedCounterArrayA(c, PDH_FMT_DOUBLE, &bytes, &n, NULL),
			 PDH_MORE_DATA);
	it = malloc(bytes);
	assert_non_null(it);
	assert_int_equal(PdhGetFormattedCounterArrayA(c, PDH_FMT_DOUBLE, &bytes, &n, it), 0);
	for (i = 0; i < n; i++) {
		if (!strcmp(it[i].szName, name)) {
			cs = it[i].FmtValue.CStatus;
			*v = it[i].FmtValue.doubleValue;
		}
	}
	free(it);
	return cs;
}

/*
 * rates pair each instance with itself in the previous sample: by order while instances
 * stay, by name when some went or came (the hash path), and by name again after counters of
 * another set changed the query's specifications
 */
/*
 * the formatted array of a counter against the raw arrays of this sample and the one
 * before, cooked one by one by PdhCalculateCounterFromRawValue: the specialised array code
 * (counts, counts per second) and the general one give the same values and statuses
 */
static void arrays_agree(PDH_HCOUNTER c, DWORD fmt, PDH_RAW_COUNTER_ITEM_A *prev, DWORD nprev,
			 PDH_RAW_COUNTER_ITEM_A **ret_raw, DWORD *ret_n)
{
	DWORD fbytes = 0, rbytes = 0, wbytes = 0, n = 0, rn = 0, wn = 0, i, k;
	static size_t at;
	char *fmem, *wmem;
	PDH_FMT_COUNTERVALUE_ITEM_W *w;
	PDH_FMT_COUNTERVALUE_ITEM_A *f;
	PDH_RAW_COUNTER_ITEM_A *r;

	assert_int_equal(PdhGetFormattedCounterArrayA(c, fmt, &fbytes, &n, NULL), PDH_MORE_DATA);
	assert_int_equal(PdhGetRawCounterArrayA(c, &rbytes, &rn, NULL), PDH_MORE_DATA);
	assert_int_equal(n, rn);
	/* the formatted arrays at each 8-byte place in a cache line in turn */
	at = (at + 8) % 64;
	fmem = aligned_alloc(64, (fbytes + 64 + 63) / 64 * 64);
	f = (void *)(fmem + at);
	r = malloc(rbytes);
	assert_non_null(fmem);
	assert_non_null(r);
	assert_int_equal(PdhGetFormattedCounterArrayA(c, fmt, &fbytes, &n, f), 0);
	assert_int_equal(PdhGetRawCounterArrayA(c, &rbytes, &rn, r), 0);
	/* the W array: the same items, names widened */
	assert_int_equal(PdhGetFormattedCounterArrayW(c, fmt, &wbytes, &wn, NULL), PDH_MORE_DATA);
	assert_int_equal(wn, n);
	wmem = aligned_alloc(64, (wbytes + 64 + 63) / 64 * 64);
	assert_non_null(wmem);
	w = (void *)(wmem + (at + 24) % 64);
	assert_int_equal(PdhGetFormattedCounterArrayW(c, fmt, &wbytes, &wn, w), 0);
	for (i = 0; i < n; i++) {
		for (k = 0; f[i].szName[k]; k++)
			assert_int_equal(w[i].szName[k], (WCHAR)f[i].szName[k]);
		assert_int_equal(w[i].szName[k], 0);
		assert_int_equal(w[i].FmtValue.CStatus, f[i].FmtValue.CStatus);
		assert_memory_equal(&w[i].FmtValue, &f[i].FmtValue, sizeof(f[i].FmtValue));
	}
	free(wmem);
	for (i = 0; i < n; i++) {
		PDH_RAW_COUNTER *old = NULL;
		PDH_FMT_COUNTERVALUE want;
		DWORD dup = 0, seen = 0;

		assert_string_equal(f[i].szName, r[i].szName);
		/* the same instance before: that name's same occurrence ("a" is there twice) */
		for (k = 0; k < i; k++)
			dup += !strcmp(r[k].szName, r[i].szName);
		for (k = 0; prev && k < nprev && !old; k++)
			if (!strcmp(prev[k].szName, r[i].szName) && seen++ == dup)
				old = &prev[k].RawValue;
		PdhCalculateCounterFromRawValue(c, fmt, &r[i].RawValue, old, &want);
		assert_int_equal(f[i].FmtValue.CStatus, want.CStatus);
		if (fmt & PDH_FMT_LONG)
			assert_int_equal(f[i].FmtValue.longValue, want.longValue);
		else
			assert_true(f[i].FmtValue.doubleValue == want.doubleValue);
	}
	free(fmem);
	*ret_raw = r;
	*ret_n = rn;
}

/*
 * the arrays of every kind against the raw ones across rounds: one sample, values changed
 * (up and, for the rate, back), unchanged, instances going and coming; 30 more instances
 * than the others make the block long enough for the 8-item kernels (fmt_steady.c)
 */
#define NR_MANY 30
static void test_fast_arrays_agree(void **state)
{
	static const char *const paths[] = {"\\PDH Test(*)\\Items", "\\PDH Test(*)\\Ops/sec",
					    "\\PDH Test(*)\\Ratio"};
	static const DWORD fmts[] = {PDH_FMT_DOUBLE, PDH_FMT_LONG | PDH_FMT_1000,
				     PDH_FMT_DOUBLE | PDH_FMT_NOSCALE};
	PDH_RAW_COUNTER_ITEM_A *prev[3] = {0};
	PPERF_COUNTERSET_INSTANCE x, y, z = NULL, many[NR_MANY];
	PDH_HQUERY q = open_query();
	PDH_HCOUNTER c[3];
	DWORD nprev[3] = {0};
	unsigned int round, k, i;
	WCHAR name[8];

	(void)state;
	x = make_inst(u"x", 20, 5);
	y = make_inst(u"y", 21, 6);
	for (i = 0; i < NR_MANY; i++) {
		/* names of 2 to 4 characters, so that their places do not follow a pattern */
		name[0] = u'm';
		name[1] = (WCHAR)(u'a' + i % 26);
		name[2] = i % 3 ? (WCHAR)(u'0' + i % 10) : 0;
		name[3] = i % 3 == 2 ? u'z' : 0;
		name[4] = 0;
		many[i] = make_inst(name, 100 + i, i * 7);
		assert_int_equal(PerfSetULongCounterValue(prov, many[i], 2, 1000 + i), 0);
	}
	for (k = 0; k < 3; k++)
		c[k] = add(q, paths[k]);
	/* one sample, changed values, unchanged values, then instances going and coming */
	for (round = 0; round < 8; round++) {
		if (round == 1 || round == 3 || round == 5 || round == 6) {
			assert_int_equal(PerfSetULongCounterValue(prov, x, 2, 100 * round), 0);
			assert_int_equal(PerfSetULongCounterValue(prov, x, 1, round), 0);
			/* some go up, some stay, some go back (a rate without value) */
			for (i = round % 3; i < NR_MANY; i += 3) {
				ULONG ops = i % 2 ? 1000 + i + 10 * round : 1000 + i - round;

				assert_int_equal(PerfSetULongCounterValue(prov, many[i], 2, ops),
						 0);
				assert_int_equal(
					PerfSetULongCounterValue(prov, many[i], 1, round * i), 0);
			}
		}
		if (round == 3) {
			assert_int_equal(PerfDeleteInstance(prov, y), 0);
			z = make_inst(u"z", 22, 9);
		}
		usleep(5000);
		assert_int_equal(PdhCollectQueryData(q), 0);
		for (k = 0; k < 3; k++) {
			PDH_RAW_COUNTER_ITEM_A *raw;
			DWORD n;

			arrays_agree(c[k], fmts[round % 3], round ? prev[k] : NULL, nprev[k], &raw,
				     &n);
			assert_true(n >= NR_MANY + 3);
			free(prev[k]);
			prev[k] = raw;
			nprev[k] = n;
		}
	}
	for (k = 0; k < 3; k++)
		free(prev[k]);
	assert_int_equal(PdhCloseQuery(q), 0);
	assert_int_equal(PerfDeleteInstance(prov, x), 0);
	assert_int_equal(PerfDeleteInstance(prov, z), 0);
	for (i = 0; i < NR_MANY; i++)
		assert_int_equal(PerfDeleteInstance(prov, many[i]), 0);
}

static void test_rates_across_churn(void **state)
{
	PPERF_COUNTERSET_INSTANCE x, y, z;
	PDH_HQUERY q = open_query();
	PDH_HCOUNTER ops, single;
	double v = -1;

	(void)state;
	x = make_inst(u"x", 10, 1);
	y = make_inst(u"y", 11, 1);
	ops = add(q, "\\PDH Test(*)\\Ops/sec");
	assert_int_equal(PerfSetULongCounterValue(prov, x, 2, 100), 0);
	assert_int_equal(PerfSetULongCounterValue(prov, y, 2, 200), 0);
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_true(ops_item(ops, "x", &v) == S(PDH_CSTATUS_INVALID_DATA));
	usleep(20000);
	/* y goes, z comes (into y's slot, so the order changes), x moves on */
	assert_int_equal(PerfDeleteInstance(prov, y), 0);
	z = make_inst(u"z", 12, 1);
	assert_int_equal(PerfSetULongCounterValue(prov, x, 2, 150), 0);
	assert_int_equal(PerfSetULongCounterValue(prov, z, 2, 900), 0);
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_true(ops_item(ops, "x", &v) == S(PDH_CSTATUS_NEW_DATA));
	assert_true(v > 0 && v <= 50 / 0.02);
	assert_true(ops_item(ops, "z", &v) == S(PDH_CSTATUS_INVALID_DATA));
	assert_true(ops_item(ops, "y", &v) == 0xFFFFFFFF);
	/* a counter of another set: new specifications, old items found by name */
	single = add(q, "\\PDH Single\\Value");
	usleep(20000);
	assert_int_equal(PerfSetULongCounterValue(prov, x, 2, 170), 0);
	assert_int_equal(PerfSetULongCounterValue(prov, z, 2, 950), 0);
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_true(ops_item(ops, "x", &v) == S(PDH_CSTATUS_NEW_DATA));
	assert_true(v > 0 && v <= 20 / 0.02);
	assert_true(ops_item(ops, "z", &v) == S(PDH_CSTATUS_NEW_DATA));
	assert_true(v > 0 && v <= 50 / 0.02);
	assert_true(fmt_double(single, 0) == 7000000000.0);
	assert_int_equal(PdhCloseQuery(q), 0);
	assert_int_equal(PerfDeleteInstance(prov, x), 0);
	assert_int_equal(PerfDeleteInstance(prov, z), 0);
}

/* the formatted value of @c is no value (the status of a rate with one sample) */
static void no_value(PDH_HCOUNTER c)
{
	PDH_FMT_COUNTERVALUE v;

	assert_int_equal(PdhGetFormattedCounterValue(c, PDH_FMT_DOUBLE, NULL, &v),
			 PDH_INVALID_DATA);
	assert_true(v.CStatus == S(PDH_CSTATUS_INVALID_DATA));
}

/*
 * a name that moves to another instance (InstanceId) between two samples: "burn#1" becomes
 * "burn" when the first "burn" goes. PDH pairs the samples by name, duplicate number and
 * InstanceId: the rate of "burn" across the two instances is no value (Windows pairs by name
 * alone: 540.8 % on 2 CPUs seen from \Process(burn)), single counter and array alike, and
 * is a value again at the next sample. The same for an instance made again at the same place
 * (same names in the same order: the steady pairing) under another id.
 */
static void test_rate_across_instance_ids(void **state)
{
	PPERF_COUNTERSET_INSTANCE b0, b1, x;
	PDH_HQUERY q = open_query();
	PDH_HCOUNTER burn, burn1, ops, xops;
	double v = -1;

	(void)state;
	b0 = make_inst(u"burn", 30, 1);
	b1 = make_inst(u"burn", 31, 1);
	x = make_inst(u"x", 40, 1);
	burn = add(q, "\\PDH Test(burn)\\Ops/sec");
	burn1 = add(q, "\\PDH Test(burn#1)\\Ops/sec");
	ops = add(q, "\\PDH Test(*)\\Ops/sec");
	xops = add(q, "\\PDH Test(x)\\Ops/sec");
	assert_int_equal(PerfSetULongCounterValue(prov, b0, 2, 1000), 0);
	assert_int_equal(PerfSetULongCounterValue(prov, b1, 2, 9000000), 0);
	assert_int_equal(PerfSetULongCounterValue(prov, x, 2, 10), 0);
	assert_int_equal(PdhCollectQueryData(q), 0);
	usleep(20000);
	assert_int_equal(PerfSetULongCounterValue(prov, b0, 2, 1100), 0);
	assert_int_equal(PerfSetULongCounterValue(prov, b1, 2, 9000100), 0);
	assert_int_equal(PdhCollectQueryData(q), 0);
	v = fmt_double(burn, 0);
	assert_true(v > 0 && v <= 100 / 0.02);
	v = fmt_double(burn1, 0);
	assert_true(v > 0 && v <= 100 / 0.02);
	/* the first burn goes: "burn" is now the instance that was "burn#1" */
	assert_int_equal(PerfDeleteInstance(prov, b0), 0);
	assert_int_equal(PerfSetULongCounterValue(prov, b1, 2, 9000200), 0);
	usleep(20000);
	assert_int_equal(PdhCollectQueryData(q), 0);
	no_value(burn);
	assert_true(ops_item(ops, "burn", &v) == S(PDH_CSTATUS_INVALID_DATA));
	/* the next sample pairs it with itself */
	assert_int_equal(PerfSetULongCounterValue(prov, b1, 2, 9000300), 0);
	usleep(20000);
	assert_int_equal(PdhCollectQueryData(q), 0);
	v = fmt_double(burn, 0);
	assert_true(v > 0 && v <= 100 / 0.02);
	assert_true(ops_item(ops, "burn", &v) == S(PDH_CSTATUS_NEW_DATA));
	assert_true(v > 0 && v <= 100 / 0.02);
	/* x made again in its place under another id: the same names in the same order */
	assert_int_equal(PerfDeleteInstance(prov, x), 0);
	x = make_inst(u"x", 41, 1);
	assert_int_equal(PerfSetULongCounterValue(prov, x, 2, 5000000), 0);
	usleep(20000);
	assert_int_equal(PdhCollectQueryData(q), 0);
	no_value(xops);
	assert_true(ops_item(ops, "x", &v) == S(PDH_CSTATUS_INVALID_DATA));
	assert_int_equal(PerfSetULongCounterValue(prov, x, 2, 5000050), 0);
	usleep(20000);
	assert_int_equal(PdhCollectQueryData(q), 0);
	v = fmt_double(xops, 0);
	assert_true(v > 0 && v <= 50 / 0.02);
	assert_int_equal(PdhCloseQuery(q), 0);
	assert_int_equal(PerfDeleteInstance(prov, b1), 0);
	assert_int_equal(PerfDeleteInstance(prov, x), 0);
}

/*
 * the items of a "(*)" counter after each collection against PerfQueryCounterData of the
 * same instances read by the reference walk (pdh_decode_data): the same instances in the same
 * order, the same raw values, "#n" the same duplicate; across steady collections (the
 * column read takes the items before), value changes and instances coming and going
 */
static void raw_items_match(PDH_HCOUNTER items, PDH_HCOUNTER second_a, HANDLE pq)
{
	static const uint32_t counter1 = 1;
	PDH_RAW_COUNTER_ITEM_A *r;
	const struct pdh_dec_item *ti;
	DWORD bytes = 0, n = 0, i;
	struct pdh_dec_data d;
	DWORD size = 0, got = 0;
	PDH_RAW_COUNTER one;
	void *buf;
	uint64_t v;

	assert_int_equal(PerfQueryCounterData(pq, NULL, 0, &size), ERROR_NOT_ENOUGH_MEMORY);
	buf = malloc(size);
	assert_non_null(buf);
	assert_int_equal(PerfQueryCounterData(pq, buf, size, &got), 0);
	assert_int_equal(pdh_decode_data(buf, got, &counter1, 1, &d), 0);
	assert_int_equal(PdhGetRawCounterArrayA(items, &bytes, &n, NULL), PDH_MORE_DATA);
	r = malloc(bytes);
	assert_non_null(r);
	assert_int_equal(PdhGetRawCounterArrayA(items, &bytes, &n, r), 0);
	assert_int_equal(n, d.blocks[0].nr);
	for (i = 0; i < n; i++) {
		ti = &d.items[d.blocks[0].first + i];
		assert_string_equal(r[i].szName, ti->name);
		assert_true(pdh_dec_item_value(&d, ti, 1, &v));
		assert_int_equal(r[i].RawValue.FirstValue, (LONGLONG)v);
	}
	/* the second "a" of the sample, found by its duplicate number */
	ti = pdh_dec_data_item(&d, 0, "a", 1);
	assert_int_equal(PdhGetRawCounterValue(second_a, NULL, &one), 0);
	if (ti) {
		assert_int_equal(one.CStatus, S(PDH_CSTATUS_NEW_DATA));
		assert_true(pdh_dec_item_value(&d, ti, 1, &v));
		assert_int_equal(one.FirstValue, (LONGLONG)v);
	} else {
		assert_int_equal(one.CStatus, S(PDH_CSTATUS_NO_INSTANCE));
	}
	free(r);
	pdh_dec_data_free(&d);
	free(buf);
}

static void test_items_match_query_data(void **state)
{
	struct {
		PERF_COUNTER_IDENTIFIER id;
		WCHAR name[4];
	} spec;
	PPERF_COUNTERSET_INSTANCE extra[12] = {0};
	PDH_HQUERY q = open_query();
	PDH_HCOUNTER items, second_a;
	unsigned int seed = 11, round, k;
	HANDLE pq;

	(void)state;
	memset(&spec, 0, sizeof(spec));
	spec.id.CounterSetGuid = multi_guid;
	spec.id.Size = sizeof(spec);
	spec.id.CounterId = 1;
	spec.id.InstanceId = NO;
	spec.name[0] = u'*';
	assert_int_equal(PerfOpenQueryHandle(NULL, &pq), 0);
	assert_int_equal(PerfAddCounters(pq, &spec.id, sizeof(spec)), 0);
	items = add(q, "\\PDH Test(*)\\Items");
	second_a = add(q, "\\PDH Test(a#1)\\Items");
	add(q, "\\PDH Single\\Value");
	for (round = 0; round < 40; round++) {
		/* rounds 0-9 and every fourth after: nothing changes but values */
		if (round >= 10 && round % 4) {
			for (k = 0; k < 2; k++) {
				unsigned int i = (unsigned int)rand_r(&seed) % 12;

				if (extra[i]) {
					assert_int_equal(PerfDeleteInstance(prov, extra[i]), 0);
					extra[i] = NULL;
				} else {
					extra[i] = make_inst(i % 3 ? u"e" : u"a", 40 + i, i);
				}
			}
		}
		assert_int_equal(PerfSetULongCounterValue(prov, inst_a2, 1, 30 + round), 0);
		assert_int_equal(PdhCollectQueryData(q), 0);
		raw_items_match(items, second_a, pq);
	}
	for (k = 0; k < 12; k++)
		if (extra[k])
			assert_int_equal(PerfDeleteInstance(prov, extra[k]), 0);
	assert_int_equal(PerfSetULongCounterValue(prov, inst_a2, 1, 30), 0);
	assert_int_equal(PerfCloseQueryHandle(pq), 0);
	assert_int_equal(PdhCloseQuery(q), 0);
}

/* ---- counter info -------------------------------------------------------------------- */

/* the value of counter @id of instance @i of @s; false when it has none */
static bool sample_value(const PDH_LINUX_COUNTERSET_SAMPLE *s, DWORD i, DWORD id, uint64_t *v)
{
	PDH_LINUX_INSTANCE in;
	ULONGLONG values[8];
	BYTE sizes[8];
	DWORD k;

	assert_true(s->NumCounters <= 8);
	assert_int_equal(PdhLinuxGetSampleInstance(s, i, &in, values, sizes), 0);
	for (k = 0; k < s->NumCounters; k++) {
		if (s->CounterIds[k] == id && sizes[k]) {
			*v = values[k];
			return true;
		}
	}
	return false;
}

/*
 * whole counter sets through a query without counters, with libpdh's Linux extension
 * (what perflib-exporter reads): every instance with its id, name and "#n", every counter
 * by id; an unchanged list keeps the query, a changed one is used from the next
 * collection; errors
 */
static void test_whole_sets(void **state)
{
	const PDH_LINUX_COUNTERSET_REF sets[] = {
		{multi_guid, PERF_COUNTERSET_MULTI_AGGREGATE},
		{single_guid, PERF_COUNTERSET_SINGLE_INSTANCE},
	};
	const GUID unknown = tl_guid(199);
	PDH_LINUX_COUNTERSET_SAMPLE s;
	PDH_LINUX_INSTANCE in;
	ULONGLONG values[8];
	BYTE sizes[8];
	PDH_HQUERY q = open_query();
	unsigned int seen = 0, dups = 0;
	DWORD i;
	uint64_t v;

	(void)state;
	assert_int_equal(PdhLinuxSetQueryCounterSets(NULL, sets, 2), PDH_INVALID_HANDLE);
	assert_int_equal(PdhLinuxSetQueryCounterSets(q, NULL, 2), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhLinuxGetCounterSetSample(q, &multi_guid, &s), PDH_NO_DATA);
	assert_int_equal(PdhCollectQueryData(q), PDH_NO_DATA); /* nothing to collect */
	assert_int_equal(PdhLinuxSetQueryCounterSets(q, sets, 2), 0);
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_int_equal(PdhLinuxGetCounterSetSample(NULL, &multi_guid, &s), PDH_INVALID_HANDLE);
	assert_int_equal(PdhLinuxGetCounterSetSample(q, NULL, &s), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhLinuxGetCounterSetSample(q, &multi_guid, NULL), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhLinuxGetCounterSetSample(q, &unknown, &s), PDH_CSTATUS_NO_OBJECT);
	assert_int_equal(PdhLinuxGetCounterSetSample(q, &multi_guid, &s), 0);
	assert_int_equal(s.CStatus, 0);
	assert_int_equal(s.DataType, PERF_COUNTERSET);
	assert_true(s.PerfFreq > 0 && s.PerfTime100NSec > 0);
	/* every counter of the set, every instance (a, b, a and the aggregate's) */
	assert_int_equal(s.NumCounters, 5);
	for (i = 0; i < s.NumInstances; i++) {
		assert_int_equal(PdhLinuxGetSampleInstance(&s, i, &in, NULL, NULL), 0);
		if (in.Name && !strcmp(in.Name, "a")) {
			assert_int_equal(in.NameLength, 1);
			dups |= 1u << in.Duplicate; /* the two "a" are "a" and "a#1" */
		}
		if (in.InstanceId == 3) {
			assert_string_equal(in.Name, "a");
			assert_true(sample_value(&s, i, 1, &v));
			assert_int_equal(v, 30);
			assert_true(sample_value(&s, i, 4, &v)); /* a base: there too */
			assert_int_equal(v, 4);
			seen++;
		}
	}
	assert_int_equal(seen, 1);
	assert_int_equal(dups, 3);
	/* bad instance requests */
	assert_int_equal(PdhLinuxGetSampleInstance(&s, s.NumInstances, &in, NULL, NULL),
			 PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhLinuxGetSampleInstance(NULL, 0, &in, NULL, NULL), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhLinuxGetSampleInstance(&s, 0, NULL, NULL, NULL), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhLinuxGetSampleInstance(&s, 0, &in, values, NULL), PDH_INVALID_ARGUMENT);
	assert_int_equal(
		PdhLinuxGetSampleInstance(&(PDH_LINUX_COUNTERSET_SAMPLE){.NumInstances = 1}, 0, &in,
					  values, sizes),
		PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhLinuxGetCounterSetSample(q, &single_guid, &s), 0);
	assert_int_equal(s.DataType, PERF_MULTIPLE_COUNTERS);
	assert_int_equal(s.NumInstances, 1);
	assert_int_equal(PdhLinuxGetSampleInstance(&s, 0, &in, NULL, NULL), 0);
	assert_null(in.Name);
	assert_int_equal(in.NameLength, 0);
	assert_true(sample_value(&s, 0, 1, &v));
	assert_int_equal(v, 7000000000ull);
	/* the same list: the same perflib query, new values */
	assert_int_equal(PdhLinuxSetQueryCounterSets(q, sets, 2), 0);
	assert_int_equal(PerfSetULongCounterValue(prov, inst_a2, 1, 31), 0);
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_int_equal(PdhLinuxGetCounterSetSample(q, &multi_guid, &s), 0);
	for (i = 0, seen = 0; i < s.NumInstances; i++) {
		assert_int_equal(PdhLinuxGetSampleInstance(&s, i, &in, NULL, NULL), 0);
		if (in.InstanceId == 3) {
			assert_true(sample_value(&s, i, 1, &v) && v == 31);
			seen++;
		}
	}
	assert_int_equal(seen, 1);
	/* another list: from the next collection on */
	assert_int_equal(PdhLinuxSetQueryCounterSets(q, sets + 1, 1), 0);
	assert_int_equal(PdhLinuxGetCounterSetSample(q, &multi_guid, &s), 0);
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_int_equal(PdhLinuxGetCounterSetSample(q, &multi_guid, &s), PDH_CSTATUS_NO_OBJECT);
	assert_int_equal(PdhLinuxGetCounterSetSample(q, &single_guid, &s), 0);
	assert_int_equal(PerfSetULongCounterValue(prov, inst_a2, 1, 30), 0);
	/* a counter set unknown to perflib is left out, the others keep their samples */
	assert_int_equal(PdhLinuxSetQueryCounterSets(
				 q, (const PDH_LINUX_COUNTERSET_REF[]){{unknown, 0}, sets[1]}, 2),
			 0);
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_int_equal(PdhLinuxGetCounterSetSample(q, &unknown, &s), PDH_CSTATUS_NO_OBJECT);
	assert_int_equal(PdhLinuxGetCounterSetSample(q, &single_guid, &s), 0);
	assert_true(sample_value(&s, 0, 1, &v));
	assert_int_equal(v, 7000000000ull);
	assert_int_equal(PdhLinuxSetQueryCounterSets(q, NULL, 0), 0);
	assert_int_equal(PdhCollectQueryData(q), PDH_NO_DATA);
	assert_int_equal(PdhCloseQuery(q), 0);
}

/*
 * a counter set's registration through libpdh's Linux extension: counters in order with
 * their types, companions, names and help; the set's name and help; errors
 */
static void test_linux_registration(void **state)
{
	const GUID unknown = tl_guid(199);
	PDH_LINUX_COUNTERSET_REG *r = (void *)1;
	DWORD i;

	(void)state;
	assert_int_equal(PdhLinuxGetCounterSetRegistration(NULL, NULL, &r), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhLinuxGetCounterSetRegistration(NULL, &multi_guid, NULL),
			 PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhLinuxGetCounterSetRegistration("no-such-host.invalid", &multi_guid, &r),
			 PDH_CSTATUS_NO_MACHINE);
	assert_null(r);
	assert_int_equal(PdhLinuxGetCounterSetRegistration(NULL, &unknown, &r),
			 PDH_CSTATUS_NO_OBJECT);
	assert_null(r);
	assert_int_equal(PdhLinuxGetCounterSetRegistration(".", &multi_guid, &r), 0);
	assert_non_null(r);
	assert_memory_equal(&r->CounterSet, &multi_guid, sizeof(GUID));
	assert_int_equal(r->InstanceType, PERF_COUNTERSET_MULTI_AGGREGATE);
	assert_string_equal(r->Name, "PDH Test");
	assert_string_equal(r->Help, "PDH Test");
	assert_int_equal(r->NumCounters, 5);
	for (i = 0; i < r->NumCounters; i++) {
		assert_int_equal(r->Counters[i].CounterId, multi_ctrs[i].id);
		assert_int_equal(r->Counters[i].CounterType, multi_ctrs[i].type);
		assert_int_equal(r->Counters[i].BaseCounterId, multi_ctrs[i].base_id);
		assert_int_equal(r->Counters[i].PerfTimeId, NO);
		assert_string_equal(r->Counters[i].Name, multi_ctrs[i].name);
		assert_string_equal(r->Counters[i].Help, multi_ctrs[i].help);
	}
	PdhLinuxFreeCounterSetRegistration(r);
	PdhLinuxFreeCounterSetRegistration(NULL);
}

/*
 * a counter whose set was unregistered after it was added: perflib refuses its spec, the
 * other sets' blocks keep their own counters (a refused spec has no Index)
 */
static void test_set_gone_before_collect(void **state)
{
	static const struct perflib_counter_reg gone_ctrs[] = {
		C(1, PERF_COUNTER_LARGE_RAWCOUNT, NO, "Value"),
	};
	GUID gone = tl_guid(103);
	PDH_HCOUNTER g, s;
	PDH_FMT_COUNTERVALUE v;
	PDH_HQUERY q = open_query();

	(void)state;
	add_set(&gone, "PDH Gone", PERF_COUNTERSET_SINGLE_INSTANCE, gone_ctrs, 1);
	g = add(q, "\\PDH Gone\\Value");
	s = add(q, "\\PDH Single\\Value");
	assert_int_equal(perflib_unregister_counterset(&gone, true), 0);
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_true(fmt_double(s, PDH_FMT_NOSCALE) == 7000000000.0);
	assert_int_not_equal(PdhGetFormattedCounterValue(g, PDH_FMT_DOUBLE, NULL, &v), 0);
	assert_int_equal(PdhCloseQuery(q), 0);
}

static void test_counter_info(void **state)
{
	PDH_HQUERY q = open_query();
	PDH_HCOUNTER c = add(q, "\\PDH Test(a#1)\\Items");
	PDH_COUNTER_INFO_W *iw;
	PDH_COUNTER_INFO_A *ia, exact;
	DWORD size = 0;

	(void)state;
	assert_true(PdhGetCounterInfoW(NULL, 0, NULL, NULL) == PDH_INVALID_HANDLE);
	assert_int_equal(PdhGetCounterInfoW(c, 0, NULL, NULL), PDH_INVALID_ARGUMENT);
	size = sizeof(*iw) - 1;
	assert_int_equal(PdhGetCounterInfoW(c, 0, &size, NULL), PDH_INVALID_ARGUMENT);
	size = 0;
	assert_int_equal(PdhGetCounterInfoW(c, 0, &size, NULL), PDH_MORE_DATA);
	assert_true(size > sizeof(*iw));
	iw = malloc(size);
	assert_int_equal(PdhGetCounterInfoW(c, 0, &size, iw), 0);
	assert_int_equal(iw->dwLength, size);
	assert_int_equal(iw->dwType, PERF_COUNTER_RAWCOUNT);
	assert_int_equal(iw->dwUserData, 7);
	assert_int_equal(iw->dwQueryUserData, 42);
	assert_int_equal(iw->lScale, 0);
	assert_int_equal(iw->dwInstanceIndex, 1);
	assert_null(iw->szMachineName);
	assert_null(iw->szExplainText);
	assert_null(iw->szParentInstance);
	assert_int_equal(iw->szInstanceName[0], u'a');
	assert_int_equal(iw->szCounterName[0], u'I');
	assert_ptr_equal(iw->CounterPath.szObjectName, iw->szObjectName);
	free(iw);
	/* A variant with the help text; the scale factor shows */
	assert_int_equal(PdhSetCounterScaleFactor(c, -5), 0);
	size = 0;
	assert_int_equal(PdhGetCounterInfoA(c, 1, &size, NULL), PDH_MORE_DATA);
	ia = malloc(size);
	assert_int_equal(PdhGetCounterInfoA(c, 1, &size, ia), 0);
	assert_string_equal(ia->szFullPath, "\\PDH Test(a#1)\\Items");
	assert_string_equal(ia->szObjectName, "PDH Test");
	assert_string_equal(ia->szExplainText, "Items help");
	assert_int_equal(ia->lScale, -5);
	free(ia);
	/* exactly the fixed part: success, size unchanged (WT) */
	size = sizeof(exact);
	assert_int_equal(PdhGetCounterInfoA(c, 0, &size, &exact), 0);
	assert_int_equal(size, sizeof(exact));
	assert_int_equal(exact.dwType, PERF_COUNTER_RAWCOUNT);
	assert_int_equal(PdhCloseQuery(q), 0);
}

/* ---- paths --------------------------------------------------------------------------- */

static void test_make_parse(void **state)
{
	PDH_COUNTER_PATH_ELEMENTS_A e = {0};
	PDH_COUNTER_PATH_ELEMENTS_W *pw;
	PDH_COUNTER_PATH_ELEMENTS_A *pa;
	char buf[1024], inst[64], parent[64];
	WCHAR wbuf[256];
	DWORD len = sizeof(buf), idx = 9, il, pl;

	(void)state;
	assert_int_equal(PdhMakeCounterPathA(NULL, NULL, NULL, 0), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhMakeCounterPathA(NULL, NULL, &len, 0), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhMakeCounterPathA(&e, buf, &len, 0), PDH_INVALID_ARGUMENT);
	e.szMachineName = "machine";
	e.szObjectName = "object";
	e.szInstanceName = "instance";
	e.szParentInstance = "parent";
	e.dwInstanceIndex = 1;
	buf[0] = '\0';
	assert_int_equal(PdhMakeCounterPathA(&e, buf, &len, 0), PDH_INVALID_ARGUMENT);
	assert_string_equal(buf, "");
	e.szCounterName = "counter";
	len = sizeof(buf);
	assert_int_equal(PdhMakeCounterPathA(&e, buf, &len, 0), 0);
	assert_string_equal(buf, "\\\\machine\\object(parent/instance#1)\\counter");
	assert_int_equal(len, strlen(buf) + 1);
	e.szParentInstance = NULL;
	len = sizeof(buf);
	assert_int_equal(PdhMakeCounterPathA(&e, buf, &len, 0), 0);
	assert_string_equal(buf, "\\\\machine\\object(instance#1)\\counter");
	e.szInstanceName = NULL;
	len = sizeof(buf);
	assert_int_equal(PdhMakeCounterPathA(&e, buf, &len, 0), 0);
	assert_string_equal(buf, "\\\\machine\\object\\counter");
	e.szMachineName = NULL;
	len = sizeof(buf);
	assert_int_equal(PdhMakeCounterPathA(&e, buf, &len, 0), 0);
	assert_string_equal(buf, "\\object\\counter");
	/* sizing, too small, flags */
	len = 0;
	assert_int_equal(PdhMakeCounterPathA(&e, NULL, &len, 0), PDH_MORE_DATA);
	assert_int_equal(len, 16);
	len = 15;
	assert_int_equal(PdhMakeCounterPathA(&e, buf, &len, 0), PDH_MORE_DATA);
	len = sizeof(buf);
	assert_int_equal(PdhMakeCounterPathA(&e, buf, &len, PDH_PATH_WBEM_RESULT),
			 PDH_INVALID_ARGUMENT);
	e.szObjectName = NULL;
	assert_int_equal(PdhMakeCounterPathA(&e, buf, &len, 0), PDH_INVALID_ARGUMENT);
	/* W, index 0 writes no "#0" */
	{
		PDH_COUNTER_PATH_ELEMENTS_W ew = {0};

		ew.szObjectName = (LPWSTR)u"Obj";
		ew.szInstanceName = (LPWSTR)u"i";
		ew.szCounterName = (LPWSTR)u"C";
		len = 256;
		assert_int_equal(PdhMakeCounterPathW(&ew, wbuf, &len, 0), 0);
		assert_int_equal(len, 10);
		assert_memory_equal(wbuf, u"\\Obj(i)\\C", 10 * 2);
	}
	/* parse: sizing, then strings after the structure */
	len = 0;
	assert_int_equal(PdhParseCounterPathA("\\\\m\\Obj(p/i#3)\\C", NULL, &len, 0),
			 PDH_MORE_DATA);
	pa = malloc(len);
	assert_int_equal(PdhParseCounterPathA("\\\\m\\Obj(p/i#3)\\C", pa, &len, 0), 0);
	assert_string_equal(pa->szMachineName, "\\\\m");
	assert_string_equal(pa->szObjectName, "Obj");
	assert_string_equal(pa->szInstanceName, "i");
	assert_string_equal(pa->szParentInstance, "p");
	assert_string_equal(pa->szCounterName, "C");
	assert_int_equal(pa->dwInstanceIndex, 3);
	free(pa);
	len = 0;
	assert_int_equal(PdhParseCounterPathA("not a path", NULL, &len, 0), PDH_INVALID_PATH);
	assert_int_equal(PdhParseCounterPathA(NULL, NULL, &len, 0), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhParseCounterPathA("\\O\\C", NULL, NULL, 0), PDH_INVALID_ARGUMENT);
	len = 0;
	assert_int_equal(PdhParseCounterPathW(u"\\Obj\\C", NULL, &len, 0), PDH_MORE_DATA);
	pw = malloc(len);
	assert_int_equal(PdhParseCounterPathW(u"\\Obj\\C", pw, &len, 0), 0);
	assert_null(pw->szMachineName);
	assert_null(pw->szInstanceName);
	assert_int_equal(pw->szCounterName[0], u'C');
	free(pw);
	/* instance strings */
	il = sizeof(inst);
	pl = sizeof(parent);
	assert_int_equal(PdhParseInstanceNameA("dog/cat#1", inst, &il, parent, &pl, &idx), 0);
	assert_string_equal(inst, "cat");
	assert_string_equal(parent, "dog");
	assert_int_equal(idx, 1);
	il = sizeof(inst);
	pl = sizeof(parent);
	assert_int_equal(PdhParseInstanceNameA("cat", inst, &il, parent, &pl, NULL), 0);
	assert_string_equal(parent, "");
	il = 0;
	pl = 0;
	assert_int_equal(PdhParseInstanceNameA("dog/cat", NULL, &il, NULL, &pl, NULL),
			 PDH_MORE_DATA);
	assert_int_equal(il, 4);
	assert_int_equal(pl, 4);
	assert_int_equal(PdhParseInstanceNameA("", inst, &il, parent, &pl, NULL),
			 PDH_INVALID_INSTANCE);
	il = 64;
	pl = 64;
	assert_int_equal(
		PdhParseInstanceNameW(u"x#2", (LPWSTR)wbuf, &il, (LPWSTR)wbuf + 64, &pl, &idx), 0);
	assert_int_equal(idx, 2);
	assert_int_equal(il, 2);
}

static void test_validate_expand(void **state)
{
	char list[2048];
	WCHAR wlist[512];
	DWORD len;
	const char *p;

	(void)state;
	assert_int_equal(PdhValidatePathA(NULL), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhValidatePathA(""), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhValidatePathA("\\PDH Single"), PDH_CSTATUS_BAD_COUNTERNAME);
	assert_int_equal(PdhValidatePathA("Value"), PDH_CSTATUS_BAD_COUNTERNAME);
	assert_int_equal(PdhValidatePathA("\\PDH Single\\Nonexistent Counter"),
			 PDH_CSTATUS_NO_COUNTER);
	assert_int_equal(PdhValidatePathA("\\No Such\\Value"), PDH_CSTATUS_NO_OBJECT);
	assert_int_equal(PdhValidatePathA("\\PDH Test(zz)\\Items"), PDH_CSTATUS_NO_INSTANCE);
	assert_int_equal(PdhValidatePathA("\\PDH Test(a#2)\\Items"), PDH_CSTATUS_NO_INSTANCE);
	assert_int_equal(PdhValidatePathA("\\\\far.example\\PDH Single\\Value"),
			 PDH_CSTATUS_NO_MACHINE);
	assert_int_equal(PdhValidatePathA("\\PDH Single\\Value"), 0);
	assert_int_equal(PdhValidatePathA("\\PDH Test(a#1)\\Items"), 0);
	assert_int_equal(PdhValidatePathW(u"\\PDH Test(_Total)\\Items"), 0);
	assert_int_equal(PdhValidatePathExW(NULL, u"\\PDH Single\\Value"), 0);

	/* instance wildcards: duplicates numbered, _Total included */
	len = sizeof(list);
	assert_int_equal(PdhExpandWildCardPathA(NULL, "\\PDH Test(*)\\Items", list, &len, 0), 0);
	/* (test_wildcard_arrays re-created "b": it now comes after the second "a") */
	p = list;
	assert_string_equal(p, "\\PDH Test(a)\\Items");
	p += strlen(p) + 1;
	assert_string_equal(p, "\\PDH Test(a#1)\\Items");
	p += strlen(p) + 1;
	assert_string_equal(p, "\\PDH Test(b)\\Items");
	p += strlen(p) + 1;
	assert_string_equal(p, "\\PDH Test(_Total)\\Items");
	p += strlen(p) + 1;
	assert_string_equal(p, "");
	assert_int_equal(len, (DWORD)(p - list + 1));
	/* counter wildcard: bases are not listed; sizing; too small */
	len = 0;
	assert_int_equal(PdhExpandWildCardPathA(NULL, "\\PDH Test(b)\\*", NULL, &len, 0),
			 PDH_MORE_DATA);
	{
		DWORD need = len;

		len = need - 1;
		assert_int_equal(PdhExpandWildCardPathA(NULL, "\\PDH Test(b)\\*", list, &len, 0),
				 PDH_MORE_DATA);
		assert_int_equal(len, need);
	}
	assert_int_equal(PdhExpandWildCardPathA(NULL, "\\PDH Test(b)\\*", list, &len, 0), 0);
	assert_null(memmem(list, len, "Ratio Base", 10));
	assert_non_null(memmem(list, len, "\\PDH Test(b)\\Ratio", 18));
	/* flags keep the wildcard part */
	len = sizeof(list);
	assert_int_equal(PdhExpandWildCardPathA(NULL, "\\PDH Test(*)\\Items", list, &len,
						PDH_NOEXPANDINSTANCES),
			 0);
	assert_string_equal(list, "\\PDH Test(*)\\Items");
	assert_int_equal(list[strlen(list) + 1], '\0');
	/* partial names, W variant, the old form */
	len = 512;
	assert_int_equal(PdhExpandWildCardPathW(NULL, u"\\PDH Sin*\\Val*", wlist, &len, 0), 0);
	assert_memory_equal(wlist, u"\\PDH Single\\Value", 18 * 2);
	len = sizeof(list);
	assert_int_equal(PdhExpandCounterPathA("\\PDH Single\\Value", list, &len), 0);
	assert_string_equal(list, "\\PDH Single\\Value");
	/* errors */
	len = sizeof(list);
	assert_int_equal(PdhExpandWildCardPathA(NULL, "\\PDH Single(*)\\Value", list, &len, 0),
			 PDH_INVALID_PATH);
	assert_int_equal(PdhExpandWildCardPathA(NULL, "\\Nothing*\\X", list, &len, 0),
			 PDH_CSTATUS_NO_OBJECT);
	assert_int_equal(PdhExpandWildCardPathA(NULL, "\\PDH Test(*)\\Items", list, NULL, 0),
			 PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhExpandWildCardPathA(NULL, NULL, list, &len, 0), PDH_INVALID_ARGUMENT);
}

/* ---- enumeration, names -------------------------------------------------------------- */

static bool multi_has(const char *list, const char *s)
{
	for (; *list; list += strlen(list) + 1)
		if (!strcmp(list, s))
			return true;
	return false;
}

static void test_enum(void **state)
{
	char objs[4096], ctrs[1024], insts[1024], name[256];
	DWORD len = 0, cl = 0, il = 0, idx, idx2;
	WCHAR wname[64];

	(void)state;
	assert_int_equal(PdhEnumObjectsA(NULL, NULL, NULL, &len, PERF_DETAIL_WIZARD, 1),
			 PDH_MORE_DATA);
	assert_true(len > 0 && len <= sizeof(objs));
	assert_int_equal(PdhEnumObjectsA(NULL, NULL, objs, &len, PERF_DETAIL_WIZARD, 0), 0);
	assert_true(multi_has(objs, "PDH Test") && multi_has(objs, "PDH Single"));
	len = sizeof(objs);
	/* detail level below every counter's: nothing */
	assert_int_equal(PdhEnumObjectsA(NULL, NULL, objs, &len, 50, 0), 0);
	assert_false(multi_has(objs, "PDH Test"));
	assert_int_equal(PdhEnumObjectsA(NULL, "\\\\far.example", NULL, &len, 100, 0),
			 PDH_CSTATUS_NO_MACHINE);
	assert_int_equal(PdhEnumObjectsA(NULL, NULL, NULL, NULL, 100, 0), PDH_INVALID_ARGUMENT);
	/* items: counters without bases; instances repeated, no "#n" */
	assert_int_equal(PdhEnumObjectItemsA(NULL, NULL, "PDH Test", NULL, &cl, NULL, &il,
					     PERF_DETAIL_WIZARD, 0),
			 PDH_MORE_DATA);
	assert_int_equal(PdhEnumObjectItemsA(NULL, NULL, "PDH Test", ctrs, &cl, insts, &il,
					     PERF_DETAIL_WIZARD, 0),
			 0);
	assert_true(multi_has(ctrs, "Items") && multi_has(ctrs, "Busy %"));
	assert_false(multi_has(ctrs, "Ratio Base"));
	assert_string_equal(insts, "a");
	assert_true(multi_has(insts, "b") && multi_has(insts + 2, "a"));
	cl = sizeof(ctrs);
	il = sizeof(insts);
	assert_int_equal(PdhEnumObjectItemsA(NULL, NULL, "PDH Single", ctrs, &cl, insts, &il,
					     PERF_DETAIL_WIZARD, 0),
			 0);
	assert_int_equal(il, 0); /* no instances: size 0 */
	assert_string_equal(ctrs, "Value");
	assert_int_equal(PdhEnumObjectItemsA(NULL, NULL, "Nope", ctrs, &cl, insts, &il,
					     PERF_DETAIL_WIZARD, 0),
			 PDH_CSTATUS_NO_OBJECT);
	assert_int_equal(PdhEnumObjectItemsA(NULL, NULL, "PDH Test", ctrs, &cl, insts, &il,
					     PERF_DETAIL_WIZARD, 1),
			 PDH_INVALID_ARGUMENT);
	cl = il = 0;
	assert_int_equal(PdhEnumObjectItemsW(NULL, NULL, u"PDH Test", NULL, &cl, NULL, &il,
					     PERF_DETAIL_WIZARD, 0),
			 PDH_MORE_DATA);
	/* machines */
	len = 0;
	assert_int_equal(PdhEnumMachinesA(NULL, NULL, &len), PDH_MORE_DATA);
	assert_int_equal(PdhEnumMachinesA(NULL, objs, &len), 0);
	assert_true(objs[0] == '\\' && objs[1] == '\\');
	assert_int_equal(PdhConnectMachineA(NULL), 0);
	assert_int_equal(PdhConnectMachineW(u"localhost"), 0);
	assert_int_equal(PdhConnectMachineA("far.example"), PDH_CSTATUS_NO_MACHINE);
	/* name indexes round-trip; the protocol of WT */
	assert_int_equal(PdhLookupPerfIndexByNameA(NULL, NULL, NULL), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhLookupPerfIndexByNameA(NULL, NULL, &idx), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhLookupPerfIndexByNameA(NULL, "Busy %", NULL), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhLookupPerfIndexByNameA(NULL, "No Counter", &idx), PDH_STRING_NOT_FOUND);
	assert_int_equal(PdhLookupPerfIndexByNameA(NULL, "Busy %", &idx), 0);
	assert_int_equal(idx % 2, 0);
	assert_int_equal(PdhLookupPerfIndexByNameW(NULL, u"busy %", &idx2), 0);
	assert_int_equal(idx, idx2);
	assert_int_equal(PdhLookupPerfNameByIndexA(NULL, 0, NULL, NULL), PDH_INVALID_ARGUMENT);
	len = 0;
	assert_int_equal(PdhLookupPerfNameByIndexA(NULL, idx, name, &len), PDH_MORE_DATA);
	assert_int_equal(len, 7);
	len = 1024;
	assert_int_equal(PdhLookupPerfNameByIndexA(NULL, idx, NULL, &len), PDH_INVALID_ARGUMENT);
	len = sizeof(name);
	assert_int_equal(PdhLookupPerfNameByIndexA(NULL, idx, name, &len), 0);
	assert_string_equal(name, "Busy %");
	assert_int_equal(len, 7);
	len = 64;
	assert_int_equal(PdhLookupPerfNameByIndexW(NULL, idx, wname, &len), 0);
	assert_int_equal(len, 7);
	assert_memory_equal(wname, u"Busy %", 14);
	/* version */
	assert_int_equal(PdhGetDllVersion(&idx), 0);
	assert_int_equal(idx, PDH_VERSION);
	assert_int_equal(PdhGetDllVersion(NULL), 0);
}

/* how many names of the MULTI_SZ @list equal @s without case */
static int multi_count_nocase(const char *list, const char *s)
{
	int n = 0;

	for (; *list; list += strlen(list) + 1)
		n += !strcasecmp(list, s);
	return n;
}

/*
 * the lists hold what paths name: counters in registration order, a name once (the first
 * counter of a name is the one paths resolve to, so a listed counter behind a hidden one
 * of its name is left out), an object name once
 */
static void test_enum_names_once(void **state)
{
	static const struct perflib_counter_reg dup_ctrs[] = {
		C(1, PERF_RAW_BASE, NO, "Shadow"),	  C(2, PERF_COUNTER_RAWCOUNT, NO, "Shadow"),
		C(3, PERF_COUNTER_RAWCOUNT, NO, "Twice"), C(4, PERF_COUNTER_RAWCOUNT, NO, "twice"),
		C(5, PERF_COUNTER_RAWCOUNT, NO, "Zeta"),  C(6, PERF_COUNTER_RAWCOUNT, NO, "Alpha"),
	};
	static const struct perflib_counter_reg other_ctrs[] = {
		C(1, PERF_COUNTER_RAWCOUNT, NO, "Other"),
	};
	GUID dups = tl_guid(104), same = tl_guid(105), twin = tl_guid(106);
	char objs[4096], ctrs[256];
	DWORD len = 0, cl = sizeof(ctrs), il = 0;
	PDH_HQUERY q = open_query();
	PDH_HCOUNTER c;

	(void)state;
	add_set(&dups, "PDH Dup Names", PERF_COUNTERSET_SINGLE_INSTANCE, dup_ctrs, 6);
	add_set(&same, "PDH Same", PERF_COUNTERSET_SINGLE_INSTANCE, other_ctrs, 1);
	add_set(&twin, "pdh same", PERF_COUNTERSET_SINGLE_INSTANCE, other_ctrs, 1);
	assert_int_equal(PdhEnumObjectItemsA(NULL, NULL, "PDH Dup Names", ctrs, &cl, NULL, &il,
					     PERF_DETAIL_WIZARD, 0),
			 0);
	assert_memory_equal(ctrs, "Twice\0Zeta\0Alpha\0", 18);
	assert_int_equal(cl, 18);
	assert_int_equal(il, 0);
	/* what is listed resolves; the shadowed name does not */
	assert_int_equal(PdhAddCounterA(q, "\\PDH Dup Names\\twice", 0, &c), 0);
	assert_int_not_equal(PdhAddCounterA(q, "\\PDH Dup Names\\Shadow", 0, &c), 0);
	/* two sets named alike: one object */
	assert_int_equal(PdhEnumObjectsA(NULL, NULL, NULL, &len, PERF_DETAIL_WIZARD, 1),
			 PDH_MORE_DATA);
	assert_true(len <= sizeof(objs));
	assert_int_equal(PdhEnumObjectsA(NULL, NULL, objs, &len, PERF_DETAIL_WIZARD, 0), 0);
	assert_int_equal(multi_count_nocase(objs, "PDH Same"), 1);
	assert_int_equal(multi_count_nocase(objs, "PDH Dup Names"), 1);
	assert_int_equal(PdhCloseQuery(q), 0);
	assert_int_equal(perflib_unregister_counterset(&dups, true), 0);
	assert_int_equal(perflib_unregister_counterset(&same, true), 0);
	assert_int_equal(perflib_unregister_counterset(&twin, true), 0);
}

/* ---- logs ---------------------------------------------------------------------------- */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);

	assert_non_null(f);
	assert_true(fread(buf, 1, 65535, f) > 0);
	fclose(f);
	return buf;
}

static void log_roundtrip(DWORD type, const char *name)
{
	PDH_HQUERY q = open_query(), rq;
	PDH_HCOUNTER c, rc, rall;
	PDH_HLOG log, src;
	PDH_FMT_COUNTERVALUE v;
	PDH_TIME_INFO ti;
	DWORD t = type, n, size;
	LONGLONG fsize = 0;
	char path[128], *text, sep = type == PDH_LOG_TYPE_TSV ? '\t' : ',', hdr[256];
	char list[256], text2[128];
	int i;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	add(q, "\\PDH Test(*)\\Items");
	add(q, "\\PDH Single\\Value");
	/* the header names the zone of the time stamps: this machine's, when the log opens */
	setenv("TZ", "IST-5:30", 1);
	assert_int_equal(PdhOpenLogA(path, PDH_LOG_WRITE_ACCESS | PDH_LOG_CREATE_ALWAYS, &t, q, 0,
				     NULL, &log),
			 0);
	for (i = 0; i < 3; i++) {
		assert_int_equal(PerfSetULongCounterValue(prov, inst_a, 1, 100 + (ULONG)i), 0);
		assert_int_equal(PdhUpdateLogA(log, NULL), 0);
	}
	assert_int_equal(PdhUpdateLogA(log, ""), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhGetLogFileSize(log, &fsize), 0);
	assert_true(fsize > 100);
	assert_int_equal(PdhCloseLog(log, PDH_FLAGS_CLOSE_QUERY), 0);
	assert_int_equal(PdhCloseQuery(q), PDH_INVALID_HANDLE); /* closed with the log */
	assert_int_equal(PdhCloseLog(log, 0), PDH_INVALID_HANDLE);
	unsetenv("TZ");
	tzset();
	/*
	 * PDH's text: the header with the zone and its bias (minutes from local time to UTC,
	 * pdh.md 7.2), columns per instance, CRLF, six decimals
	 */
	text = slurp(path);
	snprintf(hdr, sizeof(hdr), "\"(PDH-%s 4.0) (IST)(-330)\"%c\"\\\\",
		 type == PDH_LOG_TYPE_TSV ? "TSV" : "CSV", sep);
	assert_int_equal(strncmp(text, hdr, strlen(hdr)), 0);
	assert_non_null(strstr(text, "\\PDH Test(a#1)\\Items\""));
	assert_non_null(strstr(text, "\\PDH Test(_Total)\\Items\""));
	assert_non_null(strstr(text, "\\PDH Single\\Value\"\r\n"));
	snprintf(text2, sizeof(text2), "\"102.000000\"%c\"30.000000\"%c\"20.000000\"", sep, sep);
	assert_non_null(strstr(text, text2));
	assert_non_null(strstr(text, "\"7000000000.000000\"\r\n"));
	free(text);

	/* replay: bind + open query on it; each collection reads the next record */
	snprintf(list, sizeof(list), "%s%c", path, '\0');
	assert_int_equal(PdhBindInputDataSourceA(&src, list), 0);
	assert_int_equal(PdhOpenQueryH(src, 0, &rq), 0);
	assert_false(PdhIsRealTimeQuery(rq));
	assert_int_equal(PdhAddCounterA(rq, "\\PDH Test(a)\\Items", 0, &rc), 0);
	assert_int_equal(PdhAddCounterA(rq, "\\PDH Test(*)\\Items", 0, &rall), 0);
	assert_int_equal(PdhAddCounterA(rq, "\\PDH Test(a)\\Nope", 0, &c), PDH_CSTATUS_NO_COUNTER);
	assert_int_equal(PdhAddCounterA(rq, "\\Nope(a)\\Items", 0, &c), PDH_CSTATUS_NO_OBJECT);
	for (i = 0; i < 3; i++) {
		assert_int_equal(PdhCollectQueryData(rq), 0);
		assert_int_equal(PdhGetFormattedCounterValue(rc, PDH_FMT_LONG, NULL, &v), 0);
		assert_int_equal(v.longValue, 100 + i);
	}
	size = 0;
	assert_int_equal(PdhGetFormattedCounterArrayA(rall, PDH_FMT_LONG, &size, &n, NULL),
			 PDH_MORE_DATA);
	assert_int_equal(n, 4);
	assert_int_equal(PdhCollectQueryData(rq), PDH_NO_MORE_DATA);
	/* the time range */
	size = 0;
	assert_int_equal(PdhGetDataSourceTimeRangeH(src, &n, NULL, &size), PDH_MORE_DATA);
	assert_int_equal(size, sizeof(ti));
	assert_int_equal(PdhGetDataSourceTimeRangeH(src, &n, &ti, &size), 0);
	assert_int_equal(ti.SampleCount, 3);
	assert_int_equal(n, 1);
	assert_true(ti.EndTime >= ti.StartTime && ti.StartTime > 0);
	assert_int_equal(PdhGetDataSourceTimeRangeA(path, &n, &ti, &size), 0);
	assert_int_equal(ti.SampleCount, 3);
	/* a time range on the query restarts the replay inside it */
	assert_int_equal(PdhSetQueryTimeRange(rq, &ti), 0);
	assert_int_equal(PdhCollectQueryData(rq), 0);
	assert_int_equal(PdhGetFormattedCounterValue(rc, PDH_FMT_LONG, NULL, &v), 0);
	assert_int_equal(v.longValue, 100);
	/* what the log holds: expansion and objects */
	size = sizeof(list);
	assert_int_equal(PdhExpandWildCardPathHA(src, "\\PDH Single\\*", list, &size, 0), 0);
	assert_non_null(strstr(list, "\\PDH Single\\Value"));
	size = sizeof(list);
	assert_int_equal(PdhEnumObjectsHA(src, NULL, list, &size, PERF_DETAIL_WIZARD, 0), 0);
	assert_true(multi_has(list, "PDH Test") && multi_has(list, "PDH Single"));
	assert_int_equal(PdhValidatePathExA(src, "\\PDH Single\\Value"), 0);
	assert_int_equal(PdhValidatePathExA(src, "\\PDH Single\\Nope"), PDH_CSTATUS_NO_COUNTER);
	assert_int_equal(PdhCloseQuery(rq), 0);
	assert_int_equal(PdhCloseLog(src, 0), 0);
	/* PdhOpenQuery with the file name */
	assert_int_equal(PdhOpenQueryA(path, 0, &rq), 0);
	assert_int_equal(PdhAddCounterA(rq, "\\PDH Single\\Value", 0, &rc), 0);
	/* a log written from a replay keeps the zone of the stamps it copies (relog) */
	snprintf(list, sizeof(list), "%s.copy", path);
	setenv("TZ", "UTC", 1);
	assert_int_equal(PdhOpenLogA(list, PDH_LOG_WRITE_ACCESS | PDH_LOG_CREATE_ALWAYS, &t, rq, 0,
				     NULL, &log),
			 0);
	unsetenv("TZ");
	tzset();
	assert_int_equal(PdhUpdateLogA(log, NULL), 0);
	assert_int_equal(PdhCloseLog(log, 0), 0);
	text = slurp(list);
	assert_int_equal(strncmp(text, hdr, strlen(hdr)), 0);
	free(text);
	assert_int_equal(PdhGetFormattedCounterValue(rc, PDH_FMT_LARGE, NULL, &v), 0);
	assert_int_equal(v.largeValue, 7000000000ll);
	assert_int_equal(PdhCloseQuery(rq), 0);
	/* opened for reading: the type is detected */
	t = PDH_LOG_TYPE_UNDEFINED;
	assert_int_equal(PdhOpenLogA(path, PDH_LOG_READ_ACCESS | PDH_LOG_OPEN_EXISTING, &t, NULL, 0,
				     NULL, &log),
			 0);
	assert_int_equal(t, type);
	assert_int_equal(PdhCloseLog(log, 0), 0);
	assert_int_equal(PerfSetULongCounterValue(prov, inst_a, 1, 10), 0);
}

/*
 * "CON", the console device: the log on standard output, which stays open; written as
 * typeperf writes it (PDH_LINUX_LOG_NO_ZONE: no time zone in the header) and read back
 */
static void test_log_console(void **state)
{
	char file[128], text[512], want[160];
	PDH_HLOG log = NULL;
	PDH_HQUERY q;
	PDH_TIME_INFO ti;
	DWORD t = PDH_LOG_TYPE_TSV, entries = 0, size = sizeof(ti);
	FILE *f;
	size_t n;
	int saved, fd;

	(void)state;
	snprintf(file, sizeof(file), "%s/console.tsv", dir);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	assert_true(saved >= 0);
	assert_int_equal(dup2(fd, STDOUT_FILENO), STDOUT_FILENO);
	close(fd);
	q = open_query();
	/* the computer as the path names it appears in the header */
	add(q, "\\\\localhost\\PDH Single\\Value");
	assert_int_equal(
		PdhOpenLogA("con",
			    PDH_LOG_WRITE_ACCESS | PDH_LOG_CREATE_ALWAYS | PDH_LINUX_LOG_NO_ZONE,
			    &t, q, 0, NULL, &log),
		0);
	assert_int_equal(PdhUpdateLogA(log, NULL), 0);
	assert_int_equal(PdhCloseLog(log, PDH_FLAGS_CLOSE_QUERY), 0);
	/* standard output is still usable */
	assert_true(fputs("after\n", stdout) >= 0);
	assert_int_equal(fflush(stdout), 0);
	assert_int_equal(dup2(saved, STDOUT_FILENO), STDOUT_FILENO);
	close(saved);
	f = fopen(file, "r");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	snprintf(want, sizeof(want), "\"(PDH-TSV 4.0)\"\t\"\\\\localhost\\PDH Single\\Value\"\r\n");
	assert_memory_equal(text, want, strlen(want));
	assert_non_null(strstr(text, "\t\"7000000000.000000\"\r\nafter\n"));
	/* a reader takes typeperf's header too (and skips the line that is no record) */
	n = strlen(file);
	file[n + 1] = '\0';
	assert_int_equal(PdhBindInputDataSourceA(&log, file), 0);
	assert_int_equal(PdhGetDataSourceTimeRangeH(log, &entries, &ti, &size), 0);
	assert_int_equal(ti.SampleCount, 1);
	assert_int_equal(PdhCloseLog(log, 0), 0);
}

static void test_logs(void **state)
{
	PDH_HQUERY q;
	PDH_HLOG log = NULL;
	DWORD t;
	char path[128];
	WCHAR wpath[128];
	size_t i;

	(void)state;
	log_roundtrip(PDH_LOG_TYPE_CSV, "a.csv");
	log_roundtrip(PDH_LOG_TYPE_TSV, "a.tsv");
	q = open_query();
	add(q, "\\PDH Single\\Value");
	snprintf(path, sizeof(path), "%s/a.csv", dir);
	t = PDH_LOG_TYPE_CSV;
	assert_int_equal(
		PdhOpenLogA(path, PDH_LOG_WRITE_ACCESS | PDH_LOG_CREATE_NEW, &t, q, 0, NULL, &log),
		PDH_FILE_ALREADY_EXISTS);
	t = PDH_LOG_TYPE_UNDEFINED;
	assert_int_equal(PdhOpenLogA(path, PDH_LOG_WRITE_ACCESS | PDH_LOG_CREATE_ALWAYS, &t, q, 0,
				     NULL, &log),
			 PDH_INVALID_ARGUMENT);
	t = PDH_LOG_TYPE_BINARY;
	assert_int_equal(PdhOpenLogA(path, PDH_LOG_WRITE_ACCESS | PDH_LOG_CREATE_ALWAYS, &t, q, 0,
				     NULL, &log),
			 PDH_LOG_TYPE_NOT_FOUND);
	t = PDH_LOG_TYPE_CSV;
	assert_int_equal(PdhOpenLogA(path, PDH_LOG_WRITE_ACCESS | PDH_LOG_CREATE_ALWAYS, &t, NULL,
				     0, NULL, &log),
			 PDH_INVALID_HANDLE);
	assert_int_equal(PdhOpenLogA("/nonexistent-dir/x.csv",
				     PDH_LOG_WRITE_ACCESS | PDH_LOG_CREATE_ALWAYS, &t, q, 0, NULL,
				     &log),
			 PDH_LOG_FILE_CREATE_ERROR);
	assert_int_equal(PdhOpenLogA(path, PDH_LOG_READ_ACCESS, &t, q, 0, NULL, &log),
			 PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhOpenLogA(path, PDH_LOG_READ_ACCESS, NULL, NULL, 0, NULL, &log),
			 PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhBindInputDataSourceA(&log, "/nonexistent.csv\0"), PDH_FILE_NOT_FOUND);
	assert_int_equal(PdhBindInputDataSourceA(&log, "a\0b\0"), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhBindInputDataSourceA(NULL, "a\0"), PDH_INVALID_ARGUMENT);
	assert_int_equal(PdhBindInputDataSourceA(&log, NULL), 0);
	assert_null(log); /* real time */
	assert_int_equal(PdhBindInputDataSourceA(&log, "/etc/hostname\0"),
			 PDH_UNABLE_READ_LOG_HEADER);
	assert_int_equal(PdhUpdateLogA(NULL, NULL), PDH_INVALID_HANDLE);
	assert_int_equal(PdhUpdateLogA(q, NULL), PDH_INVALID_HANDLE);
	assert_int_equal(PdhCloseLog(q, 0), PDH_INVALID_HANDLE);
	assert_int_equal(PdhGetDataSourceTimeRangeH(NULL, &t, NULL, &t),
			 PDH_DATA_SOURCE_IS_REAL_TIME);
	/* W variants */
	snprintf(path, sizeof(path), "%s/w.csv", dir);
	for (i = 0; i <= strlen(path); i++)
		wpath[i] = (WCHAR)path[i];
	t = PDH_LOG_TYPE_CSV;
	assert_int_equal(PdhOpenLogW(wpath, PDH_LOG_WRITE_ACCESS | PDH_LOG_CREATE_ALWAYS, &t, q, 0,
				     NULL, &log),
			 0);
	assert_int_equal(PdhUpdateLogW(log, u"note"), 0);
	assert_int_equal(PdhUpdateLogFileCatalog(log), 0);
	assert_int_equal(PdhCloseLog(log, 0), 0);
	wpath[strlen(path) + 1] = 0;
	assert_int_equal(PdhBindInputDataSourceW(&log, wpath), 0);
	assert_int_equal(PdhCloseLog(log, 0), 0);
	assert_int_equal(PdhCloseQuery(q), 0);
}

/* ---- background collection and events ------------------------------------------------ */

static void test_collect_ex(void **state)
{
	PDH_HQUERY q = open_query();
	PDH_HCOUNTER c = add(q, "\\PDH Single\\Value");
	PDH_FMT_COUNTERVALUE v;
	HANDLE ev = CreateEventW(NULL, 0, 0, NULL);

	(void)state;
	assert_non_null(ev);
	assert_int_equal(WaitForSingleObject(ev, 10), WAIT_TIMEOUT);
	assert_true(SetEvent(ev));
	assert_int_equal(WaitForSingleObject(ev, 0), WAIT_OBJECT_0);
	assert_int_equal(WaitForSingleObject(ev, 0), WAIT_TIMEOUT); /* auto-reset */
	assert_int_equal(WaitForSingleObject(NULL, 0), WAIT_FAILED);
	assert_int_equal(PdhCollectQueryDataEx(q, 1, q), PDH_INVALID_HANDLE);
	assert_int_equal(PdhCollectQueryDataEx(q, 1, ev), 0);
	assert_int_equal(WaitForSingleObject(ev, 5000), WAIT_OBJECT_0);
	assert_int_equal(PdhGetFormattedCounterValue(c, PDH_FMT_LARGE, NULL, &v), 0);
	assert_int_equal(v.largeValue, 7000000000ll);
	/* signalled again one interval later; foreground collections meanwhile are fine */
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_int_equal(WaitForSingleObject(ev, 5000), WAIT_OBJECT_0);
	/* a NULL event is accepted (WT); closing the query stops the thread */
	assert_int_equal(PdhCollectQueryDataEx(q, 1, NULL), 0);
	assert_int_equal(PdhCloseQuery(q), 0);
	assert_true(ResetEvent(ev));
	assert_true(CloseHandle(ev));
	assert_false(CloseHandle(ev));
	assert_false(SetEvent(ev));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_errors),
		cmocka_unit_test(test_add_errors),
		cmocka_unit_test(test_raw_and_missing),
		cmocka_unit_test(test_two_samples),
		cmocka_unit_test(test_fraction_scale_stats),
		cmocka_unit_test(test_wildcard_arrays),
		cmocka_unit_test(test_rates_across_churn),
		cmocka_unit_test(test_rate_across_instance_ids),
		cmocka_unit_test(test_fast_arrays_agree),
		cmocka_unit_test(test_items_match_query_data),
		cmocka_unit_test(test_whole_sets),
		cmocka_unit_test(test_linux_registration),
		cmocka_unit_test(test_set_gone_before_collect),
		cmocka_unit_test(test_counter_info),
		cmocka_unit_test(test_make_parse),
		cmocka_unit_test(test_validate_expand),
		cmocka_unit_test(test_enum),
		cmocka_unit_test(test_enum_names_once),
		cmocka_unit_test(test_logs),
		cmocka_unit_test(test_log_console),
		cmocka_unit_test(test_collect_ex),
	};

	tl_require_bpf();
	return cmocka_run_group_tests(tests, setup, teardown);
}

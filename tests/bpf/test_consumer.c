// SPDX-License-Identifier: MIT
/*
 * test_consumer.c - the consumer modules (enumerate.c, aggregate.c, query*.c, reginfo.c)
 * beyond the public conformance tests: registration info of a set registered with names,
 * aggregation with real values (global, multiple + _Total, history, by name), garbage in
 * the maps, a counter set re-registered under a consumer, churn, ControlCallback
 * notifications, by-reference counters, and a consumer without privileges.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "internal.h"
#include "testlib.h"
#include "../helpers/prov_util.h"
#include "../helpers/cons_util.h"

#define NOBODY 65534
#define NOGROUP 65534
#define MAXC 8

/* a provider: counter set, counters, instances and their values */
struct kid {
	GUID set;
	ULONG instance_type;
	unsigned int nc;
	ULONG ids[MAXC], types[MAXC];
	ULONGLONG attribs[MAXC];
	unsigned int ni;
	const char *names[6];
	ULONG inst_ids[6];
	ULONGLONG vals[6][MAXC];
	PERFLIBREQUEST cb;
	int ready[2], done[2]; /* child -> parent, parent -> child */
	HANDLE h;	       /* in the process that runs it */
	PPERF_COUNTERSET_INSTANCE inst[6];
};

static ULONG kid_register(struct kid *k)
{
	struct prov_tmpl t;
	GUID pg = prov_provider_guid();
	unsigned int i;
	ULONG st;

	prov_tmpl_init(&t, k->set, k->instance_type);
	for (i = 0; i < k->nc; i++)
		prov_tmpl_add(&t, k->ids[i], k->types[i], k->attribs[i]);
	st = PerfStartProvider(&pg, k->cb, &k->h);
	if (!st)
		st = prov_tmpl_register(k->h, &t);
	return st;
}

static ULONG kid_set(struct kid *k, unsigned int i, unsigned int c, ULONGLONG v)
{
	if (k->attribs[c] & PERF_ATTRIB_BY_REFERENCE)
		return 0;
	if ((k->types[c] & 0x300) == PERF_SIZE_LARGE)
		return PerfSetULongLongCounterValue(k->h, k->inst[i], k->ids[c], v);
	return PerfSetULongCounterValue(k->h, k->inst[i], k->ids[c], (ULONG)v);
}

/* start the provider of @k in this process, with its instances and values */
static ULONG kid_start(struct kid *k)
{
	unsigned int i, c;
	ULONG st = kid_register(k);

	for (i = 0; !st && i < k->ni; i++) {
		k->inst[i] = PerfCreateInstance(k->h, &k->set, cons_w(k->names[i]), k->inst_ids[i]);
		if (!k->inst[i])
			return GetLastError() ? GetLastError() : 1;
		for (c = 0; !st && c < k->nc; c++)
			st = kid_set(k, i, c, k->vals[i][c]);
	}
	return st;
}

static int kid_main(void *arg)
{
	struct kid *k = arg;

	if (kid_start(k))
		return 10;
	if (tl_signal(k->ready[1]) || tl_await(k->done[0], 30000))
		return 11;
	return PerfStopProvider(k->h) ? 12 : 0;
}

static pid_t kid_spawn(struct kid *k)
{
	pid_t pid;

	assert_int_equal(tl_pipe(k->ready), 0);
	assert_int_equal(tl_pipe(k->done), 0);
	pid = tl_fork(kid_main, k);
	assert_true(pid > 0);
	assert_int_equal(tl_await(k->ready[0], 10000), 0);
	return pid;
}

static void kid_finish(struct kid *k, pid_t pid)
{
	assert_int_equal(tl_signal(k->done[1]), 0);
	assert_int_equal(tl_wait(pid, 10000), 0);
	close(k->ready[0]);
	close(k->ready[1]);
	close(k->done[0]);
	close(k->done[1]);
}

static void kid_counters(struct kid *k, unsigned int nc, const ULONG *ids, const ULONG *types)
{
	unsigned int i;

	k->nc = nc;
	for (i = 0; i < nc; i++) {
		k->ids[i] = ids[i];
		k->types[i] = types[i];
	}
}

/* register @k's counter set with names and aggregate functions (as lodctr does) */
static void register_set(const struct kid *k, const ULONG *aggregates)
{
	struct perflib_counter_reg regs[MAXC];
	struct perflib_counterset_reg reg;
	static char names[MAXC][16];
	unsigned int i;

	memset(&reg, 0, sizeof(reg));
	memset(regs, 0, sizeof(regs));
	reg.provider_guid = prov_provider_guid();
	reg.counterset_guid = k->set;
	reg.instance_type = k->instance_type;
	reg.provider_name = "Test Provider";
	reg.name = "Aggregates";
	reg.help = "Aggregation test set";
	reg.nr_counters = k->nc;
	reg.counters = regs;
	for (i = 0; i < k->nc; i++) {
		snprintf(names[i], sizeof(names[i]), "c%u", k->ids[i]);
		regs[i].id = k->ids[i];
		regs[i].type = k->types[i];
		regs[i].attrib = k->attribs[i];
		regs[i].base_id = regs[i].perf_time_id = regs[i].perf_freq_id = 0xFFFFFFFF;
		regs[i].multi_id = 0xFFFFFFFF;
		regs[i].aggregate = aggregates ? aggregates[i] : PERF_AGGREGATE_UNDEFINED;
		regs[i].name = names[i];
	}
	assert_int_equal(perflib_register_counterset(&reg, NULL), 0);
}

static HANDLE open_query(void)
{
	HANDLE q = NULL;

	assert_int_equal(PerfOpenQueryHandle(NULL, &q), ERROR_SUCCESS);
	return q;
}

/* the rows of header @index of a fresh PerfQueryCounterData of @q */
static int query_rows(HANDLE q, ULONG index, struct cons_row *rows, int max, int *ret_nc)
{
	BYTE *buf;
	DWORD len;
	int nr = -1;

	assert_int_equal(cons_data(q, &buf, &len), 0);
	assert_int_equal(cons_multi(cons_header(buf, index), rows, max, &nr, ret_nc), 0);
	free(buf);
	return nr;
}

/* ---- registration info of a registered set (spec 2.9, 3.15-3.18, 8.5) -------------------- */

static void test_reginfo_registered(void **state)
{
	struct perflib_counter_reg regs[3] = {
		{.id = 1,
		 .type = PERF_RAW_FRACTION,
		 .attrib = PERF_ATTRIB_NO_GROUP_SEPARATOR,
		 .detail_level = PERF_DETAIL_ADVANCED,
		 .scale = -1,
		 .base_id = 2,
		 .perf_time_id = 5,
		 .perf_freq_id = 6,
		 .multi_id = 7,
		 .aggregate = PERF_AGGREGATE_AVG,
		 .name = "Reads",
		 .help = "Reads per second"},
		{.id = 2,
		 .type = PERF_RAW_BASE,
		 .attrib = PERF_ATTRIB_NO_DISPLAYABLE,
		 .base_id = 0xFFFFFFFF,
		 .perf_time_id = 0xFFFFFFFF,
		 .perf_freq_id = 0xFFFFFFFF,
		 .multi_id = 0xFFFFFFFF,
		 .aggregate = PERF_AGGREGATE_TOTAL},
		{.id = 40,
		 .type = PERF_COUNTER_LARGE_RAWCOUNT,
		 .base_id = 0xFFFFFFFF,
		 .perf_time_id = 0xFFFFFFFF,
		 .perf_freq_id = 0xFFFFFFFF,
		 .multi_id = 0xFFFFFFFF,
		 .aggregate = PERF_AGGREGATE_MAX,
		 .name = "Größe",
		 .help = NULL},
	};
	struct perflib_counterset_reg reg = {
		.provider_guid = prov_provider_guid(),
		.counterset_guid = prov_guid(),
		.instance_type = PERF_COUNTERSET_MULTI_AGGREGATE,
		.detail_level = PERF_DETAIL_ADVANCED,
		.provider_name = "Demo Provider",
		.name = "Demo Set",
		.help = "Demo help",
		.nr_counters = 3,
		.counters = regs,
	};
	/* spec 8.5 shape: header, 3 counter headers, "Reads", absent, "Größe" */
	static const BYTE names_expect[] = {
		0x38, 0, 0,   0, 3,    0,    0,	   0,	 /* dwSize 56, dwCounters 3 */
		1,    0, 0,   0, 0x20, 0,    0,	   0,	 /* counter 1 -> 32 */
		2,    0, 0,   0, 0xff, 0xff, 0xff, 0xff, /* counter 2: no name */
		40,   0, 0,   0, 0x2c, 0,    0,	   0,	 /* counter 40 -> 44 */
		'R',  0, 'e', 0, 'a',  0,    'd',  0,	 's', 0, 0, 0,
		'G',  0, 'r', 0, 0xf6, 0,    0xdf, 0,	 'e', 0, 0, 0,
	};
	const PERF_COUNTERSET_REG_INFO *ri;
	const PERF_COUNTER_REG_INFO *ci;
	const PERF_STRING_COUNTER_HEADER *sc;
	GUID g = reg.counterset_guid;
	BYTE buf[512];
	DWORD n;

	(void)state;
	assert_int_equal(perflib_register_counterset(&reg, NULL), 0);
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, &g, PERF_REG_COUNTERSET_STRUCT,
							     0, buf, sizeof(buf), &n),
			 0);
	assert_int_equal(n, 32 + 3 * 48);
	ri = (const PERF_COUNTERSET_REG_INFO *)buf;
	assert_int_equal(ri->InstanceType, PERF_COUNTERSET_MULTI_AGGREGATE);
	assert_int_equal(ri->DetailLevel, PERF_DETAIL_ADVANCED);
	assert_int_equal(ri->CounterSetType, 0);
	ci = (const PERF_COUNTER_REG_INFO *)(ri + 1);
	assert_int_equal(ci[0].CounterId, 1);
	assert_int_equal(ci[0].Type, PERF_RAW_FRACTION);
	assert_int_equal(ci[0].Attrib, PERF_ATTRIB_NO_GROUP_SEPARATOR);
	assert_int_equal(ci[0].DetailLevel, PERF_DETAIL_ADVANCED);
	assert_int_equal(ci[0].DefaultScale, -1);
	assert_int_equal(ci[0].BaseCounterId, 2);
	assert_int_equal(ci[0].PerfTimeId, 5);
	assert_int_equal(ci[0].PerfFreqId, 6);
	assert_int_equal(ci[0].MultiId, 7);
	assert_int_equal(ci[0].AggregateFunc, PERF_AGGREGATE_AVG);
	assert_int_equal(ci[0].Reserved, 0);
	assert_int_equal(ci[1].Attrib, PERF_ATTRIB_NO_DISPLAYABLE);
	assert_int_equal(ci[1].AggregateFunc, PERF_AGGREGATE_TOTAL);
	assert_int_equal(ci[1].BaseCounterId, 0xFFFFFFFF);
	assert_int_equal(ci[2].CounterId, 40);
	assert_int_equal(ci[2].AggregateFunc, PERF_AGGREGATE_MAX);

	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, &g,
							     PERF_REG_COUNTER_NAME_STRINGS, 0x409,
							     buf, sizeof(buf), &n),
			 0);
	assert_int_equal(n, sizeof(names_expect));
	assert_memory_equal(buf, names_expect, sizeof(names_expect));
	/* english names: the same (strings are stored once) */
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(
				 NULL, &g, PERF_REG_COUNTER_ENGLISH_NAMES, 0, buf, sizeof(buf), &n),
			 0);
	assert_memory_equal(buf, names_expect, sizeof(names_expect));
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(
				 NULL, &g, PERF_REG_COUNTER_HELP_STRINGS, 0, buf, sizeof(buf), &n),
			 0);
	sc = (const PERF_STRING_COUNTER_HEADER *)(buf + 8);
	assert_int_equal(n, 32 + 17 * 2);
	assert_int_equal(sc[0].dwOffset, 32);
	assert_true(cons_weq((const WCHAR *)(buf + 32), 16, "Reads per second"));
	assert_int_equal(sc[1].dwOffset, 0xFFFFFFFF);
	assert_int_equal(sc[2].dwOffset, 0xFFFFFFFF);
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, &g,
							     PERF_REG_COUNTERSET_NAME_STRING, 7,
							     buf, sizeof(buf), &n),
			 0);
	assert_int_equal(n, 18);
	assert_true(cons_weq((const WCHAR *)buf, 8, "Demo Set"));
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, &g,
							     PERF_REG_COUNTERSET_ENGLISH_NAME, 0,
							     buf, sizeof(buf), &n),
			 0);
	assert_true(cons_weq((const WCHAR *)buf, 8, "Demo Set"));
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, &g,
							     PERF_REG_COUNTERSET_HELP_STRING, 0,
							     buf, sizeof(buf), &n),
			 0);
	assert_true(cons_weq((const WCHAR *)buf, 9, "Demo help"));
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, &g, PERF_REG_PROVIDER_NAME, 0,
							     buf, sizeof(buf), &n),
			 0);
	assert_int_equal(n, 28);
	assert_true(cons_weq((const WCHAR *)buf, 13, "Demo Provider"));
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, &g, PERF_REG_COUNTER_STRUCT, 2,
							     buf, sizeof(buf), &n),
			 0);
	assert_int_equal(n, 48);
	assert_int_equal(((PERF_COUNTER_REG_INFO *)buf)->Type, PERF_RAW_BASE);
}

/* ---- aggregation (spec 2.1, 2.5; tools.md 1.5) --------------------------------------------- */

static const ULONG agg_ids[] = {1, 2, 3, 4, 5};
static const ULONG agg_types[] = {PERF_COUNTER_RAWCOUNT, PERF_COUNTER_LARGE_RAWCOUNT,
				  PERF_COUNTER_RAWCOUNT, PERF_COUNTER_LARGE_RAWCOUNT,
				  PERF_COUNTER_RAWCOUNT};
static const ULONG agg_funcs[] = {PERF_AGGREGATE_TOTAL, PERF_AGGREGATE_AVG, PERF_AGGREGATE_MIN,
				  PERF_AGGREGATE_MAX, PERF_AGGREGATE_UNDEFINED};

static void test_aggregate_multi(void **state)
{
	struct kid k = {.set = prov_guid(),
			.instance_type = PERF_COUNTERSET_MULTI_AGGREGATE,
			.ni = 4,
			.names = {"a", "b", "c", "_Total"},
			.inst_ids = {1, 2, 3, 9},
			.vals = {{10, 100, 7, 1000, 1},
				 {20, 201, 3, 5, 2},
				 {0xFFFFFFF0, 300, 9, 77, 3},
				 {1, 1, 1, 1, 1}}};
	struct cons_row rows[8];
	struct cons_inst in[8];
	HANDLE q = open_query();
	BYTE *buf;
	DWORD len;
	int nr, nc;

	(void)state;
	kid_counters(&k, 5, agg_ids, agg_types);
	register_set(&k, agg_funcs);
	assert_int_equal(kid_start(&k), 0);
	/* the provider's own "_Total" is hidden: the computed one takes the name */
	assert_int_equal(cons_enum(&k.set, &buf, &len), 0);
	assert_int_equal(cons_instances(buf, len, in, 8), 4);
	assert_true(cons_weq(in[3].name, in[3].len, "_Total"));
	assert_int_equal(in[3].id, 0);
	free(buf);
	assert_int_equal(cons_add(q, &k.set, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	assert_int_equal(cons_add(q, &k.set, 1, CONS_ANY_INSTANCE, "_Total"), 0);
	nr = query_rows(q, 0, rows, 8, &nc);
	assert_int_equal(nr, 4);
	assert_int_equal(nc, 5);
	assert_string_equal(rows[0].name, "a");
	assert_int_equal(rows[2].v[0], 0xFFFFFFF0);
	assert_string_equal(rows[3].name, "_Total");
	assert_int_equal(rows[3].id, 0);
	assert_int_equal(rows[3].v[0], 14);   /* TOTAL of a DWORD wraps: 30 + 0xFFFFFFF0 */
	assert_int_equal(rows[3].v[1], 200);  /* AVG (100 + 201 + 300) / 3, truncated */
	assert_int_equal(rows[3].v[2], 3);    /* MIN */
	assert_int_equal(rows[3].v[3], 1000); /* MAX */
	assert_int_equal(rows[3].v[4], 6);    /* UNDEFINED sums */
	nr = query_rows(q, 1, rows, 8, &nc);
	assert_int_equal(nr, 1);
	assert_int_equal(rows[0].v[0], 14);
	/* values move, the total follows; no instance left, no _Total */
	assert_int_equal(PerfIncrementULongCounterValue(k.h, k.inst[0], 1, 6), 0);
	nr = query_rows(q, 1, rows, 8, &nc);
	assert_int_equal(rows[0].v[0], 20);
	assert_int_equal(PerfStopProvider(k.h), 0);
	assert_int_equal(cons_enum(&k.set, &buf, &len), 0);
	assert_int_equal(len, 0);
	free(buf);
	assert_int_equal(query_rows(q, 0, rows, 8, &nc), 0);
	assert_int_equal(PerfCloseQueryHandle(q), 0);
}

static void test_aggregate_single(void **state)
{
	struct kid parent = {.set = prov_guid(),
			     .instance_type = PERF_COUNTERSET_SINGLE_AGGREGATE,
			     .ni = 1,
			     .names = {"mine"},
			     .inst_ids = {4},
			     .vals = {{5, 50, 5, 50, 1}}};
	struct kid child = parent;
	const PERF_COUNTER_HEADER *ch;
	struct cons_inst in[2];
	HANDLE q = open_query();
	BYTE *buf;
	DWORD len;
	pid_t pid;

	(void)state;
	kid_counters(&parent, 5, agg_ids, agg_types);
	register_set(&parent, agg_funcs);
	child = parent;
	child.names[0] = "theirs";
	memcpy(child.vals[0], (ULONGLONG[]){7, 71, 2, 70, 1}, 5 * sizeof(ULONGLONG));
	assert_int_equal(kid_start(&parent), 0);
	pid = kid_spawn(&child);
	/* one instance per process, one aggregated instance for consumers: id 0, name "" */
	assert_int_equal(cons_enum(&parent.set, &buf, &len), 0);
	assert_int_equal(cons_instances(buf, len, in, 2), 1);
	assert_int_equal(in[0].id, 0);
	assert_int_equal(in[0].len, 0);
	assert_int_equal(in[0].size, 16);
	free(buf);
	assert_int_equal(cons_add(q, &parent.set, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, NULL),
			 0);
	assert_int_equal(cons_add(q, &parent.set, 4, CONS_ANY_INSTANCE, NULL), 0);
	assert_int_equal(cons_data(q, &buf, &len), 0);
	ch = cons_header(buf, 0);
	assert_int_equal(ch->dwType, PERF_MULTIPLE_COUNTERS);
	assert_int_equal(cons_value((const BYTE *)(ch + 1) + 8 + 24 + 0 * 16), 12);
	assert_int_equal(cons_value((const BYTE *)(ch + 1) + 8 + 24 + 1 * 16), 60);
	assert_int_equal(cons_value((const BYTE *)(ch + 1) + 8 + 24 + 2 * 16), 2);
	assert_int_equal(cons_value((const BYTE *)(ch + 1) + 8 + 24 + 3 * 16), 70);
	assert_int_equal(cons_value((const BYTE *)(ch + 1) + 8 + 24 + 4 * 16), 2);
	ch = cons_header(buf, 1);
	assert_int_equal(ch->dwType, PERF_SINGLE_COUNTER);
	assert_int_equal(cons_value((const BYTE *)(ch + 1)), 70);
	free(buf);
	/* the other process goes: only this one's values remain */
	kid_finish(&child, pid);
	assert_int_equal(cons_data(q, &buf, &len), 0);
	assert_int_equal(cons_value((const BYTE *)(cons_header(buf, 1) + 1)), 50);
	free(buf);
	assert_int_equal(PerfStopProvider(parent.h), 0);
	assert_int_equal(cons_data(q, &buf, &len), 0);
	ch = cons_header(buf, 0);
	assert_int_equal(ch->dwType, PERF_ERROR_RETURN);
	assert_int_equal(ch->dwStatus, ERROR_WMI_INSTANCE_NOT_FOUND);
	free(buf);
	assert_int_equal(PerfCloseQueryHandle(q), 0);
}

static void test_aggregate_history(void **state)
{
	static const ULONG ids[] = {1, 2}, types[] = {PERF_COUNTER_RAWCOUNT, PERF_COUNTER_RAWCOUNT};
	static const ULONG funcs[] = {PERF_AGGREGATE_TOTAL, PERF_AGGREGATE_MIN};
	struct kid parent = {.set = prov_guid(),
			     .instance_type = PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY,
			     .ni = 1,
			     .names = {"p"},
			     .vals = {{5, 5}}};
	struct kid child;
	const PERF_COUNTER_HEADER *ch;
	HANDLE q = open_query(), q2;
	struct cons_inst in[2];
	BYTE *buf;
	DWORD len;
	pid_t pid;

	(void)state;
	kid_counters(&parent, 2, ids, types);
	register_set(&parent, funcs);
	child = parent;
	child.vals[0][0] = 7;
	child.vals[0][1] = 2;
	assert_int_equal(kid_start(&parent), 0);
	pid = kid_spawn(&child);
	assert_int_equal(cons_add(q, &parent.set, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, NULL),
			 0);
	assert_int_equal(cons_data(q, &buf, &len), 0);
	ch = cons_header(buf, 0);
	assert_int_equal(cons_value((const BYTE *)(ch + 1) + 16), 12);
	assert_int_equal(cons_value((const BYTE *)(ch + 1) + 32), 2);
	free(buf);
	/* the child's instance vanishes; its last values stay in the aggregate */
	kid_finish(&child, pid);
	assert_int_equal(PerfIncrementULongCounterValue(parent.h, parent.inst[0], 1, 1), 0);
	assert_int_equal(cons_data(q, &buf, &len), 0);
	ch = cons_header(buf, 0);
	assert_int_equal(cons_value((const BYTE *)(ch + 1) + 16), 13);
	assert_int_equal(cons_value((const BYTE *)(ch + 1) + 32), 2);
	free(buf);
	/* for the whole process, other queries included */
	q2 = open_query();
	assert_int_equal(cons_add(q2, &parent.set, 1, CONS_ANY_INSTANCE, NULL), 0);
	assert_int_equal(cons_data(q2, &buf, &len), 0);
	assert_int_equal(cons_value((const BYTE *)(cons_header(buf, 0) + 1)), 13);
	free(buf);
	/* every provider gone: the aggregated instance remains, from history */
	assert_int_equal(PerfStopProvider(parent.h), 0);
	assert_int_equal(cons_data(q, &buf, &len), 0);
	ch = cons_header(buf, 0);
	assert_int_equal(ch->dwType, PERF_MULTIPLE_COUNTERS);
	assert_int_equal(cons_value((const BYTE *)(ch + 1) + 16), 13);
	free(buf);
	assert_int_equal(cons_enum(&parent.set, &buf, &len), 0);
	assert_int_equal(cons_instances(buf, len, in, 2), 1);
	free(buf);
	assert_int_equal(PerfCloseQueryHandle(q), 0);
	assert_int_equal(PerfCloseQueryHandle(q2), 0);
}

static void test_aggregate_by_name(void **state)
{
	static const ULONG ids[] = {1, 2},
			   types[] = {PERF_COUNTER_RAWCOUNT, PERF_COUNTER_LARGE_RAWCOUNT};
	static const ULONG funcs[] = {PERF_AGGREGATE_TOTAL, PERF_AGGREGATE_AVG};
	struct kid parent = {.set = prov_guid(),
			     .instance_type = PERF_COUNTERSET_INSTANCE_AGGREGATE,
			     .ni = 2,
			     .names = {"x", "y"},
			     .inst_ids = {3, 1},
			     .vals = {{1, 4}, {10, 10}}};
	struct kid child;
	struct cons_row rows[8];
	struct cons_inst in[8];
	HANDLE q = open_query();
	BYTE *buf;
	DWORD len;
	pid_t pid;
	int nr, nc;

	(void)state;
	kid_counters(&parent, 2, ids, types);
	register_set(&parent, funcs);
	child = parent;
	child.names[0] = "x";
	child.names[1] = "z";
	child.inst_ids[0] = 5;
	child.inst_ids[1] = 0;
	memcpy(child.vals, (ULONGLONG[2][MAXC]){{2, 7}, {100, 100}}, sizeof(child.vals[0]) * 2);
	assert_int_equal(kid_start(&parent), 0);
	pid = kid_spawn(&child);
	/* one instance per name (the lowest id), then _Total */
	assert_int_equal(cons_enum(&parent.set, &buf, &len), 0);
	assert_int_equal(cons_instances(buf, len, in, 8), 4);
	assert_true(cons_weq(in[0].name, in[0].len, "x"));
	assert_int_equal(in[0].id, 3);
	assert_true(cons_weq(in[1].name, in[1].len, "y"));
	assert_true(cons_weq(in[2].name, in[2].len, "z"));
	assert_true(cons_weq(in[3].name, in[3].len, "_Total"));
	free(buf);
	assert_int_equal(cons_add(q, &parent.set, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"),
			 0);
	nr = query_rows(q, 0, rows, 8, &nc);
	assert_int_equal(nr, 4);
	assert_string_equal(rows[0].name, "x");
	assert_int_equal(rows[0].id, 3);
	assert_int_equal(rows[0].v[0], 3); /* 1 + 2 */
	assert_int_equal(rows[0].v[1], 5); /* (4 + 7) / 2 */
	assert_int_equal(rows[1].v[0], 10);
	assert_int_equal(rows[2].v[0], 100);
	assert_int_equal(rows[3].v[0], 113);
	assert_int_equal(rows[3].v[1], 30); /* (4 + 10 + 7 + 100) / 4 */
	kid_finish(&child, pid);
	nr = query_rows(q, 0, rows, 8, &nc);
	assert_int_equal(nr, 3);
	assert_int_equal(rows[0].v[0], 1);
	assert_int_equal(PerfStopProvider(parent.h), 0);
	assert_int_equal(PerfCloseQueryHandle(q), 0);
}

/* ---- garbage in the maps ------------------------------------------------------------------- */

static void test_garbage_slots(void **state)
{
	static const ULONG ids[] = {1, 2},
			   types[] = {PERF_COUNTER_RAWCOUNT, PERF_COUNTER_LARGE_RAWCOUNT};
	struct kid k = {.set = prov_guid(),
			.instance_type = PERF_COUNTERSET_MULTI_INSTANCES,
			.ni = 1,
			.names = {"real"},
			.inst_ids = {1},
			.vals = {{3, 4}}};
	struct perflib_store *map;
	struct perflib_slot_hdr *h;
	struct cons_inst in[8];
	struct cons_row rows[8];
	uint32_t pid, slot_size, name_off, name_max, i;
	uint64_t start;
	HANDLE q = open_query();
	uint8_t *slot;
	WCHAR *name;
	BYTE *buf;
	DWORD len;
	int n, nc;

	(void)state;
	kid_counters(&k, 2, ids, types);
	assert_int_equal(kid_start(&k), 0);
	assert_int_equal(perflib_store_open(&k.set, false, &map), 0);
	slot_size = map->info->slot_size;
	name_off = map->info->name_offset;
	/* the slots forged below are of class 0 (s0/data) */
	name_max = map->cls[0].geo->name_max;
	perflib_store_close(map);
	perflib_self(&pid, &start);
	slot = calloc(1, slot_size);
	h = (struct perflib_slot_hdr *)slot;
	name = (WCHAR *)(slot + name_off);
	for (i = 10; i <= 16; i++) {
		memset(slot, 0, slot_size);
		*(uint64_t *)slot = perflib_make_word(PERFLIB_SLOT_LIVE, 77, pid);
		h->owner_start = start;
		memcpy(name, u"ghost", 12);
		((PERF_COUNTERSET_INSTANCE *)(slot + PERFLIB_BLOCK_OFFSET))->InstanceId =
			0xFFFFFFFF;
		((PERF_COUNTERSET_INSTANCE *)(slot + PERFLIB_BLOCK_OFFSET))->InstanceNameSize =
			9999;
		memset(slot + PERFLIB_COUNTERS_OFFSET, 0xEE, 16);
		switch (i) {
		case 10: /* a name with no NUL inside name_max */
			for (n = 0; n < (int)name_max; n++)
				name[n] = u'A';
			break;
		case 11: /* an owner that does not exist */
			*(uint64_t *)slot = perflib_make_word(PERFLIB_SLOT_LIVE, 77, 0x7ffffff0);
			break;
		case 12: /* a state that does not exist */
			*(uint64_t *)slot = perflib_make_word(3, 77, pid);
			break;
		case 13: /* claimed, not live */
			*(uint64_t *)slot = perflib_make_word(PERFLIB_SLOT_CLAIMED, 77, pid);
			break;
		case 14: /* our pid, another start time: a reused pid */
			h->owner_start = start + 12345;
			break;
		case 15: /* pid 0 */
			*(uint64_t *)slot = perflib_make_word(PERFLIB_SLOT_LIVE, 77, 0);
			break;
		default: /* well formed: the consumer cannot tell, and shows it */
			break;
		}
		assert_int_equal(tl_poke_slot(&k.set, i, slot), 0);
	}
	free(slot);
	assert_int_equal(cons_enum(&k.set, &buf, &len), 0);
	n = cons_instances(buf, len, in, 8);
	assert_int_equal(n, 2);
	assert_true(cons_weq(in[0].name, in[0].len, "real"));
	assert_true(cons_weq(in[1].name, in[1].len, "ghost"));
	assert_int_equal(in[1].id, 0xFFFFFFFF);
	free(buf);
	/* one specification: read straight from the slots; two: through a snapshot */
	assert_int_equal(cons_add(q, &k.set, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	for (i = 0; i < 2; i++) {
		n = query_rows(q, 0, rows, 8, &nc);
		assert_int_equal(n, 2);
		assert_int_equal(rows[0].v[0], 3);
		assert_int_equal(rows[1].v[0], 0xEEEEEEEEll); /* a DWORD: 4 bytes of the slot */
		assert_int_equal(rows[1].v[1], (long long)0xEEEEEEEEEEEEEEEEull);
		if (i == 0)
			assert_int_equal(cons_add(q, &k.set, 2, CONS_ANY_INSTANCE, "g*"), 0);
	}
	n = query_rows(q, 1, rows, 8, &nc);
	assert_int_equal(n, 1);
	assert_int_equal(rows[0].v[0], (long long)0xEEEEEEEEEEEEEEEEull);
	assert_int_equal(PerfCloseQueryHandle(q), 0);
	assert_int_equal(PerfStopProvider(k.h), 0);
}

/*
 * pin a counter set built from @good, then put @bad in its info pin as it is, bypassing
 * every check (a corrupted or hostile registration)
 */
static void pin_raw_set(const struct perflib_info *good, const struct perflib_info *bad,
			size_t size)
{
	struct perflib_pin_opts opts;
	struct perflib_store *map;
	char dir[PATH_MAX], path[PATH_MAX + 8];
	__u32 key = 0;
	GUID guid;
	int fd;

	perflib_pin_defaults(&opts);
	assert_int_equal(perflib_store_create(good, size, &opts, &map), 0);
	guid = map->guid;
	perflib_store_close(map);
	assert_int_equal(perflib_store_dir(&guid, dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/info", dir);
	assert_int_equal(unlink(path), 0);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_info", 4, (__u32)size, 1, NULL);
	assert_true(fd >= 0);
	assert_int_equal(bpf_map_update_elem(fd, &key, bad, BPF_ANY), 0);
	assert_int_equal(bpf_obj_pin(fd, path), 0);
	close(fd);
}

static struct perflib_info *build_info(GUID set, ULONG instance_type, size_t *ret_size)
{
	struct perflib_counter_reg regs[2] = {
		{.id = 1, .type = PERF_COUNTER_RAWCOUNT, .aggregate = 77},
		{.id = 1, .type = PERF_COUNTER_TEXT},
	};
	struct perflib_counterset_reg reg = {.counterset_guid = set,
					     .instance_type = instance_type,
					     .nr_counters = 2,
					     .counters = regs};
	struct perflib_pin_opts opts;
	struct perflib_info *info;

	perflib_pin_defaults(&opts);
	opts.capacity = 16;
	assert_int_equal(perflib_info_build(&reg, 0, &opts, &info, ret_size), 0);
	return info;
}

static void test_corrupt_info(void **state)
{
	GUID bad_offset = prov_guid(), bad_type = prov_guid(), odd = prov_guid();
	struct perflib_info *info, *bad;
	HANDLE q = open_query();
	BYTE *buf;
	DWORD len, n;
	size_t size;

	(void)state;
	/* an info whose slot geometry is wrong: every reader refuses it */
	info = build_info(bad_offset, PERF_COUNTERSET_MULTI_INSTANCES, &size);
	bad = malloc(size);
	assert_non_null(bad);
	memcpy(bad, info, size);
	bad->name_offset += 8;
	pin_raw_set(info, bad, size);
	free(info);
	free(bad);
	/* an instance type that does not exist */
	info = build_info(bad_type, PERF_COUNTERSET_MULTI_INSTANCES, &size);
	bad = malloc(size);
	assert_non_null(bad);
	memcpy(bad, info, size);
	bad->instance_type = 0x99;
	pin_raw_set(info, bad, size);
	free(info);
	free(bad);
	assert_int_equal(PerfEnumerateCounterSetInstances(NULL, &bad_offset, NULL, 0, &n),
			 ERROR_INVALID_DATA);
	assert_int_equal(PerfEnumerateCounterSetInstances(NULL, &bad_type, NULL, 0, &n),
			 ERROR_INVALID_DATA);
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(
				 NULL, &bad_offset, PERF_REG_COUNTERSET_STRUCT, 0, NULL, 0, &n),
			 ERROR_INVALID_DATA);
	assert_int_equal(cons_add(q, &bad_offset, 1, CONS_ANY_INSTANCE, "*"), ERROR_INVALID_DATA);
	assert_int_equal(cons_add(q, &bad_type, 1, CONS_ANY_INSTANCE, "*"), ERROR_INVALID_DATA);
	/* odd but valid: duplicate ids, an unknown aggregate function, a text counter */
	info = build_info(odd, PERF_COUNTERSET_MULTI_AGGREGATE, &size);
	pin_raw_set(info, info, size);
	free(info);
	assert_int_equal(cons_enum(&odd, &buf, &len), 0);
	assert_int_equal(len, 0);
	free(buf);
	assert_int_equal(cons_add(q, &odd, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	assert_int_equal(cons_add(q, &odd, 1, CONS_ANY_INSTANCE, "*"), 0);
	assert_int_equal(cons_data(q, &buf, &len), 0);
	assert_int_equal(cons_header(buf, 0)->dwType, PERF_COUNTERSET);
	free(buf);
	assert_int_equal(PerfCloseQueryHandle(q), 0);
}

/* ---- a counter set registered anew under a consumer ---------------------------------------- */

static void test_reregistered(void **state)
{
	static const ULONG ids3[] = {1, 2, 3};
	static const ULONG types3[] = {PERF_COUNTER_RAWCOUNT, PERF_COUNTER_RAWCOUNT,
				       PERF_COUNTER_RAWCOUNT};
	struct kid k = {.set = prov_guid(),
			.instance_type = PERF_COUNTERSET_MULTI_INSTANCES,
			.ni = 1,
			.names = {"one"},
			.vals = {{1, 2, 3}}};
	struct cons_row rows[2];
	HANDLE q = open_query();
	int nr, nc;

	(void)state;
	kid_counters(&k, 2, ids3, types3);
	assert_int_equal(kid_start(&k), 0);
	assert_int_equal(cons_add(q, &k.set, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	assert_int_equal(cons_add(q, &k.set, 2, CONS_ANY_INSTANCE, "*"), 0);
	nr = query_rows(q, 0, rows, 2, &nc);
	assert_int_equal(nr, 1);
	assert_int_equal(nc, 2);
	assert_int_equal(PerfStopProvider(k.h), 0);
	assert_int_equal(perflib_unregister_counterset(&k.set, true), 0);
	/* the same GUID with three counters: the consumer follows the new pins */
	k.names[0] = "two";
	kid_counters(&k, 3, ids3, types3);
	assert_int_equal(kid_start(&k), 0);
	nr = query_rows(q, 0, rows, 2, &nc);
	assert_int_equal(nr, 1);
	assert_int_equal(nc, 3);
	assert_string_equal(rows[0].name, "two");
	assert_int_equal(rows[0].v[2], 3);
	nr = query_rows(q, 1, rows, 2, &nc);
	assert_int_equal(rows[0].v[0], 2);
	/* and without the counter of a specification: that one fails alone */
	assert_int_equal(PerfStopProvider(k.h), 0);
	assert_int_equal(perflib_unregister_counterset(&k.set, true), 0);
	kid_counters(&k, 1, ids3, types3);
	assert_int_equal(kid_start(&k), 0);
	{
		BYTE *buf;
		DWORD len;

		assert_int_equal(cons_data(q, &buf, &len), 0);
		assert_int_equal(cons_header(buf, 0)->dwType, PERF_COUNTERSET);
		assert_int_equal(cons_header(buf, 1)->dwType, PERF_ERROR_RETURN);
		assert_int_equal(cons_header(buf, 1)->dwStatus, ERROR_NOT_FOUND);
		free(buf);
	}
	assert_int_equal(PerfStopProvider(k.h), 0);
	assert_int_equal(PerfCloseQueryHandle(q), 0);
}

/* ---- many counter sets ------------------------------------------------------------------ */

#define MANY_SETS 200 /* more than the 64 most recent openings a consumer always keeps */

struct many {
	GUID sets[MANY_SETS];
	int go[2], done[2];
	int opened, after; /* the child's counts of mapped BPF maps: after two passes, at the end */
};

/* the mappings of BPF maps this process holds (a child holds none of its parent's) */
static int bpf_mappings(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "anon_inode:bpf-map") != NULL;
	fclose(f);
	return n;
}

static int many_child(void *arg)
{
	struct many *m = arg;
	PERF_INSTANCE_HEADER buf[64];
	int pass, base = bpf_mappings();
	DWORD got;
	unsigned int i;

	/* every set in turn, twice: each an instance "many" */
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < MANY_SETS; i++) {
			if (PerfEnumerateCounterSetInstances(NULL, &m->sets[i], buf, sizeof(buf),
							     &got) ||
			    got != buf[0].Size || buf[0].InstanceId != i)
				return __LINE__;
		}
	}
	/* the openings stayed: mapped, not opened again by each call */
	m->opened = bpf_mappings() - base;
	if (tl_signal(m->done[1]) || tl_await(m->go[0], 20000))
		return __LINE__;
	/* the parent unregistered them: the next call learns of it and they go */
	if (PerfEnumerateCounterSetInstances(NULL, &m->sets[0], buf, sizeof(buf), &got) !=
	    ERROR_WMI_GUID_NOT_FOUND)
		return __LINE__;
	m->after = bpf_mappings() - base;
	return 0;
}

static void test_many_sets_cached(void **state)
{
	struct many *m =
		mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	GUID pg = prov_provider_guid();
	struct prov_tmpl t;
	unsigned int i;
	HANDLE h;
	pid_t pid;

	(void)state;
	assert_ptr_not_equal(m, MAP_FAILED);
	/* registrations without the exit reaper: 200 of them in about a second */
	setenv("PERFLIB_KERNEL_REAPER", "0", 1);
	assert_int_equal(PerfStartProvider(&pg, NULL, &h), 0);
	for (i = 0; i < MANY_SETS; i++) {
		m->sets[i] = prov_guid();
		prov_tmpl_init(&t, m->sets[i], PERF_COUNTERSET_MULTI_INSTANCES);
		prov_tmpl_add(&t, 1, PERF_COUNTER_RAWCOUNT, 0);
		assert_int_equal(prov_tmpl_register(h, &t), 0);
		assert_non_null(PerfCreateInstance(h, &m->sets[i], cons_w("many"), i));
	}
	unsetenv("PERFLIB_KERNEL_REAPER");
	assert_int_equal(tl_pipe(m->go), 0);
	assert_int_equal(tl_pipe(m->done), 0);
	pid = tl_fork(many_child, m);
	assert_int_equal(tl_await(m->done[0], 60000), 0);
	/* a consumer going over 200 small sets keeps them open (it kept 64: 70 us a call) */
	if (m->opened < MANY_SETS)
		fail_msg("%d mappings of counter sets after two passes", m->opened);
	assert_int_equal(PerfStopProvider(h), 0);
	for (i = 0; i < MANY_SETS; i++)
		assert_int_equal(perflib_unregister_counterset(&m->sets[i], true), 0);
	assert_int_equal(tl_signal(m->go[1]), 0);
	assert_int_equal(tl_wait(pid, 20000), 0);
	/* and lets them go once they are unregistered */
	assert_int_equal(m->after, 0);
	munmap(m, sizeof(*m));
}

/* ---- churn --------------------------------------------------------------------------------- */

#define CHURN_NAMES 64
#define CHURN_ENUMS 100000

struct churn {
	GUID set;
	int ready[2];
	volatile int *stop; /* shared page */
};

static int churn_child(void *arg)
{
	struct churn *c = arg;
	struct prov_tmpl t;
	PPERF_COUNTERSET_INSTANCE inst[CHURN_NAMES] = {0};
	GUID pg = prov_provider_guid();
	unsigned int seed = 1, i;
	char name[32];
	HANDLE h;

	perflib_set_capacity(48, 16);
	prov_tmpl_init(&t, c->set, PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(&t, 1, PERF_COUNTER_RAWCOUNT, 0);
	prov_tmpl_add(&t, 2, PERF_COUNTER_LARGE_RAWCOUNT, 0);
	if (PerfStartProvider(&pg, NULL, &h) || prov_tmpl_register(h, &t))
		return 10;
	if (tl_signal(c->ready[1]))
		return 11;
	while (!*c->stop) {
		i = (unsigned int)rand_r(&seed) % CHURN_NAMES;
		if (inst[i]) {
			if (PerfDeleteInstance(h, inst[i]))
				return 12;
			inst[i] = NULL;
		} else {
			snprintf(name, sizeof(name), "churn-%u", i);
			/* the set may be full (48 slots for 64 names) */
			inst[i] = PerfCreateInstance(h, &c->set, cons_w(name), i);
			if (inst[i])
				PerfSetULongCounterValue(h, inst[i], 1, i);
		}
	}
	return PerfStopProvider(h) ? 13 : 0;
}

/* every instance block well formed, each "churn-<i>" with id i */
static void check_churn(const BYTE *buf, DWORD len)
{
	struct cons_inst in = {0};
	size_t off = 0;
	char name[32];
	int err;

	while (off < len) {
		err = cons_instance(buf + off, len - off, &in);
		if (err)
			fail_msg("malformed instance block at %zu (check line %d)", off, err);
		snprintf(name, sizeof(name), "churn-%u", in.id);
		if (in.id >= CHURN_NAMES || !cons_weq(in.name, in.len, name))
			fail_msg("instance %u has a name not of the known set", in.id);
		off += in.size;
	}
}

static void check_churn_name(const struct cons_row *row)
{
	char name[32];

	snprintf(name, sizeof(name), "churn-%u", row->id);
	if (row->id >= CHURN_NAMES || strcmp(row->name, name))
		fail_msg("instance %u named %s", row->id, row->name);
}

static void test_churn(void **state)
{
	struct churn c = {.set = prov_guid()};
	struct cons_row rows[64];
	HANDLE q = open_query();
	BYTE buf[4096], *data;
	DWORD len;
	int i, nr, nc, k, seen = 0;
	pid_t pid;

	(void)state;
	c.stop = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	assert_true(c.stop != MAP_FAILED);
	assert_int_equal(tl_pipe(c.ready), 0);
	pid = tl_fork(churn_child, &c);
	assert_int_equal(tl_await(c.ready[0], 10000), 0);
	for (i = 0; i < CHURN_ENUMS; i++) {
		ULONG st = PerfEnumerateCounterSetInstances(
			NULL, &c.set, (PPERF_INSTANCE_HEADER)buf, sizeof(buf), &len);

		assert_int_equal(st, ERROR_SUCCESS);
		check_churn(buf, len);
		seen += len > 0;
	}
	assert_true(seen > 0);
	/* query data under churn: well formed, values equal to the ids; one specification
	 * (read straight from the slots), then two (through a snapshot) */
	assert_int_equal(cons_add(q, &c.set, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "churn-*"),
			 0);
	for (i = 0; i < 10000; i++) {
		if (i == 5000)
			assert_int_equal(cons_add(q, &c.set, 1, CONS_ANY_INSTANCE, "*"), 0);
		assert_int_equal(cons_data(q, &data, &len), 0);
		assert_int_equal(cons_multi(cons_header(data, 0), rows, 64, &nr, &nc), 0);
		for (k = 0; k < nr && k < 64; k++) {
			/* a value is read while the instance lives: created, then set */
			assert_true(rows[k].v[0] == 0 || rows[k].v[0] == rows[k].id);
			check_churn_name(&rows[k]);
		}
		free(data);
	}
	*c.stop = 1;
	assert_int_equal(tl_wait(pid, 10000), 0);
	close(c.ready[0]);
	close(c.ready[1]);
	munmap((void *)c.stop, 4096);
	assert_int_equal(PerfCloseQueryHandle(q), 0);
}

/* ---- ControlCallback notifications (spec 6) ------------------------------------------------ */

struct cb_event {
	ULONG code, size;
	ULONG counter, instance;    /* ADD / REMOVE */
	char machine[64], name[64]; /* ASCII renderings */
};

struct cb_shared {
	ULONG enum_status, start_status, refuse_counter;
	int nr;
	struct cb_event ev[64];
};

static struct cb_shared *cb_sh;

static void ascii(char *dst, size_t size, const BYTE *src, size_t max_bytes)
{
	size_t i;

	for (i = 0; i + 1 < size && 2 * i + 1 < max_bytes; i++) {
		WCHAR c;

		memcpy(&c, src + 2 * i, 2);
		if (!c)
			break;
		dst[i] = (char)c;
	}
	dst[i] = 0;
}

static ULONG CALLBACK test_callback(ULONG code, PVOID buffer, ULONG size)
{
	int i = __atomic_fetch_add(&cb_sh->nr, 1, __ATOMIC_SEQ_CST);
	struct cb_event *e = &cb_sh->ev[i % 64];
	PERF_COUNTER_IDENTITY id;

	memset(e, 0, sizeof(*e));
	e->code = code;
	e->size = size;
	if (code == PERF_ADD_COUNTER || code == PERF_REMOVE_COUNTER) {
		memcpy(&id, buffer, sizeof(id));
		e->counter = id.CounterId;
		e->instance = id.InstanceId;
		if (id.BufferSize != size)
			e->size = 0;
		ascii(e->machine, sizeof(e->machine), (BYTE *)buffer + id.MachineOffset,
		      size - id.MachineOffset);
		if (id.NameOffset)
			ascii(e->name, sizeof(e->name), (BYTE *)buffer + id.NameOffset,
			      size - id.NameOffset);
		if (code == PERF_ADD_COUNTER && id.CounterId == cb_sh->refuse_counter)
			return ERROR_ACCESS_DENIED;
		return 0;
	}
	ascii(e->machine, sizeof(e->machine), buffer, size);
	if (code == PERF_ENUM_INSTANCES)
		return cb_sh->enum_status;
	if (code == PERF_COLLECT_START)
		return cb_sh->start_status;
	return 0;
}

static int cb_events(void)
{
	return __atomic_load_n(&cb_sh->nr, __ATOMIC_SEQ_CST);
}

static void test_callbacks(void **state)
{
	static const ULONG ids[] = {1, 2}, types[] = {PERF_COUNTER_RAWCOUNT, PERF_COUNTER_RAWCOUNT};
	struct kid k = {.set = prov_guid(),
			.instance_type = PERF_COUNTERSET_MULTI_INSTANCES,
			.ni = 1,
			.names = {"cb"},
			.vals = {{1, 2}},
			.cb = test_callback};
	char host[256];
	const PERF_COUNTER_HEADER *ch;
	HANDLE q = open_query();
	BYTE *buf;
	DWORD len, n;
	pid_t pid;
	int e;

	(void)state;
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	cb_sh = mmap(NULL, sizeof(*cb_sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1,
		     0);
	assert_true(cb_sh != MAP_FAILED);
	memset(cb_sh, 0, sizeof(*cb_sh));
	cb_sh->refuse_counter = 2;
	kid_counters(&k, 2, ids, types);
	pid = kid_spawn(&k);

	/* PERF_ADD_COUNTER per specification: identity, machine name, instance name */
	e = cb_events();
	assert_int_equal(cons_add(q, &k.set, 1, CONS_ANY_INSTANCE, "*"), 0);
	assert_int_equal(cb_events(), e + 1);
	assert_int_equal(cb_sh->ev[e].code, PERF_ADD_COUNTER);
	assert_int_equal(cb_sh->ev[e].size, 40 + 2 * (strlen(host) + 1) + 4);
	assert_int_equal(cb_sh->ev[e].counter, 1);
	assert_int_equal(cb_sh->ev[e].instance, 0xFFFFFFFF);
	assert_string_equal(cb_sh->ev[e].machine, host);
	assert_string_equal(cb_sh->ev[e].name, "*");
	/* a refusal is the block's Status; the specification is not added */
	assert_int_equal(cons_add(q, &k.set, 2, 7, "x"), ERROR_ACCESS_DENIED);
	assert_int_equal(cb_events(), e + 2);
	assert_int_equal(PerfQueryCounterInfo(q, NULL, 0, &n), ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(n, 48);

	/* PERF_ENUM_INSTANCES: the machine name; a non-zero answer is the call's result */
	e = cb_events();
	assert_int_equal(cons_enum(&k.set, &buf, &len), 0);
	free(buf);
	assert_true(cb_events() > e);
	assert_int_equal(cb_sh->ev[e].code, PERF_ENUM_INSTANCES);
	assert_string_equal(cb_sh->ev[e].machine, host);
	cb_sh->enum_status = ERROR_BUSY;
	assert_int_equal(PerfEnumerateCounterSetInstances(NULL, &k.set, NULL, 0, &n), ERROR_BUSY);
	cb_sh->enum_status = 0;

	/* PERF_COLLECT_START before the read, PERF_COLLECT_END after (sizing call, then read) */
	e = cb_events();
	assert_int_equal(cons_data(q, &buf, &len), 0);
	assert_int_equal(cons_header(buf, 0)->dwType, PERF_MULTIPLE_INSTANCES);
	free(buf);
	assert_int_equal(cb_events(), e + 4);
	assert_int_equal(cb_sh->ev[e + 2].code, PERF_COLLECT_START);
	assert_int_equal(cb_sh->ev[e + 3].code, PERF_COLLECT_END);
	assert_int_equal(cb_sh->ev[e].code, PERF_COLLECT_START);
	assert_int_equal(cb_sh->ev[e + 1].code, PERF_COLLECT_END);
	assert_string_equal(cb_sh->ev[e].machine, host);
	/* a refused start: that set's headers are errors with the code; END still comes */
	cb_sh->start_status = 1234;
	e = cb_events();
	assert_int_equal(cons_data(q, &buf, &len), 0);
	ch = cons_header(buf, 0);
	assert_int_equal(ch->dwType, PERF_ERROR_RETURN);
	assert_int_equal(ch->dwStatus, 1234);
	assert_int_equal(ch->dwSize, 16);
	free(buf);
	assert_int_equal(cb_events(), e + 4);
	assert_int_equal(cb_sh->ev[e + 1].code, PERF_COLLECT_END);
	assert_int_equal(cb_sh->ev[e + 3].code, PERF_COLLECT_END);
	cb_sh->start_status = 0;

	/* PERF_REMOVE_COUNTER on delete and on close */
	assert_int_equal(cons_add(q, &k.set, PERF_WILDCARD_COUNTER, 3, "c?"), 0);
	e = cb_events();
	assert_int_equal(cons_delete(q, &k.set, 1, CONS_ANY_INSTANCE, "*"), 0);
	assert_int_equal(cb_events(), e + 1);
	assert_int_equal(cb_sh->ev[e].code, PERF_REMOVE_COUNTER);
	assert_int_equal(cb_sh->ev[e].counter, 1);
	assert_int_equal(PerfCloseQueryHandle(q), 0);
	assert_int_equal(cb_events(), e + 2);
	assert_int_equal(cb_sh->ev[e + 1].code, PERF_REMOVE_COUNTER);
	assert_int_equal(cb_sh->ev[e + 1].counter, PERF_WILDCARD_COUNTER);
	assert_int_equal(cb_sh->ev[e + 1].instance, 3);
	assert_string_equal(cb_sh->ev[e + 1].name, "c?");
	kid_finish(&k, pid);
	munmap(cb_sh, sizeof(*cb_sh));
}

/* ---- by-reference counters ------------------------------------------------------------------ */

static void test_by_reference(void **state)
{
	static const ULONG ids[] = {1, 2, 3};
	static const ULONG types[] = {PERF_COUNTER_LARGE_RAWCOUNT, PERF_COUNTER_RAWCOUNT,
				      PERF_COUNTER_RAWCOUNT};
	static const ULONGLONG attribs[] = {PERF_ATTRIB_BY_REFERENCE, PERF_ATTRIB_BY_REFERENCE, 0};
	struct kid s = {.set = prov_guid(),
			.instance_type = PERF_COUNTERSET_SINGLE_INSTANCE,
			.ni = 1,
			.names = {"s"},
			.vals = {{0, 0, 9}}};
	struct kid m = {.set = prov_guid(),
			.instance_type = PERF_COUNTERSET_MULTI_INSTANCES,
			.ni = 2,
			.names = {"a", "b"},
			.inst_ids = {1, 2},
			.vals = {{0, 0, 5}, {0, 0, 6}}};
	static ULONGLONG v64 = 0x1122334455ull;
	static ULONG v32 = 77;
	const PERF_COUNTER_HEADER *ch;
	struct cons_row rows[4];
	HANDLE q = open_query();
	BYTE *buf;
	DWORD len;
	int nr, nc;

	(void)state;
	kid_counters(&s, 3, ids, types);
	kid_counters(&m, 3, ids, types);
	memcpy(s.attribs, attribs, sizeof(attribs));
	memcpy(m.attribs, attribs, sizeof(attribs));
	assert_int_equal(kid_start(&s), 0);
	assert_int_equal(kid_start(&m), 0);
	assert_int_equal(PerfSetCounterRefValue(s.h, s.inst[0], 1, &v64), 0);
	assert_int_equal(PerfSetCounterRefValue(s.h, s.inst[0], 2, NULL), 0);
	assert_int_equal(PerfSetCounterRefValue(m.h, m.inst[0], 1, &v64), 0);
	assert_int_equal(PerfSetCounterRefValue(m.h, m.inst[0], 2, &v32), 0);
	/* instance b: no address set (NULL) */
	assert_int_equal(cons_add(q, &s.set, 1, CONS_ANY_INSTANCE, NULL), 0);
	assert_int_equal(cons_add(q, &s.set, 2, CONS_ANY_INSTANCE, NULL), 0);
	assert_int_equal(cons_add(q, &s.set, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, NULL), 0);
	assert_int_equal(cons_add(q, &m.set, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	assert_int_equal(cons_data(q, &buf, &len), 0);
	/* the value behind the address */
	ch = cons_header(buf, 0);
	assert_int_equal(ch->dwType, PERF_SINGLE_COUNTER);
	assert_int_equal(cons_value((const BYTE *)(ch + 1)), 0x1122334455ll);
	/* a NULL address: ERROR_NO_DATA as the specification's error */
	ch = cons_header(buf, 1);
	assert_int_equal(ch->dwType, PERF_ERROR_RETURN);
	assert_int_equal(ch->dwStatus, ERROR_NO_DATA);
	/* ... and inside a multi-value payload: a PERF_COUNTER_DATA with dwDataSize 0 */
	ch = cons_header(buf, 2);
	assert_int_equal(ch->dwType, PERF_MULTIPLE_COUNTERS);
	assert_int_equal(
		((const PERF_COUNTER_DATA *)((const BYTE *)(ch + 1) + 24 + 16))->dwDataSize, 0);
	assert_int_equal(((const PERF_COUNTER_DATA *)((const BYTE *)(ch + 1) + 24 + 16))->dwSize,
			 16);
	assert_int_equal(cons_value((const BYTE *)(ch + 1) + 24 + 32), 9);
	assert_int_equal(cons_multi(cons_header(buf, 3), rows, 4, &nr, &nc), 0);
	assert_int_equal(nr, 2);
	assert_int_equal(rows[0].v[0], 0x1122334455ll);
	assert_int_equal(rows[0].v[1], 77);
	assert_int_equal(rows[0].v[2], 5);
	assert_int_equal(rows[1].v[0], -1);
	assert_int_equal(rows[1].v[1], -1);
	assert_int_equal(rows[1].v[2], 6);
	free(buf);
	/* the value is read at collection time */
	v64 = 99;
	v32 = 98;
	nr = query_rows(q, 3, rows, 4, &nc);
	assert_int_equal(rows[0].v[0], 99);
	assert_int_equal(rows[0].v[1], 98);
	assert_int_equal(PerfCloseQueryHandle(q), 0);
	assert_int_equal(PerfStopProvider(s.h), 0);
	assert_int_equal(PerfStopProvider(m.h), 0);
}

/* ---- a consumer without privileges ----------------------------------------------------------- */

struct nobody_args {
	GUID set;
	ULONG expect; /* ERROR_SUCCESS: reads must work; else the code every call gets */
};

static int nobody_consumer(void *arg)
{
	struct nobody_args *a = arg;
	struct cons_inst in[4];
	struct cons_row rows[4];
	HANDLE q;
	BYTE *buf;
	DWORD len, n;
	int nr, nc;

	if (setgroups(0, NULL) || setgid(NOGROUP) || setuid(NOBODY) || getuid() != NOBODY)
		return 20;
	if (PerfOpenQueryHandle(NULL, &q))
		return 21;
	if (a->expect) {
		if (PerfEnumerateCounterSetInstances(NULL, &a->set, NULL, 0, &n) != a->expect)
			return 22;
		if (PerfQueryCounterSetRegistrationInfo(NULL, &a->set, PERF_REG_COUNTERSET_STRUCT,
							0, NULL, 0, &n) != a->expect)
			return 23;
		if (cons_add(q, &a->set, 1, CONS_ANY_INSTANCE, "*") != a->expect)
			return 24;
		return PerfCloseQueryHandle(q) ? 25 : 0;
	}
	if (cons_enum(&a->set, &buf, &len) || cons_instances(buf, len, in, 4) != 2 ||
	    !cons_weq(in[0].name, in[0].len, "n0") || !cons_weq(in[1].name, in[1].len, "n1"))
		return 30;
	free(buf);
	if (PerfQueryCounterSetRegistrationInfo(NULL, &a->set, PERF_REG_COUNTERSET_STRUCT, 0, NULL,
						0, &n) != ERROR_NOT_ENOUGH_MEMORY ||
	    n != 32 + 3 * 48)
		return 31;
	if (cons_add(q, &a->set, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"))
		return 32;
	if (cons_data(q, &buf, &len) || cons_multi(cons_header(buf, 0), rows, 4, &nr, &nc) ||
	    nr != 2)
		return 33;
	free(buf);
	/* values, by-reference ones included (the provider answers a reader of the pins) */
	if (rows[0].v[0] != 40 || rows[1].v[0] != 41 || rows[0].v[2] != 0x42424242ll)
		return 34;
	return PerfCloseQueryHandle(q) ? 35 : 0;
}

static void unprivileged_run(mode_t mode, ULONG expect)
{
	static const ULONG ids[] = {1, 2, 3};
	static const ULONG types[] = {PERF_COUNTER_RAWCOUNT, PERF_COUNTER_RAWCOUNT,
				      PERF_COUNTER_LARGE_RAWCOUNT};
	static ULONGLONG ref = 0x42424242;
	struct kid k = {.set = prov_guid(),
			.instance_type = PERF_COUNTERSET_MULTI_INSTANCES,
			.ni = 2,
			.names = {"n0", "n1"},
			.vals = {{40}, {41}}};
	struct nobody_args a = {.expect = expect};
	pid_t pid;

	kid_counters(&k, 3, ids, types);
	k.attribs[2] = PERF_ATTRIB_BY_REFERENCE;
	assert_int_equal(perflib_set_pin_access(mode, (gid_t)-1), 0);
	assert_int_equal(kid_start(&k), 0);
	assert_int_equal(perflib_set_pin_access(0, (gid_t)-1), 0);
	assert_int_equal(PerfSetCounterRefValue(k.h, k.inst[0], 3, &ref), 0);
	assert_int_equal(PerfSetCounterRefValue(k.h, k.inst[1], 3, &ref), 0);
	a.set = k.set;
	pid = tl_fork(nobody_consumer, &a);
	assert_int_equal(tl_wait(pid, 20000), 0);
	assert_int_equal(PerfStopProvider(k.h), 0);
}

static void test_unprivileged_reader(void **state)
{
	(void)state;
	/* read permission only: the consumer copies the slots (no mapping without write) */
	unprivileged_run(0644, ERROR_SUCCESS);
}

static void test_unprivileged_denied(void **state)
{
	(void)state;
	/* no permission for others: ERROR_ACCESS_DENIED everywhere */
	unprivileged_run(0640, ERROR_ACCESS_DENIED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reginfo_registered),
		cmocka_unit_test(test_aggregate_multi),
		cmocka_unit_test(test_aggregate_single),
		cmocka_unit_test(test_aggregate_history),
		cmocka_unit_test(test_aggregate_by_name),
		cmocka_unit_test(test_garbage_slots),
		cmocka_unit_test(test_corrupt_info),
		cmocka_unit_test(test_reregistered),
		cmocka_unit_test(test_many_sets_cached),
		cmocka_unit_test(test_churn),
		cmocka_unit_test(test_callbacks),
		cmocka_unit_test(test_by_reference),
		cmocka_unit_test(test_unprivileged_reader),
		cmocka_unit_test(test_unprivileged_denied),
	};

	tl_require_bpf();
	return cmocka_run_group_tests_name("consumer", tests, tl_group_setup, tl_group_teardown);
}

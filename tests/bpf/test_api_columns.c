// SPDX-License-Identifier: MIT
/*
 * test_api_columns.c - perflib_query_columns (perflib-linux.h, PERFLIB_1.3): a query read
 * into column arrays gives what PerfQueryCounterData gives (the same blocks, statuses,
 * types, instances in the same order, ids, names and values), reads names only for rows the
 * caller does not hold (instances created, deleted, of a killed provider, of a counter set
 * registered again), and keeps the buffer rules (bad handles and arguments, arrays too
 * small). Public headers only: this file also runs against the shared library.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perflib.h"
#include "perflib-linux.h"
#include "testlib.h"
#include "../helpers/prov_util.h"
#include "../helpers/cons_util.h"

#define MAX_ROWS 64
#define MAX_BLOCKS 8

/* one block's arrays, and the names the caller holds by row (as a consumer keeps them) */
struct cb {
	ULONG max_rows, max_cols, max_units;
	ULONG *cids, *iids, *offs, *lens;
	ULONGLONG *vals, *keys;
	UCHAR *sizes;
	WCHAR *names;
	char held[MAX_ROWS][64];
	ULONG nr_held; /* rows of keys and held that belong together */
};

static void cb_init(struct cb *c, ULONG rows, ULONG cols, ULONG units)
{
	memset(c, 0, sizeof(*c));
	c->max_rows = rows;
	c->max_cols = cols;
	c->max_units = units;
	c->cids = calloc(cols + 1, sizeof(*c->cids));
	c->iids = calloc(rows + 1, sizeof(*c->iids));
	c->offs = calloc(rows + 1, sizeof(*c->offs));
	c->lens = calloc(rows + 1, sizeof(*c->lens));
	c->keys = calloc(rows + 1, sizeof(*c->keys));
	c->vals = calloc((size_t)rows * cols + 1, sizeof(*c->vals));
	c->sizes = calloc((size_t)rows * cols + 1, 1);
	c->names = calloc(units + 1, sizeof(*c->names));
	assert_true(c->cids && c->iids && c->offs && c->lens && c->keys && c->vals && c->sizes &&
		    c->names);
}

static void cb_free(struct cb *c)
{
	free(c->cids);
	free(c->iids);
	free(c->offs);
	free(c->lens);
	free(c->keys);
	free(c->vals);
	free(c->sizes);
	free(c->names);
}

/* the call's block over @c's arrays, @known rows of keys given */
static void cb_block(struct cb *c, struct perflib_column_block *b, ULONG known)
{
	*b = (struct perflib_column_block){
		.max_rows = c->max_rows,
		.max_cols = c->max_cols,
		.max_name_units = c->max_units,
		.nr_known = known,
		.counter_ids = c->cids,
		.values = c->vals,
		.sizes = c->sizes,
		.instance_ids = c->iids,
		.keys = c->keys,
		.name_offsets = c->offs,
		.name_lengths = c->lens,
		.names = c->names,
	};
}

/* after a read: the names given replace those held at their rows */
static void cb_take(struct cb *c, const struct perflib_column_block *b)
{
	ULONG r, k, named = 0;

	for (r = 0; r < b->nr_rows; r++) {
		if (b->nr_named && c->offs[r] != PERFLIB_COLUMN_NO_NAME) {
			const WCHAR *w = c->names + c->offs[r];

			assert_true(c->offs[r] + c->lens[r] < b->name_units + 1);
			assert_int_equal(w[c->lens[r]], 0);
			for (k = 0; k < c->lens[r] && k < 63; k++)
				c->held[r][k] = (char)w[k];
			c->held[r][k] = 0;
			named++;
			continue;
		}
		/* a row without a name is the instance held at that row (or has none) */
		if (b->type == PERF_COUNTERSET || b->type == PERF_MULTIPLE_INSTANCES)
			assert_true(r < c->nr_held);
		else
			c->held[r][0] = 0;
	}
	assert_int_equal(named, b->nr_named);
	c->nr_held = b->nr_rows;
}

/*
 * a column read and a PerfQueryCounterData of @q (nothing changes in between): the same
 * blocks, statuses and types, and every row the same instance (id, the name held) with the
 * same values; @keep gives the keys held
 */
static void cols_match(HANDLE q, struct cb *cbs, ULONG n, bool keep, ULONG *ret_named)
{
	struct perflib_column_block b[MAX_BLOCKS];
	struct cons_row rows[MAX_ROWS];
	PERF_DATA_HEADER hdr;
	BYTE *buf;
	DWORD len;
	ULONG i, r, k;

	for (i = 0; i < n; i++)
		cb_block(&cbs[i], &b[i], keep ? cbs[i].nr_held : 0);
	assert_int_equal(perflib_query_columns(q, &hdr, b, n), 0);
	assert_int_equal(hdr.dwNumCounters, n);
	for (i = 0; i < n; i++) {
		cb_take(&cbs[i], &b[i]);
		if (ret_named)
			ret_named[i] = b[i].nr_named;
	}
	assert_int_equal(cons_data(q, &buf, &len), 0);
	assert_int_equal(((PERF_DATA_HEADER *)buf)->dwNumCounters, n);
	for (i = 0; i < n; i++) {
		const PERF_COUNTER_HEADER *ch = cons_header(buf, i);
		const struct cb *c = &cbs[i];
		int nr = 0, nc = 0;

		assert_non_null(ch);
		assert_int_equal(b[i].status, ch->dwStatus);
		assert_int_equal(b[i].type, ch->dwType);
		if (ch->dwType == PERF_ERROR_RETURN) {
			assert_int_equal(b[i].nr_rows, 0);
			continue;
		}
		if (ch->dwType == PERF_SINGLE_COUNTER || ch->dwType == PERF_MULTIPLE_COUNTERS) {
			const BYTE *p = (const BYTE *)(ch + 1);

			assert_int_equal(b[i].nr_rows, 1);
			assert_int_equal(b[i].nr_named, 0);
			if (ch->dwType == PERF_MULTIPLE_COUNTERS) {
				const PERF_MULTI_COUNTERS *mc = (const PERF_MULTI_COUNTERS *)p;

				assert_int_equal(b[i].nr_cols, mc->dwCounters);
				for (k = 0; k < mc->dwCounters; k++)
					assert_int_equal(c->cids[k], ((const DWORD *)(mc + 1))[k]);
				p += mc->dwSize;
			} else {
				assert_int_equal(b[i].nr_cols, 1);
			}
			for (k = 0; k < b[i].nr_cols; k++, p += 16) {
				long long v = cons_value(p);

				assert_int_equal(
					c->sizes[(size_t)k * c->max_rows],
					v < 0 ? 0 : ((const PERF_COUNTER_DATA *)p)->dwDataSize);
				if (v >= 0)
					assert_true(c->vals[(size_t)k * c->max_rows] ==
						    (ULONGLONG)v);
			}
			continue;
		}
		assert_int_equal(cons_multi(ch, rows, MAX_ROWS, &nr, &nc), 0);
		assert_int_equal(b[i].nr_rows, (ULONG)nr);
		assert_int_equal(b[i].nr_cols, (ULONG)nc);
		if (ch->dwType == PERF_COUNTERSET) {
			const PERF_MULTI_COUNTERS *mc = (const PERF_MULTI_COUNTERS *)(ch + 1);

			for (k = 0; k < (ULONG)nc; k++)
				assert_int_equal(c->cids[k], ((const DWORD *)(mc + 1))[k]);
		}
		for (r = 0; r < (ULONG)nr; r++) {
			assert_int_equal(c->iids[r], rows[r].id);
			assert_string_equal(c->held[r], rows[r].name);
			for (k = 0; k < (ULONG)nc; k++) {
				size_t at = (size_t)k * c->max_rows + r;

				if (rows[r].v[k] < 0) {
					assert_int_equal(c->sizes[at], 0);
					continue;
				}
				assert_true(c->sizes[at] == 4 || c->sizes[at] == 8);
				assert_true(c->vals[at] == (ULONGLONG)rows[r].v[k]);
			}
		}
	}
	free(buf);
}

static HANDLE start_provider(void)
{
	GUID pg = prov_provider_guid();
	HANDLE h = NULL;

	assert_int_equal(PerfStartProvider(&pg, NULL, &h), ERROR_SUCCESS);
	return h;
}

static const ULONG ids123[] = {1, 2, 3};
static const ULONG types3[] = {PERF_COUNTER_RAWCOUNT, PERF_COUNTER_LARGE_RAWCOUNT,
			       PERF_COUNTER_BULK_COUNT};

static GUID add_set(HANDLE h, ULONG instance_type)
{
	GUID g = prov_guid();

	assert_int_equal(prov_set_register(h, g, instance_type, 3, ids123, types3), ERROR_SUCCESS);
	return g;
}

static PPERF_COUNTERSET_INSTANCE create(HANDLE h, const GUID *g, const char *name, ULONG id)
{
	PPERF_COUNTERSET_INSTANCE inst = PerfCreateInstance(h, g, cons_w(name), id);

	assert_non_null(inst);
	assert_int_equal(PerfSetULongCounterValue(h, inst, 1, id * 10 + 1), 0);
	assert_int_equal(PerfSetULongLongCounterValue(h, inst, 2, (ULONGLONG)id << 33 | 2), 0);
	assert_int_equal(PerfSetULongLongCounterValue(h, inst, 3, id * 10 + 3), 0);
	return inst;
}

static HANDLE open_query(void)
{
	HANDLE q = NULL;

	assert_int_equal(PerfOpenQueryHandle(NULL, &q), ERROR_SUCCESS);
	return q;
}

/* ---- arguments and the buffer rules ---------------------------------------------------- */

static void test_columns_args(void **state)
{
	HANDLE h = start_provider(), q = open_query(), closed = open_query();
	GUID m = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES);
	struct perflib_column_block b[2];
	PERF_DATA_HEADER hdr;
	struct cb c;

	(void)state;
	cb_init(&c, 4, 4, 64);
	cb_block(&c, &b[0], 0);
	assert_int_equal(PerfCloseQueryHandle(closed), ERROR_SUCCESS);
	assert_int_equal(perflib_query_columns(NULL, &hdr, b, 1), -EBADF);
	assert_int_equal(perflib_query_columns((HANDLE)0x1234, &hdr, b, 1), -EBADF);
	assert_int_equal(perflib_query_columns(closed, &hdr, b, 1), -EBADF);
	assert_int_equal(perflib_query_columns(q, NULL, b, 1), -EINVAL);
	assert_int_equal(perflib_query_columns(q, &hdr, NULL, 1), -EINVAL);
	/* a query without specifications: no block, the times of the sample */
	memset(&hdr, 0xff, sizeof(hdr));
	assert_int_equal(perflib_query_columns(q, &hdr, NULL, 0), 0);
	assert_int_equal(hdr.dwNumCounters, 0);
	assert_int_equal(hdr.dwTotalSize, sizeof(hdr));
	assert_true(hdr.PerfTimeStamp > 0);
	/* keys known past the rows, arrays missing for their capacity */
	assert_int_equal(cons_add(q, &m, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	cb_block(&c, &b[0], 5);
	assert_int_equal(perflib_query_columns(q, &hdr, b, 1), -EINVAL);
	cb_block(&c, &b[0], 0);
	b[0].keys = NULL;
	assert_int_equal(perflib_query_columns(q, &hdr, b, 1), -EINVAL);
	cb_block(&c, &b[0], 0);
	b[0].values = NULL;
	assert_int_equal(perflib_query_columns(q, &hdr, b, 1), -EINVAL);
	cb_block(&c, &b[0], 0);
	b[0].names = NULL;
	assert_int_equal(perflib_query_columns(q, &hdr, b, 1), -EINVAL);
	cb_block(&c, &b[0], 0);
	b[0].counter_ids = NULL;
	assert_int_equal(perflib_query_columns(q, &hdr, b, 1), -EINVAL);
	/* fewer blocks than specifications: -ENOSPC, how many in dwNumCounters */
	assert_int_equal(cons_add(q, &m, 2, CONS_ANY_INSTANCE, "*"), 0);
	cb_block(&c, &b[0], 0);
	assert_int_equal(perflib_query_columns(q, &hdr, b, 1), -ENOSPC);
	assert_int_equal(hdr.dwNumCounters, 2);
	cb_free(&c);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_columns_small_arrays(void **state)
{
	HANDLE h = start_provider(), q = open_query();
	GUID m = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES);
	struct perflib_column_block b;
	PERF_DATA_HEADER hdr;
	struct cb c;
	char name[32];
	int i;

	(void)state;
	for (i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "instance-%d", i);
		create(h, &m, name, (ULONG)i);
	}
	assert_int_equal(cons_add(q, &m, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	/* too few rows: what is needed, rows that fit written */
	cb_init(&c, 3, 3, 200);
	cb_block(&c, &b, 0);
	assert_int_equal(perflib_query_columns(q, &hdr, &b, 1), -ENOSPC);
	assert_int_equal(b.nr_rows, 5);
	assert_int_equal(b.nr_cols, 3);
	assert_int_equal(b.name_units, 5 * 11);
	assert_int_equal(b.status, 0);
	assert_int_equal(b.type, PERF_COUNTERSET);
	assert_int_equal(c.vals[0], 1);
	cb_free(&c);
	/* too few columns */
	cb_init(&c, 8, 2, 200);
	cb_block(&c, &b, 0);
	assert_int_equal(perflib_query_columns(q, &hdr, &b, 1), -ENOSPC);
	assert_int_equal(b.nr_cols, 3);
	assert_int_equal(b.nr_rows, 5);
	cb_free(&c);
	/* too few name units: counted past them */
	cb_init(&c, 8, 3, 20);
	cb_block(&c, &b, 0);
	assert_int_equal(perflib_query_columns(q, &hdr, &b, 1), -ENOSPC);
	assert_int_equal(b.name_units, 55);
	cb_free(&c);
	/* nothing at all: the sizes */
	memset(&b, 0, sizeof(b));
	assert_int_equal(perflib_query_columns(q, &hdr, &b, 1), -ENOSPC);
	assert_int_equal(b.nr_rows, 5);
	assert_int_equal(b.nr_cols, 3);
	assert_int_equal(b.name_units, 55);
	/* grown to those: the same as PerfQueryCounterData */
	cb_init(&c, 5, 3, 55);
	cols_match(q, &c, 1, false, NULL);
	cb_free(&c);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- what PerfQueryCounterData gives -------------------------------------------------- */

/*
 * specifications of every kind over sets of every kind: every counter, one counter, name
 * patterns, an instance id, duplicate names, a single-instance set, by-reference counters
 * (one address NULL), a set without instance yet, an unregistered set
 */
static void test_columns_equal_query_data(void **state)
{
	HANDLE h = start_provider(), q = open_query();
	GUID m = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES);
	GUID s = add_set(h, PERF_COUNTERSET_SINGLE_INSTANCE);
	GUID e = add_set(h, PERF_COUNTERSET_SINGLE_INSTANCE);
	GUID agg = add_set(h, PERF_COUNTERSET_MULTI_AGGREGATE), gone = prov_guid();
	struct prov_tmpl t;
	HANDLE hr;
	GUID r;
	PPERF_COUNTERSET_INSTANCE ri[2];
	static ULONGLONG refv = 4242;
	struct cb c[MAX_BLOCKS];
	ULONG named[MAX_BLOCKS], i, n = 0;

	(void)state;
	assert_int_equal(prov_std_start(&hr, &r), 0);
	create(h, &m, "dup", 1);
	create(h, &m, "x", 2);
	create(h, &m, "DUP", 3);
	create(h, &m, "dup", 4);
	create(h, &s, "", 7);
	create(h, &agg, "w1", 5);
	create(h, &agg, "w2", 6);
	ri[0] = PerfCreateInstance(hr, &r, cons_w("ref-a"), 1);
	ri[1] = PerfCreateInstance(hr, &r, cons_w("ref-null"), 2);
	assert_true(ri[0] && ri[1]);
	assert_int_equal(PerfSetCounterRefValue(hr, ri[0], PROV_STD_REF, &refv), 0);
	assert_int_equal(PerfSetULongCounterValue(hr, ri[0], PROV_STD_DWORD2, 77), 0);
	assert_int_equal(cons_add(q, &m, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	n++;
	assert_int_equal(cons_add(q, &m, 2, CONS_ANY_INSTANCE, "d*"), 0);
	n++;
	assert_int_equal(cons_add(q, &m, 3, 2, "*"), 0);
	n++;
	assert_int_equal(cons_add(q, &s, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, NULL), 0);
	n++;
	assert_int_equal(cons_add(q, &e, 1, CONS_ANY_INSTANCE, NULL), 0);
	n++;
	assert_int_equal(cons_add(q, &agg, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	n++;
	assert_int_equal(cons_add(q, &r, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "ref*"), 0);
	n++;
	/* a set registered for the query, then unregistered */
	prov_tmpl_init(&t, gone, PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(&t, 1, PERF_COUNTER_RAWCOUNT, 0);
	assert_int_equal(prov_tmpl_register(h, &t), 0);
	assert_int_equal(cons_add(q, &gone, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	n++;
	assert_int_equal(perflib_unregister_counterset(&gone, true), 0);
	for (i = 0; i < n; i++)
		cb_init(&c[i], MAX_ROWS, 8, 1024);
	cols_match(q, c, n, false, named);
	/* every row named the first time; the aggregate's _Total is there */
	assert_int_equal(named[0], 4);
	assert_int_equal(named[1], 2);
	assert_int_equal(named[2], 1);
	assert_int_equal(named[3], 0); /* a single instance has no name */
	assert_string_equal(c[5].held[2], "_Total");
	assert_int_equal(c[6].nr_held, 2);
	/* the same instances again with the keys held: no name but the computed _Total */
	cols_match(q, c, n, true, named);
	for (i = 0; i < n; i++)
		assert_int_equal(named[i], i == 5 ? 1 : 0);
	/* the by-reference value follows its variable, read through the callback */
	refv = 99;
	cols_match(q, c, n, true, named);
	assert_true(c[6].vals[2 * c[6].max_rows] == 99);
	for (i = 0; i < n; i++)
		cb_free(&c[i]);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(hr), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- instances coming and going ------------------------------------------------------- */

/*
 * @nr_specs 1: the set is read from its slots while its one specification is written; 2:
 * through a snapshot, as PerfQueryCounterData reads a set of several specifications
 */
static void churn(ULONG nr_specs)
{
	HANDLE h = start_provider(), q = open_query();
	GUID m = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES);
	PPERF_COUNTERSET_INSTANCE in[40];
	struct cb c[2];
	ULONG named[2];
	char name[32];
	unsigned int seed = 7, round, i, live = 0;

	memset(in, 0, sizeof(in));
	for (i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "w%u", i % 7); /* duplicates */
		in[i] = create(h, &m, name, i);
		live++;
	}
	assert_int_equal(cons_add(q, &m, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	if (nr_specs > 1)
		assert_int_equal(cons_add(q, &m, 1, CONS_ANY_INSTANCE, "w[12]*"), 0);
	cb_init(&c[0], MAX_ROWS, 4, 2048);
	cb_init(&c[1], MAX_ROWS, 4, 2048);
	cols_match(q, c, nr_specs, false, named);
	assert_int_equal(named[0], 20);
	cols_match(q, c, nr_specs, true, named);
	assert_int_equal(named[0], 0);
	assert_true(nr_specs < 2 || named[1] == 0);
	for (round = 0; round < 60; round++) {
		/* delete or create a few, then the columns must still be PerfQueryCounterData's */
		for (i = 0; i < 3; i++) {
			unsigned int k = (unsigned int)rand_r(&seed) % 40;

			if (in[k]) {
				assert_int_equal(PerfDeleteInstance(h, in[k]), 0);
				in[k] = NULL;
				live--;
			} else {
				snprintf(name, sizeof(name), "w%u", k % 7);
				in[k] = create(h, &m, name, k);
				live++;
			}
		}
		cols_match(q, c, nr_specs, true, named);
		assert_int_equal(c[0].nr_held, live);
		/* a change names at most the rows from its place on */
		assert_true(named[0] <= live);
	}
	/* an instance created after the others: its name only */
	for (i = 0; i < 40 && in[i]; i++)
		;
	cols_match(q, c, nr_specs, true, named);
	if (i < 40) {
		in[i] = create(h, &m, "late", i);
		cols_match(q, c, nr_specs, true, named);
		assert_true(named[0] >= 1);
	}
	for (i = 0; i < 40; i++)
		if (in[i])
			assert_int_equal(PerfDeleteInstance(h, in[i]), 0);
	cols_match(q, c, nr_specs, true, named);
	assert_int_equal(c[0].nr_held, 0);
	cb_free(&c[0]);
	cb_free(&c[1]);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_columns_churn(void **state)
{
	(void)state;
	churn(1);
	churn(2);
}

/* ---- a provider killed between reads --------------------------------------------------- */

struct child_args {
	GUID set;
	int ready[2], done[2];
};

static int child_provider(void *arg)
{
	struct child_args *a = arg;
	GUID pg = prov_provider_guid();
	HANDLE h;
	int i;

	if (PerfStartProvider(&pg, NULL, &h) ||
	    prov_set_register(h, a->set, PERF_COUNTERSET_MULTI_INSTANCES, 3, ids123, types3))
		return 10;
	for (i = 0; i < 3; i++) {
		char name[16];
		PPERF_COUNTERSET_INSTANCE in;

		snprintf(name, sizeof(name), "child-%d", i);
		in = PerfCreateInstance(h, &a->set, cons_w(name), (ULONG)(100 + i));
		if (!in || PerfSetULongCounterValue(h, in, 1, (ULONG)(1000 + i)))
			return 11;
	}
	if (tl_signal(a->ready[1]) || tl_await(a->done[0], 20000))
		return 12;
	return 0;
}

static void test_columns_provider_killed(void **state)
{
	struct child_args a = {.set = prov_guid()};
	HANDLE h, q = open_query();
	struct cb c;
	ULONG named;
	pid_t pid;

	(void)state;
	assert_int_equal(tl_pipe(a.ready), 0);
	assert_int_equal(tl_pipe(a.done), 0);
	pid = tl_fork(child_provider, &a);
	assert_true(pid > 0);
	assert_int_equal(tl_await(a.ready[0], 10000), 0);
	/* this process provides instances of the same set after the child's */
	h = start_provider();
	assert_int_equal(
		prov_set_register(h, a.set, PERF_COUNTERSET_MULTI_INSTANCES, 3, ids123, types3), 0);
	create(h, &a.set, "parent-0", 1);
	create(h, &a.set, "parent-1", 2);
	assert_int_equal(cons_add(q, &a.set, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	cb_init(&c, MAX_ROWS, 4, 1024);
	cols_match(q, &c, 1, false, &named);
	assert_int_equal(c.nr_held, 5);
	assert_string_equal(c.held[0], "child-0");
	cols_match(q, &c, 1, true, &named);
	assert_int_equal(named, 0);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(tl_wait(pid, 10000), 128 + SIGKILL);
	/* the killed provider's rows are gone; the others move up and are named again */
	cols_match(q, &c, 1, true, &named);
	assert_int_equal(c.nr_held, 2);
	assert_string_equal(c.held[0], "parent-0");
	assert_string_equal(c.held[1], "parent-1");
	assert_int_equal(named, 2);
	cb_free(&c);
	close(a.ready[0]);
	close(a.ready[1]);
	close(a.done[0]);
	close(a.done[1]);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- a counter set registered again ----------------------------------------------------- */

/*
 * the keys of one registration say nothing about the next: a set unregistered and
 * registered again (other counters) names every row, even where slot and generation are
 * those of an instance of the old registration; a counter the new registration lacks is
 * ERROR_NOT_FOUND, as in PerfQueryCounterData
 */
static void test_columns_registered_again(void **state)
{
	HANDLE h = start_provider(), q = open_query();
	GUID m = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES);
	PPERF_COUNTERSET_INSTANCE in;
	struct prov_tmpl t;
	struct cb c[2];
	ULONG named[2];

	(void)state;
	in = create(h, &m, "old", 1);
	assert_int_equal(cons_add(q, &m, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	assert_int_equal(cons_add(q, &m, 3, CONS_ANY_INSTANCE, "*"), 0);
	cb_init(&c[0], MAX_ROWS, 4, 256);
	cb_init(&c[1], MAX_ROWS, 4, 256);
	cols_match(q, c, 2, false, named);
	assert_string_equal(c[0].held[0], "old");
	assert_int_equal(PerfDeleteInstance(h, in), 0);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_int_equal(perflib_unregister_counterset(&m, true), 0);
	h = start_provider();
	prov_tmpl_init(&t, m, PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(&t, 1, PERF_COUNTER_RAWCOUNT, 0);
	prov_tmpl_add(&t, 2, PERF_COUNTER_LARGE_RAWCOUNT, 0);
	assert_int_equal(prov_tmpl_register(h, &t), 0);
	/* the first slot again, at the generation the old instance had */
	in = PerfCreateInstance(h, &m, cons_w("new"), 1);
	assert_non_null(in);
	cols_match(q, c, 2, true, named);
	assert_int_equal(named[0], 1);
	assert_string_equal(c[0].held[0], "new");
	assert_int_equal(c[1].nr_held, 0);
	cb_free(&c[0]);
	cb_free(&c[1]);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_columns_args),
		cmocka_unit_test(test_columns_small_arrays),
		cmocka_unit_test(test_columns_equal_query_data),
		cmocka_unit_test(test_columns_churn),
		cmocka_unit_test(test_columns_provider_killed),
		cmocka_unit_test(test_columns_registered_again),
	};

	tl_require_bpf();
	return cmocka_run_group_tests_name("api_columns", tests, tl_group_setup, tl_group_teardown);
}

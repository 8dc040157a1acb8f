// SPDX-License-Identifier: MIT
/*
 * test_api_consumer.c - conformance of the consumer API with ../shared/spec/perflib-api.md
 * sections 7 and 8 (every WT row, the byte-level examples of 8.1 and 8.2 reproduced with
 * real providers) and the choices written in include/perflib.h and docs/CONSUMER.md.
 * Public headers only: this file also runs against the shared library. Every test uses
 * counter sets of its own (prov_guid()).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "perflib.h"
#include "perflib-linux.h"
#include "testlib.h"
#include "../helpers/prov_util.h"
#include "../helpers/cons_util.h"

#define FILETIME_UNIX_EPOCH 116444736000000000ll

/* a started provider (the same GUID for every test; counter sets keep tests apart) */
static HANDLE start_provider(void)
{
	GUID pg = prov_provider_guid();
	HANDLE h = NULL;

	assert_int_equal(PerfStartProvider(&pg, NULL, &h), ERROR_SUCCESS);
	return h;
}

/* register a fresh counter set with counters (id, type) and return its GUID */
static GUID add_set(HANDLE h, ULONG instance_type, unsigned int n, const ULONG *ids,
		    const ULONG *types)
{
	GUID g = prov_guid();

	assert_int_equal(prov_set_register(h, g, instance_type, n, ids, types), ERROR_SUCCESS);
	return g;
}

static PPERF_COUNTERSET_INSTANCE create(HANDLE h, const GUID *g, const char *name, ULONG id)
{
	PPERF_COUNTERSET_INSTANCE inst = PerfCreateInstance(h, g, cons_w(name), id);

	assert_non_null(inst);
	return inst;
}

static HANDLE open_query(void)
{
	HANDLE q = NULL;

	assert_int_equal(PerfOpenQueryHandle(NULL, &q), ERROR_SUCCESS);
	assert_non_null(q);
	return q;
}

static const ULONG ids12[] = {1, 2};
static const ULONG types_dw_large[] = {PERF_COUNTER_RAWCOUNT, PERF_COUNTER_LARGE_RAWCOUNT};

/* ---- handles (spec 7.2, 7.3) --------------------------------------------------------- */

static void test_open_close(void **state)
{
	HANDLE q = NULL;
	BYTE buf[64];
	DWORD n;

	(void)state;
	assert_int_equal(PerfOpenQueryHandle(NULL, NULL), ERROR_INVALID_PARAMETER); /* WT */
	assert_int_equal(PerfOpenQueryHandle(NULL, &q), ERROR_SUCCESS);		    /* WT */
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);		    /* WT */
	/* choice: stale, NULL and forged handles are ERROR_INVALID_HANDLE, never a crash */
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_INVALID_HANDLE);
	assert_int_equal(PerfCloseQueryHandle(NULL), ERROR_INVALID_HANDLE);
	assert_int_equal(PerfCloseQueryHandle((HANDLE)buf), ERROR_INVALID_HANDLE);
	assert_int_equal(PerfQueryCounterData(q, NULL, 0, &n), ERROR_INVALID_HANDLE);
	assert_int_equal(PerfQueryCounterData(NULL, NULL, 0, &n), ERROR_INVALID_HANDLE);
	assert_int_equal(PerfQueryCounterInfo(q, NULL, 0, &n), ERROR_INVALID_HANDLE);
	cons_ident(buf, 0, &(GUID){0}, 1, 0, NULL);
	assert_int_equal(PerfAddCounters(q, (PPERF_COUNTER_IDENTIFIER)buf, 40),
			 ERROR_INVALID_HANDLE);
	assert_int_equal(PerfDeleteCounters((HANDLE)(uintptr_t)0x5051000000000000ull,
					    (PPERF_COUNTER_IDENTIFIER)buf, 40),
			 ERROR_INVALID_HANDLE);
}

static void test_handles_not_reused(void **state)
{
	HANDLE a, b;

	(void)state;
	a = open_query();
	assert_int_equal(PerfCloseQueryHandle(a), ERROR_SUCCESS);
	b = open_query();
	/* a stale handle never names a newer query */
	assert_ptr_not_equal(a, b);
	assert_int_equal(PerfCloseQueryHandle(a), ERROR_INVALID_HANDLE);
	assert_int_equal(PerfCloseQueryHandle(b), ERROR_SUCCESS);
}

/* ---- machines --------------------------------------------------------------------------- */

static void test_machines(void **state)
{
	char host[256], name[300];
	const char *local[] = {"", ".", "localhost", "LOCALHOST", "\\\\localhost", "\\\\."};
	/* names of no host: refused before any network (tests/tools/test_remote_client.sh
	 * reaches real ones) */
	const char *remote[] = {"bad/name", "\\\\with space", "\\\\", "\\\\a:99999", "[zz]"};
	HANDLE h = start_provider(), q;
	GUID g = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES, 2, ids12, types_dw_large);
	struct timespec t0, t1;
	DWORD n;
	size_t i, k;

	(void)state;
	assert_int_equal(gethostname(host, sizeof(host)), 0);
	/* NULL, the local names, and this host's name in any case, with or without "\\" */
	for (i = 0; i < sizeof(local) / sizeof(local[0]) + 4; i++) {
		const WCHAR *m = NULL;

		if (i < sizeof(local) / sizeof(local[0])) {
			m = cons_w(local[i]);
		} else if (i == sizeof(local) / sizeof(local[0])) {
			m = cons_w(host);
		} else if (i == sizeof(local) / sizeof(local[0]) + 1) {
			snprintf(name, sizeof(name), "\\\\%s", host);
			for (k = 0; name[k]; k++)
				name[k] = (char)(name[k] >= 'a' && name[k] <= 'z' ? name[k] - 32
										  : name[k]);
			m = cons_w(name);
		}
		assert_int_equal(PerfOpenQueryHandle(m, &q), ERROR_SUCCESS);
		assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
		assert_int_equal(PerfEnumerateCounterSetInstances(m, &g, NULL, 0, &n),
				 ERROR_SUCCESS);
		assert_int_equal(n, 0);
		assert_int_equal(PerfQueryCounterSetRegistrationInfo(m, &g, PERF_REG_PROVIDER_GUID,
								     0, NULL, 0, &n),
				 ERROR_NOT_ENOUGH_MEMORY);
		assert_int_not_equal(PerfEnumerateCounterSet(m, NULL, 0, &n), ERROR_BAD_NETPATH);
	}
	/* a name that is no host name: ERROR_BAD_NETPATH at once, without the network */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(name, 'x', 299);
	name[299] = 0;
	for (i = 0; i < sizeof(remote) / sizeof(remote[0]) + 1; i++) {
		const WCHAR *m = cons_w(i < sizeof(remote) / sizeof(remote[0]) ? remote[i] : name);

		q = (HANDLE)0x1;
		assert_int_equal(PerfOpenQueryHandle(m, &q), ERROR_BAD_NETPATH);
		assert_ptr_equal(q, (HANDLE)0x1);
		assert_int_equal(PerfEnumerateCounterSet(m, NULL, 0, &n), ERROR_BAD_NETPATH);
		assert_int_equal(PerfEnumerateCounterSetInstances(m, &g, NULL, 0, &n),
				 ERROR_BAD_NETPATH);
		assert_int_equal(PerfQueryCounterSetRegistrationInfo(m, &g, PERF_REG_PROVIDER_GUID,
								     0, NULL, 0, &n),
				 ERROR_BAD_NETPATH);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 2);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- PerfQueryCounterData on an empty query (spec 7.1 WT rows, 3.10) -------------------- */

static void check_times(const PERF_DATA_HEADER *h)
{
	struct timespec mono, real;
	long long now_ns, unix100;
	time_t secs;
	struct tm tm;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	assert_int_equal(h->PerfFreq, 1000000000ll);
	now_ns = (long long)mono.tv_sec * 1000000000ll + mono.tv_nsec;
	assert_true(h->PerfTimeStamp <= now_ns && now_ns - h->PerfTimeStamp < 5000000000ll);
	unix100 = h->PerfTime100NSec - FILETIME_UNIX_EPOCH;
	assert_true(unix100 / 10000000 <= real.tv_sec && real.tv_sec - unix100 / 10000000 < 5);
	/* SystemTime is the same instant as PerfTime100NSec */
	secs = (time_t)(unix100 / 10000000);
	gmtime_r(&secs, &tm);
	assert_int_equal(h->SystemTime.wYear, tm.tm_year + 1900);
	assert_int_equal(h->SystemTime.wMonth, tm.tm_mon + 1);
	assert_int_equal(h->SystemTime.wDayOfWeek, tm.tm_wday);
	assert_int_equal(h->SystemTime.wDay, tm.tm_mday);
	assert_int_equal(h->SystemTime.wHour, tm.tm_hour);
	assert_int_equal(h->SystemTime.wMinute, tm.tm_min);
	assert_int_equal(h->SystemTime.wSecond, tm.tm_sec);
	assert_int_equal(h->SystemTime.wMilliseconds, (unix100 % 10000000) / 10000);
}

static void test_data_empty_query(void **state)
{
	HANDLE q = open_query();
	PERF_DATA_HEADER hdr;
	DWORD size = 0;

	(void)state;
	assert_int_equal(PerfQueryCounterData(q, NULL, 0, NULL), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfQueryCounterData(q, NULL, 0, &size), ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(size, 48);
	assert_int_equal(PerfQueryCounterData(q, &hdr, 48, NULL), ERROR_INVALID_PARAMETER);
	size = 0;
	assert_int_equal(PerfQueryCounterData(q, &hdr, 48, &size), ERROR_SUCCESS);
	assert_int_equal(size, 48);
	assert_int_equal(hdr.dwTotalSize, 48);
	assert_int_equal(hdr.dwNumCounters, 0);
	check_times(&hdr);
	/* a buffer too small: the size needed; NULL with a size is a bad parameter */
	assert_int_equal(PerfQueryCounterData(q, &hdr, 47, &size), ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(size, 48);
	assert_int_equal(PerfQueryCounterData(q, NULL, 48, &size), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
}

/* ---- PerfAddCounters (spec 7.7 WT rows and choices) ------------------------------------- */

static void test_add_wt_rows(void **state)
{
	HANDLE q = open_query();
	BYTE buf[128];
	GUID unknown = prov_guid();
	PERF_COUNTER_IDENTIFIER *id = (PERF_COUNTER_IDENTIFIER *)buf;
	PERF_DATA_HEADER hdr;
	DWORD size;

	(void)state;
	/* block Size < 40 (tested: 0) */
	cons_ident(buf, 0, &unknown, 1, CONS_ANY_INSTANCE, "*");
	id->Size = 0;
	assert_int_equal(PerfAddCounters(q, id, 48), ERROR_INVALID_PARAMETER);
	/* cbCounters < 40 (tested: 8) */
	cons_ident(buf, 0, &unknown, 1, CONS_ANY_INSTANCE, "*");
	assert_int_equal(PerfAddCounters(q, id, 8), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfAddCounters(q, NULL, 48), ERROR_INVALID_PARAMETER);
	/* an unregistered counter set: the call succeeds, the block says 4200 */
	id->Status = 0xDEAD;
	assert_int_equal(PerfAddCounters(q, id, 48), ERROR_SUCCESS);
	assert_int_equal(id->Status, ERROR_WMI_GUID_NOT_FOUND);
	/* ... and is not part of the query */
	assert_int_equal(PerfQueryCounterData(q, &hdr, sizeof(hdr), &size), ERROR_SUCCESS);
	assert_int_equal(size, 48);
	assert_int_equal(hdr.dwNumCounters, 0);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
}

static void test_add_malformed_blocks(void **state)
{
	HANDLE h = start_provider(), q = open_query();
	GUID g = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES, 2, ids12, types_dw_large);
	BYTE buf[256];
	PERF_COUNTER_IDENTIFIER *id = (PERF_COUNTER_IDENTIFIER *)buf;
	size_t len;
	DWORD n;

	(void)state;
	/* choice: a Size that is not a multiple of 8 rejects the whole call */
	len = cons_ident(buf, 0, &g, 1, CONS_ANY_INSTANCE, "*");
	id->Size = 44;
	assert_int_equal(PerfAddCounters(q, id, (DWORD)len), ERROR_INVALID_PARAMETER);
	/* a Size running past cbCounters */
	len = cons_ident(buf, 0, &g, 1, CONS_ANY_INSTANCE, "*");
	assert_int_equal(PerfAddCounters(q, id, (DWORD)len - 8), ERROR_INVALID_PARAMETER);
	/* bytes left over after the last block: nothing is added, no Status is written */
	len = cons_ident(buf, 0, &g, 1, CONS_ANY_INSTANCE, "*");
	id->Status = 0x1234;
	assert_int_equal(PerfAddCounters(q, id, (DWORD)len + 8), ERROR_INVALID_PARAMETER);
	assert_int_equal(id->Status, 0x1234);
	assert_int_equal(PerfQueryCounterInfo(q, NULL, 0, &n), ERROR_SUCCESS);
	assert_int_equal(n, 0);
	/* a name without its NUL inside the block: that block's Status */
	len = cons_ident(buf, 0, &g, 1, CONS_ANY_INSTANCE, "abcd");
	assert_int_equal(len, 56);
	memset(buf + 40, 'x', 16);
	len = cons_ident(buf, len, &g, 2, CONS_ANY_INSTANCE, "*");
	assert_int_equal(PerfAddCounters(q, id, (DWORD)len), ERROR_SUCCESS);
	assert_int_equal(cons_ident_status(buf, 0), ERROR_INVALID_PARAMETER);
	assert_int_equal(cons_ident_status(buf, 56), ERROR_SUCCESS);
	/* an unaligned buffer works */
	len = cons_ident(buf + 1, 0, &g, 1, 7, "odd");
	assert_int_equal(PerfAddCounters(q, (PPERF_COUNTER_IDENTIFIER)(buf + 1), (DWORD)len),
			 ERROR_SUCCESS);
	assert_int_equal(cons_ident_status(buf + 1, 0), ERROR_SUCCESS);
	assert_int_equal(PerfQueryCounterInfo(q, NULL, 0, &n), ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(n, 48 + 48);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_add_statuses(void **state)
{
	HANDLE h = start_provider(), q = open_query();
	GUID m = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES, 2, ids12, types_dw_large);
	GUID s = add_set(h, PERF_COUNTERSET_SINGLE_INSTANCE, 2, ids12, types_dw_large);
	char longname[PERF_MAX_INSTANCE_NAME + 2];

	(void)state;
	/* multiple instances: a name filter is required */
	assert_int_equal(cons_add(q, &m, 1, CONS_ANY_INSTANCE, NULL), ERROR_INVALID_PARAMETER);
	assert_int_equal(cons_add(q, &m, 1, CONS_ANY_INSTANCE, "*"), ERROR_SUCCESS);
	/* the same specification twice */
	assert_int_equal(cons_add(q, &m, 1, CONS_ANY_INSTANCE, "*"), ERROR_ALREADY_EXISTS);
	/* a counter the set does not have */
	assert_int_equal(cons_add(q, &m, 99, CONS_ANY_INSTANCE, "*"), ERROR_NOT_FOUND);
	assert_int_equal(cons_add(q, &m, PERF_WILDCARD_COUNTER, 3, "a?"), ERROR_SUCCESS);
	/* single instance: no name (Size 40), "" (the same spec) or "*"; nothing else */
	assert_int_equal(cons_add(q, &s, 1, CONS_ANY_INSTANCE, NULL), ERROR_SUCCESS);
	assert_int_equal(cons_add(q, &s, 1, CONS_ANY_INSTANCE, ""), ERROR_ALREADY_EXISTS);
	assert_int_equal(cons_add(q, &s, 2, CONS_ANY_INSTANCE, ""), ERROR_SUCCESS);
	assert_int_equal(cons_add(q, &s, 1, CONS_ANY_INSTANCE, "*"), ERROR_SUCCESS);
	assert_int_equal(cons_add(q, &s, 1, CONS_ANY_INSTANCE, "x"), ERROR_INVALID_PARAMETER);
	/* a name longer than PERF_MAX_INSTANCE_NAME */
	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	assert_int_equal(cons_add(q, &m, 1, 5, longname), ERROR_INVALID_PARAMETER);
	longname[PERF_MAX_INSTANCE_NAME] = 0;
	assert_int_equal(cons_add(q, &m, 1, 5, longname), ERROR_SUCCESS);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- PerfEnumerateCounterSetInstances (spec 7.5, 8.1) ----------------------------------- */

static void test_enum_example_8_1(void **state)
{
	static const BYTE expect[40] = {
		0x10, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x41, 0x00, 0x31, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x57, 0x00, 0x6f, 0x00,
		0x72, 0x00, 0x6b, 0x00, 0x65, 0x00, 0x72, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	HANDLE h = start_provider();
	GUID g = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES, 2, ids12, types_dw_large);
	BYTE buf[128];
	DWORD n = 0;

	(void)state;
	create(h, &g, "A1", 1);
	create(h, &g, "Worker", 7);
	assert_int_equal(PerfEnumerateCounterSetInstances(NULL, &g, NULL, 0, &n),
			 ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(n, 40);
	assert_int_equal(
		PerfEnumerateCounterSetInstances(NULL, &g, (PPERF_INSTANCE_HEADER)buf, 39, &n),
		ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(n, 40);
	memset(buf, 0xAA, sizeof(buf));
	assert_int_equal(
		PerfEnumerateCounterSetInstances(NULL, &g, (PPERF_INSTANCE_HEADER)buf, 40, &n),
		ERROR_SUCCESS);
	assert_int_equal(n, 40);
	assert_memory_equal(buf, expect, sizeof(expect));
	memset(buf, 0xAA, sizeof(buf));
	assert_int_equal(PerfEnumerateCounterSetInstances(NULL, &g, (PPERF_INSTANCE_HEADER)buf,
							  sizeof(buf), &n),
			 ERROR_SUCCESS);
	assert_int_equal(n, 40);
	assert_memory_equal(buf, expect, sizeof(expect));
	/* an odd buffer address gives the same bytes */
	assert_int_equal(PerfEnumerateCounterSetInstances(NULL, &g,
							  (PPERF_INSTANCE_HEADER)(buf + 1), 80, &n),
			 ERROR_SUCCESS);
	assert_memory_equal(buf + 1, expect, sizeof(expect));
	/* parameters */
	assert_int_equal(PerfEnumerateCounterSetInstances(NULL, &g, NULL, 0, NULL),
			 ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfEnumerateCounterSetInstances(NULL, &g, NULL, 10, &n),
			 ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfEnumerateCounterSetInstances(NULL, NULL, NULL, 0, &n),
			 ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_enum_unknown_and_empty(void **state)
{
	HANDLE h = start_provider();
	GUID g = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES, 2, ids12, types_dw_large);
	GUID unknown = prov_guid();
	PPERF_COUNTERSET_INSTANCE a;
	DWORD n = 77;
	BYTE buf[64];

	(void)state;
	/* choice: an unknown counter set is ERROR_WMI_GUID_NOT_FOUND */
	assert_int_equal(PerfEnumerateCounterSetInstances(NULL, &unknown, NULL, 0, &n),
			 ERROR_WMI_GUID_NOT_FOUND);
	/* choice: no instances is success with 0 bytes, even with no buffer */
	assert_int_equal(PerfEnumerateCounterSetInstances(NULL, &g, NULL, 0, &n), ERROR_SUCCESS);
	assert_int_equal(n, 0);
	a = create(h, &g, "x", 1);
	assert_int_equal(PerfEnumerateCounterSetInstances(NULL, &g, (PPERF_INSTANCE_HEADER)buf,
							  sizeof(buf), &n),
			 ERROR_SUCCESS);
	assert_int_equal(n, 16);
	/* deleted instances vanish at once */
	assert_int_equal(PerfDeleteInstance(h, a), ERROR_SUCCESS);
	assert_int_equal(PerfEnumerateCounterSetInstances(NULL, &g, (PPERF_INSTANCE_HEADER)buf,
							  sizeof(buf), &n),
			 ERROR_SUCCESS);
	assert_int_equal(n, 0);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_enum_single_instance(void **state)
{
	HANDLE h = start_provider();
	GUID g = add_set(h, PERF_COUNTERSET_SINGLE_INSTANCE, 2, ids12, types_dw_large);
	struct cons_inst in[2];
	BYTE *buf;
	DWORD len;

	(void)state;
	create(h, &g, "_Default", 0);
	assert_int_equal(cons_enum(&g, &buf, &len), ERROR_SUCCESS);
	assert_int_equal(cons_instances(buf, len, in, 2), 1);
	assert_true(cons_weq(in[0].name, in[0].len, "_Default"));
	assert_int_equal(in[0].id, 0);
	free(buf);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- PerfEnumerateCounterSet (spec 7.4) ------------------------------------------------- */

static void test_enum_counter_sets(void **state)
{
	HANDLE h = start_provider();
	GUID a = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES, 2, ids12, types_dw_large);
	GUID b = add_set(h, PERF_COUNTERSET_SINGLE_INSTANCE, 2, ids12, types_dw_large);
	GUID c = prov_guid(), *ids;
	char dir[PATH_MAX], other[PATH_MAX], s[37];
	DWORD n = 0, m = 0, i;
	int seen = 0;

	(void)state;
	/* a directory named by a GUID that holds no registration, and one named otherwise */
	snprintf(dir, sizeof(dir), "%s/%s", perflib_pin_root(), perflib_guid_to_string(&c, s));
	snprintf(other, sizeof(other), "%s/not-a-counter-set", perflib_pin_root());
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(mkdir(other, 0755), 0);
	assert_int_equal(PerfEnumerateCounterSet(NULL, NULL, 0, &n), ERROR_NOT_ENOUGH_MEMORY);
	assert_true(n >= 2);
	/* counts of GUIDs, not bytes */
	ids = calloc(n + 1, sizeof(GUID));
	assert_int_equal(PerfEnumerateCounterSet(NULL, ids, n - 1, &m), ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(m, n);
	assert_int_equal(PerfEnumerateCounterSet(NULL, ids, n + 1, &m), ERROR_SUCCESS);
	assert_int_equal(m, n);
	for (i = 0; i < m; i++) {
		if (!memcmp(&ids[i], &a, sizeof(GUID)))
			seen |= 1;
		if (!memcmp(&ids[i], &b, sizeof(GUID)))
			seen |= 2;
		if (!memcmp(&ids[i], &c, sizeof(GUID)))
			seen |= 4;
		/* sorted, each once */
		if (i)
			assert_true(memcmp(&ids[i - 1], &ids[i], sizeof(GUID)) < 0);
	}
	assert_int_equal(seen, 3);
	assert_int_equal(rmdir(dir), 0);
	assert_int_equal(rmdir(other), 0);
	assert_int_equal(PerfEnumerateCounterSet(NULL, ids, 1, NULL), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfEnumerateCounterSet(NULL, NULL, 5, &m), ERROR_INVALID_PARAMETER);
	free(ids);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- PerfQueryCounterData (spec 7.10, 8.2) ---------------------------------------------- */

static void test_data_example_8_2(void **state)
{
	/* the bytes of spec 8.2 from offset 0x30 (after the data header) */
	static const BYTE expect[216 - 48] = {
		/* 0030 */ 0x00,
		0x00,
		0x00,
		0x00,
		0x01,
		0x00,
		0x00,
		0x00,
		0x20,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		/* 0040 */ 0x04,
		0x00,
		0x00,
		0x00,
		0x10,
		0x00,
		0x00,
		0x00,
		0x2a,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		/* 0050 */ 0x00,
		0x00,
		0x00,
		0x00,
		0x06,
		0x00,
		0x00,
		0x00,
		0x88,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		/* 0060 */ 0x10,
		0x00,
		0x00,
		0x00,
		0x02,
		0x00,
		0x00,
		0x00,
		0x01,
		0x00,
		0x00,
		0x00,
		0x02,
		0x00,
		0x00,
		0x00,
		/* 0070 */ 0x68,
		0x00,
		0x00,
		0x00,
		0x02,
		0x00,
		0x00,
		0x00,
		0x10,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		/* 0080 */ 0x61,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x04,
		0x00,
		0x00,
		0x00,
		0x10,
		0x00,
		0x00,
		0x00,
		/* 0090 */ 0x05,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x08,
		0x00,
		0x00,
		0x00,
		0x10,
		0x00,
		0x00,
		0x00,
		/* 00a0 */ 0x00,
		0x00,
		0x00,
		0x00,
		0x01,
		0x00,
		0x00,
		0x00,
		0x10,
		0x00,
		0x00,
		0x00,
		0x01,
		0x00,
		0x00,
		0x00,
		/* 00b0 */ 0x62,
		0x00,
		0x62,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x04,
		0x00,
		0x00,
		0x00,
		0x10,
		0x00,
		0x00,
		0x00,
		/* 00c0 */ 0x06,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x08,
		0x00,
		0x00,
		0x00,
		0x10,
		0x00,
		0x00,
		0x00,
		/* 00d0 */ 0x07,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
		0x00,
	};
	static const ULONG id1[] = {1}, type1[] = {PERF_COUNTER_RAWCOUNT};
	HANDLE h = start_provider(), q = open_query();
	GUID s = add_set(h, PERF_COUNTERSET_SINGLE_INSTANCE, 1, id1, type1);
	GUID m = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES, 2, ids12, types_dw_large);
	PPERF_COUNTERSET_INSTANCE si, a, bb;
	PERF_DATA_HEADER *dh;
	BYTE buf[512];
	size_t len;
	DWORD n = 0;

	(void)state;
	si = create(h, &s, "_Default", 0);
	a = create(h, &m, "a", 0);
	bb = create(h, &m, "bb", 1);
	assert_int_equal(PerfSetULongCounterValue(h, si, 1, 42), ERROR_SUCCESS);
	assert_int_equal(PerfSetULongCounterValue(h, a, 1, 5), ERROR_SUCCESS);
	assert_int_equal(PerfSetULongLongCounterValue(h, a, 2, 0x100000000ull), ERROR_SUCCESS);
	assert_int_equal(PerfSetULongCounterValue(h, bb, 1, 6), ERROR_SUCCESS);
	assert_int_equal(PerfSetULongLongCounterValue(h, bb, 2, 7), ERROR_SUCCESS);
	/* two blocks in one call: S counter 1, no name; M every counter, "*" */
	len = cons_ident(buf, 0, &s, 1, CONS_ANY_INSTANCE, NULL);
	len = cons_ident(buf, len, &m, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*");
	assert_int_equal(len, 88);
	assert_int_equal(PerfAddCounters(q, (PPERF_COUNTER_IDENTIFIER)buf, (DWORD)len),
			 ERROR_SUCCESS);
	assert_int_equal(cons_ident_status(buf, 0), ERROR_SUCCESS);
	assert_int_equal(cons_ident_status(buf, 40), ERROR_SUCCESS);

	assert_int_equal(PerfQueryCounterData(q, NULL, 0, &n), ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(n, 216);
	assert_int_equal(PerfQueryCounterData(q, (PPERF_DATA_HEADER)buf, 215, &n),
			 ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(n, 216);
	memset(buf, 0xAA, sizeof(buf));
	assert_int_equal(PerfQueryCounterData(q, (PPERF_DATA_HEADER)buf, sizeof(buf), &n),
			 ERROR_SUCCESS);
	assert_int_equal(n, 216);
	dh = (PERF_DATA_HEADER *)buf;
	assert_int_equal(dh->dwTotalSize, 216);
	assert_int_equal(dh->dwNumCounters, 2);
	check_times(dh);
	assert_memory_equal(buf + 48, expect, sizeof(expect));
	/* the same bytes at an odd address */
	memset(buf, 0xAA, sizeof(buf));
	assert_int_equal(PerfQueryCounterData(q, (PPERF_DATA_HEADER)(buf + 1), 300, &n),
			 ERROR_SUCCESS);
	assert_int_equal(n, 216);
	assert_memory_equal(buf + 1 + 48, expect, sizeof(expect));
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_data_single_set_types(void **state)
{
	static const ULONG ids[] = {1, 2, 3};
	static const ULONG types[] = {PERF_COUNTER_RAWCOUNT, PERF_COUNTER_LARGE_RAWCOUNT,
				      PERF_COUNTER_COUNTER};
	HANDLE h = start_provider(), q = open_query();
	GUID s = add_set(h, PERF_COUNTERSET_SINGLE_INSTANCE, 3, ids, types);
	const PERF_COUNTER_HEADER *ch;
	const PERF_MULTI_COUNTERS *mc;
	PPERF_COUNTERSET_INSTANCE si;
	BYTE *buf;
	DWORD len;

	(void)state;
	assert_int_equal(cons_add(q, &s, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, NULL), 0);
	assert_int_equal(cons_add(q, &s, 2, CONS_ANY_INSTANCE, "*"), 0);
	/* no instance yet: choice ERROR_WMI_INSTANCE_NOT_FOUND, as a PERF_ERROR_RETURN */
	assert_int_equal(cons_data(q, &buf, &len), ERROR_SUCCESS);
	assert_int_equal(len, 48 + 16 + 16);
	ch = cons_header(buf, 0);
	assert_int_equal(ch->dwType, PERF_ERROR_RETURN);
	assert_int_equal(ch->dwStatus, ERROR_WMI_INSTANCE_NOT_FOUND);
	assert_int_equal(ch->dwSize, 16);
	free(buf);

	si = create(h, &s, "only", 9);
	assert_int_equal(PerfSetULongCounterValue(h, si, 1, 11), 0);
	assert_int_equal(PerfSetULongLongCounterValue(h, si, 2, 0x123456789ull), 0);
	assert_int_equal(PerfSetULongCounterValue(h, si, 3, 33), 0);
	assert_int_equal(cons_data(q, &buf, &len), ERROR_SUCCESS);
	/* wildcard: PERF_MULTIPLE_COUNTERS; 3 ids make PERF_MULTI_COUNTERS 20 -> 24 bytes */
	ch = cons_header(buf, 0);
	assert_int_equal(ch->dwType, PERF_MULTIPLE_COUNTERS);
	assert_int_equal(ch->dwStatus, 0);
	assert_int_equal(ch->dwSize, 16 + 24 + 3 * 16);
	mc = (const PERF_MULTI_COUNTERS *)(ch + 1);
	assert_int_equal(mc->dwSize, 24);
	assert_int_equal(mc->dwCounters, 3);
	assert_int_equal(((const DWORD *)(mc + 1))[0], 1);
	assert_int_equal(((const DWORD *)(mc + 1))[2], 3);
	assert_int_equal(((const DWORD *)(mc + 1))[3], 0); /* padding */
	assert_int_equal(cons_value((const BYTE *)mc + 24), 11);
	assert_int_equal(cons_value((const BYTE *)mc + 40), 0x123456789ll);
	assert_int_equal(cons_value((const BYTE *)mc + 56), 33);
	/* one counter: PERF_SINGLE_COUNTER */
	ch = cons_header(buf, 1);
	assert_int_equal(ch->dwType, PERF_SINGLE_COUNTER);
	assert_int_equal(ch->dwSize, 32);
	assert_int_equal(cons_value((const BYTE *)(ch + 1)), 0x123456789ll);
	assert_int_equal(len, 48 + 88 + 32);
	free(buf);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static int rows_find(const struct cons_row *rows, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++) {
		if (!strcmp(rows[i].name, name))
			return i;
	}
	return -1;
}

static void test_data_wildcards(void **state)
{
	static const struct {
		ULONG counter, instance;
		const char *name;
		const char *expect; /* names in slot order, space-separated */
	} cases[] = {
		{PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*", "alpha beta alphabet gamma"},
		{PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "alpha*", "alpha alphabet"},
		{1, CONS_ANY_INSTANCE, "?eta", "beta"},
		{2, CONS_ANY_INSTANCE, "*a", "alpha beta gamma"},
		{1, CONS_ANY_INSTANCE, "gamma", "gamma"},
		{PERF_WILDCARD_COUNTER, 1, "*", "alpha gamma"},
		{1, 2, "alpha*", ""},
		{1, CONS_ANY_INSTANCE, "Alpha", ""}, /* case-sensitive */
		{1, CONS_ANY_INSTANCE, "*p*a*", "alpha alphabet"},
	};
	HANDLE h = start_provider(), q = open_query();
	GUID m = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES, 2, ids12, types_dw_large);
	PPERF_COUNTERSET_INSTANCE in[4];
	const char *names[] = {"alpha", "beta", "alphabet", "gamma"};
	const ULONG ids[] = {1, 2, 3, 1};
	struct cons_row rows[8];
	int nr, nc, i;
	size_t c;
	BYTE *buf;
	DWORD len;

	(void)state;
	for (i = 0; i < 4; i++) {
		in[i] = create(h, &m, names[i], ids[i]);
		assert_int_equal(PerfSetULongCounterValue(h, in[i], 1, 100 + i), 0);
		assert_int_equal(PerfSetULongLongCounterValue(h, in[i], 2, 200 + i), 0);
	}
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		assert_int_equal(
			cons_add(q, &m, cases[c].counter, cases[c].instance, cases[c].name),
			ERROR_SUCCESS);
	assert_int_equal(cons_data(q, &buf, &len), ERROR_SUCCESS);
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const PERF_COUNTER_HEADER *ch = cons_header(buf, (ULONG)c);
		char got[128] = "";

		assert_non_null(ch);
		assert_int_equal(ch->dwStatus, 0);
		assert_int_equal(ch->dwType, cases[c].counter == PERF_WILDCARD_COUNTER
						     ? PERF_COUNTERSET
						     : PERF_MULTIPLE_INSTANCES);
		assert_int_equal(cons_multi(ch, rows, 8, &nr, &nc), 0);
		assert_int_equal(nc, cases[c].counter == PERF_WILDCARD_COUNTER ? 2 : 1);
		for (i = 0; i < nr; i++) {
			int k = rows_find(rows, nr, rows[i].name), j;

			assert_int_equal(k, i);
			for (j = 0; j < 4 && strcmp(names[j], rows[i].name); j++)
				;
			assert_true(j < 4);
			assert_int_equal(rows[i].id, ids[j]);
			if (cases[c].counter == 2)
				assert_int_equal(rows[i].v[0], 200 + j);
			else
				assert_int_equal(rows[i].v[0], 100 + j);
			if (nc == 2)
				assert_int_equal(rows[i].v[1], 200 + j);
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", i ? " " : "",
				 rows[i].name);
		}
		assert_string_equal(got, cases[c].expect);
	}
	free(buf);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_data_values_follow(void **state)
{
	HANDLE h = start_provider(), q = open_query();
	GUID m = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES, 2, ids12, types_dw_large);
	PPERF_COUNTERSET_INSTANCE a = create(h, &m, "a", 0);
	const PERF_COUNTER_HEADER *ch;
	struct cons_row rows[2];
	int nr, nc;
	BYTE *buf;
	DWORD len;

	(void)state;
	assert_int_equal(cons_add(q, &m, 1, CONS_ANY_INSTANCE, "a"), 0);
	assert_int_equal(PerfSetULongCounterValue(h, a, 1, 0xFFFFFFFF), 0);
	assert_int_equal(cons_data(q, &buf, &len), 0);
	ch = cons_header(buf, 0);
	assert_int_equal(cons_multi(ch, rows, 2, &nr, &nc), 0);
	assert_int_equal(nr, 1);
	assert_int_equal(rows[0].v[0], 0xFFFFFFFFll);
	free(buf);
	/* a DWORD counter wraps, and only its 4 bytes are returned */
	assert_int_equal(PerfIncrementULongCounterValue(h, a, 1, 3), 0);
	assert_int_equal(cons_data(q, &buf, &len), 0);
	assert_int_equal(cons_multi(cons_header(buf, 0), rows, 2, &nr, &nc), 0);
	assert_int_equal(rows[0].v[0], 2);
	free(buf);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_data_set_unregistered(void **state)
{
	HANDLE h = start_provider(), q = open_query();
	GUID m = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES, 2, ids12, types_dw_large);
	const PERF_COUNTER_HEADER *ch;
	BYTE *buf;
	DWORD len;

	(void)state;
	create(h, &m, "a", 0);
	assert_int_equal(cons_add(q, &m, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	assert_int_equal(cons_data(q, &buf, &len), 0);
	assert_int_equal(cons_header(buf, 0)->dwType, PERF_COUNTERSET);
	free(buf);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_int_equal(perflib_unregister_counterset(&m, true), 0);
	/* the spec stays in the query; its counter set is gone */
	assert_int_equal(cons_data(q, &buf, &len), 0);
	ch = cons_header(buf, 0);
	assert_int_equal(ch->dwType, PERF_ERROR_RETURN);
	assert_int_equal(ch->dwStatus, ERROR_WMI_GUID_NOT_FOUND);
	free(buf);
	/* and can still be deleted */
	assert_int_equal(cons_delete(q, &m, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
}

/* ---- PerfQueryCounterInfo, PerfDeleteCounters (spec 7.8, 7.9) ---------------------------- */

static void test_info_and_delete(void **state)
{
	HANDLE h = start_provider(), q = open_query();
	GUID m = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES, 2, ids12, types_dw_large);
	GUID s = add_set(h, PERF_COUNTERSET_SINGLE_INSTANCE, 2, ids12, types_dw_large);
	BYTE buf[512], expect[512];
	size_t len;
	DWORD n;
	PERF_COUNTER_IDENTIFIER *id;

	(void)state;
	assert_int_equal(cons_add(q, &m, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	assert_int_equal(cons_add(q, &s, 2, CONS_ANY_INSTANCE, NULL), 0);
	assert_int_equal(cons_add(q, &m, 1, 4, "w?rk*"), 0);
	assert_int_equal(PerfQueryCounterInfo(q, NULL, 0, NULL), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfQueryCounterInfo(q, NULL, 8, &n), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfQueryCounterInfo(q, NULL, 0, &n), ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(n, 48 + 40 + 56);
	assert_int_equal(PerfQueryCounterInfo(q, (PPERF_COUNTER_IDENTIFIER)buf, n - 1, &n),
			 ERROR_NOT_ENOUGH_MEMORY);
	memset(buf, 0xAA, sizeof(buf));
	assert_int_equal(PerfQueryCounterInfo(q, (PPERF_COUNTER_IDENTIFIER)buf, sizeof(buf), &n),
			 ERROR_SUCCESS);
	assert_int_equal(n, 144);
	/* the same blocks as added, with Index = position in the data */
	len = cons_ident(expect, 0, &m, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*");
	len = cons_ident(expect, len, &s, 2, CONS_ANY_INSTANCE, NULL);
	len = cons_ident(expect, len, &m, 1, 4, "w?rk*");
	((PERF_COUNTER_IDENTIFIER *)(expect + 48))->Index = 1;
	((PERF_COUNTER_IDENTIFIER *)(expect + 88))->Index = 2;
	assert_int_equal(len, 144);
	assert_memory_equal(buf, expect, 144);

	/* choice: deleting a specification that is not there: Status ERROR_NOT_FOUND */
	assert_int_equal(cons_delete(q, &m, 2, CONS_ANY_INSTANCE, "*"), ERROR_NOT_FOUND);
	assert_int_equal(cons_delete(q, &s, 2, CONS_ANY_INSTANCE, NULL), ERROR_SUCCESS);
	assert_int_equal(cons_delete(q, &s, 2, CONS_ANY_INSTANCE, NULL), ERROR_NOT_FOUND);
	assert_int_equal(PerfQueryCounterInfo(q, (PPERF_COUNTER_IDENTIFIER)buf, sizeof(buf), &n),
			 ERROR_SUCCESS);
	assert_int_equal(n, 104);
	id = (PERF_COUNTER_IDENTIFIER *)(buf + 48);
	assert_int_equal(id->CounterId, 1);
	assert_int_equal(id->Index, 1);
	/* malformed input is refused as for PerfAddCounters */
	assert_int_equal(PerfDeleteCounters(q, (PPERF_COUNTER_IDENTIFIER)buf, 8),
			 ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- PerfQueryCounterSetRegistrationInfo (spec 7.6, 2.9, 3.15-3.18, 8.5) ------------------ */

/* the registration info of @code into a malloc'd buffer, with the sizing call checked */
static BYTE *reginfo(const GUID *g, PerfRegInfoType code, DWORD lang, DWORD *ret_len)
{
	DWORD n = 0, m = 0;
	BYTE *buf;

	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, g, code, lang, NULL, 0, &n),
			 ERROR_NOT_ENOUGH_MEMORY);
	assert_true(n > 0);
	buf = malloc(n + 8);
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, g, code, lang, buf, n - 1, &m),
			 ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(m, n);
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, g, code, lang, buf, n + 8, &m),
			 ERROR_SUCCESS);
	assert_int_equal(m, n);
	*ret_len = n;
	return buf;
}

static void test_reginfo_on_demand(void **state)
{
	static const ULONG ids[] = {7, 300};
	HANDLE h = start_provider();
	GUID g = add_set(h, PERF_COUNTERSET_MULTI_INSTANCES, 2, ids, types_dw_large);
	GUID pg = prov_provider_guid(), unknown = prov_guid();
	const PERF_COUNTERSET_REG_INFO *ri;
	const PERF_COUNTER_REG_INFO *ci;
	const PERF_STRING_BUFFER_HEADER *sb;
	const PERF_STRING_COUNTER_HEADER *sc;
	char expect_name[64];
	BYTE *buf;
	DWORD len, n;

	(void)state;
	buf = reginfo(&g, PERF_REG_COUNTERSET_STRUCT, 0, &len);
	assert_int_equal(len, 32 + 2 * 48);
	ri = (const PERF_COUNTERSET_REG_INFO *)buf;
	assert_memory_equal(&ri->CounterSetGuid, &g, sizeof(GUID));
	assert_int_equal(ri->NumCounters, 2);
	assert_int_equal(ri->InstanceType, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(ri->DetailLevel, PERF_DETAIL_NOVICE);
	ci = (const PERF_COUNTER_REG_INFO *)(ri + 1);
	assert_int_equal(ci[0].CounterId, 7);
	assert_int_equal(ci[0].Type, PERF_COUNTER_RAWCOUNT);
	assert_int_equal(ci[1].CounterId, 300);
	assert_int_equal(ci[1].Type, PERF_COUNTER_LARGE_RAWCOUNT);
	assert_int_equal(ci[1].BaseCounterId, 0xFFFFFFFF);
	assert_int_equal(ci[1].MultiId, 0xFFFFFFFF);
	assert_int_equal(ci[1].AggregateFunc, PERF_AGGREGATE_UNDEFINED);
	free(buf);
	/* one counter by id (requestLangId) */
	buf = reginfo(&g, PERF_REG_COUNTER_STRUCT, 300, &len);
	assert_int_equal(len, 48);
	assert_int_equal(((const PERF_COUNTER_REG_INFO *)buf)->CounterId, 300);
	free(buf);
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, &g, PERF_REG_COUNTER_STRUCT, 8,
							     NULL, 0, &n),
			 ERROR_NOT_FOUND);
	/* no manifest: the name is the GUID in registry form, in any language */
	snprintf(expect_name, sizeof(expect_name),
		 "{%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X}", g.Data1, g.Data2, g.Data3,
		 g.Data4[0], g.Data4[1], g.Data4[2], g.Data4[3], g.Data4[4], g.Data4[5], g.Data4[6],
		 g.Data4[7]);
	buf = reginfo(&g, PERF_REG_COUNTERSET_NAME_STRING, 0x409, &len);
	assert_int_equal(len, 39 * 2);
	assert_true(cons_weq((const WCHAR *)buf, 38, expect_name));
	assert_int_equal(((const WCHAR *)buf)[38], 0);
	free(buf);
	buf = reginfo(&g, PERF_REG_COUNTERSET_ENGLISH_NAME, 0, &len);
	assert_true(cons_weq((const WCHAR *)buf, 38, expect_name));
	free(buf);
	/* help and provider name: empty strings */
	buf = reginfo(&g, PERF_REG_COUNTERSET_HELP_STRING, 0x407, &len);
	assert_int_equal(len, 2);
	assert_int_equal(((const WCHAR *)buf)[0], 0);
	free(buf);
	buf = reginfo(&g, PERF_REG_PROVIDER_NAME, 0, &len);
	assert_int_equal(len, 2);
	free(buf);
	buf = reginfo(&g, PERF_REG_PROVIDER_GUID, 0, &len);
	assert_int_equal(len, 16);
	assert_memory_equal(buf, &pg, 16);
	free(buf);
	/* counter names: the decimal ids */
	buf = reginfo(&g, PERF_REG_COUNTER_NAME_STRINGS, 0x409, &len);
	sb = (const PERF_STRING_BUFFER_HEADER *)buf;
	sc = (const PERF_STRING_COUNTER_HEADER *)(sb + 1);
	assert_int_equal(len, 8 + 16 + 4 + 8);
	assert_int_equal(sb->dwSize, len);
	assert_int_equal(sb->dwCounters, 2);
	assert_int_equal(sc[0].dwCounterId, 7);
	assert_int_equal(sc[0].dwOffset, 24);
	assert_true(cons_weq((const WCHAR *)(buf + 24), 1, "7"));
	assert_int_equal(sc[1].dwCounterId, 300);
	assert_int_equal(sc[1].dwOffset, 28);
	assert_true(cons_weq((const WCHAR *)(buf + 28), 3, "300"));
	free(buf);
	buf = reginfo(&g, PERF_REG_COUNTER_ENGLISH_NAMES, 0, &len);
	assert_int_equal(len, 36);
	free(buf);
	/* help strings: present and empty */
	buf = reginfo(&g, PERF_REG_COUNTER_HELP_STRINGS, 0, &len);
	sb = (const PERF_STRING_BUFFER_HEADER *)buf;
	sc = (const PERF_STRING_COUNTER_HEADER *)(sb + 1);
	assert_int_equal(len, 8 + 16 + 2 + 2);
	assert_int_equal(sc[0].dwOffset, 24);
	assert_int_equal(sc[1].dwOffset, 26);
	free(buf);
	/* parameters and unknown things */
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, &g, 0, 0, NULL, 0, &n),
			 ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, &g, 11, 0, NULL, 0, &n),
			 ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, &g, PERF_REG_PROVIDER_GUID, 0,
							     NULL, 0, NULL),
			 ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, &g, PERF_REG_PROVIDER_GUID, 0,
							     NULL, 16, &n),
			 ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, NULL, PERF_REG_PROVIDER_GUID, 0,
							     NULL, 0, &n),
			 ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfQueryCounterSetRegistrationInfo(NULL, &unknown, PERF_REG_PROVIDER_GUID,
							     0, NULL, 0, &n),
			 ERROR_WMI_GUID_NOT_FOUND);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- several processes ------------------------------------------------------------------- */

struct child_args {
	GUID set;
	const char *prefix;
	int ready[2]; /* child -> parent: instances created */
	int done[2];  /* parent -> child: finish */
	ULONG value;
};

/* a provider process: two instances "<prefix>-0/1", then wait for the parent */
static int child_provider(void *arg)
{
	struct child_args *a = arg;
	struct prov_tmpl t;
	GUID pg = prov_provider_guid();
	HANDLE h;
	PPERF_COUNTERSET_INSTANCE in;
	char name[64];
	int i;

	prov_tmpl_init(&t, a->set, PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(&t, 1, PERF_COUNTER_RAWCOUNT, 0);
	prov_tmpl_add(&t, 2, PERF_COUNTER_LARGE_RAWCOUNT, 0);
	if (PerfStartProvider(&pg, NULL, &h) || prov_tmpl_register(h, &t))
		return 10;
	for (i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "%s-%d", a->prefix, i);
		in = PerfCreateInstance(h, &a->set, cons_w(name), (ULONG)i);
		if (!in || PerfSetULongCounterValue(h, in, 1, a->value + (ULONG)i))
			return 11;
	}
	if (tl_signal(a->ready[1]) || tl_await(a->done[0], 20000))
		return 12;
	return PerfStopProvider(h) ? 13 : 0;
}

static pid_t spawn_provider(struct child_args *a)
{
	pid_t pid;

	assert_int_equal(tl_pipe(a->ready), 0);
	assert_int_equal(tl_pipe(a->done), 0);
	pid = tl_fork(child_provider, a);
	assert_true(pid > 0);
	assert_int_equal(tl_await(a->ready[0], 10000), 0);
	return pid;
}

static void close_pipes(struct child_args *a)
{
	close(a->ready[0]);
	close(a->ready[1]);
	close(a->done[0]);
	close(a->done[1]);
}

static void test_two_provider_processes(void **state)
{
	struct child_args a = {.set = prov_guid(), .prefix = "p1", .value = 10};
	struct child_args b = {.set = a.set, .prefix = "p2", .value = 20};
	struct cons_inst in[8];
	struct cons_row rows[8];
	HANDLE q = open_query();
	pid_t pa, pb;
	BYTE *buf;
	DWORD len;
	int n, nc, i;

	(void)state;
	pa = spawn_provider(&a);
	pb = spawn_provider(&b);
	assert_int_equal(cons_enum(&a.set, &buf, &len), ERROR_SUCCESS);
	n = cons_instances(buf, len, in, 8);
	assert_int_equal(n, 4);
	free(buf);
	assert_int_equal(cons_add(q, &a.set, 1, CONS_ANY_INSTANCE, "p?-1"), 0);
	assert_int_equal(cons_data(q, &buf, &len), 0);
	assert_int_equal(cons_multi(cons_header(buf, 0), rows, 8, &n, &nc), 0);
	assert_int_equal(n, 2);
	for (i = 0; i < 2; i++) {
		if (!strcmp(rows[i].name, "p1-1"))
			assert_int_equal(rows[i].v[0], 11);
		else if (!strcmp(rows[i].name, "p2-1"))
			assert_int_equal(rows[i].v[0], 21);
		else
			fail_msg("unexpected instance %s", rows[i].name);
	}
	free(buf);
	/* one provider stops: its instances go, the other's stay */
	assert_int_equal(tl_signal(a.done[1]), 0);
	assert_int_equal(tl_wait(pa, 10000), 0);
	assert_int_equal(cons_enum(&a.set, &buf, &len), ERROR_SUCCESS);
	n = cons_instances(buf, len, in, 8);
	assert_int_equal(n, 2);
	assert_true(cons_weq(in[0].name, in[0].len, "p2-0") ||
		    cons_weq(in[0].name, in[0].len, "p2-1"));
	free(buf);
	assert_int_equal(tl_signal(b.done[1]), 0);
	assert_int_equal(tl_wait(pb, 10000), 0);
	close_pipes(&a);
	close_pipes(&b);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
}

static void test_provider_killed(void **state)
{
	struct child_args a = {.set = prov_guid(), .prefix = "k", .value = 1};
	struct cons_row rows[4];
	HANDLE q = open_query();
	pid_t pid;
	BYTE *buf;
	DWORD len;
	int n, nc;

	(void)state;
	pid = spawn_provider(&a);
	assert_int_equal(cons_add(q, &a.set, PERF_WILDCARD_COUNTER, CONS_ANY_INSTANCE, "*"), 0);
	assert_int_equal(cons_enum(&a.set, &buf, &len), ERROR_SUCCESS);
	assert_int_equal(cons_instances(buf, len, NULL, 0), 2);
	free(buf);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(tl_wait(pid, 10000), 128 + SIGKILL);
	/* nothing of a killed provider shows, though its slots still hold its instances */
	assert_int_equal(cons_enum(&a.set, &buf, &len), ERROR_SUCCESS);
	assert_int_equal(len, 0);
	free(buf);
	assert_int_equal(cons_data(q, &buf, &len), 0);
	assert_int_equal(cons_multi(cons_header(buf, 0), rows, 4, &n, &nc), 0);
	assert_int_equal(n, 0);
	free(buf);
	close_pipes(&a);
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_close),
		cmocka_unit_test(test_handles_not_reused),
		cmocka_unit_test(test_machines),
		cmocka_unit_test(test_data_empty_query),
		cmocka_unit_test(test_add_wt_rows),
		cmocka_unit_test(test_add_malformed_blocks),
		cmocka_unit_test(test_add_statuses),
		cmocka_unit_test(test_enum_example_8_1),
		cmocka_unit_test(test_enum_unknown_and_empty),
		cmocka_unit_test(test_enum_single_instance),
		cmocka_unit_test(test_enum_counter_sets),
		cmocka_unit_test(test_data_example_8_2),
		cmocka_unit_test(test_data_single_set_types),
		cmocka_unit_test(test_data_wildcards),
		cmocka_unit_test(test_data_values_follow),
		cmocka_unit_test(test_data_set_unregistered),
		cmocka_unit_test(test_info_and_delete),
		cmocka_unit_test(test_reginfo_on_demand),
		cmocka_unit_test(test_two_provider_processes),
		cmocka_unit_test(test_provider_killed),
	};

	tl_require_bpf();
	return cmocka_run_group_tests_name("api_consumer", tests, tl_group_setup,
					   tl_group_teardown);
}

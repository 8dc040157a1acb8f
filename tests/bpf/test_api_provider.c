// SPDX-License-Identifier: MIT
/*
 * test_api_provider.c - conformance of the provider API with the Windows behaviour in
 * ../shared/spec/perflib-api.md sections 4, 5 and 8.3 (every WT and DOC row) and the
 * choices written in include/perflib.h. Public headers only: this file also runs against
 * the shared library. Every test uses counter sets of its own (prov_guid()).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "perflib.h"
#include "perflib-linux.h"
#include "testlib.h"
#include "../helpers/prov_util.h"

/* ---- PerfStartProvider / PerfStartProviderEx (spec 5.1, 5.2) -------------------------- */

static void test_start_null_guid(void **state)
{
	HANDLE h = (HANDLE)0x1234;

	(void)state;
	assert_int_equal(PerfStartProvider(NULL, NULL, &h), ERROR_INVALID_PARAMETER);
	assert_ptr_equal(h, (HANDLE)0x1234); /* WT: handle not modified */
	assert_int_equal(PerfStartProviderEx(NULL, NULL, &h), ERROR_INVALID_PARAMETER);
	assert_ptr_equal(h, (HANDLE)0x1234);
}

static void test_start_null_handle(void **state)
{
	GUID g = prov_provider_guid();

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, NULL), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfStartProviderEx(&g, NULL, NULL), ERROR_INVALID_PARAMETER);
}

static void test_start_success(void **state)
{
	GUID g = prov_provider_guid();
	HANDLE h = NULL;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	assert_non_null(h);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_startex_context_size(void **state)
{
	GUID g = prov_provider_guid();
	PERF_PROVIDER_CONTEXT ctx;
	HANDLE h = (HANDLE)0x1234;

	(void)state;
	memset(&ctx, 0, sizeof(ctx));
	/* WT: ContextSize 0 is refused and the handle left alone */
	assert_int_equal(PerfStartProviderEx(&g, &ctx, &h), ERROR_INVALID_PARAMETER);
	assert_ptr_equal(h, (HANDLE)0x1234);
	ctx.ContextSize = sizeof(ctx) - 1;
	assert_int_equal(PerfStartProviderEx(&g, &ctx, &h), ERROR_INVALID_PARAMETER);
	assert_ptr_equal(h, (HANDLE)0x1234);
	/* WT: 41 with every other field 0 is accepted */
	ctx.ContextSize = 41;
	assert_int_equal(PerfStartProviderEx(&g, &ctx, &h), ERROR_SUCCESS);
	assert_ptr_not_equal(h, (HANDLE)0x1234);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	ctx.ContextSize = sizeof(ctx);
	assert_int_equal(PerfStartProviderEx(&g, &ctx, &h), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_startex_null_context(void **state)
{
	GUID g = prov_provider_guid();
	HANDLE h = NULL;

	(void)state;
	/* DOC: optional (the header's choice: accepted) */
	assert_int_equal(PerfStartProviderEx(&g, NULL, &h), ERROR_SUCCESS);
	assert_non_null(h);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

struct mem_count {
	int allocs, frees;
};

static LPVOID CALLBACK count_alloc(SIZE_T size, LPVOID ctx)
{
	((struct mem_count *)ctx)->allocs++;
	return malloc(size);
}

static void CALLBACK count_free(LPVOID p, LPVOID ctx)
{
	((struct mem_count *)ctx)->frees++;
	free(p);
}

static void test_startex_mem_routines(void **state)
{
	GUID g = prov_provider_guid();
	PERF_PROVIDER_CONTEXT ctx;
	struct mem_count mc = {0, 0};
	HANDLE h = (HANDLE)0x1234;
	struct prov_tmpl t;

	(void)state;
	memset(&ctx, 0, sizeof(ctx));
	ctx.ContextSize = sizeof(ctx);
	/* DOC: MemFreeRoutine must be NULL when MemAllocRoutine is */
	ctx.MemFreeRoutine = count_free;
	assert_int_equal(PerfStartProviderEx(&g, &ctx, &h), ERROR_INVALID_PARAMETER);
	assert_ptr_equal(h, (HANDLE)0x1234);
	/* the header's choice: the reverse is refused too */
	ctx.MemFreeRoutine = NULL;
	ctx.MemAllocRoutine = count_alloc;
	assert_int_equal(PerfStartProviderEx(&g, &ctx, &h), ERROR_INVALID_PARAMETER);
	assert_ptr_equal(h, (HANDLE)0x1234);
	/* both: the library allocates through them and frees everything it allocated */
	ctx.MemFreeRoutine = count_free;
	ctx.pMemContext = &mc;
	assert_int_equal(PerfStartProviderEx(&g, &ctx, &h), ERROR_SUCCESS);
	prov_tmpl_std(&t, prov_guid(), PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	assert_non_null(PerfCreateInstance(h, &t.set.CounterSetGuid, u"m", 0));
	assert_true(mc.allocs > 0);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_int_equal(mc.frees, mc.allocs);
}

/* an allocator that fails its fail_at-th call (1-based; 0 = never) */
struct failing_mem {
	int calls, allocs, frees, fail_at;
};

static LPVOID CALLBACK failing_alloc(SIZE_T size, LPVOID ctx)
{
	struct failing_mem *m = ctx;

	if (++m->calls == m->fail_at)
		return NULL;
	m->allocs++;
	return malloc(size);
}

static void CALLBACK failing_free(LPVOID p, LPVOID ctx)
{
	((struct failing_mem *)ctx)->frees++;
	free(p);
}

/* every allocation of start and set info failing in turn: ERROR_OUTOFMEMORY, no leak */
static void test_out_of_memory(void **state)
{
	GUID g = prov_provider_guid(), set = prov_guid();
	PERF_PROVIDER_CONTEXT ctx;
	struct failing_mem mem;
	struct prov_tmpl t;
	HANDLE h;
	ULONG st;
	int k;

	(void)state;
	prov_tmpl_std(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	memset(&ctx, 0, sizeof(ctx));
	ctx.ContextSize = sizeof(ctx);
	ctx.MemAllocRoutine = failing_alloc;
	ctx.MemFreeRoutine = failing_free;
	ctx.pMemContext = &mem;
	for (k = 1; k < 100; k++) {
		memset(&mem, 0, sizeof(mem));
		mem.fail_at = k;
		h = (HANDLE)0x1234;
		/* the provider structure itself is the library's (a stale handle stays valid) */
		st = PerfStartProviderEx(&g, &ctx, &h);
		assert_int_equal(st, ERROR_SUCCESS);
		st = prov_tmpl_register(h, &t);
		if (st == ERROR_SUCCESS) {
			assert_non_null(PerfCreateInstance(h, &set, u"oom", 0));
			assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
			assert_int_equal(mem.frees, mem.allocs);
			break;
		}
		if (st != ERROR_OUTOFMEMORY)
			fail_msg("allocation %d failing: PerfSetCounterSetInfo gave %u", k, st);
		/* nothing half-registered: the same template works once memory is back */
		mem.fail_at = 0;
		assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
		assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
		assert_int_equal(mem.frees, mem.allocs);
	}
	/*
	 * at least the set, counters and id tables were tried (the per-slot tables are address
	 * space reserved with mmap, not the provider's memory routines: storage v2)
	 */
	assert_true(k >= 3);
	assert_true(k < 100);
}

static void test_start_same_guid_twice(void **state)
{
	GUID g = prov_provider_guid();
	HANDLE a = NULL, b = NULL;

	(void)state;
	/* WT: both succeed with distinct handles */
	assert_int_equal(PerfStartProvider(&g, NULL, &a), ERROR_SUCCESS);
	assert_int_equal(PerfStartProvider(&g, NULL, &b), ERROR_SUCCESS);
	assert_non_null(a);
	assert_non_null(b);
	assert_ptr_not_equal(a, b);
	assert_int_equal(PerfStopProvider(a), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(b), ERROR_SUCCESS);
}

/* ---- PerfSetCounterSetInfo (spec 5.4) -------------------------------------------------- */

static void test_setinfo_zero_counters(void **state)
{
	GUID g = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	prov_tmpl_init(&t, prov_guid(), PERF_COUNTERSET_SINGLE_INSTANCE);
	/* WT: NumCounters 0 with TemplateSize 40 */
	assert_int_equal(PerfSetCounterSetInfo(h, &t.set, sizeof(t.set)), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_setinfo_template_too_small(void **state)
{
	GUID g = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	prov_tmpl_init(&t, prov_guid(), PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(&t, 1, PERF_COUNTER_COUNTER, 0);
	prov_tmpl_add(&t, 2, PERF_COUNTER_COUNTER, 0);
	assert_int_equal(PerfSetCounterSetInfo(h, &t.set, prov_tmpl_size(&t) - 1),
			 ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfSetCounterSetInfo(h, &t.set, 40 + 32), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfSetCounterSetInfo(h, &t.set, 39), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfSetCounterSetInfo(h, &t.set, 0), ERROR_INVALID_PARAMETER);
	/* the refused calls registered nothing: the exact size works afterwards */
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_setinfo_template_larger(void **state)
{
	GUID g = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	prov_tmpl_init(&t, prov_guid(), PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(&t, 1, PERF_COUNTER_COUNTER, 0);
	/* WT: NumCounters 1 with the size for 2 succeeds */
	assert_int_equal(PerfSetCounterSetInfo(h, &t.set, 40 + 2 * 32), ERROR_SUCCESS);
	assert_non_null(PerfCreateInstance(h, &t.set.CounterSetGuid, u"x", 1));
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_setinfo_provider_guid_differs(void **state)
{
	GUID g = prov_provider_guid(), other = prov_guid();
	struct prov_tmpl t;
	HANDLE h;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	prov_tmpl_std(&t, prov_guid(), PERF_COUNTERSET_MULTI_INSTANCES);
	t.set.ProviderGuid = other;
	/* WT: the template's ProviderGuid need not be the provider's */
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_setinfo_twice(void **state)
{
	GUID g = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h, h2;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	prov_tmpl_std(&t, prov_guid(), PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	/* WT: the same counter set on the same provider */
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_ALREADY_EXISTS);
	/* another provider of the process may register it too */
	assert_int_equal(PerfStartProvider(&g, NULL, &h2), ERROR_SUCCESS);
	assert_int_equal(prov_tmpl_register(h2, &t), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h2), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_setinfo_null(void **state)
{
	GUID g = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h;

	(void)state;
	prov_tmpl_std(&t, prov_guid(), PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(PerfSetCounterSetInfo(NULL, &t.set, prov_tmpl_size(&t)),
			 ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	assert_int_equal(PerfSetCounterSetInfo(h, NULL, prov_tmpl_size(&t)),
			 ERROR_INVALID_PARAMETER);
	/* a pointer that is not a provider handle */
	assert_int_equal(PerfSetCounterSetInfo((HANDLE)&t, &t.set, prov_tmpl_size(&t)),
			 ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_setinfo_instance_type(void **state)
{
	static const ULONG good[] = {
		PERF_COUNTERSET_SINGLE_INSTANCE,	  PERF_COUNTERSET_MULTI_INSTANCES,
		PERF_COUNTERSET_SINGLE_AGGREGATE,	  PERF_COUNTERSET_MULTI_AGGREGATE,
		PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY, PERF_COUNTERSET_INSTANCE_AGGREGATE,
	};
	static const ULONG bad[] = {1, 3, 8, 0x10, 0x20, 0xFFFFFFFF};
	GUID g = prov_provider_guid();
	struct prov_tmpl t;
	unsigned int i;
	HANDLE h;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		prov_tmpl_std(&t, prov_guid(), bad[i]);
		assert_int_equal(prov_tmpl_register(h, &t), ERROR_INVALID_PARAMETER);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		prov_tmpl_std(&t, prov_guid(), good[i]);
		assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	}
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_setinfo_duplicate_ids(void **state)
{
	GUID g = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	prov_tmpl_init(&t, prov_guid(), PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(&t, 7, PERF_COUNTER_COUNTER, 0);
	prov_tmpl_add(&t, 8, PERF_COUNTER_COUNTER, 0);
	prov_tmpl_add(&t, 7, PERF_COUNTER_BULK_COUNT, 0);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_INVALID_PARAMETER);
	/* the same with ids past the dense lookup range */
	prov_tmpl_init(&t, prov_guid(), PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(&t, 100000, PERF_COUNTER_COUNTER, 0);
	prov_tmpl_add(&t, 100000, PERF_COUNTER_COUNTER, 0);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_INVALID_PARAMETER);
	/* a refused template registered nothing: the corrected one is accepted */
	t.c[1].CounterId = 100001;
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	assert_non_null(PerfCreateInstance(h, &t.set.CounterSetGuid, u"ok", 0));
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_setinfo_counter_count_limits(void **state)
{
	static struct {
		PERF_COUNTERSET_INFO set;
		PERF_COUNTER_INFO c[4097];
	} big;
	GUID g = prov_provider_guid();
	unsigned int i;
	HANDLE h;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	memset(&big, 0, sizeof(big));
	big.set.CounterSetGuid = prov_guid();
	big.set.InstanceType = PERF_COUNTERSET_MULTI_INSTANCES;
	for (i = 0; i < 4097; i++) {
		big.c[i].CounterId = i;
		big.c[i].Type = PERF_COUNTER_RAWCOUNT;
	}
	/* 40 + 32 * N must not wrap around in 32 bits */
	big.set.NumCounters = 0x08000000;
	assert_int_equal(PerfSetCounterSetInfo(h, &big.set, 40), ERROR_INVALID_PARAMETER);
	big.set.NumCounters = 0xFFFFFFFF;
	assert_int_equal(PerfSetCounterSetInfo(h, &big.set, 0xFFFFFFFF), ERROR_INVALID_PARAMETER);
	/* more than a counter set holds (PERFLIB_MAX_COUNTERS, 4096) */
	big.set.NumCounters = 4097;
	assert_int_equal(PerfSetCounterSetInfo(h, &big.set, sizeof(big)), ERROR_INVALID_PARAMETER);
	big.set.NumCounters = 4096;
	assert_int_equal(PerfSetCounterSetInfo(h, &big.set, sizeof(big)), ERROR_SUCCESS);
	assert_non_null(PerfCreateInstance(h, &big.set.CounterSetGuid, u"wide", 0));
	assert_int_equal(big.c[4095].Offset, 8 * 4095);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_setinfo_variable_len(void **state)
{
	GUID g = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	prov_tmpl_init(&t, prov_guid(), PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(&t, 1, PERF_COUNTER_COUNTER, 0);
	prov_tmpl_add(&t, 2, PERF_COUNTER_TEXT, 0);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_setinfo_offsets_written_back(void **state)
{
	GUID g = prov_provider_guid();
	struct prov_tmpl t;
	unsigned int i;
	HANDLE h;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	prov_tmpl_std(&t, prov_guid(), PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(&t, 9, PERF_COUNTER_LARGE_RAWCOUNT, 0);
	for (i = 0; i < t.set.NumCounters; i++)
		t.c[i].Size = 32; /* WT: Size is ignored for the layout */
	/* WT: garbage Offsets (0xDEADBEEF) are accepted; the library writes 8 * position */
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	for (i = 0; i < t.set.NumCounters; i++)
		assert_int_equal(t.c[i].Offset, 8 * i);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static int warnings;

static int count_warnings(enum perflib_log_level level, const char *fmt, va_list ap)
{
	(void)fmt;
	(void)ap;
	warnings += level == PERFLIB_WARN;
	return 0;
}

/* a counter set pinned with one template cannot be provided with another (header) */
static void test_setinfo_registration_differs(void **state)
{
	GUID g = prov_provider_guid(), set = prov_guid();
	perflib_print_fn_t old;
	struct prov_tmpl t;
	HANDLE h;

	(void)state;
	warnings = 0;
	old = perflib_set_print(count_warnings);
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	prov_tmpl_std(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);

	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	t.c[0].Type = PERF_COUNTER_BULK_COUNT; /* DWORD -> LARGE */
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_ALREADY_EXISTS);
	prov_tmpl_std(&t, set, PERF_COUNTERSET_SINGLE_INSTANCE);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_ALREADY_EXISTS);
	/* each refusal says why */
	assert_int_equal(warnings, 2);
	perflib_set_print(old);
	/* the pinned template itself is still accepted */
	prov_tmpl_std(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- PerfCreateInstance (spec 5.5, 8.3) ------------------------------------------------ */

static void test_create_null_args(void **state)
{
	GUID set, unknown = prov_guid();
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	SetLastError(0);
	assert_null(PerfCreateInstance(h, NULL, u"a", 1));
	assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
	/* WT: the name is checked before the GUID lookup */
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &unknown, NULL, 1));
	assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &set, NULL, 1));
	assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
	SetLastError(0);
	assert_null(PerfCreateInstance(NULL, &set, u"a", 1));
	assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_create_unknown_guid(void **state)
{
	GUID set, unknown = prov_guid(), pg = prov_provider_guid();
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &unknown, u"a", 1));
	assert_int_equal(GetLastError(), ERROR_NOT_FOUND);
	/* WT: the provider GUID is not a counter set */
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &pg, u"a", 1));
	assert_int_equal(GetLastError(), ERROR_NOT_FOUND);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* spec 8.3, byte for byte */
static void test_create_block_bytes(void **state)
{
	static const BYTE expect[56] = {
		0xef, 0xbe, 0xad, 0xde, 0x02, 0x00, 0x03, 0x00, 0x0f, 0x04, 0x05, 0x06, 0x07, 0x08,
		0x00, 0x0a, 0x38, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x30, 0x00, 0x00, 0x00,
		0x06, 0x00, 0x00, 0x00, 0x2a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x78, 0x56,
		0x34, 0x12, 0xff, 0x7f, 0x00, 0x00, 0x31, 0x00, 0x31, 0x00, 0x00, 0x00, 0x00, 0x00,
	};
	GUID set = {0xDEADBEEF, 0x0002, 0x0003, {0x0F, 0x04, 0x05, 0x06, 0x07, 0x08, 0x00, 0x0A}};
	GUID g = prov_provider_guid();
	PPERF_COUNTERSET_INSTANCE inst;
	struct prov_tmpl t;
	HANDLE h;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	prov_tmpl_init(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(&t, 1, PERF_COUNTER_COUNTER, 0);
	prov_tmpl_add(&t, 2, PERF_COUNTER_LARGE_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE);
	t.c[0].Size = t.c[1].Size = 32; /* as in WT */
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	inst = PerfCreateInstance(h, &set, u"11", 1);
	assert_non_null(inst);
	assert_int_equal(inst->dwSize, 56);
	assert_int_equal(inst->InstanceId, 1);
	assert_int_equal(inst->InstanceNameOffset, 48);
	assert_int_equal(inst->InstanceNameSize, 6);
	assert_int_equal(PerfSetULongCounterValue(h, inst, 1, 42), ERROR_SUCCESS);
	assert_int_equal(PerfSetCounterRefValue(h, inst, 2, (PVOID)0x00007FFF12345678ULL),
			 ERROR_SUCCESS);
	assert_memory_equal(inst, expect, sizeof(expect));
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_create_block_layout(void **state)
{
	GUID set, g = prov_provider_guid();
	PPERF_COUNTERSET_INSTANCE inst;
	WCHAR name[40];
	unsigned int len, i;
	struct prov_tmpl t;
	HANDLE h;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	set = prov_guid();
	prov_tmpl_init(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	for (i = 0; i < 5; i++)
		prov_tmpl_add(&t, 10 + i, PERF_COUNTER_BULK_COUNT, 0);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	/* spec 4.1 for names of every length parity */
	for (len = 0; len < 12; len++) {
		for (i = 0; i < len; i++)
			name[i] = (WCHAR)(u'a' + i);
		name[len] = 0;
		inst = PerfCreateInstance(h, &set, name, len);
		assert_non_null(inst);
		assert_memory_equal(&inst->CounterSetGuid, &set, sizeof(GUID));
		assert_int_equal(inst->InstanceId, len);
		assert_int_equal(inst->InstanceNameOffset, 32 + 8 * 5);
		assert_int_equal(inst->InstanceNameSize, (len + 1) * 2);
		assert_int_equal(inst->dwSize, (32 + 8 * 5 + (len + 1) * 2 + 7) / 8 * 8);
		assert_memory_equal((BYTE *)inst + inst->InstanceNameOffset, name, (len + 1) * 2);
		/* padding after the name is zero; counters start at zero */
		for (i = inst->InstanceNameOffset + inst->InstanceNameSize; i < inst->dwSize; i++)
			assert_int_equal(((BYTE *)inst)[i], 0);
		for (i = 0; i < 5; i++)
			assert_int_equal(*(ULONGLONG *)prov_slot(inst, i), 0);
	}
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_create_last_error_kept(void **state)
{
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	SetLastError(0xDEADBEEF);
	assert_non_null(PerfCreateInstance(h, &set, u"keep", 1));
	assert_int_equal(GetLastError(), 0xDEADBEEF); /* WT */
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_create_duplicates(void **state)
{
	PPERF_COUNTERSET_INSTANCE a, b, c;
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	a = PerfCreateInstance(h, &set, u"Instance_1", 0);
	assert_non_null(a);
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &set, u"Instance_1", 0));
	assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	/* SAMPLE: the same id with other names; the same name with another id */
	b = PerfCreateInstance(h, &set, u"Instance_2", 0);
	c = PerfCreateInstance(h, &set, u"Instance_1", 1);
	assert_non_null(b);
	assert_non_null(c);
	assert_ptr_not_equal(a, b);
	assert_ptr_not_equal(a, c);
	/* names compare case-sensitively (header) */
	assert_non_null(PerfCreateInstance(h, &set, u"instance_1", 0));
	/* after a delete the pair is free again */
	assert_int_equal(PerfDeleteInstance(h, a), ERROR_SUCCESS);
	assert_non_null(PerfCreateInstance(h, &set, u"Instance_1", 0));
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_create_duplicate_two_providers(void **state)
{
	GUID set, g = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE a, b;

	(void)state;
	assert_int_equal(prov_std_start(&a, &set), ERROR_SUCCESS);
	assert_int_equal(PerfStartProvider(&g, NULL, &b), ERROR_SUCCESS);
	prov_tmpl_std(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(prov_tmpl_register(b, &t), ERROR_SUCCESS);
	assert_non_null(PerfCreateInstance(a, &set, u"shared", 3));
	/* uniqueness is per counter set, not per provider */
	SetLastError(0);
	assert_null(PerfCreateInstance(b, &set, u"shared", 3));
	assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	assert_non_null(PerfCreateInstance(b, &set, u"shared", 4));
	assert_int_equal(PerfStopProvider(a), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(b), ERROR_SUCCESS);
}

static void test_create_single_instance(void **state)
{
	GUID set = prov_guid(), g = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	prov_tmpl_std(&t, set, PERF_COUNTERSET_SINGLE_INSTANCE);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	assert_non_null(PerfCreateInstance(h, &set, u"_Default", 0));
	/* NET: a second instance of a single-instance set is ERROR_INVALID_PARAMETER */
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &set, u"other", 1));
	assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &set, u"_Default", 0));
	assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_create_name_too_long(void **state)
{
	static WCHAR name[PERF_MAX_INSTANCE_NAME + 2];
	PPERF_COUNTERSET_INSTANCE inst;
	GUID set;
	HANDLE h;
	int i;

	(void)state;
	/* the default capacity is PERF_MAX_INSTANCE_NAME characters plus the NUL */
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	for (i = 0; i < PERF_MAX_INSTANCE_NAME + 1; i++)
		name[i] = u'n';
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &set, name, 1));
	assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
	name[PERF_MAX_INSTANCE_NAME] = 0; /* 1024 units + NUL: exactly fits */
	inst = PerfCreateInstance(h, &set, name, 1);
	assert_non_null(inst);
	assert_int_equal(inst->InstanceNameSize, 2 * (PERF_MAX_INSTANCE_NAME + 1));
	assert_memory_equal((BYTE *)inst + inst->InstanceNameOffset, name,
			    2 * (PERF_MAX_INSTANCE_NAME + 1));
	assert_int_equal(inst->dwSize % 8, 0);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_create_capacity_full(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst[4];
	GUID set;
	HANDLE h;
	int i;

	(void)state;
	assert_int_equal(perflib_set_capacity(4, 0), 0);
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	assert_int_equal(perflib_set_capacity(PROV_CAPACITY_DEFAULT, 0), 0);
	for (i = 0; i < 4; i++) {
		inst[i] = PerfCreateInstance(h, &set, u"full", (ULONG)i);
		assert_non_null(inst[i]);
	}
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &set, u"full", 4));
	assert_int_equal(GetLastError(), ERROR_NOT_ENOUGH_MEMORY);
	/* a delete makes room again, in the very slot it freed */
	assert_int_equal(PerfDeleteInstance(h, inst[2]), ERROR_SUCCESS);
	assert_ptr_equal(PerfCreateInstance(h, &set, u"full", 5), inst[2]);
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &set, u"full", 6));
	assert_int_equal(GetLastError(), ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_create_alignment(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst;
	WCHAR name[16];
	GUID set;
	HANDLE h;
	int i;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	for (i = 0; i < 64; i++) {
		inst = PerfCreateInstance(h, &set, prov_wname(name, 16, "al%d", i), (ULONG)i);
		assert_non_null(inst);
		/* spec 4.1: 8-byte aligned blocks, so 8-byte slots are naturally aligned */
		assert_int_equal((uintptr_t)inst % 8, 0);
		assert_int_equal(inst->dwSize % 8, 0);
	}
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- PerfQueryInstance (spec 5.7) ------------------------------------------------------ */

static void test_query_instance(void **state)
{
	PPERF_COUNTERSET_INSTANCE a, b;
	GUID set, other = prov_guid(), g = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h, h2;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	a = PerfCreateInstance(h, &set, u"Instance_1", 0);
	b = PerfCreateInstance(h, &set, u"Instance_2", 0);
	assert_non_null(a);
	assert_non_null(b);
	/* VAN: found by the same set, name and id */
	assert_ptr_equal(PerfQueryInstance(h, &set, u"Instance_1", 0), a);
	assert_ptr_equal(PerfQueryInstance(h, &set, u"Instance_2", 0), b);
	SetLastError(0);
	assert_null(PerfQueryInstance(h, &set, u"Instance_1", 1));
	assert_int_equal(GetLastError(), ERROR_NOT_FOUND);
	SetLastError(0);
	assert_null(PerfQueryInstance(h, &set, u"Instance_3", 0));
	assert_int_equal(GetLastError(), ERROR_NOT_FOUND);
	SetLastError(0);
	assert_null(PerfQueryInstance(h, &set, u"Instance_", 0)); /* prefix only */
	assert_int_equal(GetLastError(), ERROR_NOT_FOUND);
	SetLastError(0);
	assert_null(PerfQueryInstance(h, &other, u"Instance_1", 0));
	assert_int_equal(GetLastError(), ERROR_NOT_FOUND);
	SetLastError(0);
	assert_null(PerfQueryInstance(h, NULL, u"Instance_1", 0));
	assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
	SetLastError(0);
	assert_null(PerfQueryInstance(h, &set, NULL, 0));
	assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
	SetLastError(0);
	assert_null(PerfQueryInstance(NULL, &set, u"Instance_1", 0));
	assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
	/* only this provider's instances */
	assert_int_equal(PerfStartProvider(&g, NULL, &h2), ERROR_SUCCESS);
	prov_tmpl_std(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(prov_tmpl_register(h2, &t), ERROR_SUCCESS);
	SetLastError(0);
	assert_null(PerfQueryInstance(h2, &set, u"Instance_1", 0));
	assert_int_equal(GetLastError(), ERROR_NOT_FOUND);
	/* a deleted instance is not found */
	assert_int_equal(PerfDeleteInstance(h, a), ERROR_SUCCESS);
	SetLastError(0);
	assert_null(PerfQueryInstance(h, &set, u"Instance_1", 0));
	assert_int_equal(GetLastError(), ERROR_NOT_FOUND);
	assert_int_equal(PerfStopProvider(h2), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- PerfDeleteInstance (spec 5.6) ----------------------------------------------------- */

static void test_delete_instance(void **state)
{
	PPERF_COUNTERSET_INSTANCE a;
	GUID set, g = prov_provider_guid();
	BYTE local[64];
	HANDLE h, h2;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	a = PerfCreateInstance(h, &set, u"del", 1);
	assert_non_null(a);
	assert_int_equal(PerfDeleteInstance(NULL, a), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfDeleteInstance(h, NULL), ERROR_INVALID_PARAMETER);
	/* blocks that are not instances of this provider */
	memset(local, 0, sizeof(local));
	assert_int_equal(PerfDeleteInstance(h, (PPERF_COUNTERSET_INSTANCE)local),
			 ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfDeleteInstance(h, (PPERF_COUNTERSET_INSTANCE)((BYTE *)a + 8)),
			 ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfStartProvider(&g, NULL, &h2), ERROR_SUCCESS);
	assert_int_equal(PerfDeleteInstance(h2, a), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfStopProvider(h2), ERROR_SUCCESS);

	assert_int_equal(PerfDeleteInstance(h, a), ERROR_SUCCESS);
	/* the header's choice: a second delete is detected */
	assert_int_equal(PerfDeleteInstance(h, a), ERROR_INVALID_PARAMETER);
	/* values of a deleted instance are refused */
	assert_int_equal(PerfSetULongCounterValue(h, a, PROV_STD_DWORD, 1),
			 ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_delete_slot_reused(void **state)
{
	PPERF_COUNTERSET_INSTANCE a, b;
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(perflib_set_capacity(1, 0), 0);
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	assert_int_equal(perflib_set_capacity(PROV_CAPACITY_DEFAULT, 0), 0);
	a = PerfCreateInstance(h, &set, u"first", 1);
	assert_non_null(a);
	assert_int_equal(PerfSetULongCounterValue(h, a, PROV_STD_DWORD, 77), ERROR_SUCCESS);
	assert_int_equal(PerfDeleteInstance(h, a), ERROR_SUCCESS);
	b = PerfCreateInstance(h, &set, u"second", 2);
	assert_ptr_equal(b, a);
	/* the reused block shows the new instance only, counters back at zero */
	assert_int_equal(b->InstanceId, 2);
	assert_memory_equal((BYTE *)b + b->InstanceNameOffset, u"second", 14);
	assert_int_equal(*(ULONG *)prov_slot(b, 0), 0);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- the seven value functions (spec 5.8 - 5.11) --------------------------------------- */

enum value_fn {
	FN_SET_REF,
	FN_SET_UL,
	FN_SET_ULL,
	FN_INC_UL,
	FN_INC_ULL,
	FN_DEC_UL,
	FN_DEC_ULL,
	NR_FN,
};

static const char *const fn_names[NR_FN] = {
	"PerfSetCounterRefValue",
	"PerfSetULongCounterValue",
	"PerfSetULongLongCounterValue",
	"PerfIncrementULongCounterValue",
	"PerfIncrementULongLongCounterValue",
	"PerfDecrementULongCounterValue",
	"PerfDecrementULongLongCounterValue",
};

static ULONG call_fn(enum value_fn fn, HANDLE h, PPERF_COUNTERSET_INSTANCE inst, ULONG id,
		     ULONGLONG v)
{
	switch (fn) {
	case FN_SET_REF:
		return PerfSetCounterRefValue(h, inst, id, (PVOID)(uintptr_t)v);
	case FN_SET_UL:
		return PerfSetULongCounterValue(h, inst, id, (ULONG)v);
	case FN_SET_ULL:
		return PerfSetULongLongCounterValue(h, inst, id, v);
	case FN_INC_UL:
		return PerfIncrementULongCounterValue(h, inst, id, (ULONG)v);
	case FN_INC_ULL:
		return PerfIncrementULongLongCounterValue(h, inst, id, v);
	case FN_DEC_UL:
		return PerfDecrementULongCounterValue(h, inst, id, (ULONG)v);
	case FN_DEC_ULL:
		return PerfDecrementULongLongCounterValue(h, inst, id, v);
	default:
		return 0xFFFFFFFF;
	}
}

/* one row per counter kind: the result of each function (spec 5.8 WT table) */
static void check_row(HANDLE h, PPERF_COUNTERSET_INSTANCE inst, ULONG id, const ULONG *expect)
{
	int fn;

	for (fn = 0; fn < NR_FN; fn++) {
		ULONG st = call_fn((enum value_fn)fn, h, inst, id, fn == FN_SET_REF ? 0x1000 : 1);

		if (st != expect[fn])
			fail_msg("%s on counter %u: %u, expected %u", fn_names[fn], id, st,
				 expect[fn]);
	}
}

/* the rows of check_row: each function's result on a counter of each kind */
#define S ERROR_SUCCESS
#define P ERROR_INVALID_PARAMETER
#define N ERROR_NOT_FOUND
/*                                 ref set_ul set_ull inc_ul inc_ull dec_ul dec_ull */
static const ULONG dword[NR_FN] = {P, S, P, S, P, S, P};
static const ULONG large[NR_FN] = {P, P, S, P, S, P, S};
static const ULONG byref[NR_FN] = {S, P, P, P, P, P, P};
static const ULONG zero[NR_FN] = {P, P, P, P, P, P, P};
static const ULONG unknown[NR_FN] = {N, N, N, N, N, N, N};
static const ULONG null[NR_FN] = {P, P, P, P, P, P, P};
#undef S
#undef P
#undef N

static void test_values_validation(void **state)
{
	GUID set = prov_guid(), g = prov_provider_guid();
	PPERF_COUNTERSET_INSTANCE inst;
	struct prov_tmpl t;
	HANDLE h;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	prov_tmpl_init(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(&t, 1, PERF_COUNTER_COUNTER, 0);
	prov_tmpl_add(&t, 2, PERF_COUNTER_BULK_COUNT, 0);
	prov_tmpl_add(&t, 3, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE);
	prov_tmpl_add(&t, 4, PERF_COUNTER_LARGE_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE);
	prov_tmpl_add(&t, 5, PERF_COUNTER_NODATA, 0);
	/* WT: Size is 32 everywhere; the Type size bits decide, not Size */
	prov_tmpl_add(&t, 6, (PERF_COUNTER_COUNTER & ~PERF_SIZE_DWORD) | PERF_SIZE_LARGE, 0);
	prov_tmpl_add(&t, 70000, PERF_COUNTER_RAWCOUNT, 0); /* past the dense id range */
	for (unsigned int i = 0; i < t.set.NumCounters; i++)
		t.c[i].Size = 32;
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	inst = PerfCreateInstance(h, &set, u"v", 0);
	assert_non_null(inst);
	check_row(h, inst, 1, dword);
	check_row(h, inst, 2, large);
	check_row(h, inst, 3, byref);
	check_row(h, inst, 4, byref);
	check_row(h, inst, 5, zero);
	check_row(h, inst, 6, large);
	check_row(h, inst, 70000, dword);
	/* WT: an id not in the template (tested with 0) */
	check_row(h, inst, 0, unknown);
	check_row(h, inst, 7, unknown);
	check_row(h, inst, 69999, unknown);
	check_row(h, inst, 0xFFFFFFFF, unknown);
	/* WINE: NULL provider or instance */
	check_row(NULL, inst, 1, null);
	check_row(h, NULL, 1, null);
	check_row(h, NULL, 0, null);
	/* header: a block that is not an instance of this provider */
	check_row(h, (PPERF_COUNTERSET_INSTANCE)&t, 1, null);
	check_row(h, (PPERF_COUNTERSET_INSTANCE)((BYTE *)inst + 8), 1, null);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/*
 * An instance is the start of a live block of this provider and nothing else, whichever
 * path takes it: the value functions' fast path (a class-0 instance of the newest set,
 * found with one multiply) or the full path (an older set, the errors). Every byte of a
 * slot but its block's start, the slot header, a free slot, a deleted instance and a
 * handle that is no started provider are refused by all seven functions.
 */
static void test_values_block_start(void **state)
{
	static uint32_t forged[64];
	PPERF_COUNTERSET_INSTANCE a, b, c, newer;
	struct prov_tmpl t;
	GUID set, set2;
	ptrdiff_t gap, off;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	a = PerfCreateInstance(h, &set, u"a", 0);
	assert_non_null(a);
	b = PerfCreateInstance(h, &set, u"b", 0);
	assert_non_null(b);
	/* a fresh set: slots 0 and 1 of class 0, one slot apart */
	gap = (BYTE *)b - (BYTE *)a;
	assert_true(gap > 0);
	/* the slot header before a, every byte of both slots and of the free one after them */
	for (off = -(ptrdiff_t)sizeof(PERF_COUNTERSET_INSTANCE); off < 3 * gap; off++)
		check_row(h, (PPERF_COUNTERSET_INSTANCE)((BYTE *)a + off), PROV_STD_DWORD,
			  off == 0 || off == gap ? dword : null);
	check_row(h, a, PROV_STD_LARGE, large);
	check_row(h, a, PROV_STD_REF, byref);
	check_row(h, a, 9, unknown);
	/* a deleted instance, then the slot used again */
	assert_int_equal(PerfDeleteInstance(h, b), ERROR_SUCCESS);
	check_row(h, b, PROV_STD_DWORD, null);
	c = PerfCreateInstance(h, &set, u"c", 0);
	assert_non_null(c);
	check_row(h, c, PROV_STD_DWORD, dword);
	/* a newer set: the first set's instances take the full path, with the same answers */
	set2 = prov_guid();
	prov_tmpl_std(&t, set2, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	newer = PerfCreateInstance(h, &set2, u"n", 0);
	assert_non_null(newer);
	check_row(h, newer, PROV_STD_DWORD, dword);
	check_row(h, a, PROV_STD_DWORD, dword);
	check_row(h, a, PROV_STD_LARGE, large);
	check_row(h, a, PROV_STD_REF, byref);
	check_row(h, a, 9, unknown);
	check_row(h, (PPERF_COUNTERSET_INSTANCE)((BYTE *)a + 16), PROV_STD_DWORD, null);
	check_row(h, (PPERF_COUNTERSET_INSTANCE)((BYTE *)newer + 16), PROV_STD_DWORD, null);
	/* handles that are no started provider: zeros, a stopped provider's mark, an instance */
	check_row((HANDLE)forged, a, PROV_STD_DWORD, null);
	forged[0] = 0x44454144; /* "DEAD" */
	check_row((HANDLE)forged, a, PROV_STD_DWORD, null);
	check_row((HANDLE)a, a, PROV_STD_DWORD, null);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	check_row(h, a, PROV_STD_DWORD, null);
}

static void test_values_read_back(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst;
	int target = 5;
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	inst = PerfCreateInstance(h, &set, u"rb", 0);
	assert_non_null(inst);
	/* WT: 666 and 900000 at the slot starts (instance + 32 + 8 * position) */
	assert_int_equal(PerfSetULongCounterValue(h, inst, PROV_STD_DWORD, 666), ERROR_SUCCESS);
	assert_int_equal(PerfSetULongLongCounterValue(h, inst, PROV_STD_LARGE, 900000),
			 ERROR_SUCCESS);
	assert_int_equal(PerfSetULongCounterValue(h, inst, PROV_STD_DWORD2, 0x01020304),
			 ERROR_SUCCESS);
	assert_int_equal(*(ULONG *)prov_slot(inst, 0), 666);
	assert_int_equal(*((ULONG *)prov_slot(inst, 0) + 1), 0); /* upper half untouched */
	assert_int_equal(*(ULONGLONG *)prov_slot(inst, 1), 900000);
	assert_int_equal(*(ULONG *)prov_slot(inst, 3), 0x01020304);
	/* spec 5.9: the slot of a by-reference counter holds the pointer */
	assert_int_equal(PerfSetCounterRefValue(h, inst, PROV_STD_REF, &target), ERROR_SUCCESS);
	assert_ptr_equal(*(void **)prov_slot(inst, 2), &target);
	/* SAMPLE re-points it at will */
	assert_int_equal(PerfSetCounterRefValue(h, inst, PROV_STD_REF, &set), ERROR_SUCCESS);
	assert_ptr_equal(*(void **)prov_slot(inst, 2), &set);
	/* DOC: NULL is allowed (consumers get ERROR_NO_DATA) */
	assert_int_equal(PerfSetCounterRefValue(h, inst, PROV_STD_REF, NULL), ERROR_SUCCESS);
	assert_null(*(void **)prov_slot(inst, 2));
	/* increments and decrements on the same slots */
	assert_int_equal(PerfIncrementULongCounterValue(h, inst, PROV_STD_DWORD, 4), ERROR_SUCCESS);
	assert_int_equal(PerfDecrementULongCounterValue(h, inst, PROV_STD_DWORD, 70),
			 ERROR_SUCCESS);
	assert_int_equal(*(ULONG *)prov_slot(inst, 0), 600);
	assert_int_equal(PerfIncrementULongLongCounterValue(h, inst, PROV_STD_LARGE, 100),
			 ERROR_SUCCESS);
	assert_int_equal(PerfDecrementULongLongCounterValue(h, inst, PROV_STD_LARGE, 1000),
			 ERROR_SUCCESS);
	assert_int_equal(*(ULONGLONG *)prov_slot(inst, 1), 899100);
	/* DOC remarks: the provider may write the slot itself at 32 + Offset */
	*(ULONG *)prov_slot(inst, 3) = 9;
	assert_int_equal(PerfIncrementULongCounterValue(h, inst, PROV_STD_DWORD2, 1),
			 ERROR_SUCCESS);
	assert_int_equal(*(ULONG *)prov_slot(inst, 3), 10);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_values_wrap(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst;
	ULONG *lo;
	ULONGLONG *big;
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	inst = PerfCreateInstance(h, &set, u"wrap", 0);
	assert_non_null(inst);
	lo = prov_slot(inst, 0);
	big = prov_slot(inst, 1);
	/* DOC: wraps past the maximum and below zero, modulo 2^32 / 2^64 */
	assert_int_equal(PerfSetULongCounterValue(h, inst, PROV_STD_DWORD, 0xFFFFFFFF), 0);
	assert_int_equal(PerfIncrementULongCounterValue(h, inst, PROV_STD_DWORD, 2), 0);
	assert_int_equal(*lo, 1);
	assert_int_equal(lo[1], 0); /* no carry into the upper half of the slot */
	assert_int_equal(PerfDecrementULongCounterValue(h, inst, PROV_STD_DWORD, 3), 0);
	assert_int_equal(*lo, 0xFFFFFFFE);
	assert_int_equal(lo[1], 0); /* no borrow either */
	assert_int_equal(PerfSetULongLongCounterValue(h, inst, PROV_STD_LARGE, UINT64_MAX), 0);
	assert_int_equal(PerfIncrementULongLongCounterValue(h, inst, PROV_STD_LARGE, 2), 0);
	assert_int_equal(*big, 1);
	assert_int_equal(PerfDecrementULongLongCounterValue(h, inst, PROV_STD_LARGE, 3), 0);
	assert_int_equal(*big, UINT64_MAX - 1);
	assert_int_equal(PerfIncrementULongLongCounterValue(h, inst, PROV_STD_LARGE, UINT64_MAX),
			 0);
	assert_int_equal(*big, UINT64_MAX - 2);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- PerfStopProvider (spec 5.3) -------------------------------------------------------- */

static void test_stop_provider(void **state)
{
	GUID set, g = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h, h2;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	assert_non_null(PerfCreateInstance(h, &set, u"gone", 1));
	assert_non_null(PerfCreateInstance(h, &set, u"gone", 2));
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	/* the header's choice: a second stop and NULL are refused, not a crash */
	assert_int_equal(PerfStopProvider(h), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfStopProvider(NULL), ERROR_INVALID_PARAMETER);
	/* the instances are gone: the same (name, id) pairs are free */
	assert_int_equal(PerfStartProvider(&g, NULL, &h2), ERROR_SUCCESS);
	prov_tmpl_std(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(prov_tmpl_register(h2, &t), ERROR_SUCCESS);
	assert_non_null(PerfCreateInstance(h2, &set, u"gone", 1));
	assert_non_null(PerfCreateInstance(h2, &set, u"gone", 2));
	assert_int_equal(PerfStopProvider(h2), ERROR_SUCCESS);
}

/* ---- threads -------------------------------------------------------------------------- */

#define INC_THREADS 8
#define INC_PER_THREAD 1000000

struct inc_arg {
	HANDLE h;
	PPERF_COUNTERSET_INSTANCE inst;
	ULONG failures;
};

static void *inc_thread(void *p)
{
	struct inc_arg *a = p;
	int i;

	for (i = 0; i < INC_PER_THREAD; i++) {
		if (PerfIncrementULongLongCounterValue(a->h, a->inst, PROV_STD_LARGE, 1))
			a->failures++;
	}
	return NULL;
}

static void test_threads_increment(void **state)
{
	struct inc_arg args[INC_THREADS];
	pthread_t th[INC_THREADS];
	PPERF_COUNTERSET_INSTANCE inst;
	GUID set;
	HANDLE h;
	int i;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	inst = PerfCreateInstance(h, &set, u"hot", 0);
	assert_non_null(inst);
	for (i = 0; i < INC_THREADS; i++) {
		args[i] = (struct inc_arg){h, inst, 0};
		assert_int_equal(pthread_create(&th[i], NULL, inc_thread, &args[i]), 0);
	}
	for (i = 0; i < INC_THREADS; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(args[i].failures, 0);
	}
	assert_int_equal(*(ULONGLONG *)prov_slot(inst, 1), (ULONGLONG)INC_THREADS * INC_PER_THREAD);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

#define CD_THREADS 4
#define CD_ROUNDS 2000
#define CD_HELD 8

/* the blocks live right now, across threads: a block handed out twice shows up here */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static PPERF_COUNTERSET_INSTANCE live[CD_THREADS * CD_HELD];

struct cd_arg {
	HANDLE h;
	GUID set;
	int thread;
	const char *error; /* first problem seen, or NULL */
};

static bool live_add(PPERF_COUNTERSET_INSTANCE inst)
{
	int i, free_i = -1;

	pthread_mutex_lock(&live_lock);
	for (i = 0; i < CD_THREADS * CD_HELD; i++) {
		if (live[i] == inst) {
			pthread_mutex_unlock(&live_lock);
			return false;
		}
		if (!live[i] && free_i < 0)
			free_i = i;
	}
	if (free_i >= 0)
		live[free_i] = inst;
	pthread_mutex_unlock(&live_lock);
	return free_i >= 0;
}

static void live_remove(PPERF_COUNTERSET_INSTANCE inst)
{
	int i;

	pthread_mutex_lock(&live_lock);
	for (i = 0; i < CD_THREADS * CD_HELD; i++) {
		if (live[i] == inst)
			live[i] = NULL;
	}
	pthread_mutex_unlock(&live_lock);
}

static void *cd_thread(void *p)
{
	struct cd_arg *a = p;
	PPERF_COUNTERSET_INSTANCE held[CD_HELD] = {NULL};
	ULONG ids[CD_HELD];
	WCHAR name[32];
	int r, k;

	for (r = 0; r < CD_ROUNDS && !a->error; r++) {
		k = r % CD_HELD;
		if (held[k]) {
			/* the block still shows what this thread wrote */
			if (held[k]->InstanceId != ids[k] ||
			    *(ULONG *)prov_slot(held[k], 3) != ids[k])
				a->error = "a live block was overwritten";
			live_remove(held[k]);
			if (PerfDeleteInstance(a->h, held[k]))
				a->error = "PerfDeleteInstance failed";
			held[k] = NULL;
		}
		ids[k] = (ULONG)(a->thread << 24 | r);
		held[k] = PerfCreateInstance(a->h, &a->set,
					     prov_wname(name, 32, "t%d-%d", a->thread, r), ids[k]);
		if (!held[k]) {
			a->error = "PerfCreateInstance failed";
			break;
		}
		if (!live_add(held[k]))
			a->error = "one block handed out to two live instances";
		if (PerfSetULongCounterValue(a->h, held[k], PROV_STD_DWORD2, ids[k]))
			a->error = "PerfSetULongCounterValue failed";
	}
	for (k = 0; k < CD_HELD; k++) {
		if (held[k]) {
			live_remove(held[k]);
			PerfDeleteInstance(a->h, held[k]);
		}
	}
	return NULL;
}

static void test_threads_create_delete(void **state)
{
	struct cd_arg args[CD_THREADS];
	pthread_t th[CD_THREADS];
	GUID set;
	HANDLE h;
	int i;

	(void)state;
	/* fewer slots than threads x held would fail: the set is just big enough */
	assert_int_equal(perflib_set_capacity(CD_THREADS * CD_HELD, 0), 0);
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	assert_int_equal(perflib_set_capacity(PROV_CAPACITY_DEFAULT, 0), 0);
	for (i = 0; i < CD_THREADS; i++) {
		args[i] = (struct cd_arg){h, set, i, NULL};
		assert_int_equal(pthread_create(&th[i], NULL, cd_thread, &args[i]), 0);
	}
	for (i = 0; i < CD_THREADS; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		if (args[i].error)
			fail_msg("thread %d: %s", i, args[i].error);
	}
	/* every slot came back: the set can be filled again */
	for (i = 0; i < CD_THREADS * CD_HELD; i++)
		assert_non_null(PerfCreateInstance(h, &set, u"again", (ULONG)i));
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- a provider written from Microsoft's documentation only ----------------------------- */

/* what CTRPP generates for a manifest with one multi-instance counter set */
EXTERN_C DECLSPEC_SELECTANY GUID MyProviderGuid = {
	0xab8e1320, 0x965a, 0x4cf9, {0x9c, 0x07, 0xfe, 0x25, 0x37, 0x8c, 0x2a, 0x23}};
EXTERN_C DECLSPEC_SELECTANY GUID MyCounterSetGuid = {
	0xad36c030, 0x003e, 0x46e7, {0x9d, 0x7a, 0x52, 0x7d, 0x4b, 0x0d, 0x59, 0x3d}};
EXTERN_C DECLSPEC_SELECTANY HANDLE MyProvider = NULL;

EXTERN_C DECLSPEC_SELECTANY struct {
	PERF_COUNTERSET_INFO CounterSet;
	PERF_COUNTER_INFO Counter0;
	PERF_COUNTER_INFO Counter1;
	PERF_COUNTER_INFO Counter2;
} MyCounterSetInfo = {
	{{0xad36c030, 0x003e, 0x46e7, {0x9d, 0x7a, 0x52, 0x7d, 0x4b, 0x0d, 0x59, 0x3d}},
	 {0xab8e1320, 0x965a, 0x4cf9, {0x9c, 0x07, 0xfe, 0x25, 0x37, 0x8c, 0x2a, 0x23}},
	 3,
	 PERF_COUNTERSET_MULTI_INSTANCES},
	{1, PERF_COUNTER_COUNTER, 0, sizeof(DWORD), PERF_DETAIL_NOVICE, 0, 0},
	{2, PERF_COUNTER_LARGE_RAWCOUNT, 0, sizeof(ULONGLONG), PERF_DETAIL_NOVICE, 0, 8},
	{3, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE, sizeof(LPVOID), PERF_DETAIL_NOVICE, 0,
	 16},
};

static ULONG WINAPI MyControlCallback(ULONG RequestCode, PVOID Buffer, ULONG BufferSize)
{
	(void)RequestCode;
	(void)Buffer;
	(void)BufferSize;
	return ERROR_SUCCESS;
}

/* CTRPP's CounterInitialize, as the documentation shows it */
static ULONG CounterInitialize(void)
{
	PERF_PROVIDER_CONTEXT ProviderContext;
	ULONG Status;

	memset(&ProviderContext, 0, sizeof(PERF_PROVIDER_CONTEXT));
	ProviderContext.ContextSize = sizeof(PERF_PROVIDER_CONTEXT);
	ProviderContext.ControlCallback = MyControlCallback;
	Status = PerfStartProviderEx(&MyProviderGuid, &ProviderContext, &MyProvider);
	if (Status != ERROR_SUCCESS) {
		MyProvider = NULL;
		return Status;
	}
	Status = PerfSetCounterSetInfo(MyProvider, &MyCounterSetInfo.CounterSet,
				       sizeof MyCounterSetInfo);
	if (Status != ERROR_SUCCESS) {
		PerfStopProvider(MyProvider);
		MyProvider = NULL;
	}
	return Status;
}

static void CounterCleanup(void)
{
	if (MyProvider != NULL) {
		PerfStopProvider(MyProvider);
		MyProvider = NULL;
	}
}

static void test_msdoc_provider(void **state)
{
	PPERF_COUNTERSET_INSTANCE Instance1, Instance2, Instance3;
	DWORD Reads = 0;
	ULONG Status;

	(void)state;
	assert_int_equal(CounterInitialize(), ERROR_SUCCESS);
	/* SAMPLE: three instances, all with Id 0 */
	Instance1 = PerfCreateInstance(MyProvider, &MyCounterSetGuid, u"Instance_1", 0);
	Instance2 = PerfCreateInstance(MyProvider, &MyCounterSetGuid, u"Instance_2", 0);
	Instance3 = PerfCreateInstance(MyProvider, &MyCounterSetGuid, u"Instance_3", 0);
	assert_non_null(Instance1);
	assert_non_null(Instance2);
	assert_non_null(Instance3);
	assert_ptr_equal(PerfQueryInstance(MyProvider, &MyCounterSetGuid, u"Instance_2", 0),
			 Instance2);
	Status = PerfSetULongCounterValue(MyProvider, Instance1, 1, 10);
	assert_int_equal(Status, ERROR_SUCCESS);
	Status = PerfIncrementULongCounterValue(MyProvider, Instance1, 1, 1);
	assert_int_equal(Status, ERROR_SUCCESS);
	Status = PerfDecrementULongCounterValue(MyProvider, Instance1, 1, 1);
	assert_int_equal(Status, ERROR_SUCCESS);
	Status = PerfSetULongLongCounterValue(MyProvider, Instance2, 2, 1ULL << 40);
	assert_int_equal(Status, ERROR_SUCCESS);
	Status = PerfSetCounterRefValue(MyProvider, Instance3, 3, &Reads);
	assert_int_equal(Status, ERROR_SUCCESS);
	/* the documented raw access through the Offsets of the template */
	assert_int_equal(*(DWORD *)((PBYTE)Instance1 + sizeof(PERF_COUNTERSET_INSTANCE) +
				    MyCounterSetInfo.Counter0.Offset),
			 10);
	assert_int_equal(*(ULONGLONG *)((PBYTE)Instance2 + sizeof(PERF_COUNTERSET_INSTANCE) +
					MyCounterSetInfo.Counter1.Offset),
			 1ULL << 40);
	assert_ptr_equal(*(DWORD **)((PBYTE)Instance3 + sizeof(PERF_COUNTERSET_INSTANCE) +
				     MyCounterSetInfo.Counter2.Offset),
			 &Reads);
	*(DWORD *)((PBYTE)Instance2 + sizeof(PERF_COUNTERSET_INSTANCE) +
		   MyCounterSetInfo.Counter0.Offset) = 5;
	assert_int_equal(PerfIncrementULongCounterValue(MyProvider, Instance2, 1, 1),
			 ERROR_SUCCESS);
	assert_int_equal(*(DWORD *)((PBYTE)Instance2 + sizeof(PERF_COUNTERSET_INSTANCE)), 6);
	assert_int_equal(PerfDeleteInstance(MyProvider, Instance3), ERROR_SUCCESS);
	CounterCleanup();
	assert_null(MyProvider);
}

/* a stopped provider's handle, and a forged one, are refused by the non-hot-path calls */
static void test_stale_handle(void **state)
{
	struct {
		uint32_t magic; /* looks like a provider at first glance */
		char rest[252];
	} forged = {0x50524f56u, {0}};
	PPERF_COUNTERSET_INSTANCE inst;
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	inst = PerfCreateInstance(h, &set, u"stale", 1);
	assert_non_null(inst);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &set, u"stale", 2));
	assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
	SetLastError(0);
	assert_null(PerfQueryInstance(h, &set, u"stale", 1));
	assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfDeleteInstance(h, inst), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfSetCounterSetInfo(h, NULL, 0), ERROR_INVALID_PARAMETER);
	SetLastError(0);
	assert_null(PerfCreateInstance(&forged, &set, u"forged", 1));
	assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfStopProvider(&forged), ERROR_INVALID_PARAMETER);
}

/*
 * The value functions with a stopped provider's handle (a common service bug): an error
 * code, never a read of freed memory (AddressSanitizer: heap-use-after-free before) nor a
 * write into reused memory, also after other providers were started and stopped since.
 */
static void test_stale_handle_values(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst;
	HANDLE h, other[20];
	ULONGLONG v = 0;
	GUID set;
	int round, i;

	(void)state;
	for (round = 0; round < 2; round++) {
		assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
		inst = PerfCreateInstance(h, &set, u"stale", 1);
		assert_non_null(inst);
		assert_int_equal(PerfSetULongCounterValue(h, inst, 1, 5), ERROR_SUCCESS);
		assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
		/* round 1: the memory of the stopped provider had every chance to be reused */
		for (i = 0; round && i < 20; i++)
			assert_int_equal(prov_std_start(&other[i], &set), ERROR_SUCCESS);
		assert_int_equal(PerfSetULongCounterValue(h, inst, 1, 7), ERROR_INVALID_PARAMETER);
		assert_int_equal(PerfIncrementULongCounterValue(h, inst, 1, 1),
				 ERROR_INVALID_PARAMETER);
		assert_int_equal(PerfDecrementULongCounterValue(h, inst, 1, 1),
				 ERROR_INVALID_PARAMETER);
		assert_int_equal(PerfSetULongLongCounterValue(h, inst, 2, 7),
				 ERROR_INVALID_PARAMETER);
		assert_int_equal(PerfIncrementULongLongCounterValue(h, inst, 2, 1),
				 ERROR_INVALID_PARAMETER);
		assert_int_equal(PerfDecrementULongLongCounterValue(h, inst, 2, 1),
				 ERROR_INVALID_PARAMETER);
		assert_int_equal(PerfSetCounterRefValue(h, inst, 1, &v), ERROR_INVALID_PARAMETER);
		assert_int_equal(PerfStopProvider(h), ERROR_INVALID_PARAMETER);
		for (i = 0; round && i < 20; i++)
			assert_int_equal(PerfStopProvider(other[i]), ERROR_SUCCESS);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_null_guid),
		cmocka_unit_test(test_stale_handle),
		cmocka_unit_test(test_stale_handle_values),
		cmocka_unit_test(test_start_null_handle),
		cmocka_unit_test(test_start_success),
		cmocka_unit_test(test_startex_context_size),
		cmocka_unit_test(test_startex_null_context),
		cmocka_unit_test(test_startex_mem_routines),
		cmocka_unit_test(test_out_of_memory),
		cmocka_unit_test(test_start_same_guid_twice),
		cmocka_unit_test(test_setinfo_zero_counters),
		cmocka_unit_test(test_setinfo_template_too_small),
		cmocka_unit_test(test_setinfo_template_larger),
		cmocka_unit_test(test_setinfo_provider_guid_differs),
		cmocka_unit_test(test_setinfo_twice),
		cmocka_unit_test(test_setinfo_null),
		cmocka_unit_test(test_setinfo_instance_type),
		cmocka_unit_test(test_setinfo_duplicate_ids),
		cmocka_unit_test(test_setinfo_counter_count_limits),
		cmocka_unit_test(test_setinfo_variable_len),
		cmocka_unit_test(test_setinfo_offsets_written_back),
		cmocka_unit_test(test_setinfo_registration_differs),
		cmocka_unit_test(test_create_null_args),
		cmocka_unit_test(test_create_unknown_guid),
		cmocka_unit_test(test_create_block_bytes),
		cmocka_unit_test(test_create_block_layout),
		cmocka_unit_test(test_create_last_error_kept),
		cmocka_unit_test(test_create_duplicates),
		cmocka_unit_test(test_create_duplicate_two_providers),
		cmocka_unit_test(test_create_single_instance),
		cmocka_unit_test(test_create_name_too_long),
		cmocka_unit_test(test_create_capacity_full),
		cmocka_unit_test(test_create_alignment),
		cmocka_unit_test(test_query_instance),
		cmocka_unit_test(test_delete_instance),
		cmocka_unit_test(test_delete_slot_reused),
		cmocka_unit_test(test_values_validation),
		cmocka_unit_test(test_values_block_start),
		cmocka_unit_test(test_values_read_back),
		cmocka_unit_test(test_values_wrap),
		cmocka_unit_test(test_stop_provider),
		cmocka_unit_test(test_threads_increment),
		cmocka_unit_test(test_threads_create_delete),
		cmocka_unit_test(test_msdoc_provider),
	};

	tl_require_bpf();
	return cmocka_run_group_tests_name("api_provider", tests, tl_group_setup,
					   tl_group_teardown);
}

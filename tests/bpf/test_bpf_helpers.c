// SPDX-License-Identifier: MIT
/*
 * test_bpf_helpers.c - the helpers of include/perflib_bpf.h, run in the kernel through
 * tests/bpf/test_helpers.bpf.c (syscall programs, BPF_PROG_TEST_RUN): index keys equal the
 * library's for several names and scopes, instances are found by key and by scan (live
 * ones only), counters are added, set and read by position where providers see them. The
 * programs are loaded on real pins by the loader functions (test_loader.c tests those).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "internal.h"
#include "perflib_bpf.h" /* PERFLIB_FIND_* */
#include "perflib_bpf_loader.h"
#include "test_helpers.h"
#include "test_helpers.skel.h"
#include "testlib.h"
#include "../helpers/prov_util.h"

/* names hashed by both sides: empty, ASCII, non-ASCII, a surrogate pair, the longest */
static const WCHAR *const names[] = {
	u"",
	u"a",
	u"Instance 1",
	u"_Total",
	u"\u017c\u00f3\u0142w \u0105\u0119",
	u"\U0001D11E clef",
	u"0123456789012345678901234567890123456789012345678901234567890123",
};

static void run(struct bpf_program *prog, void *ctx, size_t size)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = ctx, .ctx_size_in = (__u32)size);

	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(prog), &opts), 0);
}

/* the library's key of (@name, @len, @id) in @scope, from the layout.h hash */
static void user_key(const WCHAR *name, size_t len, uint32_t id, uint64_t scope,
		     struct perflib_index_key *key)
{
	struct perflib_hash_state st;
	size_t i;

	if (!scope) {
		perflib_index_key(name, len, id, key);
		return;
	}
	perflib_hash_init(&st, scope);
	for (i = 0; i < len; i++)
		perflib_hash_step(&st, name[i]);
	memset(key, 0, sizeof(*key));
	perflib_hash_final(&st, id, (uint32_t)len, key);
}

static void assert_key_equal(const struct perflib_index_key *a, const struct perflib_index_key *b)
{
	assert_int_equal(a->id, b->id);
	assert_int_equal(a->check, b->check);
	assert_int_equal(a->hash, b->hash);
}

/* the program with maps of its own (key tests need no counter set) */
static struct test_helpers_bpf *load_bare(void)
{
	struct test_helpers_bpf *skel = test_helpers_bpf__open_and_load();

	assert_non_null(skel);
	return skel;
}

/* the program on the pins of counter set @set, loaded as a third-party loader would */
static struct test_helpers_bpf *load_for(const GUID *set)
{
	struct perflib_bpf_counterset cs;
	struct test_helpers_bpf *skel;
	char g[37];

	assert_int_equal(perflib_bpf_counterset_open(NULL, perflib_guid_to_string(set, g), &cs), 0);
	skel = test_helpers_bpf__open();
	assert_non_null(skel);
	skel->rodata->perflib_geo = cs.geo;
	assert_int_equal(perflib_bpf_counterset_reuse(&cs, skel->maps.slots, skel->maps.idx), 0);
	assert_int_equal(test_helpers_bpf__load(skel), 0);
	perflib_bpf_counterset_close(&cs);
	return skel;
}

static void test_key_utf16(void **state)
{
	static const uint64_t scopes[] = {0, 1234ull << 1 | 1, 0xFFFFFFFFull << 1 | 1};
	struct test_helpers_bpf *skel = load_bare();
	struct perflib_index_key want;
	struct th_key_ctx ctx;
	size_t i, s, len;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (s = 0; s < sizeof(scopes) / sizeof(scopes[0]); s++) {
			len = perflib_wcslen(names[i]);
			assert_true(len <= TH_NAME_UNITS);
			memset(&ctx, 0, sizeof(ctx));
			memcpy(ctx.name16, names[i], len * 2);
			ctx.len = (uint32_t)len;
			ctx.id = (uint32_t)(i * 7919 + s);
			ctx.scope = scopes[s];
			run(skel->progs.th_key_utf16, &ctx, sizeof(ctx));
			user_key(names[i], len, ctx.id, scopes[s], &want);
			assert_key_equal(&ctx.key, &want);
		}
	}
	test_helpers_bpf__destroy(skel);
}

static void test_key_ascii(void **state)
{
	/* the longest: PERFLIB_BPF_NAME_MAX - 1 = 63 characters */
	static const char *const ascii[] = {
		"",	      "a",
		"Instance 1", "_Total",
		"cpu 12",     "012345678901234567890123456789012345678901234567890123456789012",
	};
	struct test_helpers_bpf *skel = load_bare();
	struct perflib_index_key want;
	struct th_key_ctx ctx;
	WCHAR wide[TH_NAME_BYTES];
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof(ascii) / sizeof(ascii[0]); i++) {
		memset(&ctx, 0, sizeof(ctx));
		strcpy(ctx.name8, ascii[i]);
		ctx.id = (uint32_t)i;
		run(skel->progs.th_key_ascii, &ctx, sizeof(ctx));
		for (k = 0; ascii[i][k]; k++)
			wide[k] = (WCHAR)ascii[i][k];
		user_key(wide, k, ctx.id, 0, &want);
		assert_key_equal(&ctx.key, &want);
	}
	test_helpers_bpf__destroy(skel);
}

/* the slot index of this process's live instance with @id in @set */
static int64_t slot_of(const GUID *set, uint32_t id)
{
	struct perflib_store *ro;
	int64_t found = -1;
	uint32_t i;
	uint64_t w;

	assert_int_equal(perflib_store_open(set, false, &ro), 0);
	for (i = 0; i < perflib_store_slots(ro, 0); i++) {
		const uint8_t *s = perflib_slot(ro, i);

		w = perflib_slot_word(s);
		if (perflib_word_state(w) == PERFLIB_SLOT_LIVE &&
		    perflib_word_pid(w) == (uint32_t)getpid() &&
		    ((const PERF_COUNTERSET_INSTANCE *)(s + PERFLIB_BLOCK_OFFSET))->InstanceId ==
			    id)
			found = i;
	}
	perflib_store_close(ro);
	return found;
}

static int64_t bpf_find(struct test_helpers_bpf *skel, uint32_t id, const char *name,
			uint32_t flags)
{
	struct th_key_ctx ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.id = id;
	ctx.flags = flags;
	if (name)
		strcpy(ctx.name8, name);
	run(skel->progs.th_find, &ctx, sizeof(ctx));
	return ctx.found;
}

/* instances of a provider found by scan and by key; the BPF slot key is the library's */
static void test_find(void **state)
{
	static const char *const inst_names[] = {"alpha", "beta", "gamma delta"};
	PPERF_COUNTERSET_INSTANCE inst[3];
	struct test_helpers_bpf *skel;
	struct perflib_index_key want;
	struct th_key_ctx ctx;
	int64_t slot[3];
	WCHAR wname[64];
	GUID set;
	HANDLE h;
	int i;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	for (i = 0; i < 3; i++) {
		inst[i] = PerfCreateInstance(h, &set, prov_wname(wname, 64, "%s", inst_names[i]),
					     (ULONG)(10 + i));
		assert_non_null(inst[i]);
		slot[i] = slot_of(&set, (uint32_t)(10 + i));
		assert_true(slot[i] >= 0);
	}
	skel = load_for(&set);
	for (i = 0; i < 3; i++) {
		assert_int_equal(bpf_find(skel, (uint32_t)(10 + i), NULL, PERFLIB_FIND_ID),
				 slot[i]);
		assert_int_equal(bpf_find(skel, 0, inst_names[i], PERFLIB_FIND_NAME), slot[i]);
		assert_int_equal(bpf_find(skel, (uint32_t)(10 + i), inst_names[i],
					  PERFLIB_FIND_ID | PERFLIB_FIND_NAME),
				 slot[i]);
		/* the key of the stored name, as the exit reaper computes it */
		memset(&ctx, 0, sizeof(ctx));
		ctx.slot = (uint32_t)slot[i];
		ctx.pid = (uint32_t)getpid();
		run(skel->progs.th_slot_key, &ctx, sizeof(ctx));
		prov_wname(wname, 64, "%s", inst_names[i]);
		user_key(wname, perflib_wcslen(wname), (uint32_t)(10 + i), 0, &want);
		assert_key_equal(&ctx.key, &want);
		/* ...and found through the index */
		run(skel->progs.th_find_key, &ctx, sizeof(ctx));
		assert_int_equal(ctx.found, slot[i]);
		memset(&ctx, 0, sizeof(ctx));
		strcpy(ctx.name8, inst_names[i]);
		ctx.id = (uint32_t)(10 + i);
		run(skel->progs.th_instance_key, &ctx, sizeof(ctx));
		assert_int_equal(ctx.found, slot[i]);
	}
	/* mismatches */
	assert_int_equal(bpf_find(skel, 10, "beta", PERFLIB_FIND_ID | PERFLIB_FIND_NAME), -1);
	assert_int_equal(bpf_find(skel, 99, NULL, PERFLIB_FIND_ID), -1);
	assert_int_equal(bpf_find(skel, 0, "alph", PERFLIB_FIND_NAME), -1);
	assert_int_equal(bpf_find(skel, 0, "alphaa", PERFLIB_FIND_NAME), -1);
	/* a deleted instance is found neither way */
	assert_int_equal(PerfDeleteInstance(h, inst[1]), ERROR_SUCCESS);
	assert_int_equal(bpf_find(skel, 11, NULL, PERFLIB_FIND_ID), -1);
	memset(&ctx, 0, sizeof(ctx));
	strcpy(ctx.name8, "beta");
	ctx.id = 11;
	run(skel->progs.th_instance_key, &ctx, sizeof(ctx));
	assert_int_equal(ctx.found, -1);
	test_helpers_bpf__destroy(skel);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* single-instance (singleton key) and per-process (scoped key) counter sets */
static void test_instance_key_types(void **state)
{
	static const ULONG types[] = {PERF_COUNTERSET_SINGLE_INSTANCE,
				      PERF_COUNTERSET_SINGLE_AGGREGATE,
				      PERF_COUNTERSET_INSTANCE_AGGREGATE};
	GUID pg = prov_provider_guid();
	struct test_helpers_bpf *skel;
	struct th_key_ctx ctx;
	struct prov_tmpl t;
	GUID set;
	HANDLE h;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		set = prov_guid();
		prov_tmpl_std(&t, set, types[i]);
		assert_int_equal(PerfStartProvider(&pg, NULL, &h), ERROR_SUCCESS);
		assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
		assert_non_null(PerfCreateInstance(h, &set, u"only", 5));
		skel = load_for(&set);
		memset(&ctx, 0, sizeof(ctx));
		strcpy(ctx.name8, "only");
		ctx.id = 5;
		ctx.pid = (uint32_t)getpid();
		run(skel->progs.th_instance_key, &ctx, sizeof(ctx));
		assert_int_equal(ctx.found, slot_of(&set, 5));
		/* the aggregate types scope names by process: another pid finds nothing */
		ctx.pid = (uint32_t)getpid() + 1;
		run(skel->progs.th_instance_key, &ctx, sizeof(ctx));
		if (types[i] == PERF_COUNTERSET_SINGLE_INSTANCE)
			assert_int_equal(ctx.found, slot_of(&set, 5));
		else
			assert_int_equal(ctx.found, -1);
		test_helpers_bpf__destroy(skel);
		assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	}
}

static int counter_op(struct test_helpers_bpf *skel, uint32_t slot, uint32_t pos, enum th_op op,
		      uint64_t *value)
{
	struct th_counter_ctx ctx = {.slot = slot, .pos = pos, .op = op, .value = *value};

	run(skel->progs.th_counter, &ctx, sizeof(ctx));
	*value = ctx.value;
	return ctx.ret;
}

/* counters by position, where the provider reads and writes them */
static void test_counters(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst;
	struct test_helpers_bpf *skel;
	uint64_t v;
	uint32_t slot;
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	inst = PerfCreateInstance(h, &set, u"ctr", 1);
	assert_non_null(inst);
	slot = (uint32_t)slot_of(&set, 1);
	skel = load_for(&set);

	/* position 1: PERF_COUNTER_BULK_COUNT (8 bytes) */
	v = 5;
	assert_int_equal(counter_op(skel, slot, 1, TH_ADD, &v), 0);
	assert_int_equal(counter_op(skel, slot, 1, TH_ADD, &v), 0);
	assert_int_equal(*(ULONGLONG *)prov_slot(inst, 1), 10);
	assert_int_equal(PerfIncrementULongLongCounterValue(h, inst, PROV_STD_LARGE, 1ull << 40),
			 ERROR_SUCCESS);
	v = 0;
	assert_int_equal(counter_op(skel, slot, 1, TH_READ, &v), 0);
	assert_int_equal(v, (1ull << 40) + 10);
	v = 77;
	assert_int_equal(counter_op(skel, slot, 1, TH_SET, &v), 0);
	assert_int_equal(*(ULONGLONG *)prov_slot(inst, 1), 77);

	/* position 0: PERF_COUNTER_COUNTER (DWORD): wraps in its low 4 bytes */
	v = 0xFFFFFFFF;
	assert_int_equal(counter_op(skel, slot, 0, TH_ADD32, &v), 0);
	assert_int_equal(counter_op(skel, slot, 0, TH_ADD32, &v), 0);
	assert_int_equal(*(ULONG *)prov_slot(inst, 0), 0xFFFFFFFE);
	assert_int_equal(*((ULONG *)prov_slot(inst, 0) + 1), 0);
	assert_int_equal(PerfSetULongCounterValue(h, inst, PROV_STD_DWORD, 123), ERROR_SUCCESS);
	v = 0;
	assert_int_equal(counter_op(skel, slot, 0, TH_READ32, &v), 0);
	assert_int_equal(v, 123);
	v = 9;
	assert_int_equal(counter_op(skel, slot, 3, TH_SET32, &v), 0);
	assert_int_equal(*(ULONG *)prov_slot(inst, 3), 9);

	/* out of range: a position past the counters, a slot past the capacity */
	v = 1;
	assert_int_equal(counter_op(skel, slot, 4, TH_ADD, &v), -1);
	assert_int_equal(counter_op(skel, slot, 0xFFFFFFFF, TH_SET32, &v), -1);
	assert_int_equal(counter_op(skel, 0xFFFFFFF0, 0, TH_ADD, &v), -1);
	v = 1;
	assert_int_equal(counter_op(skel, slot, 4, TH_READ, &v), -1);
	assert_int_equal(v, 0);

	test_helpers_bpf__destroy(skel);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* run the counter op on CPU @cpu (a syscall program runs on the caller's CPU) */
static int counter_op_on(struct test_helpers_bpf *skel, int cpu, uint32_t slot, uint32_t pos,
			 enum th_op op, uint64_t *value)
{
	cpu_set_t set, old;
	int ret;

	assert_int_equal(sched_getaffinity(0, sizeof(old), &old), 0);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	assert_int_equal(sched_setaffinity(0, sizeof(set), &set), 0);
	ret = counter_op(skel, slot, pos, op, value);
	assert_int_equal(sched_setaffinity(0, sizeof(old), &old), 0);
	return ret;
}

/*
 * per-CPU counters (PERF_ATTRIB_LINUX_PER_CPU): the add helpers go to the running CPU's
 * part, the read helpers sum, the set helpers move the base; the provider's increments and
 * the program's add up
 */
static void test_counters_per_cpu(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst;
	struct test_helpers_bpf *skel;
	struct perflib_ctrset *cs;
	GUID set = prov_guid(), pg = prov_provider_guid();
	struct prov_tmpl t;
	uint64_t v, *part;
	uint32_t slot;
	int cpu, n = 0;
	HANDLE h;

	(void)state;
	assert_int_equal(PerfStartProvider(&pg, NULL, &h), ERROR_SUCCESS);
	prov_tmpl_init(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(&t, 1, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_LINUX_PER_CPU);
	prov_tmpl_add(&t, 2, PERF_COUNTER_BULK_COUNT, PERF_ATTRIB_LINUX_PER_CPU);
	prov_tmpl_add(&t, 3, PERF_COUNTER_BULK_COUNT, 0);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	cs = perflib_ctrset_find(perflib_provider_get(h), &set);
	inst = PerfCreateInstance(h, &set, u"pc", 1);
	assert_non_null(inst);
	slot = (uint32_t)slot_of(&set, 1);
	skel = load_for(&set);
	assert_int_equal(skel->rodata->perflib_geo.pcpu_mask, 0x3);
	assert_int_equal(skel->rodata->perflib_geo.nr_cpus, cs->nr_cpus);
	/* an add on every CPU this process may run on lands in that CPU's part */
	for (cpu = 0; cpu < (int)cs->nr_cpus; cpu++) {
		cpu_set_t may;

		assert_int_equal(sched_getaffinity(0, sizeof(may), &may), 0);
		if (!CPU_ISSET(cpu, &may))
			continue;
		v = 10 + (uint64_t)cpu;
		assert_int_equal(counter_op_on(skel, cpu, slot, 1, TH_ADD, &v), 0);
		v = 1;
		assert_int_equal(counter_op_on(skel, cpu, slot, 0, TH_ADD32, &v), 0);
		part = (uint64_t *)((uint8_t *)inst - PERFLIB_BLOCK_OFFSET +
				    perflib_pcpu_part(cs->cls[0].pcpu_offset, cs->pcpu_lines,
						      (uint32_t)cpu, 1));
		assert_int_equal(*part, 10 + (uint64_t)cpu);
		n++;
	}
	assert_true(n > 0);
	/* the bases did not move; the provider's increments add to the program's */
	assert_int_equal(*(ULONGLONG *)prov_slot(inst, 1), 0);
	assert_int_equal(PerfIncrementULongLongCounterValue(h, inst, 2, 1000), ERROR_SUCCESS);
	assert_int_equal(PerfIncrementULongCounterValue(h, inst, 1, 5), ERROR_SUCCESS);
	v = 0;
	assert_int_equal(counter_op(skel, slot, 0, TH_READ32, &v), 0);
	assert_int_equal(v, (uint64_t)n + 5);
	/* a set: the value is what was set, through the base */
	v = 77;
	assert_int_equal(counter_op(skel, slot, 1, TH_SET, &v), 0);
	v = 0;
	assert_int_equal(counter_op(skel, slot, 1, TH_READ, &v), 0);
	assert_int_equal(v, 77);
	v = 3;
	assert_int_equal(counter_op(skel, slot, 0, TH_SET32, &v), 0);
	v = 1;
	assert_int_equal(counter_op_on(skel, 0, slot, 0, TH_ADD32, &v), 0);
	v = 0;
	assert_int_equal(counter_op(skel, slot, 0, TH_READ32, &v), 0);
	assert_int_equal(v, 4);
	/* the plain counter beside them is the 8 bytes at its position */
	v = 9;
	assert_int_equal(counter_op(skel, slot, 2, TH_ADD, &v), 0);
	assert_int_equal(*(ULONGLONG *)prov_slot(inst, 2), 9);
	test_helpers_bpf__destroy(skel);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/*
 * perflib_find_by_key finds instances in every segment, leaders (0, 1, 4) and the segments
 * whose keys their leader's index holds (2, 3, 5): segments 0..5 of quarter octaves
 */
static void test_find_every_segment(void **state)
{
	static PPERF_COUNTERSET_INSTANCE inst[4096];
	struct test_helpers_bpf *skel;
	struct th_key_ctx ctx;
	uint32_t seg0, n, i, k;
	WCHAR wname[32];
	int64_t s;
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	seg0 = tl_seg0(&set, 0);
	assert_true(seg0 > 0);
	n = (uint32_t)perflib_seg_first(5, seg0) + 1; /* one instance in segment 5 */
	assert_true(n <= 4096);
	for (i = 0; i < n; i++) {
		inst[i] = PerfCreateInstance(h, &set, prov_wname(wname, 32, "s%u", i), i);
		assert_non_null(inst[i]);
	}
	assert_int_equal(tl_published_segs(&set, 0), 6);
	skel = load_for(&set);
	for (k = 0; k < 6; k++) {
		/* the instance in the first slot of segment k (creates fill the slots in order) */
		i = (uint32_t)perflib_seg_first(k, seg0);
		s = slot_of(&set, i);
		assert_int_equal(s, (int64_t)i);
		memset(&ctx, 0, sizeof(ctx));
		ctx.slot = (uint32_t)s;
		ctx.pid = (uint32_t)getpid();
		run(skel->progs.th_slot_key, &ctx, sizeof(ctx));
		run(skel->progs.th_find_key, &ctx, sizeof(ctx));
		assert_int_equal(ctx.found, s);
		/* deleted: found no more */
		assert_int_equal(PerfDeleteInstance(h, inst[i]), ERROR_SUCCESS);
		run(skel->progs.th_find_key, &ctx, sizeof(ctx));
		assert_int_equal(ctx.found, -1);
	}
	test_helpers_bpf__destroy(skel);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_key_utf16),
		cmocka_unit_test(test_key_ascii),
		cmocka_unit_test(test_find),
		cmocka_unit_test(test_find_every_segment),
		cmocka_unit_test(test_instance_key_types),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_counters_per_cpu),
	};
	struct test_helpers_bpf *probe;
	libbpf_print_fn_t old;

	tl_require_bpf();
	/* syscall programs and bpf_loop: Linux 5.17 or later, CAP_BPF */
	old = libbpf_set_print(NULL);
	probe = test_helpers_bpf__open_and_load();
	libbpf_set_print(old);
	if (!probe) {
		const char *req = getenv("PERFLIB_REQUIRE_BPF");

		fprintf(stderr, "%s: BPF syscall programs cannot be loaded here (%s)\n",
			req && !strcmp(req, "1") ? "FAIL" : "SKIP", strerror(errno));
		return req && !strcmp(req, "1") ? 1 : TL_SKIP;
	}
	test_helpers_bpf__destroy(probe);
	/* the exit reaper is not what this test is about */
	setenv("PERFLIB_KERNEL_REAPER", "0", 1);
	return cmocka_run_group_tests_name("bpf_helpers", tests, tl_group_setup, tl_group_teardown);
}

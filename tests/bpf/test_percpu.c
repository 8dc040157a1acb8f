// SPDX-License-Identifier: MIT
/*
 * test_percpu.c - per-CPU counters (PERF_ATTRIB_LINUX_PER_CPU, docs/PORTING.md): the layout
 * a registration gets (lodctr --per-cpu, the template's bit, a template without it that
 * follows the registration), exact totals from many threads and processes read by every
 * consumer path (the consumer API, PDH, typeperf, the exporter), the set semantics and raw
 * writes through Offset, a provider killed mid-update, a set that grows and shrinks, and
 * readers that meet a corrupted info value or corrupted parts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "internal.h"
#include "pdh.h"
#include "testlib.h"
#include "../helpers/prov_util.h"
#include "../helpers/cons_util.h"

/* the counters of every set here: two per-CPU (8 and 4 bytes) around a plain one */
#define ID_HITS 1  /* LARGE_RAWCOUNT, per CPU */
#define ID_SMALL 2 /* RAWCOUNT (4 bytes), per CPU */
#define ID_PLAIN 3 /* LARGE_RAWCOUNT */
#define POS_HITS 0
#define POS_SMALL 1
#define POS_PLAIN 2
#define NC 3

static HANDLE prov;

static void reg_counters(struct perflib_counter_reg *c, bool per_cpu)
{
	static const char *const names[NC] = {"Hits", "Small", "Plain"};
	static const ULONG types[NC] = {PERF_COUNTER_LARGE_RAWCOUNT, PERF_COUNTER_RAWCOUNT,
					PERF_COUNTER_LARGE_RAWCOUNT};

	memset(c, 0, NC * sizeof(*c));
	for (int i = 0; i < NC; i++) {
		c[i].id = (ULONG)i + 1;
		c[i].type = types[i];
		c[i].attrib = per_cpu && i != POS_PLAIN ? PERF_ATTRIB_LINUX_PER_CPU : 0;
		c[i].detail_level = PERF_DETAIL_NOVICE;
		c[i].base_id = c[i].perf_time_id = c[i].perf_freq_id = PERFLIB_NO_ID;
		c[i].multi_id = PERFLIB_NO_ID;
		c[i].name = names[i];
		c[i].help = names[i];
	}
}

/* register set @g named @name (per-CPU Hits and Small when @per_cpu), as lodctr does */
static void register_set(const GUID *g, const char *name, ULONG type, bool per_cpu)
{
	struct perflib_counter_reg c[NC];
	struct perflib_counterset_reg reg = {0};

	reg_counters(c, per_cpu);
	reg.provider_guid = prov_provider_guid();
	reg.counterset_guid = *g;
	reg.instance_type = type;
	reg.detail_level = PERF_DETAIL_NOVICE;
	reg.provider_name = "test_percpu";
	reg.name = name;
	reg.help = name;
	reg.nr_counters = NC;
	reg.counters = c;
	assert_int_equal(perflib_register_counterset(&reg, NULL), 0);
}

/* the provider's template: the per-CPU bit only when @bits (a registered set decides) */
static ULONG provide(HANDLE h, const GUID *g, ULONG type, bool bits, struct prov_tmpl *t)
{
	prov_tmpl_init(t, *g, type);
	prov_tmpl_add(t, ID_HITS, PERF_COUNTER_LARGE_RAWCOUNT,
		      bits ? PERF_ATTRIB_LINUX_PER_CPU : 0);
	prov_tmpl_add(t, ID_SMALL, PERF_COUNTER_RAWCOUNT, bits ? PERF_ATTRIB_LINUX_PER_CPU : 0);
	prov_tmpl_add(t, ID_PLAIN, PERF_COUNTER_LARGE_RAWCOUNT, 0);
	return prov_tmpl_register(h, t);
}

static struct perflib_ctrset *ctrset_of(HANDLE h, const GUID *set)
{
	return perflib_ctrset_find(perflib_provider_get(h), set);
}

/* the raw 8-byte base at the counter's position (what a raw write through Offset changes) */
static uint64_t base_of(PPERF_COUNTERSET_INSTANCE inst, unsigned int pos)
{
	return __atomic_load_n((uint64_t *)((uint8_t *)inst + sizeof(*inst) + 8 * pos),
			       __ATOMIC_RELAXED);
}

/* ---- readers: each consumer path's value of one counter of one instance ----------------- */

/* the consumer API: PerfAddCounters + PerfQueryCounterData */
static long long read_api(const GUID *g, ULONG id, const char *inst)
{
	HANDLE q;
	BYTE *buf;
	DWORD len;
	long long v;
	const PERF_COUNTER_HEADER *h;

	assert_int_equal(PerfOpenQueryHandle(NULL, &q), ERROR_SUCCESS);
	assert_int_equal(cons_add(q, g, id, PERFLIB_NO_ID, inst), ERROR_SUCCESS);
	assert_int_equal(cons_data(q, &buf, &len), ERROR_SUCCESS);
	h = cons_header(buf, 0);
	assert_non_null(h);
	assert_int_equal(h->dwStatus, ERROR_SUCCESS);
	if (h->dwType == PERF_SINGLE_COUNTER) {
		v = cons_value((const BYTE *)(h + 1));
	} else {
		struct cons_row rows[4];
		int nr, nc;

		/* the instances of that name: one here */
		assert_int_equal(cons_multi(h, rows, 4, &nr, &nc), 0);
		assert_int_equal(nr, 1);
		assert_string_equal(rows[0].name, inst);
		v = rows[0].v[0];
	}
	free(buf);
	PerfCloseQueryHandle(q);
	return v;
}

/* PDH: the raw value of \Set(inst)\Counter */
static long long read_pdh(const char *set, const char *ctr, const char *inst)
{
	PDH_HQUERY q = NULL;
	PDH_HCOUNTER c = NULL;
	PDH_RAW_COUNTER raw;
	char path[256];
	DWORD type;

	snprintf(path, sizeof(path), "\\%s(%s)\\%s", set, inst, ctr);
	assert_int_equal(PdhOpenQueryA(NULL, 0, &q), 0);
	assert_int_equal(PdhAddCounterA(q, path, 0, &c), 0);
	assert_int_equal(PdhCollectQueryData(q), 0);
	assert_int_equal(PdhGetRawCounterValue(c, &type, &raw), 0);
	PdhCloseQuery(q);
	return raw.FirstValue;
}

/* typeperf -sc 1: the value column of its one sample */
static long long read_typeperf(const char *set, const char *ctr, const char *inst)
{
	char cmd[512], *out = NULL, *line, *q;
	long long v = -1;

	snprintf(cmd, sizeof(cmd), "%s/typeperf '\\%s(%s)\\%s' -sc 1 2>&1", getenv("TOOLS"), set,
		 inst, ctr);
	assert_int_equal(tl_run(cmd, &out), 0);
	/* the header line, then "time","value" (CSV lines end in CR LF) */
	line = strstr(out, "\n\"");
	assert_non_null(line);
	line = strstr(line + 1, "\n\"");
	assert_non_null(line);
	q = strstr(line, "\",\"");
	assert_non_null(q);
	v = strtoll(q + 3, NULL, 10);
	free(out);
	return v;
}

/* perflib-exporter --once: the sample of metric @metric with perf_instance="@inst" */
static long long read_exporter(const char *metric, const char *inst)
{
	char cmd[256], want[256], *out = NULL, *p;
	long long v = -1;

	snprintf(cmd, sizeof(cmd), "%s/perflib-exporter --once 2>&1", getenv("TOOLS"));
	assert_int_equal(tl_run(cmd, &out), 0);
	snprintf(want, sizeof(want), "%s{perf_instance=\"%s\"} ", metric, inst);
	p = strstr(out, want);
	if (!p)
		fail_msg("no %s in\n%s", want, out);
	v = strtoll(p + strlen(want), NULL, 10);
	free(out);
	return v;
}

/* ---- the layout a registration gets ------------------------------------------------------ */

static void check_layout(const struct perflib_store *map)
{
	const struct perflib_info *info = map->info;
	const struct perflib_info_counter *c = map->counters;
	uint32_t k;

	assert_int_equal(info->layout_version, PERFLIB_LAYOUT_VERSION_PER_CPU);
	assert_true(info->flags & PERFLIB_INFO_PER_CPU);
	assert_int_equal(info->nr_cpus, libbpf_num_possible_cpus());
	assert_int_equal(c[POS_HITS].pcpu, 1);
	assert_int_equal(c[POS_SMALL].pcpu, 2);
	assert_int_equal(c[POS_PLAIN].pcpu, 0);
	for (k = 0; k < info->nr_classes; k++) {
		const struct perflib_info_class *ic = &info->classes[k];

		/* whole lines, after everything else: a CPU's line is its own */
		assert_int_equal(ic->slot_size % PERFLIB_PCPU_LINE, 0);
		assert_int_equal(ic->pcpu_offset % PERFLIB_PCPU_LINE, 0);
		assert_true(ic->pcpu_offset >= ic->ascii_offset + ic->ascii_max);
		assert_true(ic->pcpu_offset + perflib_pcpu_bytes(info->nr_cpus, 1) <=
			    ic->slot_size);
		assert_int_equal((uintptr_t)map->cls[k].data % PERFLIB_PCPU_LINE, 0);
	}
}

/* a registered per-CPU set: a template without the bit follows it, and is told so */
static void test_registered(void **state)
{
	GUID g = prov_guid();
	struct perflib_ctrset *cs;
	struct prov_tmpl t;

	(void)state;
	register_set(&g, "Pcpu Registered", PERF_COUNTERSET_MULTI_INSTANCES, true);
	assert_int_equal(provide(prov, &g, PERF_COUNTERSET_MULTI_INSTANCES, false, &t),
			 ERROR_SUCCESS);
	assert_true(t.c[POS_HITS].Attrib & PERF_ATTRIB_LINUX_PER_CPU);
	assert_true(t.c[POS_SMALL].Attrib & PERF_ATTRIB_LINUX_PER_CPU);
	assert_false(t.c[POS_PLAIN].Attrib & PERF_ATTRIB_LINUX_PER_CPU);
	/* Offset as on Windows: the base's position */
	assert_int_equal(t.c[POS_SMALL].Offset, 8);
	cs = ctrset_of(prov, &g);
	assert_non_null(cs);
	check_layout(cs->map);
	/* per-CPU descriptors fail the fast path's kind check: the full path takes them */
	assert_true(perflib_desc_kind(cs->dense[ID_HITS]) & PERFLIB_DESC_PCPU);
	assert_false(perflib_desc_kind(cs->dense[ID_PLAIN]) & PERFLIB_DESC_PCPU);
}

/* the template's bit registers a set created on demand per CPU; a plain one keeps version 11 */
static void test_template_bit(void **state)
{
	GUID g = prov_guid(), p = prov_guid();
	struct perflib_ctrset *cs;
	struct prov_tmpl t;

	(void)state;
	assert_int_equal(provide(prov, &g, PERF_COUNTERSET_MULTI_INSTANCES, true, &t),
			 ERROR_SUCCESS);
	cs = ctrset_of(prov, &g);
	check_layout(cs->map);
	assert_int_equal(provide(prov, &p, PERF_COUNTERSET_MULTI_INSTANCES, false, &t),
			 ERROR_SUCCESS);
	cs = ctrset_of(prov, &p);
	assert_int_equal(cs->map->info->layout_version, PERFLIB_LAYOUT_VERSION);
	assert_int_equal(cs->map->info->nr_cpus, 0);
	assert_int_equal(cs->map->info->classes[0].pcpu_offset, 0);
	/* a by-reference counter cannot be kept per CPU: refused before anything is pinned */
	prov_tmpl_init(&t, prov_guid(), PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(&t, 1, PERF_COUNTER_RAWCOUNT,
		      PERF_ATTRIB_BY_REFERENCE | PERF_ATTRIB_LINUX_PER_CPU);
	assert_int_equal(prov_tmpl_register(prov, &t), ERROR_INVALID_PARAMETER);
}

/* ---- many threads, every reader ---------------------------------------------------------- */

#define THREADS 8
#define PER_THREAD 100000

struct worker {
	PPERF_COUNTERSET_INSTANCE inst;
	HANDLE h;
	int n;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; i < w->n; i++) {
		if (PerfIncrementULongLongCounterValue(w->h, w->inst, ID_HITS, 1) ||
		    PerfIncrementULongCounterValue(w->h, w->inst, ID_SMALL, 3) ||
		    PerfIncrementULongLongCounterValue(w->h, w->inst, ID_PLAIN, 1))
			return (void *)1;
		/* a decrement now and then: the parts go down as well as up */
		if (i % 64 == 0 && (PerfDecrementULongLongCounterValue(w->h, w->inst, ID_HITS, 1) ||
				    PerfDecrementULongCounterValue(w->h, w->inst, ID_SMALL, 3) ||
				    PerfDecrementULongLongCounterValue(w->h, w->inst, ID_PLAIN, 1)))
			return (void *)1;
	}
	return NULL;
}

/* @n threads, @per increments each (and a decrement every 64th) on @inst; the net count */
static uint64_t hammer(HANDLE h, PPERF_COUNTERSET_INSTANCE inst, int n, int per)
{
	pthread_t th[THREADS];
	struct worker w = {inst, h, per};
	void *ret;

	for (int i = 0; i < n; i++)
		assert_int_equal(pthread_create(&th[i], NULL, worker_run, &w), 0);
	for (int i = 0; i < n; i++) {
		assert_int_equal(pthread_join(th[i], &ret), 0);
		assert_null(ret);
	}
	return (uint64_t)n * (uint64_t)(per - (per + 63) / 64);
}

static void test_threads_every_reader(void **state)
{
	GUID g = prov_guid();
	PPERF_COUNTERSET_INSTANCE inst;
	struct prov_tmpl t;
	uint64_t net;

	(void)state;
	register_set(&g, "Pcpu Threads", PERF_COUNTERSET_MULTI_INSTANCES, true);
	assert_int_equal(provide(prov, &g, PERF_COUNTERSET_MULTI_INSTANCES, false, &t), 0);
	inst = PerfCreateInstance(prov, &g, u"w", 7);
	assert_non_null(inst);
	net = hammer(prov, inst, THREADS, PER_THREAD);
	/* the increments went to the parts: the bases did not move; the plain one did */
	assert_int_equal(base_of(inst, POS_HITS), 0);
	assert_int_equal(base_of(inst, POS_SMALL), 0);
	assert_int_equal(base_of(inst, POS_PLAIN), net);
	/* every consumer path sees the sum */
	assert_int_equal(read_api(&g, ID_HITS, "w"), net);
	assert_int_equal(read_api(&g, ID_SMALL, "w"), 3 * net);
	assert_int_equal(read_api(&g, ID_PLAIN, "w"), net);
	assert_int_equal(read_pdh("Pcpu Threads", "Hits", "w"), net);
	assert_int_equal(read_pdh("Pcpu Threads", "Small", "w"), 3 * net);
	assert_int_equal(read_typeperf("Pcpu Threads", "Hits", "w"), net);
	assert_int_equal(read_typeperf("Pcpu Threads", "Small", "w"), 3 * net);
	assert_int_equal(read_exporter("perflib_pcpu_threads_hits", "w"), net);
	assert_int_equal(read_exporter("perflib_pcpu_threads_small", "w"), 3 * net);
	assert_int_equal(PerfDeleteInstance(prov, inst), ERROR_SUCCESS);
}

/* ---- several processes into one set: each instance and the _Total exact ------------------- */

#define PROCS 4

struct child_arg {
	GUID g;
	int i;
	int ready[2], done[2];
	bool spin; /* update until killed (test_killed) */
};

static int child_run(void *arg)
{
	struct child_arg *a = arg;
	GUID pg = prov_provider_guid();
	PPERF_COUNTERSET_INSTANCE inst;
	struct prov_tmpl t;
	WCHAR name[16];
	HANDLE h;

	if (PerfStartProvider(&pg, NULL, &h) ||
	    provide(h, &a->g, PERF_COUNTERSET_MULTI_AGGREGATE, false, &t))
		return 2;
	prov_wname(name, 16, "p%d", a->i);
	inst = PerfCreateInstance(h, &a->g, name, (ULONG)a->i);
	if (!inst)
		return 3;
	if (a->spin) {
		struct worker w = {inst, h, INT_MAX};
		pthread_t th;

		/* two threads updating when the kill comes */
		hammer(h, inst, 1, 1000);
		if (pthread_create(&th, NULL, worker_run, &w))
			return 4;
		tl_signal(a->ready[1]);
		worker_run(&w);
		return 5;
	}
	hammer(h, inst, 4, PER_THREAD / 4);
	tl_signal(a->ready[1]);
	tl_await(a->done[0], 60000);
	return 0;
}

static void test_processes(void **state)
{
	struct child_arg a[PROCS];
	GUID g = prov_guid();
	uint64_t net = 4 * (uint64_t)(PER_THREAD / 4 - (PER_THREAD / 4 + 63) / 64);
	char name[8];
	pid_t pid[PROCS];

	(void)state;
	register_set(&g, "Pcpu Procs", PERF_COUNTERSET_MULTI_AGGREGATE, true);
	for (int i = 0; i < PROCS; i++) {
		a[i] = (struct child_arg){.g = g, .i = i};
		assert_int_equal(tl_pipe(a[i].ready), 0);
		assert_int_equal(tl_pipe(a[i].done), 0);
		pid[i] = tl_fork(child_run, &a[i]);
		assert_true(pid[i] > 0);
	}
	for (int i = 0; i < PROCS; i++)
		assert_int_equal(tl_await(a[i].ready[0], 120000), 0);
	for (int i = 0; i < PROCS; i++) {
		snprintf(name, sizeof(name), "p%d", i);
		assert_int_equal(read_api(&g, ID_HITS, name), net);
		assert_int_equal(read_api(&g, ID_SMALL, name), 3 * net);
	}
	/* the consumer's _Total adds the instances' sums */
	assert_int_equal(read_api(&g, ID_HITS, "_Total"), PROCS * net);
	assert_int_equal(read_pdh("Pcpu Procs", "Hits", "_Total"), PROCS * net);
	assert_int_equal(read_api(&g, ID_SMALL, "_Total"), 3 * PROCS * net);
	for (int i = 0; i < PROCS; i++) {
		tl_signal(a[i].done[1]);
		assert_int_equal(tl_wait(pid[i], 30000), 0);
	}
}

/* ---- a provider killed mid-update --------------------------------------------------------- */

/* every FREE slot of class 0 is zero from the block on: parts included */
static void check_free_zeroed(const struct perflib_store *map)
{
	const struct perflib_class *c = &map->cls[0];
	uint32_t n = perflib_store_slots((struct perflib_store *)map, 0), i, k;

	for (i = 0; i < n; i++) {
		const uint8_t *slot = c->data + (size_t)i * c->slot_size;

		if (perflib_word_state(perflib_slot_word(slot)) != PERFLIB_SLOT_FREE)
			continue;
		for (k = PERFLIB_BLOCK_OFFSET; k < c->slot_size; k++) {
			if (slot[k])
				fail_msg("free slot %u: byte %u is %#x", i, k, slot[k]);
		}
	}
}

static void test_killed(void **state)
{
	GUID g = prov_guid();
	struct child_arg a = {.g = g, .i = 9, .spin = true};
	PPERF_COUNTERSET_INSTANCE mine, again[8];
	struct perflib_ctrset *cs;
	struct prov_tmpl t;
	uint64_t net;
	pid_t pid;
	int st, reaped, n;

	(void)state;
	register_set(&g, "Pcpu Killed", PERF_COUNTERSET_MULTI_AGGREGATE, true);
	assert_int_equal(provide(prov, &g, PERF_COUNTERSET_MULTI_AGGREGATE, false, &t), 0);
	cs = ctrset_of(prov, &g);
	mine = PerfCreateInstance(prov, &g, u"mine", 1);
	assert_non_null(mine);
	assert_int_equal(tl_pipe(a.ready), 0);
	pid = tl_fork(child_run, &a);
	assert_true(pid > 0);
	assert_int_equal(tl_await(a.ready[0], 60000), 0);
	/* our own updates while the child updates its instance; killed in the middle */
	net = hammer(prov, mine, 2, PER_THREAD / 2);
	kill(pid, SIGKILL);
	st = tl_wait(pid, 30000);
	assert_int_equal(st, 128 + SIGKILL);
	assert_int_equal(read_api(&g, ID_HITS, "mine"), net);
	assert_int_equal(read_api(&g, ID_SMALL, "mine"), 3 * net);
	/* the orphan is not shown, not even in the _Total */
	assert_int_equal(read_api(&g, ID_HITS, "_Total"), net);
	/* reaped: freed and zeroed, parts included; reused zeroed */
	reaped = perflib_reap_counterset(&g);
	assert_int_equal(reaped, 1);
	check_free_zeroed(cs->map);
	for (n = 0; n < 8; n++) {
		WCHAR name[16];

		again[n] = PerfCreateInstance(prov, &g, prov_wname(name, 16, "again%d", n), 0);
		assert_non_null(again[n]);
		assert_int_equal(base_of(again[n], POS_HITS), 0);
	}
	assert_int_equal(read_api(&g, ID_HITS, "again0"), 0);
	assert_int_equal(read_api(&g, ID_HITS, "_Total"), net);
	for (n = 0; n < 8; n++)
		assert_int_equal(PerfDeleteInstance(prov, again[n]), ERROR_SUCCESS);
	assert_int_equal(PerfDeleteInstance(prov, mine), ERROR_SUCCESS);
	check_free_zeroed(cs->map);
}

/* ---- a set that grows (segments added) and shrinks ---------------------------------------- */

#define GROW_INSTANCES 700

struct grow_arg {
	PPERF_COUNTERSET_INSTANCE *inst;
	int n;
};

static void *grow_worker(void *arg)
{
	struct grow_arg *a = arg;

	for (int r = 0; r < 10; r++) {
		for (int i = 0; i < a->n; i++) {
			if (PerfIncrementULongLongCounterValue(prov, a->inst[i], ID_HITS,
							       (ULONGLONG)i + 1) ||
			    PerfIncrementULongCounterValue(prov, a->inst[i], ID_SMALL, 1))
				return (void *)1;
		}
	}
	return NULL;
}

/* the values of every instance of @g through one query of all instances (the snapshot path) */
static void check_grown(const GUID *g, int n, int keep_from)
{
	HANDLE q;
	BYTE *buf;
	DWORD len;
	const PERF_COUNTER_HEADER *h;
	static struct cons_row rows[GROW_INSTANCES];
	int nr, nc, seen = 0;

	assert_int_equal(PerfOpenQueryHandle(NULL, &q), ERROR_SUCCESS);
	assert_int_equal(cons_add(q, g, PERF_WILDCARD_COUNTER, PERFLIB_NO_ID, "*"), 0);
	assert_int_equal(cons_data(q, &buf, &len), ERROR_SUCCESS);
	h = cons_header(buf, 0);
	assert_non_null(h);
	assert_int_equal(cons_multi(h, rows, GROW_INSTANCES, &nr, &nc), 0);
	assert_int_equal(nc, NC);
	for (int r = 0; r < nr && r < GROW_INSTANCES; r++) {
		int i = (int)rows[r].id;

		if (i < keep_from || i >= n)
			fail_msg("instance %d should not be there", i);
		/* two threads, ten rounds each */
		assert_int_equal(rows[r].v[POS_HITS], 20LL * (i + 1));
		assert_int_equal(rows[r].v[POS_SMALL], 20);
		seen++;
	}
	assert_int_equal(seen, n - keep_from);
	free(buf);
	PerfCloseQueryHandle(q);
}

static void test_grow_shrink(void **state)
{
	static PPERF_COUNTERSET_INSTANCE inst[GROW_INSTANCES];
	struct grow_arg ga = {inst, GROW_INSTANCES};
	GUID g = prov_guid();
	struct prov_tmpl t;
	pthread_t th[2];
	int segs, i;

	(void)state;
	register_set(&g, "Pcpu Grow", PERF_COUNTERSET_MULTI_INSTANCES, true);
	assert_int_equal(provide(prov, &g, PERF_COUNTERSET_MULTI_INSTANCES, false, &t), 0);
	for (i = 0; i < GROW_INSTANCES; i++) {
		WCHAR name[16];

		inst[i] = PerfCreateInstance(prov, &g, prov_wname(name, 16, "g%d", i), (ULONG)i);
		assert_non_null(inst[i]);
	}
	segs = tl_published_segs(&g, 0);
	assert_true(segs > 1);
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, grow_worker, &ga), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	check_grown(&g, GROW_INSTANCES, 0);
	/* shrink: the top segments go; what stays keeps its values */
	for (i = 16; i < GROW_INSTANCES; i++)
		assert_int_equal(PerfDeleteInstance(prov, inst[i]), ERROR_SUCCESS);
	perflib_store_shrink(ctrset_of(prov, &g)->map, 0);
	assert_true(tl_published_segs(&g, 0) < segs);
	check_grown(&g, 16, 0);
	check_free_zeroed(ctrset_of(prov, &g)->map);
	for (i = 0; i < 16; i++)
		assert_int_equal(PerfDeleteInstance(prov, inst[i]), ERROR_SUCCESS);
}

/* ---- PerfSet semantics and raw writes through Offset -------------------------------------- */

struct setter_arg {
	PPERF_COUNTERSET_INSTANCE inst;
	_Atomic int go;
};

static void *set_incr(void *arg)
{
	struct setter_arg *a = arg;

	while (!atomic_load(&a->go))
		;
	for (int i = 0; i < PER_THREAD; i++)
		PerfIncrementULongLongCounterValue(prov, a->inst, ID_HITS, 1);
	return NULL;
}

static void test_set(void **state)
{
	GUID g = prov_guid();
	PPERF_COUNTERSET_INSTANCE inst;
	struct setter_arg sa;
	struct prov_tmpl t;
	pthread_t th;
	long long v;

	(void)state;
	register_set(&g, "Pcpu Set", PERF_COUNTERSET_MULTI_INSTANCES, true);
	assert_int_equal(provide(prov, &g, PERF_COUNTERSET_MULTI_INSTANCES, false, &t), 0);
	inst = PerfCreateInstance(prov, &g, u"s", 0);
	assert_non_null(inst);
	hammer(prov, inst, 2, 10); /* 2 * (10 - 1) = 18 */
	assert_int_equal(read_api(&g, ID_HITS, "s"), 18);
	/* a set makes the value exactly that: the base takes value - parts */
	assert_int_equal(PerfSetULongLongCounterValue(prov, inst, ID_HITS, 100), 0);
	assert_int_equal(read_api(&g, ID_HITS, "s"), 100);
	assert_int_equal(base_of(inst, POS_HITS), 100 - 18);
	assert_int_equal(PerfIncrementULongLongCounterValue(prov, inst, ID_HITS, 5), 0);
	assert_int_equal(read_api(&g, ID_HITS, "s"), 105);
	/* 4-byte counters: modulo 2^32, parts and base alike */
	assert_int_equal(PerfSetULongCounterValue(prov, inst, ID_SMALL, 0xFFFFFFF0u), 0);
	assert_int_equal(read_api(&g, ID_SMALL, "s"), 0xFFFFFFF0LL);
	assert_int_equal(PerfIncrementULongCounterValue(prov, inst, ID_SMALL, 0x20), 0);
	assert_int_equal(read_api(&g, ID_SMALL, "s"), 0x10);
	assert_int_equal(PerfSetULongCounterValue(prov, inst, ID_SMALL, 0), 0);
	assert_int_equal(read_api(&g, ID_SMALL, "s"), 0);
	/* a raw write through Offset lands in the base: the parts still count */
	*(ULONGLONG *)((BYTE *)inst + sizeof(*inst) + t.c[POS_HITS].Offset) = 1000;
	assert_int_equal(read_api(&g, ID_HITS, "s"), 1000 + 5 + 18);
	/* a set while another thread increments: none of its increments lost or doubled */
	sa.inst = inst;
	atomic_store(&sa.go, 0);
	assert_int_equal(pthread_create(&th, NULL, set_incr, &sa), 0);
	atomic_store(&sa.go, 1);
	assert_int_equal(PerfSetULongLongCounterValue(prov, inst, ID_HITS, 1000000), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	v = read_api(&g, ID_HITS, "s");
	assert_true(v >= 1000000 && v <= 1000000 + PER_THREAD);
	/* what the set did not see is on top: increments after it, none before */
	assert_int_equal(PerfSetULongLongCounterValue(prov, inst, ID_HITS, 7), 0);
	assert_int_equal(read_api(&g, ID_HITS, "s"), 7);
	assert_int_equal(PerfDeleteInstance(prov, inst), ERROR_SUCCESS);
}

/* ---- readers that trust nothing -------------------------------------------------------------- */

/* a per-CPU info value as the registration builds it, for corrupting */
static struct perflib_info *good_info(size_t *ret_size)
{
	struct perflib_counter_reg c[NC];
	struct perflib_counterset_reg reg = {0};
	struct perflib_pin_opts opts;
	struct perflib_info *info;

	reg_counters(c, true);
	reg.counterset_guid = prov_guid();
	reg.instance_type = PERF_COUNTERSET_MULTI_INSTANCES;
	reg.nr_counters = NC;
	reg.counters = c;
	perflib_pin_defaults(&opts);
	assert_int_equal(perflib_info_build(&reg, 0, &opts, &info, ret_size), 0);
	assert_int_equal(perflib_info_check(info, *ret_size), 0);
	return info;
}

static void test_corrupt_info(void **state)
{
	struct perflib_info_counter *c;
	struct perflib_info *info;
	size_t size;

	(void)state;
	info = good_info(&size);
	c = (struct perflib_info_counter *)(info + 1);
#define BAD(stmt, want)                                                                            \
	do {                                                                                       \
		struct perflib_info *bad = malloc(size);                                           \
		struct perflib_info_counter *bc;                                                   \
                                                                                                   \
		memcpy(bad, info, size);                                                           \
		bc = (struct perflib_info_counter *)(bad + 1);                                     \
		(void)bc;                                                                          \
		stmt;                                                                              \
		if (perflib_info_check(bad, size) != (want))                                       \
			fail_msg("%s: %d, expected %d", #stmt, perflib_info_check(bad, size),      \
				 want);                                                            \
		free(bad);                                                                         \
	} while (0)
	/* a CPU count the slot has no room for, none, or past the limit */
	BAD(bad->nr_cpus = info->nr_cpus + 1, -EBADMSG);
	BAD(bad->nr_cpus = 0, -EBADMSG);
	BAD(bad->nr_cpus = PERFLIB_PCPU_MAX_CPUS + 1, -EBADMSG);
	BAD(bad->nr_cpus = 0xFFFFFFFF, -EBADMSG);
	/* parts past the slot, or moved */
	BAD(bad->classes[0].pcpu_offset += 64, -EBADMSG);
	BAD(bad->classes[0].pcpu_offset = 0, -EBADMSG);
	BAD(bad->classes[1].slot_size -= 64, -EBADMSG);
	/* the flag, the version and the counters must agree */
	BAD(bad->flags &= ~PERFLIB_INFO_PER_CPU, -EBADMSG);
	BAD(bad->layout_version = PERFLIB_LAYOUT_VERSION, -EBADMSG);
	BAD(bad->layout_version = PERFLIB_LAYOUT_VERSION_PER_CPU + 1, -EPROTO);
	BAD(bc[POS_SMALL].pcpu = 5, -EBADMSG);
	BAD(bc[POS_PLAIN].pcpu = 3, -EBADMSG);
	BAD(bc[POS_HITS].attrib &= ~PERF_ATTRIB_LINUX_PER_CPU, -EBADMSG);
	BAD(bc[POS_HITS].attrib |= PERF_ATTRIB_BY_REFERENCE, -EBADMSG);
	BAD((void)0, 0);
#undef BAD
	(void)c;
	free(info);
}

/* parts holding anything: readers add them modulo the width, never read past the slot */
static void test_corrupt_parts(void **state)
{
	GUID g = prov_guid();
	PPERF_COUNTERSET_INSTANCE inst;
	struct perflib_ctrset *cs;
	struct prov_tmpl t;
	uint8_t *slot;
	uint32_t cpu, off;

	(void)state;
	register_set(&g, "Pcpu Corrupt", PERF_COUNTERSET_MULTI_INSTANCES, true);
	assert_int_equal(provide(prov, &g, PERF_COUNTERSET_MULTI_INSTANCES, false, &t), 0);
	cs = ctrset_of(prov, &g);
	inst = PerfCreateInstance(prov, &g, u"c", 0);
	assert_non_null(inst);
	slot = (uint8_t *)inst - PERFLIB_BLOCK_OFFSET;
	off = cs->cls[0].pcpu_offset;
	/* a forger fills every line of parts with ones: -1 per CPU */
	memset(slot + off, 0xFF, (size_t)perflib_pcpu_bytes(cs->nr_cpus, cs->pcpu_lines));
	for (cpu = 0; cpu < cs->nr_cpus; cpu++)
		assert_int_equal(
			*(uint64_t *)(slot + perflib_pcpu_part(off, cs->pcpu_lines, cpu, 1)),
			UINT64_MAX);
	assert_int_equal(read_api(&g, ID_HITS, "c"), (long long)(0 - (uint64_t)cs->nr_cpus));
	assert_int_equal(read_api(&g, ID_SMALL, "c"), (long long)(uint32_t)(0 - cs->nr_cpus));
	assert_int_equal(read_pdh("Pcpu Corrupt", "Small", "c"),
			 (long long)(uint32_t)(0 - cs->nr_cpus));
	/* and a set still gives the value asked for */
	assert_int_equal(PerfSetULongLongCounterValue(prov, inst, ID_HITS, 42), 0);
	assert_int_equal(read_api(&g, ID_HITS, "c"), 42);
	assert_int_equal(PerfDeleteInstance(prov, inst), ERROR_SUCCESS);
	check_free_zeroed(cs->map);
}

/* ---- lodctr --per-cpu ---------------------------------------------------------------------- */

static const char manifest[] =
	"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
	"<instrumentationManifest xmlns=\"http://schemas.microsoft.com/win/2004/08/events\">\n"
	" <instrumentation>\n"
	"  <counters xmlns=\"http://schemas.microsoft.com/win/2005/12/counters\" "
	"schemaVersion=\"1.1\">\n"
	"   <provider symbol=\"P\" applicationIdentity=\"t\" providerGuid=\"{%s}\">\n"
	"    <counterSet symbol=\"S\" guid=\"{%s}\" uri=\"T.S\" name=\"Pcpu Lodctr\" "
	"description=\"d\" instances=\"multiple\">\n"
	"     <counter id=\"1\" symbol=\"A\" uri=\"T.S.A\" name=\"Hits\" description=\"d\" "
	"type=\"perf_counter_large_rawcount\" detailLevel=\"standard\"/>\n"
	"     <counter id=\"2\" symbol=\"B\" uri=\"T.S.B\" name=\"Small\" description=\"d\" "
	"type=\"perf_counter_rawcount\" detailLevel=\"standard\"/>\n"
	"     <counter id=\"3\" symbol=\"C\" uri=\"T.S.C\" name=\"Plain\" description=\"d\" "
	"type=\"perf_counter_large_rawcount\" detailLevel=\"standard\"/>\n"
	"    </counterSet>\n"
	"   </provider>\n"
	"  </counters>\n"
	" </instrumentation>\n"
	"</instrumentationManifest>\n";

static int lodctr(const char *man, const char *args, char **out)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "%s/lodctr /m:%s %s 2>&1", getenv("TOOLS"), man, args);
	return tl_run(cmd, out);
}

static void test_lodctr(void **state)
{
	GUID g = prov_guid(), pg = prov_provider_guid();
	char man[64], gs[37], ps[37], *out = NULL, args[128];
	PPERF_COUNTERSET_INSTANCE inst;
	struct prov_tmpl t;
	uint64_t net;
	FILE *f;

	(void)state;
	snprintf(man, sizeof(man), "/tmp/test_percpu.%d.man", (int)getpid());
	f = fopen(man, "w");
	assert_non_null(f);
	fprintf(f, manifest, perflib_guid_to_string(&pg, ps), perflib_guid_to_string(&g, gs));
	fclose(f);
	/* a counter it does not have, a bad one: refused (87), nothing registered */
	assert_int_equal(lodctr(man, "--per-cpu Nope", &out), 87);
	assert_non_null(strstr(out, "--per-cpu Nope: no such counter"));
	free(out);
	assert_int_equal(lodctr(man, "--per-cpu 'Other Set/Hits'", &out), 87);
	free(out);
	/* --dump shows where the parts go */
	assert_int_equal(lodctr(man, "--dump --per-cpu Hits --per-cpu 'Pcpu Lodctr/2'", &out), 0);
	assert_non_null(strstr(out, "per-CPU parts:"));
	assert_non_null(strstr(out, "part of counter 1 on CPU 0"));
	assert_non_null(strstr(out, "part of counter 2 on CPU 0"));
	assert_null(strstr(out, "part of counter 3"));
	free(out);
	/* by name, and by the set's GUID and the counter's id */
	snprintf(args, sizeof(args), "--per-cpu Hits --per-cpu '{%s}/2'", gs);
	assert_int_equal(lodctr(man, args, &out), 0);
	free(out);
	unlink(man);
	/* the provider's template knows nothing of it: the registration decides */
	assert_int_equal(provide(prov, &g, PERF_COUNTERSET_MULTI_INSTANCES, false, &t), 0);
	check_layout(ctrset_of(prov, &g)->map);
	inst = PerfCreateInstance(prov, &g, u"l", 0);
	assert_non_null(inst);
	net = hammer(prov, inst, 4, PER_THREAD / 4);
	assert_int_equal(base_of(inst, POS_HITS), 0);
	assert_int_equal(read_api(&g, ID_HITS, "l"), net);
	/* bpftool shows the base under the counter's name and the parts in "pcpu" */
	if (!access("/usr/sbin/bpftool", X_OK)) {
		char cmd[PATH_MAX + 128], dir[PATH_MAX];

		assert_int_equal(perflib_store_dir(&g, dir, sizeof(dir)), 0);
		snprintf(cmd, sizeof(cmd), "/usr/sbin/bpftool map dump pinned %s/s0/data 2>&1",
			 dir);
		assert_int_equal(tl_run(cmd, &out), 0);
		assert_non_null(strstr(out, "\"pcpu\": [["));
		assert_non_null(strstr(out, "\"Hits"));
		free(out);
	}
	assert_int_equal(read_typeperf("Pcpu Lodctr", "Small", "l"), 3 * net);
	assert_int_equal(PerfDeleteInstance(prov, inst), ERROR_SUCCESS);
}

static int setup(void **state)
{
	GUID pg = prov_provider_guid();

	if (tl_group_setup(state))
		return -1;
	return PerfStartProvider(&pg, NULL, &prov) ? -1 : 0;
}

static int teardown(void **state)
{
	PerfStopProvider(prov);
	return tl_group_teardown(state);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registered),
		cmocka_unit_test(test_template_bit),
		cmocka_unit_test(test_threads_every_reader),
		cmocka_unit_test(test_processes),
		cmocka_unit_test(test_killed),
		cmocka_unit_test(test_grow_shrink),
		cmocka_unit_test(test_set),
		cmocka_unit_test(test_corrupt_info),
		cmocka_unit_test(test_corrupt_parts),
		cmocka_unit_test(test_lodctr),
	};

	tl_require_bpf();
	return cmocka_run_group_tests_name("percpu", tests, setup, teardown);
}

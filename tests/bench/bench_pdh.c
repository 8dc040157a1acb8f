// SPDX-License-Identifier: MIT
/*
 * bench_pdh.c - what PDH adds on top of the consumer API (issue 11): one sample of 10,000
 * instances x 8 counters read as a monitoring agent reads it,
 *
 *   pdh    PdhCollectQueryData on a query of the 8 counters "\PDH Bench(*)\Counter k",
 *          then PdhGetFormattedCounterArray (PDH_FMT_DOUBLE) of each counter as the
 *          Windows samples call it: the size asked with a 0-byte buffer, then the array
 *          into the caller's buffer (kept from one sample to the next, grown when
 *          PDH_MORE_DATA says so); the A and the W variants, each measured;
 *   perf   PerfQueryCounterData alone with one wildcard specification (every counter, "*")
 *          over the same counter set, which is what the PDH query asks perflib for,
 *
 * in one run, alternating, ROUNDS rounds of TARGET_NS each; the per-call minimum and the
 * median of the rounds' averages are printed with the ratio of the minima. Goal: ratio
 * <= 1.5. A third line measures the floor any PDH has here: the same PerfQueryCounterData,
 * one read of its buffer and writing the eight A arrays' bytes, nothing decoded or computed.
 * PDH_BENCH_SECTIONS=1 also prints where the PDH samples (A and W) spend their time
 * (clock_gettime around the calls: collect vs the eight arrays, averages of 50). Runs as
 * root (creates BPF maps) under a private pin root that it removes afterwards.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"
#include "pdh.h"
#include "perflib-linux.h"

#define NR_INSTANCES 10000
#define NR_COUNTERS 8
#define TARGET_NS 200000000ull /* per measurement */
#define ROUNDS 7
#define GOAL 1.5

static char root[256];

static void die(const char *what, long code)
{
	fprintf(stderr, "bench_pdh: %s failed (%ld / 0x%lx)\n", what, code, (unsigned long)code);
	remove_tree(root);
	exit(1);
}

static const GUID provider_guid = {0xbe7d0, 1, 2, {1, 2, 3, 4, 5, 6, 7, 8}};
static const GUID set_guid = {0xbe7d1, 3, 4, {9, 9, 9, 9, 9, 9, 9, 9}};

static const ULONG types[NR_COUNTERS] = {
	PERF_COUNTER_LARGE_RAWCOUNT, PERF_COUNTER_RAWCOUNT,	  PERF_COUNTER_BULK_COUNT,
	PERF_COUNTER_COUNTER,	     PERF_COUNTER_LARGE_RAWCOUNT, PERF_COUNTER_RAWCOUNT,
	PERF_COUNTER_BULK_COUNT,     PERF_COUNTER_LARGE_RAWCOUNT,
};

/* item 7 ("worker-<digit>..."): counter @k's raw value, or a rate of 0 (values stay) */
static void check(unsigned int k, double v, int digit)
{
	bool rate = types[k] == PERF_COUNTER_BULK_COUNT || types[k] == PERF_COUNTER_COUNTER;
	double want = rate ? 0.0 : (double)digit * 10 + k;

	if (digit < 0 || digit > 9 || v != want)
		die("value check", (long)v);
}

/* the registered counter set "PDH Bench": 8 counters of 4 types, 10,000 instances */
static HANDLE provide(void)
{
	static char names[NR_COUNTERS][16];
	struct perflib_counter_reg regs[NR_COUNTERS];
	struct perflib_counterset_reg reg = {0};
	struct {
		PERF_COUNTERSET_INFO info;
		PERF_COUNTER_INFO c[NR_COUNTERS];
	} t;
	PPERF_COUNTERSET_INSTANCE inst;
	WCHAR name[32];
	char ascii[32];
	unsigned int i, k;
	HANDLE h;
	ULONG st;
	int err;

	memset(&t, 0, sizeof(t));
	memset(regs, 0, sizeof(regs));
	for (k = 0; k < NR_COUNTERS; k++) {
		snprintf(names[k], sizeof(names[k]), "Counter %u", k);
		regs[k] = (struct perflib_counter_reg){
			.id = k + 1,
			.type = types[k],
			.detail_level = PERF_DETAIL_NOVICE,
			.base_id = 0xFFFFFFFF,
			.perf_time_id = 0xFFFFFFFF,
			.perf_freq_id = 0xFFFFFFFF,
			.multi_id = 0xFFFFFFFF,
			.aggregate = PERF_AGGREGATE_TOTAL,
			.name = names[k],
			.help = names[k],
		};
		t.c[k].CounterId = k + 1;
		t.c[k].Type = types[k];
		t.c[k].Size = (types[k] & PERF_SIZE_LARGE) ? 8 : 4;
		t.c[k].DetailLevel = PERF_DETAIL_NOVICE;
	}
	reg.provider_guid = provider_guid;
	reg.counterset_guid = set_guid;
	reg.instance_type = PERF_COUNTERSET_MULTI_INSTANCES;
	reg.detail_level = PERF_DETAIL_NOVICE;
	reg.provider_name = "bench_pdh";
	reg.name = "PDH Bench";
	reg.help = "bench_pdh";
	reg.nr_counters = NR_COUNTERS;
	reg.counters = regs;
	if (perflib_set_capacity(NR_INSTANCES, 32))
		die("perflib_set_capacity", NR_INSTANCES);
	err = perflib_register_counterset(&reg, NULL);
	if (err)
		die("perflib_register_counterset", err);
	t.info.CounterSetGuid = set_guid;
	t.info.ProviderGuid = provider_guid;
	t.info.NumCounters = NR_COUNTERS;
	t.info.InstanceType = PERF_COUNTERSET_MULTI_INSTANCES;
	st = PerfStartProvider((GUID *)&provider_guid, NULL, &h);
	if (!st)
		st = PerfSetCounterSetInfo(h, &t.info, sizeof(t));
	if (st)
		die("provider start", (long)st);
	for (i = 0; i < NR_INSTANCES; i++) {
		snprintf(ascii, sizeof(ascii), "worker-%u", i);
		for (k = 0; ascii[k]; k++)
			name[k] = (WCHAR)ascii[k];
		name[k] = 0;
		inst = PerfCreateInstance(h, (GUID *)&set_guid, name, i);
		if (!inst)
			die("PerfCreateInstance", (long)GetLastError());
		for (k = 0; k < NR_COUNTERS; k++) {
			if (types[k] & PERF_SIZE_LARGE)
				PerfSetULongLongCounterValue(h, inst, k + 1, (ULONGLONG)i * 10 + k);
			else
				PerfSetULongCounterValue(h, inst, k + 1, i * 10 + k);
		}
	}
	return h;
}

struct pdh_side {
	PDH_HQUERY q;
	PDH_HCOUNTER c[NR_COUNTERS];
	void *buf[NR_COUNTERS];
	DWORD size[NR_COUNTERS];
	bool wide;
	uint64_t collect_ns, array_ns; /* PDH_BENCH_SECTIONS */
};

static void pdh_open(struct pdh_side *s, bool wide)
{
	char path[64];
	DWORD items;
	PDH_STATUS st;
	unsigned int k;

	memset(s, 0, sizeof(*s));
	s->wide = wide;
	st = PdhOpenQueryA(NULL, 0, &s->q);
	if (st)
		die("PdhOpenQuery", st);
	for (k = 0; k < NR_COUNTERS; k++) {
		snprintf(path, sizeof(path), "\\PDH Bench(*)\\Counter %u", k);
		st = PdhAddCounterA(s->q, path, 0, &s->c[k]);
		if (st)
			die(path, st);
	}
	/* two samples, so that the rate counter has a value; buffers sized once */
	if ((st = PdhCollectQueryData(s->q)) || (st = PdhCollectQueryData(s->q)))
		die("PdhCollectQueryData", st);
	for (k = 0; k < NR_COUNTERS; k++) {
		s->size[k] = 0;
		st = wide ? PdhGetFormattedCounterArrayW(s->c[k], PDH_FMT_DOUBLE, &s->size[k],
							 &items, NULL)
			  : PdhGetFormattedCounterArrayA(s->c[k], PDH_FMT_DOUBLE, &s->size[k],
							 &items, NULL);
		if (st != PDH_MORE_DATA || items != NR_INSTANCES)
			die("sizing PdhGetFormattedCounterArray", st);
		s->buf[k] = malloc(s->size[k]);
		if (!s->buf[k])
			die("malloc", s->size[k]);
	}
}

/* one sample as an agent reads it; checks the values so that nothing is skipped */
static void pdh_sample(struct pdh_side *s, bool sections)
{
	uint64_t t0 = sections ? now_ns() : 0, t1;
	DWORD size, items;
	PDH_STATUS st;
	unsigned int k;

	st = PdhCollectQueryData(s->q);
	if (st)
		die("PdhCollectQueryData", st);
	t1 = sections ? now_ns() : 0;
	for (k = 0; k < NR_COUNTERS; k++) {
		/* the size first (pdh.md 5.4.2), then the array */
		size = 0;
		st = s->wide ? PdhGetFormattedCounterArrayW(s->c[k], PDH_FMT_DOUBLE, &size, &items,
							    NULL)
			     : PdhGetFormattedCounterArrayA(s->c[k], PDH_FMT_DOUBLE, &size, &items,
							    NULL);
		if (st != PDH_MORE_DATA)
			die("sizing PdhGetFormattedCounterArray", st);
		if (size > s->size[k]) {
			free(s->buf[k]);
			s->buf[k] = malloc(size);
			if (!s->buf[k])
				die("malloc", size);
			s->size[k] = size;
		}
		size = s->size[k];
		if (s->wide) {
			PDH_FMT_COUNTERVALUE_ITEM_W *it = s->buf[k];

			st = PdhGetFormattedCounterArrayW(s->c[k], PDH_FMT_DOUBLE, &size, &items,
							  it);
			if (!st)
				check(k, it[7].FmtValue.doubleValue, it[7].szName[7] - u'0');
		} else {
			PDH_FMT_COUNTERVALUE_ITEM_A *it = s->buf[k];

			st = PdhGetFormattedCounterArrayA(s->c[k], PDH_FMT_DOUBLE, &size, &items,
							  it);
			if (!st)
				check(k, it[7].FmtValue.doubleValue, it[7].szName[7] - '0');
		}
		if (st || items != NR_INSTANCES)
			die("PdhGetFormattedCounterArray", st);
	}
	if (sections) {
		s->collect_ns += t1 - t0;
		s->array_ns += now_ns() - t1;
	}
}

struct perf_side {
	HANDLE q;
	void *buf;
	DWORD size;
};

static void perf_open(struct perf_side *s)
{
	struct {
		PERF_COUNTER_IDENTIFIER id;
		WCHAR name[4];
	} spec;
	ULONG st;

	memset(&spec, 0, sizeof(spec));
	spec.id.CounterSetGuid = set_guid;
	spec.id.Size = sizeof(spec);
	spec.id.CounterId = PERF_WILDCARD_COUNTER;
	spec.id.InstanceId = 0xFFFFFFFF;
	spec.name[0] = u'*';
	st = PerfOpenQueryHandle(NULL, &s->q);
	if (!st)
		st = PerfAddCounters(s->q, &spec.id, sizeof(spec));
	if (st || spec.id.Status)
		die("PerfAddCounters", st ? (long)st : (long)spec.id.Status);
	s->size = 0;
	st = PerfQueryCounterData(s->q, NULL, 0, &s->size);
	if (st != ERROR_NOT_ENOUGH_MEMORY)
		die("sizing PerfQueryCounterData", (long)st);
	s->buf = malloc(s->size);
	if (!s->buf)
		die("malloc", s->size);
}

static void perf_sample(struct perf_side *s)
{
	DWORD got = 0;
	ULONG st = PerfQueryCounterData(s->q, s->buf, s->size, &got);

	if (st || got != s->size)
		die("PerfQueryCounterData", (long)st);
}

/*
 * the floor of any PDH on this consumer API: PerfQueryCounterData, one read of its buffer,
 * and writing the bytes of the eight A arrays (items and names), nothing computed
 */
static volatile uint64_t floor_sink;

static void floor_sample(struct perf_side *s, const struct pdh_side *pa)
{
	const uint64_t *w = s->buf;
	uint64_t sum = 0;
	unsigned int k;
	size_t i;

	perf_sample(s);
	for (i = 0; i < s->size / sizeof(*w); i++)
		sum += w[i];
	for (k = 0; k < NR_COUNTERS; k++)
		memset(pa->buf[k], (int)(sum & 0x7f), pa->size[k]);
	floor_sink = sum;
}

/* ns per call of @fn over one measurement of TARGET_NS */
#define MEASURE(body)                                                                              \
	({                                                                                         \
		uint64_t t0_ = now_ns(), t_;                                                       \
		unsigned long reps_ = 0;                                                           \
		do {                                                                               \
			body;                                                                      \
			reps_++;                                                                   \
			t_ = now_ns() - t0_;                                                       \
		} while (t_ < TARGET_NS);                                                          \
		(double)t_ / (double)reps_;                                                        \
	})

int main(void)
{
	double perf_ns[ROUNDS], a_ns[ROUNDS], w_ns[ROUNDS], f_ns[ROUNDS], pmin, amin, wmin, fmin;
	bool sections = getenv("PDH_BENCH_SECTIONS") != NULL;
	struct pdh_side pa, pw;
	struct perf_side perf;
	unsigned long calls = 0;
	unsigned int k;
	int r;
	HANDLE h;

	snprintf(root, sizeof(root), "/sys/fs/bpf/perflib-bench-pdh-%d", (int)getpid());
	if (mkdir(root, 0755)) {
		perror(root);
		return 1;
	}
	setenv("PERFLIB_ROOT", root, 1);
	perflib_set_pin_root(root);
	h = provide();
	perf_open(&perf);
	pdh_open(&pa, false);
	pdh_open(&pw, true);
	for (r = 0; r < ROUNDS; r++) {
		perf_ns[r] = MEASURE(perf_sample(&perf));
		a_ns[r] = MEASURE(pdh_sample(&pa, false));
		w_ns[r] = MEASURE(pdh_sample(&pw, false));
		f_ns[r] = MEASURE(floor_sample(&perf, &pa));
	}
	fmin = min_of(f_ns, ROUNDS);
	pmin = min_of(perf_ns, ROUNDS);
	amin = min_of(a_ns, ROUNDS);
	wmin = min_of(w_ns, ROUNDS);
	printf("PDH sample (collect + %u formatted arrays) vs PerfQueryCounterData alone, "
	       "%u instances x %u counters, %d rounds\n",
	       NR_COUNTERS, NR_INSTANCES, NR_COUNTERS, ROUNDS);
	printf("%-36s %12s %12s %8s\n", "call", "min us", "median us", "ratio");
	printf("%-36s %12.1f %12.1f %8s\n", "PerfQueryCounterData", pmin / 1e3,
	       median(perf_ns, ROUNDS) / 1e3, "1.00");
	printf("%-36s %12.1f %12.1f %8.2f %s\n", "PDH collect + arrays (A)", amin / 1e3,
	       median(a_ns, ROUNDS) / 1e3, amin / pmin, amin / pmin <= GOAL ? "ok" : "ABOVE GOAL");
	printf("%-36s %12.1f %12.1f %8.2f %s\n", "PDH collect + arrays (W)", wmin / 1e3,
	       median(w_ns, ROUNDS) / 1e3, wmin / pmin, wmin / pmin <= GOAL ? "ok" : "ABOVE GOAL");
	printf("%-36s %12.1f %12.1f %8.2f (read the buffer once, write the A arrays' bytes)\n",
	       "floor: query + output size", fmin / 1e3, median(f_ns, ROUNDS) / 1e3, fmin / pmin);
	if (sections) {
		for (calls = 0; calls < 50; calls++) {
			pdh_sample(&pa, true);
			pdh_sample(&pw, true);
		}
		printf("sections (A, %lu samples): collect %.1f us, 8 arrays %.1f us per sample\n",
		       calls, pa.collect_ns / 1e3 / calls, pa.array_ns / 1e3 / calls);
		printf("sections (W, %lu samples): collect %.1f us, 8 arrays %.1f us per sample\n",
		       calls, pw.collect_ns / 1e3 / calls, pw.array_ns / 1e3 / calls);
	}
	for (k = 0; k < NR_COUNTERS; k++) {
		free(pa.buf[k]);
		free(pw.buf[k]);
	}
	PdhCloseQuery(pa.q);
	PdhCloseQuery(pw.q);
	PerfCloseQueryHandle(perf.q);
	free(perf.buf);
	PerfStopProvider(h);
	remove_tree(root);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * tp_provider.c - the provider typeperf's tool test samples (tests/tools/test_typeperf.sh).
 * Registers two counter sets with names (as lodctr would), creates instances with a
 * duplicate name, and every 100 ms advances its counters by fixed steps, so that every
 * ratio typeperf cooks is exact whatever the sampling times, and every rate is known
 * within one step. Prints "ready" when everything is live, then runs until SIGTERM or
 * SIGINT (or 300 s, so that it never outlives a broken test), deletes its instances and
 * unregisters the counter sets. SIGUSR1 deletes instance "beta" (a vanishing instance).
 *
 *   tp_provider            PERFLIB_ROOT chooses the pin root
 *
 * "TP Demo" (multi-instance), instances "alpha" (id 1), "beta" (2), "alpha" (3):
 *   id type                     name        value (i = 0, 1, 2 by instance)     typeperf
 *    1 RAWCOUNT                 Items       10 * (i + 1)                        10/20/30
 *    2 LARGE_RAWCOUNT           Big         2^32 + i                            4294967296..
 *    3 RAWCOUNT_HEX             Flags       255                                 255
 *    4 RAW_FRACTION (base 5)    Ratio       1                                   25
 *    5 RAW_BASE                 Ratio Base  4                                   (hidden)
 *    6 SAMPLE_FRACTION (base 7) Hit %       +3 per step                         75
 *    7 SAMPLE_BASE              Hit Base    +4 per step                         (hidden)
 *    8 OBJ_TIME_TIMER (9, 10)   Busy %      +2500 per step                      25
 *    9 LARGE_RAWCOUNT, noDisplay Clock      +10000 per step                     (hidden)
 *   10 LARGE_RAWCOUNT, noDisplay Clock Freq 100000                              (hidden)
 *   11 ELAPSED_TIME (9, 10)     Uptime      Clock - 250000                      2.5
 *   12 COUNTER_COUNTER          Ops/sec     +10 per step                        ~100
 *   13 BULK_COUNT               Bytes/sec   +1000 per step                      ~10000
 *   14 COUNTER_DELTA            Delta       +1 per step                         ~10 (-si 1)
 *   15 AVERAGE_BULK (base 16)   Avg Bulk    +50 per step (NOSHOW: hidden)       10
 *   16 AVERAGE_BASE             Avg Base    +5 per step                         (hidden)
 *   17 RAWCOUNT, noDisplay      Secret      7                                   7
 *   18 100NSEC_TIMER            Load %      +250000 per step                    ~25
 * "TP Single" (single instance "single"): 1 RAWCOUNT Value 42, 2 LARGE_RAWCOUNT Total
 * 7000000000.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "perflib.h"
#include "perflib-linux.h"

#define DEMO_GUID "{7e57a11d-0001-4000-8000-000000000001}"
#define SINGLE_GUID "{7e57a11d-0002-4000-8000-000000000002}"
#define PROVIDER_GUID "{7e57a11d-0000-4000-8000-000000000000}"
#define NO 0xFFFFFFFF
#define NR_DEMO 18
#define NR_INST 3
#define STEP_NS 100000000L  /* 100 ms */
#define LIFETIME_STEPS 3000 /* 300 s */

static volatile sig_atomic_t stop, drop_beta;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		drop_beta = 1;
	else
		stop = 1;
}

#define C(id, type, attr, base, time, freq, name)                                                  \
	{                                                                                          \
		id, type, attr, PERF_DETAIL_NOVICE, 0, base, time, freq, NO,                       \
			PERF_AGGREGATE_UNDEFINED, name, name                                       \
	}

static const struct perflib_counter_reg demo[NR_DEMO] = {
	C(1, PERF_COUNTER_RAWCOUNT, 0, NO, NO, NO, "Items"),
	C(2, PERF_COUNTER_LARGE_RAWCOUNT, 0, NO, NO, NO, "Big"),
	C(3, PERF_COUNTER_RAWCOUNT_HEX, 0, NO, NO, NO, "Flags"),
	C(4, PERF_RAW_FRACTION, 0, 5, NO, NO, "Ratio"),
	C(5, PERF_RAW_BASE, 0, NO, NO, NO, "Ratio Base"),
	C(6, PERF_SAMPLE_FRACTION, 0, 7, NO, NO, "Hit %"),
	C(7, PERF_SAMPLE_BASE, 0, NO, NO, NO, "Hit Base"),
	C(8, PERF_OBJ_TIME_TIMER, 0, NO, 9, 10, "Busy %"),
	C(9, PERF_COUNTER_LARGE_RAWCOUNT, PERF_ATTRIB_NO_DISPLAYABLE, NO, NO, NO, "Clock"),
	C(10, PERF_COUNTER_LARGE_RAWCOUNT, PERF_ATTRIB_NO_DISPLAYABLE, NO, NO, NO, "Clock Freq"),
	C(11, PERF_ELAPSED_TIME, 0, NO, 9, 10, "Uptime"),
	C(12, PERF_COUNTER_COUNTER, 0, NO, NO, NO, "Ops/sec"),
	C(13, PERF_COUNTER_BULK_COUNT, 0, NO, NO, NO, "Bytes/sec"),
	C(14, PERF_COUNTER_DELTA, 0, NO, NO, NO, "Delta"),
	C(15, PERF_AVERAGE_BULK, 0, 16, NO, NO, "Avg Bulk"),
	C(16, PERF_AVERAGE_BASE, 0, NO, NO, NO, "Avg Base"),
	C(17, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_NO_DISPLAYABLE, NO, NO, NO, "Secret"),
	C(18, PERF_100NSEC_TIMER, 0, NO, NO, NO, "Load %"),
};

static const struct perflib_counter_reg single[2] = {
	C(1, PERF_COUNTER_RAWCOUNT, 0, NO, NO, NO, "Value"),
	C(2, PERF_COUNTER_LARGE_RAWCOUNT, 0, NO, NO, NO, "Total"),
};

/* register the set (names and all) and give the provider its template */
static int add_set(HANDLE h, const GUID *pg, const char *guid, const char *name, ULONG type,
		   const struct perflib_counter_reg *c, unsigned int n, GUID *ret_guid)
{
	struct {
		PERF_COUNTERSET_INFO set;
		PERF_COUNTER_INFO ctr[NR_DEMO];
	} t;
	struct perflib_counterset_reg reg = {0};
	unsigned int i;
	ULONG st;
	int err;

	if (perflib_guid_from_string(guid, ret_guid))
		return -1;
	reg.provider_guid = *pg;
	reg.counterset_guid = *ret_guid;
	reg.instance_type = type;
	reg.detail_level = PERF_DETAIL_NOVICE;
	reg.provider_name = "tp_provider";
	reg.name = name;
	reg.help = name;
	reg.nr_counters = n;
	reg.counters = c;
	err = perflib_register_counterset(&reg, NULL);
	if (err && err != -EEXIST) {
		fprintf(stderr, "tp_provider: register %s: %s\n", name, strerror(-err));
		return -1;
	}
	memset(&t, 0, sizeof(t));
	t.set.CounterSetGuid = *ret_guid;
	t.set.ProviderGuid = *pg;
	t.set.NumCounters = n;
	t.set.InstanceType = type;
	for (i = 0; i < n; i++) {
		t.ctr[i].CounterId = c[i].id;
		t.ctr[i].Type = c[i].type;
		t.ctr[i].Attrib = c[i].attrib;
		t.ctr[i].Size = (c[i].type & PERF_SIZE_LARGE) ? 8 : 4;
		t.ctr[i].DetailLevel = PERF_DETAIL_NOVICE;
	}
	st = PerfSetCounterSetInfo(h, &t.set, sizeof(t.set) + n * sizeof(t.ctr[0]));
	if (st) {
		fprintf(stderr, "tp_provider: PerfSetCounterSetInfo %s: %u\n", name, st);
		return -1;
	}
	return 0;
}

static ULONG set32(HANDLE h, PPERF_COUNTERSET_INSTANCE in, ULONG id, ULONG v)
{
	return PerfSetULongCounterValue(h, in, id, v);
}

static ULONG set64(HANDLE h, PPERF_COUNTERSET_INSTANCE in, ULONG id, ULONGLONG v)
{
	return PerfSetULongLongCounterValue(h, in, id, v);
}

/* the values of instance @i after @step steps; the ratios are exact at every step */
static ULONG update(HANDLE h, PPERF_COUNTERSET_INSTANCE in, unsigned int i, ULONGLONG step)
{
	ULONGLONG clock = 1000000 + 10000 * step;
	ULONG st = 0;

	st |= set32(h, in, 6, (ULONG)(3 * step));
	st |= set32(h, in, 7, (ULONG)(4 * step));
	st |= set64(h, in, 8, 2500 * step);
	st |= set64(h, in, 11, clock - 250000);
	st |= set64(h, in, 9, clock);
	st |= set32(h, in, 12, (ULONG)(10 * step));
	st |= set64(h, in, 13, 1000 * step);
	st |= set32(h, in, 14, (ULONG)step);
	st |= set64(h, in, 15, 50 * step);
	st |= set32(h, in, 16, (ULONG)(5 * step));
	st |= set64(h, in, 18, 250000 * step);
	(void)i;
	return st;
}

int main(void)
{
	static const char *const names[NR_INST] = {"alpha", "beta", "alpha"};
	PPERF_COUNTERSET_INSTANCE inst[NR_INST], one;
	struct timespec next;
	struct sigaction sa;
	GUID pg, dg, sg;
	ULONGLONG step = 0;
	WCHAR wname[16];
	HANDLE h;
	unsigned int i, k;
	ULONG st = 0;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	if (perflib_guid_from_string(PROVIDER_GUID, &pg) || PerfStartProvider(&pg, NULL, &h)) {
		fprintf(stderr, "tp_provider: PerfStartProvider failed\n");
		return 1;
	}
	if (add_set(h, &pg, DEMO_GUID, "TP Demo", PERF_COUNTERSET_MULTI_INSTANCES, demo, NR_DEMO,
		    &dg) ||
	    add_set(h, &pg, SINGLE_GUID, "TP Single", PERF_COUNTERSET_SINGLE_INSTANCE, single, 2,
		    &sg))
		goto fail;
	for (i = 0; i < NR_INST; i++) {
		for (k = 0; names[i][k]; k++)
			wname[k] = (WCHAR)names[i][k];
		wname[k] = 0;
		inst[i] = PerfCreateInstance(h, &dg, wname, i + 1);
		if (!inst[i]) {
			fprintf(stderr, "tp_provider: PerfCreateInstance: %u\n", GetLastError());
			goto fail;
		}
		/* the constant counters */
		st |= set32(h, inst[i], 1, 10 * (i + 1));
		st |= set64(h, inst[i], 2, (1ULL << 32) + i);
		st |= set32(h, inst[i], 3, 255);
		st |= set32(h, inst[i], 4, 1);
		st |= set32(h, inst[i], 5, 4);
		st |= set64(h, inst[i], 10, 100000);
		st |= set32(h, inst[i], 17, 7);
		st |= update(h, inst[i], i, 0);
	}
	one = PerfCreateInstance(h, &sg, u"single", 0);
	if (!one) {
		fprintf(stderr, "tp_provider: PerfCreateInstance single: %u\n", GetLastError());
		goto fail;
	}
	st |= set32(h, one, 1, 42);
	st |= set64(h, one, 2, 7000000000ULL);
	if (st) {
		fprintf(stderr, "tp_provider: setting values failed\n");
		goto fail;
	}
	printf("ready\n");
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!stop && step < LIFETIME_STEPS) {
		next.tv_nsec += STEP_NS;
		if (next.tv_nsec >= 1000000000L)
			next.tv_nsec -= 1000000000L, next.tv_sec++;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		step++;
		if (drop_beta && inst[1]) {
			PerfDeleteInstance(h, inst[1]);
			inst[1] = NULL;
		}
		for (i = 0; i < NR_INST; i++)
			if (inst[i])
				update(h, inst[i], i, step);
	}
	PerfStopProvider(h);
	perflib_unregister_counterset(&dg, true);
	perflib_unregister_counterset(&sg, true);
	return 0;
fail:
	PerfStopProvider(h);
	return 1;
}

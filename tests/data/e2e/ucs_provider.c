// SPDX-License-Identifier: MIT
/*
 * ucs_provider.c - the Windows SDK "user-mode counters sample" (ucs.man) provider, written
 * against the ctrpp-generated ucs.h as a Windows programmer would: CounterInitialize with a
 * notification callback, a multi-instance set updated by value, and a single-instance set
 * whose counters are by reference (perflib reads the variables at collection time).
 * Values are deterministic: the test checks them through typeperf.
 * Usage: ucs_provider SECONDS
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ucs.h"

static volatile ULONG callbacks;
static volatile sig_atomic_t stop;

static void on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static ULONG WINAPI notify(ULONG RequestCode, PVOID Buffer, ULONG BufferSize)
{
	(void)Buffer;
	(void)BufferSize;
	switch (RequestCode) {
	case PERF_ADD_COUNTER:
	case PERF_REMOVE_COUNTER:
	case PERF_ENUM_INSTANCES:
	case PERF_COLLECT_START:
	case PERF_COLLECT_END:
		__atomic_fetch_add(&callbacks, 1, __ATOMIC_RELAXED);
		return ERROR_SUCCESS;
	}
	return ERROR_INVALID_PARAMETER;
}

int main(int argc, char **argv)
{
	static ULONG sine = 500, cosine = 250, constant = 42, base = 200, fraction = 50;
	PPERF_COUNTERSET_INSTANCE geo[2], trig;
	int seconds = argc > 1 ? atoi(argv[1]) : 10, t;
	ULONG status;

	signal(SIGTERM, on_term);
	status = CounterInitialize(notify, NULL, NULL, NULL);
	if (status != ERROR_SUCCESS) {
		fprintf(stderr, "CounterInitialize: %u\n", status);
		return 1;
	}
	geo[0] = PerfCreateInstance(UserModeCountersSample, &GeometricWaveGuid, u"Instance_1", 0);
	geo[1] = PerfCreateInstance(UserModeCountersSample, &GeometricWaveGuid, u"Instance_2", 0);
	trig = PerfCreateInstance(UserModeCountersSample, &TrignometricWaveGuid, u"_Default", 0);
	if (!geo[0] || !geo[1] || !trig) {
		fprintf(stderr, "PerfCreateInstance: %u\n", GetLastError());
		CounterCleanup();
		return 1;
	}
	PerfSetCounterRefValue(UserModeCountersSample, trig, 1, &sine);
	PerfSetCounterRefValue(UserModeCountersSample, trig, 2, &cosine);
	PerfSetCounterRefValue(UserModeCountersSample, trig, 3, &constant);
	PerfSetULongCounterValue(UserModeCountersSample, trig, 4, base);
	PerfSetCounterRefValue(UserModeCountersSample, trig, 5, &fraction);
	PerfSetULongCounterValue(UserModeCountersSample, geo[0], 1, 10);
	PerfSetULongCounterValue(UserModeCountersSample, geo[0], 2, 4);
	PerfSetULongCounterValue(UserModeCountersSample, geo[1], 1, 30);
	PerfSetULongCounterValue(UserModeCountersSample, geo[1], 2, 8);
	printf("ready\n");
	fflush(stdout);
	for (t = 0; t < seconds * 10 && !stop; t++) {
		/* by-reference: the provider changes only its own variables */
		__atomic_store_n(&sine, 500 + (ULONG)(t % 2), __ATOMIC_RELAXED);
		usleep(100000);
	}
	PerfDeleteInstance(UserModeCountersSample, geo[0]);
	PerfDeleteInstance(UserModeCountersSample, geo[1]);
	PerfDeleteInstance(UserModeCountersSample, trig);
	CounterCleanup();
	printf("callbacks %u\n", callbacks);
	return 0;
}

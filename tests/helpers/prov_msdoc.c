// SPDX-License-Identifier: MIT
/*
 * prov_msdoc.c - a provider written from Microsoft's documentation only ("Using PerfLib
 * Functions to Provide Counter Data", the CTRPP-generated header of the PerflibV2 sample):
 * Windows names and types, u"..." literals, a CTRPP-style template. No Linux-only call.
 * tests/build/test_pkgconfig.sh builds it against the installed library with pkg-config.
 *
 * It creates "Instance_1" and "Instance_2" (both Id 0, as the sample does), sets known
 * values, prints "ready", and stops when stdin closes:
 *   Instance_1: counter 1 = 10, counter 2 = 5000000000
 *   Instance_2: counter 1 = 20, counter 2 = 7
 */
#include <stdio.h>
#include <unistd.h>

#include <perflib.h>
#include <winperf.h>

/* ---- what CTRPP generates from the manifest (MyService.h) ---- */

EXTERN_C DECLSPEC_SELECTANY GUID MyServiceProviderGuid = {
	0x4c4bd1d1, 0x5a8b, 0x4f3e, {0x8d, 0x2e, 0x11, 0x9c, 0x2a, 0x6f, 0x00, 0x01}};

EXTERN_C DECLSPEC_SELECTANY GUID MyServiceCounterSetGuid = {
	0x4c4bd1d1, 0x5a8b, 0x4f3e, {0x8d, 0x2e, 0x11, 0x9c, 0x2a, 0x6f, 0x00, 0x02}};

EXTERN_C DECLSPEC_SELECTANY HANDLE MyService = NULL;

EXTERN_C DECLSPEC_SELECTANY struct {
	PERF_COUNTERSET_INFO CounterSet;
	PERF_COUNTER_INFO Counter0;
	PERF_COUNTER_INFO Counter1;
} MyServiceCounterSetInfo = {
	{{0x4c4bd1d1, 0x5a8b, 0x4f3e, {0x8d, 0x2e, 0x11, 0x9c, 0x2a, 0x6f, 0x00, 0x02}},
	 {0x4c4bd1d1, 0x5a8b, 0x4f3e, {0x8d, 0x2e, 0x11, 0x9c, 0x2a, 0x6f, 0x00, 0x01}},
	 2,
	 PERF_COUNTERSET_MULTI_INSTANCES},
	{1, PERF_COUNTER_RAWCOUNT, 0, sizeof(DWORD), PERF_DETAIL_NOVICE, 0, 0},
	{2, PERF_COUNTER_BULK_COUNT, 0, sizeof(ULONGLONG), PERF_DETAIL_NOVICE, 0, 8},
};

EXTERN_C FORCEINLINE void CounterCleanup(void)
{
	if (MyService != NULL) {
		PerfStopProvider(MyService);
		MyService = NULL;
	}
}

EXTERN_C FORCEINLINE ULONG CounterInitialize(void)
{
	ULONG Status;
	PERF_PROVIDER_CONTEXT ProviderContext;

	ZeroMemory(&ProviderContext, sizeof(PERF_PROVIDER_CONTEXT));
	ProviderContext.ContextSize = sizeof(PERF_PROVIDER_CONTEXT);

	Status = PerfStartProviderEx(&MyServiceProviderGuid, &ProviderContext, &MyService);
	if (Status != ERROR_SUCCESS) {
		MyService = NULL;
		return Status;
	}

	Status = PerfSetCounterSetInfo(MyService, &MyServiceCounterSetInfo.CounterSet,
				       sizeof MyServiceCounterSetInfo);
	if (Status != ERROR_SUCCESS) {
		CounterCleanup();
		return Status;
	}
	return ERROR_SUCCESS;
}

/* ---- the provider ---- */

int main(void)
{
	PPERF_COUNTERSET_INSTANCE Instance1, Instance2;
	ULONG Status;
	char c;

	Status = CounterInitialize();
	if (Status != ERROR_SUCCESS) {
		printf("CounterInitialize failed with %lu\n", (unsigned long)Status);
		return 1;
	}
	Instance1 = PerfCreateInstance(MyService, &MyServiceCounterSetGuid, u"Instance_1", 0);
	Instance2 = PerfCreateInstance(MyService, &MyServiceCounterSetGuid, u"Instance_2", 0);
	if (Instance1 == NULL || Instance2 == NULL) {
		printf("PerfCreateInstance failed with %lu\n", (unsigned long)GetLastError());
		CounterCleanup();
		return 1;
	}
	Status = PerfSetULongCounterValue(MyService, Instance1, 1, 10);
	if (Status == ERROR_SUCCESS)
		Status = PerfSetULongLongCounterValue(MyService, Instance1, 2, 5000000000ULL);
	if (Status == ERROR_SUCCESS)
		Status = PerfIncrementULongCounterValue(MyService, Instance2, 1, 20);
	if (Status == ERROR_SUCCESS)
		Status = PerfIncrementULongLongCounterValue(MyService, Instance2, 2, 7);
	if (Status != ERROR_SUCCESS) {
		printf("setting counter values failed with %lu\n", (unsigned long)Status);
		CounterCleanup();
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	PerfDeleteInstance(MyService, Instance2);
	PerfDeleteInstance(MyService, Instance1);
	CounterCleanup();
	return 0;
}

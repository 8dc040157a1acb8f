// SPDX-License-Identifier: MIT
/*
 * ucs_provider.c - a provider in the shape of the Windows SDK's Basic (ucs) sample, written
 * as Windows C code: L"" names in wchar_t arrays (built with -fshort-wchar), the
 * ctrpp-generated header with its notification-callback CounterInitialize, by-reference
 * counters, a "while (!_kbhit())" loop with Sleep(). Only the includes differ from Windows
 * (<perflib/win32compat.h> for <windows.h> and <perflib.h>).
 *
 * Values (checked by tests/ports/test_ports.sh and test_e2e.sh): Geometric Waves instances
 * "Instance_1" (id 1) and "Instance_2" (id 2) with Triangle = 10 * id, Square = 100 + id;
 * Trignometric Waves: Sine 7, Cosine 8, Constant 9, base 4, Raw Fraction 3. Prints "ready"
 * once set; when standard input closes, stops and prints how many notifications its
 * ControlCallback received ("callbacks N").
 */
#include <stdio.h>
#include <perflib/win32compat.h>
#include "ucs.h" /* ctrpp -o ucs.h ucs.man */

/* perflib runs callbacks one at a time; CounterCleanup waits for the last one */
static ULONG Callbacks;

static ULONG WINAPI ControlCallback(ULONG RequestCode, PVOID Buffer, ULONG BufferSize)
{
	UNREFERENCED_PARAMETER(Buffer);
	UNREFERENCED_PARAMETER(BufferSize);
	switch (RequestCode) {
	case PERF_ADD_COUNTER:
	case PERF_REMOVE_COUNTER:
	case PERF_ENUM_INSTANCES:
	case PERF_COLLECT_START:
	case PERF_COLLECT_END:
		Callbacks++;
		return ERROR_SUCCESS;
	}
	return ERROR_INVALID_PARAMETER;
}

static ULONG Sine = 7, Cosine = 8, Constant = 9, Fraction = 3;

int __cdecl main(void)
{
	PPERF_COUNTERSET_INSTANCE Geometric[2], Trignometric;
	wchar_t Name[32];
	ULONG Status, Id;

	Status = CounterInitialize(ControlCallback, NULL, NULL, NULL);
	if (Status != ERROR_SUCCESS) {
		printf("CounterInitialize failed with %lu\n", (unsigned long)Status);
		return 1;
	}
	for (Id = 1; Id <= 2; Id++) {
		wcscpy_s(Name, 32, L"Instance_");
		_itow_s((int)Id, Name + 9, 32 - 9, 10);
		Geometric[Id - 1] =
			PerfCreateInstance(UserModeCountersSample, &GeometricWaveGuid, Name, Id);
		if (Geometric[Id - 1] == NULL) {
			printf("PerfCreateInstance failed with %lu\n",
			       (unsigned long)GetLastError());
			CounterCleanup();
			return 1;
		}
		PerfSetULongCounterValue(UserModeCountersSample, Geometric[Id - 1], 1, 10 * Id);
		PerfSetULongCounterValue(UserModeCountersSample, Geometric[Id - 1], 2, 100 + Id);
	}
	Trignometric =
		PerfCreateInstance(UserModeCountersSample, &TrignometricWaveGuid, L"_Default", 0);
	if (Trignometric == NULL) {
		printf("PerfCreateInstance failed with %lu\n", (unsigned long)GetLastError());
		CounterCleanup();
		return 1;
	}
	PerfSetCounterRefValue(UserModeCountersSample, Trignometric, 1, &Sine);
	PerfSetCounterRefValue(UserModeCountersSample, Trignometric, 2, &Cosine);
	PerfSetCounterRefValue(UserModeCountersSample, Trignometric, 3, &Constant);
	PerfSetULongCounterValue(UserModeCountersSample, Trignometric, 4, 4);
	PerfSetCounterRefValue(UserModeCountersSample, Trignometric, 5, &Fraction);
	printf("ready\n");
	fflush(stdout);
	while (!_kbhit())
		Sleep(20);
	CounterCleanup();
	printf("callbacks %lu\n", (unsigned long)Callbacks);
	return 0;
}

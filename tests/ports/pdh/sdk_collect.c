// SPDX-License-Identifier: MIT
/*
 * sdk_collect.c - a rewrite, in this project's words, of the Windows SDK documentation's
 * "Collecting Performance Data" PDH sample (not vendored: the docs' sample code is under
 * Microsoft's terms). It makes the same calls in the same order: PdhOpenQuery (real time),
 * PdhAddCounter of one path, then a loop of Sleep + PdhCollectQueryData +
 * PdhGetFormattedCounterValue(PDH_FMT_DOUBLE), PdhCloseQuery at the end. Windows C: L""
 * strings in wchar_t (built with -fshort-wchar), wprintf-free. The only changes for the
 * port: the includes (<perflib/win32compat.h> for <windows.h>) and the sample count and
 * interval taken from the command line instead of fixed.
 *
 *   sdk_collect PATH SAMPLES INTERVAL_MS   prints "<n> <value>" per sample, or "error 0x..."
 */
#include <stdio.h>
#include <stdlib.h>
#include <perflib/win32compat.h>
#include <pdh.h>
#include <pdhmsg.h>

int __cdecl main(int argc, char **argv)
{
	PDH_STATUS Status;
	HQUERY Query = NULL;
	HCOUNTER Counter;
	PDH_FMT_COUNTERVALUE DisplayValue;
	DWORD CounterType;
	int i, Samples, Interval;

	if (argc != 4) {
		fprintf(stderr, "usage: sdk_collect PATH SAMPLES INTERVAL_MS\n");
		return 2;
	}
	Samples = atoi(argv[2]);
	Interval = atoi(argv[3]);
	Status = PdhOpenQuery(NULL, 0, &Query);
	if (Status != ERROR_SUCCESS) {
		printf("PdhOpenQuery failed with status 0x%x.\n", (unsigned)Status);
		goto Cleanup;
	}
	/* the sample takes a path constant; this one comes from argv as the ANSI variant */
	Status = PdhAddCounterA(Query, argv[1], 0, &Counter);
	if (Status != ERROR_SUCCESS) {
		printf("PdhAddCounter failed with status 0x%x.\n", (unsigned)Status);
		goto Cleanup;
	}
	/* most counters need two samples: collect once before the loop */
	Status = PdhCollectQueryData(Query);
	if (Status != ERROR_SUCCESS) {
		printf("PdhCollectQueryData failed with 0x%x.\n", (unsigned)Status);
		goto Cleanup;
	}
	for (i = 1; i <= Samples; i++) {
		Sleep(Interval);
		Status = PdhCollectQueryData(Query);
		if (Status != ERROR_SUCCESS)
			printf("PdhCollectQueryData failed with status 0x%x.\n", (unsigned)Status);
		Status = PdhGetFormattedCounterValue(Counter, PDH_FMT_DOUBLE, &CounterType,
						     &DisplayValue);
		if (Status != ERROR_SUCCESS) {
			printf("PdhGetFormattedCounterValue failed with status 0x%x.\n",
			       (unsigned)Status);
			goto Cleanup;
		}
		printf("%d %.6f\n", i, DisplayValue.doubleValue);
	}
Cleanup:
	if (Query)
		PdhCloseQuery(Query);
	return Status == ERROR_SUCCESS ? 0 : 1;
}

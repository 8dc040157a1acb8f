// SPDX-License-Identifier: MIT
/*
 * sdk_readlog.c - a rewrite, in this project's words, of the Windows SDK documentation's
 * "Reading Performance Data from a Log File" PDH sample (not vendored). Same calls, same
 * order: PdhOpenQuery with the log file as data source, PdhAddCounter (wide, L"" path built
 * with -fshort-wchar), then PdhCollectQueryData + PdhGetFormattedCounterValue per record
 * until PDH_NO_MORE_DATA, PdhCloseQuery. Port changes: the includes, the log and counter
 * from the command line (converted to wide as the sample's constants would be).
 *
 *   sdk_readlog LOG PATH      prints "<record> <value>" per record, then "end"
 */
#include <stdio.h>
#include <string.h>
#include <perflib/win32compat.h>
#include <pdh.h>
#include <pdhmsg.h>

static void widen(const char *s, wchar_t *w, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n && s[i]; i++)
		w[i] = (wchar_t)(unsigned char)s[i];
	w[i] = 0;
}

int __cdecl main(int argc, char **argv)
{
	wchar_t LogFile[512], CounterPath[512];
	PDH_STATUS Status;
	PDH_HQUERY Query = NULL;
	PDH_HCOUNTER Counter;
	PDH_FMT_COUNTERVALUE DisplayValue;
	DWORD CounterType;
	int Record = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: sdk_readlog LOG PATH\n");
		return 2;
	}
	widen(argv[1], LogFile, 512);
	widen(argv[2], CounterPath, 512);
	Status = PdhOpenQueryW(LogFile, 0, &Query);
	if (Status != ERROR_SUCCESS) {
		printf("PdhOpenQuery failed with 0x%x\n", (unsigned)Status);
		goto cleanup;
	}
	Status = PdhAddCounterW(Query, CounterPath, 0, &Counter);
	if (Status != ERROR_SUCCESS) {
		printf("PdhAddCounter failed with 0x%x\n", (unsigned)Status);
		goto cleanup;
	}
	/* read the log record by record */
	for (;;) {
		Status = PdhCollectQueryData(Query);
		if (Status == PDH_NO_MORE_DATA)
			break;
		if (Status != ERROR_SUCCESS) {
			printf("PdhCollectQueryData failed with 0x%x\n", (unsigned)Status);
			goto cleanup;
		}
		Record++;
		Status = PdhGetFormattedCounterValue(Counter, PDH_FMT_DOUBLE, &CounterType,
						     &DisplayValue);
		if (Status == ERROR_SUCCESS)
			printf("%d %.6f\n", Record, DisplayValue.doubleValue);
		else
			printf("%d none\n", Record);
	}
	printf("end\n");
	Status = ERROR_SUCCESS;
cleanup:
	if (Query)
		PdhCloseQuery(Query);
	return Status == ERROR_SUCCESS ? 0 : 1;
}

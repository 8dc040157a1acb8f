// SPDX-License-Identifier: MIT
/*
 * nsclient_check.c - a rewrite, in this project's words, of what the PDH counter check of
 * a Nagios agent does (the call sequence of NSClient++'s CheckSystem "check_pdh" /
 * CheckCounter; NSClient++ is GPL, nothing of it is vendored): Windows code in wide
 * strings throughout, as that agent is written.
 *
 *   1. PdhValidatePathW; an invalid path is UNKNOWN (exit 3)
 *   2. PdhParseCounterPathW (the size protocol in bytes); an object or counter given as a
 *      number is a name index ("\238(_Total)\6", the language-independent form such
 *      agents accept): PdhLookupPerfNameByIndexW gives the name and PdhMakeCounterPathW
 *      the path; a named one is looked up the other way (PdhLookupPerfIndexByNameW) and
 *      both indexes are printed
 *   3. PdhOpenQueryW, PdhAddEnglishCounterW, PdhGetCounterInfoW (type, explain text)
 *   4. two PdhCollectQueryData an interval apart, PdhGetFormattedCounterValue
 *      (PDH_FMT_DOUBLE | PDH_FMT_NOCAP100), thresholds: value >= critical is CRITICAL
 *      (exit 2), >= warning WARNING (exit 1), else OK (exit 0), with Nagios performance
 *      data: "OK: <path> = <value>|'<path>'=<value>;<warn>;<crit>"
 *
 * Port changes only: the includes (<perflib/win32compat.h> for <windows.h>), the wide
 * arguments widened from argv (the agent gets them from its own UTF-16 configuration),
 * and wide text narrowed for printf (wprintf does not take 16-bit wchar_t on Linux).
 *
 *   nsclient_check PATH WARNING CRITICAL [INTERVAL_MS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <perflib/win32compat.h>
#include <pdh.h>
#include <pdhmsg.h>

#define MAX_TEXT 512

/* ASCII argv into a wide string (the agent's configuration is UTF-16 already) */
static void widen(const char *s, WCHAR *w, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n && s[i]; i++)
		w[i] = (WCHAR)(unsigned char)s[i];
	w[i] = 0;
}

/* wide text for printf: ASCII as is, anything else '?' */
static const char *narrow(LPCWSTR w)
{
	static char buf[4][MAX_TEXT];
	static int next;
	char *s = buf[next++ % 4];
	size_t i;

	for (i = 0; w && w[i] && i + 1 < MAX_TEXT; i++)
		s[i] = w[i] < 0x80 ? (char)w[i] : '?';
	s[i] = 0;
	return s;
}

static BOOL all_digits(LPCWSTR w)
{
	if (!w || !*w)
		return FALSE;
	for (; *w; w++)
		if (*w < L'0' || *w > L'9')
			return FALSE;
	return TRUE;
}

static DWORD to_number(LPCWSTR w)
{
	DWORD n = 0;

	for (; *w; w++)
		n = n * 10 + (DWORD)(*w - L'0');
	return n;
}

/* a name index into its name (@out, MAX_TEXT characters) */
static PDH_STATUS name_of(DWORD index, WCHAR *out)
{
	DWORD size = MAX_TEXT;

	return PdhLookupPerfNameByIndexW(NULL, index, out, &size);
}

/* the path with name indexes translated, and the indexes of its names printed */
static PDH_STATUS translate(LPCWSTR path, WCHAR *out, DWORD out_size)
{
	PDH_COUNTER_PATH_ELEMENTS_W *elements = NULL;
	WCHAR object[MAX_TEXT], counter[MAX_TEXT];
	DWORD size = 0, object_index = 0, counter_index = 0;
	PDH_STATUS status;

	status = PdhParseCounterPathW(path, NULL, &size, 0);
	if (status != PDH_MORE_DATA)
		return status;
	elements = (PDH_COUNTER_PATH_ELEMENTS_W *)malloc(size);
	if (!elements)
		return PDH_MEMORY_ALLOCATION_FAILURE;
	status = PdhParseCounterPathW(path, elements, &size, 0);
	if (status != ERROR_SUCCESS)
		goto out;
	if (all_digits(elements->szObjectName)) {
		object_index = to_number(elements->szObjectName);
		status = name_of(object_index, object);
		if (status != ERROR_SUCCESS)
			goto out;
		elements->szObjectName = object;
	} else {
		status = PdhLookupPerfIndexByNameW(NULL, elements->szObjectName, &object_index);
		if (status != ERROR_SUCCESS)
			goto out;
	}
	if (all_digits(elements->szCounterName)) {
		counter_index = to_number(elements->szCounterName);
		status = name_of(counter_index, counter);
		if (status != ERROR_SUCCESS)
			goto out;
		elements->szCounterName = counter;
	} else {
		status = PdhLookupPerfIndexByNameW(NULL, elements->szCounterName, &counter_index);
		if (status != ERROR_SUCCESS)
			goto out;
	}
	printf("index %lu %lu\n", (unsigned long)object_index, (unsigned long)counter_index);
	status = PdhMakeCounterPathW(elements, out, &out_size, 0);
out:
	free(elements);
	return status;
}

int __cdecl main(int argc, char **argv)
{
	WCHAR given[MAX_TEXT], path[MAX_TEXT];
	PDH_COUNTER_INFO_W *info = NULL;
	PDH_FMT_COUNTERVALUE value;
	HQUERY query = NULL;
	HCOUNTER counter;
	PDH_STATUS status, valid;
	double warning, critical;
	DWORD size = 0;
	int code = 3;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: nsclient_check PATH WARNING CRITICAL [INTERVAL_MS]\n");
		return 3;
	}
	warning = atof(argv[2]);
	critical = atof(argv[3]);
	widen(argv[1], given, MAX_TEXT);
	/* a named path validates as given; one with name indexes only once translated */
	valid = PdhValidatePathW(given);
	status = translate(given, path, MAX_TEXT);
	if (status != ERROR_SUCCESS) {
		printf("UNKNOWN: Invalid counter path: %s (0x%lx)\n", narrow(given),
		       (unsigned long)(DWORD)(valid != ERROR_SUCCESS ? valid : status));
		return 3;
	}
	status = PdhValidatePathW(path);
	if (status != ERROR_SUCCESS) {
		printf("UNKNOWN: Invalid counter path: %s (0x%lx)\n", narrow(path),
		       (unsigned long)(DWORD)status);
		return 3;
	}
	status = PdhOpenQueryW(NULL, 0, &query);
	if (status == ERROR_SUCCESS)
		status = PdhAddEnglishCounterW(query, path, 0, &counter);
	if (status != ERROR_SUCCESS) {
		printf("UNKNOWN: Failed to add %s (0x%lx)\n", narrow(path),
		       (unsigned long)(DWORD)status);
		goto out;
	}
	status = PdhGetCounterInfoW(counter, TRUE, &size, NULL);
	if (status == PDH_MORE_DATA) {
		info = (PDH_COUNTER_INFO_W *)malloc(size);
		status = info ? PdhGetCounterInfoW(counter, TRUE, &size, info)
			      : PDH_MEMORY_ALLOCATION_FAILURE;
	}
	if (status != ERROR_SUCCESS) {
		printf("UNKNOWN: PdhGetCounterInfo failed (0x%lx)\n", (unsigned long)(DWORD)status);
		goto out;
	}
	printf("type 0x%08lx %s: %s\n", (unsigned long)info->dwType, narrow(info->szCounterName),
	       narrow(info->szExplainText));
	/* rates need two samples: one, then one more an interval later */
	status = PdhCollectQueryData(query);
	if (status == ERROR_SUCCESS) {
		Sleep(argc == 5 ? (DWORD)atoi(argv[4]) : 1000);
		status = PdhCollectQueryData(query);
	}
	if (status == ERROR_SUCCESS)
		status = PdhGetFormattedCounterValue(counter, PDH_FMT_DOUBLE | PDH_FMT_NOCAP100,
						     NULL, &value);
	if (status != ERROR_SUCCESS) {
		printf("UNKNOWN: No value for %s (0x%lx)\n", narrow(path),
		       (unsigned long)(DWORD)status);
		goto out;
	}
	code = value.doubleValue >= critical ? 2 : value.doubleValue >= warning ? 1 : 0;
	printf("%s: %s = %g|'%s'=%g;%g;%g\n",
	       code == 2   ? "CRITICAL"
	       : code == 1 ? "WARNING"
			   : "OK",
	       narrow(path), value.doubleValue, narrow(path), value.doubleValue, warning, critical);
out:
	free(info);
	if (query)
		PdhCloseQuery(query);
	return code;
}

// SPDX-License-Identifier: MIT
/*
 * agent_array.c - a rewrite, in this project's words, of what a monitoring agent's PDH
 * collector does (the shape of Telegraf's win_perf_counters input and of Datadog's PDH
 * check, not their code: both are Go/Python over pdh.dll): PdhOpenQueryW,
 * PdhExpandWildCardPathW with the size protocol (NULL buffer -> PDH_MORE_DATA + size, then
 * the call again) to see which instances exist, PdhAddEnglishCounterW of the wildcard
 * path, PdhCollectQueryData twice (rates need two samples), then
 * PdhGetFormattedCounterArrayW with the size protocol, one line per instance. Windows C
 * with L"" (-fshort-wchar); port changes: the includes, the path from the command line.
 *
 *   agent_array PATH     prints "expanded <path>" per expanded path, "<instance> <value>"
 *                        per array item (CStatus not valid: "<instance> invalid"), "end"
 */
#include <stdio.h>
#include <stdlib.h>
#include <perflib/win32compat.h>
#include <pdh.h>
#include <pdhmsg.h>

static void narrow(const wchar_t *w, char *s, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n && w[i]; i++)
		s[i] = w[i] < 0x80 ? (char)w[i] : '?';
	s[i] = 0;
}

int __cdecl main(int argc, char **argv)
{
	wchar_t path[512], *list = NULL, *p;
	PDH_FMT_COUNTERVALUE_ITEM_W *items = NULL;
	DWORD size = 0, bytes = 0, count = 0, i;
	PDH_HQUERY query = NULL;
	PDH_HCOUNTER counter;
	PDH_STATUS st;
	char text[512];
	int ret = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: agent_array PATH\n");
		return 2;
	}
	for (i = 0; i < 511 && argv[1][i]; i++)
		path[i] = (wchar_t)(unsigned char)argv[1][i];
	path[i] = 0;
	if ((st = PdhOpenQueryW(NULL, 0, &query)) != ERROR_SUCCESS)
		goto out;
	st = PdhExpandWildCardPathW(NULL, path, NULL, &size, 0);
	if (st != PDH_MORE_DATA)
		goto out;
	list = calloc(size, sizeof(wchar_t));
	if (!list || (st = PdhExpandWildCardPathW(NULL, path, list, &size, 0)) != ERROR_SUCCESS)
		goto out;
	for (p = list; *p;) {
		narrow(p, text, sizeof(text));
		printf("expanded %s\n", text);
		while (*p++) /* no wcslen: libc's wchar_t is not -fshort-wchar's */
			;
	}
	if ((st = PdhAddEnglishCounterW(query, path, 0, &counter)) != ERROR_SUCCESS)
		goto out;
	if ((st = PdhCollectQueryData(query)) != ERROR_SUCCESS)
		goto out;
	Sleep(1000);
	if ((st = PdhCollectQueryData(query)) != ERROR_SUCCESS)
		goto out;
	st = PdhGetFormattedCounterArrayW(counter, PDH_FMT_DOUBLE, &bytes, &count, NULL);
	if (st != PDH_MORE_DATA)
		goto out;
	items = malloc(bytes);
	if (!items)
		goto out;
	st = PdhGetFormattedCounterArrayW(counter, PDH_FMT_DOUBLE, &bytes, &count, items);
	if (st != ERROR_SUCCESS)
		goto out;
	for (i = 0; i < count; i++) {
		narrow(items[i].szName, text, sizeof(text));
		if (items[i].FmtValue.CStatus == PDH_CSTATUS_VALID_DATA ||
		    items[i].FmtValue.CStatus == PDH_CSTATUS_NEW_DATA)
			printf("%s %.6f\n", text, items[i].FmtValue.doubleValue);
		else
			printf("%s invalid\n", text);
	}
	printf("end\n");
	ret = 0;
out:
	if (ret)
		printf("error 0x%x\n", (unsigned)st);
	free(items);
	free(list);
	if (query)
		PdhCloseQuery(query);
	return ret;
}

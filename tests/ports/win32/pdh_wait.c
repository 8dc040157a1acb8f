// SPDX-License-Identifier: MIT
/*
 * pdh_wait.c - a PDH consumer written as Windows monitoring code is: generic text (TCHAR,
 * _tmain, _tprintf), the object browsed with the two-call PdhEnumObjectItems of Microsoft's
 * "Enumerating Process Objects" sample, then the counter sampled the way psutil reads the
 * load average: PdhCollectQueryDataEx signals an event every second and a thread-pool wait
 * (RegisterWaitForSingleObject) formats the value in its callback. Built ANSI and UNICODE;
 * the output is compared byte for byte (tests/data/win32/pdh_wait.out).
 *
 *   pdh_wait OBJECT COUNTER INSTANCE SAMPLES
 */
#include <windows.h>
#include <tchar.h>
#include <strsafe.h>
#include <stdio.h>
#include <pdh.h>
#include <pdhmsg.h>

struct sampler {
	PDH_HCOUNTER counter;
	HANDLE done;
	LONG samples, wanted;
	double last;
	PDH_STATUS status;
};

static VOID CALLBACK on_sample(PVOID lpParameter, BOOLEAN TimerOrWaitFired)
{
	struct sampler *s = (struct sampler *)lpParameter;
	PDH_FMT_COUNTERVALUE v;

	if (TimerOrWaitFired)
		return;
	s->status = PdhGetFormattedCounterValue(s->counter, PDH_FMT_DOUBLE, NULL, &v);
	if (s->status == ERROR_SUCCESS)
		s->last = v.doubleValue;
	if (InterlockedIncrement(&s->samples) == s->wanted)
		SetEvent(s->done);
}

static int browse(LPCTSTR object)
{
	LPTSTR counters = NULL, instances = NULL, p;
	DWORD cc = 0, ci = 0;
	PDH_STATUS st;

	st = PdhEnumObjectItems(NULL, NULL, object, NULL, &cc, NULL, &ci, PERF_DETAIL_WIZARD, 0);
	if (st != PDH_MORE_DATA) {
		_tprintf(_T("PdhEnumObjectItems sizes: 0x%08lx\n"), (unsigned long)st);
		return 1;
	}
	counters = (LPTSTR)malloc(cc * sizeof(TCHAR));
	instances = (LPTSTR)malloc(ci * sizeof(TCHAR));
	st = PdhEnumObjectItems(NULL, NULL, object, counters, &cc, instances, &ci,
				PERF_DETAIL_WIZARD, 0);
	if (st == ERROR_SUCCESS) {
		_tprintf(_T("counters of %s:"), object);
		for (p = counters; *p; p += _tcslen(p) + 1)
			_tprintf(_T(" [%s]"), p);
		_tprintf(_T("\ninstances:"));
		for (p = instances; *p; p += _tcslen(p) + 1)
			_tprintf(_T(" [%s]"), p);
		_tprintf(_T("\n"));
	} else {
		_tprintf(_T("PdhEnumObjectItems: 0x%08lx\n"), (unsigned long)st);
	}
	free(counters);
	free(instances);
	return st != ERROR_SUCCESS;
}

int _tmain(int argc, TCHAR *argv[])
{
	struct sampler s;
	TCHAR path[PDH_MAX_COUNTER_PATH];
	PDH_COUNTER_PATH_ELEMENTS pe;
	DWORD size = PDH_MAX_COUNTER_PATH;
	PDH_HQUERY query = NULL;
	HANDLE event = NULL, wait = NULL;
	PDH_STATUS st;
	int ret = 1;

	if (argc != 5) {
		_ftprintf(stderr, _T("usage: pdh_wait OBJECT COUNTER INSTANCE SAMPLES\n"));
		return 2;
	}
	ZeroMemory(&s, sizeof(s));
	ZeroMemory(&pe, sizeof(pe));
	if (browse(argv[1]))
		return 1;
	pe.szObjectName = argv[1];
	pe.szCounterName = argv[2];
	pe.szInstanceName = argv[3];
	st = PdhMakeCounterPath(&pe, path, &size, 0);
	if (st != ERROR_SUCCESS)
		goto out;
	s.wanted = _ttoi(argv[4]);
	s.done = CreateEvent(NULL, TRUE, FALSE, NULL);
	event = CreateEvent(NULL, FALSE, FALSE, _T("pdh_wait"));
	if (!s.done || !event)
		goto out;
	if ((st = PdhOpenQuery(NULL, 0, &query)) != ERROR_SUCCESS ||
	    (st = PdhAddEnglishCounter(query, path, 0, &s.counter)) != ERROR_SUCCESS)
		goto out;
	if (!RegisterWaitForSingleObject(&wait, event, on_sample, &s, INFINITE,
					 WT_EXECUTEDEFAULT)) {
		st = (PDH_STATUS)GetLastError();
		goto out;
	}
	if ((st = PdhCollectQueryDataEx(query, 1, event)) != ERROR_SUCCESS)
		goto out;
	if (WaitForSingleObject(s.done, 20000) != WAIT_OBJECT_0) {
		_tprintf(_T("no %ld samples in 20 s\n"), (long)s.wanted);
		goto out;
	}
	UnregisterWaitEx(wait, INVALID_HANDLE_VALUE);
	wait = NULL;
	_tprintf(_T("%s = %.3f after %ld samples (status 0x%08lx)\n"), path, s.last, (long)s.wanted,
		 (unsigned long)s.status);
	st = ERROR_SUCCESS;
	ret = 0;
out:
	if (ret)
		_tprintf(_T("failed: 0x%08lx\n"), (unsigned long)st);
	if (wait)
		UnregisterWaitEx(wait, INVALID_HANDLE_VALUE);
	if (query)
		PdhCloseQuery(query);
	if (event)
		CloseHandle(event);
	if (s.done)
		CloseHandle(s.done);
	return ret;
}

// SPDX-License-Identifier: MIT
/*
 * tchar_events.c - generic-text Windows code (TCHAR, _T, _tmain, _tcs*, _stprintf_s,
 * lstrlen, StringCchPrintf) and the synchronisation a counter program uses (CreateEvent,
 * SetEvent/ResetEvent, WaitForSingleObject, WaitForMultipleObjects, RegisterWaitForSingle-
 * Object with its timeout and its signal, UnregisterWaitEx, Interlocked*). Built as ANSI and
 * as UNICODE (with and without -fshort-wchar); every build prints the same bytes
 * (tests/data/win32/tchar_events.out).
 *
 *   tchar_events NAME
 */
#include <windows.h>
#include <tchar.h>
#include <strsafe.h>
#include <stdio.h>

static LONG fired, timeouts;
static HANDLE done;

/* a once-only wait that unregisters itself from its callback (Windows: ERROR_IO_PENDING) */
struct self_wait {
	HANDLE wait, finished;
	BOOL unregistered;
	DWORD error;
};

static VOID CALLBACK on_once(PVOID lpParameter, BOOLEAN TimerOrWaitFired)
{
	struct self_wait *w = (struct self_wait *)lpParameter;

	(void)TimerOrWaitFired;
	while (!InterlockedCompareExchangePointer(&w->wait, NULL, NULL))
		Sleep(1); /* the registering thread stores the handle after the call returns */
	SetLastError(0);
	w->unregistered = UnregisterWait(w->wait);
	w->error = GetLastError();
	SetEvent(w->finished);
}

static VOID CALLBACK on_wait(PVOID lpParameter, BOOLEAN TimerOrWaitFired)
{
	LONG n;

	if (TimerOrWaitFired)
		InterlockedIncrement(&timeouts);
	else
		n = InterlockedIncrement(&fired), (void)n;
	if (InterlockedCompareExchange((LONG *)lpParameter, 0, 0) == 1 && fired >= 2)
		SetEvent(done);
}

static void generic_text(const TCHAR *name)
{
	TCHAR buf[16], num[34];
	int n;

	_tprintf(_T("name %s len %d lstrlen %d\n"), name, (int)_tcslen(name), lstrlen(name));
	_tprintf(_T("_tcscmp %d _tcsicmp %d _tcsncmp %d\n"), _tcscmp(_T("a"), _T("b")) < 0,
		 _tcsicmp(_T("TOTAL"), _T("total")), _tcsncmp(_T("abc"), _T("abd"), 2));
	n = _stprintf_s(buf, 16, _T("%s#%d"), _T("cpu"), 3);
	_tprintf(_T("_stprintf_s %d %s\n"), n, buf);
	n = _sntprintf(buf, 4, _T("%s"), _T("abcdef"));
	_tprintf(_T("_sntprintf %d\n"), n);
	_tprintf(_T("_tcscpy_s %d"), (int)_tcscpy_s(buf, 4, _T("abcd")));
	_tprintf(_T(" %d %s\n"), (int)_tcscpy_s(buf, 16, _T("Memory")), buf);
	_tcscat_s(buf, 16, _T("(x)"));
	_tprintf(_T("_tcscat_s %s _tcschr %s _tcsrchr %s _tcsstr %s\n"), buf, _tcschr(buf, _T('o')),
		 _tcsrchr(buf, _T('(')), _tcsstr(buf, _T("ry")));
	_tprintf(_T("_ttoi %d _tcstol %ld _itot %s\n"), _ttoi(_T("-12")),
		 (long)_tcstol(_T("ff"), NULL, 16), _itot(42, num, 2));
	StringCchPrintf(buf, 16, TEXT("%s/%d"), TEXT("disk"), 7);
	_tprintf(_T("StringCchPrintf %s"), buf);
	n = StringCchCopy(buf, 4, _T("abcdef")) == STRSAFE_E_INSUFFICIENT_BUFFER;
	_tprintf(_T(" StringCchCopy %s %s\n"), n ? _T("cut") : _T("?"), buf);
}

static void events(void)
{
	HANDLE ev[2], wait;
	LONG armed = 0;
	LONG64 big = 5;
	PVOID p = NULL;
	int i;

	ev[0] = CreateEvent(NULL, TRUE, FALSE, NULL);  /* manual reset */
	ev[1] = CreateEvent(NULL, FALSE, FALSE, NULL); /* auto reset */
	done = CreateEvent(NULL, TRUE, FALSE, _T("done"));
	_tprintf(_T("wait unset %lu"), (unsigned long)WaitForSingleObject(ev[0], 0));
	SetEvent(ev[0]);
	_tprintf(_T(" manual %lu"), (unsigned long)WaitForSingleObject(ev[0], 0));
	_tprintf(_T(" %lu"), (unsigned long)WaitForSingleObject(ev[0], 10));
	ResetEvent(ev[0]);
	_tprintf(_T(" reset %lu\n"), (unsigned long)WaitForSingleObject(ev[0], 20));
	SetEvent(ev[1]);
	_tprintf(_T("any %lu"), (unsigned long)WaitForMultipleObjects(2, ev, FALSE, 100));
	_tprintf(_T(" auto consumed %lu"), (unsigned long)WaitForMultipleObjects(2, ev, FALSE, 0));
	SetEvent(ev[0]);
	_tprintf(_T(" all %lu"), (unsigned long)WaitForMultipleObjects(2, ev, TRUE, 30));
	SetEvent(ev[1]);
	_tprintf(_T(" %lu"), (unsigned long)WaitForMultipleObjects(2, ev, TRUE, INFINITE));
	_tprintf(_T(" bad %lu"), (unsigned long)WaitForSingleObject(NULL, 0));
	_tprintf(_T(" %lu\n"), (unsigned long)GetLastError());
	/* the thread-pool wait: a timeout first (TimerOrWaitFired TRUE), then two signals */
	if (!RegisterWaitForSingleObject(&wait, ev[1], on_wait, &armed, 50, WT_EXECUTEDEFAULT)) {
		_tprintf(_T("RegisterWaitForSingleObject failed %lu\n"),
			 (unsigned long)GetLastError());
		return;
	}
	while (InterlockedCompareExchange(&timeouts, 0, 0) == 0)
		Sleep(5);
	InterlockedExchange(&armed, 1);
	for (i = 0; i < 2; i++) {
		LONG before = InterlockedExchangeAdd(&fired, 0);

		SetEvent(ev[1]);
		while (InterlockedExchangeAdd(&fired, 0) == before)
			Sleep(1);
	}
	_tprintf(_T("registered wait: done %lu fired %ld timeouts>0 %d\n"),
		 (unsigned long)WaitForSingleObject(done, 5000), (long)fired, timeouts > 0);
	_tprintf(_T("unregister %d"), UnregisterWaitEx(wait, INVALID_HANDLE_VALUE));
	_tprintf(_T(" again %d"), UnregisterWait(wait));
	_tprintf(_T(" %lu\n"), (unsigned long)GetLastError());
	_tprintf(_T("interlocked %lld"), (long long)InterlockedIncrement64(&big));
	_tprintf(_T(" %lld"), (long long)InterlockedCompareExchange64(&big, 9, 6));
	_tprintf(_T(" %lld %d\n"), (long long)big,
		 InterlockedCompareExchangePointer(&p, &big, NULL) == NULL && p == &big);
	/* the error paths, a self-unregistering callback, a completion event */
	{
		struct self_wait sw;
		HANDLE two[2] = {ev[0], ev[0]}, h = NULL, completion;

		_tprintf(_T("errors %d"),
			 RegisterWaitForSingleObject(NULL, ev[0], on_wait, NULL, INFINITE, 0));
		_tprintf(_T(" %lu"), (unsigned long)GetLastError());
		_tprintf(_T(" %d"),
			 RegisterWaitForSingleObject(&h, &sw, on_wait, NULL, INFINITE, 0));
		_tprintf(_T(" %lu"), (unsigned long)GetLastError());
		_tprintf(_T(" %lu"), (unsigned long)WaitForMultipleObjects(2, two, FALSE, 0));
		_tprintf(_T(" %lu"), (unsigned long)GetLastError());
		_tprintf(_T(" %lu"), (unsigned long)WaitForMultipleObjects(0, two, FALSE, 0));
		_tprintf(_T(" %lu\n"), (unsigned long)GetLastError());
		ZeroMemory(&sw, sizeof(sw));
		sw.finished = CreateEvent(NULL, TRUE, FALSE, NULL);
		SetEvent(ev[1]);
		if (RegisterWaitForSingleObject(&h, ev[1], on_once, &sw, INFINITE,
						WT_EXECUTEONLYONCE)) {
			InterlockedExchangePointer(&sw.wait, h);
			_tprintf(_T("self-unregister %lu"),
				 (unsigned long)WaitForSingleObject(sw.finished, 5000));
			_tprintf(_T(" %d %lu\n"), sw.unregistered, (unsigned long)sw.error);
		}
		completion = CreateEvent(NULL, TRUE, FALSE, NULL);
		if (RegisterWaitForSingleObject(&h, ev[1], on_wait, &armed, INFINITE, 0)) {
			_tprintf(_T("completion %d"), UnregisterWaitEx(h, completion));
			_tprintf(_T(" %lu\n"),
				 (unsigned long)WaitForSingleObject(completion, 5000));
		}
		CloseHandle(completion);
		CloseHandle(sw.finished);
	}
	for (i = 0; i < 2; i++)
		CloseHandle(ev[i]);
	_tprintf(_T("close %d"), CloseHandle(done));
	_tprintf(_T(" %d\n"), CloseHandle(done));
}

int _tmain(int argc, TCHAR *argv[])
{
	if (argc != 2) {
		_ftprintf(stderr, _T("usage: tchar_events NAME\n"));
		return 2;
	}
	generic_text(argv[1]);
	events();
	return 0;
}

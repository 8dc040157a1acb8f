// SPDX-License-Identifier: MIT
/*
 * wide_crt.c - the wide C runtime as Windows code uses it: wmain with UTF-16 arguments,
 * wprintf/swprintf/_snwprintf(_s) with Microsoft's format rules, the wcs* functions, the
 * secure copies, lstr* and strsafe.h, non-ASCII text and surrogate pairs. Written as a
 * Windows program (L"" literals, wchar_t, <windows.h>, <strsafe.h>); built with
 * `$(pkg-config --cflags --libs perflib-win32 pdh) -fshort-wchar -DUNICODE -D_UNICODE`.
 * Every line of its output is compared byte for byte (tests/data/win32/wide_crt.out).
 *
 *   wide_crt ARG...     prints its arguments, then the checks
 */
#include <windows.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <strsafe.h>

/* the units of a buffer, in hex: what a truncation left */
static void dump(const wchar_t *label, const wchar_t *buf, size_t n)
{
	size_t i;

	wprintf(L"%-14s", label);
	for (i = 0; i < n; i++)
		wprintf(L" %04x", (unsigned)buf[i]);
	wprintf(L"\n");
}

static void strings(void)
{
	/* _ltow in base 2 writes 33 characters with its NUL, _i64tow up to 66 */
	wchar_t buf[66], *end;
	const wchar_t clef[] = L"a\U0001D11Eb"; /* a, a surrogate pair, b */

	wprintf(L"wcslen %d %d %d\n", (int)wcslen(L""), (int)wcslen(L"Processor"),
		(int)wcslen(clef));
	wprintf(L"wcscmp %d %d %d\n", wcscmp(L"abc", L"abd"), wcscmp(L"b", L"b"),
		wcscmp(L"\u00e9", L"e"));
	wprintf(L"wcsncmp %d %d\n", wcsncmp(L"_Total", L"_Tot", 4), wcsncmp(L"ab", L"ac", 2));
	wprintf(L"_wcsicmp %d %d %d\n", _wcsicmp(L"_TOTAL", L"_total"), _wcsicmp(L"a", L"B"),
		_wcsnicmp(L"PROCESSOR", L"processes", 6));
	wcscpy(buf, L"Process");
	wcscat(buf, L"or(");
	wcsncat(buf, L"_Total)xyz", 7);
	wprintf(L"wcscpy/cat \"%s\" %d\n", buf, (int)wcslen(buf));
	wmemset(buf, L'#', 8);
	wcsncpy(buf, L"ab", 5);
	dump(L"wcsncpy", buf, 8);
	wprintf(L"wcschr %d wcsrchr %d wcsstr %d %s\n",
		(int)(wcschr(L"a\\b\\c", L'\\') - L"a\\b\\c"),
		(int)(wcsrchr(L"a\\b\\c", L'\\') - L"a\\b\\c"),
		(int)(wcsstr(L"\\Processor(_Total)\\% Idle", L"(_T") -
		      L"\\Processor(_Total)\\% Idle"),
		wcsstr(L"abc", L"x") ? L"found" : L"none");
	wprintf(L"_wtoi %d %d %d %ld\n", _wtoi(L"  -42x"), _wtoi(L"abc"), _wtoi(L"99999999999"),
		(long)_wtol(L"+17"));
	wprintf(L"wcstol %ld", wcstol(L"0x1F rest", &end, 16));
	wprintf(L" end \"%s\"", end);
	wprintf(L" wcstoul %lu wcstod %.3f\n", (unsigned long)wcstoul(L"4294967295", NULL, 10),
		wcstod(L"2.5e3", NULL));
	end = _wcsdup(L"Thread(_Total/0#1)");
	wprintf(L"_wcsdup %s wcspbrk %s wcsspn %d wcscspn %d\n", end, wcspbrk(end, L"/#"),
		(int)wcsspn(end, L"Tdhear"), (int)wcscspn(end, L"("));
	free(end);
	wprintf(L"_ultow %s", _ultow(4294967295u, buf, 16));
	wprintf(L" _ui64tow %s", _ui64tow(18446744073709551615ull, buf, 36));
	wprintf(L" _ltow %s\n", _ltow(-7, buf, 2));
	wprintf(L"_itow %s", _itow(-255, buf, 10));
	wprintf(L" %s", _itow(255, buf, 16));
	wprintf(L" %s\n", _i64tow(-9000000000LL, buf, 10));
}

static void secure(void)
{
	wchar_t small[4], buf[16];

	wprintf(L"wcscpy_s %d", wcscpy_s(small, 4, L"abc"));
	wprintf(L" %d", wcscpy_s(small, 4, L"abcd"));
	dump(L" ->", small, 1);
	wprintf(L"wcscpy_s NULL %d", wcscpy_s(NULL, 4, L"a"));
	wprintf(L" %d\n", wcscpy_s(small, 4, NULL));
	wcscpy_s(buf, 16, L"ab");
	wprintf(L"wcscat_s %d \"%s\"", wcscat_s(buf, 16, L"cd"), buf);
	wprintf(L" %d \"%s\"\n", wcscat_s(buf, 5, L"e"), buf);
	wprintf(L"wcsncpy_s %d", wcsncpy_s(small, 4, L"abcdef", _TRUNCATE));
	wprintf(L" \"%s\"", small);
	wprintf(L" %d \"%s\"\n", wcsncpy_s(small, 4, L"abcdef", 2), small);
	wprintf(L"lstrlen %d %d %d", lstrlenW(L"Memory"), lstrlenW(NULL), lstrlenA("\xc3\xa9"));
	wprintf(L" lstrcpyn \"%s\"", lstrcpynW(buf, L"Processor", 5));
	wprintf(L" lstrcmp %d %d %d %d\n", lstrcmpW(L"a", L"b"), lstrcmpiW(L"DISK", L"disk"),
		lstrcmpW(NULL, L"a"), lstrcmpA("b", "a"));
}

static void printfs(void)
{
	wchar_t buf[8];
	char nbuf[8];
	int n;

	/* Microsoft's rules: in a wide function %s is wide, %S narrow; %hs and %ls explicit */
	wprintf(L"[%s] [%S] [%hs] [%ls] [%c%C] [%hc%lc]\n", L"wide", "narrow", "h", L"l", L'w', 'n',
		'h', L'l');
	wprintf(L"[%6s] [%-6s] [%.3s] [%*d] [%-*d]\n", L"ab", L"ab", L"abcdef", 4, 7, 4, 7);
	wprintf(L"[%d] [%ld] [%I64d] [%lld] [%u] [%x] [%X] [%#x] [%o] [%hd] [%zu]\n", -1, -2L,
		(long long)-9000000000LL, 123456789012LL, 4294967295u, 255u, 255u, 255u, 8u,
		(short)-3, (size_t)42);
	wprintf(L"[%08.3f] [%e] [%g] [%-6.1f] [%+d] [% d] [%%] [%p]\n", 3.14159, 12345.678, 0.0001,
		2.5, 5, 5, (void *)0);
	wprintf(L"[%s] [%S]\n", (wchar_t *)NULL, (char *)NULL);
	/* UTF-16 out as UTF-8: e-acute, a pair (U+1D11E), CJK, a lone surrogate (U+FFFD) */
	wprintf(L"utf8 [h\u00e9llo] [\U0001D11E] [\u65e5\u672c] [\xD800!] [%s]\n", L"\u00fc");
	printf("printf [%s] [%S] [%ls] [%hs] [%d] [%ld]\n", "narrow", L"wide \u00e9", L"\U0001D11E",
	       "h", 7, -5L);
	/* swprintf (ISO): cut to count - 1 and a NUL, -1 */
	n = swprintf(buf, 8, L"%s", L"123456789");
	wprintf(L"swprintf %d", n);
	dump(L"", buf, 8);
	n = swprintf(buf, 8, L"%d", 42);
	wprintf(L"swprintf %d \"%s\"\n", n, buf);
	/* _snwprintf: exactly full is not NUL-terminated; longer is -1 */
	wmemset(buf, L'#', 8);
	n = _snwprintf(buf, 4, L"%s", L"abcd");
	wprintf(L"_snwprintf %d", n);
	dump(L"", buf, 5);
	n = _snwprintf(buf, 4, L"%s", L"abcdef");
	wprintf(L"_snwprintf %d", n);
	dump(L"", buf, 5);
	/* _snwprintf_s: _TRUNCATE cuts to fit; too long without it is "" and -1 (ERANGE) */
	n = _snwprintf_s(buf, 8, _TRUNCATE, L"%s", L"123456789");
	wprintf(L"_snwprintf_s %d \"%s\"", n, buf);
	n = _snwprintf_s(buf, 8, 3, L"%s", L"123456789");
	wprintf(L" %d \"%s\"", n, buf);
	errno = 0;
	n = _snwprintf_s(buf, 4, 6, L"%s", L"123456789");
	wprintf(L" %d \"%s\" %s\n", n, buf, errno == ERANGE ? L"ERANGE" : L"?");
	errno = 0;
	n = swprintf_s(buf, 4, L"%d", 12345);
	wprintf(L"swprintf_s %d \"%s\" %s", n, buf, errno == ERANGE ? L"ERANGE" : L"?");
	n = swprintf_s(buf, 8, L"%d", 12345);
	wprintf(L" %d \"%s\"\n", n, buf);
	n = sprintf_s(nbuf, 8, "%S", L"\u00e9t\u00e9");
	wprintf(L"sprintf_s %d \"%S\"\n", n, nbuf);
	n = swprintf(buf, 8, L"%n", &n);
	wprintf(L"%%n refused %d\n", n);
}

static void strsafe(void)
{
	wchar_t buf[8], nonul[4] = {L'a', L'b', L'c', L'd'};
	size_t len = 99;
	HRESULT hr;

	hr = StringCchCopyW(buf, 8, L"Processor");
	wprintf(L"StringCchCopy 0x%08lx \"%s\"", (unsigned long)hr, buf);
	hr = StringCchCopyW(buf, 8, L"Disk");
	wprintf(L" 0x%08lx \"%s\"\n", (unsigned long)hr, buf);
	hr = StringCchCatW(buf, 8, L"Time");
	wprintf(L"StringCchCat 0x%08lx \"%s\"", (unsigned long)hr, buf);
	hr = StringCchCatW(nonul, 4, L"x");
	wprintf(L" unterminated 0x%08lx\n", (unsigned long)hr);
	hr = StringCchLengthW(L"Memory", 8, &len);
	wprintf(L"StringCchLength 0x%08lx %d", (unsigned long)hr, (int)len);
	hr = StringCchLengthW(nonul, 4, &len);
	wprintf(L" 0x%08lx %d\n", (unsigned long)hr, (int)len);
	hr = StringCchPrintfW(buf, 8, L"%s#%d", L"cpu", 12345);
	wprintf(L"StringCchPrintf 0x%08lx \"%s\"", (unsigned long)hr, buf);
	hr = StringCbCopyW(buf, sizeof(buf), L"\U0001D11E\u00e9");
	wprintf(L" StringCbCopy 0x%08lx \"%s\"", (unsigned long)hr, buf);
	hr = StringCchCopyW(buf, 0, L"x");
	wprintf(L" zero 0x%08lx %s\n", (unsigned long)hr, SUCCEEDED(hr) ? L"ok" : L"failed");
	hr = StringCchCopyNW(buf, 8, L"abcdef", 3);
	wprintf(L"StringCchCopyN 0x%08lx \"%s\"", (unsigned long)hr, buf);
	hr = StringCchCatNW(buf, 8, L"defghij", 5);
	wprintf(L" StringCchCatN 0x%08lx \"%s\"", (unsigned long)hr, buf);
	hr = StringCbCatW(buf, 6 * sizeof(wchar_t), L"x");
	wprintf(L" StringCbCat 0x%08lx\n", (unsigned long)hr);
	hr = StringCbLengthW(L"Disk", sizeof(buf), &len);
	wprintf(L"StringCbLength 0x%08lx %d", (unsigned long)hr, (int)len);
	hr = StringCchLengthA(NULL, 8, &len);
	wprintf(L" NULL 0x%08lx %d", (unsigned long)hr, (int)len);
	{
		char nb[6];

		hr = StringCbPrintfA(nb, sizeof(nb), "%s-%S", "ab", L"\u00e9\u00e9");
		wprintf(L" StringCbPrintfA 0x%08lx \"%S\"\n", (unsigned long)hr, nb);
	}
	fputws(L"fputws \u00e9\n", stdout);
	_putws(L"_putws done");
}

int wmain(int argc, wchar_t *argv[])
{
	int i;

	for (i = 1; i < argc; i++)
		wprintf(L"argv[%d] \"%s\" %d units\n", i, argv[i], (int)wcslen(argv[i]));
	strings();
	secure();
	printfs();
	strsafe();
	return 0;
}

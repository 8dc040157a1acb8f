/* SPDX-License-Identifier: MIT */
/*
 * windows.h - perflib-win32's <windows.h>: what Windows performance-counter providers and
 * consumers use of it, with Windows semantics, and nothing else (a name it does not list is a
 * compile error, not a stub). `cc prog.c $(pkg-config --cflags --libs perflib-win32 pdh)`;
 * docs/PORTING.md lists every name and what is not covered.
 *
 *  - <perflib/win32compat.h>: Sleep, QueryPerformanceCounter/Frequency, GetTickCount,
 *    GetCurrentProcessId, LoadLibrary/GetProcAddress/FreeLibrary, LARGE_INTEGER, __int64,
 *    wcscpy_s, wcsncpy_s, _itow_s, wcsnlen; with it <perflib.h> and the SAL annotations;
 *  - perflib-win32-rt.h: the windef.h/basetsd.h types, the wide C runtime on WCHAR (glibc's
 *    wide names replaced when wchar_t is 16 bits), the lstr* functions;
 *  - perflib-win32-sync.h: events, WaitFor*, RegisterWaitForSingleObject, Interlocked*;
 *  - TCHAR, LPTSTR, LPCTSTR, TEXT() (winnt.h), by UNICODE; wmain's declaration.
 */
#ifndef PERFLIB_WIN32_WINDOWS_H
#define PERFLIB_WIN32_WINDOWS_H

#include "perflib-win32-rt.h"
#include "perflib-win32-sync.h"

#ifdef UNICODE
typedef WCHAR TCHAR, *PTCHAR;
typedef WCHAR TBYTE, *PTBYTE;
typedef LPWSTR LPTSTR, PTSTR, LPTCH, PTCH;
typedef LPCWSTR LPCTSTR, PCTSTR;
#define __TEXT(quote) PERFLIB_WTEXT(quote)
#define lstrlen lstrlenW
#define lstrcpy lstrcpyW
#define lstrcpyn lstrcpynW
#define lstrcat lstrcatW
#define lstrcmp lstrcmpW
#define lstrcmpi lstrcmpiW
#else
typedef char TCHAR, *PTCHAR;
typedef unsigned char TBYTE, *PTBYTE;
typedef LPSTR LPTSTR, PTSTR, LPTCH, PTCH;
typedef LPCSTR LPCTSTR, PCTSTR;
#define __TEXT(quote) quote
#define lstrlen lstrlenA
#define lstrcpy lstrcpyA
#define lstrcpyn lstrcpynA
#define lstrcat lstrcatA
#define lstrcmp lstrcmpA
#define lstrcmpi lstrcmpiA
#endif
#define TEXT(quote) __TEXT(quote)

/*
 * wmain: a program may define int wmain(int argc, wchar_t *argv[]) (or _tmain in a UNICODE
 * build) instead of main; libperflib-win32main.a (in the module's libraries) then supplies a
 * main that converts the arguments from UTF-8 to UTF-16. In C++ this declaration gives the
 * program's wmain C linkage, as Windows' compilers do.
 */
#ifdef __cplusplus
extern "C" int wmain(int argc, WCHAR **argv);
#endif

#endif /* PERFLIB_WIN32_WINDOWS_H */

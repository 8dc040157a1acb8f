/* SPDX-License-Identifier: MIT */
/*
 * tchar.h - perflib-win32's generic-text mappings: with _UNICODE (or UNICODE) each _t name is
 * the WCHAR function of perflib-win32-rt.h and _T("x") a WCHAR literal (L"x" with
 * -fshort-wchar, else u"x"); without, the narrow function and "x". Only the names below.
 */
#ifndef PERFLIB_WIN32_TCHAR_H
#define PERFLIB_WIN32_TCHAR_H

#include "windows.h"

#if defined(_UNICODE) || defined(UNICODE)
typedef WCHAR _TCHAR, _TSCHAR, _TUCHAR, _TXCHAR;
typedef WCHAR _TINT;
#define _TEOF ((_TINT)0xFFFF)
#define __T(x) PERFLIB_WTEXT(x)
#define _tmain wmain
#define _tprintf perflib_win32_wprintf
#define _ftprintf perflib_win32_fwprintf
#define _vtprintf perflib_win32_vwprintf
#define _vftprintf perflib_win32_vfwprintf
#define _stprintf _swprintf
#define _stprintf_s swprintf_s
#define _vstprintf_s vswprintf_s
#define _sntprintf _snwprintf
#define _vsntprintf _vsnwprintf
#define _sntprintf_s _snwprintf_s
#define _vsntprintf_s _vsnwprintf_s
#define _fputts perflib_win32_fputws
#define _putts _putws
#define _tcslen perflib_win32_wcslen
#define _tcsnlen perflib_wcsnlen
#define _tcscmp perflib_win32_wcscmp
#define _tcsncmp perflib_win32_wcsncmp
#define _tcsicmp _wcsicmp
#define _tcsnicmp _wcsnicmp
#define _tcscpy perflib_win32_wcscpy
#define _tcsncpy perflib_win32_wcsncpy
#define _tcscat perflib_win32_wcscat
#define _tcsncat perflib_win32_wcsncat
#define _tcschr perflib_win32_wcschr
#define _tcsrchr perflib_win32_wcsrchr
#define _tcsstr perflib_win32_wcsstr
#define _tcsspn perflib_win32_wcsspn
#define _tcscspn perflib_win32_wcscspn
#define _tcspbrk perflib_win32_wcspbrk
#define _tcsdup perflib_win32_wcsdup
#define _tcscpy_s wcscpy_s
#define _tcsncpy_s wcsncpy_s
#define _tcscat_s wcscat_s
#define _tcsncat_s wcsncat_s
#define _tcstol perflib_win32_wcstol
#define _tcstoul perflib_win32_wcstoul
#define _tcstoi64 perflib_win32_wcstoll
#define _tcstoui64 perflib_win32_wcstoull
#define _tcstod perflib_win32_wcstod
#define _ttoi _wtoi
#define _tstoi _wtoi
#define _ttol _wtol
#define _tstol _wtol
#define _ttoi64 _wtoi64
#define _tstoi64 _wtoi64
#define _itot _itow
#define _itot_s _itow_s
#define _ltot _ltow
#define _ultot _ultow
#define _i64tot _i64tow
#define _ui64tot _ui64tow
#else
typedef char _TCHAR, _TSCHAR;
typedef unsigned char _TUCHAR;
typedef char _TXCHAR;
typedef int _TINT;
#define _TEOF EOF
#define __T(x) x
#define _tmain main
#define _tprintf printf
#define _ftprintf fprintf
#define _vtprintf vprintf
#define _vftprintf vfprintf
#define _stprintf sprintf
#define _stprintf_s sprintf_s
#define _vstprintf_s vsprintf_s
#define _sntprintf _snprintf
#define _vsntprintf _vsnprintf
#define _sntprintf_s _snprintf_s
#define _vsntprintf_s _vsnprintf_s
#define _fputts fputs
#define _putts puts
#define _tcslen strlen
#define _tcsnlen strnlen
#define _tcscmp strcmp
#define _tcsncmp strncmp
#define _tcsicmp _stricmp
#define _tcsnicmp _strnicmp
#define _tcscpy strcpy
#define _tcsncpy strncpy
#define _tcscat strcat
#define _tcsncat strncat
#define _tcschr strchr
#define _tcsrchr strrchr
#define _tcsstr strstr
#define _tcsspn strspn
#define _tcscspn strcspn
#define _tcspbrk strpbrk
#define _tcscpy_s strcpy_s
#define _tcsncpy_s strncpy_s
#define _tcscat_s strcat_s
#define _tcstol strtol
#define _tcstoul strtoul
#define _tcstoi64 strtoll
#define _tcstoui64 strtoull
#define _tcstod strtod
#define _ttoi atoi
#define _tstoi atoi
#define _ttol atol
#define _tstol atol
#define _ttoi64 atoll
#define _tstoi64 atoll
#define _itot _itoa
#endif
#define _T(x) __T(x)
#define _TEXT(x) __T(x)

#endif /* PERFLIB_WIN32_TCHAR_H */

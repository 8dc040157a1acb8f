/* SPDX-License-Identifier: MIT */
/*
 * perflib-win32-rt.h - the Windows basic types (windef.h, basetsd.h, winnt.h) and the C
 * runtime's wide-string functions on WCHAR (UTF-16 units) with Microsoft's rules, from
 * libperflib-win32. Part of the perflib-win32 pkg-config module, through <windows.h>,
 * <tchar.h> and <strsafe.h>; docs/PORTING.md lists every name.
 *
 * With a 16-bit wchar_t (-fshort-wchar) glibc's wide functions, which read 32-bit units, are
 * replaced in the including translation unit: wcslen, wcscpy, wprintf, swprintf, ... and the
 * narrow printf family (for %S and %ls of a WCHAR string) are macros for the perflib_win32_
 * functions below. The system headers they would rename are included first, so they keep
 * their own declarations; in C++ the names are also brought into std. With a 32-bit wchar_t
 * nothing is renamed: glibc's functions are right for wchar_t, and WCHAR strings use the
 * perflib_win32_ names (what <tchar.h>'s _tcs names map to in a UNICODE build).
 */
#ifndef PERFLIB_WIN32_RT_H
#define PERFLIB_WIN32_RT_H

#ifdef __cplusplus
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cwchar>
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <wchar.h>

#include "../win32compat.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PERFLIB_WIN32_API __attribute__((visibility("default")))
#if defined(__SIZEOF_WCHAR_T__) && __SIZEOF_WCHAR_T__ == 2
#define PERFLIB_WIN32_SHORT_WCHAR 1 /* wchar_t is WCHAR: glibc's wide names are replaced */
#else
#define PERFLIB_WIN32_SHORT_WCHAR 0
#endif

/* ---- basic types (windef.h, minwindef.h, basetsd.h, winnt.h) --------------------------- */

#ifndef CONST
#define CONST const
#endif
typedef char CHAR, *PCHAR, *LPCH, *PCH;
typedef char *LPSTR, *PSTR;
typedef const char *PCSTR, *LPCCH, *PCCH;
typedef short SHORT, *PSHORT;
typedef int INT, *PINT, *LPINT;
typedef unsigned int UINT, *PUINT;
typedef LONG *PLONG, *LPLONG;
typedef WORD *PWORD, *LPWORD;
typedef BOOL *PBOOL, *LPBOOL;
typedef float FLOAT, *PFLOAT;
typedef const void *LPCVOID;
typedef WCHAR *PWCHAR, *LPWCH, *PWCH;
typedef const WCHAR *LPCWCH, *PCWCH;
typedef int8_t INT8;
typedef uint8_t UINT8;
typedef int16_t INT16;
typedef uint16_t UINT16;
typedef int32_t INT32, LONG32;
typedef uint32_t UINT32, ULONG32, DWORD32;
typedef int64_t INT64, LONG64;
typedef uint64_t UINT64, DWORD64, DWORDLONG;
typedef int64_t *PLONGLONG;
typedef uint64_t *PULONGLONG;
typedef intptr_t INT_PTR, LONG_PTR;
typedef uintptr_t UINT_PTR, ULONG_PTR;
typedef uint64_t DWORD_PTR;
typedef ptrdiff_t SSIZE_T;
typedef SIZE_T *PSIZE_T;
typedef uint8_t BOOLEAN;
typedef BOOLEAN *PBOOLEAN;
typedef LONG HRESULT;
typedef int errno_t;

#ifndef __int8
#define __int8 char
#endif
#ifndef __int16
#define __int16 short
#endif
#ifndef MAX_PATH
#define MAX_PATH 260
#endif
#ifndef INVALID_HANDLE_VALUE
#define INVALID_HANDLE_VALUE ((HANDLE)(intptr_t)-1)
#endif
#ifndef ERROR_IO_PENDING
#define ERROR_IO_PENDING 997
#endif
#define S_OK ((HRESULT)0)
#define S_FALSE ((HRESULT)1)
#define SUCCEEDED(hr) (((HRESULT)(hr)) >= 0)
#define FAILED(hr) (((HRESULT)(hr)) < 0)
#define LOBYTE(w) ((BYTE)(((DWORD_PTR)(w)) & 0xff))
#define HIBYTE(w) ((BYTE)((((DWORD_PTR)(w)) >> 8) & 0xff))
#define LOWORD(l) ((WORD)(((DWORD_PTR)(l)) & 0xffff))
#define HIWORD(l) ((WORD)((((DWORD_PTR)(l)) >> 16) & 0xffff))
#define MAKEWORD(a, b)                                                                             \
	((WORD)(((BYTE)(((DWORD_PTR)(a)) & 0xff)) | ((WORD)((BYTE)(((DWORD_PTR)(b)) & 0xff))) << 8))
#define MAKELONG(a, b)                                                                             \
	((LONG)(((WORD)(((DWORD_PTR)(a)) & 0xffff)) | ((DWORD)((WORD)(((DWORD_PTR)(b)) & 0xffff))) \
							      << 16))
#ifndef ARRAYSIZE
#define ARRAYSIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#ifndef _countof
#define _countof(a) (sizeof(a) / sizeof((a)[0]))
#endif

/* ---- strings on WCHAR (UTF-16 units) ----------------------------------------------------- */

/*
 * As the C runtime's functions of the same names without the prefix, on WCHAR: lengths and
 * positions in units, comparisons by unit value returning -1, 0 or 1. The number readers take
 * the leading ASCII of the string (glibc's strto* rules; long is 64 bits here).
 */
PERFLIB_WIN32_API size_t perflib_win32_wcslen(const WCHAR *str);
PERFLIB_WIN32_API int perflib_win32_wcscmp(const WCHAR *string1, const WCHAR *string2);
PERFLIB_WIN32_API int perflib_win32_wcsncmp(const WCHAR *string1, const WCHAR *string2,
					    size_t count);
PERFLIB_WIN32_API WCHAR *perflib_win32_wcscpy(WCHAR *strDestination, const WCHAR *strSource);
PERFLIB_WIN32_API WCHAR *perflib_win32_wcsncpy(WCHAR *strDest, const WCHAR *strSource,
					       size_t count);
PERFLIB_WIN32_API WCHAR *perflib_win32_wcscat(WCHAR *strDestination, const WCHAR *strSource);
PERFLIB_WIN32_API WCHAR *perflib_win32_wcsncat(WCHAR *strDest, const WCHAR *strSource,
					       size_t count);
PERFLIB_WIN32_API WCHAR *perflib_win32_wcschr(const WCHAR *str, WCHAR c);
PERFLIB_WIN32_API WCHAR *perflib_win32_wcsrchr(const WCHAR *str, WCHAR c);
PERFLIB_WIN32_API WCHAR *perflib_win32_wcsstr(const WCHAR *str, const WCHAR *strSearch);
PERFLIB_WIN32_API size_t perflib_win32_wcsspn(const WCHAR *str, const WCHAR *strCharSet);
PERFLIB_WIN32_API size_t perflib_win32_wcscspn(const WCHAR *str, const WCHAR *strCharSet);
PERFLIB_WIN32_API WCHAR *perflib_win32_wcspbrk(const WCHAR *str, const WCHAR *strCharSet);
/* a malloc'd copy (free() it); NULL for NULL or when memory runs out */
PERFLIB_WIN32_API WCHAR *perflib_win32_wcsdup(const WCHAR *strSource);
PERFLIB_WIN32_API WCHAR *perflib_win32_wmemcpy(WCHAR *dest, const WCHAR *src, size_t count);
PERFLIB_WIN32_API WCHAR *perflib_win32_wmemmove(WCHAR *dest, const WCHAR *src, size_t count);
PERFLIB_WIN32_API WCHAR *perflib_win32_wmemset(WCHAR *dest, WCHAR c, size_t count);
PERFLIB_WIN32_API int perflib_win32_wmemcmp(const WCHAR *buffer1, const WCHAR *buffer2,
					    size_t count);
PERFLIB_WIN32_API WCHAR *perflib_win32_wmemchr(const WCHAR *buffer, WCHAR c, size_t count);
PERFLIB_WIN32_API long perflib_win32_wcstol(const WCHAR *strSource, WCHAR **endptr, int base);
PERFLIB_WIN32_API unsigned long perflib_win32_wcstoul(const WCHAR *strSource, WCHAR **endptr,
						      int base);
PERFLIB_WIN32_API long long perflib_win32_wcstoll(const WCHAR *strSource, WCHAR **endptr, int base);
PERFLIB_WIN32_API unsigned long long perflib_win32_wcstoull(const WCHAR *strSource, WCHAR **endptr,
							    int base);
PERFLIB_WIN32_API double perflib_win32_wcstod(const WCHAR *strSource, WCHAR **endptr);

/* Windows-only names: case-insensitive compares (-1, 0, 1; INT_MAX and EINVAL for NULL) */
PERFLIB_WIN32_API int _wcsicmp(const WCHAR *string1, const WCHAR *string2);
PERFLIB_WIN32_API int _wcsnicmp(const WCHAR *string1, const WCHAR *string2, size_t count);
/* base 10, clamped to their type's range (errno ERANGE); 0 for no number; LONG is 32 bits */
PERFLIB_WIN32_API int _wtoi(const WCHAR *str);
PERFLIB_WIN32_API LONG _wtol(const WCHAR *str);
PERFLIB_WIN32_API long long _wtoi64(const WCHAR *str);
/* @value in base @radix (2..36; another shows base 10) into @str (33 or 65 units of room) */
PERFLIB_WIN32_API WCHAR *_itow(int value, WCHAR *str, int radix);
PERFLIB_WIN32_API WCHAR *_ltow(LONG value, WCHAR *str, int radix);
PERFLIB_WIN32_API WCHAR *_ultow(ULONG value, WCHAR *str, int radix);
PERFLIB_WIN32_API WCHAR *_i64tow(long long value, WCHAR *str, int radix);
PERFLIB_WIN32_API WCHAR *_ui64tow(unsigned long long value, WCHAR *str, int radix);
PERFLIB_WIN32_API char *_itoa(int value, char *str, int radix);
/*
 * Secure appends and narrow copies: 0; EINVAL (NULL or empty destination, unterminated
 * destination, NULL source), ERANGE (does not fit); the destination is "" after an error.
 * wcsncat_s/strncpy_s with count _TRUNCATE cut what does not fit and return STRUNCATE.
 */
PERFLIB_WIN32_API errno_t wcscat_s(WCHAR *strDestination, size_t numberOfElements,
				   const WCHAR *strSource);
PERFLIB_WIN32_API errno_t wcsncat_s(WCHAR *strDest, size_t numberOfElements, const WCHAR *strSource,
				    size_t count);
PERFLIB_WIN32_API errno_t strcpy_s(char *strDestination, size_t numberOfElements,
				   const char *strSource);
PERFLIB_WIN32_API errno_t strncpy_s(char *strDest, size_t numberOfElements, const char *strSource,
				    size_t count);
PERFLIB_WIN32_API errno_t strcat_s(char *strDestination, size_t numberOfElements,
				   const char *strSource);

/* ---- printf ---------------------------------------------------------------------------------- */

/*
 * Microsoft's format rules in every function below: in a wide format %s/%c are WCHAR and
 * %S/%C char, in a narrow one the reverse; %hs/%hc are char and %ls/%lc/%ws/%wc WCHAR in
 * both. Integer sizes as on Windows: none and l are 32 bits; ll, I64, I, z, j, t 64 bits; %p
 * is 16 upper-case hex digits; a NULL string prints (null); %n is refused (-1, EINVAL).
 * Streams receive UTF-8 (wide text converted; an unpaired surrogate becomes U+FFFD); the
 * wide functions return wide units, the narrow ones bytes; -1 and errno on an error.
 *  - swprintf/vswprintf (ISO): the text cut to @count - 1 units and a NUL; -1 when cut.
 *  - snprintf/vsnprintf (ISO): likewise; returns the full length.
 *  - _snwprintf/_snprintf/_vsn*: up to @count units, a NUL only if there is room; -1 when cut.
 *  - *_s: the text with its NUL must fit in @sizeOfBuffer, else ERANGE, "" and -1, unless
 *    @count is _TRUNCATE (cut to fit, -1); EINVAL for a NULL or empty buffer or format.
 */
PERFLIB_WIN32_API int perflib_win32_wprintf(const WCHAR *format, ...);
PERFLIB_WIN32_API int perflib_win32_fwprintf(FILE *stream, const WCHAR *format, ...);
PERFLIB_WIN32_API int perflib_win32_vwprintf(const WCHAR *format, va_list argptr);
PERFLIB_WIN32_API int perflib_win32_vfwprintf(FILE *stream, const WCHAR *format, va_list argptr);
PERFLIB_WIN32_API int perflib_win32_swprintf(WCHAR *buffer, size_t count, const WCHAR *format, ...);
PERFLIB_WIN32_API int perflib_win32_vswprintf(WCHAR *buffer, size_t count, const WCHAR *format,
					      va_list argptr);
/* the string as UTF-8, no newline (fputws) or with one (_putws): 0, or -1 */
PERFLIB_WIN32_API int perflib_win32_fputws(const WCHAR *str, FILE *stream);
PERFLIB_WIN32_API int _putws(const WCHAR *str);
PERFLIB_WIN32_API int _swprintf(WCHAR *buffer, const WCHAR *format, ...);
PERFLIB_WIN32_API int _snwprintf(WCHAR *buffer, size_t count, const WCHAR *format, ...);
PERFLIB_WIN32_API int _vsnwprintf(WCHAR *buffer, size_t count, const WCHAR *format, va_list argptr);
PERFLIB_WIN32_API int _snwprintf_s(WCHAR *buffer, size_t sizeOfBuffer, size_t count,
				   const WCHAR *format, ...);
PERFLIB_WIN32_API int _vsnwprintf_s(WCHAR *buffer, size_t sizeOfBuffer, size_t count,
				    const WCHAR *format, va_list argptr);
PERFLIB_WIN32_API int swprintf_s(WCHAR *buffer, size_t sizeOfBuffer, const WCHAR *format, ...);
PERFLIB_WIN32_API int vswprintf_s(WCHAR *buffer, size_t numberOfElements, const WCHAR *format,
				  va_list argptr);

PERFLIB_WIN32_API int perflib_win32_printf(const char *format, ...);
PERFLIB_WIN32_API int perflib_win32_fprintf(FILE *stream, const char *format, ...);
PERFLIB_WIN32_API int perflib_win32_vprintf(const char *format, va_list argptr);
PERFLIB_WIN32_API int perflib_win32_vfprintf(FILE *stream, const char *format, va_list argptr);
PERFLIB_WIN32_API int perflib_win32_sprintf(char *buffer, const char *format, ...);
PERFLIB_WIN32_API int perflib_win32_vsprintf(char *buffer, const char *format, va_list argptr);
PERFLIB_WIN32_API int perflib_win32_snprintf(char *buffer, size_t count, const char *format, ...);
PERFLIB_WIN32_API int perflib_win32_vsnprintf(char *buffer, size_t count, const char *format,
					      va_list argptr);
PERFLIB_WIN32_API int _snprintf(char *buffer, size_t count, const char *format, ...);
PERFLIB_WIN32_API int _vsnprintf(char *buffer, size_t count, const char *format, va_list argptr);
PERFLIB_WIN32_API int _snprintf_s(char *buffer, size_t sizeOfBuffer, size_t count,
				  const char *format, ...);
PERFLIB_WIN32_API int _vsnprintf_s(char *buffer, size_t sizeOfBuffer, size_t count,
				   const char *format, va_list argptr);
PERFLIB_WIN32_API int sprintf_s(char *buffer, size_t sizeOfBuffer, const char *format, ...);
PERFLIB_WIN32_API int vsprintf_s(char *buffer, size_t numberOfElements, const char *format,
				 va_list argptr);

/* ---- kernel32's lstr functions (A: UTF-8 bytes; compared by value, not linguistically) -- */

/* lengths (0 for NULL); copies and appends return the destination, NULL for a NULL pointer;
 * lstrcpyn copies at most iMaxLength - 1 characters and a NUL; compares return -1, 0, 1 */
PERFLIB_WIN32_API int WINAPI lstrlenA(LPCSTR lpString);
PERFLIB_WIN32_API int WINAPI lstrlenW(LPCWSTR lpString);
PERFLIB_WIN32_API LPSTR WINAPI lstrcpyA(LPSTR lpString1, LPCSTR lpString2);
PERFLIB_WIN32_API LPWSTR WINAPI lstrcpyW(LPWSTR lpString1, LPCWSTR lpString2);
PERFLIB_WIN32_API LPSTR WINAPI lstrcpynA(LPSTR lpString1, LPCSTR lpString2, int iMaxLength);
PERFLIB_WIN32_API LPWSTR WINAPI lstrcpynW(LPWSTR lpString1, LPCWSTR lpString2, int iMaxLength);
PERFLIB_WIN32_API LPSTR WINAPI lstrcatA(LPSTR lpString1, LPCSTR lpString2);
PERFLIB_WIN32_API LPWSTR WINAPI lstrcatW(LPWSTR lpString1, LPCWSTR lpString2);
PERFLIB_WIN32_API int WINAPI lstrcmpA(LPCSTR lpString1, LPCSTR lpString2);
PERFLIB_WIN32_API int WINAPI lstrcmpW(LPCWSTR lpString1, LPCWSTR lpString2);
PERFLIB_WIN32_API int WINAPI lstrcmpiA(LPCSTR lpString1, LPCSTR lpString2);
PERFLIB_WIN32_API int WINAPI lstrcmpiW(LPCWSTR lpString1, LPCWSTR lpString2);

/*
 * perflib_win32_wargv - @argc UTF-8 strings of @argv as malloc'd UTF-16 strings (bad bytes
 * become U+FFFD) in a malloc'd NULL-terminated array: what wmain receives (Linux-only).
 * 0, -EINVAL (NULL, negative @argc), -ENOMEM.
 */
PERFLIB_WIN32_API int perflib_win32_wargv(int argc, char **argv, WCHAR ***ret_wargv);

#ifdef __cplusplus
}
/* the CRT's C++ array forms: the destination size is the array's */
template <size_t N> inline errno_t wcscat_s(WCHAR (&dst)[N], const WCHAR *src)
{
	return wcscat_s(dst, N, src);
}
template <size_t N> inline errno_t strcpy_s(char (&dst)[N], const char *src)
{
	return strcpy_s(dst, N, src);
}
template <size_t N> inline errno_t strcat_s(char (&dst)[N], const char *src)
{
	return strcat_s(dst, N, src);
}
template <size_t N> inline int swprintf_s(WCHAR (&buffer)[N], const WCHAR *format, ...)
{
	va_list ap;
	int n;

	va_start(ap, format);
	n = vswprintf_s(buffer, N, format, ap);
	va_end(ap);
	return n;
}
template <size_t N> inline int sprintf_s(char (&buffer)[N], const char *format, ...)
{
	va_list ap;
	int n;

	va_start(ap, format);
	n = vsprintf_s(buffer, N, format, ap);
	va_end(ap);
	return n;
}
template <size_t N>
inline int _snwprintf_s(WCHAR (&buffer)[N], size_t count, const WCHAR *format, ...)
{
	va_list ap;
	int n;

	va_start(ap, format);
	n = _vsnwprintf_s(buffer, N, count, format, ap);
	va_end(ap);
	return n;
}
#endif

/* Windows spellings with no glibc twin */
#define _wcsdup perflib_win32_wcsdup
#define _stricmp strcasecmp
#define _strnicmp strncasecmp

/* ---- glibc's wide names replaced when wchar_t is 16 bits ------------------------------ */

#if PERFLIB_WIN32_SHORT_WCHAR
/* each name: #undef (glibc's fortify macros), #define, and in C++ a std:: twin */
#ifdef __cplusplus
#define PERFLIB_WIN32__STD(n)                                                                      \
	namespace std                                                                              \
	{                                                                                          \
	using ::perflib_win32_##n;                                                                 \
	}
#else
#define PERFLIB_WIN32__STD(n)
#endif
PERFLIB_WIN32__STD(wcslen)
PERFLIB_WIN32__STD(wcscmp)
PERFLIB_WIN32__STD(wcsncmp)
PERFLIB_WIN32__STD(wcscpy)
PERFLIB_WIN32__STD(wcsncpy)
PERFLIB_WIN32__STD(wcscat)
PERFLIB_WIN32__STD(wcsncat)
PERFLIB_WIN32__STD(wcschr)
PERFLIB_WIN32__STD(wcsrchr)
PERFLIB_WIN32__STD(wcsstr)
PERFLIB_WIN32__STD(wcsspn)
PERFLIB_WIN32__STD(wcscspn)
PERFLIB_WIN32__STD(wcspbrk)
PERFLIB_WIN32__STD(wmemcpy)
PERFLIB_WIN32__STD(wmemmove)
PERFLIB_WIN32__STD(wmemset)
PERFLIB_WIN32__STD(wmemcmp)
PERFLIB_WIN32__STD(wmemchr)
PERFLIB_WIN32__STD(wcstol)
PERFLIB_WIN32__STD(wcstoul)
PERFLIB_WIN32__STD(wcstoll)
PERFLIB_WIN32__STD(wcstoull)
PERFLIB_WIN32__STD(wcstod)
PERFLIB_WIN32__STD(wprintf)
PERFLIB_WIN32__STD(fwprintf)
PERFLIB_WIN32__STD(vwprintf)
PERFLIB_WIN32__STD(vfwprintf)
PERFLIB_WIN32__STD(swprintf)
PERFLIB_WIN32__STD(vswprintf)
PERFLIB_WIN32__STD(fputws)
PERFLIB_WIN32__STD(printf)
PERFLIB_WIN32__STD(fprintf)
PERFLIB_WIN32__STD(vprintf)
PERFLIB_WIN32__STD(vfprintf)
PERFLIB_WIN32__STD(sprintf)
PERFLIB_WIN32__STD(vsprintf)
PERFLIB_WIN32__STD(snprintf)
PERFLIB_WIN32__STD(vsnprintf)
#undef wcslen
#define wcslen perflib_win32_wcslen
#undef wcscmp
#define wcscmp perflib_win32_wcscmp
#undef wcsncmp
#define wcsncmp perflib_win32_wcsncmp
#undef wcscpy
#define wcscpy perflib_win32_wcscpy
#undef wcsncpy
#define wcsncpy perflib_win32_wcsncpy
#undef wcscat
#define wcscat perflib_win32_wcscat
#undef wcsncat
#define wcsncat perflib_win32_wcsncat
#undef wcschr
#define wcschr perflib_win32_wcschr
#undef wcsrchr
#define wcsrchr perflib_win32_wcsrchr
#undef wcsstr
#define wcsstr perflib_win32_wcsstr
#undef wcsspn
#define wcsspn perflib_win32_wcsspn
#undef wcscspn
#define wcscspn perflib_win32_wcscspn
#undef wcspbrk
#define wcspbrk perflib_win32_wcspbrk
#undef wcsdup
#define wcsdup perflib_win32_wcsdup
#undef wmemcpy
#define wmemcpy perflib_win32_wmemcpy
#undef wmemmove
#define wmemmove perflib_win32_wmemmove
#undef wmemset
#define wmemset perflib_win32_wmemset
#undef wmemcmp
#define wmemcmp perflib_win32_wmemcmp
#undef wmemchr
#define wmemchr perflib_win32_wmemchr
#undef wcstol
#define wcstol perflib_win32_wcstol
#undef wcstoul
#define wcstoul perflib_win32_wcstoul
#undef wcstoll
#define wcstoll perflib_win32_wcstoll
#undef wcstoull
#define wcstoull perflib_win32_wcstoull
#undef wcstod
#define wcstod perflib_win32_wcstod
#undef wprintf
#define wprintf perflib_win32_wprintf
#undef fwprintf
#define fwprintf perflib_win32_fwprintf
#undef vwprintf
#define vwprintf perflib_win32_vwprintf
#undef vfwprintf
#define vfwprintf perflib_win32_vfwprintf
#undef swprintf
#define swprintf perflib_win32_swprintf
#undef vswprintf
#define vswprintf perflib_win32_vswprintf
#undef fputws
#define fputws perflib_win32_fputws
#undef printf
#define printf perflib_win32_printf
#undef fprintf
#define fprintf perflib_win32_fprintf
#undef vprintf
#define vprintf perflib_win32_vprintf
#undef vfprintf
#define vfprintf perflib_win32_vfprintf
#undef sprintf
#define sprintf perflib_win32_sprintf
#undef vsprintf
#define vsprintf perflib_win32_vsprintf
#undef snprintf
#define snprintf perflib_win32_snprintf
#undef vsnprintf
#define vsnprintf perflib_win32_vsnprintf
#endif /* PERFLIB_WIN32_SHORT_WCHAR */

#endif /* PERFLIB_WIN32_RT_H */

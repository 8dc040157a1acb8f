/* SPDX-License-Identifier: MIT */
/*
 * perflib/win32compat.h - the few Win32 names outside the perflib API that performance-counter
 * code calls (found in the Windows SDK samples, node's and HPX's providers and Microsoft's
 * consumer examples), with Windows semantics, for ports that want to keep their code. Opt-in:
 * nothing else includes it. Include it where the Windows code included <windows.h>; it brings
 * <perflib.h> and the SAL annotations of <perflib/sal.h> (read that header about __in and
 * __out). docs/PORTING.md documents every name; each definition below says how it differs.
 *
 * Nothing here calls into libperflib, so a program that loads the API at run time
 * (LoadLibrary + GetProcAddress) need not link it. No function here sets GetLastError().
 * The header needs no feature-test macro: it compiles in strict -std=c99 as in gnu modes.
 */
#ifndef PERFLIB_WIN32COMPAT_H
#define PERFLIB_WIN32COMPAT_H

#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h> /* before the wcsnlen macro below, so its own declaration is not renamed */

#include "perflib.h"
#include "sal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- decorations and types ------------------------------------------------------------ */

#ifndef __cdecl
#define __cdecl /* the only calling convention on Linux */
#endif
#ifndef IN
#define IN /* parameter-direction markers of minwindef.h: no meaning */
#endif
#ifndef OUT
#define OUT
#endif
#ifndef UNREFERENCED_PARAMETER
#define UNREFERENCED_PARAMETER(P) ((void)(P))
#endif
#ifndef __int64
#define __int64 long long /* MSVC's sized integer keywords: "unsigned __int64" works */
#endif
#ifndef __int32
#define __int32 int
#endif
#ifndef _TRUNCATE
#define _TRUNCATE ((size_t)-1) /* wcsncpy_s count: copy what fits */
#endif
#ifndef STRUNCATE
#define STRUNCATE 80 /* wcsncpy_s with _TRUNCATE cut the string (Windows' value) */
#endif

typedef const BYTE *LPCBYTE;
typedef const char *LPCSTR;
typedef struct perflib_hmodule__ *HMODULE; /* a dlopen() handle */
/* Windows returns INT_PTR; void (*)(void) is the type GCC's -Wcast-function-type lets any
 * function-pointer cast from, so "(PerfStartProviderExFunc)GetProcAddress(...)" builds clean */
typedef void(WINAPI *FARPROC)(void);

/* LARGE_INTEGER: a 64-bit value, also seen as its two 32-bit halves (little-endian) */
typedef union _LARGE_INTEGER {
	__extension__ struct {
		DWORD LowPart;
		LONG HighPart;
	};
	struct {
		DWORD LowPart;
		LONG HighPart;
	} u;
	LONGLONG QuadPart;
} LARGE_INTEGER, *PLARGE_INTEGER;

/*
 * The POSIX calls below are declared under names of their own (asm labels to the libc
 * symbols), so that they need no feature-test macro and never clash with libc's own
 * declarations. Linux LP64 layouts (struct timespec, struct pollfd).
 */
struct perflib__timespec {
	long tv_sec;
	long tv_nsec;
};
struct perflib__pollfd {
	int fd;
	short events;
	short revents;
};
#if __SIZEOF_LONG__ != 8
#error "perflib/win32compat.h supports LP64 Linux only"
#endif
extern int perflib__clock_gettime(int clk, struct perflib__timespec *ts) __asm__("clock_gettime");
extern int perflib__nanosleep(const struct perflib__timespec *req,
			      struct perflib__timespec *rem) __asm__("nanosleep");
extern int perflib__poll(struct perflib__pollfd *fds, unsigned long nfds,
			 int timeout) __asm__("poll");
extern int perflib__pause(void) __asm__("pause");
#define PERFLIB__CLOCK_MONOTONIC 1
#define PERFLIB__CLOCK_BOOTTIME 7
#define PERFLIB__POLLIN 0x001
#define PERFLIB__POLLHUP 0x010

/* ---- time ----------------------------------------------------------------------------- */

/*
 * Sleep - suspend the calling thread for @dwMilliseconds (resumed after a signal until the
 * whole time has passed). 0 gives up the processor once; 0xFFFFFFFF (INFINITE) sleeps for
 * ever, as on Windows.
 */
static inline void Sleep(DWORD dwMilliseconds)
{
	struct perflib__timespec t = {(long)(dwMilliseconds / 1000),
				      (long)(dwMilliseconds % 1000) * 1000000L};

	if (dwMilliseconds == 0xFFFFFFFF)
		for (;;)
			perflib__pause();
	while (perflib__nanosleep(&t, &t) && errno == EINTR)
		;
}

/*
 * QueryPerformanceCounter - CLOCK_MONOTONIC in nanoseconds: the clock of
 * PERF_DATA_HEADER.PerfTimeStamp, so both may be mixed. FALSE (nothing written) for NULL.
 */
static inline BOOL QueryPerformanceCounter(LARGE_INTEGER *lpPerformanceCount)
{
	struct perflib__timespec ts;

	if (!lpPerformanceCount || perflib__clock_gettime(PERFLIB__CLOCK_MONOTONIC, &ts))
		return FALSE;
	lpPerformanceCount->QuadPart = (LONGLONG)ts.tv_sec * 1000000000LL + ts.tv_nsec;
	return TRUE;
}

/* QueryPerformanceFrequency - 1,000,000,000 (counts per second, = PerfFreq); FALSE for NULL */
static inline BOOL QueryPerformanceFrequency(LARGE_INTEGER *lpFrequency)
{
	if (!lpFrequency)
		return FALSE;
	lpFrequency->QuadPart = 1000000000LL;
	return TRUE;
}

/*
 * GetTickCount - milliseconds since the system started (CLOCK_BOOTTIME, which counts
 * suspended time as Windows does), wrapping to 0 after 49.7 days.
 */
static inline DWORD GetTickCount(void)
{
	struct perflib__timespec ts;

	if (perflib__clock_gettime(PERFLIB__CLOCK_BOOTTIME, &ts))
		return 0;
	return (DWORD)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

/* ---- process and console -------------------------------------------------------------- */

/* GetCurrentProcessId - getpid(): the id consumers and bpftool show for this process */
static inline DWORD GetCurrentProcessId(void)
{
	return (DWORD)getpid();
}

/*
 * _kbhit - non-zero when input is waiting on standard input, without reading it. Windows
 * asks the console; here standard input is polled, so a terminal answers after Enter (it is
 * line-buffered), and end of input (a closed pipe, /dev/null) also counts as a key: a
 * "while (!_kbhit())" loop ends when its input closes.
 */
static inline int _kbhit(void)
{
	struct perflib__pollfd p = {0, PERFLIB__POLLIN, 0};

	return perflib__poll(&p, 1, 0) > 0 && (p.revents & (PERFLIB__POLLIN | PERFLIB__POLLHUP));
}

/* ---- run-time loading ----------------------------------------------------------------- */

/*
 * LoadLibraryA - dlopen() (RTLD_NOW) a library by its Windows name: "NAME.dll" or "NAME",
 * case-insensitive and without a directory, loads "libname.so" (advapi32.dll ->
 * libadvapi32.so, which `make install` links to libperflib.so.1); a name with a '/' or any
 * other extension is passed to dlopen() as is. NULL when it cannot be loaded (dlerror()
 * says why; GetLastError() is not set) or for a NULL or over-long name.
 */
static inline HMODULE LoadLibraryA(LPCSTR lpLibFileName)
{
	char so[256];
	size_t len, i;
	const char *dot;

	if (!lpLibFileName)
		return NULL;
	len = strlen(lpLibFileName);
	dot = strrchr(lpLibFileName, '.');
	if (strchr(lpLibFileName, '/') ||
	    (dot && !(len >= 4 && dot == lpLibFileName + len - 4 && (dot[1] | 0x20) == 'd' &&
		      (dot[2] | 0x20) == 'l' && (dot[3] | 0x20) == 'l')))
		return (HMODULE)dlopen(lpLibFileName, RTLD_NOW);
	if (dot)
		len -= 4;
	if (len == 0 || len + sizeof("lib.so") > sizeof(so))
		return NULL;
	memcpy(so, "lib", 3);
	for (i = 0; i < len; i++) {
		char c = lpLibFileName[i];

		so[3 + i] = c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
	}
	memcpy(so + 3 + len, ".so", 4);
	return (HMODULE)dlopen(so, RTLD_NOW);
}
#ifndef LoadLibrary
#define LoadLibrary LoadLibraryA
#endif

/*
 * GetProcAddress - dlsym(): the address of exported function @lpProcName, or NULL. Ordinals
 * (a "name" below 0x10000) are not supported: NULL.
 */
static inline FARPROC GetProcAddress(HMODULE hModule, LPCSTR lpProcName)
{
	FARPROC f = NULL;
	void *p;

	if (!hModule || (uintptr_t)lpProcName < 0x10000)
		return NULL;
	p = dlsym((void *)hModule, lpProcName);
	memcpy(&f, &p, sizeof(f));
	return f;
}

/* FreeLibrary - dlclose(): TRUE, or FALSE for NULL or when dlclose() fails */
static inline BOOL FreeLibrary(HMODULE hLibModule)
{
	return hLibModule && dlclose((void *)hLibModule) == 0;
}

/* ---- WCHAR strings (UTF-16 units; glibc's wide functions work on 32-bit wchar_t) -------- */

/*
 * The CRT's "secure" functions return their error instead of calling the invalid-parameter
 * handler (which ends the process by default on Windows): EINVAL for a NULL or empty
 * destination or a NULL source, ERANGE when the result does not fit. As on Windows, the
 * destination is then set to "" when it can be written. The Win32 names are macros for
 * these perflib_ functions.
 */

/* perflib_wcsnlen - units before the first NUL, at most @max; 0 for NULL */
static inline size_t perflib_wcsnlen(const WCHAR *s, size_t max)
{
	size_t n = 0;

	if (!s)
		return 0;
	while (n < max && s[n])
		n++;
	return n;
}

/* perflib_wcscpy_s - copy NUL-terminated @src into @dst of @size units; 0, EINVAL, ERANGE */
static inline int perflib_wcscpy_s(WCHAR *dst, size_t size, const WCHAR *src)
{
	size_t len;

	if (!dst || !size)
		return EINVAL;
	if (!src) {
		dst[0] = 0;
		return EINVAL;
	}
	len = perflib_wcsnlen(src, size);
	if (len == size) {
		dst[0] = 0;
		return ERANGE;
	}
	memmove(dst, src, (len + 1) * sizeof(WCHAR));
	return 0;
}

/*
 * perflib_wcsncpy_s - copy at most @count units of @src, then a NUL, into @dst of @size
 * units. @count _TRUNCATE copies what fits and returns STRUNCATE when that cut @src.
 * 0, EINVAL, ERANGE (too long without _TRUNCATE), STRUNCATE.
 */
static inline int perflib_wcsncpy_s(WCHAR *dst, size_t size, const WCHAR *src, size_t count)
{
	size_t len;

	if (!dst || !size)
		return EINVAL;
	if (!src) {
		dst[0] = 0;
		return count ? EINVAL : 0;
	}
	if (count == _TRUNCATE) {
		len = perflib_wcsnlen(src, size);
		if (len == size) {
			memmove(dst, src, (size - 1) * sizeof(WCHAR));
			dst[size - 1] = 0;
			return STRUNCATE;
		}
	} else {
		len = perflib_wcsnlen(src, count);
		if (len >= size) {
			dst[0] = 0;
			return ERANGE;
		}
	}
	memmove(dst, src, len * sizeof(WCHAR));
	dst[len] = 0;
	return 0;
}

/*
 * perflib_itow_s - @value in base @radix (2..36, lower-case digits) into @dst of @size units,
 * NUL-terminated. A '-' only in base 10; other bases show the 32-bit two's complement, as
 * _itow_s does. 0, EINVAL (NULL or empty @dst, bad @radix), ERANGE (does not fit).
 */
static inline int perflib_itow_s(int value, WCHAR *dst, size_t size, int radix)
{
	char tmp[34];
	size_t n = 0, i = 0;
	uint32_t v = (uint32_t)value;

	if (!dst || !size)
		return EINVAL;
	if (radix < 2 || radix > 36) {
		dst[0] = 0;
		return EINVAL;
	}
	if (radix == 10 && value < 0)
		v = 0u - v;
	do {
		uint32_t d = v % (uint32_t)radix;

		tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
		v /= (uint32_t)radix;
	} while (v);
	if (radix == 10 && value < 0)
		tmp[n++] = '-';
	if (n + 1 > size) {
		dst[0] = 0;
		return ERANGE;
	}
	while (n)
		dst[i++] = (WCHAR)tmp[--n];
	dst[i] = 0;
	return 0;
}

#ifdef __cplusplus
}

/* the CRT's C++ array forms: the destination size is the array's */
template <size_t N> inline int perflib_wcscpy_s(WCHAR (&dst)[N], const WCHAR *src)
{
	return perflib_wcscpy_s(dst, N, src);
}
template <size_t N> inline int perflib_wcsncpy_s(WCHAR (&dst)[N], const WCHAR *src, size_t count)
{
	return perflib_wcsncpy_s(dst, N, src, count);
}
template <size_t N> inline int perflib_itow_s(int value, WCHAR (&dst)[N], int radix)
{
	return perflib_itow_s(value, dst, N, radix);
}
#endif

#ifndef wcsnlen
#define wcsnlen perflib_wcsnlen
#endif
#ifndef wcscpy_s
#define wcscpy_s perflib_wcscpy_s
#endif
#ifndef wcsncpy_s
#define wcsncpy_s perflib_wcsncpy_s
#endif
#ifndef _itow_s
#define _itow_s perflib_itow_s
#endif

#endif /* PERFLIB_WIN32COMPAT_H */

/* SPDX-License-Identifier: MIT */
/*
 * lstr.c - kernel32's lstr* string functions (A: UTF-8 bytes, W: WCHAR units) and the narrow
 * secure copies of the C runtime (strcpy_s, strcat_s, strncpy_s). Windows compares lstrcmp
 * strings linguistically in the user's locale; here the comparison is by value (bytes, units),
 * lstrcmpi folding A-Z (and, for W, what towlower() folds): -1, 0 or 1 as on Windows, a NULL
 * string sorting first. A NULL destination makes the copies return NULL.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <wctype.h>

#include "internal.h"

int WINAPI lstrlenA(LPCSTR lpString)
{
	return lpString ? (int)strlen(lpString) : 0;
}

int WINAPI lstrlenW(LPCWSTR lpString)
{
	return lpString ? (int)perflib_win32_wcslen(lpString) : 0;
}

LPSTR WINAPI lstrcpyA(LPSTR lpString1, LPCSTR lpString2)
{
	if (!lpString1 || !lpString2)
		return NULL;
	return memmove(lpString1, lpString2, strlen(lpString2) + 1);
}

LPWSTR WINAPI lstrcpyW(LPWSTR lpString1, LPCWSTR lpString2)
{
	if (!lpString1 || !lpString2)
		return NULL;
	return perflib_win32_wcscpy(lpString1, lpString2);
}

/* at most @iMaxLength - 1 characters, then a NUL: StringCchCopy, which may cut */
LPSTR WINAPI lstrcpynA(LPSTR lpString1, LPCSTR lpString2, int iMaxLength)
{
	if (!lpString1 || !lpString2)
		return NULL;
	if (iMaxLength > 0)
		StringCchCopyA(lpString1, (size_t)iMaxLength, lpString2);
	return lpString1;
}

LPWSTR WINAPI lstrcpynW(LPWSTR lpString1, LPCWSTR lpString2, int iMaxLength)
{
	if (!lpString1 || !lpString2)
		return NULL;
	if (iMaxLength > 0)
		StringCchCopyW(lpString1, (size_t)iMaxLength, lpString2);
	return lpString1;
}

LPSTR WINAPI lstrcatA(LPSTR lpString1, LPCSTR lpString2)
{
	if (!lpString1 || !lpString2)
		return NULL;
	lstrcpyA(lpString1 + strlen(lpString1), lpString2);
	return lpString1;
}

LPWSTR WINAPI lstrcatW(LPWSTR lpString1, LPCWSTR lpString2)
{
	if (!lpString1 || !lpString2)
		return NULL;
	return perflib_win32_wcscat(lpString1, lpString2);
}

/* NULL first, then by value; @fold folds each character */
static int cmp_a(LPCSTR a, LPCSTR b, int fold)
{
	size_t i;

	if (!a || !b)
		return (a != NULL) - (b != NULL);
	for (i = 0;; i++) {
		int x = (unsigned char)a[i], y = (unsigned char)b[i];

		if (fold)
			x = x < 0x80 ? tolower(x) : x, y = y < 0x80 ? tolower(y) : y;
		if (x != y || !x)
			return (x > y) - (x < y);
	}
}

int WINAPI lstrcmpA(LPCSTR lpString1, LPCSTR lpString2)
{
	return cmp_a(lpString1, lpString2, 0);
}

int WINAPI lstrcmpiA(LPCSTR lpString1, LPCSTR lpString2)
{
	return cmp_a(lpString1, lpString2, 1);
}

int WINAPI lstrcmpW(LPCWSTR lpString1, LPCWSTR lpString2)
{
	if (!lpString1 || !lpString2)
		return (lpString1 != NULL) - (lpString2 != NULL);
	return perflib_win32_wcscmp(lpString1, lpString2);
}

int WINAPI lstrcmpiW(LPCWSTR lpString1, LPCWSTR lpString2)
{
	if (!lpString1 || !lpString2)
		return (lpString1 != NULL) - (lpString2 != NULL);
	return _wcsicmp(lpString1, lpString2);
}

/* ---- the C runtime's narrow secure copies (the wide ones: wstr.c, perflib/win32compat.h) --- */

errno_t strncpy_s(char *strDest, size_t numberOfElements, const char *strSource, size_t count)
{
	size_t len;

	if (!strDest || !numberOfElements)
		return EINVAL;
	if (!strSource) {
		strDest[0] = 0;
		return count ? EINVAL : 0;
	}
	len = strnlen(strSource, count == _TRUNCATE ? numberOfElements : count);
	if (count == _TRUNCATE && len == numberOfElements) {
		memmove(strDest, strSource, numberOfElements - 1);
		strDest[numberOfElements - 1] = 0;
		return STRUNCATE;
	}
	if (len >= numberOfElements) {
		strDest[0] = 0;
		return ERANGE;
	}
	memmove(strDest, strSource, len);
	strDest[len] = 0;
	return 0;
}

errno_t strcpy_s(char *strDestination, size_t numberOfElements, const char *strSource)
{
	if (strDestination && numberOfElements && !strSource) {
		strDestination[0] = 0;
		return EINVAL;
	}
	return strncpy_s(strDestination, numberOfElements, strSource, (size_t)-2);
}

errno_t strcat_s(char *strDestination, size_t numberOfElements, const char *strSource)
{
	size_t len, add;

	if (!strDestination || !numberOfElements)
		return EINVAL;
	len = strnlen(strDestination, numberOfElements);
	if (len == numberOfElements || !strSource) {
		strDestination[0] = 0;
		return EINVAL;
	}
	add = strlen(strSource);
	if (len + add + 1 > numberOfElements) {
		strDestination[0] = 0;
		return ERANGE;
	}
	memcpy(strDestination + len, strSource, add + 1);
	return 0;
}

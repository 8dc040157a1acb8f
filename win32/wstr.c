/* SPDX-License-Identifier: MIT */
/*
 * wstr.c - the C runtime's wide-string functions on WCHAR (UTF-16 units), for code built with
 * a 16-bit wchar_t, where glibc's own (32-bit) ones read past every string. Comparisons are by
 * unit value, as Windows' are; the case-insensitive ones fold each unit with towlower() (the
 * C locale folds A-Z only, as Windows' "C" locale does). Numbers are read by glibc's strto*
 * from the string's leading ASCII, so bases, signs, "0x" and overflow are glibc's.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "internal.h"

size_t perflib_win32_wcslen(const WCHAR *str)
{
	size_t n = 0;

	while (str[n])
		n++;
	return n;
}

/* -1, 0, 1 as Windows' lstrcmp does; the C functions only promise the sign */
static int sign(int d)
{
	return (d > 0) - (d < 0);
}

int perflib_win32_wcsncmp(const WCHAR *string1, const WCHAR *string2, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (string1[i] != string2[i] || !string1[i])
			return sign((int)string1[i] - (int)string2[i]);
	return 0;
}

int perflib_win32_wcscmp(const WCHAR *string1, const WCHAR *string2)
{
	return perflib_win32_wcsncmp(string1, string2, (size_t)-1);
}

static int fold(WCHAR c)
{
	if (c >= 0xD800 && c <= 0xDFFF) /* half of a pair: no case */
		return c;
	return (int)towlower(c);
}

int _wcsnicmp(const WCHAR *string1, const WCHAR *string2, size_t count)
{
	size_t i;

	if (!string1 || !string2) {
		errno = EINVAL;
		return INT_MAX; /* _NLSCMPERROR */
	}
	for (i = 0; i < count; i++) {
		int a = fold(string1[i]), b = fold(string2[i]);

		if (a != b || !a)
			return sign(a - b);
	}
	return 0;
}

int _wcsicmp(const WCHAR *string1, const WCHAR *string2)
{
	return _wcsnicmp(string1, string2, (size_t)-1);
}

WCHAR *perflib_win32_wcscpy(WCHAR *strDestination, const WCHAR *strSource)
{
	size_t n = perflib_win32_wcslen(strSource);

	memmove(strDestination, strSource, (n + 1) * sizeof(WCHAR));
	return strDestination;
}

/* ISO: at most @count units, the rest of @count filled with NULs (none added when cut) */
WCHAR *perflib_win32_wcsncpy(WCHAR *strDest, const WCHAR *strSource, size_t count)
{
	size_t i = 0;

	for (; i < count && strSource[i]; i++)
		strDest[i] = strSource[i];
	for (; i < count; i++)
		strDest[i] = 0;
	return strDest;
}

WCHAR *perflib_win32_wcscat(WCHAR *strDestination, const WCHAR *strSource)
{
	perflib_win32_wcscpy(strDestination + perflib_win32_wcslen(strDestination), strSource);
	return strDestination;
}

/* at most @count units of @strSource, then always a NUL */
WCHAR *perflib_win32_wcsncat(WCHAR *strDest, const WCHAR *strSource, size_t count)
{
	WCHAR *d = strDest + perflib_win32_wcslen(strDest);
	size_t i;

	for (i = 0; i < count && strSource[i]; i++)
		d[i] = strSource[i];
	d[i] = 0;
	return strDest;
}

WCHAR *perflib_win32_wcschr(const WCHAR *str, WCHAR c)
{
	for (;; str++) {
		if (*str == c)
			return (WCHAR *)str;
		if (!*str)
			return NULL;
	}
}

WCHAR *perflib_win32_wcsrchr(const WCHAR *str, WCHAR c)
{
	const WCHAR *last = NULL;

	for (;; str++) {
		if (*str == c)
			last = str;
		if (!*str)
			return (WCHAR *)last;
	}
}

WCHAR *perflib_win32_wcsstr(const WCHAR *str, const WCHAR *strSearch)
{
	size_t n = perflib_win32_wcslen(strSearch);

	for (; *str; str++)
		if (!perflib_win32_wcsncmp(str, strSearch, n))
			return (WCHAR *)str;
	return n ? NULL : (WCHAR *)str;
}

size_t perflib_win32_wcsspn(const WCHAR *str, const WCHAR *strCharSet)
{
	size_t n = 0;

	while (str[n] && perflib_win32_wcschr(strCharSet, str[n]))
		n++;
	return n;
}

size_t perflib_win32_wcscspn(const WCHAR *str, const WCHAR *strCharSet)
{
	size_t n = 0;

	while (str[n] && !perflib_win32_wcschr(strCharSet, str[n]))
		n++;
	return n;
}

WCHAR *perflib_win32_wcspbrk(const WCHAR *str, const WCHAR *strCharSet)
{
	str += perflib_win32_wcscspn(str, strCharSet);
	return *str ? (WCHAR *)str : NULL;
}

WCHAR *perflib_win32_wcsdup(const WCHAR *strSource)
{
	size_t n;
	WCHAR *d;

	if (!strSource)
		return NULL;
	n = (perflib_win32_wcslen(strSource) + 1) * sizeof(WCHAR);
	d = malloc(n);
	if (d)
		memcpy(d, strSource, n);
	return d;
}

WCHAR *perflib_win32_wmemcpy(WCHAR *dest, const WCHAR *src, size_t count)
{
	return count ? memcpy(dest, src, count * sizeof(WCHAR)) : dest;
}

WCHAR *perflib_win32_wmemmove(WCHAR *dest, const WCHAR *src, size_t count)
{
	return count ? memmove(dest, src, count * sizeof(WCHAR)) : dest;
}

WCHAR *perflib_win32_wmemset(WCHAR *dest, WCHAR c, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		dest[i] = c;
	return dest;
}

int perflib_win32_wmemcmp(const WCHAR *buffer1, const WCHAR *buffer2, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (buffer1[i] != buffer2[i])
			return sign((int)buffer1[i] - (int)buffer2[i]);
	return 0;
}

WCHAR *perflib_win32_wmemchr(const WCHAR *buffer, WCHAR c, size_t count)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (buffer[i] == c)
			return (WCHAR *)buffer + i;
	return NULL;
}

/* ---- secure copies ------------------------------------------------------------------------ */

/* wcscat_s / wcsncat_s: 0, EINVAL (NULL, empty or unterminated @dst, NULL @src), ERANGE */
errno_t wcsncat_s(WCHAR *strDest, size_t numberOfElements, const WCHAR *strSource, size_t count)
{
	size_t len, add = 0;

	if (!strDest || !numberOfElements)
		return EINVAL;
	len = perflib_wcsnlen(strDest, numberOfElements);
	if (len == numberOfElements || (!strSource && count)) {
		strDest[0] = 0;
		return EINVAL;
	}
	if (!strSource)
		return 0;
	while (add < count && strSource[add] && len + add < numberOfElements - 1)
		strDest[len + add] = strSource[add], add++;
	/* stopped by the room with more to copy: cut (_TRUNCATE) or an error */
	if (add < count && strSource[add]) {
		if (count != _TRUNCATE) {
			strDest[0] = 0;
			return ERANGE;
		}
		strDest[len + add] = 0;
		return STRUNCATE;
	}
	strDest[len + add] = 0;
	return 0;
}

errno_t wcscat_s(WCHAR *strDestination, size_t numberOfElements, const WCHAR *strSource)
{
	if (strDestination && numberOfElements && !strSource) {
		strDestination[0] = 0;
		return EINVAL;
	}
	return wcsncat_s(strDestination, numberOfElements, strSource, (size_t)-2);
}

/* ---- numbers ------------------------------------------------------------------------------- */

/*
 * The leading ASCII of @s as bytes, in @small or malloc'd (*ret_heap); the number can only be
 * made of ASCII, so an index into the copy is an index into @s.
 */
static char *ascii_prefix(const WCHAR *s, char *small, size_t room, char **ret_heap)
{
	size_t n = 0, i;
	char *a = small;

	*ret_heap = NULL;
	while (s[n] && s[n] < 0x80)
		n++;
	if (n >= room) {
		a = malloc(n + 1);
		if (!a)
			return NULL;
		*ret_heap = a;
	}
	for (i = 0; i < n; i++)
		a[i] = (char)s[i];
	a[n] = 0;
	return a;
}

#define W32_STRTO(name, type, call)                                                                \
	type name(const WCHAR *strSource, WCHAR **endptr, int base)                                \
	{                                                                                          \
		char small[96], *heap, *a, *end;                                                   \
		type v;                                                                            \
                                                                                                   \
		a = ascii_prefix(strSource, small, sizeof(small), &heap);                          \
		if (!a) {                                                                          \
			errno = ENOMEM;                                                            \
			if (endptr)                                                                \
				*endptr = (WCHAR *)strSource;                                      \
			return 0;                                                                  \
		}                                                                                  \
		v = call(a, &end, base);                                                           \
		if (endptr)                                                                        \
			*endptr = (WCHAR *)strSource + (end - a);                                  \
		free(heap);                                                                        \
		return v;                                                                          \
	}

W32_STRTO(perflib_win32_wcstol, long, strtol)
W32_STRTO(perflib_win32_wcstoul, unsigned long, strtoul)
W32_STRTO(perflib_win32_wcstoll, long long, strtoll)
W32_STRTO(perflib_win32_wcstoull, unsigned long long, strtoull)

double perflib_win32_wcstod(const WCHAR *strSource, WCHAR **endptr)
{
	char small[96], *heap, *a, *end;
	double v;

	a = ascii_prefix(strSource, small, sizeof(small), &heap);
	if (!a) {
		errno = ENOMEM;
		if (endptr)
			*endptr = (WCHAR *)strSource;
		return 0;
	}
	v = strtod(a, &end);
	if (endptr)
		*endptr = (WCHAR *)strSource + (end - a);
	free(heap);
	return v;
}

/* _wtoi, _wtol: base 10, clamped to the 32-bit range (errno ERANGE) as Windows' are */
static long long wtoi_range(const WCHAR *str, long long lo, long long hi)
{
	long long v;

	if (!str) {
		errno = EINVAL;
		return 0;
	}
	v = perflib_win32_wcstoll(str, NULL, 10);
	if (v < lo || v > hi) {
		errno = ERANGE;
		return v < lo ? lo : hi;
	}
	return v;
}

int _wtoi(const WCHAR *str)
{
	return (int)wtoi_range(str, INT_MIN, INT_MAX);
}

LONG _wtol(const WCHAR *str)
{
	return (LONG)wtoi_range(str, INT32_MIN, INT32_MAX);
}

long long _wtoi64(const WCHAR *str)
{
	return wtoi_range(str, LLONG_MIN, LLONG_MAX);
}

/* digits of @v in @radix (2..36) into @dst, '-' first when @neg; the NUL-terminated @dst */
static void digits(unsigned long long v, int neg, void *dst, int wide, int radix)
{
	char tmp[66];
	size_t n = 0, i = 0;

	if (radix < 2 || radix > 36)
		radix = 10; /* Windows asserts; here the value is shown in base 10 */
	do {
		unsigned d = (unsigned)(v % (unsigned)radix);

		tmp[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
		v /= (unsigned)radix;
	} while (v);
	if (neg)
		tmp[n++] = '-';
	while (n) {
		if (wide)
			((WCHAR *)dst)[i++] = (WCHAR)tmp[--n];
		else
			((char *)dst)[i++] = tmp[--n];
	}
	if (wide)
		((WCHAR *)dst)[i] = 0;
	else
		((char *)dst)[i] = 0;
}

/* a '-' only in base 10; other bases show the two's complement of the argument's size */
WCHAR *_itow(int value, WCHAR *str, int radix)
{
	int neg = radix == 10 && value < 0;

	digits(neg ? 0u - (unsigned)value : (unsigned)value, neg, str, 1, radix);
	return str;
}

WCHAR *_ltow(LONG value, WCHAR *str, int radix)
{
	return _itow(value, str, radix);
}

WCHAR *_ultow(ULONG value, WCHAR *str, int radix)
{
	digits(value, 0, str, 1, radix);
	return str;
}

WCHAR *_i64tow(long long value, WCHAR *str, int radix)
{
	int neg = radix == 10 && value < 0;

	digits(neg ? 0ull - (unsigned long long)value : (unsigned long long)value, neg, str, 1,
	       radix);
	return str;
}

WCHAR *_ui64tow(unsigned long long value, WCHAR *str, int radix)
{
	digits(value, 0, str, 1, radix);
	return str;
}

char *_itoa(int value, char *str, int radix)
{
	int neg = radix == 10 && value < 0;

	digits(neg ? 0u - (unsigned)value : (unsigned)value, neg, str, 0, radix);
	return str;
}

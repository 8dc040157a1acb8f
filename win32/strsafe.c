/* SPDX-License-Identifier: MIT */
/*
 * strsafe.c - <strsafe.h>'s character-count functions (StringCch*, A and W; the StringCb*
 * forms are inline in the header, over these). Each returns an HRESULT: S_OK;
 * STRSAFE_E_INSUFFICIENT_BUFFER when the result was cut to fit (the destination then holds
 * what fits, NUL-terminated); STRSAFE_E_INVALID_PARAMETER for a size of 0 or above
 * STRSAFE_MAX_CCH, an unterminated destination to append to, or a NULL pointer (Windows
 * faults on those; the destination is set to "" when it can be).
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* the unit at @i of a narrow or wide string, and storing one */
static unsigned get(const void *s, int wide, size_t i)
{
	return wide ? ((const WCHAR *)s)[i] : ((const unsigned char *)s)[i];
}

static void put(void *s, int wide, size_t i, unsigned c)
{
	if (wide)
		((WCHAR *)s)[i] = (WCHAR)c;
	else
		((char *)s)[i] = (char)c;
}

static HRESULT bad_dest(void *dst, int wide, size_t cch)
{
	if (dst && cch && cch <= STRSAFE_MAX_CCH)
		put(dst, wide, 0, 0);
	return STRSAFE_E_INVALID_PARAMETER;
}

/* append at most @max units of @src at @dst + @at (room: @cch units in all) */
static HRESULT copy_at(void *dst, size_t cch, size_t at, const void *src, size_t max, int wide)
{
	size_t i = 0;

	while (i < max && get(src, wide, i) && at + i < cch - 1) {
		put(dst, wide, at + i, get(src, wide, i));
		i++;
	}
	put(dst, wide, at + i, 0);
	return i < max && get(src, wide, i) ? STRSAFE_E_INSUFFICIENT_BUFFER : S_OK;
}

static HRESULT cch_copy(void *dst, size_t cch, const void *src, size_t max, int wide)
{
	if (!dst || !cch || cch > STRSAFE_MAX_CCH || !src || max > STRSAFE_MAX_CCH)
		return bad_dest(dst, wide, cch);
	return copy_at(dst, cch, 0, src, max, wide);
}

static HRESULT cch_cat(void *dst, size_t cch, const void *src, size_t max, int wide)
{
	size_t len = 0;

	if (!dst || !cch || cch > STRSAFE_MAX_CCH || !src || max > STRSAFE_MAX_CCH)
		return STRSAFE_E_INVALID_PARAMETER;
	while (len < cch && get(dst, wide, len))
		len++;
	if (len == cch) /* no NUL in the destination: nothing to append to */
		return STRSAFE_E_INVALID_PARAMETER;
	return copy_at(dst, cch, len, src, max, wide);
}

static HRESULT cch_length(const void *psz, size_t cchMax, size_t *pcchLength, int wide)
{
	size_t n = 0;

	if (psz && cchMax && cchMax <= STRSAFE_MAX_CCH)
		while (n < cchMax && get(psz, wide, n))
			n++;
	if (!psz || !cchMax || cchMax > STRSAFE_MAX_CCH || n == cchMax) {
		if (pcchLength)
			*pcchLength = 0;
		return STRSAFE_E_INVALID_PARAMETER;
	}
	if (pcchLength)
		*pcchLength = n;
	return S_OK;
}

static HRESULT cch_vprintf(void *dst, size_t cch, const void *fmt, va_list ap, int wide)
{
	struct w32_out o = {wide, 0, 0, NULL, 0};
	HRESULT hr;

	if (!dst || !cch || cch > STRSAFE_MAX_CCH || !fmt)
		return bad_dest(dst, wide, cch);
	if (w32_format(&o, wide, fmt, ap)) {
		w32_out_free(&o);
		return bad_dest(dst, wide, cch);
	}
	/* the formatted text is a string: copy what fits */
	hr = copy_at(dst, cch, 0, o.buf, o.len, wide);
	w32_out_free(&o);
	return hr;
}

HRESULT StringCchCopyA(STRSAFE_LPSTR pszDest, size_t cchDest, STRSAFE_LPCSTR pszSrc)
{
	return cch_copy(pszDest, cchDest, pszSrc, STRSAFE_MAX_CCH, 0);
}

HRESULT StringCchCopyW(STRSAFE_LPWSTR pszDest, size_t cchDest, STRSAFE_LPCWSTR pszSrc)
{
	return cch_copy(pszDest, cchDest, pszSrc, STRSAFE_MAX_CCH, 1);
}

HRESULT StringCchCopyNA(STRSAFE_LPSTR pszDest, size_t cchDest, STRSAFE_PCNZCH pszSrc,
			size_t cchToCopy)
{
	return cch_copy(pszDest, cchDest, pszSrc, cchToCopy, 0);
}

HRESULT StringCchCopyNW(STRSAFE_LPWSTR pszDest, size_t cchDest, STRSAFE_PCNZWCH pszSrc,
			size_t cchToCopy)
{
	return cch_copy(pszDest, cchDest, pszSrc, cchToCopy, 1);
}

HRESULT StringCchCatA(STRSAFE_LPSTR pszDest, size_t cchDest, STRSAFE_LPCSTR pszSrc)
{
	return cch_cat(pszDest, cchDest, pszSrc, STRSAFE_MAX_CCH, 0);
}

HRESULT StringCchCatW(STRSAFE_LPWSTR pszDest, size_t cchDest, STRSAFE_LPCWSTR pszSrc)
{
	return cch_cat(pszDest, cchDest, pszSrc, STRSAFE_MAX_CCH, 1);
}

HRESULT StringCchCatNA(STRSAFE_LPSTR pszDest, size_t cchDest, STRSAFE_PCNZCH pszSrc,
		       size_t cchToAppend)
{
	return cch_cat(pszDest, cchDest, pszSrc, cchToAppend, 0);
}

HRESULT StringCchCatNW(STRSAFE_LPWSTR pszDest, size_t cchDest, STRSAFE_PCNZWCH pszSrc,
		       size_t cchToAppend)
{
	return cch_cat(pszDest, cchDest, pszSrc, cchToAppend, 1);
}

HRESULT StringCchLengthA(STRSAFE_PCNZCH psz, size_t cchMax, size_t *pcchLength)
{
	return cch_length(psz, cchMax, pcchLength, 0);
}

HRESULT StringCchLengthW(STRSAFE_PCNZWCH psz, size_t cchMax, size_t *pcchLength)
{
	return cch_length(psz, cchMax, pcchLength, 1);
}

HRESULT StringCchVPrintfA(STRSAFE_LPSTR pszDest, size_t cchDest, STRSAFE_LPCSTR pszFormat,
			  va_list argList)
{
	return cch_vprintf(pszDest, cchDest, pszFormat, argList, 0);
}

HRESULT StringCchVPrintfW(STRSAFE_LPWSTR pszDest, size_t cchDest, STRSAFE_LPCWSTR pszFormat,
			  va_list argList)
{
	return cch_vprintf(pszDest, cchDest, pszFormat, argList, 1);
}

W32_VARIADIC(HRESULT StringCchPrintfA(STRSAFE_LPSTR pszDest, size_t cchDest,
				      STRSAFE_LPCSTR pszFormat, ...),
	     pszFormat, cch_vprintf(pszDest, cchDest, pszFormat, ap, 0))

W32_VARIADIC(HRESULT StringCchPrintfW(STRSAFE_LPWSTR pszDest, size_t cchDest,
				      STRSAFE_LPCWSTR pszFormat, ...),
	     pszFormat, cch_vprintf(pszDest, cchDest, pszFormat, ap, 1))

/* SPDX-License-Identifier: MIT */
/*
 * strsafe.h - perflib-win32's <strsafe.h>: StringCch* (in characters) and StringCb* (in
 * bytes) copy, append, length and printf, A and W and by UNICODE. Each returns S_OK,
 * STRSAFE_E_INSUFFICIENT_BUFFER (the result was cut to fit: the destination holds what fits,
 * NUL-terminated) or STRSAFE_E_INVALID_PARAMETER (a size of 0 or above STRSAFE_MAX_CCH, an
 * unterminated destination to append to, a NULL pointer; the destination is set to "" when
 * it can be). The printf functions take Microsoft's formats (perflib-win32-rt.h). The Ex
 * forms are not provided.
 */
#ifndef PERFLIB_WIN32_STRSAFE_H
#define PERFLIB_WIN32_STRSAFE_H

#include "perflib-win32-rt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define STRSAFE_MAX_CCH 2147483647
#define STRSAFE_E_INSUFFICIENT_BUFFER ((HRESULT)0x8007007AL)
#define STRSAFE_E_INVALID_PARAMETER ((HRESULT)0x80070057L)
#define STRSAFE_E_END_OF_FILE ((HRESULT)0x80070026L)
typedef char *STRSAFE_LPSTR;
typedef const char *STRSAFE_LPCSTR;
typedef WCHAR *STRSAFE_LPWSTR;
typedef const WCHAR *STRSAFE_LPCWSTR;
typedef const char *STRSAFE_PCNZCH;
typedef const WCHAR *STRSAFE_PCNZWCH;

PERFLIB_WIN32_API HRESULT StringCchCopyA(STRSAFE_LPSTR pszDest, size_t cchDest,
					 STRSAFE_LPCSTR pszSrc);
PERFLIB_WIN32_API HRESULT StringCchCopyW(STRSAFE_LPWSTR pszDest, size_t cchDest,
					 STRSAFE_LPCWSTR pszSrc);
/* at most @cchToCopy characters of @pszSrc */
PERFLIB_WIN32_API HRESULT StringCchCopyNA(STRSAFE_LPSTR pszDest, size_t cchDest,
					  STRSAFE_PCNZCH pszSrc, size_t cchToCopy);
PERFLIB_WIN32_API HRESULT StringCchCopyNW(STRSAFE_LPWSTR pszDest, size_t cchDest,
					  STRSAFE_PCNZWCH pszSrc, size_t cchToCopy);
PERFLIB_WIN32_API HRESULT StringCchCatA(STRSAFE_LPSTR pszDest, size_t cchDest,
					STRSAFE_LPCSTR pszSrc);
PERFLIB_WIN32_API HRESULT StringCchCatW(STRSAFE_LPWSTR pszDest, size_t cchDest,
					STRSAFE_LPCWSTR pszSrc);
PERFLIB_WIN32_API HRESULT StringCchCatNA(STRSAFE_LPSTR pszDest, size_t cchDest,
					 STRSAFE_PCNZCH pszSrc, size_t cchToAppend);
PERFLIB_WIN32_API HRESULT StringCchCatNW(STRSAFE_LPWSTR pszDest, size_t cchDest,
					 STRSAFE_PCNZWCH pszSrc, size_t cchToAppend);
/* characters before the NUL into *@pcchLength (may be NULL); no NUL within @cchMax: invalid */
PERFLIB_WIN32_API HRESULT StringCchLengthA(STRSAFE_PCNZCH psz, size_t cchMax, size_t *pcchLength);
PERFLIB_WIN32_API HRESULT StringCchLengthW(STRSAFE_PCNZWCH psz, size_t cchMax, size_t *pcchLength);
PERFLIB_WIN32_API HRESULT StringCchPrintfA(STRSAFE_LPSTR pszDest, size_t cchDest,
					   STRSAFE_LPCSTR pszFormat, ...);
PERFLIB_WIN32_API HRESULT StringCchPrintfW(STRSAFE_LPWSTR pszDest, size_t cchDest,
					   STRSAFE_LPCWSTR pszFormat, ...);
PERFLIB_WIN32_API HRESULT StringCchVPrintfA(STRSAFE_LPSTR pszDest, size_t cchDest,
					    STRSAFE_LPCSTR pszFormat, va_list argList);
PERFLIB_WIN32_API HRESULT StringCchVPrintfW(STRSAFE_LPWSTR pszDest, size_t cchDest,
					    STRSAFE_LPCWSTR pszFormat, va_list argList);

/*
 * The byte-count forms, over the character-count ones. A W size that is not a whole number
 * of WCHARs is rounded down; a size over STRSAFE_MAX_CCH characters is invalid.
 */
#define PERFLIB_WIN32__CB(cb, unit) ((cb) / (unit) > STRSAFE_MAX_CCH ? (size_t)-1 : (cb) / (unit))
static inline HRESULT StringCbCopyA(STRSAFE_LPSTR pszDest, size_t cbDest, STRSAFE_LPCSTR pszSrc)
{
	return StringCchCopyA(pszDest, PERFLIB_WIN32__CB(cbDest, 1), pszSrc);
}
static inline HRESULT StringCbCopyW(STRSAFE_LPWSTR pszDest, size_t cbDest, STRSAFE_LPCWSTR pszSrc)
{
	return StringCchCopyW(pszDest, PERFLIB_WIN32__CB(cbDest, 2), pszSrc);
}
static inline HRESULT StringCbCopyNA(STRSAFE_LPSTR pszDest, size_t cbDest, STRSAFE_PCNZCH pszSrc,
				     size_t cbToCopy)
{
	return StringCchCopyNA(pszDest, PERFLIB_WIN32__CB(cbDest, 1), pszSrc, cbToCopy);
}
static inline HRESULT StringCbCopyNW(STRSAFE_LPWSTR pszDest, size_t cbDest, STRSAFE_PCNZWCH pszSrc,
				     size_t cbToCopy)
{
	return StringCchCopyNW(pszDest, PERFLIB_WIN32__CB(cbDest, 2), pszSrc, cbToCopy / 2);
}
static inline HRESULT StringCbCatA(STRSAFE_LPSTR pszDest, size_t cbDest, STRSAFE_LPCSTR pszSrc)
{
	return StringCchCatA(pszDest, PERFLIB_WIN32__CB(cbDest, 1), pszSrc);
}
static inline HRESULT StringCbCatW(STRSAFE_LPWSTR pszDest, size_t cbDest, STRSAFE_LPCWSTR pszSrc)
{
	return StringCchCatW(pszDest, PERFLIB_WIN32__CB(cbDest, 2), pszSrc);
}
static inline HRESULT StringCbCatNA(STRSAFE_LPSTR pszDest, size_t cbDest, STRSAFE_PCNZCH pszSrc,
				    size_t cbToAppend)
{
	return StringCchCatNA(pszDest, PERFLIB_WIN32__CB(cbDest, 1), pszSrc, cbToAppend);
}
static inline HRESULT StringCbCatNW(STRSAFE_LPWSTR pszDest, size_t cbDest, STRSAFE_PCNZWCH pszSrc,
				    size_t cbToAppend)
{
	return StringCchCatNW(pszDest, PERFLIB_WIN32__CB(cbDest, 2), pszSrc, cbToAppend / 2);
}
static inline HRESULT StringCbLengthA(STRSAFE_PCNZCH psz, size_t cbMax, size_t *pcbLength)
{
	return StringCchLengthA(psz, PERFLIB_WIN32__CB(cbMax, 1), pcbLength);
}
static inline HRESULT StringCbLengthW(STRSAFE_PCNZWCH psz, size_t cbMax, size_t *pcbLength)
{
	HRESULT hr = StringCchLengthW(psz, PERFLIB_WIN32__CB(cbMax, 2), pcbLength);

	if (pcbLength)
		*pcbLength *= sizeof(WCHAR);
	return hr;
}
static inline HRESULT StringCbVPrintfA(STRSAFE_LPSTR pszDest, size_t cbDest,
				       STRSAFE_LPCSTR pszFormat, va_list argList)
{
	return StringCchVPrintfA(pszDest, PERFLIB_WIN32__CB(cbDest, 1), pszFormat, argList);
}
static inline HRESULT StringCbVPrintfW(STRSAFE_LPWSTR pszDest, size_t cbDest,
				       STRSAFE_LPCWSTR pszFormat, va_list argList)
{
	return StringCchVPrintfW(pszDest, PERFLIB_WIN32__CB(cbDest, 2), pszFormat, argList);
}
static inline HRESULT StringCbPrintfA(STRSAFE_LPSTR pszDest, size_t cbDest,
				      STRSAFE_LPCSTR pszFormat, ...)
{
	va_list ap;
	HRESULT hr;

	va_start(ap, pszFormat);
	hr = StringCchVPrintfA(pszDest, PERFLIB_WIN32__CB(cbDest, 1), pszFormat, ap);
	va_end(ap);
	return hr;
}
static inline HRESULT StringCbPrintfW(STRSAFE_LPWSTR pszDest, size_t cbDest,
				      STRSAFE_LPCWSTR pszFormat, ...)
{
	va_list ap;
	HRESULT hr;

	va_start(ap, pszFormat);
	hr = StringCchVPrintfW(pszDest, PERFLIB_WIN32__CB(cbDest, 2), pszFormat, ap);
	va_end(ap);
	return hr;
}

#if defined(UNICODE) || defined(_UNICODE)
#define STRSAFE__T(n) n##W
#else
#define STRSAFE__T(n) n##A
#endif
#define StringCchCopy STRSAFE__T(StringCchCopy)
#define StringCchCopyN STRSAFE__T(StringCchCopyN)
#define StringCchCat STRSAFE__T(StringCchCat)
#define StringCchCatN STRSAFE__T(StringCchCatN)
#define StringCchLength STRSAFE__T(StringCchLength)
#define StringCchPrintf STRSAFE__T(StringCchPrintf)
#define StringCchVPrintf STRSAFE__T(StringCchVPrintf)
#define StringCbCopy STRSAFE__T(StringCbCopy)
#define StringCbCopyN STRSAFE__T(StringCbCopyN)
#define StringCbCat STRSAFE__T(StringCbCat)
#define StringCbCatN STRSAFE__T(StringCbCatN)
#define StringCbLength STRSAFE__T(StringCbLength)
#define StringCbPrintf STRSAFE__T(StringCbPrintf)
#define StringCbVPrintf STRSAFE__T(StringCbVPrintf)

#ifdef __cplusplus
}
#endif

#endif /* PERFLIB_WIN32_STRSAFE_H */

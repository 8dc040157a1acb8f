// SPDX-License-Identifier: MIT
/* strings.c - UTF-16LE strings, UTF-8 conversion, wildcards and GUID text. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

size_t perflib_wcslen(const WCHAR *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

size_t perflib_wcsnlen(const WCHAR *s, size_t max)
{
	size_t n = 0;

	while (n < max && s[n])
		n++;
	return n;
}

int perflib_wcscmp(const WCHAR *a, const WCHAR *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return (int)*a - (int)*b;
}

bool perflib_guid_equal(const GUID *a, const GUID *b)
{
	return memcmp(a, b, sizeof(GUID)) == 0;
}

/* decode one UTF-8 sequence; returns bytes used, 0 on malformed input */
static int utf8_decode(const unsigned char *s, uint32_t *ret_cp)
{
	uint32_t cp;
	int n, i;

	if (s[0] < 0x80) {
		*ret_cp = s[0];
		return 1;
	}
	if ((s[0] & 0xE0) == 0xC0) {
		cp = s[0] & 0x1F;
		n = 2;
	} else if ((s[0] & 0xF0) == 0xE0) {
		cp = s[0] & 0x0F;
		n = 3;
	} else if ((s[0] & 0xF8) == 0xF0) {
		cp = s[0] & 0x07;
		n = 4;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	/* reject overlong forms, surrogates and values past U+10FFFF */
	if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
		return 0;
	*ret_cp = cp;
	return n;
}

int perflib_utf8_to_utf16(const char *src, WCHAR *dst, size_t dst_units)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t n = 0;
	uint32_t cp;
	int used;

	while (*s) {
		used = utf8_decode(s, &cp);
		if (!used)
			return -EILSEQ;
		s += used;
		if (cp >= 0x10000) {
			if (n + 2 >= dst_units)
				return -ENOSPC;
			cp -= 0x10000;
			dst[n++] = (WCHAR)(0xD800 | (cp >> 10));
			dst[n++] = (WCHAR)(0xDC00 | (cp & 0x3FF));
		} else {
			if (n + 1 >= dst_units)
				return -ENOSPC;
			dst[n++] = (WCHAR)cp;
		}
	}
	if (n >= dst_units)
		return -ENOSPC;
	dst[n++] = 0;
	return (int)n;
}

/* unit @i of @src, which may be unaligned (it often lies inside a packed buffer) */
static uint32_t unit_at(const WCHAR *src, size_t i)
{
	WCHAR u;

	memcpy(&u, (const char *)src + 2 * i, sizeof(u));
	return u;
}

int perflib_utf16_to_utf8(const WCHAR *src, size_t src_units, char *dst, size_t dst_size)
{
	size_t i, n = 0;
	uint32_t cp, lo;
	char enc[4];
	int len, k;

	if (!dst_size)
		return -ENOSPC;
	for (i = 0; i < src_units && (cp = unit_at(src, i)); i++) {
		lo = cp >= 0xD800 && cp <= 0xDBFF && i + 1 < src_units ? unit_at(src, i + 1) : 0;
		if (lo >= 0xDC00 && lo <= 0xDFFF) {
			cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			i++;
		} else if (cp >= 0xD800 && cp <= 0xDFFF) {
			cp = 0xFFFD; /* lone surrogate */
		}
		if (cp < 0x80) {
			enc[0] = (char)cp;
			len = 1;
		} else if (cp < 0x800) {
			enc[0] = (char)(0xC0 | cp >> 6);
			enc[1] = (char)(0x80 | (cp & 0x3F));
			len = 2;
		} else if (cp < 0x10000) {
			enc[0] = (char)(0xE0 | cp >> 12);
			enc[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
			enc[2] = (char)(0x80 | (cp & 0x3F));
			len = 3;
		} else {
			enc[0] = (char)(0xF0 | cp >> 18);
			enc[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
			enc[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
			enc[3] = (char)(0x80 | (cp & 0x3F));
			len = 4;
		}
		if (n + len >= dst_size) {
			/* no room: what fits, cut at a character boundary */
			dst[n] = 0;
			return -ENOSPC;
		}
		for (k = 0; k < len; k++)
			dst[n++] = enc[k];
	}
	dst[n] = 0;
	return (int)n;
}

bool perflib_wildcard_match(const WCHAR *p, const WCHAR *s, size_t s_len)
{
	size_t si = 0, star_s = 0;
	const WCHAR *star_p = NULL;

	/* iterative glob with single backtrack point: linear in practice, no recursion */
	while (si < s_len) {
		if (*p == u'?' || (*p && *p != u'*' && *p == s[si])) {
			p++;
			si++;
		} else if (*p == u'*') {
			star_p = p++;
			star_s = si;
		} else if (star_p) {
			p = star_p + 1;
			si = ++star_s;
		} else {
			return false;
		}
	}
	while (*p == u'*')
		p++;
	return *p == 0;
}

char *perflib_guid_to_string(const GUID *g, char buf[37])
{
	snprintf(buf, 37, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", g->Data1, g->Data2,
		 g->Data3, g->Data4[0], g->Data4[1], g->Data4[2], g->Data4[3], g->Data4[4],
		 g->Data4[5], g->Data4[6], g->Data4[7]);
	return buf;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int perflib_guid_from_string(const char *str, GUID *ret_guid)
{
	/* positions of the 32 hex digits in "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
	uint8_t b[16];
	size_t len, i, k = 0;
	int hi, lo;

	if (!str || !ret_guid)
		return -EINVAL;
	len = strlen(str);
	if (len == 38 && str[0] == '{' && str[37] == '}') {
		str++;
		len = 36;
	}
	if (len != 36 || str[8] != '-' || str[13] != '-' || str[18] != '-' || str[23] != '-')
		return -EINVAL;
	for (i = 0; i < 36; i += 2) {
		if (str[i] == '-')
			i++;
		hi = hexval(str[i]);
		lo = hexval(str[i + 1]);
		if (hi < 0 || lo < 0 || str[i + 1] == '-')
			return -EINVAL;
		b[k++] = (uint8_t)(hi << 4 | lo);
	}
	if (k != 16)
		return -EINVAL;
	ret_guid->Data1 = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	ret_guid->Data2 = (uint16_t)(b[4] << 8 | b[5]);
	ret_guid->Data3 = (uint16_t)(b[6] << 8 | b[7]);
	memcpy(ret_guid->Data4, b + 8, 8);
	return 0;
}

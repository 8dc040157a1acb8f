// SPDX-License-Identifier: MIT
/* strings.c - UTF-16LE strings, UTF-8 conversion, wildcards and GUID text. */
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "utf.h"

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

int perflib_utf8_to_utf16(const char *src, WCHAR *dst, size_t dst_units)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t n = 0;
	uint32_t cp;
	int used;

	while (*s) {
		/* the NUL after the string is no continuation byte: 4 is never read past it */
		used = (int)utf8_next(s, 4, &cp);
		if (!used)
			return -EILSEQ;
		s += used;
		if (n + (cp >= 0x10000 ? 2 : 1) >= dst_units)
			return -ENOSPC;
		n += utf16_put(cp, dst + n);
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
	uint32_t cp;
	char enc[4];
	int len, k;

	if (!dst_size)
		return -ENOSPC;
	for (i = 0; i < src_units && (cp = unit_at(src, i)); i++) {
		i += utf16_pair(cp, i + 1 < src_units ? unit_at(src, i + 1) : 0, &cp) - 1;
		len = (int)utf8_put(cp, enc);
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

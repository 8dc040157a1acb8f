/* SPDX-License-Identifier: MIT */
/*
 * utf.c - one code point at a time between UTF-16 (WCHAR) and UTF-8, the only conversions of
 * libperflib-win32. Invalid input never stops a conversion: an unpaired surrogate and a bad
 * UTF-8 sequence each become U+FFFD, as Windows' WideCharToMultiByte does by default.
 */
#include <stdlib.h>

#include "internal.h"

size_t w32_u16_next(const WCHAR *s, size_t n, uint32_t *ret_cp)
{
	uint32_t u = s[0];

	if (u < 0xD800 || u > 0xDFFF) {
		*ret_cp = u;
		return 1;
	}
	/* a high surrogate followed by a low one is one code point above U+FFFF */
	if (u <= 0xDBFF && n > 1 && s[1] >= 0xDC00 && s[1] <= 0xDFFF) {
		*ret_cp = 0x10000 + ((u - 0xD800) << 10) + (uint32_t)(s[1] - 0xDC00);
		return 2;
	}
	*ret_cp = W32_REPLACEMENT;
	return 1;
}

size_t w32_u8_next(const unsigned char *s, size_t n, uint32_t *ret_cp)
{
	uint32_t cp, min;
	size_t len, i;

	if (s[0] < 0x80) {
		*ret_cp = s[0];
		return 1;
	}
	if ((s[0] & 0xE0) == 0xC0)
		len = 2, cp = s[0] & 0x1F, min = 0x80;
	else if ((s[0] & 0xF0) == 0xE0)
		len = 3, cp = s[0] & 0x0F, min = 0x800;
	else if ((s[0] & 0xF8) == 0xF0)
		len = 4, cp = s[0] & 0x07, min = 0x10000;
	else
		goto bad;
	if (len > n)
		goto bad;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			goto bad;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	/* overlong forms, surrogates and values past U+10FFFF are not UTF-8 */
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		goto bad;
	*ret_cp = cp;
	return len;
bad:
	*ret_cp = W32_REPLACEMENT;
	return 1;
}

size_t w32_u8_put(uint32_t cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xE0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		out[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
	out[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

size_t w32_u16_put(uint32_t cp, WCHAR *out)
{
	if (cp < 0x10000) {
		out[0] = (WCHAR)cp;
		return 1;
	}
	cp -= 0x10000;
	out[0] = (WCHAR)(0xD800 + (cp >> 10));
	out[1] = (WCHAR)(0xDC00 + (cp & 0x3FF));
	return 2;
}

char *w32_utf16_to_utf8(const WCHAR *s, size_t n, size_t *ret_len)
{
	struct w32_out o = {0, 0, 0, NULL, 0};

	w32_out_units(&o, s, n);
	w32_out_bytes(&o, "", 0); /* a buffer even for an empty string */
	if (o.err) {
		w32_out_free(&o);
		return NULL;
	}
	if (ret_len)
		*ret_len = o.len;
	return o.buf;
}

/* SPDX-License-Identifier: MIT */
/*
 * utf.h - one code point at a time between UTF-8, UTF-16 and Unicode: the one decoder and
 * encoder of each, for the library's strings (userspace/strings.c) and libperflib-win32's
 * wide runtime (win32/utf.c). Each caller keeps its own rule for bad input (the library
 * refuses it, the win32 runtime writes U+FFFD as Windows does). Header only: nothing
 * exported. Include after the header that defines WCHAR (a 16-bit unit).
 */
#ifndef PERFLIB_UTF_H
#define PERFLIB_UTF_H

#include <stddef.h>
#include <stdint.h>

#define PERFLIB_UTF_REPLACEMENT 0xFFFD /* what an unpaired surrogate reads as */

/*
 * utf8_next - the code point the UTF-8 sequence at @s (@n > 0 bytes) starts with, in
 * *@ret_cp; bytes used (1..4), or 0 when it is not UTF-8 (a bad lead or continuation byte,
 * cut short, overlong, a surrogate, past U+10FFFF)
 */
static inline size_t utf8_next(const unsigned char *s, size_t n, uint32_t *ret_cp)
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
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	*ret_cp = cp;
	return len;
}

/* utf8_put - @cp (at most U+10FFFF) into @out, which has room for 4 bytes; bytes written */
static inline size_t utf8_put(uint32_t cp, char *out)
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

/*
 * utf16_pair - the code point of unit @u and, when @u is a high surrogate, the unit after it
 * (@next, 0 when there is none) in *@ret_cp; units used (1 or 2). An unpaired surrogate
 * reads as U+FFFD.
 */
static inline size_t utf16_pair(uint32_t u, uint32_t next, uint32_t *ret_cp)
{
	if (u < 0xD800 || u > 0xDFFF) {
		*ret_cp = u;
		return 1;
	}
	if (u <= 0xDBFF && next >= 0xDC00 && next <= 0xDFFF) {
		*ret_cp = 0x10000 + ((u - 0xD800) << 10) + (next - 0xDC00);
		return 2;
	}
	*ret_cp = PERFLIB_UTF_REPLACEMENT;
	return 1;
}

/* utf16_put - @cp into @out, which has room for 2 units; units written */
static inline size_t utf16_put(uint32_t cp, WCHAR *out)
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

#endif /* PERFLIB_UTF_H */

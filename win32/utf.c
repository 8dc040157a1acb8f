/* SPDX-License-Identifier: MIT */
/*
 * utf.c - UTF-16 (WCHAR) strings to UTF-8, for libperflib-win32 (one code point at a time
 * with common/utf.h, in w32_out). Invalid input never stops a conversion: an unpaired
 * surrogate and a bad UTF-8 sequence each become U+FFFD, as Windows' WideCharToMultiByte does
 * by default.
 */
#include <stdlib.h>

#include "internal.h"

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

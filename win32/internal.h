/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what libperflib-win32's files share: UTF-8/UTF-16 steps (utf.c) and the
 * growable output of the formatter (format.c). Nothing here is exported.
 */
#ifndef PERFLIB_WIN32_INTERNAL_H
#define PERFLIB_WIN32_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "perflib/win32/perflib-win32-rt.h"
#include "perflib/win32/conio.h"
#include "perflib/win32/strsafe.h"
#include "utf.h"

#define W32_HIDDEN __attribute__((visibility("hidden")))

/* one code point at a time (common/utf.h); what the library refuses becomes U+FFFD here */
static inline size_t w32_u16_next(const WCHAR *s, size_t n, uint32_t *ret_cp)
{
	return utf16_pair(s[0], n > 1 ? s[1] : 0, ret_cp);
}

/* w32_u8_next - one code point of @s (@n > 0 bytes); bytes used (1..4), U+FFFD for a bad one */
static inline size_t w32_u8_next(const unsigned char *s, size_t n, uint32_t *ret_cp)
{
	size_t len = utf8_next(s, n, ret_cp);

	if (len)
		return len;
	*ret_cp = PERFLIB_UTF_REPLACEMENT;
	return 1;
}

/*
 * struct w32_out - formatted output in memory: bytes (UTF-8) or WCHAR units, as @wide says.
 * Text of the other kind is converted when it is added. @err is set on allocation failure.
 */
struct w32_out {
	int wide;   /* 1: units are WCHAR, 0: bytes */
	size_t len; /* units held, no NUL counted */
	size_t cap; /* units allocated */
	void *buf;  /* char * or WCHAR *, NUL-terminated when len < cap */
	int err;    /* 0 or -ENOMEM */
};

W32_HIDDEN void w32_out_bytes(struct w32_out *o, const char *s, size_t n);
W32_HIDDEN void w32_out_units(struct w32_out *o, const WCHAR *s, size_t n);
W32_HIDDEN void w32_out_free(struct w32_out *o);

/*
 * w32_format - format @fmt (WCHAR units when @fmt_wide, else bytes) with Microsoft's rules
 * into @o. 0, -EINVAL (a NULL format, %n, an unknown conversion), -ENOMEM.
 */
W32_HIDDEN int w32_format(struct w32_out *o, int fmt_wide, const void *fmt, va_list ap);

/*
 * W32_VARIADIC - define the variadic function @decl, whose last named parameter is @last, as
 * @call on its arguments in the va_list ap (every ... function of the library is one)
 */
#define W32_VARIADIC(decl, last, call)                                                             \
	decl                                                                                       \
	{                                                                                          \
		va_list ap;                                                                        \
		int ret;                                                                           \
                                                                                                   \
		va_start(ap, last);                                                                \
		ret = call;                                                                        \
		va_end(ap);                                                                        \
		return ret;                                                                        \
	}

/* w32_utf16_to_utf8 - @n units of @s as UTF-8 (malloc'd, NUL-terminated) or NULL */
W32_HIDDEN char *w32_utf16_to_utf8(const WCHAR *s, size_t n, size_t *ret_len);

#endif /* PERFLIB_WIN32_INTERNAL_H */

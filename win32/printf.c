/* SPDX-License-Identifier: MIT */
/*
 * printf.c - the printf family of the Microsoft C runtime on format.c's engine: where the text
 * goes (a FILE as UTF-8, a char or WCHAR buffer) and what each function returns when it does
 * not fit. The invalid-parameter cases return their error (-1, errno EINVAL or ERANGE)
 * instead of ending the process as Windows' default handler does.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* format into memory: 0 and @o filled, or -1 with errno set */
static int fmt_mem(struct w32_out *o, int out_wide, int fmt_wide, const void *fmt, va_list ap)
{
	int err;

	o->wide = out_wide;
	o->len = o->cap = 0;
	o->buf = NULL;
	o->err = 0;
	err = w32_format(o, fmt_wide, fmt, ap);
	if (err || o->len > 2147483647u) {
		w32_out_free(o);
		errno = err == -ENOMEM ? ENOMEM : EINVAL;
		return -1;
	}
	return 0;
}

/* to a stream, as UTF-8 bytes; the count is of the format's units (wide or bytes) */
static int fmt_file(FILE *f, int fmt_wide, const void *fmt, va_list ap)
{
	struct w32_out o;
	char *text = NULL;
	size_t bytes;
	int n;

	if (!f) {
		errno = EINVAL;
		return -1;
	}
	if (fmt_mem(&o, fmt_wide, fmt_wide, fmt, ap))
		return -1;
	n = (int)o.len;
	if (fmt_wide) {
		text = w32_utf16_to_utf8(o.buf, o.len, &bytes);
		if (!text) {
			w32_out_free(&o);
			errno = ENOMEM;
			return -1;
		}
	} else {
		bytes = o.len;
	}
	if (fwrite(text ? text : (char *)o.buf, 1, bytes, f) != bytes)
		n = -1;
	free(text);
	w32_out_free(&o);
	return n;
}

/* copy @n units of @o into @dst (wide or narrow as @o), then a NUL when @nul */
static void copy_out(void *dst, const struct w32_out *o, size_t n, int nul)
{
	size_t unit = o->wide ? sizeof(WCHAR) : 1;

	if (n) /* an empty output may have no buffer at all */
		memcpy(dst, o->buf, n * unit);
	if (!nul)
		return;
	if (o->wide)
		((WCHAR *)dst)[n] = 0;
	else
		((char *)dst)[n] = 0;
}

/* unbounded (sprintf, _swprintf) */
static int fmt_unbounded(void *dst, int wide, const void *fmt, va_list ap)
{
	struct w32_out o;
	int n;

	if (!dst) {
		errno = EINVAL;
		return -1;
	}
	if (fmt_mem(&o, wide, wide, fmt, ap))
		return -1;
	copy_out(dst, &o, o.len, 1);
	n = (int)o.len;
	w32_out_free(&o);
	return n;
}

/*
 * ISO forms (snprintf, swprintf): the text cut to @count - 1 units and a NUL. snprintf returns
 * the full length (C99); swprintf returns -1 when the text was cut.
 */
static int fmt_iso(void *dst, size_t count, int wide, const void *fmt, va_list ap)
{
	struct w32_out o;
	int n;

	if ((!dst && count) || (wide && !count)) {
		errno = EINVAL;
		return -1;
	}
	if (fmt_mem(&o, wide, wide, fmt, ap))
		return -1;
	n = (int)o.len;
	if (count)
		copy_out(dst, &o, o.len < count ? o.len : count - 1, 1);
	if (wide && o.len >= count)
		n = -1;
	w32_out_free(&o);
	return n;
}

/*
 * The legacy forms (_snprintf, _snwprintf): up to @count units, a NUL only when there is room;
 * -1 when the text was cut. A NULL buffer with count 0 returns the length the text needs.
 */
static int fmt_legacy(void *dst, size_t count, int wide, const void *fmt, va_list ap)
{
	struct w32_out o;
	int n;

	if (!dst && count) {
		errno = EINVAL;
		return -1;
	}
	if (fmt_mem(&o, wide, wide, fmt, ap))
		return -1;
	n = (int)o.len;
	if (dst) {
		copy_out(dst, &o, o.len < count ? o.len : count, o.len < count);
		if (o.len > count)
			n = -1;
	}
	w32_out_free(&o);
	return n;
}

/*
 * The secure forms (_snprintf_s, _snwprintf_s, sprintf_s, swprintf_s): @count units at most
 * (_TRUNCATE: what fits in @size), always a NUL. The text and its NUL not fitting in @size is
 * an error (ERANGE, "" in @dst) unless @count is _TRUNCATE, which cuts it and returns -1.
 */
static int fmt_secure(void *dst, size_t size, size_t count, int wide, const void *fmt, va_list ap)
{
	struct w32_out o;
	size_t n;
	int r;

	if (!dst || !size) {
		errno = EINVAL;
		return -1;
	}
	if (!fmt || fmt_mem(&o, wide, wide, fmt, ap)) {
		copy_out(dst, &(struct w32_out){wide, 0, 0, NULL, 0}, 0, 1);
		return -1;
	}
	n = count == _TRUNCATE ? o.len : (o.len < count ? o.len : count);
	r = n < o.len ? -1 : (int)n;
	if (n + 1 > size) {
		if (count != _TRUNCATE) {
			copy_out(dst, &(struct w32_out){wide, 0, 0, NULL, 0}, 0, 1);
			w32_out_free(&o);
			errno = ERANGE;
			return -1;
		}
		n = size - 1;
		r = -1;
	}
	copy_out(dst, &o, n, 1);
	w32_out_free(&o);
	return r;
}

/* ---- wide ---------------------------------------------------------------------------------- */

int perflib_win32_vfwprintf(FILE *stream, const WCHAR *format, va_list argptr)
{
	return fmt_file(stream, 1, format, argptr);
}

int perflib_win32_vwprintf(const WCHAR *format, va_list argptr)
{
	return fmt_file(stdout, 1, format, argptr);
}

W32_VARIADIC(int perflib_win32_fwprintf(FILE *stream, const WCHAR *format, ...), format,
	     fmt_file(stream, 1, format, ap))

W32_VARIADIC(int perflib_win32_wprintf(const WCHAR *format, ...), format,
	     fmt_file(stdout, 1, format, ap))

int perflib_win32_vswprintf(WCHAR *buffer, size_t count, const WCHAR *format, va_list argptr)
{
	return fmt_iso(buffer, count, 1, format, argptr);
}

W32_VARIADIC(int perflib_win32_swprintf(WCHAR *buffer, size_t count, const WCHAR *format, ...),
	     format, fmt_iso(buffer, count, 1, format, ap))

W32_VARIADIC(int _swprintf(WCHAR *buffer, const WCHAR *format, ...), format,
	     fmt_unbounded(buffer, 1, format, ap))

int _vsnwprintf(WCHAR *buffer, size_t count, const WCHAR *format, va_list argptr)
{
	return fmt_legacy(buffer, count, 1, format, argptr);
}

W32_VARIADIC(int _snwprintf(WCHAR *buffer, size_t count, const WCHAR *format, ...), format,
	     fmt_legacy(buffer, count, 1, format, ap))

int _vsnwprintf_s(WCHAR *buffer, size_t sizeOfBuffer, size_t count, const WCHAR *format,
		  va_list argptr)
{
	return fmt_secure(buffer, sizeOfBuffer, count, 1, format, argptr);
}

W32_VARIADIC(int _snwprintf_s(WCHAR *buffer, size_t sizeOfBuffer, size_t count, const WCHAR *format,
			      ...),
	     format, fmt_secure(buffer, sizeOfBuffer, count, 1, format, ap))

int vswprintf_s(WCHAR *buffer, size_t numberOfElements, const WCHAR *format, va_list argptr)
{
	return fmt_secure(buffer, numberOfElements, (size_t)-2, 1, format, argptr);
}

W32_VARIADIC(int swprintf_s(WCHAR *buffer, size_t sizeOfBuffer, const WCHAR *format, ...), format,
	     fmt_secure(buffer, sizeOfBuffer, (size_t)-2, 1, format, ap))

int perflib_win32_fputws(const WCHAR *str, FILE *stream)
{
	size_t n = 0, bytes;
	char *text;
	int r;

	if (!str || !stream) {
		errno = EINVAL;
		return -1;
	}
	while (str[n])
		n++;
	text = w32_utf16_to_utf8(str, n, &bytes);
	if (!text) {
		errno = ENOMEM;
		return -1;
	}
	r = fwrite(text, 1, bytes, stream) == bytes ? 0 : -1;
	free(text);
	return r;
}

int _putws(const WCHAR *str)
{
	if (perflib_win32_fputws(str, stdout))
		return -1;
	return putchar('\n') == EOF ? -1 : 0;
}

/* ---- narrow (the format and %s in bytes; %S a WCHAR string, written as UTF-8) -------------- */

int perflib_win32_vfprintf(FILE *stream, const char *format, va_list argptr)
{
	return fmt_file(stream, 0, format, argptr);
}

int perflib_win32_vprintf(const char *format, va_list argptr)
{
	return fmt_file(stdout, 0, format, argptr);
}

W32_VARIADIC(int perflib_win32_fprintf(FILE *stream, const char *format, ...), format,
	     fmt_file(stream, 0, format, ap))

W32_VARIADIC(int perflib_win32_printf(const char *format, ...), format,
	     fmt_file(stdout, 0, format, ap))

int perflib_win32_vsprintf(char *buffer, const char *format, va_list argptr)
{
	return fmt_unbounded(buffer, 0, format, argptr);
}

W32_VARIADIC(int perflib_win32_sprintf(char *buffer, const char *format, ...), format,
	     fmt_unbounded(buffer, 0, format, ap))

int perflib_win32_vsnprintf(char *buffer, size_t count, const char *format, va_list argptr)
{
	return fmt_iso(buffer, count, 0, format, argptr);
}

W32_VARIADIC(int perflib_win32_snprintf(char *buffer, size_t count, const char *format, ...),
	     format, fmt_iso(buffer, count, 0, format, ap))

int _vsnprintf(char *buffer, size_t count, const char *format, va_list argptr)
{
	return fmt_legacy(buffer, count, 0, format, argptr);
}

W32_VARIADIC(int _snprintf(char *buffer, size_t count, const char *format, ...), format,
	     fmt_legacy(buffer, count, 0, format, ap))

int _vsnprintf_s(char *buffer, size_t sizeOfBuffer, size_t count, const char *format,
		 va_list argptr)
{
	return fmt_secure(buffer, sizeOfBuffer, count, 0, format, argptr);
}

W32_VARIADIC(int _snprintf_s(char *buffer, size_t sizeOfBuffer, size_t count, const char *format,
			     ...),
	     format, fmt_secure(buffer, sizeOfBuffer, count, 0, format, ap))

int vsprintf_s(char *buffer, size_t numberOfElements, const char *format, va_list argptr)
{
	return fmt_secure(buffer, numberOfElements, (size_t)-2, 0, format, argptr);
}

W32_VARIADIC(int sprintf_s(char *buffer, size_t sizeOfBuffer, const char *format, ...), format,
	     fmt_secure(buffer, sizeOfBuffer, (size_t)-2, 0, format, ap))

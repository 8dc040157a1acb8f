/* SPDX-License-Identifier: MIT */
/*
 * format.c - the one printf engine of libperflib-win32, with the Microsoft C runtime's rules:
 *  - in a wide function (format of WCHAR) %s and %c take WCHAR, %S and %C take char; in a
 *    narrow one the other way round; %hs/%hc are always narrow, %ls/%lc/%ws/%wc always wide;
 *  - integer sizes as on Windows (LLP64): no prefix and l are 32 bits, ll, I64, j, z, t and
 *    I are 64 bits, I32 is 32 bits, h and hh 16 and 8;
 *  - %p is 16 upper-case hex digits; a NULL string prints "(null)"; %n is refused.
 * Text is collected in a struct w32_out, UTF-8 or UTF-16 as the caller's output needs; the
 * numbers themselves are glibc's (snprintf with the same flags, width and precision).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- output ---------------------------------------------------------------------------- */

static int out_room(struct w32_out *o, size_t more)
{
	size_t unit = o->wide ? sizeof(WCHAR) : 1, cap;
	void *p;

	if (o->err)
		return -1;
	if (o->len + more + 1 <= o->cap)
		return 0;
	cap = o->cap ? o->cap : 64;
	while (cap < o->len + more + 1)
		cap *= 2;
	p = realloc(o->buf, cap * unit);
	if (!p) {
		o->err = -ENOMEM;
		return -1;
	}
	o->buf = p;
	o->cap = cap;
	return 0;
}

/* keep the text NUL-terminated after every addition */
static void out_end(struct w32_out *o)
{
	if (o->wide)
		((WCHAR *)o->buf)[o->len] = 0;
	else
		((char *)o->buf)[o->len] = 0;
}

void w32_out_bytes(struct w32_out *o, const char *s, size_t n)
{
	size_t i = 0;
	uint32_t cp;

	if (!o->wide) {
		if (out_room(o, n))
			return;
		memcpy((char *)o->buf + o->len, s, n);
		o->len += n;
		out_end(o);
		return;
	}
	/* UTF-8 into WCHAR: at most one unit per byte */
	if (out_room(o, n))
		return;
	while (i < n) {
		i += w32_u8_next((const unsigned char *)s + i, n - i, &cp);
		o->len += utf16_put(cp, (WCHAR *)o->buf + o->len);
	}
	out_end(o);
}

void w32_out_units(struct w32_out *o, const WCHAR *s, size_t n)
{
	size_t i = 0;
	uint32_t cp;

	if (o->wide) {
		if (out_room(o, n))
			return;
		memcpy((WCHAR *)o->buf + o->len, s, n * sizeof(WCHAR));
		o->len += n;
		out_end(o);
		return;
	}
	/* UTF-16 into UTF-8: at most three bytes per unit (a pair of units gives four) */
	if (out_room(o, 3 * n))
		return;
	while (i < n) {
		i += w32_u16_next(s + i, n - i, &cp);
		o->len += utf8_put(cp, (char *)o->buf + o->len);
	}
	out_end(o);
}

void w32_out_free(struct w32_out *o)
{
	free(o->buf);
	o->buf = NULL;
	o->len = o->cap = 0;
}

static void out_pad(struct w32_out *o, size_t n)
{
	static const char spaces[] = "                                ";

	while (n) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;

		w32_out_bytes(o, spaces, k);
		n -= k;
	}
}

/* ---- one conversion -------------------------------------------------------------------- */

enum size_mod { SZ_NONE, SZ_HH, SZ_H, SZ_L, SZ_LL, SZ_64, SZ_32, SZ_BIG_L, SZ_W };

struct spec {
	char flags[8]; /* of "-+ #0", in the order given */
	int width;     /* -1: none */
	int prec;      /* -1: none */
	enum size_mod sz;
	int conv; /* the conversion character */
};

/* a string argument: @wide says its kind; width and precision count its units */
static void put_string(struct w32_out *o, const struct spec *sp, const void *arg, int wide)
{
	static const WCHAR wnull[] = {'(', 'n', 'u', 'l', 'l', ')', 0};
	size_t n = 0, max = sp->prec >= 0 ? (size_t)sp->prec : (size_t)-1;
	size_t width = sp->width > 0 ? (size_t)sp->width : 0;
	int left = strchr(sp->flags, '-') != NULL;

	if (!arg)
		arg = wide ? (const void *)wnull : (const void *)"(null)";
	if (wide)
		while (n < max && ((const WCHAR *)arg)[n])
			n++;
	else
		while (n < max && ((const char *)arg)[n])
			n++;
	if (!left && width > n)
		out_pad(o, width - n);
	if (wide)
		w32_out_units(o, arg, n);
	else
		w32_out_bytes(o, arg, n);
	if (left && width > n)
		out_pad(o, width - n);
}

/* glibc formats the number: "%<flags><width>.<prec><len><conv>" */
static void put_number(struct w32_out *o, const struct spec *sp, const char *len, int conv,
		       va_list *ap, int kind)
{
	char f[48], small[128], *text = small;
	int n = 0;
	unsigned long long u = 0;
	long long s = 0;
	double d = 0;
	long double ld = 0;

	n = snprintf(f, sizeof(f), "%%%s", sp->flags);
	if (sp->width >= 0)
		n += snprintf(f + n, sizeof(f) - (size_t)n, "%d", sp->width);
	if (sp->prec >= 0)
		n += snprintf(f + n, sizeof(f) - (size_t)n, ".%d", sp->prec);
	snprintf(f + n, sizeof(f) - (size_t)n, "%s%c", len, conv);

	/* the argument, read at its Windows size */
	switch (kind) {
	case 's':
		switch (sp->sz) {
		case SZ_HH:
			s = (signed char)va_arg(*ap, int);
			break;
		case SZ_H:
			s = (short)va_arg(*ap, int);
			break;
		case SZ_LL:
		case SZ_64:
		case SZ_BIG_L:
			s = va_arg(*ap, long long);
			break;
		default: /* none, l, I32: a Windows long is 32 bits */
			s = va_arg(*ap, int);
		}
		n = snprintf(small, sizeof(small), f, s);
		break;
	case 'u':
		switch (sp->sz) {
		case SZ_HH:
			u = (unsigned char)va_arg(*ap, unsigned int);
			break;
		case SZ_H:
			u = (unsigned short)va_arg(*ap, unsigned int);
			break;
		case SZ_LL:
		case SZ_64:
		case SZ_BIG_L:
			u = va_arg(*ap, unsigned long long);
			break;
		default:
			u = va_arg(*ap, unsigned int);
		}
		n = snprintf(small, sizeof(small), f, u);
		break;
	case 'f':
		if (sp->sz == SZ_BIG_L)
			ld = va_arg(*ap, long double);
		else
			d = va_arg(*ap, double);
		n = sp->sz == SZ_BIG_L ? snprintf(small, sizeof(small), f, ld)
				       : snprintf(small, sizeof(small), f, d);
		break;
	}
	if (n < 0)
		return;
	/* a wide field or a long precision: format again into a buffer of the right size */
	if ((size_t)n >= sizeof(small)) {
		text = malloc((size_t)n + 1);
		if (!text) {
			o->err = -ENOMEM;
			return;
		}
		if (kind == 's')
			snprintf(text, (size_t)n + 1, f, s);
		else if (kind == 'u')
			snprintf(text, (size_t)n + 1, f, u);
		else if (sp->sz == SZ_BIG_L)
			snprintf(text, (size_t)n + 1, f, ld);
		else
			snprintf(text, (size_t)n + 1, f, d);
	}
	w32_out_bytes(o, text, (size_t)n);
	if (text != small)
		free(text);
}

/* ---- the format string ----------------------------------------------------------------- */

/* the format's unit at @i, narrow or wide */
static int at(const void *fmt, int wide, size_t i)
{
	return wide ? ((const WCHAR *)fmt)[i] : ((const unsigned char *)fmt)[i];
}

static int number(const void *fmt, int wide, size_t *i)
{
	long v = 0;

	while (at(fmt, wide, *i) >= '0' && at(fmt, wide, *i) <= '9') {
		if (v < 100000000)
			v = v * 10 + (at(fmt, wide, *i) - '0');
		(*i)++;
	}
	return (int)v;
}

int w32_format(struct w32_out *o, int fmt_wide, const void *fmt, va_list ap0)
{
	va_list ap;
	size_t i = 0, start;
	int err = 0;

	if (!fmt)
		return -EINVAL;
	va_copy(ap, ap0);
	w32_out_bytes(o, "", 0); /* a buffer even for empty output */
	for (;;) {
		struct spec sp = {"", -1, -1, SZ_NONE, 0};
		size_t nf = 0;
		int c, wide_arg;

		/* literal text up to the next '%' */
		start = i;
		while (at(fmt, fmt_wide, i) && at(fmt, fmt_wide, i) != '%')
			i++;
		if (i > start) {
			if (fmt_wide)
				w32_out_units(o, (const WCHAR *)fmt + start, i - start);
			else
				w32_out_bytes(o, (const char *)fmt + start, i - start);
		}
		if (!at(fmt, fmt_wide, i))
			break;
		i++;
		if (at(fmt, fmt_wide, i) == '%') {
			w32_out_bytes(o, "%", 1);
			i++;
			continue;
		}
		/* flags, width, precision */
		while ((c = at(fmt, fmt_wide, i)) && strchr("-+ #0", c)) {
			if (nf < sizeof(sp.flags) - 1 && !strchr(sp.flags, c))
				sp.flags[nf++] = (char)c;
			i++;
		}
		if (at(fmt, fmt_wide, i) == '*') {
			sp.width = va_arg(ap, int);
			if (sp.width < 0) { /* a negative width is '-' and its size */
				if (nf < sizeof(sp.flags) - 1 && !strchr(sp.flags, '-'))
					sp.flags[nf++] = '-';
				sp.width = sp.width == -2147483647 - 1 ? 2147483647 : -sp.width;
			}
			i++;
		} else if (at(fmt, fmt_wide, i) >= '0' && at(fmt, fmt_wide, i) <= '9') {
			sp.width = number(fmt, fmt_wide, &i);
		}
		if (at(fmt, fmt_wide, i) == '.') {
			i++;
			if (at(fmt, fmt_wide, i) == '*') {
				sp.prec = va_arg(ap, int);
				if (sp.prec < 0)
					sp.prec = -1;
				i++;
			} else {
				sp.prec = number(fmt, fmt_wide, &i);
			}
		}
		/* size prefix */
		c = at(fmt, fmt_wide, i);
		if (c == 'h') {
			i++;
			sp.sz = SZ_H;
			if (at(fmt, fmt_wide, i) == 'h')
				sp.sz = SZ_HH, i++;
		} else if (c == 'l') {
			i++;
			sp.sz = SZ_L;
			if (at(fmt, fmt_wide, i) == 'l')
				sp.sz = SZ_LL, i++;
		} else if (c == 'L') {
			sp.sz = SZ_BIG_L, i++;
		} else if (c == 'w') {
			sp.sz = SZ_W, i++;
		} else if (c == 'j' || c == 'z' || c == 't') {
			sp.sz = SZ_64, i++;
		} else if (c == 'I') {
			i++;
			if (at(fmt, fmt_wide, i) == '6' && at(fmt, fmt_wide, i + 1) == '4')
				sp.sz = SZ_64, i += 2;
			else if (at(fmt, fmt_wide, i) == '3' && at(fmt, fmt_wide, i + 1) == '2')
				sp.sz = SZ_32, i += 2;
			else
				sp.sz = SZ_64; /* I alone: pointer-sized */
		}
		sp.conv = c = at(fmt, fmt_wide, i);
		if (c)
			i++;
		/* which string kind: the function's own unless the size or the case says */
		wide_arg = (c == 's' || c == 'c') ? fmt_wide : !fmt_wide;
		if (sp.sz == SZ_H)
			wide_arg = 0;
		else if (sp.sz == SZ_L || sp.sz == SZ_W)
			wide_arg = 1;
		switch (c) {
		case 'd':
		case 'i':
			put_number(o, &sp, "ll", c, &ap, 's');
			break;
		case 'u':
		case 'o':
		case 'x':
		case 'X':
			put_number(o, &sp, "ll", c, &ap, 'u');
			break;
		case 'e':
		case 'E':
		case 'f':
		case 'F':
		case 'g':
		case 'G':
		case 'a':
		case 'A':
			put_number(o, &sp, sp.sz == SZ_BIG_L ? "L" : "", c, &ap, 'f');
			break;
		case 'p': {
			struct spec pp = sp;

			/* Windows: the address as 16 upper-case hex digits */
			pp.sz = SZ_64;
			pp.prec = 16;
			strcpy(pp.flags, strchr(sp.flags, '-') ? "-" : "");
			put_number(o, &pp, "ll", 'X', &ap, 'u');
			break;
		}
		case 's':
		case 'S':
			put_string(o, &sp, va_arg(ap, const void *), wide_arg);
			break;
		case 'c':
		case 'C': {
			WCHAR w[2] = {0, 0};
			char b[2] = {0, 0};
			struct spec cs = sp;

			cs.prec = 1;
			if (wide_arg) {
				w[0] = (WCHAR)va_arg(ap, int);
				put_string(o, &cs, w[0] ? (const void *)w : (const void *)b, 1);
			} else {
				b[0] = (char)va_arg(ap, int);
				put_string(o, &cs, b, 0);
			}
			/* a NUL character is output (it counts) though it ends no string here */
			if ((wide_arg ? w[0] : b[0]) == 0) {
				if (o->wide)
					w32_out_units(o, w, 1);
				else
					w32_out_bytes(o, b, 1);
			}
			break;
		}
		default: /* %n (disabled on Windows too), an unknown letter, or the end */
			err = -EINVAL;
			goto out;
		}
	}
out:
	va_end(ap);
	return err ? err : o->err;
}

/* SPDX-License-Identifier: MIT */
/* tp_out.c - PDH CSV/TSV text for typeperf (tools.md 4.3). See tp_out.h. */
#include <errno.h>
#include <string.h>

#include "tp_out.h"
#include "filetime.h"

/* seconds from 1601-01-01 to 1970-01-01, in 100-ns units */

static char separator(enum tp_format fmt)
{
	return fmt == TP_FORMAT_TSV ? '\t' : ',';
}

void tp_out_field(FILE *out, const char *s)
{
	putc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			putc('"', out); /* CSV convention: a quote is doubled */
		putc(*s, out);
	}
	putc('"', out);
}

int tp_out_header(FILE *out, enum tp_format fmt, char *const *paths, size_t nr)
{
	size_t i;

	tp_out_field(out, fmt == TP_FORMAT_TSV ? "(PDH-TSV 4.0)" : "(PDH-CSV 4.0)");
	for (i = 0; i < nr; i++) {
		putc(separator(fmt), out);
		tp_out_field(out, paths[i]);
	}
	fputs("\r\n", out);
	return ferror(out) ? -EIO : 0;
}

void tp_format_value(char *buf, size_t size, double v)
{
	snprintf(buf, size, "%f", v);
}

int tp_out_row(FILE *out, enum tp_format fmt, const char *stamp, const double *values,
	       const bool *valid, size_t nr)
{
	char buf[512];
	size_t i;

	tp_out_field(out, stamp);
	for (i = 0; i < nr; i++) {
		putc(separator(fmt), out);
		if (valid[i]) {
			tp_format_value(buf, sizeof(buf), values[i]);
			tp_out_field(out, buf);
		} else {
			tp_out_field(out, " ");
		}
	}
	fputs("\r\n", out);
	/* each sample reaches the file or pipe at once, as on Windows */
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}

int tp_format_stamp(char buf[TP_STAMP_SIZE], const struct timespec *ts)
{
	struct tm tm;
	time_t t = ts->tv_sec;

	if (!localtime_r(&t, &tm))
		return -EINVAL;
	/* "MM/DD/YYYY HH:MM:SS" is 19 characters for years 1000..9999 */
	if (tm.tm_year + 1900 < 1000 || tm.tm_year + 1900 > 9999 ||
	    strftime(buf, TP_STAMP_SIZE, "%m/%d/%Y %H:%M:%S", &tm) != 19)
		return -EINVAL;
	snprintf(buf + 19, TP_STAMP_SIZE - 19, ".%03u",
		 (unsigned int)(ts->tv_nsec / 1000000) % 1000u);
	return 0;
}

int tp_filetime_to_timespec(int64_t filetime, struct timespec *ret)
{
	int64_t t;

	if (filetime < PERFLIB_FILETIME_UNIX_EPOCH)
		return -EINVAL;
	t = filetime - PERFLIB_FILETIME_UNIX_EPOCH;
	ret->tv_sec = (time_t)(t / 10000000);
	ret->tv_nsec = (long)(t % 10000000) * 100;
	return 0;
}

/* decimal digits of [s, end) into *ret; -EINVAL when empty, not digits or too large */
static int parse_part(const char *s, const char *end, unsigned long *ret)
{
	unsigned long v = 0;

	if (s == end)
		return -EINVAL;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9' || v > 100000000UL)
			return -EINVAL;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	*ret = v;
	return 0;
}

int tp_parse_interval(const char *s, unsigned int *ret_seconds)
{
	unsigned long part[3], total = 0;
	const char *p = s, *colon;
	int n = 0, i;

	/* split at up to two colons: ss, mm:ss or hh:mm:ss */
	for (;;) {
		colon = strchr(p, ':');
		if (n == 3 || parse_part(p, colon ? colon : p + strlen(p), &part[n]))
			return -EINVAL;
		n++;
		if (!colon)
			break;
		p = colon + 1;
	}
	for (i = 0; i < n; i++) {
		/* parts after the first are minutes or seconds of a clock */
		if (i > 0 && part[i] >= 60)
			return -EINVAL;
		total = total * 60 + part[i];
	}
	if (total < 1 || total > 366UL * 24 * 3600)
		return -EINVAL;
	*ret_seconds = (unsigned int)total;
	return 0;
}

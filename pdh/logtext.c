/* SPDX-License-Identifier: MIT */
/* logtext.c - PDH CSV/TSV text for typeperf (tools.md 4.3). See logtext.h. */
#include <errno.h>
#include <string.h>

#include "logtext.h"
#include "filetime.h"

/* seconds from 1601-01-01 to 1970-01-01, in 100-ns units */

static char separator(enum pdh_text_format fmt)
{
	return fmt == PDH_TEXT_TSV ? '\t' : ',';
}

void pdh_text_field(FILE *out, const char *s)
{
	putc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			putc('"', out); /* CSV convention: a quote is doubled */
		putc(*s, out);
	}
	putc('"', out);
}

int pdh_text_header(FILE *out, enum pdh_text_format fmt, char *const *paths, size_t nr)
{
	size_t i;

	pdh_text_field(out, fmt == PDH_TEXT_TSV ? "(PDH-TSV 4.0)" : "(PDH-CSV 4.0)");
	for (i = 0; i < nr; i++) {
		putc(separator(fmt), out);
		pdh_text_field(out, paths[i]);
	}
	fputs("\r\n", out);
	return ferror(out) ? -EIO : 0;
}

void pdh_text_value(char *buf, size_t size, double v)
{
	snprintf(buf, size, "%f", v);
}

int pdh_text_row(FILE *out, enum pdh_text_format fmt, const char *stamp, const double *values,
		 const bool *valid, size_t nr)
{
	char buf[512];
	size_t i;

	pdh_text_field(out, stamp);
	for (i = 0; i < nr; i++) {
		putc(separator(fmt), out);
		if (valid[i]) {
			pdh_text_value(buf, sizeof(buf), values[i]);
			pdh_text_field(out, buf);
		} else {
			pdh_text_field(out, " ");
		}
	}
	fputs("\r\n", out);
	/* each sample reaches the file or pipe at once, as on Windows */
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}

int pdh_text_stamp(char buf[PDH_STAMP_SIZE], const struct timespec *ts)
{
	struct tm tm;
	time_t t = ts->tv_sec;

	if (!localtime_r(&t, &tm))
		return -EINVAL;
	/* "MM/DD/YYYY HH:MM:SS" is 19 characters for years 1000..9999 */
	if (tm.tm_year + 1900 < 1000 || tm.tm_year + 1900 > 9999 ||
	    strftime(buf, PDH_STAMP_SIZE, "%m/%d/%Y %H:%M:%S", &tm) != 19)
		return -EINVAL;
	snprintf(buf + 19, PDH_STAMP_SIZE - 19, ".%03u",
		 (unsigned int)(ts->tv_nsec / 1000000) % 1000u);
	return 0;
}

int pdh_filetime_to_timespec(int64_t filetime, struct timespec *ret)
{
	int64_t t;

	if (filetime < PERFLIB_FILETIME_UNIX_EPOCH)
		return -EINVAL;
	t = filetime - PERFLIB_FILETIME_UNIX_EPOCH;
	ret->tv_sec = (time_t)(t / 10000000);
	ret->tv_nsec = (long)(t % 10000000) * 100;
	return 0;
}

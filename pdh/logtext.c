/* SPDX-License-Identifier: MIT */
/* logtext.c - PDH CSV/TSV text for typeperf (tools.md 4.3). See logtext.h. */
#include <errno.h>
#include <string.h>

#include "logtext.h"
#include "stamp.h"

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

int pdh_text_row(FILE *out, enum pdh_text_format fmt, int64_t stamp, const double *values,
		 const bool *valid, size_t nr)
{
	char buf[512];
	size_t i;

	perflib_stamp_format(stamp, buf);
	pdh_text_field(out, buf);
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

/* SPDX-License-Identifier: MIT */
/* logtext.c - PDH CSV/TSV log text (pdh.md 7.2, tools.md 4.3). See logtext.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* the first field's format part, "(PDH-CSV " ... ")" */
static const char *format_tag(enum pdh_text_format fmt)
{
	return fmt == PDH_TEXT_TSV ? "(PDH-TSV " : "(PDH-CSV ";
}

#define PDH_TEXT_VERSION "4.0)"
#define TAG_LEN 9 /* strlen("(PDH-CSV ") */

void pdh_text_zone_local(int64_t t, struct pdh_text_zone *ret)
{
	time_t tt = (time_t)t;
	struct tm tm;

	memset(ret, 0, sizeof(*ret));
	ret->known = true;
	tzset(); /* TZ as it is now: localtime_r reads it only once */
	if (!localtime_r(&tt, &tm)) {
		strcpy(ret->name, "UTC");
		return;
	}
	/* glibc's tm_zone is tzname[tm_isdst] (pdh.md 7.2's port rule) */
	snprintf(ret->name, sizeof(ret->name), "%s",
		 tm.tm_zone && *tm.tm_zone ? tm.tm_zone : tzname[tm.tm_isdst > 0]);
	ret->bias = (int)(-tm.tm_gmtoff / 60);
}

int pdh_text_header(FILE *out, enum pdh_text_format fmt, const struct pdh_text_zone *zone,
		    char *const *paths, size_t nr)
{
	char first[128];
	size_t i;

	if (zone && zone->known)
		snprintf(first, sizeof(first), "%s" PDH_TEXT_VERSION " (%s)(%d)", format_tag(fmt),
			 zone->name, zone->bias);
	else
		snprintf(first, sizeof(first), "%s" PDH_TEXT_VERSION, format_tag(fmt));
	pdh_text_field(out, first);
	for (i = 0; i < nr; i++) {
		putc(separator(fmt), out);
		pdh_text_field(out, paths[i]);
	}
	fputs("\r\n", out);
	return ferror(out) ? -EIO : 0;
}

/* " (<name>)(<bias>)" at @s, the whole rest of the field, into *@ret */
static int parse_zone(const char *s, struct pdh_text_zone *ret)
{
	const char *open, *close;
	char *end;
	long bias;

	if (strncmp(s, " (", 2))
		return -EINVAL;
	s += 2;
	/* the name ends at the last ")(": a name may hold parentheses, a bias does not */
	open = strrchr(s, '(');
	if (!open || open - s < 2 || open[-1] != ')' || open - 1 - s >= (long)sizeof(ret->name))
		return -EINVAL;
	close = open + 1;
	if (!(*close == '-' || (*close >= '0' && *close <= '9')))
		return -EINVAL;
	bias = strtol(close, &end, 10);
	if (end == close || strcmp(end, ")") || bias <= -24 * 60 || bias >= 24 * 60)
		return -EINVAL;
	memcpy(ret->name, s, (size_t)(open - 1 - s));
	ret->name[open - 1 - s] = '\0';
	ret->bias = (int)bias;
	ret->known = true;
	return 0;
}

int pdh_text_header_parse(const char *field, enum pdh_text_format *ret_fmt,
			  struct pdh_text_zone *ret_zone)
{
	struct pdh_text_zone zone = {0};
	enum pdh_text_format fmt;
	const char *p;

	if (!strncmp(field, format_tag(PDH_TEXT_CSV), TAG_LEN))
		fmt = PDH_TEXT_CSV;
	else if (!strncmp(field, format_tag(PDH_TEXT_TSV), TAG_LEN))
		fmt = PDH_TEXT_TSV;
	else
		return -EINVAL;
	/* the version: "4.0" as written, digits and dots as read */
	p = field + TAG_LEN;
	if (!(*p >= '0' && *p <= '9'))
		return -EINVAL;
	p += strspn(p, "0123456789.");
	if (*p++ != ')')
		return -EINVAL;
	if (*p && parse_zone(p, &zone))
		return -EINVAL;
	*ret_fmt = fmt;
	*ret_zone = zone;
	return 0;
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

/* SPDX-License-Identifier: MIT */
/*
 * logtext.h - the text of PDH's CSV/TSV logs (pdh.md 7.2) and of typeperf's output
 * (tools.md 4.3). Every field is wrapped in double quotes (a '"' inside is doubled), fields
 * are separated by ',' (CSV) or TAB (TSV), and every line ends with CRLF.
 *
 *	"(PDH-CSV 4.0) (UTC)(0)","\\HOST\Object(Instance)\Counter",...
 *	"MM/DD/YYYY HH:MM:SS.mmm","12.000000"," ",...
 *
 * The first field names the format and the time zone of the time stamps: its name and its
 * bias, the minutes to add to local time to get UTC (Windows' Bias: 420 for Pacific
 * Daylight Time, -330 for India Standard Time). typeperf's header is the format alone,
 * "(PDH-CSV 4.0)"; a reader takes both. Values have exactly six decimals (printf "%f"); a
 * missing value is " ".
 */
#ifndef PDH_LOGTEXT_H
#define PDH_LOGTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum pdh_text_format {
	PDH_TEXT_CSV,
	PDH_TEXT_TSV,
};

/* A log's time zone, as its header names it: " (<name>)(<bias>)" (pdh.md 7.2). */
struct pdh_text_zone {
	bool known;    /* the header names one (typeperf's does not) */
	int bias;      /* minutes to add to local time to get UTC: -tm_gmtoff / 60 */
	char name[64]; /* "UTC", "CEST", "Pacific Daylight Time": tzname[tm_isdst] here */
};

/*
 * pdh_text_zone_local - this machine's time zone at Unix time @t (TZ, else
 * /etc/localtime): its name tzname[tm_isdst] and bias -tm_gmtoff / 60 (pdh.md 7.2's rule)
 */
void pdh_text_zone_local(int64_t t, struct pdh_text_zone *ret);

/* pdh_text_field - write @s quoted ('"' doubled), without separator */
void pdh_text_field(FILE *out, const char *s);

/*
 * pdh_text_header - the header line: "(PDH-CSV 4.0)" or "(PDH-TSV 4.0)", with
 * " (<name>)(<bias>)" when @zone is known (not NULL), then @paths. Returns 0 or -EIO.
 */
int pdh_text_header(FILE *out, enum pdh_text_format fmt, const struct pdh_text_zone *zone,
		    char *const *paths, size_t nr);

/*
 * pdh_text_header_parse - the first field of a log's header line (quotes removed): the
 * format into *@ret_fmt and the time zone into *@ret_zone (known false for typeperf's
 * "(PDH-CSV 4.0)"). The version is digits and dots; a zone is " (<name>)(<bias>)" with a
 * name of 1 to 63 characters and a bias of less than a day, nothing after it. Returns 0, or
 * -EINVAL for any other field (outputs unchanged).
 */
int pdh_text_header_parse(const char *field, enum pdh_text_format *ret_fmt,
			  struct pdh_text_zone *ret_zone);

/*
 * pdh_text_row - one sample: its time @stamp (a local FILETIME, written by
 * perflib_stamp_format: "MM/DD/YYYY HH:MM:SS.mmm"), then for each column @values[i] when
 * @valid[i], else " ". Returns 0 or -EIO.
 */
int pdh_text_row(FILE *out, enum pdh_text_format fmt, int64_t stamp, const double *values,
		 const bool *valid, size_t nr);

/* pdh_text_value - @v with six decimals into @buf (at least 32 bytes for usual values) */
void pdh_text_value(char *buf, size_t size, double v);

#endif /* PDH_LOGTEXT_H */

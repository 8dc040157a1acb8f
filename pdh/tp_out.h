/* SPDX-License-Identifier: MIT */
/*
 * tp_out.h - typeperf's sample log: the PDH CSV/TSV text of tools.md 4.3. Every field is
 * wrapped in double quotes (a '"' inside is doubled), fields are separated by ',' (CSV)
 * or TAB (TSV), and every line ends with CRLF.
 *
 *	"(PDH-CSV 4.0)","\\HOST\Object(Instance)\Counter",...
 *	"MM/DD/YYYY HH:MM:SS.mmm","12.000000"," ",...
 *
 * Values have exactly six decimals (printf "%f"); a missing value is " ".
 */
#ifndef TP_OUT_H
#define TP_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

enum tp_format {
	TP_FORMAT_CSV,
	TP_FORMAT_TSV,
};

#define TP_STAMP_SIZE 24 /* "MM/DD/YYYY HH:MM:SS.mmm" + NUL */

/* tp_out_field - write @s quoted ('"' doubled), without separator */
void tp_out_field(FILE *out, const char *s);

/*
 * tp_out_header - the header line: "(PDH-CSV 4.0)" or "(PDH-TSV 4.0)", then @paths.
 * Returns 0 or -EIO.
 */
int tp_out_header(FILE *out, enum tp_format fmt, char *const *paths, size_t nr);

/*
 * tp_out_row - one sample: @stamp, then for each column @values[i] when @valid[i], else
 * " ". Returns 0 or -EIO.
 */
int tp_out_row(FILE *out, enum tp_format fmt, const char *stamp, const double *values,
	       const bool *valid, size_t nr);

/* tp_format_value - @v with six decimals into @buf (at least 32 bytes for usual values) */
void tp_format_value(char *buf, size_t size, double v);

/*
 * tp_format_stamp - @ts as local time "MM/DD/YYYY HH:MM:SS.mmm" (24-hour, milliseconds
 * truncated) into @buf. Returns 0, or -EINVAL when the time cannot be converted.
 */
int tp_format_stamp(char buf[TP_STAMP_SIZE], const struct timespec *ts);

/*
 * tp_filetime_to_timespec - a FILETIME (100-ns units since 1601-01-01 UTC, as
 * PERF_DATA_HEADER.PerfTime100NSec) as a Unix time. -EINVAL before 1970.
 */
int tp_filetime_to_timespec(int64_t filetime, struct timespec *ret);

/*
 * tp_parse_interval - "-si [[hh:]mm:]ss" into seconds. Each part is decimal digits;
 * minutes and seconds after a colon must be below 60; the total must be 1 second to one
 * year. -EINVAL otherwise.
 */
int tp_parse_interval(const char *s, unsigned int *ret_seconds);

#endif /* TP_OUT_H */

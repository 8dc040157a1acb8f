/* SPDX-License-Identifier: MIT */
/*
 * stamp.h - time stamps as PDH logs write them, "MM/DD/YYYY HH:MM:SS.mmm" (pdh.md 7.2,
 * tools.md 4.3), and their one reading, shared by the log writer, the log reader and
 * relog's -b/-e. A stamp stands for a local FILETIME (100 ns units since 1601-01-01 00:00,
 * counted in local time, as PdhCollectQueryDataWithTime hands it out): the conversion is
 * calendar arithmetic only, no time zone and no time_t.
 *
 * The rules: the proleptic Gregorian calendar (a year divisible by 4 is a leap year, but
 * not one divisible by 100 unless divisible by 400; each month its own number of days),
 * years 1601 to 9999 (four digits), a 24-hour clock (00:00:00 to 23:59:59, no leap
 * second), milliseconds. Compiled into libperflib and libpdh (hidden in both); relog
 * reaches it through the static library.
 */
#ifndef PERFLIB_STAMP_H
#define PERFLIB_STAMP_H

#include <stdint.h>

#define PERFLIB_STAMP_SIZE 24 /* "MM/DD/YYYY HH:MM:SS.mmm" + NUL */

/* A time broken down: what a stamp spells. */
struct perflib_stamp {
	unsigned int year;   /* 1601..9999 */
	unsigned int month;  /* 1..12 */
	unsigned int day;    /* 1..days of the month */
	unsigned int hour;   /* 0..23 */
	unsigned int minute; /* 0..59 */
	unsigned int second; /* 0..59 */
	unsigned int msec;   /* 0..999 */
};

/*
 * perflib_stamp_split - local FILETIME @ft broken down into *@ret (the fraction below a
 * millisecond dropped). Returns 0, or -ERANGE before 1601 or after 9999 (*@ret unchanged).
 */
int perflib_stamp_split(int64_t ft, struct perflib_stamp *ret);

/*
 * perflib_stamp_join - the local FILETIME @s spells, into *@ret. Returns 0, or -EINVAL
 * when @s names no time (month 13, February 30 or 29 of a common year, hour 24, ...).
 */
int perflib_stamp_join(const struct perflib_stamp *s, int64_t *ret);

/*
 * perflib_stamp_format - @ft as "MM/DD/YYYY HH:MM:SS.mmm" (zero-padded, 24-hour,
 * milliseconds truncated) into @buf. A time outside the years 1601..9999 is written as the
 * nearest end of that range.
 */
void perflib_stamp_format(int64_t ft, char buf[PERFLIB_STAMP_SIZE]);

/*
 * perflib_stamp_parse - the one reading of a time stamp: "M/D/YYYY[ H[:MM[:SS[.mmm]]]]",
 * month, day and hour of one or two digits, minutes and seconds of two, milliseconds of
 * three, the parts left out zero; nothing before or after. What perflib_stamp_format
 * writes is one case (a log record), relog's -b/-e are the others. The local FILETIME into
 * *@ret. Returns 0, or -EINVAL for any other text or a time that does not exist.
 */
int perflib_stamp_parse(const char *s, int64_t *ret);

#endif /* PERFLIB_STAMP_H */

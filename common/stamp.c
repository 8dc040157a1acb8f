/* SPDX-License-Identifier: MIT */
/*
 * stamp.c - time stamps and the calendar under them (see stamp.h). Day numbers count from
 * 1601-01-01, the first day of a 400-year Gregorian cycle (1601..2000), so the cycle
 * arithmetic needs no offset.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "filetime.h"
#include "stamp.h"

#define FT_PER_MSEC 10000LL
#define FT_PER_DAY (86400LL * PERFLIB_FILETIME_PER_SEC)
#define DAYS_400Y 146097 /* 97 leap years in 400 */
#define DAYS_100Y 36524	 /* the first three centuries of a cycle (no leap year at their end) */
#define DAYS_4Y 1461
#define YEAR_MIN 1601
#define YEAR_MAX 9999

static bool leap(unsigned int y)
{
	return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

static unsigned int month_days(unsigned int y, unsigned int m)
{
	static const unsigned char days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};

	return days[m - 1] + (m == 2 && leap(y));
}

/* days from 1601-01-01 to the first of January of year @y (>= 1601) */
static int64_t year_start(unsigned int y)
{
	int64_t n = y - YEAR_MIN; /* whole years before: their leap days follow */

	return 365 * n + n / 4 - n / 100 + n / 400;
}

/* one past the last FILETIME of year 9999 */
static int64_t ft_end(void)
{
	return year_start(YEAR_MAX + 1) * FT_PER_DAY;
}

int perflib_stamp_split(int64_t ft, struct perflib_stamp *ret)
{
	int64_t days, rest, n;
	unsigned int y, m;

	if (ft < 0 || ft >= ft_end())
		return -ERANGE;
	days = ft / FT_PER_DAY;
	rest = ft % FT_PER_DAY / FT_PER_MSEC; /* milliseconds into the day */
	/* whole cycles, centuries (the fourth is a day longer), 4-year groups, years */
	y = YEAR_MIN + 400 * (unsigned int)(days / DAYS_400Y);
	days %= DAYS_400Y;
	n = days / DAYS_100Y < 3 ? days / DAYS_100Y : 3;
	y += 100 * (unsigned int)n;
	days -= n * DAYS_100Y;
	y += 4 * (unsigned int)(days / DAYS_4Y);
	days %= DAYS_4Y;
	n = days / 365 < 3 ? days / 365 : 3; /* the fourth year of a group may have 366 */
	y += (unsigned int)n;
	days -= n * 365;
	for (m = 1; days >= month_days(y, m); m++)
		days -= month_days(y, m);
	ret->year = y;
	ret->month = m;
	ret->day = (unsigned int)days + 1;
	ret->msec = (unsigned int)(rest % 1000);
	rest /= 1000;
	ret->second = (unsigned int)(rest % 60);
	ret->minute = (unsigned int)(rest / 60 % 60);
	ret->hour = (unsigned int)(rest / 3600);
	return 0;
}

int perflib_stamp_join(const struct perflib_stamp *s, int64_t *ret)
{
	int64_t days;
	unsigned int m;

	if (s->year < YEAR_MIN || s->year > YEAR_MAX || s->month < 1 || s->month > 12 ||
	    s->day < 1 || s->day > month_days(s->year, s->month) || s->hour > 23 ||
	    s->minute > 59 || s->second > 59 || s->msec > 999)
		return -EINVAL;
	days = year_start(s->year) + s->day - 1;
	for (m = 1; m < s->month; m++)
		days += month_days(s->year, m);
	*ret = days * FT_PER_DAY +
	       ((int64_t)s->hour * 3600 + s->minute * 60 + s->second) * PERFLIB_FILETIME_PER_SEC +
	       s->msec * FT_PER_MSEC;
	return 0;
}

void perflib_stamp_format(int64_t ft, char buf[PERFLIB_STAMP_SIZE])
{
	struct perflib_stamp s;

	if (ft < 0)
		ft = 0;
	if (ft >= ft_end())
		ft = ft_end() - 1;
	perflib_stamp_split(ft, &s);
	/* every field is in range: exactly 23 characters */
	snprintf(buf, PERFLIB_STAMP_SIZE, "%02u/%02u/%04u %02u:%02u:%02u.%03u", s.month, s.day,
		 s.year, s.hour, s.minute, s.second, s.msec);
}

/* @min to @max decimal digits at *@p into *@ret; false for fewer, or for more */
static bool digits(const char **p, unsigned int min, unsigned int max, unsigned int *ret)
{
	unsigned int n = 0, v = 0;

	while (n < max && **p >= '0' && **p <= '9') {
		v = v * 10 + (unsigned int)(**p - '0');
		(*p)++;
		n++;
	}
	*ret = v;
	return n >= min && !(**p >= '0' && **p <= '9');
}

/* the parts of a stamp in order: each after its separator; the date's three are required */
static const struct {
	char sep;		/* before the part, '\0': none */
	unsigned char min, max; /* its digits */
	unsigned char off;	/* the field of struct perflib_stamp */
} parts[] = {
	{'\0', 1, 2, offsetof(struct perflib_stamp, month)},
	{'/', 1, 2, offsetof(struct perflib_stamp, day)},
	{'/', 4, 4, offsetof(struct perflib_stamp, year)},
	{' ', 1, 2, offsetof(struct perflib_stamp, hour)},
	{':', 2, 2, offsetof(struct perflib_stamp, minute)},
	{':', 2, 2, offsetof(struct perflib_stamp, second)},
	{'.', 3, 3, offsetof(struct perflib_stamp, msec)},
};
#define DATE_PARTS 3

int perflib_stamp_parse(const char *s, int64_t *ret)
{
	struct perflib_stamp t = {0};
	const char *p = s;
	size_t i;

	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		/* a part of the time may be left out, and with it all that follow */
		if (parts[i].sep && *p != parts[i].sep) {
			if (i < DATE_PARTS)
				return -EINVAL;
			break;
		}
		if (parts[i].sep)
			p++;
		if (!digits(&p, parts[i].min, parts[i].max,
			    (unsigned int *)((char *)&t + parts[i].off)))
			return -EINVAL;
	}
	if (*p)
		return -EINVAL; /* trailing text, or a separator without its part */
	return perflib_stamp_join(&t, ret);
}

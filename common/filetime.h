/* SPDX-License-Identifier: MIT */
/*
 * filetime.h - Windows FILETIME (100 ns units since 1601-01-01 UTC) and Unix time: the one
 * epoch constant and the two conversions every module uses (PDH logs, typeperf and relog
 * stamps, the consumer API's PERF_DATA_HEADER times). Header only: nothing exported.
 */
#ifndef PERFLIB_FILETIME_H
#define PERFLIB_FILETIME_H

#include <stdint.h>

#define PERFLIB_FILETIME_PER_SEC 10000000LL		 /* FILETIME units per second */
#define PERFLIB_FILETIME_UNIX_SECS 11644473600LL	 /* seconds from 1601 to 1970 */
#define PERFLIB_FILETIME_UNIX_EPOCH 116444736000000000LL /* 1970-01-01 as a FILETIME */

/* the FILETIME of Unix time @secs + @nsec */
static inline int64_t perflib_filetime_from_unix(int64_t secs, int64_t nsec)
{
	return secs * PERFLIB_FILETIME_PER_SEC + nsec / 100 + PERFLIB_FILETIME_UNIX_EPOCH;
}

/* the Unix second of FILETIME @ft (its fraction dropped) */
static inline int64_t perflib_filetime_to_unix(int64_t ft)
{
	return ft / PERFLIB_FILETIME_PER_SEC - PERFLIB_FILETIME_UNIX_SECS;
}

#endif

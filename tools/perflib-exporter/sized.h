/* SPDX-License-Identifier: MIT */
/*
 * sized.h - the Windows buffer protocol (perflib-api.md 2.9) for the exporter's consumer
 * calls: a call with a too-small buffer fails with ERROR_NOT_ENOUGH_MEMORY and the size
 * needed; the answer may grow before the next call, so the call is made again, with some
 * slack, a bounded number of times.
 */
#ifndef SIZED_H
#define SIZED_H

#include "perflib.h"

/* one sized consumer call of @ctx into @buf of @size bytes: the bytes used or needed */
typedef ULONG (*sized_fn)(void *ctx, void *buf, DWORD size, DWORD *actual);

/*
 * sized_call - @fn(@ctx) into the caller's buffer *@buf of *@cap bytes (NULL and 0 at
 * first), grown (never shrunk, kept for the next call) until the answer fits: *@ret_len
 * bytes. Returns the call's Win32 code; ERROR_OUTOFMEMORY when the buffer cannot grow,
 * ERROR_NOT_ENOUGH_MEMORY when the answer kept growing, ERROR_INVALID_DATA for a size
 * beyond the buffer.
 */
ULONG sized_call(sized_fn fn, void *ctx, void **buf, DWORD *cap, DWORD *ret_len);

/* PerfEnumerateCounterSet on this machine as a sized_fn (@ctx unused), sizes in bytes */
ULONG sized_sets(void *ctx, void *buf, DWORD size, DWORD *actual);

/* PerfQueryCounterSetRegistrationInfo on this machine as a sized_fn, @ctx a struct sized_reg */
struct sized_reg {
	GUID guid;
	PerfRegInfoType code;
	DWORD lang;
};
ULONG sized_reg(void *ctx, void *buf, DWORD size, DWORD *actual);

#endif /* SIZED_H */

/* SPDX-License-Identifier: MIT */
/*
 * pdh_fetch.h - the one implementation of the Windows consumer API's buffer protocol
 * (perflib-api.md 2.9: a call with a too-small buffer fails with ERROR_NOT_ENOUGH_MEMORY
 * and the size needed; the data may grow before the next call, so the call is repeated a
 * bounded number of times with some slack). libpdh uses it for every sized call, and
 * perflib-exporter (linked with libpdh.a) for its own. Not part of the PDH API.
 */
#ifndef PDH_FETCH_H
#define PDH_FETCH_H

#include "perflib.h"

/* one call of a sized consumer function: @buf of @size bytes, the size used or needed */
typedef ULONG (*pdh_fetch_fn)(void *ctx, void *buf, DWORD size, DWORD *actual);

/*
 * pdh_fetch_into - call @fn(@ctx) into the caller's buffer *@buf of *@cap bytes (NULL and
 * 0 the first time), growing it (never shrinking; kept for the next call, also after a
 * failure) until the answer fits: *@ret_size bytes. A buffer that is big enough takes one
 * call. Returns the Win32 code: ERROR_OUTOFMEMORY when the buffer cannot grow,
 * ERROR_NOT_ENOUGH_MEMORY when the data kept growing, ERROR_INVALID_DATA for a size
 * beyond the buffer.
 */
ULONG pdh_fetch_into(pdh_fetch_fn fn, void *ctx, void **buf, DWORD *cap, DWORD *ret_size)
	__attribute__((visibility("hidden")));

/*
 * pdh_fetch - the same into a new malloc'd buffer *@ret (at least 8 bytes, also for an
 * empty answer), freed by the caller; nothing to free on failure
 */
ULONG pdh_fetch(pdh_fetch_fn fn, void *ctx, void **ret, DWORD *ret_size)
	__attribute__((visibility("hidden")));

/* the sized consumer calls as pdh_fetch_fn, on this computer */
struct pdh_reg_call {
	const GUID *guid;
	PerfRegInfoType code;
	const WCHAR *machine; /* the consumer calls' szMachine: NULL for this machine */
};
#define PDH_FETCH_FN(name) ULONG name(void *ctx, void *buf, DWORD size, DWORD *actual)
/* PerfQueryCounterSetRegistrationInfo, @ctx a struct pdh_reg_call */
PDH_FETCH_FN(pdh_call_reg) __attribute__((visibility("hidden")));
/* PerfEnumerateCounterSetInstances of the struct pdh_reg_call's guid */
PDH_FETCH_FN(pdh_call_instances) __attribute__((visibility("hidden")));
/* PerfEnumerateCounterSet (@ctx NULL, or a struct pdh_reg_call for its machine), sizes in bytes */
PDH_FETCH_FN(pdh_call_sets) __attribute__((visibility("hidden")));

#endif /* PDH_FETCH_H */

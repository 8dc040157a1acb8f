/* SPDX-License-Identifier: MIT */
/*
 * remote_client.h - the consumer API on another machine (remote.c): what the API front ends
 * (enumerate.c, reginfo.c, query.c, query_data.c) call when perflib_machine_check names
 * another machine, or a handle is a remote query's. Arguments are checked by the callers
 * as for local calls; each function returns the Win32 code of the call (remote.c's head
 * comment: ERROR_BAD_NETPATH when the machine cannot be reached, ERROR_ACCESS_DENIED when
 * it refuses this client).
 */
#ifndef PERFLIB_REMOTE_CLIENT_H
#define PERFLIB_REMOTE_CLIENT_H

#include "internal.h"

/* PerfEnumerateCounterSet, PerfEnumerateCounterSetInstances, registration info of @host */
ULONG perflib_remote_sets(const char *host, LPGUID ids, DWORD count, LPDWORD ret_count);
ULONG perflib_remote_instances(const char *host, LPCGUID guid, PPERF_INSTANCE_HEADER buf, DWORD cb,
			       LPDWORD ret_cb);
ULONG perflib_remote_reg(const char *host, LPCGUID guid, PerfRegInfoType code, DWORD lang,
			 LPBYTE buf, DWORD cb, LPDWORD ret_cb);

/* a handle of the remote tag (it may still be stale: the functions below check) */
bool perflib_remote_handle(HANDLE h);
/* PerfOpenQueryHandle(@host): the query opened on the server */
ULONG perflib_remote_open(const char *host, HANDLE *ret_query);
/* PerfAddCounters (@add) or PerfDeleteCounters: @blocks already checked by query.c */
ULONG perflib_remote_counters(HANDLE h, PPERF_COUNTER_IDENTIFIER blocks, DWORD cb, bool add);
ULONG perflib_remote_info(HANDLE h, PPERF_COUNTER_IDENTIFIER buf, DWORD cb, LPDWORD ret_cb);
ULONG perflib_remote_data(HANDLE h, PPERF_DATA_HEADER buf, DWORD cb, LPDWORD ret_cb);
ULONG perflib_remote_close(HANDLE h);

#endif /* PERFLIB_REMOTE_CLIENT_H */

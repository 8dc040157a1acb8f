// SPDX-License-Identifier: MIT
/*
 * enumerate.c - the two enumeration functions, front ends of the consumer pipeline:
 * PerfEnumerateCounterSet (the registered counter sets of this machine) and
 * PerfEnumerateCounterSetInstances (the instances a consumer sees: as they stand in the
 * slots, written directly, or aggregated from a snapshot for the aggregate types).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "consumer.h"
#include "remote_client.h"

/* ---- PerfEnumerateCounterSet ------------------------------------------------------------- */

static int cmp_guid(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(GUID));
}

/*
 * does the directory of counter set @guid under the root (open as @root_fd) hold a
 * registration? (relative to the root: the path is not walked from / for every set, through
 * sysfs to the bpffs: 1.3 us instead of 2.8)
 */
static bool registered(int root_fd, const GUID *guid)
{
	char s[37], path[64];
	struct stat st;

	snprintf(path, sizeof(path), "%s/info", perflib_guid_to_string(guid, s));
	return !fstatat(root_fd, path, &st, 0);
}

ULONG PerfEnumerateCounterSet(LPCWSTR szMachine, LPGUID pCounterSetIds, DWORD cCounterSetIds,
			      LPDWORD pcCounterSetIdsActual)
{
	char host[PERFLIB_HOST_MAX + 1];
	GUID *guids = NULL;
	size_t nr = 0, i, n = 0;
	int err, root_fd = -1;
	ULONG ret;

	if (!pcCounterSetIdsActual || (!pCounterSetIds && cCounterSetIds))
		return ERROR_INVALID_PARAMETER;
	err = perflib_machine_check(szMachine, host);
	if (err == 1)
		return perflib_remote_sets(host, pCounterSetIds, cCounterSetIds,
					   pcCounterSetIdsActual);
	if (!err)
		err = perflib_store_list(&guids, &nr);
	if (err)
		return perflib_win32_error(err);
	if (nr) {
		root_fd = open(perflib_root_path(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (root_fd < 0)
			nr = 0; /* the root went after it was listed: nothing is registered */
		qsort(guids, nr, sizeof(*guids), cmp_guid);
	}
	/* sorted, once each, and only directories that hold a registration */
	for (i = 0; i < nr; i++) {
		if (n && !memcmp(&guids[n - 1], &guids[i], sizeof(GUID)))
			continue;
		if (!registered(root_fd, &guids[i]))
			continue;
		guids[n++] = guids[i];
	}
	if (root_fd >= 0)
		close(root_fd);
	if (n > UINT32_MAX) {
		free(guids);
		return ERROR_OUTOFMEMORY;
	}
	ret = perflib_buffer_result((DWORD)n, cCounterSetIds, pcCounterSetIdsActual);
	if (ret == ERROR_SUCCESS && n)
		memcpy(pCounterSetIds, guids, n * sizeof(GUID));
	free(guids);
	return ret;
}

/* ---- PerfEnumerateCounterSetInstances ------------------------------------------------------ */

/* instances as they stand in the slots (single, multiple, multiple + _Total) */
static int enum_direct(const struct perflib_cset *cs, struct perflib_obuf *o)
{
	uint32_t nr;
	int err;

	err = perflib_obuf_direct(cs, NULL, PERFLIB_NO_VALUES, o, &nr);
	if (!err && cs->instance_type == PERF_COUNTERSET_MULTI_AGGREGATE && nr)
		perflib_obuf_instance(o, 0, PERFLIB_TOTAL_NAME, PERFLIB_TOTAL_LEN);
	return err;
}

/* aggregated instances (global aggregate, merged names): from a snapshot */
static int enum_aggregated(const struct perflib_cset *cs, struct perflib_obuf *o)
{
	struct perflib_snap snap;
	size_t i;
	int err;

	memset(&snap, 0, sizeof(snap));
	err = perflib_snap_read(cs, false, &snap);
	if (!err)
		err = perflib_snap_aggregate(cs, &snap, false);
	for (i = 0; !err && i < snap.nr; i++)
		perflib_obuf_snap_instance(o, &snap, &snap.inst[i]);
	perflib_snap_free(&snap);
	return err;
}

ULONG PerfEnumerateCounterSetInstances(LPCWSTR szMachine, LPCGUID pCounterSetId,
				       PPERF_INSTANCE_HEADER pInstances, DWORD cbInstances,
				       LPDWORD pcbInstancesActual)
{
	struct perflib_obuf o = {.p = (uint8_t *)pInstances, .cap = pInstances ? cbInstances : 0};
	WCHAR machine[PERFLIB_MACHINE_MAX + 1];
	char host[PERFLIB_HOST_MAX + 1];
	struct perflib_cset *cs;
	ULONG status = ERROR_SUCCESS;
	size_t machine_bytes;
	int err;

	if (!pCounterSetId || !pcbInstancesActual || (!pInstances && cbInstances))
		return ERROR_INVALID_PARAMETER;
	err = perflib_machine_check(szMachine, host);
	if (err == 1)
		return perflib_remote_instances(host, pCounterSetId, pInstances, cbInstances,
						pcbInstancesActual);
	if (!err)
		err = perflib_cset_get(pCounterSetId, &cs);
	if (err)
		return perflib_win32_error(err);
	/* providers with a ControlCallback learn of the enumeration first and may refuse it */
	machine_bytes = perflib_machine_name(machine, sizeof(machine) / sizeof(machine[0]));
	err = perflib_notify_providers(cs->map, PERF_ENUM_INSTANCES, machine, machine_bytes,
				       &status);
	if (err)
		pr_debug("PERF_ENUM_INSTANCES notification failed: %s\n", strerror(-err));
	if (status != ERROR_SUCCESS) {
		perflib_cset_put(cs);
		return status;
	}
	switch (cs->instance_type) {
	case PERF_COUNTERSET_SINGLE_AGGREGATE:
	case PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY:
	case PERF_COUNTERSET_INSTANCE_AGGREGATE:
		err = enum_aggregated(cs, &o);
		break;
	default:
		err = enum_direct(cs, &o);
		break;
	}
	perflib_cset_put(cs);
	if (err)
		return perflib_win32_error(err);
	return perflib_obuf_result(&o, pcbInstancesActual);
}

// SPDX-License-Identifier: MIT
/*
 * kernel.c - kernel-owned instances as exported API (perflib-linux.h, PERFLIB_1.1): a loader
 * creates the fixed instances of a kernel provider (one per CPU, device, _Total) with
 * PerfCreateInstance and hands them to the kernel, and deletes every kernel-owned instance of
 * a counter set when it unloads, including those its BPF programs created with
 * perflib_instance_create() (perflib_bpf.h). The slot-word transitions themselves are
 * reaper.c's (perflib_instance_to_kernel, perflib_kernel_instances_take).
 */
#include <string.h>

#include "internal.h"

int perflib_kernel_instance_create(HANDLE provider, const GUID *counterset_guid, const WCHAR *name,
				   ULONG id)
{
	PPERF_COUNTERSET_INSTANCE inst;
	uint32_t idx;
	int err;

	err = perflib_instance_create(perflib_provider_lookup(provider), counterset_guid, name, id,
				      &inst, &idx);
	if (err)
		return err;
	err = perflib_instance_to_kernel(provider, inst);
	if (err) {
		PerfDeleteInstance(provider, inst);
		return err;
	}
	return (int)idx;
}

int perflib_kernel_instances_delete(HANDLE provider, const GUID *counterset_guid)
{
	struct perflib_provider *prov = perflib_provider_lookup(provider);
	struct perflib_ctrset *set;
	uint32_t i, c;
	int n;

	if (!prov || !counterset_guid)
		return -EINVAL;
	n = perflib_kernel_instances_take(provider, counterset_guid);
	if (n <= 0)
		return n;
	pthread_mutex_lock(&prov->lock);
	set = perflib_ctrset_find(prov, counterset_guid);
	for (c = 0; set && c < set->nr_classes; c++) {
		for (i = 0; i < perflib_ctrset_slots(set, c); i++) {
			if (atomic_load_explicit(&set->cls[c].owned[i], memory_order_relaxed))
				perflib_instance_retire(set, perflib_slot_id_make(c, i));
		}
	}
	pthread_mutex_unlock(&prov->lock);
	return n;
}

int perflib_kernel_reserve(HANDLE provider, const GUID *counterset_guid, ULONG nr_instances)
{
	struct perflib_provider *prov = perflib_provider_lookup(provider);
	struct perflib_ctrset *set;
	uint32_t want;
	int err = 0;

	if (!prov || !counterset_guid)
		return -EINVAL;
	pthread_mutex_lock(&prov->lock);
	set = perflib_ctrset_find(prov, counterset_guid);
	if (!set) {
		pthread_mutex_unlock(&prov->lock);
		return -ENOENT;
	}
	/* room in class 0: the names programs create (perflib_bpf.h) */
	want = nr_instances < set->cls[0].capacity ? nr_instances : set->cls[0].capacity;
	/* room kept: never retired when the user-space instances in it are deleted */
	err = perflib_store_reserve(set->map, 0, want);
	if (!err)
		err = (int)perflib_ctrset_slots(set, 0);
	pthread_mutex_unlock(&prov->lock);
	return err == -ENOSPC ? -ENOMEM : err;
}

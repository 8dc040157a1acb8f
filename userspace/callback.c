// SPDX-License-Identifier: MIT
/*
 * callback.c - the provider processes of a counter set (the procs map): each counter set a
 * provider registers gets an entry with this process's identity and what consumers may ask
 * of it (ControlCallback, by-reference values), so that consumers find the processes they
 * must notify and skip the dead ones.
 */
#include <string.h>

#include "internal.h"

static bool proc_entry_alive(const struct perflib_proc *e)
{
	return perflib_proc_alive(__atomic_load_n(&e->pid, __ATOMIC_RELAXED),
				  __atomic_load_n(&e->start, __ATOMIC_RELAXED));
}

/* claim a procs entry (free, or left by a dead process) for this process */
static int proc_claim(struct perflib_set_map *map, uint32_t flags)
{
	uint32_t pid, i, nr = map->info->nr_procs;
	uint64_t start, w, nw;

	perflib_self(&pid, &start);
	for (i = 0; i < nr; i++) {
		struct perflib_proc *e = &map->procs[i];

		w = __atomic_load_n((uint64_t *)e, __ATOMIC_ACQUIRE);
		if ((uint32_t)w != PERFLIB_PROC_FREE && proc_entry_alive(e))
			continue;
		/* state stays CLAIMED-like (FREE) until the identity is written: LIVE last */
		nw = (w & 0xFFFFFFFF00000000ULL) + (1ULL << 32) + PERFLIB_PROC_FREE;
		if (!__atomic_compare_exchange_n((uint64_t *)e, &w, nw, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		__atomic_store_n(&e->pid, pid, __ATOMIC_RELAXED);
		__atomic_store_n(&e->start, start, __ATOMIC_RELAXED);
		__atomic_store_n(&e->flags, flags, __ATOMIC_RELAXED);
		__atomic_store_n((uint64_t *)e, nw + (1ULL << 32) + PERFLIB_PROC_LIVE,
				 __ATOMIC_RELEASE);
		return (int)i;
	}
	pr_warn("counter set has no free provider-process entry (%u in use)\n", nr);
	return -ENOSPC;
}

static void proc_release(struct perflib_set_map *map, int i)
{
	struct perflib_proc *e;
	uint64_t w;

	if (i < 0 || (uint32_t)i >= map->info->nr_procs)
		return;
	e = &map->procs[i];
	w = __atomic_load_n((uint64_t *)e, __ATOMIC_ACQUIRE);
	__atomic_store_n((uint64_t *)e, (w & 0xFFFFFFFF00000000ULL) + (1ULL << 32),
			 __ATOMIC_RELEASE);
}

int perflib_cb_provider_started(struct perflib_provider *prov)
{
	(void)prov; /* entries are per counter set: see perflib_cb_ctrset_added */
	return 0;
}

void perflib_cb_ctrset_added(struct perflib_ctrset *set)
{
	uint32_t flags = 0;

	if (set->prov->ctx.ControlCallback)
		flags |= PERFLIB_PROC_CALLBACK;
	if (set->has_byref)
		flags |= PERFLIB_PROC_BYREF;
	set->proc_index = proc_claim(set->map, flags);
	if (set->proc_index < 0)
		set->proc_index = -1;
}

void perflib_cb_provider_stopping(struct perflib_provider *prov)
{
	struct perflib_ctrset *set;

	for (set = atomic_load(&prov->sets); set; set = set->next) {
		proc_release(set->map, set->proc_index);
		set->proc_index = -1;
	}
}

// SPDX-License-Identifier: MIT
/*
 * cb_collect.c - collection requests of the callback service (docs/CALLBACKS.md, "Collect
 * requests"): the by-reference counters of every live instance of the providers of this
 * process are dereferenced here, inside the process, into the instance's slot. Runs on the
 * I/O thread; no user code.
 */
#include <string.h>

#include "cb_svc.h"

/* read through a provider's address: 4 or 8 bytes, atomically when aligned */
static uint64_t ref_load(const void *addr, unsigned int size)
{
	uint64_t v64;
	uint32_t v32;

	if (size == 8) {
		if (!((uintptr_t)addr & 7))
			return __atomic_load_n((const uint64_t *)addr, __ATOMIC_RELAXED);
		memcpy(&v64, addr, 8);
		return v64;
	}
	if (!((uintptr_t)addr & 3))
		return __atomic_load_n((const uint32_t *)addr, __ATOMIC_RELAXED);
	memcpy(&v32, addr, 4);
	return v32;
}

/*
 * Dereference the by-reference counters of every live instance of @set (its provider's lock
 * held, so no instance is created or deleted meanwhile). The private addresses are read,
 * never the copies in the shared slots. Returns the number of instances.
 */
static uint32_t collect_set(struct perflib_ctrset *set)
{
	const struct perflib_info *info = set->map->info;
	uint32_t n = set->nr_counters, words = (n + 63) / 64, i, k, cls, count = 0;
	uint64_t nulls[PERFLIB_MAX_COUNTERS / 64];

	if (!info->ref_offset)
		return 0;
	for (cls = 0; cls < set->nr_classes; cls++) {
		const struct perflib_ctrset_class *cc = &set->cls[cls];
		uint32_t ref_offset = info->classes[cls].ref_offset;

		if (!cc->refs)
			continue;
		for (i = 0; i < perflib_ctrset_slots(set, cls); i++) {
			uint8_t *ref;

			if (!atomic_load_explicit(&cc->owned[i], memory_order_acquire))
				continue;
			ref = perflib_slot(set->map, perflib_slot_id_make(cls, i)) + ref_offset;
			memset(nulls, 0, words * sizeof(nulls[0]));
			for (k = 0; k < n; k++) {
				const struct perflib_counter *c = &set->counters[k];
				void *addr;
				uint64_t v = 0;

				if (!c->byref)
					continue;
				addr = atomic_load_explicit(&cc->refs[(size_t)i * n + c->pos],
							    memory_order_acquire);
				if (addr)
					v = ref_load(addr, c->size == 8 ? 8 : 4);
				else
					nulls[c->pos / 64] |= 1ULL << (c->pos % 64);
				__atomic_store_n((uint64_t *)(ref + 8 * (size_t)c->pos), v,
						 __ATOMIC_RELAXED);
			}
			for (k = 0; k < words; k++)
				__atomic_store_n((uint64_t *)(ref + 8 * (size_t)n) + k, nulls[k],
						 __ATOMIC_RELAXED);
			count++;
		}
	}
	return count;
}

/* a collect request: every provider of this process that registered the counter set */
uint32_t perflib_cb_collect(const GUID *guid)
{
	struct perflib_provider *prov;
	struct perflib_ctrset *set;
	uint32_t count = 0;

	/* the list lock keeps every listed provider and its sets alive */
	perflib_providers_lock();
	for (prov = perflib_providers_first(); prov; prov = prov->next) {
		set = perflib_ctrset_find(prov, guid);
		if (!set || !set->has_byref)
			continue;
		pthread_mutex_lock(&prov->lock);
		count += collect_set(set);
		pthread_mutex_unlock(&prov->lock);
	}
	perflib_providers_unlock();
	return count;
}

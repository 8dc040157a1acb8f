// SPDX-License-Identifier: MIT
/*
 * values.c - the seven value functions: the hot path. No syscall, no lock, no allocation:
 * the instance pointer is checked against this process's own tables (never against
 * anything read from shared memory), the counter id is one table load, then one atomic
 * instruction on the mapped counter.
 */
#include "internal.h"

enum want {
	WANT_DWORD = 4,
	WANT_LARGE = 8,
	WANT_REF = 0,
};

/* the packed descriptor of counter @id (perflib_counter_pack), 0 if there is none */
static inline uint32_t counter_find(const struct perflib_ctrset *set, ULONG id)
{
	uint32_t lo = 0, hi = set->nr_counters;

	if (__builtin_expect(id < set->max_dense_id, 1))
		return set->dense[id];
	/* rare: ids past the dense range, sorted */
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (set->counters[mid].id == id)
			return perflib_counter_pack(&set->counters[mid]);
		if (set->counters[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* the counter's 8-byte slot in @Instance, or NULL with *ret_err set */
static inline __attribute__((always_inline)) uint8_t *
counter_slot(HANDLE Provider, PPERF_COUNTERSET_INSTANCE Instance, ULONG CounterId, enum want want,
	     ULONG *ret_err, const struct perflib_ctrset **ret_set, uint32_t *ret_c,
	     uint32_t *ret_idx)
{
	struct perflib_provider *prov = perflib_provider_get(Provider);
	const struct perflib_ctrset *set;
	uint32_t c, size;
	int64_t idx = -1;

	*ret_err = ERROR_INVALID_PARAMETER;
	if (__builtin_expect(!prov || !Instance, 0))
		return NULL;
	for (set = atomic_load_explicit(&prov->sets, memory_order_acquire); set; set = set->next) {
		/* only the by-reference function needs the slot id */
		if (want != WANT_REF) {
			if (perflib_ctrset_owns(set, Instance))
				break;
			continue;
		}
		idx = perflib_ctrset_instance_index(set, Instance);
		if (idx >= 0)
			break;
	}
	if (__builtin_expect(!set, 0))
		return NULL;
	c = counter_find(set, CounterId);
	if (__builtin_expect(!c, 0)) {
		*ret_err = ERROR_NOT_FOUND;
		return NULL;
	}
	/* by-reference counters take addresses only; by-value ones numbers of their size */
	size = c >> 16;
	if (__builtin_expect(want == WANT_REF ? !(size & 0x100) : size != (uint32_t)want, 0))
		return NULL;
	*ret_set = set;
	*ret_c = c;
	*ret_idx = (uint32_t)idx;
	return (uint8_t *)Instance + (c & 0xFFFF);
}

#define VALUE_FN_PROLOGUE(want)                                                                    \
	const struct perflib_ctrset *set;                                                          \
	uint32_t c;                                                                                \
	uint32_t idx;                                                                              \
	ULONG err;                                                                                 \
	uint8_t *p = counter_slot(Provider, Instance, CounterId, want, &err, &set, &c, &idx);      \
	if (__builtin_expect(!p, 0))                                                               \
		return err;                                                                        \
	(void)set;                                                                                 \
	(void)c;                                                                                   \
	(void)idx

/* the six numeric value functions differ only in value type, size class and operation */
#define VALUE_FN(name, type, want, atomic_op)                                                      \
	ULONG name(HANDLE Provider, PPERF_COUNTERSET_INSTANCE Instance, ULONG CounterId,           \
		   type Value)                                                                     \
	{                                                                                          \
		VALUE_FN_PROLOGUE(want);                                                           \
		atomic_op((type *)p, Value, __ATOMIC_RELAXED);                                     \
		return ERROR_SUCCESS;                                                              \
	}

VALUE_FN(PerfSetULongCounterValue, ULONG, WANT_DWORD, __atomic_store_n)
VALUE_FN(PerfSetULongLongCounterValue, ULONGLONG, WANT_LARGE, __atomic_store_n)
VALUE_FN(PerfIncrementULongCounterValue, ULONG, WANT_DWORD, __atomic_fetch_add)
VALUE_FN(PerfIncrementULongLongCounterValue, ULONGLONG, WANT_LARGE, __atomic_fetch_add)
VALUE_FN(PerfDecrementULongCounterValue, ULONG, WANT_DWORD, __atomic_fetch_sub)
VALUE_FN(PerfDecrementULongLongCounterValue, ULONGLONG, WANT_LARGE, __atomic_fetch_sub)

ULONG PerfSetCounterRefValue(HANDLE Provider, PPERF_COUNTERSET_INSTANCE Instance, ULONG CounterId,
			     PVOID Address)
{
	VALUE_FN_PROLOGUE(WANT_REF);
	/* the private copy is what collection dereferences; the slot shows it as on Windows */
	atomic_store_explicit(perflib_ctrset_refs(set, (uint32_t)idx) +
				      ((c & 0xFFFF) - sizeof(PERF_COUNTERSET_INSTANCE)) / 8,
			      Address, memory_order_release);
	__atomic_store_n((uint64_t *)p, (uint64_t)(uintptr_t)Address, __ATOMIC_RELAXED);
	return ERROR_SUCCESS;
}

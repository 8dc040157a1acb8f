// SPDX-License-Identifier: MIT
/*
 * values.c - the seven value functions: the hot path. No syscall, no lock, no allocation:
 * the instance pointer is checked against this process's own tables (never against
 * anything read from shared memory), the counter id is one table load, then one atomic
 * instruction on the mapped counter.
 */
#include <sched.h>

#include "internal.h"

enum want {
	WANT_DWORD = 4,
	WANT_LARGE = 8,
	WANT_REF = 0,
};

/* the descriptor of counter @id (perflib_counter_pack), 0 if there is none */
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
	uint32_t c, kind;
	int64_t idx = -1;

	*ret_err = ERROR_INVALID_PARAMETER;
	if (__builtin_expect(!prov || !Instance, 0))
		return NULL;
	/* the numeric functions come here from their fast path (VALUE_FN) */
	set = perflib_provider_set_of(prov, Instance, &idx);
	if (__builtin_expect(!set, 0))
		return NULL;
	c = counter_find(set, CounterId);
	if (__builtin_expect(!c, 0)) {
		*ret_err = ERROR_NOT_FOUND;
		return NULL;
	}
	/*
	 * by-reference counters take addresses only; by-value ones numbers of their size, kept
	 * per CPU or not (pcpu_target)
	 */
	kind = perflib_desc_kind(c);
	if (__builtin_expect(want == WANT_REF ? !(kind & PERFLIB_DESC_BYREF)
					      : (kind & ~PERFLIB_DESC_PCPU) != (uint32_t)want,
			     0))
		return NULL;
	*ret_set = set;
	*ret_c = c;
	*ret_idx = (uint32_t)idx;
	return (uint8_t *)Instance + perflib_desc_offset(c);
}

/*
 * Per-CPU counters (PERF_ATTRIB_LINUX_PER_CPU, layout.h): their descriptors fail the fast
 * path's kind check, so every update of one comes through the full path to here, which says
 * where the value function's own atomic operation writes. An increment or decrement goes to
 * the part of the caller's CPU: a relaxed atomic add there costs what an uncontended one
 * costs since that line is the CPU's own (atomic all the same: the thread may move to another
 * CPU between sched_getcpu() and the add; it then adds to the part of a CPU it left, still
 * exact). A set makes base + parts the value: the base becomes value - sum of parts, one
 * store, and increments that land in parts meanwhile count on top of the value set. The last
 * set wins, as on any counter; a CAS would only retry into the same store.
 */
static __attribute__((noinline)) uint8_t *pcpu_target(const struct perflib_ctrset *set, uint8_t *p,
						      uint32_t c, uint32_t idx, bool is_set,
						      uint64_t *value)
{
	uint8_t *slot = p - perflib_desc_offset(c) - PERFLIB_BLOCK_OFFSET;
	uint32_t pos = (perflib_desc_offset(c) - (uint32_t)sizeof(PERF_COUNTERSET_INSTANCE)) / 8;
	uint32_t pc = set->pcpu[pos] - 1u, off = set->cls[perflib_slot_id_class(idx)].pcpu_offset;
	int cpu;

	if (is_set) {
		*value -= perflib_pcpu_sum(slot, off, set->pcpu_lines, set->nr_cpus, pc);
		return p;
	}
	/* glibc reads it from rseq; a CPU past the set's (hotplug) shares another's */
	cpu = sched_getcpu();
	return slot + perflib_pcpu_part(off, set->pcpu_lines,
					cpu < 0 ? 0 : (uint32_t)cpu % set->nr_cpus, pc);
}
/* whether each VALUE_FN sets, by the name of its atomic builtin */
#define PCPU_IS_SET___atomic_store_n true
#define PCPU_IS_SET___atomic_fetch_add false
#define PCPU_IS_SET___atomic_fetch_sub false

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

/*
 * The six numeric value functions differ only in value type, size class and operation.
 * Each is a fast path, for a counter of the dense id range in a class-0 instance of the
 * provider's newest counter set (a provider of one set and short names: every call), that
 * calls nothing and needs few registers, so no stack frame; and the full path for the rest
 * (another class, another set found by address, ids past the dense range, the errors),
 * reached by a tail call. With the lookup of other sets in the function itself, every update
 * paid for its registers (0.3 ns).
 */
#define VALUE_FN(name, type, want, atomic_op)                                                      \
	static __attribute__((noinline)) ULONG name##_full(                                        \
		HANDLE Provider, PPERF_COUNTERSET_INSTANCE Instance, ULONG CounterId, type Value)  \
	{                                                                                          \
		VALUE_FN_PROLOGUE(want);                                                           \
		uint64_t v = Value;                                                                \
		if (__builtin_expect(perflib_desc_kind(c) & PERFLIB_DESC_PCPU, 0))                 \
			p = pcpu_target(set, p, c, idx, PCPU_IS_SET_##atomic_op, &v);              \
		atomic_op((type *)p, (type)v, __ATOMIC_RELAXED);                                   \
		return ERROR_SUCCESS;                                                              \
	}                                                                                          \
	ULONG name(HANDLE Provider, PPERF_COUNTERSET_INSTANCE Instance, ULONG CounterId,           \
		   type Value)                                                                     \
	{                                                                                          \
		struct perflib_provider *prov = perflib_provider_get(Provider);                    \
		const struct perflib_ctrset *set;                                                  \
		uint32_t c;                                                                        \
                                                                                                   \
		if (__builtin_expect(!prov, 0))                                                    \
			return ERROR_INVALID_PARAMETER;                                            \
		set = atomic_load_explicit(&prov->sets, memory_order_acquire);                     \
		/* NULL is past class 0's range as any address before it */                        \
		if (__builtin_expect(set && perflib_ctrset_owns0(set, Instance) &&                 \
					     CounterId < set->max_dense_id,                        \
				     1)) {                                                         \
			c = set->dense[CounterId];                                                 \
			/* a counter of this size, by value */                                     \
			if (__builtin_expect(perflib_desc_kind(c) == (uint32_t)(want), 1)) {       \
				atomic_op((type *)((uint8_t *)Instance + perflib_desc_offset(c)),  \
					  Value, __ATOMIC_RELAXED);                                \
				return ERROR_SUCCESS;                                              \
			}                                                                          \
		}                                                                                  \
		return name##_full(Provider, Instance, CounterId, Value);                          \
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
				      (perflib_desc_offset(c) - sizeof(PERF_COUNTERSET_INSTANCE)) /
					      8,
			      Address, memory_order_release);
	__atomic_store_n((uint64_t *)p, (uint64_t)(uintptr_t)Address, __ATOMIC_RELAXED);
	return ERROR_SUCCESS;
}

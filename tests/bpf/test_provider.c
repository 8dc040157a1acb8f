// SPDX-License-Identifier: MIT
/*
 * test_provider.c - provider.c, instance.c and values.c from the inside: the process-local
 * tables the hot path uses, the slot protocol and index in the maps, the procs entry, the
 * registration made on demand, and what another process sees through the raw pins.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "internal.h"
#include "testlib.h"
#include "../helpers/prov_util.h"

/* the counter set @set of provider @h (internal view) */
static struct perflib_ctrset *ctrset_of(HANDLE h, const GUID *set)
{
	struct perflib_provider *prov = perflib_provider_get(h);

	assert_non_null(prov);
	return perflib_ctrset_find(prov, set);
}

/* the slot that holds instance block @inst */
static uint8_t *slot_of(PPERF_COUNTERSET_INSTANCE inst)
{
	return (uint8_t *)inst - PERFLIB_BLOCK_OFFSET;
}

static void test_counter_tables(void **state)
{
	GUID set = prov_guid(), g = prov_provider_guid();
	struct perflib_ctrset *cs;
	struct prov_tmpl t;
	HANDLE h;
	uint32_t i;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	prov_tmpl_init(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	/* ids out of order, one past the dense range */
	prov_tmpl_add(&t, 30, PERF_COUNTER_COUNTER, 0);
	prov_tmpl_add(&t, 5, PERF_COUNTER_BULK_COUNT, 0);
	prov_tmpl_add(&t, 90000, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE);
	prov_tmpl_add(&t, 0, PERF_COUNTER_NODATA, 0);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	cs = ctrset_of(h, &set);
	assert_non_null(cs);
	assert_int_equal(cs->nr_counters, 4);
	assert_true(cs->has_byref);
	assert_non_null(cs->cls[0].refs);
	/* id 90000 caps the dense table at 4096 entries; it is found by binary search */
	assert_int_equal(cs->max_dense_id, 4096);
	/* sorted by id; offsets follow template positions */
	static const uint32_t ids[] = {0, 5, 30, 90000}, pos[] = {3, 1, 0, 2};
	static const uint8_t size[] = {0, 8, 4, 4}, byref[] = {0, 0, 0, 1};
	for (i = 0; i < 4; i++) {
		assert_int_equal(cs->counters[i].id, ids[i]);
		assert_int_equal(cs->counters[i].pos, pos[i]);
		assert_int_equal(cs->counters[i].offset, 32 + 8 * pos[i]);
		assert_int_equal(cs->counters[i].size, size[i]);
		assert_int_equal(cs->counters[i].byref, byref[i]);
	}
	/* the dense table holds the packed descriptor: offset, size << 16, by-ref << 24 */
	for (i = 0; i < cs->max_dense_id; i++) {
		uint32_t expect = i == 0    ? (32 + 8 * 3)
				  : i == 5  ? (32 + 8 * 1) | 8 << 16
				  : i == 30 ? (32 + 8 * 0) | 4 << 16
					    : 0;

		if (cs->dense[i] != expect)
			fail_msg("dense[%u] = %#x, expected %#x", i, cs->dense[i], expect);
	}
	assert_int_equal(perflib_counter_pack(&cs->counters[3]), (32 + 16) | 4 << 16 | 1 << 24);
	/* the geometry the hot path divides by */
	assert_int_equal(cs->cls[0].slot_size, cs->map->info->slot_size);
	assert_int_equal(cs->cls[0].slot_size % PERFLIB_SLOT_ALIGN, 0);
	assert_ptr_equal(cs->cls[0].base, cs->map->cls[0].data + PERFLIB_BLOCK_OFFSET);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_instance_index(void **state)
{
	PPERF_COUNTERSET_INSTANCE a, b;
	struct perflib_ctrset *cs;
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	cs = ctrset_of(h, &set);
	a = PerfCreateInstance(h, &set, u"a", 0);
	b = PerfCreateInstance(h, &set, u"b", 0);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal((uint8_t *)b - (uint8_t *)a, cs->cls[0].slot_size);
	assert_int_equal(perflib_ctrset_instance_index(cs, a), 0);
	assert_int_equal(perflib_ctrset_instance_index(cs, b), 1);
	/* anything but the exact start of an owned block is refused */
	assert_int_equal(perflib_ctrset_instance_index(cs, (uint8_t *)a + 1), -1);
	assert_int_equal(perflib_ctrset_instance_index(cs, (uint8_t *)a + 8), -1);
	assert_int_equal(perflib_ctrset_instance_index(cs, slot_of(a)), -1);
	assert_int_equal(perflib_ctrset_instance_index(cs, (uint8_t *)a - cs->cls[0].slot_size),
			 -1);
	assert_int_equal(
		perflib_ctrset_instance_index(cs, cs->cls[0].base + 2 * cs->cls[0].slot_size), -1);
	assert_int_equal(
		perflib_ctrset_instance_index(cs, cs->cls[0].base + (size_t)cs->cls[0].capacity *
									    cs->cls[0].slot_size),
		-1);
	assert_int_equal(perflib_ctrset_instance_index(cs, NULL), -1);
	assert_int_equal(PerfDeleteInstance(h, a), ERROR_SUCCESS);
	assert_int_equal(perflib_ctrset_instance_index(cs, a), -1);
	assert_int_equal(perflib_ctrset_instance_index(cs, b), 1);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- many counter sets in one provider: finding an instance's set ------------------------ */

#define MANY_SETS 40

/* every granule a class of @cs may have slots in names @cs in its provider's index */
static void check_gidx(const struct perflib_provider *prov, const struct perflib_ctrset *cs)
{
	for (uint32_t c = 0; c < cs->nr_classes; c++) {
		uintptr_t base = (uintptr_t)cs->cls[c].base;
		uint64_t g = base >> PERFLIB_GIDX_SHIFT,
			 last = (base + cs->cls[c].span - 1) >> PERFLIB_GIDX_SHIFT;

		for (; g <= last; g++) {
			const struct perflib_gidx *e =
				prov->gidx->b[perflib_bucket(g, PERFLIB_GIDX_BITS)];

			while (e && !(e->granule == g && e->set == cs))
				e = e->next;
			if (!e)
				fail_msg("class %u: granule %#llx not in the index", c,
					 (unsigned long long)g);
		}
	}
}

static void test_many_sets(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst[MANY_SETS][2], other;
	GUID sets[MANY_SETS], g = prov_provider_guid(), oset;
	struct perflib_provider *prov;
	ULONG ref_value = 77;
	struct prov_tmpl t;
	HANDLE h, h2;
	int64_t idx = -1;
	unsigned int i, j;

	(void)state;
	/* registrations without the exit reaper: 40 of them in a fraction of a second */
	setenv("PERFLIB_KERNEL_REAPER", "0", 1);
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	prov = perflib_provider_get(h);
	assert_non_null(prov);
	for (i = 0; i < MANY_SETS; i++) {
		/* the index by address comes with the second set (the newest is checked first) */
		if (i == 1)
			assert_null(prov->gidx);
		sets[i] = prov_guid();
		prov_tmpl_init(&t, sets[i], PERF_COUNTERSET_MULTI_INSTANCES);
		prov_tmpl_add(&t, 1, PERF_COUNTER_RAWCOUNT, 0);
		prov_tmpl_add(&t, 2, PERF_COUNTER_BULK_COUNT, 0);
		prov_tmpl_add(&t, 3, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE);
		assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
		/* a short name (class 0) and a long one (the last class: another range) */
		inst[i][0] = PerfCreateInstance(h, &sets[i], u"short", i);
		inst[i][1] = PerfCreateInstance(
			h, &sets[i],
			u"a name long enough for the last size class of the counter set, past 255 "
			u"units: "
			u"0123456789012345678901234567890123456789012345678901234567890123456789"
			u"0123456789012345678901234567890123456789012345678901234567890123456789012"
			u"345"
			u"67890123456789012345678901234567890123456789",
			i);
		assert_non_null(inst[i][0]);
		assert_non_null(inst[i][1]);
	}
	assert_non_null(prov->gidx);
	/* every set found by its GUID (prov->by_guid), a second registration of any refused */
	for (i = 0; i < MANY_SETS; i++) {
		assert_non_null(ctrset_of(h, &sets[i]));
		assert_true(perflib_guid_equal(&ctrset_of(h, &sets[i])->guid, &sets[i]));
		prov_tmpl_init(&t, sets[i], PERF_COUNTERSET_MULTI_INSTANCES);
		prov_tmpl_add(&t, 1, PERF_COUNTER_RAWCOUNT, 0);
		assert_int_equal(prov_tmpl_register(h, &t), ERROR_ALREADY_EXISTS);
	}
	oset = prov_guid();
	assert_null(ctrset_of(h, &oset));
	/* oldest first (the last in the list), then newest: every value function finds its set */
	for (i = 0; i < MANY_SETS; i++) {
		for (j = 0; j < 2; j++) {
			PPERF_COUNTERSET_INSTANCE in = inst[i][j];
			const uint8_t *ctr = (const uint8_t *)(in + 1);

			assert_int_equal(PerfSetULongCounterValue(h, in, 1, 10 + i), ERROR_SUCCESS);
			assert_int_equal(PerfIncrementULongCounterValue(h, in, 1, 2),
					 ERROR_SUCCESS);
			assert_int_equal(PerfDecrementULongCounterValue(h, in, 1, 1),
					 ERROR_SUCCESS);
			assert_int_equal(*(const ULONG *)ctr, 11 + i);
			assert_int_equal(PerfSetULongLongCounterValue(h, in, 2, 1000ull + i),
					 ERROR_SUCCESS);
			assert_int_equal(PerfIncrementULongLongCounterValue(h, in, 2, 5),
					 ERROR_SUCCESS);
			assert_int_equal(PerfDecrementULongLongCounterValue(h, in, 2, 3),
					 ERROR_SUCCESS);
			assert_int_equal(*(const ULONGLONG *)(ctr + 8), 1002ull + i);
			assert_int_equal(PerfSetCounterRefValue(h, in, 3, &ref_value),
					 ERROR_SUCCESS);
			/* the wrong size for a counter is still refused */
			assert_int_equal(PerfSetULongLongCounterValue(h, in, 1, 1),
					 ERROR_INVALID_PARAMETER);
			assert_int_equal(PerfSetULongCounterValue(h, in, 9, 1), ERROR_NOT_FOUND);
			assert_ptr_equal(perflib_provider_set_of(prov, in, &idx),
					 ctrset_of(h, &sets[i]));
			assert_int_equal(idx,
					 perflib_ctrset_instance_index(ctrset_of(h, &sets[i]), in));
			/* the long name is in the set's last class, the short one in class 0 */
			assert_int_equal(perflib_slot_id_class((uint32_t)idx),
					 j ? ctrset_of(h, &sets[i])->nr_classes - 1 : 0);
			/* anything but a block's start is no instance of any set */
			assert_int_equal(
				PerfSetULongCounterValue(h, (void *)((uint8_t *)in + 8), 1, 1),
				ERROR_INVALID_PARAMETER);
			assert_null(perflib_provider_set_of(prov, (uint8_t *)in + 16, &idx));
		}
		check_gidx(prov, ctrset_of(h, &sets[i]));
	}
	/* another provider's instance is not this one's, in either direction */
	assert_int_equal(PerfStartProvider(&g, NULL, &h2), ERROR_SUCCESS);
	prov_tmpl_init(&t, oset, PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(&t, 1, PERF_COUNTER_RAWCOUNT, 0);
	assert_int_equal(prov_tmpl_register(h2, &t), ERROR_SUCCESS);
	other = PerfCreateInstance(h2, &oset, u"other", 0);
	assert_non_null(other);
	assert_int_equal(PerfSetULongCounterValue(h, other, 1, 1), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfDeleteInstance(h, other), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfSetULongCounterValue(h2, inst[0][0], 1, 1), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfStopProvider(h2), ERROR_SUCCESS);
	/* a deleted instance of the oldest set is gone for the value functions */
	assert_int_equal(PerfDeleteInstance(h, inst[0][0]), ERROR_SUCCESS);
	assert_int_equal(PerfSetULongCounterValue(h, inst[0][0], 1, 1), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfDeleteInstance(h, inst[0][0]), ERROR_INVALID_PARAMETER);
	assert_int_equal(PerfSetULongCounterValue(h, inst[0][1], 1, 5), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	/* a stopped provider's handle finds nothing */
	assert_int_equal(PerfSetULongCounterValue(h, inst[1][0], 1, 1), ERROR_INVALID_PARAMETER);
	unsetenv("PERFLIB_KERNEL_REAPER");
	for (i = 0; i < MANY_SETS; i++)
		assert_int_equal(perflib_unregister_counterset(&sets[i], true), 0);
	assert_int_equal(perflib_unregister_counterset(&oset, true), 0);
}

/* the slot word, owner, index key and zeroing through a create/delete cycle */
static void test_slot_protocol(void **state)
{
	struct perflib_index_key key;
	struct perflib_index_val val;
	struct perflib_slot_hdr *hdr;
	struct perflib_ctrset *cs;
	PPERF_COUNTERSET_INSTANCE inst;
	uint64_t w, start;
	uint32_t gen, i;
	uint8_t *slot;
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(perflib_proc_start_time(getpid(), &start), 0);
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	cs = ctrset_of(h, &set);
	inst = PerfCreateInstance(h, &set, u"proto", 9);
	assert_non_null(inst);
	slot = slot_of(inst);
	hdr = (void *)slot;
	w = perflib_slot_word(slot);
	assert_int_equal(perflib_word_state(w), PERFLIB_SLOT_LIVE);
	assert_int_equal(perflib_word_pid(w), getpid());
	assert_int_equal(hdr->owner_start, start);
	gen = perflib_word_gen(w);
	/* the name is indexed, pointing at this slot and its claim */
	perflib_index_key(u"proto", 5, 9, &key);
	assert_int_equal(perflib_index_lookup(cs->map, 0, &key, &val), 0);
	assert_int_equal(val.slot, 0);
	assert_int_equal(val.gen, gen - 1);
	/* ASCII rendering for bpftool */
	assert_string_equal((char *)slot + cs->map->info->ascii_offset, "proto");
	assert_int_equal(PerfSetULongCounterValue(h, inst, PROV_STD_DWORD, 5), 0);

	assert_int_equal(PerfDeleteInstance(h, inst), ERROR_SUCCESS);
	w = perflib_slot_word(slot);
	assert_int_equal(perflib_word_state(w), PERFLIB_SLOT_FREE);
	assert_int_equal(perflib_word_pid(w), 0);
	assert_true(perflib_word_gen(w) > gen);
	assert_int_equal(hdr->owner_start, 0);
	assert_int_not_equal(perflib_index_lookup(cs->map, 0, &key, &val), 0);
	/* a free slot shows nothing of its last instance */
	for (i = PERFLIB_BLOCK_OFFSET; i < cs->cls[0].slot_size; i++)
		assert_int_equal(slot[i], 0);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* the ASCII copy of the name bpftool prints: '?' for what is not printable ASCII, 63 bytes */
static void test_ascii_name(void **state)
{
	PPERF_COUNTERSET_INSTANCE a, b;
	struct perflib_ctrset *cs;
	WCHAR longname[101];
	char expect[64];
	GUID set;
	HANDLE h;
	int i;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	cs = ctrset_of(h, &set);
	a = PerfCreateInstance(h, &set, u"caf\u00e9 \U0001F600\t!", 0);
	assert_non_null(a);
	/* é is one unit, the emoji two (a surrogate pair), the tab is not printable */
	assert_string_equal((char *)slot_of(a) + cs->map->info->ascii_offset, "caf? \?\?\?!");
	for (i = 0; i < 100; i++)
		longname[i] = (WCHAR)(u'A' + i % 26);
	longname[100] = 0;
	b = PerfCreateInstance(h, &set, longname, 0);
	assert_non_null(b);
	for (i = 0; i < 63; i++)
		expect[i] = (char)('A' + i % 26);
	expect[63] = 0;
	/* a 100-unit name lives in a larger size class, with its own ASCII field */
	assert_string_equal(
		(char *)slot_of(b) +
			cs->map->info->classes[perflib_info_class_of(cs->map->info, 100)]
				.ascii_offset,
		expect);
	/* the UTF-16 name itself is complete */
	assert_memory_equal((BYTE *)b + b->InstanceNameOffset, longname, sizeof(longname));
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* instances are found by name + id through the index, even when the names hash alike */
static void test_index_key(void **state)
{
	struct perflib_index_key a, b;

	(void)state;
	perflib_index_key(u"abc", 3, 1, &a);
	perflib_index_key(u"abc", 3, 1, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(a.id, 1);
	perflib_index_key(u"abd", 3, 1, &b);
	assert_memory_not_equal(&a.hash, &b.hash, sizeof(a.hash));
	perflib_index_key(u"abc", 3, 2, &b);
	assert_int_not_equal(a.id, b.id);
	perflib_index_key(u"ABC", 3, 1, &b);
	assert_memory_not_equal(&a.hash, &b.hash, sizeof(a.hash));
	/* the length is part of the key: a name and the same name with a NUL unit differ */
	perflib_index_key(u"abc\0", 4, 1, &b);
	assert_int_not_equal(a.check, b.check);
	perflib_index_key(u"", 0, 0, &b);
	perflib_index_key(u"", 0, 0, &a);
	assert_memory_equal(&a, &b, sizeof(a));
}

/*
 * the owner summary of procs entry @p (layout.h): a create marks its slot's bitmap word and
 * the summary word in the entry's summary head, a delete clears both once the provider holds
 * nothing else there
 */
static void owner_summary_marks(HANDLE h, const GUID *set, struct perflib_store *ro, uint32_t p)
{
	PPERF_COUNTERSET_INSTANCE a, b;
	struct perflib_ctrset *cs = ctrset_of(h, set);
	uint32_t ia, ib, seg0 = ro->cls[0].seg0, nr_procs = ro->info->nr_procs;
	uint64_t *sum = perflib_seg_at(&ro->cls[0], 0)->live + perflib_sum_word(0, seg0, p, 0);
	uint64_t *head =
		perflib_seg_at(&ro->cls[0], 0)->live + perflib_sum_head(0, seg0, nr_procs, p);

	assert_int_equal(perflib_seg_sum_words(0, seg0), (perflib_seg_words(0, seg0) + 63) / 64);
	assert_int_equal(perflib_sum_head_span(0, seg0), 1);
	/*
	 * the heads follow every entry's summaries, segment 0's index table follows the heads,
	 * the procs entries follow the table, the pending words follow the entries, the
	 * control word is last
	 */
	assert_int_equal(perflib_sum_head(0, seg0, nr_procs, 0),
			 perflib_seg_words(0, seg0) + nr_procs * perflib_seg_sum_words(0, seg0));
	assert_int_equal(perflib_idx_word(0, seg0, nr_procs),
			 perflib_sum_head(0, seg0, nr_procs, nr_procs - 1) + 1);
	assert_int_equal(perflib_procs_word(seg0, nr_procs, 0),
			 perflib_idx_word(0, seg0, nr_procs) + perflib_idx_words(0, seg0));
	assert_int_equal(perflib_pending_word(seg0, nr_procs, 0),
			 perflib_procs_word(seg0, nr_procs, nr_procs - 1) + PERFLIB_PROC_WORDS);
	assert_int_equal(perflib_live0_words(seg0, nr_procs),
			 perflib_ctl_word(seg0, nr_procs) + PERFLIB_CTL_WORDS);
	/* with the default 64 entries and segment 0's table (2 KiB at most), two pages */
	if (nr_procs == PERFLIB_PROCS_DEFAULT)
		assert_true(perflib_live0_words(seg0, nr_procs) * 8 <= 8192);
	assert_int_equal(*sum, 0); /* nothing held */
	assert_int_equal(*head, 0);
	a = PerfCreateInstance(h, set, u"sum-a", 1);
	b = PerfCreateInstance(h, set, u"sum-b", 2);
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(perflib_instance_lookup(cs->prov, a, &ia));
	assert_non_null(perflib_instance_lookup(cs->prov, b, &ib));
	assert_int_equal(ia / 64, ib / 64); /* one bitmap word, in segment 0 */
	assert_int_equal(*sum, 1ULL << (ia / 64));
	assert_int_equal(*head, 1); /* summary word 0 */
	/* another entry's summary is not ours */
	if (p + 1 < nr_procs) {
		assert_int_equal(
			perflib_seg_at(&ro->cls[0], 0)->live[perflib_sum_word(0, seg0, p + 1, 0)],
			0);
		assert_int_equal(perflib_seg_at(&ro->cls[0], 0)
					 ->live[perflib_sum_head(0, seg0, nr_procs, p + 1)],
				 0);
	}
	assert_int_equal(PerfDeleteInstance(h, a), ERROR_SUCCESS);
	assert_int_equal(*sum, 1ULL << (ib / 64)); /* b is still there */
	assert_int_equal(*head, 1);
	assert_int_equal(PerfDeleteInstance(h, b), ERROR_SUCCESS);
	assert_int_equal(*sum, 0);
	assert_int_equal(*head, 0);
	/* bits left by a dead holder of the entry go with the stop (and a FREE claim) */
	*(uint64_t *)(perflib_seg_at(&cs->map->cls[0], 0)->live + perflib_sum_word(0, seg0, p, 0)) =
		0x5;
	*(uint64_t *)(perflib_seg_at(&cs->map->cls[0], 0)->live +
		      perflib_sum_head(0, seg0, nr_procs, p)) = 0x3;
	assert_int_equal(*sum, 0x5);
	assert_int_equal(*head, 0x3);
}

static void test_procs_entry(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst;
	struct perflib_store *ro;
	struct perflib_ctrset *cs;
	struct perflib_proc *e;
	uint32_t gen;
	int idx;
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	cs = ctrset_of(h, &set);
	idx = cs->proc_index;
	assert_true(idx >= 0);
	/*
	 * the procs entries, the pending words and the control word are in class 0's s0/live,
	 * after the summary heads and segment 0's index table (fork() walks every mapping: no
	 * map of their own); a reader's view
	 */
	assert_ptr_equal(cs->map->procs,
			 (struct perflib_proc *)(perflib_seg_at(&cs->map->cls[0], 0)->live +
						 perflib_seg_map_words(0, cs->map->cls[0].seg0,
								       cs->map->info->nr_procs)));
	assert_ptr_equal(cs->map->pending, (uint64_t *)(cs->map->procs + cs->map->info->nr_procs));
	assert_ptr_equal(cs->map->ctl, cs->map->pending + cs->map->info->nr_procs);
	assert_non_null(cs->map->ctl);
	assert_int_equal(cs->map->ctl->magic, PERFLIB_CTL_MAGIC);
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	assert_non_null(ro->procs);
	e = &ro->procs[idx];
	assert_int_equal(e->state, PERFLIB_PROC_LIVE);
	assert_int_equal(e->pid, getpid());
	/* the standard set has a by-reference counter; no ControlCallback here */
	assert_int_equal(e->flags, PERFLIB_PROC_BYREF);
	assert_int_equal(ro->pending[idx], 0);
	/* a delete names the slot it frees in its pending word, then clears it */
	inst = PerfCreateInstance(h, &set, u"pending", 1);
	assert_non_null(inst);
	cs->map->pending[idx] = 0x77; /* as a provider killed mid-delete leaves it */
	assert_int_equal(ro->pending[idx], 0x77);
	assert_int_equal(PerfDeleteInstance(h, inst), ERROR_SUCCESS);
	assert_int_equal(ro->pending[idx], 0);
	owner_summary_marks(h, &set, ro, (uint32_t)idx);
	assert_int_equal(e->state, PERFLIB_PROC_LIVE);
	gen = e->gen;
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	/* released on stop, with the next generation, its summaries cleared */
	assert_int_equal(e->state, PERFLIB_PROC_FREE);
	assert_int_equal(e->gen, gen + 1);
	assert_int_equal(perflib_seg_at(&ro->cls[0], 0)
				 ->live[perflib_sum_word(0, ro->cls[0].seg0, (uint32_t)idx, 0)],
			 0);
	assert_int_equal(perflib_seg_at(&ro->cls[0], 0)
				 ->live[perflib_sum_head(0, ro->cls[0].seg0, ro->info->nr_procs,
							 (uint32_t)idx)],
			 0);
	perflib_store_close(ro);
}

/*
 * The procs entries are words of class 0's s0/live (layout version 8), which every process
 * that maps the set maps: no procs pin, no mapping or fd of their own. A provider's stop
 * releases its entry there, and leaves alone a set that was removed and registered again
 * meanwhile (another map, whose entries are not that provider's, even when its process
 * holds the same entry there through another provider).
 */
static void test_procs_in_live(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 8];
	struct perflib_ctrset *ca, *cb;
	struct perflib_store *ro;
	struct perflib_proc *e;
	uint64_t *live;
	HANDLE a, b;
	GUID set;

	(void)state;
	assert_int_equal(prov_std_start(&a, &set), ERROR_SUCCESS);
	ca = ctrset_of(a, &set);
	assert_true(ca->proc_index >= 0);
	assert_int_equal(perflib_store_dir(&set, dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/procs", dir);
	assert_int_equal(access(path, F_OK), -1);
	/* the entry is in the provider's own s0/live mapping, where layout.h puts it */
	live = perflib_seg_at(&ca->map->cls[0], 0)->live;
	assert_ptr_equal(
		&ca->map->procs[ca->proc_index],
		(struct perflib_proc *)(live + perflib_procs_word(ca->map->cls[0].seg0,
								  ca->map->info->nr_procs,
								  (uint32_t)ca->proc_index)));
	/* a plain stop: the entry is released, as a reader of the set sees */
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	e = &ro->procs[ca->proc_index];
	assert_int_equal(e->state, PERFLIB_PROC_LIVE);
	assert_int_equal(e->pid, (uint32_t)getpid());
	assert_int_equal(PerfStopProvider(a), ERROR_SUCCESS);
	assert_int_equal(e->state, PERFLIB_PROC_FREE);
	perflib_store_close(ro);

	/* removed under a running provider, registered again, the same entry taken there */
	assert_int_equal(prov_std_provide(&set, &a), ERROR_SUCCESS);
	ca = ctrset_of(a, &set);
	assert_int_equal(perflib_unregister_counterset(&set, true), 0);
	assert_int_equal(prov_std_provide(&set, &b), ERROR_SUCCESS);
	cb = ctrset_of(b, &set);
	assert_int_equal(cb->proc_index, ca->proc_index);
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	e = &ro->procs[cb->proc_index];
	assert_int_equal(e->state, PERFLIB_PROC_LIVE);
	assert_int_equal(e->pid, (uint32_t)getpid());
	assert_int_equal(PerfStopProvider(a), ERROR_SUCCESS);
	assert_int_equal(e->state, PERFLIB_PROC_LIVE); /* b's, in the new set */
	assert_int_equal(PerfStopProvider(b), ERROR_SUCCESS);
	assert_int_equal(e->state, PERFLIB_PROC_FREE);
	perflib_store_close(ro);
	assert_int_equal(perflib_unregister_counterset(&set, true), 0);
}

static ULONG CALLBACK noop_callback(ULONG code, PVOID buf, ULONG size)
{
	(void)code;
	(void)buf;
	(void)size;
	return 0;
}

static void test_procs_callback_flag(void **state)
{
	GUID set = prov_guid(), g = prov_provider_guid();
	struct perflib_store *ro;
	struct perflib_ctrset *cs;
	struct prov_tmpl t;
	HANDLE h;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, noop_callback, &h), ERROR_SUCCESS);
	prov_tmpl_init(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(&t, 1, PERF_COUNTER_COUNTER, 0);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	cs = ctrset_of(h, &set);
	assert_true(cs->proc_index >= 0);
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	assert_int_equal(ro->procs[cs->proc_index].flags, PERFLIB_PROC_CALLBACK);
	perflib_store_close(ro);
	assert_false(cs->has_byref);
	assert_null(cs->cls[0].refs);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* by-reference addresses: the private table the collector dereferences */
static void test_refs_private(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst;
	struct perflib_ctrset *cs;
	ULONGLONG x = 1;
	GUID set;
	HANDLE h;
	size_t k;

	(void)state;
	assert_int_equal(perflib_set_capacity(1, 0), 0);
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	assert_int_equal(perflib_set_capacity(PROV_CAPACITY_DEFAULT, 0), 0);
	cs = ctrset_of(h, &set);
	inst = PerfCreateInstance(h, &set, u"r", 0);
	assert_non_null(inst);
	assert_int_equal(PerfSetCounterRefValue(h, inst, PROV_STD_REF, &x), 0);
	k = 0 * cs->nr_counters + 2; /* slot 0, template position 2 */
	assert_ptr_equal(cs->cls[0].refs[k], &x);
	assert_int_equal(PerfDeleteInstance(h, inst), 0);
	/* the next instance in the same slot starts without an address */
	inst = PerfCreateInstance(h, &set, u"r2", 0);
	assert_non_null(inst);
	assert_null(cs->cls[0].refs[k]);
	assert_null(*(void **)prov_slot(inst, 2));
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* the registration PerfSetCounterSetInfo pins when no lodctr registration exists */
static void test_on_demand_registration(void **state)
{
	GUID set = prov_guid(), g = prov_provider_guid(), other = prov_guid();
	const struct perflib_info_counter *c;
	struct perflib_store *ro;
	char dir[PATH_MAX], path[PATH_MAX + 8];
	struct prov_tmpl t;
	struct stat st;
	HANDLE h;

	(void)state;
	assert_int_equal(PerfStartProvider(&g, NULL, &h), ERROR_SUCCESS);
	prov_tmpl_init(&t, set, PERF_COUNTERSET_MULTI_AGGREGATE);
	t.set.ProviderGuid = other;
	prov_tmpl_add(&t, 1, PERF_RAW_FRACTION, 0);
	prov_tmpl_add(&t, 2, PERF_RAW_BASE, 0);
	prov_tmpl_add(&t, 3, PERF_COUNTER_COUNTER, PERF_ATTRIB_NO_DISPLAYABLE);
	t.c[2].Scale = -2;
	t.c[2].DetailLevel = PERF_DETAIL_ADVANCED;
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	assert_false(ro->writable);
	assert_int_equal(ro->info->flags, 0);
	assert_memory_equal(ro->info->provider_guid, &other, 16);
	assert_memory_equal(ro->info->counterset_guid, &set, 16);
	assert_int_equal(ro->info->instance_type, PERF_COUNTERSET_MULTI_AGGREGATE);
	assert_int_equal(ro->info->nr_counters, 3);
	assert_int_equal(ro->info->capacity, PROV_CAPACITY_DEFAULT);
	assert_int_equal(ro->info->name_max, PERFLIB_NAME_MAX_DEFAULT);
	assert_int_equal(ro->info->counterset_name, PERFLIB_STR_NONE);
	c = ro->counters;
	assert_int_equal(c[0].type, PERF_RAW_FRACTION);
	/* without a manifest the base of a fraction is the counter after it */
	assert_int_equal(c[0].base_id, 2);
	assert_int_equal(c[1].base_id, 0xFFFFFFFF);
	assert_int_equal(c[2].base_id, 0xFFFFFFFF);
	assert_int_equal(c[2].attrib, PERF_ATTRIB_NO_DISPLAYABLE);
	assert_int_equal(c[2].scale, -2);
	assert_int_equal(c[2].detail_level, PERF_DETAIL_ADVANCED);
	assert_int_equal(c[2].name, PERFLIB_STR_NONE);
	perflib_store_close(ro);
	/* default pin mode 0640 */
	assert_int_equal(perflib_store_dir(&set, dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/s0/data", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- what another process sees through the raw pins ------------------------------------ */

#define VIS_INCREMENTS 200000

struct vis_arg {
	GUID set;
	pid_t parent;
	int ready_w, done_r;
};

#define CHILD_CHECK(cond, code)                                                                    \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "child: check failed: %s\n", #cond);                       \
			return code;                                                               \
		}                                                                                  \
	} while (0)

/*
 * A consumer written against bpf/layout.h and libbpf only. It checks the layout through a
 * BPF_F_RDONLY fd (syscall reads: what a reader with read permission only can do), then
 * follows the counter live through a PROT_READ mapping. That mapping needs an fd opened
 * read-write: the kernel refuses to mmap a BPF_F_RDONLY fd at all (EINVAL).
 */
static int vis_child(void *p)
{
	LIBBPF_OPTS(bpf_obj_get_opts, ro, .file_flags = BPF_F_RDONLY);
	const struct vis_arg *a = p;
	char dir[PATH_MAX], path[PATH_MAX + 8], gs[37];
	struct bpf_map_info mi;
	__u32 len = sizeof(mi), key = 0;
	struct perflib_info *info;
	const PERF_COUNTERSET_INSTANCE *blk;
	const uint8_t *data;
	uint8_t *slot;
	uint64_t last = 0, now;
	int info_fd, data_fd, rw_fd;
	uint32_t i, live = 0, live_i = 0;
	size_t data_len;

	snprintf(dir, sizeof(dir), "%s/%s", getenv("PERFLIB_ROOT"),
		 perflib_guid_to_string(&a->set, gs));
	snprintf(path, sizeof(path), "%s/info", dir);
	info_fd = bpf_obj_get_opts(path, &ro);
	CHILD_CHECK(info_fd >= 0, 2);
	memset(&mi, 0, sizeof(mi));
	CHILD_CHECK(bpf_obj_get_info_by_fd(info_fd, &mi, &len) == 0, 3);
	info = calloc(1, mi.value_size);
	CHILD_CHECK(info && bpf_map_lookup_elem(info_fd, &key, info) == 0, 4);
	CHILD_CHECK(info->magic == PERFLIB_INFO_MAGIC, 5);
	snprintf(path, sizeof(path), "%s/s0/data", dir);
	data_fd = bpf_obj_get_opts(path, &ro);
	CHILD_CHECK(data_fd >= 0, 6);
	data_len = (size_t)info->seg0_slots * info->slot_size; /* segment 0 */
	/* a read-only fd is never mapped for writing */
	CHILD_CHECK(mmap(NULL, data_len, PROT_READ | PROT_WRITE, MAP_SHARED, data_fd, 0) ==
			    MAP_FAILED,
		    7);
	slot = malloc(info->slot_size);
	CHILD_CHECK(slot, 8);
	for (i = 0; i < info->seg0_slots; i++) {
		CHILD_CHECK(bpf_map_lookup_elem(data_fd, &i, slot) == 0, 9);
		if ((*(uint32_t *)slot & PERFLIB_SLOT_STATE_MASK) == PERFLIB_SLOT_LIVE) {
			live++;
			live_i = i;
		}
	}
	CHILD_CHECK(live == 1, 10);
	CHILD_CHECK(bpf_map_lookup_elem(data_fd, &live_i, slot) == 0, 11);
	CHILD_CHECK(((struct perflib_slot_hdr *)slot)->owner_pid == (uint32_t)a->parent, 12);
	blk = (const void *)(slot + PERFLIB_BLOCK_OFFSET);
	CHILD_CHECK(!memcmp(&blk->CounterSetGuid, &a->set, sizeof(GUID)), 13);
	CHILD_CHECK(blk->InstanceId == 42, 14);
	CHILD_CHECK(blk->InstanceNameOffset == 32 + 8 * info->nr_counters, 15);
	CHILD_CHECK(blk->InstanceNameSize == sizeof(u"Worker 1"), 16);
	CHILD_CHECK(blk->dwSize == (32 + 8 * info->nr_counters + sizeof(u"Worker 1") + 7) / 8 * 8,
		    17);
	/* the Windows name offset and the layout's name offset are the same bytes */
	CHILD_CHECK(PERFLIB_BLOCK_OFFSET + blk->InstanceNameOffset == info->name_offset, 18);
	CHILD_CHECK(!memcmp(slot + info->name_offset, u"Worker 1", sizeof(u"Worker 1")), 19);
	CHILD_CHECK(!strcmp((const char *)slot + info->ascii_offset, "Worker 1"), 20);
	CHILD_CHECK(*(const uint32_t *)(slot + PERFLIB_COUNTERS_OFFSET) == 7, 21);
	CHILD_CHECK(*(const uint32_t *)(slot + PERFLIB_COUNTERS_OFFSET + 24) == 0xC0FFEE, 22);

	/* the live view: read-write fd, read-only mapping */
	rw_fd = bpf_obj_get(path);
	CHILD_CHECK(rw_fd >= 0, 23);
	data = mmap(NULL, data_len, PROT_READ, MAP_SHARED, rw_fd, 0);
	CHILD_CHECK(data != MAP_FAILED, 24);
	data += (size_t)live_i * info->slot_size;
	CHILD_CHECK(!memcmp(data, slot, PERFLIB_COUNTERS_OFFSET), 25);
	if (tl_signal(a->ready_w))
		return 26;
	/* values move while the parent increments, never backwards */
	do {
		now = __atomic_load_n((const uint64_t *)(data + PERFLIB_COUNTERS_OFFSET + 8),
				      __ATOMIC_RELAXED);
		CHILD_CHECK(now >= last, 27);
		last = now;
	} while (tl_await(a->done_r, 0));
	now = __atomic_load_n((const uint64_t *)(data + PERFLIB_COUNTERS_OFFSET + 8),
			      __ATOMIC_RELAXED);
	if (now != VIS_INCREMENTS) {
		fprintf(stderr, "child: final value %llu, expected %d\n", (unsigned long long)now,
			VIS_INCREMENTS);
		return 28;
	}
	/* and the syscall view agrees */
	CHILD_CHECK(bpf_map_lookup_elem(data_fd, &live_i, slot) == 0, 29);
	CHILD_CHECK(*(const uint64_t *)(slot + PERFLIB_COUNTERS_OFFSET + 8) == VIS_INCREMENTS, 30);
	free(slot);
	free(info);
	return 0;
}

static void test_visible_to_other_process(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst;
	int ready[2], done[2], i;
	struct vis_arg a;
	GUID set;
	HANDLE h;
	pid_t pid;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	inst = PerfCreateInstance(h, &set, u"Worker 1", 42);
	assert_non_null(inst);
	assert_int_equal(PerfSetULongCounterValue(h, inst, PROV_STD_DWORD, 7), 0);
	assert_int_equal(PerfSetULongCounterValue(h, inst, PROV_STD_DWORD2, 0xC0FFEE), 0);
	assert_int_equal(tl_pipe(ready), 0);
	assert_int_equal(tl_pipe(done), 0);
	a = (struct vis_arg){set, getpid(), ready[1], done[0]};
	pid = tl_fork(vis_child, &a);
	assert_true(pid > 0);
	if (tl_await(ready[0], 10000)) {
		/* the child failed before it was ready: its exit code says where */
		assert_int_equal(tl_wait(pid, 10000), 0);
		fail_msg("child never got ready");
	}
	for (i = 0; i < VIS_INCREMENTS; i++)
		assert_int_equal(PerfIncrementULongLongCounterValue(h, inst, PROV_STD_LARGE, 1), 0);
	assert_int_equal(tl_signal(done[1]), 0);
	assert_int_equal(tl_wait(pid, 10000), 0);
	close(ready[0]);
	close(ready[1]);
	close(done[0]);
	close(done[1]);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* a read-only opener of the same process sees publish and delete at once */
static void test_visible_states(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst;
	struct perflib_store *ro;
	const uint8_t *rslot;
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	rslot = perflib_slot(ro, 0);
	assert_int_equal(perflib_word_state(perflib_slot_word(rslot)), PERFLIB_SLOT_FREE);
	inst = PerfCreateInstance(h, &set, u"seen", 1);
	assert_non_null(inst);
	assert_int_equal(perflib_word_state(perflib_slot_word(rslot)), PERFLIB_SLOT_LIVE);
	assert_int_equal(PerfSetULongLongCounterValue(h, inst, PROV_STD_LARGE, 123456789), 0);
	assert_int_equal(*(const uint64_t *)(rslot + PERFLIB_COUNTERS_OFFSET + 8), 123456789);
	assert_int_equal(PerfDeleteInstance(h, inst), 0);
	assert_int_equal(perflib_word_state(perflib_slot_word(rslot)), PERFLIB_SLOT_FREE);
	assert_int_equal(*(const uint64_t *)(rslot + PERFLIB_COUNTERS_OFFSET + 8), 0);
	perflib_store_close(ro);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counter_tables),
		cmocka_unit_test(test_instance_index),
		cmocka_unit_test(test_many_sets),
		cmocka_unit_test(test_slot_protocol),
		cmocka_unit_test(test_ascii_name),
		cmocka_unit_test(test_index_key),
		cmocka_unit_test(test_procs_entry),
		cmocka_unit_test(test_procs_in_live),
		cmocka_unit_test(test_procs_callback_flag),
		cmocka_unit_test(test_refs_private),
		cmocka_unit_test(test_on_demand_registration),
		cmocka_unit_test(test_visible_to_other_process),
		cmocka_unit_test(test_visible_states),
	};

	tl_require_bpf();
	return cmocka_run_group_tests_name("provider", tests, tl_group_setup, tl_group_teardown);
}

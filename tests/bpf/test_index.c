// SPDX-License-Identifier: MIT
/*
 * test_index.c - the index tables (layout.h, userspace/instance.c): every group leader's
 * live map holds its group's keys and no other segment has one; each live instance is found
 * under its key and named by one current entry; a duplicate held by another leader is
 * refused; stale, corrupted and colliding entries never refuse a create, and stale ones are
 * cleared by the create that meets them; a key whose two buckets are full of current
 * entries is refused with ERROR_NOT_ENOUGH_MEMORY and the set keeps working.
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
#include <unistd.h>

#include "testlib.h"
#include "internal.h"
#include "../helpers/prov_util.h"

#define NR_INST 2000 /* small names: segment 0 of 64 slots, so segments 0..12 */

/* start a provider on a fresh small-name set holding @n instances "k<i>", id i */
static void fill(HANDLE *ret_h, GUID *ret_set, PPERF_COUNTERSET_INSTANCE *inst, int n)
{
	WCHAR name[32];
	int i;

	assert_int_equal(perflib_set_capacity(0, 33), 0);
	assert_int_equal(prov_std_start(ret_h, ret_set), 0);
	for (i = 0; i < n; i++) {
		inst[i] = PerfCreateInstance(*ret_h, ret_set, prov_wname(name, 32, "k%d", i),
					     (ULONG)i);
		assert_non_null(inst[i]);
	}
	assert_int_equal(perflib_set_capacity(0, PERFLIB_NAME_MAX_DEFAULT), 0);
}

static struct perflib_store *provider_map(HANDLE h, const GUID *set)
{
	struct perflib_provider *prov = perflib_provider_lookup(h);
	struct perflib_ctrset *cs;

	assert_non_null(prov);
	cs = perflib_ctrset_find(prov, set);
	assert_non_null(cs);
	return cs->map;
}

static void stop(HANDLE h, const GUID *set)
{
	assert_int_equal(PerfStopProvider(h), 0);
	assert_int_equal(perflib_store_remove(set), 0);
}

/* the key of "k<i>", id @id */
static void key_of(uint32_t i, ULONG id, struct perflib_index_key *key)
{
	WCHAR name[32];

	prov_wname(name, 32, "k%u", i);
	perflib_index_key(name, perflib_wcsnlen(name, 32), id, key);
}

static void test_tables(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst[NR_INST];
	char dir[PATH_MAX], path[PATH_MAX + 32];
	struct perflib_index_key key;
	struct perflib_index_val val;
	struct perflib_store *map;
	uint32_t k, n, b, j, leaders = 0, entries = 0;
	uint64_t nb, *t;
	HANDLE h;
	GUID set;
	int i;

	(void)state;
	fill(&h, &set, inst, NR_INST);
	map = provider_map(h, &set);
	assert_int_equal(perflib_store_dir(&set, dir, sizeof(dir)), 0);
	/* no index maps, no idxs outer map, no keys program: the tables are in the lives */
	snprintf(path, sizeof(path), "%s/idxs", dir);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/keys", dir);
	assert_int_equal(access(path, F_OK), -1);
	n = perflib_store_nr_segs(map, 0);
	assert_true(n >= 9); /* leaders 0, 1, 4, 8, ... */
	for (k = 0; k < n; k++) {
		snprintf(path, sizeof(path), "%s/s%u/index", dir, k);
		assert_int_equal(access(path, F_OK), -1);
		t = perflib_idx_table(map, 0, k, &nb);
		if (!perflib_idx_leads(k)) {
			assert_null(t);
			assert_int_equal(nb, 0);
			continue;
		}
		leaders++;
		assert_non_null(t);
		/* 16 bytes per slot of the group, after the heads, inside the mapping */
		assert_int_equal(nb * PERFLIB_IDX_BUCKET * 8,
				 (perflib_idx_entries(k, map->cls[0].seg0) + 7) / 8 * 128);
		assert_true((perflib_idx_word(k, map->cls[0].seg0, map->info->nr_procs) +
			     nb * PERFLIB_IDX_BUCKET) *
				    8 <=
			    perflib_seg_at(&map->cls[0], k)->live_map);
		/* every entry of leader k names a slot of its group */
		for (b = 0; b < nb; b++) {
			for (j = 0; j < PERFLIB_IDX_BUCKET; j++) {
				uint64_t e = t[b * PERFLIB_IDX_BUCKET + j];

				if (!e)
					continue;
				entries++;
				assert_int_equal(
					perflib_idx_of(perflib_idx_entry_slot(e), map->cls[0].seg0),
					k);
			}
		}
	}
	for (k = 0, j = 0; k < n; k++)
		j += perflib_idx_leads(k);
	assert_int_equal(leaders, j);
	assert_true(leaders >= 4);
	/* one entry per live instance, each current */
	assert_int_equal(entries, NR_INST);
	assert_int_equal(perflib_index_count(map), NR_INST);
	for (i = 0; i < NR_INST; i += 7) {
		key_of((uint32_t)i, (ULONG)i, &key);
		assert_int_equal(perflib_index_lookup(map, 0, &key, &val), 0);
		assert_ptr_equal(perflib_slot(map, val.slot) + PERFLIB_BLOCK_OFFSET,
				 (uint8_t *)inst[i]);
		/* the same name with another id is another key */
		key_of((uint32_t)i, (ULONG)i + 1, &key);
		assert_int_equal(perflib_index_lookup(map, 0, &key, &val), -ENOENT);
	}
	/* deletes remove their entries */
	for (i = 0; i < NR_INST; i += 2)
		assert_int_equal(PerfDeleteInstance(h, inst[i]), ERROR_SUCCESS);
	assert_int_equal(perflib_index_count(map), NR_INST / 2);
	key_of(0, 0, &key);
	assert_int_equal(perflib_index_lookup(map, 0, &key, &val), -ENOENT);
	stop(h, &set);
}

/* "k0" lives in segment 0; a second "k0" (id 0) claims a slot in a later segment */
static void test_duplicate_across_leaders(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst[NR_INST], dup;
	HANDLE h;
	GUID set;

	(void)state;
	fill(&h, &set, inst, NR_INST);
	dup = PerfCreateInstance(h, &set, u"k0", 0);
	assert_null(dup);
	assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	/* a key of segment 4's group, refused from wherever the claim lands */
	dup = PerfCreateInstance(h, &set, u"k1999", 1999);
	assert_null(dup);
	assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	/* nothing left behind: the same name with another id is fine, and k0 is still there */
	dup = PerfCreateInstance(h, &set, u"k0", 77);
	assert_non_null(dup);
	assert_ptr_equal(PerfQueryInstance(h, &set, u"k0", 0), inst[0]);
	assert_int_equal(PerfDeleteInstance(h, dup), 0);
	assert_int_equal(perflib_index_count(provider_map(h, &set)), NR_INST);
	stop(h, &set);
}

/*
 * a provider of @n instances (fill), and the key of "k<i>", id i, with its place in the
 * table of leader 0 (its words in *ret_t): the provider's map
 */
static struct perflib_store *fill_place(HANDLE *h, GUID *set, PPERF_COUNTERSET_INSTANCE *inst,
					int n, uint32_t i, struct perflib_index_key *key,
					struct perflib_idx_place *p, uint64_t **ret_t)
{
	struct perflib_store *map;
	uint64_t nb;

	fill(h, set, inst, n);
	map = provider_map(*h, set);
	key_of(i, i, key);
	*ret_t = perflib_idx_table(map, 0, 0, &nb);
	assert_non_null(*ret_t);
	perflib_idx_place(key, nb, p);
	return map;
}

/*
 * Entries that do not hold a key never refuse it: stale ones (their slot FREE, or claimed
 * again since), one naming a live slot of another name under the key's tag (a collision),
 * one naming a slot past the set (corrupted). The create clears the stale ones it meets.
 */
static void test_stale_and_bogus_entries(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst[4], made;
	struct perflib_index_key key;
	struct perflib_idx_place p;
	struct perflib_store *map;
	uint64_t *t, stale, old, bogus, coll, w;
	uint32_t b1, s;
	HANDLE h;
	GUID set;

	(void)state;
	map = fill_place(&h, &set, inst, 4, 100, &key, &p, &t);
	b1 = p.b[1] * PERFLIB_IDX_BUCKET;
	/* the last slot of segment 0 is FREE: an entry for it at its generation is stale */
	s = map->cls[0].seg0 - 1;
	w = perflib_slot_word(perflib_slot_map(map, s));
	assert_int_equal(perflib_word_state(w), PERFLIB_SLOT_FREE);
	stale = perflib_idx_entry(p.tag, perflib_word_gen(w), s);
	/* a live slot (k1's) at its claim's generation: current, another name */
	w = perflib_slot_word(perflib_slot(map, 1));
	coll = perflib_idx_entry(p.tag, perflib_word_gen(w) - 1, 1);
	/* k0's slot one claim ago: stale */
	w = perflib_slot_word(perflib_slot(map, 0));
	old = perflib_idx_entry(p.tag, perflib_word_gen(w) - 3, 0);
	bogus = perflib_idx_entry(p.tag, 0, 0x0FFFFFF0);
	t[p.b[0] * PERFLIB_IDX_BUCKET + 3] = stale;
	t[b1 + 5] = coll;
	t[b1 + 6] = old;
	t[b1 + 7] = bogus;
	made = PerfCreateInstance(h, &set, u"k100", 100);
	assert_non_null(made);
	/* met and cleared: the stale ones; left: the current collision and the corrupted one */
	assert_int_equal(t[p.b[0] * PERFLIB_IDX_BUCKET + 3], 0);
	assert_int_equal(t[b1 + 6], 0);
	assert_int_equal(t[b1 + 5], coll);
	assert_int_equal(t[b1 + 7], bogus);
	/* a second one is refused (the real entry), and k1 is unharmed */
	assert_null(PerfCreateInstance(h, &set, u"k100", 100));
	assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	assert_ptr_equal(PerfQueryInstance(h, &set, u"k1", 1), inst[1]);
	t[b1 + 5] = t[b1 + 7] = 0;
	assert_int_equal(perflib_index_count(map), 5);
	stop(h, &set);
}

/*
 * Both buckets of a key full: of stale entries, the create clears them and goes in; of
 * current ones (other slots' claims), it is refused with ERROR_NOT_ENOUGH_MEMORY, nothing
 * is left claimed, and the set works on.
 */
static void test_full_buckets(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst[40], made;
	struct perflib_index_key key;
	struct perflib_idx_place p;
	struct perflib_store *map;
	uint64_t *t, saved[2 * PERFLIB_IDX_BUCKET], w;
	uint32_t j, s;
	HANDLE h;
	GUID set;
	int b;

	(void)state;
	map = fill_place(&h, &set, inst, 40, 500, &key, &p, &t);
	assert_int_not_equal(p.b[0], p.b[1]);
	/* stale: the live slots 4..35 two claims ago */
	for (b = 0; b < 2; b++) {
		for (j = 0; j < PERFLIB_IDX_BUCKET; j++) {
			s = 4 + (uint32_t)b * PERFLIB_IDX_BUCKET + j;
			w = perflib_slot_word(perflib_slot(map, s));
			saved[b * PERFLIB_IDX_BUCKET + j] = t[p.b[b] * PERFLIB_IDX_BUCKET + j];
			t[p.b[b] * PERFLIB_IDX_BUCKET + j] =
				perflib_idx_entry(p.tag ^ 1, perflib_word_gen(w) - 3, s);
		}
	}
	made = PerfCreateInstance(h, &set, u"k500", 500);
	assert_non_null(made);
	assert_int_equal(PerfDeleteInstance(h, made), ERROR_SUCCESS);
	/* current: the claims of the 32 live slots 4..35 (another tag: no match) */
	for (b = 0; b < 2; b++) {
		for (j = 0; j < PERFLIB_IDX_BUCKET; j++) {
			s = 4 + (uint32_t)b * PERFLIB_IDX_BUCKET + j;
			w = perflib_slot_word(perflib_slot(map, s));
			assert_int_equal(perflib_word_state(w), PERFLIB_SLOT_LIVE);
			t[p.b[b] * PERFLIB_IDX_BUCKET + j] =
				perflib_idx_entry(p.tag ^ 1, perflib_word_gen(w) - 1, s);
		}
	}
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &set, u"k500", 500));
	assert_int_equal(GetLastError(), ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(perflib_index_put(map, 50, 0, &key), -ENOSPC);
	/* other names go on */
	made = PerfCreateInstance(h, &set, u"k501", 501);
	assert_non_null(made);
	/* their own entries back: the key goes in again */
	for (b = 0; b < 2; b++) {
		for (j = 0; j < PERFLIB_IDX_BUCKET; j++)
			t[p.b[b] * PERFLIB_IDX_BUCKET + j] = saved[b * PERFLIB_IDX_BUCKET + j];
	}
	assert_non_null(PerfCreateInstance(h, &set, u"k500", 500));
	assert_int_equal(perflib_index_count(map), 42);
	stop(h, &set);
}

/* a table's geometry: buckets, places and entries as layout.h defines them */
static void test_layout(void **state)
{
	struct perflib_index_key key;
	struct perflib_idx_place p;
	uint64_t e;
	uint32_t k, i, seen0 = 0, seen1 = 0;

	(void)state;
	/* leaders: a bucket of 16 entries for every 8 slots of the group; others none */
	assert_int_equal(perflib_idx_buckets(0, 128), 16);
	assert_int_equal(perflib_idx_buckets(1, 128), 48);
	assert_int_equal(perflib_idx_buckets(4, 128), 128);
	assert_int_equal(perflib_idx_buckets(2, 128), 0);
	assert_int_equal(perflib_idx_buckets(5, 128), 0);
	assert_int_equal(perflib_idx_buckets(0, 4), 1);
	for (k = 0; k < PERFLIB_MAX_SEGS; k++)
		assert_int_equal(perflib_idx_words(k, 64), perflib_idx_buckets(k, 64) * 16);
	/* the n-th leader, as BPF programs count them, is perflib_idx_next's n-th step */
	for (i = 0, k = 0; k < PERFLIB_MAX_SEGS; i++, k = perflib_idx_next(k)) {
		assert_true(perflib_idx_leads(k));
		assert_int_equal(perflib_idx_leader_nr(i), k);
	}
	assert_int_equal(i, PERFLIB_IDX_LEADERS);
	/* BPF programs' form of a leader's table agrees with the general one */
	for (i = 1; i <= 4096; i *= 2) {
		for (k = 0; k < PERFLIB_MAX_SEGS; k = perflib_idx_next(k)) {
			uint32_t base, procs;

			for (procs = 1; procs <= 256; procs *= 4) {
				assert_int_equal(perflib_idx_leader_table(k, i, procs, &base),
						 perflib_idx_buckets(k, i));
				assert_int_equal(base, perflib_idx_word(k, i, procs));
			}
		}
	}
	/* the table after the heads; class 0's procs after s0's table */
	assert_int_equal(perflib_idx_word(0, 128, 64), perflib_seg_live_words(0, 128, 64));
	assert_int_equal(perflib_procs_word(128, 64, 0),
			 perflib_seg_live_words(0, 128, 64) + perflib_idx_words(0, 128));
	/* entries: slot + 1 (0 is empty), 8 bits of generation, 24 of tag */
	e = perflib_idx_entry(0xABCDEF, 0x3FFFFFF1, 0);
	assert_int_not_equal(e, 0);
	assert_int_equal(perflib_idx_entry_slot(e), 0);
	assert_int_equal(perflib_idx_entry_tag(e), 0xABCDEF);
	assert_int_equal(perflib_idx_entry_gen(e), 0xF1);
	assert_int_equal(perflib_idx_entry_slot(0), 0xFFFFFFFF);
	/* current: claimed at its generation, or published at the next (mod 256) */
	assert_true(perflib_idx_current(e, perflib_make_word(PERFLIB_SLOT_CLAIMED, 0x3FFFFFF1, 9)));
	assert_true(perflib_idx_current(e, perflib_make_word(PERFLIB_SLOT_LIVE, 0x3FFFFFF2, 9)));
	assert_false(
		perflib_idx_current(e, perflib_make_word(PERFLIB_SLOT_CLAIMED, 0x3FFFFFF3, 9)));
	assert_false(perflib_idx_current(e, perflib_make_word(PERFLIB_SLOT_FREE, 0x3FFFFFF2, 0)));
	assert_false(perflib_idx_current(e, perflib_make_word(PERFLIB_SLOT_LIVE, 0x3FFFFFF1, 9)));
	/* places: two distinct buckets in range; one bucket when the table has one */
	for (i = 0; i < 1000; i++) {
		key_of(i, i % 7, &key);
		perflib_idx_place(&key, 48, &p);
		assert_true(p.b[0] < 48 && p.b[1] < 48);
		assert_int_not_equal(p.b[0], p.b[1]);
		assert_true(p.tag < (1u << 24));
		seen0 |= 1u << (p.b[0] % 32);
		seen1 |= 1u << (p.b[1] % 32);
		perflib_idx_place(&key, 1, &p);
		assert_int_equal(p.b[0], 0);
		assert_int_equal(p.b[1], 0);
	}
	/* spread over the buckets */
	assert_int_equal(seen0, 0xFFFFFFFF);
	assert_int_equal(seen1, 0xFFFFFFFF);
	/* one name with many ids is spread too */
	key_of(1, 1, &key);
	perflib_idx_place(&key, 1 << 20, &p);
	e = p.b[0];
	key_of(1, 2, &key);
	perflib_idx_place(&key, 1 << 20, &p);
	assert_int_not_equal(e, p.b[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_duplicate_across_leaders),
		cmocka_unit_test(test_stale_and_bogus_entries),
		cmocka_unit_test(test_full_buckets),
	};

	tl_require_bpf();
	return cmocka_run_group_tests_name("index", tests, tl_group_setup, tl_group_teardown);
}

// SPDX-License-Identifier: MIT
/*
 * test_keys.c - the <set>/keys program (bpf/keys.bpf.c, userspace/keys.c): pinned with a
 * set created on demand, it names exactly the segments whose index holds a key; creates
 * refuse a duplicate held in another segment with it, without it (PERFLIB_KEYS_PROG=0), and
 * when it cannot run (then the library stops using it).
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

#include <bpf/bpf.h>

#include "testlib.h"
#include "internal.h"
#include "../helpers/prov_util.h"

#define NR_INST 2000 /* small names: segment 0 of 256 slots, so segments 0..5 */

/* start a provider on a fresh small-name set holding NR_INST instances "k<i>", id i */
static void fill(HANDLE *ret_h, GUID *ret_set, PPERF_COUNTERSET_INSTANCE *inst)
{
	WCHAR name[32];
	int i;

	assert_int_equal(perflib_set_capacity(0, 33), 0);
	assert_int_equal(prov_std_start(ret_h, ret_set), 0);
	for (i = 0; i < NR_INST; i++) {
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

static void test_where(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst[NR_INST];
	struct perflib_index_key key, next;
	struct perflib_store *map;
	char dir[PATH_MAX], path[PATH_MAX + 32];
	uint32_t k, n, found = 0, leaders = 0, inner_id;
	uint64_t mask;
	HANDLE h;
	GUID set;

	(void)state;
	fill(&h, &set, inst);
	map = provider_map(h, &set);
	assert_int_equal(perflib_store_dir(&set, dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/keys", dir);
	assert_int_equal(access(path, F_OK), 0);
	assert_true(map->keys_fd >= 0);
	n = perflib_store_nr_segs(map, 0);
	assert_true(n >= 4);
	assert_true(n >= 6); /* two octaves: leaders 0, 1 and 4 */
	for (k = 0; k < n; k++) {
		/* keys are held by leaders only (segments 0, 1, 4, 8, ...), each its group's */
		if (!perflib_idx_leads(k)) {
			/* the others have no index at all: no pin, no idxs entry */
			assert_int_equal(map->cls[0].segs[k].index_fd, -1);
			snprintf(path, sizeof(path), "%s/s%u/index", dir, k);
			assert_int_equal(access(path, F_OK), -1);
			snprintf(path, sizeof(path), "%s/s%u/data", dir, k);
			assert_int_equal(access(path, F_OK), 0);
			assert_true(perflib_store_outer_fd(map, 0, PERFLIB_SEG_INDEX) >= 0);
			assert_int_not_equal(bpf_map_lookup_elem(perflib_store_outer_fd(
									 map, 0, PERFLIB_SEG_INDEX),
								 &k, &inner_id),
					     0);
			assert_int_equal(bpf_map_lookup_elem(
						 perflib_store_outer_fd(map, 0, PERFLIB_SEG_DATA),
						 &k, &inner_id),
					 0);
			continue;
		}
		leaders++;
		assert_int_equal(bpf_map_get_next_key(map->cls[0].segs[k].index_fd, NULL, &key), 0);
		found++;
		/* a key really held by leader k's index: named by k's bit alone */
		assert_int_equal(perflib_keys_where(map, 0, &key, n, PERFLIB_MAX_SEGS, &mask), 0);
		assert_int_equal(mask, 1ULL << k);
		/* the caller's own segment is skipped */
		assert_int_equal(perflib_keys_where(map, 0, &key, n, k, &mask), 0);
		assert_int_equal(mask, 0);
		/* segments past nr_segs are not looked at */
		assert_int_equal(perflib_keys_where(map, 0, &key, k, PERFLIB_MAX_SEGS, &mask), 0);
		assert_int_equal(mask, 0);
		/* a key nobody holds */
		next = key;
		next.hash ^= 0x5a5a5a5a5a5a5a5aULL;
		assert_int_equal(perflib_keys_where(map, 0, &next, n, PERFLIB_MAX_SEGS, &mask), 0);
		assert_int_equal(mask, 0);
	}
	assert_int_equal(found, leaders);
	assert_true(found >= 3);
	/* garbage in nr_segs is bounded */
	assert_int_equal(perflib_keys_where(map, 0, &key, 0xFFFFFFFF, PERFLIB_MAX_SEGS, &mask), 0);
	assert_int_equal(PerfStopProvider(h), 0);
	assert_int_equal(perflib_store_remove(&set), 0);
}

/* "k0" lives in segment 0; a second "k0" (id 0) claims a slot in a later segment */
static void refuse_duplicate(HANDLE h, const GUID *set, PPERF_COUNTERSET_INSTANCE *inst)
{
	PPERF_COUNTERSET_INSTANCE dup;

	dup = PerfCreateInstance(h, set, u"k0", 0);
	assert_null(dup);
	assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	/* nothing left behind: the same name with another id is fine, and k0 is still there */
	dup = PerfCreateInstance(h, set, u"k0", 77);
	assert_non_null(dup);
	assert_ptr_equal(PerfQueryInstance(h, set, u"k0", 0), inst[0]);
	assert_int_equal(PerfDeleteInstance(h, dup), 0);
}

static void test_duplicate_with_program(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst[NR_INST];
	HANDLE h;
	GUID set;

	(void)state;
	fill(&h, &set, inst);
	assert_true(provider_map(h, &set)->keys_fd >= 0);
	refuse_duplicate(h, &set, inst);
	assert_int_equal(PerfStopProvider(h), 0);
	assert_int_equal(perflib_store_remove(&set), 0);
}

static void test_duplicate_without_program(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst[NR_INST];
	char dir[PATH_MAX], path[PATH_MAX + 32];
	HANDLE h;
	GUID set;

	(void)state;
	setenv("PERFLIB_KEYS_PROG", "0", 1);
	fill(&h, &set, inst);
	unsetenv("PERFLIB_KEYS_PROG");
	/* neither loaded nor used */
	assert_int_equal(perflib_store_dir(&set, dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/keys", dir);
	assert_int_not_equal(access(path, F_OK), 0);
	assert_int_equal(provider_map(h, &set)->keys_fd, -1);
	refuse_duplicate(h, &set, inst);
	assert_int_equal(PerfStopProvider(h), 0);
	assert_int_equal(perflib_store_remove(&set), 0);
}

static void test_program_cannot_run(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst[NR_INST];
	struct perflib_store *map;
	HANDLE h;
	GUID set;
	int fd;

	(void)state;
	fill(&h, &set, inst);
	map = provider_map(h, &set);
	assert_true(map->keys_fd >= 0);
	/* something that is not a program where the program should be: the run fails */
	fd = dup(map->cls[0].segs[0].index_fd);
	assert_true(fd >= 0);
	close(map->keys_fd);
	map->keys_fd = fd;
	refuse_duplicate(h, &set, inst);
	/* given up after the failure: the lookups one by one from then on */
	assert_int_equal(map->keys_fd, -1);
	refuse_duplicate(h, &set, inst);
	assert_int_equal(PerfStopProvider(h), 0);
	assert_int_equal(perflib_store_remove(&set), 0);
}

/*
 * A provider opens the keys program when a class first has a second segment: a set that
 * fits in segment 0 costs it no fd for it (each fd costs every fork()), and its creates no
 * program run (their own segment is the only one to look in)
 */
static void test_opened_when_needed(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	PPERF_COUNTERSET_INSTANCE a, dup, grown, *held;
	struct perflib_store *map;
	WCHAR name[32];
	uint32_t i, seg0;
	HANDLE h;
	GUID set;

	(void)state;
	assert_int_equal(perflib_set_capacity(0, 33), 0);
	assert_int_equal(prov_std_start(&h, &set), 0);
	assert_int_equal(perflib_set_capacity(0, PERFLIB_NAME_MAX_DEFAULT), 0);
	map = provider_map(h, &set);
	seg0 = map->cls[0].seg0;
	/* not loaded before a class has a second segment: 4 KiB of kernel memory per set */
	assert_int_equal(perflib_store_dir(&set, dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/keys", dir);
	assert_int_equal(access(path, F_OK), -1);
	a = PerfCreateInstance(h, &set, u"k0", 0);
	assert_non_null(a);
	/* a duplicate in segment 0 alone is its index's to refuse */
	dup = PerfCreateInstance(h, &set, u"k0", 0);
	assert_null(dup);
	assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	held = calloc(seg0, sizeof(*held));
	assert_non_null(held);
	for (i = 1; i < seg0; i++) {
		held[i] = PerfCreateInstance(h, &set, prov_wname(name, 32, "k%u", i), i);
		assert_non_null(held[i]);
	}
	assert_int_equal(perflib_store_nr_segs(map, 0), 1);
	assert_int_equal(map->keys_fd, PERFLIB_KEYS_LAZY);
	assert_int_equal(access(path, F_OK), -1);
	/* the next one grows the set, which loads the program: from then on it answers */
	grown = PerfCreateInstance(h, &set, u"grown", 9999);
	assert_non_null(grown);
	assert_int_equal(perflib_store_nr_segs(map, 0), 2);
	assert_int_equal(access(path, F_OK), 0);
	assert_true(map->keys_fd >= 0);
	/* and a duplicate of a key of segment 0, claimed in segment 1, is refused */
	dup = PerfCreateInstance(h, &set, u"k0", 0);
	assert_null(dup);
	assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	/*
	 * segment 1 emptied with room below (a quarter of segment 0 free): retired, and the
	 * program unpinned with it (every class has one segment again)
	 */
	for (i = 1; i <= seg0 / 4 + 1; i++)
		assert_int_equal(PerfDeleteInstance(h, held[i]), ERROR_SUCCESS);
	assert_int_equal(PerfDeleteInstance(h, grown), ERROR_SUCCESS);
	assert_int_equal(perflib_store_nr_segs(map, 0), 1);
	assert_int_equal(access(path, F_OK), -1);
	/* grown again: pinned again, and it answers */
	for (i = 1; i <= seg0 / 4 + 2; i++)
		assert_non_null(PerfCreateInstance(h, &set, prov_wname(name, 32, "n%u", i), i));
	assert_int_equal(perflib_store_nr_segs(map, 0), 2);
	assert_int_equal(access(path, F_OK), 0);
	dup = PerfCreateInstance(h, &set, u"k0", 0);
	assert_null(dup);
	assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	free(held);
	assert_int_equal(PerfStopProvider(h), 0);
	assert_int_equal(perflib_store_remove(&set), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_where),
		cmocka_unit_test(test_opened_when_needed),
		cmocka_unit_test(test_duplicate_with_program),
		cmocka_unit_test(test_duplicate_without_program),
		cmocka_unit_test(test_program_cannot_run),
	};

	tl_require_bpf();
	return cmocka_run_group_tests_name("keys", tests, tl_group_setup, tl_group_teardown);
}

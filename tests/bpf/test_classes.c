// SPDX-License-Identifier: MIT
/*
 * test_classes.c - size classes (layout.h): instances whose names have very different
 * lengths share one counter set, each in the class its name needs, with the Windows block
 * exact in every class; consumers see them all; duplicates are refused in every class; a
 * deleted instance's slot is reused by the next name of its class; a SIGKILLed provider's
 * instances of every class are gone; an empty set holds at most 64 KiB of kernel memory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "testlib.h"
#include "internal.h"
#include "../helpers/prov_util.h"
#include "../helpers/cons_util.h"

/* one name per class of a default set: 5, 40, 100 and 1,024 characters */
static const size_t lens[] = {5, 40, 100, PERF_MAX_INSTANCE_NAME};
#define NR_LENS (sizeof(lens) / sizeof(lens[0]))

/* a name of @len units, different for every @seed */
static WCHAR *long_name(size_t len, unsigned int seed)
{
	WCHAR *w = calloc(len + 1, sizeof(WCHAR));
	size_t i;

	assert_non_null(w);
	for (i = 0; i < len; i++)
		w[i] = (WCHAR)(u'a' + (i * 7 + seed) % 26);
	return w;
}

static struct perflib_ctrset *ctrset_of(HANDLE h, const GUID *set)
{
	struct perflib_provider *prov = perflib_provider_lookup(h);

	assert_non_null(prov);
	return perflib_ctrset_find(prov, set);
}

static void check_block(PPERF_COUNTERSET_INSTANCE inst, const GUID *set, const WCHAR *name,
			size_t len, ULONG id)
{
	/* the Windows block: header, 4 counters, the name right after, dwSize rounded to 8 */
	assert_memory_equal(&inst->CounterSetGuid, set, sizeof(GUID));
	assert_int_equal(inst->InstanceId, id);
	assert_int_equal(inst->InstanceNameOffset, sizeof(*inst) + 8 * 4);
	assert_int_equal(inst->InstanceNameSize, (len + 1) * 2);
	assert_int_equal(inst->dwSize, (sizeof(*inst) + 8 * 4 + (len + 1) * 2 + 7) / 8 * 8);
	assert_memory_equal((BYTE *)inst + inst->InstanceNameOffset, name, (len + 1) * 2);
}

static void test_every_class(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst[NR_LENS], again;
	struct cons_inst seen[NR_LENS + 1];
	struct perflib_ctrset *cs;
	WCHAR *names[NR_LENS];
	bool found[NR_LENS] = {false};
	uint32_t segs[NR_LENS];
	BYTE *buf;
	DWORD len;
	HANDLE h;
	GUID set;
	size_t i, j;
	int n;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	cs = ctrset_of(h, &set);
	assert_int_equal(cs->nr_classes, 4);
	for (i = 0; i < NR_LENS; i++) {
		names[i] = long_name(lens[i], (unsigned int)i);
		inst[i] = PerfCreateInstance(h, &set, names[i], (ULONG)i + 10);
		assert_non_null(inst[i]);
		check_block(inst[i], &set, names[i], lens[i], (ULONG)i + 10);
		/* in the class its length selects: class i here */
		assert_int_equal(
			perflib_slot_id_class((uint32_t)perflib_ctrset_instance_index(cs, inst[i])),
			i);
		/* raw writes through the block, as a Windows provider does */
		*(ULONG *)prov_slot(inst[i], 0) = 100 + (ULONG)i;
		assert_int_equal(PerfSetULongLongCounterValue(h, inst[i], PROV_STD_LARGE, 1000 + i),
				 ERROR_SUCCESS);
		assert_ptr_equal(PerfQueryInstance(h, &set, names[i], (ULONG)i + 10), inst[i]);
	}
	/* a consumer sees every class's instances, names whole */
	assert_int_equal(cons_enum(&set, &buf, &len), ERROR_SUCCESS);
	n = cons_instances(buf, len, seen, NR_LENS + 1);
	assert_int_equal(n, NR_LENS);
	for (j = 0; j < (size_t)n; j++) {
		for (i = 0; i < NR_LENS; i++) {
			if (seen[j].id == i + 10 && seen[j].len == lens[i] &&
			    !memcmp(seen[j].name, names[i], lens[i] * 2))
				found[i] = true;
		}
	}
	free(buf);
	for (i = 0; i < NR_LENS; i++)
		assert_true(found[i]);
	/* duplicates are refused in every class; another id is another instance */
	for (i = 0; i < NR_LENS; i++) {
		assert_null(PerfCreateInstance(h, &set, names[i], (ULONG)i + 10));
		assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	}
	/* deleted instances' slots go to the next names of their class: the set does not grow */
	for (i = 0; i < NR_LENS; i++)
		segs[i] = perflib_store_nr_segs(cs->map, (uint32_t)i);
	for (i = 0; i < NR_LENS; i++) {
		assert_int_equal(PerfDeleteInstance(h, inst[i]), ERROR_SUCCESS);
		names[i][0] = u'Z';
		again = PerfCreateInstance(h, &set, names[i], 77);
		assert_non_null(again);
		assert_int_equal(
			perflib_slot_id_class((uint32_t)perflib_ctrset_instance_index(cs, again)),
			i);
		assert_int_equal(perflib_store_nr_segs(cs->map, (uint32_t)i), segs[i]);
		check_block(again, &set, names[i], lens[i], 77);
		/* a new instance starts at zero */
		assert_int_equal(*(ULONG *)prov_slot(again, 0), 0);
		free(names[i]);
	}
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	/* stopped: nothing left to see */
	assert_int_equal(cons_enum(&set, &buf, &len), ERROR_SUCCESS);
	assert_int_equal(len, 0);
	free(buf);
}

/* a name longer than the set takes is refused, whatever the classes */
static void test_name_limits(void **state)
{
	WCHAR *name = long_name(PERF_MAX_INSTANCE_NAME + 1, 3);
	HANDLE h;
	GUID set;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	assert_null(PerfCreateInstance(h, &set, name, 0));
	assert_int_equal(GetLastError(), ERROR_INVALID_PARAMETER);
	/* the longest one is fine, and so is the empty name */
	name[PERF_MAX_INSTANCE_NAME] = 0;
	assert_non_null(PerfCreateInstance(h, &set, name, 0));
	assert_non_null(PerfCreateInstance(h, &set, u"", 0));
	free(name);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

struct killed {
	GUID set;
	int ready[2];
};

/* hold one instance per class, then wait to be killed */
static int holder(void *p)
{
	struct killed *k = p;
	GUID pg = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h;
	size_t i;

	prov_tmpl_std(&t, k->set, PERF_COUNTERSET_MULTI_INSTANCES);
	if (PerfStartProvider(&pg, NULL, &h) || prov_tmpl_register(h, &t))
		return 2;
	for (i = 0; i < NR_LENS; i++) {
		if (!PerfCreateInstance(h, &k->set, long_name(lens[i], 9), 1))
			return 3;
	}
	tl_signal(k->ready[1]);
	pause();
	return 0;
}

/* instances of @map that are not FREE, every class */
static unsigned int taken(const struct perflib_store *map)
{
	unsigned int n = 0;
	uint32_t c, i;

	for (c = 0; c < map->nr_classes; c++) {
		for (i = 0; i < perflib_store_slots(map, c); i++) {
			if (perflib_word_state(perflib_slot_word(perflib_slot(
				    map, perflib_slot_id_make(c, i)))) != PERFLIB_SLOT_FREE)
				n++;
		}
	}
	return n;
}

static void test_sigkill_every_class(void **state)
{
	struct killed k = {.set = prov_guid()};
	char dir[PATH_MAX], path[PATH_MAX + 16];
	struct perflib_store *ro;
	bool kernel;
	pid_t pid;

	(void)state;
	assert_int_equal(tl_pipe(k.ready), 0);
	/* the holder registers the set with the exit reaper (testlib.c leaves it out) */
	setenv("PERFLIB_KERNEL_REAPER", "1", 1);
	pid = tl_fork(holder, &k);
	setenv("PERFLIB_KERNEL_REAPER", "0", 1);
	assert_true(pid > 0);
	assert_int_equal(tl_await(k.ready[0], 20000), 0);
	assert_int_equal(perflib_store_open(&k.set, false, &ro), 0);
	assert_int_equal(taken(ro), NR_LENS);
	assert_int_equal(perflib_store_dir(&k.set, dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/reaper", dir);
	kernel = !access(path, F_OK);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(tl_wait(pid, 20000), 128 + SIGKILL);
	/*
	 * the kernel's exit reaper walks every class, in the exit, before the wait returns;
	 * without it (a kernel that refuses the program) the lazy reaper frees them
	 */
	if (kernel)
		assert_int_equal(taken(ro), 0);
	else
		assert_int_equal(perflib_reap_counterset(&k.set), NR_LENS);
	assert_int_equal(taken(ro), 0);
	perflib_store_close(ro);
	close(k.ready[0]);
	close(k.ready[1]);
}

/*
 * a registered set with no instance within 64 KiB of kernel memory, its programs counted
 * (issue 8): its maps, and the exit reaper (8 KiB: one class-generic walk); the keys
 * program comes with a class's second segment, the procs entries are in s0/live
 */
static void test_empty_set_memory(void **state)
{
	unsigned long long maps = 0, progs = 0;
	char dir[PATH_MAX], path[PATH_MAX + 16];
	HANDLE h;
	GUID set;

	(void)state;
	/* with the exit reaper, which the tests leave out elsewhere (testlib.c) */
	setenv("PERFLIB_KERNEL_REAPER", "1", 1);
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	setenv("PERFLIB_KERNEL_REAPER", "0", 1);
	assert_int_equal(perflib_store_dir(&set, dir, sizeof(dir)), 0);
	tl_dir_memlock(dir, &maps, &progs);
	print_message("registered set, no instance: %llu bytes of maps, %llu of programs\n", maps,
		      progs);
	assert_true(maps > 0);
	assert_true(maps + progs <= 64 * 1024);
	snprintf(path, sizeof(path), "%s/keys", dir);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/procs", dir);
	assert_int_equal(access(path, F_OK), -1);
	/* the reaper: at most 8 KiB (two pages), counted when this kernel loads it */
	snprintf(path, sizeof(path), "%s/reaper", dir);
	if (!access(path, F_OK))
		assert_true(progs > 4096);
	else
		print_message("no exit reaper on this kernel\n");
	assert_true(progs <= 8 * 1024);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_class),
		cmocka_unit_test(test_name_limits),
		cmocka_unit_test(test_sigkill_every_class),
		cmocka_unit_test(test_empty_set_memory),
	};

	tl_require_bpf();
	return cmocka_run_group_tests_name("classes", tests, tl_group_setup, tl_group_teardown);
}

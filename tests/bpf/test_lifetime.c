// SPDX-License-Identifier: MIT
/*
 * test_lifetime.c - instances and real processes: providers killed with SIGKILL, exiting,
 * stopping, sharing a counter set; reaping; pid reuse (owner pid + start time). Children
 * report through their exit code (never through cmocka, which must stay in the parent).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "internal.h"
#include "testlib.h"
#include "../helpers/prov_util.h"

#define WAIT_MS 10000

enum child_end {
	HOLD, /* keep the instances until killed or told to go */
	STOP, /* PerfStopProvider, signal again, wait */
	EXIT, /* exit(0) with the instances still created */
};

struct child {
	GUID set;
	ULONG type;	    /* PERF_COUNTERSET_* of the standard template */
	const char *prefix; /* instance names: <prefix><j> */
	int nr;		    /* instances, ids 0..nr-1 */
	enum child_end end;
	int ready[2]; /* child -> parent */
	int go[2];    /* parent -> child */
	pid_t pid;
};

/* a provider process: registers the standard set, creates its instances, then child->end */
static int child_provider(void *p)
{
	struct child *c = p;
	GUID pg = prov_provider_guid();
	PPERF_COUNTERSET_INSTANCE inst;
	struct prov_tmpl t;
	WCHAR name[64];
	HANDLE h;
	int j;

	prov_tmpl_std(&t, c->set, c->type);
	if (PerfStartProvider(&pg, NULL, &h) || prov_tmpl_register(h, &t))
		return 2;
	for (j = 0; j < c->nr; j++) {
		inst = PerfCreateInstance(h, &c->set, prov_wname(name, 64, "%s%d", c->prefix, j),
					  (ULONG)j);
		if (!inst) {
			fprintf(stderr, "child: create %d: error %u\n", j, GetLastError());
			return 3;
		}
		if (PerfSetULongCounterValue(h, inst, PROV_STD_DWORD2, (ULONG)getpid()))
			return 4;
	}
	if (c->end == EXIT) {
		tl_signal(c->ready[1]);
		exit(0);
	}
	if (c->end == STOP && PerfStopProvider(h))
		return 5;
	tl_signal(c->ready[1]);
	/* killed here, or told to go */
	if (tl_await(c->go[0], 60000))
		return 6;
	return 0;
}

/* start @c and wait until its instances exist (in a set of type @type) */
static void child_start_type(struct child *c, GUID set, ULONG type, const char *prefix, int nr,
			     enum child_end end)
{
	c->set = set;
	c->type = type;
	c->prefix = prefix;
	c->nr = nr;
	c->end = end;
	assert_int_equal(tl_pipe(c->ready), 0);
	assert_int_equal(tl_pipe(c->go), 0);
	c->pid = tl_fork(child_provider, c);
	assert_true(c->pid > 0);
	if (tl_await(c->ready[0], WAIT_MS)) {
		int rc = tl_wait(c->pid, WAIT_MS);

		fail_msg("provider child %d never got ready (exit %d)", (int)c->pid, rc);
	}
}

static void child_start(struct child *c, GUID set, const char *prefix, int nr, enum child_end end)
{
	child_start_type(c, set, PERF_COUNTERSET_MULTI_INSTANCES, prefix, nr, end);
}

static void child_close(struct child *c)
{
	close(c->ready[0]);
	close(c->ready[1]);
	close(c->go[0]);
	close(c->go[1]);
}

static void child_kill(struct child *c)
{
	assert_int_equal(kill(c->pid, SIGKILL), 0);
	assert_int_equal(tl_wait(c->pid, WAIT_MS), 128 + SIGKILL);
	child_close(c);
}

static void child_finish(struct child *c)
{
	assert_int_equal(tl_signal(c->go[1]), 0);
	assert_int_equal(tl_wait(c->pid, WAIT_MS), 0);
	child_close(c);
}

/* slots of @set in state @state, and those of them owned by @pid (0: any) */
static unsigned int count_slots(const GUID *set, uint32_t state, uint32_t pid)
{
	struct perflib_store *ro;
	unsigned int n = 0;
	uint32_t i;
	uint64_t w;

	assert_int_equal(perflib_store_open(set, false, &ro), 0);
	for (i = 0; i < perflib_store_slots(ro, 0); i++) {
		w = perflib_slot_word(perflib_slot(ro, i));
		if (perflib_word_state(w) == state && (!pid || perflib_word_pid(w) == pid))
			n++;
	}
	perflib_store_close(ro);
	return n;
}

/* a provider in this process with the standard set @set of type @type registered */
static HANDLE parent_provider_type(GUID set, ULONG type)
{
	GUID pg = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h;

	prov_tmpl_std(&t, set, type);
	assert_int_equal(PerfStartProvider(&pg, NULL, &h), ERROR_SUCCESS);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	return h;
}

static HANDLE parent_provider(GUID set)
{
	return parent_provider_type(set, PERF_COUNTERSET_MULTI_INSTANCES);
}

/* ---- SIGKILL ---------------------------------------------------------------------------- */

static void test_sigkill_duplicate_freed(void **state)
{
	GUID set = prov_guid();
	struct child c;
	HANDLE h;

	(void)state;
	child_start(&c, set, "victim", 2, HOLD);
	h = parent_provider(set);
	/* while the owner lives, its (name, id) pairs are taken */
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &set, u"victim0", 0));
	assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	child_kill(&c);
	/* a dead owner no longer blocks: its slot is reaped on the way */
	assert_non_null(PerfCreateInstance(h, &set, u"victim0", 0));
	/* the other dead slot waits for a reaper */
	assert_int_equal(count_slots(&set, PERFLIB_SLOT_LIVE, (uint32_t)c.pid), 1);
	assert_int_equal(perflib_reap_counterset(&set), 1);
	assert_int_equal(perflib_reap_counterset(&set), 0);
	assert_int_equal(count_slots(&set, PERFLIB_SLOT_LIVE, (uint32_t)c.pid), 0);
	assert_int_equal(count_slots(&set, PERFLIB_SLOT_LIVE, 0), 1); /* ours */
	assert_non_null(PerfCreateInstance(h, &set, u"victim1", 1));
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_sigkill_reap(void **state)
{
	GUID set = prov_guid();
	struct perflib_index_key key;
	struct perflib_store *ro;
	struct child c;
	uint32_t i;

	(void)state;
	child_start(&c, set, "reap", 5, HOLD);
	assert_int_equal(count_slots(&set, PERFLIB_SLOT_LIVE, (uint32_t)c.pid), 5);
	/* nothing to reap while it lives; its names are in the index */
	assert_int_equal(perflib_reap_counterset(&set), 0);
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	for (i = 0; i < 5; i++) {
		struct perflib_index_val val;
		WCHAR name[16];

		perflib_index_key(prov_wname(name, 16, "reap%u", i), 5, i, &key);
		assert_int_equal(perflib_index_lookup(ro, 0, &key, &val), 0);
	}
	perflib_store_close(ro);
	child_kill(&c);
	assert_int_equal(perflib_reap_counterset(&set), 5);
	assert_int_equal(count_slots(&set, PERFLIB_SLOT_LIVE, 0), 0);
	assert_int_equal(count_slots(&set, PERFLIB_SLOT_CLAIMED, 0), 0);
	/* the index is empty again and freed slots show nothing */
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	for (i = 0; i < 5; i++) {
		struct perflib_index_val val;
		WCHAR name[16];

		perflib_index_key(prov_wname(name, 16, "reap%u", i), 5, i, &key);
		assert_int_not_equal(perflib_index_lookup(ro, 0, &key, &val), 0);
	}
	for (i = 0; i < 5; i++) {
		const uint8_t *s = perflib_slot(ro, i);
		uint32_t k;

		for (k = PERFLIB_BLOCK_OFFSET; k < ro->info->slot_size; k++)
			assert_int_equal(s[k], 0);
	}
	perflib_store_close(ro);
	assert_int_equal(perflib_reap_counterset(NULL), -EINVAL);
}

static void test_sigkill_capacity_reused(void **state)
{
	GUID set = prov_guid();
	struct child c;
	HANDLE h;
	int i;

	(void)state;
	/* the child inherits the setting and creates the set with 4 slots */
	assert_int_equal(perflib_set_capacity(4, 0), 0);
	child_start(&c, set, "cap", 4, HOLD);
	assert_int_equal(perflib_set_capacity(PROV_CAPACITY_DEFAULT, 0), 0);
	h = parent_provider(set);
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &set, u"mine", 0));
	assert_int_equal(GetLastError(), ERROR_NOT_ENOUGH_MEMORY);
	child_kill(&c);
	/* no explicit reap: a full set takes back the slots of dead processes */
	for (i = 0; i < 4; i++) {
		PPERF_COUNTERSET_INSTANCE inst = PerfCreateInstance(h, &set, u"mine", (ULONG)i);

		if (!inst)
			fail_msg("instance %d: error %u", i, GetLastError());
	}
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &set, u"mine", 4));
	assert_int_equal(GetLastError(), ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/* ---- pid reuse ------------------------------------------------------------------------- */

/* write a LIVE slot @i for ("ghost", @id) owned by (@pid, @start), indexed, as root can */
static void forge_slot(const GUID *set, uint32_t i, uint32_t pid, uint64_t start, ULONG id)
{
	struct perflib_store *rw;
	struct perflib_index_key key;
	struct perflib_slot_hdr *hdr;
	PERF_COUNTERSET_INSTANCE *blk;
	uint8_t *slot;
	uint32_t gen;
	uint64_t w;

	assert_int_equal(perflib_store_open(set, true, &rw), 0);
	slot = perflib_slot_map(rw, i);
	hdr = (void *)slot;
	w = perflib_slot_word(slot);
	assert_int_equal(perflib_word_state(w), PERFLIB_SLOT_FREE);
	gen = perflib_word_gen(w) + 2; /* claimed at gen + 1, published at gen + 2 */
	blk = (void *)(slot + PERFLIB_BLOCK_OFFSET);
	memcpy(&blk->CounterSetGuid, set, sizeof(GUID));
	blk->InstanceId = id;
	blk->InstanceNameOffset = 32 + 8 * rw->info->nr_counters;
	blk->InstanceNameSize = sizeof(u"ghost");
	blk->dwSize = (blk->InstanceNameOffset + blk->InstanceNameSize + 7) & ~7u;
	memcpy(slot + rw->info->name_offset, u"ghost", sizeof(u"ghost"));
	strcpy((char *)slot + rw->info->ascii_offset, "ghost");
	hdr->owner_start = start;
	perflib_index_key(u"ghost", 5, id, &key);
	assert_int_equal(perflib_index_put(rw, i, gen - 1, &key), 0);
	perflib_live_set(rw, i, true);
	__atomic_store_n((uint64_t *)slot, perflib_make_word(PERFLIB_SLOT_LIVE, gen, pid),
			 __ATOMIC_RELEASE);
	perflib_store_close(rw);
}

static int sleeper(void *arg)
{
	(void)arg;
	pause();
	return 0;
}

static void test_pid_reuse(void **state)
{
	GUID set = prov_guid();
	uint64_t start;
	pid_t other;
	HANDLE h;
	int i;

	(void)state;
	h = parent_provider(set);
	/* a live process (this one) with another start time: a former owner of the pid */
	assert_int_equal(perflib_proc_start_time(getpid(), &start), 0);
	forge_slot(&set, 10, (uint32_t)getpid(), start + 1, 7);
	assert_int_equal(perflib_proc_alive((uint32_t)getpid(), start + 1), 0);
	assert_int_equal(perflib_proc_alive((uint32_t)getpid(), start), 1);
	/* it does not hide the name: the pair is free... */
	assert_non_null(PerfCreateInstance(h, &set, u"ghost", 7));
	/* ...and the forged slot was reaped, not resurrected */
	assert_int_equal(count_slots(&set, PERFLIB_SLOT_LIVE, 0), 1);
	/* and a reaper frees such slots */
	forge_slot(&set, 11, (uint32_t)getpid(), start - 1, 8);
	assert_int_equal(perflib_reap_counterset(&set), 1);
	assert_int_equal(count_slots(&set, PERFLIB_SLOT_LIVE, 0), 1);

	/* control: the right start time of a live process keeps the slot */
	other = tl_fork(sleeper, NULL);
	assert_true(other > 0);
	usleep(20000);
	assert_int_equal(perflib_proc_start_time(other, &start), 0);
	forge_slot(&set, 12, (uint32_t)other, start, 9);
	assert_int_equal(perflib_reap_counterset(&set), 0);
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &set, u"ghost", 9));
	assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	/* a zombie owner is dead already */
	assert_int_equal(kill(other, SIGKILL), 0);
	for (i = 0; i < 500 && perflib_proc_alive((uint32_t)other, start); i++)
		usleep(10000);
	assert_int_equal(perflib_proc_alive((uint32_t)other, start), 0);
	assert_int_equal(perflib_reap_counterset(&set), 1);
	assert_int_equal(tl_wait(other, WAIT_MS), 128 + SIGKILL);
	assert_non_null(PerfCreateInstance(h, &set, u"ghost", 9));
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

static void test_proc_alive(void **state)
{
	uint64_t start;

	(void)state;
	assert_int_equal(perflib_proc_start_time(getpid(), &start), 0);
	assert_true(start > 0);
	assert_int_equal(perflib_proc_alive((uint32_t)getpid(), start), 1);
	assert_int_equal(perflib_proc_alive(0, start), 0);
	assert_int_equal(perflib_proc_alive(0x80000000u, start), 0);
	assert_int_equal(perflib_proc_start_time(0x7ffffff0, &start), -ESRCH);
}

/* ---- several processes ------------------------------------------------------------------ */

static void test_two_processes_one_set(void **state)
{
	GUID set = prov_guid();
	struct perflib_store *ro;
	struct child a, b;
	unsigned int na = 0, nb = 0, procs = 0;
	uint32_t i;

	(void)state;
	/* the same provider GUID in two processes, publishing into one set */
	child_start(&a, set, "a", 10, HOLD);
	child_start(&b, set, "b", 10, HOLD);
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	for (i = 0; i < perflib_store_slots(ro, 0); i++) {
		const uint8_t *s = perflib_slot(ro, i);
		uint64_t w = perflib_slot_word(s);
		const PERF_COUNTERSET_INSTANCE *blk = (const void *)(s + PERFLIB_BLOCK_OFFSET);
		uint32_t owner = perflib_word_pid(w);
		WCHAR name[16];

		if (perflib_word_state(w) != PERFLIB_SLOT_LIVE)
			continue;
		assert_true(owner == (uint32_t)a.pid || owner == (uint32_t)b.pid);
		/* each process's value and names, in its own slots */
		assert_int_equal(*(const uint32_t *)(s + PERFLIB_COUNTERS_OFFSET + 24), owner);
		prov_wname(name, 16, "%s%u", owner == (uint32_t)a.pid ? "a" : "b", blk->InstanceId);
		assert_memory_equal(s + ro->info->name_offset, name, blk->InstanceNameSize);
		if (owner == (uint32_t)a.pid)
			na++;
		else
			nb++;
	}
	for (i = 0; i < ro->info->nr_procs; i++) {
		if (ro->procs[i].state == PERFLIB_PROC_LIVE)
			procs++;
	}
	perflib_store_close(ro);
	assert_int_equal(na, 10);
	assert_int_equal(nb, 10);
	assert_int_equal(procs, 2);
	child_finish(&a);
	child_finish(&b);
	assert_int_equal(perflib_reap_counterset(&set), 20);
}

static void test_duplicate_across_processes(void **state)
{
	GUID set = prov_guid();
	struct child c;
	HANDLE h;

	(void)state;
	child_start(&c, set, "dup", 2, HOLD);
	h = parent_provider(set);
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &set, u"dup1", 1));
	assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	assert_non_null(PerfCreateInstance(h, &set, u"dup1", 2));
	assert_non_null(PerfCreateInstance(h, &set, u"dup2", 1));
	child_finish(&c);
	assert_non_null(PerfCreateInstance(h, &set, u"dup1", 1));
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/*
 * Generation wrap (issue 13 item 5): instances published in slots whose generation wraps
 * (0x3FFFFFFF -> 0 at the claim) are duplicates like any other: ERROR_ALREADY_EXISTS at
 * once, not ERROR_BUSY after retries; deleting and reusing such slots works.
 */
static void test_generation_wrap(void **state)
{
	GUID set = prov_guid();
	struct perflib_store *rw;
	struct child c;
	uint32_t i;
	HANDLE h;

	(void)state;
	h = parent_provider(set);
	assert_int_equal(perflib_store_open(&set, true, &rw), 0);
	for (i = 0; i < perflib_store_slots(rw, 0); i++)
		__atomic_store_n((uint64_t *)perflib_slot_map(rw, i),
				 perflib_make_word(PERFLIB_SLOT_FREE, PERFLIB_GEN_MASK, 0),
				 __ATOMIC_RELEASE);
	child_start(&c, set, "wrap", 2, HOLD);
	/* claimed at generation 0, published at 1 */
	assert_int_equal(perflib_word_gen(perflib_slot_word(perflib_slot_map(rw, 0))), 1);
	SetLastError(0);
	assert_null(PerfCreateInstance(h, &set, u"wrap1", 1));
	assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	assert_non_null(PerfCreateInstance(h, &set, u"wrap1", 2));
	child_finish(&c);
	assert_non_null(PerfCreateInstance(h, &set, u"wrap1", 1));
	perflib_store_close(rw);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

/*
 * Uniqueness by counter-set type (instance.c): machine-wide for single-instance and
 * multi-instance sets, per process for the types whose instances a consumer aggregates
 * across processes (SINGLE_AGGREGATE, SINGLE_AGGREGATE_HISTORY, INSTANCE_AGGREGATE).
 */
static void test_uniqueness_scopes(void **state)
{
	static const struct {
		ULONG type;
		ULONG second_process; /* parent's first create after the child's */
		ULONG same_process;   /* parent's second create of the same pair */
	} rows[] = {
		{PERF_COUNTERSET_SINGLE_INSTANCE, ERROR_INVALID_PARAMETER, ERROR_INVALID_PARAMETER},
		{PERF_COUNTERSET_MULTI_INSTANCES, ERROR_ALREADY_EXISTS, ERROR_ALREADY_EXISTS},
		{PERF_COUNTERSET_MULTI_AGGREGATE, ERROR_ALREADY_EXISTS, ERROR_ALREADY_EXISTS},
		{PERF_COUNTERSET_SINGLE_AGGREGATE, ERROR_SUCCESS, ERROR_INVALID_PARAMETER},
		{PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY, ERROR_SUCCESS, ERROR_INVALID_PARAMETER},
		{PERF_COUNTERSET_INSTANCE_AGGREGATE, ERROR_SUCCESS, ERROR_ALREADY_EXISTS},
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		GUID set = prov_guid();
		struct child c;
		ULONG st[2];
		HANDLE h;
		int k;

		child_start_type(&c, set, rows[i].type, "s", 1, HOLD);
		h = parent_provider_type(set, rows[i].type);
		for (k = 0; k < 2; k++) {
			SetLastError(0);
			st[k] = PerfCreateInstance(h, &set, u"s0", 0) ? ERROR_SUCCESS
								      : GetLastError();
		}
		child_finish(&c);
		assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
		if (st[0] != rows[i].second_process || st[1] != rows[i].same_process)
			fail_msg("instance type %u: %u then %u, expected %u then %u", rows[i].type,
				 st[0], st[1], rows[i].second_process, rows[i].same_process);
	}
}

static void test_stop_removes(void **state)
{
	GUID set = prov_guid();
	struct child c;

	(void)state;
	child_start(&c, set, "stop", 3, STOP);
	/* stopped: gone at once, nothing left to reap, while the process still runs */
	assert_int_equal(count_slots(&set, PERFLIB_SLOT_LIVE, 0), 0);
	assert_int_equal(count_slots(&set, PERFLIB_SLOT_CLAIMED, 0), 0);
	assert_int_equal(perflib_reap_counterset(&set), 0);
	child_finish(&c);
}

static void test_exit_removes(void **state)
{
	GUID set = prov_guid();
	struct perflib_store *ro;
	struct child c;
	HANDLE h;
	uint32_t i;

	(void)state;
	child_start(&c, set, "exit", 3, EXIT);
	assert_int_equal(tl_wait(c.pid, WAIT_MS), 0);
	child_close(&c);
	/* the slots still say LIVE, but no slot has a live owner: readers skip them */
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	for (i = 0; i < perflib_store_slots(ro, 0); i++) {
		const uint8_t *s = perflib_slot(ro, i);
		uint64_t w = perflib_slot_word(s);

		if (perflib_word_state(w) == PERFLIB_SLOT_LIVE)
			assert_int_equal(perflib_proc_alive(
						 perflib_word_pid(w),
						 ((const struct perflib_slot_hdr *)s)->owner_start),
					 0);
	}
	perflib_store_close(ro);
	/* the names are free, and the rest is reaped */
	h = parent_provider(set);
	assert_non_null(PerfCreateInstance(h, &set, u"exit0", 0));
	assert_int_equal(perflib_reap_counterset(&set), 2);
	assert_non_null(PerfCreateInstance(h, &set, u"exit1", 1));
	assert_non_null(PerfCreateInstance(h, &set, u"exit2", 2));
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sigkill_duplicate_freed),
		cmocka_unit_test(test_sigkill_reap),
		cmocka_unit_test(test_sigkill_capacity_reused),
		cmocka_unit_test(test_pid_reuse),
		cmocka_unit_test(test_proc_alive),
		cmocka_unit_test(test_two_processes_one_set),
		cmocka_unit_test(test_duplicate_across_processes),
		cmocka_unit_test(test_generation_wrap),
		cmocka_unit_test(test_uniqueness_scopes),
		cmocka_unit_test(test_stop_removes),
		cmocka_unit_test(test_exit_removes),
	};

	tl_require_bpf();
	return cmocka_run_group_tests_name("lifetime", tests, tl_group_setup, tl_group_teardown);
}

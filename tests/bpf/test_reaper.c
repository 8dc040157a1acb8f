// SPDX-License-Identifier: MIT
/*
 * test_reaper.c - kernel-assisted cleanup (userspace/reaper.c, bpf/reaper.bpf.c): a provider
 * killed with SIGKILL (or exiting) has its slots FREE and its index keys deleted by the time
 * its parent's waitpid() returns, with no consumer or reaper call in between; the BPF key
 * equals the user-space key for every kind of index key; a process that still has threads
 * is not reaped; the pins come and go with the counter set; kernel-owned instances survive
 * their creator. Children report through their exit code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/capability.h>

#include "internal.h"
#include "testlib.h"
#include "../helpers/prov_util.h"

#define WAIT_MS 10000
#define NR_INST 3

struct child {
	GUID set;
	ULONG type;	    /* PERF_COUNTERSET_* */
	const char *prefix; /* instance names <prefix><j>, ids 100 + j */
	int nr;		    /* instances */
	bool thread;	    /* end the main thread, keep a second one */
	bool give;	    /* hand the instances to the kernel, then exit */
	bool long_names;    /* names of PERF_MAX_INSTANCE_NAME characters */
	int ready[2];	    /* child -> parent */
	int go[2];	    /* parent -> child */
	pid_t pid;
};

static void *hold_thread(void *p)
{
	struct child *c = p;

	tl_await(c->go[0], 60000);
	/* every thread goes (the library may run its own): the last one reaps */
	_exit(0);
}

/* a provider process: registers a set of c->type, creates c->nr instances, waits */
static int child_provider(void *p)
{
	struct child *c = p;
	GUID pg = prov_provider_guid();
	PPERF_COUNTERSET_INSTANCE inst;
	struct prov_tmpl t;
	pthread_t th;
	WCHAR name[64];
	HANDLE h;
	int j;

	prov_tmpl_std(&t, c->set, c->type);
	if (PerfStartProvider(&pg, NULL, &h) || prov_tmpl_register(h, &t))
		return 2;
	for (j = 0; j < c->nr; j++) {
		static WCHAR longname[PERF_MAX_INSTANCE_NAME + 1];
		const WCHAR *n = prov_wname(name, 64, "%s%d", c->prefix, j);
		size_t k;

		if (c->long_names) {
			/* the whole capacity: the kernel must hash all 1024 units as user space does */
			for (k = 0; k < PERF_MAX_INSTANCE_NAME; k++)
				longname[k] = (WCHAR)(u'a' + (k + (size_t)j) % 26);
			longname[PERF_MAX_INSTANCE_NAME] = 0;
			for (k = 0; k < 64 && name[k]; k++)
				longname[k] = name[k];
			n = longname;
		}
		inst = PerfCreateInstance(h, &c->set, n, (ULONG)(100 + j));
		if (!inst) {
			fprintf(stderr, "child: create %d: error %u\n", j, GetLastError());
			return 3;
		}
		if (c->give && perflib_instance_to_kernel(h, inst))
			return 4;
	}
	if (c->give) {
		/* exit without stopping: the kernel owns them now */
		tl_signal(c->ready[1]);
		return 0;
	}
	if (c->thread) {
		if (pthread_create(&th, NULL, hold_thread, c))
			return 5;
		tl_signal(c->ready[1]);
		/* only this thread ends: the process lives on in the other one */
		syscall(SYS_exit, 0);
	}
	tl_signal(c->ready[1]);
	tl_await(c->go[0], 60000);
	return 0;
}

static void child_start(struct child *c)
{
	assert_int_equal(tl_pipe(c->ready), 0);
	assert_int_equal(tl_pipe(c->go), 0);
	c->pid = tl_fork(child_provider, c);
	assert_true(c->pid > 0);
	if (tl_await(c->ready[0], WAIT_MS))
		fail_msg("provider child exited early (%d)", tl_wait(c->pid, WAIT_MS));
}

static void child_close(struct child *c)
{
	close(c->ready[0]);
	close(c->ready[1]);
	close(c->go[0]);
	close(c->go[1]);
}

/*
 * current entries in the index tables of every size class of @map: the reaper leaves the
 * entries of what it frees, stale (no longer current), for whoever meets them to clear
 */
static unsigned int count_keys(struct perflib_store *map)
{
	return (unsigned int)perflib_index_count(map);
}

/* the slot id after @id in @map (every class's opened slots in turn), false at the end */
static bool next_id(const struct perflib_store *map, uint32_t *id, bool first)
{
	uint32_t c = first ? 0 : perflib_slot_id_class(*id);
	uint32_t i = first ? 0 : perflib_slot_id_index(*id) + 1;

	for (; c < map->nr_classes; c++, i = 0) {
		if (i < perflib_store_slots(map, c)) {
			*id = perflib_slot_id_make(c, i);
			return true;
		}
	}
	return false;
}

/* slots of @map in @state owned by @pid */
static unsigned int count_slots(const struct perflib_store *map, uint32_t state, uint32_t pid)
{
	unsigned int n = 0;
	uint32_t i;
	bool more;
	uint64_t w;

	for (more = next_id(map, &i, true); more; more = next_id(map, &i, false)) {
		w = perflib_slot_word(perflib_slot(map, i));
		if (perflib_word_state(w) == state && perflib_word_pid(w) == pid)
			n++;
	}
	return n;
}

static unsigned int count_live_procs(const struct perflib_store *map, uint32_t pid)
{
	unsigned int n = 0;
	uint32_t i;

	for (i = 0; i < map->info->nr_procs; i++) {
		if (map->procs[i].state == PERFLIB_PROC_LIVE && map->procs[i].pid == pid)
			n++;
	}
	return n;
}

static bool pinned(const GUID *set, const char *name)
{
	char dir[512], path[600];
	struct stat st;

	assert_int_equal(perflib_store_dir(set, dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &st) == 0;
}

/*
 * Kill a child holding NR_INST instances of a set of @type and check, right after waitpid,
 * that every slot is FREE two generations on, zeroed, and that no index key is left.
 */
static void kill_and_check_names(ULONG type, int nr, bool long_names)
{
	struct child c = {.set = prov_guid(),
			  .type = type,
			  .prefix = "reap",
			  .nr = nr,
			  .long_names = long_names};
	struct perflib_store *ro;
	uint32_t gens[NR_INST], idx[NR_INST], i, n = 0;
	bool more;
	uint64_t w;
	size_t k;

	child_start(&c);
	assert_true(pinned(&c.set, "reaper"));
	assert_int_equal(perflib_store_open(&c.set, false, &ro), 0);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)c.pid), nr);
	assert_int_equal(count_keys(ro), nr);
	assert_int_equal(count_live_procs(ro, (uint32_t)c.pid), 1);
	for (more = next_id(ro, &i, true); more && n < (uint32_t)nr;
	     more = next_id(ro, &i, false)) {
		w = perflib_slot_word(perflib_slot(ro, i));
		if (perflib_word_state(w) == PERFLIB_SLOT_LIVE) {
			idx[n] = i;
			gens[n++] = perflib_word_gen(w);
		}
	}

	assert_int_equal(kill(c.pid, SIGKILL), 0);
	assert_int_equal(tl_wait(c.pid, WAIT_MS), 128 + SIGKILL);
	/* nothing ran since waitpid: only the BPF program can have freed them */
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)c.pid), 0);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_CLAIMED, (uint32_t)c.pid), 0);
	assert_int_equal(count_keys(ro), 0);
	assert_int_equal(count_live_procs(ro, (uint32_t)c.pid), 0);
	for (i = 0; i < n; i++) {
		const uint8_t *s = perflib_slot(ro, idx[i]);

		w = perflib_slot_word(s);
		assert_int_equal(perflib_word_state(w), PERFLIB_SLOT_FREE);
		assert_int_equal(perflib_word_pid(w), 0);
		assert_int_equal(perflib_word_gen(w), gens[i] + 2);
		assert_int_equal(((const struct perflib_slot_hdr *)s)->owner_start, 0);
		for (k = PERFLIB_BLOCK_OFFSET; k < ro->cls[perflib_slot_id_class(idx[i])].slot_size;
		     k++)
			assert_int_equal(s[k], 0);
	}
	/* and the lazy reaper finds nothing left to do */
	assert_int_equal(perflib_reap_counterset(&c.set), 0);
	perflib_store_close(ro);
	child_close(&c);

	/* another process creates the same (name, id) */
	c.pid = 0;
	child_start(&c);
	assert_int_equal(perflib_store_open(&c.set, false, &ro), 0);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)c.pid), nr);
	assert_int_equal(count_keys(ro), nr);
	perflib_store_close(ro);
	assert_int_equal(tl_signal(c.go[1]), 0);
	assert_int_equal(tl_wait(c.pid, WAIT_MS), 0);
	child_close(&c);
}

static void kill_and_check(ULONG type, int nr)
{
	kill_and_check_names(type, nr, false);
}

static void test_sigkill_multi(void **state)
{
	(void)state;
	kill_and_check(PERF_COUNTERSET_MULTI_INSTANCES, NR_INST);
}

/* the other key shapes: the singleton key, per-process scopes, the aggregate set */
/* the longest names (1024 units) are hashed identically by the kernel: no key left over */
static void test_sigkill_long_names(void **state)
{
	(void)state;
	kill_and_check_names(PERF_COUNTERSET_MULTI_INSTANCES, NR_INST, true);
}

static void test_sigkill_single(void **state)
{
	(void)state;
	kill_and_check(PERF_COUNTERSET_SINGLE_INSTANCE, 1);
}

static void test_sigkill_single_aggregate(void **state)
{
	(void)state;
	kill_and_check(PERF_COUNTERSET_SINGLE_AGGREGATE, 1);
}

static void test_sigkill_instance_aggregate(void **state)
{
	(void)state;
	kill_and_check(PERF_COUNTERSET_INSTANCE_AGGREGATE, NR_INST);
}

static void test_sigkill_multi_aggregate(void **state)
{
	(void)state;
	kill_and_check(PERF_COUNTERSET_MULTI_AGGREGATE, NR_INST);
}

/*
 * a provider of a new set into @c, gone without PerfStopProvider: its slots and keys are
 * gone when waitpid returns
 */
static void exit_and_check(struct child *c)
{
	struct perflib_store *ro;

	c->set = prov_guid();
	child_start(c);
	assert_int_equal(tl_signal(c->go[1]), 0);
	assert_int_equal(tl_wait(c->pid, WAIT_MS), 0);
	assert_int_equal(perflib_store_open(&c->set, false, &ro), 0);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)c->pid), 0);
	assert_int_equal(count_keys(ro), 0);
	perflib_store_close(ro);
	child_close(c);
}

/* exiting without PerfStopProvider is a process exit like any other */
static void test_exit_reaped(void **state)
{
	struct child c = {.type = PERF_COUNTERSET_MULTI_INSTANCES, .prefix = "exit", .nr = NR_INST};

	(void)state;
	exit_and_check(&c);
}

/*
 * a root made before the dispatcher kept the walk state (exit-reaper/walk): a new set's
 * reaper makes its own, and reaps as well
 */
static void test_exit_reaped_old_root(void **state)
{
	struct child c = {.type = PERF_COUNTERSET_MULTI_INSTANCES, .prefix = "old", .nr = NR_INST};
	char path[600];
	int wfd;

	(void)state;
	/* a root exists: its dispatcher is made with the first reaper */
	exit_and_check(&c);
	snprintf(path, sizeof(path), "%s/" PERFLIB_EXIT_DIR "/walk", perflib_pin_root());
	wfd = bpf_obj_get(path);
	assert_true(wfd >= 0);
	assert_int_equal(unlink(path), 0);
	exit_and_check(&c);
	/* the root as it was, for the tests after this one */
	assert_int_equal(bpf_obj_pin(wfd, path), 0);
	close(wfd);
}

/*
 * two providers of @a's set, @a started first (its slots first), then @b; the set opened
 * for reading
 */
static struct perflib_store *pair_start(struct child *a, struct child *b)
{
	struct perflib_store *ro;

	b->set = a->set;
	child_start(a);
	child_start(b);
	assert_int_equal(perflib_store_open(&a->set, false, &ro), 0);
	return ro;
}

/* the procs entry of live provider process @pid (the test fails if it has none) */
static uint32_t live_entry(struct perflib_store *ro, pid_t pid)
{
	uint32_t p;

	for (p = 0; p < ro->info->nr_procs; p++) {
		if (ro->procs[p].state == PERFLIB_PROC_LIVE && ro->procs[p].pid == (uint32_t)pid)
			break;
	}
	assert_true(p < ro->info->nr_procs);
	return p;
}

/*
 * A provider's exit frees what it held and walks only that (its owner summaries, layout.h):
 * beside another provider of the same set holding more, across segments, after deletes.
 */
static void test_reaped_beside_others(void **state)
{
	struct child a = {.set = prov_guid(),
			  .type = PERF_COUNTERSET_MULTI_INSTANCES,
			  .prefix = "held",
			  .nr = 300},
		     b = {.type = PERF_COUNTERSET_MULTI_INSTANCES, .prefix = "gone", .nr = 200};
	struct perflib_store *ro;
	uint32_t k, j, p, words;
	uint64_t w, *sum;
	int found = 0;

	(void)state;
	ro = pair_start(&a, &b);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)a.pid), 300);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)b.pid), 200);
	/* more than one segment, and b's slots past a's */
	assert_true(perflib_store_nr_segs(ro, 0) >= 3);
	/* b's procs entry's owner summaries name the bitmap words of b's slots, none of a's only */
	p = live_entry(ro, b.pid);
	for (k = 0; k < perflib_store_nr_segs(ro, 0); k++) {
		uint32_t seg0 = ro->cls[0].seg0, nr_procs = ro->info->nr_procs;
		uint64_t head = perflib_seg_at(&ro->cls[0], k)
					->live[perflib_sum_head(k, seg0, nr_procs, p)];
		uint64_t span = perflib_sum_head_span(k, seg0), sj;

		words = (uint32_t)perflib_seg_words(k, seg0);
		sum = perflib_seg_at(&ro->cls[0], k)->live + perflib_sum_word(k, seg0, p, 0);
		/* its summary head names exactly the summary words that have bits */
		for (sj = 0; sj < perflib_seg_sum_words(k, seg0); sj++)
			assert_int_equal(head >> (sj / span) & 1, sum[sj] != 0);
		for (j = 0; j < words; j++) {
			bool marked = sum[j / 64] >> (j % 64) & 1;
			uint32_t i,
				first = (uint32_t)perflib_seg_first(k, ro->cls[0].seg0) + 64 * j;
			bool holds = false;

			for (i = first; i < first + 64 && i < perflib_store_slots(ro, 0); i++) {
				w = perflib_slot_word(perflib_slot(ro, i));
				holds |= perflib_word_state(w) == PERFLIB_SLOT_LIVE &&
					 perflib_word_pid(w) == (uint32_t)b.pid;
			}
			/* a word of b's slots is marked (b deleted nothing, so no stale bit) */
			assert_int_equal(marked, holds);
			found += marked;
		}
	}
	assert_true(found >= 4); /* 200 slots: at least four bitmap words */
	/* its head in segment 0 names (bit k) exactly the segments k > 0 where its head is not 0 */
	for (k = 1; k < perflib_store_nr_segs(ro, 0); k++) {
		uint32_t seg0 = ro->cls[0].seg0, nr_procs = ro->info->nr_procs;
		uint64_t segbits = perflib_seg_at(&ro->cls[0], 0)
					   ->live[perflib_sum_head(0, seg0, nr_procs, p)];
		uint64_t head = perflib_seg_at(&ro->cls[0], k)
					->live[perflib_sum_head(k, seg0, nr_procs, p)];

		assert_int_equal(segbits >> k & 1, head != 0);
	}

	assert_int_equal(kill(b.pid, SIGKILL), 0);
	assert_int_equal(tl_wait(b.pid, WAIT_MS), 128 + SIGKILL);
	/* nothing ran since waitpid: the BPF program freed b's, and left a's */
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)b.pid), 0);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_CLAIMED, (uint32_t)b.pid), 0);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)a.pid), 300);
	assert_int_equal(count_keys(ro), 300);
	assert_int_equal(count_live_procs(ro, (uint32_t)b.pid), 0);
	/* its entry is FREE: the next claimer of it clears its summaries */
	assert_int_equal(ro->procs[p].state, PERFLIB_PROC_FREE);
	perflib_store_close(ro);
	child_close(&b);
	assert_int_equal(tl_signal(a.go[1]), 0);
	assert_int_equal(tl_wait(a.pid, WAIT_MS), 0);
	assert_int_equal(perflib_store_open(&a.set, false, &ro), 0);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)a.pid), 0);
	assert_int_equal(count_keys(ro), 0);
	perflib_store_close(ro);
	child_close(&a);
}

/* b's live slots in segment @k of class 0 */
static uint32_t count_in_seg(struct perflib_store *ro, uint32_t k, pid_t pid)
{
	uint32_t i, n = 0, seg0 = ro->cls[0].seg0;
	uint64_t w;

	for (i = (uint32_t)perflib_seg_first(k, seg0);
	     i < perflib_seg_first(k + 1, seg0) && i < perflib_store_slots(ro, 0); i++) {
		w = perflib_slot_word(perflib_slot(ro, i));
		n += perflib_word_state(w) == PERFLIB_SLOT_LIVE &&
		     perflib_word_pid(w) == (uint32_t)pid;
	}
	return n;
}

/*
 * The exit reaper reads the heads of the segments the exiting entry's segments bits name
 * only (its head in segment 0, layout.h): with the bit of one segment cleared (a corrupted
 * word), the slots there are left to the lazy reaper, every other one is freed at exit.
 */
static void test_reaped_by_segments_bits(void **state)
{
	struct child a = {.set = prov_guid(),
			  .type = PERF_COUNTERSET_MULTI_INSTANCES,
			  .prefix = "held",
			  .nr = 300},
		     b = {.type = PERF_COUNTERSET_MULTI_INSTANCES, .prefix = "segs", .nr = 200};
	char dir[PATH_MAX], path[PATH_MAX + 32];
	uint32_t p, k, top = 0, q, nr_top, nr_segs;
	struct perflib_store *ro;
	__u64 bits;
	int fd;

	(void)state;
	ro = pair_start(&a, &b);
	p = live_entry(ro, b.pid);
	nr_segs = perflib_store_nr_segs(ro, 0);
	for (k = 1; k < nr_segs; k++) {
		if (count_in_seg(ro, k, b.pid))
			top = k;
	}
	assert_true(top >= 1);
	nr_top = count_in_seg(ro, top, b.pid);
	assert_true(nr_top > 0 && nr_top < 200); /* b's slots in more than one segment */
	/* b's segments bit of that segment cleared, through the pinned map */
	q = (uint32_t)perflib_sum_head(0, ro->cls[0].seg0, ro->info->nr_procs, p);
	bits = perflib_seg_at(&ro->cls[0], 0)->live[q];
	assert_true(bits >> top & 1);
	bits &= ~(1ULL << top);
	assert_int_equal(perflib_store_dir(&a.set, dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/s0/live", dir);
	fd = bpf_obj_get(path);
	assert_true(fd >= 0);
	assert_int_equal(bpf_map_update_elem(fd, &q, &bits, BPF_ANY), 0);
	close(fd);
	assert_int_equal(kill(b.pid, SIGKILL), 0);
	assert_int_equal(tl_wait(b.pid, WAIT_MS), 128 + SIGKILL);
	/* nothing ran since waitpid: the BPF program freed b's slots but those of that segment */
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)b.pid), nr_top);
	assert_int_equal(count_in_seg(ro, top, b.pid), nr_top);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)a.pid), 300);
	/* the lazy reaper takes the rest */
	assert_int_equal(perflib_reap_counterset(&a.set), (int)nr_top);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)b.pid), 0);
	assert_int_equal(count_keys(ro), 300);
	perflib_store_close(ro);
	child_close(&b);
	assert_int_equal(tl_signal(a.go[1]), 0);
	assert_int_equal(tl_wait(a.pid, WAIT_MS), 0);
	child_close(&a);
}

/*
 * A provider that got no procs entry (every one held) has no owner summary: its exit has
 * every live slot of the set walked, as before summaries, and still frees only its own.
 */
static void test_reaped_without_entry(void **state)
{
	struct child a = {.set = prov_guid(),
			  .type = PERF_COUNTERSET_MULTI_INSTANCES,
			  .prefix = "held",
			  .nr = 128},
		     b = {.type = PERF_COUNTERSET_MULTI_INSTANCES, .prefix = "noentry", .nr = 7};
	struct perflib_proc mine = {.state = PERFLIB_PROC_LIVE};
	bool faked[PERFLIB_PROCS_DEFAULT] = {false};
	struct perflib_store *ro, *rw;
	uint32_t i, p;

	(void)state;
	b.set = a.set;
	/* a fills two bitmap words: b's slots are in words no summary of a's names */
	child_start(&a);
	/* every free entry taken by this (live) process */
	{
		uint64_t st;

		perflib_self(&mine.pid, &st);
		mine.start = st;
	}
	/* the procs entries in s0/live, mapped for writing (the test is root) */
	assert_int_equal(perflib_store_open(&a.set, true, &rw), 0);
	assert_int_equal(rw->info->nr_procs, PERFLIB_PROCS_DEFAULT);
	for (i = 0; i < PERFLIB_PROCS_DEFAULT; i++) {
		if (rw->procs[i].state == PERFLIB_PROC_LIVE)
			continue;
		mine.gen = rw->procs[i].gen + 1;
		rw->procs[i] = mine;
		faked[i] = true;
	}
	child_start(&b);
	assert_int_equal(perflib_store_open(&a.set, false, &ro), 0);
	assert_int_equal(count_live_procs(ro, (uint32_t)b.pid), 0); /* it has none */
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)b.pid), 7);
	assert_int_equal(kill(b.pid, SIGKILL), 0);
	assert_int_equal(tl_wait(b.pid, WAIT_MS), 128 + SIGKILL);
	/* nothing ran since waitpid: the BPF program walked the whole set */
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)b.pid), 0);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_CLAIMED, (uint32_t)b.pid), 0);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)a.pid), 128);
	assert_int_equal(count_keys(ro), 128);
	/* the entries back */
	for (p = 0; p < PERFLIB_PROCS_DEFAULT; p++) {
		if (!faked[p])
			continue;
		memset(&rw->procs[p], 0, sizeof(rw->procs[p]));
	}
	perflib_store_close(rw);
	perflib_store_close(ro);
	child_close(&b);
	assert_int_equal(tl_signal(a.go[1]), 0);
	assert_int_equal(tl_wait(a.pid, WAIT_MS), 0);
	child_close(&a);
}

/*
 * Owner summaries and their heads are only a guide: set to garbage (every bit, past the
 * bitmap and the summary words too), the exit reaper walks more, stays within the bitmap
 * and frees only the dead process's slots.
 */
static void test_reaped_garbage_summary(void **state)
{
	struct child a = {.set = prov_guid(),
			  .type = PERF_COUNTERSET_MULTI_INSTANCES,
			  .prefix = "held",
			  .nr = 150},
		     b = {.type = PERF_COUNTERSET_MULTI_INSTANCES, .prefix = "junk", .nr = 9};
	char dir[PATH_MAX], path[PATH_MAX + 32];
	struct perflib_store *ro;
	uint32_t p, k, j, q, words;
	__u64 ones = ~0ULL;
	int fd;

	(void)state;
	ro = pair_start(&a, &b);
	p = live_entry(ro, b.pid);
	/* every summary word and summary head of b's entry, in every segment, all ones */
	assert_int_equal(perflib_store_dir(&a.set, dir, sizeof(dir)), 0);
	for (k = 0; k < perflib_store_nr_segs(ro, 0); k++) {
		snprintf(path, sizeof(path), "%s/s%u/live", dir, k);
		fd = bpf_obj_get(path);
		assert_true(fd >= 0);
		words = (uint32_t)perflib_seg_sum_words(k, ro->cls[0].seg0);
		for (j = 0; j < words; j++) {
			q = (uint32_t)perflib_sum_word(k, ro->cls[0].seg0, p, j);
			assert_int_equal(bpf_map_update_elem(fd, &q, &ones, BPF_ANY), 0);
		}
		q = (uint32_t)perflib_sum_head(k, ro->cls[0].seg0, ro->info->nr_procs, p);
		assert_int_equal(bpf_map_update_elem(fd, &q, &ones, BPF_ANY), 0);
		close(fd);
	}
	assert_int_equal(kill(b.pid, SIGKILL), 0);
	assert_int_equal(tl_wait(b.pid, WAIT_MS), 128 + SIGKILL);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)b.pid), 0);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)a.pid), 150);
	assert_int_equal(count_keys(ro), 150);
	perflib_store_close(ro);
	child_close(&b);
	assert_int_equal(tl_signal(a.go[1]), 0);
	assert_int_equal(tl_wait(a.pid, WAIT_MS), 0);
	child_close(&a);
}

/* state letter of /proc/<pid>/stat */
static char proc_state(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return p && p[1] == ' ' ? p[2] : 0;
}

/* the group leader exits first: the process is alive until its last thread exits */
static void test_last_thread(void **state)
{
	struct child c = {.set = prov_guid(),
			  .type = PERF_COUNTERSET_MULTI_INSTANCES,
			  .prefix = "thr",
			  .nr = NR_INST,
			  .thread = true};
	struct perflib_store *ro;
	int waited;

	(void)state;
	child_start(&c);
	/* the leader is a zombie once its thread is gone */
	for (waited = 0; proc_state(c.pid) != 'Z' && waited < WAIT_MS; waited += 5)
		usleep(5000);
	assert_int_equal(proc_state(c.pid), 'Z');
	assert_int_equal(perflib_store_open(&c.set, false, &ro), 0);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)c.pid), NR_INST);
	assert_int_equal(count_keys(ro), NR_INST);
	/* the last threads leave: now the process is gone */
	assert_int_equal(tl_signal(c.go[1]), 0);
	assert_int_equal(tl_wait(c.pid, WAIT_MS), 0);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)c.pid), 0);
	assert_int_equal(count_keys(ro), 0);
	perflib_store_close(ro);
	child_close(&c);
}

/* ---- one dispatcher, many counter sets ---------------------------------------------------- */

#define MANY_SETS (PERFLIB_EXIT_SETS + 2)

struct many {
	GUID sets[MANY_SETS];
	int ready[2], go[2];
	bool stop; /* PerfStopProvider before signalling ready */
};

/* a provider of MANY_SETS counter sets, two instances in each */
static int child_many(void *p)
{
	struct many *m = p;
	GUID pg = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h;
	int k;

	if (PerfStartProvider(&pg, NULL, &h))
		return 2;
	for (k = 0; k < MANY_SETS; k++) {
		prov_tmpl_std(&t, m->sets[k], PERF_COUNTERSET_MULTI_INSTANCES);
		if (prov_tmpl_register(h, &t) || !PerfCreateInstance(h, &m->sets[k], u"m0", 0) ||
		    !PerfCreateInstance(h, &m->sets[k], u"m1", 1))
			return 3;
	}
	if (m->stop && PerfStopProvider(h))
		return 4;
	tl_signal(m->ready[1]);
	tl_await(m->go[0], 60000);
	return 0;
}

/* a child_many process with new sets (stopping its provider before ready with @stop) */
static pid_t many_start(struct many *m, bool stop)
{
	pid_t pid;
	int k;

	memset(m, 0, sizeof(*m));
	for (k = 0; k < MANY_SETS; k++)
		m->sets[k] = prov_guid();
	m->stop = stop;
	assert_int_equal(tl_pipe(m->ready), 0);
	assert_int_equal(tl_pipe(m->go), 0);
	pid = tl_fork(child_many, m);
	assert_true(pid > 0);
	/* MANY_SETS registrations, each loading a reaper program: slow under sanitizers */
	if (tl_await(m->ready[0], 6 * WAIT_MS))
		fail_msg("provider child exited early (%d)", tl_wait(pid, WAIT_MS));
	return pid;
}

static void many_close(struct many *m)
{
	close(m->ready[0]);
	close(m->ready[1]);
	close(m->go[0]);
	close(m->go[1]);
}

/* the dispatcher's entry for @pid, false if none */
static bool provs_entry(uint32_t pid, struct perflib_exit_val *ret)
{
	struct perflib_exit_key key, next;
	char path[600];
	bool found = false;
	void *prev = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/" PERFLIB_EXIT_DIR "/provs", perflib_pin_root());
	fd = bpf_obj_get(path);
	assert_true(fd >= 0);
	while (!found && bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (key.pid == pid)
			found = bpf_map_lookup_elem(fd, &key, ret) == 0;
	}
	close(fd);
	return found;
}

static unsigned int live_of(const GUID *set, uint32_t pid)
{
	struct perflib_store *ro;
	unsigned int n;

	assert_int_equal(perflib_store_open(set, false, &ro), 0);
	n = count_slots(ro, PERFLIB_SLOT_LIVE, pid);
	perflib_store_close(ro);
	return n;
}

/*
 * One exit program for the root: a provider of more sets than its entry can name is
 * killed; the kernel frees its slots in the first PERFLIB_EXIT_SETS sets before waitpid
 * returns (one tail call per set), the rest are left to the lazy reaper, and its entry goes.
 */
static void test_many_sets(void **state)
{
	struct perflib_exit_val v;
	struct many m;
	pid_t pid;
	int k;

	(void)state;
	pid = many_start(&m, false);
	assert_true(provs_entry((uint32_t)pid, &v));
	assert_int_equal(v.nr, PERFLIB_EXIT_SETS);
	assert_int_equal(v.overflow, 1);
	for (k = 0; k < MANY_SETS; k++)
		assert_int_equal(live_of(&m.sets[k], (uint32_t)pid), 2);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(tl_wait(pid, WAIT_MS), 128 + SIGKILL);
	for (k = 0; k < MANY_SETS; k++)
		assert_int_equal(live_of(&m.sets[k], (uint32_t)pid), k < PERFLIB_EXIT_SETS ? 0 : 2);
	assert_false(provs_entry((uint32_t)pid, &v));
	for (k = PERFLIB_EXIT_SETS; k < MANY_SETS; k++)
		assert_int_equal(perflib_reap_counterset(&m.sets[k]), 2);
	many_close(&m);
}

/* PerfStopProvider takes the process out of the dispatcher's table */
static void test_stop_leaves(void **state)
{
	struct perflib_exit_val v;
	struct many m;
	pid_t pid;

	(void)state;
	pid = many_start(&m, true);
	/* the overflow flag keeps an entry with no set: harmless, gone at exit */
	if (provs_entry((uint32_t)pid, &v))
		assert_int_equal(v.nr, 0);
	assert_int_equal(tl_signal(m.go[1]), 0);
	assert_int_equal(tl_wait(pid, WAIT_MS), 0);
	assert_false(provs_entry((uint32_t)pid, &v));
	many_close(&m);
}

/* lodctr's path: registering attaches the reaper; unregistering removes every pin */
static void test_register_pins(void **state)
{
	struct perflib_counter_reg regs[1] = {{
		.id = 1,
		.type = PERF_COUNTER_BULK_COUNT,
		.name = "c",
		.base_id = 0xFFFFFFFF,
		.perf_time_id = 0xFFFFFFFF,
		.perf_freq_id = 0xFFFFFFFF,
		.multi_id = 0xFFFFFFFF,
	}};
	struct perflib_counterset_reg reg = {
		.provider_guid = prov_provider_guid(),
		.counterset_guid = prov_guid(),
		.instance_type = PERF_COUNTERSET_MULTI_INSTANCES,
		.name = "reaper test",
		.nr_counters = 1,
		.counters = regs,
	};
	struct bpf_link_info li;
	struct bpf_prog_info pi;
	__u32 len = sizeof(li), plen = sizeof(pi), id, prog_id, key = 0;
	struct perflib_ctl ctl, owner_ctl;
	struct perflib_store *ro;
	char dir[512], path[600];
	uint8_t owner[16];
	struct stat st;
	int fd, progs, ids;

	(void)state;
	assert_int_equal(perflib_register_counterset(&reg, NULL), 0);
	assert_true(pinned(&reg.counterset_guid, "reaper"));
	assert_int_equal(perflib_store_dir(&reg.counterset_guid, dir, sizeof(dir)), 0);
	/* the set's reaper: a tracing program, not attached itself */
	snprintf(path, sizeof(path), "%s/reaper", dir);
	fd = bpf_obj_get(path);
	assert_true(fd >= 0);
	memset(&pi, 0, sizeof(pi));
	assert_int_equal(bpf_obj_get_info_by_fd(fd, &pi, &plen), 0);
	assert_int_equal(pi.type, BPF_PROG_TYPE_TRACING);
	prog_id = pi.id;
	/*
	 * the verifier checks each walk function once: 3,103 instructions processed on 6.18,
	 * where checking the walk in its callers' states processed 189,816 (0.5 s of CPU for
	 * each counter set registered, seconds on a loaded machine)
	 */
	if (pi.verified_insns > 30000)
		fail_msg("the reaper took %u verified instructions", pi.verified_insns);
	/* its walk state is the root's one (exit-reaper/walk), not a map per counter set */
	{
		__u32 map_ids[32], n = 32, k, walk_id;
		struct bpf_map_info mi;
		__u32 mlen = sizeof(mi);
		int wfd;
		bool found = false;

		memset(&pi, 0, sizeof(pi));
		pi.nr_map_ids = n;
		pi.map_ids = (__u64)(uintptr_t)map_ids;
		plen = sizeof(pi);
		assert_int_equal(bpf_obj_get_info_by_fd(fd, &pi, &plen), 0);
		snprintf(path, sizeof(path), "%s/" PERFLIB_EXIT_DIR "/walk", perflib_pin_root());
		wfd = bpf_obj_get(path);
		assert_true(wfd >= 0);
		memset(&mi, 0, sizeof(mi));
		assert_int_equal(bpf_obj_get_info_by_fd(wfd, &mi, &mlen), 0);
		assert_int_equal(mi.type, BPF_MAP_TYPE_PERCPU_ARRAY);
		walk_id = mi.id;
		close(wfd);
		for (k = 0; k < pi.nr_map_ids && k < n; k++)
			found |= map_ids[k] == walk_id;
		assert_true(found);
	}
	close(fd);
	/* its exit id in the control entry, the same program in the dispatcher's progs, the
	 * id taken */
	snprintf(path, sizeof(path), "%s/s0/live", dir);
	fd = bpf_obj_get(path);
	assert_true(fd >= 0);
	assert_int_equal(perflib_ctl_read(fd, &ctl), 0);
	/* the last 8 words of class 0's s0/live, after its bitmap and pending words */
	assert_int_equal(perflib_store_open(&reg.counterset_guid, false, &ro), 0);
	assert_int_equal(ro->info->nr_procs, PERFLIB_PROCS_DEFAULT);
	memset(&owner_ctl, 0xAA, sizeof(owner_ctl));
	for (key = 0; key < PERFLIB_CTL_WORDS; key++) {
		__u32 k = perflib_ctl_word(ro->cls[0].seg0, ro->info->nr_procs) + key;

		assert_int_equal(bpf_map_lookup_elem(fd, &k, (__u64 *)&owner_ctl + key), 0);
	}
	assert_memory_equal(&owner_ctl, &ctl, sizeof(ctl));
	/* the same words a reader maps */
	assert_memory_equal(ro->ctl, &ctl, sizeof(ctl));
	perflib_store_close(ro);
	close(fd);
	/* not a live map: refused */
	snprintf(path, sizeof(path), "%s/info", dir);
	fd = bpf_obj_get(path);
	assert_true(fd >= 0);
	assert_int_equal(perflib_ctl_read(fd, &owner_ctl), -EBADMSG);
	close(fd);
	id = ctl.exit_id;
	assert_true(id > 0 && id < PERFLIB_EXIT_IDS);
	snprintf(path, sizeof(path), "%s/" PERFLIB_EXIT_DIR "/progs", perflib_pin_root());
	progs = bpf_obj_get(path);
	assert_true(progs >= 0);
	{
		__u32 got;

		assert_int_equal(bpf_map_lookup_elem(progs, &id, &got), 0);
		assert_int_equal(got, prog_id);
	}
	snprintf(path, sizeof(path), "%s/" PERFLIB_EXIT_DIR "/ids", perflib_pin_root());
	ids = bpf_obj_get(path);
	assert_true(ids >= 0);
	assert_int_equal(bpf_map_lookup_elem(ids, &id, owner), 0);
	assert_memory_equal(owner, &reg.counterset_guid, 16);
	/*
	 * the two hashes are not preallocated: their elements follow the providers and sets
	 * there are (provs preallocated for its 65,536 entries was 9.4 MB of kernel memory)
	 */
	{
		unsigned long long maps = 0, progs_mem = 0;
		struct bpf_map_info mi;
		__u32 mlen = sizeof(mi);
		int provs;

		memset(&mi, 0, sizeof(mi));
		assert_int_equal(bpf_obj_get_info_by_fd(ids, &mi, &mlen), 0);
		assert_true(mi.map_flags & BPF_F_NO_PREALLOC);
		snprintf(path, sizeof(path), "%s/" PERFLIB_EXIT_DIR "/provs", perflib_pin_root());
		provs = bpf_obj_get(path);
		assert_true(provs >= 0);
		memset(&mi, 0, sizeof(mi));
		mlen = sizeof(mi);
		assert_int_equal(bpf_obj_get_info_by_fd(provs, &mi, &mlen), 0);
		assert_true(mi.map_flags & BPF_F_NO_PREALLOC);
		assert_int_equal(mi.max_entries, PERFLIB_EXIT_PROVS);
		close(provs);
		snprintf(path, sizeof(path), "%s/" PERFLIB_EXIT_DIR, perflib_pin_root());
		tl_dir_memlock(path, &maps, &progs_mem);
		if (maps > 2 << 20)
			fail_msg("the exit dispatcher's maps hold %llu bytes", maps);
	}
	/* one dispatcher for the root, attached to the exit tracepoint */
	snprintf(path, sizeof(path), "%s/" PERFLIB_EXIT_DIR "/link", perflib_pin_root());
	fd = bpf_obj_get(path);
	assert_true(fd >= 0);
	memset(&li, 0, sizeof(li));
	assert_int_equal(bpf_obj_get_info_by_fd(fd, &li, &len), 0);
	assert_int_equal(li.type, BPF_LINK_TYPE_RAW_TRACEPOINT); /* tp_btf */
	close(fd);
	/* registering again is a no-op that keeps the one reaper */
	assert_int_equal(perflib_register_counterset(&reg, NULL), -EEXIST);
	assert_int_equal(perflib_unregister_counterset(&reg.counterset_guid, false), 0);
	assert_int_not_equal(stat(dir, &st), 0);
	/* and unregistering takes its program out of the dispatcher and frees the id */
	{
		__u32 got;

		assert_int_not_equal(bpf_map_lookup_elem(progs, &id, &got), 0);
		assert_int_not_equal(bpf_map_lookup_elem(ids, &id, owner), 0);
	}
	close(progs);
	close(ids);
}

static int child_disabled(void *p)
{
	GUID *set = p;
	GUID pg = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h;

	setenv("PERFLIB_KERNEL_REAPER", "0", 1);
	prov_tmpl_std(&t, *set, PERF_COUNTERSET_MULTI_INSTANCES);
	if (PerfStartProvider(&pg, NULL, &h) || prov_tmpl_register(h, &t))
		return 2;
	return PerfStopProvider(h) ? 3 : 0;
}

/* PerfSetCounterSetInfo attaches it for a counter set created on demand, unless disabled */
static void test_provider_hook(void **state)
{
	GUID set = prov_guid();
	HANDLE h;

	(void)state;
	assert_int_equal(tl_wait(tl_fork(child_disabled, &set), WAIT_MS), 0);
	assert_false(pinned(&set, "reaper"));
	assert_true(pinned(&set, "s0/data"));
	assert_int_equal(perflib_unregister_counterset(&set, false), 0);
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	assert_true(pinned(&set, "reaper"));
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_int_equal(perflib_unregister_counterset(&set, false), 0);
}

static int child_unprivileged(void *p)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2];
	GUID *set = p;
	struct perflib_store *map;
	int err;

	if (perflib_store_open(set, true, &map))
		return 2;
	/* no effective capabilities: what a provider started by an ordinary user has */
	if (syscall(SYS_capget, &hdr, d))
		return 3;
	d[0].effective = d[1].effective = 0;
	if (syscall(SYS_capset, &hdr, d))
		return 4;
	err = perflib_reaper_attach(map);
	perflib_store_close(map);
	return err == -EPERM ? 0 : 5;
}

/* without privileges it is skipped, silently */
static void test_unprivileged(void **state)
{
	GUID set = prov_guid();
	HANDLE h;

	(void)state;
	/* a set without reaper: created by a provider that had it disabled */
	setenv("PERFLIB_KERNEL_REAPER", "0", 1);
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	setenv("PERFLIB_KERNEL_REAPER", "1", 1);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_false(pinned(&set, "reaper"));
	assert_int_equal(tl_wait(tl_fork(child_unprivileged, &set), WAIT_MS), 0);
	assert_false(pinned(&set, "reaper"));
	assert_int_equal(perflib_unregister_counterset(&set, false), 0);
}

/* kernel-owned instances outlive their creator; a loader takes them back to delete them */
static void test_kernel_owned(void **state)
{
	struct child c = {.set = prov_guid(),
			  .type = PERF_COUNTERSET_MULTI_INSTANCES,
			  .prefix = "kern",
			  .nr = NR_INST,
			  .give = true};
	struct perflib_store *ro;
	struct prov_tmpl t;
	GUID pg = prov_provider_guid();
	const uint8_t *s;
	HANDLE h;
	uint32_t i;

	(void)state;
	child_start(&c);
	assert_int_equal(tl_wait(c.pid, WAIT_MS), 0);
	assert_int_equal(perflib_store_open(&c.set, false, &ro), 0);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, 0), NR_INST);
	assert_int_equal(count_keys(ro), NR_INST);
	for (i = 0; i < perflib_store_slots(ro, 0); i++) {
		s = perflib_slot(ro, i);
		if (perflib_word_state(perflib_slot_word(s)) != PERFLIB_SLOT_LIVE)
			continue;
		assert_true(((const struct perflib_slot_hdr *)s)->owner_start ==
			    PERFLIB_OWNER_KERNEL);
		assert_int_equal(perflib_proc_alive(0, PERFLIB_OWNER_KERNEL), 1);
	}
	/* no reaper frees them, and their names stay taken */
	assert_int_equal(perflib_reap_counterset(&c.set), 0);
	prov_tmpl_std(&t, c.set, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(PerfStartProvider(&pg, NULL, &h), ERROR_SUCCESS);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	assert_null(PerfCreateInstance(h, &c.set, u"kern0", 100));
	assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	/* taken back, they are this provider's, and stopping deletes them */
	assert_int_equal(perflib_kernel_instances_take(h, &c.set), NR_INST);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)getpid()), NR_INST);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, 0), 0);
	assert_int_equal(count_slots(ro, PERFLIB_SLOT_LIVE, (uint32_t)getpid()), 0);
	assert_int_equal(count_keys(ro), 0);
	perflib_store_close(ro);
	child_close(&c);
	assert_int_equal(perflib_unregister_counterset(&c.set, false), 0);
}

/* ---- many providers killed at random moments while they create and delete ---------------- */

#define STRESS_PROCS 4
#define STRESS_KILLS 40
#define STRESS_NAMES 48

static int child_churn(void *p)
{
	const GUID *set = p;
	PPERF_COUNTERSET_INSTANCE held[STRESS_NAMES] = {0};
	GUID pg = prov_provider_guid();
	struct prov_tmpl t;
	WCHAR name[16];
	unsigned int r = (unsigned int)getpid();
	HANDLE h;
	int k;

	prov_tmpl_std(&t, *set, PERF_COUNTERSET_MULTI_INSTANCES);
	if (PerfStartProvider(&pg, NULL, &h) || prov_tmpl_register(h, &t))
		return 2;
	for (;;) {
		r = r * 1103515245 + 12345;
		k = (int)((r >> 16) % STRESS_NAMES);
		if (held[k]) {
			PerfDeleteInstance(h, held[k]);
			held[k] = NULL;
		} else {
			/* names collide across processes: ERROR_ALREADY_EXISTS is fine */
			held[k] = PerfCreateInstance(h, set, prov_wname(name, 16, "n%d", k), 7);
		}
	}
	return 0;
}

static void test_stress(void **state)
{
	GUID set = prov_guid();
	pid_t pids[STRESS_PROCS];
	struct perflib_store *ro;
	unsigned int r = 1;
	int i, kills, left = 0;
	HANDLE h;

	(void)state;
	/* the counter set and its reaper exist before the children race to create it */
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_true(pinned(&set, "reaper"));
	for (i = 0; i < STRESS_PROCS; i++)
		pids[i] = tl_fork(child_churn, &set);
	for (kills = 0; kills < STRESS_KILLS; kills++) {
		r = r * 1103515245 + 12345;
		usleep(1000 + (r >> 16) % 20000);
		i = (int)((r >> 8) % STRESS_PROCS);
		assert_int_equal(kill(pids[i], SIGKILL), 0);
		assert_int_equal(tl_wait(pids[i], WAIT_MS), 128 + SIGKILL);
		pids[i] = tl_fork(child_churn, &set);
	}
	/* they were busy: instances live right now */
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	assert_true(count_keys(ro) > 0);
	perflib_store_close(ro);
	for (i = 0; i < STRESS_PROCS; i++) {
		assert_int_equal(kill(pids[i], SIGKILL), 0);
		assert_int_equal(tl_wait(pids[i], WAIT_MS), 128 + SIGKILL);
	}
	/*
	 * Every slot came back, whatever each process was doing when it died; except two
	 * cases the exit reaper leaves to the lazy one, both CLAIMED with a dead owner: a slot
	 * claimed before its owner wrote its start time (a few instructions of
	 * PerfCreateInstance, before any key exists), and a slot that a process was reaping
	 * when it was killed itself (the word keeps the first dead owner, whose exit has
	 * passed). perflib_reap_counterset() then frees those slots and their keys.
	 */
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	for (i = 0; i < (int)perflib_store_slots(ro, 0); i++) {
		const uint8_t *s = perflib_slot(ro, (uint32_t)i);
		const struct perflib_slot_hdr *hdr = (const void *)s;
		uint64_t w = perflib_slot_word(s);

		if (perflib_word_state(w) == PERFLIB_SLOT_FREE)
			continue;
		assert_int_equal(perflib_word_state(w), PERFLIB_SLOT_CLAIMED);
		assert_true(hdr->owner_start == 0 ||
			    !perflib_proc_alive(perflib_word_pid(w), hdr->owner_start));
		left++;
	}
	perflib_store_close(ro);
	assert_true(left <= STRESS_KILLS);
	assert_int_equal(perflib_reap_counterset(&set), left);
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	for (i = 0; i < (int)perflib_store_slots(ro, 0); i++)
		assert_int_equal(
			perflib_word_state(perflib_slot_word(perflib_slot(ro, (uint32_t)i))),
			PERFLIB_SLOT_FREE);
	assert_int_equal(count_keys(ro), 0);
	perflib_store_close(ro);
}

/* can this machine run the reaper? skip (77) with the reason if not */
static void require_reaper(void)
{
	const char *req = getenv("PERFLIB_REQUIRE_BPF");
	struct perflib_store *map;
	GUID set = prov_guid();
	bool started;
	HANDLE h;
	int err;

	if (!tl_root_create())
		exit(1);
	setenv("PERFLIB_KERNEL_REAPER", "0", 1);
	started = prov_std_start(&h, &set) == ERROR_SUCCESS;
	err = started ? 0 : -EIO;
	setenv("PERFLIB_KERNEL_REAPER", "1", 1);
	if (!err)
		err = perflib_store_open(&set, true, &map);
	if (!err) {
		err = perflib_reaper_attach(map);
		perflib_store_close(map);
	}
	/* stopped whatever happened: the skip below leaves nothing pinned */
	if (started)
		PerfStopProvider(h);
	tl_root_remove();
	if (!err)
		return;
	if (req && !strcmp(req, "1")) {
		fprintf(stderr, "FAIL: the exit reaper cannot be attached (%s)\n", strerror(-err));
		exit(1);
	}
	fprintf(stderr, "SKIP: the exit reaper cannot be attached here (%s)\n", strerror(-err));
	exit(TL_SKIP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sigkill_multi),
		cmocka_unit_test(test_sigkill_long_names),
		cmocka_unit_test(test_sigkill_single),
		cmocka_unit_test(test_sigkill_single_aggregate),
		cmocka_unit_test(test_sigkill_instance_aggregate),
		cmocka_unit_test(test_sigkill_multi_aggregate),
		cmocka_unit_test(test_exit_reaped),
		cmocka_unit_test(test_exit_reaped_old_root),
		cmocka_unit_test(test_reaped_beside_others),
		cmocka_unit_test(test_reaped_by_segments_bits),
		cmocka_unit_test(test_reaped_without_entry),
		cmocka_unit_test(test_reaped_garbage_summary),
		cmocka_unit_test(test_last_thread),
		cmocka_unit_test(test_register_pins),
		cmocka_unit_test(test_many_sets),
		cmocka_unit_test(test_stop_leaves),
		cmocka_unit_test(test_provider_hook),
		cmocka_unit_test(test_unprivileged),
		cmocka_unit_test(test_kernel_owned),
		cmocka_unit_test(test_stress),
	};

	tl_require_bpf();
	require_reaper();
	/* this test is about the kernel reaper: on, whatever the environment says */
	setenv("PERFLIB_KERNEL_REAPER", "1", 1);
	return cmocka_run_group_tests_name("reaper", tests, tl_group_setup, tl_group_teardown);
}

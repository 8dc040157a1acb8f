// SPDX-License-Identifier: MIT
/*
 * test_shrink.c - segments given back (perflib_store_shrink, docs/ARCHITECTURE.md
 * "Retirement"): a set whose instances were all deleted is back to its empty size and its
 * retired maps are freed once every process dropped them; a consumer process that opened
 * the set before sees it shrink and grow again without reopening; the top segment stays
 * while the rest is nearly full; claims racing retirements from two processes never create
 * an instance consumers cannot see; a retirer killed midway (its lock, its half-done
 * retirement, its private directories) stops nothing; segments a killed provider's instances
 * filled (freed by the exit reaper) are given back by the set's next provider; the room a BPF
 * loader reserved is kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "testlib.h"
#include "internal.h"
#include "../helpers/prov_util.h"

#define NAME_MAX_UNITS 33 /* one size class */
#define INST_MAX 4096

static PPERF_COUNTERSET_INSTANCE inst[INST_MAX];

/* slots of segment 0 of @set (segments 4o..4o+3 hold seg0 << o each: perflib_seg_first) */
static int seg0_of(const GUID *set)
{
	int n = (int)tl_seg0(set, 0);

	assert_true(n > 0 && n * 15 <= INST_MAX);
	return n;
}

/* instances of @set a consumer lists, and how many of them start with @prefix */
static size_t listed(const GUID *set, const char *prefix, size_t *ret_prefixed)
{
	static BYTE buf[1 << 21];
	DWORD need = 0;
	PERF_INSTANCE_HEADER *hd;
	size_t off, n = 0, i, pl = strlen(prefix);

	*ret_prefixed = 0;
	if (PerfEnumerateCounterSetInstances(NULL, set, (void *)buf, sizeof(buf), &need) !=
	    ERROR_SUCCESS)
		return (size_t)-1;
	for (off = 0; off < need; off += hd->Size, n++) {
		const WCHAR *w;

		hd = (void *)(buf + off);
		w = (const WCHAR *)(hd + 1);
		for (i = 0; i < pl && w[i] == (WCHAR)prefix[i]; i++)
			;
		if (i == pl)
			(*ret_prefixed)++;
	}
	return n;
}

/* the kernel's memory of every map pinned under @dir (its programs not counted) */
static unsigned long long pinned_memlock(const char *dir)
{
	unsigned long long maps = 0, progs = 0;

	tl_dir_memlock(dir, &maps, &progs);
	return maps;
}

/* the kernel's id of the data map of segment @k (class 0) of @set, 0 if not pinned */
static uint32_t seg_data_id(const GUID *set, uint32_t k)
{
	struct bpf_map_info mi;
	__u32 len = sizeof(mi);
	char dir[PATH_MAX], path[PATH_MAX + 32];
	int fd;

	assert_int_equal(perflib_store_dir(set, dir, sizeof(dir)), 0);
	snprintf(path, sizeof(path), "%s/s%u/data", dir, k);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	memset(&mi, 0, sizeof(mi));
	assert_int_equal(bpf_obj_get_info_by_fd(fd, &mi, &len), 0);
	close(fd);
	return mi.id;
}

/* is map @id gone from the kernel (freed)? waits up to 3 s: the kernel frees it deferred */
static bool map_freed(uint32_t id)
{
	int i, fd;

	for (i = 0; i < 300; i++) {
		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0 && errno == ENOENT)
			return true;
		if (fd >= 0)
			close(fd);
		usleep(10000);
	}
	return false;
}

static int ctl_segs(const GUID *set)
{
	return tl_published_segs(set, 0);
}

/* a consumer process: on each byte from @cmd_fd, list the set and answer the count */
struct consumer_arg {
	GUID set;
	int cmd_fd, ans_fd, other_fd; /* other_fd: the parent's end, closed here */
};

static int consumer(void *p)
{
	struct consumer_arg *a = p;
	size_t pre;
	char c;
	int n;

	close(a->other_fd);
	while (read(a->cmd_fd, &c, 1) == 1) {
		n = (int)listed(&a->set, "g", &pre);
		if (write(a->ans_fd, &n, sizeof(n)) != sizeof(n))
			return 2;
	}
	return 0;
}

static int ask(int cmd, int ans)
{
	int n = -1;

	assert_int_equal(write(cmd, "?", 1), 1);
	assert_int_equal(read(ans, &n, sizeof(n)), sizeof(n));
	return n;
}

static void create_n(HANDLE h, const GUID *set, PPERF_COUNTERSET_INSTANCE *inst, int n)
{
	WCHAR name[32];
	int i;

	for (i = 0; i < n; i++) {
		inst[i] = PerfCreateInstance(h, set, prov_wname(name, 32, "g%d", i), (ULONG)i);
		assert_non_null(inst[i]);
		assert_int_equal(PerfSetULongLongCounterValue(h, inst[i], PROV_STD_LARGE, i), 0);
	}
}

/*
 * All deleted: back to the empty set's kernel memory, the retired maps freed once the
 * provider, a reader and a consumer process dropped them; grown again, the consumer that
 * opened the set before lists the new instances, and so does the reader.
 */
static void test_all_deleted(void **state)
{
	struct consumer_arg ca;
	struct perflib_store *ro;
	unsigned long long empty, full;
	char dir[PATH_MAX], path[PATH_MAX + 16];
	int cmd[2], ans[2], i, N;
	uint32_t old_id;
	size_t pre;
	HANDLE h;
	GUID set;
	pid_t pid;

	(void)state;
	assert_int_equal(perflib_set_capacity(0, NAME_MAX_UNITS), 0);
	assert_int_equal(prov_std_start(&h, &set), 0);
	N = 7 * seg0_of(&set); /* segments 0..5, two octaves (8 x segment 0 in all) */
	assert_int_equal(perflib_store_dir(&set, dir, sizeof(dir)), 0);
	empty = pinned_memlock(dir);
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	assert_int_equal(tl_pipe(cmd), 0);
	assert_int_equal(tl_pipe(ans), 0);
	ca = (struct consumer_arg){set, cmd[0], ans[1], cmd[1]};
	pid = tl_fork(consumer, &ca);
	assert_true(pid > 0);
	assert_int_equal(ask(cmd[1], ans[0]), 0);

	create_n(h, &set, inst, N);
	assert_int_equal(ctl_segs(&set), 6);
	full = pinned_memlock(dir);
	assert_true(full > empty + (unsigned long long)N * 200);
	assert_int_equal(ask(cmd[1], ans[0]), N);
	assert_int_equal(perflib_store_refresh(ro), 0);
	assert_int_equal(perflib_store_nr_segs(ro, 0), 6);
	old_id = seg_data_id(&set, 5);
	assert_true(old_id > 0);

	for (i = 0; i < N; i++)
		assert_int_equal(PerfDeleteInstance(h, inst[i]), 0);
	/* published, pinned and charged: segment 0 only, as registered */
	assert_int_equal(ctl_segs(&set), 1);
	for (i = 1; i < 6; i++) {
		snprintf(path, sizeof(path), "%s/s%d", dir, i);
		assert_int_equal(access(path, F_OK), -1);
	}
	assert_int_equal(pinned_memlock(dir), empty);
	/* every process drops the retired maps at its next look: then the kernel frees them */
	assert_int_equal(ask(cmd[1], ans[0]), 0);
	assert_int_equal(perflib_store_refresh(ro), 0);
	assert_int_equal(perflib_store_nr_segs(ro, 0), 1);
	assert_true(map_freed(old_id));

	/* grown again: new maps where the old were; everyone opened before sees them */
	create_n(h, &set, inst, N);
	assert_int_equal(ctl_segs(&set), 6);
	assert_true(seg_data_id(&set, 5) != old_id);
	assert_int_equal(ask(cmd[1], ans[0]), N);
	assert_int_equal(listed(&set, "g", &pre), (size_t)N);
	assert_int_equal(perflib_store_refresh(ro), 0);
	assert_int_equal(perflib_store_nr_segs(ro, 0), 6);
	/* the reader's mapping of the last instance is the new segment's */
	{
		const uint8_t *slot = perflib_slot(ro, (uint32_t)(N - 1));
		const PERF_COUNTERSET_INSTANCE *b = (const void *)(slot + PERFLIB_BLOCK_OFFSET);

		assert_int_equal(b->InstanceId, N - 1);
		assert_int_equal(perflib_word_state(perflib_slot_word(slot)), PERFLIB_SLOT_LIVE);
	}
	/* values through the pointers the provider holds, read back by a consumer */
	assert_int_equal(PerfSetULongLongCounterValue(h, inst[N - 1], PROV_STD_LARGE, 77), 0);
	assert_int_equal(*(ULONGLONG *)prov_slot(inst[N - 1], 1), 77);

	close(cmd[1]);
	assert_int_equal(tl_wait(pid, 10000), 0);
	close(ans[0]);
	perflib_store_close(ro);
	/* stopping deletes them all: given back again */
	assert_int_equal(PerfStopProvider(h), 0);
	assert_int_equal(ctl_segs(&set), 1);
	assert_int_equal(perflib_set_capacity(PROV_CAPACITY_DEFAULT, PERFLIB_NAME_MAX_DEFAULT), 0);
}

/* the top segment stays while the segments below are more than 3/4 full */
static void test_hysteresis(void **state)
{
	HANDLE h;
	GUID set;
	int i, N, BELOW;

	(void)state;
	assert_int_equal(perflib_set_capacity(0, NAME_MAX_UNITS), 0);
	assert_int_equal(prov_std_start(&h, &set), 0);
	N = 7 * seg0_of(&set);	   /* segments 0..5 */
	BELOW = 6 * seg0_of(&set); /* the slots of segments 0..4 (perflib_seg_first(5)) */
	create_n(h, &set, inst, N);
	assert_int_equal(ctl_segs(&set), 6);
	/* segment 5 emptied, 0..4 full: kept (a create would need it at once) */
	for (i = BELOW; i < N; i++)
		assert_int_equal(PerfDeleteInstance(h, inst[i]), 0);
	assert_int_equal(ctl_segs(&set), 6);
	/* 7/8 full: kept */
	for (i = 0; i < BELOW / 8; i++)
		assert_int_equal(PerfDeleteInstance(h, inst[i]), 0);
	assert_int_equal(ctl_segs(&set), 6);
	/* below 3/4 (looked at every 64 deletes at least): retired */
	for (; i < BELOW / 4 + 64; i++)
		assert_int_equal(PerfDeleteInstance(h, inst[i]), 0);
	assert_int_equal(ctl_segs(&set), 5);
	/* the instances left are untouched and their creator's */
	for (; i < BELOW; i++) {
		assert_int_equal(inst[i]->InstanceId, (ULONG)i);
		assert_int_equal(*(ULONGLONG *)prov_slot(inst[i], 1), (ULONGLONG)i);
	}
	assert_int_equal(PerfStopProvider(h), 0);
	assert_int_equal(perflib_set_capacity(PROV_CAPACITY_DEFAULT, PERFLIB_NAME_MAX_DEFAULT), 0);
}

struct race_arg {
	GUID set;
	int go_fd;
	int rounds;
	int seg0;
};

/* grow past segment 0 and delete everything again, @rounds times: retirements */
static int churner(void *p)
{
	struct race_arg *a = p;
	WCHAR name[32];
	HANDLE h;
	int r, i, n;

	if (prov_std_provide(&a->set, &h))
		return 2;
	n = 6 * a->seg0; /* segments 0..4 */
	if (tl_await(a->go_fd, 10000))
		return 3;
	for (r = 0; r < a->rounds; r++) {
		for (i = 0; i < n; i++) {
			inst[i] = PerfCreateInstance(h, &a->set,
						     prov_wname(name, 32, "c%d-%d", r, i), 0);
			if (!inst[i])
				return 4;
		}
		for (i = 0; i < n; i++) {
			if (PerfDeleteInstance(h, inst[i]))
				return 5;
		}
	}
	return PerfStopProvider(h) ? 6 : 0;
}

/*
 * each instance created while the other process grows and retires segments is listed by a
 * consumer (never created in a segment being retired) and its block is its own
 */
static int claimer(void *p)
{
	struct race_arg *a = p;
	PPERF_COUNTERSET_INSTANCE mine[40];
	WCHAR name[32];
	size_t pre;
	HANDLE h;
	int r, i;

	if (prov_std_provide(&a->set, &h))
		return 2;
	if (tl_await(a->go_fd, 10000))
		return 3;
	for (r = 0; r < a->rounds * 20; r++) {
		for (i = 0; i < 40; i++) {
			mine[i] = PerfCreateInstance(h, &a->set,
						     prov_wname(name, 32, "k%d-%d", r, i), 1);
			if (!mine[i])
				return 4;
		}
		listed(&a->set, "k", &pre);
		if (pre != 40) {
			fprintf(stderr, "round %d: %zu of 40 instances listed\n", r, pre);
			return 5;
		}
		for (i = 0; i < 40; i++) {
			if (mine[i]->InstanceId != 1 || PerfDeleteInstance(h, mine[i]))
				return 6;
		}
	}
	return PerfStopProvider(h) ? 7 : 0;
}

static void test_claims_race_retirements(void **state)
{
	struct race_arg a;
	int go[2];
	pid_t p1, p2;
	size_t pre;
	HANDLE h;
	GUID set;

	(void)state;
	assert_int_equal(perflib_set_capacity(0, NAME_MAX_UNITS), 0);
	assert_int_equal(prov_std_start(&h, &set), 0);
	assert_int_equal(tl_pipe(go), 0);
	a = (struct race_arg){set, go[0], 6, seg0_of(&set)};
	p1 = tl_fork(churner, &a);
	p2 = tl_fork(claimer, &a);
	assert_true(p1 > 0 && p2 > 0);
	assert_int_equal(tl_signal(go[1]), 0);
	assert_int_equal(tl_signal(go[1]), 0);
	assert_int_equal(tl_wait(p1, 120000), 0);
	assert_int_equal(tl_wait(p2, 120000), 0);
	/* nothing left, nothing held */
	assert_int_equal(listed(&set, "", &pre), 0);
	assert_int_equal(ctl_segs(&set), 1);
	assert_int_equal(PerfStopProvider(h), 0);
	assert_int_equal(perflib_set_capacity(PROV_CAPACITY_DEFAULT, PERFLIB_NAME_MAX_DEFAULT), 0);
}

static char warned[1024];

static int capture(enum perflib_log_level level, const char *fmt, va_list ap)
{
	size_t n = strlen(warned);

	(void)level;
	vsnprintf(warned + n, sizeof(warned) - n, fmt, ap);
	return 0;
}

/*
 * A segment the control word publishes whose pins were removed by hand (no retirement moved
 * the epoch) is damaged storage: a create that needs it fails with ERROR_INVALID_DATA and a
 * warning naming it, never ERROR_NOT_FOUND (a set not registered on the provider), never a
 * crash; a segment retired under the create is no error at all (test_claims_race_retirements).
 * The whole set unregistered under its providers is a set not found.
 */
static void test_damaged_segment(void **state)
{
	char dir[PATH_MAX], sdir[PATH_MAX + 8];
	WCHAR name[32];
	HANDLE a, b;
	GUID set;
	int i, n;

	(void)state;
	assert_int_equal(perflib_set_capacity(0, NAME_MAX_UNITS), 0);
	assert_int_equal(prov_std_start(&a, &set), 0);
	/* a second provider of the set in this process: a store and a view of its own */
	assert_int_equal(prov_std_provide(&set, &b), 0);
	n = seg0_of(&set);
	assert_true(n + 1 <= INST_MAX);
	for (i = 0; i <= n; i++) {
		inst[i] = PerfCreateInstance(b, &set, prov_wname(name, 32, "d%d", i), 0);
		assert_non_null(inst[i]);
	}
	assert_int_equal(ctl_segs(&set), 2);
	assert_int_equal(perflib_store_dir(&set, dir, sizeof(dir)), 0);
	snprintf(sdir, sizeof(sdir), "%s/s1", dir);
	perflib_remove_dir(sdir);
	assert_int_equal(access(sdir, F_OK), -1);
	/* a's view has segment 0 only, which is full: it must open s1 */
	warned[0] = 0;
	perflib_set_print(capture);
	SetLastError(0);
	assert_null(PerfCreateInstance(a, &set, u"needs s1", 0));
	perflib_set_print(NULL);
	assert_int_equal(GetLastError(), ERROR_INVALID_DATA);
	assert_non_null(strstr(warned, "published but not pinned"));
	/* b, which had it open, works on */
	assert_int_equal(PerfSetULongLongCounterValue(b, inst[n], PROV_STD_LARGE, 5), 0);
	/* the set unregistered under both providers (unlodctr --force): not found, no warning */
	assert_int_equal(perflib_unregister_counterset(&set, true), 0);
	warned[0] = 0;
	perflib_set_print(capture);
	assert_null(PerfCreateInstance(a, &set, u"needs s1", 0));
	perflib_set_print(NULL);
	assert_int_equal(GetLastError(), ERROR_NOT_FOUND);
	assert_string_equal(warned, "");
	for (i = 0; i <= n; i++)
		assert_int_equal(PerfDeleteInstance(b, inst[i]), 0);
	assert_int_equal(PerfStopProvider(b), 0);
	assert_int_equal(PerfStopProvider(a), 0);
	assert_int_equal(perflib_set_capacity(PROV_CAPACITY_DEFAULT, PERFLIB_NAME_MAX_DEFAULT), 0);
}

/* hold the set's structure lock, then wait to be killed */
static int lock_holder(void *p)
{
	const char *dir = p;
	int fd = open(dir, O_RDONLY | O_DIRECTORY);

	if (fd < 0 || flock(fd, LOCK_EX))
		return 2;
	pause();
	return 0;
}

/* pin a one-page array map as @dir/@sub/data (@sub made); its id */
static uint32_t plant_leftover(const char *dir, const char *sub)
{
	struct bpf_map_info mi;
	__u32 len = sizeof(mi);
	char path[PATH_MAX + 64];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	assert_int_equal(mkdir(path, 0755), 0);
	strcat(path, "/data");
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4096, 1, NULL);
	assert_true(fd >= 0);
	assert_int_equal(bpf_obj_pin(fd, path), 0);
	memset(&mi, 0, sizeof(mi));
	assert_int_equal(bpf_obj_get_info_by_fd(fd, &mi, &len), 0);
	close(fd);
	return mi.id;
}

/*
 * A retirer killed midway: its lock goes with it, and a retirement left half done (the
 * count lowered, the outer maps emptied, the directory still there) is finished by the next
 * grower, which publishes that directory again. The private directories of a grower killed
 * before its rename and of a retirer killed before its removal go with the next lock.
 */
static void test_retirer_killed(void **state)
{
	struct perflib_store *rw;
	char dir[PATH_MAX], path[PATH_MAX + 64];
	const char *outer[] = {"segs", "lives"};
	/* a grower's before its rename, a retirer's before its removal */
	const char *leftovers[2] = {"tmp-c0s3-99999-0", "tmp-gone-c0s1-99999-1"};
	uint32_t cur = 3, id2, key = 2, left[2];
	WCHAR name[32];
	size_t pre;
	HANDLE h;
	GUID set;
	pid_t pid;
	int i, fd, N, X, Y;

	(void)state;
	assert_int_equal(perflib_set_capacity(0, NAME_MAX_UNITS), 0);
	assert_int_equal(prov_std_start(&h, &set), 0);
	N = 2 * seg0_of(&set); /* segments 0 and 1 full */
	X = seg0_of(&set);     /* in segment 2 */
	Y = seg0_of(&set);     /* in segment 2 again */
	assert_int_equal(perflib_store_dir(&set, dir, sizeof(dir)), 0);
	/* segments 0..2, then segment 2 emptied (0 and 1 full: it is kept) */
	create_n(h, &set, inst, N + X);
	assert_int_equal(ctl_segs(&set), 3);
	for (i = N; i < N + X; i++)
		assert_int_equal(PerfDeleteInstance(h, inst[i]), 0);
	assert_int_equal(ctl_segs(&set), 3);
	id2 = seg_data_id(&set, 2);
	/* a retirer that died after lowering the count and emptying the outer maps */
	assert_int_equal(perflib_store_open(&set, true, &rw), 0);
	assert_true(__atomic_compare_exchange_n(&rw->ctl->nr_segs[0], &cur, 2, false,
						__ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, outer[i]);
		fd = bpf_obj_get(path);
		assert_true(fd >= 0);
		assert_int_equal(bpf_map_delete_elem(fd, &key), 0);
		close(fd);
	}
	perflib_store_close(rw);
	/* and one killed while it held the set's lock */
	pid = tl_fork(lock_holder, dir);
	assert_true(pid > 0);
	usleep(100000);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	for (i = 0; i < 2; i++)
		left[i] = plant_leftover(dir, leftovers[i]);
	/* the next grower takes the lock and publishes the segment that is there */
	for (i = 0; i < Y; i++)
		assert_non_null(PerfCreateInstance(h, &set, prov_wname(name, 32, "y%d", i), 0));
	assert_int_equal(ctl_segs(&set), 3);
	/* and removed what the dead left */
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, leftovers[i]);
		assert_int_equal(access(path, F_OK), -1);
		assert_true(map_freed(left[i]));
	}
	assert_int_equal(seg_data_id(&set, 2), id2);
	assert_int_equal(listed(&set, "y", &pre), (size_t)(N + Y));
	assert_int_equal(pre, (size_t)Y);
	assert_int_equal(PerfStopProvider(h), 0);
	assert_int_equal(perflib_set_capacity(PROV_CAPACITY_DEFAULT, PERFLIB_NAME_MAX_DEFAULT), 0);
}

/* a provider of @a->set that creates 7 x segment 0 instances, says so, and waits */
struct crasher_arg {
	GUID set;
	int ready_fd, other_fd;
};

static int crasher(void *p)
{
	struct crasher_arg *a = p;
	WCHAR name[32];
	HANDLE h;
	int i, n;

	close(a->other_fd);
	if (prov_std_provide(&a->set, &h))
		return 2;
	n = 7 * seg0_of(&a->set);
	for (i = 0; i < n; i++) {
		if (!PerfCreateInstance(h, &a->set, prov_wname(name, 32, "c%d", i), (ULONG)i))
			return 3;
	}
	tl_signal(a->ready_fd);
	pause();
	return 0;
}

/*
 * A provider killed with its instances in six segments: the exit reaper frees its slots
 * (in the kernel, where nothing is given back) and the set's next provider gives the empty
 * segments back when it starts.
 */
static void test_crash_reaped(void **state)
{
	struct crasher_arg ca;
	char dir[PATH_MAX], path[PATH_MAX + 16];
	int ready[2], i;
	size_t pre;
	HANDLE h;
	pid_t pid;

	(void)state;
	assert_int_equal(perflib_set_capacity(0, NAME_MAX_UNITS), 0);
	/* the exit reaper (testlib leaves it off) */
	setenv("PERFLIB_KERNEL_REAPER", "1", 1);
	ca.set = prov_guid();
	assert_int_equal(tl_pipe(ready), 0);
	ca.ready_fd = ready[1];
	ca.other_fd = ready[0];
	pid = tl_fork(crasher, &ca);
	assert_true(pid > 0);
	close(ready[1]);
	assert_int_equal(tl_await(ready[0], 20000), 0);
	close(ready[0]);
	assert_int_equal(ctl_segs(&ca.set), 6);
	assert_int_equal(listed(&ca.set, "c", &pre), (size_t)(7 * seg0_of(&ca.set)));
	kill(pid, SIGKILL);
	assert_int_equal(tl_wait(pid, 10000), 128 + SIGKILL);
	/* reaped by the kernel before the wait returned; still six segments */
	assert_int_equal(listed(&ca.set, "c", &pre), 0);
	assert_int_equal(ctl_segs(&ca.set), 6);
	/* the next provider gives them back */
	assert_int_equal(prov_std_provide(&ca.set, &h), 0);
	assert_int_equal(ctl_segs(&ca.set), 1);
	assert_int_equal(perflib_store_dir(&ca.set, dir, sizeof(dir)), 0);
	for (i = 1; i < 6; i++) {
		snprintf(path, sizeof(path), "%s/s%d", dir, i);
		assert_int_equal(access(path, F_OK), -1);
	}
	/* and it grows again as usual */
	create_n(h, &ca.set, inst, 2 * seg0_of(&ca.set));
	assert_int_equal(ctl_segs(&ca.set), 2);
	assert_int_equal(PerfStopProvider(h), 0);
	setenv("PERFLIB_KERNEL_REAPER", "0", 1);
	assert_int_equal(perflib_set_capacity(PROV_CAPACITY_DEFAULT, PERFLIB_NAME_MAX_DEFAULT), 0);
}

/* the room a BPF loader reserved (perflib_kernel_reserve) is never given back */
static void test_reserved_kept(void **state)
{
	HANDLE h;
	GUID set;
	int i, N, s0;

	(void)state;
	assert_int_equal(perflib_set_capacity(0, NAME_MAX_UNITS), 0);
	assert_int_equal(prov_std_start(&h, &set), 0);
	s0 = seg0_of(&set);
	N = 5 * s0; /* segments 0..4 */
	/* 2 s0 + 1 slots: segments 0..2 (perflib_seg_first(3) = 3 s0) */
	assert_int_equal(perflib_kernel_reserve(h, &set, (ULONG)(2 * s0 + 1)), 3 * s0);
	create_n(h, &set, inst, N);
	assert_int_equal(ctl_segs(&set), 5);
	for (i = 0; i < N; i++)
		assert_int_equal(PerfDeleteInstance(h, inst[i]), 0);
	/* segments 3 and 4 went; 0..2 are the loader's */
	assert_int_equal(ctl_segs(&set), 3);
	assert_int_equal(PerfStopProvider(h), 0);
	assert_int_equal(perflib_set_capacity(PROV_CAPACITY_DEFAULT, PERFLIB_NAME_MAX_DEFAULT), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_deleted),
		cmocka_unit_test(test_hysteresis),
		cmocka_unit_test(test_claims_race_retirements),
		cmocka_unit_test(test_retirer_killed),
		cmocka_unit_test(test_damaged_segment),
		cmocka_unit_test(test_crash_reaped),
		cmocka_unit_test(test_reserved_kept),
	};

	tl_require_bpf();
	return cmocka_run_group_tests_name("shrink", tests, tl_group_setup, tl_group_teardown);
}

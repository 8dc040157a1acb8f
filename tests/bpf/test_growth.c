// SPDX-License-Identifier: MIT
/*
 * test_growth.c - counter sets that grow: instances past the first segment from two
 * processes at once, a consumer opened before seeing them, pointers that never move, the
 * limit (ERROR_NOT_ENOUGH_MEMORY, then a working set), fork() (the child inherits no
 * instance), and a set of an older layout refused with a message naming the fix.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "testlib.h"
#include "internal.h"
#include "../helpers/prov_util.h"

#define PER_CHILD 2000 /* several segments of the small-name slots these tests use */

struct grow_arg {
	GUID set;
	int who;     /* 0 or 1 */
	int go_fd;   /* read: start */
	int done_fd; /* write: created */
	int exit_fd; /* read: exit */
};

/* create PER_CHILD instances, write through every returned pointer, wait to be told */
static int grower(void *p)
{
	struct grow_arg *a = p;
	PPERF_COUNTERSET_INSTANCE inst[PER_CHILD];
	GUID pg = prov_provider_guid();
	struct prov_tmpl t;
	WCHAR name[32];
	HANDLE h;
	int i;

	prov_tmpl_std(&t, a->set, PERF_COUNTERSET_MULTI_INSTANCES);
	if (PerfStartProvider(&pg, NULL, &h) || prov_tmpl_register(h, &t))
		return 2;
	if (tl_await(a->go_fd, 10000))
		return 3;
	for (i = 0; i < PER_CHILD; i++) {
		inst[i] = PerfCreateInstance(h, &a->set, prov_wname(name, 32, "p%d-%d", a->who, i),
					     (ULONG)i);
		if (!inst[i])
			return 4;
		if (PerfSetULongLongCounterValue(h, inst[i], PROV_STD_LARGE, 1000000 * a->who + i))
			return 5;
	}
	/* every block stays where it was created: read back through the first pointers */
	for (i = 0; i < PER_CHILD; i++) {
		if (*(ULONGLONG *)prov_slot(inst[i], 1) != (ULONGLONG)(1000000 * a->who + i) ||
		    inst[i]->InstanceId != (ULONG)i)
			return 6;
	}
	tl_signal(a->done_fd);
	tl_await(a->exit_fd, 20000);
	return PerfStopProvider(h) ? 7 : 0;
}

static size_t enumerate(const GUID *set, int *ret_p0, int *ret_p1)
{
	static BYTE buf[1 << 20];
	DWORD need = 0;
	PERF_INSTANCE_HEADER *hd;
	size_t off, n = 0;

	*ret_p0 = *ret_p1 = 0;
	assert_int_equal(
		PerfEnumerateCounterSetInstances(NULL, set, (void *)buf, sizeof(buf), &need),
		ERROR_SUCCESS);
	for (off = 0; off < need; off += hd->Size, n++) {
		const WCHAR *w;

		hd = (void *)(buf + off);
		w = (const WCHAR *)(hd + 1);
		if (w[0] == 'p' && w[1] == '0')
			(*ret_p0)++;
		if (w[0] == 'p' && w[1] == '1')
			(*ret_p1)++;
	}
	return n;
}

static void test_two_processes_grow(void **state)
{
	struct grow_arg a[2];
	int go[2], done[2], quit[2], p0, p1, i;
	struct perflib_store *ro;
	struct perflib_seg *seg0;
	HANDLE h;
	GUID set = prov_guid(), pg = prov_provider_guid();
	struct prov_tmpl t;
	pid_t pid[2];

	(void)state;
	/* small names: 256-slot segments, so 4,000 instances span five segments */
	assert_int_equal(perflib_set_capacity(0, 33), 0);
	prov_tmpl_std(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(PerfStartProvider(&pg, NULL, &h), 0);
	assert_int_equal(prov_tmpl_register(h, &t), 0);
	/* a reader opened while the set has one segment */
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	assert_int_equal(perflib_store_nr_segs(ro, 0), 1);
	/* its segment entries: one group of PERFLIB_SEG_GROUP, the others not allocated */
	seg0 = perflib_seg_at(&ro->cls[0], 0);
	assert_non_null(ro->cls[0].seg_groups[0]);
	for (i = 1; i < PERFLIB_MAX_SEGS / PERFLIB_SEG_GROUP; i++)
		assert_null(ro->cls[0].seg_groups[i]);
	assert_null(perflib_seg_find(&ro->cls[0], PERFLIB_SEG_GROUP));
	assert_int_equal(tl_pipe(go), 0);
	assert_int_equal(tl_pipe(done), 0);
	assert_int_equal(tl_pipe(quit), 0);
	for (i = 0; i < 2; i++) {
		a[i] = (struct grow_arg){set, i, go[0], done[1], quit[0]};
		pid[i] = tl_fork(grower, &a[i]);
		assert_true(pid[i] > 0);
	}
	/* both at once */
	assert_int_equal(tl_signal(go[1]), 0);
	assert_int_equal(tl_signal(go[1]), 0);
	for (i = 0; i < 2; i++) {
		if (tl_await(done[0], 30000)) {
			int st0 = -1, st1 = -1;

			/* which child, and how: gone with a code, or still running (hung) */
			if (waitpid(pid[0], &st0, WNOHANG) <= 0)
				st0 = -1;
			if (waitpid(pid[1], &st1, WNOHANG) <= 0)
				st1 = -1;
			fail_msg("a grower did not finish: child 0 status %#x, child 1 status %#x "
				 "(-1: still running)",
				 st0, st1);
		}
	}
	assert_int_equal(enumerate(&set, &p0, &p1), 2 * PER_CHILD);
	assert_int_equal(p0, PER_CHILD);
	assert_int_equal(p1, PER_CHILD);
	/* the reader opened before sees the new segments without reopening */
	assert_int_equal(perflib_store_refresh(ro), 0);
	/* 4,000 slots: segment 8 (slots 3,072-4,095) is in the second group of entries */
	assert_true(perflib_store_nr_segs(ro, 0) > PERFLIB_SEG_GROUP);
	assert_non_null(ro->cls[0].seg_groups[1]);
	assert_non_null(perflib_seg_find(&ro->cls[0], PERFLIB_SEG_GROUP)->live);
	assert_ptr_equal(perflib_seg_at(&ro->cls[0], 0), seg0); /* entries never move */
	assert_non_null(seg0->live);
	tl_signal(quit[1]);
	tl_signal(quit[1]);
	for (i = 0; i < 2; i++)
		assert_int_equal(tl_wait(pid[i], 30000), 0);
	assert_int_equal(enumerate(&set, &p0, &p1), 0);
	perflib_store_close(ro);
	assert_int_equal(PerfStopProvider(h), 0);
	assert_int_equal(perflib_set_capacity(0, PERFLIB_NAME_MAX_DEFAULT), 0);
}

static void test_limit(void **state)
{
	PPERF_COUNTERSET_INSTANCE inst[101], extra;
	WCHAR name[32];
	HANDLE h;
	GUID set;
	int i;

	(void)state;
	assert_int_equal(perflib_set_capacity(100, 33), 0);
	assert_int_equal(prov_std_start(&h, &set), 0);
	for (i = 0; i < 100; i++) {
		inst[i] = PerfCreateInstance(h, &set, prov_wname(name, 32, "i%d", i), 0);
		assert_non_null(inst[i]);
	}
	extra = PerfCreateInstance(h, &set, u"one too many", 0);
	assert_null(extra);
	assert_int_equal(GetLastError(), ERROR_NOT_ENOUGH_MEMORY);
	/* nothing else disturbed: the set works on */
	assert_int_equal(PerfSetULongCounterValue(h, inst[5], PROV_STD_DWORD, 7), 0);
	assert_int_equal(PerfDeleteInstance(h, inst[5]), 0);
	extra = PerfCreateInstance(h, &set, u"one too many", 0);
	assert_non_null(extra);
	assert_int_equal(PerfStopProvider(h), 0);
	assert_int_equal(perflib_set_capacity(PROV_CAPACITY_DEFAULT, PERFLIB_NAME_MAX_DEFAULT), 0);
}

static int capture(enum perflib_log_level level, const char *fmt, va_list ap);
static char warned[4096];

/*
 * A capacity that ends inside a segment (4,096 slots: with segment 0 of 64 slots, segment 16
 * holds slots 3,840 to 4,863): the provider's per-slot tables cover the capacity only, and stopping a
 * provider with instances in that last segment touches no slot past the capacity.
 */
static void test_limit_mid_segment(void **state)
{
	WCHAR name[32];
	HANDLE h;
	GUID set;
	int i;

	(void)state;
	assert_int_equal(perflib_set_capacity(4096, 33), 0);
	assert_int_equal(prov_std_start(&h, &set), 0);
	for (i = 0; i < 4095; i++)
		assert_non_null(PerfCreateInstance(h, &set, prov_wname(name, 32, "m%d", i), 0));
	assert_true(perflib_kernel_instance_create(h, &set, u"kernel", 0) >= 0);
	assert_null(PerfCreateInstance(h, &set, u"past", 0));
	assert_int_equal(GetLastError(), ERROR_NOT_ENOUGH_MEMORY);
	warned[0] = 0;
	perflib_set_print(capture);
	/* the kernel-owned instance and every instance of the provider go (a full walk) */
	assert_int_equal(perflib_kernel_instances_delete(h, &set), 1);
	assert_int_equal(PerfStopProvider(h), 0);
	perflib_set_print(NULL);
	assert_string_equal(warned, "");
	assert_int_equal(perflib_set_capacity(PROV_CAPACITY_DEFAULT, PERFLIB_NAME_MAX_DEFAULT), 0);
}

static HANDLE fork_provider; /* the parent's provider, inherited by the child */
static GUID fork_set;	     /* its counter set */
static HANDLE fork_query;    /* the parent's query handle on it, inherited by the child */

/* the instances of fork_set a consumer enumerates: 1 when "parent" (id 1) alone, else 0 */
static int parent_alone(void)
{
	uint8_t buf[512];
	const PERF_INSTANCE_HEADER *ih = (const void *)buf;
	const WCHAR *name = (const WCHAR *)(ih + 1);
	DWORD got = 0;

	if (PerfEnumerateCounterSetInstances(NULL, &fork_set, (PPERF_INSTANCE_HEADER)buf,
					     sizeof(buf), &got) != ERROR_SUCCESS)
		return 0;
	return got == ih->Size && ih->InstanceId == 1 && name[0] == u'p' && name[5] == u't' &&
	       !name[6];
}

/* fork_query's data: one counter read without error */
static int query_works(void)
{
	uint8_t buf[1024];
	const PERF_DATA_HEADER *dh = (const void *)buf;
	const PERF_COUNTER_HEADER *ch = (const void *)(dh + 1);
	DWORD got = 0;

	if (PerfQueryCounterData(fork_query, (PPERF_DATA_HEADER)buf, sizeof(buf), &got) !=
	    ERROR_SUCCESS)
		return 0;
	return got == dh->dwTotalSize && dh->dwNumCounters == 1 && ch->dwStatus == ERROR_SUCCESS;
}

static int forked_child(void *p)
{
	PPERF_COUNTERSET_INSTANCE inst = p, mine;
	HANDLE h;
	GUID set;

	/* what the parent opened as a consumer works here: its openings and its query handle */
	if (!parent_alone())
		return 9;
	if (!query_works())
		return 10;

	/* an inherited instance is not the child's: an error, never a write */
	if (PerfIncrementULongCounterValue(fork_provider, inst, PROV_STD_DWORD, 1) !=
	    ERROR_INVALID_PARAMETER)
		return 2;
	if (PerfDeleteInstance(fork_provider, inst) != ERROR_INVALID_PARAMETER)
		return 3;
	/* nor can the inherited handle make instances */
	SetLastError(0);
	if (PerfCreateInstance(fork_provider, &fork_set, u"child of", 9) ||
	    GetLastError() != ERROR_INVALID_PARAMETER)
		return 8;
	if (PerfStopProvider(fork_provider) != ERROR_INVALID_PARAMETER)
		return 4;
	/* a provider of its own works */
	if (prov_std_start(&h, &set))
		return 5;
	mine = PerfCreateInstance(h, &set, u"child", 1);
	if (!mine || PerfIncrementULongCounterValue(h, mine, PROV_STD_DWORD, 1))
		return 6;
	return PerfStopProvider(h) ? 7 : 0;
}

static void test_fork(void **state)
{
	struct {
		PERF_COUNTER_IDENTIFIER id;
		WCHAR name[8];
	} spec;
	PPERF_COUNTERSET_INSTANCE inst;
	GUID set;
	pid_t pid;
	int status;

	(void)state;
	assert_int_equal(prov_std_start(&fork_provider, &set), 0);
	fork_set = set;
	inst = PerfCreateInstance(fork_provider, &set, u"parent", 1);
	assert_non_null(inst);
	/* the parent is a consumer of the set too, before it forks */
	memset(&spec, 0, sizeof(spec));
	spec.id.CounterSetGuid = set;
	spec.id.Size = sizeof(spec);
	spec.id.CounterId = PROV_STD_DWORD;
	spec.id.InstanceId = 1;
	memcpy(spec.name, u"parent", sizeof(u"parent"));
	assert_int_equal(PerfOpenQueryHandle(NULL, &fork_query), ERROR_SUCCESS);
	assert_int_equal(PerfAddCounters(fork_query, &spec.id, sizeof(spec)), ERROR_SUCCESS);
	assert_int_equal(spec.id.Status, ERROR_SUCCESS);
	assert_true(parent_alone());
	assert_true(query_works());
	pid = tl_fork(forked_child, inst);
	assert_true(pid > 0);
	assert_int_equal(tl_wait(pid, 20000), 0);
	/*
	 * a child writing through an inherited instance pointer: the parent's slots are not
	 * mapped in the child (MADV_DONTFORK), so it dies there and writes nothing
	 */
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		signal(SIGSEGV, SIG_DFL); /* cmocka's handler would carry on with the tests */
		*(volatile ULONG *)prov_slot(inst, 0) = 99;
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGSEGV);
	/* the parent's instance is untouched and still its own */
	assert_int_equal(*(ULONG *)prov_slot(inst, 0), 0);
	assert_int_equal(PerfIncrementULongCounterValue(fork_provider, inst, PROV_STD_DWORD, 2), 0);
	assert_int_equal(*(ULONG *)prov_slot(inst, 0), 2);
	assert_int_equal(PerfCloseQueryHandle(fork_query), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(fork_provider), 0);
}

static int capture(enum perflib_log_level level, const char *fmt, va_list ap)
{
	if (level != PERFLIB_WARN)
		return 0;
	vsnprintf(warned + strlen(warned), sizeof(warned) - strlen(warned), fmt, ap);
	return 0;
}

/* pin a map of @entries x @value_size bytes as @name in @dir, entry @key set to @val */
static void pin_array(const char *dir, const char *name, __u32 value_size, __u32 entries,
		      __u32 flags, __u32 key, const void *val)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts, .map_flags = flags);
	char path[PATH_MAX + 8];
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "t_old", 4, value_size, entries, &mopts);
	assert_true(fd >= 0);
	assert_int_equal(bpf_map_update_elem(fd, &key, val, BPF_ANY), 0);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	assert_int_equal(bpf_obj_pin(fd, path), 0);
	close(fd);
}

/*
 * sets pinned by earlier layouts are refused, never misread: version 1 (data and index
 * beside info), version 3 (the control word in a ctl map of its own, procs of 64
 * process entries: its last entry read as a control entry would be garbage) and version 4
 * (the control word the last of 64 procs entries, s0/live a bitmap only: its last words
 * read as a control word would be bitmap words), version 5 (no owner summaries: pending
 * words read as summaries), version 6 (no summary heads: pending words read as heads) and
 * version 7 (procs a map of its own: pending words read as procs entries) and version 8
 * (segments doubling: segment 1 read as a quarter-octave segment would put its slots at the
 * wrong indexes), version 9 (segment 0's head bits meant nothing past bit 0) and version 10
 * (index hash maps, no index table: procs entries read as a table and the other way round)
 */
static void test_old_layout_refused(void **state)
{
	struct perflib_counter_reg c = {1,	    PERF_COUNTER_RAWCOUNT,
					0,	    0,
					0,	    0xFFFFFFFF,
					0xFFFFFFFF, 0xFFFFFFFF,
					0xFFFFFFFF, 0,
					"c",	    NULL};
	static const __u32 versions[] = {1, 3, 4, 5, 6, 7, 8, 9, 10};
	struct perflib_ctl ctl = {.magic = PERFLIB_CTL_MAGIC, .nr_segs = {1}};
	__u64 proc[8] = {0}; /* a procs entry of layouts 3 to 7: 64 bytes */
	struct perflib_counterset_reg reg;
	struct perflib_pin_opts opts;
	struct perflib_store *map;
	struct perflib_info *info;
	char dir[PATH_MAX], sdir[PATH_MAX + 8], want[64];
	__u64 bits = ~0ULL;
	__u32 info_seg0;
	size_t size, v;
	/* not prov_guid(): a forked child of an earlier test counted through the same GUIDs */
	GUID set = tl_guid(0x01D1A7);

	(void)state;
	memset(&reg, 0, sizeof(reg));
	reg.counterset_guid = set;
	reg.instance_type = PERF_COUNTERSET_MULTI_INSTANCES;
	reg.nr_counters = 1;
	reg.counters = &c;
	perflib_pin_defaults(&opts);
	for (v = 0; v < sizeof(versions) / sizeof(versions[0]); v++) {
		assert_int_equal(perflib_info_build(&reg, 0, &opts, &info, &size), 0);
		info->layout_version = versions[v];
		assert_int_equal(perflib_store_dir(&set, dir, sizeof(dir)), 0);
		mkdir(perflib_root_path(), 0755);
		assert_int_equal(mkdir(dir, 0755), 0);
		pin_array(dir, "info", (__u32)size, 1, 0, 0, info);
		info_seg0 = info->seg0_slots;
		free(info);
		if (versions[v] == 3) {
			pin_array(dir, "ctl", sizeof(ctl), 1, BPF_F_MMAPABLE, 0, &ctl);
			pin_array(dir, "procs", sizeof(proc), 64, BPF_F_MMAPABLE, 63, proc);
		}
		if (versions[v] == 4) {
			snprintf(sdir, sizeof(sdir), "%s/s0", dir);
			assert_int_equal(mkdir(sdir, 0755), 0);
			pin_array(dir, "procs", sizeof(ctl), 64, BPF_F_MMAPABLE, 63, &ctl);
			pin_array(sdir, "live", 8, 2, BPF_F_MMAPABLE, 1, &bits);
		}
		if (versions[v] == 5) {
			/* s0/live: bitmap, 64 pending words, the control word (no owner summaries) */
			snprintf(sdir, sizeof(sdir), "%s/s0", dir);
			assert_int_equal(mkdir(sdir, 0755), 0);
			pin_array(dir, "procs", sizeof(proc), 64, BPF_F_MMAPABLE, 63, proc);
			pin_array(sdir, "live", 8, 2 + 64 + PERFLIB_CTL_WORDS, BPF_F_MMAPABLE, 1,
				  &bits);
		}
		if (versions[v] == 6) {
			/* s0/live: bitmap, owner summaries (no heads), pending words, control word */
			snprintf(sdir, sizeof(sdir), "%s/s0", dir);
			assert_int_equal(mkdir(sdir, 0755), 0);
			pin_array(dir, "procs", sizeof(proc), 64, BPF_F_MMAPABLE, 63, proc);
			pin_array(sdir, "live", 8, 2 + 64 + 64 + PERFLIB_CTL_WORDS, BPF_F_MMAPABLE,
				  1, &bits);
		}
		if (versions[v] == 7) {
			/*
			 * s0/live: bitmap, owner summaries, heads, pending words, control word;
			 * procs a map of its own
			 */
			snprintf(sdir, sizeof(sdir), "%s/s0", dir);
			assert_int_equal(mkdir(sdir, 0755), 0);
			pin_array(dir, "procs", sizeof(proc), 64, BPF_F_MMAPABLE, 63, proc);
			pin_array(sdir, "live", 8, 2 + 64 + 64 + 64 + PERFLIB_CTL_WORDS,
				  BPF_F_MMAPABLE, 1, &bits);
		}
		if (versions[v] >= 8) {
			/*
			 * s0/live as this layout has it: only the segment geometry (8) or the
			 * meaning of segment 0's head bits (9) differs, and none had an index
			 * table in it (10)
			 */
			snprintf(sdir, sizeof(sdir), "%s/s0", dir);
			assert_int_equal(mkdir(sdir, 0755), 0);
			pin_array(sdir, "live", 8,
				  perflib_live0_words(info_seg0, 64) -
					  (__u32)perflib_idx_words(0, info_seg0),
				  BPF_F_MMAPABLE, 1, &bits);
		}
		warned[0] = 0;
		perflib_set_print(capture);
		assert_int_equal(perflib_store_open(&set, false, &map), -EPROTO);
		assert_int_equal(perflib_store_open(&set, true, &map), -EPROTO);
		perflib_set_print(NULL);
		snprintf(want, sizeof(want), "version %u", versions[v]);
		assert_non_null(strstr(warned, want));
		assert_non_null(strstr(warned, "layout"));
		assert_non_null(strstr(warned, "unlodctr"));
		/* unregistering it: refused without force (its instances cannot be read), then
		 * the way out the message names */
		assert_int_equal(perflib_unregister_counterset(&set, false), -EPROTO);
		assert_int_equal(access(dir, F_OK), 0);
		assert_non_null(strstr(warned, "unlodctr --force"));
		assert_int_equal(perflib_unregister_counterset(&set, true), 0);
		assert_int_equal(access(dir, F_OK), -1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_processes_grow), cmocka_unit_test(test_limit),
		cmocka_unit_test(test_limit_mid_segment),  cmocka_unit_test(test_fork),
		cmocka_unit_test(test_old_layout_refused),
	};

	tl_require_bpf();
	return cmocka_run_group_tests_name("growth", tests, tl_group_setup, tl_group_teardown);
}

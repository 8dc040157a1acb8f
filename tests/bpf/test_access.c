// SPDX-License-Identifier: MIT
/*
 * test_access.c - who may provide into a counter set, checked with a real unprivileged
 * user: root creates the pins with a mode and group, a child that became nobody (65534)
 * provides, or is refused with ERROR_ACCESS_DENIED; without CAP_BPF an unregistered
 * counter set cannot be created. Needs root (skips otherwise).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "internal.h"
#include "testlib.h"
#include "../helpers/prov_util.h"

#define NOBODY 65534
#define NOGROUP 65534
#define WAIT_MS 10000

static const char *const pins[] = {"info", "segs", "lives", "s0/data", "s0/live"};
#define NR_PINS (sizeof(pins) / sizeof(pins[0]))

/* become nobody:nogroup with no supplementary groups and, as a result, no capabilities */
static int drop_privileges(void)
{
	int fd;

	if (setgroups(0, NULL) || setgid(NOGROUP) || setuid(NOBODY))
		return -1;
	/* make sure: creating a map needs CAP_BPF */
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "acc_probe", 4, 8, 1, NULL);
	if (fd >= 0) {
		close(fd);
		return -1;
	}
	return 0;
}

struct acc {
	GUID set;
	ULONG expect;  /* PerfSetCounterSetInfo's result */
	int stderr_fd; /* where the child's stderr goes, -1 = keep */
};

/* as nobody: register the standard template, create an instance, increment */
static int child_provide(void *p)
{
	struct acc *a = p;
	GUID pg = prov_provider_guid();
	PPERF_COUNTERSET_INSTANCE inst;
	struct prov_tmpl t;
	ULONG st;
	HANDLE h;
	int i;

	if (a->stderr_fd >= 0 && dup2(a->stderr_fd, 2) < 0)
		return 2;
	unsetenv("PERFLIB_DEBUG");
	if (drop_privileges())
		return 3;
	prov_tmpl_std(&t, a->set, PERF_COUNTERSET_MULTI_INSTANCES);
	if (PerfStartProvider(&pg, NULL, &h))
		return 4;
	st = prov_tmpl_register(h, &t);
	if (st != a->expect) {
		fprintf(stderr, "PerfSetCounterSetInfo: %u, expected %u\n", st, a->expect);
		return 5;
	}
	if (st == ERROR_SUCCESS) {
		inst = PerfCreateInstance(h, &a->set, u"nobody", 65534);
		if (!inst) {
			fprintf(stderr, "PerfCreateInstance: error %u\n", GetLastError());
			return 6;
		}
		for (i = 0; i < 1000; i++) {
			if (PerfIncrementULongLongCounterValue(h, inst, PROV_STD_LARGE, 3))
				return 7;
		}
		if (PerfSetULongCounterValue(h, inst, PROV_STD_DWORD2, 77))
			return 8;
		/* leave the instance for the parent to read: exit without stopping */
		return 0;
	}
	return PerfStopProvider(h) ? 9 : 0;
}

/* run child_provide for @set; its exit code */
static int run_child(GUID set, ULONG expect, int stderr_fd)
{
	struct acc a = {set, expect, stderr_fd};
	pid_t pid = tl_fork(child_provide, &a);

	assert_true(pid > 0);
	return tl_wait(pid, WAIT_MS);
}

/* the pins of @set: mode, owner and group */
static void check_pins(const GUID *set, mode_t mode, uid_t uid, gid_t gid)
{
	char dir[PATH_MAX], path[PATH_MAX + 8];
	struct stat st;
	int i;

	assert_int_equal(perflib_store_dir(set, dir, sizeof(dir)), 0);
	for (i = 0; i < (int)NR_PINS; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, pins[i]);
		assert_int_equal(stat(path, &st), 0);
		if ((st.st_mode & 07777) != mode || st.st_uid != uid || st.st_gid != gid)
			fail_msg("%s: mode %04o uid %u gid %u, expected %04o %u %u", path,
				 (unsigned int)(st.st_mode & 07777), (unsigned int)st.st_uid,
				 (unsigned int)st.st_gid, (unsigned int)mode, (unsigned int)uid,
				 (unsigned int)gid);
	}
	/* the directory is reachable by everyone; the pins decide */
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0755);
}

/* the instance the child left: value 3000 and 77, owner gone */
static void check_child_instance(const GUID *set)
{
	struct perflib_store *ro;
	unsigned int found = 0;
	uint32_t i;

	assert_int_equal(perflib_store_open(set, false, &ro), 0);
	for (i = 0; i < perflib_store_slots(ro, 0); i++) {
		const uint8_t *s = perflib_slot(ro, i);
		const PERF_COUNTERSET_INSTANCE *blk = (const void *)(s + PERFLIB_BLOCK_OFFSET);

		if (perflib_word_state(perflib_slot_word(s)) != PERFLIB_SLOT_LIVE)
			continue;
		found++;
		assert_int_equal(blk->InstanceId, 65534);
		assert_int_equal(*(const uint64_t *)(s + PERFLIB_COUNTERS_OFFSET + 8), 3000);
		assert_int_equal(*(const uint32_t *)(s + PERFLIB_COUNTERS_OFFSET + 24), 77);
	}
	perflib_store_close(ro);
	assert_int_equal(found, 1);
	assert_int_equal(perflib_reap_counterset(set), 1);
}

/* root registers @set on demand with perflib_set_pin_access(0660, nogroup), then stops */
static void register_for_nogroup(GUID set)
{
	GUID pg = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h;

	assert_int_equal(perflib_set_pin_access(0660, NOGROUP), 0);
	prov_tmpl_std(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(PerfStartProvider(&pg, NULL, &h), ERROR_SUCCESS);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_int_equal(perflib_set_pin_access(0, (gid_t)-1), 0);
}

/* root creates on demand with perflib_set_pin_access(0660, nogroup); nobody provides */
static void test_group_provides_on_demand(void **state)
{
	GUID set = prov_guid();

	(void)state;
	register_for_nogroup(set);
	check_pins(&set, 0660, 0, NOGROUP);
	assert_int_equal(run_child(set, ERROR_SUCCESS, -1), 0);
	check_child_instance(&set);
}

/* the same through perflib_register_counterset (lodctr) with pin options */
static void test_group_provides_registered(void **state)
{
	struct perflib_counter_reg c[4];
	struct perflib_counterset_reg reg;
	struct perflib_pin_opts opts = {sizeof(opts), 0660, (uid_t)-1, NOGROUP, 16, 0};
	struct prov_tmpl t;
	GUID set = prov_guid();
	unsigned int i;

	(void)state;
	prov_tmpl_std(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	memset(&reg, 0, sizeof(reg));
	memset(c, 0, sizeof(c));
	reg.provider_guid = prov_provider_guid();
	reg.counterset_guid = set;
	reg.instance_type = PERF_COUNTERSET_MULTI_INSTANCES;
	reg.name = "Access test";
	reg.nr_counters = 4;
	reg.counters = c;
	for (i = 0; i < 4; i++) {
		c[i].id = t.c[i].CounterId;
		c[i].type = t.c[i].Type;
		c[i].attrib = t.c[i].Attrib;
		c[i].base_id = c[i].perf_time_id = c[i].perf_freq_id = c[i].multi_id = 0xFFFFFFFF;
		c[i].name = "counter";
	}
	assert_int_equal(perflib_register_counterset(&reg, &opts), 0);
	check_pins(&set, 0660, 0, NOGROUP);
	assert_int_equal(run_child(set, ERROR_SUCCESS, -1), 0);
	check_child_instance(&set);
}

/*
 * as nobody: create until the set's first segment is full. The next create needs a segment,
 * which only a process with CAP_BPF can make: ERROR_ACCESS_DENIED, never the
 * ERROR_NOT_ENOUGH_MEMORY of a full set; the instances made still work.
 */
static int child_fill(void *p)
{
	struct acc *a = p;
	GUID pg = prov_provider_guid();
	PPERF_COUNTERSET_INSTANCE first = NULL, inst;
	struct prov_tmpl t;
	WCHAR name[32];
	HANDLE h;
	int i;

	unsetenv("PERFLIB_DEBUG");
	if (drop_privileges())
		return 3;
	prov_tmpl_std(&t, a->set, PERF_COUNTERSET_MULTI_INSTANCES);
	if (PerfStartProvider(&pg, NULL, &h) || prov_tmpl_register(h, &t))
		return 4;
	for (i = 0; i < 100000; i++) {
		inst = PerfCreateInstance(h, &a->set, prov_wname(name, 32, "n%d", i), 0);
		if (!inst)
			break;
		if (!first)
			first = inst;
	}
	if (!first || i == 100000)
		return 5;
	if (GetLastError() != ERROR_ACCESS_DENIED) {
		fprintf(stderr, "create %d: error %u, expected ERROR_ACCESS_DENIED\n", i,
			GetLastError());
		return 6;
	}
	/* room again once one is deleted: the set was never broken */
	if (PerfDeleteInstance(h, first) ||
	    !PerfCreateInstance(h, &a->set, prov_wname(name, 32, "again%d", 0), 0))
		return 7;
	return PerfStopProvider(h) ? 8 : 0;
}

static void test_grow_needs_cap_bpf(void **state)
{
	GUID set = prov_guid();
	struct acc a = {set, ERROR_SUCCESS, -1};
	pid_t pid;

	(void)state;
	register_for_nogroup(set);
	pid = tl_fork(child_fill, &a);
	assert_true(pid > 0);
	assert_int_equal(tl_wait(pid, WAIT_MS), 0);
}

/* pins 0640 root:root: nobody may not provide */
static void test_denied(void **state)
{
	GUID set = prov_guid(), pg = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h;

	(void)state;
	/* created by root through the provider path, group root */
	assert_int_equal(perflib_set_pin_access(0640, 0), 0);
	prov_tmpl_std(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(PerfStartProvider(&pg, NULL, &h), ERROR_SUCCESS);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_int_equal(perflib_set_pin_access(0, (gid_t)-1), 0);
	check_pins(&set, 0640, 0, 0);
	assert_int_equal(run_child(set, ERROR_ACCESS_DENIED, -1), 0);
}

/* group read only: nobody may not provide (needs write) */
static void test_denied_read_only_group(void **state)
{
	GUID set = prov_guid(), pg = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h;

	(void)state;
	assert_int_equal(perflib_set_pin_access(0640, NOGROUP), 0);
	prov_tmpl_std(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(PerfStartProvider(&pg, NULL, &h), ERROR_SUCCESS);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_int_equal(perflib_set_pin_access(0, (gid_t)-1), 0);
	check_pins(&set, 0640, 0, NOGROUP);
	assert_int_equal(run_child(set, ERROR_ACCESS_DENIED, -1), 0);
}

/* not registered and no CAP_BPF: ERROR_ACCESS_DENIED, and quiet unless PERFLIB_DEBUG */
static void test_unregistered_without_cap_bpf(void **state)
{
	char out[4096];
	FILE *err = tmpfile();
	GUID set = prov_guid();
	struct stat st;
	char dir[PATH_MAX];
	size_t n;

	(void)state;
	assert_non_null(err);
	assert_int_equal(run_child(set, ERROR_ACCESS_DENIED, fileno(err)), 0);
	/* nothing was left behind */
	assert_int_equal(perflib_store_dir(&set, dir, sizeof(dir)), 0);
	assert_int_not_equal(stat(dir, &st), 0);
	rewind(err);
	n = fread(out, 1, sizeof(out) - 1, err);
	out[n] = 0;
	fclose(err);
	if (n)
		fail_msg("stderr without PERFLIB_DEBUG: \"%s\"", out);
}

/* the pin modes and groups the API asks for are what stat shows */
static void test_pin_modes(void **state)
{
	static const mode_t modes[] = {0600, 0640, 0644, 0660, 0664, 0666};
	struct perflib_counter_reg c = {
		1,	    PERF_COUNTER_COUNTER, 0,	      0, 0,   0xFFFFFFFF,
		0xFFFFFFFF, 0xFFFFFFFF,		  0xFFFFFFFF, 0, "c", NULL};
	struct perflib_counterset_reg reg;
	struct perflib_pin_opts opts;
	unsigned int i;

	(void)state;
	memset(&reg, 0, sizeof(reg));
	reg.instance_type = PERF_COUNTERSET_MULTI_INSTANCES;
	reg.nr_counters = 1;
	reg.counters = &c;
	for (i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		reg.counterset_guid = prov_guid();
		opts = (struct perflib_pin_opts){sizeof(opts),	      modes[i], NOBODY,
						 i % 2 ? NOGROUP : 0, 4,	0};
		assert_int_equal(perflib_register_counterset(&reg, &opts), 0);
		check_pins(&reg.counterset_guid, modes[i], NOBODY, i % 2 ? NOGROUP : 0);
	}
	/* default mode 0640, owner and group of the process */
	reg.counterset_guid = prov_guid();
	opts = (struct perflib_pin_opts){sizeof(opts), 0, (uid_t)-1, (gid_t)-1, 4, 0};
	assert_int_equal(perflib_register_counterset(&reg, &opts), 0);
	check_pins(&reg.counterset_guid, 0640, getuid(), getgid());
	/* modes with execute or special bits are refused */
	opts.mode = 0755;
	reg.counterset_guid = prov_guid();
	assert_int_equal(perflib_register_counterset(&reg, &opts), -EINVAL);
	assert_int_equal(perflib_set_pin_access(04600, (gid_t)-1), -EINVAL);
}

/* a reader with read permission only */
static int child_read(void *p)
{
	const GUID *set = p;
	struct perflib_store *ro;
	int err;

	if (drop_privileges())
		return 3;
	err = perflib_store_open(set, false, &ro);
	if (err)
		return 4;
	/* read-only fds cannot be mmapped: the set is opened unmapped, read with lookups */
	if (ro->mapped || ro->procs || ro->info->capacity == 0) {
		perflib_store_close(ro);
		return 10;
	}
	perflib_store_close(ro);
	/* but never a writable open */
	if (perflib_store_open(set, true, &ro) != -EACCES)
		return 5;
	return 0;
}

static void test_reader_read_only(void **state)
{
	GUID set = prov_guid(), pg = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h;
	pid_t pid;
	int rc;

	(void)state;
	assert_int_equal(perflib_set_pin_access(0640, NOGROUP), 0);
	prov_tmpl_std(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(PerfStartProvider(&pg, NULL, &h), ERROR_SUCCESS);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	assert_int_equal(perflib_set_pin_access(0, (gid_t)-1), 0);
	pid = tl_fork(child_read, &set);
	assert_true(pid > 0);
	rc = tl_wait(pid, WAIT_MS);
	assert_int_equal(rc, 0);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_group_provides_on_demand),
		cmocka_unit_test(test_group_provides_registered),
		cmocka_unit_test(test_denied),
		cmocka_unit_test(test_grow_needs_cap_bpf),
		cmocka_unit_test(test_denied_read_only_group),
		cmocka_unit_test(test_unregistered_without_cap_bpf),
		cmocka_unit_test(test_pin_modes),
		cmocka_unit_test(test_reader_read_only),
	};

	tl_require_bpf();
	if (geteuid() != 0 || !getgrgid(NOGROUP)) {
		fprintf(stderr, "SKIP: access tests need root and user/group 65534\n");
		return TL_SKIP;
	}
	return cmocka_run_group_tests_name("access", tests, tl_group_setup, tl_group_teardown);
}

// SPDX-License-Identifier: MIT
/*
 * test_pidns.c - process identity of providers that the consumer sees from elsewhere: a
 * provider in its own pid namespace (real `unshare --pid --fork`, with and without
 * --mount-proc), and a provider whose main thread has exited while a worker lives (the
 * thread-group leader is a zombie). For each: a consumer in this process lists its
 * instance while it lives, a lazy reap frees nothing and a duplicate name is refused as
 * existing; once it died (SIGKILL), nothing is listed and the slot is freed, by the lazy
 * reaper (PERFLIB_KERNEL_REAPER=0) or by the kernel's exit reaper. The providers are
 * tests/helpers/prov_hold, started through the unshare(1) command line.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "testlib.h"
#include "../helpers/cons_util.h"

#define WAIT_MS 10000

/* true once /proc/@pid/stat says the task (a process's leader thread) is a zombie, waiting up
 * to WAIT_MS: a loaded machine may not have run the exit yet after any fixed sleep */
static bool leader_is_zombie(pid_t pid)
{
	char path[64], buf[512], *p;
	int waited;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (waited = 0; waited < WAIT_MS; waited += 5) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[n] = 0;
		/* "pid (comm) S ...": the state follows the last ')' */
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'Z')
			return true;
		usleep(5000);
	}
	return false;
}
#define PROV_GUID "{5a1e0b7e-0000-4d2c-9a3b-0000000000ff}"

struct holder {
	pid_t pid;   /* the process we started (unshare, or prov_hold itself) */
	int in, out; /* its stdin (close = die), its stdout */
	int ns_pid;  /* what prov_hold's getpid() said */
};

static char helper[PATH_MAX];
static char unshare_path[PATH_MAX];

static bool find_unshare(void)
{
	static const char *const dirs[] = {"/usr/bin", "/bin", "/usr/sbin", "/sbin"};
	size_t i;

	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(unshare_path, sizeof(unshare_path), "%s/unshare", dirs[i]);
		if (!access(unshare_path, X_OK))
			return true;
	}
	return false;
}

/* start prov_hold MODE GUID NAME, under `unshare --pid --fork [--mount-proc]` when @ns */
static void holder_start(struct holder *h, const char *mode, const GUID *set, const char *name,
			 int ns, bool kernel_reaper)
{
	char guid[40], line[64];
	int in[2], out[2];
	ssize_t n;
	size_t len = 0;

	snprintf(guid, sizeof(guid), "{");
	perflib_guid_to_string(set, guid + 1);
	strcat(guid, "}");
	assert_int_equal(pipe2(in, O_CLOEXEC), 0);
	assert_int_equal(pipe2(out, O_CLOEXEC), 0);
	h->pid = fork();
	assert_true(h->pid >= 0);
	if (!h->pid) {
		const char *argv[10];
		int a = 0;

		dup2(in[0], 0);
		dup2(out[1], 1);
		if (kernel_reaper)
			unsetenv("PERFLIB_KERNEL_REAPER");
		else
			setenv("PERFLIB_KERNEL_REAPER", "0", 1);
		if (ns) {
			argv[a++] = unshare_path;
			argv[a++] = "--pid";
			argv[a++] = "--fork";
			if (ns == 2)
				argv[a++] = "--mount-proc";
		}
		argv[a++] = helper;
		argv[a++] = mode;
		argv[a++] = guid;
		argv[a++] = name;
		argv[a] = NULL;
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	h->in = in[1];
	h->out = out[0];
	/* "ready <pid>\n" */
	while (len < sizeof(line) - 1 && (n = read(h->out, line + len, 1)) == 1 &&
	       line[len] != '\n')
		len++;
	line[len] = 0;
	if (sscanf(line, "ready %d", &h->ns_pid) != 1) {
		int st = 0;

		waitpid(h->pid, &st, 0);
		fail_msg("prov_hold %s under unshare mode %d never got ready (status 0x%x)", mode,
			 ns, st);
	}
}

/* close its stdin: prov_hold SIGKILLs itself; wait for the process we started */
static void holder_kill(struct holder *h)
{
	int rc;

	close(h->in);
	rc = tl_wait(h->pid, WAIT_MS);
	/* unshare --fork reports its child's death by the signal as 128 + signal */
	assert_true(rc == 128 + SIGKILL || rc == 0 || rc == 137);
	close(h->out);
}

/* instances of @set a consumer enumerates, and whether one is named @name */
static int listed(const GUID *set, const char *name, bool *ret_found)
{
	struct cons_inst inst[8];
	BYTE *buf = NULL;
	DWORD len = 0;
	ULONG st;
	int n, i;

	*ret_found = false;
	st = cons_enum(set, &buf, &len);
	if (st == ERROR_NOT_FOUND || (st == ERROR_SUCCESS && !len)) {
		free(buf);
		return 0;
	}
	assert_int_equal(st, ERROR_SUCCESS);
	n = cons_instances(buf, len, inst, 8);
	assert_true(n >= 0);
	for (i = 0; i < n && i < 8; i++)
		*ret_found |= cons_weq(inst[i].name, inst[i].len, name);
	free(buf);
	return n;
}

/* slots of @set in state @state */
static unsigned int count_slots(const GUID *set, uint32_t state)
{
	struct perflib_store *ro;
	unsigned int n = 0;
	uint32_t i;

	assert_int_equal(perflib_store_open(set, false, &ro), 0);
	for (i = 0; i < perflib_store_slots(ro, 0); i++)
		n += perflib_word_state(perflib_slot_word(perflib_slot(ro, i))) == state;
	perflib_store_close(ro);
	return n;
}

/* a provider in this process with prov_hold's template for @set */
static HANDLE host_provider(const GUID *set)
{
	struct {
		PERF_COUNTERSET_INFO set;
		PERF_COUNTER_INFO c[2];
	} t;
	GUID pg;
	HANDLE h;

	assert_int_equal(perflib_guid_from_string(PROV_GUID, &pg), 0);
	memset(&t, 0, sizeof(t));
	t.set.CounterSetGuid = *set;
	t.set.ProviderGuid = pg;
	t.set.NumCounters = 2;
	t.set.InstanceType = PERF_COUNTERSET_MULTI_INSTANCES;
	t.c[0] = (PERF_COUNTER_INFO){.CounterId = 1,
				     .Type = PERF_COUNTER_RAWCOUNT,
				     .Size = 4,
				     .DetailLevel = PERF_DETAIL_NOVICE};
	t.c[1] = (PERF_COUNTER_INFO){.CounterId = 2,
				     .Type = PERF_COUNTER_LARGE_RAWCOUNT,
				     .Size = 8,
				     .DetailLevel = PERF_DETAIL_NOVICE};
	assert_int_equal(PerfStartProvider(&pg, NULL, &h), ERROR_SUCCESS);
	assert_int_equal(PerfSetCounterSetInfo(h, &t.set, sizeof(t)), ERROR_SUCCESS);
	return h;
}

/*
 * The whole life of one provider seen from here: listed while alive (several times: a
 * consumer that caches owners must keep the right verdict), never reaped, its name taken;
 * after its death not listed, and its slot freed (by the kernel, or by our lazy reap).
 */
static void one_life(const char *mode, int ns, bool kernel_reaper)
{
	static unsigned int n;
	GUID set = tl_guid(0x9000 + n++);
	struct holder h;
	HANDLE prov;
	bool found;
	int i;

	if (ns && !find_unshare())
		skip();
	/* our own provider registers the set first (and, as root, attaches the exit reaper) */
	prov = host_provider(&set);
	holder_start(&h, mode, &set, "contained", ns, kernel_reaper);
	for (i = 0; i < 3; i++) {
		assert_int_equal(listed(&set, "contained", &found), 1);
		assert_true(found);
		/* a lazy reap from here must not take a living provider's slot */
		assert_int_equal(perflib_reap_counterset(&set), 0);
		assert_int_equal(count_slots(&set, PERFLIB_SLOT_LIVE), 1);
		SetLastError(0);
		assert_null(PerfCreateInstance(prov, &set, cons_w("contained"), 0));
		assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
		usleep(20000);
	}
	holder_kill(&h);
	/* dead: not listed, and no ghost slot once reaped (the kernel may have done it) */
	assert_int_equal(listed(&set, "contained", &found), 0);
	assert_false(found);
	if (kernel_reaper && getuid() == 0 && !access("/sys/kernel/btf/vmlinux", R_OK))
		assert_int_equal(count_slots(&set, PERFLIB_SLOT_LIVE), 0);
	assert_true(perflib_reap_counterset(&set) >= 0);
	assert_int_equal(count_slots(&set, PERFLIB_SLOT_LIVE), 0);
	assert_int_equal(count_slots(&set, PERFLIB_SLOT_CLAIMED), 0);
	/* and the name is free again */
	assert_non_null(PerfCreateInstance(prov, &set, cons_w("contained"), 0));
	assert_int_equal(PerfStopProvider(prov), ERROR_SUCCESS);
}

static void test_pidns_mount_proc(void **state)
{
	(void)state;
	one_life("hold", 2, false);
}

static void test_pidns_host_proc(void **state)
{
	(void)state;
	one_life("hold", 1, false);
}

static void test_pidns_mount_proc_kernel_reaper(void **state)
{
	(void)state;
	one_life("hold", 2, true);
}

static void test_pidns_host_proc_kernel_reaper(void **state)
{
	(void)state;
	one_life("hold", 1, true);
}

static void test_zombie_leader(void **state)
{
	(void)state;
	one_life("zombie", 0, false);
}

static void test_zombie_leader_kernel_reaper(void **state)
{
	(void)state;
	one_life("zombie", 0, true);
}

/* the zombie leader's workers keep counting into their own, still live slot */
static void test_zombie_leader_counts(void **state)
{
	GUID set = tl_guid(0x9100);
	struct perflib_store *ro;
	struct holder h;
	HANDLE prov;
	const uint8_t *mine = NULL;
	uint32_t v1, v2, i;
	int waited;

	(void)state;
	prov = host_provider(&set);
	holder_start(&h, "zombie", &set, "worker", 0, false);
	assert_true(leader_is_zombie(h.pid));
	/* a reap, then a create into the set: neither may take the working provider's slot */
	assert_int_equal(perflib_reap_counterset(&set), 0);
	assert_non_null(PerfCreateInstance(prov, &set, cons_w("other"), 1));
	assert_int_equal(perflib_store_open(&set, false, &ro), 0);
	for (i = 0; i < perflib_store_slots(ro, 0); i++) {
		const uint8_t *slot = perflib_slot(ro, i);
		uint64_t w = perflib_slot_word(slot);

		if (perflib_word_state(w) == PERFLIB_SLOT_LIVE &&
		    perflib_word_pid(w) == (uint32_t)h.ns_pid)
			mine = slot;
	}
	assert_non_null(mine);
	/* the worker thread counts on (it may not have run yet on a loaded machine: wait for
	 * each step up to WAIT_MS rather than after a fixed sleep) */
	v1 = 0;
	for (waited = 0; waited < WAIT_MS && !v1; waited += 5) {
		usleep(5000);
		v1 = __atomic_load_n((const uint32_t *)(mine + PERFLIB_COUNTERS_OFFSET),
				     __ATOMIC_RELAXED);
	}
	assert_true(v1 > 0);
	v2 = v1;
	for (waited = 0; waited < WAIT_MS && v2 == v1; waited += 5) {
		usleep(5000);
		v2 = __atomic_load_n((const uint32_t *)(mine + PERFLIB_COUNTERS_OFFSET),
				     __ATOMIC_RELAXED);
	}
	assert_true(v2 > v1);
	assert_int_equal(perflib_word_state(perflib_slot_word(mine)), PERFLIB_SLOT_LIVE);
	perflib_store_close(ro);
	holder_kill(&h);
	assert_int_equal(PerfStopProvider(prov), ERROR_SUCCESS);
}

/* perflib_proc_alive on the identities, directly: a zombie leader lives, a zombie does not */
static void test_proc_alive_zombie(void **state)
{
	struct holder h;
	uint64_t stamp, start;
	uint32_t self;
	GUID set = tl_guid(0x9200);
	HANDLE prov;
	pid_t z;

	(void)state;
	prov = host_provider(&set);
	holder_start(&h, "zombie", &set, "z", 0, false);
	/* its leader has exited, its worker thread runs on */
	assert_true(leader_is_zombie(h.pid));
	assert_int_equal(perflib_proc_start_time(h.pid, &start), 0);
	perflib_self(&self, &stamp);
	/* the same namespace: the stamp of a process here is its start time */
	assert_int_equal(perflib_proc_alive((uint32_t)h.pid, start | (stamp & ~PERFLIB_START_MASK)),
			 1);
	holder_kill(&h);
	/* a real zombie (not waited for) is dead */
	z = fork();
	assert_true(z >= 0);
	if (!z)
		_exit(0);
	/* exited, and left unreaped (WNOWAIT): a zombie */
	{
		siginfo_t si;

		assert_int_equal(waitid(P_PID, (id_t)z, &si, WEXITED | WNOWAIT), 0);
	}
	assert_true(leader_is_zombie(z));
	assert_int_equal(perflib_proc_start_time(z, &start), 0);
	assert_int_equal(perflib_proc_alive((uint32_t)z, start | (stamp & ~PERFLIB_START_MASK)), 0);
	assert_int_equal(tl_wait(z, WAIT_MS), 0);
	assert_int_equal(PerfStopProvider(prov), ERROR_SUCCESS);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_alive_zombie),
		cmocka_unit_test(test_zombie_leader),
		cmocka_unit_test(test_zombie_leader_kernel_reaper),
		cmocka_unit_test(test_zombie_leader_counts),
		cmocka_unit_test(test_pidns_mount_proc),
		cmocka_unit_test(test_pidns_host_proc),
		cmocka_unit_test(test_pidns_mount_proc_kernel_reaper),
		cmocka_unit_test(test_pidns_host_proc_kernel_reaper),
	};
	char self[PATH_MAX];
	ssize_t n;

	(void)argc;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = 0;
	snprintf(helper, sizeof(helper), "%s/../helpers/prov_hold", dirname(self));
	(void)argv;
	tl_require_bpf();
	if (access(helper, X_OK)) {
		/* a build that lost its helper fails: a skip would hide the test */
		printf("prov_hold is not built (%s)\n", helper);
		return 1;
	}
	return cmocka_run_group_tests_name("pidns", tests, tl_group_setup, tl_group_teardown);
}

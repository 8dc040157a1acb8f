// SPDX-License-Identifier: MIT
/*
 * test_callback.c - callback.c and collect.c with real processes: a provider child's
 * ControlCallback run from this process (codes, byte-exact buffers, the thread it runs on,
 * results), by-reference counters dereferenced inside the provider and read here, timeouts
 * against stopped, slow and dead providers, the access rule for unprivileged consumers,
 * fork(), stopping and restarting the service, and hostile input on both sides. Children
 * report through pipes and exit codes (cmocka stays in the parent).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "internal.h"
#include "testlib.h"
#include "../helpers/prov_util.h"

#define WAIT_MS 10000
#define NOBODY 65534
#define TEST_GROUP 4242
/* a by-reference DWORD counter next to the standard set's LARGE one */
#define REF32 5
#define POS_REF64 2 /* template position of PROV_STD_REF */
#define POS_REF32 4 /* template position of REF32 */

/* what the parent tells the providers' callbacks (shared mapping) */
struct ctl {
	_Atomic ULONG ret[3];	    /* result of callback 1 and 2 */
	_Atomic uint32_t sleep_ms;  /* callbacks sleep this long */
	_Atomic uint32_t stop_self; /* callback 1 stops its own provider */
};

/* one callback invocation, as a provider child reports it */
struct rec {
	uint32_t code;
	uint32_t size;
	int32_t pid;
	int32_t tid;
	int32_t which; /* callback 1 or 2 */
	uint8_t buf[200];
};

static struct ctl *ctl;
static int rec_fd = -1;	   /* child: where its callbacks report */
static HANDLE self_handle; /* child: the provider callback 1 belongs to */

static ULONG record(int which, ULONG code, PVOID buf, ULONG size)
{
	struct rec r;
	uint32_t ms;

	memset(&r, 0, sizeof(r));
	r.code = code;
	r.size = size;
	r.pid = getpid();
	r.tid = gettid();
	r.which = which;
	memcpy(r.buf, buf, size < sizeof(r.buf) ? size : sizeof(r.buf));
	if (write(rec_fd, &r, sizeof(r)) != sizeof(r))
		return 99;
	for (ms = atomic_load(&ctl->sleep_ms); ms; ms -= ms > 10 ? 10 : ms)
		usleep(10000);
	if (which == 1 && atomic_load(&ctl->stop_self))
		PerfStopProvider(self_handle);
	return atomic_load(&ctl->ret[which]);
}

static ULONG CALLBACK cb1(ULONG code, PVOID buf, ULONG size)
{
	return record(1, code, buf, size);
}

static ULONG CALLBACK cb2(ULONG code, PVOID buf, ULONG size)
{
	return record(2, code, buf, size);
}

/* the standard set plus a by-reference DWORD counter */
static void tmpl_cb(struct prov_tmpl *t, GUID set)
{
	prov_tmpl_std(t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	prov_tmpl_add(t, REF32, PERF_COUNTER_RAWCOUNT, PERF_ATTRIB_BY_REFERENCE);
}

static void ctl_reset(void)
{
	int i;

	for (i = 0; i < 3; i++)
		atomic_store(&ctl->ret[i], 0);
	atomic_store(&ctl->sleep_ms, 0);
	atomic_store(&ctl->stop_self, 0);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static void set_timeout(unsigned int ms)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%u", ms);
	setenv("PERFLIB_CALLBACK_TIMEOUT_MS", buf, 1);
}

/* ---- provider children ------------------------------------------------------------------ */

struct pchild {
	GUID set;
	int callbacks; /* providers with a callback: 0, 1 or 2 */
	bool refs;     /* instances "a" and "b" with by-reference addresses */
	int rec[2];    /* child -> parent: struct rec */
	int ready[2];  /* child -> parent */
	int go[2];     /* parent -> child */
	int info[2];   /* child -> parent: addresses, step results */
	pid_t pid;
};

/* the by-reference variables of a child, changed between steps */
static uint64_t big_a = 111, big_b = 5;
static uint32_t small_a = 7, small_b = 9;

static int child_provider(void *arg)
{
	struct pchild *c = arg;
	GUID pg = prov_provider_guid();
	PPERF_COUNTERSET_INSTANCE a = NULL, b = NULL;
	struct prov_tmpl t;
	uint64_t addr;
	HANDLE h1, h2;

	rec_fd = c->rec[1];
	tmpl_cb(&t, c->set);
	if (PerfStartProvider(&pg, c->callbacks ? cb1 : NULL, &h1) || prov_tmpl_register(h1, &t))
		return 2;
	self_handle = h1;
	if (c->callbacks == 2 && (PerfStartProvider(&pg, cb2, &h2) || prov_tmpl_register(h2, &t)))
		return 3;
	if (c->refs) {
		a = PerfCreateInstance(h1, &c->set, u"a", 1);
		b = PerfCreateInstance(h1, &c->set, u"b", 2);
		if (!a || !b)
			return 4;
		if (PerfSetCounterRefValue(h1, a, PROV_STD_REF, &big_a) ||
		    PerfSetCounterRefValue(h1, a, REF32, &small_a) ||
		    PerfSetCounterRefValue(h1, b, PROV_STD_REF, NULL) ||
		    PerfSetCounterRefValue(h1, b, REF32, &small_b))
			return 5;
		addr = (uintptr_t)&big_a;
		if (write(c->info[1], &addr, sizeof(addr)) != sizeof(addr))
			return 6;
	}
	tl_signal(c->ready[1]);
	if (tl_await(c->go[0], 60000))
		return 7;
	if (c->refs) {
		/* step 2: new values, a NULL where there was an address and the reverse */
		__atomic_store_n(&big_a, 222222222222ULL, __ATOMIC_RELAXED);
		__atomic_store_n(&small_a, 8, __ATOMIC_RELAXED);
		if (PerfSetCounterRefValue(h1, a, REF32, NULL) ||
		    PerfSetCounterRefValue(h1, b, PROV_STD_REF, &big_b))
			return 8;
		tl_signal(c->ready[1]);
		if (tl_await(c->go[0], 60000))
			return 9;
	}
	if (c->callbacks == 2 && PerfStopProvider(h2))
		return 10;
	return PerfStopProvider(h1) ? 11 : 0;
}

static void pchild_start(struct pchild *c, GUID set, int callbacks, bool refs)
{
	memset(c, 0, sizeof(*c));
	c->set = set;
	c->callbacks = callbacks;
	c->refs = refs;
	assert_int_equal(tl_pipe(c->rec), 0);
	assert_int_equal(tl_pipe(c->ready), 0);
	assert_int_equal(tl_pipe(c->go), 0);
	assert_int_equal(tl_pipe(c->info), 0);
	c->pid = tl_fork(child_provider, c);
	assert_true(c->pid > 0);
	if (tl_await(c->ready[0], WAIT_MS))
		fail_msg("provider child never got ready (exit %d)", tl_wait(c->pid, WAIT_MS));
}

static void pchild_close(struct pchild *c)
{
	int *fds[] = {c->rec, c->ready, c->go, c->info};
	size_t i;

	for (i = 0; i < 4; i++) {
		close(fds[i][0]);
		close(fds[i][1]);
	}
}

/* tell the child to go on and expect exit code 0 */
static void pchild_finish(struct pchild *c)
{
	assert_int_equal(tl_signal(c->go[1]), 0);
	if (c->refs) {
		assert_int_equal(tl_await(c->ready[0], WAIT_MS), 0);
		assert_int_equal(tl_signal(c->go[1]), 0);
	}
	assert_int_equal(tl_wait(c->pid, WAIT_MS), 0);
	pchild_close(c);
}

static void pchild_kill(struct pchild *c)
{
	kill(c->pid, SIGCONT);
	kill(c->pid, SIGKILL);
	assert_int_equal(tl_wait(c->pid, WAIT_MS), 128 + SIGKILL);
	pchild_close(c);
}

/* the next record from @fd within @timeout_ms; false if none */
static bool rec_read(int fd, struct rec *r, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	if (poll(&p, 1, timeout_ms) != 1)
		return false;
	return read(fd, r, sizeof(*r)) == sizeof(*r);
}

static struct perflib_store *open_set(GUID set)
{
	struct perflib_store *map = NULL;

	assert_int_equal(perflib_store_open(&set, false, &map), 0);
	return map;
}

/* notify and expect success; returns the status */
static ULONG notify(struct perflib_store *map, ULONG code, const void *buf, size_t len)
{
	ULONG status = 0xDEAD;

	assert_int_equal(perflib_notify_providers(map, code, buf, len, &status), 0);
	return status;
}

/*
 * A fresh provider child (@callbacks providers with a callback, @refs instances) and the
 * consumer's view of its counter set; @timeout_ms sets PERFLIB_CALLBACK_TIMEOUT_MS (0: unset)
 */
static struct perflib_store *setup(struct pchild *c, unsigned int timeout_ms, int callbacks,
				   bool refs)
{
	ctl_reset();
	if (timeout_ms)
		set_timeout(timeout_ms);
	else
		unsetenv("PERFLIB_CALLBACK_TIMEOUT_MS");
	pchild_start(c, prov_guid(), callbacks, refs);
	return open_set(c->set);
}

/* ---- the buffers --------------------------------------------------------------------------- */

/* spec 8.6, byte for byte */
static void test_identity_bytes(void **state)
{
	static const uint8_t expect[60] = {
		0x78, 0x56, 0x34, 0x12, 0x34, 0x12, 0x78, 0x56, 0x12, 0x34, 0x11, 0x11,
		0x22, 0x22, 0x33, 0x33, 0x3c, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00,
		0xff, 0xff, 0xff, 0xff, 0x28, 0x00, 0x00, 0x00, 0x32, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x48, 0x00, 0x4f, 0x00, 0x53, 0x00, 0x54, 0x00,
		0x00, 0x00, 0x49, 0x00, 0x6e, 0x00, 0x73, 0x00, 0x74, 0x00, 0x00, 0x00,
	};
	GUID g = {0x12345678, 0x1234, 0x5678, {0x12, 0x34, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33}};
	PERF_COUNTER_IDENTITY id;
	void *buf;
	size_t len;

	(void)state;
	assert_int_equal(perflib_cb_identity(&g, 3, 0xFFFFFFFF, u"HOST", u"Inst", &buf, &len), 0);
	assert_int_equal(len, sizeof(expect));
	assert_memory_equal(buf, expect, sizeof(expect));
	assert_int_equal(perflib_cb_buffer_check(PERF_ADD_COUNTER, &g, buf, len), 0);
	free(buf);

	/* no instance name: NameOffset 0 */
	assert_int_equal(perflib_cb_identity(&g, 7, 0, u"", NULL, &buf, &len), 0);
	assert_int_equal(len, 42);
	memcpy(&id, buf, sizeof(id));
	assert_int_equal(id.BufferSize, 42);
	assert_int_equal(id.MachineOffset, 40);
	assert_int_equal(id.NameOffset, 0);
	assert_int_equal(perflib_cb_buffer_check(PERF_REMOVE_COUNTER, &g, buf, len), 0);
	free(buf);
	assert_int_equal(perflib_cb_identity(&g, 7, 0, NULL, NULL, &buf, &len), -EINVAL);
}

/* what both sides refuse to pass to a callback */
static void test_buffer_check(void **state)
{
	GUID g = tl_guid(1), other = tl_guid(2);
	PERF_COUNTER_IDENTITY id;
	uint8_t buf[64];
	void *good;
	size_t len;

	(void)state;
	assert_int_equal(perflib_cb_identity(&g, 3, 0, u"HOST", u"Inst", &good, &len), 0);
	memcpy(buf, good, len);
	free(good);
	assert_int_equal(perflib_cb_buffer_check(PERF_ADD_COUNTER, &g, buf, len), 0);
	assert_int_equal(perflib_cb_buffer_check(PERF_ADD_COUNTER, &other, buf, len), -EINVAL);
	assert_int_equal(perflib_cb_buffer_check(PERF_ADD_COUNTER, &g, buf, len - 2), -EINVAL);
	assert_int_equal(perflib_cb_buffer_check(PERF_ADD_COUNTER, &g, buf, 39), -EINVAL);
	memcpy(&id, buf, sizeof(id));
	id.NameOffset = (ULONG)len; /* past the end */
	memcpy(buf, &id, sizeof(id));
	assert_int_equal(perflib_cb_buffer_check(PERF_ADD_COUNTER, &g, buf, len), -EINVAL);
	id.NameOffset = 51; /* odd */
	memcpy(buf, &id, sizeof(id));
	assert_int_equal(perflib_cb_buffer_check(PERF_ADD_COUNTER, &g, buf, len), -EINVAL);
	id.NameOffset = 50;
	id.MachineOffset = 8; /* inside the structure */
	memcpy(buf, &id, sizeof(id));
	assert_int_equal(perflib_cb_buffer_check(PERF_ADD_COUNTER, &g, buf, len), -EINVAL);
	id.MachineOffset = 40;
	memcpy(buf, &id, sizeof(id));
	buf[len - 2] = 'x'; /* instance name not terminated */
	assert_int_equal(perflib_cb_buffer_check(PERF_ADD_COUNTER, &g, buf, len), -EINVAL);

	assert_int_equal(perflib_cb_buffer_check(PERF_ENUM_INSTANCES, &g, u"HOST", 10), 0);
	assert_int_equal(perflib_cb_buffer_check(PERF_COLLECT_START, &g, u"HOST", 8), -EINVAL);
	assert_int_equal(perflib_cb_buffer_check(PERF_COLLECT_END, &g, u"HOST", 9), -EINVAL);
	assert_int_equal(perflib_cb_buffer_check(PERF_COLLECT_END, &g, u"", 0), -EINVAL);
	assert_int_equal(perflib_cb_buffer_check(PERF_FILTER, &g, u"HOST", 10), -EINVAL);
	assert_int_equal(perflib_cb_buffer_check(4, &g, u"HOST", 10), -EINVAL);
	assert_int_equal(perflib_cb_buffer_check(PERF_COLLECT_END, &g, NULL, 10), -EINVAL);
}

static void test_timeout_env(void **state)
{
	(void)state;
	unsetenv("PERFLIB_CALLBACK_TIMEOUT_MS");
	assert_int_equal(perflib_cb_timeout_ms(), 1000);
	set_timeout(250);
	assert_int_equal(perflib_cb_timeout_ms(), 250);
	setenv("PERFLIB_CALLBACK_TIMEOUT_MS", "0", 1);
	assert_int_equal(perflib_cb_timeout_ms(), 1000);
	setenv("PERFLIB_CALLBACK_TIMEOUT_MS", "12x", 1);
	assert_int_equal(perflib_cb_timeout_ms(), 1000);
	setenv("PERFLIB_CALLBACK_TIMEOUT_MS", "99999999999", 1);
	assert_int_equal(perflib_cb_timeout_ms(), 1000);
	unsetenv("PERFLIB_CALLBACK_TIMEOUT_MS");
}

/* ---- callbacks across processes ------------------------------------------------------------ */

/* check the next record: @code with @len bytes equal to @buf, in @pid, not its main thread */
static void expect_rec(struct pchild *c, ULONG code, const void *buf, size_t len, int which)
{
	struct rec r;

	assert_true(rec_read(c->rec[0], &r, WAIT_MS));
	assert_int_equal(r.code, code);
	assert_int_equal(r.size, len);
	assert_memory_equal(r.buf, buf, len);
	assert_int_equal(r.pid, c->pid);
	assert_int_not_equal(r.tid, r.pid);
	if (which)
		assert_int_equal(r.which, which);
}

static void test_callback_requests(void **state)
{
	struct perflib_store *map;
	struct pchild c;
	struct rec r;
	void *id;
	size_t len;

	(void)state;
	map = setup(&c, 0, 1, false);
	/* the provider never hears of anything while no consumer asks */
	assert_false(rec_read(c.rec[0], &r, 50));

	assert_int_equal(perflib_cb_identity(&c.set, PROV_STD_LARGE, 0xFFFFFFFF, u"HOST", u"Inst",
					     &id, &len),
			 0);
	assert_int_equal(notify(map, PERF_ADD_COUNTER, id, len), ERROR_SUCCESS);
	expect_rec(&c, PERF_ADD_COUNTER, id, len, 1);
	assert_int_equal(notify(map, PERF_REMOVE_COUNTER, id, len), ERROR_SUCCESS);
	expect_rec(&c, PERF_REMOVE_COUNTER, id, len, 1);
	free(id);
	assert_int_equal(notify(map, PERF_ENUM_INSTANCES, u"HOST", 10), ERROR_SUCCESS);
	expect_rec(&c, PERF_ENUM_INSTANCES, u"HOST", 10, 1);
	assert_int_equal(notify(map, PERF_COLLECT_START, u"host-1", 14), ERROR_SUCCESS);
	expect_rec(&c, PERF_COLLECT_START, u"host-1", 14, 1);
	assert_int_equal(notify(map, PERF_COLLECT_END, u"host-1", 14), ERROR_SUCCESS);
	expect_rec(&c, PERF_COLLECT_END, u"host-1", 14, 1);
	/* one request, one call */
	assert_false(rec_read(c.rec[0], &r, 50));

	/* requests the consumer side refuses before sending */
	assert_int_equal(perflib_notify_providers(map, PERF_FILTER, u"x", 4, &(ULONG){0}), -EINVAL);
	assert_int_equal(perflib_notify_providers(map, PERF_ENUM_INSTANCES, u"x", 3, &(ULONG){0}),
			 -EINVAL);
	assert_false(rec_read(c.rec[0], &r, 50));

	/* by-reference counters but no instance: nothing to collect, no error */
	assert_int_equal(perflib_collect_refs(map), 0);
	perflib_store_close(map);
	pchild_finish(&c);
}

static void test_callback_status(void **state)
{
	struct perflib_store *map;
	struct pchild c;
	struct rec r1, r2;

	(void)state;
	map = setup(&c, 0, 2, false);

	/* both providers of the process are called, the non-zero result reaches the consumer */
	atomic_store(&ctl->ret[1], 0);
	atomic_store(&ctl->ret[2], 0x1234);
	assert_int_equal(notify(map, PERF_COLLECT_START, u"H", 4), 0x1234);
	assert_true(rec_read(c.rec[0], &r1, WAIT_MS));
	assert_true(rec_read(c.rec[0], &r2, WAIT_MS));
	assert_int_equal(r1.which + r2.which, 3);
	assert_int_equal(r1.pid, c.pid);
	assert_int_equal(r2.pid, c.pid);

	atomic_store(&ctl->ret[1], ERROR_ACCESS_DENIED);
	atomic_store(&ctl->ret[2], 0);
	assert_int_equal(notify(map, PERF_ENUM_INSTANCES, u"H", 4), ERROR_ACCESS_DENIED);
	assert_true(rec_read(c.rec[0], &r1, WAIT_MS));
	assert_true(rec_read(c.rec[0], &r2, WAIT_MS));

	atomic_store(&ctl->ret[1], 0);
	assert_int_equal(notify(map, PERF_COLLECT_END, u"H", 4), ERROR_SUCCESS);
	assert_true(rec_read(c.rec[0], &r1, WAIT_MS));
	assert_true(rec_read(c.rec[0], &r2, WAIT_MS));
	perflib_store_close(map);
	pchild_finish(&c);
}

/* ---- by-reference counters ------------------------------------------------------------------ */

/* the slot of live instance @name ("a" or "b") in @map */
static const uint8_t *slot_named(struct perflib_store *map, const char *name)
{
	const struct perflib_info *info = map->info;
	uint32_t i;

	for (i = 0; i < perflib_store_slots(map, 0); i++) {
		const uint8_t *slot = perflib_slot(map, i);

		if (perflib_word_state(perflib_slot_word(slot)) == PERFLIB_SLOT_LIVE &&
		    !strcmp((const char *)slot + info->ascii_offset, name))
			return slot;
	}
	fail_msg("no live instance %s", name);
	return NULL;
}

static uint64_t ref_value(struct perflib_store *map, const char *name, unsigned int pos)
{
	const uint8_t *slot = slot_named(map, name);

	return __atomic_load_n((const uint64_t *)(slot + map->info->ref_offset + 8 * pos),
			       __ATOMIC_RELAXED);
}

static uint64_t ref_nulls(struct perflib_store *map, const char *name)
{
	const uint8_t *slot = slot_named(map, name);

	return *(const uint64_t *)(slot + map->info->ref_offset + 8 * map->info->nr_counters);
}

static void test_byref_collect(void **state)
{
	struct perflib_store *map;
	struct pchild c;
	uint64_t addr, shown;

	(void)state;
	map = setup(&c, 0, 0, true);
	assert_int_not_equal(map->info->ref_offset, 0);
	assert_int_equal(read(c.info[0], &addr, sizeof(addr)), sizeof(addr));
	/* before any collection the ref area is zero */
	assert_int_equal(ref_value(map, "a", POS_REF64), 0);

	assert_int_equal(perflib_collect_refs(map), 0);
	assert_int_equal(ref_value(map, "a", POS_REF64), 111);
	assert_int_equal(ref_value(map, "a", POS_REF32), 7);
	assert_int_equal(ref_nulls(map, "a"), 0);
	assert_int_equal(ref_value(map, "b", POS_REF64), 0);
	assert_int_equal(ref_value(map, "b", POS_REF32), 9);
	assert_int_equal(ref_nulls(map, "b"), 1ULL << POS_REF64);
	/* the Windows-visible counter slot keeps the provider's pointer */
	memcpy(&shown, slot_named(map, "a") + PERFLIB_COUNTERS_OFFSET + 8 * POS_REF64, 8);
	assert_int_equal(shown, addr);

	/* new values and addresses in the child, then collect again */
	assert_int_equal(tl_signal(c.go[1]), 0);
	assert_int_equal(tl_await(c.ready[0], WAIT_MS), 0);
	assert_int_equal(perflib_collect_refs(map), 0);
	assert_int_equal(ref_value(map, "a", POS_REF64), 222222222222ULL);
	assert_int_equal(ref_value(map, "a", POS_REF32), 0);
	assert_int_equal(ref_nulls(map, "a"), 1ULL << POS_REF32);
	assert_int_equal(ref_value(map, "b", POS_REF64), 5);
	assert_int_equal(ref_nulls(map, "b"), 0);

	/* a process without a ControlCallback is not notified: nothing to wait for */
	assert_int_equal(notify(map, PERF_COLLECT_START, u"H", 4), ERROR_SUCCESS);
	perflib_store_close(map);
	assert_int_equal(tl_signal(c.go[1]), 0);
	assert_int_equal(tl_wait(c.pid, WAIT_MS), 0);
	pchild_close(&c);
}

/* ---- timeouts -------------------------------------------------------------------------------- */

static void test_sigstop_provider(void **state)
{
	struct perflib_store *map;
	struct timespec t0;
	struct pchild c;
	struct rec r;
	long ms;

	(void)state;
	map = setup(&c, 200, 1, true);
	assert_int_equal(kill(c.pid, SIGSTOP), 0);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(notify(map, PERF_COLLECT_START, u"H", 4), ERROR_SUCCESS);
	ms = ms_since(&t0);
	assert_true(ms >= 150);
	assert_true(ms < 2000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(perflib_collect_refs(map), 0);
	ms = ms_since(&t0);
	assert_true(ms < 2000);
	/* left unanswered: the values stay as they were (never collected) */
	assert_int_equal(ref_value(map, "a", POS_REF64), 0);

	/* resumed: the stale request is dropped, not run late */
	usleep(100000);
	assert_int_equal(kill(c.pid, SIGCONT), 0);
	assert_false(rec_read(c.rec[0], &r, 300));
	/* and the provider answers again */
	assert_int_equal(notify(map, PERF_COLLECT_END, u"H", 4), ERROR_SUCCESS);
	expect_rec(&c, PERF_COLLECT_END, u"H", 4, 1);
	assert_int_equal(perflib_collect_refs(map), 0);
	assert_int_equal(ref_value(map, "a", POS_REF64), 111);
	perflib_store_close(map);
	pchild_kill(&c);
	unsetenv("PERFLIB_CALLBACK_TIMEOUT_MS");
}

static void test_slow_callback(void **state)
{
	struct perflib_store *map;
	struct timespec t0;
	struct pchild c;
	struct rec r;
	long ms;

	(void)state;
	map = setup(&c, 200, 1, true);
	atomic_store(&ctl->sleep_ms, 5000);
	atomic_store(&ctl->ret[1], 99);

	/* the callback runs but does not finish in time: its result is ignored */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(notify(map, PERF_COLLECT_START, u"H", 4), ERROR_SUCCESS);
	ms = ms_since(&t0);
	assert_true(ms < 2000);
	assert_true(rec_read(c.rec[0], &r, WAIT_MS));
	assert_int_equal(r.code, PERF_COLLECT_START);

	/* meanwhile collection is served by the other thread */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(perflib_collect_refs(map), 0);
	assert_true(ms_since(&t0) < 2000);
	assert_int_equal(ref_value(map, "a", POS_REF64), 111);

	/* the next consumers are told at once that the callback thread is late */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(notify(map, PERF_COLLECT_END, u"H", 4), ERROR_SUCCESS);
	assert_int_equal(notify(map, PERF_COLLECT_START, u"H", 4), ERROR_SUCCESS);
	assert_true(ms_since(&t0) < 2000);
	assert_false(rec_read(c.rec[0], &r, 50));
	perflib_store_close(map);
	pchild_kill(&c);
	unsetenv("PERFLIB_CALLBACK_TIMEOUT_MS");
}

static void test_dead_provider(void **state)
{
	struct perflib_store *map;
	struct timespec t0;
	struct pchild c;

	(void)state;
	/* long: a dead provider must not cost any of it */
	map = setup(&c, 5000, 1, true);
	assert_int_equal(kill(c.pid, SIGKILL), 0);
	usleep(50000);
	/* a zombie, not yet reaped */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(notify(map, PERF_COLLECT_START, u"H", 4), ERROR_SUCCESS);
	assert_int_equal(perflib_collect_refs(map), 0);
	assert_true(ms_since(&t0) < 1000);
	/* reaped */
	assert_int_equal(tl_wait(c.pid, WAIT_MS), 128 + SIGKILL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(notify(map, PERF_COLLECT_START, u"H", 4), ERROR_SUCCESS);
	assert_int_equal(perflib_collect_refs(map), 0);
	assert_true(ms_since(&t0) < 1000);
	perflib_store_close(map);
	pchild_close(&c);
	unsetenv("PERFLIB_CALLBACK_TIMEOUT_MS");
}

/* ---- access ----------------------------------------------------------------------------------- */

static void pins_chmod(GUID set, mode_t mode, uid_t uid, gid_t gid)
{
	char dir[PATH_MAX];

	assert_int_equal(perflib_store_dir(&set, dir, sizeof(dir)), 0);
	assert_int_equal(tl_pins_chmod(dir, mode, uid, gid), 0);
}

/*
 * A reader's view of a counter set it may read but not write: perflib_store_open gives it
 * unmapped (read-only fds cannot be mmapped), so the consumer side reads the procs entries
 * with lookups. NULL when the pins refuse.
 */
static struct perflib_store *reader_open(GUID set)
{
	struct perflib_store *map;

	if (perflib_store_open(&set, false, &map))
		return NULL;
	/* runs in a child: a mapped view here would be a failure (the caller sees NULL) */
	if (map->mapped || map->procs) {
		perflib_store_close(map);
		return NULL;
	}
	return map;
}

/* a by-reference value read with a lookup (the reader has no mapping) */
static int reader_ref_a(struct perflib_store *map, uint64_t *ret)
{
	const struct perflib_info *info = map->info;
	uint8_t *slot = malloc(info->slot_size);
	uint32_t i;

	/* segment 0: the test's few instances */
	for (i = 0; i < map->cls[0].seg0; i++) {
		if (bpf_map_lookup_elem(perflib_seg_at(&map->cls[0], 0)->data_fd, &i, slot))
			break;
		if ((*(uint32_t *)slot & PERFLIB_SLOT_STATE_MASK) == PERFLIB_SLOT_LIVE &&
		    !strcmp((char *)slot + info->ascii_offset, "a")) {
			memcpy(ret, slot + info->ref_offset + 8 * POS_REF64, 8);
			free(slot);
			return 0;
		}
	}
	free(slot);
	return -1;
}

struct reader {
	GUID set;
	gid_t group;			 /* supplementary group, 0 = none */
	struct perflib_store *inherited; /* opened by root before the fork */
	bool expect_allowed;
};

/* an unprivileged consumer: nobody, maybe with one supplementary group */
static int child_reader(void *arg)
{
	struct reader *r = arg;
	struct perflib_store *map;
	ULONG status = 0xDEAD;
	uint64_t v = 0;
	int err;

	if (setgroups(r->group ? 1 : 0, &r->group) || setgid(NOBODY) || setuid(NOBODY))
		return 2;
	/* room for a loaded machine: a refused request is answered at once, whatever this is */
	set_timeout(10000);
	map = reader_open(r->set);
	if (r->expect_allowed) {
		if (!map)
			return 3;
		err = perflib_notify_providers(map, PERF_COLLECT_START, u"H", 4, &status);
		if (err || status)
			return 4;
		if (perflib_collect_refs(map) || reader_ref_a(map, &v) || v != 111)
			return 5;
		perflib_store_close(map);
		return 0;
	}
	/* no read permission: the pins refuse, and so does the provider */
	if (map)
		return 6;
	if (perflib_store_open(&r->set, false, &map) != -EACCES)
		return 7;
	/* the root's mapping, still here after setuid: not a way around the rule */
	if (perflib_notify_providers(r->inherited, PERF_COLLECT_START, u"H", 4, &status) != -EACCES)
		return 8;
	if (perflib_collect_refs(r->inherited) != -EACCES)
		return 9;
	return 0;
}

static void run_reader(struct pchild *c, struct perflib_store *root_map, gid_t group, bool allowed)
{
	struct reader r = {
		.set = c->set,
		.group = group,
		.inherited = root_map,
		.expect_allowed = allowed,
	};
	struct rec rec;
	pid_t pid;

	pid = tl_fork(child_reader, &r);
	assert_true(pid > 0);
	assert_int_equal(tl_wait(pid, WAIT_MS), 0);
	if (allowed) {
		expect_rec(c, PERF_COLLECT_START, u"H", 4, 1);
	} else {
		/* refused requests never reach the callback */
		assert_false(rec_read(c->rec[0], &rec, 100));
	}
}

static void test_unprivileged_consumer(void **state)
{
	struct perflib_store *map;
	struct pchild c;

	(void)state;
	map = setup(&c, 0, 1, true);

	pins_chmod(c.set, 0644, 0, 0);
	run_reader(&c, map, 0, true);
	pins_chmod(c.set, 0600, 0, 0);
	run_reader(&c, map, 0, false);
	/* group read: members only */
	pins_chmod(c.set, 0640, 0, TEST_GROUP);
	run_reader(&c, map, TEST_GROUP, true);
	run_reader(&c, map, 0, false);
	/* the owner class decides for the owner, as in the kernel: group read does not help */
	pins_chmod(c.set, 0044, NOBODY, TEST_GROUP);
	run_reader(&c, map, TEST_GROUP, false);
	pins_chmod(c.set, 0600, 0, 0);
	perflib_store_close(map);
	pchild_kill(&c);
}

/* ---- fork, stop, restart -------------------------------------------------------------------- */

static int nr_threads(void)
{
	struct dirent *de;
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

struct forker {
	GUID set_p, set_g; /* the parent provider's, the grandchild's */
	int rec[2], ready[2], go[2];
	int pids[2]; /* grandchild -> test: its pid */
};

static int grandchild(struct forker *f, HANDLE inherited)
{
	GUID pg = prov_provider_guid();
	struct prov_tmpl t;
	HANDLE h;

	/* the service threads stayed in the parent */
	if (nr_threads() != 1)
		return 20;
	tmpl_cb(&t, f->set_g);
	if (PerfStartProvider(&pg, cb2, &h) || prov_tmpl_register(h, &t))
		return 21;
	tl_signal(f->ready[1]);
	if (tl_await(f->go[0], 60000))
		return 22;
	/*
	 * its own provider ends this process's service; the inherited handle is dead in a child
	 * (docs/ARCHITECTURE.md, "fork()"): refused, and the parent's provider is untouched
	 */
	if (PerfStopProvider(h) || PerfStopProvider(inherited) != ERROR_INVALID_PARAMETER)
		return 23;
	if (nr_threads() != 1)
		return 24;
	return 0;
}

static int child_forker(void *arg)
{
	struct forker *f = arg;
	GUID pg = prov_provider_guid();
	struct prov_tmpl t;
	pid_t pid;
	HANDLE h;
	int rc;

	rec_fd = f->rec[1];
	tmpl_cb(&t, f->set_p);
	if (PerfStartProvider(&pg, cb1, &h) || prov_tmpl_register(h, &t))
		return 2;
	if (nr_threads() < 2)
		return 3;
	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(grandchild(f, h));
	if (write(f->pids[1], &pid, sizeof(pid)) != sizeof(pid))
		return 4;
	/* the grandchild signals ready itself; wait for the test to finish with both */
	rc = tl_wait(pid, 60000);
	if (rc)
		return 10 + rc;
	if (tl_await(f->go[0], 60000))
		return 5;
	return PerfStopProvider(h) ? 6 : 0;
}

static void test_fork(void **state)
{
	struct perflib_store *mp, *mg;
	struct forker f;
	pid_t pid, gpid;
	struct rec r;

	(void)state;
	ctl_reset();
	unsetenv("PERFLIB_CALLBACK_TIMEOUT_MS");
	memset(&f, 0, sizeof(f));
	f.set_p = prov_guid();
	f.set_g = prov_guid();
	assert_int_equal(tl_pipe(f.rec), 0);
	assert_int_equal(tl_pipe(f.ready), 0);
	assert_int_equal(tl_pipe(f.go), 0);
	assert_int_equal(tl_pipe(f.pids), 0);
	pid = tl_fork(child_forker, &f);
	assert_true(pid > 0);
	assert_int_equal(tl_await(f.ready[0], WAIT_MS), 0);
	assert_int_equal(read(f.pids[0], &gpid, sizeof(gpid)), sizeof(gpid));

	mp = open_set(f.set_p);
	mg = open_set(f.set_g);
	/* each process runs its own callbacks: the parent's service survived the fork */
	assert_int_equal(notify(mp, PERF_COLLECT_START, u"P", 4), ERROR_SUCCESS);
	assert_true(rec_read(f.rec[0], &r, WAIT_MS));
	assert_int_equal(r.pid, pid);
	assert_int_equal(r.which, 1);
	assert_int_equal(notify(mg, PERF_COLLECT_START, u"G", 4), ERROR_SUCCESS);
	assert_true(rec_read(f.rec[0], &r, WAIT_MS));
	assert_int_equal(r.pid, gpid);
	assert_int_equal(r.which, 2);
	assert_int_not_equal(r.tid, gpid);

	/* the grandchild stops everything it has, the parent's entry stays */
	assert_int_equal(tl_signal(f.go[1]), 0);
	usleep(200000);
	assert_int_equal(notify(mp, PERF_COLLECT_END, u"P", 4), ERROR_SUCCESS);
	assert_true(rec_read(f.rec[0], &r, WAIT_MS));
	assert_int_equal(r.pid, pid);
	assert_int_equal(tl_signal(f.go[1]), 0);
	assert_int_equal(tl_wait(pid, WAIT_MS), 0);
	perflib_store_close(mp);
	perflib_store_close(mg);
	close(f.rec[0]);
	close(f.rec[1]);
	close(f.ready[0]);
	close(f.ready[1]);
	close(f.go[0]);
	close(f.go[1]);
	close(f.pids[0]);
	close(f.pids[1]);
}

struct restarter {
	GUID set;
	int rec[2], ready[2], go[2];
};

/* start, stop, restart; the last phase stops the provider from inside its callback */
static int child_restarter(void *arg)
{
	struct restarter *s = arg;
	GUID pg = prov_provider_guid();
	struct prov_tmpl t;
	int phase, i;
	HANDLE h;

	rec_fd = s->rec[1];
	tmpl_cb(&t, s->set);
	for (phase = 0; phase < 3; phase++) {
		if (PerfStartProvider(&pg, cb1, &h) || prov_tmpl_register(h, &t))
			return 2;
		self_handle = h;
		tl_signal(s->ready[1]);
		if (tl_await(s->go[0], 60000))
			return 3;
		if (phase < 2 && PerfStopProvider(h))
			return 4;
		/* the service's threads are gone (the detached one leaves after its reply) */
		for (i = 0; i < 200 && nr_threads() != 1; i++)
			usleep(10000);
		if (nr_threads() != 1)
			return 10 + phase;
	}
	return 0;
}

static void test_stop_restart(void **state)
{
	struct perflib_store *map;
	struct restarter s;
	struct pchild c;
	int phase;
	pid_t pid;

	(void)state;
	ctl_reset();
	unsetenv("PERFLIB_CALLBACK_TIMEOUT_MS");
	memset(&s, 0, sizeof(s));
	s.set = prov_guid();
	assert_int_equal(tl_pipe(s.rec), 0);
	assert_int_equal(tl_pipe(s.ready), 0);
	assert_int_equal(tl_pipe(s.go), 0);
	pid = tl_fork(child_restarter, &s);
	assert_true(pid > 0);
	/* expect_rec reads c.rec and c.pid */
	memset(&c, 0, sizeof(c));
	c.pid = pid;
	c.rec[0] = s.rec[0];
	for (phase = 0; phase < 3; phase++) {
		assert_int_equal(tl_await(s.ready[0], WAIT_MS), 0);
		map = open_set(s.set);
		atomic_store(&ctl->stop_self, phase == 2);
		assert_int_equal(notify(map, PERF_COLLECT_START, u"R", 4), ERROR_SUCCESS);
		expect_rec(&c, PERF_COLLECT_START, u"R", 4, 1);
		perflib_store_close(map);
		assert_int_equal(tl_signal(s.go[1]), 0);
	}
	assert_int_equal(tl_wait(pid, WAIT_MS), 0);
	close(s.rec[0]);
	close(s.rec[1]);
	close(s.ready[0]);
	close(s.ready[1]);
	close(s.go[0]);
	close(s.go[1]);
}

/* ---- hostile input ------------------------------------------------------------------------ */

/* a raw connection to @c's service, found through the procs map */
static int raw_connect(struct perflib_store *map, pid_t pid)
{
	struct sockaddr_un addr;
	socklen_t len;
	uint32_t i;
	int fd;

	for (i = 0; i < map->info->nr_procs; i++) {
		if (map->procs[i].state == PERFLIB_PROC_LIVE && map->procs[i].pid == (uint32_t)pid)
			break;
	}
	assert_true(i < map->info->nr_procs);
	perflib_cb_sockname((uint32_t)pid, map->procs[i].token, &addr, &len);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&addr, len), 0);
	return fd;
}

/* send @len bytes, return the reply's err (or -1 without a reply) */
static int raw_request(struct perflib_store *map, pid_t pid, const void *msg, size_t len)
{
	struct perflib_cb_reply reply;
	struct pollfd p;
	int fd = raw_connect(map, pid), err = -1;

	assert_int_equal(send(fd, msg, len, MSG_NOSIGNAL), (ssize_t)len);
	p = (struct pollfd){.fd = fd, .events = POLLIN};
	if (poll(&p, 1, WAIT_MS) == 1 && recv(fd, &reply, sizeof(reply), 0) == sizeof(reply) &&
	    reply.magic == PERFLIB_CB_MAGIC)
		err = reply.err;
	close(fd);
	return err;
}

static void test_hostile_requests(void **state)
{
	struct {
		struct perflib_cb_request req;
		uint8_t buf[128];
	} m;
	PERF_COUNTER_IDENTITY id;
	struct perflib_store *map;
	struct pchild c;
	struct rec r;
	void *good;
	size_t len;
	int fd;

	(void)state;
	map = setup(&c, 0, 1, true);
	assert_int_equal(perflib_cb_identity(&c.set, 1, 0, u"HOST", u"Inst", &good, &len), 0);

	memset(&m, 0, sizeof(m));
	m.req.magic = PERFLIB_CB_MAGIC;
	m.req.op = PERFLIB_CB_OP_CALLBACK;
	m.req.counterset = c.set;
	m.req.request_code = PERF_ADD_COUNTER;
	m.req.timeout_ms = 1000;
	m.req.len = (uint32_t)len;
	memcpy(m.buf, good, len);
	free(good);
	/* the well-formed request works */
	assert_int_equal(raw_request(map, c.pid, &m, sizeof(m.req) + len), 0);
	assert_true(rec_read(c.rec[0], &r, WAIT_MS));

	/* an identity whose offsets point outside the buffer never reaches the callback */
	memcpy(&id, m.buf, sizeof(id));
	id.NameOffset = 1000;
	memcpy(m.buf, &id, sizeof(id));
	assert_int_equal(raw_request(map, c.pid, &m, sizeof(m.req) + len), EINVAL);
	id.NameOffset = 50;
	memcpy(m.buf, &id, sizeof(id));
	/* lengths that disagree, bad magic, unknown ops and codes, short messages */
	assert_int_equal(raw_request(map, c.pid, &m, sizeof(m.req) + len - 2), EINVAL);
	m.req.magic++;
	assert_int_equal(raw_request(map, c.pid, &m, sizeof(m.req) + len), EINVAL);
	m.req.magic--;
	m.req.op = 7;
	assert_int_equal(raw_request(map, c.pid, &m, sizeof(m.req) + len), EINVAL);
	m.req.op = PERFLIB_CB_OP_CALLBACK;
	m.req.request_code = PERF_FILTER;
	assert_int_equal(raw_request(map, c.pid, &m, sizeof(m.req) + len), EINVAL);
	m.req.request_code = PERF_ADD_COUNTER;
	m.req.len = 0xFFFFFFFF;
	assert_int_equal(raw_request(map, c.pid, &m, sizeof(m.req) + len), EINVAL);
	m.req.len = (uint32_t)len;
	assert_int_equal(raw_request(map, c.pid, "junk", 4), EINVAL);
	/* a counter set this process does not provide */
	m.req.counterset = tl_guid(0xABCDE);
	assert_int_equal(raw_request(map, c.pid, &m, sizeof(m.req) + len), EINVAL);
	m.req.counterset = c.set;
	assert_false(rec_read(c.rec[0], &r, 50));

	/* a connection that never sends is dropped, and does not block others */
	fd = raw_connect(map, c.pid);
	assert_int_equal(notify(map, PERF_COLLECT_START, u"H", 4), ERROR_SUCCESS);
	expect_rec(&c, PERF_COLLECT_START, u"H", 4, 1);
	close(fd);
	assert_int_equal(perflib_collect_refs(map), 0);
	assert_int_equal(ref_value(map, "a", POS_REF64), 111);
	perflib_store_close(map);
	pchild_kill(&c);
}

/* garbage and impostors in the procs map cost nothing and call nobody twice */
static void test_hostile_procs(void **state)
{
	struct perflib_store *map, *wmap;
	struct perflib_proc *e;
	struct sockaddr_un addr;
	struct timespec t0;
	struct pchild c;
	socklen_t alen;
	uint64_t start1, imp_token;
	uint32_t i, live = 0;
	struct rec r;
	int imp, conn;
	char byte;

	(void)state;
	map = setup(&c, 5000, 1, false);
	assert_int_equal(perflib_store_open(&c.set, true, &wmap), 0);
	assert_int_equal(perflib_proc_start_time(1, &start1), 0);
	for (i = 0; i < wmap->info->nr_procs; i++) {
		if (wmap->procs[i].state == PERFLIB_PROC_LIVE)
			live = i;
	}
	/* an impostor listening under the name of pid 1 */
	imp = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK, 0);
	/* unique per test process: parallel runs must not collide */
	imp_token = 0x1234000000000000ULL | (uint64_t)getpid();
	perflib_cb_sockname(1, imp_token, &addr, &alen);
	assert_int_equal(bind(imp, (struct sockaddr *)&addr, alen), 0);
	assert_int_equal(listen(imp, 8), 0);
	for (i = 0; i < wmap->info->nr_procs; i++) {
		e = &wmap->procs[i];
		if (i == live)
			continue;
		switch (i % 6) {
		case 0: /* pid 1, alive, with the impostor's token */
			*e = (struct perflib_proc){.state = PERFLIB_PROC_LIVE,
						   .pid = 1,
						   .start = start1,
						   .flags = 3,
						   .token = imp_token};
			break;
		case 1: /* a copy of the real provider's entry: asked once all the same */
			*e = wmap->procs[live];
			break;
		case 2: /* the real provider with a wrong token */
			*e = wmap->procs[live];
			e->token ^= 1;
			break;
		case 3: /* nonsense */
			memset(e, 0xA5, sizeof(*e));
			break;
		case 4:
			*e = (struct perflib_proc){.state = PERFLIB_PROC_LIVE,
						   .pid = 0x7FFFFFFF,
						   .flags = 0xFFFFFFFF,
						   .token = ~0ULL};
			break;
		default: /* this process: alive, no service */
			perflib_proc_start_time(getpid(), &start1);
			*e = (struct perflib_proc){.state = PERFLIB_PROC_LIVE,
						   .pid = (uint32_t)getpid(),
						   .start = start1,
						   .flags = 3,
						   .token = 42};
			perflib_proc_start_time(1, &start1);
			break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(notify(map, PERF_COLLECT_START, u"H", 4), ERROR_SUCCESS);
	assert_int_equal(perflib_collect_refs(map), 0);
	assert_true(ms_since(&t0) < 2000);
	expect_rec(&c, PERF_COLLECT_START, u"H", 4, 1);
	assert_false(rec_read(c.rec[0], &r, 100));
	/* the impostor got connections but never a request */
	while ((conn = accept(imp, NULL, NULL)) >= 0) {
		assert_int_equal(recv(conn, &byte, 1, MSG_DONTWAIT), 0);
		close(conn);
	}
	close(imp);
	for (i = 0; i < wmap->info->nr_procs; i++) {
		if (i != live)
			memset(&wmap->procs[i], 0, sizeof(wmap->procs[i]));
	}
	perflib_store_close(wmap);
	perflib_store_close(map);
	pchild_finish(&c);
	unsetenv("PERFLIB_CALLBACK_TIMEOUT_MS");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identity_bytes),
		cmocka_unit_test(test_buffer_check),
		cmocka_unit_test(test_timeout_env),
		cmocka_unit_test(test_callback_requests),
		cmocka_unit_test(test_callback_status),
		cmocka_unit_test(test_byref_collect),
		cmocka_unit_test(test_sigstop_provider),
		cmocka_unit_test(test_slow_callback),
		cmocka_unit_test(test_dead_provider),
		cmocka_unit_test(test_unprivileged_consumer),
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_stop_restart),
		cmocka_unit_test(test_hostile_requests),
		cmocka_unit_test(test_hostile_procs),
	};

	tl_require_bpf();
	ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ctl == MAP_FAILED)
		return 1;
	return cmocka_run_group_tests_name("callback", tests, tl_group_setup, tl_group_teardown);
}

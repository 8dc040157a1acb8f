// SPDX-License-Identifier: MIT
/*
 * test_cb_flood.c - a provider's callback service against an unprivileged user who floods
 * it (docs/CALLBACKS.md, "Fairness"): a real provider process (root) with a ControlCallback,
 * a real flooding process that dropped to uid/gid nobody (65534, no groups) and keeps 200
 * idle connections open, reconnecting whenever one is closed; meanwhile an authorised
 * consumer (root, this process) makes 20 callback requests, and each must run the callback,
 * and 20 collections of a by-reference value, and each must bring the value.
 * Once with pins the flooder may read (0644), once with pins it may not (0640), where its
 * connections must also be refused at once: an idle one closed long before the idle limit,
 * a request answered EACCES without waiting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "testlib.h"
#include "../helpers/prov_util.h"

#define WAIT_MS 10000
#define NOBODY 65534
#define FLOOD 200      /* idle connections the flooder keeps */
#define COLLECTIONS 20 /* authorised requests during the flood */

static _Atomic uint32_t *calls; /* shared with the provider child: callbacks run */

static ULONG CALLBACK count_cb(ULONG code, PVOID buf, ULONG size)
{
	(void)code;
	(void)buf;
	(void)size;
	atomic_fetch_add(calls, 1);
	return ERROR_SUCCESS;
}

static uint64_t *ref_value; /* shared: the provider child's by-reference value */
#define POS_REF 2	    /* template position of PROV_STD_REF */

struct prov {
	GUID set;
	int ready[2], go[2];
	pid_t pid;
};

static int child_provider(void *arg)
{
	struct prov *p = arg;
	GUID pg = prov_provider_guid();
	PPERF_COUNTERSET_INSTANCE inst;
	struct prov_tmpl t;
	HANDLE h;

	prov_tmpl_std(&t, p->set, PERF_COUNTERSET_MULTI_INSTANCES);
	if (PerfStartProvider(&pg, count_cb, &h) || prov_tmpl_register(h, &t))
		return 2;
	/* a by-reference value that consumers collect through the same service */
	inst = PerfCreateInstance(h, &p->set, u"ref", 1);
	if (!inst || PerfSetCounterRefValue(h, inst, PROV_STD_REF, ref_value))
		return 5;
	tl_signal(p->ready[1]);
	if (tl_await(p->go[0], 120000))
		return 3;
	return PerfStopProvider(h) ? 4 : 0;
}

static void pins_chmod(GUID set, mode_t mode)
{
	char dir[PATH_MAX];

	assert_int_equal(perflib_store_dir(&set, dir, sizeof(dir)), 0);
	assert_int_equal(tl_pins_chmod(dir, mode, 0, 0), 0);
}

/* the provider child's socket address, from its procs entry */
static void prov_addr(struct perflib_store *map, pid_t pid, struct sockaddr_un *addr,
		      socklen_t *len)
{
	uint32_t i;

	for (i = 0; i < map->info->nr_procs; i++) {
		if (map->procs[i].state == PERFLIB_PROC_LIVE &&
		    map->procs[i].pid == (uint32_t)pid && map->procs[i].token)
			break;
	}
	assert_true(i < map->info->nr_procs);
	perflib_cb_sockname((uint32_t)pid, map->procs[i].token, addr, len);
}

static void drop_to_nobody(void)
{
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY) || getuid() != NOBODY)
		_exit(90);
}

struct flood {
	struct sockaddr_un addr;
	socklen_t len;
	int stop[2]; /* parent -> flooder: EOF = stop */
	pid_t pid;
};

/* keep FLOOD idle connections open until told to stop, reopening the closed ones */
static int child_flooder(void *arg)
{
	struct flood *f = arg;
	struct pollfd pfd[FLOOD + 1];
	int i;

	drop_to_nobody();
	close(f->stop[1]);
	for (i = 0; i < FLOOD; i++)
		pfd[i] = (struct pollfd){.fd = -1, .events = POLLIN};
	pfd[FLOOD] = (struct pollfd){.fd = f->stop[0], .events = POLLIN};
	for (;;) {
		for (i = 0; i < FLOOD; i++) {
			if (pfd[i].fd >= 0)
				continue;
			pfd[i].fd =
				socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
			if (pfd[i].fd >= 0 &&
			    connect(pfd[i].fd, (struct sockaddr *)&f->addr, f->len)) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
			}
		}
		if (poll(pfd, FLOOD + 1, 1) < 0)
			continue;
		if (pfd[FLOOD].revents)
			return 0;
		for (i = 0; i < FLOOD; i++) {
			if (pfd[i].fd >= 0 && pfd[i].revents) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
			}
		}
	}
}

/* a provider child with a callback, its set's pins at @mode, a flooder; the map */
static struct perflib_store *start(struct prov *p, struct flood *f, mode_t mode)
{
	struct perflib_store *map = NULL;

	memset(p, 0, sizeof(*p));
	p->set = prov_guid();
	assert_int_equal(tl_pipe(p->ready), 0);
	assert_int_equal(tl_pipe(p->go), 0);
	p->pid = tl_fork(child_provider, p);
	assert_true(p->pid > 0);
	if (tl_await(p->ready[0], WAIT_MS))
		fail_msg("provider child never got ready (exit %d)", tl_wait(p->pid, WAIT_MS));
	pins_chmod(p->set, mode);
	assert_int_equal(perflib_store_open(&p->set, false, &map), 0);
	prov_addr(map, p->pid, &f->addr, &f->len);
	assert_int_equal(tl_pipe(f->stop), 0);
	f->pid = tl_fork(child_flooder, f);
	assert_true(f->pid > 0);
	close(f->stop[0]);
	/* let the flood fill the table and the backlog */
	usleep(300000);
	return map;
}

static void finish(struct prov *p, struct flood *f, struct perflib_store *map)
{
	close(f->stop[1]);
	assert_int_equal(tl_wait(f->pid, WAIT_MS), 0);
	perflib_store_close(map);
	assert_int_equal(tl_signal(p->go[1]), 0);
	assert_int_equal(tl_wait(p->pid, WAIT_MS), 0);
	close(p->ready[0]);
	close(p->ready[1]);
	close(p->go[0]);
	close(p->go[1]);
}

/* COLLECTIONS callback requests by this (root) consumer: every one runs the callback */
static void collections(struct perflib_store *map)
{
	static const WCHAR machine[] = u"HOST";
	uint32_t before = atomic_load(calls);
	ULONG status;
	int i;

	for (i = 0; i < COLLECTIONS; i++) {
		status = 0xDEAD;
		assert_int_equal(perflib_notify_providers(map, PERF_COLLECT_START, machine,
							  sizeof(machine), &status),
				 0);
		assert_int_equal(status, ERROR_SUCCESS);
	}
	assert_int_equal(atomic_load(calls) - before, COLLECTIONS);
}

/* by-reference values are collected during the flood too (they go stale when starved) */
static void collect_refs(struct perflib_store *map, pid_t pid)
{
	const struct perflib_info *info = map->info;
	uint64_t *v = NULL;
	uint32_t i;

	for (i = 0; i < perflib_store_slots(map, 0) && !v; i++) {
		uint8_t *slot = perflib_slot(map, i);
		uint64_t w = perflib_slot_word(slot);

		if (perflib_word_state(w) == PERFLIB_SLOT_LIVE &&
		    perflib_word_pid(w) == (uint32_t)pid)
			v = (uint64_t *)(slot + info->ref_offset + 8 * POS_REF);
	}
	assert_non_null(v);
	for (i = 0; i < COLLECTIONS; i++) {
		__atomic_store_n(ref_value, 0x5eed00000000ULL + i, __ATOMIC_RELAXED);
		assert_int_equal(perflib_collect_refs(map), 0);
		assert_int_equal(__atomic_load_n(v, __ATOMIC_RELAXED), 0x5eed00000000ULL + i);
	}
}

static void test_flood_readable(void **state)
{
	struct perflib_store *map;
	struct prov p;
	struct flood f;

	(void)state;
	map = start(&p, &f, 0644);
	collections(map);
	collect_refs(map, p.pid);
	finish(&p, &f, map);
}

static void test_flood_not_readable(void **state)
{
	struct perflib_store *map;
	struct prov p;
	struct flood f;

	(void)state;
	map = start(&p, &f, 0640);
	collections(map);
	collect_refs(map, p.pid);
	finish(&p, &f, map);
}

/* a user who may not read the set: refused at once, whether it sends a request or not */
static void set_timeout_env(void)
{
	/* a consumer that waited for the timeout would take 5 s, not less than 1 */
	setenv("PERFLIB_CALLBACK_TIMEOUT_MS", "5000", 1);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

struct refused {
	struct sockaddr_un addr;
	socklen_t len;
	GUID set;
	struct perflib_store *map; /* root's view, still usable after setuid */
};

/* a refusal at accept (op and seq 0, EACCES), or the answer EACCES to request @seq */
static bool refused(int fd, uint64_t seq)
{
	struct perflib_cb_reply reply;

	ssize_t n = recv(fd, &reply, sizeof(reply), MSG_DONTWAIT);

	if (n != sizeof(reply)) {
		fprintf(stderr, "refusal of %llu: recv %zd (%s)\n", (unsigned long long)seq, n,
			n < 0 ? strerror(errno) : "short");
		return false;
	}
	if (reply.magic == PERFLIB_CB_MAGIC && reply.err == EACCES &&
	    ((!reply.op && !reply.seq) || (reply.op == PERFLIB_CB_OP_COLLECT && reply.seq == seq)))
		return true;
	fprintf(stderr, "refusal of %llu: magic %#x op %u seq %llu err %d\n",
		(unsigned long long)seq, (unsigned int)reply.magic, (unsigned int)reply.op,
		(unsigned long long)reply.seq, (int)reply.err);
	return false;
}

/*
 * exit 0: an idle connection refused and closed before 1 s (the idle limit is 2 s), a
 * request refused
 */
static int child_refused(void *arg)
{
	struct refused *r = arg;
	struct perflib_cb_request req;
	struct pollfd pfd;
	struct timespec t0;
	ULONG status;
	char b;
	int fd;

	drop_to_nobody();
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&r->addr, r->len))
		return 10;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pfd = (struct pollfd){.fd = fd, .events = POLLIN};
	if (poll(&pfd, 1, 1000) != 1 || !refused(fd, 0))
		return 11;
	/* then closed */
	if (poll(&pfd, 1, 1000) != 1 || recv(fd, &b, 1, MSG_DONTWAIT) != 0 || ms_since(&t0) >= 1000)
		return 16;
	close(fd);

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&r->addr, r->len))
		return 12;
	memset(&req, 0, sizeof(req));
	req.magic = PERFLIB_CB_MAGIC;
	req.op = PERFLIB_CB_OP_COLLECT;
	req.seq = 77;
	req.counterset = r->set;
	req.timeout_ms = 1000;
	/* the send fails when the refusal came first */
	(void)!send(fd, &req, sizeof(req), MSG_NOSIGNAL);
	pfd = (struct pollfd){.fd = fd, .events = POLLIN};
	if (poll(&pfd, 1, 1000) != 1)
		return 14;
	if (!refused(fd, 77))
		return 15;
	close(fd);

	/* and through the consumer API: ERROR_ACCESS_DENIED's -EACCES, at once */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (perflib_notify_providers(r->map, PERF_COLLECT_START, u"HOST", sizeof(u"HOST"),
				     &status) != -EACCES)
		return 17;
	if (ms_since(&t0) >= 1000)
		return 18;
	return 0;
}

static void test_refused_at_once(void **state)
{
	struct perflib_store *map = NULL;
	struct refused r;
	struct prov p;
	pid_t pid;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.set = prov_guid();
	assert_int_equal(tl_pipe(p.ready), 0);
	assert_int_equal(tl_pipe(p.go), 0);
	p.pid = tl_fork(child_provider, &p);
	assert_true(p.pid > 0);
	assert_int_equal(tl_await(p.ready[0], WAIT_MS), 0);
	pins_chmod(p.set, 0640);
	assert_int_equal(perflib_store_open(&p.set, false, &map), 0);
	prov_addr(map, p.pid, &r.addr, &r.len);
	r.set = p.set;
	r.map = map;
	set_timeout_env();
	pid = tl_fork(child_refused, &r);
	assert_true(pid > 0);
	assert_int_equal(tl_wait(pid, WAIT_MS), 0);
	perflib_store_close(map);
	assert_int_equal(tl_signal(p.go[1]), 0);
	assert_int_equal(tl_wait(p.pid, WAIT_MS), 0);
	close(p.ready[0]);
	close(p.ready[1]);
	close(p.go[0]);
	close(p.go[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refused_at_once),
		cmocka_unit_test(test_flood_readable),
		cmocka_unit_test(test_flood_not_readable),
	};

	tl_require_bpf();
	if (getuid() != 0) {
		printf("needs root (to drop to uid %d)\n", NOBODY);
		return TL_SKIP;
	}
	calls = mmap(NULL, 16, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (calls == MAP_FAILED)
		return 1;
	ref_value = (uint64_t *)((char *)calls + 8);
	return cmocka_run_group_tests_name("cb_flood", tests, tl_group_setup, tl_group_teardown);
}

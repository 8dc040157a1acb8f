// SPDX-License-Identifier: MIT
/*
 * liveness.c - owner liveness: is the process that owns a slot (pid + start time, from
 * the slot word and header) still running? A slot whose owner died is not an instance a
 * consumer may see, even before a reaper frees it.
 *
 * Two levels: within one read, each distinct owner is looked up once (struct perflib_alive,
 * with the last answer inline in the header, since one provider owns most slots); across
 * reads, a pidfd per owner turns the lookup into one poll().
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "consumer.h"

#define OWNERS_MAX 64 /* provider processes whose pidfd is kept */

void perflib_alive_fini(struct perflib_alive *ac)
{
	free(ac->tab);
	memset(ac, 0, sizeof(*ac));
}

static size_t alive_hash(uint32_t pid, uint64_t start, size_t cap)
{
	uint64_t h = ((uint64_t)pid << 32 ^ start) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (cap - 1);
}

static void alive_insert(struct perflib_alive *ac, const struct perflib_alive_entry *e)
{
	size_t i;

	for (i = alive_hash(e->pid, e->start, ac->cap); ac->tab[i].pid; i = (i + 1) & (ac->cap - 1))
		;
	ac->tab[i] = *e;
	ac->nr++;
}

/*
 * Owners across calls. Reading /proc/<pid>/stat costs microseconds, once per provider
 * process and call; a pidfd, opened once and checked against the owner's start time (so a
 * reused pid cannot pass), turns that into one poll(): a pidfd becomes readable when its
 * process exits. An owner found dead stays dead. Under owners_lock (held across fork).
 */
static pthread_mutex_t owners_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t owners_once = PTHREAD_ONCE_INIT;
static uint64_t owners_clock;
static struct owner {
	uint64_t start;	   /* owner start time */
	uint64_t last_use; /* for eviction */
	uint64_t exits;	   /* perflib_watch_exits() before its pidfd last said "running" */
	uint32_t pid;	   /* 0 = empty entry */
	uint32_t ev_gen;   /* the epoll instance its pidfd is in (when watched) */
	bool watched;	   /* its pidfd is in the consumer's epoll instance (cset.c) */
	int fd;		   /* pidfd, -1 when dead */
} owners[OWNERS_MAX];

static void owners_prefork(void)
{
	pthread_mutex_lock(&owners_lock);
}

static void owners_postfork(void)
{
	pthread_mutex_unlock(&owners_lock);
}

static void owners_atfork(void)
{
	/*
	 * owner_check calls cset.c under owners_lock: cset.c's handlers first, so that fork's
	 * prepare step (last registered, first run) takes owners_lock before cache_lock
	 */
	perflib_watch_init();
	pthread_atfork(owners_prefork, owners_postfork, owners_postfork);
}

static bool pidfd_exited(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int n;

	/*
	 * a signal is no answer: poll() is never restarted, and taking its EINTR for an exit
	 * would remember a running owner as dead for good (seen with a 37 µs interval timer)
	 */
	do
		n = poll(&p, 1, 0);
	while (n < 0 && errno == EINTR);
	return n != 0; /* readable, an error or a hang-up: gone */
}

/*
 * the pidfd of @o said "running" when the exits counter was @exits: from now on its exit
 * is reported by the consumer's epoll instance (owners lock held)
 */
static void owner_watch(struct owner *o, uint64_t exits, uint32_t gen)
{
	o->exits = exits;
	if (!o->watched || o->ev_gen != gen)
		o->watched = perflib_watch_exit_add(o->fd, &o->ev_gen);
}

/*
 * Is the remembered owner @o still running? Without a system call when this read waited on
 * the epoll instance (@fresh) that holds its pidfd and it reported no exit since the pidfd
 * last said "running"; else one poll() of the pidfd.
 */
static bool owner_running(struct owner *o, bool fresh)
{
	uint32_t gen;
	uint64_t exits = perflib_watch_exits(&gen);

	if (o->fd < 0)
		return false;
	if (fresh && o->watched && o->ev_gen == gen && o->exits == exits)
		return true;
	if (pidfd_exited(o->fd)) {
		close(o->fd);
		o->fd = -1;
		return false;
	}
	owner_watch(o, exits, gen);
	return true;
}

static bool owner_check(uint32_t pid, uint64_t start, bool fresh)
{
	struct owner *o, *victim = &owners[0];
	int fd, alive_int;
	uint64_t exits;
	uint32_t gen;
	bool alive;

	pthread_once(&owners_once, owners_atfork);
	pthread_mutex_lock(&owners_lock);
	for (o = owners; o < owners + OWNERS_MAX; o++) {
		if (o->pid == pid && o->start == start)
			break;
		if (o->last_use < victim->last_use)
			victim = o;
	}
	if (o < owners + OWNERS_MAX) {
		alive = owner_running(o, fresh);
		o->last_use = ++owners_clock;
		pthread_mutex_unlock(&owners_lock);
		return alive;
	}
	/* exits counted from before the pidfd is opened: an exit after it is seen */
	exits = perflib_watch_exits(&gen);
	/* first sight: a pidfd first, then the start time proves whose it is */
	fd = perflib_proc_pidfd(pid, start, &alive_int);
	alive = alive_int;
	if (fd < 0 && alive) {
		/* no pidfd (old kernel, no fds left): the answer holds for this call only */
		pthread_mutex_unlock(&owners_lock);
		return alive;
	}
	/* remembered: alive with its pidfd, or dead for good (a start time never returns) */
	if (victim->pid && victim->fd >= 0)
		close(victim->fd);
	if (!alive && fd >= 0) {
		close(fd);
		fd = -1;
	}
	victim->pid = pid;
	victim->start = start;
	victim->fd = alive ? fd : -1;
	victim->watched = false;
	if (alive)
		owner_watch(victim, exits, gen);
	victim->last_use = ++owners_clock;
	pthread_mutex_unlock(&owners_lock);
	return alive;
}

/* is (pid, start) a running process? Each distinct owner is looked up once per call. */
bool perflib_alive_lookup(struct perflib_alive *ac, uint32_t pid, uint64_t start)
{
	struct perflib_alive_entry e = {.start = start, .pid = pid};
	uint64_t now;
	size_t i;

	/* a slot handed to the kernel (kcounters): no owner process, alive (layout.h) */
	if (start == PERFLIB_OWNER_KERNEL)
		return true;
	if (pid == 0)
		return false;
	if (ac->last.pid == pid && ac->last.start == start)
		return ac->last.alive;
	for (i = ac->cap ? alive_hash(pid, start, ac->cap) : 0; ac->cap && ac->tab[i].pid;
	     i = (i + 1) & (ac->cap - 1)) {
		if (ac->tab[i].pid == pid && ac->tab[i].start == start) {
			ac->last = ac->tab[i];
			return ac->last.alive;
		}
	}
	/* start 0: the owner could not read its start time; the pid alone decides */
	if (start)
		e.alive = owner_check(pid, start, ac->fresh);
	else
		e.alive = perflib_proc_start_time((pid_t)pid, &now) == 0;
	/* the first owner of a read needs no table: it is the last answer (most reads see one) */
	if (!ac->cap && !ac->last.pid) {
		ac->last = e;
		return e.alive;
	}
	if (!ac->cap && (ac->tab = calloc(16, sizeof(*ac->tab)))) {
		ac->cap = 16;
		alive_insert(ac, &ac->last);
	}
	ac->last = e;
	if (ac->nr * 2 >= ac->cap) {
		struct perflib_alive_entry *old = ac->tab;
		size_t old_cap = ac->cap, k;

		ac->cap = ac->cap ? ac->cap * 2 : 16;
		ac->tab = calloc(ac->cap, sizeof(*ac->tab));
		ac->nr = 0;
		if (!ac->tab) {
			/* no table: still correct, only slower */
			ac->tab = old;
			ac->cap = old_cap;
			return e.alive;
		}
		for (k = 0; k < old_cap; k++) {
			if (old[k].pid)
				alive_insert(ac, &old[k]);
		}
		free(old);
	}
	alive_insert(ac, &e);
	return e.alive;
}

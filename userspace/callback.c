// SPDX-License-Identifier: MIT
/*
 * callback.c - the provider side of the cross-process channel (docs/CALLBACKS.md).
 *
 * Each counter set a provider registers gets an entry in the set's procs map with this
 * process's identity and what consumers may ask of it (ControlCallback, by-reference
 * values). A process whose providers need consumers' requests runs a service: one I/O
 * thread listening on an abstract Unix socket named from the process's random token (the
 * token is in the procs entries), which checks each request's access, dereferences
 * by-reference counters itself (no user code, never blocks for long), and hands
 * ControlCallback requests to a second thread, created on the first such request, that
 * runs the callbacks one at a time. A callback that hangs therefore stops only callbacks:
 * collection goes on, and requests that cannot start before their consumer's deadline are
 * dropped (or refused at once with EBUSY when the running callback is already late).
 *
 * Locks, in order: the providers list lock, a provider's lock, svc.lock. The value
 * functions take none of them.
 */
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#define SVC_BACKLOG 64		  /* connections the kernel queues before connect() fails */
#define SVC_MAX_CONNS 64	  /* connections awaiting their request at once */
#define SVC_QUEUE 32		  /* callback requests waiting for the callback thread */
#define SVC_IDLE_MS 2000	  /* a connection must deliver its request within this */
#define SVC_MAX_TIMEOUT_MS 600000 /* consumers' timeouts are clamped to this */
#define SVC_MAX_GROUPS 65536	  /* NGROUPS_MAX of the kernel */
#define RBUF_SIZE (sizeof(struct perflib_cb_request) + PERFLIB_CB_MAX_BUFFER + 8)

/* ---- procs entries ---------------------------------------------------------------------- */

static bool proc_entry_alive(const struct perflib_proc *e)
{
	return perflib_proc_alive(__atomic_load_n(&e->pid, __ATOMIC_RELAXED),
				  __atomic_load_n(&e->start, __ATOMIC_RELAXED));
}

/* claim a procs entry (free, or left by a dead process) for this process */
static int proc_claim(struct perflib_set_map *map, uint32_t flags, uint64_t token)
{
	uint32_t pid, i, nr = map->info->nr_procs;
	uint64_t start, w, nw;

	perflib_self(&pid, &start);
	for (i = 0; i < nr; i++) {
		struct perflib_proc *e = &map->procs[i];

		w = __atomic_load_n((uint64_t *)e, __ATOMIC_ACQUIRE);
		if ((uint32_t)w != PERFLIB_PROC_FREE && proc_entry_alive(e))
			continue;
		/* state stays CLAIMED-like (FREE) until the identity is written: LIVE last */
		nw = (w & 0xFFFFFFFF00000000ULL) + (1ULL << 32) + PERFLIB_PROC_FREE;
		if (!__atomic_compare_exchange_n((uint64_t *)e, &w, nw, false, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		__atomic_store_n(&e->pid, pid, __ATOMIC_RELAXED);
		__atomic_store_n(&e->start, start, __ATOMIC_RELAXED);
		__atomic_store_n(&e->flags, flags, __ATOMIC_RELAXED);
		__atomic_store_n(&e->token, token, __ATOMIC_RELAXED);
		__atomic_store_n((uint64_t *)e, nw + (1ULL << 32) + PERFLIB_PROC_LIVE,
				 __ATOMIC_RELEASE);
		return (int)i;
	}
	pr_warn("counter set has no free provider-process entry (%u in use)\n", nr);
	return -ENOSPC;
}

/* free entry @i if it is still this process's (after fork() it is the parent's) */
static void proc_release(struct perflib_set_map *map, int i)
{
	struct perflib_proc *e;
	uint64_t start, w;
	uint32_t pid;

	if (i < 0 || (uint32_t)i >= map->info->nr_procs)
		return;
	e = &map->procs[i];
	perflib_self(&pid, &start);
	w = __atomic_load_n((uint64_t *)e, __ATOMIC_ACQUIRE);
	if ((uint32_t)w != PERFLIB_PROC_LIVE || __atomic_load_n(&e->pid, __ATOMIC_RELAXED) != pid ||
	    __atomic_load_n(&e->start, __ATOMIC_RELAXED) != start)
		return;
	/* CAS: never free an entry that changed hands meanwhile */
	__atomic_compare_exchange_n((uint64_t *)e, &w, (w & 0xFFFFFFFF00000000ULL) + (1ULL << 32),
				    false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* ---- service state ---------------------------------------------------------------------- */

enum svc_state {
	SVC_STOPPED,
	SVC_RUNNING,
	SVC_STOPPING, /* threads being joined; starters wait */
};

struct cb_job {
	int fd;		   /* the consumer's connection, owned by the job */
	uint64_t deadline; /* monotonic ms after which the consumer has left */
	struct perflib_cb_request req;
	uint8_t *buf; /* req.len bytes (malloc'd) */
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* state, queue and busy changes */
	enum svc_state state;
	uint32_t epoch;		/* +1 on stop and in a fork child: old threads leave */
	uint64_t token;		/* socket name component, also in the procs entries */
	int listen_fd, wake_fd; /* abstract socket; eventfd that wakes the I/O thread */
	uint8_t *rbuf;		/* the I/O thread's request buffer (RBUF_SIZE) */
	pthread_t io, worker;
	bool worker_started;
	/* connections the I/O thread reads (changed under lock so fork can close them) */
	int conns[SVC_MAX_CONNS];
	uint64_t conn_deadline[SVC_MAX_CONNS];
	unsigned int nr_conns;
	struct cb_job queue[SVC_QUEUE]; /* FIFO of callback requests */
	unsigned int nr_queued;
	bool cb_running;		  /* the callback thread is working on a job */
	int cb_fd;			  /* that job's connection */
	uint64_t cb_deadline;		  /* that job's deadline */
	struct perflib_provider *cb_busy; /* provider whose callback runs right now */
} svc = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
	.listen_fd = -1,
	.wake_fd = -1,
	.cb_fd = -1,
};

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* the provider whose ControlCallback this thread is running (PerfStopProvider from inside) */
static __thread const struct perflib_provider *cb_current;

static void job_free(struct cb_job *job)
{
	if (job->fd >= 0)
		close(job->fd);
	free(job->buf);
	job->fd = -1;
	job->buf = NULL;
}

/* drop queued job @i (lock held) */
static void queue_remove(unsigned int i)
{
	job_free(&svc.queue[i]);
	memmove(&svc.queue[i], &svc.queue[i + 1], (svc.nr_queued - i - 1) * sizeof(svc.queue[0]));
	svc.nr_queued--;
}

/* forget the I/O thread's connections and the queued jobs (lock held) */
static void svc_close_all(void)
{
	unsigned int i;

	for (i = 0; i < svc.nr_conns; i++)
		close(svc.conns[i]);
	svc.nr_conns = 0;
	while (svc.nr_queued)
		queue_remove(svc.nr_queued - 1);
}

/*
 * fork(): the threads stay behind in the parent. Holding the providers list lock (under
 * which collection runs and providers are looked up) and svc.lock across fork() leaves the
 * child consistent; it then closes its copies of the service's descriptors and starts
 * afresh, with a new socket and token, when one of its providers needs the service.
 */
static void atfork_prepare(void)
{
	perflib_providers_lock();
	pthread_mutex_lock(&svc.lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&svc.lock);
	perflib_providers_unlock();
}

static void atfork_child(void)
{
	if (svc.state != SVC_STOPPED) {
		svc_close_all();
		close(svc.listen_fd);
		close(svc.wake_fd);
		if (svc.cb_running && svc.cb_fd >= 0)
			close(svc.cb_fd);
		free(svc.rbuf);
	}
	svc.rbuf = NULL;
	svc.state = SVC_STOPPED;
	svc.epoch++;
	svc.token = 0;
	svc.listen_fd = svc.wake_fd = svc.cb_fd = -1;
	svc.worker_started = false;
	svc.cb_running = false;
	svc.cb_busy = NULL;
	/* the parent's waiters do not exist here */
	pthread_cond_init(&svc.cond, NULL);
	pthread_mutex_unlock(&svc.lock);
	perflib_providers_unlock();
}

static void atfork_register(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* start a thread with every signal blocked: the application's handlers run elsewhere */
static int thread_start(pthread_t *ret_thread, void *(*fn)(void *), uint32_t epoch)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(ret_thread, NULL, fn, (void *)(uintptr_t)epoch);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

/* ---- requests ---------------------------------------------------------------------------- */

static void reply_send(int fd, const struct perflib_cb_request *req, ULONG status, int err,
		       uint32_t count)
{
	struct perflib_cb_reply r = {
		.magic = PERFLIB_CB_MAGIC,
		.op = req->op,
		.seq = req->seq,
		.status = status,
		.err = err,
		.count = count,
	};

	/* the consumer may have left: no SIGPIPE, no waiting */
	if (send(fd, &r, sizeof(r), MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof(r))
		pr_debug("callback service: reply not delivered: %s\n", strerror(errno));
}

/* is @gid among the peer's groups (effective and supplementary, as at connect time)? */
static bool peer_in_group(int fd, gid_t egid, gid_t gid)
{
	gid_t small[64], *groups = small;
	socklen_t len = sizeof(small);
	bool found = false;
	size_t i;

	if (egid == gid)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len)) {
		if (errno != ERANGE || len > SVC_MAX_GROUPS * sizeof(gid_t))
			return false;
		groups = malloc(len);
		if (!groups || getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len)) {
			free(groups);
			return false;
		}
	}
	for (i = 0; i < len / sizeof(gid_t) && !found; i++)
		found = groups[i] == gid;
	if (groups != small)
		free(groups);
	return found;
}

/*
 * The access rule: the peer may make requests about a counter set when it could read the
 * set's data pin, judged from its credentials at connect time (SO_PEERCRED, SO_PEERGROUPS)
 * against the pin's owner, group and mode as the kernel's permission check does (owner
 * class, else group class, else other). Effective uid 0 may always.
 */
static int peer_may_read(int fd, const GUID *guid)
{
	char dir[PATH_MAX], path[PATH_MAX + 8];
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct stat st;
	mode_t bit;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || len != sizeof(cred))
		return -EACCES;
	if (cred.uid == 0)
		return 0;
	if (perflib_set_dir(guid, dir, sizeof(dir)))
		return -EACCES;
	snprintf(path, sizeof(path), "%s/data", dir);
	if (stat(path, &st))
		return -EACCES;
	if (st.st_uid == cred.uid)
		bit = S_IRUSR;
	else if (peer_in_group(fd, cred.gid, st.st_gid))
		bit = S_IRGRP;
	else
		bit = S_IROTH;
	if (st.st_mode & bit)
		return 0;
	pr_debug("callback service: pid %d uid %u may not read %s\n", (int)cred.pid,
		 (unsigned int)cred.uid, path);
	return -EACCES;
}

/* has the consumer on @fd closed its end (given up waiting)? */
static bool peer_gone(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLRDHUP};

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR));
}

/* read through a provider's address: 4 or 8 bytes, atomically when aligned */
static uint64_t ref_load(const void *addr, unsigned int size)
{
	uint64_t v64;
	uint32_t v32;

	if (size == 8) {
		if (!((uintptr_t)addr & 7))
			return __atomic_load_n((const uint64_t *)addr, __ATOMIC_RELAXED);
		memcpy(&v64, addr, 8);
		return v64;
	}
	if (!((uintptr_t)addr & 3))
		return __atomic_load_n((const uint32_t *)addr, __ATOMIC_RELAXED);
	memcpy(&v32, addr, 4);
	return v32;
}

/*
 * Dereference the by-reference counters of every live instance of @set (its provider's lock
 * held, so no instance is created or deleted meanwhile). The private addresses are read,
 * never the copies in the shared slots. Returns the number of instances.
 */
static uint32_t collect_set(struct perflib_ctrset *set)
{
	const struct perflib_info *info = set->map->info;
	uint32_t n = set->nr_counters, words = (n + 63) / 64, i, k, count = 0;
	uint64_t nulls[PERFLIB_MAX_COUNTERS / 64];

	if (!info->ref_offset || !set->refs)
		return 0;
	for (i = 0; i < set->capacity; i++) {
		uint8_t *ref;

		if (!atomic_load_explicit(&set->owned[i], memory_order_acquire))
			continue;
		ref = perflib_slot(set->map, i) + info->ref_offset;
		memset(nulls, 0, words * sizeof(nulls[0]));
		for (k = 0; k < n; k++) {
			const struct perflib_counter *c = &set->counters[k];
			void *addr;
			uint64_t v = 0;

			if (!c->byref)
				continue;
			addr = atomic_load_explicit(&set->refs[(size_t)i * n + c->pos],
						    memory_order_acquire);
			if (addr)
				v = ref_load(addr, c->size == 8 ? 8 : 4);
			else
				nulls[c->pos / 64] |= 1ULL << (c->pos % 64);
			__atomic_store_n((uint64_t *)(ref + 8 * (size_t)c->pos), v,
					 __ATOMIC_RELAXED);
		}
		for (k = 0; k < words; k++)
			__atomic_store_n((uint64_t *)(ref + 8 * (size_t)n) + k, nulls[k],
					 __ATOMIC_RELAXED);
		count++;
	}
	return count;
}

/* a collect request: every provider of this process that registered the counter set */
static uint32_t svc_collect(const GUID *guid)
{
	struct perflib_provider *prov;
	struct perflib_ctrset *set;
	uint32_t count = 0;

	/* the list lock keeps every listed provider and its sets alive */
	perflib_providers_lock();
	for (prov = perflib_providers_first(); prov; prov = prov->next) {
		set = perflib_ctrset_find(prov, guid);
		if (!set || !set->has_byref)
			continue;
		pthread_mutex_lock(&prov->lock);
		count += collect_set(set);
		pthread_mutex_unlock(&prov->lock);
	}
	perflib_providers_unlock();
	return count;
}

static bool provider_listed(struct perflib_provider *prov)
{
	struct perflib_provider *p;

	for (p = perflib_providers_first(); p && p != prov; p = p->next)
		;
	return p != NULL;
}

struct cb_target {
	struct perflib_provider *prov;
	PERFLIBREQUEST fn;
};

/*
 * Run the ControlCallback of every provider of this process that registered the request's
 * counter set, each with its own copy of the buffer, for the service of @epoch (a callback
 * may stop the service). *ret_count gets the number run. Returns the first non-zero result.
 */
static ULONG run_callbacks(const struct cb_job *job, uint32_t epoch, uint32_t *ret_count)
{
	struct cb_target *targets = NULL, *tmp;
	struct perflib_provider *prov;
	size_t nr = 0, cap = 0, i;
	uint32_t count = 0;
	ULONG status = ERROR_SUCCESS, r;
	void *copy;

	/* a snapshot: the callbacks run without any of the library's locks */
	perflib_providers_lock();
	for (prov = perflib_providers_first(); prov; prov = prov->next) {
		if (!prov->ctx.ControlCallback || !perflib_ctrset_find(prov, &job->req.counterset))
			continue;
		if (nr == cap) {
			cap = cap ? 2 * cap : 4;
			tmp = realloc(targets, cap * sizeof(*targets));
			if (!tmp)
				break;
			targets = tmp;
		}
		targets[nr].prov = prov;
		targets[nr++].fn = prov->ctx.ControlCallback;
	}
	perflib_providers_unlock();

	for (i = 0; i < nr; i++) {
		/* still started? then PerfStopProvider waits until its callback returns */
		perflib_providers_lock();
		prov = provider_listed(targets[i].prov) ? targets[i].prov : NULL;
		pthread_mutex_lock(&svc.lock);
		if (svc.epoch != epoch)
			prov = NULL;
		if (prov)
			svc.cb_busy = prov;
		pthread_mutex_unlock(&svc.lock);
		perflib_providers_unlock();
		if (!prov)
			continue;
		copy = malloc(job->req.len);
		if (copy) {
			memcpy(copy, job->buf, job->req.len);
			cb_current = prov;
			r = targets[i].fn(job->req.request_code, copy, job->req.len);
			cb_current = NULL;
			free(copy);
			count++;
			if (r != ERROR_SUCCESS && status == ERROR_SUCCESS)
				status = r;
		}
		pthread_mutex_lock(&svc.lock);
		if (svc.cb_busy == prov)
			svc.cb_busy = NULL;
		pthread_cond_broadcast(&svc.cond);
		pthread_mutex_unlock(&svc.lock);
	}
	free(targets);
	*ret_count = count;
	return status;
}

/* the callback thread: one job at a time, in arrival order */
static void *svc_worker(void *arg)
{
	uint32_t epoch = (uint32_t)(uintptr_t)arg, count;
	pid_t pid = getpid();
	struct cb_job job;
	ULONG status;

	pthread_setname_np(pthread_self(), "perflib-cb");
	for (;;) {
		pthread_mutex_lock(&svc.lock);
		while (svc.epoch == epoch && !svc.nr_queued)
			pthread_cond_wait(&svc.cond, &svc.lock);
		if (svc.epoch != epoch) {
			pthread_mutex_unlock(&svc.lock);
			return NULL;
		}
		job = svc.queue[0];
		svc.queue[0].fd = -1;
		svc.queue[0].buf = NULL;
		queue_remove(0);
		if (perflib_now_ms() >= job.deadline || peer_gone(job.fd)) {
			/* its consumer has given up: do not run the callback late */
			pthread_mutex_unlock(&svc.lock);
			job_free(&job);
			continue;
		}
		svc.cb_running = true;
		svc.cb_fd = job.fd;
		svc.cb_deadline = job.deadline;
		pthread_mutex_unlock(&svc.lock);

		status = run_callbacks(&job, epoch, &count);
		/* a callback that forked: this is the child, where the service does not exist */
		if (getpid() != pid)
			return NULL;
		reply_send(job.fd, &job.req, status, count ? 0 : ENOENT, count);
		/* out of the table before the close: a fork child never closes a reused number */
		pthread_mutex_lock(&svc.lock);
		if (svc.epoch == epoch) {
			svc.cb_running = false;
			svc.cb_fd = -1;
		}
		pthread_mutex_unlock(&svc.lock);
		job_free(&job);
	}
}

/*
 * Queue a checked callback request for the callback thread (I/O thread, lock not held).
 * Takes ownership of @fd and @buf on success. -EBUSY when the callback thread is stuck past
 * its own consumer's deadline or the queue is full; -EAGAIN when it cannot be started.
 */
static int svc_enqueue(int fd, const struct perflib_cb_request *req, uint8_t *buf,
		       uint64_t deadline, uint32_t epoch)
{
	struct cb_job *job;
	int err = 0;

	pthread_mutex_lock(&svc.lock);
	if (svc.epoch != epoch) {
		err = -ESHUTDOWN;
		goto out;
	}
	/* a callback already late will not let this one start in time: say so at once */
	if ((svc.cb_running && perflib_now_ms() > svc.cb_deadline) || svc.nr_queued == SVC_QUEUE) {
		err = -EBUSY;
		goto out;
	}
	if (!svc.worker_started) {
		err = thread_start(&svc.worker, svc_worker, epoch);
		if (err) {
			err = -EAGAIN;
			goto out;
		}
		svc.worker_started = true;
	}
	job = &svc.queue[svc.nr_queued++];
	job->fd = fd;
	job->deadline = deadline;
	job->req = *req;
	job->buf = buf;
	pthread_cond_broadcast(&svc.cond);
out:
	pthread_mutex_unlock(&svc.lock);
	return err;
}

/*
 * Read and answer the request on connection @fd. Returns true when the connection is done
 * with (closed or handed to the callback thread), false to keep waiting for it.
 */
static bool svc_handle(int fd, uint8_t *rbuf, uint32_t epoch)
{
	struct perflib_cb_request req;
	struct iovec iov = {.iov_base = rbuf, .iov_len = RBUF_SIZE};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	uint8_t *buf = NULL;
	uint64_t deadline;
	uint32_t timeout;
	ssize_t n;
	int err;

	/* no control buffer: descriptors a peer might pass are dropped by the kernel */
	n = recvmsg(fd, &msg, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	if (n <= 0)
		goto done;
	if ((size_t)n < sizeof(req) || (msg.msg_flags & MSG_TRUNC)) {
		/* too short to echo: a zeroed header */
		memset(&req, 0, sizeof(req));
		reply_send(fd, &req, ERROR_SUCCESS, EINVAL, 0);
		goto done;
	}
	memcpy(&req, rbuf, sizeof(req));
	if (req.magic != PERFLIB_CB_MAGIC || req.reserved || req.len > PERFLIB_CB_MAX_BUFFER ||
	    req.len != (size_t)n - sizeof(req) ||
	    (req.op != PERFLIB_CB_OP_CALLBACK && req.op != PERFLIB_CB_OP_COLLECT) ||
	    (req.op == PERFLIB_CB_OP_COLLECT && (req.len || req.request_code))) {
		reply_send(fd, &req, ERROR_SUCCESS, EINVAL, 0);
		goto done;
	}
	timeout = req.timeout_ms ? req.timeout_ms : 1;
	if (timeout > SVC_MAX_TIMEOUT_MS)
		timeout = SVC_MAX_TIMEOUT_MS;
	deadline = perflib_now_ms() + timeout;
	err = peer_may_read(fd, &req.counterset);
	if (err) {
		reply_send(fd, &req, ERROR_SUCCESS, -err, 0);
		goto done;
	}
	if (req.op == PERFLIB_CB_OP_COLLECT) {
		reply_send(fd, &req, ERROR_SUCCESS, 0, svc_collect(&req.counterset));
		goto done;
	}
	/* a consumer that left (this process was stopped, say) no longer wants it run */
	if (peer_gone(fd))
		goto done;
	/* the callback gets exactly the documented buffer, or is not called */
	err = perflib_cb_buffer_check(req.request_code, &req.counterset, rbuf + sizeof(req),
				      req.len);
	if (!err) {
		buf = malloc(req.len ? req.len : 1);
		err = buf ? 0 : -ENOMEM;
	}
	if (!err) {
		memcpy(buf, rbuf + sizeof(req), req.len);
		err = svc_enqueue(fd, &req, buf, deadline, epoch);
		if (!err)
			return true;
		free(buf);
	}
	reply_send(fd, &req, ERROR_SUCCESS, -err, 0);
done:
	close(fd);
	return true;
}

/* drop connections and queued jobs whose time is up; returns the next deadline (lock held) */
static uint64_t svc_expire(uint64_t now)
{
	uint64_t next = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < svc.nr_conns;) {
		if (svc.conn_deadline[i] <= now) {
			close(svc.conns[i]);
			svc.conns[i] = svc.conns[--svc.nr_conns];
			svc.conn_deadline[i] = svc.conn_deadline[svc.nr_conns];
			continue;
		}
		if (svc.conn_deadline[i] < next)
			next = svc.conn_deadline[i];
		i++;
	}
	for (i = 0; i < svc.nr_queued;) {
		if (svc.queue[i].deadline <= now) {
			queue_remove(i);
			continue;
		}
		if (svc.queue[i].deadline < next)
			next = svc.queue[i].deadline;
		i++;
	}
	return next;
}

/*
 * Take connection @fd out of the table (lock held); returns its deadline. Handled
 * connections leave the table before they are closed or queued, so that a fork child
 * never closes a descriptor number that has been reused meanwhile.
 */
static uint64_t conn_take(int fd)
{
	uint64_t deadline;
	unsigned int i;

	for (i = 0; i < svc.nr_conns; i++) {
		if (svc.conns[i] == fd) {
			deadline = svc.conn_deadline[i];
			svc.conns[i] = svc.conns[--svc.nr_conns];
			svc.conn_deadline[i] = svc.conn_deadline[svc.nr_conns];
			return deadline;
		}
	}
	return 0;
}

/* the I/O thread: accept, read one request per connection, answer or queue it */
static void *svc_io(void *arg)
{
	uint32_t epoch = (uint32_t)(uintptr_t)arg;
	struct pollfd pfd[2 + SVC_MAX_CONNS];
	int ready[SVC_MAX_CONNS], lfd, wfd, fd;
	uint8_t *rbuf;
	unsigned int nfd, nr_ready, i;
	uint64_t now, next;
	int timeout;

	pthread_setname_np(pthread_self(), "perflib-svc");
	pthread_mutex_lock(&svc.lock);
	lfd = svc.listen_fd;
	wfd = svc.wake_fd;
	rbuf = svc.rbuf;
	pthread_mutex_unlock(&svc.lock);
	for (;;) {
		pthread_mutex_lock(&svc.lock);
		if (svc.epoch != epoch)
			break;
		now = perflib_now_ms();
		next = svc_expire(now);
		nfd = 0;
		pfd[nfd++] = (struct pollfd){.fd = wfd, .events = POLLIN};
		/* a full table leaves newcomers in the backlog until a slot frees up */
		if (svc.nr_conns < SVC_MAX_CONNS)
			pfd[nfd++] = (struct pollfd){.fd = lfd, .events = POLLIN};
		for (i = 0; i < svc.nr_conns; i++)
			pfd[nfd++] = (struct pollfd){.fd = svc.conns[i], .events = POLLIN};
		pthread_mutex_unlock(&svc.lock);

		timeout = next == UINT64_MAX ? -1
					     : (int)(next - now < INT_MAX ? next - now : INT_MAX);
		if (poll(pfd, nfd, timeout) < 0)
			continue;
		if (pfd[0].revents) {
			eventfd_t v;

			eventfd_read(wfd, &v);
			continue; /* the epoch check decides */
		}
		nr_ready = 0;
		for (i = 1; i < nfd; i++) {
			if (pfd[i].revents && pfd[i].fd != lfd)
				ready[nr_ready++] = pfd[i].fd;
		}
		for (i = 0; i < nr_ready; i++) {
			uint64_t deadline;

			pthread_mutex_lock(&svc.lock);
			deadline = conn_take(ready[i]);
			pthread_mutex_unlock(&svc.lock);
			if (svc_handle(ready[i], rbuf, epoch))
				continue;
			/* no complete request yet: back in the table */
			pthread_mutex_lock(&svc.lock);
			svc.conn_deadline[svc.nr_conns] = deadline;
			svc.conns[svc.nr_conns++] = ready[i];
			pthread_mutex_unlock(&svc.lock);
		}
		if (nfd > 1 && pfd[1].fd == lfd && pfd[1].revents) {
			pthread_mutex_lock(&svc.lock);
			while (svc.nr_conns < SVC_MAX_CONNS) {
				fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
				if (fd < 0)
					break;
				svc.conn_deadline[svc.nr_conns] = perflib_now_ms() + SVC_IDLE_MS;
				svc.conns[svc.nr_conns++] = fd;
			}
			pthread_mutex_unlock(&svc.lock);
		}
	}
	/* stopping: svc.lock is held */
	for (i = 0; i < svc.nr_conns; i++)
		close(svc.conns[i]);
	svc.nr_conns = 0;
	pthread_mutex_unlock(&svc.lock);
	return NULL;
}

/* bind a listening socket under a fresh random token */
static int svc_listen(int *ret_fd, uint64_t *ret_token)
{
	struct sockaddr_un addr;
	socklen_t len;
	uint64_t token, start;
	uint32_t pid;
	int fd, tries, err;

	perflib_self(&pid, &start);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	for (tries = 0; tries < 4; tries++) {
		if (getrandom(&token, sizeof(token), GRND_NONBLOCK) != sizeof(token))
			token = perflib_now_ms() * 0x9e3779b97f4a7c15ULL ^ ((uint64_t)pid << 32) ^
				start;
		if (!token)
			continue;
		perflib_cb_sockname(pid, token, &addr, &len);
		if (!bind(fd, (struct sockaddr *)&addr, len))
			break;
		err = -errno;
		if (err != -EADDRINUSE)
			goto fail;
	}
	err = tries == 4 ? -EADDRINUSE : 0;
	if (!err && listen(fd, SVC_BACKLOG))
		err = -errno;
	if (err)
		goto fail;
	*ret_fd = fd;
	*ret_token = token;
	return 0;
fail:
	close(fd);
	return err;
}

/* start the service once per process; *ret_token gets its token */
static int svc_start(uint64_t *ret_token)
{
	uint64_t token = 0;
	int lfd = -1, wfd = -1, err = 0;

	pthread_once(&atfork_once, atfork_register);
	pthread_mutex_lock(&svc.lock);
	while (svc.state == SVC_STOPPING)
		pthread_cond_wait(&svc.cond, &svc.lock);
	if (svc.state == SVC_RUNNING)
		goto out;
	err = svc_listen(&lfd, &token);
	if (err)
		goto out;
	wfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (wfd < 0) {
		err = -errno;
		goto out;
	}
	svc.rbuf = malloc(RBUF_SIZE);
	if (!svc.rbuf) {
		err = -ENOMEM;
		goto out;
	}
	svc.listen_fd = lfd;
	svc.wake_fd = wfd;
	svc.token = token;
	err = thread_start(&svc.io, svc_io, svc.epoch);
	if (err)
		goto out;
	svc.state = SVC_RUNNING;
	pr_debug("callback service listening (token %016llx)\n", (unsigned long long)token);
out:
	if (err) {
		if (lfd >= 0)
			close(lfd);
		if (wfd >= 0)
			close(wfd);
		free(svc.rbuf);
		svc.rbuf = NULL;
		svc.listen_fd = svc.wake_fd = -1;
		svc.token = 0;
	} else if (ret_token) {
		*ret_token = svc.token;
	}
	pthread_mutex_unlock(&svc.lock);
	return err;
}

/* stop the threads (no lock held); a callback that stops the last provider detaches */
static void svc_stop(void)
{
	bool worker, self;
	pthread_t io, wk;

	pthread_mutex_lock(&svc.lock);
	if (svc.state != SVC_RUNNING) {
		pthread_mutex_unlock(&svc.lock);
		return;
	}
	svc.state = SVC_STOPPING;
	svc.epoch++;
	io = svc.io;
	wk = svc.worker;
	worker = svc.worker_started;
	self = worker && pthread_equal(wk, pthread_self());
	svc.worker_started = false;
	if (self) {
		/* this callback's own job: the detached thread replies and leaves */
		svc.cb_running = false;
		svc.cb_fd = -1;
		svc.cb_busy = NULL;
	}
	pthread_cond_broadcast(&svc.cond);
	pthread_mutex_unlock(&svc.lock);

	eventfd_write(svc.wake_fd, 1);
	pthread_join(io, NULL);
	if (self)
		pthread_detach(wk);
	else if (worker)
		pthread_join(wk, NULL);

	pthread_mutex_lock(&svc.lock);
	svc_close_all();
	close(svc.listen_fd);
	close(svc.wake_fd);
	free(svc.rbuf);
	svc.rbuf = NULL;
	svc.listen_fd = svc.wake_fd = -1;
	svc.token = 0;
	svc.state = SVC_STOPPED;
	pthread_cond_broadcast(&svc.cond);
	pthread_mutex_unlock(&svc.lock);
	pr_debug("callback service stopped\n");
}

/* ---- what provider.c calls ---------------------------------------------------------------- */

int perflib_cb_provider_started(struct perflib_provider *prov)
{
	/* entries are per counter set (perflib_cb_ctrset_added); the thread starts early */
	if (prov->ctx.ControlCallback && svc_start(NULL))
		pr_warn("cannot start the callback service; retrying with the first counter set\n");
	return 0;
}

void perflib_cb_ctrset_added(struct perflib_ctrset *set)
{
	uint32_t flags = 0;
	uint64_t token = 0;
	int err;

	if (set->prov->ctx.ControlCallback)
		flags |= PERFLIB_PROC_CALLBACK;
	if (set->has_byref)
		flags |= PERFLIB_PROC_BYREF;
	if (flags) {
		err = svc_start(&token);
		if (err) {
			pr_warn("callback service unavailable (%s): consumers will not run this "
				"provider's callback or see its by-reference values\n",
				strerror(-err));
			flags = 0;
			token = 0;
		}
	}
	set->proc_index = proc_claim(set->map, flags, token);
	if (set->proc_index < 0)
		set->proc_index = -1;
}

void perflib_cb_provider_stopping(struct perflib_provider *prov)
{
	struct perflib_ctrset *set;
	bool last;

	/* consumers stop finding this provider first */
	for (set = atomic_load(&prov->sets); set; set = set->next) {
		proc_release(set->map, set->proc_index);
		set->proc_index = -1;
	}
	/* then its callback, if running, returns before its state goes (unless it is us) */
	pthread_mutex_lock(&svc.lock);
	while (svc.cb_busy == prov && cb_current != prov)
		pthread_cond_wait(&svc.cond, &svc.lock);
	pthread_mutex_unlock(&svc.lock);

	perflib_providers_lock();
	last = !perflib_providers_first();
	perflib_providers_unlock();
	if (last)
		svc_stop();
}

// SPDX-License-Identifier: MIT
/*
 * callback.c - the provider side of the cross-process channel (docs/CALLBACKS.md): the
 * service's life. Each counter set a provider registers gets an entry in the set's procs
 * map with this process's identity and what consumers may ask of it (ControlCallback,
 * by-reference values). A process whose providers need consumers' requests runs a
 * service: an I/O thread (cb_io.c) listening on an abstract Unix socket named from the
 * process's random token (the token is in the procs entries), and a callback thread
 * (cb_worker.c) created on the first callback request. This file starts and stops them,
 * keeps them consistent across fork(), and claims and frees the procs entries.
 *
 * Locks, in order: the providers list lock, a provider's lock, svc.lock. The value
 * functions take none of them.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "cb_svc.h"

/* ---- service state ---------------------------------------------------------------------- */

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* forget the I/O thread's connections and the queued jobs (lock held) */
static void svc_close_all(void)
{
	unsigned int i;

	for (i = 0; i < svc.nr_conns; i++)
		close(svc.conns[i].fd);
	svc.nr_conns = 0;
	while (svc.nr_queued)
		perflib_cb_queue_remove(svc.nr_queued - 1);
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
	err = perflib_cb_thread_start(&svc.io, perflib_cb_io, svc.epoch);
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
	set->proc_index = perflib_proc_claim(set->map, flags, token);
	if (set->proc_index < 0)
		set->proc_index = -1;
	set->map->proc_index = set->proc_index;
}

void perflib_cb_provider_stopping(struct perflib_provider *prov)
{
	struct perflib_ctrset *set;
	bool last;

	/* consumers stop finding this provider first */
	for (set = atomic_load(&prov->sets); set; set = set->next) {
		/* its instances are gone: so go the owner summaries the exit reaper would walk */
		perflib_owner_clear_all(set->map, set->proc_index);
		perflib_proc_release(set->map, set->proc_index);
		set->proc_index = -1;
		set->map->proc_index = -1;
	}
	/* then its callback, if running, returns before its state goes (unless it is us) */
	pthread_mutex_lock(&svc.lock);
	while (svc.cb_busy == prov && perflib_cb_current != prov)
		pthread_cond_wait(&svc.cond, &svc.lock);
	pthread_mutex_unlock(&svc.lock);

	perflib_providers_lock();
	last = !perflib_providers_first();
	perflib_providers_unlock();
	if (last)
		svc_stop();
}

// SPDX-License-Identifier: MIT
/*
 * cb_worker.c - the callback thread of the service (docs/CALLBACKS.md, "Callback
 * requests"): the I/O thread queues checked ControlCallback requests, this thread, created
 * with the first of them, runs them one at a time in arrival order. A callback that hangs
 * therefore stops only callbacks: collection goes on, and requests that cannot start
 * before their consumer's deadline are dropped (or refused at once with EBUSY). One user
 * other than root has at most SVC_PEER_QUEUE requests queued.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cb_svc.h"

void perflib_cb_job_free(struct cb_job *job)
{
	if (job->fd >= 0)
		close(job->fd);
	free(job->buf);
	job->fd = -1;
	job->buf = NULL;
}

void perflib_cb_queue_remove(unsigned int i)
{
	perflib_cb_job_free(&svc.queue[i]);
	memmove(&svc.queue[i], &svc.queue[i + 1], (svc.nr_queued - i - 1) * sizeof(svc.queue[0]));
	svc.nr_queued--;
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
			perflib_cb_current = prov;
			r = targets[i].fn(job->req.request_code, copy, job->req.len);
			perflib_cb_current = NULL;
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
		perflib_cb_queue_remove(0);
		if (perflib_now_ms() >= job.deadline || perflib_cb_peer_gone(job.fd)) {
			/* its consumer has given up: do not run the callback late */
			pthread_mutex_unlock(&svc.lock);
			perflib_cb_job_free(&job);
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
		perflib_cb_reply_send(job.fd, &job.req, status, count ? 0 : ENOENT, count);
		/* out of the table before the close: a fork child never closes a reused number */
		pthread_mutex_lock(&svc.lock);
		if (svc.epoch == epoch) {
			svc.cb_running = false;
			svc.cb_fd = -1;
		}
		pthread_mutex_unlock(&svc.lock);
		perflib_cb_job_free(&job);
	}
}

/*
 * Queue a checked callback request for the callback thread (I/O thread, lock not held).
 * Takes ownership of job->fd and job->buf on success. -EBUSY when the callback thread is
 * stuck past its own consumer's deadline, the queue is full, or the peer's user already has
 * SVC_PEER_QUEUE requests waiting; -EAGAIN when the thread cannot be started.
 */
int perflib_cb_enqueue(const struct cb_job *job, uint32_t epoch)
{
	unsigned int i, mine = 0;
	int err = 0;

	pthread_mutex_lock(&svc.lock);
	if (svc.epoch != epoch) {
		err = -ESHUTDOWN;
		goto out;
	}
	for (i = 0; job->uid && i < svc.nr_queued; i++)
		mine += svc.queue[i].uid == job->uid;
	/* a callback already late will not let this one start in time: say so at once */
	if ((svc.cb_running && perflib_now_ms() > svc.cb_deadline) || svc.nr_queued == SVC_QUEUE ||
	    mine >= SVC_PEER_QUEUE) {
		err = -EBUSY;
		goto out;
	}
	if (!svc.worker_started) {
		err = perflib_cb_thread_start(&svc.worker, svc_worker, epoch);
		if (err) {
			err = -EAGAIN;
			goto out;
		}
		svc.worker_started = true;
	}
	svc.queue[svc.nr_queued++] = *job;
	pthread_cond_broadcast(&svc.cond);
out:
	pthread_mutex_unlock(&svc.lock);
	return err;
}

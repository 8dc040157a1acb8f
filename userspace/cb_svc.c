// SPDX-License-Identifier: MIT
/*
 * cb_svc.c - what every thread of the callback service shares (docs/CALLBACKS.md): the one
 * service state of the process, the provider whose callback a thread is running, starting
 * a thread, and the two things done to a consumer's connection by both threads (answering
 * it, seeing whether it has left). The bottom of the service: callback.c starts and stops
 * the I/O thread (cb_io.c), which queues work for the callback thread (cb_worker.c); all
 * three call down to this file, never up.
 */
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>

#include "cb_svc.h"

struct cb_svc perflib_svc = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
	.listen_fd = -1,
	.wake_fd = -1,
	.cb_fd = -1,
};

__thread const struct perflib_provider *perflib_cb_current;

/* start a thread with every signal blocked: the application's handlers run elsewhere */
/* a new thread's start: it says it runs, then runs @fn */
struct thread_start {
	void *(*fn)(void *);
	void *arg;
	sem_t running;
};

static void *thread_trampoline(void *p)
{
	struct thread_start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;

	sem_post(&s->running); /* s is the creator's: not touched after this */
	return fn(arg);
}

int perflib_cb_thread_start(pthread_t *ret_thread, void *(*fn)(void *), uint32_t epoch)
{
	struct thread_start s;
	sigset_t all, old;
	int err;

	s.fn = fn;
	s.arg = (void *)(uintptr_t)epoch;
	if (sem_init(&s.running, 0, 0))
		return -errno;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(ret_thread, NULL, thread_trampoline, &s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/*
	 * Return only once the thread runs: its start-up (stack, TLS, a sanitizer's own
	 * bookkeeping) is over before the caller can fork(), so a child never inherits a lock
	 * that start-up held (seen under AddressSanitizer: a child's first allocation hung)
	 */
	while (!err && sem_wait(&s.running) && errno == EINTR)
		;
	sem_destroy(&s.running);
	return -err;
}

void perflib_cb_reply_send(int fd, const struct perflib_cb_request *req, ULONG status, int err,
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

bool perflib_cb_peer_gone(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLRDHUP};

	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR));
}

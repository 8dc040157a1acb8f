// SPDX-License-Identifier: MIT
/*
 * cb_io.c - the I/O thread of the callback service (docs/CALLBACKS.md, "Fairness"): it
 * accepts connections, judges each peer at once from its credentials, reads the one
 * request of each connection without ever blocking, answers collection requests itself and
 * queues callback requests for the callback thread. No user code runs here.
 *
 * A peer that may read none of this process's counter sets is refused at accept: its
 * request, when already sent, is answered EACCES (else it gets a refusal with op and seq
 * 0), and the connection is closed. Other
 * peers' connections wait for their request at most SVC_IDLE_MS, at most SVC_MAX_CONNS at
 * once and at most SVC_PEER_CONNS of one user other than root; when the table is full, the
 * user with the most connections gives up its oldest one to a newcomer of another user.
 */
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cb_svc.h"

/* accepts per wake-up: the connections already waiting get their turn too */
#define ACCEPT_BATCH SVC_BACKLOG

/*
 * Read and answer the request on connection @c, if it has come. Returns true when the
 * connection is done with (closed or handed to the callback thread), false when its
 * request has not come yet. Never blocks.
 */
static bool conn_handle(const struct cb_conn *c, uint8_t *rbuf, uint32_t epoch)
{
	struct perflib_cb_request req;
	struct iovec iov = {.iov_base = rbuf, .iov_len = RBUF_SIZE};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	struct cb_job job;
	uint32_t timeout;
	ssize_t n;
	int err;

	/* no control buffer: descriptors a peer might pass are dropped by the kernel */
	n = recvmsg(c->fd, &msg, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return false;
	if (n <= 0)
		goto done;
	if ((size_t)n < sizeof(req) || (msg.msg_flags & MSG_TRUNC)) {
		/* too short to echo: a zeroed header */
		memset(&req, 0, sizeof(req));
		perflib_cb_reply_send(c->fd, &req, ERROR_SUCCESS, EINVAL, 0);
		goto done;
	}
	memcpy(&req, rbuf, sizeof(req));
	if (req.magic != PERFLIB_CB_MAGIC || req.reserved || req.len > PERFLIB_CB_MAX_BUFFER ||
	    req.len != (size_t)n - sizeof(req) ||
	    (req.op != PERFLIB_CB_OP_CALLBACK && req.op != PERFLIB_CB_OP_COLLECT) ||
	    (req.op == PERFLIB_CB_OP_COLLECT && (req.len || req.request_code))) {
		perflib_cb_reply_send(c->fd, &req, ERROR_SUCCESS, EINVAL, 0);
		goto done;
	}
	timeout = req.timeout_ms ? req.timeout_ms : 1;
	if (timeout > SVC_MAX_TIMEOUT_MS)
		timeout = SVC_MAX_TIMEOUT_MS;
	err = perflib_cb_peer_may_read(c->fd, c->uid, c->gid, &req.counterset);
	if (err) {
		perflib_cb_reply_send(c->fd, &req, ERROR_SUCCESS, -err, 0);
		goto done;
	}
	if (req.op == PERFLIB_CB_OP_COLLECT) {
		perflib_cb_reply_send(c->fd, &req, ERROR_SUCCESS, 0,
				      perflib_cb_collect(&req.counterset));
		goto done;
	}
	/* a consumer that left (this process was stopped, say) no longer wants it run */
	if (perflib_cb_peer_gone(c->fd))
		goto done;
	/* the callback gets exactly the documented buffer, or is not called */
	err = perflib_cb_buffer_check(req.request_code, &req.counterset, rbuf + sizeof(req),
				      req.len);
	memset(&job, 0, sizeof(job));
	if (!err) {
		job.buf = malloc(req.len ? req.len : 1);
		err = job.buf ? 0 : -ENOMEM;
	}
	if (!err) {
		memcpy(job.buf, rbuf + sizeof(req), req.len);
		job.fd = c->fd;
		job.uid = c->uid;
		job.deadline = perflib_now_ms() + timeout;
		job.req = req;
		err = perflib_cb_enqueue(&job, epoch);
		if (!err)
			return true;
		free(job.buf);
	}
	perflib_cb_reply_send(c->fd, &req, ERROR_SUCCESS, -err, 0);
done:
	close(c->fd);
	return true;
}

/* remove table entry @i (lock held) */
static void conn_remove(unsigned int i)
{
	svc.conns[i] = svc.conns[--svc.nr_conns];
}

/* drop connections and queued jobs whose time is up; returns the next deadline (lock held) */
static uint64_t svc_expire(uint64_t now)
{
	uint64_t next = UINT64_MAX;
	unsigned int i;

	for (i = 0; i < svc.nr_conns;) {
		if (svc.conns[i].deadline <= now) {
			close(svc.conns[i].fd);
			conn_remove(i);
			continue;
		}
		if (svc.conns[i].deadline < next)
			next = svc.conns[i].deadline;
		i++;
	}
	for (i = 0; i < svc.nr_queued;) {
		if (svc.queue[i].deadline <= now) {
			perflib_cb_queue_remove(i);
			continue;
		}
		if (svc.queue[i].deadline < next)
			next = svc.queue[i].deadline;
		i++;
	}
	return next;
}

/*
 * Take connection @fd out of the table (lock held) into *ret. Handled connections leave
 * the table before they are closed or queued, so that a fork child never closes a
 * descriptor number that has been reused meanwhile.
 */
static bool conn_take(int fd, struct cb_conn *ret)
{
	unsigned int i;

	for (i = 0; i < svc.nr_conns; i++) {
		if (svc.conns[i].fd == fd) {
			*ret = svc.conns[i];
			conn_remove(i);
			return true;
		}
	}
	return false;
}

/*
 * Room in the full table for a connection of @uid (lock held): the oldest connection of the
 * user other than root with the most connections goes, unless that user is @uid.
 */
static bool conn_make_room(uid_t uid)
{
	unsigned int i, j, n, best = 0, victim = SVC_MAX_CONNS;

	for (i = 0; i < svc.nr_conns; i++) {
		if (!svc.conns[i].uid || svc.conns[i].uid == uid)
			continue;
		for (j = 0, n = 0; j < svc.nr_conns; j++)
			n += svc.conns[j].uid == svc.conns[i].uid;
		if (n > best || (n == best && victim < SVC_MAX_CONNS &&
				 svc.conns[i].deadline < svc.conns[victim].deadline)) {
			best = n;
			victim = i;
		}
	}
	if (victim == SVC_MAX_CONNS)
		return false;
	close(svc.conns[victim].fd);
	conn_remove(victim);
	return true;
}

/*
 * Close connection @fd after its answer without a reset: a request that came after the look
 * for it would be unread at close(), and the kernel then makes the peer's next receive fail
 * with ECONNRESET before it reads the answer waiting for it (seen under load: a consumer
 * refused at accept got "connection reset" instead of ERROR_ACCESS_DENIED). Shut for
 * reading first, so that nothing more can come (the peer's send fails with EPIPE), then
 * drop what came.
 */
static void close_unread(int fd)
{
	char b[64];

	shutdown(fd, SHUT_RD);
	while (recv(fd, b, sizeof(b), MSG_DONTWAIT | MSG_TRUNC) > 0)
		;
	close(fd);
}

/* a new connection, judged before anything else is done with it */
static void conn_accept(int fd, uint8_t *rbuf, uint32_t epoch)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct cb_conn c = {.fd = fd};
	unsigned int i, mine = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) || len != sizeof(cred)) {
		close(fd);
		return;
	}
	c.uid = cred.uid;
	c.gid = cred.gid;
	/*
	 * May read nothing here: its request, if sent, is refused; if not sent yet, a refusal
	 * with op and seq 0 answers whatever it sends. It is never kept waiting.
	 */
	if (!perflib_cb_peer_may_read_any(fd, c.uid, c.gid)) {
		if (!conn_handle(&c, rbuf, epoch)) {
			struct perflib_cb_request none;

			memset(&none, 0, sizeof(none));
			perflib_cb_reply_send(fd, &none, ERROR_SUCCESS, EACCES, 0);
			close_unread(fd);
		}
		return;
	}
	/* usually the request is there already */
	if (conn_handle(&c, rbuf, epoch))
		return;
	c.deadline = perflib_now_ms() + SVC_IDLE_MS;
	pthread_mutex_lock(&svc.lock);
	for (i = 0; c.uid && i < svc.nr_conns; i++)
		mine += svc.conns[i].uid == c.uid;
	if (mine >= SVC_PEER_CONNS || (svc.nr_conns == SVC_MAX_CONNS && !conn_make_room(c.uid))) {
		pthread_mutex_unlock(&svc.lock);
		pr_debug("callback service: connection of uid %u refused (%u waiting)\n",
			 (unsigned int)c.uid, mine);
		close(fd);
		return;
	}
	svc.conns[svc.nr_conns++] = c;
	pthread_mutex_unlock(&svc.lock);
}

void *perflib_cb_io(void *arg)
{
	uint32_t epoch = (uint32_t)(uintptr_t)arg;
	struct pollfd pfd[2 + SVC_MAX_CONNS];
	int ready[SVC_MAX_CONNS], lfd, wfd, fd;
	unsigned int nfd, nr_ready, i;
	uint64_t now, next;
	uint8_t *rbuf;
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
		pfd[nfd++] = (struct pollfd){.fd = lfd, .events = POLLIN};
		for (i = 0; i < svc.nr_conns; i++)
			pfd[nfd++] = (struct pollfd){.fd = svc.conns[i].fd, .events = POLLIN};
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
		for (i = 2; i < nfd; i++) {
			if (pfd[i].revents)
				ready[nr_ready++] = pfd[i].fd;
		}
		for (i = 0; i < nr_ready; i++) {
			struct cb_conn c;
			bool found;

			pthread_mutex_lock(&svc.lock);
			found = conn_take(ready[i], &c);
			pthread_mutex_unlock(&svc.lock);
			if (!found || conn_handle(&c, rbuf, epoch))
				continue;
			/* no complete request yet: back in the table */
			pthread_mutex_lock(&svc.lock);
			svc.conns[svc.nr_conns++] = c;
			pthread_mutex_unlock(&svc.lock);
		}
		if (!pfd[1].revents)
			continue;
		for (i = 0; i < ACCEPT_BATCH; i++) {
			fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd < 0)
				break;
			conn_accept(fd, rbuf, epoch);
		}
	}
	/* stopping: svc.lock is held */
	for (i = 0; i < svc.nr_conns; i++)
		close(svc.conns[i].fd);
	svc.nr_conns = 0;
	pthread_mutex_unlock(&svc.lock);
	return NULL;
}

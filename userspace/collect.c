// SPDX-License-Identifier: MIT
/*
 * collect.c - the consumer side of the cross-process channel (docs/CALLBACKS.md): find the
 * provider processes of a counter set in its procs map, send each a request over its
 * abstract Unix socket, and wait for the answers with one bounded deadline. Everything
 * read from the procs map is untrusted: entries are copied and re-checked, processes must
 * be alive, and the socket's owner must be the pid the entry names.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "internal.h"

#define TIMEOUT_DEFAULT_MS 1000
#define TIMEOUT_MAX_MS 600000

/* the wire layout docs/CALLBACKS.md gives */
_Static_assert(sizeof(struct perflib_cb_request) == 48, "perflib_cb_request");
_Static_assert(offsetof(struct perflib_cb_request, counterset) == 16, "counterset");
_Static_assert(offsetof(struct perflib_cb_request, len) == 40, "len");
_Static_assert(sizeof(struct perflib_cb_reply) == 32, "perflib_cb_reply");
_Static_assert(offsetof(struct perflib_cb_reply, status) == 16, "status");

unsigned int perflib_cb_timeout_ms(void)
{
	const char *s = getenv("PERFLIB_CALLBACK_TIMEOUT_MS");
	unsigned long v;
	char *end;

	if (!s || !*s)
		return TIMEOUT_DEFAULT_MS;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < 1 || v > TIMEOUT_MAX_MS) {
		pr_debug("ignoring PERFLIB_CALLBACK_TIMEOUT_MS=%s (expected 1..%u)\n", s,
			 TIMEOUT_MAX_MS);
		return TIMEOUT_DEFAULT_MS;
	}
	return (unsigned int)v;
}

int perflib_cb_sockname(uint32_t pid, uint64_t token, struct sockaddr_un *ret_addr,
			socklen_t *ret_len)
{
	int n;

	memset(ret_addr, 0, sizeof(*ret_addr));
	ret_addr->sun_family = AF_UNIX;
	/* abstract namespace: sun_path[0] is NUL, the name is not NUL-terminated */
	n = snprintf(ret_addr->sun_path + 1, sizeof(ret_addr->sun_path) - 1, "perflib-%u-%016llx",
		     pid, (unsigned long long)token);
	*ret_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
	return 0;
}

int perflib_cb_identity(const GUID *set, ULONG counter_id, ULONG instance_id, const WCHAR *machine,
			const WCHAR *instance, void **ret_buf, size_t *ret_len)
{
	size_t mlen, ilen = 0, len;
	PERF_COUNTER_IDENTITY id;
	uint8_t *buf;

	if (!set || !machine)
		return -EINVAL;
	mlen = (perflib_wcsnlen(machine, PERFLIB_CB_MAX_BUFFER) + 1) * sizeof(WCHAR);
	if (instance)
		ilen = (perflib_wcsnlen(instance, PERFLIB_CB_MAX_BUFFER) + 1) * sizeof(WCHAR);
	len = sizeof(id) + mlen + ilen;
	if (len > PERFLIB_CB_MAX_BUFFER)
		return -EINVAL;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	memset(&id, 0, sizeof(id));
	id.CounterSetGuid = *set;
	id.BufferSize = (ULONG)len;
	id.CounterId = counter_id;
	id.InstanceId = instance_id;
	/* the strings follow the structure, machine first, unpadded (spec 8.6) */
	id.MachineOffset = sizeof(id);
	id.NameOffset = instance ? (ULONG)(sizeof(id) + mlen) : 0;
	memcpy(buf, &id, sizeof(id));
	memcpy(buf + sizeof(id), machine, mlen);
	if (instance)
		memcpy(buf + sizeof(id) + mlen, instance, ilen);
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

/* a NUL-terminated UTF-16LE string starts at byte @off and ends inside @len bytes */
static bool wstr_within(const uint8_t *buf, size_t len, size_t off)
{
	if (off % 2 || off >= len)
		return false;
	for (; off + 1 < len; off += 2) {
		if (!buf[off] && !buf[off + 1])
			return true;
	}
	return false;
}

int perflib_cb_buffer_check(ULONG request, const GUID *set, const void *buf, size_t len)
{
	const uint8_t *b = buf;
	PERF_COUNTER_IDENTITY id;

	if (!buf || len > PERFLIB_CB_MAX_BUFFER)
		return -EINVAL;
	switch (request) {
	case PERF_ADD_COUNTER:
	case PERF_REMOVE_COUNTER:
		if (len < sizeof(id))
			return -EINVAL;
		memcpy(&id, b, sizeof(id));
		/* every offset inside the buffer, every string terminated inside it */
		if (id.BufferSize != len || !perflib_guid_equal(&id.CounterSetGuid, set) ||
		    id.MachineOffset < sizeof(id) || !wstr_within(b, len, id.MachineOffset))
			return -EINVAL;
		if (id.NameOffset &&
		    (id.NameOffset < sizeof(id) || !wstr_within(b, len, id.NameOffset)))
			return -EINVAL;
		return 0;
	case PERF_ENUM_INSTANCES:
	case PERF_COLLECT_START:
	case PERF_COLLECT_END:
		/* exactly a machine name: whole UTF-16 units, the last one the NUL */
		if (len < 2 || len % 2 || b[len - 2] || b[len - 1])
			return -EINVAL;
		return 0;
	default:
		/* PERF_FILTER's buffer has no documented format */
		return -EINVAL;
	}
}

struct peer {
	uint32_t pid;	/* from the procs entry */
	uint64_t start; /* process start time, from the entry */
	uint64_t token; /* socket name component, from the entry */
	int fd;		/* connection, -1 when done */
	bool retry;	/* connect found the backlog full: try again at next_try */
	uint64_t next_try;
	unsigned int tries;
	bool answered; /* reply holds a valid answer */
	struct perflib_cb_reply reply;
};

/*
 * Copy procs entry @i into @ret: from the mapping, re-checked against concurrent changes,
 * or, for a reader that could not map s0/live, with a lookup of each of its words (a torn
 * copy is harmless: whatever it holds fails the liveness or socket-owner check). false to skip.
 */
static bool proc_read(const struct perflib_store *map, uint32_t i, struct perflib_proc *ret)
{
	const struct perflib_proc *e;
	uint64_t w1, w2;

	if (!map->procs) {
		int fd = perflib_seg_at(&map->cls[0], 0)->live_fd;
		__u32 w, k = perflib_procs_word(map->cls[0].seg0, map->info->nr_procs, i);

		for (w = 0; w < PERFLIB_PROC_WORDS; w++, k++) {
			if (fd < 0 || bpf_map_lookup_elem(fd, &k, (uint64_t *)ret + w))
				return false;
		}
		return ret->state == PERFLIB_PROC_LIVE;
	}
	e = &map->procs[i];
	w1 = __atomic_load_n((const uint64_t *)e, __ATOMIC_ACQUIRE);
	if ((uint32_t)w1 != PERFLIB_PROC_LIVE)
		return false;
	ret->pid = __atomic_load_n(&e->pid, __ATOMIC_RELAXED);
	ret->start = __atomic_load_n(&e->start, __ATOMIC_RELAXED);
	ret->flags = __atomic_load_n(&e->flags, __ATOMIC_RELAXED);
	ret->token = __atomic_load_n(&e->token, __ATOMIC_RELAXED);
	/* the entry changed hands while it was copied: its owner is leaving or arriving */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	w2 = __atomic_load_n((const uint64_t *)e, __ATOMIC_RELAXED);
	return w1 == w2;
}

/*
 * Copy the live entries of @map's procs that have @flag into @peers (room for nr_procs),
 * one per process: a process with several providers of the set has several entries but
 * answers for all of them at once. Returns the number copied.
 */
static size_t procs_snapshot(const struct perflib_store *map, uint32_t flag, struct peer *peers)
{
	uint32_t nr = map->info->nr_procs, i;
	struct perflib_proc e;
	size_t n = 0, j;

	for (i = 0; i < nr; i++) {
		if (!proc_read(map, i, &e) || !(e.flags & flag) || !e.token || !e.pid)
			continue;
		for (j = 0; j < n; j++) {
			if (peers[j].pid == e.pid && peers[j].start == e.start &&
			    peers[j].token == e.token)
				break;
		}
		if (j < n)
			continue;
		peers[n].pid = e.pid;
		peers[n].start = e.start;
		peers[n].token = e.token;
		peers[n].fd = -1;
		n++;
	}
	return n;
}

/*
 * might a live entry of @map's procs have @flag? Only mapped entries are looked at (a
 * glance at the entries' words and flags, no copy, no syscall); unmapped: true.
 */
static bool procs_any(const struct perflib_store *map, uint32_t flag)
{
	uint32_t nr = map->info->nr_procs, i;

	if (!map->procs)
		return true;
	for (i = 0; i < nr; i++) {
		const struct perflib_proc *e = &map->procs[i];

		if (__atomic_load_n(&e->state, __ATOMIC_ACQUIRE) == PERFLIB_PROC_LIVE &&
		    __atomic_load_n(&e->flags, __ATOMIC_RELAXED) & flag)
			return true;
	}
	return false;
}

/* the provider's refusal at accept of a peer that may read none of its counter sets */
static bool refusal(const struct perflib_cb_reply *r)
{
	return r->magic == PERFLIB_CB_MAGIC && !r->op && !r->seq && r->err == EACCES;
}

/*
 * Connect to @p's service and send the request. A full backlog (EAGAIN: other peers,
 * perhaps a flood of them, are queued) sets p->retry: peers_wait tries again until the
 * deadline. On any other failure @p is skipped.
 */
static void peer_send(struct peer *p, const struct perflib_cb_request *req, const void *buf)
{
	struct iovec iov[2] = {
		{.iov_base = (void *)req, .iov_len = sizeof(*req)},
		{.iov_base = (void *)buf, .iov_len = req->len},
	};
	struct msghdr msg = {.msg_iov = iov, .msg_iovlen = req->len ? 2 : 1};
	struct sockaddr_un addr;
	struct ucred cred;
	socklen_t alen, clen = sizeof(cred);
	pid_t local;
	int fd;

	/* dead processes cost nothing: no connect, no wait (nor unseen ones: another container) */
	if (perflib_proc_local_pid(p->pid, p->start, &local))
		return;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	perflib_cb_sockname(p->pid, p->token, &addr, &alen);
	/* non-blocking: a full backlog fails with EAGAIN instead of waiting */
	p->retry = false;
	if (connect(fd, (struct sockaddr *)&addr, alen)) {
		if (errno == EAGAIN) {
			/* 1, 2, 4, 8 ms, then every 8 ms */
			p->retry = true;
			p->next_try = perflib_now_ms() + (1u << (p->tries < 3 ? p->tries : 3));
			p->tries++;
		} else {
			pr_debug("provider %u: connect: %s\n", p->pid, strerror(errno));
		}
		goto fail;
	}
	/* the name is public: only the process the entry names may answer */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) || cred.pid != local) {
		pr_debug("provider %u: socket owned by another process\n", p->pid);
		goto fail;
	}
	if (sendmsg(fd, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)(sizeof(*req) + req->len)) {
		pr_debug("provider %u: send: %s\n", p->pid, strerror(errno));
		/* refused at accept, before the request went out: the refusal is there */
		if (recv(fd, &p->reply, sizeof(p->reply), MSG_DONTWAIT) == sizeof(p->reply) &&
		    refusal(&p->reply))
			p->answered = true;
		goto fail;
	}
	p->fd = fd;
	return;
fail:
	close(fd);
}

/* read @p's reply if it is there; true when @p is done (answered or gone) */
static bool peer_recv(struct peer *p, const struct perflib_cb_request *req, short revents)
{
	uint8_t buf[sizeof(struct perflib_cb_reply) + 8];
	ssize_t n;

	n = recv(p->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return revents & (POLLHUP | POLLERR);
	if (n == (ssize_t)sizeof(p->reply)) {
		memcpy(&p->reply, buf, sizeof(p->reply));
		p->answered = p->reply.magic == PERFLIB_CB_MAGIC &&
			      ((p->reply.op == req->op && p->reply.seq == req->seq) ||
			       refusal(&p->reply));
	}
	return true;
}

/* wait for the replies of the peers with a connection (and connect the retrying) until @deadline */
static void peers_wait(struct peer *peers, size_t n, const struct perflib_cb_request *req,
		       const void *buf, uint64_t deadline)
{
	struct pollfd *pfd;
	size_t *which, i, nr;
	uint64_t now;

	pfd = calloc(n, sizeof(*pfd));
	which = calloc(n, sizeof(*which));
	if (!pfd || !which)
		goto out;
	for (;;) {
		uint64_t wake = deadline;
		bool retrying = false;

		now = perflib_now_ms();
		for (i = 0, nr = 0; i < n; i++) {
			if (peers[i].retry && now < deadline && now >= peers[i].next_try)
				peer_send(&peers[i], req, buf);
			if (peers[i].retry && now < deadline) {
				retrying = true;
				if (peers[i].next_try < wake)
					wake = peers[i].next_try;
			}
			if (peers[i].fd < 0)
				continue;
			pfd[nr] = (struct pollfd){.fd = peers[i].fd, .events = POLLIN};
			which[nr++] = i;
		}
		now = perflib_now_ms();
		if ((!nr && !retrying) || now >= deadline)
			break;
		if (poll(pfd, nr, wake > now ? (int)(wake - now) : 0) < 0 && errno != EINTR)
			break;
		for (i = 0; i < nr; i++) {
			struct peer *p = &peers[which[i]];

			if (pfd[i].revents && peer_recv(p, req, pfd[i].revents)) {
				close(p->fd);
				p->fd = -1;
			}
		}
	}
out:
	/* the rest did not answer in time: skipped */
	for (i = 0; i < n; i++) {
		if (peers[i].retry)
			pr_debug("provider %u: backlog full until the deadline\n", peers[i].pid);
		if (peers[i].fd >= 0) {
			pr_debug("provider %u did not answer in time\n", peers[i].pid);
			close(peers[i].fd);
			peers[i].fd = -1;
		}
	}
	free(pfd);
	free(which);
}

/*
 * Send one request to every live provider process of @map with @flag and wait for them
 * together, at most the timeout. *ret_peers (malloc'd, procs order) and *ret_nr describe
 * the outcome.
 */
static int exchange(const struct perflib_store *map, uint32_t op, uint32_t flag, ULONG code,
		    const void *buf, size_t len, struct peer **ret_peers, size_t *ret_nr)
{
	static _Atomic uint64_t seq;
	unsigned int timeout;
	uint64_t deadline;
	struct perflib_cb_request req;
	struct peer *peers;
	size_t n, i;

	if (!map || !map->info)
		return -EINVAL;
	*ret_peers = NULL;
	*ret_nr = 0;
	/* most counter sets have no provider with @flag: nothing to allocate or wait for */
	if (!procs_any(map, flag))
		return 0;
	timeout = perflib_cb_timeout_ms();
	deadline = perflib_now_ms() + timeout;
	peers = calloc(map->info->nr_procs, sizeof(*peers));
	if (!peers)
		return -ENOMEM;
	n = procs_snapshot(map, flag, peers);
	memset(&req, 0, sizeof(req));
	req.magic = PERFLIB_CB_MAGIC;
	req.op = op;
	req.seq = atomic_fetch_add(&seq, 1) ^ ((uint64_t)getpid() << 32);
	req.counterset = map->guid;
	req.request_code = code;
	req.timeout_ms = timeout;
	req.len = (uint32_t)len;
	/* all requests out first, then one wait: N stuck providers cost one timeout */
	for (i = 0; i < n; i++)
		peer_send(&peers[i], &req, buf);
	peers_wait(peers, n, &req, buf, deadline);
	*ret_peers = peers;
	*ret_nr = n;
	return 0;
}

int perflib_notify_providers(const struct perflib_store *map, ULONG request, const void *buf,
			     size_t len, ULONG *ret_status)
{
	ULONG status = ERROR_SUCCESS;
	struct peer *peers;
	bool denied = false;
	size_t n, i;
	int err;

	if (!map || !ret_status || perflib_cb_buffer_check(request, &map->guid, buf, len))
		return -EINVAL;
	err = exchange(map, PERFLIB_CB_OP_CALLBACK, PERFLIB_PROC_CALLBACK, request, buf, len,
		       &peers, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		if (!peers[i].answered)
			continue;
		if (peers[i].reply.err == EACCES)
			denied = true;
		/* a result counts only when callbacks ran; a refusal is not one */
		else if (!peers[i].reply.err && peers[i].reply.status && status == ERROR_SUCCESS)
			status = peers[i].reply.status;
	}
	free(peers);
	if (denied)
		return -EACCES;
	*ret_status = status;
	return 0;
}

int perflib_collect_refs(const struct perflib_store *map)
{
	struct peer *peers;
	bool denied = false;
	size_t n, i;
	int err;

	if (!map || !map->info)
		return -EINVAL;
	/* a counter set without by-reference counters has nothing to collect */
	if (!map->info->ref_offset)
		return 0;
	err = exchange(map, PERFLIB_CB_OP_COLLECT, PERFLIB_PROC_BYREF, 0, NULL, 0, &peers, &n);
	if (err)
		return err;
	for (i = 0; i < n; i++)
		denied |= peers[i].answered && peers[i].reply.err == EACCES;
	free(peers);
	return denied ? -EACCES : 0;
}

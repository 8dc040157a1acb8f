/* SPDX-License-Identifier: MIT */
/*
 * cb_svc.h - the provider side of the cross-process channel (docs/CALLBACKS.md): state
 * shared by the files of the service, private to them.
 *
 *   callback.c    the service's life: start, stop, fork(), procs entries, provider hooks
 *   cb_io.c       the I/O thread: accepting, per-peer limits, reading and answering requests
 *   cb_worker.c   the callback thread: the queue of ControlCallback requests
 *   cb_access.c   who may ask: the peer's credentials against the counter set's pins
 *   cb_collect.c  collection requests: dereferencing by-reference counters
 *   cb_svc.c      what they share: the service state, thread start, replies to a consumer
 *
 * Calls go down that list, never up (make check-layers): callback.c starts the I/O thread
 * and empties the queue, cb_io.c queues jobs for cb_worker.c, and every file uses cb_svc.c.
 *
 * Locks, in order: the providers list lock, a provider's lock, svc.lock. The value
 * functions take none of them.
 */
#ifndef PERFLIB_CB_SVC_H
#define PERFLIB_CB_SVC_H

#include <sys/socket.h>

#include "internal.h"

#define SVC_BACKLOG 64		  /* connections the kernel queues before connect() fails */
#define SVC_MAX_CONNS 64	  /* connections awaiting their request at once */
#define SVC_PEER_CONNS 8	  /* of them, from one user other than root */
#define SVC_QUEUE 32		  /* callback requests waiting for the callback thread */
#define SVC_PEER_QUEUE 8	  /* of them, from one user other than root */
#define SVC_IDLE_MS 2000	  /* a connection must deliver its request within this */
#define SVC_MAX_TIMEOUT_MS 600000 /* consumers' timeouts are clamped to this */
#define SVC_MAX_GROUPS 65536	  /* NGROUPS_MAX of the kernel */
#define RBUF_SIZE (sizeof(struct perflib_cb_request) + PERFLIB_CB_MAX_BUFFER + 8)

enum svc_state {
	SVC_STOPPED,
	SVC_RUNNING,
	SVC_STOPPING, /* threads being joined; starters wait */
};

/* a connection the I/O thread waits on, with its peer's credentials from accept time */
struct cb_conn {
	int fd;
	uid_t uid;	   /* effective uid of the peer (SO_PEERCRED) */
	gid_t gid;	   /* effective gid of the peer */
	uint64_t deadline; /* monotonic ms: closed when its request has not come by then */
};

struct cb_job {
	int fd;		   /* the consumer's connection, owned by the job */
	uid_t uid;	   /* its peer's uid */
	uint64_t deadline; /* monotonic ms after which the consumer has left */
	struct perflib_cb_request req;
	uint8_t *buf; /* req.len bytes (malloc'd) */
};

struct cb_svc {
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
	struct cb_conn conns[SVC_MAX_CONNS];
	unsigned int nr_conns;
	struct cb_job queue[SVC_QUEUE]; /* FIFO of callback requests */
	unsigned int nr_queued;
	bool cb_running;		  /* the callback thread is working on a job */
	int cb_fd;			  /* that job's connection */
	uint64_t cb_deadline;		  /* that job's deadline */
	struct perflib_provider *cb_busy; /* provider whose callback runs right now */
};

/* cb_svc.c: the one service of the process */
extern struct cb_svc perflib_svc;
#define svc perflib_svc

/* cb_svc.c: the provider whose ControlCallback this thread is running (PerfStopProvider) */
extern __thread const struct perflib_provider *perflib_cb_current;

/* cb_svc.c: start a thread with every signal blocked (-errno) */
int perflib_cb_thread_start(pthread_t *ret_thread, void *(*fn)(void *), uint32_t epoch);

/* cb_svc.c: a reply to a consumer that never waits; has the consumer on @fd left? */
void perflib_cb_reply_send(int fd, const struct perflib_cb_request *req, ULONG status, int err,
			   uint32_t count);
bool perflib_cb_peer_gone(int fd);

/*
 * cb_access.c: may the peer on @fd (@uid, @gid from accept time) read counter set @guid
 * (0 or -EACCES)? perflib_cb_peer_may_read_any: may it read any counter set of this
 * process's providers (checked at accept, before anything is read from it)?
 */
int perflib_cb_peer_may_read(int fd, uid_t uid, gid_t gid, const GUID *guid);
bool perflib_cb_peer_may_read_any(int fd, uid_t uid, gid_t gid);

/* cb_io.c: the I/O thread (arg: its epoch) */
void *perflib_cb_io(void *arg);

/* cb_worker.c: the queue (svc.lock held for the two first) and the callback thread */
void perflib_cb_job_free(struct cb_job *job);
void perflib_cb_queue_remove(unsigned int i);
int perflib_cb_enqueue(const struct cb_job *job, uint32_t epoch);

/* cb_collect.c: a collection request; the number of instances whose values were read */
uint32_t perflib_cb_collect(const GUID *guid);

#endif /* PERFLIB_CB_SVC_H */

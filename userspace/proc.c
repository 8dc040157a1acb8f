// SPDX-License-Identifier: MIT
/*
 * proc.c - process identity for liveness, across pid namespaces (docs/ARCHITECTURE.md,
 * "Process identity"). An owner is (pid, stamp): its pid in its own pid namespace, and a
 * stamp holding its start time in clock ticks since boot (/proc/<pid>/stat field 22: it
 * never repeats for one pid, so a reused pid neither revives nor hides an instance) and a
 * tag of its pid namespace (layout.h, perflib_owner_stamp). A process whose thread-group
 * leader is a zombie lives as long as one of its threads does.
 *
 * A reader checks an owner of the namespace its /proc shows directly in /proc/<pid>; an
 * owner of another namespace is looked up among all the processes /proc shows (start time
 * first, then the last NSpid entry, then the namespace inode where it may be read), and the
 * answer is remembered as a local pid that is re-verified on every later check. An owner
 * that cannot be found counts as dead only when this reader sees every process that could
 * be it (its /proc is the initial namespace's, or the owner is of this reader's namespace);
 * otherwise (a sibling container) it is none of this reader's business and counts as alive.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* "/proc/<pid>/<file>" (pid 0: /proc/self/<file>) into @path */
static void proc_path(pid_t pid, const char *file, char *path, size_t size)
{
	if (pid > 0)
		snprintf(path, size, "/proc/%d/%s", (int)pid, file);
	else
		snprintf(path, size, "/proc/self/%s", file);
}

/* the text of /proc/<pid>/<file> (pid 0: self), NUL-terminated; -ESRCH if unreadable */
static int proc_read(pid_t pid, const char *file, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	proc_path(pid, file, path, sizeof(path));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = 0;
	return 0;
}

/* parse field 22 (starttime) and field 3 (state) of /proc/<pid>/stat */
static int read_stat(pid_t pid, uint64_t *ret_start, char *ret_state)
{
	char buf[1024], *p;
	int i;

	if (proc_read(pid, "stat", buf, sizeof(buf)))
		return -ESRCH;
	/* comm may hold spaces and parentheses: fields restart after the last ')' */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return -EIO;
	p += 2;
	*ret_state = *p;
	for (i = 3; i < 22; i++) {
		p = strchr(p, ' ');
		if (!p)
			return -EIO;
		p++;
	}
	*ret_start = strtoull(p, NULL, 10);
	return 0;
}

/* /proc/<pid>/status (pid 0: self): "Threads:" into *ret_threads, NSpid into @nspid */
static int read_status(pid_t pid, unsigned int *ret_threads, uint32_t *nspid, int max, int *ret_nr)
{
	char buf[4096], *p;
	int nr = 0;

	if (proc_read(pid, "status", buf, sizeof(buf)))
		return -ESRCH;
	if (ret_threads) {
		p = strstr(buf, "\nThreads:");
		*ret_threads = p ? (unsigned int)strtoul(p + 9, NULL, 10) : 1;
	}
	if (ret_nr) {
		p = strstr(buf, "\nNSpid:");
		if (p) {
			p += 7;
			while (nr < max) {
				char *end;
				unsigned long v = strtoul(p, &end, 10);

				if (end == p)
					break;
				nspid[nr++] = (uint32_t)v;
				p = end;
			}
		}
		*ret_nr = nr;
	}
	return 0;
}

/* the pid namespace inode of /proc/<pid> (0: self); 0 when it cannot be read */
static uint32_t read_pidns(pid_t pid)
{
	char path[64];
	struct stat st;

	proc_path(pid, "ns/pid", path, sizeof(path));
	if (stat(path, &st))
		return 0;
	return (uint32_t)st.st_ino;
}

int perflib_proc_start_time(pid_t pid, uint64_t *ret_start)
{
	uint64_t start;
	char state;
	int err;

	err = read_stat(pid, &start, &state);
	if (err)
		return err;
	*ret_start = start;
	return 0;
}

/* ---- this process and its view ---------------------------------------------------------- */

static struct {
	uint32_t pid;	     /* getpid() when computed: recomputed after fork() */
	uint64_t stamp;	     /* our own stamp */
	uint64_t own_tag;    /* our pid namespace's tag */
	uint64_t proc_tag;   /* the tag of the namespace /proc shows, when proc_known */
	bool proc_known;     /* /proc's namespace is ours, or the initial one */
	bool proc_sees_all;  /* /proc is the initial namespace's: every process is in it */
	bool proc_sees_ours; /* /proc shows our namespace (ours or an ancestor's /proc) */
} self;
static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;

/* (re)compute self for @pid (self_lock held) */
static void self_compute(uint32_t pid)
{
	uint32_t nspid[32], ino, init_ino;
	uint64_t start = 0;
	char state;
	int nr = 0;

	memset(&self, 0, sizeof(self));
	self.pid = pid;
	if (read_stat(0, &start, &state))
		start = 0;
	if (read_status(0, NULL, nspid, 32, &nr) || nr < 1) {
		/* a kernel without NSpid (before 4.1): one namespace */
		nr = 1;
		nspid[0] = pid;
	}
	ino = read_pidns(0);
	/* no /proc/self (a /proc that does not show us): the old, namespace-blind identity */
	if (!ino)
		ino = PERFLIB_PIDNS_INIT_INO;
	self.own_tag = perflib_pidns_tag(ino);
	self.stamp = start ? perflib_owner_stamp(start, ino) : 0;
	self.proc_sees_ours = nspid[nr - 1] == pid;
	if (nr == 1 && self.proc_sees_ours) {
		/* /proc is our own namespace's */
		self.proc_known = true;
		self.proc_tag = self.own_tag;
		self.proc_sees_all = ino == PERFLIB_PIDNS_INIT_INO;
	} else if (nr > 1) {
		/* an ancestor's /proc (unshare --pid without --mount-proc): the initial one? */
		init_ino = read_pidns(1);
		if (init_ino == PERFLIB_PIDNS_INIT_INO) {
			self.proc_known = self.proc_sees_all = true;
			self.proc_tag = 0;
		}
	}
}

void perflib_self(uint32_t *ret_pid, uint64_t *ret_start)
{
	uint32_t pid = (uint32_t)getpid();

	pthread_mutex_lock(&self_lock);
	/* recomputed after fork(): the child is a different process */
	if (self.pid != pid)
		self_compute(pid);
	*ret_pid = self.pid;
	*ret_start = self.stamp;
	pthread_mutex_unlock(&self_lock);
}

/* ---- liveness ------------------------------------------------------------------------- */

enum { DEAD, ALIVE, UNSEEN };

/*
 * Is local @pid (in /proc's numbering) the process started at @start and running? A
 * zombie leader with live threads is running; a zombie with only itself left is not.
 */
static int local_alive(pid_t pid, uint64_t start)
{
	unsigned int threads;
	uint64_t now_start;
	char state;

	if (read_stat(pid, &now_start, &state) || now_start != start)
		return DEAD;
	if (state == 'X' || state == 'x')
		return DEAD;
	if (state == 'Z')
		return !read_status(pid, &threads, NULL, 0, NULL) && threads > 1 ? ALIVE : DEAD;
	return ALIVE;
}

/* is local @pid the owner (@nspid in namespace @tag, started at @start)? */
static bool local_is(pid_t pid, uint32_t nspid, uint64_t tag, uint64_t start)
{
	uint32_t ns[32], ino;
	uint64_t now_start;
	char state;
	int nr = 0;

	if (read_stat(pid, &now_start, &state) || now_start != start)
		return false;
	if (read_status(pid, NULL, ns, 32, &nr) || nr < 1 || ns[nr - 1] != nspid)
		return false;
	/* the namespace itself, where we may look (ptrace access): else start + pid decide */
	ino = read_pidns(pid);
	return !ino || perflib_pidns_tag(ino) == tag;
}

/* owners of other namespaces found so far: (nspid, stamp) -> local pid, under find_lock */
#define FOUND_MAX 32
static struct {
	uint64_t stamp;
	uint32_t pid; /* 0 = empty */
	pid_t local;  /* pid in /proc's numbering; 0 = known dead */
} found[FOUND_MAX];
static unsigned int found_next;
static pthread_mutex_t find_lock = PTHREAD_MUTEX_INITIALIZER;

/* scan /proc for the owner; its local pid, 0 when not there */
static pid_t scan(uint32_t nspid, uint64_t tag, uint64_t start)
{
	struct dirent *de;
	pid_t local = 0;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return 0;
	while (!local && (de = readdir(d))) {
		char *end;
		long v = strtol(de->d_name, &end, 10);

		if (*end || v <= 0 || de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		if (local_is((pid_t)v, nspid, tag, start))
			local = (pid_t)v;
	}
	closedir(d);
	return local;
}

/*
 * The local pid of owner (@pid, @stamp) of another namespace: -1 when it is known dead or
 * cannot be found, its pid otherwise. *ret_seen tells whether "not found" is a verdict.
 */
static pid_t find_local(uint32_t pid, uint64_t stamp, bool *ret_seen)
{
	uint64_t tag = stamp >> PERFLIB_START_BITS, start = stamp & PERFLIB_START_MASK;
	unsigned int i;
	pid_t local;
	bool seen;

	pthread_mutex_lock(&self_lock);
	if (self.pid != (uint32_t)getpid())
		self_compute((uint32_t)getpid());
	/* every process that could be the owner is in /proc */
	seen = self.proc_sees_all || (tag == self.own_tag && self.proc_sees_ours);
	pthread_mutex_unlock(&self_lock);
	*ret_seen = seen;

	pthread_mutex_lock(&find_lock);
	for (i = 0; i < FOUND_MAX; i++) {
		if (found[i].pid == pid && found[i].stamp == stamp)
			break;
	}
	if (i < FOUND_MAX) {
		local = found[i].local;
		/* remembered: a dead owner stays dead; a live one is proved again */
		if (!local || local_is(local, pid, tag, start)) {
			pthread_mutex_unlock(&find_lock);
			return local ? local : -1;
		}
	} else {
		i = found_next++ % FOUND_MAX;
	}
	local = scan(pid, tag, start);
	/* not found: remembered as dead only when that is a verdict */
	if (local || seen) {
		found[i].pid = pid;
		found[i].stamp = stamp;
		found[i].local = local;
	} else {
		found[i].pid = 0;
	}
	pthread_mutex_unlock(&find_lock);
	return local ? local : -1;
}

/* DEAD, ALIVE, or UNSEEN (another namespace this process cannot look into); *ret_local */
static int owner_state(uint32_t pid, uint64_t stamp, pid_t *ret_local)
{
	uint64_t tag = stamp >> PERFLIB_START_BITS, start = stamp & PERFLIB_START_MASK;
	bool direct, seen;
	pid_t local;
	int st;

	*ret_local = 0;
	if (pid == 0 || pid > 0x7fffffff)
		return DEAD;
	pthread_mutex_lock(&self_lock);
	if (self.pid != (uint32_t)getpid())
		self_compute((uint32_t)getpid());
	direct = self.proc_known && tag == self.proc_tag;
	/* this process itself: alive, without reading /proc (a provider's own slots) */
	if (self.stamp && pid == self.pid && stamp == self.stamp) {
		pthread_mutex_unlock(&self_lock);
		*ret_local = (pid_t)pid;
		return ALIVE;
	}
	pthread_mutex_unlock(&self_lock);
	if (direct) {
		st = local_alive((pid_t)pid, start);
		if (st == ALIVE)
			*ret_local = (pid_t)pid;
		return st;
	}
	local = find_local(pid, stamp, &seen);
	if (local < 0)
		return seen ? DEAD : UNSEEN;
	st = local_alive(local, start);
	if (st == ALIVE)
		*ret_local = local;
	return st;
}

int perflib_proc_alive(uint32_t pid, uint64_t start)
{
	pid_t local;

	/* a slot handed to the kernel (kcounters): alive until its loader retires it */
	if (start == PERFLIB_OWNER_KERNEL)
		return 1;
	/* a process of a namespace we cannot see is not ours to declare dead */
	return owner_state(pid, start, &local) != DEAD;
}

int perflib_proc_local_pid(uint32_t pid, uint64_t start, pid_t *ret_local)
{
	int st = owner_state(pid, start, ret_local);

	if (st == ALIVE)
		return 0;
	return st == DEAD ? -ESRCH : -EHOSTUNREACH;
}

int perflib_proc_pidfd(uint32_t pid, uint64_t start, int *ret_alive)
{
	pid_t local, again;
	int fd, st;

	st = owner_state(pid, start, &local);
	*ret_alive = st != DEAD;
	if (st != ALIVE)
		return -1;
	fd = (int)syscall(SYS_pidfd_open, local, 0);
	if (fd < 0)
		return -1;
	/* the pidfd is the owner's only if the owner still holds that pid after it was opened */
	if (owner_state(pid, start, &again) != ALIVE || again != local) {
		close(fd);
		*ret_alive = 0;
		return -1;
	}
	return fd;
}

uint64_t perflib_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

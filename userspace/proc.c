// SPDX-License-Identifier: MIT
/*
 * proc.c - process identity for liveness: (pid, start time). A pid alone can be reused;
 * the start time in clock ticks since boot (/proc/<pid>/stat field 22) cannot repeat for
 * the same pid, so a reused pid never revives or hides an instance.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

/* parse field 22 (starttime) and field 3 (state) of /proc/<pid>/stat */
static int read_stat(pid_t pid, uint64_t *ret_start, char *ret_state)
{
	char path[64], buf[1024], *p;
	int fd, i;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = 0;
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

int perflib_proc_alive(uint32_t pid, uint64_t start)
{
	uint64_t now_start;
	char state;

	/* a slot handed to the kernel (kcounters): alive until its loader retires it */
	if (start == PERFLIB_OWNER_KERNEL)
		return 1;
	if (pid == 0 || pid > 0x7fffffff)
		return 0;
	if (read_stat((pid_t)pid, &now_start, &state))
		return 0;
	/* a zombie has released everything it held: treat it as gone */
	if (state == 'Z' || state == 'X' || state == 'x')
		return 0;
	return now_start == start;
}

static uint32_t self_pid;
static uint64_t self_start;
static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;

void perflib_self(uint32_t *ret_pid, uint64_t *ret_start)
{
	uint32_t pid = (uint32_t)getpid();

	pthread_mutex_lock(&self_lock);
	/* recomputed after fork(): the child is a different process */
	if (self_pid != pid) {
		uint64_t start = 0;

		if (perflib_proc_start_time((pid_t)pid, &start))
			start = 0;
		self_start = start;
		self_pid = pid;
	}
	*ret_pid = self_pid;
	*ret_start = self_start;
	pthread_mutex_unlock(&self_lock);
}

uint64_t perflib_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

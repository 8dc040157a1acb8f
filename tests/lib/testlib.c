// SPDX-License-Identifier: MIT
/* testlib.c - private pin roots, BPF checks, processes with deadlines for the tests. */
#include <dirent.h>
#include <ftw.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "layout.h"
#include "testlib.h"

static char root[256];
static unsigned int run_id;

void tl_require_bpf(void)
{
	const char *req = getenv("PERFLIB_REQUIRE_BPF");
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "tl_probe", 4, 8, 1, NULL);
	if (fd >= 0) {
		close(fd);
		return;
	}
	if (req && !strcmp(req, "1")) {
		fprintf(stderr, "FAIL: BPF maps cannot be created (%s) and PERFLIB_REQUIRE_BPF=1\n",
			strerror(errno));
		exit(1);
	}
	fprintf(stderr, "SKIP: BPF maps cannot be created here (%s)\n", strerror(errno));
	exit(TL_SKIP);
}

const char *tl_root_create(void)
{
	const char *base = getenv("PERFLIB_TEST_BPFFS");
	struct timespec ts;

	if (!base)
		base = "/sys/fs/bpf";
	clock_gettime(CLOCK_REALTIME, &ts);
	run_id = (unsigned int)(getpid() ^ ts.tv_nsec);
	snprintf(root, sizeof(root), "%s/perflib-test-%d-%x", base, (int)getpid(), run_id);
	if (mkdir(root, 0755) && errno != EEXIST) {
		fprintf(stderr, "cannot create %s: %s\n", root, strerror(errno));
		return NULL;
	}
	chmod(root, 0755);
	setenv("PERFLIB_ROOT", root, 1);
	/*
	 * The kernel's exit reaper (userspace/reaper.c) would free a killed provider's slots
	 * before a test can count what the lazy reaping frees: off unless a test turns it on
	 * (test_reaper.c sets PERFLIB_KERNEL_REAPER=1).
	 */
	setenv("PERFLIB_KERNEL_REAPER", "0", 0);
	perflib_set_pin_root(root);
	return root;
}

static void remove_tree(const char *path)
{
	char child[512];
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (lstat(path, &st))
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	d = opendir(path);
	if (d) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(child, sizeof(child), "%s/%s", path, de->d_name);
			remove_tree(child);
		}
		closedir(d);
	}
	rmdir(path);
}

void tl_root_remove(void)
{
	if (root[0])
		remove_tree(root);
}

int tl_group_setup(void **state)
{
	(void)state;
	return tl_root_create() ? 0 : -1;
}

int tl_group_teardown(void **state)
{
	(void)state;
	tl_root_remove();
	return 0;
}

GUID tl_guid(unsigned int n)
{
	GUID g = {run_id, (uint16_t)n, (uint16_t)(n >> 16), {0x7e, 0x57, 1, 2, 3, 4, 5, 6}};

	return g;
}

pid_t tl_fork(int (*fn)(void *arg), void *arg)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid == 0)
		_exit(fn(arg));
	return pid;
}

int tl_wait(pid_t pid, int timeout_ms)
{
	int status, waited = 0;
	pid_t r;

	for (;;) {
		r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (r < 0)
			return -1;
		if (waited >= timeout_ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			return -1;
		}
		usleep(2000);
		waited += 2;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

int tl_pipe(int fds[2])
{
	return pipe(fds);
}

int tl_signal(int fd)
{
	char c = 1;

	return write(fd, &c, 1) == 1 ? 0 : -1;
}

int tl_await(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	char c;

	if (poll(&p, 1, timeout_ms) != 1)
		return -1;
	return read(fd, &c, 1) == 1 ? 0 : -1;
}

int tl_run(const char *cmd, char **ret_out)
{
	size_t len = 0, cap = 4096;
	char *out = malloc(cap);
	FILE *f;
	size_t n;
	int st;

	if (!out)
		return -1;
	f = popen(cmd, "r");
	if (!f) {
		free(out);
		return -1;
	}
	while ((n = fread(out + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len < 2) {
			char *tmp = realloc(out, cap * 2);

			if (!tmp)
				break;
			out = tmp;
			cap *= 2;
		}
	}
	out[len] = 0;
	st = pclose(f);
	if (ret_out)
		*ret_out = out;
	else
		free(out);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* a redirected stream of tl_capture: the file that takes it and the saved descriptor */
struct capture {
	FILE *file;
	int saved;
};

static struct capture cap_out, cap_err;

static void capture_fd(int fd, struct capture *c)
{
	c->file = tmpfile();
	c->saved = dup(fd);
	if (!c->file || c->saved < 0 || dup2(fileno(c->file), fd) < 0) {
		fprintf(stderr, "FAIL: tl_capture: %s\n", strerror(errno));
		exit(1);
	}
}

/* @fd back from @c; what went to it into @buf */
static void captured_fd(int fd, struct capture *c, char *buf, size_t size)
{
	size_t n;

	dup2(c->saved, fd);
	close(c->saved);
	rewind(c->file);
	n = size ? fread(buf, 1, size - 1, c->file) : 0;
	if (size)
		buf[n] = '\0';
	fclose(c->file);
}

void tl_capture(void)
{
	fflush(stdout);
	fflush(stderr);
	capture_fd(1, &cap_out);
	capture_fd(2, &cap_err);
}

void tl_captured(char *out, size_t out_size, char *err, size_t err_size)
{
	fflush(stdout);
	fflush(stderr);
	captured_fd(1, &cap_out, out, out ? out_size : 0);
	captured_fd(2, &cap_err, err, err ? err_size : 0);
}

static mode_t chmod_mode;
static uid_t chmod_uid;
static gid_t chmod_gid;

static int chmod_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_D || type == FTW_DP)
		return chmod(path, 0755) ? -1 : 0;
	return chmod(path, chmod_mode) || chown(path, chmod_uid, chmod_gid) ? -1 : 0;
}

int tl_pins_chmod(const char *dir, mode_t mode, uid_t uid, gid_t gid)
{
	chmod_mode = mode;
	chmod_uid = uid;
	chmod_gid = gid;
	return nftw(dir, chmod_one, 16, FTW_PHYS);
}

int tl_poke_slot(const GUID *set, uint32_t i, const void *slot)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], g[40];
	uint32_t word = i / 64;
	uint64_t bits;
	int fd, err = -1;

	if (perflib_get_pin_root(dir, sizeof(dir)) < 0)
		return -1;

	/* the slot, through the syscall interface (as root: whatever the provider's mapping) */
	snprintf(path, sizeof(path), "%s/%s/s0/data", dir, perflib_guid_to_string(set, g));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	if (bpf_map_update_elem(fd, &i, slot, BPF_ANY))
		goto out;
	close(fd);
	/* as a writer does: its live bit set, so readers visit it */
	snprintf(path, sizeof(path), "%s/%s/s0/live", dir, g);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	if (bpf_map_lookup_elem(fd, &word, &bits))
		goto out;
	bits |= 1ULL << (i % 64);
	err = bpf_map_update_elem(fd, &word, &bits, BPF_ANY) ? -1 : 0;
out:
	close(fd);
	return err;
}

int tl_published_segs(const GUID *set, uint32_t cls)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], g[40];
	struct perflib_ctl ctl;
	struct bpf_map_info mi;
	__u32 len = sizeof(mi), key, i;
	int fd, n = -1;

	if (perflib_get_pin_root(dir, sizeof(dir)) < 0 || cls >= PERFLIB_MAX_CLASSES)
		return -1;
	/* the control word: the last words of class 0's s0/live (layout.h) */
	snprintf(path, sizeof(path), "%s/%s/s0/live", dir, perflib_guid_to_string(set, g));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	memset(&mi, 0, sizeof(mi));
	if (!bpf_obj_get_info_by_fd(fd, &mi, &len) && mi.value_size == 8 &&
	    mi.max_entries > PERFLIB_CTL_WORDS) {
		for (i = 0; i < PERFLIB_CTL_WORDS; i++) {
			key = mi.max_entries - PERFLIB_CTL_WORDS + i;
			if (bpf_map_lookup_elem(fd, &key, (__u64 *)&ctl + i))
				break;
		}
		if (i == PERFLIB_CTL_WORDS && ctl.magic == PERFLIB_CTL_MAGIC)
			n = (int)ctl.nr_segs[cls];
	}
	close(fd);
	return n;
}

uint32_t tl_seg0(const GUID *set, uint32_t cls)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], g[40];
	struct bpf_map_info mi;
	__u32 len = sizeof(mi), key = 0, seg0 = 0;
	struct perflib_info *info;
	int fd;

	if (perflib_get_pin_root(dir, sizeof(dir)) < 0 || cls >= PERFLIB_MAX_CLASSES)
		return 0;
	snprintf(path, sizeof(path), "%s/%s/info", dir, perflib_guid_to_string(set, g));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	memset(&mi, 0, sizeof(mi));
	if (!bpf_obj_get_info_by_fd(fd, &mi, &len) && mi.value_size >= sizeof(*info)) {
		info = calloc(1, mi.value_size);
		if (info && !bpf_map_lookup_elem(fd, &key, info) && cls < info->nr_classes)
			seg0 = info->classes[cls].seg0_slots;
		free(info);
	}
	close(fd);
	return seg0;
}

/* the kernel's memory of BPF map or program @fd (fdinfo "memlock:"); *@is_prog: a program */
static unsigned long long memlock(int fd, bool *is_prog)
{
	char path[64], line[256];
	unsigned long long v = 0;
	FILE *f;

	*is_prog = false;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "memlock: %llu", &v);
		if (!strncmp(line, "prog_type:", 10))
			*is_prog = true;
	}
	fclose(f);
	return v;
}

void tl_dir_memlock(const char *dir, unsigned long long *maps, unsigned long long *progs)
{
	char path[PATH_MAX + 300];
	unsigned long long v;
	struct dirent *de;
	DIR *d = opendir(dir);
	bool is_prog;
	int fd;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (de->d_type == DT_DIR) {
			tl_dir_memlock(path, maps, progs);
			continue;
		}
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		v = memlock(fd, &is_prog);
		*(is_prog ? progs : maps) += v;
		close(fd);
	}
	closedir(d);
}

// SPDX-License-Identifier: MIT
/*
 * bench_sysd.c - what the kernel providers cost:
 *
 *  1. an instance created and deleted from BPF (tests/bench/bench_instances.bpf.c: a syscall program
 *     looping perflib_instance_create_ascii + perflib_instance_delete, timed in the kernel)
 *     next to PerfCreateInstance + PerfDeleteInstance from user space, same counter set,
 *     same name, best of ROUNDS;
 *  2. the system-wide cost of perflib-sysd: a syscall loop (getppid) and a fork/exit loop
 *     timed without and with perflib-sysd running, interleaved in one run (ROUNDS rounds of
 *     off, on), min and median of each;
 *  3. the cost per event of each perflib-sysd BPF program: run_time_ns / run_cnt of its
 *     bpf_prog_info over a workload (syscalls, forks, execs, sleeps), with BPF run-time
 *     statistics enabled through BPF_ENABLE_STATS (the same static key as the
 *     kernel.bpf_stats_enabled sysctl, dropped when the fd closes, so nothing is left on
 *     and the sysctl is never written; it is printed before and after).
 *
 * perflib-sysd is run as a child (TOOLS, else ../tools next to this binary) under a private
 * PERFLIB_ROOT that is removed at the end. Prints SKIP and exits 0 when BPF or the tool is
 * not available here. Other load on the machine adds noise to part 2 (hence min/median).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bench_util.h"
#include "internal.h"
#include "perflib_bpf_loader.h"
#include "bench_instances.skel.h"

#define ROUNDS 5
#define PAIRS 20000	 /* create + delete pairs per measurement */
#define SYSCALLS 1000000 /* getppid calls per measurement */
#define FORKS 1000	 /* fork + _exit + waitpid per measurement */
#define EXECS 100	 /* fork + exec of /bin/true, for the exec program's figure */
#define MAX_PROGS 32
#define MAX_MAPS 512

/* ---- 1. create + delete pairs ------------------------------------------------------------ */

static int bench_pairs(void)
{
	GUID pg = {0xbe9c0101, 1, 2, {3, 4, 5, 6, 7, 8, 9, 10}};
	GUID set = {0xbe9c0102, 1, 2, {3, 4, 5, 6, 7, 8, 9, 10}};
	struct {
		PERF_COUNTERSET_INFO set;
		PERF_COUNTER_INFO c[2];
	} t = {.set = {.CounterSetGuid = set,
		       .ProviderGuid = pg,
		       .NumCounters = 2,
		       .InstanceType = PERF_COUNTERSET_MULTI_INSTANCES}};
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	struct perflib_bpf_counterset cs = {
		.info_fd = -1, .data_fd = -1, .index_fd = -1, .live_fd = -1};
	struct bench_instances_bpf *skel = NULL;
	double bpf_best = 1e30, user_best = 1e30, d;
	struct {
		__u32 n, failed;
		__u64 ns;
	} ctx;
	PPERF_COUNTERSET_INSTANCE inst;
	HANDLE h = NULL;
	uint64_t t0;
	char g[37];
	int r, i, rc = 1;

	t.c[0] = (PERF_COUNTER_INFO){.CounterId = 1, .Type = PERF_COUNTER_RAWCOUNT, .Size = 4};
	t.c[1] = (PERF_COUNTER_INFO){.CounterId = 2, .Type = PERF_COUNTER_BULK_COUNT, .Size = 8};
	if (PerfStartProvider(&pg, NULL, &h) || PerfSetCounterSetInfo(h, &t.set, sizeof(t))) {
		fprintf(stderr, "bench_sysd: cannot register a counter set (error %u)\n",
			GetLastError());
		goto out;
	}
	if (perflib_bpf_counterset_open(NULL, perflib_guid_to_string(&set, g), &cs))
		goto out;
	skel = bench_instances_bpf__open();
	if (!skel)
		goto out;
	skel->rodata->bi_geo = cs.geo;
	if (perflib_bpf_counterset_guid(&cs, (__u8 *)skel->rodata->bi_guid) ||
	    perflib_bpf_counterset_reuse(&cs, skel->maps.slots, skel->maps.idx) ||
	    perflib_bpf_counterset_reuse_live(&cs, skel->maps.live) ||
	    bench_instances_bpf__load(skel)) {
		printf("SKIP: bench_sysd: the create/delete program cannot be loaded here\n");
		rc = 0;
		goto out;
	}
	for (r = 0; r < ROUNDS; r++) {
		memset(&ctx, 0, sizeof(ctx));
		ctx.n = PAIRS;
		opts.ctx_in = &ctx;
		opts.ctx_size_in = sizeof(ctx);
		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.bi_pairs), &opts) ||
		    ctx.failed) {
			fprintf(stderr, "bench_sysd: the BPF create/delete loop failed\n");
			goto out;
		}
		d = (double)ctx.ns / PAIRS;
		bpf_best = d < bpf_best ? d : bpf_best;

		t0 = now_ns();
		for (i = 0; i < PAIRS; i++) {
			inst = PerfCreateInstance(h, &set, u"bench pair", (ULONG)i);
			if (!inst || PerfDeleteInstance(h, inst)) {
				fprintf(stderr, "bench_sysd: PerfCreateInstance/Delete failed\n");
				goto out;
			}
		}
		d = (double)(now_ns() - t0) / PAIRS;
		user_best = d < user_best ? d : user_best;
	}
	printf("instance create + delete pair (name \"bench pair\", %d pairs, best of %d)\n", PAIRS,
	       ROUNDS);
	printf("  %-60s %10.0f ns\n", "BPF perflib_instance_create_ascii + _delete (syscall prog)",
	       bpf_best);
	printf("  %-60s %10.0f ns\n", "user space PerfCreateInstance + PerfDeleteInstance",
	       user_best);
	printf("  %-60s %10.2f\n\n", "ratio BPF / user space", bpf_best / user_best);
	rc = 0;
out:
	bench_instances_bpf__destroy(skel);
	perflib_bpf_counterset_close(&cs);
	if (h)
		PerfStopProvider(h);
	perflib_unregister_counterset(&set, true);
	return rc;
}

/* ---- perflib-sysd as a child ------------------------------------------------------------- */

struct sysd {
	pid_t pid;
	int out; /* its stdout; kept open until it exits (it prints when it stops) */
};

/* start `perflib-sysd run`; 0 when it said it is running */
static int sysd_start(const char *tool, struct sysd *s)
{
	char buf[4096];
	size_t len = 0;
	struct pollfd p;
	uint64_t deadline = now_ns() + 30000000000ull;
	int fds[2];
	ssize_t n;

	if (pipe2(fds, O_CLOEXEC))
		return -1;
	s->pid = fork();
	if (s->pid < 0)
		return -1;
	if (!s->pid) {
		dup2(fds[1], 1);
		execl(tool, "perflib-sysd", "run", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	s->out = fds[0];
	p = (struct pollfd){.fd = s->out, .events = POLLIN};
	while (now_ns() < deadline && len < sizeof(buf) - 1) {
		if (poll(&p, 1, 1000) <= 0)
			continue;
		n = read(s->out, buf + len, sizeof(buf) - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		buf[len] = 0;
		if (strstr(buf, "running"))
			return 0;
	}
	return -1;
}

/* SIGTERM and wait; 0 when it stopped cleanly */
static int sysd_stop(struct sysd *s)
{
	int st = 0;

	kill(s->pid, SIGTERM);
	waitpid(s->pid, &st, 0);
	close(s->out);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* ---- workloads --------------------------------------------------------------------------- */

static double syscall_loop(void)
{
	uint64_t t0 = now_ns();
	int i;

	for (i = 0; i < SYSCALLS; i++)
		syscall(SYS_getppid);
	return (double)(now_ns() - t0) / SYSCALLS;
}

/* ns per fork + _exit + waitpid, or < 0 */
static double fork_loop(int n, int exec)
{
	uint64_t t0 = now_ns();
	pid_t pid;
	int i, st;

	for (i = 0; i < n; i++) {
		pid = fork();
		if (pid < 0)
			return -1;
		if (!pid) {
			if (exec)
				execl("/bin/true", "true", (char *)NULL);
			_exit(0);
		}
		waitpid(pid, &st, 0);
	}
	return (double)(now_ns() - t0) / n;
}

/* ---- 2. system-wide cost ----------------------------------------------------------------- */

static int bench_system(const char *tool)
{
	double sc[2][ROUNDS], fk[2][ROUNDS], m[2][2];
	struct sysd s;
	int r, on;

	for (r = 0; r < ROUNDS; r++) {
		for (on = 0; on < 2; on++) {
			if (on && sysd_start(tool, &s)) {
				fprintf(stderr, "bench_sysd: perflib-sysd did not start\n");
				return 1;
			}
			sc[on][r] = syscall_loop();
			fk[on][r] = fork_loop(FORKS, 0);
			if (on && sysd_stop(&s)) {
				fprintf(stderr, "bench_sysd: perflib-sysd did not stop cleanly\n");
				return 1;
			}
			if (fk[on][r] < 0)
				return 1;
		}
	}
	for (on = 0; on < 2; on++) {
		m[on][0] = min_of(sc[on], ROUNDS);
		m[on][1] = min_of(fk[on], ROUNDS);
	}
	printf("system-wide cost of perflib-sysd (%d rounds of off, on; min / median)\n", ROUNDS);
	printf("  %-36s %12s %12s %12s %12s\n", "", "off min", "off median", "on min", "on median");
	printf("  %-36s %12.1f %12.1f %12.1f %12.1f ns\n", "getppid() syscall", m[0][0],
	       median(sc[0], ROUNDS), m[1][0], median(sc[1], ROUNDS));
	printf("  %-36s %12.0f %12.0f %12.0f %12.0f ns\n", "fork + _exit + waitpid", m[0][1],
	       median(fk[0], ROUNDS), m[1][1], median(fk[1], ROUNDS));
	printf("  %-36s %12.1f ns per syscall, %.0f ns per fork/exit (min on - min off)\n\n",
	       "added", m[1][0] - m[0][0], m[1][1] - m[0][1]);
	return 0;
}

/* ---- 3. per-event cost of each program --------------------------------------------------- */

/* the ids of the BPF programs (@what "prog_id") or maps ("map_id") @pid holds (fdinfo of its
 * fds), unique */
static int obj_ids(pid_t pid, const char *what, __u32 *ids, int max)
{
	char path[64], line[256];
	struct dirent *de;
	int n = 0, i;
	__u32 id;
	DIR *d;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", (int)pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%.20s", (int)pid, de->d_name);
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f)) {
			if (strncmp(line, what, strlen(what)) ||
			    sscanf(line + strlen(what), ": %u", &id) != 1)
				continue;
			for (i = 0; i < n && ids[i] != id; i++)
				;
			if (i == n && n < max)
				ids[n++] = id;
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

/* the publishing timer's runs and ns so far (perflib-sysd's sd_stats map), in @ret */
static void refresh_stats(pid_t pid, __u64 (*ret)[5])
{
	struct bpf_map_info info;
	__u32 ids[MAX_MAPS], len, zero = 0;
	int n = obj_ids(pid, "map_id", ids, MAX_MAPS), i, fd;

	for (i = 0; i < n; i++) {
		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		len = sizeof(info);
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, "sd_stats") &&
		    info.value_size == sizeof(*ret))
			bpf_map_lookup_elem(fd, &zero, *ret);
		close(fd);
	}
}

static int prog_info(__u32 id, struct bpf_prog_info *info)
{
	__u32 len = sizeof(*info);
	int fd = bpf_prog_get_fd_by_id(id), err;

	if (fd < 0)
		return -1;
	memset(info, 0, sizeof(*info));
	err = bpf_obj_get_info_by_fd(fd, info, &len);
	close(fd);
	return err;
}

static long sysctl_stats(void)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "re");
	long v = -1;

	if (f && fscanf(f, "%ld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

static int bench_events(const char *tool)
{
	struct bpf_prog_info before[MAX_PROGS], after;
	__u64 r0[5] = {0}, r1[5] = {0};
	__u32 ids[MAX_PROGS];
	long sysctl0 = sysctl_stats();
	struct sysd s;
	int n, i, fd, rc = 1;

	if (sysd_start(tool, &s)) {
		fprintf(stderr, "bench_sysd: perflib-sysd did not start\n");
		return 1;
	}
	fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (fd < 0) {
		printf("SKIP: per-event cost: BPF_ENABLE_STATS: %s\n\n", strerror(errno));
		rc = 0;
		goto out;
	}
	n = obj_ids(s.pid, "prog_id", ids, MAX_PROGS);
	refresh_stats(s.pid, &r0);
	for (i = 0; i < n; i++)
		if (prog_info(ids[i], &before[i]))
			goto out_stats;
	syscall_loop();
	if (fork_loop(FORKS, 0) < 0 || fork_loop(EXECS, 1) < 0)
		goto out_stats;
	for (i = 0; i < 200; i++)
		usleep(1000); /* context switches of this process too */
	printf("per event, each perflib-sysd program (run_time_ns / run_cnt over a workload of "
	       "%d getppid, %d fork/exit, %d exec, 200 sleeps + the machine's own activity;\n"
	       "  statistics on through BPF_ENABLE_STATS, which leaves the sysctl as it is)\n",
	       SYSCALLS, FORKS, EXECS);
	printf("  %-20s %-12s %12s %12s\n", "program", "type", "runs", "ns/run");
	for (i = 0; i < n; i++) {
		if (prog_info(ids[i], &after))
			goto out_stats;
		if (strncmp(after.name, "sd_", 3) ||
		    (after.type == BPF_PROG_TYPE_TRACING && after.run_cnt == before[i].run_cnt))
			continue; /* libbpf's own probes; the task iterator (ran at start) */
		printf("  %-20s %-12s %12llu %12.1f\n", after.name,
		       libbpf_bpf_prog_type_str(after.type),
		       (unsigned long long)(after.run_cnt - before[i].run_cnt),
		       after.run_cnt > before[i].run_cnt
			       ? (double)(after.run_time_ns - before[i].run_time_ns) /
					 (double)(after.run_cnt - before[i].run_cnt)
			       : 0.0);
	}
	refresh_stats(s.pid, &r1);
	if (r1[0] > r0[0])
		printf("  %-20s %-12s %12llu %12.1f\n", "sd_refresh (timer)", "callback",
		       (unsigned long long)(r1[0] - r0[0]),
		       (double)(r1[1] - r0[1]) / (double)(r1[0] - r0[0]));
	if (r1[2] > r0[2])
		printf("  %-20s %-12s %12llu %12.1f (%.1f ns per process, %.0f processes)\n",
		       "  Process stamps", "(of which)", (unsigned long long)(r1[2] - r0[2]),
		       (double)(r1[3] - r0[3]) / (double)(r1[2] - r0[2]),
		       r1[4] > r0[4] ? (double)(r1[3] - r0[3]) / (double)(r1[4] - r0[4]) : 0.0,
		       (double)(r1[4] - r0[4]) / (double)(r1[2] - r0[2]));
	rc = 0;
out_stats:
	close(fd);
	printf("  (kernel.bpf_stats_enabled before %ld, after %ld)\n\n", sysctl0, sysctl_stats());
out:
	if (sysd_stop(&s)) {
		fprintf(stderr, "bench_sysd: perflib-sysd did not stop cleanly\n");
		rc = 1;
	}
	return rc;
}

int main(int argc, char **argv)
{
	char root[128], tool[PATH_MAX], exe[PATH_MAX];
	const char *tools = getenv("TOOLS");
	ssize_t n;
	int fd, rc;

	(void)argc;
	(void)argv;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "bench_probe", 4, 8, 1, NULL);
	if (fd < 0) {
		printf("SKIP: bench_sysd: BPF maps cannot be created here\n");
		return 0;
	}
	close(fd);
	if (tools) {
		snprintf(tool, sizeof(tool), "%s/perflib-sysd", tools);
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		if (n <= 0)
			return 1;
		exe[n] = 0;
		snprintf(tool, sizeof(tool), "%s/../tools/perflib-sysd", dirname(exe));
	}
	snprintf(root, sizeof(root), "/sys/fs/bpf/perflib-bench-sysd-%d", (int)getpid());
	if (perflib_set_pin_root(root) || setenv("PERFLIB_ROOT", root, 1))
		return 1;
	setenv("PERFLIB_KERNEL_REAPER", "0", 1);
	rc = bench_pairs();
	if (!rc && access(tool, X_OK)) {
		printf("SKIP: bench_sysd: no %s\n", tool);
	} else if (!rc) {
		rc = bench_system(tool);
		if (!rc)
			rc = bench_events(tool);
	}
	rmdir(root);
	return rc;
}

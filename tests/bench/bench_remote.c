// SPDX-License-Identifier: MIT
/*
 * bench_remote.c - PerfQueryCounterData of 10,000 instances x 8 counters on this machine
 * and on a perflib-exporter over loopback (docs/REMOTE.md), in one run: the same query
 * read locally and remotely, milliseconds per call (median), the ratio (goal: within 3x of
 * the local call once connected), and the cost of a new connection (TCP and, when openssl
 * and the exporter's --web.config.file are there, the TLS handshake) reported separately:
 * the first call of a fresh process minus its second call on the kept connection.
 *
 * The exporter is this build's (../tools/perflib-exporter beside this program's directory),
 * serving this process's private pin root on 127.0.0.2. Needs BPF (root): prints "skip"
 * and exits 0 without it, so that `make bench` goes on.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "perflib.h"
#include "perflib-linux.h"

#include "bench_util.h"

#define NR_INSTANCES 10000
#define NR_COUNTERS 8
#define NR_CALLS 20
#define NR_HANDSHAKES 5
#define NO_ID 0xFFFFFFFF

static char tmp[64], root[64], machine[64];
static pid_t exporter;

static int skip(const char *why)
{
	printf("bench_remote: skip: %s\n", why);
	return 0;
}

/* 10,000 instances of 8 large raw counters; the provider handle or NULL */
static HANDLE provide(const GUID *set, const GUID *pg)
{
	struct perflib_counter_reg regs[NR_COUNTERS];
	struct perflib_counterset_reg reg = {
		.provider_guid = *pg,
		.counterset_guid = *set,
		.instance_type = PERF_COUNTERSET_MULTI_INSTANCES,
		.detail_level = PERF_DETAIL_NOVICE,
		.provider_name = "bench_remote",
		.name = "Bench Remote",
		.help = "10,000 instances of 8 counters, read over the network",
		.nr_counters = NR_COUNTERS,
		.counters = regs,
	};
	struct {
		PERF_COUNTERSET_INFO set;
		PERF_COUNTER_INFO c[NR_COUNTERS];
	} tmpl = {.set = {.CounterSetGuid = *set,
			  .ProviderGuid = *pg,
			  .NumCounters = NR_COUNTERS,
			  .InstanceType = PERF_COUNTERSET_MULTI_INSTANCES}};
	static const char *names[NR_COUNTERS] = {"c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8"};
	HANDLE h;
	WCHAR name[16];
	int i, c;

	for (c = 0; c < NR_COUNTERS; c++) {
		regs[c] = (struct perflib_counter_reg){(ULONG)c + 1,
						       PERF_COUNTER_LARGE_RAWCOUNT,
						       0,
						       PERF_DETAIL_NOVICE,
						       0,
						       NO_ID,
						       NO_ID,
						       NO_ID,
						       NO_ID,
						       PERF_AGGREGATE_TOTAL,
						       names[c],
						       names[c]};
		tmpl.c[c] = (PERF_COUNTER_INFO){
			.CounterId = (ULONG)c + 1, .Type = PERF_COUNTER_LARGE_RAWCOUNT, .Size = 8};
	}
	if (perflib_register_counterset(&reg, NULL) || PerfStartProvider((GUID *)pg, NULL, &h))
		return NULL;
	if (PerfSetCounterSetInfo(h, &tmpl.set, sizeof(tmpl))) {
		PerfStopProvider(h);
		return NULL;
	}
	for (i = 0; i < NR_INSTANCES; i++) {
		PPERF_COUNTERSET_INSTANCE inst;
		char ascii[16];
		int k;

		snprintf(ascii, sizeof(ascii), "remote-%05d", i);
		for (k = 0; ascii[k]; k++)
			name[k] = (WCHAR)ascii[k];
		name[k] = 0;
		inst = PerfCreateInstance(h, set, name, (ULONG)i);
		for (c = 0; inst && c < NR_COUNTERS; c++)
			PerfSetULongLongCounterValue(h, inst, (ULONG)c + 1, (ULONGLONG)i * (c + 7));
		if (!inst) {
			PerfStopProvider(h);
			return NULL;
		}
	}
	return h;
}

/* certificates for 127.0.0.2 and the exporter's web configuration; false without openssl */
static bool make_tls(void)
{
	char cmd[2048];

	snprintf(
		cmd, sizeof(cmd),
		"(cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
		"-days 1 -keyout ca.key -out ca.crt -subj '/CN=bench ca' && "
		"openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key "
		"-out srv.csr -subj '/CN=127.0.0.2' && echo subjectAltName=IP:127.0.0.2 >srv.ext "
		"&& "
		"openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 "
		"-extfile srv.ext -out srv.crt && "
		"printf 'tls_server_config:\\n  cert_file: %s/srv.crt\\n  key_file: %s/srv.key\\n' "
		">web.yml",
		tmp, tmp, tmp);
	/* (openssl's chatter is not the bench's) */
	strncat(cmd, ") >/dev/null 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	return !system(cmd);
}

/* the exporter on 127.0.0.2 (port in @machine); false when it did not start */
static bool start_exporter(const char *self, bool tls)
{
	char exe[PATH_MAX], err[96], web[96], line[512];
	char *slash;
	int i, port = 0;

	snprintf(exe, sizeof(exe), "%s", self);
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	snprintf(slash, sizeof(exe) - (size_t)(slash - exe), "/../tools/perflib-exporter");
	snprintf(err, sizeof(err), "%s/exporter.err", tmp);
	snprintf(web, sizeof(web), "%s/web.yml", tmp);
	exporter = fork();
	if (exporter == 0) {
		if (!freopen(err, "w", stderr))
			_exit(126);
		if (tls)
			execl(exe, exe, "--listen", "127.0.0.2:0", "--web.config.file", web,
			      (char *)NULL);
		else
			execl(exe, exe, "--listen", "127.0.0.2:0", (char *)NULL);
		_exit(127);
	}
	for (i = 0; exporter > 0 && i < 200 && !port; i++) {
		FILE *f = fopen(err, "r");

		usleep(50000);
		while (f && fgets(line, sizeof(line), f)) {
			char *at = strstr(line, "listening on http");

			at = at ? strstr(at + 17, "127.0.0.2:") : NULL;
			if (at)
				port = atoi(at + 10);
		}
		if (f)
			fclose(f);
	}
	snprintf(machine, sizeof(machine), "127.0.0.2:%d", port);
	return port > 0;
}

static const WCHAR *wide(const char *s)
{
	static WCHAR w[64];

	perflib_utf8_to_utf16(s, w, 64);
	return w;
}

/* NR_CALLS reads of the whole set on @m (NULL: here); median ms, bytes in *@ret_bytes */
static double time_query(const WCHAR *m, const GUID *set, DWORD *ret_bytes)
{
	struct {
		PERF_COUNTER_IDENTIFIER id;
		WCHAR name[4];
	} spec = {.id = {.CounterSetGuid = *set,
			 .Size = sizeof(spec),
			 .CounterId = PERF_WILDCARD_COUNTER,
			 .InstanceId = NO_ID},
		  .name = {'*', 0}};
	double ms[NR_CALLS];
	DWORD need = 0, got = 0;
	void *buf = NULL;
	HANDLE q;
	int i;

	ULONG st = PerfOpenQueryHandle(m, &q);

	if (st) {
		fprintf(stderr, "bench_remote: PerfOpenQueryHandle: %u\n", st);
		return -1;
	}
	st = PerfAddCounters(q, &spec.id, sizeof(spec));
	if (!st && spec.id.Status)
		st = spec.id.Status;
	if (!st && PerfQueryCounterData(q, NULL, 0, &need) != ERROR_NOT_ENOUGH_MEMORY)
		st = ERROR_INVALID_DATA;
	if (st) {
		fprintf(stderr, "bench_remote: the query: %u\n", st);
		goto fail;
	}
	need += need / 4;
	buf = malloc(need);
	for (i = 0; buf && i < NR_CALLS; i++) {
		uint64_t t0 = now_ns();

		if (PerfQueryCounterData(q, buf, need, &got))
			goto fail;
		ms[i] = (double)(now_ns() - t0) / 1e6;
	}
	free(buf);
	PerfCloseQueryHandle(q);
	*ret_bytes = got;
	return median(ms, NR_CALLS);
fail:
	free(buf);
	PerfCloseQueryHandle(q);
	return -1;
}

/*
 * a new connection's cost: in a fresh process (no connection, module not loaded), the first
 * call minus the second; median over NR_HANDSHAKES processes, ms
 */
static double time_connect(void)
{
	double d[NR_HANDSHAKES];
	int i, fds[2];

	for (i = 0; i < NR_HANDSHAKES; i++) {
		double r = -1;
		pid_t pid;

		if (pipe(fds))
			return -1;
		pid = fork();
		if (pid == 0) {
			DWORD n;
			uint64_t t0, t1, t2;

			/* the module loaded first: not part of a connection's cost */
			PerfEnumerateCounterSet(wide("bench-remote.invalid:1"), NULL, 0, &n);
			t0 = now_ns();
			PerfEnumerateCounterSet(wide(machine), NULL, 0, &n);
			t1 = now_ns();
			PerfEnumerateCounterSet(wide(machine), NULL, 0, &n);
			t2 = now_ns();
			r = ((double)(t1 - t0) - (double)(t2 - t1)) / 1e6;
			if (write(fds[1], &r, sizeof(r)) != sizeof(r))
				_exit(1);
			_exit(0);
		}
		close(fds[1]);
		if (pid < 0 || read(fds[0], &r, sizeof(r)) != sizeof(r))
			r = -1;
		close(fds[0]);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		d[i] = r;
	}
	return median(d, NR_HANDSHAKES);
}

int main(int argc, char **argv)
{
	double local, remote, connect;
	DWORD lbytes = 0, rbytes = 0;
	bool tls;
	GUID set, pg;
	HANDLE h = NULL;
	char ca[96];
	int rc = 1;

	(void)argc;
	if (geteuid() != 0)
		return skip("needs root for BPF maps");
	snprintf(root, sizeof(root), "/sys/fs/bpf/perflib-bench-remote-%d", (int)getpid());
	snprintf(tmp, sizeof(tmp), "/tmp/perflib-bench-remote-%d", (int)getpid());
	if (mkdir(root, 0755) || mkdir(tmp, 0700))
		return skip("cannot create a pin root under /sys/fs/bpf or a directory in /tmp");
	setenv("PERFLIB_ROOT", root, 1);
	perflib_set_pin_root(root);
	perflib_set_capacity(NR_INSTANCES, 16);
	perflib_guid_from_string("{b3c4e7a0-0001-4e5f-8a6b-0000000000c1}", &set);
	perflib_guid_from_string("{b3c4e7a0-0000-4e5f-8a6b-0000000000c0}", &pg);
	/* no user settings: this run's own */
	setenv("PERFLIB_REMOTE_CONFIG", "", 1);
	h = provide(&set, &pg);
	if (!h) {
		fprintf(stderr, "bench_remote: the provider did not start\n");
		goto out;
	}
	tls = make_tls() && start_exporter(argv[0], true);
	if (!tls) {
		if (exporter > 0) {
			kill(exporter, SIGTERM);
			waitpid(exporter, NULL, 0);
		}
		if (!start_exporter(argv[0], false)) {
			fprintf(stderr, "bench_remote: perflib-exporter did not start\n");
			goto out;
		}
	} else {
		snprintf(ca, sizeof(ca), "%s/ca.crt", tmp);
		setenv("PERFLIB_REMOTE_CA", ca, 1);
	}
	setenv("PERFLIB_REMOTE_TIMEOUT", "30", 1);
	{
		/* this build's module: ../libperflib-remote.so.1 from this program's directory */
		char mod[PATH_MAX], *slash;

		snprintf(mod, sizeof(mod), "%s", argv[0]);
		slash = strrchr(mod, '/');
		if (slash) {
			snprintf(slash, sizeof(mod) - (size_t)(slash - mod),
				 "/../libperflib-remote.so.1");
			setenv("PERFLIB_REMOTE_MODULE", mod, 1);
		}
	}
	connect = time_connect();
	local = time_query(NULL, &set, &lbytes);
	remote = time_query(wide(machine), &set, &rbytes);
	if (local <= 0 || remote <= 0) {
		fprintf(stderr, "bench_remote: a query failed (local %.2f, remote %.2f)\n", local,
			remote);
		goto out;
	}
	printf("bench_remote: PerfQueryCounterData, %d instances x %d counters, %s over loopback\n",
	       NR_INSTANCES, NR_COUNTERS, tls ? "https (TLS)" : "http (no openssl or TLS)");
	printf("  local:                  %8.2f ms/call (median of %d), %u bytes\n", local,
	       NR_CALLS, lbytes);
	printf("  remote, connection kept:%8.2f ms/call (median of %d), %u bytes: %.2fx local "
	       "(goal <= 3x: %s)\n",
	       remote, NR_CALLS, rbytes, remote / local, remote / local <= 3 ? "met" : "NOT met");
	printf("  a new connection%s:  %8.2f ms more than a call on a kept one (median of %d)\n",
	       tls ? " + TLS" : "      ", connect, NR_HANDSHAKES);
	rc = 0;
out:
	if (exporter > 0) {
		kill(exporter, SIGTERM);
		waitpid(exporter, NULL, 0);
	}
	if (h)
		PerfStopProvider(h);
	perflib_unregister_counterset(&set, true);
	remove_tree(root);
	remove_tree(tmp);
	return rc;
}

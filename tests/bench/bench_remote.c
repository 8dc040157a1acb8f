// SPDX-License-Identifier: MIT
/*
 * bench_remote.c - PerfQueryCounterData of 10,000 instances x 8 counters on this machine
 * and on a perflib-exporter over loopback (docs/REMOTE.md), in one run: the same query
 * read locally, remotely over TLS and remotely over plain HTTP, milliseconds per call
 * (median), the ratios (goal: within 3x of the local call once connected), and the cost of
 * a new connection (TCP and the TLS handshake) reported separately: the first call of a
 * fresh process minus its second call on the kept connection.
 *
 * The floor: the same bytes, through the same client (libperflib and its remote module, the
 * same calls), from a server that does no perflib work: a libmicrohttpd daemon made as the
 * exporter makes its own (threads, epoll, the same certificate and TLS priorities) that
 * answers the query's data with a constant copy of the local answer, handed to
 * libmicrohttpd without a copy. remote/floor is what perflib adds; floor/local is what
 * moving the bytes costs (TLS: encrypting and decrypting them, the copies through the
 * kernel and into the caller's buffer). When floor/local is above 3x, the goal is out of
 * reach on this machine whatever perflib does: the bench says so.
 *
 * The exporters are this build's (../tools/perflib-exporter beside this program's
 * directory), serving this process's private pin root on 127.0.0.2 (TLS) and 127.0.0.3
 * (plain); the floor servers listen on 127.0.0.4 (TLS) and 127.0.0.5 (plain). Needs BPF
 * (root): prints "skip" and exits 0 without it, so that `make bench` goes on. Without
 * openssl only plain HTTP is measured.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
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
#define NR_ROUNDS 8
#define CALLS_PER_ROUND 5 /* in a row: each side's caches as a steady caller's */
#define NR_CALLS (NR_ROUNDS * CALLS_PER_ROUND)
#define NR_HANDSHAKES 5
#define NO_ID 0xFFFFFFFF
#define GOAL 3.0
/* the exporter's TLS priorities when its web configuration names no versions or groups */
#define PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:%SERVER_PRECEDENCE"
#define TOKEN "0123456789abcdef"

/* a server of this run: where it listens and what runs it */
struct server {
	const char *addr; /* 127.0.0.N */
	bool tls;
	pid_t pid;
	char machine[64]; /* "addr:port" */
};

static char tmp[64], root[64];
static struct server exp_tls = {.addr = "127.0.0.2", .tls = true},
		     exp_plain = {.addr = "127.0.0.3"},
		     floor_tls = {.addr = "127.0.0.4", .tls = true},
		     floor_plain = {.addr = "127.0.0.5"};

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

/* certificates for the TLS servers' addresses and the exporter's web configuration */
static bool make_tls(void)
{
	char cmd[2048];

	snprintf(
		cmd, sizeof(cmd),
		"(cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
		"-days 1 -keyout ca.key -out ca.crt -subj '/CN=bench ca' && "
		"openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key "
		"-out srv.csr -subj '/CN=127.0.0.2' && "
		"echo subjectAltName=IP:%s,IP:%s >srv.ext && "
		"openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 "
		"-extfile srv.ext -out srv.crt && "
		"printf 'tls_server_config:\\n  cert_file: %s/srv.crt\\n  key_file: %s/srv.key\\n' "
		">web.yml",
		tmp, exp_tls.addr, floor_tls.addr, tmp, tmp);
	/* (openssl's chatter is not the bench's) */
	strncat(cmd, ") >/dev/null 2>&1", sizeof(cmd) - strlen(cmd) - 1);
	return !system(cmd);
}

/* the exporter for @srv; false when it did not start */
static bool start_exporter(const char *self, struct server *srv)
{
	char exe[PATH_MAX], err[96], web[96], listen[32], line[512];
	char *slash;
	int i, port = 0;

	snprintf(exe, sizeof(exe), "%s", self);
	slash = strrchr(exe, '/');
	if (!slash)
		return false;
	snprintf(slash, sizeof(exe) - (size_t)(slash - exe), "/../tools/perflib-exporter");
	snprintf(err, sizeof(err), "%s/exporter-%s.err", tmp, srv->addr);
	snprintf(web, sizeof(web), "%s/web.yml", tmp);
	snprintf(listen, sizeof(listen), "%s:0", srv->addr);
	srv->pid = fork();
	if (srv->pid == 0) {
		if (!freopen(err, "w", stderr))
			_exit(126);
		if (srv->tls)
			execl(exe, exe, "--listen", listen, "--web.config.file", web, (char *)NULL);
		else
			execl(exe, exe, "--listen", listen, (char *)NULL);
		_exit(127);
	}
	for (i = 0; srv->pid > 0 && i < 200 && !port; i++) {
		FILE *f = fopen(err, "r");

		usleep(50000);
		while (f && fgets(line, sizeof(line), f)) {
			char *at = strstr(line, "listening on http");

			/* "listening on http[s]://ADDR:PORT/" */
			at = at ? strstr(at + 17, srv->addr) : NULL;
			if (at && at[strlen(srv->addr)] == ':')
				port = atoi(at + strlen(srv->addr) + 1);
		}
		if (f)
			fclose(f);
	}
	snprintf(srv->machine, sizeof(srv->machine), "%s:%d", srv->addr, port);
	return port > 0;
}

/* ---- the floor: the same bytes without perflib ------------------------------------------ */

static const void *floor_bytes;
static size_t floor_len;

/* a request's upload (an add's identifiers): echoed, as the exporter does */
struct upload {
	size_t len;
	char data[4096];
};

static enum MHD_Result floor_send(struct MHD_Connection *conn, const void *body, size_t len,
				  enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)body, mode);
	enum MHD_Result ret;

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
	MHD_add_response_header(resp, "X-Perflib-Status", "0");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* the requests of one query (open, add, data, close) with constant answers */
static enum MHD_Result floor_handle(void *cls, struct MHD_Connection *conn, const char *url,
				    const char *method, const char *version, const char *data,
				    size_t *data_size, void **con_cls)
{
	struct upload *u = *con_cls;

	(void)cls;
	(void)version;
	if (!u) {
		*con_cls = u = calloc(1, sizeof(*u));
		return u ? MHD_YES : MHD_NO;
	}
	if (*data_size) {
		size_t n = *data_size < sizeof(u->data) - u->len ? *data_size
								 : sizeof(u->data) - u->len;

		memcpy(u->data + u->len, data, n);
		u->len += n;
		*data_size = 0;
		return MHD_YES;
	}
	if (strstr(url, "/data"))
		return floor_send(conn, floor_bytes, floor_len, MHD_RESPMEM_PERSISTENT);
	if (strstr(url, "/add"))
		return floor_send(conn, u->data, u->len, MHD_RESPMEM_MUST_COPY);
	if (!strcmp(method, "POST"))
		return floor_send(conn, TOKEN, 16, MHD_RESPMEM_PERSISTENT);
	return floor_send(conn, "", 0, MHD_RESPMEM_PERSISTENT);
}

static void floor_done(void *cls, struct MHD_Connection *conn, void **con_cls,
		       enum MHD_RequestTerminationCode toe)
{
	(void)cls;
	(void)conn;
	(void)toe;
	free(*con_cls);
	*con_cls = NULL;
}

/* a file's text (NUL-terminated), malloc'd; NULL when it cannot be read */
static char *slurp(const char *path)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = fopen(path, "r");

	if (f) {
		text = calloc(1, 65536);
		len = text ? fread(text, 1, 65535, f) : 0;
		fclose(f);
	}
	if (text && !len) {
		free(text);
		text = NULL;
	}
	return text;
}

/*
 * the floor servers in a child process, answering with the @len bytes at @bytes; their ports
 * into floor_tls and floor_plain (floor_tls's port stays 0 without @tls)
 */
static bool start_floor(const void *bytes, size_t len, bool tls)
{
	int fds[2], ports[2] = {0, 0};
	pid_t pid;

	if (pipe(fds))
		return false;
	pid = fork();
	if (pid == 0) {
		struct server *srvs[2] = {&floor_tls, &floor_plain};
		char path[96], *cert, *key;
		int i;

		close(fds[0]);
		floor_bytes = bytes;
		floor_len = len;
		snprintf(path, sizeof(path), "%s/srv.crt", tmp);
		cert = tls ? slurp(path) : NULL;
		snprintf(path, sizeof(path), "%s/srv.key", tmp);
		key = tls ? slurp(path) : NULL;
		for (i = 0; i < 2; i++) {
			unsigned int flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
			struct sockaddr_in sa = {.sin_family = AF_INET};
			const union MHD_DaemonInfo *info;
			struct MHD_Daemon *d;

			if (srvs[i]->tls && !(cert && key))
				continue;
			inet_pton(AF_INET, srvs[i]->addr, &sa.sin_addr);
			if (srvs[i]->tls)
				d = MHD_start_daemon(
					flags | MHD_USE_TLS, 0, NULL, NULL, floor_handle, NULL,
					MHD_OPTION_SOCK_ADDR, &sa, MHD_OPTION_THREAD_POOL_SIZE, 4,
					MHD_OPTION_NOTIFY_COMPLETED, floor_done, NULL,
					MHD_OPTION_HTTPS_MEM_CERT, cert, MHD_OPTION_HTTPS_MEM_KEY,
					key, MHD_OPTION_HTTPS_PRIORITIES, PRIORITIES,
					MHD_OPTION_END);
			else
				d = MHD_start_daemon(flags, 0, NULL, NULL, floor_handle, NULL,
						     MHD_OPTION_SOCK_ADDR, &sa,
						     MHD_OPTION_THREAD_POOL_SIZE, 4,
						     MHD_OPTION_NOTIFY_COMPLETED, floor_done, NULL,
						     MHD_OPTION_END);
			info = d ? MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT) : NULL;
			ports[i] = info ? info->port : 0;
		}
		if (write(fds[1], ports, sizeof(ports)) != sizeof(ports))
			_exit(1);
		close(fds[1]);
		pause(); /* until the bench's SIGTERM */
		_exit(0);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], ports, sizeof(ports)) != sizeof(ports))
		ports[0] = ports[1] = 0;
	close(fds[0]);
	floor_tls.pid = floor_plain.pid = pid;
	snprintf(floor_tls.machine, sizeof(floor_tls.machine), "%s:%d", floor_tls.addr, ports[0]);
	snprintf(floor_plain.machine, sizeof(floor_plain.machine), "%s:%d", floor_plain.addr,
		 ports[1]);
	return ports[1] > 0 && (!tls || ports[0] > 0);
}

/* ---- measuring ------------------------------------------------------------------------- */

/* nanoseconds on a CPU of every thread of process @pid so far (/proc/PID/task/<*>/schedstat) */
static uint64_t cpu_ns(pid_t pid)
{
	char path[64];
	struct dirent *de;
	uint64_t sum = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		unsigned long long ns;
		char stat[384];
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(stat, sizeof(stat), "%s/%s/schedstat", path, de->d_name);
		f = fopen(stat, "r");
		if (f && fscanf(f, "%llu", &ns) == 1)
			sum += ns;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return sum;
}

static const WCHAR *wide(const char *s)
{
	static WCHAR w[64];

	perflib_utf8_to_utf16(s, w, 64);
	return w;
}

/*
 * one machine's query of the whole set, read NR_CALLS times in rounds with the others (so
 * that all see the same load): each read one call with a buffer that fits (sized once
 * first, as a caller does); wall ms per call (median), CPU ms per call of this process and
 * of the server's (mean)
 */
struct target {
	WCHAR machine[64]; /* "" here */
	pid_t server;	   /* 0: none (here) */
	HANDLE q;
	void *buf;
	DWORD cap, got;
	double ms[NR_CALLS];
	uint64_t client_ns, server_ns;
	double wall, client_cpu, server_cpu; /* the results */
};

/* @t's query opened and sized; false when a call failed */
static bool target_open(struct target *t, const char *machine, pid_t server, const GUID *set)
{
	struct {
		PERF_COUNTER_IDENTIFIER id;
		WCHAR name[4];
	} spec = {.id = {.CounterSetGuid = *set,
			 .Size = sizeof(spec),
			 .CounterId = PERF_WILDCARD_COUNTER,
			 .InstanceId = NO_ID},
		  .name = {'*', 0}};
	ULONG st;

	memset(t, 0, sizeof(*t));
	if (machine)
		perflib_utf8_to_utf16(machine, t->machine, 64);
	t->server = server;
	st = PerfOpenQueryHandle(machine ? t->machine : NULL, &t->q);
	if (!st)
		st = PerfAddCounters(t->q, &spec.id, sizeof(spec));
	if (!st && spec.id.Status)
		st = spec.id.Status;
	if (!st && PerfQueryCounterData(t->q, NULL, 0, &t->cap) != ERROR_NOT_ENOUGH_MEMORY)
		st = ERROR_INVALID_DATA;
	if (!st) {
		t->cap += t->cap / 4;
		t->buf = malloc(t->cap);
		/* (the sized call's answer, kept by the client, is taken here: not measured) */
		st = t->buf ? PerfQueryCounterData(t->q, t->buf, t->cap, &t->got)
			    : ERROR_OUTOFMEMORY;
	}
	if (st)
		fprintf(stderr, "bench_remote: the query on %s: %u\n", machine ? machine : "here",
			st);
	return !st;
}

static uint64_t process_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * round @r of @t: CALLS_PER_ROUND calls after one more, each timed, the CPU of both sides
 * over them; false when one failed
 */
static bool target_round(struct target *t, int r)
{
	uint64_t s0, c0, t0;
	bool ok;
	int i;

	/* one call first, not measured: the caches as a caller reading in a row has them */
	ok = !PerfQueryCounterData(t->q, t->buf, t->cap, &t->got);
	s0 = t->server ? cpu_ns(t->server) : 0;
	c0 = process_cpu_ns();
	for (i = r * CALLS_PER_ROUND; ok && i < (r + 1) * CALLS_PER_ROUND; i++) {
		t0 = now_ns();
		ok = !PerfQueryCounterData(t->q, t->buf, t->cap, &t->got);
		t->ms[i] = (double)(now_ns() - t0) / 1e6;
	}
	t->client_ns += process_cpu_ns() - c0;
	if (t->server)
		t->server_ns += cpu_ns(t->server) - s0;
	return ok;
}

/* @t's results, its query closed (nothing when it is closed already) */
static void target_close(struct target *t)
{
	if (t->q) {
		t->wall = median(t->ms, NR_CALLS);
		t->client_cpu = (double)t->client_ns / 1e6 / NR_CALLS;
		t->server_cpu = (double)t->server_ns / 1e6 / NR_CALLS;
		PerfCloseQueryHandle(t->q);
	}
	free(t->buf);
	t->q = NULL;
	t->buf = NULL;
}

/*
 * a new connection's cost to @machine: in a fresh process (no connection, module loaded
 * already), the first call minus the second; median over NR_HANDSHAKES processes, ms
 */
static double time_connect(const char *machine)
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

/* the client's settings: each address its scheme, the TLS ones the test CA */
static bool write_settings(bool tls)
{
	char path[96];
	FILE *f;

	snprintf(path, sizeof(path), "%s/remote.conf", tmp);
	f = fopen(path, "w");
	if (!f)
		return false;
	fprintf(f, "timeout = 30\n[%s]\nscheme = http\n[%s]\nscheme = http\n", exp_plain.addr,
		floor_plain.addr);
	if (tls)
		fprintf(f,
			"[%s]\nscheme = https\nca = %s/ca.crt\n[%s]\nscheme = https\nca = "
			"%s/ca.crt\n",
			exp_tls.addr, tmp, floor_tls.addr, tmp);
	fclose(f);
	setenv("PERFLIB_REMOTE_CONFIG", path, 1);
	return true;
}

static void stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
}

/* one transport's lines: the exporter, the floor, the ratios */
static void report(const char *what, const struct target *local, const struct target *remote,
		   const struct target *fl, double connect)
{
	double r = remote->wall / local->wall, f = fl->wall / local->wall;

	printf("  %-5s remote (exporter):   %7.2f ms/call  %6.2fx local (goal <= %.0fx: %s)  "
	       "CPU: client %.2f + server %.2f ms\n",
	       what, remote->wall, r, GOAL, r <= GOAL ? "met" : "NOT met", remote->client_cpu,
	       remote->server_cpu);
	printf("  %-5s floor (no perflib):  %7.2f ms/call  %6.2fx local, remote/floor %.2fx  "
	       "CPU: client %.2f + server %.2f ms\n",
	       what, fl->wall, f, remote->wall / fl->wall, fl->client_cpu, fl->server_cpu);
	printf("  %-5s a new connection%s: %.2f ms more than a call on a kept one (median of "
	       "%d)\n",
	       what, strcmp(what, "TLS") ? "" : " and its handshake", connect, NR_HANDSHAKES);
	if (f > GOAL)
		printf("  %-5s the floor alone is %.1fx the local call: the %.0fx goal is out of "
		       "reach "
		       "on this machine (moving the bytes%s costs more than reading them); perflib "
		       "adds %.2fx to it\n",
		       what, f, GOAL, strcmp(what, "TLS") ? "" : ", encrypted",
		       remote->wall / fl->wall);
}

int main(int argc, char **argv)
{
	/* here, the exporters and the floors, read in turn */
	enum { LOCAL, EXP_TLS, FLOOR_TLS, EXP_PLAIN, FLOOR_PLAIN, NR_TARGETS };
	static struct target t[NR_TARGETS];
	double connect_tls = 0, connect_plain;
	char load[128] = "";
	void *answer = NULL;
	bool tls, ok;
	int i, k;
	GUID set, pg;
	HANDLE h = NULL;
	FILE *f;
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
	h = provide(&set, &pg);
	if (!h) {
		fprintf(stderr, "bench_remote: the provider did not start\n");
		goto out;
	}
	tls = make_tls() && start_exporter(argv[0], &exp_tls);
	if (!start_exporter(argv[0], &exp_plain)) {
		fprintf(stderr, "bench_remote: perflib-exporter did not start\n");
		goto out;
	}
	if (!write_settings(tls))
		goto out;
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
	/* the floor servers answer with a copy of the local answer */
	ok = target_open(&t[LOCAL], NULL, 0, &set);
	answer = ok ? malloc(t[LOCAL].got) : NULL;
	if (answer)
		memcpy(answer, t[LOCAL].buf, t[LOCAL].got);
	if (!answer || !start_floor(answer, t[LOCAL].got, tls)) {
		fprintf(stderr, "bench_remote: the local query or the floor servers failed\n");
		goto out;
	}
	if (tls) {
		connect_tls = time_connect(exp_tls.machine);
		ok = target_open(&t[EXP_TLS], exp_tls.machine, exp_tls.pid, &set) &&
		     target_open(&t[FLOOR_TLS], floor_tls.machine, floor_tls.pid, &set);
	}
	connect_plain = time_connect(exp_plain.machine);
	ok = ok && target_open(&t[EXP_PLAIN], exp_plain.machine, exp_plain.pid, &set) &&
	     target_open(&t[FLOOR_PLAIN], floor_plain.machine, floor_plain.pid, &set);
	for (i = 0; ok && i < NR_ROUNDS; i++)
		for (k = 0; ok && k < NR_TARGETS; k++)
			if (t[k].q)
				ok = target_round(&t[k], i) && t[k].got == t[LOCAL].got;
	if (!ok) {
		fprintf(stderr, "bench_remote: a query failed, or answered other bytes\n");
		goto out;
	}
	for (k = 0; k < NR_TARGETS; k++)
		target_close(&t[k]);
	f = fopen("/proc/loadavg", "r");
	if (f) {
		if (!fgets(load, sizeof(load), f))
			load[0] = 0;
		load[strcspn(load, "\n")] = 0;
		fclose(f);
	}
	printf("bench_remote: PerfQueryCounterData, %d instances x %d counters (%u bytes), "
	       "loopback, connection kept, median of %d calls each (%d rounds of %d, in turn; "
	       "one more first, unmeasured; CPU: mean per call) (load average %s)\n",
	       NR_INSTANCES, NR_COUNTERS, t[LOCAL].got, NR_CALLS, NR_ROUNDS, CALLS_PER_ROUND, load);
	printf("  local:                      %7.2f ms/call  CPU %.2f ms\n", t[LOCAL].wall,
	       t[LOCAL].client_cpu);
	if (tls)
		report("TLS", &t[LOCAL], &t[EXP_TLS], &t[FLOOR_TLS], connect_tls);
	else
		printf("  TLS:  not measured (no openssl, or the exporter would not start with "
		       "TLS)\n");
	report("plain", &t[LOCAL], &t[EXP_PLAIN], &t[FLOOR_PLAIN], connect_plain);
	rc = 0;
out:
	for (k = 0; k < NR_TARGETS; k++)
		target_close(&t[k]);
	stop(exp_tls.pid);
	stop(exp_plain.pid);
	stop(floor_plain.pid);
	free(answer);
	if (h)
		PerfStopProvider(h);
	perflib_unregister_counterset(&set, true);
	remove_tree(root);
	remove_tree(tmp);
	return rc;
}

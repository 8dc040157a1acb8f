// SPDX-License-Identifier: MIT
/*
 * perflib-exporter - serve every perflib counter on this machine to Prometheus: over HTTP
 * (/metrics, OpenMetrics 1.0.0 or Prometheus text 0.0.4 by the Accept header, with
 * libmicrohttpd), or as a .prom file for node_exporter's textfile collector, or once on
 * standard output. Counters are read only through the Windows consumer API (collect.c);
 * names and types follow docs/EXPORTER.md (exp_format.c).
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "access.h"
#include "collect.h"
#include "httplog.h"
#include "remote.h"
#include "webconfig.h"

#define PROG "perflib-exporter"
#define DEFAULT_LISTEN "127.0.0.1:9419"
#define DEFAULT_INTERVAL 15.0
#define METRICS_PATH "/metrics"
#define DEFAULT_MAX_CONNS 1024 /* connections open at once, all clients */
#define DEFAULT_MAX_PER_IP 32  /* connections open at once from one address */
#define IDLE_TIMEOUT_S 30      /* seconds a connection may send or take nothing */
#define IDLE_TIMEOUT ((unsigned int)IDLE_TIMEOUT_S)
#define STR_(x) #x
#define STR(x) STR_(x)
#define THREADS 4u /* server threads: a slow request holds only its own */
_Static_assert(THREADS > ACCESS_MAX_BCRYPT, "threads must be left when bcrypt runs at its most");

#define EXIT_FAILED 1 /* a scrape, a write or the server failed */
#define EXIT_USAGE 2  /* bad command line */

static const char usage_text[] =
	"NAME\n"
	"    perflib-exporter - serve perflib performance counters to Prometheus\n"
	"\n"
	"SYNOPSIS\n"
	"    perflib-exporter [--listen ADDR:PORT] [--web.config.file FILE] [--verbose]\n"
	"                     [--web.max-connections N] [--web.max-connections-per-ip N]\n"
	"                     [--remote.insecure-allow-any-peer]\n"
	"    perflib-exporter --textfile PATH [--interval SECONDS | --once] [--format FMT]\n"
	"    perflib-exporter --once [--format FMT]\n"
	"    perflib-exporter --help\n"
	"\n"
	"DESCRIPTION\n"
	"    perflib-exporter reads every counter set registered on this machine through the\n"
	"    perflib consumer API (PerfEnumerateCounterSet ... PerfQueryCounterData) and\n"
	"    exposes each counter as a Prometheus metric. Nothing is cached between scrapes\n"
	"    except registrations: every scrape reads the current values.\n"
	"\n"
	"    By default it serves HTTP on " DEFAULT_LISTEN ". GET " METRICS_PATH " returns\n"
	"    OpenMetrics 1.0.0 text when the Accept header asks for\n"
	"    application/openmetrics-text (as Prometheus does), else Prometheus text format\n"
	"    0.0.4. GET / returns a short page; other paths give 404, other methods 405.\n"
	"\n"
	"    With --textfile it writes the exposition to a file instead, atomically (a\n"
	"    temporary file in the same directory, then rename), for node_exporter's textfile\n"
	"    collector; with --once it writes one exposition and exits.\n"
	"\n"
	"    Metric names are perflib_<counter set>_<counter> plus a unit suffix, with names\n"
	"    lower-cased, camelCase split and every other character run turned into '_'.\n"
	"    Rates become counters (_total), 100-ns and tick timers counters in seconds\n"
	"    (_seconds_total), raw counts gauges, average timers summaries (_sum, _count),\n"
	"    fractions a gauge and its _base gauge. Base counters and counters marked\n"
	"    not displayable are only exported through the counter that uses them. Instance\n"
	"    names go in the label perf_instance. perflib_counterset_instances tells how many\n"
	"    instances each counter set has. The full rules are in docs/EXPORTER.md.\n"
	"\n"
	"    Under /perflib/v1/ it also serves this machine's consumer API (counter sets,\n"
	"    registrations, instances, queries) with the bytes of the local calls, for\n"
	"    readers on other machines: to peers off loopback only with TLS configured\n"
	"    (--web.config.file) or with --remote.insecure-allow-any-peer. A remote reader\n"
	"    may read what this process's account may read (docs/REMOTE.md).\n"
	"\n"
	"    TLS, client certificates and users with bcrypt passwords come from a\n"
	"    Prometheus web configuration file, the format node_exporter reads\n"
	"    (tls_server_config, http_server_config, basic_auth_users). With users\n"
	"    configured every path, /metrics included, needs one of them.\n"
	"\n"
	"    Connections are bounded: " STR(DEFAULT_MAX_CONNS) " at once, " STR(
		DEFAULT_MAX_PER_IP) " from one client address,\n"
				    "    each closed after " STR(
					    IDLE_TIMEOUT_S) " seconds without traffic; one client "
							    "holding many\n"
							    "    connections half open does not "
							    "keep others out.\n"
							    "\n"
							    "OPTIONS\n"
							    "    -l, --listen ADDR:PORT\n"
							    "        Address to serve HTTP on: an "
							    "IPv4 address, a host name, [IPv6] or "
							    "empty\n"
							    "        for every IPv4 interface "
							    "(\":9419\"). PORT 0 picks a free "
							    "port. The address\n"
							    "        actually bound is printed on "
							    "standard error:\n"
							    "        \"" PROG ": listening on "
							    "http://ADDR:PORT" METRICS_PATH "\".\n"
							    "        Default " DEFAULT_LISTEN
							    " (loopback only). "
							    "--web.listen-address is the same\n"
							    "        option under node_exporter's "
							    "name.\n"
							    "    --web.config.file FILE\n"
							    "        The web configuration file "
							    "(YAML): tls_server_config "
							    "(cert_file,\n"
							    "        key_file, client_auth_type, "
							    "client_ca_file, client_allowed_sans,\n"
							    "        min_version, max_version, "
							    "curve_preferences, ...), "
							    "http_server_config\n"
							    "        (headers) and "
							    "basic_auth_users (name: bcrypt hash, "
							    "from mkpasswd -m bcrypt\n"
							    "        or htpasswd -nBC 10 \"\"). An "
							    "unknown key, a bad value or a file "
							    "that cannot\n"
							    "        be read stops the exporter at "
							    "start with the file, line and key.\n"
							    "    --web.max-connections N\n"
							    "        Connections open at once, all "
							    "clients together. Default " STR(
								    DEFAULT_MAX_CONNS) ".\n"
										       "    "
										       "--web.max-"
										       "connections"
										       "-per-ip N\n"
										       "        "
										       "Connections"
										       " open at "
										       "once from "
										       "one client "
										       "address; "
										       "more are "
										       "closed as "
										       "soon\n"
										       "        as "
										       "accepted. "
										       "Default"
										       " " STR(DEFAULT_MAX_PER_IP) " (a perflib client keeps one per host,\n"
														   "        Prometheus one per target).\n"
														   "    --remote.insecure-allow-any-peer\n"
														   "        Serve the consumer operations to peers off loopback WITHOUT TLS: counters\n"
														   "        and passwords cross the network in clear. For a network that is already\n"
														   "        private (a VPN, a test namespace); a warning is printed at start.\n"
														   "    -t, --textfile PATH\n"
														   "        Write the exposition to PATH (for node_exporter: a name ending in .prom in\n"
														   "        its --collector.textfile.directory) every --interval seconds until stopped.\n"
														   "        The temporary file is .NAME.XXXXXX beside PATH; PATH gets mode 0644.\n"
														   "    -i, --interval SECONDS\n"
														   "        Seconds between two writes of --textfile, a decimal number from 0.1 to\n"
														   "        86400. Default 15.\n"
														   "    -1, --once\n"
														   "        Write one exposition and exit: to PATH with --textfile, else to standard\n"
														   "        output.\n"
														   "    -f, --format FMT\n"
														   "        Format of --textfile and --once output: prometheus (text 0.0.4, the\n"
														   "        default, what node_exporter reads) or openmetrics (1.0.0).\n"
														   "    -v, --verbose\n"
														   "        Log each scrape (counter sets, instances, bytes, milliseconds, those spent\n"
														   "        collecting) on standard error.\n"
														   "    -h, --help\n"
														   "        Show this text.\n"
														   "\n"
														   "ENVIRONMENT\n"
														   "    PERFLIB_ROOT\n"
														   "        The bpffs directory holding the counter sets (default /sys/fs/bpf/perflib).\n"
														   "\n"
														   "SIGNALS\n"
														   "    SIGTERM and SIGINT stop the exporter cleanly: the HTTP server finishes the\n"
														   "    request in progress and closes; a --textfile loop stops after the current write.\n"
														   "\n"
														   "EXIT STATUS\n"
														   "    0 stopped by a signal, or --once succeeded; 1 the server could not start (the\n"
														   "    address, or the web configuration file), or --once could not collect or\n"
														   "    write; 2 bad command line.\n"
														   "\n"
														   "EXAMPLES\n"
														   "    perflib-exporter --listen 0.0.0.0:9419\n"
														   "    perflib-exporter --web.listen-address :9419 --web.config.file /etc/perflib/web.yml\n"
														   "    perflib-exporter --textfile /var/lib/node_exporter/textfile/perflib.prom\n"
														   "    perflib-exporter --once --format openmetrics | less\n"
														   "\n"
														   "SEE ALSO\n"
														   "    typeperf(1), lodctr(1), prometheus(1), node_exporter(1)\n";

struct options {
	const char *listen;
	const char *web_config;
	unsigned int max_conns, max_per_ip;
	bool any_peer;
	const char *textfile;
	double interval;
	bool interval_set;
	bool once;
	bool format_set;
	enum exp_format format;
	bool verbose;
};

/* one collector for all scrapes, used by one HTTP request or one write at a time */
static struct {
	struct collector *collector;
	struct access *access; /* the web configuration's checks and headers, or NULL */
	pthread_mutex_t lock;
	bool verbose;
} state = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs(PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs(PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs("\nTry '" PROG " --help' for more information.\n", stderr);
	va_end(ap);
	return EXIT_USAGE;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/*
 * one scrape into @out (which the caller frees); 0 or -errno, with a message logged. The
 * lock serializes scrapes: the collector caches the query and its buffers.
 */
static int scrape(enum exp_format fmt, struct exp_buf *out)
{
	double start = now_ms();
	int err;

	pthread_mutex_lock(&state.lock);
	err = collector_scrape(state.collector, fmt, out);
	if (err)
		p_err("scrape failed: %s", collector_error(state.collector));
	else if (state.verbose) {
		const struct collect_stats *st = collector_stats(state.collector);

		p_err("scrape: %zu counter sets, %zu instances, %zu skipped, %zu bytes of data, "
		      "%zu bytes of %s text, %.1f ms (%.1f ms collecting)%s",
		      st->nr_sets, st->nr_instances, st->nr_bad, st->data_bytes, out->len,
		      fmt == EXP_FMT_OPENMETRICS ? "OpenMetrics" : "Prometheus", now_ms() - start,
		      st->collect_ms, st->rebuilt ? " (registrations changed)" : "");
	}
	pthread_mutex_unlock(&state.lock);
	return err;
}

/* ---- HTTP -------------------------------------------------------------------------- */

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned int code, const char *type,
			     char *body, size_t len, bool owned)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(
		len, body, owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		if (owned)
			free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	access_headers(state.access, resp);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

static char index_page[] = "<html><head><title>perflib-exporter</title></head><body>\n"
			   "<h1>perflib-exporter</h1>\n"
			   "<p><a href=\"" METRICS_PATH "\">Metrics</a></p>\n"
			   "</body></html>\n";
static char not_found[] = "Not found: try " METRICS_PATH "\n";
static char not_allowed[] = "Method not allowed: use GET or HEAD\n";

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct exp_buf out = {0};
	enum exp_format fmt;
	enum MHD_Result ret;
	bool refused;
	char *msg;
	int len;

	(void)cls;
	(void)version;
	/* the first call of a request (its headers): who asks is checked before anything */
	if (!*con_cls) {
		ret = access_check(state.access, conn, method, url, &refused);
		if (refused)
			return ret;
	}
	if (remote_route(url))
		return remote_handle(conn, url, method, upload_data, upload_data_size, con_cls);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD)) {
		http_log(conn, method, url, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed");
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain; charset=utf-8",
			     not_allowed, strlen(not_allowed), false);
	}
	if (!strcmp(url, "/"))
		return reply(conn, MHD_HTTP_OK, "text/html; charset=utf-8", index_page,
			     strlen(index_page), false);
	if (strcmp(url, METRICS_PATH)) {
		http_log(conn, method, url, MHD_HTTP_NOT_FOUND, "no such path");
		return reply(conn, MHD_HTTP_NOT_FOUND, "text/plain; charset=utf-8", not_found,
			     strlen(not_found), false);
	}
	fmt = exp_negotiate(
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));
	if (scrape(fmt, &out)) {
		exp_buf_free(&out);
		pthread_mutex_lock(&state.lock);
		len = asprintf(&msg, "perflib-exporter: scrape failed: %s\n",
			       collector_error(state.collector));
		pthread_mutex_unlock(&state.lock);
		if (len < 0)
			return MHD_NO;
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "text/plain; charset=utf-8", msg,
			     (size_t)len, true);
	}
	/* the response takes the buffer: MHD frees it */
	return reply(conn, MHD_HTTP_OK, exp_content_type(fmt), out.data, out.len, true);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	http_vlog(fmt, ap);
}

/* split "host:port", "[v6]:port" or ":port"; @host gets "" for the last */
static int split_listen(const char *arg, char *host, size_t host_size, const char **ret_port)
{
	const char *colon;
	size_t n;

	if (arg[0] == '[') {
		const char *close = strchr(arg, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		n = (size_t)(close - arg - 1);
		colon = close + 1;
		arg++;
	} else {
		colon = strrchr(arg, ':');
		if (!colon || memchr(arg, ':', (size_t)(colon - arg)))
			return -EINVAL;
		n = (size_t)(colon - arg);
	}
	if (n >= host_size || !colon[1])
		return -EINVAL;
	memcpy(host, arg, n);
	host[n] = '\0';
	*ret_port = colon + 1;
	return 0;
}

/* 0 when @arg is ADDR:PORT with a port from 0 to 65535, else a usage error */
static int check_listen(const char *arg)
{
	const char *port;
	char host[256], *end;
	long n;

	if (split_listen(arg, host, sizeof(host), &port))
		return usage_error("--listen '%s': expected ADDR:PORT, [IPv6]:PORT or :PORT", arg);
	errno = 0;
	n = strtol(port, &end, 10);
	if (*end || errno || n < 0 || n > 65535)
		return usage_error("--listen '%s': port must be a number from 0 to 65535", arg);
	return 0;
}

/* a listening socket on @arg (checked by check_listen); -1 with a message on failure */
static int open_listener(const char *arg, char *shown, size_t shown_size)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	struct addrinfo *res = NULL, *ai;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	char host[256], addr[NI_MAXHOST], port[NI_MAXSERV];
	const char *port_str;
	int fd = -1, rc, one = 1;

	split_listen(arg, host, sizeof(host), &port_str);
	rc = getaddrinfo(*host ? host : "0.0.0.0", port_str, &hints, &res);
	if (rc) {
		p_err("--listen '%s': %s", arg, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
			    ai->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		/* a deep backlog: a client opening connections in a loop does not fill it */
		if (!bind(fd, ai->ai_addr, ai->ai_addrlen) && !listen(fd, SOMAXCONN))
			break;
		rc = errno;
		close(fd);
		fd = -1;
		errno = rc;
	}
	if (fd < 0) {
		p_err("cannot listen on %s: %s", arg, strerror(errno));
		freeaddrinfo(res);
		return -1;
	}
	freeaddrinfo(res);
	/* show the address bound, with the port the kernel chose for port 0 */
	if (!getsockname(fd, (struct sockaddr *)&ss, &sslen) &&
	    !getnameinfo((struct sockaddr *)&ss, sslen, addr, sizeof(addr), port, sizeof(port),
			 NI_NUMERICHOST | NI_NUMERICSERV))
		snprintf(shown, shown_size, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", addr,
			 port);
	else
		snprintf(shown, shown_size, "%s", arg);
	return fd;
}

/* block the stop signals in every thread; the main thread takes them with sigwait */
static void block_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	pthread_sigmask(SIG_BLOCK, set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/*
 * file descriptors for @o->max_conns connections and the rest of the process: the soft
 * limit is raised as far as the hard one allows; returns the connections that fit
 */
static unsigned int fit_nofile(unsigned int conns)
{
	rlim_t need = (rlim_t)conns + 64;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return conns;
	if (rl.rlim_cur >= need)
		return conns;
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need ? need : rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur < need) {
		getrlimit(RLIMIT_NOFILE, &rl);
		if (rl.rlim_cur <= 128)
			return 64;
		p_err("warning: %u connections need %lu file descriptors, the limit is %lu: "
		      "serving at most %lu connections",
		      conns, (unsigned long)need, (unsigned long)rl.rlim_cur,
		      (unsigned long)(rl.rlim_cur - 64));
		return (unsigned int)(rl.rlim_cur - 64);
	}
	return conns;
}

/* what the web configuration leaves open, said once at start */
static void warn_open(const struct options *o, const struct web_config *cfg)
{
	if (o->any_peer && !(cfg && cfg->tls))
		p_err("WARNING: --remote.insecure-allow-any-peer: the consumer operations are "
		      "served without TLS to any peer that reaches the port; counters and "
		      "any password cross the network in clear");
	else if (cfg && cfg->tls && !cfg->nr_users &&
		 cfg->client_auth != WEB_REQUIRE_ANY_CLIENT_CERT &&
		 cfg->client_auth != WEB_REQUIRE_AND_VERIFY_CLIENT_CERT)
		p_err("warning: TLS without authentication (no basic_auth_users, client_auth_type "
		      "%s): anyone who reaches the port may read every counter",
		      web_client_auth_name(cfg->client_auth));
	else if (cfg && cfg->nr_users && !cfg->tls)
		p_err("warning: basic_auth_users without TLS: passwords cross the network in "
		      "clear");
}

static int serve(const struct options *o)
{
	struct MHD_OptionItem opts[20];
	struct web_config *cfg = NULL;
	struct MHD_Daemon *d = NULL;
	char shown[NI_MAXHOST + NI_MAXSERV + 4], why[1024];
	unsigned int flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG;
	unsigned int conns, n = 0;
	sigset_t stop;
	int fd = -1, sig, err = EXIT_FAILED;

	if (o->web_config && web_config_load(o->web_config, &cfg, why, sizeof(why))) {
		p_err("--web.config.file: %s", why);
		return EXIT_FAILED;
	}
	if (access_new(cfg, &state.access)) {
		p_err("cannot set up authentication: out of memory or no random bytes");
		goto out;
	}
	remote_init(state.access, o->any_peer || (cfg && cfg->tls));
	warn_open(o, cfg);
	conns = fit_nofile(o->max_conns);
	fd = open_listener(o->listen, shown, sizeof(shown));
	if (fd < 0)
		goto out;
#define OPT(o_, v_, p_) opts[n++] = (struct MHD_OptionItem){(o_), (intptr_t)(v_), (p_)}
	OPT(MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL);
	OPT(MHD_OPTION_LISTEN_SOCKET, fd, NULL);
	OPT(MHD_OPTION_CONNECTION_TIMEOUT, IDLE_TIMEOUT, NULL);
	OPT(MHD_OPTION_CONNECTION_LIMIT, conns, NULL);
	OPT(MHD_OPTION_PER_IP_CONNECTION_LIMIT, o->max_per_ip, NULL);
	OPT(MHD_OPTION_THREAD_POOL_SIZE, THREADS, NULL);
	OPT(MHD_OPTION_NOTIFY_COMPLETED, remote_completed, NULL);
	if (cfg && cfg->tls) {
		flags |= MHD_USE_TLS;
		OPT(MHD_OPTION_HTTPS_MEM_CERT, 0, cfg->cert_pem);
		OPT(MHD_OPTION_HTTPS_MEM_KEY, 0, cfg->key_pem);
		OPT(MHD_OPTION_HTTPS_PRIORITIES, 0, cfg->priorities);
		/*
		 * a trust list makes libmicrohttpd ask for a client certificate; the types that
		 * verify nothing get the server's own certificate there (access.c decides)
		 */
		if (cfg->client_ca_pem)
			OPT(MHD_OPTION_HTTPS_MEM_TRUST, 0, cfg->client_ca_pem);
		else if (cfg->client_auth != WEB_NO_CLIENT_CERT)
			OPT(MHD_OPTION_HTTPS_MEM_TRUST, 0, cfg->cert_pem);
	}
	OPT(MHD_OPTION_END, 0, NULL);
#undef OPT
	block_signals(&stop); /* before MHD starts its threads, which inherit the mask */
	d = MHD_start_daemon(flags, 0, NULL, NULL, handle, NULL, MHD_OPTION_ARRAY, opts,
			     MHD_OPTION_END);
	if (!d) {
		p_err("cannot start the HTTP server on %s", shown);
		goto out;
	}
	fprintf(stderr, PROG ": listening on %s://%s" METRICS_PATH "\n",
		cfg && cfg->tls ? "https" : "http", shown);
	do
		sig = sigwaitinfo(&stop, NULL);
	while (sig < 0 && errno == EINTR);
	if (o->verbose)
		p_err("stopping on %s", strsignal(sig));
	err = 0;
out:
	if (d)
		MHD_stop_daemon(d);
	remote_shutdown();
	if (fd >= 0)
		close(fd);
	access_free(state.access);
	state.access = NULL;
	web_config_free(cfg);
	return err;
}

/* ---- text file and standard output ------------------------------------------------ */

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* write @text to @path atomically: readers see the old file or the new one, whole */
static int write_textfile(const char *path, const struct exp_buf *text)
{
	char *copy1 = strdup(path), *copy2 = strdup(path), *tmp = NULL;
	int fd = -1, err = 0;

	if (!copy1 || !copy2 ||
	    asprintf(&tmp, "%s/.%s.XXXXXX", dirname(copy1), basename(copy2)) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		goto out;
	}
	/* a hidden name without .prom: node_exporter never reads a half-written file */
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		p_err("cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	err = write_all(fd, text->data, text->len);
	if (!err && fchmod(fd, 0644))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err) {
		p_err("cannot write %s: %s", path, strerror(-err));
		unlink(tmp);
	}
out:
	free(tmp);
	free(copy1);
	free(copy2);
	return err;
}

static int write_once(const struct options *o)
{
	struct exp_buf out = {0};
	int err;

	err = scrape(o->format, &out);
	if (!err && o->textfile)
		err = write_textfile(o->textfile, &out);
	else if (!err) {
		err = write_all(STDOUT_FILENO, out.data, out.len);
		if (err)
			p_err("cannot write to standard output: %s", strerror(-err));
	}
	exp_buf_free(&out);
	return err;
}

static int textfile_loop(const struct options *o)
{
	struct timespec wait = {
		.tv_sec = (time_t)o->interval,
		.tv_nsec = (long)((o->interval - floor(o->interval)) * 1e9),
	};
	sigset_t stop;
	int sig;

	block_signals(&stop);
	for (;;) {
		/* a failed write is logged and retried at the next interval */
		write_once(o);
		do
			sig = sigtimedwait(&stop, NULL, &wait);
		while (sig < 0 && errno == EINTR);
		if (sig > 0)
			break;
	}
	if (o->verbose)
		p_err("stopping on %s", strsignal(sig));
	return 0;
}

/* ---- command line ----------------------------------------------------------------- */

/* a count from 1 to @max for option @name */
static int parse_count(const char *name, const char *arg, unsigned int max, unsigned int *ret)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || v < 1 || v > max)
		return usage_error("%s '%s': expected a number from 1 to %u", name, arg, max);
	*ret = (unsigned int)v;
	return 0;
}

enum {
	OPT_WEB_CONFIG = 256,
	OPT_MAX_CONNS,
	OPT_MAX_PER_IP,
	OPT_ANY_PEER,
};

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{"listen", required_argument, NULL, 'l'},
		{"web.listen-address", required_argument, NULL, 'l'},
		{"web.config.file", required_argument, NULL, OPT_WEB_CONFIG},
		{"web.max-connections", required_argument, NULL, OPT_MAX_CONNS},
		{"web.max-connections-per-ip", required_argument, NULL, OPT_MAX_PER_IP},
		{"remote.insecure-allow-any-peer", no_argument, NULL, OPT_ANY_PEER},
		{"textfile", required_argument, NULL, 't'},
		{"interval", required_argument, NULL, 'i'},
		{"once", no_argument, NULL, '1'},
		{"format", required_argument, NULL, 'f'},
		{"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char *end;
	int opt;

	opterr = 0; /* our messages, not getopt's */
	while ((opt = getopt_long(argc, argv, ":l:t:i:1f:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'l':
			if (check_listen(optarg))
				return EXIT_USAGE;
			o->listen = optarg;
			break;
		case OPT_WEB_CONFIG:
			if (!*optarg)
				return usage_error("--web.config.file needs a file name");
			o->web_config = optarg;
			break;
		case OPT_MAX_CONNS:
			if (parse_count("--web.max-connections", optarg, 100000, &o->max_conns))
				return EXIT_USAGE;
			break;
		case OPT_MAX_PER_IP:
			if (parse_count("--web.max-connections-per-ip", optarg, 100000,
					&o->max_per_ip))
				return EXIT_USAGE;
			break;
		case OPT_ANY_PEER:
			o->any_peer = true;
			break;
		case 't':
			if (!*optarg)
				return usage_error("--textfile needs a file name");
			o->textfile = optarg;
			break;
		case 'i':
			errno = 0;
			o->interval = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->interval >= 0.1) ||
			    o->interval > 86400)
				return usage_error("--interval '%s': expected seconds from 0.1 to "
						   "86400",
						   optarg);
			o->interval_set = true;
			break;
		case '1':
			o->once = true;
			break;
		case 'f':
			if (!strcmp(optarg, "prometheus"))
				o->format = EXP_FMT_PROMETHEUS;
			else if (!strcmp(optarg, "openmetrics"))
				o->format = EXP_FMT_OPENMETRICS;
			else
				return usage_error("--format '%s': expected prometheus or "
						   "openmetrics",
						   optarg);
			o->format_set = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case ':':
			return usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			if (optopt)
				return usage_error("unknown option '-%c'", optopt);
			return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if ((o->listen || o->web_config || o->any_peer || o->max_conns || o->max_per_ip) &&
	    (o->textfile || o->once))
		return usage_error("--listen and the --web.* and --remote.* options are for the "
				   "HTTP server; they do not go with --textfile or --once");
	if (o->interval_set && !o->textfile)
		return usage_error("--interval is for --textfile");
	if (o->interval_set && o->once)
		return usage_error("--interval and --once exclude each other");
	if (o->format_set && !o->textfile && !o->once)
		return usage_error("--format is for --textfile and --once; over HTTP the "
				   "Accept header chooses");
	if (!o->listen)
		o->listen = DEFAULT_LISTEN;
	if (!o->max_conns)
		o->max_conns = DEFAULT_MAX_CONNS;
	if (!o->max_per_ip)
		o->max_per_ip = DEFAULT_MAX_PER_IP;
	if (o->max_per_ip > o->max_conns)
		o->max_per_ip = o->max_conns;
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = {.interval = DEFAULT_INTERVAL, .format = EXP_FMT_PROMETHEUS};
	int err;

	err = parse_args(argc, argv, &o);
	if (err)
		return err;
	if (collector_new(&state.collector)) {
		p_err("out of memory");
		return EXIT_FAILED;
	}
	state.verbose = o.verbose;
	if (o.once)
		err = write_once(&o) ? EXIT_FAILED : 0;
	else if (o.textfile)
		err = textfile_loop(&o);
	else
		err = serve(&o);
	collector_free(state.collector);
	return err;
}

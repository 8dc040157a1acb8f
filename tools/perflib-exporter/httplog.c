// SPDX-License-Identifier: MIT
/*
 * httplog.c - rate-limited log lines about HTTP clients (httplog.h). Lines are built whole
 * and written with one fputs, so lines of the server's threads do not interleave.
 */
#include <netdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "httplog.h"

#define PROG "perflib-exporter"

static struct {
	pthread_mutex_t lock;
	time_t second;	       /* the CLOCK_MONOTONIC second being counted */
	unsigned int lines;    /* lines written in it */
	unsigned long dropped; /* lines not written since the last report */
} limit = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* whether a line may be written now; reports the lines dropped in earlier seconds */
static bool may_write(void)
{
	struct timespec ts;
	unsigned long dropped = 0;
	bool ok;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	pthread_mutex_lock(&limit.lock);
	if (ts.tv_sec != limit.second) {
		limit.second = ts.tv_sec;
		limit.lines = 0;
		dropped = limit.dropped;
		limit.dropped = 0;
	}
	ok = limit.lines < HTTPLOG_BURST;
	if (ok)
		limit.lines++;
	else
		limit.dropped++;
	pthread_mutex_unlock(&limit.lock);
	if (dropped)
		fprintf(stderr,
			PROG ": http: %lu log lines about clients suppressed (more than %d "
			     "a second)\n",
			dropped, HTTPLOG_BURST);
	return ok;
}

const char *http_peer(struct MHD_Connection *conn, char *buf, size_t size)
{
	const union MHD_ConnectionInfo *ci =
		conn ? MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS) : NULL;
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	char host[NI_MAXHOST];
	socklen_t len;

	if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
		goto unknown;
	len = sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	if (getnameinfo(sa, len, host, sizeof(host), NULL, 0, NI_NUMERICHOST))
		goto unknown;
	snprintf(buf, size, sa->sa_family == AF_INET6 ? "[%s]" : "%s", host);
	return buf;
unknown:
	snprintf(buf, size, "?");
	return buf;
}

/* copy @s into @out for a log line: printable ASCII, at most @max characters, "..." after */
static void sanitize(const char *s, char *out, size_t max)
{
	size_t i, n = 0;

	for (i = 0; s && s[i] && n < max; i++)
		out[n++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	if (s && s[i] && n >= 3)
		memcpy(out + n - 3, "...", 3);
	out[n] = '\0';
}

void http_log(struct MHD_Connection *conn, const char *method, const char *url, unsigned int code,
	      const char *fmt, ...)
{
	char peer[NI_MAXHOST + 2], m[24], u[200], why[256], line[700];
	va_list ap;

	if (!may_write())
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	/* the client chose the method and URL: no control characters reach the log */
	sanitize(method, m, sizeof(m) - 1);
	sanitize(url, u, sizeof(u) - 1);
	snprintf(line, sizeof(line), PROG ": %s: %s%s%s: %u %s\n",
		 http_peer(conn, peer, sizeof(peer)), m, *m ? " " : "", *u ? u : "-", code, why);
	fputs(line, stderr);
}

void http_vlog(const char *fmt, va_list ap)
{
	char line[512];
	int n;

	if (!may_write())
		return;
	n = snprintf(line, sizeof(line), PROG ": http: ");
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	/* libmicrohttpd's messages end with a newline; make sure of one */
	n = (int)strlen(line);
	if (n && line[n - 1] != '\n' && n + 1 < (int)sizeof(line)) {
		line[n] = '\n';
		line[n + 1] = '\0';
	}
	fputs(line, stderr);
}

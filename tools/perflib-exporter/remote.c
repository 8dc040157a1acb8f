// SPDX-License-Identifier: MIT
/*
 * remote.c - the consumer operations over HTTP (see remote.h and docs/REMOTE.md): each
 * request is one call of this machine's consumer API, answered with the call's bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "access.h"
#include "httplog.h"
#include "perflib-linux.h"
#include "remote.h"
#include "sized.h"

#define BINARY "application/octet-stream"
#define TEXT "text/plain; charset=utf-8"
#define STATUS_HEADER "X-Perflib-Status"

/* a query the server holds for a client */
struct remote_query {
	uint64_t token; /* 0: a free entry */
	HANDLE handle;
	time_t used; /* CLOCK_MONOTONIC seconds of the last request */
	/*
	 * the buffer sizes the last info and data answers took: the next answer's buffer is
	 * made that large at once, so a steady query's sample is one call (one collection),
	 * not a sizing call and then the call
	 */
	DWORD info_cap, data_cap;
};

static struct remote_query queries[REMOTE_MAX_QUERIES];
static pthread_mutex_t queries_lock = PTHREAD_MUTEX_INITIALIZER;

/* set once by remote_init, before the server starts */
static struct {
	const struct access *access; /* response headers to add */
	bool any_peer;		     /* serve peers off loopback (TLS, or the opt-out flag) */
} policy;

/* the request this thread serves, for log lines (MHD calls the handler in one thread) */
static __thread struct {
	const char *method, *url;
} current;

void remote_init(const struct access *access, bool any_peer)
{
	policy.access = access;
	policy.any_peer = any_peer;
}

/* a request's body, kept between MHD's calls of the handler */
struct body {
	char *data;
	size_t len, cap;
	bool too_large;
};

bool remote_route(const char *url)
{
	return !strncmp(url, REMOTE_PREFIX, strlen(REMOTE_PREFIX));
}

static time_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/* ---- answer buffers ------------------------------------------------------------- */

/*
 * The buffers of sized answers are kept for the next answers instead of freed: a large
 * answer (PerfQueryCounterData of 10,000 instances: 1.7 MB) is above malloc's mmap
 * threshold, so each request would map a new buffer and fault its pages in again, which
 * costs more than the call that fills it. At most ANSWER_POOL buffers are kept (one per
 * server thread), each of at most ANSWER_KEEP bytes; a buffer goes back when libmicrohttpd
 * is done sending it.
 */
#define ANSWER_POOL 4
#define ANSWER_KEEP (64u << 20)

struct answer_buf {
	void *data; /* malloc'd, NULL: an empty entry */
	DWORD cap;
};

static struct answer_buf pool[ANSWER_POOL];
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* a kept buffer: the smallest of at least @want bytes, else the largest; data NULL: none */
static struct answer_buf pool_take(DWORD want)
{
	struct answer_buf b = {0};
	size_t i, best = ANSWER_POOL;

	pthread_mutex_lock(&pool_lock);
	for (i = 0; i < ANSWER_POOL; i++) {
		const struct answer_buf *e = &pool[i];

		if (!e->data)
			continue;
		if (best == ANSWER_POOL ||
		    (e->cap >= want ? pool[best].cap < want || e->cap < pool[best].cap
				    : pool[best].cap < want && e->cap > pool[best].cap))
			best = i;
	}
	if (best < ANSWER_POOL) {
		b = pool[best];
		pool[best] = (struct answer_buf){0};
	}
	pthread_mutex_unlock(&pool_lock);
	return b;
}

/* libmicrohttpd's free callback of a pooled answer (@cls its struct answer_buf) */
static void pool_give(void *cls)
{
	struct answer_buf *b = cls;
	size_t i, slot = ANSWER_POOL;
	void *drop = b->data;

	pthread_mutex_lock(&pool_lock);
	for (i = 0; b->cap <= ANSWER_KEEP && i < ANSWER_POOL; i++) {
		if (!pool[i].data) {
			slot = i;
			break;
		}
		if (pool[i].cap < b->cap && (slot == ANSWER_POOL || pool[i].cap < pool[slot].cap))
			slot = i;
	}
	if (slot < ANSWER_POOL) {
		/* an empty entry, or the smallest kept buffer, smaller than this one */
		drop = pool[slot].data;
		pool[slot] = *b;
	}
	pthread_mutex_unlock(&pool_lock);
	free(drop);
	free(b);
}

/* ---- replies ---------------------------------------------------------------------- */

/*
 * @len bytes of @body with HTTP @code and Win32 @status; @body is taken: freed by MHD, or,
 * with @pooled (its struct answer_buf, malloc'd), given back to the pool
 */
static enum MHD_Result send_bytes(struct MHD_Connection *conn, unsigned int code, ULONG status,
				  const char *type, void *body, size_t len,
				  struct answer_buf *pooled)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;
	char st[16];

	if (pooled)
		resp = MHD_create_response_from_buffer_with_free_callback_cls(len, body, pool_give,
									      pooled);
	else
		resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		if (pooled)
			pool_give(pooled);
		else
			free(body);
		return MHD_NO;
	}
	snprintf(st, sizeof(st), "%lu", (unsigned long)status);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, STATUS_HEADER, st);
	access_headers(policy.access, resp);
	ret = MHD_queue_response(conn, code, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* a request that made no call: HTTP @code and why, and a log line */
static enum MHD_Result refuse(struct MHD_Connection *conn, unsigned int code, const char *why)
{
	char *text = NULL;
	int n = asprintf(&text, "perflib-exporter: %s\n", why);

	http_log(conn, current.method, current.url, code, "%s", why);
	if (n < 0)
		return MHD_NO;
	/* a refusal of who asks reads as the Windows one: ERROR_ACCESS_DENIED */
	return send_bytes(conn, code,
			  code == MHD_HTTP_FORBIDDEN ? ERROR_ACCESS_DENIED
						     : ERROR_INVALID_PARAMETER,
			  TEXT, text, (size_t)n, NULL);
}

/* the answer of a call: its status, and its output when it succeeded */
static enum MHD_Result answer(struct MHD_Connection *conn, ULONG status, void *out, size_t len)
{
	if (status != ERROR_SUCCESS) {
		free(out);
		return send_bytes(conn, MHD_HTTP_OK, status, BINARY, NULL, 0, NULL);
	}
	return send_bytes(conn, MHD_HTTP_OK, status, BINARY, out, len, NULL);
}

/* ---- calls ------------------------------------------------------------------------ */

/*
 * a sized call into a kept buffer (the pool's), made *@cap_hint bytes large first (0: as it
 * is; the call sizes it), then its answer; *@cap_hint (may be NULL) gets the size the
 * buffer took, for the next call
 */
static enum MHD_Result answer_sized(struct MHD_Connection *conn, sized_fn fn, void *ctx,
				    DWORD *cap_hint)
{
	struct answer_buf *b = malloc(sizeof(*b));
	DWORD want = cap_hint ? *cap_hint : 0, len = 0;
	ULONG st;

	if (!b)
		return MHD_NO;
	*b = pool_take(want);
	if (b->cap < want) {
		void *grown = realloc(b->data, want);

		if (grown) {
			b->data = grown;
			b->cap = want;
		}
	}
	st = sized_call(fn, ctx, &b->data, &b->cap, &len);
	if (st != ERROR_SUCCESS) {
		pool_give(b);
		return send_bytes(conn, MHD_HTTP_OK, st, BINARY, NULL, 0, NULL);
	}
	if (cap_hint)
		*cap_hint = b->cap;
	return send_bytes(conn, MHD_HTTP_OK, st, BINARY, b->data, len, b);
}

static ULONG call_instances(void *ctx, void *buf, DWORD size, DWORD *actual)
{
	return PerfEnumerateCounterSetInstances(NULL, ctx, buf, size, actual);
}

static ULONG call_info(void *ctx, void *buf, DWORD size, DWORD *actual)
{
	return PerfQueryCounterInfo(ctx, buf, size, actual);
}

/*
 * PerfQueryCounterData has no size-only form: a buffer too small gives the size needed
 * like the others
 */
static ULONG call_data(void *ctx, void *buf, DWORD size, DWORD *actual)
{
	return PerfQueryCounterData(ctx, buf, size, actual);
}

/* a decimal number of 1 to 10 digits that fits a DWORD */
static bool parse_dword(const char *s, DWORD *ret)
{
	unsigned long long v = 0;
	size_t i;

	if (!s || !*s || strlen(s) > 10)
		return false;
	for (i = 0; s[i]; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned long long)(s[i] - '0');
	}
	if (v > UINT32_MAX)
		return false;
	*ret = (DWORD)v;
	return true;
}

/* GET countersets/{guid}/{what}: @rest is "{guid}/{what}" */
static enum MHD_Result serve_set(struct MHD_Connection *conn, const char *rest)
{
	const char *slash = strchr(rest, '/');
	struct sized_reg r = {0};
	char text[40];
	DWORD code;

	/* the canonical spelling only: 36 characters, no braces */
	if (!slash || slash - rest != 36)
		return refuse(conn, MHD_HTTP_NOT_FOUND, "no such counter set spelling");
	memcpy(text, rest, 36);
	text[36] = '\0';
	if (perflib_guid_from_string(text, &r.guid))
		return refuse(conn, MHD_HTTP_NOT_FOUND, "no such counter set spelling");
	if (!strcmp(slash + 1, "instances"))
		return answer_sized(conn, call_instances, &r.guid, NULL);
	if (strcmp(slash + 1, "registration"))
		return refuse(conn, MHD_HTTP_NOT_FOUND, "no such operation on a counter set");
	if (!parse_dword(MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "code"), &code))
		return refuse(conn, MHD_HTTP_BAD_REQUEST, "registration needs code=N (decimal)");
	r.code = (PerfRegInfoType)code;
	if (MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "lang") &&
	    !parse_dword(MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "lang"), &r.lang))
		return refuse(conn, MHD_HTTP_BAD_REQUEST, "lang=N must be decimal");
	return answer_sized(conn, sized_reg, &r, NULL);
}

/* ---- queries ---------------------------------------------------------------------- */

/* close the queries unused for REMOTE_IDLE_SECONDS; queries_lock held */
static void expire_locked(time_t now)
{
	size_t i;

	for (i = 0; i < REMOTE_MAX_QUERIES; i++) {
		if (queries[i].token && now - queries[i].used >= REMOTE_IDLE_SECONDS) {
			PerfCloseQueryHandle(queries[i].handle);
			memset(&queries[i], 0, sizeof(queries[i]));
		}
	}
}

/* POST queries: a new query and its token as 16 hex digits */
static enum MHD_Result open_query(struct MHD_Connection *conn)
{
	struct remote_query *q = NULL;
	uint64_t token = 0;
	HANDLE h = NULL;
	char *text;
	size_t i;
	ULONG st;
	int n;

	pthread_mutex_lock(&queries_lock);
	expire_locked(now_s());
	for (i = 0; i < REMOTE_MAX_QUERIES && !q; i++)
		if (!queries[i].token)
			q = &queries[i];
	if (!q) {
		pthread_mutex_unlock(&queries_lock);
		return refuse(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "too many open queries");
	}
	while (!token)
		if (getrandom(&token, sizeof(token), 0) != sizeof(token))
			token = 0;
	st = PerfOpenQueryHandle(NULL, &h);
	if (st == ERROR_SUCCESS)
		*q = (struct remote_query){.token = token, .handle = h, .used = now_s()};
	pthread_mutex_unlock(&queries_lock);
	if (st != ERROR_SUCCESS)
		return answer(conn, st, NULL, 0);
	n = asprintf(&text, "%016" PRIx64, token);
	if (n < 0)
		return MHD_NO;
	return send_bytes(conn, MHD_HTTP_OK, ERROR_SUCCESS, TEXT, text, (size_t)n, NULL);
}

/* the query of token @text (16 hex digits), marked used; NULL when there is none */
static struct remote_query *find_query_locked(const char *text, size_t len)
{
	uint64_t token = 0;
	size_t i;

	if (len != 16)
		return NULL;
	for (i = 0; i < 16; i++) {
		char c = text[i];
		unsigned int d = c >= '0' && c <= '9'	? (unsigned int)(c - '0')
				 : c >= 'a' && c <= 'f' ? (unsigned int)(c - 'a' + 10)
							: 16;

		if (d == 16)
			return NULL;
		token = token << 4 | d;
	}
	expire_locked(now_s());
	for (i = 0; token && i < REMOTE_MAX_QUERIES; i++) {
		if (queries[i].token == token) {
			queries[i].used = now_s();
			return &queries[i];
		}
	}
	return NULL;
}

/* POST queries/{token}/add or /delete: the identifiers sent, with the Status of each */
static enum MHD_Result add_or_delete(struct MHD_Connection *conn, HANDLE h, bool add,
				     struct body *b)
{
	void *out;
	size_t len;
	ULONG st;

	if (b->len > UINT32_MAX)
		return refuse(conn, MHD_HTTP_CONTENT_TOO_LARGE, "too many identifiers");
	/* an empty body is the call with no identifiers: its own ERROR_INVALID_PARAMETER */
	st = add ? PerfAddCounters(h, (PPERF_COUNTER_IDENTIFIER)b->data, (DWORD)b->len)
		 : PerfDeleteCounters(h, (PPERF_COUNTER_IDENTIFIER)b->data, (DWORD)b->len);
	if (st != ERROR_SUCCESS)
		return answer(conn, st, NULL, 0);
	/* the body, its Status fields written, goes back as the answer: MHD frees it */
	out = b->data;
	len = b->len;
	b->data = NULL;
	b->len = b->cap = 0;
	return answer(conn, st, out, len);
}

/* queries[/{token}[/op]]: @rest is what follows "queries" */
static enum MHD_Result serve_query(struct MHD_Connection *conn, const char *method,
				   const char *rest, struct body *b)
{
	const char *op;
	struct remote_query *q;
	enum MHD_Result ret;
	size_t len;

	if (!*rest) {
		if (strcmp(method, MHD_HTTP_METHOD_POST))
			return refuse(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "open a query with POST");
		return open_query(conn);
	}
	if (*rest != '/')
		return refuse(conn, MHD_HTTP_NOT_FOUND, "no such operation");
	rest++;
	op = strchr(rest, '/');
	len = op ? (size_t)(op - rest) : strlen(rest);
	pthread_mutex_lock(&queries_lock);
	q = find_query_locked(rest, len);
	if (!q) {
		pthread_mutex_unlock(&queries_lock);
		return refuse(conn, MHD_HTTP_NOT_FOUND, "no such query (closed, or idle too long)");
	}
	/* the calls on one query are serialised by the library; the table by this lock */
	if (!op && !strcmp(method, MHD_HTTP_METHOD_DELETE)) {
		ULONG st = PerfCloseQueryHandle(q->handle);

		memset(q, 0, sizeof(*q));
		pthread_mutex_unlock(&queries_lock);
		return answer(conn, st, NULL, 0);
	}
	if (!op) {
		pthread_mutex_unlock(&queries_lock);
		return refuse(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "close a query with DELETE");
	}
	op++;
	if (!strcmp(op, "add") || !strcmp(op, "delete")) {
		if (strcmp(method, MHD_HTTP_METHOD_POST))
			ret = refuse(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "add and delete take POST");
		else
			ret = add_or_delete(conn, q->handle, !strcmp(op, "add"), b);
	} else if (!strcmp(op, "info") || !strcmp(op, "data")) {
		if (strcmp(method, MHD_HTTP_METHOD_GET))
			ret = refuse(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "info and data take GET");
		else if (!strcmp(op, "info"))
			ret = answer_sized(conn, call_info, q->handle, &q->info_cap);
		else
			ret = answer_sized(conn, call_data, q->handle, &q->data_cap);
	} else {
		ret = refuse(conn, MHD_HTTP_NOT_FOUND, "no such operation on a query");
	}
	pthread_mutex_unlock(&queries_lock);
	return ret;
}

void remote_shutdown(void)
{
	size_t i;

	pthread_mutex_lock(&pool_lock);
	for (i = 0; i < ANSWER_POOL; i++) {
		free(pool[i].data);
		pool[i] = (struct answer_buf){0};
	}
	pthread_mutex_unlock(&pool_lock);

	pthread_mutex_lock(&queries_lock);
	for (i = 0; i < REMOTE_MAX_QUERIES; i++) {
		if (queries[i].token)
			PerfCloseQueryHandle(queries[i].handle);
		memset(&queries[i], 0, sizeof(queries[i]));
	}
	pthread_mutex_unlock(&queries_lock);
}

/* ---- the handler ------------------------------------------------------------------ */

/* the peer is on a loopback address (127.0.0.0/8, ::1, ::ffff:127.0.0.0/104) */
static bool peer_loopback(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	if (!sa)
		return false;
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

void remote_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct body *b = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (b)
		free(b->data);
	free(b);
	*con_cls = NULL;
}

/* append an upload chunk to @b (at most REMOTE_MAX_BODY bytes are kept) */
static void body_add(struct body *b, const char *data, size_t len)
{
	char *grown;
	size_t cap;

	if (b->too_large || len > REMOTE_MAX_BODY - b->len) {
		b->too_large = true;
		return;
	}
	if (b->len + len > b->cap) {
		cap = b->cap ? b->cap : 4096;
		while (cap < b->len + len)
			cap *= 2;
		grown = realloc(b->data, cap);
		if (!grown) {
			b->too_large = true;
			return;
		}
		b->data = grown;
		b->cap = cap;
	}
	memcpy(b->data + b->len, data, len);
	b->len += len;
}

enum MHD_Result remote_handle(struct MHD_Connection *conn, const char *url, const char *method,
			      const char *upload_data, size_t *upload_data_size, void **con_cls)
{
	const char *path = url + strlen(REMOTE_PREFIX);
	struct body *b = *con_cls;

	current.method = method;
	current.url = url;
	if (!b) {
		/* the first call of a request: its headers only */
		b = calloc(1, sizeof(*b));
		if (!b)
			return MHD_NO;
		*con_cls = b;
		return MHD_YES;
	}
	if (*upload_data_size) {
		body_add(b, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (!policy.any_peer && !peer_loopback(conn))
		return refuse(conn, MHD_HTTP_FORBIDDEN,
			      "the consumer operations are served to loopback peers only, unless "
			      "TLS is configured (--web.config.file; docs/REMOTE.md)");
	if (b->too_large)
		return refuse(conn, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large");
	if (!strncmp(path, "queries", 7))
		return serve_query(conn, method, path + 7, b);
	if (strcmp(method, MHD_HTTP_METHOD_GET))
		return refuse(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "counter sets are read with GET");
	if (!strcmp(path, "countersets"))
		return answer_sized(conn, sized_sets, NULL, NULL);
	if (!strncmp(path, "countersets/", 12))
		return serve_set(conn, path + 12);
	return refuse(conn, MHD_HTTP_NOT_FOUND, "no such consumer operation");
}

// SPDX-License-Identifier: MIT
/*
 * remote.c - the consumer API on another machine (docs/REMOTE.md): each call becomes one
 * request of that machine's perflib-exporter under /perflib/v1/, whose answer is the bytes
 * the call made there returned. The transport (libcurl, client settings, one kept
 * connection per host) is the remote module, libperflib-remote.so.1, dlopened on the first
 * remote name (common/remote_module.h): local use loads nothing and touches no network.
 *
 * Errors: the machine cannot be reached (DNS, refused, unreachable, timed out, cut off in
 * the middle, or no perflib server answers there) -> ERROR_BAD_NETPATH, what Windows' own
 * consumer functions and their callers (PDH: PDH_CSTATUS_NO_MACHINE) take for an absent
 * machine; TLS or credentials refused -> ERROR_ACCESS_DENIED; the call's own code otherwise
 * (X-Perflib-Status), so a missing set, counter or instance reads as it does locally.
 *
 * Query handles are numbers with their own tag ("RQ"), looked up in this file's list as
 * query.c does for local ones. The query lives on the server (a token); the client keeps
 * the add and delete calls made on it, so when the server forgot the query (restarted, or
 * the query idled out) it is opened again and the calls replayed before the request is
 * retried once: a machine that comes back is read again at the next collection. The log is
 * compacted to one add of the query's PerfQueryCounterInfo when it grows.
 *
 * One request per sample: the server always sends the whole answer, so an info or data
 * call whose buffer is too small keeps the answer it got (ERROR_NOT_ENOUGH_MEMORY and the
 * size, as locally) and the caller's next call of the same operation on the handle, when
 * its buffer fits that answer, is served from it instead of taking another sample there.
 * The kept answer goes at any other call on the handle (a call whose buffer is still too
 * small, another sizing call, takes a new sample) and after PENDING_MAX_NS: a caller that
 * sizes once and samples much later reads a fresh sample.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "consumer.h"
#include "remote_client.h"
#include "remote_module.h"

#define RQUERY_TAG 0x5251000000000000ull /* "RQ": remote handles are tag | sequence */
#define TAG_MASK 0xFFFF000000000000ull
#define LOG_COMPACT 32		     /* add/delete calls kept before the log is compacted */
#define PENDING_MAX_NS 1000000000ull /* how long an answer that did not fit is kept */

/* one add or delete call made on a remote query, as sent */
struct rop {
	bool add;
	uint8_t *blocks;
	size_t len;
};

struct rquery {
	uint64_t handle;      /* RQUERY_TAG | sequence */
	unsigned int refs;    /* users (rqueries_lock) */
	bool closed;	      /* removed from the list */
	pthread_mutex_t lock; /* serialises the calls on the query */
	char *host;	      /* the machine, UTF-8 */
	char path[32];	      /* "queries/<token>", "" while the server holds none */
	struct rop *ops;      /* the add and delete calls, in order */
	size_t nr_ops, cap_ops;
	/* the last info or data answer, when it did not fit the caller's buffer */
	const char *pending_op; /* "info", "data"; NULL: none kept */
	uint8_t *pending;	/* malloc'd */
	size_t pending_len;
	uint64_t pending_ns; /* CLOCK_MONOTONIC when it arrived */
	struct rquery *next;
};

static pthread_mutex_t rqueries_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rquery *rqueries;
static uint64_t next_handle = 1;

/* ---- the module ------------------------------------------------------------------------ */

static pthread_once_t module_once = PTHREAD_ONCE_INIT;
static const struct perflib_remote_ops *module;

static void module_warn(const char *text)
{
	pr_warn("%s\n", text);
}

/*
 * PERFLIB_REMOTE_MODULE (a path; ignored in set-id programs), else the module beside the
 * object that holds this code (libperflib.so in the build tree or LIBDIR; a tool linked
 * with libperflib.a: the build tree has a link beside the tools), else the one in the
 * LIBDIR of the build, else the soname through the loader's search path
 */
static void module_load(void)
{
	const char *path = secure_getenv("PERFLIB_REMOTE_MODULE");
	perflib_remote_entry_fn entry;
	void *dl = NULL;
	Dl_info info;

	if (path && *path) {
		dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	} else {
		if (dladdr((void *)module_load, &info) && info.dli_fname &&
		    strchr(info.dli_fname, '/')) {
			char *dir = strdup(info.dli_fname), *beside = NULL;

			if (dir) {
				*strrchr(dir, '/') = 0;
				if (asprintf(&beside, "%s/" PERFLIB_REMOTE_SONAME, dir) > 0)
					dl = dlopen(beside, RTLD_NOW | RTLD_LOCAL);
				free(beside);
				free(dir);
			}
		}
#ifdef PERFLIB_LIBDIR
		if (!dl)
			dl = dlopen(PERFLIB_LIBDIR "/" PERFLIB_REMOTE_SONAME,
				    RTLD_NOW | RTLD_LOCAL);
#endif
		if (!dl)
			dl = dlopen(PERFLIB_REMOTE_SONAME, RTLD_NOW | RTLD_LOCAL);
	}
	if (!dl) {
		pr_warn("remote machines need %s: %s\n", PERFLIB_REMOTE_SONAME, dlerror());
		return;
	}
	entry = (perflib_remote_entry_fn)dlsym(dl, PERFLIB_REMOTE_ENTRY);
	module = entry ? entry() : NULL;
	if (!module || module->abi != PERFLIB_REMOTE_ABI || module->size < sizeof(*module)) {
		pr_warn("%s: not the module of this libperflib\n", PERFLIB_REMOTE_SONAME);
		module = NULL;
		dlclose(dl);
		return;
	}
	module->init(module_warn);
}

/* ---- requests --------------------------------------------------------------------------- */

/* an HTTP code that made no call, as a Win32 code */
static ULONG http_error(long http)
{
	switch (http) {
	case 401: /* no or wrong credentials */
	case 403: /* refused (a client the server does not serve) */
		return ERROR_ACCESS_DENIED;
	case 400: /* malformed: nothing this file sends */
	case 413: /* a body over the server's limit */
		return ERROR_INVALID_PARAMETER;
	case 429: /* too many password checks at once: try later */
	case 503: /* the server holds as many queries as it may */
		return ERROR_BUSY;
	default: /* 404 and others: no perflib server of this protocol there */
		return ERROR_BAD_NETPATH;
	}
}

/*
 * one request; ERROR_SUCCESS with the answer in *@ret (its body the caller's to free, or
 * at ret->dst, set by the caller with ret->dst_cap, when it fit there) when the call was
 * made there and succeeded; its code, or the transport's, otherwise (no body). *@ret_http
 * (may be NULL) gets the HTTP code, 0 without an answer.
 */
static ULONG request(const char *host, const char *method, const char *path, const void *body,
		     size_t len, struct perflib_remote_reply *ret, long *ret_http)
{
	struct perflib_remote_reply r = {.dst = ret->dst, .dst_cap = ret->dst_cap};
	enum perflib_remote_fail fail;

	if (ret_http)
		*ret_http = 0;
	pthread_once(&module_once, module_load);
	if (!module)
		return ERROR_BAD_NETPATH;
	fail = module->request(host, method, path, body, len, &r);
	switch (fail) {
	case PERFLIB_REMOTE_OK:
		break;
	case PERFLIB_REMOTE_DENIED:
		return ERROR_ACCESS_DENIED;
	case PERFLIB_REMOTE_NOMEM:
		return ERROR_OUTOFMEMORY;
	default:
		return ERROR_BAD_NETPATH;
	}
	if (ret_http)
		*ret_http = r.http;
	if (r.http != 200 || r.win32 < 0 || r.len > UINT32_MAX) {
		free(r.body);
		/* 200 without a status: some other HTTP server listens there */
		return r.http != 200 ? http_error(r.http) : ERROR_BAD_NETPATH;
	}
	if (r.win32 != ERROR_SUCCESS) {
		free(r.body);
		return (ULONG)r.win32;
	}
	*ret = r;
	return ERROR_SUCCESS;
}

/* the answer's body into the caller's buffer of @cap bytes (if not there yet), by the size rule */
static ULONG put_answer(struct perflib_remote_reply *r, void *buf, DWORD cap, LPDWORD ret_actual)
{
	ULONG ret = perflib_buffer_result((DWORD)r->len, cap, ret_actual);

	if (ret == ERROR_SUCCESS && r->len && !r->in_dst)
		memcpy(buf, r->body, r->len);
	free(r->body);
	return ret;
}

/* "countersets/<guid>/" + @what into @path (96 bytes) */
static void set_path(char *path, const GUID *guid, const char *what)
{
	char text[37];

	snprintf(path, 96, "countersets/%s/%s", perflib_guid_to_string(guid, text), what);
}

ULONG perflib_remote_sets(const char *host, LPGUID ids, DWORD count, LPDWORD ret_count)
{
	struct perflib_remote_reply r = {.dst = (uint8_t *)ids,
					 .dst_cap = ids ? (size_t)count * sizeof(GUID) : 0};
	ULONG ret = request(host, "GET", "countersets", NULL, 0, &r, NULL);

	if (ret)
		return ret;
	if (r.len % sizeof(GUID)) {
		free(r.body);
		return ERROR_INVALID_DATA;
	}
	ret = perflib_buffer_result((DWORD)(r.len / sizeof(GUID)), count, ret_count);
	if (ret == ERROR_SUCCESS && r.len && !r.in_dst)
		memcpy(ids, r.body, r.len);
	free(r.body);
	return ret;
}

ULONG perflib_remote_instances(const char *host, LPCGUID guid, PPERF_INSTANCE_HEADER buf, DWORD cb,
			       LPDWORD ret_cb)
{
	struct perflib_remote_reply r = {.dst = (uint8_t *)buf, .dst_cap = buf ? cb : 0};
	char path[96];
	ULONG ret;

	set_path(path, guid, "instances");
	ret = request(host, "GET", path, NULL, 0, &r, NULL);
	return ret ? ret : put_answer(&r, buf, cb, ret_cb);
}

ULONG perflib_remote_reg(const char *host, LPCGUID guid, PerfRegInfoType code, DWORD lang,
			 LPBYTE buf, DWORD cb, LPDWORD ret_cb)
{
	struct perflib_remote_reply r = {.dst = buf, .dst_cap = buf ? cb : 0};
	char path[96], what[48];
	ULONG ret;

	snprintf(what, sizeof(what), "registration?code=%u&lang=%u", (unsigned int)code,
		 (unsigned int)lang);
	set_path(path, guid, what);
	ret = request(host, "GET", path, NULL, 0, &r, NULL);
	return ret ? ret : put_answer(&r, buf, cb, ret_cb);
}

/* ---- query handles ---------------------------------------------------------------------- */

bool perflib_remote_handle(HANDLE h)
{
	return ((uint64_t)(uintptr_t)h & TAG_MASK) == RQUERY_TAG;
}

static struct rquery *rquery_get(HANDLE h)
{
	uint64_t id = (uint64_t)(uintptr_t)h;
	struct rquery *q;

	pthread_mutex_lock(&rqueries_lock);
	for (q = rqueries; q && q->handle != id; q = q->next)
		;
	if (q)
		q->refs++;
	pthread_mutex_unlock(&rqueries_lock);
	return q;
}

static void rops_clear(struct rquery *q)
{
	size_t i;

	for (i = 0; i < q->nr_ops; i++)
		free(q->ops[i].blocks);
	q->nr_ops = 0;
}

/* the kept answer gone (q->lock held) */
static void pending_drop(struct rquery *q)
{
	free(q->pending);
	q->pending = NULL;
	q->pending_op = NULL;
	q->pending_len = 0;
}

static void rquery_put(struct rquery *q)
{
	bool last;

	pthread_mutex_lock(&rqueries_lock);
	last = --q->refs == 0 && q->closed;
	pthread_mutex_unlock(&rqueries_lock);
	if (!last)
		return;
	rops_clear(q);
	pending_drop(q);
	free(q->ops);
	free(q->host);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

/* POST queries: a query on the server, its path in q->path */
static ULONG server_open(struct rquery *q)
{
	struct perflib_remote_reply r = {0};
	ULONG ret = request(q->host, "POST", "queries", NULL, 0, &r, NULL);
	size_t i;

	if (ret)
		return ret;
	/* the token: 16 lower-case hex digits */
	for (i = 0; i < r.len && i < 16; i++)
		if (!((r.body[i] >= '0' && r.body[i] <= '9') ||
		      (r.body[i] >= 'a' && r.body[i] <= 'f')))
			break;
	if (r.len != 16 || i != 16) {
		free(r.body);
		return ERROR_BAD_NETPATH;
	}
	snprintf(q->path, sizeof(q->path), "queries/%.16s", (const char *)r.body);
	free(r.body);
	return ERROR_SUCCESS;
}

/* a query on the server with every add and delete made so far (the log replayed) */
static ULONG server_reopen(struct rquery *q)
{
	struct perflib_remote_reply r = {0};
	char path[48];
	ULONG ret;
	size_t i;

	q->path[0] = 0;
	ret = server_open(q);
	for (i = 0; !ret && i < q->nr_ops; i++) {
		snprintf(path, sizeof(path), "%s/%s", q->path, q->ops[i].add ? "add" : "delete");
		ret = request(q->host, "POST", path, q->ops[i].blocks, q->ops[i].len, &r, NULL);
		if (!ret)
			free(r.body);
		else if (ret != ERROR_BAD_NETPATH && ret != ERROR_ACCESS_DENIED &&
			 ret != ERROR_OUTOFMEMORY)
			ret = ERROR_SUCCESS; /* the call's own answer, as the first time */
	}
	if (ret)
		q->path[0] = 0;
	return ret;
}

/*
 * @method of the query's @op ("add", "info", ...; NULL: the query itself) with @body; when
 * the server does not know the query (404), it is opened again, the log replayed and the
 * request made once more
 */
static ULONG query_request(struct rquery *q, const char *method, const char *op, const void *body,
			   size_t len, struct perflib_remote_reply *ret)
{
	char path[48];
	long http = 0;
	ULONG st;
	int tries;

	for (tries = 0; tries < 2; tries++) {
		if (!q->path[0]) {
			st = server_reopen(q);
			if (st)
				return st;
		}
		snprintf(path, sizeof(path), "%s%s%s", q->path, op ? "/" : "", op ? op : "");
		st = request(q->host, method, path, body, len, ret, &http);
		if (http != 404)
			return st;
		q->path[0] = 0; /* forgotten there: again, with the log */
	}
	return st;
}

ULONG perflib_remote_open(const char *host, HANDLE *ret_query)
{
	struct rquery *q = calloc(1, sizeof(*q));
	ULONG st;

	if (!q)
		return ERROR_OUTOFMEMORY;
	q->host = strdup(host);
	if (!q->host) {
		free(q);
		return ERROR_OUTOFMEMORY;
	}
	/* Windows binds to the machine when the query is opened: an absent one fails here */
	st = server_open(q);
	if (st) {
		free(q->host);
		free(q);
		return st;
	}
	pthread_mutex_init(&q->lock, NULL);
	pthread_mutex_lock(&rqueries_lock);
	q->handle = RQUERY_TAG | next_handle++;
	q->refs = 1;
	q->next = rqueries;
	rqueries = q;
	pthread_mutex_unlock(&rqueries_lock);
	*ret_query = (HANDLE)(uintptr_t)q->handle;
	return ERROR_SUCCESS;
}

/* keep @len bytes of @blocks as an add (@add) or delete call; false when out of memory */
static bool rop_add(struct rquery *q, bool add, const void *blocks, size_t len)
{
	struct rop *grown;
	uint8_t *copy;

	if (q->nr_ops == q->cap_ops) {
		size_t cap = q->cap_ops ? q->cap_ops * 2 : 4;

		grown = realloc(q->ops, cap * sizeof(*grown));
		if (!grown)
			return false;
		q->ops = grown;
		q->cap_ops = cap;
	}
	copy = malloc(len ? len : 1);
	if (!copy)
		return false;
	memcpy(copy, blocks, len);
	q->ops[q->nr_ops++] = (struct rop){.add = add, .blocks = copy, .len = len};
	return true;
}

/* the log as one add of the query's current specifications (PerfQueryCounterInfo) */
static void rops_compact(struct rquery *q)
{
	struct perflib_remote_reply r = {0};

	if (query_request(q, "GET", "info", NULL, 0, &r))
		return; /* kept as it is: still right, only longer */
	rops_clear(q);
	if (r.len && !rop_add(q, true, r.body, r.len))
		q->path[0] = 0; /* cannot be replayed any more: reopened empty */
	free(r.body);
}

ULONG perflib_remote_counters(HANDLE h, PPERF_COUNTER_IDENTIFIER blocks, DWORD cb, bool add)
{
	struct rquery *q = rquery_get(h);
	struct perflib_remote_reply r = {0};
	ULONG st;

	if (!q)
		return ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&q->lock);
	pending_drop(q);
	st = query_request(q, "POST", add ? "add" : "delete", blocks, cb, &r);
	if (!st) {
		/* the blocks come back with each one's Status: the caller's buffer gets them */
		if (r.len == cb)
			memcpy(blocks, r.body, cb);
		else
			st = ERROR_INVALID_DATA;
		free(r.body);
	}
	if (!st && !rop_add(q, add, blocks, cb))
		q->path[0] = 0; /* the log is incomplete: the next call starts the query again */
	if (!st && q->nr_ops > LOG_COMPACT)
		rops_compact(q);
	pthread_mutex_unlock(&q->lock);
	rquery_put(q);
	return st;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * GET of the query's @op (info, data) into the caller's buffer by the size rule; an answer
 * that does not fit is kept for the next call (the head comment)
 */
static ULONG remote_sized(HANDLE h, const char *op, void *buf, DWORD cb, LPDWORD ret_cb)
{
	struct rquery *q = rquery_get(h);
	struct perflib_remote_reply r = {.dst = buf, .dst_cap = buf ? cb : 0};
	uint64_t arrived;
	ULONG st;

	if (!q)
		return ERROR_INVALID_HANDLE;
	if (!ret_cb || (!buf && cb)) {
		rquery_put(q);
		return ERROR_INVALID_PARAMETER;
	}
	pthread_mutex_lock(&q->lock);
	if (q->pending_op && !strcmp(q->pending_op, op) && q->pending_len <= cb &&
	    mono_ns() - q->pending_ns < PENDING_MAX_NS) {
		/* the answer that did not fit last time: this call's, without a request */
		r = (struct perflib_remote_reply){.body = q->pending, .len = q->pending_len};
		arrived = q->pending_ns;
		q->pending = NULL;
		st = ERROR_SUCCESS;
	} else {
		st = query_request(q, "GET", op, NULL, 0, &r);
		arrived = mono_ns();
	}
	pending_drop(q);
	if (!st && r.len > cb && r.len <= UINT32_MAX && !r.in_dst) {
		/* too small: kept whole for the call that comes with the size */
		q->pending = r.body;
		q->pending_len = r.len;
		q->pending_op = op;
		q->pending_ns = arrived;
		r.body = NULL;
	}
	if (!st)
		st = put_answer(&r, buf, cb, ret_cb);
	pthread_mutex_unlock(&q->lock);
	rquery_put(q);
	return st;
}

ULONG perflib_remote_info(HANDLE h, PPERF_COUNTER_IDENTIFIER buf, DWORD cb, LPDWORD ret_cb)
{
	return remote_sized(h, "info", buf, cb, ret_cb);
}

ULONG perflib_remote_data(HANDLE h, PPERF_DATA_HEADER buf, DWORD cb, LPDWORD ret_cb)
{
	return remote_sized(h, "data", buf, cb, ret_cb);
}

ULONG perflib_remote_close(HANDLE h)
{
	struct rquery *q = rquery_get(h), **pp;
	struct perflib_remote_reply r = {0};

	if (!q)
		return ERROR_INVALID_HANDLE;
	pthread_mutex_lock(&rqueries_lock);
	for (pp = &rqueries; *pp && *pp != q; pp = &(*pp)->next)
		;
	if (*pp) {
		*pp = q->next;
		q->closed = true;
		q->refs--; /* the list's reference */
	}
	pthread_mutex_unlock(&rqueries_lock);
	/*
	 * the server's query goes too when it can be reached; when not, it idles out there
	 * (docs/REMOTE.md): the handle is closed here either way
	 */
	pthread_mutex_lock(&q->lock);
	pending_drop(q);
	if (q->path[0] && !request(q->host, "DELETE", q->path, NULL, 0, &r, NULL))
		free(r.body);
	pthread_mutex_unlock(&q->lock);
	rquery_put(q);
	return ERROR_SUCCESS;
}

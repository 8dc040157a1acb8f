// SPDX-License-Identifier: MIT
/*
 * module.c - libperflib-remote.so.1, the transport of the consumer API to other machines
 * (common/remote_module.h): libperflib dlopens it for the first machine name that is not
 * this machine's. One libcurl easy handle per host, kept for the life of the process, so
 * its connection (and TLS session) is reused from one request to the next: `typeperf -si 1`
 * connects once, not every second.
 *
 * Client settings (docs/REMOTE.md "Client settings"), looked up in this order, the later
 * winning: built-in defaults; the file's lines before any section; the environment
 * (PERFLIB_REMOTE_*); the file's [host] section for that host; a port in the name itself
 * ("host:port"). The file is $PERFLIB_REMOTE_CONFIG, else
 * ${XDG_CONFIG_HOME:-$HOME/.config}/perflib/remote.conf; it is read once per process.
 */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "remote_module.h"

#define DEFAULT_PORT 9419	/* perflib-exporter's default (--listen 127.0.0.1:9419) */
#define DEFAULT_TIMEOUT_MS 3000 /* connect and whole request, each */
#define MAX_BODY 0xFFFFFFFFull	/* answers are DWORD-sized */
#define HOST_MAX 255		/* a DNS name */
#define EXPORT __attribute__((visibility("default")))

/* what one host is reached with; strings malloc'd (NULL: not set) */
struct settings {
	char *scheme; /* "http" or "https"; NULL: https when a CA is set, else http */
	long port;    /* 0: not set */
	long timeout_ms;
	char *ca, *cert, *key; /* PEM files */
	char *user, *passfile;
};

/* a [section] of the file: the host it names and its settings */
struct section {
	char *host;
	struct settings s;
	struct section *next;
};

/* one host's connection, kept for the process's life */
struct conn {
	char *name;	      /* as given (lower case) */
	char *base;	      /* "scheme://host:port/perflib/v1/" */
	CURL *curl;	      /* NULL when libcurl could not make one */
	pthread_mutex_t lock; /* one request at a time on the connection */
	struct conn *next;
};

static void (*warn_fn)(const char *text);
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct settings global; /* defaults < file's global lines < environment */
static struct section *sections;
static bool curl_ok;
static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;
static struct conn *conns;

static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (warn_fn)
		warn_fn(text);
}

static void set_str(char **dst, const char *v)
{
	char *c = strdup(v);

	if (!c)
		return; /* out of memory: the setting stays as it was */
	free(*dst);
	*dst = c;
}

/* a decimal number in [lo, hi] */
static bool parse_long(const char *v, long lo, long hi, long *ret)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || end == v || *end || n < lo || n > hi)
		return false;
	*ret = n;
	return true;
}

/* timeouts are seconds, fractions allowed ("0.5"), at most an hour */
static bool parse_seconds(const char *v, long *ret_ms)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || !(d > 0) || d > 3600)
		return false;
	*ret_ms = (long)(d * 1000 + 0.5);
	if (*ret_ms < 1)
		*ret_ms = 1;
	return true;
}

/* one setting @key = @v into @s; false for an unknown key or a bad value */
static bool setting(struct settings *s, const char *key, const char *v)
{
	if (!strcmp(key, "port"))
		return parse_long(v, 1, 65535, &s->port);
	if (!strcmp(key, "timeout"))
		return parse_seconds(v, &s->timeout_ms);
	if (!strcmp(key, "scheme")) {
		if (strcmp(v, "http") && strcmp(v, "https"))
			return false;
		set_str(&s->scheme, v);
	} else if (!strcmp(key, "ca")) {
		set_str(&s->ca, v);
	} else if (!strcmp(key, "cert")) {
		set_str(&s->cert, v);
	} else if (!strcmp(key, "key")) {
		set_str(&s->key, v);
	} else if (!strcmp(key, "user")) {
		set_str(&s->user, v);
	} else if (!strcmp(key, "passfile")) {
		set_str(&s->passfile, v);
	} else {
		return false;
	}
	return true;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static void lower(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* the file's global lines into global, its sections into sections; a bad line is warned of */
static void read_file(const char *path)
{
	struct section *cur = NULL, **tail = &sections;
	char line[1024];
	unsigned int nr = 0;
	FILE *f = fopen(path, "re");

	if (!f) {
		if (errno != ENOENT)
			warn("remote settings %s: %s", path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s = trim(line), *eq;

		nr++;
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			char *end = strchr(s, ']');

			if (!end || end[1] || end == s + 1) {
				warn("remote settings %s:%u: bad section", path, nr);
				cur = NULL;
				continue;
			}
			*end = 0;
			cur = calloc(1, sizeof(*cur));
			if (cur)
				cur->host = strdup(trim(s + 1));
			if (!cur || !cur->host) {
				free(cur);
				cur = NULL;
				continue;
			}
			lower(cur->host);
			while (cur->host[0] == '\\')
				memmove(cur->host, cur->host + 1, strlen(cur->host));
			*tail = cur;
			tail = &cur->next;
			continue;
		}
		eq = strchr(s, '=');
		if (eq)
			*eq = 0;
		if (!eq || !setting(cur ? &cur->s : &global, trim(s), trim(eq + 1)))
			warn("remote settings %s:%u: ignored (expected KEY = VALUE with a known "
			     "key and a good value)",
			     path, nr);
	}
	fclose(f);
}

static void load(void)
{
	static const struct {
		const char *env, *key;
	} envs[] = {
		{"PERFLIB_REMOTE_PORT", "port"},
		{"PERFLIB_REMOTE_SCHEME", "scheme"},
		{"PERFLIB_REMOTE_CA", "ca"},
		{"PERFLIB_REMOTE_CERT", "cert"},
		{"PERFLIB_REMOTE_KEY", "key"},
		{"PERFLIB_REMOTE_USER", "user"},
		{"PERFLIB_REMOTE_PASSFILE", "passfile"},
		{"PERFLIB_REMOTE_TIMEOUT", "timeout"},
	};
	const char *file = secure_getenv("PERFLIB_REMOTE_CONFIG"), *v;
	char *path = NULL;
	size_t i;

	global.timeout_ms = DEFAULT_TIMEOUT_MS;
	if (file) {
		if (*file)
			read_file(file);
	} else if ((v = secure_getenv("XDG_CONFIG_HOME")) && *v) {
		if (asprintf(&path, "%s/perflib/remote.conf", v) > 0)
			read_file(path);
	} else if ((v = secure_getenv("HOME")) && *v) {
		if (asprintf(&path, "%s/.config/perflib/remote.conf", v) > 0)
			read_file(path);
	}
	free(path);
	for (i = 0; i < sizeof(envs) / sizeof(envs[0]); i++) {
		v = secure_getenv(envs[i].env);
		if (v && *v && !setting(&global, envs[i].key, v))
			warn("%s='%s' ignored: not a valid %s", envs[i].env, v, envs[i].key);
	}
	curl_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
	if (!curl_ok)
		warn("libcurl could not be initialised");
}

/* @host's settings: global, overridden by its section's */
static struct settings resolve(const char *host)
{
	struct settings s = global;
	const struct section *sec;

	for (sec = sections; sec; sec = sec->next) {
		if (strcmp(sec->host, host))
			continue;
#define OVER(f)                                                                                    \
	do {                                                                                       \
		if (sec->s.f)                                                                      \
			s.f = sec->s.f;                                                            \
	} while (0)
		OVER(scheme);
		OVER(port);
		OVER(timeout_ms);
		OVER(ca);
		OVER(cert);
		OVER(key);
		OVER(user);
		OVER(passfile);
#undef OVER
	}
	return s;
}

/*
 * split @name into host (lower case, into @host of HOST_MAX + 1) and port (0: none);
 * false when it is no host name, IPv4 or [IPv6] address
 */
static bool split_name(const char *name, char *host, long *ret_port)
{
	const char *end, *colon;
	size_t len, i;

	*ret_port = 0;
	if (name[0] == '[') {
		end = strchr(name, ']');
		if (!end)
			return false;
		colon = end[1] == ':' ? end + 1 : NULL;
		if (end[1] && !colon)
			return false;
		len = (size_t)(end + 1 - name);
		for (i = 1; i + 1 < len; i++)
			if (!isxdigit((unsigned char)name[i]) && name[i] != ':' && name[i] != '.')
				return false;
	} else {
		colon = strchr(name, ':');
		len = colon ? (size_t)(colon - name) : strlen(name);
		for (i = 0; i < len; i++)
			if (!isalnum((unsigned char)name[i]) && name[i] != '-' && name[i] != '.' &&
			    name[i] != '_')
				return false;
	}
	if (!len || len > HOST_MAX)
		return false;
	if (colon && !parse_long(colon + 1, 1, 65535, ret_port))
		return false;
	memcpy(host, name, len);
	host[len] = 0;
	lower(host);
	return true;
}

/* the first line of the password file, refused when others may read it (as .pgpass) */
static char *read_password(const char *file)
{
	char buf[1024], *nl, *pw = NULL;
	struct stat st;
	FILE *f = fopen(file, "re");

	if (!f) {
		warn("password file %s: %s", file, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) || (st.st_mode & 077)) {
		warn("password file %s: ignored, its mode lets others read it (chmod 600)", file);
	} else if (fgets(buf, sizeof(buf), f)) {
		nl = strchr(buf, '\n');
		if (nl)
			*nl = 0;
		pw = strdup(buf);
		explicit_bzero(buf, sizeof(buf));
	}
	fclose(f);
	return pw;
}

/* room for @want bytes at r->body (doubling), what was at r->dst moved there; false: ENOMEM */
static bool body_room(struct perflib_remote_reply *r, size_t want)
{
	size_t cap = r->cap ? r->cap : 65536;
	uint8_t *grown;

	while (cap < want)
		cap *= 2;
	grown = realloc(r->body, cap);
	if (!grown)
		return false;
	if (r->in_dst && r->len)
		memcpy(grown, r->dst, r->len);
	r->in_dst = false;
	r->body = grown;
	r->cap = cap;
	return true;
}

/*
 * the body goes straight into the caller's buffer while it fits (no copy after the
 * transfer), else into a buffer of its own
 */
static size_t on_body(char *data, size_t size, size_t nmemb, void *ctx)
{
	struct perflib_remote_reply *r = ctx;
	size_t n = size * nmemb;

	if (!n)
		return 0;
	if (n > MAX_BODY - r->len)
		return 0; /* larger than any answer can be: the transfer fails */
	if (r->in_dst && r->len + n > r->dst_cap && !body_room(r, r->len + n))
		return 0;
	if (!r->in_dst && r->len + n > r->cap && !body_room(r, r->len + n))
		return 0;
	memcpy((r->in_dst ? r->dst : r->body) + r->len, data, n);
	r->len += n;
	return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ctx)
{
	static const char name[] = "x-perflib-status:", length[] = "content-length:";
	struct perflib_remote_reply *r = ctx;
	size_t n = size * nmemb, k = sizeof(name) - 1, kl = sizeof(length) - 1;
	char v[24];
	long st;

	/* a body that will not fit the caller's buffer: its own buffer at once, whole */
	if (n > kl && !strncasecmp(data, length, kl) && n - kl < sizeof(v)) {
		memcpy(v, data + kl, n - kl);
		v[n - kl] = 0;
		if (parse_long(trim(v), 0, LONG_MAX, &st) && (uint64_t)st <= MAX_BODY &&
		    (size_t)st > r->dst_cap && !r->len && !r->body)
			body_room(r, (size_t)st ? (size_t)st : 1);
	}
	if (n > k && !strncasecmp(data, name, k) && n - k < sizeof(v)) {
		memcpy(v, data + k, n - k);
		v[n - k] = 0;
		if (parse_long(trim(v), 0, 0xFFFFFFFFl, &st))
			r->win32 = st;
	}
	return n;
}

/* a new connection for @name: its URL and a configured easy handle */
static struct conn *conn_new(const char *name)
{
	char host[HOST_MAX + 1];
	struct settings s;
	struct conn *c;
	const char *scheme;
	char *pw = NULL;
	long port;

	if (!split_name(name, host, &port))
		return NULL;
	s = resolve(host);
	if (port)
		s.port = port;
	if (!s.port)
		s.port = DEFAULT_PORT;
	scheme = s.scheme ? s.scheme : s.ca ? "https" : "http";
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->name = strdup(name);
	if (!c->name || asprintf(&c->base, "%s://%s:%ld/perflib/v1/", scheme, host, s.port) < 0) {
		free(c->name);
		free(c);
		return NULL;
	}
	lower(c->name);
	pthread_mutex_init(&c->lock, NULL);
	c->curl = curl_ok ? curl_easy_init() : NULL;
	if (!c->curl)
		return c;
	curl_easy_setopt(c->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c->curl, CURLOPT_CONNECTTIMEOUT_MS, s.timeout_ms);
	curl_easy_setopt(c->curl, CURLOPT_TIMEOUT_MS, s.timeout_ms);
	curl_easy_setopt(c->curl, CURLOPT_TCP_NODELAY, 1L);
	/* large answers (PerfQueryCounterData of many instances) in few callbacks */
	curl_easy_setopt(c->curl, CURLOPT_BUFFERSIZE, 512L * 1024);
	curl_easy_setopt(c->curl, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(c->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c->curl, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c->curl, CURLOPT_HEADERFUNCTION, on_header);
	if (s.ca)
		curl_easy_setopt(c->curl, CURLOPT_CAINFO, s.ca);
	if (s.cert)
		curl_easy_setopt(c->curl, CURLOPT_SSLCERT, s.cert);
	if (s.key)
		curl_easy_setopt(c->curl, CURLOPT_SSLKEY, s.key);
	if (s.user) {
		curl_easy_setopt(c->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(c->curl, CURLOPT_USERNAME, s.user);
		if (s.passfile)
			pw = read_password(s.passfile);
		/* libcurl copies it */
		curl_easy_setopt(c->curl, CURLOPT_PASSWORD, pw ? pw : "");
		if (pw) {
			explicit_bzero(pw, strlen(pw));
			free(pw);
		}
	}
	return c;
}

/* the connection of @name, made the first time */
static struct conn *conn_get(const char *name)
{
	struct conn *c;

	pthread_mutex_lock(&conns_lock);
	for (c = conns; c && strcasecmp(c->name, name); c = c->next)
		;
	if (!c) {
		c = conn_new(name);
		if (c) {
			c->next = conns;
			conns = c;
		}
	}
	pthread_mutex_unlock(&conns_lock);
	return c;
}

/* what a failed transfer means: refused TLS, or no server to talk to */
static enum perflib_remote_fail transfer_fail(CURLcode rc, const char *err)
{
	switch (rc) {
	case CURLE_OUT_OF_MEMORY:
		return PERFLIB_REMOTE_NOMEM;
	case CURLE_URL_MALFORMAT:
		return PERFLIB_REMOTE_BADNAME;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_CRL_BADFILE:
		return PERFLIB_REMOTE_DENIED;
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
		/*
		 * TLS 1.3 servers refuse a client certificate after the handshake: the
		 * client hears an alert on its first read
		 */
		if (strstr(err, "alert") || strstr(err, "certificate"))
			return PERFLIB_REMOTE_DENIED;
		return PERFLIB_REMOTE_UNREACHABLE;
	default:
		return PERFLIB_REMOTE_UNREACHABLE;
	}
}

static enum perflib_remote_fail request(const char *name, const char *method, const char *path,
					const void *body, size_t len,
					struct perflib_remote_reply *ret)
{
	struct perflib_remote_reply r = {.win32 = -1, .dst = ret->dst, .dst_cap = ret->dst_cap};
	char err[CURL_ERROR_SIZE] = "", *url = NULL;
	struct curl_slist *hdrs = NULL;
	enum perflib_remote_fail fail = PERFLIB_REMOTE_OK;
	char host[HOST_MAX + 1];
	struct conn *c;
	long port;
	CURLcode rc;

	pthread_once(&once, load);
	if (!split_name(name, host, &port))
		return PERFLIB_REMOTE_BADNAME;
	c = conn_get(name);
	if (!c || !c->curl)
		return PERFLIB_REMOTE_NOMEM;
	if (asprintf(&url, "%s%s", c->base, path) < 0)
		return PERFLIB_REMOTE_NOMEM;
	r.in_dst = r.dst != NULL;
	pthread_mutex_lock(&c->lock);
	curl_easy_setopt(c->curl, CURLOPT_URL, url);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, err);
	curl_easy_setopt(c->curl, CURLOPT_WRITEDATA, &r);
	curl_easy_setopt(c->curl, CURLOPT_HEADERDATA, &r);
	if (!strcmp(method, "POST")) {
		/* no "Expect: 100-continue" round trip before a body */
		hdrs = curl_slist_append(hdrs, "Expect:");
		hdrs = curl_slist_append(hdrs, "Content-Type: application/octet-stream");
		curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST, NULL);
		curl_easy_setopt(c->curl, CURLOPT_POST, 1L);
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, body ? body : "");
		curl_easy_setopt(c->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	} else {
		curl_easy_setopt(c->curl, CURLOPT_HTTPGET, 1L);
		curl_easy_setopt(c->curl, CURLOPT_CUSTOMREQUEST,
				 strcmp(method, "GET") ? method : NULL);
	}
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, hdrs);
	rc = curl_easy_perform(c->curl);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &r.http);
	else
		fail = transfer_fail(rc, err);
	/* nothing of this request stays referenced by the handle */
	curl_easy_setopt(c->curl, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(c->curl, CURLOPT_POSTFIELDS, NULL);
	curl_easy_setopt(c->curl, CURLOPT_ERRORBUFFER, NULL);
	pthread_mutex_unlock(&c->lock);
	curl_slist_free_all(hdrs);
	free(url);
	if (fail) {
		free(r.body);
		return fail;
	}
	*ret = r;
	return PERFLIB_REMOTE_OK;
}

static void init(void (*fn)(const char *text))
{
	warn_fn = fn;
}

static const struct perflib_remote_ops ops = {
	.abi = PERFLIB_REMOTE_ABI,
	.size = sizeof(struct perflib_remote_ops),
	.init = init,
	.request = request,
};

EXPORT const struct perflib_remote_ops *perflib_remote_module(void)
{
	return &ops;
}

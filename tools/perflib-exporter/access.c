// SPDX-License-Identifier: MIT
/*
 * access.c - client certificates and basic authentication (access.h).
 *
 * libmicrohttpd completes the TLS handshake itself: with a client CA (or, for the two
 * client_auth_types that verify nothing, the server's own certificate) it asks the client
 * for a certificate but does not require one. What client_auth_type demands is checked here,
 * on each request, from the GnuTLS session: a request without the certificate it needs, or
 * with one that does not verify, gets 403 and no call is made.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <crypt.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "access.h"
#include "httplog.h"

#define REALM "perflib-exporter"
#define MAC_SIZE 32 /* HMAC-SHA256 */

/* a password verified once for a user, remembered as HMAC(key, password) */
struct verified {
	unsigned char mac[MAC_SIZE];
	bool valid;
};

struct access {
	const struct web_config *cfg;
	unsigned char key[MAC_SIZE]; /* random, this process only: keys the remembered MACs */
	char dummy[64];		     /* a bcrypt hash no password matches, for unknown users */
	struct verified *verified;   /* one per cfg->users */
	pthread_mutex_t lock;	     /* guards verified */
	unsigned int nr_bcrypt;	     /* bcrypt checks running now (atomic) */
};

int access_new(const struct web_config *cfg, struct access **ret)
{
	struct access *a = calloc(1, sizeof(*a));
	struct crypt_data *cd = NULL;
	char setting[CRYPT_GENSALT_OUTPUT_SIZE], pw[33];
	unsigned long cost = 10;
	const char *out;
	size_t i;
	int err = -ENOMEM;

	if (!a)
		return -ENOMEM;
	a->cfg = cfg;
	pthread_mutex_init(&a->lock, NULL);
	if (!cfg || !cfg->nr_users)
		goto done;
	a->verified = calloc(cfg->nr_users, sizeof(*a->verified));
	cd = calloc(1, sizeof(*cd));
	if (!a->verified || !cd)
		goto out;
	if (getrandom(a->key, sizeof(a->key), 0) != sizeof(a->key)) {
		err = -errno;
		goto out;
	}
	/* the dummy hash costs what the dearest real one does: an unknown name takes as long */
	for (i = 0; i < cfg->nr_users; i++) {
		unsigned long c = strtoul(cfg->users[i].hash + 4, NULL, 10);

		if (i == 0 || c > cost)
			cost = c;
	}
	for (i = 0; i + 1 < sizeof(pw); i++)
		pw[i] = (char)('a' + a->key[i % MAC_SIZE] % 26);
	pw[sizeof(pw) - 1] = '\0';
	err = -EINVAL;
	if (!crypt_gensalt_rn("$2b$", cost, NULL, 0, setting, sizeof(setting)))
		goto out;
	out = crypt_rn(pw, setting, cd, sizeof(*cd));
	if (!out || strlen(out) >= sizeof(a->dummy))
		goto out;
	strcpy(a->dummy, out);
	explicit_bzero(pw, sizeof(pw));
done:
	free(cd);
	*ret = a;
	return 0;
out:
	free(cd);
	access_free(a);
	return err;
}

void access_free(struct access *a)
{
	if (!a)
		return;
	explicit_bzero(a->key, sizeof(a->key));
	free(a->verified);
	pthread_mutex_destroy(&a->lock);
	free(a);
}

/* ---- client certificates ---------------------------------------------------------- */

/* the SANs of @der, each in client_allowed_sans' spelling, matched against the list */
static bool san_allowed(const struct web_config *cfg, const gnutls_datum_t *der)
{
	gnutls_x509_crt_t crt;
	bool ok = false;
	unsigned int seq;

	if (gnutls_x509_crt_init(&crt) < 0)
		return false;
	if (gnutls_x509_crt_import(crt, der, GNUTLS_X509_FMT_DER) < 0)
		goto out;
	for (seq = 0; !ok; seq++) {
		char buf[1024], ip[INET6_ADDRSTRLEN];
		size_t size = sizeof(buf) - 1;
		const char *name = buf;
		size_t i;
		int type = gnutls_x509_crt_get_subject_alt_name(crt, seq, buf, &size, NULL);

		if (type == GNUTLS_E_SHORT_MEMORY_BUFFER)
			continue; /* a name longer than any we would accept */
		if (type < 0)
			break; /* GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE: no more */
		buf[size] = '\0';
		if (type == GNUTLS_SAN_IPADDRESS) {
			if (!inet_ntop(size == 4 ? AF_INET : AF_INET6, buf, ip, sizeof(ip)))
				continue;
			name = ip;
		} else if (type != GNUTLS_SAN_DNSNAME && type != GNUTLS_SAN_RFC822NAME &&
			   type != GNUTLS_SAN_URI) {
			continue;
		} else if (strlen(buf) != size) {
			continue; /* a NUL inside a name: never equal to a configured one */
		}
		for (i = 0; i < cfg->nr_allowed_sans && !ok; i++)
			ok = !strcmp(cfg->allowed_sans[i], name);
	}
out:
	gnutls_x509_crt_deinit(crt);
	return ok;
}

/* NULL when the connection's certificate is what client_auth_type asks, else why not */
static const char *cert_refusal(const struct web_config *cfg, struct MHD_Connection *conn,
				char *why, size_t why_size)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_session_t s = ci ? ci->tls_session : NULL;
	const gnutls_datum_t *peers = NULL;
	unsigned int nr = 0, status = 0;
	gnutls_datum_t text = {0};
	bool need, verify;
	int rc;

	if (cfg->client_auth == WEB_NO_CLIENT_CERT || cfg->client_auth == WEB_REQUEST_CLIENT_CERT)
		return NULL;
	need = cfg->client_auth == WEB_REQUIRE_ANY_CLIENT_CERT ||
	       cfg->client_auth == WEB_REQUIRE_AND_VERIFY_CLIENT_CERT;
	verify = cfg->client_auth == WEB_VERIFY_CLIENT_CERT_IF_GIVEN ||
		 cfg->client_auth == WEB_REQUIRE_AND_VERIFY_CLIENT_CERT;
	if (s)
		peers = gnutls_certificate_get_peers(s, &nr);
	if (!peers || !nr)
		return need ? "a client certificate is required" : NULL;
	if (verify) {
		rc = gnutls_certificate_verify_peers2(s, &status);
		if (rc < 0) {
			snprintf(why, why_size, "the client certificate cannot be verified: %s",
				 gnutls_strerror(rc));
			return why;
		}
		if (status) {
			gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &text,
								     0);
			snprintf(why, why_size, "the client certificate is not trusted: %s",
				 text.data ? (const char *)text.data : "verification failed");
			gnutls_free(text.data);
			return why;
		}
	}
	if (cfg->nr_allowed_sans && !san_allowed(cfg, &peers[0]))
		return "the client certificate has no subject alternative name listed in "
		       "client_allowed_sans";
	return NULL;
}

/* ---- basic authentication --------------------------------------------------------- */

/* bcrypt of @password under @hash equals @hash, compared in constant time */
static bool bcrypt_ok(const char *password, const char *hash)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	const char *out;
	size_t len = strlen(hash);
	bool ok;

	if (!cd)
		return false;
	out = crypt_rn(password, hash, cd, sizeof(*cd));
	ok = out && strlen(out) == len && !gnutls_memcmp(out, hash, len);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	return ok;
}

enum pw_result {
	PW_OK,
	PW_WRONG,
	PW_BUSY, /* ACCESS_MAX_BCRYPT checks already running: not checked */
};

/*
 * bcrypt_ok, but never more than ACCESS_MAX_BCRYPT at once: a client sending wrong passwords
 * as fast as it can occupies at most that many server threads, the others go on serving
 */
static enum pw_result bcrypt_bounded(struct access *a, const char *password, const char *hash)
{
	enum pw_result r = PW_BUSY;

	if (__atomic_add_fetch(&a->nr_bcrypt, 1, __ATOMIC_ACQ_REL) <= ACCESS_MAX_BCRYPT)
		r = bcrypt_ok(password, hash) ? PW_OK : PW_WRONG;
	__atomic_sub_fetch(&a->nr_bcrypt, 1, __ATOMIC_ACQ_REL);
	return r;
}

/* whether @user with @password is a configured user with its password */
static enum pw_result password_ok(struct access *a, const char *user, const char *password)
{
	const struct web_config *cfg = a->cfg;
	unsigned char mac[MAC_SIZE];
	size_t i, found = cfg->nr_users;
	enum pw_result r;
	bool ok;

	/* every name is compared, so the loop takes as long whichever matches */
	for (i = 0; i < cfg->nr_users; i++) {
		size_t n = strlen(cfg->users[i].name);

		if (strlen(user) == n && !gnutls_memcmp(user, cfg->users[i].name, n))
			found = i;
	}
	if (found == cfg->nr_users) {
		/* the time of a real check, never a match */
		r = bcrypt_bounded(a, password, a->dummy);
		return r == PW_BUSY ? PW_BUSY : PW_WRONG;
	}
	if (gnutls_hmac_fast(GNUTLS_MAC_SHA256, a->key, sizeof(a->key), password, strlen(password),
			     mac) < 0)
		return bcrypt_bounded(a, password, cfg->users[found].hash);
	pthread_mutex_lock(&a->lock);
	ok = a->verified[found].valid && !gnutls_memcmp(a->verified[found].mac, mac, MAC_SIZE);
	pthread_mutex_unlock(&a->lock);
	if (ok)
		return PW_OK;
	/* bcrypt outside the lock: other requests go on meanwhile */
	r = bcrypt_bounded(a, password, cfg->users[found].hash);
	if (r == PW_OK) {
		pthread_mutex_lock(&a->lock);
		memcpy(a->verified[found].mac, mac, MAC_SIZE);
		a->verified[found].valid = true;
		pthread_mutex_unlock(&a->lock);
	}
	explicit_bzero(mac, sizeof(mac));
	return r;
}

static enum MHD_Result refuse_403(const struct access *a, struct MHD_Connection *conn,
				  const char *why)
{
	char *body = NULL;
	struct MHD_Response *resp;
	enum MHD_Result ret;
	int n = asprintf(&body, "perflib-exporter: %s\n", why);

	if (n < 0)
		return MHD_NO;
	resp = MHD_create_response_from_buffer((size_t)n, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	MHD_add_response_header(resp, "X-Perflib-Status", "5"); /* ERROR_ACCESS_DENIED */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
	access_headers(a, resp);
	ret = MHD_queue_response(conn, MHD_HTTP_FORBIDDEN, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* too many passwords being checked: 429, try again in a second */
static enum MHD_Result refuse_429(const struct access *a, struct MHD_Connection *conn)
{
	static char body[] = "perflib-exporter: too many passwords being checked; try again\n";
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
	access_headers(a, resp);
	ret = MHD_queue_response(conn, MHD_HTTP_TOO_MANY_REQUESTS, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result refuse_401(const struct access *a, struct MHD_Connection *conn)
{
	static char body[] = "perflib-exporter: unauthorized: a user and password are needed\n";
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_PERSISTENT);
	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	MHD_add_response_header(resp, "X-Perflib-Status", "5"); /* ERROR_ACCESS_DENIED */
	access_headers(a, resp);
	ret = MHD_queue_basic_auth_fail_response(conn, REALM, resp);
	MHD_destroy_response(resp);
	return ret;
}

enum MHD_Result access_check(struct access *a, struct MHD_Connection *conn, const char *method,
			     const char *url, bool *refused)
{
	const struct web_config *cfg = a ? a->cfg : NULL;
	char why[300], *user, *password = NULL;
	enum pw_result r;
	const char *no;

	*refused = false;
	if (!cfg)
		return MHD_YES;
	if (cfg->tls) {
		no = cert_refusal(cfg, conn, why, sizeof(why));
		if (no) {
			*refused = true;
			http_log(conn, method, url, MHD_HTTP_FORBIDDEN, "%s", no);
			return refuse_403(a, conn, no);
		}
	}
	if (!cfg->nr_users)
		return MHD_YES;
	user = MHD_basic_auth_get_username_password(conn, &password);
	r = user && password ? password_ok(a, user, password) : PW_WRONG;
	if (r == PW_BUSY)
		http_log(conn, method, url, MHD_HTTP_TOO_MANY_REQUESTS,
			 "%d passwords being checked already", ACCESS_MAX_BCRYPT);
	else if (r != PW_OK)
		http_log(conn, method, url, MHD_HTTP_UNAUTHORIZED, "%s",
			 !user ? "no basic-auth user" : "wrong user or password");
	if (password) {
		explicit_bzero(password, strlen(password));
		MHD_free(password);
	}
	MHD_free(user);
	if (r == PW_OK)
		return MHD_YES;
	*refused = true;
	return r == PW_BUSY ? refuse_429(a, conn) : refuse_401(a, conn);
}

void access_headers(const struct access *a, struct MHD_Response *resp)
{
	size_t i;

	if (!a || !a->cfg)
		return;
	for (i = 0; i < WEB_NR_HEADERS; i++)
		if (a->cfg->headers[i])
			MHD_add_response_header(resp, web_header_name(i), a->cfg->headers[i]);
}

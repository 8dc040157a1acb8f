/* SPDX-License-Identifier: MIT */
/*
 * webconfig.h - the Prometheus web configuration file (--web.config.file), as node_exporter
 * and the other exporters built on exporter-toolkit read it: TLS (tls_server_config), HTTP
 * response headers (http_server_config) and users with bcrypt hashes (basic_auth_users).
 * Read once at start with libyaml; every unknown key, bad value or unreadable file is an
 * error naming the file and line. docs/REMOTE.md lists the keys and what each does here.
 */
#ifndef WEBCONFIG_H
#define WEBCONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* client_auth_type: the names (and meanings) of Go's tls.ClientAuthType */
enum web_client_auth {
	WEB_NO_CLIENT_CERT,		   /* no certificate asked for */
	WEB_REQUEST_CLIENT_CERT,	   /* asked for, not needed, not verified */
	WEB_REQUIRE_ANY_CLIENT_CERT,	   /* needed, not verified */
	WEB_VERIFY_CLIENT_CERT_IF_GIVEN,   /* not needed; verified against the CA when sent */
	WEB_REQUIRE_AND_VERIFY_CLIENT_CERT /* needed and verified against the CA */
};

/* http_server_config.headers: the response headers an operator may set */
enum web_header {
	WEB_HDR_CSP,   /* Content-Security-Policy */
	WEB_HDR_FRAME, /* X-Frame-Options: deny or sameorigin */
	WEB_HDR_CTYPE, /* X-Content-Type-Options: nosniff */
	WEB_HDR_XSS,   /* X-XSS-Protection */
	WEB_HDR_HSTS,  /* Strict-Transport-Security */
	WEB_NR_HEADERS,
};

struct web_user {
	char *name; /* the basic-auth user name */
	char *hash; /* its bcrypt hash: $2a$, $2b$ or $2y$, 60 characters */
};

struct web_config {
	bool tls;	     /* serve HTTPS: a certificate and key were given */
	char *cert_pem;	     /* the server's certificate chain, PEM, NUL-terminated */
	char *key_pem;	     /* its private key, PEM */
	char *client_ca_pem; /* CAs client certificates are verified against, or NULL */
	enum web_client_auth client_auth; /* what is asked of clients' certificates */
	char *priorities;		  /* GnuTLS priority string: versions, groups, precedence */
	char **allowed_sans;		  /* client_allowed_sans: exact SANs accepted, or NULL */
	size_t nr_allowed_sans;
	struct web_user *users; /* basic_auth_users; none: no authentication asked */
	size_t nr_users;
	char *headers[WEB_NR_HEADERS]; /* value of each response header, or NULL */
};

/* web_header_name - the HTTP name of header @h */
const char *web_header_name(enum web_header h);

/* web_client_auth_name - the configuration spelling of @a (NoClientCert, ...) */
const char *web_client_auth_name(enum web_client_auth a);

/*
 * web_config_load - read and check the web configuration file @path (file names in it are
 * relative to the file's directory, as exporter-toolkit takes them).
 * @ret_cfg: out, the configuration (free with web_config_free), written only on success.
 * @err: out, on failure a one-line message naming the file, the line and the key.
 * Returns 0, or -errno (-EINVAL for a bad file, the errno of a file that cannot be read).
 */
int web_config_load(const char *path, struct web_config **ret_cfg, char *err, size_t err_size);

/* web_config_free - free @cfg (NULL accepted) */
void web_config_free(struct web_config *cfg);

#endif /* WEBCONFIG_H */

// SPDX-License-Identifier: MIT
/*
 * webconfig.c - read the Prometheus web configuration file (webconfig.h) with libyaml's
 * document API. The keys and their meanings are exporter-toolkit's; what perflib-exporter
 * cannot do (cipher_suites by Go name, rate_limit) is refused by name rather than ignored.
 */
#include <errno.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <crypt.h>
#include <gnutls/gnutls.h>
#include <yaml.h>

#include "webconfig.h"

#define MAX_FILE_SIZE (1u << 20) /* a certificate, key or CA bundle: far below this */

struct loader {
	const char *path; /* the configuration file, as given */
	char *dir;	  /* its directory: relative file names start there */
	yaml_document_t doc;
	struct web_config *cfg;
	char *err;
	size_t err_size;
};

static const char *const header_names[WEB_NR_HEADERS] = {
	[WEB_HDR_CSP] = "Content-Security-Policy",    [WEB_HDR_FRAME] = "X-Frame-Options",
	[WEB_HDR_CTYPE] = "X-Content-Type-Options",   [WEB_HDR_XSS] = "X-XSS-Protection",
	[WEB_HDR_HSTS] = "Strict-Transport-Security",
};

static const char *const auth_names[] = {
	[WEB_NO_CLIENT_CERT] = "NoClientCert",
	[WEB_REQUEST_CLIENT_CERT] = "RequestClientCert",
	[WEB_REQUIRE_ANY_CLIENT_CERT] = "RequireAnyClientCert",
	[WEB_VERIFY_CLIENT_CERT_IF_GIVEN] = "VerifyClientCertIfGiven",
	[WEB_REQUIRE_AND_VERIFY_CLIENT_CERT] = "RequireAndVerifyClientCert",
};

/* TLS versions by their configuration names, oldest first, and GnuTLS's names */
static const char *const tls_names[] = {"TLS10", "TLS11", "TLS12", "TLS13"};
static const char *const tls_gnutls[] = {"VERS-TLS1.0", "VERS-TLS1.1", "VERS-TLS1.2",
					 "VERS-TLS1.3"};

/* curve_preferences: Go's tls.CurveID names and GnuTLS's groups */
static const char *const curve_names[] = {"CurveP256", "CurveP384", "CurveP521", "X25519"};
static const char *const curve_gnutls[] = {"GROUP-SECP256R1", "GROUP-SECP384R1", "GROUP-SECP521R1",
					   "GROUP-X25519"};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

const char *web_header_name(enum web_header h)
{
	return header_names[h];
}

const char *web_client_auth_name(enum web_client_auth a)
{
	return auth_names[a];
}

/* a message about @n (its line) into the loader's buffer; always -EINVAL */
static int fail(struct loader *l, const yaml_node_t *n, const char *fmt, ...)
{
	va_list ap;
	int off;

	if (n)
		off = snprintf(l->err, l->err_size, "%s:%zu: ", l->path,
			       (size_t)n->start_mark.line + 1);
	else
		off = snprintf(l->err, l->err_size, "%s: ", l->path);
	if (off < 0 || (size_t)off >= l->err_size)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(l->err + off, l->err_size - (size_t)off, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static yaml_node_t *node(struct loader *l, int id)
{
	return yaml_document_get_node(&l->doc, id);
}

static const char *text(const yaml_node_t *n)
{
	return (const char *)n->data.scalar.value;
}

/* a YAML null: an empty plain scalar, ~ or null */
static bool is_null(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE && n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	       (!n->data.scalar.length || !strcmp(text(n), "~") || !strcasecmp(text(n), "null"));
}

static int want_scalar(struct loader *l, const yaml_node_t *n, const char *key)
{
	if (n->type != YAML_SCALAR_NODE || is_null(n))
		return fail(l, n, "%s: expected a string", key);
	if (strlen(text(n)) != n->data.scalar.length)
		return fail(l, n, "%s: the value holds a NUL character", key);
	return 0;
}

static int want_bool(struct loader *l, const yaml_node_t *n, const char *key, bool *ret)
{
	if (n->type == YAML_SCALAR_NODE && !strcasecmp(text(n), "true"))
		*ret = true;
	else if (n->type == YAML_SCALAR_NODE && !strcasecmp(text(n), "false"))
		*ret = false;
	else
		return fail(l, n, "%s: expected true or false", key);
	return 0;
}

/* a mapping whose keys are all different: duplicate keys are an error, as in Go's loader */
static int want_mapping(struct loader *l, const yaml_node_t *n, const char *key)
{
	yaml_node_pair_t *p, *q;

	if (n->type != YAML_MAPPING_NODE)
		return fail(l, n, "%s: expected a mapping of keys to values", key);
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(l, p->key);

		if (k->type != YAML_SCALAR_NODE)
			return fail(l, k, "%s: a key must be a string", key);
		for (q = n->data.mapping.pairs.start; q < p; q++)
			if (!strcmp(text(node(l, q->key)), text(k)))
				return fail(l, k, "%s: key '%s' given twice", key, text(k));
	}
	return 0;
}

/* the contents of file @name (relative to the configuration's directory), NUL-terminated */
static int read_file(struct loader *l, const yaml_node_t *n, const char *key, char **ret)
{
	char *full = NULL, *data = NULL;
	const char *name = text(n);
	struct stat st;
	FILE *f = NULL;
	int err;

	if (name[0] != '/' && asprintf(&full, "%s/%s", l->dir, name) < 0)
		return -ENOMEM;
	f = fopen(full ? full : name, "re");
	if (!f) {
		err = -errno;
		fail(l, n, "%s: cannot read %s: %s", key, full ? full : name, strerror(errno));
		goto out;
	}
	if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode) || st.st_size > MAX_FILE_SIZE) {
		err = fail(l, n, "%s: %s is not a regular file of at most 1 MiB", key,
			   full ? full : name);
		goto out;
	}
	data = calloc(1, (size_t)st.st_size + 1);
	if (!data) {
		err = -ENOMEM;
		goto out;
	}
	if (fread(data, 1, (size_t)st.st_size, f) != (size_t)st.st_size || ferror(f)) {
		err = fail(l, n, "%s: cannot read %s", key, full ? full : name);
		goto out;
	}
	if (strlen(data) != (size_t)st.st_size) {
		err = fail(l, n, "%s: %s holds a NUL byte: not PEM", key, full ? full : name);
		goto out;
	}
	*ret = data;
	data = NULL;
	err = 0;
out:
	if (f)
		fclose(f);
	free(data);
	free(full);
	return err;
}

static int index_of(const char *const *names, size_t nr, const char *s)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (!strcmp(names[i], s))
			return (int)i;
	return -1;
}

/* a list of strings (or null): each through @each */
static int for_each_string(struct loader *l, const yaml_node_t *n, const char *key,
			   int (*each)(struct loader *l, const yaml_node_t *item, void *ctx),
			   void *ctx)
{
	yaml_node_item_t *it;
	int err;

	if (is_null(n))
		return 0;
	if (n->type != YAML_SEQUENCE_NODE)
		return fail(l, n, "%s: expected a list", key);
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		err = want_scalar(l, node(l, *it), key);
		if (!err)
			err = each(l, node(l, *it), ctx);
		if (err)
			return err;
	}
	return 0;
}

struct curves {
	char text[128]; /* ":-GROUP-ALL:+GROUP-..." */
};

static int add_curve(struct loader *l, const yaml_node_t *item, void *ctx)
{
	struct curves *c = ctx;
	int i = index_of(curve_names, ARRAY_SIZE(curve_names), text(item));
	size_t len = strlen(c->text);

	if (i < 0)
		return fail(l, item,
			    "tls_server_config.curve_preferences: unknown curve '%s' (CurveP256, "
			    "CurveP384, CurveP521 or X25519)",
			    text(item));
	if (!len)
		len = (size_t)snprintf(c->text, sizeof(c->text), ":-GROUP-ALL");
	snprintf(c->text + len, sizeof(c->text) - len, ":+%s", curve_gnutls[i]);
	return 0;
}

static int add_san(struct loader *l, const yaml_node_t *item, void *ctx)
{
	struct web_config *cfg = ctx;
	char **grown = realloc(cfg->allowed_sans, (cfg->nr_allowed_sans + 1) * sizeof(*grown));

	(void)l;
	if (!grown)
		return -ENOMEM;
	cfg->allowed_sans = grown;
	grown[cfg->nr_allowed_sans] = strdup(text(item));
	if (!grown[cfg->nr_allowed_sans])
		return -ENOMEM;
	cfg->nr_allowed_sans++;
	return 0;
}

static int refuse_cipher(struct loader *l, const yaml_node_t *item, void *ctx)
{
	(void)ctx;
	return fail(l, item,
		    "tls_server_config.cipher_suites: perflib-exporter takes no Go cipher suite "
		    "names ('%s'); GnuTLS's defaults for the versions allowed are used (leave "
		    "the list out)",
		    text(item));
}

/* the certificate and key load, the client CAs hold at least one certificate */
static int check_tls_material(struct loader *l, const yaml_node_t *where)
{
	struct web_config *cfg = l->cfg;
	gnutls_certificate_credentials_t cred;
	gnutls_datum_t cert = {(unsigned char *)cfg->cert_pem, (unsigned int)strlen(cfg->cert_pem)};
	gnutls_datum_t key = {(unsigned char *)cfg->key_pem, (unsigned int)strlen(cfg->key_pem)};
	gnutls_priority_t prio;
	const char *pos = NULL;
	int rc, err = 0;

	if (gnutls_certificate_allocate_credentials(&cred) < 0)
		return -ENOMEM;
	rc = gnutls_certificate_set_x509_key_mem2(cred, &cert, &key, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (rc < 0)
		err = fail(l, where,
			   "tls_server_config: the certificate and key do not load (%s): PEM, an "
			   "unencrypted key, the key of that certificate",
			   gnutls_strerror(rc));
	if (!err && cfg->client_ca_pem) {
		gnutls_datum_t ca = {(unsigned char *)cfg->client_ca_pem,
				     (unsigned int)strlen(cfg->client_ca_pem)};

		rc = gnutls_certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM);
		if (rc <= 0)
			err = fail(l, where, "tls_server_config: the client CA holds %s",
				   rc < 0 ? gnutls_strerror(rc) : "no PEM certificate");
	}
	gnutls_certificate_free_credentials(cred);
	if (err)
		return err;
	rc = gnutls_priority_init(&prio, cfg->priorities, &pos);
	if (rc < 0)
		return fail(l, where, "tls_server_config: GnuTLS refuses '%s' at '%s': %s",
			    cfg->priorities, pos ? pos : "", gnutls_strerror(rc));
	gnutls_priority_deinit(prio);
	return 0;
}

/* tls_server_config: the inline value of @inl or the file of @file, not both */
static int pem_of(struct loader *l, const yaml_node_t *map, yaml_node_t *inl, yaml_node_t *file,
		  const char *what, char **ret)
{
	if (inl && file)
		return fail(l, inl, "tls_server_config: give %s or %s_file, not both", what, what);
	if (inl) {
		*ret = strdup(text(inl));
		return *ret ? 0 : -ENOMEM;
	}
	if (file)
		return read_file(l, file, what, ret);
	(void)map;
	return 0;
}

static int load_tls(struct loader *l, const yaml_node_t *map)
{
	struct web_config *cfg = l->cfg;
	yaml_node_t *cert = NULL, *cert_file = NULL, *key = NULL, *key_file = NULL;
	yaml_node_t *ca = NULL, *ca_file = NULL, *auth = NULL, *sans = NULL;
	int min = 2, max = 3, err;
	bool server_order = true;
	struct curves curves = {{0}};
	yaml_node_pair_t *p;
	const char *k;
	size_t len;

	if (is_null(map))
		return 0;
	err = want_mapping(l, map, "tls_server_config");
	for (p = map->data.mapping.pairs.start; !err && p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *v = node(l, p->value);

		k = text(node(l, p->key));
		if (!strcmp(k, "cipher_suites")) {
			err = for_each_string(l, v, "tls_server_config.cipher_suites",
					      refuse_cipher, NULL);
			continue;
		}
		if (!strcmp(k, "curve_preferences")) {
			err = for_each_string(l, v, "tls_server_config.curve_preferences",
					      add_curve, &curves);
			continue;
		}
		if (!strcmp(k, "client_allowed_sans")) {
			sans = v;
			err = for_each_string(l, v, "tls_server_config.client_allowed_sans",
					      add_san, cfg);
			continue;
		}
		if (!strcmp(k, "prefer_server_cipher_suites")) {
			err = want_bool(l, v, "tls_server_config.prefer_server_cipher_suites",
					&server_order);
			continue;
		}
		err = want_scalar(l, v, k);
		if (err)
			break;
		if (!strcmp(k, "cert"))
			cert = v;
		else if (!strcmp(k, "cert_file"))
			cert_file = v;
		else if (!strcmp(k, "key"))
			key = v;
		else if (!strcmp(k, "key_file"))
			key_file = v;
		else if (!strcmp(k, "client_ca"))
			ca = v;
		else if (!strcmp(k, "client_ca_file"))
			ca_file = v;
		else if (!strcmp(k, "client_auth_type"))
			auth = v;
		else if (!strcmp(k, "min_version") || !strcmp(k, "max_version")) {
			int i = index_of(tls_names, ARRAY_SIZE(tls_names), text(v));

			if (i < 0)
				err = fail(l, v,
					   "tls_server_config.%s: '%s' is not TLS10, TLS11, "
					   "TLS12 or TLS13",
					   k, text(v));
			else if (k[1] == 'i')
				min = i;
			else
				max = i;
		} else
			err = fail(l, node(l, p->key), "tls_server_config: unknown key '%s'", k);
	}
	if (err)
		return err;
	if (auth) {
		int i = index_of(auth_names, ARRAY_SIZE(auth_names), text(auth));

		if (i < 0)
			return fail(l, auth,
				    "tls_server_config.client_auth_type: '%s' is not NoClientCert, "
				    "RequestClientCert, RequireAnyClientCert, "
				    "VerifyClientCertIfGiven or RequireAndVerifyClientCert",
				    text(auth));
		cfg->client_auth = (enum web_client_auth)i;
	}
	/* an empty mapping is no TLS; anything in it asks for TLS, which needs both halves */
	if (map->data.mapping.pairs.top == map->data.mapping.pairs.start)
		return 0;
	err = pem_of(l, map, cert, cert_file, "cert", &cfg->cert_pem);
	if (!err)
		err = pem_of(l, map, key, key_file, "key", &cfg->key_pem);
	if (!err)
		err = pem_of(l, map, ca, ca_file, "client_ca", &cfg->client_ca_pem);
	if (err)
		return err;
	if (!cfg->cert_pem || !cfg->key_pem)
		return fail(l, map,
			    "tls_server_config: missing %s (the server's certificate "
			    "and its key are both needed)",
			    !cfg->cert_pem ? "cert_file" : "key_file");
	if (cfg->client_ca_pem && cfg->client_auth == WEB_NO_CLIENT_CERT)
		return fail(l, ca ? ca : ca_file,
			    "tls_server_config: client_ca_file is set but client_auth_type is "
			    "NoClientCert: set client_auth_type (RequireAndVerifyClientCert to "
			    "verify client certificates)");
	if (!cfg->client_ca_pem && (cfg->client_auth == WEB_VERIFY_CLIENT_CERT_IF_GIVEN ||
				    cfg->client_auth == WEB_REQUIRE_AND_VERIFY_CLIENT_CERT))
		return fail(l, auth, "tls_server_config.client_auth_type: %s needs client_ca_file",
			    auth_names[cfg->client_auth]);
	if (sans && cfg->nr_allowed_sans && cfg->client_auth != WEB_REQUIRE_ANY_CLIENT_CERT &&
	    cfg->client_auth != WEB_REQUIRE_AND_VERIFY_CLIENT_CERT)
		return fail(l, sans,
			    "tls_server_config.client_allowed_sans needs client_auth_type "
			    "RequireAnyClientCert or RequireAndVerifyClientCert");
	if (min > max)
		return fail(l, map, "tls_server_config: min_version %s is above max_version %s",
			    tls_names[min], tls_names[max]);
	/* the GnuTLS priority string: the versions allowed, the groups, whose order wins */
	cfg->priorities = malloc(256);
	if (!cfg->priorities)
		return -ENOMEM;
	len = (size_t)snprintf(cfg->priorities, 256, "NORMAL:-VERS-ALL");
	for (int i = max; i >= min; i--)
		len += (size_t)snprintf(cfg->priorities + len, 256 - len, ":+%s", tls_gnutls[i]);
	snprintf(cfg->priorities + len, 256 - len, "%s%s", curves.text,
		 server_order ? ":%SERVER_PRECEDENCE" : "");
	cfg->tls = true;
	return check_tls_material(l, map);
}

static int load_headers(struct loader *l, const yaml_node_t *map)
{
	yaml_node_pair_t *p;
	int err;

	if (is_null(map))
		return 0;
	err = want_mapping(l, map, "http_server_config.headers");
	for (p = map->data.mapping.pairs.start; !err && p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(l, p->key), *v = node(l, p->value);
		int h = index_of(header_names, WEB_NR_HEADERS, text(k));
		const char *s;

		if (h < 0)
			return fail(l, k,
				    "http_server_config.headers: '%s' is not one of the "
				    "headers that may be set (Content-Security-Policy, "
				    "X-Frame-Options, X-Content-Type-Options, X-XSS-Protection, "
				    "Strict-Transport-Security)",
				    text(k));
		if (is_null(v))
			continue; /* blank: not sent */
		err = want_scalar(l, v, text(k));
		if (err)
			return err;
		s = text(v);
		if (strpbrk(s, "\r\n"))
			return fail(l, v, "%s: a header value is one line", text(k));
		if (h == WEB_HDR_FRAME && strcasecmp(s, "deny") && strcasecmp(s, "sameorigin"))
			return fail(l, v, "X-Frame-Options: '%s' is not deny or sameorigin", s);
		if (h == WEB_HDR_CTYPE && strcasecmp(s, "nosniff"))
			return fail(l, v, "X-Content-Type-Options: '%s' is not nosniff", s);
		l->cfg->headers[h] = strdup(s);
		if (!l->cfg->headers[h])
			return -ENOMEM;
	}
	return err;
}

static int load_http(struct loader *l, const yaml_node_t *map)
{
	yaml_node_pair_t *p;
	bool http2;
	int err;

	if (is_null(map))
		return 0;
	err = want_mapping(l, map, "http_server_config");
	for (p = map->data.mapping.pairs.start; !err && p < map->data.mapping.pairs.top; p++) {
		const char *k = text(node(l, p->key));

		/* HTTP/2 is not served (libmicrohttpd speaks HTTP/1.1): true or false is fine */
		if (!strcmp(k, "http2"))
			err = want_bool(l, node(l, p->value), "http_server_config.http2", &http2);
		else if (!strcmp(k, "headers"))
			err = load_headers(l, node(l, p->value));
		else
			err = fail(l, node(l, p->key), "http_server_config: unknown key '%s'", k);
	}
	return err;
}

/* a bcrypt hash libxcrypt accepts: $2a$, $2b$ or $2y$, a cost, 53 characters of salt+hash */
static bool bcrypt_hash(const char *h)
{
	struct crypt_data *cd;
	const char *out;
	bool ok;

	if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$')
		return false;
	cd = calloc(1, sizeof(*cd));
	if (!cd)
		return false;
	/* the hash's own setting must be one crypt takes (cost 4 to 31, a valid salt) */
	out = crypt_rn("", h, cd, sizeof(*cd));
	ok = out && out[0] == '$';
	free(cd);
	return ok;
}

static int load_users(struct loader *l, const yaml_node_t *map)
{
	struct web_config *cfg = l->cfg;
	yaml_node_pair_t *p;
	size_t nr;
	int err;

	if (is_null(map))
		return 0;
	err = want_mapping(l, map, "basic_auth_users");
	if (err)
		return err;
	nr = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
	cfg->users = calloc(nr ? nr : 1, sizeof(*cfg->users));
	if (!cfg->users)
		return -ENOMEM;
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		yaml_node_t *k = node(l, p->key), *v = node(l, p->value);
		struct web_user *u = &cfg->users[cfg->nr_users];

		err = want_scalar(l, k, "basic_auth_users");
		if (!err && strchr(text(k), ':'))
			err = fail(l, k, "basic_auth_users: user '%s': a name holds no ':'",
				   text(k));
		if (!err)
			err = want_scalar(l, v, text(k));
		if (!err && !bcrypt_hash(text(v)))
			err = fail(l, v,
				   "basic_auth_users: the password of '%s' is not a bcrypt hash "
				   "($2b$ or $2y$, 60 characters; make one with mkpasswd -m bcrypt "
				   "or htpasswd -nBC 10 \"\")",
				   text(k));
		if (err)
			return err;
		u->name = strdup(text(k));
		u->hash = strdup(text(v));
		cfg->nr_users++;
		if (!u->name || !u->hash)
			return -ENOMEM;
	}
	return 0;
}

static int load_root(struct loader *l)
{
	yaml_node_t *root = yaml_document_get_root_node(&l->doc);
	yaml_node_pair_t *p;
	int err;

	if (!root || is_null(root))
		return 0; /* an empty file: plain HTTP, no authentication */
	err = want_mapping(l, root, "the file");
	for (p = root->data.mapping.pairs.start; !err && p < root->data.mapping.pairs.top; p++) {
		const char *k = text(node(l, p->key));
		yaml_node_t *v = node(l, p->value);

		if (!strcmp(k, "tls_server_config"))
			err = load_tls(l, v);
		else if (!strcmp(k, "http_server_config"))
			err = load_http(l, v);
		else if (!strcmp(k, "basic_auth_users"))
			err = load_users(l, v);
		else if (!strcmp(k, "rate_limit"))
			err = fail(l, node(l, p->key),
				   "rate_limit is not supported by perflib-exporter: connections "
				   "are bounded per client address instead "
				   "(--web.max-connections-per-ip)");
		else
			err = fail(l, node(l, p->key), "unknown key '%s'", k);
	}
	return err;
}

int web_config_load(const char *path, struct web_config **ret_cfg, char *err_buf, size_t err_size)
{
	struct loader l = {.path = path, .err = err_buf, .err_size = err_size};
	yaml_parser_t parser;
	char *copy = NULL;
	bool have_doc = false;
	FILE *f;
	int err;

	err_buf[0] = '\0';
	f = fopen(path, "re");
	if (!f) {
		err = -errno;
		snprintf(err_buf, err_size, "%s: cannot open: %s", path, strerror(errno));
		return err;
	}
	l.cfg = calloc(1, sizeof(*l.cfg));
	copy = strdup(path);
	if (!l.cfg || !copy || !(l.dir = strdup(dirname(copy)))) {
		err = -ENOMEM;
		goto out;
	}
	if (!yaml_parser_initialize(&parser)) {
		err = -ENOMEM;
		goto out;
	}
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &l.doc)) {
		snprintf(err_buf, err_size, "%s:%zu: not YAML: %s%s%s", path,
			 (size_t)parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "parse error", parser.context ? " " : "",
			 parser.context ? parser.context : "");
		yaml_parser_delete(&parser);
		err = -EINVAL;
		goto out;
	}
	have_doc = true;
	yaml_parser_delete(&parser);
	err = load_root(&l);
out:
	if (have_doc)
		yaml_document_delete(&l.doc);
	fclose(f);
	free(copy);
	free(l.dir);
	if (err == -ENOMEM && !err_buf[0])
		snprintf(err_buf, err_size, "%s: out of memory", path);
	if (err) {
		web_config_free(l.cfg);
		return err;
	}
	*ret_cfg = l.cfg;
	return 0;
}

void web_config_free(struct web_config *cfg)
{
	size_t i;

	if (!cfg)
		return;
	free(cfg->cert_pem);
	if (cfg->key_pem)
		explicit_bzero(cfg->key_pem, strlen(cfg->key_pem));
	free(cfg->key_pem);
	free(cfg->client_ca_pem);
	free(cfg->priorities);
	for (i = 0; i < cfg->nr_allowed_sans; i++)
		free(cfg->allowed_sans[i]);
	free(cfg->allowed_sans);
	for (i = 0; i < cfg->nr_users; i++) {
		free(cfg->users[i].name);
		free(cfg->users[i].hash);
	}
	free(cfg->users);
	for (i = 0; i < WEB_NR_HEADERS; i++)
		free(cfg->headers[i]);
	free(cfg);
}

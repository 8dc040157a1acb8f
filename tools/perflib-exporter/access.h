/* SPDX-License-Identifier: MIT */
/*
 * access.h - who may use the exporter: the client certificate a TLS connection presented
 * (as client_auth_type asks, verified against client_ca_file, its SANs against
 * client_allowed_sans) and the basic-auth user of each request (bcrypt, libxcrypt). Both
 * come from the web configuration file (webconfig.h); without one every request is allowed.
 */
#ifndef ACCESS_H
#define ACCESS_H

#include <microhttpd.h>

#include "webconfig.h"

/*
 * bcrypt checks running at once, at most: the server has more threads than this, so wrong
 * passwords sent as fast as possible leave threads to serve everyone else
 */
#define ACCESS_MAX_BCRYPT 2

struct access;

/*
 * access_new - the checks @cfg asks for (@cfg must outlive them; NULL: none).
 * @ret: out, free with access_free. Returns 0 or -ENOMEM.
 */
int access_new(const struct web_config *cfg, struct access **ret);

/* access_free - free @a (NULL accepted) */
void access_free(struct access *a);

/*
 * access_check - whether the request on @conn may be served: its client certificate, then
 * its user and password. A password is compared by bcrypt; a user name that is not
 * configured costs a bcrypt as well, so the time does not tell which names exist. A
 * password once verified is remembered (as a keyed hash, never in clear) so a client that
 * polls does not pay bcrypt on each request.
 * Returns MHD_YES when the request may go on, with nothing queued; else MHD_YES/MHD_NO of
 * the refusal it queued (403 for a certificate, 401 with WWW-Authenticate for a user, 429
 * with Retry-After when ACCESS_MAX_BCRYPT checks are running already), with a log line,
 * and *@refused set.
 */
enum MHD_Result access_check(struct access *a, struct MHD_Connection *conn, const char *method,
			     const char *url, bool *refused);

/* access_headers - add the configured response headers (http_server_config.headers) */
void access_headers(const struct access *a, struct MHD_Response *resp);

#endif /* ACCESS_H */

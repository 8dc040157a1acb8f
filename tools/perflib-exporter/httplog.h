/* SPDX-License-Identifier: MIT */
/*
 * httplog.h - the exporter's log lines about HTTP clients: refused and malformed requests,
 * libmicrohttpd's own messages. A hostile client must not flood the log: at most
 * HTTPLOG_BURST lines a second are written, the rest counted and reported once a line.
 */
#ifndef HTTPLOG_H
#define HTTPLOG_H

#include <stdarg.h>
#include <microhttpd.h>

#define HTTPLOG_BURST 20 /* lines a second; the rest are counted */

/*
 * http_log - one line on standard error, "perflib-exporter: PEER: METHOD URL: CODE why":
 * a request refused with HTTP @code. @conn gives the peer's address; @method and @url may
 * be NULL (a connection refused before its request line).
 */
void http_log(struct MHD_Connection *conn, const char *method, const char *url, unsigned int code,
	      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* http_vlog - one line of libmicrohttpd's (MHD_OPTION_EXTERNAL_LOGGER), under the same limit */
void http_vlog(const char *fmt, va_list ap);

/* http_peer - the peer of @conn as text ("192.0.2.7", "[2001:db8::1]", "?") into @buf */
const char *http_peer(struct MHD_Connection *conn, char *buf, size_t size);

#endif /* HTTPLOG_H */

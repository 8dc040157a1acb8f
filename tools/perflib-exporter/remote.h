/* SPDX-License-Identifier: MIT */
/*
 * remote.h - the consumer operations served over HTTP (issue 30, docs/REMOTE.md): the
 * perflib consumer API of this machine for consumers on others, answered with the exact
 * bytes the local calls return. Under REMOTE_PREFIX:
 *
 *   GET    countersets                              PerfEnumerateCounterSet
 *   GET    countersets/{guid}/registration?code=C[&lang=L]
 *                                                   PerfQueryCounterSetRegistrationInfo
 *   GET    countersets/{guid}/instances             PerfEnumerateCounterSetInstances
 *   POST   queries                                  PerfOpenQueryHandle: the query's token
 *   POST   queries/{token}/add, .../delete          PerfAddCounters, PerfDeleteCounters:
 *                                                   the identifiers sent, with their Status
 *   GET    queries/{token}/info                     PerfQueryCounterInfo
 *   GET    queries/{token}/data                     PerfQueryCounterData
 *   DELETE queries/{token}                          PerfCloseQueryHandle
 *
 * HTTP 200 means the call was made: its Win32 return code is the X-Perflib-Status header
 * and, when 0, its output the body. Other HTTP codes mean no call was made (400 malformed,
 * 403 refused, 404 no such route, set spelling or query, 405, 413 too large, 503 too many
 * queries). Queries live on the server, at most REMOTE_MAX_QUERIES, each closed after
 * REMOTE_IDLE_SECONDS unused.
 */
#ifndef REMOTE_H
#define REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <microhttpd.h>

#define REMOTE_PREFIX "/perflib/v1/"
#define REMOTE_MAX_QUERIES 64
#define REMOTE_IDLE_SECONDS 300
#define REMOTE_MAX_BODY (1u << 20) /* bytes of identifiers one add or delete may send */

struct access;

/*
 * remote_init - how the operations are served, set once before the server starts: @access
 * adds the configured response headers (NULL: none); @any_peer serves peers that are not on
 * a loopback address (with TLS configured, or --remote.insecure-allow-any-peer).
 */
void remote_init(const struct access *access, bool any_peer);

/* remote_route - the request is one of the consumer operations (its URL is under the prefix) */
bool remote_route(const char *url);

/*
 * remote_handle - serve a consumer operation: MHD's access handler for the URLs remote_route
 * takes (@con_cls holds the request's body between calls). Consumer operations are refused
 * (403) to peers that are not on a loopback address unless remote_init allowed any peer.
 * Every refusal (4xx, 503) is logged (httplog.h).
 */
enum MHD_Result remote_handle(struct MHD_Connection *conn, const char *url, const char *method,
			      const char *upload_data, size_t *upload_data_size, void **con_cls);

/* remote_completed - MHD_OPTION_NOTIFY_COMPLETED: free what remote_handle kept in @con_cls */
void remote_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
		      enum MHD_RequestTerminationCode toe);

/* remote_shutdown - close every query the server holds */
void remote_shutdown(void);

#endif /* REMOTE_H */

/* SPDX-License-Identifier: MIT */
/*
 * remote_module.h - the interface between libperflib (userspace/remote.c) and its remote
 * module, libperflib-remote.so.1 (remote/module.c, built on libcurl), which libperflib
 * dlopens the first time a consumer function is given a machine name that is not this
 * machine's. Local use never loads it, so libperflib itself has no network dependency.
 *
 * The module is the transport: the client settings (docs/REMOTE.md "Client settings"),
 * one HTTP(S) connection kept per host and reused, timeouts and what a failed transfer
 * means. libperflib keeps the protocol: the requests of /perflib/v1/, the Win32 codes of
 * its answers, query handles and the buffer-size rule. Not a public interface: both sides
 * are built from one tree and checked by PERFLIB_REMOTE_ABI.
 */
#ifndef PERFLIB_REMOTE_MODULE_H
#define PERFLIB_REMOTE_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PERFLIB_REMOTE_ABI 2
#define PERFLIB_REMOTE_SONAME "libperflib-remote.so.1"
#define PERFLIB_REMOTE_ENTRY "perflib_remote_module" /* the one exported symbol */

/* transport results of perflib_remote_ops.request (besides an HTTP answer) */
enum perflib_remote_fail {
	PERFLIB_REMOTE_OK = 0,	    /* an HTTP answer arrived: see the reply */
	PERFLIB_REMOTE_UNREACHABLE, /* DNS, refused, unreachable, timed out, cut off */
	PERFLIB_REMOTE_DENIED,	    /* TLS refused (certificate, CA, client certificate) */
	PERFLIB_REMOTE_NOMEM,	    /* out of memory on this side */
	PERFLIB_REMOTE_BADNAME,	    /* a machine name that is no host name (or a bad port) */
};

struct perflib_remote_reply {
	/* in: where the body goes while it fits (the consumer call's own buffer), or NULL */
	uint8_t *dst;
	size_t dst_cap;
	/* out */
	long http;     /* HTTP status code */
	long win32;    /* X-Perflib-Status, -1 when absent */
	bool in_dst;   /* the body is at dst (it fit), else at body */
	uint8_t *body; /* malloc'd (the caller frees it with free()), NULL when empty or in dst */
	size_t len;    /* bytes of the body */
	size_t cap;    /* (the module's: bytes allocated at body) */
};

struct perflib_remote_ops {
	uint32_t abi;  /* PERFLIB_REMOTE_ABI */
	uint32_t size; /* sizeof(struct perflib_remote_ops) */
	/* init - where the module's warnings go (libperflib's print hook); called once */
	void (*init)(void (*warn)(const char *text));
	/*
	 * request - one request to machine @host (UTF-8, no leading backslashes; "name",
	 * "name:port", "[v6]:port"): @method ("GET", "POST", "DELETE") of @path (below
	 * "/perflib/v1/", e.g. "countersets"), with @len bytes of @body (POST). Thread-safe;
	 * requests to one host are serialised on its one connection. @ret's dst and dst_cap
	 * are read first (the body may be written there, also when the answer is a
	 * failure); the rest of the reply is written on PERFLIB_REMOTE_OK only.
	 */
	enum perflib_remote_fail (*request)(const char *host, const char *method, const char *path,
					    const void *body, size_t len,
					    struct perflib_remote_reply *ret);
};

/* the module's entry point: its ops, never NULL */
typedef const struct perflib_remote_ops *(*perflib_remote_entry_fn)(void);

#endif /* PERFLIB_REMOTE_MODULE_H */

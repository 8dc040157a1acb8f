/* SPDX-License-Identifier: MIT */
/*
 * collect.h - perflib-exporter's scrape: read every counter set on this machine through
 * the Windows consumer API of perflib.h (and nothing else) and render it with
 * exp_format.h. One collector serves every scrape; it caches registrations and the query
 * between scrapes and rebuilds them when counter sets come, go or change. Not thread-safe:
 * callers serialize scrapes.
 */
#ifndef PERFLIB_EXPORTER_COLLECT_H
#define PERFLIB_EXPORTER_COLLECT_H

#include <stdbool.h>
#include <stddef.h>

#include "exp_format.h"

struct collector;

/* What the last scrape saw (for --verbose and the benchmark). */
struct collect_stats {
	size_t nr_sets;	     /* counter sets registered */
	size_t nr_instances; /* instances exported */
	size_t nr_bad;	     /* instances dropped as duplicates */
	size_t data_bytes;   /* bytes of the values read: 9 per value (8 and its size) */
	bool rebuilt;	     /* registrations or the query changed in this scrape */
	double collect_ms;   /* of the scrape: registrations and collection (the rest renders) */
};

/*
 * collector_new - a collector with no state yet. @ret: out, free with collector_free.
 * Returns 0 or -ENOMEM.
 */
int collector_new(struct collector **ret);

/* collector_free - close the query and free everything; accepts NULL. */
void collector_free(struct collector *c);

/*
 * collector_scrape - collect all counter sets and append their exposition in @fmt to @out.
 * Returns 0; -EIO when a consumer call failed (collector_error() says which and why);
 * -EBADMSG when PDH found the data inconsistent; -ENOMEM. On failure @out may hold
 * part of an exposition: discard it.
 */
int collector_scrape(struct collector *c, enum exp_format fmt, struct exp_buf *out);

/* collector_error - text of the last failure, "" if none (owned by @c) */
const char *collector_error(const struct collector *c);

/* collector_stats - figures of the last successful scrape (owned by @c) */
const struct collect_stats *collector_stats(const struct collector *c);

#endif /* PERFLIB_EXPORTER_COLLECT_H */

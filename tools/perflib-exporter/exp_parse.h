/* SPDX-License-Identifier: MIT */
/*
 * exp_parse.h - perflib-exporter's view of the consumer API's buffers: registration
 * blocks (PERF_COUNTERSET_REG_INFO, PERF_STRING_BUFFER_HEADER) into exp_set counters and
 * collection blocks (PERF_DATA_HEADER) into exp_set instances. The bytes are read and
 * checked by perfbuf.c (shared with typeperf), which trusts nothing in a buffer: a
 * malformed block gives -EBADMSG, never a read outside it.
 */
#ifndef EXP_PARSE_H
#define EXP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exp_format.h"
#include "perfbuf.h"

/* a UTF-8 name takes at most this much room (PERF_MAX_INSTANCE_NAME units, 3 bytes each) */
#define EXP_NAME_MAX (3 * PERF_MAX_INSTANCE_NAME + 4)

/*
 * exp_parse_reg - a new counter set from a PERF_REG_COUNTERSET_STRUCT answer
 * (PERF_COUNTERSET_REG_INFO and NumCounters PERF_COUNTER_REG_INFO).
 * @buf, @len: in, the bytes returned.   @ret_set: out, owned by the caller
 * (exp_set_free). Returns 0, -EBADMSG (short or inconsistent block) or -ENOMEM.
 */
int exp_parse_reg(const void *buf, size_t len, struct exp_set **ret_set);

/*
 * exp_parse_strings - give the counters of @set their names (@help false) or help
 * strings (@help true) from a PERF_STRING_BUFFER_HEADER block; ids not in the set and
 * absent strings (offset 0xFFFFFFFF) are ignored, a second string for an id replaces the
 * first. Returns 0, -EBADMSG (strings given before the bad one stay) or -ENOMEM.
 */
int exp_parse_strings(const void *buf, size_t len, struct exp_set *set, bool help);

/*
 * exp_parse_data - add the instances and values of a PerfQueryCounterData answer to the
 * counter sets. @by_index[i] is the set queried by the specification whose Index is i
 * (NULL: ignore that block); sets must have been reset (exp_set_reset) and are not
 * finished here. PERF_MULTIPLE_COUNTERS (single instance) and PERF_COUNTERSET blocks with
 * status 0 are read; other blocks add nothing. Instance names longer than EXP_NAME_MAX - 1
 * bytes of UTF-8 are cut at a character boundary.
 * @ret_freq: out, PERF_DATA_HEADER.PerfFreq.   @ret_bad: out, the number of malformed
 * counter blocks skipped (their set keeps no instance of this collection).
 * Returns 0, -EBADMSG (malformed PERF_DATA_HEADER or counter header) or -ENOMEM.
 */
int exp_parse_data(const void *buf, size_t len, struct exp_set *const *by_index, size_t nr_index,
		   int64_t *ret_freq, size_t *ret_bad);

#endif /* EXP_PARSE_H */

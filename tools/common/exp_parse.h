/* SPDX-License-Identifier: MIT */
/*
 * exp_parse.h - perflib-exporter's readers of the consumer API's buffers: registration
 * blocks (PERF_COUNTERSET_REG_INFO, PERF_STRING_BUFFER_HEADER) and collection blocks
 * (PERF_DATA_HEADER), formats in ../shared/spec/perflib-api.md sections 3 and 8.
 * Pure functions over bytes: they trust nothing in the buffer, so a malformed block gives
 * an error, never a read outside it.
 */
#ifndef EXP_PARSE_H
#define EXP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exp_format.h"

/* a UTF-8 name takes at most this much room (PERF_MAX_INSTANCE_NAME units, 3 bytes each) */
#define EXP_NAME_MAX (3 * PERF_MAX_INSTANCE_NAME + 4)

/*
 * exp_utf16_to_utf8 - convert UTF-16LE text at @src (any alignment), at most @max_units
 * code units, stopping at a NUL, into @dst (@dst_size > 0 bytes, always NUL-terminated;
 * output is cut at a character boundary). Unpaired surrogates become U+FFFD.
 * Returns the length written, without the NUL.
 */
size_t exp_utf16_to_utf8(const void *src, size_t max_units, char *dst, size_t dst_size);

/* exp_utf16_dup - the same into a malloc'd string; NULL when out of memory */
char *exp_utf16_dup(const void *src, size_t max_units);

/*
 * exp_parse_reg - a new counter set from a PERF_REG_COUNTERSET_STRUCT answer
 * (PERF_COUNTERSET_REG_INFO and NumCounters PERF_COUNTER_REG_INFO).
 * @buf, @len: in, the bytes returned.   @ret_set: out, owned by the caller
 * (exp_set_free). Returns 0, -EINVAL (short or inconsistent block) or -ENOMEM.
 */
int exp_parse_reg(const void *buf, size_t len, struct exp_set **ret_set);

/*
 * exp_parse_strings - give the counters of @set their names (@help false) or help
 * strings (@help true) from a PERF_STRING_BUFFER_HEADER block; ids not in the set and
 * absent strings (offset 0xFFFFFFFF) are ignored. Returns 0, -EINVAL or -ENOMEM.
 */
int exp_parse_strings(const void *buf, size_t len, struct exp_set *set, bool help);

/*
 * exp_parse_data - add the instances and values of a PerfQueryCounterData answer to the
 * counter sets. @by_index[i] is the set queried by the specification whose Index is i
 * (NULL: ignore that block); sets must have been reset (exp_set_reset) and are not
 * finished here. PERF_MULTIPLE_COUNTERS (single instance), PERF_MULTIPLE_INSTANCES and
 * PERF_COUNTERSET blocks are read; PERF_ERROR_RETURN blocks add nothing.
 * @ret_freq: out, PERF_DATA_HEADER.PerfFreq.   @ret_bad: out, the number of malformed
 * counter blocks skipped (their set keeps no instance of this collection).
 * Returns 0, -EINVAL (malformed PERF_DATA_HEADER) or -ENOMEM.
 */
int exp_parse_data(const void *buf, size_t len, struct exp_set *const *by_index, size_t nr_index,
		   int64_t *ret_freq, size_t *ret_bad);

#endif /* EXP_PARSE_H */

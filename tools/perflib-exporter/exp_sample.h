/* SPDX-License-Identifier: MIT */
/*
 * exp_sample.h - perflib-exporter's snapshot taken from libpdh: the counter sets as
 * libpdh models their registration (struct pdh_cat_set, filled by pdh_decode_reg and
 * pdh_decode_names, the parsers of PDH's catalog) and the values of a PerfQueryCounterData
 * answer as PDH's collection reads it (pdh_perfcols_read, columns). Nothing here reads
 * a buffer byte by byte: the exporter has no decoder and no registration model of its own,
 * only the rendering view (exp_set, exp_format.h) built from these.
 */
#ifndef EXP_SAMPLE_H
#define EXP_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exp_format.h"
#include "perfbuf.h"
#include "perfcols.h"
#include "catalog.h"

/* a UTF-8 name takes at most this much room (PERF_MAX_INSTANCE_NAME units, 3 bytes each) */
#define EXP_NAME_MAX (3 * PERF_MAX_INSTANCE_NAME + 4)

/*
 * exp_set_from_reg - the rendering view of the counter set @reg (libpdh's model: guid,
 * instance type, counters with their ids, types, attributes, companions and names; a
 * counter without a name keeps NULL: do not pdh_cat_set_finish it). The counters' names are
 * moved out of @reg (which the caller still frees). *@ret_set is owned by the caller
 * (exp_set_free). Returns 0 or -ENOMEM.
 */
int exp_set_from_reg(struct pdh_cat_set *reg, struct exp_set **ret_set);

/*
 * exp_help_strings - give the counters of @set their help strings from a
 * PERF_STRING_BUFFER_HEADER block (PERF_REG_COUNTER_HELP_STRINGS), by the rule of
 * pdh_decode_names: the first counter with the id that has none yet; unknown ids and absent
 * strings are ignored. Returns 0, -EBADMSG (strings given before the bad one stay) or
 * -ENOMEM.
 */
int exp_help_strings(const void *buf, size_t len, struct exp_set *set);

/*
 * exp_fill_block - add the instances and raw values of block @b of the collection
 * @d (pdh_query_set_block) to @set, which must have been reset (exp_set_reset) and is not
 * finished here. PERF_MULTIPLE_COUNTERS (single instance) and PERF_COUNTERSET blocks with
 * status 0 are read, in item order, a value of a counter id the set does not have ignored;
 * other blocks add nothing. Instance names longer than EXP_NAME_MAX - 1 bytes of UTF-8 are
 * cut at a character boundary. Returns 0 or -ENOMEM.
 */
int exp_fill_block(const struct pdh_perfbuf_data *d, const struct pdh_perfbuf_block *b,
		   struct exp_set *set);

#endif /* EXP_SAMPLE_H */

/* SPDX-License-Identifier: MIT */
/*
 * exp_sample.h - perflib-exporter's snapshot taken from libpdh's Linux extension
 * (perflib/pdh-linux.h): a counter set's registration as libpdh decodes it
 * (PdhLinuxGetCounterSetRegistration) and its raw values as PDH's collection reads them
 * (PdhLinuxGetCounterSetSample). Nothing here reads a buffer byte by byte: the exporter
 * has no decoder and no registration model of its own, only the rendering view (exp_set,
 * exp_format.h) built from these.
 */
#ifndef EXP_SAMPLE_H
#define EXP_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exp_format.h"
#include "perflib/pdh-linux.h"

/* a UTF-8 name takes at most this much room (PERF_MAX_INSTANCE_NAME units, 3 bytes each) */
#define EXP_NAME_MAX (3 * PERF_MAX_INSTANCE_NAME + 4)

/*
 * exp_set_from_reg - the rendering view of the counter set @reg: guid, instance type, name
 * and help, counters with their ids, types, attributes, companions, names and help (copied).
 * *@ret_set is owned by the caller (exp_set_free). Returns 0 or -ENOMEM.
 */
int exp_set_from_reg(const PDH_LINUX_COUNTERSET_REG *reg, struct exp_set **ret_set);

/*
 * exp_fill_block - add the instances and raw values of @sample to @set, which must have
 * been reset (exp_set_reset) and is not finished here. PERF_MULTIPLE_COUNTERS (single
 * instance) and PERF_COUNTERSET samples with status 0 are read, in instance order, a value
 * of a counter id the set does not have ignored; other samples add nothing. Instance names
 * longer than EXP_NAME_MAX - 1 bytes of UTF-8 are cut at a character boundary. Returns 0
 * or -ENOMEM.
 */
int exp_fill_block(const PDH_LINUX_COUNTERSET_SAMPLE *sample, struct exp_set *set);

#endif /* EXP_SAMPLE_H */

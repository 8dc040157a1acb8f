/* SPDX-License-Identifier: MIT */
/*
 * pdh_sets.h - whole counter sets through a PDH query: what perflib-exporter reads (every
 * counter and instance of every set, with counter ids and instance ids that the PDH API
 * does not carry). Part of libpdh.a, not of the PDH API: hidden in libpdh.so.
 *
 * A real-time query collects the counter sets its counters use and, with
 * pdh_query_whole_sets, others; PdhCollectQueryData then reads each set's block once as
 * columns (perfcols.h, with the steady state of every PDH collection: a block whose
 * instances stayed only has its values read) and pdh_query_set_block hands it out.
 */
#ifndef PDH_SETS_H
#define PDH_SETS_H

#include <stdbool.h>
#include <stddef.h>

#include "pdh.h"
#include "perfcols.h"
#include "catalog.h"
#include "perflib/pdh-linux.h"

/*
 * pdh_query_whole_sets - have real-time query @query collect the @nr counter sets @sets in
 * full (every counter, every instance; @multi[i]: set i has instances) besides its
 * counters' sets, in place of the list given before. An unchanged list keeps the perflib
 * query (and the steady state); another is used from the next PdhCollectQueryData, which
 * then succeeds with no counter added. A set not registered there is left out of the
 * collection (pdh_query_set_block: PDH_CSTATUS_NO_OBJECT).
 * Returns 0, PDH_INVALID_HANDLE, PDH_INVALID_ARGUMENT (NULL arrays with @nr, a log query),
 * PDH_MEMORY_ALLOCATION_FAILURE.
 */
__attribute__((visibility("hidden"))) PDH_STATUS
pdh_query_whole_sets(PDH_HQUERY query, const GUID *sets, const bool *multi, size_t nr);

/*
 * pdh_query_set_block - the block of counter set @set in the newest collection of @query:
 * *@ret_data the collection, *@ret_block its block (perfcols.h: status, type,
 * columns, items, names, values by column). Valid until the next collection or the query's
 * close; the caller serializes them. Returns 0; PDH_INVALID_HANDLE; PDH_INVALID_ARGUMENT
 * (NULL pointers, a log query); PDH_NO_DATA before the first collection;
 * PDH_CSTATUS_NO_OBJECT when @set was not collected.
 */
__attribute__((visibility("hidden"))) PDH_STATUS
pdh_query_set_block(PDH_HQUERY query, const GUID *set, const struct pdh_perfbuf_data **ret_data,
		    const struct pdh_perfbuf_block **ret_block);

/*
 * The Linux extension's pieces (linux.c; tests build its structures from hand-made
 * buffers with them):
 * pdh_linux_helps - the help strings of a PERF_STRING_BUFFER_HEADER block into @helps
 * (one per counter of @m, NULL ones filled: the first counter with the id that has none).
 * 0, -EBADMSG (strings given before the bad one stay), -ENOMEM.
 */
__attribute__((visibility("hidden"))) int
pdh_linux_helps(const void *buf, size_t len, const struct pdh_cat_set *m, char **helps);
/*
 * pdh_linux_reg_layout - the registration @m (with its names), the set's @name and @help
 * and the counters' @helps (NULL: none) in one allocation; NULL when out of memory
 */
__attribute__((visibility("hidden"))) PDH_LINUX_COUNTERSET_REG *
pdh_linux_reg_layout(const struct pdh_cat_set *m, const char *name, const char *help,
		     char *const *helps);
/* pdh_linux_sample - the sample of block @b of collection @d */
__attribute__((visibility("hidden"))) void pdh_linux_sample(const struct pdh_perfbuf_data *d,
							    const struct pdh_perfbuf_block *b,
							    PDH_LINUX_COUNTERSET_SAMPLE *s);

#endif /* PDH_SETS_H */

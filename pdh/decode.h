/* SPDX-License-Identifier: MIT */
/*
 * decode.h - typeperf's view of the consumer-API buffers: registration info, counter-name
 * blocks and instance lists into a pdh_cat_set, and a PerfQueryCounterData block into a pdh_dec_data
 * whose values are looked up by instance name. The bytes are read and checked by
 * perfbuf.c (shared with perflib-exporter); nothing here touches a buffer. Errors are
 * perfbuf's: -EBADMSG for a malformed buffer, -ENOMEM.
 */
#ifndef PDH_DECODE_H
#define PDH_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "perfbuf.h"
#include "catalog.h"

/*
 * pdh_decode_reg - PERF_REG_COUNTERSET_STRUCT: fills set->guid, set->instance_type and
 * set->counters (names NULL). 0, -EBADMSG, -ENOMEM.
 */
int pdh_decode_reg(const void *buf, size_t size, struct pdh_cat_set *set);

/*
 * pdh_decode_names - a PERF_STRING_BUFFER_HEADER block (codes 5, 10): gives each counter
 * of @set with a string its name, the first string of an id winning. Absent strings and
 * unknown ids are skipped. 0, -EBADMSG (names given before the bad string stay), -ENOMEM.
 */
int pdh_decode_names(const void *buf, size_t size, struct pdh_cat_set *set);

/*
 * pdh_decode_instances - the PERF_INSTANCE_HEADER sequence of
 * PerfEnumerateCounterSetInstances, with duplicate names numbered. *@ret is malloc'd
 * (free each name, then the array). 0, -EBADMSG, -ENOMEM.
 */
int pdh_decode_instances(const void *buf, size_t size, struct pdh_cat_instance **ret,
			 size_t *ret_nr);

/* One raw value of a PerfQueryCounterData result. */
struct pdh_dec_value {
	uint32_t counter_id; /* from PERF_MULTI_COUNTERS, or the spec's for single counters */
	uint32_t size;	     /* 4 or 8; 0 when the data size was neither (no value) */
	uint64_t value;	     /* raw value, zero-extended */
};

/* The values of one instance (or of a set without instances) in one result block. */
struct pdh_dec_item {
	uint32_t instance_id; /* PERF_INSTANCE_HEADER.InstanceId; 0 without a header */
	char *name;	      /* UTF-8 instance name; NULL without an instance header */
	size_t len;	      /* strlen(name) */
	unsigned int dup;     /* duplicate number of name within the block */
	size_t first, nr;     /* values[first .. first + nr) */
};

/* One PERF_COUNTER_HEADER, i.e. the result of the query spec with this Index. */
struct pdh_dec_block {
	uint32_t status;  /* dwStatus; ERROR_INVALID_DATA when the payload was malformed */
	uint32_t type;	  /* PerfCounterDataType */
	size_t first, nr; /* items[first .. first + nr) */
};

struct pdh_dec_data {
	int64_t time;	    /* PerfTimeStamp */
	int64_t time_100ns; /* PerfTime100NSec (FILETIME, UTC) */
	int64_t freq;	    /* PerfFreq */
	size_t nr_blocks;
	struct pdh_dec_block *blocks; /* by Index */
	size_t nr_items;
	struct pdh_dec_item *items;
	size_t nr_values;
	struct pdh_dec_value *values;
};

/*
 * pdh_decode_data - decode a PerfQueryCounterData buffer of @size bytes (the returned
 * actual size). @spec_ids[i] is the CounterId of the spec with Index i (used for
 * PERF_SINGLE_COUNTER and PERF_MULTIPLE_INSTANCES payloads, which carry no id); may be
 * NULL. A block whose payload is inconsistent is kept with status ERROR_INVALID_DATA and no
 * items; a header or size that breaks navigation fails the whole buffer with -EBADMSG.
 * Free with pdh_dec_data_free. 0, -EBADMSG, -ENOMEM.
 */
int pdh_decode_data(const void *buf, size_t size, const uint32_t *spec_ids, size_t nr_specs,
		    struct pdh_dec_data *ret);

/* pdh_dec_data_free - free what pdh_decode_data allocated (accepts a zeroed struct) */
void pdh_dec_data_free(struct pdh_dec_data *data);

/*
 * pdh_dec_data_item - the item of block @block for instance @name with duplicate number @dup
 * (case-insensitive, as numbered in the block), or with @name NULL the first item. NULL
 * when absent or the block failed.
 */
const struct pdh_dec_item *pdh_dec_data_item(const struct pdh_dec_data *data, size_t block,
					     const char *name, unsigned int dup);

/* pdh_dec_item_value - the raw value of counter @id in @item; false when absent */
bool pdh_dec_item_value(const struct pdh_dec_data *data, const struct pdh_dec_item *item,
			uint32_t id, uint64_t *ret);

#endif /* PDH_DECODE_H */

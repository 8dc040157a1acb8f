/* SPDX-License-Identifier: MIT */
/*
 * perfbuf.h - decoding the buffers of the Windows consumer API (perflib-api.md 2.9, 3, 7,
 * 8), the one reader of libpdh, typeperf (decode.h) and perflib-exporter (exp_sample.h):
 * UTF-16 text, registration info, counter-string blocks, instance lists and the
 * PerfQueryCounterData block (pdh_perfbuf_data_parse, the callback walk pdh_decode_data builds
 * on: the reference PDH's column reads, perfcols.h, are tested against).
 *
 * Nothing in a buffer is trusted: every size, offset and count is checked against the
 * bytes actually returned before it is used, navigation follows the size fields (as
 * Microsoft's consumer sample does), and a malformed buffer gives -EBADMSG, never a read
 * out of bounds. Multi-byte fields are read with memcpy, so buffers need no alignment.
 *
 * Sequences (strings, instances, counter data) are reported through callbacks, so each
 * tool builds its own structures and nothing is allocated here. A name reaches a callback
 * as UTF-16LE still inside the buffer: @units code units at @name (any alignment), with a
 * NUL checked to follow inside its block; pdh_perfbuf_utf16_dup() or pdh_perfbuf_utf16_to_utf8()
 * convert it. A callback returns 0 or a negative errno, which stops the walk and is
 * returned as is.
 */
#ifndef PDH_PERFBUF_H
#define PDH_PERFBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perflib-linux.h"

/*
 * pdh_perfbuf_utf16_to_utf8 - convert at most @max_units UTF-16LE units at @src (any
 * alignment), stopping at a NUL, into @dst (@dst_size > 0 bytes, always NUL-terminated;
 * output that does not fit is cut at a character boundary). Unpaired surrogates become
 * U+FFFD. Returns the length written, without the NUL.
 */
size_t pdh_perfbuf_utf16_to_utf8(const void *src, size_t max_units, char *dst, size_t dst_size);

/* pdh_perfbuf_utf16_dup - the same into a malloc'd string (never cut); NULL on ENOMEM */
char *pdh_perfbuf_utf16_dup(const void *src, size_t max_units);

/*
 * pdh_perfbuf_string - the NUL-terminated UTF-16 string that fills a registration answer
 * (codes 3, 4, 7, 9) of @size bytes, as a malloc'd UTF-8 string in *@ret.
 * Returns 0, -EBADMSG without a NUL inside @size bytes, -ENOMEM.
 */
int pdh_perfbuf_string(const void *buf, size_t size, char **ret);

/* One PERF_COUNTER_REG_INFO, as read by pdh_perfbuf_reg_counter(). */
struct pdh_perfbuf_counter {
	uint32_t id;	       /* CounterId */
	uint32_t type;	       /* winperf.h counter type */
	uint64_t attrib;       /* PERF_ATTRIB_* */
	int32_t scale;	       /* DefaultScale, a decimal exponent */
	uint32_t detail_level; /* DetailLevel: PERF_DETAIL_NOVICE, PERF_DETAIL_ADVANCED */
	uint32_t base_id;      /* BaseCounterId, PERFLIB_NO_ID for none */
	uint32_t time_id;      /* PerfTimeId, PERFLIB_NO_ID for none */
	uint32_t freq_id;      /* PerfFreqId, PERFLIB_NO_ID for none */
	uint32_t multi_id;     /* MultiId, PERFLIB_NO_ID for none */
};

/* A checked PERF_REG_COUNTERSET_STRUCT answer (PERF_COUNTERSET_REG_INFO and records). */
struct pdh_perfbuf_reg {
	GUID guid;		 /* CounterSetGuid */
	uint32_t instance_type;	 /* PERF_COUNTERSET_* */
	uint32_t nr_counters;	 /* NumCounters; that many records fit in the buffer */
	const uint8_t *counters; /* the first PERF_COUNTER_REG_INFO, inside the caller's buffer */
};

/*
 * pdh_perfbuf_reg_parse - check the PERF_REG_COUNTERSET_STRUCT answer @buf of @size bytes
 * and describe it in *@ret, which points into @buf (valid while @buf is).
 * Returns 0, or -EBADMSG when the header or NumCounters records do not fit.
 */
int pdh_perfbuf_reg_parse(const void *buf, size_t size, struct pdh_perfbuf_reg *ret);

/* pdh_perfbuf_reg_counter - record @i (< reg->nr_counters) of a parsed answer into *@ret */
void pdh_perfbuf_reg_counter(const struct pdh_perfbuf_reg *reg, uint32_t i,
			     struct pdh_perfbuf_counter *ret);

/*
 * pdh_perfbuf_strings_parse - walk a PERF_STRING_BUFFER_HEADER block (codes 5, 6, 10):
 * @fn(@ctx, counter id, string, units) for each present string, in block order; absent
 * strings (offset 0xFFFFFFFF) are skipped. Strings of ids the caller does not know are
 * checked like the others. Returns 0, -EBADMSG (dwSize or dwCounters beyond the bytes
 * returned, an offset outside the block, a string without NUL before dwSize), or the
 * first error of @fn.
 */
int pdh_perfbuf_strings_parse(const void *buf, size_t size,
			      int (*fn)(void *ctx, uint32_t id, const void *text, size_t units),
			      void *ctx);

/*
 * pdh_perfbuf_instances_parse - walk the PERF_INSTANCE_HEADER blocks of
 * PerfEnumerateCounterSetInstances (@size bytes, 0 for none): @fn(@ctx, InstanceId,
 * name, units) for each, in order. Returns 0, -EBADMSG (a block smaller than a header and
 * a NUL, past the end, or a name without NUL), or the first error of @fn.
 */
int pdh_perfbuf_instances_parse(const void *buf, size_t size,
				int (*fn)(void *ctx, uint32_t id, const void *name, size_t units),
				void *ctx);

/* The PERF_DATA_HEADER of a PerfQueryCounterData buffer. */
struct pdh_perfbuf_data_header {
	int64_t time;	    /* PerfTimeStamp, ticks */
	int64_t time_100ns; /* PerfTime100NSec: 100 ns units since 1601 (FILETIME, UTC) */
	int64_t freq;	    /* PerfFreq, ticks per second */
	uint32_t nr_blocks; /* dwNumCounters; that many counter headers fit in dwTotalSize */
	uint32_t total;	    /* pdh_perfcols_read: bytes of values and sizes read */
};

/*
 * What pdh_perfbuf_data_parse() reports, in buffer order: begin, then for each counter header
 * block(); when that returns true, the block's items and values, then block_end().
 */
struct pdh_perfbuf_data_ops {
	/* the checked header, before any block */
	int (*begin)(void *ctx, const struct pdh_perfbuf_data_header *hdr);
	/* PERF_COUNTER_HEADER number @index (the Index of its query spec); false: skip it */
	bool (*block)(void *ctx, uint32_t index, uint32_t status, uint32_t type);
	/*
	 * an instance (@name NULL and @id 0 for PERF_SINGLE_COUNTER and
	 * PERF_MULTIPLE_COUNTERS payloads, which have no instance header)
	 */
	int (*item)(void *ctx, uint32_t id, const void *name, size_t units);
	/*
	 * a PERF_COUNTER_DATA of the last item, in buffer order: @size 4 or 8 with the value
	 * zero-extended, or 0 (no value) when dwDataSize was neither
	 */
	int (*value)(void *ctx, uint32_t counter_id, uint32_t size, uint64_t value);
	/*
	 * the end of a decoded block; @malformed: its payload broke a size rule (or its type
	 * is unknown) part way, so what it reported must be dropped; the walk goes on with
	 * the next block, found by dwSize
	 */
	int (*block_end)(void *ctx, bool malformed);
};

/*
 * pdh_perfbuf_data_parse - walk a PerfQueryCounterData buffer of @size bytes (the returned
 * actual size), reporting to @ops with @ctx. @spec_ids[i] is the CounterId of the spec
 * with Index i, reported for PERF_SINGLE_COUNTER and PERF_MULTIPLE_INSTANCES values, which
 * carry no id (PERF_WILDCARD_COUNTER when @spec_ids is NULL or too short).
 * Returns 0; -EBADMSG when the data header or a counter header breaks navigation (the
 * callbacks may have run: the caller drops what they built); or the first callback error.
 */
int pdh_perfbuf_data_parse(const void *buf, size_t size, const uint32_t *spec_ids, size_t nr_specs,
			   const struct pdh_perfbuf_data_ops *ops, void *ctx);

#endif /* PDH_PERFBUF_H */

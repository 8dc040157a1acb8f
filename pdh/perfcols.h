/* SPDX-License-Identifier: MIT */
/*
 * perfcols.h - one sample of a perflib query as columns, what PDH reads on every collection
 * and perflib-exporter through it (pdh_sets.h): per block (a specification of the query,
 * by Index) the counter ids of its columns, its values in one array by column (one
 * counter's values over the instances are consecutive), each item's name in one arena of
 * NUL-terminated UTF-8 strings (a block's names are consecutive).
 *
 * pdh_perfcols_read fills it from perflib_query_columns (perflib-linux.h): the library writes
 * the values straight into these arrays and gives only the names of instances that were
 * not in the sample before at the same place; the others' items and names are taken over
 * from that sample. The arrays are kept and reused from one read to the next.
 */
#ifndef PDH_PERFCOLS_H
#define PDH_PERFCOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "perfbuf.h"
#include "perflib-linux.h"

#define PDH_PERFBUF_NO_NAME UINT32_MAX

struct pdh_perfbuf_item {
	uint32_t id;	/* InstanceId; 0 in a block without instances */
	uint32_t len;	/* bytes of the UTF-8 name, without NUL */
	uint32_t units; /* UTF-16 units of the name, without NUL */
	uint32_t dup;	/* the caller's (duplicate numbering): 0, or taken over with the item */
	uint32_t
		name; /* the name at names + name; PDH_PERFBUF_NO_NAME: a block without instances */
};

struct pdh_perfbuf_block {
	uint32_t status;   /* dwStatus */
	uint32_t type;	   /* PerfCounterDataType */
	uint32_t nr_cols;  /* counter ids per item (0 for PERF_ERROR_RETURN) */
	size_t cols;	   /* those ids: ids[cols .. cols + nr_cols) */
	size_t first, nr;  /* items[first .. first + nr) */
	size_t val0;	   /* its values start at values[val0]: see pdh_perfbuf_value() */
	size_t stride;	   /* from one column's values to the next's */
	size_t nr_named;   /* items with a name */
	size_t name_bytes; /* sum of len + 1 over its named items */
	size_t name_units; /* sum of units + 1 over its named items */
	size_t names0;	   /* its names start at names + names0 */
	bool same;	   /* its items are those of the same block of the sample before */
};

struct pdh_perfbuf_data {
	struct pdh_perfbuf_data_header hdr; /* total: bytes of values and sizes read */
	size_t nr_blocks, nr_items, nr_ids, names_len;
	struct pdh_perfbuf_block *blocks; /* by Index */
	struct pdh_perfbuf_item *items;
	uint32_t *rel; /* per item: items[i].name - its block's names0 (arrays place names by it) */
	uint64_t *values; /* masked to the counter's size */
	uint8_t *sizes;	  /* per value: 4 or 8, 0 when it has none */
	uint32_t *ids;
	char *names;
	bool taken; /* items, rel and names are those of the read before, exchanged */
	size_t cap_blocks, cap_items, cap_rel, cap_values, cap_sizes, cap_ids, cap_names;
};

/*
 * pdh_perfbuf_value - where the value of column @col of item @item (of block @b) is in values
 * and sizes: by column (a counter's values over the instances are consecutive)
 */
static inline size_t pdh_perfbuf_value(const struct pdh_perfbuf_block *b, size_t item, uint32_t col)
{
	return b->val0 + (size_t)col * b->stride + (item - b->first);
}

/* pdh_perfbuf_data_release - free the arrays of @d (accepts a zeroed struct) */
void pdh_perfbuf_data_release(struct pdh_perfbuf_data *d);

/*
 * What a query's reads keep from one to the next: per block the arrays perflib writes
 * besides the data's (the instances' keys, ids, new names) and their capacities, and the
 * data the keys' names are in.
 */
struct pdh_perfcols_block {
	ULONGLONG *keys;
	ULONG *inst_ids, *name_offs, *name_lens;
	WCHAR *names;
	size_t cap_rows, cap_units; /* of the arrays above */
	size_t rows, cols;	    /* room for the next read (grown on -ENOSPC) */
	ULONG known;		    /* rows of keys whose items are in `data` */
};

struct perfcols {
	struct pdh_perfcols_block *b;
	struct perflib_column_block *lib; /* the call's blocks */
	size_t nr, cap;
	const struct pdh_perfbuf_data *data; /* the read that filled the keys, NULL: none */
	bool keep;			     /* the read under way was given the keys of data */
	bool remote; /* a query on another machine: read by pdh_remote_columns */
	void *rbuf;  /* its PerfQueryCounterData buffer, kept from one read to the next */
	DWORD rcap;
	DWORD rlen; /* bytes of the sample in rbuf (0: none) */
};

/*
 * pdh_remote_columns - perflib_query_columns for remote query @query (remotecols.c): one
 * PerfQueryCounterData into *@buf (*@cap bytes, grown and kept; *@len the sample's bytes),
 * walked into @blocks; every row named, its key PERFLIB_COLUMN_KEY_COMPUTED. With @again,
 * the sample already in *@buf is walked again (the blocks grown after -ENOSPC: no second
 * sample, no second request). The same returns, -EHOSTUNREACH when the machine cannot be
 * reached, -EACCES when it refuses, -EBADMSG for a malformed answer.
 */
int pdh_remote_columns(HANDLE query, PERF_DATA_HEADER *hdr, struct perflib_column_block *blocks,
		       ULONG nr_blocks, void **buf, DWORD *cap, DWORD *len, bool again);

/*
 * pdh_perfcols_read - read perflib query @query into @d (zeroed the first time; its arrays are
 * reused). @prev is the data of the read before, whose items and names rows the library
 * finds unchanged are taken from (NULL, or not the data @cols last filled: every name is
 * read). When every row of every block is unchanged (the steady state) @d takes @prev's
 * items and names arrays in exchange for its own: @prev keeps its blocks, values, sizes and
 * ids, but its items and names are no longer valid. Returns 0, -ENOMEM, -EBADMSG (@prev
 * does not match the keys), or perflib_query_columns' error.
 */
int pdh_perfcols_read(HANDLE query, struct perfcols *cols, struct pdh_perfbuf_data *prev,
		      struct pdh_perfbuf_data *d);
/* pdh_perfcols_forget - the next read takes nothing from the data of the last one */
void pdh_perfcols_forget(struct perfcols *cols);
void pdh_perfcols_free(struct perfcols *cols);

#endif /* PDH_PERFCOLS_H */

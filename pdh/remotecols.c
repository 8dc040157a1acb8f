// SPDX-License-Identifier: MIT
/*
 * remotecols.c - perflib_query_columns' contract (perflib-linux.h) for a query on another
 * machine (docs/REMOTE.md): the column read is this library's own way of reading a local
 * query, and a remote query has only the Windows call, PerfQueryCounterData, whose bytes
 * come over the network. They are walked with pdh_perfbuf_data_parse (nothing in them
 * trusted) into the caller's column blocks. Rows carry no slot key there, so every row is
 * given its name and the key PERFLIB_COLUMN_KEY_COMPUTED: PDH pairs the instances of two
 * samples by id and name, as it does for the aggregates the library computes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perfcols.h"

struct rc {
	struct perflib_column_block *blocks;
	ULONG nr_blocks;
	struct perflib_column_block *b; /* the block being walked */
	ULONG col;			/* the next value's column in its row */
	bool small;			/* some block's arrays were too small */
};

static int rc_begin(void *ctx, const struct pdh_perfbuf_data_header *hdr)
{
	(void)ctx;
	(void)hdr;
	return 0;
}

static bool rc_block(void *ctx, uint32_t index, uint32_t status, uint32_t type)
{
	struct rc *rc = ctx;
	struct perflib_column_block *b;

	if (index >= rc->nr_blocks)
		return false;
	b = rc->b = &rc->blocks[index];
	b->status = status;
	b->type = status ? PERF_ERROR_RETURN : type;
	b->nr_cols = b->nr_rows = b->nr_named = b->name_units = 0;
	return true;
}

static int rc_item(void *ctx, uint32_t id, const void *name, size_t units)
{
	struct rc *rc = ctx;
	struct perflib_column_block *b = rc->b;
	ULONG row = b->nr_rows++;

	rc->col = 0;
	if (units > UINT32_MAX - 1 - b->name_units)
		return -EBADMSG;
	if (row < b->max_rows) {
		b->instance_ids[row] = id;
		b->keys[row] = PERFLIB_COLUMN_KEY_COMPUTED;
		b->name_offsets[row] = name ? b->name_units : PERFLIB_COLUMN_NO_NAME;
		if (name)
			b->name_lengths[row] = (ULONG)units;
	}
	if (!name)
		return 0;
	/* the name (any alignment in the buffer) and its NUL */
	if (b->name_units + units + 1 <= b->max_name_units) {
		memcpy(b->names + b->name_units, name, units * 2);
		b->names[b->name_units + units] = 0;
	}
	b->nr_named++;
	b->name_units += (ULONG)units + 1;
	return 0;
}

static int rc_value(void *ctx, uint32_t counter_id, uint32_t size, uint64_t value)
{
	struct rc *rc = ctx;
	struct perflib_column_block *b = rc->b;
	ULONG col = rc->col++, row = b->nr_rows - 1;

	if (!b->nr_rows)
		return -EBADMSG; /* a value before any item: the walk reports items first */
	if (col >= b->nr_cols) {
		/* the first row names the columns */
		if (row)
			return -EBADMSG;
		b->nr_cols = col + 1;
		if (col < b->max_cols)
			b->counter_ids[col] = counter_id;
	}
	if (col < b->max_cols && row < b->max_rows) {
		b->values[(size_t)col * b->max_rows + row] = value;
		b->sizes[(size_t)col * b->max_rows + row] = (UCHAR)size;
	}
	return 0;
}

static int rc_block_end(void *ctx, bool malformed)
{
	struct rc *rc = ctx;
	struct perflib_column_block *b = rc->b;

	if (malformed) {
		b->status = ERROR_INVALID_DATA;
		b->type = PERF_ERROR_RETURN;
		b->nr_cols = b->nr_rows = b->nr_named = b->name_units = 0;
	}
	if (b->nr_rows > b->max_rows || b->nr_cols > b->max_cols ||
	    b->name_units > b->max_name_units)
		rc->small = true;
	return 0;
}

static const struct pdh_perfbuf_data_ops rc_ops = {
	.begin = rc_begin,
	.block = rc_block,
	.item = rc_item,
	.value = rc_value,
	.block_end = rc_block_end,
};

/*
 * PerfQueryCounterData into *@buf, grown to the size asked for (with room to spare: the
 * next sample may be larger) and kept. The call after a too-small buffer is answered from
 * the sample that did not fit (userspace/remote.c keeps it): one request per sample. Win32
 * code, the size in *@len.
 */
static ULONG fetch(HANDLE query, void **buf, DWORD *cap, DWORD *len)
{
	ULONG st = ERROR_NOT_ENOUGH_MEMORY;
	int tries;

	for (tries = 0; tries < 4 && st == ERROR_NOT_ENOUGH_MEMORY; tries++) {
		st = PerfQueryCounterData(query, *buf, *cap, len);
		if (st == ERROR_NOT_ENOUGH_MEMORY) {
			DWORD want = *len > UINT32_MAX - *len / 4 ? UINT32_MAX : *len + *len / 4;
			void *grown = *len > *cap ? realloc(*buf, want) : NULL;

			if (!grown)
				return ERROR_OUTOFMEMORY;
			*buf = grown;
			*cap = want;
		}
	}
	return st;
}

/* a consumer call's failure as the errno perflib_query_columns would give */
static int errno_of(ULONG st)
{
	switch (st) {
	case ERROR_BAD_NETPATH:
		return -EHOSTUNREACH;
	case ERROR_ACCESS_DENIED:
		return -EACCES;
	case ERROR_INVALID_HANDLE:
		return -EBADF;
	case ERROR_OUTOFMEMORY:
	case ERROR_NOT_ENOUGH_MEMORY:
		return -ENOMEM;
	default:
		return -EPROTO;
	}
}

int pdh_remote_columns(HANDLE query, PERF_DATA_HEADER *hdr, struct perflib_column_block *blocks,
		       ULONG nr_blocks, void **buf, DWORD *cap, DWORD *len, bool again)
{
	struct rc rc = {.blocks = blocks, .nr_blocks = nr_blocks};
	ULONG st;
	int err;

	if (!again || !*len) {
		*len = 0;
		st = fetch(query, buf, cap, len);
		if (st) {
			*len = 0;
			return errno_of(st);
		}
	}
	if (*len < sizeof(*hdr))
		return -EBADMSG;
	memcpy(hdr, *buf, sizeof(*hdr));
	if (hdr->dwNumCounters > nr_blocks)
		return -ENOSPC;
	err = pdh_perfbuf_data_parse(*buf, *len, NULL, 0, &rc_ops, &rc);
	if (err)
		return err;
	return rc.small ? -ENOSPC : 0;
}

// SPDX-License-Identifier: MIT
/*
 * obuf.c - the output buffer: the Windows blocks every consumer function writes
 * (PERF_INSTANCE_HEADER with its name, PERF_COUNTER_DATA), the buffer-size protocol, and
 * the direct writer, which writes the instances the slot reader returns straight into the
 * caller's buffer ("iterate and write": no snapshot, one copy).
 */
#include <stdlib.h>
#include <string.h>

#include "reader.h"

ULONG perflib_obuf_result(const struct perflib_obuf *o, DWORD *ret_actual)
{
	/* sizes are DWORDs: a result past 4 GiB cannot be asked for */
	if (o->len > UINT32_MAX)
		return ERROR_OUTOFMEMORY;
	return perflib_buffer_result((DWORD)o->len, (DWORD)o->cap, ret_actual);
}

void perflib_obuf_instance(struct perflib_obuf *o, uint32_t id, const WCHAR *name, size_t len)
{
	size_t name_bytes = (len + 1) * 2,
	       size = perflib_round8(sizeof(PERF_INSTANCE_HEADER) + name_bytes);
	PERF_INSTANCE_HEADER h = {.Size = (ULONG)size, .InstanceId = id};
	uint8_t *p = perflib_obuf_put(o, size);

	if (!p)
		return;
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), name, len * 2);
	memset(p + sizeof(h) + len * 2, 0, 2);
	perflib_zero_tail(p, sizeof(h) + name_bytes, size);
}

void perflib_obuf_values(struct perflib_obuf *o, const struct perflib_cset *cs,
			 const uint64_t *vals, const uint8_t *nodata, int pos)
{
	size_t first = pos < 0 ? 0 : (size_t)pos, end = pos < 0 ? cs->nr_counters : first + 1;
	uint8_t *p = perflib_obuf_put(o, 16 * (end - first));
	PERF_COUNTER_DATA d = {.dwSize = 16};
	static const uint64_t zero;
	size_t k;

	if (!p)
		return;
	for (k = first; k < end; k++, p += 16) {
		/* little-endian: a DWORD value fills the first 4 bytes, the rest is zero */
		d.dwDataSize = nodata[k] ? 0 : cs->data_size[k];
		memcpy(p, &d, sizeof(d));
		memcpy(p + sizeof(d), nodata[k] ? &zero : &vals[k], 8);
	}
}

int perflib_obuf_direct(const struct perflib_cset *cs, const struct perflib_filter *f, int pos,
			struct perflib_obuf *o, uint32_t *ret_nr)
{
	const struct perflib_info *info = cs->map->info;
	bool values = pos != PERFLIB_NO_VALUES, aligned = !((uintptr_t)o->p & 7);
	size_t n = cs->nr_counters, name_room = perflib_round8(2 * (size_t)info->name_max);
	size_t max_block = sizeof(PERF_INSTANCE_HEADER) + name_room +
			   16 * (!values   ? 0
				 : pos < 0 ? n
					   : 1);
	struct perflib_reader r;
	struct perflib_found c;
	struct perflib_row row;
	uint32_t nr = 0;
	int err;

	err = perflib_row_alloc(&row, cs);
	if (err)
		return err;
	err = perflib_reader_init(&r, cs, values);
	while (!err) {
		uint8_t *dst = NULL;
		WCHAR *name = row.name;
		size_t used, size;

		/* room for the largest block: the name goes in place at once */
		if (aligned && o->len <= o->cap && o->cap - o->len >= max_block) {
			dst = o->p + o->len;
			name = (WCHAR *)(dst + sizeof(PERF_INSTANCE_HEADER));
		}
		if (!perflib_reader_next(&r, name, row.vals, row.nodata, &c)) {
			err = r.err;
			break;
		}
		if (f && !perflib_filter_match(f, c.id, name, c.len))
			continue;
		if (dst) {
			PERF_INSTANCE_HEADER hdr = {.InstanceId = c.id};

			used = sizeof(hdr) + ((size_t)c.len + 1) * 2;
			size = perflib_round8(used);
			hdr.Size = (ULONG)size;
			memcpy(dst, &hdr, sizeof(hdr));
			perflib_zero_tail(dst, used, size);
			o->len += size;
		} else {
			perflib_obuf_instance(o, c.id, name, c.len);
		}
		if (values)
			perflib_obuf_values(o, cs, row.vals, row.nodata, pos);
		nr++;
	}
	perflib_reader_fini(&r);
	perflib_row_free(&row);
	*ret_nr = nr;
	return err;
}

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

/*
 * The direct writer's loop, for one way of writing values (@mode, a constant in each
 * caller: the loop is made once per mode). Each instance is read straight into the output
 * when the largest block fits there (its name, and its values as records, then the
 * header once the reader kept it), else into @scratch and put from there (counted only
 * once the buffer is full). A slot the reader skips leaves bytes past the end of the
 * output, overwritten by the next block. Everything the loop touches per slot is in
 * locals: the output's bytes cannot alias them.
 */
static inline __attribute__((always_inline)) int
direct_loop(const struct perflib_cset *cs, const struct perflib_filter *f, int pos,
	    struct perflib_obuf *o, uint32_t *ret_nr, struct perflib_row *row, uint8_t *scratch,
	    size_t max_block, const int mode, const bool plain)
{
	const bool values = mode != PERFLIB_VALS_NONE, aligned = !((uintptr_t)o->p & 7);
	const bool all = !f || (f->instance_id == PERFLIB_NO_ID && (f->match_all || !f->name));
	const size_t recs = mode == PERFLIB_VALS_RECORDS ? 16 * (size_t)cs->nr_counters : 0;
	uint8_t *const out = o->p;
	const size_t cap = o->cap;
	/* the largest block fits at out + len while len < direct_end */
	const size_t direct_end = aligned && cap >= max_block ? cap - max_block + 1 : 0;
	size_t len = o->len;
	struct perflib_reader r;
	struct perflib_owners ow;
	struct perflib_prefetch pf;
	struct perflib_vals_out vo = {.vals = row->vals, .vstride = 1, .nodata = row->nodata};
	bool single, hides_total, done = false;
	uint32_t nr = 0;
	int err;

	if (mode == PERFLIB_VALS_RECORDS) {
		vo.n = cs->nr_counters;
		memcpy(vo.hdr, cs->rec_hdr, vo.n * sizeof(*vo.hdr));
		memcpy(vo.mask, cs->mask, vo.n * sizeof(*vo.mask));
	}
	err = perflib_reader_init(&r, cs, values);
	ow.last = r.alive.last;
	ow.ac = &r.alive;
	single = !plain && r.single;
	hides_total = !plain && r.hides_total;
	while (!err && !done) {
		const struct perflib_span sp = perflib_reader_span(&r);

		if (!sp.nwords) {
			err = r.err;
			break;
		}
		perflib_prefetch_start(&sp, values, &pf);
		for (uint32_t wi = 0; wi < sp.nwords && !done; wi++) {
			uint64_t bits = perflib_span_word(&sp, wi, __ATOMIC_ACQUIRE);

			while (bits && !done) {
				uint32_t j = wi * 64 + (uint32_t)__builtin_ctzll(bits);
				bool direct = len < direct_end;
				uint8_t *dst = direct ? out + len : scratch;
				WCHAR *name = (WCHAR *)(dst + sizeof(PERF_INSTANCE_HEADER));
				PERF_INSTANCE_HEADER hdr;
				struct perflib_found c;
				size_t used, size;

				bits &= bits - 1;
				perflib_prefetch_step(&sp, &pf);
				if (!perflib_read_slot(&sp, j, cs, &ow, name, mode, &vo, &c))
					continue;
				if (!plain && hides_total &&
				    perflib_total_hidden(cs->instance_type, name, c.len))
					continue;
				/* a single-instance set has one instance; more can only be garbage */
				if (!plain)
					done = single;
				if (!all && !perflib_filter_match(f, c.id, name, c.len))
					continue;
				hdr.InstanceId = c.id;
				used = sizeof(hdr) + ((size_t)c.len + 1) * 2;
				size = perflib_round8(used);
				hdr.Size = (ULONG)size;
				/* the name's padding is zero (perflib_name_copy) */
				memcpy(dst, &hdr, sizeof(hdr));
				size += recs;
				if (direct) {
					len += size;
				} else {
					if (len <= cap && cap - len >= size)
						memcpy(out + len, dst, size);
					len += size;
				}
				if (mode == PERFLIB_VALS_ROW) {
					o->len = len;
					perflib_obuf_values(o, cs, row->vals, row->nodata, pos);
					len = o->len;
				}
				nr++;
			}
		}
	}
	perflib_reader_fini(&r);
	o->len = len;
	*ret_nr = nr;
	return err;
}

int perflib_obuf_direct(const struct perflib_cset *cs, const struct perflib_filter *f, int pos,
			struct perflib_obuf *o, uint32_t *ret_nr)
{
	const struct perflib_info *info = cs->map->info;
	size_t n = cs->nr_counters, name_room = perflib_round8(2 * (size_t)info->name_max);
	size_t max_block = sizeof(PERF_INSTANCE_HEADER) + name_room +
			   16 * (pos == PERFLIB_NO_VALUES ? 0
				 : pos < 0		  ? n
							  : 1);
	/* no single-instance cutoff, no hidden _Total */
	const bool plain = cs->instance_type == PERF_COUNTERSET_MULTI_INSTANCES;
	struct perflib_row row;
	uint8_t *scratch;
	int err;

	*ret_nr = 0;
	err = perflib_row_alloc(&row, cs);
	if (err)
		return err;
	scratch = malloc(max_block);
	if (!scratch) {
		perflib_row_free(&row);
		return -ENOMEM;
	}
	/* the common cases each get their own loop: no branch of the others in it */
	if (pos == PERFLIB_NO_VALUES && plain)
		err = direct_loop(cs, f, pos, o, ret_nr, &row, scratch, max_block,
				  PERFLIB_VALS_NONE, true);
	else if (pos == PERFLIB_NO_VALUES)
		err = direct_loop(cs, f, pos, o, ret_nr, &row, scratch, max_block,
				  PERFLIB_VALS_NONE, false);
	else if (pos < 0 && plain && !cs->byref && !cs->nr_pcpu && n <= PERFLIB_RECORDS_MAX)
		err = direct_loop(cs, f, pos, o, ret_nr, &row, scratch, max_block,
				  PERFLIB_VALS_RECORDS, true);
	else
		err = direct_loop(cs, f, pos, o, ret_nr, &row, scratch, max_block, PERFLIB_VALS_ROW,
				  false);
	free(scratch);
	perflib_row_free(&row);
	return err;
}

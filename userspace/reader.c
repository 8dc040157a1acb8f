// SPDX-License-Identifier: MIT
/*
 * reader.c - the slot reader: the one iterator over the instances of a counter set that a
 * consumer may see. Every consumer path (snapshots, the direct writer, and through them the
 * enumeration, the queries and the tools) reads slots through perflib_reader_next, which
 * applies every visibility rule in one place:
 *
 *  - the slot word is LIVE and did not change while the slot was copied (seqlock: the
 *    generation in the word grows on every transition, so names are never torn and
 *    half-created or half-deleted instances never show);
 *  - its owner (pid + start time) still runs (liveness.c), so orphans of a dead provider
 *    never show, even before a reaper frees them;
 *  - its name ends inside name_max units (every offset comes from the private, checked info
 *    copy, never from the slot);
 *  - a single-instance counter set gives at most one instance;
 *  - a provider's own "_Total" of a MULTI_AGGREGATE or INSTANCE_AGGREGATE set is hidden:
 *    the consumer computes that instance (aggregate.c, enumerate.c).
 *
 * Mapped sets: the slots whose live bit is set, segment by segment, so a set that held many
 * instances costs what its live ones cost. The kernel maps a BPF array only through a file
 * open for writing: a reader whose pins grant read but not write permission (mode 0644 for
 * others) copies the slots with batch lookups, twice, and keeps a slot only when its word
 * is the same in both copies.
 */
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "reader.h"

#define COPY_CHUNK 256 /* slots per batch copy when a counter set cannot be mapped */

bool perflib_total_hidden(uint32_t instance_type, const WCHAR *name, size_t len)
{
	/* the computed _Total takes the name: a provider's own "_Total" would be a duplicate */
	return (instance_type == PERF_COUNTERSET_MULTI_AGGREGATE ||
		instance_type == PERF_COUNTERSET_INSTANCE_AGGREGATE) &&
	       len == PERFLIB_TOTAL_LEN && !memcmp(name, PERFLIB_TOTAL_NAME, PERFLIB_TOTAL_LEN * 2);
}

/* copy entries [first, first + n) of array map @fd (@value_size bytes each) into @buf */
static int copy_entries(int fd, uint32_t first, uint32_t n, uint32_t value_size, uint8_t *buf)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t prev = first - 1, out = 0, count = n, k;
	uint32_t *keys = malloc((n ? n : 1) * sizeof(*keys));

	if (!keys)
		return -ENOMEM;
	/* defined bytes whatever the kernel copies (valgrind does not know batch lookups) */
	memset(keys, 0, (n ? n : 1) * sizeof(*keys));
	memset(buf, 0, (size_t)n * value_size);
	/* a batch continues after the key it is given: the entry before the first one */
	if (!bpf_map_lookup_batch(fd, first ? &prev : NULL, &out, keys, buf, &count, &opts) ||
	    errno == ENOENT) {
		for (k = 0; k < count && keys[k] == first + k; k++)
			;
		if (k == n) {
			free(keys);
			return 0;
		}
	}
	free(keys);
	/* no batch support, or not the entries asked for: one lookup each */
	for (k = 0; k < n; k++) {
		uint32_t key = first + k;

		if (bpf_map_lookup_elem(fd, &key, buf + (size_t)k * value_size))
			return -errno;
	}
	return 0;
}

/* ---- where the next slot comes from ------------------------------------------------------ */

bool perflib_reader_class(struct perflib_reader *r, uint32_t cls)
{
	struct perflib_store *map = r->cs->map;
	const struct perflib_class *c = &map->cls[cls];

	if (cls >= map->nr_classes)
		return false;
	r->cls = cls;
	r->slot_size = c->slot_size;
	r->name_max = c->geo->name_max;
	r->ref_offset = c->geo->ref_offset;
	r->n_slots = perflib_store_slots(map, cls);
	r->next = r->first = 0;
	r->bits = 0;
	r->bits_base = 0;
	if (map->mapped) {
		r->a = r->b = c->data;
		r->nr = r->n_slots;
	} else {
		r->nr = 0;
	}
	return true;
}

int perflib_reader_init(struct perflib_reader *r, const struct perflib_cset *cs, bool values)
{
	struct perflib_store *map = cs->map;
	uint32_t c, largest = 0;
	size_t chunk;

	memset(r, 0, sizeof(*r));
	r->cs = cs;
	r->values = values;
	r->single = cs->instance_type == PERF_COUNTERSET_SINGLE_INSTANCE;
	r->hides_total = cs->instance_type == PERF_COUNTERSET_MULTI_AGGREGATE ||
			 cs->instance_type == PERF_COUNTERSET_INSTANCE_AGGREGATE;
	r->name_offset = map->info->name_offset;
	/* storage other processes added since the last call */
	perflib_store_refresh(map);
	perflib_reader_class(r, 0);
	if (map->mapped)
		return 0;
	for (c = 0; c < map->nr_classes; c++) {
		if (map->cls[c].slot_size > largest)
			largest = map->cls[c].slot_size;
	}
	chunk = (size_t)COPY_CHUNK * largest;
	r->copy[0] = malloc(chunk);
	r->copy[1] = malloc(chunk);
	return r->copy[0] && r->copy[1] ? 0 : -ENOMEM;
}

int perflib_row_alloc(struct perflib_row *row, const struct perflib_cset *cs)
{
	size_t n = cs->nr_counters, name_room = perflib_round8(2 * (size_t)cs->map->info->name_max);

	row->vals = malloc(n * (sizeof(*row->vals) + 1) + name_room);
	if (!row->vals)
		return -ENOMEM;
	row->nodata = (uint8_t *)(row->vals + n);
	row->name = (WCHAR *)(row->nodata + n);
	memset(row->nodata, 0, n);
	return 0;
}

void perflib_row_free(struct perflib_row *row)
{
	free(row->vals);
	row->vals = NULL;
}

void perflib_reader_fini(struct perflib_reader *r)
{
	free(r->copy[0]);
	free(r->copy[1]);
	r->copy[0] = r->copy[1] = NULL;
	perflib_alive_fini(&r->alive);
}

/* unmapped: copy the chunk of slots from r->next on (within its segment) */
int perflib_reader_load(struct perflib_reader *r)
{
	const struct perflib_class *c = &r->cs->map->cls[r->cls];
	uint32_t k = perflib_seg_of(r->next, c->seg0);
	uint32_t first = (uint32_t)perflib_seg_first(k, c->seg0);
	uint32_t end = first + (uint32_t)perflib_seg_slots(k, c->seg0);
	uint32_t n = end - r->next < COPY_CHUNK ? end - r->next : COPY_CHUNK;
	int fd = c->segs[k].data_fd, err;

	err = copy_entries(fd, r->next - first, n, r->slot_size, r->copy[0]);
	if (!err)
		err = copy_entries(fd, r->next - first, n, r->slot_size, r->copy[1]);
	if (err)
		return err;
	r->a = r->copy[0];
	r->b = r->copy[1];
	r->first = r->next;
	r->nr = n;
	return 0;
}

/* mapped: the next live word with a bit set; false at the end */
bool perflib_reader_bits(struct perflib_reader *r)
{
	const struct perflib_class *c = &r->cs->map->cls[r->cls];

	while (!r->bits) {
		uint32_t k, first, end, off, valid;

		if (r->next >= r->n_slots)
			return false;
		k = perflib_seg_of(r->next, c->seg0);
		first = (uint32_t)perflib_seg_first(k, c->seg0);
		end = first + (uint32_t)perflib_seg_slots(k, c->seg0);
		off = r->next - first;
		r->bits_base = r->next - off % 64;
		r->bits = __atomic_load_n(&c->segs[k].live[off / 64], __ATOMIC_ACQUIRE);
		valid = end - r->bits_base;
		if (valid < 64)
			r->bits &= (1ULL << valid) - 1;
		r->next = r->bits_base + 64 < end ? r->bits_base + 64 : end;
		/* the first live slot of the next word comes in while this word's are read */
		if (r->bits && r->next < end) {
			uint64_t nb = __atomic_load_n(&c->segs[k].live[(r->next - first) / 64],
						      __ATOMIC_RELAXED);

			if (nb)
				perflib_reader_prefetch(r, r->next + (uint32_t)__builtin_ctzll(nb));
		}
	}
	return true;
}

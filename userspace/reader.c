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

bool perflib_total_hidden(uint32_t instance_type, const WCHAR *name, size_t len)
{
	/* the computed _Total takes the name: a provider's own "_Total" would be a duplicate */
	return (instance_type == PERF_COUNTERSET_MULTI_AGGREGATE ||
		instance_type == PERF_COUNTERSET_INSTANCE_AGGREGATE) &&
	       len == PERFLIB_TOTAL_LEN && !memcmp(name, PERFLIB_TOTAL_NAME, PERFLIB_TOTAL_LEN * 2);
}

/*
 * per-CPU counters: out of the inline reading loops (reader.h), which call it for a set that
 * has them
 */
void perflib_read_pcpu(const struct perflib_cset *cs, const uint8_t *slot, uint32_t pcpu_offset,
		       uint64_t *vals, size_t vstride)
{
	const uint64_t *v = (const uint64_t *)(slot + PERFLIB_COUNTERS_OFFSET);
	uint32_t j, k;

	for (j = 0; j < cs->nr_pcpu; j++) {
		k = cs->pcpu_pos[j];
		vals[k * vstride] =
			(__atomic_load_n(&v[k], __ATOMIC_RELAXED) +
			 perflib_pcpu_sum(slot, pcpu_offset, cs->pcpu_lines, cs->nr_cpus, j)) &
			cs->mask[k];
	}
}

/* ---- where the next slots come from ----------------------------------------------------- */

/* start size class @cls (false past the last) */
static bool reader_class(struct perflib_reader *r, uint32_t cls)
{
	struct perflib_store *map = r->cs->map;

	if (cls >= map->nr_classes)
		return false;
	r->cls = cls;
	r->n_slots = perflib_store_slots(map, cls);
	r->next = 0;
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
	/* the owners' exits this thread's perflib_cset_get just asked the epoll instance about */
	r->alive.fresh = perflib_watch_fresh();
	r->single = cs->instance_type == PERF_COUNTERSET_SINGLE_INSTANCE;
	r->hides_total = cs->instance_type == PERF_COUNTERSET_MULTI_AGGREGATE ||
			 cs->instance_type == PERF_COUNTERSET_INSTANCE_AGGREGATE;
	/* storage other processes added since the last call */
	perflib_store_refresh(map);
	reader_class(r, 0);
	if (map->mapped)
		return 0;
	for (c = 0; c < map->nr_classes; c++) {
		if (map->cls[c].slot_size > largest)
			largest = map->cls[c].slot_size;
	}
	chunk = (size_t)PERFLIB_COPY_CHUNK * largest;
	r->copy[0] = malloc(chunk);
	r->copy[1] = malloc(chunk);
	memset(r->ones, 0xff, sizeof(r->ones));
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

struct perflib_span perflib_reader_span(struct perflib_reader *r)
{
	const struct perflib_store *map = r->cs->map;
	struct perflib_span sp = {.nwords = 0};

	while (!r->err) {
		const struct perflib_class *c = &map->cls[r->cls];
		uint32_t k, first, end, n;

		if (r->next >= r->n_slots) {
			/* this class is done: the next one */
			if (!reader_class(r, r->cls + 1))
				break;
			continue;
		}
		k = perflib_seg_of(r->next, c->seg0);
		first = (uint32_t)perflib_seg_first(k, c->seg0);
		end = first + (uint32_t)perflib_seg_slots(k, c->seg0);
		sp.cls = r->cls;
		sp.slot_size = c->slot_size;
		sp.name_offset = map->info->name_offset;
		sp.name_max = c->geo->name_max;
		sp.ref_offset = c->geo->ref_offset;
		sp.pcpu_offset = c->geo->pcpu_offset;
		if (map->mapped) {
			/* the segment: its live bitmap */
			n = end - r->next;
			sp.live = perflib_seg_at(c, k)->live + (r->next - first) / 64;
			sp.a = sp.b = c->data + (size_t)r->next * c->slot_size;
		} else {
			/* a chunk of the segment, copied twice */
			int fd = perflib_seg_at(c, k)->data_fd;

			n = end - r->next < PERFLIB_COPY_CHUNK ? end - r->next : PERFLIB_COPY_CHUNK;
			r->err = perflib_array_copy(fd, r->next - first, n, c->slot_size,
						    r->copy[0]);
			if (!r->err)
				r->err = perflib_array_copy(fd, r->next - first, n, c->slot_size,
							    r->copy[1]);
			if (r->err)
				break;
			sp.live = r->ones;
			sp.a = r->copy[0];
			sp.b = r->copy[1];
		}
		sp.base = r->next;
		sp.nwords = (n + 63) / 64;
		sp.last_mask = n % 64 ? (1ULL << (n % 64)) - 1 : ~0ULL;
		r->next += n;
		return sp;
	}
	sp.nwords = 0;
	return sp;
}

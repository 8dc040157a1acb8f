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

#include "consumer.h"

#define READ_RETRIES 4 /* copies of one slot before it is skipped as changing */
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

int perflib_reader_init(struct perflib_reader *r, const struct perflib_cset *cs, bool values)
{
	struct perflib_set_map *map = cs->map;
	size_t chunk = (size_t)COPY_CHUNK * map->info->slot_size;

	memset(r, 0, sizeof(*r));
	r->cs = cs;
	r->values = values;
	r->single = cs->instance_type == PERF_COUNTERSET_SINGLE_INSTANCE;
	r->hides_total = cs->instance_type == PERF_COUNTERSET_MULTI_AGGREGATE ||
			 cs->instance_type == PERF_COUNTERSET_INSTANCE_AGGREGATE;
	r->slot_size = map->info->slot_size;
	r->name_offset = map->info->name_offset;
	/* storage other processes added since the last call */
	perflib_set_refresh(map);
	r->n_slots = perflib_set_slots(map);
	if (map->data) {
		r->a = r->b = map->data;
		r->nr = r->n_slots;
		return 0;
	}
	r->copy[0] = malloc(chunk);
	r->copy[1] = malloc(chunk);
	return r->copy[0] && r->copy[1] ? 0 : -ENOMEM;
}

void perflib_reader_fini(struct perflib_reader *r)
{
	free(r->copy[0]);
	free(r->copy[1]);
	r->copy[0] = r->copy[1] = NULL;
	perflib_alive_fini(&r->alive);
}

static inline const uint8_t *reader_slot(const struct perflib_reader *r, const uint8_t *base,
					 uint32_t i)
{
	return base + (size_t)(i - r->first) * r->slot_size;
}

/* unmapped: copy the chunk of slots from r->next on (within its segment) */
static int reader_load(struct perflib_reader *r)
{
	const struct perflib_set_map *map = r->cs->map;
	uint32_t k = perflib_seg_of(r->next, map->seg0);
	uint32_t first = (uint32_t)perflib_seg_first(k, map->seg0);
	uint32_t end = first + (uint32_t)perflib_seg_slots(k, map->seg0);
	uint32_t n = end - r->next < COPY_CHUNK ? end - r->next : COPY_CHUNK;
	int fd = map->segs[k].data_fd, err;

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
static bool reader_bits(struct perflib_reader *r)
{
	const struct perflib_set_map *map = r->cs->map;

	while (!r->bits) {
		uint32_t k, first, end, off, valid;

		if (r->next >= r->n_slots)
			return false;
		k = perflib_seg_of(r->next, map->seg0);
		first = (uint32_t)perflib_seg_first(k, map->seg0);
		end = first + (uint32_t)perflib_seg_slots(k, map->seg0);
		off = r->next - first;
		r->bits_base = r->next - off % 64;
		r->bits = __atomic_load_n(&map->segs[k].live[off / 64], __ATOMIC_ACQUIRE);
		valid = end - r->bits_base;
		if (valid < 64)
			r->bits &= (1ULL << valid) - 1;
		r->next = r->bits_base + 64 < end ? r->bits_base + 64 : end;
	}
	return true;
}

/*
 * reader_next - the next slot to look at, readable through reader_slot(); false at the
 * end or on an error (*err set). Starts loading the lines the slot after it needs.
 */
static inline bool reader_next(struct perflib_reader *r, uint32_t *ret_i, int *err)
{
	const uint8_t *p;
	uint32_t j;

	if (r->cs->map->data) {
		if (!reader_bits(r))
			return false;
		j = (uint32_t)__builtin_ctzll(r->bits);
		r->bits &= r->bits - 1;
		*ret_i = r->bits_base + j;
		/* the next live slot of this word: its memory comes in while this one is read */
		if (r->bits) {
			p = reader_slot(r, r->a, r->bits_base + (uint32_t)__builtin_ctzll(r->bits));
			__builtin_prefetch(p);
			__builtin_prefetch(p + r->name_offset);
			if (r->values)
				__builtin_prefetch(p + PERFLIB_COUNTERS_OFFSET);
		}
		return true;
	}
	if (r->next >= r->first + r->nr) {
		if (r->next >= r->n_slots)
			return false;
		*err = reader_load(r);
		if (*err)
			return false;
	}
	*ret_i = r->next++;
	return true;
}

/* raw counter values of @slot, masked to their size; by-reference ones from the ref area */
static void read_values(const struct perflib_cset *cs, const uint8_t *slot, uint64_t *vals,
			uint8_t *nodata)
{
	const struct perflib_info *info = cs->map->info;
	const uint64_t *v = (const uint64_t *)(slot + PERFLIB_COUNTERS_OFFSET);
	const uint64_t *ref, *null_bits;
	uint32_t k, n = cs->nr_counters;

	for (k = 0; k < n; k++)
		vals[k] = __atomic_load_n(&v[k], __ATOMIC_RELAXED) & cs->mask[k];
	if (!cs->byref)
		return;
	/* values dereferenced by the provider, then one bit per position: address NULL */
	ref = (const uint64_t *)(slot + info->ref_offset);
	null_bits = ref + n;
	for (k = 0; k < n; k++) {
		nodata[k] = 0;
		if (!cs->is_ref[k])
			continue;
		vals[k] = __atomic_load_n(&ref[k], __ATOMIC_RELAXED) & cs->mask[k];
		nodata[k] = (__atomic_load_n(&null_bits[k / 64], __ATOMIC_RELAXED) >> (k % 64)) & 1;
	}
}

/*
 * read_slot - copy slot @i: its id, its name (with NUL) into @name (room for
 * round8(2 * name_max) bytes: the name is copied by 8-byte words), and when @vals is given its
 * values. True only for a consistent copy of a live instance whose owner runs.
 */
static inline __attribute__((always_inline)) bool read_slot(struct perflib_reader *r, uint32_t i,
							    WCHAR *name, uint64_t *vals,
							    uint8_t *nodata,
							    struct perflib_found *ret)
{
	const struct perflib_cset *cs = r->cs;
	const struct perflib_info *info = cs->map->info;
	const uint8_t *slot = reader_slot(r, r->a, i), *again = reader_slot(r, r->b, i);
	const struct perflib_slot_hdr *h = (const void *)slot;
	const PERF_COUNTERSET_INSTANCE *blk = (const void *)(slot + PERFLIB_BLOCK_OFFSET);
	const WCHAR *src = (const WCHAR *)(slot + info->name_offset);
	uint64_t w = perflib_slot_word(slot), w2, start;
	uint32_t id;
	size_t len;
	int tries;

	for (tries = 0; tries < READ_RETRIES; tries++) {
		if (perflib_word_state(w) != PERFLIB_SLOT_LIVE)
			return false;
		start = __atomic_load_n(&h->owner_start, __ATOMIC_RELAXED);
		id = __atomic_load_n(&blk->InstanceId, __ATOMIC_RELAXED);
		/* bounded by the private info copy, whatever the slot holds; the NUL comes along */
		len = perflib_name_copy((uint8_t *)name, src, info->name_max);
		if (vals)
			read_values(cs, slot, vals, nodata);
		/* the copy is good only if the word did not move while we copied */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		w2 = __atomic_load_n((const uint64_t *)again, __ATOMIC_RELAXED);
		if (w2 != w) {
			if (slot != again)
				return false; /* copies do not change: it shows next time */
			w = w2;
			continue;
		}
		if (len >= info->name_max)
			return false; /* no NUL inside name_max: not something a provider wrote */
		if (!perflib_owner_alive(&r->alive, perflib_word_pid(w), start))
			return false;
		ret->slot = i;
		ret->id = id;
		ret->len = (uint32_t)len;
		ret->gen = perflib_word_gen(w);
		return true;
	}
	return false;
}

bool perflib_reader_next(struct perflib_reader *r, WCHAR *name, uint64_t *vals, uint8_t *nodata,
			 struct perflib_found *ret)
{
	uint32_t i;

	if (r->done)
		return false;
	while (reader_next(r, &i, &r->err)) {
		/* most slots looked at are live; a cheap look first spares the copy of the others */
		if (perflib_word_state(perflib_slot_word(reader_slot(r, r->a, i))) !=
		    PERFLIB_SLOT_LIVE)
			continue;
		if (!read_slot(r, i, name, r->values ? vals : NULL, nodata, ret))
			continue;
		if (r->hides_total && perflib_total_hidden(r->cs->instance_type, name, ret->len))
			continue;
		/* a single-instance set has one instance; more can only be garbage */
		if (r->single)
			r->done = true;
		return true;
	}
	r->done = true;
	return false;
}

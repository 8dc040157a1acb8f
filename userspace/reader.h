/* SPDX-License-Identifier: MIT */
/*
 * reader.h - the slot reader (reader.c): the one iterator over the instances of a counter
 * set a consumer may see. Its per-slot half is inline here, so that the loops of snap.c and
 * obuf.c run without a call per instance; what runs once per call or per 64 slots is in
 * reader.c.
 */
#ifndef PERFLIB_READER_H
#define PERFLIB_READER_H

#include "consumer.h"

#define PERFLIB_READ_RETRIES 4 /* copies of one slot before it is skipped as changing */

/* ---- the slot reader (reader.c) --------------------------------------------------------- */
/*
 * One iteration over the instances of a counter set a consumer may see, size class by size
 * class, in slot order. Mapped: the slots whose live bit is set. Unmapped (read permission
 * only): every slot of the opened segments, read with two successive batch copies of a
 * chunk, @a to read from and @b to check the word against. Slot numbers below are indexes
 * in the current class.
 */
struct perflib_reader {
	const struct perflib_cset *cs;
	struct perflib_alive alive; /* owners seen during this iteration */
	bool values;		    /* copy counter values too */
	bool single;		    /* SINGLE_INSTANCE: stop after one instance */
	bool hides_total;	    /* MULTI_AGGREGATE, INSTANCE_AGGREGATE: hide "_Total" */
	bool done;
	int err;	      /* 0, or why the iteration stopped early */
	const uint8_t *a, *b; /* slot `first` of each */
	uint32_t first, nr;   /* slots held */
	uint32_t cls;	      /* the size class being read */
	uint32_t slot_size;   /* its slot size */
	uint32_t name_max;    /* its name capacity */
	uint32_t ref_offset;  /* its dereferenced values */
	uint32_t name_offset; /* info->name_offset */
	uint8_t *copy[2];     /* unmapped: a chunk of slots each */
	uint32_t n_slots;     /* slots of the segments opened when the iteration began */
	uint32_t next;	      /* first slot not yet looked at */
	uint64_t bits;	      /* mapped: set bits of the live word not yet returned */
	uint32_t bits_base;   /* slot of bit 0 of bits */
};

/* what perflib_reader_next found */
struct perflib_found {
	uint32_t slot; /* slot id (class << 28 | index) */
	uint32_t id;   /* InstanceId */
	uint32_t len;  /* name units without NUL */
	uint32_t gen;  /* generation of the LIVE word */
};

/*
 * perflib_reader_init - start an iteration over @cs (its new segments opened first), with
 * the counter values when @values. perflib_reader_fini must follow, even on an error
 * (-ENOMEM).
 */
int perflib_reader_init(struct perflib_reader *r, const struct perflib_cset *cs, bool values);
void perflib_reader_fini(struct perflib_reader *r);

/*
 * one instance's values, no-data flags and name (room for perflib_reader_next), reused by a
 * reading loop: they stay in L1. perflib_row_alloc: 0 or -ENOMEM; the flags start at 0 (the
 * reader sets those of by-reference counters only).
 */
struct perflib_row {
	uint64_t *vals;
	uint8_t *nodata;
	WCHAR *name;
};
int perflib_row_alloc(struct perflib_row *row, const struct perflib_cset *cs);
void perflib_row_free(struct perflib_row *row);

/*
 * perflib_reader_next - the next instance a consumer may see: its slot word LIVE and the
 * same before and after the copy, its owner running, its name ending inside name_max units,
 * not a provider's own "_Total" of a set whose consumers compute it, and for a
 * single-instance set the first such instance only. Its name (with NUL) goes to @name (room
 * for round8(2 * name_max) bytes: the name is copied by 8-byte words; the bytes are
 * scratch when the slot is skipped), its raw values, masked to their size, to @vals and the
 * NULL-address flags of its by-reference counters to @nodata (when the iteration copies
 * values; @nodata of other counters is left as it is). False at the end, or on an error
 * (r->err). A NULL @name is not read (ret->len 0): for a caller that holds the names of the
 * instances it saw before (the same slot and generation, whose name cannot have changed)
 * and reads the others' with perflib_reader_name; not for a set whose reader hides "_Total"
 * (r->hides_total), which needs the name.
 */
static inline bool perflib_reader_next(struct perflib_reader *r, WCHAR *name, uint64_t *vals,
				       uint8_t *nodata, struct perflib_found *ret);
/* is an instance of this name hidden in a set of @instance_type (the computed _Total)? */
bool perflib_total_hidden(uint32_t instance_type, const WCHAR *name, size_t len);

/*
 * internal to the iteration: the next chunk of an unmapped set, the next live word, the
 * start of size class @cls (false past the last)
 */
int perflib_reader_load(struct perflib_reader *r);
bool perflib_reader_bits(struct perflib_reader *r);
bool perflib_reader_class(struct perflib_reader *r, uint32_t cls);

static inline const uint8_t *perflib_reader_slot(const struct perflib_reader *r,
						 const uint8_t *base, uint32_t i)
{
	return base + (size_t)(i - r->first) * r->slot_size;
}

/*
 * start loading the lines of mapped slot @i a read touches: header and block, the name
 * (two lines: a name of 25 units or more ends on the second), the values when copied
 */
static inline void perflib_reader_prefetch(const struct perflib_reader *r, uint32_t i)
{
	const uint8_t *p = perflib_reader_slot(r, r->a, i);

	__builtin_prefetch(p);
	__builtin_prefetch(p + r->name_offset);
	__builtin_prefetch(p + r->name_offset + 64);
	if (r->values)
		__builtin_prefetch(p + PERFLIB_COUNTERS_OFFSET);
}

/*
 * perflib_reader_step - the next slot to look at, readable through perflib_reader_slot();
 * false at the end or on an error (*err set). Starts loading the lines the slot after it
 * needs.
 */
static inline bool perflib_reader_step(struct perflib_reader *r, uint32_t *ret_i, int *err)
{
	uint32_t j;

	for (;;) {
		if (r->cs->map->mapped) {
			if (perflib_reader_bits(r)) {
				j = (uint32_t)__builtin_ctzll(r->bits);
				r->bits &= r->bits - 1;
				*ret_i = r->bits_base + j;
				/* the next live slot of this word comes in while this one is read */
				if (r->bits)
					perflib_reader_prefetch(
						r,
						r->bits_base + (uint32_t)__builtin_ctzll(r->bits));
				return true;
			}
		} else if (r->next < r->first + r->nr) {
			*ret_i = r->next++;
			return true;
		} else if (r->next < r->n_slots) {
			*err = perflib_reader_load(r);
			if (*err)
				return false;
			continue;
		}
		/* this class is done: the next one */
		if (!perflib_reader_class(r, r->cls + 1))
			return false;
	}
}

/*
 * raw counter values of @slot, masked to their size, value k at vals[k * @vstride];
 * by-reference ones from the ref area at @ref_offset (the slot's class's)
 */
static inline void perflib_read_values(const struct perflib_cset *cs, const uint8_t *slot,
				       uint32_t ref_offset, uint64_t *vals, size_t vstride,
				       uint8_t *nodata)
{
	const uint64_t *v = (const uint64_t *)(slot + PERFLIB_COUNTERS_OFFSET);
	const uint64_t *ref, *null_bits;
	uint32_t k, n = cs->nr_counters;

	for (k = 0; k < n; k++)
		vals[k * vstride] = __atomic_load_n(&v[k], __ATOMIC_RELAXED) & cs->mask[k];
	if (!cs->byref)
		return;
	/* values dereferenced by the provider, then one bit per position: address NULL */
	ref = (const uint64_t *)(slot + ref_offset);
	null_bits = ref + n;
	for (k = 0; k < n; k++) {
		nodata[k] = 0;
		if (!cs->is_ref[k])
			continue;
		vals[k * vstride] = __atomic_load_n(&ref[k], __ATOMIC_RELAXED) & cs->mask[k];
		nodata[k] = (__atomic_load_n(&null_bits[k / 64], __ATOMIC_RELAXED) >> (k % 64)) & 1;
	}
}

/*
 * read_slot - copy slot @i: its id, its name (with NUL) into @name (room for
 * round8(2 * name_max) bytes: the name is copied by 8-byte words), and when @vals is given its
 * values (value k at vals[k * @vstride]). True only for a consistent copy of a live instance
 * whose owner runs.
 */
static inline __attribute__((always_inline)) bool
perflib_read_slot(struct perflib_reader *r, uint32_t i, WCHAR *name, uint64_t *vals, size_t vstride,
		  uint8_t *nodata, struct perflib_found *ret)
{
	const struct perflib_cset *cs = r->cs;
	const uint8_t *slot = perflib_reader_slot(r, r->a, i),
		      *again = perflib_reader_slot(r, r->b, i);
	const struct perflib_slot_hdr *h = (const void *)slot;
	const PERF_COUNTERSET_INSTANCE *blk = (const void *)(slot + PERFLIB_BLOCK_OFFSET);
	const WCHAR *src = (const WCHAR *)(slot + r->name_offset);
	uint64_t w = perflib_slot_word(slot), w2, start;
	uint32_t id;
	size_t len;
	int tries;

	for (tries = 0; tries < PERFLIB_READ_RETRIES; tries++) {
		if (perflib_word_state(w) != PERFLIB_SLOT_LIVE)
			return false;
		start = __atomic_load_n(&h->owner_start, __ATOMIC_RELAXED);
		id = __atomic_load_n(&blk->InstanceId, __ATOMIC_RELAXED);
		/* bounded by the private info copy, whatever the slot holds; the NUL comes along */
		len = name ? perflib_name_copy((uint8_t *)name, src, r->name_max) : 0;
		if (vals)
			perflib_read_values(cs, slot, r->ref_offset, vals, vstride, nodata);
		/* the copy is good only if the word did not move while we copied */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		w2 = __atomic_load_n((const uint64_t *)again, __ATOMIC_RELAXED);
		if (w2 != w) {
			if (slot != again)
				return false; /* copies do not change: it shows next time */
			w = w2;
			continue;
		}
		if (name && len >= r->name_max)
			return false; /* no NUL inside name_max: not something a provider wrote */
		if (!perflib_owner_alive(&r->alive, perflib_word_pid(w), start))
			return false;
		ret->slot = perflib_slot_id_make(r->cls, i);
		ret->id = id;
		ret->len = (uint32_t)len;
		ret->gen = perflib_word_gen(w);
		return true;
	}
	return false;
}

/*
 * perflib_reader_next_strided - perflib_reader_next with value k of the instance at
 * vals[k * @vstride] (a row of column arrays); the values of a slot that is skipped may be
 * left there too
 */
static inline __attribute__((always_inline)) bool
perflib_reader_next_strided(struct perflib_reader *r, WCHAR *name, uint64_t *vals, size_t vstride,
			    uint8_t *nodata, struct perflib_found *ret)
{
	uint32_t i;

	if (r->done)
		return false;
	while (perflib_reader_step(r, &i, &r->err)) {
		/* most slots looked at are live; a cheap look first spares the copy of the others */
		if (perflib_word_state(perflib_slot_word(perflib_reader_slot(r, r->a, i))) !=
		    PERFLIB_SLOT_LIVE)
			continue;
		if (!perflib_read_slot(r, i, name, r->values ? vals : NULL, vstride, nodata, ret))
			continue;
		if (r->hides_total && name &&
		    perflib_total_hidden(r->cs->instance_type, name, ret->len))
			continue;
		/* a single-instance set has one instance; more can only be garbage */
		if (r->single)
			r->done = true;
		return true;
	}
	r->done = true;
	return false;
}

static inline __attribute__((always_inline)) bool perflib_reader_next(struct perflib_reader *r,
								      WCHAR *name, uint64_t *vals,
								      uint8_t *nodata,
								      struct perflib_found *ret)
{
	return perflib_reader_next_strided(r, name, vals, 1, nodata, ret);
}

/*
 * perflib_reader_name - the name (with NUL) of instance @f, which perflib_reader_next has
 * just returned without one, into @name (room as for perflib_reader_next), its units in
 * *@ret_len. False when its slot changed since (it shows next time) or the name has no NUL
 * inside name_max units: skip the instance, as perflib_reader_next would have.
 */
static inline bool perflib_reader_name(const struct perflib_reader *r,
				       const struct perflib_found *f, WCHAR *name,
				       uint32_t *ret_len)
{
	uint32_t i = perflib_slot_id_index(f->slot);
	const uint8_t *slot = perflib_reader_slot(r, r->a, i),
		      *again = perflib_reader_slot(r, r->b, i);
	uint64_t w = perflib_slot_word(slot), w2;
	size_t len;

	len = perflib_name_copy((uint8_t *)name, (const WCHAR *)(slot + r->name_offset),
				r->name_max);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	w2 = __atomic_load_n((const uint64_t *)again, __ATOMIC_RELAXED);
	if (w2 != w || perflib_word_state(w) != PERFLIB_SLOT_LIVE ||
	    perflib_word_gen(w) != f->gen || len >= r->name_max)
		return false;
	*ret_len = (uint32_t)len;
	return true;
}

#endif /* PERFLIB_READER_H */

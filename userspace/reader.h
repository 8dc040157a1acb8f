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
#define PERFLIB_COPY_CHUNK 256 /* slots per batch copy when a counter set cannot be mapped */
/*
 * live slots a reading loop prefetches ahead of the one it reads: a slot costs about 10 ns
 * to read from cache and 100-150 ns to come from memory, so about ten are needed in flight
 * (docs/SCALE.md measures 0, 4, 12 and 24; -DPERFLIB_PREFETCH_AHEAD=n to try others)
 */
#ifndef PERFLIB_PREFETCH_AHEAD
#define PERFLIB_PREFETCH_AHEAD 12
#endif

/* ---- the slot reader (reader.c) --------------------------------------------------------- */
/*
 * A span: slots of one size class handed out by the reader at once, with what a reading
 * loop needs of them, returned by value so that the loop holds it in registers (a copy the
 * output writes cannot alias). Bit j of the words at @live (j < 64 * nwords, the last word
 * masked by last_mask) stands for slot base + j, read at a + j * slot_size and its word
 * checked again at b + j * slot_size. Mapped: one segment, its live bitmap, a == b.
 * Unmapped (read permission only): a chunk of slots copied twice with batch lookups (a and
 * b), every bit set.
 */
struct perflib_span {
	const uint64_t *live; /* bitmap words (mapped: atomically read) */
	const uint8_t *a, *b; /* slot base: to read, to check the word against */
	uint64_t last_mask;   /* bits of live[nwords - 1] that are slots */
	uint32_t nwords;      /* 0: the iteration is over (or failed: r->err) */
	uint32_t base;	      /* slot of bit 0, an index in the class */
	uint32_t cls;	      /* the size class */
	uint32_t slot_size;   /* its slot size */
	uint32_t name_offset; /* info->name_offset */
	uint32_t name_max;    /* the class's name capacity */
	uint32_t ref_offset;  /* the class's dereferenced values */
	uint32_t pcpu_offset; /* the class's per-CPU parts (cs->nr_pcpu of them), 0 = none */
};

/* One iteration over the instances of a counter set a consumer may see, class by class. */
struct perflib_reader {
	const struct perflib_cset *cs;
	struct perflib_alive alive; /* owners seen during this iteration */
	bool values;		    /* copy counter values too */
	bool single;		    /* SINGLE_INSTANCE: stop after one instance */
	bool hides_total;	    /* MULTI_AGGREGATE, INSTANCE_AGGREGATE: hide "_Total" */
	bool done;
	int err;	  /* 0, or why the iteration stopped early */
	uint32_t cls;	  /* the size class being handed out */
	uint32_t n_slots; /* its slots in the segments opened when the iteration began */
	uint32_t next;	  /* its first slot not yet in a span */
	uint8_t *copy[2]; /* unmapped: a chunk of slots each */
	uint64_t ones[PERFLIB_COPY_CHUNK / 64]; /* unmapped: the "bitmap" of a chunk */
	/* perflib_reader_next's place: the current span, its word and bits not yet returned */
	struct perflib_span sp;
	uint32_t wi;
	uint64_t bits;
	struct perflib_prefetch {
		uint32_t wi;
		bool values;
		uint64_t bits;
	} pf;
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
/* the next span (nwords 0 at the end, or on an error: r->err) */
struct perflib_span perflib_reader_span(struct perflib_reader *r);

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

/* slot @j of span @sp, and where its word is checked again */
static inline const uint8_t *perflib_span_slot(const struct perflib_span *sp, uint32_t j)
{
	return sp->a + (size_t)j * sp->slot_size;
}

static inline const uint8_t *perflib_span_again(const struct perflib_span *sp, uint32_t j)
{
	return sp->b + (size_t)j * sp->slot_size;
}

/* the bits of word @wi of @sp that are slots */
static inline uint64_t perflib_span_word(const struct perflib_span *sp, uint32_t wi, int order)
{
	uint64_t bits = order == __ATOMIC_ACQUIRE
				? __atomic_load_n(&sp->live[wi], __ATOMIC_ACQUIRE)
				: __atomic_load_n(&sp->live[wi], __ATOMIC_RELAXED);

	return wi + 1 == sp->nwords ? bits & sp->last_mask : bits;
}

/*
 * The prefetch cursor of a reading loop: PERFLIB_PREFETCH_AHEAD live slots ahead of the
 * read, each one's lines a read touches (the word, owner and id; the values when read; the
 * first 72 bytes of the name: a name up to 35 units) started as the read moves on by one.
 * Mapped spans only: an unmapped span is a copy just made, in cache.
 */
static inline void perflib_prefetch_next(const struct perflib_span *sp, struct perflib_prefetch *pf)
{
	const uint8_t *p;
	uint32_t end = sp->name_offset + 72;

	while (!pf->bits) {
		if (++pf->wi >= sp->nwords) {
			pf->wi = sp->nwords;
			return;
		}
		pf->bits = perflib_span_word(sp, pf->wi, __ATOMIC_RELAXED);
	}
	p = perflib_span_slot(sp, pf->wi * 64 + (uint32_t)__builtin_ctzll(pf->bits));
	pf->bits &= pf->bits - 1;
	if (pf->values) {
		for (uint32_t off = 0; off < end; off += 64)
			__builtin_prefetch(p + off);
	} else {
		__builtin_prefetch(p);
		__builtin_prefetch(p + PERFLIB_BLOCK_OFFSET +
				   offsetof(PERF_COUNTERSET_INSTANCE, InstanceNameOffset) - 1);
		__builtin_prefetch(p + sp->name_offset);
	}
	__builtin_prefetch(p + end - 1);
}

static inline void perflib_prefetch_start(const struct perflib_span *sp, bool values,
					  struct perflib_prefetch *pf)
{
	pf->wi = 0;
	pf->bits = 0;
	pf->values = values;
	if (sp->a != sp->b || !sp->nwords) {
		pf->wi = sp->nwords;
		return;
	}
	pf->bits = perflib_span_word(sp, 0, __ATOMIC_RELAXED);
	for (int k = 0; k < PERFLIB_PREFETCH_AHEAD; k++)
		perflib_prefetch_next(sp, pf);
}

static inline void perflib_prefetch_step(const struct perflib_span *sp, struct perflib_prefetch *pf)
{
	if (pf->wi < sp->nwords)
		perflib_prefetch_next(sp, pf);
}

/*
 * The owners a reading loop has seen: the last answer in the loop's own copy (one provider
 * owns most slots: two compares), the others looked up in @ac.
 */
struct perflib_owners {
	struct perflib_alive_entry last;
	struct perflib_alive *ac;
};

static inline bool perflib_owners_alive(struct perflib_owners *ow, uint32_t pid, uint64_t start)
{
	bool alive;

	if (pid && ow->last.pid == pid && ow->last.start == start)
		return ow->last.alive;
	alive = perflib_alive_lookup(ow->ac, pid, start);
	ow->last = ow->ac->last;
	return alive;
}

/*
 * per-CPU counters of @slot (a class whose parts are at @pcpu_offset): value k, at
 * vals[k * @vstride], is the base plus the parts, masked to the counter's size. Every
 * reader of values comes here (perflib_read_values); the bounds are the checked info's.
 */
void perflib_read_pcpu(const struct perflib_cset *cs, const uint8_t *slot, uint32_t pcpu_offset,
		       uint64_t *vals, size_t vstride);

/*
 * raw counter values of @slot, masked to their size, value k at vals[k * @vstride];
 * by-reference ones from the ref area at @ref_offset, per-CPU ones summed with their parts
 * at @pcpu_offset (the slot's class's)
 */
static inline void perflib_read_values(const struct perflib_cset *cs, const uint8_t *slot,
				       uint32_t ref_offset, uint32_t pcpu_offset, uint64_t *vals,
				       size_t vstride, uint8_t *nodata)
{
	const uint64_t *v = (const uint64_t *)(slot + PERFLIB_COUNTERS_OFFSET);
	const uint64_t *ref, *null_bits;
	uint32_t k, n = cs->nr_counters;

	for (k = 0; k < n; k++)
		vals[k * vstride] = __atomic_load_n(&v[k], __ATOMIC_RELAXED) & cs->mask[k];
	if (cs->nr_pcpu)
		perflib_read_pcpu(cs, slot, pcpu_offset, vals, vstride);
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
 * Where a read puts the values. PERFLIB_VALS_ROW: value k, masked, at vals[k * vstride]
 * and the by-reference flags in nodata. PERFLIB_VALS_RECORDS: the PERF_COUNTER_DATA
 * records of the n counters, straight after the name (@name - sizeof(PERF_INSTANCE_HEADER)
 * starts a block of the output: the records at its rounded size), for a set without
 * by-reference counters; record k starts with hdr[k] (cs->rec_hdr), its value is masked
 * with mask[k] (cs->mask): copies in the reading loop's own arrays, which the output
 * cannot alias.
 */
enum { PERFLIB_VALS_NONE, PERFLIB_VALS_ROW, PERFLIB_VALS_RECORDS };

#define PERFLIB_RECORDS_MAX 16 /* counters of a set whose values a loop writes as records */

struct perflib_vals_out {
	uint64_t *vals;
	size_t vstride;
	uint8_t *nodata;
	uint32_t n;
	uint64_t hdr[PERFLIB_RECORDS_MAX], mask[PERFLIB_RECORDS_MAX];
};

/*
 * perflib_read_slot - read slot @j of @sp: its id, its name (with NUL) into @name (room for
 * round8(2 * name_max) bytes: copied by 8-byte words; NULL: not read) and its values as
 * @mode says (PERFLIB_VALS_RECORDS: not for a set with per-CPU counters). True only for a consistent copy of a live instance whose owner runs and whose
 * name ends inside name_max units: every rule of a slot is here, the loops around it add
 * only those of a set (the single-instance cutoff, a hidden "_Total").
 */
static inline __attribute__((always_inline)) bool
perflib_read_slot(const struct perflib_span *sp, uint32_t j, const struct perflib_cset *cs,
		  struct perflib_owners *ow, WCHAR *name, const int mode,
		  const struct perflib_vals_out *vo, struct perflib_found *ret)
{
	const uint8_t *slot = perflib_span_slot(sp, j), *again = perflib_span_again(sp, j);
	const struct perflib_slot_hdr *h = (const void *)slot;
	const PERF_COUNTERSET_INSTANCE *blk = (const void *)(slot + PERFLIB_BLOCK_OFFSET);
	const WCHAR *src = (const WCHAR *)(slot + sp->name_offset);
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
		len = name ? perflib_name_copy((uint8_t *)name, src, sp->name_max) : 0;
		if (mode == PERFLIB_VALS_ROW) {
			perflib_read_values(cs, slot, sp->ref_offset, sp->pcpu_offset, vo->vals,
					    vo->vstride, vo->nodata);
		} else if (mode == PERFLIB_VALS_RECORDS && len < sp->name_max) {
			/* straight into the output: the block's records follow the name */
			const uint64_t *v = (const uint64_t *)(slot + PERFLIB_COUNTERS_OFFSET);
			uint64_t *rec =
				(uint64_t *)((uint8_t *)name + perflib_round8(2 * (len + 1)));
			uint32_t k = 0;

#ifdef __SSE2__
			/*
			 * two counters at a time: a 16-byte load of 8-byte aligned values (each
			 * half read whole, as the writers' 8-byte atomics write it), two records
			 */
			for (; k + 2 <= vo->n; k += 2) {
				__m128i val = _mm_and_si128(
					_mm_loadu_si128((const __m128i *)(const void *)(v + k)),
					_mm_loadu_si128(
						(const __m128i *)(const void *)&vo->mask[k]));
				__m128i hdr =
					_mm_loadu_si128((const __m128i *)(const void *)&vo->hdr[k]);

				_mm_storeu_si128((__m128i *)(void *)(rec + 2 * k),
						 _mm_unpacklo_epi64(hdr, val));
				_mm_storeu_si128((__m128i *)(void *)(rec + 2 * k + 2),
						 _mm_unpackhi_epi64(hdr, val));
			}
#endif
			for (; k < vo->n; k++) {
				rec[2 * k] = vo->hdr[k];
				rec[2 * k + 1] =
					__atomic_load_n(&v[k], __ATOMIC_RELAXED) & vo->mask[k];
			}
		}
		/* the copy is good only if the word did not move while we copied */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		w2 = __atomic_load_n((const uint64_t *)again, __ATOMIC_RELAXED);
		if (w2 != w) {
			if (slot != again)
				return false; /* copies do not change: it shows next time */
			w = w2;
			continue;
		}
		if (name && len >= sp->name_max)
			return false; /* no NUL inside name_max: not something a provider wrote */
		if (!perflib_owners_alive(ow, perflib_word_pid(w), start))
			return false;
		ret->slot = perflib_slot_id_make(sp->cls, sp->base + j);
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
	const struct perflib_vals_out vo = {.vals = vals, .vstride = vstride, .nodata = nodata};
	struct perflib_owners ow = {r->alive.last, &r->alive};
	uint32_t j;

	if (r->done)
		return false;
	for (;;) {
		while (!r->bits) {
			if (++r->wi >= r->sp.nwords) {
				r->sp = perflib_reader_span(r);
				if (!r->sp.nwords) {
					r->done = true;
					return false;
				}
				r->wi = 0;
				perflib_prefetch_start(&r->sp, r->values, &r->pf);
			}
			r->bits = perflib_span_word(&r->sp, r->wi, __ATOMIC_ACQUIRE);
		}
		j = r->wi * 64 + (uint32_t)__builtin_ctzll(r->bits);
		r->bits &= r->bits - 1;
		perflib_prefetch_step(&r->sp, &r->pf);
		if (!perflib_read_slot(&r->sp, j, r->cs, &ow, name,
				       r->values ? PERFLIB_VALS_ROW : PERFLIB_VALS_NONE, &vo, ret))
			continue;
		if (r->hides_total && name &&
		    perflib_total_hidden(r->cs->instance_type, name, ret->len))
			continue;
		/* a single-instance set has one instance; more can only be garbage */
		if (r->single)
			r->done = true;
		return true;
	}
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
	const struct perflib_span *sp = &r->sp;
	uint32_t j = perflib_slot_id_index(f->slot) - sp->base;
	const uint8_t *slot = perflib_span_slot(sp, j), *again = perflib_span_again(sp, j);
	uint64_t w = perflib_slot_word(slot), w2;
	size_t len;

	len = perflib_name_copy((uint8_t *)name, (const WCHAR *)(slot + sp->name_offset),
				sp->name_max);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	w2 = __atomic_load_n((const uint64_t *)again, __ATOMIC_RELAXED);
	if (w2 != w || perflib_word_state(w) != PERFLIB_SLOT_LIVE ||
	    perflib_word_gen(w) != f->gen || len >= sp->name_max)
		return false;
	*ret_len = (uint32_t)len;
	return true;
}

#endif /* PERFLIB_READER_H */

/* SPDX-License-Identifier: MIT */
/*
 * consumer.h - the consumer pipeline, one section per file, each calling only the sections
 * above it (docs/ARCHITECTURE.md, "Layers"):
 *
 *   machine.c    machine names
 *   cset.c       counter-set handles: counter sets opened read-only, cached per process
 *   liveness.c   owner liveness
 *   reader.c     the slot reader: the one iterator that applies every visibility rule
 *   snap.c       snapshots of what the reader returns
 *   aggregate.c  the aggregate instance types, computed from a snapshot
 *   obuf.c       the output buffer and the direct writer (reader -> buffer)
 *   enumerate.c, query.c, query_data.c, reginfo.c: the API front ends
 *
 * Nothing read from a map is trusted: the private info copy (perflib_info_check) gives
 * every offset used inside a slot, names must end inside name_max units, and an instance
 * is copied only while its slot word stays LIVE and unchanged (the seqlock protocol of
 * internal.h).
 */
#ifndef PERFLIB_CONSUMER_H
#define PERFLIB_CONSUMER_H

#include <limits.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "internal.h"

#define PERFLIB_TOTAL_NAME u"_Total" /* PERF_AGGREGATE_INSTANCE */
#define PERFLIB_TOTAL_LEN 6	     /* units of "_Total" without NUL */
#define PERFLIB_MACHINE_MAX 256	     /* units of a machine name we compare */

#define PERFLIB_RECHECK_NS 1000000000ull /* cached facts are checked at least this often */

/* CLOCK_MONOTONIC_COARSE in ns: a vDSO read, for "at least this often" decisions */
static inline uint64_t perflib_coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline size_t perflib_round8(size_t v)
{
	return (v + 7) & ~(size_t)7;
}

/*
 * perflib_name_copy - copy the name at @s into @dst (room for round8(2 * @max) bytes; NULL:
 * only measure), up to and including the 8-byte word that holds its NUL (at most 8 bytes
 * more: 16 are copied at a time while they lie inside round8(2 * @max) bytes), with every
 * byte after the NUL written as 0. Returns the units before the NUL, @max when there is
 * none in the first @max. @s must be readable up to round8(2 * @max) bytes: in a slot, the
 * name area is followed by the ASCII rendering (info->ascii_offset = round8(name end)).
 * Each byte is read once, so the copy and the length agree even while the slot changes.
 */
static inline size_t perflib_name_copy(uint8_t *dst, const WCHAR *s, size_t max)
{
	const uint8_t *p = (const uint8_t *)s;
	uint64_t w, zero;
	size_t i = 0, n;

#ifdef __SSE2__
	for (; i + 8 <= ((max + 3) & ~(size_t)3); i += 8) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + 2 * i));
		/* two mask bits per unit that is 0 */
		unsigned int m =
			(unsigned int)_mm_movemask_epi8(_mm_cmpeq_epi16(v, _mm_setzero_si128()));

		if (m) {
			n = (size_t)__builtin_ctz(m) >> 1;
			/* the units up to the NUL, zeros after it */
			v = _mm_and_si128(v, _mm_cmplt_epi16(_mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7),
							     _mm_set1_epi16((short)(n + 1))));
			if (dst)
				_mm_storeu_si128((__m128i *)(void *)(dst + 2 * i), v);
			n += i;
			return n < max ? n : max;
		}
		if (dst)
			_mm_storeu_si128((__m128i *)(void *)(dst + 2 * i), v);
	}
#endif
	for (; i < max; i += 4) {
		memcpy(&w, p + 2 * i, 8);
		/* a set top bit in a 16-bit lane: that lane is 0 (the lowest one exactly) */
		zero = (w - 0x0001000100010001ull) & ~w & 0x8000800080008000ull;
		if (zero) {
			/* the lanes up to the NUL's, zeros after it */
			w &= ((zero & -zero) << 1) - 1;
			if (dst)
				memcpy(dst + 2 * i, &w, 8);
			n = i + ((size_t)__builtin_ctzll(zero) >> 4);
			return n < max ? n : max;
		}
		if (dst)
			memcpy(dst + 2 * i, &w, 8);
	}
	return max;
}

static inline size_t perflib_name_len(const WCHAR *s, size_t max)
{
	return perflib_name_copy(NULL, s, max);
}

/*
 * perflib_zero_tail - zero the padding [@used, @size) of a block of @size bytes (a multiple
 * of 8, @size - 8 < @used <= @size) at @p without a call: one 8-byte read-modify-write.
 */
static inline void perflib_zero_tail(uint8_t *p, size_t used, size_t size)
{
	size_t keep = used + 8 - size;
	uint64_t tail;

	if (keep >= 8)
		return;
	memcpy(&tail, p + size - 8, 8);
	tail &= (1ull << (8 * keep)) - 1; /* little-endian: the first bytes are the low ones */
	memcpy(p + size - 8, &tail, 8);
}

/* ---- machines (machine.c) ------------------------------------------------------------- */
#define PERFLIB_HOST_MAX 1024 /* bytes of a remote machine's name in UTF-8, without NUL */
/*
 * perflib_machine_check - 0 when @machine names this machine (NULL, "", ".", "localhost" or
 * the host name, case-insensitive, optionally after a leading "\\" or more): nothing goes to the
 * network. 1 for any other name, which is then written to @ret_host (PERFLIB_HOST_MAX + 1
 * bytes) in UTF-8 without its leading backslashes: the machine to reach through remote.c.
 * -EHOSTUNREACH for a name longer than PERFLIB_MACHINE_MAX units or only backslashes.
 */
int perflib_machine_check(LPCWSTR machine, char *ret_host);
/* this host's name as NUL-terminated UTF-16 into @buf; returns bytes written incl. NUL */
size_t perflib_machine_name(WCHAR *buf, size_t units);

/* ---- counter-set handles: opened read-only, cached per process (cset.c) -------------------- */
struct perflib_cset {
	struct perflib_store *map; /* read-only maps: private info copy, PROT_READ data */
	char dir[PATH_MAX];	   /* "<root>/<guid>": the cache key */
	dev_t dev;		   /* identity of the data pin when opened: a re-registered */
	ino_t ino;		   /* counter set gets new pins (new inodes) */
	uint32_t nr_counters;	   /* map->info->nr_counters */
	uint32_t instance_type;	   /* one of the six PERF_COUNTERSET_* values */
	bool byref;		   /* a counter is by reference (ref area present) */
	uint64_t *mask;		   /* per position: bits of the value (DWORD, LARGE, ZERO) */
	uint32_t *data_size;	   /* per position: PERF_COUNTER_DATA.dwDataSize (0, 4, 8) */
	uint64_t *rec_hdr;	   /* per position: a PERF_COUNTER_DATA with data (its 8 bytes) */
	uint8_t *is_ref;	   /* per position: PERF_ATTRIB_BY_REFERENCE */
	/* per-CPU counters (layout.h): their positions, by index; lines of parts per CPU */
	uint32_t nr_pcpu;	   /* 0: none, the set's info is layout version 11 */
	uint32_t pcpu_lines;	   /* perflib_pcpu_lines(nr_pcpu) */
	uint32_t nr_cpus;	   /* info->nr_cpus */
	uint32_t *pcpu_pos;	   /* nr_pcpu template positions */
	uint64_t *by_id;	   /* (id << 32 | position), sorted: id lookups */
	unsigned int refs;	   /* users (cache lock) */
	bool stale;		   /* replaced in the cache: freed at the last put */
	uint64_t last_use;	   /* for evicting unused entries */
	uint64_t checked;	   /* CLOCK_MONOTONIC_COARSE ns of the last stat() of the pins */
	struct perflib_cset *next; /* cache: its hash bucket's chain (cset.c) */
};

/*
 * perflib_cset_get - the counter set @guid under the current root, opened read-only, with
 * a reference. The cached opening is reused while its pins are the same files.
 * -ESRCH not registered (ERROR_WMI_GUID_NOT_FOUND), -EACCES no read permission,
 * -EBADMSG corrupt registration (ERROR_INVALID_DATA), -ENOMEM.
 */
int perflib_cset_get(const GUID *guid, struct perflib_cset **ret_cs);
void perflib_cset_put(struct perflib_cset *cs);
/*
 * The consumer's epoll instance (cset.c): perflib_cset_get waits on it once per call for
 * root changes and provider exits. perflib_watch_exit_add puts a provider's pidfd @fd in it
 * (one exit report), false when it could not; perflib_watch_exits: the exits it reported so
 * far (*@ret_gen: the instance's generation, which a fork moves on: an fd added under
 * another generation is not in it); perflib_watch_fresh: did this thread's last
 * perflib_cset_get wait on it (then cleared: one read relies on it).
 */
bool perflib_watch_exit_add(int fd, uint32_t *ret_gen);
/*
 * its fork handlers registered (a caller that holds a lock of its own while it calls these
 * registers its handlers after: at fork, its lock is taken first, as at run time)
 */
void perflib_watch_init(void);
uint64_t perflib_watch_exits(uint32_t *ret_gen);
bool perflib_watch_fresh(void);
/* template position of counter @id, -1 if the counter set has none */
int perflib_cset_counter(const struct perflib_cset *cs, uint32_t id);
static inline bool perflib_cset_multi(const struct perflib_cset *cs)
{
	return cs->instance_type & PERF_COUNTERSET_FLAG_MULTIPLE;
}

/* ---- owner liveness (liveness.c) -------------------------------------------------------- */
struct perflib_alive_entry {
	uint64_t start; /* owner start time */
	uint32_t pid;	/* 0 = empty entry */
	uint32_t alive; /* the answer */
};

/* the owners looked up during one read ((pid, start) -> alive); zeroed = empty */
struct perflib_alive {
	struct perflib_alive_entry last; /* most recent answer: one provider owns most slots */
	struct perflib_alive_entry *tab; /* open addressing, power-of-two size */
	size_t cap, nr;
	bool fresh; /* the epoll instance was waited on for this read (perflib_watch_fresh) */
};

/*
 * perflib_alive_lookup - is (@pid, @start) a running process? Each distinct owner is looked
 * up once per struct perflib_alive, then remembered across calls with a pidfd (an owner
 * found dead stays dead). A kernel-owned slot (start PERFLIB_OWNER_KERNEL) is alive; pid 0
 * is not; start 0 (unknown) is decided by the pid alone.
 */
bool perflib_alive_lookup(struct perflib_alive *ac, uint32_t pid, uint64_t start);
void perflib_alive_fini(struct perflib_alive *ac);

static inline bool perflib_owner_alive(struct perflib_alive *ac, uint32_t pid, uint64_t start)
{
	/* one provider owns most slots: the answer for the previous slot usually holds */
	if (pid && ac->last.pid == pid && ac->last.start == start)
		return ac->last.alive;
	return perflib_alive_lookup(ac, pid, start);
}

/* ---- snapshots of what the reader returns (snap.c) --------------------- */
struct perflib_snap_inst {
	uint32_t id;	   /* InstanceId */
	uint32_t name_len; /* UTF-16 units without NUL */
	uint32_t name_off; /* units into pool; the name is NUL-terminated there */
	uint32_t slot;	   /* data map index, UINT32_MAX for an aggregate instance */
	uint32_t gen;	   /* generation of the slot word while it was read */
	uint32_t row;	   /* row of vals/nodata */
};

struct perflib_snap {
	uint32_t nr_counters;		/* row length */
	bool values;			/* rows are read (else only ids and names) */
	struct perflib_snap_inst *inst; /* what consumers see, in slot order, aggregates last */
	size_t nr, cap;
	WCHAR *pool;		   /* names */
	size_t pool_len, pool_cap; /* units */
	uint64_t *vals;		   /* rows of nr_counters raw values, masked to their size */
	uint8_t *nodata;	   /* rows: 1 = by-reference address NULL (ERROR_NO_DATA) */
	size_t nr_rows, rows_cap;
};

/*
 * perflib_snap_read - copy every instance of @cs the slot reader returns into @snap (reset
 * first): ids, names and, when @values, the counter values (by-reference counters from the
 * ref area).
 */
int perflib_snap_read(const struct perflib_cset *cs, bool values, struct perflib_snap *snap);
void perflib_snap_free(struct perflib_snap *snap);
/* room for one more instance with a name of @len units and a row; -ENOMEM */
int perflib_snap_add(struct perflib_snap *snap, uint32_t id, const WCHAR *name, size_t len,
		     struct perflib_snap_inst **ret_inst);
static inline const WCHAR *perflib_snap_name(const struct perflib_snap *snap,
					     const struct perflib_snap_inst *in)
{
	return snap->pool + in->name_off;
}

/* which instances a specification wants */
struct perflib_filter {
	uint32_t instance_id; /* or PERFLIB_NO_ID: any */
	bool match_all;	      /* name pattern is only stars */
	const WCHAR *name;    /* NUL-terminated pattern ('*', '?'), or NULL: any */
};

static inline bool perflib_filter_match(const struct perflib_filter *f, uint32_t id,
					const WCHAR *name, size_t len)
{
	if (f->instance_id != PERFLIB_NO_ID && id != f->instance_id)
		return false;
	return f->match_all || !f->name || perflib_wildcard_match(f->name, name, len);
}

/* ---- aggregation (aggregate.c) --------------------------------------------------------- */
/*
 * perflib_snap_aggregate - turn the raw instances of @snap into what a Windows consumer sees
 * for @cs's instance type: the _Total instance of MULTI_AGGREGATE, the one aggregated
 * instance of SINGLE_AGGREGATE(_HISTORY), same-named instances merged for
 * INSTANCE_AGGREGATE. For the history type, the values read are remembered (this process,
 * until it exits) when @history is set. No-op for the other types.
 */
int perflib_snap_aggregate(const struct perflib_cset *cs, struct perflib_snap *snap, bool history);

/* ---- the output buffer (obuf.c) --------------------------------------------------------------------- */
/*
 * The writer counts every byte and writes only what fits: once a put does not fit, nothing
 * more is written, and len is the size the caller needs (ERROR_NOT_ENOUGH_MEMORY).
 */
struct perflib_obuf {
	uint8_t *p; /* caller's buffer (may be NULL when cap is 0) */
	size_t cap; /* bytes of p */
	size_t len; /* bytes produced so far (written or counted) */
};

/* room for @n bytes at the end: a pointer to write them to, or NULL (counted only) */
static inline void *perflib_obuf_put(struct perflib_obuf *o, size_t n)
{
	void *r = o->len + n <= o->cap ? o->p + o->len : NULL;

	o->len += n;
	return r;
}

/* pointer to bytes [off, off + n) when they were written, else NULL */
static inline void *perflib_obuf_at(const struct perflib_obuf *o, size_t off, size_t n)
{
	return off + n <= o->cap && off + n <= o->len ? o->p + off : NULL;
}

/* the buffer protocol over an obuf: size to *ret_actual, ERROR_OUTOFMEMORY past 4 GiB */
ULONG perflib_obuf_result(const struct perflib_obuf *o, DWORD *ret_actual);
/* one PERF_INSTANCE_HEADER block: header, @name + NUL, zero padding to a multiple of 8 */
void perflib_obuf_instance(struct perflib_obuf *o, uint32_t id, const WCHAR *name, size_t len);

/*
 * perflib_obuf_values - the PERF_COUNTER_DATA blocks of one instance: of the counter at
 * position @pos, or of every counter (template order) when @pos < 0. Each block is 16
 * bytes: dwDataSize 4 or 8 (0 when the counter is of size zero or its by-reference address
 * is NULL), the value little-endian, zero padding.
 */
void perflib_obuf_values(struct perflib_obuf *o, const struct perflib_cset *cs,
			 const uint64_t *vals, const uint8_t *nodata, int pos);

#define PERFLIB_NO_VALUES (-2) /* perflib_obuf_direct: instance blocks only */

/*
 * perflib_obuf_direct - instance blocks written straight from the slots of @cs: for every
 * instance the slot reader returns that @f accepts (NULL: all), a PERF_INSTANCE_HEADER block
 * followed by the PERF_COUNTER_DATA blocks of counter @pos (PERF_MULTIPLE_INSTANCES), of
 * every counter when @pos is -1 (PERF_COUNTERSET), of none when @pos is PERFLIB_NO_VALUES
 * (an enumeration). *ret_nr gets the number of instances. No snapshot: one copy.
 */
int perflib_obuf_direct(const struct perflib_cset *cs, const struct perflib_filter *f, int pos,
			struct perflib_obuf *o, uint32_t *ret_nr);

/*
 * The same for an instance of a snapshot: its name is stored padded to whole 8-byte words
 * (perflib_snap_read, perflib_snap_add), so it is copied by words.
 */
static inline void perflib_obuf_snap_instance(struct perflib_obuf *o,
					      const struct perflib_snap *snap,
					      const struct perflib_snap_inst *in)
{
	size_t used = sizeof(PERF_INSTANCE_HEADER) + 2 * ((size_t)in->name_len + 1);
	size_t size = perflib_round8(used), k;
	const uint8_t *src = (const uint8_t *)(snap->pool + in->name_off);
	PERF_INSTANCE_HEADER h = {.Size = (ULONG)size, .InstanceId = in->id};
	uint8_t *p = perflib_obuf_put(o, size);
	uint64_t w;

	if (!p)
		return;
	memcpy(p, &h, sizeof(h));
	for (k = sizeof(h); k < size; k += 8) {
		memcpy(&w, src + k - sizeof(h), 8);
		memcpy(p + k, &w, 8);
	}
	perflib_zero_tail(p, used, size);
}

#endif /* PERFLIB_CONSUMER_H */

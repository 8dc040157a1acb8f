/* SPDX-License-Identifier: MIT */
/*
 * perflib_bpf.h - counter sets for BPF programs: the maps to declare and the helpers that
 * read and write them. Their user-space loaders include perflib_bpf_loader.h (libperflib).
 *
 * A counter set lives in pinned maps under $PERFLIB_ROOT/<counter-set GUID>/ (layout.h):
 * segs (segment -> slots), lives (segment -> live bitmap; a group leader's also holds the
 * index of the group's instance names) and info. A BPF program declares the maps it uses
 * with the macros below; its loader opens the pins and hands their fds to libbpf before
 * loading, and copies the slot geometry into the program's read-only data (perflib_geo).
 * LIBBPF_PIN_BY_NAME cannot be used: libbpf pins by map name in one directory, while
 * perflib's pins are named info/segs/lives inside a per-counter-set directory.
 *
 * In a BPF program (clang -target bpf, CO-RE; docs/BPF.md has the complete example):
 *
 *	#include "vmlinux.h"			(or <linux/bpf.h>: below)
 *	#include <bpf/bpf_helpers.h>
 *	#include "perflib_bpf.h"
 *
 *	PERFLIB_DATA_MAP_RAW(slots);		the data pin (slots as raw bytes)
 *	PERFLIB_INDEX_MAP(idx);			the index: the lives pin (optional)
 *
 *	SEC("tp_btf/sched_process_exec")
 *	int BPF_PROG(on_exec)
 *	{
 *		struct perflib_index_key key;
 *		__s64 i;
 *
 *		perflib_instance_key_ascii(&key, "execs", 0, 0);
 *		i = perflib_find_by_key(&slots, &idx, &key);
 *		if (i >= 0)
 *			perflib_counter_add(perflib_slot(&slots, i), 0, 1);
 *		return 0;
 *	}
 *
 * (Do not name a map data, bss or rodata: the skeleton uses those names for global
 * variables.) Its loader (user space, libbpf skeleton "demo_bpf", linked to libperflib):
 *
 *	#include <perflib/perflib_bpf_loader.h>	(before the skeleton)
 *	struct perflib_bpf_counterset cs;
 *	perflib_bpf_counterset_open(NULL, "<counter-set GUID>", &cs);
 *	skel = demo_bpf__open();
 *	skel->rodata->perflib_geo = cs.geo;
 *	perflib_bpf_counterset_reuse(&cs, skel->maps.slots, skel->maps.idx);
 *	demo_bpf__load(skel); demo_bpf__attach(skel); ...
 *
 * Map arguments come in one order: data, index, live; the helpers check the kinds at
 * compile time (the end of this file). Errors are negated PERFLIB_E* numbers. Either base
 * header works: vmlinux.h (CO-RE, kernel types) or <linux/bpf.h> (the UAPI headers; the
 * multiarch include directory for <asm/types.h>).
 *
 * Counters are addressed by position (the order of the counters in the template or
 * manifest, 0-based): slot + PERFLIB_COUNTERS_OFFSET + 8 * position. 64-bit counters
 * (PERF_SIZE_LARGE) use the 8 bytes, DWORD counters the low 4 bytes. A per-CPU counter
 * (PERF_ATTRIB_LINUX_PER_CPU) is that base plus a part per CPU: the counter helpers add to
 * the running CPU's part and read the sum; a raw access of the 8 bytes sees the base only. Every helper bounds
 * its offsets with perflib_geo, which the verifier reads as constants (the .rodata map is
 * frozen), so a program loads only against the geometry it was given.
 */
#ifndef PERFLIB_BPF_H
#define PERFLIB_BPF_H

#include "layout.h"

/* what perflib_find_instance() matches */
#define PERFLIB_FIND_ID 0x1   /* the InstanceId */
#define PERFLIB_FIND_NAME 0x2 /* the name (ASCII) */

#ifndef __bpf__
/*
 * A user-space file (a loader written before PERFLIB_1.4): the loader's functions, now
 * libperflib's, and libbpf's headers as this header always gave them. New loaders include
 * perflib_bpf_loader.h themselves.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "perflib_bpf_loader.h"
#else /* __bpf__ */

#if !defined(__VMLINUX_H__) && !defined(__LINUX_BPF_H__)
#error "perflib_bpf.h: include \"vmlinux.h\" or <linux/bpf.h> before it (docs/BPF.md)"
#endif
#include <bpf/bpf_helpers.h>

#ifndef __VMLINUX_H__
/*
 * <linux/bpf.h>: the kernel's types are not there, and struct bpf_iter_num, the state of
 * the open-coded iterators of the instance and index helpers, only from the headers of
 * Linux 6.4 on; older headers get the kernel's own definition here (the verifier matches
 * the kfuncs' argument by its name and size). Headers whose version does not tell (a
 * backport) set PERFLIB_BPF_HAVE_ITER_NUM to 1 (they define it) or 0.
 */
#include <linux/version.h>
#ifndef PERFLIB_BPF_HAVE_ITER_NUM
#define PERFLIB_BPF_HAVE_ITER_NUM (LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0))
#endif
#if !PERFLIB_BPF_HAVE_ITER_NUM
struct bpf_iter_num {
	__u64 __opaque[1];
} __attribute__((aligned(8)));
#endif
#endif

/*
 * The errors the helpers return, negated (-PERFLIB_EEXIST), with the numbers of the kernel's
 * <asm-generic/errno-base.h>, the same on every architecture: a BPF program has no <errno.h>
 * and vmlinux.h no macros. They equal EEXIST and the others where a program includes
 * errno-base.h too (tests/build/test_bpf_headers.sh checks).
 */
#define PERFLIB_ENOENT 2  /* no such (live, kernel-owned) instance */
#define PERFLIB_E2BIG 7	  /* both buckets of a key's index table full */
#define PERFLIB_EBUSY 16  /* another provider is at the same slot or name right now */
#define PERFLIB_EEXIST 17 /* the name and id are taken */
#define PERFLIB_EINVAL 22 /* a name too long for the set */
#define PERFLIB_ENOSPC 28 /* no free slot in the set's storage */

/* name lookups: bytes of an ASCII name compared or hashed (incl. NUL) */
#define PERFLIB_BPF_NAME_MAX PERFLIB_ASCII_MAX
/* units a perflib_key_utf16() name buffer must hold */
#ifndef PERFLIB_BPF_KEY_MAX
#define PERFLIB_BPF_KEY_MAX 64
#endif
/* most iterations of one bpf_loop() (the kernel's limit) */
#define PERFLIB_BPF_LOOP_MAX (1u << 23)
/* longest stored name a slot may hold (PERF_MAX_INSTANCE_NAME + 1) */
#define PERFLIB_BPF_SLOT_NAME_MAX 1025

/* PERFLIB_GEOMETRY - declare the geometry of one counter set, set by the loader before load */
#define PERFLIB_GEOMETRY(_name) const volatile struct perflib_bpf_geometry _name = {}

/*
 * The geometry, in .rodata: set it before loading (skel->rodata->perflib_geo). Define
 * PERFLIB_BPF_NO_GEOMETRY to declare your own (the helpers need the name perflib_geo).
 */
#ifndef PERFLIB_BPF_NO_GEOMETRY
PERFLIB_GEOMETRY(perflib_geo);
#endif

/* placeholder value type of a data map declared as raw bytes (the pin decides the size) */
struct perflib_slot_raw {
	__u8 bytes[PERFLIB_SLOT_ALIGN];
};

/*
 * The outer map @_name (ARRAY_OF_MAPS, one entry per segment) whose inner maps are of the
 * shape declared as struct @_name##@_tag: every per-segment map below is one of these.
 */
#define PERFLIB__SEGMENTS(_name, _tag, _type, _flags, _key_size, _value_size, _entries)            \
	struct _name##_tag {                                                                       \
		__uint(type, _type);                                                               \
		__uint(map_flags, _flags);                                                         \
		__uint(key_size, _key_size);                                                       \
		__uint(value_size, _value_size);                                                   \
		__uint(max_entries, _entries);                                                     \
	};                                                                                         \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);                                          \
		__uint(max_entries, PERFLIB_MAX_SEGS);                                             \
		__type(key, __u32);                                                                \
		__array(values, struct _name##_tag);                                               \
	} _name SEC(".maps")

/*
 * PERFLIB_DATA_MAP - declare a counter set's slots as the library stores them: the `segs`
 * pin, an array of maps whose entry k is segment k's data map (layout.h). @_value is a
 * slot struct the program declares (its size must be the pin's slot_size) or struct
 * perflib_slot_raw; @_capacity is the inner maps' declared max_entries (the pin decides).
 * The loader must reuse the pinned map (bpf_map__reuse_fd, perflib_bpf_counterset_reuse).
 * perflib_slot() reaches every slot of every segment, including segments added after the
 * program was loaded. Also defines _name##__perflib_find() for perflib_find_instance().
 */
#define PERFLIB_DATA_MAP(_name, _value, _capacity)                                                 \
	PERFLIB__SEGMENTS(_name, __perflib_seg, BPF_MAP_TYPE_ARRAY,                                \
			  BPF_F_MMAPABLE | BPF_F_INNER_MAP, sizeof(__u32), sizeof(_value),         \
			  _capacity);                                                              \
	PERFLIB__DEFINE_FIND(_name)

#define PERFLIB_DATA_MAP_RAW(_name) PERFLIB_DATA_MAP(_name, struct perflib_slot_raw, 1)

/*
 * the index, for perflib_find_by_key() and the instance functions: the `lives` pin (below),
 * whose segment k, when k leads an index group (perflib_idx_leader), holds the group's
 * index table after its bitmap (layout.h, perflib_idx_word). Its loader hands it the lives
 * pin (perflib_bpf_counterset_reuse: cs->index_fd is a second fd of it).
 */
#define PERFLIB_INDEX_MAP(_name)                                                                   \
	PERFLIB__SEGMENTS(_name, __perflib_idx, BPF_MAP_TYPE_ARRAY,                                \
			  BPF_F_MMAPABLE | BPF_F_INNER_MAP, sizeof(__u32), sizeof(__u64), 1)

/*
 * the `lives` pin: segment k -> its live bitmap (bit i of word i / 64 set = slot i of the
 * segment is claimed or live; consumers visit only those slots). Programs that create or
 * delete instances (perflib_instance_create) keep it; programs that only update counters
 * need not declare it.
 */
#define PERFLIB_LIVE_MAP(_name)                                                                    \
	PERFLIB__SEGMENTS(_name, __perflib_live, BPF_MAP_TYPE_ARRAY,                               \
			  BPF_F_MMAPABLE | BPF_F_INNER_MAP, sizeof(__u32), sizeof(__u64), 1)

/* ---- slots ------------------------------------------------------------------------------ */

/*
 * Every slot and counter helper exists once, taking the counter set's geometry @g (a
 * const volatile struct in .rodata, which the verifier reads as constants); the forms
 * without a g use perflib_geo, the program's one counter set. A program serving several
 * counter sets declares one geometry each with PERFLIB_GEOMETRY().
 */

/* the segment map (data or index) of segment @k of outer map @outer, or NULL */
static __always_inline void *perflib_segment(void *outer, __u32 k)
{
	return bpf_map_lookup_elem(outer, &k);
}

/* entry @off of segment @k of @data_map (a PERFLIB_DATA_MAP), or NULL */
static __always_inline void *perflib__gslot_at(void *data_map, __u32 k, __u32 off)
{
	void *seg = perflib_segment(data_map, k);

	return seg ? bpf_map_lookup_elem(seg, &off) : NULL;
}

/*
 * perflib_gslot - slot @idx of @data_map (a PERFLIB_DATA_MAP) with geometry @g, or NULL past
 * the capacity or in a segment not created yet; perflib_gslot_in - the same, its segment @k
 * (perflib_seg_of(@idx, seg0_slots)) found by the caller
 */
static __always_inline void *
perflib_gslot_in(void *data_map, const volatile struct perflib_bpf_geometry *g, __u32 idx, __u32 k)
{
	__u32 seg0 = g->seg0_slots;

	if (idx >= g->capacity || !seg0 || k >= PERFLIB_MAX_SEGS)
		return NULL;
	return perflib__gslot_at(data_map, k, idx - (__u32)perflib_seg_first(k, seg0));
}

static __always_inline void *perflib_gslot(void *data_map,
					   const volatile struct perflib_bpf_geometry *g, __u32 idx)
{
	return perflib_gslot_in(data_map, g, idx, perflib_seg_of(idx, g->seg0_slots));
}

/* perflib_slot - slot @idx of @data_map (a PERFLIB_DATA_MAP), or NULL past the capacity */
static __always_inline void *perflib_slot(void *data_map, __u32 idx)
{
	return perflib_gslot(data_map, &perflib_geo, idx);
}

/*
 * perflib_glive_set - set (@on) or clear the live bit of slot @idx in @live_map (a
 * PERFLIB_LIVE_MAP). Only the holder of a claimed slot changes its bit: set after the
 * claim, cleared before the slot is stored FREE. perflib_glive_set_in - the same, its
 * segment @k known (perflib_seg_of).
 */
static __always_inline void perflib__glive_set_at(void *live_map, __u32 k, __u32 off, int on)
{
	__u32 word = off / 64;
	void *seg = perflib_segment(live_map, k);
	__u64 *w, bit;

	if (!seg)
		return;
	w = bpf_map_lookup_elem(seg, &word);
	if (!w)
		return;
	bit = 1ULL << (off % 64);
	if (on)
		__sync_fetch_and_or(w, bit);
	else
		__sync_fetch_and_and(w, ~bit);
}

static __always_inline void perflib_glive_set_in(void *live_map,
						 const volatile struct perflib_bpf_geometry *g,
						 __u32 idx, __u32 k, int on)
{
	__u32 seg0 = g->seg0_slots;

	if (!seg0 || k >= PERFLIB_MAX_SEGS)
		return;
	perflib__glive_set_at(live_map, k, idx - (__u32)perflib_seg_first(k, seg0), on);
}

static __always_inline void
perflib_glive_set(void *live_map, const volatile struct perflib_bpf_geometry *g, __u32 idx, int on)
{
	perflib_glive_set_in(live_map, g, idx, perflib_seg_of(idx, g->seg0_slots), on);
}

/* the header word {seq, owner_pid} of a slot (one 8-byte load) */
static __always_inline __u64 perflib_slot_word(const void *slot)
{
	return *(volatile const __u64 *)slot;
}

/* perflib_word_state/_gen/_pid and perflib_make_word come from layout.h */

/* 1 if @slot holds a live instance (its name and id are published) */
static __always_inline int perflib_slot_live(const void *slot)
{
	return slot && perflib_word_state(perflib_slot_word(slot)) == PERFLIB_SLOT_LIVE;
}

/* InstanceId of the instance in @slot (PERF_COUNTERSET_INSTANCE.InstanceId) */
static __always_inline __u32 perflib_slot_id(const void *slot)
{
	return *(volatile const __u32 *)(slot + PERFLIB_BLOCK_OFFSET + 20);
}

/* ---- counters by position --------------------------------------------------------------- */

/* the 8-byte counter at position @pos of @slot (geometry @g), or NULL */
static __always_inline __u64 *
perflib_gcounter(void *slot, const volatile struct perflib_bpf_geometry *g, __u32 pos)
{
	if (!slot || pos >= g->nr_counters)
		return NULL;
	return (__u64 *)(slot + PERFLIB_COUNTERS_OFFSET + 8 * (__u64)pos);
}

/*
 * Per-CPU counters (PERF_ATTRIB_LINUX_PER_CPU; docs/BPF.md): the counter's value is its base
 * (the 8 bytes at its position) plus one part per CPU, each CPU's on a line of its own after
 * the slot's other areas (layout.h, perflib_pcpu_part). The helpers below add to the part of
 * the CPU the program runs on, read the sum and set through the base, from the geometry's
 * pcpu fields; a geometry without them (a loader built before PERFLIB_1.5: zeros) adds to
 * the base, which readers count as well.
 */

/* the index among the per-CPU counters of the counter at @pos, + 1; 0 if it is not one */
static __always_inline __u32 perflib__gpcpu(const volatile struct perflib_bpf_geometry *g,
					    __u32 pos)
{
	__u64 mask = g->pcpu_mask;

	if (!g->nr_cpus || pos >= 64 || !((mask >> pos) & 1))
		return 0;
	mask &= (1ULL << pos) - 1;
	/* popcount, in the shifts and masks a BPF program has */
	mask = mask - ((mask >> 1) & 0x5555555555555555ULL);
	mask = (mask & 0x3333333333333333ULL) + ((mask >> 2) & 0x3333333333333333ULL);
	mask = (mask + (mask >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
	return (__u32)((mask * 0x0101010101010101ULL) >> 56) + 1;
}

/* CPU @cpu's part of per-CPU counter @idx (perflib__gpcpu - 1) in @slot, or NULL */
static __always_inline __u64 *
perflib__gpart(void *slot, const volatile struct perflib_bpf_geometry *g, __u32 idx, __u32 cpu)
{
	__u32 nr = g->nr_cpus;
	__u64 off;

	if (!slot || !nr || idx >= 64)
		return NULL;
	off = perflib_pcpu_part(g->pcpu_offset, g->pcpu_lines, cpu % nr, idx);
	/* (not off + 8 > slot_size: the verifier would see off + 8 wrap) */
	if (g->slot_size < 8 || off > (__u64)g->slot_size - 8)
		return NULL;
	return (__u64 *)(slot + off);
}

/* the sum of the parts of per-CPU counter @idx of @slot (modulo 2^64) */
static __always_inline __u64 perflib__gpcpu_sum(void *slot,
						const volatile struct perflib_bpf_geometry *g,
						__u32 idx)
{
	__u64 sum = 0, *p;
	__u32 cpu;

	for (cpu = 0; cpu < PERFLIB_PCPU_MAX_CPUS && cpu < g->nr_cpus; cpu++) {
		p = perflib__gpart(slot, g, idx, cpu);
		if (p)
			sum += *(volatile __u64 *)p;
	}
	return sum;
}

/*
 * the part of the CPU this program runs on when the counter at @pos is per CPU, else its
 * base @c
 */
static __always_inline __u64 *
perflib__gadd_target(void *slot, const volatile struct perflib_bpf_geometry *g, __u32 pos, __u64 *c)
{
	__u32 pc = perflib__gpcpu(g, pos);
	__u64 *part;

	if (!pc)
		return c;
	part = perflib__gpart(slot, g, pc - 1, bpf_get_smp_processor_id());
	return part ? part : c;
}

/*
 * the value at @pos: the base, plus the parts of a per-CPU counter (the caller masks a DWORD
 * counter's to its low 4 bytes)
 */
static __always_inline __u64 perflib__gvalue(void *slot,
					     const volatile struct perflib_bpf_geometry *g,
					     __u32 pos, __u64 *c)
{
	__u32 pc = perflib__gpcpu(g, pos);
	__u64 v = *(volatile __u64 *)c;

	return pc ? v + perflib__gpcpu_sum(slot, g, pc - 1) : v;
}

/*
 * make the value at @pos @v (@dword: the low 4 bytes): one store; a per-CPU counter's base
 * becomes @v - the parts (increments in the parts meanwhile count on top of @v). 0.
 */
static __always_inline int perflib__gset(void *slot, const volatile struct perflib_bpf_geometry *g,
					 __u32 pos, __u64 *c, __u64 v, int dword)
{
	__u32 pc = perflib__gpcpu(g, pos);

	if (pc)
		v -= perflib__gpcpu_sum(slot, g, pc - 1);
	if (dword)
		*(volatile __u32 *)c = (__u32)v;
	else
		*(volatile __u64 *)c = v;
	return 0;
}

/*
 * perflib_gcounter_add - atomically add @v to the 64-bit counter @pos (a per-CPU counter: to
 * the part of the CPU the program runs on); 0 or -1
 */
static __always_inline int
perflib_gcounter_add(void *slot, const volatile struct perflib_bpf_geometry *g, __u32 pos, __u64 v)
{
	__u64 *c = perflib_gcounter(slot, g, pos);

	if (!c)
		return -1;
	__sync_fetch_and_add(perflib__gadd_target(slot, g, pos, c), v);
	return 0;
}

/* perflib_gcounter_add32 - atomically add @v to the DWORD counter @pos (per CPU: its part) */
static __always_inline int perflib_gcounter_add32(void *slot,
						  const volatile struct perflib_bpf_geometry *g,
						  __u32 pos, __u32 v)
{
	__u64 *c = perflib_gcounter(slot, g, pos);

	if (!c)
		return -1;
	__sync_fetch_and_add((__u32 *)perflib__gadd_target(slot, g, pos, c), v);
	return 0;
}

/*
 * perflib_gcounter_set - make the 64-bit counter @pos @v (one 8-byte store; a per-CPU
 * counter: its base becomes @v minus its parts); 0 or -1
 */
static __always_inline int
perflib_gcounter_set(void *slot, const volatile struct perflib_bpf_geometry *g, __u32 pos, __u64 v)
{
	__u64 *c = perflib_gcounter(slot, g, pos);

	if (!c)
		return -1;
	return perflib__gset(slot, g, pos, c, v, 0);
}

/* perflib_gcounter_set32 - make the DWORD counter @pos @v; 0 or -1 */
static __always_inline int perflib_gcounter_set32(void *slot,
						  const volatile struct perflib_bpf_geometry *g,
						  __u32 pos, __u32 v)
{
	__u64 *c = perflib_gcounter(slot, g, pos);

	if (!c)
		return -1;
	return perflib__gset(slot, g, pos, c, v, 1);
}

/* perflib_gcounter_read - the 64-bit counter @pos (per CPU: the sum), 0 when out of range */
static __always_inline __u64 perflib_gcounter_read(void *slot,
						   const volatile struct perflib_bpf_geometry *g,
						   __u32 pos)
{
	__u64 *c = perflib_gcounter(slot, g, pos);

	return c ? perflib__gvalue(slot, g, pos, c) : 0;
}

/* perflib_gcounter_read32 - the DWORD counter @pos, 0 when out of range */
static __always_inline __u32 perflib_gcounter_read32(void *slot,
						     const volatile struct perflib_bpf_geometry *g,
						     __u32 pos)
{
	__u64 *c = perflib_gcounter(slot, g, pos);

	return c ? (__u32)perflib__gvalue(slot, g, pos, c) : 0;
}

/* the same, for the counter set of perflib_geo */
static __always_inline __u64 *perflib_counter_ptr(void *slot, __u32 pos)
{
	return perflib_gcounter(slot, &perflib_geo, pos);
}

static __always_inline int perflib_counter_add(void *slot, __u32 pos, __u64 v)
{
	return perflib_gcounter_add(slot, &perflib_geo, pos, v);
}

static __always_inline int perflib_counter_add32(void *slot, __u32 pos, __u32 v)
{
	return perflib_gcounter_add32(slot, &perflib_geo, pos, v);
}

static __always_inline int perflib_counter_set(void *slot, __u32 pos, __u64 v)
{
	return perflib_gcounter_set(slot, &perflib_geo, pos, v);
}

static __always_inline int perflib_counter_set32(void *slot, __u32 pos, __u32 v)
{
	return perflib_gcounter_set32(slot, &perflib_geo, pos, v);
}

static __always_inline __u64 perflib_counter_read(void *slot, __u32 pos)
{
	return perflib_gcounter_read(slot, &perflib_geo, pos);
}

static __always_inline __u32 perflib_counter_read32(void *slot, __u32 pos)
{
	return perflib_gcounter_read32(slot, &perflib_geo, pos);
}

/* ---- index keys (the same hash as user space, layout.h) ----------------------------------- */

/*
 * perflib_key_ascii - the index key of ASCII name @name (at most PERFLIB_BPF_NAME_MAX - 1
 * characters, NUL-terminated; each byte is one UTF-16 unit) and @id in uniqueness @scope.
 */
static __always_inline void perflib_key_ascii(struct perflib_index_key *key, const char *name,
					      __u32 id, __u64 scope)
{
	struct perflib_hash_state st;
	__u32 len = 0, k;

	perflib_hash_init(&st, scope);
	for (k = 0; k < PERFLIB_BPF_NAME_MAX - 1; k++) {
		__u8 c = name[k];

		if (!c)
			break;
		perflib_hash_step(&st, c);
		len++;
	}
	__builtin_memset(key, 0, sizeof(*key));
	perflib_hash_final(&st, id, len, key);
}

/*
 * perflib_key_utf16 - the index key of the @len UTF-16 units at @name (a buffer of at least
 * PERFLIB_BPF_KEY_MAX units; longer names are cut there) and @id in @scope.
 */
static __always_inline void perflib_key_utf16(struct perflib_index_key *key, const __u16 *name,
					      __u32 len, __u32 id, __u64 scope)
{
	struct perflib_hash_state st;
	__u32 k;

	if (len > PERFLIB_BPF_KEY_MAX)
		len = PERFLIB_BPF_KEY_MAX;
	perflib_hash_init(&st, scope);
	for (k = 0; k < PERFLIB_BPF_KEY_MAX; k++) {
		if (k >= len)
			break;
		perflib_hash_step(&st, name[k]);
	}
	__builtin_memset(key, 0, sizeof(*key));
	perflib_hash_final(&st, id, len, key);
}

/*
 * perflib_instance_key_ascii - the key under which the counter set (perflib_geo) indexes
 * instance (@name, @id) created by process @pid: the singleton key for single-instance
 * sets, @pid's scope for per-process aggregate sets (SINGLE_AGGREGATE, ..._HISTORY,
 * INSTANCE_AGGREGATE; pass the pid the provider sees, getpid()), else machine-wide.
 */
static __always_inline void perflib_instance_key_ascii(struct perflib_index_key *key,
						       const char *name, __u32 id, __u32 pid)
{
	__u64 scope = perflib_key_scope(perflib_geo.instance_type, pid);

	if (perflib_key_singleton(perflib_geo.instance_type)) {
		perflib_singleton_key(scope, key);
		return;
	}
	perflib_key_ascii(key, name, id, scope);
}

/*
 * perflib_gslot_key - the key of the instance stored in @slot of a set (or size class) of
 * geometry @g, as its owner inserted it: the name read from the slot (up to name_max
 * units), its InstanceId and the owner's pid @pid (the pid of the slot word, which decides
 * the scope of aggregate sets).
 */
static __always_inline void perflib_gslot_key(const void *slot,
					      const volatile struct perflib_bpf_geometry *g,
					      __u32 pid, struct perflib_index_key *key)
{
	__u64 scope = perflib_key_scope(g->instance_type, pid);
	struct perflib_hash_state st;
	__u32 len = 0, k;

	if (perflib_key_singleton(g->instance_type)) {
		perflib_singleton_key(scope, key);
		return;
	}
	perflib_hash_init(&st, scope);
	for (k = 0; k < PERFLIB_BPF_SLOT_NAME_MAX; k++) {
		__u16 unit;

		if (k >= g->name_max)
			break;
		unit = *(const __u16 *)(slot + g->name_offset + 2 * (__u64)k);
		if (!unit)
			break;
		perflib_hash_step(&st, unit);
		len++;
	}
	__builtin_memset(key, 0, sizeof(*key));
	perflib_hash_final(&st, perflib_slot_id(slot), len, key);
}

/* perflib_slot_key - perflib_gslot_key() for the program's one set (perflib_geo) */
static __always_inline void perflib_slot_key(const void *slot, __u32 pid,
					     struct perflib_index_key *key)
{
	perflib_gslot_key(slot, &perflib_geo, pid, key);
}

/* ---- finding an instance by scanning the slots --------------------------------------------- */

struct perflib_find_ctx {
	__u32 id;			 /* InstanceId to match */
	__u32 flags;			 /* PERFLIB_FIND_* */
	__s64 found;			 /* slot index, -1 = none */
	char name[PERFLIB_BPF_NAME_MAX]; /* ASCII name to match, NUL-terminated */
};

/* does live @slot hold the instance @f asks for? */
static __always_inline int perflib__slot_matches(const void *slot, const struct perflib_find_ctx *f)
{
	__u32 k;

	if (!perflib_slot_live(slot))
		return 0;
	if ((f->flags & PERFLIB_FIND_ID) && perflib_slot_id(slot) != f->id)
		return 0;
	if (!(f->flags & PERFLIB_FIND_NAME))
		return 1;
	for (k = 0; k < PERFLIB_BPF_NAME_MAX; k++) {
		__u16 unit;
		__u8 c = f->name[k];

		if (k >= perflib_geo.name_max)
			return 0;
		unit = *(const __u16 *)(slot + perflib_geo.name_offset + 2 * (__u64)k);
		if (unit != c)
			return 0;
		if (!c)
			return 1;
	}
	return 0;
}

/*
 * A bpf_loop() callback cannot receive a map through its context, so PERFLIB_DATA_MAP
 * defines the scan for its own map: _name##__perflib_find(id, name, flags).
 */
#define PERFLIB__DEFINE_FIND(_name)                                                                \
	static __attribute__((unused)) long _name##__perflib_find_cb(__u32 i, void *c)             \
	{                                                                                          \
		struct perflib_find_ctx *f = c;                                                    \
		void *slot = perflib_slot(&_name, i);                                              \
                                                                                                   \
		if (!slot)                                                                         \
			return 1;                                                                  \
		if (!perflib__slot_matches(slot, f))                                               \
			return 0;                                                                  \
		f->found = i;                                                                      \
		return 1;                                                                          \
	}                                                                                          \
	static __always_inline __s64 _name##__perflib_find(__u32 id, const char *name,             \
							   __u32 flags)                            \
	{                                                                                          \
		struct perflib_find_ctx f = {.id = id, .flags = flags, .found = -1};               \
		__u32 k;                                                                           \
                                                                                                   \
		for (k = 0; name && k < PERFLIB_BPF_NAME_MAX - 1; k++) {                           \
			f.name[k] = name[k];                                                       \
			if (!name[k])                                                              \
				break;                                                             \
		}                                                                                  \
		bpf_loop(perflib_geo.capacity < PERFLIB_BPF_LOOP_MAX ? perflib_geo.capacity        \
								     : PERFLIB_BPF_LOOP_MAX,       \
			 _name##__perflib_find_cb, &f, 0);                                         \
		return f.found;                                                                    \
	}

/*
 * perflib_find_instance - scan the slots of data map @map for a live instance: with
 * @flags PERFLIB_FIND_ID its InstanceId is @id, with PERFLIB_FIND_NAME its name is the
 * ASCII string @name. Returns the first matching slot index or -1. O(capacity) (bpf_loop,
 * at most 8M slots): find once and keep the index, re-checking perflib_slot_live() or the
 * word on use; perflib_find_by_key() is O(name length).
 */
#define perflib_find_instance(map, id, name, flags) map##__perflib_find(id, name, flags)

/* ==== kernel-owned instances: geometry per counter set, create and delete from BPF ========== */
/*
 * Everything in this section takes the counter set's geometry explicitly, so that one BPF
 * object can serve several counter sets (declare one PERFLIB_GEOMETRY per set, each filled
 * by the loader from perflib_bpf_counterset_open()). The geometry must still live in .rodata:
 * the verifier bounds every slot access with its (frozen, hence constant) values.
 *
 * perflib_instance_create() and perflib_instance_delete() give an instance created by a BPF
 * program the guarantees PerfCreateInstance / PerfDeleteInstance give (ARCHITECTURE.md,
 * "Lifetime"): a FREE slot is claimed by CAS, the Windows block and the name are written,
 * the index key (name, id) is inserted with BPF_NOEXIST (so the pair is unique across every
 * provider of the counter set, kernel and user space alike), and only then is the slot
 * published LIVE. The instance belongs to the kernel: owner pid 0 and owner_start
 * PERFLIB_OWNER_KERNEL, so no reaper frees it; its loader deletes it (from BPF with
 * perflib_instance_delete, or from user space with perflib_kernel_instances_delete()).
 * While a slot is being created or deleted its word carries PERFLIB_KERNEL_CLAIM_PID (pid 1,
 * always alive), so user-space reapers leave it alone.
 *
 * Program types tested: syscall, tracing tp_btf and iter/task (docs/BPF.md lists where);
 * anything that may use atomics on map values and the bpf_iter_num kfuncs (kernel 6.4 and
 * later) should work, untested: kprobe, fentry/fexit, LSM, cgroup and network programs.
 */

/* the pid a kernel claim shows while the slot is CLAIMED (create or delete in progress) */
#define PERFLIB_KERNEL_CLAIM_PID 1
/*
 * longest name perflib_instance_create() takes, in UTF-16 units without the NUL; the size
 * class of the geometry bounds it further (its name_max: class 0 holds names of up to
 * PERFLIB_CLASS0_NAME - 1 units, class 1 up to 63; layout.h)
 */
#define PERFLIB_BPF_CREATE_NAME_MAX (PERFLIB_BPF_KEY_MAX - 1)
/* most slots one scan visits (the kfunc iterator's limit) */
#define PERFLIB_BPF_SCAN_MAX (1U << 23)

#ifndef PERFLIB_BPF_NO_ITER_KFUNCS
extern int bpf_iter_num_new(struct bpf_iter_num *it, int start, int end) __weak __ksym;
extern int *bpf_iter_num_next(struct bpf_iter_num *it) __weak __ksym;
extern void bpf_iter_num_destroy(struct bpf_iter_num *it) __weak __ksym;
#endif

/*
 * The loops of this section are open-coded iterators (bpf_iter_num): the verifier checks
 * their body once instead of once per iteration, which keeps programs that create instances
 * quick to load. Every index they produce is bounded again before use.
 */
#define perflib__for(_it, _k, _n)                                                                  \
	for (bpf_iter_num_new(&(_it), 0, (int)(_n)); ((_k) = bpf_iter_num_next(&(_it)));)

/* unit @k of name @name: UTF-16 units, or bytes when @ascii (each byte one unit) */
static __always_inline __u16 perflib__unit(const void *name, int ascii, __u32 k)
{
	return ascii ? ((const __u8 *)name)[k] : ((const __u16 *)name)[k];
}

/*
 * the index key of the @len units of @name (perflib__unit) and @id, shaped for geometry @g
 * (kernel scope)
 */
static __always_inline void perflib__gkey(const volatile struct perflib_bpf_geometry *g,
					  const void *name, int ascii, __u32 len, __u32 id,
					  struct perflib_index_key *key)
{
	__u64 scope = perflib_key_scope(g->instance_type, 0);
	struct perflib_hash_state st;
	struct bpf_iter_num it;
	int *k;

	__builtin_memset(key, 0, sizeof(*key));
	if (perflib_key_singleton(g->instance_type)) {
		perflib_singleton_key(scope, key);
		return;
	}
	if (len > PERFLIB_BPF_CREATE_NAME_MAX)
		len = PERFLIB_BPF_CREATE_NAME_MAX;
	perflib_hash_init(&st, scope);
	perflib__for(it, k, len)
	{
		__u32 i = (__u32)*k;

		if (i >= PERFLIB_BPF_CREATE_NAME_MAX)
			break;
		perflib_hash_step(&st, perflib__unit(name, ascii, i));
	}
	bpf_iter_num_destroy(&it);
	perflib_hash_final(&st, id, len, key);
}

/* store 0 in bytes [@from, slot_size) of @slot, 8 at a time (slot_size is a multiple of 16) */
static __always_inline void
perflib__gzero(void *slot, const volatile struct perflib_bpf_geometry *g, __u32 from)
{
	struct bpf_iter_num it;
	int *k;

	perflib__for(it, k, (g->slot_size - from) / 8)
	{
		__u64 off = from + 8 * (__u64)(__u32)*k;

		if (off + 8 > g->slot_size)
			break;
		*(volatile __u64 *)(slot + off) = 0;
	}
	bpf_iter_num_destroy(&it);
}

/*
 * perflib_gnr_slots - slots in the segments of @data_map published so far (at most the
 * capacity): the range a scan for a free slot covers. BPF programs never add segments; a
 * user-space provider of the set does, when it finds no free slot.
 */
static __always_inline __u32 perflib_gnr_slots(void *data_map,
					       const volatile struct perflib_bpf_geometry *g)
{
	struct bpf_iter_num it;
	__u32 n = 0;
	__u64 end;
	int *k;

	perflib__for(it, k, PERFLIB_MAX_SEGS)
	{
		if (!perflib_segment(data_map, (__u32)*k))
			break;
		n = (__u32)*k + 1;
	}
	bpf_iter_num_destroy(&it);
	if (n > PERFLIB_MAX_SEGS)
		n = PERFLIB_MAX_SEGS;
	end = perflib_seg_first(n, g->seg0_slots);
	return end < g->capacity ? (__u32)end : g->capacity;
}

/*
 * claim a FREE slot of @data_map by CAS among the slots of its published segments, scanning
 * from @hint, and set its live bit; the slot index, or -PERFLIB_ENOSPC. *ret_word gets the
 * claimed word.
 */
static __always_inline __s64 perflib__gclaim(void *data_map, void *live_map,
					     const volatile struct perflib_bpf_geometry *g,
					     __u32 hint, __u64 *ret_word)
{
	__u32 cap = perflib_gnr_slots(data_map, g);
	struct bpf_iter_num it;
	__s64 found = -PERFLIB_ENOSPC;
	int *k;

	if (cap > PERFLIB_BPF_SCAN_MAX)
		cap = PERFLIB_BPF_SCAN_MAX;
	if (hint >= cap)
		hint = 0;
	perflib__for(it, k, cap)
	{
		__u32 i = hint + (__u32)*k;
		__u64 w, nw;
		void *slot;

		if (i >= cap)
			i -= cap;
		slot = perflib_gslot(data_map, g, i);
		if (!slot)
			break;
		w = perflib_slot_word(slot);
		if (perflib_word_state(w) != PERFLIB_SLOT_FREE)
			continue;
		nw = perflib_make_word(PERFLIB_SLOT_CLAIMED,
				       perflib_gen_add(perflib_word_gen(w), 1),
				       PERFLIB_KERNEL_CLAIM_PID);
		if (__sync_val_compare_and_swap((__u64 *)slot, w, nw) == w) {
			perflib_glive_set(live_map, g, i, 1);
			*ret_word = nw;
			found = i;
			break;
		}
	}
	bpf_iter_num_destroy(&it);
	return found;
}

/*
 * give claimed slot @idx (word @w) back: zero what the claim wrote, clear its bit, then FREE
 * by CAS from @w (a full barrier, like the user-space release store: the zeroes are visible
 * first; and a word that changed, a user-space reaper's takeover of a dead owner's claim, is
 * left to that reaper). perflib__grelease_at: the slot is entry @off of segment @k;
 * perflib__grelease_in: slot @idx of segment @k; perflib__grelease: slot @idx.
 */
static __always_inline void perflib__grelease_at(void *slot, void *live_map,
						 const volatile struct perflib_bpf_geometry *g,
						 __u32 k, __u32 off, __u64 w)
{
	struct perflib_slot_hdr *h = slot;

	perflib__gzero(slot, g, PERFLIB_BLOCK_OFFSET);
	h->owner_start = 0;
	perflib__glive_set_at(live_map, k, off, 0);
	__sync_val_compare_and_swap(
		(__u64 *)slot, w,
		perflib_make_word(PERFLIB_SLOT_FREE, perflib_gen_add(perflib_word_gen(w), 1), 0));
}

static __always_inline void perflib__grelease_in(void *slot, void *live_map,
						 const volatile struct perflib_bpf_geometry *g,
						 __u32 idx, __u32 k, __u64 w)
{
	/* past the segments (k = PERFLIB_MAX_SEGS) the live map has no segment k: no bit */
	perflib__grelease_at(slot, live_map, g, k, idx - (__u32)perflib_seg_first(k, g->seg0_slots),
			     w);
}

static __always_inline void perflib__grelease(void *slot, void *live_map,
					      const volatile struct perflib_bpf_geometry *g,
					      __u32 idx, __u64 w)
{
	perflib__grelease_in(slot, live_map, g, idx, perflib_seg_of(idx, g->seg0_slots), w);
}

/*
 * perflib__gslot_key - perflib_gslot_key() (the key of the instance in @slot as its owner,
 * of pid @pid, inserted it; 0 for a kernel-owned one) with an open-coded iterator over the
 * name: the verifier checks the body once, where the bounded loop of perflib_gslot_key() is
 * walked unit by unit (up to 1,025 units, at every call site)
 */
static __always_inline void perflib__gslot_key(const void *slot,
					       const volatile struct perflib_bpf_geometry *g,
					       __u32 pid, struct perflib_index_key *key)
{
	__u64 scope = perflib_key_scope(g->instance_type, pid);
	struct perflib_hash_state st;
	struct bpf_iter_num it;
	__u32 len = 0;
	int *k;

	__builtin_memset(key, 0, sizeof(*key));
	if (perflib_key_singleton(g->instance_type)) {
		perflib_singleton_key(scope, key);
		return;
	}
	perflib_hash_init(&st, scope);
	perflib__for(it, k, g->name_max)
	{
		__u64 off = g->name_offset + 2 * (__u64)(__u32)*k;
		__u16 unit;

		if (off + 2 > g->slot_size)
			break;
		unit = *(const __u16 *)(slot + off);
		if (!unit)
			break;
		perflib_hash_step(&st, unit);
		len++;
	}
	bpf_iter_num_destroy(&it);
	perflib_hash_final(&st, perflib_slot_id(slot), len, key);
}

/* ---- the index tables (layout.h): lookups, inserts and removals from BPF ------------------ */

/* entry @j (0..31: bucket j / 16 of @p) of leader @k's table in @index_map, or NULL */
static __always_inline __u64 *perflib__gidx_entry(void *seg, __u32 base,
						  const struct perflib_idx_place *p, __u32 j)
{
	/* (a branch: a stack slot chosen by index is pointer arithmetic the verifier refuses) */
	__u32 b = j < PERFLIB_IDX_BUCKET ? p->b[0] : p->b[1];
	__u32 word = base + b * PERFLIB_IDX_BUCKET + (j & 15);

	return bpf_map_lookup_elem(seg, &word);
}

/* leader @k's table in a set of geometry @g: its buckets, its first word (layout.h) */
static __always_inline __u64 perflib__gidx_table(const volatile struct perflib_bpf_geometry *g,
						 __u32 k, __u32 *ret_base)
{
	return perflib_idx_leader_table(k, g->seg0_slots, g->nr_procs, ret_base);
}

#define PERFLIB__LOOKUP 0xFFFFFFFFu /* perflib__gidx_find: a lookup, not a creator's check */

/*
 * candidate slot @i of perflib__gidx_find (its entry current, its tag the key's): does its
 * instance have @key? 1 if LIVE and it does, 2 if claimed and it does, else 0
 */
static __always_inline int perflib__gidx_holds(void *data_map,
					       const volatile struct perflib_bpf_geometry *g,
					       const struct perflib_index_key *key, __u32 i)
{
	struct perflib_slot_hdr *hdr = perflib_gslot(data_map, g, i);
	struct perflib_index_key sk;
	__u64 w;

	if (!hdr)
		return 0;
	w = perflib_slot_word(hdr);
	perflib__gslot_key(hdr, g, perflib_slot_key_pid(hdr->owner_start, w), &sk);
	if (sk.id != key->id || sk.check != key->check || sk.hash != key->hash ||
	    perflib_slot_word(hdr) != w)
		return 0;
	return perflib_word_state(w) == PERFLIB_SLOT_LIVE ? 1 : 2;
}

/*
 * Look @key up in the index tables of the set (geometry @g) of @data_map, @index_map: the
 * slots of current entries whose instance has @key. With @skip PERFLIB__LOOKUP, the first
 * LIVE one is returned (>= 0), else -1. Otherwise (the check of the creator of slot @skip,
 * whose entries are passed over): -PERFLIB_EEXIST for a LIVE one or one being created at a slot
 * below @skip, -PERFLIB_EBUSY for one being created above it (user space waits for it; a program
 * cannot), 0 if nothing counts. The entries are read first and the candidates (current,
 * the key's tag: at most two; more, which takes two 24-bit tag collisions, answers -PERFLIB_EBUSY
 * to a creator) checked after, so that the name's hash loop is not verified inside the
 * loops over the tables. One subprogram (its own stack frame) for every caller.
 */
static __noinline __s64 perflib__gidx_find(void *data_map, void *index_map,
					   const volatile struct perflib_bpf_geometry *g,
					   const struct perflib_index_key *key, __u32 skip)
{
	int *np, *jp, live_only = skip == PERFLIB__LOOKUP, h;
	/* the candidates' slots + 1 (32 bits each), and how many there were */
	struct {
		__u64 slots, n;
	} c = {};
	struct perflib_idx_place p;
	struct bpf_iter_num it, jt;
	__s64 ret = live_only ? -1 : 0;

	perflib__for(it, np, PERFLIB_IDX_LEADERS)
	{
		__u32 k = perflib_idx_leader_nr((__u32)*np), base;
		__u64 nb = perflib__gidx_table(g, k, &base);
		void *seg = perflib_segment(index_map, k);

		if (!seg || !nb)
			break;
		perflib_idx_place(key, nb, &p);
		perflib__for(jt, jp, 2 * PERFLIB_IDX_BUCKET)
		{
			__u32 j = (__u32)*jp, i;
			__u64 *ep, e;
			void *slot;

			if (j >= PERFLIB_IDX_BUCKET && p.b[1] == p.b[0])
				break;
			ep = perflib__gidx_entry(seg, base, &p, j);
			if (!ep)
				break;
			e = *(volatile __u64 *)ep;
			i = perflib_idx_entry_slot(e);
			if (!e || perflib_idx_entry_tag(e) != p.tag || i == skip)
				continue;
			slot = perflib_gslot(data_map, g, i);
			if (!slot || !perflib_idx_current(e, perflib_slot_word(slot)))
				continue;
			c.slots = c.slots << 32 | (i + 1);
			c.n++;
		}
		bpf_iter_num_destroy(&jt);
	}
	bpf_iter_num_destroy(&it);
	/*
	 * read again, in place, through a helper: values the verifier did not follow. Used to
	 * reach a slot, the loops' own values would have to be followed exactly, and the loops
	 * would never converge
	 */
	if (bpf_probe_read_kernel(&c, sizeof(c), &c))
		return live_only ? -1 : -PERFLIB_EBUSY;
	if (c.n > 2 && !live_only)
		return -PERFLIB_EBUSY;
	perflib__for(it, np, 2)
	{
		__u32 i = (__u32)(*np ? c.slots >> 32 : c.slots) - 1;

		if (i == 0xFFFFFFFF)
			continue;
		h = perflib__gidx_holds(data_map, g, key, i);
		if (!h)
			continue;
		if (live_only) {
			if (h == 1) {
				ret = i;
				break;
			}
			continue;
		}
		if (h == 1 || i < skip) {
			ret = -PERFLIB_EEXIST;
			break;
		}
		ret = -PERFLIB_EBUSY;
	}
	bpf_iter_num_destroy(&it);
	return ret;
}

/*
 * perflib_gfind_by_key - the slot index of the live instance with @key in the set of
 * geometry @g whose segs and index pins are @data_map (a PERFLIB_DATA_MAP) and @index_map
 * (a PERFLIB_INDEX_MAP: the set's lives pin), or -1: two buckets of each group leader's
 * table, the candidates checked against the slot's own name, id and scope (up to
 * PERFLIB_IDX_LEADERS, 17, leaders, 32 entries each).
 * perflib_find_by_key - the same for the program's one counter set (perflib_geo).
 */
static __always_inline __s64 perflib_gfind_by_key(void *data_map, void *index_map,
						  const volatile struct perflib_bpf_geometry *g,
						  const struct perflib_index_key *key)
{
	return perflib__gidx_find(data_map, index_map, g, key, PERFLIB__LOOKUP);
}

static __always_inline __s64 perflib_find_by_key(void *data_map, void *index_map,
						 const struct perflib_index_key *key)
{
	return perflib_gfind_by_key(data_map, index_map, &perflib_geo, key);
}

/*
 * the table of the leader of slot @idx and @key's place there: the leader's live map, the
 * table's first word in *@ret_base; NULL if the set has no such segment
 */
static __always_inline void *perflib__gidx_home(void *index_map,
						const volatile struct perflib_bpf_geometry *g,
						__u32 idx, const struct perflib_index_key *key,
						struct perflib_idx_place *p, __u32 *ret_base)
{
	__u32 k = perflib_idx_of(idx, g->seg0_slots);
	__u64 nb = perflib__gidx_table(g, k, ret_base);
	void *seg = perflib_segment(index_map, k);

	if (!seg || !nb)
		return NULL;
	perflib_idx_place(key, nb, p);
	return seg;
}

/*
 * put the entry of claimed slot @idx (word @w) under @key in its leader's table: in the
 * first free or stale entry of its first bucket, else of its second (user space takes the
 * emptier of the two; counting both here makes a loop the verifier cannot prune). The
 * entry's address (the entry in *@ret_e), or NULL (both buckets full of current entries).
 */
static __always_inline __u64 *perflib__gidx_put(void *data_map, void *index_map,
						const volatile struct perflib_bpf_geometry *g,
						__u32 idx, __u64 w,
						const struct perflib_index_key *key, __u64 *ret_e)
{
	struct perflib_idx_place p;
	struct bpf_iter_num it;
	__u64 e, *at = NULL;
	__u32 base;
	void *seg = perflib__gidx_home(index_map, g, idx, key, &p, &base);
	int *jp;

	if (!seg)
		return NULL;
	e = perflib_idx_entry(p.tag, perflib_word_gen(w), idx);
	*ret_e = e;
	perflib__for(it, jp, 2 * PERFLIB_IDX_BUCKET)
	{
		__u64 *ep = perflib__gidx_entry(seg, base, &p, (__u32)*jp);
		__u64 old;
		void *os;

		if (!ep)
			break;
		old = *(volatile __u64 *)ep;
		if (old) {
			/* a stale entry (its slot no longer holds that claim) is taken over */
			os = perflib_gslot(data_map, g, perflib_idx_entry_slot(old));
			if (os && perflib_idx_current(old, perflib_slot_word(os)))
				continue;
		}
		if (__sync_val_compare_and_swap(ep, old, e) == old) {
			at = ep;
			break;
		}
	}
	bpf_iter_num_destroy(&it);
	return at;
}

/* remove the entries of slot @idx under @key from its leader's table */
static __always_inline void perflib__gidx_remove(void *index_map,
						 const volatile struct perflib_bpf_geometry *g,
						 __u32 idx, const struct perflib_index_key *key)
{
	struct perflib_idx_place p;
	struct bpf_iter_num it;
	__u32 base;
	void *seg = perflib__gidx_home(index_map, g, idx, key, &p, &base);
	int *jp;

	if (!seg)
		return;
	perflib__for(it, jp, 2 * PERFLIB_IDX_BUCKET)
	{
		__u64 *ep = perflib__gidx_entry(seg, base, &p, (__u32)*jp);
		__u64 e;

		if (!ep)
			break;
		e = *(volatile __u64 *)ep;
		if (e && perflib_idx_entry_slot(e) == idx && perflib_idx_entry_tag(e) == p.tag)
			__sync_val_compare_and_swap(ep, e, 0);
	}
	bpf_iter_num_destroy(&it);
}

/*
 * perflib_instance_create - create a kernel-owned instance of the counter set of @data_map
 * (geometry @g; @index_map and @live_map its PERFLIB_INDEX_MAP and PERFLIB_LIVE_MAP) named
 * by the @len UTF-16 units at @name (a buffer of PERFLIB_BPF_KEY_MAX units; at most
 * PERFLIB_BPF_CREATE_NAME_MAX units, no NUL needed) with InstanceId @id. @guid is the
 * counter set's GUID (16 bytes, Windows byte order; the loader copies it from
 * perflib_bpf_counterset_guid()), @hint the slot to start looking at (any value; keep the
 * last result + 1 to spread creations). The slot is taken among the segments the set has:
 * a program never grows the set (a user-space provider does; perflib_kernel_reserve()
 * makes room ahead). Returns the slot index (>= 0), or -PERFLIB_EEXIST (a live instance
 * anywhere has this name and id, or the single instance of a single-instance set exists),
 * -PERFLIB_ENOSPC (no free slot), -PERFLIB_EINVAL (name too long for the set),
 * -PERFLIB_EBUSY (another provider is creating the same name right now: try again),
 * -PERFLIB_E2BIG (both buckets of the name's key in its index table full of current
 * entries: practically never). Counters start at 0.
 * The index lookup runs in a subprogram whose stack frame (about 150 bytes) adds to the
 * caller's: the two must stay within the kernel's 512 bytes.
 * perflib__gcreate: the same for a name of UTF-16 units or, with @ascii, bytes.
 */
static __always_inline __s64 perflib__gcreate(void *data_map, void *index_map, void *live_map,
					      const volatile struct perflib_bpf_geometry *g,
					      const volatile __u8 *guid, const void *name,
					      int ascii_name, __u32 len, __u32 id, __u32 hint)
{
	struct perflib_index_key key;
	struct perflib_slot_hdr *h;
	struct bpf_iter_num it;
	__u32 k, name_bytes, blk_size;
	__u64 w, live, ascii, e = 0, *at;
	void *slot;
	__s64 idx;
	int err, *kp;

	if (len > PERFLIB_BPF_CREATE_NAME_MAX || len + 1 > g->name_max)
		return -PERFLIB_EINVAL;
	idx = perflib__gclaim(data_map, live_map, g, hint, &w);
	if (idx < 0)
		return idx;
	slot = perflib_gslot(data_map, g, (__u32)idx);
	if (!slot)
		return -PERFLIB_ENOSPC;
	h = slot;
	h->owner_start = PERFLIB_OWNER_KERNEL;
	/* the Windows block (PERF_COUNTERSET_INSTANCE), exactly as PerfCreateInstance writes it */
	for (k = 0; k < 16; k++)
		*(__u8 *)(slot + PERFLIB_BLOCK_OFFSET + k) = guid[k];
	name_bytes = (len + 1) * 2;
	blk_size = 32 + 8 * g->nr_counters;
	*(__u32 *)(slot + PERFLIB_BLOCK_OFFSET + 16) = (blk_size + name_bytes + 7) & ~7u;
	*(__u32 *)(slot + PERFLIB_BLOCK_OFFSET + 20) = id;
	*(__u32 *)(slot + PERFLIB_BLOCK_OFFSET + 24) = blk_size;
	*(__u32 *)(slot + PERFLIB_BLOCK_OFFSET + 28) = name_bytes;
	/*
	 * the name (a FREE slot is all zero past its header: the NUL and padding are there) and
	 * the ASCII rendering bpftool shows (ascii_offset: name end rounded up to 8, layout.h)
	 */
	ascii = (g->name_offset + 2 * (__u64)g->name_max + 7) & ~7ULL;
	perflib__for(it, kp, len)
	{
		__u32 k = (__u32)*kp;
		__u64 off = g->name_offset + 2 * (__u64)k;
		__u16 c;

		if (k >= PERFLIB_BPF_CREATE_NAME_MAX || off + 2 > g->slot_size)
			break;
		c = perflib__unit(name, ascii_name, k);
		*(__u16 *)(slot + off) = c;
		/* one register for the bound and the store (a small slot ends right after) */
		off = ascii + k;
		barrier_var(off);
		if (k < PERFLIB_ASCII_MAX - 1 && k + 1 < g->name_max && off < g->slot_size)
			*(__u8 *)(slot + off) = c >= 0x20 && c < 0x7f ? (__u8)c : '?';
	}
	bpf_iter_num_destroy(&it);
	perflib__gkey(g, name, ascii_name, len, id, &key);
	/* the entry goes into the table of the leader of the segment that holds the slot */
	at = perflib__gidx_put(data_map, index_map, g, (__u32)idx, w, &key, &e);
	if (!at) {
		err = -PERFLIB_E2BIG; /* both of the key's buckets full */
	} else {
		/* our insert before every look (a full barrier; the slot is ours, unchanged) */
		__sync_fetch_and_add((__u64 *)slot, 0);
		err = (int)perflib__gidx_find(data_map, index_map, g, &key, (__u32)idx);
		if (err)
			__sync_val_compare_and_swap(at, e, 0);
	}
	if (err) {
		perflib__grelease(slot, live_map, g, (__u32)idx, w);
		return err; /* -PERFLIB_EEXIST, -PERFLIB_EBUSY, -PERFLIB_E2BIG */
	}
	/* publish: block and name are in place before the word says LIVE (CAS: full barrier) */
	live = perflib_make_word(PERFLIB_SLOT_LIVE, perflib_gen_add(perflib_word_gen(w), 1), 0);
	if (__sync_val_compare_and_swap((__u64 *)slot, w, live) != w)
		return -PERFLIB_EBUSY; /* cannot happen while the protocol is kept */
	return idx;
}

static __always_inline __s64 perflib_instance_create(void *data_map, void *index_map,
						     void *live_map,
						     const volatile struct perflib_bpf_geometry *g,
						     const volatile __u8 *guid, const __u16 *name,
						     __u32 len, __u32 id, __u32 hint)
{
	return perflib__gcreate(data_map, index_map, live_map, g, guid, name, 0, len, id, hint);
}

/*
 * perflib_instance_create_ascii - perflib_instance_create() with an ASCII name (NUL-terminated,
 * at most PERFLIB_BPF_CREATE_NAME_MAX characters; each byte one UTF-16 unit) in a buffer of
 * PERFLIB_BPF_KEY_MAX bytes (the verifier checks reads up to its end), e.g. a stack buffer
 * holding a task's comm read with bpf_probe_read_kernel_str().
 */
static __always_inline __s64
perflib_instance_create_ascii(void *data_map, void *index_map, void *live_map,
			      const volatile struct perflib_bpf_geometry *g,
			      const volatile __u8 *guid, const char *name, __u32 id, __u32 hint)
{
	struct bpf_iter_num it;
	__u32 len = 0;
	int *kp;

	/* its length; the bytes are read as units where they are (no copy on the stack) */
	perflib__for(it, kp, PERFLIB_BPF_CREATE_NAME_MAX)
	{
		__u32 k = (__u32)*kp;

		if (k >= PERFLIB_BPF_CREATE_NAME_MAX || !name[k])
			break;
		len = k + 1;
	}
	bpf_iter_num_destroy(&it);
	return perflib__gcreate(data_map, index_map, live_map, g, guid, name, 1, len, id, hint);
}

/*
 * perflib_instance_delete - delete the kernel-owned live instance in slot @idx (from
 * perflib_instance_create): hide it from readers (LIVE -> CLAIMED), delete its index key,
 * zero the slot, clear its live bit and free it for reuse. 0, -PERFLIB_ENOENT (not a live
 * kernel-owned instance), -PERFLIB_EBUSY (its word changed under us).
 */
static __always_inline int perflib_instance_delete(void *data_map, void *index_map, void *live_map,
						   const volatile struct perflib_bpf_geometry *g,
						   __u32 idx)
{
	struct perflib_index_key key;
	struct perflib_slot_hdr *h;
	void *slot = perflib_gslot(data_map, g, idx);
	__u64 w, nw;

	if (!slot)
		return -PERFLIB_ENOENT;
	h = slot;
	w = perflib_slot_word(slot);
	if (perflib_word_state(w) != PERFLIB_SLOT_LIVE || perflib_word_pid(w) != 0 ||
	    h->owner_start != PERFLIB_OWNER_KERNEL)
		return -PERFLIB_ENOENT;
	nw = perflib_make_word(PERFLIB_SLOT_CLAIMED, perflib_gen_add(perflib_word_gen(w), 1),
			       PERFLIB_KERNEL_CLAIM_PID);
	if (__sync_val_compare_and_swap((__u64 *)slot, w, nw) != w)
		return -PERFLIB_EBUSY;
	/* the key as the creator inserted it: the name read back from the slot, pid 0 */
	perflib__gslot_key(slot, g, 0, &key);
	perflib__gidx_remove(index_map, g, idx, &key);
	perflib__grelease(slot, live_map, g, idx, nw);
	return 0;
}

/* ---- map arguments, checked ----------------------------------------------------------- */

/*
 * Every helper takes its maps in one order: data, index, live (docs/BPF.md says why). The
 * macros below check at compile time that each map argument is of the kind its place wants,
 * from the value size of the segments it declares: a PERFLIB_DATA_MAP's are slots (16 bytes
 * or more), a PERFLIB_INDEX_MAP's and a PERFLIB_LIVE_MAP's are 8-byte words (both are the
 * lives pin, in one shape: either serves as the other). A map reached through a void *
 * (a function of the program's own that serves several sets) is not checked: call the
 * function by its name in parentheses, (perflib_gslot)(map, g, idx).
 */
#define PERFLIB__SEG_VALUE_SIZE(_map) (sizeof(*(_map)->values[0]->value_size) / sizeof(int))
#define PERFLIB__ASSERT(_cond, _msg)                                                               \
	((void)sizeof(struct {                                                                     \
		_Static_assert(_cond, _msg);                                                       \
		int _unused;                                                                       \
	}))
#define PERFLIB__DATA(_map)                                                                        \
	PERFLIB__ASSERT(                                                                           \
		PERFLIB__SEG_VALUE_SIZE(_map) != 8,                                                \
		"perflib_bpf.h: a PERFLIB_DATA_MAP goes here (map order: data, index, live)")
#define PERFLIB__LIVES(_map)                                                                       \
	PERFLIB__ASSERT(                                                                           \
		PERFLIB__SEG_VALUE_SIZE(_map) == 8,                                                \
		"perflib_bpf.h: a PERFLIB_INDEX_MAP or PERFLIB_LIVE_MAP goes here (map order: "    \
		"data, index, live)")

#define perflib_gslot_in(_data, _g, _idx, _k)                                                      \
	(PERFLIB__DATA(_data), perflib_gslot_in(_data, _g, _idx, _k))
#define perflib_gslot(_data, _g, _idx) (PERFLIB__DATA(_data), perflib_gslot(_data, _g, _idx))
#define perflib_slot(_data, _idx) (PERFLIB__DATA(_data), perflib_slot(_data, _idx))
#define perflib_glive_set_in(_live, _g, _idx, _k, _on)                                             \
	(PERFLIB__LIVES(_live), perflib_glive_set_in(_live, _g, _idx, _k, _on))
#define perflib_glive_set(_live, _g, _idx, _on)                                                    \
	(PERFLIB__LIVES(_live), perflib_glive_set(_live, _g, _idx, _on))
#define perflib_gnr_slots(_data, _g) (PERFLIB__DATA(_data), perflib_gnr_slots(_data, _g))
#define perflib_gfind_by_key(_data, _index, _g, _key)                                              \
	(PERFLIB__DATA(_data), PERFLIB__LIVES(_index),                                             \
	 perflib_gfind_by_key(_data, _index, _g, _key))
#define perflib_find_by_key(_data, _index, _key)                                                   \
	(PERFLIB__DATA(_data), PERFLIB__LIVES(_index), perflib_find_by_key(_data, _index, _key))
#define perflib_instance_create(_data, _index, _live, ...)                                         \
	(PERFLIB__DATA(_data), PERFLIB__LIVES(_index), PERFLIB__LIVES(_live),                      \
	 perflib_instance_create(_data, _index, _live, __VA_ARGS__))
#define perflib_instance_create_ascii(_data, _index, _live, ...)                                   \
	(PERFLIB__DATA(_data), PERFLIB__LIVES(_index), PERFLIB__LIVES(_live),                      \
	 perflib_instance_create_ascii(_data, _index, _live, __VA_ARGS__))
#define perflib_instance_delete(_data, _index, _live, _g, _idx)                                    \
	(PERFLIB__DATA(_data), PERFLIB__LIVES(_index), PERFLIB__LIVES(_live),                      \
	 perflib_instance_delete(_data, _index, _live, _g, _idx))

#endif /* __bpf__ */

#endif /* PERFLIB_BPF_H */

/* SPDX-License-Identifier: MIT */
/*
 * layout.h - the bytes perflib keeps in bpffs, shared by the library, the tools and BPF
 * programs. Every counter set is a directory <root>/<counter-set GUID>/ holding:
 *
 *   info   ARRAY, 1 entry, frozen: struct perflib_info (with its size classes), then
 *          nr_counters struct perflib_info_counter, then a UTF-16LE string pool.
 *
 * Size classes. Instances live in slots of up to PERFLIB_MAX_CLASSES sizes, by the length
 * of their name (perflib_info.classes[]: class 0 holds the shortest names, the last class
 * names up to the set's name_max). A class is a complete storage of its own, named with
 * suffix "" for class 0 and "<c>" for class c > 0 (pins segs, segs1, ...; directories s<k>,
 * c1s<k>, ...):
 *   segs<c>   ARRAY_OF_MAPS, PERFLIB_MAX_SEGS entries: segment k -> its data map (for BPF)
 *   lives<c>  ARRAY_OF_MAPS, PERFLIB_MAX_SEGS entries: segment k -> its live map (bitmap,
 *             owner summaries, a leader's index table)
 *   [c<c>]s<k>/ one directory per segment k (0 <= k < perflib_ctl.nr_segs[c]), created as it grows:
 *     data   ARRAY, BPF_F_MMAPABLE | BPF_F_INNER_MAP, perflib_seg_slots(k) slots of slot_size
 *            bytes; slot i of the class in segment k is entry i - perflib_seg_first(k)
 *     live   ARRAY, BPF_F_MMAPABLE, 8-byte words: bit i set = slot i of the segment is
 *            not FREE (claimed or live); readers visit only the slots whose bit is set.
 *            After the bitmap (perflib_seg_words), the owner summaries: for each procs
 *            entry p, perflib_seg_sum_words words (perflib_sum_word), bit g set = the
 *            process of entry p may hold slots among the segment's slots 64g..64g+63
 *            (bitmap word g). Its process sets the bit before it claims a slot there
 *            and clears it when it gives back its last slot there; a bit left set by
 *            a dead process costs a look, never a miss. The exit reaper walks the
 *            summary of the exiting process, so a provider's exit costs what it held,
 *            not what the set holds (layout version 5 walked every live slot).
 *            After the summaries, one summary head per procs entry (perflib_sum_head):
 *            bit b set = entry p's summary words [b * span, (b + 1) * span) may have
 *            bits (span = perflib_sum_head_span, 1 or 2 up to 1M slots). Set before the
 *            summary bit, cleared after the last summary word of its span is: the exit
 *            reaper skips a segment whose head is 0 and the summary words of clear head
 *            bits (layout version 6 read every summary word: 256 at 1M slots).
 *            Segment 0 has one summary word (seg0 <= 4096), so its heads use bit 0
 *            only; their bit k (1..63) is the segments bit: entry p's head in segment
 *            k of the class may be non-zero. Set before that head's first bit, cleared
 *            after it goes 0: the exit reaper reads the heads of those segments only,
 *            so its cost does not grow with the class's segments (layout version 9
 *            read two heads in each of them: 48 segments at 1M slots).
 *            After the heads, in a segment that leads an index group (perflib_idx_leader:
 *            0; 1 for 1..3; 4o for 4o..4o + 3), the group's index table
 *            (perflib_idx_word, perflib_idx_buckets, below): the keys of the group's
 *            live and claimed slots, 16 bytes per slot of the group (layout version 10
 *            kept them in a hash map per leader, index, named in an idxs<c> outer map:
 *            80 bytes per key more, a map and an RCU wait per leader, and a program,
 *            keys, to look a key up in every leader in one system call).
 *            Class 0's segment 0 (s0/live, never retired, mapped by every process that
 *            maps the set) has more words after its index table (perflib_live0_words):
 *              4 nr_procs words: the procs entries, struct perflib_proc (32 bytes each,
 *                              perflib_procs_word): the processes that provide into the
 *                              counter set (liveness, callback sockets)
 *              nr_procs words: pending[i], slot id + 1 that the process of procs entry i
 *                              is freeing right now, 0 = none
 *              8 words:        struct perflib_ctl, the control word (segments published
 *                              per class, retirements, the exit id), its last 8 words
 *            so that a provider maps two maps per set (s0/data, s0/live) and reads the
 *            control word, claims its procs entry and writes pending with loads, stores
 *            and CAS; with 64 entries and segment 0's index table, two pages (layout
 *            version 4 had the control word and pending in procs, a map of its own until
 *            version 7: a third mapping while a provider claimed its entry, and 8 KiB of
 *            kernel memory per set)
 * A (name, id) key can only be held in the class its name length selects: uniqueness is
 * a matter of one class. A slot is named across classes by its slot id: class << 28 | the
 * slot's index in its class (perflib_slot_id_make); class 0's ids are its indexes, which
 * is all a BPF program that knows nothing of classes sees.
 *
 *   A slot (slot_size bytes, a multiple of PERFLIB_SLOT_ALIGN):
 *            +0                   struct perflib_slot_hdr (state, generation, owner)
 *            +block_offset (16)   PERF_COUNTERSET_INSTANCE (32 bytes, Windows layout)
 *            +48                  nr_counters 8-byte counter slots (Windows layout)
 *            +name_offset         UTF-16LE name, the class's name_max units incl. NUL
 *                                 (Windows layout ends with the name and its padding to 8)
 *            +ascii_offset        ASCII rendering of the name for bpftool (ascii_max bytes
 *                                 incl. NUL, truncated)
 *            +ref_offset          nr_counters 8-byte dereferenced by-reference values,
 *                                 then ceil(nr_counters / 64) 64-bit words: bit i set =
 *                                 the address of the counter at position i is NULL
 *                                 (only when a counter is PERF_ATTRIB_BY_REFERENCE)
 *            +pcpu_offset (64-aligned)  the per-CPU parts (only in a set with per-CPU
 *                                 counters, layout version 12): for each possible CPU c
 *                                 (perflib_info.nr_cpus), perflib_pcpu_lines() 64-byte
 *                                 lines, line l holding the parts of per-CPU counters
 *                                 8l..8l + 7 (perflib_info_counter.pcpu - 1) of CPU c:
 *                                 perflib_pcpu_part(). Slots of such a set are a multiple
 *                                 of 64 bytes, so no two CPUs' parts share a cache line.
 *                                 A per-CPU counter's value is its 8 bytes at +48 + 8 *
 *                                 position (the base: raw writes through Offset land
 *                                 there) plus the sum of its parts, modulo its width.
 *
 * Slots never move: a process maps segment k of class c at its class's reservation +
 * perflib_seg_first(k) * slot_size, so slot i is at reservation + i * slot_size whatever
 * segment holds it. A key lives in the index table of the leader of the segment that holds
 * its slot; uniqueness across the class's leaders is checked after the insert (instance.c).
 * Offsets, never pointers. Readers bound-check every value read from these maps.
 */
#ifndef PERFLIB_LAYOUT_H
#define PERFLIB_LAYOUT_H

#ifdef __bpf__
/* vmlinux.h already defines the __u* types */
#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif
#else
#include <linux/types.h>
#include <assert.h>
#endif

#define PERFLIB_INFO_MAGIC 0x424c4650 /* "PFLB" */
#define PERFLIB_LAYOUT_VERSION 11
/*
 * the layout version of a set with per-CPU counters (PERFLIB_INFO_PER_CPU): a set without
 * keeps version 11, which readers that know no per-CPU parts still read; such a reader
 * refuses a version 12 set (-EPROTO) instead of showing its bases as the values
 */
#define PERFLIB_LAYOUT_VERSION_PER_CPU 12
#define PERFLIB_SLOT_ALIGN 16		    /* slot sizes: the header's 16-byte CAS needs it */
#define PERFLIB_BLOCK_OFFSET 16		    /* Windows block inside a slot */
#define PERFLIB_COUNTERS_OFFSET 48	    /* first counter slot inside a slot */
#define PERFLIB_ASCII_MAX 64		    /* bytes of ASCII name rendering, incl. NUL */
#define PERFLIB_NAME_MAX_DEFAULT 1025	    /* UTF-16 units incl. NUL: PERF_MAX_INSTANCE_NAME + 1 */
#define PERFLIB_CAPACITY_DEFAULT (1u << 20) /* slot limit per counter set (rounded up) */
#define PERFLIB_CAPACITY_MAX (1u << 28)	    /* largest slot limit */
#define PERFLIB_MAX_SEGS 64		    /* segments per size class */
#define PERFLIB_MAX_CLASSES 4		    /* size classes per counter set */
#define PERFLIB_CLASS_SHIFT 28		    /* slot id = class << 28 | index in the class */
#define PERFLIB_CLASS0_NAME 36		    /* class 0: names up to 35 units (+ NUL) */
#define PERFLIB_SEG0_MIN_BYTES 16384	    /* segment 0 holds at least this many bytes */
#define PERFLIB_SEG0_MAX_BYTES 32768	    /* and slot sizes keep it at most this long */
#define PERFLIB_CTL_MAGIC 0x4c544350	    /* "PCTL" */
/* provider processes per counter set: their entries fit s0/live's page beside the bitmap */
#define PERFLIB_PROCS_DEFAULT 64
#define PERFLIB_CTL_WORDS 8	     /* words of struct perflib_ctl at the end of s0/live */
#define PERFLIB_MAX_COUNTERS 4096    /* counters per counter set */
#define PERFLIB_STR_NONE 0xFFFFFFFFu /* string offset: absent */

/* info flags */
#define PERFLIB_INFO_REGISTERED 0x1 /* created by lodctr from a manifest */
#define PERFLIB_INFO_HAS_NAMES 0x2  /* names and help strings present */
#define PERFLIB_INFO_PER_CPU 0x4    /* counters kept per CPU (layout version 12) */

/* per-CPU counters (docs/ARCHITECTURE.md, "The hot path") */
#define PERFLIB_PCPU_LINE 64	   /* bytes of one CPU's line of parts */
#define PERFLIB_PCPU_PER_LINE 8	   /* parts (per-CPU counters) per line */
#define PERFLIB_PCPU_MAX_CPUS 8192 /* possible CPUs a set's parts are kept for, at most */
/* per-CPU counters are among the first 64 positions (a BPF program's geometry has a mask) */
#define PERFLIB_PCPU_MAX_POS 64

/* slot states (perflib_slot_hdr.state) */
#define PERFLIB_SLOT_FREE 0	  /* unused; may be claimed */
#define PERFLIB_SLOT_CLAIMED 1	  /* being created or deleted by owner_pid */
#define PERFLIB_SLOT_LIVE 2	  /* visible to readers */
#define PERFLIB_SLOT_STATE_MASK 3 /* low bits of seq */

/*
 * perflib_slot_hdr.owner_start of a slot owned by the kernel (a BPF program, e.g. kcounters):
 * with owner_pid 0, such a LIVE slot has no owner process; perflib_proc_alive() reports it
 * alive, so no reaper frees it. Only the loader that created it retires it.
 */
#define PERFLIB_OWNER_KERNEL 0xFFFFFFFFFFFFFFFFULL

/*
 * Owner identity across pid namespaces (docs/ARCHITECTURE.md, "Process identity"): a slot's
 * owner_pid and a procs entry's pid are the owner's pid in its own pid namespace (its
 * getpid()); owner_start and start are its "stamp": the start time in clock ticks since
 * boot (/proc/<pid>/stat field 22) in bits 0-39, and in bits 40-63 a tag of the owner's pid
 * namespace, 0 for the initial one, else 1 + (namespace inode - 0xF0000000) mod 0xFFFFFF.
 * The kernel's exit reaper computes the same stamp from the task; readers in another
 * namespace find the owner among the processes their /proc shows.
 */
#define PERFLIB_START_BITS 40
#define PERFLIB_START_MASK ((1ULL << PERFLIB_START_BITS) - 1)
#define PERFLIB_PIDNS_INIT_INO 0xEFFFFFFCu /* PROC_PID_INIT_INO */

static inline __u64 perflib_pidns_tag(__u32 pidns_ino)
{
	if (pidns_ino == PERFLIB_PIDNS_INIT_INO)
		return 0;
	return (__u64)((pidns_ino - 0xF0000000u) % 0xFFFFFFu) + 1;
}

static inline __u64 perflib_owner_stamp(__u64 start_ticks, __u32 pidns_ino)
{
	return (start_ticks & PERFLIB_START_MASK) | perflib_pidns_tag(pidns_ino)
							    << PERFLIB_START_BITS;
}

/* proc states and flags (perflib_proc) */
#define PERFLIB_PROC_FREE 0
#define PERFLIB_PROC_LIVE 1
#define PERFLIB_PROC_CALLBACK 0x1 /* has a ControlCallback */
#define PERFLIB_PROC_BYREF 0x2	  /* has by-reference counters to dereference */

/* one size class of a counter set (perflib_info.classes) */
struct perflib_info_class {
	__u32 slot_size;    /* bytes per slot, multiple of PERFLIB_SLOT_ALIGN */
	__u32 name_max;	    /* UTF-16 units per name incl. NUL */
	__u32 ascii_offset; /* slot offset of the ASCII name */
	__u32 ascii_max;    /* bytes of the ASCII name incl. NUL */
	__u32 ref_offset;   /* slot offset of dereferenced values, 0 = none */
	__u32 seg0_slots;   /* slots of segment 0; segment k has seg0_slots << (k / 4) */
	__u32 capacity;	    /* slot limit of the class (the segments may hold more slots) */
	__u32 pcpu_offset;  /* slot offset of the per-CPU parts (64-aligned), 0 = none */
};

struct perflib_info {
	__u32 magic;		  /* PERFLIB_INFO_MAGIC */
	__u32 layout_version;	  /* PERFLIB_LAYOUT_VERSION */
	__u32 info_size;	  /* bytes of the whole info value */
	__u32 flags;		  /* PERFLIB_INFO_* */
	__u8 provider_guid[16];	  /* GUID, Windows byte order */
	__u8 counterset_guid[16]; /* GUID, Windows byte order */
	__u32 instance_type;	  /* PERF_COUNTERSET_* */
	__u32 nr_counters;	  /* entries of perflib_info_counter */
	__u32 detail_level;	  /* PERF_DETAIL_* of the counter set */
	__u32 capacity;		  /* slot limit of each class */
	__u32 slot_size;	  /* class 0's (what a program that knows no classes sees) */
	__u32 name_max;		  /* UTF-16 units per name incl. NUL, the set's longest */
	__u32 name_offset;	  /* slot offset of the UTF-16 name (every class) */
	__u32 ascii_offset;	  /* class 0's */
	__u32 ref_offset;	  /* class 0's */
	__u32 nr_procs;		  /* procs entries (in s0/live) */
	__u32 strings_offset;	  /* info offset of the UTF-16 string pool */
	__u32 strings_size;	  /* bytes of the string pool */
	__u32 counterset_name;	  /* pool offset, PERFLIB_STR_NONE = absent */
	__u32 counterset_help;	  /* pool offset */
	__u32 provider_name;	  /* pool offset */
	__u32 seg0_slots;	  /* class 0's */
	__u32 nr_classes;	  /* entries of classes in use, 1..PERFLIB_MAX_CLASSES */
	__u32 nr_cpus;		  /* possible CPUs with per-CPU parts, 0 = no per-CPU counter */
	struct perflib_info_class classes[PERFLIB_MAX_CLASSES]; /* by growing name_max */
};

/* the control word of a counter set: the last PERFLIB_CTL_WORDS words of class 0's s0/live */
struct perflib_ctl {
	__u32 magic;   /* PERFLIB_CTL_MAGIC */
	__u32 exit_id; /* the set's id in the machine's exit reaper, 0 = none */
	__u32 nr_segs[PERFLIB_MAX_CLASSES]; /* segments published per class */
	__u32 epoch[PERFLIB_MAX_CLASSES];   /* segments retired per class, ever: a segment
					     * below nr_segs may be another map than the one a
					     * process opened when this changed */
	__u8 keep[PERFLIB_MAX_CLASSES];	    /* segments per class never retired (the room a
					     * BPF program's loader reserved) */
	__u32 reserved0;		    /* 0 */
	__u64 reserved[2];		    /* 0 */
};

struct perflib_info_counter {
	__u32 id;	    /* CounterId */
	__u32 type;	    /* winperf.h counter type */
	__u64 attrib;	    /* PERF_ATTRIB_* */
	__u32 detail_level; /* PERF_DETAIL_* */
	__s32 scale;	    /* default scale, -10..10 */
	__u32 base_id;	    /* base counter id or 0xFFFFFFFF */
	__u32 perf_time_id; /* time-stamp counter id or 0xFFFFFFFF */
	__u32 perf_freq_id; /* frequency counter id or 0xFFFFFFFF */
	__u32 multi_id;	    /* multi counter id or 0xFFFFFFFF */
	__u32 aggregate;    /* PERF_AGGREGATE_* */
	__u32 name;	    /* pool offset of the counter name */
	__u32 help;	    /* pool offset of the help string */
	__u32 pcpu;	    /* per-CPU counter: its index among them + 1 (by position); 0 = not */
};

/*
 * lines of per-CPU parts per CPU in a slot of a set with @nr_pcpu per-CPU counters: one
 * for each PERFLIB_PCPU_PER_LINE of them
 */
static inline __u32 perflib_pcpu_lines(__u32 nr_pcpu)
{
	return (nr_pcpu + PERFLIB_PCPU_PER_LINE - 1) / PERFLIB_PCPU_PER_LINE;
}

/*
 * the slot offset of CPU @cpu's part of per-CPU counter @idx (perflib_info_counter.pcpu - 1)
 * in a class whose parts start at @pcpu_offset, @lines lines per CPU: a CPU's lines are
 * together, so one CPU's parts of an instance are one line for up to 8 per-CPU counters
 */
static inline __u64 perflib_pcpu_part(__u32 pcpu_offset, __u32 lines, __u32 cpu, __u32 idx)
{
	return pcpu_offset +
	       ((__u64)cpu * lines + idx / PERFLIB_PCPU_PER_LINE) * PERFLIB_PCPU_LINE +
	       8 * (__u64)(idx % PERFLIB_PCPU_PER_LINE);
}

/* bytes of the per-CPU parts of one slot: a line per CPU per 8 per-CPU counters */
static inline __u64 perflib_pcpu_bytes(__u32 nr_cpus, __u32 lines)
{
	return (__u64)nr_cpus * lines * PERFLIB_PCPU_LINE;
}

#ifndef __bpf__
/*
 * perflib_pcpu_sum - the parts of per-CPU counter @idx in @slot (mapped, or a copy), summed
 * (modulo 2^64; the caller masks to the counter's width): the one sum every reader of
 * values in user space uses (the library's reader, the tools). Bounds come from a checked
 * info value (perflib_info_check: pcpu_offset + perflib_pcpu_bytes() fits the slot), never
 * from the slot.
 */
static inline __u64 perflib_pcpu_sum(const __u8 *slot, __u32 pcpu_offset, __u32 lines,
				     __u32 nr_cpus, __u32 idx)
{
	const __u8 *p = slot + perflib_pcpu_part(pcpu_offset, lines, 0, idx);
	__u64 sum = 0;
	__u32 c;

	for (c = 0; c < nr_cpus; c++, p += (__u64)lines * PERFLIB_PCPU_LINE)
		sum += __atomic_load_n((const __u64 *)p, __ATOMIC_RELAXED);
	return sum;
}
#endif

struct perflib_slot_hdr {
	__u32 seq;	   /* bits 0-1 state (PERFLIB_SLOT_*), 2-31 generation */
	__u32 owner_pid;   /* claiming process; seq and owner_pid form one CAS word */
	__u64 owner_start; /* owner stamp (start time, pid namespace, above); 0 = unknown */
};

/*
 * The key of an instance (name, id, scope), 128 bits of hashes: what an index table entry's
 * tag and buckets come from (perflib_idx_place) and what a lookup checks a candidate slot
 * against, computed again from the slot's own name, id and owner
 */
struct perflib_index_key {
	__u32 id;    /* InstanceId */
	__u32 check; /* a second, independent 32-bit hash of the name, with its length */
	__u64 hash;  /* a 64-bit hash of the name (96 bits in all) */
};

/* what a lookup of a key found (perflib_index_lookup in the library) */
struct perflib_index_val {
	__u32 slot; /* slot index in the class */
	__u32 gen;  /* the low 8 bits of the generation of the claim that inserted the entry */
};

struct perflib_proc {
	__u32 state; /* PERFLIB_PROC_* */
	__u32 gen;   /* +1 on every state change */
	__u32 pid;   /* provider process */
	__u32 flags; /* PERFLIB_PROC_CALLBACK | _BYREF */
	__u64 start; /* process stamp (start time, pid namespace, above) */
	__u64 token; /* random socket name component */
};

#define PERFLIB_PROC_WORDS 4 /* s0/live words of a struct perflib_proc */

/*
 * The slot word {seq, owner_pid} (first 8 bytes of a slot, changed only by CAS): state in
 * bits 0-1, generation in bits 2-31, the claiming pid in the upper half.
 */
static inline __u32 perflib_word_state(__u64 w)
{
	return (__u32)w & PERFLIB_SLOT_STATE_MASK;
}

#define PERFLIB_GEN_MASK 0x3FFFFFFFu /* generations count modulo 2^30 */

static inline __u32 perflib_word_gen(__u64 w)
{
	return (__u32)w >> 2;
}

/* generation @g advanced by @n, modulo 2^30 (as the word stores it) */
static inline __u32 perflib_gen_add(__u32 g, __u32 n)
{
	return (g + n) & PERFLIB_GEN_MASK;
}

/* slot ids: a slot named across the size classes of its counter set */
#define PERFLIB_SLOT_INDEX_MASK ((1u << PERFLIB_CLASS_SHIFT) - 1)

static inline __u32 perflib_slot_id_make(__u32 cls, __u32 index)
{
	return cls << PERFLIB_CLASS_SHIFT | (index & PERFLIB_SLOT_INDEX_MASK);
}

static inline __u32 perflib_slot_id_class(__u32 id)
{
	return id >> PERFLIB_CLASS_SHIFT;
}

static inline __u32 perflib_slot_id_index(__u32 id)
{
	return id & PERFLIB_SLOT_INDEX_MASK;
}

/*
 * The procs entry word {state, gen} (first 8 bytes of a struct perflib_proc, changed only by
 * CAS): state in the low half, a generation that moves on every change in the high half.
 */
static inline __u32 perflib_proc_word_state(__u64 w)
{
	return (__u32)w;
}

/* word @w moved on by one generation, with state @state */
static inline __u64 perflib_proc_word_next(__u64 w, __u32 state)
{
	return ((w & 0xFFFFFFFF00000000ULL) + (1ULL << 32)) | state;
}

/*
 * Segments grow by quarters of an octave: segments 4o .. 4o + 3 (octave o) hold
 * seg0 << o slots each, so segment k holds seg0 << (k / 4) slots and starts at slot
 * seg0 * (((4 + k % 4) << (k / 4)) - 4). A class's storage is at most 1.25x the slots in
 * use (with doubling, layout version 8 and before, it was up to 2x); 64 segments reach
 * seg0 * 262,140 slots.
 */
static inline __u64 perflib_seg_first(__u32 k, __u32 seg0)
{
	return (__u64)seg0 * ((((__u64)4 + (k & 3)) << (k >> 2)) - 4);
}

static inline __u64 perflib_seg_slots(__u32 k, __u32 seg0)
{
	return (__u64)seg0 << (k >> 2);
}

/*
 * Index groups: a key is held in the index table of its slot's segment's group leader, so
 * that a create looks a key up in one table per octave, not in four (layout version 9).
 * Segment 0 is its own leader; segment 1 leads segments 1..3; segment 4o leads octave o >= 1
 * (segments 4o..4o + 3). A leader's table has room for its group's slots
 * (perflib_idx_entries); the others have none.
 */
static inline __u32 perflib_idx_leader(__u32 k)
{
	return k >= 4 ? k & ~3u : (__u32)(k != 0);
}

/* the leader after leader @k */
static inline __u32 perflib_idx_next(__u32 k)
{
	return k >= 4 ? (k & ~3u) + 4 : k ? 4 : 1;
}

/*
 * the @n-th leader (n < PERFLIB_IDX_LEADERS): 0, 1, 4, 8, ..., 60, what perflib_idx_next()
 * steps through from 0, for loops that count leaders (a BPF program's iterator)
 */
#define PERFLIB_IDX_LEADERS 17 /* leaders of PERFLIB_MAX_SEGS segments: 0, 1, 4, ..., 60 */

static inline __u32 perflib_idx_leader_nr(__u32 n)
{
	return n < 2 ? n : 4 * (n - 1);
}

/* does segment @k lead a group, and so have an index table? */
static inline int perflib_idx_leads(__u32 k)
{
	return perflib_idx_leader(k) == k;
}

/* slots of leader @k's group, the keys its table has room for (0: it leads none) */
static inline __u64 perflib_idx_entries(__u32 k, __u32 seg0)
{
	if (!perflib_idx_leads(k))
		return 0;
	return perflib_seg_first(perflib_idx_next(k), seg0) - perflib_seg_first(k, seg0);
}

/*
 * The index (layout version 11): the keys of a group's slots are held in an open-addressed
 * table in the live map of the group's leader, after its summary heads (perflib_idx_word),
 * so that processes that map the set read it with loads and CAS, as they read the bitmap:
 * perflib_idx_buckets() buckets of PERFLIB_IDX_BUCKET 8-byte entries, 16 bytes per slot of
 * the group (a hash map element cost 80 bytes per live key, plus 16 per slot). A key may sit
 * in either of two buckets (perflib_idx_place); an entry (perflib_idx_entry) names a slot,
 * the low 8 bits of the generation of the claim that inserted it and 24 bits of the key's
 * hash: it is current while the slot holds that claim (perflib_idx_current), and a match
 * only once the slot's own name, id and scope give the key (a lookup computes it, so an
 * entry never needs to be right, only current). Stale entries (the slot was freed or
 * reaped) are cleared by whoever meets them; an owner clears its own when it deletes.
 */
#define PERFLIB_IDX_BUCKET 16 /* entries per bucket: 128 bytes, 8 slots' worth */

struct perflib_idx_place {
	__u32 b[2]; /* the two buckets the key may sit in (equal only in a one-bucket table) */
	__u32 tag;  /* 24 bits of the key's hash, independent of the buckets */
};

/* buckets of leader @k's table: 16 bytes per slot of its group; 0 if it leads none */
static inline __u64 perflib_idx_buckets(__u32 k, __u32 seg0)
{
	return (perflib_idx_entries(k, seg0) + 7) / 8;
}

static inline __u64 perflib_idx_words(__u32 k, __u32 seg0)
{
	return perflib_idx_buckets(k, seg0) * PERFLIB_IDX_BUCKET;
}

/* an entry: slot @slot of the class (+ 1: 0 is an empty entry), claimed at generation @gen */
static inline __u64 perflib_idx_entry(__u32 tag, __u32 gen, __u32 slot)
{
	return (__u64)(tag & 0xFFFFFF) << 40 | (__u64)(gen & 0xFF) << 32 | (slot + 1);
}

static inline __u32 perflib_idx_entry_tag(__u64 e)
{
	return (__u32)(e >> 40);
}

/* the low 8 bits of the generation of the claim that put the entry */
static inline __u32 perflib_idx_entry_gen(__u64 e)
{
	return (__u32)(e >> 32) & 0xFF;
}

/* the slot an entry names (0xFFFFFFFF for an empty entry) */
static inline __u32 perflib_idx_entry_slot(__u64 e)
{
	return (__u32)e - 1;
}

/*
 * does entry @e still describe the slot with word @w: claimed in the generation it was
 * inserted in, or published in the next (its owner deleting it, a reaper taking it: no)?
 */
static inline int perflib_idx_current(__u64 e, __u64 w)
{
	__u32 gen = perflib_idx_entry_gen(e), cur = perflib_word_gen(w) & 0xFF;
	__u32 state = perflib_word_state(w);

	return (state == PERFLIB_SLOT_CLAIMED && cur == gen) ||
	       (state == PERFLIB_SLOT_LIVE && cur == ((gen + 1) & 0xFF));
}

/* live-bitmap words of segment k */
static inline __u64 perflib_seg_words(__u32 k, __u32 seg0)
{
	return (perflib_seg_slots(k, seg0) + 63) / 64;
}

/* owner-summary words per procs entry in segment k's live map: a bit per bitmap word */
static inline __u64 perflib_seg_sum_words(__u32 k, __u32 seg0)
{
	return (perflib_seg_words(k, seg0) + 63) / 64;
}

/*
 * segment k's live map: word @j of procs entry @proc's owner summary (bit g of summary word
 * j stands for bitmap word 64j + g)
 */
static inline __u64 perflib_sum_word(__u32 k, __u32 seg0, __u32 proc, __u32 j)
{
	return perflib_seg_words(k, seg0) + (__u64)proc * perflib_seg_sum_words(k, seg0) + j;
}

/* summary words per bit of a summary head in segment k: at most 64 bits cover them all */
static inline __u64 perflib_sum_head_span(__u32 k, __u32 seg0)
{
	return (perflib_seg_sum_words(k, seg0) + 63) / 64;
}

/*
 * segment k's live map: procs entry @proc's summary head (bit b stands for its summary
 * words [b * span, (b + 1) * span)), after every entry's summaries
 */
static inline __u64 perflib_sum_head(__u32 k, __u32 seg0, __u32 nr_procs, __u32 proc)
{
	return perflib_seg_words(k, seg0) + (__u64)nr_procs * perflib_seg_sum_words(k, seg0) + proc;
}

/*
 * segment k's live map: its words, bitmap, owner summaries and their heads (class 0's
 * s0/live: more)
 */
static inline __u64 perflib_seg_live_words(__u32 k, __u32 seg0, __u32 nr_procs)
{
	return perflib_seg_words(k, seg0) + (__u64)nr_procs * (perflib_seg_sum_words(k, seg0) + 1);
}

/* segment k's live map: the first word of its index table (a leader's), after the heads */
static inline __u64 perflib_idx_word(__u32 k, __u32 seg0, __u32 nr_procs)
{
	return perflib_seg_live_words(k, seg0, nr_procs);
}

/* segment k's live map: all its words but class 0's s0/live's (bitmap .. index table) */
static inline __u64 perflib_seg_map_words(__u32 k, __u32 seg0, __u32 nr_procs)
{
	return perflib_idx_word(k, seg0, nr_procs) + perflib_idx_words(k, seg0);
}

/*
 * leader @k's table (k leads a group: 0, 1, 4, 8, ...): its buckets, and in *@ret_base its
 * first word in the leader's live map; perflib_idx_buckets() and perflib_idx_word() written
 * out for a leader, with fewer branches for a BPF program's verifier to walk in its loops
 * over the leaders (test_index checks that they agree)
 */
static inline __u64 perflib_idx_leader_table(__u32 k, __u32 seg0, __u32 nr_procs, __u32 *ret_base)
{
	__u64 slots = (__u64)seg0 << (k >> 2), group, words;

	/* the group: segment 0 alone, 1..3, or 4o..4o + 3 (4 segments of seg0 << o slots) */
	group = k == 0 ? seg0 : k < 4 ? 3 * (__u64)seg0 : slots * 4;
	words = (slots + 63) / 64;
	*ret_base = (__u32)(words + (__u64)nr_procs * ((words + 63) / 64 + 1));
	return (group + 7) / 8;
}

/*
 * class 0's s0/live: the first word of procs entry @proc (struct perflib_proc, its {state,
 * gen} word), after the heads
 */
static inline __u32 perflib_procs_word(__u32 seg0, __u32 nr_procs, __u32 proc)
{
	return (__u32)perflib_seg_map_words(0, seg0, nr_procs) + PERFLIB_PROC_WORDS * proc;
}

/* class 0's s0/live: the word of procs entry @proc's pending slot (after the entries) */
static inline __u32 perflib_pending_word(__u32 seg0, __u32 nr_procs, __u32 proc)
{
	return perflib_procs_word(seg0, nr_procs, nr_procs) + proc;
}

/* class 0's s0/live: its first control word (after the pending words) */
static inline __u32 perflib_ctl_word(__u32 seg0, __u32 nr_procs)
{
	return perflib_pending_word(seg0, nr_procs, nr_procs);
}

/* class 0's s0/live: its words (bitmap, summaries, heads, procs, pending, control word) */
static inline __u32 perflib_live0_words(__u32 seg0, __u32 nr_procs)
{
	return perflib_ctl_word(seg0, nr_procs) + PERFLIB_CTL_WORDS;
}

/* floor(log2(@q)) for 0 < q < 2^32, without branches (a BPF program verifies it once) */
static inline __u32 perflib_log2_32(__u64 q)
{
	__u64 t, k = 0;

	t = ((0xFFFFULL - q) >> 63) << 4; /* 16 if q > 0xFFFF */
	q >>= t;
	k |= t;
	t = ((0xFFULL - q) >> 63) << 3;
	q >>= t;
	k |= t;
	t = ((0xFULL - q) >> 63) << 2;
	q >>= t;
	k |= t;
	t = ((0x3ULL - q) >> 63) << 1;
	q >>= t;
	k |= t;
	return (__u32)(k | ((0x1ULL - q) >> 63));
}

/* floor(log2(@q)) for 0 < q, without branches */
static inline __u32 perflib_log2_64(__u64 q)
{
	__u64 t = (((q >> 32) + 0xFFFFFFFFULL) >> 32) << 5; /* 32 if q >= 2^32 */

	return (__u32)t + perflib_log2_32(q >> t);
}

/*
 * the segment of group @t - 4 of a class, a group being seg0 slots (4 <= t < 2^32):
 * floor(log2(t)) = L, octave L - 2, quarter (t >> (L - 2)) - 4
 */
static inline __u32 perflib_seg_of_group(__u64 t, __u32 log2_t)
{
	return 4 * log2_t - 12 + (__u32)(t >> (log2_t - 2));
}

/* the segment of slot @i of a class (PERFLIB_MAX_SEGS if past the last) */
static inline __u32 perflib_seg_of(__u64 i, __u32 seg0)
{
	__u64 t = seg0 ? i / seg0 + 4 : 0;
	__u32 k;

	if (!t || t >> 32)
		return PERFLIB_MAX_SEGS;
	k = perflib_seg_of_group(t, perflib_log2_32(t));
	return k < PERFLIB_MAX_SEGS ? k : PERFLIB_MAX_SEGS;
}

/* the leader of the index group of slot @i's segment (PERFLIB_MAX_SEGS if past the last) */
static inline __u32 perflib_idx_of(__u64 i, __u32 seg0)
{
	return perflib_idx_leader(perflib_seg_of(i, seg0));
}

static inline __u32 perflib_word_pid(__u64 w)
{
	return (__u32)(w >> 32);
}

static inline __u64 perflib_make_word(__u32 state, __u32 gen, __u32 pid)
{
	return (__u64)pid << 32 | (__u32)(gen << 2) | state;
}

/*
 * Index key hashing, shared by the library and BPF programs (which must compute the same
 * key to delete an index entry). One step per UTF-16 unit; the scope is 0 for machine-wide
 * uniqueness, (pid << 1 | 1) for per-process aggregate counter sets.
 */
#ifdef __bpf__
/* one copy per BPF program: three inlined made the exit reaper 12 KiB of kernel memory */
static __attribute__((noinline)) __u64 perflib_mix64(__u64 x)
#else
static inline __u64 perflib_mix64(__u64 x)
#endif
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

struct perflib_hash_state {
	__u64 h1; /* FNV-1a */
	__u64 h2; /* mixed running sum */
};

static inline void perflib_hash_init(struct perflib_hash_state *st, __u64 scope)
{
	st->h1 = 0xcbf29ce484222325ULL ^ scope;
	st->h2 = 0x84222325cbf29ce4ULL + scope;
}

static inline void perflib_hash_step(struct perflib_hash_state *st, __u16 unit)
{
	st->h1 = (st->h1 ^ unit) * 0x100000001b3ULL;
	st->h2 = perflib_mix64(st->h2 + unit + 0x9e3779b97f4a7c15ULL);
}

static inline void perflib_hash_final(const struct perflib_hash_state *st, __u32 id, __u32 name_len,
				      struct perflib_index_key *key)
{
	key->id = id;
	key->hash = perflib_mix64(st->h1);
	key->check = (__u32)(perflib_mix64(st->h2 + name_len) >> 32);
}

/* where key @key may sit in a table of @nb buckets (nb > 0) */
static inline void perflib_idx_place(const struct perflib_index_key *key, __u64 nb,
				     struct perflib_idx_place *p)
{
	__u64 h = perflib_mix64(key->hash ^ ((__u64)key->id << 32 | key->check));

	p->b[0] = (__u32)((__u32)h % nb);
	p->b[1] = (__u32)((__u32)(h >> 32) % nb);
	if (p->b[1] == p->b[0])
		p->b[1] = (__u32)((p->b[0] + 1) % nb);
	p->tag = (key->check ^ key->id * 0x9E3779B1u) >> 8;
}

/*
 * The uniqueness scope and shape of an index key by instance type (perflib_info.instance_type,
 * the Windows PERF_COUNTERSET_* value: bit 0x2 multiple, 0x4 aggregate, 0x8 history, 0x10
 * instance). Single-instance sets use one singleton key per scope; the per-process aggregate
 * types (SINGLE_AGGREGATE 0x4, SINGLE_AGGREGATE_HISTORY 0xC, INSTANCE_AGGREGATE 0x16) scope
 * names by the owner's pid, everything else is machine-wide (scope 0).
 */
static inline __u64 perflib_key_scope(__u32 instance_type, __u32 pid)
{
	if (instance_type == 0x4 || instance_type == 0xC || instance_type == 0x16)
		return (__u64)pid << 1 | 1;
	return 0;
}

/*
 * the pid that scopes the key of a slot whose owner stamp is @owner_start and word @w (its
 * instance's key is computed again from the slot): the owner's, 0 for a kernel-owned one
 */
static inline __u32 perflib_slot_key_pid(__u64 owner_start, __u64 w)
{
	return owner_start == PERFLIB_OWNER_KERNEL ? 0 : perflib_word_pid(w);
}

static inline int perflib_key_singleton(__u32 instance_type)
{
	return !(instance_type & 0x2);
}

/* the key of a single-instance set's one instance in @scope */
static inline void perflib_singleton_key(__u64 scope, struct perflib_index_key *key)
{
	key->id = 0xFFFFFFFF;
	key->check = 0xFFFFFFFF;
	key->hash = scope;
}

/*
 * The exit reaper of a root (docs/ARCHITECTURE.md, "Crash cleanup"): one program on
 * sched_process_exit for every counter set under a root, in <root>/exit-reaper/:
 *   provs  HASH   struct perflib_exit_key -> struct perflib_exit_val: the provider
 *                 processes and the counter sets (exit ids) each provides into
 *   progs  PROG_ARRAY  exit id -> the counter set's reaper program (its <set>/reaper pin)
 *   ids    HASH   exit id -> counter-set GUID (16 bytes): which ids are taken
 *   ctx    PERCPU_ARRAY, 1 entry: struct perflib_exit_ctx, handed down the tail calls
 *   walk   PERCPU_ARRAY, 1 entry: the reaper programs' walk state (exit.h), shared
 *   link   the dispatcher's link (attached while pinned)
 * A counter set's exit id is in its control entry (perflib_ctl.exit_id, 0 = none yet).
 */
#define PERFLIB_EXIT_DIR "exit-reaper"
#define PERFLIB_EXIT_IDS 4096	 /* counter sets with a reaper program per root */
#define PERFLIB_EXIT_SETS 14	 /* counter sets one process's entry names (more: lazy reaping) */
#define PERFLIB_EXIT_PROVS 65536 /* provider processes with an entry at once */

struct perflib_exit_key {
	__u32 pid;   /* the provider's pid in its own pid namespace (getpid()) */
	__u32 zero;  /* 0 */
	__u64 stamp; /* its owner stamp (start time, pid namespace tag, above) */
};

struct perflib_exit_val {
	__u32 nr;		      /* entries of ids */
	__u32 overflow;		      /* more sets than ids holds (those are reaped lazily) */
	__u32 ids[PERFLIB_EXIT_SETS]; /* exit ids of the counter sets it provides into */
};

struct perflib_exit_ctx {
	__u32 tgid;  /* exiting process, in its own pid namespace */
	__u32 pos;   /* next entry of v.ids to tail-call */
	__u64 stamp; /* its stamp */
	struct perflib_exit_val v;
};

/*
 * The slot geometry of one size class of a counter set, as a BPF program is given it in its
 * read-only data (perflib_bpf.h: perflib_geo, PERFLIB_GEOMETRY) and its loader reads it from
 * the info map (perflib_bpf_loader.h: perflib_bpf_counterset_open,
 * perflib_bpf_geometry_from_class).
 */
struct perflib_bpf_geometry {
	__u32 slot_size;     /* bytes per slot (perflib_info_class.slot_size) */
	__u32 capacity;	     /* slot limit of all segments together */
	__u32 nr_counters;   /* counter positions per slot */
	__u32 name_max;	     /* UTF-16 units per name incl. NUL */
	__u32 name_offset;   /* slot offset of the UTF-16 name */
	__u32 instance_type; /* PERF_COUNTERSET_* of the counter set */
	__u32 nr_procs;	     /* procs map entries */
	__u32 seg0_slots;    /* slots of segment 0 (perflib_info_class.seg0_slots) */
	/* per-CPU counters (PERFLIB_1.5; a loader built before gives zeros: none) */
	__u32 pcpu_offset; /* slot offset of the class's per-CPU parts, 0 = none */
	__u32 nr_cpus;	   /* CPUs with parts (perflib_info.nr_cpus), 0 = none */
	__u32 pcpu_lines;  /* lines of parts per CPU (perflib_pcpu_lines) */
	__u32 reserved;	   /* 0 */
	__u64 pcpu_mask;   /* bit p set: the counter at position p is per CPU */
};

/* the first 32 bytes: the geometry of PERFLIB_1.4, what loaders built before 1.5 hold */
#define PERFLIB_BPF_GEOMETRY_1_4_SIZE 32

/* (C11 and C++11 have static_assert; a C99 includer skips these, the library checks them) */
#if !defined(__bpf__) && (defined(__cplusplus) || __STDC_VERSION__ >= 201112L)
static_assert(sizeof(struct perflib_info) == 248, "info header size");
static_assert(sizeof(struct perflib_info_class) == 32, "info class size");
static_assert(sizeof(struct perflib_info_counter) == 56, "info counter size");
static_assert(sizeof(struct perflib_slot_hdr) == PERFLIB_BLOCK_OFFSET, "slot header size");
static_assert(sizeof(struct perflib_index_key) == 16, "index key size");
static_assert(sizeof(struct perflib_proc) == 8 * PERFLIB_PROC_WORDS, "proc entry size");
static_assert(sizeof(struct perflib_ctl) == 8 * PERFLIB_CTL_WORDS, "ctl is 8 live words");
static_assert(PERFLIB_CAPACITY_MAX <= PERFLIB_SLOT_INDEX_MASK + 1, "slot ids hold the capacity");
static_assert(sizeof(struct perflib_exit_val) == 64, "exit value size");
static_assert(sizeof(struct perflib_bpf_geometry) == 56, "geometry size");
#endif

#endif /* PERFLIB_LAYOUT_H */

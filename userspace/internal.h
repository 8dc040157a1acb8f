/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the library's files share: the opened counter set (maps and their
 * mappings), the provider state, error and print helpers.
 */
#ifndef PERFLIB_INTERNAL_H
#define PERFLIB_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <bpf/libbpf.h>

#include "perflib.h"
#include "perflib-linux.h"
#include "layout.h"

#define PERFLIB_HIDDEN __attribute__((visibility("hidden")))

struct perflib_ctrset;
struct perflib_provider;

/* ---- printing (print.c) ---------------------------------------------------------------- */
void perflib_print(enum perflib_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define pr_warn(fmt, ...) perflib_print(PERFLIB_WARN, "perflib: " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) perflib_print(PERFLIB_INFO, "perflib: " fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) perflib_print(PERFLIB_DEBUG, "perflib: " fmt, ##__VA_ARGS__)

/* ---- errors (errors.c) ----------------------------------------------------------------- */
/* perflib_win32_error (perflib-linux.h) is the only errno -> Win32 table */
/*
 * perflib_buffer_result - the Windows buffer protocol: stores @needed in *@ret_actual and
 * returns ERROR_SUCCESS when @have >= @needed, else ERROR_NOT_ENOUGH_MEMORY.
 */
ULONG perflib_buffer_result(DWORD needed, DWORD have, DWORD *ret_actual);

/* ---- strings and GUIDs (strings.c) ----------------------------------------------------- */
size_t perflib_wcslen(const WCHAR *s);
size_t perflib_wcsnlen(const WCHAR *s, size_t max);
int perflib_wcscmp(const WCHAR *a, const WCHAR *b);
/* perflib_utf8_to_utf16 / perflib_utf16_to_utf8: perflib-linux.h */
bool perflib_guid_equal(const GUID *a, const GUID *b);
/* perflib_wildcard_match - '*' any run, '?' one unit, else exact (case-sensitive) */
bool perflib_wildcard_match(const WCHAR *pattern, const WCHAR *s, size_t s_len);

/* ---- processes (proc.c) ---------------------------------------------------------------- */
/* start time of @pid in clock ticks since boot; -ESRCH if the process does not exist */
int perflib_proc_start_time(pid_t pid, uint64_t *ret_start);
/*
 * 1 if owner (pid, start) is running, 0 if gone. @pid is the owner's pid in its own pid
 * namespace and @start its stamp (start time and namespace tag, layout.h): owners of other
 * namespaces are found through /proc, and one this process cannot see (a sibling
 * container) counts as running. A zombie leader with live threads is running. Always 1 for
 * start == PERFLIB_OWNER_KERNEL (a slot owned by a BPF program, layout.h).
 */
int perflib_proc_alive(uint32_t pid, uint64_t start);
/*
 * perflib_proc_local_pid - the pid of running owner (pid, start) as this process's /proc
 * numbers it (what SO_PEERCRED reports here): 0, -ESRCH when gone, -EHOSTUNREACH when
 * this process cannot see the owner's namespace
 */
int perflib_proc_local_pid(uint32_t pid, uint64_t start, pid_t *ret_local);
/*
 * perflib_proc_pidfd - a pidfd of running owner (pid, start), proved to be that process
 * after it was opened; -1 when there is none. *ret_alive: the perflib_proc_alive verdict.
 */
int perflib_proc_pidfd(uint32_t pid, uint64_t start, int *ret_alive);
/* CLOCK_MONOTONIC in milliseconds: deadlines of waits on providers and consumers */
uint64_t perflib_now_ms(void);
/* this process: pid in its own namespace and stamp (layout.h), refreshed after fork() */
void perflib_self(uint32_t *ret_pid, uint64_t *ret_start);

/* ---- store: pin root, info value, maps, mappings (config.c info.c btf.c store.c segment.c) -- */
/* one segment of a counter set (layout.h): its maps, and its live bitmap when mapped */
/*
 * perflib_vspace - the address range of a set's slots in this process (vspace.c): a part of
 * perflib's region of the address space (nothing mapped there but the segments), or, when
 * that is full or disabled, a PROT_NONE reservation of its own (@reserved).
 */
struct perflib_vspace {
	void *base;
	size_t len;
	bool reserved;
};

/* a range of @len bytes; @dontfork: a reservation is not inherited either. 0 or -errno */
int perflib_vspace_get(size_t len, bool dontfork, struct perflib_vspace *ret);
/* give the range back (its segments unmapped first) */
void perflib_vspace_put(struct perflib_vspace *v);
/*
 * map @len bytes of map @fd, from its byte @foff on, at @off of the range: never over another
 * mapping, or (@over_blank) over the zero pages perflib_map_blank() left there; NULL+errno
 */
void *perflib_vspace_map(const struct perflib_vspace *v, size_t off, size_t len, bool writable,
			 bool over_blank, int fd, size_t foff);
void perflib_vspace_unmap(const struct perflib_vspace *v, size_t off, size_t len);
/* a zeroed per-slot table of a provider (one process-wide mapping holds them all); NULL */
void *perflib_table_alloc(size_t size);
void perflib_table_free(void *p, size_t size);

/* words of segment @k's live map of class @cls: class 0's segment 0 holds more (layout.h) */
static inline uint32_t perflib_live_words(const struct perflib_info *info, uint32_t cls, uint32_t k)
{
	uint32_t seg0 = info->classes[cls].seg0_slots;

	return cls || k ? (uint32_t)perflib_seg_map_words(k, seg0, info->nr_procs)
			: perflib_live0_words(seg0, info->nr_procs);
}

struct perflib_seg {
	int data_fd, live_fd;
	uint32_t data_id;  /* the kernel's id of the data map opened (retired and grown again:
			   * another id) */
	uint64_t *live;	   /* mapping of the live map (bitmap, summaries, heads, a leader's index
			   * table), NULL for an unmapped reader; zero pages in its place once
			   * the segment is retired (the address stays) */
	uint64_t *chunks;  /* a provider's: which PERFLIB_CHUNK_BYTES chunks of the segment's
			   * slots are mapped (perflib_slot_map maps them when first needed);
			   * NULL when the segment is mapped whole */
	uint32_t live_len; /* bytes of the bitmap (at most 2^25: 2^28 slots) */
	uint32_t live_map; /* bytes mapped: class 0's segment 0 holds more after its bitmap */
	uint32_t nr_chunks;
	bool data_mapped; /* the segment's slots are mapped whole in the class's range (a
			   * reader's; a provider's chunks say what it mapped) */
	bool blank;	  /* retired: zero pages where its slots and live map were mapped;
			   * opened again over them */
};

/*
 * A segment's two maps and the outer map that publishes each to BPF programs, in this
 * order everywhere (pins s<k>/data, live and segs, lives: layout.h)
 */
enum { PERFLIB_SEG_DATA, PERFLIB_SEG_LIVE, PERFLIB_SEG_NR };
extern const char *const perflib_seg_pins[PERFLIB_SEG_NR];
extern const char *const perflib_outer_pins[PERFLIB_SEG_NR];

#define PERFLIB_SEG_GROUP 8 /* segment entries allocated together (perflib_class) */
_Static_assert(PERFLIB_MAX_SEGS % PERFLIB_SEG_GROUP == 0, "whole groups of segments");

/* one size class of an opened counter set (layout.h): its reservation and segments */
struct perflib_class {
	const struct perflib_info_class *geo; /* in the map's info */
	uint8_t *data;			      /* the reservation: slot i at data + i * slot_size
					       * in every mapped segment, or NULL for a reader
					       * without write permission (read-only fds cannot
					       * be mmapped) */
	size_t data_len;	      /* slots of all segments * slot_size (address space) */
	uint32_t slot_size;	      /* geo->slot_size */
	uint32_t seg0;		      /* geo->seg0_slots */
	uint32_t max_segs;	      /* segments of the class's full capacity */
	_Atomic uint32_t nr_segs;     /* segments opened (and mapped); lower when the top
				       * segments are retired (perflib_store_shrink) */
	uint32_t epoch;		      /* ctl.epoch[class] when the segments were last checked */
	int outer_fd[PERFLIB_SEG_NR]; /* segs, lives (writers only), else -1 */
	/*
	 * The class's segments, PERFLIB_SEG_GROUP entries per allocation, made when the
	 * group's first segment is opened (perflib_seg_open, seg_lock held) and kept until
	 * the set is closed: a set that never grew keeps one group for each class it used,
	 * where a table sized by the capacity (52 entries per class for 1M instances) took
	 * 10 KB of heap per set, in every process that opens it, and fork() copies every
	 * page of heap a process touched
	 */
	struct perflib_seg *seg_groups[PERFLIB_MAX_SEGS / PERFLIB_SEG_GROUP];
};

struct perflib_store {
	GUID guid;		  /* counter set */
	bool writable;		  /* opened read-write */
	bool mapped;		  /* slots mapped (perflib_class.data), else read by lookups */
	struct perflib_vspace vs; /* the range of every class's slots, class 0 first */
	int info_fd;
	int proc_index;		   /* this process's procs entry (a provider's map), -1 = none */
	struct perflib_info *info; /* validated private copy of the info value */
	const struct perflib_info_counter *counters; /* inside info */
	size_t info_size;			     /* bytes of info */
	struct perflib_ctl *ctl;		     /* the control word in class 0's s0/live
						      * mapping, NULL when unmapped */
	uint64_t *pending;			     /* its pending words (nr_procs), too */
	struct perflib_proc *procs;		     /* the procs entries (nr_procs), in s0/live
						      * too; NULL when unmapped (lookups
						      * instead) */
	uint32_t nr_classes;			     /* info->nr_classes */
	pthread_mutex_t seg_lock;		     /* serialises opening segments */
	struct perflib_class cls[PERFLIB_MAX_CLASSES];
};

/* segment @k of class @c, or NULL when no segment of its group was ever opened */
static inline struct perflib_seg *perflib_seg_find(const struct perflib_class *c, uint32_t k)
{
	struct perflib_seg *g;

	if (k >= PERFLIB_MAX_SEGS)
		return NULL;
	g = __atomic_load_n(&c->seg_groups[k / PERFLIB_SEG_GROUP], __ATOMIC_ACQUIRE);
	return g ? g + k % PERFLIB_SEG_GROUP : NULL;
}
/* segment @k of class @c, opened before (below nr_segs, or being opened) */
static inline struct perflib_seg *perflib_seg_at(const struct perflib_class *c, uint32_t k)
{
	return __atomic_load_n(&c->seg_groups[k / PERFLIB_SEG_GROUP], __ATOMIC_ACQUIRE) +
	       k % PERFLIB_SEG_GROUP;
}

const char *perflib_root_path(void);
/* "<root>/<guid>" into @buf */
int perflib_store_dir(const GUID *guid, char *buf, size_t size);
/*
 * perflib_root_dir - "<@root>/<guid>" into @buf: @root NULL is the root in use
 * (perflib_root_path: perflib_set_pin_root, else $PERFLIB_ROOT, else the default); any
 * other must be what perflib_set_pin_root() takes (-EINVAL), its trailing slashes dropped.
 * -ENAMETOOLONG when @buf is too small.
 */
int perflib_root_dir(const char *root, const GUID *guid, char *buf, size_t size);
/*
 * perflib_store_pin_stat - stat(2) of the pin that stands for the counter set in directory
 * @dir as a whole, its info: every pin of a set has the same owner, group and mode (new
 * segments copy them, the callback service judges readers by them), and a registration
 * made anew pins a new one (a set's identity). 0 or -errno
 */
struct stat;
int perflib_store_pin_stat(const char *dir, struct stat *st);
/*
 * perflib_store_open - open a pinned counter set. Providers (@writable) map it read-write;
 * readers map it PROT_READ, or, with read permission only, get it unmapped (data and
 * procs NULL: read them with lookups of s0/live). -ENOENT not registered, -EACCES no
 * permission, -EBADMSG corrupt info, -ENODEV bpffs not mounted at the root.
 */
int perflib_store_open(const GUID *guid, bool writable, struct perflib_store **ret_map);
/*
 * perflib_store_create - create and pin the maps for @info (a complete info value of
 * @info_size bytes) under the root with @opts; if another process pinned it first, open
 * that one instead and return 1 (caller compares registrations). 0 when created.
 */
int perflib_info_build(const struct perflib_counterset_reg *reg, unsigned int flags,
		       const struct perflib_pin_opts *opts, struct perflib_info **ret_info,
		       size_t *ret_size);
int perflib_store_create(const struct perflib_info *info, size_t info_size,
			 const struct perflib_pin_opts *opts, struct perflib_store **ret_map);
void perflib_store_close(struct perflib_store *map);
/*
 * perflib_store_trim - close the fds a mapped set no longer needs (info, the outer maps):
 * every fd is copied by each fork() (about 60 ns per fd and fork, with the exit). Call it
 * after the loaders that take the set's fds (the reaper).
 */
void perflib_store_trim(struct perflib_store *map);
/*
 * perflib_store_ctl_read - the control word now: from s0/live's mapping (fields read one by
 * one, nr_segs and epoch with acquire), or with one batch lookup (an unmapped reader).
 * 0 or -errno
 */
int perflib_store_ctl_read(const struct perflib_store *map, struct perflib_ctl *ret);
/* outer map @j of class @cls (writers), reopened from its pin after a trim; -errno */
int perflib_store_outer_fd(struct perflib_store *map, uint32_t cls, int j);
int perflib_store_remove(const GUID *guid);
/*
 * perflib_info_check - validate an info value read from a map: magic, version, sizes,
 * every offset and count bounded. 0 or -EBADMSG.
 */
int perflib_info_check(const void *buf, size_t size);
/* string at pool offset @off of @info, or NULL; @ret_units gets the length without NUL */
const WCHAR *perflib_info_string(const struct perflib_info *info, uint32_t off, size_t *ret_units);
/*
 * A provider maps a segment's slots by chunks of this many bytes, those that hold its slots
 * or that it reads (perflib_slot_map): the kernel fills an array map's page tables when it
 * is mapped and empties them at exit, so mapping all of a set of 1M instances costs every
 * provider 224 MB of mappings (57,000 page-table entries) whatever it holds
 */
#define PERFLIB_CHUNK_BYTES (2u << 20)
/*
 * perflib_slot_map - slot @id of a mapped counter set, its chunk mapped first if it is not
 * yet (a provider's: the others are mapped whole); NULL+errno when it cannot be
 */
uint8_t *perflib_slot_map(struct perflib_store *map, uint32_t id);
/* slot @id (class << 28 | index) of a mapped counter set (no bounds check: callers check
 * the index < perflib_store_slots of its class); a provider's: of a chunk it mapped (its
 * own slots, or perflib_slot_map before) */
static inline uint8_t *perflib_slot(const struct perflib_store *map, uint32_t id)
{
	const struct perflib_class *c = &map->cls[perflib_slot_id_class(id)];

	return c->data + (size_t)perflib_slot_id_index(id) * c->slot_size;
}
/* segments of class @cls opened by this process, and the slots they hold */
static inline uint32_t perflib_store_nr_segs(const struct perflib_store *map, uint32_t cls)
{
	return atomic_load_explicit(&((struct perflib_store *)map)->cls[cls].nr_segs,
				    memory_order_acquire);
}
static inline uint32_t perflib_store_slots(const struct perflib_store *map, uint32_t cls)
{
	return (uint32_t)perflib_seg_first(perflib_store_nr_segs(map, cls), map->cls[cls].seg0);
}
/* class @cls of @map if it has one, else 0 (BPF loaders fill every class's maps) */
static inline uint32_t perflib_class_or0(const struct perflib_store *map, uint32_t cls)
{
	return cls < map->nr_classes ? cls : 0;
}
/* the segment of slot @id in its class */
static inline uint32_t perflib_slot_seg(const struct perflib_store *map, uint32_t id)
{
	return perflib_seg_of(perflib_slot_id_index(id), map->cls[perflib_slot_id_class(id)].seg0);
}
/* the leader of the index group of slot @id's segment: its index's (layout.h) */
static inline uint32_t perflib_slot_leader(const struct perflib_store *map, uint32_t id)
{
	return perflib_idx_leader(perflib_slot_seg(map, id));
}
/* the live-bitmap word of slot @id (of a mapped segment) and, in *ret_bit, its bit */
static inline uint64_t *perflib_live_word(const struct perflib_store *map, uint32_t id,
					  uint64_t *ret_bit)
{
	const struct perflib_class *c = &map->cls[perflib_slot_id_class(id)];
	uint32_t i = perflib_slot_id_index(id), k = perflib_seg_of(i, c->seg0);
	uint64_t off = i - perflib_seg_first(k, c->seg0);

	*ret_bit = 1ULL << (off % 64);
	return &perflib_seg_at(c, k)->live[off / 64];
}
/*
 * perflib_store_refresh - open (and map) the segments other processes published since the
 * last call; cheap when there are none (one read of ctl). 0 or -errno.
 */
int perflib_store_refresh(struct perflib_store *map);
/*
 * perflib_store_shrink - give back the empty segments at the top of class @cls (never segment
 * 0, nor those ctl.keep holds): when the top segment holds no claimed or live slot and the
 * segments below it are at most 3/4 full, it is taken out of ctl.nr_segs and the outer
 * maps, checked empty again (a claimer in flight puts it back) and unpinned; its kernel
 * memory goes when every process has dropped it (perflib_store_refresh, in each). Writers
 * only. The segments retired, or -errno.
 */
int perflib_store_shrink(struct perflib_store *map, uint32_t cls);
/*
 * perflib_store_lock - take the set's structure lock (an flock on its directory, which the
 * kernel drops with a holder that dies): while it is held no process grows or retires a
 * segment of the set. Its fd, or -errno. Not recursive: a process holding it calls the
 * _held functions below, never the plain ones that take it.
 */
int perflib_store_lock(const struct perflib_store *map);
void perflib_store_unlock(int fd);
/* perflib_store_refresh with the set's lock held (one pass settles) */
int perflib_store_refresh_held(struct perflib_store *map);
/*
 * perflib_store_grow_held - with the set's lock held, one more segment for class @cls from
 * the control word's count (a segment a retirer killed midway left unpublished is published
 * again, else a new one made), and the view brought to it. -ENOSPC at the class's last
 * segment or out of kernel memory.
 */
int perflib_store_grow_held(struct perflib_store *map, uint32_t cls);
/*
 * perflib_store_reserve - grow class @cls to at least @slots slots and keep its segments
 * from retirement (ctl.keep), under the set's lock: BPF programs create instances there.
 */
int perflib_store_reserve(struct perflib_store *map, uint32_t cls, uint64_t slots);
/* may class @cls of @map shrink now? (cheap: after a delete emptied a live word) */
bool perflib_store_shrinkable(struct perflib_store *map, uint32_t cls);
/* the kernel's id of map @fd, 0 if unknown */
uint32_t perflib_map_id(int fd);
/*
 * perflib_seg_blank - zero pages where retired segment @k of class @cls was mapped (a reader
 * walking them meanwhile sees no live slot, never a fault); seg_lock held
 */
void perflib_seg_blank(struct perflib_store *map, uint32_t cls, uint32_t k);
/* the directory of segment @k of class @cls: "<set dir>/[c<c>]s<k>" */
int perflib_seg_path(const struct perflib_store *map, uint32_t cls, uint32_t k, char *buf,
		     size_t size);
/* ctl.nr_segs[@cls] now, bounded by the class's segments */
int perflib_store_ctl_nr(const struct perflib_store *map, uint32_t cls, uint32_t *ret_nr);
/* index.c: the key of (@name, @id) of an instance of @info created by process @pid */
void perflib_slot_key(const struct perflib_info *info, const WCHAR *name, size_t len, uint32_t id,
		      uint32_t pid, struct perflib_index_key *key);
/*
 * perflib_slot_index - index claimed slot @id (word @w) of @set under @key: -EEXIST when a
 * live instance holds it (for a single-instance set, any), -EBUSY when another creator of it
 * did not decide in time, -ENOSPC when both of the key's buckets are full of current entries
 */
int perflib_slot_index(struct perflib_ctrset *set, uint32_t id, uint64_t w,
		       const struct perflib_index_key *key);
/* remove the index entries of the instance slot @id (word @w) holds */
void perflib_slot_unindex(struct perflib_store *map, uint32_t id, uint64_t w);
/* give claimed slot @i (word @w) back: zeroed, hidden from readers, then FREE */
void perflib_slot_release(struct perflib_store *map, uint32_t i, uint64_t w);
/* open and map the published segment @k of class @cls (seg_lock held) */
int perflib_seg_open(struct perflib_store *map, uint32_t cls, uint32_t k);
void perflib_seg_close(struct perflib_store *map, uint32_t cls, uint32_t k);
/* the pin names of class @cls: its outer maps ("segs", "segs1", ...), its segment k's dir */
void perflib_outer_pin(uint32_t cls, int j, char *buf, size_t size);
void perflib_seg_dirname(uint32_t cls, uint32_t k, char *buf, size_t size);
/* the maps of one segment being created, by PERFLIB_SEG_* */
struct perflib_seg_maps {
	int fd[PERFLIB_SEG_NR];
};
int perflib_seg_create(const struct perflib_info *info, uint32_t cls, uint32_t k,
		       struct perflib_seg_maps *ret);
int perflib_seg_pin(const struct perflib_seg_maps *m, const char *dir,
		    const struct perflib_pin_opts *opts);
void perflib_seg_maps_close(struct perflib_seg_maps *m);
/*
 * perflib_ctl_read - the control word of a counter set from its s0/live map @live_fd (its
 * last words, layout.h), for a set not opened. 0, or -errno (-EBADMSG: not a live map of
 * this layout, or no control word's magic there)
 */
int perflib_ctl_read(int live_fd, struct perflib_ctl *ret);
/* store helpers shared by store.c and segment.c */
int perflib_map_check(int fd, __u32 type, __u32 key_size, __u32 value_size, __u32 entries,
		      __u32 flags);
void *perflib_map_shared(void *addr, size_t len, bool writable, bool replace, int fd);
/* the same, of the map's bytes from @off (a multiple of the page size) on */
void *perflib_map_shared_at(void *addr, size_t len, bool writable, bool replace, int fd,
			    size_t off);
/*
 * copy entries [@first, @first + @n) of array map @fd (@value_size bytes each) into @buf: one
 * batch lookup, one lookup each where batches are refused. 0 or -errno
 */
int perflib_array_copy(int fd, uint32_t first, uint32_t n, uint32_t value_size, uint8_t *buf);
/*
 * put zero pages (no memory until written) in place of the shared mapping at @addr, in one
 * step: a thread reading it meanwhile sees the old bytes or zeroes, never a fault.
 * @writable: as perflib_map_shared's (not inherited by fork). 0 or -errno
 */
int perflib_map_blank(void *addr, size_t len, bool writable);
int perflib_pin_open(const char *dir, const char *name, bool rdonly);
int perflib_pin_one(int fd, const char *dir, const char *name, const struct perflib_pin_opts *opts);
void perflib_remove_dir(const char *dir);
/* btf.c: the BTF of a segment's slots (built only, or loaded), and of an info value of @size bytes */
struct btf;
int perflib_data_btf_build(const struct perflib_info *info, uint32_t cls, struct btf **ret_btf,
			   int *ret_key, int *ret_value);
int perflib_data_btf(const struct perflib_info *info, uint32_t cls, int *ret_fd, int *ret_key,
		     int *ret_value);
int perflib_info_btf(size_t size, int *ret_fd, int *ret_key, int *ret_value);
/* segments of the full capacity of class @cls of @info */
uint32_t perflib_info_segs(const struct perflib_info *info, uint32_t cls);
/* the class of @info that holds names of @units units (without the NUL) */
uint32_t perflib_info_class_of(const struct perflib_info *info, size_t units);
/* live bit of slot @id: set when claimed, cleared before the slot is freed */
void perflib_live_set(struct perflib_store *map, uint32_t id, bool on);
/*
 * perflib_owner_mark - the owner summary of this process's procs entry (layout.h), for
 * slot @id: set its head bit and its bit before a claim there (@on), clear the bit once the
 * process holds no slot of its bitmap word (and the head bit once its span of summary words
 * is clear). Nothing without a procs entry (the exit reaper then walks every slot). Called
 * with the provider's lock held: only this process writes its entry's words.
 */
void perflib_owner_mark(struct perflib_store *map, uint32_t id, bool on);
/* perflib_owner_clear_all - clear entry @proc's owner summaries and heads (segments mapped) */
void perflib_owner_clear_all(struct perflib_store *map, int proc);
/*
 * leader @k's index table in class @cls (layout.h, perflib_idx_word): its first word in the
 * leader's live mapping, and in *ret_nb its buckets; NULL if the segment is not mapped or
 * leads no group
 */
static inline uint64_t *perflib_idx_table(const struct perflib_store *map, uint32_t cls, uint32_t k,
					  uint64_t *ret_nb)
{
	const struct perflib_class *c = &map->cls[cls];
	const struct perflib_seg *s = perflib_seg_find(c, k);

	*ret_nb = perflib_idx_buckets(k, c->seg0);
	if (!*ret_nb || !s || !s->live || s->blank)
		return NULL;
	return s->live + perflib_idx_word(k, c->seg0, map->info->nr_procs);
}
/* pin access defaults (perflib_set_pin_access + environment) */
void perflib_pin_defaults(struct perflib_pin_opts *opts);
/* opts.c: @user (NULL = defaults) read by its sz into *ret; -EINVAL for a bad sz */
int perflib_pin_opts_read(const struct perflib_pin_opts *user, struct perflib_pin_opts *ret);
/* registry.c and btf.c: the API's registration and layout, with options already read */
int perflib_registry_register(const struct perflib_counterset_reg *reg,
			      const struct perflib_pin_opts *opts);
int perflib_layout_compute(const struct perflib_counterset_reg *reg,
			   const struct perflib_pin_opts *opts, struct perflib_layout *ret_layout);
int perflib_classes_compute(const struct perflib_counterset_reg *reg,
			    const struct perflib_pin_opts *opts, struct perflib_class_layout *ret,
			    unsigned int n);
/* list counter-set GUIDs under the root; *ret_guids malloc'd (caller frees) */
int perflib_store_list(GUID **ret_guids, size_t *ret_nr);

/*
 * Slot protocol. The first 8 bytes of a slot, {seq, owner_pid}, form one word changed only
 * by CAS; the generation in seq grows on every change, and the claiming pid is part of the
 * word so that a slot is never seen claimed without its owner. A reader snapshots the word
 * (acquire), copies, re-reads it (acquire fence) and keeps the copy only when the word is
 * unchanged and LIVE.
 */
static inline uint64_t perflib_slot_word(const uint8_t *slot)
{
	return __atomic_load_n((const uint64_t *)slot, __ATOMIC_ACQUIRE);
}
/*
 * ---- slot and procs-entry words (slot.c): every state change, one function each ----------
 * perflib_word_state/_gen/_pid, perflib_make_word, perflib_proc_word_*: layout.h, shared
 * with BPF. Each returns true (or an entry) when the step was made, false when the word was
 * not what the step starts from or changed under it; *ret_word gets the new word.
 */
/* CAS of the word alone; and of word and owner stamp at once (16 bytes where the CPU can) */
bool perflib_slot_cas(uint8_t *slot, uint64_t old, uint64_t new);
bool perflib_slot_take(uint8_t *slot, uint64_t old, uint64_t new, uint64_t stamp);
/* FREE(g) -> CLAIMED(g+1, @pid), stamp @stamp: a claim */
bool perflib_slot_claim(uint8_t *slot, uint64_t w, uint32_t pid, uint64_t stamp,
			uint64_t *ret_word);
/* CLAIMED(g, pid) -> LIVE(g+1, pid): name and block written, readers may see it */
bool perflib_slot_publish(uint8_t *slot, uint64_t w);
/* LIVE(g, @pid) -> CLAIMED(g+1, @pid): its owner deleting it, hidden from readers first */
bool perflib_slot_hide(uint8_t *slot, uint64_t w, uint32_t pid, uint64_t *ret_word);
/* CLAIMED(g, holder) -> FREE(g+1, 0), stamp 0: given back (zeroed, unindexed before) */
bool perflib_slot_free(uint8_t *slot, uint64_t w);
/* CLAIMED/LIVE(g, dead owner) -> CLAIMED(g+1, @self), stamp @self_stamp: a reaper's take */
bool perflib_slot_take_dead(uint8_t *slot, uint64_t w, uint32_t self, uint64_t self_stamp,
			    uint64_t *ret_word);
/* LIVE(g, pid) -> LIVE(g, 0) with stamp PERFLIB_OWNER_KERNEL; and back to (@pid, @stamp) */
bool perflib_slot_to_kernel(uint8_t *slot, uint64_t w);
bool perflib_slot_from_kernel(uint8_t *slot, uint64_t w, uint32_t pid, uint64_t stamp);
/*
 * procs entries (procs mapped): claim one (free, or left by a dead process) for this process
 * with @flags and socket @token (its index, or -ENOSPC); release entry @i if still this
 * process's; name slot @id as being freed by this process (@on) or no slot (!@on), in its
 * pending word of s0/live
 */
int perflib_proc_claim(struct perflib_store *map, uint32_t flags, uint64_t token);
void perflib_proc_release(struct perflib_store *map, int i);
void perflib_proc_pending(struct perflib_store *map, uint32_t id, bool on);

/* ---- instances and reaping (instance.c) ------------------------------------------------ */
/*
 * perflib_slot_reap - free slot @i if it is held by a dead process (removing its index
 * key). 1 if freed, 0 if not (live, free, or another process won the race).
 */
int perflib_slot_reap(struct perflib_store *map, uint32_t i);
/* the counter set of @prov whose slots hold its live instance @inst, and the slot index */
struct perflib_ctrset *perflib_instance_lookup(struct perflib_provider *prov, const void *inst,
					       uint32_t *ret_idx);
/*
 * perflib_instance_create - PerfCreateInstance with an errno: 0 and the block in *@ret_inst
 * (and its slot in *@ret_idx when given), or -EINVAL, -ENOENT, -EEXIST, -ENOSPC, -EBUSY.
 * Takes the provider lock.
 */
int perflib_instance_create(struct perflib_provider *prov, const GUID *CounterSetGuid,
			    const WCHAR *Name, ULONG Id, PPERF_COUNTERSET_INSTANCE *ret_inst,
			    uint32_t *ret_idx);
/* retire live slot @idx owned by @set (provider lock held) */
void perflib_instance_retire(struct perflib_ctrset *set, uint32_t idx);
void perflib_index_key(const WCHAR *name, size_t len, uint32_t id, struct perflib_index_key *key);
/*
 * perflib_index_lookup - the instance of @key in class @cls, through the index tables of the
 * segments this process opened: 0 and *ret_val (its slot index in the class, the low 8 bits
 * of its claim's generation), or -ENOENT. perflib_index_count - the current entries of every
 * table (tests: what a reaper or a delete left).
 */
int perflib_index_lookup(struct perflib_store *map, uint32_t cls,
			 const struct perflib_index_key *key, struct perflib_index_val *ret_val);
uint64_t perflib_index_count(struct perflib_store *map);
/*
 * perflib_index_put - an entry for slot @id, claimed at generation @gen, under @key in its
 * leader's table (a writer's map; tests forge entries with it): 0, -ENOSPC (both buckets
 * full of current entries), -EBADF
 */
int perflib_index_put(struct perflib_store *map, uint32_t id, uint32_t gen,
		      const struct perflib_index_key *key);

/* libbpf's messages as the library's debug output (reaper.c) */
int perflib_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap);

/* ---- provider state (provider.c) ------------------------------------------------------- */
#define PERFLIB_PROVIDER_MAGIC 0x50524f56u /* "PROV" */
#define PERFLIB_PROVIDER_DEAD 0x44454144u  /* "DEAD" */

struct perflib_counter {
	uint32_t id;	 /* CounterId */
	uint32_t type;	 /* winperf.h type */
	uint32_t offset; /* from the instance block: 32 + 8 * position */
	uint8_t size;	 /* 4 or 8 (value size class), 0 for ZERO */
	uint8_t byref;	 /* PERF_ATTRIB_BY_REFERENCE */
	uint16_t pos;	 /* position in the template */
	bool pcpu;	 /* kept per CPU (the registration's PERF_ATTRIB_LINUX_PER_CPU) */
};

struct perflib_provider;

/*
 * A counter as the hot path needs it, in one word, its descriptor: bits 0-15 offset from
 * the instance block, 16-23 value size (4, 8, 0), bit 24 by reference, bit 25 per CPU. 0
 * means "no such counter" (offsets are at least 32). Packed and unpacked only here.
 */
#define PERFLIB_DESC_KIND_SHIFT 16 /* the kind: value size, by-reference and per-CPU bits */
#define PERFLIB_DESC_OFFSET_MASK 0xFFFFu
#define PERFLIB_DESC_BYREF 0x100u /* in the kind: a by-reference counter */
#define PERFLIB_DESC_PCPU 0x200u  /* in the kind: a per-CPU counter (fails the size check) */

static inline uint32_t perflib_counter_pack(const struct perflib_counter *c)
{
	return c->offset | ((uint32_t)c->size | (c->byref ? PERFLIB_DESC_BYREF : 0) |
			    (c->pcpu ? PERFLIB_DESC_PCPU : 0))
				   << PERFLIB_DESC_KIND_SHIFT;
}

/* the offset from the instance block of the counter of descriptor @desc */
static inline uint32_t perflib_desc_offset(uint32_t desc)
{
	return desc & PERFLIB_DESC_OFFSET_MASK;
}

/*
 * the kind of descriptor @desc: the value size (4 or 8) of a by-value counter, that size |
 * PERFLIB_DESC_BYREF for a by-reference one; one compare with a size asks "a by-value
 * counter of this size" (the value functions' check)
 */
static inline uint32_t perflib_desc_kind(uint32_t desc)
{
	return desc >> PERFLIB_DESC_KIND_SHIFT;
}

/*
 * Block offsets perflib_class_slot_at divides with the reciprocal: below 2^32 (the first
 * 4 GiB of a class; past them, a division)
 */
#define PERFLIB_RECIP_SPAN (1ull << 32)

/*
 * one size class of a provider's counter set: where its blocks are, the per-slot tables;
 * first what the value functions' fast path reads of class 0 (perflib_ctrset_owns0)
 */
struct perflib_ctrset_class {
	uint8_t *base;		/* the class's reservation + PERFLIB_BLOCK_OFFSET: slot 0's block */
	size_t recip_span;	/* min(span, PERFLIB_RECIP_SPAN): offsets recip divides */
	uint64_t recip;		/* 2^64 / slot_size, rounded up (perflib_class_slot_at) */
	_Atomic uint8_t *owned; /* per slot: 1 = a live instance of this provider */
	size_t span;		/* capacity * slot_size: blocks lie below base + span */
	uint32_t slot_size;	/* the class's */
	uint32_t capacity;	/* slots */
	uint32_t alloc_hint;	/* next slot to try */
	uint32_t deletes;	/* deletes, counted for the shrink check (every 64th) */
	/*
	 * by-reference addresses, private to the process (capacity * nr_counters, indexed by
	 * slot and template position): collection dereferences these, never the copy in the
	 * shared slot, which another writer of the map could change
	 */
	void *_Atomic *refs;
	size_t refs_len;      /* bytes of refs (address space, touched as slots are used) */
	uint32_t pcpu_offset; /* slot offset of the per-CPU parts (geo->pcpu_offset), 0 = none */
};

/*
 * The provider's index of its counter sets by address: one entry per 4 GiB granule of the
 * address space a class's slots may take (PERFLIB_GIDX_SHIFT), in a hash of the granule
 * (prov->gidx). A value function finds the set of an instance from its address in one or
 * two entries, whatever the number of sets (the list walk cost 3.7 ns a set: 186 ns an
 * update in the first of 50 sets). Entries are published once, never changed, and freed
 * with their set at PerfStopProvider.
 */
#define PERFLIB_GIDX_SHIFT 32
#define PERFLIB_GIDX_BITS 8 /* 256 buckets */
#define PERFLIB_GUID_BITS 6 /* the provider's sets by GUID (prov->by_guid): 64 buckets */

/*
 * the bucket of key @x in a table of 2^@bits (0 < bits < 64): multiplicative hashing, the
 * top bits of the product (every table of the library's own that is keyed by a GUID or an
 * address granule)
 */
static inline uint32_t perflib_bucket(uint64_t x, unsigned int bits)
{
	return (uint32_t)((x * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

/* counter set @guid as one 64-bit key for perflib_bucket */
static inline uint64_t perflib_guid_key(const GUID *guid)
{
	uint64_t a, b;

	memcpy(&a, guid, 8);
	memcpy(&b, (const uint8_t *)guid + 8, 8);
	return a ^ b;
}

struct perflib_gidx {
	uint64_t granule;		 /* address >> PERFLIB_GIDX_SHIFT */
	struct perflib_ctrset *set;	 /* a class of it may have slots there */
	const struct perflib_gidx *next; /* the bucket's chain */
};

struct perflib_gidx_table {
	const struct perflib_gidx *_Atomic b[1u << PERFLIB_GIDX_BITS];
};

struct perflib_ctrset {
	/*
	 * the hot path's fields first, together: the counter table, then class 0's geometry
	 * (perflib_ctrset_owns0): 48 bytes
	 */
	uint32_t max_dense_id; /* ids below this use dense[] */
	uint32_t nr_classes;   /* map->nr_classes */
	uint32_t *dense;       /* id -> perflib_counter_pack() of the counter, 0 = none */
	struct perflib_ctrset_class cls[PERFLIB_MAX_CLASSES];
	struct perflib_ctrset *next;   /* provider's list; append-only until stop */
	struct perflib_provider *prov; /* owner */
	struct perflib_store *map;     /* opened pins */
	GUID guid;		       /* counter set */
	uint32_t nr_counters;
	struct perflib_counter *counters; /* sorted by id after the dense range */
	uint32_t instance_type;		  /* PERF_COUNTERSET_* */
	int proc_index;			  /* this process's procs entry, -1 = none */
	uint32_t nr_live;		  /* live instances of this provider */
	bool has_byref;			  /* a counter is by reference */
	/* per-CPU counters (layout.h): by template position, index among them + 1, 0 = not */
	uint16_t *pcpu;
	uint32_t pcpu_lines;			/* lines of parts per CPU in a slot */
	uint32_t nr_cpus;			/* CPUs with parts (info->nr_cpus) */
	struct perflib_gidx *gidx;		/* its entries in prov->gidx */
	uint32_t nr_gidx;			/* how many */
	const struct perflib_ctrset *guid_next; /* its bucket's chain in prov->by_guid */
};

struct perflib_provider {
	/* the value functions read these two, first: one cache line */
	_Atomic uint32_t magic;		     /* PERFLIB_PROVIDER_MAGIC while started */
	struct perflib_ctrset *_Atomic sets; /* registered counter sets, the newest first */
	GUID guid;			     /* provider id */
	PERF_PROVIDER_CONTEXT ctx;	     /* callback and memory routines */
	pthread_mutex_t lock;		     /* serialises set info, create, delete, stop */
	struct perflib_provider *next;	     /* process-wide list (providers_lock) */
	/*
	 * the sets by address (struct perflib_gidx), made with the second set (the newest set
	 * is checked before it): bucket heads, published with release
	 */
	struct perflib_gidx_table *_Atomic gidx;
	/* the sets by GUID (perflib_ctrset_find): bucket heads, chained by set->guid_next */
	const struct perflib_ctrset *_Atomic by_guid[1u << PERFLIB_GUID_BITS];
};

/* perflib_provider_get - the provider behind a handle, or NULL if not a started provider */
static inline struct perflib_provider *perflib_provider_get(HANDLE h)
{
	struct perflib_provider *prov = h;

	/* the hot path's check: a handle of this process's provider state */
	if (__builtin_expect(!prov, 0) ||
	    __builtin_expect(atomic_load_explicit(&prov->magic, memory_order_relaxed) !=
				     PERFLIB_PROVIDER_MAGIC,
			     0))
		return NULL;
	return prov;
}
/*
 * perflib_provider_lookup - the started provider of this process behind @h, checked against
 * the process's list (a stale or forged handle gives NULL, not a read of freed memory);
 * for every provider function but the value functions, which use perflib_provider_get.
 */
struct perflib_provider *perflib_provider_lookup(HANDLE h);
/* find a registered counter set of @prov by GUID (NULL if none): its by_guid bucket */
/*
 * perflib_ctrset_slots - the slots of class @cls a provider's per-slot tables (owned, refs)
 * cover: those of the published segments, at most the class's capacity (the last segment
 * may hold more)
 */
static inline uint32_t perflib_ctrset_slots(const struct perflib_ctrset *set, uint32_t cls)
{
	uint32_t n = perflib_store_slots(set->map, cls);

	return n < set->cls[cls].capacity ? n : set->cls[cls].capacity;
}
/* a provider's tables by slot id: its owned flag, its by-reference addresses, its block */
static inline _Atomic uint8_t *perflib_ctrset_owned(const struct perflib_ctrset *set, uint32_t id)
{
	return &set->cls[perflib_slot_id_class(id)].owned[perflib_slot_id_index(id)];
}
static inline void *_Atomic *perflib_ctrset_refs(const struct perflib_ctrset *set, uint32_t id)
{
	const struct perflib_ctrset_class *c = &set->cls[perflib_slot_id_class(id)];

	return c->refs ? c->refs + (size_t)perflib_slot_id_index(id) * set->nr_counters : NULL;
}
static inline PERF_COUNTERSET_INSTANCE *perflib_ctrset_block(const struct perflib_ctrset *set,
							     uint32_t id)
{
	const struct perflib_ctrset_class *c = &set->cls[perflib_slot_id_class(id)];

	return (PERF_COUNTERSET_INSTANCE *)(c->base +
					    (size_t)perflib_slot_id_index(id) * c->slot_size);
}
struct perflib_ctrset *perflib_ctrset_find(struct perflib_provider *prov, const GUID *guid);
/* memory through the provider's routines when given */
void *perflib_prov_alloc(struct perflib_provider *prov, size_t size);
void perflib_prov_free(struct perflib_provider *prov, void *p);
/* iterate over every started provider of the process (used by the callback thread) */
/* provlist.c: a new provider structure (from the quarantine or malloc), and back into it */
struct perflib_provider *perflib_prov_new(void);
void perflib_prov_retire(struct perflib_provider *prov);
/* put a started provider on the list; take the one behind @h off it (NULL: not on it) */
void perflib_providers_add(struct perflib_provider *prov);
struct perflib_provider *perflib_providers_remove(HANDLE h);
void perflib_providers_lock(void);
void perflib_providers_unlock(void);
struct perflib_provider *perflib_providers_first(void);

/* the reciprocal perflib_class_slot_at multiplies by, of a slot size (at least 32) */
static inline uint64_t perflib_class_recip(uint32_t slot_size)
{
	return UINT64_MAX / slot_size + 1;
}

/*
 * slot index of block offset @off (below the class's recip_span) in class @c if a slot
 * starts there, or -1. One multiply by the reciprocal of slot_size (Lemire, Kaser and Kurz,
 * "Faster remainder by direct computation", 2019: exact for 32-bit dividends and divisors),
 * whose high half is the quotient and whose low half is below the reciprocal exactly when
 * the division leaves no remainder. A second multiply to check the quotient, and a division
 * by 16 first to reach 64 GiB, cost the value functions a register saved on the stack and
 * 9% of an update (docs/ARCHITECTURE.md, "The hot path").
 */
static inline int64_t perflib_class_slot_at(const struct perflib_ctrset_class *c, uint64_t off)
{
	unsigned __int128 q = (unsigned __int128)c->recip * (uint32_t)off;

	if (__builtin_expect((uint64_t)q >= c->recip, 0))
		return -1;
	return (int64_t)(uint32_t)(q >> 64);
}

/*
 * slot index of block offset @off (below the class's span) in class @c if a block of this
 * provider starts there, or -1: perflib_class_slot_at (a division past recip_span), then
 * the process-local owned table
 */
static inline int64_t perflib_ctrset_class_index(const struct perflib_ctrset_class *c, uint64_t off)
{
	int64_t idx;

	if (__builtin_expect(off < c->recip_span, 1))
		idx = perflib_class_slot_at(c, off);
	else
		idx = off % c->slot_size ? -1 : (int64_t)(off / c->slot_size);
	if (__builtin_expect(idx < 0, 0))
		return -1;
	if (__builtin_expect(!atomic_load_explicit(&c->owned[idx], memory_order_relaxed), 0))
		return -1;
	return idx;
}

/*
 * perflib_ctrset_instance_index - slot id of @inst if it is the block of a slot of @set that
 * this provider owns live; -1 otherwise. Pure computation on process-local state (the hot
 * path's check): the class whose reservation holds the address, then the slot.
 */
static inline int64_t perflib_ctrset_instance_index(const struct perflib_ctrset *set,
						    const void *inst)
{
	const struct perflib_ctrset_class *c = set->cls;
	uint64_t off = (uint64_t)((const uint8_t *)inst - c->base);
	uint32_t k = 0;
	int64_t idx;

	/* class 0 first, in straight-line code: the others only when the address is not its */
	if (__builtin_expect(off >= c->span, 0)) {
		for (k = 1;; k++) {
			if (k >= set->nr_classes)
				return -1;
			c++;
			off = (uint64_t)((const uint8_t *)inst - c->base);
			if (off < c->span)
				break;
		}
	}
	idx = perflib_ctrset_class_index(c, off);
	return idx < 0 ? -1 : (int64_t)perflib_slot_id_make(k, (uint32_t)idx);
}

/*
 * perflib_ctrset_owns0 - is @inst the block of a class-0 slot of @set this provider owns
 * live? (the value functions' fast path: no slot id, no loop over the classes, no division:
 * a block past the first 4 GiB of the class is left to the full path)
 */
static inline bool perflib_ctrset_owns0(const struct perflib_ctrset *set, const void *inst)
{
	const struct perflib_ctrset_class *c = &set->cls[0];
	uint64_t off = (uint64_t)((const uint8_t *)inst - c->base);
	int64_t idx;

	if (off >= c->recip_span)
		return false;
	idx = perflib_class_slot_at(c, off);
	return idx >= 0 && atomic_load_explicit(&c->owned[idx], memory_order_relaxed);
}

/*
 * perflib_provider_set_of - the counter set of @prov that @inst is a live instance block
 * of (a slot it owns), its slot id in *@ret_idx; NULL if none. The newest set first (a
 * provider of one set: one check), then the others by the granule of the address
 * (prov->gidx, made with the second set).
 */
static inline __attribute__((always_inline)) struct perflib_ctrset *
perflib_provider_set_of(const struct perflib_provider *prov, const void *inst, int64_t *ret_idx)
{
	struct perflib_ctrset *set = atomic_load_explicit(&prov->sets, memory_order_acquire);
	const struct perflib_gidx_table *tab;
	uint64_t g = (uintptr_t)inst >> PERFLIB_GIDX_SHIFT;
	const struct perflib_gidx *e;
	int64_t idx;

	if (!set)
		return NULL;
	idx = perflib_ctrset_instance_index(set, inst);
	if (idx >= 0) {
		*ret_idx = idx;
		return set;
	}
	tab = atomic_load_explicit(&prov->gidx, memory_order_acquire);
	if (!tab)
		return NULL;
	for (e = atomic_load_explicit(&tab->b[perflib_bucket(g, PERFLIB_GIDX_BITS)],
				      memory_order_acquire);
	     e; e = e->next) {
		if (e->granule != g)
			continue;
		idx = perflib_ctrset_instance_index(e->set, inst);
		if (idx >= 0) {
			*ret_idx = idx;
			return e->set;
		}
	}
	return NULL;
}

/* ---- kernel help: the exit reaper, kernel-owned instances (reaper.c) ---------------------- */
/*
 * perflib_reaper_attach - make sure the machine's exit dispatcher (bpf/exit.bpf.c) runs
 * under the root, and load bpf/reaper.bpf.c for the counter set of @map (opened writable)
 * into its `progs` array under an exit id recorded in the set's control entry, the program
 * pinned at <root>/<guid>/reaper; nothing when the set has one. 0 when ready; -EPERM
 * without CAP_BPF+CAP_PERFMON (or CAP_SYS_ADMIN), -EOPNOTSUPP when PERFLIB_KERNEL_REAPER=0,
 * else -errno from libbpf. Callers ignore failures: the lazy reaping of instance.c still
 * frees dead providers' slots.
 */
int perflib_reaper_attach(const struct perflib_store *map);
/* drop the reaper program of the set whose control entry is @ctl from the dispatcher */
void perflib_reaper_forget(const GUID *guid, const struct perflib_ctl *ctl);
/* a counter set is being unregistered: its program leaves the exit dispatcher */
void perflib_reaper_set_removing(const GUID *guid);
/* remove the root's exit dispatcher if no counter set is left under the root */
void perflib_reaper_root_done(void);
/*
 * perflib_exit_join / _leave - enter (or remove) the counter set of @map in this process's
 * entry of the dispatcher's provs table, so the kernel frees its slots when it exits.
 * Nothing without a dispatcher or write access to it (the lazy reaping remains).
 */
void perflib_exit_join(const struct perflib_store *map);
void perflib_exit_leave(const struct perflib_store *map);
/*
 * perflib_instance_to_kernel - hand live instance @inst of provider @provider to the
 * kernel: its word gets owner pid 0 and owner_start PERFLIB_OWNER_KERNEL (layout.h), the
 * provider forgets it, and no reaper frees it when the process exits. 0, -EINVAL (not a
 * live instance of the provider), -EBUSY (its word changed).
 */
int perflib_instance_to_kernel(HANDLE provider, PPERF_COUNTERSET_INSTANCE inst);
/*
 * perflib_kernel_instances_take - make every kernel-owned instance of counter set
 * @counterset_guid (registered with PerfSetCounterSetInfo by @provider) an instance of
 * @provider again, to be deleted with PerfDeleteInstance or PerfStopProvider. Returns the
 * number taken, -EINVAL, -ENOENT (counter set not registered by the provider).
 */
int perflib_kernel_instances_take(HANDLE provider, const GUID *counterset_guid);

/* ---- provider processes, callbacks, by-reference collection (callback.c, collect.c) ----- */
/* provider side, called by provider.c: procs entries and the provider's service thread */
int perflib_cb_provider_started(struct perflib_provider *prov);
void perflib_cb_provider_stopping(struct perflib_provider *prov);
void perflib_cb_ctrset_added(struct perflib_ctrset *set);

/*
 * The provider service's wire protocol (docs/CALLBACKS.md). One SOCK_SEQPACKET connection
 * per request to the abstract socket named by perflib_cb_sockname(): the consumer sends one
 * struct perflib_cb_request followed by `len` bytes of ControlCallback buffer, the provider
 * answers with one struct perflib_cb_reply and closes. Little-endian, host layout.
 */
#define PERFLIB_CB_MAGIC 0x51424350u /* "PCBQ" */
#define PERFLIB_CB_OP_CALLBACK 1     /* run ControlCallback(request_code, buffer) */
#define PERFLIB_CB_OP_COLLECT 2	     /* dereference by-reference counters now */
#define PERFLIB_CB_MAX_BUFFER 8192   /* bytes of callback buffer in one request */

struct perflib_cb_request {
	uint32_t magic;	       /* PERFLIB_CB_MAGIC */
	uint32_t op;	       /* PERFLIB_CB_OP_* */
	uint64_t seq;	       /* consumer's number, echoed in the reply */
	GUID counterset;       /* counter set the request is about */
	uint32_t request_code; /* RequestCode for OP_CALLBACK, 0 for OP_COLLECT */
	uint32_t timeout_ms;   /* consumer's wait; the provider drops the request after */
	uint32_t len;	       /* bytes of buffer that follow this header */
	uint32_t reserved;     /* 0 */
};

struct perflib_cb_reply {
	uint32_t magic;	   /* PERFLIB_CB_MAGIC */
	uint32_t op;	   /* the request's op */
	uint64_t seq;	   /* the request's seq */
	uint32_t status;   /* first non-zero ControlCallback result, else 0 */
	int32_t err;	   /* 0, or a positive errno: why nothing ran (CALLBACKS.md) */
	uint32_t count;	   /* callbacks run, or instances collected */
	uint32_t reserved; /* 0 */
};

/* the abstract socket address of the service of process @pid with @token */
int perflib_cb_sockname(uint32_t pid, uint64_t token, struct sockaddr_un *ret_addr,
			socklen_t *ret_len);
/*
 * perflib_cb_identity - the PERF_ADD_COUNTER / PERF_REMOVE_COUNTER buffer: a
 * PERF_COUNTER_IDENTITY, then @machine and @instance as NUL-terminated UTF-16LE strings, in
 * that order and unpadded (spec 8.6). @instance NULL gives NameOffset 0. *ret_buf is
 * malloc'd (caller frees); -EINVAL for NULL @set/@machine or a result over
 * PERFLIB_CB_MAX_BUFFER, -ENOMEM.
 */
int perflib_cb_identity(const GUID *set, ULONG counter_id, ULONG instance_id, const WCHAR *machine,
			const WCHAR *instance, void **ret_buf, size_t *ret_len);

/*
 * perflib_cb_buffer_check - is @buf (@len bytes) the documented ControlCallback buffer for
 * @request about counter set @set (docs/CALLBACKS.md)? 0 or -EINVAL. Both sides check: the
 * consumer before sending, the provider before calling its callback.
 */
int perflib_cb_buffer_check(ULONG request, const GUID *set, const void *buf, size_t len);

/* consumer side (collect.c) */
/* bound on any wait for a provider: PERFLIB_CALLBACK_TIMEOUT_MS, default 1000 */
unsigned int perflib_cb_timeout_ms(void);
/*
 * perflib_notify_providers - run ControlCallback(@request, @buf, @len) in every live provider
 * process of @map that registered one (PERFLIB_PROC_CALLBACK). The processes are asked in
 * parallel and the whole call waits at most the timeout. *ret_status gets the first non-zero
 * value a callback returned (procs-entry order; ERROR_SUCCESS if none); a provider that does
 * not answer in time is skipped, as Windows ignores late callbacks. @request must be
 * PERF_ADD_COUNTER, PERF_REMOVE_COUNTER (@buf from perflib_cb_identity), PERF_ENUM_INSTANCES,
 * PERF_COLLECT_START or PERF_COLLECT_END (@buf a NUL-terminated UTF-16LE machine name).
 * Returns 0; -EACCES when a provider refused because this process may not read the counter
 * set (the others are still asked; *ret_status is not written); -EINVAL for another
 * request code or @len over PERFLIB_CB_MAX_BUFFER; -ENOMEM.
 */
int perflib_notify_providers(const struct perflib_store *map, ULONG request, const void *buf,
			     size_t len, ULONG *ret_status);
/*
 * perflib_collect_refs - ask every live provider process of @map with by-reference counters
 * to dereference its addresses now and write the values into the ref area of its slots
 * (info->ref_offset + 8 * position; a NULL address sets bit `position` of the bitmap that
 * follows the values, see layout.h), waiting at most the timeout in all (parallel).
 * Returns 0 (providers that did not answer in time keep their previous values); -EACCES
 * when a provider refused because this process may not read the counter set; -ENOMEM.
 */
int perflib_collect_refs(const struct perflib_store *map);

#endif /* PERFLIB_INTERNAL_H */

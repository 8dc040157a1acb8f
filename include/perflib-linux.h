/* SPDX-License-Identifier: MIT */
/*
 * perflib-linux.h - Linux-only additions to the perflib API: where counter sets are
 * pinned, who may read and write them, how many instances they hold, diagnostics, and the
 * registration call used by lodctr. Windows has no names for these; they are snake_case.
 * Functions return 0 or a negative errno unless stated otherwise.
 */
#ifndef PERFLIB_LINUX_H
#define PERFLIB_LINUX_H

#include <stdarg.h>
#include <stdbool.h>
#include <sys/types.h>

#include "perflib.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PERFLIB_DEFAULT_ROOT "/sys/fs/bpf/perflib"

/*
 * perflib_set_pin_root - use @path (a directory in a mounted bpffs) for counter sets
 * created or opened from now on by this process. NULL restores the default: $PERFLIB_ROOT,
 * else PERFLIB_DEFAULT_ROOT. -EINVAL for a relative path or one longer than PATH_MAX/2,
 * -ENOMEM when the library cannot keep its copy (the root in use then stays).
 */
PERFLIB_API int perflib_set_pin_root(const char *path);

/*
 * perflib_get_pin_root - copy the root in use (NUL-terminated) into @buf of @size bytes.
 * Returns its length without the NUL, -EINVAL for a NULL @buf, -ENOSPC when @size is too
 * small (@buf untouched). PATH_MAX bytes always suffice. Safe against a concurrent
 * perflib_set_pin_root().
 */
PERFLIB_API int perflib_get_pin_root(char *buf, size_t size);

/*
 * perflib_pin_root - the root in use (never NULL). The string is the library's: it stays
 * valid and unchanged until the library is unloaded, whatever is set later (a later
 * perflib_set_pin_root() makes later calls return another string). Safe in threaded
 * programs; do not free it.
 */
PERFLIB_API const char *perflib_pin_root(void);

/*
 * perflib_set_pin_access - file mode and group given to pins this process creates
 * (counter sets created on demand by PerfSetCounterSetInfo). Defaults: mode 0640
 * (owner read-write, group read), group of the process; overridden by the environment
 * variables PERFLIB_PIN_MODE (octal) and PERFLIB_PIN_GROUP (name or number). A gid of
 * (gid_t)-1 keeps the process group. -EINVAL if @mode has bits outside 0666.
 */
PERFLIB_API int perflib_set_pin_access(mode_t mode, gid_t gid);

/*
 * perflib_set_capacity - slots (instances) and name capacity (UTF-16 units including the
 * NUL) of counter sets this process creates from now on. Defaults 1024 and 1025 (names of
 * up to PERF_MAX_INSTANCE_NAME characters, as on Windows), or the
 * environment variables PERFLIB_CAPACITY and PERFLIB_NAME_MAX. 0 keeps the current value.
 * -EINVAL when @nr_slots exceeds 16M or @name_max is outside 2..PERF_MAX_INSTANCE_NAME+1.
 */
PERFLIB_API int perflib_set_capacity(unsigned int nr_slots, unsigned int name_max);

enum perflib_log_level {
	PERFLIB_WARN,
	PERFLIB_INFO,
	PERFLIB_DEBUG,
};

typedef int (*perflib_print_fn_t)(enum perflib_log_level level, const char *fmt, va_list ap);

/*
 * perflib_set_print - route the library's messages (each prefixed "perflib: ") to @fn;
 * returns the previous hook. The default prints warnings to stderr, and debug messages
 * too when PERFLIB_DEBUG is set in the environment. NULL silences the library.
 */
PERFLIB_API perflib_print_fn_t perflib_set_print(perflib_print_fn_t fn);

/*
 * PERFLIB_NO_ID - "no id": the BaseCounterId, PerfTimeId, PerfFreqId and MultiId of a
 * counter that has no such counter (PERF_COUNTER_REG_INFO, struct perflib_counter_reg), and
 * the InstanceId of a PERF_COUNTER_IDENTIFIER that does not filter by instance id. The
 * value Windows uses for both (0xFFFFFFFF).
 */
#define PERFLIB_NO_ID 0xFFFFFFFFu

/* A counter's registration, as lodctr reads it from a manifest. Strings are UTF-8. */
struct perflib_counter_reg {
	ULONG id;
	ULONG type;	    /* winperf.h type */
	ULONGLONG attrib;   /* PERF_ATTRIB_* */
	ULONG detail_level; /* PERF_DETAIL_* */
	LONG scale;	    /* default scale */
	ULONG base_id;	    /* or PERFLIB_NO_ID */
	ULONG perf_time_id; /* or PERFLIB_NO_ID */
	ULONG perf_freq_id; /* or PERFLIB_NO_ID */
	ULONG multi_id;	    /* or PERFLIB_NO_ID */
	ULONG aggregate;    /* PERF_AGGREGATE_* */
	const char *name;   /* display name, or NULL */
	const char *help;   /* help string, or NULL */
};

struct perflib_counterset_reg {
	GUID provider_guid;
	GUID counterset_guid;
	ULONG instance_type; /* PERF_COUNTERSET_* */
	ULONG detail_level;  /* PERF_DETAIL_* */
	const char *provider_name;
	const char *name;
	const char *help;
	unsigned int nr_counters;
	const struct perflib_counter_reg *counters;
};

/*
 * Options of the registration calls. As libbpf's opts, the struct may grow at its end in
 * later releases: set sz to sizeof(struct perflib_pin_opts) as you compiled it (the library
 * then reads only the fields you know of, and takes the defaults for the others), and
 * zero-initialise what you do not set. The library refuses (-EINVAL) an sz smaller than
 * the sz field or larger than its own struct with non-zero bytes past the fields it knows.
 *
 *	struct perflib_pin_opts opts = PERFLIB_PIN_OPTS_INIT;
 *	opts.mode = 0664;
 */
struct perflib_pin_opts {
	size_t sz;	       /* sizeof(struct perflib_pin_opts) */
	mode_t mode;	       /* pin file mode, 0 = default (0640) */
	uid_t uid;	       /* owner, (uid_t)-1 = keep */
	gid_t gid;	       /* group, (gid_t)-1 = keep */
	unsigned int capacity; /* slots, 0 = default */
	unsigned int name_max; /* UTF-16 units incl. NUL, 0 = default */
};

/* every field at its default */
#define PERFLIB_PIN_OPTS_INIT                                                                      \
	{                                                                                          \
		sizeof(struct perflib_pin_opts), 0, (uid_t)-1, (gid_t)-1, 0, 0                     \
	}

/*
 * perflib_register_counterset - create and pin the maps of a counter set from a full
 * registration (names, help, base ids, aggregation), as lodctr does. -EEXIST if the
 * counter set is pinned with an identical registration (a no-op), -ENOTUNIQ if it is
 * pinned with a different one, -EPERM without CAP_BPF, -EINVAL for bad input.
 */
PERFLIB_API int perflib_register_counterset(const struct perflib_counterset_reg *reg,
					    const struct perflib_pin_opts *opts);

/*
 * PERF_ATTRIB_LINUX_PER_CPU - in PERF_COUNTER_INFO.Attrib (or perflib_counter_reg.attrib): keep
 * the counter per CPU (docs/PORTING.md, "Per-CPU counters"). Each increment or decrement goes
 * to a part of the instance kept for the caller's CPU, on a cache line of its own, so threads
 * on different CPUs never contend on it; every reader sees one value, the base at the
 * counter's Offset plus the parts, modulo the counter's width. PerfSet...CounterValue adds
 * the difference to the base: a value set with it is exact, and increments that run at the
 * same time count on top of it. For by-value counters of 4 or 8 bytes; 64 bytes per
 * possible CPU per instance for each 8 of them. A bit Windows does not use: a template with
 * it builds on Windows unchanged (the bit is ignored there). A registered counter set keeps
 * the choice lodctr made (lodctr --per-cpu): a provider whose template lacks the bit follows it.
 */
#define PERF_ATTRIB_LINUX_PER_CPU 0x0100000000000000ULL

#define PERFLIB_FIELD_NAME_MAX 64

/* Where a counter lives in a slot of the data map, and the BTF names bpftool shows. */
struct perflib_counter_layout {
	ULONG id;
	unsigned int offset;			/* 8-byte counter slot, from the slot start */
	unsigned int ref_offset;		/* dereferenced value, 0 = not by reference */
	char field[PERFLIB_FIELD_NAME_MAX];	/* BTF name of the counter slot */
	char ref_field[PERFLIB_FIELD_NAME_MAX]; /* BTF name of the dereferenced value, or "" */
};

/*
 * The layout of one slot (instance) of size class 0 of a counter set's data maps (see
 * bpf/layout.h): the class of the shortest names, the one BPF programs see through the
 * segs pin. Every class lays the header, the block and the counters out the same way;
 * perflib_counterset_classes() gives where each puts the name.
 */
struct perflib_layout {
	unsigned int slot_size;	   /* bytes per slot, a multiple of 16 */
	unsigned int capacity;	   /* slots (of each class) */
	unsigned int name_max;	   /* UTF-16 units per name of class 0, incl. the NUL */
	unsigned int block_offset; /* PERF_COUNTERSET_INSTANCE */
	unsigned int name_offset;  /* UTF-16 name */
	unsigned int ascii_offset; /* ASCII rendering of the name */
	unsigned int ref_offset;   /* dereferenced values, 0 = none */
	unsigned int nr_counters;
	struct perflib_counter_layout *counters; /* template order */
};

/*
 * perflib_counterset_layout - the slot layout @reg would get with @opts (NULL = the
 * defaults), without creating anything: what lodctr --dump prints. Free *ret_layout with
 * perflib_layout_free(). -EINVAL for bad input, -E2BIG when capacity * slot size exceeds
 * 4 GiB, -ENOMEM.
 */
PERFLIB_API int perflib_counterset_layout(const struct perflib_counterset_reg *reg,
					  const struct perflib_pin_opts *opts,
					  struct perflib_layout *ret_layout);
PERFLIB_API void perflib_layout_free(struct perflib_layout *layout);

/* One size class of a counter set's slots (bpf/layout.h, "Size classes"). */
struct perflib_class_layout {
	unsigned int slot_size;	   /* bytes per slot */
	unsigned int name_max;	   /* the names it holds: up to name_max UTF-16 units incl. NUL */
	unsigned int name_offset;  /* UTF-16 name */
	unsigned int ascii_offset; /* ASCII rendering of the name */
	unsigned int ascii_max;	   /* its bytes, incl. the NUL */
	unsigned int ref_offset;   /* dereferenced values, 0 = none */
};

/*
 * perflib_counterset_classes - the size classes @reg would get with @opts (NULL = the
 * defaults): the first @n into @ret (may be NULL when @n is 0), by growing name_max. Returns
 * the number of classes (1 to 4), or -EINVAL / -E2BIG / -ENOMEM as
 * perflib_counterset_layout(). (PERFLIB_1.2)
 */
PERFLIB_API int perflib_counterset_classes(const struct perflib_counterset_reg *reg,
					   const struct perflib_pin_opts *opts,
					   struct perflib_class_layout *ret, unsigned int n);

/*
 * perflib_unregister_counterset - remove the pins of a counter set. -EBUSY when live
 * instances exist and @force is false; -ENOENT when it is not registered.
 */
PERFLIB_API int perflib_unregister_counterset(const GUID *counterset_guid, bool force);

/*
 * perflib_reap_counterset - free the slots of dead provider processes in a counter set
 * (the lazy liveness check, also run by providers when slots run out). Returns the number
 * of slots freed or -errno.
 */
PERFLIB_API int perflib_reap_counterset(const GUID *counterset_guid);

/*
 * perflib_win32_error - the Win32 error code for 0 or a negative errno returned by the
 * functions above (the library's one errno -> Win32 table), for tools that report Win32 codes.
 */
PERFLIB_API ULONG perflib_win32_error(int err);

/*
 * perflib_utf8_to_utf16 - convert NUL-terminated UTF-8 @src into @dst (@dst_units UTF-16
 * units including the NUL). Returns the units written including the NUL, -EILSEQ for
 * malformed UTF-8, -ENOSPC when @dst is too small.
 */
PERFLIB_API int perflib_utf8_to_utf16(const char *src, WCHAR *dst, size_t dst_units);

/*
 * perflib_utf16_to_utf8 - convert at most @src_units units of UTF-16LE @src (stopping at a
 * NUL) into NUL-terminated UTF-8 in @dst; lone surrogates become U+FFFD; @src need not be
 * aligned. Returns the bytes written without the NUL, or -ENOSPC when @dst is too small
 * (@dst then holds what fits, cut at a character boundary, NUL-terminated).
 */
PERFLIB_API int perflib_utf16_to_utf8(const WCHAR *src, size_t src_units, char *dst,
				      size_t dst_size);

/* perflib_guid_to_string - "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (lower case) into @buf. */
PERFLIB_API char *perflib_guid_to_string(const GUID *guid, char buf[37]);

/* perflib_guid_from_string - parse with or without braces. -EINVAL on bad syntax. */
PERFLIB_API int perflib_guid_from_string(const char *str, GUID *ret_guid);

/*
 * Kernel-owned instances (PERFLIB_1.1). A kernel provider (BPF programs, docs/BPF.md) owns
 * instances that no process owns: owner pid 0 and PERFLIB_OWNER_KERNEL in the slot, so no
 * reaper frees them and consumers show them while the provider is loaded. Its loader creates
 * the fixed ones (one per CPU, _Total, ...) here; BPF programs create and delete their own
 * with perflib_instance_create() / perflib_instance_delete() of perflib_bpf.h.
 *
 * perflib_kernel_instance_create - create instance (@name, @id) of counter set
 * @counterset_guid, registered by started provider @provider (PerfSetCounterSetInfo), and hand
 * it to the kernel. Returns its slot index (>= 0: the index BPF programs use with
 * perflib_slot()), or -EINVAL, -EEXIST (name and id taken), -ENOSPC (no free slot), -ENOENT
 * (counter set not registered by @provider), -EBUSY.
 */
PERFLIB_API int perflib_kernel_instance_create(HANDLE provider, const GUID *counterset_guid,
					       const WCHAR *name, ULONG id);

/*
 * perflib_kernel_instances_delete - delete every kernel-owned instance of counter set
 * @counterset_guid (whoever created it: a loader or a BPF program), and every instance
 * @provider itself holds in it. Detach the programs that create instances first. Returns
 * the number of kernel-owned instances deleted, -EINVAL, -ENOENT.
 */
PERFLIB_API int perflib_kernel_instances_delete(HANDLE provider, const GUID *counterset_guid);

/*
 * perflib_kernel_reserve - make counter set @counterset_guid (registered by started provider
 * @provider) hold storage for at least @nr_instances instances (up to its capacity) now. A
 * set grows when a user-space PerfCreateInstance finds no free slot; a BPF program cannot
 * grow it (perflib_instance_create() returns -ENOSPC when the storage there is is full), so
 * a loader whose programs create instances reserves what they may need. Returns the number
 * of instance slots the set's storage holds (>= @nr_instances unless the capacity is
 * lower), or -EINVAL, -ENOENT (not registered by @provider), -ENOMEM (the kernel refused the
 * memory; what was added stays).
 */
PERFLIB_API int perflib_kernel_reserve(HANDLE provider, const GUID *counterset_guid,
				       ULONG nr_instances);

/*
 * Column reads (PERFLIB_1.3). perflib_query_columns() reads a query as PerfQueryCounterData
 * does (the same counter sets, notifications, by-reference collection, instances, order and
 * values) but hands each specification's answer out as arrays the caller owns, indexed
 * directly, instead of a buffer of Windows blocks to walk: a column per counter, a row per
 * instance. An instance's name is written only when the caller does not hold it already:
 * a row that is the same instance as the same row of the previous read (its key, below)
 * gets no name, so a consumer that samples the same instances again and again (libpdh)
 * reads values only.
 *
 * One struct perflib_column_block per specification of the query, by Index. The caller sets
 * the arrays and their capacities before each call (the arrays may be NULL when their
 * capacity is 0); the call sets status .. name_units.
 */
#define PERFLIB_COLUMN_KEY_COMPUTED (~0ULL) /* the key of an instance the library computes */
#define PERFLIB_COLUMN_NO_NAME 0xFFFFFFFFu  /* name_offsets of a row given no name */

struct perflib_column_block {
	/* the caller's arrays */
	ULONG max_rows; /* rows of instance_ids, keys, name_offsets, name_lengths */
	ULONG max_cols; /* entries of counter_ids; values and sizes hold max_cols * max_rows */
	ULONG max_name_units; /* UTF-16 units of names */
	ULONG nr_known;	      /* rows of keys that hold the keys of names the caller kept (in) */
	ULONG *counter_ids;   /* per column: its CounterId (template order) */
	ULONGLONG *values;    /* column c of row r at values[c * max_rows + r]: the raw value */
	UCHAR *sizes;	      /* at the same place: 4 or 8 (dwDataSize), 0 = no value */
	/*
	 * per row: InstanceId (0 for a set without instances); a row whose key matched keeps
	 * the caller's (the same instance), as its key does
	 */
	ULONG *instance_ids;
	/*
	 * per row, in and out: the instance's key, the same while the instance lives and never
	 * that of another instance (its slot and the slot's generation), or
	 * PERFLIB_COLUMN_KEY_COMPUTED for an aggregate the library computes (_Total, ...)
	 */
	ULONGLONG *keys;
	/*
	 * per row: its name at names + offset (units), or PERFLIB_COLUMN_NO_NAME; written only
	 * when some row is given a name (nr_named > 0)
	 */
	ULONG *name_offsets;
	ULONG *name_lengths; /* per row given a name: its units without the NUL */
	WCHAR *names;	     /* the names given, each NUL-terminated */
	/* the answer */
	ULONG status;	  /* PERF_COUNTER_HEADER.dwStatus: ERROR_SUCCESS or why no data */
	ULONG type;	  /* PERF_COUNTER_HEADER.dwType; PERF_ERROR_RETURN when status is set */
	ULONG nr_cols;	  /* columns: every counter (wildcard specification) or one */
	ULONG nr_rows;	  /* rows: the instances PerfQueryCounterData gives, in its order */
	ULONG nr_named;	  /* rows given a name */
	ULONG name_units; /* units of names used */
};

/*
 * perflib_query_columns - read query @query (PerfOpenQueryHandle, PerfAddCounters) into
 * @blocks, one per specification (@nr_blocks of them). @hdr gets the times of the sample as
 * PerfQueryCounterData's PERF_DATA_HEADER (PerfTimeStamp, PerfFreq, PerfTime100NSec,
 * SystemTime), dwNumCounters the number of specifications and dwTotalSize its own size.
 *
 * Rows are PerfQueryCounterData's instances: a set without instances (single-instance and
 * single-aggregate types, dwType PERF_SINGLE_COUNTER or PERF_MULTIPLE_COUNTERS) has one row
 * and no name. A multiple-instance block (PERF_MULTIPLE_INSTANCES, PERF_COUNTERSET)
 * compares the key of each row r < nr_known with keys[r] as given (the keys this query's
 * last read returned for this block): a row whose instance is the one the caller holds at
 * that row gets no name; the others, and the instances the library computes, get theirs.
 * Pass nr_known = 0 to get every name, and after any error. Keys and names of rows that do
 * not fit are not written.
 *
 * Returns 0; -EBADF (not a query handle), -EINVAL (NULL @hdr, NULL @blocks with @nr_blocks,
 * nr_known above max_rows), -ENOMEM; -ENOSPC when a block's arrays were too small (its
 * nr_rows, nr_cols and name_units are then what it needs; blocks that fit are complete) or
 * @nr_blocks is below dwNumCounters (no block is written). Grow and call again: that is a
 * new read.
 */
PERFLIB_API int perflib_query_columns(HANDLE query, PERF_DATA_HEADER *hdr,
				      struct perflib_column_block *blocks, ULONG nr_blocks);

#ifdef __cplusplus
}
#endif

#if defined(__cplusplus) && PERFLIB_WCHAR_IS_WCHAR_T
/* C++ with -fshort-wchar: the converters take char16_t buffers too (see perflib.h) */
template <typename T>
inline typename perflib_char16_only<T, int>::type perflib_utf8_to_utf16(const char *src, T *dst,
									size_t dst_units)
{
	return perflib_utf8_to_utf16(src, reinterpret_cast<WCHAR *>(dst), dst_units);
}
template <typename T>
inline typename perflib_char16_only<T, int>::type
perflib_utf16_to_utf8(const T *src, size_t src_units, char *dst, size_t dst_size)
{
	return perflib_utf16_to_utf8(reinterpret_cast<const WCHAR *>(src), src_units, dst,
				     dst_size);
}
#endif

#endif /* PERFLIB_LINUX_H */

/* SPDX-License-Identifier: MIT */
/*
 * exp_format.h - the pure part of perflib-exporter: a snapshot of counter sets (registration
 * plus the raw values of one collection), how perflib counter types map onto Prometheus
 * metric types, how metric names are derived, escaping, and rendering as OpenMetrics 1.0.0
 * or Prometheus text 0.0.4. Nothing here calls the perflib API; the exporter fills the
 * snapshot from libpdh's registration model and decoded samples (tools/perflib-exporter/collect.c,
 * exp_sample.h).
 *
 * The rules are documented for users in docs/EXPORTER.md; keep both in step.
 */
#ifndef EXP_FORMAT_H
#define EXP_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <perflib-linux.h>

/* Exposition formats and their Content-Type values. */
enum exp_format {
	EXP_FMT_PROMETHEUS,  /* text/plain; version=0.0.4 */
	EXP_FMT_OPENMETRICS, /* application/openmetrics-text; version=1.0.0, ends with # EOF */
};

#define EXP_CT_PROMETHEUS "text/plain; version=0.0.4; charset=utf-8"
#define EXP_CT_OPENMETRICS "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* Label that carries the instance name of a multi-instance counter set. */
#define EXP_INSTANCE_LABEL "perf_instance"
/* Prefix of every metric derived from a counter. */
#define EXP_PREFIX "perflib_"
/*
 * A growable text buffer. Appending never fails visibly: on allocation failure the buffer
 * stops growing and @err becomes -ENOMEM, checked once by the caller at the end.
 */
struct exp_buf {
	char *data; /* NUL-terminated after every append (when cap > 0) */
	size_t len; /* bytes used, without the NUL */
	size_t cap; /* bytes allocated */
	int err;    /* 0 or -ENOMEM */
};

void exp_buf_free(struct exp_buf *b);
void exp_buf_add(struct exp_buf *b, const char *s, size_t n);
void exp_buf_puts(struct exp_buf *b, const char *s);
void exp_buf_putc(struct exp_buf *b, char c);
void exp_buf_u64(struct exp_buf *b, uint64_t v);
/* append @num / @den as a decimal: exact when @den is a power of ten, else %.17g-precise */
void exp_buf_ratio(struct exp_buf *b, uint64_t num, uint64_t den);

/* How the raw value of one perflib counter type is exported. */
enum exp_kind {
	EXP_SKIP,	     /* text, no-data, histogram, unknown size: not exported */
	EXP_BASE,	     /* a base: only exported through the counter that uses it */
	EXP_GAUGE,	     /* instantaneous number (raw counts): gauge, value as is */
	EXP_COUNTER,	     /* a count whose rate is displayed: counter <name>_total */
	EXP_TIMER,	     /* accumulated busy time: counter <name>_seconds_total */
	EXP_QUEUELEN,	     /* queue length x time: counter <name>_total, rate() = avg length */
	EXP_ELAPSED,	     /* start time: gauge <name>_seconds = (now - start) / freq */
	EXP_AVERAGE,	     /* N over base B: summary <name>[_seconds] with _sum N, _count B */
	EXP_RAW_FRACTION,    /* N / B: gauges <name> and <name>_base */
	EXP_SAMPLE_FRACTION, /* delta N / delta B: counters <name>_total and <name>_base_total */
};

/* The clock a time-based counter type counts in (winperf.h PERF_TIMER_* bits). */
enum exp_timebase {
	EXP_TB_NONE,   /* not a time */
	EXP_TB_TICK,   /* system performance counter: PERF_DATA_HEADER.PerfFreq per second */
	EXP_TB_100NS,  /* 100-ns units */
	EXP_TB_OBJECT, /* the set's own clock: the counter named by PerfFreqId gives ticks/s */
};

struct exp_type_info {
	enum exp_kind kind;
	enum exp_timebase timebase; /* EXP_TB_NONE for counts */
	bool inverse;		    /* PERF_INVERSE_COUNTER: counts the inactive time */
	bool multi;		    /* PERF_MULTI_COUNTER: divided by a base (instance count) */
	bool precision;		    /* PERF_COUNTER_PRECISION: base is a private time stamp */
};

/*
 * exp_type_map - classify a winperf.h counter type (PERF_COUNTER_INFO.Type).
 * @type: in, the counter type.   @ret: out, always written.
 * Unknown numeric types become gauges; types without a numeric value become EXP_SKIP.
 */
void exp_type_map(uint32_t type, struct exp_type_info *ret);

/* One counter of a counter set, from PERF_COUNTER_REG_INFO and the string blocks. */
struct exp_counter {
	uint32_t id;	   /* CounterId */
	uint32_t type;	   /* winperf.h type */
	uint64_t attrib;   /* PERF_ATTRIB_* */
	uint32_t base_id;  /* BaseCounterId or PERFLIB_NO_ID */
	uint32_t time_id;  /* PerfTimeId or PERFLIB_NO_ID */
	uint32_t freq_id;  /* PerfFreqId or PERFLIB_NO_ID */
	uint32_t multi_id; /* MultiId or PERFLIB_NO_ID */
	char *name;	   /* UTF-8 display name (English), or NULL */
	char *help;	   /* UTF-8 help string, or NULL */
	/* derived by exp_prepare() */
	struct exp_type_info ti;
	int base;      /* index of the base counter (fractions, averages, multi), or -1 */
	int time;      /* index of the time-stamp counter (object timers), or -1 */
	int freq;      /* index of the frequency counter (object timers), or -1 */
	bool emit;     /* exported as a metric family of its own */
	char *family;  /* metric family name (no _total), NULL when !emit */
	char *family2; /* second family: <family>_base for fractions and multi timers, or NULL */
};

/*
 * One instance of one collection. Its raw values (4 bytes zero-extended, or 8 bytes, as
 * PERF_COUNTER_DATA carried them) are row @row of exp_set.values, indexed like
 * exp_set.counters.
 */
struct exp_instance {
	uint32_t id;	  /* InstanceId */
	size_t row;	  /* row in exp_set.values / exp_set.present */
	size_t name;	  /* offset of the UTF-8 name in exp_set.strings */
	size_t label;	  /* offset of the rendered label set "{...}" or "" in exp_set.strings */
	unsigned int dup; /* repeats of its name before it in enumeration order (PDH's "#n") */
};

struct exp_set {
	GUID guid;
	uint32_t instance_type; /* PERF_COUNTERSET_* */
	char *name;		/* UTF-8 English name, or NULL */
	char *help;		/* UTF-8 help string, or NULL */
	size_t nr_counters;
	struct exp_counter *counters;
	/* derived by exp_prepare() */
	char *prefix; /* "perflib_<set>" */
	/* one collection, filled by exp_set_add_instance(), ended by exp_set_finish() */
	size_t nr_instances;
	size_t cap_instances;
	struct exp_instance *instances;
	uint64_t *values;	/* cap_instances rows of nr_counters raw values */
	uint8_t *present;	/* idem: 1 when the value was returned */
	struct exp_buf strings; /* instance names and labels */
	size_t nr_dropped;	/* instances dropped by exp_set_finish() (duplicate identity) */
};

/* exp_set_free - free @set and everything it owns; accepts NULL. */
void exp_set_free(struct exp_set *set);

/* exp_set_reset - forget the instances of the previous collection (keeps the memory). */
void exp_set_reset(struct exp_set *set);

/*
 * exp_set_add_instance - append an instance to the collection of @set.
 * @id: InstanceId.   @name: UTF-8 name (copied), NULL for a single-instance set.
 * @dup: the "#n" of the name as PDH numbers repeats (PDH_LINUX_INSTANCE.Duplicate: in
 * enumeration order, names compared without case), 0 for the first of a name.
 * @ret_index: out, the instance's index, valid until the next add.
 * Returns 0 or -ENOMEM. Values start absent.
 */
int exp_set_add_instance(struct exp_set *set, uint32_t id, const char *name, unsigned int dup,
			 size_t *ret_index);

/* exp_set_value - record the raw value of counter index @c of instance index @i. */
void exp_set_value(struct exp_set *set, size_t i, size_t c, uint64_t value);

/*
 * exp_set_finish - end a collection: sort instances by name then id, rename instances
 * whose name repeats to "name#1", "name#2" ... (as Windows' PDH does), drop what is still
 * not unique (counted in nr_dropped), render each label set.
 * Returns 0 or -ENOMEM.
 */
int exp_set_finish(struct exp_set *set);

/*
 * exp_name_part - the metric-name form of a display name: ASCII letters lower-cased,
 * digits kept, every run of other bytes (UTF-8 included) turned into one '_', no leading
 * or trailing '_'. Returns a malloc'd string (possibly "") or NULL when out of memory.
 */
char *exp_name_part(const char *name);

/*
 * exp_prepare - derive everything rendering needs for @sets (all of one scrape): sort
 * them by name then GUID, resolve base/time/frequency counters, decide which counters are
 * exported, and give every family a unique name (see docs/EXPORTER.md for the rule).
 * Returns 0 or -ENOMEM.
 */
int exp_prepare(struct exp_set **sets, size_t nr_sets);

/*
 * exp_render - write the exposition of @sets (prepared, collections finished).
 * @perf_freq: PERF_DATA_HEADER.PerfFreq of the collection (ticks per second).
 * Output is appended to @out; check out->err afterwards.
 */
void exp_render(struct exp_set *const *sets, size_t nr_sets, int64_t perf_freq, enum exp_format fmt,
		struct exp_buf *out);

/*
 * exp_escape_label - append @s escaped for a label value: \ -> \\, " -> \", LF -> \n.
 * exp_escape_help - append @s escaped for a HELP line: \ and LF, and " for OpenMetrics.
 */
void exp_escape_label(struct exp_buf *b, const char *s);
void exp_escape_help(struct exp_buf *b, const char *s, enum exp_format fmt);

/*
 * exp_negotiate - pick the format for an HTTP Accept header value (NULL when absent):
 * OpenMetrics when application/openmetrics-text is listed explicitly (version 1.0.0,
 * 0.0.1 or none) with a q-value above 0 and at least the q-value that text/plain gets
 * (from text/plain, else the text/ or the full wildcard range); else Prometheus text,
 * which is also what a bare wildcard gets.
 */
enum exp_format exp_negotiate(const char *accept);

/* exp_content_type - the Content-Type header value for @fmt. */
const char *exp_content_type(enum exp_format fmt);

#endif /* EXP_FORMAT_H */

/* SPDX-License-Identifier: MIT */
/*
 * manifest.h - the counters section of an instrumentation manifest (.man), parsed and
 * validated into plain C structs. Used by ctrpp, lodctr, unlodctr and the tests.
 *
 * Rules come from ../shared/spec/tools.md section 1. Element and attribute names are those
 * of the manifest schema; numeric values are the Windows ones (PERF_* from perflib.h and
 * winperf.h), so a counter maps onto PERF_COUNTER_INFO / PERF_COUNTER_REG_INFO directly.
 *
 * Diagnostics have the form "FILE:LINE: error: message" or "FILE:LINE: warning: message",
 * FILE being the path as given, LINE the line of the attribute concerned (or of the
 * element's start tag), sorted by line.
 */
#ifndef MANIFEST_H
#define MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <perflib.h>

#include "ctrtype.h"
#include "layout.h"

/* The namespace of <counters> and its children (elementFormDefault qualified). */
#define MANIFEST_COUNTERS_NS "http://schemas.microsoft.com/win/2005/12/counters"
/* The namespace of <instrumentationManifest>, <instrumentation> and <localization>. */
#define MANIFEST_EVENTS_NS "http://schemas.microsoft.com/win/2004/08/events"

/* <counters schemaVersion=...>: absent (Vista-era manifests), "1.1" or "2.0". */
#define MANIFEST_SCHEMA_NONE 0
#define MANIFEST_SCHEMA_1_1 11
#define MANIFEST_SCHEMA_2_0 20

/* Limits from the schema. */
#define MANIFEST_MAX_NAME 1023 /* characters in a counterSet or counter name */
/* counters in one counterSet: the library's limit (the schema allows 65,536), so that ctrpp,
 * lodctr and PerfSetCounterSetInfo refuse the same manifests, the first one with FILE:LINE */
#define MANIFEST_MAX_COUNTERS PERFLIB_MAX_COUNTERS
#define MANIFEST_MIN_SCALE (-10) /* defaultScale range */
#define MANIFEST_MAX_SCALE 10

/* An optional UInt32Type attribute (nameID, baseID, resourceBase, ...). */
struct manifest_opt_u32 {
	uint32_t value; /* meaningful only when set */
	bool set;	/* the attribute was present */
};

/* <struct name= type=> inside <structs>. */
struct manifest_struct {
	unsigned int line; /* line of the <struct> start tag */
	char *name;	   /* C symbol, referenced by counter@struct */
	char *type;	   /* C type name */
};

/* <counter>. Strings are UTF-8, NULL when the attribute is absent. */
struct manifest_counter {
	unsigned int line; /* line of the <counter> start tag */
	uint32_t id;	   /* PERF_COUNTER_INFO.CounterId */
	char *uri;
	char *symbol;	   /* NULL when absent or empty */
	char *name;	   /* $(string.X) resolved through the stringTable */
	char *description; /* idem */
	struct manifest_opt_u32 name_id;
	struct manifest_opt_u32 description_id;
	const struct ctrtype *type; /* never NULL in a loaded manifest (ctrtype.h) */
	uint32_t detail_level;	    /* PERF_DETAIL_NOVICE (standard) or _ADVANCED */
	int32_t default_scale;	    /* -10..10, 0 when absent */
	uint32_t aggregate;	    /* PERF_AGGREGATE_*: undefined 0 sum 1 avg 2 min 3 max 4 */
	bool has_aggregate;	    /* aggregate= was present (else aggregate is UNDEFINED) */
	struct manifest_opt_u32 base_id;
	struct manifest_opt_u32 perf_time_id;
	struct manifest_opt_u32 perf_freq_id;
	struct manifest_opt_u32 multi_counter_id;
	uint64_t attrib;   /* OR of PERF_ATTRIB_* from <counterAttributes> */
	char *struct_name; /* counter@struct as written, NULL when absent */
	int struct_index;  /* index in the set's structs, -1 when none resolves;
					 * a set with exactly one struct supplies it by default */
	char *field;	   /* counter@field, NULL when absent */
};

/* <counterSet>. */
struct manifest_counterset {
	unsigned int line; /* line of the <counterSet> start tag */
	GUID guid;
	char *uri;
	char *symbol;	   /* NULL when absent or empty (allowed without schemaVersion) */
	char *name;	   /* resolved, never NULL */
	char *description; /* resolved, never NULL */
	struct manifest_opt_u32 name_id;
	struct manifest_opt_u32 description_id;
	const char *instances;	/* manifest spelling, "single" when absent; static */
	uint32_t instance_type; /* PERF_COUNTERSET_* */
	struct manifest_struct *structs;
	size_t nr_structs;
	struct manifest_counter *counters; /* in document order, at least one */
	size_t nr_counters;
};

/* <provider>. */
struct manifest_provider {
	unsigned int line;	    /* line of the <provider> start tag */
	GUID guid;		    /* providerGuid */
	char *symbol;		    /* NULL when absent or empty */
	char *application_identity; /* never NULL */
	char *provider_name;	    /* providerName, "Counters" when absent */
	uint32_t provider_type;	    /* PERF_PROVIDER_USER_MODE or PERF_PROVIDER_KERNEL_MODE */
	bool callback_custom;	    /* callback="custom" */
	struct manifest_opt_u32 resource_base;
	struct manifest_counterset *sets; /* in document order, may be empty */
	size_t nr_sets;
};

/* A loaded manifest: only the counters section, plus what it needs from localization. */
struct manifest {
	char *path;		     /* path as given to manifest_load() */
	unsigned int schema_version; /* MANIFEST_SCHEMA_* */
	bool has_namespace;	     /* <counters> is in MANIFEST_COUNTERS_NS (else no namespace) */
	struct manifest_provider *providers; /* the schema allows one; more are warned about */
	size_t nr_providers;
	unsigned int nr_warnings; /* warnings printed by manifest_load() */
};

/* One value of a manifest enumeration (instances, aggregate, detailLevel, counterAttribute). */
struct manifest_enum {
	const char *name;  /* manifest spelling: "multipleAggregate" */
	const char *macro; /* C constant: "PERF_COUNTERSET_MULTI_AGGREGATE" */
	uint32_t value;	   /* its value */
};

/*
 * manifest_load - read and validate a manifest.
 * @path: in, the .man file; it also prefixes every diagnostic.
 * @ret_man: out, the model on success; the caller frees it with manifest_free().
 * @diag: in, where diagnostics go (every error and warning, sorted by line); NULL = silent.
 * Every rule is checked and every problem reported before returning.
 * Returns 0 (warnings may have been printed, see man->nr_warnings); -EINVAL when the file is
 * not well-formed XML or breaks a rule (errors printed); -errno when the file cannot be read
 * (-ENOENT, -EACCES, ...; one diagnostic "FILE: error: ..." printed); -ENOMEM.
 * *ret_man is written only on success.
 */
int manifest_load(const char *path, struct manifest **ret_man, FILE *diag);

/* manifest_free - free a manifest from manifest_load(); NULL is accepted. */
void manifest_free(struct manifest *man);

/*
 * manifest_counter_find - the counter with @id in @set, or NULL. Ids are unique per set.
 */
const struct manifest_counter *manifest_counter_find(const struct manifest_counterset *set,
						     uint32_t id);

/*
 * Enumerations: *_by_name() looks up the manifest spelling (case-sensitive), *_by_value()
 * the numeric value; both return NULL when unknown. Entries are static.
 * instances:   single multiple globalAggregate multipleAggregate globalAggregateHistory
 *              instanceAggregate (extension) -> PERF_COUNTERSET_*
 * aggregate:   undefined sum avg min max -> PERF_AGGREGATE_* (0..4)
 * detail:      standard advanced -> PERF_DETAIL_NOVICE, PERF_DETAIL_ADVANCED
 * attribute:   reference noDisplay noDigitGrouping displayAsReal displayAsHex -> PERF_ATTRIB_*
 */
const struct manifest_enum *manifest_instances_by_name(const char *name);
const struct manifest_enum *manifest_instances_by_value(uint32_t value);
const struct manifest_enum *manifest_aggregate_by_name(const char *name);
const struct manifest_enum *manifest_aggregate_by_value(uint32_t value);
const struct manifest_enum *manifest_detail_by_name(const char *name);
const struct manifest_enum *manifest_detail_by_value(uint32_t value);
const struct manifest_enum *manifest_attribute_by_name(const char *name);
const struct manifest_enum *manifest_attribute_by_value(uint32_t value);

/*
 * manifest_parse_guid - parse the registry form "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}"
 * (GUIDType: braces required, hex in any case) into @ret_guid.
 * Returns 0, or -EINVAL (nothing written) when @str does not match exactly.
 */
int manifest_parse_guid(const char *str, GUID *ret_guid);

/*
 * manifest_is_csymbol - true when @str is a CSymbolType: [_a-zA-Z][_0-9a-zA-Z]* (the schema
 * also allows the empty string; this function returns false for it).
 */
bool manifest_is_csymbol(const char *str);

#endif /* MANIFEST_H */

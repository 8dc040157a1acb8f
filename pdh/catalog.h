/* SPDX-License-Identifier: MIT */
/*
 * catalog.h - what libpdh knows about the counter sets of one machine (names, counters,
 * instances), how counter paths resolve against it and what PdhEnumObjectItems lists of
 * it (enum.c; typeperf's -q/-qx print those lists). Pure data and functions: the
 * consumer-API calls that fill a catalog are pdh_catalog_load's (common.c), the buffer
 * decoding is perfbuf.c's (through decode.c), so everything here is unit-tested.
 *
 * Listing and resolution rules (tools.md 4.2, 4.4; choices documented in typeperf's help):
 * - objects are counter-set names, counters the counter names, instances the names of
 *   PerfEnumerateCounterSetInstances, numbered "#1", "#2" ... when duplicated;
 * - hidden counters (base types, text, no-data types, PERF_DISPLAY_NOSHOW types such as
 *   PERF_AVERAGE_BULK, and PERF_ATTRIB_NO_DISPLAYABLE counters) are not listed and not
 *   matched by a wildcard; a hidden counter named exactly is accepted when it has a value
 *   (PERF_AVERAGE_BULK, a NO_DISPLAYABLE rate), never a base, text or no-data counter;
 * - a multi-instance object needs an instance part, a single-instance object must not
 *   have one; a wildcard never matches a counter set without instances;
 * - order: objects by name (case-insensitive), counters in registration order, and for
 *   each counter its instances in enumeration order (counter-major).
 */
#ifndef PDH_CATALOG_H
#define PDH_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "perflib-linux.h"
#include "names.h"

#define PDH_NO_INSTANCE SIZE_MAX /* pdh_target.instance of a single-instance set */

struct pdh_cat_counter {
	uint32_t id;	       /* CounterId */
	uint32_t type;	       /* winperf.h counter type */
	uint64_t attrib;       /* PERF_ATTRIB_* */
	int32_t scale;	       /* DefaultScale (typeperf does not apply it) */
	uint32_t detail_level; /* DetailLevel */
	uint32_t base_id;      /* BaseCounterId or PERFLIB_NO_ID */
	uint32_t time_id;      /* PerfTimeId or PERFLIB_NO_ID */
	uint32_t freq_id;      /* PerfFreqId or PERFLIB_NO_ID */
	uint32_t multi_id;     /* MultiId or PERFLIB_NO_ID */
	char *name;	       /* UTF-8 display name; pdh_cat_set_finish() fills missing ones */
};

struct pdh_cat_instance {
	uint32_t id;	  /* InstanceId */
	char *name;	  /* UTF-8 name as the provider gave it */
	unsigned int dup; /* 0 for the first instance of this name, then 1, 2, ... */
};

struct pdh_cat_set {
	GUID guid;		/* counter set */
	char *name;		/* UTF-8 counter-set name (PERF_REG_COUNTERSET_NAME_STRING) */
	uint32_t instance_type; /* PERF_COUNTERSET_* */
	size_t nr_counters;
	struct pdh_cat_counter *counters; /* registration order */
	size_t nr_instances;
	struct pdh_cat_instance *instances; /* enumeration order */
};

struct pdh_catalog {
	size_t nr_sets;
	struct pdh_cat_set *sets;
};

/* One (counter, instance) a path resolved to: indexes into the catalog. */
struct pdh_target {
	size_t set;	 /* index in catalog->sets */
	size_t counter;	 /* index in set->counters */
	size_t instance; /* index in set->instances, or PDH_NO_INSTANCE */
};

/* pdh_cat_set_multi - the set has instances in paths (PERF_COUNTERSET_FLAG_MULTIPLE) */
bool pdh_cat_set_multi(const struct pdh_cat_set *set);

/*
 * pdh_cat_set_finish - after decoding: give nameless counters their decimal id as name and a
 * nameless set its GUID string. 0 or -ENOMEM.
 */
int pdh_cat_set_finish(struct pdh_cat_set *set);

/* pdh_cat_set_free / pdh_catalog_free - free everything owned (accept zeroed structs) */
void pdh_cat_set_free(struct pdh_cat_set *set);
void pdh_catalog_free(struct pdh_catalog *cat);

/* pdh_cat_counter_find - the counter with @id, or NULL */
const struct pdh_cat_counter *pdh_cat_counter_find(const struct pdh_cat_set *set, uint32_t id);

/*
 * pdh_cat_counter_base - the id of the base counter of set->counters[@idx] by the one rule
 * (ctrtype_base_index: BaseCounterId, MultiId for multi types, else the next counter when
 * it is a base type); PERFLIB_NO_ID when there is none.
 */
uint32_t pdh_cat_counter_base(const struct pdh_cat_set *set, size_t idx);

/* pdh_cat_counter_listed - shown by -q/-qx and matched by wildcards (see the rules above) */
bool pdh_cat_counter_listed(const struct pdh_cat_counter *c);

/* pdh_cat_counter_selectable - can be named explicitly: the type has a value */
bool pdh_cat_counter_selectable(const struct pdh_cat_counter *c);

/* pdh_cat_set_find - index of the set named @name (case-insensitive), or -1 */
long pdh_cat_set_find(const struct pdh_catalog *cat, const char *name);

/* pdh_cat_counter_first - counter @idx is the first of @set with its name (duplicates resolve once) */
bool pdh_cat_counter_first(const struct pdh_cat_set *set, size_t idx);

/*
 * pdh_cat_resolve - expand @path (its machine part is ignored: @cat is that machine's) and
 * append one target per match to *@targets (grown with realloc; *@nr counts them).
 * Returns the number appended (0: the path does not resolve) or -ENOMEM.
 */
int pdh_cat_resolve(const struct pdh_catalog *cat, const struct pdh_cpath *path,
		    struct pdh_target **targets, size_t *nr);

/*
 * pdh_catalog_load - the counter sets of @machine (PDH's spelling, "\\\\name" or "name";
 * NULL or a local name: this machine) through the consumer API (names, registration, and
 * instances when @instances), each buffer with the grow-and-retry protocol (pdh/common.c).
 * @warn (may be NULL) hears about counter sets skipped because they vanished or cannot be
 * read. Returns a Win32 code (ERROR_BAD_NETPATH: the machine cannot be reached); *@cat is
 * empty on failure.
 */
ULONG pdh_catalog_load(struct pdh_catalog *cat, const char *machine, bool instances,
		       void (*warn)(const GUID *set, ULONG code));

/*
 * pdh_cat_set_load_instances - the instances of @set (loaded without them, from @machine) now, for the one
 * set of a catalog a caller needs them of; nothing for a single-instance set. Returns a
 * Win32 code (the set's GUID is no longer registered: ERROR_WMI_GUID_NOT_FOUND, ...).
 */
ULONG pdh_cat_set_load_instances(struct pdh_cat_set *set, const char *machine);

#endif /* PDH_CATALOG_H */

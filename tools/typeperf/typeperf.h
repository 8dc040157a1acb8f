/* SPDX-License-Identifier: MIT */
/*
 * typeperf.h - what the files of typeperf share. typeperf is a client of the public PDH
 * API, as the Windows tool is: sampling (sample.c: PdhExpandWildCardPath, PdhAddCounter,
 * PdhOpenLog, PdhUpdateLog) and the -q/-qx listing (machine.c: PdhEnumObjects,
 * PdhEnumObjectItems; list.c: the lines).
 */
#ifndef TYPEPERF_H
#define TYPEPERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "pdh.h"
#include "tp_opts.h"

/* The computer of -q/-qx. */
struct tp_machine {
	char *name;    /* "\\name" for the PDH calls, NULL for this machine */
	char *display; /* name used in messages: as written (path or -s), or the host name */
};

/* messages: tool_warn ("typeperf: ..."), tool_error ("Error: ..."): tools/common/tool.h */

/* tp_pdh_str - a short text for a PDH status returned by the PDH API */
const char *tp_pdh_str(PDH_STATUS status);

/*
 * tp_machine_init - fill @m for computer @name (as -s gives it, without "\\"; NULL: this
 * machine). tp_machine_free releases it (also after a failed init). -ENOMEM or 0.
 */
int tp_machine_init(struct tp_machine *m, const char *name);
void tp_machine_free(struct tp_machine *m);

/*
 * tp_machine_objects - the object names of @m (PdhEnumObjects, every detail level) as a
 * malloc'd MULTI_SZ in *@ret_list. Returns 0 or the PDH status: PDH_CSTATUS_NO_MACHINE
 * for a computer that is not this one, PDH_MEMORY_ALLOCATION_FAILURE, ...
 */
PDH_STATUS tp_machine_objects(const struct tp_machine *m, char **ret_list);

/*
 * tp_machine_items - the counters and instances of @object on @m (PdhEnumObjectItems,
 * every detail level) as malloc'd MULTI_SZ lists: *@ret_counters, and *@ret_instances,
 * which is NULL for an object without instances (single-instance) and an empty list for
 * a multi-instance object with none now. Returns 0 or the PDH status
 * (PDH_CSTATUS_NO_OBJECT when the object is gone).
 */
PDH_STATUS tp_machine_items(const struct tp_machine *m, const char *object, char **ret_counters,
			    char **ret_instances);

/*
 * tp_open_output - open opts->output for writing. An existing file needs -y, or a yes
 * typed on the terminal; when stdin is no terminal typeperf refuses (a script must say
 * -y). Called only once the counters resolved, so a failed run leaves the file alone.
 * NULL (message printed) on refusal or error.
 */
FILE *tp_open_output(const struct tp_opts *opts);

/*
 * tp_sample_run - expand the counter paths of @opts into a PDH query, write the log (CSV
 * or TSV) to the console ("CON"), after an empty first line, or to -o, and sample until
 * -sc or SIGINT. Returns a
 * TP_EXIT_* code; prints "Error: No valid counters." when nothing resolves.
 */
int tp_sample_run(const struct tp_opts *opts);

/*
 * tp_name_match - @name matches the object pattern @pattern of -q/-qx: '*' matches any
 * run of characters (also none), every other character itself, ASCII letters without
 * case (as PDH compares names)
 */
bool tp_name_match(const char *pattern, const char *name);

/*
 * tp_sort_names - the names of the MULTI_SZ @list in listing order (by name without
 * case; names equal without case only once, the first of them) as a malloc'd array of
 * pointers into @list in *@ret, their number in *@ret_nr. 0 or -ENOMEM.
 */
int tp_sort_names(const char *list, const char ***ret, size_t *ret_nr);

/*
 * tp_dup_numbers - number the duplicate names of @names as PDH numbers instances:
 * @ret_dup[i] is how many of @names[0..i-1] equal @names[i] without case (ASCII), so the
 * first of a name gets 0, the next 1, 2, ... 0 or -ENOMEM.
 */
int tp_dup_numbers(const char *const *names, size_t nr, unsigned int *ret_dup);

/*
 * tp_list_object - write the lines of @object to @out: for each counter of the MULTI_SZ
 * @counters, "\Object\Counter" when @instances (MULTI_SZ) is NULL (single-instance);
 * else "\Object(*)\Counter" (-q, @qx false), or with -qx one line per instance,
 * "\Object(Instance#n)\Counter" for the n-th duplicate, counter-major, and nothing when
 * the list is empty. Returns 0, -EIO on a write error, -ENOMEM.
 */
int tp_list_object(const char *object, const char *counters, const char *instances, bool qx,
		   FILE *out);

/*
 * tp_list - the -q (@qx false) or -qx listing of @m's objects (@objects: MULTI_SZ from
 * tp_machine_objects) matching @pattern (all when NULL; '*' allowed) to @out, one path
 * per line without computer, objects by name. An object that cannot be read any more
 * (gone since @objects was read) is left out with a warning. Returns the number of
 * objects listed, -EIO on a write error, -ENOMEM.
 */
int tp_list(const struct tp_machine *m, const char *objects, const char *pattern, bool qx,
	    FILE *out);

#endif /* TYPEPERF_H */

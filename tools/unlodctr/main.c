// SPDX-License-Identifier: MIT
/*
 * unlodctr - remove registered counter sets: those of a manifest (/m:), of a provider by
 * GUID (/g:) or by provider name (/p:). Counter sets with live instances are kept unless
 * --force is given.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "regman.h"
#include "tool.h"

static const char usage[] =
	"Usage: unlodctr /m:MANIFEST [--force]\n"
	"       unlodctr /g:{PROVIDER-GUID} [--force]\n"
	"       unlodctr /p:PROVIDER-NAME [--force]\n"
	"\n"
	"Remove the performance counter sets registered with lodctr: unpin the maps of\n"
	"each counter set (info, its segments and anything else pinned in its\n"
	"directory under the pin root, $PERFLIB_ROOT or " PERFLIB_DEFAULT_ROOT ").\n"
	"\n"
	"  /m:MANIFEST, -m MANIFEST  the counter sets declared in MANIFEST\n"
	"  /g:{GUID}, -g GUID        every counter set registered for that provider GUID\n"
	"  /p:NAME, -p NAME          every counter set whose provider name is NAME\n"
	"  --force                   remove even when providers still have live\n"
	"                            instances (they keep their mappings; new consumers\n"
	"                            no longer see the counter set)\n"
	"  --root PATH               pin root (overrides $PERFLIB_ROOT)\n"
	"  -h, --help, /?            show this help\n"
	"\n"
	"A counter set with live instances is refused without --force (error 170,\n"
	"ERROR_BUSY), and so is one registered by another perflib layout, which this\n"
	"library cannot read (--force removes it). Errors print 'Error: ...' and the\n"
	"exit status is the Win32 error code (1 if it does not fit in an exit status).\n"
	"Needs write access to the pin directory (root).\n";

/* remove one counter set; returns the Win32 code */
static ULONG remove_set(const GUID *guid, const char *name, bool force)
{
	char gs[37];
	int err;

	perflib_guid_to_string(guid, gs);
	err = perflib_unregister_counterset(guid, force);
	if (err == -EBUSY) {
		fprintf(stderr,
			"Error: counter set {%s} (%s) has live instances; stop its providers or "
			"use --force\n",
			gs, name ? name : "");
		return ERROR_BUSY;
	}
	if (err == -EPROTO) {
		fprintf(stderr,
			"Error: counter set {%s} (%s) was registered by another perflib layout; "
			"remove it with --force and register it again\n",
			gs, name ? name : "");
		return perflib_win32_error(err);
	}
	if (err == -ENOENT) {
		printf("Info: counter set {%s} (%s) is not registered\n", gs, name ? name : "");
		return ERROR_SUCCESS;
	}
	if (err) {
		tool_error("counter set {%s} (%s): %s", gs, name ? name : "", strerror(-err));
		return perflib_win32_error(err);
	}
	printf("Info: removed counter set {%s} (%s)\n", gs, name ? name : "");
	return ERROR_SUCCESS;
}

/* every registered counter set whose provider GUID or provider name matches */
static ULONG remove_provider(const GUID *prov_guid, const char *prov_name, bool force)
{
	GUID *guids = NULL;
	DWORD n = 0, i, size;
	ULONG st, code = ERROR_SUCCESS;
	unsigned int found = 0;

	st = PerfEnumerateCounterSet(NULL, NULL, 0, &n);
	if (st != ERROR_SUCCESS && st != ERROR_NOT_ENOUGH_MEMORY)
		return st;
	guids = calloc(n ? n : 1, sizeof(GUID));
	if (!guids)
		return ERROR_OUTOFMEMORY;
	st = PerfEnumerateCounterSet(NULL, guids, n, &n);
	if (st) {
		free(guids);
		return st;
	}
	for (i = 0; i < n; i++) {
		GUID g;
		WCHAR wname[512];
		char name[1024] = "";

		if (prov_guid) {
			st = PerfQueryCounterSetRegistrationInfo(NULL, &guids[i],
								 PERF_REG_PROVIDER_GUID, 0,
								 (BYTE *)&g, sizeof(g), &size);
			if (st || memcmp(&g, prov_guid, sizeof(g)))
				continue;
		} else {
			st = PerfQueryCounterSetRegistrationInfo(
				NULL, &guids[i], PERF_REG_PROVIDER_NAME, 0, (BYTE *)wname,
				sizeof(wname), &size);
			if (st || perflib_utf16_to_utf8(wname, 512, name, sizeof(name)) < 0 ||
			    strcmp(name, prov_name))
				continue;
		}
		found++;
		st = remove_set(&guids[i], prov_name, force);
		if (st && !code)
			code = st;
	}
	free(guids);
	if (!found) {
		tool_error("no counter set is registered for provider %s",
			   prov_name ? prov_name : "GUID");
		return ERROR_NOT_FOUND;
	}
	return code;
}

int main(int argc, char **argv)
{
	const char *manifest = NULL, *prov_name = NULL, *prov_guid_str = NULL, *val;
	struct manifest *man = NULL;
	struct regman rm = {0};
	ULONG code = ERROR_SUCCESS, st;
	bool force = false;
	GUID prov_guid;
	size_t i;
	int a, err;

	for (a = 1; a < argc; a++) {
		const char *arg = argv[a], **dst = NULL;

		if (!strcmp(arg, "-h") || win_switch(arg, "help", &val) || !strcmp(arg, "/?") ||
		    !strcmp(arg, "-?")) {
			fputs(usage, stdout);
			return 0;
		}
		if (win_switch(arg, "force", &val) || win_switch(arg, "f", &val)) {
			force = true;
			continue;
		}
		if (win_switch(arg, "m", &val))
			dst = &manifest;
		else if (win_switch(arg, "g", &val))
			dst = &prov_guid_str;
		else if (win_switch(arg, "p", &val))
			dst = &prov_name;
		else if (win_switch(arg, "root", &val))
			dst = NULL;
		if (!dst && !win_switch(arg, "root", &val)) {
			fprintf(stderr,
				"Error: %s: only /m:, /g: and /p: (manifest-based counters) exist "
				"here; see unlodctr --help\n",
				arg);
			return tool_exit_win32(ERROR_NOT_SUPPORTED);
		}
		if (!val || !*val) {
			if (a + 1 >= argc) {
				tool_error("%s needs a value", arg);
				return tool_exit_win32(ERROR_INVALID_PARAMETER);
			}
			val = argv[++a];
		}
		if (dst)
			*dst = val;
		else if (perflib_set_pin_root(val)) {
			tool_error("--root needs an absolute path");
			return tool_exit_win32(ERROR_INVALID_PARAMETER);
		}
	}
	if (!!manifest + !!prov_name + !!prov_guid_str != 1) {
		fprintf(stderr, "Error: give exactly one of /m:MANIFEST, /g:{GUID}, /p:NAME "
				"(see unlodctr --help)\n");
		return tool_exit_win32(ERROR_INVALID_PARAMETER);
	}
	if (prov_guid_str) {
		if (perflib_guid_from_string(prov_guid_str, &prov_guid)) {
			tool_error("%s is not a GUID ({xxxxxxxx-xxxx-...})", prov_guid_str);
			return tool_exit_win32(ERROR_INVALID_PARAMETER);
		}
		code = remove_provider(&prov_guid, NULL, force);
		goto done;
	}
	if (prov_name) {
		code = remove_provider(NULL, prov_name, force);
		goto done;
	}
	err = manifest_load(manifest, &man, stderr);
	if (err) {
		code = err == -ENOENT	? ERROR_FILE_NOT_FOUND
		       : err == -EINVAL ? ERROR_INVALID_DATA
					: perflib_win32_error(err);
		goto done;
	}
	if (regman_build(man, &rm)) {
		code = ERROR_OUTOFMEMORY;
		goto done;
	}
	for (i = 0; i < rm.nr_sets; i++) {
		st = remove_set(&rm.sets[i].counterset_guid, rm.sets[i].name, force);
		if (st && !code)
			code = st;
	}
done:
	if (code)
		tool_error("Unable to uninstall performance counters%s%s, error code is %u",
			   manifest ? " in " : "", manifest ? manifest : "", code);
	regman_free(&rm);
	manifest_free(man);
	return tool_exit_win32(code);
}

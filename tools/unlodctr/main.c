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

/* the command line */
struct args {
	const char *manifest;	   /* /m: */
	const char *prov_guid_str; /* /g: */
	const char *prov_name;	   /* /p: */
	bool force;		   /* --force */
};

static int set_root(struct tool_parser *p, const char *v)
{
	if (perflib_set_pin_root(v))
		return tool_fail(p, "--root needs an absolute path");
	return 0;
}

/* UNLODCTR <service-name> removes V1 counters on Windows: refused */
static int operand(struct tool_parser *p, const char *arg)
{
	fprintf(stderr,
		"Error: %s: only /m:, /g: and /p: (manifest-based counters) exist here; see "
		"unlodctr --help\n",
		arg);
	return tool_stop(p, tool_exit_win32(ERROR_NOT_SUPPORTED));
}

/* unlodctr's switches (tools/common/tool.h: "/m:file", "-g GUID", "--force", ...) */
static const struct tool_opt switches[] = {
	TOOL_OPT_HELP("?|h|help"),
	TOOL_OPT_FLAG("force|f", struct args, force),
	TOOL_OPT_STR("m", struct args, manifest, 0),
	TOOL_OPT_STR("g", struct args, prov_guid_str, 0),
	TOOL_OPT_STR("p", struct args, prov_name, 0),
	TOOL_OPT_CALL("root", TOOL_VALUE, set_root),
	TOOL_OPT_END,
};

static const struct tool_cli cli = {
	.name = "unlodctr",
	.usage = usage,
	.windows = true,
	.exit_usage = ERROR_INVALID_PARAMETER, /* 87, as tool_exit_win32 gives it */
	.opts = switches,
	.operand = operand,
};

/* remove the counter sets of the manifest; a Win32 code */
static ULONG remove_manifest(const char *manifest, bool force)
{
	struct manifest *man = NULL;
	struct regman rm = {0};
	ULONG code = ERROR_SUCCESS, st;
	size_t i;
	int err;

	err = manifest_load(manifest, &man, stderr);
	if (err) {
		code = err == -ENOENT	? ERROR_FILE_NOT_FOUND
		       : err == -EINVAL ? ERROR_INVALID_DATA
					: perflib_win32_error(err);
		goto out;
	}
	if (regman_build(man, &rm)) {
		code = ERROR_OUTOFMEMORY;
		goto out;
	}
	for (i = 0; i < rm.nr_sets; i++) {
		st = remove_set(&rm.sets[i].counterset_guid, rm.sets[i].name, force);
		if (st && !code)
			code = st;
	}
out:
	regman_free(&rm);
	manifest_free(man);
	return code;
}

int main(int argc, char **argv)
{
	struct args a = {0};
	struct tool_parser p;
	ULONG code;
	GUID prov_guid;
	int status;

	status = tool_parse(&p, &cli, &a, argc, argv);
	if (status != TOOL_CONTINUE)
		return status;
	if (!!a.manifest + !!a.prov_name + !!a.prov_guid_str != 1) {
		fprintf(stderr, "Error: give exactly one of /m:MANIFEST, /g:{GUID}, /p:NAME "
				"(see unlodctr --help)\n");
		return tool_exit_win32(ERROR_INVALID_PARAMETER);
	}
	if (a.prov_guid_str && perflib_guid_from_string(a.prov_guid_str, &prov_guid)) {
		tool_error("%s is not a GUID ({xxxxxxxx-xxxx-...})", a.prov_guid_str);
		return tool_exit_win32(ERROR_INVALID_PARAMETER);
	}
	if (a.prov_guid_str)
		code = remove_provider(&prov_guid, NULL, a.force);
	else if (a.prov_name)
		code = remove_provider(NULL, a.prov_name, a.force);
	else
		code = remove_manifest(a.manifest, a.force);
	if (code)
		tool_error("Unable to uninstall performance counters%s%s, error code is %u",
			   a.manifest ? " in " : "", a.manifest ? a.manifest : "", code);
	return tool_exit_win32(code);
}

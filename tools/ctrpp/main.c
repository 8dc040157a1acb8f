// SPDX-License-Identifier: MIT
/*
 * ctrpp - the counter preprocessor: validate a performance-counter manifest and generate
 * the provider header (-o), its string table (-rc) and a consumer symbol header (-ch).
 * Command line as the Windows tool (tools.md 2.1); see usage() for what differs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctrpp.h"
#include "regman.h"
#include "tool.h"

#define EXIT_INVALID 1 /* manifest errors, generation errors, I/O errors */
#define EXIT_USAGE 2   /* bad command line, refused switch */

static const char usage_text[] =
	"NAME\n"
	"    ctrpp - validate a performance-counter manifest and generate provider code\n"
	"\n"
	"SYNOPSIS\n"
	"    ctrpp [-o codeFile] [-rc rcFile] [-ch symFile] [-prefix prefix]\n"
	"          [-NotificationCallback] [-MemoryRoutines] inputFile\n"
	"    ctrpp -? | -h | --help\n"
	"\n"
	"DESCRIPTION\n"
	"    ctrpp reads the <counters> section of an instrumentation manifest (.man),\n"
	"    checks every rule of the counters schema and writes C code for a perflib V2\n"
	"    provider: the counter-set templates, the provider GUID and handle variables,\n"
	"    and CounterInitialize()/CounterCleanup(), in the layout of the Windows 7+\n"
	"    CTRPP. Without -o, -rc or -ch it only validates. Errors are printed as\n"
	"    FILE:LINE: error: message; no output file is written when there is one.\n"
	"\n"
	"    Switches are case-insensitive and start with '-', '/' or '--' (an argument\n"
	"    that starts with '/' but is no switch name is a path). A switch value is\n"
	"    the next argument or follows ':' or '=' (-o:file). '--' ends the switches.\n"
	"\n"
	"OPTIONS\n"
	"    -o codeFile\n"
	"        Write the provider header. It includes <perflib.h> and may be included in\n"
	"        any number of C translation units (DECLSPEC_SELECTANY variables,\n"
	"        FORCEINLINE functions). Generated names: <prefix><provider symbol>\n"
	"        (HANDLE) and <prefix><provider symbol>Guid, <prefix><counterSet symbol>Guid\n"
	"        and <prefix><counterSet symbol>Info (template), <prefix>CounterInitialize,\n"
	"        <prefix>CounterCleanup, and '#define <counter symbol> (<id>)' for each\n"
	"        counter with a symbol (never prefixed).\n"
	"    -rc rcFile\n"
	"        Write the STRINGTABLE of names and descriptions (resource IDs from 1 or\n"
	"        resourceBase in blocks of four; nameID/descriptionID with schema 2.0).\n"
	"        Written for Windows build compatibility; perflib's lodctr reads the\n"
	"        strings from the manifest itself. Kernel-mode providers are included.\n"
	"    -ch symFile\n"
	"        Write a header for consumers holding macros only, so it can be included\n"
	"        next to the -o header: <prefix><provider symbol>_GUID, and for each counter\n"
	"        set <prefix><symbol>_NAME (a WCHAR literal, PERFLIB_WTEXT(\"...\"): u\"...\",\n"
	"        or L\"...\" under -fshort-wchar) and <prefix><symbol>_GUID (a GUID\n"
	"        initializer: static const GUID g = Foo_GUID;), plus the counter-id macros.\n"
	"        The -o header defines the provider handle (EXTERN_C DECLSPEC_SELECTANY\n"
	"        HANDLE <provider symbol>): code that defines it again, as node's provider\n"
	"        does, must drop its own definition (README, \"Porting Windows code\").\n"
	"    -prefix prefix\n"
	"        Prepend prefix (a C identifier) to every generated variable and function.\n"
	"    -NotificationCallback\n"
	"        Generate CounterInitialize(NotificationCallback, MemoryAllocationFunction,\n"
	"        MemoryFreeFunction, MemoryFunctionsContext) even when the provider does not\n"
	"        say callback=\"custom\" (which has the same effect).\n"
	"    -MemoryRoutines\n"
	"        Deprecated; the same as -NotificationCallback.\n"
	"    -BackCompat\n"
	"        Accepted and ignored (with a note): it only changes kernel-mode code.\n"
	"    -summary path, -sumPath path\n"
	"        Reserved on Windows; accepted and ignored (with a note).\n"
	"    -legacy\n"
	"        Refused: the Vista templates (PerfAutoInitialize) are not supported.\n"
	"    -migrate outputFile\n"
	"        Refused: schema 1.1 and 2.0 manifests are both read as they are.\n"
	"    -?, -h, --help\n"
	"        Print this help and exit.\n"
	"\n"
	"DIFFERENCES FROM WINDOWS\n"
	"    Kernel-mode providers (providerType=\"kernelMode\") get no code, with a note:\n"
	"    perflib is a user-mode library. A provider or counter set without a symbol\n"
	"    gets one made from the manifest file name (foo.man: foo, foo_CounterSet1, ...),\n"
	"    with a warning. The banner says 'by ctrpp'. GUID initializers brace Data4 and\n"
	"    a negative scale is written (LONG)4294967293, so that the header compiles\n"
	"    cleanly with -Wall -Wextra. Counter types without a fixed size\n"
	"    (perf_counter_text) are refused because perflib cannot register them.\n"
	"\n"
	"EXIT STATUS\n"
	"    0  success (warnings may have been printed)\n"
	"    1  the manifest is invalid or cannot be turned into code (a counter without\n"
	"       a fixed size, a generated name or resource ID used twice, two user-mode\n"
	"       providers), or an output file could not be written\n"
	"    2  usage error or refused switch\n"
	"\n"
	"EXAMPLES\n"
	"    ctrpp app.man                               validate only\n"
	"    ctrpp -o appCounters.h -rc appCounters.rc app.man\n"
	"    ctrpp -o appCounters.h -prefix App -NotificationCallback app.man\n";

struct args {
	const char *input;
	const char *out_h;
	const char *out_rc;
	const char *out_ch;
	const char *prefix;
	bool callback;
};

#define ARGS(p) ((struct args *)(p)->ctx)

static int set_prefix(struct tool_parser *p, const char *v)
{
	if (ARGS(p)->prefix)
		return tool_fail(p, "%s given twice", p->sw);
	if (!manifest_is_csymbol(v))
		return tool_fail(p, "-prefix '%s' is not a C identifier", v);
	ARGS(p)->prefix = v;
	return 0;
}

static int refuse_legacy(struct tool_parser *p, const char *v)
{
	(void)v;
	return tool_fail(p, "-legacy is not supported: the Vista templates (PerfAutoInitialize) "
			    "have no perflib counterpart; use -o");
}

static int refuse_migrate(struct tool_parser *p, const char *v)
{
	(void)v;
	return tool_fail(p, "-migrate is not supported: schema 1.1 and 2.0 manifests are both "
			    "read as they are");
}

static int memory_routines(struct tool_parser *p, const char *v)
{
	(void)v;
	fprintf(stderr, "ctrpp: note: -MemoryRoutines is deprecated; treated as "
			"-NotificationCallback\n");
	ARGS(p)->callback = true;
	return 0;
}

static int note_backcompat(struct tool_parser *p, const char *v)
{
	(void)p;
	(void)v;
	fprintf(stderr, "ctrpp: note: -BackCompat only changes kernel-mode code, which is not "
			"generated; ignored\n");
	return 0;
}

static int note_reserved(struct tool_parser *p, const char *v)
{
	(void)v;
	fprintf(stderr, "ctrpp: note: %s is reserved; ignored\n", p->sw);
	return 0;
}

static int set_input(struct tool_parser *p, const char *arg)
{
	if (ARGS(p)->input)
		return tool_fail(p, "more than one input manifest ('%s' and '%s')", ARGS(p)->input,
				 arg);
	ARGS(p)->input = arg;
	return 0;
}

/* ctrpp's switches (tools/common/tool.h: "-o file", "/o:file", "--o=file", ...) */
static const struct tool_opt switches[] = {
	TOOL_OPT_STR("o", struct args, out_h, TOOL_ONCE),
	TOOL_OPT_STR("rc", struct args, out_rc, TOOL_ONCE),
	TOOL_OPT_STR("ch", struct args, out_ch, TOOL_ONCE),
	TOOL_OPT_CALL("prefix", TOOL_VALUE, set_prefix),
	TOOL_OPT_CALL("legacy", 0, refuse_legacy),
	TOOL_OPT_CALL("migrate", TOOL_VALUE, refuse_migrate),
	TOOL_OPT_CALL("MemoryRoutines", 0, memory_routines),
	TOOL_OPT_FLAG("NotificationCallback", struct args, callback),
	TOOL_OPT_CALL("BackCompat", 0, note_backcompat),
	TOOL_OPT_CALL("summary|sumPath", TOOL_VALUE, note_reserved),
	TOOL_OPT_HELP("?|h|help"),
	TOOL_OPT_END,
};

static const struct tool_cli cli = {
	.name = "ctrpp",
	.usage = usage_text,
	.exit_usage = EXIT_USAGE,
	.opts = switches,
	.operand = set_input,
};

/* Refuse to overwrite the manifest, or to write two outputs to one file. */
static int check_outputs(const struct args *a)
{
	const char *outs[] = {a->out_h, a->out_rc, a->out_ch};
	struct stat in, st[3];
	bool have[3];
	size_t i, j;

	if (stat(a->input, &in))
		return 0; /* manifest_load() reports it */
	for (i = 0; i < 3; i++) {
		have[i] = outs[i] && !stat(outs[i], &st[i]);
		if (have[i] && st[i].st_dev == in.st_dev && st[i].st_ino == in.st_ino) {
			fprintf(stderr, "ctrpp: output file %s is the input manifest\n", outs[i]);
			return -EINVAL;
		}
		for (j = 0; outs[i] && j < i; j++)
			if (outs[j] && (!strcmp(outs[i], outs[j]) ||
					(have[i] && have[j] && st[i].st_dev == st[j].st_dev &&
					 st[i].st_ino == st[j].st_ino))) {
				fprintf(stderr, "ctrpp: %s is given for two outputs\n", outs[i]);
				return -EINVAL;
			}
	}
	return 0;
}

/* Write a generated buffer to its file; a failed write leaves no partial file. */
static int write_file(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f) {
		err = -errno;
	} else {
		if (fwrite(buf, 1, len, f) != len)
			err = -errno ? -errno : -EIO;
		if (fclose(f) && !err)
			err = -errno;
		if (err)
			unlink(path);
	}
	if (err)
		fprintf(stderr, "ctrpp: cannot write %s: %s\n", path, strerror(-err));
	return err;
}

/* The three outputs, generated in memory first so that an error writes nothing. */
struct output {
	const char *path;
	char *buf;
	size_t len;
};

static int generate(struct ctrpp *c, const struct args *a, struct output out[3])
{
	FILE *f;
	int i, err = 0;

	if (a->out_h || a->out_ch)
		err = ctrpp_prepare(c);
	for (i = 0; i < 3 && !err; i++) {
		if (!out[i].path)
			continue;
		f = open_memstream(&out[i].buf, &out[i].len);
		if (!f)
			return -ENOMEM;
		if (i == 0)
			ctrpp_write_header(c, f);
		else if (i == 1)
			err = ctrpp_write_rc(c, f);
		else
			ctrpp_write_symbols(c, f);
		if (fclose(f) && !err)
			err = -ENOMEM;
	}
	return err;
}

int main(int argc, char **argv)
{
	struct args a = {0};
	struct ctrpp c = {0};
	struct manifest *man = NULL;
	struct tool_parser p;
	struct output out[3];
	int i, err, status;

	status = tool_parse(&p, &cli, &a, argc, argv);
	if (status != TOOL_CONTINUE)
		return status;
	if (!a.input)
		return tool_cli_error(&cli, "no input manifest");
	if (check_outputs(&a))
		return EXIT_USAGE;
	err = manifest_load(a.input, &man, stderr);
	if (err == -ENOMEM)
		fprintf(stderr, "ctrpp: out of memory\n");
	if (err)
		return EXIT_INVALID;

	c.input = a.input;
	c.prefix = a.prefix ? a.prefix : "";
	c.callback = a.callback;
	c.man = man;
	out[0] = (struct output){a.out_h, NULL, 0};
	out[1] = (struct output){a.out_rc, NULL, 0};
	out[2] = (struct output){a.out_ch, NULL, 0};
	err = generate(&c, &a, out);
	if (err == -ENOMEM)
		fprintf(stderr, "ctrpp: out of memory\n");
	for (i = 0; i < 3 && !err; i++)
		if (out[i].path)
			err = write_file(out[i].path, out[i].buf, out[i].len);
	if (!err && !a.out_h && !a.out_rc && !a.out_ch)
		fprintf(stderr, "ctrpp: %s is valid; nothing to generate (use -o, -rc or -ch)\n",
			a.input);
	status = err ? EXIT_INVALID : 0;
	for (i = 0; i < 3; i++)
		free(out[i].buf);
	ctrpp_release(&c);
	manifest_free(man);
	return status;
}

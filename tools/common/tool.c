/* SPDX-License-Identifier: MIT */
/* tool.c - the tools' argument parser, error printing and exit codes. See tool.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tool.h"

/*
 * The name of the switch @arg ("-x", "/x", "--x", before any ':' or '=') and its length in
 * *@ret_len; NULL when @arg cannot be a switch (no prefix, or "-" or "/" alone).
 */
static const char *switch_name(const char *arg, size_t *ret_len)
{
	const char *name;

	if ((arg[0] != '-' && arg[0] != '/') || !arg[1])
		return NULL;
	name = arg + ((arg[0] == '-' && arg[1] == '-') ? 2 : 1);
	*ret_len = strcspn(name, ":=");
	return name;
}

/* whether the '|'-separated @names hold @name (@n characters), without case */
static bool names_hold(const char *names, const char *name, size_t n)
{
	const char *bar;
	size_t len;

	for (;;) {
		bar = strchr(names, '|');
		len = bar ? (size_t)(bar - names) : strlen(names);
		if (len == n && n && !strncasecmp(names, name, n))
			return true;
		if (!bar)
			return false;
		names = bar + 1;
	}
}

/*
 * the entry of @table that @arg names, its inline value after ':' or '=' in *@inline_val
 * (else NULL); NULL when @arg names none: *@unknown then says whether it looked like a
 * switch ('-' or "--" with a name; an argument starting with '/' that names no switch is
 * a path, as Windows tools take "/dir/file" on Linux) or is an operand
 */
static const struct tool_opt *opt_of(const struct tool_opt *table, const char *arg,
				     const char **inline_val, bool *unknown)
{
	const char *name;
	size_t n;

	*inline_val = NULL;
	*unknown = false;
	name = switch_name(arg, &n);
	if (!name)
		return NULL;
	for (; table && table->names; table++) {
		if (names_hold(table->names, name, n)) {
			if (name[n])
				*inline_val = name + n + 1;
			return table;
		}
	}
	*unknown = arg[0] != '/';
	return NULL;
}

static void vprint(const char *prefix, const char *fmt, va_list ap)
{
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static int cli_verror(const struct tool_cli *cli, const char *fmt, va_list ap)
{
	if (cli->windows) {
		vprint("Error: ", fmt, ap);
		fprintf(stderr, "Type \"%s -?\" for help.\n", cli->name);
	} else {
		fprintf(stderr, "%s: ", cli->name);
		vprint("", fmt, ap);
		if (cli->synopsis)
			fputs(cli->synopsis, stderr);
		else
			fprintf(stderr, "Try '%s --help' for more information.\n", cli->name);
	}
	return cli->exit_usage;
}

int tool_cli_error(const struct tool_cli *cli, const char *fmt, ...)
{
	va_list ap;
	int status;

	va_start(ap, fmt);
	status = cli_verror(cli, fmt, ap);
	va_end(ap);
	return status;
}

int tool_fail(struct tool_parser *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	p->status = cli_verror(p->cli, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int tool_stop(struct tool_parser *p, int status)
{
	p->status = status;
	return -EINVAL;
}

int tool_help(struct tool_parser *p)
{
	fputs(p->cli->usage, stdout);
	p->status = 0;
	return 0;
}

const char *tool_peek(const struct tool_parser *p)
{
	const char *next, *inl;
	bool unknown;

	if (p->i + 1 >= p->argc)
		return NULL;
	next = p->argv[p->i + 1];
	if (opt_of(p->cli->opts, next, &inl, &unknown) || unknown)
		return NULL;
	return next;
}

const char *tool_take(struct tool_parser *p)
{
	const char *next = tool_peek(p);

	if (next)
		p->i++;
	return next;
}

/* decimal digits (no sign, no blanks) of a number from @lo to @hi; 0 or -EINVAL */
static int parse_uint(const char *s, unsigned int lo, unsigned int hi, unsigned int *ret)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*ret = (unsigned int)v;
	return 0;
}

/* the switch at argv[p->i], matched to @o, with @inl after its ':' or '=' (or NULL) */
static void do_opt(struct tool_parser *p, const struct tool_opt *o, const char *inl)
{
	bool takes = o->kind == TOOL_STR || o->kind == TOOL_UINT || (o->flags & TOOL_VALUE);
	const char *v = inl && *inl ? inl : NULL;
	void *field = (char *)p->ctx + o->off;
	int err = 0;

	p->arg = p->argv[p->i];
	/* messages name the switch as typed, without its value: "--mode", "/M" */
	snprintf(p->sw, sizeof(p->sw), "%.*s", (int)strcspn(p->arg + 1, ":=") + 1, p->arg);
	if (!takes && inl) {
		tool_fail(p, "%s takes no value", p->arg);
		return;
	}
	if (takes && !v) {
		/* the next argument; "/m:" with nothing after the colon too */
		if (o->flags & TOOL_OPTIONAL)
			v = tool_take(p);
		else if (p->i + 1 < p->argc)
			v = p->argv[++p->i];
		else {
			tool_fail(p, "%s needs a value", p->sw);
			return;
		}
	}
	switch (o->kind) {
	case TOOL_FLAG:
		*(bool *)field = true;
		break;
	case TOOL_STR:
		if ((o->flags & TOOL_ONCE) && *(const char **)field) {
			tool_fail(p, "%s given twice", p->sw);
			return;
		}
		*(const char **)field = v;
		break;
	case TOOL_UINT:
		if (parse_uint(v, o->min, o->max, field))
			tool_fail(p, "bad value '%s' for %s: expected a number from %u to %u", v,
				  p->sw, o->min, o->max);
		break;
	case TOOL_CALL:
		err = o->fn(p, v);
		break;
	case TOOL_HELP:
		tool_help(p);
		break;
	}
	if (err < 0 && p->status == TOOL_CONTINUE)
		tool_fail(p, "bad value '%s' for %s", v ? v : "", p->sw);
}

/* an argument that is no switch: the subcommand, else the tool's operand */
static void do_operand(struct tool_parser *p, const char *arg)
{
	const struct tool_cmd *c;

	p->arg = arg;
	if (p->cli->cmds && !p->cmd) {
		for (c = p->cli->cmds; c->name && strcmp(c->name, arg); c++)
			;
		if (c->name)
			p->cmd = c;
		else
			tool_fail(p, "unknown command '%s'", arg);
		return;
	}
	if (!p->cli->operand)
		tool_fail(p, "unexpected argument '%s'", arg);
	else if (p->cli->operand(p, arg) < 0 && p->status == TOOL_CONTINUE)
		tool_fail(p, "unexpected argument '%s'", arg);
}

int tool_parse(struct tool_parser *p, const struct tool_cli *cli, void *ctx, int argc,
	       char *const *argv)
{
	const struct tool_opt *o;
	bool operands = false, unknown;
	const char *inl, *arg;

	*p = (struct tool_parser){
		.cli = cli, .ctx = ctx, .argc = argc, .argv = argv, .status = TOOL_CONTINUE};
	for (p->i = 1; p->i < argc && p->status == TOOL_CONTINUE; p->i++) {
		arg = argv[p->i];
		if (!operands && !strcmp(arg, "--")) {
			operands = true; /* the switches end here */
			continue;
		}
		o = operands ? NULL : opt_of(cli->opts, arg, &inl, &unknown);
		if (o)
			do_opt(p, o, inl);
		else if (!operands && unknown)
			tool_fail(p, "unknown switch '%s'", arg);
		else
			do_operand(p, arg);
	}
	if (p->status == TOOL_CONTINUE && cli->cmds && !p->cmd)
		tool_fail(p, "no command given");
	return p->status;
}

void tool_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint("Error: ", fmt, ap);
	va_end(ap);
}

void tool_warn(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", program_invocation_short_name);
	va_start(ap, fmt);
	vprint("", fmt, ap);
	va_end(ap);
}

int tool_exit_win32(ULONG code)
{
	return code == 0 ? 0 : code <= 255 ? (int)code : 1;
}

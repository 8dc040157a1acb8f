/* SPDX-License-Identifier: MIT */
/* tp_opts.c - typeperf's command line and -config/-cf files. See tp_opts.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "lines.h"
#include "tool.h"
#include "tp_opts.h"

/* decimal digits of [s, end) into *ret; -EINVAL when empty, not digits or too large */
static int parse_part(const char *s, const char *end, unsigned long *ret)
{
	unsigned long v = 0;

	if (s == end)
		return -EINVAL;
	for (; s < end; s++) {
		if (*s < '0' || *s > '9' || v > 100000000UL)
			return -EINVAL;
		v = v * 10 + (unsigned long)(*s - '0');
	}
	*ret = v;
	return 0;
}

int tp_parse_interval(const char *s, unsigned int *ret_seconds)
{
	unsigned long part[3], total = 0;
	const char *p = s, *colon;
	int n = 0, i;

	/* split at up to two colons: ss, mm:ss or hh:mm:ss */
	for (;;) {
		colon = strchr(p, ':');
		if (n == 3 || parse_part(p, colon ? colon : p + strlen(p), &part[n]))
			return -EINVAL;
		n++;
		if (!colon)
			break;
		p = colon + 1;
	}
	for (i = 0; i < n; i++) {
		/* parts after the first are minutes or seconds of a clock */
		if (i > 0 && part[i] >= 60)
			return -EINVAL;
		total = total * 60 + part[i];
	}
	if (total < 1 || total > 366UL * 24 * 3600)
		return -EINVAL;
	*ret_seconds = (unsigned int)total;
	return 0;
}

void tp_opts_free(struct tp_opts *opts)
{
	tool_free_lines(opts->counters, opts->nr_counters);
	free(opts->output);
	free(opts->query_object);
	free(opts->machine);
	memset(opts, 0, sizeof(*opts));
}

struct parser {
	struct tp_opts *o;
	struct tool_strv counters;
	char *err;
	size_t err_size;
	bool in_config; /* parsing the arguments of a -config file */
};

__attribute__((format(printf, 2, 3))) static int usage_error(struct parser *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(p->err, p->err_size, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* the switch name of @arg ("-si" or "/SI" -> "si"), or NULL when @arg is no switch */
static int set_string(char **dst, const char *value)
{
	char *copy = strdup(value);

	if (!copy)
		return -ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
}

static int set_format(struct parser *p, const char *v)
{
	if (!strcasecmp(v, "CSV"))
		p->o->format = PDH_LOG_TYPE_CSV;
	else if (!strcasecmp(v, "TSV"))
		p->o->format = PDH_LOG_TYPE_TSV;
	else if (!strcasecmp(v, "BIN"))
		return usage_error(p, "-f BIN is not supported: the PDH binary log format (.blg) "
				      "is undocumented; use -f CSV or -f TSV");
	else if (!strcasecmp(v, "SQL"))
		return usage_error(p, "-f SQL is not supported: SQL logging goes through an ODBC "
				      "data source, which this typeperf does not use; use -f CSV "
				      "or -f TSV");
	else
		return usage_error(p, "-f %s: unknown format (CSV or TSV)", v);
	return 0;
}

static int set_samples(struct parser *p, const char *v)
{
	unsigned long n = 0;
	const char *s;

	for (s = v; *s; s++) {
		if (*s < '0' || *s > '9' || n > 100000000000UL)
			return usage_error(p, "-sc %s: not a number of samples", v);
		n = n * 10 + (unsigned long)(*s - '0');
	}
	if (!*v || n == 0)
		return usage_error(p, "-sc %s: the number of samples must be at least 1", v);
	p->o->samples = n;
	return 0;
}

static int add_counter_file(struct parser *p, const char *path)
{
	char **lines;
	size_t nr, i;
	int err;

	err = tool_read_lines(path, true, &lines, &nr);
	if (err == -ENOMEM)
		return err;
	if (err)
		return usage_error(p, "-cf %s: %s", path, strerror(-err));
	for (i = 0; !err && i < nr; i++)
		err = tool_strv_add(&p->counters, lines[i]);
	tool_free_lines(lines, nr);
	return err;
}

static int parse_args(struct parser *p, size_t argc, char *const *argv);

/* -config: turn the settings file into arguments and parse them in place */
static int add_config(struct parser *p, const char *path)
{
	struct tool_strv args = {0};
	char **lines, name[64];
	bool counters = false, section = false;
	size_t nr, i;
	int err;

	if (p->in_config)
		return usage_error(p, "-config %s: a settings file cannot load another one", path);
	err = tool_read_lines(path, true, &lines, &nr);
	if (err == -ENOMEM)
		return err;
	if (err)
		return usage_error(p, "-config %s: %s", path, strerror(-err));
	for (i = 0; !err && i < nr; i++) {
		size_t len = strlen(lines[i]);

		if (lines[i][0] == '[') {
			if (len < 3 || lines[i][len - 1] != ']' || len - 2 >= sizeof(name) - 1) {
				err = usage_error(p, "-config %s: bad section line \"%s\"", path,
						  lines[i]);
				break;
			}
			/* "[si]" -> "-si"; counter sections switch to positionals */
			snprintf(name, sizeof(name), "-%.*s", (int)(len - 2), lines[i] + 1);
			counters = !strcasecmp(name, "-c") || !strcasecmp(name, "-counter") ||
				   !strcasecmp(name, "-counters");
			section = true;
			if (!counters)
				err = tool_strv_add(&args, name);
			continue;
		}
		if (!section) {
			err = usage_error(p, "-config %s: \"%s\" is outside a [switch] section",
					  path, lines[i]);
			break;
		}
		err = tool_strv_add(&args, lines[i]);
	}
	tool_free_lines(lines, nr);
	if (!err) {
		p->in_config = true;
		err = parse_args(p, args.nr, args.v);
		p->in_config = false;
	}
	tool_free_lines(args.v, args.nr);
	return err;
}

enum { SW_HELP, SW_YES, SW_Q, SW_QX, SW_CF, SW_F, SW_SI, SW_O, SW_SC, SW_S, SW_CONFIG };

/* typeperf's switches (tools/common/tool.h: "-si 5", "/si:5", "--si=5", ...) */
static const struct tool_switch switches[] = {
	{"?", SW_HELP, false},	     {"h", SW_HELP, false}, {"help", SW_HELP, false},
	{"y", SW_YES, false},	     {"q", SW_Q, false},    {"qx", SW_QX, false},
	{"cf", SW_CF, true},	     {"f", SW_F, true},	    {"si", SW_SI, true},
	{"o", SW_O, true},	     {"sc", SW_SC, true},   {"s", SW_S, true},
	{"config", SW_CONFIG, true}, {NULL, 0, false},
};

static int parse_args(struct parser *p, size_t argc, char *const *argv)
{
	const struct tool_switch *sw;
	struct tp_opts *o = p->o;
	const char *v = "", *inl; /* "": a switch without value */
	bool unknown;
	int i, n = (int)argc;
	int err = 0;

	for (i = 0; !err && i < n; i++) {
		sw = tool_switch_of(switches, argv[i], &inl, &unknown);
		/* a '/' argument is a switch here too: counter paths start with '\' */
		if (!sw && (unknown || (argv[i][0] == '/' && argv[i][1]))) {
			err = usage_error(p, "unknown switch %s (see typeperf -?)", argv[i]);
			continue;
		}
		if (!sw) {
			err = tool_strv_add(&p->counters, argv[i]);
			continue;
		}
		if (sw->value) {
			v = tool_value(n, argv, &i, inl);
			if (!v) {
				err = usage_error(p, "%s needs a value", argv[i]);
				continue;
			}
		} else if (inl && sw->id != SW_Q && sw->id != SW_QX) {
			err = usage_error(p, "%s takes no value", argv[i]);
			continue;
		}
		switch (sw->id) {
		case SW_HELP:
			o->help = true;
			break;
		case SW_YES:
			o->yes = true;
			break;
		case SW_Q:
		case SW_QX:
			o->query = sw->id == SW_QX ? TP_QUERY_QX : TP_QUERY_Q;
			/* optional object: inline, or the next argument unless a switch or a path */
			if (inl)
				err = set_string(&o->query_object, inl);
			else if (i + 1 < n && !strchr("-/\\", argv[i + 1][0]))
				err = set_string(&o->query_object, argv[++i]);
			break;
		case SW_CF:
			err = add_counter_file(p, v);
			break;
		case SW_F:
			err = set_format(p, v);
			break;
		case SW_SI:
			if (tp_parse_interval(v, &o->interval))
				err = usage_error(p,
						  "-si %s: expected [[hh:]mm:]ss, at least 1 "
						  "second",
						  v);
			break;
		case SW_O:
			if (v && !strncasecmp(v, "SQL:", 4)) /* v is set: a value switch */
				err = usage_error(p, "-o %s: SQL logging (ODBC) is not supported",
						  v);
			if (!err)
				err = set_string(&o->output, v);
			break;
		case SW_SC:
			err = set_samples(p, v);
			break;
		case SW_S:
			while (*v == '\\')
				v++;
			if (!*v)
				err = usage_error(p, "-s needs a computer name");
			if (!err)
				err = set_string(&o->machine, v);
			break;
		default: /* SW_CONFIG */
			err = add_config(p, v);
			break;
		}
	}
	return err;
}

int tp_opts_parse(int argc, char *const *argv, struct tp_opts *ret, char *err, size_t err_size)
{
	struct parser p = {.o = ret, .err = err, .err_size = err_size};
	int e;

	memset(ret, 0, sizeof(*ret));
	ret->interval = 1;
	ret->format = PDH_LOG_TYPE_CSV;
	if (err_size)
		err[0] = '\0';
	e = parse_args(&p, argc > 1 ? (size_t)argc - 1 : 0, argv + 1);
	ret->counters = p.counters.v;
	ret->nr_counters = p.counters.nr;
	if (e || ret->help)
		return e;
	if (ret->query != TP_QUERY_NONE && ret->nr_counters)
		return usage_error(&p, "-q and -qx list counters; they take no counter paths");
	if (ret->query == TP_QUERY_NONE && !ret->nr_counters)
		return usage_error(&p, "no counters given (counter paths, -cf file, -q or -qx)");
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * header.c - the user-mode header (-o) and the consumer symbol header (-ch).
 *
 * The -o layout is the Windows 7+ CTRPP one (tools.md 2.3, 2.7), text for text, with three
 * changes: it includes <perflib.h>; it declares itself a system header to GCC and clang,
 * because Windows' own text (flat GUID initializers, EXTERN_C DECLSPEC_SELECTANY
 * definitions) draws -Wmissing-braces and, in C++, "initialized and declared extern"
 * warnings that are not the user's to fix; and a negative scale is written
 * (LONG)4294967293 rather than a bare 4294967293, which C++ refuses as a narrowing
 * conversion even in a system header. The -ch header is included by consumers' own code and
 * uses the braced GUID form, which needs no such help.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ctrpp.h"

#define INDENT "    " /* generated code is indented like CTRPP output */

static bool is_ident_char(char ch)
{
	return ch == '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9');
}

/* Names from the manifest file name when a symbol is missing: "dir/my-app.man" -> my_app. */
static char *file_symbol(const char *path)
{
	const char *base = strrchr(path, '/'), *dot;
	size_t i, len, lead;
	char *s;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	/* A leading digit (or an empty name) gets an underscore in front. */
	lead = len == 0 || (base[0] >= '0' && base[0] <= '9');
	s = malloc(lead + len + 1);
	if (!s)
		return NULL;
	s[0] = '_';
	for (i = 0; i < len; i++)
		s[lead + i] = is_ident_char(base[i]) ? base[i] : '_';
	s[lead + len] = 0;
	return s;
}

/* A generated identifier and the manifest line it comes from. */
struct gen_name {
	char *name;
	unsigned int line;
};

static int gen_name_cmp(const void *a, const void *b)
{
	const struct gen_name *x = a, *y = b;
	int d = strcmp(x->name, y->name);

	return d ? d : (x->line > y->line) - (x->line < y->line);
}

/* Every identifier the -o header defines, to catch collisions before writing anything. */
static int check_names(const struct ctrpp *c)
{
	const struct manifest_provider *p = c->prov;
	size_t i, j, nr = 0, cap = 4 + 2 * p->nr_sets;
	struct gen_name *g;
	int err = 0;

	for (i = 0; i < p->nr_sets; i++)
		cap += p->sets[i].nr_counters;
	g = calloc(cap, sizeof(*g));
	if (!g)
		return -ENOMEM;
#define ADD(ln, ...)                                                                               \
	do {                                                                                       \
		g[nr].line = (ln);                                                                 \
		if (asprintf(&g[nr].name, __VA_ARGS__) < 0) {                                      \
			g[nr].name = NULL;                                                         \
			err = -ENOMEM;                                                             \
			goto out;                                                                  \
		}                                                                                  \
		nr++;                                                                              \
	} while (0)
	ADD(p->line, "%s%s", c->prefix, c->prov_symbol);
	ADD(p->line, "%s%sGuid", c->prefix, c->prov_symbol);
	ADD(p->line, "%sCounterInitialize", c->prefix);
	ADD(p->line, "%sCounterCleanup", c->prefix);
	for (i = 0; i < p->nr_sets; i++) {
		ADD(p->sets[i].line, "%s%sGuid", c->prefix, c->set_symbols[i]);
		ADD(p->sets[i].line, "%s%sInfo", c->prefix, c->set_symbols[i]);
		for (j = 0; j < p->sets[i].nr_counters; j++)
			if (p->sets[i].counters[j].symbol)
				ADD(p->sets[i].counters[j].line, "%s",
				    p->sets[i].counters[j].symbol);
	}
#undef ADD
	/* Sorted by name, then line: a clash is two neighbours, the first one first. */
	qsort(g, nr, sizeof(*g), gen_name_cmp);
	for (i = 1; i < nr; i++) {
		if (strcmp(g[i].name, g[i - 1].name))
			continue;
		fprintf(stderr, "%s:%u: error: generated name '%s' is also generated for line %u\n",
			c->input, g[i].line, g[i].name, g[i - 1].line);
		err = -EINVAL;
	}
out:
	for (i = 0; i < nr; i++)
		free(g[i].name);
	free(g);
	return err;
}

/* Counters PerfSetCounterSetInfo() refuses cannot be generated. */
static int check_counters(const struct ctrpp *c)
{
	const struct manifest_provider *p = c->prov;
	size_t i, j;
	int err = 0;

	for (i = 0; i < p->nr_sets; i++)
		for (j = 0; j < p->sets[i].nr_counters; j++) {
			const struct manifest_counter *ctr = &p->sets[i].counters[j];

			if (ctrtype_size(ctr->type->value))
				continue;
			fprintf(stderr,
				"%s:%u: error: counter %u: type %s has no fixed size; perflib "
				"cannot register it\n",
				c->input, ctr->line, ctr->id, ctr->type->name);
			err = -EINVAL;
		}
	return err;
}

int ctrpp_prepare(struct ctrpp *c)
{
	const struct manifest *man = c->man;
	char *base = NULL;
	size_t i;
	int err = 0;

	for (i = 0; i < man->nr_providers; i++) {
		const struct manifest_provider *p = &man->providers[i];

		if (p->provider_type == PERF_PROVIDER_KERNEL_MODE) {
			fprintf(stderr,
				"%s:%u: note: kernel-mode provider skipped: perflib is user-mode, "
				"no kernel code is generated\n",
				c->input, p->line);
			continue;
		}
		if (c->prov) {
			fprintf(stderr,
				"%s:%u: error: second user-mode provider (first at line %u); one "
				"header holds one provider\n",
				c->input, p->line, c->prov->line);
			return -EINVAL;
		}
		c->prov = p;
	}
	if (!c->prov)
		return 0;

	base = file_symbol(c->input);
	c->set_symbols = calloc(c->prov->nr_sets + 1, sizeof(*c->set_symbols));
	if (!base || !c->set_symbols) {
		err = -ENOMEM;
		goto out;
	}
	if (c->prov->symbol) {
		c->prov_symbol = strdup(c->prov->symbol);
	} else {
		c->prov_symbol = strdup(base);
		fprintf(stderr,
			"%s:%u: warning: provider has no symbol; generated names use '%s'\n",
			c->input, c->prov->line, base);
	}
	for (i = 0; c->prov_symbol && i < c->prov->nr_sets; i++) {
		const struct manifest_counterset *set = &c->prov->sets[i];

		if (set->symbol) {
			c->set_symbols[i] = strdup(set->symbol);
		} else if (asprintf(&c->set_symbols[i], "%s_CounterSet%zu", base, i + 1) >= 0) {
			fprintf(stderr,
				"%s:%u: warning: counterSet has no symbol; generated names use "
				"'%s'\n",
				c->input, set->line, c->set_symbols[i]);
		} else {
			c->set_symbols[i] = NULL;
		}
		if (!c->set_symbols[i])
			break;
	}
	if (!c->prov_symbol || i < c->prov->nr_sets) {
		err = -ENOMEM;
		goto out;
	}
	err = check_counters(c);
	if (!err)
		err = check_names(c);
out:
	free(base);
	return err;
}

void ctrpp_release(struct ctrpp *c)
{
	size_t i;

	for (i = 0; c->set_symbols && c->set_symbols[i]; i++)
		free(c->set_symbols[i]);
	free(c->set_symbols);
	free(c->prov_symbol);
	c->set_symbols = NULL;
	c->prov_symbol = NULL;
}

/*
 * "{ 0x4b1d6c3e, 0x2f7a, 0x4c55, 0x9e, 0x10, ... }" (CTRPP's flat form, @braced false) or
 * "{ 0x4b1d6c3e, 0x2f7a, 0x4c55, { 0x9e, 0x10, ... } }": lower case, no zero padding.
 */
static void put_guid_form(FILE *out, const GUID *g, bool braced)
{
	int i;

	fprintf(out, "{ 0x%x, 0x%x, 0x%x,%s", g->Data1, g->Data2, g->Data3, braced ? " {" : "");
	for (i = 0; i < 8; i++)
		fprintf(out, " 0x%x%s", g->Data4[i], i < 7 ? "," : "");
	fputs(braced ? " } }" : " }", out);
}

static void put_guid(FILE *out, const GUID *g)
{
	put_guid_form(out, g, false);
}

static void put_guid_braced(FILE *out, const GUID *g)
{
	put_guid_form(out, g, true);
}

/* Text inside a comment: a "*\/" in it would end the comment early. */
static void put_comment_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		fputc(*s, out);
		if (s[0] == '*' && s[1] == '/')
			fputc(' ', out);
	}
}

static void put_banner(const struct ctrpp *c, FILE *out, const char *what)
{
	fputs("/* This file was auto-generated from ", out);
	put_comment_text(out, c->input);
	fputs(" by ctrpp */\n", out);
	if (what)
		fprintf(out, "/* %s */\n", what);
	fputs("\n#pragma once\n\n#include <perflib.h>\n\n", out);
	/* Windows' text draws warnings that are not the user's to fix: see the top of the file */
	fputs("#ifdef __GNUC__\n#pragma GCC system_header\n#endif\n\n\n", out);
}

/* "#define SYMBOL (id)" for each counter with a symbol, then a blank line. */
static void put_counter_ids(const struct ctrpp *c, FILE *out)
{
	const struct manifest_provider *p = c->prov;
	bool any = false;
	size_t i, j;

	for (i = 0; i < p->nr_sets; i++)
		for (j = 0; j < p->sets[i].nr_counters; j++)
			if (p->sets[i].counters[j].symbol) {
				fprintf(out, "#define %s (%u)\n", p->sets[i].counters[j].symbol,
					p->sets[i].counters[j].id);
				any = true;
			}
	if (any)
		fputc('\n', out);
}

static void put_attrib(FILE *out, uint64_t attrib)
{
	const char *sep = "";
	uint32_t bit;

	if (!attrib)
		fputc('0', out);
	for (bit = 1; bit && attrib; bit <<= 1) {
		const struct manifest_enum *e = manifest_attribute_by_value(bit);

		if (!(attrib & bit) || !e)
			continue;
		fprintf(out, "%s%s", sep, e->macro);
		sep = " | ";
	}
}

/* One template: PERF_COUNTERSET_INFO, then one PERF_COUNTER_INFO per counter. */
static void put_template(const struct ctrpp *c, FILE *out, size_t idx)
{
	const struct manifest_counterset *set = &c->prov->sets[idx];
	const char *sym = c->set_symbols[idx];
	size_t i;

	fputs("EXTERN_C DECLSPEC_SELECTANY struct {\n" INDENT "PERF_COUNTERSET_INFO CounterSet;\n",
	      out);
	for (i = 0; i < set->nr_counters; i++)
		fprintf(out, INDENT "PERF_COUNTER_INFO Counter%zu;\n", i);
	fprintf(out, "} %s%sInfo = {\n" INDENT "{ ", c->prefix, sym);
	put_guid(out, &set->guid);
	fputs(", ", out);
	put_guid(out, &c->prov->guid);
	fprintf(out, ", %zu, %s },\n", set->nr_counters,
		manifest_instances_by_value(set->instance_type)->macro);
	for (i = 0; i < set->nr_counters; i++) {
		const struct manifest_counter *ctr = &set->counters[i];

		fprintf(out, INDENT "{ %u, %s, ", ctr->id, ctr->type->macro);
		put_attrib(out, ctr->attrib);
		fprintf(out, ", sizeof(%s), %s, ",
			ctrtype_size(ctr->type->value) == 8 ? "ULONGLONG" : "ULONG",
			manifest_detail_by_value(ctr->detail_level)->macro);
		/* CTRPP prints a negative scale as its unsigned 32-bit value. */
		if (ctr->default_scale < 0)
			fprintf(out, "(LONG)%u", (uint32_t)ctr->default_scale);
		else
			fprintf(out, "%d", ctr->default_scale);
		fputs(", 0 },\n", out);
	}
	fputs("};\n\n", out);
}

/*
 * Fixed text of the generated functions, one line per string: @P@ is the prefix, @H@ the
 * provider handle (prefix + provider symbol), @S@ a counter set (prefix + set symbol).
 */
static const char *const cleanup_text[] = {
	"EXTERN_C FORCEINLINE",
	"VOID",
	"@P@CounterCleanup(",
	"    VOID",
	"    )",
	"{",
	"    if (@H@ != NULL) {",
	"        PerfStopProvider(@H@);",
	"        @H@ = NULL;",
	"    }",
	"}",
	"",
	NULL,
};

static const char *const init_head_text[] = {
	"EXTERN_C FORCEINLINE",
	"ULONG",
	"@P@CounterInitialize(",
	NULL,
};

static const char *const init_void_text[] = {
	"    VOID",
	NULL,
};

/*
 * The callback form's parameters carry CTRPP's SAL words. <perflib.h> defines no SAL (they
 * collide with the C and C++ libraries, <perflib/sal.h>), so the header defines the two it
 * uses around the function only, and restores whatever the includer had.
 */
static const char *const sal_push_text[] = {
	"#pragma push_macro(\"__in_opt\")",
	"#pragma push_macro(\"__inout_opt\")",
	"#undef __in_opt",
	"#undef __inout_opt",
	"#define __in_opt",
	"#define __inout_opt",
	"",
	NULL,
};

static const char *const sal_pop_text[] = {
	"",
	"#pragma pop_macro(\"__in_opt\")",
	"#pragma pop_macro(\"__inout_opt\")",
	NULL,
};

static const char *const init_params_text[] = {
	"    __in_opt PERFLIBREQUEST NotificationCallback,",
	"    __in_opt PERF_MEM_ALLOC MemoryAllocationFunction,",
	"    __in_opt PERF_MEM_FREE MemoryFreeFunction,",
	"    __inout_opt PVOID MemoryFunctionsContext",
	NULL,
};

static const char *const init_context_text[] = {
	"    )",
	"{",
	"    ULONG Status;",
	"    PERF_PROVIDER_CONTEXT ProviderContext;",
	"",
	"    ZeroMemory(&ProviderContext, sizeof(PERF_PROVIDER_CONTEXT));",
	"    ProviderContext.ContextSize = sizeof(PERF_PROVIDER_CONTEXT);",
	NULL,
};

static const char *const init_callback_text[] = {
	"    ProviderContext.ControlCallback = NotificationCallback;",
	"    ProviderContext.MemAllocRoutine = MemoryAllocationFunction;",
	"    ProviderContext.MemFreeRoutine = MemoryFreeFunction;",
	"    ProviderContext.pMemContext = MemoryFunctionsContext;",
	NULL,
};

static const char *const init_start_text[] = {
	"",
	"    Status = PerfStartProviderEx(&@H@Guid,",
	"                                 &ProviderContext,",
	"                                 &@H@);",
	"    if (Status != ERROR_SUCCESS) {",
	"        @H@ = NULL;",
	"        return Status;",
	"    }",
	NULL,
};

static const char *const init_set_text[] = {
	"",
	"    Status = PerfSetCounterSetInfo(@H@,",
	"                                   &@S@Info.CounterSet,",
	"                                   sizeof @S@Info);",
	"    if (Status != ERROR_SUCCESS) {",
	"        @P@CounterCleanup();",
	"        return Status;",
	"    }",
	NULL,
};

static const char *const init_end_text[] = {
	"    return ERROR_SUCCESS;",
	"}",
	NULL,
};

/* Write @text with its @X@ placeholders replaced; @set is NULL outside init_set_text. */
static void put_text(const struct ctrpp *c, FILE *out, const char *const *text, const char *set)
{
	const char *s;

	for (; *text; text++) {
		for (s = *text; *s; s++) {
			if (s[0] != '@' || !s[1] || s[2] != '@') {
				fputc(*s, out);
				continue;
			}
			if (s[1] == 'P' || s[1] == 'H' || s[1] == 'S')
				fputs(c->prefix, out);
			if (s[1] == 'H')
				fputs(c->prov_symbol, out);
			else if (s[1] == 'S')
				fputs(set, out);
			s += 2;
		}
		fputc('\n', out);
	}
}

static void put_functions(const struct ctrpp *c, FILE *out)
{
	bool callback = c->callback || c->prov->callback_custom;
	size_t i;

	put_text(c, out, cleanup_text, NULL);
	if (callback)
		put_text(c, out, sal_push_text, NULL);
	put_text(c, out, init_head_text, NULL);
	put_text(c, out, callback ? init_params_text : init_void_text, NULL);
	put_text(c, out, init_context_text, NULL);
	if (callback)
		put_text(c, out, init_callback_text, NULL);
	put_text(c, out, init_start_text, NULL);
	for (i = 0; i < c->prov->nr_sets; i++)
		put_text(c, out, init_set_text, c->set_symbols[i]);
	put_text(c, out, init_end_text, NULL);
	if (callback)
		put_text(c, out, sal_pop_text, NULL);
}

void ctrpp_write_header(const struct ctrpp *c, FILE *out)
{
	size_t i;

	put_banner(c, out, NULL);
	if (!c->prov) {
		fputs("/* No user-mode provider in this manifest: nothing to declare. */\n", out);
		return;
	}
	put_counter_ids(c, out);
	fprintf(out, "EXTERN_C DECLSPEC_SELECTANY GUID %s%sGuid = ", c->prefix, c->prov_symbol);
	put_guid(out, &c->prov->guid);
	fputs(";\n\n", out);
	for (i = 0; i < c->prov->nr_sets; i++) {
		fprintf(out, "EXTERN_C DECLSPEC_SELECTANY GUID %s%sGuid = ", c->prefix,
			c->set_symbols[i]);
		put_guid(out, &c->prov->sets[i].guid);
		fputs(";\n\n", out);
	}
	fprintf(out, "\nEXTERN_C DECLSPEC_SELECTANY HANDLE %s%s = NULL;\n\n", c->prefix,
		c->prov_symbol);
	for (i = 0; i < c->prov->nr_sets; i++)
		put_template(c, out, i);
	put_functions(c, out);
}

/* A C string literal body: quotes, backslashes, control characters and trigraphs escaped. */
static void put_c_string(FILE *out, const char *s)
{
	char prev = 0;

	for (; *s; prev = *s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\' || (ch == '?' && prev == '?'))
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(out, "\\%03o", ch);
		else
			fputc(ch, out);
	}
}

/*
 * -ch: macros only (no definitions), so the file can sit beside the -o header in one
 * program: <P><provider>_GUID, and per counter set <P><set>_NAME (a WCHAR literal:
 * PERFLIB_WTEXT gives u"" or, where wchar_t is 16 bits, L"") and <P><set>_GUID (a GUID
 * initializer), plus the counter-id macros of the -o header, identical so both may be
 * included.
 */
void ctrpp_write_symbols(const struct ctrpp *c, FILE *out)
{
	size_t i;

	put_banner(c, out, "Counter-set names and GUIDs for PerfLib V2 consumers (ctrpp -ch).");
	if (!c->prov) {
		fputs("/* No user-mode provider in this manifest: nothing to declare. */\n", out);
		return;
	}
	put_counter_ids(c, out);
	fprintf(out, "#define %s%s_GUID ", c->prefix, c->prov_symbol);
	put_guid_braced(out, &c->prov->guid);
	fputs("\n", out);
	for (i = 0; i < c->prov->nr_sets; i++) {
		const struct manifest_counterset *set = &c->prov->sets[i];

		fprintf(out, "\n#define %s%s_NAME PERFLIB_WTEXT(\"", c->prefix, c->set_symbols[i]);
		put_c_string(out, set->name);
		fprintf(out, "\")\n#define %s%s_GUID ", c->prefix, c->set_symbols[i]);
		put_guid_braced(out, &set->guid);
		fputs("\n", out);
	}
}

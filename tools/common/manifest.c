// SPDX-License-Identifier: MIT
/*
 * manifest.c - parse and validate the counters section of an instrumentation manifest.
 *
 * libxml2 builds the tree; a small scanner over the raw text finds the line of every start
 * tag and attribute, because libxml2 only records where a start tag ends (a multi-line
 * <counter ...> would otherwise be reported at its last line). Every rule of tools.md
 * section 1 is checked; problems are collected, sorted by line and printed at the end.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/hash.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include <perflib-linux.h>

#include "manifest.h"

#define MAX_FILE_SIZE (64u << 20) /* a manifest is a few KiB; refuse absurd inputs */

/* Tables: manifest spelling, macro name (stringized) and value (expanded). */
#define TYPE(name, macro)                                                                          \
	{                                                                                          \
		name, #macro, macro                                                                \
	}

static const struct manifest_enum instances_enum[] = {
	TYPE("single", PERF_COUNTERSET_SINGLE_INSTANCE),
	TYPE("multiple", PERF_COUNTERSET_MULTI_INSTANCES),
	TYPE("globalAggregate", PERF_COUNTERSET_SINGLE_AGGREGATE),
	TYPE("multipleAggregate", PERF_COUNTERSET_MULTI_AGGREGATE),
	TYPE("globalAggregateHistory", PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY),
	TYPE("instanceAggregate", PERF_COUNTERSET_INSTANCE_AGGREGATE), /* extension */
	{NULL, NULL, 0},
};

static const struct manifest_enum aggregate_enum[] = {
	TYPE("undefined", PERF_AGGREGATE_UNDEFINED),
	TYPE("sum", PERF_AGGREGATE_TOTAL),
	TYPE("avg", PERF_AGGREGATE_AVG),
	TYPE("min", PERF_AGGREGATE_MIN),
	TYPE("max", PERF_AGGREGATE_MAX),
	{NULL, NULL, 0},
};

static const struct manifest_enum detail_enum[] = {
	TYPE("standard", PERF_DETAIL_NOVICE),
	TYPE("advanced", PERF_DETAIL_ADVANCED),
	{NULL, NULL, 0},
};

static const struct manifest_enum attribute_enum[] = {
	TYPE("reference", PERF_ATTRIB_BY_REFERENCE),
	TYPE("noDisplay", PERF_ATTRIB_NO_DISPLAYABLE),
	TYPE("noDigitGrouping", PERF_ATTRIB_NO_GROUP_SEPARATOR),
	TYPE("displayAsReal", PERF_ATTRIB_DISPLAY_AS_REAL),
	TYPE("displayAsHex", PERF_ATTRIB_DISPLAY_AS_HEX),
	{NULL, NULL, 0},
};

static const struct manifest_enum provider_type_enum[] = {
	TYPE("userMode", PERF_PROVIDER_USER_MODE),
	TYPE("kernelMode", PERF_PROVIDER_KERNEL_MODE),
	{NULL, NULL, 0},
};

static const struct manifest_enum callback_enum[] = {
	{"default", NULL, 0},
	{"custom", NULL, 1},
	{NULL, NULL, 0},
};

/* Attributes each element may carry (attributes in a namespace are ignored). */
static const char *const counters_attrs[] = {"schemaVersion", NULL};
static const char *const provider_attrs[] = {
	"providerGuid", "applicationIdentity", "symbol",       "callback",
	"providerType", "providerName",	       "resourceBase", NULL,
};
static const char *const set_attrs[] = {
	"guid",	       "uri",		"symbol",    "name", "nameID",
	"description", "descriptionID", "instances", NULL,
};
static const char *const struct_attrs[] = {"name", "type", NULL};
static const char *const counter_attrs[] = {
	"id",	       "uri",		"symbol",     "name",	     "nameID",
	"description", "descriptionID", "type",	      "detailLevel", "defaultScale",
	"aggregate",   "baseID",	"perfTimeID", "perfFreqID",  "multiCounterID",
	"struct",      "field",		NULL,
};
static const char *const attribute_attrs[] = {"name", NULL};

/* One collected diagnostic. */
struct diag {
	unsigned int line;
	size_t seq; /* insertion order, keeps the sort stable */
	bool error;
	char *text;
};

/* Where a start tag and its attributes are in the source text. */
struct src_attr {
	const char *name; /* qualified name, not terminated, points into the source */
	size_t len;
	unsigned int line;
};

struct src_tag {
	unsigned int line; /* line of the '<' */
	size_t first_attr; /* index in parser.attrs */
	size_t nr_attrs;
};

/* Uniqueness constraints: key -> line of the first occurrence. */
enum {
	U_PROVIDER_GUID,
	U_SET_GUID,
	U_SET_URI,
	U_SET_NAME,
	U_SET_SYMBOL,
	U_COUNTER_SYMBOL,
	U_COUNTER_URI,
	U_COUNTER_ID,	/* per counterSet */
	U_COUNTER_NAME, /* per counterSet */
	U_STRUCT_NAME,	/* per counterSet */
	NR_UNIQ,
};

struct parser {
	const char *path;
	struct diag *diags;
	size_t nr_diags, diags_cap;
	unsigned int nr_errors, nr_warnings;
	bool nomem;

	char *src; /* the file, NUL-terminated */
	size_t src_len;
	struct src_tag *tags;
	size_t nr_tags, tags_cap;
	struct src_attr *attrs;
	size_t nr_attrs, attrs_cap;

	xmlNode *string_table; /* <stringTable> used for $(string.X), or NULL */
	unsigned int schema;   /* MANIFEST_SCHEMA_* */
	xmlHashTable *uniq[NR_UNIQ];
};

/* ---- diagnostics ---- */

static void diag_add(struct parser *p, unsigned int line, bool error, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void diag_add(struct parser *p, unsigned int line, bool error, const char *fmt, ...)
{
	struct diag *d;
	va_list ap;
	char *text;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	if (n < 0) {
		p->nomem = true;
		return;
	}
	if (p->nr_diags == p->diags_cap) {
		size_t cap = p->diags_cap ? 2 * p->diags_cap : 16;

		d = realloc(p->diags, cap * sizeof(*d));
		if (!d) {
			free(text);
			p->nomem = true;
			return;
		}
		p->diags = d;
		p->diags_cap = cap;
	}
	d = &p->diags[p->nr_diags];
	d->line = line;
	d->seq = p->nr_diags++;
	d->error = error;
	d->text = text;
	if (error)
		p->nr_errors++;
	else
		p->nr_warnings++;
}

#define perr(p, line, ...) diag_add(p, line, true, __VA_ARGS__)
#define pwarn(p, line, ...) diag_add(p, line, false, __VA_ARGS__)

static int diag_cmp(const void *a, const void *b)
{
	const struct diag *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void diag_flush(struct parser *p, FILE *out)
{
	size_t i;

	if (p->nr_diags)
		qsort(p->diags, p->nr_diags, sizeof(*p->diags), diag_cmp);
	for (i = 0; out && i < p->nr_diags; i++)
		fprintf(out, "%s:%u: %s: %s\n", p->path, p->diags[i].line,
			p->diags[i].error ? "error" : "warning", p->diags[i].text);
}

/* libxml2 reports well-formedness problems here (installed only around the parse). */
static void xml_error(void *ctx, xmlErrorPtr e)
{
	struct parser *p = ctx;
	size_t len;

	if (!e || !e->message)
		return;
	len = strlen(e->message);
	while (len && (e->message[len - 1] == '\n' || e->message[len - 1] == ' '))
		len--;
	diag_add(p, e->line > 0 ? (unsigned int)e->line : 1, e->level != XML_ERR_WARNING, "%.*s",
		 (int)len, e->message);
}

/* ---- source positions ---- */

static bool starts(const char *s, const char *end, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(end - s) >= n && !memcmp(s, lit, n);
}

/* Skip to just past @lit, counting lines; end of text when absent. */
static const char *skip_past(const char *s, const char *end, const char *lit, unsigned int *line)
{
	for (; s < end; s++) {
		if (starts(s, end, lit))
			return s + strlen(lit);
		if (*s == '\n')
			(*line)++;
	}
	return end;
}

/* Skip a quoted string starting at the quote; returns past the closing quote. */
static const char *skip_quoted(const char *s, const char *end, unsigned int *line)
{
	char q = *s++;

	for (; s < end && *s != q; s++)
		if (*s == '\n')
			(*line)++;
	return s < end ? s + 1 : end;
}

/* Skip <!DOCTYPE ...> including an internal subset with its quotes and comments. */
static const char *skip_decl(const char *s, const char *end, unsigned int *line)
{
	int depth = 0;

	while (s < end) {
		if (*s == '"' || *s == '\'') {
			s = skip_quoted(s, end, line);
			continue;
		}
		if (starts(s, end, "<!--")) {
			s = skip_past(s + 4, end, "-->", line);
			continue;
		}
		if (*s == '\n')
			(*line)++;
		else if (*s == '[')
			depth++;
		else if (*s == ']')
			depth--;
		else if (*s == '>' && depth <= 0)
			return s + 1;
		s++;
	}
	return end;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int push_tag(struct parser *p, unsigned int line)
{
	if (p->nr_tags == p->tags_cap) {
		size_t cap = p->tags_cap ? 2 * p->tags_cap : 64;
		struct src_tag *t = realloc(p->tags, cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		p->tags = t;
		p->tags_cap = cap;
	}
	p->tags[p->nr_tags++] = (struct src_tag){line, p->nr_attrs, 0};
	return 0;
}

static int push_attr(struct parser *p, const char *name, size_t len, unsigned int line)
{
	if (p->nr_attrs == p->attrs_cap) {
		size_t cap = p->attrs_cap ? 2 * p->attrs_cap : 256;
		struct src_attr *a = realloc(p->attrs, cap * sizeof(*a));

		if (!a)
			return -ENOMEM;
		p->attrs = a;
		p->attrs_cap = cap;
	}
	p->attrs[p->nr_attrs++] = (struct src_attr){name, len, line};
	p->tags[p->nr_tags - 1].nr_attrs++;
	return 0;
}

/* Record a start tag at *ps ('<') and its attributes; leaves *ps past the tag. */
static int scan_start_tag(struct parser *p, const char **ps, const char *end, unsigned int *line)
{
	const char *s = *ps + 1;
	int err;

	err = push_tag(p, *line);
	while (!err && s < end && !is_space(*s) && *s != '>' && *s != '/')
		s++;
	while (!err && s < end) {
		const char *name;

		if (*s == '\n')
			(*line)++;
		if (is_space(*s) || *s == '/') {
			s++;
			continue;
		}
		if (*s == '>') {
			s++;
			break;
		}
		name = s;
		while (s < end && !is_space(*s) && *s != '=' && *s != '>' && *s != '/')
			s++;
		err = push_attr(p, name, s - name, *line);
		for (; s < end && (is_space(*s) || *s == '='); s++)
			if (*s == '\n')
				(*line)++;
		if (s < end && (*s == '"' || *s == '\''))
			s = skip_quoted(s, end, line);
	}
	*ps = s;
	return err;
}

/* Find every start tag in document order (comments, CDATA, PIs and the DTD skipped). */
static int scan_source(struct parser *p)
{
	const char *s = p->src, *end = p->src + p->src_len;
	unsigned int line = 1;
	int err = 0;

	while (!err && s < end) {
		if (*s == '\n')
			line++;
		if (*s != '<')
			s++;
		else if (starts(s, end, "<!--"))
			s = skip_past(s + 4, end, "-->", &line);
		else if (starts(s, end, "<![CDATA["))
			s = skip_past(s + 9, end, "]]>", &line);
		else if (starts(s, end, "<?"))
			s = skip_past(s + 2, end, "?>", &line);
		else if (starts(s, end, "<!"))
			s = skip_decl(s + 2, end, &line);
		else if (starts(s, end, "</"))
			s = skip_past(s + 2, end, ">", &line);
		else
			err = scan_start_tag(p, &s, end, &line);
	}
	return err;
}

/* Give each element (pre-order) its start tag through _private; returns the count. */
static size_t attach_tags(struct parser *p, xmlNode *n, size_t idx, bool clear)
{
	for (; n; n = n->next) {
		if (n->type != XML_ELEMENT_NODE)
			continue;
		n->_private = (!clear && idx < p->nr_tags) ? &p->tags[idx] : NULL;
		idx = attach_tags(p, n->children, idx + 1, clear);
	}
	return idx;
}

static void map_positions(struct parser *p, xmlDoc *doc)
{
	const unsigned char *u = (const unsigned char *)p->src;

	/* UTF-16 text cannot be scanned bytewise: keep libxml2's lines then. */
	if (p->src_len >= 2 && ((u[0] == 0xff && u[1] == 0xfe) || (u[0] == 0xfe && u[1] == 0xff)))
		return;
	if (memchr(p->src, 0, p->src_len) || scan_source(p)) {
		p->nr_tags = 0;
		return;
	}
	if (attach_tags(p, doc->children, 0, false) != p->nr_tags)
		attach_tags(p, doc->children, 0, true); /* mismatch: trust nothing */
}

static unsigned int elem_line(const xmlNode *n)
{
	const struct src_tag *t = n->_private;
	long l;

	if (t)
		return t->line;
	l = xmlGetLineNo(n);
	return l > 0 ? (unsigned int)l : 1;
}

/* Line of attribute @name of @n, or of the element when unknown. */
static unsigned int attr_line(const struct parser *p, const xmlNode *n, const char *name)
{
	const struct src_tag *t = n->_private;
	size_t i, len = strlen(name);

	for (i = 0; t && i < t->nr_attrs; i++) {
		const struct src_attr *a = &p->attrs[t->first_attr + i];

		if (a->len == len && !memcmp(a->name, name, len))
			return a->line;
	}
	return elem_line(n);
}

/* ---- lexical rules ---- */

int manifest_parse_guid(const char *str, GUID *ret_guid)
{
	/* GUIDType wants the braces that perflib_guid_from_string() takes as optional. */
	if (!str || strlen(str) != 38 || str[0] != '{')
		return -EINVAL;
	return perflib_guid_from_string(str, ret_guid);
}

bool manifest_is_csymbol(const char *str)
{
	const char *s = str;

	if (!s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
		return false;
	for (s++; *s; s++)
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

/* xs:unsignedInt (whitespace collapsed, optional '+') or HexInt32Type (0x + 1..8 digits). */
static int parse_u32(const char *str, uint32_t *ret)
{
	const char *s = str, *e = str + strlen(str);
	unsigned long long v;
	bool hex;
	size_t n;

	while (s < e && is_space(*s))
		s++;
	while (e > s && is_space(e[-1]))
		e--;
	hex = e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	if (hex)
		s += 2;
	else if (s < e && *s == '+')
		s++;
	/* strtoull() alone would accept signs, spaces and "0x" inside: check the digits first. */
	for (n = 0; s + n < e; n++)
		if (hex ? !isxdigit((unsigned char)s[n]) : !isdigit((unsigned char)s[n]))
			return -EINVAL;
	if (!n || (hex && n > 8))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, NULL, hex ? 16 : 10);
	if (errno || v > UINT32_MAX)
		return -EINVAL;
	*ret = (uint32_t)v;
	return 0;
}

/* xs:int restricted by the caller; returns -ERANGE beyond +-1e6 to avoid overflow. */
static int parse_int(const char *str, int32_t *ret)
{
	const char *s = str, *e = str + strlen(str);
	bool neg = false;
	int64_t v = 0;

	while (s < e && is_space(*s))
		s++;
	while (e > s && is_space(e[-1]))
		e--;
	if (s < e && (*s == '+' || *s == '-'))
		neg = *s++ == '-';
	if (s == e)
		return -EINVAL;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v < 1000000)
			v = v * 10 + (*s - '0');
	}
	*ret = (int32_t)(neg ? -v : v);
	return 0;
}

static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* ---- tables ---- */

static const struct manifest_enum *enum_by_name(const struct manifest_enum *t, const char *name)
{
	for (; name && t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

static const struct manifest_enum *enum_by_value(const struct manifest_enum *t, uint32_t value)
{
	for (; t->name; t++)
		if (t->value == value)
			return t;
	return NULL;
}

/* "a, b or c" from an enum table, for messages. */
static void enum_list(const struct manifest_enum *t, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = 0;
	for (; t->name && n < size; t++)
		n += snprintf(buf + n, size - n, "%s%s", n ? (t[1].name ? ", " : " or ") : "",
			      t->name);
}

const struct manifest_enum *manifest_instances_by_name(const char *name)
{
	return enum_by_name(instances_enum, name);
}

const struct manifest_enum *manifest_instances_by_value(uint32_t value)
{
	return enum_by_value(instances_enum, value);
}

const struct manifest_enum *manifest_aggregate_by_name(const char *name)
{
	return enum_by_name(aggregate_enum, name);
}

const struct manifest_enum *manifest_aggregate_by_value(uint32_t value)
{
	return enum_by_value(aggregate_enum, value);
}

const struct manifest_enum *manifest_detail_by_name(const char *name)
{
	return enum_by_name(detail_enum, name);
}

const struct manifest_enum *manifest_detail_by_value(uint32_t value)
{
	return enum_by_value(detail_enum, value);
}

const struct manifest_enum *manifest_attribute_by_name(const char *name)
{
	return enum_by_name(attribute_enum, name);
}

const struct manifest_enum *manifest_attribute_by_value(uint32_t value)
{
	return enum_by_value(attribute_enum, value);
}

static const char *type_name(uint32_t type)
{
	const struct ctrtype *t = ctrtype_find(type);

	return t ? t->name : "?";
}

const struct manifest_counter *manifest_counter_find(const struct manifest_counterset *set,
						     uint32_t id)
{
	size_t i;

	for (i = 0; set && i < set->nr_counters; i++)
		if (set->counters[i].id == id)
			return &set->counters[i];
	return NULL;
}

/* ---- element and attribute access ---- */

static bool ns_is(const xmlNode *n, const char *uri)
{
	return !n->ns || !n->ns->href || !strcmp((const char *)n->ns->href, uri);
}

/* An element of the counters section (counters namespace, or none for Vista manifests). */
static bool is_ctr(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && ns_is(n, MANIFEST_COUNTERS_NS) &&
	       !strcmp((const char *)n->name, name);
}

/* An element of the enclosing events schema (or no namespace). */
static bool is_evt(const xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && ns_is(n, MANIFEST_EVENTS_NS) &&
	       !strcmp((const char *)n->name, name);
}

static size_t count_ctr(const xmlNode *parent, const char *name)
{
	const xmlNode *c;
	size_t n = 0;

	for (c = parent->children; c; c = c->next)
		n += is_ctr(c, name);
	return n;
}

/* Report elements of the counters namespace that are not in @allowed. */
static void check_children(struct parser *p, const xmlNode *n, const char *const *allowed)
{
	const xmlNode *c;
	size_t i;

	for (c = n->children; c; c = c->next) {
		if (c->type != XML_ELEMENT_NODE || !ns_is(c, MANIFEST_COUNTERS_NS))
			continue;
		for (i = 0; allowed[i]; i++)
			if (!strcmp((const char *)c->name, allowed[i]))
				break;
		if (!allowed[i])
			perr(p, elem_line(c), "unexpected element <%s> in <%s>", c->name, n->name);
	}
}

/* Report attributes without a namespace that the schema does not define for @n. */
static void check_attrs(struct parser *p, const xmlNode *n, const char *const *allowed)
{
	const xmlAttr *a;
	size_t i;

	for (a = n->properties; a; a = a->next) {
		if (a->ns)
			continue;
		for (i = 0; allowed[i]; i++)
			if (!strcmp((const char *)a->name, allowed[i]))
				break;
		if (!allowed[i])
			perr(p, attr_line(p, n, (const char *)a->name),
			     "unknown attribute %s on <%s>", a->name, n->name);
	}
}

static bool has_attr(const xmlNode *n, const char *name)
{
	return xmlHasNsProp(n, BAD_CAST name, NULL) != NULL;
}

/* Copy of attribute @name (malloc'd), NULL when absent; reports it when @required. */
static char *get_str(struct parser *p, xmlNode *n, const char *name, bool required)
{
	xmlChar *v = xmlGetNoNsProp(n, BAD_CAST name);
	char *s;

	if (!v) {
		if (required)
			perr(p, elem_line(n), "missing required attribute %s on <%s>", name,
			     n->name);
		return NULL;
	}
	s = strdup((const char *)v);
	xmlFree(v);
	if (!s)
		p->nomem = true;
	return s;
}

static bool get_guid(struct parser *p, xmlNode *n, const char *name, GUID *ret)
{
	char *v = get_str(p, n, name, true);
	bool ok = v && !manifest_parse_guid(v, ret);

	if (v && !ok)
		perr(p, attr_line(p, n, name),
		     "invalid GUID '%s' in %s on <%s> (expected "
		     "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx})",
		     v, name, n->name);
	free(v);
	return ok;
}

static void get_u32(struct parser *p, xmlNode *n, const char *name, bool required,
		    struct manifest_opt_u32 *ret)
{
	char *v = get_str(p, n, name, required);

	if (v && parse_u32(v, &ret->value))
		perr(p, attr_line(p, n, name),
		     "invalid UInt32 '%s' in %s on <%s> (decimal 0..4294967295 or 0x and 1-8 hex "
		     "digits)",
		     v, name, n->name);
	else
		ret->set = v != NULL;
	free(v);
}

/*
 * A CSymbolType attribute; the empty string counts as absent, and is an error when the
 * attribute is @required (a symbol that names nothing cannot be generated).
 */
static char *get_symbol(struct parser *p, xmlNode *n, const char *name, bool required)
{
	char *v = get_str(p, n, name, required);

	if (v && *v && !manifest_is_csymbol(v))
		perr(p, attr_line(p, n, name),
		     "invalid C symbol '%s' in %s on <%s> (expected [_a-zA-Z][_0-9a-zA-Z]*)", v,
		     name, n->name);
	else if (v && *v)
		return v;
	else if (v && required)
		perr(p, attr_line(p, n, name), "empty %s on <%s>", name, n->name);
	free(v);
	return NULL;
}

/*
 * An enumerated attribute; NULL when absent (then @def is returned) or invalid (reported
 * as "unknown <what> '<value>'").
 */
static const struct manifest_enum *get_enum(struct parser *p, xmlNode *n, const char *name,
					    const struct manifest_enum *table, const char *def,
					    const char *what)
{
	const struct manifest_enum *e;
	char *v = get_str(p, n, name, def == NULL);
	char list[256];

	if (!v)
		return def ? enum_by_name(table, def) : NULL;
	e = enum_by_name(table, v);
	if (!e) {
		enum_list(table, list, sizeof(list));
		perr(p, attr_line(p, n, name), "unknown %s '%s' (expected %s)", what, v, list);
	}
	free(v);
	return e;
}

/* The value of <string id=@id> in the chosen stringTable (libxml2 copy), or NULL. */
static xmlChar *lookup_string(struct parser *p, const char *id)
{
	xmlNode *s;

	for (s = p->string_table ? p->string_table->children : NULL; s; s = s->next) {
		xmlChar *sid;
		bool match;

		if (!is_evt(s, "string"))
			continue;
		sid = xmlGetNoNsProp(s, BAD_CAST "id");
		match = sid && !strcmp((const char *)sid, id);
		xmlFree(sid);
		if (match)
			return xmlGetNoNsProp(s, BAD_CAST "value");
	}
	return NULL;
}

/* A name/description attribute with $(string.X) resolved through the stringTable. */
static char *get_text(struct parser *p, xmlNode *n, const char *name, bool required)
{
	char *v = get_str(p, n, name, required), *id, *r;
	size_t len = v ? strlen(v) : 0;
	xmlChar *s;

	if (!v || len < 11 || strncmp(v, "$(string.", 9) || v[len - 1] != ')')
		return v;
	id = v + 9;
	v[len - 1] = 0;
	s = lookup_string(p, id);
	if (!s) {
		perr(p, attr_line(p, n, name), "%s refers to string '%s', which %s", name, id,
		     p->string_table ? "is not in the stringTable"
				     : "cannot be resolved: the manifest has no stringTable");
		free(v);
		return NULL;
	}
	r = strdup((const char *)s);
	xmlFree(s);
	free(v);
	if (!r)
		p->nomem = true;
	return r;
}

/* nameID/descriptionID: required from schemaVersion 2.0, not allowed before. */
static void get_res_id(struct parser *p, xmlNode *n, const char *name, bool required,
		       struct manifest_opt_u32 *ret)
{
	if (p->schema >= MANIFEST_SCHEMA_2_0) {
		get_u32(p, n, name, required, ret);
	} else if (has_attr(n, name)) {
		perr(p, attr_line(p, n, name), "%s on <%s> needs schemaVersion 2.0", name, n->name);
	}
}

/* Record @key (NULL: nothing to check) for constraint @u; reports a duplicate. */
static void uniq_add(struct parser *p, int u, const char *key, unsigned int line, const char *what)
{
	void *first;

	if (!key)
		return;
	if (!p->uniq[u])
		p->uniq[u] = xmlHashCreate(64);
	if (!p->uniq[u]) {
		p->nomem = true;
		return;
	}
	/* The payload is the line (never 0), so a hit is never NULL. */
	first = xmlHashLookup(p->uniq[u], BAD_CAST key);
	if (first)
		perr(p, line, "duplicate %s '%s' (first at line %u)", what, key,
		     (unsigned int)(uintptr_t)first);
	else if (xmlHashAddEntry(p->uniq[u], BAD_CAST key, (void *)(uintptr_t)line))
		p->nomem = true;
}

/* Constraints scoped to one counterSet start empty for each set. */
static void uniq_reset(struct parser *p, int u)
{
	xmlHashFree(p->uniq[u], NULL);
	p->uniq[u] = NULL;
}

/* ---- elements ---- */

static void parse_attributes(struct parser *p, xmlNode *n, struct manifest_counter *c)
{
	size_t nr = 0;
	xmlNode *a;

	check_attrs(p, n, (const char *const[]){NULL});
	check_children(p, n, (const char *const[]){"counterAttribute", NULL});
	for (a = n->children; a; a = a->next) {
		const struct manifest_enum *e;

		if (!is_ctr(a, "counterAttribute"))
			continue;
		nr++;
		check_attrs(p, a, attribute_attrs);
		e = get_enum(p, a, "name", attribute_enum, NULL, "counterAttribute name");
		if (e && (c->attrib & e->value))
			perr(p, attr_line(p, a, "name"), "duplicate counterAttribute '%s'",
			     e->name);
		else if (e)
			c->attrib |= e->value;
	}
	if (!nr)
		perr(p, elem_line(n), "<counterAttributes> needs at least one <counterAttribute>");
}

static void parse_counter(struct parser *p, xmlNode *n, const struct manifest_counterset *set,
			  struct manifest_counter *c)
{
	struct manifest_opt_u32 id = {0, false};
	const struct manifest_enum *e;
	bool named, nodisplay, seen = false;
	char *v, key[16];
	xmlNode *a;

	c->line = elem_line(n);
	c->struct_index = -1;
	check_attrs(p, n, counter_attrs);
	check_children(p, n, (const char *const[]){"counterAttributes", NULL});
	/* Attributes first: noDisplay relaxes the 2.0 name/description rule. */
	for (a = n->children; a; a = a->next) {
		if (!is_ctr(a, "counterAttributes"))
			continue;
		if (seen)
			perr(p, elem_line(a), "<counter> has more than one <counterAttributes>");
		else
			parse_attributes(p, a, c);
		seen = true;
	}
	nodisplay = c->attrib & PERF_ATTRIB_NO_DISPLAYABLE;

	get_u32(p, n, "id", true, &id);
	c->id = id.value;
	if (id.set && c->id == PERF_WILDCARD_COUNTER)
		perr(p, attr_line(p, n, "id"),
		     "counter id %u is PERF_WILDCARD_COUNTER, which names every counter", c->id);
	c->uri = get_str(p, n, "uri", true);
	c->symbol = get_symbol(p, n, "symbol", false);
	/* Name and description become mandatory with 2.0, unless the counter is hidden. */
	named = p->schema >= MANIFEST_SCHEMA_2_0 && !nodisplay;
	c->name = get_text(p, n, "name", named);
	c->description = get_text(p, n, "description", named);
	get_res_id(p, n, "nameID", named || c->name, &c->name_id);
	get_res_id(p, n, "descriptionID", named || c->description, &c->description_id);
	if (c->name && utf8_chars(c->name) > MANIFEST_MAX_NAME)
		perr(p, attr_line(p, n, "name"), "counter name is longer than %d characters",
		     MANIFEST_MAX_NAME);

	v = get_str(p, n, "type", true);
	c->type = ctrtype_by_name(v);
	if (v && !c->type && !strcmp(v, "perf_counter_composite"))
		perr(p, attr_line(p, n, "type"),
		     "counter type perf_counter_composite has no defined value and is not "
		     "supported");
	else if (v && !c->type)
		perr(p, attr_line(p, n, "type"), "unknown counter type '%s'", v);
	free(v);

	e = get_enum(p, n, "detailLevel", detail_enum, NULL, "detailLevel");
	c->detail_level = e ? e->value : PERF_DETAIL_NOVICE;

	v = get_str(p, n, "defaultScale", false);
	if (v && parse_int(v, &c->default_scale))
		perr(p, attr_line(p, n, "defaultScale"), "invalid defaultScale '%s' (an integer)",
		     v);
	else if (v &&
		 (c->default_scale < MANIFEST_MIN_SCALE || c->default_scale > MANIFEST_MAX_SCALE))
		perr(p, attr_line(p, n, "defaultScale"), "defaultScale %s is out of range %d..%d",
		     v, MANIFEST_MIN_SCALE, MANIFEST_MAX_SCALE);
	free(v);

	c->has_aggregate = has_attr(n, "aggregate");
	e = get_enum(p, n, "aggregate", aggregate_enum, "undefined", "aggregate");
	c->aggregate = e ? e->value : PERF_AGGREGATE_UNDEFINED;
	if (c->has_aggregate && e && !(set->instance_type & PERF_COUNTERSET_FLAG_AGGREGATE))
		pwarn(p, attr_line(p, n, "aggregate"),
		      "aggregate has no effect: counterSet instances is %s", set->instances);

	get_u32(p, n, "baseID", false, &c->base_id);
	get_u32(p, n, "perfTimeID", false, &c->perf_time_id);
	get_u32(p, n, "perfFreqID", false, &c->perf_freq_id);
	get_u32(p, n, "multiCounterID", false, &c->multi_counter_id);
	c->struct_name = get_symbol(p, n, "struct", false);
	c->field = get_symbol(p, n, "field", false);

	/* Identity constraints: id and name per counterSet, symbol and uri document-wide. */
	if (id.set) {
		snprintf(key, sizeof(key), "%u", c->id);
		uniq_add(p, U_COUNTER_ID, key, attr_line(p, n, "id"), "counter id");
	}
	uniq_add(p, U_COUNTER_NAME, c->name, attr_line(p, n, "name"), "counter name");
	uniq_add(p, U_COUNTER_SYMBOL, c->symbol, attr_line(p, n, "symbol"), "counter symbol");
	uniq_add(p, U_COUNTER_URI, c->uri, attr_line(p, n, "uri"), "counter uri");
}

/* One reference (baseID, perfTimeID, ...) of @c: it must name a counter of the set. */
static const struct manifest_counter *check_ref(struct parser *p, xmlNode *n,
						const struct manifest_counterset *set,
						const struct manifest_counter *c, const char *attr,
						const struct manifest_opt_u32 *ref)
{
	const struct manifest_counter *t;

	if (!ref->set)
		return NULL;
	t = manifest_counter_find(set, ref->value);
	if (!t)
		perr(p, attr_line(p, n, attr),
		     "%s %u of counter %u names no counter of this counterSet", attr, ref->value,
		     c->id);
	return t;
}

/* The referenced counter @t must have type @want (when both are known). */
static void check_ref_type(struct parser *p, xmlNode *n, const struct manifest_counter *c,
			   const char *attr, const struct manifest_counter *t, uint32_t want)
{
	if (t && t->type && c->type && t->type->value != want)
		perr(p, attr_line(p, n, attr),
		     "%s %u of counter %u is a %s counter; %s needs a %s counter", attr, t->id,
		     c->id, t->type->name, c->type->name, type_name(want));
}

static void check_unused(struct parser *p, xmlNode *n, const struct manifest_counter *c,
			 const char *attr, bool present, bool used)
{
	if (present && !used && c->type)
		pwarn(p, attr_line(p, n, attr), "%s is not used by counter type %s", attr,
		      c->type->name);
}

/* Table 1.7a: auxiliary counters required by the counter's type. */
static void check_aux(struct parser *p, xmlNode *n, const struct manifest_counterset *set,
		      const struct manifest_counter *c)
{
	const struct ctrtype *r = c->type;
	unsigned int f = r ? r->needs : 0;
	const struct manifest_counter *b, *m, *t, *q;

	b = check_ref(p, n, set, c, "baseID", &c->base_id);
	m = check_ref(p, n, set, c, "multiCounterID", &c->multi_counter_id);
	t = check_ref(p, n, set, c, "perfTimeID", &c->perf_time_id);
	q = check_ref(p, n, set, c, "perfFreqID", &c->perf_freq_id);
	if (!c->type)
		return;

	if (r && r->base_type)
		check_ref_type(p, n, c, "baseID", b, r->base_type);
	if ((f & CTRTYPE_NEEDS_BASE) && !c->base_id.set)
		perr(p, elem_line(n), "counter %u of type %s needs a baseID naming a %s counter",
		     c->id, c->type->name, type_name(r->base_type));
	if ((f & CTRTYPE_NEEDS_BASE_WARN) && !c->base_id.set)
		pwarn(p, elem_line(n),
		      "counter %u of type %s has no baseID (a %s counter expected)", c->id,
		      c->type->name, type_name(r->base_type));
	if ((f & CTRTYPE_NEEDS_MULTI) && !c->base_id.set && !c->multi_counter_id.set)
		perr(p, elem_line(n),
		     "counter %u of type %s needs a multiCounterID (a perf_counter_rawcount "
		     "counter) or a baseID (a perf_counter_multi_base counter)",
		     c->id, c->type->name);
	if (f & CTRTYPE_NEEDS_MULTI)
		check_ref_type(p, n, c, "multiCounterID", m, PERF_COUNTER_RAWCOUNT);
	if (f & CTRTYPE_NEEDS_TIME) {
		if (!c->perf_time_id.set || !c->perf_freq_id.set)
			perr(p, elem_line(n),
			     "counter %u of type %s needs perfTimeID and perfFreqID "
			     "(perf_counter_large_rawcount counters)",
			     c->id, c->type->name);
		check_ref_type(p, n, c, "perfTimeID", t, PERF_COUNTER_LARGE_RAWCOUNT);
		check_ref_type(p, n, c, "perfFreqID", q, PERF_COUNTER_LARGE_RAWCOUNT);
	}
	check_unused(p, n, c, "baseID", c->base_id.set, r && r->base_type);
	check_unused(p, n, c, "multiCounterID", c->multi_counter_id.set, f & CTRTYPE_NEEDS_MULTI);
	check_unused(p, n, c, "perfTimeID", c->perf_time_id.set, f & CTRTYPE_NEEDS_TIME);
	check_unused(p, n, c, "perfFreqID", c->perf_freq_id.set, f & CTRTYPE_NEEDS_TIME);
}

/* Checks that need the whole counterSet: references, structs, shared time base. */
static void check_set(struct parser *p, struct manifest_counterset *set, xmlNode **nodes)
{
	const struct manifest_counter *time = NULL;
	size_t i, j;

	for (i = 0; i < set->nr_counters; i++) {
		struct manifest_counter *c = &set->counters[i];

		check_aux(p, nodes[i], set, c);
		/* All counters should share one time base (backward compatibility). */
		if (c->perf_time_id.set && time &&
		    (c->perf_time_id.value != time->perf_time_id.value ||
		     c->perf_freq_id.set != time->perf_freq_id.set ||
		     c->perf_freq_id.value != time->perf_freq_id.value))
			pwarn(p, elem_line(nodes[i]),
			      "counter %u uses another perfTimeID/perfFreqID than counter %u; all "
			      "counters of a counterSet should share them",
			      c->id, time->id);
		else if (c->perf_time_id.set && !time)
			time = c;

		/* Keyref to <struct name=>, a warning only (real manifests break it). */
		for (j = 0; c->struct_name && j < set->nr_structs; j++)
			if (set->structs[j].name && !strcmp(set->structs[j].name, c->struct_name))
				c->struct_index = (int)j;
		if (c->struct_name && c->struct_index < 0)
			pwarn(p, attr_line(p, nodes[i], "struct"),
			      "struct '%s' of counter %u names no <struct> of this counterSet",
			      c->struct_name, c->id);
		else if (!c->struct_name && set->nr_structs == 1)
			c->struct_index = 0;
	}
}

static void parse_structs(struct parser *p, xmlNode *n, struct manifest_counterset *set)
{
	size_t nr = count_ctr(n, "struct");
	xmlNode *s;

	check_attrs(p, n, (const char *const[]){NULL});
	check_children(p, n, (const char *const[]){"struct", NULL});
	if (!nr) {
		perr(p, elem_line(n), "<structs> needs at least one <struct>");
		return;
	}
	set->structs = calloc(nr, sizeof(*set->structs));
	if (!set->structs) {
		p->nomem = true;
		return;
	}
	for (s = n->children; s; s = s->next) {
		struct manifest_struct *st = &set->structs[set->nr_structs];

		if (!is_ctr(s, "struct"))
			continue;
		set->nr_structs++;
		st->line = elem_line(s);
		check_attrs(p, s, struct_attrs);
		st->name = get_symbol(p, s, "name", true);
		st->type = get_symbol(p, s, "type", true);
		uniq_add(p, U_STRUCT_NAME, st->name, attr_line(p, s, "name"), "struct name");
	}
}

static void parse_set(struct parser *p, xmlNode *n, struct manifest_counterset *set)
{
	size_t nr = count_ctr(n, "counter");
	const struct manifest_enum *e;
	xmlNode *c, **nodes = NULL;
	bool seen_counter = false;
	char key[37];

	set->line = elem_line(n);
	check_attrs(p, n, set_attrs);
	check_children(p, n, (const char *const[]){"structs", "counter", NULL});
	if (get_guid(p, n, "guid", &set->guid))
		uniq_add(p, U_SET_GUID, perflib_guid_to_string(&set->guid, key),
			 attr_line(p, n, "guid"), "counterSet guid");
	set->uri = get_str(p, n, "uri", true);
	/* Vista-era manifests (no schemaVersion) predate the symbol attribute. */
	set->symbol = get_symbol(p, n, "symbol", p->schema != MANIFEST_SCHEMA_NONE);
	set->name = get_text(p, n, "name", true);
	set->description = get_text(p, n, "description", true);
	get_res_id(p, n, "nameID", true, &set->name_id);
	get_res_id(p, n, "descriptionID", true, &set->description_id);
	if (set->name && utf8_chars(set->name) > MANIFEST_MAX_NAME)
		perr(p, attr_line(p, n, "name"), "counterSet name is longer than %d characters",
		     MANIFEST_MAX_NAME);
	e = get_enum(p, n, "instances", instances_enum, "single", "instances value");
	set->instances = e ? e->name : "single";
	set->instance_type = e ? e->value : PERF_COUNTERSET_SINGLE_INSTANCE;
	if (e && e->value == PERF_COUNTERSET_INSTANCE_AGGREGATE)
		pwarn(p, attr_line(p, n, "instances"),
		      "instances=\"instanceAggregate\" is not in the published schema; accepted as "
		      "an extension (PERF_COUNTERSET_INSTANCE_AGGREGATE)");
	uniq_add(p, U_SET_URI, set->uri, attr_line(p, n, "uri"), "counterSet uri");
	uniq_add(p, U_SET_NAME, set->name, attr_line(p, n, "name"), "counterSet name");
	uniq_add(p, U_SET_SYMBOL, set->symbol, attr_line(p, n, "symbol"), "counterSet symbol");

	uniq_reset(p, U_COUNTER_ID);
	uniq_reset(p, U_COUNTER_NAME);
	uniq_reset(p, U_STRUCT_NAME);
	if (!nr)
		perr(p, set->line, "<counterSet> needs at least one <counter>");
	else if (nr > MANIFEST_MAX_COUNTERS)
		perr(p, set->line, "<counterSet> has %zu counters; at most %d are allowed", nr,
		     MANIFEST_MAX_COUNTERS);
	set->counters = calloc(nr ? nr : 1, sizeof(*set->counters));
	nodes = calloc(nr ? nr : 1, sizeof(*nodes));
	if (!set->counters || !nodes) {
		p->nomem = true;
		goto out;
	}
	for (c = n->children; c; c = c->next) {
		if (is_ctr(c, "structs")) {
			if (seen_counter || set->structs)
				perr(p, elem_line(c),
				     "<structs> must come once, before the first <counter>");
			else
				parse_structs(p, c, set);
		} else if (is_ctr(c, "counter")) {
			seen_counter = true;
			nodes[set->nr_counters] = c;
			parse_counter(p, c, set, &set->counters[set->nr_counters++]);
		}
	}
	check_set(p, set, nodes);
out:
	free(nodes);
}

static void parse_provider(struct parser *p, xmlNode *n, struct manifest_provider *prov)
{
	size_t nr = count_ctr(n, "counterSet");
	const struct manifest_enum *e;
	char key[37];
	xmlNode *c;

	prov->line = elem_line(n);
	check_attrs(p, n, provider_attrs);
	check_children(p, n, (const char *const[]){"counterSet", NULL});
	if (get_guid(p, n, "providerGuid", &prov->guid))
		uniq_add(p, U_PROVIDER_GUID, perflib_guid_to_string(&prov->guid, key),
			 attr_line(p, n, "providerGuid"), "providerGuid");
	prov->application_identity = get_str(p, n, "applicationIdentity", true);
	prov->symbol = get_symbol(p, n, "symbol", false);
	e = get_enum(p, n, "callback", callback_enum, "default", "callback");
	prov->callback_custom = e && e->value;
	e = get_enum(p, n, "providerType", provider_type_enum, "userMode", "providerType");
	prov->provider_type = e ? e->value : PERF_PROVIDER_USER_MODE;
	prov->provider_name = get_str(p, n, "providerName", false);
	if (!prov->provider_name && !p->nomem && !(prov->provider_name = strdup("Counters")))
		p->nomem = true;
	get_u32(p, n, "resourceBase", false, &prov->resource_base);
	if (prov->resource_base.set && p->schema >= MANIFEST_SCHEMA_2_0)
		perr(p, attr_line(p, n, "resourceBase"),
		     "resourceBase is not allowed with schemaVersion 2.0");
	if (prov->provider_type == PERF_PROVIDER_USER_MODE && !has_attr(n, "symbol"))
		pwarn(p, prov->line,
		      "user-mode <provider> has no symbol attribute (documented as required since "
		      "Windows 7)");

	prov->sets = calloc(nr ? nr : 1, sizeof(*prov->sets));
	if (!prov->sets) {
		p->nomem = true;
		return;
	}
	for (c = n->children; c; c = c->next)
		if (is_ctr(c, "counterSet"))
			parse_set(p, c, &prov->sets[prov->nr_sets++]);
}

static void parse_counters(struct parser *p, xmlNode *n, struct manifest *man)
{
	size_t nr = count_ctr(n, "provider");
	char *v;
	xmlNode *c;

	man->has_namespace = n->ns != NULL;
	check_attrs(p, n, counters_attrs);
	check_children(p, n, (const char *const[]){"provider", NULL});
	v = get_str(p, n, "schemaVersion", false);
	if (!v)
		pwarn(p, elem_line(n),
		      "<counters> has no schemaVersion (required); read as a Vista-era manifest");
	else if (!strcmp(v, "1.1"))
		p->schema = MANIFEST_SCHEMA_1_1;
	else if (!strcmp(v, "2.0"))
		p->schema = MANIFEST_SCHEMA_2_0;
	else
		perr(p, attr_line(p, n, "schemaVersion"),
		     "unsupported schemaVersion '%s' (expected 1.1 or 2.0)", v);
	free(v);
	man->schema_version = p->schema;

	if (!nr)
		perr(p, elem_line(n), "<counters> needs a <provider>");
	else if (nr > 1)
		pwarn(p, elem_line(n), "<counters> has %zu providers; the schema allows one", nr);
	man->providers = calloc(nr ? nr : 1, sizeof(*man->providers));
	if (!man->providers) {
		p->nomem = true;
		return;
	}
	for (c = n->children; c; c = c->next)
		if (is_ctr(c, "provider"))
			parse_provider(p, c, &man->providers[man->nr_providers++]);
}

/* localization/resources (en-US, else the first)/stringTable. */
static void find_string_table(struct parser *p, xmlNode *root)
{
	xmlNode *l, *r, *first = NULL, *chosen = NULL;

	for (l = root->children; l; l = l->next) {
		if (!is_evt(l, "localization"))
			continue;
		for (r = l->children; r; r = r->next) {
			xmlChar *culture;

			if (!is_evt(r, "resources"))
				continue;
			culture = xmlGetNoNsProp(r, BAD_CAST "culture");
			if (!first)
				first = r;
			if (!chosen && culture && !strcasecmp((const char *)culture, "en-US"))
				chosen = r;
			xmlFree(culture);
		}
	}
	chosen = chosen ? chosen : first;
	for (r = chosen ? chosen->children : NULL; r; r = r->next)
		if (is_evt(r, "stringTable"))
			p->string_table = r;
}

/* Find <counters> below instrumentationManifest/instrumentation and parse it. */
static void parse_document(struct parser *p, xmlDoc *doc, struct manifest *man)
{
	xmlNode *root = xmlDocGetRootElement(doc), *i, *c, *counters = NULL;

	if (!root || !is_evt(root, "instrumentationManifest")) {
		perr(p, root ? elem_line(root) : 1,
		     "root element is <%s>, expected <instrumentationManifest>",
		     root ? (const char *)root->name : "");
		return;
	}
	find_string_table(p, root);
	for (i = root->children; i; i = i->next) {
		if (!is_evt(i, "instrumentation"))
			continue;
		for (c = i->children; c; c = c->next) {
			if (c->type != XML_ELEMENT_NODE ||
			    strcmp((const char *)c->name, "counters"))
				continue;
			if (!is_ctr(c, "counters"))
				perr(p, elem_line(c),
				     "<counters> is in namespace '%s', expected '%s'", c->ns->href,
				     MANIFEST_COUNTERS_NS);
			else if (counters)
				perr(p, elem_line(c),
				     "second <counters> element (first at line %u)",
				     elem_line(counters));
			else
				counters = c;
		}
	}
	if (counters)
		parse_counters(p, counters, man);
	else if (!p->nr_errors)
		perr(p, elem_line(root), "no <counters> section in <instrumentation>");
}

/* ---- load / free ---- */

static int read_file(const char *path, char **ret_buf, size_t *ret_len)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > MAX_FILE_SIZE) {
		err = S_ISDIR(st.st_mode) ? -EISDIR : -EFBIG;
		goto out;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	while (len < (size_t)st.st_size) {
		n = read(fd, buf + len, (size_t)st.st_size - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EIO;
			goto out;
		}
		len += (size_t)n;
	}
	buf[len] = 0;
	*ret_buf = buf;
	*ret_len = len;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return err;
}

static void free_counter(struct manifest_counter *c)
{
	free(c->uri);
	free(c->symbol);
	free(c->name);
	free(c->description);
	free(c->struct_name);
	free(c->field);
}

static void free_set(struct manifest_counterset *set)
{
	size_t i;

	for (i = 0; set->counters && i < set->nr_counters; i++)
		free_counter(&set->counters[i]);
	for (i = 0; set->structs && i < set->nr_structs; i++) {
		free(set->structs[i].name);
		free(set->structs[i].type);
	}
	free(set->counters);
	free(set->structs);
	free(set->uri);
	free(set->symbol);
	free(set->name);
	free(set->description);
}

void manifest_free(struct manifest *man)
{
	size_t i, j;

	if (!man)
		return;
	for (i = 0; man->providers && i < man->nr_providers; i++) {
		struct manifest_provider *prov = &man->providers[i];

		for (j = 0; prov->sets && j < prov->nr_sets; j++)
			free_set(&prov->sets[j]);
		free(prov->sets);
		free(prov->symbol);
		free(prov->application_identity);
		free(prov->provider_name);
	}
	free(man->providers);
	free(man->path);
	free(man);
}

int manifest_load(const char *path, struct manifest **ret_man, FILE *diag)
{
	xmlStructuredErrorFunc old_handler = xmlStructuredError;
	void *old_ctx = xmlStructuredErrorContext;
	struct parser p = {.path = path};
	struct manifest *man = NULL;
	xmlDoc *doc = NULL;
	size_t i;
	int err;

	err = read_file(path, &p.src, &p.src_len);
	if (err) {
		if (diag && err != -ENOMEM)
			fprintf(diag, "%s: error: cannot read: %s\n", path, strerror(-err));
		return err;
	}
	man = calloc(1, sizeof(*man));
	if (!man || !(man->path = strdup(path))) {
		err = -ENOMEM;
		goto out;
	}

	/* No network, no entity expansion; errors come to xml_error() with their line. */
	xmlSetStructuredErrorFunc(&p, xml_error);
	doc = xmlReadMemory(p.src, (int)p.src_len, path, NULL,
			    XML_PARSE_NONET | XML_PARSE_BIG_LINES);
	xmlSetStructuredErrorFunc(old_ctx, old_handler);
	if (doc && !p.nr_errors) {
		map_positions(&p, doc);
		parse_document(&p, doc, man);
	} else if (!p.nr_errors) {
		perr(&p, 1, "not a well-formed XML document");
	}

	if (p.nomem)
		err = -ENOMEM;
	else if (p.nr_errors)
		err = -EINVAL;
	if (err != -ENOMEM)
		diag_flush(&p, diag);
	if (err)
		goto out;
	man->nr_warnings = p.nr_warnings;
	*ret_man = man;
	man = NULL;
out:
	for (i = 0; i < NR_UNIQ; i++)
		xmlHashFree(p.uniq[i], NULL);
	for (i = 0; i < p.nr_diags; i++)
		free(p.diags[i].text);
	free(p.diags);
	free(p.tags);
	free(p.attrs);
	free(p.src);
	xmlFreeDoc(doc);
	manifest_free(man);
	return err;
}

// SPDX-License-Identifier: MIT
/*
 * exp_format.c - perflib-exporter's pure part: counter-type mapping, metric names,
 * escaping, content negotiation and rendering (see exp_format.h, docs/EXPORTER.md).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ctrtype.h"
#include "exp_format.h"

/* ---- text buffer ------------------------------------------------------------------- */

void exp_buf_free(struct exp_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
	b->err = 0;
}

static bool buf_reserve(struct exp_buf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->err)
		return false;
	if (b->len + n + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + n + 1)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->err = -ENOMEM;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

void exp_buf_add(struct exp_buf *b, const char *s, size_t n)
{
	if (!buf_reserve(b, n))
		return;
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void exp_buf_puts(struct exp_buf *b, const char *s)
{
	exp_buf_add(b, s, strlen(s));
}

void exp_buf_putc(struct exp_buf *b, char c)
{
	exp_buf_add(b, &c, 1);
}

void exp_buf_u64(struct exp_buf *b, uint64_t v)
{
	char tmp[20];
	size_t n = sizeof(tmp);

	/* the hot path of a scrape: one call per sample, so no printf */
	do {
		tmp[--n] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	exp_buf_add(b, tmp + n, sizeof(tmp) - n);
}

/* 10^k when @v is a power of ten (k = 0..19), else -1 */
static int pow10_exponent(uint64_t v)
{
	int k = 0;

	if (!v)
		return -1;
	while (v % 10 == 0) {
		v /= 10;
		k++;
	}
	return v == 1 ? k : -1;
}

void exp_buf_ratio(struct exp_buf *b, uint64_t num, uint64_t den)
{
	char tmp[40];
	double d;
	int k;

	if (!den) {
		exp_buf_puts(b, "NaN");
		return;
	}
	k = pow10_exponent(den);
	if (k >= 0) {
		/* exact: integer part, then the k fraction digits without trailing zeros */
		uint64_t rem = num % den;
		int n;

		exp_buf_u64(b, num / den);
		if (!rem)
			return;
		n = snprintf(tmp, sizeof(tmp), ".%0*" PRIu64, k, rem);
		while (n > 1 && tmp[n - 1] == '0')
			n--;
		exp_buf_add(b, tmp, (size_t)n);
		return;
	}
	/* shortest of %.15g and %.17g that reads back as the same double */
	d = (double)num / (double)den;
	snprintf(tmp, sizeof(tmp), "%.15g", d);
	if (strtod(tmp, NULL) != d)
		snprintf(tmp, sizeof(tmp), "%.17g", d);
	exp_buf_puts(b, tmp);
}

/* ---- counter types ------------------------------------------------------------------- */

/* the exporter's view of the one counter-type table (ctrtype.h) */
void exp_type_map(uint32_t type, struct exp_type_info *ret)
{
	static const enum exp_kind kinds[] = {
		[CTRTYPE_CALC_UNKNOWN] = EXP_GAUGE,
		[CTRTYPE_CALC_HIDDEN] = EXP_SKIP,
		[CTRTYPE_CALC_BASE] = EXP_BASE,
		[CTRTYPE_CALC_RAW] = EXP_GAUGE,
		[CTRTYPE_CALC_DELTA] = EXP_COUNTER,
		[CTRTYPE_CALC_TIMER] = EXP_TIMER,
		[CTRTYPE_CALC_QUEUELEN] = EXP_QUEUELEN,
		[CTRTYPE_CALC_ELAPSED] = EXP_ELAPSED,
		[CTRTYPE_CALC_AVERAGE] = EXP_AVERAGE,
		[CTRTYPE_CALC_RAW_FRACTION] = EXP_RAW_FRACTION,
		[CTRTYPE_CALC_SAMPLE_FRACTION] = EXP_SAMPLE_FRACTION,
	};
	static const enum exp_timebase timebases[] = {
		[CTRTYPE_TB_NONE] = EXP_TB_NONE,
		[CTRTYPE_TB_TICK] = EXP_TB_TICK,
		[CTRTYPE_TB_100NS] = EXP_TB_100NS,
		[CTRTYPE_TB_OBJECT] = EXP_TB_OBJECT,
	};
	struct exp_type_info ti = {.kind = kinds[ctrtype_calc(type)]};

	if (ti.kind == EXP_TIMER || ti.kind == EXP_QUEUELEN || ti.kind == EXP_ELAPSED ||
	    ti.kind == EXP_AVERAGE)
		ti.timebase = timebases[ctrtype_timebase(type)];
	if (ti.kind == EXP_TIMER) {
		ti.inverse = type & PERF_INVERSE_COUNTER;
		ti.multi = type & PERF_MULTI_COUNTER;
		ti.precision = ctrtype_subtype(type) == PERF_COUNTER_PRECISION;
	}
	/* histograms are not exported; other unknown values are gauges, or counters by the
	 * DELTA flag (tools.md 5.1) */
	if (type == PERF_COUNTER_HISTOGRAM_TYPE)
		ti.kind = EXP_SKIP;
	else if (ti.kind == EXP_GAUGE && !ctrtype_find(type) && (type & PERF_DELTA_COUNTER))
		ti.kind = EXP_COUNTER;
	*ret = ti;
}

/* ---- names ----------------------------------------------------------------------------- */

static bool is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool is_lower_or_digit(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

char *exp_name_part(const char *name)
{
	size_t n = name ? strlen(name) : 0, len = 0, i;
	bool gap = false;
	char *out;

	/* worst case: every character a word of its own, "aB" -> "a_b" */
	out = malloc(2 * n + 1);
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (!is_upper(c) && !is_lower_or_digit(c)) {
			gap = len > 0;
			continue;
		}
		/* camelCase and ABBRWord boundaries start a new word */
		if (is_upper(c) && i > 0 &&
		    (is_lower_or_digit(name[i - 1]) || (is_upper(name[i - 1]) && i + 1 < n &&
							name[i + 1] >= 'a' && name[i + 1] <= 'z')))
			gap = len > 0;
		if (gap)
			out[len++] = '_';
		gap = false;
		out[len++] = is_upper(c) ? (char)(c - 'A' + 'a') : c;
	}
	out[len] = '\0';
	return out;
}

/* remove @suffix from the end of @s when something stays before it */
static bool strip_suffix(char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	if (n <= m || strcmp(s + n - m, suffix))
		return false;
	s[n - m] = '\0';
	return true;
}

/* ---- preparation ----------------------------------------------------------------------- */

/* A set of strings (open addressing) to keep family and sample names unique. */
struct name_set {
	char **slot;
	size_t cap;
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

static char **name_find(struct name_set *ns, const char *s)
{
	size_t i = name_hash(s) & (ns->cap - 1);

	while (ns->slot[i] && strcmp(ns->slot[i], s))
		i = (i + 1) & (ns->cap - 1);
	return &ns->slot[i];
}

static bool name_taken(struct name_set *ns, const char *s)
{
	return *name_find(ns, s) != NULL;
}

/* the table is sized for every name up front, so insertion never fails for space */
static int name_add(struct name_set *ns, const char *s)
{
	char **slot = name_find(ns, s);

	if (*slot)
		return 0;
	*slot = strdup(s);
	return *slot ? 0 : -ENOMEM;
}

static void name_set_free(struct name_set *ns)
{
	size_t i;

	for (i = 0; ns->slot && i < ns->cap; i++)
		free(ns->slot[i]);
	free(ns->slot);
}

/* the sample-name suffixes each family of @c claims, besides its own name */
static const char *const counter_suffixes[] = {"_total", "_created", NULL};
static const char *const summary_suffixes[] = {"_sum", "_count", "_created", NULL};
static const char *const gauge_suffixes[] = {NULL};

static const char *const *suffixes_of(enum exp_kind kind, bool second)
{
	switch (kind) {
	case EXP_COUNTER:
	case EXP_TIMER:
	case EXP_QUEUELEN:
		return second ? gauge_suffixes : counter_suffixes;
	case EXP_SAMPLE_FRACTION:
		return counter_suffixes;
	case EXP_AVERAGE:
		return summary_suffixes;
	default:
		return gauge_suffixes;
	}
}

static bool family_free(struct name_set *ns, const char *family, const char *const *suffixes)
{
	char tmp[strlen(family) + 16]; /* the longest suffix is "_created" */
	size_t i;

	if (name_taken(ns, family))
		return false;
	for (i = 0; suffixes[i]; i++) {
		snprintf(tmp, sizeof(tmp), "%s%s", family, suffixes[i]);
		if (name_taken(ns, tmp))
			return false;
	}
	return true;
}

static int family_claim(struct name_set *ns, const char *family, const char *const *suffixes)
{
	char tmp[strlen(family) + 16];
	size_t i;
	int err;

	err = name_add(ns, family);
	for (i = 0; !err && suffixes[i]; i++) {
		snprintf(tmp, sizeof(tmp), "%s%s", family, suffixes[i]);
		err = name_add(ns, tmp);
	}
	return err;
}

static int counter_index(const struct exp_set *set, uint32_t id)
{
	size_t i;

	if (id == PERFLIB_NO_ID)
		return -1;
	for (i = 0; i < set->nr_counters; i++)
		if (set->counters[i].id == id)
			return (int)i;
	return -1;
}

static bool needs_base(const struct exp_type_info *ti)
{
	return ti->kind == EXP_AVERAGE || ti->kind == EXP_RAW_FRACTION ||
	       ti->kind == EXP_SAMPLE_FRACTION;
}

/* does counter @c count seconds (known clock), so its family ends in _seconds? */
static bool in_seconds(const struct exp_counter *c)
{
	if (c->ti.kind == EXP_QUEUELEN)
		return false;
	if (c->ti.timebase == EXP_TB_TICK || c->ti.timebase == EXP_TB_100NS)
		return true;
	return c->ti.timebase == EXP_TB_OBJECT && c->freq >= 0;
}

/* resolve companions and decide whether counter @i of @set gets families of its own */
static void counter_resolve(struct exp_set *set, size_t i)
{
	struct exp_counter *c = &set->counters[i];

	exp_type_map(c->type, &c->ti);
	/* the one rule (ctrtype.c): BaseCounterId, MultiId for multi types, the V1 neighbour */
	c->base = (int)ctrtype_base_index(c->type, counter_index(set, c->base_id),
					  counter_index(set, c->multi_id), i, set->nr_counters,
					  i + 1 < set->nr_counters ? set->counters[i + 1].type : 0);
	c->time = counter_index(set, c->time_id);
	c->freq = counter_index(set, c->freq_id);
	c->emit = c->ti.kind != EXP_SKIP && c->ti.kind != EXP_BASE &&
		  !(c->attrib & PERF_ATTRIB_NO_DISPLAYABLE);
	if (needs_base(&c->ti) && c->base < 0)
		c->emit = false;
	if (c->ti.kind == EXP_ELAPSED && (c->time < 0 || c->freq < 0))
		c->emit = false;
}

/* counters that an exported counter reads are folded into it, never exported alone */
static void fold_companions(struct exp_set *set)
{
	size_t i;

	for (i = 0; i < set->nr_counters; i++) {
		const struct exp_counter *c = &set->counters[i];

		if (!c->emit)
			continue;
		if (c->base >= 0)
			set->counters[c->base].emit = false;
		if (c->time >= 0 && c->ti.timebase == EXP_TB_OBJECT)
			set->counters[c->time].emit = false;
		if (c->freq >= 0 && c->ti.timebase == EXP_TB_OBJECT)
			set->counters[c->freq].emit = false;
	}
}

/* the counter's part of its family name, with the suffixes its unit adds removed */
static char *counter_part(const struct exp_counter *c)
{
	char *part = exp_name_part(c->name);
	bool again = true;

	if (part && !*part) {
		free(part);
		if (asprintf(&part, "counter_%" PRIu32, c->id) < 0)
			return NULL;
	}
	if (!part)
		return NULL;
	/* "Requests/sec" -> requests (+ _total), "Busy Seconds" -> busy (+ _seconds_total) */
	while (again) {
		again = strip_suffix(part, "_total");
		if (c->ti.kind == EXP_COUNTER || c->ti.kind == EXP_SAMPLE_FRACTION)
			again |= strip_suffix(part, "_per_second") ||
				 strip_suffix(part, "_per_sec") || strip_suffix(part, "_persec") ||
				 strip_suffix(part, "_sec");
		if (in_seconds(c))
			again |= strip_suffix(part, "_seconds");
	}
	return part;
}

static int counter_name(struct exp_set *set, struct exp_counter *c, struct name_set *ns)
{
	const char *unit = in_seconds(c) ? "_seconds" : "";
	bool second = c->ti.kind == EXP_RAW_FRACTION || c->ti.kind == EXP_SAMPLE_FRACTION ||
		      (c->ti.multi && c->base >= 0);
	char *part, *stem = NULL, *family = NULL, *family2 = NULL;
	unsigned int n;
	int err = 0;

	part = counter_part(c);
	if (!part)
		return -ENOMEM;
	/* plain name, then _<id>, then _<id>_<n> until every name it needs is free */
	for (n = 0;; n++) {
		int r;

		if (n == 0)
			r = asprintf(&stem, "%s_%s", set->prefix, part);
		else if (n == 1)
			r = asprintf(&stem, "%s_%s_%" PRIu32, set->prefix, part, c->id);
		else
			r = asprintf(&stem, "%s_%s_%" PRIu32 "_%u", set->prefix, part, c->id, n);
		if (r < 0) {
			stem = NULL;
			err = -ENOMEM;
			break;
		}
		if (asprintf(&family, "%s%s", stem, unit) < 0) {
			family = NULL;
			err = -ENOMEM;
			break;
		}
		if (second && asprintf(&family2, "%s_base", stem) < 0) {
			family2 = NULL;
			err = -ENOMEM;
			break;
		}
		free(stem);
		stem = NULL;
		if (family_free(ns, family, suffixes_of(c->ti.kind, false)) &&
		    (!family2 || family_free(ns, family2, suffixes_of(c->ti.kind, true))))
			break;
		free(family);
		free(family2);
		family = family2 = NULL;
	}
	free(stem);
	free(part);
	if (err) {
		free(family);
		free(family2);
		family = family2 = NULL;
	}
	if (!err)
		err = family_claim(ns, family, suffixes_of(c->ti.kind, false));
	if (!err && family2)
		err = family_claim(ns, family2, suffixes_of(c->ti.kind, true));
	free(c->family);
	free(c->family2);
	c->family = family;
	c->family2 = family2;
	return err;
}

static int set_cmp(const void *a, const void *b)
{
	const struct exp_set *x = *(struct exp_set *const *)a, *y = *(struct exp_set *const *)b;
	int r = strcmp(x->prefix, y->prefix);

	return r ? r : memcmp(&x->guid, &y->guid, sizeof(GUID));
}

static int set_prefix(struct exp_set *set)
{
	char *part = exp_name_part(set->name);
	const GUID *g = &set->guid;
	int r;

	if (!part)
		return -ENOMEM;
	free(set->prefix);
	if (*part)
		r = asprintf(&set->prefix, EXP_PREFIX "%s", part);
	else
		r = asprintf(&set->prefix,
			     EXP_PREFIX "cs_%08" PRIx32 "%04x%04x%02x%02x%02x%02x%02x%02x%02x%02x",
			     g->Data1, g->Data2, g->Data3, g->Data4[0], g->Data4[1], g->Data4[2],
			     g->Data4[3], g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7]);
	free(part);
	if (r < 0) {
		set->prefix = NULL;
		return -ENOMEM;
	}
	return 0;
}

#define META_FAMILY EXP_PREFIX "counterset_instances"

int exp_prepare(struct exp_set **sets, size_t nr_sets)
{
	struct name_set ns = {0};
	size_t i, j, nr_names = 8;
	int err = 0;

	for (i = 0; i < nr_sets && !err; i++) {
		err = set_prefix(sets[i]);
		nr_names += 8 * sets[i]->nr_counters;
	}
	if (err)
		return err;
	qsort(sets, nr_sets, sizeof(*sets), set_cmp);
	/* two sets with one name: the later ones get the first GUID field as a suffix */
	for (i = 1, j = 0; i < nr_sets; i++) {
		char *p;

		if (strcmp(sets[i]->prefix, sets[j]->prefix)) {
			j = i; /* first of a new run: keeps its name */
			continue;
		}
		if (asprintf(&p, "%s_%08" PRIx32, sets[i]->prefix, sets[i]->guid.Data1) < 0)
			return -ENOMEM;
		free(sets[i]->prefix);
		sets[i]->prefix = p;
	}
	for (ns.cap = 64; ns.cap < 2 * nr_names; ns.cap *= 2)
		;
	ns.slot = calloc(ns.cap, sizeof(*ns.slot));
	if (!ns.slot)
		return -ENOMEM;
	err = family_claim(&ns, META_FAMILY, gauge_suffixes);
	for (i = 0; i < nr_sets && !err; i++) {
		struct exp_set *set = sets[i];

		for (j = 0; j < set->nr_counters; j++)
			counter_resolve(set, j);
		fold_companions(set);
		for (j = 0; j < set->nr_counters && !err; j++) {
			struct exp_counter *c = &set->counters[j];

			if (c->emit)
				err = counter_name(set, c, &ns);
		}
	}
	name_set_free(&ns);
	return err;
}

/* ---- instances ------------------------------------------------------------------------ */

void exp_set_reset(struct exp_set *set)
{
	set->nr_instances = 0;
	set->nr_dropped = 0;
	set->strings.len = 0;
	set->strings.err = 0;
}

void exp_set_free(struct exp_set *set)
{
	size_t i;

	if (!set)
		return;
	for (i = 0; i < set->nr_counters; i++) {
		free(set->counters[i].name);
		free(set->counters[i].help);
		free(set->counters[i].family);
		free(set->counters[i].family2);
	}
	free(set->counters);
	free(set->name);
	free(set->help);
	free(set->prefix);
	free(set->instances);
	free(set->values);
	free(set->present);
	exp_buf_free(&set->strings);
	free(set);
}

static int instances_grow(struct exp_set *set)
{
	size_t cap = set->cap_instances ? 2 * set->cap_instances : 16;
	size_t row = set->nr_counters ? set->nr_counters : 1;
	struct exp_instance *inst;
	uint64_t *values;
	uint8_t *present;

	inst = realloc(set->instances, cap * sizeof(*inst));
	if (!inst)
		return -ENOMEM;
	set->instances = inst;
	values = realloc(set->values, cap * row * sizeof(*values));
	if (!values)
		return -ENOMEM;
	set->values = values;
	present = realloc(set->present, cap * row);
	if (!present)
		return -ENOMEM;
	set->present = present;
	set->cap_instances = cap;
	return 0;
}

int exp_set_add_instance(struct exp_set *set, uint32_t id, const char *name, unsigned int dup,
			 size_t *ret_index)
{
	struct exp_instance *inst;
	size_t i = set->nr_instances;
	int err;

	if (i == set->cap_instances) {
		err = instances_grow(set);
		if (err)
			return err;
	}
	inst = &set->instances[i];
	inst->id = id;
	inst->row = i;
	inst->name = set->strings.len;
	inst->label = 0;
	inst->dup = dup;
	/* names are NUL-separated in the arena; offsets survive its reallocation */
	exp_buf_add(&set->strings, name ? name : "", name ? strlen(name) + 1 : 1);
	if (set->strings.err)
		return set->strings.err;
	memset(set->present + i * set->nr_counters, 0, set->nr_counters);
	set->nr_instances++;
	*ret_index = i;
	return 0;
}

void exp_set_value(struct exp_set *set, size_t i, size_t c, uint64_t value)
{
	size_t row = set->instances[i].row;

	set->values[row * set->nr_counters + c] = value;
	set->present[row * set->nr_counters + c] = 1;
}

static int inst_cmp_name(const void *a, const void *b, void *arg)
{
	const struct exp_instance *x = a, *y = b;
	const char *strings = arg;
	int r = strcmp(strings + x->name, strings + y->name);

	if (r)
		return r;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int inst_cmp_label(const void *a, const void *b, void *arg)
{
	const struct exp_instance *x = a, *y = b;
	const char *strings = arg;
	int r = strcmp(strings + x->label, strings + y->label);

	if (r)
		return r;
	return x->id < y->id ? -1 : x->id > y->id;
}

int exp_set_finish(struct exp_set *set)
{
	bool multi = set->instance_type & PERF_COUNTERSET_FLAG_MULTIPLE;
	bool renamed = false;
	size_t i, n;

	if (set->strings.err)
		return set->strings.err;
	if (set->nr_instances > 1) /* qsort_r must not see a NULL array */
		qsort_r(set->instances, set->nr_instances, sizeof(*set->instances), inst_cmp_name,
			set->strings.data);
	if (!multi && set->nr_instances > 1) {
		/* one series per family without labels: the lowest id stands for the set */
		set->nr_dropped += set->nr_instances - 1;
		set->nr_instances = 1;
	}
	/* reserve the labels' worst case so that escaping can read names from the arena */
	for (i = 0, n = 0; multi && i < set->nr_instances; i++)
		n += 2 * strlen(set->strings.data + set->instances[i].name) + 48;
	if (n && !buf_reserve(&set->strings, n))
		return set->strings.err;
	for (i = 0; i < set->nr_instances; i++) {
		struct exp_instance *inst = &set->instances[i];
		size_t name = inst->name;
		char num[24];

		if (!multi) {
			/* empty label set: point at the NUL of any name */
			inst->label = inst->name + strlen(set->strings.data + inst->name);
			continue;
		}
		/* k-th repeat of a name (k >= 1) is shown as "name#k", like PDH does */
		if (inst->dup)
			snprintf(num, sizeof(num), "#%u", inst->dup);
		else
			num[0] = '\0';
		renamed |= num[0] != '\0';
		inst->label = set->strings.len;
		exp_buf_puts(&set->strings, "{" EXP_INSTANCE_LABEL "=\"");
		exp_escape_label(&set->strings, set->strings.data + name);
		exp_buf_puts(&set->strings, num);
		exp_buf_add(&set->strings, "\"}", 3); /* with the NUL */
		if (set->strings.err)
			return set->strings.err;
	}
	if (!renamed)
		return 0;
	/* "a#1" may also exist as a real name: sort by label and keep the first of each */
	qsort_r(set->instances, set->nr_instances, sizeof(*set->instances), inst_cmp_label,
		set->strings.data);
	for (i = 0, n = 0; i < set->nr_instances; i++) {
		if (n > 0 && !strcmp(set->strings.data + set->instances[n - 1].label,
				     set->strings.data + set->instances[i].label)) {
			set->nr_dropped++;
			continue;
		}
		set->instances[n++] = set->instances[i];
	}
	set->nr_instances = n;
	return 0;
}

/* ---- escaping and negotiation ----------------------------------------------------------- */

static void escape(struct exp_buf *b, const char *s, bool quote)
{
	const char *run = s;

	/* copy runs of plain bytes in one go */
	for (; *s; s++) {
		const char *rep;

		if (*s == '\\')
			rep = "\\\\";
		else if (*s == '\n')
			rep = "\\n";
		else if (*s == '"' && quote)
			rep = "\\\"";
		else
			continue;
		exp_buf_add(b, run, (size_t)(s - run));
		exp_buf_add(b, rep, 2);
		run = s + 1;
	}
	exp_buf_add(b, run, (size_t)(s - run));
}

void exp_escape_label(struct exp_buf *b, const char *s)
{
	escape(b, s, true);
}

void exp_escape_help(struct exp_buf *b, const char *s, enum exp_format fmt)
{
	escape(b, s, fmt == EXP_FMT_OPENMETRICS);
}

const char *exp_content_type(enum exp_format fmt)
{
	return fmt == EXP_FMT_OPENMETRICS ? EXP_CT_OPENMETRICS : EXP_CT_PROMETHEUS;
}

static const char *skip_ws(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

static bool token_is(const char *s, const char *end, const char *word)
{
	size_t n = strlen(word);

	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	return (size_t)(end - s) == n && !strncasecmp(s, word, n);
}

/* q-value (0..1000) of one media range "type/sub;param=v;q=0.5"; @version receives
 * whether a version parameter, if any, is one we produce */
static int media_q(const char *s, const char *end, bool *version_ok)
{
	const char *p;
	int q = 1000;

	*version_ok = true;
	for (p = memchr(s, ';', (size_t)(end - s)); p && p < end;) {
		const char *next = memchr(p + 1, ';', (size_t)(end - p - 1));
		const char *param = skip_ws(p + 1, end), *stop = next ? next : end;
		const char *eq = memchr(param, '=', (size_t)(stop - param));

		if (eq && token_is(param, eq, "q")) {
			char tmp[16] = "";
			size_t n = (size_t)(stop - eq - 1);

			memcpy(tmp, eq + 1, n < sizeof(tmp) - 1 ? n : sizeof(tmp) - 1);
			q = (int)(strtod(tmp, NULL) * 1000 + 0.5);
			q = q < 0 ? 0 : q > 1000 ? 1000 : q;
		} else if (eq && token_is(param, eq, "version")) {
			const char *v = skip_ws(eq + 1, stop);

			*version_ok = token_is(v, stop, "1.0.0") || token_is(v, stop, "0.0.1");
		}
		p = next;
	}
	return q;
}

enum exp_format exp_negotiate(const char *accept)
{
	int q_om = -1, q_plain = -1, q_text = -1, q_any = -1;
	const char *s = accept, *end;

	if (!accept)
		return EXP_FMT_PROMETHEUS;
	for (; *s; s = *end ? end + 1 : end) {
		const char *type, *semi;
		bool version_ok;
		int q;

		end = strchr(s, ',');
		if (!end)
			end = s + strlen(s);
		type = skip_ws(s, end);
		semi = memchr(type, ';', (size_t)(end - type));
		q = media_q(type, end, &version_ok);
		if (!semi)
			semi = end;
		if (token_is(type, semi, "application/openmetrics-text")) {
			if (version_ok && q > q_om)
				q_om = q;
		} else if (token_is(type, semi, "text/plain")) {
			q_plain = q > q_plain ? q : q_plain;
		} else if (token_is(type, semi, "text/*")) {
			q_text = q > q_text ? q : q_text;
		} else if (token_is(type, semi, "*/*")) {
			q_any = q > q_any ? q : q_any;
		}
	}
	/* text/plain's quality comes from its most specific range */
	if (q_plain < 0)
		q_plain = q_text >= 0 ? q_text : q_any;
	return q_om > 0 && q_om >= q_plain ? EXP_FMT_OPENMETRICS : EXP_FMT_PROMETHEUS;
}

/* ---- rendering ---------------------------------------------------------------------- */

/* what one sample's value is computed from */
struct render_ctx {
	const struct exp_set *set;
	enum exp_format fmt;
	uint64_t perf_freq;
	struct exp_buf *out;
};

static const uint64_t *row_values(const struct exp_set *set, const struct exp_instance *inst)
{
	return set->values + inst->row * set->nr_counters;
}

static const uint8_t *row_present(const struct exp_set *set, const struct exp_instance *inst)
{
	return set->present + inst->row * set->nr_counters;
}

/* the number of raw units per second of counter @c in instance @inst (0: unknown) */
static uint64_t units_per_second(const struct render_ctx *rc, const struct exp_counter *c,
				 const struct exp_instance *inst)
{
	switch (c->ti.timebase) {
	case EXP_TB_TICK:
		return rc->perf_freq;
	case EXP_TB_100NS:
		return 10000000;
	case EXP_TB_OBJECT:
		if (c->freq < 0 || !row_present(rc->set, inst)[c->freq])
			return 0;
		return row_values(rc->set, inst)[c->freq];
	default:
		return 1;
	}
}

/* HELP, TYPE and (OpenMetrics) UNIT lines; HELP is "[Base of <base_of>: ]<help><note>" */
static void descriptor(const struct render_ctx *rc, const char *family, const char *type,
		       const char *unit, const char *base_of, const char *help, const char *note)
{
	struct exp_buf *out = rc->out;
	/* Prometheus text names counters by their sample name, OpenMetrics by the family */
	const char *suffix =
		rc->fmt == EXP_FMT_PROMETHEUS && !strcmp(type, "counter") ? "_total" : "";

	exp_buf_puts(out, "# HELP ");
	exp_buf_puts(out, family);
	exp_buf_puts(out, suffix);
	exp_buf_putc(out, ' ');
	if (base_of) {
		exp_buf_puts(out, "Base of ");
		exp_buf_puts(out, base_of);
		exp_buf_puts(out, ": ");
	}
	exp_escape_help(out, help, rc->fmt);
	exp_buf_puts(out, note);
	exp_buf_puts(out, "\n# TYPE ");
	exp_buf_puts(out, family);
	exp_buf_puts(out, suffix);
	exp_buf_putc(out, ' ');
	exp_buf_puts(out, type);
	exp_buf_putc(out, '\n');
	if (unit && rc->fmt == EXP_FMT_OPENMETRICS) {
		exp_buf_puts(out, "# UNIT ");
		exp_buf_puts(out, family);
		exp_buf_putc(out, ' ');
		exp_buf_puts(out, unit);
		exp_buf_putc(out, '\n');
	}
}

static void sample_start(const struct render_ctx *rc, const char *family, const char *suffix,
			 const struct exp_instance *inst)
{
	exp_buf_puts(rc->out, family);
	exp_buf_puts(rc->out, suffix);
	exp_buf_puts(rc->out, rc->set->strings.data + inst->label);
	exp_buf_putc(rc->out, ' ');
}

static const char *help_of(const struct exp_counter *c)
{
	if (c->help && *c->help)
		return c->help;
	return c->name ? c->name : "";
}

/* which value a family of counter @c shows */
enum family_part {
	PART_MAIN, /* the counter itself */
	PART_BASE, /* its base (fraction denominators, multi-timer divisors) */
};

/* write the sample line(s) of @c for @inst; false when its inputs are missing */
static bool counter_sample(const struct render_ctx *rc, const struct exp_counter *c,
			   enum family_part part, const struct exp_instance *inst, bool dry)
{
	const uint64_t *v = row_values(rc->set, inst);
	const uint8_t *have = row_present(rc->set, inst);
	size_t i = (size_t)(c - rc->set->counters);
	struct exp_buf *out = rc->out;
	uint64_t units;

	if (!have[i] || ((part == PART_BASE || c->ti.kind == EXP_AVERAGE) && !have[c->base]))
		return false;
	if (c->ti.kind == EXP_ELAPSED && !have[c->time])
		return false;
	if (c->ti.timebase == EXP_TB_OBJECT && c->freq >= 0 && !have[c->freq])
		return false;
	if (dry)
		return true;
	if (part == PART_BASE) {
		sample_start(rc, c->family2, c->ti.kind == EXP_SAMPLE_FRACTION ? "_total" : "",
			     inst);
		exp_buf_u64(out, v[c->base]);
		exp_buf_putc(out, '\n');
		return true;
	}
	units = units_per_second(rc, c, inst);
	switch (c->ti.kind) {
	case EXP_COUNTER:
	case EXP_SAMPLE_FRACTION:
		sample_start(rc, c->family, "_total", inst);
		exp_buf_u64(out, v[i]);
		break;
	case EXP_TIMER:
	case EXP_QUEUELEN:
		sample_start(rc, c->family, "_total", inst);
		if (c->ti.timebase == EXP_TB_OBJECT && c->freq < 0)
			exp_buf_u64(out, v[i]); /* clock unknown: raw ticks */
		else
			exp_buf_ratio(out, v[i], units);
		break;
	case EXP_ELAPSED:
		sample_start(rc, c->family, "", inst);
		/* (now - start) / freq; no start or a start in the future shows 0, as .NET */
		if (!v[i] || v[i] > v[c->time])
			exp_buf_puts(out, "0");
		else
			exp_buf_ratio(out, v[c->time] - v[i], units);
		break;
	case EXP_AVERAGE:
		sample_start(rc, c->family, "_sum", inst);
		exp_buf_ratio(out, v[i], units);
		exp_buf_putc(out, '\n');
		sample_start(rc, c->family, "_count", inst);
		exp_buf_u64(out, v[c->base]);
		break;
	default:
		sample_start(rc, c->family, "", inst);
		exp_buf_u64(out, v[i]);
		break;
	}
	exp_buf_putc(out, '\n');
	return true;
}

static const char *type_of(const struct exp_counter *c, enum family_part part)
{
	switch (c->ti.kind) {
	case EXP_COUNTER:
	case EXP_TIMER:
	case EXP_QUEUELEN:
		return part == PART_MAIN ? "counter" : "gauge";
	case EXP_SAMPLE_FRACTION:
		return "counter";
	case EXP_AVERAGE:
		return "summary";
	default:
		return "gauge";
	}
}

static void render_family(const struct render_ctx *rc, const struct exp_counter *c,
			  enum family_part part)
{
	const struct exp_set *set = rc->set;
	const char *family = part == PART_MAIN ? c->family : c->family2;
	const char *note = "";
	size_t i;

	/* families without a sample are left out: find the first */
	for (i = 0; i < set->nr_instances; i++)
		if (counter_sample(rc, c, part, &set->instances[i], true))
			break;
	if (i == set->nr_instances)
		return;
	if (part == PART_BASE)
		note = "";
	else if (c->ti.timebase == EXP_TB_OBJECT && c->freq < 0)
		note = " (raw ticks of the counter set's clock: no frequency counter)";
	else if (c->ti.inverse)
		note = " (inverse timer: counts the time the resource was not busy)";
	else if (c->ti.kind == EXP_QUEUELEN)
		note = " (queue length x seconds: rate() gives the average queue length)";
	descriptor(rc, family, type_of(c, part),
		   part == PART_MAIN && in_seconds(c) ? "seconds" : NULL,
		   part == PART_BASE ? c->family : NULL,
		   part == PART_BASE ? help_of(&set->counters[c->base]) : help_of(c), note);
	for (; i < set->nr_instances; i++)
		counter_sample(rc, c, part, &set->instances[i], false);
}

static void render_meta(struct exp_set *const *sets, size_t nr_sets, struct exp_buf *out)
{
	size_t i;

	if (!nr_sets)
		return;
	exp_buf_puts(out, "# HELP " META_FAMILY " Instances of each perflib counter set.\n"
			  "# TYPE " META_FAMILY " gauge\n");
	for (i = 0; i < nr_sets; i++) {
		const struct exp_set *set = sets[i];
		const GUID *g = &set->guid;
		char guid[40];

		snprintf(guid, sizeof(guid),
			 "%08" PRIx32 "-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", g->Data1,
			 g->Data2, g->Data3, g->Data4[0], g->Data4[1], g->Data4[2], g->Data4[3],
			 g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7]);
		exp_buf_puts(out, META_FAMILY "{counterset=\"");
		exp_escape_label(out, set->name ? set->name : "");
		exp_buf_puts(out, "\",guid=\"");
		exp_buf_puts(out, guid);
		exp_buf_puts(out, "\"} ");
		exp_buf_u64(out, set->nr_instances);
		exp_buf_putc(out, '\n');
	}
}

void exp_render(struct exp_set *const *sets, size_t nr_sets, int64_t perf_freq, enum exp_format fmt,
		struct exp_buf *out)
{
	struct render_ctx rc = {
		.fmt = fmt,
		.perf_freq = perf_freq > 0 ? (uint64_t)perf_freq : 0,
		.out = out,
	};
	size_t i, j;

	render_meta(sets, nr_sets, out);
	for (i = 0; i < nr_sets; i++) {
		rc.set = sets[i];
		for (j = 0; j < sets[i]->nr_counters; j++) {
			const struct exp_counter *c = &sets[i]->counters[j];

			if (!c->emit || !c->family)
				continue;
			render_family(&rc, c, PART_MAIN);
			if (c->family2)
				render_family(&rc, c, PART_BASE);
		}
	}
	if (fmt == EXP_FMT_OPENMETRICS)
		exp_buf_puts(out, "# EOF\n");
}

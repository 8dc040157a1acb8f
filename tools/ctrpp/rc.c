// SPDX-License-Identifier: MIT
/*
 * rc.c - the .rc string table (-rc), tools.md 2.6.
 *
 * Without schemaVersion 2.0 every counter set and counter, in document order, takes a
 * block of four IDs from resourceBase (default 1): name, the name again marked {Locked},
 * description, one unused. With 2.0 the IDs are the manifest's nameID (locked copy at
 * nameID + 1) and descriptionID. The output matches real CTRPP output (hpx_counters.rc).
 * Kernel-mode providers are included: their strings do not depend on the mode.
 */
#include <errno.h>
#include <stdlib.h>

#include "ctrpp.h"

struct rc_entry {
	uint32_t id;
	unsigned int line; /* of the element the string comes from */
};

struct rc {
	const struct ctrpp *c;
	FILE *out;
	struct rc_entry *used;
	size_t nr_used, cap;
	int err;
};

/* An RC string literal: a quote is doubled, a backslash escaped. */
static void put_rc_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		else if (*s == '\\')
			fputc('\\', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* Write one string unless its ID is taken (reported once per clash). */
static void put_string(struct rc *rc, uint32_t id, const char *text, bool locked, unsigned int line)
{
	size_t i;

	for (i = 0; i < rc->nr_used; i++)
		if (rc->used[i].id == id) {
			fprintf(stderr,
				"%s:%u: error: resource ID %u is already used by the string of "
				"line %u\n",
				rc->c->input, line, id, rc->used[i].line);
			rc->err = -EINVAL;
			return;
		}
	if (rc->nr_used == rc->cap) {
		size_t cap = rc->cap ? 2 * rc->cap : 64;
		struct rc_entry *u = realloc(rc->used, cap * sizeof(*u));

		if (!u) {
			rc->err = -ENOMEM;
			return;
		}
		rc->used = u;
		rc->cap = cap;
	}
	rc->used[rc->nr_used++] = (struct rc_entry){id, line};
	fprintf(rc->out, "    %u ", id);
	put_rc_string(rc->out, text);
	fputs(locked ? " // {Locked} means don't localize\n" : "\n", rc->out);
}

/* The strings of one counter set or counter; @next is the 1.1 block counter. */
static void put_item(struct rc *rc, const char *name, const char *desc,
		     const struct manifest_opt_u32 *name_id, const struct manifest_opt_u32 *desc_id,
		     unsigned int line, uint32_t *next)
{
	uint32_t base = *next;

	if (rc->c->man->schema_version >= MANIFEST_SCHEMA_2_0) {
		if (name && name_id->set) {
			put_string(rc, name_id->value, name, false, line);
			put_string(rc, name_id->value + 1, name, true, line);
		}
		if (desc && desc_id->set)
			put_string(rc, desc_id->value, desc, false, line);
		return;
	}
	/* The block is taken even when a string is missing, so later IDs do not move. */
	if (name) {
		put_string(rc, base, name, false, line);
		put_string(rc, base + 1, name, true, line);
	}
	if (desc)
		put_string(rc, base + 2, desc, false, line);
	*next = base + 4;
}

int ctrpp_write_rc(const struct ctrpp *c, FILE *out)
{
	struct rc rc = {.c = c, .out = out};
	size_t i, j, k;

	fputs("STRINGTABLE\nBEGIN\n", out);
	for (i = 0; i < c->man->nr_providers; i++) {
		const struct manifest_provider *p = &c->man->providers[i];
		uint32_t next = p->resource_base.set ? p->resource_base.value : 1;

		for (j = 0; j < p->nr_sets; j++) {
			const struct manifest_counterset *set = &p->sets[j];

			put_item(&rc, set->name, set->description, &set->name_id,
				 &set->description_id, set->line, &next);
			for (k = 0; k < set->nr_counters; k++) {
				const struct manifest_counter *ctr = &set->counters[k];

				put_item(&rc, ctr->name, ctr->description, &ctr->name_id,
					 &ctr->description_id, ctr->line, &next);
			}
		}
	}
	fputs("END\n", out);
	free(rc.used);
	return rc.err;
}

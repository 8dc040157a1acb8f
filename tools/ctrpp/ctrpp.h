/* SPDX-License-Identifier: MIT */
/*
 * ctrpp.h - what the ctrpp generators share: the run's options and the C names chosen for
 * the provider and its counter sets.
 */
#ifndef CTRPP_H
#define CTRPP_H

#include <stdbool.h>
#include <stdio.h>

#include "manifest.h"

/* One run of ctrpp over one manifest. */
struct ctrpp {
	const char *input;  /* manifest path as given (printed in the banner) */
	const char *prefix; /* -prefix, "" when absent */
	bool callback;	    /* -NotificationCallback or -MemoryRoutines */
	const struct manifest *man;
	/* Filled by ctrpp_prepare(), for the user-mode provider only. */
	const struct manifest_provider *prov; /* NULL: no user-mode provider, no code */
	char *prov_symbol;  /* provider@symbol, or a name made from the file name */
	char **set_symbols; /* counterSet@symbol or a made-up name, per set */
};

/*
 * ctrpp_prepare - pick the user-mode provider and the C names of what -o and -ch generate.
 * Kernel-mode providers are skipped with a notice; missing symbols get names made from the
 * manifest file name (with a warning). Errors (several user-mode providers, a counter this
 * library cannot register, a generated name defined twice) are printed to stderr as
 * FILE:LINE: error: ... Returns 0, -EINVAL or -ENOMEM.
 */
int ctrpp_prepare(struct ctrpp *c);

/* ctrpp_release - free what ctrpp_prepare() allocated; safe on a zeroed struct. */
void ctrpp_release(struct ctrpp *c);

/* ctrpp_write_header - the user-mode header (-o), tools.md 2.2/2.3 adapted to C. */
void ctrpp_write_header(const struct ctrpp *c, FILE *out);

/* ctrpp_write_symbols - the consumer symbol header (-ch): names and GUIDs as macros. */
void ctrpp_write_symbols(const struct ctrpp *c, FILE *out);

/*
 * ctrpp_write_rc - the STRINGTABLE (-rc) of tools.md 2.6 for every provider.
 * Returns 0, or -EINVAL when two strings get the same resource ID (printed to stderr).
 */
int ctrpp_write_rc(const struct ctrpp *c, FILE *out);

#endif /* CTRPP_H */

/* SPDX-License-Identifier: MIT */
/*
 * slot_hdr.h - the fields of a slot's header (struct perflib_slot_hdr of bpf/layout.h) as
 * one table: the names, offsets and sizes the BTF of a slot gives them (userspace/btf.c)
 * and lodctr --dump prints. A field added to the struct is added here, once;
 * tests/unit/test_btf.c checks that the table covers the struct, field after field, and
 * that the BTF names exactly these. Header only: nothing exported.
 */
#ifndef PERFLIB_SLOT_HDR_H
#define PERFLIB_SLOT_HDR_H

#include <stddef.h>
#include <stdint.h>

#include "layout.h"

struct perflib_slot_hdr_field {
	const char *name; /* the field of struct perflib_slot_hdr (and of the slot's BTF) */
	const char *what; /* what lodctr --dump says of it after the name, NULL: nothing */
	uint32_t offset;  /* bytes from the slot's start */
	uint32_t size;	  /* bytes: 4 or 8 */
};

#define PERFLIB_SLOT_HDR_FIELD(f, what)                                                            \
	{                                                                                          \
#f, what, offsetof(struct perflib_slot_hdr, f),                                    \
			sizeof(((struct perflib_slot_hdr *)0)->f)                                  \
	}

/* in the order of the struct */
static const struct perflib_slot_hdr_field perflib_slot_hdr_fields[] = {
	PERFLIB_SLOT_HDR_FIELD(seq, "state, generation"),
	PERFLIB_SLOT_HDR_FIELD(owner_pid, NULL),
	PERFLIB_SLOT_HDR_FIELD(owner_start, NULL),
};

#define PERFLIB_SLOT_HDR_NR_FIELDS                                                                 \
	(sizeof(perflib_slot_hdr_fields) / sizeof(perflib_slot_hdr_fields[0]))

#endif /* PERFLIB_SLOT_HDR_H */

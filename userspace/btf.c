// SPDX-License-Identifier: MIT
/*
 * btf.c - the BTF that names the bytes of a counter set: of the info value, and of a
 * segment's slots (the header's fields from common/slot_hdr.h, one field per counter, named
 * after it); the same field names and offsets handed out by perflib_counterset_layout().
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "ctrtype.h"
#include "internal.h"
#include "slot_hdr.h"

/* a C identifier from a counter name; unique within the struct thanks to the id suffix */
static void field_name(const struct perflib_info *info, const struct perflib_info_counter *c,
		       const char *suffix, char *buf, size_t size)
{
	char utf8[96];
	size_t units, i, n = 0;
	const WCHAR *s = perflib_info_string(info, c->name, &units);

	/* a long name is cut (-ENOSPC leaves what fits): only 48 characters are kept anyway */
	if (s)
		perflib_utf16_to_utf8(s, units, utf8, sizeof(utf8));
	if (!s || !utf8[0]) {
		snprintf(buf, size, "counter_%u%s", c->id, suffix);
		return;
	}
	for (i = 0; utf8[i] && n + 1 < 48; i++) {
		unsigned char ch = (unsigned char)utf8[i];
		bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9');

		if (ok)
			buf[n++] = (char)ch;
		else if (n && buf[n - 1] != '_')
			buf[n++] = '_';
	}
	while (n && buf[n - 1] == '_')
		n--;
	buf[n] = 0;
	/* ids keep names unique when two counters sanitize to the same text */
	snprintf(buf + n, size - n, "%s%u%s", n ? "_" : "counter_", c->id, suffix);
}

/*
 * Load @btf into the kernel; returns the BTF fd or -errno. Not btf__load_into_kernel():
 * libbpf prints its failures to stderr itself, and the library prints only through
 * pr_*() (an unprivileged provider must stay quiet unless PERFLIB_DEBUG is set).
 */
static int btf_load(const struct btf *btf)
{
	const void *raw;
	__u32 size;
	int fd;

	raw = btf__raw_data(btf, &size);
	if (!raw)
		return -ENOMEM;
	fd = bpf_btf_load(raw, size, NULL);
	if (fd < 0) {
		fd = -errno;
		pr_debug("loading BTF: %s\n", strerror(-fd));
	}
	return fd;
}

/* load a finished BTF and hand out its fd and the key and value type ids; frees @btf */
static int btf_finish(struct btf *btf, int key, int value, int *ret_fd, int *ret_key,
		      int *ret_value)
{
	int fd = btf_load(btf);

	btf__free(btf);
	if (fd < 0)
		return fd;
	*ret_fd = fd;
	*ret_key = key;
	*ret_value = value;
	return 0;
}

/* the info value @reg would get with @opts (sz read already); *ret_info malloc'd */
static int layout_info(const struct perflib_counterset_reg *reg,
		       const struct perflib_pin_opts *opts, struct perflib_info **ret_info)
{
	struct perflib_pin_opts defaults;
	size_t size;

	if (!reg || !reg->counters)
		return -EINVAL;
	perflib_pin_defaults(&defaults);
	if (opts && opts->capacity)
		defaults.capacity = opts->capacity;
	if (opts && opts->name_max)
		defaults.name_max = opts->name_max;
	if (defaults.capacity > PERFLIB_CAPACITY_MAX || defaults.name_max < 2 ||
	    defaults.name_max > PERF_MAX_INSTANCE_NAME + 1)
		return -EINVAL;
	return perflib_info_build(reg, PERFLIB_INFO_HAS_NAMES, &defaults, ret_info, &size);
}

/* perflib_counterset_classes() of the API, behind opts.c: @opts read by sz */
int perflib_classes_compute(const struct perflib_counterset_reg *reg,
			    const struct perflib_pin_opts *opts, struct perflib_class_layout *ret,
			    unsigned int n)
{
	struct perflib_info *info;
	uint32_t c;
	int err;

	if (n && !ret)
		return -EINVAL;
	err = layout_info(reg, opts, &info);
	if (err)
		return err;
	for (c = 0; c < info->nr_classes && c < n; c++) {
		const struct perflib_info_class *ic = &info->classes[c];

		ret[c].slot_size = ic->slot_size;
		ret[c].name_max = ic->name_max;
		ret[c].name_offset = info->name_offset;
		ret[c].ascii_offset = ic->ascii_offset;
		ret[c].ascii_max = ic->ascii_max;
		ret[c].ref_offset = ic->ref_offset;
	}
	err = (int)info->nr_classes;
	free(info);
	return err;
}

/* perflib_counterset_layout() of the API, behind the opts.c versions: @opts read by sz */
int perflib_layout_compute(const struct perflib_counterset_reg *reg,
			   const struct perflib_pin_opts *opts, struct perflib_layout *ret_layout)
{
	const struct perflib_info_counter *c;
	struct perflib_counter_layout *cl;
	struct perflib_info *info;
	uint32_t i;
	int err;

	if (!ret_layout)
		return -EINVAL;
	err = layout_info(reg, opts, &info);
	if (err)
		return err;
	cl = calloc(info->nr_counters, sizeof(*cl));
	if (!cl) {
		free(info);
		return -ENOMEM;
	}
	c = (const struct perflib_info_counter *)(info + 1);
	for (i = 0; i < info->nr_counters; i++) {
		bool byref = c[i].attrib & PERF_ATTRIB_BY_REFERENCE;

		/* the names data_btf() gives the fields */
		cl[i].id = c[i].id;
		cl[i].offset = PERFLIB_COUNTERS_OFFSET + 8 * i;
		field_name(info, &c[i], byref ? "_ptr" : "", cl[i].field, sizeof(cl[i].field));
		if (byref) {
			cl[i].ref_offset = info->ref_offset + 8 * i;
			field_name(info, &c[i], "", cl[i].ref_field, sizeof(cl[i].ref_field));
		}
	}
	memset(ret_layout, 0, sizeof(*ret_layout));
	ret_layout->slot_size = info->slot_size;
	ret_layout->capacity = info->capacity;
	ret_layout->name_max = info->classes[0].name_max;
	ret_layout->block_offset = PERFLIB_BLOCK_OFFSET;
	ret_layout->name_offset = info->name_offset;
	ret_layout->ascii_offset = info->ascii_offset;
	ret_layout->ref_offset = info->ref_offset;
	ret_layout->nr_counters = info->nr_counters;
	ret_layout->counters = cl;
	free(info);
	return 0;
}

void perflib_layout_free(struct perflib_layout *layout)
{
	if (!layout)
		return;
	free(layout->counters);
	layout->counters = NULL;
	layout->nr_counters = 0;
}

struct btf_ids {
	int u8, u16, u32, u64, chr;
};

static int btf_base(struct btf *btf, struct btf_ids *t)
{
	t->u8 = btf__add_int(btf, "__u8", 1, 0);
	t->u16 = btf__add_int(btf, "__u16", 2, 0);
	t->u32 = btf__add_int(btf, "__u32", 4, 0);
	t->u64 = btf__add_int(btf, "__u64", 8, 0);
	t->chr = btf__add_int(btf, "char", 1, BTF_INT_CHAR);
	if (t->u8 < 0 || t->u16 < 0 || t->u32 < 0 || t->u64 < 0 || t->chr < 0)
		return -ENOMEM;
	return 0;
}

#define ADD(btf, name, type, byte_off)                                                             \
	do {                                                                                       \
		if (btf__add_field(btf, name, type, (byte_off)*8, 0))                              \
			goto fail;                                                                 \
	} while (0)

/*
 * BTF of a slot of class @cls: header (slot_hdr.h's table), Windows block, one field per
 * counter, names, dereferenced values; not loaded. *@ret_btf for btf__free()
 */
int perflib_data_btf_build(const struct perflib_info *info, uint32_t cls, struct btf **ret_btf,
			   int *ret_key, int *ret_value)
{
	const struct perflib_info_counter *c = (const void *)(info + 1);
	const struct perflib_info_class *ic = &info->classes[cls];
	struct btf *btf = btf__new_empty();
	struct btf_ids t;
	int guid, inst, name16, ascii, slot, pcpu = 0;
	char fname[64];
	uint32_t i;

	if (!btf)
		return -ENOMEM;
	if (btf_base(btf, &t))
		goto fail;
	guid = btf__add_array(btf, t.u32, t.u8, 16);
	name16 = btf__add_array(btf, t.u32, t.u16, ic->name_max);
	ascii = btf__add_array(btf, t.u32, t.chr, ic->ascii_max);
	if (guid < 0 || name16 < 0 || ascii < 0)
		goto fail;
	if (ic->pcpu_offset) {
		/*
		 * the per-CPU parts: "pcpu", a row per CPU, entry k of a row the part of the
		 * per-CPU counter numbered k + 1 (perflib_info_counter.pcpu: by position); the
		 * counter's own field is its base. Types before the structs: a struct's fields
		 * follow it.
		 */
		uint32_t nr_pcpu = 0;
		int row;

		for (i = 0; i < info->nr_counters; i++)
			nr_pcpu += !!c[i].pcpu;
		row = btf__add_array(btf, t.u32, t.u64,
				     perflib_pcpu_lines(nr_pcpu) * PERFLIB_PCPU_PER_LINE);
		pcpu = row < 0 ? row : btf__add_array(btf, t.u32, row, info->nr_cpus);
		if (pcpu < 0)
			goto fail;
	}
	inst = btf__add_struct(btf, "PERF_COUNTERSET_INSTANCE", 32);
	if (inst < 0)
		goto fail;
	ADD(btf, "CounterSetGuid", guid, 0);
	ADD(btf, "dwSize", t.u32, 16);
	ADD(btf, "InstanceId", t.u32, 20);
	ADD(btf, "InstanceNameOffset", t.u32, 24);
	ADD(btf, "InstanceNameSize", t.u32, 28);
	slot = btf__add_struct(btf, "perflib_slot", ic->slot_size);
	if (slot < 0)
		goto fail;
	for (i = 0; i < PERFLIB_SLOT_HDR_NR_FIELDS; i++) {
		const struct perflib_slot_hdr_field *f = &perflib_slot_hdr_fields[i];

		ADD(btf, f->name, f->size == 8 ? t.u64 : t.u32, f->offset);
	}
	ADD(btf, "instance", inst, PERFLIB_BLOCK_OFFSET);
	for (i = 0; i < info->nr_counters; i++) {
		bool byref = c[i].attrib & PERF_ATTRIB_BY_REFERENCE;
		bool large = (c[i].type & CTRTYPE_SIZE_MASK) == PERF_SIZE_LARGE;

		/* a DWORD counter lives in the low half of its 8-byte slot */
		field_name(info, &c[i], byref ? "_ptr" : "", fname, sizeof(fname));
		ADD(btf, fname, byref || large ? t.u64 : t.u32, PERFLIB_COUNTERS_OFFSET + 8 * i);
	}
	ADD(btf, "InstanceName", name16, info->name_offset);
	ADD(btf, "name", ascii, ic->ascii_offset);
	for (i = 0; ic->ref_offset && i < info->nr_counters; i++) {
		if (!(c[i].attrib & PERF_ATTRIB_BY_REFERENCE))
			continue;
		field_name(info, &c[i], "", fname, sizeof(fname));
		ADD(btf, fname, (c[i].type & CTRTYPE_SIZE_MASK) == PERF_SIZE_LARGE ? t.u64 : t.u32,
		    ic->ref_offset + 8 * i);
	}
	if (ic->pcpu_offset)
		ADD(btf, "pcpu", pcpu, ic->pcpu_offset);
	*ret_btf = btf;
	*ret_key = t.u32;
	*ret_value = slot;
	return 0;
fail:
	btf__free(btf);
	return -ENOMEM;
}

/* the BTF of a slot of class @cls, loaded */
int perflib_data_btf(const struct perflib_info *info, uint32_t cls, int *ret_fd, int *ret_key,
		     int *ret_value)
{
	struct btf *btf;
	int key, value, err;

	err = perflib_data_btf_build(info, cls, &btf, &key, &value);
	if (err)
		return err;
	return btf_finish(btf, key, value, ret_fd, ret_key, ret_value);
}

/* BTF of the info value: the header by name, the rest as bytes */
int perflib_info_btf(size_t size, int *ret_fd, int *ret_key, int *ret_value)
{
	struct btf *btf = btf__new_empty();
	struct btf_ids t;
	int guid, body, st;

	if (!btf)
		return -ENOMEM;
	if (btf_base(btf, &t))
		goto fail;
	guid = btf__add_array(btf, t.u32, t.u8, 16);
	body = btf__add_array(btf, t.u32, t.u8, (uint32_t)(size - sizeof(struct perflib_info)));
	st = btf__add_struct(btf, "perflib_info", (uint32_t)size);
	if (guid < 0 || body < 0 || st < 0)
		goto fail;
#define INFO_U32(f) ADD(btf, #f, t.u32, offsetof(struct perflib_info, f))
	INFO_U32(magic);
	INFO_U32(layout_version);
	INFO_U32(info_size);
	INFO_U32(flags);
	ADD(btf, "provider_guid", guid, offsetof(struct perflib_info, provider_guid));
	ADD(btf, "counterset_guid", guid, offsetof(struct perflib_info, counterset_guid));
	INFO_U32(instance_type);
	INFO_U32(nr_counters);
	INFO_U32(detail_level);
	INFO_U32(capacity);
	INFO_U32(slot_size);
	INFO_U32(name_max);
	INFO_U32(name_offset);
	INFO_U32(ascii_offset);
	INFO_U32(ref_offset);
	INFO_U32(nr_procs);
	INFO_U32(strings_offset);
	INFO_U32(strings_size);
	INFO_U32(counterset_name);
	INFO_U32(counterset_help);
	INFO_U32(provider_name);
	INFO_U32(seg0_slots);
	INFO_U32(nr_classes);
#undef INFO_U32
	ADD(btf, "body", body, sizeof(struct perflib_info));
	return btf_finish(btf, t.u32, st, ret_fd, ret_key, ret_value);
fail:
	btf__free(btf);
	return -ENOMEM;
}
#undef ADD

// SPDX-License-Identifier: MIT
/*
 * store.c - counter sets in bpffs: the pin root, building and checking the info value,
 * the BTF that names every field of a slot, creating, pinning, opening and mapping the
 * maps of a counter set.
 */
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "internal.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;
static char root_path[PATH_MAX / 2];
static bool root_set;
static mode_t pin_mode; /* 0 = default */
static gid_t pin_gid = (gid_t)-1;
static bool access_set;
static unsigned int def_capacity, def_name_max;

/* ---- configuration ---------------------------------------------------------------------- */

int perflib_set_pin_root(const char *path)
{
	if (path && (path[0] != '/' || strlen(path) >= sizeof(root_path)))
		return -EINVAL;
	pthread_mutex_lock(&store_lock);
	if (path) {
		strcpy(root_path, path);
		root_set = true;
	} else {
		root_set = false;
	}
	pthread_mutex_unlock(&store_lock);
	return 0;
}

const char *perflib_root_path(void)
{
	const char *env;

	pthread_mutex_lock(&store_lock);
	if (!root_set) {
		env = getenv("PERFLIB_ROOT");
		if (!env || env[0] != '/' || strlen(env) >= sizeof(root_path))
			env = PERFLIB_DEFAULT_ROOT;
		strcpy(root_path, env);
		/* trailing slashes would double up in joined paths */
		while (strlen(root_path) > 1 && root_path[strlen(root_path) - 1] == '/')
			root_path[strlen(root_path) - 1] = 0;
	}
	pthread_mutex_unlock(&store_lock);
	return root_path;
}

const char *perflib_pin_root(void)
{
	return perflib_root_path();
}

int perflib_get_pin_root(char *buf, size_t size)
{
	size_t len;

	if (!buf)
		return -EINVAL;
	perflib_root_path(); /* resolves the default; the copy below is taken under the lock */
	pthread_mutex_lock(&store_lock);
	len = strlen(root_path);
	if (len < size)
		memcpy(buf, root_path, len + 1);
	pthread_mutex_unlock(&store_lock);
	return len < size ? (int)len : -ENOSPC;
}

int perflib_set_pin_access(mode_t mode, gid_t gid)
{
	if (mode & ~0666)
		return -EINVAL;
	pthread_mutex_lock(&store_lock);
	pin_mode = mode;
	pin_gid = gid;
	access_set = true;
	pthread_mutex_unlock(&store_lock);
	return 0;
}

int perflib_set_capacity(unsigned int nr_slots, unsigned int name_max)
{
	if (nr_slots > (1u << 24) ||
	    (name_max && (name_max < 2 || name_max > PERF_MAX_INSTANCE_NAME + 1)))
		return -EINVAL;
	pthread_mutex_lock(&store_lock);
	if (nr_slots)
		def_capacity = nr_slots;
	if (name_max)
		def_name_max = name_max;
	pthread_mutex_unlock(&store_lock);
	return 0;
}

static unsigned int env_uint(const char *name, unsigned int def, unsigned int min, unsigned int max)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v < min || v > max) {
		pr_warn("ignoring %s=%s (expected %u..%u)\n", name, s, min, max);
		return def;
	}
	return (unsigned int)v;
}

void perflib_pin_defaults(struct perflib_pin_opts *opts)
{
	const char *s;
	struct group *gr;
	char *end;

	memset(opts, 0, sizeof(*opts));
	opts->sz = sizeof(*opts);
	opts->uid = (uid_t)-1;
	opts->gid = (gid_t)-1;
	pthread_mutex_lock(&store_lock);
	opts->mode = pin_mode;
	opts->gid = pin_gid;
	opts->capacity = def_capacity;
	opts->name_max = def_name_max;
	pthread_mutex_unlock(&store_lock);
	if (!access_set) {
		s = getenv("PERFLIB_PIN_MODE");
		if (s && *s) {
			unsigned long m = strtoul(s, &end, 8);

			if (*end || (m & ~0666ul))
				pr_warn("ignoring PERFLIB_PIN_MODE=%s (octal, at most 0666)\n", s);
			else
				opts->mode = (mode_t)m;
		}
		s = getenv("PERFLIB_PIN_GROUP");
		if (s && *s) {
			unsigned long g = strtoul(s, &end, 10);

			if (!*end) {
				opts->gid = (gid_t)g;
			} else {
				gr = getgrnam(s);
				if (gr)
					opts->gid = gr->gr_gid;
				else
					pr_warn("ignoring PERFLIB_PIN_GROUP=%s (no such group)\n",
						s);
			}
		}
	}
	if (!opts->mode)
		opts->mode = 0640;
	if (!opts->capacity)
		opts->capacity =
			env_uint("PERFLIB_CAPACITY", PERFLIB_CAPACITY_DEFAULT, 1, 1u << 24);
	if (!opts->name_max)
		opts->name_max = env_uint("PERFLIB_NAME_MAX", PERFLIB_NAME_MAX_DEFAULT, 2,
					  PERF_MAX_INSTANCE_NAME + 1);
}

int perflib_set_dir(const GUID *guid, char *buf, size_t size)
{
	char s[37];
	int n;

	n = snprintf(buf, size, "%s/%s", perflib_root_path(), perflib_guid_to_string(guid, s));
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* -ENODEV with a hint when the root's filesystem is not bpffs */
static int check_bpffs(const char *path)
{
	char buf[PATH_MAX];
	struct statfs st;
	char *slash;

	snprintf(buf, sizeof(buf), "%s", path);
	/* the root itself may not exist yet: test the nearest existing ancestor */
	while (statfs(buf, &st)) {
		slash = strrchr(buf, '/');
		if (!slash || slash == buf) {
			strcpy(buf, "/");
			if (statfs(buf, &st))
				return -errno;
			break;
		}
		*slash = 0;
	}
	if ((unsigned long)st.f_type != BPF_FS_MAGIC) {
		pr_warn("%s is not on a bpffs mount; mount one with: mount -t bpf bpf "
			"/sys/fs/bpf\n",
			path);
		return -ENODEV;
	}
	return 0;
}

/* mkdir -p for the root (0755 so that readers can reach the counter sets) */
static int make_root(void)
{
	char buf[PATH_MAX];
	size_t i;

	snprintf(buf, sizeof(buf), "%s", perflib_root_path());
	for (i = 1; buf[i]; i++) {
		if (buf[i] != '/')
			continue;
		buf[i] = 0;
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		buf[i] = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* ---- info value ------------------------------------------------------------------------- */

static uint32_t round_up(uint32_t v, uint32_t a)
{
	return (v + a - 1) / a * a;
}

/* the slot geometry that follows from the counters and the name capacity */
static void slot_geometry(uint32_t nr_counters, uint32_t name_max, bool byref, uint32_t *ret_name,
			  uint32_t *ret_ascii, uint32_t *ret_ref, uint32_t *ret_size)
{
	uint32_t name = PERFLIB_COUNTERS_OFFSET + 8 * nr_counters;
	uint32_t ascii = round_up(name + 2 * name_max, 8);
	uint32_t end = ascii + PERFLIB_ASCII_MAX;
	uint32_t ref = 0;

	if (byref) {
		/* values, then a bitmap of counters whose address is NULL */
		ref = end;
		end += 8 * nr_counters + 8 * ((nr_counters + 63) / 64);
	}
	*ret_name = name;
	*ret_ascii = ascii;
	*ret_ref = ref;
	*ret_size = round_up(end, PERFLIB_SLOT_ALIGN);
}

const WCHAR *perflib_info_string(const struct perflib_info *info, uint32_t off, size_t *ret_units)
{
	const WCHAR *s;

	if (off == PERFLIB_STR_NONE || off >= info->strings_size)
		return NULL;
	s = (const WCHAR *)((const uint8_t *)info + info->strings_offset + off);
	if (ret_units)
		*ret_units = perflib_wcsnlen(s, (info->strings_size - off) / 2);
	return s;
}

static bool string_ok(const struct perflib_info *info, uint32_t off)
{
	size_t units;
	const WCHAR *s;

	if (off == PERFLIB_STR_NONE)
		return true;
	if (off % 2 || off >= info->strings_size)
		return false;
	s = perflib_info_string(info, off, &units);
	/* the terminating NUL must lie inside the pool */
	return s && units < (info->strings_size - off) / 2;
}

int perflib_info_check(const void *buf, size_t size)
{
	const struct perflib_info *info = buf;
	const struct perflib_info_counter *c;
	uint32_t name, ascii, ref, slot, i;
	bool byref = false;

	if (size < sizeof(*info) || info->magic != PERFLIB_INFO_MAGIC ||
	    info->layout_version != PERFLIB_LAYOUT_VERSION || info->info_size != size)
		return -EBADMSG;
	if (info->nr_counters == 0 || info->nr_counters > PERFLIB_MAX_COUNTERS)
		return -EBADMSG;
	if (info->strings_offset < sizeof(*info) + (size_t)info->nr_counters * sizeof(*c) ||
	    info->strings_offset > size || info->strings_size > size - info->strings_offset ||
	    info->strings_offset % 2 || info->strings_size % 2)
		return -EBADMSG;
	if (info->name_max < 2 || info->name_max > PERF_MAX_INSTANCE_NAME + 1 ||
	    info->capacity == 0 || info->capacity > (1u << 24) || info->nr_procs == 0 ||
	    info->nr_procs > 65536)
		return -EBADMSG;
	c = (const struct perflib_info_counter *)(info + 1);
	for (i = 0; i < info->nr_counters; i++) {
		if (c[i].attrib & PERF_ATTRIB_BY_REFERENCE)
			byref = true;
		if (!string_ok(info, c[i].name) || !string_ok(info, c[i].help))
			return -EBADMSG;
	}
	slot_geometry(info->nr_counters, info->name_max, byref, &name, &ascii, &ref, &slot);
	if (info->name_offset != name || info->ascii_offset != ascii || info->ref_offset != ref ||
	    info->slot_size != slot || (uint64_t)info->capacity * slot > UINT32_MAX)
		return -EBADMSG;
	if (!string_ok(info, info->counterset_name) || !string_ok(info, info->counterset_help) ||
	    !string_ok(info, info->provider_name))
		return -EBADMSG;
	return 0;
}

/* append a UTF-8 string to the pool as UTF-16; returns its offset or PERFLIB_STR_NONE */
static uint32_t pool_add(uint8_t *pool, size_t cap, size_t *used, const char *s)
{
	int n;

	if (!s)
		return PERFLIB_STR_NONE;
	n = perflib_utf8_to_utf16(s, (WCHAR *)(pool + *used), (cap - *used) / 2);
	if (n < 0)
		return PERFLIB_STR_NONE;
	*used += (size_t)n * 2;
	return (uint32_t)(*used - (size_t)n * 2);
}

/*
 * perflib_info_build - the info value for a registration (names may be NULL: a counter set
 * created on demand). *ret_info is malloc'd.
 */
int perflib_info_build(const struct perflib_counterset_reg *reg, unsigned int flags,
		       const struct perflib_pin_opts *opts, struct perflib_info **ret_info,
		       size_t *ret_size)
{
	struct perflib_info_counter *c;
	struct perflib_info *info;
	size_t strings = 0, used = 0, size;
	uint32_t i, slot;
	bool byref = false;
	uint8_t *pool;

	if (!reg->nr_counters || reg->nr_counters > PERFLIB_MAX_COUNTERS)
		return -EINVAL;
		/* worst case: every UTF-8 byte becomes one UTF-16 unit, plus the NUL */
#define STRCOST(s) ((s) ? (strlen(s) + 1) * 2 : 0)
	strings += STRCOST(reg->provider_name) + STRCOST(reg->name) + STRCOST(reg->help);
	for (i = 0; i < reg->nr_counters; i++)
		strings += STRCOST(reg->counters[i].name) + STRCOST(reg->counters[i].help);
#undef STRCOST
	size = sizeof(*info) + reg->nr_counters * sizeof(*c) + strings;
	info = calloc(1, size);
	if (!info)
		return -ENOMEM;
	info->magic = PERFLIB_INFO_MAGIC;
	info->layout_version = PERFLIB_LAYOUT_VERSION;
	info->flags = flags;
	memcpy(info->provider_guid, &reg->provider_guid, 16);
	memcpy(info->counterset_guid, &reg->counterset_guid, 16);
	info->instance_type = reg->instance_type;
	info->nr_counters = reg->nr_counters;
	info->detail_level = reg->detail_level ? reg->detail_level : PERF_DETAIL_NOVICE;
	info->capacity = opts->capacity;
	info->name_max = opts->name_max;
	info->nr_procs = PERFLIB_PROCS_DEFAULT;
	info->strings_offset = sizeof(*info) + reg->nr_counters * sizeof(*c);
	pool = (uint8_t *)info + info->strings_offset;
	c = (struct perflib_info_counter *)(info + 1);
	for (i = 0; i < reg->nr_counters; i++) {
		const struct perflib_counter_reg *r = &reg->counters[i];

		c[i].id = r->id;
		c[i].type = r->type;
		c[i].attrib = r->attrib;
		c[i].detail_level = r->detail_level ? r->detail_level : PERF_DETAIL_NOVICE;
		c[i].scale = r->scale;
		c[i].base_id = r->base_id;
		c[i].perf_time_id = r->perf_time_id;
		c[i].perf_freq_id = r->perf_freq_id;
		c[i].multi_id = r->multi_id;
		c[i].aggregate = r->aggregate;
		c[i].name = pool_add(pool, strings, &used, r->name);
		c[i].help = pool_add(pool, strings, &used, r->help);
		if (r->attrib & PERF_ATTRIB_BY_REFERENCE)
			byref = true;
	}
	info->counterset_name = pool_add(pool, strings, &used, reg->name);
	info->counterset_help = pool_add(pool, strings, &used, reg->help);
	info->provider_name = pool_add(pool, strings, &used, reg->provider_name);
	info->strings_size = (uint32_t)used;
	info->info_size = (uint32_t)(info->strings_offset + used);
	slot_geometry(info->nr_counters, info->name_max, byref, &info->name_offset,
		      &info->ascii_offset, &info->ref_offset, &slot);
	info->slot_size = slot;
	if ((uint64_t)info->capacity * slot > UINT32_MAX) {
		free(info);
		return -E2BIG;
	}
	*ret_info = info;
	*ret_size = info->info_size;
	return 0;
}

/* ---- BTF -------------------------------------------------------------------------------- */

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

/* perflib_counterset_layout() of the API, behind the opts.c versions: @opts read by sz */
int perflib_layout_compute(const struct perflib_counterset_reg *reg,
			   const struct perflib_pin_opts *opts, struct perflib_layout *ret_layout)
{
	const struct perflib_info_counter *c;
	struct perflib_counter_layout *cl;
	struct perflib_pin_opts defaults;
	struct perflib_info *info;
	size_t size;
	uint32_t i;
	int err;

	if (!reg || !reg->counters || !ret_layout)
		return -EINVAL;
	perflib_pin_defaults(&defaults);
	if (opts && opts->capacity)
		defaults.capacity = opts->capacity;
	if (opts && opts->name_max)
		defaults.name_max = opts->name_max;
	if (defaults.capacity > (1u << 24) || defaults.name_max < 2 ||
	    defaults.name_max > PERF_MAX_INSTANCE_NAME + 1)
		return -EINVAL;
	err = perflib_info_build(reg, PERFLIB_INFO_HAS_NAMES, &defaults, &info, &size);
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
	ret_layout->name_max = info->name_max;
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

/* BTF of a slot: header, Windows block, one field per counter, names, dereferenced values */
static int data_btf(const struct perflib_info *info, int *ret_fd, int *ret_key, int *ret_value)
{
	const struct perflib_info_counter *c = (const void *)(info + 1);
	struct btf *btf = btf__new_empty();
	struct btf_ids t;
	int guid, inst, name16, ascii, slot;
	char fname[64];
	uint32_t i;

	if (!btf)
		return -ENOMEM;
	if (btf_base(btf, &t))
		goto fail;
	guid = btf__add_array(btf, t.u32, t.u8, 16);
	name16 = btf__add_array(btf, t.u32, t.u16, info->name_max);
	ascii = btf__add_array(btf, t.u32, t.chr, PERFLIB_ASCII_MAX);
	if (guid < 0 || name16 < 0 || ascii < 0)
		goto fail;
	inst = btf__add_struct(btf, "PERF_COUNTERSET_INSTANCE", 32);
	if (inst < 0)
		goto fail;
	ADD(btf, "CounterSetGuid", guid, 0);
	ADD(btf, "dwSize", t.u32, 16);
	ADD(btf, "InstanceId", t.u32, 20);
	ADD(btf, "InstanceNameOffset", t.u32, 24);
	ADD(btf, "InstanceNameSize", t.u32, 28);
	slot = btf__add_struct(btf, "perflib_slot", info->slot_size);
	if (slot < 0)
		goto fail;
	ADD(btf, "seq", t.u32, 0);
	ADD(btf, "owner_pid", t.u32, 4);
	ADD(btf, "owner_start", t.u64, 8);
	ADD(btf, "proc_index", t.u32, 16);
	ADD(btf, "instance", inst, PERFLIB_BLOCK_OFFSET);
	for (i = 0; i < info->nr_counters; i++) {
		bool byref = c[i].attrib & PERF_ATTRIB_BY_REFERENCE;
		bool large = (c[i].type & 0x300) == PERF_SIZE_LARGE;

		/* a DWORD counter lives in the low half of its 8-byte slot */
		field_name(info, &c[i], byref ? "_ptr" : "", fname, sizeof(fname));
		ADD(btf, fname, byref || large ? t.u64 : t.u32, PERFLIB_COUNTERS_OFFSET + 8 * i);
	}
	ADD(btf, "InstanceName", name16, info->name_offset);
	ADD(btf, "name", ascii, info->ascii_offset);
	for (i = 0; info->ref_offset && i < info->nr_counters; i++) {
		if (!(c[i].attrib & PERF_ATTRIB_BY_REFERENCE))
			continue;
		field_name(info, &c[i], "", fname, sizeof(fname));
		ADD(btf, fname, (c[i].type & 0x300) == PERF_SIZE_LARGE ? t.u64 : t.u32,
		    info->ref_offset + 8 * i);
	}
	return btf_finish(btf, t.u32, slot, ret_fd, ret_key, ret_value);
fail:
	btf__free(btf);
	return -ENOMEM;
}

/* BTF of the info value: the header by name, the rest as bytes */
static int info_btf(size_t size, int *ret_fd, int *ret_key, int *ret_value)
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
	ADD(btf, "magic", t.u32, 0);
	ADD(btf, "layout_version", t.u32, 4);
	ADD(btf, "info_size", t.u32, 8);
	ADD(btf, "flags", t.u32, 12);
	ADD(btf, "provider_guid", guid, 16);
	ADD(btf, "counterset_guid", guid, 32);
	ADD(btf, "instance_type", t.u32, 48);
	ADD(btf, "nr_counters", t.u32, 52);
	ADD(btf, "detail_level", t.u32, 56);
	ADD(btf, "capacity", t.u32, 60);
	ADD(btf, "slot_size", t.u32, 64);
	ADD(btf, "name_max", t.u32, 68);
	ADD(btf, "body", body, sizeof(struct perflib_info));
	return btf_finish(btf, t.u32, st, ret_fd, ret_key, ret_value);
fail:
	btf__free(btf);
	return -ENOMEM;
}
#undef ADD

/* ---- create, pin, open ------------------------------------------------------------------ */

static const char *const pin_names[] = {"info", "data", "index", "procs"};

void perflib_set_close(struct perflib_set_map *map)
{
	if (!map)
		return;
	if (map->data)
		munmap(map->data, map->data_len);
	if (map->procs)
		munmap(map->procs, map->procs_len);
	if (map->info_fd >= 0)
		close(map->info_fd);
	if (map->data_fd >= 0)
		close(map->data_fd);
	if (map->index_fd >= 0)
		close(map->index_fd);
	if (map->procs_fd >= 0)
		close(map->procs_fd);
	free(map->info);
	free(map);
}

static struct perflib_set_map *map_alloc(const GUID *guid, bool writable)
{
	struct perflib_set_map *map = calloc(1, sizeof(*map));

	if (!map)
		return NULL;
	map->guid = *guid;
	map->writable = writable;
	map->info_fd = map->data_fd = map->index_fd = map->procs_fd = -1;
	return map;
}

static int map_check(int fd, __u32 type, __u32 key_size, __u32 value_size, __u32 entries,
		     __u32 flags)
{
	struct bpf_map_info mi;
	__u32 len = sizeof(mi);

	memset(&mi, 0, sizeof(mi));
	if (bpf_obj_get_info_by_fd(fd, &mi, &len))
		return -errno;
	if (mi.type != type || mi.key_size != key_size ||
	    (value_size && mi.value_size != value_size) || (entries && mi.max_entries != entries) ||
	    (flags && !(mi.map_flags & flags)))
		return -EBADMSG;
	return (int)mi.value_size;
}

/*
 * Read the info value and map the data and procs arrays; fds are open. @unmapped: a reader
 * whose fds are read-only, which the kernel will not let mmap the maps (see
 * perflib_set_open): data and procs stay NULL, and readers use lookup syscalls.
 */
static int map_attach(struct perflib_set_map *map, bool unmapped)
{
	int prot = PROT_READ | (map->writable ? PROT_WRITE : 0);
	struct perflib_info *info;
	__u32 key = 0;
	int size, err;
	void *p;

	size = map_check(map->info_fd, BPF_MAP_TYPE_ARRAY, 4, 0, 1, 0);
	if (size < 0)
		return size;
	info = malloc((size_t)size);
	if (!info)
		return -ENOMEM;
	if (bpf_map_lookup_elem(map->info_fd, &key, info)) {
		err = -errno;
		free(info);
		return err;
	}
	err = perflib_info_check(info, (size_t)size);
	if (err) {
		free(info);
		return err;
	}
	map->info = info;
	map->info_size = (size_t)size;
	map->counters = (const struct perflib_info_counter *)(info + 1);
	err = map_check(map->data_fd, BPF_MAP_TYPE_ARRAY, 4, info->slot_size, info->capacity,
			BPF_F_MMAPABLE);
	if (err >= 0)
		err = map_check(map->procs_fd, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct perflib_proc),
				info->nr_procs, BPF_F_MMAPABLE);
	if (err >= 0)
		err = map_check(map->index_fd, BPF_MAP_TYPE_HASH, sizeof(struct perflib_index_key),
				sizeof(struct perflib_index_val), 0, 0);
	if (err < 0)
		return err;
	map->data_len = (size_t)info->capacity * info->slot_size;
	map->procs_len = (size_t)info->nr_procs * sizeof(struct perflib_proc);
	if (unmapped)
		return 0;
	p = mmap(NULL, map->data_len, prot, MAP_SHARED, map->data_fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	map->data = p;
	p = mmap(NULL, map->procs_len, prot, MAP_SHARED, map->procs_fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	map->procs = p;
	return 0;
}

int perflib_set_open(const GUID *guid, bool writable, struct perflib_set_map **ret_map)
{
	LIBBPF_OPTS(bpf_obj_get_opts, gopts);
	struct perflib_set_map *map;
	char dir[PATH_MAX], path[PATH_MAX + 8];
	bool unmapped = false;
	int *fds[4];
	int err, i;

	err = perflib_set_dir(guid, dir, sizeof(dir));
	if (err)
		return err;
	map = map_alloc(guid, writable);
	if (!map)
		return -ENOMEM;
	fds[0] = &map->info_fd;
	fds[1] = &map->data_fd;
	fds[2] = &map->index_fd;
	fds[3] = &map->procs_fd;
	/*
	 * The kernel checks the pin's file mode: read for readers, read-write for providers.
	 * info is frozen: always opened read-only. The kernel cannot mmap a BPF_F_RDONLY fd
	 * (mmap drops VM_SHARED for a file not open for writing and bpf_map_mmap() refuses
	 * private mappings), so readers open data and procs read-write when the pins allow it
	 * and map them PROT_READ all the same; a reader with read permission only opens them
	 * read-only and gets an unmapped set (map_attach).
	 */
	for (i = 0; i < 4; i++) {
		bool mmapped = i == 1 || i == 3; /* data, procs */

		snprintf(path, sizeof(path), "%s/%s", dir, pin_names[i]);
		gopts.file_flags =
			i == 0 || (!writable && (!mmapped || unmapped)) ? BPF_F_RDONLY : 0;
		*fds[i] = bpf_obj_get_opts(path, &gopts);
		if (*fds[i] < 0 && !writable && mmapped && errno == EACCES) {
			unmapped = true;
			gopts.file_flags = BPF_F_RDONLY;
			*fds[i] = bpf_obj_get_opts(path, &gopts);
		}
		if (*fds[i] < 0) {
			err = -errno;
			if (err == -ENOENT && i == 0) {
				int e2 = check_bpffs(perflib_root_path());

				if (e2)
					err = e2;
			}
			goto out;
		}
	}
	err = map_attach(map, unmapped);
	if (err)
		goto out;
	*ret_map = map;
	return 0;
out:
	perflib_set_close(map);
	return err;
}

static int pin_one(int fd, const char *dir, const char *name, const struct perflib_pin_opts *opts)
{
	char path[PATH_MAX + 8];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (bpf_obj_pin(fd, path))
		return -errno;
	if (chmod(path, opts->mode & 0666))
		return -errno;
	if ((opts->uid != (uid_t)-1 || opts->gid != (gid_t)-1) && chown(path, opts->uid, opts->gid))
		return -errno;
	return 0;
}

/*
 * Unpin everything in a counter set's directory: the four maps and whatever pins BPF
 * programs added beside them (the exit reaper's link, kcounters' links; a pinned link
 * keeps its program attached and the maps alive until it is unpinned), then the directory.
 */
static void remove_dir(const char *dir)
{
	char path[PATH_MAX + 8];
	struct dirent *de;
	DIR *d;

	d = opendir(dir);
	if (d) {
		while ((de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

int perflib_set_create(const struct perflib_info *info, size_t info_size,
		       const struct perflib_pin_opts *opts, struct perflib_set_map **ret_map)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts);
	struct perflib_set_map *map;
	char dir[PATH_MAX], tmp[PATH_MAX];
	static _Atomic unsigned int seq;
	int btf_fd = -1, key_id, val_id, err;
	__u32 key = 0;
	GUID guid;

	memcpy(&guid, info->counterset_guid, sizeof(guid));
	err = perflib_set_dir(&guid, dir, sizeof(dir));
	if (err)
		return err;
	err = check_bpffs(perflib_root_path());
	if (err)
		return err;
	err = make_root();
	if (err)
		return err;
	map = map_alloc(&guid, true);
	if (!map)
		return -ENOMEM;

	/* info: one frozen entry */
	err = info_btf(info_size, &btf_fd, &key_id, &val_id);
	if (err)
		goto out;
	mopts.btf_fd = btf_fd;
	mopts.btf_key_type_id = key_id;
	mopts.btf_value_type_id = val_id;
	map->info_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pl_info", 4, info_size, 1, &mopts);
	close(btf_fd);
	btf_fd = -1;
	if (map->info_fd < 0 || bpf_map_update_elem(map->info_fd, &key, info, BPF_ANY) ||
	    bpf_map_freeze(map->info_fd)) {
		err = -errno;
		goto out;
	}

	/* data: mmapable slots with named fields */
	err = data_btf(info, &btf_fd, &key_id, &val_id);
	if (err)
		goto out;
	mopts.btf_fd = btf_fd;
	mopts.btf_key_type_id = key_id;
	mopts.btf_value_type_id = val_id;
	mopts.map_flags = BPF_F_MMAPABLE;
	map->data_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pl_data", 4, info->slot_size,
				      info->capacity, &mopts);
	close(btf_fd);
	btf_fd = -1; /* closed: the error path must not close the number again */
	if (map->data_fd < 0) {
		err = -errno;
		goto out;
	}
	memset(&mopts, 0, sizeof(mopts));
	mopts.sz = sizeof(mopts);
	map->index_fd =
		bpf_map_create(BPF_MAP_TYPE_HASH, "pl_index", sizeof(struct perflib_index_key),
			       sizeof(struct perflib_index_val), info->capacity, &mopts);
	if (map->index_fd < 0) {
		err = -errno;
		goto out;
	}
	mopts.map_flags = BPF_F_MMAPABLE;
	map->procs_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pl_procs", 4,
				       sizeof(struct perflib_proc), info->nr_procs, &mopts);
	if (map->procs_fd < 0) {
		err = -errno;
		goto out;
	}

	/* pin into a private directory, then publish it with one rename */
	snprintf(tmp, sizeof(tmp), "%s/tmp-%d-%u", perflib_root_path(), (int)getpid(), seq++);
	if (mkdir(tmp, 0755)) {
		err = -errno;
		goto out;
	}
	err = pin_one(map->info_fd, tmp, "info", opts);
	if (!err)
		err = pin_one(map->data_fd, tmp, "data", opts);
	if (!err)
		err = pin_one(map->index_fd, tmp, "index", opts);
	if (!err)
		err = pin_one(map->procs_fd, tmp, "procs", opts);
	if (!err && (opts->uid != (uid_t)-1 || opts->gid != (gid_t)-1) &&
	    chown(tmp, opts->uid, opts->gid))
		err = -errno;
	if (!err && rename(tmp, dir)) {
		err = -errno;
		remove_dir(tmp);
		if (err == -EEXIST || err == -ENOTEMPTY) {
			/* another process published it first: use theirs */
			perflib_set_close(map);
			err = perflib_set_open(&guid, true, ret_map);
			return err ? err : 1;
		}
		goto out;
	}
	if (err) {
		remove_dir(tmp);
		goto out;
	}
	err = map_attach(map, false);
	if (err)
		goto out;
	*ret_map = map;
	return 0;
out:
	if (btf_fd >= 0)
		close(btf_fd);
	perflib_set_close(map);
	return err;
}

int perflib_set_remove(const GUID *guid)
{
	char dir[PATH_MAX];
	struct stat st;
	int err;

	err = perflib_set_dir(guid, dir, sizeof(dir));
	if (err)
		return err;
	if (stat(dir, &st))
		return -errno;
	remove_dir(dir);
	if (!stat(dir, &st))
		return -EBUSY;
	return 0;
}

int perflib_store_list(GUID **ret_guids, size_t *ret_nr)
{
	GUID *guids = NULL, *tmp, g;
	size_t nr = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	d = opendir(perflib_root_path());
	if (!d) {
		if (errno == ENOENT) {
			*ret_guids = NULL;
			*ret_nr = 0;
			return 0;
		}
		return -errno;
	}
	while ((de = readdir(d))) {
		if (perflib_guid_from_string(de->d_name, &g))
			continue;
		if (nr == cap) {
			cap = cap ? cap * 2 : 16;
			tmp = realloc(guids, cap * sizeof(*guids));
			if (!tmp) {
				free(guids);
				closedir(d);
				return -ENOMEM;
			}
			guids = tmp;
		}
		guids[nr++] = g;
	}
	closedir(d);
	*ret_guids = guids;
	*ret_nr = nr;
	return 0;
}

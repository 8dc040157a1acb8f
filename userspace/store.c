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
#include <stddef.h>
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
	if (nr_slots > PERFLIB_CAPACITY_MAX ||
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
		opts->capacity = env_uint("PERFLIB_CAPACITY", PERFLIB_CAPACITY_DEFAULT, 1,
					  PERFLIB_CAPACITY_MAX);
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

static uint32_t gcd32(uint32_t a, uint32_t b)
{
	while (b) {
		uint32_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * The segment geometry for slots of @slot_size and a limit of @limit slots: segment 0 is
 * whole pages (so every segment starts on a page of the reservation) and at least
 * PERFLIB_SEG0_MIN_BYTES; segments double; the capacity is @limit exactly (the last
 * segment may hold slots past it, never used). -E2BIG for more than PERFLIB_MAX_SEGS
 * segments.
 */
static int seg_geometry(uint32_t slot_size, uint32_t limit, uint32_t *ret_seg0,
			uint32_t *ret_capacity)
{
	uint32_t seg0 = 4096 / gcd32(4096, slot_size), k;

	while ((uint64_t)seg0 * slot_size < PERFLIB_SEG0_MIN_BYTES)
		seg0 *= 2;
	for (k = 1; k <= PERFLIB_MAX_SEGS; k++) {
		if (perflib_seg_first(k, seg0) >= limit)
			break;
	}
	if (k > PERFLIB_MAX_SEGS || perflib_seg_first(k, seg0) > UINT32_MAX)
		return -E2BIG;
	*ret_seg0 = seg0;
	*ret_capacity = limit;
	return 0;
}

/* segments that hold a capacity (0 if more than PERFLIB_MAX_SEGS) */
static uint32_t seg_count(uint32_t capacity, uint32_t seg0)
{
	uint32_t k;

	for (k = 1; k <= PERFLIB_MAX_SEGS; k++) {
		if (perflib_seg_first(k, seg0) >= capacity)
			return k;
	}
	return 0;
}

uint32_t perflib_info_segs(const struct perflib_info *info)
{
	return seg_count(info->capacity, info->seg0_slots);
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

	if (size < sizeof(*info) || info->magic != PERFLIB_INFO_MAGIC || info->info_size != size)
		return -EBADMSG;
	if (info->layout_version != PERFLIB_LAYOUT_VERSION)
		return -EPROTO;
	if (info->nr_counters == 0 || info->nr_counters > PERFLIB_MAX_COUNTERS)
		return -EBADMSG;
	if (info->strings_offset < sizeof(*info) + (size_t)info->nr_counters * sizeof(*c) ||
	    info->strings_offset > size || info->strings_size > size - info->strings_offset ||
	    info->strings_offset % 2 || info->strings_size % 2)
		return -EBADMSG;
	if (info->name_max < 2 || info->name_max > PERF_MAX_INSTANCE_NAME + 1 ||
	    info->capacity == 0 || info->capacity > PERFLIB_CAPACITY_MAX || info->nr_procs == 0 ||
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
	    info->slot_size != slot)
		return -EBADMSG;
	/* the segments must be whole pages, and at most PERFLIB_MAX_SEGS */
	if (!info->seg0_slots || ((uint64_t)info->seg0_slots * slot) % 4096 ||
	    !seg_count(info->capacity, info->seg0_slots) ||
	    perflib_seg_first(seg_count(info->capacity, info->seg0_slots), info->seg0_slots) *
			    slot >
		    (1ULL << 38))
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
	if (seg_geometry(slot, opts->capacity, &info->seg0_slots, &info->capacity) ||
	    perflib_seg_first(seg_count(info->capacity, info->seg0_slots), info->seg0_slots) *
			    slot >
		    (1ULL << 38)) {
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
	if (defaults.capacity > PERFLIB_CAPACITY_MAX || defaults.name_max < 2 ||
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
int perflib_data_btf(const struct perflib_info *info, int *ret_fd, int *ret_key, int *ret_value)
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
#undef INFO_U32
	ADD(btf, "body", body, sizeof(struct perflib_info));
	return btf_finish(btf, t.u32, st, ret_fd, ret_key, ret_value);
fail:
	btf__free(btf);
	return -ENOMEM;
}
#undef ADD

/* ---- create, pin, open ------------------------------------------------------------------ */

static const char *const pin_names[] = {"info", "ctl", "procs"};

void perflib_set_close(struct perflib_set_map *map)
{
	uint32_t k;

	if (!map)
		return;
	for (k = 0; k < PERFLIB_MAX_SEGS; k++)
		perflib_seg_close(map, k);
	if (map->data)
		munmap(map->data, map->data_len);
	if (map->procs)
		munmap(map->procs, map->procs_len);
	if (map->ctl)
		munmap(map->ctl, sizeof(struct perflib_ctl));
	if (map->info_fd >= 0)
		close(map->info_fd);
	if (map->ctl_fd >= 0)
		close(map->ctl_fd);
	if (map->procs_fd >= 0)
		close(map->procs_fd);
	if (map->segs_fd >= 0)
		close(map->segs_fd);
	if (map->idxs_fd >= 0)
		close(map->idxs_fd);
	if (map->lives_fd >= 0)
		close(map->lives_fd);
	pthread_mutex_destroy(&map->seg_lock);
	free(map->info);
	free(map);
}

static struct perflib_set_map *map_alloc(const GUID *guid, bool writable)
{
	struct perflib_set_map *map = calloc(1, sizeof(*map));
	uint32_t k;

	if (!map)
		return NULL;
	map->guid = *guid;
	map->writable = writable;
	map->info_fd = map->ctl_fd = map->procs_fd = map->segs_fd = map->idxs_fd = map->lives_fd =
		-1;
	map->proc_index = -1;
	for (k = 0; k < PERFLIB_MAX_SEGS; k++)
		map->segs[k].data_fd = map->segs[k].index_fd = map->segs[k].live_fd = -1;
	pthread_mutex_init(&map->seg_lock, NULL);
	return map;
}

int perflib_map_check(int fd, __u32 type, __u32 key_size, __u32 value_size, __u32 entries,
		      __u32 flags)
{
	struct bpf_map_info mi;
	__u32 len = sizeof(mi);

	memset(&mi, 0, sizeof(mi));
	if (bpf_obj_get_info_by_fd(fd, &mi, &len))
		return -errno;
	if (mi.type != type || mi.key_size != key_size ||
	    (value_size && mi.value_size != value_size) || (entries && mi.max_entries != entries) ||
	    (flags && (mi.map_flags & flags) != flags))
		return -EBADMSG;
	return (int)mi.value_size;
}

/* shared mappings of a provider are not inherited: fork() copies no page tables of them */
void *perflib_map_shared(void *addr, size_t len, bool writable, int fd)
{
	int prot = PROT_READ | (writable ? PROT_WRITE : 0);
	void *p = mmap(addr, len, prot, MAP_SHARED | (addr ? MAP_FIXED : 0), fd, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (writable)
		madvise(p, len, MADV_DONTFORK);
	return p;
}

/*
 * Read the info value, map ctl and procs, reserve the address space of every slot the set
 * may ever hold, and open the published segments; fds are open. @unmapped: a reader whose
 * fds are read-only, which the kernel will not let mmap the maps (see perflib_set_open):
 * nothing is mapped, and readers use lookup syscalls.
 */
/* read and check the info value of @map (info_fd open) into map->info */
static int map_read_info(struct perflib_set_map *map)
{
	struct perflib_info *info;
	__u32 key = 0;
	int size, err;

	size = perflib_map_check(map->info_fd, BPF_MAP_TYPE_ARRAY, 4, 0, 1, 0);
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
	if (err == -EPROTO) {
		char g[37];

		pr_warn("counter set %s was created by another perflib layout (version %u, this "
			"library reads %u): remove it (unlodctr, or rm -r %s/%s) and register it "
			"again\n",
			perflib_guid_to_string(&map->guid, g), info->layout_version,
			PERFLIB_LAYOUT_VERSION, perflib_root_path(), g);
	}
	if (err) {
		free(info);
		return err;
	}
	map->info = info;
	map->info_size = (size_t)size;
	return 0;
}

static int map_attach(struct perflib_set_map *map, bool unmapped)
{
	const struct perflib_info *info = map->info;
	int err;
	void *p;

	map->counters = (const struct perflib_info_counter *)(info + 1);
	map->seg0 = info->seg0_slots;
	map->max_segs = perflib_info_segs(info);
	err = perflib_map_check(map->procs_fd, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct perflib_proc),
				info->nr_procs, BPF_F_MMAPABLE);
	if (err >= 0)
		err = perflib_map_check(map->ctl_fd, BPF_MAP_TYPE_ARRAY, 4,
					sizeof(struct perflib_ctl), 1, BPF_F_MMAPABLE);
	if (err < 0)
		return err;
	map->data_len = (size_t)perflib_seg_first(map->max_segs, map->seg0) * info->slot_size;
	map->procs_len = (size_t)info->nr_procs * sizeof(struct perflib_proc);
	if (!unmapped) {
		/* address space only: segments are mapped into it as they are published */
		p = mmap(NULL, map->data_len, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return -errno;
		if (map->writable)
			madvise(p, map->data_len, MADV_DONTFORK);
		map->data = p;
		map->procs = perflib_map_shared(NULL, map->procs_len, map->writable, map->procs_fd);
		map->ctl = perflib_map_shared(NULL, sizeof(struct perflib_ctl), map->writable,
					      map->ctl_fd);
		if (!map->procs || !map->ctl)
			return -errno;
	}
	return perflib_set_refresh(map);
}

/* open pin @name of directory @dir; -errno */
int perflib_pin_open(const char *dir, const char *name, bool rdonly)
{
	LIBBPF_OPTS(bpf_obj_get_opts, gopts);
	char path[PATH_MAX + 16];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	gopts.file_flags = rdonly ? BPF_F_RDONLY : 0;
	fd = bpf_obj_get_opts(path, &gopts);
	return fd < 0 ? -errno : fd;
}

int perflib_set_open(const GUID *guid, bool writable, struct perflib_set_map **ret_map)
{
	struct perflib_set_map *map;
	char dir[PATH_MAX];
	bool unmapped = false;
	int *fds[3];
	int err, i;

	err = perflib_set_dir(guid, dir, sizeof(dir));
	if (err)
		return err;
	map = map_alloc(guid, writable);
	if (!map)
		return -ENOMEM;
	fds[0] = &map->info_fd;
	fds[1] = &map->ctl_fd;
	fds[2] = &map->procs_fd;
	/*
	 * The kernel checks the pin's file mode: read for readers, read-write for providers.
	 * info is frozen: always opened read-only. The kernel cannot mmap a BPF_F_RDONLY fd
	 * (mmap drops VM_SHARED for a file not open for writing and bpf_map_mmap() refuses
	 * private mappings), so readers open the mmapable maps read-write when the pins allow
	 * it and map them PROT_READ all the same; a reader with read permission only opens
	 * them read-only and gets an unmapped set (map_attach).
	 */
	for (i = 0; i < 3; i++) {
		/* the info first: a set of another layout is named as such, whatever it pins */
		if (i == 1) {
			err = map_read_info(map);
			if (err)
				goto out;
		}
		*fds[i] = perflib_pin_open(dir, pin_names[i], i == 0 || (!writable && unmapped));
		if (*fds[i] == -EACCES && !writable && i > 0) {
			unmapped = true;
			*fds[i] = perflib_pin_open(dir, pin_names[i], true);
		}
		if (*fds[i] < 0) {
			err = *fds[i];
			if (err == -ENOENT && i == 0) {
				int e2 = check_bpffs(perflib_root_path());

				if (e2)
					err = e2;
			}
			goto out;
		}
	}
	if (writable) {
		/* the outer maps, to enter new segments (a set of an older layout has none) */
		map->segs_fd = perflib_pin_open(dir, "segs", false);
		map->idxs_fd = perflib_pin_open(dir, "idxs", false);
		map->lives_fd = perflib_pin_open(dir, "lives", false);
	}
	err = map_attach(map, unmapped);
	if (err)
		goto out;
	if (writable && (map->segs_fd < 0 || map->idxs_fd < 0 || map->lives_fd < 0)) {
		err = map->segs_fd < 0	 ? map->segs_fd
		      : map->idxs_fd < 0 ? map->idxs_fd
					 : map->lives_fd;
		goto out;
	}
	*ret_map = map;
	return 0;
out:
	perflib_set_close(map);
	return err;
}

int perflib_pin_one(int fd, const char *dir, const char *name, const struct perflib_pin_opts *opts)
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
 * Unpin everything in a counter set's directory: the maps, the segment directories, and
 * whatever pins BPF programs added beside them (the exit reaper's link, kcounters' links;
 * a pinned link keeps its program attached and the maps alive until it is unpinned), then
 * the directory.
 */
void perflib_remove_dir(const char *dir)
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
			if (de->d_type == DT_DIR)
				perflib_remove_dir(path);
			else
				unlink(path);
		}
		closedir(d);
	}
	rmdir(dir);
}

/* an ARRAY_OF_MAPS of PERFLIB_MAX_SEGS entries whose inner maps look like @inner_fd */
static int outer_create(const char *name, int inner_fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts);
	int fd;

	mopts.inner_map_fd = inner_fd;
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, name, 4, 4, PERFLIB_MAX_SEGS, &mopts);
	return fd < 0 ? -errno : fd;
}

int perflib_set_create(const struct perflib_info *info, size_t info_size,
		       const struct perflib_pin_opts *opts, struct perflib_set_map **ret_map)
{
	LIBBPF_OPTS(bpf_map_create_opts, mopts);
	struct perflib_ctl ctl = {.magic = PERFLIB_CTL_MAGIC};
	struct perflib_seg_maps seg0;
	struct perflib_set_map *map;
	char dir[PATH_MAX], tmp[PATH_MAX], sdir[PATH_MAX + 8];
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
	memset(&seg0, 0, sizeof(seg0));
	seg0.data_fd = seg0.index_fd = seg0.live_fd = -1;

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
	memset(&mopts, 0, sizeof(mopts));
	mopts.sz = sizeof(mopts);
	mopts.map_flags = BPF_F_MMAPABLE;
	map->procs_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pl_procs", 4,
				       sizeof(struct perflib_proc), info->nr_procs, &mopts);
	map->ctl_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "pl_ctl", 4, sizeof(ctl), 1, &mopts);
	if (map->procs_fd < 0 || map->ctl_fd < 0) {
		err = -errno;
		goto out;
	}
	/* segment 0 exists from the start: it is the template of the outer maps */
	err = perflib_seg_create(info, 0, &seg0);
	if (err)
		goto out;
	map->segs_fd = outer_create("pl_segs", seg0.data_fd);
	map->idxs_fd = outer_create("pl_idxs", seg0.index_fd);
	map->lives_fd = outer_create("pl_lives", seg0.live_fd);
	if (map->segs_fd < 0 || map->idxs_fd < 0 || map->lives_fd < 0) {
		err = map->segs_fd < 0	 ? map->segs_fd
		      : map->idxs_fd < 0 ? map->idxs_fd
					 : map->lives_fd;
		goto out;
	}
	ctl.nr_segs = 1;
	if (bpf_map_update_elem(map->segs_fd, &key, &seg0.data_fd, BPF_ANY) ||
	    bpf_map_update_elem(map->idxs_fd, &key, &seg0.index_fd, BPF_ANY) ||
	    bpf_map_update_elem(map->lives_fd, &key, &seg0.live_fd, BPF_ANY) ||
	    bpf_map_update_elem(map->ctl_fd, &key, &ctl, BPF_ANY)) {
		err = -errno;
		goto out;
	}

	/* pin into a private directory, then publish it with one rename */
	snprintf(tmp, sizeof(tmp), "%s/tmp-%d-%u", perflib_root_path(), (int)getpid(), seq++);
	if (mkdir(tmp, 0755)) {
		err = -errno;
		goto out;
	}
	err = perflib_pin_one(map->info_fd, tmp, "info", opts);
	if (!err)
		err = perflib_pin_one(map->ctl_fd, tmp, "ctl", opts);
	if (!err)
		err = perflib_pin_one(map->procs_fd, tmp, "procs", opts);
	if (!err)
		err = perflib_pin_one(map->segs_fd, tmp, "segs", opts);
	if (!err)
		err = perflib_pin_one(map->idxs_fd, tmp, "idxs", opts);
	if (!err)
		err = perflib_pin_one(map->lives_fd, tmp, "lives", opts);
	if (!err) {
		snprintf(sdir, sizeof(sdir), "%s/s0", tmp);
		err = perflib_seg_pin(&seg0, sdir, opts);
	}
	if (!err && (opts->uid != (uid_t)-1 || opts->gid != (gid_t)-1) &&
	    chown(tmp, opts->uid, opts->gid))
		err = -errno;
	if (!err && rename(tmp, dir)) {
		err = -errno;
		perflib_remove_dir(tmp);
		if (err == -EEXIST || err == -ENOTEMPTY) {
			/* another process published it first: use theirs */
			perflib_seg_maps_close(&seg0);
			perflib_set_close(map);
			err = perflib_set_open(&guid, true, ret_map);
			return err ? err : 1;
		}
		goto out;
	}
	if (err) {
		perflib_remove_dir(tmp);
		goto out;
	}
	perflib_seg_maps_close(&seg0);
	err = map_read_info(map);
	if (!err)
		err = map_attach(map, false);
	if (err)
		goto out;
	*ret_map = map;
	return 0;
out:
	if (btf_fd >= 0)
		close(btf_fd);
	perflib_seg_maps_close(&seg0);
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
	/* its program leaves the exit dispatcher (a set of any layout may have a ctl) */
	{
		char path[PATH_MAX + 8];
		int fd;

		snprintf(path, sizeof(path), "%s/ctl", dir);
		fd = bpf_obj_get(path);
		if (fd >= 0) {
			if (perflib_map_check(fd, BPF_MAP_TYPE_ARRAY, 4, sizeof(struct perflib_ctl), 1,
					      0) >= 0)
				perflib_reaper_forget(guid, fd);
			close(fd);
		}
	}
	perflib_remove_dir(dir);
	if (!stat(dir, &st))
		return -EBUSY;
	perflib_reaper_root_done();
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

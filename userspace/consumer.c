// SPDX-License-Identifier: MIT
/*
 * consumer.c - the reading side shared by every consumer function: machine names, the
 * process-wide cache of counter sets opened read-only, copying live instances out of the
 * mapped slots (seqlock protocol, owner liveness), and the two enumeration functions,
 * PerfEnumerateCounterSet and PerfEnumerateCounterSetInstances.
 *
 * Invariants:
 *  - maps are opened with BPF_F_RDONLY and mapped PROT_READ: a consumer never writes;
 *  - every offset used inside a slot comes from the private, checked info copy; a name must
 *    end inside name_max units or the slot is skipped;
 *  - an instance is used only when its slot word was LIVE and unchanged across the copy and
 *    its owner (pid + start time) still runs, so names are never torn and half-created,
 *    half-deleted or orphaned instances never show.
 *
 * The kernel maps a BPF array only through a file open for writing. A reader whose pins
 * grant read but not write permission (mode 0644 for others) therefore copies the slots
 * with batch lookups, twice, and keeps a slot only when its word is the same in both copies:
 * the generation in the word grows on every change, so an equal word means the instance
 * stayed the same between the two reads of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "consumer.h"

#define READ_RETRIES 4 /* copies of one slot before it is skipped as changing */
#define CACHE_KEEP 64  /* unused counter-set openings kept open */
#define OPEN_RETRIES 3 /* re-registrations raced while opening */
#define COPY_CHUNK 256 /* slots per batch copy when a counter set cannot be mapped */

/* ---- machines ---------------------------------------------------------------------------- */

static bool name_equal_ascii(const WCHAR *w, size_t len, const char *s)
{
	size_t i;

	for (i = 0; i < len; i++) {
		WCHAR c = w[i];
		unsigned char d = (unsigned char)s[i];

		if (!d || c >= 0x80)
			return false;
		if (c >= 'A' && c <= 'Z')
			c = (WCHAR)(c - 'A' + 'a');
		if (d >= 'A' && d <= 'Z')
			d = (unsigned char)(d - 'A' + 'a');
		if (c != d)
			return false;
	}
	return s[len] == 0;
}

int perflib_machine_check(LPCWSTR machine)
{
	char host[PERFLIB_MACHINE_MAX + 1];
	size_t len;

	if (!machine)
		return 0;
	len = perflib_wcsnlen(machine, PERFLIB_MACHINE_MAX + 1);
	if (len > PERFLIB_MACHINE_MAX)
		return -EHOSTUNREACH;
	if (len == 0)
		return 0;
	/* UNC form: "\\name" */
	if (len > 2 && machine[0] == u'\\' && machine[1] == u'\\') {
		machine += 2;
		len -= 2;
	}
	if (name_equal_ascii(machine, len, ".") || name_equal_ascii(machine, len, "localhost"))
		return 0;
	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = 0;
		if (name_equal_ascii(machine, len, host))
			return 0;
	}
	/* remote machines would need a protocol; refuse at once, without network traffic */
	return -EHOSTUNREACH;
}

size_t perflib_machine_name(WCHAR *buf, size_t units)
{
	char host[PERFLIB_MACHINE_MAX + 1];
	int n = -1;

	if (gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = 0;
		n = perflib_utf8_to_utf16(host, buf, units);
	}
	if (n <= 1)
		n = perflib_utf8_to_utf16("localhost", buf, units);
	return n > 0 ? (size_t)n * 2 : 0;
}

/* ---- output buffer ----------------------------------------------------------------------- */

ULONG perflib_obuf_result(const struct perflib_obuf *o, DWORD *ret_actual)
{
	/* sizes are DWORDs: a result past 4 GiB cannot be asked for */
	if (o->len > UINT32_MAX)
		return ERROR_OUTOFMEMORY;
	return perflib_buffer_result((DWORD)o->len, (DWORD)o->cap, ret_actual);
}

void perflib_obuf_instance(struct perflib_obuf *o, uint32_t id, const WCHAR *name, size_t len)
{
	size_t name_bytes = (len + 1) * 2,
	       size = perflib_round8(sizeof(PERF_INSTANCE_HEADER) + name_bytes);
	PERF_INSTANCE_HEADER h = {.Size = (ULONG)size, .InstanceId = id};
	uint8_t *p = perflib_obuf_put(o, size);

	if (!p)
		return;
	memcpy(p, &h, sizeof(h));
	memcpy(p + sizeof(h), name, len * 2);
	memset(p + sizeof(h) + len * 2, 0, 2);
	perflib_zero_tail(p, sizeof(h) + name_bytes, size);
}

/* ---- counter sets opened read-only --------------------------------------------------------- */

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct perflib_cset *cache;
static uint64_t cache_clock;

static bool instance_type_known(uint32_t t)
{
	return t == PERF_COUNTERSET_SINGLE_INSTANCE || t == PERF_COUNTERSET_MULTI_INSTANCES ||
	       t == PERF_COUNTERSET_SINGLE_AGGREGATE || t == PERF_COUNTERSET_MULTI_AGGREGATE ||
	       t == PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY ||
	       t == PERF_COUNTERSET_INSTANCE_AGGREGATE;
}

/* identity of the counter set's pins: a re-registration pins new files */
static int pin_identity(const char *dir, dev_t *ret_dev, ino_t *ret_ino)
{
	char path[PATH_MAX + 8];
	struct stat st;

	snprintf(path, sizeof(path), "%s/data", dir);
	if (stat(path, &st))
		return -errno;
	*ret_dev = st.st_dev;
	*ret_ino = st.st_ino;
	return 0;
}

static void cset_free(struct perflib_cset *cs)
{
	if (!cs)
		return;
	perflib_set_close(cs->map);
	free(cs->mask);
	free(cs->data_size);
	free(cs->is_ref);
	free(cs->by_id);
	free(cs);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* the per-position tables every read uses */
static int cset_tables(struct perflib_cset *cs)
{
	const struct perflib_info_counter *c = cs->map->counters;
	uint32_t n = cs->nr_counters, k;

	cs->mask = calloc(n, sizeof(*cs->mask));
	cs->data_size = calloc(n, sizeof(*cs->data_size));
	cs->is_ref = calloc(n, sizeof(*cs->is_ref));
	cs->by_id = calloc(n, sizeof(*cs->by_id));
	if (!cs->mask || !cs->data_size || !cs->is_ref || !cs->by_id)
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		switch (c[k].type & 0x300) {
		case PERF_SIZE_DWORD:
			/* the low half of the 8-byte slot, as on Windows */
			cs->mask[k] = 0xFFFFFFFFull;
			cs->data_size[k] = 4;
			break;
		case PERF_SIZE_ZERO:
			cs->mask[k] = 0;
			cs->data_size[k] = 0;
			break;
		default:
			/* LARGE; VARIABLE_LEN cannot be set through the API: the raw slot */
			cs->mask[k] = ~0ull;
			cs->data_size[k] = 8;
			break;
		}
		cs->is_ref[k] = !!(c[k].attrib & PERF_ATTRIB_BY_REFERENCE);
		if (cs->is_ref[k])
			cs->byref = true;
		cs->by_id[k] = (uint64_t)c[k].id << 32 | k;
	}
	/* a by-reference counter without a ref area would be a corrupt registration */
	if (cs->byref && !cs->map->info->ref_offset)
		return -EBADMSG;
	qsort(cs->by_id, n, sizeof(*cs->by_id), cmp_u64);
	return 0;
}

/* copy entries [first, first + n) of array map @fd (@value_size bytes each) into @buf */
static int copy_entries(int fd, uint32_t first, uint32_t n, uint32_t value_size, uint8_t *buf)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	uint32_t prev = first - 1, out = 0, count = n, k;
	uint32_t *keys = malloc((n ? n : 1) * sizeof(*keys));

	if (!keys)
		return -ENOMEM;
	/* defined bytes whatever the kernel copies (valgrind does not know batch lookups) */
	memset(keys, 0, (n ? n : 1) * sizeof(*keys));
	memset(buf, 0, (size_t)n * value_size);
	/* a batch continues after the key it is given: the entry before the first one */
	if (!bpf_map_lookup_batch(fd, first ? &prev : NULL, &out, keys, buf, &count, &opts) ||
	    errno == ENOENT) {
		for (k = 0; k < count && keys[k] == first + k; k++)
			;
		if (k == n) {
			free(keys);
			return 0;
		}
	}
	free(keys);
	/* no batch support, or not the entries asked for: one lookup each */
	for (k = 0; k < n; k++) {
		uint32_t key = first + k;

		if (bpf_map_lookup_elem(fd, &key, buf + (size_t)k * value_size))
			return -errno;
	}
	return 0;
}

/*
 * An unmapped counter set's procs map is a private anonymous mapping (so that
 * perflib_set_close unmaps it like a real one) holding a copy, refreshed at every use:
 * what collect.c needs to find the providers to notify.
 */
static void procs_refresh(const struct perflib_set_map *map)
{
	if (map->data || !map->procs)
		return;
	if (copy_entries(map->procs_fd, 0, map->info->nr_procs, sizeof(struct perflib_proc),
			 (uint8_t *)map->procs))
		memset(map->procs, 0, map->procs_len); /* unknown: notify nobody */
}

/* map type and sizes of an opened map; -EBADMSG when not as the layout says */
static int map_shape(int fd, __u32 value_size, __u32 entries, __u32 *ret_value_size)
{
	struct bpf_map_info mi;
	__u32 len = sizeof(mi);

	memset(&mi, 0, sizeof(mi));
	if (bpf_obj_get_info_by_fd(fd, &mi, &len))
		return -errno;
	if (mi.type != BPF_MAP_TYPE_ARRAY || mi.key_size != 4 || mi.max_entries != entries ||
	    (value_size && mi.value_size != value_size))
		return -EBADMSG;
	*ret_value_size = mi.value_size;
	return 0;
}

/*
 * The info and data maps of a counter set this process may read but not map (no write
 * permission on the pins): read-only fds, the info copied and checked, data left unmapped
 * (map->data NULL) for the batch copies of struct reader.
 */
static int open_unmapped(const GUID *guid, const char *dir, struct perflib_set_map **ret_map)
{
	LIBBPF_OPTS(bpf_obj_get_opts, gopts, .file_flags = BPF_F_RDONLY);
	char path[PATH_MAX + 8];
	struct perflib_set_map *map;
	__u32 key = 0, size;
	int err;

	map = calloc(1, sizeof(*map));
	if (!map)
		return -ENOMEM;
	map->guid = *guid;
	map->info_fd = map->data_fd = map->index_fd = map->procs_fd = -1;
	snprintf(path, sizeof(path), "%s/info", dir);
	map->info_fd = bpf_obj_get_opts(path, &gopts);
	if (map->info_fd < 0) {
		err = -errno;
		goto out;
	}
	err = map_shape(map->info_fd, 0, 1, &size);
	if (err)
		goto out;
	map->info = malloc(size);
	if (!map->info) {
		err = -ENOMEM;
		goto out;
	}
	if (bpf_map_lookup_elem(map->info_fd, &key, map->info)) {
		err = -errno;
		goto out;
	}
	err = perflib_info_check(map->info, size);
	if (err)
		goto out;
	map->info_size = size;
	map->counters = (const struct perflib_info_counter *)(map->info + 1);
	snprintf(path, sizeof(path), "%s/data", dir);
	map->data_fd = bpf_obj_get_opts(path, &gopts);
	if (map->data_fd < 0) {
		err = -errno;
		goto out;
	}
	err = map_shape(map->data_fd, map->info->slot_size, map->info->capacity, &size);
	if (err)
		goto out;
	map->data_len = (size_t)map->info->capacity * map->info->slot_size;
	/* providers are found through procs; without it nobody is notified */
	snprintf(path, sizeof(path), "%s/procs", dir);
	map->procs_fd = bpf_obj_get_opts(path, &gopts);
	if (map->procs_fd >= 0 &&
	    !map_shape(map->procs_fd, sizeof(struct perflib_proc), map->info->nr_procs, &size)) {
		void *p;

		map->procs_len = (size_t)map->info->nr_procs * sizeof(struct perflib_proc);
		p = mmap(NULL, map->procs_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		map->procs = p == MAP_FAILED ? NULL : p;
	}
	*ret_map = map;
	return 0;
out:
	perflib_set_close(map);
	return err;
}

static int cset_open(const GUID *guid, const char *dir, struct perflib_cset **ret_cs)
{
	struct perflib_cset *cs;
	dev_t dev2;
	ino_t ino2;
	int err;

	cs = calloc(1, sizeof(*cs));
	if (!cs)
		return -ENOMEM;
	snprintf(cs->dir, sizeof(cs->dir), "%s", dir);
	err = pin_identity(dir, &cs->dev, &cs->ino);
	if (!err)
		err = perflib_set_open(guid, false, &cs->map);
	/* readable but not mappable: copy instead (an -EACCES here means no read permission) */
	if (err == -EACCES)
		err = open_unmapped(guid, dir, &cs->map);
	/* the pins must still be those we identified: else a re-registration raced us */
	if (!err)
		err = pin_identity(dir, &dev2, &ino2);
	if (!err && (dev2 != cs->dev || ino2 != cs->ino))
		err = -EAGAIN;
	if (err == -ENOENT)
		err = -EAGAIN; /* removed meanwhile: the caller looks again */
	if (err)
		goto out;
	cs->nr_counters = cs->map->info->nr_counters;
	cs->instance_type = cs->map->info->instance_type;
	if (!instance_type_known(cs->instance_type)) {
		pr_debug("counter set %s has an unknown instance type %#x\n", dir,
			 cs->instance_type);
		err = -EBADMSG;
		goto out;
	}
	err = cset_tables(cs);
	if (err)
		goto out;
	*ret_cs = cs;
	return 0;
out:
	cset_free(cs);
	return err;
}

/* why nothing is pinned for @guid: -ESRCH, or -ENODEV when bpffs is not mounted */
static int not_registered(const GUID *guid)
{
	struct perflib_set_map *map;
	int err;

	/* perflib_set_open tells a missing bpffs (and says how to mount it) from a missing set */
	err = perflib_set_open(guid, false, &map);
	if (!err) {
		perflib_set_close(map);
		return -EAGAIN; /* registered meanwhile */
	}
	return err == -ENOENT ? -ESRCH : err;
}

/* drop the least recently used unused openings beyond CACHE_KEEP (cache lock held) */
static void cache_trim(void)
{
	struct perflib_cset **pp, **oldest, *victim;
	unsigned int unused;

	for (;;) {
		unused = 0;
		oldest = NULL;
		for (pp = &cache; *pp; pp = &(*pp)->next) {
			if ((*pp)->refs)
				continue;
			unused++;
			if (!oldest || (*pp)->last_use < (*oldest)->last_use)
				oldest = pp;
		}
		if (unused <= CACHE_KEEP || !oldest)
			return;
		victim = *oldest;
		*oldest = victim->next;
		cset_free(victim);
	}
}

int perflib_cset_get(const GUID *guid, struct perflib_cset **ret_cs)
{
	struct perflib_cset *cs, **pp, *fresh;
	char dir[PATH_MAX];
	dev_t dev = 0;
	ino_t ino = 0;
	int err = -EBUSY, tries;

	if (perflib_set_dir(guid, dir, sizeof(dir)))
		return -ENAMETOOLONG;
	for (tries = 0; tries < OPEN_RETRIES; tries++) {
		err = pin_identity(dir, &dev, &ino);
		if (err == -ENOENT || err == -ENOTDIR)
			err = not_registered(guid);
		if (err == -EAGAIN)
			continue;
		if (err)
			return err;
		pthread_mutex_lock(&cache_lock);
		for (pp = &cache; *pp;) {
			cs = *pp;
			if (strcmp(cs->dir, dir)) {
				pp = &cs->next;
				continue;
			}
			if (cs->dev == dev && cs->ino == ino) {
				cs->refs++;
				cs->last_use = ++cache_clock;
				pthread_mutex_unlock(&cache_lock);
				procs_refresh(cs->map);
				*ret_cs = cs;
				return 0;
			}
			/* re-registered: the old opening goes when its last user is done */
			*pp = cs->next;
			cs->stale = true;
			if (!cs->refs)
				cset_free(cs);
		}
		pthread_mutex_unlock(&cache_lock);

		err = cset_open(guid, dir, &fresh);
		if (err == -EAGAIN)
			continue;
		if (err)
			return err;
		pthread_mutex_lock(&cache_lock);
		fresh->refs = 1;
		fresh->last_use = ++cache_clock;
		fresh->next = cache;
		cache = fresh;
		cache_trim();
		pthread_mutex_unlock(&cache_lock);
		procs_refresh(fresh->map);
		*ret_cs = fresh;
		return 0;
	}
	/* pins kept changing under us */
	return err == -EAGAIN ? -EBUSY : err;
}

void perflib_cset_put(struct perflib_cset *cs)
{
	if (!cs)
		return;
	pthread_mutex_lock(&cache_lock);
	if (--cs->refs == 0 && cs->stale)
		cset_free(cs);
	pthread_mutex_unlock(&cache_lock);
}

int perflib_cset_counter(const struct perflib_cset *cs, uint32_t id)
{
	size_t lo = 0, hi = cs->nr_counters;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		uint32_t mid_id = (uint32_t)(cs->by_id[mid] >> 32);

		if (mid_id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* duplicate ids (a corrupt registration): the first position wins */
	if (lo < cs->nr_counters && (uint32_t)(cs->by_id[lo] >> 32) == id)
		return (int)(uint32_t)cs->by_id[lo];
	return -1;
}

/* ---- owner liveness, cached per call --------------------------------------------------------- */

struct alive_entry {
	uint64_t start; /* owner start time */
	uint32_t pid;	/* 0 = empty entry */
	uint32_t alive; /* perflib_proc_alive() result */
};

struct perflib_alive {
	struct alive_entry last; /* most recent answer: one provider owns most slots */
	struct alive_entry *tab; /* open addressing, power-of-two size */
	size_t cap, nr;
};

struct perflib_alive *perflib_alive_new(void)
{
	return calloc(1, sizeof(struct perflib_alive));
}

void perflib_alive_free(struct perflib_alive *ac)
{
	if (!ac)
		return;
	free(ac->tab);
	free(ac);
}

static size_t alive_hash(uint32_t pid, uint64_t start, size_t cap)
{
	uint64_t h = ((uint64_t)pid << 32 ^ start) * 0x9e3779b97f4a7c15ull;

	return (size_t)(h >> 32) & (cap - 1);
}

static void alive_insert(struct perflib_alive *ac, const struct alive_entry *e)
{
	size_t i;

	for (i = alive_hash(e->pid, e->start, ac->cap); ac->tab[i].pid; i = (i + 1) & (ac->cap - 1))
		;
	ac->tab[i] = *e;
	ac->nr++;
}

/* is (pid, start) a running process? Each distinct owner is looked up once per call. */
static bool owner_alive(struct perflib_alive *ac, uint32_t pid, uint64_t start)
{
	struct alive_entry e = {.start = start, .pid = pid};
	uint64_t now;
	size_t i;

	/* a slot handed to the kernel (kcounters): no owner process, alive (layout.h) */
	if (start == PERFLIB_OWNER_KERNEL)
		return true;
	if (pid == 0)
		return false;
	if (ac->last.pid == pid && ac->last.start == start)
		return ac->last.alive;
	for (i = ac->cap ? alive_hash(pid, start, ac->cap) : 0; ac->cap && ac->tab[i].pid;
	     i = (i + 1) & (ac->cap - 1)) {
		if (ac->tab[i].pid == pid && ac->tab[i].start == start) {
			ac->last = ac->tab[i];
			return ac->last.alive;
		}
	}
	/* start 0: the owner could not read its start time; the pid alone decides */
	if (start)
		e.alive = perflib_proc_alive(pid, start) == 1;
	else
		e.alive = perflib_proc_start_time((pid_t)pid, &now) == 0;
	ac->last = e;
	if (ac->nr * 2 >= ac->cap) {
		struct alive_entry *old = ac->tab;
		size_t old_cap = ac->cap, k;

		ac->cap = ac->cap ? ac->cap * 2 : 16;
		ac->tab = calloc(ac->cap, sizeof(*ac->tab));
		ac->nr = 0;
		if (!ac->tab) {
			/* no table: still correct, only slower */
			ac->tab = old;
			ac->cap = old_cap;
			return e.alive;
		}
		for (k = 0; k < old_cap; k++) {
			if (old[k].pid)
				alive_insert(ac, &old[k]);
		}
		free(old);
	}
	alive_insert(ac, &e);
	return e.alive;
}

/* ---- copying instances out of the slots ------------------------------------------------------ */

/*
 * Where slots are read: the mapping, or (no mapping) two successive batch copies of a chunk,
 * @a to read from and @b to check the word against.
 */
struct reader {
	const struct perflib_cset *cs;
	const uint8_t *a, *b; /* slot `first` of each */
	uint32_t first, nr;   /* slots held */
	uint8_t *copy[2];     /* unmapped: COPY_CHUNK slots each */
};

static int reader_init(struct reader *r, const struct perflib_cset *cs)
{
	size_t chunk = (size_t)COPY_CHUNK * cs->map->info->slot_size;

	memset(r, 0, sizeof(*r));
	r->cs = cs;
	if (cs->map->data)
		return 0;
	r->copy[0] = malloc(chunk);
	r->copy[1] = malloc(chunk);
	return r->copy[0] && r->copy[1] ? 0 : -ENOMEM;
}

static void reader_fini(struct reader *r)
{
	free(r->copy[0]);
	free(r->copy[1]);
}

/* make slots [first, first + *n) readable; *n may shrink */
static int reader_load(struct reader *r, uint32_t first, uint32_t *n)
{
	const struct perflib_set_map *map = r->cs->map;
	int err;

	if (map->data) {
		r->a = r->b = perflib_slot(map, first);
	} else {
		if (*n > COPY_CHUNK)
			*n = COPY_CHUNK;
		err = copy_entries(map->data_fd, first, *n, map->info->slot_size, r->copy[0]);
		if (!err)
			err = copy_entries(map->data_fd, first, *n, map->info->slot_size,
					   r->copy[1]);
		if (err)
			return err;
		r->a = r->copy[0];
		r->b = r->copy[1];
	}
	r->first = first;
	r->nr = *n;
	return 0;
}

static inline const uint8_t *reader_slot(const struct reader *r, const uint8_t *base, uint32_t i)
{
	return base + (size_t)(i - r->first) * r->cs->map->info->slot_size;
}

struct slot_copy {
	uint32_t id;  /* InstanceId */
	uint32_t len; /* name units without NUL */
	uint32_t gen; /* generation of the LIVE word */
};

/* raw counter values of @slot, masked to their size; by-reference ones from the ref area */
static void read_values(const struct perflib_cset *cs, const uint8_t *slot, uint64_t *vals,
			uint8_t *nodata)
{
	const struct perflib_info *info = cs->map->info;
	const uint64_t *v = (const uint64_t *)(slot + PERFLIB_COUNTERS_OFFSET);
	const uint64_t *ref, *null_bits;
	uint32_t k, n = cs->nr_counters;

	for (k = 0; k < n; k++)
		vals[k] = __atomic_load_n(&v[k], __ATOMIC_RELAXED) & cs->mask[k];
	if (!cs->byref)
		return;
	/* values dereferenced by the provider, then one bit per position: address NULL */
	ref = (const uint64_t *)(slot + info->ref_offset);
	null_bits = ref + n;
	for (k = 0; k < n; k++) {
		nodata[k] = 0;
		if (!cs->is_ref[k])
			continue;
		vals[k] = __atomic_load_n(&ref[k], __ATOMIC_RELAXED) & cs->mask[k];
		nodata[k] = (__atomic_load_n(&null_bits[k / 64], __ATOMIC_RELAXED) >> (k % 64)) & 1;
	}
}

/*
 * read_slot - copy slot @i: its id, its name (with NUL) into @name (name_max units of room),
 * and when @vals is given its values. True only for a consistent copy of a live instance
 * whose owner runs.
 */
static inline __attribute__((always_inline)) bool
read_slot(const struct reader *r, uint32_t i, struct perflib_alive *ac, WCHAR *name, uint64_t *vals,
	  uint8_t *nodata, struct slot_copy *ret)
{
	const struct perflib_cset *cs = r->cs;
	const struct perflib_info *info = cs->map->info;
	const uint8_t *slot = reader_slot(r, r->a, i), *again = reader_slot(r, r->b, i);
	const struct perflib_slot_hdr *h = (const void *)slot;
	const PERF_COUNTERSET_INSTANCE *blk = (const void *)(slot + PERFLIB_BLOCK_OFFSET);
	const WCHAR *src = (const WCHAR *)(slot + info->name_offset);
	static const WCHAR nul;
	uint64_t w = perflib_slot_word(slot), w2, start;
	uint32_t id;
	size_t len;
	int tries;

	for (tries = 0; tries < READ_RETRIES; tries++) {
		if (perflib_word_state(w) != PERFLIB_SLOT_LIVE)
			return false;
		start = __atomic_load_n(&h->owner_start, __ATOMIC_RELAXED);
		id = __atomic_load_n(&blk->InstanceId, __ATOMIC_RELAXED);
		/* bounded by the private info copy, whatever the slot holds */
		len = perflib_name_len(src, info->name_max);
		if (len < info->name_max) {
			memcpy(name, src, len * 2);
			memcpy(name + len, &nul, sizeof(nul));
		}
		if (vals)
			read_values(cs, slot, vals, nodata);
		/* the copy is good only if the word did not move while we copied */
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		w2 = __atomic_load_n((const uint64_t *)again, __ATOMIC_RELAXED);
		if (w2 != w) {
			if (slot != again)
				return false; /* copies do not change: it shows next time */
			w = w2;
			continue;
		}
		if (len >= info->name_max)
			return false; /* no NUL inside name_max: not something a provider wrote */
		if (!owner_alive(ac, perflib_word_pid(w), start))
			return false;
		ret->id = id;
		ret->len = (uint32_t)len;
		ret->gen = perflib_word_gen(w);
		return true;
	}
	return false;
}

/* ---- snapshots --------------------------------------------------------------------------- */

void perflib_snap_free(struct perflib_snap *snap)
{
	if (!snap)
		return;
	free(snap->inst);
	free(snap->pool);
	free(snap->vals);
	free(snap->nodata);
	memset(snap, 0, sizeof(*snap));
}

/* room for one more instance, @units more name units and one more row */
static int snap_reserve(struct perflib_snap *snap, size_t units)
{
	size_t n = snap->nr_counters;

	if (snap->nr == snap->cap) {
		size_t cap = snap->cap ? snap->cap * 2 : 64;
		void *p = realloc(snap->inst, cap * sizeof(*snap->inst));

		if (!p)
			return -ENOMEM;
		snap->inst = p;
		snap->cap = cap;
	}
	if (snap->pool_len + units > snap->pool_cap) {
		size_t cap = snap->pool_cap ? snap->pool_cap * 2 : 4096;
		void *p;

		while (cap < snap->pool_len + units)
			cap *= 2;
		p = realloc(snap->pool, cap * sizeof(WCHAR));
		if (!p)
			return -ENOMEM;
		snap->pool = p;
		snap->pool_cap = cap;
	}
	if (snap->values && snap->nr_rows == snap->rows_cap) {
		size_t cap = snap->rows_cap ? snap->rows_cap * 2 : 64;
		void *v = realloc(snap->vals, cap * n * sizeof(*snap->vals)), *d;

		if (!v)
			return -ENOMEM;
		snap->vals = v;
		d = realloc(snap->nodata, cap * n);
		if (!d)
			return -ENOMEM;
		snap->nodata = d;
		snap->rows_cap = cap;
	}
	return 0;
}

int perflib_snap_add(struct perflib_snap *snap, uint32_t id, const WCHAR *name, size_t len,
		     struct perflib_snap_inst **ret_inst)
{
	struct perflib_snap_inst *in;
	size_t off = 0;
	bool in_pool = snap->pool && name >= snap->pool && name < snap->pool + snap->pool_len;
	int err;

	/* a name already in the pool moves with it when the pool grows */
	if (in_pool)
		off = (size_t)(name - snap->pool);
	err = snap_reserve(snap, len + 1);
	if (err)
		return err;
	if (in_pool)
		name = snap->pool + off;
	in = &snap->inst[snap->nr++];
	in->id = id;
	in->name_len = (uint32_t)len;
	in->name_off = (uint32_t)snap->pool_len;
	in->slot = UINT32_MAX;
	in->gen = 0;
	in->row = snap->values ? (uint32_t)snap->nr_rows++ : 0;
	memmove(snap->pool + snap->pool_len, name, len * 2);
	snap->pool[snap->pool_len + len] = 0;
	snap->pool_len += len + 1;
	if (snap->values) {
		memset(snap->vals + (size_t)in->row * snap->nr_counters, 0,
		       snap->nr_counters * sizeof(*snap->vals));
		memset(snap->nodata + (size_t)in->row * snap->nr_counters, 0, snap->nr_counters);
	}
	*ret_inst = in;
	return 0;
}

int perflib_snap_read(const struct perflib_cset *cs, bool values, struct perflib_snap *snap)
{
	const struct perflib_info *info = cs->map->info;
	uint32_t first, i, n = cs->nr_counters, chunk;
	struct perflib_alive *ac;
	struct slot_copy c;
	struct reader r;
	int err;

	/* rows are per counter set: different widths cannot share the buffers */
	if (snap->nr_counters != n) {
		free(snap->vals);
		free(snap->nodata);
		snap->vals = NULL;
		snap->nodata = NULL;
		snap->rows_cap = 0;
	}
	snap->nr_counters = n;
	snap->values = values;
	snap->nr = snap->pool_len = snap->nr_rows = 0;
	ac = perflib_alive_new();
	err = ac ? reader_init(&r, cs) : -ENOMEM;
	for (first = 0; !err && first < info->capacity; first += chunk) {
		chunk = info->capacity - first;
		err = reader_load(&r, first, &chunk);
		for (i = first; !err && i < first + chunk; i++) {
			struct perflib_snap_inst *in;
			uint64_t *row = NULL;
			uint8_t *nd = NULL;

			if (perflib_word_state(perflib_slot_word(reader_slot(&r, r.a, i))) !=
			    PERFLIB_SLOT_LIVE)
				continue;
			err = snap_reserve(snap, info->name_max);
			if (err)
				break;
			if (values) {
				row = snap->vals + snap->nr_rows * n;
				nd = snap->nodata + snap->nr_rows * n;
				if (!cs->byref)
					memset(nd, 0, n);
			}
			if (!read_slot(&r, i, ac, snap->pool + snap->pool_len, row, nd, &c))
				continue;
			in = &snap->inst[snap->nr++];
			in->id = c.id;
			in->name_len = c.len;
			in->name_off = (uint32_t)snap->pool_len;
			in->slot = i;
			in->gen = c.gen;
			in->row = values ? (uint32_t)snap->nr_rows++ : 0;
			snap->pool_len += c.len + 1;
			/* a single-instance set has one instance; more can only be garbage */
			if (cs->instance_type == PERF_COUNTERSET_SINGLE_INSTANCE)
				goto done;
		}
	}
done:
	if (ac)
		reader_fini(&r);
	perflib_alive_free(ac);
	return err;
}

/* ---- PerfEnumerateCounterSet ------------------------------------------------------------- */

static int cmp_guid(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(GUID));
}

ULONG PerfEnumerateCounterSet(LPCWSTR szMachine, LPGUID pCounterSetIds, DWORD cCounterSetIds,
			      LPDWORD pcCounterSetIdsActual)
{
	char dir[PATH_MAX], path[PATH_MAX + 8];
	GUID *guids = NULL;
	size_t nr = 0, i, n = 0;
	struct stat st;
	ULONG ret;
	int err;

	if (!pcCounterSetIdsActual || (!pCounterSetIds && cCounterSetIds))
		return ERROR_INVALID_PARAMETER;
	err = perflib_machine_check(szMachine);
	if (!err)
		err = perflib_store_list(&guids, &nr);
	if (err)
		return perflib_win32_error(err);
	/* sorted, once each, and only directories that hold a registration */
	qsort(guids, nr, sizeof(*guids), cmp_guid);
	for (i = 0; i < nr; i++) {
		if (n && !memcmp(&guids[n - 1], &guids[i], sizeof(GUID)))
			continue;
		if (perflib_set_dir(&guids[i], dir, sizeof(dir)))
			continue;
		snprintf(path, sizeof(path), "%s/info", dir);
		if (stat(path, &st))
			continue;
		guids[n++] = guids[i];
	}
	if (n > UINT32_MAX) {
		free(guids);
		return ERROR_OUTOFMEMORY;
	}
	ret = perflib_buffer_result((DWORD)n, cCounterSetIds, pcCounterSetIdsActual);
	if (ret == ERROR_SUCCESS && n)
		memcpy(pCounterSetIds, guids, n * sizeof(GUID));
	free(guids);
	return ret;
}

/* ---- PerfEnumerateCounterSetInstances ------------------------------------------------------ */

/*
 * Instances as they stand in the slots (single, multiple, multiple + _Total): copied
 * straight into the caller's buffer when it has room for the longest name, otherwise via
 * a scratch name and only counted once the buffer is full.
 */
static int enum_direct(const struct perflib_cset *cs, struct perflib_obuf *o)
{
	const struct perflib_info *info = cs->map->info;
	size_t max_block = sizeof(PERF_INSTANCE_HEADER) + 2 * (size_t)info->name_max;
	WCHAR scratch[PERF_MAX_INSTANCE_NAME + 1];
	bool aligned = !((uintptr_t)o->p & 1);
	uint32_t first, i, chunk, nr = 0;
	struct perflib_alive *ac;
	struct slot_copy c;
	struct reader r;
	int err;

	ac = perflib_alive_new();
	err = ac ? reader_init(&r, cs) : -ENOMEM;
	for (first = 0; !err && first < info->capacity; first += chunk) {
		chunk = info->capacity - first;
		err = reader_load(&r, first, &chunk);
		for (i = first; !err && i < first + chunk; i++) {
			uint8_t *dst = NULL;
			WCHAR *name = scratch;
			size_t size, used;

			if (perflib_word_state(perflib_slot_word(reader_slot(&r, r.a, i))) !=
			    PERFLIB_SLOT_LIVE)
				continue;
			if (aligned && o->len <= o->cap && o->cap - o->len >= max_block) {
				dst = o->p + o->len;
				name = (WCHAR *)(dst + sizeof(PERF_INSTANCE_HEADER));
			}
			if (!read_slot(&r, i, ac, name, NULL, NULL, &c))
				continue;
			if (perflib_aggregate_hides(cs->instance_type, name, c.len))
				continue;
			nr++;
			if (!dst) {
				perflib_obuf_instance(o, c.id, name, c.len);
			} else {
				PERF_INSTANCE_HEADER hdr = {.InstanceId = c.id};

				used = sizeof(hdr) + ((size_t)c.len + 1) * 2;
				size = perflib_round8(used);
				hdr.Size = (ULONG)size;
				memcpy(dst, &hdr, sizeof(hdr));
				memset(dst + used, 0, size - used);
				o->len += size;
			}
			if (cs->instance_type == PERF_COUNTERSET_SINGLE_INSTANCE)
				goto done;
		}
	}
done:
	if (ac)
		reader_fini(&r);
	perflib_alive_free(ac);
	if (!err && cs->instance_type == PERF_COUNTERSET_MULTI_AGGREGATE && nr)
		perflib_obuf_instance(o, 0, PERFLIB_TOTAL_NAME, PERFLIB_TOTAL_LEN);
	return err;
}

/* aggregated instances (global aggregate, merged names): from a snapshot */
static int enum_aggregated(const struct perflib_cset *cs, struct perflib_obuf *o)
{
	struct perflib_snap snap;
	size_t i;
	int err;

	memset(&snap, 0, sizeof(snap));
	err = perflib_snap_read(cs, false, &snap);
	if (!err)
		err = perflib_snap_aggregate(cs, &snap, false);
	for (i = 0; !err && i < snap.nr; i++)
		perflib_obuf_instance(o, snap.inst[i].id, perflib_snap_name(&snap, &snap.inst[i]),
				      snap.inst[i].name_len);
	perflib_snap_free(&snap);
	return err;
}

ULONG PerfEnumerateCounterSetInstances(LPCWSTR szMachine, LPCGUID pCounterSetId,
				       PPERF_INSTANCE_HEADER pInstances, DWORD cbInstances,
				       LPDWORD pcbInstancesActual)
{
	struct perflib_obuf o = {.p = (uint8_t *)pInstances, .cap = pInstances ? cbInstances : 0};
	WCHAR machine[PERFLIB_MACHINE_MAX + 1];
	struct perflib_cset *cs;
	ULONG status = ERROR_SUCCESS;
	size_t machine_bytes;
	int err;

	if (!pCounterSetId || !pcbInstancesActual || (!pInstances && cbInstances))
		return ERROR_INVALID_PARAMETER;
	err = perflib_machine_check(szMachine);
	if (!err)
		err = perflib_cset_get(pCounterSetId, &cs);
	if (err)
		return perflib_win32_error(err);
	/* providers with a ControlCallback learn of the enumeration first and may refuse it */
	machine_bytes = perflib_machine_name(machine, sizeof(machine) / sizeof(machine[0]));
	err = perflib_notify_providers(cs->map, PERF_ENUM_INSTANCES, machine, machine_bytes,
				       &status);
	if (err)
		pr_debug("PERF_ENUM_INSTANCES notification failed: %s\n", strerror(-err));
	if (status != ERROR_SUCCESS) {
		perflib_cset_put(cs);
		return status;
	}
	switch (cs->instance_type) {
	case PERF_COUNTERSET_SINGLE_AGGREGATE:
	case PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY:
	case PERF_COUNTERSET_INSTANCE_AGGREGATE:
		err = enum_aggregated(cs, &o);
		break;
	default:
		err = enum_direct(cs, &o);
		break;
	}
	perflib_cset_put(cs);
	if (err)
		return perflib_win32_error(err);
	return perflib_obuf_result(&o, pcbInstancesActual);
}

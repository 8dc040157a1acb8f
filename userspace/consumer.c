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
#include <poll.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "consumer.h"

#define READ_RETRIES 4		 /* copies of one slot before it is skipped as changing */
#define CACHE_KEEP 64		 /* unused counter-set openings kept open */
#define OPEN_RETRIES 3		 /* re-registrations raced while opening */
#define COPY_CHUNK 256		 /* slots per batch copy when a counter set cannot be mapped */
#define PREFETCH_AHEAD 8	 /* slots between a prefetch and the read */
#define WATCH_MAX 4		 /* pin roots watched with inotify */
#define RECHECK_NS 1000000000ull /* an opening is stat()ed at least this often */
#define OWNERS_MAX 64		 /* provider processes whose pidfd is kept */

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

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

/* CLOCK_MONOTONIC_COARSE in ns: a vDSO read, for "at least this often" decisions */
static uint64_t coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

size_t perflib_machine_name(WCHAR *buf, size_t units)
{
	/* looked up at most once a second per thread: every notification carries it */
	static __thread WCHAR name[PERFLIB_MACHINE_MAX + 1];
	static __thread size_t name_units;
	static __thread uint64_t when;
	char host[PERFLIB_MACHINE_MAX + 1];
	uint64_t now = coarse_ns();
	int n = -1;

	if (!name_units || now - when > RECHECK_NS) {
		if (gethostname(host, sizeof(host)) == 0) {
			host[sizeof(host) - 1] = 0;
			n = perflib_utf8_to_utf16(host, name, PERFLIB_MACHINE_MAX + 1);
		}
		if (n <= 1)
			n = perflib_utf8_to_utf16("localhost", name, PERFLIB_MACHINE_MAX + 1);
		name_units = n > 0 ? (size_t)n : 0;
		when = now;
	}
	if (name_units > units)
		return 0;
	memcpy(buf, name, name_units * 2);
	return name_units * 2;
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

void perflib_obuf_values(struct perflib_obuf *o, const struct perflib_cset *cs,
			 const uint64_t *vals, const uint8_t *nodata, int pos)
{
	size_t first = pos < 0 ? 0 : (size_t)pos, end = pos < 0 ? cs->nr_counters : first + 1;
	uint8_t *p = perflib_obuf_put(o, 16 * (end - first));
	PERF_COUNTER_DATA d = {.dwSize = 16};
	static const uint64_t zero;
	size_t k;

	if (!p)
		return;
	for (k = first; k < end; k++, p += 16) {
		/* little-endian: a DWORD value fills the first 4 bytes, the rest is zero */
		d.dwDataSize = nodata[k] ? 0 : cs->data_size[k];
		memcpy(p, &d, sizeof(d));
		memcpy(p + sizeof(d), nodata[k] ? &zero : &vals[k], 8);
	}
}

/* ---- counter sets opened read-only --------------------------------------------------------- */

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct perflib_cset *cache;
static uint64_t cache_clock;
static pthread_once_t cache_once = PTHREAD_ONCE_INIT;

/*
 * Counter sets appear by rename() into the root and go by rmdir() (store.c): an inotify
 * watch on the root sees both, so a cached opening needs no stat() per call. Without a
 * watch (no inotify, no permission, too many roots) every call stat()s the pins.
 */
static struct {
	int fd;		  /* inotify instance, -1 = none */
	bool unavailable; /* inotify_init1 failed: stat() every time */
	int nr;
	struct {
		int wd;
		char root[PATH_MAX];
	} w[WATCH_MAX];
} watch = {.fd = -1};

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

	snprintf(path, sizeof(path), "%s/ctl", dir);
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
	/* readable but not mappable (read permission only): map->data NULL, slots are copied */
	if (!err)
		err = perflib_set_open(guid, false, &cs->map);
	/* the pins must still be those we identified: else a re-registration raced us */
	if (!err)
		err = pin_identity(dir, &dev2, &ino2);
	if (!err && (dev2 != cs->dev || ino2 != cs->ino))
		err = -EAGAIN;
	if (err == -ENOENT)
		err = -EAGAIN; /* removed meanwhile: the caller looks again */
	if (err)
		goto out;
	cs->checked = coarse_ns();
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

/* forget the openings of @dir, or of everything under @root when @dir is NULL (lock held) */
static void cache_invalidate(const char *dir, const char *root)
{
	struct perflib_cset **pp = &cache, *cs;
	size_t len = root ? strlen(root) : 0;

	while (*pp) {
		cs = *pp;
		if (dir ? strcmp(cs->dir, dir)
			: strncmp(cs->dir, root, len) || cs->dir[len] != '/') {
			pp = &cs->next;
			continue;
		}
		/* the opening goes when its last user is done */
		*pp = cs->next;
		cs->stale = true;
		if (!cs->refs)
			cset_free(cs);
	}
}

static void watch_drop(int i)
{
	watch.w[i] = watch.w[--watch.nr];
}

/* apply the root changes inotify reported since the last call (cache lock held) */
static void watch_drain(void)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	char dir[PATH_MAX + NAME_MAX + 2];
	const struct inotify_event *ev;
	ssize_t n;
	int i;

	while (watch.fd >= 0 && (n = read(watch.fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if (ev->mask & IN_Q_OVERFLOW) {
				/* events were lost: trust nothing cached */
				for (i = 0; i < watch.nr; i++)
					cache_invalidate(NULL, watch.w[i].root);
				continue;
			}
			for (i = 0; i < watch.nr && watch.w[i].wd != ev->wd; i++)
				;
			if (i == watch.nr)
				continue;
			if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT)) {
				cache_invalidate(NULL, watch.w[i].root);
				if (ev->mask & IN_IGNORED)
					watch_drop(i);
			} else if (ev->len) {
				snprintf(dir, sizeof(dir), "%s/%s", watch.w[i].root, ev->name);
				cache_invalidate(dir, NULL);
			}
		}
	}
}

/* is @root watched (watching it from now on if possible)? Cache lock held. */
static bool watch_root(const char *root)
{
	struct perflib_cset *cs;
	size_t len = strlen(root);
	int i, wd;

	for (i = 0; i < watch.nr; i++) {
		if (!strcmp(watch.w[i].root, root))
			return true;
	}
	if (watch.unavailable || watch.nr == WATCH_MAX || len >= PATH_MAX)
		return false;
	if (watch.fd < 0) {
		watch.fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (watch.fd < 0) {
			watch.unavailable = true;
			return false;
		}
	}
	wd = inotify_add_watch(watch.fd, root,
			       IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |
				       IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR);
	if (wd < 0)
		return false; /* no root yet, or not readable: stat() until it works */
	watch.w[watch.nr].wd = wd;
	memcpy(watch.w[watch.nr].root, root, len + 1);
	watch.nr++;
	/* what happened before the watch went unseen: check those openings once more */
	for (cs = cache; cs; cs = cs->next) {
		if (!strncmp(cs->dir, root, len) && cs->dir[len] == '/')
			cs->checked = 0;
	}
	return true;
}

/* fork: the child must not read the parent's inotify events (one shared instance) */
static void cache_prefork(void)
{
	pthread_mutex_lock(&cache_lock);
}

static void cache_postfork_parent(void)
{
	pthread_mutex_unlock(&cache_lock);
}

static void cache_postfork_child(void)
{
	struct perflib_cset *cs;

	if (watch.fd >= 0)
		close(watch.fd);
	watch.fd = -1;
	watch.nr = 0;
	for (cs = cache; cs; cs = cs->next)
		cs->checked = 0;
	pthread_mutex_unlock(&cache_lock);
}

static void cache_atfork(void)
{
	pthread_atfork(cache_prefork, cache_postfork_parent, cache_postfork_child);
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

/* a cached opening of @dir still known good without a stat(), with a reference, or NULL */
static struct perflib_cset *cache_fast(const char *dir)
{
	const char *root = perflib_root_path();
	struct perflib_cset *cs;
	bool watched;

	pthread_once(&cache_once, cache_atfork);
	pthread_mutex_lock(&cache_lock);
	watch_drain();
	watched = watch_root(root);
	for (cs = cache; cs && strcmp(cs->dir, dir); cs = cs->next)
		;
	if (cs && watched && coarse_ns() - cs->checked < RECHECK_NS) {
		cs->refs++;
		cs->last_use = ++cache_clock;
	} else {
		cs = NULL;
	}
	pthread_mutex_unlock(&cache_lock);
	return cs;
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
	cs = cache_fast(dir);
	if (cs) {
		*ret_cs = cs;
		return 0;
	}
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
				cs->checked = coarse_ns();
				pthread_mutex_unlock(&cache_lock);
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

/*
 * Owners across calls. Reading /proc/<pid>/stat costs microseconds, once per provider
 * process and call; a pidfd, opened once and checked against the owner's start time (so a
 * reused pid cannot pass), turns that into one poll(): a pidfd becomes readable when its
 * process exits. An owner found dead stays dead. Under cache_lock (fork handlers).
 */
static struct owner {
	uint64_t start;	   /* owner start time */
	uint64_t last_use; /* for eviction */
	uint32_t pid;	   /* 0 = empty entry */
	int fd;		   /* pidfd, -1 when dead */
} owners[OWNERS_MAX];

static bool pidfd_exited(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return poll(&p, 1, 0) != 0; /* readable, an error or a hang-up: gone */
}

static bool owner_check(uint32_t pid, uint64_t start)
{
	struct owner *o, *victim = &owners[0];
	int fd, alive_int;
	bool alive;

	pthread_mutex_lock(&cache_lock);
	for (o = owners; o < owners + OWNERS_MAX; o++) {
		if (o->pid == pid && o->start == start)
			break;
		if (o->last_use < victim->last_use)
			victim = o;
	}
	if (o < owners + OWNERS_MAX) {
		if (o->fd >= 0 && pidfd_exited(o->fd)) {
			close(o->fd);
			o->fd = -1;
		}
		o->last_use = ++cache_clock;
		alive = o->fd >= 0;
		pthread_mutex_unlock(&cache_lock);
		return alive;
	}
	/* first sight: a pidfd first, then the start time proves whose it is */
	fd = perflib_proc_pidfd(pid, start, &alive_int);
	alive = alive_int;
	if (fd < 0 && alive) {
		/* no pidfd (old kernel, no fds left): the answer holds for this call only */
		pthread_mutex_unlock(&cache_lock);
		return alive;
	}
	/* remembered: alive with its pidfd, or dead for good (a start time never returns) */
	if (victim->pid && victim->fd >= 0)
		close(victim->fd);
	if (!alive && fd >= 0) {
		close(fd);
		fd = -1;
	}
	victim->pid = pid;
	victim->start = start;
	victim->fd = alive ? fd : -1;
	victim->last_use = ++cache_clock;
	pthread_mutex_unlock(&cache_lock);
	return alive;
}

/* is (pid, start) a running process? Each distinct owner is looked up once per call. */
static bool owner_alive_lookup(struct perflib_alive *ac, uint32_t pid, uint64_t start)
{
	struct alive_entry e = {.start = start, .pid = pid};
	uint64_t now;
	size_t i;

	/* a slot handed to the kernel (kcounters): no owner process, alive (layout.h) */
	if (start == PERFLIB_OWNER_KERNEL)
		return true;
	if (pid == 0)
		return false;
	for (i = ac->cap ? alive_hash(pid, start, ac->cap) : 0; ac->cap && ac->tab[i].pid;
	     i = (i + 1) & (ac->cap - 1)) {
		if (ac->tab[i].pid == pid && ac->tab[i].start == start) {
			ac->last = ac->tab[i];
			return ac->last.alive;
		}
	}
	/* start 0: the owner could not read its start time; the pid alone decides */
	if (start)
		e.alive = owner_check(pid, start);
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

static inline bool owner_alive(struct perflib_alive *ac, uint32_t pid, uint64_t start)
{
	/* one provider owns most slots: the answer for the previous slot usually holds */
	if (pid && ac->last.pid == pid && ac->last.start == start)
		return ac->last.alive;
	return owner_alive_lookup(ac, pid, start);
}

/* ---- copying instances out of the slots ------------------------------------------------------ */

/*
 * The slot iterator: every slot that may hold a live instance, once. Mapped: the slots
 * whose live bit is set, segment by segment (a set that held many instances costs what
 * its live ones cost). Unmapped: every slot of the opened segments, read with two
 * successive batch copies of a chunk, @a to read from and @b to check the word against.
 */
struct reader {
	const struct perflib_cset *cs;
	const uint8_t *a, *b; /* slot `first` of each */
	uint32_t first, nr;   /* slots held */
	uint32_t slot_size;   /* info->slot_size */
	uint32_t name_offset; /* info->name_offset */
	uint8_t *copy[2];     /* unmapped: COPY_CHUNK slots each */
	uint32_t n_slots;     /* slots of the segments opened when the iteration began */
	uint32_t next;	      /* first slot not yet looked at */
	uint64_t bits;	      /* mapped: set bits of the live word not yet returned */
	uint32_t bits_base;   /* slot of bit 0 of bits */
};

static int reader_init(struct reader *r, const struct perflib_cset *cs)
{
	struct perflib_set_map *map = cs->map;
	size_t chunk = (size_t)COPY_CHUNK * map->info->slot_size;

	memset(r, 0, sizeof(*r));
	r->cs = cs;
	r->slot_size = map->info->slot_size;
	r->name_offset = map->info->name_offset;
	/* storage other processes added since the last call */
	perflib_set_refresh(map);
	r->n_slots = perflib_set_slots(map);
	if (map->data) {
		r->a = r->b = map->data;
		r->nr = r->n_slots;
		return 0;
	}
	r->copy[0] = malloc(chunk);
	r->copy[1] = malloc(chunk);
	return r->copy[0] && r->copy[1] ? 0 : -ENOMEM;
}

static void reader_fini(struct reader *r)
{
	free(r->copy[0]);
	free(r->copy[1]);
}

static inline const uint8_t *reader_slot(const struct reader *r, const uint8_t *base, uint32_t i)
{
	return base + (size_t)(i - r->first) * r->slot_size;
}

/* unmapped: copy the chunk of slots from r->next on (within its segment) */
static int reader_load(struct reader *r)
{
	const struct perflib_set_map *map = r->cs->map;
	uint32_t k = perflib_seg_of(r->next, map->seg0);
	uint32_t first = (uint32_t)perflib_seg_first(k, map->seg0);
	uint32_t end = first + (uint32_t)perflib_seg_slots(k, map->seg0);
	uint32_t n = end - r->next < COPY_CHUNK ? end - r->next : COPY_CHUNK;
	int fd = map->segs[k].data_fd, err;

	err = copy_entries(fd, r->next - first, n, r->slot_size, r->copy[0]);
	if (!err)
		err = copy_entries(fd, r->next - first, n, r->slot_size, r->copy[1]);
	if (err)
		return err;
	r->a = r->copy[0];
	r->b = r->copy[1];
	r->first = r->next;
	r->nr = n;
	return 0;
}

/* mapped: the next live word with a bit set; false at the end */
static bool reader_bits(struct reader *r)
{
	const struct perflib_set_map *map = r->cs->map;

	while (!r->bits) {
		uint32_t k, first, end, off, valid;

		if (r->next >= r->n_slots)
			return false;
		k = perflib_seg_of(r->next, map->seg0);
		first = (uint32_t)perflib_seg_first(k, map->seg0);
		end = first + (uint32_t)perflib_seg_slots(k, map->seg0);
		off = r->next - first;
		r->bits_base = r->next - off % 64;
		r->bits = __atomic_load_n(&map->segs[k].live[off / 64], __ATOMIC_ACQUIRE);
		valid = end - r->bits_base;
		if (valid < 64)
			r->bits &= (1ULL << valid) - 1;
		r->next = r->bits_base + 64 < end ? r->bits_base + 64 : end;
	}
	return true;
}

/*
 * reader_next - the next slot to look at, readable through reader_slot(); false at the
 * end or on an error (*err set). Starts loading the lines the slot after it needs.
 */
static inline bool reader_next(struct reader *r, uint32_t *ret_i, bool values, int *err)
{
	const uint8_t *p;
	uint32_t j;

	if (r->cs->map->data) {
		if (!reader_bits(r))
			return false;
		j = (uint32_t)__builtin_ctzll(r->bits);
		r->bits &= r->bits - 1;
		*ret_i = r->bits_base + j;
		/* the next live slot of this word: its memory comes in while this one is read */
		if (r->bits) {
			p = reader_slot(r, r->a, r->bits_base + (uint32_t)__builtin_ctzll(r->bits));
			__builtin_prefetch(p);
			__builtin_prefetch(p + r->name_offset);
			if (values)
				__builtin_prefetch(p + PERFLIB_COUNTERS_OFFSET);
		}
		return true;
	}
	if (r->next >= r->first + r->nr) {
		if (r->next >= r->n_slots)
			return false;
		*err = reader_load(r);
		if (*err)
			return false;
	}
	*ret_i = r->next++;
	return true;
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
 * read_slot - copy slot @i: its id, its name (with NUL) into @name (room for
 * round8(2 * name_max) bytes: the name is copied by 8-byte words), and when @vals is given its
 * values. True only for a consistent copy of a live instance whose owner runs.
 */
static inline __attribute__((always_inline)) bool read_slot(const struct reader *r, uint32_t i,
							    struct perflib_alive *ac, WCHAR *name,
							    uint64_t *vals, uint8_t *nodata,
							    struct slot_copy *ret)
{
	const struct perflib_cset *cs = r->cs;
	const struct perflib_info *info = cs->map->info;
	const uint8_t *slot = reader_slot(r, r->a, i), *again = reader_slot(r, r->b, i);
	const struct perflib_slot_hdr *h = (const void *)slot;
	const PERF_COUNTERSET_INSTANCE *blk = (const void *)(slot + PERFLIB_BLOCK_OFFSET);
	const WCHAR *src = (const WCHAR *)(slot + info->name_offset);
	uint64_t w = perflib_slot_word(slot), w2, start;
	uint32_t id;
	size_t len;
	int tries;

	for (tries = 0; tries < READ_RETRIES; tries++) {
		if (perflib_word_state(w) != PERFLIB_SLOT_LIVE)
			return false;
		start = __atomic_load_n(&h->owner_start, __ATOMIC_RELAXED);
		id = __atomic_load_n(&blk->InstanceId, __ATOMIC_RELAXED);
		/* bounded by the private info copy, whatever the slot holds; the NUL comes along */
		len = perflib_name_copy((uint8_t *)name, src, info->name_max);
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

/* pool units of a name of @len units: the NUL and padding to a whole 8-byte word */
static inline size_t pool_units(size_t len)
{
	return (len + 1 + 3) & ~(size_t)3;
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
	err = snap_reserve(snap, len + 4);
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
	/* the NUL, and zeros to the end of its 8-byte word (names are copied by words) */
	memset(snap->pool + snap->pool_len + len, 0, (pool_units(len) - len) * 2);
	snap->pool_len += pool_units(len);
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
	uint32_t i, n = cs->nr_counters;
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
	if (!err) {
		while (reader_next(&r, &i, values, &err)) {
			struct perflib_snap_inst *in;
			uint64_t *row = NULL;
			uint8_t *nd = NULL;

			if (perflib_word_state(perflib_slot_word(reader_slot(&r, r.a, i))) !=
			    PERFLIB_SLOT_LIVE)
				continue;
			err = snap_reserve(snap, pool_units(info->name_max));
			if (err)
				break;
			if (values) {
				row = snap->vals + snap->nr_rows * n;
				nd = snap->nodata + snap->nr_rows * n;
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
			snap->pool_len += pool_units(c.len);
			/* a single-instance set has one instance; more can only be garbage */
			if (cs->instance_type == PERF_COUNTERSET_SINGLE_INSTANCE)
				goto done;
		}
	}
done:
	/* without by-reference counters every value has data (read_values leaves the flags) */
	if (values && !cs->byref && snap->nr_rows)
		memset(snap->nodata, 0, snap->nr_rows * n);
	if (ac)
		reader_fini(&r);
	perflib_alive_free(ac);
	return err;
}

/* ---- instances straight into an output buffer ---------------------------------------- */

int perflib_obuf_direct(const struct perflib_cset *cs, const struct perflib_filter *f, int pos,
			struct perflib_obuf *o, uint32_t *ret_nr)
{
	const struct perflib_info *info = cs->map->info;
	bool values = pos != PERFLIB_NO_VALUES, aligned = !((uintptr_t)o->p & 7);
	bool hides = cs->instance_type == PERF_COUNTERSET_MULTI_AGGREGATE;
	size_t n = cs->nr_counters, name_room = perflib_round8(2 * (size_t)info->name_max);
	size_t max_block = sizeof(PERF_INSTANCE_HEADER) + name_room +
			   16 * (!values   ? 0
				 : pos < 0 ? n
					   : 1);
	uint32_t i, nr = 0;
	struct perflib_alive *ac;
	struct slot_copy c;
	struct reader r;
	uint64_t *vals;
	uint8_t *nodata, *scratch;
	int err;

	/* one instance's values and a name, reused: they stay in L1 */
	vals = malloc(n * (sizeof(*vals) + 1) + name_room);
	ac = perflib_alive_new();
	if (!vals || !ac) {
		free(vals);
		perflib_alive_free(ac);
		return -ENOMEM;
	}
	nodata = (uint8_t *)(vals + n);
	scratch = nodata + n;
	memset(nodata, 0, n); /* read_values sets the flags of by-reference counters only */
	err = reader_init(&r, cs);
	if (!err) {
		while (reader_next(&r, &i, values, &err)) {
			uint8_t *dst = NULL;
			WCHAR *name = (WCHAR *)scratch;
			size_t used, size;

			if (perflib_word_state(perflib_slot_word(reader_slot(&r, r.a, i))) !=
			    PERFLIB_SLOT_LIVE)
				continue;
			/* room for the largest block: the name goes in place at once */
			if (aligned && o->len <= o->cap && o->cap - o->len >= max_block) {
				dst = o->p + o->len;
				name = (WCHAR *)(dst + sizeof(PERF_INSTANCE_HEADER));
			}
			if (!read_slot(&r, i, ac, name, values ? vals : NULL, nodata, &c) ||
			    (f && !perflib_filter_match(f, c.id, name, c.len)) ||
			    (hides && perflib_aggregate_hides(cs->instance_type, name, c.len)))
				continue;
			if (dst) {
				PERF_INSTANCE_HEADER hdr = {.InstanceId = c.id};

				used = sizeof(hdr) + ((size_t)c.len + 1) * 2;
				size = perflib_round8(used);
				hdr.Size = (ULONG)size;
				memcpy(dst, &hdr, sizeof(hdr));
				perflib_zero_tail(dst, used, size);
				o->len += size;
			} else {
				perflib_obuf_instance(o, c.id, name, c.len);
			}
			if (values)
				perflib_obuf_values(o, cs, vals, nodata, pos);
			nr++;
			/* a single-instance set has one instance; more can only be garbage */
			if (cs->instance_type == PERF_COUNTERSET_SINGLE_INSTANCE)
				goto done;
		}
	}
done:
	reader_fini(&r);
	perflib_alive_free(ac);
	free(vals);
	*ret_nr = nr;
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
	if (nr)
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

/* instances as they stand in the slots (single, multiple, multiple + _Total) */
static int enum_direct(const struct perflib_cset *cs, struct perflib_obuf *o)
{
	uint32_t nr;
	int err;

	err = perflib_obuf_direct(cs, NULL, PERFLIB_NO_VALUES, o, &nr);
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
		perflib_obuf_snap_instance(o, &snap, &snap.inst[i]);
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

// SPDX-License-Identifier: MIT
/*
 * cset.c - counter-set handles: the counter sets a consumer reads, opened read-only once
 * per process and cached, with the per-position tables every read uses (value masks,
 * PERF_COUNTER_DATA sizes, by-reference flags, id lookups).
 *
 * Invariants:
 *  - maps are opened for reading and mapped PROT_READ: a consumer never writes;
 *  - an opening is used only while its pins are the files it opened (device and inode of
 *    ctl): a re-registration under the same GUID gets a new opening, the old one goes when
 *    its last user puts it;
 *  - the cache learns of new and removed counter sets from an inotify watch on the root,
 *    else from a stat() of the pins at least once a second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "consumer.h"
#include "ctrtype.h"

/*
 * Unused counter-set openings kept open: the CACHE_KEEP most recently used whatever they
 * map, and more, up to CACHE_KEEP_MAX, while all of them map at most CACHE_KEEP_BYTES of
 * slots (a consumer that goes over a few hundred small sets in turn finds each opened,
 * where an LRU of 64 opened every one of them again: 70 us a call instead of 0.6 us; one
 * set of 1,000,000 instances maps 224 MB, and page tables follow what is mapped).
 */
#define CACHE_KEEP 64
#define CACHE_KEEP_MAX 1024
#define CACHE_KEEP_BYTES (256ull << 20)
#define CACHE_BITS 8 /* the cache's hash by GUID: 256 buckets */
#define CACHE_BUCKETS (1u << CACHE_BITS)
#define OPEN_RETRIES 3 /* re-registrations raced while opening */
#define WATCH_MAX 4    /* pin roots watched with inotify */

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
/* every opening, by the hash of its GUID (cache_bucket), chained by cs->next */
static struct perflib_cset *cache_hash[CACHE_BUCKETS];
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

/*
 * One epoll instance holds what the cached facts of every read depend on: the root watch's
 * inotify fd (tag EV_ROOT) and the pidfd of each provider process liveness.c remembers
 * (tag EV_EXIT, one-shot: each exit is reported once and counted). A call on a cached
 * counter set waits on it once (perflib_cset_get), instead of a read() of the inotify fd
 * and a poll() per provider process. Under cache_lock; replaced in a forked child.
 */
enum { EV_ROOT, EV_EXIT };
static struct {
	int fd;			/* epoll instance, -1 = none (yet) */
	bool unavailable;	/* epoll_create1 failed: read and poll as before */
	_Atomic uint32_t gen;	/* +1 each time the instance is replaced (fork) */
	_Atomic uint64_t exits; /* provider exits it reported */
} ev = {.fd = -1};
static __thread bool ev_fresh; /* this thread's last perflib_cset_get waited on it */
static void cache_atfork(void);

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
	struct stat st;
	int err = perflib_store_pin_stat(dir, &st);

	if (err)
		return err;
	*ret_dev = st.st_dev;
	*ret_ino = st.st_ino;
	return 0;
}

static void cset_free(struct perflib_cset *cs)
{
	if (!cs)
		return;
	perflib_store_close(cs->map);
	free(cs->mask);
	free(cs->data_size);
	free(cs->rec_hdr);
	free(cs->is_ref);
	free(cs->pcpu_pos);
	free(cs->by_id);
	free(cs);
}

/* the cache's hash bucket of counter set @guid */
static struct perflib_cset **cache_bucket(const GUID *guid)
{
	return &cache_hash[perflib_bucket(perflib_guid_key(guid), CACHE_BITS)];
}

/* put @cs in the cache (cache lock held) */
static void cache_link(struct perflib_cset *cs)
{
	struct perflib_cset **bucket = cache_bucket(&cs->map->guid);

	cs->next = *bucket;
	*bucket = cs;
}

/*
 * take @cs, which @pp points to in its bucket, out of the cache: freed now if unused, else
 * at its last put (cache lock held)
 */
static void cache_unlink(struct perflib_cset **pp, struct perflib_cset *cs)
{
	*pp = cs->next;
	cs->stale = true;
	if (!cs->refs)
		cset_free(cs);
}

/* every opening in the cache: @cs (cache lock held; not for loops that take openings out) */
#define cache_for_each(cs)                                                                         \
	for (unsigned int b_ = 0; b_ < CACHE_BUCKETS; b_++)                                        \
		for ((cs) = cache_hash[b_]; (cs); (cs) = (cs)->next)

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* the per-position tables every read uses */
static int cset_tables(struct perflib_cset *cs)
{
	const struct perflib_info_counter *c = cs->map->counters;
	PERF_COUNTER_DATA rec = {.dwSize = 16};
	uint32_t n = cs->nr_counters, k;

	cs->mask = calloc(n, sizeof(*cs->mask));
	cs->data_size = calloc(n, sizeof(*cs->data_size));
	cs->rec_hdr = calloc(n, sizeof(*cs->rec_hdr));
	cs->is_ref = calloc(n, sizeof(*cs->is_ref));
	cs->by_id = calloc(n, sizeof(*cs->by_id));
	if (!cs->mask || !cs->data_size || !cs->rec_hdr || !cs->is_ref || !cs->by_id)
		return -ENOMEM;
	for (k = 0; k < n; k++) {
		switch (c[k].type & CTRTYPE_SIZE_MASK) {
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
		rec.dwDataSize = cs->data_size[k];
		memcpy(&cs->rec_hdr[k], &rec, sizeof(rec));
		cs->is_ref[k] = !!(c[k].attrib & PERF_ATTRIB_BY_REFERENCE);
		if (cs->is_ref[k])
			cs->byref = true;
		cs->by_id[k] = (uint64_t)c[k].id << 32 | k;
	}
	/* a by-reference counter without a ref area would be a corrupt registration */
	if (cs->byref && !cs->map->info->ref_offset)
		return -EBADMSG;
	/*
	 * per-CPU counters: numbered 1, 2, ... by position and their parts inside every class's
	 * slots, as perflib_info_check found the private copy of the info
	 */
	for (k = 0; k < n; k++)
		cs->nr_pcpu += !!c[k].pcpu;
	if (cs->nr_pcpu) {
		cs->pcpu_pos = calloc(cs->nr_pcpu, sizeof(*cs->pcpu_pos));
		if (!cs->pcpu_pos)
			return -ENOMEM;
		for (k = 0; k < n; k++) {
			if (c[k].pcpu)
				cs->pcpu_pos[c[k].pcpu - 1] = k;
		}
		cs->pcpu_lines = perflib_pcpu_lines(cs->nr_pcpu);
		cs->nr_cpus = cs->map->info->nr_cpus;
	}
	qsort(cs->by_id, n, sizeof(*cs->by_id), cmp_u64);
	return 0;
}

/* copy entries [first, first + n) of array map @fd (@value_size bytes each) into @buf */
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
		err = perflib_store_open(guid, false, &cs->map);
	/* the pins must still be those we identified: else a re-registration raced us */
	if (!err)
		err = pin_identity(dir, &dev2, &ino2);
	if (!err && (dev2 != cs->dev || ino2 != cs->ino))
		err = -EAGAIN;
	if (err == -ENOENT)
		err = -EAGAIN; /* removed meanwhile: the caller looks again */
	if (err)
		goto out;
	cs->checked = perflib_coarse_ns();
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
	struct perflib_store *map;
	int err;

	/* perflib_store_open tells a missing bpffs (and says how to mount it) from a missing set */
	err = perflib_store_open(guid, false, &map);
	if (!err) {
		perflib_store_close(map);
		return -EAGAIN; /* registered meanwhile */
	}
	return err == -ENOENT ? -ESRCH : err;
}

/* forget the openings of @dir, or of everything under @root when @dir is NULL (lock held) */
static void cache_invalidate(const char *dir, const char *root)
{
	struct perflib_cset **pp, *cs;
	size_t len = root ? strlen(root) : 0;

	for (unsigned int b = 0; b < CACHE_BUCKETS; b++) {
		for (pp = &cache_hash[b]; *pp;) {
			cs = *pp;
			if (dir ? strcmp(cs->dir, dir)
				: strncmp(cs->dir, root, len) || cs->dir[len] != '/') {
				pp = &cs->next;
				continue;
			}
			/* the opening goes when its last user is done */
			cache_unlink(pp, cs);
		}
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

/* no epoll instance from now on: read and poll as before (cache lock held) */
static void ev_disable(void)
{
	if (ev.fd >= 0)
		close(ev.fd);
	ev.fd = -1;
	ev.unavailable = true;
	atomic_fetch_add(&ev.gen, 1);
}

/* add @fd to the epoll instance with @tag (cache lock held) */
static bool ev_add(int fd, uint64_t tag)
{
	struct epoll_event e = {.events = EPOLLIN | (tag == EV_EXIT ? EPOLLONESHOT : 0),
				.data.u64 = tag};

	return ev.fd >= 0 && !epoll_ctl(ev.fd, EPOLL_CTL_ADD, fd, &e);
}

/* the epoll instance, made with the root watch's fd in it if need be (cache lock held) */
static bool ev_ready(void)
{
	if (ev.fd >= 0 || ev.unavailable)
		return ev.fd >= 0;
	ev.fd = epoll_create1(EPOLL_CLOEXEC);
	if (ev.fd < 0 || (watch.fd >= 0 && !ev_add(watch.fd, EV_ROOT))) {
		ev_disable();
		return false;
	}
	return true;
}

/*
 * what happened since the last call: one epoll_wait (root changes drained, exits counted);
 * true when it ran, false when there is no epoll instance (cache lock held)
 */
static bool ev_poll(void)
{
	struct epoll_event e[8];
	int n, i;

	if (ev.fd < 0)
		return false;
	do {
		n = epoll_wait(ev.fd, e, 8, 0);
		if (n < 0)
			return false;
		for (i = 0; i < n; i++) {
			if (e[i].data.u64 == EV_ROOT)
				watch_drain();
			else
				atomic_fetch_add(&ev.exits, 1);
		}
	} while (n == 8);
	return true;
}

bool perflib_watch_exit_add(int fd, uint32_t *ret_gen)
{
	bool ok;

	pthread_once(&cache_once, cache_atfork);
	pthread_mutex_lock(&cache_lock);
	*ret_gen = atomic_load(&ev.gen);
	ok = ev_ready() && ev_add(fd, EV_EXIT);
	pthread_mutex_unlock(&cache_lock);
	return ok;
}

void perflib_watch_init(void)
{
	pthread_once(&cache_once, cache_atfork);
}

uint64_t perflib_watch_exits(uint32_t *ret_gen)
{
	*ret_gen = atomic_load(&ev.gen);
	return atomic_load(&ev.exits);
}

bool perflib_watch_fresh(void)
{
	bool fresh = ev_fresh;

	ev_fresh = false;
	return fresh;
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
		/* the epoll instance must report root changes too, or not be used */
		if (ev.fd >= 0 && !ev_add(watch.fd, EV_ROOT))
			ev_disable();
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
	cache_for_each(cs) {
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
	/* the parent's epoll instance is shared with it: the child makes its own */
	if (ev.fd >= 0)
		close(ev.fd);
	ev.fd = -1;
	atomic_fetch_add(&ev.gen, 1);
	ev_fresh = false;
	cache_for_each(cs)
		cs->checked = 0;
	pthread_mutex_unlock(&cache_lock);
}

static void cache_atfork(void)
{
	pthread_atfork(cache_prefork, cache_postfork_parent, cache_postfork_child);
}

/* the bytes of slots opening @cs maps (unused: no other thread opens segments of it) */
static uint64_t cset_bytes(const struct perflib_cset *cs)
{
	const struct perflib_store *map = cs->map;
	uint64_t n = 0;

	for (uint32_t c = 0; c < map->nr_classes; c++)
		n += (uint64_t)perflib_store_slots(map, c) * map->cls[c].slot_size;
	return n;
}

/* drop the least recently used unused openings past what CACHE_KEEP* allow (lock held) */
static void cache_trim(void)
{
	struct perflib_cset **pp, **oldest;
	unsigned int unused;
	uint64_t bytes;

	for (;;) {
		unused = 0;
		bytes = 0;
		oldest = NULL;
		for (unsigned int b = 0; b < CACHE_BUCKETS; b++) {
			for (pp = &cache_hash[b]; *pp; pp = &(*pp)->next) {
				if ((*pp)->refs)
					continue;
				unused++;
				bytes += cset_bytes(*pp);
				if (!oldest || (*pp)->last_use < (*oldest)->last_use)
					oldest = pp;
			}
		}
		if (unused <= CACHE_KEEP || !oldest ||
		    (unused <= CACHE_KEEP_MAX && bytes <= CACHE_KEEP_BYTES))
			return;
		cache_unlink(oldest, *oldest);
	}
}

/* is @cs the opening of counter set @guid under @root (of @root_len bytes)? */
static bool cache_is(const struct perflib_cset *cs, const GUID *guid, const char *root,
		     size_t root_len)
{
	return !memcmp(&cs->map->guid, guid, sizeof(*guid)) && !strncmp(cs->dir, root, root_len) &&
	       cs->dir[root_len] == '/';
}

/*
 * a cached opening of counter set @guid under @root still known good without a stat(),
 * with a reference, or NULL (found by GUID: no path is formatted)
 */
static struct perflib_cset *cache_fast(const GUID *guid, const char *root)
{
	size_t root_len = strlen(root);
	struct perflib_cset *cs;
	bool watched;

	pthread_once(&cache_once, cache_atfork);
	pthread_mutex_lock(&cache_lock);
	ev_fresh = ev_ready() && ev_poll();
	if (!ev_fresh)
		watch_drain();
	watched = watch_root(root);
	for (cs = *cache_bucket(guid); cs && !cache_is(cs, guid, root, root_len); cs = cs->next)
		;
	if (cs && watched && perflib_coarse_ns() - cs->checked < PERFLIB_RECHECK_NS) {
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

	cs = cache_fast(guid, perflib_root_path());
	if (cs) {
		*ret_cs = cs;
		return 0;
	}
	if (perflib_store_dir(guid, dir, sizeof(dir)))
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
		for (pp = cache_bucket(guid); *pp;) {
			cs = *pp;
			if (strcmp(cs->dir, dir)) {
				pp = &cs->next;
				continue;
			}
			if (cs->dev == dev && cs->ino == ino) {
				cs->refs++;
				cs->last_use = ++cache_clock;
				cs->checked = perflib_coarse_ns();
				pthread_mutex_unlock(&cache_lock);
				*ret_cs = cs;
				return 0;
			}
			/* re-registered: the old opening goes when its last user is done */
			cache_unlink(pp, cs);
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
		cache_link(fresh);
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

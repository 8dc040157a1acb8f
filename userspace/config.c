// SPDX-License-Identifier: MIT
/*
 * config.c - the configuration of the store: the pin root (PERFLIB_ROOT or
 * perflib_set_pin_root) and a counter set's directory under it, the pin access defaults
 * (perflib_set_pin_access, PERFLIB_PIN_MODE, PERFLIB_PIN_GROUP) and the capacity and name
 * limits (perflib_set_capacity, PERFLIB_CAPACITY, PERFLIB_NAME_MAX), merged by
 * perflib_pin_defaults().
 */
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
static mode_t pin_mode; /* 0 = default */
static gid_t pin_gid = (gid_t)-1;
static bool access_set;
static unsigned int def_capacity, def_name_max;

/*
 * Pin roots are never rewritten in place: each root used is kept once, in a list that lives
 * as long as the process, so the string perflib_pin_root() or perflib_root_path() returned
 * stays valid and unchanged whatever another thread sets afterwards, until the library is
 * unloaded. The list grows with the distinct roots a process uses (tests use a few dozen),
 * never with the calls.
 */
#define ROOT_MAX (PATH_MAX / 2) /* bytes of a root, with the NUL */

struct root_name {
	struct root_name *next;
	char path[];
};

static struct root_name *roots; /* every root used so far (config_lock) */
static const char *root_set;	/* from perflib_set_pin_root, NULL: the environment */
static const char *root_env;	/* the last root taken from the environment */

/* the kept copy of @path's first @len bytes, NULL without memory (config_lock held) */
static const char *root_keep(const char *path, size_t len)
{
	struct root_name *r;

	for (r = roots; r; r = r->next)
		if (!strncmp(r->path, path, len) && !r->path[len])
			return r->path;
	r = malloc(sizeof(*r) + len + 1);
	if (!r)
		return NULL;
	memcpy(r->path, path, len);
	r->path[len] = 0;
	r->next = roots;
	roots = r;
	return r->path;
}

/*
 * The library is unloaded (dlclose) or the process exits: its code, and with it every string
 * it returned, is gone; the kept roots go back to the allocator (leak checkers see nothing).
 */
__attribute__((destructor)) static void roots_free(void)
{
	struct root_name *r, *next;

	pthread_mutex_lock(&config_lock);
	for (r = roots; r; r = next) {
		next = r->next;
		free(r);
	}
	roots = NULL;
	root_set = root_env = NULL;
	pthread_mutex_unlock(&config_lock);
}

/* a root the library takes: an absolute path shorter than ROOT_MAX */
static bool root_ok(const char *path)
{
	return path[0] == '/' && strlen(path) < ROOT_MAX;
}

/* @path's length without its trailing slashes, which would double up in joined paths */
static size_t root_len(const char *path)
{
	size_t len;

	for (len = strlen(path); len > 1 && path[len - 1] == '/'; len--)
		;
	return len;
}

int perflib_set_pin_root(const char *path)
{
	const char *kept = NULL;
	int err = 0;

	if (path && !root_ok(path))
		return -EINVAL;
	pthread_mutex_lock(&config_lock);
	if (path) {
		kept = root_keep(path, strlen(path));
		if (!kept)
			err = -ENOMEM;
	}
	if (!err)
		root_set = kept;
	pthread_mutex_unlock(&config_lock);
	return err;
}

const char *perflib_root_path(void)
{
	const char *env, *root;
	size_t len;

	pthread_mutex_lock(&config_lock);
	root = root_set;
	if (!root) {
		env = getenv("PERFLIB_ROOT");
		if (!env || !root_ok(env))
			env = PERFLIB_DEFAULT_ROOT;
		len = root_len(env);
		root = root_keep(env, len);
		if (root)
			root_env = root;
		else if (root_env)
			root = root_env; /* without memory: the environment's root as last seen */
		else
			root = PERFLIB_DEFAULT_ROOT;
	}
	pthread_mutex_unlock(&config_lock);
	return root;
}

const char *perflib_pin_root(void)
{
	return perflib_root_path();
}

int perflib_get_pin_root(char *buf, size_t size)
{
	const char *root;
	size_t len;

	if (!buf)
		return -EINVAL;
	root = perflib_root_path(); /* never changes once returned */
	len = strlen(root);
	if (len < size)
		memcpy(buf, root, len + 1);
	return len < size ? (int)len : -ENOSPC;
}

int perflib_set_pin_access(mode_t mode, gid_t gid)
{
	if (mode & ~0666)
		return -EINVAL;
	pthread_mutex_lock(&config_lock);
	pin_mode = mode;
	pin_gid = gid;
	access_set = true;
	pthread_mutex_unlock(&config_lock);
	return 0;
}

int perflib_set_capacity(unsigned int nr_slots, unsigned int name_max)
{
	if (nr_slots > PERFLIB_CAPACITY_MAX ||
	    (name_max && (name_max < 2 || name_max > PERF_MAX_INSTANCE_NAME + 1)))
		return -EINVAL;
	pthread_mutex_lock(&config_lock);
	if (nr_slots)
		def_capacity = nr_slots;
	if (name_max)
		def_name_max = name_max;
	pthread_mutex_unlock(&config_lock);
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
	pthread_mutex_lock(&config_lock);
	opts->mode = pin_mode;
	opts->gid = pin_gid;
	opts->capacity = def_capacity;
	opts->name_max = def_name_max;
	pthread_mutex_unlock(&config_lock);
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

int perflib_store_pin_stat(const char *dir, struct stat *st)
{
	char path[PATH_MAX + 8];

	snprintf(path, sizeof(path), "%s/info", dir);
	return stat(path, st) ? -errno : 0;
}

int perflib_root_dir(const char *root, const GUID *guid, char *buf, size_t size)
{
	char s[37];
	int n;

	if (!root)
		root = perflib_root_path();
	else if (!root_ok(root))
		return -EINVAL;
	n = snprintf(buf, size, "%.*s/%s", (int)root_len(root), root,
		     perflib_guid_to_string(guid, s));
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int perflib_store_dir(const GUID *guid, char *buf, size_t size)
{
	return perflib_root_dir(NULL, guid, buf, size);
}

// SPDX-License-Identifier: MIT
/*
 * pin.c - bpffs and libbpf at their lowest: pin and open one object, check a map's shape,
 * map a map shared, copy entries of an array, remove a directory of pins, libbpf's messages. Below every file that
 * keeps counter sets (store.c, segment.c, view.c, resize.c, reaper.c).
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "internal.h"

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

/*
 * shared mappings of a provider are not inherited: fork() copies no page tables of them.
 * @addr NULL: anywhere; else exactly there, over what is there (@replace: MAP_FIXED, a
 * reservation's own range) or never over anything (MAP_FIXED_NOREPLACE: EEXIST).
 */
int perflib_array_copy(int fd, uint32_t first, uint32_t n, uint32_t value_size, uint8_t *buf)
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

void *perflib_map_shared(void *addr, size_t len, bool writable, bool replace, int fd)
{
	return perflib_map_shared_at(addr, len, writable, replace, fd, 0);
}

void *perflib_map_shared_at(void *addr, size_t len, bool writable, bool replace, int fd, size_t off)
{
	int prot = PROT_READ | (writable ? PROT_WRITE : 0);
	int place = !addr ? 0 : replace ? MAP_FIXED : MAP_FIXED_NOREPLACE;
	void *p = mmap(addr, len, prot, MAP_SHARED | place, fd, (off_t)off);

	if (p == MAP_FAILED)
		return NULL;
	if (addr && p != addr) {
		/* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
		munmap(p, len);
		errno = EEXIST;
		return NULL;
	}
	if (writable)
		madvise(p, len, MADV_DONTFORK);
	return p;
}

int perflib_map_blank(void *addr, size_t len, bool writable)
{
	void *p = mmap(addr, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	if (writable)
		madvise(p, len, MADV_DONTFORK);
	return 0;
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

/* libbpf's messages go through the library's print hook, as debug output */
int perflib_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg;

	if (level == LIBBPF_DEBUG || vasprintf(&msg, fmt, ap) < 0)
		return 0;
	pr_debug("%s", msg); /* "libbpf: ..." */
	free(msg);
	return 0;
}

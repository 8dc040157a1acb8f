/* SPDX-License-Identifier: MIT */
/*
 * bench_util.h - what every bench program needs the same way: a monotonic clock in
 * nanoseconds, the min and median of a series of measurements, and removing a private
 * pin root (a bpffs directory tree) when done.
 */
#ifndef PERFLIB_BENCH_UTIL_H
#define PERFLIB_BENCH_UTIL_H

#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* the median of the @n values at @v (sorts them) */
static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static inline double min_of(const double *v, int n)
{
	double m = v[0];
	int i;

	for (i = 1; i < n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

/* remove @path and everything under it (pins, directories) */
static inline void remove_tree(const char *path)
{
	char child[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;

	if (lstat(path, &st))
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	d = opendir(path);
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    snprintf(child, sizeof(child), "%s/%s", path, de->d_name) >= (int)sizeof(child))
			continue;
		remove_tree(child);
	}
	if (d)
		closedir(d);
	rmdir(path);
}

#endif /* PERFLIB_BENCH_UTIL_H */

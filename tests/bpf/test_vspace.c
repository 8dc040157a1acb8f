// SPDX-License-Identifier: MIT
/*
 * test_vspace.c - the address space of counter sets (userspace/vspace.c): slot ranges from
 * perflib's region (never overlapping, given back and merged, never mapped over someone
 * else's mapping), reservations when the region is disabled, the process-wide tables
 * mapping (zeroed tables, reused, one mapping for all), a fork() child making its own; and
 * what that buys a provider: a set keeps 3 mappings and 2 file descriptors (fork() walks
 * both), with and without the region.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "testlib.h"
#include "internal.h"
#include "../helpers/prov_util.h"

#define REGION_LO 0x110000000000ULL
#define REGION_HI 0x2a0000000000ULL
#define MiB (1024UL * 1024)

static int nr_vmas(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n++;
	fclose(f);
	return n;
}

static int nr_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1; /* the directory's own */
}

/* the mapping at @addr in /proc/self/maps: its protection ("---p", "rw-s", ...) or "" */
static const char *prot_at(const void *addr)
{
	static char prot[8];
	unsigned long lo, hi;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	prot[0] = 0;
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, prot) == 3 && (unsigned long)addr >= lo &&
		    (unsigned long)addr < hi)
			break;
		prot[0] = 0;
	}
	fclose(f);
	return prot;
}

static void test_ranges(void **state)
{
	struct perflib_vspace a, b, c, d;

	(void)state;
	assert_int_equal(perflib_vspace_get(10 * MiB + 1, true, &a), 0);
	assert_false(a.reserved);
	assert_int_equal(a.len, 10 * MiB + 4096); /* whole pages */
	assert_true((uintptr_t)a.base >= REGION_LO && (uintptr_t)a.base + a.len <= REGION_HI);
	/* nothing is mapped for a range of the region: no mapping is made for it */
	assert_string_equal(prot_at(a.base), "");
	assert_int_equal(perflib_vspace_get(4 * MiB, true, &b), 0);
	assert_int_equal(perflib_vspace_get(4 * MiB, true, &c), 0);
	/* never overlapping */
	assert_true((uint8_t *)b.base >= (uint8_t *)a.base + a.len ||
		    (uint8_t *)b.base + b.len <= (uint8_t *)a.base);
	assert_true((uint8_t *)c.base >= (uint8_t *)b.base + b.len ||
		    (uint8_t *)c.base + c.len <= (uint8_t *)b.base);
	/* given back and merged: a, b and c make one range again, first fit finds it */
	void *first = a.base;

	assert_ptr_equal((uint8_t *)b.base, (uint8_t *)a.base + a.len);
	assert_ptr_equal((uint8_t *)c.base, (uint8_t *)b.base + b.len);
	perflib_vspace_put(&b);
	perflib_vspace_put(&a);
	perflib_vspace_put(&c);
	assert_null(a.base);
	perflib_vspace_put(&a); /* twice: nothing */
	assert_int_equal(perflib_vspace_get(18 * MiB + 4096, true, &d), 0);
	assert_ptr_equal(d.base, first);
	perflib_vspace_put(&d);
}

static void test_map_never_replaces(void **state)
{
	struct perflib_vspace v;
	uint64_t *p, *foreign;
	int fd;

	(void)state;
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "tvspace", 4, 8, 1024, &o); /* 2 pages */
	assert_true(fd >= 0);
	assert_int_equal(perflib_vspace_get(1 * MiB, true, &v), 0);
	p = perflib_vspace_map(&v, 4096, 8192, true, false, fd, 0);
	assert_ptr_equal(p, (uint8_t *)v.base + 4096);
	p[5] = 42;
	assert_string_equal(prot_at(p), "rw-s");
	/* someone else's mapping where a segment would go: refused, theirs left alone */
	foreign = mmap((uint8_t *)v.base + 65536, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	assert_ptr_equal(foreign, (uint8_t *)v.base + 65536);
	foreign[0] = 7;
	errno = 0;
	assert_null(perflib_vspace_map(&v, 65536 - 4096, 8192, true, false, fd, 0));
	assert_int_equal(errno, EEXIST);
	assert_int_equal(foreign[0], 7);
	/* outside the range: refused */
	errno = 0;
	assert_null(perflib_vspace_map(&v, v.len - 4096, 8192, true, false, fd, 0));
	assert_int_equal(errno, EINVAL);
	assert_null(perflib_vspace_map(&v, v.len + 4096, 4096, true, false, fd, 0));
	/* unmapped: the address is free again */
	perflib_vspace_unmap(&v, 4096, 8192);
	assert_string_equal(prot_at((uint8_t *)v.base + 4096), "");
	munmap(foreign, 4096);
	perflib_vspace_put(&v);
	close(fd);
}

static void test_reservation_when_disabled(void **state)
{
	struct perflib_vspace v;
	uint64_t *p;
	int fd;

	(void)state;
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "tvspace", 4, 8, 512, &o);
	assert_true(fd >= 0);
	setenv("PERFLIB_VSPACE", "0", 1);
	assert_int_equal(perflib_vspace_get(1 * MiB, true, &v), 0);
	unsetenv("PERFLIB_VSPACE");
	assert_true(v.reserved);
	assert_string_equal(prot_at(v.base), "---p");
	p = perflib_vspace_map(&v, 8192, 4096, true, false, fd, 0);
	assert_ptr_equal(p, (uint8_t *)v.base + 8192);
	p[0] = 1;
	/* unmapped: the hole is reserved again */
	perflib_vspace_unmap(&v, 8192, 4096);
	assert_string_equal(prot_at((uint8_t *)v.base + 8192), "---p");
	perflib_vspace_put(&v);
	assert_string_equal(prot_at(p), "");
	close(fd);
}

static void test_tables(void **state)
{
	uint8_t *t[16], *again;
	int before, i;

	(void)state;
	t[0] = perflib_table_alloc(3 * MiB);
	assert_non_null(t[0]);
	before = nr_vmas();
	for (i = 1; i < 16; i++) {
		t[i] = perflib_table_alloc(i * MiB + 1);
		assert_non_null(t[i]);
		assert_int_equal(t[i][0] | t[i][i * MiB], 0);
		memset(t[i], 0xa5, 4096);
		t[i][i * MiB] = 1;
	}
	/* one mapping holds them all */
	assert_int_equal(nr_vmas(), before);
	perflib_table_free(t[5], 5 * MiB + 1);
	again = perflib_table_alloc(5 * MiB);
	assert_ptr_equal(again, t[5]); /* reused, zeroed */
	for (i = 0; i < 4096; i++)
		assert_int_equal(again[i], 0);
	perflib_table_free(again, 5 * MiB);
	for (i = 0; i < 16; i++) {
		if (i != 5)
			perflib_table_free(t[i], i ? i * MiB + 1 : 3 * MiB);
	}
	perflib_table_free(NULL, 4096);
}

static int child_tables(void *arg)
{
	uint8_t *t;

	(void)arg;
	/* the parent's tables mapping is not inherited: the child makes its own */
	t = perflib_table_alloc(2 * MiB);
	if (!t || t[0] || t[2 * MiB - 1])
		return 1;
	memset(t, 1, 2 * MiB);
	perflib_table_free(t, 2 * MiB);
	return 0;
}

static void test_tables_after_fork(void **state)
{
	uint8_t *t = perflib_table_alloc(MiB);

	(void)state;
	assert_non_null(t);
	t[0] = 9;
	assert_int_equal(tl_wait(tl_fork(child_tables, NULL), 10000), 0);
	assert_int_equal(t[0], 9);
	perflib_table_free(t, MiB);
}

struct holder {
	GUID set;
	int n;
	int ready[2], go[2];
};

/* a provider holding h->n instances of h->set until told to go */
static int holder_main(void *p)
{
	struct holder *h = p;
	WCHAR name[32];
	HANDLE ph;
	int i;

	if (prov_std_provide(&h->set, &ph))
		return 2;
	for (i = 0; i < h->n; i++) {
		if (!PerfCreateInstance(ph, &h->set, prov_wname(name, 32, "held%d", i), (ULONG)i))
			return 3;
	}
	tl_signal(h->ready[1]);
	tl_await(h->go[0], 60000);
	return 0;
}

/* the chunks of its class 0 segments a provider has mapped, and all there are */
static void chunks_of(const struct perflib_store *map, uint32_t *ret_mapped, uint32_t *ret_all)
{
	uint32_t k, j;

	*ret_mapped = *ret_all = 0;
	for (k = 0; k < perflib_store_nr_segs(map, 0); k++) {
		const struct perflib_seg *s = perflib_seg_at(&map->cls[0], k);

		assert_non_null(s->chunks);
		*ret_all += s->nr_chunks;
		for (j = 0; j < s->nr_chunks; j++)
			*ret_mapped += (uint32_t)(s->chunks[j / 64] >> (j % 64) & 1);
	}
}

/*
 * A provider maps the chunks of a set's slots it claims in or reads, not the whole set:
 * beside another provider's 60,000 instances, one instance of its own maps one chunk or two
 */
static void test_provider_maps_chunks(void **state)
{
	struct holder h = {.set = prov_guid(), .n = 60000};
	struct perflib_provider *prov;
	struct perflib_ctrset *cs;
	PPERF_COUNTERSET_INSTANCE inst;
	uint32_t mapped, all, before;
	HANDLE ph;
	pid_t pid;
	int vmas;

	(void)state;
	assert_int_equal(tl_pipe(h.ready), 0);
	assert_int_equal(tl_pipe(h.go), 0);
	pid = tl_fork(holder_main, &h);
	assert_true(pid > 0);
	assert_int_equal(tl_await(h.ready[0], 120000), 0);
	assert_int_equal(prov_std_provide(&h.set, &ph), 0);
	prov = perflib_provider_get(ph);
	assert_non_null(prov);
	cs = perflib_ctrset_find(prov, &h.set);
	assert_non_null(cs);
	/* nothing of it mapped yet but the live bitmaps */
	chunks_of(cs->map, &mapped, &all);
	assert_true(all >= 6); /* 60,000 slots: several MB */
	assert_int_equal(mapped, 0);
	vmas = nr_vmas();
	inst = PerfCreateInstance(ph, &h.set, u"mine", 1);
	assert_non_null(inst);
	chunks_of(cs->map, &mapped, &all);
	assert_true(mapped >= 1 && mapped <= 2);
	assert_true(nr_vmas() - vmas <= 2);
	/* its block is there to write */
	*(ULONGLONG *)prov_slot(inst, 0) = 77;
	assert_int_equal(*(ULONGLONG *)prov_slot(inst, 0), 77);
	/* a name the other provider holds: its slot is read (mapped), the create refused */
	before = mapped;
	assert_null(PerfCreateInstance(ph, &h.set, u"held7", 7));
	chunks_of(cs->map, &mapped, &all);
	assert_true(mapped >= before && mapped <= before + 2);
	assert_true(mapped < all);
	assert_int_equal(PerfDeleteInstance(ph, inst), ERROR_SUCCESS);
	assert_int_equal(PerfStopProvider(ph), ERROR_SUCCESS);
	assert_int_equal(tl_signal(h.go[1]), 0);
	assert_int_equal(tl_wait(pid, 60000), 0);
	close(h.ready[0]);
	close(h.ready[1]);
	close(h.go[0]);
	close(h.go[1]);
}

#ifdef __SANITIZE_ADDRESS__
/* AddressSanitizer's allocator replaces glibc's: mallinfo2() says 0 there */
size_t __sanitizer_get_current_allocated_bytes(void);

static size_t heap_in_use(void)
{
	return __sanitizer_get_current_allocated_bytes();
}
#else
static size_t heap_in_use(void)
{
	return mallinfo2().uordblks;
}
#endif

/* mappings, fds and heap bytes a provider keeps per counter set: what every fork() walks */
static void provider_costs(int *ret_vmas, int *ret_fds, long *ret_heap)
{
	const int sets = 8;
	HANDLE h[8];
	GUID set[8];
	size_t m0;
	int v0, f0, i;

	/* a first set: the process-wide tables mapping exists from then on */
	assert_int_equal(prov_std_start(&h[0], &set[0]), 0);
	assert_non_null(PerfCreateInstance(h[0], &set[0], u"w", 0));
	v0 = nr_vmas();
	f0 = nr_fds();
	m0 = heap_in_use();
	for (i = 1; i < sets; i++) {
		assert_int_equal(prov_std_start(&h[i], &set[i]), 0);
		assert_non_null(PerfCreateInstance(h[i], &set[i], u"w", 0));
	}
	*ret_heap = ((long)heap_in_use() - (long)m0) / (sets - 1);
	*ret_vmas = (nr_vmas() - v0) / (sets - 1);
	*ret_fds = (nr_fds() - f0) / (sets - 1);
	for (i = 0; i < sets; i++) {
		assert_int_equal(PerfStopProvider(h[i]), 0);
		assert_int_equal(perflib_store_remove(&set[i]), 0);
	}
}

static void test_provider_mappings(void **state)
{
	int vmas, fds;
	long heap;

	(void)state;
	/*
	 * segment 0's slots and live bitmap: no reservation, no table of its own, and no
	 * mapping of procs
	 */
	provider_costs(&vmas, &fds, &heap);
	print_message("per set: %d mappings, %d fds, %ld bytes of heap\n", vmas, fds, heap);
	assert_true(vmas <= 2);
	/*
	 * the set's structures, the info copy, the provider's tables and one group of segment
	 * entries: 6.2 KB by glibc's count, 2.0 KB requested (AddressSanitizer's count); 9.6
	 * KB more while the entries were sized by the capacity (208 of 48 bytes for a default
	 * set), whatever of it a set used
	 */
	assert_true(heap > 0 && heap <= 8192);
	/*
	 * none: not info, outer maps, data, procs (opened again from its pin for the release),
	 * nor an index (layout version 10 kept segment 0's index map open: its table is in
	 * s0/live's mapping now)
	 */
	assert_int_equal(fds, 0);
	/* with the region disabled, a reservation per set: one mapping more at most */
	setenv("PERFLIB_VSPACE", "0", 1);
	provider_costs(&vmas, &fds, &heap);
	unsetenv("PERFLIB_VSPACE");
	print_message("per set without the region: %d mappings, %d fds\n", vmas, fds);
	assert_true(vmas <= 4 && vmas > 2);
	assert_true(fds <= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_map_never_replaces),
		cmocka_unit_test(test_reservation_when_disabled),
		cmocka_unit_test(test_tables),
		cmocka_unit_test(test_tables_after_fork),
		cmocka_unit_test(test_provider_mappings),
		cmocka_unit_test(test_provider_maps_chunks),
	};

	tl_require_bpf();
	return cmocka_run_group_tests(tests, tl_group_setup, tl_group_teardown);
}

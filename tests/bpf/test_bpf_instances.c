// SPDX-License-Identifier: MIT
/*
 * test_bpf_instances.c - instances created and deleted by BPF programs
 * (perflib_instance_create / perflib_instance_delete of perflib_bpf.h, through
 * tests/bpf/test_instances.bpf.c): the Windows block is the one PerfCreateInstance writes, the
 * instance is kernel-owned and visible to consumers, (name, id) is unique across BPF and
 * user-space providers in both directions (ASCII and UTF-16 names), delete frees and zeroes
 * the slot and its key so the storage is reused, a full set gives -ENOSPC, a long name
 * -EINVAL; the same from a tracing program (tp_btf) and, each on a real event, from an LSM
 * program (lsm/file_open; skipped where the kernel refuses LSM programs), a cgroup program
 * (cgroup/sock_create), a socket filter, tc (clsact ingress of a veth pair) and XDP
 * (generic mode, same veth) through tests/bpf/test_progtypes.bpf.c;
 * a program loaded before segments were given back and grown again creates in the new
 * storage; perflib_kernel_instances_delete takes BPF-created instances away; 250 load / create /
 * delete / unload cycles leave nothing (each load verifies about 85,000 instructions of
 * the create program: 0.3 s here).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <linux/if_link.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netpacket/packet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "internal.h"
#include "perflib_bpf_loader.h"
#include "perfbuf.h"
#include "test_instances.h"
#include "test_instances.skel.h"
#include "test_progtypes.skel.h"
#include "testlib.h"
#include "../helpers/cons_util.h"
#include "../helpers/prov_util.h"

#define E_EXIST (-17)
#define E_NOENT (-2)
#define E_NOSPC (-28)
#define E_INVAL (-22)

static void run(struct bpf_program *prog, struct ti_ctx *ctx)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = ctx, .ctx_size_in = sizeof(*ctx));

	assert_int_equal(bpf_prog_test_run_opts(bpf_program__fd(prog), &opts), 0);
}

/* the program on the pins of counter set @set, as the system provider's loader does it */
static struct test_instances_bpf *load_for(const GUID *set)
{
	struct perflib_bpf_counterset cs;
	struct test_instances_bpf *skel;
	char g[37];

	assert_int_equal(perflib_bpf_counterset_open(NULL, perflib_guid_to_string(set, g), &cs), 0);
	skel = test_instances_bpf__open();
	assert_non_null(skel);
	skel->rodata->ti_geo = cs.geo;
	assert_int_equal(perflib_bpf_counterset_guid(&cs, (__u8 *)skel->rodata->ti_guid), 0);
	assert_int_equal(perflib_bpf_counterset_reuse(&cs, skel->maps.slots, skel->maps.idx), 0);
	assert_int_equal(perflib_bpf_counterset_reuse_live(&cs, skel->maps.live), 0);
	assert_int_equal(test_instances_bpf__load(skel), 0);
	perflib_bpf_counterset_close(&cs);
	return skel;
}

static int64_t create_ascii(struct test_instances_bpf *skel, const char *name, uint32_t id,
			    uint32_t hint)
{
	struct ti_ctx ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.ascii = 1;
	strncpy(ctx.name8, name, sizeof(ctx.name8) - 1);
	ctx.id = id;
	ctx.hint = hint;
	run(skel->progs.ti_create, &ctx);
	return ctx.ret;
}

static int64_t create_utf16(struct test_instances_bpf *skel, const WCHAR *name, uint32_t id)
{
	struct ti_ctx ctx;
	size_t len = perflib_wcslen(name);

	memset(&ctx, 0, sizeof(ctx));
	assert_true(len <= TI_NAME_UNITS);
	memcpy(ctx.name16, name, len * 2);
	ctx.len = (uint32_t)len;
	ctx.id = id;
	run(skel->progs.ti_create, &ctx);
	return ctx.ret;
}

static int64_t delete_slot(struct test_instances_bpf *skel, uint32_t slot)
{
	struct ti_ctx ctx;

	memset(&ctx, 0, sizeof(ctx));
	ctx.slot = slot;
	run(skel->progs.ti_delete, &ctx);
	return ctx.ret;
}

/* consumers' view: is instance (@name, @id) listed by PerfEnumerateCounterSetInstances? */
struct find_ctx {
	const char *name;
	uint32_t id;
	int found;
};

static int find_cb(void *c, uint32_t id, const void *name, size_t units)
{
	struct find_ctx *f = c;
	char text[128];

	pdh_perfbuf_utf16_to_utf8(name, units, text, sizeof(text));
	if (id == f->id && !strcmp(text, f->name))
		f->found++;
	return 0;
}

static int listed(const GUID *set, const char *name, uint32_t id)
{
	struct find_ctx f = {.name = name, .id = id};
	static BYTE buf[1 << 16];
	DWORD size = 0;

	assert_int_equal(
		PerfEnumerateCounterSetInstances(NULL, set, (void *)buf, sizeof(buf), &size),
		ERROR_SUCCESS);
	assert_int_equal(pdh_perfbuf_instances_parse(buf, size, find_cb, &f), 0);
	return f.found;
}

/* every slot FREE and zero past its header, and the index empty */
static void assert_all_free(const GUID *set)
{
	struct perflib_store *m;
	uint64_t nb, *t, w;
	uint32_t i, j;

	assert_int_equal(perflib_store_open(set, false, &m), 0);
	for (i = 0; i < perflib_store_slots(m, 0); i++) {
		const uint8_t *s = perflib_slot(m, i);

		assert_int_equal(perflib_word_state(perflib_slot_word(s)), PERFLIB_SLOT_FREE);
		for (j = PERFLIB_BLOCK_OFFSET; j < m->info->slot_size; j++)
			assert_int_equal(s[j], 0);
	}
	/* no entry left in any leader's index table: a delete removes its own */
	for (i = 0; i < perflib_store_nr_segs(m, 0); i = perflib_idx_next(i)) {
		t = perflib_idx_table(m, 0, i, &nb);
		assert_non_null(t);
		for (w = 0; w < nb * PERFLIB_IDX_BUCKET; w++)
			assert_int_equal(t[w], 0);
	}
	perflib_store_close(m);
}

static void test_create_delete(void **state)
{
	struct test_instances_bpf *skel;
	struct perflib_store *m;
	PPERF_COUNTERSET_INSTANCE user, again;
	const PERF_COUNTERSET_INSTANCE *kb, *ub;
	const struct perflib_slot_hdr *hdr;
	int64_t s, s2, su;
	uint32_t j;
	uint64_t w;
	WCHAR wname[80];
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	skel = load_for(&set);
	user = PerfCreateInstance(h, &set, u"alphb", 6);
	assert_non_null(user);

	s = create_ascii(skel, "alpha", 5, 0);
	assert_true(s >= 0);
	assert_int_equal(listed(&set, "alpha", 5), 1);
	/* kernel-owned, and the Windows block of a user-space instance with as long a name */
	assert_int_equal(perflib_store_open(&set, false, &m), 0);
	w = perflib_slot_word(perflib_slot(m, (uint32_t)s));
	hdr = (const void *)perflib_slot(m, (uint32_t)s);
	assert_int_equal(perflib_word_state(w), PERFLIB_SLOT_LIVE);
	assert_int_equal(perflib_word_pid(w), 0);
	assert_true(hdr->owner_start == PERFLIB_OWNER_KERNEL);
	kb = (const void *)(perflib_slot(m, (uint32_t)s) + PERFLIB_BLOCK_OFFSET);
	ub = user;
	assert_memory_equal(&kb->CounterSetGuid, &set, sizeof(GUID));
	assert_int_equal(kb->dwSize, ub->dwSize);
	assert_int_equal(kb->InstanceNameOffset, ub->InstanceNameOffset);
	assert_int_equal(kb->InstanceNameSize, ub->InstanceNameSize);
	assert_int_equal(kb->InstanceId, 5);
	assert_memory_equal((const BYTE *)kb + kb->InstanceNameOffset, u"alpha", 12);
	assert_string_equal((const char *)perflib_slot(m, (uint32_t)s) + m->info->ascii_offset,
			    "alpha");
	perflib_store_close(m);

	/* (name, id) unique across BPF and user space, both ways */
	assert_int_equal(create_ascii(skel, "alpha", 5, 0), E_EXIST);
	assert_null(PerfCreateInstance(h, &set, u"alpha", 5));
	assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	assert_int_equal(create_ascii(skel, "alphb", 6, 0), E_EXIST);
	s2 = create_ascii(skel, "alpha", 7, 0); /* another id: another instance */
	assert_true(s2 >= 0 && s2 != s);
	/* a UTF-16 name: the BPF key is the library's */
	su = create_utf16(skel, u"\u017c\u00f3\u0142w \U0001D11E", 8);
	assert_true(su >= 0);
	assert_null(PerfCreateInstance(h, &set, u"\u017c\u00f3\u0142w \U0001D11E", 8));
	assert_int_equal(GetLastError(), ERROR_ALREADY_EXISTS);
	assert_int_equal(listed(&set, "\xc5\xbc\xc3\xb3\xc5\x82w \xf0\x9d\x84\x9e", 8), 1);
	/* a name longer than PERFLIB_BPF_CREATE_NAME_MAX */
	prov_wname(wname, 80, "%064d", 1);
	assert_int_equal(create_utf16(skel, wname, 9), E_INVAL);

	/* delete: gone for consumers, key free for anyone, slot zeroed and reused */
	assert_int_equal(delete_slot(skel, (uint32_t)s), 0);
	assert_int_equal(listed(&set, "alpha", 5), 0);
	assert_int_equal(delete_slot(skel, (uint32_t)s), E_NOENT);
	assert_int_equal(perflib_store_open(&set, false, &m), 0);
	assert_int_equal(perflib_word_state(perflib_slot_word(perflib_slot(m, (uint32_t)s))),
			 PERFLIB_SLOT_FREE);
	for (j = PERFLIB_BLOCK_OFFSET; j < m->info->slot_size; j++)
		assert_int_equal(perflib_slot(m, (uint32_t)s)[j], 0);
	perflib_store_close(m);
	again = PerfCreateInstance(h, &set, u"alpha", 5);
	assert_non_null(again);
	assert_int_equal(PerfDeleteInstance(h, again), ERROR_SUCCESS);
	assert_int_equal(create_ascii(skel, "alpha", 5, (uint32_t)s), s);
	/* a user-space provider's instance is not the kernel's to delete */
	assert_int_equal(PerfQueryInstance(h, &set, u"alphb", 6), user);

	/* the loader's cleanup takes every kernel-owned instance, BPF-created ones too */
	assert_int_equal(perflib_kernel_instances_delete(h, &set), 3);
	assert_int_equal(listed(&set, "alpha", 5), 0);
	assert_int_equal(listed(&set, "alphb", 6), 0); /* the provider's own went too */
	test_instances_bpf__destroy(skel);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_all_free(&set);
}

/* a full counter set: -ENOSPC, and the slot of a deleted instance is found again */
static void test_full(void **state)
{
	struct test_instances_bpf *skel;
	GUID pg = prov_provider_guid(), set = prov_guid();
	struct prov_tmpl t;
	int64_t s[4];
	char name[16];
	HANDLE h;
	int i;

	(void)state;
	assert_int_equal(perflib_set_capacity(4, 16), 0);
	prov_tmpl_std(&t, set, PERF_COUNTERSET_MULTI_INSTANCES);
	assert_int_equal(PerfStartProvider(&pg, NULL, &h), ERROR_SUCCESS);
	assert_int_equal(prov_tmpl_register(h, &t), ERROR_SUCCESS);
	assert_int_equal(perflib_set_capacity(PROV_CAPACITY_DEFAULT, 1025), 0);
	skel = load_for(&set);
	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "i%d", i);
		s[i] = create_ascii(skel, name, (uint32_t)i, 0);
		assert_true(s[i] >= 0);
	}
	assert_int_equal(create_ascii(skel, "one more", 9, 0), E_NOSPC);
	/* 15 units fit a name_max of 16, 16 do not */
	assert_int_equal(create_ascii(skel, "0123456789abcdef", 9, 0), E_INVAL);
	assert_int_equal(delete_slot(skel, (uint32_t)s[2]), 0);
	assert_int_equal(create_ascii(skel, "0123456789abcde", 9, 0), s[2]);
	assert_null(PerfCreateInstance(h, &set, u"user", 1));
	assert_int_equal(GetLastError(), ERROR_NOT_ENOUGH_MEMORY);
	assert_int_equal(perflib_kernel_instances_delete(h, &set), 4);
	test_instances_bpf__destroy(skel);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_all_free(&set);
}

/*
 * A program fills the storage the set has (-ENOSPC: it cannot grow it), its loader reserves
 * more (perflib_kernel_reserve), and the program creates and updates instances in the new
 * segment, seen by a consumer whose query was opened before the set grew.
 */
static void test_reserve(void **state)
{
	struct test_instances_bpf *skel;
	struct perflib_store *m;
	struct ti_ctx ctx;
	uint32_t seg0, i;
	int64_t s = -1;
	char name[16];
	HANDLE h, q;
	GUID set;
	int got;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	assert_int_equal(perflib_store_open(&set, false, &m), 0);
	seg0 = m->cls[0].seg0;
	assert_int_equal(perflib_store_nr_segs(m, 0), 1);
	perflib_store_close(m);
	assert_int_equal(PerfOpenQueryHandle(NULL, &q), ERROR_SUCCESS);
	skel = load_for(&set);
	for (i = 0; i < seg0; i++) {
		snprintf(name, sizeof(name), "k%u", i);
		assert_true(create_ascii(skel, name, i, 0) >= 0);
	}
	assert_int_equal(create_ascii(skel, "more", 1, 0), E_NOSPC);
	/* bad input, then room for twice segment 0 (segments 0 and 1: perflib_seg_first(2)) */
	assert_int_equal(perflib_kernel_reserve(NULL, &set, 1), -EINVAL);
	assert_int_equal(perflib_kernel_reserve(h, NULL, 1), -EINVAL);
	{
		GUID other = prov_guid();

		assert_int_equal(perflib_kernel_reserve(h, &other, 1), -ENOENT);
	}
	assert_int_equal(perflib_kernel_reserve(h, &set, seg0 + 1),
			 (int)perflib_seg_first(2, seg0));
	assert_int_equal(perflib_kernel_reserve(h, &set, 1), (int)perflib_seg_first(2, seg0));
	s = create_ascii(skel, "more", 1, 0);
	assert_true(s >= (int64_t)seg0);
	memset(&ctx, 0, sizeof(ctx));
	ctx.slot = (uint32_t)s;
	ctx.value = 41;
	run(skel->progs.ti_add, &ctx);
	assert_int_equal(ctx.ret, 0);
	run(skel->progs.ti_add, &ctx);
	ctx.value = 1;
	run(skel->progs.ti_add, &ctx);
	/* the consumer opened before the growth sees the instance and its value */
	assert_int_equal(listed(&set, "more", 1), 1);
	{
		const PERF_COUNTER_HEADER *ch;
		BYTE *buf;
		DWORD len;

		assert_int_equal(cons_add(q, &set, PROV_STD_DWORD, 1, "more"), ERROR_SUCCESS);
		assert_int_equal(cons_data(q, &buf, &len), ERROR_SUCCESS);
		ch = cons_header(buf, 0);
		assert_non_null(ch);
		assert_int_equal(ch->dwStatus, ERROR_SUCCESS);
		{
			struct cons_row rows[2];
			int nr, nc;

			/* a named instance of a multi-instance set: one PERF_MULTIPLE_INSTANCES row */
			assert_int_equal(cons_multi(ch, rows, 2, &nr, &nc), 0);
			assert_int_equal(nr, 1);
			assert_int_equal(rows[0].id, 1);
			got = (int)rows[0].v[0];
		}
		free(buf);
		assert_int_equal(got, 83);
	}
	assert_int_equal(PerfCloseQueryHandle(q), ERROR_SUCCESS);
	assert_int_equal(perflib_kernel_instances_delete(h, &set), (int)seg0 + 1);
	test_instances_bpf__destroy(skel);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_all_free(&set);
}

/*
 * Segments given back, then grown again: a program loaded before sees only the segments
 * there are (-ENOSPC past them) and creates and updates an instance in the new map of the
 * segment grown again, seen by consumers.
 */
static void test_after_shrink(void **state)
{
	static PPERF_COUNTERSET_INSTANCE u[4096];
	struct test_instances_bpf *skel;
	struct ti_ctx ctx;
	uint32_t seg0, i;
	WCHAR wname[16];
	char name[16];
	int64_t s;
	HANDLE h;
	GUID set;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	seg0 = tl_seg0(&set, 0);
	assert_true(seg0 > 0 && 2 * seg0 <= 4096);
	skel = load_for(&set);
	/* user-space instances grow segment 1 (seg0 slots too); all deleted, it is given back */
	for (i = 0; i < 2 * seg0; i++) {
		u[i] = PerfCreateInstance(h, &set, prov_wname(wname, 16, "u%u", i), 0);
		assert_non_null(u[i]);
	}
	assert_int_equal(tl_published_segs(&set, 0), 2);
	for (i = 0; i < 2 * seg0; i++)
		assert_int_equal(PerfDeleteInstance(h, u[i]), ERROR_SUCCESS);
	assert_int_equal(tl_published_segs(&set, 0), 1);
	/* the program fills segment 0 and finds no more */
	for (i = 0; i < seg0; i++) {
		snprintf(name, sizeof(name), "k%u", i);
		assert_true(create_ascii(skel, name, i, 0) >= 0);
	}
	assert_int_equal(create_ascii(skel, "more", 1, 0), E_NOSPC);
	/* a user-space create grows segment 1 anew: the program creates there */
	assert_non_null(PerfCreateInstance(h, &set, u"grow", 0));
	assert_int_equal(tl_published_segs(&set, 0), 2);
	s = create_ascii(skel, "more", 1, 0);
	assert_true(s >= (int64_t)seg0);
	memset(&ctx, 0, sizeof(ctx));
	ctx.slot = (uint32_t)s;
	ctx.value = 42;
	run(skel->progs.ti_add, &ctx);
	assert_int_equal(ctx.ret, 0);
	assert_int_equal(listed(&set, "more", 1), 1);
	assert_int_equal(perflib_kernel_instances_delete(h, &set), (int)seg0 + 1);
	test_instances_bpf__destroy(skel);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_all_free(&set);
}

/* a tracing program (tp_btf) creates and deletes instances on the events it sees */
static void test_tracing(void **state)
{
	struct test_instances_bpf *skel;
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	skel = load_for(&set);
	skel->bss->tp_id = 77;
	skel->bss->target_tgid = (uint32_t)getpid();
	assert_int_equal(test_instances_bpf__attach(skel), 0);
	syscall(SYS_getppid);
	assert_true(skel->data->tp_created >= 0);
	assert_int_equal(listed(&set, "tp", 77), 1);
	syscall(SYS_getpgrp);
	assert_int_equal(skel->data->tp_deleted, 0);
	assert_int_equal(listed(&set, "tp", 77), 0);
	skel->bss->target_tgid = 0;
	test_instances_bpf__destroy(skel);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_all_free(&set);
}

/* 250 kernel providers come and go, creating and deleting instances: nothing leaks */
static void test_cycles(void **state)
{
	struct test_instances_bpf *skel;
	char name[32];
	int64_t s[3];
	GUID set;
	HANDLE h;
	int n, i;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	for (n = 0; n < 250; n++) {
		skel = load_for(&set);
		for (i = 0; i < 3; i++) {
			snprintf(name, sizeof(name), "cycle %d", i);
			s[i] = create_ascii(skel, name, (uint32_t)n, (uint32_t)n);
			assert_true(s[i] >= 0);
		}
		assert_int_equal(delete_slot(skel, (uint32_t)s[1]), 0);
		test_instances_bpf__destroy(skel);
		/* the unloading loader removes what its programs left */
		assert_int_equal(perflib_kernel_instances_delete(h, &set), 2);
	}
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_all_free(&set);
}

/* ---- other program types (tests/bpf/test_progtypes.bpf.c), each loaded alone ----------------- */

enum { PT_LSM, PT_CGROUP, PT_SOCKET, PT_TC, PT_XDP };
#define PT_ID 900
#define PT_PORT 20550

static char pt_log[1 << 16];

/*
 * program @prog of test_progtypes only, on the pins of @set; the verifier's log on failure.
 * With @eperm_ok, a refusal with EPERM before the verifier ran (an empty log: this test
 * machine's kernel does it to every trampoline-based program, fentry/fexit and LSM) returns
 * NULL.
 */
static struct test_progtypes_bpf *pt_load_ex(const GUID *set, const char *prog, bool eperm_ok)
{
	struct perflib_bpf_counterset cs;
	struct test_progtypes_bpf *skel;
	struct bpf_program *p;
	char g[37];
	int err;

	assert_int_equal(perflib_bpf_counterset_open(NULL, perflib_guid_to_string(set, g), &cs), 0);
	skel = test_progtypes_bpf__open();
	assert_non_null(skel);
	bpf_object__for_each_program(p, skel->obj)
	{
		bpf_program__set_autoload(p, !strcmp(bpf_program__name(p), prog));
		if (!strcmp(bpf_program__name(p), prog))
			bpf_program__set_log_buf(p, pt_log, sizeof(pt_log));
	}
	skel->rodata->pt_geo = cs.geo;
	assert_int_equal(perflib_bpf_counterset_guid(&cs, (__u8 *)skel->rodata->pt_guid), 0);
	assert_int_equal(perflib_bpf_counterset_reuse(&cs, skel->maps.slots, skel->maps.idx), 0);
	assert_int_equal(perflib_bpf_counterset_reuse_live(&cs, skel->maps.live), 0);
	pt_log[0] = 0;
	err = test_progtypes_bpf__load(skel);
	if (err == -EPERM && !pt_log[0] && eperm_ok) {
		perflib_bpf_counterset_close(&cs);
		test_progtypes_bpf__destroy(skel);
		return NULL;
	}
	if (err) {
		size_t n = strlen(pt_log);

		fprintf(stderr, "%s refused (%d): ...%s\n", prog, err,
			pt_log + (n > 2000 ? n - 2000 : 0));
		fail_msg("the kernel refused %s", prog);
	}
	perflib_bpf_counterset_close(&cs);
	skel->bss->pt_id = PT_ID;
	return skel;
}

static struct test_progtypes_bpf *pt_load(const GUID *set, const char *prog)
{
	return pt_load_ex(set, prog, false);
}

static void pt_done(struct test_progtypes_bpf *skel, HANDLE h, const GUID *set)
{
	test_progtypes_bpf__destroy(skel);
	assert_int_equal(perflib_kernel_instances_delete(h, set), 0);
	assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
	assert_all_free(set);
}

static void touch_open(const char *path)
{
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	close(fd);
}

/* LSM: the file_open hook creates and deletes, on this process's opens of two files */
#define PT_TEMPLATE "/tmp/perflib-pt-XXXXXX"

/*
 * two new files: opening @a creates the instance, opening @b deletes it (their inodes in
 * the program's .bss); the program attached for this process
 */
static struct bpf_link *lsm_arm(struct test_progtypes_bpf *skel, char *a, char *b)
{
	struct bpf_link *link;
	struct stat st;
	int fa, fb;

	strcpy(a, PT_TEMPLATE);
	strcpy(b, PT_TEMPLATE);
	fa = mkstemp(a);
	fb = mkstemp(b);
	assert_true(fa >= 0 && fb >= 0);
	assert_int_equal(fstat(fa, &st), 0);
	skel->bss->create_ino = st.st_ino;
	assert_int_equal(fstat(fb, &st), 0);
	skel->bss->delete_ino = st.st_ino;
	close(fa);
	close(fb);
	skel->bss->target_tgid = (uint32_t)getpid();
	link = bpf_program__attach_lsm(skel->progs.pt_file_open);
	assert_non_null(link);
	return link;
}

static void test_lsm(void **state)
{
	char a[sizeof(PT_TEMPLATE)], b[sizeof(PT_TEMPLATE)];
	struct test_progtypes_bpf *skel;
	struct bpf_link *link;
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	skel = pt_load_ex(&set, "pt_file_open", true);
	if (!skel) {
		assert_int_equal(PerfStopProvider(h), ERROR_SUCCESS);
		fprintf(stderr,
			"the kernel refuses LSM programs with EPERM before verifying them\n");
		skip();
	}
	link = lsm_arm(skel, a, b);
	touch_open(a);
	assert_true(skel->data->created[PT_LSM] >= 0);
	assert_int_equal(listed(&set, "lsm", PT_ID + PT_LSM), 1);
	touch_open(a); /* a second create of the same name and id: refused */
	assert_int_equal(skel->data->created[PT_LSM], E_EXIST);
	skel->data->created[PT_LSM] = -1;
	assert_int_equal(listed(&set, "lsm", PT_ID + PT_LSM), 1);
	bpf_link__destroy(link);
	unlink(a);
	unlink(b);
	/* the loader's cleanup takes it */
	test_progtypes_bpf__destroy(skel);
	assert_int_equal(perflib_kernel_instances_delete(h, &set), 1);
	skel = pt_load(&set, "pt_file_open");
	link = lsm_arm(skel, a, b);
	touch_open(a);
	assert_true(skel->data->created[PT_LSM] >= 0);
	touch_open(b);
	assert_int_equal(skel->data->deleted[PT_LSM], 0);
	assert_int_equal(listed(&set, "lsm", PT_ID + PT_LSM), 0);
	bpf_link__destroy(link);
	unlink(a);
	unlink(b);
	pt_done(skel, h, &set);
}

/* the cgroup2 mount point into @buf, 0 or -1 */
static int cgroup2_root(char *buf, size_t size)
{
	char dev[256], dir[256], type[64];
	FILE *f = fopen("/proc/mounts", "r");
	int ret = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%255s %255s %63s %*[^\n]", dev, dir, type) == 3)
		if (!strcmp(type, "cgroup2")) {
			snprintf(buf, size, "%s", dir);
			ret = 0;
			break;
		}
	fclose(f);
	return ret;
}

/* a child joins cgroup @dir and creates a UDP socket of @family; its exit status */
static int sock_in_cgroup(const char *dir, int family)
{
	char path[512];
	pid_t pid;
	int st;

	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		FILE *f;
		int s;

		snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
		f = fopen(path, "w");
		if (!f || fprintf(f, "0\n") < 0 || fclose(f))
			_exit(2);
		s = socket(family, SOCK_DGRAM, 0);
		_exit(s < 0 ? 3 : 0);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

/* cgroup: sock_create on a cgroup of the test's creates (AF_INET) and deletes (AF_INET6) */
static void test_cgroup(void **state)
{
	struct test_progtypes_bpf *skel;
	struct bpf_link *link;
	char root[256], dir[512];
	GUID set;
	HANDLE h;
	int fd;

	(void)state;
	if (cgroup2_root(root, sizeof(root)))
		skip();
	snprintf(dir, sizeof(dir), "%s/perflib-pt-%d", root, (int)getpid());
	assert_int_equal(mkdir(dir, 0755), 0);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	skel = pt_load(&set, "pt_sock_create");
	link = bpf_program__attach_cgroup(skel->progs.pt_sock_create, fd);
	assert_non_null(link);
	assert_int_equal(sock_in_cgroup(dir, AF_INET), 0);
	assert_true(skel->data->created[PT_CGROUP] >= 0);
	assert_int_equal(listed(&set, "cgroup", PT_ID + PT_CGROUP), 1);
	/* a socket outside the cgroup: the program does not run */
	close(socket(AF_INET6, SOCK_DGRAM, 0));
	assert_int_equal(skel->data->deleted[PT_CGROUP], -1);
	assert_int_equal(sock_in_cgroup(dir, AF_INET6), 0);
	assert_int_equal(skel->data->deleted[PT_CGROUP], 0);
	assert_int_equal(listed(&set, "cgroup", PT_ID + PT_CGROUP), 0);
	bpf_link__destroy(link);
	close(fd);
	assert_int_equal(rmdir(dir), 0);
	pt_done(skel, h, &set);
}

/* socket filter: datagrams ending in 'c' / 'd' received on a filtered UDP socket */
static void test_socket_filter(void **state)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct test_progtypes_bpf *skel;
	socklen_t len = sizeof(sa);
	int rx, tx, pfd;
	char buf[8];
	GUID set;
	HANDLE h;

	(void)state;
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	skel = pt_load(&set, "pt_socket");
	rx = socket(AF_INET, SOCK_DGRAM, 0);
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(rx >= 0 && tx >= 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(rx, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(rx, (struct sockaddr *)&sa, &len), 0);
	pfd = bpf_program__fd(skel->progs.pt_socket);
	assert_int_equal(setsockopt(rx, SOL_SOCKET, SO_ATTACH_BPF, &pfd, sizeof(pfd)), 0);
	assert_int_equal(sendto(tx, "xc", 2, 0, (struct sockaddr *)&sa, sizeof(sa)), 2);
	assert_int_equal(recv(rx, buf, sizeof(buf), 0), 2);
	assert_true(skel->data->created[PT_SOCKET] >= 0);
	assert_int_equal(listed(&set, "socket", PT_ID + PT_SOCKET), 1);
	assert_int_equal(sendto(tx, "xd", 2, 0, (struct sockaddr *)&sa, sizeof(sa)), 2);
	assert_int_equal(recv(rx, buf, sizeof(buf), 0), 2);
	assert_int_equal(skel->data->deleted[PT_SOCKET], 0);
	assert_int_equal(listed(&set, "socket", PT_ID + PT_SOCKET), 0);
	close(rx);
	close(tx);
	pt_done(skel, h, &set);
}

/* an Ethernet + IPv4 + UDP frame to PT_PORT with payload @c, sent out of @ifindex */
static void send_frame(int ps, int ifindex, char c)
{
	unsigned char f[14 + 20 + 8 + 1] = {0};
	struct sockaddr_ll ll = {.sll_family = AF_PACKET, .sll_ifindex = ifindex, .sll_halen = 6};

	memset(f, 0xff, 6); /* broadcast */
	f[6] = 0x02;	    /* a local source address */
	f[12] = 0x08;	    /* IPv4 */
	f[14] = 0x45;
	f[14 + 3] = sizeof(f) - 14;
	f[14 + 8] = 64;
	f[14 + 9] = 17; /* UDP */
	f[34 + 2] = PT_PORT >> 8;
	f[34 + 3] = PT_PORT & 0xff;
	f[34 + 5] = 9;
	f[42] = (unsigned char)c;
	memset(ll.sll_addr, 0xff, 6);
	assert_int_equal(sendto(ps, f, sizeof(f), 0, (struct sockaddr *)&ll, sizeof(ll)),
			 (ssize_t)sizeof(f));
}

/* wait up to 2 s for *@v to leave @from */
static void wait_change(volatile __s64 *v, __s64 from)
{
	int i;

	for (i = 0; i < 200 && *v == from; i++)
		usleep(10000);
}

/* a veth pair @a - @b, up; 0 or -1 */
static int veth_add(char *a, char *b)
{
	char cmd[256];

	snprintf(a, IFNAMSIZ, "pt%da", (int)getpid() % 100000);
	snprintf(b, IFNAMSIZ, "pt%db", (int)getpid() % 100000);
	snprintf(cmd, sizeof(cmd),
		 "PATH=$PATH:/usr/sbin:/sbin; ip link add %s type veth peer name %s && "
		 "ip link set %s up && ip link set %s up",
		 a, b, a, b);
	return system(cmd) ? -1 : 0;
}

static void veth_del(const char *a)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "PATH=$PATH:/usr/sbin:/sbin; ip link del %s", a);
	assert_int_equal(system(cmd), 0);
}

/* frames sent into @ia create ('c') and delete ('d') instance @kind ("tc", "xdp") */
static void veth_round(struct test_progtypes_bpf *skel, const GUID *set, int ia, int kind,
		       const char *name)
{
	int ps = socket(AF_PACKET, SOCK_RAW, 0);

	assert_true(ps >= 0);
	send_frame(ps, ia, 'c');
	wait_change(&skel->data->created[kind], -1);
	assert_true(skel->data->created[kind] >= 0);
	assert_int_equal(listed(set, name, PT_ID + kind), 1);
	send_frame(ps, ia, 'd');
	wait_change(&skel->data->deleted[kind], -1);
	assert_int_equal(skel->data->deleted[kind], 0);
	assert_int_equal(listed(set, name, PT_ID + kind), 0);
	close(ps);
}

/* tc: a clsact ingress filter on one end of a veth pair sees frames sent into the other */
static void test_tc(void **state)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .attach_point = BPF_TC_INGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = 1, .priority = 1);
	struct test_progtypes_bpf *skel;
	char a[IFNAMSIZ], b[IFNAMSIZ];
	GUID set;
	HANDLE h;

	(void)state;
	if (veth_add(a, b))
		skip();
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	skel = pt_load(&set, "pt_tc");
	hook.ifindex = (int)if_nametoindex(b);
	opts.prog_fd = bpf_program__fd(skel->progs.pt_tc);
	assert_int_equal(bpf_tc_hook_create(&hook), 0);
	assert_int_equal(bpf_tc_attach(&hook, &opts), 0);
	veth_round(skel, &set, (int)if_nametoindex(a), PT_TC, "tc");
	opts.prog_fd = opts.flags = opts.prog_id = 0;
	assert_int_equal(bpf_tc_detach(&hook, &opts), 0);
	veth_del(a);
	pt_done(skel, h, &set);
}

/* XDP (generic mode) on one end of a veth pair sees frames sent into the other */
static void test_xdp(void **state)
{
	struct test_progtypes_bpf *skel;
	char a[IFNAMSIZ], b[IFNAMSIZ];
	GUID set;
	HANDLE h;
	int ib;

	(void)state;
	if (veth_add(a, b))
		skip();
	ib = (int)if_nametoindex(b);
	assert_int_equal(prov_std_start(&h, &set), ERROR_SUCCESS);
	skel = pt_load(&set, "pt_xdp");
	assert_int_equal(
		bpf_xdp_attach(ib, bpf_program__fd(skel->progs.pt_xdp), XDP_FLAGS_SKB_MODE, NULL),
		0);
	veth_round(skel, &set, (int)if_nametoindex(a), PT_XDP, "xdp");
	assert_int_equal(bpf_xdp_detach(ib, XDP_FLAGS_SKB_MODE, NULL), 0);
	veth_del(a);
	pt_done(skel, h, &set);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_create_delete), cmocka_unit_test(test_full),
		cmocka_unit_test(test_reserve),	      cmocka_unit_test(test_after_shrink),
		cmocka_unit_test(test_tracing),	      cmocka_unit_test(test_cycles),
		cmocka_unit_test(test_lsm),	      cmocka_unit_test(test_cgroup),
		cmocka_unit_test(test_socket_filter), cmocka_unit_test(test_tc),
		cmocka_unit_test(test_xdp),
	};

	tl_require_bpf();
	return cmocka_run_group_tests_name("bpf_instances", tests, tl_group_setup,
					   tl_group_teardown);
}

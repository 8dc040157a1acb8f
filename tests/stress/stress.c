// SPDX-License-Identifier: MIT
/*
 * stress.c - the reliability soak of issue 13, for a fixed count, with one summary:
 *
 *   kill soak      providers that start, create, set, delete and stop in a loop are
 *                  SIGKILLed at random moments (mid-create, mid-delete, mid-stop), with the
 *                  kernel's exit reaper on and with it off (PERFLIB_KERNEL_REAPER=0); once
 *                  they are all gone: ghosts (instances a consumer still lists), slots not
 *                  free, index keys and procs entries left; then again after a lazy reap
 *                  (perflib_reap_counterset);
 *   corruption     random bytes written into the data and index maps and procs entries of a counter
 *                  set a provider is using, while the consumer API, typeperf, the exporter
 *                  and bpftool read it: crashes (death by a signal) and hangs;
 *   claim/reap     many providers creating instances into a set full of dead owners' slots
 *                  while many processes reap it, then SIGKILLs: instances overwritten by
 *                  another process, reaps beyond the dead slots there were (one slot freed
 *                  twice), index keys left behind (a name that cannot be created again),
 *                  slots not free after the last reap, crashes;
 *   growth soak    providers that grow a set to several segments and delete everything (so
 *                  that segments are grown and retired all the time), two at once,
 *                  SIGKILLed at random moments (mid-grow, mid-retire, holding the set's
 *                  lock); then what they left, and one more provider that grows the set,
 *                  lists its instances and deletes them: no private directory of the dead
 *                  left, the set back to segment 0;
 *   grow/retire    a grower takes class 0 of a set of its own to segment 8 and empties it,
 *                  round after round (segments grown and retired all the time), while two
 *                  providers create and delete instances and a consumer lists them, each
 *                  in a process of its own (issue 29): creates that fail (by their
 *                  GetLastError), instances overwritten, wrong listings (a stable instance
 *                  missing, a name twice, a name no process created), crashes, hangs; then
 *                  nothing listed, the set back to segment 0, no private directory left.
 *
 * Uses only the public API (perflib.h, perflib-linux.h) and reads the pins the layout
 * describes (bpf/layout.h) to count what is left, so it keeps working whatever the
 * library does inside. Runs as root (it pins maps and attaches the exit reaper) in a
 * private pin root under /sys/fs/bpf, removed at the end.
 *
 *   stress [--kills N] [--corrupt N] [--race N] [--grow N] [--retire N] [--strict]
 *          [--tools DIR] [--bpftool PATH]
 *
 * Crashes are deaths by a signal the soak did not send; in sanitizer builds the children
 * abort on a report (ASAN_OPTIONS / UBSAN_OPTIONS abort_on_error=1), so a report counts.
 *
 * Exit: 0 when the gated figures are all 0, 1 otherwise, 77 when it cannot run here.
 * Without --strict, figures that depend on the slot protocol rework (issue 13 items 3
 * and 6: slots and keys left by the kernel reaper, overwritten instances, double reaps,
 * stale keys) are printed but do not fail; crashes, hangs and ghosts always do, and so does
 * every figure of the grow/retire race.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "layout.h"
#include "perflib.h"
#include "perflib-linux.h"

#define TIMEOUT_MS 20000
#define NR_COUNTERS 3

static char root[PATH_MAX];
static char tools[PATH_MAX];
static const char *bpftool = "/usr/sbin/bpftool";
static unsigned int seed;
static GUID provider_guid = {0x5a1e0b7e, 0x5757, 0x4d2c, {0x9a, 0x3b, 0, 0, 0, 0, 0, 0x57}};

static const struct perflib_counter_reg counters[NR_COUNTERS] = {
	{1, PERF_COUNTER_RAWCOUNT, 0, PERF_DETAIL_NOVICE, 0, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF,
	 0xFFFFFFFF, PERF_AGGREGATE_TOTAL, "Items", "Items"},
	{2, PERF_COUNTER_LARGE_RAWCOUNT, 0, PERF_DETAIL_NOVICE, 0, 0xFFFFFFFF, 0xFFFFFFFF,
	 0xFFFFFFFF, 0xFFFFFFFF, PERF_AGGREGATE_TOTAL, "Signature", "Owner signature"},
	{3, PERF_COUNTER_COUNTER, 0, PERF_DETAIL_NOVICE, 0, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF,
	 0xFFFFFFFF, PERF_AGGREGATE_TOTAL, "Ops/sec", "Operations"},
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint32_t rnd(void)
{
	return (uint32_t)rand_r(&seed);
}

static GUID set_guid(unsigned int n)
{
	GUID g = {0x5a1e0b7e, 0x5757, 0x4d2c, {0x9a, 0x3b, 0, 0, 0, 0, 0, 0}};

	g.Data4[6] = (unsigned char)(n >> 8);
	g.Data4[7] = (unsigned char)n;
	return g;
}

static void wname(WCHAR *dst, size_t units, const char *fmt, unsigned int a, unsigned int b)
{
	char tmp[64];

	snprintf(tmp, sizeof(tmp), fmt, a, b);
	perflib_utf8_to_utf16(tmp, dst, units);
}

/* register counter set @set named @name with @capacity slots (the kernel reaper per env) */
static int register_set(const GUID *set, const char *name, unsigned int capacity)
{
	struct perflib_counterset_reg reg;
	struct perflib_pin_opts opts = PERFLIB_PIN_OPTS_INIT;

	memset(&reg, 0, sizeof(reg));
	reg.provider_guid = provider_guid;
	reg.counterset_guid = *set;
	reg.instance_type = PERF_COUNTERSET_MULTI_INSTANCES;
	reg.provider_name = "stress";
	reg.name = name;
	reg.help = name;
	reg.nr_counters = NR_COUNTERS;
	reg.counters = counters;
	opts.mode = 0644;
	opts.capacity = capacity;
	opts.name_max = 33;
	return perflib_register_counterset(&reg, &opts);
}

/* start a provider of @set; NULL on failure */
static HANDLE provider(const GUID *set)
{
	struct {
		PERF_COUNTERSET_INFO set;
		PERF_COUNTER_INFO c[NR_COUNTERS];
	} t;
	HANDLE h;
	int i;

	memset(&t, 0, sizeof(t));
	t.set.CounterSetGuid = *set;
	t.set.ProviderGuid = provider_guid;
	t.set.NumCounters = NR_COUNTERS;
	t.set.InstanceType = PERF_COUNTERSET_MULTI_INSTANCES;
	for (i = 0; i < NR_COUNTERS; i++) {
		t.c[i].CounterId = counters[i].id;
		t.c[i].Type = counters[i].type;
		t.c[i].Size = (counters[i].type & 0x300) == PERF_SIZE_LARGE ? 8 : 4;
		t.c[i].DetailLevel = PERF_DETAIL_NOVICE;
	}
	if (PerfStartProvider(&provider_guid, NULL, &h))
		return NULL;
	if (PerfSetCounterSetInfo(h, &t.set, sizeof(t))) {
		PerfStopProvider(h);
		return NULL;
	}
	return h;
}

/* ---- what is left, read from the pins (layout.h) ------------------------------------------ */

struct left {
	unsigned int ghosts;  /* instances a consumer lists */
	unsigned int live;    /* slots LIVE */
	unsigned int claimed; /* slots CLAIMED */
	unsigned int keys;    /* index entries */
	unsigned int procs;   /* procs entries LIVE */
	unsigned int segs;    /* segments pinned, every size class */
};

static int pin_open(const GUID *set, const char *name)
{
	char path[PATH_MAX + 64], g[37];

	snprintf(path, sizeof(path), "%s/%s/%s", root, perflib_guid_to_string(set, g), name);
	return bpf_obj_get(path);
}

static uint32_t value_size(int fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.value_size;
}

static unsigned int listed(const GUID *set)
{
	DWORD need = 0, got = 0;
	BYTE *buf = NULL;
	unsigned int n = 0;
	ULONG st;
	size_t off;

	st = PerfEnumerateCounterSetInstances(NULL, set, NULL, 0, &need);
	if (st == ERROR_NOT_ENOUGH_MEMORY && need) {
		buf = malloc(need);
		if (buf && !PerfEnumerateCounterSetInstances(NULL, set, (PPERF_INSTANCE_HEADER)buf,
							     need, &got)) {
			for (off = 0; off + sizeof(PERF_INSTANCE_HEADER) <= got; n++) {
				ULONG size = ((PPERF_INSTANCE_HEADER)(buf + off))->Size;

				if (!size)
					break;
				off += size;
			}
		}
		free(buf);
	}
	return n;
}

/* entries of the map behind @fd */
static uint32_t max_entries(int fd)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return 0;
	return info.max_entries;
}

/* the info value of @set (malloc'd), or NULL */
static struct perflib_info *info_read(const GUID *set)
{
	int fd = pin_open(set, "info");
	uint32_t key = 0, vs = fd < 0 ? 0 : value_size(fd);
	struct perflib_info *info = vs >= sizeof(*info) ? malloc(vs) : NULL;

	if (info && bpf_map_lookup_elem(fd, &key, info)) {
		free(info);
		info = NULL;
	}
	if (fd >= 0)
		close(fd);
	return info;
}

/*
 * where the procs entries and segment 0's index table of @set are (layout.h: words of class
 * 0's s0/live, from its info): the first word and the number of entries, the first word of
 * the table and its words; 0 or -1
 */
static int procs_words(const GUID *set, uint32_t *first, uint32_t *nr, uint32_t *idx_first,
		       uint32_t *idx_nr)
{
	struct perflib_info *info = info_read(set);
	uint32_t seg0;

	if (!info)
		return -1;
	seg0 = info->classes[0].seg0_slots;
	*nr = info->nr_procs;
	*first = perflib_procs_word(seg0, info->nr_procs, 0);
	*idx_first = (uint32_t)perflib_idx_word(0, seg0, info->nr_procs);
	*idx_nr = (uint32_t)perflib_idx_words(0, seg0);
	free(info);
	return 0;
}

/* the word of slot @i of a class whose segments' data maps are @data, or 0 */
static __u64 slot_word_of(const int *data, uint32_t nr_segs, uint32_t seg0, uint32_t i,
			  uint8_t *val)
{
	uint32_t k = perflib_seg_of(i, seg0), off;

	if (k >= nr_segs)
		return 0;
	off = i - (uint32_t)perflib_seg_first(k, seg0);
	if (bpf_map_lookup_elem(data[k], &off, val))
		return 0;
	return *(__u64 *)val;
}

/* current entries in the index tables of a class (leaders' live maps @live, layout.h) */
static unsigned int count_entries(const struct perflib_info *info, uint32_t c, const int *data,
				  const int *live, uint32_t nr_segs, uint8_t *val)
{
	uint32_t seg0 = info->classes[c].seg0_slots, k, w, first;
	unsigned int n = 0;
	__u64 e;

	for (k = 0; k < nr_segs; k = perflib_idx_next(k)) {
		first = (uint32_t)perflib_idx_word(k, seg0, info->nr_procs);
		for (w = 0; w < perflib_idx_words(k, seg0); w++) {
			uint32_t key = first + w;

			if (bpf_map_lookup_elem(live[k], &key, &e) || !e)
				continue;
			n += perflib_idx_current(e, slot_word_of(data, nr_segs, seg0,
								 perflib_idx_entry_slot(e), val));
		}
	}
	return n;
}

/*
 * what is left in the set, read from the pins (layout.h): slot states in every segment
 * s<k>/data, current entries in the leaders' index tables (s<k>/live), live procs entries
 */
static int count_left(const GUID *set, struct left *l)
{
	int data[PERFLIB_MAX_SEGS], lives[PERFLIB_MAX_SEGS], live_fd, err = -1;
	uint32_t c, i, k, n, segs = 0, first, nr_procs, idx_first, idx_nr;
	struct perflib_info *info = info_read(set);
	uint8_t *val = NULL;
	char name[32];
	__u64 w;

	memset(l, 0, sizeof(*l));
	l->ghosts = listed(set);
	live_fd = pin_open(set, "s0/live");
	val = malloc(65536);
	if (live_fd < 0 || !val || !info ||
	    procs_words(set, &first, &nr_procs, &idx_first, &idx_nr))
		goto out;
	/* the procs entries: their first word is {state, gen} */
	for (i = 0; i < nr_procs; i++) {
		k = first + PERFLIB_PROC_WORDS * i;
		if (!bpf_map_lookup_elem(live_fd, &k, &w) &&
		    perflib_proc_word_state(w) == PERFLIB_PROC_LIVE)
			l->procs++;
	}
	/* every segment of every size class: s<k>/ for class 0, c<c>s<k>/ for the others */
	for (c = 0; c < PERFLIB_MAX_CLASSES && c < info->nr_classes; c++) {
		for (k = 0; k < PERFLIB_MAX_SEGS; k++) {
			if (c)
				snprintf(name, sizeof(name), "c%us%u/data", c, k);
			else
				snprintf(name, sizeof(name), "s%u/data", k);
			data[k] = pin_open(set, name);
			memcpy(name + strlen(name) - 4, "live", 5);
			lives[k] = pin_open(set, name);
			if (data[k] < 0 || lives[k] < 0 || value_size(data[k]) > 65536) {
				if (data[k] >= 0)
					close(data[k]);
				if (lives[k] >= 0)
					close(lives[k]);
				break; /* the class's last segment */
			}
			segs++;
			n = max_entries(data[k]);
			for (i = 0; i < n; i++) {
				if (bpf_map_lookup_elem(data[k], &i, val))
					continue;
				switch (((struct perflib_slot_hdr *)val)->seq &
					PERFLIB_SLOT_STATE_MASK) {
				case PERFLIB_SLOT_LIVE:
					l->live++;
					break;
				case PERFLIB_SLOT_CLAIMED:
					l->claimed++;
					break;
				}
			}
		}
		l->keys += count_entries(info, c, data, lives, k, val);
		while (k--) {
			close(data[k]);
			close(lives[k]);
		}
	}
	l->segs = segs;
	err = segs ? 0 : -1;
out:
	free(val);
	free(info);
	if (live_fd >= 0)
		close(live_fd);
	return err;
}

/* ---- children ---------------------------------------------------------------------------- */

/* wait for @pid at most @ms; its status, or -1 after killing it on timeout */
static int wait_child(pid_t pid, int ms, bool *ret_hung)
{
	uint64_t end = now_ms() + (uint64_t)ms;
	int st;

	*ret_hung = false;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);

		if (r == pid)
			return st;
		if (r < 0)
			return -1;
		if (now_ms() >= end) {
			*ret_hung = true;
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return st;
		}
		usleep(1000);
	}
}

/* a crash: death by a signal we did not send */
static bool crashed(int st, int sent)
{
	return WIFSIGNALED(st) && WTERMSIG(st) != sent;
}

/* SIGKILL @pid and reap it: a death by another signal, or none in time, counts in *@crashes */
static void kill_reap(pid_t pid, unsigned int *crashes)
{
	bool hung;
	int st;

	kill(pid, SIGKILL);
	st = wait_child(pid, TIMEOUT_MS, &hung);
	if (crashed(st, SIGKILL) || hung)
		(*crashes)++;
}

/* ---- kill soak --------------------------------------------------------------------------- */

/* a provider's life, over and over: start, create, set, delete, stop */
static void churn(const GUID *set, unsigned int k)
{
	PPERF_COUNTERSET_INSTANCE inst[8];
	WCHAR name[40];
	unsigned int round, j;
	HANDLE h;

	for (round = 0;; round++) {
		h = provider(set);
		if (!h)
			continue;
		for (j = 0; j < 8; j++) {
			wname(name, 40, "k%u-%u", k, j + 8 * (round & 1));
			inst[j] = PerfCreateInstance(h, set, name, j);
			if (inst[j])
				PerfSetULongLongCounterValue(h, inst[j], 2, k);
		}
		for (j = 0; j < 8; j += 2) {
			if (inst[j])
				PerfDeleteInstance(h, inst[j]);
		}
		PerfStopProvider(h);
	}
}

struct soak {
	struct left gone, reaped; /* after the kills; after a lazy reap */
	unsigned int crashes, errors;
};

static void kill_soak(unsigned int kills, bool reaper, unsigned int n, struct soak *s)
{
	GUID set = set_guid(n);
	unsigned int k;

	memset(s, 0, sizeof(*s));
	if (reaper)
		unsetenv("PERFLIB_KERNEL_REAPER");
	else
		setenv("PERFLIB_KERNEL_REAPER", "0", 1);
	if (register_set(&set, reaper ? "Stress Kill Reaper" : "Stress Kill Lazy", 1024)) {
		s->errors++;
		return;
	}
	for (k = 0; k < kills; k++) {
		pid_t pid = fork();

		if (pid < 0) {
			s->errors++;
			break;
		}
		if (!pid) {
			seed ^= (unsigned int)getpid();
			churn(&set, k);
			_exit(0);
		}
		/* 0 to 6 ms: start, creates, deletes and stop all get hit */
		usleep(rnd() % 6000);
		kill_reap(pid, &s->crashes);
	}
	count_left(&set, &s->gone);
	perflib_reap_counterset(&set);
	count_left(&set, &s->reaped);
	perflib_unregister_counterset(&set, true);
	unsetenv("PERFLIB_KERNEL_REAPER");
}

/* ---- growth soak ------------------------------------------------------------------------- */

#define GROW_INSTANCES 1000 /* per life: segments 0..2 or more of the soak's set */
#define GROW_PAIR 2	    /* processes living at once: growers and retirers race */

/* private directories (tmp-*) in the set's directory: growers and retirers killed midway */
static unsigned int tmp_dirs(const GUID *set)
{
	char dir[PATH_MAX + 64], g[37];
	unsigned int n = 0;
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", root, perflib_guid_to_string(set, g));
	d = opendir(dir);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, "tmp-", 4);
	closedir(d);
	return n;
}

/* a provider's life, over and over: start, grow the set by many creates, delete them all
 * (the set gives segments back), stop */
static void grow_churn(const GUID *set, unsigned int k)
{
	static PPERF_COUNTERSET_INSTANCE inst[GROW_INSTANCES];
	unsigned int round, j, n;
	WCHAR name[40];
	HANDLE h;

	for (round = 0;; round++) {
		h = provider(set);
		if (!h)
			continue;
		n = GROW_INSTANCES / 2 + rnd() % (GROW_INSTANCES / 2);
		for (j = 0; j < n; j++) {
			wname(name, 40, "g%u-%u", k, j);
			inst[j] = PerfCreateInstance(h, set, name, round);
			if (inst[j])
				PerfSetULongLongCounterValue(h, inst[j], 2, k);
		}
		for (j = 0; j < n; j++) {
			if (inst[j])
				PerfDeleteInstance(h, inst[j]);
		}
		PerfStopProvider(h);
	}
}

struct grow {
	struct left gone;  /* after the kills */
	struct left after; /* after one more provider grew and emptied the set */
	unsigned int kills, crashes, errors;
	unsigned int tmp_seen;	 /* private directories seen right after a kill, in all */
	unsigned int tmp_gone;	 /* private directories then */
	unsigned int tmp_after;	 /* and after one more provider grew and emptied the set */
	unsigned int wrong_list; /* that provider's instances a consumer did not list right */
};

/*
 * Providers that grow the set to several segments and delete everything (so that segments
 * are grown and retired all the time), GROW_PAIR at once, SIGKILLed at random moments
 * (mid-grow, mid-retire: each holds the set's lock for tens of ms), the kernel's exit reaper
 * on. Then: what they left; and one more provider that grows the set, checks that a
 * consumer lists exactly its instances, deletes them all: no private directory left, the
 * set back to segment 0.
 */
static void grow_soak(unsigned int kills, unsigned int n, struct grow *g)
{
	GUID set = set_guid(n);
	pid_t pids[GROW_PAIR] = {0};
	unsigned int k, j, i;
	WCHAR name[40];
	HANDLE h;

	memset(g, 0, sizeof(*g));
	g->kills = kills;
	unsetenv("PERFLIB_KERNEL_REAPER");
	if (register_set(&set, "Stress Grow", 1u << 20)) {
		g->errors++;
		return;
	}
	for (k = 0; k < kills; k++) {
		j = k % GROW_PAIR;
		if (pids[j]) {
			kill_reap(pids[j], &g->crashes);
			/* killed holding the lock with a directory of its own: the window is hit */
			g->tmp_seen += tmp_dirs(&set);
		}
		pids[j] = fork();
		if (pids[j] < 0) {
			pids[j] = 0;
			g->errors++;
			break;
		}
		if (!pids[j]) {
			seed ^= (unsigned int)getpid();
			grow_churn(&set, k);
			_exit(0);
		}
		/* 0 to 400 ms: creates, growths, deletes, retirements and stops all get hit */
		usleep(rnd() % 400000);
	}
	for (j = 0; j < GROW_PAIR; j++) {
		if (pids[j])
			kill_reap(pids[j], &g->crashes);
	}
	count_left(&set, &g->gone);
	g->tmp_gone = tmp_dirs(&set);
	/* one more life, watched: its start gives back what the reaper emptied */
	h = provider(&set);
	if (!h) {
		g->errors++;
	} else {
		static PPERF_COUNTERSET_INSTANCE inst[GROW_INSTANCES];

		for (i = 0; i < GROW_INSTANCES; i++) {
			wname(name, 40, "final-%u-%u", i, 0);
			inst[i] = PerfCreateInstance(h, &set, name, i);
			if (!inst[i])
				g->errors++;
		}
		if (listed(&set) != GROW_INSTANCES)
			g->wrong_list++;
		for (i = 0; i < GROW_INSTANCES; i++) {
			if (inst[i] && PerfDeleteInstance(h, inst[i]))
				g->errors++;
		}
		if (listed(&set))
			g->wrong_list++;
		PerfStopProvider(h);
	}
	g->tmp_after = tmp_dirs(&set);
	count_left(&set, &g->after);
	perflib_unregister_counterset(&set, true);
}

/* ---- corruption -------------------------------------------------------------------------- */

/* random bytes in one of entries [@first, @first + @nr) of array @fd */
static void corrupt_array(int fd, uint32_t first, uint32_t nr)
{
	uint32_t vs = value_size(fd), i, k, n;
	uint8_t *v;

	if (!vs || !nr)
		return;
	v = malloc(vs);
	if (!v)
		return;
	i = first + rnd() % nr;
	if (!bpf_map_lookup_elem(fd, &i, v)) {
		n = 1 + rnd() % 16;
		for (k = 0; k < n; k++) {
			/* mostly the header and the first counters, sometimes anywhere */
			uint32_t off = rnd() % 4 ? rnd() % (vs < 128 ? vs : 128) : rnd() % vs;

			v[off] = (uint8_t)rnd();
		}
		bpf_map_update_elem(fd, &i, v, BPF_EXIST);
	}
	free(v);
}

/* run @argv with stdout and stderr to /dev/null; crash / hang counted */
static void run_reader(char *const argv[], unsigned int *crashes, unsigned int *hangs)
{
	bool hung;
	pid_t pid;
	int st;

	pid = fork();
	if (pid < 0)
		return;
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	st = wait_child(pid, TIMEOUT_MS, &hung);
	if (hung)
		(*hangs)++;
	else if (crashed(st, 0))
		(*crashes)++;
}

/* the consumer API, in a child: enumerate, add every counter of every instance, query */
static int api_reader(const GUID *set)
{
	struct {
		PERF_COUNTER_IDENTIFIER id;
		WCHAR name[4];
	} spec;
	DWORD need = 0;
	HANDLE q;
	BYTE *buf;
	int i;

	listed(set);
	if (PerfOpenQueryHandle(NULL, &q))
		return 1;
	memset(&spec, 0, sizeof(spec));
	spec.id.CounterSetGuid = *set;
	spec.id.Size = sizeof(spec);
	spec.id.CounterId = PERF_WILDCARD_COUNTER;
	spec.id.InstanceId = PERF_WILDCARD_COUNTER;
	spec.name[0] = '*';
	PerfAddCounters(q, &spec.id, sizeof(spec));
	for (i = 0; i < 3; i++) {
		need = 0;
		if (PerfQueryCounterData(q, NULL, 0, &need) == ERROR_NOT_ENOUGH_MEMORY && need) {
			buf = malloc(need);
			if (buf)
				PerfQueryCounterData(q, (PPERF_DATA_HEADER)buf, need, &need);
			free(buf);
		}
	}
	PerfCloseQueryHandle(q);
	return 0;
}

struct corrupt {
	unsigned int rounds, crashes, hangs, errors;
	unsigned int by_api, by_typeperf, by_exporter, by_bpftool, by_provider;
};

static void corruption(unsigned int rounds, unsigned int n, struct corrupt *c)
{
	char typeperf[PATH_MAX + 16], exporter[PATH_MAX + 24], dir[PATH_MAX + 64], g[37];
	char data[PATH_MAX + 80], index[PATH_MAX + 80], procs[PATH_MAX + 80];
	GUID set = set_guid(n);
	uint32_t procs_first = 0, procs_nr = 0, idx_first = 0, idx_nr = 0;
	int fds[3], stop[2];
	unsigned int r, i, before;
	bool hung;
	pid_t prov;
	int st;

	memset(c, 0, sizeof(*c));
	if (register_set(&set, "Stress Corrupt", 64) || pipe(stop)) {
		c->errors++;
		return;
	}
	/* a provider using the set all along: 8 instances, values changing */
	prov = fork();
	if (prov < 0) {
		c->errors++;
		return;
	}
	if (!prov) {
		PPERF_COUNTERSET_INSTANCE inst[8];
		struct pollfd p = {.fd = stop[0], .events = POLLIN};
		WCHAR name[40];
		HANDLE h = provider(&set);

		close(stop[1]);
		if (!h)
			_exit(2);
		for (i = 0; i < 8; i++) {
			wname(name, 40, "c%u-%u", 0, i);
			inst[i] = PerfCreateInstance(h, &set, name, i);
		}
		while (poll(&p, 1, 1) == 0) {
			for (i = 0; i < 8; i++) {
				if (inst[i])
					PerfIncrementULongCounterValue(h, inst[i], 1, 1);
			}
		}
		PerfStopProvider(h);
		_exit(0);
	}
	close(stop[0]);
	usleep(100000);
	snprintf(typeperf, sizeof(typeperf), "%s/typeperf", tools);
	snprintf(exporter, sizeof(exporter), "%s/perflib-exporter", tools);
	snprintf(dir, sizeof(dir), "%s/%s", root, perflib_guid_to_string(&set, g));
	/* segment 0's slots and index table (in s0/live; the set never grows here) */
	snprintf(data, sizeof(data), "%s/s0/data", dir);
	snprintf(index, sizeof(index), "%s/s0/live", dir);
	/* the procs entries, words of s0/live */
	snprintf(procs, sizeof(procs), "%s/s0/live", dir);
	if (procs_words(&set, &procs_first, &procs_nr, &idx_first, &idx_nr))
		procs_nr = idx_nr = 0;
	fds[0] = bpf_obj_get(data);
	fds[1] = bpf_obj_get(index);
	fds[2] = bpf_obj_get(procs);
	for (r = 0; r < rounds && fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0; r++) {
		char *tp_q[] = {typeperf, "-qx", NULL};
		char *tp[] = {typeperf, "\\Stress Corrupt(*)\\*", "-sc", "1", NULL};
		char *ex[] = {exporter, "--once", NULL};
		char *bt_data[] = {(char *)bpftool, "map", "dump", "pinned", data, NULL};
		char *bt_index[] = {(char *)bpftool, "map", "dump", "pinned", index, NULL};
		char *bt_procs[] = {(char *)bpftool, "map", "dump", "pinned", procs, NULL};
		pid_t pid;

		for (i = 0; i < 1 + rnd() % 4; i++) {
			switch (rnd() % 3) {
			case 0:
				corrupt_array(fds[0], 0, 64);
				break;
			case 1:
				corrupt_array(fds[1], idx_first, idx_nr);
				break;
			default:
				corrupt_array(fds[2], procs_first, procs_nr * PERFLIB_PROC_WORDS);
				break;
			}
		}
		before = c->crashes + c->hangs;
		pid = fork();
		if (!pid)
			_exit(api_reader(&set));
		if (pid > 0) {
			st = wait_child(pid, TIMEOUT_MS, &hung);
			c->hangs += hung;
			c->crashes += !hung && crashed(st, 0);
		}
		c->by_api += c->crashes + c->hangs - before;
		before = c->crashes + c->hangs;
		run_reader(tp_q, &c->crashes, &c->hangs);
		run_reader(tp, &c->crashes, &c->hangs);
		c->by_typeperf += c->crashes + c->hangs - before;
		before = c->crashes + c->hangs;
		run_reader(ex, &c->crashes, &c->hangs);
		c->by_exporter += c->crashes + c->hangs - before;
		before = c->crashes + c->hangs;
		run_reader(bt_data, &c->crashes, &c->hangs);
		run_reader(bt_index, &c->crashes, &c->hangs);
		run_reader(bt_procs, &c->crashes, &c->hangs);
		c->by_bpftool += c->crashes + c->hangs - before;
		c->rounds++;
	}
	for (i = 0; i < 3; i++) {
		if (fds[i] >= 0)
			close(fds[i]);
	}
	close(stop[1]);
	st = wait_child(prov, TIMEOUT_MS, &hung);
	if (hung || crashed(st, 0)) {
		c->crashes += !hung;
		c->hangs += hung;
		c->by_provider++;
	}
	perflib_unregister_counterset(&set, true);
}

/* ---- claim / reap race -------------------------------------------------------------------- */

#define RACE_CAPACITY 64
#define RACE_DEAD 60 /* dead owners' slots at the start of a round: fewer free than wanted */
#define RACE_PROVIDERS 4
#define RACE_INSTANCES 5 /* per provider */
#define RACE_REAPERS 6

struct race {
	unsigned int rounds, overwritten, double_reaps, stale_keys, keys_left, not_free;
	unsigned int crashes, errors;
};

/* a provider of the race: create, sign, check its signatures; exit code = overwritten */
static int race_provider(const GUID *set, unsigned int round, unsigned int p, int go, int hold)
{
	PPERF_COUNTERSET_INSTANCE inst[RACE_INSTANCES];
	uint64_t sig = (uint64_t)getpid() << 20;
	unsigned int j, bad = 0, spin;
	WCHAR name[40];
	char b;
	HANDLE h = provider(set);

	if (!h || read(go, &b, 1) != 1)
		return 100;
	for (j = 0; j < RACE_INSTANCES; j++) {
		wname(name, 40, "r%u-%u", round, p * RACE_INSTANCES + j);
		inst[j] = PerfCreateInstance(h, set, name, j);
		if (inst[j])
			PerfSetULongLongCounterValue(h, inst[j], 2, sig + j);
	}
	/* the reapers are busy meanwhile; then every instance must still be ours */
	for (spin = 0; spin < 20; spin++) {
		usleep(1000);
		for (j = 0; j < RACE_INSTANCES; j++) {
			ULONGLONG *v;

			if (!inst[j])
				continue;
			v = (ULONGLONG *)((BYTE *)inst[j] + sizeof(PERF_COUNTERSET_INSTANCE) + 8);
			if (__atomic_load_n(v, __ATOMIC_RELAXED) != sig + j ||
			    inst[j]->InstanceId != j) {
				bad++;
				inst[j] = NULL;
			}
		}
	}
	/* alive until the reapers are done: what they reap must be what was dead before */
	while (read(hold, &b, 1) > 0)
		;
	return (int)bad;
}

static void race_round(const GUID *set, unsigned int round, struct race *r)
{
	pid_t provs[RACE_PROVIDERS], reapers[RACE_REAPERS], pid;
	int go[2], sums[2], hold[2], st;
	unsigned int i, j, dead;
	struct left l;
	bool hung;
	long total = 0, v;

	/* dead owners: a process that creates RACE_DEAD instances and is killed */
	pid = fork();
	if (!pid) {
		WCHAR name[40];
		HANDLE h = provider(set);

		for (i = 0; h && i < RACE_DEAD; i++) {
			wname(name, 40, "dead%u-%u", round, i);
			PerfCreateInstance(h, set, name, i);
		}
		raise(SIGKILL);
		_exit(1);
	}
	if (pid < 0 || (st = wait_child(pid, TIMEOUT_MS, &hung), !WIFSIGNALED(st))) {
		r->errors++;
		return;
	}
	count_left(set, &l);
	dead = l.live + l.claimed;
	if (pipe(go) || pipe(sums) || pipe(hold)) {
		r->errors++;
		return;
	}
	for (i = 0; i < RACE_PROVIDERS; i++) {
		provs[i] = fork();
		if (!provs[i]) {
			close(go[1]);
			close(hold[1]);
			_exit(race_provider(set, round, i, go[0], hold[0]));
		}
	}
	for (i = 0; i < RACE_REAPERS; i++) {
		reapers[i] = fork();
		if (!reapers[i]) {
			char b;
			long sum = 0;
			int k, n;

			close(go[1]);
			if (read(go[0], &b, 1) != 1)
				_exit(1);
			for (k = 0; k < 50; k++) {
				n = perflib_reap_counterset(set);
				if (n > 0)
					sum += n;
			}
			_exit(write(sums[1], &sum, sizeof(sum)) == sizeof(sum) ? 0 : 1);
		}
	}
	close(go[0]);
	usleep(20000);
	for (i = 0; i < RACE_PROVIDERS + RACE_REAPERS; i++)
		(void)!write(go[1], "g", 1);
	close(go[1]);
	for (i = 0; i < RACE_REAPERS; i++) {
		st = wait_child(reapers[i], TIMEOUT_MS, &hung);
		r->crashes += crashed(st, 0) || hung;
	}
	close(hold[0]);
	close(hold[1]); /* the providers may end now */
	close(sums[1]);
	while (read(sums[0], &v, sizeof(v)) == sizeof(v))
		total += v;
	close(sums[0]);
	if (total > (long)dead)
		r->double_reaps += (unsigned int)(total - dead);
	/* half the providers are killed (mid-check or done), the others exit with their count */
	for (i = 0; i < RACE_PROVIDERS; i++) {
		if (i % 2)
			kill(provs[i], SIGKILL);
		st = wait_child(provs[i], TIMEOUT_MS, &hung);
		if (crashed(st, SIGKILL) || hung)
			r->crashes++;
		else if (WIFEXITED(st) && WEXITSTATUS(st) < 100)
			r->overwritten += WEXITSTATUS(st);
	}
	/* everyone is gone: one reap, then every name must be creatable again */
	perflib_reap_counterset(set);
	count_left(set, &l);
	r->keys_left += l.keys;
	r->not_free += l.live + l.claimed;
	pid = fork();
	if (!pid) {
		unsigned int stale = 0;
		WCHAR name[40];
		HANDLE h = provider(set);

		if (!h)
			_exit(255);
		for (j = 0; j < RACE_PROVIDERS * RACE_INSTANCES; j++) {
			PPERF_COUNTERSET_INSTANCE inst;

			wname(name, 40, "r%u-%u", round, j);
			inst = PerfCreateInstance(h, set, name, j % RACE_INSTANCES);
			if (!inst)
				stale++;
			else
				PerfDeleteInstance(h, inst);
		}
		PerfStopProvider(h);
		_exit((int)(stale > 250 ? 250 : stale));
	}
	st = wait_child(pid, TIMEOUT_MS, &hung);
	if (WIFEXITED(st) && WEXITSTATUS(st) <= 250)
		r->stale_keys += WEXITSTATUS(st);
	else
		r->crashes++;
	perflib_reap_counterset(set);
	r->rounds++;
}

static void race(unsigned int rounds, unsigned int n, struct race *r)
{
	GUID set = set_guid(n);
	unsigned int i;

	memset(r, 0, sizeof(*r));
	/* dead owners must stay until the reapers come: no kernel reaper here */
	setenv("PERFLIB_KERNEL_REAPER", "0", 1);
	if (register_set(&set, "Stress Race", RACE_CAPACITY)) {
		r->errors++;
		return;
	}
	for (i = 0; i < rounds; i++)
		race_round(&set, i, r);
	perflib_unregister_counterset(&set, true);
	unsetenv("PERFLIB_KERNEL_REAPER");
}

/* ---- grow/retire race --------------------------------------------------------------------- */

#define RETIRE_SEG 8	    /* the grower's segment: every round grows class 0 to it and back */
#define RETIRE_CHURNERS 2   /* providers creating and deleting meanwhile */
#define RETIRE_CHURN_MIN 20 /* a churner's instances per round: 20 to 50 */
#define RETIRE_CHURN_MAX 50
#define RETIRE_MISSES 1024     /* missing stable instances recorded (see retire_race) */
#define RETIRE_DEATHS 64       /* deaths recorded per churner */
#define RETIRE_MAX_CRASHES 100 /* crashed processes started again, at most: then it ends */

/* the race's processes; each has a heartbeat in the shared page */
enum { RR_GROWER, RR_CONSUMER, RR_CHURNER, RR_ROLES = RR_CHURNER + RETIRE_CHURNERS };

/*
 * The page the race's processes share (MAP_SHARED | MAP_ANONYMOUS, made before the forks):
 * what each publishes for the consumer to check a listing against, and the figures they
 * count, summed there rather than squeezed into exit codes. Atomics only.
 */
struct retire_page {
	uint32_t done;		 /* the grower's rounds are over (or a hang): everyone ends */
	uint32_t rounds;	 /* grower rounds completed */
	uint32_t grower_round;	 /* names g<r>-<j> were created for r <= grower_round only */
	uint32_t beat[RR_ROLES]; /* progress of each role, for the hang watch */
	struct {
		uint32_t gen; /* even: the stable instance s<p>-<gen/2> is live; odd: changing */
		uint32_t seq; /* names c<p>-<n> were created for n < seq only */
	} ch[RETIRE_CHURNERS];
	/* creates that failed, by GetLastError: ERROR_NOT_FOUND, ERROR_NOT_ENOUGH_MEMORY, other */
	uint32_t failed[3];
	uint32_t overwritten; /* a block that was not (or no longer) what was created */
	uint32_t reached;     /* grower rounds that found segment RETIRE_SEG pinned */
	uint32_t retired;     /* and found it gone after their deletes */
	uint32_t listings, twice, unknown, errors;
	uint32_t nr_miss; /* listings missing a stable instance live all along: (churner, gen) */
	struct {
		uint32_t p, gen;
	} miss[RETIRE_MISSES];
};

struct retire {
	unsigned int rounds, per_round, reached, retired, listings;
	unsigned int failed[3], overwritten;
	unsigned int missing, twice, unknown; /* wrong listings, by what was wrong */
	unsigned int excused; /* stable instances missing because their churner had died */
	unsigned int crashes, hangs, errors;
	unsigned int crashed[3]; /* crashes of the grower, the churners, the consumer */
	int signal;		 /* the last crash's signal */
	struct left end;	 /* once every process is gone */
	uint32_t nr_segs;	 /* class 0's ctl.nr_segs then */
	unsigned int tmp;	 /* private directories then */
};

static void retire_add(uint32_t *v)
{
	__atomic_fetch_add(v, 1, __ATOMIC_RELAXED);
}

/* creates that failed so far, every error */
static uint32_t retire_failed(struct retire_page *pg)
{
	return __atomic_load_n(&pg->failed[0], __ATOMIC_RELAXED) +
	       __atomic_load_n(&pg->failed[1], __ATOMIC_RELAXED) +
	       __atomic_load_n(&pg->failed[2], __ATOMIC_RELAXED);
}

static bool wsame(const WCHAR *a, const WCHAR *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return *a == *b;
}

/* is @inst still instance @name/@id, its counter 2 @sig (0 right after the create)? */
static bool retire_is(PPERF_COUNTERSET_INSTANCE inst, const WCHAR *name, ULONG id, uint64_t sig)
{
	ULONG off = inst->InstanceNameOffset;
	ULONGLONG *v = (ULONGLONG *)((BYTE *)inst + sizeof(PERF_COUNTERSET_INSTANCE) + 8);

	/* another block's header (or zeroes) may be here: its offset is not followed far */
	if (inst->InstanceId != id || off < sizeof(*inst) || off >= 512 || off % 2)
		return false;
	return wsame((const WCHAR *)((BYTE *)inst + off), name) &&
	       __atomic_load_n(v, __ATOMIC_RELAXED) == sig;
}

/* create @name/@id and sign it with @sig: NULL when it failed (counted by its error) or the
 * block is not what was asked (counted overwritten) */
static PPERF_COUNTERSET_INSTANCE retire_create(HANDLE h, const GUID *set, struct retire_page *pg,
					       const WCHAR *name, ULONG id, uint64_t sig)
{
	PPERF_COUNTERSET_INSTANCE inst = PerfCreateInstance(h, set, name, id);
	DWORD e;

	if (!inst) {
		e = GetLastError();
		if (e == ERROR_NOT_FOUND)
			retire_add(&pg->failed[0]);
		else if (e == ERROR_NOT_ENOUGH_MEMORY)
			retire_add(&pg->failed[1]);
		else
			retire_add(&pg->failed[2]);
		return NULL;
	}
	if (!retire_is(inst, name, id, 0)) {
		retire_add(&pg->overwritten);
		return NULL;
	}
	PerfSetULongLongCounterValue(h, inst, 2, sig);
	return inst;
}

/* delete @inst if it is still @name/@id/@sig; one that is not is another process's now:
 * counted, and left alone */
static void retire_delete(HANDLE h, struct retire_page *pg, PPERF_COUNTERSET_INSTANCE inst,
			  const WCHAR *name, ULONG id, uint64_t sig)
{
	if (!retire_is(inst, name, id, sig))
		retire_add(&pg->overwritten);
	else if (PerfDeleteInstance(h, inst))
		retire_add(&pg->errors);
}

/*
 * The grower: each round creates @per_round instances of its own (class 0 names), enough to
 * need segment RETIRE_SEG whatever the others hold, checks that the segment is there, and
 * deletes them all (the deletes retire the empty top segments). Until the rounds are done.
 */
static int retire_grower(const GUID *set, struct retire_page *pg, unsigned int rounds,
			 uint32_t per_round)
{
	PPERF_COUNTERSET_INSTANCE *inst = calloc(per_round, sizeof(*inst));
	uint64_t sig = (uint64_t)getpid() << 32;
	uint32_t r, j, failed;
	char seg[16];
	WCHAR name[40];
	HANDLE h = provider(set);
	int fd;

	if (!h || !inst)
		return 1;
	snprintf(seg, sizeof(seg), "s%u/data", RETIRE_SEG);
	while (__atomic_load_n(&pg->rounds, __ATOMIC_RELAXED) < rounds &&
	       !__atomic_load_n(&pg->done, __ATOMIC_RELAXED)) {
		/* published before the creates: a listed g<r>-* past it was never created; a
		 * grower started again after a crash takes a round number of its own */
		r = __atomic_add_fetch(&pg->grower_round, 1, __ATOMIC_SEQ_CST);
		failed = retire_failed(pg);
		for (j = 0; j < per_round; j++) {
			wname(name, 40, "g%u-%u", r, j);
			inst[j] = retire_create(h, set, pg, name, j, sig | j);
			retire_add(&pg->beat[RR_GROWER]);
		}
		fd = pin_open(set, seg);
		if (fd >= 0) {
			retire_add(&pg->reached);
			close(fd);
		} else if (failed == retire_failed(pg)) {
			/* every create went through and no segment RETIRE_SEG: not what is soaked */
			retire_add(&pg->errors);
		}
		for (j = 0; j < per_round; j++) {
			if (!inst[j])
				continue;
			wname(name, 40, "g%u-%u", r, j);
			retire_delete(h, pg, inst[j], name, j, sig | j);
			retire_add(&pg->beat[RR_GROWER]);
		}
		/* not always at once: a churner's instance may hold it, and its delete retires */
		fd = pin_open(set, seg);
		if (fd >= 0)
			close(fd);
		else
			retire_add(&pg->retired);
		retire_add(&pg->rounds);
	}
	PerfStopProvider(h);
	free(inst);
	return 0;
}

/*
 * Churner @p: each round replaces its stable instance s<p>-<k> (published in ch[p].gen:
 * odd before the old one is deleted, even once the new one is created) and creates and
 * deletes 20 to 50 instances c<p>-<n> of unique names, every block checked. Says it is
 * under way on @ready (if >= 0), then runs until done.
 */
static int retire_churner(const GUID *set, struct retire_page *pg, unsigned int p, int ready)
{
	PPERF_COUNTERSET_INSTANCE inst[RETIRE_CHURN_MAX], stable = NULL;
	WCHAR name[RETIRE_CHURN_MAX][40], sname[40];
	uint32_t *gen = &pg->ch[p].gen, id[RETIRE_CHURN_MAX], g, k = 0, j, n;
	uint64_t sig = (uint64_t)getpid() << 32;
	HANDLE h = provider(set);

	if (!h)
		return 1;
	/* odd, and past any stable name an earlier churner @p that crashed may have created */
	g = (__atomic_load_n(gen, __ATOMIC_RELAXED) | 1) + 2;
	__atomic_store_n(gen, g, __ATOMIC_SEQ_CST);
	if (ready >= 0 && write(ready, "r", 1) != 1)
		return 1;
	while (!__atomic_load_n(&pg->done, __ATOMIC_ACQUIRE)) {
		/* odd before the delete: a consumer that still reads the even value after its
		 * listing knows the instance was live through all of it */
		if (stable) {
			__atomic_store_n(gen, ++g, __ATOMIC_SEQ_CST);
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			retire_delete(h, pg, stable, sname, k, sig | k);
		}
		k = (g + 1) / 2;
		wname(sname, 40, "s%u-%u", p, k);
		stable = retire_create(h, set, pg, sname, k, sig | k);
		if (stable)
			__atomic_store_n(gen, ++g, __ATOMIC_RELEASE);
		n = RETIRE_CHURN_MIN + rnd() % (RETIRE_CHURN_MAX - RETIRE_CHURN_MIN + 1);
		for (j = 0; j < n; j++) {
			/* counted before the create: a listed c<p>-<n> past it was never created */
			id[j] = __atomic_fetch_add(&pg->ch[p].seq, 1, __ATOMIC_SEQ_CST);
			wname(name[j], 40, "c%u-%u", p, id[j]);
			inst[j] = retire_create(h, set, pg, name[j], id[j], sig | id[j]);
		}
		for (j = 0; j < n; j++) {
			if (inst[j])
				retire_delete(h, pg, inst[j], name[j], id[j], sig | id[j]);
		}
		retire_add(&pg->beat[RR_CHURNER + p]);
	}
	if (stable) {
		__atomic_store_n(gen, ++g, __ATOMIC_SEQ_CST);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		retire_delete(h, pg, stable, sname, k, sig | k);
	}
	PerfStopProvider(h);
	return 0;
}

/* parse a listed name as the race prints them ("%c%u-%u"): false for anything else */
static bool retire_parse(const WCHAR *s, size_t units, char *kind, uint32_t *a, uint32_t *b)
{
	uint64_t v[2];
	size_t i = 1, start;
	int f;

	if (!units || (s[0] != 'g' && s[0] != 'c' && s[0] != 's'))
		return false;
	*kind = (char)s[0];
	for (f = 0; f < 2; f++) {
		for (v[f] = 0, start = i; i < units && i - start < 10 && s[i] >= '0' && s[i] <= '9';
		     i++)
			v[f] = v[f] * 10 + (s[i] - '0');
		/* digits (no leading zero, below 2^32), then '-' or the NUL */
		if (i == start || (s[start] == '0' && i - start > 1) || v[f] > UINT32_MAX ||
		    i >= units || s[i] != (f ? 0 : '-'))
			return false;
		i++;
	}
	*a = (uint32_t)v[0];
	*b = (uint32_t)v[1];
	return true;
}

/* a listed name as a number, for sorting: its kind, then its two numbers */
static uint64_t retire_key(char kind, uint32_t a, uint32_t b)
{
	uint64_t k = kind == 'g' ? 1 : kind == 'c' ? 2 : 3;

	return k << 62 | (uint64_t)(a & 0x3fffffff) << 32 | b;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The consumer: lists the set's instances over and over until done and checks each listing:
 * no name twice (every name of the race is created once), no name or id no process created
 * (checked against what the others published, read after the listing), and each churner's
 * stable instance there if it was live through the whole listing (ch[p].gen even and the
 * same before and after: a seqlock read). A missing one is recorded with its generation:
 * the parent excuses those of a churner that died (its instances went with it).
 */
static int retire_consumer(const GUID *set, struct retire_page *pg, uint32_t per_round, int ready)
{
	uint32_t before[RETIRE_CHURNERS], after[RETIRE_CHURNERS], seq[RETIRE_CHURNERS], round, a, b;
	DWORD cap = (per_round + 4 * RETIRE_CHURN_MAX) * 64, got, size;
	BYTE *buf = malloc(cap);
	uint64_t *keys = malloc(cap / 16 * sizeof(*keys)), key;
	size_t nk, off, i;
	bool twice, unknown;
	unsigned int p;
	ULONG st;
	char kind;

	if (!buf || !keys || (ready >= 0 && write(ready, "r", 1) != 1))
		return 1;
	while (!__atomic_load_n(&pg->done, __ATOMIC_ACQUIRE)) {
		for (p = 0; p < RETIRE_CHURNERS; p++)
			before[p] = __atomic_load_n(&pg->ch[p].gen, __ATOMIC_ACQUIRE);
		got = 0;
		st = PerfEnumerateCounterSetInstances(NULL, set, (PPERF_INSTANCE_HEADER)buf, cap,
						      &got);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		for (p = 0; p < RETIRE_CHURNERS; p++) {
			after[p] = __atomic_load_n(&pg->ch[p].gen, __ATOMIC_RELAXED);
			seq[p] = __atomic_load_n(&pg->ch[p].seq, __ATOMIC_RELAXED);
		}
		round = __atomic_load_n(&pg->grower_round, __ATOMIC_RELAXED);
		retire_add(&pg->beat[RR_CONSUMER]);
		if (st == ERROR_NOT_ENOUGH_MEMORY && got > cap) {
			/* more than expected: room for it, and the listing again */
			cap = got * 2;
			free(buf);
			free(keys);
			buf = malloc(cap);
			keys = malloc(cap / 16 * sizeof(*keys));
			if (!buf || !keys)
				return 1;
			continue;
		}
		if (st || got > cap) {
			retire_add(&pg->errors);
			continue;
		}
		twice = unknown = false;
		for (nk = 0, off = 0; off + sizeof(PERF_INSTANCE_HEADER) <= got; off += size) {
			PPERF_INSTANCE_HEADER hdr = (PPERF_INSTANCE_HEADER)(buf + off);
			const WCHAR *name = (const WCHAR *)(hdr + 1);
			size_t units;

			size = hdr->Size;
			if (size < sizeof(*hdr) + sizeof(WCHAR) || size > got - off || size % 8) {
				unknown = true; /* a broken block: what follows cannot be read */
				break;
			}
			units = (size - sizeof(*hdr)) / sizeof(WCHAR);
			if (!retire_parse(name, units, &kind, &a, &b) || hdr->InstanceId != b ||
			    (kind == 'g' && (a < 1 || a > round || b >= per_round)) ||
			    (kind == 'c' && (a >= RETIRE_CHURNERS || b >= seq[a])) ||
			    (kind == 's' &&
			     (a >= RETIRE_CHURNERS || 2 * (uint64_t)b > after[a] + 1ull))) {
				unknown = true;
				continue;
			}
			keys[nk++] = retire_key(kind, a, b);
		}
		qsort(keys, nk, sizeof(*keys), u64_cmp);
		for (i = 1; i < nk; i++)
			twice |= keys[i] == keys[i - 1];
		for (p = 0; p < RETIRE_CHURNERS; p++) {
			if (before[p] % 2 || before[p] != after[p])
				continue;
			key = retire_key('s', p, before[p] / 2);
			if (!bsearch(&key, keys, nk, sizeof(*keys), u64_cmp)) {
				i = __atomic_fetch_add(&pg->nr_miss, 1, __ATOMIC_RELAXED);
				if (i < RETIRE_MISSES) {
					pg->miss[i].p = p;
					pg->miss[i].gen = before[p];
				}
			}
		}
		if (twice)
			retire_add(&pg->twice);
		if (unknown)
			retire_add(&pg->unknown);
		retire_add(&pg->listings);
	}
	free(buf);
	free(keys);
	return 0;
}

/* class 0's ctl.nr_segs of @set (the last words of s0/live, layout.h), or 0 */
static uint32_t retire_nr_segs(const GUID *set)
{
	struct perflib_info *info = info_read(set);
	uint64_t w[PERFLIB_CTL_WORDS];
	struct perflib_ctl ctl;
	uint32_t i, first, nr = 0;
	int fd = pin_open(set, "s0/live");

	_Static_assert(sizeof(ctl) <= sizeof(w), "ctl in its words");
	if (info && fd >= 0) {
		first = perflib_ctl_word(info->classes[0].seg0_slots, info->nr_procs);
		for (i = 0; i < PERFLIB_CTL_WORDS; i++) {
			uint32_t key = first + i;

			if (bpf_map_lookup_elem(fd, &key, &w[i]))
				break;
		}
		if (i == PERFLIB_CTL_WORDS) {
			memcpy(&ctl, w, sizeof(ctl));
			nr = ctl.nr_segs[0];
		}
	}
	if (fd >= 0)
		close(fd);
	free(info);
	return nr;
}

/* a crash of @role, dead of status @st */
static void retire_crash(struct retire *f, int role, int st)
{
	f->crashes++;
	f->crashed[role == RR_GROWER ? 0 : role == RR_CONSUMER ? 2 : 1]++;
	f->signal = WTERMSIG(st);
}

/*
 * what a hung process @pid was doing: its threads' stacks (gdb, when installed) and its
 * kernel stack, on stderr, before it is killed
 */
static void hung_report(pid_t pid, const char *what)
{
	char cmd[256];

	fprintf(stderr, "stress: the %s (pid %d) made no progress for %d ms:\n", what, (int)pid,
		TIMEOUT_MS);
	snprintf(cmd, sizeof(cmd),
		 "command -v gdb >/dev/null && gdb -p %d -batch -nx -ex 'thread apply all bt' "
		 "2>/dev/null | grep -E '^(#|Thread)' >&2; cat /proc/%d/stack >&2 2>/dev/null",
		 (int)pid, (int)pid);
	if (system(cmd) == -1)
		fprintf(stderr, "stress: cannot run gdb\n");
}

/* start @role of the race in a child (@ready: where a churner or consumer says it is under
 * way, -1 for none); its pid, or -1 */
static pid_t retire_spawn(const GUID *set, struct retire_page *pg, int role, unsigned int rounds,
			  uint32_t per_round, int ready)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	seed ^= (unsigned int)getpid();
	if (role == RR_GROWER)
		_exit(retire_grower(set, pg, rounds, per_round));
	if (role == RR_CONSUMER)
		_exit(retire_consumer(set, pg, per_round, ready));
	_exit(retire_churner(set, pg, (unsigned int)(role - RR_CHURNER), ready));
}

/*
 * Issue 29: a provider's PerfCreateInstance failed (ERROR_NOT_FOUND, ERROR_NOT_ENOUGH_MEMORY)
 * or crashed while another process grew or retired the set's segments. A grower takes class
 * 0 of a set of its own to segment RETIRE_SEG and back, @rounds times, while two churners
 * create and delete (every block checked) and a consumer lists (every listing checked),
 * in processes of their own sharing a page for what each must know of the others. A
 * process that crashes is counted and started again (up to RETIRE_MAX_CRASHES); one that
 * makes no progress for TIMEOUT_MS is a hang, and the race ends there. Once they are all
 * gone: nothing listed, the set back to segment 0 alone, no private directory left.
 */
static void retire_race(unsigned int rounds, unsigned int n, struct retire *f)
{
	uint32_t beat[RR_ROLES], deaths[RETIRE_CHURNERS][RETIRE_DEATHS], b, i, j;
	unsigned int nr_deaths[RETIRE_CHURNERS] = {0};
	pid_t pids[RR_ROLES] = {0};
	uint64_t seen[RR_ROLES];
	GUID set = set_guid(n);
	struct perflib_info *info = NULL;
	struct retire_page *pg = MAP_FAILED;
	int ready[2] = {-1, -1}, role, st;
	bool hung, stop = false;
	char c;

	memset(f, 0, sizeof(*f));
	if (!rounds)
		return;
	/* the exit reaper on: a churner that crashes leaves nothing the others must step over */
	unsetenv("PERFLIB_KERNEL_REAPER");
	if (register_set(&set, "Stress Retire", 1u << 20) || !(info = info_read(&set)) ||
	    pipe(ready)) {
		f->errors++;
		goto out;
	}
	pg = mmap(NULL, sizeof(*pg), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	/* the grower's own instances reach segment RETIRE_SEG's first slot: it must be there */
	f->per_round = (unsigned int)perflib_seg_first(RETIRE_SEG, info->classes[0].seg0_slots) + 1;
	if (pg == MAP_FAILED ||
	    info->classes[0].capacity < f->per_round + RETIRE_CHURNERS * (RETIRE_CHURN_MAX + 1)) {
		f->errors++;
		goto out;
	}
	memset(pg, 0, sizeof(*pg));
	for (j = 0; j < RETIRE_CHURNERS; j++)
		pg->ch[j].gen = 1; /* odd: no stable instance yet */
	for (role = RR_CONSUMER; role < RR_ROLES; role++)
		pids[role] = retire_spawn(&set, pg, role, rounds, f->per_round, ready[1]);
	/* the grower starts once the others are under way (one that could not start is an
	 * early exit, seen below) */
	for (role = RR_CONSUMER; role < RR_ROLES; role++) {
		struct pollfd pfd = {.fd = ready[0], .events = POLLIN};

		if (poll(&pfd, 1, TIMEOUT_MS) != 1 || read(ready[0], &c, 1) != 1)
			break;
	}
	pids[RR_GROWER] = retire_spawn(&set, pg, RR_GROWER, rounds, f->per_round, -1);
	for (role = 0; role < RR_ROLES; role++) {
		if (pids[role] < 0) {
			pids[role] = 0;
			f->errors++;
		}
		beat[role] = 0;
		seen[role] = now_ms();
	}
	/* the watch, until the grower is done: a crash is counted and the process started
	 * again; a process whose heartbeat stays still TIMEOUT_MS is hung */
	while (pids[RR_GROWER] && !stop) {
		for (role = 0; role < RR_ROLES && !stop; role++) {
			if (!pids[role])
				continue;
			if (waitpid(pids[role], &st, WNOHANG) == pids[role]) {
				pids[role] = 0;
				if (!WIFSIGNALED(st)) {
					/* the grower's end; another's is a start that failed */
					f->errors += role != RR_GROWER || WEXITSTATUS(st);
					continue;
				}
				retire_crash(f, role, st);
			} else if ((b = __atomic_load_n(&pg->beat[role], __ATOMIC_RELAXED)) !=
				   beat[role]) {
				beat[role] = b;
				seen[role] = now_ms();
				continue;
			} else if (now_ms() - seen[role] <= TIMEOUT_MS) {
				continue;
			} else {
				f->hangs++;
				hung_report(pids[role], role == RR_GROWER     ? "grower"
							: role == RR_CONSUMER ? "consumer"
									      : "churner");
				kill(pids[role], SIGKILL);
				waitpid(pids[role], &st, 0);
				pids[role] = 0;
				stop = true;
			}
			/* a churner dead: its stable instance went with it (recorded, see below) */
			j = (uint32_t)(role - RR_CHURNER);
			if (role >= RR_CHURNER && nr_deaths[j] < RETIRE_DEATHS)
				deaths[j][nr_deaths[j]++] =
					__atomic_load_n(&pg->ch[j].gen, __ATOMIC_SEQ_CST);
			if (stop || f->crashes >= RETIRE_MAX_CRASHES) {
				stop = true;
				break;
			}
			pids[role] = retire_spawn(&set, pg, role, rounds, f->per_round, -1);
			if (pids[role] < 0) {
				pids[role] = 0;
				f->errors++;
			}
			seen[role] = now_ms();
		}
		usleep(1000);
	}
	__atomic_store_n(&pg->done, 1, __ATOMIC_SEQ_CST);
	for (role = 0; role < RR_ROLES; role++) {
		if (!pids[role])
			continue;
		st = wait_child(pids[role], TIMEOUT_MS, &hung);
		f->hangs += hung;
		if (!hung && crashed(st, 0))
			retire_crash(f, role, st);
		f->errors += !hung && WIFEXITED(st) && WEXITSTATUS(st);
		j = (uint32_t)(role - RR_CHURNER);
		if (role >= RR_CHURNER && (hung || WIFSIGNALED(st)) && nr_deaths[j] < RETIRE_DEATHS)
			deaths[j][nr_deaths[j]++] =
				__atomic_load_n(&pg->ch[j].gen, __ATOMIC_SEQ_CST);
	}
	/* a stable instance missing is wrong unless its churner died with it live */
	for (i = 0; i < pg->nr_miss && i < RETIRE_MISSES; i++) {
		bool died = false;

		for (j = 0; j < nr_deaths[pg->miss[i].p]; j++)
			died |= deaths[pg->miss[i].p][j] == pg->miss[i].gen;
		if (died)
			f->excused++;
		else
			f->missing++;
	}
	if (pg->nr_miss > RETIRE_MISSES)
		f->missing += pg->nr_miss - RETIRE_MISSES;
	f->rounds = pg->rounds;
	f->reached = pg->reached;
	f->retired = pg->retired;
	f->listings = pg->listings;
	for (i = 0; i < 3; i++)
		f->failed[i] = pg->failed[i];
	f->overwritten = pg->overwritten;
	f->twice = pg->twice;
	f->unknown = pg->unknown;
	f->errors += pg->errors;
	if (count_left(&set, &f->end))
		f->errors++;
	f->nr_segs = retire_nr_segs(&set);
	f->tmp = tmp_dirs(&set);
out:
	if (pg != MAP_FAILED)
		munmap(pg, sizeof(*pg));
	if (ready[0] >= 0) {
		close(ready[0]);
		close(ready[1]);
	}
	free(info);
	perflib_unregister_counterset(&set, true);
}

/* ---- main -------------------------------------------------------------------------------- */

static void rm_root(void)
{
	char cmd[PATH_MAX + 16];

	if (!root[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	(void)!system(cmd);
}

/* append @opts to the sanitizer options in @var, for every child */
static void sanitizer_aborts(const char *var, const char *opts)
{
	const char *old = getenv(var);
	char buf[1024];

	snprintf(buf, sizeof(buf), "%s%s%s", old ? old : "", old && *old ? ":" : "", opts);
	setenv(var, buf, 1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: stress [--kills N] [--corrupt N] [--race N] [--grow N] [--retire N] "
		"[--strict] [--tools DIR] [--bpftool PATH]\n");
	exit(2);
}

static void print_left(const char *what, const struct left *l)
{
	printf("    %-30s ghosts %u, slots not free %u (live %u, claimed %u), index keys %u, "
	       "procs entries %u\n",
	       what, l->ghosts, l->live + l->claimed, l->live, l->claimed, l->keys, l->procs);
}

int main(int argc, char **argv)
{
	unsigned int kills = 1000, corrupt_rounds = 200, race_rounds = 40, grow_kills = 60;
	unsigned int retire_rounds = 1000;
	unsigned int gate = 0, known = 0;
	struct soak on, off;
	struct grow gr;
	struct retire rr;
	struct corrupt c;
	struct race r;
	bool strict = false;
	char self[PATH_MAX];
	ssize_t n;
	int i;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = 0;
	snprintf(tools, sizeof(tools), "%s/../tools", n > 0 ? dirname(self) : ".");
	if (getenv("TOOLS"))
		snprintf(tools, sizeof(tools), "%s", getenv("TOOLS"));
	if (access(bpftool, X_OK))
		bpftool = "/usr/bin/bpftool";
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--kills") && i + 1 < argc)
			kills = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--corrupt") && i + 1 < argc)
			corrupt_rounds = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--race") && i + 1 < argc)
			race_rounds = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--grow") && i + 1 < argc)
			grow_kills = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--retire") && i + 1 < argc)
			retire_rounds = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--tools") && i + 1 < argc)
			snprintf(tools, sizeof(tools), "%s", argv[++i]);
		else if (!strcmp(argv[i], "--bpftool") && i + 1 < argc)
			bpftool = argv[++i];
		else if (!strcmp(argv[i], "--strict"))
			strict = true;
		else
			usage();
	}
	if (getuid() != 0) {
		printf("stress: needs root (pins maps, attaches the exit reaper)\n");
		return 77;
	}
	seed = (unsigned int)getpid() ^ (unsigned int)now_ms();
	snprintf(root, sizeof(root), "/sys/fs/bpf/perflib-stress-%d", (int)getpid());
	if (mkdir(root, 0755) || perflib_set_pin_root(root)) {
		printf("stress: cannot use %s: %s\n", root, strerror(errno));
		return 77;
	}
	setenv("PERFLIB_ROOT", root, 1);
	/* sanitizer builds: an error report is a crash (SIGABRT), not an exit code */
	sanitizer_aborts("ASAN_OPTIONS", "abort_on_error=1");
	sanitizer_aborts("UBSAN_OPTIONS", "halt_on_error=1:abort_on_error=1");
	atexit(rm_root);
	printf("stress: %u kills per reaper mode, %u corruption rounds, %u claim/reap rounds, "
	       "%u growth kills, %u grow/retire rounds (seed %u)\n",
	       kills, corrupt_rounds, race_rounds, grow_kills, retire_rounds, seed);
	fflush(stdout);

	kill_soak(kills, true, 1, &on);
	kill_soak(kills, false, 2, &off);
	corruption(corrupt_rounds, 3, &c);
	race(race_rounds, 4, &r);
	grow_soak(grow_kills, 5, &gr);
	retire_race(retire_rounds, 6, &rr);

	printf("\n== stress summary\n");
	printf("  kill soak, kernel reaper on (%u SIGKILLs): crashes %u, errors %u\n", kills,
	       on.crashes, on.errors);
	print_left("providers gone:", &on.gone);
	print_left("after a lazy reap:", &on.reaped);
	printf("  kill soak, kernel reaper off (%u SIGKILLs): crashes %u, errors %u\n", kills,
	       off.crashes, off.errors);
	print_left("providers gone:", &off.gone);
	print_left("after a lazy reap:", &off.reaped);
	printf("  corruption (%u rounds of data/index/procs while API, typeperf, exporter, bpftool "
	       "read): crashes %u, hangs %u (API %u, typeperf %u, exporter %u, bpftool %u, "
	       "provider %u), errors %u\n",
	       c.rounds, c.crashes, c.hangs, c.by_api, c.by_typeperf, c.by_exporter, c.by_bpftool,
	       c.by_provider, c.errors);
	printf("  claim/reap race (%u rounds, %d providers, %d reapers, SIGKILLs): overwritten "
	       "instances %u, double reaps %u, names blocked by stale keys %u, index keys left %u, "
	       "slots not free %u, crashes %u, errors %u\n",
	       r.rounds, RACE_PROVIDERS, RACE_REAPERS, r.overwritten, r.double_reaps, r.stale_keys,
	       r.keys_left, r.not_free, r.crashes, r.errors);

	printf("  growth soak (%u SIGKILLs of %d providers growing to %d instances and deleting "
	       "them all, kernel reaper on): crashes %u, errors %u\n",
	       gr.kills, GROW_PAIR, GROW_INSTANCES, gr.crashes, gr.errors);
	print_left("providers gone:", &gr.gone);
	printf("    private directories of the killed seen %u; at the end: segments %u, "
	       "private directories %u; after one more provider grew and emptied it: segments "
	       "%u, private directories %u, wrong listings %u\n",
	       gr.tmp_seen, gr.gone.segs, gr.tmp_gone, gr.after.segs, gr.tmp_after, gr.wrong_list);
	printf("  grow/retire race (%u rounds: a grower to segment %d and back with %u instances, "
	       "%d churners, a consumer): failed creates %u (ERROR_NOT_FOUND %u, "
	       "ERROR_NOT_ENOUGH_MEMORY %u, other %u), overwritten %u, wrong listings %u (a stable "
	       "instance missing %u, a name twice %u, a name never created %u; of %u listings), "
	       "crashes %u (grower %u, churners %u, consumer %u%s%s), hangs %u, errors %u\n",
	       rr.rounds, RETIRE_SEG, rr.per_round, RETIRE_CHURNERS,
	       rr.failed[0] + rr.failed[1] + rr.failed[2], rr.failed[0], rr.failed[1], rr.failed[2],
	       rr.overwritten, rr.missing + rr.twice + rr.unknown, rr.missing, rr.twice, rr.unknown,
	       rr.listings, rr.crashes, rr.crashed[0], rr.crashed[1], rr.crashed[2],
	       rr.crashes ? "; the last by " : "", rr.crashes ? strsignal(rr.signal) : "", rr.hangs,
	       rr.errors);
	printf("    segment %d reached in %u rounds, retired at the grower's deletes in %u; at the "
	       "end: instances listed %u, segments %u (ctl.nr_segs %u), private directories %u, "
	       "slots not free %u, index keys %u\n",
	       RETIRE_SEG, rr.reached, rr.retired, rr.end.ghosts, rr.end.segs, rr.nr_segs, rr.tmp,
	       rr.end.live + rr.end.claimed, rr.end.keys);
	if (rr.excused)
		printf("    (stable instances missing because their churner had died: %u, not "
		       "counted)\n",
		       rr.excused);

	/* always: no crash, no hang, no ghost once reaped, nothing left after a lazy reap */
	gate = on.crashes + off.crashes + c.crashes + c.hangs + r.crashes + on.errors + off.errors +
	       c.errors + r.errors + on.gone.ghosts + off.gone.ghosts + on.reaped.live +
	       on.reaped.claimed + off.reaped.live + off.reaped.claimed + on.reaped.keys +
	       off.reaped.keys;
	/* the growth soak: storage given back, whatever was killed when */
	gate += gr.crashes + gr.errors + gr.gone.ghosts + gr.tmp_after + gr.wrong_list +
		(grow_kills && gr.after.segs != 1);
	/* the grow/retire race (issue 29): every create must go through, whatever grows or
	 * retires meanwhile; then the storage given back */
	gate += rr.failed[0] + rr.failed[1] + rr.failed[2] + rr.overwritten + rr.missing +
		rr.twice + rr.unknown + rr.crashes + rr.hangs + rr.errors + rr.end.ghosts + rr.tmp +
		(retire_rounds && (rr.end.segs != 1 || rr.nr_segs != 1));
	/* the slot protocol (issue 13 items 3 and 6) */
	known = on.gone.live + on.gone.claimed + on.gone.keys + r.overwritten + r.double_reaps +
		r.stale_keys + r.keys_left + r.not_free;
	/* what the grow/retire race's processes left in slots and index (all deleted, or reaped) */
	known += rr.end.live + rr.end.claimed + rr.end.keys;
	printf("  total: %u failures%s, %u slot-protocol failures (issue 13 items 3, 6)%s\n", gate,
	       gate ? "" : " (crashes, hangs, ghosts, leftovers after a reap)", known,
	       strict ? "" : ", not gating without --strict");
	return gate || (strict && known) ? 1 : 0;
}

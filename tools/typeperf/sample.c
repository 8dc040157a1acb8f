/* SPDX-License-Identifier: MIT */
/*
 * sample.c - typeperf's sampling: counter paths are resolved once at start (wildcards
 * included; instances appearing later are not added), each computer gets one query with
 * one specification per counter set used (all counters, all instances, so base, time,
 * frequency and multi counters come along), and every interval one PerfQueryCounterData
 * call per computer gives the raw values that tools/common/cook.c turns into the row.
 *
 * A priming sample is taken (not printed) one interval before the first row, so that
 * two-sample types (rates, timers, sample fractions) have a value in the first row and -sc
 * N prints N rows. Values are printed unscaled and uncapped (cook.h). Instances are found
 * again in every sample by name and duplicate number ("#n" in order of appearance), as
 * PDH does; a vanished instance prints " " until it comes back.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cook.h"
#include "tp_buf.h"
#include "tp_out.h"
#include "tp_path.h"
#include "typeperf.h"

#define MAX_MACHINES 16

/* One output column: a counter of one instance. */
struct column {
	struct tp_machine *m;	      /* where it comes from */
	size_t set;		      /* index in m->cat.sets */
	const struct tp_counter *ctr; /* in m->cat (lives as long as the catalog) */
	const char *instance;	      /* instance name (in the catalog), NULL without instances */
	unsigned int dup;	      /* its duplicate number */
	uint32_t base_id;	      /* tp_counter_base() */
	char *path;		      /* header text */
	struct cook_raw old;	      /* previous raw sample */
	bool have_old;
};

struct sampler {
	struct tp_machine machines[MAX_MACHINES];
	size_t nr_machines;
	struct column *cols;
	size_t nr_cols;
	/* per machine: last data buffer (kept for its size) and the decoded sample */
	void *bufs[MAX_MACHINES];
	DWORD buf_sizes[MAX_MACHINES];
	struct tp_data data[MAX_MACHINES];
	bool have_data[MAX_MACHINES];
};

/* the machine of a path: its own computer, else -s, else this machine */
static struct tp_machine *machine_get(struct sampler *s, const char *name)
{
	struct tp_machine *m;
	size_t i;

	for (i = 0; i < s->nr_machines; i++) {
		m = &s->machines[i];
		if ((!name && !m->name) || (name && m->name && tp_name_equal(name, m->name)))
			return m;
	}
	if (s->nr_machines == MAX_MACHINES) {
		tp_warn("more than %d computers; %s ignored", MAX_MACHINES, name ? name : "");
		return NULL;
	}
	m = &s->machines[s->nr_machines];
	if (tp_machine_init(m, name)) {
		tp_machine_free(m);
		return NULL;
	}
	s->nr_machines++;
	tp_machine_load(m, true);
	if (m->load_status)
		tp_warn("%s: cannot read counter sets: %s", m->display,
			tp_win32_str(m->load_status));
	return m;
}

static int add_column(struct sampler *s, struct tp_machine *m, const struct tp_target *t)
{
	const struct tp_set *set = &m->cat.sets[t->set];
	const struct tp_instance *in = NULL;
	struct column *grown, *c;
	char *display = NULL;

	if (s->nr_cols % 32 == 0) {
		grown = realloc(s->cols, (s->nr_cols + 32) * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		s->cols = grown;
	}
	c = &s->cols[s->nr_cols];
	memset(c, 0, sizeof(*c));
	c->m = m;
	c->set = t->set;
	c->ctr = &set->counters[t->counter];
	c->base_id = tp_counter_base(set, t->counter);
	if (t->instance != TP_NO_INSTANCE) {
		in = &set->instances[t->instance];
		c->instance = in->name;
		c->dup = in->dup;
		display = tp_instance_display(in->name, in->dup);
		if (!display)
			return -ENOMEM;
	}
	c->path = tp_path_format(m->display, set->name, display, c->ctr->name);
	free(display);
	if (!c->path)
		return -ENOMEM;
	s->nr_cols++;
	return 0;
}

/* resolve every counter path into columns */
static int resolve_all(struct sampler *s, const struct tp_opts *opts)
{
	struct tp_target *targets = NULL;
	struct tp_machine *m;
	struct tp_path path;
	size_t i, k, nr;
	int n, err = 0;

	for (i = 0; !err && i < opts->nr_counters; i++) {
		if (tp_path_parse(opts->counters[i], &path)) {
			tp_warn("\"%s\" is not a valid counter path", opts->counters[i]);
			continue;
		}
		m = machine_get(s, path.machine ? path.machine : opts->machine);
		nr = 0;
		n = m && !m->load_status ? tp_resolve(&m->cat, &path, &targets, &nr) : 0;
		if (n < 0)
			err = n;
		else if (n == 0)
			tp_warn("\"%s\" matches no counter", opts->counters[i]);
		for (k = 0; !err && k < nr; k++)
			err = add_column(s, m, &targets[k]);
		tp_path_free(&path);
	}
	free(targets);
	return err;
}

/* the identifier block of counter set @set: all counters, all instances */
static size_t put_identifier(uint8_t *p, const struct tp_set *set)
{
	PERF_COUNTER_IDENTIFIER id = {0};
	size_t size = sizeof(id);

	id.CounterSetGuid = set->guid;
	id.CounterId = PERF_WILDCARD_COUNTER;
	id.InstanceId = 0xFFFFFFFF;
	/* multi-instance sets need a name filter: "*" (single-instance ones take none) */
	if (tp_set_multi(set))
		size += 8;
	id.Size = (ULONG)size;
	memcpy(p, &id, sizeof(id));
	if (tp_set_multi(set))
		memcpy(p + sizeof(id), PERF_WILDCARD_INSTANCE "\0\0", 8);
	return size;
}

/* after PerfAddCounters: read each spec's Index back from PerfQueryCounterInfo */
static ULONG read_indexes(struct tp_machine *m)
{
	DWORD size = 0, actual = 0, off;
	PERF_COUNTER_IDENTIFIER id;
	uint8_t *buf = NULL, *grown;
	size_t k, nr = 0;
	ULONG st;
	int i;

	st = PerfQueryCounterInfo(m->query, NULL, 0, &actual);
	for (i = 0; st == ERROR_NOT_ENOUGH_MEMORY && i < 8; i++) {
		size = actual;
		grown = realloc(buf, size);
		if (!grown) {
			free(buf);
			return ERROR_OUTOFMEMORY;
		}
		buf = grown;
		st = PerfQueryCounterInfo(m->query, (PERF_COUNTER_IDENTIFIER *)buf, size, &actual);
	}
	if (st != ERROR_SUCCESS || actual > size) {
		free(buf);
		return st ? st : ERROR_INVALID_DATA;
	}
	/* first count the blocks: an Index must be below that number */
	for (off = 0; off + sizeof(id) <= actual; off += id.Size, nr++) {
		memcpy(&id, buf + off, sizeof(id));
		if (id.Size < sizeof(id) || id.Size > actual - off)
			break;
	}
	m->spec_ids = calloc(nr ? nr : 1, sizeof(*m->spec_ids));
	if (!m->spec_ids) {
		free(buf);
		return ERROR_OUTOFMEMORY;
	}
	m->nr_specs = nr;
	for (off = 0, i = 0; (size_t)i < nr; i++, off += id.Size) {
		memcpy(&id, buf + off, sizeof(id));
		if (id.Index >= nr)
			continue;
		m->spec_ids[id.Index] = id.CounterId;
		for (k = 0; k < m->cat.nr_sets; k++)
			if (!memcmp(&m->cat.sets[k].guid, &id.CounterSetGuid, sizeof(GUID)))
				m->set_index[k] = id.Index;
	}
	free(buf);
	return ERROR_SUCCESS;
}

/* open the machine's query with one spec per counter set its columns use */
static ULONG machine_query(struct sampler *s, struct tp_machine *m)
{
	size_t i, k, nr_sets = m->cat.nr_sets, size = 0, off;
	bool *used;
	uint8_t *buf;
	ULONG st;

	m->set_index = malloc((nr_sets ? nr_sets : 1) * sizeof(*m->set_index));
	used = calloc(nr_sets ? nr_sets : 1, sizeof(*used));
	if (!m->set_index || !used) {
		free(used);
		return ERROR_OUTOFMEMORY;
	}
	for (k = 0; k < nr_sets; k++)
		m->set_index[k] = SIZE_MAX;
	for (i = 0; i < s->nr_cols; i++) {
		if (s->cols[i].m == m && !used[s->cols[i].set]) {
			used[s->cols[i].set] = true;
			size += sizeof(PERF_COUNTER_IDENTIFIER) + 8;
		}
	}
	if (!size) {
		free(used);
		return ERROR_SUCCESS;
	}
	st = PerfOpenQueryHandle(m->wname, &m->query);
	if (st) {
		m->query = NULL;
		free(used);
		return st;
	}
	buf = calloc(1, size);
	if (!buf) {
		free(used);
		return ERROR_OUTOFMEMORY;
	}
	for (off = 0, k = 0; k < nr_sets; k++)
		if (used[k])
			off += put_identifier(buf + off, &m->cat.sets[k]);
	st = PerfAddCounters(m->query, (PERF_COUNTER_IDENTIFIER *)buf, (DWORD)off);
	/* each block's Status says whether its set made it into the query */
	for (size = 0, k = 0; st == ERROR_SUCCESS && k < nr_sets; k++) {
		PERF_COUNTER_IDENTIFIER id;

		if (!used[k] || size + sizeof(id) > off)
			continue;
		memcpy(&id, buf + size, sizeof(id));
		if (id.Status)
			tp_warn("\\%s: cannot be queried: %s", m->cat.sets[k].name,
				tp_win32_str(id.Status));
		size += id.Size;
	}
	free(buf);
	free(used);
	if (st)
		return st;
	return read_indexes(m);
}

/* one PerfQueryCounterData call for machine @i, decoded into s->data[i] */
static void machine_collect(struct sampler *s, size_t i)
{
	struct tp_machine *m = &s->machines[i];
	DWORD actual = 0;
	ULONG st;
	void *grown;
	int tries, err;

	if (s->have_data[i])
		tp_data_free(&s->data[i]);
	s->have_data[i] = false;
	if (!m->query)
		return;
	for (tries = 0; tries < 8; tries++) {
		st = PerfQueryCounterData(m->query, s->bufs[i], s->buf_sizes[i], &actual);
		if (st != ERROR_NOT_ENOUGH_MEMORY)
			break;
		/* grow with slack: instances come and go between samples */
		grown = realloc(s->bufs[i], actual + actual / 4 + 256);
		if (!grown)
			return;
		s->bufs[i] = grown;
		s->buf_sizes[i] = actual + actual / 4 + 256;
	}
	if (st != ERROR_SUCCESS || actual > s->buf_sizes[i]) {
		tp_warn("%s: collecting failed: %s", m->display, tp_win32_str(st));
		return;
	}
	err = tp_data_parse(s->bufs[i], actual, m->spec_ids, m->nr_specs, &s->data[i]);
	if (err) {
		tp_warn("%s: malformed counter data (%s)", m->display, strerror(-err));
		return;
	}
	s->have_data[i] = true;
}

/* the value of counter @id next to the column's, or false */
static bool aux(const struct tp_data *d, const struct tp_item *it, uint32_t id, uint64_t *v)
{
	return id != TP_NO_ID && tp_item_value(d, it, id, v);
}

/* the raw sample of column @c from its machine's data; false when absent */
static bool column_raw(struct sampler *s, const struct column *c, struct cook_raw *r)
{
	size_t mi = (size_t)(c->m - s->machines), index;
	const struct tp_counter *ctr = c->ctr;
	const struct tp_data *d = &s->data[mi];
	const struct tp_item *it;

	if (!s->have_data[mi] || !c->m->set_index)
		return false;
	index = c->m->set_index[c->set];
	if (index == SIZE_MAX)
		return false;
	it = tp_data_item(d, index, c->instance, c->dup);
	if (!it || !tp_item_value(d, it, ctr->id, &r->value))
		return false;
	r->time = d->time;
	r->freq = d->freq;
	r->time_100ns = d->time_100ns;
	/* a registered companion counter must be there; a missing one spoils the sample */
	if (c->base_id != TP_NO_ID && !aux(d, it, c->base_id, &r->base))
		return false;
	if (ctr->multi_id != TP_NO_ID) {
		if (!aux(d, it, ctr->multi_id, &r->multi))
			return false;
	} else {
		r->multi = r->base; /* multi count from the base (PERF_COUNTER_MULTI_BASE) */
	}
	if (ctr->time_id != TP_NO_ID) {
		if (!aux(d, it, ctr->time_id, &r->obj_time))
			return false;
	} else if (ctr->type == PERF_PRECISION_OBJECT_TIMER) {
		r->obj_time = r->base; /* the companion time stamp is the base */
	} else {
		r->obj_time = (uint64_t)d->time; /* no object clock: the system clock */
	}
	if (ctr->freq_id != TP_NO_ID) {
		if (!aux(d, it, ctr->freq_id, &r->obj_freq))
			return false;
	} else {
		r->obj_freq = (uint64_t)d->freq;
	}
	return true;
}

static void sampler_free(struct sampler *s)
{
	size_t i;

	for (i = 0; i < s->nr_cols; i++)
		free(s->cols[i].path);
	free(s->cols);
	for (i = 0; i < s->nr_machines; i++) {
		if (s->have_data[i])
			tp_data_free(&s->data[i]);
		free(s->bufs[i]);
		tp_machine_free(&s->machines[i]);
	}
}

/* collect every machine and cook every column; @print false for the priming sample */
static int sample_once(struct sampler *s, const struct tp_opts *opts, FILE *out, bool print,
		       double *values, bool *valid)
{
	char stamp[TP_STAMP_SIZE];
	struct timespec now;
	struct cook_raw cur;
	size_t i;
	bool have;

	clock_gettime(CLOCK_REALTIME, &now);
	for (i = 0; i < s->nr_machines; i++)
		machine_collect(s, i);
	/* the row's time is the collection time of the first computer's data */
	for (i = 0; i < s->nr_machines; i++) {
		if (s->have_data[i] && !tp_filetime_to_timespec(s->data[i].time_100ns, &now))
			break;
	}
	for (i = 0; i < s->nr_cols; i++) {
		struct column *c = &s->cols[i];

		memset(&cur, 0, sizeof(cur));
		have = column_raw(s, c, &cur);
		valid[i] = have && cook_value(c->ctr->type, c->have_old ? &c->old : NULL, &cur,
					      &values[i]) == COOK_OK;
		/* the newest sample is the next older one (also after bad data, as PDH) */
		c->old = cur;
		c->have_old = have;
	}
	if (!print)
		return 0;
	if (tp_format_stamp(stamp, &now))
		strcpy(stamp, "01/01/1970 00:00:00.000");
	return tp_out_row(out, opts->format, stamp, values, valid, s->nr_cols);
}

/* wait until @deadline (CLOCK_MONOTONIC); false when SIGINT/SIGTERM came first */
static bool wait_until(const struct timespec *deadline, const sigset_t *sigs)
{
	struct timespec now, left;

	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		left.tv_sec = deadline->tv_sec - now.tv_sec;
		left.tv_nsec = deadline->tv_nsec - now.tv_nsec;
		if (left.tv_nsec < 0)
			left.tv_nsec += 1000000000L, left.tv_sec--;
		if (left.tv_sec < 0)
			return true;
		/* the signals are blocked, so one arriving at any time is seen here */
		if (sigtimedwait(sigs, NULL, &left) >= 0)
			return false;
		if (errno != EAGAIN && errno != EINTR)
			return true;
	}
}

int tp_sample_run(const struct tp_opts *opts)
{
	FILE *out = stdout;
	struct sampler *s;
	struct timespec deadline, now;
	unsigned long row;
	double *values = NULL;
	char **paths = NULL;
	bool *valid = NULL;
	sigset_t sigs, old;
	size_t i;
	int ret = TP_EXIT_ERROR, err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return TP_EXIT_ERROR;
	/* Ctrl+C ends sampling cleanly: blocked here, taken by sigtimedwait() */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigprocmask(SIG_BLOCK, &sigs, &old);
	err = resolve_all(s, opts);
	if (err) {
		tp_warn("%s", strerror(-err));
		goto out;
	}
	for (i = 0; i < s->nr_machines; i++) {
		ULONG st = machine_query(s, &s->machines[i]);

		if (st)
			tp_warn("%s: cannot open a query: %s", s->machines[i].display,
				tp_win32_str(st));
	}
	if (!s->nr_cols) {
		fputs("Error: No valid counters.\n", stderr);
		goto out;
	}
	values = calloc(s->nr_cols, sizeof(*values));
	valid = calloc(s->nr_cols, sizeof(*valid));
	paths = calloc(s->nr_cols, sizeof(*paths));
	if (!values || !valid || !paths)
		goto out;
	for (i = 0; i < s->nr_cols; i++)
		paths[i] = s->cols[i].path;
	if (opts->output) {
		/* Ctrl+C works at the overwrite question */
		sigprocmask(SIG_SETMASK, &old, NULL);
		out = tp_open_output(opts);
		sigprocmask(SIG_BLOCK, &sigs, NULL);
		if (!out) {
			out = stdout;
			goto out;
		}
	} else {
		fputs("\r\n", out); /* the console output starts with an empty line */
	}
	if (tp_out_header(out, opts->format, paths, s->nr_cols) || fflush(out))
		goto io_error;
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	sample_once(s, opts, out, false, values, valid);
	for (row = 0; !opts->samples || row < opts->samples; row++) {
		deadline.tv_sec += opts->interval;
		/* a collection that overran a whole interval restarts the schedule, no burst */
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > deadline.tv_sec + (time_t)opts->interval)
			deadline = now;
		if (!wait_until(&deadline, &sigs))
			break;
		if (sample_once(s, opts, out, true, values, valid))
			goto io_error;
	}
	/* as Windows: also after Ctrl+C, on the console */
	fputs("Exiting, please wait...\r\n", stdout);
	if (out != stdout && fclose(out)) {
		out = stdout;
		goto io_error;
	}
	out = stdout;
	fputs("The command completed successfully.\r\n", stdout);
	ret = TP_EXIT_OK;
	goto out;
io_error:
	fputs("Error: Cannot write the output.\n", stderr);
out:
	if (out != stdout)
		fclose(out);
	free(values);
	free(valid);
	free(paths);
	sampler_free(s);
	free(s);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}

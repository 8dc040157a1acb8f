// SPDX-License-Identifier: MIT
/*
 * provider.c - PerfStartProvider(Ex), PerfStopProvider, PerfSetCounterSetInfo: provider
 * state, template checks, and opening (or creating) the counter set's pinned maps. The
 * list of providers and the lookups in it are in provlist.c, below every provider file.
 */
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>

#include "ctrtype.h"
#include "internal.h"

_Static_assert(sizeof(ULONG) == 4 && sizeof(ULONGLONG) == 8 && sizeof(WCHAR) == 2, "Win32 types");
_Static_assert(sizeof(GUID) == 16 && _Alignof(GUID) == 4, "GUID");
_Static_assert(sizeof(SYSTEMTIME) == 16, "SYSTEMTIME");
_Static_assert(sizeof(PERF_COUNTERSET_INFO) == 40, "PERF_COUNTERSET_INFO");
_Static_assert(offsetof(PERF_COUNTERSET_INFO, NumCounters) == 32, "NumCounters");
_Static_assert(offsetof(PERF_COUNTERSET_INFO, InstanceType) == 36, "InstanceType");
_Static_assert(sizeof(PERF_COUNTER_INFO) == 32 && _Alignof(PERF_COUNTER_INFO) == 8, "COUNTER_INFO");
_Static_assert(offsetof(PERF_COUNTER_INFO, Attrib) == 8, "Attrib");
_Static_assert(offsetof(PERF_COUNTER_INFO, Size) == 16, "Size");
_Static_assert(offsetof(PERF_COUNTER_INFO, DetailLevel) == 20, "DetailLevel");
_Static_assert(offsetof(PERF_COUNTER_INFO, Scale) == 24, "Scale");
_Static_assert(offsetof(PERF_COUNTER_INFO, Offset) == 28, "Offset");
_Static_assert(sizeof(PERF_COUNTERSET_INSTANCE) == 32, "PERF_COUNTERSET_INSTANCE");
_Static_assert(offsetof(PERF_COUNTERSET_INSTANCE, dwSize) == 16, "dwSize");
_Static_assert(offsetof(PERF_COUNTERSET_INSTANCE, InstanceId) == 20, "InstanceId");
_Static_assert(offsetof(PERF_COUNTERSET_INSTANCE, InstanceNameOffset) == 24, "NameOffset");
_Static_assert(offsetof(PERF_COUNTERSET_INSTANCE, InstanceNameSize) == 28, "NameSize");
_Static_assert(sizeof(PERF_PROVIDER_CONTEXT) == 40, "PERF_PROVIDER_CONTEXT");
_Static_assert(offsetof(PERF_PROVIDER_CONTEXT, ControlCallback) == 8, "ControlCallback");
_Static_assert(offsetof(PERF_PROVIDER_CONTEXT, MemAllocRoutine) == 16, "MemAllocRoutine");
_Static_assert(offsetof(PERF_PROVIDER_CONTEXT, MemFreeRoutine) == 24, "MemFreeRoutine");
_Static_assert(offsetof(PERF_PROVIDER_CONTEXT, pMemContext) == 32, "pMemContext");
_Static_assert(sizeof(PERF_COUNTER_IDENTITY) == 40, "PERF_COUNTER_IDENTITY");
_Static_assert(offsetof(PERF_COUNTER_IDENTITY, MachineOffset) == 28, "MachineOffset");
_Static_assert(offsetof(PERF_COUNTER_IDENTITY, NameOffset) == 32, "NameOffset");
_Static_assert(sizeof(PERF_INSTANCE_HEADER) == 8, "PERF_INSTANCE_HEADER");
_Static_assert(sizeof(PERF_COUNTER_IDENTIFIER) == 40, "PERF_COUNTER_IDENTIFIER");
_Static_assert(offsetof(PERF_COUNTER_IDENTIFIER, Status) == 16, "Status");
_Static_assert(offsetof(PERF_COUNTER_IDENTIFIER, Index) == 32, "Index");
_Static_assert(sizeof(PERF_DATA_HEADER) == 48 && _Alignof(PERF_DATA_HEADER) == 8, "DATA_HEADER");
_Static_assert(offsetof(PERF_DATA_HEADER, PerfTimeStamp) == 8, "PerfTimeStamp");
_Static_assert(offsetof(PERF_DATA_HEADER, PerfFreq) == 24, "PerfFreq");
_Static_assert(offsetof(PERF_DATA_HEADER, SystemTime) == 32, "SystemTime");
_Static_assert(sizeof(PERF_COUNTER_HEADER) == 16, "PERF_COUNTER_HEADER");
_Static_assert(offsetof(PERF_COUNTER_HEADER, dwType) == 4, "dwType");
_Static_assert(sizeof(PERF_MULTI_INSTANCES) == 8 && sizeof(PERF_MULTI_COUNTERS) == 8, "MULTI");
_Static_assert(sizeof(PERF_COUNTER_DATA) == 8, "PERF_COUNTER_DATA");
_Static_assert(sizeof(PERF_COUNTERSET_REG_INFO) == 32, "PERF_COUNTERSET_REG_INFO");
_Static_assert(sizeof(PERF_COUNTER_REG_INFO) == 48 && _Alignof(PERF_COUNTER_REG_INFO) == 8,
	       "PERF_COUNTER_REG_INFO");
_Static_assert(offsetof(PERF_COUNTER_REG_INFO, AggregateFunc) == 40, "AggregateFunc");
_Static_assert(sizeof(PERF_STRING_BUFFER_HEADER) == 8 && sizeof(PERF_STRING_COUNTER_HEADER) == 8,
	       "STRING headers");

ULONG PerfStartProviderEx(GUID *ProviderGuid, PERF_PROVIDER_CONTEXT *ProviderContext,
			  HANDLE *Provider)
{
	PERF_PROVIDER_CONTEXT ctx = {.ContextSize = sizeof(ctx)};
	struct perflib_provider *prov;
	int err;

	if (!ProviderGuid || !Provider)
		return ERROR_INVALID_PARAMETER;
	if (ProviderContext) {
		if (ProviderContext->ContextSize < sizeof(PERF_PROVIDER_CONTEXT))
			return ERROR_INVALID_PARAMETER;
		/* the routines come as a pair */
		if (!ProviderContext->MemAllocRoutine != !ProviderContext->MemFreeRoutine)
			return ERROR_INVALID_PARAMETER;
		ctx = *ProviderContext;
		ctx.ContextSize = sizeof(ctx);
	}
	prov = perflib_prov_new();
	if (!prov)
		return ERROR_OUTOFMEMORY;
	memset(prov, 0, sizeof(*prov));
	prov->guid = *ProviderGuid;
	prov->ctx = ctx;
	pthread_mutex_init(&prov->lock, NULL);
	atomic_store(&prov->magic, PERFLIB_PROVIDER_MAGIC);
	err = perflib_cb_provider_started(prov);
	if (err) {
		atomic_store(&prov->magic, PERFLIB_PROVIDER_DEAD);
		pthread_mutex_destroy(&prov->lock);
		perflib_prov_retire(prov);
		return perflib_win32_error(err);
	}
	perflib_providers_add(prov);
	*Provider = prov;
	return ERROR_SUCCESS;
}

ULONG PerfStartProvider(GUID *ProviderGuid, PERFLIBREQUEST ControlCallback, HANDLE *phProvider)
{
	PERF_PROVIDER_CONTEXT ctx = {
		.ContextSize = sizeof(ctx),
		.ControlCallback = ControlCallback,
	};

	return PerfStartProviderEx(ProviderGuid, &ctx, phProvider);
}

static void ctrset_free(struct perflib_provider *prov, struct perflib_ctrset *set)
{
	if (!set)
		return;
	size_t owned_len = 0, refs_len = 0;
	uint32_t c;

	perflib_store_close(set->map);
	perflib_prov_free(prov, set->gidx);
	perflib_prov_free(prov, set->dense);
	perflib_prov_free(prov, set->pcpu);
	/* one table of each kind for every class, class 0's first (ctrset_tables) */
	for (c = 0; c < set->nr_classes; c++) {
		owned_len += set->cls[c].capacity;
		refs_len += set->cls[c].refs_len;
	}
	if (set->cls[0].refs)
		perflib_table_free((void *)set->cls[0].refs, refs_len);
	perflib_prov_free(prov, set->counters);
	if (set->cls[0].owned)
		perflib_table_free((void *)set->cls[0].owned, owned_len);
	perflib_prov_free(prov, set);
}

/* the granules class @c of @set may have slots in: the first, and how many */
static uint64_t gidx_span(const struct perflib_ctrset_class *c, uint64_t *ret_first)
{
	uint64_t first = (uintptr_t)c->base >> PERFLIB_GIDX_SHIFT;

	*ret_first = first;
	if (!c->span)
		return 0;
	return (((uintptr_t)c->base + c->span - 1) >> PERFLIB_GIDX_SHIFT) - first + 1;
}

/* publish the entries of @set in @tab (prov->lock held) */
static void gidx_publish(struct perflib_gidx_table *tab, struct perflib_ctrset *set)
{
	for (uint32_t i = 0; i < set->nr_gidx; i++) {
		struct perflib_gidx *e = &set->gidx[i];
		const struct perflib_gidx *_Atomic *head =
			&tab->b[perflib_bucket(e->granule, PERFLIB_GIDX_BITS)];

		e->next = atomic_load_explicit(head, memory_order_relaxed);
		atomic_store_explicit(head, e, memory_order_release);
	}
}

/*
 * Put @set in @prov's index by address (prov->lock held, @set complete and not yet in
 * prov->sets: a value function may find it from here on). The table is made with the
 * second set, with the first one's entries. 0 or -ENOMEM (then nothing was published).
 */
static int gidx_add(struct perflib_provider *prov, struct perflib_ctrset *set)
{
	struct perflib_gidx_table *tab = atomic_load_explicit(&prov->gidx, memory_order_relaxed);
	struct perflib_ctrset *old;
	uint64_t first, n = 0, k;
	uint32_t c;

	for (c = 0; c < set->nr_classes; c++)
		n += gidx_span(&set->cls[c], &first);
	set->gidx = perflib_prov_alloc(prov, (n ? n : 1) * sizeof(*set->gidx));
	if (!set->gidx)
		return -ENOMEM;
	for (c = 0; c < set->nr_classes; c++) {
		uint64_t nr = gidx_span(&set->cls[c], &first);

		for (k = 0; k < nr; k++, set->nr_gidx++) {
			set->gidx[set->nr_gidx].granule = first + k;
			set->gidx[set->nr_gidx].set = set;
		}
	}
	if (!tab && atomic_load_explicit(&prov->sets, memory_order_relaxed)) {
		tab = perflib_prov_alloc(prov, sizeof(*tab));
		if (!tab)
			return -ENOMEM;
		for (old = atomic_load_explicit(&prov->sets, memory_order_relaxed); old;
		     old = old->next)
			gidx_publish(tab, old);
		atomic_store_explicit(&prov->gidx, tab, memory_order_release);
	}
	if (tab)
		gidx_publish(tab, set);
	return 0;
}

ULONG PerfStopProvider(HANDLE ProviderHandle)
{
	struct perflib_provider *prov = perflib_providers_remove(ProviderHandle);
	struct perflib_ctrset *set, *next;
	uint32_t i, c;

	/* NULL, a stale handle, or a second stop: refused, not a crash */
	if (!prov)
		return ERROR_INVALID_PARAMETER;

	/*
	 * The instances go while the procs entries still name this process: a kill from here on
	 * is cleaned up by the kernel's exit reaper, which finds a process by its procs entry.
	 */
	pthread_mutex_lock(&prov->lock);
	atomic_store(&prov->magic, PERFLIB_PROVIDER_DEAD);
	for (set = atomic_load(&prov->sets); set; set = set->next) {
		for (c = 0; c < set->nr_classes; c++) {
			for (i = 0; i < perflib_ctrset_slots(set, c) && set->nr_live; i++) {
				if (atomic_load_explicit(&set->cls[c].owned[i],
							 memory_order_relaxed))
					perflib_instance_retire(set, perflib_slot_id_make(c, i));
			}
		}
	}
	pthread_mutex_unlock(&prov->lock);
	perflib_cb_provider_stopping(prov);
	for (set = atomic_load(&prov->sets); set; set = set->next)
		perflib_exit_leave(set->map);
	pthread_mutex_lock(&prov->lock);
	set = atomic_exchange(&prov->sets, NULL);
	perflib_prov_free(prov, atomic_exchange(&prov->gidx, NULL));
	for (i = 0; i < 1u << PERFLIB_GUID_BITS; i++)
		atomic_store_explicit(&prov->by_guid[i], NULL, memory_order_relaxed);
	pthread_mutex_unlock(&prov->lock);
	for (; set; set = next) {
		next = set->next;
		ctrset_free(prov, set);
	}
	pthread_mutex_destroy(&prov->lock);
	perflib_prov_retire(prov);
	return ERROR_SUCCESS;
}

static bool instance_type_valid(ULONG t)
{
	return t == PERF_COUNTERSET_SINGLE_INSTANCE || t == PERF_COUNTERSET_MULTI_INSTANCES ||
	       t == PERF_COUNTERSET_SINGLE_AGGREGATE || t == PERF_COUNTERSET_MULTI_AGGREGATE ||
	       t == PERF_COUNTERSET_SINGLE_AGGREGATE_HISTORY ||
	       t == PERF_COUNTERSET_INSTANCE_AGGREGATE;
}

/* does the pinned registration describe the same counters as the template? */
static bool info_matches(const struct perflib_info *info, const PERF_COUNTERSET_INFO *tmpl,
			 const PERF_COUNTER_INFO *c)
{
	const struct perflib_info_counter *ic = (const void *)(info + 1);
	ULONG i;

	if (info->nr_counters != tmpl->NumCounters || info->instance_type != tmpl->InstanceType)
		return false;
	for (i = 0; i < tmpl->NumCounters; i++) {
		if (ic[i].id != c[i].CounterId || ic[i].type != c[i].Type ||
		    (ic[i].attrib & PERF_ATTRIB_BY_REFERENCE) !=
			    (c[i].Attrib & PERF_ATTRIB_BY_REFERENCE))
			return false;
	}
	return true;
}

static int cmp_counter(const void *a, const void *b)
{
	const struct perflib_counter *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* the process-local tables the hot path uses: counters by id, owned slots */
static int ctrset_tables(struct perflib_provider *prov, struct perflib_ctrset *set,
			 const PERF_COUNTER_INFO *c, ULONG n)
{
	size_t owned_len = 0, refs_len = 0;
	uint32_t i, k, max_id = 0;
	_Atomic uint8_t *owned;
	void *_Atomic *refs;

	/*
	 * one table of each kind, holding every class's in turn, with an entry per slot the
	 * set may ever hold: address space in the process-wide tables mapping (vspace.c), so
	 * memory follows the slots this process touches and no mapping is added per set
	 */
	for (k = 0; k < set->nr_classes; k++)
		owned_len += set->cls[k].capacity;
	set->counters = perflib_prov_alloc(prov, n * sizeof(*set->counters));
	owned = perflib_table_alloc(owned_len);
	if (!set->counters || !owned)
		return -ENOMEM;
	for (k = 0; k < set->nr_classes; k++) {
		set->cls[k].owned = owned;
		owned += set->cls[k].capacity;
	}
	/* per-CPU counters as the registration has them, whatever the template says */
	if (set->map->info->nr_cpus) {
		set->pcpu = perflib_prov_alloc(prov, n * sizeof(*set->pcpu));
		if (!set->pcpu)
			return -ENOMEM;
		/* numbered 1, 2, ... by position (perflib_info_check): the last is their count */
		for (i = 0; i < n; i++) {
			set->pcpu[i] = (uint16_t)set->map->counters[i].pcpu;
			if (set->pcpu[i])
				set->pcpu_lines = perflib_pcpu_lines(set->pcpu[i]);
		}
		set->nr_cpus = set->map->info->nr_cpus;
	}
	for (i = 0; i < n; i++) {
		set->counters[i].id = c[i].CounterId;
		set->counters[i].type = c[i].Type;
		set->counters[i].offset = (uint32_t)sizeof(PERF_COUNTERSET_INSTANCE) + 8 * i;
		set->counters[i].size = ctrtype_size(c[i].Type);
		set->counters[i].byref = !!(c[i].Attrib & PERF_ATTRIB_BY_REFERENCE);
		set->counters[i].pos = (uint16_t)i;
		set->counters[i].pcpu = set->pcpu && set->pcpu[i];
		if (set->counters[i].byref)
			set->has_byref = true;
		if (c[i].CounterId > max_id)
			max_id = c[i].CounterId;
	}
	qsort(set->counters, n, sizeof(*set->counters), cmp_counter);
	for (i = 1; i < n; i++) {
		if (set->counters[i].id == set->counters[i - 1].id)
			return -EINVAL; /* duplicate counter id */
	}
	/* ids are small in practice: a dense table makes the lookup one load */
	set->max_dense_id = max_id < 4096 ? max_id + 1 : 4096;
	set->dense = perflib_prov_alloc(prov, set->max_dense_id * sizeof(*set->dense));
	if (!set->dense)
		return -ENOMEM;
	if (set->has_byref) {
		for (k = 0; k < set->nr_classes; k++) {
			set->cls[k].refs_len = (size_t)set->cls[k].capacity * n * sizeof(void *);
			refs_len += set->cls[k].refs_len;
		}
		refs = perflib_table_alloc(refs_len);
		if (!refs)
			return -ENOMEM;
		for (k = 0; k < set->nr_classes; k++) {
			set->cls[k].refs = refs;
			refs += (size_t)set->cls[k].capacity * n;
		}
	}
	for (i = 0; i < n; i++) {
		if (set->counters[i].id < set->max_dense_id)
			set->dense[set->counters[i].id] = perflib_counter_pack(&set->counters[i]);
	}
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* 0 when the CounterIds of the template are distinct, -EINVAL when one repeats, -ENOMEM */
static int template_ids_unique(const PERF_COUNTER_INFO *c, ULONG n)
{
	uint32_t *ids = malloc(n * sizeof(*ids));
	int err = 0;
	ULONG i;

	if (!ids)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		ids[i] = c[i].CounterId;
	qsort(ids, n, sizeof(*ids), cmp_id);
	for (i = 1; i < n && !err; i++) {
		if (ids[i] == ids[i - 1])
			err = -EINVAL;
	}
	free(ids);
	return err;
}

/* open the counter set's pins, or create them (CAP_BPF) when it is not registered */
static int ctrset_open_maps(const PERF_COUNTERSET_INFO *tmpl, const PERF_COUNTER_INFO *c,
			    struct perflib_store **ret_map)
{
	struct perflib_counter_reg *regs;
	struct perflib_counterset_reg reg;
	struct perflib_pin_opts opts;
	struct perflib_info *info;
	size_t size;
	ULONG i;
	int err;

	err = perflib_store_open(&tmpl->CounterSetGuid, true, ret_map);
	if (err != -ENOENT)
		return err;
	regs = calloc(tmpl->NumCounters, sizeof(*regs));
	if (!regs)
		return -ENOMEM;
	memset(&reg, 0, sizeof(reg));
	reg.provider_guid = tmpl->ProviderGuid;
	reg.counterset_guid = tmpl->CounterSetGuid;
	reg.instance_type = tmpl->InstanceType;
	reg.nr_counters = tmpl->NumCounters;
	reg.counters = regs;
	for (i = 0; i < tmpl->NumCounters; i++) {
		regs[i].id = c[i].CounterId;
		regs[i].type = c[i].Type;
		regs[i].attrib = c[i].Attrib;
		regs[i].detail_level = c[i].DetailLevel;
		regs[i].scale = c[i].Scale;
		regs[i].base_id = regs[i].perf_time_id = regs[i].perf_freq_id = PERFLIB_NO_ID;
		regs[i].multi_id = PERFLIB_NO_ID;
		/* without a manifest the base is the counter that follows (ctrtype.h's rule) */
		if (i + 1 < tmpl->NumCounters && ctrtype_next_is_base(c[i].Type, c[i + 1].Type))
			regs[i].base_id = c[i + 1].CounterId;
	}
	perflib_pin_defaults(&opts);
	err = perflib_info_build(&reg, 0, &opts, &info, &size);
	free(regs);
	if (err)
		return err;
	err = perflib_store_create(info, size, &opts, ret_map);
	free(info);
	if (err == -EPERM)
		pr_debug("creating a counter set needs CAP_BPF; register it with lodctr\n");
	return err < 0 ? err : 0;
}

ULONG PerfSetCounterSetInfo(HANDLE ProviderHandle, PERF_COUNTERSET_INFO *Template,
			    ULONG TemplateSize)
{
	struct perflib_provider *prov = perflib_provider_lookup(ProviderHandle);
	PERF_COUNTER_INFO *c;
	const struct perflib_ctrset *_Atomic *bucket;
	struct perflib_ctrset *set = NULL;
	ULONG i, n;
	int err;

	if (!prov || !Template || TemplateSize < sizeof(*Template))
		return ERROR_INVALID_PARAMETER;
	n = Template->NumCounters;
	if (n == 0 || n > PERFLIB_MAX_COUNTERS ||
	    TemplateSize < sizeof(*Template) + (uint64_t)n * sizeof(PERF_COUNTER_INFO) ||
	    !instance_type_valid(Template->InstanceType))
		return ERROR_INVALID_PARAMETER;
	c = (PERF_COUNTER_INFO *)(Template + 1);
	for (i = 0; i < n; i++) {
		/* variable-length values do not fit an 8-byte slot */
		if ((c[i].Type & CTRTYPE_SIZE_MASK) == PERF_SIZE_VARIABLE_LEN)
			return ERROR_INVALID_PARAMETER;
	}
	/* before anything is pinned: a refused template must not leave a counter set behind */
	err = template_ids_unique(c, n);
	if (err)
		return perflib_win32_error(err);
	pthread_mutex_lock(&prov->lock);
	if (perflib_ctrset_find(prov, &Template->CounterSetGuid)) {
		err = -EEXIST;
		goto out;
	}
	set = perflib_prov_alloc(prov, sizeof(*set));
	if (!set) {
		err = -ENOMEM;
		goto out;
	}
	set->prov = prov;
	set->guid = Template->CounterSetGuid;
	set->instance_type = Template->InstanceType;
	set->nr_counters = n;
	set->proc_index = -1;
	err = ctrset_open_maps(Template, c, &set->map);
	if (err)
		goto out;
	if (!info_matches(set->map->info, Template, c)) {
		pr_warn("counter set registration differs from the provider's template; "
			"re-run ctrpp and lodctr with the same manifest\n");
		err = -ENOTUNIQ; /* ERROR_ALREADY_EXISTS, as the header documents */
		goto out;
	}
	/* first privileged use: attach the exit reaper if lodctr did not (reaper.c) */
	perflib_reaper_attach(set->map);
	/* the kernel frees this process's slots of the set when it exits */
	perflib_exit_join(set->map);
	/*
	 * segments that the exit reaper emptied (providers that died: their slots freed in the
	 * kernel, where nothing is given back) are given back by the set's next provider
	 */
	for (i = 0; i < set->map->nr_classes; i++) {
		if (perflib_store_shrinkable(set->map, i))
			perflib_store_shrink(set->map, i);
	}
	/* nothing of it stays open: creates and deletes use its mappings (the index too) */
	perflib_store_trim(set->map);
	set->nr_classes = set->map->nr_classes;
	for (i = 0; i < set->nr_classes; i++) {
		struct perflib_ctrset_class *cc = &set->cls[i];
		const struct perflib_class *mc = &set->map->cls[i];

		cc->capacity = mc->geo->capacity;
		cc->slot_size = mc->slot_size;
		cc->base = mc->data + PERFLIB_BLOCK_OFFSET;
		cc->span = (size_t)cc->capacity * cc->slot_size;
		cc->recip_span = cc->span < PERFLIB_RECIP_SPAN ? cc->span : PERFLIB_RECIP_SPAN;
		cc->recip = perflib_class_recip(cc->slot_size);
		cc->pcpu_offset = mc->geo->pcpu_offset;
	}
	err = ctrset_tables(prov, set, c, n);
	if (err)
		goto out;
	/*
	 * the library lays the slots out: 8 bytes each, in template order; per CPU or not as
	 * the registration says (the template shows which)
	 */
	for (i = 0; i < n; i++) {
		c[i].Offset = 8 * i;
		if (set->pcpu && set->pcpu[i])
			c[i].Attrib |= PERF_ATTRIB_LINUX_PER_CPU;
		else
			c[i].Attrib &= ~PERF_ATTRIB_LINUX_PER_CPU;
	}
	err = gidx_add(prov, set);
	if (err)
		goto out;
	perflib_cb_ctrset_added(set);
	set->next = atomic_load(&prov->sets);
	atomic_store_explicit(&prov->sets, set, memory_order_release);
	bucket = &prov->by_guid[perflib_bucket(perflib_guid_key(&set->guid), PERFLIB_GUID_BITS)];
	set->guid_next = atomic_load_explicit(bucket, memory_order_relaxed);
	atomic_store_explicit(bucket, set, memory_order_release);
	pthread_mutex_unlock(&prov->lock);
	return ERROR_SUCCESS;
out:
	pthread_mutex_unlock(&prov->lock);
	ctrset_free(prov, set);
	return perflib_win32_error(err);
}

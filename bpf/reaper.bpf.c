// SPDX-License-Identifier: MIT
/*
 * reaper.bpf.c - kernel-assisted cleanup of one counter set: when a provider process exits,
 * free the slots it still holds, exactly as the user-space reaper would (perflib_slot_reap in
 * instance.c), before its parent can even wait for it.
 *
 * Not attached itself: the machine's exit dispatcher (exit.bpf.c) tail-calls it through the
 * `progs` array when the exiting process's entry names this set, with the process's
 * identity (its tgid in its own pid namespace and its owner stamp, layout.h) in the per-CPU
 * `exit_ctx`. It finds the process's procs entry, walks the bitmap words its owner
 * summaries name in the segments its segments bits name in each of the set's size classes,
 * reading the summary words their heads name (layout.h: the cost follows the instances the
 * process held, not the set's), releases the entry and tail-calls the next set.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "perflib_bpf.h"
#include "exit.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/*
 * Every size class of the set (layout.h): its slots and live map pins, and its
 * geometry; the loader gives a set with fewer classes class 0's for the others, never
 * walked (nr_classes).
 */
PERFLIB_DATA_MAP_RAW(slots);
PERFLIB_LIVE_MAP(live);
PERFLIB_DATA_MAP_RAW(slots1);
PERFLIB_LIVE_MAP(live1);
PERFLIB_DATA_MAP_RAW(slots2);
PERFLIB_LIVE_MAP(live2);
PERFLIB_DATA_MAP_RAW(slots3);
PERFLIB_LIVE_MAP(live3);
PERFLIB_GEOMETRY(geo1);
PERFLIB_GEOMETRY(geo2);
PERFLIB_GEOMETRY(geo3);
const volatile __u32 nr_classes = 1;
/* class 0's s0/live: its first procs entry word and first pending word (layout.h) */
const volatile __u32 procs_word0 = 0;
const volatile __u32 pending_word0 = 0;

/* slots freed since load, for tests and `bpftool map dump` */
__u64 nr_reaped = 0;

/*
 * The walk's state (exit.h): global functions, which the verifier checks once each
 * whatever calls them, take scalars only. Checked in their callers' states instead, as
 * static bpf_loop() callbacks, the walk's four nested loops made the verifier process
 * 189,816 instructions where it now processes about 3,100 (0.5 s of CPU per counter set
 * registered, seconds on a loaded machine, against 0.05 s).
 */
static __always_inline struct perflib_exit_walk *reap_get(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&walk, &zero);
}

/*
 * Is the recorded (pid, start) the exiting process? Only an exact match: a start of 0
 * (a claimer killed before it wrote its start time, or a process that could not read
 * /proc) is left to the lazy reaper, which checks the pid alone. Matching on the pid
 * alone here could free a slot that a process of another pid namespace, with the same
 * pid, is claiming right now.
 */
static __always_inline int start_matches(__u64 recorded, __u64 start)
{
	return recorded == start;
}

/*
 * word @w of procs entry @i (struct perflib_proc: {state, gen}, {pid, flags}, start, token)
 * in class 0's s0/live, after the summary heads (layout.h); with @w = PERFLIB_PROC_WORDS, the
 * entry's pending word. NULL past the map.
 */
static __noinline __u64 *proc_word(__u32 i, __u32 w)
{
	void *s0 = perflib_segment(&live, 0);
	__u32 key = w < PERFLIB_PROC_WORDS ? procs_word0 + PERFLIB_PROC_WORDS * i + w
					   : pending_word0 + i;

	return s0 ? bpf_map_lookup_elem(s0, &key) : NULL;
}

/*
 * procs entry @i: before the walk, is it the exiting process's (then note it, and the slot
 * it was freeing); after it (r->release), free it if it still is. The entry stays
 * LIVE while its owner summaries are walked: a claimer clears the summaries of a FREE
 * entry only.
 */
__noinline int perflib_reaper_proc(__u32 i)
{
	struct perflib_exit_walk *r = reap_get();
	__u64 w, *p = proc_word(i, 0), *pid, *start;

	if (!r || !p)
		return 0;
	/* {state, gen}: one 8-byte word (layout.h, userspace/slot.c) */
	w = *(volatile __u64 *)p;
	if (perflib_proc_word_state(w) != PERFLIB_PROC_LIVE)
		return 0;
	pid = proc_word(i, 1);
	start = proc_word(i, 2);
	if (!pid || !start)
		return 0;
	/* the pid is the first 4 bytes of the word {pid, flags} */
	if (*(volatile __u32 *)pid != r->tgid || !start_matches(*(volatile __u64 *)start, r->start))
		return 0;
	if (r->release) {
		__sync_val_compare_and_swap(p, w, perflib_proc_word_next(w, PERFLIB_PROC_FREE));
		return 0;
	}
	if (r->found < 2)
		r->ent[r->found & 1] = i;
	r->found++;
	/* a slot it was freeing when it died (its live bit may already be clear) */
	p = proc_word(i, PERFLIB_PROC_WORDS);
	if (p)
		r->pending = *(volatile __u64 *)p;
	return 0;
}

/* every procs entry of the set */
__noinline int perflib_reaper_procs(void)
{
	struct bpf_iter_num it;
	int *k;

	perflib__for(it, k, perflib_geo.nr_procs) perflib_reaper_proc((__u32)*k);
	bpf_iter_num_destroy(&it);
	return 0;
}

/*
 * Is slot @slot held by the exiting process? Its word then (never 0: not FREE), else 0. One
 * copy for every class.
 */
static __noinline __u64 slot_ours(struct perflib_exit_walk *r, void *slot)
{
	__u64 w = perflib_slot_word(slot);

	if (perflib_word_state(w) == PERFLIB_SLOT_FREE || perflib_word_pid(w) != r->tgid)
		return 0;
	if (!start_matches(((struct perflib_slot_hdr *)slot)->owner_start, r->start))
		return 0;
	return w;
}

/* floor(log2(@q)), q > 0: a global function, which the verifier checks once */
__noinline __u32 perflib_reaper_log2(__u64 q)
{
	return perflib_log2_64(q);
}

/* perflib_seg_first: a global function, one copy for the walk and the slots */
__noinline __u32 perflib_reaper_seg_first(__u32 k, __u32 seg0)
{
	return (__u32)perflib_seg_first(k & 63, seg0);
}

/*
 * Free slot @slot of the exiting process (slot @i of a class of geometry @g, entry @so of
 * segment @k, its word @w) as user space does: taken by CAS to CLAIMED(gen + 1, pid), which
 * makes its index entries stale (layout.h: whoever meets them clears them), then given
 * back (zeroed from the Windows block on, its bit in @live_map cleared, FREE(gen + 2, 0)).
 * Inlined in slot_in, its one caller, itself one copy for every class: the verifier checks
 * it for each caller's maps, the kernel keeps it once (four inlined copies made the program
 * 24 KiB of kernel memory per counter set, 12 KiB with one).
 */
static __always_inline int reap_slot(struct perflib_exit_walk *r, void *slot, __u64 w, __u32 k,
				     __u32 so, void *live_map,
				     const volatile struct perflib_bpf_geometry *g)
{
	__u64 claimed;

	/* take it as the user-space reaper does: the dead owner's pid stays in the word */
	claimed = perflib_make_word(PERFLIB_SLOT_CLAIMED, perflib_gen_add(perflib_word_gen(w), 1),
				    r->tgid);
	if (__sync_val_compare_and_swap((__u64 *)slot, w, claimed) != w)
		return 0;
	perflib__grelease_at(slot, live_map, g, k, so, claimed);
	r->reaped++;
	return 0;
}

/*
 * The summary words that summary heads @heads name in segment @k (seg0 @seg0): from the
 * word the first head bit set stands for to the last word of the last head bit set, as
 * first << 32 | shift << 24 | count, where a head bit stands for 2^shift summary words
 * (every count of the layout is a power of two, seg0 included). A global function: the
 * verifier checks it once, whatever calls it.
 */
__noinline __u64 perflib_heads_range(__u64 heads, __u32 n)
{
	__u64 words = perflib_seg_sum_words(0, n), first, end;
	__u32 shift;

	if (!heads)
		return 0;
	shift = perflib_reaper_log2(perflib_sum_head_span(0, n)) & 31;
	first = (__u64)perflib_reaper_log2(heads & -heads) << shift;
	end = ((__u64)perflib_reaper_log2(heads) + 1) << shift;
	if (end > words)
		end = words;
	if (end <= first)
		return 0;
	return first << 32 | (__u64)shift << 24 | (end - first);
}

/*
 * The summary heads of the exiting process's entries (r->ent) in live map @seg of segment
 * @k: r->heads, r->shift and r->sj0 (perflib_heads_range); the summary words to read
 * (0: none). One copy for every class, as reap_slot.
 */
static __noinline __u32 seg_heads(struct perflib_exit_walk *r, void *seg, __u32 nr_procs)
{
	/* the heads of entries p: one word each, from perflib_sum_head(k, seg0, nr_procs, 0) */
	__u32 h0 = (__u32)perflib_sum_head(0, r->segn, nr_procs, 0) + r->ent[0];
	__u32 h1 = h0 - r->ent[0] + r->ent[1];
	__u64 *w0 = bpf_map_lookup_elem(seg, &h0), *w1 = bpf_map_lookup_elem(seg, &h1), range;

	if (!w0 || !w1)
		return 0;
	r->heads = r->all | *(volatile __u64 *)w0 | *(volatile __u64 *)w1;
	range = perflib_heads_range(r->heads, r->segn);
	r->sj0 = (__u32)(range >> 32);
	r->shift = (__u32)(range >> 24) & 0xFF;
	return (__u32)range & 0xFFFFFF;
}

/*
 * Summary word @j of the exiting process's entries in live map @seg of segment r->seg,
 * if its head bit is set: the bitmap words to walk (r->all: every one). One copy for every
 * class.
 */
static __noinline __u64 sum_bits(struct perflib_exit_walk *r, void *seg, __u32 j)
{
	__u32 q0, q1;
	__u64 *w0, *w1;

	if (!(r->heads >> ((j >> r->shift) & 63) & 1))
		return 0;
	/* entry p's summary words: perflib_seg_sum_words apart, from perflib_sum_word(..., 0, j) */
	q0 = (__u32)perflib_sum_word(0, r->segn, 0, j);
	q1 = q0 + r->ent[1] * (__u32)perflib_seg_sum_words(0, r->segn);
	q0 += r->ent[0] * (__u32)perflib_seg_sum_words(0, r->segn);
	w0 = bpf_map_lookup_elem(seg, &q0);
	w1 = bpf_map_lookup_elem(seg, &q1);
	if (!w0 || !w1)
		return 0;
	return r->all | *(volatile __u64 *)w0 | *(volatile __u64 *)w1;
}

/*
 * Bitmap word @j of live map @seg of segment r->seg into r->bits (and the class's slot of
 * its bit 0 into r->word); 0 past the bitmap. One copy for every class.
 */
static __noinline __u64 live_bits(struct perflib_exit_walk *r, void *seg, __u32 j)
{
	__u64 *w;

	r->bits = 0;
	if (j >= perflib_seg_words(0, r->segn))
		return 0;
	w = bpf_map_lookup_elem(seg, &j);
	if (!w)
		return 0;
	r->word = r->first + 64 * j;
	r->bits = *w;
	return r->bits;
}

/*
 * The walk of a size class, one copy for every class: the walk's functions read the class
 * being walked from r->cls, and the maps and geometry of that class come from the switches
 * below (four copies of the walk, one per class, made the program 16 KiB of kernel memory
 * per counter set).
 */

/* the geometry of class @c */
static __noinline const volatile struct perflib_bpf_geometry *class_geo(__u64 c)
{
	switch (c) {
	case 1:
		return &geo1;
	case 2:
		return &geo2;
	case 3:
		return &geo3;
	default:
		return &perflib_geo;
	}
}

/* the live bitmap map of segment @k of class @c, NULL past the segments there are */
static __noinline void *class_live(__u64 c, __u32 k)
{
	/*
	 * one lookup for the four maps: the verifier inlines a lookup that sees one map only
	 * (8 more instructions each)
	 */
	void *outer = c == 1   ? (void *)&live1
		      : c == 2 ? (void *)&live2
		      : c == 3 ? (void *)&live3
			       : (void *)&live;

	return perflib_segment(outer, k);
}

/* slot @i of a class in its maps, of geometry @g: free it if the exiting process holds it */
static __noinline long slot_in(struct perflib_exit_walk *r, __u32 i, void *slots_map,
			       void *live_map, const volatile struct perflib_bpf_geometry *g)
{
	__u32 seg0 = g->seg0_slots;
	__u32 k, so;
	void *slot;
	__u64 t, w;

	/*
	 * its segment and entry there, found once with the reaper's one logarithm (locals: the
	 * walk's context keeps what the loops around need only)
	 */
	if (i >= g->capacity || !seg0)
		return 1;
	t = (__u64)(i / seg0) + 4;
	k = perflib_seg_of_group(t, perflib_reaper_log2(t));
	if (k >= PERFLIB_MAX_SEGS)
		return 1;
	so = i - perflib_reaper_seg_first(k, seg0);
	slot = perflib__gslot_at(slots_map, k, so);
	if (!slot)
		return 1;
	w = slot_ours(r, slot);
	if (!w)
		return 0;
	return reap_slot(r, slot, w, k, so, live_map, g);
}

/*
 * The walk: a global function per level, each returning 1 when the level above should stop
 * (past the segments there are), looping over the level below with an open-coded iterator
 * (the verifier checks its body until its states converge, not once per iteration; a
 * bpf_loop() callback would cost a call frame per level, and the kernel allows 8).
 */

/* slot @i of class r->cls: free it if the exiting process holds it */
__noinline int perflib_reaper_slot(__u32 i)
{
	struct perflib_exit_walk *r = reap_get();

	if (!r)
		return 1;
	switch (r->cls) {
	case 1:
		return slot_in(r, i, &slots1, &live1, &geo1) ? 1 : 0;
	case 2:
		return slot_in(r, i, &slots2, &live2, &geo2) ? 1 : 0;
	case 3:
		return slot_in(r, i, &slots3, &live3, &geo3) ? 1 : 0;
	default:
		return slot_in(r, i, &slots, &live, &perflib_geo) ? 1 : 0;
	}
}

/* bitmap word @j of segment r->seg: the slots its set bits name */
__noinline int perflib_reaper_word(__u32 j)
{
	struct perflib_exit_walk *r = reap_get();
	struct bpf_iter_num it;
	int *b, stop = 0;
	void *seg;

	if (!r)
		return 1;
	seg = class_live(r->cls, r->seg);
	if (!seg)
		return 1;
	if (!live_bits(r, seg, j))
		return 0;
	perflib__for(it, b, 64)
	{
		if (!(r->bits >> (*b & 63) & 1))
			continue;
		if (perflib_reaper_slot(r->word + (__u32)(*b & 63))) {
			stop = 1;
			break;
		}
	}
	bpf_iter_num_destroy(&it);
	return stop;
}

/* word r->sj0 + @j of the owner summaries of segment r->seg: the bitmap words to walk */
__noinline int perflib_reaper_sum(__u32 j)
{
	struct perflib_exit_walk *r = reap_get();
	struct bpf_iter_num it;
	int *b, stop = 0;
	__u64 sbits;
	void *seg;

	if (!r)
		return 1;
	seg = class_live(r->cls, r->seg);
	if (!seg)
		return 1;
	j += r->sj0;
	sbits = sum_bits(r, seg, j);
	perflib__for(it, b, sbits ? 64 : 0)
	{
		if (!(sbits >> (*b & 63) & 1))
			continue;
		if (perflib_reaper_word(64 * j + (__u32)(*b & 63))) {
			stop = 1;
			break;
		}
	}
	bpf_iter_num_destroy(&it);
	return stop;
}

/*
 * segment @k of class r->cls: the bitmap words its owner summaries name (or all), word by
 * word; none when the exiting process's summary heads are clear there. Segment 0 first:
 * its heads carry the segments bits of the others (layout.h), which it skips unread.
 */
__noinline int perflib_reaper_seg(__u32 k)
{
	struct perflib_exit_walk *r = reap_get();
	const volatile struct perflib_bpf_geometry *g;
	struct bpf_iter_num it;
	int *j, stop = 0;
	void *seg;
	__u64 more;
	__u32 cnt;

	if (!r)
		return 1;
	more = k ? r->segs >> (k & 63) : 1;
	if (!more)
		return 1; /* none past this one */
	if (!(more & 1))
		return 0;
	g = class_geo(r->cls);
	seg = class_live(r->cls, k);
	if (!seg)
		return 1;
	/* the segment's words are those of a segment 0 of its slots (layout.h counts them) */
	r->seg = k;
	r->segn = (__u32)perflib_seg_slots(k, g->seg0_slots);
	r->first = perflib_reaper_seg_first(k, g->seg0_slots);
	cnt = seg_heads(r, seg, g->nr_procs);
	if (!k)
		r->segs = r->heads;
	perflib__for(it, j, cnt)
	{
		if (perflib_reaper_sum((__u32)*j)) {
			stop = 1;
			break;
		}
	}
	bpf_iter_num_destroy(&it);
	return stop;
}

/* every segment of every class, class 0 first */
static __always_inline void classes_walk(struct perflib_exit_walk *r)
{
	struct bpf_iter_num ic, is;
	int *c, *k;

	perflib__for(ic, c, nr_classes < 4 ? nr_classes : 4)
	{
		r->cls = (__u64)*c & 3;
		perflib__for(is, k, PERFLIB_MAX_SEGS)
		{
			if (perflib_reaper_seg((__u32)*k))
				break;
		}
		bpf_iter_num_destroy(&is);
	}
	bpf_iter_num_destroy(&ic);
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(perflib_reaper, struct task_struct *p)
{
	struct perflib_exit_ctx *c;
	struct perflib_exit_walk *r = reap_get();
	__u32 zero = 0, reaped;

	c = bpf_map_lookup_elem(&exit_ctx, &zero);
	if (!c || !r)
		return 0;
	/*
	 * the fields read before the walk writes them (the others are written first: zeroing
	 * the whole context took 19 instructions)
	 */
	r->tgid = c->tgid;
	r->start = c->stamp;
	r->found = r->reaped = 0;
	r->ent[0] = r->ent[1] = 0;
	r->pending = 0;
	r->release = 0;
	r->cls = 0;
	r->segs = 0;
	perflib_reaper_procs();
	/*
	 * the slots its owner summaries name (what it held: the cost follows its instances,
	 * not the set's); every claimed and live slot when it has no procs entry (the set's
	 * procs was full) or more than two (as many providers of the set in one process)
	 */
	r->all = -(__u64)(r->found - 1 > 1); /* found == 0 or found > 2 */
	if (r->found == 1)
		r->ent[1] = r->ent[0];
	classes_walk(r);
	/* and the slot it was freeing (its live bit cleared before the slot went FREE) */
	if (r->pending) {
		__u32 id = (__u32)(r->pending - 1), i = perflib_slot_id_index(id);

		r->cls = perflib_slot_id_class(id);
		if (r->cls < nr_classes)
			perflib_reaper_slot(i);
	}
	/*
	 * its procs entries last (a claimer of a FREE entry clears its summaries): the one or
	 * two noted, else every entry; each if it still names the process (a CAS from the word
	 * just read: an entry taken meanwhile has moved on)
	 */
	r->release = 1;
	if (r->found > 2) {
		perflib_reaper_procs();
	} else if (r->found) {
		perflib_reaper_proc(r->ent[0]);
		if (r->ent[1] != r->ent[0])
			perflib_reaper_proc(r->ent[1]);
	}
	reaped = r->reaped;
	if (reaped)
		__sync_fetch_and_add(&nr_reaped, reaped);
	perflib_exit_next(ctx, c);
	return 0;
}

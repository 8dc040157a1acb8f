/* SPDX-License-Identifier: MIT */
/*
 * retire.pml - the protocol by which processes grow, retire and open the segments of a
 * counter set and claim slots in them (userspace/segment.c, userspace/instance.c), for spin.
 * tests/model/test_model.sh checks it exhaustively: `spin -a retire.pml` (the protocol of
 * today) must pass; `spin -a -DOLD retire.pml` (the one before the epoch checks) must fail,
 * and so must each half of it: -DOLD_CLAIM (claim_scan's), -DOLD_REFRESH (class_refresh's).
 *
 * Modelled: ONE size class and ONE top segment k of it (those below are always there), retired
 * and grown again as often as the bounds allow: each time it is made anew it is another pair
 * of BPF maps, an "incarnation" (1, 2, 3...: its map id, never reused; 0 = none).
 *   nr		ctl.nr_segs[cls] > k: k published (a count in the C code, 0/1 here)
 *   epoch	ctl.epoch[cls]: retirements of the class, ever (only goes up)
 *   pin	the incarnation the pinned directory s<k>/ holds (its data and live pins)
 *   bits[i]	live bits set in incarnation i by claimers (claimed, or being claimed)
 *   held[i]	claims that passed in i, not given back yet
 *   retired[i]	i's pins are gone: its maps are freed once the last process unmaps them
 *   lock	the set lock (an flock on the set's directory: released when its holder dies)
 *
 * RETIRER (perflib_store_shrink, RETIRES turns), each turn under the lock:
 *   R1 perflib_store_refresh, perflib_store_shrinkable: k published, its bits all clear
 *   R2 seg_retire: CAS ctl.nr_segs k+1 -> k (seq_cst); seg_unpublish; seq_cst fence
 *   R3 seg_empty: a bit set -> seg_publish again (nr = 1), the turn ends
 *   R4 else decided: ctl.epoch++ (seq_cst), then the directory renamed away, removed (pin = 0)
 *   It may be killed after R2 or after R4's epoch++ (not with -DNOKILL): the kernel releases
 *   the lock, nr stays 0, the pins stay.
 * GROWER (perflib_store_grow_held -> grow_locked, GROWS turns), under the lock:
 *   G1 ctl_nr_segs: published already -> done
 *   G2 no directory (pin == 0): perflib_seg_create, perflib_seg_pin, rename (an incarnation
 *      made); a directory there is a killed retirer's, whole: published again as it is
 *   G3 seg_publish: the outer maps, then CAS nr_segs k -> k+1
 * CLAIMER (PerfCreateInstance -> perflib_instance_create, CREATES times; two of them), with
 * its own view: v_inc the incarnation of k it has open and mapped (0 none), v_epoch the epoch
 * the view was checked at. A create:
 *   C1 slot_claim -> perflib_store_refresh -> class_refresh (inline refresh): the control word
 *      (perflib_store_ctl_read: epoch, then nr); the epoch moved -> class_retired: k not
 *      published any more, or seg_same: its pin is another map (or none) -> dropped (v_inc =
 *      0); k published and not open -> perflib_seg_open: the data pin, then the live pin (two
 *      opens). OLD_REFRESH: an open failing (ENOENT) fails the create. Now: the epoch is read
 *      again after the opens; moved -> what was opened is dropped, start again.
 *   C2 k not in the view: no room (slot_claim -> claim_held -> perflib_store_grow_held): G1-G3 inline, C1 again
 *   C3 claim_scan -> slot_try: our live bit set in v_inc, seq_cst fence, nr_segs loaded, then
 *      the epoch (OLD_CLAIM: not); k unpublished or the epoch not v_epoch -> claim_undo (bit
 *      cleared), -EAGAIN: the lock taken and released, C1, and nr 0 while the view has k ->
 *      G1-G3 (a killed retirer's segment published again); C1 again. (The C code's
 *      claim_held does C1-C3 while holding the lock, so nothing moves meanwhile: a subset
 *      of the interleavings modelled here.)
 *   C4 slot_fill, slot_index -> key_unique: perflib_store_refresh again (its error ignored),
 *      then perflib_slot_publish writes LIVE through the view's mapping
 *   C5 PerfDeleteInstance of the instance kept by the last create, if any; this one deleted
 *      too, or kept until the next create is done (a view refreshed while an older instance
 *      is held). A deleted one's bit cleared: a retirer may take k again (retire/grow cycles)
 *
 * Assumed: sequential consistency (spin's interleaving) of the shared variables: the C code has
 * seq_cst fences or RMWs between a claimer's bit and its loads and between a retirer's CAS and
 * its look at the bits, the epoch moves (seq_cst RMW) before the pins go (syscalls), and the
 * loads of the control word are acquire, in the order modelled. Map ids are unique. The lock
 * is an flock: one holder, released when it dies. BPF programs are not modelled: they claim
 * only in the segments the outer maps hold, and every update of an outer map waits for an RCU
 * grace period (no program still runs with the old entry), before nr_segs changes.
 *
 * Checked (an assertion names its property: spin prints it when it is violated), and no
 * invalid end state (no process blocked for ever):
 *   p1_claim_live	a claim that passed is in an incarnation not retired (the ABA on
 *			nr_segs: the SIGSEGV in perflib_slot_publish after the refresh unmapped it)
 *   p2_held_in_view	after every refresh, the instances a claimer holds (the one being created,
 *			at publish; one kept) are in its view's incarnation, not retired
 *   p3_retire_unheld	a retirer never removes the pins of an incarnation with a claimed slot
 *   p4_create_ok	a create never fails with ENOENT because a retirement raced its refresh
 *			(OLD_REFRESH: it returned ERROR_NOT_FOUND)
 *   p5_enoent_retired	an open fails with ENOENT only after a retirement (else: corruption)
 *   p6_pins_same	the data and live pins an open accepts are of the same incarnation
 * Experiments (-D): NOKILL no kills; CTL_NR_FIRST the refresh loads nr before the epoch (as
 * the batch lookup of an unmapped reader did: p1, p5, p6 fail; ctl_copy now reads the
 * epochs first); CLAIM_EPOCH_FIRST claim_scan
 * loads the epoch before nr (p1 fails). Bounds: RETIRES (2), GROWS (1), CREATES (2).
 */

#ifndef RETIRES
#define RETIRES		2	/* retirer's turns */
#endif
#ifndef GROWS
#define GROWS		1	/* grower's turns */
#endif
#ifndef CREATES
#define CREATES		2	/* instances each of the two claimers creates (and deletes) */
#endif
#define NINC		(RETIRES + 2)	/* incarnations: 0 (none), the first, one per retirement */
#ifdef OLD
#define OLD_REFRESH			/* class_refresh: an open failing fails, no epoch recheck */
#define OLD_CLAIM			/* claim_scan: nr_segs checked, not the epoch */
#endif

bit	nr = 1;			/* k published: incarnation 1 at the start */
byte	epoch;
byte	pin = 1;
byte	ninc = 1;		/* the last incarnation made */
byte	bits[NINC];
byte	held[NINC];
bool	retired[NINC];
bit	lock;

/* always 1: the property an assertion checks, named in spin's report of its violation */
hidden byte p1_claim_live = 1, p2_held_in_view = 1, p3_retire_unheld = 1;
hidden byte p4_create_ok = 1, p5_enoent_retired = 1, p6_pins_same = 1;

/*
 * An atomic { } below makes one step of at most one access to a variable another process
 * writes (assertions aside: they only look) and of what the process does with its own
 * variables around it: it changes no interleaving that matters, it only stores fewer states.
 */
inline lock_take()
{
	atomic { lock == 0 -> lock = 1 }
}

/* G1-G3: grow_locked + seg_publish, the lock held (pin, ninc change under it only) */
inline grow_locked()
{
	if
	:: nr -> skip				/* G1: grown by another meanwhile */
	:: else ->
		if
		:: pin == 0 -> atomic { ninc++; pin = ninc }	/* G2: made anew */
		:: else -> skip				/* G2: left by a killed retirer */
		fi;
		nr = 1					/* G3 */
	fi
}

/* end of a refresh: the instances the claimer holds are in its view, and not retired */
inline view_check()
{
	assert(p2_held_in_view && (c == 0 || v_inc == c && !retired[c]) &&
	       (kept == 0 || v_inc == kept && !retired[kept]));
	e = 0;
	n = 0;
	d = 0;
	l = 0
}

/*
 * C1: perflib_store_refresh -> class_refresh, of the claimer's view v_inc, v_epoch (e, n, d, l
 * its temporaries, zero outside). @strict: an error fails the create (slot_claim's), else it
 * is ignored (key_unique's).
 */
inline refresh(strict)
{
	do
	:: /* perflib_store_ctl_read: acquire loads, epoch then nr */
#ifdef CTL_NR_FIRST
		n = nr;
		e = epoch;
#else
		e = epoch;
		n = nr;
#endif
		atomic {
			if
			:: e != v_epoch ->
				/* class_retired: past want, or seg_same (the pin another map, none) */
				if
				:: v_inc != 0 && (!n || pin != v_inc) -> v_inc = 0
				:: else
				fi;
				v_epoch = e
			:: else
			fi;
			if
			:: !n || v_inc != 0 -> view_check(); break	/* nothing to open */
			:: else
			fi
		}
		/* perflib_seg_open: the data pin, then the live pin */
		d = pin;
		l = pin;
		atomic {
#ifdef OLD_REFRESH
			if
			:: d == 0 || l == 0 ->		/* ENOENT: the create fails */
				assert(p4_create_ok && !strict)
			:: else ->
				assert(p6_pins_same && d == l);
				v_inc = d
			fi;
			view_check();
			break
#else
			if
			:: epoch != e -> d = 0; l = 0	/* retired meanwhile: dropped, again */
			:: else ->
				assert(p5_enoent_retired && d != 0 && l != 0);
				assert(p6_pins_same && d == l);
				v_inc = d;
				view_check();
				break
			fi
#endif
		}
	od
}

proctype Retirer()
{
	byte t;				/* (nr and pin change under the lock only) */

	do
	:: t < RETIRES ->
		t++;
		lock_take();
		if
		:: nr && bits[pin] == 0 ->	/* R1 */
			nr = 0;			/* R2 */
#ifndef NOKILL
			if
			:: skip
			:: goto killed
			fi;
#endif
			if
			:: bits[pin] != 0 -> nr = 1	/* R3 */
			:: else ->
				epoch++;	/* R4 */
#ifndef NOKILL
				if
				:: skip
				:: goto killed
				fi;
#endif
				atomic {
					assert(p3_retire_unheld && held[pin] == 0);
					retired[pin] = true;
					pin = 0
				}
			fi
		:: else
		fi;
		lock = 0
	:: else -> break
	od;
	goto done;
killed:
	lock = 0;			/* the kernel releases the flock */
done:
	skip
}

proctype Grower()
{
	byte t;

	do
	:: t < GROWS ->
		t++;
		lock_take();
		grow_locked();
		lock = 0
	:: else -> break
	od
}

proctype Claimer()
{
	byte v_inc, v_epoch;		/* the process's view of segment k */
	byte c, kept;			/* incarnation of the instance created, of one kept */
	byte e, n, d, l, made;

	do
	:: made < CREATES ->
		made++;
again:
		refresh(1);			/* C1 */
		if
		:: v_inc == 0 ->		/* C2 */
			lock_take();
			grow_locked();
			lock = 0;
			goto again
		:: else
		fi;
		atomic { c = v_inc; bits[c]++ }	/* C3: our live bit, then a seq_cst fence */
#if defined(OLD_CLAIM)
		n = nr;
		e = v_epoch;			/* (the epoch is not looked at) */
#elif defined(CLAIM_EPOCH_FIRST)
		e = epoch;
		n = nr;
#else
		n = nr;
		e = epoch;
#endif
		if
		:: !n || e != v_epoch ->	/* -EAGAIN */
			atomic { bits[c]--; c = 0; e = 0; n = 0 }
			atomic { lock == 0 }	/* perflib_store_settle */
			refresh(1);
			if
			:: nr == 0 && v_inc != 0 ->
				lock_take();
				grow_locked();
				lock = 0
			:: else
			fi;
			goto again
		:: else ->
			atomic {
				e = 0;
				n = 0;
				held[c]++;
				assert(p1_claim_live && !retired[c])
			}
		fi;
		refresh(0);			/* C4: key_unique, then perflib_slot_publish */
		/* C5: the one kept deleted; this one too, or kept past the next create */
		if
		:: kept != 0 ->
			held[kept]--;
			atomic { bits[kept]--; kept = 0 }
		:: else
		fi;
		if
		:: made < CREATES -> atomic { kept = c; c = 0 }
		:: true ->
			held[c]--;
			atomic { bits[c]--; c = 0 }
		fi
	:: else -> break
	od
}

init
{
	atomic {
		run Retirer();
		run Grower();
		run Claimer();
		run Claimer()
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * tidwatch.h - the tid contract of SLUB's lockless fast path, checked from
 * the vCPU's side by the stressors (issue 6: "tid monotonic" among the
 * per-thread checks), for both engines: the deterministic scheduler's
 * scenario (stress_main.c) and the free-running stressor's hook
 * (stressors/stress/inject.c).
 *
 * A tid names one vCPU and one moment of its freelist (allocator/slab/
 * fastpath.c, "The lockless protocol"): a fast path that read tid T commits
 * its cmpxchg only if {freelist, tid} is still {what it read, T}.  That is
 * sound only if, wherever something else can run on the vCPU - at every
 * preemption point with interrupts enabled (an interrupt handler runs
 * there, a preempted fast path may resume there) and between operations -
 * the pair is a committed state:
 *
 *   T1a  the tid belongs to the vCPU (tid % TID_STEP is its number);
 *   T1b  the tid never moves backwards;
 *   T1c  a tid, once seen with freelist F, is never seen with another
 *        freelist - a change published under an old tid lets a fast path
 *        that read that tid earlier commit against a freelist it never saw;
 *   S1   (the vCPU's own part of it) a non-empty cpu freelist starts in
 *        the cpu slab - what a fast path that pushed with another vCPU's
 *        snapshot leaves behind.
 *
 * The watcher keeps, per (cache, vCPU), the last pair seen; with T1b that is
 * as strong as remembering every pair.  The caller must hold the vCPU, with
 * interrupts enabled and outside an interrupt handler; a pair changed by a
 * signal-delivered interrupt between the two words is read again (the
 * handler moves the tid whenever it moves the freelist, or T1c names it).
 * Each vCPU's entries are touched only by the vCPU's holder.
 */
#ifndef MM_SCHED_TIDWATCH_H
#define MM_SCHED_TIDWATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "mm/mm.h"

struct kmem_cache;

#define TIDWATCH_MAX_CACHES 16

struct tidwatch_seen {
	unsigned long tid_plus1;    /* last tid seen + 1; 0: nothing seen yet (tid 0 is vCPU 0's first) */
	void *freelist;             /* the freelist it was seen with */
	struct page *slab;          /* and the cpu slab (S1 was checked on the pair) */
	const char *where;          /* where it was seen (a static string) */
};

struct tidwatch {
	struct kmem_cache *caches[TIDWATCH_MAX_CACHES];
	int ncaches;
	int ncpus;
	struct tidwatch_seen seen[TIDWATCH_MAX_CACHES][MM_MAX_CPUS];
};

/* Watch @ncaches caches (at most TIDWATCH_MAX_CACHES; more are ignored) over @ncpus vCPUs. */
void tidwatch_init(struct tidwatch *w, struct kmem_cache *const *caches, int ncaches, int ncpus);
/* Forget every pair seen (after mm_reset, whose tids start again). */
void tidwatch_reset(struct tidwatch *w);
/*
 * Look at vCPU @cpu's pair of every watched cache at a committed point
 * (@where: a static string naming it).  True if the contract holds; false
 * with the violation in @msg.  The entry is updated either way, so one bad
 * change is reported once.
 */
bool tidwatch_observe(struct tidwatch *w, int cpu, const char *where, char *msg, size_t len);

#endif /* MM_SCHED_TIDWATCH_H */

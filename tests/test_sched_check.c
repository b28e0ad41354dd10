/* SPDX-License-Identifier: MIT */
/*
 * test_sched_check.c - mm_check at level 2, run by a task while other
 * tasks run (as the deterministic stressor runs it after every batch of
 * ops), reports no violation of a correct allocator.
 *
 * The case that once fooled it (bench/results/stress-findings/, the
 * deterministic slub stressor, seed 0xc9e10826 run 2013): the node list
 * check bounded the walk of a cache's partial list by nr_slabs + 1 (more
 * entries than slabs is a cycle) but read nr_slabs before it took
 * list_lock.  The lock was contended, the checking task waited, another
 * task allocated slabs and put them on the partial list meanwhile, and the
 * walk then found more entries than the stale bound: "S2 violated: node
 * partial list has a cycle" in a correct list.
 *
 * The scenario, placed exactly with a SCHED_SCRIPT schedule:
 *  - "holder" (vCPU 0) takes the cache's list_lock, marks, and at its first
 *    switch point after the mark is switched out for "checker";
 *  - "checker" (vCPU 1) runs mm_check level 2; at the cache's list_lock
 *    it waits (the lock is held), which runs "holder" again;
 *  - "holder" drops the lock, then fills NR_SLABS slabs, frees one object
 *    of each and shrinks the cache, which unfreezes them onto the node
 *    partial list (NR_SLABS entries, nr_slabs NR_SLABS), and ends;
 *  - "checker" takes the lock and walks a list longer than nr_slabs was
 *    when it started.  It must pass; so must a level-3 check at the end.
 * The test also checks that the schedule did what it is meant to (the
 * checker waited on the lock, the list grew meanwhile), so it cannot pass
 * by not reaching the case.  A run where the holder never takes the lock
 * passes the same checks and is the control.
 */
#include <stdatomic.h>

#include "internal.h"
#include "mm/cpu.h"
#include "mm/mm.h"
#include "mm/slab.h"
#include "sched/sched.h"
#include "slab/slab.h"
#include "test.h"

#ifndef MM_TEST_HOOKS
int main(void)
{
	TEST_SKIP("needs MM_TEST_HOOKS");
}
#else

#define NR_SLABS 4
#define SIZE     256
#define MARK_HELD 1

struct scene {
	struct mm *mm;
	struct kmem_cache *s;
	bool hold;                      /* holder takes list_lock before the checker runs */
	long nr_slabs_at_start;         /* nr_slabs when the checker began */
	unsigned long partial_meanwhile; /* nr_partial when the holder ended */
	atomic_bool holder_done;        /* the holder has ended (atomic: TSan sees the fibers as threads) */
	bool holder_done_at_check;      /* ... when the checker's mm_check returned */
	void *objs[NR_SLABS * 64];
	unsigned long nobjs;
};

static int holder(void *ctx)
{
	struct scene *sc = ctx;
	struct kmem_cache_node *n = get_node(sc->s, 0);
	struct kmem_cache_info info;
	unsigned long flags;

	if (kmem_cache_get_info(sc->s, &info))
		sched_fail("kmem_cache_get_info failed");
	if (sc->hold) {
		spin_lock_irqsave(&n->list_lock, flags);
		sched_mark(MARK_HELD);
		sched_point();          /* the script switches to the checker here */
		spin_unlock_irqrestore(&n->list_lock, flags);
	} else {
		sched_mark(MARK_HELD);
		sched_point();
	}
	/* NR_SLABS slabs, full; one object of each freed: onto the cpu partial list. */
	sc->nobjs = (unsigned long)info.objects_per_slab * NR_SLABS;
	if (sc->nobjs > sizeof(sc->objs) / sizeof(sc->objs[0]))
		sched_fail("%u objects per slab: more than the test holds", info.objects_per_slab);
	for (unsigned long i = 0; i < sc->nobjs; i++)
		if (!(sc->objs[i] = kmem_cache_alloc(sc->s, GFP_KERNEL)))
			sched_fail("kmem_cache_alloc %lu failed", i);
	for (unsigned long i = 0; i < sc->nobjs; i += info.objects_per_slab) {
		kmem_cache_free(sc->s, sc->objs[i]);
		sc->objs[i] = NULL;
	}
	/* flush_all(): every slab unfrozen onto the node partial list. */
	kmem_cache_shrink(sc->s);
	sc->partial_meanwhile = node_nr_partial(n);
	atomic_store(&sc->holder_done, true);
	return 0;
}

static int checker(void *ctx)
{
	struct scene *sc = ctx;
	struct mm_violation v;

	sc->nr_slabs_at_start = atomic_load(&get_node(sc->s, 0)->nr_slabs);
	if (!mm_check(sc->mm, 2, &v))
		sched_fail("mm_check level 2: %s", v.msg);
	sc->holder_done_at_check = atomic_load(&sc->holder_done);
	return 0;
}

static void run_scene(struct mm *mm, bool hold)
{
	struct scene sc = { .mm = mm, .hold = hold };
	sc.s = kmem_cache_create(mm, "sched-check", SIZE, 0, 0, NULL);
	REQUIRE(sc.s);

	/* holder, at its first switch point after MARK_HELD: run the checker. */
	uint8_t script[SCHED_SCRIPT_STEP_BYTES] = { 0 | SCHED_SCRIPT_SWITCH << 4, MARK_HELD, 1, 1 };
	struct sched_task_desc t[2] = {
		{ "holder", holder, &sc, 0 },
		{ "checker", checker, &sc, 1 },
	};
	struct sched_opts o;
	sched_opts_default(&o);
	o.policy = SCHED_SCRIPT;
	o.bytes = script;
	o.nbytes = sizeof(script);
	o.mm = mm;
	struct sched_result r = sched_run(&o, t, 2);
	CHECK_MSG(!r.failed, "%s: %s: %s", hold ? "lock held" : "control", sched_outcome_name(r.outcome), r.reason);

	/* The schedule reached the case: the checker began before any slab existed ... */
	CHECK_MSG(sc.nr_slabs_at_start == 0, "the checker began with nr_slabs %ld", sc.nr_slabs_at_start);
	/* ... the holder's slabs reached the partial list ... */
	CHECK_MSG(atomic_load(&sc.holder_done) && sc.partial_meanwhile >= NR_SLABS,
		  "the holder left %lu partial slabs (want %d)", sc.partial_meanwhile, NR_SLABS);
	/* ... while the checker waited for the lock (the control: after it checked). */
	CHECK_MSG(sc.holder_done_at_check == hold, "%s: the holder had%s ended when the check returned",
		  hold ? "lock held" : "control", sc.holder_done_at_check ? "" : " not");
	CHECK(r.switches >= 2);

	struct mm_violation v;
	CHECK_MSG(mm_check(mm, 3, &v), "level 3 after the run: %s", v.msg);
	for (unsigned long i = 0; i < sc.nobjs; i++)
		if (sc.objs[i])
			kmem_cache_free(sc.s, sc.objs[i]);
	kmem_cache_destroy(sc.s);
	CHECK_MSG(mm_check(mm, 3, &v), "level 3 after the cache's destroy: %s", v.msg);
}

int main(void)
{
	struct mm_config c;
	char err[256];
	mm_config_tiny(&c);
	c.nr_cpus = 2;
	c.quiet = true;
	struct mm *mm = mm_create(&c, err, sizeof(err));
	REQUIRE_MSG(mm, "%s", err);

	run_scene(mm, true);
	run_scene(mm, false);

	mm_destroy(mm);
	sched_thread_release();
	TEST_DONE();
}
#endif

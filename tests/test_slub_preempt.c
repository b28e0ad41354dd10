/* SPDX-License-Identifier: MIT */
/*
 * test_slub_preempt.c - SLUB's fast paths against what can run between
 * their instructions, driven through the CPU model's preemption points:
 *
 *  - an interrupt at BEFORE_CMPXCHG that allocates twice and frees the
 *    first object again puts the same freelist head back with another
 *    next: only the tid makes the interrupted cmpxchg fail (the 2008
 *    cmpxchg_local revert; bug zoo slub-aba-single-cmpxchg);
 *  - a migration between reading the tid and the cpu area, and back before
 *    the cmpxchg: only the consistency loop keeps another vCPU's freelist
 *    out (2015; slub-tid-cpu-mismatch);
 *  - a remote free racing with acquire_slab() freezing a node partial
 *    slab: only the cmpxchg keeps the free (2012; slub-acquire-plain-store);
 *  - a free after the vCPU's cpu slab was flushed must take the slow path
 *    (2007's flipped test; slub-free-cond-flipped);
 *  - a seeded storm of interrupts and migrations at every point over
 *    alloc, free, bulk and kmalloc, with content patterns and the checker;
 *  - the fast paths pass their points, in order, and a flush passes one
 *    slab cmpxchg per slab it deactivates or unfreezes.
 * Every scenario ends with mm_check level 3 and exact object accounting.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "mm/mm.h"
#include "mm/cpu.h"
#include "mm/slab.h"
#include "test.h"

static struct mm *new_mm(unsigned int nr_cpus)
{
	struct mm_config c;
	char err[256];
	struct mm *mm;

	mm_config_default(&c);
	c.quiet = true;
	c.nr_cpus = nr_cpus;
	mm = mm_create(&c, err, sizeof(err));
	/* deterministic object order: the scenarios below count on it */
	if (!mm || mm_slub_configure(mm, "slab_freelist_random=0", err, sizeof(err))) {
		fprintf(stderr, "mm: %s\n", err);
		exit(1);
	}
	return mm;
}

static long live(struct kmem_cache *s)
{
	struct kmem_cache_info i;
	kmem_cache_get_info(s, &i);
	return i.nr_live;
}

static unsigned int per_slab(struct kmem_cache *s)
{
	struct kmem_cache_info i;
	kmem_cache_get_info(s, &i);
	return i.objects_per_slab;
}

/* ---------------------------------------------------------------- ABA by interrupt */

struct aba {
	struct kmem_cache *s;
	int armed;
	int ran;
	void *kept;             /* allocated in the interrupt and kept */
};

static void aba_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	struct aba *a = ctx;
	if (a->armed && point == MM_PP_BEFORE_CMPXCHG) {
		a->armed = 0;
		mm_raise_irq(mm);
	}
}

static void aba_irq(struct mm *mm, int cpu, void *ctx)
{
	struct aba *a = ctx;
	(void)mm;
	(void)cpu;
	void *x = kmem_cache_alloc(a->s, GFP_ATOMIC);   /* the head the interrupted task read */
	void *y = kmem_cache_alloc(a->s, GFP_ATOMIC);   /* its "next" */
	kmem_cache_free(a->s, x);                        /* the head is back, next is not */
	a->kept = y;
	a->ran++;
}

static void test_aba_interrupt(void)
{
	struct mm *mm = new_mm(2);
	struct aba a = { 0 };
	void *o[8];

	a.s = kmem_cache_create(mm, "pp-aba", 64, 0, 0, NULL);
	REQUIRE(a.s);
	REQUIRE(mm_cpu_attach(mm, 0) == 0);
	o[0] = kmem_cache_alloc(a.s, GFP_KERNEL);        /* a cpu slab with a long freelist */
	mm_set_irq_handler(mm, aba_irq, &a);
	mm_set_sched_hook(mm, aba_hook, &a);
	a.armed = 1;
	o[1] = kmem_cache_alloc(a.s, GFP_KERNEL);
	mm_set_sched_hook(mm, NULL, NULL);
	mm_set_irq_handler(mm, NULL, NULL);
#ifdef MM_TEST_HOOKS
	CHECK(a.ran == 1);
#endif
	REQUIRE(o[1]);
	for (int i = 2; i < 8; i++)
		o[i] = kmem_cache_alloc(a.s, GFP_KERNEL);
	/* every object handed out once */
	for (int i = 0; i < 8; i++) {
		CHECK_MSG(o[i] != a.kept, "object %p handed out twice (interrupt kept it)", o[i]);
		for (int j = i + 1; j < 8; j++)
			CHECK(o[i] != o[j]);
	}
	CHECK_MM(mm, 3);
	for (int i = 0; i < 8; i++)
		kmem_cache_free(a.s, o[i]);
	if (a.kept)
		kmem_cache_free(a.s, a.kept);
	CHECK_MM(mm, 3);
	if (live(a.s) >= 0)
		CHECK(live(a.s) == 0);
	kmem_cache_destroy(a.s);
	mm_destroy(mm);
}

/* ---------------------------------------------------------------- migration: tid and cpu area */

struct mig {
	int state;              /* 0: armed; 1: migrated at TID_READ; 2: migrated back; -1: off */
	int from, to;
};

static void mig_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	struct mig *m = ctx;
	if (m->state == 0 && point == MM_PP_TID_READ) {
		if (mm_migrate_current(mm, m->to) == m->to)
			m->state = 1;
	} else if (m->state == 1 && point == MM_PP_BEFORE_CMPXCHG) {
		if (mm_migrate_current(mm, m->from) == m->from)
			m->state = 2;
	}
}

static void test_tid_cpu_consistency(void)
{
	struct mm *mm = new_mm(2);
	struct kmem_cache *s = kmem_cache_create(mm, "pp-tid", 128, 0, 0, NULL);
	struct mig m = { .state = -1, .from = 0, .to = 1 };
	static void *on1[64], *on0[64];
	unsigned int per;

	REQUIRE(s);
	per = per_slab(s);
	REQUIRE(per <= 64);
	/* vCPU 1: a cpu slab with an empty cpu freelist; vCPU 0 the same */
	REQUIRE(mm_cpu_attach(mm, 1) == 1);
	for (unsigned i = 0; i < per; i++)
		REQUIRE((on1[i] = kmem_cache_alloc(s, GFP_KERNEL)));
	REQUIRE(mm_migrate_current(mm, 0) == 0);
	for (unsigned i = 0; i < per; i++)
		REQUIRE((on0[i] = kmem_cache_alloc(s, GFP_KERNEL)));
	CHECK_MM(mm, 3);

	/* free an object of vCPU 1's cpu slab from vCPU 0, migrating to 1 and back in between */
	mm_set_sched_hook(mm, mig_hook, &m);
	m.state = 0;
	kmem_cache_free(s, on1[0]);
	mm_set_sched_hook(mm, NULL, NULL);
#ifdef MM_TEST_HOOKS
	CHECK(m.state == 2);
#endif
	CHECK(mm_cpu_current(mm) == 0);
	CHECK_MM(mm, 3);
	/* and everything goes back cleanly */
	for (unsigned i = 1; i < per; i++)
		kmem_cache_free(s, on1[i]);
	for (unsigned i = 0; i < per; i++)
		kmem_cache_free(s, on0[i]);
	CHECK_MM(mm, 3);
	if (live(s) >= 0)
		CHECK(live(s) == 0);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

/* ---------------------------------------------------------------- remote free vs acquire_slab */

struct race {
	struct mm *mm;
	struct kmem_cache *s;
	pthread_t freezer;      /* the thread whose hook waits */
	atomic_int armed;
	atomic_int go;          /* freezer -> freer: free now */
	atomic_int done;        /* freer -> freezer */
	void *victim;           /* the object the other vCPU frees */
	int waited;
};

static void race_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	struct race *r = ctx;
	(void)mm;
	if (point != MM_PP_SLAB_CMPXCHG || !pthread_equal(pthread_self(), r->freezer) ||
	    !atomic_exchange(&r->armed, 0))
		return;
	/* inside acquire_slab(): list_lock held, the slab snapshot taken */
	atomic_store(&r->go, 1);
	while (!atomic_load(&r->done))
		;
	r->waited = 1;
}

static void *race_freer(void *arg)
{
	struct race *r = arg;
	if (mm_cpu_attach(r->mm, 1) != 1)
		return NULL;
	mm_cpu_detach(r->mm);                    /* hold nothing while waiting */
	while (!atomic_load(&r->go))
		sched_yield();
	mm_cpu_attach(r->mm, 1);
	kmem_cache_free(r->s, r->victim);        /* a remote free into the node partial slab */
	mm_cpu_detach(r->mm);
	atomic_store(&r->done, 1);
	return NULL;
}

static void test_remote_free_vs_acquire(void)
{
	struct race r = { 0 };
	static void *o[256];
	pthread_t t;
	unsigned int per;

	r.mm = new_mm(2);
	r.s = kmem_cache_create(r.mm, "pp-acquire", 256, 0, 0, NULL);
	REQUIRE(r.s);
	per = per_slab(r.s);
	REQUIRE(per >= 4 && 2 * per <= 256);
	REQUIRE(mm_cpu_attach(r.mm, 0) == 0);
	/* slab P full, slab Q the cpu slab, full too */
	for (unsigned i = 0; i < 2 * per; i++)
		REQUIRE((o[i] = kmem_cache_alloc(r.s, GFP_KERNEL)));
	/* one free makes P cpu partial; shrink flushes: P to the node partial list, Q full on no list */
	kmem_cache_free(r.s, o[0]);
	o[0] = NULL;
	kmem_cache_shrink(r.s);
	CHECK_MM(r.mm, 3);
	struct kmem_cache_info info;
	kmem_cache_get_info(r.s, &info);
	CHECK(info.nr_partial == 1);

	r.victim = o[1];                         /* in P */
	o[1] = NULL;
	r.freezer = pthread_self();
	mm_set_sched_hook(r.mm, race_hook, &r);
	REQUIRE(pthread_create(&t, NULL, race_freer, &r) == 0);
	atomic_store(&r.armed, 1);
	void *x = kmem_cache_alloc(r.s, GFP_KERNEL);    /* get_partial_node() -> acquire_slab(P) */
	atomic_store(&r.go, 1);                          /* without hooks: the free comes after */
	pthread_join(t, NULL);
	mm_set_sched_hook(r.mm, NULL, NULL);
#ifdef MM_TEST_HOOKS
	CHECK(r.waited == 1);
#endif
	REQUIRE(x);
	CHECK_MM(r.mm, 3);                       /* debug builds: the free must not be lost (S1) */
	kmem_cache_free(r.s, x);
	for (unsigned i = 0; i < 2 * per; i++)
		if (o[i])
			kmem_cache_free(r.s, o[i]);
	CHECK_MM(r.mm, 3);
	if (live(r.s) >= 0)
		CHECK(live(r.s) == 0);
	/* every slab can go back now: nothing is stuck in use */
	CHECK(kmem_cache_shrink(r.s) == 0);
	kmem_cache_destroy(r.s);
	mm_destroy(r.mm);
}

/* ---------------------------------------------------------------- free after a flush */

static void test_free_after_flush(void)
{
	struct mm *mm = new_mm(2);
	struct kmem_cache *s = kmem_cache_create(mm, "pp-flushed", 64, 0, 0, NULL);
	void *a, *b;

	REQUIRE(s);
	a = kmem_cache_alloc(s, GFP_KERNEL);
	b = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_shrink(s);                   /* no cpu slab any more */
	CHECK_MM(mm, 3);
	kmem_cache_free(s, a);                  /* must go to the slab, not the cpu freelist */
	CHECK_MM(mm, 3);
	kmem_cache_free(s, b);
	CHECK_MM(mm, 3);
	if (live(s) >= 0)
		CHECK(live(s) == 0);
	CHECK(kmem_cache_shrink(s) == 0);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

/* ---------------------------------------------------------------- a storm */

struct storm {
	struct kmem_cache *s;
	unsigned long rnd;
	int in_irq_objs;
	void *irq_obj[16];
	unsigned long irqs, migrations;
};

static unsigned long next_rnd(unsigned long *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void storm_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	struct storm *st = ctx;
	unsigned long r = next_rnd(&st->rnd);
	(void)point;
	if (r % 7 == 0 && mm_raise_irq(mm))
		st->irqs++;
	else if (r % 11 == 0 && mm_migrate_current(mm, (int)((r >> 8) % 4)) >= 0)
		st->migrations++;
}

/* The interrupt handler keeps a few objects of its own, alloc and free by turns. */
static void storm_irq(struct mm *mm, int cpu, void *ctx)
{
	struct storm *st = ctx;
	unsigned long r = next_rnd(&st->rnd);
	(void)cpu;
	if (st->in_irq_objs < 16 && (r & 1)) {
		void *o = (r & 2) ? kmem_cache_alloc(st->s, GFP_ATOMIC) : kmalloc(mm, 24 + (r >> 4) % 200, GFP_ATOMIC);
		if (o) {
			memset(o, 0x7e, 24);
			st->irq_obj[st->in_irq_objs++] = o;
		}
	} else if (st->in_irq_objs) {
		kfree(mm, st->irq_obj[--st->in_irq_objs]);   /* kfree works for cache objects too */
	}
}

static void test_storm(void)
{
	struct mm *mm = new_mm(4);
	struct storm st = { .rnd = 0x9e3779b97f4a7c15UL };
	enum { SLOTS = 512 };
	static unsigned char *slot[SLOTS];
	static unsigned slot_seed[SLOTS];
	unsigned long x = 12345;

	st.s = kmem_cache_create(mm, "pp-storm", 72, 0, 0, NULL);
	REQUIRE(st.s);
	mm_set_irq_handler(mm, storm_irq, &st);
	mm_set_sched_hook(mm, storm_hook, &st);
	for (int step = 0; step < 40000; step++) {
		unsigned long r = next_rnd(&x);
		int i = (int)(r % SLOTS);
		switch ((r >> 12) % 8) {
		case 0: case 1: case 2:
			if (!slot[i]) {
				slot[i] = kmem_cache_alloc(st.s, GFP_KERNEL);
				slot_seed[i] = (unsigned)r;
				if (slot[i])
					memset(slot[i], (int)slot_seed[i], 72);
			}
			break;
		case 3: case 4: case 5:
			if (slot[i]) {
				bool ok = true;
				for (int b = 0; b < 72; b++)
					ok &= slot[i][b] == (unsigned char)slot_seed[i];
				CHECK_MSG(ok, "object %p changed while allocated", (void *)slot[i]);
				kmem_cache_free(st.s, slot[i]);
				slot[i] = NULL;
			}
			break;
		case 6: {
			void *p[20];
			if (kmem_cache_alloc_bulk(st.s, GFP_KERNEL, 20, p) == 20) {
				for (int k = 0; k < 20; k++)
					memset(p[k], 0x33, 72);
				kmem_cache_free_bulk(st.s, 20, p);
			}
			break;
		}
		case 7: {
			void *k = kmalloc(mm, 1 + (r >> 20) % 500, GFP_KERNEL);
			kfree(mm, k);
			break;
		}
		}
		if (step % 4000 == 0) {
			mm_set_sched_hook(mm, NULL, NULL);
			CHECK_MM(mm, 3);
			mm_set_sched_hook(mm, storm_hook, &st);
		}
	}
	mm_set_sched_hook(mm, NULL, NULL);
	mm_set_irq_handler(mm, NULL, NULL);
#ifdef MM_TEST_HOOKS
	CHECK(st.irqs > 100 && st.migrations > 100);
#endif
	/* all distinct */
	for (int i = 0; i < SLOTS; i++)
		for (int j = i + 1; j < SLOTS; j++)
			if (slot[i] && slot[j])
				CHECK(slot[i] != slot[j]);
	CHECK_MM(mm, 3);
	for (int i = 0; i < SLOTS; i++)
		if (slot[i])
			kmem_cache_free(st.s, slot[i]);
	while (st.in_irq_objs)
		kfree(mm, st.irq_obj[--st.in_irq_objs]);
	CHECK_MM(mm, 3);
	if (live(st.s) >= 0)
		CHECK(live(st.s) == 0);
	kmem_cache_destroy(st.s);
	mm_destroy(mm);
}

/* ---------------------------------------------------------------- hotplug */

/* A vCPU going down gives its cpu slab and cpu partial slabs back (slub_cpu_dead). */
static void test_cpu_dead(void)
{
	struct mm *mm = new_mm(3);
	struct kmem_cache *s = kmem_cache_create(mm, "pp-hotplug", 512, 0, 0, NULL);
	static void *o[200];

	REQUIRE(s);
	REQUIRE(mm_cpu_attach(mm, 2) == 2);
	for (int i = 0; i < 200; i++)
		REQUIRE((o[i] = kmem_cache_alloc(s, GFP_KERNEL)));
	for (int i = 0; i < 200; i += 3) {            /* full slabs become cpu partial on vCPU 2 */
		kmem_cache_free(s, o[i]);
		o[i] = NULL;
	}
	mm_cpu_detach(mm);
	CHECK_MM(mm, 3);
	CHECK(mm_cpu_offline(mm, 2) == 0);
	CHECK_MM(mm, 3);                             /* S2: nothing left on the dead vCPU */
	REQUIRE(mm_cpu_attach(mm, 0) == 0);
	for (int i = 0; i < 200; i++)
		if (o[i])
			kmem_cache_free(s, o[i]);
	CHECK_MM(mm, 3);
	CHECK(kmem_cache_shrink(s) == 0);            /* every slab could go back */
	CHECK(mm_cpu_online(mm, 2) == 0);
	REQUIRE(mm_migrate_current(mm, 2) == 2);
	void *p = kmem_cache_alloc(s, GFP_KERNEL);
	CHECK(p != NULL);
	kmem_cache_free(s, p);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

/* ---------------------------------------------------------------- the fast paths' points */
#ifdef MM_TEST_HOOKS       /* without the hooks there are no points to pass */

/*
 * The windows the scenarios above and the fuzz targets aim at exist only
 * where the fast paths call their preemption points: a fast-path
 * kmem_cache_alloc() and kmem_cache_free() each pass TID_READ twice
 * (between reading the tid and the cpu area, the 2015 window, and after
 * both), then BEFORE_CMPXCHG and AFTER_CMPXCHG once, in that order (the
 * window after the cmpxchg is where an interrupt finds the freelist
 * already advanced).
 */
struct trace {
	enum mm_pp seen[16];
	int n;
};

static void trace_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	struct trace *t = ctx;
	(void)mm;
	if ((point == MM_PP_TID_READ || point == MM_PP_BEFORE_CMPXCHG || point == MM_PP_AFTER_CMPXCHG) &&
	    t->n < (int)(sizeof(t->seen) / sizeof(t->seen[0])))
		t->seen[t->n++] = point;
}

static void expect_trace(const struct trace *t, const char *what)
{
	static const enum mm_pp want[] = { MM_PP_TID_READ, MM_PP_TID_READ, MM_PP_BEFORE_CMPXCHG, MM_PP_AFTER_CMPXCHG };
	enum { W = sizeof(want) / sizeof(want[0]) };
	bool same = t->n == W;
	for (int i = 0; same && i < W; i++)
		same = t->seen[i] == want[i];
	char got[128] = "";
	for (int i = 0, off = 0; i < t->n && off < (int)sizeof(got) - 24; i++)
		off += snprintf(got + off, sizeof(got) - (size_t)off, " %s", mm_pp_name(t->seen[i]));
	CHECK_MSG(same, "%s: fast-path points%s; want TID_READ TID_READ BEFORE_CMPXCHG AFTER_CMPXCHG", what, got);
}

static void test_fastpath_points(void)
{
	struct mm *mm = new_mm(2);
	struct kmem_cache *s = kmem_cache_create(mm, "pp-trace", 64, 0, 0, NULL);
	struct trace t = { .n = 0 };
	REQUIRE(s);
	void *warm = kmem_cache_alloc(s, GFP_KERNEL);   /* a cpu slab with free objects */
	REQUIRE(warm);

	mm_set_sched_hook(mm, trace_hook, &t);
	void *p = kmem_cache_alloc(s, GFP_KERNEL);
	mm_set_sched_hook(mm, NULL, NULL);
	REQUIRE(p);
	expect_trace(&t, "kmem_cache_alloc");

	t.n = 0;
	mm_set_sched_hook(mm, trace_hook, &t);
	kmem_cache_free(s, p);
	mm_set_sched_hook(mm, NULL, NULL);
	expect_trace(&t, "kmem_cache_free");

	kmem_cache_free(s, warm);
	kmem_cache_destroy(s);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/*
 * mm_slub_configure("slub_fastpath=...") switches the caches that exist
 * already, not only those created after it: with irqoff a fast-path
 * alloc and free pass none of the cmpxchg variant's points, and back on
 * cmpxchg they pass them again.
 */
static void test_fastpath_switch(void)
{
	struct mm *mm = new_mm(2);
	struct kmem_cache *s = kmem_cache_create(mm, "pp-switch", 64, 0, 0, NULL);
	struct trace t = { .n = 0 };
	char err[256];
	REQUIRE(s);
	void *warm = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(warm);

	REQUIRE_MSG(!mm_slub_configure(mm, "slub_fastpath=irqoff", err, sizeof(err)), "%s", err);
	CHECK(mm_slub_fastpath(mm) == SLUB_FASTPATH_IRQOFF);
	mm_set_sched_hook(mm, trace_hook, &t);
	void *p = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, p);
	mm_set_sched_hook(mm, NULL, NULL);
	REQUIRE(p);
	CHECK_MSG(t.n == 0, "irqoff: the cache created before the switch still passes %d cmpxchg-path points", t.n);
	CHECK_MM(mm, 3);

	REQUIRE_MSG(!mm_slub_configure(mm, "slub_fastpath=cmpxchg", err, sizeof(err)), "%s", err);
	t.n = 0;
	mm_set_sched_hook(mm, trace_hook, &t);
	p = kmem_cache_alloc(s, GFP_KERNEL);
	mm_set_sched_hook(mm, NULL, NULL);
	REQUIRE(p);
	expect_trace(&t, "kmem_cache_alloc after the switch back to cmpxchg");
	kmem_cache_free(s, p);
	kmem_cache_free(s, warm);
	kmem_cache_destroy(s);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/*
 * The flush's slab cmpxchgs, each a window for a remote free: flushing a
 * vCPU (kmem_cache_shrink()) with a full cpu slab and two cpu partial
 * slabs passes SLAB_CMPXCHG three times - deactivate_slab() of the cpu
 * slab once, __unfreeze_partials() once per partial slab.
 */
static void count_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	(void)mm;
	if (point == MM_PP_SLAB_CMPXCHG)
		(*(int *)ctx)++;
}

static void test_flush_points(void)
{
	struct mm *mm = new_mm(2);
	struct kmem_cache *s = kmem_cache_create(mm, "pp-flush", 64, 0, 0, NULL);
	REQUIRE(s);
	unsigned int per = per_slab(s), n = 3 * per;
	void **o = calloc(n, sizeof(*o));
	REQUIRE(o);
	for (unsigned int i = 0; i < n; i++)          /* slabs A and B full, C the cpu slab, full */
		REQUIRE((o[i] = kmem_cache_alloc(s, GFP_KERNEL)));
	kmem_cache_free(s, o[0]);                     /* A and B onto the cpu partial list */
	kmem_cache_free(s, o[per]);
	o[0] = o[per] = NULL;
	unsigned long st[NR_SLUB_STAT_ITEMS];
	if (kmem_cache_get_stats(s, st))              /* where SLUB's statistics are compiled in */
		CHECK_MSG(st[CPU_PARTIAL_FREE] == 2, "the two frees did not both go to the cpu partial list "
			  "(cpu_partial_free %lu)", st[CPU_PARTIAL_FREE]);
	int hits = 0;
	mm_set_sched_hook(mm, count_hook, &hits);
	kmem_cache_shrink(s);
	mm_set_sched_hook(mm, NULL, NULL);
	CHECK_MSG(hits == 3, "a flush of a full cpu slab and two cpu partial slabs passed SLAB_CMPXCHG %d times, want 3",
		  hits);
	for (unsigned int i = 0; i < n; i++)
		if (o[i])
			kmem_cache_free(s, o[i]);
	free(o);
	kmem_cache_destroy(s);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}
#endif

int main(void)
{
	test_cpu_dead();
	test_aba_interrupt();
	test_tid_cpu_consistency();
	test_remote_free_vs_acquire();
	test_free_after_flush();
	test_storm();
#ifdef MM_TEST_HOOKS
	test_fastpath_points();
	test_fastpath_switch();
	test_flush_points();
#endif
	TEST_DONE();
}

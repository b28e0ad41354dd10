/* SPDX-License-Identifier: MIT */
/*
 * test_cpu_sleeping_locks.c - a task blocked on a sleeping lock of the CPU
 * model (cpus_read_lock, the hotplug write lock, slab_mutex) gives its
 * vCPU up while it waits, as the kernel's schedule() does, and takes one
 * back afterwards.  Each scenario below is one of the free-running
 * stressor's "known deadlocks" (stressors/stress/inject.c) on real threads
 * over 2 vCPUs, sequenced (through the wait hook, which tells who waits on
 * what) so that it happens every time on a model whose waiters keep their
 * vCPU:
 *
 *   detached_hotplug   (--onoff-detached) an offline from a thread holding
 *                      no vCPU; its dead callback frees a page, which needs
 *                      a vCPU, while every vCPU's task waits for
 *                      cpus_read_lock (drain_all_pages) behind it;
 *   detached_slab_mutex  the same with the callback holding slab_mutex
 *                      (slub_cpu_dead's shape) and the task on the other
 *                      vCPU blocked on it (kmem_cache_next);
 *   flush_vs_hotplug   (--onoff-unserialized) a reader that must run on
 *                      each vCPU in turn (flush_all_cpus_locked's shape:
 *                      cpus_read_lock, then every vCPU) while a writer
 *                      holding one vCPU waits for it and the task on the
 *                      other waits for cpus_read_lock behind the writer;
 *   migrate_in_drain   (--migrate-anywhere, test builds) a task migrated
 *                      inside drain_all_pages (holding cpus_read_lock) to
 *                      the vCPU of a task queued behind a pending writer;
 *   mutex_wake_elsewhere  a contender whose vCPU is taken while it sleeps
 *                      wakes on the other one (a migration) if it was
 *                      migratable, and waits for its own if migration was
 *                      disabled (tools/mutants.py found neither checked);
 *   free_running       all of it at once for a while: 4 workers over 2
 *                      vCPUs allocating pages and objects, drain_all_pages,
 *                      kmem_cache_shrink and kmem_cache_next; a thread
 *                      cycling a vCPU off and on holding no vCPU; random
 *                      migrations at every point (drains included).
 *
 * A hang is a failure, not a stuck ctest: a watchdog ends the process
 * after WATCHDOG_S seconds with each thread's last wait and the vCPUs'
 * holders.  Besides finishing, each scenario checks that the waiters did
 * sleep (the vCPU statistics' sleeps), that a task that woke up elsewhere
 * was counted as a migration, and the checker at level 3 at the end.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "mm/cpu.h"
#include "mm/mm.h"
#include "mm/slab.h"
#include "slab/slab.h"
#include "test.h"

#define WATCHDOG_S (MM_TSAN ? 120 : 60)   /* debug.h: MM_TSAN is 1 under ThreadSanitizer */

/* ---------------------------------------------------------------- who waits on what */

/* One per thread: its last wait, from the wait hook (which then yields). */
struct waiter {
	const char *name;
	atomic_int why;                         /* enum mm_wait_reason of the last wait */
	_Atomic(const void *) what;             /* ... and what it waited on */
	atomic_ulong waits;
};

static void note_wait(enum mm_wait_reason why, const void *what, void *ctx)
{
	struct waiter *w = ctx;
	atomic_store(&w->why, (int)why);
	atomic_store(&w->what, what);
	atomic_fetch_add(&w->waits, 1);
	sched_yield();
}

static void waiter_install(struct waiter *w)
{
	mm_set_wait_hook(note_wait, w);
}

/* @w waited on @what last (a sequenced waiter cannot get past it until its holder lets it). */
static bool waits_on(struct waiter *w, const void *what)
{
	return atomic_load(&w->what) == what;
}

/* Spin outside the allocator until @cond; the watchdog bounds it. */
#define spin_until(cond)                        \
	do {                                    \
		while (!(cond))                 \
			sched_yield();          \
	} while (0)

/* ---------------------------------------------------------------- watchdog */

#define MAX_WAITERS 8

static struct {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const char *scenario;                   /* running; NULL: idle */
	struct timespec deadline;
	struct mm *mm;
	struct waiter *w[MAX_WAITERS];
	int nw;
	bool quit;
} wd = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static const char *why_name(int why)
{
	switch (why) {
	case MM_WAIT_SPIN: return "spinlock";
	case MM_WAIT_VCPU: return "vcpu";
	case MM_WAIT_HOTPLUG: return "hotplug (a vCPU's holder to leave)";
	case MM_WAIT_CPUS_LOCK: return "cpus_lock";
	case MM_WAIT_MUTEX: return "mutex";
	default: return "?";
	}
}

static void wd_report_and_exit(void)
{
	fprintf(stderr, "%s: HANG: scenario %s did not finish within %d s - a waiter on a sleeping lock "
		"kept its vCPU?\n", __FILE__, wd.scenario, WATCHDOG_S);
	for (int i = 0; i < wd.nw; i++) {
		struct waiter *w = wd.w[i];
		fprintf(stderr, "  thread %-8s last wait: %s on %p (%lu waits)\n", w->name,
			why_name(atomic_load(&w->why)), atomic_load(&w->what), atomic_load(&w->waits));
	}
	if (wd.mm) {
		for (int c = 0; c < mm_nr_cpus(wd.mm); c++) {
			const struct mm_task *h = mm_cpu_holder(wd.mm, c);
			fprintf(stderr, "  vCPU %d %s, held by %s\n", c, mm_cpu_is_online(wd.mm, c) ? "online" : "offline",
				!h ? "nobody" : h->name ? h->name : "a thread's task");
		}
		fprintf(stderr, "  hotplug lock word %#x, slab_mutex %s\n",
			atomic_load(&mm_smp(wd.mm)->hotplug),
			slub_state(wd.mm) && mutex_is_locked(&slub_state(wd.mm)->slab_mutex) ? "held" : "free");
	}
	fflush(stderr);
	_exit(1);
}

static void *wd_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&wd.mu);
	while (!wd.quit) {
		if (!wd.scenario) {
			pthread_cond_wait(&wd.cv, &wd.mu);
			continue;
		}
		if (pthread_cond_timedwait(&wd.cv, &wd.mu, &wd.deadline) == ETIMEDOUT && wd.scenario)
			wd_report_and_exit();
	}
	pthread_mutex_unlock(&wd.mu);
	return NULL;
}

static void wd_arm(const char *scenario, struct mm *mm, struct waiter **w, int nw)
{
	pthread_mutex_lock(&wd.mu);
	wd.scenario = scenario;
	wd.mm = mm;
	wd.nw = nw;
	for (int i = 0; i < nw; i++)
		wd.w[i] = w[i];
	clock_gettime(CLOCK_REALTIME, &wd.deadline);
	wd.deadline.tv_sec += WATCHDOG_S;
	pthread_cond_broadcast(&wd.cv);
	pthread_mutex_unlock(&wd.mu);
}

static void wd_disarm(void)
{
	pthread_mutex_lock(&wd.mu);
	wd.scenario = NULL;
	pthread_cond_broadcast(&wd.cv);
	pthread_mutex_unlock(&wd.mu);
}

/* ---------------------------------------------------------------- a dead callback that needs a vCPU */

enum dead_mode { DEAD_IDLE, DEAD_AFTER_READERS, DEAD_UNDER_SLAB_MUTEX };

static struct {
	atomic_int mode;
	struct mm *mm;
	struct page *page;                      /* freed by the callback: free_unref_page needs this_cpu */
	struct waiter *r1, *r2;                 /* must be waiting before it frees */
	atomic_int mutex_held;
	atomic_int ran;
} dead;

/*
 * Registered last, so it runs first when a vCPU dies, while the hotplug
 * operation holds the write lock.  It frees a page, as slub_cpu_dead's
 * discard_slab and any other teardown that gives memory back does - the
 * caller, holding no vCPU, attaches to one for it.
 */
static int dead_needs_cpu(struct mm *mm, unsigned int cpu)
{
	(void)cpu;
	int mode = atomic_load(&dead.mode);
	if (mode == DEAD_IDLE || mm != dead.mm)
		return 0;
	if (mode == DEAD_AFTER_READERS) {
		/* every other task is queued on cpus_read_lock behind us */
		spin_until(waits_on(dead.r1, &mm_smp(mm)->hotplug) &&
			   (!dead.r2 || waits_on(dead.r2, &mm_smp(mm)->hotplug)));
		__free_pages(mm, dead.page, 0);
	} else {
		struct slub_state *st = slub_state(mm);
		mutex_lock(&st->slab_mutex);
		atomic_store(&dead.mutex_held, 1);
		spin_until(waits_on(dead.r1, &st->slab_mutex));
		__free_pages(mm, dead.page, 0);
		mutex_unlock(&st->slab_mutex);
	}
	atomic_store(&dead.ran, 1);
	atomic_store(&dead.mode, DEAD_IDLE);
	return 0;
}

static struct mm *scenario_mm(enum dead_mode mode)
{
	struct mm *mm = test_make_mm(2, false);
	REQUIRE(mm);
	REQUIRE(mm_cpuhp_register(mm, "test:needs-cpu", NULL, dead_needs_cpu) >= 0);
	dead.mm = mm;
	dead.page = alloc_pages(mm, GFP_KERNEL, 0);
	REQUIRE(dead.page);
	mm_cpu_detach(mm);                      /* the main thread holds nothing from here */
	atomic_store(&dead.ran, 0);
	atomic_store(&dead.mutex_held, 0);
	atomic_store(&dead.mode, mode);
	return mm;
}

static void scenario_end(struct mm *mm)
{
	for (int c = 0; c < 2; c++)
		CHECK(mm_cpu_online(mm, c) == 0);
	CHECK_MM(mm, 3);
	mm_cpu_detach(mm);
	mm_destroy(mm);
	dead.mm = NULL;
}

/* ---------------------------------------------------------------- threads */

struct th {
	pthread_t id;
	struct waiter w;
	struct mm *mm;
	int cpu;                                /* attach here first */
	void (*body)(struct th *);
	int rc;                                 /* a result for the main thread */
};

static void *th_main(void *arg)
{
	struct th *t = arg;
	waiter_install(&t->w);
	if (t->cpu >= 0)
		CHECK(mm_cpu_attach(t->mm, t->cpu) == t->cpu);
	t->body(t);
	mm_cpu_detach(t->mm);
	return NULL;
}

static void th_start(struct th *t, const char *name, struct mm *mm, int cpu, void (*body)(struct th *))
{
	t->w.name = name;
	t->mm = mm;
	t->cpu = cpu;
	t->body = body;
	REQUIRE(pthread_create(&t->id, NULL, th_main, t) == 0);
}

/* ---------------------------------------------------------------- 1. detached hotplug vs cpus_read_lock */

static struct th s1_h, s1_r0, s1_r1;

static void s1_hotplug(struct th *t)
{
	t->rc = mm_cpu_offline(t->mm, 1);       /* holding no vCPU */
}

static void s1_reader(struct th *t)
{
	/* the writer holds the hotplug lock and waits for vCPU 1's holder */
	spin_until(waits_on(&s1_h.w, &t->mm->cpus[1]));
	drain_all_pages(t->mm, NULL);           /* cpus_read_lock behind it */
	t->rc = mm_cpu_current(t->mm);
}

static void test_detached_hotplug(void)
{
	struct mm *mm = scenario_mm(DEAD_AFTER_READERS);
	struct waiter *ws[] = { &s1_h.w, &s1_r0.w, &s1_r1.w };
	dead.r1 = &s1_r0.w;
	dead.r2 = &s1_r1.w;
	wd_arm("detached_hotplug", mm, ws, 3);
	th_start(&s1_r0, "r0", mm, 0, s1_reader);
	th_start(&s1_r1, "r1", mm, 1, s1_reader);
	while (mm_cpu_holder(mm, 0) == NULL || mm_cpu_holder(mm, 1) == NULL)
		sched_yield();
	th_start(&s1_h, "hotplug", mm, -1, s1_hotplug);
	pthread_join(s1_h.id, NULL);
	pthread_join(s1_r0.id, NULL);
	pthread_join(s1_r1.id, NULL);
	wd_disarm();

	CHECK(s1_h.rc == 0 && atomic_load(&dead.ran));
	/* both readers ended on vCPU 0: r1's own went offline while it slept */
	CHECK_MSG(s1_r0.rc == 0 && s1_r1.rc == 0, "readers ended on vCPUs %d and %d", s1_r0.rc, s1_r1.rc);
	struct mm_cpu_stats st0, st1;
	mm_cpu_get_stats(mm, 0, &st0);
	mm_cpu_get_stats(mm, 1, &st1);
	CHECK_MSG(st0.sleeps >= 1 && st1.sleeps >= 1, "sleeps: vCPU 0 %lu, vCPU 1 %lu", st0.sleeps, st1.sleeps);
	CHECK_MSG(st1.migrations_out >= 1 && st0.migrations_in >= 1, "r1 woke on vCPU 0: out %lu in %lu",
		  st1.migrations_out, st0.migrations_in);
	CHECK(st1.offlines == 1);
	scenario_end(mm);
}

/* ---------------------------------------------------------------- 2. detached hotplug vs slab_mutex */

static struct th s2_h, s2_r;

static void s2_hotplug(struct th *t)
{
	t->rc = mm_cpu_offline(t->mm, 1);
}

static void s2_user(struct th *t)
{
	spin_until(atomic_load(&dead.mutex_held));
	int n = 0;
	for (struct kmem_cache *s = kmem_cache_next(t->mm, NULL); s; s = kmem_cache_next(t->mm, s))
		n++;
	t->rc = n;
}

static void test_detached_slab_mutex(void)
{
	struct mm *mm = scenario_mm(DEAD_UNDER_SLAB_MUTEX);
	struct waiter *ws[] = { &s2_h.w, &s2_r.w };
	dead.r1 = &s2_r.w;
	dead.r2 = NULL;
	wd_arm("detached_slab_mutex", mm, ws, 2);
	th_start(&s2_r, "user", mm, 0, s2_user);
	while (mm_cpu_holder(mm, 0) == NULL)
		sched_yield();
	th_start(&s2_h, "hotplug", mm, -1, s2_hotplug);
	pthread_join(s2_h.id, NULL);
	pthread_join(s2_r.id, NULL);
	wd_disarm();

	CHECK(s2_h.rc == 0 && atomic_load(&dead.ran));
	CHECK_MSG(s2_r.rc > 0, "kmem_cache_next walked %d caches", s2_r.rc);
	struct mm_cpu_stats st;
	mm_cpu_get_stats(mm, 0, &st);
	CHECK_MSG(st.sleeps >= 1, "the slab_mutex waiter never gave vCPU 0 up");
	scenario_end(mm);
}

/* ---------------------------------------------------------------- 3. a reader on every vCPU vs a writer holding one */

static struct th s3_f, s3_h, s3_r;
static atomic_int s3_read_locked;

/* flush_all_cpus_locked()'s shape: the read lock, then run on each online vCPU in turn. */
static void s3_flusher(struct th *t)
{
	struct mm *mm = t->mm;
	int visited = 0, cpu;
	cpus_read_lock(mm);
	atomic_store(&s3_read_locked, 1);
	/* the writer (on vCPU 1) waits for us; the task on vCPU 0 waits behind it */
	spin_until(waits_on(&s3_h.w, &mm_smp(mm)->hotplug) && waits_on(&s3_r.w, &mm_smp(mm)->hotplug));
	for_each_online_cpu(cpu, mm) {
		if (mm_cpu_attach(mm, cpu) == cpu && raw_smp_processor_id(mm) == cpu)
			visited++;
	}
	mm_cpu_detach(mm);
	cpus_read_unlock(mm);
	t->rc = visited;
}

static void s3_hotplug(struct th *t)
{
	spin_until(atomic_load(&s3_read_locked));
	t->rc = mm_cpu_offline(t->mm, 0);       /* from the control vCPU 1 */
}

static void s3_reader(struct th *t)
{
	spin_until(waits_on(&s3_h.w, &mm_smp(t->mm)->hotplug));
	drain_all_pages(t->mm, NULL);
	t->rc = mm_cpu_current(t->mm);
}

static void test_flush_vs_hotplug(void)
{
	struct mm *mm = scenario_mm(DEAD_IDLE);
	struct waiter *ws[] = { &s3_f.w, &s3_h.w, &s3_r.w };
	atomic_store(&s3_read_locked, 0);
	wd_arm("flush_vs_hotplug", mm, ws, 3);
	th_start(&s3_r, "r0", mm, 0, s3_reader);
	th_start(&s3_h, "hotplug", mm, 1, s3_hotplug);
	while (mm_cpu_holder(mm, 0) == NULL || mm_cpu_holder(mm, 1) == NULL)
		sched_yield();
	th_start(&s3_f, "flusher", mm, -1, s3_flusher);
	pthread_join(s3_f.id, NULL);
	pthread_join(s3_h.id, NULL);
	pthread_join(s3_r.id, NULL);
	wd_disarm();

	CHECK_MSG(s3_f.rc == 2, "the flusher ran on %d vCPUs", s3_f.rc);
	CHECK(s3_h.rc == 0 && !mm_cpu_is_online(mm, 0));
	CHECK_MSG(s3_r.rc == 1, "the reader ended on vCPU %d (its own went offline)", s3_r.rc);
	struct mm_cpu_stats st0, st1;
	mm_cpu_get_stats(mm, 0, &st0);
	mm_cpu_get_stats(mm, 1, &st1);
	CHECK_MSG(st0.sleeps >= 1 && st1.sleeps >= 1, "sleeps: vCPU 0 %lu (reader), vCPU 1 %lu (writer)",
		  st0.sleeps, st1.sleeps);
	__free_pages(mm, dead.page, 0);
	scenario_end(mm);
}

/* ---------------------------------------------------------------- 4. migrated inside drain_all_pages */

#ifdef MM_TEST_HOOKS
static struct th s4_m, s4_h, s4_r;
static _Thread_local int s4_state = 2;          /* the migrant: 0 before the drain, 1 in it, 2 done (others: 2) */
static atomic_int s4_migrated_to = -1;

/* At the first preemptible point inside the drain (the read lock held), the scheduler moves us to vCPU 1. */
static void s4_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	(void)ctx;
	if (!s4_state && point == MM_PP_PCP_DRAIN)
		s4_state = 1;
	if (s4_state != 1 || !mm_preemptible())
		return;
	s4_state = 2;
	spin_until(waits_on(&s4_h.w, &mm_smp(mm)->hotplug) && waits_on(&s4_r.w, &mm_smp(mm)->hotplug));
	atomic_store(&s4_migrated_to, mm_migrate_current(mm, 1));
}

static void s4_migrant(struct th *t)
{
	s4_state = 0;
	drain_all_pages(t->mm, NULL);
	t->rc = mm_cpu_current(t->mm);
}

static void s4_hotplug(struct th *t)
{
	/* the migrant holds the read lock (it is inside the drain) */
	spin_until(atomic_load(&mm_smp(t->mm)->hotplug) > 0);
	t->rc = mm_cpu_offline(t->mm, 0);
}

static void s4_reader(struct th *t)
{
	spin_until(waits_on(&s4_h.w, &mm_smp(t->mm)->hotplug));
	drain_all_pages(t->mm, NULL);
	t->rc = mm_cpu_current(t->mm);
}

static void test_migrate_in_drain(void)
{
	struct mm *mm = scenario_mm(DEAD_IDLE);
	struct waiter *ws[] = { &s4_m.w, &s4_h.w, &s4_r.w };
	atomic_store(&s4_migrated_to, -1);
	mm_set_sched_hook(mm, s4_hook, NULL);
	wd_arm("migrate_in_drain", mm, ws, 3);
	th_start(&s4_r, "r1", mm, 1, s4_reader);
	while (mm_cpu_holder(mm, 1) == NULL)
		sched_yield();
	th_start(&s4_h, "hotplug", mm, -1, s4_hotplug);
	th_start(&s4_m, "migrant", mm, 0, s4_migrant);
	pthread_join(s4_m.id, NULL);
	pthread_join(s4_h.id, NULL);
	pthread_join(s4_r.id, NULL);
	wd_disarm();
	mm_set_sched_hook(mm, NULL, NULL);

	CHECK_MSG(atomic_load(&s4_migrated_to) == 1, "migrated to %d", atomic_load(&s4_migrated_to));
	CHECK(s4_m.rc == 1 && s4_h.rc == 0 && s4_r.rc == 1);
	struct mm_cpu_stats st;
	mm_cpu_get_stats(mm, 1, &st);
	CHECK_MSG(st.sleeps >= 1, "the reader queued behind the writer kept vCPU 1");
	CHECK(st.migrations_in >= 1);
	__free_pages(mm, dead.page, 0);
	scenario_end(mm);
}
#endif

/* ---------------------------------------------------------------- 5. free-running */

#define FR_WORKERS 4
#define FR_HELD 16

static struct {
	struct mm *mm;
	struct kmem_cache *cache;
	atomic_int stop;
	atomic_ulong ops, drains, shrinks, walks, cycles, migrations;
} fr;

static struct th fr_w[FR_WORKERS], fr_h;
static _Thread_local uint64_t fr_rng;
static _Thread_local bool fr_worker;

static uint64_t rnd(void)
{
	fr_rng ^= fr_rng << 13;
	fr_rng ^= fr_rng >> 7;
	fr_rng ^= fr_rng << 17;
	return fr_rng;
}

#ifdef MM_TEST_HOOKS
/* Migrations anywhere, drains included (what --migrate-anywhere turns on). */
static void fr_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	(void)point;
	(void)ctx;
	if (!fr_worker || !mm_preemptible() || rnd() % 8)
		return;
	int before = mm_cpu_current(mm), now = mm_migrate_current(mm, MM_CPU_ANY);
	if (now >= 0 && now != before)
		atomic_fetch_add(&fr.migrations, 1);
}
#endif

static void fr_worker_body(struct th *t)
{
	struct mm *mm = t->mm;
	struct page *pages[FR_HELD] = { NULL };
	void *objs[FR_HELD] = { NULL };
	unsigned long n = 0;
	fr_rng = 0x9e3779b97f4a7c15ULL * (uint64_t)(t - fr_w + 1);
	fr_worker = true;
	while (!atomic_load_explicit(&fr.stop, memory_order_relaxed)) {
		uint64_t r = rnd();
		unsigned i = (unsigned)(r >> 8) % FR_HELD;
		switch (r % 16) {
		case 0:
			drain_all_pages(mm, NULL);
			atomic_fetch_add(&fr.drains, 1);
			break;
		case 1:
			kmem_cache_shrink(fr.cache);
			atomic_fetch_add(&fr.shrinks, 1);
			break;
		case 2:
			for (struct kmem_cache *s = kmem_cache_next(mm, NULL); s; s = kmem_cache_next(mm, s))
				;
			atomic_fetch_add(&fr.walks, 1);
			break;
		case 3: case 4: case 5: case 6: case 7: case 8:
			if (pages[i]) {
				__free_pages(mm, pages[i], 0);
				pages[i] = NULL;
			} else {
				pages[i] = alloc_pages(mm, GFP_KERNEL, 0);
			}
			break;
		default:
			if (objs[i]) {
				kmem_cache_free(fr.cache, objs[i]);
				objs[i] = NULL;
			} else {
				objs[i] = kmem_cache_alloc(fr.cache, GFP_KERNEL);
			}
			break;
		}
		atomic_fetch_add_explicit(&fr.ops, 1, memory_order_relaxed);
		if (++n % 64 == 0)
			mm_cpu_detach(mm);      /* a timeslice: 4 workers share 2 vCPUs */
	}
	for (int k = 0; k < FR_HELD; k++) {
		if (pages[k])
			__free_pages(mm, pages[k], 0);
		if (objs[k])
			kmem_cache_free(fr.cache, objs[k]);
	}
	fr_worker = false;
}

/* Hotplug from a thread holding no vCPU, unserialized against everything. */
static void fr_hotplug_body(struct th *t)
{
	struct mm *mm = t->mm;
	fr_rng = 0x2545f4914f6cdd1dULL;
	while (!atomic_load(&fr.stop)) {
		int c = (int)(rnd() % 2);
		int rc = mm_cpu_offline(mm, c);
		mm_cpu_detach(mm);              /* the dead callbacks attached for their frees */
		if (rc == 0) {
			usleep(200);
			CHECK(mm_cpu_online(mm, c) == 0);
			atomic_fetch_add(&fr.cycles, 1);
		} else {
			CHECK_MSG(rc == -EBUSY, "mm_cpu_offline: %d", rc);
		}
		usleep(500);
	}
}

static void test_free_running(void)
{
	struct mm *mm = test_make_mm(2, false);
	REQUIRE(mm);
	fr.mm = mm;
	fr.cache = kmem_cache_create(mm, "test-sleeping", 96, 0, 0, NULL);
	REQUIRE(fr.cache);
	mm_cpu_detach(mm);
	atomic_store(&fr.stop, 0);
#ifdef MM_TEST_HOOKS
	mm_set_sched_hook(mm, fr_hook, NULL);
#endif
	struct waiter *ws[FR_WORKERS + 1];
	static const char *names[FR_WORKERS] = { "w0", "w1", "w2", "w3" };
	for (int i = 0; i < FR_WORKERS; i++) {
		th_start(&fr_w[i], names[i], mm, -1, fr_worker_body);
		ws[i] = &fr_w[i].w;
	}
	th_start(&fr_h, "hotplug", mm, -1, fr_hotplug_body);
	ws[FR_WORKERS] = &fr_h.w;
	wd_arm("free_running", mm, ws, FR_WORKERS + 1);
	usleep(1500 * 1000);
	atomic_store(&fr.stop, 1);
	for (int i = 0; i < FR_WORKERS; i++)
		pthread_join(fr_w[i].id, NULL);
	pthread_join(fr_h.id, NULL);
	wd_disarm();
	mm_set_sched_hook(mm, NULL, NULL);

	struct mm_cpu_stats st;
	mm_cpu_get_stats(mm, -1, &st);
	printf("free_running: %lu ops, %lu drains, %lu shrinks, %lu cache walks, %lu onoff cycles, "
	       "%lu migrations by the hook, %lu sleeps, %lu migrations in all\n",
	       atomic_load(&fr.ops), atomic_load(&fr.drains), atomic_load(&fr.shrinks), atomic_load(&fr.walks),
	       atomic_load(&fr.cycles), atomic_load(&fr.migrations), st.sleeps, st.migrations_in);
	CHECK(atomic_load(&fr.ops) > 0 && atomic_load(&fr.cycles) > 0);
	for (int c = 0; c < 2; c++)
		CHECK(mm_cpu_online(mm, c) == 0);
	kmem_cache_shrink(fr.cache);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(fr.cache);
	mm_cpu_detach(mm);
	mm_destroy(mm);
}

/* ---------------------------------------------------------------- the lock itself */

/* struct mutex: trylock, owner, depth; a contended lock taken where preemptible gives the vCPU up. */
static struct mutex m_lock = __MUTEX_INITIALIZER;
static struct th m_t;

static void m_contender(struct th *t)
{
	mutex_lock(&m_lock);
	t->rc = mm_cpu_current(t->mm);
	mutex_unlock(&m_lock);
}

static void test_mutex(void)
{
	struct mm *mm = test_make_mm(1, false);
	REQUIRE(mm);
	mm_cpu_detach(mm);
	struct waiter w = { .name = "main" };
	waiter_install(&w);
	CHECK(mutex_trylock(&m_lock) == 1);
	CHECK(mutex_is_locked(&m_lock) && get_current()->lock_depth == 1 && preemptible());
	CHECK(mutex_trylock(&m_lock) == 0);
	mutex_unlock(&m_lock);
	CHECK(!mutex_is_locked(&m_lock) && get_current()->lock_depth == 0);

	/* one vCPU: the holder keeps it, the contender sleeps without it */
	struct waiter *ws[] = { &m_t.w, &w };
	wd_arm("mutex", mm, ws, 2);
	mutex_lock(&m_lock);
	th_start(&m_t, "contender", mm, 0, m_contender);
	spin_until(waits_on(&m_t.w, &m_lock));
	CHECK_MSG(mm_cpu_holder(mm, 0) == NULL, "the contender sleeps holding vCPU 0");
	CHECK(mm_cpu_attach(mm, 0) == 0);       /* so we can run there meanwhile */
	mm_cpu_detach(mm);
	mutex_unlock(&m_lock);
	pthread_join(m_t.id, NULL);
	wd_disarm();
	CHECK_MSG(m_t.rc == 0, "the contender woke up on vCPU %d", m_t.rc);
	struct mm_cpu_stats st;
	mm_cpu_get_stats(mm, 0, &st);
	CHECK_MSG(st.sleeps == 1 && st.migrations_in == 0, "sleeps %lu migrations %lu", st.sleeps, st.migrations_in);
	mm_set_wait_hook(NULL, NULL);
	mm_destroy(mm);
}

/*
 * Waking up elsewhere: a contender that slept on vCPU 0 while it was
 * migratable comes back on a free vCPU when its own is taken meanwhile
 * (schedule() puts a woken task on any allowed CPU), and is counted as a
 * migration; one that slept with migration disabled comes back on vCPU 0
 * only, waiting for it.
 */
static struct th me_t, me_p;
static atomic_int me_p_done;

static void me_pinned_contender(struct th *t)
{
	migrate_disable();
	m_contender(t);
	migrate_enable();
	atomic_store(&me_p_done, 1);
}

static void test_mutex_wake_elsewhere(void)
{
	struct mm *mm = test_make_mm(2, false);
	REQUIRE(mm);
	mm_cpu_detach(mm);
	struct waiter w = { .name = "main" };
	waiter_install(&w);
	struct waiter *ws[] = { &me_t.w, &me_p.w, &w };
	struct mm_cpu_stats st0, st1;

	wd_arm("mutex_wake_elsewhere", mm, ws, 3);
	mutex_lock(&m_lock);
	th_start(&me_t, "contender", mm, 0, m_contender);
	spin_until(waits_on(&me_t.w, &m_lock));
	CHECK(mm_cpu_attach(mm, 0) == 0);       /* its vCPU is taken while it sleeps ... */
	mutex_unlock(&m_lock);
	pthread_join(me_t.id, NULL);            /* ... so it must wake on vCPU 1, not wait for 0 */
	CHECK_MSG(me_t.rc == 1, "the migratable contender woke up on vCPU %d", me_t.rc);
	mm_cpu_get_stats(mm, 1, &st1);
	CHECK_MSG(st1.migrations_in == 1, "migrations into vCPU 1: %lu", st1.migrations_in);
	mm_cpu_detach(mm);

	/* pinned: it waits for vCPU 0, which is given back only once it waits for it */
	mutex_lock(&m_lock);
	th_start(&me_p, "pinned", mm, 0, me_pinned_contender);
	spin_until(waits_on(&me_p.w, &m_lock));
	CHECK(mm_cpu_attach(mm, 0) == 0);
	mutex_unlock(&m_lock);
	/* (a model that does not keep it pinned wakes it on vCPU 1: it does not wait) */
	spin_until(atomic_load(&me_p.w.why) == MM_WAIT_VCPU || atomic_load(&me_p_done));
	mm_cpu_detach(mm);
	pthread_join(me_p.id, NULL);
	wd_disarm();
	CHECK_MSG(me_p.rc == 0, "the pinned contender woke up on vCPU %d", me_p.rc);
	mm_cpu_get_stats(mm, 0, &st0);
	mm_cpu_get_stats(mm, 1, &st1);
	CHECK_MSG(st0.sleeps == 2 && st1.migrations_in == 1,
		  "sleeps on 0: %lu, migrations into 1: %lu", st0.sleeps, st1.migrations_in);
	mm_set_wait_hook(NULL, NULL);
	mm_destroy(mm);
}

static const struct {
	const char *name;
	void (*fn)(void);
} scenarios[] = {
	{ "mutex", test_mutex },
	{ "mutex_wake_elsewhere", test_mutex_wake_elsewhere },
	{ "detached_hotplug", test_detached_hotplug },
	{ "detached_slab_mutex", test_detached_slab_mutex },
	{ "flush_vs_hotplug", test_flush_vs_hotplug },
#ifdef MM_TEST_HOOKS
	{ "migrate_in_drain", test_migrate_in_drain },
#endif
	{ "free_running", test_free_running },
};

/* test_cpu_sleeping_locks [SCENARIO...]: all of them by default. */
int main(int argc, char **argv)
{
	pthread_t wdt;
	REQUIRE(pthread_create(&wdt, NULL, wd_main, NULL) == 0);
#ifndef MM_TEST_HOOKS
	printf("migrate_in_drain: skipped (no MM_TEST_HOOKS: no preemption points to migrate at)\n");
#endif
	for (size_t i = 0; i < ARRAY_SIZE(scenarios); i++) {
		bool run = argc < 2;
		for (int a = 1; a < argc; a++)
			run |= !strcmp(argv[a], scenarios[i].name);
		if (run)
			scenarios[i].fn();
	}

	pthread_mutex_lock(&wd.mu);
	wd.quit = true;
	pthread_cond_broadcast(&wd.cv);
	pthread_mutex_unlock(&wd.mu);
	pthread_join(wdt, NULL);
	TEST_DONE();
}

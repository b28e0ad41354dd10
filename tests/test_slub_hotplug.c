/* SPDX-License-Identifier: MIT */
/*
 * test_slub_hotplug.c - SLUB's flushes against vCPU hotplug.  In 6.6,
 * kmem_cache_destroy() holds cpus_read_lock() across the shutdown and
 * flush_all() takes it, so a CPU is never half-way down while they flush:
 * either slub_cpu_dead() already gave its cpu slab back, or the flush
 * reaches it.
 *
 * The race, made deterministic: vCPU 1 holds a cpu slab of the cache; a
 * thread offlines vCPU 1, and a dead callback of the test's own - registered
 * after SLUB's, so it runs first (dead callbacks run in reverse) - stops
 * the offline after vCPU 1 is marked offline and before slub_cpu_dead()
 * runs.  The main thread then destroys the cache.  Without the hotplug
 * lock, destroy skips the offline vCPU, finds its slab still counted and
 * reports "Slab cache still has objects" for a cache that has none.  With
 * it, destroy waits for the offline (the test's callback lets the offline
 * go on as soon as the destroyer sleeps on the hotplug lock, seen through
 * the CPU model's wait hook) and finds the slab given back.
 *
 * validate_slab_cache() (flush_all(), which takes the lock itself) runs
 * into the same held offline first: it must wait for it rather than
 * deadlock, and find nothing wrong.  That case passes on the allocator
 * without the lock too (a cache without debug flags has no slab count to
 * get wrong); the destroy case is the one that fails there.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "mm/cpu.h"
#include "mm/mm.h"
#include "mm/slab.h"
#include "test.h"
#include "types.h"      /* page_zonenum() */

static struct mm *mm;
static atomic_int offline_running, flusher_blocked, flush_done, hold_timed_out, offline_ret;

static void yield_wait(enum mm_wait_reason why, const void *what, void *ctx)
{
	(void)why; (void)what; (void)ctx;
	sched_yield();
}

/* The flusher's wait hook: it sleeps on the hotplug lock - the offline may go on. */
static void flusher_wait(enum mm_wait_reason why, const void *what, void *ctx)
{
	(void)what; (void)ctx;
	if (why == MM_WAIT_CPUS_LOCK)
		atomic_store(&flusher_blocked, 1);
	sched_yield();
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Runs before slub_cpu_dead(): hold the offline until the flusher is done or waits for it. */
static int hold_dead(struct mm *m, unsigned int cpu)
{
	(void)m; (void)cpu;
	atomic_store(&offline_running, 1);
	double until = now_s() + 30;
	while (!atomic_load(&flush_done) && !atomic_load(&flusher_blocked)) {
		if (now_s() > until) {               /* a safety net: the test then fails */
			atomic_store(&hold_timed_out, 1);
			break;
		}
		sched_yield();
	}
	return 0;
}

static void *offliner(void *arg)
{
	(void)arg;
	mm_set_wait_hook(yield_wait, NULL);
	atomic_store(&offline_ret, mm_cpu_offline(mm, 1));
	return NULL;
}

/* @c gets a cpu slab on vCPU 1: objects allocated and freed there. */
static void fill_cpu1(struct kmem_cache *c)
{
	void *p[40];
	REQUIRE(mm_cpu_attach(mm, 1) == 1);
	for (int i = 0; i < 40; i++)
		REQUIRE((p[i] = kmem_cache_alloc(c, GFP_KERNEL)));
	for (int i = 0; i < 40; i++)
		kmem_cache_free(c, p[i]);
	mm_cpu_detach(mm);
}

/* Offline vCPU 1 and, while its dead callbacks are held, run @flush(@c) on this thread. */
static void race_offline(struct kmem_cache *c, void (*flush)(struct kmem_cache *))
{
	pthread_t th;

	atomic_store(&offline_running, 0);
	atomic_store(&flusher_blocked, 0);
	atomic_store(&flush_done, 0);
	atomic_store(&hold_timed_out, 0);
	fill_cpu1(c);
	mm_set_wait_hook(flusher_wait, NULL);
	REQUIRE(pthread_create(&th, NULL, offliner, NULL) == 0);
	while (!atomic_load(&offline_running))
		sched_yield();
	flush(c);
	atomic_store(&flush_done, 1);
	pthread_join(th, NULL);
	mm_set_wait_hook(yield_wait, NULL);
	CHECK(atomic_load(&offline_ret) == 0);
	CHECK_MSG(!atomic_load(&hold_timed_out), "the flush neither finished nor waited for the offline in 30 s");
	CHECK(!mm_cpu_is_online(mm, 1));
	REQUIRE(mm_cpu_online(mm, 1) == 0);
}

static void do_destroy(struct kmem_cache *c) { kmem_cache_destroy(c); }

static long validate_errors;
static void do_validate(struct kmem_cache *c) { validate_errors = validate_slab_cache(c); }

static void test_destroy_during_offline(void)
{
	struct kmem_cache *c = kmem_cache_create(mm, "hp-destroy", 64, 0, 0, NULL);
	REQUIRE(c);
	unsigned long reports = mm_nr_reports(mm);
	race_offline(c, do_destroy);
	CHECK_MSG(mm_nr_reports(mm) == reports, "destroy during an offline reported: %s",
		  mm_nr_reports(mm) ? mm_last_report(mm)->msg : "");
	CHECK_MM(mm, 3);
}

static void test_validate_during_offline(void)
{
	struct kmem_cache *c = kmem_cache_create(mm, "hp-validate", 64, 0, 0, NULL);
	REQUIRE(c);
	unsigned long reports = mm_nr_reports(mm);
	race_offline(c, do_validate);
	CHECK_MSG(validate_errors == 0 && mm_nr_reports(mm) == reports, "validate during an offline: %ld errors: %s",
		  validate_errors, mm_nr_reports(mm) ? mm_last_report(mm)->msg : "");
	CHECK_MM(mm, 3);
	kmem_cache_destroy(c);
	CHECK(mm_nr_reports(mm) == reports);
}

/*
 * The order of the dead callbacks.  In 6.6, CPUHP_SLUB_DEAD comes before
 * CPUHP_PAGE_ALLOC and a CPU going down runs its states from high to low:
 * page_alloc_cpu_dead() drains the dead CPU's pcp lists and raises every
 * other pcp's high (zone_pcp_update(): one CPU fewer shares the zone)
 * before slub_cpu_dead() flushes the dead CPU's slabs.  An empty cpu slab
 * flushed with min_partial slabs already on the node is discarded, and its
 * pages go to the pcp of the vCPU doing the offline - which then meets the
 * new, higher high.  With SLUB's callback first, they met the old one: a
 * pcp one page short of it was trimmed.
 */
static void test_dead_order(void)
{
	struct mm_config cfg;
	mm_config_default(&cfg);
	cfg.nr_cpus = 2;
	cfg.quiet = true;
	struct mm *m = test_create(&cfg);
	struct kmem_cache *c = kmem_cache_create(m, "hp-order", 256, 0, 0, NULL);
	REQUIRE(c);
	struct kmem_cache_info info;
	unsigned long st0[NR_SLUB_STAT_ITEMS], st1[NR_SLUB_STAT_ITEMS];
	bool stats = kmem_cache_get_stats(c, st0);

	/* vCPU 1: a cpu slab with every object free. */
	REQUIRE(mm_cpu_attach(m, 1) == 1);
	void *o = kmem_cache_alloc(c, GFP_KERNEL);
	REQUIRE(o);
	struct page *empty = virt_to_page(m, o);
	REQUIRE(empty && page_zonenum(empty) == ZONE_NORMAL);
	kmem_cache_free(c, o);
	REQUIRE(mm_cpu_detach(m) == 0);

	/*
	 * vCPU 0: min_partial partial slabs on the node.  Fill slabs, then free
	 * one object of each full one: it goes to vCPU 0's cpu partial list,
	 * which moves to the node each time it is full.
	 */
	REQUIRE(mm_cpu_attach(m, 0) == 0);
	REQUIRE(kmem_cache_get_info(c, &info) == 0);
	enum { MAXOBJ = 4096 };
	static void *objs[MAXOBJ];
	unsigned int per = info.objects_per_slab, n = 0;
	REQUIRE(per > 1);
	for (unsigned int i = 0; i < MAXOBJ / per * per; i++)
		REQUIRE((objs[n++] = kmem_cache_alloc(c, GFP_KERNEL)));
	for (unsigned int i = 0; i + per < n; i += per) {
		REQUIRE(kmem_cache_get_info(c, &info) == 0);
		if (info.nr_partial >= info.min_partial)
			break;
		kmem_cache_free(c, objs[i]);
		objs[i] = NULL;
	}
	REQUIRE(kmem_cache_get_info(c, &info) == 0);
	REQUIRE_MSG(info.nr_partial >= info.min_partial, "%lu partial slabs on the node, min_partial %u",
		    info.nr_partial, info.min_partial);

	/* vCPU 0's Normal pcp one page short of its high. */
	struct mm_pcp_info before, after;
	enum { NPG = 2048 };
	static struct page *pages[NPG];
	unsigned int np = 0;
	REQUIRE(mm_pcp_info(m, ZONE_NORMAL, 0, &before) == 0);
	while (np < NPG && np < (unsigned int)before.high * 2)
		REQUIRE((pages[np++] = alloc_pages(m, GFP_KERNEL, 0)));
	REQUIRE(mm_pcp_info(m, ZONE_NORMAL, 0, &before) == 0);
	while (np && before.count < before.high - 1) {
		__free_pages(m, pages[--np], 0);
		REQUIRE(mm_pcp_info(m, ZONE_NORMAL, 0, &before) == 0);
	}
	REQUIRE_MSG(before.count == before.high - 1, "vCPU 0's pcp: count %d, high %d", before.count, before.high);

	REQUIRE(mm_cpu_offline(m, 1) == 0);
	REQUIRE(mm_pcp_info(m, ZONE_NORMAL, 0, &after) == 0);
	if (stats) {
		REQUIRE(kmem_cache_get_stats(c, st1));
		REQUIRE_MSG(st1[FREE_SLAB] == st0[FREE_SLAB] + 1, "the offline freed %lu slabs, the test needs 1",
			    st1[FREE_SLAB] - st0[FREE_SLAB]);
	}
	int slab_pages = 1 << info.order;
	REQUIRE_MSG(after.high > before.high - 1 + slab_pages, "high %d -> %d: too small a rise for the test",
		    before.high, after.high);
	CHECK_MSG(after.count == before.count + slab_pages,
		  "vCPU 0's pcp: count %d, high %d before the offline; after it count %d, high %d: expected %d "
		  "(the discarded slab's %d page(s), no trim: page_alloc_cpu_dead() raised high first)",
		  before.count, before.high, after.count, after.high, before.count + slab_pages, slab_pages);

	REQUIRE(mm_cpu_online(m, 1) == 0);
	while (np)
		__free_pages(m, pages[--np], 0);
	for (unsigned int i = 0; i < n; i++)
		if (objs[i])
			kmem_cache_free(c, objs[i]);
	kmem_cache_destroy(c);
	CHECK(mm_nr_reports(m) == 0);
	CHECK_MM(m, 3);
	REQUIRE(mm_cpu_detach(m) == 0);
	mm_destroy(m);
}

int main(void)
{
	struct mm_config cfg;
	mm_config_default(&cfg);
	cfg.quiet = true;
	mm = test_create(&cfg);
	mm_set_wait_hook(yield_wait, NULL);
	REQUIRE(mm_cpuhp_register(mm, "test:hold-dead", NULL, hold_dead) >= 0);
	test_validate_during_offline();
	test_destroy_during_offline();
	mm_destroy(mm);
	test_dead_order();
	TEST_DONE();
}

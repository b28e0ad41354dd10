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
	TEST_DONE();
}

/* SPDX-License-Identifier: MIT */
/*
 * test_slub_counts.c - a debug cache's node counts agree with its lists
 * whenever list_lock is free.  6.6 changes nr_slabs under list_lock where
 * a slab joins or leaves the lists of a debug cache (alloc_single_from_new_slab(),
 * free_to_partial_list(), __kmem_cache_do_shrink()) "to prevent spurious
 * validation warnings": validate_slab_node() compares, under the lock, the
 * slabs it finds with nr_slabs.
 *
 * Made deterministic with the scheduler hook: the main thread allocates
 * and frees on vCPU 0 - new slabs, slabs emptied and discarded, a shrink -
 * and at every preemption point where it is preemptible (so holds no
 * spinlock), a second thread on vCPU 2 runs validate_slab_cache() and the
 * main thread waits for it.  Every validation must be clean.  With the
 * count dropped after list_lock is released (the model before), the
 * validation at the free path's unlock saw one slab more counted than
 * listed.
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

#ifndef MM_TEST_HOOKS
int main(void)
{
	TEST_SKIP("needs MM_TEST_HOOKS");
}
#else

#define SLABS 8

static struct mm *mm;
static struct kmem_cache *cache;
static _Thread_local bool is_worker;
static atomic_int request, done, stop;
static atomic_long validations, errors;
static char first_error[sizeof(((struct mm_report *)0)->msg)];

static void yield_wait(enum mm_wait_reason why, const void *what, void *ctx)
{
	(void)why; (void)what; (void)ctx;
	sched_yield();
}

/* At each preemptible point of the worker: one validation by the other thread, waited for. */
static void hook(struct mm *m, enum mm_pp point, void *ctx)
{
	(void)m; (void)point; (void)ctx;
	if (!is_worker || !mm_preemptible())
		return;
	atomic_store(&done, 0);
	atomic_store(&request, 1);
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!atomic_load(&done)) {
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 30)       /* a safety net; counted as an error below */
			break;
	}
}

static void *validator(void *arg)
{
	(void)arg;
	mm_set_wait_hook(yield_wait, NULL);
	REQUIRE(mm_cpu_attach(mm, 2) == 2);
	while (!atomic_load(&stop)) {
		if (!atomic_load(&request)) {
			sched_yield();
			continue;
		}
		atomic_store(&request, 0);
		unsigned long before = mm_nr_reports(mm);
		long e = validate_slab_cache(cache);
		if ((e || mm_nr_reports(mm) != before) && !atomic_load(&errors))
			snprintf(first_error, sizeof(first_error), "%s", mm_last_report(mm)->msg);
		atomic_fetch_add(&errors, e ? e : (long)(mm_nr_reports(mm) != before));
		atomic_fetch_add(&validations, 1);
		atomic_store(&done, 1);
	}
	mm_cpu_detach(mm);
	return NULL;
}

int main(void)
{
	struct mm_config cfg;
	char err[256];
	mm_config_default(&cfg);
	cfg.quiet = true;
	mm = test_create(&cfg);
	mm_set_wait_hook(yield_wait, NULL);
	REQUIRE(mm_slub_configure(mm, "slub_debug=FU,counts", err, sizeof(err)) == 0);
	cache = kmem_cache_create(mm, "counts", 256, 0, 0, NULL);
	REQUIRE(cache);

	REQUIRE(mm_cpu_attach(mm, 0) == 0);
	/* The objects of SLABS slabs, grouped by slab. */
	enum { MAXOBJ = SLABS * 64 };
	static void *obj[MAXOBJ];
	int n = 0;
	void *probe = kmem_cache_alloc(cache, GFP_KERNEL);
	REQUIRE(probe);
	kmem_cache_free(cache, probe);

	mm_set_sched_hook(mm, hook, NULL);
	pthread_t th;
	REQUIRE(pthread_create(&th, NULL, validator, NULL) == 0);
	is_worker = true;
	while (n < MAXOBJ)
		REQUIRE((obj[n++] = kmem_cache_alloc(cache, GFP_KERNEL)));
	/* Every other object first (the slabs go partial), then the rest (they empty and go). */
	for (int i = 0; i < n; i += 2)
		kmem_cache_free(cache, obj[i]);
	for (int i = 1; i < n; i += 2)
		kmem_cache_free(cache, obj[i]);
	kmem_cache_shrink(cache);
	is_worker = false;
	atomic_store(&stop, 1);
	pthread_join(th, NULL);
	mm_set_sched_hook(mm, NULL, NULL);

	printf("%ld validations at preemption points, %ld errors\n", atomic_load(&validations), atomic_load(&errors));
	CHECK_MSG(atomic_load(&validations) > 50, "only %ld validations ran", atomic_load(&validations));
	CHECK_MSG(atomic_load(&errors) == 0, "%ld validation errors, the first: %s", atomic_load(&errors), first_error);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(cache);
	CHECK(mm_nr_reports(mm) == 0);
	mm_cpu_detach(mm);
	mm_destroy(mm);
	TEST_DONE();
}
#endif

/* SPDX-License-Identifier: MIT */
/*
 * pressure.c - memory-pressure phases and the shrinker-backed cache that
 * makes reclaim do something.
 *
 * A phase: the pressure thread allocates page blocks without reclaim
 * (GFP_NOWAIT, then __GFP_HIGH to dip into the min reserve) from every
 * zone until the allocator refuses, parking them in a cache; the zones now
 * sit at and below their watermarks.  For the rest of the phase it keeps
 * topping the cache up and makes a direct-reclaim allocation of its own
 * now and then, while the workers' GFP_KERNEL allocations fail their
 * watermark checks and enter the slow path: there reclaim calls the
 * shrinker, which gives cached blocks back.  At the end of the phase the
 * cache is emptied.
 *
 * Locking: cache_lock protects the cache.  It is never held across an
 * allocator call (the shrinker runs inside allocations, on any thread), so
 * whoever holds it never waits for a vCPU, and interrupt handlers never
 * touch the cache.
 */
#include <stdlib.h>
#include <time.h>

#include "stress.h"

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct alloc *cache;           /* [cap]: blocks held for pressure */
static size_t ncache, cap;            /* under cache_lock */
static struct shrinker shrinker;
static bool registered;

#define SCAN_MAX 128                  /* SHRINK_BATCH */

static unsigned long pr_count(struct shrinker *s, struct shrink_control *sc)
{
	(void)s;
	(void)sc;
	pthread_mutex_lock(&cache_lock);
	unsigned long n = ncache;
	pthread_mutex_unlock(&cache_lock);
	return n;
}

static unsigned long pr_scan(struct shrinker *s, struct shrink_control *sc)
{
	struct alloc batch[SCAN_MAX];
	size_t n = 0;
	(void)s;
	pthread_mutex_lock(&cache_lock);
	while (n < sc->nr_to_scan && n < SCAN_MAX && ncache)
		batch[n++] = cache[--ncache];
	pthread_mutex_unlock(&cache_lock);
	atomic_fetch_add(&S.shrinker_calls, 1);
	for (size_t i = 0; i < n; i++) {
		if (shadow_give(stress_self, &batch[i]))
			alloc_free_raw(&batch[i]);
	}
	atomic_fetch_add(&S.shrinker_freed, n);
	sc->nr_scanned = n ? n : sc->nr_to_scan;
	return n ? n : SHRINK_STOP;
}

int pressure_setup(void)
{
	cap = mm_nr_valid_pages(S.mm);
	cache = calloc(cap, sizeof(*cache));
	if (!cache)
		return -1;
	shrinker.count_objects = pr_count;
	shrinker.scan_objects = pr_scan;
	if (register_shrinker(S.mm, &shrinker))
		return -1;
	registered = true;
	return 0;
}

void pressure_teardown(void)
{
	if (registered)
		unregister_shrinker(S.mm, &shrinker);
	registered = false;
	free(cache);
	cache = NULL;
}

void pressure_for_each(void (*fn)(const struct alloc *a, void *ctx), void *ctx)
{
	pthread_mutex_lock(&cache_lock);
	for (size_t i = 0; i < ncache; i++)
		fn(&cache[i], ctx);
	pthread_mutex_unlock(&cache_lock);
}

/* Give every cached block back. */
void pressure_release(void)
{
	for (;;) {
		struct alloc batch[SCAN_MAX];
		size_t n = 0;
		pthread_mutex_lock(&cache_lock);
		while (n < SCAN_MAX && ncache)
			batch[n++] = cache[--ncache];
		pthread_mutex_unlock(&cache_lock);
		if (!n)
			break;
		for (size_t i = 0; i < n; i++)
			if (shadow_give(NULL, &batch[i]))
				alloc_free_raw(&batch[i]);
		mm_cpu_detach(S.mm);
	}
}

static const gfp_t fill_gfps[] = {
	GFP_NOWAIT | __GFP_NOWARN | __GFP_MOVABLE | __GFP_HIGHMEM,   /* Movable first, then down */
	GFP_NOWAIT | __GFP_NOWARN,
	GFP_NOWAIT | __GFP_NOWARN | __GFP_DMA32,
	GFP_NOWAIT | __GFP_NOWARN | __GFP_DMA,
	GFP_ATOMIC | __GFP_NOWARN,                                    /* below min: __GFP_HIGH */
	GFP_ATOMIC | __GFP_NOWARN | __GFP_DMA,
};

/* Allocate up to @max blocks with @gfp into the cache; the number allocated. */
static size_t fill(uint64_t *rng, gfp_t gfp, size_t max)
{
	struct alloc batch[64];
	size_t got = 0;
	while (got < max) {
		size_t n = 0;
		while (n < 64 && got + n < max) {
			unsigned order = (unsigned)rng_below(rng, 3);
			struct page *pg = alloc_pages(S.mm, gfp, order);
			if (!pg && order)
				pg = alloc_pages(S.mm, gfp, order = 0);
			if (!pg)
				break;
			struct alloc a = { .p = page_address(S.mm, pg), .page = pg, .tag = rng_next(rng) | 1,
					   .size = (uint32_t)(MM_PAGE_SIZE << order), .kind = AK_PAGE,
					   .order = (uint8_t)order };
			if (!shadow_take(NULL, &a, false, MM_PAGE_SIZE, MAX_NR_ZONES))
				return got + n;
			batch[n++] = a;
		}
		pthread_mutex_lock(&cache_lock);
		for (size_t i = 0; i < n; i++)
			cache[ncache++] = batch[i];
		size_t now = ncache;
		pthread_mutex_unlock(&cache_lock);
		mm_cpu_detach(S.mm);
		got += n;
		if (now > atomic_load(&S.pressure_peak))
			atomic_store(&S.pressure_peak, now);
		if (n < 64)
			break;
	}
	atomic_fetch_add(&S.pressure_pages, got);
	return got;
}

static void observe(bool *low, bool *min)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = mm_zone(S.mm, (enum zone_type)z);
		if (!zone)
			continue;
		long free = zone_free_pages(zone);
		*low |= free < (long)zone_wmark_pages(zone, WMARK_LOW);
		*min |= free < (long)zone_wmark_pages(zone, WMARK_MIN);
	}
}

static void nap_ms(unsigned ms)
{
	struct timespec ts = { 0, (long)ms * 1000000L };
	nanosleep(&ts, NULL);
}

void *pressure_main(void *arg)
{
	(void)arg;
	uint64_t rng = rng_seed_for(S.cfg.seed, 1003);
	double interval = STRESS_TSAN ? 0.6 : 0.35, length = STRESS_TSAN ? 0.25 : 0.12;
	stress_wait_hook_install();
	gate_start_wait();
	double next = stress_now() + interval / 2;
	while (!atomic_load(&S.aux_stop) && !atomic_load(&S.stop)) {
		gate_poll(NULL);
		if (stress_now() < next) {
			nap_ms(2);
			continue;
		}
		atomic_fetch_add(&S.pressure_phases, 1);
		bool low = false, min = false;
		double end = stress_now() + length;
		while (stress_now() < end && !atomic_load(&S.aux_stop) && !atomic_load(&S.stop)) {
			gate_poll(NULL);
			for (size_t i = 0; i < sizeof(fill_gfps) / sizeof(fill_gfps[0]); i++)
				fill(&rng, fill_gfps[i], cap);
			observe(&low, &min);
			/* a direct-reclaim allocation of our own: the shrinker must run */
			struct page *pg = alloc_pages(S.mm, GFP_KERNEL | __GFP_NORETRY | __GFP_NOWARN, 0);
			if (pg)
				__free_pages(S.mm, pg, 0);
			mm_cpu_detach(S.mm);
			nap_ms(1);
		}
		pressure_release();
		if (low)
			atomic_fetch_add(&S.below_low, 1);
		if (min)
			atomic_fetch_add(&S.below_min, 1);
		next = stress_now() + interval;
	}
	pressure_release();
	gate_leave();
	return NULL;
}

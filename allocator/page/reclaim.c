/* SPDX-License-Identifier: MIT */
/*
 * reclaim.c - the reclaim model: registered shrinkers, called from the
 * allocation slow path (direct reclaim).
 *
 * Models the parts of mm/vmscan.c the allocator sees: do_shrink_slab()
 * batching (SHRINK_BATCH objects per scan_objects call, SHRINK_STOP), and
 * the 2008 rule "vmscan: skip freeing memory from zones with lots free"
 * (shared/seeds/watermark-order-check-2008.txt): a zone already above its
 * high watermark is not reclaimed for, and when every eligible zone is,
 * reclaim does nothing.
 *
 * Locking: mm->shrinker_lock protects the list; it is not held while a
 * shrinker runs (shrinkers free pages, which takes zone->lock).  A shrinker
 * must not be unregistered while an allocation may be reclaiming.
 */
#include "internal.h"

#define SHRINK_BATCH 128

int register_shrinker(struct mm *mm, struct shrinker *s)
{
	if (!s || !s->count_objects || !s->scan_objects)
		return -1;
	spin_lock(&mm->shrinker_lock);
	for (struct shrinker *it = mm->shrinkers; it; it = it->next_)
		if (it == s) {
			spin_unlock(&mm->shrinker_lock);
			return -1;   /* already registered */
		}
	s->next_ = mm->shrinkers;
	mm->shrinkers = s;
	spin_unlock(&mm->shrinker_lock);
	return 0;
}

void unregister_shrinker(struct mm *mm, struct shrinker *s)
{
	spin_lock(&mm->shrinker_lock);
	for (struct shrinker **pp = &mm->shrinkers; *pp; pp = &(*pp)->next_)
		if (*pp == s) {
			*pp = s->next_;
			break;
		}
	spin_unlock(&mm->shrinker_lock);
}

/* do_shrink_slab(): scan up to @nr_to_scan objects in SHRINK_BATCH steps. */
static unsigned long do_shrink_slab(struct mm *mm, struct shrinker *s, struct shrink_control *sc,
				    unsigned long nr_to_scan)
{
	unsigned long freed = 0, freeable = s->count_objects(s, sc);

	if (freeable == 0 || freeable == SHRINK_STOP)
		return 0;
	nr_to_scan = MIN(nr_to_scan, freeable);
	while (nr_to_scan) {
		unsigned long batch = MIN(nr_to_scan, (unsigned long)SHRINK_BATCH), ret;
		sc->nr_to_scan = batch;
		sc->nr_scanned = batch;
		ret = s->scan_objects(s, sc);
		if (ret == SHRINK_STOP)
			break;
		freed += ret;
		__count_vm_events(mm, PGSCAN_DIRECT, sc->nr_scanned);
		__count_vm_events(mm, PGSTEAL_DIRECT, ret);
		nr_to_scan -= MIN(nr_to_scan, sc->nr_scanned ? sc->nr_scanned : batch);
	}
	return freed;
}

/*
 * What reclaim could still free for a request whose highest usable zone
 * is @highest_zoneidx: the shrinkers' freeable objects (count_objects).
 * The allocator's stand-in for zone_reclaimable_pages() (the model has
 * no LRU; reclaim's progress counts shrinker objects as pages too).
 */
unsigned long shrinkers_freeable(struct mm *mm, gfp_t gfp, int highest_zoneidx)
{
	struct shrink_control sc = { .gfp_mask = gfp, .highest_zoneidx = highest_zoneidx };
	unsigned long total = 0;

	spin_lock(&mm->shrinker_lock);
	struct shrinker *s = mm->shrinkers;
	spin_unlock(&mm->shrinker_lock);
	for (; s; s = s->next_) {
		unsigned long n = s->count_objects(s, &sc);
		if (n != SHRINK_STOP)
			total += n;
	}
	return total;
}

/*
 * try_to_free_pages(): direct reclaim for an allocation of @order whose
 * highest usable zone is @highest_zoneidx.  Returns the number of objects
 * the shrinkers freed (the "progress" of the slow path).
 */
unsigned long try_to_free_pages(struct mm *mm, gfp_t gfp, unsigned int order, int highest_zoneidx)
{
	unsigned long want = 0, freed = 0;

	for (int z = highest_zoneidx; z >= 0; z--) {
		struct zone *zone = &mm->zones[z];
		if (!populated_zone(zone))
			continue;
		/* Skip zones with lots free: above the high watermark already. */
		if (zone_watermark_ok(zone, order, zone_wmark_pages(zone, WMARK_HIGH), z, 0))
			continue;
		long gap = (long)zone_wmark_pages(zone, WMARK_HIGH) + (1L << order) - zone_free_pages(zone);
		want += gap > 0 ? (unsigned long)gap : (1UL << order);
	}
	if (!want)
		return 0;
	__count_vm_events(mm, ALLOCSTALL, 1);

	struct shrink_control sc = { .gfp_mask = gfp, .highest_zoneidx = highest_zoneidx };
	spin_lock(&mm->shrinker_lock);
	struct shrinker *s = mm->shrinkers;
	spin_unlock(&mm->shrinker_lock);
	for (; s; s = s->next_)
		freed += do_shrink_slab(mm, s, &sc, MAX(want, 32UL));   /* SWAP_CLUSTER_MAX at least */
	return freed;
}

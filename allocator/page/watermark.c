/* SPDX-License-Identifier: MIT */
/*
 * watermark.c - zone watermarks, lowmem reserves and the watermark checks.
 *
 * Models Linux 6.6: calculate_min_free_kbytes(), __setup_per_zone_wmarks(),
 * setup_per_zone_lowmem_reserve(), __zone_watermark_unusable_free(),
 * __zone_watermark_ok() and zone_watermark_fast(); and, selectable, the
 * 2.6.28 zone_watermark_ok() discussed in the 2008 thread
 * (shared/seeds/watermark-order-check-2008.txt).
 *
 * Watermarks and reserves are written by the setup functions under every
 * zone->lock and read locklessly (READ_ONCE) by the checks, as in the kernel.
 */
#include <string.h>

#include "internal.h"
#include "page/pcp.h"

static const unsigned int default_lowmem_reserve_ratio[MAX_NR_ZONES] = { 256, 256, 32, 0 };

static unsigned long int_sqrt(unsigned long x)
{
	unsigned long r = 0, b = 1UL << (sizeof(long) * 8 - 2);
	while (b > x)
		b >>= 2;
	while (b) {
		if (x >= r + b) {
			x -= r + b;
			r = (r >> 1) + b;
		} else {
			r >>= 1;
		}
		b >>= 2;
	}
	return r;
}

/* ZONE_MOVABLE is treated like highmem: it does not count as lowmem. */
static bool zone_is_lowmem(int idx)
{
	return idx != ZONE_MOVABLE;
}

/*
 * calculate_min_free_kbytes(): sqrt(lowmem_kbytes * 16), clamped to
 * [128, 262144] kB, unless the config set it.
 */
static void calculate_min_free_kbytes(struct mm *mm)
{
	unsigned long lowmem = 0;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (zone_is_lowmem(z))
			lowmem += (unsigned long)atomic_load(&mm->zones[z].managed_pages);
	unsigned long kb = int_sqrt(lowmem * (MM_PAGE_SIZE >> 10) * 16);
	mm->min_free_kbytes = MIN(MAX(kb, 128UL), 262144UL);
}

/*
 * __setup_per_zone_wmarks(): split pages_min over the lowmem zones in
 * proportion to their size; ZONE_MOVABLE gets a small fixed minimum.
 * low = min + max(min/4, managed * scale_factor / 10000), high = low + same.
 */
void setup_per_zone_wmarks(struct mm *mm)
{
	unsigned long pages_min = mm->min_free_kbytes >> (MM_PAGE_SHIFT - 10);
	unsigned long lowmem_pages = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (zone_is_lowmem(z))
			lowmem_pages += (unsigned long)atomic_load(&mm->zones[z].managed_pages);

	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		unsigned long managed = (unsigned long)atomic_load(&zone->managed_pages), tmp, flags;

		spin_lock_irqsave(&zone->lock, flags);
		tmp = lowmem_pages ? (unsigned long)((unsigned long long)pages_min * managed / lowmem_pages) : 0;
		if (!zone_is_lowmem(z))
			zone->_watermark[WMARK_MIN] = MIN(MAX(managed / 1024, 32UL), 128UL); /* clamp(, SWAP_CLUSTER_MAX, 128) */
		else
			zone->_watermark[WMARK_MIN] = tmp;
		/* The kswapd distance: scale factor of the zone, at least min/4. */
		tmp = MAX(tmp >> 2, (unsigned long)((unsigned long long)managed * mm->cfg.watermark_scale_factor / 10000));
		zone->watermark_boost = 0;
		zone->_watermark[WMARK_LOW] = zone->_watermark[WMARK_MIN] + tmp;
		zone->_watermark[WMARK_HIGH] = zone->_watermark[WMARK_LOW] + tmp;
		spin_unlock_irqrestore(&zone->lock, flags);
	}
}

/*
 * setup_per_zone_lowmem_reserve(): zone i keeps back from an allocation
 * that could have used zone j > i the managed pages of zones i+1..j divided
 * by lowmem_reserve_ratio[i].
 */
void setup_per_zone_lowmem_reserve(struct mm *mm)
{
	for (int i = 0; i < MAX_NR_ZONES; i++) {
		struct zone *zone = &mm->zones[i];
		unsigned int ratio = mm->cfg.lowmem_reserve_ratio[i];
		bool clear = !ratio || !atomic_load(&zone->managed_pages);
		unsigned long managed = 0;

		for (int j = 0; j <= i; j++)
			zone->lowmem_reserve[j] = 0;
		for (int j = i + 1; j < MAX_NR_ZONES; j++) {
			managed += (unsigned long)atomic_load(&mm->zones[j].managed_pages);
			zone->lowmem_reserve[j] = clear ? 0 : (long)(managed / ratio);
		}
	}
}

/* init_per_zone_wmark_min() */
void init_per_zone_wmark_min(struct mm *mm)
{
	if (mm->cfg.min_free_kbytes)
		mm->min_free_kbytes = mm->cfg.min_free_kbytes;
	else
		calculate_min_free_kbytes(mm);
	setup_per_zone_wmarks(mm);
	setup_per_zone_lowmem_reserve(mm);
}

int mm_set_min_free_kbytes(struct mm *mm, unsigned long kbytes)
{
	if (kbytes > mm->nr_valid * (MM_PAGE_SIZE >> 10))
		return -1;
	mm->cfg.min_free_kbytes = kbytes;
	init_per_zone_wmark_min(mm);
	zone_pcp_update_all(mm);                /* setup_per_zone_wmarks()'s last step */
	return 0;
}

int mm_set_watermark_scale_factor(struct mm *mm, unsigned int factor)
{
	if (factor < 1 || factor > 3000)
		return -1;
	mm->cfg.watermark_scale_factor = factor;
	setup_per_zone_wmarks(mm);
	zone_pcp_update_all(mm);                /* setup_per_zone_wmarks()'s last step */
	return 0;
}

int mm_set_lowmem_reserve_ratio(struct mm *mm, const unsigned int ratio[MAX_NR_ZONES])
{
	memcpy(mm->cfg.lowmem_reserve_ratio, ratio ? ratio : default_lowmem_reserve_ratio,
	       sizeof(mm->cfg.lowmem_reserve_ratio));
	setup_per_zone_lowmem_reserve(mm);
	return 0;
}

/*
 * __zone_watermark_unusable_free(): free pages this request may not count:
 * the highatomic reserve unless it may use reserves, and (for order > 0)
 * the pages that cannot form a block of the order anyway.
 */
__data_racy long __zone_watermark_unusable_free(struct zone *z, unsigned int order, unsigned int alloc_flags)
{
	long unusable_free = (1L << order) - 1;

	if (likely(!(alloc_flags & ALLOC_RESERVES)))
		unusable_free += (long)READ_ONCE(z->nr_reserved_highatomic);
	return unusable_free;
}

/* free_area_empty() read without zone->lock: inline here, so __data_racy covers it. */
#define free_area_empty_racy(area, mt) \
	(READ_ONCE((area)->free_list[mt].next) == &(area)->free_list[mt])

/*
 * __zone_watermark_ok(): is the zone above @mark (minus the reserves this
 * request may dip into) plus the lowmem reserve for @highest_zoneidx, and -
 * for order > 0 - is there a free block of at least @order on a list this
 * request may take from?  free_pages may go negative; all of it is signed.
 */
__data_racy bool __zone_watermark_ok(struct zone *z, unsigned int order, unsigned long mark,
				     int highest_zoneidx, unsigned int alloc_flags, long free_pages)
{
	long min = (long)mark;

	if (z->mm->cfg.wmark_algo == MM_WMARK_2008) {
		unsigned long nr_free[MM_NR_ORDERS_LIMIT];
		for (unsigned int o = 0; o <= MAX_ORDER(z->mm); o++)
			nr_free[o] = READ_ONCE(z->free_area[o].nr_free);
		return zone_watermark_ok_2008(nr_free, MAX_ORDER(z->mm) + 1, free_pages, order, mark,
					      READ_ONCE(z->lowmem_reserve[highest_zoneidx]), alloc_flags);
	}

	/* free_pages may go negative - that's OK */
	free_pages -= __zone_watermark_unusable_free(z, order, alloc_flags);

	if (unlikely(alloc_flags & ALLOC_RESERVES)) {
		/* __GFP_HIGH allows access to 50% of the min reserve as well as OOM. */
		if (alloc_flags & ALLOC_MIN_RESERVE) {
			min -= min / 2;
			/* Non-blocking allocations (GFP_ATOMIC) can access more reserves. */
			if (alloc_flags & ALLOC_NON_BLOCK)
				min -= min / 4;
		}
		/* OOM victims can try even harder than the normal reserve users. */
		if (alloc_flags & ALLOC_OOM)
			min -= min / 2;
	}

	/*
	 * Check watermarks for an order-0 allocation request.  If these are
	 * not met, then a high-order request also cannot go ahead.
	 */
	if (free_pages <= min + READ_ONCE(z->lowmem_reserve[highest_zoneidx]))
		return false;

	/* If this is an order-0 request then the watermark is fine */
	if (!order)
		return true;

	/* For a high-order request, check at least one suitable page is free */
	for (unsigned int o = order; o <= MAX_ORDER(z->mm); o++) {
		struct free_area *area = &z->free_area[o];

		if (!READ_ONCE(area->nr_free))
			continue;
#ifdef MM_INJECT_WMARK_UNUSABLE_LISTS
		/* The pre-2018 shortcut: any free block passes for a reserve user. */
		if (alloc_flags & (ALLOC_HIGHATOMIC | ALLOC_OOM))
			return true;
#endif
		for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++)
			if (!free_area_empty_racy(area, mt))
				return true;
		if ((alloc_flags & (ALLOC_HIGHATOMIC | ALLOC_OOM)) &&
		    !free_area_empty_racy(area, MIGRATE_HIGHATOMIC))
			return true;
	}
	return false;
}

bool zone_watermark_ok(struct zone *z, unsigned int order, unsigned long mark,
		       int highest_zoneidx, unsigned int alloc_flags)
{
	return __zone_watermark_ok(z, order, mark, highest_zoneidx, alloc_flags,
				   zone_page_state(z, NR_FREE_PAGES));
}

/*
 * zone_watermark_fast(): the allocation fast path's check.  Order-0 first
 * tries a cheap test with the reserves subtracted, clamped at zero - the
 * 2022 fix "page_alloc: fix invalid watermark check on a negative value"
 * made this comparison signed.
 */
__data_racy bool zone_watermark_fast(struct zone *z, unsigned int order, unsigned long mark,
				     int highest_zoneidx, unsigned int alloc_flags, gfp_t gfp)
{
	long free_pages = zone_page_state(z, NR_FREE_PAGES);

	(void)gfp;
	if (!order && z->mm->cfg.wmark_algo == MM_WMARK_MODERN) {
		long reserved = __zone_watermark_unusable_free(z, 0, alloc_flags);
#ifdef MM_INJECT_WMARK_UNSIGNED_COMPARE
		/* Before the fix: may go negative, then compared as unsigned. */
		long fast_free = free_pages - reserved;
		if ((unsigned long)fast_free > mark + (unsigned long)READ_ONCE(z->lowmem_reserve[highest_zoneidx]))
			return true;
#else
		long usable_free = free_pages - MIN(free_pages > 0 ? free_pages : 0, reserved);
		if (usable_free > (long)mark + READ_ONCE(z->lowmem_reserve[highest_zoneidx]))
			return true;
#endif
	}
	return __zone_watermark_ok(z, order, mark, highest_zoneidx, alloc_flags, free_pages);
}

/*
 * The 2.6.28 zone_watermark_ok(): after the order-0 test, at each lower
 * order the pages of that order become unusable for this request and the
 * required minimum halves.
 */
bool zone_watermark_ok_2008(const unsigned long *nr_free, unsigned int nr_orders,
			    long free_pages, unsigned int order, unsigned long mark,
			    long lowmem_reserve, unsigned int alloc_flags)
{
	long min = (long)mark;

	free_pages -= (1L << order) - 1;
	if (alloc_flags & ALLOC_HIGH)
		min -= min / 2;
	if (alloc_flags & ALLOC_NON_BLOCK)   /* ALLOC_HARDER */
		min -= min / 4;

	if (free_pages <= min + lowmem_reserve)
		return false;
	for (unsigned int o = 0; o < order && o < nr_orders; o++) {
		/* At the next order, this order's pages become unavailable */
		free_pages -= (long)(nr_free[o] << o);
		/* Require fewer higher order pages to be free */
		min >>= 1;
		if (free_pages <= min)
			return false;
	}
	return true;
}

/* ---- accessors ---- */

struct zone *mm_zone(struct mm *mm, enum zone_type idx)
{
	if ((unsigned)idx >= MAX_NR_ZONES || !populated_zone(&mm->zones[idx]))
		return NULL;
	return &mm->zones[idx];
}
unsigned long zone_managed_pages(const struct zone *z)
{
	return (unsigned long)atomic_load(&((struct zone *)z)->managed_pages);
}
__data_racy unsigned long zone_wmark_pages(const struct zone *z, enum zone_watermarks w)
{
	return READ_ONCE(z->_watermark[w]) + READ_ONCE(z->watermark_boost);
}
__data_racy long zone_lowmem_reserve(const struct zone *z, enum zone_type highest_zoneidx)
{
	return READ_ONCE(z->lowmem_reserve[highest_zoneidx]);
}
long zone_free_pages(const struct zone *z)
{
	return zone_page_state(z, NR_FREE_PAGES);
}
__data_racy unsigned long zone_nr_free(const struct zone *z, unsigned int order)
{
	return order < MM_NR_ORDERS_LIMIT ? READ_ONCE(z->free_area[order].nr_free) : 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * alloc.c - the page allocator's entry points: gfp decoding, the zonelist
 * walk with watermark checks (get_page_from_freelist), the slow path with
 * reclaim, and freeing with the kernel's free-time page checks.
 *
 * Models mm/page_alloc.c of Linux 6.6: __alloc_pages(),
 * prepare_alloc_pages(), get_page_from_freelist(), rmqueue(),
 * rmqueue_buddy(), __alloc_pages_slowpath(), gfp_to_alloc_flags(),
 * free_pages_prepare(), __free_pages_ok().  Not modelled: NUMA (one node),
 * cpusets, compaction, kswapd as a thread, the OOM killer, watermark
 * boosting, CMA.  ALLOC_NOFRAGMENT is modelled (alloc_flags_nofragment()).
 */
#include <string.h>

#include "internal.h"
#include "page/pcp.h"

#define MAX_RECLAIM_RETRIES 16

/* gfp_zone(): the highest zone the request may use (GFP_ZONE_TABLE, 64-bit; never GFP_ZONE_BAD here). */
int gfp_zone(gfp_t gfp)
{
	if (gfp & __GFP_DMA)
		return ZONE_DMA;
	if (gfp & __GFP_DMA32)
		return ZONE_DMA32;
	if ((gfp & (__GFP_HIGHMEM | __GFP_MOVABLE)) == (__GFP_HIGHMEM | __GFP_MOVABLE))
		return ZONE_MOVABLE;
	return ZONE_NORMAL;
}

/*
 * The caller bugs 6.6 catches under CONFIG_DEBUG_VM in a gfp that has only
 * valid bits: more than one zone modifier (gfp_zone()'s VM_BUG_ON on
 * GFP_ZONE_BAD; without DEBUG_VM its table gives zone 0, DMA) and both
 * mobility hints (gfp_migratetype()'s VM_WARN_ON, after which 6.6 goes on
 * with MIGRATE_HIGHATOMIC's value as the list index: the pcp lists have no
 * such type, so it takes a list of the next order).  The model reports
 * either and refuses the request, as it does invalid bits.  Returns what is
 * wrong, NULL for a valid combination.
 */
const char *gfp_bad_combination(gfp_t gfp)
{
	gfp_t zone = gfp & GFP_ZONE_MODIFIERS;

	if (zone & (zone - 1))
		return "more than one zone modifier (GFP_ZONE_BAD)";
	if ((gfp & GFP_MOVABLE_MASK) == GFP_MOVABLE_MASK)
		return "both __GFP_MOVABLE and __GFP_RECLAIMABLE";
	return NULL;
}

/*
 * gfp_migratetype(): the mobility hint bits select the free lists - all
 * of them unmovable when grouping by mobility is off (6.6's
 * page_group_by_mobility_disabled, set in build_all_zonelists() on a
 * machine with too few pages; see mm_create()).
 */
int gfp_migratetype(const struct mm *mm, gfp_t gfp)
{
	if (unlikely(mm->page_group_by_mobility_disabled))
		return MIGRATE_UNMOVABLE;
	if (gfp & __GFP_MOVABLE)
		return MIGRATE_MOVABLE;
	if (gfp & __GFP_RECLAIMABLE)
		return MIGRATE_RECLAIMABLE;
	return MIGRATE_UNMOVABLE;
}

/* gfp_to_alloc_flags(): the slow path's flags (6.6, order-aware). */
static unsigned int gfp_to_alloc_flags_order(gfp_t gfp, unsigned int order)
{
	unsigned int alloc_flags = ALLOC_WMARK_MIN | ALLOC_CPUSET;

	if (gfp & __GFP_HIGH)
		alloc_flags |= ALLOC_MIN_RESERVE;
	if (gfp & __GFP_KSWAPD_RECLAIM)
		alloc_flags |= ALLOC_KSWAPD;
	if (!(gfp & __GFP_DIRECT_RECLAIM)) {
		/* Not worth trying to allocate harder for __GFP_NOMEMALLOC. */
		if (!(gfp & __GFP_NOMEMALLOC)) {
			alloc_flags |= ALLOC_NON_BLOCK;
			if (order > 0)
				alloc_flags |= ALLOC_HIGHATOMIC;
		}
		if (alloc_flags & ALLOC_MIN_RESERVE)
			alloc_flags &= ~ALLOC_CPUSET;
	}
	return alloc_flags;
}

unsigned int gfp_to_alloc_flags(gfp_t gfp)
{
	return gfp_to_alloc_flags_order(gfp, 0);
}

/*
 * __gfp_pfmemalloc_flags() (Linux 6.6): the reserves a request may take
 * below the min watermark.  __GFP_NOMEMALLOC forbids them, __GFP_MEMALLOC
 * grants ALLOC_NO_WATERMARKS, and so does a task in PF_MEMALLOC (reclaim
 * itself: a shrinker that allocates) outside interrupt context.  The
 * kernel also grants ALLOC_OOM to an OOM victim; the model has no OOM
 * killer, and no softirqs (6.6 lets one on top of a PF_MEMALLOC task in).
 */
static unsigned int __gfp_pfmemalloc_flags(gfp_t gfp)
{
	if (unlikely(gfp & __GFP_NOMEMALLOC))
		return 0;
	if (gfp & __GFP_MEMALLOC)
		return ALLOC_NO_WATERMARKS;
	if (!in_interrupt() && (get_current()->flags & PF_MEMALLOC))
		return ALLOC_NO_WATERMARKS;
	return 0;
}

/* gfp_pfmemalloc_allowed(): may this request use pfmemalloc memory (SLUB's pfmemalloc_match())? */
bool gfp_pfmemalloc_allowed(gfp_t gfp)
{
	return __gfp_pfmemalloc_flags(gfp) != 0;
}

bool page_is_pfmemalloc(const struct page *page)
{
	return ((uintptr_t)page->lru.next & 2UL) != 0;
}

/* prep_compound_page(): head, page[1].compound_order, tails point at the head. */
static void prep_compound_page(struct page *page, unsigned int order)
{
	unsigned long nr = 1UL << order;

	page_flag_set(page, PG_head);
	for (unsigned long i = 1; i < nr; i++)
		WRITE_ONCE(page[i].compound_head, (unsigned long)page | 1UL);
	page[1].compound_order = (unsigned char)order;
}

/*
 * post_alloc_hook() + prep_new_page(): the page becomes the caller's.  As
 * in 6.6, a page that needed ALLOC_NO_WATERMARKS is marked pfmemalloc (the
 * caller is expected to be freeing memory and should not let the page be
 * used for anything else), every other page is cleared of the mark.
 */
void prep_new_page(struct mm *mm, struct page *page, unsigned int order, gfp_t gfp, unsigned int alloc_flags)
{
	unsigned long pfn = __page_to_pfn(mm, page);

	page->private_ = 0;
	page->index = 0;
	set_page_count(page, 1);                     /* set_page_refcounted() */
	page->owner_order = order + 1;               /* page_owner */
	page->debug_ = (unsigned int)gfp_migratetype(mm, gfp);
	kasan_unpoison(__page_address(mm, pfn), MM_PAGE_SIZE << order);
	/* want_init_on_alloc(): __GFP_ZERO, or the init_on_alloc boot option. */
	if ((gfp & __GFP_ZERO) || mm->init_on_alloc)
		memset(__page_address(mm, pfn), 0, MM_PAGE_SIZE << order);
	if (order && (gfp & __GFP_COMP))
		prep_compound_page(page, order);
	if (alloc_flags & ALLOC_NO_WATERMARKS)
		set_page_pfmemalloc(page);
	else
		clear_page_pfmemalloc(page);
	__mod_zone_page_state(page_zone(mm, page), NR_ZONE_ALLOCATED, 1L << order);
}

/*
 * check_new_page(): a page coming off a free list must look free - no
 * reference, no owner, and no page flag at all (page_expected_state() with
 * PAGE_FLAGS_CHECK_AT_PREP: a stale PG_head too, not only the free-time
 * flags).  A page that does not is reported and leaked (the kernel's "bad
 * page" policy).
 */
bool check_new_pages(struct mm *mm, struct page *page, unsigned int order)
{
	for (unsigned long i = 0; i < (1UL << order); i++) {
		struct page *p = page + i;
		if (unlikely(page_count(p) != 0 || (p->flags & PAGE_FLAGS_CHECK_AT_PREP) || p->owner_order)) {
			bad_page(mm, p, page_count(p) ? "nonzero _refcount" :
				 p->owner_order ? "page on a free list is owned" :
				 "PAGE_FLAGS_CHECK_AT_PREP flag(s) set");
			return true;
		}
	}
	return false;
}

/*
 * rmqueue_buddy(): take a block from the zone under zone->lock.  The
 * highatomic reserve first for those allowed it, and as a last resort for
 * OOM victims.
 */
static struct page *rmqueue_buddy(struct zone *zone, unsigned int order, unsigned int alloc_flags,
				  int migratetype)
{
	struct mm *mm = zone->mm;
	struct page *page;
	unsigned long flags;
	int tries = 4;   /* bad pages are leaked and skipped: bounded (T1) */

	do {
		page = NULL;
		spin_lock_irqsave(&zone->lock, flags);
		if (alloc_flags & ALLOC_HIGHATOMIC)
			page = __rmqueue_smallest(zone, order, MIGRATE_HIGHATOMIC);
		if (!page) {
			page = __rmqueue(zone, order, migratetype, alloc_flags);
			/* OOM handling may take the highatomic reserve: failing now is worse. */
			if (!page && (alloc_flags & ALLOC_OOM))
				page = __rmqueue_smallest(zone, order, MIGRATE_HIGHATOMIC);
			if (!page) {
				spin_unlock_irqrestore(&zone->lock, flags);
				return NULL;
			}
		}
		__mod_zone_freepage_state(zone, -(1L << order), (int)page->index);
		spin_unlock_irqrestore(&zone->lock, flags);
	} while (check_new_pages(mm, page, order) && --tries);
	if (!tries)
		return NULL;
	__count_vm_events(mm, PGALLOC, 1UL << order);
	return page;
}

/* rmqueue(): small orders through the per-cpu lists, the rest from the buddy. */
static struct page *rmqueue(struct zone *zone, unsigned int order, gfp_t gfp,
			    unsigned int alloc_flags, int migratetype)
{
	struct page *page;

	if (likely(pcp_allowed_order(order))) {
		page = rmqueue_pcplist(zone, order, migratetype, alloc_flags);
		if (likely(page))
			return page;
	}
	(void)gfp;
	return rmqueue_buddy(zone, order, alloc_flags, migratetype);
}

/*
 * get_page_from_freelist(): walk the zonelist from the highest usable zone
 * down, take the first zone whose watermark allows the request.  A pass
 * under ALLOC_NOFRAGMENT that finds nothing is made again without it: on
 * one node every zone has then refused to mix pageblocks.
 */
static struct page *get_page_from_freelist(struct mm *mm, gfp_t gfp, unsigned int order,
					   unsigned int alloc_flags, int highest_zoneidx, int migratetype)
{
	bool no_fallback;

retry:
	no_fallback = alloc_flags & ALLOC_NOFRAGMENT;
	for (int z = highest_zoneidx; z >= 0; z--) {
		struct zone *zone = &mm->zones[z];
		struct page *page;

		if (!populated_zone(zone))
			continue;
		if (!(alloc_flags & ALLOC_NO_WATERMARKS)) {
			unsigned long mark = zone_wmark_pages(zone, alloc_flags & ALLOC_WMARK_MASK);
			if (!zone_watermark_fast(zone, order, mark, highest_zoneidx, alloc_flags, gfp))
				continue;
		}
		page = rmqueue(zone, order, gfp, alloc_flags, migratetype);
		if (page) {
			prep_new_page(mm, page, order, gfp, alloc_flags);
			/* A high-order atomic allocation reserves its pageblock for the next one. */
			if (unlikely(alloc_flags & ALLOC_HIGHATOMIC) && order)
				reserve_highatomic_pageblock(zone, page, order);
			return page;
		}
	}
	if (no_fallback) {
		alloc_flags &= ~ALLOC_NOFRAGMENT;
		goto retry;
	}
	return NULL;
}

/*
 * alloc_flags_nofragment(): the fast path's first pass keeps a request
 * whose preferred zone (the highest populated one it may use) is Normal
 * from splitting another type's pageblock in Normal before DMA32 and DMA
 * have been tried - spreading over Normal and DMA32 is better than mixing
 * pageblocks.  On one node (the model's only case) 6.6 sets it whether or
 * not DMA32 is populated; it also passes __GFP_KSWAPD_RECLAIM through as
 * ALLOC_KSWAPD, which the model's fast path does not use.
 */
static unsigned int alloc_flags_nofragment(const struct mm *mm, int highest_zoneidx)
{
	int z = highest_zoneidx;

	while (z >= 0 && !populated_zone(&mm->zones[z]))
		z--;
	return z == ZONE_NORMAL ? ALLOC_NOFRAGMENT : 0;
}

/*
 * should_reclaim_retry() (Linux 6.6.0): retry reclaim while it made
 * progress lately - after more than MAX_RECLAIM_RETRIES rounds in a row
 * without, the highatomic reserve is given back (force) and that alone
 * decides - and only while some usable zone could meet its min watermark
 * with everything reclaimable freed: otherwise the kernel goes to the OOM
 * killer, and the model, which has none, fails.  The shrinkers' freeable
 * objects (shrinkers_freeable()) stand for zone_reclaimable_pages(),
 * counted for every zone.
 */
static bool should_reclaim_retry(struct mm *mm, gfp_t gfp, unsigned int order, int highest_zoneidx,
				 int migratetype, unsigned int alloc_flags, bool did_some_progress,
				 int *no_progress_loops)
{
	if (did_some_progress && order <= PAGE_ALLOC_COSTLY_ORDER)
		*no_progress_loops = 0;
	else
		(*no_progress_loops)++;
	/* Make sure we converge to OOM if we cannot make any progress several times in the row. */
	if (*no_progress_loops > MAX_RECLAIM_RETRIES)
		return unreserve_highatomic_pageblock(mm, highest_zoneidx, migratetype, true);

	unsigned long reclaimable = shrinkers_freeable(mm, gfp, highest_zoneidx);
	for (int z = highest_zoneidx; z >= 0; z--) {
		struct zone *zone = &mm->zones[z];
		if (!populated_zone(zone))
			continue;
		/* Would the allocation succeed if we reclaimed all reclaimable pages? */
		long available = (long)reclaimable + zone_free_pages(zone);
		if (__zone_watermark_ok(zone, order, zone_wmark_pages(zone, WMARK_MIN), highest_zoneidx, alloc_flags,
					available))
			return true;
	}
	return false;
}

/*
 * __alloc_pages_slowpath(): lower the watermark to min (with the reserves
 * the gfp allows), reclaim through the shrinkers, give back highatomic
 * reserves and drain the pcp lists, retry as should_reclaim_retry() says
 * (orders up to PAGE_ALLOC_COSTLY_ORDER; a costly order gets one round).
 * No OOM killer: after the retries the allocation fails with no side effects.
 */
static noinline struct page *__alloc_pages_slowpath(struct mm *mm, gfp_t gfp, unsigned int order,
						    int highest_zoneidx, int migratetype)
{
	unsigned int alloc_flags = gfp_to_alloc_flags_order(gfp, order);
	bool can_direct_reclaim = gfp & __GFP_DIRECT_RECLAIM;
	int no_progress_loops = 0, loops = 0;
	struct page *page;

	page = get_page_from_freelist(mm, gfp, order, alloc_flags, highest_zoneidx, migratetype);
	if (page)
		return page;

	/*
	 * reserve_flags (__GFP_MEMALLOC): every attempt from here on ignores
	 * the watermarks, the reclaim retries included, and what it gets is
	 * marked pfmemalloc (prep_new_page()).
	 */
	unsigned int reserve_flags = __gfp_pfmemalloc_flags(gfp);
	if (reserve_flags) {
		alloc_flags = reserve_flags;
		page = get_page_from_freelist(mm, gfp, order, alloc_flags, highest_zoneidx, migratetype);
		if (page)
			return page;
	}

	/* Avoid recursion of direct reclaim: a shrinker's allocation has had the reserves, and no more. */
	if (get_current()->flags & PF_MEMALLOC)
		can_direct_reclaim = false;

	while (can_direct_reclaim && loops++ < 4 * MAX_RECLAIM_RETRIES) {
		/* retry: the freelists first (others may have freed meanwhile). */
		if (loops > 1) {
			page = get_page_from_freelist(mm, gfp, order, alloc_flags, highest_zoneidx, migratetype);
			if (page)
				return page;
		}
		/*
		 * __alloc_pages_direct_reclaim(): reclaim; when it freed
		 * something, retry, and once give back a highatomic block,
		 * drain every pcp list and retry.  Reclaim that freed nothing
		 * retries nothing, drains nothing.
		 */
		unsigned int noreclaim = memalloc_noreclaim_save();    /* __perform_reclaim() */
		unsigned long progress = try_to_free_pages(mm, gfp, order, highest_zoneidx);
		memalloc_noreclaim_restore(noreclaim);

		if (progress) {
			page = get_page_from_freelist(mm, gfp, order, alloc_flags, highest_zoneidx, migratetype);
			if (!page) {
				/* Pages may be pinned on the per-cpu lists or the highatomic reserve. */
				unreserve_highatomic_pageblock(mm, highest_zoneidx, migratetype, false);
				drain_all_pages(mm, NULL);
				page = get_page_from_freelist(mm, gfp, order, alloc_flags, highest_zoneidx, migratetype);
			}
			if (page)
				return page;
		}
		/* Do not loop if specifically requested */
		if (gfp & __GFP_NORETRY)
			break;
		/*
		 * Do not retry costly high-order allocations (the kernel's
		 * unless __GFP_RETRY_MAYFAIL and compaction, neither of which
		 * the model has): reclaim's progress says nothing of whether
		 * such an order will form.
		 */
		if (order > PAGE_ALLOC_COSTLY_ORDER)
			break;
		if (!should_reclaim_retry(mm, gfp, order, highest_zoneidx, migratetype, alloc_flags, progress > 0,
					  &no_progress_loops))
			break;
	}
	__count_vm_events(mm, ALLOCFAIL, 1);
	return NULL;
}

/* __alloc_pages(): the heart of the zoned buddy allocator. */
struct page *alloc_pages(struct mm *mm, gfp_t gfp, unsigned int order)
{
	struct page *page;
	const char *bad;
	int highest_zoneidx, migratetype;

	/* There are several places where we assume that the order value is sane. */
	if (unlikely(order > MAX_ORDER(mm))) {
		/* WARN_ON_ONCE_GFP(order > MAX_PAGE_ORDER, gfp): a report unless __GFP_NOWARN. */
		if (!(gfp & __GFP_NOWARN))
			mm_report(mm, "bad_alloc", ~0UL, 0, "alloc_pages: order %u above max_order %u",
				  order, MAX_ORDER(mm));
		return NULL;
	}
	if (unlikely(gfp & ~MM_GFP_VALID_MASK)) {
		mm_report(mm, "bad_gfp", ~0UL, 0, "alloc_pages: invalid gfp bits %#x", gfp & ~MM_GFP_VALID_MASK);
		return NULL;
	}
	bad = gfp_bad_combination(gfp);
	if (unlikely(bad)) {
		mm_report(mm, "bad_gfp", ~0UL, 0, "alloc_pages: invalid gfp %#x: %s", gfp, bad);
		return NULL;
	}
	might_alloc(gfp);       /* prepare_alloc_pages() */
	highest_zoneidx = gfp_zone(gfp);
	migratetype = gfp_migratetype(mm, gfp);

	/*
	 * First allocation attempt: the low watermark, without mixing
	 * pageblocks while a lower zone could serve it.
	 */
	page = get_page_from_freelist(mm, gfp, order, ALLOC_WMARK_LOW | alloc_flags_nofragment(mm, highest_zoneidx),
				      highest_zoneidx, migratetype);
	if (likely(page))
		return page;
	return __alloc_pages_slowpath(mm, gfp, order, highest_zoneidx, migratetype);
}

unsigned long __get_free_pages(struct mm *mm, gfp_t gfp, unsigned int order)
{
	struct page *page = alloc_pages(mm, gfp & ~__GFP_HIGHMEM, order);
	return page ? (unsigned long)page_address(mm, page) : 0;
}

unsigned long get_zeroed_page(struct mm *mm, gfp_t gfp)
{
	return __get_free_pages(mm, gfp | __GFP_ZERO, 0);
}

/* ---------------------------------------------------------------- free */

/*
 * free_page_is_bad_report(): name what is wrong with a page being freed
 * (page_bad_reason()).  Only reached when the cheap combined test failed.
 */
static noinline void free_page_is_bad_report(struct mm *mm, struct page *page, unsigned int order)
{
	unsigned long pfn = __page_to_pfn(mm, page);

	if (PageTail(page)) {
		bad_page(mm, page, "freeing a tail page of a compound page");
		return;
	}
	if (page->flags & PAGE_FLAGS_CHECK_AT_FREE) {
		bad_page(mm, page, PageBuddy(page) ? "page is already free (PageBuddy): double free" :
				   "PAGE_FLAGS_CHECK_AT_FREE flag(s) set");
		return;
	}
	if (page_count(page) == 0) {
		/* Inside an allocation, or free (inside a buddy block or on a pcp list)? */
		for (unsigned int o = 1; o <= MAX_ORDER(mm); o++) {
			unsigned long head = pfn & ~((1UL << o) - 1);
			if (!__pfn_valid(mm, head))
				break;
			struct page *h = __pfn_to_page(mm, head);
			if (page_count(h) > 0 && h->owner_order > o) {
				bad_page(mm, page, "freeing an interior page of a higher-order allocation");
				return;
			}
		}
		bad_page(mm, page, "page refcount is zero: double free");
		return;
	}
	if (page_count(page) != 1) {
		bad_page(mm, page, "nonzero _refcount after put");
		return;
	}
	if (page->owner_order != order + 1) {
		char why[96];
		snprintf(why, sizeof(why), "order mismatch: allocated as order %u, freed as order %u",
			 page->owner_order - 1, order);
		bad_page(mm, page, why);
		return;
	}
	if (PageHead(page) && page[1].compound_order != order) {
		bad_page(mm, page, "compound_order mismatch");
		return;
	}
	bad_page(mm, page, "corrupted page state");
}

/*
 * The tail pages of an order > 0 free (free_pages_prepare()'s loop over
 * page + 1 .. page + (1 << order) - 1): a compound page's tails must still
 * point at their head (free_tail_page_prepare()), and every tail must look
 * like a page no one holds (free_page_is_bad(): no reference, no owner, no
 * free-time flag) - a tail left PageBuddy, PG_slab or referenced by a bug
 * would otherwise be merged into the buddy unreported.
 */
static bool free_tail_pages_bad(struct mm *mm, struct page *page, unsigned int order, bool compound)
{
	for (unsigned long i = 1; i < (1UL << order); i++) {
		struct page *p = &page[i];
		if (compound && READ_ONCE(p->compound_head) != ((unsigned long)page | 1UL)) {
			bad_page(mm, p, "compound_head not consistent");
			return true;
		}
		if (unlikely(page_count(p) != 0 || (p->flags & PAGE_FLAGS_CHECK_AT_FREE) || p->owner_order)) {
			bad_page(mm, p, page_count(p) ? "tail page: nonzero _refcount" :
				 p->owner_order ? "tail page: owned by an allocation of its own" :
				 PageBuddy(p) ? "tail page: already free (PageBuddy)" :
				 "tail page: PAGE_FLAGS_CHECK_AT_FREE flag(s) set");
			return true;
		}
	}
	return false;
}

/*
 * free_pages_prepare(): validate the page and turn it back into a free
 * page (refcount 0, no head/tail state, poisoned).  Returns false - and
 * changes nothing - if the page must not be freed.
 */
bool free_pages_prepare(struct mm *mm, struct page *page, unsigned int order)
{
	bool compound = PageHead(page);

	/* One combined test for the common case (STYLE rule 8). */
	if (unlikely(order > MAX_ORDER(mm) || page_count(page) != 1 || page->owner_order != order + 1 ||
		     (page->flags & PAGE_FLAGS_CHECK_AT_FREE) || PageTail(page) ||
		     (compound && (order == 0 || page[1].compound_order != order)))) {
		free_page_is_bad_report(mm, page, order);
		return false;
	}
	if (order && free_tail_pages_bad(mm, page, order, compound))
		return false;

	if (compound) {
		for (unsigned long i = 1; i < (1UL << order); i++)
			page[i].compound_head = 0;
		page[1].compound_order = 0;
		page_flag_clear(page, PG_head);
	}
	set_page_count(page, 0);
	page->owner_order = 0;
	page->debug_ = 0;
	page->private_ = 0;
	/*
	 * want_init_on_free(): kernel_init_pages() before the pages are
	 * poisoned, with KASAN's checks off (kasan_disable_current()) as the
	 * kernel does: a large kmalloc's bytes past its size are poisoned.
	 */
	if (mm->init_on_free) {
		kasan_unpoison(page_address(mm, page), MM_PAGE_SIZE << order);
		memset(page_address(mm, page), 0, MM_PAGE_SIZE << order);
	}
	kasan_poison(page_address(mm, page), MM_PAGE_SIZE << order);
	__mod_zone_page_state(page_zone(mm, page), NR_ZONE_ALLOCATED, -(1L << order));
	return true;
}

/* __free_pages_ok() / free_one_page(): back to the buddy under zone->lock. */
static void __free_pages_ok(struct mm *mm, struct page *page, unsigned int order)
{
	unsigned long pfn = __page_to_pfn(mm, page), flags;
	struct zone *zone = page_zone(mm, page);

	spin_lock_irqsave(&zone->lock, flags);
	split_large_buddy(zone, page, pfn, order, FPI_NONE);
	spin_unlock_irqrestore(&zone->lock, flags);
	__count_vm_events(mm, PGFREE, 1UL << order);
}

void __free_pages(struct mm *mm, struct page *page, unsigned int order)
{
	if (unlikely(!page_in_memmap(mm, page))) {
		mm_report(mm, "bad_free", ~0UL, 0, "__free_pages: %p is not a struct page of this memory", (void *)page);
		return;
	}
	if (!free_pages_prepare(mm, page, order))
		return;
	if (pcp_allowed_order(order))
		free_unref_page(mm, page, order);
	else
		__free_pages_ok(mm, page, order);
}

void free_pages(struct mm *mm, unsigned long addr, unsigned int order)
{
	uintptr_t base = (uintptr_t)mm->arena;

	if (addr == 0)
		return;     /* free_pages(0) is a no-op, as in the kernel */
	if (addr < base || addr >= base + mm->arena_len) {
		mm_report(mm, "bad_free", ~0UL, 0, "free_pages: address %#lx outside memory [%p, %p)",
			  addr, (void *)mm->arena, (void *)(mm->arena + mm->arena_len));
		return;
	}
	unsigned long pfn = mm->first_pfn + ((addr - base) >> MM_PAGE_SHIFT);
	if (addr & (MM_PAGE_SIZE - 1)) {
		mm_report(mm, "bad_free", pfn, 0, "free_pages: address %#lx is not page aligned", addr);
		return;
	}
	if (!__pfn_valid(mm, pfn)) {
		mm_report(mm, "bad_free", pfn, 0, "free_pages: address %#lx (pfn %#lx) is in a hole", addr, pfn);
		return;
	}
	__free_pages(mm, __pfn_to_page(mm, pfn), order);
}

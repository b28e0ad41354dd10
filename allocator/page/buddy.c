/* SPDX-License-Identifier: MIT */
/*
 * buddy.c - the binary buddy allocator of one zone: free lists per order and
 * migratetype, merging on free, splitting on allocation, fallback and
 * stealing between migratetypes, the high-order atomic reserve.
 *
 * Models mm/page_alloc.c of Linux 6.6 (MAX_PAGE_ORDER inclusive), with one
 * older behaviour kept on purpose: the buddy pfn is checked with pfn_valid
 * before its struct page is touched, as kernels up to 5.13 did with
 * pfn_valid_within() for CONFIG_HOLES_IN_ZONE - the model's memmap has holes.
 *
 * Locking: everything here runs under zone->lock (spin_lock_irqsave), which
 * protects free_area[], nr_free, the pageblock migratetypes of the zone and
 * nr_reserved_highatomic.  NR_FREE_PAGES is an atomic counter updated by the
 * callers of __rmqueue and inside __free_one_page.
 *
 * Page states (page->flags, _refcount, private):
 *   free in buddy   PG_buddy, private = order, refcount 0, on free_list[order][mt]
 *   inside a block  no PG_buddy, refcount 0 (only the first pfn of a block is marked)
 *   on a pcp list   no PG_buddy, refcount 0, private = order (page/pcp.c)
 *   allocated       refcount 1 on the head, owner_order = order + 1
 */
#include "internal.h"

/* The fallback order of migratetypes (Linux 6.6 fallbacks[]). */
static const int fallbacks[MIGRATE_PCPTYPES][MIGRATE_PCPTYPES - 1] = {
	[MIGRATE_UNMOVABLE]   = { MIGRATE_RECLAIMABLE, MIGRATE_MOVABLE },
	[MIGRATE_MOVABLE]     = { MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE },
	[MIGRATE_RECLAIMABLE] = { MIGRATE_UNMOVABLE, MIGRATE_MOVABLE },
};

static inline struct page *get_page_from_free_area(struct free_area *area, int mt)
{
	if (list_empty(&area->free_list[mt]))
		return NULL;
	return list_first_entry(&area->free_list[mt], struct page, lru);
}

void add_to_free_list(struct zone *zone, struct page *page, unsigned int order, int mt, bool tail)
{
	struct free_area *area = &zone->free_area[order];
	if (tail)
		list_add_tail(&page->lru, &area->free_list[mt]);
	else
		list_add(&page->lru, &area->free_list[mt]);
	area->nr_free++;
}

/* Used for pages which are on another list (move_to_free_list) */
static inline void move_to_free_list(struct zone *zone, struct page *page, unsigned int order, int mt)
{
	list_move_tail(&page->lru, &zone->free_area[order].free_list[mt]);
}

void del_page_from_free_list(struct zone *zone, struct page *page, unsigned int order)
{
	list_del(&page->lru);
	__ClearPageBuddy(page);
	page->private_ = 0;
	zone->free_area[order].nr_free--;
}

/*
 * page_is_buddy(): @buddy is free, of the same order and in the same zone.
 * The zone test is what "zone handle unaligned zone boundaries" (2006) added:
 * without it two blocks on either side of an unaligned zone boundary merge.
 */
/*
 * Racy by design: @buddy may be a page another task owns and is writing
 * (prep_compound_page, SLUB's PG_slab) outside zone->lock; only a free page's
 * state is stable under it, and that is all the answer depends on (the
 * kernel reads it the same way).  __data_racy keeps TSan out of it.
 */
static __data_racy bool page_is_buddy(const struct zone *zone, struct page *buddy, unsigned int order)
{
	/* Plain field reads, no helpers: at -O0 a helper would be a separate, instrumented function. */
	unsigned long flags = READ_ONCE(buddy->flags);

	if (!(flags & (1UL << PG_buddy)))
		return false;
	if (READ_ONCE(buddy->private_) != order)
		return false;
#ifndef MM_INJECT_BUDDY_MERGE_ACROSS_ZONES
	if (((flags >> ZONES_PGSHIFT) & ZONES_MASK) != (unsigned long)zone->idx)
		return false;
#endif
	VM_BUG_ON_PAGE(page_count(buddy) != 0, buddy);
	return true;
}

/* find_buddy_page_pfn(): the buddy of (page, pfn) at @order if it is free. */
static inline struct page *find_buddy_page_pfn(struct zone *zone, struct page *page, unsigned long pfn,
					       unsigned int order, unsigned long *buddy_pfn)
{
	unsigned long __buddy_pfn = __find_buddy_pfn(pfn, order);
	struct page *buddy;

	if (buddy_pfn)
		*buddy_pfn = __buddy_pfn;
	if (!__pfn_valid(zone->mm, __buddy_pfn))   /* pfn_valid_within() */
		return NULL;
	buddy = page + ((long)__buddy_pfn - (long)pfn);
	return page_is_buddy(zone, buddy, order) ? buddy : NULL;
}

/*
 * __free_one_page(): put a block back and merge it with its buddy as long
 * as the buddy is free, up to MAX_PAGE_ORDER.  The pageblock test keeps
 * isolated and highatomic blocks from merging with ordinary ones, so their
 * accounting stays exact.
 */
void __free_one_page(struct zone *zone, struct page *page, unsigned long pfn,
		     unsigned int order, int migratetype, fpi_t fpi_flags)
{
	struct mm *mm = zone->mm;
	unsigned long buddy_pfn = pfn, combined_pfn;
	struct page *buddy;
	bool to_tail;

	VM_BUG_ON(migratetype < 0 || migratetype >= MIGRATE_TYPES);
	VM_BUG_ON_PAGE(pfn & ((1UL << order) - 1), page);
	VM_BUG_ON_PAGE(!zone_spans_pfn(zone, pfn), page);
	VM_BUG_ON_PAGE(page->flags & PAGE_FLAGS_CHECK_AT_PREP, page);

	if (likely(!is_migrate_isolate(migratetype)))
		__mod_zone_freepage_state(zone, 1L << order, migratetype);

#ifdef MM_INJECT_BUDDY_MERGE_MAX_ORDER
	while (order <= MAX_ORDER(mm)) {   /* injected: the bound off by one */
#else
	while (order < MAX_ORDER(mm)) {
#endif
#ifdef MM_INJECT_BUDDY_MT_BEFORE_VALIDATE
		/* The 5.18-rc bug: the buddy's pageblock read before the buddy is validated. */
		if (unlikely(order >= mm->pageblock_order)) {
			unsigned long bp = __find_buddy_pfn(pfn, order);
			struct page *b = page + ((long)bp - (long)pfn);
			int buddy_mt = get_pfnblock_migratetype(mm, b, bp);
			if (migratetype != buddy_mt &&
			    (!migratetype_is_mergeable(migratetype) || !migratetype_is_mergeable(buddy_mt)))
				goto done_merging;
		}
#endif
		buddy = find_buddy_page_pfn(zone, page, pfn, order, &buddy_pfn);
		if (!buddy)
			goto done_merging;

		if (unlikely(order >= mm->pageblock_order)) {
			/*
			 * Don't merge free pages of a pageblock without fallbacks
			 * (isolate, highatomic) with a normal pageblock.
			 */
			int buddy_mt = get_pfnblock_migratetype(mm, buddy, buddy_pfn);

			if (migratetype != buddy_mt &&
			    (!migratetype_is_mergeable(migratetype) || !migratetype_is_mergeable(buddy_mt)))
				goto done_merging;
		}

		del_page_from_free_list(zone, buddy, order);
		combined_pfn = buddy_pfn & pfn;
		page = page + ((long)combined_pfn - (long)pfn);
		pfn = combined_pfn;
		order++;
	}

done_merging:
	set_buddy_order(page, order);

	/*
	 * FPI_TO_TAIL, or buddy_merge_likely(): if the block this one would
	 * form at the next order has a free buddy, a merge is likely soon -
	 * queue this block at the tail so it is not split in the meantime.
	 */
	to_tail = fpi_flags & FPI_TO_TAIL;
	if (!to_tail && order + 1 < MAX_ORDER(mm)) {
		unsigned long higher_pfn = buddy_pfn & pfn;
		if (__pfn_valid(mm, higher_pfn))
			to_tail = find_buddy_page_pfn(zone, __pfn_to_page(mm, higher_pfn), higher_pfn,
						      order + 1, NULL) != NULL;
	}
	add_to_free_list(zone, page, order, migratetype, to_tail);
}

/*
 * split_large_buddy(): free a block that spans pageblocks one pageblock at
 * a time, each with its own pageblock's migratetype, so no free block is on
 * a list that does not match every pageblock it covers (Linux 6.10; 6.6
 * filed the whole block by its first pageblock, which put blocks half in a
 * movable pageblock on the highatomic list - invariant B1).  The pieces
 * merge back wherever their types allow.  Under zone->lock.
 */
void split_large_buddy(struct zone *zone, struct page *page, unsigned long pfn, unsigned int order,
		       fpi_t fpi_flags)
{
	struct mm *mm = zone->mm;
	unsigned long end = pfn + (1UL << order);

	if (order > mm->pageblock_order)
		order = mm->pageblock_order;
	while (pfn != end) {
		int mt = get_pfnblock_migratetype(mm, page, pfn);
		__free_one_page(zone, page, pfn, order, mt, fpi_flags);
		pfn += 1UL << order;
		page = __pfn_to_page(mm, pfn);
	}
}

/*
 * expand(): split a block of order @high down to order @low, giving the
 * upper halves back to the free lists.  The block is already off the lists.
 */
static inline void expand(struct zone *zone, struct page *page, unsigned int low,
			  unsigned int high, int migratetype)
{
	unsigned long size = 1UL << high;

	while (high > low) {
		high--;
		size >>= 1;
		VM_BUG_ON_PAGE(!zone_spans_pfn(zone, __page_to_pfn(zone->mm, &page[size])), &page[size]);
		add_to_free_list(zone, &page[size], high, migratetype, false);
		set_buddy_order(&page[size], high);
	}
}

/* __rmqueue_smallest(): the smallest free block of exactly @migratetype. */
struct page *__rmqueue_smallest(struct zone *zone, unsigned int order, int migratetype)
{
	for (unsigned int current_order = order; current_order <= MAX_ORDER(zone->mm); ++current_order) {
		struct free_area *area = &zone->free_area[current_order];
		struct page *page = get_page_from_free_area(area, migratetype);
		if (!page)
			continue;
		del_page_from_free_list(zone, page, current_order);
		expand(zone, page, order, current_order, migratetype);
		page->index = (unsigned long)migratetype;   /* set_pcppage_migratetype() */
		return page;
	}
	return NULL;
}

/*
 * Is @p the first page of a free block?  If not, count it in *num_movable
 * when it belongs to a movable allocation (PageLRU / __PageMovable in the
 * kernel).  Allocated pages are read racily, as the kernel reads them.
 *
 * 6.6's move_freepages() tests every pfn, and PageLRU() of a tail page
 * reads its head's flag (PF_HEAD), so every page of a movable compound
 * allocation counts: the head adds all of them that lie before @last_pfn
 * (the tails, which have no owner of their own, add nothing).  A page of a
 * non-compound allocation has no tails, so only its first page counts.
 */
static __data_racy bool page_is_free_head(struct page *p, unsigned long pfn, unsigned long last_pfn,
					  unsigned long *num_movable)
{
	unsigned long flags = READ_ONCE(p->flags);
	unsigned int owner_order = READ_ONCE(p->owner_order);

	if (flags & (1UL << PG_buddy))
		return true;
	if (num_movable && owner_order && READ_ONCE(p->debug_) == MIGRATE_MOVABLE) {
		unsigned long nr = (flags & (1UL << PG_head)) ? 1UL << (owner_order - 1) : 1;

		*num_movable += MIN(nr, last_pfn - pfn + 1);
	}
	return false;
}

/*
 * move_freepages_block(): move every free block of @page's pageblock to the
 * @migratetype lists.  Returns the number of pages moved, 0 when the
 * pageblock is not entirely inside the zone.  *num_movable counts allocated
 * pages that were allocated movable (PageLRU / __PageMovable in the kernel).
 */
static unsigned long move_freepages_block_count(struct zone *zone, struct page *page,
						int migratetype, unsigned long *num_movable)
{
	struct mm *mm = zone->mm;
	unsigned long pfn = __page_to_pfn(mm, page);
	unsigned long start_pfn = pfn & ~(pageblock_nr_pages(mm) - 1);
	unsigned long end_pfn = start_pfn + pageblock_nr_pages(mm) - 1;
	unsigned long moved = 0;

	if (num_movable)
		*num_movable = 0;
	/* Do not cross zone boundaries */
	if (!zone_spans_pfn(zone, start_pfn))
		start_pfn = pfn;
	if (!zone_spans_pfn(zone, end_pfn))
		return 0;

	for (pfn = start_pfn; pfn <= end_pfn;) {
		if (!__pfn_valid(mm, pfn)) {
			pfn++;
			continue;
		}
		struct page *p = __pfn_to_page(mm, pfn);
		if (!page_is_free_head(p, pfn, end_pfn, num_movable)) {
			pfn++;
			continue;
		}
		VM_BUG_ON_PAGE(page_zonenum(p) != (unsigned)zone->idx, p);
		unsigned int order = buddy_order(p);
		move_to_free_list(zone, p, order, migratetype);
		pfn += 1UL << order;
		moved += 1UL << order;
	}
	return moved;
}

unsigned long move_freepages_block(struct zone *zone, struct page *page, int migratetype)
{
	return move_freepages_block_count(zone, page, migratetype, NULL);
}

static void change_pageblock_range(struct zone *zone, unsigned long pfn, unsigned int order, int mt)
{
	unsigned long nr = 1UL << order, step = pageblock_nr_pages(zone->mm);
	for (unsigned long p = pfn; p < pfn + nr; p += step)
		set_pageblock_migratetype(zone, p, mt);
}

/*
 * can_steal_fallback(): whether taking a block of another type should also
 * claim the rest of its pageblock.  Unmovable and reclaimable allocations
 * steal eagerly to keep fragmentation in few pageblocks.
 */
static bool can_steal_fallback(struct mm *mm, unsigned int order, int start_mt)
{
	if (order >= mm->pageblock_order || mm->page_group_by_mobility_disabled)
		return true;
	return order >= mm->pageblock_order / 2 || start_mt == MIGRATE_RECLAIMABLE ||
	       start_mt == MIGRATE_UNMOVABLE;
}

static int find_suitable_fallback(struct zone *zone, struct free_area *area, unsigned int order,
				  int migratetype, bool *can_steal)
{
	if (area->nr_free == 0)
		return -1;
	*can_steal = false;
	for (int i = 0; i < MIGRATE_PCPTYPES - 1; i++) {
		int fallback_mt = fallbacks[migratetype][i];
		if (list_empty(&area->free_list[fallback_mt]))
			continue;
		if (can_steal_fallback(zone->mm, order, migratetype))
			*can_steal = true;
		return fallback_mt;
	}
	return -1;
}

/*
 * steal_suitable_fallback(): move the block to the requested type's list
 * and, when enough of its pageblock is free or compatible, claim the whole
 * pageblock.
 */
static void steal_suitable_fallback(struct zone *zone, struct page *page, int start_type,
				    bool whole_block)
{
	struct mm *mm = zone->mm;
	unsigned int current_order = buddy_order(page);
	unsigned long pfn = __page_to_pfn(mm, page);
	unsigned long free_pages, movable_pages, alike_pages;
	int old_block_type = get_pfnblock_migratetype(mm, page, pfn);

	/* This can happen due to races and we want to prevent broken highatomic accounting. */
	if (is_migrate_highatomic(old_block_type))
		goto single_page;

	/* Take ownership for orders >= pageblock_order */
	if (current_order >= mm->pageblock_order) {
		change_pageblock_range(zone, pfn, current_order, start_type);
		__count_vm_events(mm, PGSTEAL_BLOCK, 1UL << (current_order - mm->pageblock_order));
		goto single_page;
	}
	if (!whole_block)
		goto single_page;

	free_pages = move_freepages_block_count(zone, page, start_type, &movable_pages);
	/* moving whole block can fail due to zone boundary conditions */
	if (!free_pages)
		goto single_page;

	if (start_type == MIGRATE_MOVABLE)
		alike_pages = movable_pages;
	else if (old_block_type == MIGRATE_MOVABLE)
		alike_pages = pageblock_nr_pages(mm) - (free_pages + movable_pages);
	else
		alike_pages = 0;

	/* If half the block is free or compatible, claim it (always, with grouping by mobility off). */
	if (free_pages + alike_pages >= (1UL << (mm->pageblock_order ? mm->pageblock_order - 1 : 0)) ||
	    mm->page_group_by_mobility_disabled) {
		set_pageblock_migratetype(zone, pfn, start_type);
		__count_vm_events(mm, PGSTEAL_BLOCK, 1);
	}
	return;

single_page:
	move_to_free_list(zone, page, current_order, start_type);
}

/*
 * __rmqueue_fallback(): no block of the requested type - take the largest
 * block of a fallback type (approximating the pageblock with the most free
 * pages), or the smallest one when a movable request cannot claim the block.
 * Under ALLOC_NOFRAGMENT (the fast path's first pass, alloc.c) a request
 * below pageblock_order takes nothing smaller than a whole pageblock: a
 * smaller free block lies in another type's pageblock, and taking it would
 * mix the two; get_page_from_freelist() tries the lower zones first and
 * only then allows it.
 */
static bool __rmqueue_fallback(struct zone *zone, unsigned int order, int start_migratetype,
			       unsigned int alloc_flags)
{
	struct mm *mm = zone->mm;
	struct free_area *area;
	int current_order, fallback_mt = -1, min_order = (int)order;
	bool can_steal = false;

	if (order < mm->pageblock_order && (alloc_flags & ALLOC_NOFRAGMENT))
		min_order = (int)mm->pageblock_order;
	for (current_order = (int)MAX_ORDER(mm); current_order >= min_order; --current_order) {
		area = &zone->free_area[current_order];
		fallback_mt = find_suitable_fallback(zone, area, (unsigned)current_order, start_migratetype, &can_steal);
		if (fallback_mt == -1)
			continue;
		if (!can_steal && start_migratetype == MIGRATE_MOVABLE && current_order > (int)order)
			goto find_smallest;
		goto do_steal;
	}
	return false;

find_smallest:
	for (current_order = (int)order; current_order <= (int)MAX_ORDER(mm); current_order++) {
		area = &zone->free_area[current_order];
		fallback_mt = find_suitable_fallback(zone, area, (unsigned)current_order, start_migratetype, &can_steal);
		if (fallback_mt != -1)
			break;
	}
	VM_BUG_ON(current_order > (int)MAX_ORDER(mm));

do_steal:
	__count_vm_events(mm, PGFALLBACK, 1);
	steal_suitable_fallback(zone, get_page_from_free_area(area, fallback_mt), start_migratetype, can_steal);
	return true;
}

/* __rmqueue(): the requested type first, then the fallbacks; retried after a steal. */
struct page *__rmqueue(struct zone *zone, unsigned int order, int migratetype, unsigned int alloc_flags)
{
	struct page *page;
	int retries = MIGRATE_TYPES;   /* each steal makes a block available: bounded (T1) */

retry:
	page = __rmqueue_smallest(zone, order, migratetype);
	if (unlikely(!page) && retries-- > 0 && __rmqueue_fallback(zone, order, migratetype, alloc_flags))
		goto retry;
	return page;
}

/*
 * reserve_highatomic_pageblock(): a successful high-order atomic allocation
 * reserves its pageblock for later ones, up to ~1% of the zone.  An
 * allocation of pageblock_order or more reserves every pageblock it covers:
 * Linux 6.6 retyped only the first, so the block came back on the
 * highatomic list half in a movable pageblock - the checker's B1 found it
 * here; the kernel fixed it in 6.9 ("mm: page_alloc: fix highatomic typing
 * in multi-block buddies"), whose behaviour this models.
 */
void reserve_highatomic_pageblock(struct zone *zone, struct page *page, unsigned int order)
{
	struct mm *mm = zone->mm;
	unsigned long max_managed, flags;
	int mt;

	max_managed = (unsigned long)atomic_load(&zone->managed_pages) / 100 + pageblock_nr_pages(mm);

	unsigned long pfn = __page_to_pfn(mm, page);
	unsigned long start = pfn & ~(pageblock_nr_pages(mm) - 1);
	/*
	 * Model: only pageblocks entirely inside the zone.  The kernel also
	 * reserves straddling ones, whose free pages move_freepages_block()
	 * then leaves on their old lists.
	 */
	if (order < mm->pageblock_order &&
	    (!zone_spans_pfn(zone, start) || !zone_spans_pfn(zone, start + pageblock_nr_pages(mm) - 1)))
		return;
	spin_lock_irqsave(&zone->lock, flags);
	if (zone->nr_reserved_highatomic >= max_managed)
		goto out_unlock;
	mt = get_pfnblock_migratetype(mm, page, pfn);
	/* Only reserve normal pageblocks (i.e., they can merge with others) */
	if (!migratetype_is_mergeable(mt))
		goto out_unlock;
	/*
	 * Model: the kernel reads the first pageblock only - a block of
	 * pageblock_order or more it hands out is all of one free block, and
	 * a free block never spans an isolated pageblock.  With the model's
	 * tiny pageblocks (order < 3) an order-3 pcp page spans two, and one of
	 * them may have been isolated while the page was allocated or on a pcp
	 * list: retyping it would end its isolation (the watermark target's
	 * finding, corpus/regressions/watermark/2026-12-01-C1-highatomic-retypes-isolated).
	 */
	if (later_pageblock_is(mm, pfn, order, migratetype_is_unmergeable))
		goto out_unlock;
	if (order < mm->pageblock_order) {
		set_pageblock_migratetype(zone, pfn, MIGRATE_HIGHATOMIC);
		move_freepages_block(zone, page, MIGRATE_HIGHATOMIC);
		zone->nr_reserved_highatomic += pageblock_nr_pages(mm);
	} else {
		/* The whole allocation is ours: no free pages in it to move. */
		change_pageblock_range(zone, pfn, order, MIGRATE_HIGHATOMIC);
		zone->nr_reserved_highatomic += 1UL << order;
	}
out_unlock:
	spin_unlock_irqrestore(&zone->lock, flags);
}

/*
 * The order of the free block @sp heads in @zone, or -1.  Racy by design, as
 * page_is_buddy(): @sp may be an allocated page its owner is writing
 * (PG_slab, compound state) outside zone->lock; only a free page's state is
 * stable under it, and only that decides the answer.
 */
static __data_racy int free_head_order(const struct zone *zone, struct page *sp)
{
	unsigned long flags = READ_ONCE(sp->flags);

	if (!(flags & (1UL << PG_buddy)) || ((flags >> ZONES_PGSHIFT) & ZONES_MASK) != (unsigned long)zone->idx)
		return -1;
	return (int)READ_ONCE(sp->private_);
}

/*
 * A pageblock changed type (highatomic became mergeable again, or two
 * neighbours are now both isolated): a whole free pageblock-or-larger block
 * at its start may now merge with its buddy, which it was kept from by the
 * old type - free it again to make coalescing maximal (invariant B3).  Blocks below pageblock_order merged
 * inside the pageblock as usual.  Called under zone->lock after the free
 * blocks moved to @mt's lists; @fpi_flags for the free (FPI_TO_TAIL: where
 * the move put it).
 */
void remerge_pageblock(struct zone *zone, unsigned long pfn, int mt, unsigned int fpi_flags)
{
	struct mm *mm = zone->mm;
	unsigned long start = pfn & ~(pageblock_nr_pages(mm) - 1);

	if (!__pfn_valid(mm, start))
		return;
	struct page *sp = __pfn_to_page(mm, start);
	int o = free_head_order(zone, sp);
	if (o >= (int)mm->pageblock_order) {
		del_page_from_free_list(zone, sp, (unsigned int)o);
		__mod_zone_freepage_state(zone, -(1L << o), mt);
		split_large_buddy(zone, sp, start, (unsigned int)o, fpi_flags);
	}
}

/*
 * unreserve_highatomic_pageblock(): before failing an allocation, give a
 * highatomic pageblock back to ordinary use - to the failing request's
 * @migratetype (ac->migratetype), not to the stealing heuristics: the
 * caller needs the pages, and a block always handed to one type would
 * leave more pageblocks that cannot be freed whole.  Unless @force, the
 * last reserved pageblock of a zone is kept.
 */
bool unreserve_highatomic_pageblock(struct mm *mm, int highest_zoneidx, int migratetype, bool force)
{
	for (int z = highest_zoneidx; z >= 0; z--) {
		struct zone *zone = &mm->zones[z];
		unsigned long flags;

		if (!populated_zone(zone))
			continue;
		spin_lock_irqsave(&zone->lock, flags);
		/* Preserve at least one pageblock, unless forced (checked under the lock). */
		if (!force && zone->nr_reserved_highatomic <= pageblock_nr_pages(mm)) {
			spin_unlock_irqrestore(&zone->lock, flags);
			continue;
		}
		for (unsigned int order = 0; order <= MAX_ORDER(mm); order++) {
			struct page *page = get_page_from_free_area(&zone->free_area[order], MIGRATE_HIGHATOMIC);
			if (!page)
				continue;
			unsigned long pfn = __page_to_pfn(mm, page);
			/*
			 * A page on the highatomic list whose pageblock is no
			 * longer highatomic (a racy free in 6.6; the model's
			 * frees take the pageblock's type at the time, so it is
			 * not expected here) is not counted again, but its block
			 * is converted and its pages moved all the same, as 6.6
			 * does.  The count drops by the block's size, at least a
			 * pageblock (6.9: a block of several pageblocks at once).
			 */
			if (is_migrate_highatomic(get_pfnblock_migratetype(mm, page, pfn))) {
				unsigned long size = MAX(pageblock_nr_pages(mm), 1UL << order);
				zone->nr_reserved_highatomic -= MIN(size, zone->nr_reserved_highatomic);
			}
			if (order < mm->pageblock_order) {
				set_pageblock_migratetype(zone, pfn, migratetype);
				if (!move_freepages_block(zone, page, migratetype))
					continue;
			} else {
				/* A block spanning pageblocks: all of them change, the block moves whole. */
				move_to_free_list(zone, page, order, migratetype);
				change_pageblock_range(zone, pfn, order, migratetype);
			}
			/*
			 * A fully free pageblock did not merge with its free
			 * buddy while it was highatomic; now it may (B3).
			 */
			remerge_pageblock(zone, pfn, migratetype, FPI_NONE);
			spin_unlock_irqrestore(&zone->lock, flags);
			return true;
		}
		spin_unlock_irqrestore(&zone->lock, flags);
	}
	return false;
}

/*
 * __free_pages_core() for boot: a reserved, referenced range becomes
 * managed and free.  Also used by mm_reset().
 */
void zone_free_page_range(struct zone *zone, unsigned long pfn, unsigned int order, int mt)
{
	struct mm *mm = zone->mm;
	unsigned long nr = 1UL << order, flags;
	struct page *page = __pfn_to_page(mm, pfn);

	for (unsigned long i = 0; i < nr; i++) {
		page_flag_clear(&page[i], PG_reserved);
		set_page_count(&page[i], 0);
	}
	atomic_fetch_add(&zone->managed_pages, (long)nr);
	kasan_poison(__page_address(mm, pfn), nr << MM_PAGE_SHIFT);
	spin_lock_irqsave(&zone->lock, flags);
	(void)mt;   /* the pageblocks have their boot types (mm.c); split_large_buddy() reads them */
	split_large_buddy(zone, page, pfn, order, FPI_TO_TAIL);      /* __free_pages_ok(, FPI_TO_TAIL) */
	spin_unlock_irqrestore(&zone->lock, flags);
}

/* SPDX-License-Identifier: MIT */
/*
 * isolate.c - isolating one pageblock (mm/page_isolation.c, simplified):
 * its free pages move to the MIGRATE_ISOLATE lists, stop counting in
 * NR_FREE_PAGES and can no longer be allocated; pages freed into it stay
 * there.  Unisolation gives them back and lets them merge again.
 *
 * The model isolates any pageblock (no has_unmovable_pages() test): it is
 * there so that free pages exist on lists no allocation may use, which the
 * watermark checks must not count.  Runs under zone->lock.
 */
#include "internal.h"

/*
 * The free block larger than a pageblock that covers @pfn (isolated
 * neighbours merge), its order in *@order; NULL if none.  Under zone->lock.
 */
static struct page *covering_free_block(struct zone *zone, unsigned long pfn, unsigned int *order)
{
	struct mm *mm = zone->mm;

	for (unsigned int o = mm->pageblock_order + 1; o <= MAX_ORDER(mm); o++) {
		unsigned long head = pfn & ~((1UL << o) - 1);
		if (!__pfn_valid(mm, head))
			continue;
		struct page *hp = __pfn_to_page(mm, head);
		if (PageBuddy(hp) && buddy_order(hp) == o && page_zonenum(hp) == (unsigned)zone->idx) {
			*order = o;
			return hp;
		}
	}
	return NULL;
}

/*
 * split_free_page(): a free block larger than a pageblock that covers
 * @pfn's pageblock is split into pageblock-sized blocks, each freed with its
 * own pageblock's type (so the isolated one does not merge back).
 */
static void split_covering_block(struct zone *zone, unsigned long pfn)
{
	struct mm *mm = zone->mm;
	unsigned int o;
	struct page *hp = covering_free_block(zone, pfn, &o);

	if (hp) {
		unsigned long head = pfn & ~((1UL << o) - 1);
		/*
		 * Accounting: every page of the covering block counted in
		 * NR_FREE_PAGES (an isolated pageblock never merges into a
		 * larger block), so uncount all of it with the raw counter -
		 * the type read from the head is already MIGRATE_ISOLATE when
		 * @pfn's pageblock is the first one, and would skip the update.
		 * The caller's move_freepages_block() then uncounts the
		 * isolated pageblock's pages once more; __free_one_page() of an
		 * isolated block counts nothing, so count that block here to
		 * keep the two in balance.  (Before this fix NR_FREE_PAGES lost
		 * an extra pageblock per split, or gained 2^o - 2 pageblocks
		 * when the isolated pageblock was the first: invariant B2.)
		 */
		del_page_from_free_list(zone, hp, o);
		__mod_zone_page_state(zone, NR_FREE_PAGES, -(1L << o));
		for (unsigned long p = head; p < head + (1UL << o); p += pageblock_nr_pages(mm)) {
			struct page *pp = __pfn_to_page(mm, p);
			int mt = get_pfnblock_migratetype(mm, pp, p);
			__free_one_page(zone, pp, p, mm->pageblock_order, mt, FPI_NONE);
			if (is_migrate_isolate(mt))
				__mod_zone_page_state(zone, NR_FREE_PAGES, (long)pageblock_nr_pages(mm));
		}
	}
}

static struct zone *pageblock_zone(struct mm *mm, unsigned long pfn)
{
	if (!__pfn_valid(mm, pfn))
		return NULL;
	return page_zone(mm, __pfn_to_page(mm, pfn));
}

int mm_isolate_pageblock(struct mm *mm, unsigned long pfn)
{
	struct zone *zone = pageblock_zone(mm, pfn);
	unsigned long flags;

	if (!zone)
		return -1;
	unsigned long start = pfn & ~(pageblock_nr_pages(mm) - 1);
	/* A pageblock straddling the zone boundary cannot be moved as a whole. */
	if (!zone_spans_pfn(zone, start) || !zone_spans_pfn(zone, start + pageblock_nr_pages(mm) - 1))
		return -1;
	spin_lock_irqsave(&zone->lock, flags);
	struct page *page = __pfn_to_page(mm, pfn);
	int mt = get_pfnblock_migratetype(mm, page, pfn);
	if (is_migrate_isolate(mt) || is_migrate_highatomic(mt)) {
		spin_unlock_irqrestore(&zone->lock, flags);
		return -1;
	}
	set_pageblock_migratetype(zone, pfn, MIGRATE_ISOLATE);
	split_covering_block(zone, pfn);
	unsigned long nr = move_freepages_block(zone, page, MIGRATE_ISOLATE);
	__mod_zone_freepage_state(zone, -(long)nr, mt);
	/* Two isolated neighbours merge like any two pageblocks of one type (B3). */
	remerge_pageblock(zone, pfn, MIGRATE_ISOLATE, FPI_NONE);
	spin_unlock_irqrestore(&zone->lock, flags);
	return 0;
}

int mm_unisolate_pageblock(struct mm *mm, unsigned long pfn)
{
	struct zone *zone = pageblock_zone(mm, pfn);
	unsigned long flags;

	if (!zone)
		return -1;
	spin_lock_irqsave(&zone->lock, flags);
	struct page *page = __pfn_to_page(mm, pfn);
	if (!is_migrate_isolate(get_pfnblock_migratetype(mm, page, pfn))) {
		spin_unlock_irqrestore(&zone->lock, flags);
		return -1;
	}
	/*
	 * Isolated neighbours merge (mm_isolate_pageblock), so this pageblock
	 * may lie inside a larger isolated free block: take that block off the
	 * list and free it again pageblock by pageblock - this one now movable
	 * (and counted), the others still isolated - at the tail, where 6.6's
	 * unset_migratetype_isolate() puts what it gives back.
	 */
	unsigned int o;
	struct page *hp = covering_free_block(zone, pfn, &o);
	if (hp) {
		del_page_from_free_list(zone, hp, o);   /* isolated: never counted */
		set_pageblock_migratetype(zone, pfn, MIGRATE_MOVABLE);
		split_large_buddy(zone, hp, pfn & ~((1UL << o) - 1), o, FPI_TO_TAIL);
		spin_unlock_irqrestore(&zone->lock, flags);
		return 0;
	}
	set_pageblock_migratetype(zone, pfn, MIGRATE_MOVABLE);
	unsigned long nr = move_freepages_block(zone, page, MIGRATE_MOVABLE);
	__mod_zone_freepage_state(zone, (long)nr, MIGRATE_MOVABLE);
	/*
	 * Below pageblock_order the isolated blocks merged with each other as
	 * usual; only a whole free pageblock was kept from merging with its
	 * neighbour.  Free that one again so coalescing is maximal - at the
	 * tail, as 6.6's unset_migratetype_isolate() puts the pages back
	 * (__putback_isolated_page()'s FPI_TO_TAIL, or move_freepages_block()'s
	 * tail when nothing merges).
	 */
	remerge_pageblock(zone, pfn, MIGRATE_MOVABLE, FPI_TO_TAIL);
	spin_unlock_irqrestore(&zone->lock, flags);
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * bulk.c - the bulk page allocator and bulk free (mm/page_alloc.c,
 * __alloc_pages_bulk() and free_unref_page_list() of Linux 6.6).
 *
 * __alloc_pages_bulk() takes this vCPU's pcp lock once and pops order-0
 * pages from its list, refilling it from the buddy in batches; it falls back
 * to the single-page allocator (and so to reclaim) when the pcp cannot be
 * used or no zone meets the watermark.  Its contract, which the 2021 fixes
 * established: populated array entries are skipped, the array is never read
 * or written past nr_pages, and the return value is the number of populated
 * entries - those already there included.
 */
#include "page/pcp.h"

struct page *mm_lru_to_page(struct list_head *lru)
{
	return list_entry(lru, struct page, lru);
}

struct list_head *mm_page_lru(struct page *page)
{
	return &page->lru;
}

unsigned long __alloc_pages_bulk(struct mm *mm, gfp_t gfp, int nr_pages,
				 struct list_head *page_list, struct page **page_array)
{
	unsigned int alloc_flags = ALLOC_WMARK_LOW;
	int nr_populated = 0, nr_account = 0;
	int highest_zoneidx, migratetype;
	struct per_cpu_pages *pcp;
	struct zone *zone = NULL;
	struct page *page;

	/* Skip populated array elements to determine if any pages need to be allocated. */
#ifdef MM_INJECT_BULK_ARRAY_OVERRUN
	while (page_array && page_array[nr_populated] && nr_populated < nr_pages)   /* injected */
		nr_populated++;
#else
	while (page_array && nr_populated < nr_pages && page_array[nr_populated])
		nr_populated++;
#endif

	/* No pages requested? */
	if (unlikely(nr_pages <= 0))
		goto out;
	/* Already populated array? */
	if (unlikely(page_array && nr_pages - nr_populated == 0))
		goto out;
	/* Use the single page allocator for one page. */
	if (nr_pages - nr_populated == 1)
		goto failed;
	if (unlikely((gfp & ~MM_GFP_VALID_MASK) || gfp_bad_combination(gfp)))
		goto failed;   /* alloc_pages() reports it */
	might_alloc(gfp);       /* prepare_alloc_pages() */

	highest_zoneidx = gfp_zone(gfp);
	migratetype = gfp_migratetype(mm, gfp);

	/* Find an allowed zone that meets the low watermark with room for the whole request. */
	for (int z = highest_zoneidx; z >= 0; z--) {
		struct zone *c = &mm->zones[z];
		if (!populated_zone(c))
			continue;
		unsigned long mark = zone_wmark_pages(c, alloc_flags & ALLOC_WMARK_MASK) + (unsigned long)nr_pages;
		if (zone_watermark_fast(c, 0, mark, highest_zoneidx, alloc_flags, gfp)) {
			zone = c;
			break;
		}
	}
	/* No zone meets the watermarks: one page through the slow path, with reclaim. */
	if (unlikely(!zone))
		goto failed;

	/* spin_trylock may fail due to a parallel drain or IRQ reentrancy. */
	pcp = pcp_spin_trylock(zone);
	if (!pcp)
		goto failed;

	/* Attempt the batch allocation */
	struct list_head *pcp_list = &pcp->lists[order_to_pindex(migratetype, 0)];
	while (nr_populated < nr_pages) {
		/* Between elements: an interrupt may allocate here (the pcp is locked). */
		mm_preempt_point(mm, MM_PP_BULK);
		/* Skip existing pages */
		if (page_array && page_array[nr_populated]) {
			nr_populated++;
			continue;
		}
		page = __rmqueue_pcplist(zone, 0, migratetype, alloc_flags, pcp, pcp_list);
		if (unlikely(!page)) {
			/* Try and allocate at least one page */
			if (!nr_account) {
				pcp_spin_unlock(pcp);
				goto failed;
			}
			break;
		}
		nr_account++;
		prep_new_page(mm, page, 0, gfp, 0);
		if (page_list)
			list_add(&page->lru, page_list);
		else
			page_array[nr_populated] = page;
		nr_populated++;
	}
	pcp_spin_unlock(pcp);
	__count_vm_events(mm, PGALLOC, (unsigned long)nr_account);   /* statistics per page */
out:
#ifdef MM_INJECT_BULK_RETURN_COUNT
	return (unsigned long)nr_account;   /* injected: this call's pages, 0 when already full */
#else
	return (unsigned long)nr_populated;
#endif

failed:
	page = alloc_pages(mm, gfp, 0);
	if (page) {
		if (page_list)
			list_add(&page->lru, page_list);
		else
			page_array[nr_populated] = page;
		nr_populated++;
		nr_account++;
	}
	goto out;
}

/* free_unref_page_list() retakes the pcp lock after this many pages (the kernel's SWAP_CLUSTER_MAX). */
#define FREE_LIST_BATCH 32

/* An order-0 page straight to the buddy (6.6's free_one_page()): of an isolated pageblock, or the pcp lock was taken. */
static void free_one_page_counted(struct mm *mm, struct page *page, unsigned long pfn, int mt)
{
	struct zone *zone = page_zone(mm, page);
	unsigned long flags;

	spin_lock_irqsave(&zone->lock, flags);
	__free_one_page(zone, page, pfn, 0, mt, FPI_NONE);
	spin_unlock_irqrestore(&zone->lock, flags);
	/* Counted, unlike 6.6's free_one_page(): B4 (see free_unref_page()). */
	__count_vm_events(mm, PGFREE, 1);
}

/*
 * The rest of 6.6's free_unref_page_list() for pages already through
 * free_pages_prepare(), in its two passes.  The first records each page's
 * pageblock type (set_pcppage_migratetype()) and frees the pages of
 * isolated pageblocks to the buddy.  The second commits the rest to the
 * pcp, using the recorded type, and takes the pcp lock again at a change of
 * zone and after every FREE_LIST_BATCH pages ("excessive lock hold times"):
 * either way the count starts again, so each run of up to FREE_LIST_BATCH
 * pages of one zone holds the lock once, and an interrupt or a remote drain
 * can take the pcp between runs.  A failed trylock sends the page to the
 * buddy and the next page tries again.
 */
static void free_prepared_page_list(struct mm *mm, struct list_head *list)
{
	struct per_cpu_pages *pcp = NULL;
	struct zone *locked_zone = NULL;
	struct list_head *pos, *n;
	unsigned int batch_count = 0;

	list_for_each_safe(pos, n, list) {
		struct page *page = list_entry(pos, struct page, lru);
		unsigned long pfn = __page_to_pfn(mm, page);
		int mt = get_pfnblock_migratetype(mm, page, pfn);

		page->index = (unsigned long)mt;
		if (unlikely(is_migrate_isolate(mt))) {
			list_del(&page->lru);
			free_one_page_counted(mm, page, pfn, mt);
		}
	}

	list_for_each_safe(pos, n, list) {
		struct page *page = list_entry(pos, struct page, lru);
		struct zone *zone = page_zone(mm, page);
		int mt = (int)page->index;          /* get_pcppage_migratetype() */

		list_del(&page->lru);
		if (zone != locked_zone || batch_count == FREE_LIST_BATCH) {
			if (pcp)
				pcp_spin_unlock(pcp);
			batch_count = 0;
			pcp = pcp_spin_trylock(zone);
			if (unlikely(!pcp)) {
				locked_zone = NULL;
				free_one_page_counted(mm, page, __page_to_pfn(mm, page), mt);
				continue;
			}
			locked_zone = zone;
		}
		/* Highatomic pages are cached as movable so the area can come back. */
		if (unlikely(mt >= MIGRATE_PCPTYPES)) {
			mt = MIGRATE_MOVABLE;
			page->index = MIGRATE_MOVABLE;
		}
		free_unref_page_commit(zone, pcp, page, mt, 0);
		batch_count++;
	}
	if (pcp)
		pcp_spin_unlock(pcp);
}

/*
 * free_unref_page_list(): free a list of order-0 pages.  Each page is
 * checked (and its reference dropped) first; pages that fail are reported
 * and left off the list.
 */
void free_unref_page_list(struct mm *mm, struct list_head *list)
{
	LIST_HEAD_DECL(ok);
	struct list_head *pos, *n;

	list_for_each_safe(pos, n, list) {
		struct page *page = list_entry(pos, struct page, lru);
		list_del(&page->lru);
		if (free_pages_prepare(mm, page, 0))
			list_add_tail(&page->lru, &ok);
	}
	free_prepared_page_list(mm, &ok);
}

/*
 * release_pages(): free an array of order-0 pages.  As the kernel's (mm/
 * swap.c), each reference is dropped while walking the array, so a page
 * listed twice is caught (and reported) at its second entry instead of
 * corrupting the batch, and each page goes to the head of the list to free:
 * the last entry is freed first and the first entry last, so the first is
 * what the next order-0 allocation on this vCPU gets back.
 */
void release_pages(struct mm *mm, struct page **pages, unsigned long nr)
{
	LIST_HEAD_DECL(list);

	for (unsigned long i = 0; i < nr; i++) {
		struct page *page = pages[i];
		if (!page)
			continue;
		/* Not a struct page of this memory: __free_pages reports it. */
		if (!page_in_memmap(mm, page)) {
			__free_pages(mm, page, 0);
			continue;
		}
		if (free_pages_prepare(mm, page, 0))
			list_add(&page->lru, &list);
	}
	free_prepared_page_list(mm, &list);
}

/* SPDX-License-Identifier: MIT */
/*
 * test_mobility_off.c - grouping by mobility off on a small machine, as
 * 6.6's build_all_zonelists() decides it: fewer pages than
 * pageblock_nr_pages * MIGRATE_TYPES (5 here), counted as vm_total_pages
 * is at boot (present pages less the memmap's, 64 bytes a struct page).
 * Then every allocation asks for unmovable pages (gfp_migratetype()),
 * setting a block to a mergeable type makes it unmovable, and a steal
 * always claims its block.  Found by helper-48's review: the model always
 * grouped, so a small machine put movable and unmovable pages in different
 * pageblocks where 6.6 mixes them.
 *
 * The pageblocks still start movable: memmap_init() runs before
 * build_all_zonelists() turns grouping off, so set_pageblock_migratetype()
 * stored MIGRATE_MOVABLE, and the first unmovable request takes the
 * largest free block through __rmqueue_fallback() and claims it (helper-51's
 * review, bench/results/reviews-6.6/boot-cpu.md F1: the model made every
 * pageblock unmovable at boot, and the request took the smallest block).
 */
#include "internal.h"
#include "test.h"

static struct mm *one_zone(unsigned long pages)
{
	struct mm_config c;
	mm_config_default(&c);
	memset(c.zones, 0, sizeof(c.zones));
	c.nr_holes = 0;
	c.nr_cpus = 1;
	c.quiet = true;
	c.zones[ZONE_NORMAL] = (struct mm_span){ 0, pages };   /* max_order 10, pageblocks of 512 */
	return test_create(&c);
}

static unsigned long block_of(struct mm *mm, struct page *p)
{
	return page_to_pfn(mm, p) >> mm->pageblock_order;
}

int main(void)
{
	/*
	 * The threshold: 2560 pages after the memmap's.  2600 pages have a
	 * 41-page memmap (2600 * 64 / 4096 rounded up): 2559, off; 2601:
	 * 2560, on.
	 */
	struct mm *mm = one_zone(2600);
	CHECK(mm->page_group_by_mobility_disabled);
	/*
	 * Free at boot: order 10 at 0 and 1024, order 9 at 2048, order 5 at
	 * 2560, order 3 at 2592, all movable.  An unmovable order-4 request
	 * (no pcp) steals the order-10 block at the head of the list, pfn 0.
	 */
	CHECK(get_pfnblock_migratetype(mm, pfn_to_page(mm, 1024), 1024) == MIGRATE_MOVABLE);
	struct page *p0 = alloc_pages(mm, GFP_KERNEL, 4);
	REQUIRE(p0);
	CHECK_MSG(page_to_pfn(mm, p0) == 0, "GFP_KERNEL order 4 got pfn %lu, expected 0", page_to_pfn(mm, p0));
	CHECK(get_pfnblock_migratetype(mm, p0, 0) == MIGRATE_UNMOVABLE);
	CHECK(get_pfnblock_migratetype(mm, pfn_to_page(mm, 512), 512) == MIGRATE_UNMOVABLE);
	CHECK(get_pfnblock_migratetype(mm, pfn_to_page(mm, 1024), 1024) == MIGRATE_MOVABLE);
	CHECK_MM(mm, 3);
	__free_pages(mm, p0, 4);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
	mm = one_zone(2601);
	CHECK(!mm->page_group_by_mobility_disabled);
	mm_destroy(mm);

	mm = one_zone(2048);
	struct zone *z = mm_zone(mm, ZONE_NORMAL);
	CHECK(mm->page_group_by_mobility_disabled);
	for (unsigned long pfn = 0; pfn < 2048; pfn += 512)
		CHECK_MSG(get_pfnblock_migratetype(mm, pfn_to_page(mm, pfn), pfn) == MIGRATE_MOVABLE,
			  "pageblock at %lu starts as %d, want movable", pfn,
			  get_pfnblock_migratetype(mm, pfn_to_page(mm, pfn), pfn));
	CHECK(z->free_area[10].nr_free == 2 && list_empty(&z->free_area[10].free_list[MIGRATE_UNMOVABLE]));

	/* A movable and an unmovable page share a pageblock: both are unmovable requests. */
	struct page *p1 = alloc_pages(mm, GFP_KERNEL | __GFP_MOVABLE, 0);
	struct page *p2 = alloc_pages(mm, GFP_KERNEL, 0);
	REQUIRE(p1 && p2);
	CHECK_MSG(block_of(mm, p1) == block_of(mm, p2), "movable page in pageblock %lu, unmovable in %lu",
		  block_of(mm, p1), block_of(mm, p2));
	CHECK(get_pfnblock_migratetype(mm, p1, page_to_pfn(mm, p1)) == MIGRATE_UNMOVABLE);
	/* A bulk allocation too. */
	struct page *bulk[8] = { 0 };
	CHECK(alloc_pages_bulk_array(mm, GFP_KERNEL | __GFP_MOVABLE, 8, bulk) == 8);
	for (int i = 0; i < 8; i++)
		CHECK(bulk[i] && block_of(mm, bulk[i]) == block_of(mm, p1));

	/* Asking for a movable pageblock gives an unmovable one (set_pageblock_migratetype()). */
	spin_lock(&z->lock);
	set_pageblock_migratetype(z, 1024, MIGRATE_MOVABLE);
	spin_unlock(&z->lock);
	CHECK(get_pfnblock_migratetype(mm, pfn_to_page(mm, 1024), 1024) == MIGRATE_UNMOVABLE);
	CHECK_MM(mm, 3);

	for (int i = 0; i < 8; i++)
		__free_pages(mm, bulk[i], 0);
	__free_pages(mm, p2, 0);
	__free_pages(mm, p1, 0);
	drain_all_pages(mm, NULL);
	CHECK_MM(mm, 3);
	/* After a reset, movable again, as at boot. */
	mm_reset(mm);
	for (unsigned long pfn = 0; pfn < 2048; pfn += 512)
		CHECK(get_pfnblock_migratetype(mm, pfn_to_page(mm, pfn), pfn) == MIGRATE_MOVABLE);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
	TEST_DONE();
}

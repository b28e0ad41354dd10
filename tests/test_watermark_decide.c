/* SPDX-License-Identifier: MIT */
/*
 * test_watermark_decide.c - the watermark decisions, case by case, for
 * both algorithms, each hand-computed in a comment:
 *  - the modern __zone_watermark_ok (Linux 6.6): order-0 test with
 *    lowmem_reserve, ALLOC_MIN_RESERVE halving, ALLOC_NON_BLOCK taking a
 *    further quarter only together with it, ALLOC_OOM, the highatomic
 *    reserve subtracted unless the caller may use reserves, and for order
 *    > 0 "some block of at least this order on a list this caller may use"
 *    (isolated blocks never count; highatomic ones only for
 *    ALLOC_HIGHATOMIC / ALLOC_OOM); zone_watermark_fast must agree;
 *  - the 2.6.28 algorithm (zone_watermark_ok_2008), with the 2008
 *    thread's "case A / case B" (shared/seeds/watermark-order-check-2008.txt)
 *    decided by what the algorithm really computes;
 *  - the two disagreeing on a real zone, end to end through alloc_pages.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "page/pcp.h"
#include "test.h"

/* Movable pages from ZONE_NORMAL at most (GFP_HIGHUSER_MOVABLE would prefer ZONE_MOVABLE). */
#define NORMAL_MOVABLE (GFP_KERNEL | __GFP_MOVABLE)

#define MEMALLOC (__GFP_MEMALLOC | __GFP_NORETRY)

/* ok(free) must be false at @boundary and true at @boundary + 1. */
static void boundary(struct zone *z, unsigned int order, unsigned long mark, int hz, unsigned int flags,
		     long at, const char *what)
{
	bool below = __zone_watermark_ok(z, order, mark, hz, flags, at);
	bool above = __zone_watermark_ok(z, order, mark, hz, flags, at + 1);
	CHECK_MSG(!below && above, "%s: order %u mark %lu hz %d flags %#x: ok(%ld) = %d, ok(%ld) = %d; "
		  "expected the boundary at %ld", what, order, mark, hz, flags, at, below, at + 1, above, at);
}

/*
 * Order-0 cases on the default config's Normal zone (no highatomic
 * reserve; its lowmem_reserve against Movable is 4576/32 = 143).  The
 * zone's real free count does not matter: free_pages is an argument.
 */
static void test_modern_order0(void)
{
	struct mm_config c;
	mm_config_default(&c);
	struct mm *mm = test_create(&c);
	struct zone *z = mm_zone(mm, ZONE_NORMAL);
	CHECK(zone_lowmem_reserve(z, ZONE_MOVABLE) == 143);

	/* mark 100: free must exceed min + reserve. */
	boundary(z, 0, 100, ZONE_NORMAL, 0, 100, "plain");
	boundary(z, 0, 100, ZONE_MOVABLE, 0, 100 + 143, "lowmem_reserve for a Movable request");
	/* ALLOC_MIN_RESERVE (__GFP_HIGH): min -= min/2 -> 50. */
	boundary(z, 0, 100, ZONE_NORMAL, ALLOC_MIN_RESERVE, 50, "MIN_RESERVE");
	boundary(z, 0, 100, ZONE_MOVABLE, ALLOC_MIN_RESERVE, 50 + 143, "MIN_RESERVE + reserve");
	/* ... with ALLOC_NON_BLOCK (GFP_ATOMIC): 50 - 50/4 = 38. */
	boundary(z, 0, 100, ZONE_NORMAL, ALLOC_MIN_RESERVE | ALLOC_NON_BLOCK, 38, "MIN_RESERVE|NON_BLOCK");
	/* ALLOC_NON_BLOCK alone (GFP_NOWAIT) gets no part of min: 100. */
	boundary(z, 0, 100, ZONE_NORMAL, ALLOC_NON_BLOCK, 100, "NON_BLOCK alone");
	boundary(z, 0, 100, ZONE_NORMAL, ALLOC_HIGHATOMIC, 100, "HIGHATOMIC alone");
	/* ALLOC_OOM: 100 - 50 = 50; with MIN_RESERVE 50 -> 25; with NON_BLOCK too 38 -> 19. */
	boundary(z, 0, 100, ZONE_NORMAL, ALLOC_OOM, 50, "OOM");
	boundary(z, 0, 100, ZONE_NORMAL, ALLOC_OOM | ALLOC_MIN_RESERVE, 25, "OOM|MIN_RESERVE");
	boundary(z, 0, 100, ZONE_NORMAL, ALLOC_OOM | ALLOC_MIN_RESERVE | ALLOC_NON_BLOCK, 19, "OOM|MIN_RESERVE|NON_BLOCK");
	/* Odd mark 101: 101 - 50 = 51; 51 - 12 = 39; OOM 101 - 50 = 51. */
	boundary(z, 0, 101, ZONE_NORMAL, ALLOC_MIN_RESERVE, 51, "MIN_RESERVE, mark 101");
	boundary(z, 0, 101, ZONE_NORMAL, ALLOC_MIN_RESERVE | ALLOC_NON_BLOCK, 39, "MIN_RESERVE|NON_BLOCK, mark 101");
	boundary(z, 0, 101, ZONE_NORMAL, ALLOC_OOM, 51, "OOM, mark 101");
	/* Mark 0: one free page is enough, none is not; negative counts are compared signed. */
	boundary(z, 0, 0, ZONE_NORMAL, 0, 0, "mark 0");
	CHECK(!__zone_watermark_ok(z, 0, 0, ZONE_NORMAL, 0, -5));
	CHECK(!__zone_watermark_ok(z, 0, 0, ZONE_NORMAL, ALLOC_OOM, -1000000));
	/* Order 1 on this (unfragmented) zone: one more unusable page, (1 << 1) - 1. */
	boundary(z, 1, 100, ZONE_NORMAL, 0, 101, "order 1");
	boundary(z, 3, 100, ZONE_NORMAL, 0, 107, "order 3");
	boundary(z, 3, 100, ZONE_MOVABLE, ALLOC_MIN_RESERVE, 50 + 143 + 7, "order 3, MIN_RESERVE + reserve");

	/* zone_watermark_fast and zone_watermark_ok agree with the real count. */
	long free = zone_free_pages(z);
	CHECK(zone_watermark_ok(z, 0, (unsigned long)free - 1, ZONE_NORMAL, 0));
	CHECK(!zone_watermark_ok(z, 0, (unsigned long)free, ZONE_NORMAL, 0));
	CHECK(zone_watermark_fast(z, 0, (unsigned long)free - 1, ZONE_NORMAL, 0, GFP_KERNEL));
	CHECK(!zone_watermark_fast(z, 0, (unsigned long)free, ZONE_NORMAL, 0, GFP_KERNEL));
	CHECK(!zone_watermark_fast(z, 0, (unsigned long)free - 143, ZONE_MOVABLE, 0, GFP_KERNEL));
	CHECK(zone_watermark_fast(z, 0, (unsigned long)free - 144, ZONE_MOVABLE, 0, GFP_KERNEL));
	mm_destroy(mm);
}

/*
 * One zone, Normal [0, 4096), pageblocks of 512, max_order 10, one CPU.
 * Every page is allocated, then chosen pages are freed (and the pcp
 * drained) to build an exact free-list layout.
 */
struct lab {
	struct mm *mm;
	struct zone *z;
	struct page *page[4096];   /* by pfn; NULL once freed */
};

static void lab_init(struct lab *l, enum mm_wmark_algo algo)
{
	struct mm_config c;
	char err[256];
	mm_config_default(&c);
	memset(c.zones, 0, sizeof(c.zones));
	c.nr_holes = 0;
	c.nr_cpus = 1;
	c.zones[ZONE_NORMAL] = (struct mm_span){ 0, 4096 };
	c.wmark_algo = algo;
	c.quiet = true;
	memset(l, 0, sizeof(*l));
	l->mm = mm_create(&c, err, sizeof(err));
	REQUIRE(l->mm);
	l->z = mm_zone(l->mm, ZONE_NORMAL);
	struct page *p;
	unsigned long n = 0;
	while ((p = alloc_pages(l->mm, GFP_HIGHUSER_MOVABLE | MEMALLOC, 0))) {
		l->page[page_to_pfn(l->mm, p)] = p;
		n++;
	}
	REQUIRE(n == 4096);
	CHECK(zone_free_pages(l->z) == 0);
}

/* Free pfns [pfn, pfn + nr); they merge as far as they can. */
static void lab_free(struct lab *l, unsigned long pfn, unsigned long nr)
{
	for (unsigned long i = pfn; i < pfn + nr; i++) {
		REQUIRE(l->page[i]);
		__free_pages(l->mm, l->page[i], 0);
		l->page[i] = NULL;
	}
	drain_all_pages(l->mm, NULL);
}

static void lab_fini(struct lab *l)
{
	CHECK_MM(l->mm, 3);
	mm_destroy(l->mm);
}

static const unsigned int all_flags[] = {
	0, ALLOC_MIN_RESERVE, ALLOC_NON_BLOCK, ALLOC_MIN_RESERVE | ALLOC_NON_BLOCK, ALLOC_HIGHATOMIC,
	ALLOC_NON_BLOCK | ALLOC_HIGHATOMIC, ALLOC_OOM, ALLOC_OOM | ALLOC_MIN_RESERVE,
};

/* Is order-@order servable for @flags (with free pages to spare)? Both checks must say @want. */
static void expect_servable(struct lab *l, unsigned int order, unsigned int flags, bool want, const char *what)
{
	bool got = __zone_watermark_ok(l->z, order, 0, ZONE_NORMAL, flags, 100000);
	CHECK_MSG(got == want, "%s: order %u flags %#x: __zone_watermark_ok says %d, expected %d", what, order, flags,
		  got, want);
	if (zone_free_pages(l->z) > (1L << order) + (long)l->z->nr_reserved_highatomic) {
		bool fast = zone_watermark_fast(l->z, order, 0, ZONE_NORMAL, flags, GFP_KERNEL);
		CHECK_MSG(fast == want, "%s: order %u flags %#x: zone_watermark_fast says %d, expected %d", what,
			  order, flags, fast, want);
	}
}

static void test_modern_orders(void)
{
	struct lab l;
	lab_init(&l, MM_WMARK_MODERN);

	/* Every other page free: 200 order-0 blocks, nothing larger. */
	for (unsigned long pfn = 0; pfn < 400; pfn += 2)
		lab_free(&l, pfn, 1);
	CHECK(zone_free_pages(l.z) == 200 && zone_nr_free(l.z, 0) == 200 && zone_nr_free(l.z, 1) == 0);
	for (unsigned int f = 0; f < ARRAY_SIZE(all_flags); f++) {
		expect_servable(&l, 0, all_flags[f], true, "order-0 blocks only");
		expect_servable(&l, 1, all_flags[f], false, "order-0 blocks only");
	}
	/* free_pages is large, but order 1 needs a block: alloc_pages agrees. */
	CHECK(alloc_pages(l.mm, GFP_KERNEL | MEMALLOC, 1) == NULL);

	/* One order-3 block at pfn 1024 (pageblock 2): orders 1..3 servable, 4 not. */
	lab_free(&l, 1024, 8);
	CHECK(zone_nr_free(l.z, 3) == 1 && zone_free_pages(l.z) == 208);
	for (unsigned int f = 0; f < ARRAY_SIZE(all_flags); f++) {
		for (unsigned int o = 1; o <= 3; o++)
			expect_servable(&l, o, all_flags[f], true, "one order-3 block");
		expect_servable(&l, 4, all_flags[f], false, "one order-3 block");
	}
	/* The order-1 boundary with it: free 208 - 1 unusable > mark. */
	boundary(l.z, 1, 206, ZONE_NORMAL, 0, 207, "order 1 with one order-3 block");
	CHECK(zone_watermark_ok(l.z, 1, 206, ZONE_NORMAL, 0));
	CHECK(!zone_watermark_ok(l.z, 1, 207, ZONE_NORMAL, 0));
	CHECK_MM(l.mm, 3);

	/*
	 * Isolate pageblock 2: the order-3 block moves to the isolate list and
	 * stops counting as free (208 -> 200); it can serve nobody - not even
	 * ALLOC_OOM - and alloc_pages does not take it.
	 */
	CHECK(mm_isolate_pageblock(l.mm, 1024) == 0);
	CHECK(zone_free_pages(l.z) == 200);
	CHECK(!list_empty(&l.z->free_area[3].free_list[MIGRATE_ISOLATE]));
	CHECK_MM(l.mm, 3);
	for (unsigned int f = 0; f < ARRAY_SIZE(all_flags); f++)
		expect_servable(&l, 1, all_flags[f], false, "order-3 block isolated");
	CHECK(alloc_pages(l.mm, GFP_KERNEL | MEMALLOC, 2) == NULL);
	CHECK(alloc_pages(l.mm, GFP_ATOMIC | __GFP_MEMALLOC, 3) == NULL);
	/* Pages freed into an isolated pageblock stay there, uncounted. */
	lab_free(&l, 1100, 2);
	CHECK(zone_free_pages(l.z) == 200);
	CHECK_MM(l.mm, 3);
	CHECK(mm_unisolate_pageblock(l.mm, 1024) == 0);
	CHECK(zone_free_pages(l.z) == 210);
	CHECK_MM(l.mm, 3);
	expect_servable(&l, 3, 0, true, "unisolated");

	/*
	 * Isolate a pageblock inside a larger free block: pfns [2048, 4096) are
	 * freed to make two order-10 blocks, then the second pageblock of the
	 * first is isolated (the block is split around it).
	 */
	lab_free(&l, 2048, 2048);
	CHECK(zone_nr_free(l.z, 10) == 2);
	long before = zone_free_pages(l.z);
	CHECK(mm_isolate_pageblock(l.mm, 2560) == 0);
	CHECK_MSG(zone_free_pages(l.z) == before - 512, "isolating one pageblock of an order-10 block: free %ld -> %ld",
		  before, zone_free_pages(l.z));
	CHECK(zone_nr_free(l.z, 10) == 1 && zone_nr_free(l.z, 9) == 2);
	CHECK_MM(l.mm, 3);
	CHECK(mm_unisolate_pageblock(l.mm, 2560) == 0);
	CHECK(zone_free_pages(l.z) == before && zone_nr_free(l.z, 10) == 2);
	CHECK_MM(l.mm, 3);
	/* The first pageblock of the block, too. */
	CHECK(mm_isolate_pageblock(l.mm, 3072) == 0);
	CHECK(zone_free_pages(l.z) == before - 512);
	CHECK(zone_nr_free(l.z, 10) == 1 && zone_nr_free(l.z, 9) == 2);
	CHECK_MM(l.mm, 3);
	CHECK(mm_unisolate_pageblock(l.mm, 3072) == 0);
	CHECK(zone_free_pages(l.z) == before && zone_nr_free(l.z, 10) == 2);
	CHECK_MM(l.mm, 3);
	lab_fini(&l);
}

/*
 * The highatomic reserve: a reserved pageblock's free pages are left out
 * of the order-0 test for callers without reserve rights, and its free
 * blocks serve only ALLOC_HIGHATOMIC and ALLOC_OOM.
 */
static void test_modern_highatomic(void)
{
	struct lab l;
	lab_init(&l, MM_WMARK_MODERN);

	/* 100 order-0 blocks in pageblock 0, and an order-4 block inside pageblock 1. */
	for (unsigned long pfn = 0; pfn < 200; pfn += 2)
		lab_free(&l, pfn, 1);
	lab_free(&l, 512 + 16, 16);
	/* Reserve pageblock 1 through one of its allocated pages (as the slow path does). */
	reserve_highatomic_pageblock(l.z, l.page[600], 0);
	CHECK(l.z->nr_reserved_highatomic == 512);
	CHECK(zone_nr_free(l.z, 4) == 1 && !list_empty(&l.z->free_area[4].free_list[MIGRATE_HIGHATOMIC]));
	CHECK(zone_free_pages(l.z) == 116);
	CHECK_MM(l.mm, 3);

	/*
	 * Order 0, mark 10: without reserve rights 116 - 512 = -396 is not above
	 * 10 - the reservation is subtracted whole, however little of it is
	 * free; any reserve right (ALLOC_RESERVES) skips the subtraction.
	 */
	CHECK(!__zone_watermark_ok(l.z, 0, 10, ZONE_NORMAL, 0, 116));
	boundary(l.z, 0, 10, ZONE_NORMAL, 0, 10 + 512, "highatomic subtracted");
	boundary(l.z, 0, 10, ZONE_NORMAL, ALLOC_NON_BLOCK, 10, "NON_BLOCK: highatomic not subtracted");
	boundary(l.z, 0, 10, ZONE_NORMAL, ALLOC_HIGHATOMIC, 10, "HIGHATOMIC: not subtracted");
	boundary(l.z, 0, 10, ZONE_NORMAL, ALLOC_MIN_RESERVE, 5, "MIN_RESERVE: not subtracted, min halved");
	boundary(l.z, 0, 10, ZONE_NORMAL, ALLOC_OOM, 5, "OOM: not subtracted, min halved");
	CHECK(!zone_watermark_fast(l.z, 0, 10, ZONE_NORMAL, 0, GFP_KERNEL));
	CHECK(zone_watermark_fast(l.z, 0, 10, ZONE_NORMAL, ALLOC_NON_BLOCK, GFP_KERNEL));

	/* Order 1..4: the only block is on the highatomic list. */
	for (unsigned int f = 0; f < ARRAY_SIZE(all_flags); f++) {
		bool may = all_flags[f] & (ALLOC_HIGHATOMIC | ALLOC_OOM);
		for (unsigned int o = 1; o <= 4; o++)
			CHECK_MSG(__zone_watermark_ok(l.z, o, 0, ZONE_NORMAL, all_flags[f], 100000) == may,
				  "order %u flags %#x: highatomic block usable = %d", o, all_flags[f], !may);
		CHECK(!__zone_watermark_ok(l.z, 5, 0, ZONE_NORMAL, all_flags[f], 100000));
	}
	/* alloc_pages: an ordinary order-2 request cannot have it, a GFP_ATOMIC one can. */
	CHECK(alloc_pages(l.mm, GFP_KERNEL | MEMALLOC, 2) == NULL);
	struct page *p = alloc_pages(l.mm, GFP_ATOMIC, 2);
	CHECK(p != NULL && page_to_pfn(l.mm, p) >= 512 && page_to_pfn(l.mm, p) < 1024);
	/*
	 * Give the reservation back while a highatomic block is still on the
	 * highatomic list: the pageblock's free pages serve everyone again.
	 */
	CHECK(unreserve_highatomic_pageblock(l.mm, ZONE_NORMAL, MIGRATE_MOVABLE, true));
	CHECK(l.z->nr_reserved_highatomic == 0);
	CHECK(list_empty(&l.z->free_area[2].free_list[MIGRATE_HIGHATOMIC]) &&
	      list_empty(&l.z->free_area[3].free_list[MIGRATE_HIGHATOMIC]));
	CHECK_MM(l.mm, 3);
	for (unsigned int o = 1; o <= 3; o++)
		CHECK(__zone_watermark_ok(l.z, o, 0, ZONE_NORMAL, 0, 100000));
	if (p)
		__free_pages(l.mm, p, 2);
	drain_all_pages(l.mm, NULL);
	CHECK_MM(l.mm, 3);
	lab_fini(&l);

	/*
	 * A whole free highatomic pageblock must merge with its free buddy
	 * once unreserved.  Order-4 pages, so frees go straight to the buddy
	 * lists of their pageblock's type (order <= 3 would pass through the
	 * pcp lists, which cache highatomic pages as movable - Linux 6.6).
	 */
	struct mm_config c;
	mm_config_default(&c);
	memset(c.zones, 0, sizeof(c.zones));
	c.nr_holes = 0;
	c.nr_cpus = 1;
	c.zones[ZONE_NORMAL] = (struct mm_span){ 0, 2048 };
	/*
	 * A movable zone above it, never allocated from (NORMAL_MOVABLE stops
	 * at Normal): 2048 pages alone are under 5 pageblocks, where 6.6 turns
	 * grouping by mobility off (mm.c, mobility_grouping_disabled()).
	 */
	c.zones[ZONE_MOVABLE] = (struct mm_span){ 2048, 3072 };
	struct mm *mm = test_create(&c);
	REQUIRE(!mm->page_group_by_mobility_disabled);
	struct zone *z = mm_zone(mm, ZONE_NORMAL);
	struct page *blk[128];
	for (int i = 0; i < 128; i++) {
		blk[i] = alloc_pages(mm, NORMAL_MOVABLE | MEMALLOC, 4);
		REQUIRE(blk[i]);
	}
	CHECK(zone_free_pages(z) == 0);
	/* pfn -> block: sort by pfn so blk[i] covers [16 i, 16 i + 16). */
	for (int i = 0; i < 128; i++)
		for (int j = i + 1; j < 128; j++)
			if (page_to_pfn(mm, blk[j]) < page_to_pfn(mm, blk[i])) {
				struct page *t = blk[i];
				blk[i] = blk[j];
				blk[j] = t;
			}
	REQUIRE(page_to_pfn(mm, blk[0]) == 0 && page_to_pfn(mm, blk[127]) == 2032);
	reserve_highatomic_pageblock(z, blk[32], 4);              /* pageblock 1: [512, 1024) */
	CHECK(z->nr_reserved_highatomic == 512);
	for (int i = 0; i < 64; i++)                           /* pageblocks 0 and 1 free */
		__free_pages(mm, blk[i], 4);
	CHECK(zone_nr_free(z, 9) == 2 && zone_nr_free(z, 10) == 0);
	CHECK(!list_empty(&z->free_area[9].free_list[MIGRATE_HIGHATOMIC]));
	CHECK_MM(mm, 3);
	CHECK(unreserve_highatomic_pageblock(mm, ZONE_NORMAL, MIGRATE_MOVABLE, true));
	CHECK_MSG(zone_nr_free(z, 10) == 1 && zone_nr_free(z, 9) == 0,
		  "unreserved pageblock not merged with its free buddy: order-9 %lu, order-10 %lu",
		  zone_nr_free(z, 9), zone_nr_free(z, 10));
	CHECK_MM(mm, 3);
	for (int i = 64; i < 128; i++)
		__free_pages(mm, blk[i], 4);
	CHECK(zone_nr_free(z, 10) == 2 && zone_free_pages(z) == 2048);
	CHECK_MM(mm, 3);

	/*
	 * unreserve hands the block to the failing request's migratetype
	 * (ac->migratetype), whatever it is - not always to movable: with the
	 * allocation still out (the free pages below pageblock order move,
	 * move_freepages_block()) and freed first (the whole pageblock free,
	 * it moves as one block, change_pageblock_range()).
	 */
	static const int types[] = { MIGRATE_UNMOVABLE, MIGRATE_RECLAIMABLE, MIGRATE_MOVABLE };
	for (unsigned int t = 0; t < 2 * ARRAY_SIZE(types); t++) {
		int type = types[t / 2];
		bool freed_first = t % 2;
		struct page *a = alloc_pages(mm, NORMAL_MOVABLE, 4);
		REQUIRE(a);
		unsigned long pfn = page_to_pfn(mm, a);
		reserve_highatomic_pageblock(z, a, 4);
		REQUIRE(z->nr_reserved_highatomic == 512);
		if (freed_first)
			__free_pages(mm, a, 4);
		CHECK(unreserve_highatomic_pageblock(mm, ZONE_NORMAL, type, true));
		CHECK_MSG(get_pfnblock_migratetype(mm, a, pfn) == type, "unreserved for type %d (%s): the block is %d",
			  type, freed_first ? "all free" : "in use", get_pfnblock_migratetype(mm, a, pfn));
		CHECK(z->nr_reserved_highatomic == 0);
		if (!freed_first)
			__free_pages(mm, a, 4);
		CHECK_MM(mm, 3);
	}

	/*
	 * A free page left on the highatomic list of a pageblock that is no
	 * longer highatomic (6.6's racy pcp free could leave one; made here by
	 * hand): unreserve converts its block and moves it all the same, and
	 * counts nothing off the reserve for it - as 6.6 does.
	 */
	struct page *a = alloc_pages(mm, NORMAL_MOVABLE, 4);
	REQUIRE(a);
	unsigned long pfn = page_to_pfn(mm, a);
	reserve_highatomic_pageblock(z, a, 4);
	__free_pages(mm, a, 4);
	spin_lock(&z->lock);
	set_pageblock_migratetype(z, pfn, MIGRATE_MOVABLE);
	z->nr_reserved_highatomic = 0;
	spin_unlock(&z->lock);
	bool stale_listed = false;
	for (unsigned int o = 0; o <= c.max_order; o++)
		stale_listed |= !list_empty(&z->free_area[o].free_list[MIGRATE_HIGHATOMIC]);
	REQUIRE(stale_listed);
	CHECK_MSG(unreserve_highatomic_pageblock(mm, ZONE_NORMAL, MIGRATE_UNMOVABLE, true),
		  "a stale page on the highatomic list was left there");
	CHECK(get_pfnblock_migratetype(mm, a, pfn) == MIGRATE_UNMOVABLE);
	CHECK(z->nr_reserved_highatomic == 0);
	for (unsigned int o = 0; o <= c.max_order; o++)
		CHECK_MSG(list_empty(&z->free_area[o].free_list[MIGRATE_HIGHATOMIC]), "order %u: highatomic list not empty", o);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/*
 * The 2008 thread's example: zone_watermark_ok(zone, 2, pages_min = 64, 0, 0)
 * with "free pages = 80".  The 2.6.28 algorithm, by hand:
 *
 *   free = 80 - (2^2 - 1) = 77; 77 > 64 + 0                    order-0 test passes
 *   o = 0: free -= nr_free[0] << 0; min = 64 >> 1 = 32; need free > 32
 *   o = 1: free -= nr_free[1] << 1; min = 32 >> 1 = 16; need free > 16
 *
 * Case A (order 2: 5, order 1: 10, order 0: 30):
 *   o = 0: 77 - 30 = 47 > 32;  o = 1: 47 - 20 = 27 > 16      -> 1 (true)
 *   Its table sums to 30 + 20 + 20 = 70 pages, not 80.  With the consistent
 *   free = 70: 67 > 64; 67 - 30 = 37 > 32; 37 - 20 = 17 > 16  -> 1 (true)
 * Case B (order 3: 10, nothing smaller; 80 pages, consistent):
 *   77 > 64;  o = 0: 77 - 0 = 77 > 32;  o = 1: 77 > 16         -> 1 (true)
 *
 * The thread claimed case B returns 0; the algorithm says 1 for both cases
 * (as the follow-up admits, the example was wrong).
 */
static void test_2008_thread_example(void)
{
	const unsigned long case_a[MM_NR_ORDERS_LIMIT] = { 30, 10, 5 };
	const unsigned long case_b[MM_NR_ORDERS_LIMIT] = { 0, 0, 0, 10 };
	const unsigned int n = 11;

	CHECK(zone_watermark_ok_2008(case_a, n, 80, 2, 64, 0, 0) == true);
	CHECK(zone_watermark_ok_2008(case_a, n, 70, 2, 64, 0, 0) == true);
	CHECK(zone_watermark_ok_2008(case_b, n, 80, 2, 64, 0, 0) == true);

	/* Where each case stops passing, by hand. */
	/* A, free 70: the o = 1 step leaves 17 > 16; one page less (69) leaves 16: fails. */
	CHECK(zone_watermark_ok_2008(case_a, n, 69, 2, 64, 0, 0) == false);
	/* A, free 80, mark 84: the order-0 test already fails, 77 <= 84. */
	CHECK(zone_watermark_ok_2008(case_a, n, 80, 2, 84, 0, 0) == false);
	/* B: only the order-0 test binds: 77 > mark passes for mark 76, not 77. */
	CHECK(zone_watermark_ok_2008(case_b, n, 80, 2, 76, 0, 0) == true);
	CHECK(zone_watermark_ok_2008(case_b, n, 80, 2, 77, 0, 0) == false);
	/* lowmem_reserve counts in the order-0 test only: 77 > 64 + 12, then 47 > 32, 27 > 16. */
	CHECK(zone_watermark_ok_2008(case_a, n, 80, 2, 64, 12, 0) == true);
	CHECK(zone_watermark_ok_2008(case_a, n, 80, 2, 64, 13, 0) == false);   /* 77 <= 77 */
	/* mark 120: ALLOC_HIGH halves min (60), ALLOC_HARDER takes a quarter more (45): 77 > 45, 47 > 22, 27 > 11. */
	CHECK(zone_watermark_ok_2008(case_a, n, 80, 2, 120, 0, ALLOC_HIGH | ALLOC_NON_BLOCK) == true);
	CHECK(zone_watermark_ok_2008(case_a, n, 80, 2, 120, 0, 0) == false);   /* 77 <= 120 */
	/* mark 150, ALLOC_HIGH only: 75; 77 > 75; 47 > 37; 27 > 18 -> true.  mark 156: 78, 77 <= 78 -> false. */
	CHECK(zone_watermark_ok_2008(case_a, n, 80, 2, 150, 0, ALLOC_HIGH) == true);
	CHECK(zone_watermark_ok_2008(case_a, n, 80, 2, 156, 0, ALLOC_HIGH) == false);
	/* mark 140: HIGH 70, HARDER 70 - 17 = 53: 77 > 53; o=0: 47 > 26; o=1: 27 > 13 -> true */
	CHECK(zone_watermark_ok_2008(case_a, n, 80, 2, 140, 0, ALLOC_HIGH | ALLOC_NON_BLOCK) == true);
	CHECK(zone_watermark_ok_2008(case_a, n, 80, 2, 140, 0, 0) == false);  /* 77 <= 140 */

	/*
	 * Where the algorithms differ: order 2, mark 64, 50 order-0 blocks,
	 * 5 order-1, 5 order-2 (80 pages).  2008: 77 > 64; 77 - 50 = 27 <= 32
	 * -> false.  Modern: 77 > 64 and an order-2 block exists -> true.
	 */
	const unsigned long case_c[MM_NR_ORDERS_LIMIT] = { 50, 5, 5 };
	CHECK(zone_watermark_ok_2008(case_c, n, 80, 2, 64, 0, 0) == false);
	/* And the order-0 request never looks at the orders: 80 > 64. */
	CHECK(zone_watermark_ok_2008(case_c, n, 80, 0, 64, 0, 0) == true);
	CHECK(zone_watermark_ok_2008(case_c, n, 64, 0, 64, 0, 0) == false);
}

/*
 * Case C on a real zone, and through alloc_pages: the same layout on a
 * modern and a 2008 instance.  Layout: L order-0 blocks and one order-2
 * block, with L = the zone's low watermark + 20.  An order-2 GFP_KERNEL
 * request: free = L + 4, minus 3 unusable, is above low (and min) for
 * both; the 2008 loop then removes the L order-0 pages, leaving 1 page,
 * which is not above low/2 (nor min/2 in the slow path) -> fails; the
 * modern check sees the order-2 block -> succeeds.
 */
static void test_2008_on_a_zone(void)
{
	for (int algo = 0; algo < 2; algo++) {
		struct lab l;
		lab_init(&l, algo ? MM_WMARK_2008 : MM_WMARK_MODERN);
		unsigned long low = zone_wmark_pages(l.z, WMARK_LOW);
		unsigned long nr0 = low + 20;
		REQUIRE(2 * nr0 < 2048);
		for (unsigned long i = 0; i < nr0; i++)
			lab_free(&l, 2 * i, 1);
		lab_free(&l, 2048, 4);
		CHECK(zone_nr_free(l.z, 0) == nr0 && zone_nr_free(l.z, 2) == 1);
		CHECK(zone_free_pages(l.z) == (long)nr0 + 4);

		unsigned long nf[MM_NR_ORDERS_LIMIT] = { 0 };
		for (unsigned int o = 0; o <= 10; o++)
			nf[o] = zone_nr_free(l.z, o);
		bool ok = zone_watermark_ok(l.z, 2, low, ZONE_NORMAL, 0);
		bool ref2008 = zone_watermark_ok_2008(nf, 11, zone_free_pages(l.z), 2, low, 0, 0);
		CHECK(ref2008 == false);
		CHECK_MSG(ok == (algo == 0), "%s: zone_watermark_ok(order 2, low) = %d", algo ? "2008" : "modern", ok);
		/* Order 0 passes under both. */
		CHECK(zone_watermark_ok(l.z, 0, low, ZONE_NORMAL, 0));

		unsigned long fail0 = mm_vm_event(l.mm, ALLOCFAIL);
		struct page *p = alloc_pages(l.mm, GFP_KERNEL | __GFP_NORETRY, 2);
		CHECK_MSG((p != NULL) == (algo == 0), "%s: order-2 GFP_KERNEL allocation %s", algo ? "2008" : "modern",
			  p ? "succeeded" : "failed");
		if (p) {
			CHECK(page_to_pfn(l.mm, p) == 2048);
			__free_pages(l.mm, p, 2);
		} else {
			CHECK(mm_vm_event(l.mm, ALLOCFAIL) == fail0 + 1);
			CHECK(zone_nr_free(l.z, 2) == 1);
		}
		lab_fini(&l);
	}
}

int main(void)
{
	test_modern_order0();
	test_modern_orders();
	test_modern_highatomic();
	test_2008_thread_example();
	test_2008_on_a_zone();
	TEST_DONE();
}

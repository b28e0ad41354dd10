/* SPDX-License-Identifier: MIT */
/*
 * test_isolate_tail.c - where mm_unisolate_pageblock() puts a pageblock's
 * free pages back: at the tail of the free list, as 6.6's
 * unset_migratetype_isolate() does (move_freepages_block() moves them to
 * the tail, and a block that merges goes back through
 * __putback_isolated_page(), FPI_TO_TAIL).  So the next allocation of
 * that order takes the block that was on the list before, not the one
 * just given back.
 *
 * One zone of 4096 pages, pageblocks of 16 pages (order 4), max_order 5:
 * order-4 allocations bypass the pcp lists, and every boot block is an
 * order-5 pair of pageblocks.  Isolating pageblock 0 splits [0, 32): its
 * movable half [16, 32) serves the first order-4 allocation, the second
 * splits the next order-5 block and leaves [48, 64) on the order-4 list.
 * Giving pageblock 0 back (its buddy [16, 32) is in use, so nothing
 * merges) must leave [48, 64) first.  Found by helper-48's review: the
 * model freed the block again at the head.  test_bounds(): which blocks can
 * be isolated at all (a zone's last block can: the mutation audit found it
 * untested).
 */
#include "internal.h"
#include "test.h"

static struct mm *make(void)
{
	struct mm_config c;
	test_config_normal(&c, 0, 4096, 5, 4);
	return test_create(&c);
}

static unsigned long pfn_of(struct mm *mm, struct page *p)
{
	return p ? page_to_pfn(mm, p) : ~0UL;
}

/*
 * Which pageblocks can be isolated: a whole block of one zone, the last
 * one of a zone included; not one that straddles a zone boundary (the
 * DMA/Normal boundary at pfn 1000 cuts [992, 1008)), not a pfn outside
 * memory, not a block isolated already.
 */
static void test_bounds(void)
{
	struct mm_config c;
	test_config_normal(&c, 0, 4096, 5, 4);
	c.zones[ZONE_DMA] = (struct mm_span){ 0, 1000 };
	c.zones[ZONE_NORMAL] = (struct mm_span){ 1000, 4096 };
	struct mm *mm = test_create(&c);
	const unsigned long ok[] = { 0, 976, 991, 1008, 4080, 4095 };
	for (unsigned int i = 0; i < ARRAY_SIZE(ok); i++) {
		CHECK_MSG(mm_isolate_pageblock(mm, ok[i]) == 0, "pfn %lu: not isolated", ok[i]);
		CHECK_MSG(mm_isolate_pageblock(mm, ok[i]) == -1, "pfn %lu: isolated twice", ok[i]);
		CHECK_MM(mm, 3);
		CHECK_MSG(mm_unisolate_pageblock(mm, ok[i]) == 0, "pfn %lu: not given back", ok[i]);
		CHECK_MM(mm, 3);
	}
	const unsigned long bad[] = { 992, 999, 1000, 1007, 4096, 1UL << 30 };
	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK_MSG(mm_isolate_pageblock(mm, bad[i]) == -1, "pfn %lu: isolated", bad[i]);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

int main(void)
{
	test_bounds();
	struct mm *mm = make();
	const gfp_t movable = GFP_KERNEL | __GFP_MOVABLE;

	REQUIRE(mm_isolate_pageblock(mm, 0) == 0);
	CHECK_MM(mm, 3);
	struct page *x = alloc_pages(mm, movable, 4);
	struct page *y = alloc_pages(mm, movable, 4);
	CHECK_MSG(pfn_of(mm, x) == 16 && pfn_of(mm, y) == 32, "setup: x at %lu, y at %lu, want 16 and 32",
		  pfn_of(mm, x), pfn_of(mm, y));

	REQUIRE(mm_unisolate_pageblock(mm, 0) == 0);
	CHECK_MM(mm, 3);
	struct page *z = alloc_pages(mm, movable, 4);
	CHECK_MSG(pfn_of(mm, z) == 48, "after unisolating pageblock 0 the next order-4 block is %lu, want 48 "
		  "(the given-back block goes to the tail)", pfn_of(mm, z));
	struct page *w = alloc_pages(mm, movable, 4);
	CHECK_MSG(pfn_of(mm, w) == 0, "then pageblock 0: %lu", pfn_of(mm, w));

	/* A pageblock that merges on the way back: isolate [64, 80), free its in-use buddy, give it back. */
	REQUIRE(mm_isolate_pageblock(mm, 64) == 0);
	struct page *b = alloc_pages(mm, movable, 4);      /* [80, 96), the movable half of [64, 96) */
	CHECK_MSG(pfn_of(mm, b) == 80, "setup: b at %lu, want 80", pfn_of(mm, b));
	__free_pages(mm, b, 4);                             /* stays apart: its buddy is isolated */
	struct page *c = alloc_pages(mm, movable, 5);       /* the next order-5 block, [96, 128) */
	CHECK_MSG(pfn_of(mm, c) == 96, "setup: c at %lu, want 96", pfn_of(mm, c));
	REQUIRE(mm_unisolate_pageblock(mm, 64) == 0);       /* [64, 80) merges with [80, 96): order 5, at the tail */
	CHECK_MM(mm, 3);
	struct page *d = alloc_pages(mm, movable, 5);
	CHECK_MSG(pfn_of(mm, d) == 128, "after the merge the next order-5 block is %lu, want 128", pfn_of(mm, d));

	__free_pages(mm, d, 5);
	__free_pages(mm, c, 5);
	__free_pages(mm, w, 4);
	__free_pages(mm, z, 4);
	__free_pages(mm, y, 4);
	__free_pages(mm, x, 4);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
	TEST_DONE();
}

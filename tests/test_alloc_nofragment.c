/* SPDX-License-Identifier: MIT */
/*
 * test_alloc_nofragment.c - ALLOC_NOFRAGMENT (6.6's alloc_flags_nofragment()
 * and its two users in mm/page_alloc.c): the fast path's first pass of a
 * request whose preferred zone is Normal steals no block smaller than a
 * pageblock from another migratetype; it tries DMA32 and DMA first, and
 * only when every zone has refused does a second pass without the flag
 * split a small block of another type's pageblock.
 *
 * The machine: DMA [1, 4096), DMA32 [4096, 8192), Normal [8192, 12288),
 * max_order 10, pageblock_order 9, one vCPU.  Seven movable order-9 and
 * one movable order-8 allocation leave a zone (four order-10 blocks, all
 * movable) with exactly one free block: 256 pages of order 8, in a movable
 * pageblock, and no free unmovable page.  (DMA's pageblock 0 starts
 * unmovable: its first pfn, 0, is not memory.)
 */
#include "internal.h"
#include "test.h"

#define DMA32_START  4096UL
#define NORMAL_START 8192UL
#define NORMAL_END   12288UL

static struct mm *make(void)
{
	struct mm_config c;
	test_config_normal(&c, NORMAL_START, NORMAL_END, 10, 9);
	c.zones[ZONE_DMA] = (struct mm_span){ 1, DMA32_START };
	c.zones[ZONE_DMA32] = (struct mm_span){ DMA32_START, NORMAL_START };
	struct mm *mm = test_create(&c);
	REQUIRE(!mm->page_group_by_mobility_disabled);
	return mm;
}

static int block_type(struct mm *mm, unsigned long pfn)
{
	return get_pfnblock_migratetype(mm, __pfn_to_page(mm, pfn), pfn);
}

struct filled {
	struct page *p[8];
	unsigned long left_pfn;    /* the one free block left: order 8, movable */
};

/* Leave the zone @gfp's highest zone is [@start, @start + 4096) with one free order-8 movable block. */
static void fill_movable(struct mm *mm, gfp_t gfp, unsigned long start, struct filled *f)
{
	unsigned long taken[NORMAL_END / 256] = { 0 };
	for (int i = 0; i < 8; i++) {
		unsigned int order = i < 7 ? 9 : 8;
		f->p[i] = alloc_pages(mm, gfp | __GFP_MOVABLE, order);
		REQUIRE(f->p[i]);
		unsigned long pfn = __page_to_pfn(mm, f->p[i]);
		CHECK_MSG(pfn >= start && pfn + (1UL << order) <= start + 4096,
			  "movable order-%u allocation %d at pfn %lu, outside [%lu, %lu)", order, i, pfn, start,
			  start + 4096);
		for (unsigned long q = pfn; q < pfn + (1UL << order); q += 256)
			taken[q / 256] = 1;
	}
	f->left_pfn = ~0UL;
	for (unsigned long q = start; q < start + 4096; q += 256)
		if (!taken[q / 256])
			f->left_pfn = q;
	REQUIRE(f->left_pfn != ~0UL);
	REQUIRE(PageBuddy(__pfn_to_page(mm, f->left_pfn)) && buddy_order(__pfn_to_page(mm, f->left_pfn)) == 8);
	CHECK(block_type(mm, f->left_pfn) == MIGRATE_MOVABLE);
}

static void unfill(struct mm *mm, struct filled *f)
{
	for (int i = 0; i < 8; i++)
		__free_pages(mm, f->p[i], i < 7 ? 9 : 8);
}

/* An order-0 allocation of @gfp, which must come from [@lo, @hi) (@what says where that is). */
static struct page *alloc_in(struct mm *mm, gfp_t gfp, unsigned long lo, unsigned long hi, const char *what)
{
	struct page *p = alloc_pages(mm, gfp, 0);
	REQUIRE(p);
	unsigned long pfn = __page_to_pfn(mm, p);
	CHECK_MSG(pfn >= lo && pfn < hi, "gfp %#x order 0 came from pfn %lu, not %s [%lu, %lu)", gfp, pfn, what, lo, hi);
	CHECK_MM(mm, 3);
	return p;
}

/* Free @p and the @n fills, drain, check, destroy. */
static void finish(struct mm *mm, struct page *p, struct filled *fills[], int n)
{
	__free_pages(mm, p, 0);
	while (n)
		unfill(mm, fills[--n]);
	drain_all_pages(mm, NULL);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/* The first pass leaves Normal's small movable block alone and claims a whole pageblock in DMA32. */
static void test_kernel_request_goes_to_dma32(void)
{
	struct mm *mm = make();
	struct filled normal;
	fill_movable(mm, GFP_KERNEL, NORMAL_START, &normal);
	unsigned long steals0 = mm_vm_event(mm, PGSTEAL_BLOCK);

	struct page *p = alloc_in(mm, GFP_KERNEL, DMA32_START, NORMAL_START, "DMA32 (Normal's movable block split?)");
	unsigned long pfn = __page_to_pfn(mm, p);
	CHECK_MSG(block_type(mm, normal.left_pfn) == MIGRATE_MOVABLE,
		  "Normal's pageblock at pfn %lu was claimed (type %d)", normal.left_pfn,
		  block_type(mm, normal.left_pfn));
	CHECK(PageBuddy(__pfn_to_page(mm, normal.left_pfn)));
	CHECK_MSG(block_type(mm, pfn) == MIGRATE_UNMOVABLE, "DMA32's pageblock at pfn %lu has type %d", pfn,
		  block_type(mm, pfn));
	CHECK(mm_vm_event(mm, PGSTEAL_BLOCK) > steals0);
	finish(mm, p, (struct filled *[]){ &normal }, 1);
}

/* With DMA32 and DMA just as fragmented, the second pass splits Normal's block after all. */
static void test_second_pass_fragments_normal(void)
{
	struct mm *mm = make();
	struct filled normal, dma32;
	fill_movable(mm, GFP_KERNEL, NORMAL_START, &normal);
	fill_movable(mm, GFP_DMA32, DMA32_START, &dma32);
	/* DMA [1, 4096): seven order-9 blocks (one, and three order-10 ones split), then none. */
	struct page *dp[8];
	int nd = 0;
	for (struct page *q; nd < 8 && (q = alloc_pages(mm, GFP_DMA | __GFP_MOVABLE | __GFP_MEMALLOC, 9));)
		dp[nd++] = q;
	CHECK_MSG(nd == 7, "DMA gave %d order-9 blocks, not 7", nd);
	for (int o = 9; o <= 10; o++)
		CHECK_MSG(!mm->zones[ZONE_DMA].free_area[o].nr_free, "DMA still has a free order-%d block", o);
	/*
	 * DMA's pageblock 0 starts unmovable (pfn 0 is not memory: mm.c,
	 * pageblock_set_boot_types()), and its 511 pages would serve the
	 * first pass: take them too.
	 */
	static struct page *du[511];
	for (int i = 0; i < 511; i++) {
		du[i] = alloc_pages(mm, GFP_DMA | __GFP_MEMALLOC, 0);
		REQUIRE(du[i]);
		CHECK_MSG(__page_to_pfn(mm, du[i]) >= 1 && __page_to_pfn(mm, du[i]) < 512,
			  "unmovable DMA page %d at pfn %lu, outside pageblock 0", i, __page_to_pfn(mm, du[i]));
	}
	CHECK_MSG(zone_free_pages(&mm->zones[ZONE_DMA]) == 0, "DMA has %ld free pages left",
		  zone_free_pages(&mm->zones[ZONE_DMA]));

	struct page *p = alloc_in(mm, GFP_KERNEL, NORMAL_START, NORMAL_END, "Normal, no whole pageblock being free anywhere");
	for (int i = 0; i < 511; i++)
		__free_pages(mm, du[i], 0);
	while (nd)
		__free_pages(mm, dp[--nd], 9);
	finish(mm, p, (struct filled *[]){ &normal, &dma32 }, 2);
}

/* A request whose preferred zone is DMA32 gets no ALLOC_NOFRAGMENT: it splits DMA32's block, not DMA's. */
static void test_dma32_request_may_fragment(void)
{
	struct mm *mm = make();
	struct filled dma32;
	fill_movable(mm, GFP_DMA32, DMA32_START, &dma32);
	struct page *p = alloc_in(mm, GFP_DMA32, DMA32_START, NORMAL_START, "DMA32");
	finish(mm, p, (struct filled *[]){ &dma32 }, 1);
}

/* A movable request never falls back here: Normal's own movable block serves it in the first pass. */
static void test_movable_request_unaffected(void)
{
	struct mm *mm = make();
	struct filled normal;
	fill_movable(mm, GFP_KERNEL, NORMAL_START, &normal);
	struct page *p = alloc_in(mm, GFP_KERNEL | __GFP_MOVABLE, normal.left_pfn, normal.left_pfn + 256,
				  "Normal's free order-8 block");
	finish(mm, p, (struct filled *[]){ &normal }, 1);
}

int main(void)
{
	test_kernel_request_goes_to_dma32();
	test_second_pass_fragments_normal();
	test_dma32_request_may_fragment();
	test_movable_request_unaffected();
	TEST_DONE();
}

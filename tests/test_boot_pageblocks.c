/* SPDX-License-Identifier: MIT */
/*
 * test_boot_pageblocks.c - the migratetypes the pageblocks start with, as
 * 6.6's memmap_init_range() sets them (mm.c, pageblock_set_boot_types()):
 * MIGRATE_MOVABLE through a pageblock's first pfn, only when that pfn is
 * memory; a pageblock whose first pfn is a hole or lies before memory
 * keeps the zeroed bitmap's MIGRATE_UNMOVABLE, and the boot frees put its
 * pages on the unmovable lists.  From helper-51's review
 * (bench/results/reviews-6.6/boot-cpu.md, F1): the model made every
 * pageblock movable, so the first unmovable allocation on the default and
 * tiny machines came from elsewhere.
 */
#include "internal.h"
#include "test.h"

static int block_type(struct mm *mm, unsigned long pfn)
{
	return get_pfnblock_migratetype(mm, pfn_to_page(mm, pfn), pfn);
}

static struct mm *make(void (*config)(struct mm_config *))
{
	struct mm_config c;
	config(&c);
	c.nr_cpus = 1;
	c.quiet = true;
	return test_create(&c);
}

/*
 * The default machine: DMA [1, 4096), pageblocks of 512.  Pageblock 0's
 * first pfn is not memory, so pfns 1..511 (blocks of order 0..8 at 1, 2,
 * 4, ..., 256) start on DMA's unmovable lists, and an unmovable order-4
 * request (above PAGE_ALLOC_COSTLY_ORDER: no pcp) takes pfn 16's block.
 * Before: every pageblock was movable, and the request stole DMA's first
 * order-10 block (pfn 1024).
 */
static void test_default_dma(void)
{
	struct mm *mm = make(mm_config_default);
	struct zone *dma = mm_zone(mm, ZONE_DMA);

	for (int round = 0; round < 2; round++) {       /* at creation, then after mm_reset() */
		CHECK_MSG(block_type(mm, 1) == MIGRATE_UNMOVABLE, "round %d: pageblock 0 starts as %d", round,
			  block_type(mm, 1));
		for (unsigned long pfn = 512; pfn < 4096; pfn += 512)
			CHECK_MSG(block_type(mm, pfn) == MIGRATE_MOVABLE, "round %d: pageblock at %lu starts as %d",
				  round, pfn, block_type(mm, pfn));
		for (unsigned int o = 0; o <= 8; o++)
			CHECK_MSG(!list_empty(&dma->free_area[o].free_list[MIGRATE_UNMOVABLE]),
				  "round %d: DMA has no unmovable order-%u block at boot", round, o);
		CHECK(list_empty(&dma->free_area[9].free_list[MIGRATE_UNMOVABLE]));

		struct page *p = alloc_pages(mm, GFP_DMA, 4);
		REQUIRE(p);
		CHECK_MSG(page_to_pfn(mm, p) == 16, "round %d: GFP_DMA order 4 got pfn %lu, expected 16", round,
			  page_to_pfn(mm, p));
		CHECK(block_type(mm, 1024) == MIGRATE_MOVABLE);      /* nothing stolen */
		CHECK(mm_vm_event(mm, PGSTEAL_BLOCK) == 0);
		CHECK_MM(mm, 3);
		__free_pages(mm, p, 4);
		CHECK_MM(mm, 3);
		mm_reset(mm);
	}
	mm_destroy(mm);
}

/*
 * The tiny machine: pageblocks of 32; DMA [3, 300), Normal [700, 1250)
 * with the hole [900, 937).  DMA's pageblock 0 (first pfn 0) and Normal's
 * pageblock at 928 (first pfn in the hole) start unmovable; Normal's
 * first pageblock, at 672, is typed through pfn 672, which is memory of
 * DMA32 (the usemap is per section, shared by the two zones), so it
 * starts movable.  Normal's batch is 1 here, and the first GFP_KERNEL
 * page is pfn 937, the unmovable order-0 block.
 */
static void test_tiny_normal(void)
{
	struct mm *mm = make(mm_config_tiny);

	CHECK(block_type(mm, 3) == MIGRATE_UNMOVABLE);
	CHECK(block_type(mm, 32) == MIGRATE_MOVABLE);
	CHECK(block_type(mm, 700) == MIGRATE_MOVABLE);
	CHECK(block_type(mm, 896) == MIGRATE_MOVABLE);
	CHECK(block_type(mm, 937) == MIGRATE_UNMOVABLE);
	CHECK(block_type(mm, 960) == MIGRATE_MOVABLE);
	struct page *p = alloc_pages(mm, GFP_KERNEL, 0);
	REQUIRE(p);
	CHECK_MSG(page_to_pfn(mm, p) == 937, "GFP_KERNEL order 0 got pfn %lu, expected 937", page_to_pfn(mm, p));
	CHECK(mm_vm_event(mm, PGSTEAL_BLOCK) == 0);
	CHECK_MM(mm, 3);
	__free_pages(mm, p, 0);
	drain_all_pages(mm, NULL);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

int main(void)
{
	test_default_dma();
	test_tiny_normal();
	TEST_DONE();
}

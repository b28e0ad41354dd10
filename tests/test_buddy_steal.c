/* SPDX-License-Identifier: MIT */
/*
 * test_buddy_steal.c - the fallback's pageblock claim (steal_suitable_fallback
 * in 6.6's mm/page_alloc.c): when an unmovable request takes a free block
 * from a movable pageblock, the whole pageblock changes type only when at
 * least half of it is free or "alike" - for an unmovable request, neither
 * free nor in use by movable allocations.  move_freepages() counts a
 * movable allocation page by page, and PageLRU() of a compound page's
 * tail reads its head, so a movable compound allocation counts with every
 * page it has.
 *
 * A Normal zone of exactly one pageblock (64 pages), so the test knows where
 * every block comes from: a movable compound half, a movable quarter
 * without __GFP_COMP, and the free quarter that an unmovable order-4
 * request then takes.  free 16 + alike (64 - 16 - 32 - 1 = 15) is under
 * half the block: the block stays movable.  With the half allocated
 * without __GFP_COMP (the kernel counts its first page only, as PageLRU
 * of a page that is not compound reads its own flag), alike is
 * 64 - 16 - 2 = 46 and the block is claimed: the same steal, both ways.
 * Each way counts one PGFALLBACK (a block of another type taken), and
 * PGSTEAL_BLOCK only when the block is claimed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "test.h"

#define MEMALLOC (__GFP_MEMALLOC | __GFP_NORETRY)
#define FIRST_PFN 64UL

static struct mm *make_one_block(void)
{
	struct mm_config c;
	test_config_normal(&c, FIRST_PFN, FIRST_PFN + 64, 6, 6);
	/*
	 * A movable zone above it that the test never allocates from: one
	 * pageblock alone is under 5, where 6.6 turns grouping by mobility
	 * off and every steal claims its block (mm.c,
	 * mobility_grouping_disabled()).
	 */
	c.zones[ZONE_MOVABLE] = (struct mm_span){ FIRST_PFN + 64, FIRST_PFN + 64 + 6 * 64 };
	struct mm *mm = test_create(&c);
	REQUIRE(!mm->page_group_by_mobility_disabled);
	return mm;
}

static int block_type(struct mm *mm)
{
	return get_pfnblock_migratetype(mm, __pfn_to_page(mm, FIRST_PFN), FIRST_PFN);
}

/* The scenario above; @half_gfp is how the movable half is allocated.  Returns the block's type after the steal. */
static int steal_after(gfp_t half_gfp, unsigned long *claims)
{
	struct mm *mm = make_one_block();
	const gfp_t movable = GFP_KERNEL | __GFP_MOVABLE | MEMALLOC;   /* from ZONE_NORMAL, not ZONE_MOVABLE */

	REQUIRE(block_type(mm) == MIGRATE_MOVABLE);
	unsigned long fallbacks0 = mm_vm_event(mm, PGFALLBACK);
	struct page *half = alloc_pages(mm, movable | half_gfp, 5);
	struct page *quarter = alloc_pages(mm, movable, 4);
	REQUIRE(half && quarter);
	CHECK(__page_to_pfn(mm, half) == FIRST_PFN);
	CHECK(__page_to_pfn(mm, quarter) == FIRST_PFN + 32);
	unsigned long steals0 = mm_vm_event(mm, PGSTEAL_BLOCK);
	CHECK_MSG(mm_vm_event(mm, PGFALLBACK) == fallbacks0, "movable allocations from a movable block counted "
		  "PGFALLBACK %lu", mm_vm_event(mm, PGFALLBACK) - fallbacks0);

	/* Order 4 skips the pcp lists: one __rmqueue(), whose fallback takes pfns 112..127. */
	struct page *unmovable = alloc_pages(mm, GFP_KERNEL | MEMALLOC, 4);
	REQUIRE(unmovable);
	CHECK(__page_to_pfn(mm, unmovable) == FIRST_PFN + 48);
	int type = block_type(mm);
	*claims = mm_vm_event(mm, PGSTEAL_BLOCK) - steals0;
	/* One fallback, whether or not it claims the block. */
	CHECK_MSG(mm_vm_event(mm, PGFALLBACK) - fallbacks0 == 1, "the unmovable steal counted PGFALLBACK %lu",
		  mm_vm_event(mm, PGFALLBACK) - fallbacks0);
	CHECK_MM(mm, 3);

	__free_pages(mm, unmovable, 4);
	__free_pages(mm, quarter, 4);
	__free_pages(mm, half, 5);
	drain_all_pages(mm, NULL);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
	return type;
}

static void test_compound_counts_every_page(void)
{
	unsigned long claims = ~0UL;
	int type = steal_after(__GFP_COMP, &claims);
	CHECK_MSG(type == MIGRATE_MOVABLE, "a pageblock half in use by a movable compound page was claimed (now type %d)",
		  type);
	CHECK_MSG(claims == 0, "PGSTEAL_BLOCK counted %lu", claims);
}

static void test_plain_counts_its_first_page(void)
{
	unsigned long claims = ~0UL;
	int type = steal_after(0, &claims);
	CHECK_MSG(type == MIGRATE_UNMOVABLE, "free 16 + alike 46 of 64 pages did not claim the pageblock (type %d)", type);
	CHECK_MSG(claims == 1, "PGSTEAL_BLOCK counted %lu", claims);
}

int main(void)
{
	test_compound_counts_every_page();
	test_plain_counts_its_first_page();
	TEST_DONE();
}

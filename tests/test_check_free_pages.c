/* SPDX-License-Identifier: MIT */
/*
 * test_check_free_pages.c - B1 at level 3 visits every page of every free
 * block (check.c, check_free_block()): a page inside a free buddy block
 * must be of the list's zone, have no reference and no owner, not be a
 * slab page, and, unless it is the block's head, not be PageBuddy (6.6:
 * __free_one_page() clears the merged buddy's mark; page_is_buddy() reads
 * the head alone).
 *
 * Each stray write below goes to the head, a page in the middle or the
 * last page of an order-6 free block, behind the allocator's back.  Level
 * 3 must report B1 naming exactly that pfn; level 2, which reads the head
 * and the last page only, must miss the middle page (so the test shows
 * which level does the work); putting the page back must pass again.
 */
#include <string.h>

#include "internal.h"
#include "test.h"

enum { ORDER = 6, NR = 1 << ORDER };

enum corruption { REFCOUNT, OWNER, SLAB, BUDDY, ZONE, NR_CORRUPTIONS };
static const char *const names[NR_CORRUPTIONS] = { "a reference", "an owner", "PG_slab", "PG_buddy", "another zone" };

/* An order-ORDER block on one of Normal's free lists. */
static struct page *free_block(struct zone *z)
{
	for (int mt = 0; mt < MIGRATE_TYPES; mt++)
		if (!list_empty(&z->free_area[ORDER].free_list[mt]))
			return list_first_entry(&z->free_area[ORDER].free_list[mt], struct page, lru);
	return NULL;
}

static void corrupt(struct page *p, enum corruption c)
{
	switch (c) {
	case REFCOUNT: set_page_count(p, 1); break;
	case OWNER:    p->owner_order = 1; break;
	case SLAB:     page_flag_set(p, PG_slab); break;
	case BUDDY:    __SetPageBuddy(p); break;
	case ZONE:     p->flags ^= (unsigned long)(ZONE_NORMAL ^ ZONE_DMA32) << ZONES_PGSHIFT; break;
	case NR_CORRUPTIONS: break;
	}
}

int main(void)
{
	struct mm_config c;
	char err[256];
	struct mm_violation v;

	test_config_normal(&c, 0, 1024, ORDER, 4);
	struct mm *mm = mm_create(&c, err, sizeof(err));
	REQUIRE_MSG(mm, "mm_create: %s", err);
	REQUIRE(mm_cpu_attach(mm, 0) == 0);
	mm_check_set_incremental(mm, false);   /* level 2 walks every list each time */
	struct zone *z = mm_zone(mm, ZONE_NORMAL);
	REQUIRE(z);
	struct page *blk = free_block(z);
	REQUIRE(blk);
	unsigned long head = page_to_pfn(mm, blk);
	CHECK(mm_check(mm, 3, &v));

	const unsigned long offsets[] = { 0, 17, NR - 1 };
	for (unsigned int k = 0; k < ARRAY_SIZE(offsets); k++) {
		unsigned long off = offsets[k], pfn = head + off;
		struct page *p = blk + off;
		for (int cr = 0; cr < NR_CORRUPTIONS; cr++) {
			if (cr == BUDDY && off == 0)
				continue;   /* the head is PageBuddy already */
			struct page saved;
			memcpy(&saved, p, sizeof(saved));
			corrupt(p, (enum corruption)cr);
			bool ok3 = mm_check(mm, 3, &v);
			CHECK_MSG(!ok3 && v.inv == MM_INV_B1 && v.pfn == pfn,
				  "page %lu of the free block at pfn %#lx with %s: level 3 reported %s at pfn %#lx (%s)",
				  off, head, names[cr], ok3 ? "nothing" : v.id, v.pfn, v.msg);
			if (off != 0 && off != NR - 1) {
				bool ok2 = mm_check(mm, 2, &v);
				CHECK_MSG(ok2, "page %lu with %s: level 2 reads only the head and the last page, "
					  "but reported %s", off, names[cr], v.msg);
			}
			memcpy(p, &saved, sizeof(saved));
			CHECK_MSG(mm_check(mm, 3, &v), "page %lu put back after %s: %s", off, names[cr], v.msg);
		}
	}

	/* Two bad pages in one block: the first one is named. */
	set_page_count(blk + 40, 1);
	page_flag_set(blk + 9, PG_slab);
	CHECK(!mm_check(mm, 3, &v) && v.inv == MM_INV_B1 && v.pfn == head + 9);
	set_page_count(blk + 40, 0);
	page_flag_clear(blk + 9, PG_slab);
	CHECK(mm_check(mm, 3, &v));
	mm_destroy(mm);
	TEST_DONE();
}

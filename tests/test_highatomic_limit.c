/* SPDX-License-Identifier: MIT */
/*
 * test_highatomic_limit.c - how far the highatomic reserve grows.
 * reserve_highatomic_pageblock() (Linux 6.6) reserves a whole pageblock
 * for high-order atomic allocations while the zone's reserve is below
 * max_managed = managed_pages / 100 + pageblock_nr_pages: so reserving
 * block after block stops at the first multiple of pageblock_nr_pages that
 * is not below max_managed - exactly max_managed when that is a multiple,
 * with no block past it.  Checked on Normal-only machines of several
 * sizes and pageblock orders, among them ones whose max_managed is a
 * multiple of the pageblock (found by trying sizes; the mutation audit's
 * `>=` made `>` overshoots only there: bench/results/mutants, buddy.c:492).
 * Also: a zone's last pageblock can be reserved, and a forced unreserve
 * reaches ZONE_DMA (two more survivors of the audit, buddy.c:489 and 572).
 */
#include "internal.h"
#include "test.h"

/* Reserve every pageblock of a Normal zone [0, @end) in turn; true if the machine's max_managed is a multiple. */
static bool reserve_all(unsigned long end, unsigned int pageblock_order)
{
	struct mm_config c;
	/* max_order = pageblock_order: no free block spans two pageblocks, as
	 * in the kernel's call, where an allocation inside the block split it */
	test_config_normal(&c, 0, end, pageblock_order, pageblock_order);
	struct mm *mm = test_create(&c);
	struct zone *zone = mm_zone(mm, ZONE_NORMAL);
	unsigned long pb = pageblock_nr_pages(mm);
	unsigned long max_managed = zone_managed_pages(zone) / 100 + pb;
	unsigned long want = (max_managed + pb - 1) / pb * pb;

	REQUIRE_MSG(want < end, "the zone [0, %lu) is too small for its reserve limit %lu", end, want);
	for (unsigned long pfn = 0; pfn + pb <= end; pfn += pb) {
		unsigned long before = zone->nr_reserved_highatomic;
		reserve_highatomic_pageblock(zone, pfn_to_page(mm, pfn), 0);
		unsigned long now = zone->nr_reserved_highatomic;
		if (before < max_managed)
			CHECK_MSG(now == before + pb, "[0, %lu) pb %lu: %lu reserved, below max_managed %lu, and the "
				  "block at pfn %lu not reserved", end, pb, before, max_managed, pfn);
		else
			CHECK_MSG(now == before, "[0, %lu) pb %lu: %lu reserved, max_managed %lu, and the block at pfn "
				  "%lu reserved too", end, pb, before, max_managed, pfn);
	}
	CHECK_MSG(zone->nr_reserved_highatomic == want, "[0, %lu) pb %lu: the reserve stopped at %lu, expected %lu "
		  "(max_managed %lu)", end, pb, zone->nr_reserved_highatomic, want, max_managed);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
	return max_managed % pb == 0;
}

/*
 * A zone's last pageblock can be reserved (it lies inside the zone, to its
 * last pfn); and a forced unreserve gives a reservation back in any zone,
 * ZONE_DMA (zone 0) included.
 */
static void last_block_and_dma(void)
{
	struct mm_config c;
	test_config_normal(&c, 0, 4096, 3, 3);
	c.zones[ZONE_DMA] = c.zones[ZONE_NORMAL];        /* all of it ZONE_DMA instead */
	c.zones[ZONE_NORMAL] = (struct mm_span){ 0, 0 };
	struct mm *mm = test_create(&c);
	struct zone *zone = mm_zone(mm, ZONE_DMA);
	unsigned long pb = pageblock_nr_pages(mm);

	reserve_highatomic_pageblock(zone, pfn_to_page(mm, 4096 - pb), 0);
	CHECK_MSG(zone->nr_reserved_highatomic == pb, "the zone's last pageblock: %lu reserved, expected %lu",
		  zone->nr_reserved_highatomic, pb);
	CHECK_MM(mm, 3);
	CHECK_MSG(unreserve_highatomic_pageblock(mm, ZONE_NORMAL, MIGRATE_MOVABLE, true),
		  "a forced unreserve found nothing to give back in ZONE_DMA");
	CHECK(zone->nr_reserved_highatomic == 0);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

int main(void)
{
	last_block_and_dma();
	unsigned int multiples = 0, cases = 0;
	for (unsigned int pbo = 1; pbo <= 3; pbo++) {
		unsigned int found = 0, other = 0;
		/* sizes a prime number of pageblocks apart, until two of each kind */
		for (unsigned long end = 4096; end <= 16384 && (found < 2 || other < 2); end += 13UL << pbo) {
			bool multiple = reserve_all(end, pbo);
			cases++;
			found += multiple;
			other += !multiple;
		}
		CHECK_MSG(found >= 2, "pageblock order %u: %u machines whose max_managed is a multiple of the pageblock",
			  pbo, found);
		multiples += found;
	}
	printf("%u machines, %u with max_managed a multiple of the pageblock\n", cases, multiples);
	TEST_DONE();
}

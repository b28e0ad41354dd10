/* SPDX-License-Identifier: MIT */
/*
 * test_watermark_lowmem.c - watermarks and lowmem_reserve as allocations
 * see them: allocate order-0 pages with one gfp until the allocator says
 * no, and every zone must stop exactly where the watermark arithmetic says
 * (the last page an allocation may take leaves free == the threshold).
 *
 * Default config, values from test_watermark_calc.c (by hand):
 *   min/low/high: DMA 58/72/86, DMA32 114/142/170, Normal 109/136/163,
 *   Movable 32/48/64; lowmem_reserve DMA (0, 31, 61, 79),
 *   DMA32 (0, 0, 30, 47), Normal (0, 0, 0, 143).
 * pcp_batch = 1, so each pcp refill takes exactly the one page the
 * allocation returns and NR_FREE_PAGES moves page by page.
 *
 * Threshold for order 0 (no highatomic reserve): free > min' + reserve,
 * with min' = min, or min - min/2 for __GFP_HIGH, and a further quarter off
 * that for GFP_ATOMIC (ALLOC_NON_BLOCK with ALLOC_MIN_RESERVE).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "page/pcp.h"
#include "test.h"

static struct mm *make(void)
{
	struct mm_config c;
	mm_config_default(&c);
	c.pcp_batch = 1;
	c.quiet = true;
	return test_create(&c);
}

static long nfree(struct mm *mm, int z)
{
	return zone_free_pages(mm_zone(mm, z));
}

/* Allocate with @gfp until NULL; every page from a zone <= @max_zone. Returns the count. */
static unsigned long fill(struct mm *mm, gfp_t gfp, int max_zone, struct page ***keep, unsigned long *nkeep)
{
	unsigned long n = 0;
	struct page *p;
	while ((p = alloc_pages(mm, gfp, 0))) {
		unsigned long pfn = page_to_pfn(mm, p);
		int z = -1;
		for (int i = 0; i < MAX_NR_ZONES; i++)
			if (mm_zone(mm, i) && pfn >= mm_get_config(mm)->zones[i].start_pfn &&
			    pfn < mm_get_config(mm)->zones[i].end_pfn)
				z = i;
		CHECK_MSG(z >= 0 && z <= max_zone, "gfp %#x: pfn %#lx from zone %d, above zone %d", gfp, pfn, z, max_zone);
		if ((*nkeep & (*nkeep + 1)) == 0 || *nkeep < 16) {   /* grow at 2^k - 1: amortised O(1) */
			*keep = realloc(*keep, (2 * *nkeep + 16) * sizeof(**keep));
			REQUIRE(*keep);
		}
		(*keep)[(*nkeep)++] = p;
		n++;
		CHECK_MM(mm, 1);
		if (n % 101 == 0)
			CHECK_MM(mm, 2);
	}
	CHECK_MM(mm, 3);
	return n;
}

static void expect_free(struct mm *mm, const char *step, long dma, long dma32, long normal, long movable)
{
	const long want[MAX_NR_ZONES] = { dma, dma32, normal, movable };
	for (int z = 0; z < MAX_NR_ZONES; z++)
		CHECK_MSG(nfree(mm, z) == want[z], "%s: zone %d has %ld free pages, expected %ld", step, z, nfree(mm, z),
			  want[z]);
}

static void free_all(struct mm *mm, struct page **keep, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		__free_pages(mm, keep[i], 0);
	drain_all_pages(mm, NULL);
}

static void test_protection_ladder(void)
{
	struct mm *mm = make();
	struct page **keep = NULL;
	unsigned long nkeep = 0, n;

	expect_free(mm, "created", 4095, 8092, 7695, 4576);

	/*
	 * GFP_KERNEL (highest zone Normal): Normal down to its min 109; DMA32 to
	 * 114 + reserve[Normal] 30 = 144; DMA to 58 + 61 = 119.  Movable untouched.
	 * (7695 - 109) + (8092 - 144) + (4095 - 119) = 19510 pages.
	 */
	n = fill(mm, GFP_KERNEL, ZONE_NORMAL, &keep, &nkeep);
	CHECK(n == 19510);
	expect_free(mm, "GFP_KERNEL", 119, 144, 109, 4576);
	CHECK(mm_vm_event(mm, ALLOCFAIL) == 1);

	/*
	 * GFP_HIGHUSER_MOVABLE: Movable to 32; the zones below are protected by
	 * their reserve against Movable (Normal 109 + 143 = 252 > 109 ...), so
	 * they give nothing.
	 */
	n = fill(mm, GFP_HIGHUSER_MOVABLE, ZONE_MOVABLE, &keep, &nkeep);
	CHECK(n == 4576 - 32);
	expect_free(mm, "GFP_HIGHUSER_MOVABLE", 119, 144, 109, 32);

	/* GFP_DMA32: DMA32 to 114 (no reserve against itself), DMA to 58 + 31 = 89. */
	n = fill(mm, GFP_KERNEL | __GFP_DMA32, ZONE_DMA32, &keep, &nkeep);
	CHECK(n == (144 - 114) + (119 - 89));
	expect_free(mm, "GFP_DMA32", 89, 114, 109, 32);

	/* GFP_DMA goes further: DMA to its min, 58. */
	n = fill(mm, GFP_KERNEL | __GFP_DMA, ZONE_DMA, &keep, &nkeep);
	CHECK(n == 89 - 58);
	expect_free(mm, "GFP_DMA", 58, 114, 109, 32);

	/* __GFP_HIGH: half the min reserve, 58 - 29 = 29. */
	n = fill(mm, GFP_KERNEL | __GFP_DMA | __GFP_HIGH, ZONE_DMA, &keep, &nkeep);
	CHECK(n == 58 - 29);
	expect_free(mm, "GFP_DMA|__GFP_HIGH", 29, 114, 109, 32);

	/* GFP_NOWAIT cannot block but has no __GFP_HIGH: no part of min, nothing. */
	n = fill(mm, GFP_NOWAIT | __GFP_DMA, ZONE_DMA, &keep, &nkeep);
	CHECK(n == 0);
	expect_free(mm, "GFP_NOWAIT|GFP_DMA", 29, 114, 109, 32);

	/* GFP_ATOMIC: 29 - 29/4 = 22. */
	n = fill(mm, GFP_ATOMIC | __GFP_DMA, ZONE_DMA, &keep, &nkeep);
	CHECK(n == 29 - 22);
	expect_free(mm, "GFP_ATOMIC|GFP_DMA", 22, 114, 109, 32);

	/* __GFP_NOMEMALLOC vetoes __GFP_MEMALLOC. */
	n = fill(mm, GFP_KERNEL | __GFP_DMA | __GFP_MEMALLOC | __GFP_NOMEMALLOC | __GFP_NORETRY, ZONE_DMA, &keep,
		 &nkeep);
	CHECK(n == 0);
	expect_free(mm, "__GFP_MEMALLOC|__GFP_NOMEMALLOC", 22, 114, 109, 32);

	/* __GFP_MEMALLOC: no watermark, no reserve - the zone empties. */
	n = fill(mm, GFP_KERNEL | __GFP_DMA | __GFP_MEMALLOC | __GFP_NORETRY, ZONE_DMA, &keep, &nkeep);
	CHECK(n == 22);
	expect_free(mm, "__GFP_MEMALLOC", 0, 114, 109, 32);

	free_all(mm, keep, nkeep);
	expect_free(mm, "freed", 4095, 8092, 7695, 4576);
	CHECK_MM(mm, 3);
	free(keep);
	mm_destroy(mm);
}

/* The same ladder after the tunables change: the decisions follow the recomputed values. */
static void test_tunables_move_the_ladder(void)
{
	struct page **keep = NULL;
	unsigned long nkeep = 0;

	/*
	 * lowmem_reserve_ratio 32 64 8 0: DMA (0, 252, 493, 636), DMA32
	 * (0, 0, 120, 191).  GFP_KERNEL stops DMA at 58 + 493 = 551 and DMA32
	 * at 114 + 120 = 234.
	 */
	struct mm *mm = make();
	const unsigned int r[MAX_NR_ZONES] = { 32, 64, 8, 0 };
	CHECK(mm_set_lowmem_reserve_ratio(mm, r) == 0);
	fill(mm, GFP_KERNEL, ZONE_NORMAL, &keep, &nkeep);
	expect_free(mm, "GFP_KERNEL, ratio 32 64 8 0", 551, 234, 109, 4576);
	/* Back to the default ratio: the same request may now go down to 58 + 61 = 119. */
	CHECK(mm_set_lowmem_reserve_ratio(mm, NULL) == 0);
	fill(mm, GFP_KERNEL, ZONE_NORMAL, &keep, &nkeep);
	expect_free(mm, "GFP_KERNEL, default ratio again", 119, 144, 109, 4576);
	free_all(mm, keep, nkeep);
	nkeep = 0;
	mm_destroy(mm);

	/* min_free_kbytes 4096: DMA min 210 (by hand in test_watermark_calc.c). */
	mm = make();
	CHECK(mm_set_min_free_kbytes(mm, 4096) == 0);
	fill(mm, GFP_KERNEL | __GFP_DMA, ZONE_DMA, &keep, &nkeep);
	expect_free(mm, "GFP_DMA, min_free_kbytes 4096", 210, 8092, 7695, 4576);
	CHECK(mm_set_min_free_kbytes(mm, 1128) == 0);
	fill(mm, GFP_KERNEL | __GFP_DMA, ZONE_DMA, &keep, &nkeep);
	expect_free(mm, "GFP_DMA, min_free_kbytes 1128", 58, 8092, 7695, 4576);
	free_all(mm, keep, nkeep);
	nkeep = 0;
	mm_destroy(mm);

	/*
	 * watermark_scale_factor 1000 moves low (DMA: 467) and high, not min:
	 * the fast path gives up at low, the slow path still goes down to min
	 * (58) - GFP_NOWAIT has ALLOC_NON_BLOCK but no __GFP_HIGH, so no part
	 * of min.
	 */
	mm = make();
	CHECK(mm_set_watermark_scale_factor(mm, 1000) == 0);
	CHECK(zone_wmark_pages(mm_zone(mm, ZONE_DMA), WMARK_LOW) == 467);
	fill(mm, GFP_NOWAIT | __GFP_DMA, ZONE_DMA, &keep, &nkeep);
	expect_free(mm, "GFP_NOWAIT|GFP_DMA, watermark_scale_factor 1000", 58, 8092, 7695, 4576);
	free_all(mm, keep, nkeep);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
	free(keep);
}

/* A shrinker holding one page: reclaim frees it (onto a pcp list) once. */
static struct page *held_page;
static struct mm *held_mm;

static unsigned long held_count(struct shrinker *s, struct shrink_control *sc)
{
	(void)s, (void)sc;
	return held_page != NULL;
}

static unsigned long held_scan(struct shrinker *s, struct shrink_control *sc)
{
	(void)s, (void)sc;
	if (!held_page)
		return 0;
	__free_pages(held_mm, held_page, 0);
	held_page = NULL;
	return 1;
}

/*
 * __GFP_MEMALLOC must reach a free page that only the slow path's pcp
 * drain makes visible: every page allocated as movable, one handed to a
 * shrinker, then an unmovable __GFP_MEMALLOC request.  Its first tries
 * find nothing (the buddy is empty); reclaim frees the shrinker's page,
 * which waits on the movable pcp list - another type's; the retry after
 * reclaim's progress fails, the drain puts the page in the buddy, and the
 * retry after it - still ALLOC_NO_WATERMARKS, as in the kernel, where
 * reserve_flags replace alloc_flags for every later attempt - takes it.
 * (Without progress the kernel drains nothing: __alloc_pages_direct_reclaim
 * retries only after reclaim freed something.)
 */
static void test_memalloc_after_drain(void)
{
	struct mm *mm = make();
	struct page **keep = NULL;
	unsigned long nkeep = 0;
	unsigned long n = fill(mm, GFP_HIGHUSER_MOVABLE | __GFP_MEMALLOC | __GFP_NORETRY, ZONE_MOVABLE, &keep, &nkeep);
	CHECK(n == mm_nr_valid_pages(mm));
	struct shrinker sh = { .count_objects = held_count, .scan_objects = held_scan };
	held_mm = mm;
	held_page = keep[--nkeep];
	REQUIRE(register_shrinker(mm, &sh) == 0);
	struct page *p = alloc_pages(mm, GFP_KERNEL | __GFP_MEMALLOC, 0);
	CHECK(held_page == NULL);
	unregister_shrinker(mm, &sh);
	CHECK_MSG(p != NULL, "__GFP_MEMALLOC failed with a free page on a pcp list: after the drain alloc.c retries "
		  "at the min watermark instead of with ALLOC_NO_WATERMARKS");
	if (p)
		keep[nkeep++] = p;
	free_all(mm, keep, nkeep);
	CHECK_MM(mm, 3);
	free(keep);
	mm_destroy(mm);
}

int main(void)
{
	test_protection_ladder();
	test_tunables_move_the_ladder();
	test_memalloc_after_drain();
	TEST_DONE();
}

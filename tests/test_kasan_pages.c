/* SPDX-License-Identifier: MIT */
/*
 * test_kasan_pages.c - KASAN's view of the page allocator (ASan builds,
 * where kasan_poison() is ASan's manual poisoning): a frame is poisoned
 * exactly while it is free, as 6.6's generic KASAN has it -
 * __free_pages_core() at boot and free_pages_prepare() poison,
 * post_alloc_hook() unpoisons - so that a use after free of a page, or a
 * read of one never allocated, is a report, not a silent read.
 *
 *   - after mm_create() every valid frame is poisoned (boot frees);
 *   - alloc_pages() of every order unpoisons the whole block, and
 *     __free_pages() poisons it again - order 0 through the pcp lists too,
 *     where the page is still free to the allocator's users;
 *   - with init_on_free, the zeroing happens first and the block still ends
 *     poisoned;
 *   - mm_reset() with pages still allocated: every frame poisoned again.
 *
 * Frames are sampled at their first, middle and last byte; a frame of a
 * block is checked whole with __asan_region_is_poisoned().  Outside ASan
 * builds there is nothing to check: the test says so and skips.
 */
#include <string.h>

#include "internal.h"
#include "mm/slab.h"
#include "test.h"

#ifdef MM_ASAN

/* Poisoned at the first, middle and last byte. */
static bool frame_poisoned(const char *a)
{
	return __asan_address_is_poisoned(a) && __asan_address_is_poisoned(a + MM_PAGE_SIZE / 2) &&
	       __asan_address_is_poisoned(a + MM_PAGE_SIZE - 1);
}

/* How many valid frames are not poisoned; the first in *@first. */
static unsigned long unpoisoned_frames(struct mm *mm, unsigned long *first)
{
	unsigned long n = 0;
	for (unsigned long pfn = mm->first_pfn; pfn < mm->end_pfn; pfn++) {
		if (!pfn_valid(mm, pfn) || frame_poisoned(__page_address(mm, pfn)))
			continue;
		if (!n++)
			*first = pfn;
	}
	return n;
}

static void check_all_free_poisoned(struct mm *mm, const char *when)
{
	unsigned long first = 0, n = unpoisoned_frames(mm, &first);
	CHECK_MSG(n == 0, "%s: %lu free frames not poisoned, the first pfn %#lx", when, n, first);
}

static void test_alloc_free(bool init_on_free)
{
	struct mm_config c;
	char err[256];
	mm_config_default(&c);
	c.quiet = true;
	struct mm *mm = test_create(&c);
	REQUIRE_MSG(!init_on_free || mm_slub_configure(mm, "init_on_free=1", err, sizeof(err)) == 0, "%s", err);
	const char *mode = init_on_free ? "init_on_free" : "default";

	check_all_free_poisoned(mm, mode);
	for (unsigned int order = 0; order <= mm->max_order; order++) {
		struct page *pg = alloc_pages(mm, GFP_KERNEL | __GFP_NOWARN, order);
		if (!pg)
			continue;
		char *a = page_address(mm, pg);
		size_t len = MM_PAGE_SIZE << order;
		void *bad = __asan_region_is_poisoned(a, len);
		CHECK_MSG(bad == NULL, "%s: order-%u block at pfn %#lx allocated, byte %ld still poisoned", mode, order,
			  page_to_pfn(mm, pg), bad ? (long)((char *)bad - a) : -1L);
		memset(a, 0x6b, len);                    /* writable whole: ASan would stop here otherwise */
		__free_pages(mm, pg, order);
		unsigned long still = 0;
		for (size_t off = 0; off < len; off += MM_PAGE_SIZE)
			still += !frame_poisoned(a + off);
		CHECK_MSG(still == 0, "%s: order-%u block freed, %lu of its %lu frames not poisoned (%s)", mode, order,
			  still, 1UL << order, order ? "back in the buddy" : "on the pcp list");
	}
	drain_all_pages(mm, NULL);
	check_all_free_poisoned(mm, init_on_free ? "init_on_free, after the frees" : "after the frees");
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

static void test_reset(void)
{
	struct mm_config c;
	mm_config_default(&c);
	c.quiet = true;
	struct mm *mm = test_create(&c);
	int held = 0;
	for (unsigned int order = 0; order < 4; order++)
		for (int i = 0; i < 8; i++)
			held += alloc_pages(mm, GFP_KERNEL | __GFP_NOWARN, order) != NULL;
	CHECK(held == 32);
	unsigned long first = 0;
	CHECK_MSG(unpoisoned_frames(mm, &first) >= 8 + 16 + 32 + 64, "allocated frames are not unpoisoned");
	CHECK(mm_reset(mm) == 0);
	check_all_free_poisoned(mm, "after mm_reset() with pages held");
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

int main(void)
{
	test_alloc_free(false);
	test_alloc_free(true);
	test_reset();
	TEST_DONE();
}

#else

int main(void)
{
	TEST_SKIP("KASAN's page poisoning is ASan's: this build has no ASan");
}

#endif

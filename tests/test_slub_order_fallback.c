/* SPDX-License-Identifier: MIT */
/*
 * test_slub_order_fallback.c - allocate_slab()'s fallback: when no block
 * of the cache's preferred order (s->oo) is free, a new slab is taken at
 * its minimum order (s->min) and holds fewer objects (ORDER_FALLBACK).
 * With freelist randomisation the shuffled sequence was made for the
 * larger slab, so shuffle_freelist() must skip every entry at or past the
 * small slab's end (next_freelist_entry(): idx >= page_limit).
 *
 * Memory is fragmented so that no block above order 0 is free: every page
 * is allocated at order 0, then the pages of odd pfn are given back (their
 * buddies stay allocated, so nothing merges).  A cache of 1024-byte objects
 * (order 3 preferred, order 0 minimum: 4 objects per slab, 2 or 3 with
 * ASan's redzones) then allocates 40 objects.  Each must lie inside one
 * order-0 slab page, none twice, and the checker at level 3 must find
 * every slab's freelist inside its slab.
 * The mutation audit (tools/mutants.py) found the path untested: an
 * off-by-one there (idx > page_limit) put an object past the slab's end.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mm/mm.h"
#include "mm/slab.h"
#include "test.h"
#include "slub_test.h"

enum { NOBJ = 40, OSZ = 1024 };

int main(void)
{
	struct mm *mm = new_mm("slab_freelist_random=1");
	struct kmem_cache *s = kmem_cache_create(mm, "TestSlub_fallback", OSZ, 0, 0, NULL);
	REQUIRE(s);
	struct kmem_cache_info info;
	kmem_cache_get_info(s, &info);
	REQUIRE_MSG(info.order > 0, "the cache prefers order %u: no fallback to test", info.order);

	/* every page at order 0 (the reserves too: __GFP_MEMALLOC), then the odd pfns back */
	size_t cap = 1 << 16, n = 0;
	struct page **pages = malloc(cap * sizeof(*pages));
	REQUIRE(pages);
	struct page *p;
	while (n < cap && (p = alloc_pages(mm, GFP_KERNEL | __GFP_MEMALLOC | __GFP_NOWARN, 0)))
		pages[n++] = p;
	REQUIRE_MSG(n > 1000 && n < cap, "%zu pages allocated", n);
	size_t kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (page_to_pfn(mm, pages[i]) & 1)
			__free_pages(mm, pages[i], 0);
		else
			pages[kept++] = pages[i];
	}
	CHECK_MM(mm, 3);

	void *obj[NOBJ];
	for (int i = 0; i < NOBJ; i++) {
		obj[i] = kmem_cache_alloc(s, GFP_KERNEL);
		REQUIRE_MSG(obj[i], "object %d not allocated", i);
		memset(obj[i], 0xa0 + i, OSZ);
	}
	kmem_cache_get_info(s, &info);
	unsigned long st[NR_SLUB_STAT_ITEMS];
	if (kmem_cache_get_stats(s, st))         /* SLUB_STATS: MM_DEBUG >= 1 or the test hooks */
		CHECK_MSG(st[ORDER_FALLBACK] > 0, "no ORDER_FALLBACK counted");
	CHECK_MSG(info.nr_slabs >= NOBJ / 4, "%lu slabs for %d objects: not the order-0 fallback",
		  info.nr_slabs, NOBJ);
	for (int i = 0; i < NOBJ; i++) {
		/* inside one page of an odd pfn (an order-0 slab): not across its end,
		 * not in the next page (an even pfn, one of the test's own) */
		struct page *head = virt_to_page(mm, obj[i]);
		struct page *tail = virt_to_page(mm, (char *)obj[i] + OSZ - 1);
		REQUIRE(head);
		CHECK_MSG(head == tail, "object %d at %p crosses its slab page's end", i, obj[i]);
		CHECK_MSG(page_to_pfn(mm, head) & 1, "object %d in pfn %#lx: past its slab's end, or not a fallback slab", i,
			  page_to_pfn(mm, head));
		for (int j = 0; j < i; j++)
			CHECK_MSG(obj[j] != obj[i], "objects %d and %d are one", j, i);
	}
	CHECK_MM(mm, 3);
	bool ok = true;
	for (int i = 0; i < NOBJ; i++)
		for (int b = 0; b < OSZ; b++)
			ok &= ((unsigned char *)obj[i])[b] == (unsigned char)(0xa0 + i);
	CHECK_MSG(ok, "an object's contents changed: two objects overlap");

	for (int i = 0; i < NOBJ; i++)
		kmem_cache_free(s, obj[i]);
	kmem_cache_destroy(s);
	for (size_t i = 0; i < kept; i++)
		__free_pages(mm, pages[i], 0);
	free(pages);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
	TEST_DONE();
}

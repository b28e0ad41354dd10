/* SPDX-License-Identifier: MIT */
/*
 * test_check_incremental.c - mm_check's incremental level 2 (check.c,
 * pcp.c pcp_check, slab/invariants.c): a zone, pcp or cache is walked again
 * only when its signature changed since its last passing walk.
 *
 * What must hold, each shown both ways:
 *  - a change made through the allocator is walked at once: a corruption
 *    followed by an allocator operation on the same structure is caught by
 *    the very next level-2 check;
 *  - a stray write behind the allocator's back (no list, count or counter
 *    moves) is not walked at level 2 while the structure is unchanged, but
 *    is caught by level 2 with mm_check_set_incremental(mm, false), by
 *    level 3 (which always walks), and by level 2 as soon as anything else
 *    changes the structure;
 *  - mm_reset() forgets every signature (a fresh instance is walked in full).
 */
#include <string.h>

#include "internal.h"
#include "page/pcp.h"
#include "slab/slab.h"
#include "mm/slab.h"
#include "test.h"

/* A free block of the highest order that has one in @z (what an order-0 allocation takes last). */
static struct page *some_free_block(struct zone *z, unsigned int *order)
{
	for (int o = MM_NR_ORDERS_LIMIT - 1; o >= 0; o--)
		for (int mt = 0; mt < MIGRATE_TYPES; mt++)
			if (!list_empty(&z->free_area[o].free_list[mt])) {
				*order = (unsigned int)o;
				return list_last_entry(&z->free_area[o].free_list[mt], struct page, lru);
			}
	return NULL;
}

static void test_zone(void)
{
	struct mm *mm = test_make_mm(2, true);
	REQUIRE(mm);
	REQUIRE(mm_cpu_attach(mm, 0) == 0);
	struct mm_violation v;
	struct zone *z = mm_zone(mm, ZONE_DMA32);
	REQUIRE(z);
	CHECK(mm_check(mm, 2, &v));
	CHECK(z->l2_sig != 0);

	/* A stray write: the head of a free block loses PageBuddy, nothing else moves. */
	unsigned int order;
	struct page *blk = some_free_block(z, &order);
	REQUIRE(blk);
	__ClearPageBuddy(blk);
	CHECK(mm_check(mm, 2, &v));                        /* unchanged signature: not walked */
	mm_check_set_incremental(mm, false);
	CHECK(!mm_check(mm, 2, &v) && v.inv == MM_INV_B1); /* every walk: caught */
	mm_check_set_incremental(mm, true);
	CHECK(!mm_check(mm, 3, &v) && v.inv == MM_INV_B1); /* level 3 always walks */
	CHECK(!mm_check(mm, 2, &v) && v.inv == MM_INV_B1); /* a failed walk is not remembered */
	__SetPageBuddy(blk);
	CHECK(mm_check(mm, 2, &v));

	/* Corrupt again; the next allocation in the zone changes its lists: walked, caught. */
	__ClearPageBuddy(blk);
	CHECK(mm_check(mm, 2, &v));
	struct page *p = alloc_pages(mm, GFP_DMA32, 0);
	REQUIRE(p);
	unsigned long pfn = page_to_pfn(mm, p), head = page_to_pfn(mm, blk);
	REQUIRE(pfn < head || pfn >= head + (1UL << order));   /* it came from a smaller block */
	CHECK(!mm_check(mm, 2, &v) && v.inv == MM_INV_B1);
	__SetPageBuddy(blk);
	__free_pages(mm, p, 0);
	drain_all_pages(mm, NULL);
	CHECK(mm_check(mm, 3, &v));

	/* mm_reset() forgets: the same stray write right after a reset is walked. */
	REQUIRE(mm_reset(mm) == 0);
	CHECK(z->l2_sig == 0);
	REQUIRE(mm_cpu_attach(mm, 0) == 0);
	blk = some_free_block(z, &order);
	REQUIRE(blk);
	__ClearPageBuddy(blk);
	CHECK(!mm_check(mm, 2, &v) && v.inv == MM_INV_B1);
	__SetPageBuddy(blk);
	CHECK(mm_check(mm, 3, &v));
	mm_destroy(mm);
}

static void test_pcp(void)
{
	struct mm *mm = test_make_mm(2, true);
	REQUIRE(mm);
	REQUIRE(mm_cpu_attach(mm, 0) == 0);
	struct mm_violation v;
	struct page *a = alloc_pages(mm, GFP_KERNEL, 0), *b = alloc_pages(mm, GFP_KERNEL, 0);
	REQUIRE(a && b);
	__free_pages(mm, a, 0);         /* onto vCPU 0's pcp list */
	struct zone *z = page_zone(mm, a);
	struct per_cpu_pages *pcp = &z->per_cpu_pageset[0];
	REQUIRE(pcp->count > 0);
	CHECK(mm_check(mm, 2, &v));

	/* A stray write: a pcp page claims another order. */
	struct list_head *l = &pcp->lists[order_to_pindex(MIGRATE_UNMOVABLE, 0)];
	REQUIRE(!list_empty(l));
	struct page *q = list_first_entry(l, struct page, lru);
	unsigned long saved = q->private_;
	q->private_ = 2;
	CHECK(mm_check(mm, 2, &v));
	mm_check_set_incremental(mm, false);
	CHECK(!mm_check(mm, 2, &v) && v.inv == MM_INV_P1);
	mm_check_set_incremental(mm, true);
	CHECK(!mm_check(mm, 3, &v) && v.inv == MM_INV_P1);
	/* Freeing b onto the same pcp changes its list head and count: walked, caught. */
	q->private_ = saved;
	CHECK(mm_check(mm, 2, &v));
	q->private_ = 2;
	__free_pages(mm, b, 0);
	CHECK(!mm_check(mm, 2, &v) && v.inv == MM_INV_P1);
	q->private_ = saved;
	drain_all_pages(mm, NULL);
	CHECK(mm_check(mm, 3, &v));
	mm_destroy(mm);
}

static void test_cache(void)
{
	struct mm *mm = test_make_mm(2, true);
	REQUIRE(mm);
	REQUIRE(mm_cpu_attach(mm, 0) == 0);
	struct mm_violation v;
	struct kmem_cache *s = kmem_cache_create(mm, "inc", 64, 0, 0, NULL);
	REQUIRE(s);
	void *o = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(o);
	CHECK(mm_check(mm, 2, &v));
#ifdef SLUB_STATS
	unsigned long sig = atomic_load(&s->l2_sig);
	CHECK(sig != 0);
	CHECK(mm_check(mm, 2, &v));
	CHECK(atomic_load(&s->l2_sig) == sig);
	/* A fast-path free moves the tid: a new signature, walked. */
	kmem_cache_free(s, o);
	CHECK(mm_check(mm, 2, &v));
	CHECK(atomic_load(&s->l2_sig) != sig && atomic_load(&s->l2_sig) != 0);
#else
	/* No FREE_SLOWPATH count to sign (MM_DEBUG=0, no test hooks): every check walks, none is skipped. */
	CHECK(atomic_load(&s->l2_sig) == 0);
	kmem_cache_free(s, o);
	CHECK(mm_check(mm, 2, &v));
	CHECK(atomic_load(&s->l2_sig) == 0);
#endif

	/* A stray write: vCPU 0's tid names vCPU 1 (T1), nothing else moves... */
	struct kmem_cache_cpu *c = slub_cpu(s, 0);
	unsigned long tid = c_tid(c);
	c->tid = tid + 1;
	/* ...but the tid is part of the signature, so even this is walked at once. */
	CHECK(!mm_check(mm, 2, &v) && v.inv == MM_INV_T1);
	c->tid = tid;
	CHECK(mm_check(mm, 2, &v));
	kmem_cache_destroy(s);
	CHECK(mm_check(mm, 3, &v));
	mm_destroy(mm);
}

int main(void)
{
	test_zone();
	test_pcp();
	test_cache();
	TEST_DONE();
}

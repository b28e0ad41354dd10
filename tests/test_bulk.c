/* SPDX-License-Identifier: MIT */
/*
 * test_bulk.c - the bulk page allocator's contract (the 2021 fixes): skip
 * populated entries, return the number of populated entries, never touch
 * the array past nr_pages (guard words, and an exact-size heap array for
 * ASan), an already-full array, exhaustion half-way, the list variant, and
 * bulk vs N single allocations leaving the same state and counters, for a
 * gfp of each zone; a
 * list free drops the pcp lock every 32 pages and at each change of zone,
 * counting the 32 afresh; release_pages() frees its array last entry first.
 */
#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "page/pcp.h"
#include "test.h"

#define GUARD 0x5a5a5a5a5a5a5a5aUL

static struct mm *make_default(void)
{
	struct mm_config c;
	mm_config_default(&c);
	c.pcp_batch = 8;
	c.pcp_high = 64;
	return test_create(&c);
}

static void test_guards_and_prepopulated(void)
{
	struct mm *mm = make_default();
	struct {
		uintptr_t before[4];
		struct page *arr[32];
		uintptr_t after[4];
	} g;
	for (int i = 0; i < 4; i++)
		g.before[i] = g.after[i] = GUARD;
	memset(g.arr, 0, sizeof(g.arr));

	/* Pre-populate a few entries with pages of our own. */
	struct page *mine[3];
	int at[3] = { 0, 7, 31 };
	for (int i = 0; i < 3; i++) {
		REQUIRE((mine[i] = alloc_pages(mm, GFP_KERNEL, 0)));
		g.arr[at[i]] = mine[i];
	}
	unsigned long pgalloc = mm_vm_event(mm, PGALLOC);
	unsigned long n = alloc_pages_bulk_array(mm, GFP_KERNEL, 32, g.arr);
	CHECK_MSG(n == 32, "returned %lu, want 32 (populated entries, pre-populated included)", n);
	CHECK(mm_vm_event(mm, PGALLOC) - pgalloc == 29);     /* counted per page, only new ones */
	for (int i = 0; i < 3; i++)
		CHECK(g.arr[at[i]] == mine[i]);                   /* untouched */
	for (int i = 0; i < 4; i++)
		CHECK(g.before[i] == GUARD && g.after[i] == GUARD);
	for (int i = 0; i < 32; i++)
		for (int j = i + 1; j < 32; j++)
			CHECK(g.arr[i] != g.arr[j]);
	CHECK_MM(mm, 3);

	/* Already full: nothing allocated, returns nr_pages. */
	pgalloc = mm_vm_event(mm, PGALLOC);
	CHECK(alloc_pages_bulk_array(mm, GFP_KERNEL, 32, g.arr) == 32);
	CHECK(mm_vm_event(mm, PGALLOC) == pgalloc);

	/* nr_pages smaller than the array: only the first entries are considered. */
	struct page *small[8] = { 0 };
	CHECK(alloc_pages_bulk_array(mm, GFP_KERNEL, 5, small) == 5);
	for (int i = 5; i < 8; i++)
		CHECK(small[i] == NULL);
	release_pages(mm, small, 8);
	release_pages(mm, g.arr, 32);
	drain_all_pages(mm, NULL);
	CHECK_MM(mm, 3);
	CHECK(mm_vm_event(mm, PGALLOC) == mm_vm_event(mm, PGFREE));
	mm_destroy(mm);
}

/* An exact-size heap array: under ASan, one read past it is a report. */
static void test_exact_heap_array(void)
{
	struct mm *mm = make_default();
	for (int nr = 1; nr <= 40; nr += 13) {
		struct page **arr = calloc((size_t)nr, sizeof(*arr));
		REQUIRE(arr);
		CHECK(alloc_pages_bulk_array(mm, GFP_KERNEL, (unsigned long)nr, arr) == (unsigned long)nr);
		CHECK(alloc_pages_bulk_array(mm, GFP_KERNEL, (unsigned long)nr, arr) == (unsigned long)nr);  /* full */
		release_pages(mm, arr, (unsigned long)nr);
		free(arr);
	}
	/* nr_pages <= 0 returns 0 and touches nothing. */
	CHECK(__alloc_pages_bulk(mm, GFP_KERNEL, 0, NULL, NULL) == 0);
	CHECK(__alloc_pages_bulk(mm, GFP_KERNEL, -3, NULL, NULL) == 0);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

static void test_list_variant(void)
{
	struct mm *mm = make_default();
	LIST_HEAD_DECL(list);
	CHECK(alloc_pages_bulk_list(mm, GFP_KERNEL, 50, &list) == 50);
	unsigned long n = 0;
	struct list_head *pos;
	list_for_each(pos, &list) {
		struct page *p = mm_lru_to_page(pos);
		CHECK(page_count(p) == 1);
		memset(page_address(mm, p), 0x77, MM_PAGE_SIZE);   /* real memory */
		n++;
	}
	CHECK(n == 50);
	CHECK_MM(mm, 3);
	free_unref_page_list(mm, &list);
	drain_all_pages(mm, NULL);
	CHECK(mm_vm_event(mm, PGALLOC) == mm_vm_event(mm, PGFREE));
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/* Exhaustion half-way: a small machine, a request larger than memory. */
static void test_exhaustion(void)
{
	struct mm_config c;
	memset(&c, 0, sizeof(c));
	mm_config_default(&c);
	c.nr_holes = 0;
	c.max_order = 4;
	c.pageblock_order = 3;
	c.zones[ZONE_DMA] = (struct mm_span){ 16, 16 };
	c.zones[ZONE_DMA32] = (struct mm_span){ 16, 16 };
	c.zones[ZONE_NORMAL] = (struct mm_span){ 16, 16 + 300 };
	c.zones[ZONE_MOVABLE] = (struct mm_span){ 0, 0 };
	c.pcp_batch = 8;
	c.pcp_high = 32;
	struct mm *mm = test_create(&c);
	struct page **arr = calloc(400, sizeof(*arr));
	REQUIRE(arr);
	unsigned long got = alloc_pages_bulk_array(mm, GFP_KERNEL, 400, arr);
	CHECK(got > 0 && got < 400);
	for (unsigned long i = 0; i < 400; i++)
		CHECK((arr[i] != NULL) == (i < got));
	CHECK_MM(mm, 3);
	/* Keep asking: each call returns the populated count, never fewer than before. */
	unsigned long again = alloc_pages_bulk_array(mm, GFP_KERNEL, 400, arr);
	CHECK(again >= got && again < 400);
	release_pages(mm, arr, 400);
	drain_all_pages(mm, NULL);
	CHECK(zone_free_pages(mm_zone(mm, ZONE_NORMAL)) == 300);
	CHECK_MM(mm, 3);
	free(arr);
	mm_destroy(mm);
}

/* Bulk and N single calls leave the same pages, state and counters. */
/*
 * Bulk and single allocations of the same gfp end the same, whichever zone
 * the gfp allows at most: __alloc_pages_bulk() looks at every zone from
 * the gfp's highest down to ZONE_DMA (zone 0 too: a __GFP_DMA request has
 * nowhere else to go).
 */
static void test_bulk_equals_singles(gfp_t gfp, enum zone_type want_zone)
{
	struct mm *a = make_default(), *b = make_default();
	enum { K = 77 };
	struct page *pa[K] = { 0 }, *pb[K];
	unsigned long got = alloc_pages_bulk_array(a, gfp, K, pa);
	CHECK_MSG(got == K, "gfp %#x: bulk allocated %lu of %d", (unsigned int)gfp, got, K);
	for (int i = 0; i < K; i++)
		REQUIRE((pb[i] = alloc_pages(b, gfp, 0)));
	for (int i = 0; i < K; i++) {
		CHECK(pa[i] && page_to_pfn(a, pa[i]) == page_to_pfn(b, pb[i]));
		CHECK_MSG(!pa[i] || page_zonenum(pa[i]) == want_zone, "gfp %#x: page %d from zone %d, want %d",
			  (unsigned int)gfp, i, pa[i] ? (int)page_zonenum(pa[i]) : -1, (int)want_zone);
	}
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *za = mm_zone(a, z), *zb = mm_zone(b, z);
		CHECK(zone_free_pages(za) == zone_free_pages(zb));
		for (unsigned int o = 0; o <= 10; o++)
			CHECK(zone_nr_free(za, o) == zone_nr_free(zb, o));
		struct mm_pcp_info ia, ib;
		REQUIRE(mm_pcp_info(a, z, 0, &ia) == 0 && mm_pcp_info(b, z, 0, &ib) == 0);
		CHECK(ia.count == ib.count);
	}
	CHECK(mm_vm_event(a, PGALLOC) == mm_vm_event(b, PGALLOC));
	release_pages(a, pa, got);
	for (int i = 0; i < K; i++)
		__free_pages(b, pb[i], 0);
	CHECK(mm_vm_event(a, PGFREE) == mm_vm_event(b, PGFREE));
	CHECK_MM(a, 3);
	CHECK_MM(b, 3);
	mm_destroy(a);
	mm_destroy(b);
}

/* Bad pages handed to the bulk free (a page twice, a stray pointer) are reported one by one; the rest are freed. */
static void test_release_bad(void)
{
	struct mm_config c;
	mm_config_default(&c);
	c.quiet = true;
	struct mm *mm = test_create(&c);
	struct page *arr[4] = { 0 };
	CHECK(alloc_pages_bulk_array(mm, GFP_KERNEL, 4, arr) == 4);
	struct page *dup[5] = { arr[0], arr[1], arr[2], arr[3], arr[1] };   /* arr[1] twice */
	unsigned long reports = mm_nr_reports(mm);
	release_pages(mm, dup, 5);
	CHECK(mm_nr_reports(mm) == reports + 1);
	CHECK(mm_vm_event(mm, PGALLOC) == mm_vm_event(mm, PGFREE));
	CHECK_MM(mm, 3);

	/* A pointer that is no struct page of this memory: reported, not freed, and the others are. */
	struct page stray;
	memset(&stray, 0, sizeof(stray));
	CHECK(alloc_pages_bulk_array(mm, GFP_KERNEL, 2, memset(arr, 0, sizeof(arr))) == 2);
	struct page *mixed[3] = { arr[0], &stray, arr[1] };
	reports = mm_nr_reports(mm);
	release_pages(mm, mixed, 3);
	CHECK_MSG(mm_nr_reports(mm) == reports + 1, "%lu reports for a stray page pointer, want 1",
		  mm_nr_reports(mm) - reports);
	CHECK_MSG(strstr(mm_last_report(mm)->msg, "not a struct page of this memory"), "last report: %s",
		  mm_last_report(mm)->msg);
	CHECK(mm_vm_event(mm, PGALLOC) == mm_vm_event(mm, PGFREE));
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/*
 * release_pages() frees the array from its last entry to its first, as 6.6's
 * (each page goes to the head of the list to free, mm/swap.c): the first
 * entry is freed last, so it is at the head of the pcp list and the next
 * order-0 allocation gets it back, then the second, and so on.  Freeing
 * front to back gave the last entry first.
 */
static void test_release_order(void)
{
	struct mm *mm = make_default();
	enum { K = 8 };
	struct page *arr[K];
	for (int i = 0; i < K; i++) {
		REQUIRE((arr[i] = alloc_pages(mm, GFP_KERNEL, 0)));
		REQUIRE(page_zonenum(arr[i]) == page_zonenum(arr[0]));
		REQUIRE(get_pfnblock_migratetype(mm, arr[i], page_to_pfn(mm, arr[i])) ==
			get_pfnblock_migratetype(mm, arr[0], page_to_pfn(mm, arr[0])));
	}
	struct mm_pcp_info before, after;
	REQUIRE(mm_pcp_info(mm, page_zonenum(arr[0]), 0, &before) == 0);
	release_pages(mm, arr, K);
	REQUIRE(mm_pcp_info(mm, page_zonenum(arr[0]), 0, &after) == 0);
	REQUIRE(after.count == before.count + K);      /* all of them on this vCPU's pcp, none trimmed */
	for (int i = 0; i < K; i++) {
		struct page *p = alloc_pages(mm, GFP_KERNEL, 0);
		REQUIRE(p);
		CHECK_MSG(p == arr[i], "allocation %d after release_pages: pfn %lu, expected arr[%d] (pfn %lu)", i,
			  page_to_pfn(mm, p), i, page_to_pfn(mm, arr[i]));
		arr[i] = p;
	}
	release_pages(mm, arr, K);
	CHECK(mm_vm_event(mm, PGALLOC) == mm_vm_event(mm, PGFREE));
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

#ifdef MM_TEST_HOOKS
/*
 * free_unref_page_list() holds the pcp lock for at most 32 pages
 * (SWAP_CLUSTER_MAX in 6.6): 96 pages of one zone take it 3 times, and an
 * interrupt raised at the point before each retake finds the pcp free.
 * The model held it for the whole list: 1 time, and no such window.
 */
struct lock_count {
	bool on;
	bool raise;             /* raise an interrupt before every lock taken again */
	unsigned long before_lock, irq_got_pcp, irqs;
	int zone;
};

static void list_free_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	struct lock_count *lc = ctx;
	if (!lc->on || point != MM_PP_PCP_BEFORE_LOCK || in_interrupt())
		return;
	lc->before_lock++;
	if (lc->raise && lc->before_lock > 1 && mm_raise_irq(mm))
		lc->irqs++;
}

static void list_free_irq(struct mm *mm, int cpu, void *ctx)
{
	struct lock_count *lc = ctx;
	struct mm_pcp_info before, after;
	(void)cpu;
	/* GFP_ATOMIC order 0 from the same zone: through this vCPU's pcp when its lock is free. */
	mm_pcp_info(mm, lc->zone, cpu, &before);
	struct page *p = alloc_pages(mm, GFP_ATOMIC, 0);
	mm_pcp_info(mm, lc->zone, cpu, &after);
	if (p && after.count + 1 == before.count)
		lc->irq_got_pcp++;
	if (p)
		__free_pages(mm, p, 0);
}

/* One vCPU, batch 8, high 512: a freed list's pages stay on the pcp, one lock per (re)take. */
static struct mm *make_list_free_mm(void)
{
	struct mm_config c;
	mm_config_default(&c);
	c.nr_cpus = 1;
	c.pcp_batch = 8;
	c.pcp_high = 512;
	return test_create(&c);
}

static void test_list_free_batches(void)
{
	struct mm *mm = make_list_free_mm();
	enum { N = 96 };
	LIST_HEAD_DECL(list);
	struct lock_count lc = { .raise = true };
	for (int i = 0; i < N; i++) {
		struct page *p = alloc_pages(mm, GFP_KERNEL, 0);
		REQUIRE(p);
		if (i == 0)
			lc.zone = (int)page_zonenum(p);
		REQUIRE(page_zonenum(p) == (enum zone_type)lc.zone);
		list_add_tail(&p->lru, &list);
	}
	/* Something on the pcp for the interrupt to take. */
	struct page *spare[4];
	for (int i = 0; i < 4; i++)
		spare[i] = alloc_pages(mm, GFP_KERNEL, 0);
	for (int i = 0; i < 4; i++)
		__free_pages(mm, spare[i], 0);
	mm_set_sched_hook(mm, list_free_hook, &lc);
	mm_set_irq_handler(mm, list_free_irq, &lc);
	lc.on = true;
	free_unref_page_list(mm, &list);
	lc.on = false;
	mm_set_sched_hook(mm, NULL, NULL);
	mm_set_irq_handler(mm, NULL, NULL);
	CHECK_MSG(lc.before_lock == N / 32, "96 pages: the pcp lock taken %lu times, expected %d", lc.before_lock,
		  N / 32);
	CHECK_MSG(lc.irqs > 0 && lc.irq_got_pcp == lc.irqs,
		  "interrupts between batches: %lu raised, %lu used the pcp", lc.irqs, lc.irq_got_pcp);
	CHECK(mm_vm_event(mm, PGALLOC) == mm_vm_event(mm, PGFREE));
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/*
 * The batch count starts again when the lock is taken for another zone
 * (6.6's free_unref_page_list()): 20 Normal pages then 20 DMA32 pages take
 * the pcp lock twice, once per zone.  Counting on across the change of
 * zone took it a third time, at the list's 33rd page.
 */
static void test_list_free_zones(void)
{
	struct mm *mm = make_list_free_mm();
	enum { N = 20 };
	LIST_HEAD_DECL(list);
	struct lock_count lc = { 0 };
	for (int i = 0; i < 2 * N; i++) {
		enum zone_type want = i < N ? ZONE_NORMAL : ZONE_DMA32;
		struct page *p = alloc_pages(mm, i < N ? GFP_KERNEL : GFP_KERNEL | __GFP_DMA32, 0);
		REQUIRE(p && page_zonenum(p) == want);
		list_add_tail(&p->lru, &list);
	}
	mm_set_sched_hook(mm, list_free_hook, &lc);
	lc.on = true;
	free_unref_page_list(mm, &list);
	lc.on = false;
	mm_set_sched_hook(mm, NULL, NULL);
	CHECK_MSG(lc.before_lock == 2, "20 Normal then 20 DMA32 pages: the pcp lock taken %lu times, expected 2",
		  lc.before_lock);
	CHECK(mm_vm_event(mm, PGALLOC) == mm_vm_event(mm, PGFREE));
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}
#endif

int main(void)
{
	test_guards_and_prepopulated();
	test_exact_heap_array();
	test_list_variant();
	test_exhaustion();
	test_bulk_equals_singles(GFP_KERNEL, ZONE_NORMAL);
	test_bulk_equals_singles(GFP_KERNEL | __GFP_DMA32, ZONE_DMA32);
	test_bulk_equals_singles(GFP_KERNEL | __GFP_DMA, ZONE_DMA);
	test_bulk_equals_singles(GFP_HIGHUSER_MOVABLE, ZONE_MOVABLE);
	test_release_bad();
	test_release_order();
#ifdef MM_TEST_HOOKS
	test_list_free_batches();
	test_list_free_zones();
#endif
	TEST_DONE();
}

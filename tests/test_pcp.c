/* SPDX-License-Identifier: MIT */
/*
 * test_pcp.c - per-cpu page lists: refill by batch, trimming above high,
 * per-order lists, local and all-CPU drains, runtime high/batch updates
 * (including high < batch, the 2020 hang's trigger), high following the
 * low watermark when min_free_kbytes or watermark_scale_factor change and
 * being split over the online vCPUs,
 * the buddy prefetch
 * option, free_factor scaling the trims without a cap (6.6), isolated pageblocks bypassing the lists (single frees, release_pages and free_unref_page_list), P1 catching a
 * corrupted count, and mm_reset() leaving each pcp as a fresh instance's.
 */
#include <string.h>

#include "internal.h"
#include "mm/cpu.h"
#include "page/pcp.h"
#include "test.h"
#include "buddy_test.h"

static struct mm *make(unsigned int high, unsigned int batch, bool prefetch)
{
	struct mm_config c;
	mm_config_default(&c);
	c.pcp_high = high;
	c.pcp_batch = batch;
	c.pcp_prefetch_buddy = prefetch;
	return test_create(&c);
}

static int pcp_count(struct mm *mm, enum zone_type z)
{
	struct mm_pcp_info info;
	REQUIRE(mm_pcp_info(mm, z, 0, &info) == 0);
	return info.count;
}

static void test_refill_and_trim(void)
{
	struct mm *mm = make(64, 8, false);
	struct zone *normal = mm_zone(mm, ZONE_NORMAL);
	long free0 = zone_free_pages(normal);
	struct free_snap s0, s1;
	free_snap_take(mm, &s0);

	/* The first allocation refills the empty list with a batch and takes one. */
	struct page *p = alloc_pages(mm, GFP_KERNEL, 0);
	REQUIRE(p);
	CHECK(pcp_count(mm, ZONE_NORMAL) == 7);
	CHECK(zone_free_pages(normal) == free0 - 8);
	CHECK(mm_vm_event(mm, PGALLOC) == 1);
	CHECK_MM(mm, 3);

	/* Freeing puts it back on the pcp, not the buddy. */
	__free_pages(mm, p, 0);
	CHECK(pcp_count(mm, ZONE_NORMAL) == 8);
	CHECK(zone_free_pages(normal) == free0 - 8);
	CHECK(mm_vm_event(mm, PGFREE) == 1);

	/* Allocate 200 and free them all: the list is trimmed whenever it reaches high. */
	struct page *pages[200];
	for (int i = 0; i < 200; i++) {
		pages[i] = alloc_pages(mm, GFP_KERNEL, 0);
		REQUIRE(pages[i]);
	}
	int max_count = 0;
	for (int i = 0; i < 200; i++) {
		__free_pages(mm, pages[i], 0);
		int c = pcp_count(mm, ZONE_NORMAL);
		if (c > max_count)
			max_count = c;
	}
	CHECK_MSG(max_count < 64, "pcp count reached %d with high 64", max_count);
	CHECK(pcp_count(mm, ZONE_NORMAL) >= 8);   /* trimming leaves at least a batch */
	CHECK_MM(mm, 3);

	/* Higher orders have their own lists; a batch is scaled down by the order. */
	struct page *o2 = alloc_pages(mm, GFP_KERNEL, 2);
	REQUIRE(o2);
	struct per_cpu_pages *pcp = &normal->per_cpu_pageset[0];
	CHECK(!list_empty(&pcp->lists[order_to_pindex(MIGRATE_UNMOVABLE, 2)]));
	__free_pages(mm, o2, 2);
	CHECK_MM(mm, 3);

	/* Drains give everything back: the buddy is exactly as at creation. */
	drain_local_pages(mm, NULL);
	CHECK(pcp_count(mm, ZONE_NORMAL) == 0);
	free_snap_take(mm, &s1);
	CHECK(memcmp(&s0, &s1, sizeof(s0)) == 0);
	CHECK(mm_vm_event(mm, PGALLOC) == mm_vm_event(mm, PGFREE));
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

static void test_drain_all_and_zones(void)
{
	struct mm *mm = make(0, 0, false);   /* derived high/batch */
	struct free_snap s0, s1;
	free_snap_take(mm, &s0);
	struct page *p[4] = {
		alloc_pages(mm, GFP_DMA, 0), alloc_pages(mm, GFP_DMA32, 0),
		alloc_pages(mm, GFP_KERNEL, 1), alloc_pages(mm, GFP_HIGHUSER_MOVABLE, 3),
	};
	unsigned int orders[4] = { 0, 0, 1, 3 };
	for (int i = 0; i < 4; i++)
		REQUIRE(p[i]);
	CHECK(page_to_pfn(mm, p[0]) < 4096);                          /* DMA */
	CHECK(page_to_pfn(mm, p[1]) >= 4096 && page_to_pfn(mm, p[1]) < 12288);
	CHECK(page_to_pfn(mm, p[3]) >= 20000);                       /* Movable */
	for (int i = 0; i < 4; i++)
		__free_pages(mm, p[i], orders[i]);
	CHECK_MM(mm, 3);
	drain_all_pages(mm, mm_zone(mm, ZONE_DMA));
	CHECK(pcp_count(mm, ZONE_DMA) == 0);
	drain_all_pages(mm, NULL);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		CHECK(pcp_count(mm, z) == 0);
	free_snap_take(mm, &s1);
	CHECK(memcmp(&s0, &s1, sizeof(s0)) == 0);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

static void test_runtime_update(void)
{
	struct mm *mm = make(256, 16, false);
	struct page *pages[300];
	for (int i = 0; i < 300; i++)
		REQUIRE((pages[i] = alloc_pages(mm, GFP_KERNEL, 0)));
	for (int i = 0; i < 150; i++)
		__free_pages(mm, pages[i], 0);
	int before = pcp_count(mm, ZONE_NORMAL);
	CHECK(before > 16);

	/* Lower high below what the list holds: the next frees trim it. */
	CHECK(mm_pcp_update(mm, 8, 2) == 0);
	struct mm_pcp_info info;
	REQUIRE(mm_pcp_info(mm, ZONE_NORMAL, 0, &info) == 0);
	CHECK(info.high == 8 && info.batch == 2);
	CHECK_MM(mm, 3);   /* P1 tolerates the list being above a freshly lowered high */
	for (int i = 150; i < 200; i++)
		__free_pages(mm, pages[i], 0);
	CHECK_MSG(pcp_count(mm, ZONE_NORMAL) < before, "count %d not trimmed (was %d)",
		  pcp_count(mm, ZONE_NORMAL), before);
	CHECK_MM(mm, 3);

	/* high < batch (the 2020 hang's trigger): frees must terminate, the list stays small. */
	CHECK(mm_pcp_update(mm, 2, 31) == 0);
	for (int i = 200; i < 300; i++)
		__free_pages(mm, pages[i], 0);
	CHECK_MM(mm, 3);
	drain_all_pages(mm, NULL);

	/* Invalid updates are refused and change nothing. */
	CHECK(mm_pcp_update(mm, 1u << 30, 1) == -1);
	CHECK(mm_set_percpu_pagelist_high_fraction(mm, 3) == -1);
	REQUIRE(mm_pcp_info(mm, ZONE_NORMAL, 0, &info) == 0);
	CHECK(info.high == 2 && info.batch == 31);
	CHECK(mm_set_percpu_pagelist_high_fraction(mm, 8) == 0);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/* The pcp high zone_highsize() gives ZONE_NORMAL with @online vCPUs: low / online, at least 4 batches. */
static int want_high(struct mm *mm, int online)
{
	struct mm_pcp_info info;
	REQUIRE(mm_pcp_info(mm, ZONE_NORMAL, 0, &info) == 0);
	long want = (long)(zone_wmark_pages(mm_zone(mm, ZONE_NORMAL), WMARK_LOW) / (unsigned long)online);
	return (int)(want < 4L * info.batch ? 4L * info.batch : want);
}

/*
 * setup_per_zone_wmarks() ends with zone_pcp_update() for every zone: the
 * pcp high comes from the low watermark (zone_highsize(): low / the online vCPUs,
 * at least 4 batches), so a new min_free_kbytes or watermark_scale_factor
 * changes it at once - not only at the next mm_reset().  A high set
 * explicitly (mm_pcp_update()) stays.
 */
static void test_high_follows_watermarks(void)
{
	struct mm *mm = make(0, 0, false);
	const struct mm_config *c = mm_get_config(mm);
	struct zone *z = mm_zone(mm, ZONE_NORMAL);
	struct mm_pcp_info info;
	int prev = -1;

	static const struct { unsigned long kbytes; unsigned int wsf; } steps[] = {
		{ 4096, 10 }, { 16384, 10 }, { 1024, 10 }, { 1024, 1000 }, { 1024, 1 },
	};
	for (unsigned int i = 0; i < ARRAY_SIZE(steps); i++) {
		REQUIRE(mm_set_min_free_kbytes(mm, steps[i].kbytes) == 0);
		REQUIRE(mm_set_watermark_scale_factor(mm, steps[i].wsf) == 0);
		REQUIRE(mm_pcp_info(mm, ZONE_NORMAL, 0, &info) == 0);
		int want = want_high(mm, (int)c->nr_cpus);
		CHECK_MSG(info.high == want, "min_free_kbytes %lu, scale %u: pcp high %d, low watermark %lu / %u cpus "
			  "gives %d", steps[i].kbytes, steps[i].wsf, info.high, zone_wmark_pages(z, WMARK_LOW),
			  c->nr_cpus, want);
		CHECK(info.high != prev);                     /* every step moves the low watermark */
		prev = info.high;
		CHECK_MM(mm, 3);
	}
	REQUIRE(mm_pcp_update(mm, 50, 5) == 0);
	REQUIRE(mm_set_min_free_kbytes(mm, 8192) == 0);
	REQUIRE(mm_pcp_info(mm, ZONE_NORMAL, 0, &info) == 0);
	CHECK(info.high == 50 && info.batch == 5);
	mm_destroy(mm);
}

/*
 * page_alloc_cpu_online()/page_alloc_cpu_dead() (CPUHP_PAGE_ALLOC in 6.6)
 * split the high over the online vCPUs: offlining one raises every pcp's
 * high, onlining it lowers it again.  A list above its lowered high is not
 * drained (P1 allows it) and its next free trims it.  A high set
 * explicitly stays whatever goes offline.
 */

static void test_high_follows_online_cpus(void)
{
	struct mm *mm = make(0, 0, false);
	const int nr = (int)mm_get_config(mm)->nr_cpus;
	struct mm_pcp_info info;
	REQUIRE(nr >= 3);

	for (int off = 0; off < nr - 1; off++) {
		if (off)
			REQUIRE(mm_cpu_offline(mm, nr - off) == 0);
		REQUIRE(mm_num_online_cpus(mm) == nr - off);
		for (int cpu = 0; cpu < nr; cpu++) {
			REQUIRE(mm_pcp_info(mm, ZONE_NORMAL, cpu, &info) == 0);
			CHECK_MSG(info.high == want_high(mm, nr - off), "%d vCPUs online: cpu %d high %d, want %d",
				  nr - off, cpu, info.high, want_high(mm, nr - off));
		}
	}
	/* One vCPU online now: fill its list above the high that all of them online would give it. */
	int low_high = want_high(mm, nr), one_high = want_high(mm, 1);
	REQUIRE(low_high + 8 < one_high);
	enum { N = 4096 };
	static struct page *pages[N];
	int n = 0;
	while (n < N && pcp_count(mm, ZONE_NORMAL) <= low_high + 4) {
		int start = n;
		for (int i = 0; i < 64 && n < N; i++, n++)
			REQUIRE((pages[n] = alloc_pages(mm, GFP_KERNEL, 0)));
		for (int i = start; i < n; i++)
			__free_pages(mm, pages[i], 0);
	}
	int filled = pcp_count(mm, ZONE_NORMAL);
	REQUIRE(filled > low_high + 4);
	for (int cpu = 1; cpu < nr; cpu++)
		REQUIRE(mm_cpu_online(mm, cpu) == 0);
	REQUIRE(mm_pcp_info(mm, ZONE_NORMAL, 0, &info) == 0);
	CHECK_MSG(info.high == low_high, "all vCPUs online again: high %d, want %d", info.high, low_high);
	CHECK(info.count == filled);            /* onlining drains nothing */
	CHECK_MM(mm, 3);
	struct page *p = alloc_pages(mm, GFP_KERNEL, 0);
	REQUIRE(p);
	__free_pages(mm, p, 0);
	CHECK_MSG(pcp_count(mm, ZONE_NORMAL) < filled, "count %d not trimmed to the new high %d (was %d)",
		  pcp_count(mm, ZONE_NORMAL), low_high, filled);
	CHECK_MM(mm, 3);
	drain_all_pages(mm, NULL);
	mm_destroy(mm);

	/* An explicit high is the same with one vCPU online as with all. */
	mm = make(50, 5, false);
	for (int cpu = 1; cpu < nr; cpu++)
		REQUIRE(mm_cpu_offline(mm, cpu) == 0);
	REQUIRE(mm_pcp_info(mm, ZONE_NORMAL, 0, &info) == 0);
	CHECK(info.high == 50 && info.batch == 5);
	mm_destroy(mm);
}

/* The prefetch option changes when pages are collected, never the result. */
static void test_prefetch_same_result(void)
{
	struct mm *a = make(32, 8, false), *b = make(32, 8, true);
	struct page *pa[500], *pb[500];
	for (int i = 0; i < 500; i++) {
		unsigned int order = (unsigned)(i % 4 == 3 ? 1 : 0);
		pa[i] = alloc_pages(a, GFP_KERNEL, order);
		pb[i] = alloc_pages(b, GFP_KERNEL, order);
		REQUIRE(pa[i] && pb[i]);
		CHECK(page_to_pfn(a, pa[i]) == page_to_pfn(b, pb[i]));
	}
	for (int i = 499; i >= 0; i -= 2) {
		unsigned int order = (unsigned)(i % 4 == 3 ? 1 : 0);
		__free_pages(a, pa[i], order);
		__free_pages(b, pb[i], order);
	}
	for (int i = 498; i >= 0; i -= 2) {
		unsigned int order = (unsigned)(i % 4 == 3 ? 1 : 0);
		__free_pages(a, pa[i], order);
		__free_pages(b, pb[i], order);
	}
	struct free_snap sa, sb;
	free_snap_take(a, &sa);
	free_snap_take(b, &sb);
	CHECK(memcmp(&sa, &sb, sizeof(sa)) == 0);
	CHECK_MM(a, 3);
	CHECK_MM(b, 3);
	mm_destroy(a);
	mm_destroy(b);
}

/*
 * The prefetch at the edges of memory: the DMA zone starts at pfn 1, whose
 * buddy (pfn 0) has no struct page, and a hole ends at 14017.  Every page of
 * DMA, DMA32 and Normal goes through the pcp lists and their trimming with
 * the prefetch on; an unvalidated prefetch touches the missing memmap (ASan).
 * GFP_KERNEL takes Normal's whole pageblocks, then DMA32, and only then the
 * small movable blocks left around the hole (ALLOC_NOFRAGMENT): the array
 * holds all three zones.
 */
static void test_prefetch_edges(void)
{
	struct mm *mm = make(16, 4, true);
	enum { MAXP = 4096 + 8192 + 8192 };
	static struct page *pages[MAXP];
	int n = 0;
	gfp_t gfps[2] = { GFP_DMA | __GFP_MEMALLOC, GFP_KERNEL | __GFP_MEMALLOC };
	for (int g = 0; g < 2; g++) {
		struct page *p;
		while (n < MAXP && (p = alloc_pages(mm, gfps[g], 0)))
			pages[n++] = p;
	}
	bool saw_first = false, saw_hole_edge = false;
	for (int i = 0; i < n; i++) {
		saw_first |= page_to_pfn(mm, pages[i]) == 1;
		saw_hole_edge |= page_to_pfn(mm, pages[i]) == 14017;
	}
	CHECK(saw_first && saw_hole_edge);
	CHECK_MM(mm, 3);
	for (int i = 0; i < n; i++)
		__free_pages(mm, pages[i], 0);
	drain_all_pages(mm, NULL);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/* Pages freed into an isolated pageblock go to the buddy's isolate list. */
static void test_isolated_bypass(void)
{
	struct mm *mm = make(64, 8, false);
	struct zone *normal = mm_zone(mm, ZONE_NORMAL);
	struct page *p = alloc_pages(mm, GFP_KERNEL, 0);
	REQUIRE(p);
	unsigned long pfn = page_to_pfn(mm, p);
	CHECK(mm_isolate_pageblock(mm, pfn) == 0);
	CHECK_MM(mm, 3);
	int before = pcp_count(mm, ZONE_NORMAL);
	long free_before = zone_free_pages(normal);
	__free_pages(mm, p, 0);
	CHECK(pcp_count(mm, ZONE_NORMAL) <= before);        /* not cached */
	CHECK(zone_free_pages(normal) == free_before);       /* isolated pages don't count as free */
	CHECK_MM(mm, 3);

	/* The list paths too (free_prepared_page_list()'s first pass): of a
	 * page of the isolated block and one outside it, release_pages() and
	 * free_unref_page_list() cache only the second; the first goes to the
	 * isolate list, and B4 finds it there at level 3, not lost. */
	for (int way = 0; way < 2; way++) {
		struct page *in = alloc_pages(mm, GFP_KERNEL, 0), *out;
		REQUIRE(in);
		/* an allocation comes from outside an isolated block: free one of
		 * ours back into it by taking the isolation off for the allocation */
		CHECK(mm_unisolate_pageblock(mm, pfn) == 0);
		__free_pages(mm, in, 0);
		drain_local_pages(mm, NULL);
		in = NULL;
		for (int i = 0; i < 64 && !in; i++) {
			struct page *q = alloc_pages(mm, GFP_KERNEL, 0);
			REQUIRE(q);
			if (page_to_pfn(mm, q) / pageblock_nr_pages(mm) == pfn / pageblock_nr_pages(mm))
				in = q;
			else
				__free_pages(mm, q, 0);
		}
		REQUIRE_MSG(in, "no page of pageblock %lu came back", pfn / pageblock_nr_pages(mm));
		CHECK(mm_isolate_pageblock(mm, pfn) == 0);
		drain_local_pages(mm, NULL);    /* as alloc_contig_range() drains after isolating */
		out = alloc_pages(mm, GFP_KERNEL, 0);
		REQUIRE(out);
		CHECK(page_to_pfn(mm, out) / pageblock_nr_pages(mm) != pfn / pageblock_nr_pages(mm));
		before = pcp_count(mm, ZONE_NORMAL);
		free_before = zone_free_pages(normal);
		if (way == 0) {
			struct page *pages[2] = { in, out };
			release_pages(mm, pages, 2);
		} else {
			LIST_HEAD_DECL(list);
			list_add(&in->lru, &list);
			list_add(&out->lru, &list);
			free_unref_page_list(mm, &list);
		}
		CHECK_MSG(pcp_count(mm, ZONE_NORMAL) == before + 1, "way %d: pcp %d -> %d", way, before,
			  pcp_count(mm, ZONE_NORMAL));
		CHECK(zone_free_pages(normal) == free_before);
		CHECK_MM(mm, 3);
	}
	CHECK(mm_unisolate_pageblock(mm, pfn) == 0);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/*
 * Freeing without allocating doubles each trim (free_factor) until a trim
 * frees all it may, high - batch: Linux 6.6 has no PCP_BATCH_SCALE_MAX
 * (6.7), so with batch 4 and high 4000 a trim frees 4, 8, ... 2048 pages,
 * not at most 4 << 5 = 128.  An allocation halves the factor again.
 */
static void test_free_factor_scaling(void)
{
	enum { N = 4400 };
	struct mm *mm = make(4000, 4, false);
	struct per_cpu_pages *pcp = &mm_zone(mm, ZONE_NORMAL)->per_cpu_pageset[0];
	static struct page *pages[N];
	int n = 0;
	while (n < N && (pages[n] = alloc_pages(mm, GFP_KERNEL | __GFP_NOWARN, 0)))
		n++;
	CHECK_MSG(n > 4300, "only %d order-0 pages", n);
	REQUIRE(n > 4300);
	CHECK(pcp->free_factor == 0);
	int largest = 0, trims = 0;
	for (int i = 0; i < n; i++) {
		int before = pcp_count(mm, ZONE_NORMAL);
		__free_pages(mm, pages[i], 0);
		int freed = before + 1 - pcp_count(mm, ZONE_NORMAL);
		if (freed > 0)
			trims++;
		if (freed > largest)
			largest = freed;
		CHECK_MSG(pcp_count(mm, ZONE_NORMAL) < 4000, "free %d left %d pages on the list", i,
			  pcp_count(mm, ZONE_NORMAL));
	}
	CHECK_MSG(largest >= 256, "the largest trim freed %d pages (capped at batch << 5?)", largest);
	CHECK_MSG(trims >= 7, "%d trims", trims);
	CHECK_MSG(pcp->free_factor > 5, "free_factor %d", pcp->free_factor);
	CHECK_MM(mm, 3);
	short ff = pcp->free_factor;
	struct page *p = alloc_pages(mm, GFP_KERNEL, 0);
	REQUIRE(p);
	CHECK(pcp->free_factor == ff >> 1);
	__free_pages(mm, p, 0);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/* The checker must see a broken pcp: a wrong count and a page of another zone. */
static void test_p1_detects(void)
{
	struct mm *mm = make(64, 8, false);
	struct page *p = alloc_pages(mm, GFP_KERNEL, 0);
	REQUIRE(p);
	struct per_cpu_pages *pcp = &mm_zone(mm, ZONE_NORMAL)->per_cpu_pageset[0];
	struct mm_violation v;
	pcp->count += 1;
	CHECK(!mm_check(mm, 2, &v) && v.inv == MM_INV_P1);
	pcp->count -= 1;
	CHECK_MM(mm, 3);

	/* Move one pcp page to the DMA zone's pcp list: wrong zone. */
	struct per_cpu_pages *dma = &mm_zone(mm, ZONE_DMA)->per_cpu_pageset[0];
	struct list_head *l = &pcp->lists[order_to_pindex(MIGRATE_UNMOVABLE, 0)];
	REQUIRE(!list_empty(l));
	struct page *q = list_first_entry(l, struct page, lru);
	list_move(&q->lru, &dma->lists[order_to_pindex(MIGRATE_UNMOVABLE, 0)]);
	pcp->count--;
	dma->count++;
	CHECK(!mm_check(mm, 2, &v) && v.inv == MM_INV_P1);
	list_move(&q->lru, l);
	pcp->count++;
	dma->count--;
	CHECK_MM(mm, 3);
	__free_pages(mm, p, 0);
	mm_destroy(mm);
}

/*
 * The boundary of nr_pcp_free()'s clamp: high exactly twice batch is the
 * kernel's case (min_nr_free == max_nr_free == batch), not the "high <
 * 2 * batch" fallback that trims to just under high.  So with high 16,
 * batch 8, a list that reaches 16 is trimmed by a whole batch, to 8 -
 * every time, since a trim of high - batch keeps free_factor at 0.
 */
static void test_trim_at_twice_batch(void)
{
	struct mm *mm = make(0, 0, false);
	enum { N = 40 };
	struct page *pages[N];

	REQUIRE(mm_pcp_update(mm, 16, 8) == 0);
	for (int i = 0; i < N; i++)
		REQUIRE((pages[i] = alloc_pages(mm, GFP_KERNEL, 0)));
	drain_all_pages(mm, NULL);
	REQUIRE(pcp_count(mm, ZONE_NORMAL) == 0);
	for (int i = 0; i < N; i++) {
		__free_pages(mm, pages[i], 0);
		int n = i + 1, want = n < 16 ? n : 8 + (n - 16) % 8;
		CHECK_MSG(pcp_count(mm, ZONE_NORMAL) == want, "high 16, batch 8: after %d frees the list holds %d, want %d",
			  n, pcp_count(mm, ZONE_NORMAL), want);
	}
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/*
 * mm_reset() leaves every pcp as mm_create() does - the checker's
 * bookkeeping too: high_seen and batch_seen, the largest high and batch
 * since the lists last fell under high, which widen P1's bound.  A stale
 * one after a reset would leave the next input a looser P1 than a fresh
 * instance gives it (and a different level-2 signature).  Here an input
 * raised high and batch and filled the lists; after the reset each field
 * must match a fresh instance's.
 */
static void test_reset_like_fresh(void)
{
	struct mm *mm = make(0, 0, false), *fresh = make(0, 0, false);
	enum { N = 600 };
	static struct page *pages[N];

	REQUIRE(mm_pcp_update(mm, 1000, 100) == 0);
	for (int i = 0; i < N; i++)
		REQUIRE((pages[i] = alloc_pages(mm, GFP_KERNEL, 0)));
	for (int i = 0; i < N; i++)
		__free_pages(mm, pages[i], 0);
	CHECK(pcp_count(mm, ZONE_NORMAL) > 64);
	REQUIRE(mm_reset(mm) == 0);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *za = mm_zone(mm, (enum zone_type)z), *zf = mm_zone(fresh, (enum zone_type)z);
		if (!za->per_cpu_pageset)
			continue;
		for (unsigned int cpu = 0; cpu < mm_get_config(mm)->nr_cpus; cpu++) {
			struct per_cpu_pages *a = per_cpu_ptr(za->per_cpu_pageset, cpu);
			struct per_cpu_pages *f = per_cpu_ptr(zf->per_cpu_pageset, cpu);
			CHECK_MSG(a->count == f->count && a->free_factor == f->free_factor &&
					  atomic_load(&a->high) == atomic_load(&f->high) &&
					  atomic_load(&a->batch) == atomic_load(&f->batch),
				  "zone %d cpu %u after mm_reset: count %d high %d batch %d free_factor %d; fresh %d %d %d %d", z,
				  cpu, a->count, atomic_load(&a->high), atomic_load(&a->batch), a->free_factor, f->count,
				  atomic_load(&f->high), atomic_load(&f->batch), f->free_factor);
			CHECK_MSG(a->high_seen == f->high_seen && a->batch_seen == f->batch_seen,
				  "zone %d cpu %u after mm_reset: high_seen %d batch_seen %d, fresh %d %d", z, cpu,
				  a->high_seen, a->batch_seen, f->high_seen, f->batch_seen);
		}
	}
	CHECK_MM(mm, 3);
	mm_destroy(mm);
	mm_destroy(fresh);
}

int main(void)
{
	test_refill_and_trim();
	test_drain_all_and_zones();
	test_runtime_update();
	test_high_follows_watermarks();
	test_high_follows_online_cpus();
	test_prefetch_same_result();
	test_prefetch_edges();
	test_isolated_bypass();
	test_free_factor_scaling();
	test_p1_detects();
	test_reset_like_fresh();
	test_trim_at_twice_batch();
	TEST_DONE();
}

/* SPDX-License-Identifier: MIT */
/*
 * test_config_shapes.c - odd machines: holes (at a zone's first and last
 * pfn, straddling pageblock and MAX_ORDER boundaries, a whole zone), zone
 * spans not aligned to anything, zones of one to three pages, a first pfn
 * of 1<<20 + 3, missing zones, max_order 0 and MM_MAX_ORDER_LIMIT.
 *
 * For each machine and each order o: allocate order-o blocks zone by zone
 * (GFP_DMA, then GFP_DMA32, GFP_KERNEL, GFP_HIGHUSER_MOVABLE, each with
 * __GFP_MEMALLOC so no watermark holds pages back) until the allocator
 * says no.  The number obtained per zone must equal the number of
 * naturally aligned o-blocks made only of that zone's valid pfns -
 * computed here from the config alone.  Then fill what is left with
 * smaller orders (every valid pfn ends up allocated), free everything in a
 * random order, and the buddy allocator must be back at its creation
 * state.  Every block is checked against the config (alignment, zone,
 * holes, overlap) and the checker runs after every allocation and free
 * (level 2; on the one large machine every 8th operation, level 1 always)
 * and exhaustively (level 3) at each checkpoint.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "page/pcp.h"
#include "test.h"
#include "buddy_test.h"

#define MEMALLOC (__GFP_MEMALLOC | __GFP_NORETRY)

static uint64_t rng_state = 0x2006;
static uint64_t rnd(void) { return test_splitmix64(&rng_state); }

/* Naturally aligned order-@o blocks whose every pfn is a valid pfn of zone @z. */
static unsigned long cfg_blocks(const struct mm_config *c, int z, unsigned int o)
{
	const struct mm_span *s = &c->zones[z];
	unsigned long n = 0, nr = 1UL << o;
	for (unsigned long pfn = s->start_pfn & ~(nr - 1); pfn < s->end_pfn; pfn += nr) {
		bool ok = true;
		for (unsigned long i = 0; ok && i < nr; i++)
			ok = cfg_zone_of(c, pfn + i) == z;
		n += ok;
	}
	return n;
}

static unsigned long cfg_pages(const struct mm_config *c)
{
	unsigned long n = 0;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		n += cfg_blocks(c, z, 0);
	return n;
}

struct block {
	struct page *page;
	unsigned int order;
};

struct world {
	struct mm *mm;
	const struct mm_config *c;
	unsigned char *owned;
	struct block *live;
	unsigned long nr_live, live_pages;
	int check2_every;
	unsigned long ops;
	const char *name;
};

static void after_op(struct world *w)
{
	w->ops++;
	CHECK_MM(w->mm, 1);
	if (w->ops % (unsigned long)w->check2_every == 0)
		CHECK_MM(w->mm, 2);
}

/* Allocate; check the block against the config; NULL when the allocator says no. */
static struct page *alloc_checked(struct world *w, gfp_t gfp, unsigned int order, int want_zone_max,
				  int want_zone_min)
{
	struct mm *mm = w->mm;
	struct page *page = alloc_pages(mm, gfp, order);
	after_op(w);
	if (!page)
		return NULL;
	unsigned long pfn = page_to_pfn(mm, page), nr = 1UL << order;
	int z = cfg_zone_of(w->c, pfn);
	bool ok = !(pfn & (nr - 1)) && pfn >= mm_first_pfn(mm) && pfn + nr <= mm_end_pfn(mm) &&
		  z >= want_zone_min && z <= want_zone_max;
	for (unsigned long i = 0; ok && i < nr; i++)
		ok = cfg_zone_of(w->c, pfn + i) == z && !w->owned[pfn + i - mm_first_pfn(mm)];
	CHECK_MSG(ok, "%s: order-%u block at pfn %#lx (gfp %#x): misaligned, in a hole, outside zones %d..%d "
		  "or overlapping a live block", w->name, order, pfn, gfp, want_zone_min, want_zone_max);
	if (!ok)
		return page;   /* leaked on purpose: the state is already wrong */
	memset(&w->owned[pfn - mm_first_pfn(mm)], 1, nr);
	/* Real memory, every page of it. */
	for (unsigned long i = 0; i < nr; i++)
		((volatile char *)page_address(mm, page))[i * MM_PAGE_SIZE] = (char)i;
	w->live[w->nr_live++] = (struct block){ page, order };
	w->live_pages += nr;
	return page;
}

static void free_all_random(struct world *w)
{
	while (w->nr_live) {
		unsigned long i = (unsigned long)(rnd() % w->nr_live);
		struct block b = w->live[i];
		unsigned long pfn = page_to_pfn(w->mm, b.page);
		memset(&w->owned[pfn - mm_first_pfn(w->mm)], 0, 1UL << b.order);
		w->live[i] = w->live[--w->nr_live];
		w->live_pages -= 1UL << b.order;
		__free_pages(w->mm, b.page, b.order);
		after_op(w);
	}
}

/* The gfp whose highest zone is @z (the zonelist then falls back below it). */
static gfp_t zone_gfp(int z)
{
	static const gfp_t g[MAX_NR_ZONES] = { GFP_KERNEL | __GFP_DMA, GFP_KERNEL | __GFP_DMA32, GFP_KERNEL,
					       GFP_HIGHUSER_MOVABLE };
	return g[z] | MEMALLOC;
}

static void run_machine(const char *name, const struct mm_config *cfg, int check2_every)
{
	char err[256];
	struct mm_config c = *cfg;
	c.quiet = true;
	struct mm *mm = mm_create(&c, err, sizeof(err));
	CHECK(mm_config_validate(&c, NULL, 0) == 0);
	CHECK_MSG(mm != NULL, "%s: mm_create: %s", name, err);
	if (!mm)
		return;
	printf("%s: %lu pages in [%#lx, %#lx), max_order %u\n", name, mm_nr_valid_pages(mm), mm_first_pfn(mm),
	       mm_end_pfn(mm), c.max_order);
	CHECK_MSG(mm_nr_valid_pages(mm) == cfg_pages(&c), "%s: %lu valid pages, the config has %lu", name,
		  mm_nr_valid_pages(mm), cfg_pages(&c));
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = mm_zone(mm, z);
		unsigned long present = cfg_blocks(&c, z, 0);
		CHECK_MSG(present ? zone && zone_managed_pages(zone) == present : zone == NULL,
			  "%s: zone %d: managed pages do not match the config's %lu", name, z, present);
	}
	/* pfn_valid and pfn_to_page agree with the config at every pfn, and a little beyond. */
	for (unsigned long pfn = mm_first_pfn(mm) ? mm_first_pfn(mm) - 1 : 0; pfn < mm_end_pfn(mm) + 2; pfn++) {
		bool v = cfg_zone_of(&c, pfn) >= 0;
		CHECK_MSG(pfn_valid(mm, pfn) == v, "%s: pfn_valid(%#lx) = %d", name, pfn, !v);
		CHECK(v ? pfn_to_page(mm, pfn) != NULL && page_to_pfn(mm, pfn_to_page(mm, pfn)) == pfn
			: pfn_to_page(mm, pfn) == NULL);
	}

	struct free_snap s0, s1;
	free_snap_take(mm, &s0);
	CHECK_MM(mm, 3);

	struct world w = {
		.mm = mm, .c = mm_get_config(mm), .check2_every = check2_every, .name = name,
		.owned = calloc(mm_end_pfn(mm) - mm_first_pfn(mm), 1),
		.live = calloc(mm_nr_valid_pages(mm), sizeof(struct block)),
	};
	REQUIRE(w.owned && w.live);

	for (unsigned int order = 0; order <= c.max_order; order++) {
		/* Zone by zone from the bottom: each gfp reaches one more zone, the lower ones are full. */
		for (int z = 0; z < MAX_NR_ZONES; z++) {
			unsigned long n = 0, expect = cfg_blocks(&c, z, order);
			while (alloc_checked(&w, zone_gfp(z), order, z, z))
				n++;
			CHECK_MSG(n == expect, "%s: zone %d: %lu order-%u blocks allocated, the config has %lu", name, z,
				  n, order, expect);
		}
		/* What is left is smaller than @order: take it too. */
		for (int o = (int)order - 1; o >= 0; o--)
			while (alloc_checked(&w, zone_gfp(ZONE_MOVABLE), (unsigned int)o, ZONE_MOVABLE, 0))
				;
		CHECK_MSG(w.live_pages == mm_nr_valid_pages(mm), "%s: order %u: %lu of %lu pages allocated", name,
			  order, w.live_pages, mm_nr_valid_pages(mm));
		for (int z = 0; z < MAX_NR_ZONES; z++)
			if (mm_zone(mm, z))
				CHECK(zone_free_pages(mm_zone(mm, z)) == 0);
		CHECK_MM(mm, 3);

		free_all_random(&w);
		drain_all_pages(mm, NULL);
		CHECK_MM(mm, 3);
		free_snap_take(mm, &s1);
		CHECK_MSG(memcmp(&s0, &s1, sizeof(s0)) == 0, "%s: order %u: free lists differ from creation", name,
			  order);
	}

	/* Orders the machine cannot give, and gfps whose zones are all missing. */
	CHECK(alloc_pages(mm, GFP_KERNEL | MEMALLOC | __GFP_NOWARN, c.max_order + 1) == NULL);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		bool any = false;
		for (int y = 0; y <= z; y++)
			any |= mm_zone(mm, y) != NULL;
		if (!any) {
			struct page *p = alloc_pages(mm, zone_gfp(z), 0);
			CHECK_MSG(p == NULL, "%s: gfp for zone %d allocated from a zone above it", name, z);
		}
	}
	free_snap_take(mm, &s1);
	CHECK(memcmp(&s0, &s1, sizeof(s0)) == 0);
	CHECK_MM(mm, 3);
	CHECK(mm_nr_reports(mm) == 0);
	free(w.owned);
	free(w.live);
	mm_destroy(mm);
}

static void base(struct mm_config *c, unsigned int max_order, unsigned int pb)
{
	mm_config_default(c);
	memset(c->zones, 0, sizeof(c->zones));
	c->nr_holes = 0;
	c->nr_cpus = 2;
	c->max_order = max_order;
	c->pageblock_order = pb;
}

int main(void)
{
	struct mm_config c;

	/* Holes at a zone's first and last pfn, across pageblock and MAX_ORDER boundaries. */
	base(&c, 8, 6);
	c.zones[ZONE_NORMAL] = (struct mm_span){ 0, 1300 };
	c.nr_holes = 5;
	c.holes[0] = (struct mm_span){ 0, 1 };
	c.holes[1] = (struct mm_span){ 255, 257 };
	c.holes[2] = (struct mm_span){ 700, 800 };
	c.holes[3] = (struct mm_span){ 1024, 1025 };
	c.holes[4] = (struct mm_span){ 1290, 1300 };
	run_machine("holes", &c, 1);

	/* Every zone boundary unaligned, first pfn odd. */
	base(&c, 7, 5);
	c.zones[ZONE_DMA] = (struct mm_span){ 3, 300 };
	c.zones[ZONE_DMA32] = (struct mm_span){ 300, 513 };
	c.zones[ZONE_NORMAL] = (struct mm_span){ 513, 900 };
	c.zones[ZONE_MOVABLE] = (struct mm_span){ 900, 1277 };
	c.nr_holes = 1;
	c.holes[0] = (struct mm_span){ 600, 601 };
	run_machine("unaligned", &c, 1);

	/* Tiny zones: three pages, one page, two pages. */
	base(&c, 6, 3);
	c.zones[ZONE_DMA] = (struct mm_span){ 5, 8 };
	c.zones[ZONE_DMA32] = (struct mm_span){ 8, 9 };
	c.zones[ZONE_NORMAL] = (struct mm_span){ 9, 800 };
	c.zones[ZONE_MOVABLE] = (struct mm_span){ 800, 802 };
	run_machine("tiny zones", &c, 1);

	/* A large, odd first pfn; DMA missing; a hole at the very first pfn. */
	base(&c, 9, 9);
	unsigned long b = (1UL << 20) + 3;
	c.zones[ZONE_DMA32] = (struct mm_span){ b, b + 500 };
	c.zones[ZONE_NORMAL] = (struct mm_span){ b + 500, b + 1000 };
	c.zones[ZONE_MOVABLE] = (struct mm_span){ b + 1000, b + 1300 };
	c.nr_holes = 2;
	c.holes[0] = (struct mm_span){ b, b + 2 };
	c.holes[1] = (struct mm_span){ b + 505, b + 530 };   /* across the (1 << 20) + 512 boundary */
	run_machine("far first pfn", &c, 1);

	/* Zones missing: only Movable (GFP_KERNEL has nowhere to go). */
	base(&c, 10, 9);
	c.zones[ZONE_MOVABLE] = (struct mm_span){ 100, 1100 };
	run_machine("only movable", &c, 1);

	/* DMA32 missing between DMA and Normal; a zone whose span is one hole. */
	base(&c, 5, 4);
	c.zones[ZONE_DMA] = (struct mm_span){ 1, 400 };
	c.zones[ZONE_NORMAL] = (struct mm_span){ 400, 1000 };
	c.zones[ZONE_MOVABLE] = (struct mm_span){ 1000, 1100 };
	c.nr_holes = 1;
	c.holes[0] = (struct mm_span){ 1000, 1100 };
	run_machine("missing and empty zones", &c, 1);

	/* max_order 0: no merging at all. */
	base(&c, 0, 0);
	c.zones[ZONE_DMA32] = (struct mm_span){ 10, 400 };
	c.zones[ZONE_NORMAL] = (struct mm_span){ 400, 900 };
	c.nr_holes = 1;
	c.holes[0] = (struct mm_span){ 500, 510 };
	run_machine("max_order 0", &c, 1);

	/* The largest max_order, one order-12 block and change. */
	base(&c, MM_MAX_ORDER_LIMIT, MM_MAX_ORDER_LIMIT - 1);
	c.zones[ZONE_NORMAL] = (struct mm_span){ 4096, 4096 + 4096 + 901 };
	c.nr_holes = 1;
	c.holes[0] = (struct mm_span){ 8192 + 900, 8192 + 901 };
	run_machine("max_order limit", &c, 8);

	TEST_DONE();
}

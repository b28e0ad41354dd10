/* SPDX-License-Identifier: MIT */
/*
 * test_buddy_fill.c - fill and drain: allocate every page of the machine,
 * free everything in a random (seeded) order, and the buddy allocator must
 * be exactly where mm_create() left it - per zone, per order nr_free,
 * NR_FREE_PAGES and the text of /proc/buddyinfo.  First with order-0
 * pages, then with random mixed orders and migratetypes.
 *
 * Reaching "all memory": an ordinary allocation stops at the min watermark
 * plus the lowmem_reserve of the zones below the preferred one - those
 * pages are held back on purpose.  __GFP_MEMALLOC is the emergency reserve
 * (ALLOC_NO_WATERMARKS: neither min nor lowmem_reserve applies), so with it
 * every free page can be taken.  GFP_HIGHUSER_MOVABLE makes ZONE_MOVABLE
 * the preferred zone, so the zonelist walk covers every zone (a GFP_KERNEL
 * request can never use ZONE_MOVABLE).  __GFP_NORETRY keeps the final,
 * failing call from looping in reclaim; no allocation has
 * ALLOC_HIGHATOMIC (all may direct-reclaim), so no pageblock gets reserved
 * and the initial state is reachable again.
 *
 * Every block handed out is checked against the configuration itself (not
 * the allocator's own pfn_valid): aligned to its order, every pfn inside
 * one zone's span and not in a hole, disjoint from every other live block.
 *
 * MM_TEST_SEED=<n> in the environment changes the seed.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "page/pcp.h"
#include "test.h"
#include "buddy_test.h"

#define FILL_GFP (GFP_HIGHUSER_MOVABLE | __GFP_MEMALLOC | __GFP_NORETRY)

/* ---- seeded PRNG (splitmix64) ---- */
static uint64_t rng_state;
static uint64_t rnd(void) { return test_splitmix64(&rng_state); }
static unsigned long rnd_below(unsigned long n) { return n ? (unsigned long)(rnd() % n) : 0; }

/* ---- the configuration's own view of memory ---- */

static unsigned long cfg_pages(const struct mm_config *c, int max_zone)
{
	unsigned long n = 0;
	for (int z = 0; z <= max_zone; z++)
		for (unsigned long pfn = c->zones[z].start_pfn; pfn < c->zones[z].end_pfn; pfn++)
			n += cfg_zone_of(c, pfn) == z;
	return n;
}

/* ---- snapshots of the buddy allocator ---- */

struct snap {
	struct free_snap f;             /* buddy_test.h */
	char *buddyinfo;
	char *pagetypeinfo;
};

static void snap_take(struct mm *mm, struct snap *s)
{
	free_snap_take(mm, &s->f);
	s->buddyinfo = test_dump(mm, mm_dump_buddyinfo);
	s->pagetypeinfo = test_dump(mm, mm_dump_pagetypeinfo);
}

static void snap_free(struct snap *s)
{
	free(s->buddyinfo);
	free(s->pagetypeinfo);
}

/* Compare per zone per order; returns the number of differences. */
static int snap_compare(const char *what, const struct snap *a, const struct snap *b, bool pagetypes)
{
	int diffs = 0;
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		CHECK_MSG(a->f.free[z] == b->f.free[z], "%s: zone %d NR_FREE_PAGES %ld, at creation %ld", what, z,
			  b->f.free[z], a->f.free[z]);
		diffs += a->f.free[z] != b->f.free[z];
		for (unsigned int o = 0; o < MM_NR_ORDERS_LIMIT; o++) {
			CHECK_MSG(a->f.nr_free[z][o] == b->f.nr_free[z][o], "%s: zone %d order %u nr_free %lu, at creation %lu",
				  what, z, o, b->f.nr_free[z][o], a->f.nr_free[z][o]);
			diffs += a->f.nr_free[z][o] != b->f.nr_free[z][o];
		}
	}
	CHECK_MSG(strcmp(a->buddyinfo, b->buddyinfo) == 0, "%s: buddyinfo differs:\n%s---- at creation:\n%s", what,
		  b->buddyinfo, a->buddyinfo);
	if (pagetypes)
		CHECK_MSG(strcmp(a->pagetypeinfo, b->pagetypeinfo) == 0,
			  "%s: pagetypeinfo differs:\n%s---- at creation:\n%s", what, b->pagetypeinfo, a->pagetypeinfo);
	return diffs;
}

/* ---- live allocations, checked against the config ---- */

struct block {
	struct page *page;
	unsigned int order;
};

struct world {
	struct mm *mm;
	const struct mm_config *c;
	unsigned char *owned;       /* per pfn of [first, end): 1 while a live block covers it */
	struct block *live;
	unsigned long nr_live, cap;
	unsigned long live_pages;
	int check2_every;           /* mm_check level 2 after every Nth op */
	unsigned long ops;
};

static void world_init(struct world *w, struct mm *mm, int check2_every)
{
	memset(w, 0, sizeof(*w));
	w->mm = mm;
	w->c = mm_get_config(mm);
	w->owned = calloc(mm_end_pfn(mm) - mm_first_pfn(mm), 1);
	w->cap = mm_nr_valid_pages(mm) + 1;
	w->live = calloc(w->cap, sizeof(*w->live));
	w->check2_every = check2_every;
	REQUIRE(w->owned && w->live);
}

static void world_fini(struct world *w)
{
	free(w->owned);
	free(w->live);
}

static void after_op(struct world *w)
{
	w->ops++;
	CHECK_MM(w->mm, 1);
	if (w->ops % (unsigned long)w->check2_every == 0)
		CHECK_MM(w->mm, 2);
}

/*
 * The block must be aligned, lie in one zone the gfp allows, avoid holes
 * and overlap nothing live - all judged by the config.
 */
static bool block_ok(struct world *w, struct page *page, unsigned int order, int max_zone)
{
	unsigned long pfn = page_to_pfn(w->mm, page), nr = 1UL << order;
	if (pfn < mm_first_pfn(w->mm) || pfn + nr > mm_end_pfn(w->mm) || (pfn & (nr - 1))) {
		CHECK_MSG(0, "order-%u block at pfn %#lx: outside memory or misaligned", order, pfn);
		return false;
	}
	int z = cfg_zone_of(w->c, pfn);
	for (unsigned long i = 0; i < nr; i++) {
		int zi = cfg_zone_of(w->c, pfn + i);
		if (zi < 0 || zi != z || zi > max_zone || w->owned[pfn + i - mm_first_pfn(w->mm)]) {
			CHECK_MSG(0, "order-%u block at pfn %#lx: pfn %#lx is %s", order, pfn, pfn + i,
				  zi < 0 ? "a hole or outside every zone" : zi != z ? "in another zone" :
				  zi > max_zone ? "in a zone the gfp does not allow" : "already allocated");
			return false;
		}
	}
	return true;
}

static bool world_alloc(struct world *w, gfp_t gfp, unsigned int order, int max_zone)
{
	struct page *page = alloc_pages(w->mm, gfp, order);
	after_op(w);
	if (!page)
		return false;
	if (!block_ok(w, page, order, max_zone)) {
		__free_pages(w->mm, page, order);
		return true;
	}
	unsigned long pfn = page_to_pfn(w->mm, page);
	memset(&w->owned[pfn - mm_first_pfn(w->mm)], 1, 1UL << order);
	/* Real memory: the first and last byte of the block are writable. */
	unsigned char *va = page_address(w->mm, page);
	va[0] = 0x5a;
	va[(MM_PAGE_SIZE << order) - 1] = 0xa5;
	REQUIRE(w->nr_live < w->cap);
	w->live[w->nr_live++] = (struct block){ page, order };
	w->live_pages += 1UL << order;
	return true;
}

static void world_free_at(struct world *w, unsigned long i)
{
	struct block b = w->live[i];
	unsigned long pfn = page_to_pfn(w->mm, b.page);
	unsigned char *va = page_address(w->mm, b.page);
	CHECK(va[0] == 0x5a && va[(MM_PAGE_SIZE << b.order) - 1] == 0xa5);
	memset(&w->owned[pfn - mm_first_pfn(w->mm)], 0, 1UL << b.order);
	w->live[i] = w->live[--w->nr_live];
	w->live_pages -= 1UL << b.order;
	__free_pages(w->mm, b.page, b.order);
	after_op(w);
}

static void world_free_all_random(struct world *w)
{
	while (w->nr_live)
		world_free_at(w, rnd_below(w->nr_live));
}

/* ---- the tests ---- */

/* How many pageblocks of the zones up to @max_zone have type @mt. */
static unsigned long blocks_of_type(struct mm *mm, int max_zone, int mt)
{
	unsigned long n = 0;
	for (int z = 0; z <= max_zone; z++) {
		struct zone *zone = mm_zone(mm, z);
		if (!zone)
			continue;
		unsigned long pb = pageblock_nr_pages(mm);
		for (unsigned long b = zone->zone_start_pfn & ~(pb - 1); b < zone_end_pfn(zone); b += pb) {
			unsigned long pfn = memmap_next_valid(mm, MAX(b, zone->zone_start_pfn), MIN(b + pb, zone_end_pfn(zone)));
			n += pfn < MIN(b + pb, zone_end_pfn(zone)) &&
			     get_pfnblock_migratetype(mm, __pfn_to_page(mm, pfn), pfn) == mt;
		}
	}
	return n;
}

/*
 * Order-0 fill with @gfp (whose highest zone is @max_zone), random drain.
 * Movable requests keep a movable pageblock movable, and claim the
 * pageblocks that start unmovable (their first pfn is not memory: mm.c,
 * pageblock_set_boot_types()) when they steal from them, as 6.6's
 * steal_suitable_fallback() does with more than half of the block free.
 * So pagetypeinfo must come back too where no pageblock started
 * unmovable, and where some did, every pageblock ends movable.
 * Unmovable requests steal pageblocks, which stay stolen.
 */
static void fill_order0(struct mm *mm, gfp_t gfp, int max_zone, int check2_every, const char *name)
{
	const struct mm_config *c = mm_get_config(mm);
	struct snap s0, s1;
	struct world w;
	bool movable = (gfp & __GFP_MOVABLE) != 0;

	mm_reset(mm);
	snap_take(mm, &s0);
	world_init(&w, mm, check2_every);
	CHECK_MM(mm, 3);
	unsigned long boot_unmovable = blocks_of_type(mm, max_zone, MIGRATE_UNMOVABLE);

	while (world_alloc(&w, gfp, 0, max_zone))
		;
	/* Everything the gfp can reach, and nothing else, is now allocated. */
	CHECK_MSG(w.live_pages == cfg_pages(c, max_zone), "%s: allocated %lu pages, the config has %lu",
		  name, w.live_pages, cfg_pages(c, max_zone));
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = mm_zone(mm, z);
		if (!zone)
			continue;
		long expect = z <= max_zone ? 0 : s0.f.free[z];
		CHECK_MSG(zone_free_pages(zone) == expect, "%s: zone %d has %ld free pages, expected %ld", name, z,
			  zone_free_pages(zone), expect);
		if (z <= max_zone)
			for (unsigned int o = 0; o <= c->max_order; o++)
				CHECK(zone_nr_free(zone, o) == 0);
	}
	CHECK(mm_vm_event(mm, PGALLOC) == w.live_pages);
	CHECK(mm_vm_event(mm, ALLOCFAIL) == 1);
	CHECK(alloc_pages(mm, gfp, 0) == NULL);
	CHECK_MM(mm, 3);

	world_free_all_random(&w);
	drain_all_pages(mm, NULL);
	CHECK_MM(mm, 3);
	snap_take(mm, &s1);
	snap_compare(name, &s0, &s1, movable && !boot_unmovable);
	if (movable && boot_unmovable)
		CHECK_MSG(blocks_of_type(mm, max_zone, MIGRATE_UNMOVABLE) == 0,
			  "%s: %lu pageblocks started unmovable, %lu still are after the movable fill", name,
			  boot_unmovable, blocks_of_type(mm, max_zone, MIGRATE_UNMOVABLE));
	CHECK(mm_vm_event(mm, PGFREE) == mm_vm_event(mm, PGALLOC));
	snap_free(&s0);
	snap_free(&s1);
	world_fini(&w);
}

static gfp_t random_gfp(void)
{
	static const gfp_t g[] = {
		GFP_HIGHUSER_MOVABLE, GFP_KERNEL, GFP_KERNEL | __GFP_RECLAIMABLE, GFP_KERNEL | __GFP_DMA32,
		GFP_KERNEL | __GFP_DMA, GFP_HIGHUSER_MOVABLE | __GFP_COMP, GFP_KERNEL | __GFP_COMP | __GFP_ZERO,
	};
	return g[rnd_below(ARRAY_SIZE(g))] | __GFP_MEMALLOC | __GFP_NORETRY;
}

static unsigned int random_order(unsigned int max_order)
{
	/* Small orders are common; every order up to max_order happens. */
	unsigned int o = (unsigned int)rnd_below(4) ? (unsigned int)rnd_below(4) : (unsigned int)rnd_below(max_order + 1);
	return MIN(o, max_order);
}

/*
 * Random mixed orders and migratetypes: a random phase of allocations and
 * frees, then a fill to exhaustion from max_order down to 0 (every page is
 * then allocated), then a random drain.  Stolen pageblocks keep their new
 * type, so only buddyinfo (not pagetypeinfo) must return.
 */
static void fill_mixed(struct mm *mm, int check2_every, unsigned long nr_random_ops, const char *name)
{
	const struct mm_config *c = mm_get_config(mm);
	struct snap s0, s1;
	struct world w;

	mm_reset(mm);
	snap_take(mm, &s0);
	world_init(&w, mm, check2_every);

	for (unsigned long i = 0; i < nr_random_ops; i++) {
		if (w.nr_live && rnd_below(100) < 35) {
			world_free_at(&w, rnd_below(w.nr_live));
		} else {
			gfp_t gfp = random_gfp();
			world_alloc(&w, gfp, random_order(c->max_order), gfp_zone(gfp));
		}
	}
	CHECK_MM(mm, 3);

	/*
	 * The random frees left pages on pcp lists - other vCPUs', other
	 * types' - that no allocation of the fill may take, and with nothing
	 * to reclaim the slow path drains nothing (the kernel's
	 * __alloc_pages_direct_reclaim() retries and drains only after
	 * progress): drain them first, as a caller that wants every page must.
	 */
	drain_all_pages(mm, NULL);
	for (int o = (int)c->max_order; o >= 0; o--)
		while (world_alloc(&w, FILL_GFP, (unsigned int)o, ZONE_MOVABLE))
			;
	CHECK_MSG(w.live_pages == cfg_pages(c, ZONE_MOVABLE), "%s: allocated %lu pages, the config has %lu", name,
		  w.live_pages, cfg_pages(c, ZONE_MOVABLE));
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (mm_zone(mm, z))
			CHECK(zone_free_pages(mm_zone(mm, z)) == 0);
	CHECK_MM(mm, 3);

	world_free_all_random(&w);
	drain_all_pages(mm, NULL);
	CHECK_MM(mm, 3);
	snap_take(mm, &s1);
	snap_compare(name, &s0, &s1, false);
	CHECK(mm_vm_event(mm, PGFREE) == mm_vm_event(mm, PGALLOC));
	snap_free(&s0);
	snap_free(&s1);
	world_fini(&w);
}

/* A machine whose first pfn is large and odd, with holes at awkward places. */
static void config_far(struct mm_config *c)
{
	mm_config_default(c);
	c->nr_cpus = 2;
	c->max_order = 10;
	c->pageblock_order = 9;
	unsigned long b = (1UL << 20) + 3;
	c->zones[ZONE_DMA] = (struct mm_span){ 0, 0 };
	c->zones[ZONE_DMA32] = (struct mm_span){ b, b + 3000 };
	c->zones[ZONE_NORMAL] = (struct mm_span){ b + 3000, b + 7001 };
	c->zones[ZONE_MOVABLE] = (struct mm_span){ b + 7001, b + 9000 };
	c->nr_holes = 3;
	c->holes[0] = (struct mm_span){ b, b + 5 };               /* at the first pfn */
	c->holes[1] = (struct mm_span){ b + 4093, b + 4094 };     /* one page, mid-block */
	c->holes[2] = (struct mm_span){ b + 8990, b + 9000 };     /* at the last pfn */
}

int main(void)
{
	const char *seed_env = getenv("MM_TEST_SEED");
	uint64_t seed = seed_env ? strtoull(seed_env, NULL, 0) : 20081210;
	printf("test_buddy_fill: seed %llu (MM_TEST_SEED)\n", (unsigned long long)seed);

	struct {
		const char *name;
		void (*make)(struct mm_config *);
		int check2_every;
		unsigned long random_ops;
	} cases[] = {
		{ "tiny", mm_config_tiny, 1, 3000 },
		{ "default", mm_config_default, 61, 6000 },
		{ "far", config_far, 17, 4000 },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
		struct mm_config c;
		char err[256];
		cases[i].make(&c);
		c.quiet = true;
		struct mm *mm = mm_create(&c, err, sizeof(err));
		if (!mm)
			fprintf(stderr, "%s: mm_create: %s\n", cases[i].name, err);
		REQUIRE(mm);
		rng_state = seed + i;
		char name[64];

		snprintf(name, sizeof(name), "%s order-0 movable", cases[i].name);
		fill_order0(mm, FILL_GFP, ZONE_MOVABLE, cases[i].check2_every, name);
		snprintf(name, sizeof(name), "%s order-0 unmovable", cases[i].name);
		fill_order0(mm, GFP_KERNEL | __GFP_MEMALLOC | __GFP_NORETRY, ZONE_NORMAL, cases[i].check2_every, name);
		snprintf(name, sizeof(name), "%s mixed", cases[i].name);
		fill_mixed(mm, cases[i].check2_every, cases[i].random_ops, name);
		CHECK(mm_nr_reports(mm) == 0);
		mm_destroy(mm);
	}
	TEST_DONE();
}

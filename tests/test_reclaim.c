/* SPDX-License-Identifier: MIT */
/*
 * test_reclaim.c - the reclaim model: a test "page cache" holds pages and
 * gives them back from its shrinker.
 *
 *  - under pressure an allocation enters direct reclaim, the shrinker frees
 *    exactly what the zones lack up to their high watermark (at least
 *    SWAP_CLUSTER_MAX = 32 objects), and the allocation then succeeds -
 *    ZONE_DMA's too, the lowest zone;
 *    ALLOCSTALL / PGSCAN_DIRECT / PGSTEAL_DIRECT move by those amounts;
 *  - reclaim is skipped - the shrinker is not even counted - when every
 *    zone the allocation may use is above its high watermark (and only
 *    zones below it count towards the amount), exactly at the boundary;
 *  - an allocation that cannot be satisfied returns NULL and changes
 *    nothing but ALLOCFAIL and ALLOCSTALL (free lists, NR_FREE_PAGES, the
 *    other counters, reports, the checker);
 *  - __GFP_NORETRY: one reclaim attempt; without it a bounded retry loop,
 *    of one round for a costly order (above PAGE_ALLOC_COSTLY_ORDER), of
 *    exactly 4 * MAX_RECLAIM_RETRIES rounds for a shrinker that claims
 *    progress it never makes;
 *  - reclaim that freed nothing retries nothing and drains nothing: pages
 *    on a pcp list stay there (reclaim that freed some drains them);
 *  - SHRINK_STOP ends a shrinker's scan for this reclaim pass;
 *  - registration rules, and the shrink_control the shrinker sees.
 *
 * One-zone machine, Normal [0, 4096), one CPU: by hand min_free_kbytes =
 * int_sqrt(16384 kB * 16) = 512, pages_min 128, gap max(32, 4) = 32:
 * min/low/high = 128/160/192.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "page/pcp.h"
#include "test.h"

/* CACHE_LIES: scan_objects says it freed all it was asked to, and frees nothing. */
enum cache_mode { CACHE_FREES, CACHE_STOPS, CACHE_STUCK, CACHE_ALLOCATES, CACHE_LIES };

/* The test page cache: pages it holds, freed oldest first by its shrinker. */
struct cache {
	struct shrinker shrinker;
	struct mm *mm;
	struct page **pages;
	unsigned long head, n, cap;       /* live pages are pages[head .. head + n) */
	enum cache_mode mode;
	unsigned long counts, scans;      /* calls of count_objects / scan_objects */
	unsigned long requested, freed;   /* sum of nr_to_scan; pages freed */
	gfp_t seen_gfp;
	int seen_hz;
	bool bad_batch;                   /* nr_to_scan 0 or above SHRINK_BATCH */
	/* CACHE_ALLOCATES: each scan first allocates a page with inner_gfp, then frees as CACHE_FREES */
	gfp_t inner_gfp;
	int depth, max_depth;             /* scans running now (more than one: reclaim recursed), most seen */
	unsigned long inner_tries, inner_got, inner_memalloc;   /* allocations, pages got, scans in PF_MEMALLOC */
	struct page *inner[16];
};

static unsigned long cache_count(struct shrinker *s, struct shrink_control *sc)
{
	struct cache *c = s->private_data;
	(void)sc;
	c->counts++;
	return c->n;
}

static unsigned long cache_scan(struct shrinker *s, struct shrink_control *sc)
{
	struct cache *c = s->private_data;
	c->scans++;
	c->requested += sc->nr_to_scan;
	c->seen_gfp = sc->gfp_mask;
	c->seen_hz = sc->highest_zoneidx;
	if (sc->nr_to_scan == 0 || sc->nr_to_scan > 128)
		c->bad_batch = true;
	if (c->mode == CACHE_STOPS)
		return SHRINK_STOP;
	if (c->mode == CACHE_STUCK)
		return 0;
	if (c->mode == CACHE_LIES)
		return sc->nr_to_scan;
	if (c->mode == CACHE_ALLOCATES) {
		if (++c->depth > c->max_depth)
			c->max_depth = c->depth;
		if (c->depth > 1) {                     /* recursion: stop it here */
			c->depth--;
			return SHRINK_STOP;
		}
		c->inner_memalloc += (get_current()->flags & PF_MEMALLOC) != 0;
		struct page *p = alloc_pages(c->mm, c->inner_gfp, 0);
		c->depth--;
		if (p && c->inner_got < 16)
			c->inner[c->inner_got] = p;
		else if (p)
			__free_pages(c->mm, p, 0);
		c->inner_tries++;
		c->inner_got += p != NULL;
	}
	unsigned long done = 0;
	while (done < sc->nr_to_scan && c->n) {
		__free_pages(c->mm, c->pages[c->head++], 0);
		c->n--;
		done++;
	}
	c->freed += done;
	return done;
}

static void cache_init(struct cache *c, struct mm *mm)
{
	memset(c, 0, sizeof(*c));
	c->mm = mm;
	c->shrinker.count_objects = cache_count;
	c->shrinker.scan_objects = cache_scan;
	c->shrinker.private_data = c;
}

static void cache_add(struct cache *c, struct page *p)
{
	if (c->head + c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 256;
		c->pages = realloc(c->pages, c->cap * sizeof(*c->pages));
		REQUIRE(c->pages);
	}
	c->pages[c->head + c->n++] = p;
}

/* Fill memory with cache pages allocated with @gfp until the allocator says no. */
static void cache_fill(struct cache *c, gfp_t gfp)
{
	struct page *p;
	while ((p = alloc_pages(c->mm, gfp, 0)))
		cache_add(c, p);
}

static void cache_drop(struct cache *c)
{
	while (c->n) {
		__free_pages(c->mm, c->pages[c->head++], 0);
		c->n--;
	}
	free(c->pages);
	c->pages = NULL;
	c->head = c->cap = 0;
}

static void reset_stats(struct cache *c)
{
	c->counts = c->scans = c->requested = c->freed = 0;
	c->bad_batch = false;
}

/* A machine of one CPU whose 4096 pages are all in zone @zt. */
static struct mm *make_zone_only(enum zone_type zt)
{
	struct mm_config c;
	mm_config_default(&c);
	memset(c.zones, 0, sizeof(c.zones));
	c.nr_holes = 0;
	c.nr_cpus = 1;
	c.pcp_batch = 1;
	c.quiet = true;
	c.zones[zt] = (struct mm_span){ 0, 4096 };
	return test_create(&c);
}

static struct mm *make_one_zone(void)
{
	struct mm *mm = make_zone_only(ZONE_NORMAL);
	struct zone *z = mm_zone(mm, ZONE_NORMAL);
	CHECK(zone_wmark_pages(z, WMARK_MIN) == 128 && zone_wmark_pages(z, WMARK_LOW) == 160 &&
	      zone_wmark_pages(z, WMARK_HIGH) == 192);
	return mm;
}

struct counters {
	unsigned long ev[NR_VM_EVENT_ITEMS];
	unsigned long nr_free[MAX_NR_ZONES][MM_NR_ORDERS_LIMIT];
	long free[MAX_NR_ZONES], allocated[MAX_NR_ZONES];
	unsigned long reports;
};

static void take(struct mm *mm, struct counters *k)
{
	memset(k, 0, sizeof(*k));
	for (int i = 0; i < NR_VM_EVENT_ITEMS; i++)
		k->ev[i] = mm_vm_event(mm, i);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = mm_zone(mm, z);
		if (!zone)
			continue;
		k->free[z] = zone_free_pages(zone);
		k->allocated[z] = (long)mm_zone_page_state(mm, z, NR_ZONE_ALLOCATED);
		for (unsigned int o = 0; o < MM_NR_ORDERS_LIMIT; o++)
			k->nr_free[z][o] = zone_nr_free(zone, o);
	}
	k->reports = mm_nr_reports(mm);
}

static unsigned long delta(const struct counters *a, const struct counters *b, enum vm_event_item i)
{
	return b->ev[i] - a->ev[i];
}

/* Pressure: the cache fills memory; a new allocation reclaims from it and succeeds. */
static void test_reclaim_then_succeed(void)
{
	struct mm *mm = make_one_zone();
	struct zone *z = mm_zone(mm, ZONE_NORMAL);
	struct cache pc;
	struct counters k0, k1;

	cache_init(&pc, mm);
	cache_fill(&pc, GFP_KERNEL);
	CHECK(zone_free_pages(z) == 128);                 /* GFP_KERNEL stops at min */
	CHECK(pc.n == 4096 - 128);
	CHECK(register_shrinker(mm, &pc.shrinker) == 0);
	CHECK_MM(mm, 3);

	/*
	 * free 128 <= min: reclaim.  The zone lacks high + 1 - free =
	 * 192 + 1 - 128 = 65 pages; the shrinker is asked for 65 objects (more
	 * than SWAP_CLUSTER_MAX) and frees them.  They reach the free lists
	 * (through the pcp lists and the slow path's drain) and the retry
	 * succeeds: one stall, 65 scanned, 65 stolen.
	 */
	take(mm, &k0);
	struct page *p = alloc_pages(mm, GFP_KERNEL, 0);
	take(mm, &k1);
	CHECK(p != NULL);
	CHECK(pc.counts >= 1 && pc.scans == 1);
	CHECK_MSG(pc.requested == 65 && pc.freed == 65, "asked for %lu, freed %lu; expected 65", pc.requested,
		  pc.freed);
	CHECK(delta(&k0, &k1, ALLOCSTALL) == 1);
	CHECK(delta(&k0, &k1, PGSCAN_DIRECT) == 65);
	CHECK(delta(&k0, &k1, PGSTEAL_DIRECT) == 65);
	CHECK(delta(&k0, &k1, PGALLOC) == 1 && delta(&k0, &k1, PGFREE) == 65);
	CHECK(delta(&k0, &k1, ALLOCFAIL) == 0);
	CHECK(pc.seen_gfp == GFP_KERNEL && pc.seen_hz == ZONE_NORMAL);
	CHECK(!pc.bad_batch);
	drain_all_pages(mm, NULL);
	CHECK(zone_free_pages(z) == 128 + 65 - 1);
	CHECK_MM(mm, 3);

	/* Above min again: the next allocations need no reclaim until min is reached. */
	reset_stats(&pc);
	take(mm, &k0);
	struct page *more[64];
	for (int i = 0; i < 64; i++)
		more[i] = alloc_pages(mm, GFP_KERNEL, 0);
	take(mm, &k1);
	CHECK(more[63] != NULL && pc.scans == 0 && delta(&k0, &k1, ALLOCSTALL) == 0);
	CHECK(zone_free_pages(z) == 128);

	/* A high-order request under pressure reclaims until an order-2 block forms. */
	reset_stats(&pc);
	take(mm, &k0);
	struct page *big = alloc_pages(mm, GFP_KERNEL, 2);
	take(mm, &k1);
	CHECK(big != NULL);
	CHECK(pc.freed > 0 && delta(&k0, &k1, ALLOCSTALL) >= 1);
	CHECK(delta(&k0, &k1, PGSTEAL_DIRECT) == pc.freed);
	CHECK_MM(mm, 3);

	unregister_shrinker(mm, &pc.shrinker);
	__free_pages(mm, p, 0);
	__free_pages(mm, big, 2);
	for (int i = 0; i < 64; i++)
		__free_pages(mm, more[i], 0);
	cache_drop(&pc);
	drain_all_pages(mm, NULL);
	CHECK(zone_free_pages(z) == 4096);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/*
 * The lowest zone counts too: on a machine whose memory is all ZONE_DMA
 * (zone 0), a GFP_DMA allocation under pressure reclaims for that zone
 * and succeeds (try_to_free_pages() walks from the allocation's highest
 * zone down to zone 0, that one included).
 */
static void test_reclaim_lowest_zone(void)
{
	struct mm *mm = make_zone_only(ZONE_DMA);
	struct zone *z = mm_zone(mm, ZONE_DMA);
	struct cache pc;
	struct counters k0, k1;

	cache_init(&pc, mm);
	cache_fill(&pc, GFP_KERNEL | __GFP_DMA);
	CHECK(zone_free_pages(z) == (long)zone_wmark_pages(z, WMARK_MIN));
	CHECK(register_shrinker(mm, &pc.shrinker) == 0);
	take(mm, &k0);
	struct page *p = alloc_pages(mm, GFP_KERNEL | __GFP_DMA, 0);
	take(mm, &k1);
	CHECK_MSG(p != NULL, "a GFP_DMA allocation under pressure failed (%lu stalls, %lu freed)",
		  delta(&k0, &k1, ALLOCSTALL), pc.freed);
	CHECK(delta(&k0, &k1, ALLOCSTALL) == 1 && pc.freed > 0);
	CHECK(pc.seen_hz == ZONE_DMA);
	CHECK(delta(&k0, &k1, ALLOCFAIL) == 0);
	unregister_shrinker(mm, &pc.shrinker);
	if (p)
		__free_pages(mm, p, 0);
	cache_drop(&pc);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/*
 * PF_MEMALLOC: direct reclaim runs the shrinkers with the task in
 * PF_MEMALLOC (6.6's __perform_reclaim()), so a shrinker's own allocation
 * takes the reserves below the min watermark (ALLOC_NO_WATERMARKS: the
 * page is pfmemalloc) and never enters reclaim again.  With
 * __GFP_NOMEMALLOC it gets no reserves and fails, still without
 * recursing.  Between operations the flag is clear again (T1).
 */
static void test_shrinker_allocates(void)
{
	struct mm *mm = make_one_zone();
	struct zone *z = mm_zone(mm, ZONE_NORMAL);
	struct cache pc;
	struct counters k0, k1;

	for (int nomemalloc = 0; nomemalloc < 2; nomemalloc++) {
		cache_init(&pc, mm);
		cache_fill(&pc, GFP_KERNEL);
		CHECK(zone_free_pages(z) == 128);       /* at min: a GFP_KERNEL page needs reclaim or the reserves */
		pc.mode = CACHE_ALLOCATES;
		pc.inner_gfp = GFP_KERNEL | (nomemalloc ? __GFP_NOMEMALLOC : 0);
		REQUIRE(register_shrinker(mm, &pc.shrinker) == 0);
		CHECK(!(get_current()->flags & PF_MEMALLOC));

		take(mm, &k0);
		struct page *p = alloc_pages(mm, GFP_KERNEL, 0);
		take(mm, &k1);
		CHECK(p != NULL);                       /* the shrinker freed what the outer request needed */
		CHECK_MSG(pc.max_depth == 1, "nomemalloc %d: reclaim recursed, %d scans deep", nomemalloc,
			  pc.max_depth);
		CHECK(pc.scans >= 1 && pc.inner_tries == pc.scans && pc.inner_memalloc == pc.scans);
		CHECK(delta(&k0, &k1, ALLOCSTALL) == pc.scans);   /* only the outer request stalled */
		if (!nomemalloc) {
			CHECK_MSG(pc.inner_got == pc.inner_tries, "the shrinker got %lu of %lu pages", pc.inner_got,
				  pc.inner_tries);
			CHECK(pc.inner[0] && page_is_pfmemalloc(pc.inner[0]));
			CHECK(p && !page_is_pfmemalloc(p));
		} else {
			CHECK(pc.inner_got == 0);
			CHECK(delta(&k0, &k1, ALLOCFAIL) == pc.inner_tries);
		}
		CHECK(!(get_current()->flags & PF_MEMALLOC));
		CHECK_MM(mm, 3);

		unregister_shrinker(mm, &pc.shrinker);
		__free_pages(mm, p, 0);
		for (unsigned long i = 0; i < pc.inner_got && i < 16; i++)
			__free_pages(mm, pc.inner[i], 0);
		cache_drop(&pc);
		drain_all_pages(mm, NULL);
		CHECK(zone_free_pages(z) == 4096);
		CHECK_MM(mm, 3);
	}

	/* T1 sees a PF_MEMALLOC left set between operations. */
	struct mm_violation v;
	unsigned int old = memalloc_noreclaim_save();
	CHECK(old == 0);
	CHECK(!mm_check(mm, 1, &v) && v.inv == MM_INV_T1 && strstr(v.msg, "PF_MEMALLOC"));
	memalloc_noreclaim_restore(old);
	CHECK(mm_check(mm, 1, &v));
	mm_destroy(mm);
}

/* try_to_free_pages itself: which zones count, and the skip rule at its boundary. */
static void test_skip_rule(void)
{
	struct mm *mm = make_one_zone();
	struct zone *z = mm_zone(mm, ZONE_NORMAL);
	struct cache pc, hold;
	struct counters k0, k1;

	cache_init(&pc, mm);
	cache_init(&hold, mm);
	CHECK(register_shrinker(mm, &pc.shrinker) == 0);
	/* The cache owns 1000 pages; the zone is far above high. */
	for (int i = 0; i < 1000; i++)
		cache_add(&pc, alloc_pages(mm, GFP_KERNEL, 0));
	CHECK(pc.pages[999] != NULL);
	drain_all_pages(mm, NULL);

	take(mm, &k0);
	CHECK(try_to_free_pages(mm, GFP_KERNEL, 0, ZONE_NORMAL) == 0);
	take(mm, &k1);
	CHECK_MSG(pc.counts == 0 && pc.scans == 0, "shrinker called with every zone above high");
	CHECK(delta(&k0, &k1, ALLOCSTALL) == 0 && delta(&k0, &k1, PGSCAN_DIRECT) == 0);

	/* Bring the zone to high + 1 = 193 free pages (held outside the cache): still skipped. */
	while (zone_free_pages(z) > 193)
		cache_add(&hold, alloc_pages(mm, GFP_KERNEL | __GFP_MEMALLOC, 0));
	drain_all_pages(mm, NULL);
	CHECK(zone_free_pages(z) == 193);
	CHECK(try_to_free_pages(mm, GFP_KERNEL, 0, ZONE_NORMAL) == 0);
	CHECK(pc.scans == 0);

	/* At high exactly (192, not above it): reclaim, for max(192 + 1 - 192, 32) = 32 objects. */
	cache_add(&hold, alloc_pages(mm, GFP_KERNEL | __GFP_MEMALLOC, 0));
	drain_all_pages(mm, NULL);
	CHECK(zone_free_pages(z) == 192);
	take(mm, &k0);
	CHECK(try_to_free_pages(mm, GFP_KERNEL, 0, ZONE_NORMAL) == 32);
	take(mm, &k1);
	CHECK(pc.scans == 1 && pc.requested == 32 && pc.freed == 32);
	CHECK(delta(&k0, &k1, ALLOCSTALL) == 1 && delta(&k0, &k1, PGSCAN_DIRECT) == 32 &&
	      delta(&k0, &k1, PGSTEAL_DIRECT) == 32);
	drain_all_pages(mm, NULL);
	CHECK(zone_free_pages(z) == 224);

	/*
	 * Above high, but no free block of the order asked for: the order-aware
	 * check fails, so reclaim runs (the gap, 192 + 8 - free, is negative:
	 * 2^order = 8 counted, then raised to 32).  Make the free memory all
	 * order 0: hold every page, give back every other one.
	 */
	pc.mode = CACHE_STUCK;   /* or the fill's own reclaim would empty the cache */
	while (alloc_pages(mm, GFP_KERNEL | __GFP_MEMALLOC | __GFP_NORETRY, 0) != NULL)
		;   /* the rest of memory: leaked into the machine, destroyed with it */
	pc.mode = CACHE_FREES;
	reset_stats(&pc);
	unsigned long given = 0;
	for (unsigned long i = 0; i < hold.n; i++) {
		unsigned long pfn = page_to_pfn(mm, hold.pages[hold.head + i]);
		if (pfn & 1)
			continue;
		__free_pages(mm, hold.pages[hold.head + i], 0);
		hold.pages[hold.head + i] = NULL;
		given++;
	}
	drain_all_pages(mm, NULL);
	CHECK_MSG(given > 300 && zone_free_pages(z) == (long)given, "gave back %lu pages, %ld free", given,
		  zone_free_pages(z));
	CHECK(zone_nr_free(z, 0) == given && zone_nr_free(z, 1) == 0);
	CHECK(try_to_free_pages(mm, GFP_KERNEL, 0, ZONE_NORMAL) == 0);    /* order 0 is fine */
	CHECK(pc.scans == 0);
	CHECK(try_to_free_pages(mm, GFP_KERNEL, 3, ZONE_NORMAL) == 32);    /* order 3 is not */
	CHECK(pc.requested == 32);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
	free(pc.pages);
	free(hold.pages);

	/*
	 * Several zones (default config): only zones below their high watermark
	 * count, and only zones the allocation may use.  Drain Normal to 100
	 * free pages (high 163): a GFP_KERNEL reclaim asks for 163 + 1 - 100 =
	 * 64 objects (DMA and DMA32 are above high); a GFP_DMA one may use DMA
	 * only, which is above high: skipped.
	 */
	struct mm_config c;
	mm_config_default(&c);
	c.pcp_batch = 1;
	c.quiet = true;
	mm = test_create(&c);
	z = mm_zone(mm, ZONE_NORMAL);
	cache_init(&pc, mm);
	cache_init(&hold, mm);
	/* The zonelist takes from the lower zones too on the way: give those back. */
	while (zone_free_pages(z) > 100) {
		struct page *np = alloc_pages(mm, GFP_KERNEL | __GFP_MEMALLOC, 0);
		REQUIRE(np);
		cache_add(page_to_pfn(mm, np) >= c.zones[ZONE_NORMAL].start_pfn ? &pc : &hold, np);
	}
	cache_drop(&hold);
	drain_all_pages(mm, NULL);
	CHECK(zone_free_pages(z) == 100);
	for (int i = ZONE_DMA; i <= ZONE_MOVABLE; i++)
		if (i != ZONE_NORMAL)
			CHECK(zone_free_pages(mm_zone(mm, i)) == (long)zone_managed_pages(mm_zone(mm, i)));
	CHECK(register_shrinker(mm, &pc.shrinker) == 0);
	CHECK(try_to_free_pages(mm, GFP_KERNEL | __GFP_DMA, 0, ZONE_DMA) == 0);
	CHECK(try_to_free_pages(mm, GFP_KERNEL | __GFP_DMA32, 0, ZONE_DMA32) == 0);
	CHECK(pc.counts == 0 && pc.scans == 0);
	CHECK(try_to_free_pages(mm, GFP_KERNEL, 0, ZONE_NORMAL) == 64);
	CHECK(pc.requested == 64 && pc.seen_hz == ZONE_NORMAL);
	/* A Movable request sees Normal too (Movable is above high): same 64 - now 100 + 64 free, so 0. */
	drain_all_pages(mm, NULL);
	CHECK(zone_free_pages(z) == 164);
	reset_stats(&pc);
	CHECK(try_to_free_pages(mm, GFP_HIGHUSER_MOVABLE, 0, ZONE_MOVABLE) == 0);
	CHECK(pc.scans == 0);
	CHECK_MM(mm, 3);
	unregister_shrinker(mm, &pc.shrinker);
	cache_drop(&pc);
	mm_destroy(mm);
}

/* Nothing to reclaim: NULL, and nothing else changes. */
static void test_failure_has_no_side_effects(void)
{
	struct mm *mm = make_one_zone();
	struct zone *z = mm_zone(mm, ZONE_NORMAL);
	struct cache pc, client;
	struct counters k0, k1;

	cache_init(&pc, mm);       /* registered, but empty */
	cache_init(&client, mm);
	CHECK(register_shrinker(mm, &pc.shrinker) == 0);
	/* A client holds all but 50 pages (below min: only reserves could have them). */
	while (zone_free_pages(z) > 50)
		cache_add(&client, alloc_pages(mm, GFP_KERNEL | __GFP_MEMALLOC, 0));
	drain_all_pages(mm, NULL);
	CHECK(zone_free_pages(z) == 50);

	static const struct {
		gfp_t gfp;
		unsigned int order;
		bool reclaims;
	} cases[] = {
		{ GFP_KERNEL, 0, true },
		{ GFP_KERNEL | __GFP_NORETRY, 0, true },
		{ GFP_KERNEL, 3, true },
		{ GFP_KERNEL, 6, true },                  /* above the pcp orders */
		{ GFP_HIGHUSER_MOVABLE | __GFP_ZERO | __GFP_COMP, 2, true },
		{ GFP_NOWAIT, 0, false },
		{ GFP_NOWAIT, 1, false },                 /* ALLOC_HIGHATOMIC: still no reserve to take */
		{ GFP_KERNEL | __GFP_HIGH, 0, true },     /* min 128 -> 64: 50 is not above it */
	};
	for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
		drain_all_pages(mm, NULL);
		reset_stats(&pc);
		take(mm, &k0);
		struct page *p = alloc_pages(mm, cases[i].gfp, cases[i].order);
		drain_all_pages(mm, NULL);
		take(mm, &k1);
		CHECK_MSG(p == NULL, "case %u: allocation succeeded below min", i);
		if (p)
			continue;
		CHECK_MSG(delta(&k0, &k1, ALLOCFAIL) == 1, "case %u", i);
		CHECK_MSG(cases[i].reclaims ? delta(&k0, &k1, ALLOCSTALL) >= 1 : delta(&k0, &k1, ALLOCSTALL) == 0,
			  "case %u: %lu stalls", i, delta(&k0, &k1, ALLOCSTALL));
		/* Everything else is exactly as it was. */
		struct counters a = k0, b = k1;
		a.ev[ALLOCFAIL] = b.ev[ALLOCFAIL] = 0;
		a.ev[ALLOCSTALL] = b.ev[ALLOCSTALL] = 0;
		CHECK_MSG(memcmp(&a, &b, sizeof(a)) == 0, "case %u (gfp %#x order %u): state changed", i,
			  cases[i].gfp, cases[i].order);
		CHECK(pc.scans == 0);     /* count_objects said 0 */
		CHECK_MM(mm, 3);
	}
	/* The control: GFP_ATOMIC may go to 128 - 64 - 16 = 48 < 50, so the state allows it. */
	struct page *p = alloc_pages(mm, GFP_ATOMIC, 0);
	CHECK(p != NULL);
	if (p)
		cache_add(&client, p);
	unregister_shrinker(mm, &pc.shrinker);
	cache_drop(&client);
	mm_destroy(mm);
}

/* __GFP_NORETRY, a shrinker that cannot free, and one that says SHRINK_STOP. */
static void test_noretry_and_stop(void)
{
	struct mm *mm = make_one_zone();
	struct cache pc;
	struct counters k0, k1;

	cache_init(&pc, mm);
	cache_fill(&pc, GFP_KERNEL | __GFP_MEMALLOC | __GFP_NORETRY);   /* all of memory */
	CHECK(pc.n == 4096);
	CHECK(register_shrinker(mm, &pc.shrinker) == 0);

	/* A stuck cache (count > 0, nothing freed): the allocation fails after a bounded number of tries. */
	pc.mode = CACHE_STUCK;
	take(mm, &k0);
	CHECK(alloc_pages(mm, GFP_KERNEL | __GFP_NORETRY, 0) == NULL);
	take(mm, &k1);
	unsigned long noretry_stalls = delta(&k0, &k1, ALLOCSTALL);
	CHECK_MSG(noretry_stalls == 1,
		  "__GFP_NORETRY entered direct reclaim %lu times (gfp.h: one reclaim attempt, then fail; "
		  "alloc.c's slow path reclaims again after the drain)", noretry_stalls);
	CHECK(noretry_stalls >= 1 && noretry_stalls <= 2);
	CHECK(delta(&k0, &k1, PGSCAN_DIRECT) > 0 && delta(&k0, &k1, PGSTEAL_DIRECT) == 0);
	CHECK(delta(&k0, &k1, ALLOCFAIL) == 1);

	take(mm, &k0);
	CHECK(alloc_pages(mm, GFP_KERNEL, 0) == NULL);
	take(mm, &k1);
	unsigned long retry_stalls = delta(&k0, &k1, ALLOCSTALL);
	CHECK_MSG(retry_stalls > noretry_stalls && retry_stalls <= 4 * 16 + 1,
		  "without __GFP_NORETRY: %lu reclaim attempts (NORETRY: %lu)", retry_stalls, noretry_stalls);
	CHECK(delta(&k0, &k1, ALLOCFAIL) == 1);

	/*
	 * A shrinker that reports progress it did not make: should_reclaim_retry()
	 * never runs out of retries (progress resets them; the cache's objects
	 * count as reclaimable), so the kernel would retry for ever.  The model
	 * bounds the slow path at 4 * MAX_RECLAIM_RETRIES (16) rounds, each one
	 * direct reclaim (T1: every loop is bounded), then fails.
	 */
	pc.mode = CACHE_LIES;
	take(mm, &k0);
	CHECK(alloc_pages(mm, GFP_KERNEL, 0) == NULL);
	take(mm, &k1);
	CHECK_MSG(delta(&k0, &k1, ALLOCSTALL) == 4 * 16, "a lying shrinker: %lu rounds of reclaim, expected the bound %d",
		  delta(&k0, &k1, ALLOCSTALL), 4 * 16);
	CHECK(delta(&k0, &k1, ALLOCFAIL) == 1);
	CHECK(pc.n == 4096);
	pc.mode = CACHE_STUCK;

	/*
	 * SHRINK_STOP: the zone is empty, so reclaim wants 192 + 1 = 193
	 * objects - two batches (128 + 65).  A freeing shrinker is called
	 * twice; one returning SHRINK_STOP only once, and counts nothing.
	 */
	pc.mode = CACHE_FREES;
	reset_stats(&pc);
	take(mm, &k0);
	CHECK(try_to_free_pages(mm, GFP_KERNEL, 0, ZONE_NORMAL) == 193);
	take(mm, &k1);
	CHECK(pc.scans == 2 && pc.requested == 193 && pc.freed == 193);
	CHECK(delta(&k0, &k1, PGSCAN_DIRECT) == 193 && delta(&k0, &k1, PGSTEAL_DIRECT) == 193);
	/*
	 * Take the pages back so the zone is empty again - with the shrinker
	 * stuck, or the refill's own reclaim would free what it just took.
	 */
	drain_all_pages(mm, NULL);
	pc.mode = CACHE_STUCK;
	cache_fill(&pc, GFP_KERNEL | __GFP_MEMALLOC | __GFP_NORETRY);
	CHECK(zone_free_pages(mm_zone(mm, ZONE_NORMAL)) == 0);

	pc.mode = CACHE_STOPS;
	reset_stats(&pc);
	take(mm, &k0);
	CHECK(try_to_free_pages(mm, GFP_KERNEL, 0, ZONE_NORMAL) == 0);
	take(mm, &k1);
	CHECK_MSG(pc.scans == 1, "SHRINK_STOP: scan_objects called %lu times in one pass", pc.scans);
	CHECK(delta(&k0, &k1, ALLOCSTALL) == 1);
	CHECK(delta(&k0, &k1, PGSCAN_DIRECT) == 0 && delta(&k0, &k1, PGSTEAL_DIRECT) == 0);

	/* And an allocation against it fails, bounded. */
	reset_stats(&pc);
	CHECK(alloc_pages(mm, GFP_KERNEL, 0) == NULL);
	CHECK(pc.scans >= 1 && pc.scans <= 4 * 16 + 1);

	/* Registration rules; an unregistered shrinker is not called. */
	CHECK(register_shrinker(mm, &pc.shrinker) != 0);              /* twice */
	struct shrinker bad = { .count_objects = cache_count };
	CHECK(register_shrinker(mm, &bad) != 0);                      /* no scan_objects */
	CHECK(register_shrinker(mm, NULL) != 0);
	unregister_shrinker(mm, &pc.shrinker);
	reset_stats(&pc);
	CHECK(alloc_pages(mm, GFP_KERNEL | __GFP_NORETRY, 0) == NULL);
	CHECK(pc.counts == 0 && pc.scans == 0);

	/* Two shrinkers: both are asked, each for the full amount. */
	struct cache other;
	cache_init(&other, mm);
	pc.mode = CACHE_STUCK;
	other.mode = CACHE_STUCK;
	for (int i = 0; i < 40; i++)
		cache_add(&other, pc.pages[pc.head + pc.n - 1 - i]);
	pc.n -= 40;
	CHECK(register_shrinker(mm, &pc.shrinker) == 0);
	CHECK(register_shrinker(mm, &other.shrinker) == 0);
	reset_stats(&pc);
	reset_stats(&other);
	CHECK(try_to_free_pages(mm, GFP_KERNEL, 0, ZONE_NORMAL) == 0);
	CHECK(pc.scans == 2 && pc.requested == 193);
	CHECK(other.scans == 1 && other.requested == 40);              /* min(193, its 40 objects) */
	unregister_shrinker(mm, &pc.shrinker);
	unregister_shrinker(mm, &other.shrinker);
	CHECK_MM(mm, 3);
	cache_drop(&other);
	cache_drop(&pc);
	mm_destroy(mm);
}

/*
 * __alloc_pages_direct_reclaim(): no progress, no retry - and so no drain
 * of the pcp lists, which only a retry that still failed would do.  40
 * pages on the pcp list would lift the zone above min (100 + 40 > 128);
 * a reclaim that frees nothing leaves them there and the allocation fails
 * after one round: should_reclaim_retry() sees 100 free + 10 freeable
 * under min 128, nothing to hope for (6.6.0; the model retried 17 times).
 * One that frees 10 pages (onto the pcp list: 100 < 128 still) retries,
 * fails, drains, and succeeds.
 */
static void test_no_progress_no_drain(void)
{
	struct mm *mm = make_one_zone();
	struct zone *z = mm_zone(mm, ZONE_NORMAL);
	struct cache pc, client;
	struct mm_pcp_info info;
	struct counters k0, k1;

	cache_init(&pc, mm);
	cache_init(&client, mm);
	while (zone_free_pages(z) > 110)
		cache_add(&client, alloc_pages(mm, GFP_KERNEL | __GFP_MEMALLOC, 0));
	for (int i = 0; i < 10; i++)
		cache_add(&pc, alloc_pages(mm, GFP_KERNEL | __GFP_MEMALLOC, 0));
	drain_all_pages(mm, NULL);
	REQUIRE(zone_free_pages(z) == 100);
	for (int i = 0; i < 40; i++) {                       /* onto the pcp list (high 160) */
		__free_pages(mm, client.pages[client.head + client.n - 1], 0);
		client.n--;
	}
	REQUIRE(mm_pcp_info(mm, ZONE_NORMAL, 0, &info) == 0);
	REQUIRE(info.count == 40 && zone_free_pages(z) == 100);
	CHECK(register_shrinker(mm, &pc.shrinker) == 0);

	pc.mode = CACHE_STUCK;
	take(mm, &k0);
	struct page *p = alloc_pages(mm, GFP_KERNEL, 0);
	take(mm, &k1);
	REQUIRE(mm_pcp_info(mm, ZONE_NORMAL, 0, &info) == 0);
	CHECK_MSG(p == NULL && info.count == 40 && zone_free_pages(z) == 100,
		  "no progress: allocation %s, pcp count %d (40), free %ld (100) - the pcp lists were drained",
		  p ? "succeeded" : "failed", info.count, zone_free_pages(z));
	CHECK_MSG(delta(&k0, &k1, ALLOCSTALL) == 1, "%lu reclaim rounds, want 1: 110 pages at most, min 128",
		  delta(&k0, &k1, ALLOCSTALL));
	if (p)
		cache_add(&client, p);

	pc.mode = CACHE_FREES;
	reset_stats(&pc);
	p = alloc_pages(mm, GFP_KERNEL, 0);
	CHECK_MSG(p != NULL, "progress, then a drain: 100 + 40 + 10 pages are above min 128");
	CHECK(pc.freed == 10);
	REQUIRE(mm_pcp_info(mm, ZONE_NORMAL, 0, &info) == 0);
	CHECK(info.count == 0);
	if (p)
		cache_add(&client, p);
	CHECK_MM(mm, 3);
	unregister_shrinker(mm, &pc.shrinker);
	cache_drop(&pc);
	cache_drop(&client);
	mm_destroy(mm);
}

/*
 * A costly order (above PAGE_ALLOC_COSTLY_ORDER) is not retried without
 * __GFP_RETRY_MAYFAIL (which the model does not have): one reclaim round,
 * where order 3 goes round MAX_RECLAIM_RETRIES + 1 times - as long as
 * should_reclaim_retry() sees hope: some zone would meet min with
 * everything reclaimable freed, counting its free blocks of the order
 * (6.6.0).  Memory is full but for one free order-3 block; a stuck cache
 * holds the rest (4088 freeable objects).  Without that block no order-3
 * request can ever be met however much is reclaimed, and the first
 * round is the last, where order 0 still goes round 17 times.
 */
static void test_costly_order_one_round(void)
{
	struct mm *mm = make_one_zone();
	struct zone *z = mm_zone(mm, ZONE_NORMAL);
	struct cache pc;
	struct counters k0, k1;

	cache_init(&pc, mm);
	struct page *blk = alloc_pages(mm, GFP_KERNEL | __GFP_MEMALLOC | __GFP_NORETRY, 3);
	REQUIRE(blk);
	cache_fill(&pc, GFP_KERNEL | __GFP_MEMALLOC | __GFP_NORETRY);
	__free_pages(mm, blk, 3);
	drain_all_pages(mm, NULL);
	REQUIRE(zone_free_pages(z) == 8 && zone_nr_free(z, 3) == 1);
	CHECK(register_shrinker(mm, &pc.shrinker) == 0);
	pc.mode = CACHE_STUCK;
	static const struct { unsigned int order; unsigned long rounds, rounds_no_block; } cases[] = {
		{ 0, 17, 17 }, { 3, 17, 1 }, { 4, 1, 1 }, { 9, 1, 1 },
	};
	for (int with_block = 1; with_block >= 0; with_block--) {
		for (unsigned int i = 0; i < ARRAY_SIZE(cases); i++) {
			unsigned long want = with_block ? cases[i].rounds : cases[i].rounds_no_block;
			take(mm, &k0);
			CHECK(alloc_pages(mm, GFP_KERNEL, cases[i].order) == NULL);
			take(mm, &k1);
			CHECK_MSG(delta(&k0, &k1, ALLOCSTALL) == want, "order %u%s: %lu reclaim rounds, want %lu",
				  cases[i].order, with_block ? "" : " (no free order-3 block)",
				  delta(&k0, &k1, ALLOCSTALL), want);
		}
		if (with_block) {
			blk = alloc_pages(mm, GFP_KERNEL | __GFP_MEMALLOC | __GFP_NORETRY, 3);
			REQUIRE(blk && zone_free_pages(z) == 0);
		}
	}
	unregister_shrinker(mm, &pc.shrinker);
	__free_pages(mm, blk, 3);
	cache_drop(&pc);
	mm_destroy(mm);
}

int main(void)
{
	test_reclaim_then_succeed();
	test_reclaim_lowest_zone();
	test_skip_rule();
	test_failure_has_no_side_effects();
	test_no_progress_no_drain();
	test_costly_order_one_round();
	test_noretry_and_stop();
	test_shrinker_allocates();
	TEST_DONE();
}

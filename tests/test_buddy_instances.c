/* SPDX-License-Identifier: MIT */
/*
 * test_buddy_instances.c - several machines in one process, and mm_reset.
 *
 *  - three instances of different shapes live side by side, operations
 *    interleaved: each stays consistent, none hands out memory of another,
 *    and destroying them in any order leaves the others working;
 *  - mm_reset returns a machine that was used hard (pages still allocated,
 *    stolen and isolated and highatomic pageblocks, reports, a shrinker, a
 *    client walker) to exactly the state mm_create left: the three dumps
 *    byte for byte, every counter zero, checker clean; and the same
 *    operations after a reset hand out the same pfns as after creation
 *    (what fuzzers rely on to replay an input).  Both ways a reset can go:
 *    the memcpy of the boot snapshot, and the rebuild through the free
 *    path that mm_reset() falls back to when mm_create() had no memory
 *    for the snapshot (here by hiding the snapshot from it).
 * (That mm_reset is much cheaper than destroy + create is measured by
 * bench/bench_buddy, not asserted here.)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "page/pcp.h"
#include "test.h"

struct image {
	char *buddyinfo, *zoneinfo, *pagetypeinfo;
	unsigned long ev[NR_VM_EVENT_ITEMS];
	unsigned long reports;
};

static void image_take(struct mm *mm, struct image *im)
{
	im->buddyinfo = test_dump(mm, mm_dump_buddyinfo);
	im->zoneinfo = test_dump(mm, mm_dump_zoneinfo);
	im->pagetypeinfo = test_dump(mm, mm_dump_pagetypeinfo);
	for (int i = 0; i < NR_VM_EVENT_ITEMS; i++)
		im->ev[i] = mm_vm_event(mm, i);
	im->reports = mm_nr_reports(mm);
}

static void image_free(struct image *im)
{
	free(im->buddyinfo);
	free(im->zoneinfo);
	free(im->pagetypeinfo);
}

static void image_same(const char *what, const struct image *a, const struct image *b)
{
	CHECK_MSG(!strcmp(a->buddyinfo, b->buddyinfo), "%s: buddyinfo\n%s---- vs\n%s", what, b->buddyinfo, a->buddyinfo);
	CHECK_MSG(!strcmp(a->zoneinfo, b->zoneinfo), "%s: zoneinfo differs", what);
	CHECK_MSG(!strcmp(a->pagetypeinfo, b->pagetypeinfo), "%s: pagetypeinfo\n%s---- vs\n%s", what,
		  b->pagetypeinfo, a->pagetypeinfo);
	CHECK_MSG(!memcmp(a->ev, b->ev, sizeof(a->ev)), "%s: event counters differ", what);
	CHECK(a->reports == b->reports);
}

static uint64_t rng;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

struct live {
	struct page *page[4096];
	unsigned int order[4096];
	int n;
};

/* One random operation on @mm; returns the pfn allocated, or ~0UL. */
static unsigned long step(struct mm *mm, struct live *l)
{
	if (l->n && (rnd() % 100 < 40 || l->n == 4096)) {
		int i = (int)(rnd() % (unsigned)l->n);
		__free_pages(mm, l->page[i], l->order[i]);
		l->page[i] = l->page[--l->n];
		l->order[i] = l->order[l->n];
		return ~0UL;
	}
	static const gfp_t g[] = { GFP_KERNEL, GFP_HIGHUSER_MOVABLE, GFP_KERNEL | __GFP_RECLAIMABLE,
				   GFP_KERNEL | __GFP_DMA32 | __GFP_COMP, GFP_ATOMIC, GFP_NOWAIT | __GFP_ZERO };
	unsigned int order = (unsigned int)(rnd() % 4 ? rnd() % 4 : rnd() % (mm_get_config(mm)->max_order + 1));
	gfp_t gfp = g[rnd() % ARRAY_SIZE(g)];
	struct page *p = alloc_pages(mm, gfp, order);
	if (!p)
		return ~0UL;
	l->page[l->n] = p;
	l->order[l->n++] = order;
	return page_to_pfn(mm, p);
}

static bool inside_arena(struct mm *mm, const void *addr)
{
	const char *b = mm_arena_base(mm), *a = addr;
	return a >= b && a < b + mm_arena_size(mm);
}

static struct mm *make(void (*cfg)(struct mm_config *), unsigned int nr_cpus)
{
	struct mm_config c;
	cfg(&c);
	c.quiet = true;
	if (nr_cpus)
		c.nr_cpus = nr_cpus;
	return test_create(&c);
}

static void config_far(struct mm_config *c)
{
	mm_config_tiny(c);
	unsigned long b = (1UL << 20) + 3;
	c->zones[ZONE_DMA] = (struct mm_span){ b, b + 200 };
	c->zones[ZONE_DMA32] = (struct mm_span){ b + 200, b + 500 };
	c->zones[ZONE_NORMAL] = (struct mm_span){ b + 500, b + 1400 };
	c->zones[ZONE_MOVABLE] = (struct mm_span){ 0, 0 };
	c->nr_holes = 1;
	c->holes[0] = (struct mm_span){ b + 600, b + 650 };
}

static void test_side_by_side(void)
{
	struct mm *m[3] = { make(mm_config_default, 0), make(mm_config_tiny, 0), make(config_far, 1) };
	static struct live l[3];
	memset(l, 0, sizeof(l));
	rng = 0x1234567;

	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			if (i != j) {
				const char *bi = mm_arena_base(m[i]);
				CHECK(!inside_arena(m[j], bi) && !inside_arena(m[j], bi + mm_arena_size(m[i]) - 1));
			}
	for (int s = 0; s < 9000; s++) {
		int i = (int)(rnd() % 3);
		unsigned long pfn = step(m[i], &l[i]);
		if (pfn != ~0UL) {
			struct page *p = l[i].page[l[i].n - 1];
			char *va = page_address(m[i], p);
			*va = (char)i;
			for (int j = 0; j < 3; j++)
				CHECK(inside_arena(m[j], va) == (i == j) && (i == j || virt_to_page(m[j], va) == NULL));
		}
		CHECK_MM(m[i], 1);
		if (s % 500 == 0)
			for (int j = 0; j < 3; j++)
				CHECK_MM(m[j], 3);
	}
	for (int i = 0; i < 3; i++)
		CHECK(mm_nr_reports(m[i]) == 0);
	/* Destroy the middle one while the others hold pages; they go on working. */
	mm_destroy(m[1]);
	for (int s = 0; s < 2000; s++) {
		int i = (s & 1) ? 2 : 0;
		step(m[i], &l[i]);
	}
	CHECK_MM(m[0], 3);
	CHECK_MM(m[2], 3);
	/* A new one takes its place. */
	m[1] = make(mm_config_tiny, 0);
	l[1].n = 0;
	for (int s = 0; s < 500; s++)
		step(m[1], &l[1]);
	CHECK_MM(m[1], 3);
	for (int i = 0; i < 3; i++) {
		while (l[i].n) {
			l[i].n--;
			__free_pages(m[i], l[i].page[l[i].n], l[i].order[l[i].n]);
		}
		drain_all_pages(m[i], NULL);
		for (int z = 0; z < MAX_NR_ZONES; z++)
			if (mm_zone(m[i], z))
				CHECK(zone_free_pages(mm_zone(m[i], z)) == (long)zone_managed_pages(mm_zone(m[i], z)));
		CHECK_MM(m[i], 3);
	}
	mm_destroy(m[2]);
	mm_destroy(m[0]);
	mm_destroy(m[1]);
}

static unsigned long shrink_calls;
static unsigned long s_count(struct shrinker *s, struct shrink_control *sc)
{
	(void)s;
	(void)sc;
	shrink_calls++;
	return 0;
}
static unsigned long s_scan(struct shrinker *s, struct shrink_control *sc)
{
	(void)s;
	(void)sc;
	shrink_calls++;
	return SHRINK_STOP;
}
static void walker(void *ctx, mm_mark_fn mark, void *w)
{
	(void)ctx;
	(void)mark;
	(void)w;
}

static void test_reset(bool rebuild)
{
	struct mm *mm = make(mm_config_default, 0);
	struct mm_boot_snapshot *snapshot = mm->boot;
	REQUIRE(snapshot);
	if (rebuild)
		mm->boot = NULL;
	static struct live l;
	struct image created, after;
	unsigned long first_run[3000];
	image_take(mm, &created);

	/* A fixed program, recorded: the pfns it gets. */
	rng = 42;
	l.n = 0;
	for (int s = 0; s < 3000; s++)
		first_run[s] = step(mm, &l);

	/* Use it hard, and leave it dirty. */
	for (int s = 0; s < 20000; s++)
		step(mm, &l);
	struct page *fill;
	while ((fill = alloc_pages(mm, GFP_KERNEL | __GFP_MEMALLOC | __GFP_NORETRY, 0)))
		memset(page_address(mm, fill), 0xee, MM_PAGE_SIZE);   /* leaked: reset takes it back */
	struct page *ha = alloc_pages(mm, GFP_KERNEL | __GFP_DMA32 | __GFP_MEMALLOC, 4);
	if (ha)
		reserve_highatomic_pageblock(page_zone(mm, ha), ha, 4);
	CHECK(mm_isolate_pageblock(mm, 21504) == 0);
	free_pages(mm, 12345, 0);                                  /* a report */
	struct shrinker sh = { .count_objects = s_count, .scan_objects = s_scan };
	CHECK(register_shrinker(mm, &sh) == 0);
	mm_set_client_walker(mm, walker, NULL);
	CHECK(mm_nr_reports(mm) == 1);

	CHECK(mm_reset(mm) == 0);
	image_take(mm, &after);
	image_same("after mm_reset", &created, &after);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = mm_zone(mm, z);
		CHECK(zone_free_pages(zone) == (long)zone_managed_pages(zone));
		CHECK(mm_zone_page_state(mm, z, NR_ZONE_ALLOCATED) == 0);
		CHECK(zone->nr_reserved_highatomic == 0);
	}
	CHECK(mm_last_report(mm)->reason[0] == '\0');
	CHECK_MM(mm, 3);    /* with the walker gone, B4 counts from the memmap again */

	/* The shrinker is forgotten: exhausting memory does not call it. */
	shrink_calls = 0;
	struct page *p;
	unsigned long n = 0;
	while ((p = alloc_pages(mm, GFP_KERNEL | __GFP_NORETRY, 0)))
		n++;
	CHECK(n > 0 && shrink_calls == 0);

	/* Same program after a reset: the same pfns. */
	CHECK(mm_reset(mm) == 0);
	rng = 42;
	l.n = 0;
	unsigned long differ = 0;
	for (int s = 0; s < 3000; s++)
		differ += step(mm, &l) != first_run[s];
	CHECK_MSG(differ == 0, "%lu of 3000 steps got a different pfn after mm_reset", differ);
	CHECK_MM(mm, 3);
	/* And a reset with nothing allocated is a no-op on the image. */
	CHECK(mm_reset(mm) == 0);
	CHECK(mm_reset(mm) == 0);
	image_free(&after);
	image_take(mm, &after);
	image_same("after two resets", &created, &after);
	image_free(&after);
	image_free(&created);
	mm->boot = snapshot;
	mm_destroy(mm);
}

int main(void)
{
	test_side_by_side();
	test_reset(false);
	test_reset(true);
	TEST_DONE();
}

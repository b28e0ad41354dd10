/* SPDX-License-Identifier: MIT */
/*
 * bench_buddy.c - the buddy allocator itself, the checker, and instance
 * reset, on the default config (mm_config_default(): ~24k pages, four
 * zones, max_order 10).
 *
 *  1. alloc+free pairs straight from the buddy, no pcp: the internal
 *     __rmqueue_smallest() and __free_one_page() under zone->lock, with
 *     the NR_FREE_PAGES update - what rmqueue_buddy() and free_one_page()
 *     do around them, minus the page checks (prep/free_pages_prepare).
 *     Two states: a fresh zone of only order-10 blocks, where an order-0
 *     pair splits an order-10 block on the way out and merges it all the
 *     way back on the way in (the buddy's worst ordinary case), and a warm
 *     one, where free blocks of the order wait whose buddies are in use
 *     (one list pop and push, no split, no merge).
 *     For context, the public path: alloc_pages/__free_pages at order 0
 *     and 3 (through the per-cpu lists) and order 4 (buddy, with checks).
 *  2. the checker's cost per page at levels 1, 2, 3: ns per valid pfn of
 *     one mm_check() call, on a fresh and on a half-allocated machine.
 *  3. mm_reset() against mm_destroy() + mm_create(), the reset on a machine
 *     with half its memory allocated.
 *
 * Output: "Per elem: N cycles(tsc) X ns" lines (the seed threads' format),
 * --json FILE for the same figures, --quick for a smoke run.
 * No assertion on speed anywhere: this is measurement, not a test.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "page/pcp.h"

/*
 * Many short runs rather than a few long ones: on a shared machine the
 * fastest of 21 runs of ~10 ms is far less likely to include someone
 * else's time slice than the fastest of 7 runs of 100 ms.
 */
#define BENCH_RUNS 21
#include "common.h"

static bool quick;

static struct mm *make_cfg(void (*tweak)(struct mm_config *))
{
	struct mm_config c;
	char err[256];
	mm_config_default(&c);
	c.quiet = true;
	if (tweak)
		tweak(&c);
	struct mm *mm = mm_create(&c, err, sizeof(err));
	if (!mm) {
		fprintf(stderr, "bench_buddy: mm_create: %s\n", err);
		exit(1);
	}
	return mm;
}

static struct mm *make(void)
{
	return make_cfg(NULL);
}

/*
 * For the buddy pairs: one aligned zone without holes, Normal [0, 16384),
 * so every free block is an order-10 block and a fresh order-0 pair really
 * splits ten times and merges ten times (the default config's zones have
 * small blocks at their unaligned edges and holes, which a pair would
 * simply take).
 */
static void aligned_zone(struct mm_config *c)
{
	memset(c->zones, 0, sizeof(c->zones));
	c->nr_holes = 0;
	c->nr_cpus = 1;
	c->zones[ZONE_NORMAL] = (struct mm_span){ 0, 16384 };
}

static void row(struct bench_json *js, const char *key, const char *label, const struct bench_result *r)
{
	printf("%-46s Per elem: %6.0f cycles(tsc) %9.3f ns\n", label, r->cycles, r->ns);
	bench_json_add_result(js, key, r);
}

/* rmqueue_buddy() without the checks: the block, off the lists, counted. */
static inline struct page *buddy_take(struct zone *z, unsigned int order, int mt)
{
	unsigned long flags;
	spin_lock_irqsave(&z->lock, flags);
	struct page *p = __rmqueue_smallest(z, order, mt);
	if (p)
		__mod_zone_freepage_state(z, -(1L << order), mt);
	spin_unlock_irqrestore(&z->lock, flags);
	return p;
}

/* free_one_page() without the checks. */
static inline void buddy_give(struct zone *z, struct mm *mm, struct page *p, unsigned int order, int mt)
{
	unsigned long flags;
	spin_lock_irqsave(&z->lock, flags);
	__free_one_page(z, p, page_to_pfn(mm, p), order, mt, FPI_NONE);
	spin_unlock_irqrestore(&z->lock, flags);
}

static void bench_buddy_pairs(struct bench_json *js)
{
	unsigned long loops = quick ? 500 : 200000;
	struct mm *mm = make_cfg(aligned_zone);
	struct zone *z = mm_zone(mm, ZONE_NORMAL);
	struct bench_result r;

	printf("\nbuddy alloc+free pair, no pcp (__rmqueue_smallest + __free_one_page under zone->lock),\n"
	       "one zone of 16 order-10 blocks\n");
	if (zone_nr_free(z, 10) != 16 || zone_free_pages(z) != 16384) {
		fprintf(stderr, "bench_buddy: the bench zone is not 16 free order-10 blocks\n");
		exit(1);
	}
	for (unsigned int order = 0; order <= 3; order += 3) {
		char key[64], label[96];
		/* Fresh zone: the smallest free block of the order is an order-10 block. */
		snprintf(key, sizeof(key), "buddy_order%u_split_merge", order);
		snprintf(label, sizeof(label), "order-%u pair, split from/merge to order 10", order);
		BENCH_MEASURE(&r, loops, {
			struct page *p = buddy_take(z, order, MIGRATE_MOVABLE);
			buddy_give(z, mm, p, order, MIGRATE_MOVABLE);
		});
		row(js, key, label, &r);

		/*
		 * Warm: free blocks of exactly this order whose buddies are in use.
		 * Take 256 blocks, give back every other one: the order's free list
		 * then holds 128 blocks that cannot merge.
		 */
		struct page *held[256];
		for (int i = 0; i < 256; i++)
			held[i] = buddy_take(z, order, MIGRATE_MOVABLE);
		for (int i = 0; i < 256; i += 2)
			buddy_give(z, mm, held[i], order, MIGRATE_MOVABLE);
		snprintf(key, sizeof(key), "buddy_order%u_no_split", order);
		snprintf(label, sizeof(label), "order-%u pair, no split or merge", order);
		BENCH_MEASURE(&r, loops, {
			struct page *p = buddy_take(z, order, MIGRATE_MOVABLE);
			buddy_give(z, mm, p, order, MIGRATE_MOVABLE);
		});
		row(js, key, label, &r);
		for (int i = 1; i < 256; i += 2)
			buddy_give(z, mm, held[i], order, MIGRATE_MOVABLE);
	}
	struct mm_violation v;
	if (!mm_check(mm, 3, &v)) {
		fprintf(stderr, "bench_buddy: the machine is inconsistent after the buddy loops: %s\n", v.msg);
		exit(1);
	}

	mm_destroy(mm);
	mm = make();
	printf("\nfor context: the public path (alloc_pages + __free_pages, every check), default config\n");
	static const struct {
		unsigned int order;
		const char *key, *label;
	} pub[] = {
		{ 0, "alloc_pages_order0_pcp", "alloc_pages order 0 (per-cpu lists)" },
		{ 3, "alloc_pages_order3_pcp", "alloc_pages order 3 (per-cpu lists)" },
		{ 4, "alloc_pages_order4_buddy", "alloc_pages order 4 (buddy)" },
	};
	for (unsigned int i = 0; i < ARRAY_SIZE(pub); i++) {
		for (int w = 0; w < 1000; w++)
			__free_pages(mm, alloc_pages(mm, GFP_KERNEL, pub[i].order), pub[i].order);
		BENCH_MEASURE(&r, loops, {
			struct page *p = alloc_pages(mm, GFP_KERNEL, pub[i].order);
			__free_pages(mm, p, pub[i].order);
		});
		row(js, pub[i].key, pub[i].label, &r);
	}
	mm_destroy(mm);
}

/* Half of memory allocated in mixed orders and types; the rest free and fragmented. */
static int half_fill(struct mm *mm, struct page **held, unsigned int *held_order, int cap)
{
	unsigned long pages = mm_nr_valid_pages(mm), got = 0;
	uint64_t x = 12345;
	int n = 0;
	while (got < pages / 2 && n < cap) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		unsigned int order = (unsigned int)(x % 4);
		struct page *p = alloc_pages(mm, (x & 16) ? GFP_KERNEL : GFP_HIGHUSER_MOVABLE, order);
		if (!p)
			break;
		held[n] = p;
		held_order[n++] = order;
		got += 1UL << order;
	}
	return n;
}

/* The fastest of @n timed calls of @op, each after an untimed @prep. */
static void time_calls(struct bench_result *r, unsigned long n, void (*prep)(void *), void (*op)(void *), void *arg)
{
	r->ns = 1e300;
	r->cycles = 0;
	for (unsigned long i = 0; i < n; i++) {
		if (prep)
			prep(arg);
		double t0 = bench_now_ns();
		uint64_t c0 = bench_rdtsc();
		op(arg);
		uint64_t c1 = bench_rdtsc();
		double t1 = bench_now_ns();
		if (t1 - t0 < r->ns) {
			r->ns = t1 - t0;
			r->cycles = (double)(c1 - c0);
		}
	}
	r->total_ns = r->ns;
}

struct check_arg {
	struct mm *mm;
	int level;
	bool ok;
	struct mm_violation v;
};
static void do_check(void *arg)
{
	struct check_arg *a = arg;
	a->ok &= mm_check(a->mm, a->level, &a->v);
}

static struct page *held[20000];
static unsigned int held_order[20000];

static void bench_checker(struct bench_json *js)
{
	struct mm *fresh = make(), *half = make();
	unsigned long pages = mm_nr_valid_pages(fresh);
	int n = half_fill(half, held, held_order, 20000);
	printf("\nmm_check cost per valid page (%lu pages, default config; level 1 min of %d runs, "
	       "levels 2-3 fastest single call)\n", pages, BENCH_RUNS);
	printf("  level 2 full: incremental off, every free list walked (what an op that touches every zone costs);\n"
	       "  level 2 incr: incremental on and nothing changed since the last walk (the signatures only);\n"
	       "  level 3: every pfn, W1 remembered for zone states that already passed (as between fuzz ops)\n");

	/* level, incremental (level 2 only), the row's name */
	static const struct { int level; bool incremental; const char *name; } rows[] = {
		{ 1, true, "1" }, { 2, false, "2 full" }, { 2, true, "2 incr" }, { 3, true, "3" },
	};
	for (int state = 0; state < 2; state++) {
		struct mm *m = state ? half : fresh;
		for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
			int level = rows[k].level;
			struct bench_result r;
			struct check_arg a = { .mm = m, .level = level, .ok = true };
			mm_check_set_incremental(m, rows[k].incremental);
			if (level == 1)
				BENCH_MEASURE(&r, quick ? 100 : 20000, { a.ok &= mm_check(m, 1, &a.v); });
			else
				time_calls(&r, quick ? 3 : level == 2 ? 300 : 100, NULL, do_check, &a);
			mm_check_set_incremental(m, true);
			if (!a.ok) {
				fprintf(stderr, "bench_buddy: mm_check level %d failed: %s\n", level, a.v.msg);
				exit(1);
			}
			double per_page = r.ns / (double)pages;
			printf("level %-6s %-14s %10.1f us per check  %8.3f ns per page  (%.0f cycles(tsc) per check)\n",
			       rows[k].name, state ? "half allocated" : "fresh", r.ns / 1e3, per_page, r.cycles);
			char key[64], tag[16];
			snprintf(tag, sizeof(tag), "%d%s", level, level == 2 && rows[k].incremental ? "_incremental" : "");
			snprintf(key, sizeof(key), "check_level%s_%s_ns_per_page", tag, state ? "half" : "fresh");
			bench_json_add(js, key, per_page);
			snprintf(key, sizeof(key), "check_level%s_%s_us_per_check", tag, state ? "half" : "fresh");
			bench_json_add(js, key, r.ns / 1e3);
		}
	}
	for (int i = 0; i < n; i++)
		__free_pages(half, held[i], held_order[i]);
	mm_destroy(half);
	mm_destroy(fresh);
}

static void dirty_half(void *arg)
{
	half_fill(arg, held, held_order, 20000);   /* leaked on purpose: the reset takes it back */
}
static void do_reset(void *arg)
{
	mm_reset(arg);
}
static void do_recreate(void *arg)
{
	(void)arg;
	mm_destroy(make());
}

static void bench_reset(struct bench_json *js)
{
	unsigned long n = quick ? 3 : 200;
	struct bench_result dirty, clean, recreate;
	printf("\nmm_reset vs mm_destroy + mm_create (default config; fastest of %lu calls)\n", n);

	struct mm *mm = make();
	time_calls(&dirty, n, dirty_half, do_reset, mm);
	time_calls(&clean, n, NULL, do_reset, mm);
	mm_destroy(mm);
	time_calls(&recreate, n, NULL, do_recreate, NULL);

	printf("%-46s %10.1f us  (%.0f cycles(tsc))\n", "mm_reset, half of memory allocated", dirty.ns / 1e3,
	       dirty.cycles);
	printf("%-46s %10.1f us  (%.0f cycles(tsc))\n", "mm_reset, nothing allocated", clean.ns / 1e3, clean.cycles);
	printf("%-46s %10.1f us  (%.0f cycles(tsc))\n", "mm_destroy + mm_create", recreate.ns / 1e3, recreate.cycles);
	printf("%-46s %10.1fx\n", "destroy+create / reset (half allocated)", recreate.ns / dirty.ns);
	bench_json_add(js, "reset_half_allocated_us", dirty.ns / 1e3);
	bench_json_add(js, "reset_clean_us", clean.ns / 1e3);
	bench_json_add(js, "destroy_create_us", recreate.ns / 1e3);
	bench_json_add(js, "destroy_create_over_reset", recreate.ns / dirty.ns);
}

int main(int argc, char **argv)
{
	const char *json = NULL;
	bench_parse_args(argc, argv, "bench_buddy",
			 "  buddy alloc+free pairs without the pcp, mm_check cost per page at levels 1-3,\n"
			 "  mm_reset against mm_destroy + mm_create (default config)",
			 &json, &quick, NULL);
	bench_calibrate();
	struct bench_json *js = bench_json_open(json, "buddy");
	printf("# bench_buddy%s\n", quick ? " --quick (smoke run: the numbers mean nothing)" : "");
	bench_print_machine();
	bench_buddy_pairs(js);
	bench_checker(js);
	bench_reset(js);
	bench_json_close(js);
	return 0;
}

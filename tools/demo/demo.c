/* SPDX-License-Identifier: MIT */
/*
 * demo.c - the workload behind `./mmfuzz run` until the fuzz and stress
 * campaign replaces it: one default instance, a mixed page workload for a
 * few seconds, the checker after every operation, the /proc-style dumps and
 * the checker's verdict at the end.
 *
 * It drives the allocator only through its public API (mm/mm.h) and keeps
 * its own small shadow of what it holds, so it checks what a client can:
 *  - every block is inside the span of a zone its gfp allows, aligned to its
 *    order, and disjoint from every other live block (a pfn bitmap: C1);
 *  - __GFP_ZERO blocks are zero; every page keeps the tag written into it
 *    until it is freed;
 *  - the checker (mm_check) is clean: level 1 after every operation, level 3
 *    (exhaustive, B4 conservation counted through the client walker) every
 *    --full-every operations and at the end;
 *  - after freeing everything and draining the pcp lists, every managed page
 *    is free again (NR_FREE_PAGES per zone as at creation).  buddyinfo is
 *    printed but need not be identical: a MIGRATE_HIGHATOMIC pageblock does
 *    not merge with a neighbour of another type (Linux 6.6 __free_one_page).
 * A shrinker over a "page cache" share of the workload makes the slow path's
 * reclaim run during pressure phases.
 *
 * Usage: mmfuzz-demo [--seconds S] [--ops N] [--seed N] [--full-every K] [--quiet]
 * The same --seed and --ops replay the same run exactly (--seconds 0 --ops N).
 * Exit status: 0 clean, 1 a check failed, 2 bad arguments.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mm/mm.h"

#define MAX_LIVE  4096          /* blocks the demo holds at most */
#define PHASE_OPS 20000         /* operations per workload phase */

struct block {
	struct page *page;
	unsigned long pfn;
	unsigned int order;
	gfp_t gfp;
	uint64_t tag;               /* written at both ends of every page */
	bool cache;                 /* reclaimable by the demo's shrinker */
};

enum phase { PH_MIXED, PH_PRESSURE, PH_DRAIN, NR_PHASES };
static const char *const phase_name[NR_PHASES] = { "mixed", "pressure", "drain" };

struct demo {
	struct mm *mm;
	struct mm_config cfg;
	struct block live[MAX_LIVE];
	unsigned int nr_live;
	unsigned long live_pages;
	uint8_t *held;              /* one bit per pfn held by the demo */
	uint64_t rng;
	uint64_t next_tag;
	/* statistics */
	unsigned long ops, allocs, frees, fails, zeroed, full_checks, shrunk;
	unsigned long per_order[MM_NR_ORDERS_LIMIT];
	int errors;
};

static uint64_t rnd(struct demo *d)              /* xorshift64* */
{
	d->rng ^= d->rng >> 12;
	d->rng ^= d->rng << 25;
	d->rng ^= d->rng >> 27;
	return d->rng * 0x2545F4914F6CDD1DULL;
}
static unsigned int rnd_below(struct demo *d, unsigned int n) { return (unsigned int)(rnd(d) % n); }

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void fail(struct demo *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct demo *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "mmfuzz-demo: FAIL after %lu ops: ", d->ops);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	d->errors++;
}

static bool held_test(const struct demo *d, unsigned long pfn) { return d->held[pfn / 8] & (1u << (pfn % 8)); }
static void held_flip(struct demo *d, unsigned long pfn) { d->held[pfn / 8] ^= (uint8_t)(1u << (pfn % 8)); }

/* B4 needs what the client holds: report every live block. */
static void walk_client(void *ctx, mm_mark_fn mark, void *w)
{
	struct demo *d = ctx;
	for (unsigned int i = 0; i < d->nr_live; i++)
		mark(w, d->live[i].pfn, 1UL << d->live[i].order);
}

static bool check(struct demo *d, int level)
{
	struct mm_violation v;
	if (level >= 3)
		d->full_checks++;
	if (mm_check(d->mm, level, &v))
		return true;
	fail(d, "mm_check(level %d): %s", level, v.msg);
	return false;
}

/* The highest zone a gfp may use (gfp_zone), and so the pfn span allowed. */
static enum zone_type gfp_highest_zone(gfp_t gfp)
{
	if (gfp & __GFP_DMA)
		return ZONE_DMA;
	if (gfp & __GFP_DMA32)
		return ZONE_DMA32;
	if ((gfp & (__GFP_HIGHMEM | __GFP_MOVABLE)) == (__GFP_HIGHMEM | __GFP_MOVABLE))
		return ZONE_MOVABLE;
	return ZONE_NORMAL;
}

static bool pfn_in_allowed_zone(const struct demo *d, unsigned long pfn, gfp_t gfp)
{
	for (int z = 0; z <= (int)gfp_highest_zone(gfp); z++) {
		const struct mm_span *s = &d->cfg.zones[z];
		if (pfn >= s->start_pfn && pfn < s->end_pfn)
			return true;
	}
	return false;
}

static void tag_block(struct demo *d, const struct block *b, bool verify)
{
	unsigned long nr = 1UL << b->order;
	uint8_t *base = page_address(d->mm, b->page);
	for (unsigned long i = 0; i < nr; i++) {
		uint64_t *head = (uint64_t *)(base + i * MM_PAGE_SIZE);
		uint64_t *tail = (uint64_t *)(base + (i + 1) * MM_PAGE_SIZE) - 1;
		uint64_t want = b->tag ^ (i * 0x9E3779B97F4A7C15ULL);
		if (!verify) {
			*head = want;
			*tail = ~want;
		} else if (*head != want || *tail != ~want) {
			fail(d, "pfn %lu (block pfn %lu order %u): contents changed while allocated",
			     b->pfn + i, b->pfn, b->order);
			return;
		}
	}
}

static unsigned int pick_order(struct demo *d)
{
	unsigned int r = rnd_below(d, 100), max = d->cfg.max_order;
	unsigned int o = r < 55 ? 0 : r < 80 ? 1 + rnd_below(d, 3) : r < 95 ? 4 + rnd_below(d, 4) : 8 + rnd_below(d, 3);
	return o > max ? max : o;
}

static gfp_t pick_gfp(struct demo *d)
{
	static const gfp_t base[] = {
		GFP_KERNEL, GFP_KERNEL, GFP_KERNEL, GFP_HIGHUSER_MOVABLE, GFP_HIGHUSER_MOVABLE,
		GFP_ATOMIC, GFP_NOWAIT, GFP_KERNEL | __GFP_DMA32, GFP_KERNEL | __GFP_DMA,
		GFP_KERNEL | __GFP_RECLAIMABLE,
	};
	gfp_t gfp = base[rnd_below(d, sizeof(base) / sizeof(base[0]))];
	if (rnd_below(d, 8) == 0)
		gfp |= __GFP_ZERO;
	if (rnd_below(d, 4) == 0)
		gfp |= __GFP_COMP;
	return gfp | __GFP_NOWARN;
}

static void do_alloc(struct demo *d)
{
	if (d->nr_live == MAX_LIVE)
		return;
	unsigned int order = pick_order(d);
	gfp_t gfp = pick_gfp(d);
	struct page *page = alloc_pages(d->mm, gfp, order);
	d->allocs++;
	if (!page) {
		d->fails++;
		return;
	}
	struct block *b = &d->live[d->nr_live];
	*b = (struct block){ .page = page, .order = order, .gfp = gfp, .tag = ++d->next_tag * 0xD1B54A32D192ED03ULL,
			     .cache = rnd_below(d, 3) == 0 };
	b->pfn = page_to_pfn(d->mm, page);
	unsigned long nr = 1UL << order;

	/* Client's view (C1): aligned, allowed zone, disjoint from what we hold. */
	if (b->pfn & (nr - 1))
		fail(d, "order-%u block at pfn %lu is not aligned to its order", order, b->pfn);
	if (!pfn_in_allowed_zone(d, b->pfn, gfp) || !pfn_in_allowed_zone(d, b->pfn + nr - 1, gfp))
		fail(d, "order-%u block at pfn %lu is outside the zones gfp %#x allows", order, b->pfn, gfp);
	if (virt_to_page(d->mm, page_address(d->mm, page)) != page)
		fail(d, "virt_to_page(page_address(pfn %lu)) is not the page", b->pfn);
	for (unsigned long i = 0; i < nr; i++) {
		if (b->pfn + i >= mm_end_pfn(d->mm) || !pfn_valid(d->mm, b->pfn + i)) {
			fail(d, "pfn %lu of an order-%u block is not a valid pfn", b->pfn + i, order);
			break;
		}
		if (held_test(d, b->pfn + i)) {
			fail(d, "pfn %lu handed out twice (order-%u block at %lu)", b->pfn + i, order, b->pfn);
			break;
		}
		held_flip(d, b->pfn + i);
	}
	if (d->errors)
		return;
	if (gfp & __GFP_ZERO) {
		const uint64_t *w = page_address(d->mm, page);
		for (unsigned long i = 0; i < nr * MM_PAGE_SIZE / sizeof(*w); i++)
			if (w[i]) {
				fail(d, "__GFP_ZERO block at pfn %lu has a non-zero word at byte %lu",
				     b->pfn, i * (unsigned long)sizeof(*w));
				break;
			}
		d->zeroed++;
	}
	tag_block(d, b, false);
	d->nr_live++;
	d->live_pages += nr;
	d->per_order[order]++;
}

static void free_at(struct demo *d, unsigned int i)
{
	struct block b = d->live[i];
	tag_block(d, &b, true);
	for (unsigned long j = 0; j < (1UL << b.order); j++)
		held_flip(d, b.pfn + j);
	d->live[i] = d->live[--d->nr_live];
	d->live_pages -= 1UL << b.order;
	__free_pages(d->mm, b.page, b.order);
	d->frees++;
}

/* The demo's "page cache": blocks marked cache are reclaimable. */
static unsigned long cache_count(struct shrinker *s, struct shrink_control *sc)
{
	struct demo *d = s->private_data;
	unsigned long n = 0;
	for (unsigned int i = 0; i < d->nr_live; i++)
		n += d->live[i].cache;
	return n;
}

static unsigned long cache_scan(struct shrinker *s, struct shrink_control *sc)
{
	struct demo *d = s->private_data;
	unsigned long freed = 0;
	for (unsigned int i = d->nr_live; i-- > 0 && freed < sc->nr_to_scan;)
		if (d->live[i].cache) {
			free_at(d, i);
			freed++;
		}
	d->shrunk += freed;
	return freed ? freed : SHRINK_STOP;
}

static void progress(struct demo *d, double t, enum phase ph)
{
	printf("[%5.1fs] %-8s ops %9lu  allocs %9lu  frees %9lu  failed %7lu  live %4u blocks %6lu pages  reclaimed %6lu  full checks %lu\n",
	       t, phase_name[ph], d->ops, d->allocs, d->frees, d->fails, d->nr_live, d->live_pages, d->shrunk,
	       d->full_checks);
	fflush(stdout);
}

static void snapshot(struct demo *d, unsigned long buddy[MAX_NR_ZONES][MM_NR_ORDERS_LIMIT],
		     long free_pages[MAX_NR_ZONES])
{
	memset(buddy, 0, sizeof(unsigned long) * MAX_NR_ZONES * MM_NR_ORDERS_LIMIT);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = mm_zone(d->mm, (enum zone_type)z);
		free_pages[z] = zone ? zone_free_pages(zone) : 0;
		for (unsigned int o = 0; zone && o <= d->cfg.max_order; o++)
			buddy[z][o] = zone_nr_free(zone, o);
	}
}

static int usage(const char *argv0)
{
	fprintf(stderr, "usage: %s [--seconds S] [--ops N] [--seed N] [--full-every K] [--quiet]\n", argv0);
	return 2;
}

int main(int argc, char **argv)
{
	static struct demo demo;
	struct demo *d = &demo;
	double seconds = 5;
	uint64_t seed = 1;
	unsigned long full_every = 1000, max_ops = 0;
	bool quiet = false;
	char err[256];

	for (int i = 1; i < argc; i++) {
		char *end = NULL;
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
			seconds = strtod(argv[++i], &end);
			if (*end || seconds < 0)
				return usage(argv[0]);
		} else if (!strcmp(argv[i], "--ops") && i + 1 < argc) {
			max_ops = strtoul(argv[++i], &end, 0);
			if (*end)
				return usage(argv[0]);
		} else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			seed = strtoull(argv[++i], &end, 0);
			if (*end)
				return usage(argv[0]);
		} else if (!strcmp(argv[i], "--full-every") && i + 1 < argc) {
			full_every = strtoul(argv[++i], &end, 0);
			if (*end || full_every == 0)
				return usage(argv[0]);
		} else if (!strcmp(argv[i], "--quiet")) {
			quiet = true;
		} else {
			return usage(argv[0]);
		}
	}

	setvbuf(stdout, NULL, _IOLBF, 0);   /* progress and FAIL lines in order when piped */
	mm_config_default(&d->cfg);
	d->mm = mm_create(&d->cfg, err, sizeof(err));
	if (!d->mm) {
		fprintf(stderr, "mmfuzz-demo: mm_create: %s\n", err);
		return 1;
	}
	d->rng = seed * 0x9E3779B97F4A7C15ULL + 1;
	d->held = calloc(mm_end_pfn(d->mm) / 8 + 1, 1);
	if (!d->held) {
		fprintf(stderr, "mmfuzz-demo: out of memory\n");
		return 1;
	}
	mm_set_client_walker(d->mm, walk_client, d);
	struct shrinker shrinker = { .count_objects = cache_count, .scan_objects = cache_scan, .private_data = d };
	register_shrinker(d->mm, &shrinker);

	unsigned long initial[MAX_NR_ZONES][MM_NR_ORDERS_LIMIT], final[MAX_NR_ZONES][MM_NR_ORDERS_LIMIT];
	long initial_free[MAX_NR_ZONES], final_free[MAX_NR_ZONES];
	snapshot(d, initial, initial_free);
	printf("mmfuzz-demo: default instance: %lu valid pages (pfn %lu..%lu), %u vCPUs, max_order %u, seed %" PRIu64 "\n",
	       mm_nr_valid_pages(d->mm), mm_first_pfn(d->mm), mm_end_pfn(d->mm) - 1, d->cfg.nr_cpus,
	       d->cfg.max_order, seed);
	printf("\n/proc/buddyinfo at creation:\n");
	mm_dump_buddyinfo(d->mm, stdout);
	printf("\n");
	check(d, 3);

	/* The workload: phases of mixed traffic, pressure (fill the zones to their
	 * watermarks, so the slow path reclaims through the shrinker), drain. */
	double t0 = now(), next_report = 1.0, t = 0;
	enum phase ph = PH_MIXED;
	unsigned long phase_ops = 0;
	if (max_ops && seconds == 0)
		seconds = 1e9;      /* --seconds 0 --ops N: exactly N ops, however long */
	while (!d->errors && (t = now() - t0) < seconds && (!max_ops || d->ops < max_ops)) {
		static const unsigned int alloc_pct[NR_PHASES] = { 55, 90, 15 };
		if (d->nr_live && rnd_below(d, 100) >= alloc_pct[ph])
			free_at(d, rnd_below(d, d->nr_live));
		else
			do_alloc(d);
		d->ops++;
		if (d->errors)
			break;
		check(d, d->ops % full_every ? 1 : 3);
		if (++phase_ops == PHASE_OPS) {
			phase_ops = 0;
			ph = (enum phase)((ph + 1) % NR_PHASES);
		}
		if (!quiet && t >= next_report) {
			progress(d, t, ph);
			next_report += 1.0;
		}
	}
	if (!quiet)
		progress(d, t, ph);

	printf("\n/proc/buddyinfo under load (%u blocks, %lu pages held):\n", d->nr_live, d->live_pages);
	mm_dump_buddyinfo(d->mm, stdout);

	/* Teardown: everything back, then the instance must be as created. */
	while (d->nr_live && !d->errors)
		free_at(d, d->nr_live - 1);
	drain_all_pages(d->mm, NULL);
	if (!d->errors)
		check(d, 3);
	snapshot(d, final, final_free);
	for (int z = 0; z < MAX_NR_ZONES && !d->errors; z++)
		if (final_free[z] != initial_free[z])
			fail(d, "zone %d: %ld free pages after freeing everything, %ld at creation",
			     z, final_free[z], initial_free[z]);

	printf("\n/proc/buddyinfo after freeing everything (%s buddyinfo at creation):\n",
	       memcmp(initial, final, sizeof(initial)) ? "differs from" : "identical to");
	mm_dump_buddyinfo(d->mm, stdout);
	printf("\n/proc/zoneinfo:\n");
	mm_dump_zoneinfo(d->mm, stdout);

	printf("\nallocations by order:");
	for (unsigned int o = 0; o <= d->cfg.max_order; o++)
		printf(" %u:%lu", o, d->per_order[o]);
	printf("\nmmfuzz-demo: %lu ops in %.1fs (%.0f ops/s), %lu allocs (%lu failed, %lu zeroed), %lu frees, "
	       "%lu reclaimed by the shrinker, %lu full checks, %lu allocator reports\n",
	       d->ops, t, t > 0 ? (double)d->ops / t : 0.0, d->allocs, d->fails, d->zeroed, d->frees, d->shrunk,
	       d->full_checks, mm_nr_reports(d->mm));
	if (mm_nr_reports(d->mm)) {
		fail(d, "the allocator reported bad input: %s", mm_last_report(d->mm)->msg);
	}
	printf("mmfuzz-demo: checker verdict: %s\n", d->errors ? "VIOLATIONS FOUND" : "clean");
	if (d->errors)
		printf("mmfuzz-demo: replay: %s --seconds 0 --ops %lu --seed %" PRIu64 " --full-every 1\n",
		       argv[0], d->ops, seed);

	unregister_shrinker(d->mm, &shrinker);
	mm_destroy(d->mm);
	free(d->held);
	return d->errors ? 1 : 0;
}

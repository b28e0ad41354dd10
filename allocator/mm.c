/* SPDX-License-Identifier: MIT */
/*
 * mm.c - instances: configuration, validation, create / destroy / reset.
 *
 * mm_create() follows the kernel's boot order: zone spans and holes
 * (free_area_init), the memmap (memmap_init), release of every valid page
 * to the buddy allocator (memblock_free_all), then watermarks and lowmem
 * reserves (init_per_zone_wmark_min), then the per-cpu page lists.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "page/pcp.h"

static const char *const zone_names[MAX_NR_ZONES] = { "DMA", "DMA32", "Normal", "Movable" };

void mm_config_default(struct mm_config *c)
{
	memset(c, 0, sizeof(*c));
	c->nr_cpus = 4;
	c->max_order = 10;                 /* MAX_PAGE_ORDER, x86-64 default */
	c->pageblock_order = 9;
	/* Unaligned boundaries on purpose: zones need not be MAX_ORDER aligned. */
	c->zones[ZONE_DMA]     = (struct mm_span){ 1, 4096 };
	c->zones[ZONE_DMA32]   = (struct mm_span){ 4096, 12288 };
	c->zones[ZONE_NORMAL]  = (struct mm_span){ 12288, 20000 };
	c->zones[ZONE_MOVABLE] = (struct mm_span){ 20000, 24576 };
	c->nr_holes = 2;
	c->holes[0] = (struct mm_span){ 6000, 6100 };
	c->holes[1] = (struct mm_span){ 14000, 14017 };
	c->watermark_scale_factor = 10;
	c->lowmem_reserve_ratio[ZONE_DMA] = 256;
	c->lowmem_reserve_ratio[ZONE_DMA32] = 256;
	c->lowmem_reserve_ratio[ZONE_NORMAL] = 32;
	c->lowmem_reserve_ratio[ZONE_MOVABLE] = 0;
	c->wmark_algo = MM_WMARK_MODERN;
	c->bad_policy = MM_BAD_REPORT;
}

void mm_config_tiny(struct mm_config *c)
{
	mm_config_default(c);
	c->nr_cpus = 2;
	c->max_order = 7;
	c->pageblock_order = 5;
	c->zones[ZONE_DMA]     = (struct mm_span){ 3, 300 };
	c->zones[ZONE_DMA32]   = (struct mm_span){ 300, 700 };
	c->zones[ZONE_NORMAL]  = (struct mm_span){ 700, 1250 };
	c->zones[ZONE_MOVABLE] = (struct mm_span){ 1250, 1500 };
	c->nr_holes = 1;
	c->holes[0] = (struct mm_span){ 900, 937 };
}

int mm_fail(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int mm_config_validate(const struct mm_config *c, char *err, size_t errlen)
{
	if (!err)
		errlen = 0;             /* the checks below write with snprintf(err, errlen, ...) */
	if (!c)
		return mm_fail(err, errlen, "config: NULL");
	if (c->nr_cpus < 1 || c->nr_cpus > MM_MAX_CPUS)
		return mm_fail(err, errlen, "config: nr_cpus %u out of range 1..%d", c->nr_cpus, MM_MAX_CPUS);
	if (c->max_order > MM_MAX_ORDER_LIMIT)
		return mm_fail(err, errlen, "config: max_order %u out of range 0..%d", c->max_order, MM_MAX_ORDER_LIMIT);
	if (c->pageblock_order > c->max_order)
		return mm_fail(err, errlen, "config: pageblock_order %u larger than max_order %u",
			    c->pageblock_order, c->max_order);

	unsigned long first = ~0UL, last = 0, pages = 0;
	int prev = -1;
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		const struct mm_span *s = &c->zones[z];
		if (s->end_pfn < s->start_pfn)
			return mm_fail(err, errlen, "config: zone %s span [%lu, %lu) ends before it starts",
				    zone_names[z], s->start_pfn, s->end_pfn);
		if (s->end_pfn == s->start_pfn)
			continue;
		if (s->end_pfn > (~0UL >> MM_PAGE_SHIFT) - (2UL << MM_MAX_ORDER_LIMIT))
			return mm_fail(err, errlen, "config: zone %s ends at pfn %lu, beyond the address space",
				    zone_names[z], s->end_pfn);
		if (prev >= 0 && s->start_pfn < c->zones[prev].end_pfn)
			return mm_fail(err, errlen, "config: zones %s [%lu, %lu) and %s [%lu, %lu) overlap or are out of order",
				    zone_names[prev], c->zones[prev].start_pfn, c->zones[prev].end_pfn,
				    zone_names[z], s->start_pfn, s->end_pfn);
		prev = z;
		first = MIN(first, s->start_pfn);
		last = MAX(last, s->end_pfn);
		pages += s->end_pfn - s->start_pfn;
	}
	if (pages == 0)
		return mm_fail(err, errlen, "config: zero pages (every zone span is empty)");
	if (last - first > MM_MAX_SPAN_PAGES)
		return mm_fail(err, errlen, "config: memory spans %lu pages, more than the limit %lu",
			    last - first, MM_MAX_SPAN_PAGES);

	if (c->nr_holes > MM_MAX_HOLES)
		return mm_fail(err, errlen, "config: nr_holes %u larger than %d", c->nr_holes, MM_MAX_HOLES);
	unsigned long hole_pages = 0;
	for (unsigned int i = 0; i < c->nr_holes; i++) {
		const struct mm_span *h = &c->holes[i];
		if (h->end_pfn <= h->start_pfn)
			return mm_fail(err, errlen, "config: hole %u [%lu, %lu) is empty or reversed", i,
				    h->start_pfn, h->end_pfn);
		int inside = -1;
		for (int z = 0; z < MAX_NR_ZONES; z++)
			if (h->start_pfn >= c->zones[z].start_pfn && h->end_pfn <= c->zones[z].end_pfn &&
			    c->zones[z].end_pfn > c->zones[z].start_pfn)
				inside = z;
		if (inside < 0)
			return mm_fail(err, errlen, "config: hole %u [%lu, %lu) is not inside one zone's span", i,
				    h->start_pfn, h->end_pfn);
		for (unsigned int j = 0; j < i; j++)
			if (h->start_pfn < c->holes[j].end_pfn && c->holes[j].start_pfn < h->end_pfn)
				return mm_fail(err, errlen, "config: holes %u and %u overlap", j, i);
		hole_pages += h->end_pfn - h->start_pfn;
	}
	if (hole_pages >= pages)
		return mm_fail(err, errlen, "config: zero pages (holes cover every zone)");

	if (c->min_free_kbytes > (pages - hole_pages) * (MM_PAGE_SIZE / 1024))
		return mm_fail(err, errlen, "config: min_free_kbytes %lu is more than all memory (%lu kB)",
			    c->min_free_kbytes, (pages - hole_pages) * (MM_PAGE_SIZE / 1024));
	if (c->watermark_scale_factor > 3000)
		return mm_fail(err, errlen, "config: watermark_scale_factor %u out of range 0..3000 (0: default 10)",
			    c->watermark_scale_factor);
	if (c->wmark_algo != MM_WMARK_MODERN && c->wmark_algo != MM_WMARK_2008)
		return mm_fail(err, errlen, "config: wmark_algo %d unknown", (int)c->wmark_algo);
	if (c->bad_policy != MM_BAD_REPORT && c->bad_policy != MM_BAD_ABORT)
		return mm_fail(err, errlen, "config: bad_policy %d unknown", (int)c->bad_policy);
	if (c->debug > 3)
		return mm_fail(err, errlen, "config: debug %u out of range 0..3", c->debug);
	return pcp_config_validate(c, err, errlen);
}

/* free_area_init_core(): spans, present pages, empty free lists. */
static size_t zone_pageblock_bytes(const struct mm *mm, const struct zone *zone)
{
	return zone->pageblock_flags ?
	       ((zone_end_pfn(zone) - zone->pageblock_base_pfn) >> mm->pageblock_order) + 1 : 0;
}

/*
 * build_all_zonelists()'s switch: grouping by mobility is off when the
 * machine has fewer pages than pageblock_nr_pages * MIGRATE_TYPES, counted
 * as vm_total_pages is at boot - nr_free_zone_pages() of every zone, when
 * a zone's managed pages are still free_area_init_core()'s estimate
 * (present pages less calc_memmap_size()'s pages for a 64-byte struct
 * page, SPARSEMEM) and no zone has watermarks yet.  The kernel prints it
 * as "mobility grouping off".
 */
static bool mobility_grouping_disabled(const struct mm *mm)
{
	unsigned long total = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++) {
		const struct zone *zone = &mm->zones[z];
		unsigned long pages = zone->spanned_pages, present = zone->present_pages;
		if (pages > present + (present >> 4))
			pages = present;
		unsigned long memmap_pages = (pages * 64 + MM_PAGE_SIZE - 1) / MM_PAGE_SIZE;
		if (present >= memmap_pages)
			total += present - memmap_pages;
	}
	return total < pageblock_nr_pages(mm) * MIGRATE_TYPES;
}

/*
 * The types the pageblocks start with, as 6.6's memmap_init_range() sets
 * them: MIGRATE_MOVABLE through each pageblock's first pfn, and only when
 * that pfn is memory (a pfn memmap_init_range() initialises).  A
 * pageblock whose first pfn is a hole, or lies before the first pfn of
 * memory, keeps the zeroed bitmap's MIGRATE_UNMOVABLE, and its boot pages
 * go to the unmovable lists (on x86 /proc/pagetypeinfo shows one
 * Unmovable block in DMA, whose pfn 0 is not memory).  The usemap is per
 * section (SPARSEMEM), shared by the zones a pageblock straddles, so the
 * first pfn counts whichever zone it is memory of.  Grouping by mobility
 * plays no part: build_all_zonelists() switches it off only after
 * memmap_init() ran, so even then set_pageblock_migratetype() stored
 * MOVABLE, and only later changes of type become unmovable.  (helper-51's
 * review, bench/results/reviews-6.6/boot-cpu.md F1.)
 */
static void pageblock_set_boot_types(struct mm *mm, struct zone *zone)
{
	size_t n = zone_pageblock_bytes(mm, zone);

	for (size_t b = 0; b < n; b++) {
		unsigned long pfn = zone->pageblock_base_pfn + ((unsigned long)b << mm->pageblock_order);
		atomic_store_explicit(&zone->pageblock_flags[b],
				      __pfn_valid(mm, pfn) ? MIGRATE_MOVABLE : MIGRATE_UNMOVABLE,
				      memory_order_relaxed);
	}
}

static int zones_init(struct mm *mm, char *err, size_t errlen)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		memset(zone, 0, sizeof(*zone));
		zone->mm = mm;
		zone->idx = z;
		zone->name = zone_names[z];
		zone->zone_start_pfn = mm->cfg.zones[z].start_pfn;
		zone->spanned_pages = mm->cfg.zones[z].end_pfn - mm->cfg.zones[z].start_pfn;
		spin_lock_init(&zone->lock);
		for (unsigned int o = 0; o < MM_NR_ORDERS_LIMIT; o++)
			for (int mt = 0; mt < MIGRATE_TYPES; mt++)
				INIT_LIST_HEAD(&zone->free_area[o].free_list[mt]);
		if (!zone->spanned_pages)
			continue;
		for (unsigned long pfn = zone->zone_start_pfn; pfn < zone_end_pfn(zone); pfn++)
			zone->present_pages += __pfn_valid(mm, pfn);
		zone->pageblock_base_pfn = zone->zone_start_pfn & ~(pageblock_nr_pages(mm) - 1);
		unsigned long nblocks = ((zone_end_pfn(zone) - zone->pageblock_base_pfn) >> mm->pageblock_order) + 1;
		zone->pageblock_flags = malloc(nblocks);
		if (!zone->pageblock_flags)
			return mm_fail(err, errlen, "out of memory for pageblock flags");
		pageblock_set_boot_types(mm, zone);
	}
	mm->page_group_by_mobility_disabled = mobility_grouping_disabled(mm);
	return 0;
}

/*
 * memblock_free_all() / __free_pages_memory(): release every run of valid
 * pfns in the largest naturally aligned blocks that fit, so the buddy
 * allocator merges them as far as alignment and holes allow.
 */
void mm_free_all_memory(struct mm *mm)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		unsigned long pfn = zone->zone_start_pfn, end = zone_end_pfn(zone);
		while ((pfn = memmap_next_valid(mm, pfn, end)) < end) {
			/* the largest aligned block of valid pfns that starts here */
			unsigned int order = pfn ? (unsigned int)__builtin_ctzl(pfn) : mm->max_order;
			order = MIN(order, mm->max_order);
			while (pfn + (1UL << order) > end ||
			       memmap_next_hole(mm, pfn, pfn + (1UL << order)) < pfn + (1UL << order))
				order--;
			zone_free_page_range(zone, pfn, order, MIGRATE_MOVABLE);
			pfn += 1UL << order;
		}
	}
}


/* ---------------------------------------------------------------- reset */

/*
 * The state mm_create() leaves after memblock_free_all() - every struct
 * page, every free list and zone counter, every pageblock's type - copied
 * once, so that mm_reset() puts it back with memcpy instead of building it
 * again page by page through the free path.  Fuzz targets reset after every
 * input: on a small machine this is most of an input's cost otherwise.  The
 * free lists' pointers stay valid because the memmap and the zones do not
 * move.  (Tests compare a reset instance with a fresh one: test_meminit,
 * and the fuzz harness after every input.)
 */
struct mm_pfn_run {
	unsigned long start, end;
};

struct mm_zone_snapshot {
	struct free_area free_area[MM_NR_ORDERS_LIMIT];
	long vm_stat[NR_VM_ZONE_STAT_ITEMS];
	long managed_pages;
	size_t pageblock_bytes;
	unsigned char *pageblock_flags;
};

struct mm_boot_snapshot {
	struct mm_pfn_run *runs;          /* maximal runs of valid pfns */
	unsigned long nr_runs;
	struct page *pages;               /* [nr_valid], run after run */
	struct mm_zone_snapshot zone[MAX_NR_ZONES];
};

static void boot_snapshot_free(struct mm_boot_snapshot *b)
{
	if (!b)
		return;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		free(b->zone[z].pageblock_flags);
	free(b->runs);
	free(b->pages);
	free(b);
}

/* Without memory for the copy mm_reset() rebuilds the state instead: slower, the same. */
static void boot_snapshot_take(struct mm *mm)
{
	struct mm_boot_snapshot *b = calloc(1, sizeof(*b));
	unsigned long nr_runs = 0, k = 0;

	if (!b)
		return;
	for (unsigned long pfn = mm->first_pfn; pfn < mm->end_pfn; pfn++)
		if (__pfn_valid(mm, pfn) && (pfn == mm->first_pfn || !__pfn_valid(mm, pfn - 1)))
			nr_runs++;
	b->runs = calloc(nr_runs ? nr_runs : 1, sizeof(*b->runs));
	b->pages = malloc((mm->nr_valid ? mm->nr_valid : 1) * sizeof(struct page));
	if (!b->runs || !b->pages)
		goto fail;
	for (unsigned long pfn = mm->first_pfn; pfn < mm->end_pfn; pfn++) {
		if (!__pfn_valid(mm, pfn))
			continue;
		if (pfn == mm->first_pfn || !__pfn_valid(mm, pfn - 1))
			b->runs[b->nr_runs++].start = pfn;
		b->runs[b->nr_runs - 1].end = pfn + 1;
	}
	for (unsigned long r = 0; r < b->nr_runs; r++) {
		unsigned long n = b->runs[r].end - b->runs[r].start;
		memcpy(&b->pages[k], __pfn_to_page(mm, b->runs[r].start), n * sizeof(struct page));
		k += n;
	}
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		struct mm_zone_snapshot *zs = &b->zone[z];
		memcpy(zs->free_area, zone->free_area, sizeof(zs->free_area));
		for (int i = 0; i < NR_VM_ZONE_STAT_ITEMS; i++)
			zs->vm_stat[i] = atomic_load(&zone->vm_stat[i]);
		zs->managed_pages = atomic_load(&zone->managed_pages);
		zs->pageblock_bytes = zone_pageblock_bytes(mm, zone);
		if (zs->pageblock_bytes) {
			zs->pageblock_flags = malloc(zs->pageblock_bytes);
			if (!zs->pageblock_flags)
				goto fail;
			memcpy(zs->pageblock_flags, (void *)zone->pageblock_flags, zs->pageblock_bytes);
		}
	}
	mm->boot = b;
	return;
fail:
	boot_snapshot_free(b);
}

/*
 * The memmap, free lists, counters and pageblock types as mm_create() left
 * them.  @poison: frames may be unpoisoned (something was allocated when the
 * reset came); otherwise the free path has poisoned every one already, and
 * re-poisoning a large arena's shadow would cost more than the rest.
 */
static void boot_snapshot_restore(struct mm *mm, bool poison)
{
	struct mm_boot_snapshot *b = mm->boot;
	unsigned long k = 0;

	for (unsigned long r = 0; r < b->nr_runs; r++) {
		unsigned long n = b->runs[r].end - b->runs[r].start;
		memcpy(__pfn_to_page(mm, b->runs[r].start), &b->pages[k], n * sizeof(struct page));
		/* Free memory is poisoned, as zone_free_page_range() leaves it at boot. */
		if (poison)
			kasan_poison(__page_address(mm, b->runs[r].start), n << MM_PAGE_SHIFT);
		k += n;
	}
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		struct mm_zone_snapshot *zs = &b->zone[z];
		memcpy(zone->free_area, zs->free_area, sizeof(zs->free_area));
		for (int i = 0; i < NR_VM_ZONE_STAT_ITEMS; i++)
			atomic_store(&zone->vm_stat[i], zs->vm_stat[i]);
		atomic_store(&zone->managed_pages, zs->managed_pages);
		if (zs->pageblock_bytes)
			memcpy((void *)zone->pageblock_flags, zs->pageblock_flags, zs->pageblock_bytes);
	}
}

struct mm *mm_create(const struct mm_config *c, char *err, size_t errlen)
{
	char dummy[8];
	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	if (mm_config_validate(c, err, errlen))
		return NULL;

	struct mm *mm = calloc(1, sizeof(*mm));
	if (!mm) {
		mm_fail(err, errlen, "out of memory for struct mm");
		return NULL;
	}
	mm->cfg = *c;
	if (!mm->cfg.watermark_scale_factor)
		mm->cfg.watermark_scale_factor = 10;
	mm->boot_cfg = mm->cfg;
	mm->max_order = c->max_order;
	mm->pageblock_order = c->pageblock_order;
	mm->first_pfn = ~0UL;
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		if (c->zones[z].end_pfn == c->zones[z].start_pfn)
			continue;
		mm->first_pfn = MIN(mm->first_pfn, c->zones[z].start_pfn);
		mm->end_pfn = MAX(mm->end_pfn, c->zones[z].end_pfn);
	}
	for (int z = 0; z < MAX_NR_ZONES; z++)   /* empty zones sit at the end of memory */
		if (c->zones[z].end_pfn == c->zones[z].start_pfn)
			mm->cfg.zones[z] = (struct mm_span){ mm->end_pfn, mm->end_pfn };
	spin_lock_init(&mm->shrinker_lock);
	spin_lock_init(&mm->report_lock);
	mutex_init(&mm->pcp_batch_high_lock);

	mm->vmstat_pcpu = aligned_alloc(64, sizeof(struct mm_vmstat_pcpu) * c->nr_cpus);
	if (!mm->vmstat_pcpu) {
		mm_fail(err, errlen, "out of memory for per-cpu statistics");
		free(mm);
		return NULL;
	}
	memset(mm->vmstat_pcpu, 0, sizeof(struct mm_vmstat_pcpu) * c->nr_cpus);
	if (memmap_create(mm, err, errlen) || zones_init(mm, err, errlen)) {
		mm_destroy(mm);
		return NULL;
	}
	memmap_init_pages(mm);
	mm_free_all_memory(mm);
	init_per_zone_wmark_min(mm);
	boot_snapshot_take(mm);
	/* SLUB's hotplug state before the pcp's: CPUHP_SLUB_DEAD < CPUHP_PAGE_ALLOC (pcp.c). */
	if (mm_cpus_setup(mm, err, errlen) || pcp_setup(mm, err, errlen) || slab_setup(mm, err, errlen) ||
	    pcp_register_hotplug(mm, err, errlen)) {
		mm_destroy(mm);
		return NULL;
	}
	return mm;
}

void mm_destroy(struct mm *mm)
{
	if (!mm)
		return;
	slab_teardown(mm);
	pcp_teardown(mm);
	mm_cpus_teardown(mm);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		free((void *)mm->zones[z].pageblock_flags);
	memmap_destroy(mm);
	free(mm->check_where);
	boot_snapshot_free(mm->boot);
	free(mm->vmstat_pcpu);
	free(mm);
}

int mm_reset(struct mm *mm)
{
	long allocated = 0;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		allocated += zone_page_state(&mm->zones[z], NR_ZONE_ALLOCATED);

	/*
	 * Also for an instance abandoned in the middle of an operation (a
	 * deterministic-scheduler run that failed): every lock starts free.
	 */
	for (int z = 0; z < MAX_NR_ZONES; z++)
		spin_lock_init(&mm->zones[z].lock);
	spin_lock_init(&mm->shrinker_lock);
	spin_lock_init(&mm->report_lock);
	mutex_init(&mm->pcp_batch_high_lock);
	/*
	 * Runtime tunables go back to the config's values - written only where
	 * they changed, so a reset races with nothing that merely reads them.
	 */
#define RESTORE_TUNABLE(f) do { if (mm->cfg.f != mm->boot_cfg.f) mm->cfg.f = mm->boot_cfg.f; } while (0)
	RESTORE_TUNABLE(min_free_kbytes);
	RESTORE_TUNABLE(watermark_scale_factor);
	RESTORE_TUNABLE(pcp_batch);
	RESTORE_TUNABLE(pcp_high);
	RESTORE_TUNABLE(percpu_pagelist_high_fraction);
	RESTORE_TUNABLE(pcp_prefetch_buddy);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		RESTORE_TUNABLE(lowmem_reserve_ratio[z]);
#undef RESTORE_TUNABLE
	slab_reset(mm);
	pcp_reset(mm);
	mm_cpus_reset(mm);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		for (unsigned int o = 0; o < MM_NR_ORDERS_LIMIT; o++) {
			for (int mt = 0; mt < MIGRATE_TYPES; mt++)
				INIT_LIST_HEAD(&zone->free_area[o].free_list[mt]);
			zone->free_area[o].nr_free = 0;
		}
		for (int i = 0; i < NR_VM_ZONE_STAT_ITEMS; i++)
			atomic_store(&zone->vm_stat[i], 0);
		atomic_store(&zone->managed_pages, 0);
		zone->nr_reserved_highatomic = 0;
	}
	for (int i = 0; i < NR_VM_EVENT_ITEMS; i++)
		atomic_store(&mm->vm_events[i], 0);
	memset(mm->vmstat_pcpu, 0, sizeof(struct mm_vmstat_pcpu) * mm->cfg.nr_cpus);
	atomic_store(&mm->nr_reports, 0);
	memset(&mm->last_report, 0, sizeof(mm->last_report));
	mm->shrinkers = NULL;
	mm->client_walk = NULL;
	mm->client_ctx = NULL;
	if (mm->boot) {
		boot_snapshot_restore(mm, allocated != 0);   /* the pageblock types too */
	} else {
		for (int z = 0; z < MAX_NR_ZONES; z++)
			pageblock_set_boot_types(mm, &mm->zones[z]);
		memmap_init_pages(mm);
		mm_free_all_memory(mm);
	}
	init_per_zone_wmark_min(mm);
	/*
	 * The pcp high comes from the low watermark (zone_highsize()), as
	 * mm_create() sets it up after the watermarks: again now that they are
	 * the fresh ones.  pcp_reset() above computed it from the watermarks
	 * the input had tuned, and an input after one that changed
	 * min_free_kbytes got another pcp high (tests/fuzz_stability.c found
	 * it; the fuzz harness's teardown now compares it).
	 */
	pcp_reset_high_and_batch(mm);
	mm_check_forget(mm);
	return 0;
}

const struct mm_config *mm_get_config(const struct mm *mm)
{
	return &mm->cfg;
}

void mm_bug(const char *file, int line, const char *cond)
{
	fprintf(stderr, "mmfuzz: BUG at %s:%d: %s\n", file, line, cond);
	abort();
}

void mm_hang(struct mm *mm, const char *where, unsigned long iterations)
{
	(void)mm;
	fprintf(stderr, "mmfuzz: T1 violated: bounded loop exceeded in %s after %lu iterations (a hang)\n",
		where, iterations);
	abort();
}

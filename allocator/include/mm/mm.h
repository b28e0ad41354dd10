/* SPDX-License-Identifier: MIT */
/*
 * mm.h - the public interface of the mmfuzz allocator model.
 *
 * One `struct mm` is one independent machine: a physical address space of
 * real memory split into zones, its memmap (`struct page` array), a buddy
 * allocator per zone, watermarks and a reclaim model.  Nothing is global:
 * several instances may live in one process.
 *
 * Conventions
 *  - Page size is 4 KiB (MM_PAGE_SHIFT 12).
 *  - max_order follows Linux >= 6.4: it is the largest order the buddy
 *    allocator hands out, *inclusive* (MAX_PAGE_ORDER), so there are
 *    max_order + 1 free lists per migratetype.  The kernel default is 10.
 *  - Kernel functions keep their kernel names and gain the instance as a
 *    first argument (alloc_pages(mm, gfp, order)); the project's own API is
 *    prefixed mm_.
 *  - Errors: constructors return NULL and write a message naming what is
 *    wrong into the caller's buffer; nothing in this API asserts on input.
 */
#ifndef MM_MM_H
#define MM_MM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "gfp.h"
#include "list.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MM_PAGE_SHIFT       12
#define MM_PAGE_SIZE        (1UL << MM_PAGE_SHIFT)
#define MM_MAX_ORDER_LIMIT  12          /* largest max_order a config may ask for */
#define MM_NR_ORDERS_LIMIT  (MM_MAX_ORDER_LIMIT + 1)
#define MM_MAX_HOLES        32
#define MM_MAX_CPUS         64
#define MM_MAX_SPAN_PAGES   (1UL << 22) /* 16 GiB of physical address space */
#define PAGE_ALLOC_COSTLY_ORDER 3

enum zone_type {
	ZONE_DMA,
	ZONE_DMA32,
	ZONE_NORMAL,
	ZONE_MOVABLE,
	MAX_NR_ZONES
};

enum migratetype {
	MIGRATE_UNMOVABLE,
	MIGRATE_MOVABLE,
	MIGRATE_RECLAIMABLE,
	MIGRATE_PCPTYPES,                   /* the number of types on the pcp lists */
	MIGRATE_HIGHATOMIC = MIGRATE_PCPTYPES,
	MIGRATE_ISOLATE,                    /* can't allocate from here */
	MIGRATE_TYPES
};

enum zone_watermarks {
	WMARK_MIN,
	WMARK_LOW,
	WMARK_HIGH,
	NR_WMARK
};

/*
 * alloc_flags, as mm/internal.h (Linux 6.6).  ALLOC_HARDER was split in 6.3
 * into ALLOC_NON_BLOCK / ALLOC_HIGHATOMIC and ALLOC_HIGH renamed
 * ALLOC_MIN_RESERVE; the old names are kept as aliases for the 2008 thread.
 */
#define ALLOC_WMARK_MIN      WMARK_MIN
#define ALLOC_WMARK_LOW      WMARK_LOW
#define ALLOC_WMARK_HIGH     WMARK_HIGH
#define ALLOC_NO_WATERMARKS  0x04u
#define ALLOC_WMARK_MASK     (ALLOC_NO_WATERMARKS - 1)
#define ALLOC_OOM            0x08u  /* OOM victim: may dip further */
#define ALLOC_NON_BLOCK      0x10u  /* caller cannot block: a bit more reserve */
#define ALLOC_MIN_RESERVE    0x20u  /* __GFP_HIGH: half the min reserve */
#define ALLOC_CPUSET         0x40u
#define ALLOC_CMA            0x80u
#define ALLOC_NOFRAGMENT     0x100u /* first pass: steal only whole pageblocks (alloc_flags_nofragment) */
#define ALLOC_HIGHATOMIC     0x200u /* may use the MIGRATE_HIGHATOMIC reserve */
#define ALLOC_KSWAPD         0x800u
#define ALLOC_RESERVES       (ALLOC_NON_BLOCK | ALLOC_MIN_RESERVE | ALLOC_HIGHATOMIC | ALLOC_OOM)
#define ALLOC_HIGH           ALLOC_MIN_RESERVE                    /* <= 6.2 name */
#define ALLOC_HARDER         (ALLOC_NON_BLOCK | ALLOC_HIGHATOMIC) /* <= 6.2 name */

/* Which order-aware check __zone_watermark_ok uses. */
enum mm_wmark_algo {
	MM_WMARK_MODERN,   /* Linux >= 4.9: order-0 check + "one suitable block free" */
	MM_WMARK_2008,     /* 2.6.28: subtract lower orders, halve min per order */
};

/* What happens after a bad_page-style report. */
enum mm_bad_policy {
	MM_BAD_REPORT,     /* print, count, refuse the operation, continue */
	MM_BAD_ABORT,      /* print, then abort() (fuzzers) */
};

struct mm_span {
	unsigned long start_pfn;   /* first pfn */
	unsigned long end_pfn;     /* one past the last; start == end: empty */
};

struct mm_config {
	unsigned int nr_cpus;                 /* vCPUs, 1 .. MM_MAX_CPUS */
	unsigned int max_order;               /* inclusive, 0 .. MM_MAX_ORDER_LIMIT */
	unsigned int pageblock_order;         /* <= max_order */
	struct mm_span zones[MAX_NR_ZONES];   /* empty span: the zone does not exist */
	unsigned int nr_holes;
	struct mm_span holes[MM_MAX_HOLES];   /* each inside one zone's span */

	unsigned long min_free_kbytes;        /* 0: derive like calculate_min_free_kbytes() */
	unsigned int watermark_scale_factor;  /* in 1/10000 of managed pages; kernel default 10 */
	unsigned int lowmem_reserve_ratio[MAX_NR_ZONES]; /* kernel: 256 256 32 0 */
	enum mm_wmark_algo wmark_algo;

	/* per-cpu page lists (pcp.c) */
	unsigned int pcp_batch;               /* 0: derive like zone_batchsize() */
	unsigned int pcp_high;                /* 0: derive from percpu_pagelist_high_fraction */
	unsigned int percpu_pagelist_high_fraction; /* 0: kernel default (low + batch based) */
	bool pcp_prefetch_buddy;              /* the 2018 free_pcppages_bulk prefetch */

	unsigned int debug;                   /* runtime checks on free: 0 off .. 3 exhaustive */
	enum mm_bad_policy bad_policy;
	bool quiet;                           /* do not print reports (tests count them) */
};

struct mm;
struct page;
struct zone;

/* ---- instances (allocator/mm.c) ---- */
void mm_config_default(struct mm_config *c);   /* four small zones, a hole, first pfn != 0 */
void mm_config_tiny(struct mm_config *c);      /* ~1k pages, for fuzzers */
/* 0 or -1; mm_create() NULL.  A refusal's reason goes to @err (@errlen
 * bytes, terminated); @err may be NULL whatever @errlen says. */
int mm_config_validate(const struct mm_config *c, char *err, size_t errlen);
struct mm *mm_create(const struct mm_config *c, char *err, size_t errlen);
void mm_destroy(struct mm *mm);
/* Back to the state mm_create() left: every page free, counters zero.
 * Cheaper than destroy+create (no system calls). Returns 0. */
int mm_reset(struct mm *mm);
const struct mm_config *mm_get_config(const struct mm *mm);

/* ---- the page allocator (page/alloc.c) ---- */
struct page *alloc_pages(struct mm *mm, gfp_t gfp, unsigned int order);
void __free_pages(struct mm *mm, struct page *page, unsigned int order);
unsigned long __get_free_pages(struct mm *mm, gfp_t gfp, unsigned int order);
unsigned long get_zeroed_page(struct mm *mm, gfp_t gfp);
void free_pages(struct mm *mm, unsigned long addr, unsigned int order);

/* ---- per-cpu page lists (page/pcp.c) ---- */
void drain_all_pages(struct mm *mm, struct zone *zone);    /* every vCPU; zone NULL: all zones */
void drain_local_pages(struct mm *mm, struct zone *zone);  /* the current vCPU only */
/* Runtime high/batch for every zone and vCPU (0: derive as at boot), like
 * percpu_pagelist_high_fraction's handler; races with users by design. */
int mm_pcp_update(struct mm *mm, unsigned int high, unsigned int batch);
int mm_set_percpu_pagelist_high_fraction(struct mm *mm, unsigned int fraction);
void mm_set_pcp_prefetch(struct mm *mm, bool on);
struct mm_pcp_info {
	int count, high, batch;
};
int mm_pcp_info(struct mm *mm, enum zone_type z, int cpu, struct mm_pcp_info *info);

/* ---- bulk page paths (page/bulk.c) ---- */
/*
 * __alloc_pages_bulk(): order-0 pages into @page_list (NULL entries of
 * @page_array are filled; populated ones are skipped).  Returns the number
 * of populated entries of the array (those already there included) or the
 * number of pages added to the list; never reads or writes past nr_pages.
 */
unsigned long __alloc_pages_bulk(struct mm *mm, gfp_t gfp, int nr_pages,
				 struct list_head *page_list, struct page **page_array);
static inline unsigned long alloc_pages_bulk_array(struct mm *mm, gfp_t gfp, unsigned long nr,
						   struct page **array)
{
	return __alloc_pages_bulk(mm, gfp, (int)nr, NULL, array);
}
static inline unsigned long alloc_pages_bulk_list(struct mm *mm, gfp_t gfp, unsigned long nr,
						  struct list_head *list)
{
	return __alloc_pages_bulk(mm, gfp, (int)nr, list, NULL);
}
/* Free order-0 pages linked through their lru (the list the bulk allocator fills). */
void free_unref_page_list(struct mm *mm, struct list_head *list);
/* Free @nr order-0 pages of an array, batching the per-cpu lock; NULL entries skipped. */
void release_pages(struct mm *mm, struct page **pages, unsigned long nr);
/* The page of a list entry filled by alloc_pages_bulk_list(), and back. */
struct page *mm_lru_to_page(struct list_head *lru);
struct list_head *mm_page_lru(struct page *page);
/*
 * page_is_pfmemalloc(): @page (just allocated, lru not yet used) came from
 * the reserves below the min watermark (ALLOC_NO_WATERMARKS: __GFP_MEMALLOC);
 * its owner should use it only to free memory.
 */
bool page_is_pfmemalloc(const struct page *page);

/* ---- memory model (allocator/memmap.c) ---- */
bool pfn_valid(const struct mm *mm, unsigned long pfn);
struct page *pfn_to_page(const struct mm *mm, unsigned long pfn);   /* NULL if !pfn_valid */
unsigned long page_to_pfn(const struct mm *mm, const struct page *page);
void *page_address(const struct mm *mm, const struct page *page);
struct page *virt_to_page(const struct mm *mm, const void *addr);   /* NULL outside memory */
void *mm_arena_base(const struct mm *mm);       /* address of the first pfn's frame */
size_t mm_arena_size(const struct mm *mm);       /* bytes from the first to the last pfn */
unsigned long mm_first_pfn(const struct mm *mm);
unsigned long mm_end_pfn(const struct mm *mm);
unsigned long mm_nr_valid_pages(const struct mm *mm);

/* ---- zones and watermarks (page/watermark.c) ---- */
struct zone *mm_zone(struct mm *mm, enum zone_type idx);   /* NULL if the zone is empty */
unsigned long zone_managed_pages(const struct zone *z);
unsigned long zone_wmark_pages(const struct zone *z, enum zone_watermarks w);
long zone_lowmem_reserve(const struct zone *z, enum zone_type highest_zoneidx);
long zone_free_pages(const struct zone *z);    /* NR_FREE_PAGES */
unsigned long zone_nr_free(const struct zone *z, unsigned int order); /* free_area[order].nr_free */
bool __zone_watermark_ok(struct zone *z, unsigned int order, unsigned long mark,
			 int highest_zoneidx, unsigned int alloc_flags, long free_pages);
bool zone_watermark_ok(struct zone *z, unsigned int order, unsigned long mark,
		       int highest_zoneidx, unsigned int alloc_flags);
bool zone_watermark_fast(struct zone *z, unsigned int order, unsigned long mark,
			 int highest_zoneidx, unsigned int alloc_flags, gfp_t gfp);
/*
 * The 2.6.28 algorithm on explicit inputs (nr_free[o] blocks of each order),
 * for the 2008 thread's worked example; zone_watermark_ok() uses it on a zone
 * when the config selects MM_WMARK_2008.
 */
bool zone_watermark_ok_2008(const unsigned long *nr_free, unsigned int nr_orders,
			    long free_pages, unsigned int order, unsigned long mark,
			    long lowmem_reserve, unsigned int alloc_flags);
/* Runtime tunables, recomputed like the kernel's sysctl handlers.  Unlike the
 * sysctl, mm_set_min_free_kbytes(mm, 0) means "derive the default again".
 * mm_reset() returns every tunable to the value the config gave. */
int mm_set_min_free_kbytes(struct mm *mm, unsigned long kbytes);
int mm_set_watermark_scale_factor(struct mm *mm, unsigned int factor);
int mm_set_lowmem_reserve_ratio(struct mm *mm, const unsigned int ratio[MAX_NR_ZONES]);

/* Isolation of one pageblock (page_isolation.c semantics, simplified). */
int mm_isolate_pageblock(struct mm *mm, unsigned long pfn);
int mm_unisolate_pageblock(struct mm *mm, unsigned long pfn);

/* ---- reclaim model (page/reclaim.c) ---- */
struct shrink_control {
	gfp_t gfp_mask;
	unsigned long nr_to_scan;       /* objects to scan this call */
	unsigned long nr_scanned;       /* set by the shrinker if it scanned a different number */
	int highest_zoneidx;            /* the allocation's highest usable zone */
};
#define SHRINK_STOP (~0UL)
struct shrinker {
	unsigned long (*count_objects)(struct shrinker *s, struct shrink_control *sc);
	unsigned long (*scan_objects)(struct shrinker *s, struct shrink_control *sc);
	void *private_data;
	struct shrinker *next_;         /* owned by the mm while registered */
};
int register_shrinker(struct mm *mm, struct shrinker *s);
void unregister_shrinker(struct mm *mm, struct shrinker *s);

/* ---- statistics (vmstat) ---- */
enum zone_stat_item {
	NR_FREE_PAGES,                  /* pages on the buddy free lists */
	NR_ZONE_ALLOCATED,              /* pages handed out of the zone's buddy or pcp lists */
	NR_VM_ZONE_STAT_ITEMS
};
enum vm_event_item {
	PGALLOC,                        /* pages allocated (1 << order per call), summed over zones */
	PGFREE,                         /* pages freed */
	ALLOCSTALL,                     /* direct reclaim entered */
	PGSCAN_DIRECT,                  /* objects scanned by shrinkers */
	PGSTEAL_DIRECT,                 /* objects freed by shrinkers */
	PGFALLBACK,                     /* __rmqueue_fallback took a block of another type */
	PGSTEAL_BLOCK,                  /* pageblocks whose type changed on a steal */
	ALLOCFAIL,                      /* allocations that returned NULL */
	NR_VM_EVENT_ITEMS
};
unsigned long mm_zone_page_state(const struct mm *mm, enum zone_type z, enum zone_stat_item item);
unsigned long mm_vm_event(const struct mm *mm, enum vm_event_item item);

/* ---- reports for bad input (page/bad_page.c) ---- */
#define MM_REPORT_REASON_LEN 256        /* a report's text after its kind and page: room for long cache names */
struct mm_report {
	char kind[32];                  /* "bad_page", "bad_free", ... */
	char reason[MM_REPORT_REASON_LEN];  /* the kernel's words where it has them */
	unsigned long pfn;              /* ~0UL if there is none */
	unsigned long flags;            /* page->flags if there is a page */
	char msg[384];                  /* the whole report line */
};
unsigned long mm_nr_reports(const struct mm *mm);
const struct mm_report *mm_last_report(const struct mm *mm);

/* ---- the checker (check/check.c) ---- */
enum mm_invariant {
	MM_INV_NONE,
	MM_INV_B1, MM_INV_B2, MM_INV_B3, MM_INV_B4,
	MM_INV_P1,
	MM_INV_S1, MM_INV_S2, MM_INV_S3,
	MM_INV_W1,
	MM_INV_C1,
	MM_INV_T1,
	MM_NR_INVARIANTS
};
struct mm_violation {
	enum mm_invariant inv;
	const char *id;                 /* "B1" ... */
	int zone;                       /* -1 if none */
	int cpu;                        /* -1 if none */
	const char *cache;              /* NULL if none */
	unsigned long pfn;              /* ~0UL if none */
	unsigned int order;
	long expected, found;
	char msg[256];
};
/*
 * Levels: 0 nothing; 1 counters against each other (O(orders)); 2 walks every
 * free list (B1, B2, W1 sampled); 3 exhaustive structure: B3 and B4 over
 * every pfn; 4 also W1 over every order, flag combination and highest zone.
 * W1 skips a zone whose state already passed since the last mm_reset().
 * Level 2 is incremental: a zone, a pcp or a cache whose signature (list
 * heads, counts, counters, pageblock types; for a cache its vCPUs'
 * freelist and tid, statistics and node lists) is the one its last walk
 * passed in is not walked again - an operation changes one of each,
 * mostly.  A change made behind the allocator's back (a stray write into a
 * struct page) is then seen at the next walk of that structure or at level
 * 3, which always walks everything.  mm_check_set_incremental(mm, false)
 * walks everything at level 2 too.
 * Returns true when clean; on the first violation fills *v (if non-NULL)
 * and returns false.
 */
bool mm_check(struct mm *mm, int level, struct mm_violation *v);
void mm_check_set_incremental(struct mm *mm, bool on);
const char *mm_invariant_name(enum mm_invariant inv);

/*
 * B4 needs to know what clients hold.  A client registers a walker that
 * calls mark(w, pfn, nr_pages) once for every page range it holds.  Without a
 * walker the checker counts allocated pages through the memmap instead.
 */
typedef void (*mm_mark_fn)(void *w, unsigned long pfn, unsigned long nr_pages);
typedef void (*mm_client_walk_fn)(void *ctx, mm_mark_fn mark, void *w);
void mm_set_client_walker(struct mm *mm, mm_client_walk_fn fn, void *ctx);

/* ---- /proc-style dumps, in the kernel's own formats (check/dump.c) ---- */
void mm_dump_buddyinfo(struct mm *mm, FILE *f);
void mm_dump_zoneinfo(struct mm *mm, FILE *f);
void mm_dump_pagetypeinfo(struct mm *mm, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* MM_MM_H */

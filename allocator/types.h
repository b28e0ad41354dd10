/* SPDX-License-Identifier: MIT */
/*
 * types.h - every internal type of the allocator model in one place
 * (struct page, struct zone, struct free_area, struct mm), as mimalloc's
 * types.h.  Cross-file prototypes live in internal.h.
 *
 * Memory model
 * ------------
 * A `struct mm` owns one contiguous physical range [first_pfn, end_pfn):
 *  - page frames: one mapping, PROT_NONE over holes (a hole is every pfn of
 *    the range not in a zone, plus the configured holes), so touching a hole
 *    faults.  page_address(pfn) = arena + (pfn - first_pfn) * PAGE_SIZE,
 *    with arena - first_pfn * PAGE_SIZE aligned to PAGE_SIZE << max_order
 *    as the kernel's PAGE_OFFSET is: an order-k block is aligned to
 *    PAGE_SIZE << k (memmap_create()).
 *  - the memmap: a vmemmap-like mapping of struct page, one per pfn of the
 *    range plus guard entries on both sides; the entries of invalid pfns are
 *    PROT_NONE where they fill whole OS pages and ASan-poisoned always, so
 *    the memmap "covers exactly the valid pfns": reading the struct page of
 *    a pfn that does not exist is an AddressSanitizer error (and a SIGSEGV
 *    without ASan where whole memmap pages are missing).  Pointer arithmetic
 *    `page + (buddy_pfn - pfn)` stays inside the mapping, as in the kernel.
 */
#ifndef MM_TYPES_H
#define MM_TYPES_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "mm/mm.h"
#include "list.h"
#include "debug.h"
#include "cpu/spinlock.h"
#include "cpu/mutex.h"

/* ---------------------------------------------------------------- pages */

/* page->flags bits (include/linux/page-flags.h names). */
enum pageflags {
	PG_reserved,     /* not managed by the allocator (hole edges, never freed) */
	PG_head,         /* head of a compound page */
	PG_slab,         /* owned by SLUB */
	PG_buddy,        /* on a buddy free list; the kernel keeps this in page_type */
	PG_active,       /* SLUB: the slab's pages came from the reserves (slab_set_pfmemalloc) */
	PG_highatomic_,  /* model: unused */
	__NR_PAGEFLAGS,
};
#define ZONES_PGSHIFT     56                 /* zone index lives in flags[56..57] */
#define ZONES_MASK        3UL
#define PAGE_FLAGS_CHECK_AT_FREE ((1UL << PG_reserved) | (1UL << PG_slab) | (1UL << PG_buddy) | (1UL << PG_active))
/* What must be clear on a page coming off a free list: every page flag (the kernel's PAGEFLAGS_MASK). */
#define PAGE_FLAGS_CHECK_AT_PREP ((1UL << __NR_PAGEFLAGS) - 1)

/*
 * SLUB's packed counters (struct slab in Linux >= 5.17, struct page before):
 * inuse:16, objects:15, frozen:1 share one word with nothing else, so the
 * double-word cmpxchg on {freelist, counters} covers them.
 */
struct slab_counters {
	unsigned inuse : 16;
	unsigned objects : 15;
	unsigned frozen : 1;
};

/* A double-word cmpxchg operand.  Inside struct page its 16-byte alignment
 * comes from the layout (asserted below), not from the type. */
typedef struct {
	void *first;
	unsigned long second;
} mm_dword_t;

/*
 * struct page: 64 bytes, 64-byte aligned in the memmap (static assertion
 * below), the kernel's size on x86-64.  The union is laid out so SLUB's
 * {freelist, counters} pair is 16-byte aligned at offset 32.
 */
struct page {
	unsigned long flags;                       /* 0: PG_* bits, zone index at ZONES_PGSHIFT */
	union {                                    /* 8 .. 48 */
		struct {                           /* buddy, pcp lists, client pages */
			struct list_head lru;      /* 8: free_list[mt] or pcp list linkage */
			unsigned long private_;    /* 24: buddy order when PageBuddy; pcp: order */
			unsigned long index;       /* 32: pcp: migratetype at free (pcppage_migratetype) */
			unsigned long pad_;        /* 40 */
		};
		struct {                           /* SLUB (struct slab overlay) */
			union {
				struct list_head slab_list;   /* 8: node partial list */
				struct {
					struct page *next;    /* 8: cpu partial list */
					int slabs;            /* 16: slabs on the cpu partial list after this */
				};
			};
			struct kmem_cache *slab_cache;        /* 24 */
			union {                               /* 32: 16-byte aligned */
				struct {
					void *freelist;       /* first free object */
					union {
						unsigned long counters;
						struct slab_counters c;
					};
				};
				mm_dword_t freelist_counters;
			};
		};
		struct {                           /* tail pages of a compound page */
			unsigned long compound_head;  /* 8: head page address | 1 */
			unsigned char compound_order; /* 16: page[1] only */
		};
	};
	unsigned int page_type;                    /* 48: unused by the model */
	atomic_int _refcount;                      /* 52: 0 when free (buddy, pcp) */
	unsigned int owner_order;                  /* 56: page_owner-like: allocation order + 1 on a head, 0 otherwise */
	unsigned int debug_;                       /* 60: migratetype the allocation asked for */
} __attribute__((aligned(16)));   /* CONFIG_HAVE_ALIGNED_STRUCT_PAGE */
_Static_assert(sizeof(struct page) == 64, "struct page must stay 64 bytes");
_Static_assert(offsetof(struct page, freelist) % 16 == 0, "freelist/counters must be 16-byte aligned");

static inline bool page_flag_test(const struct page *p, enum pageflags f)
{
	return (p->flags >> f) & 1;
}
static inline void page_flag_set(struct page *p, enum pageflags f) { p->flags |= 1UL << f; }
static inline void page_flag_clear(struct page *p, enum pageflags f) { p->flags &= ~(1UL << f); }

#define PageBuddy(p)     page_flag_test(p, PG_buddy)
#define __SetPageBuddy(p)   page_flag_set(p, PG_buddy)
#define __ClearPageBuddy(p) page_flag_clear(p, PG_buddy)
#define PageReserved(p)  page_flag_test(p, PG_reserved)
#define PageHead(p)      page_flag_test(p, PG_head)
#define PageSlab(p)      page_flag_test(p, PG_slab)

/*
 * set_page_pfmemalloc() / clear_page_pfmemalloc() (Linux 6.6
 * include/linux/mm.h): a page allocated under ALLOC_NO_WATERMARKS says so in
 * bit 1 of lru.next - the owner has not used its lru yet when
 * prep_new_page() writes it - so that SLUB keeps reserve memory for
 * requests entitled to it.  page_is_pfmemalloc() reads it (page/alloc.c).
 */
static inline void set_page_pfmemalloc(struct page *page) { page->lru.next = (struct list_head *)2UL; }
static inline void clear_page_pfmemalloc(struct page *page) { page->lru.next = NULL; }
#define PageTail(p)      ((READ_ONCE((p)->compound_head) & 1UL) != 0)
#define PageCompound(p)  (PageHead(p) || PageTail(p))

static inline unsigned int page_zonenum(const struct page *p)
{
	return (unsigned int)((p->flags >> ZONES_PGSHIFT) & ZONES_MASK);
}

static inline int page_count(const struct page *p)
{
	return atomic_load_explicit(&((struct page *)p)->_refcount, memory_order_relaxed);
}
static inline void set_page_count(struct page *p, int v)
{
	atomic_store_explicit(&p->_refcount, v, memory_order_relaxed);
}

/* ---------------------------------------------------------------- zones */

struct free_area {
	struct list_head free_list[MIGRATE_TYPES];  /* blocks of this order, by migratetype */
	unsigned long nr_free;                      /* blocks (not pages) on all the lists */
};

struct per_cpu_pages;     /* page/pcp.c */

#define MM_W1_MEMO 16   /* states remembered per zone as having passed W1 */

struct zone {
	/* Read-mostly fields */
	unsigned long _watermark[NR_WMARK];         /* min/low/high in pages */
	unsigned long watermark_boost;              /* always 0: no boosting in the model */
	unsigned long nr_reserved_highatomic;       /* pages in MIGRATE_HIGHATOMIC pageblocks */
	long lowmem_reserve[MAX_NR_ZONES];          /* pages kept back from allocations that could use a higher zone */
	struct mm *mm;                              /* zone_pgdat(): the instance */
	struct per_cpu_pages *per_cpu_pageset;      /* [nr_cpus], NULL until pcp is set up */
	int pageset_high;                           /* pcp->high for every cpu (before runtime updates) */
	int pageset_batch;                          /* pcp->batch */
	_Atomic unsigned char *pageblock_flags;     /* migratetype per pageblock, from pageblock-aligned start;
	                                               written under zone->lock, read without it (atomic bitops in the kernel) */
	unsigned long pageblock_base_pfn;           /* zone_start_pfn rounded down to a pageblock */
	unsigned long zone_start_pfn;
	unsigned long spanned_pages;                /* end - start, holes included */
	unsigned long present_pages;                /* valid pfns in the span */
	atomic_long managed_pages;                  /* pages the buddy allocator manages */
	const char *name;
	int idx;                                    /* enum zone_type */

	/* Write-intensive fields: zone->lock protects free_area and the steal state */
	spinlock_t lock;
	struct free_area free_area[MM_NR_ORDERS_LIMIT];
	atomic_long vm_stat[NR_VM_ZONE_STAT_ITEMS];   /* NR_FREE_PAGES: exact, under lock; others: + per-cpu diffs */

	/* The checker's (check.c): signatures of states that passed W1; under every zone->lock */
	unsigned long w1_memo[MM_W1_MEMO];
	unsigned int w1_memo_next;
	unsigned long l2_sig;                       /* the state the last list walk passed in (0: none) */
};

static inline bool populated_zone(const struct zone *z)
{
	return z->present_pages != 0;
}
static inline unsigned long zone_end_pfn(const struct zone *z)
{
	return z->zone_start_pfn + z->spanned_pages;
}
static inline bool zone_spans_pfn(const struct zone *z, unsigned long pfn)
{
	return pfn >= z->zone_start_pfn && pfn < zone_end_pfn(z);
}

/* ---------------------------------------------------------------- mm */

struct mm_cpu;            /* cpu/vcpu.c */
struct mm_boot_snapshot;  /* mm.c: what mm_reset() restores */

/*
 * Per-vCPU statistics (the kernel's vm_event_states and vm_stat_diff):
 * written only by the task holding the vCPU, with one non-locked add, so
 * an interrupt on the same vCPU cannot tear it; read by anyone by summing.
 */
struct mm_vmstat_pcpu {
	atomic_long ev[NR_VM_EVENT_ITEMS];                        /* event counts */
	atomic_long zone_diff[MAX_NR_ZONES][NR_VM_ZONE_STAT_ITEMS]; /* zone stat deltas */
} __attribute__((aligned(64)));

struct mm {
	struct mm_config cfg;                       /* as validated; tunables updated at runtime */
	struct mm_config boot_cfg;                  /* as created: mm_reset() goes back to it */
	unsigned int max_order;                     /* MAX_PAGE_ORDER of this instance */
	unsigned int pageblock_order;
	bool page_group_by_mobility_disabled;       /* too few pages for grouping by mobility (mm_create) */
	unsigned long first_pfn, end_pfn;           /* the physical range, holes included */

	char *arena;                                /* frame of first_pfn; see "Memory model" for its alignment */
	size_t arena_len;                           /* (end_pfn - first_pfn) pages */
	char *arena_region;                         /* the mapping the arena lies in (memmap.c: */
	size_t arena_region_len;                    /* a kept one may be larger), PROT_NONE around it */
	struct page *memmap;                        /* struct page of first_pfn */
	void *memmap_map;                           /* the vmemmap, guards included: the start of */
	size_t memmap_map_len;                      /* its mapping, which may be longer: */
	size_t memmap_region_len;                   /* memmap_region_len bytes, PROT_NONE past the vmemmap */
	unsigned long memmap_guard;                 /* struct pages of guard before first_pfn */
	unsigned long *valid_bitmap;                /* pfn_valid(), one bit per pfn of the range */
	unsigned long nr_valid;
	struct mm_boot_snapshot *boot;              /* mm_reset()'s copy of the state mm_create() left */

	struct zone zones[MAX_NR_ZONES];
	unsigned long min_free_kbytes;              /* effective value */

	atomic_ulong vm_events[NR_VM_EVENT_ITEMS];   /* events of tasks holding no vCPU */
	struct mm_vmstat_pcpu *vmstat_pcpu;          /* [nr_cpus] */

	struct mutex pcp_batch_high_lock;           /* serialises runtime pcp high/batch updates (page/pcp.c) */
	spinlock_t shrinker_lock;                   /* protects the list below */
	struct shrinker *shrinkers;

	spinlock_t report_lock;                     /* protects the two below */
	atomic_ulong nr_reports;
	struct mm_report last_report;

	bool check_full_walks;                      /* mm_check_set_incremental(mm, false) */
	unsigned char *check_where;                 /* B4's owner map, [end_pfn - first_pfn], kept between checks */
	mm_client_walk_fn client_walk;              /* B4: what clients hold */
	void *client_ctx;

	bool init_on_alloc;                         /* want_init_on_alloc(): zero every page handed out */
	bool init_on_free;                          /* want_init_on_free(): zero every page freed */

	struct mm_cpu *cpus;                        /* [nr_cpus], cpu/vcpu.c */
	void *slab_state;                           /* slab/, NULL until SLUB is set up */
};

static inline struct zone *page_zone(const struct mm *mm, const struct page *p)
{
	return (struct zone *)&mm->zones[page_zonenum(p)];
}

#endif /* MM_TYPES_H */

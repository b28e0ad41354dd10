/* SPDX-License-Identifier: MIT */
/*
 * internal.h - cross-file prototypes of the allocator, grouped by the file
 * that defines them (mimalloc's internal.h).  Small inline helpers that many
 * files use are at the end.
 */
#ifndef MM_INTERNAL_H
#define MM_INTERNAL_H

#include <string.h>

#include "types.h"
#include "cpu/vcpu.h"

/* ---- os/prim.c: the only file that calls mmap/mprotect ---- */
#include "os/prim.h"

/* ---- memmap.c ---- */
int memmap_create(struct mm *mm, char *err, size_t errlen);
void memmap_destroy(struct mm *mm);
void memmap_drop_kept(void);                      /* unmap the mappings destroyed instances left */
/* The first valid pfn / pfn of a hole in [pfn, end), or end: a bitmap word at a time. */
unsigned long memmap_next_valid(const struct mm *mm, unsigned long pfn, unsigned long end);
unsigned long memmap_next_hole(const struct mm *mm, unsigned long pfn, unsigned long end);
void memmap_init_pages(struct mm *mm);          /* every valid struct page reserved, zone set */

/* ---- mm.c ---- */
void mm_free_all_memory(struct mm *mm);         /* memblock_free_all(): hand every valid pfn to the buddy */
/* T1: a loop in the allocator ran past its bound - report the hang and abort. */
void mm_hang(struct mm *mm, const char *where, unsigned long iterations) __attribute__((noreturn));
/* An error of a create or validate call: the message into @err (when given), then -1. */
int mm_fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- page/buddy.c ---- */
/*
 * fpi_t: how a block goes back to the free lists (the kernel's FPI_*
 * flags).  FPI_TO_TAIL: at the tail of its list - boot and hot-added
 * memory (__free_pages_core()), so that the first allocations take the
 * lowest pfns and the lists read in pfn order.
 */
typedef unsigned int fpi_t;
#define FPI_NONE    0u
#define FPI_TO_TAIL (1u << 1)
void __free_one_page(struct zone *zone, struct page *page, unsigned long pfn,
		     unsigned int order, int migratetype, fpi_t fpi_flags);
struct page *__rmqueue(struct zone *zone, unsigned int order, int migratetype,
		       unsigned int alloc_flags);
struct page *__rmqueue_smallest(struct zone *zone, unsigned int order, int migratetype);
void del_page_from_free_list(struct zone *zone, struct page *page, unsigned int order);
void add_to_free_list(struct zone *zone, struct page *page, unsigned int order, int mt, bool tail);
unsigned long move_freepages_block(struct zone *zone, struct page *page, int migratetype);
void reserve_highatomic_pageblock(struct zone *zone, struct page *page, unsigned int order);
bool unreserve_highatomic_pageblock(struct mm *mm, int highest_zoneidx, int migratetype, bool force);
void zone_free_page_range(struct zone *zone, unsigned long pfn, unsigned int order, int mt);
void split_large_buddy(struct zone *zone, struct page *page, unsigned long pfn, unsigned int order,
		       fpi_t fpi_flags);
void remerge_pageblock(struct zone *zone, unsigned long pfn, int mt, unsigned int fpi_flags);

/* ---- page/alloc.c ---- */
int gfp_zone(gfp_t gfp);
const char *gfp_bad_combination(gfp_t gfp);
int gfp_migratetype(const struct mm *mm, gfp_t gfp);
unsigned int gfp_to_alloc_flags(gfp_t gfp);
bool gfp_pfmemalloc_allowed(gfp_t gfp);
void prep_new_page(struct mm *mm, struct page *page, unsigned int order, gfp_t gfp, unsigned int alloc_flags);
bool check_new_pages(struct mm *mm, struct page *page, unsigned int order);
bool free_pages_prepare(struct mm *mm, struct page *page, unsigned int order);

/* ---- page/watermark.c ---- */
void setup_per_zone_wmarks(struct mm *mm);
void setup_per_zone_lowmem_reserve(struct mm *mm);
void init_per_zone_wmark_min(struct mm *mm);
long __zone_watermark_unusable_free(struct zone *z, unsigned int order, unsigned int alloc_flags);

/* ---- page/reclaim.c ---- */
unsigned long try_to_free_pages(struct mm *mm, gfp_t gfp, unsigned int order, int highest_zoneidx);
unsigned long shrinkers_freeable(struct mm *mm, gfp_t gfp, int highest_zoneidx);

/* ---- page/bad_page.c ---- */
void mm_report(struct mm *mm, const char *kind, unsigned long pfn, unsigned long flags,
	       const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void bad_page(struct mm *mm, struct page *page, const char *reason);

/* ---- slab/ (SLUB): what mm.c, the checker and the CPU model call ---- */
int slab_setup(struct mm *mm, char *err, size_t errlen);   /* kmalloc caches; mm->slab_state */
void slab_teardown(struct mm *mm);                          /* after every cache is destroyed */
void slab_reset(struct mm *mm);                             /* before the page allocator resets */
bool slab_check(struct mm *mm, int level, struct mm_violation *v);   /* S1-S3 */
void slab_check_forget(struct mm *mm);                               /* mm_check_forget() */
void slab_cpu_dead(struct mm *mm, int cpu);                 /* flush the vCPU's slabs */

/* ---- check/check.c ---- */
void mm_check_forget(struct mm *mm);   /* mm_reset(): the W1 memo and the level-2 signatures */
/* The checker's signatures: FNV-1a, one word at a time (never 0: 0 means "none"). */
static inline uint64_t mm_sig_mix(uint64_t h, uint64_t x)
{
	return (h ^ x) * 0x100000001b3ULL;
}
#define MM_SIG_INIT 0xcbf29ce484222325ULL
/*
 * @len bytes at @p into @h: four lanes of mm_sig_mix(), eight bytes a step,
 * so that the multiplies of a long block overlap instead of forming one
 * serial chain (the signature of a zone hashes a few hundred words after
 * every fuzz op).  For memory its caller may read plainly.
 */
static inline uint64_t mm_sig_bytes(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t l0 = h, l1 = h ^ 0x9e3779b97f4a7c15ULL, l2 = h ^ 0xc2b2ae3d27d4eb4fULL, l3 = h ^ 0x165667b19e3779f9ULL;
	uint64_t w0, w1, w2, w3;
	size_t i = 0;

	for (; i + 32 <= len; i += 32) {
		memcpy(&w0, b + i, 8);
		memcpy(&w1, b + i + 8, 8);
		memcpy(&w2, b + i + 16, 8);
		memcpy(&w3, b + i + 24, 8);
		l0 = mm_sig_mix(l0, w0);
		l1 = mm_sig_mix(l1, w1);
		l2 = mm_sig_mix(l2, w2);
		l3 = mm_sig_mix(l3, w3);
	}
	for (; i + 8 <= len; i += 8) {
		memcpy(&w0, b + i, 8);
		l0 = mm_sig_mix(l0, w0);
	}
	for (; i < len; i++)
		l1 = mm_sig_mix(l1, b[i]);
	return mm_sig_mix(mm_sig_mix(mm_sig_mix(mm_sig_mix(l0, l1), l2), l3), len);
}
/*
 * might_alloc() (6.6, include/linux/sched/mm.h): an allocation whose gfp
 * may block (__GFP_DIRECT_RECLAIM) may sleep, so CONFIG_DEBUG_ATOMIC_SLEEP
 * reports it where the task is not preemptible - an interrupt handler, a
 * spinlock or a local lock held, interrupts off - on every call, not only
 * when reclaim reaches a sleeping lock.  prepare_alloc_pages() and
 * slab_pre_alloc_hook() call it; here alloc_pages(), __alloc_pages_bulk(),
 * slab_alloc_node() and kmem_cache_alloc_bulk() (helper-51's review,
 * bench/results/reviews-6.6/boot-cpu.md F5).  MM_DEBUG >= 2, as
 * might_sleep_msg().
 */
#define might_alloc(gfp)                                                                       \
	do {                                                                                   \
		if ((gfp) & __GFP_DIRECT_RECLAIM)                                              \
			might_sleep_msg("allocation with a blocking gfp while not preemptible "    \
					"(sleeping function called from invalid context)");          \
	} while (0)
static inline bool mm_check_incremental(const struct mm *mm, int level)
{
	return level == 2 && !mm->check_full_walks;
}
bool mm_violate(struct mm_violation *v, enum mm_invariant inv, int zone, int cpu,
		unsigned long pfn, unsigned int order, long expected, long found,
		const char *fmt, ...) __attribute__((format(printf, 9, 10)));

/* ---- inline helpers ---- */
#define MAX_ORDER(mm) ((mm)->max_order)
#define pageblock_nr_pages(mm) (1UL << (mm)->pageblock_order)

static inline unsigned long __find_buddy_pfn(unsigned long pfn, unsigned int order)
{
	return pfn ^ (1UL << order);
}

/* The struct page of @pfn, without validation (the kernel's pfn_to_page). */
static inline struct page *__pfn_to_page(const struct mm *mm, unsigned long pfn)
{
	return mm->memmap + (long)(pfn - mm->first_pfn);
}
static inline unsigned long __page_to_pfn(const struct mm *mm, const struct page *p)
{
	return mm->first_pfn + (unsigned long)(p - mm->memmap);
}
static inline bool __pfn_valid(const struct mm *mm, unsigned long pfn)
{
	if (pfn < mm->first_pfn || pfn >= mm->end_pfn)
		return false;
	unsigned long i = pfn - mm->first_pfn;
	return (mm->valid_bitmap[i / (8 * sizeof(long))] >> (i % (8 * sizeof(long)))) & 1;
}
static inline void *__page_address(const struct mm *mm, unsigned long pfn)
{
	return mm->arena + ((pfn - mm->first_pfn) << MM_PAGE_SHIFT);
}

/* Is @page a pointer to a struct page of a valid pfn of this instance? */
static inline bool page_in_memmap(const struct mm *mm, const struct page *page)
{
	uintptr_t p = (uintptr_t)page, lo = (uintptr_t)mm->memmap;
	if (p < lo || p >= (uintptr_t)(mm->memmap + (mm->end_pfn - mm->first_pfn)) ||
	    (p - lo) % sizeof(struct page))
		return false;
	return __pfn_valid(mm, mm->first_pfn + (p - lo) / sizeof(struct page));
}

static inline unsigned int buddy_order(const struct page *p)
{
	return (unsigned int)p->private_;
}
static inline void set_buddy_order(struct page *p, unsigned int order)
{
	p->private_ = order;
	__SetPageBuddy(p);
}

/* Pageblock migratetype: get_pfnblock_flags_mask() reads page->flags first
 * (page_zone), so looking up a pfn with no struct page touches the memmap. */
static inline int get_pfnblock_migratetype(const struct mm *mm, const struct page *page,
					   unsigned long pfn)
{
	const struct zone *z = page_zone(mm, page);
	return atomic_load_explicit(&z->pageblock_flags[(pfn - z->pageblock_base_pfn) >> mm->pageblock_order],
				    memory_order_relaxed);
}
/* set_pageblock_migratetype(): with grouping by mobility off, every mergeable type is unmovable (6.6). */
static inline void set_pageblock_migratetype(struct zone *z, unsigned long pfn, int mt)
{
	if (unlikely(z->mm->page_group_by_mobility_disabled) && mt < MIGRATE_PCPTYPES)
		mt = MIGRATE_UNMOVABLE;
	atomic_store_explicit(&z->pageblock_flags[(pfn - z->pageblock_base_pfn) >> z->mm->pageblock_order],
			      (unsigned char)mt, memory_order_relaxed);
}
static inline bool is_migrate_isolate(int mt) { return mt == MIGRATE_ISOLATE; }
static inline bool is_migrate_highatomic(int mt) { return mt == MIGRATE_HIGHATOMIC; }
static inline bool migratetype_is_mergeable(int mt) { return mt < MIGRATE_PCPTYPES; }
static inline bool migratetype_is_unmergeable(int mt) { return !migratetype_is_mergeable(mt); }

/*
 * Model: the kernel looks at a page's first pageblock only - in its
 * configurations nothing it caches on a pcp list spans two.  With the
 * model's tiny pageblocks (pageblock_order < 3) a page of order >
 * pageblock_order does; true when @is holds for the migratetype of one of
 * the later pageblocks of [pfn, pfn + 2^order) (pfn aligned to 2^order).
 * free_unref_page() and reserve_highatomic_pageblock() ask it.
 */
static inline bool later_pageblock_is(const struct mm *mm, unsigned long pfn, unsigned int order,
				      bool (*is)(int mt))
{
	if (likely(order <= mm->pageblock_order))
		return false;
	for (unsigned long p = pfn + pageblock_nr_pages(mm); p < pfn + (1UL << order); p += pageblock_nr_pages(mm))
		if (is(get_pfnblock_migratetype(mm, __pfn_to_page(mm, p), p)))
			return true;
	return false;
}

/* The vCPU of @mm the current task holds, or -1 - without attaching. */
static inline int vmstat_cpu(struct mm *mm)
{
	struct mm_task *t = get_current();
	if (likely(atomic_load_explicit(&t->cur_mm, memory_order_relaxed) == mm))
		return atomic_load_explicit(&t->cur_cpu, memory_order_relaxed);
	return __mm_task_cpu(t, mm);
}

/*
 * this_cpu_add(): one add instruction to the vCPU's own counter.  An
 * interrupt (signal) on the same thread cannot split it, and only the
 * vCPU's holder writes it.  TSan cannot see inline asm, so TSan builds
 * (and other architectures) use a relaxed atomic add instead.
 */
static inline void this_cpu_add_long(atomic_long *c, long n)
{
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__) && !MM_TSAN
	__asm__ volatile("addq %1, %0" : "+m"(*(long *)c) : "er"(n));
#else
	atomic_fetch_add_explicit(c, n, memory_order_relaxed);
#endif
}

/*
 * Zone statistics.  NR_FREE_PAGES changes only under zone->lock: a plain
 * read-modify-write of the shared counter, read locklessly by watermark
 * checks.  The others change in allocation and free paths outside any lock:
 * per-vCPU deltas, summed on read (zone_page_state_snapshot()).
 */
static inline void __mod_zone_page_state(struct zone *z, enum zone_stat_item item, long delta)
{
	if (item == NR_FREE_PAGES) {
		atomic_store_explicit(&z->vm_stat[item],
				      atomic_load_explicit(&z->vm_stat[item], memory_order_relaxed) + delta,
				      memory_order_relaxed);
		return;
	}
	int cpu = vmstat_cpu(z->mm);
	if (likely(cpu >= 0))
		this_cpu_add_long(&z->mm->vmstat_pcpu[cpu].zone_diff[z->idx][item], delta);
	else
		atomic_fetch_add_explicit(&z->vm_stat[item], delta, memory_order_relaxed);
}
static inline long zone_page_state(const struct zone *z, enum zone_stat_item item)
{
	long v = atomic_load_explicit(&((struct zone *)z)->vm_stat[item], memory_order_relaxed);
	if (item != NR_FREE_PAGES)
		for (unsigned int cpu = 0; cpu < z->mm->cfg.nr_cpus; cpu++)
			v += atomic_load_explicit(&z->mm->vmstat_pcpu[cpu].zone_diff[z->idx][item],
						  memory_order_relaxed);
	return v;
}
static inline void __count_vm_events(struct mm *mm, enum vm_event_item item, unsigned long n)
{
	int cpu = vmstat_cpu(mm);
	if (likely(cpu >= 0))
		this_cpu_add_long(&mm->vmstat_pcpu[cpu].ev[item], (long)n);
	else
		atomic_fetch_add_explicit(&mm->vm_events[item], n, memory_order_relaxed);
}
static inline void __mod_zone_freepage_state(struct zone *z, long nr_pages, int migratetype)
{
	/* Isolated pages are not counted as free (Linux 6.6 account_freepages). */
	if (!is_migrate_isolate(migratetype))
		__mod_zone_page_state(z, NR_FREE_PAGES, nr_pages);
}

#endif /* MM_INTERNAL_H */

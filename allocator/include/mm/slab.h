/* SPDX-License-Identifier: MIT */
/*
 * slab.h - the public interface of SLUB in the mmfuzz allocator model
 * (include/linux/slab.h, Linux 6.6, before "sheaves").
 *
 * Conventions
 *  - Kernel names.  Functions that in the kernel have no instance argument
 *    gain the instance first (kmalloc(mm, size, gfp), kfree(mm, p)); those
 *    that take a cache keep the kernel's signature, because a cache belongs
 *    to exactly one instance (kmem_cache_alloc(s, gfp)).
 *  - Bad input (freeing something that is not an object, a corrupted red
 *    zone, ...) is reported through the instance's report counter
 *    (mm_nr_reports(), mm_last_report()) in the kernel's words and, under
 *    the instance's bad_policy, either repaired-and-continued or aborted.
 *    Every "BUG <cache>: ..." and every "FIX <cache>: ..." line counts one,
 *    as slub_kunit's slab_errors does.
 *  - Concurrency: allocation and free paths may run concurrently on every
 *    vCPU of the instance.  kmem_cache_destroy() and validate_slab_cache()
 *    require that nobody uses that cache concurrently (as the kernel's
 *    destroy does); kmem_cache_shrink() may run alongside users.  None of
 *    them waits for a vCPU another task holds ("Remote flush" in
 *    allocator/slab/fastpath.c).  mm_slub_configure() changing the fast
 *    path requires no concurrent users at all.
 */
#ifndef MM_SLAB_H
#define MM_SLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "mm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned int slab_flags_t;

/* Cache flags: the kernel's bit values (include/linux/slab.h, 6.6). */
#define SLAB_CONSISTENCY_CHECKS 0x00000100U  /* slub_debug F: check every alloc/free */
#define SLAB_RED_ZONE           0x00000400U  /* slub_debug Z: red zones around objects */
#define SLAB_POISON             0x00000800U  /* slub_debug P: poison free objects */
#define SLAB_KMALLOC            0x00001000U  /* a kmalloc cache (orig_size tracking with Z+U) */
#define SLAB_HWCACHE_ALIGN      0x00002000U  /* align objects on cache lines */
#define SLAB_CACHE_DMA          0x00004000U  /* slab pages from ZONE_DMA */
#define SLAB_CACHE_DMA32        0x00008000U  /* slab pages from ZONE_DMA32 */
#define SLAB_STORE_USER         0x00010000U  /* slub_debug U: alloc/free tracking */
#define SLAB_RECLAIM_ACCOUNT    0x00020000U  /* slab pages are __GFP_RECLAIMABLE */
#define SLAB_PANIC              0x00040000U  /* kmem_cache_create failure aborts */
#define SLAB_TRACE              0x00200000U  /* slub_debug T: print every alloc/free */
#define SLAB_NO_MERGE           0x01000000U  /* accepted; the model never merges caches */

/* Everything slub_debug can switch on. */
#define SLAB_DEBUG_FLAGS (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | \
			  SLAB_STORE_USER | SLAB_TRACE)

#define KMALLOC_MIN_SIZE        8
#define KMALLOC_SHIFT_HIGH      (MM_PAGE_SHIFT + 1)
#define KMALLOC_MAX_CACHE_SIZE  (1UL << KMALLOC_SHIFT_HIGH)   /* 8192: larger goes to alloc_pages */
/* kmalloc(0) returns this: not NULL, but no byte of it may be touched. */
#define ZERO_SIZE_PTR           ((void *)16)
#define ZERO_OR_NULL_PTR(x)     ((unsigned long)(x) <= (unsigned long)ZERO_SIZE_PTR)

struct kmem_cache;

/* ---- caches (slab/cache.c) ---- */
/*
 * kmem_cache_create(): a cache of @size-byte objects aligned to @align (0:
 * the minimum, 8), with @ctor run once per object when its slab is made.
 * NULL (with a message on stderr unless the instance is quiet) if the
 * arguments cannot work; SLAB_PANIC makes that an abort.  @name is copied.
 */
struct kmem_cache *kmem_cache_create(struct mm *mm, const char *name, unsigned int size,
				     unsigned int align, slab_flags_t flags, void (*ctor)(void *));
/*
 * kmem_cache_destroy(): flush every vCPU's slabs, free the empty ones and
 * the cache.  Objects still allocated are reported ("Objects remaining in
 * <cache> on kmem_cache_close()": one report per slab holding some, then
 * one "Slab cache still has objects"), and nothing is freed that cannot be
 * accounted for: the cache stays (emptied of free slabs) so the leaked
 * objects remain valid and may still be freed.  NULL is a no-op.
 */
void kmem_cache_destroy(struct kmem_cache *s);
/* kmem_cache_shrink(): flush the per-cpu slabs (those of vCPUs other tasks
 * hold stay: best effort, as with concurrent users in the kernel), free the
 * empty partial slabs.  0 if the cache holds no slab afterwards, else 1. */
int kmem_cache_shrink(struct kmem_cache *s);
const char *kmem_cache_name(const struct kmem_cache *s);
unsigned int kmem_cache_size(const struct kmem_cache *s);     /* object_size */
struct mm *kmem_cache_mm(const struct kmem_cache *s);

/* ---- objects (slab/fastpath.c) ---- */
void *kmem_cache_alloc(struct kmem_cache *s, gfp_t gfp);
void *kmem_cache_zalloc(struct kmem_cache *s, gfp_t gfp);   /* | __GFP_ZERO */
void kmem_cache_free(struct kmem_cache *s, void *x);

/* ---- bulk (slab/bulk.c) ---- */
/* All or nothing: @size objects into p[], or 0 with nothing kept. */
int kmem_cache_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t size, void **p);
/*
 * Objects of one slab are freed together, with one cmpxchg.  Every entry
 * must be an object: a NULL or ZERO_SIZE_PTR entry is reported (6.6 faults
 * on it) and the rest are freed.  The array's order is not kept.
 */
void kmem_cache_free_bulk(struct kmem_cache *s, size_t size, void **p);
/* kfree() of every entry (kmalloc'ed, large or from any cache); NULLs as above, unlike kfree(). */
void kfree_bulk(struct mm *mm, size_t size, void **p);

/* ---- kmalloc (slab/kmalloc.c) ---- */
void *kmalloc(struct mm *mm, size_t size, gfp_t gfp);
void *kzalloc(struct mm *mm, size_t size, gfp_t gfp);
void *kmalloc_array(struct mm *mm, size_t n, size_t size, gfp_t gfp);  /* NULL on overflow */
void *kcalloc(struct mm *mm, size_t n, size_t size, gfp_t gfp);
void *krealloc(struct mm *mm, const void *p, size_t new_size, gfp_t gfp);
void *krealloc_array(struct mm *mm, void *p, size_t n, size_t size, gfp_t gfp);
void kfree(struct mm *mm, const void *p);
size_t ksize(struct mm *mm, const void *p);
/* kmalloc_trace(): kmalloc of @size bytes from a given cache (the kunit
 * tests' kmalloc from a SLAB_KMALLOC test cache). */
void *kmalloc_trace(struct kmem_cache *s, gfp_t gfp, size_t size);
/*
 * The kmalloc cache that serves kmalloc(@size, @flags) (NULL for 0 or >
 * KMALLOC_MAX_CACHE_SIZE): kmalloc-N; kmalloc-rcl-N for __GFP_RECLAIMABLE;
 * dma-kmalloc-N for __GFP_DMA (before __GFP_RECLAIMABLE), but only on an
 * instance with a populated ZONE_DMA - elsewhere __GFP_DMA picks no type.
 */
struct kmem_cache *kmalloc_slab(struct mm *mm, size_t size, gfp_t flags);
size_t kmalloc_size_roundup(struct mm *mm, size_t size);

/* ---- debugging (slab/debug.c) ---- */
/* validate_slab_cache(): check every slab and object of the cache; returns
 * the number of errors found (each also reported, and repaired). */
long validate_slab_cache(struct kmem_cache *s);

/* ---- options (slab/hooks.c) ---- */
/* The fast-path variants of the 2007 thread, for the benchmark. */
enum slub_fastpath {
	SLUB_FASTPATH_CMPXCHG,          /* this_cpu_cmpxchg_double: cmpxchg16b, no lock prefix (default) */
	SLUB_FASTPATH_CMPXCHG_LOCKED,   /* the same with lock cmpxchg16b */
	SLUB_FASTPATH_IRQOFF,           /* pre-2011: local_irq_save(); pop or push; local_irq_restore() */
	SLUB_NR_FASTPATHS
};
/*
 * mm_slub_configure(): options in the kernel's command-line syntax,
 * separated by spaces.  The same string in the environment variable
 * MMFUZZ_SLUB is applied when an instance is created.
 *
 *   slub_debug[=FZPUT-][,cache,...][;FLAGS,cache...]   debug flags (no flags: FZPU)
 *   slub_fastpath=cmpxchg|locked|irqoff
 *   slab_freelist_hardened=0|1     pointer XOR random XOR swab(address), naive double-free check (default 1)
 *   slab_freelist_random=0|1       shuffled freelists of new slabs (default 1)
 *   init_on_alloc=0|1  init_on_free=0|1
 *   slub_min_order=N slub_max_order=N slub_min_objects=N
 *   slub_seed=N                    the seed of the instance's random numbers
 *   slub_fail_new_slab=N           every Nth new slab fails (0: never), for failure paths
 *   kasan_quarantine=BYTES         ASan builds: delay reuse of freed objects
 *
 * Layout options reach existing caches only while they hold no slab (the
 * kmalloc caches right after mm_create() or mm_reset()); a cache that
 * holds slabs keeps its layout and the call returns -EBUSY after applying
 * the rest.  slub_fastpath requires no concurrent users.  0 on success,
 * -EINVAL (with a message in @err) for an unknown option.
 */
int mm_slub_configure(struct mm *mm, const char *options, char *err, size_t errlen);
/*
 * Every cache remembers the last few layouts it computed, so that options
 * put back after a change cost nothing (kmem_cache_setup_layout()); which
 * ones it remembers depends on every change made so far.  This forgets all
 * but the layout each cache uses now: after the options are back to an
 * instance's initial ones, the instance then computes - and covers -
 * exactly what a fresh one would.  The fuzz harness calls it so that an
 * input's path does not depend on the inputs before it (AFL++ stability).
 */
void mm_slub_forget_layouts(struct mm *mm);
enum slub_fastpath mm_slub_fastpath(const struct mm *mm);
const char *slub_fastpath_name(enum slub_fastpath f);

/* ---- introspection (slab/cache.c) ---- */
struct kmem_cache_info {
	const char *name;
	unsigned int object_size;       /* what the client asked for */
	unsigned int size;              /* the stride: object plus metadata plus padding */
	unsigned int inuse;             /* offset of the metadata after the object */
	unsigned int offset;            /* free pointer offset from the object */
	unsigned int red_left_pad;      /* left red zone before each object */
	unsigned int align;
	unsigned int order;             /* slab order */
	unsigned int objects_per_slab;
	unsigned int min_partial;
	unsigned int cpu_partial_slabs;
	slab_flags_t flags;             /* including the debug flags in force */
	unsigned long nr_slabs;         /* slabs of the cache */
	unsigned long nr_objects;       /* objects in them */
	unsigned long nr_partial;       /* slabs on the node partial list */
	long nr_live;                   /* objects allocated and not freed (-1: not counted in this build) */
};
int kmem_cache_get_info(struct kmem_cache *s, struct kmem_cache_info *info);
/* Iterate over the instance's caches (creation order); NULL after the last. */
struct kmem_cache *kmem_cache_next(struct mm *mm, struct kmem_cache *prev);

/* The statistics of CONFIG_SLUB_STATS, summed over the vCPUs. */
enum slub_stat_item {
	ALLOC_FASTPATH, ALLOC_SLOWPATH, FREE_FASTPATH, FREE_SLOWPATH, FREE_FROZEN,
	FREE_ADD_PARTIAL, FREE_REMOVE_PARTIAL, ALLOC_FROM_PARTIAL, ALLOC_SLAB, ALLOC_REFILL,
	FREE_SLAB, CPUSLAB_FLUSH, DEACTIVATE_FULL, DEACTIVATE_EMPTY, DEACTIVATE_TO_HEAD,
	DEACTIVATE_TO_TAIL, DEACTIVATE_REMOTE_FREES, DEACTIVATE_BYPASS, ORDER_FALLBACK,
	CMPXCHG_DOUBLE_CPU_FAIL, CMPXCHG_DOUBLE_FAIL, CPU_PARTIAL_ALLOC, CPU_PARTIAL_FREE,
	CPU_PARTIAL_NODE, CPU_PARTIAL_DRAIN,
	NR_SLUB_STAT_ITEMS
};
/* false (and zeros) when statistics are compiled out (MM_DEBUG 0 without MM_TEST_HOOKS). */
bool kmem_cache_get_stats(struct kmem_cache *s, unsigned long out[NR_SLUB_STAT_ITEMS]);
const char *slub_stat_name(enum slub_stat_item item);

/* /proc/slabinfo, version 2.1 format. */
void mm_dump_slabinfo(struct mm *mm, FILE *f);

#ifdef __cplusplus
}
#endif
#endif /* MM_SLAB_H */

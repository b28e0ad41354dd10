/* SPDX-License-Identifier: MIT */
/*
 * slab.h - SLUB's internal types and small inline helpers (mm/slab.h and
 * include/linux/slub_def.h of Linux 6.6, plus the model's adapters).
 * The locking essay is at the top of slab/fastpath.c.
 *
 * Files:  cache.c     create/destroy/shrink, calculate_sizes/order, introspection
 *         fastpath.c  slab_alloc_node, do_slab_free, the three fast-path variants
 *         slowpath.c  ___slab_alloc, new slabs, partial lists, deactivate, flush
 *         free.c      __slab_free, put_cpu_partial, unfreezing
 *         debug.c     slub_debug: checks, reports, tracking, validate_slab_cache
 *         kmalloc.c   the kmalloc family and large kmalloc
 *         bulk.c      kmem_cache_alloc_bulk / kmem_cache_free_bulk
 *         invariants.c  slab_check(): S1-S3
 *         hooks.c     slab_setup/teardown/reset/cpu_dead, options
 *         kasan.h     ASan as KASAN
 */
#ifndef MM_SLAB_SLAB_H
#define MM_SLAB_SLAB_H

#include <stdint.h>
#include <string.h>

#include "internal.h"
#include "mm/slab.h"

/* ---------------------------------------------------------------- sanitizers */

#ifndef MM_TSAN                   /* debug.h defines it (0 or 1) */
#define MM_TSAN 0
#endif
#if MM_TSAN
#define __no_sanitize_thread __attribute__((no_sanitize("thread")))
#else
#define __no_sanitize_thread
#endif

/* ---------------------------------------------------------------- the CPU model */

/*
 * Every use of the CPU model (cpu/vcpu.h, cpu/preempt.h, cpu/local_lock.h)
 * goes through these few names.
 *
 * slub_this_cpu(): raw_smp_processor_id() - the vCPU the task runs on,
 * attaching implicitly; stale after the next preemption point where the
 * task is preemptible, which is exactly the kernel's raw_cpu_ptr().
 * slub_cpu_nocpu(): the same without attaching (-1 if the task holds no
 * vCPU of the instance), for statistics from hotplug callbacks.
 *
 * Preemption points: SLUB_PP_* name where slub.c's comments put a hazard.
 */
#define slub_this_cpu(mm)          raw_smp_processor_id(mm)
#define slub_cpu_nocpu(mm)         vmstat_cpu(mm)
#define slub_preempt_point(mm, id) mm_preempt_point((mm), (id))
#define SLUB_PP_TID_READ         MM_PP_TID_READ        /* between reading tid and the cpu area / freelist */
#define SLUB_PP_BEFORE_CMPXCHG   MM_PP_BEFORE_CMPXCHG  /* freelist and next read, before this_cpu_cmpxchg_double */
#define SLUB_PP_AFTER_CMPXCHG    MM_PP_AFTER_CMPXCHG   /* just after it */
#define SLUB_PP_SLOWPATH         MM_PP_SLAB_SLOWPATH   /* entering ___slab_alloc / __slab_free */
#define SLUB_PP_SLAB_CMPXCHG     MM_PP_SLAB_CMPXCHG    /* before a cmpxchg on a slab's {freelist, counters} */
#define SLUB_PP_BULK             MM_PP_BULK            /* bulk paths, between elements */

/* ---------------------------------------------------------------- constants */

#define SLUB_RED_INACTIVE  0xbb   /* red zone of a free object */
#define SLUB_RED_ACTIVE    0xcc   /* red zone of an allocated object */
#define POISON_INUSE       0x5a   /* padding, and slabs before their objects are set up */
#define POISON_FREE        0x6b   /* a free object's bytes ... */
#define POISON_END         0xa5   /* ... and its last byte */

#define MIN_PARTIAL        5      /* node partial slabs kept even when empty (at least) */
#define MAX_PARTIAL        10     /* ... (at most) */
#define OO_SHIFT           16
#define OO_MASK            ((1U << OO_SHIFT) - 1)
#define MAX_OBJS_PER_PAGE  32767  /* slab_counters.objects is 15 bits */
#define ARCH_SLAB_MINALIGN 8
#define L1_CACHE_BYTES     64

/* Internal cache flags (the kernel keeps them in the same word). */
#define __OBJECT_POISON    0x80000000U  /* poison the object itself (P without ctor) */

/*
 * Transaction ids: each vCPU's tid starts at its number and moves in steps
 * of TID_STEP, so tids are unique per vCPU and per operation; a cmpxchg with
 * a tid read on another vCPU never matches (Linux >= 2.6.39, "slub: Add
 * lockless fastpath").
 */
#define TID_STEP           64UL   /* roundup_pow_of_two(MM_MAX_CPUS) */
_Static_assert(TID_STEP >= MM_MAX_CPUS && (TID_STEP & (TID_STEP - 1)) == 0, "TID_STEP");
static inline unsigned long next_tid(unsigned long tid) { return tid + TID_STEP; }
static inline unsigned int tid_to_cpu(unsigned long tid) { return (unsigned int)(tid % TID_STEP); }
static inline unsigned long tid_to_event(unsigned long tid) { return tid / TID_STEP; }
static inline unsigned long init_tid(int cpu) { return (unsigned long)cpu; }

#if MM_DEBUG >= 1 || defined(MM_TEST_HOOKS)
#define SLUB_STATS 1              /* CONFIG_SLUB_STATS */
#endif
#if MM_DEBUG >= 1
#define SLUB_COUNT_LIVE 1         /* per-vCPU allocated-minus-freed counts for S1 */
#endif

/* ---------------------------------------------------------------- types */

typedef unsigned __int128 u128;
/* The pairs are declared as structs; access them as one 16-byte word. */
typedef unsigned __int128 u128_alias __attribute__((may_alias, aligned(16)));

/*
 * The user tracking of SLAB_STORE_USER.  6.6's SLUB_DEBUG selects
 * STACKDEPOT where the architecture has stack traces (x86-64 does), so its
 * struct track holds a stack depot handle and is 32 bytes; the model saves
 * no stacks (handle 0) but keeps the field, so the metadata and every
 * SLAB_STORE_USER layout are 6.6's.
 */
struct track {
	unsigned long addr;         /* caller of the allocation or free */
	unsigned int handle;        /* depot_stack_handle_t: always 0 here */
	int cpu;                    /* vCPU it ran on */
	int pid;                    /* the model's thread number */
	unsigned long when;         /* the instance's event clock ("jiffies") */
};
_Static_assert(sizeof(struct track) == 32, "struct track is 6.6's (x86-64, CONFIG_STACKDEPOT)");
enum track_item { TRACK_ALLOC, TRACK_FREE };

struct kmem_cache_order_objects {
	unsigned int x;             /* order << OO_SHIFT | objects */
};

/*
 * Per-vCPU state of a cache.  {freelist, tid} change together with one
 * double-word cmpxchg, so they are adjacent and 16-byte aligned.  Every
 * field the fast paths read is also read racily by a task that has just
 * been migrated away from this vCPU, so all of them are accessed with
 * (relaxed or acquire) atomics; only the vCPU's holder writes them.
 */
struct kmem_cache_cpu {
	union {
		struct {
			void *freelist;         /* next free object of the cpu slab (lockless) */
			unsigned long tid;      /* globally unique transaction id */
		};
		u128 freelist_tid;              /* both, for this_cpu_cmpxchg_double */
	};
	struct page *slab;                      /* the cpu slab we allocate from (frozen) */
	struct page *partial;                   /* cpu partial slabs (frozen), linked by ->next */
	local_lock_t lock;                      /* protects the three above against this vCPU's tasks and irqs */
#ifdef SLUB_COUNT_LIVE
	long live;                              /* objects allocated minus freed through this vCPU */
#endif
#ifdef SLUB_STATS
	unsigned long stat[NR_SLUB_STAT_ITEMS]; /* racy per-vCPU counters, as raw_cpu_inc */
#endif
} __attribute__((aligned(L1_CACHE_BYTES)));
_Static_assert(offsetof(struct kmem_cache_cpu, freelist) % 16 == 0, "freelist/tid must be 16-byte aligned");
_Static_assert(offsetof(struct kmem_cache_cpu, tid) == offsetof(struct kmem_cache_cpu, freelist) + sizeof(void *),
	       "tid must follow freelist");

/* The one NUMA node. */
struct kmem_cache_node {
	spinlock_t list_lock;                   /* protects partial, nr_partial, full */
	unsigned long nr_partial;               /* slabs on partial; read racily (atomic loads) */
	struct list_head partial;               /* unfrozen slabs with free objects */
	atomic_long nr_slabs;                   /* every slab of the cache */
	atomic_long total_objects;              /* objects in them */
	struct list_head full;                  /* full slabs of debug caches with SLAB_STORE_USER */
};

/* slub_debug=... as parsed: up to SLUB_DEBUG_MAX blocks of "flags,cache,cache". */
#define SLUB_DEBUG_MAX 8
struct slub_debug_block {
	slab_flags_t flags;
	char names[128];                        /* comma-separated, '*' suffix globs; "" = every cache */
};

/*
 * enum kmalloc_cache_type (include/linux/slab.h, Linux 6.6, in its order):
 * one set of kmalloc caches per type.  The model has no memcg
 * (CONFIG_MEMCG_KMEM off: KMALLOC_CGROUP is KMALLOC_NORMAL and
 * __GFP_ACCOUNT selects nothing) and no CONFIG_RANDOM_KMALLOC_CACHES.
 * KMALLOC_DMA stands for CONFIG_ZONE_DMA per instance: its caches exist
 * only when the config populates ZONE_DMA (slub_state.kmalloc_not_normal).
 */
enum kmalloc_cache_type {
	KMALLOC_NORMAL = 0,                     /* "kmalloc-N" */
	KMALLOC_CGROUP = KMALLOC_NORMAL,        /* no memcg */
	KMALLOC_RECLAIM,                        /* "kmalloc-rcl-N": SLAB_RECLAIM_ACCOUNT */
	KMALLOC_DMA,                            /* "dma-kmalloc-N": SLAB_CACHE_DMA */
	NR_KMALLOC_TYPES
};

/* The instance's SLUB: mm->slab_state. */
struct slub_state {
	struct mm *mm;
	struct mutex slab_mutex;                /* the kernel's slab_mutex (a sleeping lock): caches, options */
	struct list_head caches;                /* every struct kmem_cache, creation order */
	struct kmem_cache *kmalloc_caches[NR_KMALLOC_TYPES][KMALLOC_SHIFT_HIGH + 1]; /* by kmalloc_type(), kmalloc_index() */
	gfp_t kmalloc_not_normal;               /* KMALLOC_NOT_NORMAL_BITS: __GFP_RECLAIMABLE, __GFP_DMA with a DMA zone */

	/* options (mm_slub_configure); read without the mutex by allocations */
	enum slub_fastpath fastpath;
	bool hardened;                          /* CONFIG_SLAB_FREELIST_HARDENED */
	bool random;                            /* CONFIG_SLAB_FREELIST_RANDOM */
	bool init_on_alloc, init_on_free;
	unsigned int min_order, max_order, min_objects;
	unsigned long seed;
	unsigned long fail_new_slab;            /* every Nth new_slab fails; 0 never */
	atomic_ulong new_slab_count;
	int nr_debug;
	struct slub_debug_block debug[SLUB_DEBUG_MAX];
	bool disable_higher_order_debug;        /* an O in slub_debug: no metadata where it raises the order */

	atomic_ulong rnd;                       /* splitmix64 state */
	atomic_ulong clock;                     /* "jiffies" for tracking */

	/* slab_check()'s scratch, under slab_mutex: allocated once, not per check */
	unsigned char *check_map;               /* [MAX_OBJS_PER_PAGE + 1] */
	unsigned int *check_owner;              /* [end_pfn - first_pfn] */

	/* the KASAN quarantine (ASan builds) */
	spinlock_t q_lock;
	void *q_head, *q_tail;                  /* FIFO linked through the objects */
	size_t q_bytes, q_limit;
};

static inline struct slub_state *slub_state(const struct mm *mm)
{
	return (struct slub_state *)mm->slab_state;
}

/*
 * kmalloc_type() (include/linux/slab.h, Linux 6.6): the common case,
 * none of the "not normal" bits, in one test; then __GFP_DMA before
 * __GFP_RECLAIMABLE.  Without memcg every other case is KMALLOC_RECLAIM.
 * __GFP_DMA is a "not normal" bit only on an instance with a DMA zone.
 */
static __always_inline enum kmalloc_cache_type kmalloc_type(const struct slub_state *st, gfp_t flags)
{
	if (likely(!(flags & st->kmalloc_not_normal)))
		return KMALLOC_NORMAL;
	if (flags & st->kmalloc_not_normal & __GFP_DMA)
		return KMALLOC_DMA;
	return KMALLOC_RECLAIM;
}

/*
 * One layout kmem_cache_setup_layout() computed for a cache: what it was
 * computed from (besides the cache's creation arguments, fixed for its
 * life, and the instance's config) and what it gave.  A cache keeps its
 * last few (struct kmem_cache.layouts[]; the least recently used one makes
 * room for a new one): options that change and change back - the fuzz targets put them
 * back before every input (targets/common/slub_opts.c) - find the layout
 * already computed.  @rnd is part of what it was computed from: the same
 * options give another random_seq (and fp_random) from another random
 * state, so only a layout computed from this very state is taken again,
 * and the random state then moves past its @draws exactly as computing it
 * would have moved it.
 */
/*
 * freelist randomisation's sequence of one layout (init_cache_random_seq()).
 * The kernel shuffles it in kmem_cache_open(); here the layout reserves the
 * draws then (the random state moves past them at once, so nothing after it
 * changes) and, for a layout that options computed (mm_slub_configure()),
 * the shuffle runs when a slab first needs the sequence
 * (slub_cache_random_seq()): options that change relayout every cache, and
 * most never allocate a slab before the next change.  A cache's first layout
 * is made at once, as is the one slub_cache_forget_layouts() keeps, so every
 * fuzz input starts with the same ones made (the fuzz targets' stability).
 * The sequence is a pure function of @rnd, @count and @size, so when it is
 * made does not change it.
 */
struct slub_random_seq {
	atomic_int state;                       /* 0 not made, 1 being made, 2 made */
	unsigned long rnd;                      /* the random state its draws come after */
	unsigned int count, size;               /* objects per slab (oo), the stride */
	unsigned int seq[];                     /* object offsets, once made */
};

struct slub_layout {
	bool valid;
	unsigned long used;                     /* kmem_cache.layout_clock when last put in use */
	/* from */
	slab_flags_t cflags;                    /* kmem_cache_flags(): creation flags | slub_debug's */
	bool hardened, random;                  /* the options at the time */
	bool disable_higher_order_debug;        /* slub_debug's O */
	unsigned int min_order, max_order, min_objects;
	unsigned long rnd;                      /* slub_state.rnd before its draws */
	/* gave */
	unsigned long draws;                    /* slub_random() calls it took */
	slab_flags_t flags;
	unsigned long fp_random, fp_swab_mask;
	unsigned int size, inuse, offset, red_left_pad;
	struct kmem_cache_order_objects oo, min;
	gfp_t allocflags;
	unsigned long min_partial;
	unsigned int cpu_partial, cpu_partial_slabs;
	struct slub_random_seq *random_seq;     /* owned here; the cache's random_seq is its layout's */
};
#define SLUB_NR_LAYOUTS 4

struct kmem_cache {
	struct kmem_cache_cpu *cpu_slab;        /* [nr_cpus] */
	slab_flags_t flags;                     /* creation flags | slub_debug | internal */
	enum slub_fastpath fastpath;            /* the instance's variant, copied for the fast path */
	unsigned long min_partial;              /* keep this many empty slabs on the node */
	unsigned int size;                      /* stride: object + metadata + padding */
	unsigned int object_size;               /* the object as the client sees it */
	unsigned int offset;                    /* free pointer offset */
	unsigned int cpu_partial;               /* objects worth of cpu partial slabs */
	unsigned int cpu_partial_slabs;         /* ... as a number of slabs */
	struct kmem_cache_order_objects oo;     /* preferred order and objects */
	struct kmem_cache_order_objects min;    /* fallback order */
	gfp_t allocflags;                       /* gfp for slab pages */
	int refcount;                           /* 0: destroyed (with leaks) */
	void (*ctor)(void *);
	unsigned int inuse;                     /* offset to metadata */
	unsigned int align;
	unsigned int red_left_pad;              /* left red zone padding */
	unsigned long fp_random;                /* hardened: s->random, 0 when off */
	unsigned long fp_swab_mask;             /* hardened: ~0 (swab(addr) mixed in), 0 when off */
	struct slub_random_seq *random_seq;     /* freelist randomisation (NULL: off), slub_cache_random_seq() */
	const char *name;
	struct list_head list;                  /* on slub_state.caches */
	struct mm *mm;
	/* creation arguments, to recompute the layout when options change */
	unsigned int user_size, user_align;
	slab_flags_t user_flags;
	atomic_long nr_isolated;                /* objects a debug repair took out of use */
	unsigned long *last_tid;                /* [nr_cpus] the checker's view, T1 */
	_Atomic unsigned long l2_sig;           /* slab_check: the state its last level-2 walk passed in */
	struct slub_layout layouts[SLUB_NR_LAYOUTS]; /* computed layouts, under slab_mutex */
	unsigned int layout;                    /* the one in use: layouts[layout] */
	unsigned long layout_clock;             /* counts layouts put in use */
	struct kmem_cache_node node[1];
};

static inline struct kmem_cache_node *get_node(struct kmem_cache *s, int node)
{
	(void)node;
	return &s->node[0];
}

static inline bool kmem_cache_debug(const struct kmem_cache *s)
{
	return unlikely(s->flags & SLAB_DEBUG_FLAGS);
}
static inline bool kmem_cache_debug_flags(const struct kmem_cache *s, slab_flags_t f)
{
	return unlikely(s->flags & f);
}
static inline bool kmem_cache_has_cpu_partial(const struct kmem_cache *s)
{
	return !kmem_cache_debug(s);       /* CONFIG_SLUB_CPU_PARTIAL */
}
static inline bool freeptr_outside_object(const struct kmem_cache *s)
{
	return s->offset >= s->inuse;
}
/* get_info_end(): where the tracking data starts. */
static inline unsigned int get_info_end(const struct kmem_cache *s)
{
	return freeptr_outside_object(s) ? s->inuse + (unsigned int)sizeof(void *) : s->inuse;
}
static inline bool slub_debug_orig_size(const struct kmem_cache *s)
{
	return kmem_cache_debug_flags(s, SLAB_STORE_USER) && (s->flags & SLAB_KMALLOC);
}

static inline unsigned int oo_order(struct kmem_cache_order_objects x) { return x.x >> OO_SHIFT; }
static inline unsigned int oo_objects(struct kmem_cache_order_objects x) { return x.x & OO_MASK; }

/* ---------------------------------------------------------------- per-vCPU access */

static inline struct kmem_cache_cpu *slub_cpu(const struct kmem_cache *s, int cpu)
{
	return &s->cpu_slab[cpu];
}
/* raw_cpu_ptr(s->cpu_slab): may be stale by the next preemption point. */
static inline struct kmem_cache_cpu *raw_cpu_slab(const struct kmem_cache *s)
{
	return slub_cpu(s, slub_this_cpu(s->mm));
}
/* slub_get_cpu_ptr() / slub_put_cpu_ptr() (!PREEMPT_RT: get_cpu_ptr). */
static inline struct kmem_cache_cpu *slub_get_cpu_ptr(const struct kmem_cache *s)
{
	preempt_disable();
	return raw_cpu_slab(s);
}
static inline void slub_put_cpu_ptr(void)
{
	preempt_enable();
}

/* The fields of struct kmem_cache_cpu, READ_ONCE/WRITE_ONCE as atomics. */
static __always_inline void *c_freelist(const struct kmem_cache_cpu *c)
{
	/* acquire on the pair's first word: TSan's edge from the 16-byte cmpxchg (DESIGN facts) */
	return __atomic_load_n(&((struct kmem_cache_cpu *)c)->freelist, __ATOMIC_ACQUIRE);
}
static __always_inline unsigned long c_tid(const struct kmem_cache_cpu *c)
{
	return __atomic_load_n(&((struct kmem_cache_cpu *)c)->tid, __ATOMIC_RELAXED);
}
static __always_inline struct page *c_slab(const struct kmem_cache_cpu *c)
{
	return __atomic_load_n(&((struct kmem_cache_cpu *)c)->slab, __ATOMIC_RELAXED);
}
static __always_inline struct page *c_partial(const struct kmem_cache_cpu *c)
{
	return __atomic_load_n(&((struct kmem_cache_cpu *)c)->partial, __ATOMIC_RELAXED);
}
static __always_inline void c_set_freelist(struct kmem_cache_cpu *c, void *v)
{
	__atomic_store_n(&c->freelist, v, __ATOMIC_RELEASE);
}
static __always_inline void c_set_tid(struct kmem_cache_cpu *c, unsigned long v)
{
	__atomic_store_n(&c->tid, v, __ATOMIC_RELAXED);
}
static __always_inline void c_set_slab(struct kmem_cache_cpu *c, struct page *v)
{
	__atomic_store_n(&c->slab, v, __ATOMIC_RELAXED);
}
static __always_inline void c_set_partial(struct kmem_cache_cpu *c, struct page *v)
{
	__atomic_store_n(&c->partial, v, __ATOMIC_RELAXED);
}

/* stat(): CONFIG_SLUB_STATS, racy by design (raw_cpu_inc); relaxed so TSan agrees. */
static __always_inline void stat_add(const struct kmem_cache *s, enum slub_stat_item si, unsigned long n)
{
#ifdef SLUB_STATS
	int cpu = slub_cpu_nocpu(s->mm);
	if (unlikely(cpu < 0))
		return;               /* a hotplug callback of a task on no vCPU: not counted */
	unsigned long *p = &slub_cpu(s, cpu)->stat[si];
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
#else
	(void)s; (void)si; (void)n;
#endif
}
static __always_inline void stat(const struct kmem_cache *s, enum slub_stat_item si)
{
	stat_add(s, si, 1);
}

/* Debug builds: objects handed out minus objects taken back, for S1. */
static __always_inline void slub_count_live(const struct kmem_cache *s, long n)
{
#ifdef SLUB_COUNT_LIVE
	__atomic_fetch_add(&raw_cpu_slab(s)->live, n, __ATOMIC_RELAXED);
#else
	(void)s; (void)n;
#endif
}

/* ---------------------------------------------------------------- double-word cmpxchg */

static __always_inline u128 mk_u128(const void *lo, unsigned long hi)
{
	return ((u128)hi << 64) | (uintptr_t)lo;
}

/*
 * cmpxchg16b on a 16-byte-aligned pair.  @locked: with the lock prefix
 * (cmpxchg_double, and SLUB_FASTPATH_CMPXCHG_LOCKED), or without it
 * (this_cpu_cmpxchg_double: atomic against interrupts and preemption on
 * this vCPU, not against other vCPUs - which never write another vCPU's
 * pair).  TSan cannot see inline assembly, so TSan builds (and non-x86)
 * use the __atomic builtin for both, which clang inlines as lock
 * cmpxchg16b with -mcx16 (DESIGN facts); gcc builds use the assembly
 * rather than a libatomic call.
 */
static __always_inline bool cmpxchg16(u128_alias *ptr, u128 old, u128 new, bool locked)
{
#if defined(__x86_64__) && !MM_TSAN
	unsigned long lo = (unsigned long)old, hi = (unsigned long)(old >> 64);
	bool ok;
	if (locked)
		__asm__ __volatile__("lock cmpxchg16b %[p]"
				     : "=@ccz"(ok), [p] "+m"(*ptr), "+a"(lo), "+d"(hi)
				     : "b"((unsigned long)new), "c"((unsigned long)(new >> 64))
				     : "memory");
	else
		__asm__ __volatile__("cmpxchg16b %[p]"
				     : "=@ccz"(ok), [p] "+m"(*ptr), "+a"(lo), "+d"(hi)
				     : "b"((unsigned long)new), "c"((unsigned long)(new >> 64))
				     : "memory");
	return ok;
#else
	(void)locked;
	return __atomic_compare_exchange_n(ptr, &old, new, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
#endif
}

/* A consistent snapshot of a pair (lock cmpxchg16b of 0 with 0). */
static __always_inline u128 load16(u128_alias *ptr)
{
#if defined(__x86_64__) && !MM_TSAN
	u128 v = 0;
	unsigned long lo = 0, hi = 0;
	bool ok;
	__asm__ __volatile__("lock cmpxchg16b %[p]"
			     : "=@ccz"(ok), [p] "+m"(*ptr), "+a"(lo), "+d"(hi)
			     : "b"(0UL), "c"(0UL)
			     : "memory");
	(void)ok;
	v = ((u128)hi << 64) | lo;
	return v;
#else
	return __atomic_load_n(ptr, __ATOMIC_ACQUIRE);
#endif
}

/* ---------------------------------------------------------------- slabs */

/* struct slab's counters word, decoded. */
union slab_ctr {
	unsigned long counters;
	struct slab_counters c;
};
_Static_assert(sizeof(union slab_ctr) == sizeof(unsigned long), "counters is one word");

static __always_inline void *slab_freelist(const struct page *slab)
{
	return __atomic_load_n(&((struct page *)slab)->freelist, __ATOMIC_ACQUIRE);
}
static __always_inline unsigned long slab_counters(const struct page *slab)
{
	return __atomic_load_n(&((struct page *)slab)->counters, __ATOMIC_RELAXED);
}
static __always_inline union slab_ctr slab_ctr(const struct page *slab)
{
	union slab_ctr u = { .counters = slab_counters(slab) };
	return u;
}
/* Plain updates, for a slab nobody else can see or under list_lock of a debug cache. */
static __always_inline void slab_set_freelist(struct page *slab, void *v)
{
	__atomic_store_n(&slab->freelist, v, __ATOMIC_RELEASE);
}
static __always_inline void slab_set_counters(struct page *slab, unsigned long v)
{
	__atomic_store_n(&slab->counters, v, __ATOMIC_RELAXED);
}
static __always_inline unsigned int slab_objects(const struct page *slab) { return slab_ctr(slab).c.objects; }
static __always_inline unsigned int slab_inuse(const struct page *slab) { return slab_ctr(slab).c.inuse; }
static __always_inline bool slab_frozen(const struct page *slab) { return slab_ctr(slab).c.frozen; }

static __always_inline u128_alias *slab_pair(struct page *slab)
{
	return (u128_alias *)&slab->freelist_counters;
}

/*
 * cmpxchg_double_slab() / __slab_update_freelist(): the slab's {freelist,
 * counters} change together or not at all (lock cmpxchg16b: other vCPUs
 * free into the slab concurrently).
 */
static __always_inline bool slab_update_freelist(struct kmem_cache *s, struct page *slab,
						 void *freelist_old, unsigned long counters_old,
						 void *freelist_new, unsigned long counters_new)
{
	if (likely(cmpxchg16(slab_pair(slab), mk_u128(freelist_old, counters_old),
			     mk_u128(freelist_new, counters_new), true)))
		return true;
	stat(s, CMPXCHG_DOUBLE_FAIL);
	return false;
}

/*
 * slab_test_pfmemalloc() / slab_set_pfmemalloc() / __slab_clear_pfmemalloc()
 * (Linux 6.6 mm/slab.h): a slab made of reserve pages (page_is_pfmemalloc())
 * carries PG_active on its head page for as long as it is a slab.
 */
static inline bool slab_test_pfmemalloc(const struct page *slab)
{
	return page_flag_test(slab, PG_active);
}
static inline void slab_set_pfmemalloc(struct page *slab)
{
	page_flag_set(slab, PG_active);
}
static inline void __slab_clear_pfmemalloc(struct page *slab)
{
	page_flag_clear(slab, PG_active);
}

/*
 * pfmemalloc_match() (Linux 6.6): only a request entitled to the reserves
 * (gfp_pfmemalloc_allowed(): __GFP_MEMALLOC, or a PF_MEMALLOC task outside
 * interrupts) may take objects from a pfmemalloc slab in the slow path.
 * The fast path does not look: whoever finds objects on c->freelist takes
 * them, as in the kernel.
 */
static inline bool pfmemalloc_match(const struct page *slab, gfp_t gfp)
{
	if (unlikely(slab_test_pfmemalloc(slab)))
		return gfp_pfmemalloc_allowed(gfp);
	return true;
}

static inline unsigned int slab_order(const struct page *slab)
{
	return PageHead(slab) ? slab[1].compound_order : 0;
}
static inline void *slab_address(const struct mm *mm, const struct page *slab)
{
	return __page_address(mm, __page_to_pfn(mm, slab));
}
static inline size_t slab_size(const struct page *slab)
{
	return MM_PAGE_SIZE << slab_order(slab);
}

/*
 * The head page of the memory @x is in: NULL outside the instance's memory
 * or in a hole.  compound_head() reads the word at offset 8 of the page
 * racily, as the kernel does: on a tail page it is the head pointer | 1,
 * on a head page it is the first word of slab_list / next, which other
 * vCPUs rewrite under list_lock or the local lock - an aligned pointer, so
 * bit 0 reads as "head" whatever the value.  TSan cannot know about that
 * bit, hence __data_racy.
 */
static inline __data_racy struct page *slub_virt_to_head(const struct mm *mm, const void *x)
{
	uintptr_t a = (uintptr_t)x, base = (uintptr_t)mm->arena;
	if (unlikely(a < base || a >= base + mm->arena_len))
		return NULL;
	unsigned long pfn = mm->first_pfn + ((a - base) >> MM_PAGE_SHIFT);
	if (unlikely(!__pfn_valid(mm, pfn)))
		return NULL;
	struct page *p = __pfn_to_page(mm, pfn);
	unsigned long head = READ_ONCE(p->compound_head);
	return (head & 1) ? (struct page *)(head - 1) : p;
}
/* virt_to_slab(): the slab of @x, NULL if @x is not in a slab. */
static inline struct page *virt_to_slab(const struct mm *mm, const void *x)
{
	struct page *p = slub_virt_to_head(mm, x);
	return p && PageSlab(p) ? p : NULL;
}

/* fixup_red_left(): objects start after the left red zone. */
static inline void *fixup_red_left(const struct kmem_cache *s, void *p)
{
	return (char *)p + ((s->flags & SLAB_RED_ZONE) ? s->red_left_pad : 0);
}
#define for_each_object(p, s, addr, objects)                                          \
	for ((p) = fixup_red_left((s), (addr));                                        \
	     (char *)(p) < (char *)(addr) + (size_t)(objects) * (s)->size;             \
	     (p) = (char *)(p) + (s)->size)

static inline unsigned int obj_to_index(const struct kmem_cache *s, const void *addr, const void *obj)
{
	return (unsigned int)(((const char *)obj - (const char *)addr) / s->size);
}
/* check_valid_pointer(): NULL or the start of an object of @slab. */
static inline bool check_valid_pointer(const struct kmem_cache *s, const struct mm *mm,
				       const struct page *slab, const void *object)
{
	if (!object)
		return true;
	const char *base = slab_address(mm, slab);
	const char *o = (const char *)object - ((s->flags & SLAB_RED_ZONE) ? s->red_left_pad : 0);
	if (o < base || o >= base + (size_t)slab_objects(slab) * s->size || (size_t)(o - base) % s->size)
		return false;
	return true;
}

/* ---------------------------------------------------------------- free pointers */

/*
 * Free pointers live inside free objects, which ASan keeps poisoned and
 * which a task migrated away from a vCPU may read while another task
 * already owns the object: every access goes through these helpers
 * (SLUB's metadata_access_enable(), and get_freepointer_safe()).
 */
/* Not always_inline: a sanitizer attribute is dropped when a function is forced
 * into an instrumented caller; plain inline keeps them apart in sanitizer builds. */
#if defined(MM_ASAN) || MM_TSAN
#define __metadata_inline inline
#else
#define __metadata_inline __always_inline
#endif
static __metadata_inline __no_sanitize_address unsigned long metadata_read_word(const void *p)
{
	return __atomic_load_n((const unsigned long *)p, __ATOMIC_RELAXED);
}
static __metadata_inline __no_sanitize_address void metadata_write_word(void *p, unsigned long v)
{
	__atomic_store_n((unsigned long *)p, v, __ATOMIC_RELAXED);
}
/* The racy read of get_freepointer_safe(): the value may belong to an object
 * another task owns and writes right now; the tid cmpxchg then fails and the
 * value is thrown away.  TSan cannot know that, hence no instrumentation. */
static __metadata_inline __no_sanitize_address __no_sanitize_thread unsigned long
metadata_read_word_racy(const void *p)
{
#if MM_TSAN
	return *(const volatile unsigned long *)p;
#else
	return __atomic_load_n((const unsigned long *)p, __ATOMIC_RELAXED);
#endif
}

/* CONFIG_SLAB_FREELIST_HARDENED: ptr ^ s->random ^ swab(ptr_addr) (Linux >= 5.7). */
static __always_inline unsigned long freelist_ptr_encode(const struct kmem_cache *s, const void *ptr,
							 unsigned long ptr_addr)
{
	return (uintptr_t)ptr ^ s->fp_random ^ (__builtin_bswap64(ptr_addr) & s->fp_swab_mask);
}
static __always_inline void *freelist_ptr_decode(const struct kmem_cache *s, unsigned long v,
						 unsigned long ptr_addr)
{
	return (void *)(v ^ s->fp_random ^ (__builtin_bswap64(ptr_addr) & s->fp_swab_mask));
}
static __always_inline void *get_freepointer(const struct kmem_cache *s, const void *object)
{
	unsigned long addr = (uintptr_t)object + s->offset;
	return freelist_ptr_decode(s, metadata_read_word((const void *)addr), addr);
}
static __always_inline void *get_freepointer_safe(const struct kmem_cache *s, const void *object)
{
	unsigned long addr = (uintptr_t)object + s->offset;
	return freelist_ptr_decode(s, metadata_read_word_racy((const void *)addr), addr);
}
static __always_inline void set_freepointer(const struct kmem_cache *s, void *object, const void *fp)
{
	unsigned long addr = (uintptr_t)object + s->offset;
	metadata_write_word((void *)addr, freelist_ptr_encode(s, fp, addr));
}

/* ---------------------------------------------------------------- helpers */

static inline unsigned int get_order_size(size_t size)
{
	unsigned int order = 0;
	size = (size - 1) >> MM_PAGE_SHIFT;
	while (size) {
		order++;
		size >>= 1;
	}
	return order;
}
#define SLUB_ALIGN(x, a)      (((x) + (a) - 1) & ~((__typeof__(x))(a) - 1))
#define SLUB_ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a) - 1))

/*
 * Random numbers of the instance: splitmix64 (deterministic for a seed).
 * The state only counts up by SLUB_RND_GAMMA per draw, so n draws can be
 * taken at once (slub_random_reserve) and made from a local copy of the
 * state: the same values, and the same state after them, as n calls.
 */
#define SLUB_RND_GAMMA 0x9e3779b97f4a7c15UL
static inline unsigned long slub_random_mix(unsigned long z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9UL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebUL;
	return z ^ (z >> 31);
}
static inline unsigned long slub_random(struct slub_state *st)
{
	return slub_random_mix(atomic_fetch_add_explicit(&st->rnd, SLUB_RND_GAMMA, memory_order_relaxed) +
			       SLUB_RND_GAMMA);
}
/* @n draws at once: returns the state before them; draw k (1..n) is slub_random_mix(ret + k * SLUB_RND_GAMMA). */
static inline unsigned long slub_random_reserve(struct slub_state *st, unsigned long n)
{
	return atomic_fetch_add_explicit(&st->rnd, n * SLUB_RND_GAMMA, memory_order_relaxed);
}

/* ---------------------------------------------------------------- cross-file prototypes */

/* cache.c */
int calculate_sizes(struct kmem_cache *s);
void slub_cache_init_cpus(struct kmem_cache *s);
void slub_cache_reset(struct kmem_cache *s);
struct kmem_cache *__kmem_cache_create(struct mm *mm, const char *name, unsigned int size,
				       unsigned int align, slab_flags_t flags, void (*ctor)(void *),
				       char *err, size_t errlen);
void __kmem_cache_release(struct kmem_cache *s);
int slub_cache_relayout(struct kmem_cache *s);
void slub_cache_forget_layouts(struct kmem_cache *s);
const unsigned int *slub_cache_random_seq(struct slub_random_seq *rs);
bool slub_is_cache(struct slub_state *st, const struct kmem_cache *s);

/* fastpath.c */
void *slab_alloc_node(struct kmem_cache *s, gfp_t gfp, unsigned long addr, size_t orig_size);
void slab_free(struct kmem_cache *s, struct page *slab, void *head, void *tail, void **p, int cnt,
	       unsigned long addr);
void do_slab_free(struct kmem_cache *s, struct page *slab, void *head, void *tail, int cnt,
		  unsigned long addr);
bool slab_post_alloc_hook(struct kmem_cache *s, gfp_t gfp, size_t size, void **p, bool init,
			  unsigned int orig_size);
bool slab_want_init_on_alloc(const struct kmem_cache *s, gfp_t gfp);
struct kmem_cache *cache_from_obj(struct kmem_cache *s, const void *x, struct page **slabp,
				  unsigned long addr);

/* slowpath.c */
void *___slab_alloc(struct kmem_cache *s, gfp_t gfp, unsigned long addr, struct kmem_cache_cpu *c,
		    unsigned int orig_size);
void *__slab_alloc(struct kmem_cache *s, gfp_t gfp, unsigned long addr, struct kmem_cache_cpu *c,
		   unsigned int orig_size);
struct page *new_slab(struct kmem_cache *s, gfp_t gfp);
gfp_t kmalloc_fix_flags(struct mm *mm, gfp_t flags);
void discard_slab(struct kmem_cache *s, struct page *slab);
void free_slab(struct kmem_cache *s, struct page *slab);
void inc_slabs_node(struct kmem_cache *s, unsigned int objects);
void dec_slabs_node(struct kmem_cache *s, unsigned int objects);
void add_partial(struct kmem_cache_node *n, struct page *slab, bool tail);
void remove_partial(struct kmem_cache_node *n, struct page *slab);
void deactivate_slab(struct kmem_cache *s, struct page *slab, void *freelist);
void flush_all(struct kmem_cache *s, bool remote);
void flush_all_cpus_locked(struct kmem_cache *s, bool remote);   /* under cpus_read_lock() */
void __flush_cpu_slab(struct kmem_cache *s, int cpu);
unsigned long node_nr_partial(const struct kmem_cache_node *n);

/* free.c */
void __slab_free(struct kmem_cache *s, struct page *slab, void *head, void *tail, int cnt,
		 unsigned long addr);
void put_cpu_partial(struct kmem_cache *s, struct page *slab, int drain);
void __unfreeze_partials(struct kmem_cache *s, struct page *partial_slab);
void unfreeze_partials(struct kmem_cache *s);
void unfreeze_partials_cpu(struct kmem_cache *s, struct kmem_cache_cpu *c);
bool slab_free_naive_double_free(struct kmem_cache *s, struct page *slab, void *object, void *fp);

/* debug.c */
slab_flags_t kmem_cache_flags(struct slub_state *st, const char *name, slab_flags_t flags);
int slub_parse_debug(struct slub_state *st, const char *str, char *err, size_t errlen);
void setup_object_debug(struct kmem_cache *s, void *object);
void setup_slab_debug(struct kmem_cache *s, struct page *slab, void *addr);
void init_object(struct kmem_cache *s, void *object, unsigned char val);
bool check_object(struct kmem_cache *s, struct page *slab, void *object, unsigned char val);
void slab_pad_check(struct kmem_cache *s, struct page *slab);
void *alloc_single_from_partial(struct kmem_cache *s, struct kmem_cache_node *n, struct page *slab,
				unsigned int orig_size);
void *alloc_single_from_new_slab(struct kmem_cache *s, struct page *slab, unsigned int orig_size);
void free_to_partial_list(struct kmem_cache *s, struct page *slab, void *head, void *tail, int cnt,
			  unsigned long addr);
void add_full(struct kmem_cache *s, struct kmem_cache_node *n, struct page *slab);
void remove_full(struct kmem_cache *s, struct kmem_cache_node *n, struct page *slab);
void set_track(struct kmem_cache *s, void *object, enum track_item alloc, unsigned long addr);
unsigned int get_orig_size(struct kmem_cache *s, void *object);
void set_orig_size(struct kmem_cache *s, void *object, unsigned int orig_size);
void slab_err(struct kmem_cache *s, struct page *slab, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void object_err(struct kmem_cache *s, struct page *slab, void *object, const char *reason);
void slab_fix(struct kmem_cache *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void slub_report_bad_free(struct mm *mm, struct kmem_cache *s, const void *x, const char *why);
void list_slab_objects(struct kmem_cache *s, struct page *slab);

/* kmalloc.c */
int create_kmalloc_caches(struct mm *mm, char *err, size_t errlen);

/* hooks.c */
void slub_quarantine_drain(struct mm *mm, struct kmem_cache *only);

#endif /* MM_SLAB_SLAB_H */

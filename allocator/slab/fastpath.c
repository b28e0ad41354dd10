/* SPDX-License-Identifier: MIT */
/*
 * fastpath.c - SLUB's lockless allocation and free fast paths, the hooks
 * around them, and kmem_cache_alloc/free.
 *
 * Models mm/slub.c of Linux 6.6 (slab_alloc_node(), do_slab_free(),
 * __update_cpu_freelist_fast(), slab_post_alloc_hook(), slab_free_hook()),
 * with the tid/cpu consistency loop of Linux 4.0-5.14 ("mm/slub: optimize
 * alloc/free fastpath by removing preemption on/off", 2015) in place of
 * 6.6's equivalent "read the cpu area first, the tid through it".
 *
 * Locking
 * =======
 * Lock order:
 *   1. slab_mutex            (per instance; struct mutex: sleeps, cpu/mutex.h)
 *   2. node->list_lock       (spinlock, taken with irqs off)
 *   3. cpu_slab->lock        (local_lock_t: irqs off on the holder's vCPU)
 *   4. none: a slab's {freelist, counters} pair is only ever changed by
 *      cmpxchg16b, never locked (the kernel's slab_lock() fallback is for
 *      machines without cmpxchg_double).
 * The page allocator's locks (pcp->lock, zone->lock) are taken below all
 * of these by new_slab() and discard_slab(), never the other way round.
 *
 * What protects what:
 *   slab_mutex      the list of caches, the options, a cache's refcount.
 *   list_lock       n->partial, n->full and n->nr_partial (which is also
 *                   read without it, as a hint).  A slab goes onto or off a
 *                   node list only under list_lock, and acquire_slab()
 *                   freezes only under it: so a slab that deactivate_slab()
 *                   or __slab_free() is about to list cannot be frozen by
 *                   somebody else in between (they take the lock *before*
 *                   their cmpxchg).
 *   cpu_slab->lock  c->slab, c->partial, and c->freelist/c->tid in the slow
 *                   paths, against the vCPU's own tasks and interrupt
 *                   handlers.  Only the vCPU's holder takes it; nothing
 *                   protects a vCPU's data against another vCPU, because no
 *                   other vCPU writes it (remote flushes run *on* the vCPU,
 *                   see below).
 *   tid + cmpxchg   c->freelist in the fast paths, with no lock at all.
 *   frozen          a frozen slab belongs to exactly one vCPU (as its cpu
 *                   slab or on its cpu partial list).  Only that vCPU takes
 *                   objects off the slab's freelist (get_freelist()); every
 *                   vCPU may free into it.  An unfrozen slab is on a node
 *                   list or full.
 *
 * The lockless protocol
 * ---------------------
 * Per vCPU, {freelist, tid} is one 16-byte word.  The tid starts at the
 * vCPU number and advances by TID_STEP on every change of the freelist, so
 * a tid names one vCPU and one moment of its freelist.
 *
 *   alloc  1. read tid and the cpu area on the same vCPU (the consistency
 *             loop: tid first, then the area, then the area's tid again);
 *          2. read c->freelist (object) and c->slab - in this order, after
 *             the tid, so that they cannot belong to a newer tid;
 *          3. next = the object's free pointer (racy: the object may be in
 *             use by now if we were preempted);
 *          4. cmpxchg16b the pair of the vCPU we run on *now* from
 *             {object, tid} to {next, tid + TID_STEP}.  It succeeds only if
 *             this is the vCPU the tid was read on and nothing touched its
 *             freelist since; otherwise start again.
 *   free   the same, pushing: the object's slab must be c->slab (else
 *          __slab_free()); its free pointer is set to c->freelist before
 *          the cmpxchg of {freelist, tid} -> {object, tid + TID_STEP}.
 *   remote __slab_free() pushes onto slab->freelist with cmpxchg16b on
 *          {freelist, counters}, inuse dropping in the same word, and takes
 *          list_lock only when the slab must change lists.
 *
 * Slab states
 * -----------
 *   state          frozen  on a list                    who takes objects from it
 *   cpu slab         1     none (c->slab)               its vCPU: c->freelist locklessly,
 *                                                       slab->freelist via get_freelist()
 *   cpu partial      1     c->partial, via ->next       nobody until ___slab_alloc()
 *                                                       makes it the cpu slab
 *   node partial     0     n->partial                   get_partial_node() under list_lock,
 *                                                       freezing it with cmpxchg (acquire_slab)
 *   full             0     none (n->full: debug caches  nobody; its first free makes it cpu
 *                          with SLAB_STORE_USER)        partial (put_cpu_partial) or node
 *                                                       partial (no cpu partial lists)
 *   empty            -     discarded (page allocator) unless the node holds
 *                          fewer than min_partial partial slabs
 * Transitions: new_slab -> cpu slab; cpu slab -> node partial / full /
 * discarded (deactivate_slab); full -> cpu partial (__slab_free freezes,
 * put_cpu_partial lists); cpu partial -> cpu slab, or -> node partial /
 * discarded (__unfreeze_partials); node partial -> cpu slab or cpu partial
 * (get_partial_node), or discarded when its last object is freed.
 * Debug caches never have cpu slabs (kmem_cache_debug(): every allocation
 * and free goes through the node lists under list_lock, where the checks
 * run), as in the kernel.
 *
 * Preemption points (the CPU model) sit where slub.c's comments put the
 * hazards: TID_READ between the tid and the cpu area, and again before the
 * freelist is read; BEFORE_CMPXCHG / AFTER_CMPXCHG around the cmpxchg;
 * SLAB_CMPXCHG (see slab.h) before every cmpxchg on a slab; SLOWPATH on
 * entering the slow paths; BULK between objects of the bulk paths.  A
 * migration or an interrupt at any of them must leave the paths correct.
 *
 * Remote flush: kmem_cache_shrink/destroy must empty every vCPU's cpu slab
 * and cpu partial list (flush_all, under cpus_read_lock() as in 6.6, so no
 * vCPU is going down meanwhile).  The kernel runs that on each CPU as a
 * work item; the model runs it on the vCPU when it can get there without
 * waiting (its own, or a free one it migrates to).  A vCPU another task
 * holds is flushed from outside by destroy and validate_slab_cache, which
 * require that nobody uses the cache concurrently, and skipped by shrink
 * (best effort, like a kernel shrink racing with users).  Exact remote
 * flushes need a run-on-vCPU primitive from the CPU model.
 *
 * Fast-path variants (the 2007 thread, for the benchmark; per instance,
 * switched only while nobody allocates):
 *   SLUB_FASTPATH_CMPXCHG         this_cpu_cmpxchg_double: cmpxchg16b
 *                                 without the lock prefix (the default)
 *   SLUB_FASTPATH_CMPXCHG_LOCKED  the same with lock cmpxchg16b
 *   SLUB_FASTPATH_IRQOFF          local_irq_save(); pop/push; tid bump;
 *                                 local_irq_restore() - the pre-cmpxchg
 *                                 SLUB; the tid still advances, so the
 *                                 variants can even be mixed safely
 */
#include "slab/slab.h"
#include "slab/kasan.h"

#define _RET_IP_ ((unsigned long)__builtin_return_address(0))

/* ---------------------------------------------------------------- hooks */

/* slab_want_init_on_alloc() (Linux 6.6): __GFP_ZERO, or init_on_alloc for caches without a ctor. */
bool slab_want_init_on_alloc(const struct kmem_cache *s, gfp_t gfp)
{
	if (slub_state(s->mm)->init_on_alloc) {
		if (s->ctor)
			return false;
		if (s->flags & SLAB_POISON)
			return gfp & __GFP_ZERO;
		return true;
	}
	return gfp & __GFP_ZERO;
}

static inline bool slab_want_init_on_free(const struct kmem_cache *s)
{
	if (slub_state(s->mm)->init_on_free)
		return !(s->ctor || (s->flags & SLAB_POISON));
	return false;
}

/* maybe_wipe_obj_freeptr(): init_on_free zeroed the object before its free pointer was written. */
static __always_inline void maybe_wipe_obj_freeptr(struct kmem_cache *s, void *obj)
{
	if (unlikely(slab_want_init_on_free(s)) && obj && !freeptr_outside_object(s))
		metadata_write_word((char *)obj + s->offset, 0);
}

/*
 * slab_post_alloc_hook() (Linux 6.6): the objects become the client's:
 * KASAN unpoisons exactly the usable bytes (@orig_size: the request of a
 * kmalloc, else the object size), zeroing if asked - of a kmalloc cache
 * with SLAB_STORE_USER or SLAB_RED_ZONE debugging only the request, the
 * rest being red-zoned (or, without STORE_USER to keep the request, left
 * as it is): the kernel's test is on either flag.
 */
bool slab_post_alloc_hook(struct kmem_cache *s, gfp_t gfp, size_t size, void **p, bool init,
			  unsigned int orig_size)
{
	unsigned int zero_size = kmem_cache_debug_flags(s, SLAB_STORE_USER | SLAB_RED_ZONE) &&
				 (s->flags & SLAB_KMALLOC) ? orig_size : s->object_size;

	(void)gfp;
	for (size_t i = 0; i < size; i++) {
		kasan_unpoison_alloc(s, p[i], orig_size);
		if (init) {
			kasan_unpoison(p[i], zero_size);
			memset(p[i], 0, zero_size);
			kasan_unpoison_alloc(s, p[i], orig_size);
		}
	}
	slub_count_live(s, (long)size);
	return true;
}

/*
 * slab_free_hook() (Linux 6.6): KASAN's checks and poisoning, init_on_free.
 * Returns true if the object is to be freed now, false if the quarantine
 * took it.  The free pointer word is not zeroed when it lies outside the
 * object (it is rewritten right away, and a zero would not decode).
 */
static __always_inline bool slab_free_hook(struct kmem_cache *s, struct page *slab, void *x, bool init)
{
#ifdef MM_ASAN
	/* kasan_slab_free(): an object start, and not already freed. */
	const char *base = fixup_red_left(s, slab_address(s->mm, slab));
	if ((char *)x < base || ((char *)x - base) % s->size)
		kasan_report_invalid_free(x, "invalid-free", "kmem_cache_free", s->name);
	if (!kasan_byte_accessible(x))
		kasan_report_invalid_free(x, "double-free", "kmem_cache_free", s->name);
#else
	(void)slab;
#endif
	/*
	 * init_on_free as Linux 6.12 does it: only the orig_size bytes the
	 * client asked for are zeroed, and the request size is put back after
	 * the metadata is - 6.6 zeroed both, so a kmalloc cache with red zones
	 * and user tracking (slub_debug=ZU) then failed its own kmalloc
	 * red-zone check on every free and leaked the object (found by the
	 * kmalloc target).
	 */
	if (init) {
		unsigned int rsize = (s->flags & SLAB_RED_ZONE) ? s->red_left_pad : 0;
		unsigned int orig_size = get_orig_size(s, x);
		kasan_unpoison(x, s->object_size);
		memset(x, 0, orig_size);
		for (unsigned int off = s->inuse; off + 8 <= s->size - rsize; off += 8)
			if (off != s->offset)
				metadata_write_word((char *)x + off, 0);
		set_orig_size(s, x, orig_size);
	}
	kasan_poison_free(s, x);
	return !slub_quarantine_put(s, x);
}

/* slab_free_freelist_hook(): the hook for every object of a detached freelist [head .. tail]. */
static bool slab_free_freelist_hook(struct kmem_cache *s, struct page *slab, void **head, void **tail,
				    int *cnt)
{
	void *object, *next = *head, *old_tail = *tail ? *tail : *head;
	bool init = slab_want_init_on_free(s);
	int n = *cnt, seen = 0;

	*head = NULL;
	*tail = NULL;
	do {
		if (unlikely(++seen > n))
			mm_hang(s->mm, "slab_free_freelist_hook: detached freelist longer than its count", (unsigned long)seen);
		object = next;
		next = get_freepointer(s, object);
		if (slab_free_hook(s, slab, object, init)) {
			/* keep it: rebuild the list (in reverse order) */
			set_freepointer(s, object, *head);
			*head = object;
			if (!*tail)
				*tail = object;
		} else {
			--(*cnt);          /* its reuse is delayed */
		}
	} while (object != old_tail);
	return *head != NULL;
}

/* ---------------------------------------------------------------- this_cpu_cmpxchg_double */

/* this_cpu_read(s->cpu_slab->tid): one access, on the vCPU the task runs on. */
static __always_inline unsigned long this_cpu_tid(const struct kmem_cache *s)
{
	return c_tid(raw_cpu_slab(s));
}

/*
 * __update_cpu_freelist_fast() (Linux 6.6): this_cpu_cmpxchg_double() on
 * {freelist, tid} of the vCPU the task runs on *now* (the kernel's per-cpu
 * relocation), never of the area read earlier.
 */
static __always_inline bool __update_cpu_freelist_fast(struct kmem_cache *s, void *freelist_old,
						       void *freelist_new, unsigned long tid)
{
	struct kmem_cache_cpu *c = raw_cpu_slab(s);
#ifdef MM_INJECT_SLUB_ABA_SINGLE_CMPXCHG
	/*
	 * Injected bug (bug zoo: slub-aba-single-cmpxchg): "SLUB: Alternate
	 * fast paths using cmpxchg_local" (2008, reverted): a cmpxchg of the
	 * freelist head alone.  An interrupt that allocates and frees between
	 * the read of next and this cmpxchg puts the same head back with a
	 * different next: the cmpxchg succeeds and installs a stale next.
	 */
	(void)tid;
	return __atomic_compare_exchange_n(&c->freelist, &freelist_old, freelist_new, false,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
#else
	return cmpxchg16((u128_alias *)&c->freelist_tid, mk_u128(freelist_old, tid),
			 mk_u128(freelist_new, next_tid(tid)), s->fastpath == SLUB_FASTPATH_CMPXCHG_LOCKED);
#endif
}

/*
 * The tid/cpu consistency loop: tid and the cpu area must come from the
 * same vCPU.  The task may migrate between the two reads; then the area's
 * own tid differs and we read again.  Without the loop a tid of vCPU A and
 * the area of vCPU B reach the cmpxchg, which (run back on A) can succeed
 * with B's freelist: the 2015 bug of slub-tid-cpu-mismatch.
 */
static __always_inline struct kmem_cache_cpu *read_tid_and_cpu(struct kmem_cache *s, unsigned long *tidp)
{
	struct kmem_cache_cpu *c;
	unsigned long tid;

#ifdef MM_INJECT_SLUB_TID_CPU_MISMATCH
	/* Injected bug (bug zoo: slub-tid-cpu-mismatch): no consistency retry. */
	tid = this_cpu_tid(s);
	slub_preempt_point(s->mm, SLUB_PP_TID_READ);
	c = raw_cpu_slab(s);
#else
	do {
		tid = this_cpu_tid(s);
		slub_preempt_point(s->mm, SLUB_PP_TID_READ);
		c = raw_cpu_slab(s);
	} while (unlikely(tid != c_tid(c)));
#endif
	*tidp = tid;
	return c;
}

/* ---------------------------------------------------------------- alloc */

/* The pre-2011 fast path: interrupts off around the pop (SLUB_FASTPATH_IRQOFF). */
static noinline void *slab_alloc_irqoff(struct kmem_cache *s, gfp_t gfp, unsigned long addr,
					unsigned int orig_size)
{
	struct kmem_cache_cpu *c;
	unsigned long flags;
	void *object;

	local_irq_save(flags);
	c = raw_cpu_slab(s);                 /* pinned: interrupts are off */
	object = c_freelist(c);
	if (unlikely(!object || !c_slab(c))) {
		local_irq_restore(flags);
		return __slab_alloc(s, gfp, addr, NULL, orig_size);
	}
	c_set_freelist(c, get_freepointer(s, object));
	c_set_tid(c, next_tid(c_tid(c)));   /* an interrupted lockless path must fail */
	local_irq_restore(flags);
	stat(s, ALLOC_FASTPATH);
	return object;
}

/*
 * slab_alloc_node() (Linux 6.6, with the 4.x-5.x tid loop): pop the first
 * object of this vCPU's freelist with one cmpxchg16b; anything else (no
 * freelist, no cpu slab) is the slow path.
 */
void *slab_alloc_node(struct kmem_cache *s, gfp_t gfp, unsigned long addr, size_t orig_size)
{
	struct kmem_cache_cpu *c;
	struct page *slab;
	unsigned long tid;
	void *object;

	might_alloc(gfp);       /* slab_pre_alloc_hook() */
	if (unlikely(s->fastpath == SLUB_FASTPATH_IRQOFF)) {
		object = slab_alloc_irqoff(s, gfp, addr, (unsigned int)orig_size);
		goto out;
	}
redo:
	/* 1. tid and cpu area of one vCPU. */
	c = read_tid_and_cpu(s, &tid);
	/*
	 * 2. Everything else of the area is read after the tid: an object and
	 *    slab that belong to an older tid cannot pass the cmpxchg; newer
	 *    ones only make it fail.
	 */
	barrier();
	slub_preempt_point(s->mm, SLUB_PP_TID_READ);
	object = c_freelist(c);
	slab = c_slab(c);
	if (unlikely(!object || !slab)) {
		object = __slab_alloc(s, gfp, addr, c, (unsigned int)orig_size);
	} else {
		/* 3. The racy read: the object may already be someone else's. */
		void *next_object = get_freepointer_safe(s, object);

		slub_preempt_point(s->mm, SLUB_PP_BEFORE_CMPXCHG);
		/* 4. {object, tid} -> {next, tid + TID_STEP} on the vCPU we run on now. */
		if (unlikely(!__update_cpu_freelist_fast(s, object, next_object, tid))) {
			stat(s, CMPXCHG_DOUBLE_CPU_FAIL);    /* note_cmpxchg_failure() */
			goto redo;
		}
		slub_preempt_point(s->mm, SLUB_PP_AFTER_CMPXCHG);
		__builtin_prefetch((void *)((uintptr_t)next_object + s->offset));  /* prefetch_freepointer() */
		stat(s, ALLOC_FASTPATH);
	}
out:
	if (unlikely(!object))
		return NULL;
	maybe_wipe_obj_freeptr(s, object);
	slab_post_alloc_hook(s, gfp, 1, &object, slab_want_init_on_alloc(s, gfp), (unsigned int)orig_size);
	return object;
}

/* ---------------------------------------------------------------- free */

/* The pre-2011 free fast path (SLUB_FASTPATH_IRQOFF). */
static noinline void do_slab_free_irqoff(struct kmem_cache *s, struct page *slab, void *head, void *tail,
					 int cnt, unsigned long addr)
{
	struct kmem_cache_cpu *c;
	unsigned long flags;
	void *freelist;

	local_irq_save(flags);
	c = raw_cpu_slab(s);
	freelist = c_freelist(c);
	if (unlikely(slab != c_slab(c))) {
		local_irq_restore(flags);
		__slab_free(s, slab, head, tail, cnt, addr);
		return;
	}
	if (unlikely(slab_free_naive_double_free(s, slab, tail, freelist))) {
		local_irq_restore(flags);
		return;
	}
	set_freepointer(s, tail, freelist);
	c_set_freelist(c, head);
	c_set_tid(c, next_tid(c_tid(c)));
	local_irq_restore(flags);
	stat(s, FREE_FASTPATH);           /* one per call, whatever @cnt (6.6) */
	slub_count_live(s, -cnt);
}

/*
 * do_slab_free() (Linux 6.6): push the detached freelist [head .. tail] of
 * @cnt objects of @slab.  Onto this vCPU's freelist with one cmpxchg16b if
 * @slab is the cpu slab, otherwise __slab_free().
 */
void do_slab_free(struct kmem_cache *s, struct page *slab, void *head, void *tail, int cnt,
		  unsigned long addr)
{
	void *tail_obj = tail ? tail : head;
	struct kmem_cache_cpu *c;
	unsigned long tid;
	void *freelist;

	if (unlikely(s->fastpath == SLUB_FASTPATH_IRQOFF)) {
		do_slab_free_irqoff(s, slab, head, tail_obj, cnt, addr);
		return;
	}
redo:
	/* 1. tid and cpu area of one vCPU (see slab_alloc_node). */
	c = read_tid_and_cpu(s, &tid);
	barrier();
	slub_preempt_point(s->mm, SLUB_PP_TID_READ);

#ifdef MM_INJECT_SLUB_FREE_COND_FLIPPED
	/*
	 * Injected bug (bug zoo: slub-free-cond-flipped): the class of the
	 * flipped test in slab_free() of the 2007 cmpxchg_local review
	 * (shared/seeds/slub-cmpxchg-local-2007.txt).  Half of "the object
	 * belongs to the cpu slab" is negated: only *another* cpu slab sends
	 * the free to the slow path, so with no cpu slab any object is pushed
	 * on this vCPU's freelist.
	 */
	if (unlikely(slab != c_slab(c) && c_slab(c) != NULL)) {
#else
	/* 2. Only objects of the cpu slab go on the cpu freelist. */
	if (unlikely(slab != c_slab(c))) {
#endif
		__slab_free(s, slab, head, tail_obj, cnt, addr);
		return;
	}
	freelist = c_freelist(c);
	if (unlikely(slab_free_naive_double_free(s, slab, tail_obj, freelist)))
		return;
	/* 3. Link the chain in front of the freelist; nothing is published yet. */
	set_freepointer(s, tail_obj, freelist);
	slub_preempt_point(s->mm, SLUB_PP_BEFORE_CMPXCHG);
	/* 4. {freelist, tid} -> {head, tid + TID_STEP} on the vCPU we run on now. */
	if (unlikely(!__update_cpu_freelist_fast(s, freelist, head, tid))) {
		stat(s, CMPXCHG_DOUBLE_CPU_FAIL);
		goto redo;
	}
	slub_preempt_point(s->mm, SLUB_PP_AFTER_CMPXCHG);
	stat(s, FREE_FASTPATH);           /* one per call, whatever @cnt (6.6) */
	slub_count_live(s, -cnt);
}

/* slab_free() (Linux 6.6): the free hooks, then do_slab_free(). */
void slab_free(struct kmem_cache *s, struct page *slab, void *head, void *tail, void **p, int cnt,
	       unsigned long addr)
{
	(void)p;
	if (!tail) {
		/* one object: the common case without the chain walk */
		if (slab_free_hook(s, slab, head, slab_want_init_on_free(s)))
			do_slab_free(s, slab, head, NULL, 1, addr);
		return;
	}
	if (slab_free_freelist_hook(s, slab, &head, &tail, &cnt))
		do_slab_free(s, slab, head, tail, cnt, addr);
}

/*
 * cache_from_obj() (Linux 6.6 with CONFIG_SLAB_FREELIST_HARDENED, which the
 * model always does: it costs one compare): the cache @x really belongs to.
 * Not a slab object at all: reported, NULL.  Another cache's object:
 * reported, and freed to the cache it belongs to.
 */
struct kmem_cache *cache_from_obj(struct kmem_cache *s, const void *x, struct page **slabp, unsigned long addr)
{
	struct page *slab = virt_to_slab(s->mm, x);
	struct kmem_cache *cachep;

	(void)addr;
	*slabp = slab;
	if (unlikely(!slab)) {
		slub_report_bad_free(s->mm, s, x, "Object is not a Slab page");
		return NULL;
	}
	cachep = slab->slab_cache;
	if (unlikely(cachep != s)) {
		mm_report(s->mm, "slub", __page_to_pfn(s->mm, slab), slab->flags,
			  "cache_from_obj: Wrong slab cache. %s but object is from %s", s->name,
			  slub_is_cache(slub_state(s->mm), cachep) ? cachep->name : "an unknown cache");
		if (!slub_is_cache(slub_state(s->mm), cachep))
			return NULL;
	}
	return cachep;
}

/* ---------------------------------------------------------------- API */

void *kmem_cache_alloc(struct kmem_cache *s, gfp_t gfp)
{
	if (unlikely(!s))
		return NULL;
	return slab_alloc_node(s, gfp, _RET_IP_, s->object_size);
}

void *kmem_cache_zalloc(struct kmem_cache *s, gfp_t gfp)
{
	if (unlikely(!s))
		return NULL;
	return slab_alloc_node(s, gfp | __GFP_ZERO, _RET_IP_, s->object_size);
}

void kmem_cache_free(struct kmem_cache *s, void *x)
{
	struct page *slab;

	if (unlikely(!s || !x))
		return;
	s = cache_from_obj(s, x, &slab, _RET_IP_);
	if (unlikely(!s))
		return;
	slab_free(s, slab, x, NULL, &x, 1, _RET_IP_);
}

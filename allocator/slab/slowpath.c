/* SPDX-License-Identifier: MIT */
/*
 * slowpath.c - the allocation slow path and the life of slabs: new slabs
 * from the page allocator, node partial lists, freezing a slab for a vCPU,
 * deactivating it, flushing vCPUs, giving slabs back.
 *
 * Models mm/slub.c of Linux 6.6: ___slab_alloc(), __slab_alloc(),
 * get_freelist(), allocate_slab(), shuffle_freelist(), new_slab(),
 * __free_slab(), discard_slab(), add_partial()/remove_partial(),
 * acquire_slab(), get_partial_node(), deactivate_slab(), flush_slab(),
 * __flush_cpu_slab(), flush_all().  pfmemalloc slabs (reserve pages) go
 * only to requests entitled to them; one node, no NUMA node matching.
 * Locking: see the essay in fastpath.c.
 */
#include "slab/slab.h"
#include "slab/kasan.h"

/* ---------------------------------------------------------------- new slabs */

/*
 * inc_slabs_node()/dec_slabs_node() (Linux 6.6): the node's slab and object
 * counts.  As in 6.6, a new slab is counted once it is frozen or on a list
 * (under list_lock for debug caches: alloc_single_from_new_slab()), and a
 * slab leaving the lists under list_lock is uncounted there
 * (free_to_partial_list(), __kmem_cache_do_shrink()), so that
 * validate_slab_node() never sees a count that disagrees with its lists.
 */
void inc_slabs_node(struct kmem_cache *s, unsigned int objects)
{
	struct kmem_cache_node *n = get_node(s, 0);
	atomic_fetch_add(&n->nr_slabs, 1);
	atomic_fetch_add(&n->total_objects, (long)objects);
}

void dec_slabs_node(struct kmem_cache *s, unsigned int objects)
{
	struct kmem_cache_node *n = get_node(s, 0);
	atomic_fetch_sub(&n->nr_slabs, 1);
	atomic_fetch_sub(&n->total_objects, (long)objects);
}

/* setup_object(): debug patterns, then the constructor (with the object unpoisoned for it). */
static void *setup_object(struct kmem_cache *s, void *object)
{
	setup_object_debug(s, object);
	if (unlikely(s->ctor)) {
		kasan_unpoison_new_object(s, object);
		s->ctor(object);
		kasan_poison_new_object(s, object);
	}
	return object;
}

/* next_freelist_entry(): the next offset of the random sequence that lies inside this slab. */
static void *next_freelist_entry(const unsigned int *seq, unsigned long *pos, char *start,
				 unsigned long page_limit, unsigned long freelist_count)
{
	unsigned int idx;

	do {
		idx = seq[*pos];
		*pos += 1;
		if (*pos >= freelist_count)
			*pos = 0;
	} while (unlikely(idx >= page_limit));
	return start + idx;
}

/* shuffle_freelist() (CONFIG_SLAB_FREELIST_RANDOM): link the objects in a random order. */
static bool shuffle_freelist(struct kmem_cache *s, struct page *slab, unsigned int objects)
{
	unsigned long freelist_count = oo_objects(s->oo), pos, page_limit;
	const unsigned int *seq;
	char *start;
	void *cur, *next;

	if (objects < 2 || !s->random_seq)
		return false;
	seq = slub_cache_random_seq(s->random_seq);
	pos = slub_random(slub_state(s->mm)) % freelist_count;
	page_limit = (unsigned long)objects * s->size;
	start = fixup_red_left(s, slab_address(s->mm, slab));

	cur = setup_object(s, next_freelist_entry(seq, &pos, start, page_limit, freelist_count));
	slab_set_freelist(slab, cur);
	for (unsigned int idx = 1; idx < objects; idx++) {
		next = setup_object(s, next_freelist_entry(seq, &pos, start, page_limit, freelist_count));
		set_freepointer(s, cur, next);
		cur = next;
	}
	set_freepointer(s, cur, NULL);
	return true;
}

/*
 * alloc_slab_page(): a compound page, marked as a slab (__folio_set_slab),
 * and as a pfmemalloc slab when the page allocator took it from the
 * reserves.
 */
static struct page *alloc_slab_page(struct kmem_cache *s, gfp_t gfp, struct kmem_cache_order_objects oo)
{
	struct page *page = alloc_pages(s->mm, gfp, oo_order(oo));

	if (!page)
		return NULL;
	page_flag_set(page, PG_slab);
	if (page_is_pfmemalloc(page))
		slab_set_pfmemalloc(page);
	return page;
}

/*
 * allocate_slab() (Linux 6.6): the preferred order without trying hard,
 * then the minimum order as the caller allows; the objects linked on the
 * slab's freelist (shuffled with freelist randomisation).  The new slab is
 * not frozen and holds no object in use; the caller decides.
 */
static struct page *allocate_slab(struct kmem_cache *s, gfp_t flags)
{
	struct slub_state *st = slub_state(s->mm);
	struct kmem_cache_order_objects oo = s->oo;
	struct page *slab;
	gfp_t alloc_gfp;
	unsigned int objects;
	union slab_ctr ctr = { .counters = 0 };
	char *start, *p, *next;

	if (unlikely(st->fail_new_slab) &&
	    (atomic_fetch_add(&st->new_slab_count, 1) + 1) % st->fail_new_slab == 0)
		return NULL;                            /* injected failure (slub_fail_new_slab) */

	flags |= s->allocflags;
	/* Try the higher order without reclaim or reserves, then fall back. */
	alloc_gfp = (flags | __GFP_NOWARN | __GFP_NORETRY);
	if ((alloc_gfp & __GFP_DIRECT_RECLAIM) && oo_order(oo) > oo_order(s->min))
		alloc_gfp = (alloc_gfp | __GFP_NOMEMALLOC) & ~__GFP_RECLAIM;

	slab = alloc_slab_page(s, alloc_gfp, oo);
	if (unlikely(!slab)) {
		oo = s->min;
		slab = alloc_slab_page(s, flags, oo);
		if (unlikely(!slab))
			return NULL;
		stat(s, ORDER_FALLBACK);
	}
	objects = oo_objects(oo);
	ctr.c.objects = objects & 0x7fff;
	slab_set_counters(slab, ctr.counters);
	slab->slab_cache = s;
	slab->slab_list.next = slab->slab_list.prev = NULL;

	kasan_poison_slab(s->mm, slab);
	start = slab_address(s->mm, slab);
	setup_slab_debug(s, slab, start);

	if (!shuffle_freelist(s, slab, objects)) {
		start = fixup_red_left(s, start);
		start = setup_object(s, start);
		slab_set_freelist(slab, start);
		p = start;
		for (unsigned int idx = 0; idx < objects - 1; idx++) {
			next = setup_object(s, p + s->size);
			set_freepointer(s, p, next);
			p = next;
		}
		set_freepointer(s, p, NULL);
	}
	return slab;
}

/*
 * kmalloc_fix_flags() (mm/slab_common.c, 6.6): a slab page is never asked
 * for with __GFP_DMA32, __GFP_HIGHMEM or bits outside the gfp mask - the
 * kernel warns ("Fix your code!") and clears them; here that is a report
 * and the request goes on without them.  new_slab() and kmalloc's large
 * path call it only when the bad bits are there.
 */
gfp_t kmalloc_fix_flags(struct mm *mm, gfp_t flags)
{
	gfp_t invalid = flags & GFP_SLAB_BUG_MASK;

	flags &= ~GFP_SLAB_BUG_MASK;
	mm_report(mm, "bad_gfp", ~0UL, 0, "Unexpected gfp: %#x. Fixing up to gfp: %#x. Fix your code!", invalid,
		  flags);
	return flags;
}

struct page *new_slab(struct kmem_cache *s, gfp_t gfp)
{
	if (unlikely(gfp & GFP_SLAB_BUG_MASK))
		gfp = kmalloc_fix_flags(s->mm, gfp);
	/* Only the reclaim and reserve bits of the caller: the zone is the cache's. */
	gfp &= __GFP_HIGH | __GFP_MEMALLOC | __GFP_NOMEMALLOC | __GFP_IO | __GFP_FS | __GFP_RECLAIM |
	       __GFP_NORETRY | __GFP_NOWARN;
	return allocate_slab(s, gfp);
}

/* __free_slab(): back to the page allocator, as a plain page again. */
static void __free_slab(struct kmem_cache *s, struct page *slab)
{
	unsigned int order = slab_order(slab);

	slab->slab_cache = NULL;
	slab_set_freelist(slab, NULL);
	slab_set_counters(slab, 0);
	slab->slab_list.next = slab->slab_list.prev = NULL;
	__slab_clear_pfmemalloc(slab);
	page_flag_clear(slab, PG_slab);
	kasan_unpoison(slab_address(s->mm, slab), MM_PAGE_SIZE << order);   /* the page allocator poisons again */
	__free_pages(s->mm, slab, order);
}

/* free_slab(): with consistency checks, the slab's padding and every object are checked one last time. */
void free_slab(struct kmem_cache *s, struct page *slab)
{
	if (kmem_cache_debug_flags(s, SLAB_CONSISTENCY_CHECKS)) {
		void *p;
		slab_pad_check(s, slab);
		for_each_object(p, s, slab_address(s->mm, slab), slab_objects(slab))
			check_object(s, slab, p, SLUB_RED_INACTIVE);
	}
	__free_slab(s, slab);
}

void discard_slab(struct kmem_cache *s, struct page *slab)
{
	dec_slabs_node(s, slab_objects(slab));
	free_slab(s, slab);
}

/* ---------------------------------------------------------------- node partial list */

/* add_partial() / remove_partial(): list_lock held. */
void add_partial(struct kmem_cache_node *n, struct page *slab, bool tail)
{
	__atomic_store_n(&n->nr_partial, n->nr_partial + 1, __ATOMIC_RELAXED);
	if (tail)
		list_add_tail(&slab->slab_list, &n->partial);
	else
		list_add(&slab->slab_list, &n->partial);
}

void remove_partial(struct kmem_cache_node *n, struct page *slab)
{
	list_del(&slab->slab_list);
	slab->slab_list.next = slab->slab_list.prev = NULL;
	__atomic_store_n(&n->nr_partial, n->nr_partial - 1, __ATOMIC_RELAXED);
}

/*
 * acquire_slab() (Linux 6.6): freeze a node partial slab for this vCPU and
 * take it off the list.  @mode: take the whole freelist too (the slab
 * becomes the cpu slab), else leave it on the slab (it goes to the cpu
 * partial list).  list_lock held, so only remote frees race with us - and
 * they do: the freeze must be a cmpxchg of {freelist, counters}.
 */
static void *acquire_slab(struct kmem_cache *s, struct kmem_cache_node *n, struct page *slab, bool mode)
{
	union slab_ctr new;
	unsigned long counters;
	void *freelist;

	/* 1. Snapshot the slab: remote frees may push onto it until step 3. */
	freelist = slab_freelist(slab);
	counters = slab_counters(slab);
	new.counters = counters;
	if (mode) {
		new.c.inuse = new.c.objects;    /* every object is now "in use" by this vCPU */
	}
	VM_BUG_ON(new.c.frozen != 0);
	new.c.frozen = 1;
	slub_preempt_point(s->mm, SLUB_PP_SLAB_CMPXCHG);

#ifdef MM_INJECT_SLUB_ACQUIRE_PLAIN_STORE
	/*
	 * Injected bug (bug zoo: slub-acquire-plain-store): the slab taken with
	 * plain stores instead of the cmpxchg, as get_partial_node() did before
	 * "slub: fix a memory leak in get_partial_node()" (2012): an object
	 * freed remotely since step 1 is lost (counted in use, on no list).
	 */
	slab_set_freelist(slab, mode ? NULL : freelist);
	slab_set_counters(slab, new.counters);
#else
	/* 2. Freeze, taking (or keeping) the freelist, in one cmpxchg; 3. or give up. */
	if (!slab_update_freelist(s, slab, freelist, counters, mode ? NULL : freelist, new.counters))
		return NULL;
#endif
	remove_partial(n, slab);
	VM_WARN_ON(!freelist);
	return freelist;
}

/*
 * get_partial_node() (Linux 6.6): the first usable node partial slab for
 * the cpu slab, plus more for the cpu partial list, up to half its limit.
 * Debug caches take a single object under list_lock instead.  A pfmemalloc
 * slab is usable only by a request entitled to the reserves (@gfp).
 */
static void *get_partial_node(struct kmem_cache *s, struct kmem_cache_node *n, struct page **ret_slab,
			      gfp_t gfp, unsigned int orig_size)
{
	struct list_head *pos, *tmp;
	unsigned int partial_slabs = 0;
	unsigned long flags;
	void *object = NULL;

	if (!n || !node_nr_partial(n))
		return NULL;

	spin_lock_irqsave(&n->list_lock, flags);
	list_for_each_safe(pos, tmp, &n->partial) {
		struct page *slab = list_entry(pos, struct page, slab_list);
		void *t;

		if (!pfmemalloc_match(slab, gfp))
			continue;
		if (kmem_cache_debug(s)) {
			object = alloc_single_from_partial(s, n, slab, orig_size);
			if (object) {
				*ret_slab = slab;
				break;
			}
			continue;
		}

		t = acquire_slab(s, n, slab, object == NULL);
		if (!t)
			break;                  /* lost a race with a free: take what we have */
		if (!object) {
			*ret_slab = slab;
			stat(s, ALLOC_FROM_PARTIAL);
			object = t;
		} else {
			put_cpu_partial(s, slab, 0);
			stat(s, CPU_PARTIAL_NODE);
			partial_slabs++;
		}
		if (!kmem_cache_has_cpu_partial(s) || partial_slabs > s->cpu_partial_slabs / 2)
			break;
	}
	spin_unlock_irqrestore(&n->list_lock, flags);
	return object;
}

/* ---------------------------------------------------------------- deactivation */

/*
 * deactivate_slab() (Linux 6.6): a cpu slab stops being one.  Its
 * remaining cpu freelist goes back in front of the slab's freelist and the
 * slab is unfrozen into the state its counters say: partial (node list),
 * empty (discarded above min_partial) or full (no list).
 */
void deactivate_slab(struct kmem_cache *s, struct page *slab, void *freelist)
{
	struct kmem_cache_node *n = get_node(s, 0);
	enum { M_PARTIAL, M_FREE, M_FULL_NOLIST } mode;
	void *freelist_iter, *freelist_tail = NULL, *nextfree;
	unsigned long flags = 0, old_counters;
	union slab_ctr new;
	void *old_freelist, *new_freelist;
	bool tail = false;
	int free_delta = 0;

	if (slab_freelist(slab)) {
		stat(s, DEACTIVATE_REMOTE_FREES);
		tail = true;
	}

	/* Stage one: count the cpu freelist, remember its tail. */
	freelist_iter = freelist;
	while (freelist_iter) {
		if (unlikely(free_delta > (int)slab_objects(slab)))
			mm_hang(s->mm, "deactivate_slab: cpu freelist longer than the slab (a cycle)",
				(unsigned long)free_delta);
		nextfree = get_freepointer(s, freelist_iter);
		/* freelist_corrupted(): a broken chain is cut where it breaks */
		if (kmem_cache_debug_flags(s, SLAB_CONSISTENCY_CHECKS) &&
		    !check_valid_pointer(s, s->mm, slab, nextfree)) {
			object_err(s, slab, freelist_iter, "Freechain corrupt");
			set_freepointer(s, freelist_iter, NULL);
			slab_fix(s, "Isolate corrupted freechain");
			nextfree = NULL;
		}
		freelist_tail = freelist_iter;
		free_delta++;
		freelist_iter = nextfree;
	}

	/*
	 * Stage two: unfreeze while splicing the cpu freelist in front of the
	 * slab's.  The list lock is taken before the cmpxchg when the slab
	 * will be listed, so acquire_slab() never sees it unfrozen and unlisted.
	 */
redo:
	/* 1. Snapshot the slab (remote frees keep arriving). */
	old_freelist = slab_freelist(slab);
	old_counters = slab_counters(slab);
	new.counters = old_counters;
	VM_BUG_ON(!new.c.frozen);
	if (freelist_tail) {
		new.c.inuse -= free_delta;
		set_freepointer(s, freelist_tail, old_freelist);
		new_freelist = freelist;
	} else {
		new_freelist = old_freelist;
	}
	new.c.frozen = 0;

	/* 2. Decide where it goes. */
	if (!new.c.inuse && node_nr_partial(n) >= s->min_partial) {
		mode = M_FREE;
	} else if (new_freelist) {
		mode = M_PARTIAL;
		spin_lock_irqsave(&n->list_lock, flags);
	} else {
		mode = M_FULL_NOLIST;
	}
	slub_preempt_point(s->mm, SLUB_PP_SLAB_CMPXCHG);

	/* 3. Publish; a remote free in between sends us round again. */
	if (!slab_update_freelist(s, slab, old_freelist, old_counters, new_freelist, new.counters)) {
		if (mode == M_PARTIAL)
			spin_unlock_irqrestore(&n->list_lock, flags);
		goto redo;
	}

	if (mode == M_PARTIAL) {
		add_partial(n, slab, tail);
		spin_unlock_irqrestore(&n->list_lock, flags);
		stat(s, tail ? DEACTIVATE_TO_TAIL : DEACTIVATE_TO_HEAD);
	} else if (mode == M_FREE) {
		stat(s, DEACTIVATE_EMPTY);
		discard_slab(s, slab);
		stat(s, FREE_SLAB);
	} else {
		stat(s, DEACTIVATE_FULL);
	}
}

/* ---------------------------------------------------------------- the slow path */

/*
 * get_freelist() (Linux 6.6): take the slab's whole freelist for the cpu
 * slab; an empty one unfreezes the slab in the same cmpxchg (it is full
 * and leaves the vCPU).
 */
static void *get_freelist(struct kmem_cache *s, struct page *slab)
{
	union slab_ctr new;
	unsigned long counters;
	void *freelist;

	do {
		/* 1. Snapshot. */
		freelist = slab_freelist(slab);
		counters = slab_counters(slab);
		new.counters = counters;
		VM_BUG_ON(!new.c.frozen);
		/* 2. All objects in use by this vCPU now; frozen only if we got some. */
		new.c.inuse = new.c.objects;
		new.c.frozen = freelist != NULL;
		slub_preempt_point(s->mm, SLUB_PP_SLAB_CMPXCHG);
		/* 3. Take it; a concurrent remote free makes us retry. */
	} while (!slab_update_freelist(s, slab, freelist, counters, NULL, new.counters));
	return freelist;
}

/*
 * ___slab_alloc() (Linux 6.6): the slow path.  Called with preemption
 * disabled (c is this vCPU's area), interrupts enabled.  In order:
 *   - the cpu slab's own freelist (remote frees since it became the cpu
 *     slab: get_freelist);
 *   - the next cpu partial slab;
 *   - a node partial slab (freezing it), plus more for the cpu partial list;
 *   - a new slab from the page allocator (preemption enabled around it, so
 *     we may come back on another vCPU).
 * Whatever is found becomes the cpu slab, its first object is returned and
 * the rest becomes c->freelist, tid advancing with every change.  Debug
 * caches take single objects instead and never get a cpu slab.
 */
void *___slab_alloc(struct kmem_cache *s, gfp_t gfp, unsigned long addr, struct kmem_cache_cpu *c,
		    unsigned int orig_size)
{
	struct kmem_cache_node *n = get_node(s, 0);
	unsigned long flags;
	struct page *slab;
	void *freelist;

	stat(s, ALLOC_SLOWPATH);
reread_slab:
	slab = c_slab(c);
	if (!slab)
		goto new_slab;
redo:
	/* c->slab may have changed under us (an interrupt): check again under the lock. */
	local_lock_irqsave(&c->lock, flags);
	if (unlikely(slab != c->slab)) {
		local_unlock_irqrestore(&c->lock, flags);
		goto reread_slab;
	}
	/*
	 * A pfmemalloc cpu slab serves only requests entitled to it; anyone
	 * else deactivates it (the kernel's comment: by rights we should look
	 * for a pfmemalloc slab, but the information is lost once the slab
	 * leaves the cpu).  6.6 tests this just before taking the lock and
	 * its deactivate_slab: label takes it again; the model tests under
	 * the lock, where the slab is surely still this vCPU's - a remote
	 * flush (validate, destroy) may otherwise free it under our read.
	 */
	if (unlikely(!pfmemalloc_match(slab, gfp))) {
		freelist = c->freelist;
		c_set_slab(c, NULL);
		c_set_freelist(c, NULL);
		c_set_tid(c, next_tid(c->tid));
		local_unlock_irqrestore(&c->lock, flags);
		deactivate_slab(s, slab, freelist);
		goto new_slab;
	}
	freelist = c->freelist;
	if (freelist)
		goto load_freelist;

	freelist = get_freelist(s, slab);
	if (!freelist) {
		/* Full, and already unfrozen by get_freelist: just forget it. */
		c_set_slab(c, NULL);
		c_set_tid(c, next_tid(c->tid));
		local_unlock_irqrestore(&c->lock, flags);
		stat(s, DEACTIVATE_BYPASS);
		goto new_slab;
	}
	stat(s, ALLOC_REFILL);

load_freelist:
	/* @freelist: objects of the frozen cpu slab; the first is ours. */
	VM_BUG_ON(!slab_frozen(c->slab));
	c_set_freelist(c, get_freepointer(s, freelist));
	c_set_tid(c, next_tid(c->tid));
	local_unlock_irqrestore(&c->lock, flags);
	return freelist;

new_slab:
	if (c_partial(c)) {
		local_lock_irqsave(&c->lock, flags);
		if (unlikely(c->slab)) {
			local_unlock_irqrestore(&c->lock, flags);
			goto reread_slab;
		}
		if (unlikely(!c->partial)) {
			local_unlock_irqrestore(&c->lock, flags);
			goto new_objects;       /* an interrupt took the partial slabs */
		}
		slab = c->partial;
		c_set_slab(c, slab);
		c_set_partial(c, slab->next);
		local_unlock_irqrestore(&c->lock, flags);
		stat(s, CPU_PARTIAL_ALLOC);
		goto redo;
	}

new_objects:
	freelist = get_partial_node(s, n, &slab, gfp, orig_size);
	if (freelist)
		goto check_new_slab;

	slub_put_cpu_ptr();
	slab = new_slab(s, gfp);
	c = slub_get_cpu_ptr(s);                /* perhaps another vCPU now */
	if (unlikely(!slab))
		return NULL;                    /* slab_out_of_memory() */
	stat(s, ALLOC_SLAB);

	if (kmem_cache_debug(s)) {
		freelist = alloc_single_from_new_slab(s, slab, orig_size);
		if (unlikely(!freelist))
			goto new_objects;
		if (s->flags & SLAB_STORE_USER)
			set_track(s, freelist, TRACK_ALLOC, addr);
		return freelist;
	}

	/* Nobody else knows this slab yet: no cmpxchg needed to freeze it. */
	{
		union slab_ctr ctr = slab_ctr(slab);
		freelist = slab_freelist(slab);
		slab_set_freelist(slab, NULL);
		ctr.c.inuse = ctr.c.objects;
		ctr.c.frozen = 1;
		slab_set_counters(slab, ctr.counters);
		inc_slabs_node(s, ctr.c.objects);
	}

check_new_slab:
	if (kmem_cache_debug(s)) {
		/* alloc_single_from_partial() did the debug processing */
		if (s->flags & SLAB_STORE_USER)
			set_track(s, freelist, TRACK_ALLOC, addr);
		return freelist;
	}

	if (unlikely(!pfmemalloc_match(slab, gfp))) {
		/*
		 * A mismatch (a new slab from the reserves for a request not
		 * entitled to them) does not load the freelist: no further
		 * mismatched allocations from it.  Reserve pages go only to
		 * a request gfp_pfmemalloc_allowed() entitles (__GFP_MEMALLOC,
		 * or a PF_MEMALLOC task - a shrinker - outside interrupts),
		 * and the context that got the page asks here, so in the
		 * model this is 6.6's guard, not a path taken.
		 */
		deactivate_slab(s, slab, get_freepointer(s, freelist));
		return freelist;
	}

retry_load_slab:
	local_lock_irqsave(&c->lock, flags);
	if (unlikely(c->slab)) {
		/* An interrupt installed a cpu slab meanwhile: flush it, keep ours. */
		void *flush_freelist = c->freelist;
		struct page *flush_slab = c->slab;

		c_set_slab(c, NULL);
		c_set_freelist(c, NULL);
		c_set_tid(c, next_tid(c->tid));
		local_unlock_irqrestore(&c->lock, flags);
		deactivate_slab(s, flush_slab, flush_freelist);
		stat(s, CPUSLAB_FLUSH);
		goto retry_load_slab;
	}
	c_set_slab(c, slab);
	goto load_freelist;
}

/*
 * __slab_alloc() (Linux 6.6): we may have migrated since the fast path read
 * @c, so pin the task and use this vCPU's area.
 */
void *__slab_alloc(struct kmem_cache *s, gfp_t gfp, unsigned long addr, struct kmem_cache_cpu *c,
		   unsigned int orig_size)
{
	void *p;

	(void)c;
	slub_preempt_point(s->mm, SLUB_PP_SLOWPATH);
	c = slub_get_cpu_ptr(s);
	p = ___slab_alloc(s, gfp, addr, c, orig_size);
	slub_put_cpu_ptr();
	return p;
}

/* ---------------------------------------------------------------- flushing */

/* flush_slab(): deactivate this vCPU's cpu slab (local lock taken here). */
static void flush_slab(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	unsigned long flags;
	struct page *slab;
	void *freelist;

	local_lock_irqsave(&c->lock, flags);
	slab = c->slab;
	freelist = c->freelist;
	c_set_slab(c, NULL);
	c_set_freelist(c, NULL);
	c_set_tid(c, next_tid(c->tid));
	local_unlock_irqrestore(&c->lock, flags);
	if (slab) {
		deactivate_slab(s, slab, freelist);
		stat(s, CPUSLAB_FLUSH);
	}
}

/*
 * flush_cpu_slab(): the work item, run on the vCPU itself.  The kernel's
 * per-cpu kworker cannot migrate; the model pins the task the same way
 * (migrate_disable) so the cpu slab and the cpu partial list it flushes
 * belong to one vCPU.
 */
static void flush_cpu_slab(struct kmem_cache *s)
{
	struct kmem_cache_cpu *c;

	migrate_disable();
	c = raw_cpu_slab(s);
	if (c_slab(c))
		flush_slab(s, c);
	unfreeze_partials(s);
	migrate_enable();
}

/*
 * __flush_cpu_slab() (Linux 6.6): flush vCPU @cpu from outside.  Only for
 * a vCPU nobody runs on: a dead one (its hotplug callback holds it), or
 * one flush_all() could not move to (see there).
 */
void __flush_cpu_slab(struct kmem_cache *s, int cpu)
{
	struct kmem_cache_cpu *c = slub_cpu(s, cpu);
	struct page *slab = c_slab(c);
	void *freelist = c_freelist(c);

	/* As 6.6 (and flush_slab() above): the tid advances even with no cpu slab. */
	c_set_slab(c, NULL);
	c_set_freelist(c, NULL);
	c_set_tid(c, next_tid(c_tid(c)));
	if (slab) {
		deactivate_slab(s, slab, freelist);
		stat(s, CPUSLAB_FLUSH);
	}
	unfreeze_partials_cpu(s, c);
}

static bool has_cpu_slab(struct kmem_cache *s, int cpu)
{
	struct kmem_cache_cpu *c = slub_cpu(s, cpu);
	return c_slab(c) || c_partial(c);      /* a racy peek, as the kernel's */
}

/*
 * flush_all() (flush_all_cpus_locked(), Linux 6.6): the kernel queues
 * flush_cpu_slab() on every online CPU that has something to flush and
 * waits for the work items - which run because the kernel can always
 * preempt whatever runs there.  The model cannot make another task give
 * its vCPU up, and waiting for it deadlocks whenever that task waits for
 * us (a stop-the-world gate, the hotplug lock ...).  So, per vCPU with a
 * cpu slab or cpu partial slabs:
 *   - our own: flush it here;
 *   - free (no holder): migrate there, flush, and come back at the end
 *     (only if we are preemptible);
 *   - held by another task: @remote true (destroy, validate: the caller
 *     guarantees nobody uses this cache concurrently) flushes it from
 *     outside; otherwise (shrink) it is left alone - as if its task had
 *     refilled it right after a kernel flush.
 * Needs a run-on-vCPU primitive from the CPU model to be exact (see
 * "Remote flush" in fastpath.c).  Offline vCPUs were flushed as they died:
 * the caller holds cpus_read_lock(), so no vCPU is half-way through going
 * down - offline already (slub_cpu_dead() ran) or online - and no dead
 * callback flushes a vCPU while this flushes it from outside.
 */
void flush_all_cpus_locked(struct kmem_cache *s, bool remote)
{
	struct mm *mm = s->mm;
	int home = mm_cpu_current(mm);
	bool moved = false, can_move = preemptible();

	for (int cpu = 0; cpu < (int)mm->cfg.nr_cpus; cpu++) {
		if (!has_cpu_slab(s, cpu) || !cpu_online(mm, cpu))
			continue;
		if (mm_cpu_current(mm) == cpu) {
			flush_cpu_slab(s);
		} else if (can_move && !mm_cpu_holder(mm, cpu) && mm_cpu_attach(mm, cpu) == cpu) {
			moved = true;
			flush_cpu_slab(s);
		} else if (remote) {
			__flush_cpu_slab(s, cpu);
		}
	}
	if (moved) {
		if (home >= 0)
			mm_cpu_attach(mm, home);
		else
			mm_cpu_detach(mm);
	}
}

/* flush_all() (Linux 6.6): flush_all_cpus_locked() under cpus_read_lock(). */
void flush_all(struct kmem_cache *s, bool remote)
{
	cpus_read_lock(s->mm);
	flush_all_cpus_locked(s, remote);
	cpus_read_unlock(s->mm);
}

/* SPDX-License-Identifier: MIT */
/*
 * free.c - the free slow path: frees into a slab that is not this vCPU's
 * cpu slab (remote frees included), slabs becoming partial or empty, and
 * the per-vCPU partial lists.
 *
 * Models mm/slub.c of Linux 6.6: __slab_free(), put_cpu_partial(),
 * __unfreeze_partials(), unfreeze_partials(), unfreeze_partials_cpu(), and
 * the naive double-free detection of set_freepointer() under
 * CONFIG_SLAB_FREELIST_HARDENED ("mm/slub.c: add a naive detection of
 * double free or corruption", 2017).  Locking: see fastpath.c.
 */
#include "slab/slab.h"
#include "slab/kasan.h"

/*
 * The naive double-free check: freeing the object that is already the
 * head of the list it is pushed on would make it point to itself.  True
 * (and reported; the free is refused) if so.  Only with hardening, as in
 * the kernel.
 */
bool slab_free_naive_double_free(struct kmem_cache *s, struct page *slab, void *object, void *fp)
{
#ifdef MM_INJECT_SLUB_DOUBLE_FREE_UNCHECKED
	/* Injected bug (bug zoo: slub-double-free-unchecked): the check of 2017 is missing. */
	(void)s; (void)slab; (void)object; (void)fp;
	return false;
#else
	if (likely(object != fp) || !s->fp_swab_mask)
		return false;
	mm_report(s->mm, "slub", __page_to_pfn(s->mm, slab), slab->flags,
		  "%s: double free or corruption: object %p is already the freelist head (not freed)",
		  s->name, object);
	return true;
#endif
}

/* ---------------------------------------------------------------- cpu partial lists */

/*
 * __unfreeze_partials() (Linux 6.6): a chain of cpu partial slabs, taken
 * off a vCPU, goes to the node partial list - or, if empty and the node
 * has enough partial slabs, back to the page allocator.
 */
void __unfreeze_partials(struct kmem_cache *s, struct page *partial_slab)
{
	struct kmem_cache_node *n = get_node(s, 0);
	struct page *slab, *slab_to_discard = NULL;
	unsigned long flags = 0, nr = 0, max = (unsigned long)atomic_load(&n->nr_slabs) + 1;
	bool locked = false;

	while (partial_slab) {
		union slab_ctr new;
		unsigned long counters;
		void *freelist;

		if (unlikely(++nr > max))
			mm_hang(s->mm, "__unfreeze_partials: cpu partial list longer than the cache (a cycle)", nr);
		slab = partial_slab;
		partial_slab = slab->next;
		if (!locked) {
			spin_lock_irqsave(&n->list_lock, flags);
			locked = true;
		}
		do {
			/* 1. Snapshot; 2. unfreeze; 3. publish or retry (remote frees). */
			freelist = slab_freelist(slab);
			counters = slab_counters(slab);
			new.counters = counters;
			VM_BUG_ON(!new.c.frozen);
			new.c.frozen = 0;
			slub_preempt_point(s->mm, SLUB_PP_SLAB_CMPXCHG);
		} while (!slab_update_freelist(s, slab, freelist, counters, freelist, new.counters));

		if (unlikely(!new.c.inuse && node_nr_partial(n) >= s->min_partial)) {
			slab->next = slab_to_discard;
			slab_to_discard = slab;
		} else {
			add_partial(n, slab, true);
			stat(s, FREE_ADD_PARTIAL);
		}
	}
	if (locked)
		spin_unlock_irqrestore(&n->list_lock, flags);

	while (slab_to_discard) {
		slab = slab_to_discard;
		slab_to_discard = slab_to_discard->next;
		stat(s, DEACTIVATE_EMPTY);
		discard_slab(s, slab);
		stat(s, FREE_SLAB);
	}
}

/* unfreeze_partials(): this vCPU's cpu partial list, all of it. */
void unfreeze_partials(struct kmem_cache *s)
{
	struct kmem_cache_cpu *c;
	struct page *partial_slab;
	unsigned long flags;

	/* The lock argument is evaluated with interrupts off: this vCPU's, pinned. */
	local_lock_irqsave(&raw_cpu_slab(s)->lock, flags);
	c = raw_cpu_slab(s);
	partial_slab = c->partial;
	c_set_partial(c, NULL);
	local_unlock_irqrestore(&c->lock, flags);
	if (partial_slab)
		__unfreeze_partials(s, partial_slab);
}

/* unfreeze_partials_cpu(): another vCPU's (dead, or without users: see flush_all). */
void unfreeze_partials_cpu(struct kmem_cache *s, struct kmem_cache_cpu *c)
{
	struct page *partial_slab = c_partial(c);

	c_set_partial(c, NULL);
	if (partial_slab)
		__unfreeze_partials(s, partial_slab);
}

/*
 * put_cpu_partial() (Linux 6.6): a slab just frozen by a free (or taken
 * from the node for later) goes on this vCPU's partial list.  @drain: if
 * the list is already full, move it all to the node first - outside the
 * local lock.
 */
void put_cpu_partial(struct kmem_cache *s, struct page *slab, int drain)
{
	struct page *oldslab, *slab_to_unfreeze = NULL;
	struct kmem_cache_cpu *c;
	unsigned long flags;
	int slabs = 0;

	local_lock_irqsave(&raw_cpu_slab(s)->lock, flags);
	c = raw_cpu_slab(s);
	oldslab = c->partial;
	if (oldslab) {
		if (drain && oldslab->slabs >= (int)s->cpu_partial_slabs) {
			slab_to_unfreeze = oldslab;
			oldslab = NULL;
		} else {
			slabs = oldslab->slabs;
		}
	}
	slabs++;
	slab->slabs = slabs;
	slab->next = oldslab;
	c_set_partial(c, slab);
	local_unlock_irqrestore(&c->lock, flags);

	if (slab_to_unfreeze) {
		__unfreeze_partials(s, slab_to_unfreeze);
		stat(s, CPU_PARTIAL_DRAIN);
	}
}

/* ---------------------------------------------------------------- __slab_free */

/*
 * __slab_free() (Linux 6.6): push [head .. tail] (@cnt objects) onto the
 * slab's own freelist with a cmpxchg of {freelist, counters}, inuse
 * dropping in the same word.  Then, by what the slab was and became:
 *   frozen (some vCPU's)           nothing else to do;
 *   full -> partial                freeze it and put it on *this* vCPU's
 *                                  cpu partial list (no list_lock);
 *   node partial -> still partial  nothing;
 *   -> empty                       off the node list and discarded, if the
 *                                  node keeps enough partial slabs;
 * list_lock is taken speculatively before the cmpxchg whenever the slab
 * may have to change lists, so that it changes state and list together.
 */
void __slab_free(struct kmem_cache *s, struct page *slab, void *head, void *tail, int cnt,
		 unsigned long addr)
{
	struct kmem_cache_node *n = NULL;
	unsigned long flags = 0, counters;
	union slab_ctr new;
	bool was_frozen;
	void *prior;

	stat(s, FREE_SLOWPATH);
	slub_preempt_point(s->mm, SLUB_PP_SLOWPATH);

	if (kmem_cache_debug(s)) {
		free_to_partial_list(s, slab, head, tail, cnt, addr);
		return;
	}

	do {
		if (unlikely(n)) {
			spin_unlock_irqrestore(&n->list_lock, flags);
			n = NULL;
		}
		/* 1. Snapshot the slab. */
		prior = slab_freelist(slab);
		counters = slab_counters(slab);
		if (unlikely(slab_free_naive_double_free(s, slab, tail, prior)))
			return;
		/* 2. Link our chain in front of its freelist (not visible yet). */
		set_freepointer(s, tail, prior);
		new.counters = counters;
		was_frozen = new.c.frozen;
		new.c.inuse -= cnt;
		if ((!new.c.inuse || !prior) && !was_frozen) {
			if (kmem_cache_has_cpu_partial(s) && !prior) {
				/* Full until now: freeze it instead of listing it. */
				new.c.frozen = 1;
			} else {
				/* It may leave the node partial list (or join it). */
				n = get_node(s, 0);
				spin_lock_irqsave(&n->list_lock, flags);
			}
		}
		slub_preempt_point(s->mm, SLUB_PP_SLAB_CMPXCHG);
		/* 3. Publish objects and counters together, or start over. */
	} while (!slab_update_freelist(s, slab, prior, counters, head, new.counters));
	slub_count_live(s, -cnt);

	if (likely(!n)) {
		if (likely(was_frozen)) {
			stat(s, FREE_FROZEN);        /* its vCPU deals with lists */
		} else if (new.c.frozen) {
			put_cpu_partial(s, slab, 1);  /* we froze it: ours now */
			stat(s, CPU_PARTIAL_FREE);
		}
		return;
	}

	if (unlikely(!new.c.inuse && node_nr_partial(n) >= s->min_partial))
		goto slab_empty;

	/* Objects left: if it was full it joins the node partial list (no cpu partial lists). */
	if (!kmem_cache_has_cpu_partial(s) && unlikely(!prior)) {
		add_partial(n, slab, true);
		stat(s, FREE_ADD_PARTIAL);
	}
	spin_unlock_irqrestore(&n->list_lock, flags);
	return;

slab_empty:
	if (prior) {
		remove_partial(n, slab);
		stat(s, FREE_REMOVE_PARTIAL);
	}
	spin_unlock_irqrestore(&n->list_lock, flags);
	stat(s, FREE_SLAB);
	discard_slab(s, slab);
}

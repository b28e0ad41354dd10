/* SPDX-License-Identifier: MIT */
/*
 * bulk.c - kmem_cache_alloc_bulk() and kmem_cache_free_bulk().
 *
 * Models mm/slub.c of Linux 6.6: __kmem_cache_alloc_bulk() (the cpu
 * freelist drained under the local lock, the tid advanced once at the end
 * and - "mm: slub: add missing TID bump in kmem_cache_alloc_bulk()", 2020 -
 * before every excursion into ___slab_alloc(), which may enable interrupts
 * and preemption), its all-or-nothing error path, build_detached_freelist()
 * (objects of one slab chained and freed with one cmpxchg) and
 * kmem_cache_free_bulk() / kfree_bulk().
 */
#include "slab/slab.h"
#include "slab/kasan.h"

#define _RET_IP_ ((unsigned long)__builtin_return_address(0))

/* init_on_free zeroed the object before its free pointer was written (as in fastpath.c). */
static inline void wipe_obj_freeptr(struct kmem_cache *s, void *obj)
{
	if (unlikely(slub_state(s->mm)->init_on_free) && !(s->ctor || (s->flags & SLAB_POISON)) &&
	    !freeptr_outside_object(s))
		metadata_write_word((char *)obj + s->offset, 0);
}

/*
 * __kmem_cache_alloc_bulk(): pop up to @size objects off this vCPU's
 * freelist with interrupts off (plain stores: nothing else can run on the
 * vCPU), the slow path for the rest.  The objects taken so far are only
 * committed by a tid bump: one is due before the lock is dropped.
 */
static int __kmem_cache_alloc_bulk(struct kmem_cache *s, gfp_t flags, size_t size, void **p)
{
	struct kmem_cache_cpu *c;
	unsigned long irqflags;
	size_t i;

	c = slub_get_cpu_ptr(s);
	local_lock_irqsave(&c->lock, irqflags);
	for (i = 0; i < size; i++) {
		void *object = c->freelist;

		slub_preempt_point(s->mm, SLUB_PP_BULK);
		if (unlikely(!object)) {
#ifndef MM_INJECT_SLUB_BULK_NO_TID_BUMP
			/*
			 * Objects may have left c->freelist in earlier rounds
			 * without a tid change; ___slab_alloc() may enable
			 * interrupts: commit them now, or an interrupted fast path
			 * holding the old {freelist, tid} could still succeed.
			 */
			c_set_tid(c, next_tid(c->tid));
#else
			/* Injected bug (bug zoo: slub-bulk-no-tid-bump): the 2020 fix is missing. */
#endif
			local_unlock_irqrestore(&c->lock, irqflags);
			p[i] = ___slab_alloc(s, flags, _RET_IP_, c, s->object_size);
			if (unlikely(!p[i]))
				goto error;
			c = raw_cpu_slab(s);            /* ___slab_alloc may have moved us */
			wipe_obj_freeptr(s, p[i]);
			local_lock_irqsave(&c->lock, irqflags);
			continue;
		}
		c_set_freelist(c, get_freepointer(s, object));
		p[i] = object;
		wipe_obj_freeptr(s, p[i]);
	}
	c_set_tid(c, next_tid(c->tid));
	local_unlock_irqrestore(&c->lock, irqflags);
	slub_put_cpu_ptr();
	return (int)i;

error:
	slub_put_cpu_ptr();
	/* All or nothing: give back what we took (made client objects first, for the hooks). */
	slab_post_alloc_hook(s, flags, i, p, false, s->object_size);
	kmem_cache_free_bulk(s, i, p);
	return 0;
}

int kmem_cache_alloc_bulk(struct kmem_cache *s, gfp_t flags, size_t size, void **p)
{
	int i;

	if (!s || !size || !p)
		return 0;
	might_alloc(flags);     /* slab_pre_alloc_hook() */
	i = __kmem_cache_alloc_bulk(s, flags, size, p);
	if (likely(i))
		slab_post_alloc_hook(s, flags, size, p, slab_want_init_on_alloc(s, flags), s->object_size);
	return i;
}

/* ---------------------------------------------------------------- free */

struct detached_freelist {
	struct page *slab;          /* the slab of every object on the list; NULL: nothing to free */
	void *tail;                 /* last object (free pointer NULL) */
	void *freelist;             /* first object */
	int cnt;                    /* objects on the list */
	struct kmem_cache *s;       /* their cache */
};

/*
 * build_detached_freelist() (Linux 6.6): take the last entry of p[] and
 * every other entry of the same slab among the next few, chain them
 * through their free pointers, and move them to the end of the array.
 * Returns how many entries are left.  @s NULL: kfree_bulk (large kmallocs
 * freed on the spot, caches looked up per object).
 *
 * A NULL or ZERO_SIZE_PTR entry is a caller bug in 6.6: the NULL skip went
 * with "mm: slab: optimize memcg_slab_free_hook()" (5.19), and
 * virt_to_folio() of such a pointer faults.  The model reports each one
 * (where the kernel oopses) and goes on with the rest of the array.  An
 * entry that does not match the slab being gathered stays below the
 * returned count, so each bad entry reaches the head, and is reported,
 * exactly once.
 */
static size_t build_detached_freelist(struct mm *mm, struct kmem_cache *s, size_t size, void **p,
				      struct detached_freelist *df)
{
	int lookahead = 3;
	size_t same;
	void *object;

	df->slab = NULL;
	object = p[--size];
	if (unlikely(ZERO_OR_NULL_PTR(object))) {
		slub_report_bad_free(mm, s, object, "NULL or ZERO_SIZE_PTR in a bulk free array (6.6 faults on it)");
		return size;
	}
	if (!s) {
		struct page *head = slub_virt_to_head(mm, object);
		if (!head || !PageSlab(head)) {
			kfree(mm, object);         /* a large kmalloc, or a report */
			return size;
		}
		df->slab = head;
		df->s = head->slab_cache;
	} else {
		df->s = cache_from_obj(s, object, &df->slab, _RET_IP_);
		if (!df->s) {
			df->slab = NULL;
			return size;
		}
	}

	df->tail = object;
	df->freelist = object;
	df->cnt = 1;
	set_freepointer(df->s, object, NULL);

	same = size;
	while (size) {
		object = p[--size];
		if (!ZERO_OR_NULL_PTR(object) && df->slab == virt_to_slab(mm, object)) {
			if (unlikely(slab_free_naive_double_free(df->s, df->slab, object, df->freelist))) {
				/* the same object twice in a row: drop the second */
			} else {
				/* Opportunity to build the freelist. */
				set_freepointer(df->s, object, df->freelist);
				df->freelist = object;
				df->cnt++;
			}
			same--;
			if (size != same) {
				void *t = p[size];
				p[size] = p[same];
				p[same] = t;
			}
			continue;
		}
		/* Limit the look-ahead. */
		if (!--lookahead)
			break;
	}
	return same;
}

static void __kmem_cache_free_bulk(struct mm *mm, struct kmem_cache *s, size_t size, void **p)
{
	while (size) {
		struct detached_freelist df;

		size = build_detached_freelist(mm, s, size, p, &df);
		if (!df.slab)
			continue;
		slab_free(df.s, df.slab, df.freelist, df.tail, &p[size], df.cnt, _RET_IP_);
	}
}

void kmem_cache_free_bulk(struct kmem_cache *s, size_t size, void **p)
{
	if (!s || !size || !p)
		return;
	__kmem_cache_free_bulk(s->mm, s, size, p);
}

void kfree_bulk(struct mm *mm, size_t size, void **p)
{
	if (!mm || !size || !p)
		return;
	__kmem_cache_free_bulk(mm, NULL, size, p);
}

/* SPDX-License-Identifier: MIT */
/*
 * invariants.c - slab_check(): SLUB's part of the checker (DESIGN.md,
 * "Invariants"):
 *
 *   S1  per slab: objects = what fits in the slab (allocate_slab() never
 *       makes fewer), inuse + objects on the slab's freelist = objects, and the
 *       owning vCPU's freelist (for its cpu slab) holds only further objects
 *       of that slab; freelists acyclic, in bounds, object-aligned, inside
 *       their own slab.  Debug builds also check the whole cache: objects in
 *       use per the slabs (minus cpu freelists) = objects handed out and not
 *       freed (+ objects a debug repair isolated).
 *   S2  node partial lists hold only unfrozen slabs of their cache with free
 *       objects, nr_partial counts them; frozen <=> owned by exactly one vCPU
 *       (its cpu slab, or on its cpu partial list, whose ->slabs counts are
 *       right), and never to an offline vCPU; an unfrozen slab on no list
 *       is full; slab and object totals agree with the node counters.
 *   S3  red zones, poison and padding of debug caches intact (never
 *       repaired here); hardened free pointers decode inside the slab.
 *   T1  every vCPU's tid names that vCPU and only moves forward.
 *
 * Level 2 checks what can be checked while other threads allocate: node
 * lists under list_lock (their slabs cannot be frozen meanwhile, remote
 * frees only push onto a consistent snapshot), and the tids' vCPU.
 * Level 3 checks everything and requires a quiescent instance (no
 * allocation or free in flight on any vCPU): a stop-the-world caller.
 * The checker reports through *v and never changes allocator state.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "slab/slab.h"
#include "slab/kasan.h"

/* Owner of a slab, per pfn, for S2 (level 3). */
enum { OWN_NONE, OWN_CPU_SLAB, OWN_CPU_PARTIAL, OWN_NODE_PARTIAL, OWN_NODE_FULL };
#define OWN(kind, cpu) ((unsigned int)(kind) << 16 | (unsigned int)(cpu))
#define OWN_KIND(o)    ((o) >> 16)
#define OWN_CPU(o)     ((int)((o) & 0xffff))

static const char *const own_names[] = { "no list", "a cpu slab", "a cpu partial list", "the node partial list",
					 "the node full list" };

struct slab_check_ctx {
	struct mm *mm;
	struct slub_state *st;
	int level;
	struct mm_violation *v;
	unsigned int *owner;            /* [end_pfn - first_pfn] (level 3) */
	unsigned char *map;             /* [MAX_OBJS_PER_PAGE + 1] object marks */
};

static bool sviolate(struct slab_check_ctx *x, enum mm_invariant inv, struct kmem_cache *s, int cpu,
		     const struct page *slab, long expected, long found, const char *fmt, ...)
	__attribute__((format(printf, 8, 9)));
static bool sviolate(struct slab_check_ctx *x, enum mm_invariant inv, struct kmem_cache *s, int cpu,
		     const struct page *slab, long expected, long found, const char *fmt, ...)
{
	char buf[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	mm_violate(x->v, inv, slab ? (int)page_zonenum(slab) : -1, cpu,
		   slab ? __page_to_pfn(x->mm, slab) : ~0UL, slab ? slab_order(slab) : 0, expected, found,
		   "%s: %s", s ? s->name : "slub", buf);
	if (x->v)
		x->v->cache = s ? s->name : NULL;
	return false;
}

/* Is @p a struct page of this instance's memmap, of a valid pfn? */
static bool page_is_valid(struct mm *mm, const struct page *p)
{
	uintptr_t pp = (uintptr_t)p, lo = (uintptr_t)mm->memmap;
	if (pp < lo || pp >= (uintptr_t)(mm->memmap + (mm->end_pfn - mm->first_pfn)) || (pp - lo) % sizeof(struct page))
		return false;
	return __pfn_valid(mm, __page_to_pfn(mm, p));
}

/* A slab pointer from a list or a vCPU: a slab head of this cache. */
static bool check_slab_ptr(struct slab_check_ctx *x, struct kmem_cache *s, int cpu, struct page *slab,
			   const char *where)
{
	if (!page_is_valid(x->mm, slab))
		return sviolate(x, MM_INV_S2, s, cpu, NULL, 0, 0, "%s holds %p, not a struct page of this memory",
				where, (void *)slab);
	if (!PageSlab(slab) || PageTail(slab))
		return sviolate(x, MM_INV_S2, s, cpu, slab, 1, 0, "%s holds pfn %#lx, which is not a slab", where,
				__page_to_pfn(x->mm, slab));
	if (slab->slab_cache != s)
		return sviolate(x, MM_INV_S2, s, cpu, slab, 0, 0, "%s holds a slab of cache %p", where,
				(void *)slab->slab_cache);
	return true;
}

/* ---------------------------------------------------------------- S1 and S3 per slab */

/* The first byte of [p, p + n) that is not @c: its offset, or -1. */
static long pattern_off(const unsigned char *p, unsigned char c, size_t n)
{
	unsigned char *f = metadata_memchr_inv(p, c, n);
	return f ? (long)(f - p) : -1;
}

/* check_object() without reports or repairs: S3. */
static bool check_object_s3(struct slab_check_ctx *x, struct kmem_cache *s, struct page *slab,
			    unsigned char *p, bool is_free)
{
	unsigned char val = is_free ? SLUB_RED_INACTIVE : SLUB_RED_ACTIVE;
	long off;

	if (s->flags & SLAB_RED_ZONE) {
		if ((off = pattern_off(p - s->red_left_pad, val, s->red_left_pad)) >= 0)
			return sviolate(x, MM_INV_S3, s, -1, slab, val, metadata_read_byte(p - s->red_left_pad + off),
					"left red zone of %s object %p overwritten at offset %ld",
					is_free ? "free" : "allocated", (void *)p, off - (long)s->red_left_pad);
		if ((off = pattern_off(p + s->object_size, val, s->inuse - s->object_size)) >= 0)
			return sviolate(x, MM_INV_S3, s, -1, slab, val, metadata_read_byte(p + s->object_size + off),
					"right red zone of %s object %p overwritten at offset %ld",
					is_free ? "free" : "allocated", (void *)p, (long)s->object_size + off);
		if (!is_free && slub_debug_orig_size(s)) {
			unsigned int orig = get_orig_size(s, p);
			if (orig > s->object_size)
				return sviolate(x, MM_INV_S3, s, -1, slab, s->object_size, orig,
						"object %p records a request of %u bytes in a %u-byte object",
						(void *)p, orig, s->object_size);
			if ((off = pattern_off(p + orig, val, s->object_size - orig)) >= 0)
				return sviolate(x, MM_INV_S3, s, -1, slab, val, metadata_read_byte(p + orig + off),
						"kmalloc red zone of object %p overwritten at offset %ld",
						(void *)p, (long)orig + off);
		}
	}
	if ((s->flags & __OBJECT_POISON) && is_free) {
		if (s->object_size > 1 && (off = pattern_off(p, POISON_FREE, s->object_size - 1)) >= 0)
			return sviolate(x, MM_INV_S3, s, -1, slab, POISON_FREE, metadata_read_byte(p + off),
					"poison of free object %p overwritten at offset %ld", (void *)p, off);
		if (metadata_read_byte(p + s->object_size - 1) != POISON_END)
			return sviolate(x, MM_INV_S3, s, -1, slab, POISON_END, metadata_read_byte(p + s->object_size - 1),
					"end poison of free object %p overwritten", (void *)p);
	}
	return true;
}

/*
 * S1 (and the S3 part of free pointers) for one slab: @freelist/@ctr a
 * consistent snapshot, @cpu_freelist the owning vCPU's list if it is a
 * cpu slab.  *@cpu_nr gets the length of that list.
 */
static bool check_slab_s1(struct slab_check_ctx *x, struct kmem_cache *s, struct page *slab, void *freelist,
			  union slab_ctr ctr, void *cpu_freelist, int cpu, unsigned int *cpu_nr)
{
	char *base = slab_address(x->mm, slab);
	unsigned int objects = ctr.c.objects, inuse = ctr.c.inuse, nr = 0, cnr = 0;
	unsigned int maxobj = (unsigned int)MIN(slab_size(slab) / s->size, (size_t)MAX_OBJS_PER_PAGE);
	bool hardened = s->fp_swab_mask != 0;
	void *p, *prev = NULL;

	/* Every slab holds as many objects as fit (allocate_slab(); on_freelist() in 6.6): fewer is corruption too. */
	if (objects != maxobj)
		return sviolate(x, MM_INV_S1, s, cpu, slab, maxobj, objects, "slab claims %u objects, room for %u",
				objects, maxobj);
	if (inuse > objects)
		return sviolate(x, MM_INV_S1, s, cpu, slab, objects, inuse, "inuse %u > objects %u", inuse, objects);

	memset(x->map, 0, objects);
	for (p = freelist; p; prev = p, p = get_freepointer(s, p)) {
		if (!check_valid_pointer(s, x->mm, slab, p)) {
			if (prev && hardened)
				return sviolate(x, MM_INV_S3, s, cpu, slab, 0, 0,
						"hardened free pointer of object %p decodes to %p, outside the slab's objects",
						prev, p);
			return sviolate(x, MM_INV_S1, s, cpu, slab, 0, 0, "freelist entry %p (after %p) is not an object "
					"of the slab [%p, %p)", p, prev, (void *)base, (void *)(base + slab_size(slab)));
		}
		unsigned int idx = obj_to_index(s, base, p);
		if (x->map[idx])
			return sviolate(x, MM_INV_S1, s, cpu, slab, 0, 1, "freelist has a cycle: object %p twice", p);
		x->map[idx] = 1;
		nr++;
	}
	if (inuse + nr != objects)
		return sviolate(x, MM_INV_S1, s, cpu, slab, objects, (long)inuse + nr,
				"inuse %u + free %u on the slab freelist != objects %u", inuse, nr, objects);

	for (p = cpu_freelist, prev = NULL; p; prev = p, p = get_freepointer(s, p)) {
		if (!check_valid_pointer(s, x->mm, slab, p))
			return sviolate(x, prev && hardened ? MM_INV_S3 : MM_INV_S1, s, cpu, slab, 0, 0,
					"cpu %d freelist entry %p (after %p) is not an object of its cpu slab", cpu, p, prev);
		unsigned int idx = obj_to_index(s, base, p);
		if (x->map[idx])
			return sviolate(x, MM_INV_S1, s, cpu, slab, 0, 1, "object %p is twice on the freelists of the "
					"slab and of cpu %d (a cycle or a double free)", p, cpu);
		x->map[idx] = 2;
		if (++cnr > inuse)
			return sviolate(x, MM_INV_S1, s, cpu, slab, inuse, cnr,
					"cpu %d freelist holds more objects than the slab has in use (%u)", cpu, inuse);
	}
	*cpu_nr = cnr;

	/* S3 of debug caches: every object as what it is (level 3). */
	if (x->level >= 3 && kmem_cache_debug_flags(s, SLAB_RED_ZONE | SLAB_POISON)) {
		for_each_object(p, s, base, objects)
			if (!check_object_s3(x, s, slab, p, x->map[obj_to_index(s, base, p)] != 0))
				return false;
	}
	return true;
}

/* ---------------------------------------------------------------- per cache */

/* T1: tids name their vCPU (level 2) and never go back (level 3). */
static bool check_tids(struct slab_check_ctx *x, struct kmem_cache *s)
{
	for (unsigned int cpu = 0; cpu < x->mm->cfg.nr_cpus; cpu++) {
		unsigned long tid = c_tid(slub_cpu(s, (int)cpu));
		if (tid_to_cpu(tid) != cpu)
			return sviolate(x, MM_INV_T1, s, (int)cpu, NULL, cpu, tid_to_cpu(tid),
					"cpu %u has tid %#lx, which names cpu %u", cpu, tid, tid_to_cpu(tid));
		if (x->level >= 3) {
			if (tid < s->last_tid[cpu])
				return sviolate(x, MM_INV_T1, s, (int)cpu, NULL, (long)s->last_tid[cpu], (long)tid,
						"cpu %u tid went back from %#lx to %#lx", cpu, s->last_tid[cpu], tid);
			s->last_tid[cpu] = tid;
		}
	}
	return true;
}

static bool set_owner(struct slab_check_ctx *x, struct kmem_cache *s, struct page *slab, unsigned int own)
{
	unsigned int *o;

	if (!x->owner)
		return true;
	o = &x->owner[__page_to_pfn(x->mm, slab) - x->mm->first_pfn];
	if (*o)
		return sviolate(x, MM_INV_S2, s, OWN_CPU(own), slab, 1, 2, "slab is on %s (cpu %d) and on %s (cpu %d)",
				own_names[OWN_KIND(*o)], OWN_CPU(*o), own_names[OWN_KIND(own)], OWN_CPU(own));
	*o = own;
	return true;
}

/* The vCPUs' slabs (level 3: reads other vCPUs' state, needs quiescence). */
static bool check_cpus(struct slab_check_ctx *x, struct kmem_cache *s)
{
	long max_chain = atomic_load(&get_node(s, 0)->nr_slabs);

	for (unsigned int cpu = 0; cpu < x->mm->cfg.nr_cpus; cpu++) {
		struct kmem_cache_cpu *c = slub_cpu(s, (int)cpu);
		struct page *slab = c_slab(c), *p;
		long len = 0;

		if (!slab && c_freelist(c))
			return sviolate(x, MM_INV_S1, s, (int)cpu, NULL, 0, 1,
					"cpu %u has a freelist (%p) but no cpu slab", cpu, c_freelist(c));
		if (!cpu_online(x->mm, (int)cpu) && (slab || c_partial(c)))
			return sviolate(x, MM_INV_S2, s, (int)cpu, slab, 0, 1,
					"offline cpu %u still holds slabs (not flushed when it died)", cpu);
		if (slab) {
			if (!check_slab_ptr(x, s, (int)cpu, slab, "a cpu slab"))
				return false;
			if (!slab_frozen(slab))
				return sviolate(x, MM_INV_S2, s, (int)cpu, slab, 1, 0, "cpu %u's cpu slab is not frozen", cpu);
			if (!set_owner(x, s, slab, OWN(OWN_CPU_SLAB, cpu)))
				return false;
		}
		for (p = c_partial(c); p; p = p->next) {
			if (++len > max_chain)
				return sviolate(x, MM_INV_S2, s, (int)cpu, NULL, max_chain, len,
						"cpu %u partial list longer than the cache's slabs (a cycle)", cpu);
			if (!check_slab_ptr(x, s, (int)cpu, p, "a cpu partial list"))
				return false;
			if (!slab_frozen(p))
				return sviolate(x, MM_INV_S2, s, (int)cpu, p, 1, 0, "slab on cpu %u's partial list is not frozen", cpu);
			if (!set_owner(x, s, p, OWN(OWN_CPU_PARTIAL, cpu)))
				return false;
		}
		/* ->slabs of each entry counts the slabs from it to the end */
		for (p = c_partial(c); p; p = p->next, len--)
			if (p->slabs != len)
				return sviolate(x, MM_INV_S2, s, (int)cpu, p, len, p->slabs,
						"cpu %u partial list: slabs count %d, %ld slabs follow", cpu, p->slabs, len);
	}
	return true;
}

/*
 * The node lists, under list_lock (level 2 and 3).  A list longer than
 * nr_slabs + 1 is a cycle: under list_lock it cannot be longer, since a
 * slab is counted before it can be put on a list and uncounted only off
 * them (inc_slabs_node()).  So nr_slabs is read under the lock: read
 * before it, while the lock was contended, the count could be older than
 * the list - another task holding the lock (or running while this one
 * waited) may allocate slabs and put them on the partial list, and the
 * check reported a cycle in a correct list (the deterministic slub
 * stressor, 2026-12-07, bench/results/stress-findings/).
 */
static bool check_node(struct slab_check_ctx *x, struct kmem_cache *s)
{
	struct kmem_cache_node *n = get_node(s, 0);
	unsigned long flags, count = 0;
	struct list_head *pos;
	bool ok = true;
	long max_len;

	spin_lock_irqsave(&n->list_lock, flags);
	max_len = atomic_load(&n->nr_slabs) + 1;
	for (pos = n->partial.next; ok && pos != &n->partial; pos = pos->next) {
		struct page *slab = list_entry(pos, struct page, slab_list);
		union slab_ctr ctr;
		unsigned int cnr;
		u128 snap;

		if ((long)++count > max_len) {
			ok = sviolate(x, MM_INV_S2, s, -1, NULL, max_len, (long)count, "node partial list has a cycle");
			break;
		}
		if (!(ok = check_slab_ptr(x, s, -1, slab, "the node partial list")))
			break;
		snap = load16(slab_pair(slab));
		ctr.counters = (unsigned long)(snap >> 64);
		if (ctr.c.frozen)
			ok = sviolate(x, MM_INV_S2, s, -1, slab, 0, 1, "frozen slab on the node partial list");
		else if (!(void *)(uintptr_t)snap || ctr.c.inuse >= ctr.c.objects)
			ok = sviolate(x, MM_INV_S2, s, -1, slab, ctr.c.objects, ctr.c.inuse,
				      "full slab (inuse %u of %u) on the node partial list", ctr.c.inuse, ctr.c.objects);
		else      /* level 3 checks S1 of every slab in check_memmap() */
			ok = (x->level >= 3 || check_slab_s1(x, s, slab, (void *)(uintptr_t)snap, ctr, NULL, -1, &cnr)) &&
			     set_owner(x, s, slab, OWN(OWN_NODE_PARTIAL, 0));
	}
	if (ok && count != node_nr_partial(n))
		ok = sviolate(x, MM_INV_S2, s, -1, NULL, (long)count, (long)node_nr_partial(n),
			      "nr_partial is %lu but the list holds %lu slabs", node_nr_partial(n), count);
	if (ok && (s->flags & SLAB_STORE_USER) && kmem_cache_debug(s)) {
		count = 0;
		for (pos = n->full.next; ok && pos != &n->full; pos = pos->next) {
			struct page *slab = list_entry(pos, struct page, slab_list);
			if ((long)++count > max_len) {
				ok = sviolate(x, MM_INV_S2, s, -1, NULL, max_len, (long)count, "node full list has a cycle");
				break;
			}
			if (!(ok = check_slab_ptr(x, s, -1, slab, "the node full list")))
				break;
			union slab_ctr ctr = slab_ctr(slab);
			if (ctr.c.frozen || slab_freelist(slab) || ctr.c.inuse != ctr.c.objects)
				ok = sviolate(x, MM_INV_S2, s, -1, slab, ctr.c.objects, ctr.c.inuse,
					      "slab on the node full list is not full (inuse %u of %u, frozen %u)",
					      ctr.c.inuse, ctr.c.objects, ctr.c.frozen);
			else
				ok = set_owner(x, s, slab, OWN(OWN_NODE_FULL, 0));
		}
	}
	spin_unlock_irqrestore(&n->list_lock, flags);
	return ok;
}

/* ---------------------------------------------------------------- level 3: every slab */

static struct kmem_cache *find_cache(struct slub_state *st, const struct kmem_cache *p)
{
	struct list_head *pos;
	list_for_each(pos, &st->caches)
		if (list_entry(pos, struct kmem_cache, list) == p)
			return (struct kmem_cache *)p;
	return NULL;
}

struct cache_totals {
	long slabs, objects, in_use;     /* per the memmap walk; in_use excludes cpu freelists */
};

static bool check_memmap(struct slab_check_ctx *x)
{
	struct mm *mm = x->mm;
	struct list_head *pos;
	int nr_caches = 0, i;

	list_for_each(pos, &x->st->caches)
		nr_caches++;
	struct kmem_cache **caches = calloc((size_t)nr_caches + 1, sizeof(*caches));
	struct cache_totals *tot = calloc((size_t)nr_caches + 1, sizeof(*tot));
	bool ok = true;

	if (!caches || !tot) {
		free(caches);
		free(tot);
		return true;      /* cannot check without memory; not a violation */
	}
	i = 0;
	list_for_each(pos, &x->st->caches)
		caches[i++] = list_entry(pos, struct kmem_cache, list);

	for (unsigned long pfn = mm->first_pfn; ok && pfn < mm->end_pfn; pfn++) {
		if (!__pfn_valid(mm, pfn))
			continue;
		struct page *slab = __pfn_to_page(mm, pfn);
		if (!PageSlab(slab)) {
			/*
			 * A free buddy block is stepped over whole, so the walk
			 * costs O(free blocks + allocated pages), not O(pfns):
			 * mm_check() ran B1 on every page of every block on the
			 * free lists before this walk (level 3 is never
			 * incremental), PG_slab included, and its B4 walk after
			 * this one reports a PageBuddy block on no list as lost.
			 */
			if (PageBuddy(slab) && buddy_order(slab) <= MAX_ORDER(mm) &&
			    !(pfn & ((1UL << buddy_order(slab)) - 1)))
				pfn += (1UL << buddy_order(slab)) - 1;
			continue;
		}
		struct kmem_cache *s = find_cache(x->st, slab->slab_cache);
		if (!s) {
			ok = sviolate(x, MM_INV_S2, NULL, -1, slab, 0, 0, "slab at pfn %#lx belongs to no cache (%p)", pfn,
				      (void *)slab->slab_cache);
			break;
		}
		for (i = 0; caches[i] != s; i++)
			;
		if (PageTail(slab)) {
			ok = sviolate(x, MM_INV_S2, s, -1, slab, 0, 1, "tail page %#lx marked as a slab", pfn);
			break;
		}
		unsigned int own = x->owner[pfn - mm->first_pfn];
		union slab_ctr ctr = slab_ctr(slab);
		void *freelist = slab_freelist(slab), *cpu_freelist = NULL;
		int cpu = -1;
		unsigned int cnr = 0;

		if (OWN_KIND(own) == OWN_CPU_SLAB || OWN_KIND(own) == OWN_CPU_PARTIAL) {
			cpu = OWN_CPU(own);
			if (!ctr.c.frozen) {
				ok = sviolate(x, MM_INV_S2, s, cpu, slab, 1, 0, "slab on %s of cpu %d is not frozen",
					      own_names[OWN_KIND(own)], cpu);
				break;
			}
			if (OWN_KIND(own) == OWN_CPU_SLAB)
				cpu_freelist = c_freelist(slub_cpu(s, cpu));
		} else if (ctr.c.frozen) {
			ok = sviolate(x, MM_INV_S2, s, -1, slab, 1, 0, "frozen slab is owned by no vCPU (%s)",
				      own_names[OWN_KIND(own)]);
			break;
		} else if (OWN_KIND(own) == OWN_NONE && (freelist || ctr.c.inuse != ctr.c.objects)) {
			ok = sviolate(x, MM_INV_S2, s, -1, slab, ctr.c.objects, ctr.c.inuse,
				      "slab with free objects (inuse %u of %u) on no list: lost", ctr.c.inuse,
				      ctr.c.objects);
			break;
		}
		if (!(ok = check_slab_s1(x, s, slab, freelist, ctr, cpu_freelist, cpu, &cnr)))
			break;
		tot[i].slabs++;
		tot[i].objects += ctr.c.objects;
		tot[i].in_use += (long)ctr.c.inuse - cnr;
	}

	for (i = 0; ok && i < nr_caches; i++) {
		struct kmem_cache *s = caches[i];
		struct kmem_cache_node *n = get_node(s, 0);
		if (tot[i].slabs != atomic_load(&n->nr_slabs))
			ok = sviolate(x, MM_INV_S2, s, -1, NULL, atomic_load(&n->nr_slabs), tot[i].slabs,
				      "node counts %ld slabs, memory holds %ld", atomic_load(&n->nr_slabs), tot[i].slabs);
		else if (tot[i].objects != atomic_load(&n->total_objects))
			ok = sviolate(x, MM_INV_S2, s, -1, NULL, atomic_load(&n->total_objects), tot[i].objects,
				      "node counts %ld objects, its slabs hold %ld", atomic_load(&n->total_objects),
				      tot[i].objects);
#ifdef SLUB_COUNT_LIVE
		if (ok) {
			long live = atomic_load(&s->nr_isolated);
			for (unsigned int cpu = 0; cpu < mm->cfg.nr_cpus; cpu++)
				live += __atomic_load_n(&slub_cpu(s, (int)cpu)->live, __ATOMIC_RELAXED);
			if (live != tot[i].in_use)
				ok = sviolate(x, MM_INV_S1, s, -1, NULL, live, tot[i].in_use,
					      "the slabs have %ld objects in use, clients hold %ld (lost or doubly "
					      "freed objects)", tot[i].in_use, live);
		}
#endif
	}
	free(caches);
	free(tot);
	return ok;
}

/*
 * Level 2 is incremental (mm_check): a cache is walked again only when
 * something it reads may have changed.  Every path that changes a cache's
 * slabs leaves a mark here: fast paths and the slow alloc path move the
 * tid; the bulk paths the vCPU freelist; a free to a slab that is not the
 * vCPU's counts FREE_SLOWPATH (and moves "live", the allocated-minus-freed
 * count of the freeing vCPU); deactivation and partial draining change
 * the vCPU's slab or partial list; a node list change or shrink moves
 * nr_partial or nr_slabs; a debug repair nr_isolated; an options change the
 * flags or the size.  All are atomics but the flags and sizes, which
 * change under slab_mutex, held here: no list_lock taken just to compare.
 * Without SLUB_STATS there is no FREE_SLOWPATH count: always walk.
 */
static unsigned long cache_l2_signature(struct mm *mm, struct kmem_cache *s)
{
	struct kmem_cache_node *n = get_node(s, 0);
	uint64_t h = MM_SIG_INIT;

	h = mm_sig_mix(h, (uint64_t)s->flags);
	h = mm_sig_mix(h, (uint64_t)s->size << 32 | s->object_size);
	h = mm_sig_mix(h, (uint64_t)atomic_load(&s->nr_isolated));
	h = mm_sig_mix(h, node_nr_partial(n));
	h = mm_sig_mix(h, (uint64_t)atomic_load(&n->nr_slabs));
	h = mm_sig_mix(h, (uint64_t)atomic_load(&n->total_objects));
	for (unsigned int cpu = 0; cpu < mm->cfg.nr_cpus; cpu++) {
		struct kmem_cache_cpu *c = slub_cpu(s, (int)cpu);
		h = mm_sig_mix(h, (uintptr_t)c_freelist(c));
		h = mm_sig_mix(h, c_tid(c));
		h = mm_sig_mix(h, (uintptr_t)c_slab(c) ^ (uintptr_t)c_partial(c) << 1);
#ifdef SLUB_COUNT_LIVE
		h = mm_sig_mix(h, (uint64_t)__atomic_load_n(&c->live, __ATOMIC_RELAXED));
#endif
#ifdef SLUB_STATS
		h = mm_sig_mix(h, __atomic_load_n(&c->stat[FREE_SLOWPATH], __ATOMIC_RELAXED));
#endif
	}
	return h ? (unsigned long)h : 1;
}

void slab_check_forget(struct mm *mm)
{
	struct slub_state *st = slub_state(mm);
	struct list_head *pos;

	if (!st)
		return;
	list_for_each(pos, &st->caches)
		atomic_store_explicit(&list_entry(pos, struct kmem_cache, list)->l2_sig, 0, memory_order_relaxed);
}

bool slab_check(struct mm *mm, int level, struct mm_violation *v)
{
	struct slub_state *st = slub_state(mm);
	struct slab_check_ctx x = { .mm = mm, .st = st, .level = level, .v = v };
	struct list_head *pos;
	bool ok = true;

	if (!st || level < 2)
		return true;
	mutex_lock(&st->slab_mutex);
	if (!st->check_map)
		st->check_map = malloc(MAX_OBJS_PER_PAGE + 1);
	if (level >= 3 && !st->check_owner)
		st->check_owner = malloc((mm->end_pfn - mm->first_pfn) * sizeof(*st->check_owner));
	x.map = st->check_map;
	x.owner = level >= 3 ? st->check_owner : NULL;
	if (!x.map || (level >= 3 && !x.owner)) {
		mutex_unlock(&st->slab_mutex);
		return true;      /* cannot check without memory; not a violation */
	}
	if (x.owner)
		memset(x.owner, 0, (mm->end_pfn - mm->first_pfn) * sizeof(*x.owner));
	list_for_each(pos, &st->caches) {
		struct kmem_cache *s = list_entry(pos, struct kmem_cache, list);
#ifdef SLUB_STATS
		bool track = !mm->check_full_walks;
#else
		bool track = false;
#endif
		unsigned long sig = track ? cache_l2_signature(mm, s) : 0;
		if (track && mm_check_incremental(mm, level) &&
		    sig == atomic_load_explicit(&s->l2_sig, memory_order_relaxed))
			continue;
		ok = check_tids(&x, s) && (level < 3 || check_cpus(&x, s)) && check_node(&x, s);
		atomic_store_explicit(&s->l2_sig, ok ? sig : 0, memory_order_relaxed);
		if (!ok)
			break;
	}
	if (ok && level >= 3)
		ok = check_memmap(&x);
	mutex_unlock(&st->slab_mutex);
	return ok;
}

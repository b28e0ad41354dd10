/* SPDX-License-Identifier: MIT */
/*
 * cache.c - caches: creation with the object layout (calculate_sizes,
 * calculate_order), destruction with the leak report, shrinking, and the
 * introspection the tests and /proc-style dumps use.
 *
 * Models mm/slab_common.c and the cache parts of mm/slub.c of Linux 6.6:
 * kmem_cache_create_usercopy(), calculate_alignment(), kmem_cache_open(),
 * calculate_sizes(), calculate_order(), set_min_partial(),
 * set_cpu_partial(), init_cache_random_seq(), kmem_cache_destroy(),
 * __kmem_cache_shutdown(), free_partial(), __kmem_cache_do_shrink(),
 * get_slabinfo().  Not modelled: cache merging (SLAB_NO_MERGE is the
 * behaviour), usercopy regions, memcg, RCU-typesafe caches, sysfs.
 *
 * The struct kmem_cache itself and its per-vCPU array live in host memory
 * (malloc), as the CPU model's and the pcp lists' state does; only objects
 * live in slab pages of the instance.
 */
#include <stdlib.h>
#include <string.h>

#include "slab/slab.h"
#include "slab/kasan.h"

/* ---------------------------------------------------------------- layout */

static unsigned int order_objects(unsigned int order, unsigned int size)
{
	return (unsigned int)((MM_PAGE_SIZE << order) / size);
}

static struct kmem_cache_order_objects oo_make(unsigned int order, unsigned int size)
{
	struct kmem_cache_order_objects x = { (order << OO_SHIFT) + order_objects(order, size) };
	return x;
}

#ifdef MM_ASAN
/* optimal_redzone() of mm/kasan/generic.c (Linux 6.6). */
static unsigned int kasan_optimal_redzone(unsigned int object_size)
{
	return object_size <= 64 - 16 ? 16 :
	       object_size <= 128 - 32 ? 32 :
	       object_size <= 512 - 64 ? 64 :
	       object_size <= 4096 - 128 ? 128 :
	       object_size <= (1 << 14) - 256 ? 256 :
	       object_size <= (1 << 15) - 512 ? 512 :
	       object_size <= (1 << 16) - 1024 ? 1024 : 2048;
}
#endif

/*
 * calc_slab_order(): the smallest order from @min_order up to @max_order
 * whose slab wastes at most 1/@fract_leftover, at least @min_objects
 * objects (Linux 6.6).
 */
static unsigned int calc_slab_order(struct slub_state *st, unsigned int size, unsigned int min_objects,
				    unsigned int max_order, unsigned int fract_leftover)
{
	unsigned int min_order = st->min_order, order;

	if (order_objects(min_order, size) > MAX_OBJS_PER_PAGE)
		return get_order_size((size_t)size * MAX_OBJS_PER_PAGE) - 1;

	for (order = MAX(min_order, get_order_size((size_t)min_objects * size)); order <= max_order; order++) {
		unsigned int slab_size = (unsigned int)(MM_PAGE_SIZE << order);
		unsigned int rem = slab_size % size;

		if (rem <= slab_size / fract_leftover)
			break;
	}
	return order;
}

/*
 * calculate_order() (Linux 6.6): aim for min_objects = 4 * (fls(nr_cpus) + 1)
 * objects with at most 1/16 waste, then relax the waste to 1/4 and the
 * object count down to 1, then allow any order up to MAX_ORDER.
 * Returns -1 when even that fails.
 */
static int calculate_order(struct slub_state *st, unsigned int size)
{
	struct mm *mm = st->mm;
	unsigned int slub_max_order = MIN(st->max_order, MAX_ORDER(mm));
	unsigned int min_objects = st->min_objects, max_objects, order;

	if (!min_objects) {
		unsigned int nr_cpus = mm->cfg.nr_cpus, fls = 0;
		while (nr_cpus >> fls)
			fls++;
		min_objects = 4 * (fls + 1);
	}
	max_objects = order_objects(slub_max_order, size);
	min_objects = MIN(min_objects, max_objects);

	while (min_objects > 1) {
		for (unsigned int fraction = 16; fraction >= 4; fraction /= 2) {
			order = calc_slab_order(st, size, min_objects, slub_max_order, fraction);
			if (order <= slub_max_order)
				return (int)order;
		}
		min_objects--;
	}

	/* One object per slab: any waste within slub_max_order ... */
	order = calc_slab_order(st, size, 1, slub_max_order, 1);
	if (order <= slub_max_order)
		return (int)order;
	/* ... or beyond it, up to what the page allocator has. */
	order = calc_slab_order(st, size, 1, MAX_ORDER(mm), 1);
	if (order <= MAX_ORDER(mm))
		return (int)order;
	return -1;
}

/*
 * calculate_sizes() (Linux 6.6): where everything of an object lives.
 *
 *   object - red_left_pad   left red zone (SLAB_RED_ZONE)
 *   object                  the object_size bytes of the client; the free
 *                           pointer sits in the middle of them unless a
 *                           constructor, poisoning or a red zone around a
 *                           word-smaller object forbids it
 *   object + object_size    right red zone, up to the word (one more word
 *                           if the object already ends on one)
 *   object + inuse          metadata: the free pointer when outside, two
 *                           struct track (SLAB_STORE_USER), the kmalloc
 *                           request size (SLAB_STORE_USER | SLAB_KMALLOC)
 *   ...                     a word of padding with red zones, then
 *                           alignment padding up to size
 *
 * size (the stride) is always a multiple of 8, and so is every object
 * start, which ASan needs (kasan.h).  Returns 0 on success.
 */
int calculate_sizes(struct kmem_cache *s)
{
	struct slub_state *st = slub_state(s->mm);
	slab_flags_t flags = s->flags;
	unsigned int size = s->object_size;
	int order;

	/* The free pointer can only sit on a word boundary. */
	size = SLUB_ALIGN(size, (unsigned int)sizeof(void *));

	/* Poison the object itself only if nobody may rely on its contents. */
	if ((flags & SLAB_POISON) && !s->ctor)
		s->flags |= __OBJECT_POISON;
	else
		s->flags &= ~__OBJECT_POISON;

	/* A red zone needs at least some bytes between object and metadata. */
	if ((flags & SLAB_RED_ZONE) && size == s->object_size)
		size += sizeof(void *);

	s->inuse = size;

	if ((flags & SLAB_POISON) || ((flags & SLAB_RED_ZONE) && s->object_size < sizeof(void *)) ||
	    s->ctor || slub_debug_orig_size(s)) {
		/*
		 * The free pointer must not overlay the object: a constructor's
		 * state survives free, poison fills the whole object, and a
		 * red-zoned object smaller than a word would put it in the red
		 * zone ("mm, slub: fix redzone for tiny objects").
		 */
		s->offset = size;
		size += sizeof(void *);
	} else {
		/* Keep it away from both edges: small overflows from a neighbour
		 * then do not hit it (Linux >= 5.7). */
		s->offset = SLUB_ALIGN_DOWN(s->object_size / 2, (unsigned int)sizeof(void *));
	}

	if (flags & SLAB_STORE_USER) {
		size += 2 * sizeof(struct track);
		if (flags & SLAB_KMALLOC)
			size += sizeof(unsigned int);   /* the request size */
	}

#ifdef MM_ASAN
	/* kasan_cache_create(): generic KASAN's redzone after every object, so an
	 * overflow of an object that fills its slot still lands on poison. */
	{
		unsigned int rz = kasan_optimal_redzone(s->object_size);
		if (size < s->object_size + rz)
			size = s->object_size + rz;
	}
#endif
	if (flags & SLAB_RED_ZONE) {
		/* A word of padding catches writes before the next object's start
		 * in the metadata rather than in tracking data or the free pointer. */
		size += sizeof(void *);
		s->red_left_pad = SLUB_ALIGN((unsigned int)sizeof(void *), s->align);
		size += s->red_left_pad;
	} else {
		s->red_left_pad = 0;
	}

	size = SLUB_ALIGN(size, s->align);
	s->size = size;
	VM_BUG_ON(size % 8 || s->red_left_pad % 8);

	order = calculate_order(st, size);
	if (order < 0)
		return -1;

	s->allocflags = __GFP_COMP;
	if (s->flags & SLAB_CACHE_DMA)
		s->allocflags |= __GFP_DMA;
	if (s->flags & SLAB_CACHE_DMA32)
		s->allocflags |= __GFP_DMA32;
	if (s->flags & SLAB_RECLAIM_ACCOUNT)
		s->allocflags |= __GFP_RECLAIMABLE;

	s->oo = oo_make((unsigned int)order, size);
	s->min = oo_make(get_order_size(size), size);
	return oo_objects(s->oo) ? 0 : -1;
}


/* set_min_partial(): ilog2(size) / 2, within MIN_PARTIAL..MAX_PARTIAL. */
static void set_min_partial(struct kmem_cache *s)
{
	unsigned long ilog2 = 0;
	while ((1UL << (ilog2 + 1)) <= s->size)
		ilog2++;
	s->min_partial = MAX((unsigned long)MIN_PARTIAL, MIN((unsigned long)MAX_PARTIAL, ilog2 / 2));
}

/* set_cpu_partial(): objects worth keeping on a vCPU, as slabs assumed half full. */
static void set_cpu_partial(struct kmem_cache *s)
{
	unsigned int nr_objects;

	if (!kmem_cache_has_cpu_partial(s))
		nr_objects = 0;
	else if (s->size >= MM_PAGE_SIZE)
		nr_objects = 6;
	else if (s->size >= 1024)
		nr_objects = 24;
	else if (s->size >= 256)
		nr_objects = 52;
	else
		nr_objects = 120;
	s->cpu_partial = nr_objects;
	s->cpu_partial_slabs = (nr_objects * 2 + oo_objects(s->oo) - 1) / oo_objects(s->oo);
}

/*
 * init_cache_random_seq(): a shuffled sequence of object offsets
 * (CONFIG_SLAB_FREELIST_RANDOM), rs->count entries, with the draws from
 * random state rs->rnd on (one per object but the first).
 */
static void init_cache_random_seq(struct slub_random_seq *rs)
{
	unsigned int count = rs->count, *seq = rs->seq;
	unsigned long r = rs->rnd;

	for (unsigned int i = 0; i < count; i++)
		seq[i] = i;
	for (unsigned int i = count - 1; i > 0; i--) {          /* freelist_randomize(): Fisher-Yates */
		r += SLUB_RND_GAMMA;
		unsigned int j = (unsigned int)(slub_random_mix(r) % (i + 1));
		unsigned int t = seq[i];
		seq[i] = seq[j];
		seq[j] = t;
	}
	for (unsigned int i = 0; i < count; i++)
		seq[i] *= rs->size;
}

/*
 * The sequence of @rs, made on first use (struct slub_random_seq): one
 * caller makes it, any other waits for it.  The maker has the model's
 * interrupts masked, as an interrupt whose handler allocated from the same
 * cache would wait for its own task; a signal interrupt that arrives then is
 * delivered at the next preemption point, and there is none here, so the
 * deterministic scheduler never switches away from the maker mid-way
 * either.  The kernel shuffles in kmem_cache_open() and has no such window.
 */
const unsigned int *slub_cache_random_seq(struct slub_random_seq *rs)
{
	int st = atomic_load_explicit(&rs->state, memory_order_acquire);

	if (st == 2)
		return rs->seq;
	st = 0;
	unsigned long flags = arch_local_irq_save();
	if (atomic_compare_exchange_strong_explicit(&rs->state, &st, 1, memory_order_acquire,
						    memory_order_acquire)) {
		init_cache_random_seq(rs);
		atomic_store_explicit(&rs->state, 2, memory_order_release);
		arch_local_irq_unmask(flags);
	} else {
		arch_local_irq_unmask(flags);
		while (atomic_load_explicit(&rs->state, memory_order_acquire) != 2)
			cpu_relax();
	}
	return rs->seq;
}

/* init_kmem_cache_cpus(): every vCPU starts with its own tid and nothing else. */
void slub_cache_init_cpus(struct kmem_cache *s)
{
	unsigned int nr = s->mm->cfg.nr_cpus;

	memset(s->cpu_slab, 0, nr * sizeof(*s->cpu_slab));
	for (unsigned int cpu = 0; cpu < nr; cpu++) {
		struct kmem_cache_cpu *c = slub_cpu(s, (int)cpu);
		local_lock_init(&c->lock);
		c->tid = init_tid((int)cpu);
		s->last_tid[cpu] = c->tid;
	}
}

static void init_kmem_cache_node(struct kmem_cache_node *n)
{
	spin_lock_init(&n->list_lock);
	n->nr_partial = 0;
	INIT_LIST_HEAD(&n->partial);
	INIT_LIST_HEAD(&n->full);
	atomic_store(&n->nr_slabs, 0);
	atomic_store(&n->total_objects, 0);
}

/* ---------------------------------------------------------------- layout memo */

/* The layout's inputs as they are now (struct slub_layout), @rnd the random state. */
static void layout_key(struct kmem_cache *s, struct slub_layout *k)
{
	struct slub_state *st = slub_state(s->mm);

	memset(k, 0, sizeof(*k));
	k->cflags = kmem_cache_flags(st, s->name, s->user_flags);
	k->hardened = st->hardened;
	k->random = st->random;
	k->disable_higher_order_debug = st->disable_higher_order_debug;
	k->min_order = st->min_order;
	k->max_order = st->max_order;
	k->min_objects = st->min_objects;
	k->rnd = atomic_load_explicit(&st->rnd, memory_order_relaxed);
}

static bool layout_same_key(const struct slub_layout *a, const struct slub_layout *b)
{
	return a->cflags == b->cflags && a->hardened == b->hardened && a->random == b->random &&
	       a->disable_higher_order_debug == b->disable_higher_order_debug &&
	       a->min_order == b->min_order && a->max_order == b->max_order && a->min_objects == b->min_objects &&
	       a->rnd == b->rnd;
}

/* The layout fields of @s from @l, or into @l. */
static void layout_apply(struct kmem_cache *s, const struct slub_layout *l)
{
	s->flags = l->flags;
	s->fp_random = l->fp_random;
	s->fp_swab_mask = l->fp_swab_mask;
	s->size = l->size;
	s->inuse = l->inuse;
	s->offset = l->offset;
	s->red_left_pad = l->red_left_pad;
	s->oo = l->oo;
	s->min = l->min;
	s->allocflags = l->allocflags;
	s->min_partial = l->min_partial;
	s->cpu_partial = l->cpu_partial;
	s->cpu_partial_slabs = l->cpu_partial_slabs;
	s->random_seq = l->random_seq;
}

static void layout_save(const struct kmem_cache *s, struct slub_layout *l)
{
	l->flags = s->flags;
	l->fp_random = s->fp_random;
	l->fp_swab_mask = s->fp_swab_mask;
	l->size = s->size;
	l->inuse = s->inuse;
	l->offset = s->offset;
	l->red_left_pad = s->red_left_pad;
	l->oo = s->oo;
	l->min = s->min;
	l->allocflags = s->allocflags;
	l->min_partial = s->min_partial;
	l->cpu_partial = s->cpu_partial;
	l->cpu_partial_slabs = s->cpu_partial_slabs;
	l->random_seq = s->random_seq;
}

static bool layout_same(const struct slub_layout *a, const struct slub_layout *b, unsigned int count)
{
	if (a->flags != b->flags || a->fp_random != b->fp_random || a->fp_swab_mask != b->fp_swab_mask ||
	    a->size != b->size || a->inuse != b->inuse || a->offset != b->offset ||
	    a->red_left_pad != b->red_left_pad || a->oo.x != b->oo.x || a->min.x != b->min.x ||
	    a->allocflags != b->allocflags || a->min_partial != b->min_partial || a->cpu_partial != b->cpu_partial ||
	    a->cpu_partial_slabs != b->cpu_partial_slabs || a->draws != b->draws ||
	    !a->random_seq != !b->random_seq)
		return false;
	return !a->random_seq || (a->random_seq->count == count && b->random_seq->count == count &&
				  !memcmp(slub_cache_random_seq(a->random_seq), slub_cache_random_seq(b->random_seq),
					  count * sizeof(unsigned int)));
}

/*
 * The layout for the inputs @k into @s's layout fields (random_seq newly
 * allocated): kmem_cache_open()'s order - the hardening word is the first
 * draw, then calculate_sizes(), the partial limits and the random sequence
 * with one draw per object but the first.  @reserve: take the draws from
 * the instance's random state (k->rnd becomes the state they start at);
 * else make them from k->rnd and leave the instance's state alone.
 * Returns 0, -1 when the object does not fit a slab, -2 out of memory (the
 * hardening word drawn either way, as the kernel's order draws it).  The
 * order and object limits of @k are the instance's current ones:
 * calculate_sizes() reads them there.
 */
static int layout_compute(struct kmem_cache *s, struct slub_layout *k, bool reserve)
{
	struct slub_state *st = slub_state(s->mm);
	struct slub_random_seq *seq = NULL;
	unsigned int count;
	unsigned long r;
	int ret = 0;

	s->flags = k->cflags;
	s->random_seq = NULL;
	if (calculate_sizes(s))
		ret = -1;
	/*
	 * kmem_cache_open()'s disable_higher_order_debug (slub_debug's O):
	 * no red zone, poison or tracking where they raise the order an
	 * object needs.
	 */
	if (!ret && k->disable_higher_order_debug && get_order_size(s->size) > get_order_size(s->object_size)) {
		s->flags &= ~(SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER);     /* DEBUG_METADATA_FLAGS */
		s->offset = 0;
		if (calculate_sizes(s))
			ret = -1;
	}
	count = ret ? 0 : oo_objects(s->oo);
	if (!ret && k->random && count >= 2 && !(seq = malloc(sizeof(*seq) + count * sizeof(unsigned int))))
		ret = -2;
	k->draws = (k->hardened ? 1 : 0) + (!ret && seq ? count - 1 : 0);
	r = reserve ? slub_random_reserve(st, k->draws) : k->rnd;
	k->rnd = r;
	if (k->hardened) {
		r += SLUB_RND_GAMMA;
		s->fp_random = slub_random_mix(r);
		s->fp_swab_mask = ~0UL;
	} else {
		s->fp_random = 0;
		s->fp_swab_mask = 0;
	}
	if (ret)
		return ret;
	set_min_partial(s);
	set_cpu_partial(s);
	if (seq) {                               /* made on first use: slub_cache_random_seq() */
		atomic_init(&seq->state, 0);
		seq->rnd = r;
		seq->count = count;
		seq->size = s->size;
	}
	s->random_seq = seq;
	return 0;
}

/* MM_DEBUG 3: a layout taken again is the one computing it now, from the same random state, would give. */
static void layout_verify(struct kmem_cache *s, const struct slub_layout *l)
{
	struct kmem_cache tmp = *s;
	struct slub_layout k, now;

	if (MM_DEBUG < 3)
		return;
	layout_key(s, &k);
	k.rnd = l->rnd;
	BUG_ON(layout_compute(&tmp, &k, false));
	layout_save(&tmp, &now);
	now.draws = k.draws;
	BUG_ON(!layout_same(&now, l, oo_objects(l->oo)));
	free(tmp.random_seq);
}

/* Put layouts[@i] in use (no struct moves: they go through ASan's interceptors). */
static void layout_use(struct kmem_cache *s, unsigned int i)
{
	s->layout = i;
	s->layouts[i].used = ++s->layout_clock;
	layout_apply(s, &s->layouts[i]);
}

/*
 * The layout part of kmem_cache_open(): flags with slub_debug applied,
 * hardening, sizes, partial limits, randomisation.  Also used when
 * options change on a cache that holds no slab.  A layout the cache
 * computed before from the same inputs and the same random state is
 * taken again (struct slub_layout), with the random state moved past its
 * draws.  On failure the cache keeps the layout it had.
 */
static int kmem_cache_setup_layout(struct kmem_cache *s, char *err, size_t errlen)
{
	struct slub_state *st = slub_state(s->mm);
	struct slub_layout k, *cur = &s->layouts[s->layout];
	unsigned int i, victim = 0;
	int ret;

	s->fastpath = st->fastpath;
	layout_key(s, &k);
	for (i = 0; i < SLUB_NR_LAYOUTS; i++) {
		struct slub_layout *l = &s->layouts[i];
		unsigned long r = l->rnd;
		if (!l->valid || !layout_same_key(l, &k))
			continue;
		/* Taken again only when no other draw came between (a concurrent allocation's). */
		if (!atomic_compare_exchange_strong_explicit(&st->rnd, &r, r + l->draws * SLUB_RND_GAMMA,
							     memory_order_relaxed, memory_order_relaxed))
			break;
		layout_verify(s, l);
		layout_use(s, i);
		return 0;
	}

	ret = layout_compute(s, &k, true);
	if (ret) {                               /* layout_compute() allocated nothing */
		if (cur->valid)
			layout_apply(s, cur);
		if (ret == -2)
			return mm_fail(err, errlen, "kmem_cache_create(%s): out of memory", s->name);
		return mm_fail(err, errlen, "kmem_cache_create(%s): object size %u (stride %u, align %u) does not "
			    "fit a slab of order <= %u", s->name, s->object_size, s->size, s->align, MAX_ORDER(s->mm));
	}
	/* An empty slot, else the least recently used layout not in use makes room. */
	for (i = 0; i < SLUB_NR_LAYOUTS; i++) {
		struct slub_layout *l = &s->layouts[i];
		if (!l->valid) {
			victim = i;
			break;
		}
		if ((l != cur && l->used < s->layouts[victim].used) || &s->layouts[victim] == cur)
			victim = i;
	}
	free(s->layouts[victim].random_seq);
	layout_save(s, &k);
	k.valid = true;
	s->layouts[victim] = k;
	layout_use(s, victim);
	return 0;
}

/* calculate_alignment() (mm/slab_common.c). */
static unsigned int calculate_alignment(slab_flags_t flags, unsigned int align, unsigned int size)
{
	if (flags & SLAB_HWCACHE_ALIGN) {
		unsigned int ralign = L1_CACHE_BYTES;
		while (size <= ralign / 2)
			ralign /= 2;
		align = MAX(align, ralign);
	}
	align = MAX(align, (unsigned int)ARCH_SLAB_MINALIGN);
	return SLUB_ALIGN(align, (unsigned int)sizeof(void *));
}

bool slub_is_cache(struct slub_state *st, const struct kmem_cache *s)
{
	struct list_head *pos;
	list_for_each(pos, &st->caches)
		if (list_entry(pos, struct kmem_cache, list) == s)
			return true;
	return false;
}

/* kmem_cache_create_usercopy() + create_cache() + kmem_cache_open(), caller holds slab_mutex. */
struct kmem_cache *__kmem_cache_create(struct mm *mm, const char *name, unsigned int size,
				       unsigned int align, slab_flags_t flags, void (*ctor)(void *),
				       char *err, size_t errlen)
{
	struct slub_state *st = slub_state(mm);
	unsigned int nr = mm->cfg.nr_cpus;
	struct kmem_cache *s;

	if (!name || !*name) {
		mm_fail(err, errlen, "kmem_cache_create: a cache needs a name");
		return NULL;
	}
	if (size == 0 || (size_t)size > (MM_PAGE_SIZE << MAX_ORDER(mm))) {
		mm_fail(err, errlen, "kmem_cache_create(%s): size %u out of range 1..%lu", name, size,
		     MM_PAGE_SIZE << MAX_ORDER(mm));
		return NULL;
	}
	if (align & (align - 1)) {
		mm_fail(err, errlen, "kmem_cache_create(%s): align %u is not a power of two", name, align);
		return NULL;
	}
	/*
	 * 6.6 bounds align by nothing (calculate_alignment() only raises it):
	 * objects aligned beyond a page come from slabs whose blocks are (the
	 * direct map's alignment, memmap.c).  An align beyond the largest
	 * block no slab order can meet, and kmem_cache_open() fails then
	 * (calculate_order() finds no order); refused here already, before the
	 * stride arithmetic in unsigned int could wrap.
	 */
	if ((size_t)align > (MM_PAGE_SIZE << MAX_ORDER(mm))) {
		mm_fail(err, errlen, "kmem_cache_create(%s): align %u larger than the largest slab (order %u, %lu bytes)",
			name, align, MAX_ORDER(mm), MM_PAGE_SIZE << MAX_ORDER(mm));
		return NULL;
	}
	if (flags & ~(SLAB_DEBUG_FLAGS | SLAB_KMALLOC | SLAB_HWCACHE_ALIGN | SLAB_CACHE_DMA |
		      SLAB_CACHE_DMA32 | SLAB_RECLAIM_ACCOUNT | SLAB_PANIC | SLAB_NO_MERGE)) {
		mm_fail(err, errlen, "kmem_cache_create(%s): unknown flags %#x", name, flags);
		return NULL;
	}

	s = calloc(1, sizeof(*s));
	if (!s)
		goto oom;
	s->mm = mm;
	s->name = strdup(name);
	s->cpu_slab = aligned_alloc(L1_CACHE_BYTES, nr * sizeof(struct kmem_cache_cpu));
	s->last_tid = calloc(nr, sizeof(unsigned long));
	if (!s->name || !s->cpu_slab || !s->last_tid)
		goto oom;
	s->user_size = size;
	s->user_align = align;
	s->user_flags = flags;
	s->object_size = size;
	s->align = calculate_alignment(flags, align, size);
	s->ctor = ctor;
	s->refcount = 1;
	atomic_init(&s->nr_isolated, 0);
	init_kmem_cache_node(&s->node[0]);
	if (kmem_cache_setup_layout(s, err, errlen)) {
		__kmem_cache_release(s);
		return NULL;
	}
	if (s->random_seq)             /* made now, as kmem_cache_open() does: struct slub_random_seq */
		slub_cache_random_seq(s->random_seq);
	slub_cache_init_cpus(s);
	list_add_tail(&s->list, &st->caches);
	return s;
oom:
	mm_fail(err, errlen, "kmem_cache_create(%s): out of memory", name);
	if (s)
		__kmem_cache_release(s);
	return NULL;
}

void __kmem_cache_release(struct kmem_cache *s)
{
	for (unsigned int i = 0; i < SLUB_NR_LAYOUTS; i++)
		free(s->layouts[i].random_seq);          /* s->random_seq is one of them */
	free(s->last_tid);
	free(s->cpu_slab);
	free((void *)s->name);
	free(s);
}

struct kmem_cache *kmem_cache_create(struct mm *mm, const char *name, unsigned int size,
				     unsigned int align, slab_flags_t flags, void (*ctor)(void *))
{
	struct slub_state *st;
	struct kmem_cache *s;
	char err[160];

	if (!mm || !(st = slub_state(mm)))
		return NULL;
	mutex_lock(&st->slab_mutex);
	s = __kmem_cache_create(mm, name, size, align, flags, ctor, err, sizeof(err));
	mutex_unlock(&st->slab_mutex);
	if (!s) {
		if (flags & SLAB_PANIC) {
			fprintf(stderr, "mmfuzz: kmem_cache_create(%s) failed: %s\n", name ? name : "(null)", err);
			abort();
		}
		if (!mm->cfg.quiet)
			fprintf(stderr, "mmfuzz: %s\n", err);
	}
	return s;
}

/* Reapply options to a cache with no slab (mm_slub_configure). -EBUSY if it has slabs. */
int slub_cache_relayout(struct kmem_cache *s)
{
	char err[160];
	if (atomic_load(&s->node[0].nr_slabs))
		return -16;   /* EBUSY */
	/* The new options cannot work for this cache: it keeps the old layout. */
	return kmem_cache_setup_layout(s, err, sizeof(err)) ? -22 : 0;   /* EINVAL */
}

/*
 * Forget every remembered layout but the one in use, which moves to slot 0
 * with the clock at 1: the memo then reads as a newly created cache's
 * (one layout, used once) - for mm_slub_forget_layouts().  A model
 * structure with no kernel counterpart: the kernel computes a layout once,
 * at kmem_cache_open().  Under slab_mutex.
 */
void slub_cache_forget_layouts(struct kmem_cache *s)
{
	for (unsigned int i = 0; i < SLUB_NR_LAYOUTS; i++)
		if (i != s->layout) {
			free(s->layouts[i].random_seq);
			memset(&s->layouts[i], 0, sizeof(s->layouts[i]));
		}
	if (s->layout != 0) {
		memcpy(&s->layouts[0], &s->layouts[s->layout], sizeof(s->layouts[0]));
		memset(&s->layouts[s->layout], 0, sizeof(s->layouts[0]));
		s->layout = 0;
	}
	s->layout_clock = 1;
	s->layouts[0].used = 1;
	if (s->random_seq)             /* as at creation: made (what an input finds does not depend on the last one) */
		slub_cache_random_seq(s->random_seq);
}

/* ---------------------------------------------------------------- destroy */

/* The objects still allocated in every slab of @s (a memmap walk: full slabs are on no list). */
static unsigned long count_remaining(struct kmem_cache *s, unsigned long *nr_slabs)
{
	struct mm *mm = s->mm;
	unsigned long objects = 0;

	*nr_slabs = 0;
	for (unsigned long pfn = mm->first_pfn; pfn < mm->end_pfn; pfn++) {
		if (!__pfn_valid(mm, pfn))
			continue;
		struct page *p = __pfn_to_page(mm, pfn);
		if (PageSlab(p) && p->slab_cache == s) {
			(*nr_slabs)++;
			objects += slab_inuse(p);
		}
	}
	return objects;
}

/* free_partial(): discard the empty partial slabs, report the others. */
static void free_partial(struct kmem_cache *s, struct kmem_cache_node *n)
{
	struct list_head discard, *pos, *tmp;
	unsigned long flags;

	INIT_LIST_HEAD(&discard);
	spin_lock_irqsave(&n->list_lock, flags);
	list_for_each_safe(pos, tmp, &n->partial) {
		struct page *slab = list_entry(pos, struct page, slab_list);
		if (!slab_inuse(slab)) {
			remove_partial(n, slab);
			list_add(&slab->slab_list, &discard);
		} else {
			list_slab_objects(s, slab);
		}
	}
	spin_unlock_irqrestore(&n->list_lock, flags);

	list_for_each_safe(pos, tmp, &discard) {
		struct page *slab = list_entry(pos, struct page, slab_list);
		list_del(&slab->slab_list);
		discard_slab(s, slab);
	}
}

/* __kmem_cache_shutdown(): 0 if the cache is now empty. */
static int __kmem_cache_shutdown(struct kmem_cache *s)
{
	struct kmem_cache_node *n = get_node(s, 0);

	flush_all_cpus_locked(s, true);         /* destroy: nobody uses the cache any more */
	free_partial(s, n);
	if (node_nr_partial(n) || atomic_load(&n->nr_slabs))
		return 1;
	return 0;
}

/*
 * kmem_cache_destroy() (Linux 6.6): the last reference shuts the cache
 * down; leaks are reported in the kernel's words and the cache is kept,
 * so nothing is freed that clients still hold.  As in 6.6, cpus_read_lock()
 * and slab_mutex are held across the shutdown: no vCPU goes down meanwhile,
 * so its cpu slab is either flushed here or was flushed by slub_cpu_dead()
 * - never still waiting for it, which made a destroy racing an offline
 * report a leak that was not there.
 */
void kmem_cache_destroy(struct kmem_cache *s)
{
	struct slub_state *st;
	int err;

	if (!s)
		return;
	st = slub_state(s->mm);
	slub_quarantine_drain(s->mm, s);         /* kasan_cache_shutdown() */

	cpus_read_lock(s->mm);
	mutex_lock(&st->slab_mutex);
	if (!slub_is_cache(st, s) || s->refcount <= 0) {
		mutex_unlock(&st->slab_mutex);
		cpus_read_unlock(s->mm);
		mm_report(s->mm, "slub", ~0UL, 0, "kmem_cache_destroy: %p is not a live cache (destroyed twice?)",
			  (void *)s);
		return;
	}
	s->refcount--;
	if (s->refcount) {
		mutex_unlock(&st->slab_mutex);
		cpus_read_unlock(s->mm);
		return;
	}
	err = __kmem_cache_shutdown(s);
	if (err) {
		unsigned long nr_slabs, objects = count_remaining(s, &nr_slabs);
		mm_report(s->mm, "slub", ~0UL, 0,
			  "kmem_cache_destroy %s: Slab cache still has objects (%lu objects in %lu slabs)",
			  s->name, objects, nr_slabs);
		mutex_unlock(&st->slab_mutex);
		cpus_read_unlock(s->mm);
		return;
	}
	list_del(&s->list);
	for (int type = 0; type < NR_KMALLOC_TYPES; type++)
		for (int i = 0; i <= KMALLOC_SHIFT_HIGH; i++)
			if (st->kmalloc_caches[type][i] == s)
				st->kmalloc_caches[type][i] = NULL;
	mutex_unlock(&st->slab_mutex);
	cpus_read_unlock(s->mm);
	__kmem_cache_release(s);
}

/* ---------------------------------------------------------------- shrink */

#define SHRINK_PROMOTE_MAX 32

/*
 * __kmem_cache_do_shrink() (Linux 6.6): discard the empty partial slabs and
 * sort the rest, fullest first, so allocations fill them before the
 * emptier ones (which may then become free).
 */
static int __kmem_cache_do_shrink(struct kmem_cache *s)
{
	struct kmem_cache_node *n = get_node(s, 0);
	struct list_head discard, promote[SHRINK_PROMOTE_MAX], *pos, *tmp;
	unsigned long flags;

	INIT_LIST_HEAD(&discard);
	for (int i = 0; i < SHRINK_PROMOTE_MAX; i++)
		INIT_LIST_HEAD(&promote[i]);

	spin_lock_irqsave(&n->list_lock, flags);
	list_for_each_safe(pos, tmp, &n->partial) {
		struct page *slab = list_entry(pos, struct page, slab_list);
		union slab_ctr ctr = slab_ctr(slab);     /* inuse can only drop under us: an upper bound */
		int free = (int)ctr.c.objects - (int)ctr.c.inuse;

		BUG_ON(free <= 0);                        /* full slabs are never on the partial list */
		if (free == (int)ctr.c.objects) {
			list_del(&slab->slab_list);
			list_add(&slab->slab_list, &discard);
			__atomic_store_n(&n->nr_partial, n->nr_partial - 1, __ATOMIC_RELAXED);
			dec_slabs_node(s, ctr.c.objects);       /* under list_lock, as 6.6 */
		} else if (free <= SHRINK_PROMOTE_MAX) {
			list_del(&slab->slab_list);
			list_add(&slab->slab_list, &promote[free - 1]);
		}
	}
	for (int i = SHRINK_PROMOTE_MAX - 1; i >= 0; i--)
		list_splice_init(&promote[i], &n->partial);
	spin_unlock_irqrestore(&n->list_lock, flags);

	list_for_each_safe(pos, tmp, &discard) {
		struct page *slab = list_entry(pos, struct page, slab_list);
		list_del(&slab->slab_list);
		free_slab(s, slab);
	}
	return atomic_load(&n->nr_slabs) ? 1 : 0;
}

int kmem_cache_shrink(struct kmem_cache *s)
{
	if (!s)
		return 0;
	slub_quarantine_drain(s->mm, s);
	flush_all(s, false);
	return __kmem_cache_do_shrink(s);
}

/* ---------------------------------------------------------------- introspection */

const char *kmem_cache_name(const struct kmem_cache *s) { return s ? s->name : NULL; }
unsigned int kmem_cache_size(const struct kmem_cache *s) { return s ? s->object_size : 0; }
struct mm *kmem_cache_mm(const struct kmem_cache *s) { return s ? s->mm : NULL; }

struct kmem_cache *kmem_cache_next(struct mm *mm, struct kmem_cache *prev)
{
	struct slub_state *st = mm ? slub_state(mm) : NULL;
	struct list_head *next;

	if (!st)
		return NULL;
	mutex_lock(&st->slab_mutex);
	next = prev ? prev->list.next : st->caches.next;
	mutex_unlock(&st->slab_mutex);
	return next == &st->caches ? NULL : list_entry(next, struct kmem_cache, list);
}

unsigned long node_nr_partial(const struct kmem_cache_node *n)
{
	return __atomic_load_n(&n->nr_partial, __ATOMIC_RELAXED);
}

int kmem_cache_get_info(struct kmem_cache *s, struct kmem_cache_info *info)
{
	struct kmem_cache_node *n;

	if (!s || !info)
		return -22;
	n = get_node(s, 0);
	memset(info, 0, sizeof(*info));
	info->name = s->name;
	info->object_size = s->object_size;
	info->size = s->size;
	info->inuse = s->inuse;
	info->offset = s->offset;
	info->red_left_pad = s->red_left_pad;
	info->align = s->align;
	info->order = oo_order(s->oo);
	info->objects_per_slab = oo_objects(s->oo);
	info->min_partial = (unsigned int)s->min_partial;
	info->cpu_partial_slabs = s->cpu_partial_slabs;
	info->flags = s->flags & ~__OBJECT_POISON;
	info->nr_slabs = (unsigned long)atomic_load(&n->nr_slabs);
	info->nr_objects = (unsigned long)atomic_load(&n->total_objects);
	info->nr_partial = node_nr_partial(n);
#ifdef SLUB_COUNT_LIVE
	long live = 0;
	for (unsigned int cpu = 0; cpu < s->mm->cfg.nr_cpus; cpu++)
		live += __atomic_load_n(&slub_cpu(s, (int)cpu)->live, __ATOMIC_RELAXED);
	info->nr_live = live;
#else
	info->nr_live = -1;
#endif
	return 0;
}

static const char *const stat_names[NR_SLUB_STAT_ITEMS] = {
	"alloc_fastpath", "alloc_slowpath", "free_fastpath", "free_slowpath", "free_frozen",
	"free_add_partial", "free_remove_partial", "alloc_from_partial", "alloc_slab", "alloc_refill",
	"free_slab", "cpuslab_flush", "deactivate_full", "deactivate_empty", "deactivate_to_head",
	"deactivate_to_tail", "deactivate_remote_frees", "deactivate_bypass", "order_fallback",
	"cmpxchg_double_cpu_fail", "cmpxchg_double_fail", "cpu_partial_alloc", "cpu_partial_free",
	"cpu_partial_node", "cpu_partial_drain",
};

const char *slub_stat_name(enum slub_stat_item item)
{
	return (unsigned)item < NR_SLUB_STAT_ITEMS ? stat_names[item] : "?";
}

bool kmem_cache_get_stats(struct kmem_cache *s, unsigned long out[NR_SLUB_STAT_ITEMS])
{
	memset(out, 0, NR_SLUB_STAT_ITEMS * sizeof(out[0]));
#ifdef SLUB_STATS
	for (unsigned int cpu = 0; s && cpu < s->mm->cfg.nr_cpus; cpu++)
		for (int i = 0; i < NR_SLUB_STAT_ITEMS; i++)
			out[i] += __atomic_load_n(&slub_cpu(s, (int)cpu)->stat[i], __ATOMIC_RELAXED);
	return s != NULL;
#else
	(void)s;
	return false;
#endif
}

/* count_partial(n, count_free) of get_slabinfo(). */
static unsigned long count_partial_free(struct kmem_cache_node *n)
{
	unsigned long flags, x = 0;
	struct list_head *pos;

	spin_lock_irqsave(&n->list_lock, flags);
	list_for_each(pos, &n->partial) {
		struct page *slab = list_entry(pos, struct page, slab_list);
		union slab_ctr ctr = slab_ctr(slab);
		x += ctr.c.objects - ctr.c.inuse;
	}
	spin_unlock_irqrestore(&n->list_lock, flags);
	return x;
}

void mm_dump_slabinfo(struct mm *mm, FILE *f)
{
	fprintf(f, "slabinfo - version: 2.1\n");
	fprintf(f, "# name            <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab>"
		   " : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs>"
		   " <sharedavail>\n");
	for (struct kmem_cache *s = kmem_cache_next(mm, NULL); s; s = kmem_cache_next(mm, s)) {
		struct kmem_cache_node *n = get_node(s, 0);
		unsigned long nr_objs = (unsigned long)atomic_load(&n->total_objects);
		unsigned long nr_slabs = (unsigned long)atomic_load(&n->nr_slabs);
		unsigned long nr_free = count_partial_free(n);
		fprintf(f, "%-17s %6lu %6lu %6u %4u %4d : tunables %4u %4u %4u : slabdata %6lu %6lu %6lu\n",
			s->name, nr_objs - nr_free, nr_objs, s->size, oo_objects(s->oo), 1 << oo_order(s->oo),
			0U, 0U, 0U, nr_slabs, nr_slabs, 0UL);
	}
}

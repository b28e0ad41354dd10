/* SPDX-License-Identifier: MIT */
/*
 * shadow.c - the client's view of its memory (invariant C1), checked by
 * each thread on its own allocations without stopping the others, and
 * globally at stop-the-world.
 *
 * Per allocation:
 *   - inside the arena, aligned as promised (pages: the pfn aligned to the
 *     order, as the buddy allocator hands out blocks; objects: the cache's
 *     alignment; kmalloc of a power of two: natural alignment, the kernel's
 *     guarantee since 5.4), in a zone the gfp allows, within one zone;
 *   - disjoint from every live allocation of every thread: two global
 *     bitmaps (one bit per pfn for page blocks, one per 8-byte granule for
 *     objects) are set with fetch_or on allocation and cleared with
 *     fetch_and before the free, so the second owner of a block sees the
 *     first owner's bits at once;
 *   - contents: a pattern that is a function of (tag, offset), written
 *     after allocation and verified at the free, by whoever frees it
 *     (remote frees carry the tag), and on random re-reads: a block handed
 *     out twice, or written after its free, shows as a foreign byte.
 *     Check level 1 writes samples (the first 16 and last 8 bytes, the
 *     first word of every page); level 2 and up every byte.
 *
 * Bits are cleared *before* the allocator's free and set *after* its
 * allocation: the allocator's own ordering (its locks and cmpxchgs) then
 * orders one owner's clear before the next owner's set.
 */
#include <stdlib.h>
#include <string.h>

#include "stress.h"

#define GRAN 8

static unsigned long order_pages(unsigned int order) { return 1UL << order; }

unsigned int shadow_size_order(size_t size)
{
	unsigned int o = 0;
	while ((MM_PAGE_SIZE << o) < size)
		o++;
	return o;
}

bool shadow_full(void)
{
	return S.cfg.check_level >= 2;
}

/* A page-granular allocation: pages and large kmalloc (see kmalloc_large_fix()). */
static bool is_pages(const struct alloc *a, unsigned long *pfn, unsigned long *nr)
{
	if (a->kind == AK_PAGE) {
		*pfn = page_to_pfn(S.mm, a->page);
		*nr = order_pages(a->order);
		return true;
	}
	if (a->kind == AK_KMALLOC && a->pad) {      /* large: compound pages of a->order */
		*pfn = S.first_pfn + (((uintptr_t)a->p - S.arena) >> MM_PAGE_SHIFT);
		*nr = order_pages(a->order);
		return true;
	}
	return false;
}

int shadow_setup(void)
{
	S.arena = (uintptr_t)mm_arena_base(S.mm);
	S.arena_size = mm_arena_size(S.mm);
	S.first_pfn = mm_first_pfn(S.mm);
	S.end_pfn = mm_end_pfn(S.mm);
	size_t npfn = S.end_pfn - S.first_pfn, ngran = S.arena_size / GRAN;
	S.pfn_map = calloc((npfn + 63) / 64, sizeof(atomic_ulong));
	S.gran_map = calloc((ngran + 63) / 64, sizeof(atomic_ulong));
	return S.pfn_map && S.gran_map ? 0 : -1;
}

void shadow_teardown(void)
{
	free(S.pfn_map);
	free(S.gran_map);
	S.pfn_map = S.gran_map = NULL;
}

int shadow_zone_of(unsigned long pfn)
{
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (pfn >= S.mcfg.zones[z].start_pfn && pfn < S.mcfg.zones[z].end_pfn)
			return z;
	return -1;
}

/* ---------------------------------------------------------------- bitmaps */

static unsigned long word_mask(unsigned long from, unsigned long to)   /* bits [from, to) of one word */
{
	unsigned long hi = to - from == 64 ? ~0UL : ((1UL << (to - from)) - 1);
	return hi << from;
}

/* Set bits [start, start + n); on a bit already set, roll back and return false. */
static bool bits_take(atomic_ulong *map, unsigned long start, unsigned long n, unsigned long *clash)
{
	unsigned long end = start + n, i = start;
	while (i < end) {
		unsigned long w = i / 64, lo = i % 64, hi = MIN_UL(64, end - w * 64);
		unsigned long m = word_mask(lo, hi);
		unsigned long old = atomic_fetch_or_explicit(&map[w], m, memory_order_relaxed);
		if (old & m) {
			atomic_fetch_and_explicit(&map[w], ~(m & ~old), memory_order_relaxed);
			*clash = w * 64 + (unsigned long)__builtin_ctzl(old & m);
			for (unsigned long j = start; j < i;) {   /* the words before were all ours */
				unsigned long wj = j / 64, lj = j % 64, hj = MIN_UL(64, end - wj * 64);
				atomic_fetch_and_explicit(&map[wj], ~word_mask(lj, hj), memory_order_relaxed);
				j = (wj + 1) * 64;
			}
			return false;
		}
		i = (w + 1) * 64;
	}
	return true;
}

/* Clear bits [start, start + n); false if any was not set. */
static bool bits_give(atomic_ulong *map, unsigned long start, unsigned long n)
{
	unsigned long end = start + n, i = start;
	bool ok = true;
	while (i < end) {
		unsigned long w = i / 64, lo = i % 64, hi = MIN_UL(64, end - w * 64);
		unsigned long m = word_mask(lo, hi);
		unsigned long old = atomic_fetch_and_explicit(&map[w], ~m, memory_order_relaxed);
		ok &= (old & m) == m;
		i = (w + 1) * 64;
	}
	return ok;
}

static bool bits_all_set(atomic_ulong *map, unsigned long start, unsigned long n)
{
	for (unsigned long i = start; i < start + n; i++)
		if (!(atomic_load_explicit(&map[i / 64], memory_order_relaxed) & (1UL << (i % 64))))
			return false;
	return true;
}

static void mark_range(const struct alloc *a, atomic_ulong **map, unsigned long *start, unsigned long *n)
{
	unsigned long pfn, nr;
	if (is_pages(a, &pfn, &nr)) {
		*map = S.pfn_map;
		*start = pfn - S.first_pfn;
		*n = nr;
	} else {
		uintptr_t off = (uintptr_t)a->p - S.arena;
		*map = S.gran_map;
		*start = off / GRAN;
		*n = (off + (a->size ? a->size : 1) + GRAN - 1) / GRAN - *start;
	}
}

/* ---------------------------------------------------------------- patterns */

static inline uint64_t pat_word(uint64_t tag, size_t off)
{
	return tag ^ ((off >> 3) + 1) * 0x9E3779B97F4A7C15ULL;
}

static inline uint8_t pat_byte(uint64_t tag, size_t off)
{
	return (uint8_t)(pat_word(tag, off) >> ((off & 7) * 8));
}

static void fill_range(unsigned char *p, uint64_t tag, size_t from, size_t to)
{
	size_t i = from;
	for (; i < to && (i & 7); i++)
		p[i] = pat_byte(tag, i);
	for (; i + 8 <= to; i += 8) {
		uint64_t v = pat_word(tag, i);
		memcpy(p + i, &v, 8);
	}
	for (; i < to; i++)
		p[i] = pat_byte(tag, i);
}

/* First offset in [from, to) that differs from the pattern (or from zero), or to. */
static size_t diff_range(const unsigned char *p, uint64_t tag, size_t from, size_t to, bool zero)
{
	size_t i = from;
	for (; i < to && (i & 7); i++)
		if (p[i] != (zero ? 0 : pat_byte(tag, i)))
			return i;
	for (; i + 8 <= to; i += 8) {
		uint64_t v;
		memcpy(&v, p + i, 8);
		if (v != (zero ? 0 : pat_word(tag, i)))
			break;
	}
	for (; i < to; i++)
		if (p[i] != (zero ? 0 : pat_byte(tag, i)))
			return i;
	return to;
}

/* The sampled ranges of an allocation: [0,16), the last 8 bytes, the first word of each page. */
#define FOR_EACH_RANGE(a, full, from, to, body)                                              \
	do {                                                                                 \
		size_t sz_ = (a)->size;                                                      \
		if (full) {                                                                  \
			size_t from = 0, to = sz_;                                           \
			body;                                                                \
		} else {                                                                     \
			{ size_t from = 0, to = sz_ < 16 ? sz_ : 16; body; }                 \
			{ size_t from = sz_ > 8 ? sz_ - 8 : 0, to = sz_; body; }             \
			for (size_t pg_ = MM_PAGE_SIZE; pg_ + 8 <= sz_; pg_ += MM_PAGE_SIZE) { \
				size_t from = pg_, to = pg_ + 8;                             \
				body;                                                        \
			}                                                                    \
		}                                                                            \
	} while (0)

void shadow_stamp(const struct alloc *a, bool full)
{
	FOR_EACH_RANGE(a, full, from, to, fill_range(a->p, a->tag, from, to));
}

static const char *kind_name(const struct alloc *a)
{
	switch (a->kind) {
	case AK_PAGE: return "pages";
	case AK_OBJ: return kmem_cache_name(S.caches[a->cache]);
	case AK_KMALLOC: return "kmalloc";
	default: return "?";
	}
}

static void describe(char *buf, size_t len, const struct alloc *a)
{
	if (a->kind == AK_PAGE)
		snprintf(buf, len, "pages pfn %#lx order %u (%p)", page_to_pfn(S.mm, a->page), a->order, a->p);
	else
		snprintf(buf, len, "%s object %p size %u", kind_name(a), a->p, a->size);
}

bool shadow_check_range(struct worker *w, const struct alloc *a, size_t from, size_t to, const char *what)
{
	size_t bad = diff_range(a->p, a->tag, from, to, false);
	if (bad == to)
		return true;
	char d[160];
	describe(d, sizeof(d), a);
	stress_fail(w, "C1 violated: %s: byte %zu is %#x, the pattern says %#x (%s): written by "
		    "someone else while allocated - handed out twice, or used after a free",
		    d, bad, ((unsigned char *)a->p)[bad], pat_byte(a->tag, bad), what);
	return false;
}

bool shadow_verify(struct worker *w, const struct alloc *a, bool full)
{
	bool ok = true;
	FOR_EACH_RANGE(a, full, from, to, if (ok) ok = shadow_check_range(w, a, from, to, "re-read"));
	return ok;
}

/* ---------------------------------------------------------------- take / give */

bool shadow_take(struct worker *w, struct alloc *a, bool zeroed, unsigned long align, int max_zone)
{
	char d[160];
	uintptr_t p = (uintptr_t)a->p;

	if (p < S.arena || p + a->size > S.arena + S.arena_size || p + a->size < p) {
		describe(d, sizeof(d), a);
		stress_fail(w, "C1 violated: %s is outside the arena [%#lx, %#lx)", d, (unsigned long)S.arena,
			    (unsigned long)(S.arena + S.arena_size));
		return false;
	}
	if (align && (p & (align - 1))) {
		describe(d, sizeof(d), a);
		stress_fail(w, "C1 violated: %s is not aligned to %lu bytes", d, align);
		return false;
	}
	unsigned long pfn, nr;
	if (is_pages(a, &pfn, &nr)) {
		if (a->kind == AK_PAGE && page_address(S.mm, a->page) != a->p) {
			stress_fail(w, "C1 violated: page_address(pfn %#lx) is %p, the allocator returned %p",
				    pfn, page_address(S.mm, a->page), a->p);
			return false;
		}
		int z0 = shadow_zone_of(pfn), z1 = shadow_zone_of(pfn + nr - 1);
		if (a->kind == AK_PAGE && (pfn & (nr - 1))) {
			describe(d, sizeof(d), a);
			stress_fail(w, "C1 violated: %s: pfn not aligned to its order", d);
			return false;
		}
		if (z0 < 0 || z0 != z1 || z0 > max_zone) {
			describe(d, sizeof(d), a);
			stress_fail(w, "C1 violated: %s spans zones %d..%d; the gfp allows zones up to %d",
				    d, z0, z1, max_zone);
			return false;
		}
	}
	atomic_ulong *map;
	unsigned long start, n, clash;
	mark_range(a, &map, &start, &n);
	if (!bits_take(map, start, n, &clash)) {
		describe(d, sizeof(d), a);
		if (map == S.pfn_map)
			stress_fail(w, "C1 violated: %s handed out while pfn %#lx is still allocated to a client "
				    "(double allocation)", d, S.first_pfn + clash);
		else
			stress_fail(w, "C1 violated: %s handed out while byte %#lx of the arena is still allocated "
				    "to a client (double allocation / overlap)", d, clash * GRAN);
		return false;
	}
	if (zeroed) {
		bool ok = true;
		FOR_EACH_RANGE(a, shadow_full(), from, to, {
			size_t bad = ok ? diff_range(a->p, 0, from, to, true) : to;
			if (bad != to) {
				describe(d, sizeof(d), a);
				stress_fail(w, "C1 violated: %s was asked zeroed, byte %zu is %#x", d, bad,
					    ((unsigned char *)a->p)[bad]);
				ok = false;
			}
		});
		if (!ok)
			return false;
	}
	shadow_stamp(a, shadow_full());
	return true;
}

bool shadow_give(struct worker *w, const struct alloc *a)
{
	if (!shadow_verify(w, a, shadow_full()))
		return false;
	atomic_ulong *map;
	unsigned long start, n;
	mark_range(a, &map, &start, &n);
	if (!bits_give(map, start, n)) {
		char d[160];
		describe(d, sizeof(d), a);
		stress_fail(w, "C1 violated: %s was not marked allocated when freed (its bits were cleared "
			    "by another owner)", d);
		return false;
	}
	return true;
}

void alloc_free_raw(const struct alloc *a)
{
	switch (a->kind) {
	case AK_PAGE:
		if (a->pad)             /* from __get_free_pages / get_zeroed_page: freed by address */
			free_pages(S.mm, (unsigned long)a->p, a->order);
		else
			__free_pages(S.mm, a->page, a->order);
		break;
	case AK_OBJ:
		kmem_cache_free(S.caches[a->cache], a->p);
		break;
	case AK_KMALLOC:
		kfree(S.mm, a->p);
		break;
	}
}

/* ---------------------------------------------------------------- everything held */

void shadow_for_each_held(void (*fn)(const struct alloc *a, void *ctx), void *ctx)
{
	for (int i = 0; i < S.cfg.threads; i++) {
		struct worker *w = &S.w[i];
		for (int j = 0; j < w->nlive; j++)
			if (w->live[j].kind != AK_NONE)
				fn(&w->live[j], ctx);
		struct ring *r = &S.rings[i];
		unsigned t = atomic_load_explicit(&r->tail, memory_order_acquire);
		unsigned h = atomic_load_explicit(&r->head, memory_order_acquire);
		for (; t != h; t++)
			fn(&r->slot[t % STRESS_RING], ctx);
	}
	for (int c = 0; c < S.cfg.cpus; c++)
		for (int j = 0; j < STRESS_IRQ_POOL; j++)
			if (S.pools[c].a[j].kind != AK_NONE)
				fn(&S.pools[c].a[j], ctx);
	pressure_for_each(fn, ctx);
}

struct walk_ctx {
	mm_mark_fn mark;
	void *w;
};

static void walk_one(const struct alloc *a, void *ctx)
{
	struct walk_ctx *c = ctx;
	unsigned long pfn, nr;
	if (is_pages(a, &pfn, &nr))
		c->mark(c->w, pfn, nr);
}

/* B4: the pages clients hold, for mm_check level 3 (run at stop-the-world only). */
void shadow_client_walk(void *ctx, mm_mark_fn mark, void *wk)
{
	(void)ctx;
	struct walk_ctx c = { mark, wk };
	shadow_for_each_held(walk_one, &c);
}

struct span {
	uintptr_t start, end;
	const struct alloc *a;
};
struct collect {
	struct span *v;
	size_t n, cap;
	bool oom;
};

static void collect_one(const struct alloc *a, void *ctx)
{
	struct collect *c = ctx;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 1024;
		struct span *v = realloc(c->v, cap * sizeof(*v));
		if (!v) {
			c->oom = true;
			return;
		}
		c->v = v;
		c->cap = cap;
	}
	unsigned long pfn, nr;
	uintptr_t start = (uintptr_t)a->p, end = start + (a->size ? a->size : 1);
	if (is_pages(a, &pfn, &nr))
		end = start + nr * MM_PAGE_SIZE;
	c->v[c->n++] = (struct span){ start, end, a };
}

static int span_cmp(const void *x, const void *y)
{
	const struct span *a = x, *b = y;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* Stop-the-world: all held allocations disjoint, marked, and intact. */
bool shadow_global_check(void)
{
	struct collect c = { 0 };
	bool ok = true;
	char d1[160], d2[160];

	shadow_for_each_held(collect_one, &c);
	if (c.oom) {
		free(c.v);
		return true;
	}
	qsort(c.v, c.n, sizeof(*c.v), span_cmp);
	for (size_t i = 0; ok && i < c.n; i++) {
		const struct alloc *a = c.v[i].a;
		if (i && c.v[i].start < c.v[i - 1].end) {
			describe(d1, sizeof(d1), c.v[i - 1].a);
			describe(d2, sizeof(d2), a);
			stress_fail(NULL, "C1 violated at stop-the-world: %s and %s overlap", d1, d2);
			ok = false;
			break;
		}
		atomic_ulong *map;
		unsigned long start, n;
		mark_range(a, &map, &start, &n);
		if (!bits_all_set(map, start, n)) {
			describe(d1, sizeof(d1), a);
			stress_fail(NULL, "C1 violated at stop-the-world: %s is held but not marked", d1);
			ok = false;
			break;
		}
		ok = shadow_verify(NULL, a, shadow_full());
	}
	free(c.v);
	return ok;
}

/* SPDX-License-Identifier: MIT */
/*
 * shadow.c - the shadow model of what the fuzz target holds: an interval
 * array for the C1 ownership checks, id-derived content patterns, and the
 * client walker behind the checker's B4 count.  See shadow.h.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "shadow.h"

#define MIN(a, b) ((a) < (b) ? (a) : (b))

uint64_t mf_pattern_word(uint32_t id, uint32_t gen, size_t off)
{
	return MF_PATTERN_EXPR(id, gen, off);
}

void mf_shadow_reset(struct mf_shadow *sh, uintptr_t lo, uintptr_t hi)
{
	sh->nlive = 0;
	sh->root = NULL;
	sh->next_id = 1;
	sh->lo = lo;
	sh->hi = hi;
	sh->nfree = MF_MAX_LIVE;
	for (unsigned int i = 0; i < MF_MAX_LIVE; i++)
		sh->free_slots[i] = MF_MAX_LIVE - 1 - i;
	sh->full_fill_max = mf_env_ulong("MMFUZZ_FILL_FULL", 0) ? ~(size_t)0 : MF_FULL_FILL_MAX;
}

/* ------------------------------------------------------------ patterns */

/*
 * Visit the words of the pattern: every word of a small allocation, three
 * per 4 KiB chunk of a large one.  @fn returns false to stop.  Inlined into
 * its two callers, so that @fn is a direct call and the pattern's
 * per-allocation half is computed once (this loop was a sixth of the buddy
 * target's CPU time as an indirect call per word).
 */
#define MF_ALWAYS_INLINE inline __attribute__((always_inline))
static MF_ALWAYS_INLINE bool for_each_word(const struct mf_shadow *sh, const struct mf_alloc *a,
			  bool (*fn)(const struct mf_alloc *a, size_t off, void *arg), void *arg)
{
	size_t words = a->len / 8;

	if (a->len <= sh->full_fill_max) {
		for (size_t w = 0; w < words; w++)
			if (!fn(a, w * 8, arg))
				return false;
		return true;
	}
	if (words && !fn(a, (words / 2) * 8, arg))
		return false;
	for (size_t chunk = 0; chunk < a->len; chunk += 4096) {
		size_t n = MIN((size_t)4096, a->len - chunk) / 8;
		if (!n)
			break;
		size_t mid = (size_t)((a->id * 2654435761u + chunk / 4096) % n);
		size_t offs[3] = { 0, mid, n - 1 };
		for (int k = 0; k < 3; k++)
			if ((k == 0 || offs[k] != offs[k - 1]) && !fn(a, chunk + offs[k] * 8, arg))
				return false;
	}
	return true;
}

static MF_ALWAYS_INLINE bool write_word(const struct mf_alloc *a, size_t off, void *arg)
{
	(void)arg;
	uint64_t v = mf_pattern_word(a->id, a->gen, off);
	memcpy((char *)a->addr + off, &v, 8);
	return true;
}

struct bad_word {
	size_t off;
	uint64_t want, got;
};

static MF_ALWAYS_INLINE bool check_word(const struct mf_alloc *a, size_t off, void *arg)
{
	uint64_t v, want = mf_pattern_word(a->id, a->gen, off);
	memcpy(&v, (const char *)a->addr + off, 8);
	if (v == want)
		return true;
	struct bad_word *b = arg;
	b->off = off;
	b->want = want;
	b->got = v;
	return false;
}

/* The bytes past the last whole word: the low bytes of the next pattern word. */
static void tail_expect(const struct mf_alloc *a, uint8_t out[8])
{
	uint64_t v = mf_pattern_word(a->id, a->gen, a->len & ~(size_t)7);
	memcpy(out, &v, 8);
}

static void fill(const struct mf_shadow *sh, struct mf_alloc *a)
{
	uint8_t tail[8];
	for_each_word(sh, a, write_word, NULL);
	tail_expect(a, tail);
	memcpy((char *)a->addr + (a->len & ~(size_t)7), tail, a->len & 7);
}

void mf_shadow_verify(struct mf_ctx *c, const struct mf_alloc *a)
{
	struct bad_word b;
	uint8_t tail[8];

	if (!for_each_word(c->sh, a, check_word, &b))
		mf_fail(c, "C1", "contents of allocation a%u [arena+%#lx, +%#zx) changed while it was live: "
			"word at +%#zx is %#018llx, its pattern is %#018llx",
			a->id, (unsigned long)(a->addr - c->sh->lo), a->len, b.off,
			(unsigned long long)b.got, (unsigned long long)b.want);
	tail_expect(a, tail);
	if (memcmp((const char *)a->addr + (a->len & ~(size_t)7), tail, a->len & 7))
		mf_fail(c, "C1", "contents of allocation a%u (%zu bytes) changed in its last %zu bytes",
			a->id, a->len, a->len & 7);
}

/* Is p[from, to) all zero?  Else *bad is the offset of its first non-zero byte. */
static bool zero_span(const uint8_t *p, size_t from, size_t to, size_t *bad)
{
	size_t i = from;
	uint64_t acc = 0, w;

	for (; i + 64 <= to; i += 64) {
		for (int k = 0; k < 8; k++) {
			memcpy(&w, p + i + 8 * k, 8);
			acc |= w;
		}
		if (acc)
			break;
	}
	for (; i < to; i++)
		if (p[i]) {
			*bad = i;
			return false;
		}
	return true;
}

/*
 * A zeroed allocation must read as zero.  Up to full_fill_max bytes every
 * byte is read; a larger one at the places a previous owner's contents
 * would show: the first and last 64 bytes of every 4 KiB page (every
 * pattern writes the first and last word of each page) and the 64 bytes
 * around its middle (SLUB's free pointer of a large object).  Reading all
 * of a 4 MiB block after every __GFP_ZERO allocation cost more than the
 * rest of the input; MMFUZZ_FILL_FULL=1 reads every byte again.
 */
static void check_zero(struct mf_ctx *c, const void *addr, size_t len)
{
	const uint8_t *p = addr;
	size_t bad = 0;
	bool ok;

	if (len <= c->sh->full_fill_max) {
		ok = zero_span(p, 0, len, &bad);
	} else {
		size_t mid = len / 2 - 32;
		ok = zero_span(p, mid, mid + 64, &bad);
		for (size_t chunk = 0; ok && chunk < len; chunk += 4096) {
			size_t end = MIN(len, chunk + 4096), n = MIN((size_t)64, end - chunk);
			ok = zero_span(p, chunk, chunk + n, &bad) && zero_span(p, end - n, end, &bad);
		}
	}
	if (ok)
		return;
	mf_fail(c, "C1", "__GFP_ZERO / zeroing allocation [arena+%#lx, +%#zx) is not zero: byte +%#zx is %#x",
		(unsigned long)((uintptr_t)addr - c->sh->lo), len, bad, p[bad]);
}

/* ------------------------------------------------------------ the intervals */

/*
 * The treap: a binary search tree by addr (live allocations never overlap,
 * so addresses are distinct) that is a max-heap by prio.  Priorities hash
 * the id, so the shape - and the work - is the same on every run of an
 * input.
 */
static uint32_t treap_prio(uint32_t id)
{
	uint32_t x = id * 0x9e3779b1u;
	x ^= x >> 15;
	x *= 0x85ebca77u;
	return x ^ (x >> 13);
}

static struct mf_alloc *treap_insert(struct mf_alloc *t, struct mf_alloc *n)
{
	if (!t)
		return n;
	if (n->addr < t->addr) {
		t->tl = treap_insert(t->tl, n);
		if (t->tl->prio > t->prio) {           /* rotate right */
			struct mf_alloc *l = t->tl;
			t->tl = l->tr;
			l->tr = t;
			return l;
		}
	} else {
		t->tr = treap_insert(t->tr, n);
		if (t->tr->prio > t->prio) {           /* rotate left */
			struct mf_alloc *r = t->tr;
			t->tr = r->tl;
			r->tl = t;
			return r;
		}
	}
	return t;
}

/* Join two treaps, every address of @a below every one of @b. */
static struct mf_alloc *treap_join(struct mf_alloc *a, struct mf_alloc *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (a->prio > b->prio) {
		a->tr = treap_join(a->tr, b);
		return a;
	}
	b->tl = treap_join(a, b->tl);
	return b;
}

/* Remove @n; false if it is not in the treap. */
static bool treap_remove(struct mf_alloc **link, struct mf_alloc *n)
{
	while (*link && *link != n)
		link = n->addr < (*link)->addr ? &(*link)->tl : &(*link)->tr;
	if (!*link)
		return false;
	*link = treap_join(n->tl, n->tr);
	n->tl = n->tr = NULL;
	return true;
}

/* The live allocation with the highest address < @addr (NULL: none). */
static struct mf_alloc *treap_below(const struct mf_shadow *sh, uintptr_t addr)
{
	struct mf_alloc *t = sh->root, *best = NULL;
	while (t) {
		if (t->addr < addr) {
			best = t;
			t = t->tr;
		} else {
			t = t->tl;
		}
	}
	return best;
}

/* The live allocation with the lowest address >= @addr (NULL: none). */
static struct mf_alloc *treap_from(const struct mf_shadow *sh, uintptr_t addr)
{
	struct mf_alloc *t = sh->root, *best = NULL;
	while (t) {
		if (t->addr >= addr) {
			best = t;
			t = t->tl;
		} else {
			t = t->tr;
		}
	}
	return best;
}

static void fail_overlap(struct mf_ctx *c, uintptr_t addr, size_t len, const struct mf_alloc *o)
{
	const struct mf_shadow *sh = c->sh;
	mf_fail(c, "C1", "new allocation a%u [arena+%#lx, +%#zx) overlaps live allocation a%u "
		"[arena+%#lx, +%#zx) (pfn %#lx, %lu pages)",
		sh->next_id, (unsigned long)(addr - sh->lo), len, o->id, (unsigned long)(o->addr - sh->lo),
		o->len, o->pfn, o->nr_pages);
}

struct mf_alloc *mf_shadow_add(struct mf_ctx *c, unsigned int kind, const void *addr, size_t len,
			       size_t align, bool zeroed)
{
	struct mf_shadow *sh = c->sh;
	uintptr_t a = (uintptr_t)addr;

	if (!len)
		mf_fail(c, "C1", "zero-length allocation added to the shadow (harness bug)");
	if (a < sh->lo || a >= sh->hi || len > sh->hi - a)
		mf_fail(c, "C1", "allocation [%p, +%#zx) is not inside the arena [%p, %p)",
			addr, len, (void *)sh->lo, (void *)sh->hi);
	if (align && a % align)
		mf_fail(c, "C1", "allocation at %p (arena+%#lx) is not aligned to %#zx as promised",
			addr, (unsigned long)(a - sh->lo), align);
	struct mf_alloc *next = treap_from(sh, a), *prev = treap_below(sh, a);
	if (next && next->addr < a + len)
		fail_overlap(c, a, len, next);
	if (prev && prev->addr + prev->len > a)
		fail_overlap(c, a, len, prev);
	if (zeroed)
		check_zero(c, addr, len);
	if (!sh->nfree)
		mf_fail(c, "C1", "shadow full (harness bug: check mf_shadow_full first)");

	struct mf_alloc *e = &sh->pool[sh->free_slots[--sh->nfree]];
	memset(e, 0, sizeof(*e));
	e->id = sh->next_id++;
	e->kind = (uint16_t)kind;
	e->flags = zeroed ? MF_AF_ZERO : 0;
	e->addr = a;
	e->len = len;
	e->slot = sh->nlive;
	e->prio = treap_prio(e->id);
	sh->live[sh->nlive] = e;
	sh->root = treap_insert(sh->root, e);
	sh->nlive++;
	fill(sh, e);
	return e;
}

void mf_shadow_remove(struct mf_ctx *c, struct mf_alloc *a)
{
	struct mf_shadow *sh = c->sh;

	mf_shadow_verify(c, a);
	if (a->slot >= sh->nlive || sh->live[a->slot] != a || !treap_remove(&sh->root, a))
		mf_fail(c, "C1", "allocation a%u is not in the shadow (harness bug)", a->id);
	/* live[]: move the last one into the hole. */
	struct mf_alloc *last = sh->live[sh->nlive - 1];
	sh->live[a->slot] = last;
	last->slot = a->slot;
	sh->nlive--;
	sh->free_slots[sh->nfree++] = (uint32_t)(a - sh->pool);
	a->id = 0;
}

/* The client writes its allocation: a new pattern on every word checked, every page touched (ASan sees each). */
void mf_shadow_touch(struct mf_ctx *c, struct mf_alloc *a)
{
	mf_shadow_verify(c, a);
	a->gen++;
	fill(c->sh, a);
}

struct mf_alloc *mf_shadow_pick(struct mf_shadow *sh, unsigned long idx)
{
	return sh->nlive ? sh->live[idx % sh->nlive] : NULL;
}

struct mf_alloc *mf_shadow_pick_kind(struct mf_shadow *sh, unsigned long idx, unsigned int kinds)
{
	for (unsigned int k = 0; k < sh->nlive; k++) {
		struct mf_alloc *a = sh->live[(idx + k) % sh->nlive];
		if ((1u << a->kind) & kinds)
			return a;
	}
	return NULL;
}

struct mf_alloc *mf_shadow_find(struct mf_shadow *sh, uintptr_t addr)
{
	struct mf_alloc *a = treap_below(sh, addr + 1);
	return a && addr < a->addr + a->len ? a : NULL;
}

void mf_shadow_walk(void *arg, mm_mark_fn mark, void *w)
{
	struct mf_shadow *sh = arg;
	for (unsigned int i = 0; i < sh->nlive; i++)
		if (sh->live[i]->nr_pages)
			mark(w, sh->live[i]->pfn, sh->live[i]->nr_pages);
}

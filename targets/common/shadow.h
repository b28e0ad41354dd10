/* SPDX-License-Identifier: MIT */
/*
 * shadow.h - the shadow model: what the client (the fuzz target) holds.
 *
 * Every live allocation - a page range now, an object later - is one
 * struct mf_alloc, kept in two arrays: `live` (dense, in no particular
 * order: ops pick from it by index modulo the count) and a treap keyed by
 * address (`root`: the interval structure that finds overlaps, O(log n) to
 * insert and remove - a sorted array paid a memmove of up to 1024 pointers
 * per allocation, a fifth of the sched target's CPU under ASan, whose
 * memmove copies byte by byte).
 *
 * Invariant C1 (client view), checked here:
 *   on add     the range is inside the arena, aligned as promised, and
 *              disjoint from every live allocation;
 *   always     its contents are the pattern derived from its id and
 *              generation, from the moment it is added until it is removed
 *              (checked on free, on touch and at teardown).
 * Patterns: allocations up to MF_FULL_FILL_MAX bytes (most slab objects;
 * every allocation with MMFUZZ_FILL_FULL=1) are filled word by word; larger ones get
 * three words per 4 KiB page (first, last and one chosen by the id) and the
 * word at the middle of the allocation (where SLUB keeps its free pointer),
 * enough to see another allocation, a free pointer or a stray memset land on
 * them without paying for writing every byte on every op.  A zeroed
 * allocation is read in full up to the same size; a larger one at the first
 * and last 64 bytes of each page and the 64 around its middle, where any
 * earlier pattern left non-zero words.
 *
 * The shadow also feeds the checker's conservation count (B4): every live
 * allocation with nr_pages != 0 is reported through mm_set_client_walker().
 */
#ifndef MF_SHADOW_H
#define MF_SHADOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mm/mm.h"

#define MF_MAX_LIVE       1024         /* live allocations per input; ops stop allocating beyond */
#define MF_FULL_FILL_MAX  512          /* bytes: full pattern up to this size */

struct mf_ctx;

enum {
	MF_AF_ZERO = 1,         /* came back zeroed (checked when added) */
};

struct mf_alloc {
	uint32_t id;            /* 1, 2, ... within one input: names the pattern */
	uint16_t kind;          /* the target's kind (pages, cached pages, object ...) */
	uint16_t flags;         /* MF_AF_* */
	uint32_t gen;           /* pattern generation, bumped by mf_shadow_touch() */
	uint32_t slot;          /* index in live[] */
	uintptr_t addr;         /* first byte */
	size_t len;             /* bytes */
	unsigned long pfn;      /* first pfn (page allocations) */
	unsigned long nr_pages; /* pages held, for B4; 0: not a page allocation */
	unsigned int order;     /* page order, or the target's size class */
	unsigned long aux;      /* the target's: gfp ... */
	void *handle;           /* the target's: struct page * ... */
	struct mf_alloc *tl, *tr;   /* shadow.c's treap: lower and higher addresses */
	uint32_t prio;              /* its heap priority, a hash of the id */
};

struct mf_shadow {
	struct mf_alloc pool[MF_MAX_LIVE];
	uint32_t free_slots[MF_MAX_LIVE];   /* stack of unused pool entries */
	unsigned int nfree;
	struct mf_alloc *live[MF_MAX_LIVE];
	struct mf_alloc *root;              /* the treap of live allocations by address */
	unsigned int nlive;
	uint32_t next_id;
	uintptr_t lo, hi;                   /* the arena: [lo, hi) */
	size_t full_fill_max;
};

/* Start an input: empty, ids from 1, allocations must lie in [lo, hi). */
void mf_shadow_reset(struct mf_shadow *sh, uintptr_t lo, uintptr_t hi);
static inline bool mf_shadow_full(const struct mf_shadow *sh) { return sh->nlive >= MF_MAX_LIVE; }
static inline unsigned int mf_shadow_count(const struct mf_shadow *sh) { return sh->nlive; }

/*
 * Add an allocation after checking C1 (arena, alignment, overlap) and, with
 * @zeroed, that its contents are zero; then fill it with its pattern.
 * Fails the input (mf_fail) on a violation; the caller must not call it when
 * mf_shadow_full().
 */
struct mf_alloc *mf_shadow_add(struct mf_ctx *c, unsigned int kind, const void *addr, size_t len,
			       size_t align, bool zeroed);
/* Check the pattern; mf_fail (C1) if it changed. */
void mf_shadow_verify(struct mf_ctx *c, const struct mf_alloc *a);
/* Check, then remove (the caller frees it). */
void mf_shadow_remove(struct mf_ctx *c, struct mf_alloc *a);
/* Check, then rewrite every byte with the next generation's pattern. */
void mf_shadow_touch(struct mf_ctx *c, struct mf_alloc *a);
/* The live allocation idx % count, or NULL when there is none. */
struct mf_alloc *mf_shadow_pick(struct mf_shadow *sh, unsigned long idx);
/* The first live allocation at or after idx % count whose kind is in @kinds (a bit mask). */
struct mf_alloc *mf_shadow_pick_kind(struct mf_shadow *sh, unsigned long idx, unsigned int kinds);
/* The live allocation containing [addr, addr+len), or NULL. */
struct mf_alloc *mf_shadow_find(struct mf_shadow *sh, uintptr_t addr);
/* B4: call mark(w, pfn, nr_pages) for every live page allocation (an mm_client_walk_fn). */
void mf_shadow_walk(void *sh, mm_mark_fn mark, void *w);

/* The pattern word at byte offset @off (a multiple of 8) of allocation (id, gen). */
uint64_t mf_pattern_word(uint32_t id, uint32_t gen, size_t off);
/*
 * The pattern word as one expression: mf_pattern_word() evaluates it and
 * cgen.c writes the same text into C reproducers (MF_STR), so a reproducer's
 * memory holds the bytes the fuzz run's did - a buggy allocator may read them.
 */
#define MF_PATTERN_MIX(id, gen) (((uint64_t)(id) << 32 | (uint64_t)(gen)) * 0x9e3779b97f4a7c15ULL)
#define MF_PATTERN_EXPR(id, gen, off)                                                          \
	(MF_PATTERN_MIX(id, gen) ^ (MF_PATTERN_MIX(id, gen) >> 29) ^                           \
	 ((uint64_t)(off) * 0xbf58476d1ce4e5b9ULL) ^ 0x5555555555555555ULL)
#define MF_STR_(x) #x
#define MF_STR(x) MF_STR_(x)

#endif /* MF_SHADOW_H */

/* SPDX-License-Identifier: MIT */
/*
 * pages.h - what every page-allocator target shares: taking a page the
 * allocator handed out into the shadow after checking what the API promises
 * about it (zone allowed by the gfp, pfn aligned to the order, pages that
 * exist, the pfn/page/address conversions agree, __GFP_COMP heads and
 * tails, __GFP_ZERO), freeing it again, pageblock isolation with the
 * bookkeeping teardown needs, "a refused operation changes nothing", and
 * the ops built from these (free, free_many, touch, isolate, unisolate)
 * with their notes and C emission.
 *
 * Shadow kind MF_K_PAGES is the client's pages; targets may add kinds above
 * it (the buddy target's shrinker cache).
 */
#ifndef MF_PAGES_H
#define MF_PAGES_H

#include "harness.h"
#include "instance.h"
#include "shadow.h"

enum { MF_K_PAGES = 0 };
#define MF_MAX_ISOLATED 64

struct mf_pages {
	unsigned long first_pfn, end_pfn;       /* the instance's physical range */
	unsigned long nr_blocks;                /* pageblocks that range touches */
	unsigned int max_order, pb_order;
	unsigned long isolated[MF_MAX_ISOLATED];  /* pageblocks this input isolated */
	unsigned int nisolated;
	/* Called before an allocation of another kind than MF_K_PAGES is freed. */
	void (*forget)(struct mf_ctx *c, struct mf_alloc *a);
};

extern struct mf_pages mf_pages;

/* After mf_instance(): the geometry of the machine, nothing isolated. */
void mf_pages_begin(struct mf_ctx *c);
/* Teardown: unisolate what the input isolated. */
void mf_pages_end(struct mf_ctx *c);

int mf_zone_of_pfn(const struct mm_config *cfg, unsigned long pfn);
const char *mf_zone_name(int z);

/* Where @page of @order allocated with @gfp may be: C1 unless aligned, memory of one zone the gfp allows. */
void mf_page_check_placement(struct mf_ctx *c, struct page *page, unsigned int order, gfp_t gfp);
/* Check @page of @order allocated with @gfp, then add it to the shadow. */
struct mf_alloc *mf_page_take(struct mf_ctx *c, struct page *page, unsigned int order, gfp_t gfp,
			      unsigned int kind, bool zeroed);
/* alloc_pages + mf_page_take (+ C emission); NULL when the allocator says no. */
struct mf_alloc *mf_page_alloc(struct mf_ctx *c, unsigned int order, gfp_t gfp, unsigned int kind);
/* Check and free a live page allocation, by struct page or by address. */
void mf_page_free(struct mf_ctx *c, struct mf_alloc *a, bool by_addr);
/* C emission of a successful / failed allocation. */
void mf_page_emit_take(struct mf_ctx *c, const struct mf_alloc *a, bool zeroed);
void mf_page_emit_null(struct mf_ctx *c, const char *call);

/* The pfn of pageblock number @sel (modulo the pageblocks of the range). */
unsigned long mf_block_pfn(unsigned long sel);

/* A refused operation: reported exactly once, and nothing changed since @before. */
/* An allocation of @order failed: above max_order it is reported once (none with __GFP_NOWARN); checked and accounted. */
void mf_page_failed_order(struct mf_ctx *c, unsigned int order, gfp_t gfp);
void mf_expect_refused(struct mf_ctx *c, const struct mf_baseline *before, const char *what);

/* Shared ops: res[] as their notes expect. */
void mf_op_free(struct mf_ctx *c, struct mf_op *op);          /* args: idx */
void mf_op_free_addr(struct mf_ctx *c, struct mf_op *op);     /* args: idx */
void mf_op_free_many(struct mf_ctx *c, struct mf_op *op);     /* args: n, idx */
void mf_op_touch(struct mf_ctx *c, struct mf_op *op);         /* args: idx */
void mf_op_isolate(struct mf_ctx *c, struct mf_op *op);       /* args: block */
void mf_op_unisolate(struct mf_ctx *c, struct mf_op *op);     /* args: block, any */
void mf_note_alloc(FILE *f, const struct mf_op *op);
void mf_note_free(FILE *f, const struct mf_op *op);
void mf_note_count(FILE *f, const struct mf_op *op);
void mf_note_isolate(FILE *f, const struct mf_op *op);
void mf_res_alloc(struct mf_op *op, const struct mf_alloc *a, unsigned int order);

#endif /* MF_PAGES_H */

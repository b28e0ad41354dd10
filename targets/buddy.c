/* SPDX-License-Identifier: MIT */
/*
 * buddy.c - fuzz target for the buddy allocator through its public API:
 * alloc_pages / __get_free_pages / get_zeroed_page of every order with any
 * gfp (zone, mobility, watermark and reclaim modifiers, __GFP_COMP,
 * __GFP_ZERO), __free_pages / free_pages, pageblock isolation, reclaim
 * pressure through a registered shrinker that owns a page cache, and every
 * kind of bad free the API reports (double, wrong order, interior and tail
 * pages, addresses outside memory, in holes, unaligned; struct page
 * pointers that are not one; invalid gfp bits).
 *
 * Checked on top of the harness's per-op mm_check and shadow (C1):
 *  - a page comes from a zone the gfp allows, its pfn is aligned to its
 *    order, every page of it exists and is in that zone, page_address /
 *    virt_to_page / page_to_pfn agree, __GFP_ZERO memory is zero, a
 *    __GFP_COMP page is a compound head with its tails; order > max_order
 *    returns NULL;
 *  - a bad free is reported exactly once (mm_nr_reports grows by one, the
 *    report has a kind and a message) and changes nothing: NR_FREE_PAGES and
 *    the buddyinfo of every zone are as before.
 * The setup record chooses the machine (configs.h) and the number of CPUs.
 */
#include <string.h>

#include "common/cgen.h"
#include "common/configs.h"
#include "common/gfp_args.h"
#include "common/harness.h"
#include "common/instance.h"
#include "common/pages.h"
#include "common/shadow.h"
#include "types.h"       /* white-box: sizeof(struct page), for pointers that are not one */

enum { K_PAGES = MF_K_PAGES, K_CACHE };   /* shadow kinds: the client's pages, the shrinker's cache */

static const char *const shrink_modes[] = { "normal", "stop", "lazy", "overcount", "none", "alloc" };
enum { SHRINK_NORMAL, SHRINK_STOP_MODE, SHRINK_LAZY, SHRINK_OVERCOUNT, SHRINK_NONE, SHRINK_ALLOC };

static const char *const bad_addr_kinds[] = { "below", "above", "unaligned", "hole", "zero", "stray" };
enum { BA_BELOW, BA_ABOVE, BA_UNALIGNED, BA_HOLE, BA_ZERO, BA_STRAY };
static const char *const bad_ptr_kinds[] = { "misaligned", "hole", "before", "after", "null" };
enum { BP_MISALIGNED, BP_HOLE, BP_BEFORE, BP_AFTER, BP_NULL };

struct buddy_state {
	struct mf_ctx *c;
	struct shrinker shrinker;
	int shrink_mode;
	int in_scan;                           /* SHRINK_ALLOC: inside the shrinker's own allocation */
	struct mf_alloc *cache[MF_MAX_LIVE];   /* the shrinker's pages, oldest first */
	unsigned int ncache;
};

static struct buddy_state bs;

/* ------------------------------------------------------------ helpers */

static void cache_forget(struct mf_ctx *c, struct mf_alloc *a)
{
	for (unsigned int i = 0; i < bs.ncache; i++)
		if (bs.cache[i] == a) {
			memmove(&bs.cache[i], &bs.cache[i + 1], (bs.ncache - i - 1) * sizeof(bs.cache[0]));
			bs.ncache--;
			MF_C(c, "\tcache_forget(%u);\n", a->id);
			return;
		}
}

/* Allocate one block for the client or the cache; NULL when the allocator says no. */
static struct mf_alloc *do_alloc(struct mf_ctx *c, unsigned int order, gfp_t gfp, unsigned int kind)
{
	struct mf_alloc *a = mf_page_alloc(c, order, gfp, kind);
	if (a && kind == K_CACHE) {
		bs.cache[bs.ncache++] = a;
		MF_C(c, "\tcache_add(p%u, %u, %u);\n", a->id, order, a->id);
	}
	return a;
}

/* ------------------------------------------------------------ the shrinker */

static unsigned long count_cache(struct shrinker *s, struct shrink_control *sc)
{
	(void)s;
	(void)sc;
	if (bs.shrink_mode == SHRINK_OVERCOUNT)
		return 2 * bs.ncache + 5;
	return bs.ncache;
}

/*
 * SHRINK_ALLOC: a shrinker that allocates a page before it frees (and
 * gives it back after).  Direct reclaim runs it in PF_MEMALLOC, so the
 * allocation may take the reserves and must never enter reclaim again:
 * a scan inside a scan fails the input.
 */
static unsigned long scan_cache(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long freed = 0, want = sc->nr_to_scan;
	struct page *inner = NULL;
	(void)s;

	if (bs.shrink_mode == SHRINK_STOP_MODE)
		return SHRINK_STOP;
	if (bs.shrink_mode == SHRINK_NONE)
		return 0;
	if (bs.shrink_mode == SHRINK_LAZY) {
		want = (want + 1) / 2;
		sc->nr_scanned = want;
	}
	if (bs.shrink_mode == SHRINK_ALLOC) {
		if (bs.in_scan)
			mf_fail(bs.c, "C1", "direct reclaim recursed: the shrinker's own allocation (PF_MEMALLOC) "
				"entered reclaim and ran the shrinker again");
		bs.in_scan++;
		inner = alloc_pages(bs.c->mm, GFP_KERNEL, 0);
		bs.in_scan--;
	}
	while (freed < want && bs.ncache) {
		struct mf_alloc *a = bs.cache[0];
		struct page *page = a->handle;
		unsigned int order = a->order;
		memmove(&bs.cache[0], &bs.cache[1], (bs.ncache - 1) * sizeof(bs.cache[0]));
		bs.ncache--;
		mf_shadow_remove(bs.c, a);
		__free_pages(bs.c->mm, page, order);
		freed++;
	}
	if (inner)
		__free_pages(bs.c->mm, inner, 0);
	return freed;
}

/* ------------------------------------------------------------ ops */

enum { A_ORDER, A_GFP };

static void op_alloc(struct mf_ctx *c, struct mf_op *op)
{
	unsigned int order = (unsigned int)op->a[0];
	gfp_t gfp = (gfp_t)op->a[1];
	struct mf_alloc *a = NULL;

	if (mf_shadow_full(c->sh)) {
		op->res[0] = -2;
		return;
	}
	a = do_alloc(c, order, gfp, K_PAGES);
	mf_res_alloc(op, a, order);
}

static void get_free(struct mf_ctx *c, struct mf_op *op, bool zeroed)
{
	unsigned int order = (unsigned int)op->a[0], id = c->sh->next_id;
	gfp_t gfp = (gfp_t)op->a[1];

	if (mf_shadow_full(c->sh)) {
		op->res[0] = -2;
		return;
	}
	if (zeroed)
		mf_cgen_call(c, "(void)get_zeroed_page(mm, %#x);", gfp);
	else
		mf_cgen_call(c, "(void)__get_free_pages(mm, %#x, %u);", gfp, order);
	unsigned long addr = zeroed ? get_zeroed_page(c->mm, gfp) : __get_free_pages(c->mm, gfp, order);
	if (zeroed) {
		order = 0;
		gfp |= __GFP_ZERO;
	}
	gfp &= ~__GFP_HIGHMEM;   /* __get_free_pages cannot return highmem */
	if (!addr) {
		char call[96];
		snprintf(call, sizeof(call), "__get_free_pages(mm, %#x, %u)", gfp, order);
		mf_page_emit_null(c, call);
		mf_page_failed_order(c, order, gfp);
		mf_res_alloc(op, NULL, order);
		return;
	}
	struct page *page = virt_to_page(c->mm, (void *)addr);
	if (!page || (unsigned long)page_address(c->mm, page) != addr)
		mf_fail(c, "C1", "__get_free_pages returned %#lx, which is not the address of a page of this memory",
			addr);
	MF_C(c, "\tunsigned long a%u = __get_free_pages(mm, %#x, %u);\n", id, gfp, order);
	MF_C(c, "\tdiverged(%u, !a%u, \"the allocation failed; in the fuzz run it succeeded\");\n", c->cur, id);
	MF_C(c, "\tstruct page *p%u = virt_to_page(mm, (void *)a%u);\n", id, id);
	struct mf_alloc *a = mf_page_take(c, page, order, gfp, K_PAGES, gfp & __GFP_ZERO);
	if (gfp & __GFP_ZERO)
		MF_C(c, "\texpect_zero(%u, (void *)a%u, %#zx);\n", c->cur, a->id, a->len);
	MF_C(c, "\ttrack(%u, %u, (void *)a%u, %#zx);\n", c->cur, a->id, a->id, a->len);
	MF_C(c, "\thold_pages(%u, %u, (void *)a%u, %lu);\n", c->cur, a->id, a->id, a->nr_pages);
	mf_res_alloc(op, a, order);
}

static void op_get_free(struct mf_ctx *c, struct mf_op *op) { get_free(c, op, false); }
static void op_zeroed(struct mf_ctx *c, struct mf_op *op) { get_free(c, op, true); }

static void op_alloc_many(struct mf_ctx *c, struct mf_op *op)
{
	long n = op->a[0], got = 0;
	unsigned int order = (unsigned int)op->a[1];
	gfp_t gfp = (gfp_t)op->a[2];

	while (got < n && !mf_shadow_full(c->sh) && do_alloc(c, order, gfp, K_PAGES))
		got++;
	op->res[0] = got;
}

static void op_cache_fill(struct mf_ctx *c, struct mf_op *op)
{
	long n = op->a[0], got = 0;
	while (got < n && !mf_shadow_full(c->sh) && do_alloc(c, (unsigned int)op->a[1], (gfp_t)op->a[2], K_CACHE))
		got++;
	op->res[0] = got;
}

static void op_shrink_mode(struct mf_ctx *c, struct mf_op *op)
{
	bs.shrink_mode = (int)op->a[0];
	MF_C(c, "\tshrink_mode = %d;\n", bs.shrink_mode);
}

/* A bad free must be reported and refused.  First a proper free, then the same again. */
static void op_double_free(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *a = mf_shadow_pick_kind(c->sh, (unsigned long)op->a[0], 1u << K_PAGES);
	struct mf_baseline before;

	if (!a) {
		op->res[0] = -1;
		return;
	}
	struct page *page = a->handle;
	unsigned int order = a->order, id = a->id;
	bool by_addr = op->a[1];
	unsigned long addr = a->addr;
	op->res[0] = id;
	op->res[1] = (long)a->pfn;
	op->res[2] = order;
	mf_page_free(c, a, false);
	mf_baseline_capture(c->mm, &before);
	c->reports_before = mm_nr_reports(c->mm);
	MF_C(c, "\tunsigned long r%u = mm_nr_reports(mm);\n", c->cur);
	if (by_addr) {
		mf_cgen_call(c, "free_pages(mm, a%u, %u);", id, order);
		free_pages(c->mm, addr, order);
		MF_C(c, "\tfree_pages(mm, a%u, %u);   /* again */\n", id, order);
	} else {
		mf_cgen_call(c, "__free_pages(mm, p%u, %u);", id, order);
		__free_pages(c->mm, page, order);
		MF_C(c, "\t__free_pages(mm, p%u, %u);   /* again */\n", id, order);
	}
	mf_expect_refused(c, &before, "double free");
}

static void op_bad_order(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *a = mf_shadow_pick_kind(c->sh, (unsigned long)op->a[0], 1u << K_PAGES);
	struct mf_baseline before;

	if (!a) {
		op->res[0] = -1;
		return;
	}
	unsigned int wrong = (a->order + 1 + (unsigned int)op->a[1]) % (MM_MAX_ORDER_LIMIT + 2);
	if (wrong == a->order)
		wrong = (wrong + 1) % (MM_MAX_ORDER_LIMIT + 2);
	op->res[0] = a->id;
	op->res[1] = (long)a->pfn;
	op->res[2] = wrong;
	mf_baseline_capture(c->mm, &before);
	MF_C(c, "\tunsigned long r%u = mm_nr_reports(mm);\n", c->cur);
	mf_cgen_call(c, "__free_pages(mm, p%u, %u);", a->id, wrong);
	__free_pages(c->mm, a->handle, wrong);
	MF_C(c, "\t__free_pages(mm, p%u, %u);   /* allocated as order %u */\n", a->id, wrong, a->order);
	mf_expect_refused(c, &before, "free with the wrong order");
}

static void note_bad(FILE *f, const struct mf_op *op)
{
	if (op->res[0] == -1)
		fprintf(f, "no candidate");
	else if (op->res[0] == -3)
		fprintf(f, "nothing to try in this config");
	else if (op->res[0] == -4)
		fprintf(f, "free_pages(0): a no-op, no report");
	else
		fprintf(f, "a%ld pfn %#lx arg %ld: reported", op->res[0], op->res[1], op->res[2]);
}

static void op_bad_interior(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_baseline before;
	struct mf_alloc *a = NULL;

	/* The first live page allocation of order >= 1 from idx on (one pass over the live list). */
	for (unsigned int k = 0; k < mf_shadow_count(c->sh) && !a; k++) {
		struct mf_alloc *x = mf_shadow_pick(c->sh, (unsigned long)op->a[0] + k);
		if (x->kind == K_PAGES && x->order)
			a = x;
	}
	if (!a) {
		op->res[0] = -1;
		return;
	}
	unsigned long i = 1 + (unsigned long)op->a[1] % ((1UL << a->order) - 1);
	unsigned int order = (unsigned int)op->a[2] % (a->order + 1);
	op->res[0] = a->id;
	op->res[1] = (long)(a->pfn + i);
	op->res[2] = order;
	mf_baseline_capture(c->mm, &before);
	MF_C(c, "\tunsigned long r%u = mm_nr_reports(mm);\n", c->cur);
	mf_cgen_call(c, "__free_pages(mm, pfn_to_page(mm, page_to_pfn(mm, p%u) + %lu), %u);", a->id, i, order);
	__free_pages(c->mm, (struct page *)a->handle + i, order);
	MF_C(c, "\t__free_pages(mm, pfn_to_page(mm, page_to_pfn(mm, p%u) + %lu), %u);   /* a page inside a%u */\n",
	     a->id, i, order, a->id);
	mf_expect_refused(c, &before, (a->aux & __GFP_COMP) ? "free of a compound tail page" :
			"free of an interior page of a higher-order allocation");
}

/* Some pfn in [first, end) that does not exist, chosen by @sel; false if there is none. */
static bool find_hole(struct mf_ctx *c, unsigned long sel, unsigned long *pfn)
{
	unsigned long span = mf_pages.end_pfn - mf_pages.first_pfn;
	for (unsigned long k = 0; k < span; k++) {
		unsigned long p = mf_pages.first_pfn + (sel + k) % span;
		if (!pfn_valid(c->mm, p)) {
			*pfn = p;
			return true;
		}
	}
	return false;
}

static void op_bad_addr(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_baseline before;
	uintptr_t base = (uintptr_t)mm_arena_base(c->mm), size = mm_arena_size(c->mm), addr = 0;
	unsigned long sel = (unsigned long)op->a[1], pfn = 0;
	unsigned int order = (unsigned int)op->a[2];
	struct mf_alloc *a;

	op->res[0] = 0;
	switch (op->a[0]) {
	case BA_BELOW:
		addr = base - MM_PAGE_SIZE * (1 + sel % 64);
		break;
	case BA_ABOVE:
		addr = base + size + MM_PAGE_SIZE * (sel % 64);
		break;
	case BA_UNALIGNED:
		a = mf_shadow_pick_kind(c->sh, sel, 1u << K_PAGES);
		if (!a) {
			op->res[0] = -1;
			return;
		}
		addr = a->addr + 1 + (sel >> 8) % (MM_PAGE_SIZE - 1);
		op->res[0] = a->id;
		break;
	case BA_HOLE:
		if (!find_hole(c, sel, &pfn)) {
			op->res[0] = -3;
			return;
		}
		addr = base + ((pfn - mf_pages.first_pfn) << MM_PAGE_SHIFT);
		break;
	case BA_ZERO:
		mf_baseline_capture(c->mm, &before);
		mf_cgen_call(c, "free_pages(mm, 0, %u);", order);
		free_pages(c->mm, 0, order);
		MF_C(c, "\t{ unsigned long r = mm_nr_reports(mm); free_pages(mm, 0, %u); "
			"expect(%u, mm_nr_reports(mm) == r, \"free_pages(0) is a silent no-op\"); }\n", order, c->cur);
		if (mm_nr_reports(c->mm) != c->reports_before)
			mf_fail(c, "C1", "free_pages(mm, 0, %u) must be a silent no-op, it was reported", order);
		{
			struct mf_baseline after;
			char why[256];
			mf_baseline_capture(c->mm, &after);
			if (!mf_baseline_same(&before, &after, true, true, NULL, why, sizeof(why)))
				mf_fail(c, "C1", "free_pages(mm, 0, %u) must be a no-op, but it changed the allocator: %s",
					order, why);
		}
		op->res[0] = -4;
		return;
	case BA_STRAY: {
		/* A page nobody holds: free in the buddy lists or on a pcp list. */
		unsigned long span = mf_pages.end_pfn - mf_pages.first_pfn, k;
		for (k = 0; k < span; k++) {
			pfn = mf_pages.first_pfn + (sel + k) % span;
			addr = base + ((pfn - mf_pages.first_pfn) << MM_PAGE_SHIFT);
			if (pfn_valid(c->mm, pfn) && !mf_shadow_find(c->sh, addr))
				break;
		}
		if (k == span) {
			op->res[0] = -3;
			return;
		}
		order = 0;
		break;
	}
	}
	op->res[1] = (long)(addr >= base ? mf_pages.first_pfn + ((addr - base) >> MM_PAGE_SHIFT) : 0);
	op->res[2] = order;
	mf_baseline_capture(c->mm, &before);
	MF_C(c, "\tunsigned long r%u = mm_nr_reports(mm);\n", c->cur);
	mf_cgen_call(c, "free_pages(mm, (unsigned long)mm_arena_base(mm) + %#lx, %u);", (unsigned long)(addr - base), order);
	free_pages(c->mm, addr, order);
	MF_C(c, "\tfree_pages(mm, (unsigned long)mm_arena_base(mm) + %#lx, %u);   /* %s */\n",
	     (unsigned long)(addr - base), order, bad_addr_kinds[op->a[0]]);
	mf_expect_refused(c, &before, "free_pages of a bad address");
}

static void op_bad_ptr(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_baseline before;
	unsigned long sel = (unsigned long)op->a[1], pfn = 0, valid = mf_pages.first_pfn;
	uintptr_t p = 0;

	while (!pfn_valid(c->mm, valid))
		valid++;
	uintptr_t base = (uintptr_t)pfn_to_page(c->mm, valid);
	op->res[0] = 0;
	switch (op->a[0]) {
	case BP_MISALIGNED: {
		struct mf_alloc *a = mf_shadow_pick_kind(c->sh, sel, 1u << K_PAGES);
		if (!a) {
			op->res[0] = -1;
			return;
		}
		p = (uintptr_t)a->handle + 8 * (1 + (sel >> 8) % 7);
		op->res[0] = a->id;
		break;
	}
	case BP_HOLE:
		if (!find_hole(c, sel, &pfn)) {
			op->res[0] = -3;
			return;
		}
		p = base + (pfn - valid) * sizeof(struct page);
		break;
	case BP_BEFORE:
		p = base - (valid - mf_pages.first_pfn + 1 + sel % 4096) * sizeof(struct page);
		break;
	case BP_AFTER:
		p = base + (mf_pages.end_pfn - valid + sel % 4096) * sizeof(struct page);
		break;
	case BP_NULL:
		p = 0;
		break;
	}
	op->res[1] = (long)pfn;
	op->res[2] = (long)op->a[0];
	mf_baseline_capture(c->mm, &before);
	MF_C(c, "\tunsigned long r%u = mm_nr_reports(mm);\n", c->cur);
	if (op->a[0] == BP_NULL)
		mf_cgen_call(c, "__free_pages(mm, NULL, 0);");
	else
		mf_cgen_call(c, "__free_pages(mm, (struct page *)((char *)pfn_to_page(mm, %#lx) + (%ld)), 0);", valid,
			     (long)(p - base));
	__free_pages(c->mm, (struct page *)p, 0);
	if (op->a[0] == BP_NULL)
		MF_C(c, "\t__free_pages(mm, NULL, 0);\n");
	else
		MF_C(c, "\t__free_pages(mm, (struct page *)((char *)pfn_to_page(mm, %#lx) + (%ld)), 0);   /* %s */\n",
		     valid, (long)(p - base), bad_ptr_kinds[op->a[0]]);
	mf_expect_refused(c, &before, "__free_pages of something that is not a struct page of this memory");
}

/*
 * What makes a gfp invalid: a bit above MM_GFP_VALID_MASK (bit 16 + bit),
 * several zone modifiers (GFP_ZONE_BAD: the bit-th of the four sets of two
 * or more), or both mobility hints.
 */
static const char *const bad_gfp_kinds[] = { "bits", "zones", "mobility" };
static const gfp_t bad_zone_sets[] = { __GFP_DMA | __GFP_DMA32, __GFP_DMA | __GFP_HIGHMEM,
				       __GFP_DMA32 | __GFP_HIGHMEM, __GFP_DMA | __GFP_DMA32 | __GFP_HIGHMEM };

static void op_bad_gfp(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_baseline before;
	gfp_t gfp = (gfp_t)op->a[1];
	/* An order above max_order fails first, silently: keep the order valid. */
	unsigned int order = (unsigned int)op->a[2] % (mf_pages.max_order + 1);
	const char *what;

	switch (op->a[3]) {
	case 1:
		gfp |= bad_zone_sets[op->a[0] % 4];
		what = "alloc_pages with several zone modifiers";
		break;
	case 2:
		gfp |= GFP_MOVABLE_MASK;
		what = "alloc_pages with __GFP_MOVABLE and __GFP_RECLAIMABLE";
		break;
	default:
		gfp |= (gfp_t)(1u << (16 + op->a[0]));
		what = "alloc_pages with invalid gfp bits";
		break;
	}
	mf_baseline_capture(c->mm, &before);
	MF_C(c, "\tunsigned long r%u = mm_nr_reports(mm);\n", c->cur);
	mf_cgen_call(c, "(void)alloc_pages(mm, %#x, %u);", gfp, order);
	struct page *page = alloc_pages(c->mm, gfp, order);
	MF_C(c, "\texpect(%u, alloc_pages(mm, %#x, %u) == NULL, \"%s is refused\");\n", c->cur, gfp, order, what);
	if (page)
		mf_fail(c, "C1", "%s (gfp %#x) returned a page", what, gfp);
	op->res[0] = 0;
	op->res[1] = 0;
	op->res[2] = (long)gfp;
	mf_expect_refused(c, &before, what);
}

/* ------------------------------------------------------------ the table */

static const struct mf_opdesc buddy_setup = {
	"setup", "the machine: a named config (targets/common/configs.c), the number of CPUs, and whether "
	"free_pcppages_bulk prefetches buddies (config.pcp_prefetch_buddy)", NULL, NULL,
	{ MF_A_ENUM("config", mf_config_names), MF_A_INT("cpus", 1, 4), MF_A_BOOL("prefetch") },
};

static const struct mf_opdesc buddy_ops[] = {
	{ "alloc", "alloc_pages(gfp, order)", op_alloc, mf_note_alloc,
	  { MF_A_INT("order", 0, MM_MAX_ORDER_LIMIT + 1), MF_A_GFP("gfp") } },
	{ "get_free", "__get_free_pages(gfp, order)", op_get_free, mf_note_alloc,
	  { MF_A_INT("order", 0, MM_MAX_ORDER_LIMIT + 1), MF_A_GFP("gfp") } },
	{ "zeroed", "get_zeroed_page(gfp)", op_zeroed, mf_note_alloc,
	  { MF_A_INT("order", 0, 0), MF_A_GFP("gfp") } },
	{ "free", "__free_pages of a live allocation", mf_op_free, mf_note_free, { MF_A_IDX("idx") } },
	{ "free_addr", "free_pages(address) of a live allocation", mf_op_free_addr, mf_note_free, { MF_A_IDX("idx") } },
	{ "touch", "check a live allocation's pattern, then write it anew (sampled words: pages are over 512 bytes)", mf_op_touch, mf_note_free,
	  { MF_A_IDX("idx") } },
	{ "alloc_many", "up to n allocations, until one fails", op_alloc_many, mf_note_count,
	  { MF_A_INT("n", 1, 64), MF_A_INT("order", 0, MM_MAX_ORDER_LIMIT), MF_A_GFP("gfp") } },
	{ "free_many", "free n live allocations from idx on", mf_op_free_many, mf_note_count,
	  { MF_A_INT("n", 1, 64), MF_A_IDX("idx") } },
	{ "isolate", "mm_isolate_pageblock of pageblock number block (modulo their count)", mf_op_isolate,
	  mf_note_isolate, { MF_A_INT("block", 0, 65535) } },
	{ "unisolate", "mm_unisolate_pageblock: an isolated one (block modulo their count), or with any=1 "
	  "pageblock number block", mf_op_unisolate, mf_note_isolate, { MF_A_INT("block", 0, 65535), MF_A_BOOL("any") } },
	{ "cache_fill", "allocate n blocks into the shrinker's cache", op_cache_fill, mf_note_count,
	  { MF_A_INT("n", 1, 64), MF_A_INT("order", 0, MM_MAX_ORDER_LIMIT), MF_A_GFP("gfp") } },
	{ "shrink_mode", "how the shrinker behaves from now on", op_shrink_mode, NULL,
	  { MF_A_ENUM("mode", shrink_modes) } },
	{ "double_free", "free a live allocation, then free it again (must be reported and refused)",
	  op_double_free, note_bad, { MF_A_IDX("idx"), MF_A_BOOL("by_addr") } },
	{ "bad_order", "__free_pages with an order other than the allocation's", op_bad_order, note_bad,
	  { MF_A_IDX("idx"), MF_A_INT("delta", 0, 15) } },
	{ "bad_interior", "__free_pages of a page inside a higher-order allocation", op_bad_interior, note_bad,
	  { MF_A_IDX("idx"), MF_A_INT("page", 0, 65535), MF_A_INT("order", 0, 15) } },
	{ "bad_addr", "free_pages of an address that is not an allocation", op_bad_addr, note_bad,
	  { MF_A_ENUM("kind", bad_addr_kinds), MF_A_INT("sel", 0, 65535), MF_A_INT("order", 0, MM_MAX_ORDER_LIMIT) } },
	{ "bad_ptr", "__free_pages of a pointer that is not a struct page of this memory", op_bad_ptr, note_bad,
	  { MF_A_ENUM("kind", bad_ptr_kinds), MF_A_INT("sel", 0, 65535) } },
	{ "bad_gfp", "alloc_pages with an invalid gfp: kind bits, bit 16 + bit set (above MM_GFP_VALID_MASK); "
	  "zones, the bit-th (mod 4) set of several zone modifiers; mobility, __GFP_MOVABLE|__GFP_RECLAIMABLE",
	  op_bad_gfp, note_bad, { MF_A_INT("bit", 0, 15), MF_A_GFP("gfp"), MF_A_INT("order", 0, 3),
				  MF_A_ENUM("kind", bad_gfp_kinds) } },
};

/* ------------------------------------------------------------ lifecycle */

static void buddy_config_of(const struct mf_op *setup, struct mm_config *cfg)
{
	mf_config_named(cfg, (enum mf_config_kind)setup->a[0], (unsigned int)setup->a[1]);
	cfg->pcp_prefetch_buddy = setup->a[2] != 0;
}

static bool buddy_begin(struct mf_ctx *c, const struct mf_op *setup)
{
	struct mm_config cfg;

	buddy_config_of(setup, &cfg);
	mf_cgen_config(c, &cfg);
	if (!mf_instance(c, &cfg))
		mf_fail(c, "C1", "mm_create failed for the named config %s", mf_config_names[setup->a[0]]);
	mf_pages_begin(c);
	mf_pages.forget = cache_forget;
	memset(&bs, 0, sizeof(bs));
	bs.c = c;
	bs.shrinker.count_objects = count_cache;
	bs.shrinker.scan_objects = scan_cache;
	if (register_shrinker(c->mm, &bs.shrinker))
		mf_fail(c, "C1", "register_shrinker failed on a fresh instance");
	MF_C(c, "\tregister_shrinker(mm, &cache_shrinker);\n");
	return true;
}

static void buddy_release(struct mf_ctx *c, struct mf_alloc *a)
{
	mf_page_free(c, a, false);
}

static void buddy_end(struct mf_ctx *c)
{
	mf_pages_end(c);
	unregister_shrinker(c->mm, &bs.shrinker);
	MF_C(c, "\tunregister_shrinker(mm, &cache_shrinker);\n");
}

/* The shrinker of the C reproducer: the same cache, oldest first, the same modes. */
static void buddy_cgen_prologue(struct mf_ctx *c, FILE *f)
{
	(void)c;
	fputs("static struct { struct page *page; unsigned order, id; } cache[4096];\n"
	      "static unsigned long ncache;\n"
	      "static int shrink_mode;   /* 0 normal, 1 stop, 2 lazy, 3 overcount, 4 none, 5 alloc */\n"
	      "static int in_scan;\n"
	      "UNUSED static void cache_add(struct page *p, unsigned order, unsigned id)\n"
	      "{\n\tcache[ncache].page = p;\n\tcache[ncache].order = order;\n\tcache[ncache++].id = id;\n}\n"
	      "UNUSED static void cache_forget(unsigned id)\n"
	      "{\n\tfor (unsigned long i = 0; i < ncache; i++)\n\t\tif (cache[i].id == id) {\n"
	      "\t\t\tmemmove(&cache[i], &cache[i + 1], (ncache - i - 1) * sizeof(cache[0]));\n"
	      "\t\t\tncache--;\n\t\t\treturn;\n\t\t}\n}\n"
	      "static unsigned long cache_count(struct shrinker *s, struct shrink_control *sc)\n"
	      "{\n\t(void)s; (void)sc;\n\treturn shrink_mode == 3 ? 2 * ncache + 5 : ncache;\n}\n"
	      "static unsigned long cache_scan(struct shrinker *s, struct shrink_control *sc)\n"
	      "{\n\tunsigned long freed = 0, want = sc->nr_to_scan;\n\t(void)s;\n"
	      "\tif (shrink_mode == 1)\n\t\treturn SHRINK_STOP;\n\tif (shrink_mode == 4)\n\t\treturn 0;\n"
	      "\tif (shrink_mode == 2) {\n\t\twant = (want + 1) / 2;\n\t\tsc->nr_scanned = want;\n\t}\n"
	      "\tstruct page *inner = NULL;\n"
	      "\tif (shrink_mode == 5) {\n\t\texpect(-1, !in_scan, \"direct reclaim recursed into the shrinker\");\n"
	      "\t\tin_scan++;\n\t\tinner = alloc_pages(mm, GFP_KERNEL, 0);\n\t\tin_scan--;\n\t}\n"
	      "\twhile (freed < want && ncache) {\n\t\tstruct page *p = cache[0].page;\n"
	      "\t\tunsigned order = cache[0].order, id = cache[0].id;\n\t\tcache_forget(id);\n"
	      "\t\tuntrack(-1, id);\n\t\t__free_pages(mm, p, order);\n\t\tfreed++;\n\t}\n"
	      "\tif (inner)\n\t\t__free_pages(mm, inner, 0);\n\treturn freed;\n}\n"
	      "static struct shrinker cache_shrinker = { cache_count, cache_scan, NULL, NULL };\n\n", f);
}

static const struct mf_target buddy_target = {
	.name = "buddy",
	.setup = &buddy_setup,
	.ops = buddy_ops,
	.nops = sizeof(buddy_ops) / sizeof(buddy_ops[0]),
	.check_level = 2,
	.final_level = 3,
	.begin = buddy_begin,
	.release = buddy_release,
	.end = buddy_end,
	.cgen_prologue = buddy_cgen_prologue,
	.config_of = buddy_config_of,
};

MF_TARGET(buddy_target)

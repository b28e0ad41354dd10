/* SPDX-License-Identifier: MIT */
/*
 * pages.c - the page-allocator client shared by the page targets: what
 * the API promises about every page it hands out, freeing, isolation
 * bookkeeping, refused operations, and the common ops.  See pages.h.
 */
#include <string.h>

#include "cgen.h"
#include "gfp_args.h"
#include "pages.h"
#include "types.h"       /* white-box: struct page, for the compound checks */

struct mf_pages mf_pages;

int mf_zone_of_pfn(const struct mm_config *cfg, unsigned long pfn)
{
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (pfn >= cfg->zones[z].start_pfn && pfn < cfg->zones[z].end_pfn)
			return z;
	return -1;
}

const char *mf_zone_name(int z)
{
	static const char *const n[] = { "DMA", "DMA32", "Normal", "Movable" };
	return z >= 0 && z < MAX_NR_ZONES ? n[z] : "none";
}

void mf_pages_begin(struct mf_ctx *c)
{
	const struct mm_config *cfg = mf_config(c);

	memset(&mf_pages, 0, sizeof(mf_pages));
	mf_pages.first_pfn = mm_first_pfn(c->mm);
	mf_pages.end_pfn = mm_end_pfn(c->mm);
	mf_pages.max_order = cfg->max_order;
	mf_pages.pb_order = cfg->pageblock_order;
	mf_pages.nr_blocks = ((mf_pages.end_pfn - 1) >> mf_pages.pb_order) -
			     (mf_pages.first_pfn >> mf_pages.pb_order) + 1;
}

void mf_pages_end(struct mf_ctx *c)
{
	while (mf_pages.nisolated) {
		unsigned long pfn = mf_pages.isolated[--mf_pages.nisolated];
		if (mm_unisolate_pageblock(c->mm, pfn))
			mf_fail(c, "C1", "teardown: mm_unisolate_pageblock(%#lx) failed on an isolated pageblock", pfn);
		MF_C(c, "\tmm_unisolate_pageblock(mm, %#lx);\n", pfn);
	}
}

void mf_page_check_placement(struct mf_ctx *c, struct page *page, unsigned int order, gfp_t gfp)
{
	const struct mm_config *cfg = mf_config(c);
	unsigned long pfn = page_to_pfn(c->mm, page), nr = 1UL << order;
	int z = mf_zone_of_pfn(cfg, pfn), hz = mf_gfp_zone(gfp);

	if (order > cfg->max_order)
		mf_fail(c, "C1", "alloc of order %u > max_order %u returned pfn %#lx", order, cfg->max_order, pfn);
	if (pfn & (nr - 1))
		mf_fail(c, "C1", "order-%u allocation at pfn %#lx is not aligned to its order", order, pfn);
	if (z < 0 || z > hz)
		mf_fail(c, "C1", "gfp %#x allows zones up to %s, but pfn %#lx is in zone %s", gfp, mf_zone_name(hz),
			pfn, mf_zone_name(z));
	for (unsigned long i = 0; i < nr; i++)
		if (!pfn_valid(c->mm, pfn + i) || mf_zone_of_pfn(cfg, pfn + i) != z)
			mf_fail(c, "C1", "order-%u allocation at pfn %#lx covers pfn %#lx, %s", order, pfn, pfn + i,
				pfn_valid(c->mm, pfn + i) ? "of another zone" : "which does not exist");
}

struct mf_alloc *mf_page_take(struct mf_ctx *c, struct page *page, unsigned int order, gfp_t gfp,
			      unsigned int kind, bool zeroed)
{
	unsigned long pfn = page_to_pfn(c->mm, page), nr = 1UL << order;
	void *addr = page_address(c->mm, page);

	mf_page_check_placement(c, page, order, gfp);
	if (pfn_to_page(c->mm, pfn) != page || virt_to_page(c->mm, addr) != page)
		mf_fail(c, "C1", "pfn %#lx: pfn_to_page / virt_to_page / page_address disagree", pfn);
	if ((gfp & __GFP_COMP) && order) {
		if (!PageHead(page) || page[1].compound_order != order)
			mf_fail(c, "C1", "__GFP_COMP order-%u page at pfn %#lx is not a compound head of that order",
				order, pfn);
		for (unsigned long i = 1; i < nr; i++)
			if (page[i].compound_head != ((unsigned long)page | 1UL))
				mf_fail(c, "C1", "__GFP_COMP page at pfn %#lx: tail %#lx does not point at its head",
					pfn, pfn + i);
	}
	struct mf_alloc *a = mf_shadow_add(c, kind, addr, nr << MM_PAGE_SHIFT, MM_PAGE_SIZE, zeroed);
	a->pfn = pfn;
	a->nr_pages = nr;
	a->order = order;
	a->aux = gfp;
	a->handle = page;
	return a;
}

void mf_page_emit_take(struct mf_ctx *c, const struct mf_alloc *a, bool zeroed)
{
	MF_C(c, "\tunsigned long a%u = (unsigned long)page_address(mm, p%u);\n", a->id, a->id);
	if (zeroed)
		MF_C(c, "\texpect_zero(%u, (void *)a%u, %#zx);\n", c->cur, a->id, a->len);
	MF_C(c, "\ttrack(%u, %u, (void *)a%u, %#zx);\n", c->cur, a->id, a->id, a->len);
	MF_C(c, "\thold_pages(%u, %u, (void *)a%u, %lu);\n", c->cur, a->id, a->id, a->nr_pages);
}

void mf_page_emit_null(struct mf_ctx *c, const char *call)
{
	MF_C(c, "\tdiverged(%u, %s != 0, \"the allocation succeeded; in the fuzz run it failed\");\n", c->cur, call);
}

void mf_page_failed_order(struct mf_ctx *c, unsigned int order, gfp_t gfp)
{
	if (order <= mf_pages.max_order)
		return;
	/* WARN_ON_ONCE_GFP(order > MAX_PAGE_ORDER): one report, none with __GFP_NOWARN. */
	unsigned long want = c->reports_before + !(gfp & __GFP_NOWARN);
	MF_C(c, "\texpect(%u, mm_nr_reports(mm) == reports_ok + %d, \"an order above max_order is %s\");\n", c->cur,
	     !(gfp & __GFP_NOWARN), (gfp & __GFP_NOWARN) ? "not reported (__GFP_NOWARN)" : "reported once");
	if (mm_nr_reports(c->mm) != want)
		mf_fail(c, "C1", "alloc_pages of order %u > max_order %u: %lu reports, expected %lu", order,
			mf_pages.max_order, mm_nr_reports(c->mm) - c->reports_before, want - c->reports_before);
	mf_reports_accounted(c);
}

struct mf_alloc *mf_page_alloc(struct mf_ctx *c, unsigned int order, gfp_t gfp, unsigned int kind)
{
	mf_cgen_call(c, "(void)alloc_pages(mm, %#x, %u);", gfp, order);
	struct page *page = alloc_pages(c->mm, gfp, order);
	unsigned int id = c->sh->next_id;     /* after the call: an interrupt inside it may have taken ids */

	if (!page) {
		char call[96];
		snprintf(call, sizeof(call), "alloc_pages(mm, %#x, %u)", gfp, order);
		mf_page_emit_null(c, call);
		mf_page_failed_order(c, order, gfp);
		return NULL;
	}
	MF_C(c, "\tstruct page *p%u = alloc_pages(mm, %#x, %u);\n", id, gfp, order);
	MF_C(c, "\tdiverged(%u, !p%u, \"the allocation failed; in the fuzz run it succeeded\");\n", c->cur, id);
	if (mf_shadow_full(c->sh)) {
		/*
		 * The caller saw room, but an interrupt (or, in the sched target,
		 * another task) that ran inside alloc_pages took the last slot:
		 * give the page back and report no allocation.
		 */
		c->sh->next_id++;     /* p<id> is declared in the C reproducer: do not reuse its name */
		__free_pages(c->mm, page, order);
		MF_C(c, "\t__free_pages(mm, p%u, %u);    /* the harness's shadow filled up meanwhile */\n", id, order);
		return NULL;
	}
	struct mf_alloc *a = mf_page_take(c, page, order, gfp, kind, gfp & __GFP_ZERO);
	mf_page_emit_take(c, a, gfp & __GFP_ZERO);
	return a;
}

void mf_page_free(struct mf_ctx *c, struct mf_alloc *a, bool by_addr)
{
	struct page *page = a->handle;
	unsigned int order = a->order, id = a->id;
	uintptr_t addr = a->addr;

	if (a->kind != MF_K_PAGES && mf_pages.forget)
		mf_pages.forget(c, a);
	mf_shadow_remove(c, a);
	MF_C(c, "\tuntrack(%u, %u);\n", c->cur, id);
	if (by_addr) {
		mf_cgen_call(c, "free_pages(mm, a%u, %u);", id, order);
		free_pages(c->mm, addr, order);
		MF_C(c, "\tfree_pages(mm, a%u, %u);\n", id, order);
	} else {
		mf_cgen_call(c, "__free_pages(mm, p%u, %u);", id, order);
		__free_pages(c->mm, page, order);
		MF_C(c, "\t__free_pages(mm, p%u, %u);\n", id, order);
	}
}

unsigned long mf_block_pfn(unsigned long sel)
{
	return (mf_pages.first_pfn & ~((1UL << mf_pages.pb_order) - 1)) +
	       (sel % mf_pages.nr_blocks) * (1UL << mf_pages.pb_order);
}

void mf_expect_refused(struct mf_ctx *c, const struct mf_baseline *before, const char *what)
{
	struct mf_baseline after;
	char why[256];
	unsigned long n = mm_nr_reports(c->mm);

	MF_C(c, "\texpect(%u, mm_nr_reports(mm) == r%u + 1, \"%s is reported once\");\n", c->cur, c->cur, what);
	if (n != c->reports_before + 1)
		mf_fail(c, "C1", "%s: expected exactly one report, mm_nr_reports went from %lu to %lu", what,
			c->reports_before, n);
	const struct mm_report *r = mm_last_report(c->mm);
	if (!r->kind[0] || !r->msg[0])
		mf_fail(c, "C1", "%s: the report has no kind or no message", what);
	mf_baseline_capture(c->mm, &after);
	if (!mf_baseline_same(before, &after, true, true, NULL, why, sizeof(why)))
		mf_fail(c, "C1", "%s was reported (%s) but still changed the allocator: %s", what, r->msg, why);
	mf_reports_accounted(c);
}

/* ------------------------------------------------------------ shared ops */

void mf_res_alloc(struct mf_op *op, const struct mf_alloc *a, unsigned int order)
{
	op->res[0] = a ? (long)a->id : -1;
	op->res[1] = a ? (long)a->pfn : 0;
	op->res[2] = order;
}

void mf_note_alloc(FILE *f, const struct mf_op *op)
{
	if (op->res[0] == -2)
		fprintf(f, "skipped: the shadow is full");
	else if (op->res[0] < 0)
		fprintf(f, "NULL");
	else
		fprintf(f, "a%ld pfn %#lx order %ld", op->res[0], op->res[1], op->res[2]);
}

static void free_one(struct mf_ctx *c, struct mf_op *op, bool by_addr)
{
	struct mf_alloc *a = mf_shadow_pick_kind(c->sh, (unsigned long)op->a[0], 1u << MF_K_PAGES);
	if (!a) {
		op->res[0] = -1;
		return;
	}
	mf_res_alloc(op, a, a->order);
	mf_page_free(c, a, by_addr);
}

void mf_op_free(struct mf_ctx *c, struct mf_op *op) { free_one(c, op, false); }
void mf_op_free_addr(struct mf_ctx *c, struct mf_op *op) { free_one(c, op, true); }

void mf_note_free(FILE *f, const struct mf_op *op)
{
	if (op->res[0] < 0)
		fprintf(f, "nothing live");
	else
		fprintf(f, "a%ld pfn %#lx order %ld", op->res[0], op->res[1], op->res[2]);
}

void mf_op_touch(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *a = mf_shadow_pick(c->sh, (unsigned long)op->a[0]);
	if (!a) {
		op->res[0] = -1;
		return;
	}
	mf_res_alloc(op, a, a->order);
	mf_shadow_touch(c, a);
	MF_C(c, "\ttouch(%u, %u);\n", c->cur, a->id);
}

void mf_op_free_many(struct mf_ctx *c, struct mf_op *op)
{
	long n = op->a[0], done = 0;
	while (done < n) {
		struct mf_alloc *a = mf_shadow_pick_kind(c->sh, (unsigned long)op->a[1] + (unsigned long)done,
							 1u << MF_K_PAGES);
		if (!a)
			break;
		mf_page_free(c, a, false);
		done++;
	}
	op->res[0] = done;
}

void mf_note_count(FILE *f, const struct mf_op *op)
{
	fprintf(f, "%ld done", op->res[0]);
}

void mf_op_isolate(struct mf_ctx *c, struct mf_op *op)
{
	unsigned long pfn = mf_block_pfn((unsigned long)op->a[0]);
	bool was = false;

	for (unsigned int i = 0; i < mf_pages.nisolated; i++)
		was |= mf_pages.isolated[i] == pfn;
	if (!was && mf_pages.nisolated == MF_MAX_ISOLATED) {
		op->res[0] = -2;
		return;
	}
	int r = mm_isolate_pageblock(c->mm, pfn);
	MF_C(c, "\tdiverged(%u, mm_isolate_pageblock(mm, %#lx) != %d, \"mm_isolate_pageblock's result\");\n",
	     c->cur, pfn, r);
	op->res[0] = r;
	op->res[1] = (long)pfn;
	if (r == 0 && was)
		mf_fail(c, "C1", "mm_isolate_pageblock(%#lx) succeeded on a pageblock already isolated", pfn);
	if (r == 0)
		mf_pages.isolated[mf_pages.nisolated++] = pfn;
}

void mf_note_isolate(FILE *f, const struct mf_op *op)
{
	if (op->res[0] == -2)
		fprintf(f, "skipped: too many isolated");
	else
		fprintf(f, "pfn %#lx: %ld", op->res[1], op->res[0]);
}

void mf_op_unisolate(struct mf_ctx *c, struct mf_op *op)
{
	unsigned long pfn;
	int k = -1;

	if (op->a[1] || !mf_pages.nisolated) {
		pfn = mf_block_pfn((unsigned long)op->a[0]);
		for (unsigned int i = 0; i < mf_pages.nisolated; i++)
			if (mf_pages.isolated[i] == pfn)
				k = (int)i;
	} else {
		k = (int)((unsigned long)op->a[0] % mf_pages.nisolated);
		pfn = mf_pages.isolated[k];
	}
	int r = mm_unisolate_pageblock(c->mm, pfn);
	MF_C(c, "\tdiverged(%u, mm_unisolate_pageblock(mm, %#lx) != %d, \"mm_unisolate_pageblock's result\");\n",
	     c->cur, pfn, r);
	op->res[0] = r;
	op->res[1] = (long)pfn;
	if ((r == 0) != (k >= 0))
		mf_fail(c, "C1", "mm_unisolate_pageblock(%#lx) returned %d but the pageblock %s isolated", pfn, r,
			k >= 0 ? "was" : "was not");
	if (k >= 0)
		mf_pages.isolated[k] = mf_pages.isolated[--mf_pages.nisolated];
}

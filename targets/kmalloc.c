/* SPDX-License-Identifier: MIT */
/*
 * kmalloc.c - fuzz target for the kmalloc family through the public API:
 * kmalloc / kzalloc / kmalloc_array / kcalloc of every size, from 0 and the
 * smallest kmalloc cache through every size class to large allocations
 * (> KMALLOC_MAX_CACHE_SIZE, served by alloc_pages), with the gfp
 * variants (GFP_NOWAIT|__GFP_MEMALLOC among them: below the min watermark
 * it gets reserve pages, and its slabs are pfmemalloc slabs that SLUB's
 * slow path keeps for such requests); krealloc growing, shrinking, to 0 and from NULL; ksize; kfree
 * (also of NULL and ZERO_SIZE_PTR); kmalloc_trace, krealloc_array,
 * kfree_bulk; SLUB's options on the kmalloc caches (slub_debug's request
 * size tracking and kmalloc red zone, init_on_alloc/free, fast paths,
 * failing new slabs), put back before the next input; the bad frees of the
 * kmalloc API (reported once; gcc builds); on any vCPU.
 *
 * Checked on top of the harness's per-op mm_check and shadow (C1: inside
 * the arena, aligned as kmalloc promises (promise()), disjoint from every
 * live allocation, the pattern intact until freed):
 *  - an allocation's memory is in a zone its gfp allows (zone_ok()): a
 *    large one's pages, a small one's slab - kmalloc(GFP_DMA) of any size
 *    is ZONE_DMA memory on a config with a DMA zone (dma-kmalloc-N);
 *  - kmalloc_slab of every gfp has a bucket of the type kmalloc_type()
 *    picks (kmalloc-N, kmalloc-rcl-N, dma-kmalloc-N) and the same size;
 *  - size 0 gives ZERO_SIZE_PTR, never NULL or memory;
 *  - kzalloc / kcalloc memory is zero; ksize >= the size asked;
 *  - kmalloc_array / kcalloc whose n * size overflows return NULL;
 *  - krealloc keeps the data up to min(old, new) size, and on failure
 *    leaves the old allocation as it was;
 *  - none of these reports anything.
 * Teardown frees everything and shrinks every cache.
 */
#include <stdlib.h>
#include <string.h>

#include "debug.h"
#include "common/cgen.h"
#include "common/configs.h"
#include "common/gfp_args.h"
#include "common/harness.h"
#include "common/instance.h"
#include "common/pages.h"
#include "common/shadow.h"
#include "common/slub_opts.h"
#include "mm/cpu.h"
#include "mm/slab.h"

enum { K_OBJ = 0 };

#define MAX_SIZE 70000
/* The instance's caches: the kmalloc caches of three types (kmalloc-N, kmalloc-rcl-N, dma-kmalloc-N). */
#define MAX_CACHES (3 * (KMALLOC_SHIFT_HIGH + 1))

/*
 * GFP_NOWAIT|__GFP_MEMALLOC may take the reserves: its slabs, made below the
 * min watermark, are pfmemalloc slabs.  The last two are caller bugs that
 * kmalloc_fix_flags() reports and mends (expect_fixed()).  New ones go at
 * the end: a committed input's index keeps its meaning.
 */
static const char *const gfps[] = { "GFP_KERNEL", "GFP_ATOMIC", "GFP_DMA", "GFP_KERNEL_RECLAIMABLE",
				    "GFP_NOWAIT", "GFP_NOWAIT|__GFP_MEMALLOC", "GFP_KERNEL|__GFP_DMA32",
				    "GFP_KERNEL|__GFP_HIGHMEM" };
static const gfp_t gfp_val[] = { GFP_KERNEL, GFP_ATOMIC, GFP_KERNEL | __GFP_DMA,
				 GFP_KERNEL | __GFP_RECLAIMABLE, GFP_NOWAIT, GFP_NOWAIT | __GFP_MEMALLOC,
				 GFP_KERNEL | __GFP_DMA32, GFP_KERNEL | __GFP_HIGHMEM };
static const char *const kinds[] = { "kmalloc", "kzalloc", "kmalloc_array", "kcalloc" };
enum { KM_KMALLOC, KM_KZALLOC, KM_ARRAY, KM_CALLOC };
static const char *const sclass[] = { "exact", "pow2", "pow2m1", "pow2p1", "large" };
enum { SC_EXACT, SC_POW2, SC_POW2M1, SC_POW2P1, SC_LARGE };

static int ncpus;
static bool opts_changed;           /* this input changed SLUB's options */
static uint8_t saved[MAX_SIZE + 8];

/* The size an op asks for: exact, or around a power of two (the size classes' edges). */
static size_t size_of(long sel, long cls)
{
	unsigned int sh = (unsigned int)(sel % 17);     /* 2^0 .. 2^16 */
	switch (cls) {
	case SC_POW2:   return (size_t)1 << sh;
	case SC_POW2M1: return ((size_t)1 << sh) - 1;
	case SC_POW2P1: return ((size_t)1 << sh) + 1;
	case SC_LARGE:  return KMALLOC_MAX_CACHE_SIZE + 1 + (size_t)sel % (MAX_SIZE - KMALLOC_MAX_CACHE_SIZE - 1);
	default:        return (size_t)sel;
	}
}

/* The buddy block a large kmalloc of @size takes: PAGE_SIZE << get_order(size). */
static size_t large_block(size_t size)
{
	size_t b = MM_PAGE_SIZE;
	while (b < size)
		b <<= 1;
	return b;
}

/*
 * The alignment kmalloc(size) promises (Documentation/core-api/
 * memory-allocation.rst, 6.6): ARCH_KMALLOC_MINALIGN (8), and for a power
 * of two the size itself - 6.6's create_boot_cache() gives the
 * power-of-two classes align = size, no PAGE_SIZE cap, whatever slub_debug
 * adds, so kmalloc-8k is 8 KiB aligned.  kmalloc-96 and kmalloc-192 are
 * created with align 0: 8 only (red zones move their objects off 32 / 64).
 * A large allocation is a whole buddy block of order get_order(size),
 * aligned to its size as the direct map aligns every block.
 */
static size_t promise(size_t size)
{
	if (size > KMALLOC_MAX_CACHE_SIZE)
		return large_block(size);
	if (size & (size - 1))
		return 8;
	return size < 8 ? 8 : size;
}

/*
 * What a krealloc that kept the object in place promises: only what the
 * old object had - it may sit in a larger class (kmalloc-96 holding a
 * shrunk 64-byte request is not 64-aligned).  A large one stays in its
 * block, at least as large as the block @size needs and aligned to it.
 */
static size_t promise_in_place(size_t size)
{
	return size > KMALLOC_MAX_CACHE_SIZE ? large_block(size) : 8;
}

static void to_cpu(struct mf_ctx *c, long cpu)
{
	mf_cgen_call(c, "(void)mm_cpu_attach(mm, %d);", (int)(cpu % ncpus));
	int r = mm_cpu_attach(c->mm, (int)(cpu % ncpus));
	MF_C(c, "\tmm_cpu_attach(mm, %d);\n", (int)(cpu % ncpus));
	if (r < 0)
		mf_fail(c, "C1", "mm_cpu_attach(%ld) failed: %d", cpu % ncpus, r);
}

static void expect_quiet(struct mf_ctx *c, const char *what)
{
	MF_C(c, "\tquiet(%u, \"%s\");\n", c->cur, what);
	if (mm_nr_reports(c->mm) != c->reports_before)
		mf_fail(c, "C1", "%s reported: %s", what, mm_last_report(c->mm)->msg);
}

/*
 * The reports an allocation may make.  kmalloc_fix_flags() (mm/
 * slab_common.c, 6.6): a kmalloc gfp with __GFP_DMA32 or __GFP_HIGHMEM is a
 * caller bug, warned about and served without them.  A large kmalloc warns
 * every time (__kmalloc_large_node() fixes the gfp before it asks for
 * pages), a small one only when it makes a new slab (new_slab()): as many
 * reports as the bucket's ALLOC_SLAB grew by, at most one where statistics
 * are compiled out or the allocation failed.  And a large kmalloc past
 * MAX_ORDER gets alloc_pages()'s warning (none of the gfps here has
 * __GFP_NOWARN) and NULL.  fix_watch() takes the count before the call,
 * expect_fixed() checks after it; any other report is a finding, as in
 * expect_quiet().
 */
struct fix_watch {
	struct kmem_cache *s;           /* the bucket of a small allocation */
	unsigned long slabs;            /* its ALLOC_SLAB before the call */
	bool stats;                     /* statistics are compiled in */
	size_t size;                    /* 0: nothing is allocated, nothing may be reported */
	gfp_t gfp;
};

/* The bucket's ALLOC_SLAB count; *@stats (where given): whether statistics are compiled in. */
static unsigned long alloc_slabs(struct kmem_cache *s, bool *stats)
{
	unsigned long st[NR_SLUB_STAT_ITEMS];
	bool have = s && kmem_cache_get_stats(s, st);
	if (stats)
		*stats = have;
	return have ? st[ALLOC_SLAB] : 0;
}

static struct fix_watch fix_watch(struct mf_ctx *c, size_t size, gfp_t gfp)
{
	struct fix_watch w = { .size = size, .gfp = gfp };
	if ((gfp & GFP_SLAB_BUG_MASK) && size && size <= KMALLOC_MAX_CACHE_SIZE) {
		w.s = kmalloc_slab(c->mm, size, gfp);
		w.slabs = alloc_slabs(w.s, &w.stats);
	}
	return w;
}

static void expect_fixed(struct mf_ctx *c, const char *what, const struct fix_watch *w, const void *p)
{
	bool big = w->size > KMALLOC_MAX_CACHE_SIZE &&
		   large_block(w->size) > ((size_t)MM_PAGE_SIZE << mf_config(c)->max_order);
	if ((!(w->gfp & GFP_SLAB_BUG_MASK) && !big) || !w->size) {
		expect_quiet(c, what);
		return;
	}
	unsigned long got = mm_nr_reports(c->mm) - c->reports_before, lo = 0, hi = 1;
	const char *want = "at most one (kmalloc_fix_flags() in a failed allocation)";
	if (big) {
		lo = hi = (w->gfp & GFP_SLAB_BUG_MASK) ? 2 : 1;
		want = lo == 2 ? "two (kmalloc_fix_flags(), then alloc_pages() past MAX_ORDER)"
			       : "one (alloc_pages() past MAX_ORDER)";
		MF_C(c, "\texpect(%u, ret == NULL, \"%s of %zu bytes is past MAX_ORDER: NULL\");\n", c->cur, what, w->size);
		if (p)
			mf_fail(c, "C1", "%s of %zu bytes (past MAX_ORDER %u) returned %p", what, w->size,
				mf_config(c)->max_order, p);
	} else if (!p)
		;               /* failed: reported if it got as far as the fix */
	else if (w->size > KMALLOC_MAX_CACHE_SIZE)
		lo = 1, want = "one (kmalloc_fix_flags() in a large kmalloc)";
	else if (w->stats) {
		lo = hi = alloc_slabs(w->s, NULL) - w->slabs;
		want = lo ? "one (kmalloc_fix_flags() in new_slab())" : "none (no new slab)";
	} else
		want = "at most one (kmalloc_fix_flags(); no statistics to tell a new slab)";
	const struct mm_report *r = got ? mm_last_report(c->mm) : NULL;
	MF_C(c, "\texpect(%u, mm_nr_reports(mm) - rep0 == %lu, \"%s of %zu bytes with gfp %#x: %lu report(s)\");\n"
	     "\trep0 = mm_nr_reports(mm);\n", c->cur, got, what, w->size, w->gfp, got);
	if (got < lo || got > hi)
		mf_fail(c, "C1", "%s of %zu bytes with gfp %#x: %lu report(s), expected %s%s%s", what,
			w->size, w->gfp, got, want, r ? ": last " : "", r ? r->msg : "");
	if (r && big && strcmp(r->kind, "bad_alloc"))
		mf_fail(c, "C1", "%s of %zu bytes past MAX_ORDER: the last report is %s, not alloc_pages()'s: %s", what,
			w->size, r->kind, r->msg);
	else if (r && !big && (strcmp(r->kind, "bad_gfp") || !strstr(r->msg, "Unexpected gfp")))
		mf_fail(c, "C1", "%s with gfp %#x: a %s report, not kmalloc_fix_flags()'s: %s", what, w->gfp, r->kind,
			r->msg);
	mf_reports_accounted(c);
}

/* A large allocation holds pages: B4 counts them through the shadow. */
static void set_pages(struct mf_ctx *c, struct mf_alloc *a, size_t ks)
{
	a->aux = ks;
	if (ks > KMALLOC_MAX_CACHE_SIZE) {
		struct page *page = virt_to_page(c->mm, (void *)a->addr);
		if (!page || a->addr % MM_PAGE_SIZE)
			mf_fail(c, "C1", "large kmalloc %p is not a page of this memory", (void *)a->addr);
		a->pfn = page_to_pfn(c->mm, page);
		a->nr_pages = ks / MM_PAGE_SIZE;
		MF_C(c, "\thold_pages(%u, %u, o%u, %lu);\n", c->cur, a->id, a->id, a->nr_pages);
	}
}

/*
 * Whether __GFP_DMA selects the dma-kmalloc-N caches: on an instance with
 * a populated ZONE_DMA only (allocator/slab/kmalloc.c; elsewhere a small
 * kmalloc(GFP_DMA) is served by kmalloc-N, as without CONFIG_ZONE_DMA).
 */
static bool has_dma(struct mf_ctx *c)
{
	return mm_zone(c->mm, ZONE_DMA) != NULL;
}

/*
 * A new allocation is in a zone @gfp allows: a large one's pages
 * (alloc_pages(gfp | __GFP_COMP)), a small one's slab (the kmalloc cache
 * kmalloc_type() picks: dma-kmalloc-N has ZONE_DMA slabs, the others take
 * GFP_KERNEL's zones, the caller's zone bits never reach new_slab()).  So
 * kmalloc(GFP_DMA) of any size is ZONE_DMA memory - small ones only on a
 * config with a DMA zone: without one __GFP_DMA picks kmalloc-N.  The C
 * file checks a pfn bound: the end of the highest populated zone allowed.
 */
static void zone_ok(struct mf_ctx *c, const struct mf_alloc *a, gfp_t gfp, const char *what)
{
	const struct mm_config *cfg = mf_config(c);
	bool large = a->nr_pages != 0;
	unsigned long first = large ? a->pfn : page_to_pfn(c->mm, virt_to_page(c->mm, (void *)a->addr));
	unsigned long last = large ? a->pfn + a->nr_pages - 1
				   : page_to_pfn(c->mm, virt_to_page(c->mm, (char *)a->addr + a->len - 1));
	int hz, z = mf_zone_of_pfn(cfg, first);
	unsigned long limit = 0;

	gfp &= ~GFP_SLAB_BUG_MASK;      /* kmalloc_fix_flags() took them away */
	hz = mf_gfp_zone(large || has_dma(c) ? gfp : gfp & ~__GFP_DMA);
	for (int k = 0; k <= hz && k < MAX_NR_ZONES; k++)
		if (cfg->zones[k].end_pfn > cfg->zones[k].start_pfn && cfg->zones[k].end_pfn > limit)
			limit = cfg->zones[k].end_pfn;
	MF_C(c, "\texpect(%u, page_to_pfn(mm, virt_to_page(mm, (char *)o%u + %zu)) < %#lxUL, \"a %s %s's memory is in a "
	     "zone its gfp allows (%s or below)\");\n", c->cur, a->id, a->len - 1, limit, large ? "large" : "small", what,
	     mf_zone_name(hz));
	if (z < 0 || z > hz || mf_zone_of_pfn(cfg, last) != z)
		mf_fail(c, "C1", "%s %s of %zu bytes with gfp %#x: pfn %#lx .. %#lx is in zone %s, the gfp allows %s or below",
			large ? "large" : "small", what, a->len, gfp, first, last, mf_zone_name(z), mf_zone_name(hz));
}

/*
 * Check what kmalloc promises about @p for @size, then track it.  @in_place:
 * krealloc kept the old object (its alignment and zone are the old one's).
 */
static struct mf_alloc *take(struct mf_ctx *c, void *p, size_t size, bool zeroed, const char *what, gfp_t gfp,
			     bool in_place)
{
	size_t align = in_place ? promise_in_place(size) : promise(size);

	if (size == 0) {
		MF_C(c, "\texpect(%u, ret == ZERO_SIZE_PTR, \"%s of 0 bytes returns ZERO_SIZE_PTR\");\n", c->cur, what);
		if (p != ZERO_SIZE_PTR)
			mf_fail(c, "C1", "%s of 0 bytes returned %p, not ZERO_SIZE_PTR", what, p);
		return NULL;
	}
	unsigned int id = c->sh->next_id;
	MF_C(c, "\tdiverged(%u, !ret, \"the allocation failed; in the fuzz run it succeeded\");\n"
	     "\texpect(%u, !ZERO_OR_NULL_PTR(ret) && ksize(mm, ret) >= %zu, \"%s returns memory of at least the size\");\n"
	     "\tvoid *o%u = ret;\n\texpect(%u, ((uintptr_t)o%u & %zu) == 0, \"aligned as kmalloc promises\");\n",
	     c->cur, c->cur, size, what, id, c->cur, id, align - 1);
	if (zeroed)
		MF_C(c, "\texpect_zero(%u, o%u, %zu);\n", c->cur, id, size);
	MF_C(c, "\ttrack(%u, %u, o%u, %zu);\n", c->cur, id, id, size);
	if (ZERO_OR_NULL_PTR(p))
		mf_fail(c, "C1", "%s of %zu bytes returned %p", what, size, p);
	size_t ks = ksize(c->mm, p);
	if (ks < size)
		mf_fail(c, "C1", "%s of %zu bytes: ksize is %zu", what, size, ks);
	struct mf_alloc *a = mf_shadow_add(c, K_OBJ, p, size, align, zeroed);
	set_pages(c, a, ks);
	if (!in_place)
		zone_ok(c, a, gfp, what);
	return a;
}

static void note_alloc(FILE *f, const struct mf_op *op)
{
	if (op->res[0] == -1)
		fprintf(f, "no candidate");
	else if (op->res[0] == -2)
		fprintf(f, "skipped: the shadow is full");
	else if (op->res[0] == -3)
		fprintf(f, "NULL");
	else if (op->res[0] == -4)
		fprintf(f, "ZERO_SIZE_PTR");
	else if (op->res[0] == -5)
		fprintf(f, "overflow: NULL");
	else
		fprintf(f, "a%ld, %ld bytes, ksize %ld", op->res[0], op->res[1], op->res[2]);
}

static void res_alloc(struct mf_op *op, const struct mf_alloc *a, size_t size, void *p)
{
	op->res[0] = a ? (long)a->id : !p ? -3 : -4;
	op->res[1] = (long)size;
	op->res[2] = a ? (long)a->aux : 0;
}

static void op_alloc(struct mf_ctx *c, struct mf_op *op)
{
	int kind = (int)op->a[0];
	size_t size = size_of(op->a[1], op->a[2]), n = (size_t)op->a[3];
	gfp_t gfp = gfp_val[op->a[4]];
	struct fix_watch w;
	void *p;

	if (mf_shadow_full(c->sh)) {
		op->res[0] = -2;
		return;
	}
	to_cpu(c, op->a[5]);
	if (kind == KM_ARRAY || kind == KM_CALLOC) {
		if (op->a[6]) {      /* n * size overflows */
			size_t es = size > 2 ? size : 2;
			n = SIZE_MAX / es + 1 + n;
			p = kind == KM_ARRAY ? kmalloc_array(c->mm, n, es, gfp) : kcalloc(c->mm, n, es, gfp);
			MF_C(c, "\texpect(%u, %s(mm, %zuUL, %zu, %#x) == NULL, \"n * size overflows: NULL\");\n", c->cur,
			     kinds[kind], n, es, gfp);
			if (p)
				mf_fail(c, "C1", "%s(%zu, %zu) overflows but returned %p", kinds[kind], n, es, p);
			expect_quiet(c, kinds[kind]);
			op->res[0] = -5;
			return;
		}
		size_t es = n ? size / n : size;
		if (n && es * n > MAX_SIZE)
			es = MAX_SIZE / n;
		w = fix_watch(c, n * es, gfp);
		mf_cgen_call(c, "(void)%s(mm, %zu, %zu, %#x);", kinds[kind], n, es, gfp);
		p = kind == KM_ARRAY ? kmalloc_array(c->mm, n, es, gfp) : kcalloc(c->mm, n, es, gfp);
		MF_C(c, "\tret = %s(mm, %zu, %zu, %#x);\n", kinds[kind], n, es, gfp);
		size = n * es;
	} else {
		w = fix_watch(c, size, gfp);
		mf_cgen_call(c, "(void)%s(mm, %zu, %#x);", kinds[kind], size, gfp);
		p = kind == KM_KZALLOC ? kzalloc(c->mm, size, gfp) : kmalloc(c->mm, size, gfp);
		MF_C(c, "\tret = %s(mm, %zu, %#x);\n", kinds[kind], size, gfp);
	}
	expect_fixed(c, kinds[kind], &w, p);
	if (!p && size) {
		MF_C(c, "\tdiverged(%u, ret != NULL, \"the allocation succeeded; in the fuzz run it failed\");\n", c->cur);
		res_alloc(op, NULL, size, p);
		return;
	}
	struct mf_alloc *a = take(c, p, size, kind == KM_KZALLOC || kind == KM_CALLOC, kinds[kind], gfp, false);
	res_alloc(op, a, size, p);
}

static void op_free(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *a = mf_shadow_pick(c->sh, (unsigned long)op->a[0]);
	to_cpu(c, op->a[1]);
	if (!a) {
		mf_cgen_call(c, "kfree(mm, %s);", op->a[2] ? "ZERO_SIZE_PTR" : "NULL");
		kfree(c->mm, op->a[2] ? ZERO_SIZE_PTR : NULL);
		MF_C(c, "\tkfree(mm, %s);\n", op->a[2] ? "ZERO_SIZE_PTR" : "NULL");
		expect_quiet(c, "kfree of NULL or ZERO_SIZE_PTR");
		op->res[0] = -1;
		return;
	}
	void *p = (void *)a->addr;
	op->res[0] = a->id;
	op->res[1] = (long)a->len;
	op->res[2] = (long)a->aux;
	MF_C(c, "\tuntrack(%u, %u);\n\tkfree(mm, o%u);\n", c->cur, a->id, a->id);
	mf_shadow_remove(c, a);
	kfree(c->mm, p);
	expect_quiet(c, "kfree");
}

static void op_ksize(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *a = mf_shadow_pick(c->sh, (unsigned long)op->a[0]);
	op->res[0] = -1;
	if (!a)
		return;
	mf_cgen_call(c, "(void)ksize(mm, o%u);", a->id);
	size_t ks = ksize(c->mm, (void *)a->addr);
	MF_C(c, "\texpect(%u, ksize(mm, o%u) == %lu, \"ksize is at least the size, and stable\");\n\tverify(%u, %u);\n",
	     c->cur, a->id, a->aux, c->cur, a->id);
	if (ks < a->len || ks != a->aux)
		mf_fail(c, "C1", "ksize of a%u (%zu bytes) is %zu, was %lu", a->id, a->len, ks, a->aux);
	mf_shadow_verify(c, a);
	op->res[0] = a->id;
	op->res[1] = (long)a->len;
	op->res[2] = (long)ks;
}

static void op_touch(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *a = mf_shadow_pick(c->sh, (unsigned long)op->a[0]);
	op->res[0] = -1;
	if (!a)
		return;
	mf_shadow_touch(c, a);
	MF_C(c, "\ttouch(%u, %u);\n", c->cur, a->id);
	op->res[0] = a->id;
	op->res[1] = (long)a->len;
	op->res[2] = (long)a->aux;
}

static void op_krealloc(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *a = op->a[4] ? NULL : mf_shadow_pick(c->sh, (unsigned long)op->a[0]);
	size_t size = size_of(op->a[1], op->a[2]);
	gfp_t gfp = gfp_val[op->a[3]];

	to_cpu(c, op->a[5]);
	if (!a) {
		if (mf_shadow_full(c->sh)) {
			op->res[0] = -2;
			return;
		}
		struct fix_watch w = fix_watch(c, size, gfp);
		mf_cgen_call(c, "ret = krealloc(mm, NULL, %zu, %#x);", size, gfp);
		void *p = krealloc(c->mm, NULL, size, gfp);
		MF_C(c, "\tret = krealloc(mm, NULL, %zu, %#x);\n", size, gfp);
		expect_fixed(c, "krealloc(NULL)", &w, p);
		if (!p && size) {
			MF_C(c, "\tdiverged(%u, ret != NULL, \"the allocation succeeded; in the fuzz run it failed\");\n", c->cur);
			res_alloc(op, NULL, size, p);
			return;
		}
		res_alloc(op, take(c, p, size, false, "krealloc(NULL)", gfp, false), size, p);
		return;
	}
	void *old = (void *)a->addr;
	size_t keep = a->len < size ? a->len : size;
	mf_shadow_verify(c, a);
	memcpy(saved, old, keep);
	unsigned int old_id = a->id;
	MF_C(c, "\tmemcpy(saved, o%u, %zu);\n\tuntrack(%u, %u);\n\tret = krealloc(mm, o%u, %zu, %#x);\n", old_id, keep, c->cur,
	     old_id, old_id, size, gfp);
	mf_shadow_remove(c, a);
	struct fix_watch w = fix_watch(c, size, gfp);
	void *p = krealloc(c->mm, old, size, gfp);
	if (p == old)
		w.size = 0;     /* kept in place: nothing was allocated */
	expect_fixed(c, "krealloc", &w, p);
	if (size == 0) {
		MF_C(c, "\texpect(%u, ret == ZERO_SIZE_PTR || ret == NULL, \"krealloc(p, 0) frees\");\n", c->cur);
		if (p != ZERO_SIZE_PTR && p != NULL)
			mf_fail(c, "C1", "krealloc(p, 0) returned %p: it frees and returns ZERO_SIZE_PTR", p);
		op->res[0] = -4;
		return;
	}
	if (!p) {
		/* Failed: the old allocation stays, unchanged. */
		MF_C(c, "\tdiverged(%u, ret != NULL, \"krealloc succeeded; in the fuzz run it failed\");\n"
		     "\tkept(%u, o%u, %zu, \"a failed krealloc leaves the old allocation alone\");\n"
		     "\tvoid *o%u = o%u;\n\ttrack(%u, %u, o%u, %zu);\n", c->cur, c->cur, old_id, keep,
		     c->sh->next_id, old_id, c->cur, c->sh->next_id, c->sh->next_id, keep ? keep : 1);
		if (memcmp(saved, old, keep))
			mf_fail(c, "C1", "a failed krealloc changed the old allocation");
		struct mf_alloc *b = mf_shadow_add(c, K_OBJ, old, keep ? keep : 1, 8, false);
		set_pages(c, b, ksize(c->mm, old));
		op->res[0] = -3;
		return;
	}
	MF_C(c, "\tkept(%u, ret, %zu, \"krealloc keeps the data\");\n", c->cur, keep);
	if (memcmp(saved, p, keep)) {
		size_t i = 0;
		while (((uint8_t *)p)[i] == saved[i])
			i++;
		mf_fail(c, "C1", "krealloc from %zu to %zu bytes lost data at offset %zu (%p -> %p)",
			keep == size ? keep : keep, size, i, old, p);
	}
	struct mf_alloc *b = take(c, p, size, false, "krealloc", gfp, p == old);
	res_alloc(op, b, size, p);
}

/* The name prefix of the bucket kmalloc_slab(size, gfp) gives (kmalloc_type() of 6.6, no memcg). */
static const char *type_prefix(struct mf_ctx *c, gfp_t gfp)
{
	if ((gfp & __GFP_DMA) && has_dma(c))
		return "dma-kmalloc-";
	return gfp & __GFP_RECLAIMABLE ? "kmalloc-rcl-" : "kmalloc-";
}

static void op_roundup(struct mf_ctx *c, struct mf_op *op)
{
	size_t size = size_of(op->a[0], op->a[1]);
	mf_cgen_call(c, "(void)kmalloc_size_roundup(mm, %zu);", size);
	size_t r = kmalloc_size_roundup(c->mm, size);
	MF_C(c, "\troundup(%u, %zu, %d);\n", c->cur, size,
	     size && size <= KMALLOC_MAX_CACHE_SIZE && r >= ((size_t)MM_PAGE_SIZE << mf_config(c)->max_order));
	if (size && r < size)
		mf_fail(c, "C1", "kmalloc_size_roundup(%zu) = %zu", size, r);
	if (size && size <= KMALLOC_MAX_CACHE_SIZE) {
		struct kmem_cache *s = kmalloc_slab(c->mm, size, GFP_KERNEL);
		/* No bucket only when one object (with any debug metadata) may need a larger slab than max_order allows. */
		bool none_ok = !s && r >= ((size_t)MM_PAGE_SIZE << mf_config(c)->max_order);
		if (!none_ok && (!s || kmem_cache_size(s) < size))
			mf_fail(c, "C1", "kmalloc_slab(%zu) is %s (%u bytes)", size, s ? kmem_cache_name(s) : "NULL",
				s ? kmem_cache_size(s) : 0);
		/* Every type has the same buckets; each gfp picks its type's. */
		for (size_t k = 0; s && k < sizeof(gfp_val) / sizeof(gfp_val[0]); k++) {
			struct kmem_cache *t = kmalloc_slab(c->mm, size, gfp_val[k]);
			const char *prefix = type_prefix(c, gfp_val[k]);
			const char *name = t ? kmem_cache_name(t) : "NULL";
			if (!t || kmem_cache_size(t) != kmem_cache_size(s) || strncmp(name, prefix, strlen(prefix)) ||
			    name[strlen(prefix)] < '0' || name[strlen(prefix)] > '9')
				mf_fail(c, "C1", "kmalloc_slab(%zu, %s) is %s (%u bytes), not the %s bucket of %s", size, gfps[k],
					name, t ? kmem_cache_size(t) : 0, prefix, kmem_cache_name(s));
		}
	}
	op->res[0] = (long)r;
}

static void note_roundup(FILE *f, const struct mf_op *op) { fprintf(f, "%ld", op->res[0]); }

static void op_cpu(struct mf_ctx *c, struct mf_op *op) { to_cpu(c, op->a[0]); }

static void op_shrink(struct mf_ctx *c, struct mf_op *op)
{
	(void)op;
	/* The C text first: a crash in one of the shrinks makes it too. */
	MF_C(c, "\tfor (struct kmem_cache *s = kmem_cache_next(mm, NULL); s; s = kmem_cache_next(mm, s))\n"
	     "\t\tkmem_cache_shrink(s);\n");
	for (struct kmem_cache *s = kmem_cache_next(c->mm, NULL); s; s = kmem_cache_next(c->mm, s))
		kmem_cache_shrink(s);
}

/*
 * kfree_bulk(): up to n live allocations from idx on (large ones too), with
 * NULL / ZERO_SIZE_PTR holes.  A hole is a caller bug in 6.6 (the kernel
 * faults on it): each one must be reported exactly once, and every real
 * entry freed all the same.
 */
static void op_free_bulk(struct mf_ctx *c, struct mf_op *op)
{
	void *p[64];
	size_t n = 0;
	unsigned int nholes = 0;
	unsigned long holes = (unsigned long)op->a[3];

	to_cpu(c, op->a[2]);
	for (unsigned long k = 0; k < (unsigned long)op->a[0] && mf_shadow_count(c->sh) && n < 62; k++) {
		struct mf_alloc *a = mf_shadow_pick(c->sh, (unsigned long)op->a[1] + k);
		if (holes >> (k % 32) & 1) {
			p[n++] = k & 1 ? ZERO_SIZE_PTR : NULL;
			nholes++;
			MF_C(c, "\tbulk[%zu] = %s;\n", n - 1, k & 1 ? "ZERO_SIZE_PTR" : "NULL");
		}
		MF_C(c, "\tbulk[%zu] = o%u;\n\tuntrack(%u, %u);\n", n, a->id, c->cur, a->id);
		p[n++] = (void *)a->addr;
		mf_shadow_remove(c, a);
	}
	mf_cgen_call(c, "kfree_bulk(mm, %zu, bulk);", n);
	kfree_bulk(c->mm, n, p);
	MF_C(c, "\tkfree_bulk(mm, %zu, bulk);\n", n);
	op->res[0] = (long)n;
	if (!nholes) {
		expect_quiet(c, "kfree_bulk");
		return;
	}
	unsigned long got = mm_nr_reports(c->mm) - c->reports_before;
	MF_C(c, "\texpect(%u, mm_nr_reports(mm) - rep0 == %u, \"each NULL / ZERO_SIZE_PTR entry of kfree_bulk is "
	     "reported once\");\n\trep0 = mm_nr_reports(mm);\n", c->cur, nholes);
	if (got != nholes)
		mf_fail(c, "C1", "kfree_bulk with %u NULL / ZERO_SIZE_PTR entries: %lu reports%s%s", nholes, got,
			got ? ": last " : "", got ? mm_last_report(c->mm)->msg : "");
	mf_reports_accounted(c);
}

static void note_n(FILE *f, const struct mf_op *op) { fprintf(f, "%ld entries", op->res[0]); }

/* kmalloc_trace(): kmalloc of size bytes from the bucket kmalloc_slab(size, gfp) gives; NULL past its size. */
static void op_trace(struct mf_ctx *c, struct mf_op *op)
{
	size_t size = 1 + (size_t)op->a[0] % KMALLOC_MAX_CACHE_SIZE;
	gfp_t gfp = gfp_val[op->a[1]];
	struct kmem_cache *s = kmalloc_slab(c->mm, size, gfp);

	op->res[0] = -1;
	if (!s) {
		MF_C(c, "\tdiverged(%u, kmalloc_slab(mm, %zu, %#x) != NULL, \"kmalloc_slab's bucket\");\n", c->cur, size,
		     gfp);
		return;
	}
	if (mf_shadow_full(c->sh)) {
		op->res[0] = -2;
		return;
	}
	to_cpu(c, op->a[2]);
	MF_C(c, "\texpect(%u, !kmalloc_trace(kmalloc_slab(mm, %zu, %#x), %#x, kmem_cache_size(kmalloc_slab(mm, %zu, %#x)) + 1) "
	     "&& !kmalloc_trace(NULL, %#x, %zu), \"kmalloc_trace past the bucket's size, or of no cache, is NULL\");\n"
	     "\tret = kmalloc_trace(kmalloc_slab(mm, %zu, %#x), %#x, %zu);\n", c->cur, size, gfp, gfp, size, gfp, gfp, size,
	     size, gfp, gfp, size);
	if (kmalloc_trace(s, gfp, (size_t)kmem_cache_size(s) + 1) || kmalloc_trace(NULL, gfp, size))
		mf_fail(c, "C1", "kmalloc_trace past %s's size (or of no cache) returned memory", kmem_cache_name(s));
	struct fix_watch w = fix_watch(c, size, gfp);
	void *p = kmalloc_trace(s, gfp, size);
	expect_fixed(c, "kmalloc_trace", &w, p);
	if (!p) {
		MF_C(c, "\tdiverged(%u, ret != NULL, \"the allocation succeeded; in the fuzz run it failed\");\n", c->cur);
		res_alloc(op, NULL, size, p);
		return;
	}
	if (kmalloc_slab(c->mm, ksize(c->mm, p), gfp) != s && ksize(c->mm, p) <= KMALLOC_MAX_CACHE_SIZE &&
	    ksize(c->mm, p) != kmem_cache_size(s))
		mf_fail(c, "C1", "kmalloc_trace(%s, %zu): ksize %zu", kmem_cache_name(s), size, ksize(c->mm, p));
	res_alloc(op, take(c, p, size, false, "kmalloc_trace", gfp, false), size, p);
}

/* krealloc_array(): n * size overflowing gives NULL and leaves the old allocation alone; else krealloc. */
static void op_krealloc_array(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *a = op->a[4] ? NULL : mf_shadow_pick(c->sh, (unsigned long)op->a[0]);
	size_t n = (size_t)op->a[1], es = 1 + (size_t)op->a[2];
	gfp_t gfp = gfp_val[op->a[3]];

	to_cpu(c, op->a[5]);
	if (op->a[6]) {
		es++;                   /* at least 2: SIZE_MAX / 1 + 1 would wrap to 0 */
		n = SIZE_MAX / es + 1 + n;
		if (a)
			mf_shadow_verify(c, a);
		if (a)
			MF_C(c, "\tverify(%u, %u);\n", c->cur, a->id);
		char obj[24];
		snprintf(obj, sizeof(obj), a ? "o%u" : "NULL", a ? a->id : 0);
		MF_C(c, "\texpect(%u, krealloc_array(mm, %s, %zuUL, %zu, %#x) == NULL, \"n * size overflows: NULL\");\n",
		     c->cur, obj, n, es, gfp);
		if (a)
			MF_C(c, "\tverify(%u, %u);   /* an overflowing krealloc_array leaves it alone */\n", c->cur, a->id);
		void *p = krealloc_array(c->mm, a ? (void *)a->addr : NULL, n, es, gfp);
		expect_quiet(c, "krealloc_array");
		if (p)
			mf_fail(c, "C1", "krealloc_array(%zu, %zu) overflows but returned %p", n, es, p);
		if (a)
			mf_shadow_verify(c, a);
		op->res[0] = -5;
		return;
	}
	if (a || mf_shadow_full(c->sh)) {
		op->res[0] = -2;
		return;
	}
	struct fix_watch w = fix_watch(c, n * es, gfp);
	mf_cgen_call(c, "ret = krealloc_array(mm, NULL, %zu, %zu, %#x);", n, es, gfp);
	void *p = krealloc_array(c->mm, NULL, n, es, gfp);
	MF_C(c, "\tret = krealloc_array(mm, NULL, %zu, %zu, %#x);\n", n, es, gfp);
	expect_fixed(c, "krealloc_array(NULL)", &w, p);
	if (!p && n * es != 0) {
		MF_C(c, "\tdiverged(%u, ret != NULL, \"the allocation succeeded; in the fuzz run it failed\");\n", c->cur);
		res_alloc(op, NULL, n * es, p);
		return;
	}
	res_alloc(op, take(c, p, n * es, false, "krealloc_array(NULL)", gfp, false), n * es, p);
}

/*
 * Bad frees of the kmalloc API (reported once each, nothing freed): an
 * address outside the instance's memory, an interior pointer of a large
 * kmalloc, an order-0 page from alloc_pages; krealloc of the same; ksize
 * of them is 0.  In ASan builds KASAN stops the program at the first, so
 * the op is skipped there (the gcc replay build checks it).
 */
static const char *const bad_kinds[] = { "outside", "interior_large", "page", "krealloc_outside", "krealloc_page",
					 "ksize" };
enum { KB_OUTSIDE, KB_INTERIOR, KB_PAGE, KB_KREALLOC_OUTSIDE, KB_KREALLOC_PAGE, KB_KSIZE };
static uint64_t not_ours[4];

static void op_bad_kfree(struct mf_ctx *c, struct mf_op *op)
{
	int kind = (int)op->a[0];
	struct page *page = NULL;
	void *p = NULL;
	unsigned int want = 1;

	op->res[0] = -1;
#ifdef MM_ASAN         /* debug.h */
	MF_C(c, "\t/* skipped in this (ASan) build: KASAN stops at bad frees */\n");
	op->res[0] = -5;
	(void)kind; (void)page; (void)p; (void)want;
	return;
#endif
	to_cpu(c, op->a[1]);
	if (kind == KB_INTERIOR) {
		for (unsigned int k = 0; k < mf_shadow_count(c->sh) && !p; k++) {
			struct mf_alloc *a = mf_shadow_pick(c->sh, (unsigned long)op->a[2] + k);
			if (a->aux > KMALLOC_MAX_CACHE_SIZE) {
				p = (char *)a->addr + 8 + (unsigned long)op->a[3] % (a->aux - 8);
				MF_C(c, "\tbad = (char *)o%u + %lu;   /* inside a large kmalloc */\n", a->id,
				     8 + (unsigned long)op->a[3] % (a->aux - 8));
			}
		}
		if (!p)
			return;
	} else if (kind == KB_PAGE || kind == KB_KREALLOC_PAGE) {
		page = alloc_pages(c->mm, GFP_KERNEL, 0);
		MF_C(c, "\tbad_page = alloc_pages(mm, GFP_KERNEL, 0);\n\tdiverged(%u, (bad_page == NULL) != %d, \"alloc_pages' result\");\n",
		     c->cur, !page);
		if (!page) {
			op->res[0] = -3;
			return;
		}
		p = page_address(c->mm, page);
		MF_C(c, "\tbad = page_address(mm, bad_page);\n");
	} else {
		p = &not_ours[1];
		MF_C(c, "\tbad = &not_ours[1];   /* outside the instance */\n");
	}
	MF_C(c, "\trep0 = mm_nr_reports(mm);\n");
	unsigned long before = mm_nr_reports(c->mm);
	switch (kind) {
	case KB_OUTSIDE:
	case KB_INTERIOR:
	case KB_PAGE:
		mf_cgen_call(c, "kfree(mm, bad);");
		kfree(c->mm, p);
		MF_C(c, "\tkfree(mm, bad);\n");
		break;
	case KB_KREALLOC_OUTSIDE:
	case KB_KREALLOC_PAGE:
		MF_C(c, "\texpect(%u, krealloc(mm, bad, %zu, GFP_KERNEL) == NULL, \"krealloc of what kmalloc did not "
		     "return fails\");\n", c->cur, 1 + (size_t)op->a[3]);
		if (krealloc(c->mm, p, 1 + (size_t)op->a[3], GFP_KERNEL))
			mf_fail(c, "C1", "krealloc of %p, not a kmalloc object, returned memory", p);
		break;
	case KB_KSIZE:
		want = 0;
		MF_C(c, "\texpect(%u, ksize(mm, &not_ours[1]) == 0, \"ksize of a foreign address is 0\");\n", c->cur);
		if (ksize(c->mm, &not_ours[1]))
			mf_fail(c, "C1", "ksize of an address outside the instance is not 0");
		break;
	}
	unsigned long n = mm_nr_reports(c->mm) - before;
	op->res[0] = (long)n;
	MF_C(c, "\texpect(%u, mm_nr_reports(mm) - rep0 == %u, \"the bad kfree (%s) is reported %s\");\n", c->cur, want,
	     bad_kinds[kind], want ? "once" : "never");
	if (page)
		MF_C(c, "\t__free_pages(mm, bad_page, 0);\n");
	MF_C(c, "\trep0 = mm_nr_reports(mm);\n");
	if (n != want)
		mf_fail(c, "C1", "bad kfree (%s) of %p: %lu reports, expected %u%s%s", bad_kinds[kind], p, n, want,
			n ? ": last " : "", n ? mm_last_report(c->mm)->msg : "");
	if (page)
		__free_pages(c->mm, page, 0);
	mf_reports_accounted(c);
}

static void note_bad(FILE *f, const struct mf_op *op)
{
	if (op->res[0] == -1)
		fprintf(f, "no candidate");
	else if (op->res[0] == -3)
		fprintf(f, "no page");
	else if (op->res[0] == -5)
		fprintf(f, "skipped: KASAN stops at bad frees in ASan builds");
	else
		fprintf(f, "%ld report(s)", op->res[0]);
}

/*
 * SLUB's options (mm_slub_configure) on the kmalloc caches: slub_debug
 * (red zones and user tracking add the request-size tracking and the
 * kmalloc red zone), the fast paths, init_on_alloc/free, orders, failing
 * new slabs ...  Layout options reach only the buckets that hold no slab
 * (-EBUSY for the others); every bucket keeps its size, and an applied
 * slub_fastpath= is SLUB's fast path after (mf_slub_options_check()).  The input's
 * teardown puts the options back (common/slub_opts.c).  The text
 * comes from common/slub_opts.c; these are the cache lists it names.
 */
static const char *const dbg_lists[7] = { "all", "kmalloc-64", "kmalloc-8,kmalloc-192", "kmalloc-*", "kmalloc-1*",
					 "kmalloc-8k,kmalloc-96", "nomatch" };

static void op_options(struct mf_ctx *c, struct mf_op *op)
{
	char buf[1024], err[256];
	struct mf_opt_effect e;
	unsigned int size[MAX_CACHES + 1], i = 0;

	mf_slub_options_text(op, dbg_lists, buf, sizeof(buf), &e);
	for (struct kmem_cache *s = kmem_cache_next(c->mm, NULL); s && i < MAX_CACHES + 1;
	     s = kmem_cache_next(c->mm, s))
		size[i++] = kmem_cache_size(s);
	opts_changed = true;
	err[0] = 0;
	mf_slub_cgen_configure_call(c, buf);
	int r = mm_slub_configure(c->mm, buf, err, sizeof(err));
	op->res[0] = r;
	if (c->cgen) {
		fprintf(c->cgen, "\tconfigure(%u, ", c->cur);
		mf_cgen_str(c->cgen, buf);
		fprintf(c->cgen, ", %d, %d);\n", op->a[12] != 0, r);
	}
	if (op->a[12] ? r != -22 : (r != 0 && r != -16))
		mf_fail(c, "C1", "mm_slub_configure(\"%s\") returned %d (%s)", buf, r, err);
	if (r && !err[0])
		mf_fail(c, "C1", "mm_slub_configure(\"%s\") returned %d without a message", buf, r);
	expect_quiet(c, "mm_slub_configure");
	mf_slub_options_check(c, op, &e, buf);  /* the fast path asked for, as the slub target checks */
	if (c->cgen) {
		fprintf(c->cgen, "\t{ static const unsigned sz[] = {");
		for (unsigned int k = 0; k < i; k++)
			fprintf(c->cgen, "%s%u", k ? ", " : " ", size[k]);
		fprintf(c->cgen, " }; sizes_ok(%u, sz, %u); }\n", c->cur, i);
	}
	unsigned int n = i;
	i = 0;
	for (struct kmem_cache *s = kmem_cache_next(c->mm, NULL); s && i < n; s = kmem_cache_next(c->mm, s), i++)
		if (kmem_cache_size(s) != size[i])
			mf_fail(c, "C1", "mm_slub_configure changed the object size of %s: %u -> %u", kmem_cache_name(s),
				size[i], kmem_cache_size(s));
}

static void note_options(FILE *f, const struct mf_op *op)
{
	mf_slub_options_note(f, op, dbg_lists);
}

/* ------------------------------------------------------------ the table */

/* The C file takes its report count where the harness takes c->reports_before: before each op. */
#define KM_OP(fn)                                                          \
	static void w_##fn(struct mf_ctx *c, struct mf_op *op)            \
	{                                                                  \
		MF_C(c, "\trep0 = mm_nr_reports(mm);\n");                 \
		fn(c, op);                                                 \
	}
KM_OP(op_alloc)
KM_OP(op_free)
KM_OP(op_krealloc)
KM_OP(op_ksize)
KM_OP(op_touch)
KM_OP(op_roundup)
KM_OP(op_cpu)
KM_OP(op_shrink)
KM_OP(op_trace)
KM_OP(op_krealloc_array)
KM_OP(op_options)
KM_OP(op_bad_kfree)
KM_OP(op_free_bulk)

static const struct mf_opdesc kmalloc_setup = {
	"setup", "the machine: a named config (targets/common/configs.c) and the number of vCPUs", NULL, NULL,
	{ MF_A_ENUM("config", mf_config_names), MF_A_INT("cpus", 1, 4) },
};

#define SIZE_ARGS MF_A_INT("size", 0, MAX_SIZE), MF_A_ENUM("class", sclass)

static const struct mf_opdesc kmalloc_ops[] = {
	{ "alloc", "kmalloc / kzalloc / kmalloc_array / kcalloc of size bytes (n elements; overflow: n * size "
	  "overflows, must be NULL)", w_op_alloc, note_alloc,
	  { MF_A_ENUM("kind", kinds), SIZE_ARGS, MF_A_INT("n", 0, 64), MF_A_ENUM("gfp", gfps),
	    MF_A_INT("cpu", 0, 3), MF_A_BOOL("overflow") } },
	{ "free", "kfree of a live allocation (none: of NULL, or ZERO_SIZE_PTR with zsp)", w_op_free, note_alloc,
	  { MF_A_IDX("idx"), MF_A_INT("cpu", 0, 3), MF_A_BOOL("zsp") } },
	{ "krealloc", "krealloc of a live allocation (or NULL) to size bytes", w_op_krealloc, note_alloc,
	  { MF_A_IDX("idx"), SIZE_ARGS, MF_A_ENUM("gfp", gfps), MF_A_BOOL("null"), MF_A_INT("cpu", 0, 3) } },
	{ "ksize", "ksize of a live allocation: at least its size, stable", w_op_ksize, note_alloc,
	  { MF_A_IDX("idx") } },
	{ "touch", "check a live allocation's pattern, then write it anew (every byte up to 512, sampled words above)", w_op_touch, note_alloc,
	  { MF_A_IDX("idx") } },
	{ "roundup", "kmalloc_size_roundup of size, and kmalloc_slab of size for every gfp (each type's bucket)",
	  w_op_roundup, note_roundup, { SIZE_ARGS } },
	{ "cpu", "switch the task to vCPU cpu", w_op_cpu, NULL, { MF_A_INT("cpu", 0, 3) } },
	{ "shrink", "kmem_cache_shrink of every cache", w_op_shrink, NULL, { { .name = NULL } } },
	{ "trace", "kmalloc_trace of 1 + size % 8192 bytes from kmalloc_slab's bucket for gfp (past its size: NULL)",
	  w_op_trace, note_alloc, { MF_A_INT("size", 0, 8191), MF_A_ENUM("gfp", gfps), MF_A_INT("cpu", 0, 3) } },
	{ "krealloc_array", "krealloc_array of a live allocation (overflow: n * size overflows, NULL and the "
	  "allocation untouched) or of NULL", w_op_krealloc_array, note_alloc,
	  { MF_A_IDX("idx"), MF_A_INT("n", 0, 64), MF_A_INT("size", 0, 1023), MF_A_ENUM("gfp", gfps),
	    MF_A_BOOL("null"), MF_A_INT("cpu", 0, 3), MF_A_BOOL("overflow") } },
	{ "options", "mm_slub_configure: slub_debug (keep / plain / flags[,list] / two blocks / off) on the kmalloc "
	  "caches, fast path, hardening, randomisation, init_on_alloc/free, min/max order, min_objects, every Nth "
	  "new slab failing, seed; bad: one invalid option, first (nothing applied) or last", w_op_options, note_options,
	  MF_SLUB_OPTION_ARGS(dbg_lists) },
	{ "bad_kfree", "kfree / krealloc of an address outside the instance, an interior pointer of a large "
	  "kmalloc, an order-0 page; ksize of a foreign address: reported once (ksize: never)", w_op_bad_kfree, note_bad,
	  { MF_A_ENUM("kind", bad_kinds), MF_A_INT("cpu", 0, 3), MF_A_IDX("idx"), MF_A_INT("off", 0, 65535) } },
	{ "free_bulk", "kfree_bulk of up to n live allocations from idx on, with NULL / ZERO_SIZE_PTR entries "
	  "where holes has bits (each reported once: 6.6 faults on them)", w_op_free_bulk, note_n,
	  { MF_A_INT("n", 1, 32), MF_A_IDX("idx"), MF_A_INT("cpu", 0, 3), MF_A_HEX("holes", 0, 0xffffffffL) } },
};

/* ------------------------------------------------------------ lifecycle */

static void kmalloc_config_of(const struct mf_op *setup, struct mm_config *cfg)
{
	mf_config_named(cfg, (enum mf_config_kind)setup->a[0], (unsigned int)setup->a[1]);
}

static bool kmalloc_begin(struct mf_ctx *c, const struct mf_op *setup)
{
	struct mm_config cfg;

	kmalloc_config_of(setup, &cfg);
	mf_cgen_config(c, &cfg);
	if (!mf_instance(c, &cfg))
		mf_fail(c, "C1", "mm_create failed for the named config %s", mf_config_names[setup->a[0]]);
	opts_changed = false;
	ncpus = cfg.nr_cpus > 0 ? (int)cfg.nr_cpus : 1;
	to_cpu(c, 0);
	return true;
}

static void kmalloc_release(struct mf_ctx *c, struct mf_alloc *a)
{
	void *p = (void *)a->addr;
	MF_C(c, "\tuntrack(%u, %u);\n\tkfree(mm, o%u);\n", c->cur, a->id, a->id);
	mf_shadow_remove(c, a);
	kfree(c->mm, p);
}

static void kmalloc_end(struct mf_ctx *c)
{
	MF_C(c, "\tfor (struct kmem_cache *s = kmem_cache_next(mm, NULL); s; s = kmem_cache_next(mm, s))\n"
	     "\t\tkmem_cache_shrink(s);\n");
	for (struct kmem_cache *s = kmem_cache_next(c->mm, NULL); s; s = kmem_cache_next(c->mm, s))
		kmem_cache_shrink(s);
	if (opts_changed)
		mf_slub_options_mark_dirty(c);
}

/* The C file's helpers: `ret` (each call's result), kept(), roundup(), the bad kfree's pointers. */
static void kmalloc_cgen_prologue(struct mf_ctx *c, FILE *f)
{
	(void)c;
	mf_slub_cgen_common(f);
	fprintf(f, "#define MAX_SIZE %d\n", MAX_SIZE);
	fputs("/* The fuzz run's gfp choices: roundup() looks at each one's bucket. */\n"
	      "UNUSED static const gfp_t gfp_choices[] = {", f);
	for (size_t k = 0; k < sizeof(gfp_val) / sizeof(gfp_val[0]); k++)
		fprintf(f, "%s%#x", k ? ", " : " ", gfp_val[k]);
	fputs(" };\n"
	      "UNUSED static void *ret;\n"
	      "/* An options op keeps every cache's object size (the first n caches, in kmem_cache_next() order). */\n"
	      "UNUSED static void sizes_ok(int op, const unsigned *sz, unsigned n)\n"
	      "{\n\tunsigned i = 0;\n"
	      "\tfor (struct kmem_cache *s = kmem_cache_next(mm, NULL); s && i < n; s = kmem_cache_next(mm, s), i++)\n"
	      "\t\texpect(op, kmem_cache_size(s) == sz[i], \"mm_slub_configure keeps every cache's object size\");\n}\n"
	      "UNUSED static void *bad;\n"
	      "UNUSED static struct page *bad_page;\n"
	      "UNUSED static uint64_t not_ours[4];\n"
	      "UNUSED static unsigned char saved[MAX_SIZE + 8];   /* an allocation's bytes before krealloc */\n"
	      "/* The first len bytes of p are what the allocation held before krealloc. */\n"
	      "UNUSED static void kept(int op, const void *p, size_t len, const char *what)\n"
	      "{\n\tfor (size_t i = 0; i < len; i++)\n\t\tif (((const unsigned char *)p)[i] != saved[i])\n"
	      "\t\t\tfail(op, \"C1 violated: %s: the data differs at +%#zx\", what, i);\n}\n"
	      "UNUSED static void roundup(int op, size_t size, int none_ok)\n"
	      "{\n\tsize_t r = kmalloc_size_roundup(mm, size);\n"
	      "\texpect(op, !size || r >= size, \"kmalloc_size_roundup is at least the size\");\n"
	      "\tif (size && size <= KMALLOC_MAX_CACHE_SIZE) {\n"
	      "\t\tstruct kmem_cache *s = kmalloc_slab(mm, size, GFP_KERNEL);\n"
	      "\t\texpect(op, s ? kmem_cache_size(s) >= size : none_ok, \"kmalloc_slab has a bucket that holds the size\");\n"
	      "\t\tfor (size_t k = 0; s && k < sizeof(gfp_choices) / sizeof(gfp_choices[0]); k++) {\n"
	      "\t\t\tgfp_t g = gfp_choices[k];\n"
	      "\t\t\tstruct kmem_cache *t = kmalloc_slab(mm, size, g);\n"
	      "\t\t\tconst char *want = (g & __GFP_DMA) && mm_zone(mm, ZONE_DMA) ? \"dma-kmalloc-\"\n"
	      "\t\t\t\t\t : g & __GFP_RECLAIMABLE ? \"kmalloc-rcl-\" : \"kmalloc-\";\n"
	      "\t\t\texpect(op, t && kmem_cache_size(t) == kmem_cache_size(s) &&\n"
	      "\t\t\t       !strncmp(kmem_cache_name(t), want, strlen(want)) &&\n"
	      "\t\t\t       kmem_cache_name(t)[strlen(want)] >= '0' && kmem_cache_name(t)[strlen(want)] <= '9',\n"
	      "\t\t\t       \"kmalloc_slab of each gfp is its type's bucket of the same size\");\n"
	      "\t\t}\n"
	      "\t}\n}\n\n", f);
}

static const struct mf_target kmalloc_target = {
	.name = "kmalloc",
	.setup = &kmalloc_setup,
	.ops = kmalloc_ops,
	.nops = sizeof(kmalloc_ops) / sizeof(kmalloc_ops[0]),
	.check_level = 2,
	.final_level = 3,
	.begin = kmalloc_begin,
	.release = kmalloc_release,
	.end = kmalloc_end,
	.cgen_prologue = kmalloc_cgen_prologue,
	.config_of = kmalloc_config_of,
};

MF_TARGET(kmalloc_target)

/* SPDX-License-Identifier: MIT */
/*
 * kmalloc.c - fuzz target for the kmalloc family through the public API:
 * kmalloc / kzalloc / kmalloc_array / kcalloc of every size, from 0 and the
 * smallest kmalloc cache through every size class to large allocations
 * (> KMALLOC_MAX_CACHE_SIZE, served by alloc_pages), with the gfp
 * variants; krealloc growing, shrinking, to 0 and from NULL; ksize; kfree
 * (also of NULL and ZERO_SIZE_PTR); on any vCPU.
 *
 * Checked on top of the harness's per-op mm_check and shadow (C1: inside
 * the arena, aligned (8; large ones to a page), disjoint from every live
 * allocation, the pattern intact until freed):
 *  - size 0 gives ZERO_SIZE_PTR, never NULL or memory;
 *  - kzalloc / kcalloc memory is zero; ksize >= the size asked;
 *  - kmalloc_array / kcalloc whose n * size overflows return NULL;
 *  - krealloc keeps the data up to min(old, new) size, and on failure
 *    leaves the old allocation as it was;
 *  - none of these reports anything.
 * Teardown frees everything and shrinks every cache.
 */
#include <string.h>

#include "common/configs.h"
#include "common/harness.h"
#include "common/instance.h"
#include "common/shadow.h"
#include "mm/cpu.h"
#include "mm/slab.h"

enum { K_OBJ = 0 };
#define MAX_SIZE 70000

static const char *const gfps[] = { "GFP_KERNEL", "GFP_ATOMIC", "GFP_DMA", "GFP_KERNEL_RECLAIMABLE",
				    "GFP_NOWAIT" };
static const gfp_t gfp_val[] = { GFP_KERNEL, GFP_ATOMIC, GFP_KERNEL | __GFP_DMA,
				 GFP_KERNEL | __GFP_RECLAIMABLE, GFP_NOWAIT };
static const char *const kinds[] = { "kmalloc", "kzalloc", "kmalloc_array", "kcalloc" };
enum { KM_KMALLOC, KM_KZALLOC, KM_ARRAY, KM_CALLOC };
static const char *const sclass[] = { "exact", "pow2", "pow2m1", "pow2p1", "large" };
enum { SC_EXACT, SC_POW2, SC_POW2M1, SC_POW2P1, SC_LARGE };

static int ncpus;
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

static size_t promise(size_t size)
{
	return size > KMALLOC_MAX_CACHE_SIZE ? MM_PAGE_SIZE : 8;
}

static void to_cpu(struct mf_ctx *c, long cpu)
{
	int r = mm_cpu_attach(c->mm, (int)(cpu % ncpus));
	if (r < 0)
		mf_fail(c, "C1", "mm_cpu_attach(%ld) failed: %d", cpu % ncpus, r);
}

static void expect_quiet(struct mf_ctx *c, const char *what)
{
	if (mm_nr_reports(c->mm) != c->reports_before)
		mf_fail(c, "C1", "%s reported: %s", what, mm_last_report(c->mm)->msg);
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
	}
}

/* Check what kmalloc promises about @p for @size, then track it. */
static struct mf_alloc *take(struct mf_ctx *c, void *p, size_t size, bool zeroed, const char *what)
{
	if (size == 0) {
		if (p != ZERO_SIZE_PTR)
			mf_fail(c, "C1", "%s of 0 bytes returned %p, not ZERO_SIZE_PTR", what, p);
		return NULL;
	}
	if (ZERO_OR_NULL_PTR(p))
		mf_fail(c, "C1", "%s of %zu bytes returned %p", what, size, p);
	size_t ks = ksize(c->mm, p);
	if (ks < size)
		mf_fail(c, "C1", "%s of %zu bytes: ksize is %zu", what, size, ks);
	struct mf_alloc *a = mf_shadow_add(c, K_OBJ, p, size, promise(size), zeroed);
	set_pages(c, a, ks);
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
			if (p)
				mf_fail(c, "C1", "%s(%zu, %zu) overflows but returned %p", kinds[kind], n, es, p);
			expect_quiet(c, kinds[kind]);
			op->res[0] = -5;
			return;
		}
		size_t es = n ? size / n : size;
		if (n && es * n > MAX_SIZE)
			es = MAX_SIZE / n;
		p = kind == KM_ARRAY ? kmalloc_array(c->mm, n, es, gfp) : kcalloc(c->mm, n, es, gfp);
		size = n * es;
	} else {
		p = kind == KM_KZALLOC ? kzalloc(c->mm, size, gfp) : kmalloc(c->mm, size, gfp);
	}
	expect_quiet(c, kinds[kind]);
	if (!p && size) {
		res_alloc(op, NULL, size, p);
		return;
	}
	struct mf_alloc *a = take(c, p, size, kind == KM_KZALLOC || kind == KM_CALLOC, kinds[kind]);
	res_alloc(op, a, size, p);
}

static void op_free(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *a = mf_shadow_pick(c->sh, (unsigned long)op->a[0]);
	to_cpu(c, op->a[1]);
	if (!a) {
		kfree(c->mm, op->a[2] ? ZERO_SIZE_PTR : NULL);
		expect_quiet(c, "kfree of NULL or ZERO_SIZE_PTR");
		op->res[0] = -1;
		return;
	}
	void *p = (void *)a->addr;
	op->res[0] = a->id;
	op->res[1] = (long)a->len;
	op->res[2] = (long)a->aux;
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
	size_t ks = ksize(c->mm, (void *)a->addr);
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
		void *p = krealloc(c->mm, NULL, size, gfp);
		expect_quiet(c, "krealloc(NULL)");
		if (!p && size) {
			res_alloc(op, NULL, size, p);
			return;
		}
		res_alloc(op, take(c, p, size, false, "krealloc(NULL)"), size, p);
		return;
	}
	void *old = (void *)a->addr;
	size_t keep = a->len < size ? a->len : size;
	mf_shadow_verify(c, a);
	memcpy(saved, old, keep);
	mf_shadow_remove(c, a);
	void *p = krealloc(c->mm, old, size, gfp);
	expect_quiet(c, "krealloc");
	if (size == 0) {
		if (p != ZERO_SIZE_PTR && p != NULL)
			mf_fail(c, "C1", "krealloc(p, 0) returned %p: it frees and returns ZERO_SIZE_PTR", p);
		op->res[0] = -4;
		return;
	}
	if (!p) {
		/* Failed: the old allocation stays, unchanged. */
		if (memcmp(saved, old, keep))
			mf_fail(c, "C1", "a failed krealloc changed the old allocation");
		struct mf_alloc *b = mf_shadow_add(c, K_OBJ, old, keep ? keep : 1, 8, false);
		set_pages(c, b, ksize(c->mm, old));
		op->res[0] = -3;
		return;
	}
	if (memcmp(saved, p, keep)) {
		size_t i = 0;
		while (((uint8_t *)p)[i] == saved[i])
			i++;
		mf_fail(c, "C1", "krealloc from %zu to %zu bytes lost data at offset %zu (%p -> %p)",
			keep == size ? keep : keep, size, i, old, p);
	}
	struct mf_alloc *b = take(c, p, size, false, "krealloc");
	res_alloc(op, b, size, p);
}

static void op_roundup(struct mf_ctx *c, struct mf_op *op)
{
	size_t size = size_of(op->a[0], op->a[1]);
	size_t r = kmalloc_size_roundup(c->mm, size);
	if (size && r < size)
		mf_fail(c, "C1", "kmalloc_size_roundup(%zu) = %zu", size, r);
	if (size && size <= KMALLOC_MAX_CACHE_SIZE) {
		struct kmem_cache *s = kmalloc_slab(c->mm, size);
		/* No bucket only when one object (with any debug metadata) may need a larger slab than max_order allows. */
		bool none_ok = !s && r >= ((size_t)MM_PAGE_SIZE << mf_config(c)->max_order);
		if (!none_ok && (!s || kmem_cache_size(s) < size))
			mf_fail(c, "C1", "kmalloc_slab(%zu) is %s (%u bytes)", size, s ? kmem_cache_name(s) : "NULL",
				s ? kmem_cache_size(s) : 0);
	}
	op->res[0] = (long)r;
}

static void note_roundup(FILE *f, const struct mf_op *op) { fprintf(f, "%ld", op->res[0]); }

static void op_cpu(struct mf_ctx *c, struct mf_op *op) { to_cpu(c, op->a[0]); }

static void op_shrink(struct mf_ctx *c, struct mf_op *op)
{
	(void)op;
	for (struct kmem_cache *s = kmem_cache_next(c->mm, NULL); s; s = kmem_cache_next(c->mm, s))
		kmem_cache_shrink(s);
}

/* ------------------------------------------------------------ the table */

static const struct mf_opdesc kmalloc_setup = {
	"setup", "the machine: a named config (targets/common/configs.c) and the number of vCPUs", NULL, NULL,
	{ MF_A_ENUM("config", mf_config_names), MF_A_INT("cpus", 1, 4) },
};

#define SIZE_ARGS MF_A_INT("size", 0, MAX_SIZE), MF_A_ENUM("class", sclass)

static const struct mf_opdesc kmalloc_ops[] = {
	{ "alloc", "kmalloc / kzalloc / kmalloc_array / kcalloc of size bytes (n elements; overflow: n * size "
	  "overflows, must be NULL)", op_alloc, note_alloc,
	  { MF_A_ENUM("kind", kinds), SIZE_ARGS, MF_A_INT("n", 0, 64), MF_A_ENUM("gfp", gfps),
	    MF_A_INT("cpu", 0, 3), MF_A_BOOL("overflow") } },
	{ "free", "kfree of a live allocation (none: of NULL, or ZERO_SIZE_PTR with zsp)", op_free, note_alloc,
	  { MF_A_IDX("idx"), MF_A_INT("cpu", 0, 3), MF_A_BOOL("zsp") } },
	{ "krealloc", "krealloc of a live allocation (or NULL) to size bytes", op_krealloc, note_alloc,
	  { MF_A_IDX("idx"), SIZE_ARGS, MF_A_ENUM("gfp", gfps), MF_A_BOOL("null"), MF_A_INT("cpu", 0, 3) } },
	{ "ksize", "ksize of a live allocation: at least its size, stable", op_ksize, note_alloc,
	  { MF_A_IDX("idx") } },
	{ "touch", "rewrite every byte of a live allocation (after checking it)", op_touch, note_alloc,
	  { MF_A_IDX("idx") } },
	{ "roundup", "kmalloc_size_roundup and kmalloc_slab of size", op_roundup, note_roundup, { SIZE_ARGS } },
	{ "cpu", "switch the task to vCPU cpu", op_cpu, NULL, { MF_A_INT("cpu", 0, 3) } },
	{ "shrink", "kmem_cache_shrink of every cache", op_shrink, NULL, { { .name = NULL } } },
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
	if (!mf_instance(c, &cfg))
		mf_fail(c, "C1", "mm_create failed for the named config %s", mf_config_names[setup->a[0]]);
	ncpus = cfg.nr_cpus > 0 ? (int)cfg.nr_cpus : 1;
	to_cpu(c, 0);
	return true;
}

static void kmalloc_release(struct mf_ctx *c, struct mf_alloc *a)
{
	void *p = (void *)a->addr;
	mf_shadow_remove(c, a);
	kfree(c->mm, p);
}

static void kmalloc_end(struct mf_ctx *c)
{
	for (struct kmem_cache *s = kmem_cache_next(c->mm, NULL); s; s = kmem_cache_next(c->mm, s))
		kmem_cache_shrink(s);
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
	.config_of = kmalloc_config_of,
};

MF_TARGET(kmalloc_target)

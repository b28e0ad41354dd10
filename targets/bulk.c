/* SPDX-License-Identifier: MIT */
/*
 * bulk.c - fuzz target for the bulk page paths: __alloc_pages_bulk into
 * arrays (some entries pre-populated with pages from alloc_pages; the array
 * either between guard words or an exact-size heap array, so ASan sees a
 * read or write past nr_pages) and into lists, and the bulk frees
 * release_pages (with NULL entries) and free_unref_page_list; and SLUB's
 * kmem_cache_alloc_bulk / kmem_cache_free_bulk on the kmalloc-N caches (the
 * array between guard words, all or nothing).  Interrupts
 * can be injected at the bulk path's preemption points (MM_PP_BULK and the
 * pcp ones) as in the pcp target.
 *
 * The contract checked (Linux 6.6, bulk.c's header):
 *  - the array variant returns the index it stopped at (nr_populated): at
 *    most nr_pages, every entry before it populated;
 *  - pre-populated entries are untouched, NULL entries before the return
 *    value are filled, entries at or after it are as the caller left them;
 *  - nothing is written outside [0, nr_pages): the guard words are intact;
 *  - every new page is a distinct order-0 page no one holds (the shadow's
 *    C1 and pages.c's checks); the list variant adds exactly the number it
 *    returns, leaves the entries already on the list in place.
 */
#include <stdlib.h>
#include <string.h>

#include "common/cgen.h"
#include "common/configs.h"
#include "common/gfp_args.h"
#include "common/harness.h"
#include "common/instance.h"
#include "common/pages.h"
#include "common/shadow.h"
#include "mm/cpu.h"
#include "mm/list.h"
#include "mm/slab.h"

enum { K_PAGES = MF_K_PAGES, K_IRQ, K_OBJ };   /* the task's pages, the interrupt handler's, slab objects */

#define BULK_MAX   64
#define GUARDS     4
#define GUARD_WORD ((struct page *)(uintptr_t)0xdeadbeefcafe5a5aULL)

static const char *const bulk_configs[] = { "micro", "tiny", "default", "holes" };
static const enum mf_config_kind bulk_config_kind[] = { MF_CFG_MICRO, MF_CFG_TINY, MF_CFG_DEFAULT, MF_CFG_HOLES };

struct bulk_state {
	unsigned long plan;
	unsigned int plan_left;
	bool in_hook;
	bool in_op;                 /* an op runs (not the harness's check): injections allowed */
	unsigned long irqs;
	unsigned int nirq;          /* K_IRQ pages live (the handler never frees the task's pages) */
};

static struct bulk_state bs;

/* ------------------------------------------------------------ interrupts */

/* The handler takes one GFP_ATOMIC page, or gives back the ones it holds. */
static void irq_actions(struct mf_ctx *c)
{
	if (!bs.in_op || c->tearing_down)
		return;
	if (bs.nirq < 8 && (bs.irqs & 3) != 0 && !mf_shadow_full(c->sh)) {
		MF_C(c, "\t{\n");
		struct mf_alloc *a = mf_page_alloc(c, 0, GFP_ATOMIC, K_IRQ);
		if (a) {
			mf_cgen_irq_keep(c, a->id, 'p');
			bs.nirq++;
		}
		MF_C(c, "\t}\n");
	} else {
		struct mf_alloc *a = mf_shadow_pick_kind(c->sh, bs.irqs, 1u << K_IRQ);
		if (a) {
			MF_C(c, "\t{\n");
			mf_cgen_irq_get(c, a->id, 'p');
			mf_page_free(c, a, false);
			MF_C(c, "\t}\n");
		}
	}
}

/* The C reproducer's handler makes the calls of this run again (mf_cgen_irq_begin). */
static void irq_handler(struct mm *mm, int cpu, void *ctx)
{
	struct mf_ctx *c = ctx;
	(void)mm;
	(void)cpu;
	bs.irqs++;
	mf_cgen_irq_begin(c, bs.irqs);
	irq_actions(c);
	mf_cgen_irq_end(c);
}

static void sched_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	struct mf_ctx *c = ctx;
	unsigned long n = mf_cgen_point(c);      /* the C reproducer's hook counts every point too */
	if (!bs.in_op || c->tearing_down || bs.in_hook || !bs.plan_left || mm_in_interrupt())
		return;
	unsigned int d = bs.plan & 3;
	bs.plan >>= 2;
	bs.plan_left--;
	bs.in_hook = true;
	size_t act = SIZE_MAX;
	if (d)       /* before the interrupt: a run dying in the handler keeps it */
		act = mf_cgen_act(c, n, (int)point, d & 1, false, 0, 0);
	if (d & 1)
		mm_raise_irq(mm);
	if (d & 2)
		mf_cgen_act_mig(c, act, MM_CPU_ANY, mm_migrate_current(mm, MM_CPU_ANY));
	bs.in_hook = false;
}

static void irq_forget(struct mf_ctx *c, struct mf_alloc *a)
{
	(void)c;
	if (a->kind == K_IRQ && bs.nirq)
		bs.nirq--;
}

/* ------------------------------------------------------------ helpers */

/* Take a page the bulk allocator handed out into the shadow (order 0). */
static void take(struct mf_ctx *c, struct page *page, gfp_t gfp, const char *how, long i)
{
	if (!page)
		mf_fail(c, "C1", "%s: entry %ld is NULL", how, i);
	if (virt_to_page(c->mm, page_address(c->mm, page)) != page)
		mf_fail(c, "C1", "%s: entry %ld (%p) is not a struct page of this memory", how, i, (void *)page);
	if (mf_shadow_full(c->sh))
		mf_fail(c, "C1", "harness: the shadow is full (the op keeps room for what it asks)");
	struct mf_alloc *a = mf_page_take(c, page, 0, gfp & ~(gfp_t)__GFP_COMP, K_PAGES, gfp & __GFP_ZERO);
	mf_page_emit_take(c, a, gfp & __GFP_ZERO);
}

/* Up to @n distinct live order-0 allocations from @idx on. */
static unsigned int pick_order0(struct mf_ctx *c, unsigned long idx, unsigned int n, struct mf_alloc **out)
{
	unsigned int got = 0, count = mf_shadow_count(c->sh);
	/* One pass over the live list: each entry is seen once, so none is picked twice. */
	for (unsigned int k = 0; k < count && got < n; k++) {
		struct mf_alloc *a = mf_shadow_pick(c->sh, idx + k);
		if (a->kind == K_PAGES && a->order == 0)
			out[got++] = a;
	}
	return got;
}

/* ------------------------------------------------------------ ops */

static void op_alloc(struct mf_ctx *c, struct mf_op *op)
{
	unsigned int order = (unsigned int)op->a[0];
	if (mf_shadow_full(c->sh)) {
		op->res[0] = -2;
		return;
	}
	mf_res_alloc(op, mf_page_alloc(c, order, (gfp_t)op->a[1], K_PAGES), order);
}

static void op_bulk_array(struct mf_ctx *c, struct mf_op *op)
{
	int n = (int)op->a[0];
	unsigned long fill = (unsigned long)op->a[1];
	gfp_t gfp = (gfp_t)op->a[2];
	bool heap = op->a[3];
	static struct page *guarded[GUARDS + BULK_MAX + GUARDS];
	struct page *before[BULK_MAX];
	struct page **arr;
	unsigned long pre = 0;

	if (mf_shadow_count(c->sh) + 2 * BULK_MAX + 16 > MF_MAX_LIVE) {
		op->res[0] = -2;
		return;
	}
	MF_C(c, "\tarr_begin(%d, %d);\n", n, heap);
	if (heap) {
		arr = malloc((size_t)(n ? n : 1) * sizeof(*arr));
		if (!arr)
			abort();
	} else {
		for (int i = 0; i < GUARDS + BULK_MAX + GUARDS; i++)
			guarded[i] = GUARD_WORD;
		arr = guarded + GUARDS;
	}
	/* Pre-populate: bit i of fill (modulo 32) says entry i holds a page from alloc_pages. */
	for (int i = 0; i < n; i++) {
		arr[i] = NULL;
		if (fill >> (i % 32) & 1) {
			struct mf_alloc *a = mf_page_alloc(c, 0, GFP_KERNEL, K_PAGES);
			if (a) {
				arr[i] = a->handle;
				MF_C(c, "\tarr[%d] = p%u;\n", i, a->id);
				pre++;
			}
		}
		before[i] = arr[i];
	}
	if (!heap)
		for (int i = n; i < BULK_MAX + GUARDS; i++)
			arr[i] = GUARD_WORD;   /* a populated-looking word right after nr_pages */
	unsigned long irqs = bs.irqs;
	MF_C(c, "\tmemcpy(before, arr, %d * sizeof(*arr));\n", n);
	mf_cgen_call(c, "nret = __alloc_pages_bulk(mm, %#x, %d, NULL, arr);", gfp, n);
	unsigned long ret = __alloc_pages_bulk(c->mm, gfp, n, NULL, arr);
	MF_C(c, "\tnret = __alloc_pages_bulk(mm, %#x, %d, NULL, arr);\n\tarr_check(%u, %d, %d);\n"
	     "\tdiverged(%u, nret != %lu, \"__alloc_pages_bulk's result\");\n", gfp, n, c->cur, n, heap, c->cur, ret);
	op->res[0] = (long)ret;
	op->res[1] = (long)pre;
	(void)irqs;

	if (!heap) {
		for (int i = 0; i < GUARDS; i++)
			if (guarded[i] != GUARD_WORD)
				mf_fail(c, "C1", "__alloc_pages_bulk(nr_pages %d) wrote the guard word %d before the array",
					n, i);
		for (int i = n; i < BULK_MAX + GUARDS; i++)
			if (arr[i] != GUARD_WORD)
				mf_fail(c, "C1", "__alloc_pages_bulk(nr_pages %d) wrote entry %d, past nr_pages", n, i);
	}
	/*
	 * The kernel returns the index it stopped at (nr_populated): every
	 * entry before it is populated - the NULL ones filled - and every
	 * entry from it on is as the caller left it.  When the pcp list runs
	 * dry after the first page, or the fallback to __alloc_pages() places
	 * one page, a pre-populated entry may well follow the returned count.
	 */
	if (ret > (unsigned long)n)
		mf_fail(c, "C1", "__alloc_pages_bulk(nr_pages %d) returned %lu", n, ret);
	for (int i = 0; i < n; i++) {
		if (before[i] && arr[i] != before[i])
			mf_fail(c, "C1", "__alloc_pages_bulk changed the pre-populated entry %d", i);
		if ((unsigned long)i < ret && !arr[i])
			mf_fail(c, "C1", "__alloc_pages_bulk(nr_pages %d, %lu pre-populated) returned %lu, but entry %d "
				"before it is NULL", n, pre, ret, i);
		if ((unsigned long)i >= ret && !before[i] && arr[i])
			mf_fail(c, "C1", "__alloc_pages_bulk returned %lu but filled entry %d after it", ret, i);
	}
	for (unsigned long i = 0; i < ret; i++)
		if (!before[i]) {
			MF_C(c, "\tstruct page *p%u = arr[%lu];\n", c->sh->next_id, i);
			take(c, arr[i], gfp, "__alloc_pages_bulk (array)", (int)i);
		}
	if (heap) {
		free(arr);
		MF_C(c, "\tfree(arr);\n");
	}
}

static void op_bulk_list(struct mf_ctx *c, struct mf_op *op)
{
	int n = (int)op->a[0];
	gfp_t gfp = (gfp_t)op->a[1];
	unsigned int nsent = (unsigned int)op->a[2];
	struct list_head head, sent[3], *pos;
	unsigned long len = 0;

	if (mf_shadow_count(c->sh) + BULK_MAX + 16 > MF_MAX_LIVE) {
		op->res[0] = -2;
		return;
	}
	INIT_LIST_HEAD(&head);
	for (unsigned int i = 0; i < nsent; i++)
		list_add_tail(&sent[i], &head);
	MF_C(c, "\tlist_begin(%u);\n", nsent);
	mf_cgen_call(c, "nret = __alloc_pages_bulk(mm, %#x, %d, &lhead, NULL);", gfp, n);
	unsigned long ret = __alloc_pages_bulk(c->mm, gfp, n, &head, NULL);
	MF_C(c, "\tnret = __alloc_pages_bulk(mm, %#x, %d, &lhead, NULL);\n\tlist_check(%u, %d, %u);\n"
	     "\tdiverged(%u, nret != %lu, \"__alloc_pages_bulk's result\");\n", gfp, n, c->cur, n, nsent, c->cur, ret);
	op->res[0] = (long)ret;
	for (pos = head.next; pos != &head && len < 4 * BULK_MAX; pos = pos->next)
		len++;
	if (ret > (unsigned long)(n > 0 ? n : 0) || len != ret + nsent)
		mf_fail(c, "C1", "__alloc_pages_bulk(list, nr_pages %d, %u entries already there) returned %lu, "
			"the list now has %lu entries", n, nsent, ret, len);
	/* The entries already there: still in order at the tail. */
	pos = head.prev;
	for (int i = (int)nsent - 1; i >= 0; i--, pos = pos->prev)
		if (pos != &sent[i])
			mf_fail(c, "C1", "__alloc_pages_bulk(list) disturbed the entries already on the list");
	long i = 0;
	for (pos = head.next; pos != &head;) {
		struct list_head *next = pos->next;
		if (pos >= &sent[0] && pos < &sent[3])
			break;
		list_del(pos);
		MF_C(c, "\tstruct page *p%u = list_pop();\n", c->sh->next_id);
		take(c, mm_lru_to_page(pos), gfp, "__alloc_pages_bulk (list)", i++);
		pos = next;
	}
}

static void op_release(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *a[BULK_MAX];
	struct page *arr[2 * BULK_MAX + 1];
	unsigned long nulls = (unsigned long)op->a[2], nr = 0;
	unsigned int got = pick_order0(c, (unsigned long)op->a[1], (unsigned int)op->a[0], a);

	MF_C(c, "\trep0 = mm_nr_reports(mm);\n");
	for (unsigned int i = 0; i < got; i++) {
		if (nulls >> (nr % 32) & 1) {
			MF_C(c, "\trel[%lu] = NULL;\n", nr);
			arr[nr++] = NULL;
		}
		MF_C(c, "\tuntrack(%u, %u);\n\trel[%lu] = p%u;\n", c->cur, a[i]->id, nr, a[i]->id);
		arr[nr++] = a[i]->handle;
		mf_shadow_remove(c, a[i]);
	}
	if (nulls >> 31 & 1) {
		MF_C(c, "\trel[%lu] = NULL;\n", nr);
		arr[nr++] = NULL;
	}
	mf_cgen_call(c, "release_pages(mm, rel, %lu);", nr);
	release_pages(c->mm, arr, nr);
	MF_C(c, "\trelease_pages(mm, rel, %lu);\n\texpect(%u, mm_nr_reports(mm) == rep0, \"release_pages of live pages "
	     "reports nothing\");\n", nr, c->cur);
	op->res[0] = got;
	if (mm_nr_reports(c->mm) != c->reports_before)
		mf_fail(c, "C1", "release_pages of %u live pages (and NULLs) was reported: %s", got,
			mm_last_report(c->mm)->msg);
}

static void op_free_list(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *a[BULK_MAX];
	struct list_head head;
	unsigned int got = pick_order0(c, (unsigned long)op->a[1], (unsigned int)op->a[0], a);

	INIT_LIST_HEAD(&head);
	MF_C(c, "\trep0 = mm_nr_reports(mm);\n\tINIT_LIST_HEAD(&lhead);\n");
	for (unsigned int i = 0; i < got; i++) {
		struct page *p = a[i]->handle;
		MF_C(c, "\tuntrack(%u, %u);\n\tlist_add_tail(mm_page_lru(p%u), &lhead);\n", c->cur, a[i]->id, a[i]->id);
		mf_shadow_remove(c, a[i]);
		list_add_tail(mm_page_lru(p), &head);
	}
	mf_cgen_call(c, "free_unref_page_list(mm, &lhead);");
	free_unref_page_list(c->mm, &head);
	MF_C(c, "\tfree_unref_page_list(mm, &lhead);\n\texpect(%u, mm_nr_reports(mm) == rep0, \"free_unref_page_list of "
	     "live pages reports nothing\");\n", c->cur);
	op->res[0] = got;
	if (mm_nr_reports(c->mm) != c->reports_before)
		mf_fail(c, "C1", "free_unref_page_list of %u live pages was reported: %s", got,
			mm_last_report(c->mm)->msg);
}

static void op_cpu(struct mf_ctx *c, struct mf_op *op)
{
	int cpu = (int)(op->a[0] % (long)mf_config(c)->nr_cpus);
	mf_cgen_call(c, "(void)mm_cpu_attach(mm, %d);", cpu);
	op->res[0] = mm_cpu_attach(c->mm, cpu);
	MF_C(c, "\texpect(%u, mm_cpu_attach(mm, %d) == %d, \"mm_cpu_attach\");\n", c->cur, cpu, cpu);
	if (op->res[0] != cpu)
		mf_fail(c, "C1", "mm_cpu_attach(%d) returned %ld", cpu, op->res[0]);
}

static void op_drain(struct mf_ctx *c, struct mf_op *op)
{
	mf_cgen_call(c, "%s(mm, NULL);", op->a[0] ? "drain_all_pages" : "drain_local_pages");
	if (op->a[0])
		drain_all_pages(c->mm, NULL);
	else
		drain_local_pages(c->mm, NULL);
	MF_C(c, "\t%s(mm, NULL);\n", op->a[0] ? "drain_all_pages" : "drain_local_pages");
}

static void op_pcp_update(struct mf_ctx *c, struct mf_op *op)
{
	mf_cgen_call(c, "(void)mm_pcp_update(mm, %ld, %ld);", op->a[0], op->a[1]);
	op->res[0] = mm_pcp_update(c->mm, (unsigned int)op->a[0], (unsigned int)op->a[1]);
	MF_C(c, "\tdiverged(%u, mm_pcp_update(mm, %ld, %ld) != %ld, \"mm_pcp_update's result\");\n", c->cur, op->a[0],
	     op->a[1], op->res[0]);
}

static void op_inject(struct mf_ctx *c, struct mf_op *op)
{
	bs.plan = (unsigned long)op->a[0];
	bs.plan_left = (unsigned int)op->a[1];
	MF_C(c, "\t/* no allocator call: the hook acts at the next preemption points (hook_script() after main()) */\n");
}

static void note_res(FILE *f, const struct mf_op *op)
{
	fprintf(f, "%ld", op->res[0]);
}

static void note_bulk(FILE *f, const struct mf_op *op)
{
	if (op->res[0] == -2)
		fprintf(f, "skipped: the shadow is nearly full");
	else
		fprintf(f, "returned %ld (%ld pre-populated)", op->res[0], op->res[1]);
}

/* ------------------------------------------------------------ the table */

static const struct mf_opdesc bulk_setup = {
	"setup", "the machine (a named config) and the number of vCPUs", NULL, NULL,
	{ MF_A_ENUM("config", bulk_configs), MF_A_INT("cpus", 1, 3) },
};

/* ------------------------------------------------------------ kmem_cache bulk */

/* The kmalloc caches the slab bulk ops use (kmalloc_slab(size, GFP_KERNEL): the kmalloc-N caches). */
static const char *const cache_size_names[] = { "8", "16", "32", "64", "96", "128", "192", "256", "512", "1k",
						 "2k", "4k", "8k" };
static const unsigned int cache_sizes[] = { 8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192 };

/*
 * What kmalloc promises of an object's address (create_kmalloc_caches(), as
 * 6.6's create_boot_cache()): natural alignment for a power-of-two size,
 * kmalloc-8k's 8 KiB included, ARCH_KMALLOC_MINALIGN (8) for the others.
 */
static size_t kmalloc_align(unsigned int size)
{
	return (size & (size - 1)) ? 8 : size;
}

static void to_cpu(struct mf_ctx *c, long cpu)
{
	MF_C(c, "\tmm_cpu_attach(mm, %d);\n", (int)(cpu % (long)mf_config(c)->nr_cpus));
	int r = mm_cpu_attach(c->mm, (int)(cpu % (long)mf_config(c)->nr_cpus));
	if (r < 0)
		mf_fail(c, "C1", "mm_cpu_attach(%ld) failed: %d", cpu % (long)mf_config(c)->nr_cpus, r);
}

/*
 * kmem_cache_alloc_bulk() into an array between guard words: all or
 * nothing, nothing written past n or before the array, every object a
 * distinct piece of the arena (the shadow).
 */
static void op_cache_bulk(struct mf_ctx *c, struct mf_op *op)
{
	int n = (int)op->a[0];
	struct kmem_cache *s = kmalloc_slab(c->mm, cache_sizes[op->a[1]], GFP_KERNEL);
	void *guarded[GUARDS + BULK_MAX + GUARDS];
	void **p = guarded + GUARDS;

	op->res[0] = -1;
	if (!s)
		mf_fail(c, "C1", "kmalloc_slab(%u) is NULL", cache_sizes[op->a[1]]);
	if (mf_shadow_count(c->sh) + BULK_MAX + 16 > MF_MAX_LIVE) {
		op->res[0] = -2;
		return;
	}
	to_cpu(c, op->a[2]);
	for (int i = 0; i < GUARDS + BULK_MAX + GUARDS; i++)
		guarded[i] = GUARD_WORD;
	for (int i = 0; i < n; i++)
		p[i] = NULL;
	MF_C(c, "\tobjs_begin(%d);\n", n);
	mf_cgen_call(c, "got = kmem_cache_alloc_bulk(kmalloc_slab(mm, %u, GFP_KERNEL), GFP_KERNEL, %d, objs);",
		     cache_sizes[op->a[1]], n);
	int got = kmem_cache_alloc_bulk(s, GFP_KERNEL, (size_t)n, p);
	MF_C(c, "\tgot = kmem_cache_alloc_bulk(kmalloc_slab(mm, %u, GFP_KERNEL), GFP_KERNEL, %d, objs);\n"
	     "\tobjs_check(%u, %d, got);\n\tdiverged(%u, got != %d, \"kmem_cache_alloc_bulk's result\");\n",
	     cache_sizes[op->a[1]], n, c->cur, n, c->cur, got);
	op->res[0] = got;
	for (int i = 0; i < GUARDS; i++)
		if (guarded[i] != GUARD_WORD)
			mf_fail(c, "C1", "kmem_cache_alloc_bulk(%d) wrote the guard word %d before the array", n, i);
	for (int i = n; i < BULK_MAX + GUARDS; i++)
		if (p[i] != GUARD_WORD)
			mf_fail(c, "C1", "kmem_cache_alloc_bulk(%d) wrote entry %d, past its size", n, i);
	if (got != 0 && got != n)
		mf_fail(c, "C1", "kmem_cache_alloc_bulk of %d returned %d: it is all or nothing", n, got);
	/* On failure the kernel frees what it took and returns 0, leaving those entries set. */
	for (int i = 0; i < got; i++) {
		if (!p[i])
			mf_fail(c, "C1", "kmem_cache_alloc_bulk returned %d but entry %d is NULL", got, i);
		unsigned int id = c->sh->next_id;
		MF_C(c, "\tvoid *o%u = objs[%d];\n\ttrack(%u, %u, o%u, %u);\n", id, i, c->cur, id, id, kmem_cache_size(s));
		struct mf_alloc *a = mf_shadow_add(c, K_OBJ, p[i], kmem_cache_size(s),
						   kmalloc_align(cache_sizes[op->a[1]]), false);
		a->handle = s;
	}
}

/* kmem_cache_free_bulk() of up to n live objects of the cache of the one idx picks, from it on. */
static void op_cache_free_bulk(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *first = mf_shadow_pick_kind(c->sh, (unsigned long)op->a[1], 1u << K_OBJ);
	void *p[BULK_MAX];
	size_t n = 0;

	op->res[0] = 0;
	if (!first)
		return;
	struct kmem_cache *s = first->handle;
	to_cpu(c, op->a[2]);
	for (unsigned long k = 0; k < mf_shadow_count(c->sh) && n < (size_t)op->a[0]; k++) {
		struct mf_alloc *a = mf_shadow_pick(c->sh, (unsigned long)op->a[1] + k);
		bool dup = false;
		if (a->kind != K_OBJ || a->handle != s)
			continue;
		for (size_t j = 0; j < n; j++)
			dup |= p[j] == (void *)a->addr;
		if (!dup)
			p[n++] = (void *)a->addr;
	}
	for (size_t j = 0; j < n; j++) {
		struct mf_alloc *a = mf_shadow_find(c->sh, (uintptr_t)p[j]);
		MF_C(c, "\tuntrack(%u, %u);\n\tobjs[%zu] = o%u;\n", c->cur, a->id, j, a->id);
		mf_shadow_remove(c, a);
	}
	mf_cgen_call(c, "kmem_cache_free_bulk(kmalloc_slab(mm, %u, GFP_KERNEL), %zu, objs);", kmem_cache_size(s), n);
	kmem_cache_free_bulk(s, n, p);
	MF_C(c, "\tkmem_cache_free_bulk(kmalloc_slab(mm, %u, GFP_KERNEL), %zu, objs);\n", kmem_cache_size(s), n);
	op->res[0] = (long)n;
}

/*
 * The C reproducer's hook counts preemption points from the start of each
 * op, as sched_hook does.  Injections happen inside ops only (as in the
 * pcp and slub targets): the per-op mm_check's own preemption points would
 * otherwise use up the plan mid-check, and what an input injects would
 * depend on the check level.  An interrupt left pending at the end of an
 * op runs there as a no-op.
 */
#define BULK_OP(fn)                                                        \
	static void w_##fn(struct mf_ctx *c, struct mf_op *op)            \
	{                                                                  \
		bs.in_op = true;                                           \
		mf_cgen_op_start(c);                                       \
		fn(c, op);                                                 \
		bs.in_op = false;                                          \
	}
BULK_OP(op_alloc)
BULK_OP(mf_op_free)
BULK_OP(op_bulk_array)
BULK_OP(op_bulk_list)
BULK_OP(op_release)
BULK_OP(op_free_list)
BULK_OP(op_cpu)
BULK_OP(op_drain)
BULK_OP(op_pcp_update)
BULK_OP(op_inject)
BULK_OP(op_cache_bulk)
BULK_OP(op_cache_free_bulk)

static const struct mf_opdesc bulk_ops[] = {
	{ "alloc", "alloc_pages(gfp, order)", w_op_alloc, mf_note_alloc,
	  { MF_A_INT("order", 0, 3), MF_A_GFP("gfp") } },
	{ "free", "__free_pages of a live allocation", w_mf_op_free, mf_note_free, { MF_A_IDX("idx") } },
	{ "bulk_array", "__alloc_pages_bulk(gfp, n, NULL, array): entry i pre-populated from alloc_pages when bit "
	  "i%32 of fill is set; heap: an exact-size malloc'd array, else one between guard words",
	  w_op_bulk_array, note_bulk,
	  { MF_A_INT("n", 0, BULK_MAX), MF_A_HEX("fill", 0, 0xffffffffL), MF_A_GFP("gfp"), MF_A_BOOL("heap") } },
	{ "bulk_list", "__alloc_pages_bulk(gfp, n, list, NULL) onto a list holding k entries already",
	  w_op_bulk_list, note_bulk, { MF_A_INT("n", 0, BULK_MAX), MF_A_GFP("gfp"), MF_A_INT("k", 0, 3) } },
	{ "release", "release_pages of n live order-0 pages from idx on, a NULL before entry i when bit i%32 of "
	  "nulls is set (bit 31: one at the end too)", w_op_release, mf_note_count,
	  { MF_A_INT("n", 0, BULK_MAX), MF_A_IDX("idx"), MF_A_HEX("nulls", 0, 0xffffffffL) } },
	{ "free_list", "free_unref_page_list of n live order-0 pages from idx on", w_op_free_list, mf_note_count,
	  { MF_A_INT("n", 0, BULK_MAX), MF_A_IDX("idx") } },
	{ "cpu", "mm_cpu_attach(cpu % nr_cpus)", w_op_cpu, note_res, { MF_A_INT("cpu", 0, 3) } },
	{ "drain", "drain_local_pages (all=0) or drain_all_pages (all=1)", w_op_drain, NULL, { MF_A_BOOL("all") } },
	{ "pcp_update", "mm_pcp_update(high, batch)", w_op_pcp_update, note_res,
	  { MF_A_INT("high", 0, 512), MF_A_INT("batch", 0, 128) } },
	{ "inject", "the next n preemption points in ops act on plan (2 bits each: bit 0 irq, bit 1 migrate); the "
	  "handler takes a GFP_ATOMIC page or frees one", w_op_inject, NULL,
	  { MF_A_HEX("plan", 0, 0xffffffffL), MF_A_INT("n", 0, 16) } },
	{ "cache_bulk", "kmem_cache_alloc_bulk(kmalloc_slab(size, GFP_KERNEL), n) into an array between guard words, on vCPU cpu",
	  w_op_cache_bulk, note_res, { MF_A_INT("n", 1, BULK_MAX), MF_A_ENUM("size", cache_size_names), MF_A_INT("cpu", 0, 3) } },
	{ "cache_free_bulk", "kmem_cache_free_bulk of up to n live objects of one cache, from idx on, on vCPU cpu",
	  w_op_cache_free_bulk, note_res, { MF_A_INT("n", 1, BULK_MAX), MF_A_IDX("idx"), MF_A_INT("cpu", 0, 3) } },
};

/* ------------------------------------------------------------ lifecycle */

static void bulk_config_of(const struct mf_op *setup, struct mm_config *cfg)
{
	mf_config_named(cfg, bulk_config_kind[setup->a[0]], (unsigned int)setup->a[1]);
}

static bool bulk_begin(struct mf_ctx *c, const struct mf_op *setup)
{
	struct mm_config cfg;

	bulk_config_of(setup, &cfg);
	mf_cgen_config(c, &cfg);
	if (!mf_instance(c, &cfg))
		mf_fail(c, "C1", "mm_create failed for the named config %s", bulk_configs[setup->a[0]]);
	mf_pages_begin(c);
	mf_pages.forget = irq_forget;
	memset(&bs, 0, sizeof(bs));
	mm_set_irq_handler(c->mm, irq_handler, c);
	mm_set_sched_hook(c->mm, sched_hook, c);
	MF_C(c, "\tmm_set_irq_handler(mm, irq, NULL);\n\tmm_set_sched_hook(mm, hook, NULL);\n");
	return true;
}

static void bulk_release(struct mf_ctx *c, struct mf_alloc *a)
{
	mf_cgen_flush(c);
	if (a->kind == K_OBJ) {
		struct kmem_cache *s = a->handle;
		void *p = (void *)a->addr;
		MF_C(c, "\tuntrack(%u, %u);\n\tkmem_cache_free(kmalloc_slab(mm, %u, GFP_KERNEL), o%u);\n", c->cur, a->id,
		     kmem_cache_size(s), a->id);
		mf_shadow_remove(c, a);
		kmem_cache_free(s, p);
		return;
	}
	mf_page_free(c, a, false);
}

static void bulk_end(struct mf_ctx *c)
{
	/* The objects are freed; their slabs go back to the page allocator (the C text first: a crash in there makes it). */
	MF_C(c, "\tfor (struct kmem_cache *s = kmem_cache_next(mm, NULL); s; s = kmem_cache_next(mm, s))\n"
	     "\t\tkmem_cache_shrink(s);\n");
	for (struct kmem_cache *s = kmem_cache_next(c->mm, NULL); s; s = kmem_cache_next(c->mm, s))
		kmem_cache_shrink(s);
	mm_set_sched_hook(c->mm, NULL, NULL);
	mm_set_irq_handler(c->mm, NULL, NULL);
	mf_cgen_flush(c);
	MF_C(c, "\tmm_set_sched_hook(mm, NULL, NULL);\n\tmm_set_irq_handler(mm, NULL, NULL);\n");
	mf_pages_end(c);
}

/*
 * The C file's arrays and lists, between the same guard words, and the
 * checks of the bulk contract the ops make (bulk.c's header).
 */
static void bulk_cgen_prologue(struct mf_ctx *c, FILE *f)
{
	mf_cgen_hook_prologue(c, f);
	fprintf(f, "#define GUARDS %d\n#define BULK_MAX %d\n#define GUARD_WORD ((void *)(uintptr_t)0xdeadbeefcafe5a5aULL)\n",
		GUARDS, BULK_MAX);
	fputs("UNUSED static unsigned long rep0;\n"
	      "UNUSED static unsigned long nret;\n"
	      "UNUSED static int got;\n"
	      "UNUSED static struct page *guarded[GUARDS + BULK_MAX + GUARDS], **arr, *before[BULK_MAX], *rel[2 * BULK_MAX + 1];\n"
	      "UNUSED static void *oguard[GUARDS + BULK_MAX + GUARDS], **objs = oguard + GUARDS;\n"
	      "UNUSED static struct list_head lhead, sent[3];\n"
	      "UNUSED static void arr_begin(int n, int heap)\n"
	      "{\n\tif (heap) {\n\t\tarr = malloc((size_t)(n ? n : 1) * sizeof(*arr));\n\t\tif (!arr)\n\t\t\tabort();\n"
	      "\t} else {\n\t\tfor (int i = 0; i < GUARDS + BULK_MAX + GUARDS; i++)\n\t\t\tguarded[i] = GUARD_WORD;\n"
	      "\t\tarr = guarded + GUARDS;\n\t}\n\tfor (int i = 0; i < n; i++)\n\t\tarr[i] = NULL;\n}\n"
	      "UNUSED static void arr_check(int op, int n, int heap)\n"
	      "{\n\tfor (int i = 0; !heap && i < GUARDS; i++)\n"
	      "\t\texpect(op, guarded[i] == GUARD_WORD, \"__alloc_pages_bulk writes nothing before the array\");\n"
	      "\tfor (int i = n; !heap && i < BULK_MAX + GUARDS; i++)\n"
	      "\t\texpect(op, arr[i] == GUARD_WORD, \"__alloc_pages_bulk writes nothing past nr_pages\");\n"
	      "\texpect(op, nret <= (unsigned long)n, \"__alloc_pages_bulk returns at most nr_pages\");\n"
	      "\tfor (int i = 0; i < n; i++) {\n"
	      "\t\texpect(op, !before[i] || arr[i] == before[i], \"pre-populated entries are untouched\");\n"
	      "\t\texpect(op, (unsigned long)i >= nret || arr[i], \"every entry before the returned index is populated\");\n"
	      "\t\texpect(op, (unsigned long)i < nret || before[i] || !arr[i], \"no entry after the returned index is filled\");\n"
	      "\t}\n}\n"
	      "UNUSED static void list_begin(unsigned nsent)\n"
	      "{\n\tINIT_LIST_HEAD(&lhead);\n\tfor (unsigned i = 0; i < nsent; i++)\n\t\tlist_add_tail(&sent[i], &lhead);\n}\n"
	      "UNUSED static void list_check(int op, int n, unsigned nsent)\n"
	      "{\n\tunsigned long len = 0;\n\tstruct list_head *pos;\n"
	      "\tfor (pos = lhead.next; pos != &lhead && len < 4 * BULK_MAX; pos = pos->next)\n\t\tlen++;\n"
	      "\texpect(op, nret <= (unsigned long)(n > 0 ? n : 0) && len == nret + nsent,\n"
	      "\t       \"__alloc_pages_bulk (list) adds exactly what it returns\");\n"
	      "\tpos = lhead.prev;\n\tfor (int i = (int)nsent - 1; i >= 0; i--, pos = pos->prev)\n"
	      "\t\texpect(op, pos == &sent[i], \"the entries already on the list stay in order at its tail\");\n}\n"
	      "UNUSED static struct page *list_pop(void)\n"
	      "{\n\tstruct list_head *pos = lhead.next;\n\tlist_del(pos);\n\treturn mm_lru_to_page(pos);\n}\n"
	      "UNUSED static void objs_begin(int n)\n"
	      "{\n\tfor (int i = 0; i < GUARDS + BULK_MAX + GUARDS; i++)\n\t\toguard[i] = GUARD_WORD;\n"
	      "\tfor (int i = 0; i < n; i++)\n\t\tobjs[i] = NULL;\n}\n"
	      "UNUSED static void objs_check(int op, int n, int got)\n"
	      "{\n\tfor (int i = 0; i < GUARDS; i++)\n"
	      "\t\texpect(op, oguard[i] == GUARD_WORD, \"kmem_cache_alloc_bulk writes nothing before the array\");\n"
	      "\tfor (int i = n; i < BULK_MAX + GUARDS; i++)\n"
	      "\t\texpect(op, objs[i] == GUARD_WORD, \"kmem_cache_alloc_bulk writes nothing past its size\");\n"
	      "\texpect(op, got == 0 || got == n, \"kmem_cache_alloc_bulk is all or nothing\");\n"
	      "\tfor (int i = 0; i < got; i++)\n\t\texpect(op, objs[i] != NULL, \"every entry it returns is an object\");\n}\n\n", f);
}

static const struct mf_target bulk_target = {
	.name = "bulk",
	.setup = &bulk_setup,
	.ops = bulk_ops,
	.nops = sizeof(bulk_ops) / sizeof(bulk_ops[0]),
	.check_level = 2,
	.final_level = 3,
	.begin = bulk_begin,
	.release = bulk_release,
	.end = bulk_end,
	.cgen_prologue = bulk_cgen_prologue,
	.config_of = bulk_config_of,
};

MF_TARGET(bulk_target)

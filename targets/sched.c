/* SPDX-License-Identifier: MIT */
/*
 * sched.c - the schedule-fuzzing target: 2-4 tasks, each running its own op
 * program (SLUB objects, kmalloc, pages of order 0..3, bulk paths, pcp
 * drains, shrink), as fibers of the deterministic scheduler
 * (stressors/sched/) over 1-3 vCPUs of one instance.  The input holds the
 * tasks' programs and the schedule: every switch, interrupt and migration
 * is an action of the input's script (the SCHED_SCRIPT policy: "when task
 * t reaches the p-th switch point of its k-th op, preempt it for task u
 * (keeping its vCPU, or sleeping as a preempted kernel task so another
 * task may run on that vCPU) / raise an interrupt running this handler
 * program / migrate it to vCPU c"); every other decision is the default
 * (run on, no interrupt, stay),
 * so any input is a valid, terminating schedule, and a mutation of one
 * action (or of one op) moves one preemption.
 * Coverage of the allocator's retry and slow-path branches then guides the
 * search through interleavings.
 *
 * The input is an op program of the shared harness (targets/common: the
 * decoder, --print, --encode, --dict, op text seeds): the setup record
 * picks the machine and the number of tasks, each op names its task, and
 * the ops "preempt", "irq" and "migrate" are the script.  The harness
 * runs ops on one thread in order, which is not what this target does: its
 * begin() runs the whole input - the schedule, the checks, the teardown -
 * and returns false, so the harness stops there.  (--c, the C reproducer,
 * is refused, exit 2: a schedule needs the fiber scheduler.)
 *
 * Checked:
 *  - C1 (shadow): every object and page handed out lies in the arena,
 *    aligned, disjoint from every live allocation (an object handed out
 *    twice, by two tasks or a task and an interrupt, is caught here), its
 *    pattern intact until freed (checked on free, touch and at teardown);
 *    zeroed allocations are zero; bulk allocation is all or nothing and
 *    returns the populated count;
 *  - after every op, by the task that ran it: no new allocator report
 *    (C1, naming the op - or one that ran while it was suspended); then
 *    mm_check at the target's
 *    per-op level (1: counters, and T1 for the calling task - depths back
 *    to zero); a higher MMFUZZ_CHECK_LEVEL is used only when no task is
 *    inside an op, else level 1 - a full walk while others are suspended in
 *    the middle of a fast path would report their in-flight states;
 *  - the scheduler: a deadlock, a hang (every loop bounded), a task that
 *    ends holding a lock or with preemption off (T1);
 *  - at the end: mm_check at the final level on the state the tasks left
 *    (2: free lists, pcp lists, every slab - S1/S2; ctest replays at 3:
 *    B3 and B4 conservation against the shadow too), then every
 *    allocation freed and checked, every cache destroyed without a leak
 *    report, and the instance back to its initial state (B4).
 * MMFUZZ_TRACE=1 (or --trace) prints the interleaving as a timeline: step,
 * task, vCPU, the task's op, the preemption point and what happened.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/configs.h"
#include "common/harness.h"
#include "common/instance.h"
#include "common/pages.h"
#include "common/shadow.h"
#include "cpu/vcpu.h"       /* mm_smp(): the instance's scheduler hook, set aside during checks */
#include "mm/cpu.h"
#include "mm/slab.h"

/*
 * The scheduler: the CMake build links the library (mmsched) and defines
 * MF_SCHED_LINKED; builds that compile targets/<t>.c alone (oss-fuzz's
 * build.sh, the AFL++ CMPLOG variant) get its sources compiled in here.
 */
#ifdef MF_SCHED_LINKED
#include "sched/sched.h"
#else
#include "../stressors/sched/sched_all.c"
#endif

#define MAX_TASKS     4
#define MAX_TASK_OPS  64            /* ops per task; more are not run */
#define MAX_SCRIPT    256           /* schedule actions */
#define NCACHES       3
#define IRQ_POOL      8
#define MAX_BULK      16
#define MAX_STEPS     400000UL      /* switch points per run: the hang bound */

enum { K_PAGES = MF_K_PAGES, K_OBJ, K_KMALLOC, K_IRQ };   /* shadow kinds */

static const char *const cfg_names[] = { "micro", "tiny" };
static const enum mf_config_kind cfg_kinds[] = { MF_CFG_MICRO, MF_CFG_TINY };
static const char *const gfp_names[] = { "kernel", "movable", "reclaimable", "atomic" };
static const gfp_t gfp_vals[] = { GFP_KERNEL, GFP_HIGHUSER_MOVABLE, GFP_KERNEL | __GFP_RECLAIMABLE, GFP_ATOMIC };
static const char *const kmalloc_sizes[] = { "8", "64", "192", "1024", "4096", "16384" };
static const size_t kmalloc_vals[] = { 8, 64, 192, 1024, 4096, 16384 };

/* The caches every input gets: sizes, flags and the alignment objects must have. */
static const unsigned int cache_size[NCACHES] = { 16, 64, 256 };
static const slab_flags_t cache_flags[NCACHES] = { 0, SLAB_HWCACHE_ALIGN, 0 };
static const unsigned int cache_align[NCACHES] = { 8, 64, 8 };

/* Op kinds (indices into sched_ops[]). */
enum {
	OP_ALLOC, OP_FREE, OP_ALLOC_BULK, OP_FREE_BULK, OP_ALLOC_PAGES, OP_BULK_PAGES, OP_RELEASE,
	OP_KMALLOC, OP_DRAIN, OP_DRAIN_ALL, OP_SHRINK, OP_TOUCH, OP_YIELD,
	OP_PREEMPT, OP_IRQ, OP_MIGRATE, OP_NR
};
#define FIRST_SCRIPT_OP OP_PREEMPT

struct task {
	int idx;
	unsigned int ops[MAX_TASK_OPS];     /* indices into the program */
	unsigned int nops;
	unsigned int cur;                   /* the op running (index into the program) */
	char label[112];                    /* the timeline's op column */
};

static struct {
	struct mf_ctx *c;
	int ntasks, ncpus;
	struct task task[MAX_TASKS];
	struct kmem_cache *cache[NCACHES];
	uint8_t script[MAX_SCRIPT * SCHED_SCRIPT_STEP_BYTES];
	size_t nscript;
	int busy;                           /* tasks inside an op */
	struct mf_alloc *pool[IRQ_POOL];    /* the interrupt handler's objects */
	unsigned int npool;
	unsigned long irq_runs;
	bool timeline;
	bool kmalloc_used;                  /* teardown shrinks the kmalloc caches */
	unsigned long reports;              /* mm_nr_reports() when the last op ended: any other count is a finding */
} S;

/* ------------------------------------------------------------ helpers */

/*
 * ThreadSanitizer sees each fiber as a thread, and the scheduler hands over
 * without synchronising (so it reports real races between tasks).  The
 * harness's own state (the shadow, S) is shared by every task: each stretch
 * of harness code is bracketed by hb(), an acq_rel increment of one word,
 * so TSan orders those stretches (and only them) - hb() before every call
 * that may switch (an allocator call, an attach, the checker), and after
 * it, through ctx().  A no-op in other builds.
 */
#if MM_TSAN
static _Atomic unsigned long hb_word;
static void hb(void)
{
	atomic_fetch_add_explicit(&hb_word, 1, memory_order_acq_rel);
}
#else
static inline void hb(void) {}
#endif

/* The harness context, with c->cur naming the running task's op (for reports). */
static struct mf_ctx *ctx(void)
{
	hb();
	int t = sched_current_task();
	if (t >= 0 && t < S.ntasks)
		S.c->cur = S.task[t].cur;
	hb();
	return S.c;
}

static struct task *me(void)
{
	int t = sched_current_task();
	return &S.task[t >= 0 && t < S.ntasks ? t : 0];
}

static void on_cpu(long cpu)
{
	struct mf_ctx *c = ctx();
	int r = mm_cpu_attach(c->mm, (int)(cpu % S.ncpus));
	c = ctx();
	if (r < 0)
		mf_fail(c, "T1", "task T%d: mm_cpu_attach(%ld) failed: %d", me()->idx, cpu % S.ncpus, r);
}

static void pool_forget(struct mf_alloc *a)
{
	for (unsigned int i = 0; i < S.npool; i++)
		if (S.pool[i] == a) {
			memmove(&S.pool[i], &S.pool[i + 1], (S.npool - i - 1) * sizeof(S.pool[0]));
			S.npool--;
			return;
		}
}

static struct mf_alloc *take_obj(struct mf_ctx *c, unsigned int cache, void *p, bool zeroed, unsigned int kind)
{
	c = ctx();
	struct mf_alloc *a = mf_shadow_add(c, kind, p, cache_size[cache], cache_align[cache], zeroed);
	a->order = cache;
	a->handle = S.cache[cache];
	return a;
}

/* Check, forget and free any live allocation (object, kmalloc, pages). */
static void free_any(struct mf_ctx *c, struct mf_alloc *a)
{
	void *p = (void *)a->addr;
	c = ctx();
	switch (a->kind) {
	case K_PAGES: {
		struct page *pg = a->handle;
		unsigned int order = a->order;
		mf_shadow_remove(c, a);
		hb();
		__free_pages(c->mm, pg, order);
		break;
	}
	case K_KMALLOC:
		mf_shadow_remove(c, a);
		hb();
		kfree(c->mm, p);
		break;
	default: {
		struct kmem_cache *s = a->handle;
		if (a->kind == K_IRQ)
			pool_forget(a);
		mf_shadow_remove(c, a);
		hb();
		kmem_cache_free(s, p);
	}
	}
}

/* ------------------------------------------------------------ the interrupt handler */

/*
 * Runs on the interrupted task's vCPU, in the middle of whatever it was
 * doing.  Its program is the script action's argument: bits 0-1 objects to
 * allocate (GFP_ATOMIC) into the pool, bits 2-3 pool objects to free, bit 4
 * oldest first (else newest first), bit 5 an order-0 page allocated and
 * freed, bits 6-7 the cache.  "Allocate two, free the first" is what
 * recycles a freelist head under a fast path (the ABA of a single-word
 * cmpxchg).
 */
static void irq_handler(struct mm *mm, int cpu, void *arg)
{
	unsigned prog = sched_script_arg();
	unsigned nalloc = prog & 3, nfree = (prog >> 2) & 3, cache = ((prog >> 6) & 3) % NCACHES;
	bool fifo = prog & 16, page = prog & 32;
	struct mf_ctx *c = ctx();
	(void)cpu;
	(void)arg;
	S.irq_runs++;
	for (unsigned i = 0; i < nalloc && S.cache[cache] && S.npool < IRQ_POOL && !mf_shadow_full(c->sh); i++) {
		hb();
		void *p = kmem_cache_alloc(S.cache[cache], GFP_ATOMIC);
		c = ctx();
		if (!p)
			break;
		if (S.npool >= IRQ_POOL || mf_shadow_full(c->sh)) {
			/* Handlers of other vCPUs, run while this allocation was preempted, filled the pool or the shadow. */
			hb();
			kmem_cache_free(S.cache[cache], p);
			break;
		}
		S.pool[S.npool++] = take_obj(c, cache, p, false, K_IRQ);
	}
	for (unsigned i = 0; i < nfree; i++) {
		c = ctx();
		if (!S.npool)
			break;
		free_any(c, fifo ? S.pool[0] : S.pool[S.npool - 1]);
	}
	c = ctx();
	if (page && !mf_shadow_full(c->sh)) {
		hb();
		struct page *pg = alloc_pages(mm, GFP_ATOMIC, 0);
		c = ctx();
		if (pg && mf_shadow_full(c->sh)) {    /* filled while the allocation was preempted */
			hb();
			__free_pages(mm, pg, 0);
		} else if (pg)
			free_any(c, mf_page_take(c, pg, 0, GFP_ATOMIC, K_PAGES, false));
	}
}

/* ------------------------------------------------------------ ops (run by a task) */

static void op_alloc(struct mf_ctx *c, struct mf_op *op)
{
	unsigned int cache = (unsigned int)op->a[1];
	bool zero = op->a[3];
	op->res[0] = -2;
	if (mf_shadow_full(c->sh) || !S.cache[cache])
		return;
	on_cpu(op->a[2]);
	void *p = zero ? kmem_cache_zalloc(S.cache[cache], GFP_KERNEL) : kmem_cache_alloc(S.cache[cache], GFP_KERNEL);
	c = ctx();
	if (!p) {
		op->res[0] = -3;
		return;
	}
	if (mf_shadow_full(c->sh)) {    /* others filled it meanwhile */
		hb();
		kmem_cache_free(S.cache[cache], p);
		return;
	}
	op->res[0] = take_obj(c, cache, p, zero, K_OBJ)->id;
}

static void op_free(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *a = mf_shadow_pick(c->sh, (unsigned long)op->a[1]);
	op->res[0] = -1;
	if (!a)
		return;
	op->res[0] = a->id;
	/* Taken out of the shadow before the first switch point: no other task picks it. */
	if (a->kind != K_PAGES) {
		struct kmem_cache *s = a->handle;
		void *p = (void *)a->addr;
		bool km = a->kind == K_KMALLOC;
		if (a->kind == K_IRQ)
			pool_forget(a);
		mf_shadow_remove(c, a);
		on_cpu(op->a[2]);
		if (km)
			kfree(c->mm, p);
		else
			kmem_cache_free(s, p);
		return;
	}
	struct page *pg = a->handle;
	unsigned int order = a->order;
	mf_shadow_remove(c, a);
	on_cpu(op->a[2]);
	__free_pages(c->mm, pg, order);
}

static void op_alloc_bulk(struct mf_ctx *c, struct mf_op *op)
{
	unsigned int cache = (unsigned int)op->a[1];
	size_t n = (size_t)op->a[2];
	void *p[MAX_BULK];
	op->res[0] = -2;
	if (c->sh->nlive + n + IRQ_POOL > MF_MAX_LIVE || !S.cache[cache])
		return;
	on_cpu(op->a[3]);
	memset(p, 0, sizeof(p));
	int got = kmem_cache_alloc_bulk(S.cache[cache], GFP_KERNEL, n, p);
	c = ctx();
	if (got != 0 && (size_t)got != n)
		mf_fail(c, "C1", "kmem_cache_alloc_bulk of %zu returned %d: all or nothing", n, got);
	for (int i = 0; i < got; i++) {
		c = ctx();
		if (!p[i])
			mf_fail(c, "C1", "kmem_cache_alloc_bulk returned %d but p[%d] is NULL", got, i);
		if (mf_shadow_full(c->sh)) {
			hb();
			kmem_cache_free(S.cache[cache], p[i]);
		} else
			take_obj(c, cache, p[i], false, K_OBJ);
	}
	op->res[0] = got;
}

static void op_free_bulk(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *first = mf_shadow_pick_kind(c->sh, (unsigned long)op->a[2], 1u << K_OBJ);
	void *p[MAX_BULK];
	size_t n = 0;
	op->res[0] = 0;
	if (!first)
		return;
	unsigned int cache = first->order;
	for (unsigned long k = 0; k < mf_shadow_count(c->sh) && n < (size_t)op->a[1]; k++) {
		struct mf_alloc *a = mf_shadow_pick(c->sh, (unsigned long)op->a[2] + k);
		if (a->kind != K_OBJ || a->order != cache)
			continue;
		bool dup = false;
		for (size_t j = 0; j < n; j++)
			dup |= p[j] == (void *)a->addr;
		if (!dup)
			p[n++] = (void *)a->addr;
	}
	for (size_t j = 0; j < n; j++)
		mf_shadow_remove(c, mf_shadow_find(c->sh, (uintptr_t)p[j]));
	on_cpu(op->a[3]);
	kmem_cache_free_bulk(S.cache[cache], n, p);
	op->res[0] = (long)n;
}

static void op_alloc_pages(struct mf_ctx *c, struct mf_op *op)
{
	unsigned int order = (unsigned int)op->a[1];
	gfp_t gfp = gfp_vals[op->a[2]] | (op->a[4] ? __GFP_ZERO : 0);
	op->res[0] = -2;
	if (mf_shadow_full(c->sh))
		return;
	on_cpu(op->a[3]);
	struct page *pg = alloc_pages(c->mm, gfp, order);
	c = ctx();
	if (!pg) {
		op->res[0] = -3;
		return;
	}
	if (mf_shadow_full(c->sh)) {
		hb();
		__free_pages(c->mm, pg, order);
		return;
	}
	op->res[0] = mf_page_take(c, pg, order, gfp, K_PAGES, op->a[4])->id;
}

static void op_bulk_pages(struct mf_ctx *c, struct mf_op *op)
{
	unsigned long n = (unsigned long)op->a[1];
	gfp_t gfp = gfp_vals[op->a[2]];
	struct page *pages[MAX_BULK];
	op->res[0] = -2;
	if (c->sh->nlive + n + IRQ_POOL > MF_MAX_LIVE)
		return;
	on_cpu(op->a[3]);
	memset(pages, 0, sizeof(pages));
	unsigned long got = alloc_pages_bulk_array(c->mm, gfp, n, pages);
	c = ctx();
	unsigned long populated = 0;
	for (unsigned long i = 0; i < n; i++)
		populated += pages[i] != NULL;
	if (got != populated)
		mf_fail(c, "C1", "alloc_pages_bulk_array of %lu returned %lu, but %lu entries are populated", n, got,
			populated);
	for (unsigned long i = 0; i < n; i++) {
		c = ctx();
		if (!pages[i])
			continue;
		if (mf_shadow_full(c->sh)) {    /* others filled it while the call was preempted */
			hb();
			__free_pages(c->mm, pages[i], 0);
		} else
			mf_page_take(c, pages[i], 0, gfp, K_PAGES, false);
	}
	op->res[0] = (long)got;
}

static void op_release(struct mf_ctx *c, struct mf_op *op)
{
	struct page *pages[MAX_BULK];
	unsigned long n = 0;
	for (unsigned long k = 0; k < mf_shadow_count(c->sh) && n < (unsigned long)op->a[1]; k++) {
		struct mf_alloc *a = mf_shadow_pick(c->sh, (unsigned long)op->a[2] + k);
		if (a->kind != K_PAGES || a->order != 0)
			continue;
		bool dup = false;
		for (unsigned long j = 0; j < n; j++)
			dup |= pages[j] == a->handle;
		if (!dup)
			pages[n++] = a->handle;
	}
	for (unsigned long j = 0; j < n; j++)
		mf_shadow_remove(c, mf_shadow_find(c->sh, (uintptr_t)page_address(c->mm, pages[j])));
	op->res[0] = (long)n;
	if (!n)
		return;
	on_cpu(op->a[3]);
	unsigned long reports = mm_nr_reports(c->mm);
	release_pages(c->mm, pages, n);
	c = ctx();
	if (mm_nr_reports(c->mm) != reports)
		mf_fail(c, "C1", "release_pages of %lu live pages was reported: %s", n, mm_last_report(c->mm)->msg);
}

static void op_kmalloc(struct mf_ctx *c, struct mf_op *op)
{
	size_t size = kmalloc_vals[op->a[1]];
	op->res[0] = -2;
	if (mf_shadow_full(c->sh))
		return;
	on_cpu(op->a[2]);
	void *p = kmalloc(c->mm, size, GFP_KERNEL);
	c = ctx();
	if (!p) {
		op->res[0] = -3;
		return;
	}
	if (mf_shadow_full(c->sh)) {
		hb();
		kfree(c->mm, p);
		return;
	}
	size_t ks = ksize(c->mm, p);
	c = ctx();
	struct mf_alloc *a = mf_shadow_add(c, K_KMALLOC, p, size, size > KMALLOC_MAX_CACHE_SIZE ? MM_PAGE_SIZE : 8,
					   false);
	if (ks > KMALLOC_MAX_CACHE_SIZE) {      /* a large kmalloc holds pages: B4 counts them */
		struct page *pg = virt_to_page(c->mm, p);
		if (!pg)
			mf_fail(c, "C1", "large kmalloc %p is not a page of this memory", p);
		a->pfn = page_to_pfn(c->mm, pg);
		a->nr_pages = ks / MM_PAGE_SIZE;
	}
	op->res[0] = a->id;
}

static void op_drain(struct mf_ctx *c, struct mf_op *op)
{
	on_cpu(op->a[1]);
	drain_local_pages(c->mm, NULL);
	op->res[0] = 0;
}

static void op_drain_all(struct mf_ctx *c, struct mf_op *op)
{
	on_cpu(op->a[1]);
	drain_all_pages(c->mm, NULL);
	op->res[0] = 0;
}

static void op_shrink(struct mf_ctx *c, struct mf_op *op)
{
	(void)c;
	op->res[0] = -1;
	if (!S.cache[op->a[1]])
		return;
	on_cpu(op->a[2]);
	op->res[0] = kmem_cache_shrink(S.cache[op->a[1]]);
}

static void op_touch(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *a = mf_shadow_pick(c->sh, (unsigned long)op->a[1]);
	op->res[0] = -1;
	if (!a)
		return;
	op->res[0] = a->id;
	mf_shadow_touch(c, a);
}

static void op_yield(struct mf_ctx *c, struct mf_op *op)
{
	(void)c;
	on_cpu(op->a[1]);
	sched_point();
	op->res[0] = 0;
}

/* The script ops are never run by a task: begin() turns them into the schedule. */
static void op_script(struct mf_ctx *c, struct mf_op *op)
{
	(void)c;
	(void)op;
}

static void note_res(FILE *f, const struct mf_op *op)
{
	if (op->res[0] == -1)
		fprintf(f, "no candidate");
	else if (op->res[0] == -2)
		fprintf(f, "skipped: the shadow is full");
	else if (op->res[0] == -3)
		fprintf(f, "the allocator said no");
	else if (op->kind == OP_ALLOC || op->kind == OP_ALLOC_PAGES || op->kind == OP_KMALLOC ||
		 op->kind == OP_FREE || op->kind == OP_TOUCH)
		fprintf(f, "a%ld", op->res[0]);
	else
		fprintf(f, "%ld", op->res[0]);
}

/* ------------------------------------------------------------ the table */

static const struct mf_opdesc sched_setup = {
	"setup", "the machine (micro or tiny, 1-3 vCPUs) and the number of tasks (2-4)", NULL, NULL,
	{ MF_A_ENUM("config", cfg_names), MF_A_INT("cpus", 1, 3), MF_A_INT("tasks", 2, 4) },
};

#define TASK MF_A_INT("task", 0, 3)
#define CPU  MF_A_INT("cpu", 0, 3)

static const struct mf_opdesc sched_ops[OP_NR] = {
	[OP_ALLOC] = { "alloc", "kmem_cache_alloc / zalloc of cache 0 (16 B), 1 (64 B, HWCACHE_ALIGN) or 2 (256 B) on vCPU cpu",
		       op_alloc, note_res, { TASK, MF_A_INT("cache", 0, NCACHES - 1), CPU, MF_A_BOOL("zero") } },
	[OP_FREE] = { "free", "free a live allocation of any task (object, kmalloc, pages) on vCPU cpu: remote when "
		      "not where it came from", op_free, note_res, { TASK, MF_A_IDX("idx"), CPU } },
	[OP_ALLOC_BULK] = { "alloc_bulk", "kmem_cache_alloc_bulk of n objects (all or nothing)", op_alloc_bulk, note_res,
			    { TASK, MF_A_INT("cache", 0, NCACHES - 1), MF_A_INT("n", 1, MAX_BULK), CPU } },
	[OP_FREE_BULK] = { "free_bulk", "kmem_cache_free_bulk of up to n live objects of one cache", op_free_bulk,
			   note_res, { TASK, MF_A_INT("n", 1, MAX_BULK), MF_A_IDX("idx"), CPU } },
	[OP_ALLOC_PAGES] = { "alloc_pages", "alloc_pages of order 0..3 (pcp for every order here)", op_alloc_pages,
			     note_res, { TASK, MF_A_INT("order", 0, 3), MF_A_ENUM("gfp", gfp_names), CPU,
					 MF_A_BOOL("zero") } },
	[OP_BULK_PAGES] = { "bulk_pages", "alloc_pages_bulk_array of n pages (returns the populated count)",
			    op_bulk_pages, note_res, { TASK, MF_A_INT("n", 1, MAX_BULK), MF_A_ENUM("gfp", gfp_names), CPU } },
	[OP_RELEASE] = { "release", "release_pages of up to n live order-0 pages from idx on", op_release, note_res,
			 { TASK, MF_A_INT("n", 1, MAX_BULK), MF_A_IDX("idx"), CPU } },
	[OP_KMALLOC] = { "kmalloc", "kmalloc of size (16384: a large kmalloc, pages)", op_kmalloc, note_res,
			 { TASK, MF_A_ENUM("size", kmalloc_sizes), CPU } },
	[OP_DRAIN] = { "drain", "drain_local_pages on vCPU cpu", op_drain, NULL, { TASK, CPU } },
	[OP_DRAIN_ALL] = { "drain_all", "drain_all_pages (every vCPU's pcp) from vCPU cpu", op_drain_all, NULL,
			   { TASK, CPU } },
	[OP_SHRINK] = { "shrink", "kmem_cache_shrink", op_shrink, note_res,
			{ TASK, MF_A_INT("cache", 0, NCACHES - 1), CPU } },
	[OP_TOUCH] = { "touch", "check and rewrite a live allocation", op_touch, note_res, { TASK, MF_A_IDX("idx") } },
	[OP_YIELD] = { "yield", "a switch point of the task's own on vCPU cpu (sched_point)", op_yield, NULL,
		       { TASK, CPU } },
	[OP_PREEMPT] = { "preempt", "schedule: when task reaches switch point at of its op-th op (counting its own "
			 "ops from 0), run task to (or the next candidate after it); release: where preemptible the task "
			 "gives up its vCPU first (another task may run there; it resumes on the first free one)",
			 op_script, NULL,
			 { TASK, MF_A_INT("op", 0, MAX_TASK_OPS - 1), MF_A_INT("at", 1, 255), MF_A_INT("to", 0, 3),
			   MF_A_BOOL("release") } },
	[OP_IRQ] = { "irq", "schedule: when task reaches switch point at of its op-th op, an interrupt whose handler "
		     "allocates nalloc GFP_ATOMIC objects of cache into its pool, frees nfree of the pool (fifo: oldest "
		     "first), and allocates and frees a page if page", op_script, NULL,
		     { TASK, MF_A_INT("op", 0, MAX_TASK_OPS - 1), MF_A_INT("at", 1, 255), MF_A_INT("nalloc", 0, 3),
		       MF_A_INT("nfree", 0, 3), MF_A_BOOL("fifo"), MF_A_BOOL("page"), MF_A_INT("cache", 0, NCACHES - 1) } },
	[OP_MIGRATE] = { "migrate", "schedule: when task reaches switch point at of its op-th op, migrate it to vCPU "
			 "to (or the next free one)", op_script, NULL,
			 { TASK, MF_A_INT("op", 0, MAX_TASK_OPS - 1), MF_A_INT("at", 1, 255), MF_A_INT("to", 0, 3) } },
};

/* ------------------------------------------------------------ running an input */

static void set_label(struct task *t, unsigned int i)
{
	if (!S.timeline)
		return;
	FILE *f = fmemopen(t->label, sizeof(t->label), "w");
	if (!f)
		return;
	fprintf(f, "[%u] ", i);
	mf_print_op(f, S.c->t, &S.c->prog[i], false);
	fclose(f);
	sched_set_label(t->label);
}

/*
 * The checker with the instance's scheduler hook set aside: its own lock
 * and unlock points are no interleavings worth exploring, they would shift
 * the script's gaps, and a switch in the middle of a walk would let another
 * task start an op and show the walk an in-flight state.  (A wait on a lock
 * still yields: the thread's wait hook stays.)
 */
static void check_unswitched(struct mf_ctx *c, int level)
{
	struct mm_smp *smp = mm_smp(c->mm);
	mm_sched_hook_fn fn = atomic_load_explicit(&smp->sched_hook, memory_order_relaxed);
	void *hctx = atomic_load_explicit(&smp->sched_ctx, memory_order_relaxed);
	mm_set_sched_hook(c->mm, NULL, NULL);
	hb();
	mf_check(c, level);
	hb();
	mm_set_sched_hook(c->mm, fn, hctx);
}

/*
 * After each op, by the task that ran it: a new allocator report (no op
 * here makes one on purpose) names this op - reports are instance-wide, so
 * it may also come from an op another task ran while this one was
 * suspended, or from an interrupt handler run meanwhile - then the checker.
 */
static void after_op(void)
{
	struct mf_ctx *c = ctx();
	unsigned long reports = mm_nr_reports(c->mm);
	if (reports != S.reports)
		mf_fail(c, "C1", "%s (or an op of another task, or an interrupt, run while it was suspended) left an "
			"unexpected allocator report (%lu new): %s", sched_ops[c->prog[c->cur].kind].name,
			reports - S.reports, mm_last_report(c->mm)->msg);
	/* A full walk only when no task is in the middle of an op (in-flight states are not violations). */
	int level = S.busy == 0 ? c->check_level : (c->check_level > 0 ? 1 : 0);
	check_unswitched(c, level);
	if (mm_cpu_current(c->mm) >= 0)
		mm_cpu_detach(c->mm);
	hb();
}

static int task_fn(void *arg)
{
	struct task *t = arg;
	for (unsigned int k = 0; k < t->nops; k++) {
		unsigned int i = t->ops[k];
		struct mf_op *op = &S.c->prog[i];
		hb();                   /* harness state last touched by another task */
		t->cur = i;
		sched_mark(k);          /* the script's actions name a task's k-th op */
		set_label(t, i);
		sched_op(sched_ops[op->kind].name, (long)i);
		S.busy++;
		op->ran = true;
		sched_ops[op->kind].exec(ctx(), op);
		mf_op_ran(ctx());       /* MMFUZZ_CRASH_AT_OP, MMFUZZ_STATS */
		hb();
		S.busy--;
		after_op();
	}
	sched_set_label(NULL);
	return 0;
}

/* The engine, its fibers and its decision log, made before any input (sched_reserve()). */
static void sched_warm(struct mf_ctx *c)
{
	if (sched_reserve(MAX_TASKS, MAX_STEPS))
		mf_fail(c, "harness", "sched_reserve(%d, %lu) failed", MAX_TASKS, MAX_STEPS);
}

static void sched_config_of(const struct mf_op *setup, struct mm_config *cfg)
{
	mf_config_named(cfg, cfg_kinds[setup->a[0]], (unsigned int)setup->a[1]);
}

/* Append a script action (sched.h, SCHED_SCRIPT) from a preempt / irq / migrate op. */
static void script_add(const struct mf_op *op, unsigned kind, unsigned arg)
{
	if (S.nscript + SCHED_SCRIPT_STEP_BYTES > sizeof(S.script))
		return;
	uint8_t *p = S.script + S.nscript;
	p[0] = (uint8_t)((unsigned long)op->a[0] % (unsigned long)S.ntasks | kind << 4);
	p[1] = (uint8_t)op->a[1];
	p[2] = (uint8_t)op->a[2];
	p[3] = (uint8_t)arg;
	S.nscript += SCHED_SCRIPT_STEP_BYTES;
}

static const char *outcome_inv(enum sched_outcome o)
{
	return o == SCHED_ERROR ? "harness" : "T1";
}

static void teardown(struct mf_ctx *c)
{
	c->tearing_down = true;
	while (mf_shadow_count(c->sh))
		free_any(c, c->sh->live[mf_shadow_count(c->sh) - 1]);
	S.npool = 0;
	for (int k = 0; k < NCACHES; k++) {
		unsigned long r = mm_nr_reports(c->mm);
		if (!S.cache[k])
			continue;
		kmem_cache_destroy(S.cache[k]);
		S.cache[k] = NULL;
		if (mm_nr_reports(c->mm) != r)
			mf_fail(c, "S1", "kmem_cache_destroy of a cache whose objects were all freed reported: %s",
				mm_last_report(c->mm)->msg);
	}
	for (size_t k = 0; S.kmalloc_used && k < sizeof(kmalloc_vals) / sizeof(kmalloc_vals[0]); k++)
		if (kmalloc_vals[k] <= KMALLOC_MAX_CACHE_SIZE)
			kmem_cache_shrink(kmalloc_slab(c->mm, kmalloc_vals[k], GFP_KERNEL));
	/*
	 * The instance's teardown: drain, check, back to the initial state.
	 * Its check walks the lists (level 2) only when the final level asks
	 * for more than that walk, which ran on the live state already; the
	 * comparison with the initial state proves the rest.
	 */
	int final = c->final_level;
	c->final_level = final > 2 ? 2 : (final > 0 ? 1 : 0);
	mf_instance_teardown(c);
	c->final_level = final;
}

static bool sched_begin(struct mf_ctx *c, const struct mf_op *setup)
{
	struct mm_config cfg;
	sched_config_of(setup, &cfg);
	if (!mf_instance(c, &cfg))
		mf_fail(c, "harness", "mm_create failed for the config %s", cfg_names[setup->a[0]]);
	memset(&S, 0, sizeof(S));
	S.c = c;
	S.ncpus = (int)cfg.nr_cpus;
	S.ntasks = (int)setup->a[2];
	S.timeline = c->trace != NULL;
	mf_shadow_reset(c->sh, (uintptr_t)mm_arena_base(c->mm), (uintptr_t)mm_arena_base(c->mm) + mm_arena_size(c->mm));
	mf_pages_begin(c);

	/* The tasks' programs and the script. */
	for (int t = 0; t < S.ntasks; t++)
		S.task[t].idx = t;
	for (unsigned int i = 0; i < c->nops; i++) {
		const struct mf_op *op = &c->prog[i];
		if (op->kind == OP_PREEMPT)
			script_add(op, SCHED_SCRIPT_SWITCH, (unsigned)op->a[3] | (op->a[4] ? SCHED_SCRIPT_RELEASE : 0));
		else if (op->kind == OP_IRQ)
			script_add(op, SCHED_SCRIPT_IRQ,
				   (unsigned)(op->a[3] | op->a[4] << 2 | op->a[5] << 4 | op->a[6] << 5 | op->a[7] << 6));
		else if (op->kind == OP_MIGRATE)
			script_add(op, SCHED_SCRIPT_MIGRATE, (unsigned)op->a[3]);
		else {
			struct task *t = &S.task[op->a[0] % S.ntasks];
			if (t->nops < MAX_TASK_OPS)
				t->ops[t->nops++] = i;
		}
	}

	/* Only the caches the input uses: creating and destroying one is a good part of a small input's cost. */
	bool used[NCACHES] = { false };
	for (unsigned int i = 0; i < c->nops; i++) {
		const struct mf_op *op = &c->prog[i];
		if (op->kind == OP_ALLOC || op->kind == OP_ALLOC_BULK || op->kind == OP_SHRINK)
			used[op->a[1]] = true;
		else if (op->kind == OP_IRQ && op->a[3])
			used[op->a[7]] = true;
		else if (op->kind == OP_KMALLOC)
			S.kmalloc_used = true;
	}
	for (int k = 0; k < NCACHES; k++) {
		char name[16];
		if (!used[k])
			continue;
		snprintf(name, sizeof(name), "sched%d", k);
		S.cache[k] = kmem_cache_create(c->mm, name, cache_size[k], 0, cache_flags[k], NULL);
		if (!S.cache[k])
			mf_fail(c, "harness", "kmem_cache_create(%s) failed", name);
	}
	mm_set_irq_handler(c->mm, irq_handler, c);
	S.reports = mm_nr_reports(c->mm);

	static const char *const names[MAX_TASKS] = { "t0", "t1", "t2", "t3" };
	struct sched_task_desc td[MAX_TASKS];
	for (int t = 0; t < S.ntasks; t++)
		td[t] = (struct sched_task_desc){ names[t], task_fn, &S.task[t], -1 };
	struct sched_opts o;
	sched_opts_default(&o);
	o.policy = SCHED_SCRIPT;
	o.bytes = S.script;
	o.nbytes = S.nscript;
	o.mm = c->mm;
	o.irqs = true;
	o.migrations = true;
	o.max_steps = MAX_STEPS;
	o.fresh_tasks = true;           /* no run's path depends on an earlier one (stability) */
	o.catch_abort = false;          /* a violation aborts where it is found: the engine's crash */
	o.timeline = S.timeline ? c->trace : NULL;
	o.scenario = "sched-target";
	struct sched_result r = sched_run(&o, td, S.ntasks);
	mm_set_irq_handler(c->mm, NULL, NULL);
	if (r.failed) {
		c->cur = r.failed_task >= 0 && r.failed_task < S.ntasks ? S.task[r.failed_task].cur : 0;
		mf_fail(c, outcome_inv(r.outcome), "the schedule ended in %s after %lu switch points: %s",
			sched_outcome_name(r.outcome), r.steps, r.reason);
	}
	if (S.timeline)
		fprintf(c->trace, "# schedule done: %lu switch points, %lu switches (%lu preemptions), %lu irqs "
			"(%lu handler runs), %lu migrations\n", r.steps, r.switches, r.preemptions, r.irqs, S.irq_runs,
			r.migrations);

	/* The final check on the state the tasks left, then teardown. */
	c->cur = c->nops ? c->nops - 1 : 0;
	if (mm_cpu_attach(c->mm, 0) < 0)
		mf_fail(c, "harness", "the scheduler's thread cannot attach vCPU 0 after the run");
	if (c->final_level > 0) {
		c->final_check = true;
		mf_check(c, c->final_level);
		c->final_check = false;
	}
	teardown(c);
	return false;       /* everything is done: the harness has nothing left to run */
}

static void sched_release(struct mf_ctx *c, struct mf_alloc *a)
{
	free_any(c, a);     /* not reached: begin() tears down itself */
}

static const struct mf_target sched_target = {
	.name = "sched",
	.setup = &sched_setup,
	.ops = sched_ops,
	.nops = OP_NR,
	.check_level = 1,
	.final_level = 2,
	.begin = sched_begin,
	.release = sched_release,
	.config_of = sched_config_of,
	.warm = sched_warm,
	.no_cgen = true,
};

MF_TARGET(sched_target)

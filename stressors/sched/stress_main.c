/* SPDX-License-Identifier: MIT */
/*
 * stress_main.c - mmfuzz-sched-stress: the stressor's modes under the
 * deterministic scheduler (./mmfuzz stress MODE --deterministic ...).
 *
 * Each run resets one instance (mm_reset) and runs T tasks as fibers over
 * M vCPUs doing the mode's allocator ops; objects are filled with a tag
 * and checked before every free, some are handed to other tasks through a
 * spinlock-protected ring (remote frees), pcps are drained now and then
 * and their high/batch changed at runtime (high below batch too),
 * and the policy decides every switch, interrupt (the handler allocates
 * and frees with GFP_ATOMIC) and migration.  After each batch of ops a task
 * runs mm_check level 2; at the end of the run everything is freed, caches
 * shrunk, pcps drained, free pages must be back at the creation value and
 * mm_check level 3 must be clean.
 *
 * Same --seed (and options) => same interleaving and trace hash.  Run i's
 * seed is sched_seed(master, i).  A failure prints the command that reruns
 * exactly that run and writes an artifact (--replay FILE replays it and
 * checks the trace hash).
 *
 *   mmfuzz-sched-stress MODE --deterministic [--seed X] [--runs N] [--run I]
 *       [--policy random|pct|sticky] [--tasks T] [--cpus M] [--steps K]
 *       [--no-irq] [--no-migrate] [--irq-permille P] [--migrate-permille P]
 *       [--bounce-permille P] [--no-tid-check] [--selftest scribble|leak|race]
 *       [--trace] [--artifact FILE] [--replay FILE] [--quiet]
 *   mmfuzz-sched-stress MODE --deterministic --grade [--runs N]
 *       [--policy all|P[,P...]] [--json FILE] [same scenario options]
 *   mmfuzz-sched-stress --wilson K N
 *
 * --steps K: allocator ops per task (batches of 8, mm_check 2 after each).
 *
 * --grade (issue 6, "Grading"): N runs per policy, all of them (no stop at
 * the first failure), and one line per policy: failures / runs, the
 * detection probability per run with its 95% Wilson score interval, the
 * runs to the first failure and runs/s; --json writes the same.  Each
 * policy's runs are exactly the runs a plain invocation with that policy
 * makes (same seeds, same PCT k), so the first failure's rerun command
 * replays it.  Built with -DMM_INJECT=<id> it grades the engine against a
 * bug-zoo bug; on the correct build every run must pass.
 *
 * --selftest KIND plants a fault the runs must catch (STYLE.md rule 16):
 * scribble (task 0 flips a byte of an object it holds: every run fails),
 * leak (task 0 forgets one object: conservation fails), race (every task
 * does one read, preemption point, write of a shared counter: a lost
 * update that only some interleavings produce, so a policy's detection
 * probability lies strictly between 0 and 1 - what the grading ctest uses).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "internal.h"
#include "mm/cpu.h"
#include "mm/mm.h"
#include "mm/slab.h"
#include "sched/sched.h"
#include "sched/tidwatch.h"

#ifndef MM_TEST_HOOKS
int main(void)
{
	fprintf(stderr, "mmfuzz-sched-stress: needs MM_TEST_HOOKS (the preemption points)\n");
	return 2;
}
#else

enum mode { M_PAGES, M_PCP, M_BULK, M_SLUB, M_KMALLOC, M_MIXED, M_NR };
static const char *const mode_names[M_NR] = { "pages", "pcp", "bulk", "slub", "kmalloc", "mixed" };

#define NCACHES 6
#define HELD 8
#define RING 16
#define BATCH 8
#define BULK 8

enum kind { K_NONE, K_PAGE, K_OBJ, K_KMALLOC };

struct obj {
	enum kind kind;
	void *ptr;                      /* K_PAGE: struct page * */
	unsigned order;                 /* K_PAGE */
	int cache;                      /* K_OBJ */
	size_t size;                    /* bytes filled */
	unsigned char tag;
};

struct world {
	struct mm *mm;
	struct mm_config cfg;
	enum mode mode;
	int tasks, cpus, steps;
	struct kmem_cache *caches[NCACHES];
	unsigned cache_size[NCACHES];
	spinlock_t ring_lock;
	struct obj ring[RING];
	int head, tail;                 /* under ring_lock */
	atomic_int done;                /* tasks finished: atomic so TSan (which sees fibers as threads, with no-sync handoffs) sees no race */
	long free_created;              /* free pages right after mm_create */
	atomic_ulong ops;               /* ops by every task: atomic for the same reason */
	struct obj irq_held[64];        /* per vCPU: the object an interrupt handler kept */
	const char *selftest;           /* --selftest KIND, or NULL */
	atomic_long race;               /* --selftest race: the shared counter (read, point, write) */
	bool irqs, migrations;          /* --no-irq, --no-migrate clear them */
	bool pcp_updated;               /* a task changed pcp high/batch: back to the boot values before the next run */
	unsigned irq_permille, migrate_permille; /* chances at an eligible point (default 40 each) */
	unsigned bounce_permille;       /* chance of going back after a migration (sched.h; default 500) */
	bool tid_check;                 /* the tid contract at every committed point (--no-tid-check clears it) */
	struct tidwatch tw;             /* its state: the last {tid, freelist} per cache and vCPU */
};

static struct world W;

static long total_free(struct mm *mm)
{
	long n = 0;
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = mm_zone(mm, (enum zone_type)z);
		if (zone)
			n += zone_free_pages(zone);
	}
	return n;
}

static uint64_t rnd(unsigned n)
{
	return n ? sched_random() % n : 0;
}

/* ---------------------------------------------------------------- objects */

static unsigned char *obj_bytes(struct world *w, const struct obj *o)
{
	return o->kind == K_PAGE ? page_address(w->mm, o->ptr) : o->ptr;
}

static void obj_fill(struct world *w, struct obj *o, unsigned char tag)
{
	o->tag = tag;
	if (o->size)
		memset(obj_bytes(w, o), tag, o->size);
}

/* The object's contents are still its tag; false after sched_fail (which returns only outside a task). */
static bool obj_check(struct world *w, const struct obj *o)
{
	const unsigned char *b = obj_bytes(w, o);
	size_t stride = o->size > 4096 ? 509 : 1;
	for (size_t i = 0; i < o->size; i += stride)
		if (b[i] != o->tag) {
			sched_fail("%s %p: byte %zu of %zu is %#x, expected %#x (overwritten while held)",
				   o->kind == K_PAGE ? "page" : "object", (void *)b, i, o->size, b[i], o->tag);
			return false;
		}
	if (o->size && b[o->size - 1] != o->tag) {
		sched_fail("object %p: last byte overwritten", (void *)b);
		return false;
	}
	return true;
}

static void obj_verify(struct world *w, const struct obj *o)
{
	(void)obj_check(w, o);
}

static void obj_free(struct world *w, struct obj *o)
{
	obj_verify(w, o);
	switch (o->kind) {
	case K_PAGE:
		__free_pages(w->mm, o->ptr, o->order);
		break;
	case K_OBJ:
		kmem_cache_free(w->caches[o->cache], o->ptr);
		break;
	case K_KMALLOC:
		kfree(w->mm, o->ptr);
		break;
	default:
		break;
	}
	o->kind = K_NONE;
}

static void check_zero(const struct obj *o, const unsigned char *b)
{
	for (size_t i = 0; i < o->size; i += 64)
		if (b[i])
			sched_fail("__GFP_ZERO/zalloc memory %p: byte %zu is %#x", (void *)b, i, b[i]);
}

static bool ring_push(struct world *w, const struct obj *o)
{
	bool ok = false;
	spin_lock(&w->ring_lock);
	mm_preempt_point(w->mm, MM_PP_USER);
	if (w->tail - w->head < RING) {
		w->ring[w->tail % RING] = *o;
		w->tail++;
		ok = true;
	}
	spin_unlock(&w->ring_lock);
	return ok;
}

static bool ring_pop(struct world *w, struct obj *o)
{
	bool ok = false;
	spin_lock(&w->ring_lock);
	if (w->head < w->tail) {
		mm_preempt_point(w->mm, MM_PP_USER);
		*o = w->ring[w->head % RING];
		w->head++;
		ok = true;
	}
	spin_unlock(&w->ring_lock);
	return ok;
}

/* ---------------------------------------------------------------- ops */

static const gfp_t pcp_gfps[] = { GFP_KERNEL, GFP_HIGHUSER_MOVABLE, GFP_KERNEL | __GFP_RECLAIMABLE, GFP_ATOMIC };

/* Allocate one object of the mode into *o; false if the allocator said no. */
static bool op_alloc(struct world *w, enum mode m, struct obj *o, unsigned char tag)
{
	memset(o, 0, sizeof(*o));
	switch (m) {
	case M_PAGES:
	case M_PCP: {
		unsigned order = (unsigned)rnd(m == M_PCP ? 4 : 5);
		gfp_t gfp = pcp_gfps[rnd(4)];
		bool zero = m == M_PAGES && rnd(3) == 0;
		if (zero)
			gfp |= __GFP_ZERO;
		if (m == M_PAGES && order && rnd(2))
			gfp |= __GFP_COMP;
		struct page *p = alloc_pages(w->mm, gfp, order);
		if (!p)
			return false;
		o->kind = K_PAGE;
		o->ptr = p;
		o->order = order;
		o->size = (size_t)MM_PAGE_SIZE << order;
		if (zero)
			check_zero(o, page_address(w->mm, p));
		sched_op("alloc_pages", (long)order);
		break;
	}
	case M_SLUB: {
		int c = (int)rnd(NCACHES);
		bool zero = rnd(3) == 0;
		void *x = zero ? kmem_cache_zalloc(w->caches[c], GFP_KERNEL) : kmem_cache_alloc(w->caches[c], GFP_KERNEL);
		if (!x)
			return false;
		o->kind = K_OBJ;
		o->ptr = x;
		o->cache = c;
		o->size = w->cache_size[c];
		if (zero)
			check_zero(o, x);
		sched_op("kmem_cache_alloc", c);
		break;
	}
	case M_KMALLOC: {
		static const size_t sizes[] = { 8, 24, 64, 100, 192, 512, 1000, 2048, 4096, 8192, 12000, 20000 };
		size_t sz = sizes[rnd(sizeof(sizes) / sizeof(sizes[0]))];
		void *x;
		switch (rnd(3)) {
		case 0: x = kmalloc(w->mm, sz, GFP_KERNEL); break;
		case 1: x = kzalloc(w->mm, sz, GFP_KERNEL); break;
		default: x = kcalloc(w->mm, sz / 8, 8, GFP_KERNEL); sz = sz / 8 * 8; break;
		}
		if (!x)
			return false;
		if (ksize(w->mm, x) < sz)
			sched_fail("ksize(%p) = %zu < %zu", x, ksize(w->mm, x), sz);
		o->kind = K_KMALLOC;
		o->ptr = x;
		o->size = sz;
		sched_op("kmalloc", (long)sz);
		if (rnd(4) == 0) {              /* krealloc, contents kept */
			memset(x, tag, sz);
			size_t nsz = sz / 2 + 16;
			void *y = krealloc(w->mm, x, nsz, GFP_KERNEL);
			if (y) {
				const unsigned char *b = y;
				size_t keep = nsz < sz ? nsz : sz;
				for (size_t i = 0; i < keep; i += 7)
					if (b[i] != tag)
						sched_fail("krealloc %zu -> %zu lost byte %zu", sz, nsz, i);
				o->ptr = y;
				o->size = nsz;
				sched_op("krealloc", (long)nsz);
			}
		}
		break;
	}
	default:
		return false;
	}
	obj_fill(w, o, tag);
	return true;
}

/* One bulk op: pages (array + release_pages) or slab objects. */
static void op_bulk(struct world *w, unsigned char tag)
{
	if (rnd(2)) {
		static const char guard_cookie[1];
		struct page *const guard = (struct page *)(uintptr_t)guard_cookie;
		struct page *pages[BULK + 1];   /* one guard entry past the array */
		memset(pages, 0, sizeof(pages));
		pages[BULK] = guard;
		unsigned long pre = rnd(3);     /* partly populated array */
		for (unsigned long k = 0; k < pre; k++)
			pages[k] = alloc_pages(w->mm, GFP_KERNEL, 0);
		unsigned long n = alloc_pages_bulk_array(w->mm, GFP_KERNEL, BULK, pages);
		sched_op("bulk_pages", (long)n);
		/* The contract: never past nr_pages, and the populated count returned. */
		if (pages[BULK] != guard)
			sched_fail("alloc_pages_bulk_array wrote past its %d entries", BULK);
		unsigned long populated = 0;
		for (unsigned long k = 0; k < BULK; k++)
			populated += pages[k] != NULL;
		if (n != populated)
			sched_fail("alloc_pages_bulk_array returned %lu with %lu of %d entries populated", n, populated,
				   BULK);
		unsigned long cnt = 0;
		for (unsigned long k = 0; k < BULK; k++)
			if (pages[k]) {
				memset(page_address(w->mm, pages[k]), tag, MM_PAGE_SIZE);
				pages[cnt++] = pages[k];
			}
		sched_point();
		for (unsigned long k = 0; k < cnt; k++) {
			const unsigned char *b = page_address(w->mm, pages[k]);
			if (b[0] != tag || b[MM_PAGE_SIZE - 1] != tag)
				sched_fail("bulk page %lu overwritten", page_to_pfn(w->mm, pages[k]));
		}
		release_pages(w->mm, pages, cnt);
	} else {
		int c = (int)rnd(NCACHES);
		void *p[BULK];
		int n = kmem_cache_alloc_bulk(w->caches[c], GFP_KERNEL, BULK, p);
		sched_op("bulk_objs", n);
		for (int k = 0; k < n; k++)
			memset(p[k], tag, w->cache_size[c]);
		sched_point();
		for (int k = 0; k < n; k++) {
			const unsigned char *b = p[k];
			if (b[0] != tag || b[w->cache_size[c] - 1] != tag)
				sched_fail("bulk object %p of %s overwritten", p[k], kmem_cache_name(w->caches[c]));
		}
		if (n)
			kmem_cache_free_bulk(w->caches[c], (size_t)n, p);
	}
}

static void batch_check(struct world *w)
{
	struct mm_violation v;
	if (!mm_check(w->mm, 2, &v))
		sched_fail("mm_check level 2: %s", v.msg);
}

/*
 * The tid contract (sched/tidwatch.h) on the running task's vCPU, where
 * the pair must be a committed state: at a preemption point with
 * interrupts enabled (something else may run on the vCPU now), and
 * between ops.  A task that holds no vCPU has nothing to look at.
 */
static void tid_check(struct world *w, const char *where)
{
	char msg[400];
	int cpu;
	if (!w->tid_check || mm_irqs_disabled() || mm_in_interrupt() || (cpu = mm_cpu_current(w->mm)) < 0)
		return;
	if (!tidwatch_observe(&w->tw, cpu, where, msg, sizeof(msg)))
		sched_fail("%s", msg);
}

/* opts.point_check: every preemption point a task reaches. */
static void point_check(void *ctx, int point)
{
	tid_check(ctx, mm_pp_name((enum mm_pp)point));
}

/*
 * --selftest: plant a fault in the middle of a task's ops.  race is the
 * classic lost update: a plain read-modify-write split by a preemption
 * point (the counter is atomic only so that TSan, which sees fibers as
 * threads, does not end the run first).
 */
static void selftest_fire(struct world *w, int me, struct obj *held)
{
	if (!strcmp(w->selftest, "race")) {
		long v = atomic_load_explicit(&w->race, memory_order_relaxed);
		mm_preempt_point(w->mm, MM_PP_USER);
		atomic_store_explicit(&w->race, v + 1, memory_order_relaxed);
		return;
	}
	if (me != 0)
		return;
	for (int k = 0; k < HELD; k++) {
		struct obj *o = &held[k];
		if (o->kind == K_NONE || !o->size)
			continue;
		if (!strcmp(w->selftest, "scribble")) {
			obj_bytes(w, o)[o->size - 1] ^= 0x40;
		} else if (!strcmp(w->selftest, "leak")) {
			o->kind = K_NONE;       /* forgotten: never freed */
		}
		return;
	}
}

static int task_fn(void *ctx)
{
	struct world *w = ctx;
	int me = sched_current_task();
	struct obj held[HELD];
	memset(held, 0, sizeof(held));

	for (int i = 0; i < w->steps; i++) {
		unsigned char tag = (unsigned char)(0x20 + me * 16 + (i & 15));
		if (w->selftest && i == w->steps / 2)
			selftest_fire(w, me, held);
		enum mode m = w->mode;
		if (m == M_MIXED)
			m = (enum mode)rnd(M_MIXED);
		unsigned r = (unsigned)rnd(16);
		struct obj o;
		tid_check(w, "between ops");
		if (r == 0) {
			drain_all_pages(w->mm, NULL);
			sched_op("drain_all", 0);
		} else if (r == 1 && (m == M_SLUB || m == M_KMALLOC)) {
			kmem_cache_shrink(w->caches[rnd(NCACHES)]);
			sched_op("shrink", 0);
		} else if (r == 1) {
			/* Runtime pcp high/batch (the free stressor's control thread does
			 * the same): high below batch too, or back to the boot values. */
			unsigned high = (unsigned)rnd(96), batch = 1 + (unsigned)rnd(31);
			if (rnd(8) == 0)
				high = batch = 0;
			__atomic_store_n(&w->pcp_updated, true, __ATOMIC_RELAXED);   /* tasks are threads to TSan */
			mm_pcp_update(w->mm, high, batch);
			sched_op("pcp_update", (long)high);
		} else if (r < 4 && ring_pop(w, &o)) {
			sched_op("remote_free", o.kind);
			obj_free(w, &o);
		} else if (m == M_BULK) {
			op_bulk(w, tag);
		} else {
			int slot = (int)rnd(HELD);
			if (held[slot].kind != K_NONE) {
				if (rnd(2) == 0 && ring_push(w, &held[slot]))
					held[slot].kind = K_NONE;
				else
					obj_free(w, &held[slot]);
			}
			if (op_alloc(w, m, &held[slot], tag))
				atomic_fetch_add_explicit(&w->ops, 1, memory_order_relaxed);
		}
		atomic_fetch_add_explicit(&w->ops, 1, memory_order_relaxed);
		tid_check(w, "between ops");
		if ((i + 1) % BATCH == 0 || i + 1 == w->steps)
			batch_check(w);
	}
	for (int k = 0; k < HELD; k++)
		if (held[k].kind != K_NONE)
			obj_free(w, &held[k]);
	if (++w->done == w->tasks) {   /* the last one frees what is left in the ring */
		struct obj o;
		while (ring_pop(w, &o))
			obj_free(w, &o);
	}
	return 0;
}

/*
 * The interrupt handler (GFP_ATOMIC, on the interrupted task's vCPU): in
 * the slab modes it allocates two objects from one of the scenario's own
 * caches - the caches the interrupted fast path works on - frees the
 * first and keeps the second until the next interrupt on this vCPU (or
 * the end of the run): the "allocate, allocate, free the first" of the
 * 2008 cmpxchg_local revert, which puts the freelist head back with
 * another next.  Then a page, allocated and freed.
 */
static void irq_handler(struct mm *mm, int cpu, void *ctx)
{
	struct world *w = ctx;
	struct obj *kept = &w->irq_held[cpu & 63];
	if (kept->kind != K_NONE)
		obj_free(w, kept);
	if (w->mode == M_SLUB || w->mode == M_BULK || w->mode == M_MIXED) {
		int c = (int)rnd(NCACHES);
		void *x = kmem_cache_alloc(w->caches[c], GFP_ATOMIC);
		void *y = x ? kmem_cache_alloc(w->caches[c], GFP_ATOMIC) : NULL;
		if (x) {
			memset(x, 0xee, w->cache_size[c]);
			kmem_cache_free(w->caches[c], x);
		}
		if (y) {
			*kept = (struct obj){ .kind = K_OBJ, .ptr = y, .cache = c, .size = w->cache_size[c] };
			obj_fill(w, kept, 0xed);
		}
	}
	if (w->mode == M_KMALLOC || w->mode == M_MIXED) {
		void *x = kmalloc(mm, 64, GFP_ATOMIC);
		if (x) {
			memset(x, 0xee, 64);
			kfree(mm, x);
		}
	}
	struct page *p = alloc_pages(mm, GFP_ATOMIC, 0);
	if (p) {
		memset(page_address(mm, p), 0xef, MM_PAGE_SIZE);
		__free_pages(mm, p, 0);
	}
}

/*
 * The end-of-run check, on the scheduler's thread.  Here sched_fail()
 * records and returns, so every failure returns at once: the checks after
 * it would walk what it found broken (a corrupted cpu freelist, flushed by
 * kmem_cache_shrink, is followed into the void).
 */
static int world_finish(void *ctx)
{
	struct world *w = ctx;
	struct mm_violation v;
	if (w->head != w->tail) {
		sched_fail("%d objects left in the ring", w->tail - w->head);
		return 1;
	}
	if (!mm_check(w->mm, 3, &v)) {
		sched_fail("mm_check level 3 at the end of the run: %s", v.msg);
		return 1;
	}
	if (w->selftest && !strcmp(w->selftest, "race") &&
	    atomic_load_explicit(&w->race, memory_order_relaxed) != w->tasks) {
		sched_fail("--selftest race: counter %ld after %d increments (a lost update)",
			   atomic_load_explicit(&w->race, memory_order_relaxed), w->tasks);
		return 1;
	}
	unsigned long fails = 0;
	for (int c = 0; c < 64; c++)
		if (w->irq_held[c].kind != K_NONE) {
			if (!obj_check(w, &w->irq_held[c]))
				fails++;
			obj_free(w, &w->irq_held[c]);
		}
	if (fails)
		return 1;
	for (struct kmem_cache *s = kmem_cache_next(w->mm, NULL); s; s = kmem_cache_next(w->mm, s))
		kmem_cache_shrink(s);
	drain_all_pages(w->mm, NULL);
	long now = total_free(w->mm);
	if (now != w->free_created) {
		sched_fail("conservation: %ld pages free after the run, %ld at creation", now, w->free_created);
		return 1;
	}
	if (!mm_check(w->mm, 3, &v)) {
		sched_fail("mm_check level 3: %s", v.msg);
		return 1;
	}
	return 0;
}

/* ---------------------------------------------------------------- instance */

static int world_create(struct world *w)
{
	char err[256];
	w->mm = mm_create(&w->cfg, err, sizeof(err));
	if (!w->mm) {
		fprintf(stderr, "mmfuzz-sched-stress: mm_create: %s\n", err);
		return -1;
	}
	w->free_created = total_free(w->mm);
	static const unsigned sizes[NCACHES] = { 8, 64, 192, 512, 1024, 4096 };
	static const slab_flags_t flags[NCACHES] = { 0, SLAB_HWCACHE_ALIGN, 0, SLAB_RED_ZONE | SLAB_POISON, 0, 0 };
	for (int c = 0; c < NCACHES; c++) {
		char name[32];
		snprintf(name, sizeof(name), "ss-%u%s", sizes[c], flags[c] & SLAB_POISON ? "-dbg" : "");
		w->caches[c] = kmem_cache_create(w->mm, name, sizes[c], 0, flags[c], NULL);
		w->cache_size[c] = sizes[c];
		if (!w->caches[c]) {
			fprintf(stderr, "mmfuzz-sched-stress: kmem_cache_create %s failed\n", name);
			return -1;
		}
	}
	tidwatch_init(&w->tw, w->caches, NCACHES, w->cpus);
	return 0;
}

static int world_setup(struct world *w, struct sched_task_desc *t)
{
	mm_reset(w->mm);
	if (w->pcp_updated) {
		mm_pcp_update(w->mm, 0, 0);
		w->pcp_updated = false;
	}
	mm_set_irq_handler(w->mm, irq_handler, w);
	spin_lock_init(&w->ring_lock);
	w->head = w->tail = 0;
	w->done = 0;
	atomic_store(&w->race, 0);
	memset(w->irq_held, 0, sizeof(w->irq_held));
	tidwatch_reset(&w->tw);         /* mm_reset put every tid back */
	long f = total_free(w->mm);
	if (f != w->free_created) {
		fprintf(stderr, "mmfuzz-sched-stress: mm_reset left %ld free pages, %ld at creation\n", f,
			w->free_created);
		return -1;
	}
	static const char *const names[SCHED_MAX_TASKS] = { "t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7",
							   "t8", "t9", "t10", "t11", "t12", "t13", "t14", "t15" };
	for (int i = 0; i < w->tasks; i++)
		t[i] = (struct sched_task_desc){ names[i], task_fn, w, i < w->cpus ? i : -1 };
	return w->tasks;
}

/* After a failed run locks may be held: rebuild. */
static int world_recover(struct world *w)
{
	mm_destroy(w->mm);
	return world_create(w);
}

/* ---------------------------------------------------------------- main */

/*
 * The scenario's shape where the command line leaves it open.  The page
 * modes: 3 tasks over 2 vCPUs, so tasks wait for a vCPU as they wait for a
 * CPU.  The modes that go through SLUB: 3 tasks over 4 vCPUs and migration
 * at one eligible point in 5 - a migration needs a free vCPU, and with
 * more tasks than vCPUs there is none (the one a task sleeps on is
 * promised to its waiter), so SLUB's per-CPU protocol would almost never
 * see a task move in the middle of a fast path.
 */
static void mode_defaults(struct world *w, enum mode m)
{
	bool slub = m == M_SLUB || m == M_BULK || m == M_KMALLOC || m == M_MIXED;
	if (w->tasks < 0)
		w->tasks = 3;
	if (w->cpus < 0)
		w->cpus = slub ? 4 : 2;
	if (w->migrate_permille == ~0u)
		w->migrate_permille = slub ? 200 : 40;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: mmfuzz-sched-stress MODE --deterministic [--seed X] [--runs N] [--run I]\n"
		   "           [--policy random|pct|sticky] [--tasks T] [--cpus M] [--steps K]\n"
		   "           [--no-irq] [--no-migrate] [--irq-permille P] [--migrate-permille P]\n"
		   "           [--bounce-permille P] [--no-tid-check] [--selftest scribble|leak|race]\n"
		   "           [--trace] [--artifact FILE] [--replay FILE] [--quiet]\n"
		   "       mmfuzz-sched-stress MODE --deterministic --grade [--runs N] [--policy all|P,P..]\n"
		   "           [--json FILE] [scenario options as above]\n"
		   "       mmfuzz-sched-stress --wilson K N     (95%% Wilson interval of K in N)\n"
		   "modes: pages pcp bulk slub kmalloc mixed\n"
		   "--steps K: allocator ops per task; run I's seed is sched_seed(X, I)\n"
		   "defaults: seed 1, 100 runs (1000 with --grade), policy random, 3 tasks, 24 steps, irq 40/1000,\n"
		   "          bounce 500/1000; pages, pcp: 2 vCPUs, migrate 40/1000;\n"
		   "          slub, bulk, kmalloc, mixed: 4 vCPUs, migrate 200/1000\n"
		   "--artifact FILE: where the first failure's schedule goes (default\n"
		   "         sched-stress-MODE-SEED.sched in the current directory, replaced if it exists)\n"
		   "--replay FILE: run the artifact's own schedule again; it brings its mode, seed, run and\n"
		   "         shape, so it takes no scenario option; exit 0 when it ends as the artifact did\n"
		   "         (REPRODUCED), 1 when not\n"
		   "Ctrl-C or SIGTERM: stop after the current run, print the total so far and INTERRUPTED,\n"
		   "         exit 130 (1 when a run failed)\n"
		   "--json FILE: written whole at the end (a temporary file renamed over FILE; - is stdout);\n"
		   "         a grade that could not write it says so and exits 3 (1 when a run failed)\n"
		   "--grade: N runs per policy (default all: random, pct, sticky): failures, detection\n"
		   "         probability with its 95%% Wilson interval, runs to the first failure, runs/s\n"
		   "--selftest: plant a fault the runs must catch (race: only some interleavings)\n");
}

/*
 * The failure artifact, written whole or not at all (cli.h): into a
 * temporary file beside @path, renamed over it when complete, so an
 * earlier run's artifact of the same name is never left half replaced.
 */
static int artifact_write(const char *path, const struct sched_opts *o, const struct sched_result *r)
{
	struct cli_out out;
	int e;

	if (cli_out_target(&out, path))
		return sched_artifact_write(out.target, o, r);
	int fd = cli_out_tmp(&out);
	if (fd < 0) {
		errno = -fd;
		return -1;
	}
	close(fd);
	if (sched_artifact_write(out.tmp, o, r))
		e = errno ? errno : EIO;
	else
		e = rename(out.tmp, out.target) ? errno : 0;
	if (e) {
		unlink(out.tmp);
		errno = e;
		return -1;
	}
	return 0;
}

/* The command that reruns run @run of @policy (the same words for every path that prints one). */
static void format_rerun(char *buf, size_t len, const struct world *w, uint64_t seed, unsigned long run,
			 enum sched_policy policy)
{
	/* Always all three: the modes' defaults differ (mode_defaults), a rate left out would be the wrong one. */
	char rates[96];
	snprintf(rates, sizeof(rates), " --irq-permille %u --migrate-permille %u --bounce-permille %u",
		 w->irq_permille, w->migrate_permille, w->bounce_permille);
	snprintf(buf, len, "./mmfuzz stress %s --deterministic --seed %#" PRIx64 " --run %lu --policy %s "
		 "--tasks %d --cpus %d --steps %d%s%s%s%s%s%s", mode_names[w->mode], seed, run, sched_policy_name(policy),
		 w->tasks, w->cpus, w->steps, w->irqs ? "" : " --no-irq", w->migrations ? "" : " --no-migrate", rates,
		 w->tid_check ? "" : " --no-tid-check",
		 w->selftest ? " --selftest " : "", w->selftest ? w->selftest : "");
}

static void base_opts(struct sched_opts *o, struct world *w)
{
	sched_opts_default(o);
	o->mm = w->mm;
	o->irqs = w->irqs;
	o->migrations = w->migrations;
	o->irq_permille = w->irq_permille;
	o->migrate_permille = w->migrate_permille;
	o->bounce_permille = w->bounce_permille;
	o->finish = world_finish;
	o->finish_ctx = w;
	o->point_check = point_check;
	o->point_ctx = w;
	o->scenario = "stress";
}

/*
 * A segfault inside a task (a corrupted freelist followed into the void:
 * what slub-aba-single-cmpxchg does) would end the process and with it a
 * grading campaign.  In plain builds turn it into an abort, which the
 * engine catches in-process (SCHED_CRASH) and the scenario recovers from
 * by rebuilding the instance.  SA_NODEFER: the handler is left by a fiber
 * switch, never returns, so SIGSEGV must not stay blocked.  Sanitizer
 * builds keep their own handlers (their report is the finding).
 */
#if !defined(SCHED_ASAN) && !defined(SCHED_TSAN)
static void on_fault(int sig)
{
	if (sched_active() && sched_current_task() >= 0) {
		static const char msg[] = "mmfuzz-sched-stress: fault inside a task: ended as an abort\n";
		ssize_t rc = write(2, msg, sizeof(msg) - 1);
		(void)rc;
		abort();
	}
	signal(sig, SIG_DFL);
	raise(sig);
}
#endif

static void catch_faults(void)
{
#if !defined(SCHED_ASAN) && !defined(SCHED_TSAN)
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fault;
	sa.sa_flags = SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
#endif
}

/*
 * Ctrl-C and SIGTERM: the signal only sets a flag, seen between runs (a
 * run is short, and one stopped in the middle would leave the instance
 * half-changed); the run loop and --grade then print what they have,
 * INTERRUPTED, and exit 130.  SA_RESETHAND: a second signal ends the
 * process the default way.  A SIGINT ignored from the start (a background
 * job of a non-interactive shell) stays ignored.
 */
static volatile sig_atomic_t interrupted;

static double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void on_interrupt(int sig)
{
	interrupted = sig;
}

static void catch_interrupts(void)
{
	static const int sigs[] = { SIGINT, SIGTERM };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa, old;
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_interrupt;
		sa.sa_flags = SA_RESETHAND;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

/* PCT's k: the steps of run 0 of the random policy with the same master seed (deterministic). */
static long calibrate_pct(struct world *w, uint64_t seed)
{
	struct sched_task_desc t[SCHED_MAX_TASKS];
	struct sched_opts o;
	base_opts(&o, w);
	o.policy = SCHED_RANDOM;
	o.seed = seed;
	o.run = 0;
	int n = world_setup(w, t);
	if (n < 0)
		return -1;
	struct sched_result r = sched_run(&o, t, n);
	if (r.failed && world_recover(w))
		return -1;
	return r.steps ? (long)r.steps : 200;
}

/* ---------------------------------------------------------------- grading */

static int sc_setup(void *ctx, uint64_t seed, struct sched_task_desc *tasks, struct mm **mm)
{
	struct world *w = ctx;
	(void)seed;                     /* sched_run derives the same seed from (master, run) */
	if (!w->mm || interrupted)      /* interrupted: sched_explore stops with the runs done so far */
		return -1;
	*mm = w->mm;
	return world_setup(w, tasks);
}

static void sc_recover(void *ctx)
{
	struct world *w = ctx;
	if (world_recover(w)) {
		mm_destroy(w->mm);
		w->mm = NULL;           /* the next setup stops the exploration */
	}
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fputc(' ', f);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

struct grade_row {
	enum sched_policy policy;
	struct sched_explore_result er;
	double lo, hi;
	unsigned long pct_k;
	char rerun[320];
	bool error;
};

/*
 * --grade: every policy's N runs, never stopping at a failure.  The runs
 * are those of a plain invocation (sched_explore over the same setup,
 * options and PCT k), so "first failure at run I" replays with --run I.
 */
static int grade(struct world *w, const char *config, uint64_t seed, const enum sched_policy *pols, int npol,
		 unsigned long runs, const char *json)
{
	struct grade_row rows[SCHED_NR_POLICIES];
	struct sched_scenario sc = { "stress", config, w, sc_setup, world_finish, sc_recover };
	unsigned long total_runs = 0, total_fail = 0;

	printf("grade: %s seed %#" PRIx64 " irq %u/1000 migrate %u/1000 bounce %u/1000%s%s%s, %lu runs per policy\n",
	       config, seed, w->irq_permille, w->migrate_permille, w->bounce_permille, w->irqs ? "" : " no-irq",
	       w->migrations ? "" : " no-migrate", w->selftest ? " (selftest)" : "", runs);
	printf("grade: build %s\n", sched_build_id());
	printf("%-8s %9s %8s %9s  %-21s %9s %9s\n", "policy", "runs", "fails", "p", "95% CI (Wilson)", "first",
	       "runs/s");
	for (int i = 0; i < npol; i++) {
		struct grade_row *g = &rows[i];
		struct sched_opts o;
		memset(g, 0, sizeof(*g));
		g->policy = pols[i];
		base_opts(&o, w);
		o.policy = pols[i];
		o.seed = seed;
		o.config = config;
		if (o.policy == SCHED_PCT) {
			long k = calibrate_pct(w, seed);
			if (k < 0)
				return 2;
			o.pct_k = (unsigned long)k;
		}
		double t0 = mono_now();
		int err = sched_explore(&o, &sc, runs, false, &g->er);
		if (err && interrupted && w->mm) {
			/* The runs done before the signal are a grade of fewer runs. */
			g->er.seconds = mono_now() - t0;
			err = 0;
		}
		if (err || !w->mm) {
			printf("%-8s setup failed after %lu runs: %s\n", sched_policy_name(o.policy), g->er.runs,
			       g->er.first.reason);
			g->error = true;
			if (!w->mm)
				return 2;
			continue;
		}
		g->pct_k = g->er.pct_k;
		total_runs += g->er.runs;
		total_fail += g->er.failures;
		sched_wilson(g->er.failures, g->er.runs, 1.96, &g->lo, &g->hi);
		char first[24] = "-";
		if (g->er.failures) {
			snprintf(first, sizeof(first), "%lu", g->er.first_failure + 1);
			format_rerun(g->rerun, sizeof(g->rerun), w, seed, g->er.first_failure, o.policy);
		}
		printf("%-8s %9lu %8lu %9.6f  [%.6f, %.6f] %9s %9.0f\n", sched_policy_name(o.policy), g->er.runs,
		       g->er.failures, g->er.runs ? (double)g->er.failures / (double)g->er.runs : 0.0, g->lo, g->hi,
		       first, g->er.seconds > 0 ? (double)g->er.runs / g->er.seconds : 0.0);
		if (g->er.failures) {
			printf("         first failure (run %lu): %s: %s\n", g->er.first_failure,
			       sched_outcome_name(g->er.first.outcome), g->er.first.reason);
			printf("         rerun: %s\n", g->rerun);
		}
		fflush(stdout);
		if (interrupted) {
			npol = i + 1;           /* the JSON lists the policies that ran */
			break;
		}
	}
	double lo, hi;
	sched_wilson(total_fail, total_runs, 1.96, &lo, &hi);
	printf("grade: all policies: %lu failures in %lu runs (p %.6f, 95%% CI [%.6f, %.6f])\n", total_fail,
	       total_runs, total_runs ? (double)total_fail / (double)total_runs : 0.0, lo, hi);

	/* The JSON is written whole or not at all (cli.h); a grade that cannot write it still gives its verdict. */
	int json_err = 0;
	struct cli_out out;
	FILE *f = json ? cli_out_open(&out, json) : NULL;
	if (json && !f)
		json_err = errno ? errno : EIO;
	if (f) {
		fprintf(f, "{\n  \"mode\": \"%s\", \"config\": ", mode_names[w->mode]);
		json_str(f, config);
		fprintf(f, ", \"seed\": %" PRIu64 ", \"runs_per_policy\": %lu,\n  \"irqs\": %s, \"migrations\": %s, "
			"\"irq_permille\": %u, \"migrate_permille\": %u, \"bounce_permille\": %u, \"tid_check\": %s, "
			"\"selftest\": ", seed, runs, w->irqs ? "true" : "false", w->migrations ? "true" : "false",
			w->irq_permille, w->migrate_permille, w->bounce_permille, w->tid_check ? "true" : "false");
		json_str(f, w->selftest ? w->selftest : "");
		fprintf(f, ",\n  \"build\": ");
		json_str(f, sched_build_id());
		fprintf(f, ",\n  \"policies\": [\n");
		for (int i = 0; i < npol; i++) {
			const struct grade_row *g = &rows[i];
			fprintf(f, "    {\"policy\": \"%s\", \"error\": %s, \"runs\": %lu, \"failures\": %lu, \"p\": %.8f, "
				"\"ci95\": [%.8f, %.8f], \"runs_to_first_failure\": ", sched_policy_name(g->policy),
				g->error ? "true" : "false", g->er.runs, g->er.failures,
				g->er.runs ? (double)g->er.failures / (double)g->er.runs : 0.0, g->lo, g->hi);
			if (g->er.failures)
				fprintf(f, "%lu", g->er.first_failure + 1);
			else
				fprintf(f, "null");
			fprintf(f, ", \"seconds\": %.3f, \"runs_per_s\": %.1f, \"steps\": %lu, \"pct_k\": %lu,\n"
				"     \"first_failure\": ", g->er.seconds,
				g->er.seconds > 0 ? (double)g->er.runs / g->er.seconds : 0.0, g->er.steps, g->pct_k);
			if (g->er.failures) {
				fprintf(f, "{\"run\": %lu, \"outcome\": \"%s\", \"reason\": ", g->er.first_failure,
					sched_outcome_name(g->er.first.outcome));
				json_str(f, g->er.first.reason);
				fprintf(f, ", \"rerun\": ");
				json_str(f, g->rerun);
				fprintf(f, "}");
			} else {
				fprintf(f, "null");
			}
			fprintf(f, "}%s\n", i + 1 < npol ? "," : "");
		}
		fprintf(f, "  ],\n  \"total\": {\"runs\": %lu, \"failures\": %lu, \"ci95\": [%.8f, %.8f]},\n"
			"  \"interrupted\": %s\n}\n", total_runs, total_fail, lo, hi, interrupted ? "true" : "false");
		json_err = cli_out_commit(&out);
	}
	if (json_err)
		fprintf(stderr, "mmfuzz-sched-stress: --json %s: cannot write: %s (the lines above are the grade's "
			"only record)\n", json, strerror(json_err));
	if (interrupted)
		printf("INTERRUPTED (signal %d): the grade covers the runs above\n", (int)interrupted);
	printf("%s\n", total_fail ? "FAILURE" : interrupted ? "INTERRUPTED" : "SUCCESS");
	return total_fail ? 1 : interrupted ? 130 : json_err ? 3 : 0;
}

/* --policy all | random,pct,...: the policies a seed can drive. */
static int parse_policies(const char *v, enum sched_policy *out)
{
	char buf[128];
	int n = 0;
	if (!strcmp(v, "all"))
		v = "random,pct,sticky";
	snprintf(buf, sizeof(buf), "%s", v);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int p = sched_policy_parse(tok);
		if ((p != SCHED_RANDOM && p != SCHED_PCT && p != SCHED_STICKY) || n >= SCHED_NR_POLICIES)
			return -1;
		for (int k = 0; k < n; k++)
			if ((int)out[k] == p)
				return -1;      /* a policy twice would grade the same runs twice */
		out[n++] = (enum sched_policy)p;
	}
	return n;
}

/* A whole-number argument in [@lo, @hi] (cli.h), or false after saying what it wants. */
static bool arg_ulong(const char *opt, const char *v, unsigned long lo, unsigned long hi, unsigned long *out)
{
	if (cli_ulong(v, lo, hi, out))
		return true;
	fprintf(stderr, "mmfuzz-sched-stress: %s wants a whole number in %lu..%lu, not '%s'\n", opt, lo, hi, v);
	return false;
}

int main(int argc, char **argv)
{
	struct world *w = &W;
	uint64_t seed = 1;
	unsigned long runs = 100, only_run = ~0UL;
	int policy = SCHED_RANDOM;
	bool trace = false, quiet = false, do_grade = false, runs_given = false;
	const char *artifact = NULL, *replay = NULL, *json = NULL, *policies = NULL;
	const char *scenario_opt = NULL;        /* the last option --replay cannot take (the artifact has its own) */
	int mode = -1;
	w->tasks = -1;                  /* -1: the mode's default (mode_defaults) */
	w->cpus = -1;
	w->steps = 24;
	w->irqs = true;
	w->migrations = true;
	w->irq_permille = 40;
	w->migrate_permille = ~0u;
	w->tid_check = true;
	w->bounce_permille = 500;

	if (argc == 4 && !strcmp(argv[1], "--wilson")) {
		double lo, hi;
		unsigned long k, n;
		if (!arg_ulong("--wilson N", argv[3], 0, ~0UL, &n) || !arg_ulong("--wilson K", argv[2], 0, n, &k))
			return 2;
		sched_wilson(k, n, 1.96, &lo, &hi);
		printf("wilson %lu/%lu: p %.6f 95%% CI [%.6f, %.6f]\n", k, n, n ? (double)k / (double)n : 0.0, lo, hi);
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV() do { if (!v) { fprintf(stderr, "mmfuzz-sched-stress: %s needs a value\n", a); return 2; } i++; } while (0)
#define NUMV(lo, hi, dst)                                                                 \
	do {                                                                              \
		unsigned long x_;                                                         \
		NEEDV();                                                                  \
		if (!arg_ulong(a, v, (lo), (hi), &x_))                                    \
			return 2;                                                         \
		(dst) = (__typeof__(dst))x_;                                              \
	} while (0)
		if (!strcmp(a, "--deterministic")) {
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--seed")) { scenario_opt = a; NUMV(0, ~0UL, seed);
		} else if (!strcmp(a, "--runs")) { scenario_opt = a; NUMV(1, 1000000000UL, runs); runs_given = true;
		} else if (!strcmp(a, "--run")) { scenario_opt = a; NUMV(0, ~0UL - 1, only_run);
		} else if (!strcmp(a, "--tasks")) { scenario_opt = a; NUMV(1, SCHED_MAX_TASKS, w->tasks);
		} else if (!strcmp(a, "--cpus")) { scenario_opt = a; NUMV(1, 64, w->cpus);
		} else if (!strcmp(a, "--steps")) { scenario_opt = a; NUMV(1, 1000000000UL, w->steps);
		} else if (!strcmp(a, "--policy")) {
			scenario_opt = a;
			NEEDV();
			policies = v;
			policy = sched_policy_parse(v);
		} else if (!strcmp(a, "--grade")) { do_grade = true;
		} else if (!strcmp(a, "--json")) { NEEDV(); json = v;
		} else if (!strcmp(a, "--no-irq")) { scenario_opt = a; w->irqs = false;
		} else if (!strcmp(a, "--no-migrate")) { scenario_opt = a; w->migrations = false;
		} else if (!strcmp(a, "--no-tid-check")) { scenario_opt = a; w->tid_check = false;
		} else if (!strcmp(a, "--irq-permille")) { scenario_opt = a; NUMV(0, 1000, w->irq_permille);
		} else if (!strcmp(a, "--migrate-permille")) { scenario_opt = a; NUMV(0, 1000, w->migrate_permille);
		} else if (!strcmp(a, "--bounce-permille")) { scenario_opt = a; NUMV(0, 1000, w->bounce_permille);
		} else if (!strcmp(a, "--selftest")) {
			scenario_opt = a;
			NEEDV();
			if (strcmp(v, "scribble") && strcmp(v, "leak") && strcmp(v, "race")) {
				fprintf(stderr, "mmfuzz-sched-stress: --selftest scribble, leak or race\n");
				return 2;
			}
			w->selftest = v;
		} else if (!strcmp(a, "--trace")) { trace = true;
		} else if (!strcmp(a, "--quiet")) { quiet = true;
		} else if (!strcmp(a, "--artifact")) { scenario_opt = a; NEEDV(); artifact = v;
		} else if (!strcmp(a, "--replay")) { NEEDV(); replay = v;
		} else if (a[0] != '-' && mode < 0) {
			for (int m = 0; m < M_NR; m++)
				if (!strcmp(a, mode_names[m]))
					mode = m;
			if (mode < 0) {
				fprintf(stderr, "mmfuzz-sched-stress: unknown mode '%s'\n", a);
				usage(stderr);
				return 2;
			}
		} else {
			fprintf(stderr, "mmfuzz-sched-stress: unknown or unsupported option '%s'\n", a);
			usage(stderr);
			return 2;
		}
#undef NUMV
#undef NEEDV
	}
	enum sched_policy grade_pols[SCHED_NR_POLICIES];
	int ngrade = 0;
	if (do_grade) {
		ngrade = parse_policies(policies ? policies : "all", grade_pols);
		if (ngrade < 1) {
			fprintf(stderr, "mmfuzz-sched-stress: --grade --policy all, or a list of distinct random, pct, sticky\n");
			return 2;
		}
		if (!runs_given)
			runs = 1000;
		if (replay || only_run != ~0UL || trace) {
			fprintf(stderr, "mmfuzz-sched-stress: --grade does not take --replay, --run or --trace\n");
			return 2;
		}
	} else if (json) {
		fprintf(stderr, "mmfuzz-sched-stress: --json goes with --grade (the grade's report)\n");
		return 2;
	} else if (policy != SCHED_RANDOM && policy != SCHED_PCT && policy != SCHED_STICKY) {
		fprintf(stderr, "mmfuzz-sched-stress: --policy random, pct or sticky\n");
		return 2;
	}

	const char *why;
	if (json && (why = cli_unwritable(json))) {
		fprintf(stderr, "mmfuzz-sched-stress: --json %s: cannot write: %s\n", json, why);
		return 2;
	}
	if (artifact && (why = cli_unwritable(artifact))) {
		fprintf(stderr, "mmfuzz-sched-stress: --artifact %s: cannot write: %s\n", artifact, why);
		return 2;
	}
	if (replay && (why = cli_unreadable(replay))) {
		fprintf(stderr, "mmfuzz-sched-stress: --replay %s: cannot read: %s\n", replay, why);
		return 2;
	}

	if (replay && scenario_opt && !do_grade) {
		fprintf(stderr, "mmfuzz-sched-stress: --replay FILE runs the artifact's own schedule (its mode, seed, run, "
			"policy and shape): %s does not go with it\n", scenario_opt);
		return 2;
	}

	struct sched_artifact art;
	memset(&art, 0, sizeof(art));
	if (replay) {
		char err[256], mname[32] = "";
		int given_mode = mode;
		if (sched_artifact_read(replay, &art, err, sizeof(err))) {
			/* the reader's message names the file */
			fprintf(stderr, "mmfuzz-sched-stress: --replay: %s\n", err);
			return 2;
		}
		if (sscanf(art.config, "mode=%31s tasks=%d cpus=%d steps=%d", mname, &w->tasks, &w->cpus, &w->steps) != 4) {
			fprintf(stderr, "mmfuzz-sched-stress: %s: config '%s' is not this driver's\n", replay, art.config);
			return 2;
		}
		mode = -1;
		for (int m = 0; m < M_NR; m++)
			if (!strcmp(mname, mode_names[m]))
				mode = m;
		if (given_mode >= 0 && mode != given_mode) {
			fprintf(stderr, "mmfuzz-sched-stress: %s is an artifact of mode %s, not %s\n", replay, mname,
				mode_names[given_mode]);
			return 2;
		}
		static const char *const kinds[] = { "scribble", "leak", "race" };
		const char *st = strstr(art.config, " selftest=");
		for (int k = 0; st && k < 3; k++)
			if (!strcmp(st + 10, kinds[k]))
				w->selftest = kinds[k];
		if (strstr(art.config, " no-tid-check"))
			w->tid_check = false;
	}
	if (mode < 0) {
		fprintf(stderr, "mmfuzz-sched-stress: no MODE (one of pages pcp bulk slub kmalloc mixed)\n");
		usage(stderr);
		return 2;
	}
	mode_defaults(w, (enum mode)mode);
	if (w->tasks < 1 || w->tasks > SCHED_MAX_TASKS || w->cpus < 1 || w->cpus > 64 || w->steps < 1) {
		fprintf(stderr, "mmfuzz-sched-stress: --tasks 1..%d, --cpus 1..64, --steps >= 1\n", SCHED_MAX_TASKS);
		return 2;
	}
	w->mode = (enum mode)mode;
	mm_config_tiny(&w->cfg);
	w->cfg.nr_cpus = w->cpus;
	w->cfg.quiet = true;
	if (world_create(w))
		return 2;

	char config[160];
	snprintf(config, sizeof(config), "mode=%s tasks=%d cpus=%d steps=%d%s%s%s", mode_names[mode], w->tasks,
		 w->cpus, w->steps, w->tid_check ? "" : " no-tid-check", w->selftest ? " selftest=" : "",
		 w->selftest ? w->selftest : "");
	struct sched_task_desc t[SCHED_MAX_TASKS];

	setvbuf(stdout, NULL, _IOLBF, 0);
	catch_faults();
	catch_interrupts();
	if (do_grade) {
		int rc = grade(w, config, seed, grade_pols, ngrade, runs, json);
		if (w->mm)
			mm_destroy(w->mm);
		sched_thread_release();
		return rc;
	}

	if (replay) {
		struct sched_opts base;
		base_opts(&base, w);
		base.config = config;
		base.timeline = trace ? stdout : NULL;
		int n = world_setup(w, t);
		if (n < 0)
			return 2;
		struct sched_result r = sched_replay(&art, &base, t, n);
		printf("replay %s: %s seed %#" PRIx64 " run %" PRIu64 " steps %lu switches %lu trace %016" PRIx64
		       " (artifact %016" PRIx64 ")\n", replay, config, art.master_seed, art.run, r.steps, r.switches,
		       r.trace_hash, art.trace_hash);
		printf("outcome %s%s%s (artifact: %s)\n", sched_outcome_name(r.outcome), r.failed ? ": " : "",
		       r.failed ? r.reason : "", sched_outcome_name(art.outcome));
		sched_artifact_free(&art);
		/* A replay reproduces when it ends the way the artifact did, with the same trace. */
		bool same = r.outcome == art.outcome && r.trace_hash == art.trace_hash;
		printf("%s\n", same ? "REPRODUCED" : "NOT REPRODUCED");
		return same ? 0 : 1;
	}

	/* PCT's k: the steps of a first random run of the same seed (deterministic). */
	unsigned long pct_k = 0;
	if (policy == SCHED_PCT) {
		long k = calibrate_pct(w, seed);
		if (k < 0)
			return 2;
		pct_k = (unsigned long)k;
	}

	char afile[256];
	if (artifact)
		snprintf(afile, sizeof(afile), "%s", artifact);
	else
		snprintf(afile, sizeof(afile), "sched-stress-%s-%#" PRIx64 ".sched", mode_names[mode], seed);

	unsigned long first = only_run != ~0UL ? only_run : 0, last = only_run != ~0UL ? only_run + 1 : runs;
	unsigned long nruns = 0, failures = 0, steps = 0, switches = 0, preempt = 0, irqs = 0, migr = 0;
	uint64_t combined = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned long run = first; run < last && !interrupted; run++) {
		struct sched_opts o;
		base_opts(&o, w);
		o.policy = (enum sched_policy)policy;
		o.seed = seed;
		o.run = run;
		o.pct_k = pct_k;
		o.config = config;
		o.timeline = trace ? stdout : NULL;
		int n = world_setup(w, t);
		if (n < 0)
			return 2;
		struct sched_result r = sched_run(&o, t, n);
		nruns++;
		steps += r.steps;
		switches += r.switches;
		preempt += r.preemptions;
		irqs += r.irqs;
		migr += r.migrations;
		combined = combined * 0x100000001b3ULL ^ r.trace_hash;
		if (!quiet || r.failed)
			printf("run %lu seed %#018" PRIx64 " steps %lu switches %lu trace %016" PRIx64 "%s%s\n", run,
			       r.seed, r.steps, r.switches, r.trace_hash, r.failed ? " FAILED: " : "",
			       r.failed ? r.reason : "");
		if (r.failed) {
			failures++;
			if (failures == 1) {
				if (artifact_write(afile, &o, &r) == 0)
					printf("artifact: %s (replay: ./mmfuzz stress %s --deterministic --replay %s)\n",
					       afile, mode_names[mode], afile);
				else
					printf("artifact: cannot write %s: %s (the rerun command below replays the run)\n",
					       afile, strerror(errno));
				char cmd[320];
				format_rerun(cmd, sizeof(cmd), w, seed, run, (enum sched_policy)policy);
				printf("rerun: %s\n", cmd);
			}
			if (world_recover(w))
				return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("total: mode %s policy %s seed %#" PRIx64 " runs %lu failures %lu steps %lu switches %lu "
	       "preemptions %lu irqs %lu migrations %lu ops %lu trace %016" PRIx64 " %.0f runs/s\n",
	       mode_names[mode], sched_policy_name((enum sched_policy)policy), seed, nruns, failures, steps, switches,
	       preempt, irqs, migr, atomic_load(&w->ops), combined, secs > 0 ? (double)nruns / secs : 0.0);
	if (interrupted)
		printf("INTERRUPTED (signal %d) after %lu of %lu runs\n", (int)interrupted, nruns, last - first);
	printf("%s\n", failures ? "FAILURE" : interrupted ? "INTERRUPTED" : "SUCCESS");
	mm_destroy(w->mm);
	sched_thread_release();
	return failures ? 1 : interrupted ? 130 : 0;
}
#endif

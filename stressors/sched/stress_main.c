/* SPDX-License-Identifier: MIT */
/*
 * stress_main.c - mmfuzz-sched-stress: the stressor's modes under the
 * deterministic scheduler (./mmfuzz stress MODE --deterministic ...).
 *
 * Each run resets one instance (mm_reset) and runs T tasks as fibers over
 * M vCPUs doing the mode's allocator ops; objects are filled with a tag
 * and checked before every free, some are handed to other tasks through a
 * spinlock-protected ring (remote frees), pcps are drained now and then,
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
 *       [--trace] [--artifact FILE] [--replay FILE] [--quiet]
 *
 * --steps K: allocator ops per task (batches of 8, mm_check 2 after each).
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "mm/cpu.h"
#include "mm/mm.h"
#include "mm/slab.h"
#include "sched/sched.h"

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

static void obj_verify(struct world *w, const struct obj *o)
{
	const unsigned char *b = obj_bytes(w, o);
	size_t stride = o->size > 4096 ? 509 : 1;
	for (size_t i = 0; i < o->size; i += stride)
		if (b[i] != o->tag)
			sched_fail("%s %p: byte %zu of %zu is %#x, expected %#x (overwritten while held)",
				   o->kind == K_PAGE ? "page" : "object", (void *)b, i, o->size, b[i], o->tag);
	if (o->size && b[o->size - 1] != o->tag)
		sched_fail("object %p: last byte overwritten", (void *)b);
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
		struct page *pages[BULK];
		memset(pages, 0, sizeof(pages));
		unsigned long pre = rnd(3);     /* partly populated array */
		for (unsigned long k = 0; k < pre; k++)
			pages[k] = alloc_pages(w->mm, GFP_KERNEL, 0);
		unsigned long n = alloc_pages_bulk_array(w->mm, GFP_KERNEL, BULK, pages);
		sched_op("bulk_pages", (long)n);
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

static int task_fn(void *ctx)
{
	struct world *w = ctx;
	int me = sched_current_task();
	struct obj held[HELD];
	memset(held, 0, sizeof(held));

	for (int i = 0; i < w->steps; i++) {
		unsigned char tag = (unsigned char)(0x20 + me * 16 + (i & 15));
		enum mode m = w->mode;
		if (m == M_MIXED)
			m = (enum mode)rnd(M_MIXED);
		unsigned r = (unsigned)rnd(16);
		struct obj o;
		if (r == 0) {
			drain_all_pages(w->mm, NULL);
			sched_op("drain_all", 0);
		} else if (r == 1 && (m == M_SLUB || m == M_KMALLOC)) {
			kmem_cache_shrink(w->caches[rnd(NCACHES)]);
			sched_op("shrink", 0);
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

static void irq_handler(struct mm *mm, int cpu, void *ctx)
{
	struct world *w = ctx;
	(void)cpu;
	if (w->mode == M_SLUB || w->mode == M_KMALLOC || w->mode == M_MIXED) {
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

static int world_finish(void *ctx)
{
	struct world *w = ctx;
	struct mm_violation v;
	if (w->head != w->tail)
		sched_fail("%d objects left in the ring", w->tail - w->head);
	for (struct kmem_cache *s = kmem_cache_next(w->mm, NULL); s; s = kmem_cache_next(w->mm, s))
		kmem_cache_shrink(s);
	drain_all_pages(w->mm, NULL);
	long now = total_free(w->mm);
	if (now != w->free_created)
		sched_fail("conservation: %ld pages free after the run, %ld at creation", now, w->free_created);
	if (!mm_check(w->mm, 3, &v))
		sched_fail("mm_check level 3: %s", v.msg);
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
	return 0;
}

static int world_setup(struct world *w, struct sched_task_desc *t)
{
	mm_reset(w->mm);
	mm_set_irq_handler(w->mm, irq_handler, w);
	spin_lock_init(&w->ring_lock);
	w->head = w->tail = 0;
	w->done = 0;
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

static void usage(FILE *f)
{
	fprintf(f, "usage: mmfuzz-sched-stress MODE --deterministic [--seed X] [--runs N] [--run I]\n"
		   "           [--policy random|pct|sticky] [--tasks T] [--cpus M] [--steps K]\n"
		   "           [--trace] [--artifact FILE] [--replay FILE] [--quiet]\n"
		   "modes: pages pcp bulk slub kmalloc mixed\n"
		   "--steps K: allocator ops per task; run I's seed is sched_seed(X, I)\n");
}

static void base_opts(struct sched_opts *o, struct world *w)
{
	sched_opts_default(o);
	o->mm = w->mm;
	o->irqs = true;
	o->migrations = true;
	o->irq_permille = 40;
	o->migrate_permille = 40;
	o->finish = world_finish;
	o->finish_ctx = w;
	o->scenario = "stress";
}

int main(int argc, char **argv)
{
	struct world *w = &W;
	uint64_t seed = 1;
	unsigned long runs = 100, only_run = ~0UL;
	int policy = SCHED_RANDOM;
	bool trace = false, quiet = false;
	const char *artifact = NULL, *replay = NULL;
	int mode = -1;
	w->tasks = 3;
	w->cpus = 2;
	w->steps = 24;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV() do { if (!v) { fprintf(stderr, "mmfuzz-sched-stress: %s needs a value\n", a); return 2; } i++; } while (0)
		if (!strcmp(a, "--deterministic")) {
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(a, "--seed")) { NEEDV(); seed = strtoull(v, NULL, 0);
		} else if (!strcmp(a, "--runs")) { NEEDV(); runs = strtoul(v, NULL, 0);
		} else if (!strcmp(a, "--run")) { NEEDV(); only_run = strtoul(v, NULL, 0);
		} else if (!strcmp(a, "--tasks")) { NEEDV(); w->tasks = atoi(v);
		} else if (!strcmp(a, "--cpus")) { NEEDV(); w->cpus = atoi(v);
		} else if (!strcmp(a, "--steps")) { NEEDV(); w->steps = atoi(v);
		} else if (!strcmp(a, "--policy")) {
			NEEDV();
			policy = sched_policy_parse(v);
			if (policy != SCHED_RANDOM && policy != SCHED_PCT && policy != SCHED_STICKY) {
				fprintf(stderr, "mmfuzz-sched-stress: --policy random, pct or sticky\n");
				return 2;
			}
		} else if (!strcmp(a, "--trace")) { trace = true;
		} else if (!strcmp(a, "--quiet")) { quiet = true;
		} else if (!strcmp(a, "--artifact")) { NEEDV(); artifact = v;
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
#undef NEEDV
	}

	struct sched_artifact art;
	memset(&art, 0, sizeof(art));
	if (replay) {
		char err[256], mname[32] = "";
		if (sched_artifact_read(replay, &art, err, sizeof(err))) {
			fprintf(stderr, "mmfuzz-sched-stress: %s: %s\n", replay, err);
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
	}
	if (mode < 0) {
		usage(stderr);
		return 2;
	}
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
	snprintf(config, sizeof(config), "mode=%s tasks=%d cpus=%d steps=%d", mode_names[mode], w->tasks, w->cpus,
		 w->steps);
	struct sched_task_desc t[SCHED_MAX_TASKS];

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
		struct sched_opts o;
		base_opts(&o, w);
		o.policy = SCHED_RANDOM;
		o.seed = seed;
		o.run = 0;
		int n = world_setup(w, t);
		if (n < 0)
			return 2;
		struct sched_result r = sched_run(&o, t, n);
		if (r.failed && world_recover(w))
			return 2;
		pct_k = r.steps ? r.steps : 200;
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
	for (unsigned long run = first; run < last; run++) {
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
				if (sched_artifact_write(afile, &o, &r) == 0)
					printf("artifact: %s (replay: mmfuzz-sched-stress %s --deterministic --replay %s)\n",
					       afile, mode_names[mode], afile);
				printf("rerun: ./mmfuzz stress %s --deterministic --seed %#" PRIx64
				       " --run %lu --policy %s --tasks %d --cpus %d --steps %d\n",
				       mode_names[mode], seed, run, sched_policy_name((enum sched_policy)policy),
				       w->tasks, w->cpus, w->steps);
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
	printf("%s\n", failures ? "FAILURE" : "SUCCESS");
	mm_destroy(w->mm);
	sched_thread_release();
	return failures ? 1 : 0;
}
#endif

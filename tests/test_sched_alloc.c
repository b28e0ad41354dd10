/* SPDX-License-Identifier: MIT */
/*
 * test_sched_alloc.c - correct code under the deterministic scheduler never
 * fails: three tasks on vCPUs of one instance allocate (single pages,
 * orders 1-3, bulk arrays), hand pages to each other through a
 * spinlock-protected ring (remote frees), drain every pcp, while the
 * policy switches them at every preemption point, migrates them to free
 * vCPUs and raises interrupts whose handler allocates and frees with
 * GFP_ATOMIC.  Every page is filled with a pattern of its owner and
 * checked before it is freed; the end-of-run check drains the pcps, wants
 * every page back in the buddy lists and mm_check level 3 clean.
 *
 * Thousands of schedules over random, PCT, sticky and fuzz-style byte
 * inputs must all pass - and must not be vacuous: switches, preemptions,
 * waits on the ring lock, interrupts and migrations all happened.  Under
 * TSan the same runs must give no report (the scheduler's own bookkeeping
 * is invisible to TSan, the allocator's synchronisation is real); under
 * ASan every fiber switch must be clean.
 *
 *   test_sched_alloc [runs-per-policy]
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mm/cpu.h"
#include "mm/mm.h"
#include "sched/sched.h"
#include "test.h"


#ifndef MM_TEST_HOOKS
int main(void)
{
	TEST_SKIP("needs MM_TEST_HOOKS");
}
#else

#define RING 8
#define OPS 10

struct ring_ent {
	struct page *page;
	unsigned int order;
	unsigned char tag;
};

struct world {
	struct mm *mm;
	spinlock_t ring_lock;
	struct ring_ent ring[RING];
	int head, tail;                 /* under ring_lock */
	bool produced;                  /* the producer is done */
	long free_at_start;
	atomic_ulong irq_runs, irq_fail;        /* handlers on different vCPUs run concurrently */
};

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

static void fill(struct mm *mm, struct page *p, unsigned int order, unsigned char tag)
{
	memset(page_address(mm, p), tag, MM_PAGE_SIZE << order);
}

static void verify_and_free(struct mm *mm, struct page *p, unsigned int order, unsigned char tag)
{
	const unsigned char *b = page_address(mm, p);
	for (size_t i = 0; i < (MM_PAGE_SIZE << order); i += 512)
		if (b[i] != tag)
			sched_fail("page %lu order %u: byte %zu is %#x, expected %#x (overwritten while held)",
				   page_to_pfn(mm, p), order, i, b[i], tag);
	__free_pages(mm, p, order);
}

static void irq_handler(struct mm *mm, int cpu, void *ctx)
{
	struct world *w = ctx;
	unsigned char tag = (unsigned char)(0xe0 + cpu);
	struct page *p = alloc_pages(mm, GFP_ATOMIC, 0);
	atomic_fetch_add(&w->irq_runs, 1);
	if (!p) {
		atomic_fetch_add(&w->irq_fail, 1);
		return;
	}
	fill(mm, p, 0, tag);
	verify_and_free(mm, p, 0, tag);
}

static bool ring_push(struct world *w, struct ring_ent e)
{
	bool ok = false;
	spin_lock(&w->ring_lock);
	mm_preempt_point(w->mm, MM_PP_USER);    /* other vCPUs run while we hold it */
	if (w->tail - w->head < RING) {
		w->ring[w->tail % RING] = e;
		w->tail++;
		ok = true;
	}
	spin_unlock(&w->ring_lock);
	return ok;
}

static bool ring_pop(struct world *w, struct ring_ent *e)
{
	bool ok = false;
	spin_lock(&w->ring_lock);
	if (w->head < w->tail) {
		mm_preempt_point(w->mm, MM_PP_USER);
		*e = w->ring[w->head % RING];
		w->head++;
		ok = true;
	}
	spin_unlock(&w->ring_lock);
	return ok;
}

/* Allocates, fills, hands half of it to the consumer. */
static int producer(void *ctx)
{
	struct world *w = ctx;
	for (int i = 0; i < OPS; i++) {
		unsigned int order = (unsigned int)(sched_random() % 4);
		struct page *p = alloc_pages(w->mm, GFP_KERNEL, order);
		if (!p)
			continue;
		unsigned char tag = (unsigned char)(0x10 + i);
		fill(w->mm, p, order, tag);
		sched_op("produce", (long)order);
		struct ring_ent e = { p, order, tag };
		if ((i & 1) || !ring_push(w, e))
			verify_and_free(w->mm, p, order, tag);
	}
	spin_lock(&w->ring_lock);
	w->produced = true;
	spin_unlock(&w->ring_lock);
	return 0;
}

/* Frees what the producer allocated on another vCPU (remote frees). */
static int consumer(void *ctx)
{
	struct world *w = ctx;
	struct ring_ent e;
	for (int i = 0; i < OPS; i++) {
		if (ring_pop(w, &e)) {
			sched_op("consume", (long)e.order);
			verify_and_free(w->mm, e.page, e.order, e.tag);
		}
		sched_point();
	}
	/* Then whatever comes until the producer is done. */
	for (;;) {
		if (ring_pop(w, &e)) {
			verify_and_free(w->mm, e.page, e.order, e.tag);
			continue;
		}
		spin_lock(&w->ring_lock);
		bool done = w->produced && w->head == w->tail;
		spin_unlock(&w->ring_lock);
		if (done)
			break;
		sched_wait(&w->produced);
	}
	return 0;
}

/* Bulk allocations and frees, and drains of every pcp. */
static int churn(void *ctx)
{
	struct world *w = ctx;
	struct page *pages[8];
	for (int i = 0; i < OPS / 2; i++) {
		memset(pages, 0, sizeof(pages));
		unsigned long n = alloc_pages_bulk_array(w->mm, GFP_KERNEL, 8, pages);
		for (unsigned long k = 0; k < n; k++)
			fill(w->mm, pages[k], 0, 0x77);
		sched_op("bulk", (long)n);
		if (i % 2)
			drain_all_pages(w->mm, NULL);
		for (unsigned long k = 0; k < n; k++) {
			const unsigned char *b = page_address(w->mm, pages[k]);
			if (b[0] != 0x77 || b[MM_PAGE_SIZE - 1] != 0x77)
				sched_fail("bulk page %lu overwritten", page_to_pfn(w->mm, pages[k]));
		}
		release_pages(w->mm, pages, n);
	}
	return 0;
}

static int world_setup(void *ctx, uint64_t seed, struct sched_task_desc *t, struct mm **mm)
{
	struct world *w = ctx;
	(void)seed;
	mm_reset(w->mm);
	mm_set_irq_handler(w->mm, irq_handler, w);
	spin_lock_init(&w->ring_lock);
	w->head = w->tail = 0;
	w->produced = false;
	w->free_at_start = total_free(w->mm);
	t[0] = (struct sched_task_desc){ "producer", producer, w, 0 };
	t[1] = (struct sched_task_desc){ "consumer", consumer, w, 1 };
	t[2] = (struct sched_task_desc){ "churn", churn, w, -1 };
	*mm = w->mm;
	return 3;
}

static int world_finish(void *ctx)
{
	struct world *w = ctx;
	struct mm_violation v;
	drain_all_pages(w->mm, NULL);
	if (w->head != w->tail)
		sched_fail("%d pages left in the ring", w->tail - w->head);
	long now = total_free(w->mm);
	if (now != w->free_at_start)
		sched_fail("conservation: %ld pages free after the run, %ld before", now, w->free_at_start);
	if (!mm_check(w->mm, 3, &v))
		sched_fail("mm_check: %s", v.msg);
	return 0;
}

static struct mm_config world_config;

/* Only after a failure (a test failure already): locks may be held, rebuild. */
static void world_recover(void *ctx)
{
	struct world *w = ctx;
	char err[256];
	mm_destroy(w->mm);
	w->mm = mm_create(&world_config, err, sizeof(err));
	REQUIRE(w->mm);
}

int main(int argc, char **argv)
{
#if MM_TSAN
	unsigned long runs = 150;       /* TSan: ~10x slower, same coverage per run */
#else
	unsigned long runs = 1500;
#endif
	if (argc > 1)
		runs = strtoul(argv[1], NULL, 0);

	char err[256];
	mm_config_tiny(&world_config);
	world_config.nr_cpus = 4;
	world_config.quiet = true;
	struct world w;
	memset(&w, 0, sizeof(w));
	w.mm = mm_create(&world_config, err, sizeof(err));
	REQUIRE(w.mm);
	struct sched_scenario sc = { "alloc-world", "tasks=3 cpus=4", &w, world_setup, world_finish, world_recover };

	static const enum sched_policy pols[] = { SCHED_RANDOM, SCHED_PCT, SCHED_STICKY };
	unsigned long total = 0;
	for (size_t i = 0; i < sizeof(pols) / sizeof(pols[0]); i++) {
		struct sched_opts o;
		struct sched_explore_result er;
		sched_opts_default(&o);
		o.policy = pols[i];
		o.seed = 0xa110c + i;
		o.irqs = true;
		o.migrations = true;
		o.irq_permille = 60;
		o.migrate_permille = 60;
		CHECK(sched_explore(&o, &sc, runs, true, &er) == 0);
		CHECK_MSG(er.failures == 0 && er.runs == runs, "%s: run %lu: %s: %s", sched_policy_name(pols[i]),
			  er.first_failure, sched_outcome_name(er.first.outcome), er.first.reason);
		printf("%-7s %lu runs, %.0f runs/s, %.0f steps/run\n", sched_policy_name(pols[i]), er.runs,
		       er.seconds > 0 ? (double)er.runs / er.seconds : 0.0,
		       er.runs ? (double)er.steps / (double)er.runs : 0.0);
		total += er.runs;
	}

	/* Fuzz-style: decisions from random bytes, and the non-vacuity counts. */
	unsigned long switches = 0, preempt = 0, waits = 0, irqs = 0, migrations = 0, fails = 0;
	uint64_t st = 99;
	uint8_t in[256];
	for (unsigned long r = 0; r < runs / 2; r++) {
		struct sched_task_desc t[SCHED_MAX_TASKS];
		struct mm *mm = NULL;
		int n = world_setup(&w, r, t, &mm);
		for (size_t k = 0; k < sizeof(in); k += 8) {
			st += 0x9e3779b97f4a7c15ULL;
			uint64_t z = st;
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
			z ^= z >> 31;
			memcpy(in + k, &z, 8);
		}
		struct sched_opts o;
		sched_opts_default(&o);
		o.policy = SCHED_BYTES;
		o.bytes = in;
		o.nbytes = (size_t)(r % 2 ? sizeof(in) : sizeof(in) / 3);
		o.mm = mm;
		o.irqs = true;
		o.migrations = true;
		o.finish = world_finish;
		o.finish_ctx = &w;
		struct sched_result res = sched_run(&o, t, n);
		if (res.failed)
			world_recover(&w);
		if (res.failed && !fails++) {
			CHECK_MSG(0, "bytes run %lu: %s: %s", r, sched_outcome_name(res.outcome), res.reason);
			if (getenv("SCHED_TIMELINE")) {
				/* The same input again, printed. */
				n = world_setup(&w, r, t, &mm);
				o.mm = mm;
				o.timeline = stderr;
				sched_run(&o, t, n);
			}
		}
		switches += res.switches;
		preempt += res.preemptions;
		waits += res.waits;
		irqs += res.irqs;
		migrations += res.migrations;
		total++;
	}
	printf("bytes   %lu runs: switches %lu preemptions %lu waits %lu irqs %lu (handler ran %lu, "
	       "GFP_ATOMIC failed %lu) migrations %lu\n", runs / 2, switches, preempt, waits, irqs,
	       atomic_load(&w.irq_runs), atomic_load(&w.irq_fail), migrations);
	CHECK(fails == 0);
	CHECK(switches > runs && preempt > runs / 4);
	CHECK(waits > 0);
	CHECK(irqs > 0 && atomic_load(&w.irq_runs) > 0);
	CHECK(migrations > 0);
	printf("%lu schedules of correct code, no failure\n", total);

	mm_destroy(w.mm);
	sched_thread_release();
	TEST_DONE();
}
#endif

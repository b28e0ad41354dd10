/* SPDX-License-Identifier: MIT */
/*
 * bench_sched.c - the deterministic scheduler's speed (issue 6 goals:
 * >= 5 million task switches per second; a ~180-step run thousands of
 * times per second):
 *
 *   switch (ping-pong)      two tasks that switch at every sched_point()
 *   switch (mm points)      the same through the CPU model's scheduler hook
 *                           (mm_preempt_point on two vCPUs)
 *   runs, 180 steps         3 tasks x 59 points, random policy: the engine
 *                           alone, per run
 *   runs, allocator         2 tasks allocating and freeing pages on two
 *                           vCPUs (~180 steps), mm_reset per run, with
 *                           interrupts and migrations; in-process and --fork
 *
 * Usage: bench_sched [--quick]
 * Built by stressors/sched/CMakeLists.txt (bench/CMakeLists.txt is another
 * engineer's).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "mm/cpu.h"
#include "mm/mm.h"
#include "sched/sched.h"
#include "common.h"

static bool quick;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct spin {
	struct mm *mm;
	long n;
};

static int yielder(void *ctx)
{
	struct spin *s = ctx;
	for (long i = 0; i < s->n; i++)
		sched_point();
	return 0;
}

static int mm_yielder(void *ctx)
{
	struct spin *s = ctx;
	for (long i = 0; i < s->n; i++)
		mm_preempt_point(s->mm, MM_PP_USER);
	return 0;
}

static void bench_switch(const char *name, int (*fn)(void *), struct mm *mm, long n)
{
	struct spin s = { mm, n };
	struct sched_opts o;
	sched_opts_default(&o);
	o.policy = SCHED_STICKY;
	o.sticky_permille = 1000;       /* always switch: a pure ping-pong */
	o.mm = mm;
	o.max_steps = (unsigned long)(4 * n + 100);
	struct sched_task_desc t[2] = { { "a", fn, &s, mm ? 0 : -1 }, { "b", fn, &s, mm ? 1 : -1 } };
	sched_run(&o, t, 2);            /* warm: stacks faulted in */
	double t0 = now();
	struct sched_result r = sched_run(&o, t, 2);
	double dt = now() - t0;
	printf("%-28s %10.2f M switches/s  %6.1f ns/switch  (%lu switches, %s)\n", name,
	       (double)r.switches / dt / 1e6, dt * 1e9 / (double)r.switches, r.switches,
	       sched_outcome_name(r.outcome));
}

static void bench_runs_engine(long runs)
{
	struct spin s = { NULL, 59 };
	struct sched_opts o;
	sched_opts_default(&o);
	struct sched_task_desc t[3] = { { "a", yielder, &s, -1 }, { "b", yielder, &s, -1 }, { "c", yielder, &s, -1 } };
	unsigned long steps = 0, switches = 0;
	double t0 = now();
	for (long i = 0; i < runs; i++) {
		o.run = (uint64_t)i;
		struct sched_result r = sched_run(&o, t, 3);
		steps += r.steps;
		switches += r.switches;
	}
	double dt = now() - t0;
	printf("%-28s %10.0f runs/s  %6.0f steps/run  %6.0f switches/run  %5.2f us/run\n",
	       "runs, 180 steps (engine)", (double)runs / dt, (double)steps / (double)runs,
	       (double)switches / (double)runs, dt * 1e6 / (double)runs);
}

struct alloc_ctx {
	struct mm *mm;
};

static void irq_handler(struct mm *mm, int cpu, void *ctx)
{
	(void)cpu;
	(void)ctx;
	struct page *p = alloc_pages(mm, GFP_ATOMIC, 0);
	if (p)
		__free_pages(mm, p, 0);
}

static int alloc_task(void *ctx)
{
	struct alloc_ctx *a = ctx;
	struct page *held[4] = { 0 };
	for (int i = 0; i < 18; i++) {
		int k = i % 4;
		if (held[k]) {
			__free_pages(a->mm, held[k], 0);
			held[k] = NULL;
		} else {
			held[k] = alloc_pages(a->mm, GFP_KERNEL, 0);
		}
		mm_preempt_point(a->mm, MM_PP_USER);
	}
	for (int k = 0; k < 4; k++)
		if (held[k])
			__free_pages(a->mm, held[k], 0);
	return 0;
}

static void bench_runs_alloc(struct mm *mm, long runs, bool fork_mode)
{
	struct alloc_ctx a = { mm };
	struct sched_opts o;
	sched_opts_default(&o);
	o.mm = mm;
	o.irqs = true;
	o.migrations = true;
	o.fork = fork_mode;
	struct sched_task_desc t[2] = { { "a", alloc_task, &a, 0 }, { "b", alloc_task, &a, 1 } };
	unsigned long steps = 0, failed = 0;
	double t0 = now();
	for (long i = 0; i < runs; i++) {
		mm_reset(mm);
		mm_set_irq_handler(mm, irq_handler, &a);
		o.run = (uint64_t)i;
		struct sched_result r = sched_run(&o, t, 2);
		steps += r.steps;
		failed += r.failed;
	}
	double dt = now() - t0;
	printf("%-28s %10.0f runs/s  %6.0f steps/run  %5.2f us/run%s\n",
	       fork_mode ? "runs, allocator, --fork" : "runs, allocator (+mm_reset)", (double)runs / dt,
	       (double)steps / (double)runs, dt * 1e6 / (double)runs, failed ? "  FAILURES" : "");
}

/* What the allocator runs pay for mm_reset alone (not the scheduler's). */
static void bench_reset(struct mm *mm, long runs)
{
	double t0 = now();
	for (long i = 0; i < runs; i++)
		mm_reset(mm);
	double dt = now() - t0;
	printf("%-28s %10.0f /s          %5.2f us each\n", "  of which mm_reset", (double)runs / dt,
	       dt * 1e6 / (double)runs);
}

int main(int argc, char **argv)
{
	bench_parse_args(argc, argv, "bench_sched",
			 "  the deterministic scheduler: task switches per second, and runs per second of a\n"
			 "  ~180-step scenario (the engine alone; allocating, in-process and forked)",
			 NULL, &quick, NULL);
	struct mm_config c;
	char err[256];
	mm_config_tiny(&c);
	c.nr_cpus = 4;
	c.quiet = true;
	struct mm *mm = mm_create(&c, err, sizeof(err));
	if (!mm) {
		fprintf(stderr, "bench_sched: %s\n", err);
		return 1;
	}
	printf("# bench_sched: %s\n", sched_build_id());
	long scale = quick ? 10 : 1;
	bench_switch("switch (ping-pong)", yielder, NULL, 2000000 / scale);
#ifdef MM_TEST_HOOKS
	bench_switch("switch (mm points)", mm_yielder, mm, 2000000 / scale);
#else
	(void)mm_yielder;
	printf("switch (mm points)           skipped: built without MM_TEST_HOOKS\n");
#endif
	bench_runs_engine(200000 / scale);
#ifdef MM_TEST_HOOKS
	bench_runs_alloc(mm, 100000 / scale, false);
	bench_reset(mm, 100000 / scale);
	bench_runs_alloc(mm, 2000 / scale, true);
#else
	/*
	 * Without the hooks the allocator's preemption points are compiled out:
	 * its tasks would run to the end in one step each (2 steps a run) and
	 * the rows would time an empty schedule.
	 */
	(void)bench_runs_alloc;
	(void)bench_reset;
	printf("runs, allocator              skipped: built without MM_TEST_HOOKS (the allocator has no "
	       "preemption points to schedule at)\n");
#endif
	mm_destroy(mm);
	sched_thread_release();
	return 0;
}

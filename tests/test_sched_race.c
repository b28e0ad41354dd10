/* SPDX-License-Identifier: MIT */
/*
 * test_sched_race.c - the deterministic scheduler finds races written on
 * purpose, and the failing seed replays to the same failure.
 *
 *  - lost update: tasks on two vCPUs allocate a page, read a shared
 *    counter, reach a preemption point (mm_preempt_point, as a fast path
 *    between reading tid and freelist), write counter + 1, free the page.
 *    The end-of-run check wants counter == total increments.
 *  - check then act: "if no buffer yet, (point), allocate one" in two
 *    tasks: two allocations where one was meant; checked by the tasks.
 *
 * Random walk and PCT must each find both within a bounded number of
 * seeds (sched_explore); the failing run's artifact must replay to the
 * same outcome, reason and trace hash, and so must rerunning its seed.
 * Counters are relaxed atomics so that the races are logical ones TSan
 * does not flag (this test runs clean under the tsan build too).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

#define ROUNDS 3

struct race {
	struct mm *mm;
	atomic_long counter;
	atomic_int buffers;             /* check-then-act: buffers allocated */
	_Atomic(struct page *) buffer;
	int nr_tasks;
	bool check_then_act;
};

static int lost_update(void *ctx)
{
	struct race *r = ctx;
	for (int i = 0; i < ROUNDS; i++) {
		struct page *p = alloc_pages(r->mm, GFP_KERNEL, 0);
		if (!p)
			sched_fail("alloc_pages failed");
		long v = atomic_load_explicit(&r->counter, memory_order_relaxed);
		mm_preempt_point(r->mm, MM_PP_USER);
		atomic_store_explicit(&r->counter, v + 1, memory_order_relaxed);
		__free_pages(r->mm, p, 0);
	}
	return 0;
}

static int check_act(void *ctx)
{
	struct race *r = ctx;
	struct page *p = NULL;
	if (!atomic_load_explicit(&r->buffer, memory_order_relaxed)) {
		mm_preempt_point(r->mm, MM_PP_USER);
		p = alloc_pages(r->mm, GFP_KERNEL, 1);
		if (!p)
			sched_fail("alloc_pages failed");
		atomic_store_explicit(&r->buffer, p, memory_order_relaxed);
		if (atomic_fetch_add(&r->buffers, 1) + 1 > 1)
			sched_fail("check then act: %d buffers allocated", atomic_load(&r->buffers));
	}
	mm_preempt_point(r->mm, MM_PP_USER);
	if (p)
		__free_pages(r->mm, p, 1);
	return 0;
}

static int race_setup(void *ctx, uint64_t seed, struct sched_task_desc *t, struct mm **mm)
{
	struct race *r = ctx;
	(void)seed;
	mm_reset(r->mm);
	atomic_store(&r->counter, 0);
	atomic_store(&r->buffers, 0);
	atomic_store(&r->buffer, NULL);
	for (int i = 0; i < r->nr_tasks; i++) {
		t[i].name = r->check_then_act ? "check-act" : "rmw";
		t[i].fn = r->check_then_act ? check_act : lost_update;
		t[i].ctx = r;
		t[i].cpu = i % 2;
	}
	*mm = r->mm;
	return r->nr_tasks;
}

static int race_finish(void *ctx)
{
	struct race *r = ctx;
	if (r->check_then_act)
		return 0;
	long want = (long)r->nr_tasks * ROUNDS;
	long got = atomic_load(&r->counter);
	if (got != want)
		sched_fail("lost update: counter %ld, expected %ld", got, want);
	struct mm_violation v;
	if (!mm_check(r->mm, 3, &v))
		sched_fail("mm_check: %s", v.msg);
	return 0;
}

static struct mm *make_mm(void)
{
	struct mm_config c;
	char err[256];
	mm_config_tiny(&c);
	c.quiet = true;
	return mm_create(&c, err, sizeof(err));
}

/* A failed run may leave locks held: rebuild the instance. */
static void race_recover(void *ctx)
{
	struct race *r = ctx;
	mm_destroy(r->mm);
	r->mm = make_mm();
}

static void find_and_replay(struct race *r, enum sched_policy pol, unsigned long bound, const char *what)
{
	struct sched_scenario sc = {
		.name = r->check_then_act ? "check-then-act" : "lost-update",
		.config = "tasks=2 rounds=3",
		.ctx = r,
		.setup = race_setup,
		.finish = race_finish,
		.recover = race_recover,
	};
	struct sched_opts o;
	sched_opts_default(&o);
	o.policy = pol;
	o.seed = 2024;
	o.pct_depth = 2;
	char path[] = "/tmp/test_sched_race_XXXXXX";
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	o.artifact = path;

	struct sched_explore_result er;
	CHECK(sched_explore(&o, &sc, bound, true, &er) == 0);
	CHECK_MSG(er.failures == 1, "%s %s: not found in %lu runs", sched_policy_name(pol), sc.name, bound);
	if (!er.failures) {
		unlink(path);
		return;
	}
	printf("%s / %s: found at run %lu (k %lu): %s\n", sc.name, sched_policy_name(pol), er.first_failure,
	       er.pct_k, er.first.reason);
	CHECK(er.first.outcome == SCHED_FAILED && strstr(er.first.reason, what));
	if (pol == SCHED_PCT)
		CHECK(er.pct_k > 0);

	/* The artifact replays to the same failure, bit for bit. */
	struct sched_artifact a;
	char err[256];
	CHECK_MSG(sched_artifact_read(path, &a, err, sizeof(err)) == 0, "%s", err);
	CHECK(a.trace_hash == er.first.trace_hash && a.run == er.first_failure);
	struct sched_task_desc t[SCHED_MAX_TASKS];
	struct mm *mm = NULL;
	int n = race_setup(r, a.seed, t, &mm);
	struct sched_opts base;
	sched_opts_default(&base);
	base.mm = mm;
	base.finish = race_finish;
	base.finish_ctx = r;
	struct sched_result rr = sched_replay(&a, &base, t, n);
	CHECK_MSG(rr.outcome == SCHED_FAILED, "replay: %s", rr.reason);
	CHECK(rr.trace_hash == er.first.trace_hash);
	CHECK(!strcmp(rr.reason, er.first.reason));
	race_recover(r);

	/* So does its seed under its policy, without the artifact. */
	n = race_setup(r, sched_seed(o.seed, er.first_failure), t, &mm);
	struct sched_opts so = o;
	so.artifact = NULL;
	so.run = er.first_failure;
	so.pct_k = er.pct_k;
	so.mm = mm;
	so.finish = race_finish;
	so.finish_ctx = r;
	rr = sched_run(&so, t, n);
	CHECK(rr.outcome == SCHED_FAILED && rr.trace_hash == er.first.trace_hash);
	race_recover(r);
	sched_artifact_free(&a);
	unlink(path);
}

/* The same scenarios with the race fixed never fail: the finder is not
 * just failing everything. */
static int fixed_update(void *ctx)
{
	struct race *r = ctx;
	for (int i = 0; i < ROUNDS; i++) {
		struct page *p = alloc_pages(r->mm, GFP_KERNEL, 0);
		mm_preempt_point(r->mm, MM_PP_USER);
		atomic_fetch_add(&r->counter, 1);
		mm_preempt_point(r->mm, MM_PP_USER);
		__free_pages(r->mm, p, 0);
	}
	return 0;
}

static int fixed_setup(void *ctx, uint64_t seed, struct sched_task_desc *t, struct mm **mm)
{
	struct race *r = ctx;
	int n = race_setup(ctx, seed, t, mm);
	for (int i = 0; i < n; i++)
		t[i].fn = fixed_update;
	(void)r;
	return n;
}

int main(void)
{
	struct race r = { .mm = make_mm(), .nr_tasks = 2 };
	REQUIRE(r.mm);
	find_and_replay(&r, SCHED_RANDOM, 200, "lost update");
	find_and_replay(&r, SCHED_PCT, 200, "lost update");
	find_and_replay(&r, SCHED_STICKY, 2000, "lost update");
	r.check_then_act = true;
	find_and_replay(&r, SCHED_RANDOM, 200, "check then act");
	find_and_replay(&r, SCHED_PCT, 200, "check then act");

	/* The exhaustive search finds the lost update with one preemption. */
	r.check_then_act = false;
	struct sched_scenario sc = { "lost-update", "dfs", &r, race_setup, race_finish, race_recover };
	struct sched_opts o;
	sched_opts_default(&o);
	o.policy = SCHED_DFS;
	o.dfs = sched_dfs_create(1);
	struct sched_explore_result er;
	CHECK(sched_explore(&o, &sc, 100000, true, &er) == 0);
	CHECK_MSG(er.failures == 1, "dfs: %lu schedules, no failure", er.runs);
	printf("lost-update / dfs(1): found at schedule %lu\n", er.first_failure);
	sched_dfs_destroy(o.dfs);

	/* Fixed: hundreds of runs of every policy, no failure. */
	struct sched_scenario fx = { "fixed-update", "", &r, fixed_setup, race_finish, race_recover };
	static const enum sched_policy pols[] = { SCHED_RANDOM, SCHED_PCT, SCHED_STICKY };
	for (size_t i = 0; i < sizeof(pols) / sizeof(pols[0]); i++) {
		sched_opts_default(&o);
		o.policy = pols[i];
		o.seed = 99;
		CHECK(sched_explore(&o, &fx, 300, true, &er) == 0);
		CHECK_MSG(er.failures == 0 && er.runs == 300, "%s: %s", sched_policy_name(pols[i]), er.first.reason);
	}

	/* Grading prints a line per policy with its interval. */
	FILE *g = tmpfile();
	struct sched_scenario lu = { "lost-update", "tasks=2 rounds=3", &r, race_setup, race_finish, race_recover };
	sched_opts_default(&o);
	o.seed = 5;
	o.pct_depth = 2;
	sched_grade(&lu, &o, pols, 3, 100, g);
	rewind(g);
	char text[4096];
	size_t got = fread(text, 1, sizeof(text) - 1, g);
	text[got] = 0;
	fclose(g);
	printf("%s", text);
	CHECK(strstr(text, "random") && strstr(text, "pct") && strstr(text, "sticky") && strstr(text, "95% CI"));

	mm_destroy(r.mm);
	sched_thread_release();
	TEST_DONE();
}
#endif

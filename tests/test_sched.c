/* SPDX-License-Identifier: MIT */
/*
 * test_sched.c - the deterministic scheduler's engine: the same seed gives
 * the same trace hash and decision log (with the real allocator, vCPUs,
 * interrupts and migrations in the trace) and different seeds differ;
 * "from bytes" follows its input and defaults to no preemption; the
 * preemption-bounded exhaustive search enumerates exactly the schedules of
 * a 2-task 2-point program (counted independently by brute force); two
 * spinlocks taken in opposite order deadlock and the report names both
 * waits; hangs, sched_fail and non-zero returns end the run; artifacts
 * round-trip; the timeline prints; the Wilson interval is right.
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
	TEST_SKIP("needs MM_TEST_HOOKS (preemption points)");
}
#else

/* ---------------------------------------------------------------- an allocator workload */

struct work {
	struct mm *mm;
	int ops;
	atomic_ulong irq_runs;          /* handlers on different vCPUs run concurrently */
};

static void irq_handler(struct mm *mm, int cpu, void *ctx)
{
	struct work *w = ctx;
	(void)cpu;
	struct page *p = alloc_pages(mm, GFP_ATOMIC, 0);
	if (p)
		__free_pages(mm, p, 0);
	atomic_fetch_add(&w->irq_runs, 1);
}

static int worker(void *ctx)
{
	struct work *w = ctx;
	struct page *held[4] = { 0 };
	unsigned int order[4] = { 0 };
	for (int i = 0; i < w->ops; i++) {
		int slot = (int)(sched_random() % 4);
		if (held[slot]) {
			sched_op("free", (long)order[slot]);
			__free_pages(w->mm, held[slot], order[slot]);
			held[slot] = NULL;
		} else {
			order[slot] = (unsigned int)(sched_random() % 3);
			held[slot] = alloc_pages(w->mm, GFP_KERNEL, order[slot]);
			sched_op("alloc", held[slot] ? (long)order[slot] : -1);
			if (held[slot])
				memset(page_address(w->mm, held[slot]), 0x5a, MM_PAGE_SIZE << order[slot]);
		}
		if (i % 5 == 4)
			drain_all_pages(w->mm, NULL);
		sched_point();
	}
	for (int s = 0; s < 4; s++)
		if (held[s])
			__free_pages(w->mm, held[s], order[s]);
	return 0;
}

static int check_clean(void *ctx)
{
	struct work *w = ctx;
	struct mm_violation v;
	if (!mm_check(w->mm, 3, &v)) {
		sched_fail("mm_check: %s", v.msg);
		return 1;
	}
	return 0;
}

struct run_copy {
	struct sched_result r;
	uint8_t *log;
};

static struct run_copy run_work(struct work *w, enum sched_policy p, uint64_t seed, uint64_t run,
				const uint8_t *bytes, size_t nbytes)
{
	struct sched_opts o;
	struct run_copy rc;
	sched_opts_default(&o);
	mm_reset(w->mm);
	mm_set_irq_handler(w->mm, irq_handler, w);
	o.policy = p;
	o.seed = seed;
	o.run = run;
	o.mm = w->mm;
	o.irqs = true;
	o.migrations = true;
	o.irq_permille = 100;
	o.migrate_permille = 100;
	o.pct_k = 150;
	o.bytes = bytes;
	o.nbytes = nbytes;
	o.finish = check_clean;
	o.finish_ctx = w;
	struct sched_task_desc t[3] = {
		{ "w0", worker, w, 0 },
		{ "w1", worker, w, 1 },
		{ "w2", worker, w, -1 },
	};
	rc.r = sched_run(&o, t, 3);
	rc.log = malloc(rc.r.log_len + 1);
	memcpy(rc.log, rc.r.log, rc.r.log_len);
	rc.r.log = rc.log;
	return rc;
}

static void test_determinism(void)
{
	struct work w = { .mm = test_make_mm(4, true), .ops = 12 };
	REQUIRE(w.mm);
	static const enum sched_policy pols[] = { SCHED_RANDOM, SCHED_PCT, SCHED_STICKY };
	for (size_t pi = 0; pi < sizeof(pols) / sizeof(pols[0]); pi++) {
		uint64_t hashes[16];
		unsigned long switches = 0, irqs = 0, migrations = 0;
		for (int s = 0; s < 16; s++) {
			struct run_copy a = run_work(&w, pols[pi], 42, (uint64_t)s, NULL, 0);
			struct run_copy b = run_work(&w, pols[pi], 42, (uint64_t)s, NULL, 0);
			CHECK_MSG(a.r.outcome == SCHED_OK, "%s run %d: %s", sched_policy_name(pols[pi]), s, a.r.reason);
			CHECK(a.r.trace_hash == b.r.trace_hash);
			CHECK(a.r.steps == b.r.steps && a.r.switches == b.r.switches);
			CHECK(a.r.log_len == b.r.log_len && !memcmp(a.log, b.log, a.r.log_len));
			CHECK(a.r.log_len == a.r.decisions && a.r.log_len > 0);
			hashes[s] = a.r.trace_hash;
			switches += a.r.switches;
			irqs += a.r.irqs;
			migrations += a.r.migrations;
			free(a.log);
			free(b.log);
		}
		/* Different seeds, different interleavings (all 16 distinct). */
		int same = 0;
		for (int i = 0; i < 16; i++)
			for (int j = i + 1; j < 16; j++)
				same += hashes[i] == hashes[j];
		CHECK_MSG(same == 0, "%s: %d pairs of seeds gave the same trace", sched_policy_name(pols[pi]), same);
		/* Not vacuous: the runs switched, interrupted and migrated. */
		CHECK(switches > 16 * 3);
		CHECK(irqs > 0);
		CHECK(migrations > 0);
	}
	CHECK(w.irq_runs > 0);

	/* Another master seed gives other runs. */
	struct run_copy a = run_work(&w, SCHED_RANDOM, 42, 0, NULL, 0);
	struct run_copy b = run_work(&w, SCHED_RANDOM, 43, 0, NULL, 0);
	CHECK(a.r.trace_hash != b.r.trace_hash);
	CHECK(a.r.seed == sched_seed(42, 0) && a.r.seed != b.r.seed);
	free(a.log);
	free(b.log);

	/* BYTES: the same input twice is the same run; no input is the
	 * default (no preemption: each task runs to completion in order)
	 * and a log replayed as bytes is that run again. */
	uint8_t in[64];
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 37 + 11);
	a = run_work(&w, SCHED_BYTES, 0, 0, in, sizeof(in));
	b = run_work(&w, SCHED_BYTES, 0, 0, in, sizeof(in));
	CHECK(a.r.outcome == SCHED_OK);
	CHECK(a.r.trace_hash == b.r.trace_hash);
	free(b.log);
	b = run_work(&w, SCHED_BYTES, 0, 0, a.log, a.r.log_len);
	CHECK(b.r.trace_hash == a.r.trace_hash);
	free(a.log);
	free(b.log);
	a = run_work(&w, SCHED_BYTES, 0, 0, NULL, 0);
	CHECK(a.r.outcome == SCHED_OK);
	CHECK(a.r.preemptions == 0 && a.r.irqs == 0 && a.r.migrations == 0);
	for (size_t i = 0; i < a.r.log_len; i++)
		CHECK(a.log[i] == 0);
	free(a.log);

	mm_destroy(w.mm);
}

/* ---------------------------------------------------------------- exhaustive search */

static int two_points(void *ctx)
{
	(void)ctx;
	sched_op("a", sched_current_task());
	sched_point();
	sched_op("b", sched_current_task());
	sched_point();
	sched_op("c", sched_current_task());
	return 0;
}

/* Schedules of two 3-segment tasks (segments split by their 2 points) with
 * at most @bound preemptions (-1: any), counted over all 2^6 strings. */
static unsigned long brute_force(int bound)
{
	unsigned long count = 0;
	for (unsigned m = 0; m < 64; m++) {
		if (__builtin_popcount(m) != 3)
			continue;               /* 3 segments of task 1, 3 of task 0 */
		int done[2] = { 0, 0 }, pre = 0;
		for (int i = 0; i < 6; i++) {
			int t = (int)((m >> i) & 1);
			done[t]++;
			if (i < 5 && (int)((m >> (i + 1)) & 1) != t && done[t] < 3)
				pre++;          /* switched away from a task that could go on */
		}
		if (bound < 0 || pre <= bound)
			count++;
	}
	return count;
}

static void test_dfs(void)
{
	for (int bound = -1; bound <= 3; bound++) {
		struct sched_dfs *d = sched_dfs_create(bound);
		REQUIRE(d);
		struct sched_opts o;
		sched_opts_default(&o);
		o.policy = SCHED_DFS;
		o.dfs = d;
		struct sched_task_desc t[2] = { { "A", two_points, NULL, -1 }, { "B", two_points, NULL, -1 } };
		uint64_t seen[64];
		unsigned long n = 0;
		int dup = 0;
		while (!sched_dfs_done(d) && n < 64) {
			struct sched_result r = sched_run(&o, t, 2);
			CHECK(r.outcome == SCHED_OK);
			CHECK(bound < 0 || r.preemptions <= (unsigned long)bound);
			for (unsigned long i = 0; i < n; i++)
				dup += seen[i] == r.trace_hash;
			seen[n++] = r.trace_hash;
		}
		CHECK_MSG(n == brute_force(bound), "bound %d: %lu schedules, expected %lu", bound, n,
			  brute_force(bound));
		CHECK(sched_dfs_done(d) && sched_dfs_schedules(d) == n);
		CHECK(dup == 0);
		/* A finished search refuses to run. */
		struct sched_result r = sched_run(&o, t, 2);
		CHECK(r.outcome == SCHED_ERROR);
		sched_dfs_destroy(d);
	}
	CHECK(brute_force(-1) == 20 && brute_force(0) == 2);
}

/* ---------------------------------------------------------------- deadlock */

struct locks {
	struct mm *mm;
	spinlock_t a, b;
	int in_both;
};

static int take_ab(void *ctx)
{
	struct locks *l = ctx;
	spin_lock(&l->a);
	mm_preempt_point(l->mm, MM_PP_USER);
	spin_lock(&l->b);
	l->in_both++;
	spin_unlock(&l->b);
	spin_unlock(&l->a);
	return 0;
}

static int take_ba(void *ctx)
{
	struct locks *l = ctx;
	spin_lock(&l->b);
	mm_preempt_point(l->mm, MM_PP_USER);
	spin_lock(&l->a);
	l->in_both++;
	spin_unlock(&l->a);
	spin_unlock(&l->b);
	return 0;
}

static void test_deadlock(void)
{
	struct locks l = { .mm = test_make_mm(2, true) };
	REQUIRE(l.mm);
	int deadlocks = 0, ok = 0;
	for (int run = 0; run < 200; run++) {
		spin_lock_init(&l.a);
		spin_lock_init(&l.b);
		l.in_both = 0;
		struct sched_opts o;
		sched_opts_default(&o);
		o.seed = 7;
		o.run = (uint64_t)run;
		o.mm = l.mm;
		struct sched_task_desc t[2] = { { "ab", take_ab, &l, 0 }, { "ba", take_ba, &l, 1 } };
		struct sched_result r = sched_run(&o, t, 2);
		if (r.outcome == SCHED_DEADLOCK) {
			if (!deadlocks++) {
				CHECK_MSG(strstr(r.reason, "T0:ab") && strstr(r.reason, "T1:ba") &&
					  strstr(r.reason, "spinlock"), "%s", r.reason);
#if MM_DEBUG >= 2
				CHECK_MSG(strstr(r.reason, "held by T1") && strstr(r.reason, "held by T0"),
					  "%s", r.reason);
#endif
			}
		} else {
			CHECK_MSG(r.outcome == SCHED_OK, "run %d: %s", run, r.reason);
			CHECK(l.in_both == 2);
			ok++;
		}
		/* Abandoned tasks gave their vCPUs back. */
		CHECK(mm_cpu_holder(l.mm, 0) == NULL && mm_cpu_holder(l.mm, 1) == NULL);
	}
	CHECK_MSG(deadlocks > 10 && ok > 10, "deadlocks %d ok %d", deadlocks, ok);

	/* The exhaustive search finds it on its own. */
	struct sched_dfs *d = sched_dfs_create(1);
	int found = 0;
	while (!sched_dfs_done(d)) {
		spin_lock_init(&l.a);
		spin_lock_init(&l.b);
		struct sched_opts o;
		sched_opts_default(&o);
		o.policy = SCHED_DFS;
		o.dfs = d;
		o.mm = l.mm;
		struct sched_task_desc t[2] = { { "ab", take_ab, &l, 0 }, { "ba", take_ba, &l, 1 } };
		found += sched_run(&o, t, 2).outcome == SCHED_DEADLOCK;
	}
	CHECK(found > 0);
	sched_dfs_destroy(d);
	mm_destroy(l.mm);
}

/* ---------------------------------------------------------------- atomics, vCPU waits */

struct cas {
	struct mm *mm;
	atomic_long value;
	atomic_long retries;
	atomic_int flag;
	atomic_bool pinned;
};

/* A lock-free increment with a switch point at each atomic access. */
static int cas_inc(void *ctx)
{
	struct cas *c = ctx;
	for (int i = 0; i < 5; i++) {
		sched_atomic_point(&c->value);
		long v = atomic_load(&c->value);
		sched_atomic_point(&c->value);
		while (!atomic_compare_exchange_strong(&c->value, &v, v + 1)) {
			atomic_fetch_add(&c->retries, 1);
			sched_atomic_point(&c->value);
		}
	}
	return 0;
}

static int wait_flag(void *ctx)
{
	struct cas *c = ctx;
	bool pin = atomic_load(&c->pinned);
	if (pin)
		preempt_disable();      /* waiting pinned: the vCPU stays held */
	while (!atomic_load(&c->flag))
		sched_wait(&c->flag);
	if (pin)
		preempt_enable();
	return 0;
}

static int set_flag(void *ctx)
{
	struct cas *c = ctx;
	atomic_store(&c->flag, 1);
	return 0;
}

static void test_atomics_and_vcpus(void)
{
	struct cas c = { .mm = test_make_mm(2, true) };
	REQUIRE(c.mm);
	struct sched_task_desc t[3] = { { "c0", cas_inc, &c, -1 }, { "c1", cas_inc, &c, -1 }, { "c2", cas_inc, &c, -1 } };
	unsigned long switches_on = 0, switches_off = 0;
	for (int on = 0; on < 2; on++)
		for (uint64_t run = 0; run < 50; run++) {
			struct sched_opts o;
			sched_opts_default(&o);
			o.run = run;
			o.atomic_points = on;
			atomic_store(&c.value, 0);
			struct sched_result r = sched_run(&o, t, 3);
			CHECK(r.outcome == SCHED_OK && atomic_load(&c.value) == 15);
			*(on ? &switches_on : &switches_off) += r.switches;
		}
	/* Off: a task runs to its end (start + exit switches only). */
	CHECK(switches_off == 50 * 3 + 50);
	CHECK(switches_on > 50 * 10);
	CHECK_MSG(atomic_load(&c.retries) > 0, "no CAS ever failed: the atomic points do not interleave");

	/* More tasks than vCPUs: the third waits for vCPU 0 until the first leaves. */
	struct sched_task_desc v[3] = { { "v0", two_points, NULL, 0 }, { "v1", two_points, NULL, 1 },
					{ "v0b", two_points, NULL, 0 } };
	unsigned long waits = 0;
	for (uint64_t run = 0; run < 50; run++) {
		struct sched_opts o;
		sched_opts_default(&o);
		o.run = run;
		o.mm = c.mm;
		struct sched_result r = sched_run(&o, v, 3);
		CHECK_MSG(r.outcome == SCHED_OK, "%s", r.reason);
		waits += r.waits;
	}
	CHECK(waits > 0);

	/* A task that sleeps in sched_wait gives its vCPU up; one that waits
	 * with preemption disabled keeps it, and if what it waits for needs
	 * that vCPU, that is a deadlock on the vCPU. */
	struct sched_task_desc d[2] = { { "holder", wait_flag, &c, 0 }, { "setter", set_flag, &c, 0 } };
	for (int pin = 0; pin < 2; pin++) {
		int found = 0;
		atomic_store(&c.pinned, pin);
		for (uint64_t run = 0; run < 20; run++) {
			struct sched_opts o;
			sched_opts_default(&o);
			o.run = run;
			o.mm = c.mm;
			atomic_store(&c.flag, 0);
			struct sched_result r = sched_run(&o, d, 2);
			if (r.outcome == SCHED_DEADLOCK) {
				found++;
				CHECK_MSG(strstr(r.reason, "T1:setter (vcpu -1) on vcpu") && strstr(r.reason, "held by T0") &&
					  strstr(r.reason, "T0:holder (vcpu 0) on sched_wait"), "%s", r.reason);
			} else {
				CHECK_MSG(r.outcome == SCHED_OK, "%s", r.reason);
			}
		}
		CHECK_MSG(pin ? found > 0 : found == 0, "pinned %d: %d deadlocks", pin, found);
	}
	mm_destroy(c.mm);
}

/* ---------------------------------------------------------------- hang, fail, return */

static int spin_forever(void *ctx)
{
	(void)ctx;
	for (;;)
		sched_point();
	return 0;
}

static int fail_at_three(void *ctx)
{
	(void)ctx;
	for (int i = 0;; i++) {
		if (i == 3)
			sched_fail("failed on purpose at %d", i);
		sched_point();
	}
	return 0;
}

static int return_five(void *ctx)
{
	(void)ctx;
	sched_point();
	return 5;
}

static int quiet(void *ctx)
{
	atomic_int *n = ctx;            /* shared by the tasks: TSan would see a plain ++ race */
	for (int i = 0; i < 4; i++) {
		atomic_fetch_add_explicit(n, 1, memory_order_relaxed);
		sched_point();
	}
	return 0;
}

static int finish_fails(void *ctx)
{
	(void)ctx;
	sched_fail("finish says no");
	return 1;
}

static void test_endings(void)
{
	struct sched_opts o;
	atomic_int n = 0;
	sched_opts_default(&o);
	o.max_steps = 500;
	struct sched_task_desc h[2] = { { "spin", spin_forever, NULL, -1 }, { "q", quiet, &n, -1 } };
	struct sched_result r = sched_run(&o, h, 2);
	CHECK(r.outcome == SCHED_HANG && r.steps == 501);
	CHECK_MSG(strstr(r.reason, "hang"), "%s", r.reason);

	struct sched_task_desc f[2] = { { "fail", fail_at_three, NULL, -1 }, { "q", quiet, &n, -1 } };
	r = sched_run(&o, f, 2);
	CHECK(r.outcome == SCHED_FAILED && r.failed_task == 0);
	CHECK_MSG(strstr(r.reason, "T0:fail: failed on purpose at 3"), "%s", r.reason);

	struct sched_task_desc rv[2] = { { "q", quiet, &n, -1 }, { "five", return_five, NULL, -1 } };
	r = sched_run(&o, rv, 2);
	CHECK(r.outcome == SCHED_FAILED && r.failed_task == 1);
	CHECK_MSG(strstr(r.reason, "returned 5"), "%s", r.reason);

	/* After all that the engine still runs clean schedules. */
	n = 0;
	struct sched_task_desc q[3] = { { "q0", quiet, &n, -1 }, { "q1", quiet, &n, -1 }, { "q2", quiet, &n, -1 } };
	r = sched_run(&o, q, 3);
	CHECK(r.outcome == SCHED_OK && atomic_load(&n) == 12);
	CHECK(r.steps == 3 * 4 + 3);    /* 4 points and an exit per task */

	o.finish = finish_fails;
	r = sched_run(&o, q, 3);
	CHECK(r.outcome == SCHED_FAILED);
	CHECK_MSG(strstr(r.reason, "finish says no"), "%s", r.reason);

	struct sched_task_desc bad[1] = { { "nofn", NULL, NULL, -1 } };
	r = sched_run(&o, bad, 1);
	CHECK(r.outcome == SCHED_ERROR);
	r = sched_run(&o, q, 0);
	CHECK(r.outcome == SCHED_ERROR);
}

/* ---------------------------------------------------------------- artifacts, timeline */

static void test_artifact_timeline(void)
{
	struct sched_opts o;
	atomic_int n = 0;
	sched_opts_default(&o);
	o.policy = SCHED_PCT;
	o.seed = 0x1234;
	o.run = 9;
	o.scenario = "endings";
	o.config = "two tasks\nline two";
	char path[] = "/tmp/test_sched_XXXXXX";
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	close(fd);
	o.artifact = path;
	struct sched_task_desc f[2] = { { "q", quiet, &n, -1 }, { "fail", fail_at_three, NULL, -1 } };
	struct sched_result r = sched_run(&o, f, 2);
	CHECK(r.outcome == SCHED_FAILED);
	uint64_t hash = r.trace_hash;
	size_t len = r.log_len;

	struct sched_artifact a;
	char err[256];
	CHECK_MSG(sched_artifact_read(path, &a, err, sizeof(err)) == 0, "%s", err);
	CHECK(a.policy == SCHED_PCT && a.master_seed == 0x1234 && a.run == 9 && a.seed == sched_seed(0x1234, 9));
	CHECK(a.trace_hash == hash && a.log_len == len && a.outcome == SCHED_FAILED);
	CHECK(!strcmp(a.scenario, "endings") && !strcmp(a.config, "two tasks line two"));
	CHECK(!strcmp(a.build, sched_build_id()));
	CHECK(strstr(a.reason, "failed on purpose") != NULL);

	/* Replay reproduces it, timeline and all. */
	struct sched_opts base;
	sched_opts_default(&base);
	FILE *tl = tmpfile();
	base.timeline = tl;
	r = sched_replay(&a, &base, f, 2);
	CHECK_MSG(r.outcome == SCHED_FAILED && r.trace_hash == hash, "%s", r.reason);
	fflush(tl);
	rewind(tl);
	char text[1 << 14];
	size_t got = fread(text, 1, sizeof(text) - 1, tl);
	text[got] = 0;
	fclose(tl);
	base.timeline = NULL;
	CHECK(strstr(text, "policy replay") != NULL);
	CHECK(strstr(text, "T1:fail") && strstr(text, "sched_point") && strstr(text, "FAIL (failed)"));
	CHECK(strstr(text, "start") != NULL);

	/* A corrupted log is caught: a changed decision changes the run. */
	if (a.log_len) {
		a.log[a.log_len - 1] ^= 1;
		r = sched_replay(&a, &base, f, 2);
		CHECK(r.outcome == SCHED_NONDET || r.trace_hash != hash);
		CHECK(r.outcome == SCHED_NONDET);
	}
	/* A different scenario under the same log is non-determinism. */
	a.log[a.log_len - 1] ^= 1;
	struct sched_task_desc other[2] = { { "q", quiet, &n, -1 }, { "q2", quiet, &n, -1 } };
	r = sched_replay(&a, &base, other, 2);
	CHECK(r.outcome == SCHED_NONDET);
	sched_artifact_free(&a);

	/* A garbled file is refused with a message. */
	FILE *g = fopen(path, "w");
	fputs("format: mmfuzz-sched 1\nlog_len: 4\nlog: 00zz\n", g);
	fclose(g);
	CHECK(sched_artifact_read(path, &a, err, sizeof(err)) == -1 && strstr(err, "bad log line"));
	unlink(path);
}

/* ---------------------------------------------------------------- grading */

static void test_wilson(void)
{
	double lo, hi;
	sched_wilson(0, 10, 1.96, &lo, &hi);
	CHECK(lo == 0.0 && hi > 0.2775 && hi < 0.2776);
	sched_wilson(5, 10, 1.96, &lo, &hi);
	CHECK(lo > 0.2365 && lo < 0.2367 && hi > 0.7633 && hi < 0.7635);
	sched_wilson(100, 100, 1.96, &lo, &hi);
	CHECK(hi > 0.9999 && hi <= 1.0 && lo > 0.9630 && lo < 0.9631);
	CHECK(sched_policy_parse("pct") == SCHED_PCT && sched_policy_parse("nope") == -1);
	CHECK(!strcmp(sched_policy_name(SCHED_STICKY), "sticky"));
	CHECK(sched_seed(1, 0) != sched_seed(1, 1) && sched_seed(1, 0) != sched_seed(2, 0));
}

/*
 * Across processes: the same seeds in a fresh process (its own ASLR
 * layout: other stack, heap and arena addresses) give the same trace
 * hashes, so nothing address-dependent reaches a decision or the trace.
 */
static uint64_t hash_of_runs(void)
{
	struct work w = { .mm = test_make_mm(4, true), .ops = 12 };
	uint64_t h = 0;
	for (int p = 0; p < 3; p++)
		for (uint64_t run = 0; run < 4; run++) {
			struct run_copy rc = run_work(&w, (enum sched_policy)p, 77, run, NULL, 0);
			h = h * 31 + rc.r.trace_hash;
			free(rc.log);
		}
	mm_destroy(w.mm);
	return h;
}

static void test_across_processes(void)
{
	uint64_t here = hash_of_runs();
	char exe[4096], cmd[4200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	REQUIRE(n > 0);
	exe[n] = 0;
	snprintf(cmd, sizeof(cmd), "'%s' --hash", exe);
	for (int i = 0; i < 2; i++) {
		FILE *p = popen(cmd, "r");
		REQUIRE(p);
		unsigned long long there = 0;
		CHECK(fscanf(p, "%llx", &there) == 1);
		CHECK(pclose(p) == 0);
		CHECK_MSG(there == here, "another process: %#llx, this one %#llx", there,
			  (unsigned long long)here);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--hash")) {
		printf("%llx\n", (unsigned long long)hash_of_runs());
		sched_thread_release();
		return 0;
	}
	test_determinism();
	test_across_processes();
	test_dfs();
	test_deadlock();
	test_atomics_and_vcpus();
	test_endings();
	test_artifact_timeline();
	test_wilson();
	sched_thread_release();
	TEST_DONE();
}
#endif

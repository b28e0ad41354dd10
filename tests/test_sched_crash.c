/* SPDX-License-Identifier: MIT */
/*
 * test_sched_crash.c - failures the scheduler must survive and report:
 *  - an allocator BUG (a double free with bad_policy MM_BAD_ABORT, so
 *    abort()) and a plain abort() inside a task end the run in-process as
 *    SCHED_CRASH, and the engine goes on running clean schedules;
 *  - --fork mode: a task that segfaults ends its run as SCHED_CRASH with
 *    the signal in the reason, and the parent keeps the decision log up to
 *    the crash; a clean run and a sched_fail run give the same outcome,
 *    trace hash and log in a child as in-process;
 *  - under TSan: a counter incremented without synchronisation by two
 *    tasks IS reported (the fiber handoff creates no happens-before), and
 *    the same counter made atomic is not.  Each case runs in a child whose
 *    exit status and stderr are checked.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

static struct mm_config cfg;

static struct mm *make_mm(void)
{
	char err[256];
	struct mm *mm = mm_create(&cfg, err, sizeof(err));
	if (!mm)
		fprintf(stderr, "mm_create: %s\n", err);
	return mm;
}

struct ctx {
	struct mm *mm;
	atomic_int steps;
};

static int worker(void *p)
{
	struct ctx *c = p;
	for (int i = 0; i < 6; i++) {
		struct page *pg = alloc_pages(c->mm, GFP_KERNEL, (unsigned int)(i % 2));
		atomic_fetch_add(&c->steps, 1);
		mm_preempt_point(c->mm, MM_PP_USER);
		if (pg)
			__free_pages(c->mm, pg, (unsigned int)(i % 2));
	}
	return 0;
}

static int segfault(void *p)
{
	struct ctx *c = p;
	sched_point();
	sched_point();
	if (atomic_load(&c->steps) >= 0)
		raise(SIGSEGV);
	return 0;
}

static int fails(void *p)
{
	(void)p;
	sched_point();
	sched_fail("on purpose");
	return 0;
}

static struct sched_result run(struct ctx *c, const struct sched_task_desc *t, int n, bool fork_mode,
			       uint64_t seed)
{
	struct sched_opts o;
	sched_opts_default(&o);
	o.seed = seed;
	o.mm = c->mm;
	o.fork = fork_mode;
	o.irqs = true;
	o.migrations = true;
	return sched_run(&o, t, n);
}

static void rebuild(struct ctx *c)
{
	mm_destroy(c->mm);
	c->mm = make_mm();
	REQUIRE(c->mm);
}

#if !MM_TSAN
static int double_free(void *p)
{
	struct ctx *c = p;
	struct page *pg = alloc_pages(c->mm, GFP_KERNEL, 0);
	mm_preempt_point(c->mm, MM_PP_USER);
	__free_pages(c->mm, pg, 0);
	mm_preempt_point(c->mm, MM_PP_USER);
	__free_pages(c->mm, pg, 0);     /* bad_page -> MM_BAD_ABORT -> abort() */
	return 0;
}

static int plain_abort(void *p)
{
	(void)p;
	sched_point();
	abort();
}

static void test_inprocess_abort(struct ctx *c)
{
	for (int k = 0; k < 3; k++) {
		struct sched_task_desc t[2] = {
			{ "worker", worker, c, 0 },
			{ k == 1 ? "abort" : "double-free", k == 1 ? plain_abort : double_free, c, 1 },
		};
		struct sched_result r = run(c, t, 2, false, 11 + (uint64_t)k);
		CHECK_MSG(r.outcome == SCHED_CRASH, "%s: %s", sched_outcome_name(r.outcome), r.reason);
		CHECK(r.failed_task == 1);
		CHECK_MSG(strstr(r.reason, "SIGABRT") != NULL, "%s", r.reason);
		/* The vCPUs came back; locks may not have: rebuild, then run clean. */
		CHECK(mm_cpu_holder(c->mm, 0) == NULL && mm_cpu_holder(c->mm, 1) == NULL);
		rebuild(c);
		struct sched_task_desc ok[2] = { { "w0", worker, c, 0 }, { "w1", worker, c, 1 } };
		r = run(c, ok, 2, false, 5);
		CHECK_MSG(r.outcome == SCHED_OK, "after the crash: %s", r.reason);
	}
	/* Still deliverable afterwards: SIGABRT is not left blocked. */
	sigset_t cur;
	sigprocmask(SIG_BLOCK, NULL, &cur);
	CHECK(!sigismember(&cur, SIGABRT));
}
#endif

static void test_fork(struct ctx *c)
{
	/* A crash: the child dies, the parent reports it with the log so far. */
	struct sched_task_desc t[2] = { { "worker", worker, c, 0 }, { "segv", segfault, c, 1 } };
	struct sched_result r = run(c, t, 2, true, 3);
	CHECK_MSG(r.outcome == SCHED_CRASH, "%s: %s", sched_outcome_name(r.outcome), r.reason);
#if defined(MM_ASAN) || MM_TSAN
	/* The sanitizer catches the SIGSEGV, reports and exits. */
	CHECK_MSG(strstr(r.reason, "child") != NULL, "%s", r.reason);
#else
	CHECK_MSG(strstr(r.reason, "signal 11") != NULL && strstr(r.reason, "T1:segv"), "%s", r.reason);
#endif
	CHECK(r.steps > 0 && r.log_len > 0);

	/* Clean and sched_fail runs: the same in a child as in-process. */
	struct sched_task_desc ok[2] = { { "w0", worker, c, 0 }, { "w1", worker, c, 1 } };
	struct sched_task_desc bad[2] = { { "w0", worker, c, 0 }, { "fails", fails, c, 1 } };
	for (int k = 0; k < 2; k++) {
		const struct sched_task_desc *tt = k ? bad : ok;
		for (uint64_t seed = 1; seed <= 3; seed++) {
			mm_reset(c->mm);
			struct sched_result a = run(c, tt, 2, false, seed);
			uint8_t log[4096];
			size_t len = a.log_len < sizeof(log) ? a.log_len : sizeof(log);
			memcpy(log, a.log, len);
			if (a.failed)
				rebuild(c);
			mm_reset(c->mm);
			struct sched_result b = run(c, tt, 2, true, seed);
			CHECK(a.outcome == (k ? SCHED_FAILED : SCHED_OK));
			CHECK_MSG(b.outcome == a.outcome, "fork: %s", b.reason);
			CHECK(b.trace_hash == a.trace_hash && b.steps == a.steps);
			CHECK(b.log_len == a.log_len && !memcmp(b.log, log, len));
			CHECK(!strcmp(a.reason, b.reason));
		}
	}
}

#if MM_TSAN
/* ---- TSan must still see races between tasks ---- */

static long plain_counter;
static atomic_long atomic_counter;

static int racy(void *p)
{
	struct ctx *c = p;
	for (int i = 0; i < 3; i++) {
		plain_counter++;
		mm_preempt_point(c->mm, MM_PP_USER);
	}
	return 0;
}

static int not_racy(void *p)
{
	struct ctx *c = p;
	for (int i = 0; i < 3; i++) {
		atomic_fetch_add_explicit(&atomic_counter, 1, memory_order_relaxed);
		mm_preempt_point(c->mm, MM_PP_USER);
	}
	return 0;
}

/* Run @fn in two tasks in a child; its exit status and whether stderr says "data race". */
static int child_status(struct ctx *c, int (*fn)(void *), bool *reported)
{
	char path[] = "/tmp/test_sched_tsan_XXXXXX";
	int fd = mkstemp(path);
	REQUIRE(fd >= 0);
	fflush(NULL);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		dup2(fd, 2);
		struct sched_task_desc t[2] = { { "a", fn, c, 0 }, { "b", fn, c, 1 } };
		for (uint64_t s = 0; s < 4; s++)
			run(c, t, 2, false, s);
		exit(0);                /* TSan turns this into 66 if it reported */
	}
	int st = 0;
	waitpid(pid, &st, 0);
	char buf[8192];
	ssize_t got = pread(fd, buf, sizeof(buf) - 1, 0);
	buf[got > 0 ? got : 0] = 0;
	close(fd);
	unlink(path);
	*reported = strstr(buf, "ThreadSanitizer: data race") != NULL;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_tsan_sees_races(struct ctx *c)
{
	bool reported;
	int st = child_status(c, racy, &reported);
	CHECK_MSG(reported && st != 0, "an unsynchronised counter shared by two tasks was not "
		  "reported (status %d): the fiber switch hides races", st);
	st = child_status(c, not_racy, &reported);
	CHECK_MSG(!reported && st == 0, "an atomic counter was reported (status %d)", st);
}
#endif

int main(void)
{
	mm_config_tiny(&cfg);
	cfg.quiet = true;
	cfg.bad_policy = MM_BAD_ABORT;
	struct ctx c = { .mm = make_mm() };
	REQUIRE(c.mm);
#if !MM_TSAN
	test_inprocess_abort(&c);
#else
	test_tsan_sees_races(&c);
#endif
	test_fork(&c);
	mm_destroy(c.mm);
	sched_thread_release();
	TEST_DONE();
}
#endif

/* SPDX-License-Identifier: MIT */
/*
 * test_cpu_attach.c - vCPUs are exclusive: a second task waits for a held
 * vCPU until its holder leaves; implicit attach takes the first free online
 * vCPU and keeps it; one task may hold vCPUs of two instances at once, and
 * of MM_TASK_MAX_HELD but no more (-ENOSPC); a thread's vCPUs are given
 * back when it exits; destroying a task that holds a vCPU, or the running
 * one, is a BUG; mm_cpu_print_stats() prints a line per vCPU, the total and
 * the table of preemption points under its header.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "mm/cpu.h"
#include "test.h"

static void yield_wait(enum mm_wait_reason why, const void *what, void *ctx)
{
	(void)why; (void)what; (void)ctx;
	sched_yield();
}

/* ---- exclusivity: the second attach waits until the first detaches ---- */

static struct mm *xmm;
static atomic_int x_phase;          /* 1: main holds vCPU 0; 2: main is about to detach */
static atomic_int x_attached;       /* the second thread got vCPU 0 */
static atomic_int x_phase_seen;     /* x_phase when it got it */
static atomic_int x_holder_ok;

static void *second(void *arg)
{
	(void)arg;
	mm_set_wait_hook(yield_wait, NULL);
	while (atomic_load(&x_phase) < 1)
		sched_yield();
	int cpu = mm_cpu_attach(xmm, 0);
	atomic_store(&x_phase_seen, atomic_load(&x_phase));
	atomic_store(&x_holder_ok, cpu == 0 && mm_cpu_holder(xmm, 0) == mm_task_current() &&
			 mm_cpu_current(xmm) == 0);
	atomic_store(&x_attached, 1);
	/* exits holding vCPU 0: the thread-exit destructor gives it back */
	return NULL;
}

static void test_exclusive(void)
{
	pthread_t th;
	xmm = test_make_mm(2, false);
	REQUIRE(xmm);
	CHECK(mm_cpu_attach(xmm, 0) == 0);
	CHECK(mm_cpu_holder(xmm, 0) == mm_task_current());
	CHECK(mm_cpu_holder(xmm, 1) == NULL);
	REQUIRE(pthread_create(&th, NULL, second, NULL) == 0);
	atomic_store(&x_phase, 1);
	usleep(100 * 1000);
	CHECK_MSG(!atomic_load(&x_attached), "the second task attached to a held vCPU");
	CHECK(mm_cpu_holder(xmm, 0) == mm_task_current());
	atomic_store(&x_phase, 2);
	CHECK(mm_cpu_detach(xmm) == 0);
	CHECK(mm_cpu_current(xmm) == -1);
	pthread_join(th, NULL);
	CHECK(atomic_load(&x_attached));
	CHECK(atomic_load(&x_phase_seen) == 2);
	CHECK(atomic_load(&x_holder_ok));
	CHECK_MSG(mm_cpu_holder(xmm, 0) == NULL, "an exited thread still holds vCPU 0");
	struct mm_cpu_stats st;
	CHECK(mm_cpu_get_stats(xmm, 0, &st) == 0);
	CHECK(st.attaches == 2);
	CHECK(st.attach_waits == 1);
	CHECK(mm_cpu_detach(xmm) == -ENOENT);
	CHECK(mm_cpu_attach(xmm, 2) == -EINVAL);
	CHECK(mm_cpu_attach(xmm, -1) == -EINVAL);
	mm_destroy(xmm);
}

/* ---- implicit attach ---- */

static struct mm *imm;
static atomic_int i_cpu[3];
static atomic_int i_done[3];
static atomic_int i_ok[3];
static atomic_int i_release;

static void *implicit(void *arg)
{
	int me = (int)(long)arg;
	mm_set_wait_hook(yield_wait, NULL);
	int ok = mm_cpu_current(imm) == -1;
	int cpu = raw_smp_processor_id(imm);
	atomic_store(&i_cpu[me], cpu);
	ok &= mm_cpu_current(imm) == cpu;
	ok &= mm_cpu_holder(imm, cpu) == mm_task_current();
	ok &= raw_smp_processor_id(imm) == cpu;         /* kept */
	atomic_store(&i_ok[me], ok);
	atomic_store(&i_done[me], 1);
	while (!atomic_load(&i_release))
		sched_yield();
	return NULL;
}

static void test_implicit(void)
{
	pthread_t th[3];
	imm = test_make_mm(2, false);
	REQUIRE(imm);
	for (int i = 0; i < 3; i++)
		atomic_store(&i_cpu[i], -1);

	/* the first implicit attach takes vCPU 0, the next one the first free one */
	REQUIRE(pthread_create(&th[0], NULL, implicit, (void *)0L) == 0);
	while (!atomic_load(&i_done[0]))
		sched_yield();
	CHECK(atomic_load(&i_cpu[0]) == 0);
	REQUIRE(pthread_create(&th[1], NULL, implicit, (void *)1L) == 0);
	while (!atomic_load(&i_done[1]))
		sched_yield();
	CHECK(atomic_load(&i_cpu[1]) == 1);

	/* all held: a third task waits */
	REQUIRE(pthread_create(&th[2], NULL, implicit, (void *)2L) == 0);
	usleep(50 * 1000);
	CHECK_MSG(!atomic_load(&i_done[2]), "a third task attached while both vCPUs were held");
	atomic_store(&i_release, 1);
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	CHECK(atomic_load(&i_done[2]));
	for (int i = 0; i < 3; i++)
		CHECK_MSG(atomic_load(&i_ok[i]), "implicit attach in thread %d", i);
	CHECK(atomic_load(&i_cpu[2]) == 0 || atomic_load(&i_cpu[2]) == 1);
	CHECK(mm_cpu_holder(imm, 0) == NULL && mm_cpu_holder(imm, 1) == NULL);

	/* single-threaded use: operations attach implicitly, the checker stays clean */
	struct page *p = alloc_pages(imm, GFP_KERNEL, 0);
	CHECK(p != NULL);
	CHECK(raw_smp_processor_id(imm) == 0);
	__free_pages(imm, p, 0);
	CHECK_MM(imm, 3);

	/* mm_reset detaches the caller */
	mm_reset(imm);
	CHECK(mm_cpu_current(imm) == -1);
	CHECK(mm_cpu_holder(imm, 0) == NULL);
	mm_destroy(imm);
}

/* ---- two instances in one task ---- */

static struct mm *a, *b;
static atomic_int t2_ok;

static void *other_task(void *arg)
{
	(void)arg;
	int ok = raw_smp_processor_id(a) == 1 && raw_smp_processor_id(b) == 1;
	for (int i = 0; i < 100; i++)   /* the one-entry cache switches instance each call */
		ok &= raw_smp_processor_id(a) == 1 && raw_smp_processor_id(b) == 1;
	ok &= mm_cpu_detach(a) == 0 && mm_cpu_current(a) == -1 && mm_cpu_current(b) == 1;
	ok &= raw_smp_processor_id(b) == 1;
	atomic_store(&t2_ok, ok);
	return NULL;
}

static void test_two_instances(void)
{
	pthread_t th;
	a = test_make_mm(2, false);
	b = test_make_mm(3, false);
	REQUIRE(a && b);
	CHECK(raw_smp_processor_id(a) == 0);
	CHECK(raw_smp_processor_id(b) == 0);
	CHECK(mm_cpu_current(a) == 0 && mm_cpu_current(b) == 0);
	REQUIRE(pthread_create(&th, NULL, other_task, NULL) == 0);
	pthread_join(th, NULL);
	CHECK(atomic_load(&t2_ok));
	CHECK(mm_cpu_holder(a, 1) == NULL && mm_cpu_holder(b, 1) == NULL);

	/* an explicit attach to another vCPU while holding one is a migration */
	CHECK(mm_cpu_attach(b, 2) == 2);
	CHECK(mm_cpu_current(b) == 2 && mm_cpu_holder(b, 0) == NULL);
	CHECK(mm_cpu_attach_any(b) == 2);
	struct mm_cpu_stats st;
	mm_cpu_get_stats(b, -1, &st);
	CHECK(st.migrations_in == 1 && st.migrations_out == 1);

	/* and a non-preemptible task cannot be moved */
	preempt_disable();
	CHECK(mm_cpu_attach(b, 1) == -EPERM);
	CHECK(mm_cpu_current(b) == 2);
	preempt_enable();

	/* a fiber-style task switch: the new task holds nothing */
	struct mm_task *fiber = mm_task_create("fiber");
	REQUIRE(fiber);
	struct mm_task *prev = mm_task_switch(fiber);
	CHECK(mm_task_current() == fiber);
	CHECK(mm_cpu_current(a) == -1);
	CHECK(raw_smp_processor_id(a) == 1);            /* vCPU 0 is held by the thread's task */
	CHECK(mm_cpu_detach(a) == 0);
	CHECK(mm_task_switch(prev) == fiber);
	CHECK(mm_cpu_current(a) == 0);
	mm_task_destroy(fiber);

	mm_destroy(a);
	mm_destroy(b);
}

/* ---- the limit: vCPUs in MM_TASK_MAX_HELD instances at once ---- */

/* One more instance than a task may hold vCPUs in: each attach up to the
 * limit succeeds, the next is -ENOSPC by every way in (explicit, any,
 * implicit is the same path as any) and leaves the task's vCPUs as they were;
 * giving one up makes room again. */
static void test_held_limit(void)
{
	struct mm *m[MM_TASK_MAX_HELD + 1];
	for (int i = 0; i <= MM_TASK_MAX_HELD; i++) {
		m[i] = test_make_mm(1, false);
		REQUIRE(m[i]);
	}
	for (int i = 0; i < MM_TASK_MAX_HELD; i++)
		CHECK(i % 2 ? mm_cpu_attach(m[i], 0) == 0 : mm_cpu_attach_any(m[i]) == 0);
	struct mm *last = m[MM_TASK_MAX_HELD];
	CHECK(mm_cpu_attach(last, 0) == -ENOSPC);
	CHECK(mm_cpu_attach_any(last) == -ENOSPC);
	CHECK(mm_cpu_current(last) == -1 && mm_cpu_holder(last, 0) == NULL);
	for (int i = 0; i < MM_TASK_MAX_HELD; i++)
		CHECK(mm_cpu_current(m[i]) == 0);
	CHECK(mm_cpu_detach(m[3]) == 0);
	CHECK(mm_cpu_attach_any(last) == 0);
	CHECK(mm_cpu_attach(m[3], 0) == -ENOSPC);
	CHECK(mm_cpu_detach(last) == 0 && mm_cpu_attach(m[3], 0) == 0);
	for (int i = 0; i <= MM_TASK_MAX_HELD; i++) {
		mm_cpu_detach(m[i]);
		mm_destroy(m[i]);
	}
}

/* ---- mm_task_destroy() of a task still in use is a BUG ---- */

/* Run @fn in a child with stderr captured: true if it aborted with @what in its stderr. */
static bool child_bugs(void (*fn)(void), const char *what)
{
	char buf[4096];
	int status = test_run_child_stderr(fn, buf, sizeof(buf));
	bool ok = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && strstr(buf, what);
	if (!ok)
		fprintf(stderr, "child status %#x, stderr:\n%s\n", status, buf);
	return ok;
}

/* An instance whose vCPU 1 a task named "holder" holds while the caller's task runs (in a child). */
static struct mm *held_by_other(struct mm_task **holder)
{
	struct mm *mm = test_make_mm(2, true);
	struct mm_task *t = mm_task_create("holder");
	struct mm_task *prev = mm_task_switch(t);
	if (mm_cpu_attach(mm, 1) != 1)
		_exit(3);
	mm_task_switch(prev);
	if (holder)
		*holder = t;
	return mm;
}

/* A task that holds a vCPU but is not running: switched away from. */
static void destroy_holder(void)
{
	struct mm_task *t;
	held_by_other(&t);
	mm_task_destroy(t);
}

/* The running task, holding nothing. */
static void destroy_current(void)
{
	struct mm_task *t = mm_task_create("running");
	mm_task_switch(t);
	mm_task_destroy(t);
}

/* mm_destroy() / mm_reset() while another task ("holder") still holds vCPU 1. */
static void destroy_mm_held(void)
{
	mm_destroy(held_by_other(NULL));
}

static void reset_mm_held(void)
{
	mm_reset(held_by_other(NULL));
}

static void test_destroy_busy(void)
{
	const char *bug = "mm_task_destroy: the task still holds a vCPU or is running";
	CHECK_MSG(child_bugs(destroy_holder, bug), "destroying a task that holds a vCPU is not a BUG");
	CHECK_MSG(child_bugs(destroy_current, bug), "destroying the running task is not a BUG");
	/* An instance whose vCPU another task holds: the BUG names the vCPU and the task (MM_DEBUG >= 1). */
	if (MM_DEBUG >= 1) {
		CHECK_MSG(child_bugs(destroy_mm_held, "mm_destroy: vCPU 1 still held by task holder"),
			  "mm_destroy() of an instance whose vCPU another task holds is not a BUG naming them");
		CHECK_MSG(child_bugs(reset_mm_held, "mm_reset: vCPU 1 still held by task holder"),
			  "mm_reset() of an instance whose vCPU another task holds is not a BUG naming them");
	}
}

/* ---- mm_cpu_print_stats(): a line per vCPU, then the total ---- */

static void test_print_stats(void)
{
	struct mm *mm = test_make_mm(2, true);
	REQUIRE(mm);
	REQUIRE(mm_cpu_attach(mm, 0) == 0);
	REQUIRE(mm_cpu_attach(mm, 1) == 1);             /* a migration 0 -> 1 */
	REQUIRE(mm_cpu_detach(mm) == 0);
	REQUIRE(mm_cpu_offline(mm, 1) == 0);
	static char out[4096];
	FILE *f = fmemopen(out, sizeof(out) - 1, "w");
	REQUIRE(f);
	mm_cpu_print_stats(mm, f);
	REQUIRE(fclose(f) == 0);
	unsigned long a0 = 0, o0 = 0, a1 = 0, i1 = 0, at = 0, it = 0, ot = 0;
	const char *l1 = strchr(out, '\n'), *l2 = l1 ? strchr(l1 + 1, '\n') : NULL;
	REQUIRE_MSG(l1 && l2, "mm_cpu_print_stats printed:\n%s", out);
	CHECK_MSG(sscanf(out, "vcpu  0: attach %lu (waited %*u) migrate in %*u out %lu", &a0, &o0) == 2 &&
			  sscanf(l1 + 1, "vcpu  1 (offline): attach %lu (waited %*u) migrate in %lu", &a1, &i1) == 2 &&
			  sscanf(l2 + 1, "total  : attach %lu (waited %*u) migrate in %lu out %lu", &at, &it, &ot) == 3,
		  "mm_cpu_print_stats printed:\n%s", out);
	CHECK_MSG(o0 == 1 && i1 == 1 && it == 1 && ot == 1 && at == a0 + a1,
		  "vCPU 0: %lu attaches, %lu out; vCPU 1: %lu attaches, %lu in; total %lu attaches, %lu in, %lu out",
		  a0, o0, a1, i1, at, it, ot);
	/* then the table of preemption points, under its header */
	const char *l3 = strchr(l2 + 1, '\n');
	char pt[16] = "", hits[16] = "", mig[16] = "", irqs[16] = "";
	CHECK_MSG(l3 && sscanf(l3 + 1, "%15s %15s %15s %15s", pt, hits, mig, irqs) == 4 && !strcmp(pt, "point") &&
			  !strcmp(hits, "hits") && !strcmp(mig, "migrated") && !strcmp(irqs, "irqs"),
		  "no point table header after the total:\n%s", out);
	mm_destroy(mm);
}

int main(void)
{
	test_print_stats();
	test_destroy_busy();
	test_exclusive();
	test_implicit();
	test_two_instances();
	test_held_limit();
	TEST_DONE();
}

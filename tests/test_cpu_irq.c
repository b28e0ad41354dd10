/* SPDX-License-Identifier: MIT */
/*
 * test_cpu_irq.c - interrupts: raised from the hook they run only where
 * irqs are enabled, never nested, in interrupt context on the task's vCPU,
 * unpreemptible; one raised while masked runs when irqs come back; a
 * handler that leaks state is caught; delivered from a signal
 * (pthread_kill) they run on the interrupted thread's vCPU only while it
 * has irqs enabled; a signal taken inside such a handler runs after it, still
 * counted as from a signal; a handler that works in a second instance leaves
 * the task's current instance as it found it.  The handler allocates and
 * frees pages (GFP_ATOMIC), and the checker stays clean.
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

#ifdef MM_TEST_HOOKS
static const bool hooks = true;
#else
static const bool hooks = false;
#endif

/* ---- the handler: records its context, allocates and frees ---- */

struct irq_rec {
	atomic_int runs;
	atomic_int depth;                 /* > 1: nested */
	atomic_int bad_context;           /* irqs on, not in interrupt, preemptible ... */
	atomic_int bad_cpu;               /* not the vCPU the interrupted task holds */
	atomic_int migrate_allowed;       /* mm_migrate_current() not refused inside */
	atomic_int raise_allowed;         /* mm_raise_irq() not refused inside */
	atomic_int alloc_fail;
	atomic_int in_masked;             /* set by the interrupted code inside irq-off sections */
	atomic_int ran_while_masked;
	pthread_t thread;                 /* if set: the handler must run on this thread */
	atomic_int wrong_thread;
	bool alloc;                       /* allocate and free a page */
};

static void handler(struct mm *mm, int cpu, void *ctx)
{
	struct irq_rec *r = ctx;
	if (atomic_fetch_add(&r->depth, 1) != 0)
		atomic_fetch_add(&r->bad_context, 1000);
	atomic_fetch_add(&r->runs, 1);
	if (!irqs_disabled() || !in_interrupt() || preemptible() || in_task())
		atomic_fetch_add(&r->bad_context, 1);
	if (mm_cpu_current(mm) != cpu || mm_cpu_holder(mm, cpu) != mm_task_current())
		atomic_fetch_add(&r->bad_cpu, 1);
	if (atomic_load(&r->in_masked))
		atomic_fetch_add(&r->ran_while_masked, 1);
	if (r->thread && !pthread_equal(pthread_self(), r->thread))
		atomic_fetch_add(&r->wrong_thread, 1);
	if (mm_migrate_current(mm, MM_CPU_ANY) != -EPERM)
		atomic_fetch_add(&r->migrate_allowed, 1);
	if (mm_raise_irq(mm))
		atomic_fetch_add(&r->raise_allowed, 1);
	if (r->alloc) {
		/* what a driver's interrupt does: atomic allocations, spin_lock_irqsave inside */
		struct page *p = alloc_pages(mm, GFP_ATOMIC, 0);
		if (p)
			__free_pages(mm, p, 0);
		else
			atomic_fetch_add(&r->alloc_fail, 1);
	}
	atomic_fetch_sub(&r->depth, 1);
}

/* ---- from the hook ---- */

struct hook_rec {
	unsigned long raised, refused;
	unsigned long wrong;              /* raise result disagrees with the irq state */
};

static void raise_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	struct hook_rec *h = ctx;
	bool could = !irqs_disabled() && !in_interrupt();
	bool ran = mm_raise_irq(mm);
	if (ran != could)
		h->wrong++;
	if (ran)
		h->raised++;
	else
		h->refused++;
}

static void test_from_hook(struct mm *mm)
{
	struct irq_rec r;
	struct hook_rec h;
	unsigned long flags;
	spinlock_t lock;

	memset(&r, 0, sizeof(r));
	memset(&h, 0, sizeof(h));
	r.alloc = true;
	spin_lock_init(&lock);
	mm_reset(mm);
	mm_set_irq_handler(mm, handler, &r);

	/* direct: runs now with irqs enabled, refused otherwise */
	CHECK(!mm_raise_irq(mm));                 /* no vCPU held yet */
	CHECK(raw_smp_processor_id(mm) == 0);
	CHECK(mm_raise_irq(mm));
	CHECK(atomic_load(&r.runs) == 1);
	local_irq_save(flags);
	atomic_store(&r.in_masked, 1);
	CHECK(!mm_raise_irq(mm));
	mm_set_irq_pending(mm);                    /* arrives masked: runs at the restore */
	CHECK(atomic_load(&r.runs) == 1);
	atomic_store(&r.in_masked, 0);
	local_irq_restore(flags);
	CHECK(atomic_load(&r.runs) == 1 + hooks);
	preempt_disable();                         /* preemption off does not mask interrupts */
	CHECK(mm_raise_irq(mm));
	preempt_enable();
	/* without test hooks the pending one had no point to run at: it runs when this one ends */
	CHECK(atomic_load(&r.runs) == 3);

	/* from the hook at every point: only where irqs are on, never nested */
	mm_set_sched_hook(mm, raise_hook, &h);
	for (int i = 0; i < 50; i++) {
		spin_lock_irqsave(&lock, flags);
		atomic_store(&r.in_masked, 1);
		mm_preempt_point(mm, MM_PP_PCP_LOCKED);
		atomic_store(&r.in_masked, 0);
		spin_unlock_irqrestore(&lock, flags);
		preempt_disable();
		mm_preempt_point(mm, MM_PP_TID_READ);
		preempt_enable();
		struct page *p = alloc_pages(mm, GFP_KERNEL, 0);
		CHECK(p != NULL);
		if (p)
			__free_pages(mm, p, 0);
	}
	mm_set_sched_hook(mm, NULL, NULL);
	CHECK_MM(mm, 3);
	CHECK(h.wrong == 0);
	if (hooks) {
		CHECK(h.raised > 100);
		CHECK(h.refused > 50);             /* the PCP_LOCKED points, the points inside handlers */
	} else {
		CHECK(h.raised == 0 && h.refused == 0);
	}
	CHECK(atomic_load(&r.bad_context) == 0);
	CHECK(atomic_load(&r.bad_cpu) == 0);
	CHECK(atomic_load(&r.ran_while_masked) == 0);
	CHECK(atomic_load(&r.migrate_allowed) == 0);
	CHECK(atomic_load(&r.raise_allowed) == 0);
	CHECK(atomic_load(&r.alloc_fail) == 0);

	struct mm_cpu_stats st;
	mm_cpu_get_stats(mm, 0, &st);
	CHECK(st.irqs_delivered == (unsigned long)atomic_load(&r.runs));
	CHECK(st.irqs_deferred == 1);
	CHECK(st.pp_irq[MM_PP_IRQ_RESTORE] >= (unsigned long)hooks);
	/* (The pcp layer's own PCP_LOCKED points run with irqs on: interrupts may
	 * land there; the masked ones above are covered by h.wrong and
	 * r.ran_while_masked.) */
	if (hooks)
		CHECK(st.pp_irq[MM_PP_TID_READ] == 50 && st.pp_irq[MM_PP_SPIN_UNLOCK] >= 50);
	mm_set_irq_handler(mm, NULL, NULL);
	CHECK(!mm_raise_irq(mm));                  /* no handler */
}

/* ---- a handler that leaks state is caught (MM_DEBUG >= 1) ---- */

static struct mm *leak_mm;
static void leaky(struct mm *mm, int cpu, void *ctx)
{
	(void)mm; (void)cpu; (void)ctx;
	preempt_disable();
}
static void leaky_irqs(struct mm *mm, int cpu, void *ctx)
{
	(void)mm; (void)cpu; (void)ctx;
	local_irq_enable();
}
static void run_leaky(mm_irq_handler_fn fn)
{
	mm_set_irq_handler(leak_mm, fn, NULL);
	(void)raw_smp_processor_id(leak_mm);
	mm_raise_irq(leak_mm);
}
static void run_leaky_preempt(void) { run_leaky(leaky); }
static void run_leaky_irqs(void) { run_leaky(leaky_irqs); }

/* ---- from a signal ---- */

static struct mm *smm;
static struct irq_rec srec;
static atomic_int s_cpu = -1;
static atomic_int s_stop;
static atomic_int s_ready;
static atomic_ulong s_loops_masked, s_loops_enabled;

static void on_sigusr1(int sig)
{
	(void)sig;
	mm_irq_from_signal();
}

static void *victim(void *arg)
{
	(void)arg;
	spinlock_t lock;
	spin_lock_init(&lock);
	srec.thread = pthread_self();
	atomic_store(&s_cpu, mm_cpu_attach(smm, 1));
	atomic_store(&s_ready, 1);
	while (!atomic_load(&s_stop)) {
		unsigned long flags;
		/* irqs enabled: interrupts run here */
		for (int i = 0; i < 200; i++) {
			spin_lock(&lock);
			spin_unlock(&lock);
			atomic_fetch_add(&s_loops_enabled, 1);
		}
		/* irqs disabled: interrupts must wait for the restore */
		local_irq_save(flags);
		atomic_store(&srec.in_masked, 1);
		for (int i = 0; i < 200; i++) {
			spin_lock(&lock);
			spin_unlock(&lock);
			atomic_fetch_add(&s_loops_masked, 1);
		}
		atomic_store(&srec.in_masked, 0);
		local_irq_restore(flags);
	}
	mm_cpu_detach(smm);
	return NULL;
}

static void test_from_signal(void)
{
	pthread_t th;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr1;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);

	smm = test_make_mm(2, false);
	REQUIRE(smm);
	srec.alloc = true;
	mm_set_irq_handler(smm, handler, &srec);
	REQUIRE(pthread_create(&th, NULL, victim, NULL) == 0);
	while (!atomic_load(&s_ready))
		sched_yield();
	CHECK(atomic_load(&s_cpu) == 1);

	/* a thread holding no vCPU: dropped, counted */
	unsigned long unattached = mm_irq_signal_unattached();
	raise(SIGUSR1);
	CHECK(mm_irq_signal_unattached() == unattached + 1);

	struct mm_cpu_stats st;
	for (int i = 0; i < 20000; i++) {
		pthread_kill(th, SIGUSR1);
		if (i % 64 == 0)
			usleep(100);
		if (i > 2000 && i % 1000 == 0) {
			mm_cpu_get_stats(smm, 1, &st);
			if (st.irqs_from_signal > 20 && st.irqs_deferred > 20)
				break;
		}
	}
	usleep(10000);
	atomic_store(&s_stop, 1);
	pthread_join(th, NULL);

	mm_cpu_get_stats(smm, 1, &st);
	printf("signal irqs: delivered %lu (from signal %lu), deferred %lu; loops enabled %lu masked %lu\n",
	       st.irqs_delivered, st.irqs_from_signal, st.irqs_deferred,
	       atomic_load(&s_loops_enabled), atomic_load(&s_loops_masked));
	CHECK(st.irqs_from_signal > 0);
	CHECK(st.irqs_delivered >= st.irqs_from_signal);
	CHECK(atomic_load(&srec.runs) == (int)st.irqs_delivered);
	CHECK_MSG(atomic_load(&srec.ran_while_masked) == 0, "%d interrupts ran inside irq-disabled sections",
		  atomic_load(&srec.ran_while_masked));
	CHECK(atomic_load(&srec.bad_context) == 0);
	CHECK(atomic_load(&srec.bad_cpu) == 0);
	CHECK(atomic_load(&srec.wrong_thread) == 0);
	CHECK(atomic_load(&srec.migrate_allowed) == 0);
	CHECK(atomic_load(&srec.alloc_fail) == 0);
	mm_cpu_get_stats(smm, 0, &st);
	CHECK(st.irqs_delivered == 0);             /* nothing on the vCPU the victim did not hold */
	CHECK_MM(smm, 3);
	mm_destroy(smm);
}

/* ---- a signal inside a signal's interrupt ---- */

/* The handler of an interrupt that came from a signal takes another signal
 * (called directly here: one thread, deterministic).  The second is left
 * pending - in interrupt context - and runs when the first returns, still as
 * an interrupt from a signal (counted so, and with the scheduler hook kept
 * out as in a signal handler). */
static int nested_runs, nested_inner_ran = -1;
static void nested_handler(struct mm *mm, int cpu, void *ctx)
{
	(void)mm; (void)cpu; (void)ctx;
	if (nested_runs++ == 0)
		nested_inner_ran = mm_irq_from_signal();
}

static void test_signal_nested(void)
{
	struct mm *mm = test_make_mm(1, false);
	REQUIRE(mm);
	CHECK(mm_cpu_attach(mm, 0) == 0);
	mm_set_irq_handler(mm, nested_handler, NULL);
	CHECK(mm_irq_from_signal());
	CHECK_MSG(nested_inner_ran == 0, "the nested signal's handler ran inside the first");
	CHECK(nested_runs == 2);
	struct mm_cpu_stats st;
	mm_cpu_get_stats(mm, 0, &st);
	CHECK_MSG(st.irqs_delivered == 2 && st.irqs_deferred == 1 && st.irqs_from_signal == 2,
		  "delivered %lu deferred %lu from signal %lu", st.irqs_delivered, st.irqs_deferred,
		  st.irqs_from_signal);
	mm_set_irq_handler(mm, NULL, NULL);
	mm_cpu_detach(mm);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/* ---- the task's current instance across an interrupt ---- */

/* A task holding vCPU 0 of two instances takes an interrupt of the first
 * whose handler runs in the second (same vCPU number): on return the task's
 * cached current instance is the first again, so the next signal's
 * interrupt goes to the first, not to the second (which has no handler and
 * would drop it).  Then: the current instance - the one a signal's
 * interrupt goes to - follows attaches and detaches. */
static struct mm *other_mm;
static int other_runs;
static void other_handler(struct mm *mm, int cpu, void *ctx)
{
	(void)mm; (void)cpu; (void)ctx;
	other_runs++;
	CHECK(mm_this_cpu(other_mm) == 0);
}

static void count_handler(struct mm *mm, int cpu, void *ctx)
{
	(void)mm; (void)cpu; (void)ctx;
}

static void test_irq_other_instance(void)
{
	struct mm *a = test_make_mm(1, false), *b = test_make_mm(1, false);
	REQUIRE(a && b);
	other_mm = b;
	CHECK(mm_cpu_attach(a, 0) == 0 && mm_cpu_attach(b, 0) == 0);
	CHECK(mm_this_cpu(a) == 0);                     /* current: a */
	mm_set_irq_handler(a, other_handler, NULL);
	CHECK(mm_irq_from_signal() && mm_irq_from_signal());
	CHECK(other_runs == 2);
	struct mm_cpu_stats sa, sb;
	mm_cpu_get_stats(a, 0, &sa);
	mm_cpu_get_stats(b, 0, &sb);
	CHECK_MSG(sa.irqs_delivered == 2 && sb.irqs_dropped == 0,
		  "a: %lu delivered; b: %lu dropped", sa.irqs_delivered, sb.irqs_dropped);

	/* the current instance follows the last attach, also of a vCPU the
	 * task holds already (attach_any and attach return it) ... */
	mm_set_irq_handler(a, count_handler, NULL);
	mm_set_irq_handler(b, count_handler, NULL);
	CHECK(mm_cpu_attach_any(b) == 0);
	CHECK(mm_irq_from_signal());
	CHECK(mm_cpu_attach_any(a) == 0);
	CHECK(mm_irq_from_signal());
	CHECK(mm_cpu_attach(b, 0) == 0);
	CHECK(mm_irq_from_signal());
	mm_cpu_get_stats(a, 0, &sa);
	mm_cpu_get_stats(b, 0, &sb);
	CHECK_MSG(sa.irqs_delivered == 3 && sb.irqs_delivered == 2,
		  "a: %lu delivered (want 3), b: %lu (want 2)", sa.irqs_delivered, sb.irqs_delivered);
	/* ... and a detached one is current no more: the other is, then none */
	CHECK(mm_cpu_detach(b) == 0);
	CHECK(mm_irq_from_signal());
	mm_cpu_get_stats(a, 0, &sa);
	CHECK_MSG(sa.irqs_delivered == 4, "a: %lu delivered after b's detach", sa.irqs_delivered);
	CHECK(mm_cpu_detach(a) == 0);
	unsigned long unattached = mm_irq_signal_unattached();
	CHECK(!mm_irq_from_signal());
	CHECK_MSG(mm_irq_signal_unattached() == unattached + 1, "a signal after the last detach went to an instance");
	mm_cpu_get_stats(a, 0, &sa);
	mm_cpu_get_stats(b, 0, &sb);
	CHECK(sa.irqs_delivered == 4 && sb.irqs_delivered == 2 && sa.irqs_dropped == 0 && sb.irqs_dropped == 0);
	mm_set_irq_handler(a, NULL, NULL);
	mm_set_irq_handler(b, NULL, NULL);
	mm_destroy(b);
	mm_destroy(a);
}

/* ---- a signal's interrupt with no handler registered: dropped, counted ---- */

/* Called directly (one thread, deterministic), as in a signal handler: an
 * instance with no irq handler drops it on the task's vCPU and counts it. */
static void test_signal_no_handler(void)
{
	struct mm *mm = test_make_mm(2, false);
	REQUIRE(mm);
	REQUIRE(mm_cpu_attach(mm, 1) == 1);
	struct mm_cpu_stats before, after;
	mm_cpu_get_stats(mm, 1, &before);
	CHECK(!mm_irq_from_signal());
	mm_cpu_get_stats(mm, 1, &after);
	CHECK_MSG(after.irqs_dropped == before.irqs_dropped + 1, "irqs_dropped %lu -> %lu", before.irqs_dropped,
		  after.irqs_dropped);
	CHECK(after.irqs_delivered == before.irqs_delivered && after.irqs_deferred == before.irqs_deferred);
	CHECK(mm_cpu_detach(mm) == 0);
	mm_destroy(mm);
}

/* ---- an interrupt left pending by a handler runs as the interrupt exits ---- */

static int rp_runs;
static void pend_once(struct mm *mm, int cpu, void *ctx)
{
	(void)cpu;
	(void)ctx;
	if (rp_runs++ == 0)
		mm_set_irq_pending(mm);           /* in interrupt context: deferred */
}

static void test_raise_runs_pending(void)
{
	struct mm *mm = test_make_mm(2, false);
	REQUIRE(mm);
	REQUIRE(mm_cpu_attach(mm, 0) == 0);
	rp_runs = 0;
	mm_set_irq_handler(mm, pend_once, NULL);
	struct mm_cpu_stats st;
	CHECK(mm_raise_irq(mm));
	CHECK_MSG(rp_runs == 2, "the handler ran %d times: the interrupt it left pending did not run at the exit",
		  rp_runs);
	mm_cpu_get_stats(mm, 0, &st);
	CHECK(st.irqs_delivered == 2 && st.irqs_deferred == 1);
	/* raised by a call, not by a signal: the one it ran at the exit neither */
	CHECK_MSG(st.irqs_from_signal == 0, "irqs_from_signal %lu after mm_raise_irq()", st.irqs_from_signal);
	mm_set_irq_handler(mm, NULL, NULL);
	CHECK(mm_cpu_detach(mm) == 0);
	mm_destroy(mm);
}

/* ---- a pending interrupt delivered at a preemption point is not from a signal ---- */

static void test_pending_at_point(void)
{
#ifdef MM_TEST_HOOKS
	struct mm *mm = test_make_mm(2, false);
	REQUIRE(mm);
	REQUIRE(mm_cpu_attach(mm, 0) == 0);
	rp_runs = 0;
	mm_set_irq_handler(mm, pend_once, NULL);       /* its first run leaves another one pending */
	spinlock_t lock;
	spin_lock_init(&lock);
	struct mm_cpu_stats before, after;
	mm_cpu_get_stats(mm, 0, &before);
	mm_set_irq_pending(mm);
	spin_lock(&lock);
	spin_unlock(&lock);                        /* a preemption point with interrupts enabled */
	mm_cpu_get_stats(mm, 0, &after);
	CHECK_MSG(rp_runs == 2, "the pending interrupts ran %d times at the preemption point", rp_runs);
	CHECK(after.irqs_delivered == before.irqs_delivered + 2);
	CHECK_MSG(after.irqs_from_signal == before.irqs_from_signal, "irqs_from_signal %lu -> %lu",
		  before.irqs_from_signal, after.irqs_from_signal);
	mm_set_irq_handler(mm, NULL, NULL);
	CHECK(mm_cpu_detach(mm) == 0);
	mm_destroy(mm);
#endif
}

int main(void)
{
	test_pending_at_point();
	test_raise_runs_pending();
	test_signal_no_handler();
	struct mm *mm = test_make_mm(2, false);
	REQUIRE(mm);
	leak_mm = mm;
	if (MM_DEBUG >= 1) {
		CHECK_MSG(test_aborts(run_leaky_preempt), "a handler leaking preempt count");
		CHECK_MSG(test_aborts(run_leaky_irqs), "a handler enabling interrupts");
	}
	test_from_hook(mm);
	mm_destroy(mm);
	test_from_signal();
	test_signal_nested();
	test_irq_other_instance();
	TEST_DONE();
}

/* SPDX-License-Identifier: MIT */
/*
 * irq.c - interrupts on vCPUs: one "device" interrupt handler per instance
 * (a callback that allocates and frees with atomic gfp), run on top of the
 * task that holds the vCPU, as the kernel runs a hardirq on top of
 * whatever the CPU was doing (x86-64, !PREEMPT_RT, Linux 6.6).
 *
 * Rules, as the kernel's:
 *  - an interrupt runs only where the task holding the vCPU has interrupts
 *    enabled and is not already in an interrupt (no nesting);
 *  - one that arrives while masked is left pending on the vCPU (coalesced,
 *    like a real interrupt line) and runs at the next preemption point
 *    where interrupts are enabled again: local_irq_restore(),
 *    spin_unlock_irqrestore(), the end of the current handler;
 *  - the handler runs with interrupts disabled and in_interrupt set, so it
 *    cannot be preempted or migrated (mm_migrate_current() refuses), and
 *    must leave preempt count, lock depth and irq state as it found them
 *    (checked at MM_DEBUG >= 1, as the kernel warns on a handler that
 *    leaks preempt count);
 *  - spin_lock_irqsave() inside the handler is fine; taking a lock the
 *    interrupted task holds with interrupts enabled is a self-deadlock,
 *    reported at MM_DEBUG >= 2 as spinlock / local_lock recursion.
 *
 * Delivery paths: from the scheduler hook (mm_raise_irq(): single-threaded
 * fuzzers and the deterministic scheduler), and from a signal handler
 * (mm_irq_from_signal(): stressors).  The signal path is async-signal-safe:
 * it reads the interrupted task through the thread-local pointer and the
 * signal-consistent fields (irqs_off, in_interrupt, the vCPU cache; see
 * cpu/preempt.h), and otherwise uses only lock-free atomics.  The handler
 * it runs is the allocator, which only uses atomics and the model's own
 * spinlocks - but it must stay on the instance it interrupted (attaching to
 * another one would edit the task's vCPU list under the interrupted code),
 * and the scheduler hook is not called from inside it.  An interrupt raised
 * from the hook (or found pending at a point) does reach the hook at its own
 * points, where migrating and raising are refused.
 */
#include <errno.h>

#include "internal.h"

static atomic_ulong signal_unattached;     /* signal interrupts on threads holding no vCPU */

unsigned long mm_irq_signal_unattached(void)
{
	return atomic_load_explicit(&signal_unattached, memory_order_relaxed);
}

void mm_set_irq_handler(struct mm *mm, mm_irq_handler_fn fn, void *ctx)
{
	struct mm_smp *smp = mm_smp(mm);
	atomic_store_explicit(&smp->irq_ctx, ctx, memory_order_relaxed);
	atomic_store_explicit(&smp->irq_handler, fn, memory_order_release);
}

/*
 * irq_enter() ... handler ... irq_exit() on @t's vCPU @cpu.  The caller has
 * checked that interrupts are enabled and we are not in an interrupt.
 * Counted at point @at.
 */
static void irq_run(struct mm *mm, struct mm_task *t, int cpu, enum mm_pp at, bool from_signal,
		    mm_irq_handler_fn fn, void *ctx)
{
	struct mm_cpu *c = &mm->cpus[cpu];
	struct mm *saved_mm = atomic_load_explicit(&t->cur_mm, memory_order_relaxed);
	int saved_cpu = atomic_load_explicit(&t->cur_cpu, memory_order_relaxed);
	int pc = t->preempt_count, ld = t->lock_depth, md = t->migrate_disable;

	/* 1. mask, then enter hardirq context: a signal between the two is deferred */
	atomic_store_explicit(&t->irqs_off, 1, memory_order_relaxed);
	barrier();
	atomic_store_explicit(&t->in_interrupt, 1, memory_order_relaxed);
	barrier();
	/* The hook runs inside interrupts it raised itself (the deterministic
	 * scheduler interleaves handlers too), never inside a signal handler. */
	int saved_in_hook = t->in_hook;
	t->in_hook = from_signal ? saved_in_hook + 1 : 0;
	mm_stat_inc(&c->stat.irqs_delivered);
	mm_stat_inc(&c->stat.pp_irq[at]);
	if (from_signal)
		mm_stat_inc(&c->stat.irqs_from_signal);
	t->nr_irqs++;

	/* 2. the handler */
	fn(mm, cpu, ctx);

	/* 3. what the kernel warns about on irq exit */
	if (MM_DEBUG >= 1) {
		if (t->preempt_count != pc || t->lock_depth != ld || t->migrate_disable != md)
			mm_bug(__FILE__, __LINE__, "interrupt handler returned with a different "
			       "preempt count, lock depth or migrate-disable depth");
		if (!atomic_load_explicit(&t->irqs_off, memory_order_relaxed))
			mm_bug(__FILE__, __LINE__, "interrupt handler returned with interrupts enabled");
		if (atomic_load_explicit(&c->holder, memory_order_relaxed) != t)
			mm_bug(__FILE__, __LINE__, "interrupt handler left its vCPU");
	}
	t->in_hook = saved_in_hook;
	if (saved_mm && (atomic_load_explicit(&t->cur_mm, memory_order_relaxed) != saved_mm ||
			 atomic_load_explicit(&t->cur_cpu, memory_order_relaxed) != saved_cpu))
		__mm_task_cache_set(t, saved_mm, saved_cpu);

	/* 4. leave hardirq context, then unmask: a signal between the two is deferred */
	barrier();
	atomic_store_explicit(&t->in_interrupt, 0, memory_order_relaxed);
	barrier();
	atomic_store_explicit(&t->irqs_off, 0, memory_order_relaxed);
	barrier();
}

/* Interrupts that arrived during the one that just ended (bounded: a source that keeps firing must not livelock us). */
static void irq_exit_pending(struct mm *mm, struct mm_task *t, int cpu, bool from_signal)
{
	struct mm_smp *smp = mm_smp(mm);
	struct mm_cpu *c = &mm->cpus[cpu];
	for (int i = 0; i < 4; i++) {
		if (!atomic_load_explicit(&c->irq_pending, memory_order_relaxed) ||
		    !atomic_exchange_explicit(&c->irq_pending, 0, memory_order_relaxed))
			return;
		mm_irq_handler_fn fn = atomic_load_explicit(&smp->irq_handler, memory_order_acquire);
		if (!fn) {
			mm_stat_inc(&c->stat.irqs_dropped);
			return;
		}
		irq_run(mm, t, cpu, MM_PP_NONE, from_signal, fn,
			atomic_load_explicit(&smp->irq_ctx, memory_order_relaxed));
	}
}

/* A preemption point with irqs enabled found an interrupt pending on its vCPU. */
void __mm_irq_deliver_pending(struct mm *mm, struct mm_task *t, int cpu, enum mm_pp at)
{
	struct mm_smp *smp = mm_smp(mm);
	struct mm_cpu *c = &mm->cpus[cpu];
	if (!atomic_exchange_explicit(&c->irq_pending, 0, memory_order_relaxed))
		return;
	mm_irq_handler_fn fn = atomic_load_explicit(&smp->irq_handler, memory_order_acquire);
	if (!fn) {
		mm_stat_inc(&c->stat.irqs_dropped);
		return;
	}
	irq_run(mm, t, cpu, at, false, fn, atomic_load_explicit(&smp->irq_ctx, memory_order_relaxed));
	irq_exit_pending(mm, t, cpu, false);
}

bool mm_raise_irq(struct mm *mm)
{
	if (!mm || !mm->cpus)
		return false;
	struct mm_smp *smp = mm_smp(mm);
	struct mm_task *t = get_current();
	int cpu = __mm_task_cpu(t, mm);
	if (cpu < 0)
		return false;
	mm_irq_handler_fn fn = atomic_load_explicit(&smp->irq_handler, memory_order_acquire);
	if (!fn || __task_irqs_disabled(t) || __task_in_interrupt(t)) {
		mm_stat_inc(&mm->cpus[cpu].stat.irqs_refused);
		return false;
	}
	irq_run(mm, t, cpu, t->cur_point, false, fn, atomic_load_explicit(&smp->irq_ctx, memory_order_relaxed));
	irq_exit_pending(mm, t, cpu, false);
	return true;
}

void mm_set_irq_pending(struct mm *mm)
{
	if (!mm || !mm->cpus)
		return;
	int cpu = __mm_task_cpu(get_current(), mm);
	if (cpu < 0)
		return;
	atomic_store_explicit(&mm->cpus[cpu].irq_pending, 1, memory_order_relaxed);
	mm_stat_inc(&mm->cpus[cpu].stat.irqs_deferred);
}

/* The interrupt entry of a signal handler: runs it now, leaves it pending, or drops it. */
bool mm_irq_from_signal(void)
{
	int saved_errno = errno;
	bool ran = false;
	struct mm_task *t = mm_current ? mm_current : &mm_default_task;
	struct mm *mm = atomic_load_explicit(&t->cur_mm, memory_order_relaxed);
	barrier();
	if (!mm) {
		atomic_fetch_add_explicit(&signal_unattached, 1, memory_order_relaxed);
		goto out;
	}
	int cpu = atomic_load_explicit(&t->cur_cpu, memory_order_relaxed);
	struct mm_smp *smp = mm_smp(mm);
	struct mm_cpu *c = &mm->cpus[cpu];
	mm_irq_handler_fn fn = atomic_load_explicit(&smp->irq_handler, memory_order_acquire);
	if (!fn) {
		mm_stat_inc(&c->stat.irqs_dropped);
		goto out;
	}
	if (__task_irqs_disabled(t) || __task_in_interrupt(t)) {
		atomic_store_explicit(&c->irq_pending, 1, memory_order_relaxed);
		mm_stat_inc(&c->stat.irqs_deferred);
		goto out;
	}
	irq_run(mm, t, cpu, MM_PP_NONE, true, fn, atomic_load_explicit(&smp->irq_ctx, memory_order_relaxed));
	irq_exit_pending(mm, t, cpu, true);
	ran = true;
out:
	errno = saved_errno;
	return ran;
}

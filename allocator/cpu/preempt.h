/* SPDX-License-Identifier: MIT */
/*
 * preempt.h - the task: preempt count, local interrupt state, hardirq
 * context, and the preemption points (include/linux/preempt.h and
 * irqflags.h, Linux 6.6, on x86-64 without PREEMPT_RT).  See cpu/vcpu.c for
 * the essay.
 *
 * Everything here works on the *current task*, get_current(): the task the
 * thread-local pointer mm_current names (NULL means the thread's implicit
 * task).  A fiber scheduler swaps mm_current on every switch, so no other
 * thread-local may cache task state.
 *
 * The fields a signal handler reads (irqs_off, in_interrupt, the vCPU cache)
 * are C11 atomics written with single relaxed stores and fenced against
 * the code around them with atomic_signal_fence(): a signal that lands in
 * the middle of local_irq_save() sees either "enabled" (and its interrupt
 * runs, completely, before the save) or "disabled" (and it is deferred),
 * never a torn state.  Relaxed atomics compile to plain moves.
 */
#ifndef MM_PREEMPT_H
#define MM_PREEMPT_H

#include <stdatomic.h>
#include <stdbool.h>

#include "debug.h"
#include "mm/cpu.h"

#ifndef barrier
#define barrier() atomic_signal_fence(memory_order_seq_cst)
#endif

/* Type-check that @x is an unsigned long (the kernel's typecheck()): a
 * comparison of distinct pointer types otherwise, an error with -Werror. */
#define typecheck_ulong(x) \
	({ unsigned long dummy_a_; __typeof__(x) dummy_b_; (void)(&dummy_a_ == &dummy_b_); 1; })

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	barrier();
#endif
}

#define MM_TASK_MAX_HELD 8          /* instances in which one task may hold a vCPU at once */

struct mm_task_held {
	struct mm *mm;                  /* an instance ... */
	int cpu;                        /* ... and the vCPU of it this task holds */
};

struct mm_task {
	int preempt_count;              /* preempt_disable() depth (the kernel's PREEMPT bits) */
	int lock_depth;                 /* spinlocks, local locks and mutexes held (lockdep's held-lock depth) */
	int migrate_disable;            /* migrate_disable() depth: no migration, may be preempted */
	atomic_int irqs_off;            /* 1: local interrupts disabled; one store, signal-visible */
	atomic_int in_interrupt;        /* hardirq nesting (0 or 1: interrupts do not nest) */
	_Atomic(struct mm *) cur_mm;    /* one-entry cache: the instance used last (NULL: none) ... */
	atomic_int cur_cpu;             /* ... and the vCPU held there; read only when cur_mm is set */
	int in_hook;                    /* > 0: do not call the scheduler hook (in it, or in a signal irq) */
	int in_wait;                    /* > 0: inside a wait loop or a forced migration */
	enum mm_pp cur_point;           /* the point whose hook runs now, for statistics (NONE outside) */
	int nr_held;                    /* entries used in held[] */
	struct mm_task_held held[MM_TASK_MAX_HELD]; /* every vCPU held, authoritative (the cache is not) */
	bool exit_armed;                /* implicit task: gives its vCPUs back at thread exit */
	const char *name;               /* for reports */
	int pid;                        /* SLUB's alloc/free tracks: from 1, set by mm_task_create() or an
					 * implicit task's first attach (arm_exit()), so no later path
					 * assigns it lazily */
	unsigned long nr_migrations;    /* times this task was moved to another vCPU */
	unsigned long nr_irqs;          /* interrupt handlers run on top of this task */
	unsigned int flags;             /* PF_MEMALLOC while it reclaims */
};

/*
 * PF_MEMALLOC (include/linux/sched.h): the task is reclaiming memory.  Its
 * own allocations (a shrinker's) may take the reserves below the min
 * watermark and never recurse into reclaim (6.6's __perform_reclaim()
 * brackets try_to_free_pages() with memalloc_noreclaim_save/restore).
 */
#define PF_MEMALLOC 0x00000800u

extern _Thread_local struct mm_task *mm_current;       /* the running task; NULL: mm_default_task */
extern _Thread_local struct mm_task mm_default_task;   /* each thread's implicit task */

/* The kernel's `current`. */
static __always_inline struct mm_task *get_current(void)
{
	struct mm_task *t = mm_current;
	if (unlikely(!t))
		t = mm_current = &mm_default_task;
	return t;
}

/* Transitional: code written against the first CPU model's thread-local
 * struct (mm_current_task.lock_depth++) keeps compiling. */
#define mm_current_task (*get_current())

/* ---------------------------------------------------------------- points */

void __mm_preempt_point(struct mm *mm, enum mm_pp id);
void __mm_preempt_point_current(enum mm_pp id);

/*
 * mm_preempt_point(mm, MM_PP_xxx): where the kernel could be preempted or
 * interrupted.  A plain build (no MM_TEST_HOOKS) compiles it to nothing at
 * all; a test build counts it and calls the instance's scheduler hook.
 * The implicit points (preempt_enable to 0, spin_unlock, local_unlock,
 * irqs re-enabled) have no instance argument: they go to the instance whose
 * vCPU the task used last (its vCPU cache), and to none if it holds none.
 */
#ifdef MM_TEST_HOOKS
#define mm_preempt_point(mm, id)       __mm_preempt_point((mm), (id))
#define mm_preempt_point_current(id)   __mm_preempt_point_current(id)
#else
#define mm_preempt_point(mm, id)       ((void)sizeof(mm), (void)sizeof(id))
#define mm_preempt_point_current(id)   ((void)sizeof(id))
#endif

/* ---------------------------------------------------------------- preemption */

static __always_inline int preempt_count(void)
{
	return get_current()->preempt_count;
}

static __always_inline bool __task_irqs_disabled(const struct mm_task *t)
{
	return atomic_load_explicit(&((struct mm_task *)t)->irqs_off, memory_order_relaxed) != 0;
}
static __always_inline bool __task_in_interrupt(const struct mm_task *t)
{
	return atomic_load_explicit(&((struct mm_task *)t)->in_interrupt, memory_order_relaxed) != 0;
}
/* preemptible(): the scheduler may take the vCPU away here. */
static __always_inline bool __task_preemptible(const struct mm_task *t)
{
	return t->preempt_count == 0 && !__task_irqs_disabled(t) && !__task_in_interrupt(t);
}

static __always_inline bool irqs_disabled(void) { return __task_irqs_disabled(get_current()); }
static __always_inline bool in_interrupt(void) { return __task_in_interrupt(get_current()); }
static __always_inline bool in_hardirq(void) { return __task_in_interrupt(get_current()); }
static __always_inline bool in_task(void) { return !__task_in_interrupt(get_current()); }
static __always_inline bool preemptible(void) { return __task_preemptible(get_current()); }

/* memalloc_noreclaim_save() / _restore() (include/linux/sched/mm.h): nestable, the old flag comes back. */
static __always_inline unsigned int memalloc_noreclaim_save(void)
{
	struct mm_task *t = get_current();
	unsigned int old = t->flags & PF_MEMALLOC;
	t->flags |= PF_MEMALLOC;
	return old;
}

static __always_inline void memalloc_noreclaim_restore(unsigned int old)
{
	struct mm_task *t = get_current();
	t->flags = (t->flags & ~PF_MEMALLOC) | old;
}

/*
 * might_sleep_msg(): at MM_DEBUG >= 2, CONFIG_DEBUG_ATOMIC_SLEEP's
 * "sleeping function called from invalid context": a sleeping lock
 * (cpus_read_lock, the hotplug lock, a mutex) taken where the task is not
 * preemptible - a spinlock or local lock held, interrupts off, in an
 * interrupt.  Below that level such a caller spins on its vCPU instead of
 * giving it up (cpu/vcpu.c, "Sleeping locks").
 */
#define might_sleep_msg(what)                                                  \
	do {                                                                   \
		if (MM_DEBUG >= 2 && unlikely(!preemptible()))                 \
			mm_bug(__FILE__, __LINE__, what);                      \
	} while (0)

/* preempt_disable(): pins the task to its vCPU until the matching enable. */
static __always_inline void preempt_disable(void)
{
	get_current()->preempt_count++;
	barrier();
}

/* preempt_enable() with the point id it reports when the count drops to 0
 * (the kernel's preempt_schedule() check in preempt_enable()). */
static __always_inline void __preempt_enable_at(enum mm_pp id)
{
	struct mm_task *t = get_current();
	barrier();
	VM_BUG_ON(t->preempt_count <= 0);      /* "preempt count underflow" */
	if (--t->preempt_count == 0)
		mm_preempt_point_current(id);
}
#define preempt_enable() __preempt_enable_at(MM_PP_PREEMPT_ENABLE)

/* preempt_enable_no_resched(): drop the count without a preemption point. */
static __always_inline void preempt_enable_no_resched(void)
{
	struct mm_task *t = get_current();
	barrier();
	VM_BUG_ON(t->preempt_count <= 0);
	t->preempt_count--;
}

/* migrate_disable() (Linux >= 5.11): may be preempted, never migrated. */
static __always_inline void migrate_disable(void)
{
	get_current()->migrate_disable++;
	barrier();
}
static __always_inline void migrate_enable(void)
{
	struct mm_task *t = get_current();
	barrier();
	VM_BUG_ON(t->migrate_disable <= 0);
	t->migrate_disable--;
}

/* ---------------------------------------------------------------- irq flags */

/*
 * The flags word of local_irq_save(): X86_EFLAGS_IF (0x200) set when
 * interrupts were enabled, plus a marker so that restoring a word that
 * never came from local_irq_save() is caught at MM_DEBUG >= 1.
 */
#define MM_IRQ_FLAGS_IF     0x200UL
#define MM_IRQ_FLAGS_MAGIC  0x6d6d0000UL

static __always_inline bool irqs_disabled_flags(unsigned long flags)
{
	return !(flags & MM_IRQ_FLAGS_IF);
}

/* arch_local_irq_save(): one relaxed store of irqs_off, fenced for signal handlers. */
static __always_inline unsigned long arch_local_irq_save(void)
{
	struct mm_task *t = get_current();
	int was_off = atomic_load_explicit(&t->irqs_off, memory_order_relaxed);
	atomic_store_explicit(&t->irqs_off, 1, memory_order_relaxed);
	barrier();
	return MM_IRQ_FLAGS_MAGIC | (was_off ? 0 : MM_IRQ_FLAGS_IF);
}

/* local_irq_restore() reporting @id when it re-enables interrupts (pending
 * interrupts are delivered at that point in test builds). */
static __always_inline void __local_irq_restore_at(unsigned long flags, enum mm_pp id)
{
	struct mm_task *t = get_current();
	VM_BUG_ON((flags & ~MM_IRQ_FLAGS_IF) != MM_IRQ_FLAGS_MAGIC);     /* not from local_irq_save */
	VM_WARN_ON(!atomic_load_explicit(&t->irqs_off, memory_order_relaxed)); /* bogus irq restore */
	barrier();
	if (irqs_disabled_flags(flags))
		return;
	atomic_store_explicit(&t->irqs_off, 0, memory_order_relaxed);
	barrier();
	mm_preempt_point_current(id);
}

/*
 * Unmask what arch_local_irq_save() masked with no preemption point: an
 * interrupt that came meanwhile waits for the next point (as irq_run()
 * unmasks).  For model-internal windows the kernel does not have; the
 * kernel's local_irq_restore() is below.
 */
static __always_inline void arch_local_irq_unmask(unsigned long flags)
{
	VM_BUG_ON((flags & ~MM_IRQ_FLAGS_IF) != MM_IRQ_FLAGS_MAGIC);
	barrier();
	if (!irqs_disabled_flags(flags))
		atomic_store_explicit(&get_current()->irqs_off, 0, memory_order_relaxed);
	barrier();
}

#define local_irq_save(flags) \
	do { (void)typecheck_ulong(flags); (flags) = arch_local_irq_save(); } while (0)
#define local_irq_restore(flags) \
	do { (void)typecheck_ulong(flags); __local_irq_restore_at((flags), MM_PP_IRQ_RESTORE); } while (0)

static __always_inline void local_irq_disable(void)
{
	atomic_store_explicit(&get_current()->irqs_off, 1, memory_order_relaxed);
	barrier();
}
static __always_inline void local_irq_enable(void)
{
	barrier();
	atomic_store_explicit(&get_current()->irqs_off, 0, memory_order_relaxed);
	barrier();
	mm_preempt_point_current(MM_PP_IRQ_RESTORE);
}

/* lockdep's context assertions, as VM_WARN_ON at MM_DEBUG >= 2. */
#define lockdep_assert_irqs_disabled()        VM_WARN_ON(!irqs_disabled())
#define lockdep_assert_irqs_enabled()         VM_WARN_ON(irqs_disabled())
#define lockdep_assert_preemption_disabled()  VM_WARN_ON(preemptible())
#define lockdep_assert_in_task()              VM_WARN_ON(in_interrupt())

#endif /* MM_PREEMPT_H */

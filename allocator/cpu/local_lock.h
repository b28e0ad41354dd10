/* SPDX-License-Identifier: MIT */
/*
 * local_lock.h - local_lock_t, as include/linux/local_lock_internal.h on
 * !PREEMPT_RT (Linux 5.8+): a per-CPU lock that is nothing but
 * preempt_disable() (local_lock) or local_irq_save() (local_lock_irqsave)
 * plus, under lockdep, an owner.  It protects per-CPU data against the
 * other tasks of its vCPU (preemption) and, in the irqsave form, against
 * interrupts on that vCPU.  Nothing protects it against another vCPU: only
 * the vCPU's holder may take it.
 *
 * The argument is the lock instance of *this* vCPU and is evaluated after
 * preemption (or interrupts) are disabled, as the kernel's this_cpu_ptr()
 * inside the macro:  local_lock(&this_cpu_ptr(mm, pagesets)->lock).
 *
 * At MM_DEBUG >= 2 the owner is recorded: taking a local lock that is
 * already held on the vCPU is a BUG - by the same task it is recursion,
 * which is exactly what an interrupt handler taking a lock the interrupted
 * code holds with interrupts enabled looks like (lockdep's "inconsistent
 * {HARDIRQ-ON-W} -> {IN-HARDIRQ-W} usage"); by another task it means the
 * vCPU's exclusivity was broken.
 */
#ifndef MM_LOCAL_LOCK_H
#define MM_LOCAL_LOCK_H

#include "cpu/preempt.h"

typedef struct {
#if MM_DEBUG >= 2
	struct mm_task *owner;          /* the task holding it; NULL when free */
#endif
} local_lock_t;

#define INIT_LOCAL_LOCK(lockname) {}

static inline void local_lock_init(local_lock_t *l)
{
#if MM_DEBUG >= 2
	l->owner = NULL;
#else
	(void)l;
#endif
}

static __always_inline void __local_lock_acquire(local_lock_t *l)
{
	struct mm_task *t = get_current();
#if MM_DEBUG >= 2
	if (unlikely(l->owner == t))
		mm_bug(__FILE__, __LINE__, "local_lock recursion on one vCPU "
		       "(an interrupt handler taking a local lock held with irqs enabled?)");
	if (unlikely(l->owner))
		mm_bug(__FILE__, __LINE__, "local_lock held by another task on this vCPU (exclusivity broken)");
	if (unlikely(__task_preemptible(t)))
		mm_bug(__FILE__, __LINE__, "local_lock taken while preemptible");
	l->owner = t;
#else
	(void)l;
#endif
	t->lock_depth++;
}

static __always_inline void __local_lock_release(local_lock_t *l)
{
	struct mm_task *t = get_current();
#if MM_DEBUG >= 2
	if (unlikely(l->owner != t))
		mm_bug(__FILE__, __LINE__, "local_unlock of a local lock this task does not hold");
	l->owner = NULL;
#else
	(void)l;
#endif
	VM_BUG_ON(t->lock_depth <= 0);
	t->lock_depth--;
}

/* local_lock(): preempt_disable(), then the lock of this vCPU. */
#define local_lock(lock)                                                \
	do {                                                            \
		preempt_disable();                                      \
		__local_lock_acquire(lock);                             \
	} while (0)

/* local_unlock(): release, then preempt_enable() - the LOCAL_UNLOCK point. */
#define local_unlock(lock)                                              \
	do {                                                            \
		__local_lock_release(lock);                             \
		__preempt_enable_at(MM_PP_LOCAL_UNLOCK);                \
	} while (0)

/* local_lock_irqsave(): local_irq_save() (which also pins the task), then the lock. */
#define local_lock_irqsave(lock, flags)                                 \
	do {                                                            \
		local_irq_save(flags);                                  \
		__local_lock_acquire(lock);                             \
	} while (0)

/* local_unlock_irqrestore(): release, then restore irqs - the LOCAL_UNLOCK point. */
#define local_unlock_irqrestore(lock, flags)                            \
	do {                                                            \
		(void)typecheck_ulong(flags);                           \
		__local_lock_release(lock);                             \
		__local_irq_restore_at((flags), MM_PP_LOCAL_UNLOCK);    \
	} while (0)

#define local_lock_irq(lock)                                            \
	do {                                                            \
		local_irq_disable();                                    \
		__local_lock_acquire(lock);                             \
	} while (0)

#define local_unlock_irq(lock)                                          \
	do {                                                            \
		__local_lock_release(lock);                             \
		local_irq_enable();                                     \
	} while (0)

#endif /* MM_LOCAL_LOCK_H */

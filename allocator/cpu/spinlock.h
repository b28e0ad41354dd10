/* SPDX-License-Identifier: MIT */
/*
 * spinlock.h - spinlock_t for the model (zone->lock, pcp->lock, list_lock
 * ...), as include/linux/spinlock.h on !PREEMPT_RT (Linux 6.6).
 *
 * The lock word is a C11 atomic with acquire/release, so TSan sees every
 * critical section.  spin_lock() disables preemption first (the holder
 * keeps its vCPU), spins through the wait hook while contended (the
 * deterministic scheduler switches fibers there), and spin_unlock() is a
 * preemption point.  spin_lock_irqsave() also disables the current task's
 * interrupts.  At MM_DEBUG >= 2 the lock records its owner, as
 * CONFIG_DEBUG_SPINLOCK does, and catches "spinlock recursion" (which is
 * also what an interrupt taking a lock its task holds with irqs enabled
 * looks like), "already unlocked" and "wrong owner".
 *
 * The *_raw variants (arch_spin_lock level) do no accounting at all: no
 * preempt count, no lock depth, no owner, no hooks.  The report lock uses
 * them so a report can be printed from anywhere.
 */
#ifndef MM_SPINLOCK_H
#define MM_SPINLOCK_H

#include <stdatomic.h>
#include <stdbool.h>

#include "cpu/preempt.h"

typedef struct {
	atomic_int locked;                 /* 0 free, 1 held */
#if MM_DEBUG >= 2
	_Atomic(struct mm_task *) owner;   /* holder when taken with spin_lock*(); NULL when raw */
#endif
} spinlock_t;

#define __SPIN_LOCK_UNLOCKED { 0 }

static inline void spin_lock_init(spinlock_t *l)
{
	atomic_init(&l->locked, 0);
#if MM_DEBUG >= 2
	atomic_init(&l->owner, NULL);
#endif
}

/* ---- raw: the lock word only ---- */

static inline bool spin_trylock_raw(spinlock_t *l)
{
	return atomic_load_explicit(&l->locked, memory_order_relaxed) == 0 &&
	       atomic_exchange_explicit(&l->locked, 1, memory_order_acquire) == 0;
}

static inline void spin_lock_raw(spinlock_t *l)
{
	while (!spin_trylock_raw(l))
		cpu_relax();
}

static inline void spin_unlock_raw(spinlock_t *l)
{
	atomic_store_explicit(&l->locked, 0, memory_order_release);
}

static inline bool spin_is_locked(spinlock_t *l)
{
	return atomic_load_explicit(&l->locked, memory_order_relaxed) != 0;
}

/* ---- accounted: preempt count, lock depth, owner, hooks ---- */

/* Contended spin_lock(): wait through the wait hook (cpu/vcpu.c). */
void __spin_lock_slowpath(spinlock_t *l);

static __always_inline void __spin_acquired(spinlock_t *l)
{
	struct mm_task *t = get_current();
	t->lock_depth++;
#if MM_DEBUG >= 2
	atomic_store_explicit(&l->owner, t, memory_order_relaxed);
#else
	(void)l;
#endif
}

static __always_inline void __spin_release(spinlock_t *l)
{
	struct mm_task *t = get_current();
#if MM_DEBUG >= 2
	struct mm_task *owner = atomic_load_explicit(&l->owner, memory_order_relaxed);
	if (unlikely(!spin_is_locked(l)))
		mm_bug(__FILE__, __LINE__, "spinlock already unlocked");
	if (unlikely(owner && owner != t))
		mm_bug(__FILE__, __LINE__, "spinlock wrong owner");
	atomic_store_explicit(&l->owner, NULL, memory_order_relaxed);
#else
	(void)l;
#endif
	VM_BUG_ON(t->lock_depth <= 0);
	t->lock_depth--;
}

/* spin_lock(): preempt_disable(), then take the lock (do_raw_spin_lock). */
static __always_inline void spin_lock(spinlock_t *l)
{
	preempt_disable();
	if (unlikely(!spin_trylock_raw(l)))
		__spin_lock_slowpath(l);
	__spin_acquired(l);
}

/* spin_trylock(): 1 and the lock held, or 0 with preemption as it was. */
static __always_inline int spin_trylock(spinlock_t *l)
{
	preempt_disable();
	if (spin_trylock_raw(l)) {
		__spin_acquired(l);
		return 1;
	}
	preempt_enable();
	return 0;
}

/* spin_unlock(): release, then preempt_enable() - a preemption point. */
static __always_inline void spin_unlock(spinlock_t *l)
{
	__spin_release(l);
	spin_unlock_raw(l);
	__preempt_enable_at(MM_PP_SPIN_UNLOCK);
}

/* spin_lock_irqsave(): local_irq_save(), then spin_lock(). */
#define spin_lock_irqsave(l, flags)                                    \
	do {                                                           \
		local_irq_save(flags);                                 \
		spin_lock(l);                                          \
	} while (0)

/* spin_unlock_irqrestore(): release, restore irqs (a point when that
 * enables them, still preempt-disabled), then preempt_enable (a point). */
#define spin_unlock_irqrestore(l, flags)                               \
	do {                                                           \
		spinlock_t *l_ = (l);                                  \
		__spin_release(l_);                                    \
		spin_unlock_raw(l_);                                   \
		local_irq_restore(flags);                              \
		__preempt_enable_at(MM_PP_SPIN_UNLOCK);                \
	} while (0)

#define spin_trylock_irqsave(l, flags)                                 \
	({                                                             \
		local_irq_save(flags);                                 \
		spin_trylock(l) ? 1 : (__local_irq_restore_at((flags), MM_PP_IRQ_RESTORE), 0); \
	})

static __always_inline void spin_lock_irq(spinlock_t *l)
{
	local_irq_disable();
	spin_lock(l);
}
static __always_inline void spin_unlock_irq(spinlock_t *l)
{
	__spin_release(l);
	spin_unlock_raw(l);
	local_irq_enable();
	__preempt_enable_at(MM_PP_SPIN_UNLOCK);
}

/* lockdep_assert_held(): at MM_DEBUG >= 2, held (by this task if taken with spin_lock). */
#if MM_DEBUG >= 2
#define lockdep_assert_held(l)                                                  \
	do {                                                                    \
		spinlock_t *la_ = (l);                                          \
		struct mm_task *lo_ = atomic_load_explicit(&la_->owner, memory_order_relaxed); \
		if (unlikely(!spin_is_locked(la_) || (lo_ && lo_ != get_current()))) \
			mm_bug(__FILE__, __LINE__, "lockdep_assert_held(" #l ")"); \
	} while (0)
#else
#define lockdep_assert_held(l) ((void)sizeof(l))
#endif

#endif /* MM_SPINLOCK_H */

/* SPDX-License-Identifier: MIT */
/*
 * mutex.h - struct mutex for the model (slab_mutex), as
 * include/linux/mutex.h on !PREEMPT_RT (Linux 6.6): a sleeping lock.
 *
 * What makes it a mutex rather than a spinlock is what a waiter does with
 * its CPU.  mutex_lock() does not disable preemption: the holder may be
 * preempted and migrated inside the critical section, and may itself take
 * other sleeping locks (cpus_read_lock) or wait for a vCPU.  A contended
 * mutex_lock() sleeps: the task gives its vCPUs up, waits through the wait
 * hook (MM_WAIT_MUTEX: the deterministic scheduler switches fibers there),
 * and once the mutex is handed to it takes a vCPU back - the same one if
 * free, else another (counted as a migration); see "Sleeping locks" in
 * cpu/vcpu.c.  So tasks blocked on a mutex never keep a vCPU that the
 * holder (or anybody else) needs to make progress, which a spinning waiter
 * did (the CPU model's known deadlocks with hotplug).
 *
 * Context: only where the kernel could sleep (preemptible, not in an
 * interrupt, no spinlock or local lock held); at MM_DEBUG >= 2
 * mutex_lock() checks it (might_sleep), recursion, and that unlock comes
 * from the owner (CONFIG_DEBUG_MUTEXES).  Below that level a caller in a
 * non-sleeping context spins on its vCPU.  mutex_unlock() is the
 * MUTEX_UNLOCK preemption point.
 *
 * The lock word is a C11 atomic with acquire/release, so TSan sees every
 * critical section; the owner is kept at every level (the kernel's
 * mutex->owner), read only by checks and reports.
 */
#ifndef MM_MUTEX_H
#define MM_MUTEX_H

#include <stdatomic.h>
#include <stdbool.h>

#include "cpu/preempt.h"

struct mutex {
	atomic_int locked;                 /* 0 free, 1 held */
	_Atomic(struct mm_task *) owner;   /* the holder; NULL when free */
};

#define __MUTEX_INITIALIZER { 0, NULL }

static inline void mutex_init(struct mutex *m)
{
	atomic_init(&m->locked, 0);
	atomic_init(&m->owner, NULL);
}

static inline bool mutex_is_locked(struct mutex *m)
{
	return atomic_load_explicit(&m->locked, memory_order_relaxed) != 0;
}

/* The lock word only: test, then exchange (no cache-line ping-pong while held). */
static inline bool __mutex_trylock_raw(struct mutex *m)
{
	return atomic_load_explicit(&m->locked, memory_order_relaxed) == 0 &&
	       atomic_exchange_explicit(&m->locked, 1, memory_order_acquire) == 0;
}

/* Contended mutex_lock(): sleep until the mutex is ours (cpu/vcpu.c). */
void __mutex_lock_slowpath(struct mutex *m);

static __always_inline void __mutex_acquired(struct mutex *m)
{
	struct mm_task *t = get_current();
	t->lock_depth++;
	atomic_store_explicit(&m->owner, t, memory_order_relaxed);
}

/* mutex_lock(): might_sleep(), then the lock - sleeping without a vCPU while contended. */
static __always_inline void mutex_lock(struct mutex *m)
{
	might_sleep_msg("mutex_lock() while not preemptible (sleeping function called from invalid context)");
	if (unlikely(!__mutex_trylock_raw(m)))
		__mutex_lock_slowpath(m);
	__mutex_acquired(m);
}

/* mutex_trylock(): 1 and the mutex held, or 0; never sleeps. */
static __always_inline int mutex_trylock(struct mutex *m)
{
	if (!__mutex_trylock_raw(m))
		return 0;
	__mutex_acquired(m);
	return 1;
}

/* mutex_unlock(): release; then, where preemptible, the MUTEX_UNLOCK point. */
static __always_inline void mutex_unlock(struct mutex *m)
{
	struct mm_task *t = get_current();
#if MM_DEBUG >= 2
	if (unlikely(!mutex_is_locked(m)))
		mm_bug(__FILE__, __LINE__, "mutex_unlock of an unlocked mutex");
	if (unlikely(atomic_load_explicit(&m->owner, memory_order_relaxed) != t))
		mm_bug(__FILE__, __LINE__, "mutex_unlock by a task that does not own the mutex");
#endif
	atomic_store_explicit(&m->owner, NULL, memory_order_relaxed);
	VM_BUG_ON(t->lock_depth <= 0);
	t->lock_depth--;
	atomic_store_explicit(&m->locked, 0, memory_order_release);
	if (t->preempt_count == 0)
		mm_preempt_point_current(MM_PP_MUTEX_UNLOCK);
}

/* lockdep_assert_held() for a mutex: at MM_DEBUG >= 2, held by this task. */
#if MM_DEBUG >= 2
#define lockdep_assert_mutex_held(m)                                            \
	do {                                                                    \
		struct mutex *lm_ = (m);                                        \
		if (unlikely(atomic_load_explicit(&lm_->owner, memory_order_relaxed) != get_current())) \
			mm_bug(__FILE__, __LINE__, "lockdep_assert_held(" #m ")"); \
	} while (0)
#else
#define lockdep_assert_mutex_held(m) ((void)sizeof(m))
#endif

#endif /* MM_MUTEX_H */

/* SPDX-License-Identifier: MIT */
/*
 * spinlock.h - spinlock_t for the model (zone->lock, list_lock ...).
 *
 * A test-and-test-and-set lock on a C11 atomic, so TSan sees the
 * acquire/release edges.  spin_lock_irqsave() also disables the current
 * vCPU's interrupts (cpu/vcpu.h), as the kernel's does.
 */
#ifndef MM_SPINLOCK_H
#define MM_SPINLOCK_H

#include <stdatomic.h>
#include <stdbool.h>

typedef struct {
	atomic_int locked;   /* 0 free, 1 held */
} spinlock_t;

#define __SPIN_LOCK_UNLOCKED { 0 }

static inline void spin_lock_init(spinlock_t *l)
{
	atomic_init(&l->locked, 0);
}

static inline bool spin_trylock_raw(spinlock_t *l)
{
	return atomic_load_explicit(&l->locked, memory_order_relaxed) == 0 &&
	       atomic_exchange_explicit(&l->locked, 1, memory_order_acquire) == 0;
}

static inline void spin_lock_raw(spinlock_t *l)
{
	while (!spin_trylock_raw(l))
		__builtin_ia32_pause();
}

static inline void spin_unlock_raw(spinlock_t *l)
{
	atomic_store_explicit(&l->locked, 0, memory_order_release);
}

static inline bool spin_is_locked(spinlock_t *l)
{
	return atomic_load_explicit(&l->locked, memory_order_relaxed) != 0;
}

#endif /* MM_SPINLOCK_H */

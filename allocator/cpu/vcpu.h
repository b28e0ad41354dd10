/* SPDX-License-Identifier: MIT */
/*
 * vcpu.h - the CPU model: tasks, vCPUs, preemption and interrupts.
 *
 * (Minimal first version: a per-thread preempt count and irq flag so the
 * page allocator's locking reads like the kernel's.  cpu/vcpu.c grows the
 * full model: exclusive vCPUs, preemption points, interrupt delivery.)
 */
#ifndef MM_VCPU_H
#define MM_VCPU_H

#include <stddef.h>

#include "cpu/spinlock.h"

struct mm_task_state {
	int preempt_count;      /* preempt_disable depth */
	int irqs_disabled;      /* local_irq_save depth */
	int lock_depth;         /* spinlocks held */
};
extern _Thread_local struct mm_task_state mm_current_task;

static inline void preempt_disable(void) { mm_current_task.preempt_count++; }
static inline void preempt_enable(void) { mm_current_task.preempt_count--; }

#define local_irq_save(flags) \
	do { (flags) = (unsigned long)mm_current_task.irqs_disabled++; } while (0)
#define local_irq_restore(flags) \
	do { mm_current_task.irqs_disabled = (int)(flags); } while (0)

static inline void spin_lock(spinlock_t *l)
{
	preempt_disable();
	spin_lock_raw(l);
	mm_current_task.lock_depth++;
}
static inline void spin_unlock(spinlock_t *l)
{
	mm_current_task.lock_depth--;
	spin_unlock_raw(l);
	preempt_enable();
}
#define spin_lock_irqsave(l, flags) do { local_irq_save(flags); spin_lock(l); } while (0)
#define spin_unlock_irqrestore(l, flags) do { spin_unlock(l); local_irq_restore(flags); } while (0)

struct mm;
/* Called by mm.c: allocate / free / reinitialise mm->cpus. */
int mm_cpus_setup(struct mm *mm, char *err, size_t errlen);
void mm_cpus_teardown(struct mm *mm);
void mm_cpus_reset(struct mm *mm);

#endif /* MM_VCPU_H */

/* SPDX-License-Identifier: MIT */
/*
 * vcpu.h - the CPU model as the allocator sees it: vCPUs of an instance,
 * smp_processor_id() and the per-CPU accessors, hotplug iteration and
 * cpus_read_lock().  Tasks, preemption and irq flags are in cpu/preempt.h,
 * spinlocks in cpu/spinlock.h, local locks in cpu/local_lock.h, the
 * sleeping mutex in cpu/mutex.h; the public
 * API (attach, hooks, interrupts, hotplug, statistics) in mm/cpu.h.
 * cpu/vcpu.c opens with the essay.
 *
 * Recipes (kernel code ports nearly line by line; per-CPU data is a plain
 * array [nr_cpus] hung off the instance):
 *
 *   pcp, 6.0+ spinlock design (pcp_spin_trylock):
 *	preempt_disable();
 *	pcp = this_cpu_ptr(mm, zone->per_cpu_pageset);
 *	if (!spin_trylock(&pcp->lock)) { preempt_enable(); return NULL; }
 *	...                                   (mm_preempt_point(mm, MM_PP_PCP_LOCKED))
 *	spin_unlock(&pcp->lock); preempt_enable();
 *   pcp, 5.14 local_lock design:
 *	local_lock_irqsave(&this_cpu_ptr(mm, pagesets)->lock, flags);
 *	pcp = this_cpu_ptr(mm, zone->per_cpu_pageset); ...
 *	local_unlock_irqrestore(&this_cpu_ptr(mm, pagesets)->lock, flags);
 *   SLUB fast path (preemptible, revalidated by the tid):
 *	c = raw_cpu_ptr(mm, s->cpu_slab); tid = READ_ONCE(c->tid);
 *	mm_preempt_point(mm, MM_PP_TID_READ); ... object = c->freelist; ...
 *	mm_preempt_point(mm, MM_PP_BEFORE_CMPXCHG);
 *	if (!cmpxchg16b(&raw_cpu_ptr(mm, s->cpu_slab)->freelist_tid, ...)) goto redo;
 *	(this_cpu_cmpxchg: the pair of the vCPU the task runs on at the
 *	cmpxchg - the kernel's %gs-relative operand - not the c read above,
 *	which after a migration is another task's vCPU; a real locked cmpxchg)
 *	mm_preempt_point(mm, MM_PP_AFTER_CMPXCHG);
 *   cpu-dead callbacks, registered once at setup (SLUB's first, then the pcp's,
 *   in the order of the kernel's enum cpuhp_state):
 *	mm_cpuhp_register(mm, "mm/page_alloc:pcp", page_alloc_cpu_online, page_alloc_cpu_dead);
 *	(dead callbacks run in reverse registration order, holding the vCPU)
 *   draining every vCPU: cpus_read_lock(mm); for_each_online_cpu(cpu, mm)
 *	drain(per_cpu_ptr(..., cpu)) under the data's own lock; cpus_read_unlock(mm).
 */
#ifndef MM_VCPU_H
#define MM_VCPU_H

#include <stddef.h>

#include "types.h"
#include "cpu/preempt.h"
#include "cpu/spinlock.h"
#include "cpu/local_lock.h"
#include "cpu/mutex.h"
#include "mm/cpu.h"

/* Event counters of one vCPU (the public struct mm_cpu_stats, as atomics). */
struct mm_cpu_counters {
	atomic_ulong attaches;              /* a task took the vCPU */
	atomic_ulong attach_waits;          /* ... after waiting */
	atomic_ulong migrations_in;         /* tasks migrated onto it */
	atomic_ulong migrations_out;        /* tasks migrated away */
	atomic_ulong migrations_refused;    /* mm_migrate_current() refused on it */
	atomic_ulong irqs_delivered;        /* handler runs */
	atomic_ulong irqs_from_signal;      /* ... of which from a signal handler */
	atomic_ulong irqs_deferred;         /* arrived masked: left pending */
	atomic_ulong irqs_refused;          /* mm_raise_irq() refused */
	atomic_ulong irqs_dropped;          /* no handler, or pending when it went offline */
	atomic_ulong offlines, onlines;     /* hotplug transitions */
	atomic_ulong sleeps;                /* a task gave it up to sleep on a lock */
	atomic_ulong pp_hit[MM_PP_NR];      /* preemption points reached */
	atomic_ulong pp_migrate[MM_PP_NR];  /* migrations away from it at each point */
	atomic_ulong pp_irq[MM_PP_NR];      /* interrupts run at each point */
};

/*
 * One vCPU.  holder is the whole exclusivity protocol: a task owns the vCPU
 * (and its per-CPU data) from its acquire CAS of holder to its release
 * store of NULL.  online changes only while a hotplug operation holds it.
 */
struct mm_cpu {
	_Atomic(struct mm_task *) holder;   /* the task running on this vCPU; NULL: free */
	atomic_bool online;                 /* attachable; changed only by its hotplug holder */
	atomic_bool dying;                  /* offline requested: the holder leaves at its next preemptible point */
	atomic_int irq_pending;             /* an interrupt arrived while masked (coalesced, like a real one) */
	int id;                             /* its number */
	struct mm_cpu_counters stat;        /* written by whoever holds it (and its interrupts) */
} __attribute__((aligned(64)));

#define MM_CPUHP_MAX 16

struct mm_cpuhp_state {
	const char *name;                   /* for reports; NULL: slot free */
	mm_cpuhp_fn online;                 /* startup, in registration order */
	mm_cpuhp_fn dead;                   /* teardown, in reverse order */
};

/*
 * The CPU model of one instance.  mm->cpus points at cpu[0]; the rest is
 * found with mm_smp().  Hooks are set while quiescent (each field is an
 * atomic, the pair is not).
 */
struct mm_smp {
	struct mm *mm;                            /* the instance */
	int nr_cpus;                              /* possible vCPUs, mm->cfg.nr_cpus */
	_Atomic(mm_sched_hook_fn) sched_hook;     /* called at every preemption point (test builds) */
	_Atomic(void *) sched_ctx;
	_Atomic(mm_irq_handler_fn) irq_handler;   /* the "device" interrupt */
	_Atomic(void *) irq_ctx;
	atomic_int hotplug;                       /* cpus_read_lock(): readers | CPUS_WRITER */
	int nr_cpuhp;                             /* slots used in cpuhp[]; under the write lock */
	struct mm_cpuhp_state cpuhp[MM_CPUHP_MAX];
	struct mm_task hotplug_task;              /* the holder of a vCPU during its hotplug callbacks */
	struct mm_cpu_counters unattached;        /* points reached by tasks holding no vCPU here */
	struct mm_cpu cpu[];                      /* [nr_cpus] */
};

static inline struct mm_smp *mm_smp(const struct mm *mm)
{
	return (struct mm_smp *)((char *)mm->cpus - offsetof(struct mm_smp, cpu));
}

static inline int mm_nr_cpus(const struct mm *mm)
{
	return (int)mm->cfg.nr_cpus;
}

/* cpu_online(): a racy snapshot unless the caller holds cpus_read_lock(). */
static inline bool cpu_online(const struct mm *mm, int cpu)
{
	return atomic_load_explicit(&mm->cpus[cpu].online, memory_order_relaxed);
}

#define for_each_possible_cpu(cpu, mm) \
	for ((cpu) = 0; (cpu) < mm_nr_cpus(mm); (cpu)++)
#define for_each_online_cpu(cpu, mm) \
	for_each_possible_cpu(cpu, mm) if (!cpu_online((mm), (cpu))) {} else

/* ---------------------------------------------------------------- this CPU */

int __mm_this_cpu_slow(struct mm *mm);
void __debug_smp_processor_id(void) __attribute__((noreturn));

/*
 * raw_smp_processor_id(mm): the vCPU of @mm the current task runs on,
 * attaching implicitly to the first free online one if it holds none (and
 * waiting if all are held).  No preemption check: the answer may be stale
 * by the next preemption point, as the kernel's raw_ variant.
 */
static __always_inline int raw_smp_processor_id(struct mm *mm)
{
	struct mm_task *t = get_current();
	if (likely(atomic_load_explicit(&t->cur_mm, memory_order_relaxed) == mm))
		return atomic_load_explicit(&t->cur_cpu, memory_order_relaxed);
	return __mm_this_cpu_slow(mm);
}

/* smp_processor_id(mm): the same, and at MM_DEBUG >= 2 CONFIG_DEBUG_PREEMPT's
 * check that the caller cannot be migrated (check_preemption_disabled()). */
static __always_inline int smp_processor_id(struct mm *mm)
{
	if (MM_DEBUG >= 2) {
		struct mm_task *t = get_current();
		if (unlikely(__task_preemptible(t) && !t->migrate_disable))
			__debug_smp_processor_id();
	}
	return raw_smp_processor_id(mm);
}

/* The kernel's per-CPU pointers, over a plain array [nr_cpus]. */
#define per_cpu_ptr(ptr, cpu)   (&(ptr)[(cpu)])
#define per_cpu(var, cpu)       (*per_cpu_ptr(var, cpu))
#define this_cpu_ptr(mm, ptr)   per_cpu_ptr((ptr), smp_processor_id(mm))
#define raw_cpu_ptr(mm, ptr)    per_cpu_ptr((ptr), raw_smp_processor_id(mm))
#define get_cpu(mm)             ({ preempt_disable(); smp_processor_id(mm); })
#define put_cpu()               preempt_enable()

/* ---------------------------------------------------------------- waiting */

/* Wait once: leave dying vCPUs if preemptible, then the thread's wait hook (or cpu_relax). */
void __mm_cpu_wait(enum mm_wait_reason why, const void *what);

/*
 * Sleeping on a lock (cpu/vcpu.c, "Sleeping locks"): the task calls
 * schedule().  __mm_sleep_begin() gives every vCPU the task holds up if it
 * may sleep (preemptible, not already inside a wait), __mm_sleep_end()
 * takes them back - each a migration if it lands elsewhere.  Between them
 * the caller waits with __mm_cpu_wait() until it has the lock:
 *
 *	if (!trylock(l)) {
 *		struct mm_sleep sl;
 *		__mm_sleep_begin(&sl);
 *		do __mm_cpu_wait(MM_WAIT_xxx, l); while (!trylock(l));
 *		__mm_sleep_end(&sl);
 *	}
 *
 * The lock is taken before the vCPU: the kernel's handoff to the woken
 * waiter (mutex handoff, percpu_rwsem's wake function), so a woken task
 * never has to go back to sleep.
 */
struct mm_sleep {
	int nr;                               /* vCPUs given up; 0: none (spins on them, if any) */
	bool pinned;                          /* migrate_disable(): back to the same vCPUs */
	enum mm_pp at;                        /* the point being served (statistics), as __mm_migrate */
	struct mm *cached;                    /* the vCPU cache's instance before */
	struct mm_task_held held[MM_TASK_MAX_HELD]; /* what was given up, in the task's order */
};
void __mm_sleep_begin(struct mm_sleep *sl);
void __mm_sleep_end(struct mm_sleep *sl);

/* ---------------------------------------------------------------- hotplug */

/* cpus_read_lock(): no vCPU goes on- or offline until the unlock.  Sleeps
 * while a hotplug operation runs (without its vCPU, see mm_sleep above):
 * callers must be preemptible, and hotplug callbacks must not take it. */
void cpus_read_lock(struct mm *mm);
void cpus_read_unlock(struct mm *mm);

/* ---------------------------------------------------------------- interrupts */

/* Deliver an interrupt left pending on @cpu, at point @at (cpu/irq.c). */
void __mm_irq_deliver_pending(struct mm *mm, struct mm_task *t, int cpu, enum mm_pp at);

/* ---------------------------------------------------------------- internal to cpu/ */

int __mm_task_cpu(struct mm_task *t, struct mm *mm);       /* held vCPU of @mm, no attach; -1 */
void __mm_task_cache_set(struct mm_task *t, struct mm *mm, int cpu);
int __mm_migrate(struct mm *mm, struct mm_task *t, int new_cpu);
static inline void mm_stat_inc(atomic_ulong *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* Called by mm.c: allocate / free / reinitialise the CPU model of @mm. */
int mm_cpus_setup(struct mm *mm, char *err, size_t errlen);
void mm_cpus_teardown(struct mm *mm);
void mm_cpus_reset(struct mm *mm);

#endif /* MM_VCPU_H */

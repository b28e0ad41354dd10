/* SPDX-License-Identifier: MIT */
/*
 * cpu.h - the public interface of the CPU model: tasks, vCPUs, preemption
 * points, interrupts and CPU hotplug (DESIGN.md, "CPUs, preemption and
 * interrupts").  The allocator's own view (preempt_disable, spin_lock,
 * local_lock, this_cpu_ptr ...) is in allocator/cpu/vcpu.h; allocator/cpu/
 * vcpu.c opens with the essay on what protects what.
 *
 * In one paragraph: a *task* is what runs (each OS thread has an implicit
 * one; the deterministic scheduler makes one per fiber).  A task runs "on"
 * a vCPU of an instance by holding it: vCPUs are exclusive, and only the
 * holder touches that vCPU's per-CPU data without locks.  Per-CPU fast paths
 * attach implicitly, so single-threaded callers never call mm_cpu_attach().
 * *Preemption points* sit where the kernel could be preempted; in test
 * builds (MM_TEST_HOOKS) they call a per-instance scheduler hook, which may
 * migrate the task to another vCPU (only where it is preemptible) or raise
 * an interrupt (only where interrupts are enabled).
 *
 * Lifetime: mm_destroy() and mm_reset() detach the calling thread's task;
 * every other task must mm_cpu_detach() (or its thread exit) before them -
 * a vCPU still held by another task is a BUG at MM_DEBUG >= 1.  A thread's
 * implicit task gives back its vCPUs when the thread exits; tasks made with
 * mm_task_create() must detach before mm_task_destroy().  A task that holds
 * a vCPU and blocks outside the allocator (a barrier, a sleep) keeps it:
 * others wait for it, and so does mm_cpu_offline() (detach first).  Inside
 * the model, a task that blocks on a sleeping lock (cpus_read_lock(), the
 * hotplug lock, struct mutex such as slab_mutex) where the kernel could
 * sleep gives its vCPUs up while it waits, as schedule() does, and takes
 * them back afterwards: the same one if free, else another (a migration,
 * counted), and always the same one while migration is disabled - unless
 * it went offline meanwhile.
 *
 * Conventions: functions returning int give a vCPU number (>= 0) or 0 on
 * success and a negative errno on failure; none of them aborts on bad
 * input, except misuse the kernel would also BUG on (detaching while
 * preemption is disabled, ...), which aborts at MM_DEBUG >= 1.
 */
#ifndef MM_CPU_H
#define MM_CPU_H

#include <stdbool.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mm;
struct mm_task;

/* "Any vCPU": for mm_migrate_current(). */
#define MM_CPU_ANY (-1)

/*
 * Preemption point ids.  To add one, add a line here: X(NAME, "name").
 * NONE is "not at a point" (a direct call of mm_migrate_current() or
 * mm_raise_irq() outside the hook), so per-point statistics add up.
 */
#define MM_PREEMPT_POINTS(X)                                                          \
	X(NONE,             "none")              /* outside any point */             \
	X(PREEMPT_ENABLE,   "preempt_enable")    /* preempt count back to 0 */       \
	X(SPIN_UNLOCK,      "spin_unlock")       /* spin_unlock*() left the count 0 */ \
	X(MUTEX_UNLOCK,     "mutex_unlock")      /* mutex_unlock() (slab_mutex), preemptible */ \
	X(LOCAL_UNLOCK,     "local_unlock")      /* local_unlock*() */               \
	X(IRQ_RESTORE,      "irq_restore")       /* local_irq_restore/enable enabled irqs */ \
	X(TID_READ,         "tid_read")          /* SLUB: between reading tid and freelist */ \
	X(BEFORE_CMPXCHG,   "before_cmpxchg")    /* SLUB: just before this_cpu_cmpxchg_double */ \
	X(AFTER_CMPXCHG,    "after_cmpxchg")     /* SLUB: just after it */           \
	X(SLAB_SLOWPATH,    "slab_slowpath")     /* SLUB: entering ___slab_alloc / __slab_free */ \
	X(SLAB_CMPXCHG,     "slab_cmpxchg")      /* SLUB: before a cmpxchg on a slab's {freelist, counters} */ \
	X(PCP_BEFORE_LOCK,  "pcp_before_lock")   /* pcp: vCPU chosen, lock not yet taken */ \
	X(PCP_LOCKED,       "pcp_locked")        /* pcp: inside the pcp critical section */ \
	X(PCP_REFILL,       "pcp_refill")        /* pcp: between lists and rmqueue_bulk */ \
	X(PCP_DRAIN,        "pcp_drain")         /* pcp: inside a (remote) drain */  \
	X(BULK,             "bulk")              /* bulk paths, between elements */  \
	X(USER,             "user")              /* tests, harnesses */

enum mm_pp {
#define MM_PP_ENUM_(name, str) MM_PP_##name,
	MM_PREEMPT_POINTS(MM_PP_ENUM_)
#undef MM_PP_ENUM_
	MM_PP_NR
};

/* The name of a point id ("spin_unlock"), "?" if out of range. */
const char *mm_pp_name(enum mm_pp id);

/* ---- attaching tasks to vCPUs (cpu/vcpu.c) ---- */

/*
 * Hold vCPU @cpu of @mm: waits (through the wait hook) until it is free and
 * online.  If the task already holds another vCPU of @mm this is a
 * migration (legal only where preemptible, else -EPERM).  Returns @cpu,
 * -EINVAL for a bad number, -ENOSPC if the task already holds vCPUs in
 * MM_TASK_MAX_HELD instances.
 */
int mm_cpu_attach(struct mm *mm, int cpu);
/* Hold the first free online vCPU of @mm (waiting if none is free); the one held already if any. */
int mm_cpu_attach_any(struct mm *mm);
/* Give up the vCPU held in @mm.  Must be preemptible.  0, or -ENOENT if none was held. */
int mm_cpu_detach(struct mm *mm);
/* The vCPU the current task holds in @mm without attaching; -1 if none. */
int mm_cpu_current(struct mm *mm);
/* The vCPU of @mm the current task runs on, attaching implicitly (raw_smp_processor_id). */
int mm_this_cpu(struct mm *mm);
/* Who holds @cpu now (a racy snapshot; NULL if free). */
const struct mm_task *mm_cpu_holder(struct mm *mm, int cpu);

/*
 * Tasks.  Every OS thread has an implicit task, which gives back whatever
 * vCPUs it holds when the thread exits.  A fiber scheduler creates one per
 * fiber and makes it current on each switch.
 */
struct mm_task *mm_task_create(const char *name);
void mm_task_destroy(struct mm_task *t);              /* must hold no vCPU */
struct mm_task *mm_task_current(void);
/* Make @next the running task of this thread (NULL: the thread's own); returns the previous one. */
struct mm_task *mm_task_switch(struct mm_task *next);

/* State of the current task, as the kernel's predicates. */
bool mm_preemptible(void);          /* preempt count 0, irqs on, not in an interrupt */
bool mm_irqs_disabled(void);
bool mm_in_interrupt(void);

/* ---- preemption points and the scheduler hook (cpu/vcpu.c) ---- */

/*
 * Called at every preemption point of @mm reached by a task (test builds
 * only).  The hook may call mm_migrate_current() and mm_raise_irq(); it is
 * not re-entered from inside itself, except from the handler of an
 * interrupt it raised (where both calls are refused), and never from an
 * interrupt delivered by a signal.  Set it while no other thread runs
 * points of @mm.
 */
typedef void (*mm_sched_hook_fn)(struct mm *mm, enum mm_pp point, void *ctx);
void mm_set_sched_hook(struct mm *mm, mm_sched_hook_fn fn, void *ctx);

/*
 * Move the current task to vCPU @new_cpu of @mm (MM_CPU_ANY: any free
 * online one, preferring another), waiting for it if it is held.  Models
 * the scheduler moving a preempted task.  Legal only where preemptible and
 * migration is not disabled: otherwise -EPERM (and counted as refused).
 * Returns the vCPU now held, -ENOENT if the task held none, -EINVAL.
 */
int mm_migrate_current(struct mm *mm, int new_cpu);

/*
 * What a task does while it must wait (a contended spinlock, a busy vCPU,
 * the hotplug lock, a mutex).  Per OS thread: the deterministic scheduler
 * switches fibers here.  Default (NULL): cpu_relax().  A task waiting for
 * a sleeping lock (CPUS_LOCK, MUTEX) holds no vCPU during the calls,
 * unless it waits where the kernel could not sleep.
 */
enum mm_wait_reason {
	MM_WAIT_SPIN,                   /* spin_lock on a held lock; @what is the lock */
	MM_WAIT_VCPU,                   /* attach: the vCPU is held or offline; @what is its struct */
	MM_WAIT_HOTPLUG,                /* offline: waiting for the holder to leave */
	MM_WAIT_CPUS_LOCK,              /* cpus_read_lock / the hotplug lock; @what is the lock word */
	MM_WAIT_MUTEX,                  /* mutex_lock on a held mutex (slab_mutex); @what is the mutex */
};
typedef void (*mm_wait_fn)(enum mm_wait_reason why, const void *what, void *ctx);
void mm_set_wait_hook(mm_wait_fn fn, void *ctx);

/* ---- interrupts (cpu/irq.c) ---- */

/* The interrupt handler of @mm: runs on vCPU @cpu with irqs disabled, in interrupt context. */
typedef void (*mm_irq_handler_fn)(struct mm *mm, int cpu, void *ctx);
void mm_set_irq_handler(struct mm *mm, mm_irq_handler_fn fn, void *ctx);

/*
 * Run the handler now on the current task's vCPU of @mm (from the hook, or
 * a test).  Refused (false) if irqs are disabled, the task is already in an
 * interrupt, it holds no vCPU of @mm or no handler is set.
 */
bool mm_raise_irq(struct mm *mm);
/*
 * Mark an interrupt pending on the current task's vCPU of @mm, as one that
 * arrived while masked: it runs at the next preemption point where irqs
 * are enabled (local_irq_restore, the end of the current interrupt ...).
 */
void mm_set_irq_pending(struct mm *mm);
/*
 * Call from a signal handler (stressors: timer or tgkill).  Async-signal-
 * safe.  If the interrupted task holds a vCPU (of the instance it used
 * last) with irqs enabled and not in an interrupt, runs the handler there;
 * otherwise the interrupt is left pending (deferred) or, with no vCPU or
 * no handler, dropped.  Returns true if the handler ran.  errno is kept.
 */
bool mm_irq_from_signal(void);
/* Interrupts that mm_irq_from_signal() dropped because the thread held no vCPU (process-wide). */
unsigned long mm_irq_signal_unattached(void);

/* ---- CPU hotplug (cpu/hotplug.c) ---- */

/*
 * Registered states run in registration order when a vCPU comes online and
 * in reverse order when it goes dead (cpuhp_setup_state_nocalls(): nothing
 * runs at registration).  Both run with the vCPU held by the hotplug
 * operation, so its per-CPU data may be touched without locks against its
 * own users (remote drainers still need the data's locks).  A failing
 * online callback rolls back the ones already run and leaves it offline.
 * Returns the state id (>= 0), -ENOSPC or -EINVAL.
 */
typedef int (*mm_cpuhp_fn)(struct mm *mm, unsigned int cpu);
int mm_cpuhp_register(struct mm *mm, const char *name, mm_cpuhp_fn online, mm_cpuhp_fn dead);
void mm_cpuhp_remove(struct mm *mm, int state);

/*
 * Take @cpu offline: its holder (if any) is asked to leave at its next
 * preemptible point or wait, and this call waits for that; then the dead
 * callbacks run.  The caller's own hold on @cpu is given up first.  0 (also
 * if already offline), -EINVAL, -EBUSY for the last online vCPU, -EPERM if
 * the caller holds @cpu and is not preemptible.
 */
int mm_cpu_offline(struct mm *mm, int cpu);
/* As mm_cpu_offline() but never waits for a holder: -EBUSY if @cpu is held. */
int mm_cpu_try_offline(struct mm *mm, int cpu);
/* Bring @cpu online (online callbacks first).  0 (also if online), -EINVAL, or a callback's error. */
int mm_cpu_online(struct mm *mm, int cpu);
bool mm_cpu_is_online(struct mm *mm, int cpu);
int mm_num_online_cpus(struct mm *mm);

/* ---- statistics ---- */

struct mm_cpu_stats {
	unsigned long attaches;                 /* times a task took the vCPU (attach or migration) */
	unsigned long attach_waits;             /* attaches that had to wait */
	unsigned long migrations_in;            /* tasks migrated onto the vCPU */
	unsigned long migrations_out;           /* tasks migrated away from it */
	unsigned long migrations_refused;       /* mm_migrate_current() refused: not preemptible */
	unsigned long irqs_delivered;           /* handler runs, however raised */
	unsigned long irqs_from_signal;         /* of those, run from a signal handler */
	unsigned long irqs_deferred;            /* arrived masked: left pending */
	unsigned long irqs_refused;             /* mm_raise_irq() refused */
	unsigned long irqs_dropped;             /* arrived with no handler, or pending at offline */
	unsigned long offlines, onlines;        /* hotplug transitions */
	unsigned long sleeps;                   /* a task gave the vCPU up to sleep on a lock */
	unsigned long pp_hits;                  /* preemption points reached, all ids */
	unsigned long pp_hit[MM_PP_NR];         /* ... per point id */
	unsigned long pp_migrate[MM_PP_NR];     /* migrations that happened at the point */
	unsigned long pp_irq[MM_PP_NR];         /* interrupts that ran at the point */
};
/*
 * Statistics of vCPU @cpu, or of the whole instance for @cpu == -1 (the
 * sum, plus points reached by tasks holding no vCPU).  0 or -EINVAL.
 * Counters are reset by mm_reset().
 */
int mm_cpu_get_stats(struct mm *mm, int cpu, struct mm_cpu_stats *st);
/* One line per vCPU and a total, in the torture tests' style. */
void mm_cpu_print_stats(struct mm *mm, FILE *f);

#ifdef __cplusplus
}
#endif

#endif /* MM_CPU_H */

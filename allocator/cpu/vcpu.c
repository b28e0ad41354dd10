/* SPDX-License-Identifier: MIT */
/*
 * vcpu.c - the CPU model: tasks, exclusive vCPUs, migration and the
 * preemption points (DESIGN.md, "CPUs, preemption and interrupts").
 * Interrupts are in cpu/irq.c, CPU hotplug in cpu/hotplug.c.
 *
 * What is modelled
 * ----------------
 * The kernel's per-CPU fast paths are correct only because of what can run
 * between two of their instructions on one CPU: another task (after
 * preemption, possibly with this task migrated elsewhere) and interrupt
 * handlers.  The model makes both explicit.  A *task* (struct mm_task) is
 * what runs; every OS thread has an implicit one (mm_default_task), and a
 * fiber scheduler makes one per fiber and points the thread-local
 * mm_current at it.  A *vCPU* (struct mm_cpu) is a CPU of one instance.
 *
 * Locking and ownership
 * ---------------------
 *   vcpu->holder   The only lock of a vCPU.  A task takes it with an
 *                  acquire CAS (NULL -> task) and gives it back with a
 *                  release store of NULL; in between it *is* that CPU, and
 *                  only it (and interrupt handlers run on top of it)
 *                  touches the vCPU's per-CPU data without locks.  The
 *                  acquire/release pair carries happens-before from one
 *                  holder to the next, which is why TSan is quiet about
 *                  plain per-CPU accesses.  Hotplug holds a vCPU with a
 *                  marker task (smp->hotplug_task) while its callbacks run.
 *   vcpu->online   Written only by the hotplug operation while it holds
 *                  the vCPU (and under the hotplug write lock); an attacher
 *                  re-reads it after its CAS, so it never holds an offline
 *                  vCPU.
 *   vcpu->dying    A request, written without holding: "leave at your next
 *                  preemptible point" (the kernel migrating tasks off a CPU
 *                  going down).  Attachers do not take a dying vCPU.
 *   smp->hotplug   cpus_read_lock()/the hotplug write lock (cpu/hotplug.c);
 *                  also protects the cpuhp state table.  A sleeping lock.
 *   struct mutex   Sleeping locks of the layers (slab_mutex; cpu/mutex.h).
 *   task fields    Only the task itself writes them - on its thread, or in
 *                  a signal handler interrupting it - so they need no lock;
 *                  the ones a signal handler reads are atomics written with
 *                  single stores (cpu/preempt.h).
 *   statistics     Atomic counters, per vCPU to stay off shared lines.
 *
 * Lock order: the hotplug write lock, then vcpu->holder (of the vCPU going
 * down), then whatever the cpuhp callbacks take (slab_mutex, then
 * spinlocks).  A task waits for a vCPU only while holding no spinlock it
 * could be waited on with: spinning with preemption disabled never leaves
 * the vCPU, so waiting for a vCPU while holding a spinlock can deadlock
 * (document it, do not do it).  Waiting for a vCPU while holding a
 * sleeping lock is fine: its waiters hold no vCPU (below).
 *
 * Sleeping locks
 * --------------
 * In the kernel a task that blocks on a sleeping lock (percpu_down_read
 * in cpus_read_lock(), the hotplug writer, mutex_lock(&slab_mutex))
 * calls schedule(): its CPU runs other tasks meanwhile, and it wakes up
 * wherever the scheduler puts it.  The model does the same, in two halves
 * of a migration (__mm_sleep_begin/__mm_sleep_end around the wait loop):
 *   1. if the task may sleep - preemptible (no spinlock or local lock,
 *      irqs on, not in an interrupt) and not already inside a wait - it
 *      gives up every vCPU it holds (counted as a sleep on each);
 *   2. it waits through the wait hook until the lock is its own (the
 *      lock is handed over first, as the kernel's mutex handoff and
 *      percpu_rwsem wake function do, so it never sleeps twice);
 *   3. it takes a vCPU back per instance: the one it left if that is free
 *      (wake-affine), else the first free online one; a migrate-disabled
 *      task waits for its own (select_fallback_rq() if it went offline
 *      meanwhile).  Landing elsewhere is a migration, counted as
 *      __mm_migrate() counts one.
 * Without this, a waiter kept its vCPU while it waited, and a lock holder
 * that needed a vCPU (hotplug callbacks freeing pages, a task migrated
 * inside drain_all_pages()) waited for the waiters: the stressor's three
 * "known deadlocks".  A task that may not sleep keeps its vCPUs and spins,
 * as before (might_sleep reports it at MM_DEBUG >= 2).
 *
 * Who may touch per-CPU data, and when
 * ------------------------------------
 *  - the holder, in any state, without locks - but across a point where it
 *    is preemptible it may be migrated: a pointer from raw_cpu_ptr() may
 *    then name another task's vCPU, as in the kernel (SLUB revalidates with
 *    the tid, pcp re-reads after pinning);
 *  - an interrupt handler on the holder's vCPU, with the holder suspended
 *    wherever irqs were enabled - so data also touched from interrupts needs
 *    irqs disabled (local_lock_irqsave) or a trylock that fails;
 *  - other vCPUs only through the data's own locks (pcp->lock ...);
 *  - hotplug callbacks, holding the vCPU while it is offline.
 *
 * Task states
 * -----------
 *   state               preempt  irqs_off  in_irq  may be migrated  may take an irq
 *   running preemptible    0        0        0       yes (at a point)   yes
 *   preempt-disabled      >0        0        0       no                 yes
 *   irqs-off               *        1        0       no                 no (deferred: pending)
 *   in-interrupt           *        1        1       no                 no (deferred: pending)
 *   migrating              0        0        0       (holds no vCPU of this instance
 *                                                    between release and re-acquire)
 *   sleeping on a lock     0        0        0       (holds no vCPU at all until it
 *                                                    has the lock)
 * migrate_disable() keeps a preemptible task on its vCPU.  A task suspended
 * in any non-preemptible state (e.g. spinning on a lock) still owns its
 * vCPU: nobody else runs there and nobody migrates onto it.
 *
 * The one-entry cache
 * -------------------
 * task->held[] lists every (instance, vCPU) the task holds; cur_mm/cur_cpu
 * cache the last one used so raw_smp_processor_id() is a TLS load and a
 * compare.  The cache is written "cur_mm = NULL; cur_cpu = c; cur_mm = mm"
 * with signal fences, and invalidated before a vCPU is released, so a
 * signal handler that sees cur_mm set also sees a vCPU the task holds.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

_Thread_local struct mm_task *mm_current;
_Thread_local struct mm_task mm_default_task;

static _Thread_local mm_wait_fn wait_hook;      /* the thread's scheduler, not task state */
static _Thread_local void *wait_hook_ctx;

static const char *const pp_names[MM_PP_NR] = {
#define MM_PP_NAME_(name, str) str,
	MM_PREEMPT_POINTS(MM_PP_NAME_)
#undef MM_PP_NAME_
};

const char *mm_pp_name(enum mm_pp id)
{
	return (unsigned)id < MM_PP_NR ? pp_names[id] : "?";
}

/* ---------------------------------------------------------------- task bookkeeping */

int __mm_task_cpu(struct mm_task *t, struct mm *mm)
{
	if (atomic_load_explicit(&t->cur_mm, memory_order_relaxed) == mm)
		return atomic_load_explicit(&t->cur_cpu, memory_order_relaxed);
	for (int i = 0; i < t->nr_held; i++)
		if (t->held[i].mm == mm)
			return t->held[i].cpu;
	return -1;
}

/* Point the cache at (@mm, @cpu) so a signal handler never sees a torn pair. */
void __mm_task_cache_set(struct mm_task *t, struct mm *mm, int cpu)
{
	atomic_store_explicit(&t->cur_mm, NULL, memory_order_relaxed);
	barrier();
	atomic_store_explicit(&t->cur_cpu, cpu, memory_order_relaxed);
	barrier();
	atomic_store_explicit(&t->cur_mm, mm, memory_order_relaxed);
	barrier();
}

static void held_add(struct mm_task *t, struct mm *mm, int cpu)
{
	if (unlikely(t->nr_held >= MM_TASK_MAX_HELD))
		mm_bug(__FILE__, __LINE__, "a task holds vCPUs in more than MM_TASK_MAX_HELD instances");
	t->held[t->nr_held].mm = mm;
	t->held[t->nr_held].cpu = cpu;
	barrier();
	t->nr_held++;
}

static void held_del(struct mm_task *t, struct mm *mm)
{
	for (int i = 0; i < t->nr_held; i++) {
		if (t->held[i].mm != mm)
			continue;
		t->held[i] = t->held[t->nr_held - 1];
		barrier();
		t->nr_held--;
		return;
	}
}

/* Stop caching @mm; fall back to another instance the task holds, if any. */
static void cache_drop(struct mm_task *t, struct mm *mm)
{
	if (atomic_load_explicit(&t->cur_mm, memory_order_relaxed) != mm)
		return;
	atomic_store_explicit(&t->cur_mm, NULL, memory_order_relaxed);
	barrier();
	for (int i = 0; i < t->nr_held; i++)
		if (t->held[i].mm != mm) {
			__mm_task_cache_set(t, t->held[i].mm, t->held[i].cpu);
			return;
		}
}

/* Implicit tasks give their vCPUs back when their thread exits. */
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static atomic_int next_pid;

static void release_cpu(struct mm_cpu *c)
{
	atomic_store_explicit(&c->holder, NULL, memory_order_release);
}

/* Give up @t's vCPU in @mm: cache first, then the list, then the vCPU itself. */
static void drop_cpu(struct mm_task *t, struct mm *mm, int cpu)
{
	cache_drop(t, mm);
	held_del(t, mm);
	release_cpu(&mm->cpus[cpu]);
}

static void task_exit(void *p)
{
	struct mm_task *t = p;
	while (t->nr_held)
		drop_cpu(t, t->held[0].mm, t->held[0].cpu);
}

static void make_exit_key(void)
{
	if (pthread_key_create(&exit_key, task_exit))
		mm_bug(__FILE__, __LINE__, "pthread_key_create failed");
}

static void arm_exit(struct mm_task *t)
{
	if (t != &mm_default_task || t->exit_armed)
		return;
	pthread_once(&exit_once, make_exit_key);
	pthread_setspecific(exit_key, t);
	t->exit_armed = true;
	t->pid = atomic_fetch_add(&next_pid, 1) + 1;
}

/* ---------------------------------------------------------------- waiting */

/* Leave every vCPU that is going down (the kernel migrating tasks off a dying CPU). */
static void leave_dying(struct mm_task *t)
{
	for (int i = 0; i < t->nr_held;) {
		struct mm *mm = t->held[i].mm;
		int cpu = t->held[i].cpu;
		if (atomic_load_explicit(&mm->cpus[cpu].dying, memory_order_relaxed)) {
			drop_cpu(t, mm, cpu);
			continue;               /* held[i] is now another entry */
		}
		i++;
	}
}

/*
 * One step of any wait in the model (a contended lock, a busy vCPU, a
 * hotplug operation).  A preemptible waiter first gives up vCPUs going
 * down, as a sleeping task would be migrated off them; then it yields to
 * the thread's scheduler (the wait hook) or relaxes.
 */
void __mm_cpu_wait(enum mm_wait_reason why, const void *what)
{
	struct mm_task *t = get_current();
	if (t->nr_held && !t->in_wait && !t->migrate_disable && __task_preemptible(t)) {
		t->in_wait++;
		leave_dying(t);
		t->in_wait--;
	}
	mm_wait_fn fn = wait_hook;
	if (fn)
		fn(why, what, wait_hook_ctx);
	else
		cpu_relax();
}

void mm_set_wait_hook(mm_wait_fn fn, void *ctx)
{
	wait_hook_ctx = ctx;
	wait_hook = fn;
}

/* The contended half of spin_lock(): do_raw_spin_lock() with CONFIG_DEBUG_SPINLOCK's recursion check. */
void __spin_lock_slowpath(spinlock_t *l)
{
#if MM_DEBUG >= 2
	if (atomic_load_explicit(&l->owner, memory_order_relaxed) == get_current())
		mm_bug(__FILE__, __LINE__, "spinlock recursion (an interrupt taking a lock "
		       "its task holds with irqs enabled?)");
#endif
	do
		__mm_cpu_wait(MM_WAIT_SPIN, l);
	while (!spin_trylock_raw(l));
}

/* The contended half of mutex_lock(): sleep without a vCPU until the mutex is handed to us. */
void __mutex_lock_slowpath(struct mutex *m)
{
	struct mm_sleep sl;
#if MM_DEBUG >= 2
	if (atomic_load_explicit(&m->owner, memory_order_relaxed) == get_current())
		mm_bug(__FILE__, __LINE__, "mutex recursion (mutex_lock of a mutex this task holds)");
#endif
	__mm_sleep_begin(&sl);
	do
		__mm_cpu_wait(MM_WAIT_MUTEX, m);
	while (!__mutex_trylock_raw(m));
	__mm_sleep_end(&sl);
}

/* ---------------------------------------------------------------- attach */

/* Take @c if it is free, online and not going down. */
static bool try_hold(struct mm_cpu *c, struct mm_task *t)
{
	struct mm_task *expected = NULL;
	if (atomic_load_explicit(&c->holder, memory_order_relaxed) ||
	    !atomic_load_explicit(&c->online, memory_order_relaxed) ||
	    atomic_load_explicit(&c->dying, memory_order_relaxed))
		return false;
	if (!atomic_compare_exchange_strong_explicit(&c->holder, &expected, t,
						     memory_order_acquire, memory_order_relaxed))
		return false;
	/* online only changes under a hotplug hold, which our acquire ordered after */
	if (likely(atomic_load_explicit(&c->online, memory_order_relaxed) &&
		   !atomic_load_explicit(&c->dying, memory_order_relaxed)))
		return true;
	release_cpu(c);
	return false;
}

/*
 * Hold vCPU @want of @mm (or, with -1, the first free online one, trying
 * @prefer first and @avoid last), waiting as long as it takes.  With
 * @fallback, a @want that is offline (or goes offline while we wait) turns
 * into -1: select_fallback_rq().  The scheduler putting a task on a CPU;
 * the task must hold no vCPU of @mm.
 */
static int hold_cpu(struct mm *mm, struct mm_task *t, int want, int prefer, int avoid, bool fallback)
{
	struct mm_smp *smp = mm_smp(mm);
	bool waited = false;
	int got = -1;

	for (;;) {
		if (want >= 0 && fallback && !cpu_online(mm, want))
			want = -1;
		if (want >= 0) {
			if (try_hold(&mm->cpus[want], t))
				got = want;
		} else {
			if (prefer >= 0 && prefer != avoid && try_hold(&mm->cpus[prefer], t))
				got = prefer;
			for (int i = 0; i < smp->nr_cpus && got < 0; i++)
				if (i != avoid && i != prefer && try_hold(&mm->cpus[i], t))
					got = i;
			if (got < 0 && avoid >= 0 && try_hold(&mm->cpus[avoid], t))
				got = avoid;
		}
		if (got >= 0)
			break;
		waited = true;
		__mm_cpu_wait(MM_WAIT_VCPU, want >= 0 ? (const void *)&mm->cpus[want] : (const void *)smp);
	}
	mm_stat_inc(&mm->cpus[got].stat.attaches);
	if (waited)
		mm_stat_inc(&mm->cpus[got].stat.attach_waits);
	held_add(t, mm, got);
	__mm_task_cache_set(t, mm, got);
	arm_exit(t);
	return got;
}

/* The slow half of raw_smp_processor_id(): another instance, or no vCPU yet (implicit attach). */
int __mm_this_cpu_slow(struct mm *mm)
{
	struct mm_task *t = get_current();
	int cpu = __mm_task_cpu(t, mm);
	if (cpu >= 0) {
		__mm_task_cache_set(t, mm, cpu);
		return cpu;
	}
	return hold_cpu(mm, t, -1, -1, -1, false);
}

int mm_this_cpu(struct mm *mm)
{
	return raw_smp_processor_id(mm);
}

/* CONFIG_DEBUG_PREEMPT's complaint (check_preemption_disabled()). */
void __debug_smp_processor_id(void)
{
	mm_bug(__FILE__, __LINE__, "using smp_processor_id() in preemptible code");
}

int mm_cpu_attach(struct mm *mm, int cpu)
{
	if (!mm || !mm->cpus || cpu < 0 || cpu >= mm_nr_cpus(mm))
		return -EINVAL;
	struct mm_task *t = get_current();
	int cur = __mm_task_cpu(t, mm);
	if (cur == cpu) {
		__mm_task_cache_set(t, mm, cpu);
		return cpu;
	}
	if (cur >= 0)
		return __mm_migrate(mm, t, cpu);
	if (t->nr_held >= MM_TASK_MAX_HELD)
		return -ENOSPC;
	return hold_cpu(mm, t, cpu, -1, -1, false);
}

int mm_cpu_attach_any(struct mm *mm)
{
	if (!mm || !mm->cpus)
		return -EINVAL;
	struct mm_task *t = get_current();
	int cur = __mm_task_cpu(t, mm);
	if (cur >= 0) {
		__mm_task_cache_set(t, mm, cur);
		return cur;
	}
	if (t->nr_held >= MM_TASK_MAX_HELD)
		return -ENOSPC;
	return hold_cpu(mm, t, -1, -1, -1, false);
}

/* The task leaves the CPU (schedule() out, nothing to come back to): "scheduling while atomic" if it is not preemptible. */
int mm_cpu_detach(struct mm *mm)
{
	if (!mm || !mm->cpus)
		return -EINVAL;
	struct mm_task *t = get_current();
	int cur = __mm_task_cpu(t, mm);
	if (cur < 0)
		return -ENOENT;
	if (MM_DEBUG >= 1 && (!__task_preemptible(t) || t->migrate_disable))
		mm_bug(__FILE__, __LINE__, "mm_cpu_detach: scheduling while atomic "
		       "(preemption or interrupts disabled, or migration disabled)");
	drop_cpu(t, mm, cur);
	return 0;
}

int mm_cpu_current(struct mm *mm)
{
	if (!mm || !mm->cpus)
		return -1;
	return __mm_task_cpu(get_current(), mm);
}

const struct mm_task *mm_cpu_holder(struct mm *mm, int cpu)
{
	if (!mm || !mm->cpus || cpu < 0 || cpu >= mm_nr_cpus(mm))
		return NULL;
	return atomic_load_explicit(&mm->cpus[cpu].holder, memory_order_relaxed);
}

/* ---------------------------------------------------------------- migration */

/*
 * The second half of a migration: the task, which left vCPU @from of @mm,
 * takes one again (hold_cpu's @want, @prefer, @avoid, falling back to any
 * online one if @want is offline) and, if it is not @from, that is a
 * migration: counted on both vCPUs and at point @at.
 */
static int migrate_in(struct mm *mm, struct mm_task *t, int from, int want, int prefer, int avoid,
		      enum mm_pp at)
{
	int got = hold_cpu(mm, t, want, prefer, avoid, true);
	if (got != from) {
		mm_stat_inc(&mm->cpus[from].stat.migrations_out);
		mm_stat_inc(&mm->cpus[from].stat.pp_migrate[at]);
		mm_stat_inc(&mm->cpus[got].stat.migrations_in);
		t->nr_migrations++;
	}
	return got;
}

/*
 * The scheduler moving a preempted task (Linux's migration at
 * preempt_schedule(): release this CPU, run somewhere else).  Refused
 * unless preemptible and migration is enabled; counted at the point whose
 * hook asked for it (task->cur_point).
 */
int __mm_migrate(struct mm *mm, struct mm_task *t, int new_cpu)
{
	int cur = __mm_task_cpu(t, mm);
	if (cur < 0)
		return -ENOENT;
	if (new_cpu != MM_CPU_ANY && (new_cpu < 0 || new_cpu >= mm_nr_cpus(mm)))
		return -EINVAL;
	if (!__task_preemptible(t) || t->migrate_disable) {
		mm_stat_inc(&mm->cpus[cur].stat.migrations_refused);
		return -EPERM;
	}
	if (new_cpu == cur)
		return cur;
	if (new_cpu != MM_CPU_ANY && !cpu_online(mm, new_cpu))
		new_cpu = MM_CPU_ANY;           /* select_fallback_rq(): any online CPU */
	enum mm_pp at = t->cur_point;
	drop_cpu(t, mm, cur);
	return migrate_in(mm, t, cur, new_cpu == MM_CPU_ANY ? -1 : new_cpu, -1, cur, at);
}

/* ---------------------------------------------------------------- sleeping */

/* schedule() out of a sleeping lock's wait: give every vCPU up, if the task may sleep ("Sleeping locks"). */
void __mm_sleep_begin(struct mm_sleep *sl)
{
	struct mm_task *t = get_current();
	sl->nr = 0;
	if (!t->nr_held || t->in_wait || !__task_preemptible(t))
		return;                 /* may not sleep: spins on its vCPUs (might_sleep complained) */
	sl->pinned = t->migrate_disable > 0;
	sl->at = t->cur_point;
	sl->cached = atomic_load_explicit(&t->cur_mm, memory_order_relaxed);
	sl->nr = t->nr_held;
	for (int i = 0; i < sl->nr; i++)
		sl->held[i] = t->held[i];
	for (int i = 0; i < sl->nr; i++) {
		struct mm *mm = sl->held[i].mm;
		int cpu = sl->held[i].cpu;
		mm_stat_inc(&mm->cpus[cpu].stat.sleeps);
		drop_cpu(t, mm, cpu);
	}
}

/* The wakeup: a vCPU back in every instance the task left, the same one if it can (see above). */
void __mm_sleep_end(struct mm_sleep *sl)
{
	struct mm_task *t = get_current();
	for (int i = 0; i < sl->nr; i++) {
		struct mm *mm = sl->held[i].mm;
		int cpu = sl->held[i].cpu;
		if (__mm_task_cpu(t, mm) >= 0)
			continue;       /* attached meanwhile (cannot happen from the allocator's waits) */
		migrate_in(mm, t, cpu, sl->pinned ? cpu : -1, cpu, -1, sl->at);
	}
	if (sl->nr && sl->cached) {
		int cpu = __mm_task_cpu(t, sl->cached);
		if (cpu >= 0)
			__mm_task_cache_set(t, sl->cached, cpu);
	}
	sl->nr = 0;
}

int mm_migrate_current(struct mm *mm, int new_cpu)
{
	if (!mm || !mm->cpus)
		return -EINVAL;
	return __mm_migrate(mm, get_current(), new_cpu);
}

/* ---------------------------------------------------------------- preemption points */

/*
 * A preemption point (test builds): count it, move off a dying vCPU if
 * preemptible, deliver an interrupt that arrived while masked if irqs are
 * now enabled, then let the instance's scheduler hook decide.  Models the
 * places preempt_schedule() and irq delivery can run (preempt_enable,
 * spin_unlock, local_irq_restore, and the fast-path windows between).
 */
void __mm_preempt_point(struct mm *mm, enum mm_pp id)
{
	struct mm_task *t = get_current();
	struct mm_smp *smp = mm_smp(mm);
	int cpu = __mm_task_cpu(t, mm);

	if ((unsigned)id >= MM_PP_NR)
		id = MM_PP_USER;
	if (cpu < 0) {
		mm_stat_inc(&smp->unattached.pp_hit[id]);
	} else {
		mm_stat_inc(&mm->cpus[cpu].stat.pp_hit[id]);
		if (unlikely(atomic_load_explicit(&mm->cpus[cpu].dying, memory_order_relaxed)) &&
		    !t->in_wait && !t->migrate_disable && __task_preemptible(t)) {
			enum mm_pp saved = t->cur_point;
			t->cur_point = id;
			t->in_wait++;
			cpu = __mm_migrate(mm, t, MM_CPU_ANY);
			t->in_wait--;
			t->cur_point = saved;
		}
		if (unlikely(atomic_load_explicit(&mm->cpus[cpu].irq_pending, memory_order_relaxed)) &&
		    !__task_irqs_disabled(t) && !__task_in_interrupt(t))
			__mm_irq_deliver_pending(mm, t, cpu, id);
	}

	mm_sched_hook_fn hook = atomic_load_explicit(&smp->sched_hook, memory_order_acquire);
	if (hook && !t->in_hook) {
		enum mm_pp saved = t->cur_point;
		t->cur_point = id;
		t->in_hook++;
		hook(mm, id, atomic_load_explicit(&smp->sched_ctx, memory_order_relaxed));
		t->in_hook--;
		t->cur_point = saved;
	}
}

/* The implicit points (preempt_enable, spin_unlock ...) go to the instance used last. */
void __mm_preempt_point_current(enum mm_pp id)
{
	struct mm *mm = atomic_load_explicit(&get_current()->cur_mm, memory_order_relaxed);
	if (mm)
		__mm_preempt_point(mm, id);
}

void mm_set_sched_hook(struct mm *mm, mm_sched_hook_fn fn, void *ctx)
{
	struct mm_smp *smp = mm_smp(mm);
	atomic_store_explicit(&smp->sched_ctx, ctx, memory_order_relaxed);
	atomic_store_explicit(&smp->sched_hook, fn, memory_order_release);
}

/* ---------------------------------------------------------------- tasks */

struct mm_task *mm_task_create(const char *name)
{
	struct mm_task *t = calloc(1, sizeof(*t));
	if (t) {
		t->name = name;
		t->pid = atomic_fetch_add(&next_pid, 1) + 1;
	}
	return t;
}

void mm_task_destroy(struct mm_task *t)
{
	if (!t)
		return;
	if (t->nr_held || t == mm_current)
		mm_bug(__FILE__, __LINE__, "mm_task_destroy: the task still holds a vCPU or is running");
	free(t);
}

struct mm_task *mm_task_current(void)
{
	return get_current();
}

/* context_switch(): only the pointer changes; the tasks keep their own state. */
struct mm_task *mm_task_switch(struct mm_task *next)
{
	struct mm_task *prev = get_current();
	barrier();
	mm_current = next ? next : &mm_default_task;
	barrier();
	return prev;
}

bool mm_preemptible(void) { return preemptible(); }
bool mm_irqs_disabled(void) { return irqs_disabled(); }
bool mm_in_interrupt(void) { return in_interrupt(); }

/* ---------------------------------------------------------------- statistics */

#define MM_CPU_COUNTER_SCALARS(X) \
	X(attaches) X(attach_waits) X(migrations_in) X(migrations_out) X(migrations_refused) \
	X(irqs_delivered) X(irqs_from_signal) X(irqs_deferred) X(irqs_refused) X(irqs_dropped) \
	X(offlines) X(onlines) X(sleeps)

static void stats_add(struct mm_cpu_stats *st, struct mm_cpu_counters *c)
{
#define ADD_(f) st->f += atomic_load_explicit(&c->f, memory_order_relaxed);
	MM_CPU_COUNTER_SCALARS(ADD_)
#undef ADD_
	for (int i = 0; i < MM_PP_NR; i++) {
		unsigned long h = atomic_load_explicit(&c->pp_hit[i], memory_order_relaxed);
		st->pp_hit[i] += h;
		st->pp_hits += h;
		st->pp_migrate[i] += atomic_load_explicit(&c->pp_migrate[i], memory_order_relaxed);
		st->pp_irq[i] += atomic_load_explicit(&c->pp_irq[i], memory_order_relaxed);
	}
}

static void stats_zero(struct mm_cpu_counters *c)
{
#define ZERO_(f) atomic_store_explicit(&c->f, 0, memory_order_relaxed);
	MM_CPU_COUNTER_SCALARS(ZERO_)
#undef ZERO_
	for (int i = 0; i < MM_PP_NR; i++) {
		atomic_store_explicit(&c->pp_hit[i], 0, memory_order_relaxed);
		atomic_store_explicit(&c->pp_migrate[i], 0, memory_order_relaxed);
		atomic_store_explicit(&c->pp_irq[i], 0, memory_order_relaxed);
	}
}

int mm_cpu_get_stats(struct mm *mm, int cpu, struct mm_cpu_stats *st)
{
	if (!mm || !mm->cpus || !st || cpu < -1 || cpu >= mm_nr_cpus(mm))
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	if (cpu >= 0) {
		stats_add(st, &mm->cpus[cpu].stat);
		return 0;
	}
	for (int i = 0; i < mm_nr_cpus(mm); i++)
		stats_add(st, &mm->cpus[i].stat);
	stats_add(st, &mm_smp(mm)->unattached);
	return 0;
}

static void print_stats_line(struct mm *mm, int cpu, FILE *f, struct mm_cpu_stats *st)
{
	mm_cpu_get_stats(mm, cpu, st);
	if (cpu >= 0)
		fprintf(f, "vcpu %2d%s: ", cpu, cpu_online(mm, cpu) ? "" : " (offline)");
	else
		fprintf(f, "total  : ");
	fprintf(f, "attach %lu (waited %lu) migrate in %lu out %lu refused %lu "
		"irq %lu (signal %lu) deferred %lu refused %lu dropped %lu "
		"offline %lu online %lu sleeps %lu points %lu\n",
		st->attaches, st->attach_waits, st->migrations_in, st->migrations_out,
		st->migrations_refused, st->irqs_delivered, st->irqs_from_signal, st->irqs_deferred,
		st->irqs_refused, st->irqs_dropped, st->offlines, st->onlines, st->sleeps, st->pp_hits);
}

/* One line per vCPU, the total, and the points that were reached (torture-test style). */
void mm_cpu_print_stats(struct mm *mm, FILE *f)
{
	struct mm_cpu_stats st;
	for (int cpu = 0; cpu < mm_nr_cpus(mm); cpu++)
		print_stats_line(mm, cpu, f, &st);
	print_stats_line(mm, -1, f, &st);
	fprintf(f, "%-16s %12s %10s %10s\n", "point", "hits", "migrated", "irqs");
	for (int i = 0; i < MM_PP_NR; i++)
		if (st.pp_hit[i] || st.pp_migrate[i] || st.pp_irq[i])
			fprintf(f, "%-16s %12lu %10lu %10lu\n", mm_pp_name((enum mm_pp)i),
				st.pp_hit[i], st.pp_migrate[i], st.pp_irq[i]);
}

/* ---------------------------------------------------------------- setup */

int mm_cpus_setup(struct mm *mm, char *err, size_t errlen)
{
	int n = (int)mm->cfg.nr_cpus;
	if (n < 1 || n > MM_MAX_CPUS) {
		snprintf(err, errlen, "config: nr_cpus %d out of range 1..%d", n, MM_MAX_CPUS);
		return -1;
	}
	size_t sz = sizeof(struct mm_smp) + (size_t)n * sizeof(struct mm_cpu);
	struct mm_smp *smp = aligned_alloc(64, (sz + 63) & ~(size_t)63);
	if (!smp) {
		snprintf(err, errlen, "out of memory for the vCPUs");
		return -1;
	}
	memset(smp, 0, sz);
	smp->mm = mm;
	smp->nr_cpus = n;
	smp->hotplug_task.name = "cpuhp";
	for (int i = 0; i < n; i++) {
		smp->cpu[i].id = i;
		atomic_init(&smp->cpu[i].holder, NULL);
		atomic_init(&smp->cpu[i].online, true);
		atomic_init(&smp->cpu[i].dying, false);
		atomic_init(&smp->cpu[i].irq_pending, 0);
	}
	mm->cpus = smp->cpu;
	return 0;
}

/* Everyone but the caller must have detached: a vCPU still held by another task is a use-after-free waiting to happen. */
static void detach_caller_and_check(struct mm *mm, const char *who)
{
	struct mm_task *t = get_current();
	int cur = __mm_task_cpu(t, mm);
	if (cur >= 0)
		drop_cpu(t, mm, cur);
	if (MM_DEBUG < 1)
		return;
	for (int i = 0; i < mm_nr_cpus(mm); i++) {
		struct mm_task *h = atomic_load_explicit(&mm->cpus[i].holder, memory_order_acquire);
		if (h) {
			char msg[160];
			snprintf(msg, sizeof(msg), "%s: vCPU %d still held by task %s (other threads must "
				 "mm_cpu_detach() first)", who, i, h->name ? h->name : "(thread)");
			mm_bug(__FILE__, __LINE__, msg);
		}
	}
}

void mm_cpus_teardown(struct mm *mm)
{
	if (!mm->cpus)
		return;
	detach_caller_and_check(mm, "mm_destroy");
	free(mm_smp(mm));
	mm->cpus = NULL;
}

/*
 * Back to the state mm_cpus_setup() left: the caller detached (the next
 * operation attaches to vCPU 0 again, deterministically), every vCPU
 * online without running callbacks (the layers reset their own per-CPU
 * state), no pending interrupts, counters zero, and the client's hooks
 * (scheduler hook, interrupt handler) cleared like its shrinkers.  The
 * cpuhp states stay: the allocator's layers registered them at setup.
 */
void mm_cpus_reset(struct mm *mm)
{
	struct mm_smp *smp = mm_smp(mm);
	detach_caller_and_check(mm, "mm_reset");
	mm_set_sched_hook(mm, NULL, NULL);
	mm_set_irq_handler(mm, NULL, NULL);
	VM_BUG_ON(atomic_load(&smp->hotplug) != 0);
	for (int i = 0; i < smp->nr_cpus; i++) {
		atomic_store(&smp->cpu[i].online, true);
		atomic_store(&smp->cpu[i].dying, false);
		atomic_store(&smp->cpu[i].irq_pending, 0);
		stats_zero(&smp->cpu[i].stat);
	}
	stats_zero(&smp->unattached);
}

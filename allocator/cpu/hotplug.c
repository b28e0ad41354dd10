/* SPDX-License-Identifier: MIT */
/*
 * hotplug.c - vCPU offline/online with cpuhp-style callbacks
 * (kernel/cpu.c, Linux 6.6, reduced to the two ends of the state machine:
 * "online" startup callbacks in registration order, "dead" teardown
 * callbacks in reverse), and cpus_read_lock().
 *
 * Locking
 * -------
 *   smp->hotplug   A writer-preferring rwlock in one atomic int: the reader
 *                  count, plus CPUS_WRITER while a hotplug operation (or a
 *                  cpuhp registration) runs.  It serialises hotplug
 *                  operations and protects the state table.  Readers
 *                  (cpus_read_lock: drain_all_pages and the like) see a
 *                  stable online mask.  A sleeping lock, as the kernel's
 *                  percpu rwsem: both sides must be preemptible, and a
 *                  side that has to wait gives its vCPUs up meanwhile and
 *                  takes one back once it has the lock (cpu/vcpu.c,
 *                  "Sleeping locks") - a writer that waits for readers
 *                  holds no vCPU they might need, and a reader queued
 *                  behind a writer holds none that the writer's callbacks
 *                  might need.
 *
 * Taking a vCPU down
 * ------------------
 *   1. write lock; nothing to do if offline; -EBUSY if it is the last one;
 *   2. mark it dying: its holder leaves at its next preemptible point or
 *      wait (the kernel migrating tasks off it), attachers skip it; if the
 *      caller itself woke up on it from the write lock's sleep, it moves
 *      off now;
 *   3. hold it with the hotplug marker task (waits for the holder to leave,
 *      or fails with -EBUSY in mm_cpu_try_offline()).  This wait keeps the
 *      caller's vCPU: the holder leaves without needing it (it migrates to
 *      another online one, or a free one after a sleep);
 *   4. online = false, drop a pending interrupt (counted), run the dead
 *      callbacks in reverse order while holding it, so they own its per-CPU
 *      data against its users (remote users still need the data's locks);
 *   5. release it, write unlock.
 * Without MM_TEST_HOOKS there are no preemption points, so a holder leaves
 * only when it waits or detaches: an offline then waits for that.
 *
 * Bringing one up: write lock, hold it with the marker (only transient
 * attach attempts can be in the way), online callbacks in order (a failure
 * runs the dead callbacks of those already done, in reverse, and leaves it
 * offline), online = true, release, write unlock.
 */
#include <errno.h>

#include "internal.h"

#define CPUS_WRITER (1 << 30)

static bool read_trylock(struct mm_smp *smp)
{
	int s = atomic_load_explicit(&smp->hotplug, memory_order_relaxed);
	return !(s & CPUS_WRITER) &&
	       atomic_compare_exchange_weak_explicit(&smp->hotplug, &s, s + 1,
						     memory_order_acquire, memory_order_relaxed);
}

/* cpus_read_lock(): percpu_down_read(&cpu_hotplug_lock); sleeps (without a vCPU) behind a writer. */
void cpus_read_lock(struct mm *mm)
{
	struct mm_smp *smp = mm_smp(mm);
	might_sleep_msg("cpus_read_lock() while not preemptible (sleeping function called from invalid context)");
	if (read_trylock(smp))
		return;
	struct mm_sleep sl;
	__mm_sleep_begin(&sl);
	do
		__mm_cpu_wait(MM_WAIT_CPUS_LOCK, &smp->hotplug);
	while (!read_trylock(smp));
	__mm_sleep_end(&sl);
}

void cpus_read_unlock(struct mm *mm)
{
	struct mm_smp *smp = mm_smp(mm);
	VM_BUG_ON((atomic_load_explicit(&smp->hotplug, memory_order_relaxed) & ~CPUS_WRITER) == 0);
	atomic_fetch_sub_explicit(&smp->hotplug, 1, memory_order_release);
}

static bool writer_tryclaim(struct mm_smp *smp)
{
	int s = atomic_load_explicit(&smp->hotplug, memory_order_relaxed);
	return !(s & CPUS_WRITER) &&
	       atomic_compare_exchange_weak_explicit(&smp->hotplug, &s, s | CPUS_WRITER,
						     memory_order_acquire, memory_order_relaxed);
}

static bool readers_gone(struct mm_smp *smp)
{
	return !(atomic_load_explicit(&smp->hotplug, memory_order_acquire) & ~CPUS_WRITER);
}

/*
 * cpus_write_lock(): percpu_down_write() - claim the writer bit (new
 * readers wait), then wait for the readers to leave; asleep, without a
 * vCPU, through either wait.
 */
static void cpus_write_lock(struct mm_smp *smp)
{
	struct mm_sleep sl = { .nr = 0 };
	bool slept = false;

	if (!writer_tryclaim(smp)) {
		__mm_sleep_begin(&sl);
		slept = true;
		do
			__mm_cpu_wait(MM_WAIT_CPUS_LOCK, &smp->hotplug);
		while (!writer_tryclaim(smp));
	}
	if (!readers_gone(smp)) {
		if (!slept)
			__mm_sleep_begin(&sl);
		slept = true;
		do
			__mm_cpu_wait(MM_WAIT_CPUS_LOCK, &smp->hotplug);
		while (!readers_gone(smp));
	}
	if (slept)
		__mm_sleep_end(&sl);
}

static void cpus_write_unlock(struct mm_smp *smp)
{
	atomic_fetch_and_explicit(&smp->hotplug, ~CPUS_WRITER, memory_order_release);
}

/* Hold @c for the hotplug operation, ignoring online; false if held and !@wait. */
static bool hotplug_hold(struct mm_smp *smp, struct mm_cpu *c, bool wait)
{
	for (;;) {
		struct mm_task *expected = NULL;
		if (atomic_compare_exchange_strong_explicit(&c->holder, &expected, &smp->hotplug_task,
							    memory_order_acquire, memory_order_relaxed))
			return true;
		if (!wait)
			return false;
		__mm_cpu_wait(MM_WAIT_HOTPLUG, c);
	}
}

static void hotplug_release(struct mm_cpu *c)
{
	atomic_store_explicit(&c->holder, NULL, memory_order_release);
}

static int count_online(struct mm_smp *smp)
{
	int n = 0;
	for (int i = 0; i < smp->nr_cpus; i++)
		n += atomic_load_explicit(&smp->cpu[i].online, memory_order_relaxed);
	return n;
}

/* The teardown half of the state machine: dead callbacks from the last state down to @from. */
static void run_dead(struct mm_smp *smp, unsigned int cpu, int from_top)
{
	for (int i = from_top; i >= 0; i--)
		if (smp->cpuhp[i].name && smp->cpuhp[i].dead)
			smp->cpuhp[i].dead(smp->mm, cpu);
}

/* _cpu_down(): take @cpu out; see the steps at the top. */
static int cpu_down(struct mm *mm, int cpu, bool wait)
{
	if (!mm || !mm->cpus || cpu < 0 || cpu >= mm_nr_cpus(mm))
		return -EINVAL;
	struct mm_smp *smp = mm_smp(mm);
	struct mm_cpu *c = &mm->cpus[cpu];
	struct mm_task *t = get_current();

	if (__mm_task_cpu(t, mm) == cpu) {
		/* the caller runs there: it is migrated off first, like any task */
		if (!__task_preemptible(t) || t->migrate_disable)
			return -EPERM;
		mm_cpu_detach(mm);
	}
	might_sleep_msg("mm_cpu_offline() while not preemptible");
	cpus_write_lock(smp);
	if (!atomic_load_explicit(&c->online, memory_order_relaxed)) {
		cpus_write_unlock(smp);
		return 0;
	}
	if (count_online(smp) == 1) {
		cpus_write_unlock(smp);
		return -EBUSY;                  /* the last CPU never goes down */
	}
	atomic_store_explicit(&c->dying, true, memory_order_relaxed);
	if (__mm_task_cpu(t, mm) == cpu) {
		/* woke up there from the write lock's sleep (not pinned: a pinned
		 * task goes back to the vCPU it held, and that was not @cpu) */
		__mm_migrate(mm, t, MM_CPU_ANY);
	}
	if (!hotplug_hold(smp, c, wait)) {
		atomic_store_explicit(&c->dying, false, memory_order_relaxed);
		cpus_write_unlock(smp);
		return -EBUSY;
	}
	atomic_store_explicit(&c->online, false, memory_order_relaxed);
	atomic_store_explicit(&c->dying, false, memory_order_relaxed);
	if (atomic_exchange_explicit(&c->irq_pending, 0, memory_order_relaxed))
		mm_stat_inc(&c->stat.irqs_dropped);
	run_dead(smp, (unsigned int)cpu, smp->nr_cpuhp - 1);
	mm_stat_inc(&c->stat.offlines);
	hotplug_release(c);
	cpus_write_unlock(smp);
	return 0;
}

int mm_cpu_offline(struct mm *mm, int cpu)
{
	return cpu_down(mm, cpu, true);
}

int mm_cpu_try_offline(struct mm *mm, int cpu)
{
	return cpu_down(mm, cpu, false);
}

/* _cpu_up(): startup callbacks in order, rolled back on failure (cpuhp_invoke_callback_range). */
int mm_cpu_online(struct mm *mm, int cpu)
{
	if (!mm || !mm->cpus || cpu < 0 || cpu >= mm_nr_cpus(mm))
		return -EINVAL;
	struct mm_smp *smp = mm_smp(mm);
	struct mm_cpu *c = &mm->cpus[cpu];
	int ret = 0;

	might_sleep_msg("mm_cpu_online() while not preemptible");
	cpus_write_lock(smp);
	if (atomic_load_explicit(&c->online, memory_order_relaxed)) {
		cpus_write_unlock(smp);
		return 0;
	}
	hotplug_hold(smp, c, true);             /* only transient attach attempts hold it */
	for (int i = 0; i < smp->nr_cpuhp; i++) {
		if (!smp->cpuhp[i].name || !smp->cpuhp[i].online)
			continue;
		ret = smp->cpuhp[i].online(mm, (unsigned int)cpu);
		if (ret) {
			run_dead(smp, (unsigned int)cpu, i - 1);
			break;
		}
	}
	if (!ret) {
		atomic_store_explicit(&c->online, true, memory_order_relaxed);
		mm_stat_inc(&c->stat.onlines);
	}
	hotplug_release(c);
	cpus_write_unlock(smp);
	return ret;
}

bool mm_cpu_is_online(struct mm *mm, int cpu)
{
	if (!mm || !mm->cpus || cpu < 0 || cpu >= mm_nr_cpus(mm))
		return false;
	return cpu_online(mm, cpu);
}

int mm_num_online_cpus(struct mm *mm)
{
	if (!mm || !mm->cpus)
		return 0;
	return count_online(mm_smp(mm));
}

/* cpuhp_setup_state_nocalls(): a new state at the end of the table; nothing runs now. */
int mm_cpuhp_register(struct mm *mm, const char *name, mm_cpuhp_fn online, mm_cpuhp_fn dead)
{
	if (!mm || !mm->cpus || !name)
		return -EINVAL;
	struct mm_smp *smp = mm_smp(mm);
	int id = -ENOSPC;
	cpus_write_lock(smp);
	if (smp->nr_cpuhp < MM_CPUHP_MAX) {
		id = smp->nr_cpuhp++;
		smp->cpuhp[id] = (struct mm_cpuhp_state){ name, online, dead };
	}
	cpus_write_unlock(smp);
	return id;
}

/* cpuhp_remove_state_nocalls(): the slot stays (ids are stable), empty. */
void mm_cpuhp_remove(struct mm *mm, int state)
{
	if (!mm || !mm->cpus)
		return;
	struct mm_smp *smp = mm_smp(mm);
	cpus_write_lock(smp);
	if (state >= 0 && state < smp->nr_cpuhp)
		smp->cpuhp[state] = (struct mm_cpuhp_state){ NULL, NULL, NULL };
	cpus_write_unlock(smp);
}

/* SPDX-License-Identifier: MIT */
/*
 * test_cpu_preempt.c - preempt counting and T1; the scheduler hook at each
 * kind of preemption point (and nowhere in a build without test hooks);
 * migration through the hook changes smp_processor_id() and is refused
 * where preemption, interrupts or migration are disabled; the kernel's
 * debug checks (smp_processor_id in preemptible code, local_lock and
 * spinlock recursion) abort.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "mm/cpu.h"
#include "test.h"

#ifdef MM_TEST_HOOKS
static const bool hooks = true;
#else
static const bool hooks = false;
#endif

/* ---- preempt counting and T1 ---- */

static bool t1_violated(struct mm *mm, const char *needle)
{
	struct mm_violation v;
	bool ok = mm_check(mm, 1, &v);
	if (ok)
		return false;
	if (v.inv != MM_INV_T1 || !strstr(v.msg, needle)) {
		fprintf(stderr, "unexpected violation: %s\n", v.msg);
		return false;
	}
	return true;
}

static void test_t1(struct mm *mm)
{
	unsigned long flags;
	spinlock_t lock;
	local_lock_t ll;

	spin_lock_init(&lock);
	local_lock_init(&ll);
	CHECK_MM(mm, 1);
	CHECK(preempt_count() == 0 && preemptible());

	preempt_disable();
	preempt_disable();
	CHECK(preempt_count() == 2 && !preemptible());
	CHECK(t1_violated(mm, "preempt_count is 2"));
	preempt_enable();
	CHECK(t1_violated(mm, "preempt_count is 1"));
	preempt_enable();
	CHECK_MM(mm, 1);

	local_irq_save(flags);
	CHECK(irqs_disabled() && !preemptible());
	CHECK(t1_violated(mm, "irqs disabled is 1"));
	local_irq_restore(flags);
	CHECK(!irqs_disabled());
	CHECK_MM(mm, 1);

	/* nested saves restore in order */
	unsigned long f2;
	local_irq_save(flags);
	local_irq_save(f2);
	CHECK(irqs_disabled_flags(f2) && !irqs_disabled_flags(flags));
	local_irq_restore(f2);
	CHECK(irqs_disabled());
	local_irq_restore(flags);
	CHECK(!irqs_disabled());

	spin_lock(&lock);
	CHECK(get_current()->lock_depth == 1 && preempt_count() == 1);
	CHECK(t1_violated(mm, "locks held 1"));
	spin_unlock(&lock);
	CHECK_MM(mm, 1);

	/* a lock depth left behind on its own (as a raw trylock user could) */
	get_current()->lock_depth++;
	CHECK(t1_violated(mm, "locks held is 1"));
	get_current()->lock_depth--;

	spin_lock_irqsave(&lock, flags);
	CHECK(irqs_disabled() && preempt_count() == 1 && spin_is_locked(&lock));
	CHECK(!spin_trylock(&lock));
	CHECK(preempt_count() == 1);
	spin_unlock_irqrestore(&lock, flags);
	CHECK(!irqs_disabled() && preempt_count() == 0 && !spin_is_locked(&lock));
	CHECK(spin_trylock(&lock) == 1);
	spin_unlock(&lock);

	local_lock(&ll);
	CHECK(preempt_count() == 1 && get_current()->lock_depth == 1);
	local_unlock(&ll);
	local_lock_irqsave(&ll, flags);
	CHECK(irqs_disabled() && preempt_count() == 0 && get_current()->lock_depth == 1);
	local_unlock_irqrestore(&ll, flags);
	CHECK_MM(mm, 1);

	migrate_disable();
	CHECK(preemptible());
	CHECK(t1_violated(mm, "migrate_disable is 1"));
	migrate_enable();
	CHECK_MM(mm, 1);
}

/* ---- the hook at each point ---- */

struct rec {
	unsigned long hits[MM_PP_NR];
	enum mm_pp last;
	int preempt_at_last;            /* preempt_count() seen by the hook */
	bool irqs_off_at_last;
	int migrate_to;                 /* >= 0: migrate there at the next PREEMPT_ENABLE */
	int migrate_ret;
	enum mm_pp try_migrate_at;      /* also try a migration at this point (NONE: never) */
	int tried_ret;
};

static void rec_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	struct rec *r = ctx;
	r->hits[point]++;
	r->last = point;
	r->preempt_at_last = preempt_count();
	r->irqs_off_at_last = irqs_disabled();
	if (point == MM_PP_PREEMPT_ENABLE && r->migrate_to >= 0) {
		r->migrate_ret = mm_migrate_current(mm, r->migrate_to);
		r->migrate_to = -1;
	}
	if (r->try_migrate_at != MM_PP_NONE && point == r->try_migrate_at) {
		r->tried_ret = mm_migrate_current(mm, MM_CPU_ANY);
		r->try_migrate_at = MM_PP_NONE;
	}
}

static unsigned long total(const struct rec *r)
{
	unsigned long n = 0;
	for (int i = 0; i < MM_PP_NR; i++)
		n += r->hits[i];
	return n;
}

static void test_points(struct mm *mm)
{
	struct rec r;
	unsigned long flags;
	spinlock_t lock;
	local_lock_t ll;

	memset(&r, 0, sizeof(r));
	r.migrate_to = -1;
	spin_lock_init(&lock);
	local_lock_init(&ll);
	mm_reset(mm);
	CHECK(raw_smp_processor_id(mm) == 0);   /* implicit points go to the instance used last */
	mm_set_sched_hook(mm, rec_hook, &r);

	unsigned long want[MM_PP_NR] = { 0 };
	preempt_disable();
	preempt_disable();
	preempt_enable();                        /* not to 0: no point */
	CHECK(total(&r) == 0);
	preempt_enable();
	want[MM_PP_PREEMPT_ENABLE]++;
	CHECK(r.hits[MM_PP_PREEMPT_ENABLE] == want[MM_PP_PREEMPT_ENABLE] * hooks);
	if (hooks)
		CHECK(r.last == MM_PP_PREEMPT_ENABLE && r.preempt_at_last == 0);

	spin_lock(&lock);
	spin_unlock(&lock);
	want[MM_PP_SPIN_UNLOCK]++;
	if (hooks)
		CHECK(r.last == MM_PP_SPIN_UNLOCK && r.preempt_at_last == 0 && !r.irqs_off_at_last);

	local_lock(&ll);
	local_unlock(&ll);
	want[MM_PP_LOCAL_UNLOCK]++;
	local_lock_irqsave(&ll, flags);
	local_unlock_irqrestore(&ll, flags);
	want[MM_PP_LOCAL_UNLOCK]++;
	if (hooks)
		CHECK(r.last == MM_PP_LOCAL_UNLOCK && !r.irqs_off_at_last);

	local_irq_save(flags);
	unsigned long f2;
	local_irq_save(f2);
	local_irq_restore(f2);                   /* still disabled: no point */
	local_irq_restore(flags);
	want[MM_PP_IRQ_RESTORE]++;
	if (hooks)
		CHECK(r.last == MM_PP_IRQ_RESTORE && !r.irqs_off_at_last);

	/* spin_unlock_irqrestore: irqs come back first (still preempt-disabled), then preemption */
	r.try_migrate_at = MM_PP_IRQ_RESTORE;
	r.tried_ret = 12345;
	spin_lock_irqsave(&lock, flags);
	spin_unlock_irqrestore(&lock, flags);
	want[MM_PP_IRQ_RESTORE]++;
	want[MM_PP_SPIN_UNLOCK]++;
	if (hooks) {
		CHECK(r.last == MM_PP_SPIN_UNLOCK);
		CHECK_MSG(r.tried_ret == -EPERM, "migration inside spin_unlock_irqrestore, preempt "
			  "count still 1, returned %d", r.tried_ret);
	}

	mm_preempt_point(mm, MM_PP_TID_READ);
	want[MM_PP_TID_READ]++;
	mm_preempt_point(mm, MM_PP_BEFORE_CMPXCHG);
	want[MM_PP_BEFORE_CMPXCHG]++;
	mm_preempt_point(mm, MM_PP_AFTER_CMPXCHG);
	want[MM_PP_AFTER_CMPXCHG]++;
	mm_preempt_point(mm, MM_PP_PCP_LOCKED);
	want[MM_PP_PCP_LOCKED]++;

	for (int i = 0; i < MM_PP_NR; i++)
		CHECK_MSG(r.hits[i] == want[i] * hooks, "point %s: hook saw %lu, expected %lu",
			  mm_pp_name((enum mm_pp)i), r.hits[i], want[i] * hooks);
	struct mm_cpu_stats st;
	mm_cpu_get_stats(mm, 0, &st);
	for (int i = 0; i < MM_PP_NR; i++)
		CHECK_MSG(st.pp_hit[i] == want[i] * hooks, "point %s: counted %lu, expected %lu",
			  mm_pp_name((enum mm_pp)i), st.pp_hit[i], want[i] * hooks);
	CHECK(strcmp(mm_pp_name(MM_PP_SPIN_UNLOCK), "spin_unlock") == 0);
	CHECK(strcmp(mm_pp_name(MM_PP_NR), "?") == 0);

	/* a task holding no vCPU of the instance reaches no implicit point of it */
	CHECK(mm_cpu_detach(mm) == 0);
	unsigned long before = total(&r);
	preempt_disable();
	preempt_enable();
	CHECK(total(&r) == before);
	mm_preempt_point(mm, MM_PP_USER);        /* explicit: still counted, and hooked */
	CHECK(total(&r) == before + hooks);
	mm_cpu_get_stats(mm, -1, &st);
	CHECK(st.pp_hit[MM_PP_USER] == (unsigned long)hooks);
	mm_set_sched_hook(mm, NULL, NULL);
}

/* ---- migration ---- */

static void test_migration(struct mm *mm)
{
	struct rec r;
	unsigned long flags;
	memset(&r, 0, sizeof(r));
	mm_reset(mm);
	mm_set_sched_hook(mm, rec_hook, &r);

	CHECK(get_cpu(mm) == 0);
	r.migrate_to = 2;
	put_cpu();                                /* PREEMPT_ENABLE: the hook moves us */
	int cpu = get_cpu(mm);
	put_cpu();
	if (hooks) {
		CHECK(r.migrate_ret == 2);
		CHECK_MSG(cpu == 2, "smp_processor_id is %d after a migration to 2", cpu);
		CHECK(mm_cpu_holder(mm, 0) == NULL && mm_cpu_holder(mm, 2) == mm_task_current());
	} else {
		CHECK(cpu == 0);
	}

	/* refused while preemption, interrupts or migration are disabled */
	int here = mm_cpu_current(mm);
	preempt_disable();
	CHECK(mm_migrate_current(mm, 1) == -EPERM);
	preempt_enable();
	local_irq_save(flags);
	CHECK(mm_migrate_current(mm, 1) == -EPERM);
	local_irq_restore(flags);
	migrate_disable();
	CHECK(mm_migrate_current(mm, 1) == -EPERM);
	CHECK(smp_processor_id(mm) == here);      /* migrate_disable satisfies DEBUG_PREEMPT */
	migrate_enable();
	CHECK(mm_cpu_current(mm) == here);

	/* and allowed where preemptible: direct calls count at point NONE */
	CHECK(mm_migrate_current(mm, 1) == 1);
	CHECK(mm_cpu_current(mm) == 1);
	CHECK(mm_migrate_current(mm, 1) == 1);    /* already there: no migration */
	CHECK(mm_migrate_current(mm, 7) == -EINVAL);
	int any = mm_migrate_current(mm, MM_CPU_ANY);
	CHECK(any >= 0 && any != 1);              /* "any" prefers another vCPU */

	struct mm_cpu_stats st;
	mm_cpu_get_stats(mm, -1, &st);
	CHECK(st.migrations_refused == 3);
	CHECK(st.migrations_in == 2UL + hooks && st.migrations_out == 2UL + hooks);
	CHECK(st.pp_migrate[MM_PP_PREEMPT_ENABLE] == (unsigned long)hooks);
	CHECK(st.pp_migrate[MM_PP_NONE] == 2);
	CHECK(get_current()->nr_migrations >= 2);
	mm_set_sched_hook(mm, NULL, NULL);
	mm_cpu_print_stats(mm, stdout);
}

/* ---- the kernel's debug checks abort (MM_DEBUG >= 2) ---- */

static struct mm *dmm;

static void misuse_smp_processor_id(void)
{
	(void)smp_processor_id(dmm);
}
static void misuse_local_lock(void)
{
	local_lock_t ll;
	local_lock_init(&ll);
	local_lock(&ll);
	local_lock(&ll);
}
static void misuse_spin_recursion(void)
{
	spinlock_t l;
	spin_lock_init(&l);
	spin_lock(&l);
	spin_lock(&l);
}
static void misuse_unlock_unlocked(void)
{
	spinlock_t l;
	spin_lock_init(&l);
	preempt_disable();
	get_current()->lock_depth++;
	spin_unlock(&l);
}
static void misuse_detach_atomic(void)
{
	(void)raw_smp_processor_id(dmm);
	preempt_disable();
	mm_cpu_detach(dmm);
}

static void test_debug_checks(struct mm *mm)
{
	dmm = mm;
	mm_reset(mm);
	if (MM_DEBUG >= 2) {
		CHECK_MSG(test_aborts(misuse_smp_processor_id), "smp_processor_id() in preemptible code");
		CHECK_MSG(test_aborts(misuse_local_lock), "local_lock recursion");
		CHECK_MSG(test_aborts(misuse_spin_recursion), "spinlock recursion");
		CHECK_MSG(test_aborts(misuse_unlock_unlocked), "spinlock already unlocked");
	}
	if (MM_DEBUG >= 1)
		CHECK_MSG(test_aborts(misuse_detach_atomic), "detach while preemption is disabled");
}

int main(void)
{
	struct mm *mm = test_make_mm(3, false);
	REQUIRE(mm);
	test_debug_checks(mm);      /* forks: before any thread exists */
	test_t1(mm);
	test_points(mm);
	test_migration(mm);
	mm_destroy(mm);
	TEST_DONE();
}

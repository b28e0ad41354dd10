/* SPDX-License-Identifier: MIT */
/*
 * pcp.c - fuzz target for the per-cpu page lists: several vCPUs in one
 * thread (an op switches the vCPU the task holds with mm_cpu_attach), order
 * 0..3 alloc/free with frees on another vCPU than the allocation (remote
 * free), drain_local_pages / drain_all_pages, runtime high/batch changes
 * (mm_pcp_update, high below batch included, the high fraction), the buddy
 * prefetch on and off, offline/online of vCPUs the task does not hold, and
 * interrupts and migrations injected at the preemption points: the `inject`
 * op loads a plan (2 bits per preemption point reached inside the ops that
 * follow, never in the harness's checks) that the scheduler hook consumes;
 * the interrupt handler allocates or frees GFP_ATOMIC pages of a small pool
 * (shadow kind K_IRQ) as its own plan says; the CPU model's API corners
 * (cpu_api) and a hotplug state of the target's own whose online callback
 * fails on demand (cpuhp).
 *
 * Checked on top of the harness's per-op mm_check (PGALLOC - PGFREE against
 * the allocated pages, pcp counts against their lists, ...) and the shadow:
 *  - every page handed out (by the task or by the interrupt) passes the
 *    page checks of pages.c;
 *  - after drain_local_pages the current vCPU's pcp lists are empty in
 *    every zone, after drain_all_pages every vCPU's, unless an interrupt ran
 *    during the drain (it may refill them);
 *  - an offline vCPU's lists are empty; attach and hotplug calls return
 *    what cpu.h promises.
 */
#include <errno.h>
#include <string.h>

#include "common/cgen.h"
#include "common/configs.h"
#include "common/gfp_args.h"
#include "common/harness.h"
#include "common/instance.h"
#include "common/pages.h"
#include "common/shadow.h"
#include "mm/cpu.h"

enum { K_PAGES = MF_K_PAGES, K_IRQ };   /* the task's pages, the interrupt handler's pool */

#define IRQ_POOL_MAX 16
#define MF_MAX_HP 64      /* instances with the target's hotplug state */

static const char *const pcp_configs[] = { "micro", "tiny", "default", "holes", "unaligned" };
static const enum mf_config_kind pcp_config_kind[] = { MF_CFG_MICRO, MF_CFG_TINY, MF_CFG_DEFAULT,
						       MF_CFG_HOLES, MF_CFG_UNALIGNED };
static const char *const zone_sel[] = { "all", "DMA", "DMA32", "Normal", "Movable" };

struct pcp_state {
	struct mf_ctx *c;
	unsigned long plan;        /* sched hook decisions, 2 bits each, low first */
	unsigned int plan_left;    /* decisions left */
	unsigned long irq_plan;    /* handler actions, 2 bits each */
	unsigned int irq_left;
	unsigned int irq_order;    /* order of the handler's allocations (0..3) */
	bool in_hook;
	bool in_op;                /* an op runs (not the harness's check): injections allowed */
	unsigned long irqs;        /* handler runs this input */
	unsigned long migrations;  /* injected migrations that moved the task */
	unsigned int npool;        /* K_IRQ allocations live */
};

static struct pcp_state ps;

/* ------------------------------------------------------------ interrupts */

static void irq_actions(struct mf_ctx *c)
{
	unsigned int act = 0;

	if (!ps.in_op || c->tearing_down)
		return;
	if (ps.irq_left) {
		act = ps.irq_plan & 3;
		ps.irq_plan >>= 2;
		ps.irq_left--;
	}
	switch (act) {
	case 0:   /* allocate one order-0 page */
	case 1: { /* allocate one page of irq_order */
		unsigned int order = act ? ps.irq_order : 0;
		if (ps.npool >= IRQ_POOL_MAX || mf_shadow_full(c->sh))
			break;
		MF_C(c, "\t{\n");
		struct mf_alloc *a = mf_page_alloc(c, order, GFP_ATOMIC, K_IRQ);
		if (a) {
			mf_cgen_irq_keep(c, a->id, 'p');
			ps.npool++;
		}
		MF_C(c, "\t}\n");
		break;
	}
	case 2:   /* free one page of the pool */
	case 3: { /* free the whole pool */
		unsigned int n = act == 2 ? 1 : ps.npool;
		for (unsigned int k = 0; k < n; k++) {
			struct mf_alloc *a = mf_shadow_pick_kind(c->sh, ps.irqs + k, 1u << K_IRQ);
			if (!a)
				break;
			MF_C(c, "\t{\n");
			mf_cgen_irq_get(c, a->id, 'p');
			mf_page_free(c, a, false);
			MF_C(c, "\t}\n");
		}
		break;
	}
	}
}

/* The C reproducer's handler makes the calls of this run again (mf_cgen_irq_begin). */
static void irq_handler(struct mm *mm, int cpu, void *ctx)
{
	struct mf_ctx *c = ctx;
	(void)mm;
	(void)cpu;

	ps.irqs++;
	mf_cgen_irq_begin(c, ps.irqs);
	irq_actions(c);
	mf_cgen_irq_end(c);
}

static void sched_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	struct mf_ctx *c = ctx;
	unsigned long n = mf_cgen_point(c);      /* the C reproducer's hook counts every point too */

	if (!ps.in_op || c->tearing_down || ps.in_hook || !ps.plan_left || mm_in_interrupt())
		return;
	unsigned int d = ps.plan & 3;
	ps.plan >>= 2;
	ps.plan_left--;
	ps.in_hook = true;
	switch (d) {
	case 0:
		break;
	case 1:
		mf_cgen_act(c, n, (int)point, 1, false, 0, 0);   /* before the interrupt: a run dying in the handler keeps it */
		mm_raise_irq(mm);
		break;
	case 2:
	case 3: {
		size_t act = mf_cgen_act(c, n, (int)point, d == 3, false, 0, 0);
		if (d == 3)
			mm_raise_irq(mm);
		int before = mm_cpu_current(mm);
		int to = mm_migrate_current(mm, MM_CPU_ANY);
		mf_cgen_act_mig(c, act, MM_CPU_ANY, to);
		if (to != before)
			ps.migrations++;
		break;
	}
	}
	ps.in_hook = false;
}

static void pool_forget(struct mf_ctx *c, struct mf_alloc *a)
{
	(void)c;
	if (a->kind == K_IRQ && ps.npool)
		ps.npool--;
}

/* ------------------------------------------------------------ helpers */

static int nr_cpus(struct mf_ctx *c) { return (int)mf_config(c)->nr_cpus; }

/* The first online vCPU from @sel on (modulo the vCPUs). */
static int online_cpu(struct mf_ctx *c, long sel)
{
	int n = nr_cpus(c);
	for (int k = 0; k < n; k++) {
		int cpu = (int)((sel + k) % n);
		if (mm_cpu_is_online(c->mm, cpu))
			return cpu;
	}
	mf_fail(c, "C1", "no vCPU is online");
}

static void attach(struct mf_ctx *c, int cpu)
{
	mf_cgen_call(c, "(void)mm_cpu_attach(mm, %d);", cpu);
	int r = mm_cpu_attach(c->mm, cpu);
	MF_C(c, "\texpect(%u, mm_cpu_attach(mm, %d) == %d && mm_cpu_current(mm) == %d, \"mm_cpu_attach of an online vCPU\");\n",
	     c->cur, cpu, cpu, cpu);
	if (r != cpu)
		mf_fail(c, "C1", "mm_cpu_attach(%d) of an online vCPU returned %d", cpu, r);
	if (mm_cpu_current(c->mm) != cpu)
		mf_fail(c, "C1", "after mm_cpu_attach(%d) mm_cpu_current() is %d", cpu, mm_cpu_current(c->mm));
}

/*
 * Every populated zone's pcp of @cpu is empty.  A check, not the op: no
 * injection at mm_pcp_info's pcp locks, whose interrupt could refill a list
 * between two zones.  Their points still count for the C reproducer's hook
 * (its pcp_empty() reaches them too).
 */
static void check_empty(struct mf_ctx *c, int cpu, const char *after)
{
	bool in_op = ps.in_op;

	ps.in_op = false;
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct mm_pcp_info info;
		if (!mm_zone(c->mm, (enum zone_type)z) || mm_pcp_info(c->mm, (enum zone_type)z, cpu, &info))
			continue;
		if (info.count != 0)
			mf_fail(c, "P1", "after %s the pcp of vCPU %d in zone %s still holds %d pages", after, cpu,
				mf_zone_name(z), info.count);
	}
	ps.in_op = in_op;
}

static void expect_empty(struct mf_ctx *c, int cpu, const char *after)
{
	MF_C(c, "\tpcp_empty(%u, %d, \"%s\");\n", c->cur, cpu, after);
	check_empty(c, cpu, after);
}

static struct zone *zone_arg(struct mf_ctx *c, long sel, bool *skip)
{
	*skip = false;
	if (sel == 0)
		return NULL;
	struct zone *z = mm_zone(c->mm, (enum zone_type)(sel - 1));
	if (!z)
		*skip = true;
	return z;
}

/* ------------------------------------------------------------ ops */

static void op_cpu(struct mf_ctx *c, struct mf_op *op)
{
	int cpu = online_cpu(c, op->a[0]);
	attach(c, cpu);
	op->res[0] = cpu;
}

static void op_alloc(struct mf_ctx *c, struct mf_op *op)
{
	unsigned int order = (unsigned int)op->a[0];
	if (mf_shadow_full(c->sh)) {
		op->res[0] = -2;
		return;
	}
	struct mf_alloc *a = mf_page_alloc(c, order, (gfp_t)op->a[1], K_PAGES);
	mf_res_alloc(op, a, order);
}

static void op_alloc_many(struct mf_ctx *c, struct mf_op *op)
{
	long n = op->a[0], got = 0;
	while (got < n && !mf_shadow_full(c->sh) &&
	       mf_page_alloc(c, (unsigned int)op->a[1], (gfp_t)op->a[2], K_PAGES))
		got++;
	op->res[0] = got;
}

/* Free on vCPU @cpu (remote when the page came from another), then come back. */
static void op_free_on(struct mf_ctx *c, struct mf_op *op)
{
	int home = mm_cpu_current(c->mm), cpu = online_cpu(c, op->a[0]);
	long n = op->a[2], done = 0;

	attach(c, cpu);
	while (done < n) {
		struct mf_alloc *a = mf_shadow_pick_kind(c->sh, (unsigned long)op->a[1] + (unsigned long)done,
							 1u << K_PAGES);
		if (!a)
			break;
		mf_page_free(c, a, false);
		done++;
	}
	/* An injected migration may have moved us; home may have gone offline meanwhile: not here. */
	if (home >= 0 && mm_cpu_is_online(c->mm, home))
		attach(c, home);
	op->res[0] = done;
}

static void op_drain_local(struct mf_ctx *c, struct mf_op *op)
{
	bool skip;
	struct zone *z = zone_arg(c, op->a[0], &skip);
	unsigned long irqs = ps.irqs, migrations = ps.migrations;
	if (skip) {
		op->res[0] = -1;
		return;
	}
	if (z)
		mf_cgen_call(c, "drain_local_pages(mm, mm_zone(mm, %ld));", op->a[0] - 1);
	else
		mf_cgen_call(c, "drain_local_pages(mm, NULL);");
	drain_local_pages(c->mm, z);
	if (z)
		MF_C(c, "\tdrain_local_pages(mm, mm_zone(mm, %ld));\n", op->a[0] - 1);
	else
		MF_C(c, "\tdrain_local_pages(mm, NULL);\n");
	op->res[0] = mm_cpu_current(c->mm);
	/*
	 * The kernel's caller is pinned to its CPU; ours may be moved by an
	 * injected migration mid-drain, and then it drained another vCPU.
	 */
	if (!z && ps.irqs == irqs && ps.migrations == migrations && op->res[0] >= 0)
		expect_empty(c, (int)op->res[0], "drain_local_pages(NULL)");
}

static void op_drain_all(struct mf_ctx *c, struct mf_op *op)
{
	bool skip;
	struct zone *z = zone_arg(c, op->a[0], &skip);
	unsigned long irqs = ps.irqs;
	if (skip) {
		op->res[0] = -1;
		return;
	}
	if (z)
		mf_cgen_call(c, "drain_all_pages(mm, mm_zone(mm, %ld));", op->a[0] - 1);
	else
		mf_cgen_call(c, "drain_all_pages(mm, NULL);");
	drain_all_pages(c->mm, z);
	if (z)
		MF_C(c, "\tdrain_all_pages(mm, mm_zone(mm, %ld));\n", op->a[0] - 1);
	else
		MF_C(c, "\tdrain_all_pages(mm, NULL);\n");
	op->res[0] = 0;
	if (!z && ps.irqs == irqs)
		for (int cpu = 0; cpu < nr_cpus(c); cpu++)
			expect_empty(c, cpu, "drain_all_pages(NULL)");
}

static void op_pcp_update(struct mf_ctx *c, struct mf_op *op)
{
	mf_cgen_call(c, "(void)mm_pcp_update(mm, %ld, %ld);", op->a[0], op->a[1]);
	int r = mm_pcp_update(c->mm, (unsigned int)op->a[0], (unsigned int)op->a[1]);
	MF_C(c, "\texpect(%u, mm_pcp_update(mm, %ld, %ld) == 0, \"mm_pcp_update in range\");\n", c->cur, op->a[0], op->a[1]);
	op->res[0] = r;
	if (r)
		mf_fail(c, "C1", "mm_pcp_update(%ld, %ld) in range returned %d", op->a[0], op->a[1], r);
}

static void op_high_fraction(struct mf_ctx *c, struct mf_op *op)
{
	mf_cgen_call(c, "(void)mm_set_percpu_pagelist_high_fraction(mm, %ld);", op->a[0]);
	op->res[0] = mm_set_percpu_pagelist_high_fraction(c->mm, (unsigned int)op->a[0]);
	MF_C(c, "\tdiverged(%u, mm_set_percpu_pagelist_high_fraction(mm, %ld) != %ld, \"its result\");\n", c->cur, op->a[0],
	     op->res[0]);
}

static void op_prefetch(struct mf_ctx *c, struct mf_op *op)
{
	MF_C(c, "\tmm_set_pcp_prefetch(mm, %d);\n", (int)op->a[0]);
	mm_set_pcp_prefetch(c->mm, op->a[0] != 0);
}

static void op_offline(struct mf_ctx *c, struct mf_op *op)
{
	int n = nr_cpus(c), cur = mm_cpu_current(c->mm);
	int cpu = (int)(op->a[0] % n);
	if (cpu == cur)
		cpu = (cpu + 1) % n;
	if (cpu == cur) {
		op->res[0] = -100;
		return;
	}
	int online_before = mm_num_online_cpus(c->mm);
	bool was = mm_cpu_is_online(c->mm, cpu);
	unsigned long irqs = ps.irqs;
	mf_cgen_call(c, "(void)mm_cpu_offline(mm, %d);", cpu);
	int r = mm_cpu_offline(c->mm, cpu);
	MF_C(c, "\texpect(%u, mm_cpu_offline(mm, %d) == 0 && !mm_cpu_is_online(mm, %d) && mm_num_online_cpus(mm) == %d, "
	     "\"mm_cpu_offline of a vCPU nobody holds\");\n", c->cur, cpu, cpu, online_before - (was ? 1 : 0));
	op->res[0] = r;
	op->res[1] = cpu;
	if (r != 0)
		mf_fail(c, "C1", "mm_cpu_offline(%d) of a vCPU nobody holds returned %d (%d online)", cpu, r,
			online_before);
	if (mm_cpu_is_online(c->mm, cpu) || mm_num_online_cpus(c->mm) != online_before - (was ? 1 : 0))
		mf_fail(c, "C1", "after mm_cpu_offline(%d) the vCPU is still online or the count is wrong", cpu);
	if (ps.irqs == irqs)
		expect_empty(c, cpu, "mm_cpu_offline");
}

static void op_online(struct mf_ctx *c, struct mf_op *op)
{
	int cpu = (int)(op->a[0] % nr_cpus(c));
	mf_cgen_call(c, "(void)mm_cpu_online(mm, %d);", cpu);
	int r = mm_cpu_online(c->mm, cpu);
	MF_C(c, "\texpect(%u, mm_cpu_online(mm, %d) == 0 && mm_cpu_is_online(mm, %d), \"mm_cpu_online\");\n", c->cur, cpu,
	     cpu);
	op->res[0] = r;
	op->res[1] = cpu;
	if (r != 0 || !mm_cpu_is_online(c->mm, cpu))
		mf_fail(c, "C1", "mm_cpu_online(%d) returned %d", cpu, r);
}

static void op_inject(struct mf_ctx *c, struct mf_op *op)
{
	MF_C(c, "\t/* no allocator call: the hook acts at the next preemption points (hook_script() after main()) */\n");
	ps.plan = (unsigned long)op->a[0];
	ps.plan_left = (unsigned int)op->a[1];
	ps.irq_plan = (unsigned long)op->a[2];
	ps.irq_left = 16;
	ps.irq_order = (unsigned int)op->a[3];
}

static void op_irq(struct mf_ctx *c, struct mf_op *op)
{
	MF_C(c, "\texpect(%u, mm_raise_irq(mm), \"mm_raise_irq outside any critical section runs the handler\");\n", c->cur);
	op->res[0] = mm_raise_irq(c->mm);
	op->res[1] = (long)ps.irqs;
	op->res[2] = ps.npool;
	if (!op->res[0])
		mf_fail(c, "C1", "mm_raise_irq() outside any critical section, with a handler set, was refused");
}

/*
 * The CPU model's API corners, single-threaded, each with what cpu.h
 * promises: detach / attach_any, mm_this_cpu, mm_cpu_holder, migrations to
 * a bad vCPU, to any, without a vCPU; hotplug of a bad vCPU and the
 * non-waiting mm_cpu_try_offline; the statistics against what the target
 * counted; interrupts refused without a vCPU or a handler, through the
 * signal entry, and one left pending with no handler (dropped).
 */
static const char *const api_kinds[] = { "attach_any", "this_cpu", "holder", "migrate_bad", "migrate_any",
					  "migrate_detached", "hotplug_bad", "try_offline", "stats", "raise_detached",
					  "signal", "pending_no_handler" };
enum { API_ATTACH_ANY, API_THIS_CPU, API_HOLDER, API_MIGRATE_BAD, API_MIGRATE_ANY, API_MIGRATE_DETACHED,
       API_HOTPLUG_BAD, API_TRY_OFFLINE, API_STATS, API_RAISE_DETACHED, API_SIGNAL, API_PENDING_NO_HANDLER };

static void expect_eq(struct mf_ctx *c, const char *what, long got, long want)
{
	if (got != want)
		mf_fail(c, "C1", "%s returned %ld, expected %ld", what, got, want);
}

static unsigned long irqs_delivered(struct mf_ctx *c, unsigned long *dropped)
{
	struct mm_cpu_stats st;
	if (mm_cpu_get_stats(c->mm, -1, &st))
		mf_fail(c, "C1", "mm_cpu_get_stats(-1) failed");
	if (dropped)
		*dropped = st.irqs_dropped;
	return st.irqs_delivered;
}

static void op_cpu_api(struct mf_ctx *c, struct mf_op *op)
{
	int n = nr_cpus(c), cur = mm_cpu_current(c->mm), r;
	unsigned long irqs = ps.irqs, d0, d1, n1;

	op->res[0] = 0;
	switch (op->a[0]) {
	case API_ATTACH_ANY:
		MF_C(c, "\texpect(%u, mm_cpu_detach(mm) == %d && mm_cpu_detach(mm) == %d && mm_cpu_current(mm) == -1, "
		     "\"mm_cpu_detach\");\n\tattach_any(%u, %d);\n", c->cur, cur >= 0 ? 0 : -ENOENT, -ENOENT, c->cur, n);
		expect_eq(c, "mm_cpu_detach", mm_cpu_detach(c->mm), cur >= 0 ? 0 : -ENOENT);
		expect_eq(c, "mm_cpu_detach of no vCPU", mm_cpu_detach(c->mm), -ENOENT);
		expect_eq(c, "mm_cpu_current after detach", mm_cpu_current(c->mm), -1);
		r = mm_cpu_attach_any(c->mm);
		if (r < 0 || r >= n || !mm_cpu_is_online(c->mm, r) || mm_cpu_current(c->mm) != r)
			mf_fail(c, "C1", "mm_cpu_attach_any returned %d (current %d)", r, mm_cpu_current(c->mm));
		expect_eq(c, "mm_cpu_attach_any when attached", mm_cpu_attach_any(c->mm), r);
		op->res[0] = r;
		break;
	case API_THIS_CPU:
		MF_C(c, "\t{ int r = mm_this_cpu(mm); expect(%u, r >= 0 && (%d < 0 || r == %d) && mm_cpu_current(mm) == r, "
		     "\"mm_this_cpu\"); }\n", c->cur, cur, cur);
		r = mm_this_cpu(c->mm);
		if (r < 0 || (cur >= 0 && r != cur) || mm_cpu_current(c->mm) != r)
			mf_fail(c, "C1", "mm_this_cpu is %d, mm_cpu_current was %d and is %d", r, cur, mm_cpu_current(c->mm));
		op->res[0] = r;
		break;
	case API_HOLDER:
		MF_C(c, "\tholder_check(%u, %d);\n", c->cur, n);
		cur = mm_this_cpu(c->mm);
		for (int cpu = 0; cpu < n; cpu++)
			if ((mm_cpu_holder(c->mm, cpu) == mm_task_current()) != (cpu == cur) ||
			    (cpu != cur && mm_cpu_holder(c->mm, cpu)))
				mf_fail(c, "C1", "mm_cpu_holder(%d) is wrong (the task holds vCPU %d, nobody else any)", cpu, cur);
		if (mm_cpu_holder(c->mm, n) || mm_cpu_holder(c->mm, -1))
			mf_fail(c, "C1", "mm_cpu_holder of a bad vCPU is not NULL");
		if (strcmp(mm_pp_name(MM_PP_SPIN_UNLOCK), "spin_unlock") || strcmp(mm_pp_name(MM_PP_NR), "?"))
			mf_fail(c, "C1", "mm_pp_name is wrong");
		break;
	case API_MIGRATE_BAD:
		MF_C(c, "\tmm_this_cpu(mm);\n\texpect(%u, mm_migrate_current(mm, %d) == %d && mm_migrate_current(mm, %d) == %d && "
		     "mm_cpu_attach(mm, %d) == %d, \"migrations and attaches to a bad vCPU are -EINVAL\");\n", c->cur,
		     n + (int)op->a[1], -EINVAL, -2 - (int)op->a[1], -EINVAL, n + (int)op->a[1], -EINVAL);
		mm_this_cpu(c->mm);
		expect_eq(c, "mm_migrate_current(nr_cpus)", mm_migrate_current(c->mm, n + (int)op->a[1]), -EINVAL);
		expect_eq(c, "mm_migrate_current(-2)", mm_migrate_current(c->mm, -2 - (int)op->a[1]), -EINVAL);
		expect_eq(c, "mm_cpu_attach(nr_cpus)", mm_cpu_attach(c->mm, n + (int)op->a[1]), -EINVAL);
		break;
	case API_MIGRATE_ANY:
		MF_C(c, "\tmm_this_cpu(mm);\n");
		mm_this_cpu(c->mm);
		mf_cgen_call(c, "(void)mm_migrate_current(mm, MM_CPU_ANY);");
		r = mm_migrate_current(c->mm, MM_CPU_ANY);
		MF_C(c, "\t{ int r = mm_migrate_current(mm, MM_CPU_ANY); expect(%u, r >= 0 && "
		     "mm_cpu_is_online(mm, r) && mm_cpu_current(mm) == r, \"mm_migrate_current(MM_CPU_ANY)\"); "
		     "diverged(%u, r != %d, \"the vCPU it chose\"); }\n", c->cur, c->cur, r);
		if (r < 0 || !mm_cpu_is_online(c->mm, r) || mm_cpu_current(c->mm) != r)
			mf_fail(c, "C1", "mm_migrate_current(MM_CPU_ANY) returned %d (current %d)", r, mm_cpu_current(c->mm));
		op->res[0] = r;
		break;
	case API_MIGRATE_DETACHED:
		MF_C(c, "\tmm_cpu_detach(mm);\n\texpect(%u, mm_migrate_current(mm, 0) == %d, \"no migration without a vCPU\");\n",
		     c->cur, -ENOENT);
		mm_cpu_detach(c->mm);
		expect_eq(c, "mm_migrate_current without a vCPU", mm_migrate_current(c->mm, 0), -ENOENT);
		attach(c, online_cpu(c, op->a[1]));
		break;
	case API_HOTPLUG_BAD:
		MF_C(c, "\texpect(%u, mm_cpu_offline(mm, %d) == %d && mm_cpu_online(mm, %d) == %d && mm_cpu_try_offline(mm, %d) == "
		     "%d && !mm_cpu_is_online(mm, %d) && !mm_cpu_is_online(mm, -1), \"hotplug of a bad vCPU is -EINVAL\");\n",
		     c->cur, n + (int)op->a[1], -EINVAL, -1 - (int)op->a[1], -EINVAL, n, -EINVAL, n);
		expect_eq(c, "mm_cpu_offline(nr_cpus)", mm_cpu_offline(c->mm, n + (int)op->a[1]), -EINVAL);
		expect_eq(c, "mm_cpu_online(-1)", mm_cpu_online(c->mm, -1 - (int)op->a[1]), -EINVAL);
		expect_eq(c, "mm_cpu_try_offline(nr_cpus)", mm_cpu_try_offline(c->mm, n), -EINVAL);
		if (mm_cpu_is_online(c->mm, n) || mm_cpu_is_online(c->mm, -1))
			mf_fail(c, "C1", "a bad vCPU number is online");
		break;
	case API_TRY_OFFLINE: {
		/*
		 * A vCPU other than the task's goes down without waiting: nobody
		 * holds it, and it is never the last online one (the task's is
		 * online), so 0 - also when it is offline already.  The -EBUSY of
		 * the last online vCPU: when the task's own is the only one left,
		 * mm_cpu_try_offline() of it must refuse (after detaching the task,
		 * which attaches again).
		 */
		int cpu = (int)(op->a[1] % n);
		MF_C(c, "\tmm_this_cpu(mm);\n");
		cur = mm_this_cpu(c->mm);
		if (cpu == cur)
			cpu = (cpu + 1) % n;
		if (cpu == cur)
			break;
		mf_cgen_call(c, "(void)mm_cpu_try_offline(mm, %d);", cpu);
		r = mm_cpu_try_offline(c->mm, cpu);
		MF_C(c, "\texpect(%u, mm_cpu_try_offline(mm, %d) == 0, \"mm_cpu_try_offline of a vCPU nobody holds, not the last "
		     "online one\");\n", c->cur, cpu);
		op->res[0] = r;
		if (r != 0)
			mf_fail(c, "C1", "mm_cpu_try_offline(%d) of a vCPU nobody holds returned %d", cpu, r);
		MF_C(c, "\texpect(%u, !mm_cpu_is_online(mm, %d), \"mm_cpu_try_offline takes the vCPU down\");\n", c->cur, cpu);
		if (!r && mm_cpu_is_online(c->mm, cpu))
			mf_fail(c, "C1", "after mm_cpu_try_offline(%d) it is still online", cpu);
		if (!r && ps.irqs == irqs)
			expect_empty(c, cpu, "mm_cpu_try_offline");
		if (mm_num_online_cpus(c->mm) == 1) {
			MF_C(c, "\texpect(%u, mm_cpu_try_offline(mm, %d) == %d && mm_cpu_is_online(mm, %d), "
			     "\"mm_cpu_try_offline of the last online vCPU is -EBUSY\");\n", c->cur, cur, -EBUSY, cur);
			r = mm_cpu_try_offline(c->mm, cur);
			if (r != -EBUSY || !mm_cpu_is_online(c->mm, cur))
				mf_fail(c, "C1", "mm_cpu_try_offline(%d) of the last online vCPU returned %d (online: %d)", cur,
					r, mm_cpu_is_online(c->mm, cur));
			attach(c, cur);
			op->res[1] = r;
		}
		break;
	}
	case API_STATS: {
		struct mm_cpu_stats st, one;
		MF_C(c, "\tstats_check(%u, %d);\n", c->cur, n);
		unsigned long sum = 0;
		if (mm_cpu_get_stats(c->mm, -1, &st) || mm_cpu_get_stats(c->mm, n, &one) != -EINVAL)
			mf_fail(c, "C1", "mm_cpu_get_stats: -1 must work, nr_cpus must be -EINVAL");
		for (int cpu = 0; cpu < n; cpu++) {
			if (mm_cpu_get_stats(c->mm, cpu, &one))
				mf_fail(c, "C1", "mm_cpu_get_stats(%d) failed", cpu);
			sum += one.irqs_delivered;
		}
		/* Every handler run this input is one delivery (mm_reset zeroed the counters). */
		if (st.irqs_delivered != ps.irqs || sum != ps.irqs)
			mf_fail(c, "C1", "the vCPUs count %lu (sum %lu) interrupts delivered, the handler ran %lu times",
				st.irqs_delivered, sum, ps.irqs);
		op->res[0] = (long)st.irqs_delivered;
		break;
	}
	case API_RAISE_DETACHED:
		MF_C(c, "\traise_detached(%u);\n", c->cur);
		mm_cpu_detach(c->mm);
		d0 = irqs_delivered(c, NULL);
		if (mm_raise_irq(c->mm))
			mf_fail(c, "C1", "mm_raise_irq without a vCPU ran the handler");
		mm_irq_from_signal();
		if (ps.irqs != irqs || irqs_delivered(c, NULL) != d0)
			mf_fail(c, "C1", "an interrupt ran on a task that holds no vCPU");
		attach(c, online_cpu(c, op->a[1]));
		break;
	case API_SIGNAL:
		MF_C(c, "\tmm_this_cpu(mm);\n\t{ unsigned long i0 = irq_runs; expect(%u, mm_irq_from_signal() && irq_runs == i0 + 1, "
		     "\"mm_irq_from_signal with irqs enabled runs the handler once\"); }\n", c->cur);
		mm_this_cpu(c->mm);
		if (!mm_irq_from_signal() || ps.irqs != irqs + 1)
			mf_fail(c, "C1", "mm_irq_from_signal with irqs enabled did not run the handler once");
		break;
	case API_PENDING_NO_HANDLER: {
#ifndef MM_TEST_HOOKS
		/*
		 * A build without preemption points (release, clang-release): no
		 * point would find the interrupt pending, so it would stay pending
		 * and run at the next handler's exit.  Nothing to test: -1.
		 */
		op->res[0] = -1;
		break;
#endif
		/*
		 * No injections here: the counts below are of this one interrupt
		 * (an injected one would be dropped too, or run the handler once
		 * it is back).  The C file's hook acts only where the fuzz run's did.
		 */
		bool in_op = ps.in_op;
		ps.in_op = false;
		MF_C(c, "\tpending_no_handler(%u);\n", c->cur);
		mm_this_cpu(c->mm);
		mm_set_irq_handler(c->mm, NULL, NULL);
		if (mm_raise_irq(c->mm))
			mf_fail(c, "C1", "mm_raise_irq without a handler said it ran");
		irqs_delivered(c, &d0);
		mm_set_irq_pending(c->mm);
		drain_local_pages(c->mm, NULL);      /* its points find the interrupt pending: no handler, dropped */
		n1 = irqs_delivered(c, &d1);
		mm_set_irq_handler(c->mm, irq_handler, c);
		if (ps.irqs != irqs)
			mf_fail(c, "C1", "the handler ran while none was set");
		if (d1 != d0 + 1)
			mf_fail(c, "C1", "an interrupt pending with no handler was not dropped once (irqs_dropped %lu -> %lu)",
				d0, d1);
		/* Dropped means gone: the next points, with the handler back, deliver nothing (the pcp is empty already). */
		drain_local_pages(c->mm, NULL);
		if (ps.irqs != irqs || irqs_delivered(c, NULL) != n1)
			mf_fail(c, "C1", "an interrupt left pending with no handler ran later, once a handler was set");
		op->res[0] = (long)(d1 - d0);
		ps.in_op = in_op;
		break;
	}
	}
}

/*
 * A CPU hotplug state of the target's own (registered once per instance,
 * after the allocator's): its online callback fails on demand, which must
 * roll the bring-up back - the vCPU stays offline, the callbacks before it
 * undone - and its dead callback runs exactly once per vCPU going down.
 */
static struct { struct mm *mm; int id; } hp_reg[MF_MAX_HP];
static bool hp_fail;
static unsigned long hp_online_calls, hp_dead_calls;

static int hp_online(struct mm *mm, unsigned int cpu)
{
	(void)mm;
	(void)cpu;
	hp_online_calls++;
	return hp_fail ? -EIO : 0;
}

static int hp_dead(struct mm *mm, unsigned int cpu)
{
	(void)mm;
	(void)cpu;
	hp_dead_calls++;
	return 0;
}

static void hp_register(struct mf_ctx *c)
{
	unsigned int i;
	for (i = 0; i < MF_MAX_HP && hp_reg[i].mm; i++)
		if (hp_reg[i].mm == c->mm)
			return;
	if (i == MF_MAX_HP)
		return;                 /* more instances than slots: this one goes without (the op then skips) */
	if (mm_cpuhp_register(c->mm, NULL, hp_online, hp_dead) != -EINVAL)
		mf_fail(c, "C1", "mm_cpuhp_register without a name must be -EINVAL");
	int id = mm_cpuhp_register(c->mm, "mmfuzz/pcp:test", hp_online, hp_dead);
	if (id < 0)
		mf_fail(c, "C1", "mm_cpuhp_register failed: %d", id);
	mm_cpuhp_remove(c->mm, -1);         /* no such state: nothing happens */
	mm_cpuhp_remove(c->mm, 1000);
	hp_reg[i].mm = c->mm;
	hp_reg[i].id = id;
}

static void op_cpuhp(struct mf_ctx *c, struct mf_op *op)
{
	int n = nr_cpus(c), cur;
	int cpu = (int)(op->a[0] % n);
	unsigned int i;

	mf_cgen_call(c, "mm_this_cpu(mm);");
	cur = mm_this_cpu(c->mm);
	op->res[0] = -100;
	for (i = 0; i < MF_MAX_HP && hp_reg[i].mm != c->mm; i++)
		;
	MF_C(c, "\tmm_this_cpu(mm);\n");
	if (i == MF_MAX_HP)
		return;
	if (cpu == cur)
		cpu = (cpu + 1) % n;
	if (cpu == cur)
		return;
	bool was = mm_cpu_is_online(c->mm, cpu);
	MF_C(c, "\tcpuhp(%u, %d, %d, %d);\n", c->cur, cpu, was, (int)op->a[1]);
	unsigned long dead0 = hp_dead_calls, on0 = hp_online_calls, irqs = ps.irqs;
	int r = mm_cpu_offline(c->mm, cpu);
	if (r || hp_dead_calls != dead0 + (was ? 1 : 0))
		mf_fail(c, "C1", "mm_cpu_offline(%d) returned %d; the dead callback ran %lu times", cpu, r,
			hp_dead_calls - dead0);
	/*
	 * cpuhp() checks it in the C file; not by nulling c->cgen here, which
	 * stopped the count of the points the C file's hook counts as well.
	 */
	if (ps.irqs == irqs)
		check_empty(c, cpu, "mm_cpu_offline");
	hp_fail = op->a[1] != 0;
	r = mm_cpu_online(c->mm, cpu);
	hp_fail = false;
	op->res[0] = r;
	op->res[1] = cpu;
	if (hp_online_calls != on0 + 1)
		mf_fail(c, "C1", "bringing vCPU %d up ran the online callback %lu times", cpu, hp_online_calls - on0);
	if (op->a[1] ? r != -EIO || mm_cpu_is_online(c->mm, cpu) : r != 0 || !mm_cpu_is_online(c->mm, cpu))
		mf_fail(c, "C1", "mm_cpu_online(%d) with a%s online callback returned %d (online %d)", cpu,
			op->a[1] ? " failing" : "n", r, mm_cpu_is_online(c->mm, cpu));
	if (hp_dead_calls != dead0 + (was ? 1 : 0))
		mf_fail(c, "C1", "a failed bring-up ran the dead callback of the state that failed");
}

static void note_irq(FILE *f, const struct mf_op *op)
{
	fprintf(f, "raised %ld; %ld handler runs so far, %ld pages in its pool", op->res[0], op->res[1], op->res[2]);
}

static void note_res(FILE *f, const struct mf_op *op)
{
	fprintf(f, "%ld", op->res[0]);
}

/* ------------------------------------------------------------ the table */

/*
 * The C reproducer's hook counts preemption points from the start of each
 * op, as sched_hook does.  Injections happen inside ops only, as in the
 * slub target: the per-op mm_check that follows reaches preemption points
 * of its own (the zone locks' unlock and irq restore, at level 2 and up
 * every pcp's spin_lock), which would otherwise use up the plan in the
 * middle of the check - interrupts and migrations mid-check instead of
 * mid-operation, and an input whose injections depend on the check level
 * (fuzzing 2, repro and corpus replay 3, unchecked builds 0).  An
 * interrupt left pending at the end of an op runs there as a no-op.
 */
#define PCP_OP(fn)                                                         \
	static void w_##fn(struct mf_ctx *c, struct mf_op *op)            \
	{                                                                  \
		ps.in_op = true;                                           \
		mf_cgen_op_start(c);                                       \
		fn(c, op);                                                 \
		ps.in_op = false;                                          \
	}
PCP_OP(op_cpu)
PCP_OP(op_alloc)
PCP_OP(op_alloc_many)
PCP_OP(mf_op_free)
PCP_OP(op_free_on)
PCP_OP(mf_op_free_many)
PCP_OP(mf_op_touch)
PCP_OP(op_drain_local)
PCP_OP(op_drain_all)
PCP_OP(op_pcp_update)
PCP_OP(op_high_fraction)
PCP_OP(op_prefetch)
PCP_OP(op_offline)
PCP_OP(op_online)
PCP_OP(op_inject)
PCP_OP(op_irq)
PCP_OP(op_cpu_api)
PCP_OP(op_cpuhp)

static const struct mf_opdesc pcp_setup = {
	"setup", "the machine (a named config), the number of vCPUs and the buddy prefetch", NULL, NULL,
	{ MF_A_ENUM("config", pcp_configs), MF_A_INT("cpus", 2, 4), MF_A_BOOL("prefetch") },
};

static const struct mf_opdesc pcp_ops[] = {
	{ "cpu", "mm_cpu_attach: hold the first online vCPU from cpu on (a migration)", w_op_cpu, note_res,
	  { MF_A_INT("cpu", 0, 3) } },
	{ "alloc", "alloc_pages(gfp, order) on the current vCPU", w_op_alloc, mf_note_alloc,
	  { MF_A_INT("order", 0, 4), MF_A_GFP("gfp") } },
	{ "alloc_many", "up to n allocations, until one fails", w_op_alloc_many, mf_note_count,
	  { MF_A_INT("n", 1, 64), MF_A_INT("order", 0, 3), MF_A_GFP("gfp") } },
	{ "free", "__free_pages of a live allocation on the current vCPU", w_mf_op_free, mf_note_free,
	  { MF_A_IDX("idx") } },
	{ "free_on", "on vCPU cpu (the first online from it), free n live allocations from idx on, then back",
	  w_op_free_on, mf_note_count, { MF_A_INT("cpu", 0, 3), MF_A_IDX("idx"), MF_A_INT("n", 1, 32) } },
	{ "free_many", "free n live allocations from idx on", w_mf_op_free_many, mf_note_count,
	  { MF_A_INT("n", 1, 64), MF_A_IDX("idx") } },
	{ "touch", "check a live allocation's pattern, then write it anew", w_mf_op_touch, mf_note_free, { MF_A_IDX("idx") } },
	{ "drain_local", "drain_local_pages(zone) (all: NULL)", w_op_drain_local, note_res,
	  { MF_A_ENUM("zone", zone_sel) } },
	{ "drain_all", "drain_all_pages(zone) (all: NULL)", w_op_drain_all, note_res, { MF_A_ENUM("zone", zone_sel) } },
	{ "pcp_update", "mm_pcp_update(high, batch) (0: derived; high < batch allowed)", w_op_pcp_update, note_res,
	  { MF_A_INT("high", 0, 1024), MF_A_INT("batch", 0, 256) } },
	{ "high_fraction", "mm_set_percpu_pagelist_high_fraction(f) (0 or >= 8; below: refused)", w_op_high_fraction,
	  note_res, { MF_A_INT("f", 0, 64) } },
	{ "prefetch", "mm_set_pcp_prefetch(on)", w_op_prefetch, NULL, { MF_A_BOOL("on") } },
	{ "offline", "mm_cpu_offline of vCPU cpu (the next one if the task holds cpu)", w_op_offline, note_res,
	  { MF_A_INT("cpu", 0, 3) } },
	{ "online", "mm_cpu_online(cpu)", w_op_online, note_res, { MF_A_INT("cpu", 0, 3) } },
	{ "inject", "the next n preemption points in ops act on plan (2 bits each: 0 nothing, 1 irq, 2 migrate, 3 both); "
	  "the interrupt handler's next 16 runs act on irq (2 bits each: 0 alloc order 0, 1 alloc order, "
	  "2 free one, 3 free the pool)", w_op_inject, NULL,
	  { MF_A_HEX("plan", 0, 0xffffffffL), MF_A_INT("n", 0, 16), MF_A_HEX("irq", 0, 0xffffffffL),
	    MF_A_INT("order", 0, 3) } },
	{ "irq", "mm_raise_irq now (outside any point)", w_op_irq, note_irq, { MF_A_INT("unused", 0, 0) } },
	{ "cpu_api", "a corner of the CPU model's API (attach_any, this_cpu, holder, bad and detached migrations, "
	  "bad hotplug, try_offline, stats, interrupts refused / by signal / pending without a handler)",
	  w_op_cpu_api, note_res, { MF_A_ENUM("kind", api_kinds), MF_A_INT("arg", 0, 3) } },
	{ "cpuhp", "offline vCPU cpu (not the task's), then online it with the target's hotplug state's online "
	  "callback failing or not: a failure rolls back and leaves it offline", w_op_cpuhp, note_res,
	  { MF_A_INT("cpu", 0, 3), MF_A_BOOL("fail") } },
};

/* ------------------------------------------------------------ lifecycle */

static void pcp_config_of(const struct mf_op *setup, struct mm_config *cfg)
{
	mf_config_named(cfg, pcp_config_kind[setup->a[0]], (unsigned int)setup->a[1]);
	cfg->pcp_prefetch_buddy = setup->a[2] != 0;
}

static bool pcp_begin(struct mf_ctx *c, const struct mf_op *setup)
{
	struct mm_config cfg;

	pcp_config_of(setup, &cfg);
	mf_cgen_config(c, &cfg);
	if (!mf_instance(c, &cfg))
		mf_fail(c, "C1", "mm_create failed for the named config %s", pcp_configs[setup->a[0]]);
	mf_pages_begin(c);
	mf_pages.forget = pool_forget;
	memset(&ps, 0, sizeof(ps));
	ps.c = c;
	mm_set_irq_handler(c->mm, irq_handler, c);
	mm_set_sched_hook(c->mm, sched_hook, c);
	hp_register(c);
	MF_C(c, "\tmm_set_irq_handler(mm, irq, NULL);\n\tmm_set_sched_hook(mm, hook, NULL);\n\thp_register();\n");
	return true;
}

static void pcp_release(struct mf_ctx *c, struct mf_alloc *a)
{
	mf_cgen_flush(c);
	mf_page_free(c, a, false);
}

static void pcp_end(struct mf_ctx *c)
{
	mm_set_sched_hook(c->mm, NULL, NULL);
	mm_set_irq_handler(c->mm, NULL, NULL);
	mf_cgen_flush(c);
	MF_C(c, "\tmm_set_sched_hook(mm, NULL, NULL);\n\tmm_set_irq_handler(mm, NULL, NULL);\n");
	for (int cpu = 0; cpu < nr_cpus(c); cpu++)
		if (!mm_cpu_is_online(c->mm, cpu)) {
			MF_C(c, "\tmm_cpu_online(mm, %d);\n", cpu);
			if (mm_cpu_online(c->mm, cpu))
				mf_fail(c, "C1", "teardown: mm_cpu_online(%d) failed", cpu);
		}
	mf_pages_end(c);
}

/*
 * The C file's helpers besides the hook's (mf_cgen_hook_prologue(): its
 * interrupt handler counts its runs and replays, from irq_script(), the
 * calls the fuzz run's handler made - captured by mf_cgen_irq_begin/_end):
 * the hotplug state of the target's own with its failing online callback,
 * and the checks of the CPU model's API corners, as op_cpu_api() makes them.
 */
static void pcp_cgen_prologue(struct mf_ctx *c, FILE *f)
{
	mf_cgen_hook_prologue(c, f);
	fputs("static int hp_fail;\n"
	      "static unsigned long hp_online_calls, hp_dead_calls;\n"
	      "static int hp_online(struct mm *m, unsigned int cpu) { (void)m; (void)cpu; hp_online_calls++; return hp_fail ? -5 : 0; }\n"
	      "static int hp_dead(struct mm *m, unsigned int cpu) { (void)m; (void)cpu; hp_dead_calls++; return 0; }\n"
	      "static void hp_register(void)\n"
	      "{\n\texpect(-1, mm_cpuhp_register(mm, NULL, hp_online, hp_dead) == -22, \"mm_cpuhp_register without a name\");\n"
	      "\texpect(-1, mm_cpuhp_register(mm, \"mmfuzz/pcp:test\", hp_online, hp_dead) >= 0, \"mm_cpuhp_register\");\n"
	      "\tmm_cpuhp_remove(mm, -1);\n\tmm_cpuhp_remove(mm, 1000);\n}\n"
	      "UNUSED static void pcp_empty(int op, int cpu, const char *after)\n"
	      "{\n\tfor (int z = 0; z < 4; z++) {\n\t\tstruct mm_pcp_info info;\n"
	      "\t\tif (!mm_zone(mm, (enum zone_type)z) || mm_pcp_info(mm, (enum zone_type)z, cpu, &info))\n\t\t\tcontinue;\n"
	      "\t\tif (info.count)\n\t\t\tfail(op, \"P1 violated: after %s the pcp of vCPU %d in zone %d still holds %d pages\",\n"
	      "\t\t\t     after, cpu, z, info.count);\n\t}\n}\n"
	      "UNUSED static void attach_any(int op, int n)\n"
	      "{\n\tint r = mm_cpu_attach_any(mm);\n"
	      "\texpect(op, r >= 0 && r < n && mm_cpu_is_online(mm, r) && mm_cpu_current(mm) == r, \"mm_cpu_attach_any\");\n"
	      "\texpect(op, mm_cpu_attach_any(mm) == r, \"mm_cpu_attach_any when attached\");\n}\n"
	      "UNUSED static void holder_check(int op, int n)\n"
	      "{\n\tint cur = mm_this_cpu(mm);\n\tfor (int cpu = 0; cpu < n; cpu++)\n"
	      "\t\texpect(op, (mm_cpu_holder(mm, cpu) == mm_task_current()) == (cpu == cur) && (cpu == cur || !mm_cpu_holder(mm, cpu)),\n"
	      "\t\t       \"mm_cpu_holder: the task holds its vCPU, nobody else any\");\n"
	      "\texpect(op, !mm_cpu_holder(mm, n) && !mm_cpu_holder(mm, -1), \"mm_cpu_holder of a bad vCPU is NULL\");\n"
	      "\texpect(op, !strcmp(mm_pp_name(MM_PP_SPIN_UNLOCK), \"spin_unlock\") && !strcmp(mm_pp_name(MM_PP_NR), \"?\"),\n"
	      "\t       \"mm_pp_name\");\n}\n"
	      "UNUSED static unsigned long delivered(int op, unsigned long *dropped)\n"
	      "{\n\tstruct mm_cpu_stats st;\n\texpect(op, !mm_cpu_get_stats(mm, -1, &st), \"mm_cpu_get_stats(-1)\");\n"
	      "\tif (dropped)\n\t\t*dropped = st.irqs_dropped;\n\treturn st.irqs_delivered;\n}\n"
	      "UNUSED static void stats_check(int op, int n)\n"
	      "{\n\tstruct mm_cpu_stats st, one;\n\tunsigned long sum = 0;\n"
	      "\texpect(op, !mm_cpu_get_stats(mm, -1, &st) && mm_cpu_get_stats(mm, n, &one) == -22,\n"
	      "\t       \"mm_cpu_get_stats: -1 works, nr_cpus is -EINVAL\");\n"
	      "\tfor (int cpu = 0; cpu < n; cpu++) {\n\t\texpect(op, !mm_cpu_get_stats(mm, cpu, &one), \"mm_cpu_get_stats(cpu)\");\n"
	      "\t\tsum += one.irqs_delivered;\n\t}\n"
	      "\texpect(op, st.irqs_delivered == irq_runs && sum == irq_runs, \"every handler run is one delivery\");\n}\n"
	      "UNUSED static void raise_detached(int op)\n"
	      "{\n\tunsigned long i0 = irq_runs, d0;\n\tmm_cpu_detach(mm);\n\td0 = delivered(op, NULL);\n"
	      "\texpect(op, !mm_raise_irq(mm), \"mm_raise_irq without a vCPU runs nothing\");\n"
	      "\tmm_irq_from_signal();\n"
	      "\texpect(op, irq_runs == i0 && delivered(op, NULL) == d0, \"no interrupt runs on a task without a vCPU\");\n}\n"
	      "UNUSED static void pending_no_handler(int op)\n"
	      "{\n\tunsigned long i0 = irq_runs, d0, d1;\n\tmm_this_cpu(mm);\n\tmm_set_irq_handler(mm, NULL, NULL);\n"
	      "\texpect(op, !mm_raise_irq(mm), \"mm_raise_irq without a handler says it did not run\");\n"
	      "\tdelivered(op, &d0);\n\tmm_set_irq_pending(mm);\n\tdrain_local_pages(mm, NULL);\n"
	      "\tunsigned long n1 = delivered(op, &d1);\n"
	      "\tmm_set_irq_handler(mm, irq, NULL);\n\texpect(op, irq_runs == i0, \"no handler ran while none was set\");\n"
	      "\texpect(op, d1 == d0 + 1, \"an interrupt pending with no handler is dropped once\");\n"
	      "\tdrain_local_pages(mm, NULL);\n"
	      "\texpect(op, irq_runs == i0 && delivered(op, NULL) == n1, \"a dropped interrupt does not run later\");\n}\n"
	      "UNUSED static void cpuhp(int op, int cpu, int was, int fail_it)\n"
	      "{\n\tunsigned long dead0 = hp_dead_calls, on0 = hp_online_calls, i0 = irq_runs;\n"
	      "\texpect(op, mm_cpu_offline(mm, cpu) == 0 && hp_dead_calls == dead0 + (unsigned long)was,\n"
	      "\t       \"mm_cpu_offline runs the dead callback once per vCPU going down\");\n"
	      "\tif (irq_runs == i0)\n\t\tpcp_empty(op, cpu, \"mm_cpu_offline\");\n"
	      "\thp_fail = fail_it;\n\tint r = mm_cpu_online(mm, cpu);\n\thp_fail = 0;\n"
	      "\texpect(op, hp_online_calls == on0 + 1, \"bringing a vCPU up runs the online callback once\");\n"
	      "\texpect(op, fail_it ? r == -5 && !mm_cpu_is_online(mm, cpu) : r == 0 && mm_cpu_is_online(mm, cpu),\n"
	      "\t       \"a failing online callback rolls the bring-up back\");\n"
	      "\texpect(op, hp_dead_calls == dead0 + (unsigned long)was, \"a failed bring-up runs no dead callback\");\n}\n\n", f);
}

static const struct mf_target pcp_target = {
	.name = "pcp",
	.setup = &pcp_setup,
	.ops = pcp_ops,
	.nops = sizeof(pcp_ops) / sizeof(pcp_ops[0]),
	.check_level = 2,
	.final_level = 3,
	.begin = pcp_begin,
	.release = pcp_release,
	.end = pcp_end,
	.cgen_prologue = pcp_cgen_prologue,
	.config_of = pcp_config_of,
	.warm = hp_register,            /* each instance's callback before any input (stability) */
};

MF_TARGET(pcp_target)

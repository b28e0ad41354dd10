/* SPDX-License-Identifier: MIT */
/*
 * sched.c - the deterministic scheduler's engine: tasks as fibers on one
 * OS thread, switched at the CPU model's preemption points (the
 * instance's scheduler hook), at waits that would block (the thread's wait
 * hook) and at sched_point() / sched_wait() / sched_atomic_point();
 * interrupts and migrations injected at points; deadlock and hang
 * detection; in-process SIGABRT catching.  run.c prepares a run around it
 * (and runs it in a child for --fork).
 *
 * The protocol
 * ------------
 * One engine per OS thread (struct sched), reused by every run: fibers and
 * CPU-model tasks are made once and parked between runs.  A run:
 *   1. main (the OS thread's own stack) sets the hooks, picks the first
 *      task by a decision and switches to it;
 *   2. a task runs until it reaches a switch point; the hook records the
 *      event (trace hash, timeline), injects an interrupt or a migration if
 *      the policy says so, then lets the policy choose the next task among
 *      the candidates and switches to it directly (no trip through main);
 *   3. a task whose fn returns gives back its vCPU, parks its fiber and
 *      switches to the next task - or to main when none is left;
 *   4. a failure (sched_fail, a non-zero return, deadlock, hang, SIGABRT)
 *      switches straight to main from wherever it happened: the other
 *      tasks are abandoned mid-flight, their fibers reset and their
 *      CPU-model tasks scrubbed (vCPUs given back) before the next run.
 * Every switch also makes the next fiber's task the CPU model's current
 * task (mm_task_switch), so each fiber holds its own vCPU and its own
 * preempt count, irq state and locks.
 *
 * Candidates and deadlock
 * -----------------------
 * A task is a candidate when it is ready, or when it waits (the wait hook,
 * sched_wait) but may find things changed if it looks again.  Progress is
 * counted: the epoch moves at every event of a running task except a wait
 * repeated with nothing done in between (a failed retry changes nothing),
 * and each task counts its own share.  A waiter is a candidate again once
 * *other* tasks progressed since its last wait, or when it is owed a
 * retry: a first wait, or a repeat after others progressed - it may have
 * checked its condition before a switch that let others change it.  Its
 * own progress never wakes it, so a busy-wait loop cannot starve the tasks
 * it waits for (PCT would otherwise run the spinner forever).  When no
 * task is a candidate, every unfinished task waits on something only
 * another waiter could change: a deadlock, reported with each task's wait.
 * A task that keeps making progress without finishing hits max_steps.
 *
 * Decisions
 * ---------
 * Only decisions with two or more options are taken by the policy and
 * logged (one byte: the option index).  Options of "which task": the
 * running task first when it may continue, then the others by index; so
 * option 0 always means "no preemption", and 0 bytes (the BYTES default)
 * run tasks to completion in order.  Interrupt: {no, yes}.  Migration:
 * {stay, free online vCPUs by number}.  Replaying the log reproduces the
 * run exactly, whatever policy made it.
 *
 * ThreadSanitizer
 * ---------------
 * The engine's state is shared by all fibers of the thread with no
 * happens-before between fibers (switches are no_sync by design), so the
 * engine's own code runs inside TSan ignore regions; the allocator and the
 * scenario never do.  A run is bracketed like thread create/join: main
 * releases tsan_run before the first switch and every task acquires it
 * when it starts; every task releases tsan_join when it ends (an abandoned
 * task on its behalf) and main acquires it after the run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sched_int.h"
#include "cpu/vcpu.h"
#include "mm/mm.h"

static _Thread_local struct sched *tl;

struct sched *sched_engine(void)
{
	if (!tl) {
		tl = calloc(1, sizeof(*tl));
		if (!tl)
			return NULL;
		fiber_init_main(&tl->main);
		tl->cur = -1;
	}
	return tl;
}

struct sched *sched_engine_if_any(void)
{
	return tl;
}

void sched_engine_forget(void)
{
	free(tl);
	tl = NULL;
}

/* ---------------------------------------------------------------- reasons */

static void vset_reason(struct sched *s, enum sched_outcome outcome, int task, const char *fmt, va_list ap)
{
	struct sched_live *L = s->live;
	if (L->outcome != SCHED_OK)
		return;                 /* the first failure is the one reported */
	L->outcome = outcome;
	L->failed_task = task;
	int off = 0;
	if (task >= 0 && task < s->n)
		off = snprintf(L->reason, sizeof(L->reason), "T%d:%s: ", task,
			       s->task[task].desc->name ? s->task[task].desc->name : "?");
	if (off < 0 || (size_t)off >= sizeof(L->reason))
		off = 0;
	vsnprintf(L->reason + off, sizeof(L->reason) - (size_t)off, fmt, ap);
}

void sched_set_reason(struct sched *s, enum sched_outcome outcome, int task, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset_reason(s, outcome, task, fmt, ap);
	va_end(ap);
}

/* ---------------------------------------------------------------- switching */

static int cur_cpu(struct sched *s)
{
	return s->mm ? mm_cpu_current(s->mm) : -1;
}

static struct fiber *fiber_of(struct sched *s, int idx)
{
	return idx < 0 ? &s->main : &s->task[idx].fib;
}

/* Make @next (-1: main) run: the CPU model's current task, then the stack. */
static void switch_to(struct sched *s, int next)
{
	struct fiber *from = fiber_of(s, s->cur);
	s->cur = next;
	s->live->cur = next;
	s->live->switches++;
	mm_task_switch(next >= 0 ? s->task[next].mt : NULL);
	fiber_switch(from, fiber_of(s, next));
}

void sched_end_run(struct sched *s, enum sched_outcome outcome, int task, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset_reason(s, outcome, task, fmt, ap);
	va_end(ap);
	trace_event(s, EV_FAIL, s->cur, cur_cpu(s), 0, outcome, NULL);
	if (s->cur < 0)
		longjmp(s->main_jmp, 1);        /* main's first decision: no task started */

	/* Abandon every task in flight: a finished one parked its fiber
	 * cleanly; the others resume nowhere and are reset by main. */
	struct fiber *self = fiber_of(s, s->cur);
	for (int i = 0; i < s->n; i++) {
		struct sched_task *t = &s->task[i];
		if (t->state == TS_DONE || !t->started)
			continue;
		t->dirty = true;
		if (i == s->cur)
			sched_tsan_release(&s->tsan_join);
		else
			sched_tsan_release_as(self, &t->fib, &s->tsan_join);
	}
	switch_to(s, -1);
	__builtin_trap();               /* main never resumes an abandoned fiber */
}

/* A bit of progress by the running task. */
static void progress(struct sched *s)
{
	s->epoch++;
	if (s->cur >= 0)
		s->task[s->cur].own++;
}

static bool candidate(struct sched *s, int i)
{
	struct sched_task *t = &s->task[i];
	return t->state == TS_READY ||
	       (t->state == TS_WAITING && (t->owed || s->epoch - t->own > t->others_seen));
}

static const char *wait_name(int why)
{
	switch (why) {
	case MM_WAIT_SPIN: return "spinlock";
	case MM_WAIT_VCPU: return "vcpu";
	case MM_WAIT_HOTPLUG: return "hotplug";
	case MM_WAIT_CPUS_LOCK: return "cpus_lock";
	case MM_WAIT_MUTEX: return "mutex";
	case SCHED_WAIT_USER: return "sched_wait";
	default: return "?";
	}
}

/* Which task holds what @t waits for, when the model can tell (else -1, or -2: a thread's own task). */
static int wait_holder(struct sched *s, const struct sched_task *t)
{
	const struct mm_task *h = NULL;
	if (t->wait_why == MM_WAIT_SPIN) {
#if MM_DEBUG >= 2
		const spinlock_t *l = t->wait_what;
		h = atomic_load_explicit(&((spinlock_t *)l)->owner, memory_order_relaxed);
#endif
	} else if (t->wait_why == MM_WAIT_MUTEX) {
		h = atomic_load_explicit(&((struct mutex *)t->wait_what)->owner, memory_order_relaxed);
	} else if (t->wait_why == MM_WAIT_VCPU && s->mm) {
		for (int c = 0; c < s->nr_cpus; c++)
			if ((const void *)&s->mm->cpus[c] == t->wait_what)
				h = mm_cpu_holder(s->mm, c);
	}
	if (!h)
		return -1;
	for (int i = 0; i < s->n; i++)
		if (s->task[i].mt == h)
			return i;
	return -2;
}

static void __attribute__((noreturn)) report_deadlock(struct sched *s)
{
	char buf[SCHED_REASON_MAX];
	size_t off = 0;
	off += (size_t)snprintf(buf, sizeof(buf), "deadlock: every task waits:");
	for (int i = 0; i < s->n && off < sizeof(buf); i++) {
		struct sched_task *t = &s->task[i];
		if (t->state != TS_WAITING)
			continue;
		int h = wait_holder(s, t);
		int cpu = -1;
		for (int k = 0; k < t->mt->nr_held; k++)
			if (t->mt->held[k].mm == s->mm)
				cpu = t->mt->held[k].cpu;
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, " T%d:%s (vcpu %d) on %s %p",
					i, t->desc->name ? t->desc->name : "?", cpu, wait_name(t->wait_why),
					t->wait_what);
		if (off < sizeof(buf) && h >= 0)
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, " held by T%d", h);
		else if (off < sizeof(buf) && h == -2)
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, " held by a non-scheduler task");
		if (off < sizeof(buf))
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, ";");
	}
	sched_end_run(s, SCHED_DEADLOCK, -1, "%s", buf);
}

static unsigned decide(struct sched *s, enum sched_dkind kind, const int *opts, unsigned nopts, bool cur_ok)
{
	if (nopts < 2)
		return 0;
	unsigned c = policy_decide(s, kind, opts, nopts, cur_ok);
	struct sched_live *L = s->live;
	if (L->log_len == L->log_cap) {
		/* In-process logs grow; a --fork child's is a fixed shared
		 * buffer sized for the step bound, so this cannot happen there. */
		if (L->log != s->own_log)
			sched_end_run(s, SCHED_ERROR, s->cur, "decision log full (%zu)", L->log_cap);
		size_t cap = s->own_log_cap ? 2 * s->own_log_cap : 4096;
		uint8_t *nl = realloc(s->own_log, cap);
		if (!nl)
			sched_end_run(s, SCHED_ERROR, s->cur, "out of memory for the decision log");
		s->own_log = L->log = nl;
		s->own_log_cap = L->log_cap = cap;
	}
	L->log[L->log_len++] = (uint8_t)c;
	L->decisions++;
	return c;
}

/*
 * Choose the next task and switch to it (or stay).  @cur_ok: the running
 * task may continue (it is option 0).  Otherwise every candidate, the
 * running one included (a waiter owed a retry), in index order.  With no
 * candidate left: back to main if every task is done, else a deadlock.
 */
static void pick_and_switch(struct sched *s, bool cur_ok)
{
	int opts[SCHED_MAX_TASKS];
	unsigned n = 0;
	if (cur_ok)
		opts[n++] = s->cur;
	for (int i = 0; i < s->n; i++)
		if ((i != s->cur || !cur_ok) && candidate(s, i))
			opts[n++] = i;
	if (n == 0) {
		for (int i = 0; i < s->n; i++)
			if (s->task[i].state != TS_DONE)
				report_deadlock(s);
		switch_to(s, -1);       /* the run is complete */
		return;
	}
	unsigned c = decide(s, DK_TASK, opts, n, cur_ok);
	if (cur_ok && c != 0) {
		s->live->preemptions++;
		s->dfs_preempts++;
	}
	int next = opts[c];
	if (next != s->cur) {
		trace_event(s, EV_SWITCH, s->cur, cur_cpu(s), 0, next, NULL);
		switch_to(s, next);
	}
}

/* vCPU @c is where a task that has not started yet will attach, or one a
 * task waits for: migrating onto it would take a vCPU promised elsewhere. */
static bool reserved(struct sched *s, int c)
{
	for (int i = 0; i < s->n; i++) {
		struct sched_task *t = &s->task[i];
		if (!t->started && t->desc->cpu == c)
			return true;
		if (t->state == TS_WAITING && t->wait_why == MM_WAIT_VCPU && t->wait_what == &s->mm->cpus[c])
			return true;
	}
	return false;
}

/* An interrupt and a migration, where the policy wants them and the task can take them. */
static void inject(struct sched *s, int point)
{
	struct mm *mm = s->mm;
	int cpu;
	if (!mm || (cpu = mm_cpu_current(mm)) < 0)
		return;
	if (s->o->irqs && !mm_irqs_disabled() && !mm_in_interrupt()) {
		static const int no_yes[2] = { 0, 1 };
		if (decide(s, DK_IRQ, no_yes, 2, false)) {
			s->live->irqs++;
			sched_tsan_ignore_end();        /* the handler is allocator code */
			bool ran = mm_raise_irq(mm);
			sched_tsan_ignore_begin();
			trace_event(s, EV_IRQ, s->cur, cpu, point, ran, NULL);
		}
	}
	if (s->o->migrations && mm_preemptible() && (cpu = mm_cpu_current(mm)) >= 0) {
		int opts[1 + MM_MAX_CPUS];
		unsigned n = 0;
		opts[n++] = -1;
		for (int c = 0; c < s->nr_cpus; c++)
			if (c != cpu && mm_cpu_is_online(mm, c) && !mm_cpu_holder(mm, c) && !reserved(s, c))
				opts[n++] = c;
		unsigned c = decide(s, DK_MIGRATE, opts, n, false);
		if (c) {
			s->live->migrations++;
			sched_tsan_ignore_end();
			int r = mm_migrate_current(mm, opts[c]);
			sched_tsan_ignore_begin();
			trace_event(s, EV_MIGRATE, s->cur, cpu, r < 0 ? 0 : 64 + r, opts[c], NULL);
		}
	}
}

/* A switch point reached by the running task (inside a TSan ignore region). */
static void switch_point(struct sched *s, enum sched_ev ev, int point, const void *what)
{
	struct sched_task *t = &s->task[s->cur];
	struct sched_live *L = s->live;
	if (++L->steps > s->max_steps)
		sched_end_run(s, SCHED_HANG, s->cur, "hang: more than %lu switch points (at %s %s)",
			      s->max_steps, ev == EV_WAIT ? "wait" : "point",
			      ev == EV_WAIT ? wait_name(point) : mm_pp_name((enum mm_pp)point));
	trace_event(s, ev, s->cur, cur_cpu(s), point, 0, NULL);
	if (ev == EV_WAIT) {
		L->waits++;
		bool same = t->waited && t->wait_why == point && t->wait_what == what;
		/* Work done since its last wait (or a first wait) may have
		 * changed what others wait for: progress. */
		if (!same || t->own != t->own_at_wait)
			progress(s);
		/* A retry is owed unless this is the same wait again and no
		 * other task progressed since that last one: the condition was
		 * possibly checked before a switch that let others change it. */
		unsigned long others = s->epoch - t->own;
		t->owed = !(same && others == t->others_seen);
		t->others_seen = others;
		t->own_at_wait = t->own;
		t->waited = true;
		t->state = TS_WAITING;
		t->wait_why = point;
		t->wait_what = what;
		pick_and_switch(s, false);
		return;
	}
	t->state = TS_READY;
	progress(s);
	if (ev == EV_POINT && s->o->point_check) {
		sched_tsan_ignore_end();        /* the scenario's check reads allocator state */
		s->o->point_check(s->o->point_ctx, point);
		sched_tsan_ignore_begin();
	}
	if (ev == EV_POINT || ev == EV_YIELD) {
		inject(s, point);
		t->state = TS_READY;    /* waits inside an interrupt handler are over */
	}
	pick_and_switch(s, true);
}

/* ---------------------------------------------------------------- hooks */

static void sched_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	struct sched *s = ctx;
	(void)mm;
	if (s != tl || !s->active || s->cur < 0)
		return;                 /* another thread, or the scheduler itself */
	sched_tsan_ignore_begin();
	switch_point(s, EV_POINT, (int)point, NULL);
	sched_tsan_ignore_end();
}

static void wait_hook(enum mm_wait_reason why, const void *what, void *ctx)
{
	struct sched *s = ctx;
	if (s != tl || !s->active || s->cur < 0) {
		cpu_relax();
		return;
	}
	sched_tsan_ignore_begin();
	switch_point(s, EV_WAIT, (int)why, what);
	sched_tsan_ignore_end();
}

void sched_point(void)
{
	struct sched *s = tl;
	if (!s || !s->active || s->cur < 0)
		return;
	sched_tsan_ignore_begin();
	switch_point(s, EV_YIELD, MM_PP_USER, NULL);
	sched_tsan_ignore_end();
}

void sched_wait(const void *what)
{
	struct sched *s = tl;
	if (!s || !s->active || s->cur < 0)
		return;
	/* A sleep, not a spin: where preemptible the task leaves its vCPU
	 * (others may need it to make the progress it waits for) and takes
	 * one back afterwards - the same if free, else any (a wakeup on
	 * another CPU). */
	struct mm *mm = s->mm;
	int cpu = mm ? mm_cpu_current(mm) : -1;
	if (cpu >= 0 && (!mm_preemptible() || get_current()->migrate_disable))
		cpu = -1;
	if (cpu >= 0)
		mm_cpu_detach(mm);
	sched_tsan_ignore_begin();
	switch_point(s, EV_WAIT, SCHED_WAIT_USER, what);
	sched_tsan_ignore_end();
	if (cpu >= 0 && (mm_cpu_holder(mm, cpu) || mm_cpu_attach(mm, cpu) < 0))
		mm_cpu_attach_any(mm);
}

void sched_atomic_point(const void *addr)
{
	struct sched *s = tl;
	(void)addr;                     /* addresses never enter decisions or the trace */
	if (!s || !s->active || s->cur < 0 || !s->o->atomic_points)
		return;
	sched_tsan_ignore_begin();
	switch_point(s, EV_ATOMIC, MM_PP_USER, NULL);
	sched_tsan_ignore_end();
}

void sched_fail(const char *fmt, ...)
{
	struct sched *s = tl;
	va_list ap;
	char msg[SCHED_REASON_MAX];
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!s || (!s->active && !s->in_finish)) {
		fprintf(stderr, "sched_fail outside a run: %s\n", msg);
		return;
	}
	sched_tsan_ignore_begin();
	if (s->in_finish || s->cur < 0) {
		sched_set_reason(s, SCHED_FAILED, -1, "%s", msg);
		sched_tsan_ignore_end();
		return;
	}
	sched_end_run(s, SCHED_FAILED, s->cur, "%s", msg);
}

void sched_op(const char *name, long arg)
{
	struct sched *s = tl;
	if (!s || !s->active || s->cur < 0)
		return;
	sched_tsan_ignore_begin();
	trace_event(s, EV_OP, s->cur, cur_cpu(s), 0, arg, name);
	sched_tsan_ignore_end();
}

int sched_current_task(void)
{
	struct sched *s = tl;
	return s && s->active ? s->cur : -1;
}

uint64_t sched_random(void)
{
	struct sched *s = tl;
	if (!s || !s->active)
		return 0;
	sched_tsan_ignore_begin();
	uint64_t r = sched_rng_next(&s->user_rng);
	sched_tsan_ignore_end();
	return r;
}

bool sched_active(void)
{
	return tl && tl->active;
}

/* In-process SIGABRT (an allocator BUG): end the run from the handler. */
static void on_abort(void)
{
	struct sched *s = tl;
	if (!s || !s->active || s->cur < 0 || !s->o->catch_abort)
		return;
	s->crashed = true;
	sched_tsan_ignore_begin();
	sched_end_run(s, SCHED_CRASH, s->cur, "SIGABRT (an allocator BUG or abort; its report is on stderr above)");
}

/* ---------------------------------------------------------------- tasks */

/* The body of every task fiber: one task per loop, parked in between runs. */
void sched_task_main(void *arg)
{
	struct sched_task *t = arg;
	struct sched *s = tl;
	/* Entered inside a TSan ignore region (fiber_first_entry), as every
	 * resume point below is. */
	for (;;) {
		const struct sched_task_desc *d = t->desc;
		struct mm *mm = s->mm;
		t->started = true;
		trace_event(s, EV_START, t->idx, cur_cpu(s), 0, d->cpu, NULL);
		sched_tsan_acquire(&s->tsan_run);
		sched_tsan_ignore_end();

		int ret = 0;
		if (mm && d->cpu >= 0) {
			int r = mm_cpu_attach(mm, d->cpu);
			if (r < 0)
				sched_fail("mm_cpu_attach(%d) failed: %d", d->cpu, r);
		}
		ret = d->fn(d->ctx);
		if (mm) {
			/* Leaving the CPU for good is only legal where preemptible
			 * (the kernel's "scheduling while atomic"): a scenario bug or a
			 * lock leaked by the allocator. */
			if (!mm_preemptible() || get_current()->migrate_disable)
				sched_fail("returned with preemption, interrupts or migration disabled "
					   "(preempt %d, irqs off %d, migrate_disable %d)",
					   get_current()->preempt_count, (int)mm_irqs_disabled(),
					   get_current()->migrate_disable);
			if (get_current()->lock_depth)
				sched_fail("returned holding %d locks", get_current()->lock_depth);
			if (mm_cpu_current(mm) >= 0)
				mm_cpu_detach(mm);
		}

		sched_tsan_ignore_begin();
		trace_event(s, EV_EXIT, t->idx, -1, 0, ret, NULL);
		if (ret)
			sched_end_run(s, SCHED_FAILED, t->idx, "returned %d", ret);
		sched_tsan_release(&s->tsan_join);
		t->state = TS_DONE;
		progress(s);
		s->live->steps++;
		pick_and_switch(s, false);
		/* Resumed: the next run starts this fiber's next task. */
	}
}

/*
 * Run the prepared schedule: hooks on, the first decision and switch from
 * main, and back here when the run is over (complete or abandoned); hooks
 * off.
 */
void sched_dispatch(struct sched *s)
{
	const struct sched_opts *o = s->o;
	if (o->mm)
		mm_set_sched_hook(o->mm, sched_hook, s);
	mm_set_wait_hook(wait_hook, s);
	if (o->catch_abort)
		sched_os_catch_abort(on_abort);

	sched_tsan_ignore_begin();
	s->active = true;
	sched_tsan_release(&s->tsan_run);
	if (!setjmp(s->main_jmp))
		pick_and_switch(s, false);      /* returns when the run is over */
	s->active = false;
	sched_tsan_acquire(&s->tsan_join);
	sched_tsan_ignore_end();

	mm_set_wait_hook(NULL, NULL);
	if (o->mm)
		mm_set_sched_hook(o->mm, NULL, NULL);
	if (s->crashed) {
		sched_os_unblock_abort();
		s->crashed = false;
	}
}

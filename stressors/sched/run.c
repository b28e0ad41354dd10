/* SPDX-License-Identifier: MIT */
/*
 * run.c - one run of the deterministic scheduler, as sched_run() sees it:
 * options checked, the engine's fibers and CPU-model tasks made or reset,
 * the run's seeds, the schedule dispatched (sched.c) in this process or in
 * a forked child whose results come back through a shared mapping, tasks
 * abandoned by a failure scrubbed, the end-of-run check, the result and the
 * failure artifact.  Also the small public helpers (seeds, defaults, names).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched_int.h"
#include "cpu/vcpu.h"
#include "mm/mm.h"

static const char *const outcome_names[] = {
	[SCHED_OK] = "ok",
	[SCHED_FAILED] = "failed",
	[SCHED_DEADLOCK] = "deadlock",
	[SCHED_HANG] = "hang",
	[SCHED_CRASH] = "crash",
	[SCHED_NONDET] = "nondeterminism",
	[SCHED_ERROR] = "error",
};

const char *sched_outcome_name(enum sched_outcome o)
{
	return (unsigned)o < sizeof(outcome_names) / sizeof(outcome_names[0]) ? outcome_names[o] : "?";
}

uint64_t sched_seed(uint64_t master, uint64_t run)
{
	/* splitmix64's state after @run steps is master + run * gamma: its
	 * output there is the run-th number of the stream seeded by master. */
	uint64_t st = master + run * 0x9e3779b97f4a7c15ULL;
	return splitmix64_next(&st);
}

void sched_opts_default(struct sched_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->policy = SCHED_RANDOM;
	o->seed = 1;
	o->max_steps = SCHED_DEFAULT_STEPS;
	o->irq_permille = 50;
	o->migrate_permille = 50;
	o->bounce_permille = 500;
	o->pct_depth = 3;
	o->sticky_permille = 20;
#ifdef SCHED_TSAN
	o->catch_abort = false;         /* leaving a signal handler by a switch confuses TSan */
#else
	o->catch_abort = true;
#endif
}

/*
 * Make an abandoned CPU-model task reusable: forget its preempt count,
 * irq state, locks and interrupt context, and give back its vCPUs (the
 * locks it held stay held: the instance must be rebuilt).  Reaches into
 * struct mm_task; the CPU model has no call for it yet.
 */
static void task_scrub(struct sched_task *t)
{
	struct mm_task *mt = t->mt;
	struct mm_task *prev = mm_task_switch(mt);
	mt->preempt_count = 0;
	mt->lock_depth = 0;
	mt->migrate_disable = 0;
	atomic_store_explicit(&mt->irqs_off, 0, memory_order_relaxed);
	atomic_store_explicit(&mt->in_interrupt, 0, memory_order_relaxed);
	mt->in_hook = 0;
	mt->in_wait = 0;
	mt->cur_point = MM_PP_NONE;
	while (mt->nr_held > 0) {
		int before = mt->nr_held;
		mm_cpu_detach(mt->held[0].mm);
		if (mt->nr_held == before)
			break;
	}
	mm_task_switch(prev == mt ? NULL : prev);
}

static const char *const slot_names[SCHED_MAX_TASKS] = {
	"sched0", "sched1", "sched2", "sched3", "sched4", "sched5", "sched6", "sched7",
	"sched8", "sched9", "sched10", "sched11", "sched12", "sched13", "sched14", "sched15",
};

static int prepare_tasks(struct sched *s, int n)
{
	while (s->ntasks_made < n) {
		struct sched_task *t = &s->task[s->ntasks_made];
		memset(t, 0, sizeof(*t));
		t->idx = s->ntasks_made;
		t->mt = mm_task_create(slot_names[t->idx]);
		if (!t->mt)
			return -1;
		if (fiber_create(&t->fib, SCHED_STACK_SIZE, sched_task_main, t)) {
			mm_task_destroy(t->mt);
			t->mt = NULL;
			return -1;
		}
		s->ntasks_made++;
	}
	for (int i = 0; i < s->ntasks_made; i++) {
		struct sched_task *t = &s->task[i];
		if (t->dirty) {
			if (fiber_reset(&t->fib))
				return -1;
			t->dirty = false;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- a run */

static void live_reset(struct sched_live *L)
{
	uint8_t *log = L->log;
	size_t cap = L->log_cap;
	memset(L, 0, sizeof(*L));
	L->log = log;
	L->log_cap = cap;
	L->failed_task = -1;
	L->cur = -1;
	L->trace_hash = 0xcbf29ce484222325ULL;          /* FNV-1a offset basis */
}

static void result_from_live(struct sched_result *r, const struct sched_live *L, uint64_t seed)
{
	memset(r, 0, sizeof(*r));
	r->outcome = L->outcome;
	r->failed = L->outcome != SCHED_OK;
	memcpy(r->reason, L->reason, sizeof(r->reason));
	r->reason[sizeof(r->reason) - 1] = 0;
	r->failed_task = L->failed_task;
	r->seed = seed;
	r->steps = L->steps;
	r->switches = L->switches;
	r->preemptions = L->preemptions;
	r->decisions = L->decisions;
	r->irqs = L->irqs;
	r->migrations = L->migrations;
	r->waits = L->waits;
	r->trace_hash = L->trace_hash;
	r->log = L->log;
	r->log_len = L->log_len;
}

/* One schedule, in this process, results into @L. */
static void run_inproc(struct sched *s, const struct sched_opts *o, const struct sched_task_desc *tasks,
		       int n, struct sched_live *L)
{
	s->live = L;
	live_reset(L);
	if (prepare_tasks(s, n)) {
		sched_set_reason(s, SCHED_ERROR, -1, "cannot make fibers: %s", strerror(errno));
		return;
	}
	s->o = o;
	s->mm = o->mm;
	s->nr_cpus = o->mm ? (int)mm_get_config(o->mm)->nr_cpus : 0;
	s->max_steps = o->max_steps ? o->max_steps : SCHED_DEFAULT_STEPS;
	s->n = n;
	s->epoch = 0;
	s->cur = -1;
	s->crashed = false;
	for (int i = 0; i < n; i++) {
		struct sched_task *t = &s->task[i];
		t->desc = &tasks[i];
		t->state = TS_READY;
		t->started = false;
		t->wait_why = 0;
		t->wait_what = NULL;
		t->own = t->own_at_wait = t->others_seen = 0;
		t->waited = t->owed = false;
	}
	uint64_t seed = sched_seed(o->seed, o->run);
	sched_rng_seed(&s->rng, seed);
	sched_rng_seed(&s->user_rng, seed ^ 0x5ced5ced5ced5cedULL);
	policy_begin_run(s);

	if (o->mm)
		mm_cpu_detach(o->mm);   /* the scheduler's thread must not keep a vCPU from the tasks */
	trace_timeline_header(s);
	sched_dispatch(s);              /* returns when the run is over */
	for (int i = 0; i < n; i++)
		if (s->task[i].dirty)
			task_scrub(&s->task[i]);
	if (o->fresh_tasks)
		for (int i = 0; i < n; i++) {
			struct sched_task *t = &s->task[i];
			if (fiber_reset(&t->fib))
				sched_set_reason(s, SCHED_ERROR, i, "cannot reset a fiber: %s", strerror(errno));
			t->dirty = false;
		}
	if (L->outcome == SCHED_OK && o->finish) {
		s->in_finish = true;
		int r = o->finish(o->finish_ctx);
		s->in_finish = false;
		if (r)
			sched_set_reason(s, SCHED_FAILED, -1, "the end-of-run check returned %d", r);
	}
	if (o->timeline && L->outcome != SCHED_OK)
		fprintf(o->timeline, "# %s: %s\n", sched_outcome_name(L->outcome), L->reason);
}

/* One schedule in a child process, so that any crash is survived. */
static void run_forked(struct sched *s, const struct sched_opts *o, const struct sched_task_desc *tasks, int n)
{
	unsigned long steps = o->max_steps ? o->max_steps : SCHED_DEFAULT_STEPS;
	size_t cap = 4 * (steps + 2) + 64;      /* <= 3 decisions per step, and the start */
	size_t size = sizeof(struct sched_live) + cap;
	struct sched_live *sh = sched_os_map_shared(size);
	if (!sh) {
		s->live = &s->own;
		live_reset(&s->own);
		sched_set_reason(s, SCHED_ERROR, -1, "cannot map the shared result: %s", strerror(errno));
		return;
	}
	sh->log = (uint8_t *)(sh + 1);
	sh->log_cap = cap;
	live_reset(sh);
	int status = 0;
	int r = sched_os_fork_wait(&status);
	if (r == 0) {
		struct sched_opts co = *o;
		co.fork = false;
		co.artifact = NULL;
		run_inproc(s, &co, tasks, n, sh);
		sched_os_child_exit(0);
	}

	/* The parent: the child's live results, whatever became of it. */
	s->live = &s->own;
	if (s->own_log_cap < sh->log_len + 1) {
		uint8_t *nl = realloc(s->own_log, sh->log_len + 1);
		if (nl) {
			s->own_log = nl;
			s->own_log_cap = sh->log_len + 1;
		}
	}
	uint8_t *log = s->own_log;
	size_t log_cap = s->own_log_cap;
	s->own = *sh;
	s->own.log = log;
	s->own.log_cap = log_cap;
	s->own.log_len = log && sh->log_len <= log_cap ? sh->log_len : 0;
	if (log)
		memcpy(log, sh->log, s->own.log_len);
	if (r < 0) {
		sched_set_reason(s, SCHED_ERROR, -1, "fork: %s", strerror(errno));
	} else if (!sched_os_status_ok(status)) {
		char how[96];
		sched_os_describe_status(status, how, sizeof(how));
		s->n = n;
		for (int i = 0; i < n; i++)
			s->task[i].desc = &tasks[i];
		sched_set_reason(s, SCHED_CRASH, sh->cur, "the run's child %s at step %lu", how, sh->steps);
	}
	sched_os_unmap(sh, size);
}

static bool opts_valid(const struct sched_opts *o, const struct sched_task_desc *tasks, int n,
		       char *why, size_t len)
{
	if (!o || !tasks || n < 1 || n > SCHED_MAX_TASKS) {
		snprintf(why, len, "bad arguments: %d tasks (1..%d)", n, SCHED_MAX_TASKS);
		return false;
	}
	if ((unsigned)o->policy >= SCHED_NR_POLICIES) {
		snprintf(why, len, "bad policy %d", (int)o->policy);
		return false;
	}
	if (o->policy == SCHED_DFS && !o->dfs) {
		snprintf(why, len, "policy dfs without a search state (opts.dfs)");
		return false;
	}
	if (o->policy == SCHED_DFS && o->fork) {
		snprintf(why, len, "policy dfs cannot run --fork (its search state lives in the process)");
		return false;
	}
	if (o->policy == SCHED_DFS && sched_dfs_done(o->dfs)) {
		snprintf(why, len, "the exhaustive search is complete");
		return false;
	}
	for (int i = 0; i < n; i++) {
		if (!tasks[i].fn) {
			snprintf(why, len, "task %d has no function", i);
			return false;
		}
		if (tasks[i].cpu >= 0 && (!o->mm || tasks[i].cpu >= (int)mm_get_config(o->mm)->nr_cpus)) {
			snprintf(why, len, "task %d: vCPU %d does not exist", i, tasks[i].cpu);
			return false;
		}
	}
	return true;
}

struct sched_result sched_run(const struct sched_opts *o, const struct sched_task_desc *tasks, int n)
{
	struct sched_result r;
	struct sched *s = sched_engine();
	char why[200];
	if (!s) {
		memset(&r, 0, sizeof(r));
		r.outcome = SCHED_ERROR;
		r.failed = true;
		snprintf(r.reason, sizeof(r.reason), "out of memory for the scheduler");
		return r;
	}
	if (s->active) {
		memset(&r, 0, sizeof(r));
		r.outcome = SCHED_ERROR;
		r.failed = true;
		snprintf(r.reason, sizeof(r.reason), "sched_run called from inside a run");
		return r;
	}
	if (!opts_valid(o, tasks, n, why, sizeof(why))) {
		s->live = &s->own;
		live_reset(&s->own);
		s->n = 0;
		sched_set_reason(s, SCHED_ERROR, -1, "%s", why);
	} else if (o->fork) {
		run_forked(s, o, tasks, n);
	} else {
		s->own.log = s->own_log;
		s->own.log_cap = s->own_log_cap;
		run_inproc(s, o, tasks, n, &s->own);
		if (o->policy == SCHED_DFS)
			policy_dfs_end_run(s);
	}
	result_from_live(&r, &s->own, o ? sched_seed(o->seed, o->run) : 0);
	if (r.failed && r.outcome != SCHED_ERROR && o->artifact)
		sched_artifact_write(o->artifact, o, &r);
	return r;
}

int sched_reserve(int ntasks, unsigned long max_steps)
{
	struct sched *s = sched_engine();
	size_t cap = 4 * ((max_steps ? max_steps : SCHED_DEFAULT_STEPS) + 2) + 64;   /* as run_forked's */

	if (!s || s->active || prepare_tasks(s, ntasks < SCHED_MAX_TASKS ? ntasks : SCHED_MAX_TASKS))
		return -1;
	if (s->own_log_cap < cap) {
		uint8_t *nl = realloc(s->own_log, cap);
		if (!nl)
			return -1;
		s->own_log = nl;
		s->own_log_cap = cap;
	}
	return 0;
}

void sched_thread_release(void)
{
	struct sched *s = sched_engine_if_any();
	if (!s || s->active)
		return;
	for (int i = 0; i < s->ntasks_made; i++) {
		struct sched_task *t = &s->task[i];
		if (t->dirty)
			task_scrub(t);
		fiber_destroy(&t->fib);
		mm_task_destroy(t->mt);
	}
	free(s->own_log);
	sched_engine_forget();
}

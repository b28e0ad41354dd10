/* SPDX-License-Identifier: MIT */
/*
 * sched.h - the deterministic scheduler: a scenario's tasks run as fibers
 * on one OS thread and are switched only at the CPU model's preemption
 * points, at waits that would block (a contended spinlock, a busy vCPU),
 * at sched_point() and, optionally, at sched_atomic_point().  A seeded
 * policy (or a byte buffer: a fuzz input) makes every decision - which task
 * runs next, whether an interrupt fires, whether the task migrates - so the
 * same seed (or bytes) gives the same interleaving, the same trace hash and
 * the same failure (DESIGN.md, "CPUs, preemption and interrupts").
 *
 * A run:
 *
 *     struct sched_opts o;
 *     sched_opts_default(&o);
 *     o.policy = SCHED_PCT; o.seed = master; o.run = i; o.mm = mm;
 *     struct sched_task_desc t[2] = { { "alloc", alloc_fn, &ctx, 0 },
 *                                     { "free",  free_fn,  &ctx, 1 } };
 *     struct sched_result r = sched_run(&o, t, 2);
 *     if (r.failed) sched_artifact_write("crash.sched", &o, &r);
 *
 * A task fails by returning non-zero or calling sched_fail(); the run also
 * fails on a deadlock (every task waiting; the reason lists each wait), a
 * hang (more than max_steps switch points), an abort inside the allocator
 * (SIGABRT: mm_bug, VM_BUG_ON - caught in-process, or --fork style with
 * opts.fork), or when opts.finish (the end-of-run check, e.g. mm_check
 * level 3) fails.  After a failed run the instance is left as the failure
 * left it (locks held, vCPUs held): reset it (mm_reset) before the next.
 *
 * Include it as "sched/sched.h" (this directory's name would shadow the C
 * library's <sched.h>).  Nothing here is thread-safe across OS threads except that each thread
 * has its own engine: run schedules on as many threads as you like, one
 * sched_run at a time per thread.
 */
#ifndef MM_SCHED_H
#define MM_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mm;

#define SCHED_MAX_TASKS     16          /* tasks per run */
#define SCHED_REASON_MAX    512         /* bytes of sched_result.reason */
#define SCHED_DEFAULT_STEPS 100000      /* default hang bound (switch points per run) */
#define SCHED_BOUNCE_WINDOW 3           /* migration decisions a bounce back may take (bounce_permille) */

/* ---------------------------------------------------------------- policies */

enum sched_policy {
	SCHED_RANDOM,       /* uniform random walk: any runnable task at every point */
	SCHED_PCT,          /* PCT: random priorities, depth-1 priority change points over k steps */
	SCHED_STICKY,       /* sticky random: keep the running task, switch rarely */
	SCHED_DFS,          /* preemption-bounded exhaustive search (opts.dfs holds the state) */
	SCHED_BYTES,        /* decisions from opts.bytes (a fuzz input); out of bytes: default choice */
	SCHED_REPLAY,       /* decisions from a decision log (opts.bytes); divergence is non-determinism */
	SCHED_SCRIPT,       /* sparse actions from opts.bytes (4 bytes each, below); else the default */
	SCHED_NR_POLICIES
};
const char *sched_policy_name(enum sched_policy p);
/* "random", "pct", ...: the policy, or -1. */
int sched_policy_parse(const char *name);

/*
 * SCHED_SCRIPT: opts.bytes holds opts.nbytes / SCHED_SCRIPT_STEP_BYTES
 * actions, each "task | kind << 4, mark, point, arg": when task @task
 * (mod the tasks) reaches switch point @point (1, 2, ...) after its mark
 * @mark (sched_mark(): a scenario's name for where the task is, e.g. the
 * index of the op it starts; mod 256), do @kind with @arg.  Every other
 * decision takes the default (no preemption, no interrupt, stay), so a
 * short script is a few preemptions placed exactly, each keyed to a place
 * in one task's own progress: a fuzzer mutating one action (or one op of
 * another task) moves one preemption, not every one after it.  An action
 * whose point passes without a decision of its kind (an interrupt where
 * they are disabled, a migration with no free vCPU, a switch with one
 * candidate) does nothing.  Out of actions: the default, so every script
 * terminates.
 */
enum sched_script_kind {
	SCHED_SCRIPT_SWITCH,        /* run task arg & 127 (or the next candidate after it); with
				       bit 7 (SCHED_SCRIPT_RELEASE), where it may sleep, the task
				       sleeps in sched_wait(), as a preempted kernel task: its vCPU
				       is free for others, and it takes one back before going on */
	SCHED_SCRIPT_IRQ,           /* raise an interrupt; the handler may read sched_script_arg() */
	SCHED_SCRIPT_MIGRATE,       /* migrate the running task to vCPU arg (or the next free one) */
	SCHED_SCRIPT_NR_KINDS       /* a larger kind is taken modulo this */
};
#define SCHED_SCRIPT_STEP_BYTES 4
#define SCHED_SCRIPT_RELEASE    0x80
/* The argument of the script action taking effect now (an interrupt handler's program); 0 outside. */
unsigned sched_script_arg(void);
/*
 * Mark the running task's progress (SCHED_SCRIPT keys actions to it): its
 * mark becomes @mark and its switch points are counted afresh from 1.
 */
void sched_mark(unsigned long mark);

/* Exhaustive search state: create once, pass in opts.dfs to consecutive runs. */
struct sched_dfs;
/* Enumerate every schedule with at most @max_preemptions preemptions
 * (-1: unbounded).  NULL on allocation failure. */
struct sched_dfs *sched_dfs_create(int max_preemptions);
void sched_dfs_destroy(struct sched_dfs *d);
/* True once every schedule has been run. */
bool sched_dfs_done(const struct sched_dfs *d);
/* Schedules run so far. */
unsigned long sched_dfs_schedules(const struct sched_dfs *d);

/* ---------------------------------------------------------------- tasks and options */

struct sched_task_desc {
	const char *name;           /* for timelines and reports */
	int (*fn)(void *ctx);       /* the task; returns 0, or non-zero: the run fails */
	void *ctx;
	int cpu;                    /* vCPU of opts.mm to attach before fn; -1: none (implicit attach) */
};

struct sched_opts {
	enum sched_policy policy;
	uint64_t seed;              /* master seed */
	uint64_t run;               /* run index: the run's own seed is sched_seed(seed, run) */
	struct mm *mm;              /* the instance whose preemption points are switch points (NULL: none) */
	unsigned long max_steps;    /* hang bound: switch points per run (0: SCHED_DEFAULT_STEPS) */

	bool irqs;                  /* decide interrupts at points where the vCPU has them enabled */
	bool migrations;            /* decide migrations at preemptible points */
	bool atomic_points;         /* sched_atomic_point() is a switch point */
	unsigned irq_permille;      /* random policies: chance of an interrupt at an eligible point */
	unsigned migrate_permille;  /* random policies: chance of a migration at an eligible point */
	unsigned bounce_permille;   /* random policies: after a migration, chance at each of the task's
				       next SCHED_BOUNCE_WINDOW migration decisions of going back to the
				       vCPU it left (0: never) */
	unsigned pct_depth;         /* PCT: bug depth d (d-1 change points); 0: 3 */
	unsigned long pct_k;        /* PCT: steps the change points are drawn from (0: 200; calibrate!) */
	unsigned sticky_permille;   /* STICKY: chance of switching at a point; 0: 20 */
	struct sched_dfs *dfs;      /* DFS: the search state */
	const uint8_t *bytes;       /* BYTES: the input; REPLAY: the decision log */
	size_t nbytes;

	bool fork;                  /* run in a child process: survives any crash, ~40x slower; not with DFS */
	bool fresh_tasks;           /* in-process: every task's fiber is reset at the end of the run, so
				       every run starts each task from its first entry, as new - no run
				       takes a path because of an earlier one (the fuzz target's stability);
				       see also sched_reserve() */
	bool catch_abort;           /* in-process: a SIGABRT in a task fails the run (default on; off under TSan) */
	FILE *timeline;             /* print the interleaving as it runs (NULL: do not) */
	const char *artifact;       /* on failure, write the artifact to this path (NULL: do not) */

	/* The end-of-run check, on the scheduler's thread after every task
	 * finished: return 0, or non-zero (or call sched_fail) to fail. */
	int (*finish)(void *ctx);
	void *finish_ctx;

	/* At every preemption point of opts.mm a task reaches, in the task's
	 * context, before the interrupt, migration and switch decisions: the
	 * scenario's per-point invariants (sched_fail to fail).  NULL: none. */
	void (*point_check)(void *ctx, int point);
	void *point_ctx;

	const char *scenario;       /* name, saved in artifacts (for ./mmfuzz repro sched) */
	const char *config;         /* the scenario's own parameters, saved in artifacts */
};
void sched_opts_default(struct sched_opts *o);

/* The run seed: output @run of splitmix64 started at @master. */
uint64_t sched_seed(uint64_t master, uint64_t run);

/* ---------------------------------------------------------------- results */

enum sched_outcome {
	SCHED_OK,                   /* every task finished, finish() passed */
	SCHED_FAILED,               /* a task returned non-zero or called sched_fail(); finish() failed */
	SCHED_DEADLOCK,             /* every unfinished task waits and none can progress */
	SCHED_HANG,                 /* max_steps exceeded */
	SCHED_CRASH,                /* SIGABRT in-process, or the --fork child died */
	SCHED_NONDET,               /* a replay diverged from its log or its trace hash */
	SCHED_ERROR,                /* bad options or tasks; nothing ran */
};
const char *sched_outcome_name(enum sched_outcome o);

struct sched_result {
	enum sched_outcome outcome;
	bool failed;                /* outcome != SCHED_OK */
	char reason[SCHED_REASON_MAX];
	int failed_task;            /* the task that failed, -1 if none (deadlock, finish, ...) */
	uint64_t seed;              /* the run's seed */
	unsigned long steps;        /* switch points reached */
	unsigned long switches;     /* fiber switches (task to task, start and exit included) */
	unsigned long preemptions;  /* switches away from a task that could have continued */
	unsigned long decisions;    /* decisions with a choice: the length of the log */
	unsigned long irqs;         /* interrupts raised (delivered or refused) */
	unsigned long migrations;   /* migrations attempted */
	unsigned long waits;        /* wait-hook calls */
	uint64_t trace_hash;        /* hash over every (task, vCPU, point, event) */
	const uint8_t *log;         /* the decision log; valid until the next sched_run on this thread */
	size_t log_len;
};

/*
 * Run one schedule of @n tasks (1..SCHED_MAX_TASKS).  Sets the instance's
 * scheduler hook and this thread's wait hook for the run and clears them
 * after (the scheduler's own thread gives up any vCPU of opts.mm first).
 */
struct sched_result sched_run(const struct sched_opts *o, const struct sched_task_desc *tasks, int n);
/*
 * Make now what sched_run() makes on first use: this thread's engine,
 * @ntasks task fibers and a decision log for runs of @max_steps switch
 * points (0: SCHED_DEFAULT_STEPS) - so that the first runs take no path
 * later ones do not (with opts.fresh_tasks).  0, or -1 (out of memory).
 */
int sched_reserve(int ntasks, unsigned long max_steps);

/* ---------------------------------------------------------------- inside tasks */

/* A switch point of the scenario's own (like mm_preempt_point(mm, MM_PP_USER),
 * without an instance); a no-op outside a run. */
void sched_point(void);
/*
 * Wait for another task: call in the loop of a busy-wait ("while (!done)
 * sched_wait(&done);").  Unlike sched_point() a retry that finds nothing
 * changed is no progress: the waiter runs again only after another task
 * did something, and if every task waits the run ends as a deadlock (a
 * spin loop around sched_point() would starve PCT's lower priorities and
 * end as a hang).  A sleep, not a spin: where preemptible the task gives
 * up its vCPU of opts.mm while it waits and takes one back after (the
 * same one if free).  @what names the awaited object (never hashed).
 */
void sched_wait(const void *what);
/* A switch point where an atomic operation on @addr happens, if opts.atomic_points. */
void sched_atomic_point(const void *addr);
/*
 * Fail the run with a message.  Inside a task it does not return: the run
 * ends at once.  Elsewhere (finish) it records the reason and returns.
 */
void sched_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Add a scenario operation to the trace (hashed; printed in the timeline). */
void sched_op(const char *name, long arg);
/*
 * Label the running task's current operation for the timeline's "op"
 * column (e.g. "[3] alloc cache=1"); @label must stay valid until the next
 * call (or the end of the run); NULL clears it.  Not hashed.
 */
void sched_set_label(const char *label);
/* The running task's index, -1 outside a task. */
int sched_current_task(void);
/* A deterministic random number for scenarios (from the run seed, own stream); 0 outside a run. */
uint64_t sched_random(void);
/* True while a run is in progress on this thread. */
bool sched_active(void);

/* Free this thread's engine (fiber stacks); optional, for leak checkers. */
void sched_thread_release(void);

/* ---------------------------------------------------------------- artifacts and replay */

/* "last source commit (stressors/sched/CMakeLists.txt), MM_INJECT, MM_DEBUG, sanitizer": what built this binary. */
const char *sched_build_id(void);

/*
 * A failure artifact: everything needed to rerun one schedule.  Text,
 * one "key: value" per line, the log in hex.  The scenario is found by
 * name by whoever replays (./mmfuzz repro sched FILE).
 */
struct sched_artifact {
	char build[256];
	char scenario[128];
	char config[512];
	enum sched_policy policy;   /* the policy that found it */
	uint64_t master_seed, run, seed;
	unsigned long max_steps;
	bool irqs, migrations, atomic_points;
	unsigned irq_permille, migrate_permille, pct_depth, sticky_permille;
	unsigned bounce_permille;   /* 0 in artifacts older than the bounce */
	unsigned long pct_k;
	enum sched_outcome outcome;
	char reason[SCHED_REASON_MAX];
	unsigned long steps;
	uint64_t trace_hash;
	uint8_t *log;               /* malloc'ed */
	size_t log_len;
};
int sched_artifact_write(const char *path, const struct sched_opts *o, const struct sched_result *r);
/* 0, or -1 with a message in @err. */
int sched_artifact_read(const char *path, struct sched_artifact *a, char *err, size_t errlen);
void sched_artifact_free(struct sched_artifact *a);
/*
 * Options that replay @a: the artifact's configuration, policy REPLAY over
 * its log; mm, finish, timeline ... are taken from @base.
 */
void sched_artifact_opts(const struct sched_artifact *a, const struct sched_opts *base, struct sched_opts *o);
/*
 * Replay @a with @tasks (the scenario rebuilt by the caller): run, then
 * check the trace hash.  A mismatch (or a log that does not fit the run)
 * gives SCHED_NONDET with both hashes in the reason.  The build ids are
 * compared and a difference noted in the reason of a mismatch.
 */
struct sched_result sched_replay(const struct sched_artifact *a, const struct sched_opts *base,
				 const struct sched_task_desc *tasks, int n);

/* ---------------------------------------------------------------- many runs, grading */

/* A scenario that can be run many times. */
struct sched_scenario {
	const char *name;
	const char *config;
	void *ctx;
	/*
	 * Before each run: reset the state (mm_reset ...), fill @tasks, set
	 * *mm to the instance whose points switch (or leave it NULL); return
	 * n (1..SCHED_MAX_TASKS), or < 0 to stop.  @seed is the run's seed.
	 */
	int (*setup)(void *ctx, uint64_t seed, struct sched_task_desc *tasks, struct mm **mm);
	/* After a run whose tasks all finished: 0, or non-zero (or sched_fail) for a failure.  May be NULL. */
	int (*finish)(void *ctx);
	/*
	 * After a failed run, before the next setup: the run was abandoned
	 * mid-flight (the scheduler gave its tasks' vCPUs back, but locks
	 * they held stay held), so rebuild the instance (mm_destroy +
	 * mm_create).  May be NULL when setup copes.
	 */
	void (*recover)(void *ctx);
};

struct sched_explore_result {
	unsigned long runs;         /* runs done */
	unsigned long failures;     /* failed runs */
	unsigned long first_failure;/* run index of the first failure; ~0UL if none */
	struct sched_result first;  /* its result (log not kept) */
	unsigned long pct_k;        /* the calibrated k (PCT) */
	unsigned long steps;        /* switch points, all runs */
	double seconds;
};
/*
 * Runs 0..@runs-1 of @sc under @o (o->run ignored): stop at the first
 * failure if @stop.  PCT with pct_k == 0 calibrates k from a first random
 * run of the same seed.  DFS (o->dfs) stops early once exhausted.  The
 * first failure's artifact goes to o->artifact if set.  Returns 0, or -1
 * if setup failed.
 */
int sched_explore(const struct sched_opts *o, const struct sched_scenario *sc, unsigned long runs,
		  bool stop, struct sched_explore_result *er);

/* Wilson score interval for @k successes in @n trials at normal quantile @z (1.96: 95%). */
void sched_wilson(unsigned long k, unsigned long n, double z, double *lo, double *hi);
/*
 * Grading: @runs runs per policy (all runs, not stopping), one line per
 * policy: failures, detection probability with its 95% Wilson interval,
 * runs to the first failure, runs/s.
 */
void sched_grade(const struct sched_scenario *sc, const struct sched_opts *base,
		 const enum sched_policy *policies, int npolicies, unsigned long runs, FILE *out);

#ifdef __cplusplus
}
#endif

#endif /* MM_SCHED_H */

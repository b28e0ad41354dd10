/* SPDX-License-Identifier: MIT */
/*
 * sched_int.h - the deterministic scheduler's internals, shared by its
 * files: the PRNGs, fibers (fiber.c, switch_x86_64.c), the OS layer
 * (sched_os.c), the engine (sched.c) and a run around it (run.c), the
 * policies (policy.c), the trace and timeline (trace.c).  Prototypes are grouped by the defining file.
 */
#ifndef MM_SCHED_INT_H
#define MM_SCHED_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include "debug.h"
#include "sched.h"
#include "mm/cpu.h"

/* ---------------------------------------------------------------- PRNGs */

/* splitmix64 (Steele, Lea, Flood 2014): the seed mixer. */
static inline uint64_t splitmix64_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* xoshiro256** (Blackman, Vigna 2018): the per-run generator. */
struct sched_rng {
	uint64_t s[4];
};

static inline void sched_rng_seed(struct sched_rng *r, uint64_t seed)
{
	uint64_t st = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64_next(&st);
}

static inline uint64_t sched_rng_next(struct sched_rng *r)
{
	uint64_t *s = r->s;
	uint64_t x = s[1] * 5;
	uint64_t res = ((x << 7) | (x >> 57)) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = (s[3] << 45) | (s[3] >> 19);
	return res;
}

/* Uniform in [0, n), n >= 1 (Lemire's multiply-shift on the top 32 bits;
 * the bias, n / 2^32, is irrelevant for n <= 256). */
static inline unsigned sched_rng_below(struct sched_rng *r, unsigned n)
{
	return (unsigned)(((sched_rng_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* True with probability @permille / 1000. */
static inline bool sched_rng_permille(struct sched_rng *r, unsigned permille)
{
	return permille && sched_rng_below(r, 1000) < permille;
}

/* ---------------------------------------------------------------- fibers (fiber.c) */

/*
 * A fiber: a stack (with a guard page below it) and the stack pointer
 * saved while it is suspended.  The main fiber is the OS thread's own
 * stack: no mapping, bounds learnt by ASan on the first switch away.
 */
struct fiber {
	void *sp;                   /* saved stack pointer (suspended); the asm's frame is on top */
	void *initial_sp;           /* sp of the prepared, never-run frame */
	void *map;                  /* whole mapping, guard page first; NULL for the main fiber */
	size_t map_size;
	void *stack_lo;             /* usable stack [stack_lo, stack_lo + stack_size) */
	size_t stack_size;
	void *tsan;                 /* TSan fiber context (NULL outside TSan builds) */
	void (*entry)(void *);      /* where a new fiber starts */
	void *arg;
};

#define SCHED_STACK_SIZE (256u << 10)

/* Make @f the current thread's main fiber. */
void fiber_init_main(struct fiber *f);
/* A new fiber that runs entry(arg) when first switched to; 0 or -1 (errno). */
int fiber_create(struct fiber *f, size_t stack_size, void (*entry)(void *), void *arg);
/*
 * Make an abandoned fiber (suspended in the middle of something that will
 * never resume) start afresh at its entry: a new stack under TSan (so its
 * shadow is clean), an unpoisoned one under ASan.  0 or -1.
 */
int fiber_reset(struct fiber *f);
void fiber_destroy(struct fiber *f);
/* Suspend @from (the running fiber) and run @to. */
void fiber_switch(struct fiber *from, struct fiber *to);

/* The sanitizer of this build: debug.h's MM_TSAN (0 or 1) and MM_ASAN (defined or not). */
#if MM_TSAN
#define SCHED_TSAN 1
#elif defined(MM_ASAN)
#define SCHED_ASAN 1
#endif

/*
 * The build id of failure artifacts (sched_build_id()): the revision
 * @describe (a string literal) and what else changes a run - the fault
 * injection, MM_DEBUG, the sanitizer.
 */
#ifndef MM_INJECT_NAME
#define MM_INJECT_NAME "none"
#endif
#if defined(SCHED_ASAN)
#define SCHED_SAN "address"
#elif defined(SCHED_TSAN)
#define SCHED_SAN "thread"
#else
#define SCHED_SAN "none"
#endif
#define SCHED_STR_(x) #x
#define SCHED_STR(x)  SCHED_STR_(x)
#define SCHED_BUILD_ID(describe) \
	"mmfuzz " describe " inject=" MM_INJECT_NAME " MM_DEBUG=" SCHED_STR(MM_DEBUG) " san=" SCHED_SAN

#ifdef SCHED_TSAN
/* TSan: ignore the scheduler's own accesses from fibers (its bookkeeping is
 * shared by every fiber of the thread, and the fibers have no
 * happens-before between them by design).  No-ops elsewhere. */
void sched_tsan_ignore_begin(void);
void sched_tsan_ignore_end(void);
/* TSan: the fork/join edges of a run (pthread_create / pthread_join-like). */
void sched_tsan_release(void *addr);
void sched_tsan_acquire(void *addr);
/* TSan: make @f release @addr without running it (for abandoned fibers), from @self. */
void sched_tsan_release_as(struct fiber *self, struct fiber *f, void *addr);
#else
static inline void sched_tsan_ignore_begin(void) {}
static inline void sched_tsan_ignore_end(void) {}
static inline void sched_tsan_release(void *addr) { (void)addr; }
static inline void sched_tsan_acquire(void *addr) { (void)addr; }
static inline void sched_tsan_release_as(struct fiber *self, struct fiber *f, void *addr)
{
	(void)self; (void)f; (void)addr;
}
#endif

/* The asm (switch_x86_64.c). */
void sched_ctx_switch(void **save_sp, void *new_sp);
void sched_fiber_start(void);

/* ---------------------------------------------------------------- OS layer (sched_os.c) */

/* A stack mapping of @size usable bytes with an inaccessible guard page below; NULL on failure. */
void *sched_os_stack_map(size_t size, size_t *map_size, void **lo);
void sched_os_unmap(void *p, size_t size);
/* A shared anonymous mapping (survives into a forked child's writes); NULL on failure. */
void *sched_os_map_shared(size_t size);
/* fork; in the parent wait for the child.  Returns 0 in the child, 1 in the
 * parent once the child ended (status in *status), -1 on failure. */
int sched_os_fork_wait(int *status);
void sched_os_child_exit(int code) __attribute__((noreturn));
/* True if a wait status says "exited 0". */
bool sched_os_status_ok(int status);
/* Describe a wait status ("exited 1", "killed by signal 11 (SIGSEGV)"). */
void sched_os_describe_status(int status, char *buf, size_t len);
/* Install (once per process) the SIGABRT handler that calls @fn on the
 * thread that aborted; @fn may not return when it can take over. */
void sched_os_catch_abort(void (*fn)(void));
/* Unblock SIGABRT after leaving its handler by a fiber switch. */
void sched_os_unblock_abort(void);
/* Monotonic seconds (benchmarks and grading only, never decisions). */
double sched_os_now(void);

/* ---------------------------------------------------------------- engine (sched.c) */

/* Trace events. */
enum sched_ev {
	EV_START,                   /* a task starts */
	EV_POINT,                   /* a preemption point (point = mm_pp id) */
	EV_WAIT,                    /* the wait hook (point = mm_wait_reason) */
	EV_YIELD,                   /* sched_point() */
	EV_ATOMIC,                  /* sched_atomic_point() */
	EV_EXIT,                    /* a task's fn returned (arg = its value) */
	EV_IRQ,                     /* an interrupt raised here (arg = delivered) */
	EV_MIGRATE,                 /* a migration (arg = target, point = result + 64) */
	EV_SWITCH,                  /* a switch (arg = the next task) */
	EV_OP,                      /* a scenario operation (arg, name hashed) */
	EV_FAIL,                    /* the run failed here */
	EV_NR
};

/* sched_wait(): a scenario's own wait reason, beside enum mm_wait_reason. */
#define SCHED_WAIT_USER 15

/* Kinds of decision. */
enum sched_dkind {
	DK_TASK,                    /* which task runs next */
	DK_IRQ,                     /* raise an interrupt here? */
	DK_MIGRATE,                 /* stay, or migrate to which free vCPU */
};

enum sched_tstate {
	TS_READY,                   /* runnable (started or not) */
	TS_WAITING,                 /* in the wait hook */
	TS_DONE,                    /* fn returned */
};

struct sched_task {
	struct fiber fib;
	struct mm_task *mt;         /* the CPU model's task */
	const struct sched_task_desc *desc;
	int idx;
	enum sched_tstate state;
	bool started;               /* fn entered this run */
	bool dirty;                 /* abandoned mid-run: fiber_reset before reuse */
	int wait_why;               /* enum mm_wait_reason, while TS_WAITING */
	const void *wait_what;
	unsigned long own;          /* progress events of this task (epoch increments while it ran) */
	unsigned long own_at_wait;  /* own at its last wait */
	unsigned long others_seen;  /* others' progress (epoch - own) at its last wait */
	bool waited;                /* wait_why/wait_what name its last wait (this run) */
	bool owed;                  /* waiting, but owed a retry: others progressed since it last looked */
	unsigned long pct_prio;     /* PCT priority (higher runs) */
	const char *label;          /* the scenario's name for what it does now (timeline only) */
	unsigned long mark;         /* sched_mark(): where the scenario says the task is */
	unsigned long mark_points;  /* switch points of this task since its mark (SCRIPT's keys) */
	int bounce_cpu;             /* random policies: the vCPU its last migration left */
	unsigned bounce_left;       /* ... and the migration decisions left in which it may go back */
};

/* Where the live results of a run are written: the engine's own memory, or
 * a shared mapping in --fork mode so a crashed child still reports them. */
struct sched_live {
	enum sched_outcome outcome;
	int failed_task;
	char reason[SCHED_REASON_MAX];
	unsigned long steps, switches, preemptions, decisions, irqs, migrations, waits;
	uint64_t trace_hash;
	size_t log_len;             /* entries in log[] */
	size_t log_cap;
	int cur;                    /* the running task (for a crash report) */
	uint8_t *log;
};

struct sched_pct {
	unsigned depth;             /* d */
	unsigned long change[8];    /* the d-1 change steps, sorted */
	unsigned nchange;
	unsigned next;              /* the next change point to apply */
};

struct sched {
	struct fiber main;
	struct sched_task task[SCHED_MAX_TASKS];
	int ntasks_made;            /* fibers and CPU-model tasks created (reused by later runs) */
	int n;                      /* tasks in this run */
	int cur;                    /* the running task; -1: the scheduler (main) */
	bool active;                /* a run is in progress */
	bool in_finish;             /* finish() is running */
	const struct sched_opts *o;
	struct mm *mm;
	int nr_cpus;
	unsigned long max_steps;
	unsigned long epoch;        /* progress events of all tasks (deadlock detection) */
	struct sched_rng rng;       /* policy decisions */
	struct sched_rng user_rng;  /* sched_random() */
	struct sched_pct pct;
	size_t byte_pos;            /* BYTES / REPLAY / SCRIPT: next byte */
	unsigned script_arg;        /* SCRIPT: the argument of the action taking effect */
	int script_force;           /* SCRIPT: task + 1 the next "which task" decision takes (0: none) */
	uint64_t script_keys[64];   /* SCRIPT: which (task, mark, point, kind) keys the script holds, hashed */
	size_t dfs_pos;             /* DFS: next decision of the stack */
	unsigned long dfs_preempts; /* DFS: preemptions so far in this run */
	struct sched_live *live;
	struct sched_live own;      /* live results of in-process runs */
	uint8_t *own_log;           /* their log */
	size_t own_log_cap;
	bool crashed;               /* the SIGABRT handler ended the run */
	int tsan_run, tsan_join;    /* TSan sync addresses (fork / join of a run) */
	jmp_buf main_jmp;           /* a run ended by main's own first decision (replay divergence) */
};

/* This thread's engine, made on first use (NULL: out of memory); the one made if any; free it. */
struct sched *sched_engine(void);
struct sched *sched_engine_if_any(void);
void sched_engine_forget(void);
/* The body of every task fiber (fiber_create's entry). */
void sched_task_main(void *arg);
/* Run the prepared schedule from main: hooks on, first decision, back when over, hooks off. */
void sched_dispatch(struct sched *s);

/* Abandon the run: record @outcome and switch to the scheduler; does not return. */
void sched_end_run(struct sched *s, enum sched_outcome outcome, int task, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 4, 5)));
void sched_set_reason(struct sched *s, enum sched_outcome outcome, int task, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---------------------------------------------------------------- policies (policy.c) */

/* Prepare the policy for a run (seed, priorities, change points). */
void policy_begin_run(struct sched *s);
/*
 * Choose one of @nopts options (>= 2) of a decision of kind @kind.  For
 * DK_TASK, opts[i] is the task of option i, option 0 the running task when
 * @cur_ok (DFS cuts the options to that one past its preemption bound).
 * Returns the option index; a replay divergence ends the run (SCHED_NONDET).
 */
unsigned policy_decide(struct sched *s, enum sched_dkind kind, const int *opts, unsigned nopts, bool cur_ok);
/* DFS: after a run, move to the next schedule. */
void policy_dfs_end_run(struct sched *s);

/* ---------------------------------------------------------------- trace (trace.c) */

/* Hash one event into the live trace hash, and print it if a timeline is on. */
void trace_event(struct sched *s, enum sched_ev ev, int task, int cpu, int point, long arg, const char *name);
void trace_timeline_header(struct sched *s);

#endif /* MM_SCHED_INT_H */

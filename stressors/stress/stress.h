/* SPDX-License-Identifier: MIT */
/*
 * stress.h - mmfuzz-stress, the free-running stressor: N worker threads
 * over M vCPUs of one instance, hammering one allocator interface (a mode)
 * while injections run against them (DESIGN.md, "Suite"; issue 6).
 *
 * Threads and what they touch
 * ---------------------------
 *   workers      allocate, check, hand allocations to the next worker
 *                through a ring, free; own everything in their live table
 *   signaller    tgkill(SIGUSR1) to random workers: the handler calls
 *                mm_irq_from_signal(), which runs the instance's interrupt
 *                handler (irq.c) on the worker's vCPU, mid-fast-path
 *   onoff        vCPUs offline and online again
 *   control      drain_all_pages, mm_pcp_update, kmem_cache_shrink
 *   pressure     fills a shrinker-backed page cache until the zones sit at
 *                and below their watermarks; reclaim empties it
 *   watchdog     notices a worker that has not finished an op for
 *                --hang-timeout seconds and fails the run with its last ops
 *   main         the coordinator: start barrier, stop-the-world checks and
 *                stutters (gate.c), vacuity, the end, the report
 *
 * The gate (gate.c) is the only place threads meet: every thread that
 * calls the allocator (workers, onoff, control, pressure) polls it between
 * operations, gives its vCPU back (a task blocked while holding a vCPU
 * blocks everybody who needs it) and parks; the coordinator then has the
 * instance to itself.  Parking goes through one mutex, which is also what
 * orders the workers' plain tables before the coordinator's reads of them.
 *
 * Ownership of client memory (shadow.c): every allocation is one struct
 * alloc held in exactly one place - a worker's live table, a ring slot, a
 * vCPU's interrupt pool, the pressure cache - and marked in two global
 * atomic bitmaps (pfns for pages, 8-byte granules for objects) between its
 * allocation and its free, so a block handed out twice is caught by the
 * second owner at once, whichever thread that is.
 *
 * One source tree; variants by flags: MM_DEBUG, MM_TEST_HOOKS (needed: the
 * injections at preemption points), sanitizers (STRESS_TSAN shrinks the
 * defaults).
 */
#ifndef MM_STRESS_H
#define MM_STRESS_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "debug.h"
#include "mm/cpu.h"
#include "mm/mm.h"
#include "mm/slab.h"
#include "sched/tidwatch.h"

/* The sanitizer of this build, from debug.h (MM_TSAN 0/1, MM_ASAN defined or not). */
#define STRESS_TSAN MM_TSAN
/* --ops K: after K ops a worker goes on until every injection fired, for at most this long from the start */
#define STRESS_OPS_EXTEND_S (STRESS_TSAN ? 20.0 : 5.0)
/* --selftest: worker 0 plants its fault from this op on (main.c, stress_selftest_fire()). */
#define STRESS_SELFTEST_FROM_OP 100
#ifdef MM_ASAN
#define STRESS_ASAN 1
#else
#define STRESS_ASAN 0
#endif

#define STRESS_MAX_THREADS 64
#define STRESS_MAX_CACHES  8
#define STRESS_OPLOG       32          /* last ops kept per worker (power of two) */
#define STRESS_RING        256         /* remote-free ring slots (power of two) */
#define STRESS_IRQ_POOL    16          /* allocations an interrupt pool holds */
#define STRESS_BULK_MAX    64          /* entries of one bulk call */

/* ---------------------------------------------------------------- modes */

enum stress_mode {
	MODE_PAGES,        /* alloc_pages of every order and zone, __GFP_ZERO/COMP, get_zeroed_page */
	MODE_PCP,          /* order <= PAGE_ALLOC_COSTLY_ORDER, every pcp migratetype: the pcp fast path */
	MODE_BULK,         /* __alloc_pages_bulk array/list, release_pages, kmem_cache_*_bulk */
	MODE_SLUB,         /* kmem_cache_alloc/free on the stressor's caches: the cmpxchg16b fast path */
	MODE_KMALLOC,      /* kmalloc family, krealloc, ksize, large kmalloc, kfree_bulk */
	MODE_MIXED,        /* all of the above */
	MODE_NR
};
const char *stress_mode_name(enum stress_mode m);

/* ---------------------------------------------------------------- configuration */

struct stress_config {
	enum stress_mode mode;
	int threads;                /* workers */
	int cpus;                   /* vCPUs of the instance */
	double time_s;              /* run length (when ops == 0) */
	unsigned long ops;          /* ops per worker (0: run for time_s) */
	uint64_t seed;
	const char *json;           /* --json FILE, or NULL */
	bool migrate, irq, onoff, stutter, pressure, remote, control;
	bool tid_check;             /* the tid contract at every committed point (--no-tid-check clears it) */
	int check_level;            /* 0 none .. 3 (see worker.c) */
	double hang_s;              /* watchdog bound */
	unsigned migrate_1in;       /* migrate at one preemption point in N (0: phases, see inject.c) */
	unsigned irq_1in;           /* raise an interrupt at one point in N (0: phases) */
	unsigned signal_us;         /* interval between signals */
	const char *selftest;       /* a planted fault (main.c): the run must fail */
	bool quiet;                 /* no per-thread lines */
	bool onoff_detached;        /* every offline from a thread holding no vCPU (inject.c) */
	bool onoff_unserialized;    /* accepted for old rerun lines: the default now */
	bool migrate_anywhere;      /* accepted for old rerun lines: the default now */
	int argc;                   /* the original command line, for the rerun line */
	char **argv;
	bool no_replay;             /* --no-replay: no deterministic replay attempt after a failure */
	unsigned long replay_runs;  /* --replay-runs: deterministic runs per policy (replay.c) */
	double replay_time;         /* --replay-time: seconds for the whole attempt */
};

/* A failure handed to the deterministic engine (replay.c). */
enum replay_status {
	REPLAY_NONE,                /* no failure, or not tried yet */
	REPLAY_REPRODUCED,          /* a deterministic run of the same mode and seed failed, and again alone */
	REPLAY_FREE_ONLY,           /* found only by free-running mode: reason says why */
	REPLAY_SKIPPED,             /* not attempted: --no-replay, or a hang (reason says which) */
	REPLAY_INCONCLUSIVE,        /* no verdict: no deterministic run completed, or the failing one could not be rerun */
	REPLAY_INTERRUPTED,         /* SIGINT/SIGTERM stopped the attempt (or came before it): no verdict */
};

struct stress_replay {
	enum replay_status status;
	char command[400];          /* REPRODUCED: the command that replays it */
	char det_failure[600];      /* REPRODUCED: the deterministic run's failure */
	char reason[1200];          /* FREE_ONLY / SKIPPED / INCONCLUSIVE / INTERRUPTED: why */
	char artifact[300];         /* the deterministic failure's artifact (--replay FILE replays it) */
	unsigned long runs;         /* deterministic runs made */
	double seconds;
};

/* ---------------------------------------------------------------- allocations */

enum alloc_kind {
	AK_NONE,
	AK_PAGE,           /* alloc_pages family: page, order */
	AK_OBJ,            /* kmem_cache_alloc: cache */
	AK_KMALLOC,        /* kmalloc family (size > KMALLOC_MAX_CACHE_SIZE: compound pages) */
};

struct alloc {
	void *p;                    /* the client's address */
	struct page *page;          /* AK_PAGE: the head page */
	uint64_t tag;               /* pattern seed: the contents are a function of (tag, offset) */
	uint32_t size;              /* bytes the client may touch */
	uint8_t kind;               /* enum alloc_kind */
	uint8_t order;              /* AK_PAGE; AK_KMALLOC large: the compound order */
	uint8_t cache;              /* AK_OBJ: index in stress.caches[] */
	uint8_t pad;                /* AK_PAGE: 1 if from __get_free_pages (freed with free_pages);
				     * AK_KMALLOC: 1 if large (pages, not a slab object) */
};

/* ---------------------------------------------------------------- op log */

enum stress_op {
	OP_NONE,
	OP_ALLOC_PAGES, OP_FREE_PAGES, OP_ZEROED_PAGE, OP_BULK_ARRAY, OP_BULK_LIST,
	OP_RELEASE_PAGES, OP_FREE_PAGE_LIST, OP_DRAIN_LOCAL,
	OP_CACHE_ALLOC, OP_CACHE_FREE, OP_CACHE_BULK_ALLOC, OP_CACHE_BULK_FREE,
	OP_KMALLOC, OP_KFREE, OP_KREALLOC, OP_KFREE_BULK, OP_KSIZE,
	OP_REMOTE_PUSH, OP_REMOTE_FREE, OP_VERIFY, OP_CHECK, OP_PARK, OP_SLICE, OP_EXIT,
	OP_NR
};
const char *stress_op_name(enum stress_op op);

/* One record: two words so a reader on another thread sees whole fields. */
struct oplog {
	atomic_uint_fast64_t w[STRESS_OPLOG][2];   /* {seq << 32 | op << 24 | cpu << 16 | arg, ptr} */
	atomic_uint_fast64_t seq;                  /* records written */
};

/* ---------------------------------------------------------------- remote-free ring */

/* One producer (worker i), one consumer (worker i + 1). */
struct ring {
	struct alloc slot[STRESS_RING];
	_Alignas(64) atomic_uint head;             /* written by the producer */
	_Alignas(64) atomic_uint tail;             /* written by the consumer */
};

/* ---------------------------------------------------------------- workers */

enum worker_state { WS_INIT, WS_RUNNING, WS_PARKED, WS_DONE };

/*
 * Statistics: one writer each (the worker, its signal handler, the holder
 * of a vCPU for its pool), read by the coordinator while the run goes on -
 * so relaxed atomics, written with a load and a store (no lock prefix).
 */
typedef atomic_ulong stat_t;
#define STAT(x)        atomic_load_explicit(&(x), memory_order_relaxed)
#define STAT_ADD(x, n) atomic_store_explicit(&(x), STAT(x) + (unsigned long)(n), memory_order_relaxed)
#define STAT_INC(x)    STAT_ADD(x, 1)

struct worker_stats {
	stat_t ops;                         /* allocator calls */
	stat_t allocs, frees;               /* objects or blocks */
	stat_t fails;                       /* allocations that returned NULL */
	stat_t remote_sent, remote_freed;
	stat_t bulk_calls, bulk_objects;
	stat_t verifies;                    /* live allocations re-read */
	stat_t t1_checks;                   /* mm_check(1) calls */
	stat_t tid_checks;                  /* tid contract looks at the worker's vCPU (tidwatch) */
	stat_t slices;                      /* vCPU given up for other workers */
	stat_t hook_migrations;             /* mm_migrate_current() that moved us */
	stat_t hook_irqs;                   /* mm_raise_irq() that ran */
	stat_t sig_in_window;               /* signal interrupts inside an open fast-path window */
	stat_t sig_in_alloc, sig_outside;   /* signal interrupts inside / outside allocator calls */
	stat_t drains;                      /* drain_local_pages */
};

struct worker {
	int id;
	pthread_t th;
	atomic_int tid;                            /* kernel thread id, for tgkill */
	atomic_int state;                          /* enum worker_state */
	atomic_ulong progress;                     /* ops done: the watchdog's view */
	uint64_t rng;                              /* op decisions */
	uint64_t hook_rng;                         /* injection decisions (the hook) */
	struct alloc *live;                        /* [nlive] */
	int nlive;
	int nused;                                 /* non-empty entries of live[] */
	struct ring *out;                          /* rings[id]: we produce */
	struct ring *in;                           /* rings[id - 1]: we consume */
	struct worker_stats st;
	double seconds;                            /* from the start barrier to the worker's end */
	struct oplog log;
	/* Set by the hook: a fast-path window is open (TID_READ .. AFTER_CMPXCHG,
	 * PCP_BEFORE_LOCK .. the unlock, BULK); read by the signal handler. */
	volatile int win_open;
	volatile int in_alloc;                     /* inside an allocator call (signal accounting) */
	unsigned mig_1in, irq_1in;                 /* the hook's rates in the current phase */
	unsigned long phase_end;                   /* op count at which the rates change */
};

/* ---------------------------------------------------------------- interrupt pools */

/* One per vCPU: touched only by interrupt handlers running on that vCPU
 * (so by its holder's thread), and by the coordinator while everyone is parked. */
struct irq_pool {
	struct alloc a[STRESS_IRQ_POOL];
	uint64_t rng;
	stat_t runs, allocs, frees, fails;
	stat_t nested_in_alloc;                    /* runs that interrupted an allocator call */
} __attribute__((aligned(64)));

/* ---------------------------------------------------------------- the run */

struct stress {
	struct stress_config cfg;
	struct mm *mm;
	struct mm_config mcfg;
	long free0[MAX_NR_ZONES];                  /* free pages per zone at creation */
	struct kmem_cache *caches[STRESS_MAX_CACHES];
	unsigned int cache_align[STRESS_MAX_CACHES];
	int ncaches;
	int debug_cache;                           /* index of the slub_debug cache, -1 if none */

	struct worker *w;                          /* [threads] */
	struct ring *rings;                        /* [threads] */
	struct irq_pool *pools;                    /* [cpus] */

	/* shadow bitmaps (shadow.c) */
	atomic_ulong *pfn_map;                     /* one bit per pfn from first_pfn */
	atomic_ulong *gran_map;                    /* one bit per 8 bytes of the arena */
	uintptr_t arena;
	size_t arena_size;
	unsigned long first_pfn, end_pfn;

	/* run control */
	atomic_int stop;                           /* workers: finish now */
	atomic_int aux_stop;                       /* auxiliary threads: finish now */
	atomic_int aux_joined;                     /* workers may exit: nobody signals them any more */
	atomic_int satisfied;                      /* every enabled injection fired */
	atomic_int failed;                         /* a failure was recorded */
	atomic_int interrupted;                    /* SIGINT/SIGTERM (its number): stop, report, exit 130 */
	char failure[1024];                        /* the first failure, written by whoever set failed */
	int failed_worker;                         /* -1: not a worker */
	double t0;                                 /* start barrier release (monotonic seconds) */
	double elapsed;
	double cpu_s;                              /* user + system CPU seconds of the process */

	/* counters of the auxiliary threads (each written by one thread) */
	atomic_ulong signals_sent;
	atomic_ulong onoff_cycles, onoff_errors;
	atomic_ulong drains, pcp_updates, shrinks;
	atomic_ulong stw_checks, stutters;
	atomic_ulong pressure_phases, pressure_pages, pressure_peak;
	atomic_ulong shrinker_calls, shrinker_freed;
	atomic_ulong below_low, below_min;         /* phases that saw a zone under its low / min mark */
	atomic_ulong irq_fail_total;
	bool onoff_possible;
	bool hooks;                                /* built with MM_TEST_HOOKS */
	struct tidwatch tw;                        /* the tid contract's last pairs (per vCPU: its holder's) */
	struct stress_replay replay;               /* after a failure (replay.c) */
};

extern struct stress S;
extern _Thread_local struct worker *stress_self;  /* the running worker; NULL elsewhere */

/* ---------------------------------------------------------------- main.c */
struct stress_totals;                          /* report.c */
double stress_now(void);
/* Record the first failure (and print it); the run then stops.  @w: the worker, or NULL.
 * true if this was the first (the one reported). */
bool stress_fail(struct worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void stress_print_rerun(FILE *f);
void stress_print_oplogs(FILE *f);
void stress_print_oplog(FILE *f, struct worker *w);
/* The newest op in @w's log: its name, and the vCPU it ran on (-1: none). */
const char *stress_last_op(struct worker *w, int *cpu);
/* The end of the run belongs to one thread - main, the watchdog on a hang, or on_fatal's crashing
 * thread: true for the first caller. */
bool stress_claim_end(void);
/* S.elapsed and S.cpu_s, as of now. */
void stress_measure_end(void);
/* The end: replay attempt (if failed), report, --json, op logs and rerun (if failed), verdict line.
 * Returns the exit status: 0, 1 (failed), 130 (interrupted), or 3 (--json not written). */
int stress_finish(const struct stress_totals *t, const char *vacuous, bool ok);
/* --selftest: worker 0 plants the fault (main.c). */
bool stress_selftest_fire(struct worker *w);

#define MIN_UL(a, b) ((unsigned long)(a) < (unsigned long)(b) ? (unsigned long)(a) : (unsigned long)(b))

/* ---------------------------------------------------------------- rng (inline) */
static inline uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);   /* splitmix64 */
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}
static inline uint64_t rng_below(uint64_t *s, uint64_t n)
{
	return n ? rng_next(s) % n : 0;
}
/* The stream of thread/purpose @k of the run's seed. */
static inline uint64_t rng_seed_for(uint64_t seed, uint64_t k)
{
	uint64_t s = seed ^ (k * 0xD1B54A32D192ED03ULL);
	return rng_next(&s);
}

/* ---------------------------------------------------------------- oplog (inline) */
static inline unsigned oplog_add(struct oplog *l, enum stress_op op, int cpu, unsigned long arg, const void *p)
{
	uint64_t n = atomic_load_explicit(&l->seq, memory_order_relaxed);
	unsigned i = (unsigned)(n & (STRESS_OPLOG - 1));
	uint64_t w0 = (n & 0xffffffffULL) << 32 | (uint64_t)(op & 0xff) << 24 |
		      (uint64_t)(cpu & 0xff) << 16 | (arg & 0xffff);
	atomic_store_explicit(&l->w[i][0], w0, memory_order_relaxed);
	atomic_store_explicit(&l->w[i][1], (uint64_t)(uintptr_t)p, memory_order_relaxed);
	atomic_store_explicit(&l->seq, n + 1, memory_order_relaxed);
	return i;
}
/* The result of the op logged at @i (an allocation's address). */
static inline void oplog_set_ptr(struct oplog *l, unsigned i, const void *p)
{
	atomic_store_explicit(&l->w[i][1], (uint64_t)(uintptr_t)p, memory_order_relaxed);
}

/* ---------------------------------------------------------------- shadow.c */
int shadow_setup(void);
void shadow_teardown(void);
/* Checks and marks a new allocation (arena, alignment, zone, disjointness); stamps the pattern.
 * @zeroed: the allocator promised zeroes.  @align: bytes.  @max_zone: highest zone allowed.
 * false (and a failure recorded) on a violation. */
bool shadow_take(struct worker *w, struct alloc *a, bool zeroed, unsigned long align, int max_zone);
/* Verifies the pattern and unmarks; call before the allocator's free.  false on a violation. */
bool shadow_give(struct worker *w, const struct alloc *a);
/* Verifies the pattern of a held allocation. */
bool shadow_verify(struct worker *w, const struct alloc *a, bool full);
/* Pattern helpers (krealloc keeps a prefix). */
void shadow_stamp(const struct alloc *a, bool full);
bool shadow_check_range(struct worker *w, const struct alloc *a, size_t from, size_t to, const char *what);
int shadow_zone_of(unsigned long pfn);
unsigned int shadow_size_order(size_t size);
bool shadow_full(void);                    /* full patterns (check level >= 2) */
/* Frees one held allocation through the allocator (no shadow work). */
void alloc_free_raw(const struct alloc *a);
/* Stop-the-world: every held allocation disjoint, marked and intact; B4 walker. */
bool shadow_global_check(void);
void shadow_client_walk(void *ctx, mm_mark_fn mark, void *wk);
/* Calls @fn on every allocation held anywhere (tables, rings, pools, pressure cache). */
void shadow_for_each_held(void (*fn)(const struct alloc *a, void *ctx), void *ctx);

/* ---------------------------------------------------------------- worker.c */
void *worker_main(void *arg);
/* One op of @mode by worker @w; returns false to stop. */
bool worker_op(struct worker *w, enum stress_mode mode);
/* Free everything @w holds or receives. */
void worker_release_all(struct worker *w);
bool remote_push(struct worker *w, const struct alloc *a);
void remote_drain(struct worker *w, int max);

/* ---------------------------------------------------------------- inject.c */
int inject_setup(void);                    /* hook, irq handler, signal handler */
void inject_quiesce(void);                 /* hook and handler off */
void inject_irq_enable(bool on);           /* the interrupt handler on or off (stop-the-world) */
void *signaller_main(void *arg);
void *onoff_main(void *arg);
void *control_main(void *arg);
void irq_pools_release(void);
void stress_wait_hook_install(void);       /* this thread waits with sched_yield */
/* The tid contract on the worker's vCPU, where the pair must be committed (@where: a static string). */
void stress_tid_check(struct worker *w, const char *where);

/* ---------------------------------------------------------------- pressure.c */
int pressure_setup(void);
void *pressure_main(void *arg);
void pressure_release(void);
void pressure_teardown(void);
void pressure_for_each(void (*fn)(const struct alloc *a, void *ctx), void *ctx);

/* ---------------------------------------------------------------- gate.c */
void gate_init(int participants);
/* Between operations: park if the coordinator asked.  @w may be NULL (auxiliary thread). */
void gate_poll(struct worker *w);
static inline bool gate_requested(void);
/* This participant will not poll again. */
void gate_leave(void);
/* Coordinator: park everybody, then run @fn (NULL: just wait @pause_ms), then release. */
bool gate_stop_the_world(bool (*fn)(void), unsigned pause_ms);
/* Start barrier: participants wait here until gate_start_release(). */
void gate_start_wait(void);
void gate_start_release(void);
void gate_wait_started(int n);
void *watchdog_main(void *arg);
extern atomic_int gate_req;
static inline bool gate_requested(void)
{
	return atomic_load_explicit(&gate_req, memory_order_relaxed) != 0;
}

/* ---------------------------------------------------------------- replay.c */
/* After a failure: try the deterministic engine on the same mode and seed (fills S.replay). */
void stress_replay_attempt(void);
/* No attempt, for @why (the hang path: a stuck worker cannot be stopped); fills S.replay if still empty. */
void stress_replay_skip(const char *why);
/* "reproduced deterministically: CMD" or "found only by free-running mode: WHY" (or no verdict, and why). */
void stress_replay_print(FILE *f);
const char *stress_replay_status_name(enum replay_status st);

/* ---------------------------------------------------------------- report.c */
struct stress_totals {
	unsigned long ops, allocs, frees, fails, remote_sent, remote_freed, bulk_calls, bulk_objects;
	unsigned long verifies, t1_checks, tid_checks, slices, hook_migrations, hook_irqs, sig_in_window;
	unsigned long sig_in_alloc, sig_outside, drains_local;
	unsigned long irq_runs, irq_allocs, irq_frees, irq_fails;
	struct mm_cpu_stats cpu;
	unsigned long slub[NR_SLUB_STAT_ITEMS];
	bool slub_stats;
	unsigned long ev[NR_VM_EVENT_ITEMS];
};
void stress_totals(struct stress_totals *t);
/* Which enabled injections never fired: a comma list in @buf ("" if none). */
void stress_vacuity(const struct stress_totals *t, char *buf, size_t len, bool final);
void stress_report(FILE *f, const struct stress_totals *t, const char *vacuous, bool ok);
/* The full record into the --json file (jsonfile.c's json_open/json_commit): 0 or an errno value. */
int stress_write_json(const struct stress_totals *t, const char *vacuous, bool ok);

/* ---------------------------------------------------------------- jsonfile.c */
/* Text built in a fixed buffer (truncated, never overrun): usable from on_fatal. */
struct jbuf {
	char *b;
	size_t cap, n;
};
void jb_printf(struct jbuf *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void jb_str(struct jbuf *j, const char *s);          /* a JSON string */
void json_head(struct jbuf *j);                      /* "{", mode, threads, cpus, seed, ops, pid, command */
void json_replay(struct jbuf *j);                    /* "replay": {...}, */
/* --json @path ("-": stdout): resolve it and write the "RUNNING" placeholder; 0 or an errno value. */
int json_begin(const char *path);
struct json_file {
	FILE *f;
	char tmp[PATH_MAX + 16];                     /* the temporary file renamed into place; "" if none */
};
FILE *json_open(struct json_file *jf);               /* NULL and errno on failure */
int json_commit(struct json_file *jf);               /* close (and rename into place): 0 or an errno value */
/* A short record (no statistics) in place of the placeholder - on_fatal's, @result "FAILURE";
 * a run that could not start, "ERROR" (S.failure says why).  0 or an errno value. */
int json_write_fatal(const char *result);

#endif /* MM_STRESS_H */

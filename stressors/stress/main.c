/* SPDX-License-Identifier: MIT */
/*
 * main.c - mmfuzz-stress: the command line, the instance, the threads, the
 * coordinator loop and the end of the run (STYLE.md rule 14: parameters
 * from argv, threads held at a start barrier, a seeded PRNG, smaller under
 * TSan, a conservation assert at the end).
 *
 *   mmfuzz-stress MODE [--threads N] [--cpus M] [--time S | --ops K] [--seed X]
 *                 [--json FILE] [--no-migrate] [--no-irq] [--no-onoff] [--no-stutter]
 *                 [--no-pressure] [--no-remote] [--no-control] [--check-level L] ...
 *
 * The end: every worker frees what it holds and drains its inbound ring;
 * then the coordinator frees what is left in rings, interrupt pools and
 * the pressure cache, checks that no client bit is left in the shadow
 * bitmaps, drains every pcp list, shrinks every cache, and asserts
 * conservation: free pages per zone equal to those at creation, PGALLOC ==
 * PGFREE, mm_check level 4 clean, no allocator report, and the stressor's
 * caches destroyed without a leak report.
 *
 * Every failure prints the command that reruns it (the seed included) and
 * the last operations of every worker, then hands the mode and seed to the
 * deterministic engine (replay.c): "reproduced deterministically: CMD" or
 * "found only by free-running mode: WHY".  A free-running run is not
 * deterministic (threads interleave as the OS schedules them): the seed
 * fixes each thread's op stream and the injection decisions, not the
 * interleaving; --deterministic (the deterministic scheduler) is what
 * replays interleavings exactly.
 *
 * The end, in every way it can come: the report, the --json record
 * (jsonfile.c: a "RUNNING" placeholder from the start, replaced whole at
 * the end), the replay verdict and SUCCESS, FAILURE or INTERRUPTED as the
 * last line.  One thread owns the end (stress_claim_end): main, or the
 * watchdog when a worker hangs (gate.c), or on_fatal's crashing thread -
 * the others then stay out of the shared end-of-run state.  A failure
 * outranks an interruption: once one is recorded, SIGINT/SIGTERM only cut
 * the replay attempt short.
 */
#include <signal.h>
#include <sys/resource.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "stress.h"

struct stress S;

/* Defaults the rerun line leaves out when they are in force. */
#define STRESS_SIGNAL_US 200
#define STRESS_HANG_S (STRESS_TSAN ? 30.0 : 10.0)
/* Exit status: the run's verdict is its last line, but --json could not be written at the end. */
#define STRESS_EXIT_NOJSON 3

double stress_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool stress_fail(struct worker *w, const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	atomic_store(&S.stop, 1);
	if (atomic_exchange(&S.failed, 1))
		return false;                    /* the first failure is the one reported */
	S.failed_worker = w ? w->id : -1;
	if (w)
		snprintf(S.failure, sizeof(S.failure), "thread %d, op %lu: %s", w->id, STAT(w->st.ops), msg);
	else
		snprintf(S.failure, sizeof(S.failure), "%s", msg);
	fprintf(stderr, "mmfuzz-stress: FAILURE: %s\n", S.failure);
	return true;
}

/* ---------------------------------------------------------------- reports */

void stress_print_rerun(FILE *f)
{
	const struct stress_config *c = &S.cfg;
	fprintf(f, "rerun: ./mmfuzz stress %s --threads %d --cpus %d ", stress_mode_name(c->mode), c->threads,
		c->cpus);
	if (c->ops)
		fprintf(f, "--ops %lu", c->ops);
	else
		fprintf(f, "--time %g", c->time_s);
	fprintf(f, " --seed %#llx --check-level %d", (unsigned long long)c->seed, c->check_level);
	if (c->migrate_1in)
		fprintf(f, " --migrate-1in %u", c->migrate_1in);
	if (c->irq_1in)
		fprintf(f, " --irq-1in %u", c->irq_1in);
	if (c->signal_us != STRESS_SIGNAL_US)
		fprintf(f, " --signal-us %u", c->signal_us);
	if (c->hang_s != STRESS_HANG_S)
		fprintf(f, " --hang-timeout %g", c->hang_s);
	const char *no[] = { "migrate", "irq", "onoff", "stutter", "pressure", "remote", "control", "tid-check" };
	const bool on[] = { c->migrate, c->irq, c->onoff, c->stutter, c->pressure, c->remote, c->control,
			    c->tid_check };
	for (int i = 0; i < 8; i++)
		if (!on[i])
			fprintf(f, " --no-%s", no[i]);
	if (c->selftest)
		fprintf(f, " --selftest %s", c->selftest);
	if (c->onoff_detached)
		fprintf(f, " --onoff-detached");
	/*
	 * The verb's build nearest this binary's: a failure that an MM_DEBUG
	 * assertion caught would not show in the default release build
	 * (MM_DEBUG=0); the line below names this very binary for the exact one.
	 */
	fprintf(f, "%s\n", STRESS_TSAN ? " --tsan" : STRESS_ASAN ? " --asan" : MM_DEBUG >= 2 ? " --debug" : "");
	fprintf(f, "       (this binary: %s", c->argv[0]);
	for (int i = 1; i < c->argc; i++)
		fprintf(f, " %s", c->argv[i]);
	fprintf(f, ")\n");
}

void stress_print_oplog(FILE *f, struct worker *w)
{
	uint64_t n = atomic_load(&w->log.seq);
	uint64_t first = n > STRESS_OPLOG ? n - STRESS_OPLOG : 0;
	fprintf(f, "  thread %d (state %d, %lu ops):\n", w->id, atomic_load(&w->state), w->st.ops);
	for (uint64_t k = first; k < n; k++) {
		unsigned i = (unsigned)(k & (STRESS_OPLOG - 1));
		uint64_t w0 = atomic_load_explicit(&w->log.w[i][0], memory_order_relaxed);
		uint64_t w1 = atomic_load_explicit(&w->log.w[i][1], memory_order_relaxed);
		int cpu = (int8_t)((w0 >> 16) & 0xff);
		fprintf(f, "    #%-8llu %-16s cpu %2d arg %-6llu %#llx\n", (unsigned long long)(w0 >> 32),
			stress_op_name((enum stress_op)((w0 >> 24) & 0xff)), cpu,
			(unsigned long long)(w0 & 0xffff), (unsigned long long)w1);
	}
}

const char *stress_last_op(struct worker *w, int *cpu)
{
	uint64_t n = atomic_load(&w->log.seq);
	*cpu = -1;
	if (!n)
		return "none";
	uint64_t w0 = atomic_load_explicit(&w->log.w[(n - 1) & (STRESS_OPLOG - 1)][0], memory_order_relaxed);
	*cpu = (int8_t)((w0 >> 16) & 0xff);
	return stress_op_name((enum stress_op)((w0 >> 24) & 0xff));
}

void stress_print_oplogs(FILE *f)
{
	if (!S.w) {
		fprintf(f, "no thread ran: the failure came while setting the instance up\n");
		return;
	}
	fprintf(f, "last operations of each thread (arg: order, size, count or cache):\n");
	for (int i = 0; i < S.cfg.threads; i++)
		stress_print_oplog(f, &S.w[i]);
}

/* ---------------------------------------------------------------- command line */

/*
 * The deterministic replay attempt's bounds (replay.c): about a second per
 * policy in a plain build.  The time bound stays 20 s under sanitizers too:
 * whoever runs us with a deadline (the bug-zoo runner allows its budget +
 * 60 s) must not see a failure turn into a timeout.
 */
#define REPLAY_RUNS (STRESS_TSAN || STRESS_ASAN ? 500UL : 2000UL)
#define REPLAY_TIME 20.0

static void usage(FILE *f)
{
	fprintf(f,
		"usage: mmfuzz-stress MODE [options]\n"
		"modes: pages pcp bulk slub kmalloc mixed\n"
		"  --threads N        worker threads (default %d)\n"
		"  --cpus M           vCPUs of the instance; N may exceed M (default 2)\n"
		"  --time S           run for S seconds (default %g)\n"
		"  --ops K            instead: K ops per worker, then on until every injection fired\n"
		"                     (at most %g s from the start; not with --time)\n"
		"  --seed X           seed of every thread's op and injection stream (default: from the clock)\n"
		"  --json FILE        write the statistics as JSON (- : standard output, before the last\n"
		"                     line).  FILE is replaced at the start by a placeholder whose \"result\"\n"
		"                     is \"RUNNING\" (so a run killed outright leaves one that says so), at the\n"
		"                     end by the record, written beside it and renamed into place; a crash\n"
		"                     the stressor catches (abort, SIGSEGV) leaves a FAILURE record without\n"
		"                     statistics.  A FILE that cannot be created is refused (exit 2)\n"
		"  --no-migrate --no-irq --no-onoff --no-stutter --no-pressure --no-remote --no-control\n"
		"                     switch an injection off\n"
		"  --no-tid-check     no tid contract check on the worker's vCPU (points, between ops)\n"
		"  --check-level L    what is checked while the run goes on (the end-of-run conservation\n"
		"                     checks and mm_check level 4 run at every level):\n"
		"                     0  the shadow bitmaps only (each allocation and free); no\n"
		"                        stop-the-world check\n"
		"                     1  also, every 16 ops, one held allocation re-read (sampled\n"
		"                        pattern) and T1 (mm_check level 1); every %d ms a\n"
		"                        stop-the-world check: every held allocation re-read (sampled\n"
		"                        patterns), mm_check level 4 (level 3 plus W1 exhaustive), no\n"
		"                        allocator report (default)\n"
		"                     2  as 1, every op, and full patterns everywhere\n"
		"                     3  as 2, the stop-the-world check every 50 ms, with\n"
		"                        validate_slab_cache on every cache\n"
		"  --hang-timeout S   watchdog: a worker without progress for S seconds fails (default %g)\n"
		"  --migrate-1in N    migrate at one preemption point in N (default: phases of\n"
		"                     1 in 4 .. 1 in 256, storms included)\n"
		"  --irq-1in N        raise an interrupt at one point in N (default: phases of 1 in 8 .. 512)\n"
		"  --signal-us U      one signal interrupt every U microseconds (default %d)\n"
		"  --quiet            no per-thread lines\n"
		"  --onoff-detached   every offline from a thread that holds no vCPU (default: a\n"
		"                     coin flip per cycle between that and a control vCPU)\n"
		"  --onoff-unserialized, --migrate-anywhere  accepted, no effect: hotplug overlaps\n"
		"                     shrinks and migrations happen inside drains by default now\n"
		"  --selftest KIND    plant a fault the run must catch: scribble, double, leak, hang, vacuous\n"
		"  --no-replay        after a failure, do not try the deterministic engine on the same seed\n"
		"  --replay-runs N    deterministic runs per policy in that attempt (default %lu)\n"
		"  --replay-time S    seconds for the whole attempt, the rerun of a failing run included\n"
		"                     (default %g); a verdict it leaves no time for is \"inconclusive\"\n"
		"The last line is SUCCESS (exit 0) or FAILURE (exit 1); 2: bad arguments (an unwritable\n"
		"--json FILE included, refused before the run); %d: the verdict is the last line, but the\n"
		"--json record could not be written at the end (with FAILURE the status stays 1).\n"
		"Ctrl-C or SIGTERM stops early: final checks, the report so far, INTERRUPTED, exit 130;\n"
		"a second one kills at once - unless a failure was found: that is always reported\n"
		"(FAILURE, exit 1), and Ctrl-C then only cuts its deterministic replay attempt short.\n",
		STRESS_TSAN ? 3 : 4, STRESS_TSAN ? 2.0 : 3.0, STRESS_OPS_EXTEND_S, STRESS_TSAN ? 400 : 200,
		STRESS_HANG_S, STRESS_SIGNAL_US, REPLAY_RUNS, REPLAY_TIME, STRESS_EXIT_NOJSON);
}

static void bad(const char *fmt, const char *arg)
{
	fprintf(stderr, "mmfuzz-stress: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	usage(stderr);
	exit(2);
}

static unsigned long num(const char *opt, const char *v, unsigned long lo, unsigned long hi)
{
	unsigned long x;
	if (!cli_ulong(v, lo, hi, &x))
		bad("bad value for %s", opt);
	return x;
}

static double fnum(const char *opt, const char *v)
{
	double x;
	if (!cli_seconds(v, 86400, &x))
		bad("bad value for %s", opt);
	return x;
}

/*
 * The options that take a value, one row each: where it goes and its
 * range.  parse() looks an option up here once; nothing else lists them.
 */
enum valued_kind { V_INT, V_UINT, V_ULONG, V_U64, V_SECONDS, V_STRING, V_SELFTEST };

struct valued_opt {
	const char *name;
	enum valued_kind kind;
	size_t off;                       /* of the field in struct stress_config */
	unsigned long lo, hi;             /* the integer kinds' range */
};

#define VOPT(name, kind, field, lo, hi) { name, kind, offsetof(struct stress_config, field), lo, hi }
static const struct valued_opt valued_opts[] = {
	VOPT("--threads", V_INT, threads, 1, STRESS_MAX_THREADS),
	VOPT("--cpus", V_INT, cpus, 1, MM_MAX_CPUS),
	VOPT("--time", V_SECONDS, time_s, 0, 0),
	VOPT("--ops", V_ULONG, ops, 1, ~0UL / 64),
	VOPT("--seed", V_U64, seed, 0, ~0UL),
	VOPT("--json", V_STRING, json, 0, 0),
	VOPT("--check-level", V_INT, check_level, 0, 3),
	VOPT("--hang-timeout", V_SECONDS, hang_s, 0, 0),
	VOPT("--migrate-1in", V_UINT, migrate_1in, 1, 1u << 30),
	VOPT("--irq-1in", V_UINT, irq_1in, 1, 1u << 30),
	VOPT("--replay-runs", V_ULONG, replay_runs, 1, 100000000),
	VOPT("--replay-time", V_SECONDS, replay_time, 0, 0),
	VOPT("--signal-us", V_UINT, signal_us, 1, 10000000),
	VOPT("--selftest", V_SELFTEST, selftest, 0, 0),
};
#undef VOPT

static const struct valued_opt *valued_opt(const char *name)
{
	for (size_t k = 0; k < sizeof(valued_opts) / sizeof(valued_opts[0]); k++)
		if (!strcmp(name, valued_opts[k].name))
			return &valued_opts[k];
	return NULL;
}

static void set_valued(struct stress_config *c, const struct valued_opt *o, const char *val)
{
	static const char *const selftests[] = { "scribble", "double", "leak", "hang", "vacuous" };
	char *field = (char *)c + o->off;

	switch (o->kind) {
	case V_INT:
		*(int *)field = (int)num(o->name, val, o->lo, o->hi);
		break;
	case V_UINT:
		*(unsigned *)field = (unsigned)num(o->name, val, o->lo, o->hi);
		break;
	case V_ULONG:
		*(unsigned long *)field = num(o->name, val, o->lo, o->hi);
		break;
	case V_U64:
		*(uint64_t *)field = num(o->name, val, o->lo, o->hi);
		break;
	case V_SECONDS:
		*(double *)field = fnum(o->name, val);
		break;
	case V_STRING:
		*(const char **)field = val;
		break;
	case V_SELFTEST: {
		size_t k = 0;
		while (k < sizeof(selftests) / sizeof(selftests[0]) && strcmp(val, selftests[k]))
			k++;
		if (k == sizeof(selftests) / sizeof(selftests[0]))
			bad("unknown --selftest '%s'", val);
		*(const char **)field = val;
		break;
	}
	}
}

static void parse(int argc, char **argv, struct stress_config *c)
{
	bool have_mode = false, have_seed = false, have_time = false, have_ops = false;
	memset(c, 0, sizeof(*c));
	c->threads = STRESS_TSAN ? 3 : 4;
	c->cpus = 2;
	c->time_s = STRESS_TSAN ? 2.0 : 3.0;
	c->migrate = c->irq = c->onoff = c->stutter = c->pressure = c->remote = c->control = true;
	c->tid_check = true;
	c->check_level = 1;
	c->hang_s = STRESS_HANG_S;
	c->migrate_1in = 0;
	c->irq_1in = 0;
	c->signal_us = STRESS_SIGNAL_US;
	c->replay_runs = REPLAY_RUNS;
	c->replay_time = REPLAY_TIME;
	c->argc = argc;
	c->argv = argv;
	for (int i = 1; i < argc; i++) {
		char *a = argv[i], *val = NULL, opt[64];
		if (a[0] != '-') {
			int m;
			for (m = 0; m < MODE_NR && strcmp(a, stress_mode_name((enum stress_mode)m)); m++)
				;
			if (m == MODE_NR || have_mode)
				bad("unknown mode or extra argument '%s'", a);
			c->mode = (enum stress_mode)m;
			have_mode = true;
			continue;
		}
		snprintf(opt, sizeof(opt), "%s", a);
		char *eq = strchr(opt, '=');
		if (eq) {
			*eq = 0;
			val = a + (eq - opt) + 1;
		}
#define FLAG(name, field) if (!strcmp(opt, "--no-" name)) { c->field = false; continue; }
		FLAG("migrate", migrate) FLAG("irq", irq) FLAG("onoff", onoff) FLAG("stutter", stutter)
		FLAG("pressure", pressure) FLAG("remote", remote) FLAG("control", control)
		FLAG("tid-check", tid_check)
#undef FLAG
		if (!strcmp(opt, "--help") || !strcmp(opt, "-h")) {
			usage(stdout);
			exit(0);
		}
		if (!strcmp(opt, "--quiet")) {
			c->quiet = true;
			continue;
		}
		if (!strcmp(opt, "--onoff-detached")) {
			c->onoff_detached = true;
			continue;
		}
		if (!strcmp(opt, "--onoff-unserialized")) {
			c->onoff_unserialized = true;
			continue;
		}
		if (!strcmp(opt, "--migrate-anywhere")) {
			c->migrate_anywhere = true;
			continue;
		}
		if (!strcmp(opt, "--no-replay")) {
			c->no_replay = true;
			continue;
		}
		const struct valued_opt *o = valued_opt(opt);
		if (!o)
			bad("unknown option '%s'", opt);
		if (!val) {
			if (i + 1 >= argc)
				bad("%s needs a value", opt);
			val = argv[++i];
		}
		set_valued(c, o, val);
		have_time |= o->off == offsetof(struct stress_config, time_s);
		have_ops |= o->off == offsetof(struct stress_config, ops);
		have_seed |= o->off == offsetof(struct stress_config, seed);
	}
	if (!have_mode)
		bad("%s", "a MODE is required");
	if (have_time && have_ops)
		bad("%s", "--time and --ops are alternatives: give one");
	const char *why;
	if (c->json && (why = cli_unwritable(c->json))) {   /* before the run, not after it */
		fprintf(stderr, "mmfuzz-stress: --json %s: cannot write: %s\n", c->json, why);
		exit(2);
	}
	if (!have_seed) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		c->seed = ((uint64_t)ts.tv_sec * 1000000007ULL) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32);
	}
}

/* ---------------------------------------------------------------- the instance */

static int create_caches(void)
{
	static const struct { const char *name; unsigned size, align; slab_flags_t flags; } defs[] = {
		{ "stress-8", 8, 0, 0 },
		{ "stress-64", 64, 0, 0 },
		{ "stress-192-hw", 192, 0, SLAB_HWCACHE_ALIGN },
		{ "stress-1000", 1000, 8, 0 },
		{ "stress-4096", 4096, 0, 0 },
		{ "stress-debug", 96, 0, SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER },
	};
	S.debug_cache = -1;
	if (S.cfg.mode == MODE_PAGES || S.cfg.mode == MODE_PCP || S.cfg.mode == MODE_KMALLOC)
		return 0;
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		struct kmem_cache *s = kmem_cache_create(S.mm, defs[i].name, defs[i].size, defs[i].align,
							 defs[i].flags, NULL);
		if (!s)
			return -1;
		struct kmem_cache_info info;
		kmem_cache_get_info(s, &info);
		if (defs[i].flags & SLAB_RED_ZONE)
			S.debug_cache = S.ncaches;
		S.cache_align[S.ncaches] = info.align ? info.align : 8;
		S.caches[S.ncaches++] = s;
	}
	tidwatch_init(&S.tw, S.caches, S.ncaches, S.cfg.cpus);
	return 0;
}

static int setup(void)
{
	char err[256];
	mm_config_default(&S.mcfg);
	S.mcfg.nr_cpus = (unsigned)S.cfg.cpus;
	S.mm = mm_create(&S.mcfg, err, sizeof(err));
	if (!S.mm) {
		fprintf(stderr, "mmfuzz-stress: mm_create: %s\n", err);
		return -1;
	}
#ifdef MM_TEST_HOOKS
	S.hooks = true;
#endif
	if (create_caches())
		return -1;
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = mm_zone(S.mm, (enum zone_type)z);
		S.free0[z] = zone ? zone_free_pages(zone) : 0;
	}
	if (shadow_setup() || pressure_setup())
		return -1;
	mm_set_client_walker(S.mm, shadow_client_walk, NULL);
	int nlive = STRESS_TSAN ? 128 : 256;
	S.w = calloc((size_t)S.cfg.threads, sizeof(*S.w));
	S.rings = calloc((size_t)S.cfg.threads, sizeof(*S.rings));
	S.pools = calloc((size_t)S.cfg.cpus, sizeof(*S.pools));
	if (!S.w || !S.rings || !S.pools)
		return -1;
	for (int i = 0; i < S.cfg.threads; i++) {
		struct worker *w = &S.w[i];
		w->id = i;
		w->nlive = nlive;
		w->live = calloc((size_t)nlive, sizeof(*w->live));
		if (!w->live)
			return -1;
		w->rng = rng_seed_for(S.cfg.seed, (uint64_t)i);
		w->hook_rng = rng_seed_for(S.cfg.seed, 100 + (uint64_t)i);
		w->out = &S.rings[i];
		w->in = &S.rings[(i + S.cfg.threads - 1) % S.cfg.threads];
	}
	return inject_setup();
}

/* ---------------------------------------------------------------- stop-the-world */

static bool stw_check(void)
{
	struct mm_violation v;
	bool ok = true;
	/* No interrupt may run on the checker's vCPU mid-check (a deferred one would at its points). */
	inject_irq_enable(false);
	atomic_fetch_add(&S.stw_checks, 1);
	if (!shadow_global_check())
		ok = false;
	else if (!mm_check(S.mm, 4, &v)) {   /* level 4: W1 exhaustive too */
		stress_fail(NULL, "stop-the-world mm_check(4): %s", v.msg);
		ok = false;
	} else if (mm_nr_reports(S.mm)) {
		stress_fail(NULL, "the allocator reported: %s", mm_last_report(S.mm)->msg);
		ok = false;
	}
	for (int i = 0; ok && S.cfg.check_level >= 3 && i < S.ncaches; i++) {
		long errors = validate_slab_cache(S.caches[i]);
		if (errors) {
			stress_fail(NULL, "validate_slab_cache(%s): %ld errors", kmem_cache_name(S.caches[i]), errors);
			ok = false;
		}
	}
	mm_cpu_detach(S.mm);
	inject_irq_enable(S.cfg.irq);
	return ok;
}

/* ---------------------------------------------------------------- the end */

static bool bits_clear(atomic_ulong *map, size_t nbits, const char *what)
{
	for (size_t i = 0; i < (nbits + 63) / 64; i++)
		if (atomic_load(&map[i])) {
			stress_fail(NULL, "conservation: %s bitmap word %zu is %#lx after every allocation was freed "
				    "(the shadow lost track of a free)", what, i, atomic_load(&map[i]));
			return false;
		}
	return true;
}

static const char *zname(int z)
{
	static const char *const n[MAX_NR_ZONES] = { "DMA", "DMA32", "Normal", "Movable" };
	return n[z];
}

static bool conserve(void)
{
	struct mm_violation v;

	for (int i = 0; i < S.cfg.threads; i++) {
		struct ring *r = &S.rings[i];
		unsigned t = atomic_load(&r->tail), h = atomic_load(&r->head);
		for (; t != h; t++)
			if (shadow_give(NULL, &r->slot[t % STRESS_RING]))
				alloc_free_raw(&r->slot[t % STRESS_RING]);
		atomic_store(&r->tail, h);
	}
	irq_pools_release();
	pressure_release();
	if (atomic_load(&S.failed))
		return false;
	if (!bits_clear(S.pfn_map, S.end_pfn - S.first_pfn, "pfn") ||
	    !bits_clear(S.gran_map, S.arena_size / 8, "object"))
		return false;
	drain_all_pages(S.mm, NULL);
	for (struct kmem_cache *s = kmem_cache_next(S.mm, NULL); s; s = kmem_cache_next(S.mm, s))
		kmem_cache_shrink(s);
	drain_all_pages(S.mm, NULL);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = mm_zone(S.mm, (enum zone_type)z);
		long now = zone ? zone_free_pages(zone) : 0;
		if (now != S.free0[z]) {
			stress_fail(NULL, "conservation: zone %s has %ld free pages after everything was freed, "
				    "drained and shrunk; %ld at creation (%+ld)", zname(z), now, S.free0[z],
				    now - S.free0[z]);
			return false;
		}
	}
	if (mm_vm_event(S.mm, PGALLOC) != mm_vm_event(S.mm, PGFREE)) {
		stress_fail(NULL, "conservation: PGALLOC %lu != PGFREE %lu", mm_vm_event(S.mm, PGALLOC),
			    mm_vm_event(S.mm, PGFREE));
		return false;
	}
	if (!mm_check(S.mm, 4, &v)) {
		stress_fail(NULL, "final mm_check(4): %s", v.msg);
		return false;
	}
	for (int i = 0; i < S.ncaches; i++) {
		struct kmem_cache_info info;
		if (!kmem_cache_get_info(S.caches[i], &info) && info.nr_live > 0) {
			stress_fail(NULL, "conservation: cache %s still counts %ld live objects", info.name,
				    info.nr_live);
			return false;
		}
	}
	unsigned long reports = mm_nr_reports(S.mm);
	for (int i = 0; i < S.ncaches; i++)
		kmem_cache_destroy(S.caches[i]);
	S.ncaches = 0;
	if (mm_nr_reports(S.mm) != reports || reports) {
		stress_fail(NULL, "the allocator reported: %s", mm_last_report(S.mm)->msg);
		return false;
	}
	mm_cpu_detach(S.mm);
	return true;
}

/* ---------------------------------------------------------------- threads */

static int join_timed(pthread_t th, const char *what)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)S.cfg.hang_s + 1;
	int rc = pthread_timedjoin_np(th, NULL, &ts);
	if (rc)
		stress_fail(NULL, "the %s thread did not finish within %.0f s", what, S.cfg.hang_s);
	return rc;
}

/* S.elapsed and S.cpu_s, as of now. */
void stress_measure_end(void)
{
	struct rusage ru;
	S.elapsed = S.t0 > 0 ? stress_now() - S.t0 : 0;
	if (!getrusage(RUSAGE_SELF, &ru))
		S.cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
			  (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

/* Set in the thread whose stress_claim_end() won: on_fatal asks whether it interrupted the owner. */
static _Thread_local bool owns_end;

bool stress_claim_end(void)
{
	static atomic_int claimed;
	if (atomic_exchange(&claimed, 1))
		return false;
	owns_end = true;
	return true;
}

int stress_finish(const struct stress_totals *t, const char *vacuous, bool ok)
{
	int rc = ok ? 0 : 1;
	if (!ok)
		stress_replay_attempt();
	stress_report(stdout, t, vacuous, ok);
	if (S.cfg.json) {
		int e = stress_write_json(t, vacuous, ok);
		if (e) {
			fflush(stdout);
			fprintf(stderr, "mmfuzz-stress: --json %s: cannot write: %s%s\n", S.cfg.json, strerror(e),
				ok ? "; the verdict stands, exit status 3 says the record is missing" : "");
			if (ok)
				rc = STRESS_EXIT_NOJSON;
		}
	}
	if (!ok) {
		fflush(stdout);
		stress_print_oplogs(stderr);
		stress_print_rerun(stderr);
		fflush(stderr);
		stress_replay_print(stdout);
	}
	int sig = atomic_load(&S.interrupted);
	if (ok && sig) {
		printf("INTERRUPTED by %s after %.1f s: the figures above cover the run so far; every check passed\n",
		       sig == SIGINT ? "SIGINT" : "SIGTERM", S.elapsed);
		if (rc == 0)
			rc = 130;
	} else {
		printf("%s\n", ok ? "SUCCESS" : "FAILURE");
	}
	fflush(stdout);
	fflush(stderr);
	return rc;
}

static void selftest_plant(void);

/*
 * The allocator's BUG_ON (mm_bug) and bounded-loop checks abort; a crash is
 * a failure too.  Either way: the last ops of every thread, the rerun
 * command and FAILURE, then exit 1.  (Sanitizers keep SIGSEGV and report
 * themselves; their reports end the run with their own exit status.)
 */
static void on_fatal(int sig)
{
	static atomic_int once;
	if (atomic_exchange(&once, 1))
		_exit(1);
	const char *what = sig == SIGABRT ? "abort (BUG, VM_BUG_ON or a bounded loop)" : strsignal(sig);
	/*
	 * The end is ours, unless another thread already owns it: main at the
	 * end of the run, or the watchdog reporting a hang.  Before the claim,
	 * main saw S.failed from here, claimed the end itself and measured and
	 * reported beside us (TSan: a race on S.elapsed; a second report).  If
	 * the owner is this thread - a BUG in main's final checks - it is
	 * suspended here, and we report.  If it is another thread, that one
	 * reports: this thread says why it stops and stays; the owner's join
	 * of it times out, and that is its failure.
	 */
	if (!stress_claim_end() && !owns_end) {
		fflush(stdout);
		fprintf(stderr, "\nmmfuzz-stress: FAILURE: %s in a thread while another one ends the run\n", what);
		atomic_store(&S.stop, 1);
		for (;;)
			pause();
	}
	fflush(stdout);
	fprintf(stderr, "\nmmfuzz-stress: FAILURE: %s in the allocator or the stressor (its message is above)\n",
		what);
	atomic_store(&S.failed, 1);
	atomic_store(&S.stop, 1);
	stress_measure_end();
	stress_print_oplogs(stderr);
	stress_print_rerun(stderr);
	fflush(stderr);
	if (!S.failure[0])
		snprintf(S.failure, sizeof(S.failure), "%s", sig == SIGABRT ? "abort" : strsignal(sig));
	stress_replay_attempt();                 /* fork + exec + read: the other threads are left alone */
	int e = S.cfg.json ? json_write_fatal("FAILURE") : 0;   /* no statistics: see jsonfile.c */
	if (e)
		fprintf(stderr, "mmfuzz-stress: --json %s: cannot write: %s\n", S.cfg.json, strerror(e));
	stress_replay_print(stdout);
	fprintf(stdout, "FAILURE\n");
	fflush(stdout);
	fflush(stderr);
	_exit(1);
}

/*
 * Ctrl-C (SIGINT) or SIGTERM: the run stops early as if its time were up -
 * every worker finishes its op, frees what it holds, the final checks run
 * and the report covers the run so far - then INTERRUPTED and exit 130.
 * An injection that had no time to fire is not a VACUOUS failure then.
 *
 * A second one kills at once, as the default action - unless a failure has
 * been recorded: a finding outranks an interruption, so from then on each
 * signal only (re)sets the flag, which cuts the deterministic replay
 * attempt short (replay.c polls it), and the failure is reported whole.
 */
static void on_interrupt(int sig)
{
	int none = 0;
	if (atomic_compare_exchange_strong(&S.interrupted, &none, sig) || atomic_load(&S.failed))
		return;
	struct sigaction dfl;
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	sigemptyset(&dfl.sa_mask);
	sigaction(sig, &dfl, NULL);
	raise(sig);                              /* pending until we return, then the default: the end */
}

static void install_fatal_handlers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_fatal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGABRT, &sa, NULL);
	struct sigaction si;
	memset(&si, 0, sizeof(si));
	si.sa_handler = on_interrupt;
	si.sa_flags = 0;                        /* no SA_RESTART: a wait ends with EINTR and looks at the flag */
	sigemptyset(&si.sa_mask);
	sigaction(SIGINT, &si, NULL);
	sigaction(SIGTERM, &si, NULL);
	if (!STRESS_ASAN && !STRESS_TSAN) {
		sigaction(SIGSEGV, &sa, NULL);
		sigaction(SIGBUS, &sa, NULL);
		sigaction(SIGFPE, &sa, NULL);
	}
}

/* The run could not start: said on stderr and in the --json file (not left RUNNING); exit 2. */
static int start_failed(const char *why)
{
	fprintf(stderr, "mmfuzz-stress: %s\n", why);
	snprintf(S.failure, sizeof(S.failure), "%s", why);
	if (S.cfg.json)
		json_write_fatal("ERROR");
	return 2;
}

int main(int argc, char **argv)
{
	pthread_t onoff, control, pressure, signaller, watchdog;
	bool have_onoff = false, have_control = false, have_pressure = false, have_signaller = false;
	struct stress_totals t;
	char vacuous[512] = "";

	parse(argc, argv, &S.cfg);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The placeholder: proves FILE can be created there, and stands in for a run that dies outright. */
	int je = S.cfg.json ? json_begin(S.cfg.json) : 0;
	if (je) {
		fprintf(stderr, "mmfuzz-stress: --json %s: cannot write: %s\n", S.cfg.json, strerror(je));
		return 2;
	}
	/* Before setup: an allocator that crashes in mm_create is a failure with a report too. */
	install_fatal_handlers();
	if (setup())
		return start_failed("setup failed (mm_create, the caches or the shadow; the message above)");
	if (!S.hooks && S.cfg.migrate) {
		fprintf(stderr, "mmfuzz-stress: built without MM_TEST_HOOKS: no preemption points, "
			"migration injection off\n");
		S.cfg.migrate = false;
	}
	if (S.cfg.cpus == 1 && S.cfg.migrate) {
		fprintf(stderr, "mmfuzz-stress: one vCPU has nowhere to migrate to: migration off\n");
		S.cfg.migrate = false;
	}
	S.onoff_possible = S.cfg.cpus > 1;
	if (S.cfg.onoff && !S.onoff_possible) {
		fprintf(stderr, "mmfuzz-stress: one vCPU cannot go offline: onoff off\n");
		S.cfg.onoff = false;
	}
	if (S.cfg.threads == 1 && S.cfg.remote) {
		fprintf(stderr, "mmfuzz-stress: one thread has nobody to free remotely: remote off\n");
		S.cfg.remote = false;
	}
	selftest_plant();
	printf("mmfuzz-stress %s: threads %d cpus %d %s seed %#llx\n", stress_mode_name(S.cfg.mode), S.cfg.threads,
	       S.cfg.cpus, S.cfg.ops ? "ops-bounded" : "time-bounded", (unsigned long long)S.cfg.seed);
	stress_print_rerun(stdout);

	int participants = S.cfg.threads + S.cfg.onoff + S.cfg.control + S.cfg.pressure;
	gate_init(participants);
	for (int i = 0; i < S.cfg.threads; i++)
		if (pthread_create(&S.w[i].th, NULL, worker_main, &S.w[i]))
			return start_failed("pthread_create failed for a worker");
	if (S.cfg.onoff && !pthread_create(&onoff, NULL, onoff_main, NULL))
		have_onoff = true;
	if (S.cfg.control && !pthread_create(&control, NULL, control_main, NULL))
		have_control = true;
	if (S.cfg.pressure && !pthread_create(&pressure, NULL, pressure_main, NULL))
		have_pressure = true;
	if (S.cfg.irq && !pthread_create(&signaller, NULL, signaller_main, NULL))
		have_signaller = true;
	if (pthread_create(&watchdog, NULL, watchdog_main, NULL))
		return start_failed("pthread_create failed for the watchdog");

	gate_wait_started(participants);
	S.t0 = stress_now();
	gate_start_release();

	/* The coordinator. */
	double stw_every = S.cfg.check_level >= 3 ? 0.05 : STRESS_TSAN ? 0.4 : 0.2;
	double stutter_every = STRESS_TSAN ? 0.7 : 0.45;
	double next_stw = S.t0 + stw_every, next_stutter = S.t0 + stutter_every / 2, next_vac = S.t0;
	while (!atomic_load(&S.failed) && !atomic_load(&S.interrupted)) {
		double now = stress_now();
		if (!S.cfg.ops && now - S.t0 >= S.cfg.time_s)
			break;
		int done = 0;
		for (int i = 0; i < S.cfg.threads; i++)
			done += atomic_load(&S.w[i].state) == WS_DONE;
		if (done == S.cfg.threads)
			break;
		if (S.cfg.check_level >= 1 && now >= next_stw) {
			gate_stop_the_world(stw_check, 0);
			next_stw = stress_now() + stw_every;
		} else if (S.cfg.stutter && now >= next_stutter) {
			gate_stop_the_world(NULL, 5 + (unsigned)(S.cfg.seed % 16));
			atomic_fetch_add(&S.stutters, 1);
			next_stutter = stress_now() + stutter_every;
		}
		if (now >= next_vac) {
			stress_totals(&t);
			stress_vacuity(&t, vacuous, sizeof(vacuous), false);
			atomic_store(&S.satisfied, vacuous[0] == 0);
			next_vac = now + 0.05;
		}
		struct timespec ts = { 0, 2 * 1000000L };
		nanosleep(&ts, NULL);
	}
	atomic_store(&S.stop, 1);
	for (int i = 0; i < S.cfg.threads; i++)
		while (atomic_load(&S.w[i].state) != WS_DONE && !atomic_load(&S.failed)) {
			struct timespec ts = { 0, 1000000L };
			nanosleep(&ts, NULL);
		}
	/* The watchdog (a hung worker, gate.c) or on_fatal (a crash) owns the end: it reports and exits. */
	if (!stress_claim_end())
		for (;;)
			pause();
	stress_measure_end();
	atomic_store(&S.aux_stop, 1);
	bool stuck = false;
	if (have_onoff)
		stuck |= join_timed(onoff, "onoff") != 0;
	if (have_control)
		stuck |= join_timed(control, "control") != 0;
	if (have_pressure)
		stuck |= join_timed(pressure, "pressure") != 0;
	if (have_signaller)
		stuck |= join_timed(signaller, "signaller") != 0;
	stuck |= join_timed(watchdog, "watchdog") != 0;
	atomic_store(&S.aux_joined, 1);
	for (int i = 0; i < S.cfg.threads; i++)
		stuck |= join_timed(S.w[i].th, "worker") != 0;

	/*
	 * Vacuity is judged only for a run that ended by itself and passed
	 * every check: one cut short by Ctrl-C may not have given an injection
	 * its chance, and in a failed run the failure is the finding (the run
	 * stopped at it) - a VACUOUS line beside it would read as a second one.
	 */
	stress_totals(&t);
	stress_vacuity(&t, vacuous, sizeof(vacuous), true);
	if (atomic_load(&S.interrupted))
		vacuous[0] = 0;
	if (atomic_load(&S.failed) || stuck) {
		stress_finish(&t, "", false);
		_exit(1);                             /* the instance may be broken: no teardown */
	}
	inject_quiesce();
	bool ok = conserve();
	if (!ok) {
		vacuous[0] = 0;
	} else if (vacuous[0]) {
		ok = false;
		atomic_store(&S.failed, 1);          /* a failure like any other: a second Ctrl-C cannot lose it */
		snprintf(S.failure, sizeof(S.failure), "VACUOUS: %s", vacuous);
	}
	int rc = stress_finish(&t, vacuous, ok);
	if (!ok)
		_exit(1);
	mm_set_client_walker(S.mm, NULL, NULL);
	pressure_teardown();
	mm_destroy(S.mm);
	shadow_teardown();
	for (int i = 0; i < S.cfg.threads; i++)
		free(S.w[i].live);
	free(S.w);
	free(S.rings);
	free(S.pools);
	return rc;
}

/* ---------------------------------------------------------------- self-tests */

/*
 * --selftest: plant a fault and check the run catches it (ctest runs each,
 * expecting FAILURE and the right words).  A stressor that cannot fail is
 * worse than none (STYLE.md rule 16).
 *   scribble  a worker overwrites a byte of a block it holds (as a second owner would)
 *   double    a worker marks a block it holds a second time (a double allocation)
 *   leak      a worker forgets to free one block at the end
 *   hang      a worker sleeps past the watchdog's bound
 *   vacuous   the signaller never fires
 */
static void selftest_plant(void)
{
	const char *k = S.cfg.selftest;
	if (!k)
		return;
	if (!strcmp(k, "hang"))
		S.cfg.hang_s = 1.0;
	if (!strcmp(k, "vacuous"))
		S.cfg.signal_us = 60 * 1000000;
}

/*
 * Called by worker 0 (worker.c) from its STRESS_SELFTEST_FROM_OP-th op on,
 * until it returns true: the fault needs a block the worker holds, and at a
 * given op it may hold none (a run interrupted early then had nothing
 * planted to catch).  The op was the 1000th until 2026-12-07: the TSan
 * build on a loaded machine did 315-900 ops per worker in the first 2 s
 * (6 runs at once), so stress_interrupt_fail's SIGINT at 2 s came before
 * the plant in two clean-clone CI runs' TSan builds.
 */
bool stress_selftest_fire(struct worker *w)
{
	const char *k = S.cfg.selftest;
	struct alloc *a = NULL;
	for (int i = 0; i < w->nlive && !a; i++)
		if (w->live[i].kind != AK_NONE)
			a = &w->live[i];
	if (!k || !a)
		return false;
	if (!strcmp(k, "scribble")) {
		((unsigned char *)a->p)[a->size - 1] ^= 0x40;
	} else if (!strcmp(k, "double")) {
		struct alloc copy = *a;
		shadow_take(w, &copy, false, 1, MAX_NR_ZONES);
	} else if (!strcmp(k, "hang")) {
		double until = stress_now() + 3 * S.cfg.hang_s;   /* signals cut sleeps short */
		while (stress_now() < until)
			usleep(10000);
	} else if (!strcmp(k, "leak")) {
		shadow_give(w, a);               /* the shadow forgets it, the allocator never sees the free */
		a->kind = AK_NONE;
		w->nused--;
	}
	return true;
}

/* SPDX-License-Identifier: MIT */
/*
 * harness.c - running one input: decode, begin, every op followed by the
 * checker, teardown back to the initial state; and the violation report.
 *
 * Knobs (environment, read once):
 *   MMFUZZ_CHECK_LEVEL  mm_check level after every op (default: the target's)
 *   MMFUZZ_FINAL_LEVEL  mm_check level once per input, after the last op (default: the target's, 3);
 *                       teardown checks at level 2 and compares with the initial state
 *   MMFUZZ_MAX_OPS      ops run per input (default and limit MF_MAX_OPS)
 *   MMFUZZ_TRACE        1: print each op, with what it did, as it runs
 *   MMFUZZ_STATS        1: at exit, CPU time spent in ops, per-op checks and teardown (sched:
 *                       its checks' time, the rest as ops; mf_op_ran())
 *   MMFUZZ_FILL_FULL    1: pattern-fill (and zero-check) every byte of large allocations too
 *   MMFUZZ_CHECK_INCREMENTAL  0: level 2 walks every zone, pcp and cache after every op, not
 *                       only those an op changed (mm_check_set_incremental) - to find the
 *                       very first op after which a corruption shows
 *   MMFUZZ_CRASH_AT_OP  N: raise SIGSEGV right after op [N] ran (sched too) - the tests of what a
 *                       crashing run leaves behind (the C reproducer's ending, cgen.c)
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cgen.h"
#include "harness.h"
#include "instance.h"
#include "shadow.h"

static struct mf_op prog_buf[MF_MAX_OPS];
static struct mf_shadow shadow;
static struct mf_ctx *failing;        /* set while mf_fail runs: no recursion */

static struct {
	bool init;
	int check_level, final_level;     /* -1: the target's */
	unsigned int max_ops;
	unsigned long crash_at;           /* MMFUZZ_CRASH_AT_OP, ~0: never */
	bool trace, stats;
	const char *input_name;
} knobs;

static struct {
	unsigned long inputs, ops;
	double t_ops, t_check, t_teardown;
	unsigned long n_level[5];         /* mm_check calls per level */
	double t_level[5];                /* and their CPU time */
} stats;

unsigned long mf_env_ulong(const char *name, unsigned long def)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	char *end;
	unsigned long v = strtoul(s, &end, 0);
	return *end ? def : v;
}

/* CPU time of this thread: the stats stay meaningful on a loaded machine. */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void print_stats(void)
{
	if (!stats.inputs)
		return;
	double total = stats.t_ops + stats.t_check + stats.t_teardown;
	fprintf(stderr, "mmfuzz: stats: %lu inputs, %lu ops (%.1f per input); CPU time: ops %.3fs (%.0f%%), "
		"per-op checks %.3fs (%.0f%%), teardown %.3fs (%.0f%%); %.1f us per input\n",
		stats.inputs, stats.ops, (double)stats.ops / (double)stats.inputs,
		stats.t_ops, 100 * stats.t_ops / total, stats.t_check, 100 * stats.t_check / total,
		stats.t_teardown, 100 * stats.t_teardown / total, 1e6 * total / (double)stats.inputs);
	for (int l = 1; l < 5; l++)
		if (stats.n_level[l])
			fprintf(stderr, "mmfuzz: stats: mm_check level %d: %lu calls, %.1f us each (%.0f%% of all CPU time)\n",
				l, stats.n_level[l], 1e6 * stats.t_level[l] / (double)stats.n_level[l],
				100 * stats.t_level[l] / total);
}

static void knobs_init(void)
{
	if (knobs.init)
		return;
	knobs.init = true;
	/* Room for any input the engines give (-max_len, AFL++'s -G): no input grows it. */
	mf_decode_reserve(64 * 1024);
	knobs.check_level = (int)mf_env_ulong("MMFUZZ_CHECK_LEVEL", ~0UL);
	knobs.final_level = (int)mf_env_ulong("MMFUZZ_FINAL_LEVEL", ~0UL);
	knobs.max_ops = (unsigned int)mf_env_ulong("MMFUZZ_MAX_OPS", MF_MAX_OPS);
	if (knobs.max_ops > MF_MAX_OPS)
		knobs.max_ops = MF_MAX_OPS;
	knobs.crash_at = mf_env_ulong("MMFUZZ_CRASH_AT_OP", ~0UL);
	knobs.trace = mf_env_ulong("MMFUZZ_TRACE", 0) != 0;
	knobs.stats = mf_env_ulong("MMFUZZ_STATS", 0) != 0;
	if (knobs.stats)
		atexit(print_stats);
	atexit(mf_instances_destroy);
}

/*
 * Everything the harness does once per process, done before the engine
 * starts (mf_instances_warm() calls it): otherwise the first input of
 * every process - of every forked AFL++ child - covers edges the others
 * do not, and AFL++ counts them as instability.
 */
void mf_harness_init(void)
{
	knobs_init();
}

void mf_set_input_name(const char *name);
void mf_set_input_name(const char *name)
{
	knobs.input_name = name;
}

/* ------------------------------------------------------------ reports */

void mf_reports_accounted(struct mf_ctx *c)
{
	if (!c->mm)
		return;
	c->reports_before = mm_nr_reports(c->mm);
	MF_C(c, "\treports_ok = mm_nr_reports(mm);\n");
}

void mf_fail(struct mf_ctx *c, const char *inv, const char *fmt, ...)
{
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (failing) {
		fprintf(stderr, "==mmfuzz== (while reporting) %s: %s\n", inv, msg);
		abort();
	}
	failing = c;
	fflush(stdout);
	if (c->in_setup && c->nops)
		fprintf(stderr, "\n==mmfuzz== VIOLATION %s in target %s, at setup, before op [0] (of %u)\n", inv,
			c->t->name, c->nops);
	else if (c->in_setup)
		fprintf(stderr, "\n==mmfuzz== VIOLATION %s in target %s, at setup, in an input without ops\n", inv,
			c->t->name);
	else if (!c->nops)
		fprintf(stderr, "\n==mmfuzz== VIOLATION %s in target %s, in an input without ops%s\n", inv, c->t->name,
			c->tearing_down ? ", at teardown" : "");
	else if (c->tearing_down)
		fprintf(stderr, "\n==mmfuzz== VIOLATION %s in target %s, at teardown after op [%u] (of %u)\n",
			inv, c->t->name, c->nops - 1, c->nops);
	else if (c->final_check)   /* any op so far may have caused it: the per-op level could not see it */
		fprintf(stderr, "\n==mmfuzz== VIOLATION %s in target %s, at the final level-%d check after op [%u] (of %u)\n",
			inv, c->t->name, c->final_level, c->nops - 1, c->nops);
	else
		fprintf(stderr, "\n==mmfuzz== VIOLATION %s in target %s, at op [%u] %s (of %u)\n", inv, c->t->name,
			c->cur, c->t->ops[c->prog[c->cur].kind].name, c->nops);
	fprintf(stderr, "==mmfuzz== %s%s%s\n", strncmp(msg, inv, strlen(inv)) ? inv : "",
		strncmp(msg, inv, strlen(inv)) ? ": " : "", msg);
	fprintf(stderr, "==mmfuzz== op program so far:\n");
	if (c->in_setup)
		mf_print_program(stderr, c->t, &c->setup, c->prog, 0, -1, true);
	else if (c->tearing_down || c->final_check || !c->nops)
		mf_print_program(stderr, c->t, &c->setup, c->prog, c->nops, -1, true);
	else {
		/* Up to the last op that ran: sched runs its tasks' ops out of index order. */
		unsigned int n = c->cur + 1;
		for (unsigned int i = n; i < c->nops; i++)
			if (c->prog[i].ran)
				n = i + 1;
		mf_print_program(stderr, c->t, &c->setup, c->prog, n, (int)c->cur, true);
	}
	if (c->input_name && c->t->no_cgen)
		fprintf(stderr, "==mmfuzz== input: %s  (./mmfuzz repro %s %s; ./mmfuzz trace %s %s)\n",
			c->input_name, c->t->name, c->input_name, c->t->name, c->input_name);
	else if (c->input_name)
		fprintf(stderr, "==mmfuzz== input: %s  (./mmfuzz repro %s %s; ./mmfuzz trace %s %s --c repro.c)\n",
			c->input_name, c->t->name, c->input_name, c->t->name, c->input_name);
	if (c->cgen)
		mf_cgen_finish(c, inv, msg);
	fflush(stderr);
	abort();
}

void mf_check(struct mf_ctx *c, int level)
{
	struct mm_violation v;
	if (level <= 0 || !c->mm)
		return;
	double t0 = knobs.stats ? now_s() : 0;
	bool ok = mm_check(c->mm, level, &v);
	if (knobs.stats && level < 5) {
		stats.t_level[level] += now_s() - t0;
		stats.n_level[level]++;
	}
	if (!ok)
		mf_fail(c, v.id ? v.id : "?", "%s", v.msg);
}

/* ------------------------------------------------------------ one input */

void mf_op_ran(struct mf_ctx *c)
{
	c->ops_ran++;
	if (c->cur == knobs.crash_at)
		raise(SIGSEGV);
}

static double check_time(void)
{
	double t = 0;
	for (int l = 1; l < 5; l++)
		t += stats.t_level[l];
	return t;
}

int mf_run_input(const struct mf_target *t, const uint8_t *data, size_t size)
{
	struct mf_ctx c;
	double t0 = 0, t1;

	knobs_init();
	memset(&c, 0, sizeof(c));
	c.t = t;
	c.sh = &shadow;
	c.prog = prog_buf;
	c.input_name = knobs.input_name;
	c.check_level = knobs.check_level >= 0 ? knobs.check_level : t->check_level;
	c.final_level = knobs.final_level >= 0 ? knobs.final_level : t->final_level;
	c.trace = knobs.trace ? stderr : NULL;
	c.cgen = mf_cgen_file();
	c.nops = mf_decode(t, data, size, &c.setup, prog_buf, knobs.max_ops);

	if (c.cgen)
		mf_cgen_begin(&c);
	double tb = knobs.stats ? now_s() : 0, cb = knobs.stats ? check_time() : 0;
	if (!t->begin(&c, &c.setup)) {
		/* A target that ran the input itself (sched): its mm_check calls' time is checks, the rest ops. */
		if (knobs.stats && c.ops_ran) {
			double dc = check_time() - cb;
			stats.t_ops += now_s() - tb - dc;
			stats.t_check += dc;
			stats.inputs++;
			stats.ops += c.ops_ran;
		}
		return 0;
	}
	if (c.mm)
		mf_shadow_reset(&shadow, (uintptr_t)mm_arena_base(c.mm),
				(uintptr_t)mm_arena_base(c.mm) + mm_arena_size(c.mm));
	else
		mf_shadow_reset(&shadow, 0, UINTPTR_MAX);
	if (c.cgen)
		mf_cgen_after_setup(&c);
	if (c.trace) {
		mf_print_program(c.trace, t, &c.setup, NULL, 0, -1, false);
	}
	if (knobs.stats)
		t0 = now_s();
	for (c.cur = 0; c.cur < c.nops; c.cur++) {
		struct mf_op *op = &prog_buf[c.cur];
		const struct mf_opdesc *d = &t->ops[op->kind];
		op->ran = true;
		c.reports_before = c.mm ? mm_nr_reports(c.mm) : 0;
		MF_C(&c, "\t/* [%u] ", c.cur);
		if (c.cgen)
			mf_print_op(c.cgen, t, op, false);
		MF_C(&c, " */\n");
		d->exec(&c, op);
		if (c.mm && mm_nr_reports(c.mm) != c.reports_before)
			mf_fail(&c, "C1", "%s left an unexpected allocator report (%lu new): %s", d->name,
				mm_nr_reports(c.mm) - c.reports_before, mm_last_report(c.mm)->msg);
		if (c.cur == knobs.crash_at)
			raise(SIGSEGV);
		if (c.trace) {
			fprintf(c.trace, "[%u] ", c.cur);
			mf_print_op(c.trace, t, op, true);
			fputc('\n', c.trace);
		}
		if (knobs.stats) {
			t1 = now_s();
			stats.t_ops += t1 - t0;
			t0 = t1;
		}
		mf_check(&c, c.check_level);
		MF_C(&c, "\tcheck(%u);\n", c.cur);
		if (knobs.stats) {
			t1 = now_s();
			stats.t_check += t1 - t0;
			t0 = t1;
		}
	}

	/*
	 * The final level once more on the state the ops left, before teardown
	 * frees it: what a cheaper per-op level cannot see (B3, B4) would
	 * otherwise be freed away unnoticed.
	 */
	if (c.final_level > c.check_level) {
		c.cur = c.nops ? c.nops - 1 : 0;
		c.final_check = true;
		mf_check(&c, c.final_level);
		c.final_check = false;
		MF_C(&c, "\tcheck_at(%u, FINAL_LEVEL);\n", c.cur);
	}

	/* Teardown: the shadow first (checking every pattern), then the target, then the instance. */
	c.tearing_down = true;
	MF_C(&c, "\t/* teardown */\n");
	while (mf_shadow_count(&shadow)) {
		unsigned int before = mf_shadow_count(&shadow);
		t->release(&c, shadow.live[before - 1]);
		if (mf_shadow_count(&shadow) != before - 1)
			mf_fail(&c, "C1", "harness bug: %s's release() did not remove the allocation", t->name);
	}
	if (t->end)
		t->end(&c);
	if (c.mm)
		mf_instance_teardown(&c);
	if (c.cgen)
		mf_cgen_finish(&c, NULL, NULL);
	if (knobs.stats) {
		stats.t_teardown += now_s() - t0;
		stats.inputs++;
		stats.ops += c.nops;
	}
	return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * policy.c - the scheduling policies: who runs next, whether an interrupt
 * fires, whether the running task migrates.  Called by the engine only for
 * decisions with two or more options (sched.c explains the option order:
 * for "which task", option 0 is the running task whenever it may go on).
 *
 *   random   uniform over the options at every decision (a random walk);
 *            interrupts and migrations with their per-mille chances.
 *   pct      Burckhardt et al., "A randomized scheduler with probabilistic
 *            guarantees of finding bugs" (ASPLOS 2010): distinct random
 *            priorities d..d+n-1, the highest-priority candidate always
 *            runs, and at d-1 steps drawn uniformly from 1..k the running
 *            task drops to priority d-1, d-2, ... 1.  A bug of depth d is
 *            found with probability >= 1/(n k^(d-1)) per run, k being the
 *            run's length in steps (calibrated by sched_explore).
 *   sticky   keep the running task; switch with a small chance: schedules
 *            with few preemptions, as most real interleavings are.
 *   dfs      preemption-bounded exhaustive search (Musuvathi and Qadeer,
 *            CHESS, PLDI 2007): a depth-first walk over decision sequences,
 *            each run replaying its prefix from the root; "which task"
 *            decisions past the preemption bound only continue the
 *            running task.
 *   bytes    each decision takes the next input byte modulo the options;
 *            out of bytes, option 0 (no preemption, no interrupt, stay).
 *   replay   each decision takes the next log byte, which must be a valid
 *            option: a divergence is non-determinism.
 *   script   sparse actions from the bytes (sched.h, SCHED_SCRIPT): "when
 *            task t reaches its p-th switch point after mark m, switch to
 *            task u / raise an interrupt / migrate to vCPU c"; every other
 *            decision is the default.  Where bytes steers all of a run's
 *            hundreds of decisions (so a random input is a random walk, and
 *            one inserted byte shifts every decision after it), a script
 *            places a few preemptions exactly, each keyed to one task's own
 *            progress, and a mutation moves one preemption: the shape the
 *            schedule-fuzzing target (targets/sched.c) gives libFuzzer.
 */
#include <stdlib.h>
#include <string.h>

#include "sched_int.h"
#include "cpu/vcpu.h"

static const char *const policy_names[SCHED_NR_POLICIES] = {
	[SCHED_RANDOM] = "random",
	[SCHED_PCT] = "pct",
	[SCHED_STICKY] = "sticky",
	[SCHED_DFS] = "dfs",
	[SCHED_BYTES] = "bytes",
	[SCHED_REPLAY] = "replay",
	[SCHED_SCRIPT] = "script",
};

const char *sched_policy_name(enum sched_policy p)
{
	return (unsigned)p < SCHED_NR_POLICIES ? policy_names[p] : "?";
}

int sched_policy_parse(const char *name)
{
	for (int i = 0; i < SCHED_NR_POLICIES; i++)
		if (name && !strcmp(name, policy_names[i]))
			return i;
	return -1;
}

/* ---------------------------------------------------------------- dfs state */

struct dfs_entry {
	uint8_t choice;             /* the option taken */
	uint8_t limit;              /* options allowed (the bound may cut them to 1) */
};

struct sched_dfs {
	int bound;                  /* preemptions per schedule; -1: unbounded */
	struct dfs_entry *st;       /* the current schedule's decisions */
	size_t len, cap;
	unsigned long schedules;
	bool done;
};

struct sched_dfs *sched_dfs_create(int max_preemptions)
{
	struct sched_dfs *d = calloc(1, sizeof(*d));
	if (d)
		d->bound = max_preemptions < 0 ? -1 : max_preemptions;
	return d;
}

void sched_dfs_destroy(struct sched_dfs *d)
{
	if (d) {
		free(d->st);
		free(d);
	}
}

bool sched_dfs_done(const struct sched_dfs *d)
{
	return d->done;
}

unsigned long sched_dfs_schedules(const struct sched_dfs *d)
{
	return d->schedules;
}

static unsigned dfs_decide(struct sched *s, enum sched_dkind kind, unsigned nopts, bool cur_ok)
{
	struct sched_dfs *d = s->o->dfs;
	unsigned limit = nopts;
	/* Past the bound a running task that may continue must. */
	if (kind == DK_TASK && cur_ok && d->bound >= 0 && s->dfs_preempts >= (unsigned long)d->bound)
		limit = 1;
	if (s->dfs_pos < d->len) {
		struct dfs_entry *e = &d->st[s->dfs_pos++];
		if (e->choice >= limit)
			sched_end_run(s, SCHED_NONDET, s->cur, "dfs: decision %zu has %u options now, "
				      "the prefix took option %u", s->dfs_pos - 1, limit, e->choice);
		e->limit = (uint8_t)limit;
		return e->choice;
	}
	if (d->len == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 256;
		struct dfs_entry *n = realloc(d->st, cap * sizeof(*n));
		if (!n)
			sched_end_run(s, SCHED_ERROR, s->cur, "dfs: out of memory");
		d->st = n;
		d->cap = cap;
	}
	d->st[d->len].choice = 0;
	d->st[d->len].limit = (uint8_t)limit;
	d->len++;
	s->dfs_pos++;
	return 0;
}

void policy_dfs_end_run(struct sched *s)
{
	struct sched_dfs *d = s->o->dfs;
	d->schedules++;
	/* Backtrack: the deepest decision with an untried option moves on;
	 * everything after it is rediscovered by the next run. */
	d->len = s->dfs_pos < d->len ? s->dfs_pos : d->len;
	while (d->len && d->st[d->len - 1].choice + 1 >= d->st[d->len - 1].limit)
		d->len--;
	if (!d->len)
		d->done = true;
	else
		d->st[d->len - 1].choice++;
}

/* ---------------------------------------------------------------- script keys */

static const enum sched_dkind script_of_kind[SCHED_SCRIPT_NR_KINDS] = {
	[SCHED_SCRIPT_SWITCH] = DK_TASK,
	[SCHED_SCRIPT_IRQ] = DK_IRQ,
	[SCHED_SCRIPT_MIGRATE] = DK_MIGRATE,
};

/*
 * A SCRIPT action is keyed to (task, mark, switch point since the mark,
 * kind of decision).  Most decisions have no action: script_decide() asks
 * this 4096-bit filter first instead of scanning up to 256 actions at every
 * switch point (that scan was the sched target's hottest function).
 */
static unsigned script_key(unsigned task, unsigned mark, unsigned point, unsigned kind)
{
	uint32_t h = (task * 0x9e37u) ^ (mark * 0x85ebu) ^ (point * 0xc2b2u) ^ (kind * 0x27d4u);
	h ^= h >> 7;
	return (h * 0x2545u) >> 4 & 4095;
}

static void script_keys_build(struct sched *s)
{
	const struct sched_opts *o = s->o;
	memset(s->script_keys, 0, sizeof(s->script_keys));
	for (size_t pos = 0; o->bytes && pos + SCHED_SCRIPT_STEP_BYTES <= o->nbytes; pos += SCHED_SCRIPT_STEP_BYTES) {
		const uint8_t *a = o->bytes + pos;
		unsigned k = script_key((unsigned)(a[0] & 15) % (unsigned)s->n, a[1], a[2],
					script_of_kind[(a[0] >> 4) % SCHED_SCRIPT_NR_KINDS]);
		s->script_keys[k / 64] |= 1ULL << (k % 64);
	}
}

static bool script_may_have(const struct sched *s, unsigned task, unsigned long mark, unsigned long point,
			    enum sched_dkind kind)
{
	if (point > 255)
		return false;           /* an action's point is one byte */
	unsigned k = script_key(task, (uint8_t)mark, (unsigned)point, kind);
	return s->script_keys[k / 64] >> (k % 64) & 1;
}

/* ---------------------------------------------------------------- per run */

void policy_begin_run(struct sched *s)
{
	const struct sched_opts *o = s->o;
	s->byte_pos = 0;
	s->script_arg = 0;
	s->script_force = 0;
	for (int i = 0; i < s->n; i++) {
		s->task[i].label = NULL;
		s->task[i].mark = 0;
		s->task[i].mark_points = 0;
	}
	s->dfs_pos = 0;
	s->dfs_preempts = 0;
	if (o->policy == SCHED_SCRIPT)
		script_keys_build(s);
	for (int i = 0; i < s->n; i++) {
		s->task[i].bounce_cpu = -1;
		s->task[i].bounce_left = 0;
	}
	if (o->policy != SCHED_PCT)
		return;

	struct sched_pct *p = &s->pct;
	unsigned d = o->pct_depth ? o->pct_depth : 3;
	if (d > 1 + sizeof(p->change) / sizeof(p->change[0]))
		d = 1 + sizeof(p->change) / sizeof(p->change[0]);
	unsigned long k = o->pct_k ? o->pct_k : 200;
	p->depth = d;
	p->next = 0;
	p->nchange = d - 1;

	/* Priorities d .. d+n-1 in random order (Fisher-Yates). */
	unsigned perm[SCHED_MAX_TASKS];
	for (int i = 0; i < s->n; i++)
		perm[i] = (unsigned)i;
	for (int i = s->n - 1; i > 0; i--) {
		unsigned j = sched_rng_below(&s->rng, (unsigned)i + 1);
		unsigned tmp = perm[i];
		perm[i] = perm[j];
		perm[j] = tmp;
	}
	for (int i = 0; i < s->n; i++)
		s->task[i].pct_prio = d + perm[i];

	/* d-1 change points in 1..k, sorted. */
	for (unsigned i = 0; i < p->nchange; i++)
		p->change[i] = 1 + (unsigned long)(sched_rng_next(&s->rng) % k);
	for (unsigned i = 1; i < p->nchange; i++)
		for (unsigned j = i; j > 0 && p->change[j - 1] > p->change[j]; j--) {
			unsigned long tmp = p->change[j];
			p->change[j] = p->change[j - 1];
			p->change[j - 1] = tmp;
		}
}

static unsigned pct_task(struct sched *s, const int *opts, unsigned nopts)
{
	struct sched_pct *p = &s->pct;
	/* Change points already passed lower the running task, in order. */
	while (p->next < p->nchange && p->change[p->next] <= s->live->steps) {
		if (s->cur >= 0)
			s->task[s->cur].pct_prio = p->depth - 1 - p->next;
		p->next++;
	}
	unsigned best = 0;
	for (unsigned i = 1; i < nopts; i++)
		if (s->task[opts[i]].pct_prio > s->task[opts[best]].pct_prio)
			best = i;
	return best;
}

/*
 * Interrupt and migration decisions of the seeded policies.  A migration
 * is often followed by a bounce: at each of the task's next
 * SCHED_BOUNCE_WINDOW migration decisions it goes back to the vCPU it left
 * with bounce_permille.  Per-CPU code that reads one vCPU's state, is
 * moved, and acts after coming back - a tid of vCPU A with the cpu area of
 * vCPU B, committed on A (slub-tid-cpu-mismatch), a this_cpu pointer kept
 * across a preemption - needs two migrations a few points apart, the
 * second one back: with independent draws that is the square of a small
 * chance (and the vCPU left must still be free).
 */
static unsigned random_inject(struct sched *s, enum sched_dkind kind, const int *opts, unsigned nopts)
{
	const struct sched_opts *o = s->o;
	if (kind == DK_IRQ)
		return sched_rng_permille(&s->rng, o->irq_permille) ? 1 : 0;
	struct sched_task *t = s->cur >= 0 ? &s->task[s->cur] : NULL;
	if (t && t->bounce_left) {
		t->bounce_left--;
		for (unsigned i = 1; i < nopts; i++)
			if (opts[i] == t->bounce_cpu && sched_rng_permille(&s->rng, o->bounce_permille)) {
				t->bounce_left = 0;     /* back where it was: no ping-pong */
				return i;
			}
	}
	if (!sched_rng_permille(&s->rng, o->migrate_permille))
		return 0;
	if (t && o->bounce_permille && s->mm) {
		t->bounce_cpu = mm_cpu_current(s->mm);
		t->bounce_left = SCHED_BOUNCE_WINDOW;
	}
	return 1 + sched_rng_below(&s->rng, nopts - 1);
}

/* ---------------------------------------------------------------- script */

/* The option of @opts[from..nopts) holding @want, else the next value after it (mod @n) that is there. */
static unsigned script_pick(const int *opts, unsigned from, unsigned nopts, int want, int n)
{
	for (int d = 0; d < n; d++) {
		int v = (want + d) % n;
		for (unsigned i = from; i < nopts; i++)
			if (opts[i] == v)
				return i;
	}
	return 0;
}

/*
 * A preemption that frees the vCPU (SCHED_SCRIPT_RELEASE), where the task
 * may sleep (preemptible, migration allowed, not in an interrupt): the
 * task sleeps in sched_wait() - it gives its vCPU up, the nested decision
 * runs task @to (or the next candidate after it), and when it is resumed it
 * takes a vCPU back (the same if free, else the first free one, waiting
 * while none is) before it goes on, as a preempted kernel task resumes.
 * Returns false where the task may not sleep (then a plain switch).
 */
static bool script_release(struct sched *s, int to)
{
	struct mm *mm = s->mm;
	if (!mm || mm_cpu_current(mm) < 0 || !mm_preemptible() || get_current()->migrate_disable ||
	    mm_in_interrupt())
		return false;
	s->script_force = to + 1;
	sched_tsan_ignore_end();        /* sched_wait() brackets the engine's part itself */
	sched_wait(&s->script_force);
	sched_tsan_ignore_begin();
	s->script_force = 0;
	return true;
}

static unsigned script_decide(struct sched *s, enum sched_dkind kind, const int *opts, unsigned nopts)
{
	const struct sched_opts *o = s->o;
	if (kind == DK_TASK && s->script_force) {
		/* The decision inside a releasing preemption's sleep (script_release). */
		unsigned c = script_pick(opts, 0, nopts, s->script_force - 1, s->n);
		s->script_force = 0;
		return c;
	}
	if (!o->bytes || s->cur < 0)
		return 0;               /* the first pick (from main): task 0 */
	const struct sched_task *t = &s->task[s->cur];
	if (!script_may_have(s, (unsigned)s->cur, t->mark, t->mark_points, kind))
		return 0;
	/* The first action keyed to this task, mark, point and kind of decision. */
	for (size_t pos = 0; pos + SCHED_SCRIPT_STEP_BYTES <= o->nbytes; pos += SCHED_SCRIPT_STEP_BYTES) {
		const uint8_t *a = o->bytes + pos;
		if ((unsigned)(a[0] & 15) % (unsigned)s->n != (unsigned)s->cur || a[1] != (uint8_t)t->mark ||
		    a[2] != t->mark_points || script_of_kind[(a[0] >> 4) % SCHED_SCRIPT_NR_KINDS] != kind)
			continue;
		unsigned c = 1;         /* DK_IRQ: yes */
		if (kind == DK_TASK) {
			c = script_pick(opts, 0, nopts, (a[3] & 0x7f) % s->n, s->n);
			if ((a[3] & SCHED_SCRIPT_RELEASE) && opts[c] != s->cur &&
			    script_release(s, (a[3] & 0x7f) % s->n))
				c = 0;  /* it slept and is back: go on */
		}
		else if (kind == DK_MIGRATE)
			c = s->nr_cpus > 0 ? script_pick(opts, 1, nopts, a[3] % s->nr_cpus, s->nr_cpus) : 0;
		s->script_arg = a[3];
		return c;
	}
	return 0;
}

unsigned sched_script_arg(void)
{
	struct sched *s = sched_engine_if_any();
	if (!s || !s->active)
		return 0;
	sched_tsan_ignore_begin();
	unsigned arg = s->script_arg;
	sched_tsan_ignore_end();
	return arg;
}

unsigned policy_decide(struct sched *s, enum sched_dkind kind, const int *opts, unsigned nopts, bool cur_ok)
{
	const struct sched_opts *o = s->o;
	switch (o->policy) {
	case SCHED_RANDOM:
		if (kind == DK_TASK)
			return sched_rng_below(&s->rng, nopts);
		return random_inject(s, kind, opts, nopts);
	case SCHED_PCT:
		if (kind == DK_TASK)
			return pct_task(s, opts, nopts);
		return random_inject(s, kind, opts, nopts);
	case SCHED_STICKY:
		if (kind == DK_TASK) {
			unsigned pm = o->sticky_permille ? o->sticky_permille : 20;
			if (!cur_ok)
				return sched_rng_below(&s->rng, nopts);
			return sched_rng_permille(&s->rng, pm) ? 1 + sched_rng_below(&s->rng, nopts - 1) : 0;
		}
		return random_inject(s, kind, opts, nopts);
	case SCHED_DFS:
		return dfs_decide(s, kind, nopts, cur_ok);
	case SCHED_BYTES:
		if (s->byte_pos < o->nbytes)
			return o->bytes[s->byte_pos++] % nopts;
		return 0;
	case SCHED_SCRIPT:
		return script_decide(s, kind, opts, nopts);
	case SCHED_REPLAY: {
		if (s->byte_pos >= o->nbytes)
			sched_end_run(s, SCHED_NONDET, s->cur, "replay: the log ended after %zu decisions "
				      "but the run goes on", s->byte_pos);
		unsigned b = o->bytes[s->byte_pos++];
		if (b >= nopts)
			sched_end_run(s, SCHED_NONDET, s->cur, "replay: decision %zu took option %u "
				      "of %u", s->byte_pos - 1, b, nopts);
		return b;
	}
	default:
		return 0;
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * grade.c - many runs of one scenario: exploration (stop at the first
 * failure, keep its artifact), PCT's calibration of k, and grading (the
 * detection probability of each policy with a 95% Wilson score interval
 * and the runs to the first failure, as issue 6 asks per bug-zoo bug).
 */
#include <math.h>
#include <string.h>

#include "sched_int.h"

void sched_wilson(unsigned long k, unsigned long n, double z, double *lo, double *hi)
{
	if (!n) {
		*lo = 0.0;
		*hi = 1.0;
		return;
	}
	/* Wilson (1927): centre and half-width of the score interval; unlike
	 * the normal approximation it stays inside [0,1] and is sensible at
	 * k = 0 or k = n, which is where grading spends its time. */
	double nn = (double)n, p = (double)k / nn, z2 = z * z;
	double denom = 1.0 + z2 / nn;
	double centre = (p + z2 / (2.0 * nn)) / denom;
	double half = z * sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn)) / denom;
	*lo = centre - half < 0.0 ? 0.0 : centre - half;
	*hi = centre + half > 1.0 ? 1.0 : centre + half;
}

static int run_one(const struct sched_opts *o, const struct sched_scenario *sc, uint64_t run,
		   struct sched_result *r)
{
	struct sched_task_desc tasks[SCHED_MAX_TASKS];
	struct sched_opts ro = *o;
	struct mm *mm = NULL;
	memset(tasks, 0, sizeof(tasks));
	ro.run = run;
	int n = sc->setup(sc->ctx, sched_seed(o->seed, run), tasks, &mm);
	if (n < 1 || n > SCHED_MAX_TASKS)
		return -1;
	ro.mm = mm;
	ro.finish = sc->finish;
	ro.finish_ctx = sc->ctx;
	if (!ro.scenario)
		ro.scenario = sc->name;
	if (!ro.config)
		ro.config = sc->config;
	*r = sched_run(&ro, tasks, n);
	if (r->failed && sc->recover)
		sc->recover(sc->ctx);
	return 0;
}

int sched_explore(const struct sched_opts *o, const struct sched_scenario *sc, unsigned long runs,
		  bool stop, struct sched_explore_result *er)
{
	struct sched_opts eo = *o;
	struct sched_result r;
	memset(er, 0, sizeof(*er));
	er->first_failure = ~0UL;

	/* PCT's k is the length of a run: measure one (a random walk of the
	 * same master seed, run index ~0 so it is no run of the campaign). */
	if (eo.policy == SCHED_PCT && !eo.pct_k) {
		struct sched_opts co = eo;
		co.policy = SCHED_RANDOM;
		co.artifact = NULL;
		co.timeline = NULL;
		if (run_one(&co, sc, ~0ULL, &r))
			return -1;
		eo.pct_k = r.steps > 1 ? r.steps : 1;
	}
	er->pct_k = eo.pct_k;

	double t0 = sched_os_now();
	for (unsigned long i = 0; i < runs; i++) {
		if (eo.policy == SCHED_DFS && sched_dfs_done(eo.dfs))
			break;
		eo.artifact = er->failures ? NULL : o->artifact;
		if (run_one(&eo, sc, i, &r))
			return -1;
		if (r.outcome == SCHED_ERROR) {
			er->first = r;
			er->first.log = NULL;
			er->first.log_len = 0;
			return -1;
		}
		er->runs++;
		er->steps += r.steps;
		if (r.failed) {
			if (!er->failures++) {
				er->first_failure = i;
				er->first = r;
				er->first.log = NULL;
			}
			if (stop)
				break;
		}
	}
	er->seconds = sched_os_now() - t0;
	return 0;
}

void sched_grade(const struct sched_scenario *sc, const struct sched_opts *base,
		 const enum sched_policy *policies, int npolicies, unsigned long runs, FILE *out)
{
	fprintf(out, "scenario %s (%s), seed %#llx, %lu runs per policy\n", sc->name,
		sc->config ? sc->config : "", (unsigned long long)base->seed, runs);
	fprintf(out, "%-8s %8s %8s %8s  %-19s %8s %10s\n", "policy", "runs", "fails", "p",
		"95% CI (Wilson)", "first", "runs/s");
	for (int i = 0; i < npolicies; i++) {
		struct sched_opts o = *base;
		struct sched_explore_result er;
		struct sched_dfs *dfs = NULL;
		o.policy = policies[i];
		o.artifact = NULL;
		o.timeline = NULL;
		if (o.policy == SCHED_DFS && !o.dfs)
			o.dfs = dfs = sched_dfs_create(2);
		if (o.policy == SCHED_BYTES || o.policy == SCHED_REPLAY || (o.policy == SCHED_DFS && !o.dfs)) {
			fprintf(out, "%-8s (not gradable by seeds)\n", sched_policy_name(o.policy));
			continue;
		}
		if (sched_explore(&o, sc, runs, false, &er)) {
			fprintf(out, "%-8s setup failed: %s\n", sched_policy_name(o.policy), er.first.reason);
			sched_dfs_destroy(dfs);
			continue;
		}
		double lo, hi;
		sched_wilson(er.failures, er.runs, 1.96, &lo, &hi);
		char first[24];
		if (er.first_failure == ~0UL)
			snprintf(first, sizeof(first), "-");
		else
			snprintf(first, sizeof(first), "%lu", er.first_failure + 1);
		fprintf(out, "%-8s %8lu %8lu %8.4f  [%.4f, %.4f]  %8s %10.0f%s\n", sched_policy_name(o.policy),
			er.runs, er.failures, er.runs ? (double)er.failures / (double)er.runs : 0.0, lo, hi,
			first, er.seconds > 0 ? (double)er.runs / er.seconds : 0.0,
			o.policy == SCHED_DFS && sched_dfs_done(o.dfs) ? "  (search complete)" : "");
		if (er.failures)
			fprintf(out, "         first failure: %s: %s\n", sched_outcome_name(er.first.outcome),
				er.first.reason);
		sched_dfs_destroy(dfs);
	}
}

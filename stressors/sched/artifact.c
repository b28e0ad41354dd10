/* SPDX-License-Identifier: MIT */
/*
 * artifact.c - failure artifacts and their replay.  An artifact is a small
 * text file that holds everything needed to rerun one schedule: the build
 * that found it, the scenario's name and configuration, the policy and
 * seeds, the scheduler options that shape decisions, the outcome and its
 * reason, the trace hash and the decision log (hex).  Replay runs the log
 * (policy REPLAY) with the same seeds and options and compares the trace
 * hash: equal means the same interleaving, a difference is reported as
 * non-determinism (or a different build, which the reason notes).
 *
 *     # mmfuzz deterministic scheduler failure artifact
 *     format: mmfuzz-sched 1
 *     build: v0.1-42-gabcdef inject=none MM_DEBUG=2 san=none
 *     scenario: counter-race
 *     ...
 *     log: 00010001000000010100...
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sched_int.h"

/*
 * The build: the revision (build_id.c, where the binary links it; else
 * "unknown"), the fault injection, the debug level and the sanitizer.
 */
extern const char sched_build_id_linked[] __attribute__((weak));

const char *sched_build_id(void)
{
	return sched_build_id_linked ? sched_build_id_linked : SCHED_BUILD_ID("unknown");
}

/* One line of free text: newlines would break the format. */
static void put_line(FILE *f, const char *key, const char *val)
{
	fprintf(f, "%s: ", key);
	for (const char *p = val ? val : ""; *p; p++)
		fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
	fputc('\n', f);
}

int sched_artifact_write(const char *path, const struct sched_opts *o, const struct sched_result *r)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "# mmfuzz deterministic scheduler failure artifact (replay: ./mmfuzz stress MODE --deterministic --replay FILE)\n");
	fprintf(f, "format: mmfuzz-sched 1\n");
	put_line(f, "build", sched_build_id());
	put_line(f, "scenario", o->scenario ? o->scenario : "");
	put_line(f, "config", o->config ? o->config : "");
	fprintf(f, "policy: %s\n", sched_policy_name(o->policy));
	fprintf(f, "master_seed: %#" PRIx64 "\n", o->seed);
	fprintf(f, "run: %" PRIu64 "\n", o->run);
	fprintf(f, "seed: %#" PRIx64 "\n", r->seed);
	fprintf(f, "max_steps: %lu\n", o->max_steps ? o->max_steps : SCHED_DEFAULT_STEPS);
	fprintf(f, "irqs: %d\nmigrations: %d\natomic_points: %d\n", o->irqs, o->migrations, o->atomic_points);
	fprintf(f, "irq_permille: %u\nmigrate_permille: %u\n", o->irq_permille, o->migrate_permille);
	fprintf(f, "bounce_permille: %u\n", o->bounce_permille);
	fprintf(f, "pct_depth: %u\npct_k: %lu\nsticky_permille: %u\n", o->pct_depth, o->pct_k, o->sticky_permille);
	fprintf(f, "outcome: %s\n", sched_outcome_name(r->outcome));
	put_line(f, "reason", r->reason);
	fprintf(f, "steps: %lu\n", r->steps);
	fprintf(f, "trace_hash: %#" PRIx64 "\n", r->trace_hash);
	fprintf(f, "log_len: %zu\n", r->log_len);
	for (size_t i = 0; i < r->log_len; i += 32) {
		fprintf(f, "log: ");
		for (size_t j = i; j < r->log_len && j < i + 32; j++)
			fprintf(f, "%02x", r->log[j]);
		fputc('\n', f);
	}
	int bad = ferror(f);
	if (fclose(f) || bad)
		return -1;
	return 0;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
}

int sched_artifact_read(const char *path, struct sched_artifact *a, char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	char line[4096];
	size_t expect = 0;
	bool format_ok = false;
	int lineno = 0;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		line[strcspn(line, "\r\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		char *colon = strchr(line, ':');
		if (!colon) {
			snprintf(err, errlen, "%s:%d: not 'key: value'", path, lineno);
			goto fail;
		}
		*colon = 0;
		const char *k = line, *v = colon + 1;
		while (*v == ' ')
			v++;
		if (!strcmp(k, "format")) {
			format_ok = !strcmp(v, "mmfuzz-sched 1");
		} else if (!strcmp(k, "build")) {
			copy_str(a->build, sizeof(a->build), v);
		} else if (!strcmp(k, "scenario")) {
			copy_str(a->scenario, sizeof(a->scenario), v);
		} else if (!strcmp(k, "config")) {
			copy_str(a->config, sizeof(a->config), v);
		} else if (!strcmp(k, "policy")) {
			int p = sched_policy_parse(v);
			if (p < 0) {
				snprintf(err, errlen, "%s:%d: unknown policy '%s'", path, lineno, v);
				goto fail;
			}
			a->policy = (enum sched_policy)p;
		} else if (!strcmp(k, "master_seed")) {
			a->master_seed = strtoull(v, NULL, 0);
		} else if (!strcmp(k, "run")) {
			a->run = strtoull(v, NULL, 0);
		} else if (!strcmp(k, "seed")) {
			a->seed = strtoull(v, NULL, 0);
		} else if (!strcmp(k, "max_steps")) {
			a->max_steps = strtoul(v, NULL, 0);
		} else if (!strcmp(k, "irqs")) {
			a->irqs = atoi(v) != 0;
		} else if (!strcmp(k, "migrations")) {
			a->migrations = atoi(v) != 0;
		} else if (!strcmp(k, "atomic_points")) {
			a->atomic_points = atoi(v) != 0;
		} else if (!strcmp(k, "irq_permille")) {
			a->irq_permille = (unsigned)strtoul(v, NULL, 0);
		} else if (!strcmp(k, "migrate_permille")) {
			a->migrate_permille = (unsigned)strtoul(v, NULL, 0);
		} else if (!strcmp(k, "bounce_permille")) {
			a->bounce_permille = (unsigned)strtoul(v, NULL, 0);
		} else if (!strcmp(k, "pct_depth")) {
			a->pct_depth = (unsigned)strtoul(v, NULL, 0);
		} else if (!strcmp(k, "pct_k")) {
			a->pct_k = strtoul(v, NULL, 0);
		} else if (!strcmp(k, "sticky_permille")) {
			a->sticky_permille = (unsigned)strtoul(v, NULL, 0);
		} else if (!strcmp(k, "outcome")) {
			for (int o = SCHED_OK; o <= SCHED_ERROR; o++)
				if (!strcmp(v, sched_outcome_name((enum sched_outcome)o)))
					a->outcome = (enum sched_outcome)o;
		} else if (!strcmp(k, "reason")) {
			copy_str(a->reason, sizeof(a->reason), v);
		} else if (!strcmp(k, "steps")) {
			a->steps = strtoul(v, NULL, 0);
		} else if (!strcmp(k, "trace_hash")) {
			a->trace_hash = strtoull(v, NULL, 0);
		} else if (!strcmp(k, "log_len")) {
			expect = strtoul(v, NULL, 0);
			if (expect > (64u << 20)) {
				snprintf(err, errlen, "%s:%d: log_len %zu is absurd", path, lineno, expect);
				goto fail;
			}
			free(a->log);
			a->log = malloc(expect ? expect : 1);
			if (!a->log) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
		} else if (!strcmp(k, "log")) {
			for (const char *p = v; p[0] && p[1]; p += 2) {
				int hi = hexval(p[0]), lo = hexval(p[1]);
				if (hi < 0 || lo < 0 || !a->log || a->log_len >= expect) {
					snprintf(err, errlen, "%s:%d: bad log line", path, lineno);
					goto fail;
				}
				a->log[a->log_len++] = (uint8_t)(hi << 4 | lo);
			}
		}
		/* Unknown keys are ignored: newer writers may add some. */
	}
	fclose(f);
	f = NULL;
	if (!format_ok) {
		snprintf(err, errlen, "%s: not a mmfuzz-sched 1 artifact", path);
		goto fail;
	}
	if (a->log_len != expect) {
		snprintf(err, errlen, "%s: log has %zu of %zu decisions", path, a->log_len, expect);
		goto fail;
	}
	return 0;
fail:
	if (f)
		fclose(f);
	sched_artifact_free(a);
	return -1;
}

void sched_artifact_free(struct sched_artifact *a)
{
	free(a->log);
	a->log = NULL;
	a->log_len = 0;
}

void sched_artifact_opts(const struct sched_artifact *a, const struct sched_opts *base, struct sched_opts *o)
{
	*o = *base;
	o->policy = SCHED_REPLAY;
	o->seed = a->master_seed;       /* sched_random() and the scenario's setup see the same seed */
	o->run = a->run;
	o->max_steps = a->max_steps;
	o->irqs = a->irqs;
	o->migrations = a->migrations;
	o->atomic_points = a->atomic_points;
	o->irq_permille = a->irq_permille;
	o->migrate_permille = a->migrate_permille;
	o->bounce_permille = a->bounce_permille;
	o->pct_depth = a->pct_depth;
	o->pct_k = a->pct_k;
	o->sticky_permille = a->sticky_permille;
	o->bytes = a->log;
	o->nbytes = a->log_len;
	o->dfs = NULL;
	o->artifact = NULL;
	if (!o->scenario)
		o->scenario = a->scenario;
}

struct sched_result sched_replay(const struct sched_artifact *a, const struct sched_opts *base,
				 const struct sched_task_desc *tasks, int n)
{
	struct sched_opts o;
	sched_artifact_opts(a, base, &o);
	struct sched_result r = sched_run(&o, tasks, n);
	if (r.outcome == SCHED_NONDET || r.outcome == SCHED_ERROR)
		return r;
	bool same_build = !strcmp(a->build, sched_build_id());
	if (r.trace_hash != a->trace_hash || r.decisions != a->log_len) {
		char was[SCHED_REASON_MAX / 2];
		size_t wl = strnlen(a->reason, sizeof(was) - 1);
		memcpy(was, a->reason, wl);
		was[wl] = 0;
		snprintf(r.reason, sizeof(r.reason),
			 "replay diverged: trace hash %#" PRIx64 " (artifact %#" PRIx64 "), %lu of %zu "
			 "decisions used, outcome %s (artifact %s: %s)%s",
			 r.trace_hash, a->trace_hash, r.decisions, a->log_len, sched_outcome_name(r.outcome),
			 sched_outcome_name(a->outcome), was,
			 same_build ? "" : "; built differently from the artifact");
		r.outcome = SCHED_NONDET;
		r.failed = true;
	}
	return r;
}

/* SPDX-License-Identifier: MIT */
/*
 * report.c - statistics, vacuity and the end-of-run report, in the spirit
 * of the kernel's torture tests (rcutorture's "End of test: SUCCESS"): one
 * block of counters, then SUCCESS or FAILURE as the very last line.  --json
 * writes the same numbers.
 *
 * Vacuity: a run in which an enabled injection never fired tested nothing
 * it claims to have tested; it reports itself VACUOUS and fails.  "Fired"
 * means landed where it matters: migrations and hook interrupts at the
 * fast-path points of the mode (mm_cpu_get_stats' per-point counters),
 * signal interrupts that ran a handler, onoff cycles completed, pressure
 * phases that pushed a zone under its low watermark and made the shrinker
 * free something, remote frees done, drains and updates made.
 */
#include <errno.h>
#include <string.h>

#include "stress.h"

static const char *const op_names[OP_NR] = {
	"-", "alloc_pages", "free_pages", "get_free_page", "bulk_array", "bulk_list",
	"release_pages", "free_page_list", "drain_local",
	"cache_alloc", "cache_free", "cache_alloc_bulk", "cache_free_bulk",
	"kmalloc", "kfree", "krealloc", "kfree_bulk", "ksize",
	"remote_push", "remote_free", "verify", "mm_check", "park", "slice", "exit",
};

const char *stress_op_name(enum stress_op op)
{
	return (unsigned)op < OP_NR ? op_names[op] : "?";
}

static const char *const mode_names[MODE_NR] = { "pages", "pcp", "bulk", "slub", "kmalloc", "mixed" };

const char *stress_mode_name(enum stress_mode m)
{
	return (unsigned)m < MODE_NR ? mode_names[m] : "?";
}

void stress_totals(struct stress_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < S.cfg.threads; i++) {
		struct worker_stats *s = &S.w[i].st;
		t->ops += STAT(s->ops);
		t->allocs += STAT(s->allocs);
		t->frees += STAT(s->frees);
		t->fails += STAT(s->fails);
		t->remote_sent += STAT(s->remote_sent);
		t->remote_freed += STAT(s->remote_freed);
		t->bulk_calls += STAT(s->bulk_calls);
		t->bulk_objects += STAT(s->bulk_objects);
		t->verifies += STAT(s->verifies);
		t->t1_checks += STAT(s->t1_checks);
		t->tid_checks += STAT(s->tid_checks);
		t->slices += STAT(s->slices);
		t->hook_migrations += STAT(s->hook_migrations);
		t->hook_irqs += STAT(s->hook_irqs);
		t->sig_in_window += STAT(s->sig_in_window);
		t->sig_in_alloc += STAT(s->sig_in_alloc);
		t->sig_outside += STAT(s->sig_outside);
		t->drains_local += STAT(s->drains);
	}
	for (int c = 0; c < S.cfg.cpus; c++) {
		t->irq_runs += STAT(S.pools[c].runs);
		t->irq_allocs += STAT(S.pools[c].allocs);
		t->irq_frees += STAT(S.pools[c].frees);
		t->irq_fails += STAT(S.pools[c].fails);
	}
	mm_cpu_get_stats(S.mm, -1, &t->cpu);
	/*
	 * The stressor's caches and the kmalloc classes, found without
	 * kmem_cache_next(): that takes slab_mutex, a spinlock in the model,
	 * whose waiter keeps its vCPU - see "Known allocator issues" in main.c.
	 */
	struct kmem_cache *seen[STRESS_MAX_CACHES + 16];
	int nseen = 0;
	for (int i = 0; i < S.ncaches; i++)
		seen[nseen++] = S.caches[i];
	static const size_t sizes[] = { 8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192 };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		struct kmem_cache *s = kmalloc_slab(S.mm, sizes[k], GFP_KERNEL);
		bool dup = !s;
		for (int i = 0; i < nseen && !dup; i++)
			dup = seen[i] == s;
		if (!dup)
			seen[nseen++] = s;
	}
	for (int k = 0; k < nseen; k++) {
		unsigned long st[NR_SLUB_STAT_ITEMS];
		if (!kmem_cache_get_stats(seen[k], st))
			continue;
		t->slub_stats = true;
		for (int i = 0; i < NR_SLUB_STAT_ITEMS; i++)
			t->slub[i] += st[i];
	}
	for (int e = 0; e < NR_VM_EVENT_ITEMS; e++)
		t->ev[e] = mm_vm_event(S.mm, (enum vm_event_item)e);
}

/*
 * The points that make up the mode's fast-path windows.  For interrupts:
 * SLUB's tid-to-cmpxchg window, the pcp critical section and its edges,
 * the bulk loops.  Migration is impossible inside the pcp window (it runs
 * with preemption off: the model refuses, as the kernel cannot preempt
 * there), so for the page modes a migration counts at any point inside an
 * allocator call; SLUB's window is preemptible by design and must see them.
 */
static bool window_point(enum mm_pp p, bool migrate)
{
	enum stress_mode m = S.cfg.mode;
	bool slub = m == MODE_SLUB || m == MODE_KMALLOC || m == MODE_MIXED;
	bool pcp = m == MODE_PAGES || m == MODE_PCP || m == MODE_MIXED || m == MODE_BULK;
	bool bulk = m == MODE_BULK || m == MODE_MIXED;
	switch (p) {
	case MM_PP_TID_READ:
	case MM_PP_BEFORE_CMPXCHG:
		return slub;
	case MM_PP_PCP_BEFORE_LOCK:
	case MM_PP_PCP_LOCKED:
	case MM_PP_PCP_REFILL:
		return pcp;
	case MM_PP_BULK:
		return bulk;
	case MM_PP_NONE:
	case MM_PP_USER:
		return false;
	default:
		return migrate && (m == MODE_PAGES || m == MODE_PCP || m == MODE_BULK);
	}
}

static unsigned long window_sum(const unsigned long *per_point, bool migrate)
{
	unsigned long n = 0;
	for (int p = 0; p < MM_PP_NR; p++)
		if (window_point((enum mm_pp)p, migrate))
			n += per_point[p];
	return n;
}

static void add(char *buf, size_t len, const char *what)
{
	size_t l = strlen(buf);
	snprintf(buf + l, len - l, "%s%s", l ? ", " : "", what);
}

void stress_vacuity(const struct stress_totals *t, char *buf, size_t len, bool final)
{
	(void)final;
	buf[0] = 0;
	if (S.cfg.migrate) {
		if (!t->cpu.migrations_in)
			add(buf, len, "migration (no task ever migrated)");
		else if (!window_sum(t->cpu.pp_migrate, true))
			add(buf, len, "migration (none inside a fast-path window)");
	}
	if (S.cfg.irq) {
		if (!t->cpu.irqs_from_signal)
			add(buf, len, "irq (no signal ran the interrupt handler)");
		if (S.hooks && !window_sum(t->cpu.pp_irq, false))
			add(buf, len, "irq (no interrupt inside a fast-path window)");
	}
	if (S.cfg.onoff && !atomic_load(&S.onoff_cycles))
		add(buf, len, "onoff (no offline/online cycle)");
	if (S.cfg.stutter && !atomic_load(&S.stutters))
		add(buf, len, "stutter (never paused)");
	if (S.cfg.pressure) {
		if (!atomic_load(&S.pressure_phases))
			add(buf, len, "pressure (no phase)");
		else if (!atomic_load(&S.below_low))
			add(buf, len, "pressure (no zone under its low watermark)");
		else if (!atomic_load(&S.shrinker_freed))
			add(buf, len, "pressure (reclaim never freed through the shrinker)");
	}
	if (S.cfg.remote && !t->remote_freed)
		add(buf, len, "remote (no cross-vCPU free)");
	if (S.cfg.control) {
		bool slab = S.cfg.mode != MODE_PAGES && S.cfg.mode != MODE_PCP;
		if (!atomic_load(&S.drains) || !atomic_load(&S.pcp_updates) || (slab && !atomic_load(&S.shrinks)))
			add(buf, len, "control (no drain, pcp update or shrink)");
	}
	if (S.cfg.check_level >= 1 && !atomic_load(&S.stw_checks))
		add(buf, len, "check (no stop-the-world check)");
}

static double rate(unsigned long n, double s)
{
	return s > 0 ? (double)n / s : 0;
}

/*
 * A worker's own seconds, written by it before it turns WS_DONE (so read
 * only then); a worker still going - the watchdog's report of a hang -
 * counts the run's.
 */
static double worker_seconds(const struct worker *w)
{
	return atomic_load(&w->state) == WS_DONE ? w->seconds : S.elapsed;
}

void stress_report(FILE *f, const struct stress_totals *t, const char *vacuous, bool ok)
{
	const struct stress_config *c = &S.cfg;
	const char *m = stress_mode_name(c->mode);
	double el = S.elapsed;

	fprintf(f, "\n--- mmfuzz-stress %s: End of test ---\n", m);
	fprintf(f, "%s: config: threads %d cpus %d %s%.2fs ops/thread %lu seed %#llx check-level %d%s%s\n", m,
		c->threads, c->cpus, "elapsed ", el, c->ops, (unsigned long long)c->seed, c->check_level,
		STRESS_TSAN ? " (tsan)" : STRESS_ASAN ? " (asan)" : "", S.hooks ? "" : " (no test hooks)");
	fprintf(f, "%s: injections: migrate %s irq %s onoff %s stutter %s pressure %s remote %s control %s\n", m,
		c->migrate ? "on" : "off", c->irq ? "on" : "off", c->onoff ? "on" : "off",
		c->stutter ? "on" : "off", c->pressure ? "on" : "off", c->remote ? "on" : "off",
		c->control ? "on" : "off");
	if (!c->quiet)
		for (int i = 0; i < c->threads; i++) {
			const struct worker *w = &S.w[i];
			fprintf(f, "%s: thread %2d: ops %9lu (%9.0f ops/s) allocs %lu frees %lu fails %lu "
				"remote %lu/%lu migrations %lu irqs(hook %lu signal %lu)\n", m, i, STAT(w->st.ops),
				rate(STAT(w->st.ops), worker_seconds(w)), STAT(w->st.allocs), STAT(w->st.frees), STAT(w->st.fails),
				STAT(w->st.remote_sent), STAT(w->st.remote_freed), STAT(w->st.hook_migrations), STAT(w->st.hook_irqs),
				STAT(w->st.sig_in_alloc) + w->st.sig_outside);
		}
	fprintf(f, "%s: total: ops %lu in %.2fs: %.0f ops/s (%.0f per thread); allocs %lu frees %lu "
		"alloc failures %lu; bulk calls %lu (%lu objects)\n", m, t->ops, el, rate(t->ops, el),
		rate(t->ops, el) / (c->threads ? c->threads : 1), t->allocs, t->frees, t->fails, t->bulk_calls,
		t->bulk_objects);
	fprintf(f, "%s: cpu: %.2f CPU-seconds for %.2f s of wall time: %.0f ops per CPU-second\n", m, S.cpu_s, el,
		rate(t->ops, S.cpu_s));
	fprintf(f, "%s: pages: pgalloc %lu pgfree %lu allocfail %lu allocstall %lu pgscan %lu pgsteal %lu "
		"fallback %lu\n", m, t->ev[PGALLOC], t->ev[PGFREE], t->ev[ALLOCFAIL], t->ev[ALLOCSTALL],
		t->ev[PGSCAN_DIRECT], t->ev[PGSTEAL_DIRECT], t->ev[PGFALLBACK]);
	if (t->slub_stats)
		fprintf(f, "%s: slub: alloc fast %lu slow %lu, free fast %lu slow %lu, cmpxchg retries: cpu "
			"freelist %lu slab %lu, new slabs %lu, from partial %lu, cpu partial alloc %lu free %lu, "
			"flushes %lu\n", m, t->slub[ALLOC_FASTPATH], t->slub[ALLOC_SLOWPATH],
			t->slub[FREE_FASTPATH], t->slub[FREE_SLOWPATH], t->slub[CMPXCHG_DOUBLE_CPU_FAIL],
			t->slub[CMPXCHG_DOUBLE_FAIL], t->slub[ALLOC_SLAB], t->slub[ALLOC_FROM_PARTIAL],
			t->slub[CPU_PARTIAL_ALLOC], t->slub[CPU_PARTIAL_FREE], t->slub[CPUSLAB_FLUSH]);
	fprintf(f, "%s: migrations %lu (refused %lu; by the hook %lu), interrupts %lu (signal %lu, in a window %lu, "
		"in an allocator call %lu; hook %lu; deferred %lu dropped %lu; signals sent %lu)\n", m,
		t->cpu.migrations_in, t->cpu.migrations_refused, t->hook_migrations, t->cpu.irqs_delivered,
		t->cpu.irqs_from_signal, t->sig_in_window, t->sig_in_alloc, t->hook_irqs, t->cpu.irqs_deferred,
		t->cpu.irqs_dropped, atomic_load(&S.signals_sent));
	fprintf(f, "%s: interrupt handler: runs %lu allocs %lu frees %lu GFP_ATOMIC failures %lu\n", m,
		t->irq_runs, t->irq_allocs, t->irq_frees, t->irq_fails);
	fprintf(f, "%s: per point (hits / migrations / interrupts):", m);
	for (int p = 1; p < MM_PP_NR; p++)
		if (t->cpu.pp_hit[p])
			fprintf(f, " %s%s %lu/%lu/%lu", mm_pp_name((enum mm_pp)p), window_point((enum mm_pp)p, false) ? "*" : "",
				t->cpu.pp_hit[p], t->cpu.pp_migrate[p], t->cpu.pp_irq[p]);
	fprintf(f, "  (* fast-path window)\n");
	fprintf(f, "%s: drains %lu (local %lu) pcp updates %lu shrinks %lu onoff %lu (errors %lu) stutters %lu "
		"remote frees %lu/%lu slices %lu\n", m, atomic_load(&S.drains), t->drains_local,
		atomic_load(&S.pcp_updates), atomic_load(&S.shrinks), atomic_load(&S.onoff_cycles),
		atomic_load(&S.onoff_errors), atomic_load(&S.stutters), t->remote_freed, t->remote_sent,
		t->slices);
	fprintf(f, "%s: pressure: phases %lu, below low %lu, below min %lu, pages taken %lu (peak %lu), "
		"shrinker calls %lu freed %lu\n", m, atomic_load(&S.pressure_phases), atomic_load(&S.below_low),
		atomic_load(&S.below_min), atomic_load(&S.pressure_pages), atomic_load(&S.pressure_peak),
		atomic_load(&S.shrinker_calls), atomic_load(&S.shrinker_freed));
	fprintf(f, "%s: checks: stop-the-world %lu, T1 %lu, tid contract %lu, re-reads %lu, allocator reports %lu\n",
		m, atomic_load(&S.stw_checks), t->t1_checks, t->tid_checks, t->verifies, mm_nr_reports(S.mm));
	if (vacuous && *vacuous)
		fprintf(f, "%s: VACUOUS: %s\n", m, vacuous);
	if (!ok && S.failure[0])
		fprintf(f, "%s: failure: %s\n", m, S.failure);
	(void)ok;
}

/* A JSON string: quotes and backslashes escaped, control characters as spaces. */
static void json_text(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else
			fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
	}
	fputc('"', f);
}

int stress_write_json(const struct stress_totals *t, const char *vacuous, bool ok)
{
	struct json_file jf;
	static char head[8192], rep[4096];
	FILE *f = json_open(&jf);
	if (!f)
		return errno ? errno : EIO;
	const struct stress_config *c = &S.cfg;
	struct jbuf hj = { head, sizeof(head), 0 };
	json_head(&hj);
	fputs(head, f);
	fprintf(f, "  \"cpu_s\": %.3f, \"ops_per_cpu_s\": %.0f,\n", S.cpu_s, rate(t->ops, S.cpu_s));
	fprintf(f, "  \"elapsed_s\": %.3f, \"check_level\": %d, \"sanitizer\": \"%s\", \"test_hooks\": %s,\n",
		S.elapsed, c->check_level, STRESS_TSAN ? "thread" : STRESS_ASAN ? "address" : "",
		S.hooks ? "true" : "false");
	fprintf(f, "  \"injections\": {\"migrate\": %d, \"irq\": %d, \"onoff\": %d, \"stutter\": %d, "
		"\"pressure\": %d, \"remote\": %d, \"control\": %d},\n", c->migrate, c->irq, c->onoff, c->stutter,
		c->pressure, c->remote, c->control);
	fprintf(f, "  \"threads_stats\": [\n");
	for (int i = 0; i < c->threads; i++) {
		const struct worker *w = &S.w[i];
		fprintf(f, "    {\"ops\": %lu, \"ops_per_s\": %.0f, \"allocs\": %lu, \"frees\": %lu, \"fails\": %lu, "
			"\"remote_sent\": %lu, \"remote_freed\": %lu, \"migrations\": %lu, \"hook_irqs\": %lu, "
			"\"signal_irqs\": %lu}%s\n", STAT(w->st.ops), rate(STAT(w->st.ops), worker_seconds(w)), STAT(w->st.allocs),
			STAT(w->st.frees), STAT(w->st.fails), STAT(w->st.remote_sent), STAT(w->st.remote_freed), STAT(w->st.hook_migrations),
			STAT(w->st.hook_irqs), STAT(w->st.sig_in_alloc) + STAT(w->st.sig_outside), i + 1 < c->threads ? "," : "");
	}
	fprintf(f, "  ],\n");
	fprintf(f, "  \"total\": {\"ops\": %lu, \"ops_per_s\": %.0f, \"allocs\": %lu, \"frees\": %lu, "
		"\"alloc_failures\": %lu, \"bulk_calls\": %lu, \"bulk_objects\": %lu},\n", t->ops,
		rate(t->ops, S.elapsed), t->allocs, t->frees, t->fails, t->bulk_calls, t->bulk_objects);
	fprintf(f, "  \"pages\": {\"pgalloc\": %lu, \"pgfree\": %lu, \"allocfail\": %lu, \"allocstall\": %lu, "
		"\"pgscan\": %lu, \"pgsteal\": %lu},\n", t->ev[PGALLOC], t->ev[PGFREE], t->ev[ALLOCFAIL],
		t->ev[ALLOCSTALL], t->ev[PGSCAN_DIRECT], t->ev[PGSTEAL_DIRECT]);
	fprintf(f, "  \"slub\": {");
	for (int i = 0; i < NR_SLUB_STAT_ITEMS; i++)
		fprintf(f, "%s\"%s\": %lu", i ? ", " : "", slub_stat_name((enum slub_stat_item)i), t->slub[i]);
	fprintf(f, "},\n");
	fprintf(f, "  \"cpu\": {\"migrations\": %lu, \"migrations_refused\": %lu, \"irqs\": %lu, "
		"\"irqs_from_signal\": %lu, \"irqs_deferred\": %lu, \"irqs_dropped\": %lu, \"offlines\": %lu, "
		"\"onlines\": %lu, \"signals_sent\": %lu, \"signal_irqs_in_window\": %lu, "
		"\"signal_irqs_in_alloc\": %lu},\n", t->cpu.migrations_in, t->cpu.migrations_refused,
		t->cpu.irqs_delivered, t->cpu.irqs_from_signal, t->cpu.irqs_deferred, t->cpu.irqs_dropped,
		t->cpu.offlines, t->cpu.onlines, atomic_load(&S.signals_sent), t->sig_in_window, t->sig_in_alloc);
	fprintf(f, "  \"points\": {");
	bool first = true;
	for (int p = 1; p < MM_PP_NR; p++)
		if (t->cpu.pp_hit[p]) {
			fprintf(f, "%s\"%s\": {\"hits\": %lu, \"migrations\": %lu, \"irqs\": %lu, \"window\": %s}",
				first ? "" : ", ", mm_pp_name((enum mm_pp)p), t->cpu.pp_hit[p], t->cpu.pp_migrate[p],
				t->cpu.pp_irq[p], window_point((enum mm_pp)p, false) ? "true" : "false");
			first = false;
		}
	fprintf(f, "},\n");
	fprintf(f, "  \"irq_handler\": {\"runs\": %lu, \"allocs\": %lu, \"frees\": %lu, \"failures\": %lu},\n",
		t->irq_runs, t->irq_allocs, t->irq_frees, t->irq_fails);
	fprintf(f, "  \"control\": {\"drains\": %lu, \"drains_local\": %lu, \"pcp_updates\": %lu, \"shrinks\": %lu, "
		"\"onoff_cycles\": %lu, \"onoff_errors\": %lu, \"stutters\": %lu},\n", atomic_load(&S.drains),
		t->drains_local, atomic_load(&S.pcp_updates), atomic_load(&S.shrinks), atomic_load(&S.onoff_cycles),
		atomic_load(&S.onoff_errors), atomic_load(&S.stutters));
	fprintf(f, "  \"pressure\": {\"phases\": %lu, \"below_low\": %lu, \"below_min\": %lu, \"pages\": %lu, "
		"\"peak\": %lu, \"shrinker_calls\": %lu, \"shrinker_freed\": %lu},\n",
		atomic_load(&S.pressure_phases), atomic_load(&S.below_low), atomic_load(&S.below_min),
		atomic_load(&S.pressure_pages), atomic_load(&S.pressure_peak), atomic_load(&S.shrinker_calls),
		atomic_load(&S.shrinker_freed));
	fprintf(f, "  \"checks\": {\"stop_the_world\": %lu, \"t1\": %lu, \"tid_contract\": %lu, \"rereads\": %lu, "
		"\"reports\": %lu},\n", atomic_load(&S.stw_checks), t->t1_checks, t->tid_checks, t->verifies,
		mm_nr_reports(S.mm));
	fprintf(f, "  \"vacuous\": ");
	json_text(f, vacuous);
	fprintf(f, ",\n  \"failure\": ");
	json_text(f, S.failure);
	fprintf(f, ",\n");
	struct jbuf rj = { rep, sizeof(rep), 0 };
	json_replay(&rj);
	fputs(rep, f);
	fprintf(f, "  \"interrupted\": %s,\n", atomic_load(&S.interrupted) ? "true" : "false");
	fprintf(f, "  \"result\": \"%s\"\n}\n", !ok ? "FAILURE" : atomic_load(&S.interrupted) ? "INTERRUPTED" : "SUCCESS");
	return json_commit(&jf);
}

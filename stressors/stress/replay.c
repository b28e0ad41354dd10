/* SPDX-License-Identifier: MIT */
/*
 * replay.c - a free-running failure handed to the deterministic engine
 * (issue 6: every failure found by a stressor fails again under
 * --deterministic replay, or is reported as found only by free-running
 * mode, with the reason).
 *
 * A free-running run cannot replay itself: its seed fixes every thread's
 * op stream and injection decisions, not how the OS interleaves the
 * threads.  So after a failure the stressor runs the deterministic driver
 * (mmfuzz-sched-stress, stressors/sched/, built with this binary) on the
 * same mode and seed, as many tasks over as many vCPUs, a bounded number
 * of runs of each seeded policy (random, pct, sticky) within a time
 * budget, and stops at the first failing run.  That run's rerun command is
 * then run once more on its own; if it fails again the report says
 *
 *     reproduced deterministically: ./mmfuzz stress MODE --deterministic --seed X --run I ...
 *
 * and otherwise
 *
 *     found only by free-running mode: <why>
 *
 * The why names what the free-running run had and the deterministic engine
 * does not: threads truly in parallel (a race inside a section with no
 * preemption point), interrupts from signals that land between any two
 * instructions (the engine delivers them only at preemption points), CPU
 * offline/online, memory-pressure phases, the control thread's pcp
 * high/batch updates, long runs (the engine's runs are short, from a reset
 * instance); or that the failure is the free-running stressor's own
 * (vacuity, a fault planted in its shadow bitmaps or watchdog).
 *
 * A reproduction is a failure of the same seed under the deterministic
 * engine, not the same interleaving (there is none to copy): both failure
 * messages are kept so a reader can see whether they are the same bug.
 * Sanitizer reports end the process before any of this runs.
 *
 * No verdict is said as such, never as a pass:
 *
 *     deterministic replay inconclusive: <why>
 *
 * when no deterministic run completed (--replay-time ran out, or the driver
 * printed no "total:" line), or the failing run could not be rerun alone
 * within what was left of --replay-time, which bounds the whole attempt,
 * that rerun included; and
 *
 *     deterministic replay interrupted: <why>
 *
 * when SIGINT or SIGTERM came during the attempt (the driver is killed and
 * reaped at once: the loops here poll S.interrupted every 50 ms) or before
 * it.  The free-running failure itself is reported either way (main.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stress.h"

#ifndef MMFUZZ_SCHED_STRESS_PATH
#define MMFUZZ_SCHED_STRESS_PATH ""
#endif

const char *stress_replay_status_name(enum replay_status st)
{
	switch (st) {
	case REPLAY_REPRODUCED: return "reproduced";
	case REPLAY_FREE_ONLY: return "free-running only";
	case REPLAY_SKIPPED: return "not attempted";
	case REPLAY_INCONCLUSIVE: return "inconclusive";
	case REPLAY_INTERRUPTED: return "interrupted";
	default: return "none";
	}
}

/* The deterministic driver: $MMFUZZ_SCHED_STRESS, the one built with us, or ../sched/ next to us. */
static bool find_driver(char *path, size_t len)
{
	const char *env = getenv("MMFUZZ_SCHED_STRESS");
	if (env && *env) {
		snprintf(path, len, "%s", env);
		return access(path, X_OK) == 0;
	}
	snprintf(path, len, "%s", MMFUZZ_SCHED_STRESS_PATH);
	if (path[0] && access(path, X_OK) == 0)
		return true;
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = 0;
		char *slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			snprintf(path, len, "%.400s/../sched/mmfuzz-sched-stress", self);
			if (access(path, X_OK) == 0)
				return true;
		}
	}
	snprintf(path, len, "%s", MMFUZZ_SCHED_STRESS_PATH[0] ? MMFUZZ_SCHED_STRESS_PATH : "mmfuzz-sched-stress");
	return false;
}

/* How run_capture's child ended. */
enum capture_end {
	CAP_EXITED,                 /* on its own: the status is its exit status, or 128+signal */
	CAP_STOPPED,                /* killed after the @stop line: returns 1 */
	CAP_TIMEOUT,                /* killed when the time ran out */
	CAP_INTERRUPTED,            /* killed for SIGINT/SIGTERM (S.interrupted), or died of it */
};

static void nap_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
}

/*
 * Run @argv with stdout into @out (the first @len-1 bytes; stdin from and
 * stderr to /dev/null) for at most @timeout seconds.  With @stop, the child
 * is killed as soon as a line starting with @stop has been read whole.
 * S.interrupted is looked at every 50 ms: the child is killed then too.  A
 * killed child is always reaped before the return, and the child dies with
 * us (PR_SET_PDEATHSIG) should we be killed outright.  Returns the exit
 * status, 128+signal, 1 when stopped at @stop, or -1 (could not run); *@end
 * says which way it ended.
 */
static int run_capture(char *const argv[], double timeout, const char *stop, char *out, size_t len,
		       enum capture_end *end)
{
	int fd[2];
	*end = CAP_EXITED;
	out[0] = 0;
	if (pipe(fd))
		return -1;
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		/* Called from a fatal signal's handler, that signal is blocked here;
		 * exec keeps the mask, and the driver needs SIGSEGV and SIGABRT. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);                      /* the stressor is already gone */
		int null = open("/dev/null", O_RDWR);
		dup2(fd[1], 1);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 2);
		}
		close(fd[0]);
		close(fd[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	size_t used = 0;
	double deadline = stress_now() + timeout;
	for (;;) {
		if (atomic_load(&S.interrupted)) {
			*end = CAP_INTERRUPTED;
			break;
		}
		double left = deadline - stress_now();
		if (left <= 0) {
			*end = CAP_TIMEOUT;
			break;
		}
		struct pollfd p = { fd[0], POLLIN, 0 };
		int r = poll(&p, 1, left < 0.05 ? (int)(left * 1000) + 1 : 50);
		if (r <= 0)
			continue;                       /* EINTR or the 50 ms: look at the flag and the time again */
		char buf[4096];
		ssize_t n = read(fd[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;                          /* EOF: the child is ending */
		size_t take = MIN_UL((size_t)n, len - 1 - used);
		memcpy(out + used, buf, take);
		used += take;
		out[used] = 0;
		if (stop) {
			const char *hit = strstr(out, stop);
			if (hit && (hit == out || hit[-1] == '\n') && strchr(hit, '\n')) {
				*end = CAP_STOPPED;
				break;
			}
		}
	}
	close(fd[0]);
	int status = 0;
	for (bool killed = false;;) {
		if (!killed && (*end != CAP_EXITED || atomic_load(&S.interrupted) || stress_now() > deadline)) {
			if (*end == CAP_EXITED)         /* closed its stdout but went on */
				*end = atomic_load(&S.interrupted) ? CAP_INTERRUPTED : CAP_TIMEOUT;
			kill(pid, SIGKILL);
			killed = true;
		}
		pid_t w = waitpid(pid, &status, killed ? 0 : WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (w == 0)
			nap_ms(10);
	}
	if (*end == CAP_STOPPED)
		return 1;                         /* stopped at its first failure */
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	if (*end == CAP_EXITED && (sig == SIGINT || sig == SIGTERM) && atomic_load(&S.interrupted))
		*end = CAP_INTERRUPTED;           /* Ctrl-C reached the driver too (same process group) */
	return 128 + sig;
}

/* The rest of the line after @key at a line start, copied into @dst. */
static bool line_after(const char *text, const char *key, char *dst, size_t len)
{
	for (const char *p = text; (p = strstr(p, key)); p++) {
		if (p != text && p[-1] != '\n')
			continue;
		p += strlen(key);
		size_t n = strcspn(p, "\n");
		snprintf(dst, len, "%.*s", (int)MIN_UL(n, len - 1), p);
		return true;
	}
	return false;
}

/* What the free-running run had that the deterministic engine does not model. */
static void free_only_reasons(char *buf, size_t len)
{
	const struct stress_config *c = &S.cfg;
	size_t l = 0;
#define ADD(...) do { if (l < len) l += (size_t)snprintf(buf + l, len - l, __VA_ARGS__); } while (0)
	ADD("%d threads truly in parallel (a race inside a section with no preemption point)", c->threads);
	if (c->irq)
		ADD("; interrupts from signals, landing between any two instructions");
	if (c->onoff)
		ADD("; CPU offline/online");
	if (c->pressure)
		ADD("; memory-pressure phases and reclaim");
	if (c->control)
		ADD("; pcp high/batch updates and drains from a control thread");
	ADD("; the default instance (mm_config_default: four zones, a hole) where the deterministic driver "
	    "uses the tiny one (mm_config_tiny)");
	ADD("; one long run (%s%g) where the deterministic runs are 24 ops per task from a reset instance",
	    c->ops ? "ops/thread " : "seconds ", c->ops ? (double)c->ops : c->time_s);
#undef ADD
}

static const char *sig_name(int sig)
{
	return sig == SIGTERM ? "SIGTERM" : "SIGINT";
}

/* The attempt stopped by SIGINT/SIGTERM, which came @during it: no verdict. */
static void replay_interrupted(struct stress_replay *r, unsigned long tried, double t0, const char *during)
{
	r->status = REPLAY_INTERRUPTED;
	r->runs = tried;
	r->seconds = stress_now() - t0;
	snprintf(r->reason, sizeof(r->reason), "%s came %s, after %lu completed deterministic runs in %.1f s; the "
		 "driver was stopped and reaped, no verdict", sig_name(atomic_load(&S.interrupted)), during, tried,
		 r->seconds);
}

void stress_replay_skip(const char *why)
{
	struct stress_replay *r = &S.replay;
	if (r->status != REPLAY_NONE)
		return;
	r->status = REPLAY_SKIPPED;
	r->artifact[0] = 0;
	snprintf(r->reason, sizeof(r->reason), "%s", why);
}

void stress_replay_attempt(void)
{
	struct stress_replay *r = &S.replay;
	const struct stress_config *c = &S.cfg;
	const char *sel = c->selftest;
	double t0 = stress_now();

	if (r->status != REPLAY_NONE)
		return;
	r->artifact[0] = 0;
	if (c->no_replay) {
		r->status = REPLAY_SKIPPED;
		snprintf(r->reason, sizeof(r->reason), "--no-replay");
		return;
	}
	if (!strncmp(S.failure, "VACUOUS", 7) || (sel && !strcmp(sel, "vacuous"))) {
		r->status = REPLAY_FREE_ONLY;
		snprintf(r->reason, sizeof(r->reason), "a vacuity failure: an injection of the free-running stressor "
			 "never fired; no allocator failure to replay");
		return;
	}
	if (sel && (!strcmp(sel, "double") || !strcmp(sel, "hang"))) {
		r->status = REPLAY_FREE_ONLY;
		snprintf(r->reason, sizeof(r->reason), "the fault was planted by --selftest %s in the free-running "
			 "stressor's own %s, which the deterministic driver does not have", sel,
			 !strcmp(sel, "double") ? "shadow bitmaps" : "wall-clock watchdog");
		return;
	}
#ifndef MM_TEST_HOOKS
	r->status = REPLAY_FREE_ONLY;
	snprintf(r->reason, sizeof(r->reason), "built without MM_TEST_HOOKS: no preemption points for the "
		 "deterministic engine to switch at");
	return;
#endif
	/* Stopping was asked for before the attempt: do not start a 20 s one. */
	if (atomic_load(&S.interrupted)) {
		r->status = REPLAY_INTERRUPTED;
		snprintf(r->reason, sizeof(r->reason), "%s came before the attempt (during the run or its final "
			 "checks): not started, no verdict", sig_name(atomic_load(&S.interrupted)));
		return;
	}
	char drv[512];
	if (!find_driver(drv, sizeof(drv))) {
		r->status = REPLAY_FREE_ONLY;
		snprintf(r->reason, sizeof(r->reason), "the deterministic driver is not built (no %.400s; "
			 "cmake --build <dir> --target mmfuzz-sched-stress, or set MMFUZZ_SCHED_STRESS)", drv);
		return;
	}

	char seed[32], runs[32], tasks[16], cpus[16];
	snprintf(seed, sizeof(seed), "%#llx", (unsigned long long)c->seed);
	snprintf(runs, sizeof(runs), "%lu", c->replay_runs);
	snprintf(tasks, sizeof(tasks), "%d", c->threads < 16 ? c->threads : 16);
	snprintf(cpus, sizeof(cpus), "%d", c->cpus);
	const char *tmp = getenv("TMPDIR");
	snprintf(r->artifact, sizeof(r->artifact), "%s/mmfuzz-replay-%s-%s-%d.sched", tmp && *tmp ? tmp : "/tmp",
		 stress_mode_name(c->mode), seed, (int)getpid());
	static const char *const pols[] = { "random", "pct", "sticky" };
	static char out[16384];
	unsigned long tried = 0;
	bool any_timeout = false;
	int last_rc = 0;
	for (int i = 0; i < 3; i++) {
		double left = c->replay_time - (stress_now() - t0);
		if (left <= 0.05) {
			any_timeout = true;
			break;
		}
		char *argv[24];
		int n = 0;
		argv[n++] = drv;
		argv[n++] = (char *)stress_mode_name(c->mode);
		argv[n++] = "--deterministic";
		argv[n++] = "--seed";
		argv[n++] = seed;
		argv[n++] = "--runs";
		argv[n++] = runs;
		argv[n++] = "--policy";
		argv[n++] = (char *)pols[i];
		argv[n++] = "--tasks";
		argv[n++] = tasks;
		argv[n++] = "--cpus";
		argv[n++] = cpus;
		argv[n++] = "--quiet";
		argv[n++] = "--artifact";
		argv[n++] = r->artifact;
		if (!c->irq)
			argv[n++] = "--no-irq";
		if (!c->migrate)
			argv[n++] = "--no-migrate";
		if (sel) {
			argv[n++] = "--selftest";
			argv[n++] = (char *)sel;
		}
		argv[n] = NULL;
		enum capture_end end;
		int rc = run_capture(argv, left, "rerun: ", out, sizeof(out), &end);
		if (end == CAP_INTERRUPTED) {
			char during[64];
			snprintf(during, sizeof(during), "during the runs of policy %s", pols[i]);
			replay_interrupted(r, tried, t0, during);
			return;
		}
		any_timeout |= end == CAP_TIMEOUT;
		last_rc = rc;
		char line[400], cmd[400];
		unsigned long run = 0;
		if (line_after(out, "total: ", line, sizeof(line))) {
			const char *p = strstr(line, " runs ");
			tried += p ? strtoul(p + 6, NULL, 10) : 0;
		}
		if (rc == 1 && line_after(out, "rerun: ", cmd, sizeof(cmd))) {
			const char *p = strstr(cmd, "--run ");
			run = p ? strtoul(p + 6, NULL, 10) : 0;
			tried += run + 1;
			if (line_after(out, "run ", line, sizeof(line))) {
				const char *f = strstr(line, "FAILED: ");
				snprintf(r->det_failure, sizeof(r->det_failure), "%s", f ? f + 8 : line);
			}
			snprintf(r->command, sizeof(r->command), "%s", cmd);
			r->runs = tried;
			/* Confirm: the single run, on its own, fails again - within what is left of --replay-time. */
			double cleft = c->replay_time - (stress_now() - t0);
			if (cleft <= 0.05) {
				r->status = REPLAY_INCONCLUSIVE;
				r->seconds = stress_now() - t0;
				snprintf(r->reason, sizeof(r->reason), "run %lu of policy %s failed (%s), but --replay-time "
					 "(%g s) ran out before it could be rerun alone to confirm it; rerun it: %s", run,
					 pols[i], r->det_failure, c->replay_time, cmd);
				return;
			}
			const char *words = strstr(cmd, "--deterministic");
			char copy[400];
			snprintf(copy, sizeof(copy), "%s", words ? words : "");
			char *cargv[32];
			int cn = 0;
			cargv[cn++] = drv;
			cargv[cn++] = (char *)stress_mode_name(c->mode);
			for (char *save = NULL, *tok = strtok_r(copy, " ", &save); tok && cn < 28;
			     tok = strtok_r(NULL, " ", &save))
				cargv[cn++] = tok;
			cargv[cn++] = "--quiet";
			cargv[cn++] = "--artifact";
			cargv[cn++] = r->artifact;
			cargv[cn] = NULL;
			int crc = run_capture(cargv, cleft, NULL, out, sizeof(out), &end);
			r->seconds = stress_now() - t0;
			if (end == CAP_INTERRUPTED) {
				replay_interrupted(r, tried, t0, "while the failing run was rerun alone");
				return;
			}
			if (crc == 1 && strstr(out, "\nFAILURE")) {
				r->status = REPLAY_REPRODUCED;
				return;
			}
			if (end == CAP_TIMEOUT) {
				r->status = REPLAY_INCONCLUSIVE;
				snprintf(r->reason, sizeof(r->reason), "run %lu of policy %s failed (%s), but its rerun alone "
					 "did not end within the %.1f s left of --replay-time (%g s); rerun it: %s", run,
					 pols[i], r->det_failure, cleft, c->replay_time, cmd);
				return;
			}
			r->status = REPLAY_FREE_ONLY;
			snprintf(r->reason, sizeof(r->reason), "run %lu of policy %s failed (%s) but did not fail again "
				 "when rerun alone (exit status %d): the deterministic engine is not deterministic here - "
				 "a bug of the engine or the driver", run, pols[i], r->det_failure, crc);
			return;
		}
		if (rc >= 128 && end == CAP_EXITED && !strstr(out, "\nrun ") && strncmp(out, "run ", 4)) {
			/*
			 * The driver died of a signal before any run ended: it crashed
			 * creating its instance (or in run 0), which no interleaving
			 * decides - rerun run 0 alone and see it die the same way.
			 */
			char *cargv[24];
			int cn = 0;
			for (; argv[cn] && cn < 22; cn++)
				cargv[cn] = argv[cn];
			cargv[cn++] = "--run";
			cargv[cn++] = "0";
			cargv[cn] = NULL;
			double cleft = c->replay_time - (stress_now() - t0);
			int crc = cleft > 0.05 ? run_capture(cargv, cleft, NULL, out, sizeof(out), &end) : -1;
			if (cleft > 0.05 && end == CAP_INTERRUPTED) {
				replay_interrupted(r, tried, t0, "while run 0 was rerun alone");
				return;
			}
			snprintf(r->command, sizeof(r->command), "./mmfuzz stress %s --deterministic --seed %s --run 0 "
				 "--policy %s --tasks %s --cpus %s --steps 24%s%s", stress_mode_name(c->mode), seed, pols[i],
				 tasks, cpus, c->irq ? "" : " --no-irq", c->migrate ? "" : " --no-migrate");
			snprintf(r->det_failure, sizeof(r->det_failure), "the driver died of signal %d before any run "
				 "ended (the instance's creation or run 0 crashes, whatever the interleaving)", rc - 128);
			r->runs = 1;
			r->seconds = stress_now() - t0;
			if (crc == rc) {
				r->status = REPLAY_REPRODUCED;
				return;
			}
			if (cleft <= 0.05 || end == CAP_TIMEOUT) {
				r->status = REPLAY_INCONCLUSIVE;
				snprintf(r->reason, sizeof(r->reason), "the driver died of signal %d before any run ended "
					 "under policy %s, and --replay-time (%g s) ran out before run 0 alone could show "
					 "the same; rerun it: %s", rc - 128, pols[i], c->replay_time, r->command);
				return;
			}
		}
		if (rc != 0 && rc != 1 && end == CAP_EXITED) {
			r->status = REPLAY_FREE_ONLY;
			r->seconds = stress_now() - t0;
			snprintf(r->reason, sizeof(r->reason), "the deterministic driver %.400s ended with status %d "
				 "(bad arguments or a crash) under policy %s", drv, rc, pols[i]);
			return;
		}
	}
	r->runs = tried;
	r->seconds = stress_now() - t0;
	if (!tried) {
		/* Nothing ran to its end: that is no verdict, not a pass. */
		r->status = REPLAY_INCONCLUSIVE;
		if (any_timeout)
			snprintf(r->reason, sizeof(r->reason), "no deterministic run completed: --replay-time (%g s) ran "
				 "out first, after %.1f s", c->replay_time, r->seconds);
		else
			snprintf(r->reason, sizeof(r->reason), "no deterministic run completed: the driver %.400s printed "
				 "no 'total:' line (last exit status %d)", drv, last_rc);
		return;
	}
	r->status = REPLAY_FREE_ONLY;
	char why[600];
	free_only_reasons(why, sizeof(why));
	snprintf(r->reason, sizeof(r->reason), "%lu deterministic runs of the same mode and seed (%s tasks over %s "
		 "vCPUs; random, pct, sticky, up to %lu each%s) passed in %.1f s.  The deterministic engine switches "
		 "tasks only at preemption points, lock waits and atomics, and delivers interrupts only at "
		 "preemption points; this run had %s", tried, tasks, cpus, c->replay_runs,
		 any_timeout ? ", cut short by --replay-time" : "", r->seconds, why);
}

void stress_replay_print(FILE *f)
{
	const struct stress_replay *r = &S.replay;
	switch (r->status) {
	case REPLAY_REPRODUCED:
		fprintf(f, "reproduced deterministically: %s\n", r->command);
		fprintf(f, "  (the deterministic failure: %s; found after %lu runs in %.1f s", r->det_failure, r->runs,
			r->seconds);
		if (r->artifact[0] && access(r->artifact, R_OK) == 0)
			fprintf(f, "; artifact %s", r->artifact);
		fprintf(f, ")\n");
		break;
	case REPLAY_FREE_ONLY:
		fprintf(f, "found only by free-running mode: %s\n", r->reason);
		break;
	case REPLAY_SKIPPED:
		fprintf(f, "deterministic replay not attempted: %s\n", r->reason);
		break;
	case REPLAY_INCONCLUSIVE:
		fprintf(f, "deterministic replay inconclusive: %s\n", r->reason);
		break;
	case REPLAY_INTERRUPTED:
		fprintf(f, "deterministic replay interrupted: %s\n", r->reason);
		break;
	default:
		break;
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * gate.c - where threads meet: the start barrier, stop-the-world (for the
 * full checker) and stutter (everybody pauses, then all resume at once),
 * and the watchdog.
 *
 * Protocol.  Participants are the threads that call the allocator.  The
 * coordinator sets gate_req; each participant notices it between two
 * operations (one relaxed load per op), gives its vCPU back - a thread
 * that blocks holding a vCPU blocks everyone who needs that vCPU, the
 * hotplug thread and the checker included - and parks on gate_mu.  When
 * parked == participants the instance is quiescent: no vCPU held, no
 * allocator call in flight, no lock held.  The coordinator runs its check
 * (or sleeps, for a stutter), then bumps the generation and broadcasts.
 * The mutex also orders every participant's plain writes (live tables,
 * interrupt pools) before the coordinator's reads of them, and the
 * coordinator's before theirs after the release.
 *
 * The watchdog samples each worker's progress counter; a worker that is
 * running (not parked, not done) and has not finished an op for
 * --hang-timeout seconds is stuck - in the allocator, or waiting for a vCPU
 * somebody never gives back.  Its last ops are printed and the run fails
 * on the spot (a stuck thread cannot be joined).
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "stress.h"

atomic_int gate_req;                            /* 1: park at the next safe point */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t parked_cv = PTHREAD_COND_INITIALIZER;     /* participants -> coordinator */
static pthread_cond_t release_cv = PTHREAD_COND_INITIALIZER;    /* coordinator -> participants */
static int participants;                        /* under gate_mu */
static int parked;                              /* under gate_mu */
static unsigned long generation;                /* under gate_mu */
static int start_waiting;                       /* under gate_mu */
static bool start_released;                     /* under gate_mu */

void gate_init(int n)
{
	participants = n;
}

void gate_start_wait(void)
{
	pthread_mutex_lock(&gate_mu);
	start_waiting++;
	pthread_cond_broadcast(&parked_cv);
	while (!start_released)
		pthread_cond_wait(&release_cv, &gate_mu);
	pthread_mutex_unlock(&gate_mu);
}

void gate_wait_started(int n)
{
	pthread_mutex_lock(&gate_mu);
	while (start_waiting < n)
		pthread_cond_wait(&parked_cv, &gate_mu);
	pthread_mutex_unlock(&gate_mu);
}

void gate_start_release(void)
{
	pthread_mutex_lock(&gate_mu);
	start_released = true;
	pthread_cond_broadcast(&release_cv);
	pthread_mutex_unlock(&gate_mu);
}

void gate_poll(struct worker *w)
{
	if (!gate_requested())
		return;
	mm_cpu_detach(S.mm);                    /* never block holding a vCPU */
	if (w) {
		oplog_add(&w->log, OP_PARK, -1, 0, NULL);
		atomic_store(&w->state, WS_PARKED);
	}
	pthread_mutex_lock(&gate_mu);
	if (atomic_load(&gate_req)) {
		unsigned long g = generation;
		parked++;
		pthread_cond_broadcast(&parked_cv);
		while (generation == g)
			pthread_cond_wait(&release_cv, &gate_mu);
	}
	pthread_mutex_unlock(&gate_mu);
	if (w)
		atomic_store(&w->state, WS_RUNNING);
}

void gate_leave(void)
{
	pthread_mutex_lock(&gate_mu);
	participants--;
	pthread_cond_broadcast(&parked_cv);
	pthread_mutex_unlock(&gate_mu);
}

static void add_ms(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += ms * 1000000L;
	ts->tv_sec += ts->tv_nsec / 1000000000L;
	ts->tv_nsec %= 1000000000L;
}

bool gate_stop_the_world(bool (*fn)(void), unsigned pause_ms)
{
	bool ok = true;
	double t0 = stress_now();

	pthread_mutex_lock(&gate_mu);
	atomic_store(&gate_req, 1);
	while (parked < participants && !atomic_load(&S.failed)) {
		struct timespec ts;
		add_ms(&ts, 50);
		pthread_cond_timedwait(&parked_cv, &gate_mu, &ts);
		if (stress_now() - t0 > S.cfg.hang_s) {
			/* a worker that does not park is the watchdog's; an auxiliary thread is ours */
			stress_fail(NULL, "stop-the-world: %d of %d threads did not reach a safe point within %.0f s",
				    participants - parked, participants, S.cfg.hang_s);
			break;
		}
	}
	bool all = parked >= participants;
	pthread_mutex_unlock(&gate_mu);

	if (all && !atomic_load(&S.failed)) {
		if (fn) {
			ok = fn();
		} else {
			struct timespec ts = { 0, (long)pause_ms * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
	mm_cpu_detach(S.mm);
	pthread_mutex_lock(&gate_mu);
	atomic_store(&gate_req, 0);
	parked = 0;
	generation++;
	pthread_cond_broadcast(&release_cv);
	pthread_mutex_unlock(&gate_mu);
	return ok && all;
}

/* ---------------------------------------------------------------- watchdog */

void *watchdog_main(void *arg)
{
	(void)arg;
	int n = S.cfg.threads;
	unsigned long *last = calloc((size_t)n, sizeof(*last));
	double *since = calloc((size_t)n, sizeof(*since));
	if (!last || !since)
		return NULL;
	for (int i = 0; i < n; i++)
		since[i] = stress_now();
	while (!atomic_load(&S.aux_stop)) {
		struct timespec ts = { 0, 100 * 1000000L };
		nanosleep(&ts, NULL);
		double now = stress_now();
		for (int i = 0; i < n; i++) {
			struct worker *w = &S.w[i];
			unsigned long p = atomic_load_explicit(&w->progress, memory_order_relaxed);
			if (atomic_load(&w->state) != WS_RUNNING || p != last[i]) {
				last[i] = p;
				since[i] = now;
				continue;
			}
			if (now - since[i] < S.cfg.hang_s)
				continue;
			/*
			 * Hung: report from here and leave; the thread cannot be
			 * joined.  A hang is T1's (every loop in the allocator is
			 * bounded).  Main, if it reached the end first, owns it:
			 * then recording the failure is all there is to do here
			 * (main's join of this worker times out and reports it).
			 */
			double stuck_s = now - since[i];
			int cpu;
			const char *op = stress_last_op(w, &cpu);
			char msg[400];
			snprintf(msg, sizeof(msg), "T1 violated: hang: worker %d completed no operation for %.1f s "
				 "(--hang-timeout %g); its last logged op: %s on cpu %d", i, stuck_s, S.cfg.hang_s, op, cpu);
			static const char why[] = "hang: the stuck worker cannot be stopped or joined, and the "
				"deterministic driver has no wall-clock watchdog (rerun the free-running command; "
				"its op log shows where the worker stopped)";
			if (!stress_claim_end()) {
				if (stress_fail(w, "%s", msg))
					stress_replay_skip(why);   /* read by main after it joins us */
				break;
			}
			fflush(stdout);
			fprintf(stderr, "\nHANG: worker %d has not completed an operation for %.1f s "
				"(--hang-timeout %g): stuck in the allocator or waiting for a vCPU\n",
				i, stuck_s, S.cfg.hang_s);
			fprintf(stderr, "the stuck worker's last operations (newest last; the last one is "
				"where it hangs):\n");
			stress_print_oplog(stderr, w);
			if (stress_fail(w, "%s", msg))  /* else an earlier failure stays the one reported */
				stress_replay_skip(why);
			stress_measure_end();
			struct stress_totals t;
			stress_totals(&t);
			stress_finish(&t, "", false);
			_exit(1);
		}
	}
	free(last);
	free(since);
	return NULL;
}

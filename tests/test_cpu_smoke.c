/* SPDX-License-Identifier: MIT */
/*
 * test_cpu_smoke.c - the CPU model under real threads: N tasks over 2
 * vCPUs, migrated at random preemption points, interrupted from the hook
 * and by signals, one vCPU cycled offline/online, per-CPU counters updated
 * without locks, a spinlock-protected counter shared with the interrupt
 * handler, and pages allocated and freed (remotely too) in tasks and
 * interrupts.  Any break in vCPU exclusivity, in interrupt masking or in
 * the spinlock shows as a lost update in the final counts (and as a TSan
 * report: this test must be clean under the tsan build).
 *
 *   test_cpu_smoke [threads [ops-per-thread [seed]]]
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "mm/cpu.h"
#include "test.h"

#ifdef MM_TEST_HOOKS
static const bool hooks = true;
#else
static const bool hooks = false;
#endif

#define NR_VCPUS   2
#define MAX_THREADS 16
#define HELD_PAGES 8

struct pcpu {
	unsigned long task_ops;          /* tasks only, under preempt_disable */
	unsigned long shared;            /* tasks under local_irq_save, and the interrupt handler */
	unsigned long irq_ops;           /* the interrupt handler only */
} __attribute__((aligned(64)));

static struct mm *mm;
static struct pcpu percpu[NR_VCPUS];
static spinlock_t glock;
static unsigned long global_count;     /* under glock, irqsave */
static atomic_ulong nr_irqs, nr_irq_alloc_fail, total_ops;
static atomic_int start, stop_aux, running;
static unsigned long seed = 1;
static int nr_threads = 4;
static long nr_ops = 20000;
static pthread_t workers[MAX_THREADS];

static _Thread_local unsigned long rnd_state;
static unsigned long rnd(void)
{
	unsigned long x = rnd_state;     /* xorshift64 */
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rnd_state = x;
}

static void yield_wait(enum mm_wait_reason why, const void *what, void *ctx)
{
	(void)why; (void)what; (void)ctx;
	sched_yield();
}

/* The scheduler hook: shuffle tasks between vCPUs and inject interrupts. */
static void hook(struct mm *m, enum mm_pp point, void *ctx)
{
	(void)ctx; (void)point;
	if (!rnd_state)
		return;                      /* not a worker (the main or the hotplug thread) */
	unsigned long r = rnd();
	if ((r & 7) == 0)
		mm_migrate_current(m, MM_CPU_ANY);
	else if ((r & 7) == 1)
		mm_raise_irq(m);
}

static void irq_handler(struct mm *m, int cpu, void *ctx)
{
	(void)ctx;
	unsigned long flags;
	struct pcpu *p = per_cpu_ptr(percpu, cpu);
	p->irq_ops++;
	p->shared++;
	spin_lock_irqsave(&glock, flags);
	global_count++;
	spin_unlock_irqrestore(&glock, flags);
	struct page *pg = alloc_pages(m, GFP_ATOMIC, 0);
	if (pg)
		__free_pages(m, pg, 0);
	else
		atomic_fetch_add(&nr_irq_alloc_fail, 1);
	atomic_fetch_add(&nr_irqs, 1);
}

static void on_signal(int sig)
{
	(void)sig;
	mm_irq_from_signal();
}

/* Fast builds finish before the first signal lands: run on until a few did. */
static bool enough_signals(long op)
{
	struct mm_cpu_stats st;
	if (op & 255)
		return false;
	mm_cpu_get_stats(mm, -1, &st);
	return st.irqs_from_signal >= 4;
}

static void *worker(void *arg)
{
	long id = (long)arg;
	struct page *held[HELD_PAGES] = { 0 };
	unsigned int held_order[HELD_PAGES] = { 0 };
	unsigned long flags;
	long bad_t1 = 0;

	mm_set_wait_hook(yield_wait, NULL);
	while (!atomic_load(&start))
		sched_yield();
	rnd_state = seed * 0x9e3779b97f4a7c15UL + (unsigned long)id + 1;

	long op;
	for (op = 0; op < nr_ops || (op < 100 * nr_ops && !enough_signals(op)); op++) {
		/* 1. per-CPU, preemption off: a point in the middle may interrupt, never migrate */
		preempt_disable();
		struct pcpu *p = this_cpu_ptr(mm, percpu);
		unsigned long v = p->task_ops;
		mm_preempt_point(mm, MM_PP_USER);
		p->task_ops = v + 1;
		preempt_enable();

		/* 2. per-CPU shared with the interrupt handler: interrupts off */
		local_irq_save(flags);
		p = this_cpu_ptr(mm, percpu);
		v = p->shared;
		mm_preempt_point(mm, MM_PP_USER);
		p->shared = v + 1;
		local_irq_restore(flags);

		/* 3. a global counter under a spinlock the handler also takes */
		spin_lock_irqsave(&glock, flags);
		global_count++;
		spin_unlock_irqrestore(&glock, flags);

		/* 4. pages: allocated on one vCPU, often freed on another */
		int slot = (int)(rnd() % HELD_PAGES);
		if (held[slot]) {
			__free_pages(mm, held[slot], held_order[slot]);
			held[slot] = NULL;
		} else {
			/* order 0 only: __zone_watermark_ok's lockless free-list peek for
			 * order > 0 is a plain read TSan reports (page allocator, not here) */
			held_order[slot] = 0;
			held[slot] = alloc_pages(mm, GFP_KERNEL, held_order[slot]);
		}

		/* 5. between operations: T1, and now and then leave the vCPU to others */
		struct mm_violation viol;
		if ((op & 15) == 0 && !mm_check(mm, 1, &viol) && bad_t1++ == 0)
			fprintf(stderr, "worker %ld: %s\n", id, viol.msg);
		if ((op & 63) == 63) {
			mm_cpu_detach(mm);
			sched_yield();
		}
	}
	for (int i = 0; i < HELD_PAGES; i++)
		if (held[i])
			__free_pages(mm, held[i], held_order[i]);
	mm_cpu_detach(mm);
	atomic_fetch_add(&total_ops, (unsigned long)op);
	atomic_fetch_sub(&running, 1);
	return (void *)bad_t1;
}

/* Interrupts from outside: signals to random workers. */
static void *signaller(void *arg)
{
	(void)arg;
	unsigned long r = seed;
	while (!atomic_load(&stop_aux)) {
		r = r * 6364136223846793005UL + 1442695040888963407UL;
		pthread_kill(workers[(r >> 33) % (unsigned long)nr_threads], SIGUSR1);
		usleep(200);
	}
	return NULL;
}

/* onoff: vCPU 1 down and up again (the torture tests' onoff). */
static atomic_ulong onoff_cycles, onoff_errors;
static void *onoff(void *arg)
{
	(void)arg;
	mm_set_wait_hook(yield_wait, NULL);
	while (!atomic_load(&stop_aux)) {
		if (mm_cpu_offline(mm, 1) == 0) {
			usleep(500);
			if (mm_cpu_online(mm, 1))
				atomic_fetch_add(&onoff_errors, 1);
			atomic_fetch_add(&onoff_cycles, 1);
		}
		usleep(2000);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct mm_config c;
	pthread_t sig_th, onoff_th;

	if (MM_TSAN)           /* debug.h: 1 in a ThreadSanitizer build */
		nr_ops = 3000;
	if (argc > 1)
		nr_threads = atoi(argv[1]);
	if (argc > 2)
		nr_ops = atol(argv[2]);
	if (argc > 3)
		seed = strtoul(argv[3], NULL, 0);
	REQUIRE(nr_threads >= 1 && nr_threads <= MAX_THREADS && nr_ops > 0);
	printf("test_cpu_smoke %d %ld %lu (threads, ops per thread, seed)\n", nr_threads, nr_ops, seed);

	mm_config_tiny(&c);
	c.nr_cpus = NR_VCPUS;
	mm = test_create(&c);
	spin_lock_init(&glock);
	mm_set_sched_hook(mm, hook, NULL);
	mm_set_irq_handler(mm, irq_handler, NULL);
	mm_set_wait_hook(yield_wait, NULL);

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);

	atomic_store(&running, nr_threads);
	for (long i = 0; i < nr_threads; i++)
		REQUIRE(pthread_create(&workers[i], NULL, worker, (void *)i) == 0);
	REQUIRE(pthread_create(&sig_th, NULL, signaller, NULL) == 0);
	REQUIRE(pthread_create(&onoff_th, NULL, onoff, NULL) == 0);
	atomic_store(&start, 1);

	while (atomic_load(&running))     /* the aux threads stop once the workers are done */
		usleep(1000);
	atomic_store(&stop_aux, 1);
	pthread_join(sig_th, NULL);
	pthread_join(onoff_th, NULL);
	long bad_t1 = 0;
	for (int i = 0; i < nr_threads; i++) {
		void *ret;
		pthread_join(workers[i], &ret);
		bad_t1 += (long)ret;
	}

	unsigned long task_ops = 0, shared = 0, irq_ops = 0;
	for (int i = 0; i < NR_VCPUS; i++) {
		task_ops += percpu[i].task_ops;
		shared += percpu[i].shared;
		irq_ops += percpu[i].irq_ops;
	}
	unsigned long ops = atomic_load(&total_ops), irqs = atomic_load(&nr_irqs);
	CHECK(ops >= (unsigned long)nr_threads * (unsigned long)nr_ops);
	mm_cpu_print_stats(mm, stdout);
	printf("ops %lu, interrupts %lu, onoff cycles %lu\n", ops, irqs, atomic_load(&onoff_cycles));

	CHECK_MSG(task_ops == ops, "per-CPU task counter %lu, expected %lu: exclusivity broken", task_ops, ops);
	CHECK_MSG(irq_ops == irqs, "per-CPU irq counter %lu, expected %lu", irq_ops, irqs);
	CHECK_MSG(shared == ops + irqs, "per-CPU shared counter %lu, expected %lu: an interrupt "
		  "ran with irqs disabled", shared, ops + irqs);
	CHECK_MSG(global_count == ops + irqs, "spinlock counter %lu, expected %lu", global_count, ops + irqs);
	CHECK(bad_t1 == 0);
	CHECK(atomic_load(&onoff_errors) == 0);
	CHECK(atomic_load(&nr_irq_alloc_fail) == 0);
	for (int i = 0; i < NR_VCPUS; i++)
		CHECK_MSG(mm_cpu_holder(mm, i) == NULL, "vCPU %d still held", i);

	struct mm_cpu_stats st;
	mm_cpu_get_stats(mm, -1, &st);
	CHECK(st.irqs_delivered == irqs);
	CHECK(st.irqs_from_signal > 0);
	if (hooks) {
		/* vacuity: the injections fired */
		CHECK(st.migrations_in > 0 && st.migrations_in == st.migrations_out);
		CHECK(st.migrations_refused > 0);           /* the USER points inside preempt/irq-off sections */
		CHECK(st.pp_irq[MM_PP_USER] > 0);          /* interrupts inside preempt-off sections */
		CHECK(st.pp_hit[MM_PP_SPIN_UNLOCK] > 0 && st.pp_hit[MM_PP_IRQ_RESTORE] > 0);
	}
	CHECK_MM(mm, 3);
	mm_destroy(mm);
	TEST_DONE();
}

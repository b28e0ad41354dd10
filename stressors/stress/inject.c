/* SPDX-License-Identifier: MIT */
/*
 * inject.c - what the stressor does to the workers (issue 6, "Free-running
 * stressors"), each switchable from the command line:
 *
 *   migration   the scheduler hook, at preemption points where the worker
 *               is preemptible, moves it to another vCPU with probability
 *               1/--migrate-1in (the shuffle of the kernel's torture tests,
 *               at the finest grain the model has);
 *   interrupts  (a) signals: the signaller thread tgkill()s SIGUSR1 to a
 *               random running worker every --signal-us; the handler calls
 *               mm_irq_from_signal(), which runs the instance's handler on
 *               the worker's vCPU wherever it was (or leaves it pending if
 *               its interrupts are off); (b) the hook raises one at a point
 *               with probability 1/--irq-1in.  The handler allocates and
 *               frees pages, slab objects or kmalloc with GFP_ATOMIC into a
 *               per-vCPU pool;
 *   onoff       a thread takes a random vCPU offline and brings it back;
 *   control     a thread runs drain_all_pages, mm_pcp_update (high below
 *               batch too) and kmem_cache_shrink, which runs on each vCPU.
 *
 * Fast-path windows: the hook opens one at TID_READ (SLUB), PCP_BEFORE_LOCK
 * (pcp) and BULK, and closes it at AFTER_CMPXCHG, SLAB_SLOWPATH and the
 * unlock points; a signal interrupt that lands while one is open is counted
 * (sig_in_window).  Injections the hook makes are counted per point by the
 * CPU model (mm_cpu_get_stats: pp_migrate, pp_irq).
 *
 * Everything here that runs in a signal handler touches only the worker's
 * own fields, the vCPU's pool (exclusive: the handler runs on the vCPU the
 * thread holds) and atomics.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "stress.h"

_Thread_local struct worker *stress_self;

static void sleep_us(unsigned long us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };
	nanosleep(&ts, NULL);
}

static void yield_wait(enum mm_wait_reason why, const void *what, void *ctx)
{
	(void)why;
	(void)what;
	(void)ctx;
	sched_yield();
}

void stress_wait_hook_install(void)
{
	mm_set_wait_hook(yield_wait, NULL);
}

/* ---------------------------------------------------------------- the hook */

/*
 * Injection rates come in phases of a few hundred ops per worker: mostly
 * calm, sometimes a storm (a migration at one point in four).  A bug that
 * needs two migrations inside one fast path (tid read on A, the cpu area
 * of B, the cmpxchg back on A) is found in storms in well under a second;
 * calm phases keep the average cost low.  --migrate-1in / --irq-1in fix
 * the rates instead.
 */
static void new_phase(struct worker *w, unsigned long ops)
{
	static const unsigned mig[8] = { 4, 16, 32, 64, 64, 128, 256, 256 };
	static const unsigned irq[8] = { 8, 32, 64, 128, 128, 256, 512, 512 };
	uint64_t r = rng_next(&w->hook_rng);
	w->mig_1in = S.cfg.migrate_1in ? S.cfg.migrate_1in : mig[r & 7];
	w->irq_1in = S.cfg.irq_1in ? S.cfg.irq_1in : irq[(r >> 3) & 7];
	w->phase_end = ops + 256 + (r >> 8) % 1024;
}

/*
 * The tid contract (sched/tidwatch.h) on the vCPU the worker holds, at a
 * point where its pair must be committed: interrupts enabled, not in an
 * interrupt handler.  Only the vCPU's holder touches its entries.
 */
void stress_tid_check(struct worker *w, const char *where)
{
	char msg[400];
	int cpu;
	if (!S.cfg.tid_check || !S.ncaches || mm_irqs_disabled() || mm_in_interrupt() ||
	    (cpu = mm_cpu_current(S.mm)) < 0)
		return;
	STAT_INC(w->st.tid_checks);
	if (!tidwatch_observe(&S.tw, cpu, where, msg, sizeof(msg)))
		stress_fail(w, "%s", msg);
}

static void hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	struct worker *w = stress_self;
	(void)ctx;
	if (!w || mm_in_interrupt())
		return;
	stress_tid_check(w, mm_pp_name(point));
	switch (point) {
	case MM_PP_TID_READ:
	case MM_PP_PCP_BEFORE_LOCK:
	case MM_PP_BULK:
		w->win_open = 1;
		break;
	case MM_PP_AFTER_CMPXCHG:
	case MM_PP_SLAB_SLOWPATH:
	case MM_PP_SPIN_UNLOCK:
	case MM_PP_LOCAL_UNLOCK:
		w->win_open = 0;
		break;
	default:
		break;
	}
	uint64_t r = rng_next(&w->hook_rng);
	unsigned long ops = STAT(w->st.ops);
	if (ops >= w->phase_end)
		new_phase(w, ops);
	if (S.cfg.irq && r % w->irq_1in == 0) {
		if (!mm_irqs_disabled() && mm_raise_irq(mm))
			STAT_INC(w->st.hook_irqs);
	} else if (S.cfg.migrate && (r >> 32) % w->mig_1in == 0 && mm_preemptible()) {
		int before = mm_cpu_current(mm);
		int now = mm_migrate_current(mm, MM_CPU_ANY);
		if (now >= 0 && now != before)
			STAT_INC(w->st.hook_migrations);
	}
}

/* ---------------------------------------------------------------- the interrupt handler */

static void irq_alloc(struct worker *w, struct irq_pool *pool, struct alloc *a)
{
	uint64_t r = rng_next(&pool->rng);
	enum stress_mode m = S.cfg.mode;
	if (m == MODE_MIXED)
		m = (enum stress_mode)(r % 3 == 0 ? MODE_PCP : r % 3 == 1 ? MODE_SLUB : MODE_KMALLOC);
	else if (m == MODE_BULK)
		m = (r & 1) ? MODE_PCP : MODE_SLUB;
	r >>= 8;
	struct alloc n = { .tag = rng_next(&pool->rng) | 1 };
	unsigned long align = 8;
	switch (m) {
	case MODE_SLUB: {
		int ci = (int)(r % (uint64_t)S.ncaches);
		n.p = kmem_cache_alloc(S.caches[ci], GFP_ATOMIC);
		n.kind = AK_OBJ;
		n.cache = (uint8_t)ci;
		n.size = kmem_cache_size(S.caches[ci]);
		align = S.cache_align[ci];
		break;
	}
	case MODE_KMALLOC:
		n.size = (uint32_t)(1 + r % 1024);           /* never large */
		n.p = kmalloc(S.mm, n.size, GFP_ATOMIC);
		n.kind = AK_KMALLOC;
		break;
	default: {
		unsigned order = (r & 3) == 0 ? (unsigned)((r >> 2) % 4) : 0;
		n.page = alloc_pages(S.mm, GFP_ATOMIC | ((r >> 4) & 1 ? __GFP_MOVABLE : 0), order);
		n.p = n.page ? page_address(S.mm, n.page) : NULL;
		n.kind = AK_PAGE;
		n.order = (uint8_t)order;
		n.size = (uint32_t)(MM_PAGE_SIZE << order);
		align = MM_PAGE_SIZE << order;       /* a block: aligned to its order */
		break;
	}
	}
	if (!n.p) {
		STAT_INC(pool->fails);
		return;
	}
	STAT_INC(pool->allocs);
	*a = n;
	shadow_take(w, a, false, align, MAX_NR_ZONES);
}

/*
 * kmem_cache_alloc_bulk from an interrupt (networking does it from
 * softirq): it takes objects off the cpu freelist that the interrupted
 * fast path may have just read - the tid must say so.  Kept in the pool
 * where there is room, so a duplicate handed to the interrupted task
 * clashes in the bitmaps; the rest go back with kmem_cache_free_bulk.
 */
static void irq_bulk(struct worker *w, struct irq_pool *pool)
{
	uint64_t r = rng_next(&pool->rng);
	int ci = (int)(r % (uint64_t)S.ncaches);
	size_t n = 1 + (r >> 8) % 8, nfree = 0;
	void *p[8];
	if (!kmem_cache_alloc_bulk(S.caches[ci], GFP_ATOMIC, n, p)) {
		STAT_INC(pool->fails);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct alloc a = { .p = p[i], .tag = rng_next(&pool->rng) | 1, .size = kmem_cache_size(S.caches[ci]),
				   .kind = AK_OBJ, .cache = (uint8_t)ci };
		STAT_INC(pool->allocs);
		if (!shadow_take(w, &a, false, S.cache_align[ci], MAX_NR_ZONES))
			return;
		struct alloc *slot = NULL;
		for (int j = 0, k = (int)((r >> 16) % STRESS_IRQ_POOL); j < STRESS_IRQ_POOL && !slot; j++)
			if (pool->a[(k + j) % STRESS_IRQ_POOL].kind == AK_NONE)
				slot = &pool->a[(k + j) % STRESS_IRQ_POOL];
		if (slot) {
			*slot = a;
		} else {
			if (!shadow_give(w, &a))
				return;
			p[nfree++] = p[i];
		}
	}
	if (nfree) {
		kmem_cache_free_bulk(S.caches[ci], nfree, p);
		STAT_ADD(pool->frees, nfree);
	}
}

/* Runs on vCPU @cpu with interrupts off, on top of whatever its holder was doing. */
static void irq_handler(struct mm *mm, int cpu, void *ctx)
{
	struct irq_pool *pool = &S.pools[cpu];
	struct worker *w = stress_self;
	(void)mm;
	(void)ctx;
	STAT_INC(pool->runs);
	if (w && w->in_alloc)
		STAT_INC(pool->nested_in_alloc);
	if (atomic_load_explicit(&S.failed, memory_order_relaxed))
		return;
	if (S.ncaches && (rng_next(&pool->rng) & 3) == 0)
		irq_bulk(w, pool);
	for (int k = 0; k < 2; k++) {
		struct alloc *a = &pool->a[rng_below(&pool->rng, STRESS_IRQ_POOL)];
		if (a->kind == AK_NONE) {
			irq_alloc(w, pool, a);
			continue;
		}
		if (!shadow_give(w, a))
			return;
		alloc_free_raw(a);
		a->kind = AK_NONE;
		STAT_INC(pool->frees);
	}
}

static void on_sigusr1(int sig)
{
	int saved_errno = errno;
	struct worker *w = stress_self;
	(void)sig;
	int in_window = w ? w->win_open : 0, in_alloc = w ? w->in_alloc : 0;
	if (mm_irq_from_signal() && w) {
		if (in_window)
			STAT_INC(w->st.sig_in_window);
		if (in_alloc)
			STAT_INC(w->st.sig_in_alloc);
		else
			STAT_INC(w->st.sig_outside);
	}
	errno = saved_errno;
}

int inject_setup(void)
{
	for (int c = 0; c < S.cfg.cpus; c++)
		S.pools[c].rng = rng_seed_for(S.cfg.seed, 2000 + (uint64_t)c);
	if (S.cfg.irq)
		mm_set_irq_handler(S.mm, irq_handler, NULL);
	if (S.cfg.irq || S.cfg.migrate)
		mm_set_sched_hook(S.mm, hook, NULL);
	else
		mm_set_sched_hook(S.mm, NULL, NULL);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr1;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	return sigaction(SIGUSR1, &sa, NULL);
}

void inject_irq_enable(bool on)
{
	mm_set_irq_handler(S.mm, on ? irq_handler : NULL, NULL);
}

void inject_quiesce(void)
{
	mm_set_sched_hook(S.mm, NULL, NULL);
	mm_set_irq_handler(S.mm, NULL, NULL);
}

void irq_pools_release(void)
{
	for (int c = 0; c < S.cfg.cpus; c++)
		for (int j = 0; j < STRESS_IRQ_POOL; j++) {
			struct alloc *a = &S.pools[c].a[j];
			if (a->kind == AK_NONE)
				continue;
			if (shadow_give(NULL, a))
				alloc_free_raw(a);
			a->kind = AK_NONE;
		}
}

/* ---------------------------------------------------------------- signaller */

void *signaller_main(void *arg)
{
	(void)arg;
	uint64_t rng = rng_seed_for(S.cfg.seed, 1000);
	pid_t pid = getpid();
	while (!atomic_load(&S.aux_stop)) {
		/*
		 * Wait first, then signal: the first signal comes one interval
		 * after the start, however late this thread is scheduled (a
		 * send-first loop fired at once when the workers were already
		 * running, which made --selftest vacuous flaky on a loaded
		 * machine).
		 */
		for (unsigned long left = S.cfg.signal_us; left && !atomic_load(&S.aux_stop);) {
			unsigned long step = left < 10000 ? left : 10000;   /* stay responsive to the end */
			sleep_us(step);
			left -= step;
		}
		if (atomic_load(&S.aux_stop))
			break;
		if (!gate_requested()) {
			struct worker *w = &S.w[rng_below(&rng, (uint64_t)S.cfg.threads)];
			if (atomic_load(&w->state) == WS_RUNNING) {
				syscall(SYS_tgkill, pid, atomic_load(&w->tid), SIGUSR1);
				atomic_fetch_add_explicit(&S.signals_sent, 1, memory_order_relaxed);
			}
		}
	}
	return NULL;
}

/* ---------------------------------------------------------------- onoff */

/*
 * CPU offline/online cycles.  Each offline is made either from a control
 * vCPU (the dead callbacks' frees land on its pcp, as in the kernel) or from
 * a thread that holds none, by a coin flip per cycle (--onoff-detached:
 * always the latter); cycles overlap kmem_cache_shrink and drains freely.
 * Waiters on the sleeping locks (cpus_read_lock, the hotplug write lock,
 * slab_mutex) give their vCPU up as the kernel's sleep (cpu/vcpu.c,
 * "Sleeping locks"; tests/test_cpu_sleeping_locks.c shows the three
 * deadlocks a model without that had).
 */

void *onoff_main(void *arg)
{
	(void)arg;
	uint64_t rng = rng_seed_for(S.cfg.seed, 1001);
	stress_wait_hook_install();
	gate_start_wait();
	while (!atomic_load(&S.aux_stop) && !atomic_load(&S.stop)) {
		gate_poll(NULL);
		int c = (int)rng_below(&rng, (uint64_t)S.cfg.cpus);
		if (mm_num_online_cpus(S.mm) > 1) {
			bool detached = S.cfg.onoff_detached || (rng_next(&rng) & 1);
			if (!detached)
				mm_cpu_attach(S.mm, (c + 1 + (int)rng_below(&rng, (uint64_t)S.cfg.cpus - 1)) % S.cfg.cpus);
			int rc = mm_cpu_offline(S.mm, c);
			mm_cpu_detach(S.mm);
			if (rc == 0) {
				sleep_us(200 + rng_below(&rng, 800));
				rc = mm_cpu_online(S.mm, c);
				if (rc)
					atomic_fetch_add(&S.onoff_errors, 1);
				else
					atomic_fetch_add(&S.onoff_cycles, 1);
			} else if (rc != -EBUSY) {
				atomic_fetch_add(&S.onoff_errors, 1);
			}
		}
		sleep_us(1000 + rng_below(&rng, 3000));
	}
	for (int c = 0; c < S.cfg.cpus; c++)
		mm_cpu_online(S.mm, c);
	gate_leave();
	return NULL;
}

/* ---------------------------------------------------------------- control */

static struct kmem_cache *shrink_target(uint64_t r)
{
	bool kmalloc_caches = S.cfg.mode == MODE_KMALLOC || S.cfg.mode == MODE_MIXED;
	if (S.ncaches && (!kmalloc_caches || (r & 1)))
		return S.caches[(r >> 1) % (uint64_t)S.ncaches];
	if (kmalloc_caches)
		return kmalloc_slab(S.mm, (size_t)1 << (3 + (r >> 1) % 11), GFP_KERNEL);
	return NULL;
}

void *control_main(void *arg)
{
	(void)arg;
	uint64_t rng = rng_seed_for(S.cfg.seed, 1002);
	bool slab = S.cfg.mode != MODE_PAGES && S.cfg.mode != MODE_PCP;
	stress_wait_hook_install();
	gate_start_wait();
	while (!atomic_load(&S.aux_stop) && !atomic_load(&S.stop)) {
		gate_poll(NULL);
		uint64_t r = rng_next(&rng);
		unsigned what = (unsigned)(r % 10);
		r >>= 8;
		if (what < 4 || (what >= 8 && !slab)) {
			drain_all_pages(S.mm, NULL);
			atomic_fetch_add(&S.drains, 1);
		} else if (what == 4) {
			drain_all_pages(S.mm, mm_zone(S.mm, (enum zone_type)(r % MAX_NR_ZONES)));
			atomic_fetch_add(&S.drains, 1);
		} else if (what < 8) {
			/* high below batch too: free_pcppages_bulk must clamp to the count */
			unsigned high = (unsigned)(r % 96), batch = 1 + (unsigned)((r >> 8) % 31);
			if ((r >> 16) % 8 == 0)
				high = batch = 0;              /* back to the boot values */
			mm_pcp_update(S.mm, high, batch);
			atomic_fetch_add(&S.pcp_updates, 1);
		} else {
			struct kmem_cache *s = shrink_target(r);
			if (s) {
				kmem_cache_shrink(s);
				mm_cpu_detach(S.mm);
				atomic_fetch_add(&S.shrinks, 1);
			}
		}
		mm_cpu_detach(S.mm);
		sleep_us(500 + rng_below(&rng, 1500));
	}
	mm_pcp_update(S.mm, 0, 0);
	mm_cpu_detach(S.mm);
	gate_leave();
	return NULL;
}

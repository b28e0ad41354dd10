/* SPDX-License-Identifier: MIT */
/*
 * test_pcp_irq.c - the pcp and bulk paths with what may interleave with
 * them on one vCPU (DESIGN.md, "CPUs, preemption and interrupts"):
 *
 *  1. one thread, interrupts raised by the scheduler hook at every
 *     preemption point where they are enabled (inside the pcp critical
 *     section too: the handler's trylock fails and it uses the buddy), and
 *     migrations wherever the task is preemptible; the handler allocates
 *     and frees pages of every pcp order with GFP_ATOMIC and keeps a few
 *     across interrupts.  Checker clean throughout, vacuity counters > 0.
 *  2. threads = vCPUs: cross-vCPU frees through rings, a control thread
 *     running drain_all_pages and high/batch updates, migrations at points,
 *     CPU offline/online; everything returned at the end.  Run under the
 *     tsan and asan presets by ./mmfuzz test.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "internal.h"
#include "page/pcp.h"
#include "test.h"

static _Thread_local unsigned long long rng_state = 88172645463325252ULL;
static unsigned long rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned long)rng_state;
}

/* ---------------------------------------------------------------- 1 */

#define IRQ_POOL 16
struct irq_ctx {
	struct page *pool[IRQ_POOL];
	unsigned int pool_order[IRQ_POOL];
	unsigned long runs, allocs;
	unsigned long in_pcp_locked;     /* handler runs that found this vCPU's pcp locked */
};

static void irq_handler(struct mm *mm, int cpu, void *ctx)
{
	struct irq_ctx *c = ctx;
	c->runs++;
	/* An interrupt must run on the vCPU it interrupted, with irqs off. */
	CHECK(irqs_disabled() && in_interrupt() && raw_smp_processor_id(mm) == cpu);
	for (int i = 0; i < 3; i++) {
		int slot = (int)(rnd() % IRQ_POOL);
		if (c->pool[slot]) {
			__free_pages(mm, c->pool[slot], c->pool_order[slot]);
			c->pool[slot] = NULL;
		} else {
			unsigned int order = (unsigned)(rnd() % 4);
			c->pool[slot] = alloc_pages(mm, GFP_ATOMIC, order);
			c->pool_order[slot] = order;
			c->allocs += c->pool[slot] != NULL;
		}
	}
}

struct hook_ctx {
	unsigned long irqs, migrations;
};

static void chaos_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	struct hook_ctx *h = ctx;
	unsigned long r = rnd();
	if (r % 3 == 0 && mm_raise_irq(mm))
		h->irqs++;
	if (r % 7 == 1 && preemptible() && mm_migrate_current(mm, MM_CPU_ANY) >= 0)
		h->migrations++;
	(void)point;
}

static void test_single_thread_injection(void)
{
	struct mm_config c;
	mm_config_default(&c);
	c.nr_cpus = 3;
	c.pcp_batch = 4;
	c.pcp_high = 24;
	struct mm *mm = test_create(&c);
	struct irq_ctx ic;
	struct hook_ctx hc = { 0 };
	memset(&ic, 0, sizeof(ic));
	mm_set_irq_handler(mm, irq_handler, &ic);
	mm_set_sched_hook(mm, chaos_hook, &hc);

	enum { N = 256 };
	struct page *held[N] = { 0 };
	unsigned int order[N] = { 0 };
	for (int op = 0; op < 6000; op++) {
		int i = (int)(rnd() % N);
		unsigned long r = rnd() % 100;
		if (r < 70) {
			if (held[i]) {
				__free_pages(mm, held[i], order[i]);
				held[i] = NULL;
			} else {
				order[i] = (unsigned)(rnd() % 4);
				held[i] = alloc_pages(mm, GFP_KERNEL, order[i]);
			}
		} else if (r < 85) {
			struct page *arr[32] = { 0 };
			unsigned long n = alloc_pages_bulk_array(mm, GFP_KERNEL, 1 + rnd() % 32, arr);
			CHECK(n >= 1);
			release_pages(mm, arr, 32);
		} else if (r < 92) {
			drain_local_pages(mm, NULL);
		} else if (r < 97) {
			drain_all_pages(mm, NULL);
		} else {
			mm_pcp_update(mm, (unsigned)(rnd() % 40), (unsigned)(1 + rnd() % 8));
		}
		if (op % 500 == 0)
			CHECK_MM(mm, 3);
		else
			CHECK_MM(mm, 1);
	}
	mm_set_sched_hook(mm, NULL, NULL);
	mm_set_irq_handler(mm, NULL, NULL);
	for (int i = 0; i < N; i++)
		if (held[i])
			__free_pages(mm, held[i], order[i]);
	for (int i = 0; i < IRQ_POOL; i++)
		if (ic.pool[i])
			__free_pages(mm, ic.pool[i], ic.pool_order[i]);
	drain_all_pages(mm, NULL);
	CHECK_MM(mm, 3);
	CHECK(mm_vm_event(mm, PGALLOC) == mm_vm_event(mm, PGFREE));

	/* Vacuity: the injections really landed inside the pcp paths. */
	struct mm_cpu_stats st;
	REQUIRE(mm_cpu_get_stats(mm, -1, &st) == 0);
#ifdef MM_TEST_HOOKS
	CHECK_MSG(st.pp_irq[MM_PP_PCP_LOCKED] > 0, "no interrupt inside a pcp critical section");
	CHECK_MSG(st.pp_irq[MM_PP_PCP_BEFORE_LOCK] > 0, "no interrupt between choosing and locking the pcp");
	CHECK_MSG(st.pp_irq[MM_PP_BULK] > 0, "no interrupt inside the bulk allocator");
	CHECK_MSG(hc.migrations > 100, "only %lu migrations", hc.migrations);
	CHECK(ic.runs > 100 && ic.allocs > 50);
#endif
	mm_destroy(mm);
}

/* ---------------------------------------------------------------- 2 */

#define RING 64
struct ring {
	_Atomic(struct page *) slot[RING];
	atomic_uint head, tail;   /* single producer, single consumer */
};

static bool ring_push(struct ring *r, struct page *p)
{
	unsigned int h = atomic_load_explicit(&r->head, memory_order_relaxed);
	if (h - atomic_load_explicit(&r->tail, memory_order_acquire) == RING)
		return false;
	atomic_store_explicit(&r->slot[h % RING], p, memory_order_relaxed);
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
	return true;
}

static struct page *ring_pop(struct ring *r)
{
	unsigned int t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	if (t == atomic_load_explicit(&r->head, memory_order_acquire))
		return NULL;
	struct page *p = atomic_load_explicit(&r->slot[t % RING], memory_order_relaxed);
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	return p;
}

#define NTHREADS 3
static struct mm *smm;
static struct ring rings[NTHREADS];   /* thread i produces into rings[i], thread i+1 consumes */
static atomic_int stop, started;
static atomic_ulong remote_frees;

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	rng_state += (unsigned long long)id * 7919 + 1;
	struct page *mine[64] = { 0 };
	int ops = MM_TSAN ? 3000 : 20000;

	REQUIRE(mm_cpu_attach(smm, id) == id);
	atomic_fetch_add(&started, 1);
	while (atomic_load(&started) < NTHREADS)
		cpu_relax();
	/*
	 * The quota, then on until the remote-free path has run, up to 50
	 * quotas: at -O2 beside another ctest job a worker can finish its quota
	 * inside one timeslice, before the next one ever pops its ring (clang-
	 * release failed the remote_frees check below 5 times in 60 so).
	 */
	for (int op = 0; op < 50 * ops && (op < ops || atomic_load(&remote_frees) <= 100); op++) {
		int i = (int)(rnd() % 64);
		if (mine[i]) {
			if (rnd() % 2 && ring_push(&rings[id], mine[i]))
				mine[i] = NULL;   /* the next thread frees it, on its own vCPU */
			else {
				__free_pages(smm, mine[i], 0);
				mine[i] = NULL;
			}
		} else {
			mine[i] = alloc_pages(smm, GFP_KERNEL, 0);
		}
		struct page *p = ring_pop(&rings[(id + NTHREADS - 1) % NTHREADS]);
		if (p) {
			memset(page_address(smm, p), 0x5a, 64);   /* still ours to touch */
			__free_pages(smm, p, 0);
			atomic_fetch_add(&remote_frees, 1);
		}
		if (op % 256 == 0) {
			struct page *arr[16] = { 0 };
			alloc_pages_bulk_array(smm, GFP_KERNEL, 16, arr);
			release_pages(smm, arr, 16);
		}
		struct mm_violation v;
		if (!mm_check(smm, 1, &v)) {
			fprintf(stderr, "thread %d op %d: %s\n", id, op, v.msg);
			CHECK(false);
			break;
		}
	}
	for (int i = 0; i < 64; i++)
		if (mine[i])
			__free_pages(smm, mine[i], 0);
	mm_cpu_detach(smm);
	return NULL;
}

static void *control(void *arg)
{
	(void)arg;
	unsigned long n = 0;
	while (!atomic_load(&stop)) {
		drain_all_pages(smm, NULL);
		mm_pcp_update(smm, (unsigned)(rnd() % 64), (unsigned)(1 + rnd() % 16));
		if (++n % 16 == 0) {
			/* A vCPU no worker holds goes off and on line: its lists are drained. */
			mm_cpu_offline(smm, NTHREADS);
			mm_cpu_online(smm, NTHREADS);
		}
	}
	return NULL;
}

static void migrate_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	(void)point;
	(void)ctx;
	/* The spare vCPU (NTHREADS) lets workers move; they come back on detach. */
	if (rnd() % 64 == 0 && preemptible())
		mm_migrate_current(mm, MM_CPU_ANY);
}

static void test_threads(void)
{
	struct mm_config c;
	mm_config_default(&c);
	c.nr_cpus = NTHREADS + 1;
	c.pcp_batch = 8;
	c.pcp_high = 48;
	smm = test_create(&c);
	unsigned long free0 = 0;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (mm_zone(smm, z))
			free0 += (unsigned long)zone_free_pages(mm_zone(smm, z));
	mm_set_sched_hook(smm, migrate_hook, NULL);

	pthread_t th[NTHREADS], ctl;
	for (long i = 0; i < NTHREADS; i++)
		REQUIRE(pthread_create(&th[i], NULL, worker, (void *)i) == 0);
	REQUIRE(pthread_create(&ctl, NULL, control, NULL) == 0);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(th[i], NULL);
	atomic_store(&stop, 1);
	pthread_join(ctl, NULL);
	mm_set_sched_hook(smm, NULL, NULL);

	/* Pages still in the rings are freed here; then everything is back. */
	for (int i = 0; i < NTHREADS; i++) {
		struct page *p;
		while ((p = ring_pop(&rings[i])))
			__free_pages(smm, p, 0);
	}
	drain_all_pages(smm, NULL);
	CHECK_MM(smm, 3);
	unsigned long free1 = 0;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (mm_zone(smm, z))
			free1 += (unsigned long)zone_free_pages(mm_zone(smm, z));
	CHECK_MSG(free1 == free0, "free pages %lu after, %lu at creation", free1, free0);
	CHECK(mm_vm_event(smm, PGALLOC) == mm_vm_event(smm, PGFREE));
	CHECK(atomic_load(&remote_frees) > 100);
	mm_destroy(smm);
}

int main(void)
{
	test_single_thread_injection();
	test_threads();
	TEST_DONE();
}

/* SPDX-License-Identifier: MIT */
/*
 * test_slub_mt.c - SLUB under real concurrency: threads on (fewer) vCPUs
 * allocate from two caches and kmalloc (small, bulk and large), fill each
 * object with a pattern and hand it to another thread, which checks the
 * pattern and frees it - a remote free from another vCPU, and sometimes
 * through kfree() although it came from a cache.  Interrupts arrive from
 * signals and allocate and free in the middle of whatever runs; one thread
 * shrinks a cache now and then (flushing every vCPU by running on it).
 * Every thread runs the level-2 checker as it goes; at the end everything
 * is freed, the level-3 checker must be clean and every cache must count
 * zero live objects.  The caches start with their freelist random
 * sequences not yet made, so the first slabs race to make them.  Clean
 * under TSan and ASan.
 *
 *   test_slub_mt [threads] [vcpus] [ops per thread] [seed]
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "mm/mm.h"
#include "mm/cpu.h"
#include "mm/slab.h"
#include "debug.h"        /* MM_TSAN */
#include "slab/slab.h"   /* struct slub_random_seq */
#include "test.h"


#define MAX_THREADS 16
#define RING 512

enum kind { K_A, K_B, K_KMALLOC, K_LARGE, NR_KINDS };

struct item {
	unsigned char *p;
	unsigned int size;
	unsigned int seed;
	enum kind kind;
};

struct ring {
	pthread_mutex_t lock;
	struct item it[RING];
	int head, count;
};

static struct mm *mm;
static struct kmem_cache *cache_a, *cache_b;
static struct ring rings[MAX_THREADS];
static int nr_threads = 4, nr_vcpus = 3;
static long nr_ops = 60000;
static unsigned long seed = 1;
static pthread_barrier_t start;
static atomic_int stop_irqs;
static atomic_long allocated, freed, bad_pattern, check_failed, irq_runs, irq_fail;
static pthread_t workers[MAX_THREADS];

static unsigned long xorshift(unsigned long *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void fill(unsigned char *p, unsigned int size, unsigned int s)
{
	unsigned int n = size < 64 ? size : 64;
	for (unsigned int i = 0; i < n; i++)
		p[i] = (unsigned char)(s + i * 31);
	p[size - 1] = (unsigned char)(s ^ 0x5a);
}

static bool intact(const unsigned char *p, unsigned int size, unsigned int s)
{
	unsigned int n = size < 64 ? size : 64;
	for (unsigned int i = 0; i + 1 < n; i++)
		if (p[i] != (unsigned char)(s + i * 31))
			return false;
	return p[size - 1] == (unsigned char)(s ^ 0x5a);
}

static bool push(int to, struct item it)
{
	struct ring *r = &rings[to];
	bool ok = false;
	pthread_mutex_lock(&r->lock);
	if (r->count < RING) {
		r->it[(r->head + r->count) % RING] = it;
		r->count++;
		ok = true;
	}
	pthread_mutex_unlock(&r->lock);
	return ok;
}

static bool pop(int from, struct item *it)
{
	struct ring *r = &rings[from];
	bool ok = false;
	pthread_mutex_lock(&r->lock);
	if (r->count) {
		*it = r->it[r->head];
		r->head = (r->head + 1) % RING;
		r->count--;
		ok = true;
	}
	pthread_mutex_unlock(&r->lock);
	return ok;
}

static void release(struct item *it, unsigned long r)
{
	if (!intact(it->p, it->size, it->seed))
		atomic_fetch_add(&bad_pattern, 1);
	switch (it->kind) {
	case K_A:
		if (r & 1)
			kmem_cache_free(cache_a, it->p);
		else
			kfree(mm, it->p);                    /* kfree of a cache object */
		break;
	case K_B:
		kmem_cache_free(cache_b, it->p);
		break;
	default:
		kfree(mm, it->p);
	}
	atomic_fetch_add(&freed, 1);
}

static void *worker(void *arg)
{
	int me = (int)(intptr_t)arg;
	unsigned long x = seed * 2654435761UL + (unsigned long)me * 97 + 1;
	struct mm_violation v;

	pthread_barrier_wait(&start);
	for (long op = 0; op < nr_ops; op++) {
		unsigned long r = xorshift(&x);
		struct item it;

		if ((r & 3) != 0) {
			/* produce */
			it.kind = (enum kind)((r >> 2) % NR_KINDS);
			if (it.kind == K_LARGE && (r >> 8) % 16)
				it.kind = K_KMALLOC;             /* large ones are rare */
			it.seed = (unsigned int)(r >> 20);
			switch (it.kind) {
			case K_A:
				if ((r >> 9) % 8 == 0) {
					void *b[8];
					if (kmem_cache_alloc_bulk(cache_a, GFP_KERNEL, 8, b) == 8) {
						for (int k = 0; k < 8; k++) {
							struct item e = { b[k], 64, it.seed + (unsigned)k, K_A };
							fill(e.p, e.size, e.seed);
							atomic_fetch_add(&allocated, 1);
							if (!push((int)(((r >> 12) + (unsigned long)k) % (unsigned long)nr_threads), e))
								release(&e, r);
						}
					}
					continue;
				}
				it.size = 64;
				it.p = kmem_cache_alloc(cache_a, GFP_KERNEL);
				break;
			case K_B:
				it.size = 200;
				it.p = kmem_cache_alloc(cache_b, GFP_KERNEL);
				break;
			case K_KMALLOC:
				it.size = 1 + (unsigned int)((r >> 24) % 3000);
				it.p = kmalloc(mm, it.size, GFP_KERNEL);
				break;
			default:
				it.size = 9000 + (unsigned int)((r >> 24) % 30000);
				it.p = kmalloc(mm, it.size, GFP_KERNEL);
				break;
			}
			if (!it.p)
				continue;
			fill(it.p, it.size, it.seed);
			atomic_fetch_add(&allocated, 1);
			if (!push((int)((r >> 12) % (unsigned long)nr_threads), it))
				release(&it, r);
		} else if (pop(me, &it)) {
			release(&it, r);
		}

		if (op % 64 == 63)
			mm_cpu_detach(mm);              /* let other threads (and flushes) have the vCPU */
		if (op % 2000 == 1999 && !mm_check(mm, 2, &v)) {
			if (atomic_fetch_add(&check_failed, 1) == 0)
				fprintf(stderr, "thread %d: mm_check level 2: %s\n", me, v.msg);
		}
		if (me == 0 && op % 5000 == 4999)
			kmem_cache_shrink(cache_a);
	}
	mm_cpu_detach(mm);
	return NULL;
}

/* ---- interrupts ---- */

static void irq_handler(struct mm *m, int cpu, void *ctx)
{
	static _Thread_local unsigned long x = 88172645463325252UL;
	(void)cpu;
	(void)ctx;
	unsigned long r = xorshift(&x);
	unsigned int size = 1 + (unsigned int)(r % 700);
	unsigned char *p = (r & 256) ? kmem_cache_alloc(cache_b, GFP_ATOMIC) : kmalloc(m, size, GFP_ATOMIC);
	if (!p) {
		atomic_fetch_add(&irq_fail, 1);
		return;
	}
	if (r & 256)
		size = 200;
	fill(p, size, (unsigned int)r);
	if (!intact(p, size, (unsigned int)r))
		atomic_fetch_add(&bad_pattern, 1);
	if (r & 256)
		kmem_cache_free(cache_b, p);
	else
		kfree(m, p);
	atomic_fetch_add(&irq_runs, 1);
}

static void on_sigusr1(int sig)
{
	(void)sig;
	mm_irq_from_signal();
}

static void *irq_thread(void *arg)
{
	unsigned long x = seed + 12345;
	(void)arg;
	while (!atomic_load(&stop_irqs)) {
		pthread_kill(workers[xorshift(&x) % (unsigned long)nr_threads], SIGUSR1);
		usleep(50);
	}
	return NULL;
}

/*
 * A caller that finds another making the sequence waits for it: made here
 * first, then marked "being made" again; the waiter must not return
 * before it reads "made".
 */
static atomic_int seq_waiter_done;

static void *seq_waiter(void *arg)
{
	const unsigned int *q = slub_cache_random_seq(arg);
	atomic_store(&seq_waiter_done, 1);
	return (void *)(uintptr_t)q;
}

static void seq_wait_check(struct slub_random_seq *rs)
{
	pthread_t w;
	void *got;

	REQUIRE(rs && atomic_load(&rs->state) == 0);
	const unsigned int *seq = slub_cache_random_seq(rs);
	CHECK(atomic_load(&rs->state) == 2 && seq == rs->seq);
	atomic_store(&rs->state, 1);                    /* as if another vCPU were making it */
	REQUIRE(pthread_create(&w, NULL, seq_waiter, rs) == 0);
	usleep(20000);
	CHECK_MSG(!atomic_load(&seq_waiter_done), "slub_cache_random_seq() returned while the sequence was being made");
	atomic_store(&rs->state, 2);
	pthread_join(w, &got);
	CHECK(atomic_load(&seq_waiter_done) && got == (void *)(uintptr_t)seq);
}

int main(int argc, char **argv)
{
	struct mm_config c;
	pthread_t irq;

	if (argc > 1) nr_threads = atoi(argv[1]);
	if (argc > 2) nr_vcpus = atoi(argv[2]);
	if (argc > 3) nr_ops = atol(argv[3]);
	if (argc > 4) seed = strtoul(argv[4], NULL, 0);
#if MM_TSAN
	if (argc <= 3)
		nr_ops /= 6;                            /* shrink under TSan (STYLE rule 14) */
#endif
	if (nr_threads < 2 || nr_threads > MAX_THREADS || nr_vcpus < 1 || nr_vcpus > 64) {
		fprintf(stderr, "usage: %s [threads 2..%d] [vcpus] [ops] [seed]\n", argv[0], MAX_THREADS);
		return 2;
	}
	printf("test_slub_mt %d %d %ld %lu\n", nr_threads, nr_vcpus, nr_ops, seed);

	mm_config_default(&c);
	c.nr_cpus = (unsigned)nr_vcpus;
	c.quiet = false;
	mm = test_create(&c);
	cache_a = kmem_cache_create(mm, "mt-64", 64, 0, 0, NULL);
	cache_b = kmem_cache_create(mm, "mt-200", 200, 0, SLAB_HWCACHE_ALIGN, NULL);
	REQUIRE(cache_a && cache_b);
	/*
	 * Options that relayout every cache leave each new layout's random
	 * sequence to be made on first use (struct slub_random_seq): the
	 * workers' first slabs race to make it.
	 */
	char err[160];
	REQUIRE(mm_slub_configure(mm, "slab_freelist_random=1", err, sizeof(err)) == 0);
	REQUIRE(cache_a->random_seq && atomic_load(&cache_a->random_seq->state) == 0);
	seq_wait_check(cache_b->random_seq);
	for (int i = 0; i < nr_threads; i++)
		pthread_mutex_init(&rings[i].lock, NULL);

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr1;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	REQUIRE(sigaction(SIGUSR1, &sa, NULL) == 0);
	mm_set_irq_handler(mm, irq_handler, NULL);

	pthread_barrier_init(&start, NULL, (unsigned)nr_threads + 1);
	for (int i = 0; i < nr_threads; i++)
		REQUIRE(pthread_create(&workers[i], NULL, worker, (void *)(intptr_t)i) == 0);
	REQUIRE(pthread_create(&irq, NULL, irq_thread, NULL) == 0);
	pthread_barrier_wait(&start);
	for (int i = 0; i < nr_threads; i++)
		pthread_join(workers[i], NULL);
	atomic_store(&stop_irqs, 1);
	pthread_join(irq, NULL);
	mm_set_irq_handler(mm, NULL, NULL);

	/* drain what is still in flight */
	for (int i = 0; i < nr_threads; i++) {
		struct item it;
		while (pop(i, &it))
			release(&it, 0);
	}
	CHECK_MM(mm, 3);
	struct mm_cpu_stats st;
	mm_cpu_get_stats(mm, -1, &st);
	printf("allocated %ld freed %ld; interrupts %ld (failed allocations %ld); migrations %lu\n",
	       atomic_load(&allocated), atomic_load(&freed), atomic_load(&irq_runs), atomic_load(&irq_fail),
	       st.migrations_in);
	CHECK(atomic_load(&allocated) == atomic_load(&freed));
	CHECK(atomic_load(&allocated) > nr_ops / 2);
	CHECK(atomic_load(&bad_pattern) == 0);
	CHECK(atomic_load(&check_failed) == 0);
	CHECK(mm_nr_reports(mm) == 0);
	for (struct kmem_cache *s = kmem_cache_next(mm, NULL); s; s = kmem_cache_next(mm, s)) {
		struct kmem_cache_info i;
		kmem_cache_get_info(s, &i);
		if (i.nr_live >= 0)
			CHECK_MSG(i.nr_live == 0, "%s: %ld objects live after the drain", i.name, i.nr_live);
	}
	CHECK(kmem_cache_shrink(cache_a) == 0);
	CHECK(kmem_cache_shrink(cache_b) == 0);
	kmem_cache_destroy(cache_a);
	kmem_cache_destroy(cache_b);
	CHECK(mm_nr_reports(mm) == 0);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
	TEST_DONE();
}

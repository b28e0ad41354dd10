/* SPDX-License-Identifier: MIT */
/*
 * test_zoo_slub_tid.c - the tid contract of SLUB's lockless fast path, as
 * seen from the vCPU itself.
 *
 * A tid names one vCPU and one moment of its freelist (fastpath.c, "The
 * lockless protocol"): a fast path that read tid T commits its cmpxchg only
 * if {freelist, tid} is still {what it read, T}.  That is safe only if every
 * change of c->freelist that anything else on the vCPU can see comes with a
 * new tid - a change published under an old tid lets a fast path that read
 * that tid earlier commit against a freelist it never saw.  What "anything
 * else on the vCPU" can see is the pair at the moments where it could run:
 * every preemption point where interrupts are enabled (an interrupt handler
 * runs there; a preempted fast path may resume there).
 *
 * So the test watches each vCPU's pair at every such point, and after every
 * operation, while a seeded mix of fast-path allocs and frees, bulk allocs
 * larger than the cpu freelist (the bulk path empties it and goes to the
 * slow path: "mm: slub: add missing TID bump in kmem_cache_alloc_bulk()",
 * 2020), bulk frees, shrinks, interrupts whose handler allocates and frees,
 * and migrations runs on one cache.  The check: a (vCPU, tid) seen once
 * with freelist F is never seen with another freelist.  Each violation
 * names the point and both freelists.  The run ends with mm_check level 3.
 *
 * This is the observable side of the bug zoo's slub-bulk-no-tid-bump: in
 * the model (Linux 6.6 slow path, which bumps the tid itself before it can
 * be preempted) the missing bump never becomes a double allocation, but the
 * freelist the bulk path emptied is visible under the old tid to an
 * interrupt at the local_unlock before ___slab_alloc().
 */
#include <stdint.h>
#include <string.h>

#include "mm/cpu.h"
#include "mm/mm.h"
#include "mm/slab.h"
#include "slab/slab.h"
#include "test.h"

#define NCPUS 2
#define TABLE (1u << 16)         /* (cpu, tid) -> freelist, open addressing */
#define HELD 256

struct seen {
	unsigned long tid;          /* 0: empty slot (tids start at the vCPU number, + TID_STEP) */
	int cpu;
	void *freelist;
};

static struct {
	struct kmem_cache *s;
	struct seen tab[TABLE];
	unsigned long observations;
	unsigned long violations;
	uint64_t rng;
	unsigned int irq_permille, migrate_permille;
	void *irq_obj[8];           /* the handler's objects, kept between interrupts */
	int nirq;
} w;

static uint64_t rnd(void)
{
	w.rng ^= w.rng << 13;
	w.rng ^= w.rng >> 7;
	w.rng ^= w.rng << 17;
	return w.rng;
}

/* Record vCPU @cpu's pair; report if its tid was seen before with another freelist. */
static void observe(int cpu, const char *where)
{
	struct kmem_cache_cpu *c = slub_cpu(w.s, cpu);
	unsigned long tid = c_tid(c);
	void *fl = c_freelist(c);
	unsigned int h = (unsigned int)((tid * 0x9e3779b97f4a7c15ULL) >> 48) & (TABLE - 1);

	w.observations++;
	for (unsigned int k = 0; k < TABLE; k++, h = (h + 1) & (TABLE - 1)) {
		struct seen *e = &w.tab[h];
		if (e->tid == 0) {
			e->tid = tid + 1;   /* stored + 1: tid 0 of vCPU 0 is a real tid */
			e->cpu = cpu;
			e->freelist = fl;
			return;
		}
		if (e->tid == tid + 1 && e->cpu == cpu) {
			if (e->freelist != fl) {
				if (w.violations++ < 5)
					CHECK_MSG(e->freelist == fl,
						  "vCPU %d tid %#lx named freelist %p and, at %s, freelist %p: the "
						  "freelist changed without a tid change, so a fast path that read "
						  "this tid can commit against a freelist it never saw",
						  cpu, tid, e->freelist, where, fl);
				e->freelist = fl;
			}
			return;
		}
	}
	REQUIRE(!"tid table full");
}

static void irq(struct mm *mm, int cpu, void *ctx)
{
	(void)mm; (void)cpu; (void)ctx;
	/* GFP_ATOMIC work: allocate one, free one, now and then a small bulk */
	if (w.nirq < 8 && (rnd() & 1)) {
		void *p = kmem_cache_alloc(w.s, GFP_ATOMIC);
		if (p)
			w.irq_obj[w.nirq++] = p;
	} else if (w.nirq) {
		kmem_cache_free(w.s, w.irq_obj[--w.nirq]);
	}
}

static void hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	(void)ctx;
	if (mm_irqs_disabled() || mm_in_interrupt())
		return;
	int cpu = mm_cpu_current(mm);
	if (cpu < 0)
		return;
	/* The pair must be a committed state here: something else may run now. */
	observe(cpu, mm_pp_name(point));
	if (rnd() % 1000 < w.irq_permille)
		mm_raise_irq(mm);
	else if (rnd() % 1000 < w.migrate_permille)
		mm_migrate_current(mm, MM_CPU_ANY);
}

static void run(uint64_t seed, int ops)
{
	char err[256];
	struct mm_config cfg;
	void *held[HELD];
	int nheld = 0;

	memset(&w, 0, sizeof(w));
	w.rng = seed;
	w.irq_permille = 30;
	w.migrate_permille = 30;
	mm_config_default(&cfg);
	cfg.quiet = true;
	cfg.nr_cpus = NCPUS;
	struct mm *mm = mm_create(&cfg, err, sizeof(err));
	REQUIRE(mm);
	w.s = kmem_cache_create(mm, "zoo-tid", 64, 0, 0, NULL);
	REQUIRE(w.s);
	struct kmem_cache_info info;
	kmem_cache_get_info(w.s, &info);
	unsigned int per_slab = info.objects_per_slab ? info.objects_per_slab : 32;
	REQUIRE(mm_cpu_attach(mm, 0) == 0);
	mm_set_irq_handler(mm, irq, NULL);
	mm_set_sched_hook(mm, hook, NULL);

	for (int op = 0; op < ops; op++) {
		unsigned int r = (unsigned int)(rnd() % 100);
		if (r < 35 && nheld < HELD) {
			void *p = kmem_cache_alloc(w.s, GFP_KERNEL);
			REQUIRE(p);
			held[nheld++] = p;
		} else if (r < 65 && nheld) {
			unsigned int i = (unsigned int)(rnd() % (unsigned int)nheld);
			kmem_cache_free(w.s, held[i]);
			held[i] = held[--nheld];
		} else if (r < 85) {
			/* more than one slab's worth at times: the cpu freelist runs dry mid-bulk */
			size_t n = 1 + (size_t)(rnd() % (2 * per_slab));
			if (n > (size_t)(HELD - nheld))
				n = (size_t)(HELD - nheld);
			if (n && kmem_cache_alloc_bulk(w.s, GFP_KERNEL, n, held + nheld) == (int)n)
				nheld += (int)n;
		} else if (r < 97 && nheld) {
			size_t n = 1 + (size_t)(rnd() % (unsigned int)nheld);
			kmem_cache_free_bulk(w.s, n, held + nheld - n);
			nheld -= (int)n;
		} else if (r >= 97) {
			kmem_cache_shrink(w.s);
		}
		int cpu = mm_cpu_current(mm);
		if (cpu >= 0)
			observe(cpu, "end of an operation");
	}
	mm_set_sched_hook(mm, NULL, NULL);
	mm_set_irq_handler(mm, NULL, NULL);
	kmem_cache_free_bulk(w.s, (size_t)nheld, held);
	while (w.nirq)
		kmem_cache_free(w.s, w.irq_obj[--w.nirq]);
	CHECK_MM(mm, 3);
	printf("seed %#llx: %d ops, %lu observations, %lu violations\n", (unsigned long long)seed, ops,
	       w.observations, w.violations);
	CHECK(w.violations == 0);
#ifdef MM_TEST_HOOKS
	CHECK(w.observations > (unsigned long)ops);   /* the points really ran */
#endif
	kmem_cache_destroy(w.s);
	mm_destroy(mm);
}

int main(void)
{
	run(0x9e3779b97f4a7c15ULL, 20000);
	run(0x2545f4914f6cdd1dULL, 20000);
	TEST_DONE();
}

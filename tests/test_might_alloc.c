/* SPDX-License-Identifier: MIT */
/*
 * test_might_alloc.c - might_alloc() on every allocation entry (6.6's
 * prepare_alloc_pages() and slab_pre_alloc_hook()): at MM_DEBUG >= 2 a
 * gfp that may block (__GFP_DIRECT_RECLAIM: GFP_KERNEL) from where the
 * task may not sleep - an interrupt handler, preemption disabled - is
 * CONFIG_DEBUG_ATOMIC_SLEEP's "sleeping function called from invalid
 * context", an mm_bug, even while memory is plentiful and the request
 * never reaches reclaim.  Atomic gfps stay allowed there, and a blocking
 * gfp in task context.  Below MM_DEBUG 2 nothing is checked: the same
 * calls succeed.  From helper-51's review
 * (bench/results/reviews-6.6/boot-cpu.md F5): before, only reclaim's
 * sleeping locks noticed, so a GFP_KERNEL allocation in an interrupt
 * handler went unreported.
 */
#include <signal.h>
#include <sys/wait.h>

#include "internal.h"
#include "mm/slab.h"
#include "test.h"

static struct mm *mm;
static struct kmem_cache *cache;
static gfp_t irq_gfp;
static int irq_what;                   /* 0: alloc_pages, 1: kmem_cache_alloc */
static bool irq_ok;

static void handler(struct mm *m, int cpu, void *ctx)
{
	(void)cpu;
	(void)ctx;
	if (irq_what == 0) {
		struct page *p = alloc_pages(m, irq_gfp, 0);
		irq_ok = p != NULL;
		if (p)
			__free_pages(m, p, 0);
	} else {
		void *o = kmem_cache_alloc(cache, irq_gfp);
		irq_ok = o != NULL;
		if (o)
			kmem_cache_free(cache, o);
	}
}

static bool in_irq(int what, gfp_t gfp)
{
	irq_what = what;
	irq_gfp = gfp;
	irq_ok = false;
	REQUIRE(mm_raise_irq(mm));
	return irq_ok;
}

static void pages_in_irq(void) { (void)in_irq(0, GFP_KERNEL); }
static void object_in_irq(void) { (void)in_irq(1, GFP_KERNEL); }

static void pages_preempt_off(void)
{
	preempt_disable();
	struct page *p = alloc_pages(mm, GFP_KERNEL, 2);
	if (p)
		__free_pages(mm, p, 2);
	preempt_enable();
}

static void bulk_pages_preempt_off(void)
{
	struct page *arr[8] = { 0 };
	preempt_disable();
	unsigned long n = alloc_pages_bulk_array(mm, GFP_KERNEL, 8, arr);
	for (unsigned long i = 0; i < n; i++)
		__free_pages(mm, arr[i], 0);
	preempt_enable();
}

static void bulk_objects_preempt_off(void)
{
	void *o[8];
	preempt_disable();
	int n = kmem_cache_alloc_bulk(cache, GFP_KERNEL, 8, o);
	if (n)
		kmem_cache_free_bulk(cache, (size_t)n, o);
	preempt_enable();
}

int main(void)
{
	struct mm_config c;
	mm_config_default(&c);
	c.nr_cpus = 2;
	c.quiet = true;
	mm = test_create(&c);
	cache = kmem_cache_create(mm, "might_alloc", 96, 0, 0, NULL);
	REQUIRE(cache);
	mm_cpu_attach(mm, 0);
	mm_set_irq_handler(mm, handler, NULL);

	static const struct {
		const char *what;
		void (*fn)(void);
	} bad[] = {
		{ "alloc_pages(GFP_KERNEL) in an interrupt handler", pages_in_irq },
		{ "kmem_cache_alloc(GFP_KERNEL) in an interrupt handler", object_in_irq },
		{ "alloc_pages(GFP_KERNEL, 2) with preemption disabled", pages_preempt_off },
		{ "alloc_pages_bulk_array(GFP_KERNEL) with preemption disabled", bulk_pages_preempt_off },
		{ "kmem_cache_alloc_bulk(GFP_KERNEL) with preemption disabled", bulk_objects_preempt_off },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		bool aborts = test_aborts(bad[i].fn);
		if (MM_DEBUG >= 2)
			CHECK_MSG(aborts, "%s: not reported", bad[i].what);
		else
			CHECK_MSG(!aborts, "%s: reported at MM_DEBUG %d", bad[i].what, MM_DEBUG);
	}

	/* What may happen there: atomic gfps in the handler and with preemption off. */
	CHECK_MSG(in_irq(0, GFP_ATOMIC), "alloc_pages(GFP_ATOMIC) in an interrupt handler failed");
	CHECK_MSG(in_irq(1, GFP_ATOMIC), "kmem_cache_alloc(GFP_ATOMIC) in an interrupt handler failed");
	preempt_disable();
	struct page *p = alloc_pages(mm, GFP_NOWAIT, 2);
	void *o[4];
	int n = kmem_cache_alloc_bulk(cache, GFP_NOWAIT, 4, o);
	preempt_enable();
	CHECK(p && n == 4);
	/* And a blocking gfp in task context, preemptible. */
	struct page *q = alloc_pages(mm, GFP_KERNEL, 0);
	void *k = kmem_cache_alloc(cache, GFP_KERNEL);
	CHECK(q && k);
	__free_pages(mm, p, 2);
	__free_pages(mm, q, 0);
	kmem_cache_free_bulk(cache, (size_t)n, o);
	kmem_cache_free(cache, k);

	mm_set_irq_handler(mm, NULL, NULL);
	drain_all_pages(mm, NULL);
	CHECK_MM(mm, 3);
	mm_cpu_detach(mm);
	kmem_cache_destroy(cache);
	mm_destroy(mm);
	TEST_DONE();
}

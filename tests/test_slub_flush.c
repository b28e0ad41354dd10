/* SPDX-License-Identifier: MIT */
/*
 * test_slub_flush.c - the tid of a flushed vCPU.  In 6.6, flush_slab()
 * and __flush_cpu_slab() advance c->tid whether or not the vCPU had a cpu
 * slab: a flush is an event on the cpu area, and a fast path that read the
 * tid before it must not commit after it.  The remote flush
 * (__flush_cpu_slab(): a dead vCPU, slub_cpu_dead()) is the one a test can
 * reach without a cpu slab: offline a vCPU that never used the cache.
 */
#include "internal.h"
#include "slab/slab.h"
#include "mm/cpu.h"
#include "mm/slab.h"
#include "test.h"
#include "slub_test.h"

static void test_dead_cpu_tid(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "flush-tid", 64, 0, 0, NULL);
	REQUIRE(s);
	REQUIRE(mm->cfg.nr_cpus >= 2);

	/* vCPU 1 never touched the cache: no cpu slab, no cpu partial slabs */
	unsigned long before = c_tid(slub_cpu(s, 1));
	CHECK(!c_slab(slub_cpu(s, 1)));
	REQUIRE(mm_cpu_offline(mm, 1) == 0);
	CHECK_MSG(c_tid(slub_cpu(s, 1)) == next_tid(before), "tid %#lx -> %#lx: not advanced once by the flush",
		  before, c_tid(slub_cpu(s, 1)));
	REQUIRE(mm_cpu_online(mm, 1) == 0);

	/* with a cpu slab it advances too (this passed before as well) */
	REQUIRE(mm_cpu_attach(mm, 1) == 1);
	void *o = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(o);
	kmem_cache_free(s, o);
	mm_cpu_detach(mm);
	before = c_tid(slub_cpu(s, 1));
	CHECK(c_slab(slub_cpu(s, 1)));
	REQUIRE(mm_cpu_offline(mm, 1) == 0);
	CHECK(c_tid(slub_cpu(s, 1)) == next_tid(before));
	CHECK(!c_slab(slub_cpu(s, 1)));
	REQUIRE(mm_cpu_online(mm, 1) == 0);

	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);
	CHECK(mm_nr_reports(mm) == 0);
	mm_destroy(mm);
}

int main(void)
{
	test_dead_cpu_tid();
	TEST_DONE();
}

/* SPDX-License-Identifier: MIT */
/*
 * test_slub_node_partial.c - the node partial list of a cache with cpu
 * partial lists, as __slab_free() of Linux 6.6 keeps it:
 *
 *  - a free into a full slab freezes it onto the vCPU's partial list;
 *    when that list already holds cpu_partial_slabs slabs, put_cpu_partial()
 *    first drains it all to the node partial list (unfrozen);
 *  - a free that empties an unfrozen slab on the node partial list takes
 *    list_lock and, if the node then has at least min_partial partial
 *    slabs (this one counted), takes it off the list and discards it
 *    (free_remove_partial, free_slab); otherwise the empty slab stays
 *    listed for later allocations.
 *
 * The mutation audit found the second half reached by no test: a mutant
 * that never took the lock for an emptying free (so never discarded)
 * survived every detector (bench/results/mutants, free.c:230).
 */
#include "slub_test.h"
#include "test.h"

#define SIZE 64
#define NR_SLABS 14

static void info_of(struct kmem_cache *s, struct kmem_cache_info *info)
{
	REQUIRE(kmem_cache_get_info(s, info) == 0);
}

int main(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "node-partial", SIZE, 0, 0, NULL);
	REQUIRE(s);
	struct kmem_cache_info info;
	info_of(s, &info);
	REQUIRE_MSG(info.cpu_partial_slabs > 0, "cache %s has no cpu partial lists", info.name);
	REQUIRE(info.min_partial > 0);

	const unsigned int per = info.objects_per_slab;
	const unsigned int n = per * NR_SLABS;
	void **obj = calloc(n, sizeof(*obj));
	REQUIRE(obj);

	/* Fill NR_SLABS slabs, one after the other on this vCPU: objects
	 * [k * per, (k + 1) * per) come from slab k. */
	for (unsigned int i = 0; i < n; i++)
		REQUIRE((obj[i] = kmem_cache_alloc(s, GFP_KERNEL)));
	info_of(s, &info);
	REQUIRE_MSG(info.nr_slabs == NR_SLABS, "%lu slabs for %u full slabs of objects", info.nr_slabs, NR_SLABS);
	CHECK_MSG(info.nr_partial == 0, "%lu partial slabs with every slab full", info.nr_partial);

	/* One free into each full slab but the last (the cpu slab): each is
	 * frozen onto the cpu partial list, which drains to the node whenever
	 * it is full.  The slabs drained are the first ones freed into. */
	for (unsigned int k = 0; k + 1 < NR_SLABS; k++) {
		kmem_cache_free(s, obj[k * per]);
		obj[k * per] = NULL;
	}
	info_of(s, &info);
	unsigned int cpu_partial = info.cpu_partial_slabs;
	/* put_cpu_partial(): a list of cpu_partial_slabs goes to the node when
	 * the next slab arrives, so after m puts the node holds
	 * cpu_partial * ((m - 1) / cpu_partial) of them. */
	unsigned int drained = cpu_partial * ((NR_SLABS - 1 - 1) / cpu_partial);
	REQUIRE_MSG(drained > info.min_partial,
		    "the test needs more than min_partial %u slabs drained to the node (cpu_partial_slabs %u)",
		    info.min_partial, cpu_partial);
	CHECK_MSG(info.nr_partial == drained, "node partial list: %lu slabs, expected %u (cpu_partial_slabs %u)",
		  info.nr_partial, drained, cpu_partial);

	/* Empty the drained slabs one at a time, in order.  Each emptying
	 * free is a slow-path free into an unfrozen node-partial slab. */
	unsigned long stat_before[NR_SLUB_STAT_ITEMS], stat_after[NR_SLUB_STAT_ITEMS];
	bool stats = kmem_cache_get_stats(s, stat_before);
	unsigned int discarded = 0, kept = 0;
	for (unsigned int k = 0; k < drained; k++) {
		struct kmem_cache_info before;
		info_of(s, &before);
		for (unsigned int i = k * per + 1; i < (k + 1) * per; i++) {
			kmem_cache_free(s, obj[i]);
			obj[i] = NULL;
		}
		info_of(s, &info);
		if (before.nr_partial >= before.min_partial) {
			/* slab_empty: off the node list and back to the page allocator */
			CHECK_MSG(info.nr_partial == before.nr_partial - 1 && info.nr_slabs == before.nr_slabs - 1,
				  "slab %u emptied with %lu node partial slabs (min_partial %u): now %lu partial, "
				  "%lu slabs (was %lu); expected it discarded",
				  k, before.nr_partial, before.min_partial, info.nr_partial, info.nr_slabs,
				  before.nr_slabs);
			discarded++;
		} else {
			/* Below min_partial: the empty slab stays listed. */
			CHECK_MSG(info.nr_partial == before.nr_partial && info.nr_slabs == before.nr_slabs,
				  "slab %u emptied with %lu node partial slabs (min_partial %u): now %lu partial, "
				  "%lu slabs (was %lu); expected it kept on the list",
				  k, before.nr_partial, before.min_partial, info.nr_partial, info.nr_slabs,
				  before.nr_slabs);
			kept++;
		}
		CHECK_MM(mm, 3);
	}
	CHECK(discarded == drained - (info.min_partial - 1));
	CHECK(kept == info.min_partial - 1);
	if (stats) {
		REQUIRE(kmem_cache_get_stats(s, stat_after));
		CHECK_MSG(stat_after[FREE_SLAB] - stat_before[FREE_SLAB] == discarded, "free_slab +%lu, %u discarded",
			  stat_after[FREE_SLAB] - stat_before[FREE_SLAB], discarded);
		CHECK_MSG(stat_after[FREE_REMOVE_PARTIAL] - stat_before[FREE_REMOVE_PARTIAL] == discarded,
			  "free_remove_partial +%lu, %u discarded",
			  stat_after[FREE_REMOVE_PARTIAL] - stat_before[FREE_REMOVE_PARTIAL], discarded);
		CHECK(stat_after[FREE_FASTPATH] == stat_before[FREE_FASTPATH]);
	}

	/* The rest: everything freed, the kept empty slabs shrunk away. */
	for (unsigned int i = 0; i < n; i++)
		if (obj[i])
			kmem_cache_free(s, obj[i]);
	free(obj);
	kmem_cache_shrink(s);
	info_of(s, &info);
	CHECK_MSG(info.nr_live == 0 || info.nr_live == -1, "%ld objects live after freeing all", info.nr_live);
	CHECK_MSG(info.nr_partial == 0, "%lu partial slabs left after shrink", info.nr_partial);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);
	CHECK(mm_nr_reports(mm) == 0);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
	TEST_DONE();
}

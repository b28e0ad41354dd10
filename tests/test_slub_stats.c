/* SPDX-License-Identifier: MIT */
/*
 * test_slub_stats.c - what CONFIG_SLUB_STATS counts for the bulk calls,
 * as Linux 6.6 counts it: do_slab_free() adds one free_fastpath per call,
 * however many objects its detached freelist holds, and
 * __kmem_cache_alloc_bulk() counts nothing for the objects it pops off the
 * cpu freelist (only ___slab_alloc() counts its own, as alloc_slowpath).
 * The model before counted one per object in both.  Also: the cpu partial
 * slabs kmem_cache_get_info() reports, and a debug cache's free into a full
 * slab counted as free_add_partial, a remote free into another vCPU's cpu
 * slab counted as free_frozen, and a cpu partial slab put there by a free
 * and taken by the slow path once the full cpu slab is dropped
 * (cpu_partial_free, deactivate_bypass, cpu_partial_alloc), a full cpu
 * slab flushed (deactivate_full), and a flush from outside as a vCPU goes
 * offline (cpuslab_flush), slabs taken from the node partial list
 * (alloc_from_partial, cpu_partial_node) - the mutation audit found these
 * unchecked.  A build with SLUB_STATS must say so (it once skipped).
 */
#include "mm/cpu.h"
#include "slab/slab.h"                  /* SLUB_STATS: whether this build counts */
#include "slub_test.h"
#include "test.h"

#define BULK 8

static void snapshot(struct kmem_cache *s, unsigned long st[NR_SLUB_STAT_ITEMS])
{
	REQUIRE(kmem_cache_get_stats(s, st));
}

static long delta(struct kmem_cache *s, const unsigned long before[NR_SLUB_STAT_ITEMS], enum slub_stat_item i)
{
	unsigned long now[NR_SLUB_STAT_ITEMS];
	snapshot(s, now);
	return (long)(now[i] - before[i]);
}

int main(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "stats64", 64, 0, 0, NULL);
	REQUIRE(s);
	unsigned long st[NR_SLUB_STAT_ITEMS];
	CHECK_MSG(!kmem_cache_get_stats(NULL, st), "statistics of no cache");
#ifndef SLUB_STATS
	CHECK(!kmem_cache_get_stats(s, st));
	kmem_cache_destroy(s);
	mm_destroy(mm);
	TEST_SKIP("SLUB statistics are compiled out of this build (MM_DEBUG 0, no test hooks)");
#endif
	REQUIRE_MSG(kmem_cache_get_stats(s, st), "SLUB_STATS is compiled in, yet kmem_cache_get_stats() says no");
	struct kmem_cache_info info;
	REQUIRE(kmem_cache_get_info(s, &info) == 0);
	REQUIRE(info.objects_per_slab > BULK + 1);

	/* Warm the cpu slab: one object in and out through the fast path. */
	void *w = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(w);
	kmem_cache_free(s, w);

	/* Single calls: one count each. */
	snapshot(s, st);
	void *one = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(one);
	CHECK(delta(s, st, ALLOC_FASTPATH) == 1);
	kmem_cache_free(s, one);
	CHECK(delta(s, st, FREE_FASTPATH) == 1);

	/* A bulk allocation served by the cpu freelist counts nothing. */
	void *p[4 * BULK];
	snapshot(s, st);
	REQUIRE(kmem_cache_alloc_bulk(s, GFP_KERNEL, BULK, p) == BULK);
	CHECK_MSG(delta(s, st, ALLOC_FASTPATH) == 0, "alloc_fastpath +%ld", delta(s, st, ALLOC_FASTPATH));
	CHECK(delta(s, st, ALLOC_SLOWPATH) == 0);

	/* Their bulk free: one detached freelist (all on the cpu slab), one do_slab_free(), one count. */
	snapshot(s, st);
	kmem_cache_free_bulk(s, BULK, p);
	CHECK_MSG(delta(s, st, FREE_FASTPATH) == 1, "free_fastpath +%ld", delta(s, st, FREE_FASTPATH));
	CHECK(delta(s, st, FREE_SLOWPATH) == 0);

	/* A bulk allocation past the cpu slab: only its trips to ___slab_alloc() count. */
	unsigned int n = info.objects_per_slab + BULK;
	void **q = calloc(n, sizeof(*q));
	REQUIRE(q);
	snapshot(s, st);
	REQUIRE(kmem_cache_alloc_bulk(s, GFP_KERNEL, n, q) == (int)n);
	CHECK(delta(s, st, ALLOC_FASTPATH) == 0);
	CHECK(delta(s, st, ALLOC_SLOWPATH) >= 1 && delta(s, st, ALLOC_SLOWPATH) <= 2);
	kmem_cache_free_bulk(s, n, q);
	free(q);

	/* A free from another vCPU into this vCPU's cpu slab: the slab is
	 * frozen, its owner deals with the lists - one free_slowpath, one
	 * free_frozen, nothing else. */
	void *r = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(r);
	int home = mm_cpu_current(mm);
	REQUIRE(home >= 0);
	int away = home == 0 ? 1 : 0;
	REQUIRE(mm_cpu_attach(mm, away) == away);
	snapshot(s, st);
	kmem_cache_free(s, r);
	CHECK_MSG(delta(s, st, FREE_FROZEN) == 1, "free_frozen +%ld", delta(s, st, FREE_FROZEN));
	CHECK(delta(s, st, FREE_SLOWPATH) == 1 && delta(s, st, FREE_FASTPATH) == 0);
	CHECK(delta(s, st, CPU_PARTIAL_FREE) == 0 && delta(s, st, FREE_ADD_PARTIAL) == 0);
	REQUIRE(mm_cpu_attach(mm, home) == home);

	/* A free into a full slab freezes it onto the cpu partial list
	 * (cpu_partial_free); once the cpu slab is used up, the slow path
	 * takes it from there (cpu_partial_alloc). */
	struct kmem_cache *pc = kmem_cache_create(mm, "stats-partial", 64, 0, 0, NULL);
	REQUIRE(pc);
	REQUIRE(kmem_cache_get_info(pc, &info) == 0);
	unsigned int two = 2 * info.objects_per_slab;
	void **full2 = calloc(two, sizeof(*full2));
	REQUIRE(full2);
	for (unsigned int i = 0; i < two; i++)
		REQUIRE((full2[i] = kmem_cache_alloc(pc, GFP_KERNEL)));
	snapshot(pc, st);
	kmem_cache_free(pc, full2[0]);                 /* the first slab: full until now */
	CHECK_MSG(delta(pc, st, CPU_PARTIAL_FREE) == 1, "cpu_partial_free +%ld", delta(pc, st, CPU_PARTIAL_FREE));
	snapshot(pc, st);
	full2[0] = kmem_cache_alloc(pc, GFP_KERNEL);    /* the cpu slab is full: from the partial list */
	REQUIRE(full2[0]);
	CHECK_MSG(delta(pc, st, CPU_PARTIAL_ALLOC) == 1, "cpu_partial_alloc +%ld", delta(pc, st, CPU_PARTIAL_ALLOC));
	/* the full cpu slab it left was forgotten, not deactivated */
	CHECK_MSG(delta(pc, st, DEACTIVATE_BYPASS) == 1, "deactivate_bypass +%ld", delta(pc, st, DEACTIVATE_BYPASS));
	CHECK(delta(pc, st, ALLOC_SLOWPATH) == 1 && delta(pc, st, ALLOC_SLAB) == 0);
	kmem_cache_free_bulk(pc, two, full2);
	free(full2);
	kmem_cache_destroy(pc);

	/* Slabs on the node partial list (each with one object back, flushed
	 * there by kmem_cache_shrink()): with no cpu slab, the slow path
	 * takes one from the node (get_partial_node()): alloc_from_partial,
	 * and the next ones onto the cpu partial list (cpu_partial_node). */
	struct kmem_cache *nc = kmem_cache_create(mm, "stats-node", 64, 0, 0, NULL);
	REQUIRE(nc);
	REQUIRE(kmem_cache_get_info(nc, &info) == 0);
	unsigned int three = 3 * info.objects_per_slab;
	void **full3 = calloc(three, sizeof(*full3));
	REQUIRE(full3);
	for (unsigned int i = 0; i < three; i++)
		REQUIRE((full3[i] = kmem_cache_alloc(nc, GFP_KERNEL)));
	for (unsigned int i = 0; i < three; i += info.objects_per_slab) {
		kmem_cache_free(nc, full3[i]);
		full3[i] = NULL;
	}
	kmem_cache_shrink(nc);
	REQUIRE(kmem_cache_get_info(nc, &info) == 0);
	REQUIRE_MSG(info.nr_partial == 3, "%lu slabs on the node partial list, want 3", (unsigned long)info.nr_partial);
	snapshot(nc, st);
	void *from_node = kmem_cache_alloc(nc, GFP_KERNEL);
	REQUIRE(from_node);
	CHECK_MSG(delta(nc, st, ALLOC_FROM_PARTIAL) == 1, "alloc_from_partial +%ld", delta(nc, st, ALLOC_FROM_PARTIAL));
	CHECK(delta(nc, st, ALLOC_SLOWPATH) == 1 && delta(nc, st, ALLOC_SLAB) == 0);
	CHECK_MSG(delta(nc, st, CPU_PARTIAL_NODE) == 2, "cpu_partial_node +%ld", delta(nc, st, CPU_PARTIAL_NODE));
	kmem_cache_free(nc, from_node);
	for (unsigned int i = 0; i < three; i++)
		if (full3[i])
			kmem_cache_free(nc, full3[i]);
	free(full3);
	kmem_cache_destroy(nc);

	/* A cpu slab whose every object is out, flushed by kmem_cache_shrink():
	 * deactivate_slab() has no free object to put back, so the slab goes
	 * on no list - counted as deactivate_full, with one cpuslab_flush. */
	struct kmem_cache *fc = kmem_cache_create(mm, "stats-full", 64, 0, 0, NULL);
	REQUIRE(fc);
	REQUIRE(kmem_cache_get_info(fc, &info) == 0);
	void **one_slab = calloc(info.objects_per_slab, sizeof(*one_slab));
	REQUIRE(one_slab);
	for (unsigned int i = 0; i < info.objects_per_slab; i++)
		REQUIRE((one_slab[i] = kmem_cache_alloc(fc, GFP_KERNEL)));
	snapshot(fc, st);
	CHECK(kmem_cache_shrink(fc) == 1);          /* a slab is left: its objects are out */
	CHECK_MSG(delta(fc, st, DEACTIVATE_FULL) == 1, "deactivate_full +%ld", delta(fc, st, DEACTIVATE_FULL));
	CHECK_MSG(delta(fc, st, CPUSLAB_FLUSH) == 1, "cpuslab_flush +%ld", delta(fc, st, CPUSLAB_FLUSH));
	CHECK(delta(fc, st, DEACTIVATE_EMPTY) == 0 && delta(fc, st, DEACTIVATE_TO_HEAD) == 0 &&
	      delta(fc, st, DEACTIVATE_TO_TAIL) == 0);
	kmem_cache_free_bulk(fc, info.objects_per_slab, one_slab);
	free(one_slab);
	kmem_cache_destroy(fc);

	/* Offlining a vCPU flushes its cpu slab from outside (slub_cpu_dead()'s
	 * __flush_cpu_slab()): one cpuslab_flush too. */
	struct kmem_cache *oc = kmem_cache_create(mm, "stats-offline", 64, 0, 0, NULL);
	REQUIRE(oc);
	REQUIRE(mm_cpu_attach(mm, away) == away);
	void *on_away = kmem_cache_alloc(oc, GFP_KERNEL);   /* a cpu slab on the other vCPU */
	REQUIRE(on_away);
	REQUIRE(mm_cpu_attach(mm, home) == home);
	snapshot(oc, st);
	REQUIRE(mm_cpu_offline(mm, away) == 0);
	CHECK_MSG(delta(oc, st, CPUSLAB_FLUSH) == 1, "offline: cpuslab_flush +%ld", delta(oc, st, CPUSLAB_FLUSH));
	REQUIRE(mm_cpu_online(mm, away) == 0);
	kmem_cache_free(oc, on_away);
	kmem_cache_destroy(oc);

	/* kmem_cache_get_info() reports set_cpu_partial()'s slabs: the 6.6
	 * object count for the size, as slabs assumed half full */
	REQUIRE(kmem_cache_get_info(s, &info) == 0);
	unsigned int nr = info.size >= 4096 ? 6 : info.size >= 1024 ? 24 : info.size >= 256 ? 52 : 120;
	CHECK_MSG(info.cpu_partial_slabs == (nr * 2 + info.objects_per_slab - 1) / info.objects_per_slab,
		  "cpu_partial_slabs %u for size %u, %u objects per slab", info.cpu_partial_slabs, info.size,
		  info.objects_per_slab);
	kmem_cache_destroy(s);

	/* A debug cache keeps no cpu partial slabs, and its frees go through
	 * free_to_partial_list(): a full slab that gets an object back moves to
	 * the partial list, counted as free_add_partial. */
	struct kmem_cache *d = kmem_cache_create(mm, "stats-debug", 64, 0, SLAB_CONSISTENCY_CHECKS, NULL);
	REQUIRE(d);
	REQUIRE(kmem_cache_get_info(d, &info) == 0);
	CHECK(info.cpu_partial_slabs == 0);
	void **full = calloc(info.objects_per_slab, sizeof(*full));
	REQUIRE(full);
	for (unsigned int i = 0; i < info.objects_per_slab; i++)
		REQUIRE((full[i] = kmem_cache_alloc(d, GFP_KERNEL)));
	snapshot(d, st);
	kmem_cache_free(d, full[0]);
	CHECK_MSG(delta(d, st, FREE_ADD_PARTIAL) == 1, "free_add_partial +%ld", delta(d, st, FREE_ADD_PARTIAL));
	for (unsigned int i = 1; i < info.objects_per_slab; i++)
		kmem_cache_free(d, full[i]);
	free(full);
	kmem_cache_destroy(d);
	CHECK(mm_nr_reports(mm) == 0);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
	TEST_DONE();
}

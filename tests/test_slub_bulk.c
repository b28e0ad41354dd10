/* SPDX-License-Identifier: MIT */
/*
 * test_slub_bulk.c - kmem_cache_alloc_bulk / kmem_cache_free_bulk /
 * kfree_bulk: 100 objects at a time, objects of one slab freed together
 * (one __slab_free per slab), all-or-nothing when memory runs out in the
 * middle (nothing kept, nothing leaked), NULL entries reported (6.6 faults
 * on them) with the rest freed, the checker clean after each step.
 */
#include <stdint.h>
#include <string.h>

#include "mm/mm.h"
#include "mm/slab.h"
#include "test.h"
#include "slub_test.h"


static long live(struct kmem_cache *s)
{
	struct kmem_cache_info i;
	kmem_cache_get_info(s, &i);
	return i.nr_live;
}

/* kmem_cache_shrink() frees every empty slab: what is left holds live objects. */
static unsigned long slabs_after_shrink(struct kmem_cache *s)
{
	struct kmem_cache_info i;
	kmem_cache_shrink(s);
	kmem_cache_get_info(s, &i);
	return i.nr_slabs;
}

static unsigned long stat_of(struct kmem_cache *s, enum slub_stat_item it)
{
	unsigned long st[NR_SLUB_STAT_ITEMS];
	kmem_cache_get_stats(s, st);
	return st[it];
}

static bool distinct(void **p, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (p[i] == p[j])
				return false;
	return true;
}

static void test_bulk_100(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "bulk-96", 96, 0, 0, NULL);
	void *p[100], *q[300];

	REQUIRE(s);
	for (int round = 0; round < 5; round++) {
		/* a few single allocations first, so the cpu freelist is part used */
		void *one = kmem_cache_alloc(s, GFP_KERNEL);
		CHECK(kmem_cache_alloc_bulk(s, GFP_KERNEL, 100, p) == 100);
		CHECK(distinct(p, 100));
		for (int i = 0; i < 100; i++) {
			CHECK(p[i] != one);
			memset(p[i], i, 96);
		}
		CHECK_MM(mm, 3);
		for (int i = 0; i < 100; i++) {
			bool ok = true;
			for (int b = 0; b < 96; b++)
				ok &= ((unsigned char *)p[i])[b] == (unsigned char)i;
			CHECK(ok);
		}
		if (live(s) >= 0)
			CHECK(live(s) == 101);
		kmem_cache_free_bulk(s, 100, p);
		kmem_cache_free(s, one);
		CHECK_MM(mm, 3);
		if (live(s) >= 0)
			CHECK(live(s) == 0);
	}

	/* kmem_cache_zalloc-like: __GFP_ZERO through the bulk path */
	CHECK(kmem_cache_alloc_bulk(s, GFP_KERNEL, 100, p) == 100);
	for (int i = 0; i < 100; i++)
		memset(p[i], 0xff, 96);
	kmem_cache_free_bulk(s, 100, p);
	CHECK(kmem_cache_alloc_bulk(s, GFP_KERNEL | __GFP_ZERO, 100, p) == 100);
	bool zero = true;
	for (int i = 0; i < 100; i++)
		for (int b = 0; b < 96; b++)
			zero &= ((unsigned char *)p[i])[b] == 0;
	CHECK(zero);

	/* free_bulk of objects in random order, across slabs */
	CHECK(kmem_cache_alloc_bulk(s, GFP_KERNEL, 300, q) == 300);
	unsigned x = 7;
	for (int i = 299; i > 0; i--) {
		x = x * 1664525 + 1013904223;
		int j = (int)((x >> 8) % (unsigned)(i + 1));
		void *t = q[i];
		q[i] = q[j];
		q[j] = t;
	}
	kmem_cache_free_bulk(s, 300, q);
	CHECK_MM(mm, 3);
	kmem_cache_free_bulk(s, 100, p);
	CHECK_MM(mm, 3);
	if (live(s) >= 0)
		CHECK(live(s) == 0);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

/* Objects grouped by slab go back with one slow-path free per slab. */
static void test_detached_freelist(void)
{
	struct mm *mm = new_mm("slab_freelist_random=0");
	struct kmem_cache *s = kmem_cache_create(mm, "bulk-dfl", 256, 0, 0, NULL);
	struct kmem_cache_info info;
	static void *p[1024];

	REQUIRE(s && !kmem_cache_get_info(s, &info));
	int per = (int)info.objects_per_slab, n = per * 4;
	REQUIRE(n <= 1024);
	/* four full slabs' worth; then a single allocation moves the cpu slab on */
	CHECK(kmem_cache_alloc_bulk(s, GFP_KERNEL, (size_t)n, p) == n);
	void *extra = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(extra);
	CHECK_MM(mm, 3);
	unsigned long before = stat_of(s, FREE_SLOWPATH);
	kmem_cache_free_bulk(s, (size_t)n, p);        /* slabs are full and none is the cpu slab */
	unsigned long after = stat_of(s, FREE_SLOWPATH);
	unsigned long st[NR_SLUB_STAT_ITEMS];
	if (kmem_cache_get_stats(s, st))
		CHECK_MSG(after - before == 4, "%lu slow-path frees for 4 slabs", after - before);
	CHECK_MM(mm, 3);
	kmem_cache_free(s, extra);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

/* All or nothing: a bulk allocation that cannot complete keeps nothing. */
static void test_all_or_nothing(void)
{
	/* every second new slab fails: a bulk needing two new slabs fails half way */
	struct mm *mm = new_mm("slub_fail_new_slab=2");
	struct kmem_cache *s = kmem_cache_create(mm, "bulk-fail", 512, 0, 0, NULL);
	struct kmem_cache_info info;
	static void *p[200];

	REQUIRE(s && !kmem_cache_get_info(s, &info));
	unsigned long r = mm_nr_reports(mm);
	int n = (int)info.objects_per_slab * 3;
	for (int i = 0; i < n; i++)
		p[i] = (void *)0x1;
	CHECK(kmem_cache_alloc_bulk(s, GFP_KERNEL, (size_t)n, p) == 0);
	CHECK_MM(mm, 3);
	if (live(s) >= 0)
		CHECK(live(s) == 0);
	CHECK(mm_nr_reports(mm) == r);
	/* it works again once memory is there */
	char err[128];
	CHECK(mm_slub_configure(mm, "slub_fail_new_slab=0", err, sizeof(err)) == 0);
	CHECK(kmem_cache_alloc_bulk(s, GFP_KERNEL, (size_t)n, p) == n);
	CHECK(distinct(p, n));
	kmem_cache_free_bulk(s, (size_t)n, p);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);
	mm_destroy(mm);

	/* the same with the page allocator really out of memory */
	mm = new_mm(NULL);
	s = kmem_cache_create(mm, "bulk-oom", 1024, 0, 0, NULL);
	REQUIRE(s);
	void *head = kmem_cache_alloc(s, GFP_KERNEL);     /* a cpu slab with some objects left */
	REQUIRE(head);
	struct page *pages[40000];
	int np = 0;
	while (np < 40000 && (pages[np] = alloc_pages(mm, GFP_KERNEL, 0)))
		np++;
	CHECK(np > 1000);
	CHECK(kmem_cache_alloc_bulk(s, GFP_KERNEL, 100, p) == 0);
	CHECK_MM(mm, 3);
	if (live(s) >= 0)
		CHECK(live(s) == 1);
	while (np)
		__free_pages(mm, pages[--np], 0);
	CHECK(kmem_cache_alloc_bulk(s, GFP_KERNEL, 100, p) == 100);
	kmem_cache_free_bulk(s, 100, p);
	kmem_cache_free(s, head);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

/* kfree_bulk: kmalloc objects of every size class and large ones, mixed. */
static void test_kfree_bulk(void)
{
	struct mm *mm = new_mm(NULL);
	void *p[120];

	for (int i = 0; i < 120; i++) {
		size_t size = (i % 10 == 9) ? 20000 + (size_t)i : (size_t)(1 + (i * 97) % 8000);
		p[i] = kmalloc(mm, size, GFP_KERNEL);
		REQUIRE(p[i]);
	}
	CHECK_MM(mm, 3);
	unsigned long r = mm_nr_reports(mm);
	kfree_bulk(mm, 120, p);
	CHECK(mm_nr_reports(mm) == r);
	CHECK_MM(mm, 3);
	for (struct kmem_cache *s = kmem_cache_next(mm, NULL); s; s = kmem_cache_next(mm, s))
		if (live(s) >= 0)
			CHECK_MSG(live(s) == 0, "%s: %ld live", kmem_cache_name(s), live(s));
	mm_destroy(mm);
}

/*
 * NULL and ZERO_SIZE_PTR entries: 6.6 has no NULL skip (it went in 5.19)
 * and faults on them, so each one is a report; the real entries are
 * freed all the same, whether a bad entry is the head of a detached
 * freelist or sits inside another slab's look-ahead window.
 */
static void test_free_bulk_null_entries(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "bulk-null", 128, 0, 0, NULL);
	void *p[40];

	REQUIRE(s);
	for (int round = 0; round < 2; round++) {
		int nbad = 0;
		REQUIRE(kmem_cache_alloc_bulk(s, GFP_KERNEL, 32, p) == 32);
		/* bad entries at the head (last), at the start, and between objects */
		void *q[40];
		int n = 0;
		for (int i = 0; i < 32; i++) {
			if (i % 5 == 0) {
				q[n++] = (i / 5) & 1 ? ZERO_SIZE_PTR : NULL;
				nbad++;
			}
			q[n++] = p[i];
		}
		q[n++] = NULL;
		nbad++;
		unsigned long r = mm_nr_reports(mm);
		if (round == 0)
			kmem_cache_free_bulk(s, (size_t)n, q);
		else
			kfree_bulk(mm, (size_t)n, q);
		CHECK_MSG(mm_nr_reports(mm) - r == (unsigned long)nbad, "round %d: %lu reports for %d bad entries",
			  round, mm_nr_reports(mm) - r, nbad);
		CHECK_MSG(live(s) <= 0, "round %d: %ld objects still live", round, live(s));
		CHECK_MSG(slabs_after_shrink(s) == 0, "round %d: slabs left after a shrink", round);
		CHECK_MM(mm, 3);
	}

	/* only bad entries: every one reported, nothing freed, state intact */
	void *bad[3] = { NULL, ZERO_SIZE_PTR, NULL };
	void *o = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(o);
	unsigned long r = mm_nr_reports(mm);
	kmem_cache_free_bulk(s, 3, bad);
	CHECK(mm_nr_reports(mm) - r == 3);
	CHECK(live(s) == 1 || live(s) < 0);
	CHECK(slabs_after_shrink(s) == 1);
	CHECK_MM(mm, 3);
	kmem_cache_free(s, o);
	CHECK(live(s) <= 0);
	CHECK(slabs_after_shrink(s) == 0);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

int main(void)
{
	test_bulk_100();
	test_detached_freelist();
	test_all_or_nothing();
	test_kfree_bulk();
	test_free_bulk_null_entries();
	TEST_DONE();
}

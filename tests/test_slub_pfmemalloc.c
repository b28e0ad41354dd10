/* SPDX-License-Identifier: MIT */
/*
 * test_slub_pfmemalloc.c - reserve memory stays with the requests entitled
 * to it (Linux 6.6): a page the allocator could give only by ignoring the
 * watermarks (ALLOC_NO_WATERMARKS, i.e. __GFP_MEMALLOC) is marked
 * pfmemalloc by prep_new_page(); SLUB turns such a page into a pfmemalloc
 * slab (PG_active), and its slow path lets only __GFP_MEMALLOC requests
 * use it (pfmemalloc_match()): a mismatched cpu slab is deactivated, a
 * mismatched node partial slab skipped.  The fast path does not look, as
 * in the kernel.
 *
 * The machine: Normal [1024, 2048) only, two vCPUs.  "Exhausted" below
 * means GFP_NOWAIT order-0 allocations were taken until one failed: the
 * zone is at its reserves, and only __GFP_MEMALLOC gets more.
 */
#include <string.h>

#include "mm/cpu.h"
#include "mm/slab.h"
#include "slab/slab.h"
#include "test.h"

#define MAX_TAKEN 1024

struct exhausted {
	struct page *p[MAX_TAKEN];
	int n;
};

static struct mm *make(void)
{
	struct mm_config c;
	test_config_normal(&c, 1024, 2048, 10, 9);
	c.nr_cpus = 2;
	return test_create(&c);
}

/* Take GFP_NOWAIT order-0 pages until the allocator refuses one. */
static void exhaust(struct mm *mm, struct exhausted *e)
{
	e->n = 0;
	struct page *p = NULL;
	while (e->n < MAX_TAKEN && (p = alloc_pages(mm, GFP_NOWAIT, 0)))
		e->p[e->n++] = p;
	REQUIRE(!p && e->n > 0);
	int marked = 0;
	for (int i = 0; i < e->n; i++)
		marked += page_is_pfmemalloc(e->p[i]);
	CHECK_MSG(marked == 0, "%d of %d GFP_NOWAIT pages marked pfmemalloc", marked, e->n);
}

static void give_back(struct mm *mm, struct exhausted *e)
{
	while (e->n)
		__free_pages(mm, e->p[--e->n], 0);
}

static struct page *slab_of(struct mm *mm, void *obj)
{
	struct page *slab = virt_to_slab(mm, obj);
	REQUIRE(slab);
	return slab;
}

static unsigned long nr_partial(struct kmem_cache *s)
{
	struct kmem_cache_info info;
	REQUIRE(kmem_cache_get_info(s, &info) == 0);
	return info.nr_partial;
}

static unsigned int objects_per_slab(struct kmem_cache *s)
{
	struct kmem_cache_info info;
	REQUIRE(kmem_cache_get_info(s, &info) == 0);
	return info.objects_per_slab;
}

/* The end of every scenario: nothing reported, the checker clean, every page back. */
static void finish(struct mm *mm)
{
	CHECK_MSG(mm_nr_reports(mm) == 0, "%lu reports", mm_nr_reports(mm));
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/* The machine with this task on vCPU 0 and one cache of @size-byte objects, and its end. */
static struct mm *make_with_cache(const char *name, unsigned int size, slab_flags_t flags, struct kmem_cache **s)
{
	struct mm *mm = make();
	REQUIRE(mm_cpu_attach(mm, 0) == 0);
	*s = kmem_cache_create(mm, name, size, 0, flags, NULL);
	REQUIRE(*s);
	return mm;
}

static void finish_with_cache(struct mm *mm, struct kmem_cache *s)
{
	kmem_cache_destroy(s);
	REQUIRE(mm_cpu_detach(mm) == 0);
	finish(mm);
}

/* An array for every object of one slab of @s; *@per_slab: how many, at least @min. */
static void **slab_array(struct kmem_cache *s, unsigned int min, unsigned int *per_slab)
{
	*per_slab = objects_per_slab(s);
	REQUIRE(*per_slab >= min && *per_slab <= 512);
	void **obj = calloc(*per_slab, sizeof(*obj));
	REQUIRE(obj);
	return obj;
}

/* The page allocator: the mark follows ALLOC_NO_WATERMARKS, nothing else. */
static void test_page_mark(void)
{
	struct mm *mm = make();
	struct exhausted e;

	/* Memory to spare: __GFP_MEMALLOC is served at the low watermark, unmarked. */
	struct page *p = alloc_pages(mm, GFP_NOWAIT | __GFP_MEMALLOC, 0);
	REQUIRE(p);
	CHECK(!page_is_pfmemalloc(p));
	__free_pages(mm, p, 0);

	exhaust(mm, &e);
	CHECK(alloc_pages(mm, GFP_NOWAIT, 0) == NULL);
	/* __GFP_NOMEMALLOC wins over __GFP_MEMALLOC. */
	CHECK(alloc_pages(mm, GFP_NOWAIT | __GFP_MEMALLOC | __GFP_NOMEMALLOC, 0) == NULL);

	struct page *r = alloc_pages(mm, GFP_NOWAIT | __GFP_MEMALLOC, 0);
	REQUIRE(r);
	CHECK(page_is_pfmemalloc(r));
	struct page *r2 = alloc_pages(mm, GFP_NOWAIT | __GFP_MEMALLOC | __GFP_COMP, 1);
	REQUIRE(r2);
	CHECK(page_is_pfmemalloc(r2));
	__free_pages(mm, r, 0);
	__free_pages(mm, r2, 1);
	give_back(mm, &e);

	/* A page freed with the mark is unmarked when it is allocated again normally. */
	struct page *again[4];
	for (int i = 0; i < 4; i++) {
		again[i] = alloc_pages(mm, GFP_KERNEL, 0);
		REQUIRE(again[i]);
		CHECK(!page_is_pfmemalloc(again[i]));
	}
	for (int i = 0; i < 4; i++)
		__free_pages(mm, again[i], 0);

	/* The bulk allocator never ignores the watermarks: its pages are unmarked. */
	struct page *arr[8] = { 0 };
	REQUIRE(alloc_pages_bulk_array(mm, GFP_KERNEL, 8, arr) == 8);
	for (int i = 0; i < 8; i++)
		CHECK(!page_is_pfmemalloc(arr[i]));
	release_pages(mm, arr, 8);
	finish(mm);
}

/*
 * The cpu slab: made of a reserve page for a __GFP_MEMALLOC request, it
 * serves the fast path to anyone, but a GFP_NOWAIT request in the slow
 * path deactivates it, skips it on the node partial list and fails rather
 * than take the object a remote free put back on it.  The model before
 * took that object (get_freelist()).
 */
static void test_cpu_slab(void)
{
	struct kmem_cache *s;
	struct mm *mm = make_with_cache("pfm64", 64, 0, &s);
	unsigned int per_slab;
	void **obj = slab_array(s, 4, &per_slab);
	struct exhausted e;

	exhaust(mm, &e);
	CHECK(kmem_cache_alloc(s, GFP_NOWAIT) == NULL);          /* no page for a slab */
	obj[0] = kmem_cache_alloc(s, GFP_NOWAIT | __GFP_MEMALLOC);
	REQUIRE(obj[0]);
	struct page *slab = slab_of(mm, obj[0]);
	CHECK(slab_test_pfmemalloc(slab));

	/* The fast path: the rest of c->freelist goes to whoever asks. */
	for (unsigned int i = 1; i < per_slab; i++) {
		obj[i] = kmem_cache_alloc(s, GFP_NOWAIT);
		REQUIRE(obj[i]);
		CHECK(slab_of(mm, obj[i]) == slab);
	}

	/* A remote free: the frozen slab keeps the object on its own freelist. */
	REQUIRE(mm_migrate_current(mm, 1) == 1);
	kmem_cache_free(s, obj[1]);
	REQUIRE(mm_migrate_current(mm, 0) == 0);
	CHECK(nr_partial(s) == 0);

	/* The slow path: the mismatched cpu slab goes to the node list, and nothing else is there. */
	void *q = kmem_cache_alloc(s, GFP_NOWAIT);
	CHECK_MSG(q == NULL, "GFP_NOWAIT got %p from a pfmemalloc slab", q);
	if (q)
		kmem_cache_free(s, q);
	CHECK(nr_partial(s) == 1);
	CHECK(slab_test_pfmemalloc(slab));

	/* __GFP_MEMALLOC may take it from the node list. */
	obj[1] = kmem_cache_alloc(s, GFP_NOWAIT | __GFP_MEMALLOC);
	CHECK(obj[1] && slab_of(mm, obj[1]) == slab);
	CHECK(nr_partial(s) == 0);

	for (unsigned int i = 0; i < per_slab; i++)
		if (obj[i])
			kmem_cache_free(s, obj[i]);
	give_back(mm, &e);
	/* The cpu slab is still the pfmemalloc one (the fast path would use it): flush and free it. */
	CHECK(kmem_cache_shrink(s) == 0);
	CHECK(nr_partial(s) == 0);

	/* Memory to spare again: new slabs are ordinary, and any request may use them. */
	void *n1 = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(n1);
	CHECK(!slab_test_pfmemalloc(slab_of(mm, n1)));
	void *n2 = kmem_cache_alloc(s, GFP_KERNEL | __GFP_MEMALLOC);
	CHECK(n2 && slab_of(mm, n2) == slab_of(mm, n1));
	kmem_cache_free(s, n1);
	if (n2)
		kmem_cache_free(s, n2);

	/* Freeing the pfmemalloc slab's page clears PG_active: no bad page on the way back. */
	free(obj);
	finish_with_cache(mm, s);
}

/*
 * The cpu partial list: a pfmemalloc slab parked there by a free is taken
 * back as the cpu slab (CPU_PARTIAL_ALLOC) and deactivated at once for a
 * GFP_NOWAIT request, which then gets an ordinary new slab.
 */
static void test_cpu_partial(void)
{
	struct kmem_cache *s;
	struct mm *mm = make_with_cache("pfm128", 128, 0, &s);
	unsigned int per_slab;
	void **obj = slab_array(s, 2, &per_slab);
	struct exhausted e;

	exhaust(mm, &e);
	for (unsigned int i = 0; i < per_slab; i++) {
		obj[i] = kmem_cache_alloc(s, GFP_NOWAIT | __GFP_MEMALLOC);
		REQUIRE(obj[i]);
	}
	struct page *slab = slab_of(mm, obj[0]);
	CHECK(slab_test_pfmemalloc(slab));
	/* The slab is full and no longer the cpu slab once the next one is made: free one into it. */
	give_back(mm, &e);
	void *other = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(other);
	struct page *other_slab = slab_of(mm, other);
	CHECK(other_slab != slab && !slab_test_pfmemalloc(other_slab));
	kmem_cache_free(s, obj[0]);          /* full -> cpu partial list (put_cpu_partial) */
	obj[0] = NULL;
	CHECK(nr_partial(s) == 0);

	/* Take the rest of the ordinary cpu slab, so that the next request reaches the cpu partial list. */
	void **more = calloc(per_slab, sizeof(*more));
	REQUIRE(more);
	unsigned int nmore = 0;
	void *got = NULL;
	while (nmore < per_slab) {
		void *x = kmem_cache_alloc(s, GFP_NOWAIT);
		REQUIRE(x);
		if (slab_of(mm, x) != other_slab) {
			got = x;
			break;
		}
		more[nmore++] = x;
	}
	/* The object freed into the pfmemalloc slab was not handed out: a new ordinary slab was. */
	REQUIRE(got);
	CHECK(slab_of(mm, got) != slab);
	CHECK(!slab_test_pfmemalloc(slab_of(mm, got)));
	CHECK(nr_partial(s) == 1);           /* the pfmemalloc slab, deactivated to the node list */

	kmem_cache_free(s, got);
	for (unsigned int i = 0; i < nmore; i++)
		kmem_cache_free(s, more[i]);
	kmem_cache_free(s, other);
	for (unsigned int i = 0; i < per_slab; i++)
		if (obj[i])
			kmem_cache_free(s, obj[i]);
	free(more);
	free(obj);
	finish_with_cache(mm, s);
}

/*
 * A debug cache takes single objects under list_lock: a pfmemalloc slab on
 * its node partial list is skipped by GFP_NOWAIT, used by __GFP_MEMALLOC.
 */
static void test_debug_cache(void)
{
	struct kmem_cache *s;
	struct mm *mm = make_with_cache("pfmdbg", 64, SLAB_CONSISTENCY_CHECKS, &s);
	struct exhausted e;

	exhaust(mm, &e);
	void *a = kmem_cache_alloc(s, GFP_NOWAIT | __GFP_MEMALLOC);
	REQUIRE(a);
	CHECK(slab_test_pfmemalloc(slab_of(mm, a)));
	CHECK(nr_partial(s) == 1);
	void *b = kmem_cache_alloc(s, GFP_NOWAIT);
	CHECK_MSG(b == NULL, "GFP_NOWAIT got %p from a pfmemalloc slab of a debug cache", b);
	if (b)
		kmem_cache_free(s, b);
	void *c = kmem_cache_alloc(s, GFP_NOWAIT | __GFP_MEMALLOC);
	CHECK(c && slab_of(mm, c) == slab_of(mm, a));
	if (c)
		kmem_cache_free(s, c);
	kmem_cache_free(s, a);
	give_back(mm, &e);
	finish_with_cache(mm, s);
}

int main(void)
{
	test_page_mark();
	test_cpu_slab();
	test_cpu_partial();
	test_debug_cache();
	TEST_DONE();
}

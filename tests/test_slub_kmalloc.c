/* SPDX-License-Identifier: MIT */
/*
 * test_slub_kmalloc.c - the kmalloc family: every size class and the
 * sizes around its edges, large sizes straight from the page allocator,
 * kfree telling the two apart, kzalloc, krealloc growing and shrinking
 * with the data kept, ksize, kmalloc_array/kcalloc overflow, bad frees
 * reported with the state intact.  Checker level 3 after every step.
 */
#include <stdint.h>
#include <string.h>

#include "mm/mm.h"
#include "mm/slab.h"
#include "test.h"
#include "slub_test.h"


static const unsigned int classes[] = { 8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192 };

/* The class a kernel kmalloc(size) uses. */
static unsigned int class_of(size_t size)
{
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
		if (size <= classes[i])
			return classes[i];
	return 0;
}

static void test_size_classes(void)
{
	struct mm *mm = new_mm(NULL);
	char name[32];

	for (size_t size = 1; size <= KMALLOC_MAX_CACHE_SIZE; size += (size < 300 ? 1 : 37)) {
		struct kmem_cache *s = kmalloc_slab(mm, size, GFP_KERNEL);
		unsigned int want = class_of(size);
		REQUIRE(s);
		CHECK_MSG(kmem_cache_size(s) == want, "size %zu: cache %s", size, kmem_cache_name(s));
		if (want < 1024)
			snprintf(name, sizeof(name), "kmalloc-%u", want);
		else
			snprintf(name, sizeof(name), "kmalloc-%uk", want / 1024);
		CHECK_MSG(!strcmp(kmem_cache_name(s), name), "size %zu: %s", size, kmem_cache_name(s));

		unsigned char *p = kmalloc(mm, size, GFP_KERNEL);
		REQUIRE(p);
		/* power-of-two classes are naturally aligned (kmalloc-8k too: 6.6 has no page cap), the others to 8 */
		unsigned int align = (want & (want - 1)) ? 8 : want;
		CHECK_MSG(((uintptr_t)p & (align - 1)) == 0, "size %zu at %p", size, (void *)p);
		CHECK(ksize(mm, p) >= size);
		memset(p, 0xa5, size);
		kfree(mm, p);
	}
	CHECK(kmalloc_slab(mm, 0, GFP_KERNEL) == NULL);
	CHECK(kmalloc_slab(mm, KMALLOC_MAX_CACHE_SIZE + 1, GFP_KERNEL) == NULL);
	CHECK(kmalloc_size_roundup(mm, 65) == 96);
	CHECK(kmalloc_size_roundup(mm, 129) == 192);
	CHECK(kmalloc_size_roundup(mm, 8193) == 16384);
	/* Beyond KMALLOC_MAX_SIZE (the largest block, 4 MiB at max_order 10) the size itself (6.6). */
	CHECK(kmalloc_size_roundup(mm, (size_t)4 << 20) == (size_t)4 << 20);
	CHECK(kmalloc_size_roundup(mm, ((size_t)4 << 20) - 1) == (size_t)4 << 20);
	CHECK_MSG(kmalloc_size_roundup(mm, ((size_t)4 << 20) + 1) == ((size_t)4 << 20) + 1,
		  "kmalloc_size_roundup(4 MiB + 1) = %zu, 6.6 returns the size", kmalloc_size_roundup(mm, ((size_t)4 << 20) + 1));
	CHECK_MM(mm, 3);

	/* Many objects of every class at once: all distinct, contents kept. */
	enum { PER = 40 };
	static unsigned char *objs[13][PER];
	for (int c = 0; c < 13; c++)
		for (int k = 0; k < PER; k++) {
			objs[c][k] = kmalloc(mm, classes[c], GFP_KERNEL);
			REQUIRE(objs[c][k]);
			memset(objs[c][k], c * PER + k, classes[c]);
		}
	CHECK_MM(mm, 3);
	for (int c = 0; c < 13; c++)
		for (int k = 0; k < PER; k++) {
			bool ok = true;
			for (unsigned int b = 0; b < classes[c]; b++)
				ok &= objs[c][k][b] == (unsigned char)(c * PER + k);
			CHECK(ok);
			kfree(mm, objs[c][k]);
		}
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

static void test_large(void)
{
	struct mm *mm = new_mm(NULL);
	size_t sizes[] = { 8193, 12000, 16384, 16385, 100000, 1 << 20 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned char *p = kmalloc(mm, sizes[i], GFP_KERNEL);
		REQUIRE(p);
		struct page *pg = virt_to_page(mm, p);
		REQUIRE(pg);
		CHECK(page_address(mm, pg) == p);          /* page aligned: straight from alloc_pages */
		size_t pages = 1;
		while (pages * MM_PAGE_SIZE < sizes[i])
			pages <<= 1;
		CHECK(ksize(mm, p) == pages * MM_PAGE_SIZE);
		CHECK((uintptr_t)p % (pages * MM_PAGE_SIZE) == 0);   /* a whole block, aligned to its order */
		memset(p, 0x3c, sizes[i]);
		CHECK_MM(mm, 3);
		kfree(mm, p);
		CHECK_MM(mm, 3);
	}
	/*
	 * Beyond MAX_ORDER: NULL, and the page allocator's warning (6.6's
	 * __kmalloc_large_node() asks alloc_pages() for the order as it is),
	 * which __GFP_NOWARN silences; bad gfp bits are reported first.
	 */
	unsigned long r = mm_nr_reports(mm);
	CHECK(kmalloc(mm, (MM_PAGE_SIZE << 10) + 1, GFP_KERNEL) == NULL);
	CHECK(mm_nr_reports(mm) == r + 1);
	CHECK(!strcmp(mm_last_report(mm)->kind, "bad_alloc"));
	CHECK(kmalloc(mm, (MM_PAGE_SIZE << 10) + 1, GFP_KERNEL | __GFP_NOWARN) == NULL);
	CHECK(mm_nr_reports(mm) == r + 1);
	CHECK(kmalloc(mm, (size_t)1 << 40, GFP_KERNEL | __GFP_DMA32) == NULL);
	CHECK(mm_nr_reports(mm) == r + 3);
	CHECK(!strcmp(mm_last_report(mm)->kind, "bad_alloc"));
	CHECK(krealloc(mm, NULL, (MM_PAGE_SIZE << 11) + 1, GFP_KERNEL) == NULL);
	CHECK(mm_nr_reports(mm) == r + 4);

	/* kzalloc of a large size comes zeroed even from a dirty page. */
	unsigned char *d = kmalloc(mm, 20000, GFP_KERNEL);
	memset(d, 0xff, 20000);
	kfree(mm, d);
	unsigned char *z = kzalloc(mm, 20000, GFP_KERNEL);
	REQUIRE(z);
	bool zero = true;
	for (int i = 0; i < 20000; i++)
		zero &= z[i] == 0;
	CHECK(zero);
	kfree(mm, z);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

static void test_zero_and_null(void)
{
	struct mm *mm = new_mm(NULL);
	unsigned long r = mm_nr_reports(mm);

	CHECK(kmalloc(mm, 0, GFP_KERNEL) == ZERO_SIZE_PTR);
	kfree(mm, ZERO_SIZE_PTR);
	kfree(mm, NULL);
	CHECK(ksize(mm, ZERO_SIZE_PTR) == 0);
	CHECK(ksize(mm, NULL) == 0);
	CHECK(mm_nr_reports(mm) == r);

	/* kzalloc: zeroed even when the memory was dirty before */
	for (int round = 0; round < 2; round++) {
		unsigned char *p[50];
		for (int i = 0; i < 50; i++) {
			p[i] = round ? kzalloc(mm, 200, GFP_KERNEL) : kmalloc(mm, 200, GFP_KERNEL);
			REQUIRE(p[i]);
			if (round) {
				bool zero = true;
				for (int b = 0; b < 200; b++)
					zero &= p[i][b] == 0;
				CHECK(zero);
			}
			memset(p[i], 0xee, 200);
		}
		for (int i = 0; i < 50; i++)
			kfree(mm, p[i]);
	}
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

static bool pattern_ok(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(i * 7 + 3))
			return false;
	return true;
}
static void pattern(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(i * 7 + 3);
}

/* Reads bytes the client may no longer use (ASan keeps them poisoned). */
__attribute__((no_sanitize("address"), noinline)) static unsigned char peek8(const unsigned char *p)
{
	return *(const volatile unsigned char *)p;
}

/*
 * kzalloc from a kmalloc cache with red zones but no SLAB_STORE_USER:
 * slab_post_alloc_hook() zeroes the request only (its test is on either
 * flag), the bytes past it keep what the last user wrote - in the kernel
 * as here.
 */
static void test_zero_size_red_zone_only(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "kmalloc-rz-only", 32, 0,
						 SLAB_RED_ZONE | SLAB_KMALLOC | SLAB_NO_MERGE, NULL);
	REQUIRE(s);
	unsigned char *p = kmalloc_trace(s, GFP_KERNEL, 32);
	REQUIRE(p);
	memset(p, 0xaa, 32);
	kmem_cache_free(s, p);
	unsigned char *q = kmalloc_trace(s, GFP_KERNEL | __GFP_ZERO, 18);
	REQUIRE(q == p);                                   /* LIFO: the same object */
	bool zero = true;
	for (int i = 0; i < 18; i++)
		zero &= q[i] == 0;
	CHECK(zero);
	CHECK_MSG(peek8(q + 31) == 0xaa, "byte 31 of an 18-byte kzalloc is %#x: zeroed past the request",
		  peek8(q + 31));
	kmem_cache_free(s, q);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

static void test_krealloc(void)
{
	struct mm *mm = new_mm(NULL);
	unsigned char *p, *q;

	/* NULL: kmalloc; 0: kfree and ZERO_SIZE_PTR */
	p = krealloc(mm, NULL, 40, GFP_KERNEL);
	REQUIRE(p);
	pattern(p, 40);
	/* grow within the object (kmalloc-64): in place */
	q = krealloc(mm, p, 60, GFP_KERNEL);
	CHECK(q == p);
	CHECK(pattern_ok(q, 40));
	pattern(q, 60);
	/* grow beyond: moved, data kept */
	p = krealloc(mm, q, 1000, GFP_KERNEL);
	REQUIRE(p);
	CHECK(p != q);
	CHECK(pattern_ok(p, 60));
	pattern(p, 1000);
	CHECK_MM(mm, 3);
	/* shrink: in place, the prefix kept */
	q = krealloc(mm, p, 100, GFP_KERNEL);
	CHECK(q == p);
	CHECK(pattern_ok(q, 100));
	/* to a large kmalloc and back */
	p = krealloc(mm, q, 50000, GFP_KERNEL);
	REQUIRE(p);
	CHECK(pattern_ok(p, 100));
	pattern(p, 50000);
	q = krealloc(mm, p, 60000, GFP_KERNEL);       /* still fits the 64 KiB pages */
	CHECK(q == p);
	CHECK(pattern_ok(q, 50000));
	p = krealloc(mm, q, 200000, GFP_KERNEL);
	REQUIRE(p);
	CHECK(pattern_ok(p, 50000));
	q = krealloc(mm, p, 10, GFP_KERNEL);          /* a large one shrinks in place too */
	CHECK(q == p);
	CHECK(pattern_ok(q, 10));
	CHECK_MM(mm, 3);
	CHECK(krealloc(mm, q, 0, GFP_KERNEL) == ZERO_SIZE_PTR);
	CHECK_MM(mm, 3);

	/* __GFP_ZERO: what shrinking gives up is zeroed */
	p = kmalloc(mm, 128, GFP_KERNEL);
	memset(p, 0x11, 128);
	q = krealloc(mm, p, 64, GFP_KERNEL | __GFP_ZERO);
	CHECK(q == p);
	bool zero = true;
	for (int i = 64; i < 128; i++)
		zero &= peek8(q + i) == 0;
	CHECK(zero);
	kfree(mm, q);

	/* krealloc_array overflow: NULL, the old object untouched */
	p = kmalloc(mm, 16, GFP_KERNEL);
	pattern(p, 16);
	CHECK(krealloc_array(mm, p, SIZE_MAX / 2, 3, GFP_KERNEL) == NULL);
	CHECK(pattern_ok(p, 16));
	kfree(mm, p);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

static void test_array(void)
{
	struct mm *mm = new_mm(NULL);
	unsigned long r = mm_nr_reports(mm);

	CHECK(kmalloc_array(mm, SIZE_MAX / 8 + 1, 8, GFP_KERNEL) == NULL);
	CHECK(kmalloc_array(mm, 1UL << 40, 1UL << 40, GFP_KERNEL) == NULL);
	CHECK(kcalloc(mm, SIZE_MAX, 2, GFP_KERNEL) == NULL);
	CHECK(mm_nr_reports(mm) == r);
	unsigned int *a = kcalloc(mm, 100, sizeof(unsigned int), GFP_KERNEL);
	REQUIRE(a);
	bool zero = true;
	for (int i = 0; i < 100; i++)
		zero &= a[i] == 0;
	CHECK(zero);
	CHECK(ksize(mm, a) >= 400);
	kfree(mm, a);
	a = kmalloc_array(mm, 3, 1000, GFP_KERNEL);
	CHECK(a && ksize(mm, a) == 4096);
	kfree(mm, a);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/* Frees of things that are not kmalloc objects: reported, nothing changes. */
static void test_bad_kfree(void)
{
	struct mm *mm = new_mm(NULL);
	int on_stack;
	unsigned long r = mm_nr_reports(mm);

	kfree(mm, &on_stack);                           /* outside the instance's memory */
	CHECK(mm_nr_reports(mm) == r + 1);
	CHECK(strstr(mm_last_report(mm)->reason, "outside") != NULL);
	CHECK_MM(mm, 3);

	unsigned char *big = kmalloc(mm, 30000, GFP_KERNEL);
	REQUIRE(big);
	if (!ASAN_BUILD) {                              /* KASAN stops at it: test_slub_kasan.c */
		kfree(mm, big + 4096);                  /* interior of a large kmalloc */
		CHECK(mm_nr_reports(mm) == r + 2);
		CHECK(strstr(mm_last_report(mm)->reason, "interior") != NULL);
		CHECK_MM(mm, 3);
	} else {
		r--;                                    /* one report fewer below */
	}
	kfree(mm, big);                                 /* still freeable */
	CHECK_MM(mm, 3);

	struct page *pg = alloc_pages(mm, GFP_KERNEL, 0);
	kfree(mm, page_address(mm, pg));                /* an order-0 page from alloc_pages */
	CHECK(mm_nr_reports(mm) == r + 3);
	CHECK_MM(mm, 3);
	__free_pages(mm, pg, 0);

	/* kmem_cache_free of a kmalloc object into the wrong cache: reported, freed where it belongs */
	struct kmem_cache *s = kmem_cache_create(mm, "other-64", 64, 0, 0, NULL);
	void *k = kmalloc(mm, 64, GFP_KERNEL);
	kmem_cache_free(s, k);
	CHECK(mm_nr_reports(mm) == r + 4);
	CHECK(strstr(mm_last_report(mm)->reason, "Wrong slab cache") != NULL);
	CHECK_MM(mm, 3);
	struct kmem_cache_info i;
	kmem_cache_get_info(kmalloc_slab(mm, 64, GFP_KERNEL), &i);
	if (i.nr_live >= 0)
		CHECK(i.nr_live == 0);
	kmem_cache_destroy(s);
	CHECK_MM(mm, 3);

	/* krealloc of the same: refused (NULL), reported, nothing changes */
	r = mm_nr_reports(mm);
	CHECK(krealloc(mm, &on_stack, 100, GFP_KERNEL) == NULL);
	CHECK(mm_nr_reports(mm) == r + 1);
	CHECK(strstr(mm_last_report(mm)->reason, "krealloc: address outside") != NULL);
	pg = alloc_pages(mm, GFP_KERNEL, 0);
	REQUIRE(pg);
	CHECK(krealloc(mm, page_address(mm, pg), 100, GFP_KERNEL) == NULL);
	CHECK(mm_nr_reports(mm) == r + 2);
	CHECK(strstr(mm_last_report(mm)->reason, "krealloc: not a kmalloc object") != NULL);
	__free_pages(mm, pg, 0);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/*
 * kmalloc_fix_flags() (6.6): a slab page is never asked for with
 * __GFP_DMA32 or __GFP_HIGHMEM.  Where a page is asked for - a new slab,
 * a large kmalloc - they are reported ("Unexpected gfp") and dropped, and
 * the request goes on; objects from a slab already there cost no report.
 * Both mobility hints reach the page allocator only on the large path,
 * which refuses them (a slab's page gets its mobility from the cache).
 */
static void test_bad_gfp(void)
{
	struct mm *mm = new_mm(NULL);
	unsigned long r = mm_nr_reports(mm);

	void *p = kmalloc(mm, 20000, GFP_KERNEL | __GFP_DMA32);
	REQUIRE(p);
	CHECK(mm_nr_reports(mm) == r + 1);
	CHECK(strstr(mm_last_report(mm)->reason, "Unexpected gfp: 0x4.") != NULL);
	unsigned long pfn = page_to_pfn(mm, virt_to_page(mm, p));
	const struct mm_span *normal = &mm_get_config(mm)->zones[ZONE_NORMAL];
	CHECK_MSG(pfn >= normal->start_pfn && pfn < normal->end_pfn, "pfn %#lx is not in Normal", pfn);
	kfree(mm, p);
	CHECK(kmalloc(mm, 20000, GFP_KERNEL | __GFP_MOVABLE | __GFP_RECLAIMABLE) == NULL);
	CHECK(mm_nr_reports(mm) == r + 2);
	CHECK(strstr(mm_last_report(mm)->reason, "__GFP_RECLAIMABLE") != NULL);
	CHECK_MM(mm, 3);

	struct kmem_cache *s = kmem_cache_create(mm, "gfp-64", 64, 0, 0, NULL);
	REQUIRE(s);
	void *a = kmem_cache_alloc(s, GFP_KERNEL | __GFP_HIGHMEM);   /* a new slab */
	REQUIRE(a);
	CHECK(mm_nr_reports(mm) == r + 3);
	CHECK(strstr(mm_last_report(mm)->reason, "Unexpected gfp: 0x2.") != NULL);
	void *b = kmem_cache_alloc(s, GFP_KERNEL | __GFP_HIGHMEM);   /* the cpu slab's next object */
	REQUIRE(b);
	CHECK(mm_nr_reports(mm) == r + 3);
	void *c = kmalloc(mm, 64, GFP_KERNEL | __GFP_MOVABLE | __GFP_RECLAIMABLE);   /* kmalloc-rcl-64's new slab */
	REQUIRE(c);
	CHECK(mm_nr_reports(mm) == r + 3);
	kfree(mm, c);
	kmem_cache_free(s, b);
	kmem_cache_free(s, a);
	kmem_cache_destroy(s);
	CHECK(mm_nr_reports(mm) == r + 3);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

int main(void)
{
	test_bad_gfp();
	test_size_classes();
	test_large();
	test_zero_and_null();
	test_zero_size_red_zone_only();
	test_krealloc();
	test_array();
	test_bad_kfree();
	TEST_DONE();
}

/* SPDX-License-Identifier: MIT */
/*
 * test_meminit.c - lib/test_meminit.c's checks on the model: init_on_alloc
 * and init_on_free (mm_slub_configure "init_on_alloc=1" / "init_on_free=1")
 * for kmalloc of every size the kernel test uses (1 << 0 .. 1 << 19, large
 * kmalloc included), kmem_cache_alloc and bulk; __GFP_ZERO for kmalloc,
 * kzalloc, kmem_cache_zalloc and large kmalloc; constructor semantics (run
 * once per object when its slab is made, objects come back constructed,
 * init_on_alloc/init_on_free leave caches with a ctor alone); and a bulk
 * of 100 objects.  Every test has a control run (the option off) showing
 * that the garbage it looks for is really observable, so a broken
 * allocator fails it.  The checker runs at level 3 after every test.
 *
 * Freed memory is read through helpers ASan does not instrument (the test
 * looks at what the allocator left there, as the kernel test does with
 * KASAN off).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mm/mm.h"
#include "mm/slab.h"
#include "test.h"
#include "slub_test.h"

#define CTOR_PATTERN 0x41414141U
#define CTOR_BYTES   sizeof(unsigned int)
#define BULK_SIZE    100


__attribute__((no_sanitize("address"), noinline)) static unsigned char peek8(const void *p)
{
	return *(const volatile unsigned char *)p;
}

/* Non-zero bytes in [p, p+n), skipping [skip, skip+skip_len) (a free pointer). */
__attribute__((no_sanitize("address"), noinline)) static size_t count_nonzero(const void *p, size_t n, size_t skip,
									       size_t skip_len)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if ((i < skip || i >= skip + skip_len) && peek8((const char *)p + i))
			k++;
	return k;
}

static void fill_with_garbage(void *p, size_t n, size_t skip)
{
	unsigned char *b = p;
	for (size_t i = skip; i < n; i++)
		b[i] = (unsigned char)(1 + (i * 7 + 0x5a) % 255);   /* never 0 */
}

/* ---- kmalloc: do_kmalloc_size() for 1 << 0 .. 1 << 19 ---- */

/*
 * The kernel's do_kmalloc_size(): kmalloc, fill with garbage, kfree, kmalloc
 * again (the same object, LIFO): with init_on_alloc or init_on_free it must
 * read zero.  Returns the number of sizes that did not.  @same counts the
 * sizes where the second kmalloc got the first one's memory (the control:
 * without the options those must show garbage).
 */
static int kmalloc_sizes(struct mm *mm, int *same, int *garbage)
{
	int failures = 0;
	*same = *garbage = 0;
	for (int i = 0; i < 20; i++) {
		size_t size = (size_t)1 << i;
		void *buf = kmalloc(mm, size, GFP_KERNEL);
		REQUIRE(buf);
		fill_with_garbage(buf, size, 0);
		kfree(mm, buf);
		void *buf2 = kmalloc(mm, size, GFP_KERNEL);
		REQUIRE(buf2);
		size_t nz = count_nonzero(buf2, size, 0, 0);
		failures += nz != 0;
		if (nz && getenv("MEMINIT_VERBOSE"))
			fprintf(stderr, "kmalloc(%zu): %zu non-zero bytes\n", size, nz);
		if (buf2 == buf) {
			(*same)++;
			*garbage += nz != 0;
		}
		kfree(mm, buf2);
		CHECK_MM(mm, 3);
	}
	return failures;
}

static void test_kmalloc(void)
{
	struct mm *mm;
	int same, garbage, f;

	/* control: without the options, a reused object shows its garbage */
	mm = new_mm(NULL);
	kmalloc_sizes(mm, &same, &garbage);
	CHECK_MSG(same >= 15 && garbage == same, "control: %d reused, %d with garbage", same, garbage);
	mm_destroy(mm);

	mm = new_mm("init_on_alloc=1");
	f = kmalloc_sizes(mm, &same, &garbage);
	CHECK_MSG(f == 0, "init_on_alloc: %d of 20 kmalloc sizes not zeroed", f);
	mm_destroy(mm);

	mm = new_mm("init_on_free=1");
	f = kmalloc_sizes(mm, &same, &garbage);
	CHECK_MSG(f == 0, "init_on_free: %d of 20 kmalloc sizes not zeroed", f);
	mm_destroy(mm);
}

/* init_on_free: a freed kmalloc object reads zero at once, apart from its free pointer. */
static void test_init_on_free_observable(void)
{
	for (int on = 0; on < 2; on++) {
		struct mm *mm = new_mm(on ? "init_on_free=1" : NULL);
		static const size_t sizes[] = { 16, 64, 96, 192, 1024, 4096 };
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			struct kmem_cache_info info;
			REQUIRE(!kmem_cache_get_info(kmalloc_slab(mm, sizes[k], GFP_KERNEL), &info));
			void *keep = kmalloc(mm, sizes[k], GFP_KERNEL);   /* the slab stays */
			unsigned char *p = kmalloc(mm, sizes[k], GFP_KERNEL);
			REQUIRE(keep && p);
			fill_with_garbage(p, sizes[k], 0);
			kfree(mm, p);
			size_t nz = count_nonzero(p, sizes[k], info.offset, sizeof(void *));
			if (on)
				CHECK_MSG(nz == 0, "init_on_free: kmalloc(%zu) keeps %zu non-zero bytes after kfree",
					  sizes[k], nz);
			else
				CHECK_MSG(nz > 0, "control: kmalloc(%zu) garbage not observable after kfree", sizes[k]);
			kfree(mm, keep);
		}
		CHECK_MM(mm, 3);
		mm_destroy(mm);
	}
}

/* ---- __GFP_ZERO ---- */

static void test_gfp_zero(void)
{
	struct mm *mm = new_mm(NULL);
	static const size_t sizes[] = { 8, 18, 64, 100, 192, 4096, 8192, 16384, 65536 };

	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k];
		for (int how = 0; how < 2; how++) {
			void *a = kmalloc(mm, n, GFP_KERNEL);
			REQUIRE(a);
			fill_with_garbage(a, n, 0);
			kfree(mm, a);
			void *b = how ? kzalloc(mm, n, GFP_KERNEL) : kmalloc(mm, n, GFP_KERNEL | __GFP_ZERO);
			REQUIRE(b);
			CHECK_MSG(count_nonzero(b, n, 0, 0) == 0, "%s(%zu) not zeroed (%s)",
				  how ? "kzalloc" : "kmalloc __GFP_ZERO", n, a == b ? "reused" : "new");
			kfree(mm, b);
		}
		CHECK_MM(mm, 3);
	}
	/* kcalloc too */
	unsigned char *c = kmalloc(mm, 48, GFP_KERNEL);
	REQUIRE(c);
	fill_with_garbage(c, 48, 0);
	kfree(mm, c);
	c = kcalloc(mm, 6, 8, GFP_KERNEL);
	REQUIRE(c);
	CHECK(count_nonzero(c, 48, 0, 0) == 0);
	kfree(mm, c);

	/* kmem_cache_zalloc, and control: kmem_cache_alloc shows the garbage */
	struct kmem_cache *s = kmem_cache_create(mm, "test_zalloc", 200, 0, 0, NULL);
	REQUIRE(s);
	for (int it = 0; it < 10; it++) {
		void *a = kmem_cache_alloc(s, GFP_KERNEL);
		REQUIRE(a);
		fill_with_garbage(a, 200, 0);
		kmem_cache_free(s, a);
		void *b = kmem_cache_alloc(s, GFP_KERNEL);
		REQUIRE(b);
		if (b == a && it == 0)
			CHECK(count_nonzero(b, 200, 0, 0) > 0);   /* control */
		fill_with_garbage(b, 200, 0);
		kmem_cache_free(s, b);
		void *z = kmem_cache_zalloc(s, GFP_KERNEL);
		REQUIRE(z);
		CHECK(count_nonzero(z, 200, 0, 0) == 0);
		kmem_cache_free(s, z);
	}
	/* bulk with __GFP_ZERO */
	void *bulk[BULK_SIZE];
	REQUIRE(kmem_cache_alloc_bulk(s, GFP_KERNEL, BULK_SIZE, bulk) == BULK_SIZE);
	for (int i = 0; i < BULK_SIZE; i++)
		fill_with_garbage(bulk[i], 200, 0);
	kmem_cache_free_bulk(s, BULK_SIZE, bulk);
	REQUIRE(kmem_cache_alloc_bulk(s, GFP_KERNEL | __GFP_ZERO, BULK_SIZE, bulk) == BULK_SIZE);
	int bad = 0;
	for (int i = 0; i < BULK_SIZE; i++)
		bad += count_nonzero(bulk[i], 200, 0, 0) != 0;
	CHECK_MSG(bad == 0, "%d of %d bulk __GFP_ZERO objects not zeroed", bad, BULK_SIZE);
	kmem_cache_free_bulk(s, BULK_SIZE, bulk);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

/* ---- kmem caches: do_kmem_cache_size() ---- */

static _Atomic long ctor_calls;

static void test_ctor(void *obj)
{
	ctor_calls++;
	*(unsigned int *)obj = CTOR_PATTERN;
}

/* check_buf(): zero if it must be, constructed if it has a ctor, else zero (an init option is on). */
static bool check_buf(void *buf, size_t size, bool want_ctor, bool want_zero)
{
	size_t bytes = count_nonzero(buf, size, 0, 0);
	if (want_zero)
		return bytes != 0;
	if (want_ctor)
		return *(unsigned int *)buf != CTOR_PATTERN;
	return bytes != 0;
}

/* The kernel's do_kmem_cache_size() (without SLAB_TYPESAFE_BY_RCU): failures. */
static int kmem_cache_size_test(struct mm *mm, size_t size, bool want_ctor, bool want_zero)
{
	gfp_t mask = GFP_KERNEL | (want_zero ? __GFP_ZERO : 0);
	struct kmem_cache *c = kmem_cache_create(mm, "test_cache", (unsigned)size, 1, 0, want_ctor ? test_ctor : NULL);
	void *bulk[BULK_SIZE];
	int fail = 0;

	REQUIRE(c);
	for (int iter = 0; iter < 10; iter++) {
		if (!want_ctor) {
			int ret = kmem_cache_alloc_bulk(c, mask, BULK_SIZE, bulk);
			if (!ret)
				fail++;
			for (int i = 0; i < ret; i++) {
				fail += check_buf(bulk[i], size, want_ctor, want_zero);
				fill_with_garbage(bulk[i], size, 0);
			}
			kmem_cache_free_bulk(c, (size_t)ret, bulk);
		}
		void *buf = kmem_cache_alloc(c, mask);
		REQUIRE(buf);
		fail += check_buf(buf, size, want_ctor, want_zero);
		fill_with_garbage(buf, size, want_ctor ? CTOR_BYTES : 0);
		kmem_cache_free(c, buf);
	}
	CHECK_MM(mm, 3);
	kmem_cache_destroy(c);
	return fail;
}

static void test_kmemcache(void)
{
	for (int opt = 0; opt < 3; opt++) {
		static const char *const opts[3] = { NULL, "init_on_alloc=1", "init_on_free=1" };
		struct mm *mm = new_mm(opts[opt]);
		int fail = 0, control = 0;
		for (int i = 0; i < 10; i++) {
			size_t size = (size_t)8 << (i % 8);
			bool ctor = i & 1, zero = i & 4;
			if (ctor && zero)
				continue;
			int f = kmem_cache_size_test(mm, size, ctor, zero);
			if (f && getenv("MEMINIT_VERBOSE"))
				fprintf(stderr, "%s: size %zu ctor %d zero %d: %d failures\n", opts[opt] ? opts[opt] : "-",
					size, ctor, zero, f);
			if (opt == 0 && !ctor && !zero)
				control += f > 0;     /* without the options, garbage shows */
			else
				fail += f;
		}
		if (opt == 0)
			CHECK_MSG(control > 0, "control: garbage never observable without init options");
		CHECK_MSG(fail == 0, "%s: %d failures", opts[opt] ? opts[opt] : "__GFP_ZERO/ctor", fail);
		mm_destroy(mm);
	}
}

/* ---- ctor semantics ---- */

static void test_ctor_semantics(void)
{
	for (int opt = 0; opt < 3; opt++) {
		static const char *const opts[3] = { NULL, "init_on_alloc=1", "init_on_free=1" };
		struct mm *mm = new_mm(opts[opt]);
		struct kmem_cache_info info;
		struct kmem_cache *s = kmem_cache_create(mm, "test_ctor_cache", 96, 0, 0, test_ctor);
		REQUIRE(s);
		REQUIRE(!kmem_cache_get_info(s, &info));
		REQUIRE(info.objects_per_slab > 2 && info.objects_per_slab <= 512);

		/* one allocation makes one slab: the ctor ran once for each of its objects */
		ctor_calls = 0;
		unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
		REQUIRE(p);
		CHECK_MSG(ctor_calls == (long)info.objects_per_slab, "%s: ctor ran %ld times for a slab of %u",
			  opts[opt] ? opts[opt] : "default", (long)ctor_calls, info.objects_per_slab);
		CHECK(*(unsigned int *)p == CTOR_PATTERN);

		/* the rest of the slab: constructed, no more ctor calls */
		void *o[512];
		unsigned n = info.objects_per_slab - 1;
		for (unsigned k = 0; k < n; k++) {
			o[k] = kmem_cache_alloc(s, GFP_KERNEL);
			REQUIRE(o[k]);
			CHECK(*(unsigned int *)o[k] == CTOR_PATTERN);
		}
		CHECK(ctor_calls == (long)info.objects_per_slab);

		/* client state beyond the ctor's bytes survives free + realloc: no init wipes a ctor cache */
		fill_with_garbage(p, 96, CTOR_BYTES);
		kmem_cache_free(s, p);
		unsigned char *q = kmem_cache_alloc(s, GFP_KERNEL);
		REQUIRE(q);
		CHECK(*(unsigned int *)q == CTOR_PATTERN);
		if (q == p)
			CHECK_MSG(count_nonzero(q + CTOR_BYTES, 96 - CTOR_BYTES, 0, 0) == 96 - CTOR_BYTES,
				  "%s: a ctor cache's object was wiped", opts[opt] ? opts[opt] : "default");
		CHECK(ctor_calls == (long)info.objects_per_slab);   /* not constructed again */

		/* a second slab: the ctor runs for its objects */
		void *r = kmem_cache_alloc(s, GFP_KERNEL);
		REQUIRE(r);
		CHECK(*(unsigned int *)r == CTOR_PATTERN);
		CHECK(ctor_calls == 2L * info.objects_per_slab);

		kmem_cache_free(s, q);
		kmem_cache_free(s, r);
		for (unsigned k = 0; k < n; k++)
			kmem_cache_free(s, o[k]);
		CHECK_MM(mm, 3);
		kmem_cache_destroy(s);
		CHECK_MM(mm, 3);
		mm_destroy(mm);
	}
}

/* ---- bulk of 100 ---- */

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void *const *)a, y = (uintptr_t)*(void *const *)b;
	return x < y ? -1 : x > y;
}

static void test_bulk_100(void)
{
	for (int opt = 0; opt < 2; opt++) {
		struct mm *mm = new_mm(opt ? "init_on_alloc=1 init_on_free=1" : NULL);
		static const unsigned sizes[] = { 8, 64, 200, 1000 };
		for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
			unsigned size = sizes[k];
			struct kmem_cache *s = kmem_cache_create(mm, "test_bulk100", size, 0, 0, NULL);
			void *p[BULK_SIZE], *sorted[BULK_SIZE];
			REQUIRE(s);
			for (int round = 0; round < 3; round++) {
				REQUIRE(kmem_cache_alloc_bulk(s, GFP_KERNEL, BULK_SIZE, p) == BULK_SIZE);
				memcpy(sorted, p, sizeof(p));
				qsort(sorted, BULK_SIZE, sizeof(void *), cmp_ptr);
				int overlap = 0, nonzero = 0, lost = 0;
				for (int i = 0; i < BULK_SIZE; i++) {
					overlap += !sorted[i] ||
						   (i && (uintptr_t)sorted[i] - (uintptr_t)sorted[i - 1] < size);
					if (opt)
						nonzero += count_nonzero(p[i], size, 0, 0) != 0;
				}
				CHECK_MSG(overlap == 0, "size %u: %d bulk objects NULL or overlapping", size, overlap);
				CHECK_MSG(nonzero == 0, "size %u: %d bulk objects not zeroed under init_on_alloc", size,
					  nonzero);
				for (int i = 0; i < BULK_SIZE; i++)
					memset(p[i], i + 1, size);
				for (int i = 0; i < BULK_SIZE; i++)
					for (unsigned b = 0; b < size; b++)
						if (((unsigned char *)p[i])[b] != (unsigned char)(i + 1)) {
							lost++;
							break;
						}
				CHECK_MSG(lost == 0, "size %u: %d bulk objects lost their contents", size, lost);
				CHECK_MM(mm, 3);
				kmem_cache_free_bulk(s, BULK_SIZE, p);
				CHECK_MM(mm, 3);
			}
			struct kmem_cache_info info;
			kmem_cache_get_info(s, &info);
			if (info.nr_live >= 0)
				CHECK(info.nr_live == 0);
			unsigned long r = mm_nr_reports(mm);
			kmem_cache_destroy(s);                 /* no leak reported */
			CHECK(mm_nr_reports(mm) == r);
			CHECK_MM(mm, 3);
		}
		mm_destroy(mm);
	}
}

int main(void)
{
	test_kmalloc();
	test_init_on_free_observable();
	test_gfp_zero();
	test_kmemcache();
	test_ctor_semantics();
	test_bulk_100();
	TEST_DONE();
}

/* SPDX-License-Identifier: MIT */
/*
 * test_slub_basic.c - SLUB caches: allocation and free through the fast and
 * slow paths with the checker at level 3 after every step, slabs filling,
 * going partial and empty, shrink, destroy, reset, and the object layout
 * that calculate_sizes() gives for each combination of flags.
 */
#include <stdint.h>
#include <string.h>

#include "mm/mm.h"
#include "mm/slab.h"
#include "test.h"
#include "slub_test.h"

/* ASan builds add generic KASAN's redzone after every object: strides grow. */
/* The stride without KASAN, or at least the object plus KASAN's redzone with it. */
#define STRIDE_IS(size, plain) (ASAN_BUILD ? (size) >= (plain) && (size) % 8 == 0 : (size) == (plain))


static unsigned long stat_of(struct kmem_cache *s, enum slub_stat_item i)
{
	unsigned long st[NR_SLUB_STAT_ITEMS];
	kmem_cache_get_stats(s, st);
	return st[i];
}

static bool stats_on(struct kmem_cache *s)
{
	unsigned long st[NR_SLUB_STAT_ITEMS];
	return kmem_cache_get_stats(s, st);
}

/* The contents of every live object stay what we wrote (C1 in miniature). */
static void fill(void *p, size_t n, unsigned seed)
{
	unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(seed * 131 + i);
}
static bool intact(const void *p, size_t n, unsigned seed)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i] != (unsigned char)(seed * 131 + i))
			return false;
	return true;
}

static void test_fast_and_slow(const char *variant)
{
	char opt[64];
	snprintf(opt, sizeof(opt), "slub_fastpath=%s", variant);
	struct mm *mm = new_mm(opt);
	struct kmem_cache *s = kmem_cache_create(mm, "test-64", 64, 0, 0, NULL);
	struct kmem_cache_info info;
	enum { N = 600 };
	static void *obj[N];

	REQUIRE(s);
	CHECK_MM(mm, 3);
	CHECK(kmem_cache_get_info(s, &info) == 0);
	CHECK(info.nr_slabs == 0);

	/* The first allocation takes the slow path (a new slab), the next ones the fast path. */
	obj[0] = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(obj[0]);
	CHECK_MM(mm, 3);
	if (stats_on(s)) {
		CHECK(stat_of(s, ALLOC_SLOWPATH) == 1);
		CHECK(stat_of(s, ALLOC_SLAB) == 1);
	}
	obj[1] = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(obj[1]);
	CHECK(obj[1] != obj[0]);
	if (stats_on(s))
		CHECK(stat_of(s, ALLOC_FASTPATH) == 1);
	CHECK_MM(mm, 3);

	/* Many slabs' worth: every object distinct, aligned, inside memory, contents kept. */
	for (int i = 2; i < N; i++) {
		obj[i] = kmem_cache_alloc(s, GFP_KERNEL);
		REQUIRE(obj[i]);
		CHECK(((uintptr_t)obj[i] & 7) == 0);
		CHECK((char *)obj[i] >= (char *)mm_arena_base(mm) &&
		      (char *)obj[i] + 64 <= (char *)mm_arena_base(mm) + mm_arena_size(mm));
		if (i % 97 == 0)
			CHECK_MM(mm, 3);
	}
	for (int i = 0; i < N; i++)
		fill(obj[i], 64, (unsigned)i);
	for (int i = 0; i < N; i++)
		CHECK(intact(obj[i], 64, (unsigned)i));
	CHECK(kmem_cache_get_info(s, &info) == 0);
	CHECK(info.nr_slabs >= N / info.objects_per_slab);
	if (info.nr_live >= 0)
		CHECK(info.nr_live == N);
	CHECK_MM(mm, 3);

	/* Free every other object: frees into full slabs (slow path, cpu partial lists). */
	for (int i = 0; i < N; i += 2) {
		kmem_cache_free(s, obj[i]);
		obj[i] = NULL;
		if (i % 50 == 0)
			CHECK_MM(mm, 3);
	}
	if (stats_on(s))
		CHECK(stat_of(s, FREE_SLOWPATH) > 0);
	for (int i = 1; i < N; i += 2)
		CHECK(intact(obj[i], 64, (unsigned)i));
	CHECK_MM(mm, 3);

	/* Reallocate: partial slabs get used again. */
	for (int i = 0; i < N; i += 2) {
		obj[i] = kmem_cache_alloc(s, GFP_KERNEL);
		REQUIRE(obj[i]);
		fill(obj[i], 64, (unsigned)i);
	}
	CHECK_MM(mm, 3);
	for (int i = 0; i < N; i++)
		CHECK(intact(obj[i], 64, (unsigned)i));

	/* Free in reverse: the cpu slab's objects take the fast path. */
	unsigned long fast_before = stats_on(s) ? stat_of(s, FREE_FASTPATH) : 0;
	for (int i = N - 1; i >= 0; i--) {
		kmem_cache_free(s, obj[i]);
		if (i % 61 == 0)
			CHECK_MM(mm, 3);
	}
	if (stats_on(s))
		CHECK(stat_of(s, FREE_FASTPATH) > fast_before);
	CHECK_MM(mm, 3);
	CHECK(kmem_cache_get_info(s, &info) == 0);
	if (info.nr_live >= 0)
		CHECK(info.nr_live == 0);
	/* Empty slabs beyond min_partial went back to the page allocator already. */
	CHECK(info.nr_slabs <= info.min_partial + 1 + mm_get_config(mm)->nr_cpus * (info.cpu_partial_slabs + 1));

	/* shrink: no slab left at all. */
	CHECK(kmem_cache_shrink(s) == 0);
	CHECK(kmem_cache_get_info(s, &info) == 0);
	CHECK(info.nr_slabs == 0);
	CHECK(info.nr_partial == 0);
	CHECK_MM(mm, 3);

	unsigned long reports = mm_nr_reports(mm);
	kmem_cache_destroy(s);
	CHECK(mm_nr_reports(mm) == reports);      /* no leak report */
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/* Objects of one slab freed in a random order keep S1 at every step. */
static void test_random_order(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "test-rand", 40, 0, 0, NULL);
	enum { N = 300 };
	void *obj[N];
	unsigned x = 12345;

	REQUIRE(s);
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < N; i++)
			REQUIRE((obj[i] = kmem_cache_alloc(s, GFP_KERNEL)));
		for (int i = N - 1; i > 0; i--) {
			x = x * 1103515245 + 12345;
			int j = (int)((x >> 8) % (unsigned)(i + 1));
			void *t = obj[i];
			obj[i] = obj[j];
			obj[j] = t;
		}
		for (int i = 0; i < N; i++) {
			kmem_cache_free(s, obj[i]);
			if (i % 37 == 0)
				CHECK_MM(mm, 3);
		}
		CHECK_MM(mm, 3);
	}
	kmem_cache_destroy(s);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/* calculate_sizes(): where the free pointer and the metadata go. */
static void ctor_count(void *p)
{
	memset(p, 0x42, 24);
}

static void test_layout(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache_info i;
	struct kmem_cache *s;

	/* Plain: the free pointer in the middle of the object, no metadata. */
	s = kmem_cache_create(mm, "l-plain", 64, 0, 0, NULL);
	REQUIRE(s && !kmem_cache_get_info(s, &i));
	CHECK(STRIDE_IS(i.size, 64) && i.inuse == 64 && i.offset == 32 && i.red_left_pad == 0);
	kmem_cache_destroy(s);

	/* Sizes round up to a word; the stride is a multiple of 8 (ASan granules). */
	s = kmem_cache_create(mm, "l-13", 13, 0, 0, NULL);
	REQUIRE(s && !kmem_cache_get_info(s, &i));
	CHECK(STRIDE_IS(i.size, 16) && i.object_size == 13 && i.offset == 0 && i.size % 8 == 0);
	kmem_cache_destroy(s);

	/* A constructor: the free pointer goes after the object. */
	s = kmem_cache_create(mm, "l-ctor", 24, 0, 0, ctor_count);
	REQUIRE(s && !kmem_cache_get_info(s, &i));
	CHECK(i.offset == 24 && i.inuse == 24 && STRIDE_IS(i.size, 32));
	void *o = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(o);
	for (int k = 0; k < 24; k++)
		CHECK(((unsigned char *)o)[k] == 0x42);
	kmem_cache_free(s, o);
	o = kmem_cache_alloc(s, GFP_KERNEL);    /* ctor state survives free: nothing overwrote it */
	for (int k = 0; k < 24; k++)
		CHECK(((unsigned char *)o)[k] == 0x42);
	kmem_cache_free(s, o);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);

	/* Poisoning: free pointer outside, the object poisoned. */
	s = kmem_cache_create(mm, "l-poison", 32, 0, SLAB_POISON, NULL);
	REQUIRE(s && !kmem_cache_get_info(s, &i));
	CHECK(i.offset >= i.object_size);
	kmem_cache_destroy(s);

	/* Red zone on a word-aligned object: a word of red zone, pointer in the middle of the object. */
	s = kmem_cache_create(mm, "l-rz64", 64, 0, SLAB_RED_ZONE, NULL);
	REQUIRE(s && !kmem_cache_get_info(s, &i));
	CHECK(i.inuse == 72 && i.red_left_pad == 8 && i.offset == 32);
	CHECK(STRIDE_IS(i.size, 8 + 72 + 8));
	kmem_cache_destroy(s);

	/* Red zone on a tiny object: the free pointer must not sit in the red zone [4, 8). */
	s = kmem_cache_create(mm, "l-rz4", 4, 0, SLAB_RED_ZONE, NULL);
	REQUIRE(s && !kmem_cache_get_info(s, &i));
	CHECK(i.inuse == 8);
	CHECK(i.offset >= i.inuse);
	o = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(o);
	memset(o, 0x77, 4);
	kmem_cache_free(s, o);
	CHECK(validate_slab_cache(s) == 0);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);

	/*
	 * Tracking: two struct tracks of 32 bytes after the object (6.6 on
	 * x86-64, whose SLUB_DEBUG selects STACKDEPOT: the track holds a depot
	 * handle), the free pointer in the middle of the object: 128 bytes,
	 * 32 to an order-0 slab, as /sys/kernel/slab/<cache>/ shows there.
	 */
	s = kmem_cache_create(mm, "l-user", 64, 0, SLAB_STORE_USER, NULL);
	REQUIRE(s && !kmem_cache_get_info(s, &i));
	CHECK(i.inuse == 64 && i.offset == 32);
	CHECK(STRIDE_IS(i.size, 64 + 2 * 32));
	CHECK(ASAN_BUILD || (i.order == 0 && i.objects_per_slab == 32));
	kmem_cache_destroy(s);

	/* Alignment. */
	s = kmem_cache_create(mm, "l-align", 24, 64, 0, NULL);
	REQUIRE(s && !kmem_cache_get_info(s, &i));
	CHECK(STRIDE_IS(i.size, 64) && i.size % 64 == 0);
	for (int k = 0; k < 100; k++) {
		void *a = kmem_cache_alloc(s, GFP_KERNEL);
		CHECK(((uintptr_t)a & 63) == 0);
		kmem_cache_free(s, a);
	}
	kmem_cache_destroy(s);
	s = kmem_cache_create(mm, "l-hw", 40, 0, SLAB_HWCACHE_ALIGN, NULL);
	REQUIRE(s && !kmem_cache_get_info(s, &i));
	CHECK(i.align == 64 && STRIDE_IS(i.size, 64) && i.size % 64 == 0);
	kmem_cache_destroy(s);

	/* Bad arguments: a clear refusal, no crash. */
	CHECK(kmem_cache_create(mm, "bad-align", 64, 24, 0, NULL) == NULL);
	CHECK(kmem_cache_create(mm, "bad-size", 0, 0, 0, NULL) == NULL);
	CHECK(kmem_cache_create(mm, NULL, 64, 0, 0, NULL) == NULL);
	CHECK(kmem_cache_create(mm, "too-big", 1u << 30, 0, 0, NULL) == NULL);

	/* Big objects get a higher order, always at least one object per slab. */
	s = kmem_cache_create(mm, "l-3000", 3000, 0, 0, NULL);
	REQUIRE(s && !kmem_cache_get_info(s, &i));
	CHECK(i.order >= 1 && i.objects_per_slab >= 2);
	kmem_cache_destroy(s);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/*
 * The refusals' words: where the instance prints (not quiet),
 * kmem_cache_create() says why it refused, one line each.  In a child,
 * stderr read back.
 */
static void bad_args_child(void)
{
	struct mm *mm = new_loud_mm_child();
	bool all_null = !kmem_cache_create(mm, NULL, 64, 0, 0, NULL) && !kmem_cache_create(mm, "", 64, 0, 0, NULL) &&
			!kmem_cache_create(mm, "bad-size", 0, 0, 0, NULL) &&
			!kmem_cache_create(mm, "bad-align", 64, 24, 0, NULL) &&
			!kmem_cache_create(mm, "too-big", 1u << 30, 0, 0, NULL);
	mm_destroy(mm);
	_exit(all_null ? 0 : 3);
}

static void test_bad_args_said(void)
{
	static char out[8192];
	int status = test_run_child_stderr(bad_args_child, out, sizeof(out));
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "bad-argument child: status %#x:\n%s", status, out);
	static const char *const said[] = {
		"mmfuzz: kmem_cache_create: a cache needs a name\nmmfuzz: kmem_cache_create: a cache needs a name\n",
		"mmfuzz: kmem_cache_create(bad-size): size 0 out of range 1..",
		"mmfuzz: kmem_cache_create(bad-align): align 24 is not a power of two\n",
		"mmfuzz: kmem_cache_create(too-big): size 1073741824 out of range 1..",
	};
	for (unsigned int i = 0; i < sizeof(said) / sizeof(said[0]); i++)
		CHECK_MSG(strstr(out, said[i]) != NULL, "no \"%s\" in what the refusals printed:\n%s", said[i], out);
}

/* mm_reset keeps the caches, empty - a SLAB_STORE_USER cache's list of
 * full slabs too; they work again afterwards. */
static void test_reset(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "test-reset", 100, 0, 0, NULL);
	struct kmem_cache *u = kmem_cache_create(mm, "test-reset-user", 100, 0, SLAB_STORE_USER, NULL);
	struct kmem_cache_info i;

	REQUIRE(s && u);
	for (int k = 0; k < 500; k++) {
		REQUIRE(kmem_cache_alloc(s, GFP_KERNEL));
		REQUIRE(kmem_cache_alloc(u, GFP_KERNEL));     /* its full slabs go on n->full */
	}
	CHECK_MM(mm, 3);
	CHECK(mm_reset(mm) == 0);
	CHECK_MM(mm, 3);
	struct kmem_cache *c[2] = { s, u };
	for (int k = 0; k < 2; k++) {
		CHECK(!kmem_cache_get_info(c[k], &i) && i.nr_slabs == 0 && i.nr_partial == 0);
		if (i.nr_live >= 0)
			CHECK(i.nr_live == 0);
		CHECK(validate_slab_cache(c[k]) == 0);
		void *o = kmem_cache_alloc(c[k], GFP_KERNEL);
		CHECK(o != NULL);
		kmem_cache_free(c[k], o);
	}
	CHECK_MM(mm, 3);
	CHECK(mm_nr_reports(mm) == 0);
	kmem_cache_destroy(u);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

/* Deliberate corruption of freed memory, unseen by ASan (the test plays a buggy client). */
__attribute__((no_sanitize("address"), noinline)) static uintptr_t peek(const void *p)
{
	return *(const volatile uintptr_t *)p;
}
__attribute__((no_sanitize("address"), noinline)) static void poke(void *p, uintptr_t v)
{
	*(volatile uintptr_t *)p = v;
}

/* The checker notices a corrupted free pointer (and a hardened one is not the raw pointer). */
static void test_checker_sees_corruption(void)
{
	struct mm *mm = new_mm("slab_freelist_random=0");
	struct kmem_cache *s = kmem_cache_create(mm, "test-corrupt", 64, 0, 0, NULL);
	struct mm_violation v;
	void *a, *b;

	REQUIRE(s);
	a = kmem_cache_alloc(s, GFP_KERNEL);
	b = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(a && b);
	kmem_cache_free(s, a);            /* a is the cpu freelist head, its free pointer -> the next free object */
	CHECK_MM(mm, 3);
	void *fp = (char *)a + 32;
	uintptr_t saved = peek(fp);
	CHECK(saved != (uintptr_t)b && saved != 0);    /* hardened: never the plain pointer */
	poke(fp, saved ^ 0x1000);                       /* another page: outside the slab */
	CHECK(!mm_check(mm, 3, &v));
	CHECK(v.inv == MM_INV_S3 || v.inv == MM_INV_S1);
	CHECK(v.cache && !strcmp(v.cache, "test-corrupt"));
	poke(fp, saved);
	CHECK_MM(mm, 3);
	kmem_cache_free(s, b);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

int main(void)
{
	test_fast_and_slow("cmpxchg");
	test_fast_and_slow("locked");
	test_fast_and_slow("irqoff");
	test_random_order();
	test_layout();
	test_bad_args_said();
	test_reset();
	test_checker_sees_corruption();
	TEST_DONE();
}

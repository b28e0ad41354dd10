/* SPDX-License-Identifier: MIT */
/*
 * test_slub_kasan.c - ASan as KASAN: a client's bug on a kmalloc object, a
 * kmem_cache object or a large kmalloc faults at the access with ASan's
 * report (KASAN's first line for bad frees).  Each scenario runs in a child
 * process; the parent checks that the child died with the expected report
 * - and that the correct use next to it (the last valid byte, a reuse after
 * the quarantine) does not.  First, in the parent, the slot size KASAN's
 * redzone gives an object at each step of its table.  Only meaningful in
 * ASan builds: elsewhere the test says so and passes.
 */
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mm/mm.h"
#include "mm/slab.h"
#include "test.h"
#include "slub_test.h"


#if ASAN_BUILD
static struct mm *new_mm_child(const char *options)
{
	return new_mm_or(options, _exit, 3);
}

/* Keep the compiler from proving anything about the accesses. */
static void *volatile sink;
static void touch_write(unsigned char *p) { *(volatile unsigned char *)p = 0x42; }
static unsigned char touch_read(const unsigned char *p) { return *(const volatile unsigned char *)p; }

typedef void (*scenario_fn)(void);

/* ---- the scenarios (run in the child) ---- */

static void kmalloc_oob_tail(void)       /* past the request, inside the object */
{
	struct mm *mm = new_mm_child(NULL);
	unsigned char *p = kmalloc(mm, 20, GFP_KERNEL);
	touch_write(p + 19);                  /* fine */
	touch_write(p + 20);                  /* one byte too far */
}

static void kmalloc_oob_exact(void)      /* an object that fills its class: KASAN's redzone */
{
	struct mm *mm = new_mm_child(NULL);
	unsigned char *p = kmalloc(mm, 64, GFP_KERNEL);
	unsigned char *q = kmalloc(mm, 64, GFP_KERNEL);
	sink = q;
	touch_write(p + 63);
	touch_write(p + 64);
}

static void kmalloc_uaf(void)
{
	struct mm *mm = new_mm_child(NULL);
	unsigned char *p = kmalloc(mm, 32, GFP_KERNEL);
	kfree(mm, p);
	sink = (void *)(uintptr_t)touch_read(p);
}

static void kmalloc_double_free(void)
{
	struct mm *mm = new_mm_child(NULL);
	unsigned char *p = kmalloc(mm, 128, GFP_KERNEL);
	kfree(mm, p);
	kfree(mm, p);
}

static void kmalloc_invalid_free(void)
{
	struct mm *mm = new_mm_child(NULL);
	unsigned char *p = kmalloc(mm, 128, GFP_KERNEL);
	kfree(mm, p + 8);
}

static void cache_oob(void)
{
	struct mm *mm = new_mm_child(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "kasan-40", 40, 0, 0, NULL);
	unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
	touch_write(p + 39);
	touch_write(p + 40);
}

static void cache_uaf(void)
{
	struct mm *mm = new_mm_child(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "kasan-uaf", 100, 0, 0, NULL);
	unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, p);
	touch_write(p + 50);
}

static void cache_double_free(void)
{
	struct mm *mm = new_mm_child(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "kasan-df", 100, 0, SLAB_CONSISTENCY_CHECKS, NULL);
	unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, p);
	kmem_cache_free(s, p);
}

static void cache_invalid_free(void)
{
	struct mm *mm = new_mm_child(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "kasan-if", 100, 0, 0, NULL);
	unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, p + 4);
}

static void large_oob(void)
{
	struct mm *mm = new_mm_child(NULL);
	unsigned char *p = kmalloc(mm, 10000, GFP_KERNEL);
	touch_write(p + 9999);
	touch_write(p + 10000);
}

static void large_uaf(void)
{
	struct mm *mm = new_mm_child(NULL);
	unsigned char *p = kmalloc(mm, 50000, GFP_KERNEL);
	kfree(mm, p);
	sink = (void *)(uintptr_t)touch_read(p + 20000);
}

static void large_double_free(void)
{
	struct mm *mm = new_mm_child(NULL);
	unsigned char *p = kmalloc(mm, 50000, GFP_KERNEL);
	kfree(mm, p);
	kfree(mm, p);
}

static void large_invalid_free(void)
{
	struct mm *mm = new_mm_child(NULL);
	unsigned char *p = kmalloc(mm, 50000, GFP_KERNEL);
	kfree(mm, p + 4096);
}

static void ksize_no_unpoison(void)      /* ksize() reports, it does not hand out the slack */
{
	struct mm *mm = new_mm_child(NULL);
	unsigned char *p = kmalloc(mm, 100, GFP_KERNEL);
	size_t n = ksize(mm, p);              /* 128 */
	touch_write(p + n - 1);
}

static void krealloc_shrink_oob(void)
{
	struct mm *mm = new_mm_child(NULL);
	unsigned char *p = kmalloc(mm, 100, GFP_KERNEL);
	p = krealloc(mm, p, 50, GFP_KERNEL);
	touch_write(p + 49);
	touch_write(p + 50);
}

/* krealloc() of a freed object: KASAN's check at the top of krealloc(), before it reads the object. */
static void krealloc_uaf(void)
{
	struct mm *mm = new_mm_child(NULL);
	unsigned char *p = kmalloc(mm, 100, GFP_KERNEL);
	kfree(mm, p);
	sink = krealloc(mm, p, 200, GFP_KERNEL);
}

/* The quarantine delays reuse: a stale pointer still faults after many allocations. */
static void quarantine_uaf(void)
{
	struct mm *mm = new_mm_child("kasan_quarantine=1000000");
	unsigned char *p = kmalloc(mm, 64, GFP_KERNEL);
	kfree(mm, p);
	for (int i = 0; i < 200; i++)
		kfree(mm, kmalloc(mm, 64, GFP_KERNEL));
	touch_write(p);
}

/* Without it the object is reused at once, and the stale write goes unnoticed - the
 * reason KASAN has one.  This child must *survive*. */
static void no_quarantine_reuse(void)
{
	struct mm *mm = new_mm_child(NULL);
	unsigned char *p = kmalloc(mm, 64, GFP_KERNEL);
	kfree(mm, p);
	unsigned char *q = kmalloc(mm, 64, GFP_KERNEL);
	if (q != p)
		_exit(4);
	touch_write(p);
	kfree(mm, q);
	mm_destroy(mm);
}

/* Correct use next to the limits must pass: fill every kmalloc class to the byte. */
static void exact_use_is_fine(void)
{
	struct mm *mm = new_mm_child("kasan_quarantine=100000");
	for (size_t size = 1; size <= 20000; size += (size < 300 ? 1 : 97)) {
		unsigned char *p = kmalloc(mm, size, GFP_KERNEL);
		memset(p, 0x11, size);
		p = krealloc(mm, p, size + 5, GFP_KERNEL);
		memset(p, 0x22, size + 5);
		kfree(mm, p);
	}
	struct mm_violation v;
	if (!mm_check(mm, 3, &v)) {
		fprintf(stderr, "%s\n", v.msg);
		_exit(5);
	}
	mm_destroy(mm);
}

/*
 * The quarantine on debug caches whose free pointer lies outside the
 * object (poison; a ctor): objects leaving it are freed without a report,
 * and nothing stays behind.
 */
static int qctor_calls;
static void qctor(void *obj) { (void)obj; qctor_calls++; }

static void quarantine_debug_caches(void)
{
	struct mm *mm = new_mm_child("kasan_quarantine=100000 slub_debug=FPZU");
	struct kmem_cache *c = kmem_cache_create(mm, "kasan-qctor", 64, 0, 0, qctor);
	if (!c)
		_exit(6);
	for (int round = 0; round < 4; round++) {
		void *p[200];
		for (int i = 0; i < 200; i++) {
			p[i] = round & 1 ? kmem_cache_alloc(c, GFP_KERNEL) : kmalloc(mm, 64, GFP_KERNEL);
			if (!p[i])
				_exit(7);
		}
		for (int i = 0; i < 200; i++) {
			if (round & 1)
				kmem_cache_free(c, p[i]);
			else
				kfree(mm, p[i]);
		}
	}
	kmem_cache_shrink(c);
	kmem_cache_destroy(c);
	if (mm_nr_reports(mm) != 0) {
		fprintf(stderr, "%lu reports\n", (unsigned long)mm_nr_reports(mm));
		_exit(8);
	}
	struct mm_violation v;
	if (!mm_check(mm, 3, &v)) {
		fprintf(stderr, "%s\n", v.msg);
		_exit(5);
	}
	mm_destroy(mm);
}

/* ---- the parent ---- */

/*
 * The slot each object gets: kasan_cache_create() grows it to the object
 * plus optimal_redzone() of mm/kasan/generic.c, whose table steps at 48, 96,
 * 448, 3968, 16128, 32256 and 64512 bytes.  Each step is checked at its last
 * size and the next multiple of 8, against the kernel's table written out
 * here (the mutation audit found a 448-byte object given the 128-byte
 * redzone unnoticed: bench/results/mutants, cache.c:44).
 */
static void redzone_sizes(void)
{
	static const struct { unsigned int object_size, redzone; } table[] = {
		{ 8, 16 },      { 48, 16 },     { 56, 32 },      { 96, 32 },      { 104, 64 },
		{ 448, 64 },    { 456, 128 },   { 3968, 128 },   { 3976, 256 },   { 16128, 256 },
		{ 16136, 512 }, { 32256, 512 }, { 32264, 1024 }, { 64512, 1024 }, { 64520, 2048 },
	};
	struct mm *mm = new_mm(NULL);
	unsigned int checked = 0;

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		unsigned int size = table[i].object_size;
		struct kmem_cache *s = kmem_cache_create(mm, "kasan-rz", size, 0, 0, NULL);
		struct kmem_cache_info info;

		CHECK_MSG(s != NULL, "no cache of %u-byte objects", size);
		if (!s)
			continue;
		REQUIRE(kmem_cache_get_info(s, &info) == 0);
		unsigned int want = (size + table[i].redzone + info.align - 1) / info.align * info.align;
		CHECK_MSG(info.size == want, "%u-byte objects: a %u-byte slot, expected %u (redzone %u, align %u)", size,
			  info.size, want, table[i].redzone, info.align);
		void *p = kmem_cache_alloc(s, GFP_KERNEL);
		CHECK(p != NULL);
		if (p)
			kmem_cache_free(s, p);
		kmem_cache_destroy(s);
		checked++;
	}
	CHECK(checked == sizeof(table) / sizeof(table[0]));
	CHECK(mm_nr_reports(mm) == 0);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/* Run @fn in a child; return its stderr (static buffer) and wait status. */
static const char *run_child(scenario_fn fn, int *status)
{
	static char buf[1 << 16];
	*status = test_run_child_stderr(fn, buf, sizeof(buf));
	return buf;
}

static void expect_report(const char *name, scenario_fn fn, const char *what, const char *where)
{
	int status;
	const char *out = run_child(fn, &status);
	bool died = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	CHECK_MSG(died, "%s: the child survived", name);
	CHECK_MSG(strstr(out, "AddressSanitizer") != NULL, "%s: no ASan report:\n%s", name, out);
	CHECK_MSG(strstr(out, what) != NULL, "%s: no \"%s\" in:\n%s", name, what, out);
	if (where)
		CHECK_MSG(strstr(out, where) != NULL, "%s: the report does not name %s:\n%s", name, where, out);
}

static void expect_clean(const char *name, scenario_fn fn)
{
	int status;
	const char *out = run_child(fn, &status);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status %d:\n%s", name, status, out);
}
/*
 * The quarantine's byte count survives draining one cache out of it
 * (kmem_cache_shrink(), as quarantine_remove_cache()): what it keeps of
 * the other caches still counts against kasan_quarantine=BYTES.  B's
 * objects 0..9 and A's go in, A is drained, B's 10..19 go in: B's twenty
 * fill the quarantine to its limit exactly, and the twenty-first evicts
 * B's object 0, which the next allocation (the cpu freelist's head) then
 * returns.  Had the drain forgotten B's first ten, nothing would be
 * evicted yet and the allocation would return a fresh object.
 */
static void quarantine_count_after_drain(void)
{
	enum { N = 20 };
	struct mm *mm = new_mm_child(NULL);
	struct kmem_cache *a = kmem_cache_create(mm, "q-a", 64, 0, 0, NULL);
	struct kmem_cache *b = kmem_cache_create(mm, "q-b", 64, 0, 0, NULL);
	struct kmem_cache_info ia, ib;
	char opt[64], err[128];
	void *ob[N + 1], *oa[N / 2];

	if (!a || !b || kmem_cache_get_info(a, &ia) || kmem_cache_get_info(b, &ib) || ia.size != ib.size)
		_exit(3);
	snprintf(opt, sizeof(opt), "kasan_quarantine=%u", N * ib.size);
	if (mm_slub_configure(mm, opt, err, sizeof(err)))
		_exit(4);
	for (int i = 0; i <= N; i++)
		if (!(ob[i] = kmem_cache_alloc(b, GFP_KERNEL)))
			_exit(5);
	for (int i = 0; i < N / 2; i++)
		if (!(oa[i] = kmem_cache_alloc(a, GFP_KERNEL)))
			_exit(5);
	for (int i = 0; i < N / 2; i++)
		kmem_cache_free(b, ob[i]);
	for (int i = 0; i < N / 2; i++)
		kmem_cache_free(a, oa[i]);
	kmem_cache_shrink(a);                        /* A's ten leave the quarantine */
	for (int i = N / 2; i < N; i++)
		kmem_cache_free(b, ob[i]);               /* B's twenty: the limit, to the byte */
	void *fresh = kmem_cache_alloc(b, GFP_KERNEL);  /* nothing evicted yet */
	if (fresh == ob[0]) {
		fprintf(stderr, "B's first object left the quarantine early\n");
		_exit(6);
	}
	kmem_cache_free(b, ob[N]);                   /* the twenty-first: B's object 0 is evicted */
	void *again = kmem_cache_alloc(b, GFP_KERNEL);
	if (again != ob[0]) {
		fprintf(stderr, "after the limit was passed, the allocation returned %p, not B's first object %p: "
			"the quarantine still holds it\n", again, ob[0]);
		_exit(7);
	}
	kmem_cache_free(b, again);
	kmem_cache_free(b, fresh);
	mm_destroy(mm);
}


int main(void)
{
	redzone_sizes();
	expect_report("kmalloc OOB past the request", kmalloc_oob_tail, "use-after-poison", "kmalloc_oob_tail");
	expect_report("kmalloc OOB past a full object", kmalloc_oob_exact, "use-after-poison", "kmalloc_oob_exact");
	expect_report("kmalloc UAF", kmalloc_uaf, "use-after-poison", "kmalloc_uaf");
	expect_report("kmalloc double free", kmalloc_double_free, "KASAN: double-free", "kmalloc-128");
	expect_report("kmalloc invalid free", kmalloc_invalid_free, "KASAN: invalid-free", "kmalloc-128");
	expect_report("cache OOB", cache_oob, "use-after-poison", "cache_oob");
	expect_report("cache UAF", cache_uaf, "use-after-poison", "cache_uaf");
	expect_report("cache double free", cache_double_free, "KASAN: double-free", "kasan-df");
	expect_report("cache invalid free", cache_invalid_free, "KASAN: invalid-free", "kasan-if");
	expect_report("large OOB", large_oob, "use-after-poison", "large_oob");
	expect_report("large UAF", large_uaf, "use-after-poison", "large_uaf");
	expect_report("large double free", large_double_free, "KASAN: double-free", NULL);
	expect_report("large invalid free", large_invalid_free, "KASAN: invalid-free", NULL);
	expect_report("ksize slack", ksize_no_unpoison, "use-after-poison", "ksize_no_unpoison");
	expect_report("krealloc shrink", krealloc_shrink_oob, "use-after-poison", "krealloc_shrink_oob");
	expect_report("krealloc UAF", krealloc_uaf, "KASAN: use-after-free in krealloc", "kmalloc-128");
	expect_report("quarantine UAF", quarantine_uaf, "use-after-poison", "quarantine_uaf");
	expect_clean("no quarantine: reuse", no_quarantine_reuse);
	expect_clean("exact use", exact_use_is_fine);
	expect_clean("quarantine on debug caches", quarantine_debug_caches);
	expect_clean("quarantine count after a cache's drain", quarantine_count_after_drain);
	TEST_DONE();
}
#else
int main(void)
{
	TEST_SKIP("not an ASan build, nothing to check");
}
#endif

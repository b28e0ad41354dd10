/* SPDX-License-Identifier: MIT */
/*
 * test_slub_kunit.c - lib/slub_kunit.c's cases, each run the way the
 * kernel file runs it and, beyond test_slub_debug.c (which covers the
 * kernel's own flags once), over every way of switching the debugging on:
 *
 *   kernel   the flags slub_kunit passes (SLAB_RED_ZONE, SLAB_POISON, ...)
 *   FZP      SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON: the
 *            free pointer moves out of the object, the red zone and the
 *            poison share the object's bytes, and the F checks run too
 *   string   no flags: "slub_debug=FZP,TestSlub_*" names the caches
 *
 * For every case: validate_slab_cache()'s return equals the kernel's
 * slab_errors, the report counter advances by exactly as much, a second
 * validation (after the repair) finds 0, and the checker at level 3 is
 * clean.  test_kfree_rcu is not modelled (no RCU).
 *
 * Corruption goes through helpers ASan does not instrument (the kernel's
 * kasan_disable_current()).
 */
#include <stdint.h>
#include <string.h>

#include "mm/mm.h"
#include "mm/slab.h"
#include "test.h"
#include "slub_test.h"


enum mode { KERNEL, FZP, STRING, NR_MODES };
static const char *const mode_name[NR_MODES] = { "kernel flags", "FZP flags", "slub_debug string" };

__attribute__((no_sanitize("address"), noinline)) static void poke8(void *p, unsigned char v)
{
	*(volatile unsigned char *)p = v;
}
__attribute__((no_sanitize("address"), noinline)) static unsigned char peek8(const void *p)
{
	return *(const volatile unsigned char *)p;
}
__attribute__((no_sanitize("address"), noinline)) static uintptr_t peekw(const void *p)
{
	uintptr_t v;
	memcpy(&v, (const void *)p, sizeof(v));
	return v;
}
__attribute__((no_sanitize("address"), noinline)) static void pokew(void *p, uintptr_t v)
{
	memcpy(p, &v, sizeof(v));
}

static struct mm *new_mm_mode(enum mode m)
{
	return new_mm(m == STRING ? "slub_debug=FZP,TestSlub_*" : NULL);
}

/* test_kmem_cache_create() with the mode's flags; extra (SLAB_KMALLOC, SLAB_STORE_USER) always kept. */
static struct kmem_cache *make(struct mm *mm, enum mode m, const char *name, unsigned size, slab_flags_t kflags,
			       slab_flags_t extra)
{
	slab_flags_t f = m == KERNEL ? kflags : m == FZP ? SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON : 0;
	struct kmem_cache *s = kmem_cache_create(mm, name, size, 0, f | extra | SLAB_NO_MERGE, NULL);
	struct kmem_cache_info i;
	REQUIRE(s);
	REQUIRE(!kmem_cache_get_info(s, &i));
	/* the debugging asked for is in force */
	REQUIRE((i.flags & kflags & SLAB_DEBUG_FLAGS) == (kflags & SLAB_DEBUG_FLAGS));
	if (m != KERNEL)
		REQUIRE((i.flags & (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON)) ==
			(SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON));
	return s;
}

/* validate_slab_cache() finds @want errors, reports exactly that many, then 0 after the repair. */
#define EXPECT_ERRORS(mm, s, want, m, what)                                                          \
	do {                                                                                        \
		unsigned long r0_ = mm_nr_reports(mm);                                              \
		long got_ = validate_slab_cache(s);                                                 \
		CHECK_MSG(got_ == (want), "%s (%s): validate_slab_cache %ld, kernel %d", what,      \
			  mode_name[m], got_, (int)(want));                                         \
		CHECK_MSG(mm_nr_reports(mm) - r0_ == (unsigned long)(want),                         \
			  "%s (%s): %lu reports, kernel %d", what, mode_name[m],                    \
			  mm_nr_reports(mm) - r0_, (int)(want));                                    \
	} while (0)

#define EXPECT_CLEAN(mm, s, m, what)                                                                 \
	do {                                                                                        \
		EXPECT_ERRORS(mm, s, 0, m, what " after repair");                                   \
		CHECK_MM(mm, 3);                                                                    \
	} while (0)

/* test_clobber_zone: p[64] = 0x12 on an allocated object: 2 */
static void test_clobber_zone(enum mode m)
{
	struct mm *mm = new_mm_mode(m);
	struct kmem_cache *s = make(mm, m, "TestSlub_RZ_alloc", 64, SLAB_RED_ZONE, 0);
	unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(p);
	poke8(p + 64, 0x12);
	EXPECT_ERRORS(mm, s, 2, m, "test_clobber_zone");
	EXPECT_CLEAN(mm, s, m, "test_clobber_zone");
	CHECK(peek8(p + 64) != 0x12);              /* restored */
	kmem_cache_free(s, p);
	CHECK_MM(mm, 3);
	unsigned long r = mm_nr_reports(mm);
	kmem_cache_destroy(s);
	CHECK(mm_nr_reports(mm) == r);
	mm_destroy(mm);
}

/* test_next_pointer: 3, then 2 after restoring the pointer, then 0 */
static void test_next_pointer(enum mode m)
{
	struct mm *mm = new_mm_mode(m);
	struct kmem_cache *s = make(mm, m, "TestSlub_next_ptr_free", 64, SLAB_POISON, 0);
	struct kmem_cache_info info;
	unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(p);
	kmem_cache_get_info(s, &info);
	kmem_cache_free(s, p);
	uintptr_t tmp = peekw(p + info.offset);
	poke8(p + info.offset, (unsigned char)~peek8(p + info.offset));
	/*
	 * With red zones (FZP), the free objects cut off the freelist are
	 * checked as allocated: the first one's left red zone reads
	 * SLUB_RED_INACTIVE, one BUG and one FIX, so 2 more than the kernel's
	 * SLAB_POISON-only count - 6.6's check_object() stops at the first bad
	 * red zone, so the right one is not looked at.  Once the pointer is
	 * restored the object is free again, and its left red zone, restored
	 * to SLUB_RED_ACTIVE by the first round, is the 2 more of the second.
	 */
	int rz = m == KERNEL ? 0 : 2;
	EXPECT_ERRORS(mm, s, 3 + rz, m, "test_next_pointer (corrupt)");
	if (rz)
		CHECK_MSG(strstr(mm_last_report(mm)->msg, "Redzone") != NULL, "%s", mm_last_report(mm)->msg);
	pokew(p + info.offset, tmp);
	EXPECT_ERRORS(mm, s, 2 + rz, m, "test_next_pointer (restored)");
	EXPECT_CLEAN(mm, s, m, "test_next_pointer");
	/* the cache still works */
	void *a = kmem_cache_alloc(s, GFP_KERNEL), *b = kmem_cache_alloc(s, GFP_KERNEL);
	CHECK(a && b && a != b);
	kmem_cache_free(s, a);
	kmem_cache_free(s, b);
	EXPECT_CLEAN(mm, s, m, "test_next_pointer, reused");
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

/*
 * One byte of a freed object overwritten (test_first_word,
 * test_clobber_50th_byte, test_clobber_redzone_free): the kernel counts 2,
 * and the report names the cache.
 */
static void clobber_freed(enum mode m, const char *what, const char *cache, slab_flags_t kflags,
			  unsigned int off, unsigned char v)
{
	struct mm *mm = new_mm_mode(m);
	struct kmem_cache *s = make(mm, m, cache, 64, kflags, 0);
	unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(p);
	kmem_cache_free(s, p);
	poke8(p + off, v);
	EXPECT_ERRORS(mm, s, 2, m, what);
	CHECK_MSG(strstr(mm_last_report(mm)->msg, cache) != NULL, "%s (%s): %s", what, mode_name[m],
		  mm_last_report(mm)->msg);
	EXPECT_ERRORS(mm, s, 0, m, what);               /* after the repair */
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

/* test_first_word: *p = 0x78 on a free poisoned object: 2 */
static void test_first_word(enum mode m)
{
	clobber_freed(m, "test_first_word", "TestSlub_1th_word_free", SLAB_POISON, 0, 0x78);
}

/* test_clobber_50th_byte: p[50] = 0x9a on a free poisoned object: 2 */
static void test_clobber_50th_byte(enum mode m)
{
	clobber_freed(m, "test_clobber_50th_byte", "TestSlub_50th_word_free", SLAB_POISON, 50, 0x9a);
}

/* test_clobber_redzone_free: p[64] = 0xab after the free: 2 */
static void test_clobber_redzone_free(enum mode m)
{
	clobber_freed(m, "test_clobber_redzone_free", "TestSlub_RZ_free", SLAB_RED_ZONE, 64, 0xab);
}

/* test_kmalloc_redzone_access: p[18], p[19] of an 18-byte kmalloc from a 32-byte cache: 2 */
static void test_kmalloc_redzone_access(enum mode m)
{
	struct mm *mm = new_mm_mode(m);
	struct kmem_cache *s = make(mm, m, "TestSlub_RZ_kmalloc", 32, SLAB_RED_ZONE, SLAB_KMALLOC | SLAB_STORE_USER);
	unsigned char *p = kmalloc_trace(s, GFP_KERNEL, 18);
	REQUIRE(p);
	poke8(p + 18, 0xab);
	poke8(p + 19, 0xab);
	EXPECT_ERRORS(mm, s, 2, m, "test_kmalloc_redzone_access");
	EXPECT_CLEAN(mm, s, m, "test_kmalloc_redzone_access");
	kmem_cache_free(s, p);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

/* test_krealloc_redzone_zeroing: the kmalloc red zone follows krealloc; validation finds 0 */
static void test_krealloc_redzone_zeroing(enum mode m)
{
	struct mm *mm = new_mm_mode(m);
	struct kmem_cache *s = make(mm, m, "TestSlub_krealloc", 64, SLAB_RED_ZONE, SLAB_KMALLOC | SLAB_STORE_USER);
	unsigned char *p = kmalloc_trace(s, GFP_KERNEL, 48);
	int bad = 0;
	REQUIRE(p);
	memset(p, 0xff, 48);
	p = krealloc(mm, p, 40, GFP_KERNEL | __GFP_ZERO);
	REQUIRE(p);
	for (int i = 40; i < 64; i++)
		bad += peek8(p + i) != 0xcc;        /* SLUB_RED_ACTIVE */
	p = krealloc(mm, p, 56, GFP_KERNEL | __GFP_ZERO);
	REQUIRE(p);
	for (int i = 40; i < 56; i++)
		bad += p[i] != 0;
	for (int i = 56; i < 64; i++)
		bad += peek8(p + i) != 0xcc;
	CHECK_MSG(bad == 0, "test_krealloc_redzone_zeroing (%s): %d bytes wrong", mode_name[m], bad);
	EXPECT_ERRORS(mm, s, 0, m, "test_krealloc_redzone_zeroing");
	memset(p, 0xff, 56);
	p = krealloc(mm, p, 112, GFP_KERNEL | __GFP_ZERO);
	REQUIRE(p);
	bad = 0;
	for (int i = 0; i < 56; i++)
		bad += p[i] != 0xff;
	for (int i = 56; i < 112; i++)
		bad += p[i] != 0;
	CHECK_MSG(bad == 0, "test_krealloc_redzone_zeroing grow (%s): %d bytes wrong", mode_name[m], bad);
	kfree(mm, p);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

/* test_leak_destroy: one object left, kmem_cache_destroy: 2 */
static void test_leak_destroy(enum mode m)
{
	struct mm *mm = new_mm_mode(m);
	struct kmem_cache *s = make(mm, m, "TestSlub_leak_destroy", 64, 0, 0);
	void *p = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(p);
	unsigned long r = mm_nr_reports(mm);
	kmem_cache_destroy(s);
	CHECK_MSG(mm_nr_reports(mm) - r == 2, "test_leak_destroy (%s): %lu reports, kernel 2", mode_name[m],
		  mm_nr_reports(mm) - r);
	CHECK_MM(mm, 3);
	kmem_cache_free(s, p);                  /* the leaked object stays valid */
	CHECK_MM(mm, 3);
	CHECK(mm_reset(mm) == 0);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

int main(void)
{
	for (int m = 0; m < NR_MODES; m++) {
		test_clobber_zone(m);
		/* the kernel builds test_next_pointer, test_first_word and
		 * test_clobber_50th_byte only without KASAN */
		if (!ASAN_BUILD) {
			test_next_pointer(m);
			test_first_word(m);
			test_clobber_50th_byte(m);
		}
		test_clobber_redzone_free(m);
		test_kmalloc_redzone_access(m);
		test_krealloc_redzone_zeroing(m);
		test_leak_destroy(m);
	}
	TEST_DONE();
}

/* SPDX-License-Identifier: MIT */
/*
 * test_slub_debug.c - slub_debug: the option string, corruption found by
 * validate_slab_cache() and by the free path with the kernel's words and
 * report counts (each BUG line and each FIX line counts one, as
 * slub_kunit's slab_errors), repair so a second validation is clean, bad
 * frees refused with the allocator intact, the naive double-free check of
 * hardened freelists, and the leak report of kmem_cache_destroy() (its
 * count, and the printed lines: each held object and where it was
 * allocated).
 *
 * Corruption is done through helpers ASan does not instrument: the test
 * plays a buggy client whose writes the ASan build would otherwise stop
 * at the faulting access (that is test_slub_kasan.c's business).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "mm/cpu.h"
#include "mm/mm.h"
#include "mm/slab.h"
#include "test.h"
#include "slub_test.h"

/* Under ASan, KASAN catches bad frees first and stops the program (test_slub_kasan.c). */


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
	return *(const volatile uintptr_t *)p;
}
__attribute__((no_sanitize("address"), noinline)) static void pokew(void *p, uintptr_t v)
{
	*(volatile uintptr_t *)p = v;
}

static bool last_says(struct mm *mm, const char *what)
{
	const struct mm_report *r = mm_last_report(mm);
	return strstr(r->msg, what) != NULL;
}

/* The report before the last one is not kept; collect reasons by reporting into a log instead. */
static void test_option_string(void)
{
	struct mm *mm = new_mm("slub_debug=FZP,kmalloc-64;U,kmalloc-1*");
	struct kmem_cache_info i;

	CHECK(!kmem_cache_get_info(kmalloc_slab(mm, 64, GFP_KERNEL), &i));
	CHECK((i.flags & (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON)) ==
	      (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON));
	CHECK(!(i.flags & SLAB_STORE_USER));
	CHECK(i.red_left_pad == 64);          /* kmalloc-64 is 64-byte aligned: so is its red zone */
	CHECK(!kmem_cache_get_info(kmalloc_slab(mm, 128, GFP_KERNEL), &i));
	CHECK((i.flags & SLAB_DEBUG_FLAGS) == SLAB_STORE_USER);
	CHECK(!kmem_cache_get_info(kmalloc_slab(mm, 1024, GFP_KERNEL), &i));
	CHECK((i.flags & SLAB_DEBUG_FLAGS) == SLAB_STORE_USER);
	CHECK(!kmem_cache_get_info(kmalloc_slab(mm, 32, GFP_KERNEL), &i));
	CHECK((i.flags & SLAB_DEBUG_FLAGS) == 0);

	/* A refused option without an error buffer (NULL, or a length of 0) is refused all the same. */
	char one = 'x';
	CHECK(mm_slub_configure(mm, "no_such_option=1", NULL, 0) < 0);
	CHECK(mm_slub_configure(mm, "no_such_option=1", NULL, 64) < 0);
	CHECK(mm_slub_configure(mm, "no_such_option=1", &one, 0) < 0 && one == 'x');
	CHECK(mm_slub_configure(NULL, "slub_debug=F", NULL, 0) < 0);

	/* A '*' anywhere ends the name's prefix, the rest ignored (6.6's kmem_cache_flags()). */
	struct mm *mg = new_mm("slub_debug=F,kmal*64");
	CHECK(!kmem_cache_get_info(kmalloc_slab(mg, 8, GFP_KERNEL), &i));
	CHECK_MSG((i.flags & SLAB_DEBUG_FLAGS) == SLAB_CONSISTENCY_CHECKS, "kmalloc-8 under kmal*64: flags %#x",
		  i.flags & SLAB_DEBUG_FLAGS);
	struct kmem_cache *other = kmem_cache_create(mg, "other", 64, 0, 0, NULL);
	CHECK(other && !kmem_cache_get_info(other, &i) && (i.flags & SLAB_DEBUG_FLAGS) == 0);
	kmem_cache_destroy(other);
	mm_destroy(mg);

	/* kmalloc-64 with U: 64 + two 32-byte struct tracks + orig_size, 64-aligned: 192, as 6.6 on x86-64 */
	struct mm *mu = new_mm("slub_debug=U,kmalloc-64");
	CHECK(!kmem_cache_get_info(kmalloc_slab(mu, 64, GFP_KERNEL), &i));
	CHECK((i.flags & SLAB_DEBUG_FLAGS) == SLAB_STORE_USER);
	CHECK_MSG(ASAN_BUILD || i.size == 192, "kmalloc-64 with U: stride %u, 6.6 has 192", i.size);
	mm_destroy(mu);

	/*
	 * O: no red zone, poison or tracking on a cache they would move to a
	 * higher order (kmem_cache_open()'s disable_higher_order_debug); F
	 * stays, and a cache whose order they leave alone keeps them.
	 */
	for (int with_o = 0; with_o <= 1; with_o++) {
		struct mm *mo = new_mm(with_o ? "slub_debug=FZPUO,big,small" : "slub_debug=FZPU,big,small");
		struct kmem_cache *big = kmem_cache_create(mo, "big", 4096, 0, 0, NULL);
		struct kmem_cache *small = kmem_cache_create(mo, "small", 64, 0, 0, NULL);
		const slab_flags_t fzpu = SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER;
		REQUIRE(big && small);
		CHECK(!kmem_cache_get_info(big, &i));
		CHECK_MSG((i.flags & SLAB_DEBUG_FLAGS) == (with_o ? SLAB_CONSISTENCY_CHECKS : fzpu),
			  "O %d: a 4096-byte cache has debug flags %#x", with_o, i.flags & SLAB_DEBUG_FLAGS);
		CHECK_MSG(ASAN_BUILD || (with_o ? i.size == 4096 : i.size > 4096), "O %d: stride %u", with_o, i.size);
		CHECK(!kmem_cache_get_info(small, &i) && (i.flags & SLAB_DEBUG_FLAGS) == fzpu);
		void *o = kmem_cache_alloc(big, GFP_KERNEL);
		CHECK(o != NULL);
		kmem_cache_free(big, o);
		CHECK(validate_slab_cache(big) == 0);
		kmem_cache_destroy(small);
		kmem_cache_destroy(big);
		CHECK(mm_nr_reports(mo) == 0);
		CHECK_MM(mo, 3);
		mm_destroy(mo);
	}

	/* a new cache picks up a global block */
	char err[128];
	CHECK(mm_slub_configure(mm, "slub_debug=P", err, sizeof(err)) == 0);
	struct kmem_cache *s = kmem_cache_create(mm, "anything", 40, 0, 0, NULL);
	CHECK(s && !kmem_cache_get_info(s, &i) && (i.flags & SLAB_DEBUG_FLAGS) == SLAB_POISON);
	kmem_cache_destroy(s);
	/* a bare slub_debug means FZPU */
	CHECK(mm_slub_configure(mm, "slub_debug", err, sizeof(err)) == 0);
	s = kmem_cache_create(mm, "everything", 40, 0, 0, NULL);
	CHECK(s && !kmem_cache_get_info(s, &i) &&
	      (i.flags & SLAB_DEBUG_FLAGS) == (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER));
	/* debug caches work, leave the fast path, and validate clean */
	void *o[200];
	for (int k = 0; k < 200; k++) {
		o[k] = kmem_cache_alloc(s, GFP_KERNEL);
		REQUIRE(o[k]);
		memset(o[k], k, 40);
	}
	for (int k = 0; k < 200; k += 2)
		kmem_cache_free(s, o[k]);
	unsigned long st[NR_SLUB_STAT_ITEMS];
	if (kmem_cache_get_stats(s, st))
		CHECK(st[ALLOC_FASTPATH] == 0 && st[FREE_FASTPATH] == 0);
	CHECK(validate_slab_cache(s) == 0);
	CHECK_MM(mm, 3);
	for (int k = 1; k < 200; k += 2)
		kmem_cache_free(s, o[k]);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);

	/* unknown options are refused with a message */
	CHECK(mm_slub_configure(mm, "slub_debug=Q", err, sizeof(err)) != 0);
	CHECK(mm_slub_configure(mm, "no_such_option=1", err, sizeof(err)) != 0);
	CHECK(strstr(err, "no_such_option") != NULL);
	/* layout options on caches that hold slabs: -EBUSY, those caches keep theirs */
	void *k = kmalloc(mm, 64, GFP_KERNEL);
	CHECK(mm_slub_configure(mm, "slub_debug=-", err, sizeof(err)) == -16);
	CHECK(!kmem_cache_get_info(kmalloc_slab(mm, 64, GFP_KERNEL), &i) && (i.flags & SLAB_RED_ZONE));
	kfree(mm, k);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/* slub_kunit's clobber tests: a byte in a red zone or in poison, found and repaired. */
static void test_clobber(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s;
	unsigned long r;
	unsigned char *p;

	/* right red zone of an allocated object */
	s = kmem_cache_create(mm, "TestSlub_RZ_alloc", 64, 0, SLAB_RED_ZONE, NULL);
	p = kmem_cache_alloc(s, GFP_KERNEL);
	poke8(p + 64, 0x12);
	r = mm_nr_reports(mm);
	CHECK(validate_slab_cache(s) == 2);
	CHECK(mm_nr_reports(mm) == r + 2);
	CHECK(validate_slab_cache(s) == 0);           /* repaired */
	kmem_cache_free(s, p);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);

	/* left red zone */
	s = kmem_cache_create(mm, "TestSlub_RZ_left", 64, 0, SLAB_RED_ZONE, NULL);
	p = kmem_cache_alloc(s, GFP_KERNEL);
	poke8(p - 1, 0x34);
	CHECK(validate_slab_cache(s) == 2);
	kmem_cache_free(s, p);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);

	/* the red zone of a free object */
	s = kmem_cache_create(mm, "TestSlub_RZ_free", 64, 0, SLAB_RED_ZONE, NULL);
	p = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, p);
	poke8(p + 64, 0xab);
	CHECK(validate_slab_cache(s) == 2);
	CHECK(validate_slab_cache(s) == 0);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);

	/* poison: the first word and the 50th byte of a free object */
	s = kmem_cache_create(mm, "TestSlub_1th_word_free", 64, 0, SLAB_POISON, NULL);
	p = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, p);
	poke8(p, 0x78);
	CHECK(validate_slab_cache(s) == 2);
	CHECK(last_says(mm, "FIX TestSlub_1th_word_free"));
	CHECK(validate_slab_cache(s) == 0);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);
	s = kmem_cache_create(mm, "TestSlub_50th_word_free", 64, 0, SLAB_POISON, NULL);
	p = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, p);
	poke8(p + 50, 0x9a);
	r = mm_nr_reports(mm);
	CHECK(validate_slab_cache(s) == 2);
	CHECK(validate_slab_cache(s) == 0);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);

	/* the next pointer of a free object: freechain corrupt, count wrong, fixed; then the count again */
	s = kmem_cache_create(mm, "TestSlub_next_ptr_free", 64, 0, SLAB_POISON, NULL);
	struct kmem_cache_info info;
	kmem_cache_get_info(s, &info);
	p = kmem_cache_alloc(s, GFP_KERNEL);
	kmem_cache_free(s, p);
	uintptr_t tmp = peekw(p + info.offset);
	poke8(p + info.offset, (unsigned char)~peek8(p + info.offset));
	CHECK(validate_slab_cache(s) == 3);
	pokew(p + info.offset, tmp);
	CHECK(validate_slab_cache(s) == 2);
	CHECK(validate_slab_cache(s) == 0);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);

	/* the kmalloc red zone: bytes past the request of a kmalloc from a tracked cache */
	s = kmem_cache_create(mm, "TestSlub_RZ_kmalloc", 32, 0, SLAB_KMALLOC | SLAB_STORE_USER | SLAB_RED_ZONE, NULL);
	p = kmalloc_trace(s, GFP_KERNEL, 18);
	REQUIRE(p);
	poke8(p + 18, 0xab);
	poke8(p + 19, 0xab);
	CHECK(validate_slab_cache(s) == 2);
	CHECK(strstr(mm_last_report(mm)->msg, "Restoring kmalloc Redzone") != NULL);
	kmem_cache_free(s, p);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

/* krealloc moves the kmalloc red zone with the size (slub_kunit test_krealloc_redzone_zeroing). */
static void test_krealloc_redzone(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "TestSlub_krealloc", 64, 0,
						 SLAB_KMALLOC | SLAB_STORE_USER | SLAB_RED_ZONE, NULL);
	unsigned char *p = kmalloc_trace(s, GFP_KERNEL, 48);
	bool ok = true;

	REQUIRE(p);
	memset(p, 0xff, 48);
	p = krealloc(mm, p, 40, GFP_KERNEL | __GFP_ZERO);     /* shrink */
	for (int i = 40; i < 64; i++)
		ok &= peek8(p + i) == 0xcc;
	CHECK(ok);
	p = krealloc(mm, p, 56, GFP_KERNEL | __GFP_ZERO);     /* grow within the object */
	ok = true;
	for (int i = 40; i < 56; i++)
		ok &= p[i] == 0;
	for (int i = 56; i < 64; i++)
		ok &= peek8(p + i) == 0xcc;
	CHECK(ok);
	CHECK(validate_slab_cache(s) == 0);
	memset(p, 0xff, 56);
	p = krealloc(mm, p, 112, GFP_KERNEL | __GFP_ZERO);    /* grow into a kmalloc-128 object */
	ok = true;
	for (int i = 0; i < 56; i++)
		ok &= p[i] == 0xff;
	for (int i = 56; i < 112; i++)
		ok &= p[i] == 0;
	CHECK(ok);
	kfree(mm, p);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

/* Bad frees into a debug cache: reported, refused, nothing changed. */
static void test_bad_frees(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "TestSlub_bad", 64, 0, SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE, NULL);
	struct kmem_cache *t = kmem_cache_create(mm, "TestSlub_other", 64, 0, SLAB_CONSISTENCY_CHECKS, NULL);
	unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL), *q = kmem_cache_alloc(s, GFP_KERNEL);
	unsigned long r;
	int local;

	REQUIRE(p && q);
	kmem_cache_free(s, p);
	if (!ASAN_BUILD) {
		/* double free */
		r = mm_nr_reports(mm);
		kmem_cache_free(s, p);
		CHECK(mm_nr_reports(mm) == r + 2);
		CHECK(last_says(mm, "not freed"));
		CHECK_MM(mm, 3);
		/* interior pointer */
		r = mm_nr_reports(mm);
		kmem_cache_free(s, q + 8);
		CHECK(mm_nr_reports(mm) == r + 2);
		CHECK_MM(mm, 3);
	}
	/* not in memory at all */
	r = mm_nr_reports(mm);
	kmem_cache_free(s, &local);
	CHECK(mm_nr_reports(mm) == r + 1);
	CHECK(last_says(mm, "not a Slab page"));
	CHECK_MM(mm, 3);
	/* the wrong cache: reported, freed to its own */
	r = mm_nr_reports(mm);
	kmem_cache_free(t, q);
	CHECK(mm_nr_reports(mm) == r + 1);
	CHECK(last_says(mm, "Wrong slab cache"));
	CHECK_MM(mm, 3);
	CHECK(validate_slab_cache(s) == 0);
	struct kmem_cache_info i;
	kmem_cache_get_info(s, &i);
	if (i.nr_live >= 0)
		CHECK(i.nr_live == 0);
	kmem_cache_destroy(s);
	kmem_cache_destroy(t);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/*
 * check_object() as in Linux 6.6: the first bad red zone fails the object
 * and ends the check (the right red zone is looked at only once the left
 * one is good), and bad alignment padding is reported and restored without
 * failing the object - it is still freed.
 */
static void test_check_object_stops_and_padding(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s;
	struct kmem_cache_info i;
	unsigned long r;
	unsigned char *p;

	s = kmem_cache_create(mm, "TestSlub_RZ_both", 64, 0, SLAB_RED_ZONE, NULL);
	p = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(p);
	poke8(p - 1, 0x12);
	poke8(p + 64, 0x12);
	r = mm_nr_reports(mm);
	CHECK(validate_slab_cache(s) == 2);           /* the left red zone: BUG and FIX */
	CHECK(mm_nr_reports(mm) == r + 2);
	CHECK(last_says(mm, "Left Redzone"));
	CHECK(peek8(p + 64) == 0x12);                 /* not looked at yet */
	CHECK(validate_slab_cache(s) == 2);           /* now the right one */
	CHECK(last_says(mm, "Right Redzone"));
	CHECK(validate_slab_cache(s) == 0);
	kmem_cache_free(s, p);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);

	/* 61-byte objects: 3 bytes of alignment padding before the free pointer */
	s = kmem_cache_create(mm, "TestSlub_align_pad", 61, 0, SLAB_CONSISTENCY_CHECKS | SLAB_POISON, NULL);
	p = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(p);
	kmem_cache_get_info(s, &i);
	REQUIRE(i.inuse > 61);
	poke8(p + 62, 0x12);
	r = mm_nr_reports(mm);
	kmem_cache_free(s, p);                        /* reported, restored - and freed */
	CHECK(mm_nr_reports(mm) == r + 2);
	CHECK(last_says(mm, "Alignment padding"));
	kmem_cache_get_info(s, &i);
	if (i.nr_live >= 0)
		CHECK(i.nr_live == 0);
	CHECK(validate_slab_cache(s) == 0);
	CHECK_MM(mm, 3);
	r = mm_nr_reports(mm);
	kmem_cache_destroy(s);                        /* nothing left behind to report */
	CHECK(mm_nr_reports(mm) == r);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/*
 * Hardened freelists: the naive double-free check (set_freepointer()), on
 * the fast path of a cache without slub_debug (p is the cpu freelist head)
 * and on the free path of debug caches (free_to_partial_list(): p is the
 * slab's freelist head).  With red zones but no SLAB_CONSISTENCY_CHECKS
 * nothing else looks at the object before its free pointer is set, so a
 * second free would point it at itself and drop inuse below the live
 * objects.  Each fast path variant has the check: with slub_fastpath=irqoff
 * (do_slab_free_irqoff()) the refused free must also turn interrupts back
 * on (T1, checked by CHECK_MM).
 */
static void naive_double_free_case(const char *name, slab_flags_t flags, const char *options)
{
	struct mm *mm = new_mm(options);
	struct kmem_cache *s = kmem_cache_create(mm, name, 64, 0, flags, NULL);
	void *p = kmem_cache_alloc(s, GFP_KERNEL), *q = kmem_cache_alloc(s, GFP_KERNEL);
	unsigned long r;

	REQUIRE(p && q);
	kmem_cache_free(s, p);
	if (!ASAN_BUILD) {
		r = mm_nr_reports(mm);
		kmem_cache_free(s, p);
		CHECK(mm_nr_reports(mm) == r + 1);
		CHECK(last_says(mm, "double free or corruption"));
		CHECK_MM(mm, 3);
	}
	/* the freelist is intact: two allocations give two objects, neither the live q */
	void *a = kmem_cache_alloc(s, GFP_KERNEL), *b = kmem_cache_alloc(s, GFP_KERNEL);
	CHECK(a && b && a != b && a != q && b != q);
	kmem_cache_free(s, a);
	kmem_cache_free(s, b);
	kmem_cache_free(s, q);
	CHECK(validate_slab_cache(s) == 0);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

static void test_naive_double_free(void)
{
	naive_double_free_case("TestSlub_naive", 0, NULL);
	naive_double_free_case("TestSlub_naive_locked", 0, "slub_fastpath=locked");
	naive_double_free_case("TestSlub_naive_irqoff", 0, "slub_fastpath=irqoff");
}

static void test_naive_double_free_debug(void)
{
	naive_double_free_case("TestSlub_naive_rz", SLAB_RED_ZONE, NULL);
}

/* kmem_cache_destroy with objects left: the kernel's two reports, nothing freed that is still held. */
static void test_leak_destroy(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "TestSlub_leak_destroy", 64, 0, 0, NULL);
	unsigned long r = mm_nr_reports(mm);
	unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
	void *more[3];

	REQUIRE(p);
	memset(p, 0x5c, 64);
	kmem_cache_destroy(s);
	CHECK(mm_nr_reports(mm) == r + 2);
	CHECK(last_says(mm, "Slab cache still has objects (1 objects in 1 slabs)"));
	CHECK_MM(mm, 3);
	/* the object is still valid and the cache still listed */
	bool ok = true;
	for (int i = 0; i < 64; i++)
		ok &= p[i] == 0x5c;
	CHECK(ok);
	bool listed = false;
	for (struct kmem_cache *c = kmem_cache_next(mm, NULL); c; c = kmem_cache_next(mm, c))
		listed |= c == s;
	CHECK(listed);
	kmem_cache_free(s, p);
	CHECK_MM(mm, 3);

	/* a full slab left over: reported through the final count */
	struct kmem_cache *t = kmem_cache_create(mm, "TestSlub_leak_full", 2048, 0, 0, NULL);
	struct kmem_cache_info i;
	kmem_cache_get_info(t, &i);
	void *all[64];
	for (unsigned k = 0; k < i.objects_per_slab; k++)
		all[k] = kmem_cache_alloc(t, GFP_KERNEL);
	more[0] = all[0];
	(void)more;
	r = mm_nr_reports(mm);
	kmem_cache_destroy(t);
	CHECK(mm_nr_reports(mm) >= r + 1);
	CHECK(strstr(mm_last_report(mm)->msg, "TestSlub_leak_full") != NULL);
	CHECK_MM(mm, 3);
	/* mm_reset releases caches kept for their leaks */
	CHECK(mm_reset(mm) == 0);
	CHECK_MM(mm, 3);
	for (struct kmem_cache *c = kmem_cache_next(mm, NULL); c; c = kmem_cache_next(mm, c))
		CHECK(strncmp(kmem_cache_name(c), "TestSlub_leak", 13) != 0);
	mm_destroy(mm);
}

/*
 * The leak report printed (a quiet instance only counts it): for a
 * SLAB_STORE_USER cache, list_slab_objects() names each object still held,
 * then where it was allocated (print_tracking()) - the line that says
 * whose leak it is - and no free track for an object never freed, though
 * its memory held a freed object of a destroyed cache before
 * (init_tracking() clears both tracks of a new slab's objects).  Run in a
 * child with reports printed; its stderr read back.  The child writes the
 * leaked object's address first.
 */
static void leak_report_child(void)
{
	struct mm *mm = new_loud_mm_child();
	/* A cache before it leaves its slabs' tracks behind: every object allocated and freed. */
	struct kmem_cache *prev = kmem_cache_create(mm, "TestSlub_leak_prev", 64, 0, SLAB_STORE_USER, NULL);
	void *po[64];
	if (!prev)
		_exit(3);
	for (int i = 0; i < 64; i++)
		if (!(po[i] = kmem_cache_alloc(prev, GFP_KERNEL)))
			_exit(3);
	for (int i = 0; i < 64; i++)
		kmem_cache_free(prev, po[i]);
	kmem_cache_destroy(prev);
	struct kmem_cache *s = kmem_cache_create(mm, "TestSlub_leak_track", 64, 0, SLAB_STORE_USER, NULL);
	void *kept = s ? kmem_cache_alloc(s, GFP_KERNEL) : NULL;
	void *freed = s ? kmem_cache_alloc(s, GFP_KERNEL) : NULL;
	if (!kept || !freed)
		_exit(3);
	kmem_cache_free(s, freed);
	struct kmem_cache_info info;
	if (kmem_cache_get_info(s, &info))
		_exit(4);
	fprintf(stderr, "leaked %p of %u\n", kept, info.objects_per_slab);
	kmem_cache_destroy(s);
	kmem_cache_free(s, kept);
	mm_destroy(mm);
	_exit(0);
}

static void test_leak_report_tracks(void)
{
	static char out[1 << 16];
	int status = test_run_child_stderr(leak_report_child, out, sizeof(out));
	void *kept = NULL;
	unsigned int objects = 0;

	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "leak report child: status %#x:\n%s", status, out);
	REQUIRE_MSG(sscanf(out, "leaked %p of %u", &kept, &objects) == 2 && kept, "no object address from the child:\n%s",
		    out);
	/* the whole line: a long cache name once cut it to "1 of 3" (for 32) */
	char line0[160];
	snprintf(line0, sizeof(line0), "Objects remaining in TestSlub_leak_track on kmem_cache_close(): 1 of %u objects\n",
		 objects);
	CHECK_MSG(strstr(out, line0) != NULL, "no \"%s\" line:\n%s", line0, out);
	char obj[64];
	snprintf(obj, sizeof(obj), "INFO: Object %p @offset=", kept);
	const char *line = strstr(out, obj);
	CHECK_MSG(line != NULL, "the held object is not named (\"%s\"):\n%s", obj, out);
	if (!line)
		return;
	const char *next = strchr(line, '\n');
	CHECK_MSG(next && strncmp(next + 1, "mmfuzz: INFO: Allocated in 0x", 29) == 0,
		  "the held object's line is not followed by where it was allocated:\n%s", out);
	/* only the one held object, and no free track: it was never freed */
	CHECK_MSG(strstr(line + 1, "INFO: Object 0x") == NULL, "more than one object named:\n%s", out);
	CHECK_MSG(strstr(line, "Freed in") == NULL, "a free track for an object never freed:\n%s", out);
}

static void test_store_user_and_trace(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "TestSlub_user", 100, 0, SLAB_STORE_USER | SLAB_CONSISTENCY_CHECKS, NULL);
	void *o[100];

	for (int k = 0; k < 100; k++)
		REQUIRE((o[k] = kmem_cache_alloc(s, GFP_KERNEL)));
	for (int k = 0; k < 100; k++)
		kmem_cache_free(s, o[k]);
	CHECK(validate_slab_cache(s) == 0);
	CHECK_MM(mm, 3);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

/*
 * free_slab() checks the slab's padding (slab_pad_check()) before its
 * objects: a slab with consistency checks and poisoning, its tail
 * padding overwritten, reports "Padding overwritten" and restores the
 * padding when it is discarded - here by kmem_cache_shrink() - not only
 * on validate.
 */
static void test_padding_at_free_slab(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "TestSlub_pad_free", 1000, 0,
						 SLAB_CONSISTENCY_CHECKS | SLAB_POISON | SLAB_NO_MERGE, NULL);
	struct kmem_cache_info i;
	REQUIRE(s);
	REQUIRE(!kmem_cache_get_info(s, &i));
	size_t slab_bytes = (size_t)MM_PAGE_SIZE << i.order;
	REQUIRE(slab_bytes % i.size != 0);                  /* there is padding */
	unsigned char *p = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(p);
	/* The slab: the naturally aligned block of 2^order pages around p. */
	struct page *pg = virt_to_page(mm, p);
	REQUIRE(pg);
	unsigned long in_slab = page_to_pfn(mm, pg) & ((1UL << i.order) - 1);
	unsigned char *start = (unsigned char *)page_address(mm, pg) - in_slab * MM_PAGE_SIZE;
	kmem_cache_free(s, p);                              /* its checks (check_slab()) would find it */
	poke8(start + slab_bytes - 1, 0x42);
	unsigned long r = mm_nr_reports(mm);
	kmem_cache_shrink(s);
	/* slab_err()'s "Padding overwritten", then slab_fix()'s restore (the last report kept) */
	CHECK_MSG(mm_nr_reports(mm) == r + 2 && last_says(mm, "Restoring slab padding"),
		  "%lu reports at the discard of a slab with its padding overwritten, the last: %s",
		  mm_nr_reports(mm) - r, mm_last_report(mm)->msg);
	REQUIRE(!kmem_cache_get_info(s, &i));
	CHECK(i.nr_slabs == 0);                             /* it was discarded */
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

/*
 * An instance without hardened freelists and a cache @name whose two
 * objects were allocated and freed, so its freelist is b -> a, ready to
 * be corrupted by hand.  NULL where the order is another (a quarantine):
 * the instance is destroyed and the caller skips.
 */
static struct kmem_cache *freed_pair(const char *name, slab_flags_t flags, struct mm **mm,
				     struct kmem_cache_info *info, unsigned char **a, unsigned char **b)
{
	*mm = new_mm("slab_freelist_hardened=0");
	struct kmem_cache *s = kmem_cache_create(*mm, name, 64, 0, flags, NULL);

	REQUIRE(s && !kmem_cache_get_info(s, info));
	*a = kmem_cache_alloc(s, GFP_KERNEL);
	*b = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(*a && *b);
	kmem_cache_free(s, *a);
	kmem_cache_free(s, *b);
	if (peekw(*b + info->offset) == (uintptr_t)*a)
		return s;
	fprintf(stderr, "%s: the freelist is not b -> a here (quarantine?): skipped\n", name);
	mm_destroy(*mm);
	return NULL;
}

/*
 * A freelist cycle (a double free a debug cache without F let through,
 * here made by hand): validation cuts it and counts what is left - the
 * counters agree with the list (S1), the slab stays partial (S2) and a
 * second validation finds nothing.  Before, the cycle was cut with inuse
 * set as if every entry the walk visited were on the list: 0, while one
 * entry was left.  And mm_reset() afterwards leaves S1's count clean.
 */
static void test_freelist_cycle(void)
{
	struct mm *mm;
	struct kmem_cache_info info;
	unsigned char *a, *b;
	struct kmem_cache *s = freed_pair("TestSlub_cycle", SLAB_POISON, &mm, &info, &a, &b);

	if (s) {
		pokew(a + info.offset, (uintptr_t)b);           /* b -> a -> b -> ... */
		/* on_freelist(): BUG "Freechain corrupt", FIX "Isolate corrupted
		 * freechain"; then the count: BUG "Wrong object count", FIX
		 * "Object count adjusted" - four lines, each counted. */
		long n = validate_slab_cache(s);
		CHECK_MSG(n == 4, "a freelist cycle: %ld reports, expected 4 (the last: %s)", n,
			  mm_last_report(mm)->msg);
		CHECK(last_says(mm, "Object count adjusted"));
		CHECK_MM(mm, 3);
		CHECK(validate_slab_cache(s) == 0);
		CHECK(!kmem_cache_get_info(s, &info) && info.nr_slabs == 1 && info.nr_partial == 1);
		void *c = kmem_cache_alloc(s, GFP_KERNEL);  /* what is left on the list serves */
		CHECK(c == a || c == b);
		CHECK_MM(mm, 3);
		/* mm_reset() forgets the repair's share of the live count: S1 holds after it */
		CHECK(mm_reset(mm) == 0);
		CHECK_MM(mm, 3);
		void *d = kmem_cache_alloc(s, GFP_KERNEL);
		CHECK(d != NULL);
		CHECK_MM(mm, 3);
		kmem_cache_free(s, d);
		CHECK_MM(mm, 3);
		mm_destroy(mm);
	}
}

/*
 * A free object whose free pointer is corrupt, found as it is handed out
 * (alloc_debug_processing(), SLAB_CONSISTENCY_CHECKS): check_object() says
 * "Freepointer corrupt" and fails, so the slab is given up - "Marking all
 * objects used", no free object left on it - and the allocation is served
 * from another slab.  The slab's freelist already holds the corrupt
 * pointer (the object was taken off it first), so an allocation that
 * went on with the object would leave the next one to a wild pointer.
 */
static void test_alloc_freepointer_corrupt(void)
{
	struct mm *mm;
	struct kmem_cache_info info;
	unsigned char *a, *b;
	struct kmem_cache *s = freed_pair("TestSlub_fp_alloc", SLAB_CONSISTENCY_CHECKS, &mm, &info, &a, &b);

	if (!s)
		return;
	pokew(b + info.offset, (uintptr_t)b + 1);        /* inside the slab, not an object */
	unsigned long r = mm_nr_reports(mm);
	void *c = kmem_cache_alloc(s, GFP_KERNEL);
	/* two reports: the object's (BUG "Freepointer corrupt") and the slab's FIX */
	CHECK_MSG(mm_nr_reports(mm) == r + 2, "%lu reports for a corrupt free pointer handed out, want 2",
		  mm_nr_reports(mm) - r);
	CHECK_MSG(last_says(mm, "Marking all objects used"), "last report: %s", mm_last_report(mm)->msg);
	CHECK_MSG(c && c != a && c != b, "allocated %p from the given-up slab (a %p, b %p)", c, (void *)a, (void *)b);
	CHECK_MM(mm, 3);
	CHECK(!kmem_cache_get_info(s, &info) && info.nr_slabs == 2);
	/* Every later allocation comes from a good slab. */
	void *more[8];
	for (int i = 0; i < 8; i++) {
		more[i] = kmem_cache_alloc(s, GFP_KERNEL);
		CHECK(more[i] && more[i] != a && more[i] != b);
	}
	CHECK_MM(mm, 3);
	for (int i = 0; i < 8; i++)
		kmem_cache_free(s, more[i]);
	kmem_cache_free(s, c);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/*
 * A double free inside a bulk free (q freed already, then freed again in a
 * batch with p): free_debug_processing() finds more objects of the slab in
 * the batch than it has in use and refuses the whole batch - BUG "Slab has
 * 1 allocated objects but 2 are to be freed", FIX "Object at ... not
 * freed".  As in 6.6 the refusal comes after build_detached_freelist() has
 * chained the batch through its objects' free pointers, so q's pointer,
 * on the slab's freelist, now ends that list: the checker must see the
 * lost free objects (S1).
 */
static void test_bulk_double_free_refused(void)
{
	if (ASAN_BUILD)
		return;                 /* KASAN stops the double free first */
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "TestSlub_bulk_double", 64, 0, SLAB_RED_ZONE, NULL);
	struct mm_violation v;
	REQUIRE(s);
	void *p = kmem_cache_alloc(s, GFP_KERNEL), *q = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(p && q);
	kmem_cache_free(s, q);
	void *batch[2] = { p, q };
	unsigned long r = mm_nr_reports(mm);
	kmem_cache_free_bulk(s, 2, batch);
	CHECK_MSG(mm_nr_reports(mm) == r + 2, "a bulk free of 2 objects of a slab with 1 in use: %lu reports, "
		  "want 2 (the last: %s)", mm_nr_reports(mm) - r, mm_last_report(mm)->msg);
	CHECK(last_says(mm, "not freed"));
	CHECK_MSG(!mm_check(mm, 3, &v) && v.inv == MM_INV_S1, "the cut freelist was not seen: %s",
		  v.msg[0] ? v.msg : "the check passed");
	mm_destroy(mm);
}

/*
 * validate_slab_cache() flushes the vCPUs' slabs first (flush_all(), as
 * 6.6's validate_slab_cache() does), so it validates the slabs they hold
 * too: a cache without debug flags with one object allocated has its
 * slab on a vCPU, and after validation on the node partial list.
 */
/* A task holding another vCPU, with a cpu slab of @vf_cache there, parked outside the allocator. */
static struct mm *vf_mm;
static struct kmem_cache *vf_cache;
static atomic_int vf_ready, vf_go, vf_cpu = -1;

static void *vf_holder(void *arg)
{
	atomic_store(&vf_cpu, mm_cpu_attach(vf_mm, (int)(long)arg));
	void *o = kmem_cache_alloc(vf_cache, GFP_KERNEL);
	atomic_store(&vf_ready, o ? 1 : -1);
	while (!atomic_load(&vf_go))
		sched_yield();
	if (o)
		kmem_cache_free(vf_cache, o);
	mm_cpu_detach(vf_mm);
	return NULL;
}

/* @s's one slab is a cpu slab (@whose); validation flushes it onto the node partial list first. */
static void validate_flushes_one(struct kmem_cache *s, const char *whose)
{
	struct kmem_cache_info info;
	REQUIRE(!kmem_cache_get_info(s, &info));
	CHECK_MSG(info.nr_slabs == 1 && info.nr_partial == 0, "before: %lu slabs, %lu partial", info.nr_slabs,
		  info.nr_partial);
	CHECK(validate_slab_cache(s) == 0);
	REQUIRE(!kmem_cache_get_info(s, &info));
	CHECK_MSG(info.nr_slabs == 1 && info.nr_partial == 1, "after validation: %lu slabs, %lu partial (the %s "
		  "slab not flushed, so not validated)", info.nr_slabs, info.nr_partial, whose);
}

static void test_validate_flushes(void)
{
	struct mm *mm = new_mm(NULL);
	struct kmem_cache *s = kmem_cache_create(mm, "TestSlub_validate_flush", 64, 0, 0, NULL);
	REQUIRE(s);
	void *p = kmem_cache_alloc(s, GFP_KERNEL);
	REQUIRE(p);
	validate_flushes_one(s, "vCPU's");
	CHECK_MM(mm, 3);

	/* The cpu slab of a vCPU another task holds is flushed from outside
	 * (flush_all(s, true): validation, like destroy, owns the cache). */
	pthread_t th;
	int home = mm_cpu_current(mm), away = home == 0 ? 1 : 0;
	REQUIRE(home >= 0 && mm_get_config(mm)->nr_cpus >= 2);
	vf_mm = mm;
	vf_cache = s;
	REQUIRE(pthread_create(&th, NULL, vf_holder, (void *)(long)away) == 0);
	while (!atomic_load(&vf_ready))
		sched_yield();
	CHECK(atomic_load(&vf_ready) == 1 && atomic_load(&vf_cpu) == away && mm_cpu_holder(mm, away) != NULL);
	/* the other task's allocation took the node's partial slab as its cpu slab */
	validate_flushes_one(s, "held vCPU's");
	atomic_store(&vf_go, 1);
	pthread_join(th, NULL);
	CHECK_MM(mm, 3);
	kmem_cache_free(s, p);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

int main(void)
{
	test_option_string();
	test_clobber();
	test_krealloc_redzone();
	test_bad_frees();
	test_check_object_stops_and_padding();
	test_naive_double_free();
	test_alloc_freepointer_corrupt();
	test_bulk_double_free_refused();
	test_validate_flushes();
	test_naive_double_free_debug();
	test_leak_destroy();
	test_leak_report_tracks();
	test_store_user_and_trace();
	test_padding_at_free_slab();
	test_freelist_cycle();
	TEST_DONE();
}

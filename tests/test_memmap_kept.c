/* SPDX-License-Identifier: MIT */
/*
 * test_memmap_kept.c - memmap.c keeps the mappings of destroyed instances
 * and builds the next instance in one of them, changing only the access
 * that must change.  Whatever the mapping held before, the new instance
 * must see exactly what a fresh mapping gives it:
 *
 *   - every OS page of its frame mapping is readable and writable exactly
 *     when it holds a valid pfn's frame; of its memmap mapping, exactly
 *     when it holds a valid pfn's struct page (read back from
 *     /proc/self/maps, page by page);
 *   - the arena's "PAGE_OFFSET", arena - first_pfn * PAGE_SIZE, is aligned
 *     to PAGE_SIZE << max_order;
 *   - the struct pages of holes sharing an OS page with valid ones read
 *     zero, and so does every frame;
 *   - it passes the checker and every one of its pages can be allocated
 *     and written.
 *
 * The machines alternate so that every direction is exercised: frames of
 * a hole that were valid before (must lose their access), frames that
 * were a hole and are valid now (must gain it), a smaller machine with
 * another first pfn and max_order placed inside a larger kept mapping, a
 * larger one that cannot reuse it, a mapping over the keep limit, and a
 * run of random machines.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "memmap_test.h"
#include "test.h"

/* Reads memory ASan has poisoned on purpose (hole struct pages). */
__attribute__((no_sanitize("address"))) static bool all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Any valid pfn in [lo, hi] (clamped to the instance's range)? */
static bool any_valid(const struct mm *mm, long lo, long hi)
{
	if (lo < (long)mm->first_pfn)
		lo = (long)mm->first_pfn;
	if (hi >= (long)mm->end_pfn)
		hi = (long)mm->end_pfn - 1;
	for (long p = lo; p <= hi; p++)
		if (pfn_valid(mm, (unsigned long)p))
			return true;
	return false;
}

/* Every OS page of both mappings has the access a fresh instance gives it. */
static void check_access(const struct mm *mm, const char *what)
{
	size_t osp = (size_t)sysconf(_SC_PAGESIZE);
	unsigned long wrong = 0, first_wrong = 0;
	proc_maps_load();

	CHECK_MSG((((uintptr_t)mm->arena - (mm->first_pfn << MM_PAGE_SHIFT)) & ((MM_PAGE_SIZE << mm->max_order) - 1)) == 0,
		  "%s: arena %p, first pfn %#lx: PAGE_OFFSET not aligned to order %u", what, (void *)mm->arena,
		  mm->first_pfn, mm->max_order);
	CHECK_MSG(mm->arena >= mm->arena_region && mm->arena + mm->arena_len <= mm->arena_region + mm->arena_region_len,
		  "%s: arena outside its mapping", what);

	for (size_t i = 0; i < mm->arena_region_len / osp; i++) {
		uintptr_t a = (uintptr_t)mm->arena_region + i * osp;
		bool want = a >= (uintptr_t)mm->arena && a < (uintptr_t)mm->arena + mm->arena_len &&
			    pfn_valid(mm, mm->first_pfn + ((a - (uintptr_t)mm->arena) >> MM_PAGE_SHIFT));
		if (proc_access_at(a) != (int)want && !wrong++)
			first_wrong = i;
	}
	CHECK_MSG(wrong == 0, "%s: %lu frame OS pages with the wrong access, the first at page %lu of the mapping",
		  what, wrong, first_wrong);

	wrong = 0;
	const long sz = (long)sizeof(struct page);
	for (size_t i = 0; i < mm->memmap_region_len / osp; i++) {
		uintptr_t a = (uintptr_t)mm->memmap_map + i * osp;
		long off = (long)(a - (uintptr_t)mm->memmap);
		long lo = (long)mm->first_pfn + (off >= 0 ? off / sz : -((-off + sz - 1) / sz));
		long hi = (long)mm->first_pfn + (off + (long)osp - 1 >= 0 ? (off + (long)osp - 1) / sz
								    : -((-(off + (long)osp - 1) + sz - 1) / sz));
		bool want = any_valid(mm, lo, hi);
		if (proc_access_at(a) != (int)want && !wrong++)
			first_wrong = i;
	}
	CHECK_MSG(wrong == 0, "%s: %lu memmap OS pages with the wrong access, the first at page %lu of the mapping",
		  what, wrong, first_wrong);

	/* Hole struct pages in readable OS pages read zero, as in a fresh mapping. */
	wrong = 0;
	for (unsigned long pfn = mm->first_pfn; pfn < mm->end_pfn; pfn++) {
		if (pfn_valid(mm, pfn))
			continue;
		const unsigned char *p = (const unsigned char *)(mm->memmap + (pfn - mm->first_pfn));
		if (proc_access_at((uintptr_t)p) == 1 && !all_zero(p, sizeof(struct page)))
			wrong++;
	}
	CHECK_MSG(wrong == 0, "%s: %lu hole struct pages in readable memmap pages are not zero", what, wrong);

	/* Frames read zero, as in a fresh mapping (init_on_free's objects count on it). */
	wrong = 0;
	for (unsigned long pfn = mm->first_pfn; pfn < mm->end_pfn; pfn++)
		if (pfn_valid(mm, pfn) && !all_zero((const unsigned char *)mm->arena + ((pfn - mm->first_pfn) << MM_PAGE_SHIFT),
						    MM_PAGE_SIZE))
			wrong++;
	CHECK_MSG(wrong == 0, "%s: %lu frames of a new instance are not zero", what, wrong);
}

static struct mm *create(const struct mm_config *c, const char *what)
{
	char err[256];
	struct mm *mm = mm_create(c, err, sizeof(err));
	if (!mm)
		fprintf(stderr, "%s: mm_create: %s\n", what, err);
	REQUIRE(mm != NULL);
	check_access(mm, what);
	CHECK_MM(mm, 3);
	return mm;
}

static unsigned long rnd_state = 88172645463325252UL;
static unsigned long rnd(unsigned long n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state % n;
}

int main(void)
{
	struct mm_config a, b, c;

	memmap_drop_kept();

	/* A: 16k pages, no holes: every frame and struct page readable. */
	memmap_test_machine(&a, 0, 16384, 10);
	struct mm *mm = create(&a, "A");
	char *region_a = mm->arena_region;
	memmap_test_use_all(mm, "A");
	mm_destroy(mm);

	/* B: the same span with holes - some mid-OS-page in the memmap - in A's mapping. */
	b = a;
	b.nr_holes = 4;
	b.holes[0] = (struct mm_span){ 100, 101 };
	b.holes[1] = (struct mm_span){ 700, 1500 };
	b.holes[2] = (struct mm_span){ 5000, 5003 };
	b.holes[3] = (struct mm_span){ 9000, 9999 };
	mm = create(&b, "B (holes where A had frames)");
	CHECK_MSG(mm->arena_region == region_a, "B not built in A's kept mapping (%p, A %p)",
		  (void *)mm->arena_region, (void *)region_a);
	memmap_test_use_all(mm, "B");
	mm_destroy(mm);

	/* A again: the holes' frames and struct pages readable again. */
	mm = create(&a, "A again");
	CHECK(mm->arena_region == region_a);
	memmap_test_use_all(mm, "A again");
	mm_destroy(mm);

	/* C: smaller, another first pfn and max_order: placed inside A's mapping. */
	memmap_test_machine(&c, 3, 8003, 8);
	c.nr_holes = 1;
	c.holes[0] = (struct mm_span){ 4100, 4200 };
	mm = create(&c, "C (inside A's mapping)");
	CHECK_MSG(mm->arena_region == region_a, "C not placed in A's kept mapping");
	memmap_test_use_all(mm, "C");
	mm_destroy(mm);

	/* D: larger than anything kept: a fresh mapping. */
	memmap_test_machine(&c, 1, 40001, 10);
	mm = create(&c, "D (larger)");
	CHECK(mm->arena_region != region_a);
	memmap_test_use_all(mm, "D");
	mm_destroy(mm);

	/* E: over MEMMAP_KEEP_MAX (256 MiB of frames): unmapped at destroy. */
	memmap_test_machine(&c, 0, 70000, 10);
	mm = create(&c, "E (not kept)");
	char *region_e = mm->arena_region;
	mm_destroy(mm);
	proc_maps_load();
	CHECK_MSG(proc_access_at((uintptr_t)region_e) == -1, "E's 273 MiB mapping still mapped after mm_destroy");

	/* Random machines: spans, first pfns, orders, holes. */
	for (int i = 0; i < 40; i++) {
		unsigned int mo = (unsigned int)rnd(MM_MAX_ORDER_LIMIT + 1);
		unsigned long first = rnd(4) ? rnd(5000) : (1UL << 30) + rnd(4096);
		unsigned long span = 64 + rnd(20000);
		memmap_test_machine(&c, first, first + span, mo);
		/* up to five holes inside the Normal zone */
		unsigned long ns = c.zones[ZONE_NORMAL].start_pfn, ne = c.zones[ZONE_NORMAL].end_pfn;
		unsigned long at = ns + rnd(64);
		for (int h = 0; h < 5; h++) {
			unsigned long len = 1 + rnd((ne - ns) / 8 + 1);
			if (at + len >= ne)
				break;
			c.holes[c.nr_holes++] = (struct mm_span){ at, at + len };
			at += len + 1 + rnd((ne - ns) / 4 + 1);
		}
		char err[256];
		if (mm_config_validate(&c, err, sizeof(err))) {
			c.nr_holes = 0;
			REQUIRE(mm_config_validate(&c, err, sizeof(err)) == 0);
		}
		char what[64];
		snprintf(what, sizeof(what), "random machine %d", i);
		mm = create(&c, what);
		mm_destroy(mm);
	}

	/* Dropped: the kept mappings go back to the OS. */
	mm = create(&a, "A last");
	region_a = mm->arena_region;
	mm_destroy(mm);
	memmap_drop_kept();
	proc_maps_load();
	CHECK_MSG(proc_access_at((uintptr_t)region_a) == -1, "a kept mapping still mapped after memmap_drop_kept()");
	TEST_DONE();
}

/* SPDX-License-Identifier: MIT */
/*
 * test_bad_input.c - freeing what the allocator did not hand out, and
 * asking for what it cannot give.  With bad_policy = MM_BAD_REPORT (and
 * quiet) each case must produce exactly one report whose reason names the
 * problem, refuse the operation and leave the allocator exactly as it was:
 * the free lists per zone and order, NR_FREE_PAGES, the allocation
 * counters - compared after draining the pcp lists on both sides, so a
 * free that wrongly went through would show - and mm_check level 3 clean.
 * Tail pages of an order > 0 free are checked too, and a page coming off a
 * free list must carry no page flag at all.
 * Then, in a child process, that MM_BAD_ABORT aborts (SIGABRT).
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "page/pcp.h"
#include "test.h"
#include "buddy_test.h"

struct state {
	struct free_snap f;             /* buddy_test.h: free lists and NR_FREE_PAGES */
	long allocated[MAX_NR_ZONES];
	unsigned long pgalloc, pgfree;
};

static void take(struct mm *mm, struct state *s)
{
	drain_all_pages(mm, NULL);
	memset(s, 0, sizeof(*s));
	free_snap_take(mm, &s->f);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (mm_zone(mm, z))
			s->allocated[z] = (long)mm_zone_page_state(mm, z, NR_ZONE_ALLOCATED);
	s->pgalloc = mm_vm_event(mm, PGALLOC);
	s->pgfree = mm_vm_event(mm, PGFREE);
}

static struct state before_;
static unsigned long reports_before_;

static void bad_begin(struct mm *mm)
{
	take(mm, &before_);
	reports_before_ = mm_nr_reports(mm);
}

/* Exactly one new report, mentioning @keyword (case-insensitive); nothing else changed. */
static void bad_end(struct mm *mm, const char *what, const char *keyword, unsigned long pfn)
{
	struct state after;
	take(mm, &after);
	unsigned long n = mm_nr_reports(mm) - reports_before_;
	const struct mm_report *r = mm_last_report(mm);
	CHECK_MSG(n == 1, "%s: %lu reports, expected exactly 1", what, n);
	if (n >= 1) {
		CHECK_MSG(strcasestr(r->reason, keyword) != NULL, "%s: the reason \"%s\" does not say \"%s\"", what,
			  r->reason, keyword);
		CHECK_MSG(r->kind[0] != '\0' && strstr(r->msg, r->reason) != NULL, "%s: report \"%s\" / \"%s\"", what,
			  r->kind, r->msg);
		if (pfn != ~0UL)
			CHECK_MSG(r->pfn == pfn, "%s: report names pfn %#lx, expected %#lx", what, r->pfn, pfn);
	}
	CHECK_MSG(memcmp(&before_, &after, sizeof(after)) == 0, "%s: allocator state changed", what);
	CHECK_MM(mm, 3);
}

#define BAD(mm, keyword, pfn, stmt)                          \
	do {                                                 \
		bad_begin(mm);                               \
		stmt;                                        \
		bad_end(mm, #stmt, keyword, pfn);            \
	} while (0)

static struct mm *make(enum mm_bad_policy policy)
{
	struct mm_config c;
	mm_config_default(&c);
	c.quiet = true;
	c.bad_policy = policy;
	return test_create(&c);
}

static void test_reports(void)
{
	struct mm *mm = make(MM_BAD_REPORT);
	struct state s0, s1;
	take(mm, &s0);
	uintptr_t base = (uintptr_t)mm_arena_base(mm);
	size_t size = mm_arena_size(mm);
	unsigned long first = mm_first_pfn(mm);

	/* Addresses outside the arena. */
	BAD(mm, "outside", ~0UL, free_pages(mm, base - MM_PAGE_SIZE, 0));
	BAD(mm, "outside", ~0UL, free_pages(mm, base + size, 0));
	BAD(mm, "outside", ~0UL, free_pages(mm, (unsigned long)&s0, 0));
	/* In a hole: pfns [6000, 6100) of the default config. */
	REQUIRE(!pfn_valid(mm, 6000));
	BAD(mm, "hole", 6000, free_pages(mm, base + (6000 - first) * MM_PAGE_SIZE, 0));
	BAD(mm, "hole", 6099, free_pages(mm, base + (6099 - first) * MM_PAGE_SIZE, 2));

	/* Misaligned, inside a page that is allocated: refused, the page stays allocated. */
	struct page *p = alloc_pages(mm, GFP_KERNEL, 0);
	REQUIRE(p);
	unsigned long ppfn = page_to_pfn(mm, p);
	BAD(mm, "aligned", ppfn, free_pages(mm, (unsigned long)page_address(mm, p) + 8, 0));
	BAD(mm, "aligned", ppfn, free_pages(mm, (unsigned long)page_address(mm, p) + MM_PAGE_SIZE - 1, 0));

	/* Wrong order, both ways; a non-existent order. */
	struct page *q = alloc_pages(mm, GFP_KERNEL, 2);
	REQUIRE(q);
	unsigned long qpfn = page_to_pfn(mm, q);
	/* named exactly: "order" alone is in every report's "(refcount:1 order:2)" */
	BAD(mm, "order mismatch: allocated as order 2, freed as order 1", qpfn, __free_pages(mm, q, 1));
	BAD(mm, "order mismatch: allocated as order 2, freed as order 3", qpfn, __free_pages(mm, q, 3));
	BAD(mm, "order", ppfn, __free_pages(mm, p, 11));
	BAD(mm, "order", ppfn, __free_pages(mm, p, 63));
	BAD(mm, "order", qpfn, free_pages(mm, (unsigned long)page_address(mm, q), 12));

	/* A corrupted reference count (someone else still holds it). */
	set_page_count(p, 2);
	BAD(mm, "refcount", ppfn, __free_pages(mm, p, 0));
	set_page_count(p, 1);

	/* Tail pages of a compound page, at any order. */
	struct page *comp = alloc_pages(mm, GFP_KERNEL | __GFP_COMP, 3);
	REQUIRE(comp);
	unsigned long cpfn = page_to_pfn(mm, comp);
	BAD(mm, "tail", cpfn + 1, __free_pages(mm, comp + 1, 0));
	BAD(mm, "tail", cpfn + 7, __free_pages(mm, comp + 7, 3));
	BAD(mm, "tail", cpfn + 4, free_pages(mm, (unsigned long)page_address(mm, comp + 4), 2));

	/* Interior pages of an ordinary (non-compound) higher-order allocation. */
	struct page *big = alloc_pages(mm, GFP_KERNEL, 5);
	REQUIRE(big);
	unsigned long bpfn = page_to_pfn(mm, big);
	BAD(mm, "interior", bpfn + 1, __free_pages(mm, big + 1, 0));
	BAD(mm, "interior", bpfn + 16, __free_pages(mm, big + 16, 4));
	BAD(mm, "interior", bpfn + 31, free_pages(mm, (unsigned long)page_address(mm, big + 31), 0));

	/*
	 * A tail page whose state says someone else holds it (free_page_is_bad()
	 * on every tail, free_pages_prepare()): the whole free is refused, the
	 * block stays allocated.  The model merged such a tail into the buddy.
	 */
	/* (The planted state is undone before bad_end's checker walk, which would see it too.) */
#define BAD_TAIL(keyword, pfn, stmt, plant, undo)                            \
	do {                                                                 \
		plant;                                                       \
		bad_begin(mm);                                               \
		stmt;                                                        \
		undo;                                                        \
		bad_end(mm, #stmt " with " #plant, keyword, pfn);            \
	} while (0)
	BAD_TAIL("tail page: already free", bpfn + 7, __free_pages(mm, big, 5),
		 page_flag_set(&big[7], PG_buddy), page_flag_clear(&big[7], PG_buddy));
	BAD_TAIL("tail page: PAGE_FLAGS_CHECK_AT_FREE", bpfn + 30, __free_pages(mm, big, 5),
		 page_flag_set(&big[30], PG_slab), page_flag_clear(&big[30], PG_slab));
	BAD_TAIL("tail page: nonzero _refcount", bpfn + 3, __free_pages(mm, big, 5),
		 set_page_count(&big[3], 1), set_page_count(&big[3], 0));
	BAD_TAIL("tail page: PAGE_FLAGS_CHECK_AT_FREE", cpfn + 2, __free_pages(mm, comp, 3),
		 page_flag_set(&comp[2], PG_slab), page_flag_clear(&comp[2], PG_slab));
#undef BAD_TAIL

	/*
	 * A page coming off a free list with a stale flag - PG_head, which is
	 * no free-time flag - is bad (check_new_page() tests every page flag,
	 * PAGE_FLAGS_CHECK_AT_PREP); the model tested only the free-time ones.
	 */
	struct page *freep = pfn_to_page(mm, 20000 + 77);
	REQUIRE(freep && page_count(freep) == 0);
	page_flag_set(freep, PG_head);
	unsigned long rep_prep = mm_nr_reports(mm);
	CHECK(check_new_pages(mm, freep, 0));
	CHECK_MSG(mm_nr_reports(mm) == rep_prep + 1 && strstr(mm_last_report(mm)->reason, "PAGE_FLAGS_CHECK_AT_PREP"),
		  "a free page with PG_head: %lu reports, reason '%s'", mm_nr_reports(mm) - rep_prep,
		  mm_nr_reports(mm) > rep_prep ? mm_last_report(mm)->reason : "");
	page_flag_clear(freep, PG_head);
	CHECK(!check_new_pages(mm, freep, 0));

	/* struct page pointers that are not struct pages of this memmap. */
	struct page fake;
	memset(&fake, 0, sizeof(fake));
	BAD(mm, "struct page", ~0UL, __free_pages(mm, &fake, 0));
	BAD(mm, "struct page", ~0UL, __free_pages(mm, NULL, 0));
	BAD(mm, "struct page", ~0UL, __free_pages(mm, (struct page *)((char *)p + 8), 0));
	BAD(mm, "struct page", ~0UL, __free_pages(mm, p + (6000 - (long)ppfn), 0));        /* a hole's slot */
	BAD(mm, "struct page", ~0UL, __free_pages(mm, p - (long)(ppfn - first) - 1, 0));   /* before the first pfn */
	BAD(mm, "struct page", ~0UL, __free_pages(mm, p + (long)(mm_end_pfn(mm) - ppfn), 0));

	/* A page of another instance. */
	struct mm *other = make(MM_BAD_REPORT);
	struct page *op = alloc_pages(other, GFP_KERNEL, 0);
	REQUIRE(op);
	BAD(mm, "struct page", ~0UL, __free_pages(mm, op, 0));
	BAD(mm, "outside", ~0UL, free_pages(mm, (unsigned long)page_address(other, op), 0));
	CHECK(mm_nr_reports(other) == 0);
	__free_pages(other, op, 0);
	CHECK_MM(other, 3);
	mm_destroy(other);

	/* Invalid gfp bits: no page, one report, nothing allocated. */
	struct page *r;
	BAD(mm, "gfp", ~0UL, r = alloc_pages(mm, GFP_KERNEL | 0x10000u, 0));
	CHECK(r == NULL);
	BAD(mm, "gfp", ~0UL, r = alloc_pages(mm, 0x80000000u, 3));
	CHECK(r == NULL);

	/*
	 * Invalid combinations of valid bits (6.6 with CONFIG_DEBUG_VM:
	 * gfp_zone()'s VM_BUG_ON on GFP_ZONE_BAD, gfp_migratetype()'s
	 * VM_WARN_ON): refused the same way, by the bulk path too.
	 */
	static const gfp_t zone_bad[] = {
		__GFP_DMA | __GFP_DMA32, __GFP_DMA | __GFP_HIGHMEM, __GFP_DMA32 | __GFP_HIGHMEM, GFP_ZONE_MODIFIERS,
		__GFP_DMA | __GFP_HIGHMEM | __GFP_MOVABLE, __GFP_DMA | __GFP_DMA32 | __GFP_MOVABLE,
		__GFP_DMA32 | __GFP_HIGHMEM | __GFP_MOVABLE, GFP_ZONE_MODIFIERS | __GFP_MOVABLE,
	};
	for (size_t i = 0; i < sizeof(zone_bad) / sizeof(zone_bad[0]); i++) {
		BAD(mm, "zone modifier", ~0UL, r = alloc_pages(mm, GFP_KERNEL | zone_bad[i], (unsigned int)i % 3));
		CHECK_MSG(r == NULL, "gfp %#x served", GFP_KERNEL | zone_bad[i]);
	}
	BAD(mm, "__GFP_RECLAIMABLE", ~0UL, r = alloc_pages(mm, GFP_KERNEL | GFP_MOVABLE_MASK, 0));
	CHECK(r == NULL);
	BAD(mm, "__GFP_RECLAIMABLE", ~0UL, r = alloc_pages(mm, GFP_HIGHUSER_MOVABLE | __GFP_RECLAIMABLE, 2));
	CHECK(r == NULL);
	struct page *arr[8] = { NULL };
	unsigned long got;
	BAD(mm, "zone modifier", ~0UL, got = __alloc_pages_bulk(mm, GFP_KERNEL | __GFP_DMA | __GFP_DMA32, 8, NULL, arr));
	CHECK(got == 0 && arr[0] == NULL);
	BAD(mm, "__GFP_RECLAIMABLE", ~0UL, got = __alloc_pages_bulk(mm, GFP_KERNEL | GFP_MOVABLE_MASK, 8, NULL, arr));
	CHECK(got == 0 && arr[0] == NULL);
	/* With __GFP_MOVABLE each zone modifier still names one zone: served, no report. */
	static const struct { gfp_t gfp; int zone; } one_zone[] = {
		{ __GFP_DMA | __GFP_MOVABLE, ZONE_DMA }, { __GFP_DMA32 | __GFP_MOVABLE, ZONE_DMA32 },
		{ __GFP_HIGHMEM | __GFP_MOVABLE, ZONE_MOVABLE }, { __GFP_MOVABLE, ZONE_NORMAL },
	};
	for (size_t i = 0; i < sizeof(one_zone) / sizeof(one_zone[0]); i++) {
		unsigned long n0 = mm_nr_reports(mm);
		r = alloc_pages(mm, GFP_KERNEL | one_zone[i].gfp, 0);
		REQUIRE(r);
		CHECK_MSG(mm_nr_reports(mm) == n0, "gfp %#x reported", GFP_KERNEL | one_zone[i].gfp);
		CHECK_MSG((int)page_zonenum(r) <= one_zone[i].zone, "gfp %#x: a page of zone %d, above %d",
			  GFP_KERNEL | one_zone[i].gfp, (int)page_zonenum(r), one_zone[i].zone);
		__free_pages(mm, r, 0);
	}

	/* order > max_order: no page; the kernel WARNs - the model must report it too. */
	bad_begin(mm);
	r = alloc_pages(mm, GFP_KERNEL, 11);
	CHECK(r == NULL);
	struct state after;
	take(mm, &after);
	CHECK(memcmp(&before_, &after, sizeof(after)) == 0);
	CHECK_MSG(mm_nr_reports(mm) - reports_before_ == 1,
		  "alloc_pages(order 11 > max_order 10): %lu reports (alloc.c returns NULL silently; the kernel WARNs)",
		  mm_nr_reports(mm) - reports_before_);
	CHECK(alloc_pages(mm, GFP_KERNEL, 200) == NULL);
	CHECK_MM(mm, 3);

	/* free_pages(0) is a no-op, as in the kernel: no report. */
	bad_begin(mm);
	free_pages(mm, 0, 0);
	CHECK(mm_nr_reports(mm) == reports_before_);

	/*
	 * Double frees.  First while the page sits on a pcp list (BAD() would
	 * drain it, so by hand: the pcp count and PGFREE must not move, and
	 * after a drain the checker must find the page in one place only).
	 */
	int zp = (int)page_zonenum(p);
	drain_all_pages(mm, NULL);
	__free_pages(mm, p, 0);                         /* now on this vCPU's pcp list */
	struct mm_pcp_info pi0, pi1;
	int cpu = -1;
	for (int i = 0; i < (int)mm_get_config(mm)->nr_cpus; i++)
		if (mm_pcp_info(mm, zp, i, &pi0) == 0 && pi0.count == 1)
			cpu = i;
	CHECK(cpu >= 0);
	/* mm_pcp_info() of no zone or no vCPU: -1, the caller's struct untouched (the UBSan build also checks the index) */
	struct mm_pcp_info none = { -7, -7, -7 };
	const int bad_zc[][2] = { { MAX_NR_ZONES, 0 }, { -1, 0 }, { zp, -1 }, { zp, (int)mm_get_config(mm)->nr_cpus } };
	for (size_t i = 0; i < sizeof(bad_zc) / sizeof(bad_zc[0]); i++)
		CHECK_MSG(mm_pcp_info(mm, (enum zone_type)bad_zc[i][0], bad_zc[i][1], &none) == -1 && none.count == -7 &&
				  none.high == -7 && none.batch == -7,
			  "mm_pcp_info(zone %d, cpu %d) did not refuse", bad_zc[i][0], bad_zc[i][1]);
	/* and mm_zone() of no zone: NULL */
	CHECK(mm_zone(mm, (enum zone_type)MAX_NR_ZONES) == NULL && mm_zone(mm, (enum zone_type)-1) == NULL);
	if (cpu >= 0) {
		unsigned long rep0 = mm_nr_reports(mm), pgfree0 = mm_vm_event(mm, PGFREE);
		__free_pages(mm, p, 0);
		CHECK(mm_nr_reports(mm) == rep0 + 1 && strcasestr(mm_last_report(mm)->reason, "double free"));
		CHECK(mm_pcp_info(mm, zp, cpu, &pi1) == 0 && pi1.count == 1);
		CHECK(mm_vm_event(mm, PGFREE) == pgfree0);
		CHECK_MM(mm, 3);
	}
	/* Then in the buddy: merged into a larger free block, or its head. */
	BAD(mm, "double free", ppfn, __free_pages(mm, p, 0));
	struct page *o4 = alloc_pages(mm, GFP_KERNEL, 4);
	REQUIRE(o4);
	unsigned long o4pfn = page_to_pfn(mm, o4);
	__free_pages(mm, o4, 4);                        /* straight to the buddy */
	BAD(mm, "double free", o4pfn, __free_pages(mm, o4, 4));
	BAD(mm, "double free", o4pfn + 3, __free_pages(mm, o4 + 3, 0));
	/* A page never allocated at all (free since creation). */
	unsigned long never = 20000 + 123;
	CHECK(pfn_to_page(mm, never) && zone_free_pages(mm_zone(mm, ZONE_MOVABLE)) == 4576);
	BAD(mm, "double free", never, __free_pages(mm, pfn_to_page(mm, never), 0));
	BAD(mm, "double free", 20000, free_pages(mm, base + (20000 - first) * MM_PAGE_SIZE, 5));

	/* And freed as order 0 (page_owner's order, as the earlier ones). */
	BAD(mm, "order mismatch: allocated as order 2, freed as order 0", qpfn, __free_pages(mm, q, 0));

	/* After all that, the good frees still work and everything comes back. */
	__free_pages(mm, q, 2);
	__free_pages(mm, comp, 3);
	__free_pages(mm, big, 5);
	take(mm, &s1);
	CHECK_MSG(memcmp(&s0.f, &s1.f, sizeof(s0.f)) == 0, "free lists not back at creation");
	CHECK(s1.pgalloc == s1.pgfree);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/* MM_BAD_ABORT: the report, then abort().  In a child, so the test survives. */
static int abort_case;

static void bad_call(void)
{
	struct mm *mm = make(MM_BAD_ABORT);
	struct page *p = alloc_pages(mm, GFP_KERNEL, 4);
	switch (abort_case) {
	case 0:
		free_pages(mm, (unsigned long)mm_arena_base(mm) - MM_PAGE_SIZE, 0);
		break;
	case 1:
		__free_pages(mm, p, 4);
		__free_pages(mm, p, 4);
		break;
	case 2:
		__free_pages(mm, p + 1, 0);
		break;
	case 3:
		alloc_pages(mm, 0x40000u, 0);
		break;
	}
}   /* returning - surviving - fails the test */

static void expect_abort(const char *what, int which)
{
	abort_case = which;
	int status = test_run_child(bad_call);
	CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT, "%s: child %s %d", what,
		  WIFSIGNALED(status) ? "died of signal" : "exited with", WIFSIGNALED(status) ? WTERMSIG(status) :
		  WEXITSTATUS(status));
}

int main(void)
{
	test_reports();
	expect_abort("free outside the arena", 0);
	expect_abort("double free", 1);
	expect_abort("interior page", 2);
	expect_abort("invalid gfp", 3);
	TEST_DONE();
}

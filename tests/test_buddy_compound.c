/* SPDX-License-Identifier: MIT */
/*
 * test_buddy_compound.c - what a client gets: compound pages (head, tails
 * pointing at it, page[1] holding the order, nothing left behind after the
 * free), __GFP_ZERO on memory that was dirty, real memory that keeps what
 * is written into it until it is freed while other blocks come and go,
 * and the address <-> page <-> pfn conversions, tails and offsets
 * included.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "page/pcp.h"
#include "test.h"

#define MEMALLOC (__GFP_MEMALLOC | __GFP_NORETRY)

static uint64_t rng_state = 0x5eed;
static uint64_t rnd(void) { return test_splitmix64(&rng_state); }

static struct mm *make(void)
{
	struct mm_config c;
	mm_config_default(&c);
	c.quiet = true;
	return test_create(&c);
}

static void test_compound(void)
{
	struct mm *mm = make();
	unsigned int max = mm_get_config(mm)->max_order;

	for (unsigned int order = 0; order <= max; order++) {
		struct page *p = alloc_pages(mm, GFP_KERNEL | __GFP_COMP, order);
		REQUIRE(p);
		unsigned long nr = 1UL << order;
		if (order == 0) {
			/* An order-0 page is never compound. */
			CHECK(!PageHead(p) && !PageTail(p));
		} else {
			CHECK_MSG(PageHead(p) && !PageTail(p), "order %u: head flags", order);
			CHECK_MSG(p[1].compound_order == order, "order %u: page[1] holds %u", order, p[1].compound_order);
			unsigned long bad = 0;
			for (unsigned long i = 1; i < nr; i++)
				bad += !PageTail(&p[i]) || PageHead(&p[i]) ||
				       READ_ONCE(p[i].compound_head) != ((unsigned long)p | 1UL);
			CHECK_MSG(bad == 0, "order %u: %lu tails do not point at the head", order, bad);
		}
		CHECK(page_count(p) == 1);
		CHECK_MM(mm, 2);
		__free_pages(mm, p, order);
		drain_all_pages(mm, NULL);

		/* The same memory, now as a plain block: no head or tail left over. */
		struct page *q = alloc_pages(mm, GFP_KERNEL, order);
		REQUIRE(q);
		unsigned long left = 0;
		for (unsigned long i = 0; i < nr; i++)
			left += PageHead(&q[i]) || PageTail(&q[i]);
		CHECK_MSG(left == 0, "order %u: %lu pages still compound after the free", order, left);
		__free_pages(mm, q, order);
	}
	/* Compound pages of every order at once, freed out of order (odd orders down, even up). */
	struct page *live[MM_NR_ORDERS_LIMIT];
	int top = (int)max;
	for (int o = 1; o <= top; o++) {
		live[o] = alloc_pages(mm, GFP_HIGHUSER_MOVABLE | __GFP_COMP | __GFP_ZERO, (unsigned int)o);
		REQUIRE(live[o]);
	}
	CHECK_MM(mm, 3);
	for (int o = top; o >= 1; o--)
		if (o & 1)
			__free_pages(mm, live[o], (unsigned int)o);
	for (int o = 2; o <= top; o += 2)
		__free_pages(mm, live[o], (unsigned int)o);
	drain_all_pages(mm, NULL);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

static bool all_bytes(const void *p, size_t n, unsigned char v)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		if (b[i] != v)
			return false;
	return true;
}

static void test_zero(void)
{
	struct mm *mm = make();
	unsigned long n = 0, total = mm_nr_valid_pages(mm);
	struct page **all = calloc(total, sizeof(*all));
	REQUIRE(all);

	/* Dirty every page of memory, then give it all back. */
	struct page *p;
	while ((p = alloc_pages(mm, GFP_HIGHUSER_MOVABLE | MEMALLOC, 0))) {
		memset(page_address(mm, p), 0xa5, MM_PAGE_SIZE);
		all[n++] = p;
	}
	CHECK(n == total);
	for (unsigned long i = 0; i < n; i++)
		__free_pages(mm, all[i], 0);
	drain_all_pages(mm, NULL);

	/* Every __GFP_ZERO allocation now lands on dirty memory and must read zero. */
	unsigned long blocks = 0, pages = 0, dirty = 0;
	for (unsigned int round = 0; round < 400; round++) {
		unsigned int order = (unsigned int)(rnd() % 6);
		gfp_t gfp = (round & 1 ? GFP_KERNEL : GFP_HIGHUSER_MOVABLE) | __GFP_ZERO | (round & 2 ? __GFP_COMP : 0);
		p = alloc_pages(mm, gfp, order);
		if (!p)
			break;
		dirty += !all_bytes(page_address(mm, p), MM_PAGE_SIZE << order, 0);
		blocks++;
		pages += 1UL << order;
		all[blocks - 1] = p;
		((unsigned char *)page_address(mm, p))[0] = (unsigned char)order;   /* remember the order */
	}
	CHECK(pages >= blocks);   /* every block is at least one page */
	CHECK_MSG(dirty == 0, "%lu of %lu __GFP_ZERO blocks were not zero", dirty, blocks);
	CHECK(blocks == 400);
	/* get_zeroed_page too. */
	unsigned long addr = get_zeroed_page(mm, GFP_KERNEL);
	CHECK(addr != 0 && all_bytes((void *)addr, MM_PAGE_SIZE, 0));
	free_pages(mm, addr, 0);
	for (unsigned long i = 0; i < blocks; i++) {
		unsigned int order = ((unsigned char *)page_address(mm, all[i]))[0];
		__free_pages(mm, all[i], order);
	}
	drain_all_pages(mm, NULL);
	CHECK(mm_vm_event(mm, PGALLOC) == mm_vm_event(mm, PGFREE));
	CHECK_MM(mm, 3);
	free(all);
	mm_destroy(mm);
}

/* What is written stays until the free, whatever else happens. */
struct blk {
	struct page *page;
	unsigned int order;
	uint64_t tag;
};

static uint64_t word_at(uint64_t tag, size_t i)
{
	return (tag ^ (i * 0x9e3779b97f4a7c15ULL)) | 1;
}

static void fill_pattern(struct mm *mm, const struct blk *b)
{
	uint64_t *w = page_address(mm, b->page);
	size_t n = (MM_PAGE_SIZE << b->order) / sizeof(*w);
	for (size_t i = 0; i < n; i++)
		w[i] = word_at(b->tag, i);
}

static bool pattern_ok(struct mm *mm, const struct blk *b)
{
	const uint64_t *w = page_address(mm, b->page);
	size_t n = (MM_PAGE_SIZE << b->order) / sizeof(*w);
	for (size_t i = 0; i < n; i++)
		if (w[i] != word_at(b->tag, i))
			return false;
	return true;
}

static void test_data_survives(void)
{
	struct mm *mm = make();
	enum { KEEP = 300, CHURN = 64 };
	struct blk keep[KEEP], churn[CHURN];
	memset(churn, 0, sizeof(churn));

	for (int i = 0; i < KEEP; i++) {
		keep[i].order = (unsigned int)(rnd() % 5);
		keep[i].page = alloc_pages(mm, i % 3 ? GFP_KERNEL : GFP_HIGHUSER_MOVABLE | __GFP_COMP, keep[i].order);
		REQUIRE(keep[i].page);
		keep[i].tag = rnd();
		fill_pattern(mm, &keep[i]);
	}
	/* Churn: allocate, scribble and free other blocks, with drains and checks in between. */
	unsigned long bad = 0;
	for (int step = 0; step < 6000; step++) {
		struct blk *c = &churn[rnd() % CHURN];
		if (c->page) {
			bad += !pattern_ok(mm, c);
			__free_pages(mm, c->page, c->order);
			c->page = NULL;
		} else {
			c->order = (unsigned int)(rnd() % 7);
			c->page = alloc_pages(mm, (rnd() & 1) ? GFP_KERNEL : GFP_HIGHUSER_MOVABLE, c->order);
			if (c->page) {
				c->tag = rnd();
				fill_pattern(mm, c);
			}
		}
		if (step % 1000 == 999) {
			drain_all_pages(mm, NULL);
			CHECK_MM(mm, 3);
			for (int i = 0; i < KEEP; i++)
				bad += !pattern_ok(mm, &keep[i]);
		}
	}
	CHECK_MSG(bad == 0, "%lu blocks lost their contents while allocated", bad);
	/* Freed one by one, each checked right before its free. */
	for (int i = 0; i < KEEP; i++) {
		CHECK(pattern_ok(mm, &keep[i]));
		__free_pages(mm, keep[i].page, keep[i].order);
	}
	for (int i = 0; i < CHURN; i++)
		if (churn[i].page)
			__free_pages(mm, churn[i].page, churn[i].order);
	drain_all_pages(mm, NULL);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

static void test_conversions(void)
{
	struct mm *mm = make();
	const struct mm_config *c = mm_get_config(mm);
	char *base = mm_arena_base(mm);

	CHECK(mm_first_pfn(mm) == 1 && mm_end_pfn(mm) == 24576);
	CHECK(mm_arena_size(mm) == (24576 - 1) * MM_PAGE_SIZE);
	CHECK(mm_nr_valid_pages(mm) == 4095 + 8092 + 7695 + 4576);

	struct page *p = alloc_pages(mm, GFP_KERNEL | __GFP_COMP, 4);
	REQUIRE(p);
	unsigned long pfn = page_to_pfn(mm, p);
	for (unsigned long i = 0; i < 16; i++) {
		char *va = page_address(mm, p + i);
		CHECK(va == base + (pfn + i - mm_first_pfn(mm)) * MM_PAGE_SIZE);
		CHECK(virt_to_page(mm, va) == p + i);
		CHECK(virt_to_page(mm, va + MM_PAGE_SIZE - 1) == p + i);
		CHECK(pfn_to_page(mm, pfn + i) == p + i && page_to_pfn(mm, p + i) == pfn + i);
	}
	CHECK(virt_to_page(mm, base - 1) == NULL);
	CHECK(virt_to_page(mm, base + mm_arena_size(mm)) == NULL);
	CHECK(virt_to_page(mm, base + (6050 - mm_first_pfn(mm)) * MM_PAGE_SIZE) == NULL);   /* a hole */
	CHECK(pfn_to_page(mm, 0) == NULL && pfn_to_page(mm, 6000) == NULL && pfn_to_page(mm, 24576) == NULL);
	__free_pages(mm, p, 4);

	/* __get_free_pages drops __GFP_HIGHMEM: never ZONE_MOVABLE, even for a movable gfp. */
	unsigned long a = __get_free_pages(mm, GFP_HIGHUSER_MOVABLE, 2);
	REQUIRE(a != 0 && ((a - (unsigned long)base) & (MM_PAGE_SIZE - 1)) == 0);
	unsigned long apfn = mm_first_pfn(mm) + (a - (unsigned long)base) / MM_PAGE_SIZE;
	CHECK((apfn & 3) == 0);   /* pfn-aligned to the order (base is pfn 1, not 0) */
	CHECK(apfn < c->zones[ZONE_MOVABLE].start_pfn);
	memset((void *)a, 0x3c, 4 * MM_PAGE_SIZE);
	free_pages(mm, a, 2);
	CHECK(mm_nr_reports(mm) == 0);
	drain_all_pages(mm, NULL);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

int main(void)
{
	test_compound();
	test_zero();
	test_data_survives();
	test_conversions();
	TEST_DONE();
}

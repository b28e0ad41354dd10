/* SPDX-License-Identifier: MIT */
/*
 * test_config_invalid.c - every kind of invalid config mm_config_validate
 * names gets NULL from mm_create and a message that says what is wrong
 * (checked by keyword), never a crash; the message buffer is respected at
 * any size (even none).  Then a few thousand random configs near the
 * edges: each is either rejected with a message or builds a machine that
 * passes mm_check level 3 and serves an allocation.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mm/mm.h"
#include "test.h"


static void base(struct mm_config *c)
{
	mm_config_default(c);
	c->quiet = true;
}

/* @c must be rejected, by mm_config_validate and by mm_create, naming @keyword. */
static void rejected(const char *what, const struct mm_config *c, const char *keyword)
{
	char err[512], err2[512];
	memset(err, 0, sizeof(err));
	memset(err2, 0, sizeof(err2));
	int rc = mm_config_validate(c, err2, sizeof(err2));
	struct mm *mm = mm_create(c, err, sizeof(err));
	CHECK_MSG(mm == NULL, "%s: mm_create accepted it", what);
	CHECK_MSG(rc != 0, "%s: mm_config_validate accepted it", what);
	CHECK_MSG(strcasestr(err, keyword) != NULL, "%s: message \"%s\" does not mention \"%s\"", what, err, keyword);
	CHECK_MSG(strcmp(err, err2) == 0, "%s: mm_create says \"%s\", mm_config_validate \"%s\"", what, err, err2);
	if (mm)
		mm_destroy(mm);
	/* Small and absent buffers: truncated, terminated, never overrun (ASan watches). */
	char tiny[8];
	memset(tiny, 'x', sizeof(tiny));
	CHECK(mm_create(c, tiny, sizeof(tiny)) == NULL);
	CHECK(memchr(tiny, '\0', sizeof(tiny)) != NULL);
	char one[1] = { 'x' };
	CHECK(mm_create(c, one, sizeof(one)) == NULL && one[0] == '\0');
	CHECK(mm_create(c, NULL, 0) == NULL);
	CHECK(mm_create(c, err, 0) == NULL);
	/* No buffer, whatever the length says: refused, nothing written (mm.h). */
	CHECK(mm_create(c, NULL, sizeof(err)) == NULL);
	CHECK_MSG(mm_config_validate(c, NULL, sizeof(err)) != 0, "%s: validate, no buffer", what);
}

int main(void)
{
	struct mm_config c;

	CHECK(mm_create(NULL, NULL, 0) == NULL);
	char err[256] = "";
	CHECK(mm_create(NULL, err, sizeof(err)) == NULL && strcasestr(err, "null"));
	CHECK(mm_config_validate(NULL, NULL, 0) != 0);

	base(&c); c.nr_cpus = 0;                         rejected("no cpus", &c, "nr_cpus");
	base(&c); c.nr_cpus = MM_MAX_CPUS + 1;           rejected("too many cpus", &c, "nr_cpus");
	base(&c); c.max_order = MM_MAX_ORDER_LIMIT + 1;  rejected("max_order", &c, "max_order");
	base(&c); c.max_order = ~0u;                     rejected("max_order ~0", &c, "max_order");
	base(&c); c.pageblock_order = 11;                rejected("pageblock_order > max_order", &c, "pageblock_order");

	base(&c); c.zones[ZONE_DMA32] = (struct mm_span){ 12288, 4096 };
	rejected("zone ends before it starts", &c, "ends before");
	base(&c); c.zones[ZONE_MOVABLE] = (struct mm_span){ 20000, ~0UL };
	rejected("zone beyond the address space", &c, "address space");
	base(&c); c.zones[ZONE_DMA32].start_pfn = 4000;
	rejected("zones overlap", &c, "overlap");
	base(&c);
	c.zones[ZONE_DMA] = (struct mm_span){ 30000, 31000 };
	rejected("zones out of order", &c, "order");
	base(&c); memset(c.zones, 0, sizeof(c.zones)); c.nr_holes = 0;
	rejected("no memory", &c, "zero pages");
	base(&c); memset(c.zones, 0, sizeof(c.zones)); c.nr_holes = 0;
	c.zones[ZONE_DMA] = (struct mm_span){ 0, 16 };
	c.zones[ZONE_NORMAL] = (struct mm_span){ MM_MAX_SPAN_PAGES, MM_MAX_SPAN_PAGES + 16 };
	rejected("span over the limit", &c, "limit");

	base(&c); c.nr_holes = MM_MAX_HOLES + 1;          rejected("too many holes", &c, "nr_holes");
	base(&c); c.holes[0] = (struct mm_span){ 7000, 7000 };
	rejected("empty hole", &c, "empty");
	base(&c); c.holes[0] = (struct mm_span){ 7000, 6000 };
	rejected("reversed hole", &c, "reversed");
	base(&c); c.holes[0] = (struct mm_span){ 4000, 4200 };
	rejected("hole across two zones", &c, "not inside");
	base(&c); c.holes[0] = (struct mm_span){ 30000, 30010 };
	rejected("hole outside every zone", &c, "not inside");
	base(&c); c.holes[1] = (struct mm_span){ 6050, 6150 };
	rejected("holes overlap", &c, "overlap");
	base(&c); memset(c.zones, 0, sizeof(c.zones));
	c.zones[ZONE_NORMAL] = (struct mm_span){ 100, 200 };
	c.nr_holes = 2;
	c.holes[0] = (struct mm_span){ 100, 150 };
	c.holes[1] = (struct mm_span){ 150, 200 };
	rejected("holes cover all memory", &c, "zero pages");
	base(&c); c.holes[0] = (struct mm_span){ 0, 1 };   /* pfn 0 is in no zone (DMA starts at 1) */
	rejected("hole below the first zone", &c, "not inside");

	base(&c); c.min_free_kbytes = 24458UL * 4 + 1;    rejected("min_free_kbytes", &c, "min_free_kbytes");
	base(&c); c.watermark_scale_factor = 3001;         rejected("watermark_scale_factor", &c, "watermark_scale_factor");
	base(&c); c.wmark_algo = (enum mm_wmark_algo)7;    rejected("wmark_algo", &c, "wmark_algo");
	base(&c); c.bad_policy = (enum mm_bad_policy)-1;   rejected("bad_policy", &c, "bad_policy");
	base(&c); c.debug = 4;                             rejected("debug", &c, "debug");
	base(&c); c.pcp_batch = 4097;                      rejected("pcp_batch", &c, "pcp_batch");
	base(&c); c.pcp_high = (1u << 22) + 1;             rejected("pcp_high", &c, "pcp_high");
	base(&c); c.percpu_pagelist_high_fraction = 3;     rejected("high_fraction", &c, "percpu_pagelist_high_fraction");

	/* The edges that are valid. */
	base(&c); c.nr_cpus = MM_MAX_CPUS; c.max_order = MM_MAX_ORDER_LIMIT; c.pageblock_order = MM_MAX_ORDER_LIMIT;
	c.watermark_scale_factor = 3000; c.min_free_kbytes = 24458UL * 4; c.debug = 3;
	struct mm *mm = mm_create(&c, err, sizeof(err));
	CHECK_MSG(mm != NULL, "valid edge config rejected: %s", err);
	if (mm) {
		CHECK_MM(mm, 3);
		mm_destroy(mm);
	}

	/*
	 * Random configs around the edges: small spans, holes anywhere, orders
	 * anywhere, tunables in and out of range.  Each is rejected with a
	 * message, or it builds a machine that is consistent and works.
	 */
	uint64_t x = 88172645463325252ULL;
#define RND() (x ^= x << 13, x ^= x >> 7, x ^= x << 17, x)
	unsigned long accepted = 0, refused = 0;
	for (int i = 0; i < 1500; i++) {
		memset(&c, 0, sizeof(c));
		c.quiet = true;
		c.nr_cpus = (unsigned)(RND() % 6);
		c.max_order = (unsigned)(RND() % 15);
		c.pageblock_order = (unsigned)(RND() % 15);
		unsigned long pfn = RND() % 3 ? RND() % 64 : (1UL << 20) + RND() % 1000;
		for (int z = 0; z < MAX_NR_ZONES; z++) {
			if (RND() % 4 == 0)
				continue;
			unsigned long len = RND() % 5 ? RND() % 700 : RND() % 3;
			if (RND() % 16 == 0)
				pfn -= RND() % 50;                  /* overlap, sometimes */
			c.zones[z] = (struct mm_span){ pfn, pfn + len };
			if (RND() % 32 == 0)
				c.zones[z] = (struct mm_span){ pfn + len, pfn };   /* reversed */
			pfn += len + (RND() % 3 ? 0 : RND() % 40);
		}
		c.nr_holes = (unsigned)(RND() % 5);
		for (unsigned int h = 0; h < c.nr_holes; h++) {
			unsigned long s = RND() % (pfn + 10);
			c.holes[h] = (struct mm_span){ s, s + RND() % 30 };
		}
		c.min_free_kbytes = RND() % 4 ? 0 : RND() % 3000;
		c.watermark_scale_factor = RND() % 8 ? (unsigned)(RND() % 40) : (unsigned)(RND() % 4000);
		for (int z = 0; z < MAX_NR_ZONES; z++)
			c.lowmem_reserve_ratio[z] = (unsigned)(RND() % 300);
		c.wmark_algo = (enum mm_wmark_algo)(RND() % 9 ? RND() % 2 : RND() % 5);
		c.pcp_batch = (unsigned)(RND() % 9 ? RND() % 64 : RND() % 5000);
		c.pcp_high = (unsigned)(RND() % 9 ? RND() % 512 : RND() % 100000);
		c.debug = (unsigned)(RND() % 5);

		char e[256] = "";
		mm = mm_create(&c, e, sizeof(e));
		if (!mm) {
			refused++;
			CHECK_MSG(e[0] != '\0', "config %d refused without a message", i);
			CHECK_MSG(mm_config_validate(&c, NULL, 0) != 0, "config %d: mm_create said \"%s\", "
				  "mm_config_validate accepts it", i, e);
			continue;
		}
		accepted++;
		CHECK_MSG(mm_config_validate(&c, NULL, 0) == 0, "config %d: created, yet invalid", i);
		CHECK_MM(mm, 3);
		struct page *p = alloc_pages(mm, GFP_HIGHUSER_MOVABLE | __GFP_MEMALLOC | __GFP_NORETRY, 0);
		CHECK_MSG(p != NULL, "config %d: %lu pages, no page for an emergency allocation", i, mm_nr_valid_pages(mm));
		if (p)
			__free_pages(mm, p, 0);
		CHECK(mm_nr_valid_pages(mm) > 0);
		CHECK_MM(mm, 3);
		mm_destroy(mm);
	}
	printf("random configs: %lu accepted, %lu refused\n", accepted, refused);
	CHECK(accepted > 100 && refused > 100);
	TEST_DONE();
}

/* SPDX-License-Identifier: MIT */
/*
 * configs.c - the named machine configs of configs.h.  Kept small: an
 * instance is reset after every input, at a cost linear in its pfns.
 */
#include <string.h>

#include "configs.h"

const char *const mf_config_names[MF_NR_CONFIGS] = {
	"micro", "tiny", "default", "holes", "unaligned", "tinyzones", "highpfn", "order0", "bigorder",
};

static void set_zones(struct mm_config *c, unsigned long base, const unsigned long bounds[MAX_NR_ZONES + 1])
{
	for (int z = 0; z < MAX_NR_ZONES; z++)
		c->zones[z] = (struct mm_span){ base + bounds[z], base + bounds[z + 1] };
}

void mf_config_named(struct mm_config *c, enum mf_config_kind kind, unsigned int cpus)
{
	mm_config_tiny(c);
	switch (kind) {
	case MF_CFG_TINY:
	case MF_NR_CONFIGS:
		break;
	case MF_CFG_MICRO: {
		static const unsigned long b[] = { 1, 64, 160, 288, 320 };
		c->max_order = 5;
		c->pageblock_order = 3;
		set_zones(c, 0, b);
		c->nr_holes = 1;
		c->holes[0] = (struct mm_span){ 100, 101 };
		break;
	}
	case MF_CFG_DEFAULT:
		mm_config_default(c);
		break;
	case MF_CFG_HOLES: {
		/* pageblock_order 5 (32 pages), max_order 7 */
		static const unsigned long b[] = { 1, 256, 640, 1152, 1536 };
		static const struct mm_span holes[] = {
			{ 1, 2 },          /* the first pfn of memory */
			{ 31, 33 },        /* across a pageblock boundary */
			{ 255, 256 },      /* the last pfn of DMA */
			{ 256, 257 },      /* the first pfn of DMA32 */
			{ 300, 301 }, { 302, 303 }, { 304, 305 },   /* a comb */
			{ 384, 416 },      /* one whole pageblock */
			{ 511, 513 },      /* across a max_order boundary */
			{ 700, 764 },      /* two pageblocks, not max_order aligned */
			{ 1100, 1152 },    /* the end of Normal */
			{ 1535, 1536 },    /* the last pfn of memory */
		};
		set_zones(c, 0, b);
		c->nr_holes = sizeof(holes) / sizeof(holes[0]);
		memcpy(c->holes, holes, sizeof(holes));
		break;
	}
	case MF_CFG_UNALIGNED: {
		static const unsigned long b[] = { 7, 333, 901, 1337, 1999 };
		set_zones(c, 0, b);
		c->nr_holes = 1;
		c->holes[0] = (struct mm_span){ 1000, 1001 };
		break;
	}
	case MF_CFG_TINYZONES: {
		c->max_order = 4;
		c->pageblock_order = 2;
		c->zones[ZONE_DMA] = (struct mm_span){ 5, 6 };          /* one page */
		c->zones[ZONE_DMA32] = (struct mm_span){ 0, 0 };        /* empty */
		c->zones[ZONE_NORMAL] = (struct mm_span){ 6, 13 };      /* seven pages */
		c->zones[ZONE_MOVABLE] = (struct mm_span){ 13, 77 };
		c->nr_holes = 1;
		c->holes[0] = (struct mm_span){ 9, 10 };
		break;
	}
	case MF_CFG_HIGHPFN: {
		static const unsigned long b[] = { 3, 200, 600, 1100, 1400 };
		set_zones(c, 1UL << 40, b);
		c->nr_holes = 1;
		c->holes[0] = (struct mm_span){ (1UL << 40) + 800, (1UL << 40) + 833 };
		break;
	}
	case MF_CFG_ORDER0: {
		static const unsigned long b[] = { 1, 40, 100, 180, 200 };
		c->max_order = 0;
		c->pageblock_order = 0;
		set_zones(c, 0, b);
		c->nr_holes = 1;
		c->holes[0] = (struct mm_span){ 50, 52 };
		break;
	}
	case MF_CFG_BIGORDER: {
		/* One order-12 block (all of DMA), small zones above it: ~5k pages to reset. */
		static const unsigned long b[] = { 4096, 8192, 8200, 9000, 9100 };
		c->max_order = 12;
		c->pageblock_order = 12;
		set_zones(c, 0, b);
		c->nr_holes = 1;
		c->holes[0] = (struct mm_span){ 8500, 8501 };
		break;
	}
	}
	c->nr_cpus = cpus ? cpus : 1;
	c->quiet = true;
	c->bad_policy = MM_BAD_REPORT;
}

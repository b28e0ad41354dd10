/* SPDX-License-Identifier: MIT */
/*
 * memmap_test.h - what the tests of memmap.c's mappings (test_memmap_kept,
 * test_memmap_fail) share: which addresses of this process are mapped, and
 * with what access (/proc/self/maps); their three-zone machine; using every
 * page of an instance.
 */
#ifndef MM_TEST_MEMMAP_TEST_H
#define MM_TEST_MEMMAP_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "test.h"

struct proc_vma {
	uintptr_t lo, hi;
	bool rw;
};

static struct proc_vma proc_vmas[65536];
static int proc_nr_vmas;

/* Read /proc/self/maps now; proc_access_at() answers from this copy. */
static inline void proc_maps_load(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	REQUIRE(f != NULL);
	char line[512];
	proc_nr_vmas = 0;
	while (fgets(line, sizeof(line), f) && proc_nr_vmas < (int)(sizeof(proc_vmas) / sizeof(proc_vmas[0]))) {
		unsigned long lo, hi;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) != 3)
			continue;
		proc_vmas[proc_nr_vmas++] = (struct proc_vma){ lo, hi, perms[0] == 'r' && perms[1] == 'w' };
	}
	fclose(f);
}

/* @a at the last proc_maps_load(): 1 readable and writable, 0 mapped without that access, -1 not mapped. */
static inline int proc_access_at(uintptr_t a)
{
	int lo = 0, hi = proc_nr_vmas - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (a < proc_vmas[mid].lo)
			hi = mid - 1;
		else if (a >= proc_vmas[mid].hi)
			lo = mid + 1;
		else
			return proc_vmas[mid].rw;
	}
	return -1;
}

/*
 * [@first, @end) over DMA, DMA32 and Normal (a quarter, a quarter, a half),
 * no holes, two vCPUs, orders up to @max_order, pageblocks of at most order 9.
 */
static inline void memmap_test_machine(struct mm_config *c, unsigned long first, unsigned long end,
				       unsigned int max_order)
{
	mm_config_default(c);
	c->nr_cpus = 2;
	c->max_order = max_order;
	c->pageblock_order = max_order < 9 ? max_order : 9;
	unsigned long q = first + (end - first) / 4;
	c->zones[ZONE_DMA] = (struct mm_span){ first, q };
	c->zones[ZONE_DMA32] = (struct mm_span){ q, 2 * q - first };
	c->zones[ZONE_NORMAL] = (struct mm_span){ 2 * q - first, end };
	c->zones[ZONE_MOVABLE] = (struct mm_span){ 0, 0 };
	c->nr_holes = 0;
	c->quiet = true;
}

/* Allocate every page (order 0, no watermark), write each, free them all; the checker after both. */
static inline void memmap_test_use_all(struct mm *mm, const char *what)
{
	unsigned long n = 0, cap = mm->nr_valid;
	struct page **pages = calloc(cap, sizeof(*pages));
	REQUIRE(pages != NULL);
	for (;;) {
		struct page *pg = alloc_pages(mm, GFP_KERNEL | __GFP_MEMALLOC | __GFP_NORETRY | __GFP_NOWARN, 0);
		if (!pg)
			break;
		REQUIRE(n < cap);
		memset(page_address(mm, pg), 0x5a, MM_PAGE_SIZE);
		pages[n++] = pg;
	}
	CHECK_MSG(n + 2000 > mm->nr_valid && n > 0, "%s: only %lu of %lu pages allocated", what, n, mm->nr_valid);
	CHECK_MM(mm, 2);
	for (unsigned long i = 0; i < n; i++)
		__free_pages(mm, pages[i], 0);
	drain_all_pages(mm, NULL);
	CHECK_MM(mm, 3);
	free(pages);
}

#endif /* MM_TEST_MEMMAP_TEST_H */

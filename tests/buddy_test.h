/* SPDX-License-Identifier: MIT */
/*
 * buddy_test.h - what the page-allocator tests share: a snapshot of every
 * zone's free lists (to compare a state with the one at creation) and the
 * zone a pfn belongs to according to the config alone (independent of the
 * allocator's own answer).
 */
#ifndef MM_BUDDY_TEST_H
#define MM_BUDDY_TEST_H

#include <string.h>

#include "mm/mm.h"

struct free_snap {
	unsigned long nr_free[MAX_NR_ZONES][MM_NR_ORDERS_LIMIT];   /* blocks per zone and order */
	long free[MAX_NR_ZONES];                                  /* NR_FREE_PAGES per zone */
};

static inline void free_snap_take(struct mm *mm, struct free_snap *s)
{
	memset(s, 0, sizeof(*s));
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = mm_zone(mm, z);
		if (!zone)
			continue;
		s->free[z] = zone_free_pages(zone);
		for (unsigned int o = 0; o < MM_NR_ORDERS_LIMIT; o++)
			s->nr_free[z][o] = zone_nr_free(zone, o);
	}
}

/* The zone a pfn belongs to according to @c, or -1 for holes and outside. */
static inline int cfg_zone_of(const struct mm_config *c, unsigned long pfn)
{
	for (unsigned int i = 0; i < c->nr_holes; i++)
		if (pfn >= c->holes[i].start_pfn && pfn < c->holes[i].end_pfn)
			return -1;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (pfn >= c->zones[z].start_pfn && pfn < c->zones[z].end_pfn)
			return z;
	return -1;
}

#endif /* MM_BUDDY_TEST_H */

/* SPDX-License-Identifier: MIT */
/*
 * instance.h - the harness's one narrow view of the allocator instance:
 * get a (cached, reset) instance for a config, capture its initial state,
 * check it, drain it, and prove at teardown that it is back to that state.
 * Everything the harness (not a target) knows about the allocator goes
 * through here, so another allocator can be put behind it later.
 */
#ifndef MF_INSTANCE_H
#define MF_INSTANCE_H

#include <stdbool.h>

#include "mm/mm.h"

struct mf_ctx;

struct mf_zone_base {
	bool populated;
	long free_pages;                                /* NR_FREE_PAGES */
	unsigned long nr_free[MM_NR_ORDERS_LIMIT];      /* free_area[o].nr_free: the buddyinfo line */
	unsigned long wmark[NR_WMARK];
	long reserve[MAX_NR_ZONES];                     /* lowmem_reserve[] */
	int pcp_high, pcp_batch;                        /* the pcp lists' high and batch (zone_highsize()) */
	int pcp_count[MM_MAX_CPUS];                     /* pages on each vCPU's pcp lists */
	unsigned long managed;
};

struct mf_baseline {
	struct mf_zone_base z[MAX_NR_ZONES];
};

void mf_baseline_capture(struct mm *mm, struct mf_baseline *b);
/*
 * Compare @now with @base; @lists: also nr_free per order and the pcp counts, @tunables: also
 * watermarks and reserves.  Returns false and describes the first
 * difference in @why.
 */
bool mf_baseline_same(const struct mf_baseline *base, const struct mf_baseline *now, bool lists,
		      bool tunables, const bool *skip_lists_zone, char *why, size_t whylen);

/* Teardown after every input: drain, check, compare, reset, compare again. */
void mf_instance_teardown(struct mf_ctx *c);
/* Pageblocks of zone @z reserved as MIGRATE_HIGHATOMIC (they legitimately survive frees). */
unsigned long mf_zone_reserved_highatomic(struct mm *mm, int z);
/* Destroy every cached instance (at exit, so LeakSanitizer stays quiet). */
void mf_instances_destroy(void);

#endif /* MF_INSTANCE_H */

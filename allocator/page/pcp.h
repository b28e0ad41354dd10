/* SPDX-License-Identifier: MIT */
/*
 * pcp.h - per-cpu page lists (struct per_cpu_pages) and their invariant P1.
 * See pcp.c for the locking essay.
 */
#ifndef MM_PCP_H
#define MM_PCP_H

#include "internal.h"

#define NR_PCP_ORDERS        (PAGE_ALLOC_COSTLY_ORDER + 1)
#define NR_PCP_LISTS         (MIGRATE_PCPTYPES * NR_PCP_ORDERS)

static inline bool pcp_allowed_order(unsigned int order)
{
	return order <= PAGE_ALLOC_COSTLY_ORDER;
}

int pcp_config_validate(const struct mm_config *c, char *err, size_t errlen);
int pcp_setup(struct mm *mm, char *err, size_t errlen);
void pcp_teardown(struct mm *mm);
void pcp_reset(struct mm *mm);

struct page *rmqueue_pcplist(struct zone *zone, unsigned int order, int migratetype,
			     unsigned int alloc_flags);
void free_unref_page(struct mm *mm, struct page *page, unsigned int order);
void drain_all_pages(struct mm *mm, struct zone *zone);

/* The checker's view (check/check.c): P1, and every pcp page for B4. */
bool pcp_check(struct mm *mm, int level, struct mm_violation *v);
void pcp_lock_all(struct mm *mm);
void pcp_unlock_all(struct mm *mm);
void pcp_for_each_page_locked(struct mm *mm, mm_mark_fn fn, void *w);
void pcp_dump_zoneinfo(struct mm *mm, struct zone *zone, FILE *f);   /* the "pagesets" section */

/* alloc.c */
void free_pages_to_buddy_locked(struct zone *zone, struct page *page, unsigned int order, int mt);

#endif /* MM_PCP_H */

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

/*
 * struct per_cpu_pages (Linux 6.6): one per zone per vCPU.  lock protects
 * lists and count; high and batch are tunables written by runtime updates
 * without the lock and read with READ_ONCE semantics (relaxed atomics here).
 *
 * Invariant P1 (pcp_check): count equals the pages on the lists; every page
 * there belongs to this zone, has its list's order (private), is aligned to
 * it, is not PageBuddy and has no reference; count stays near high (see
 * pcp_check for the exact bound and why it is not simply count <= high).
 */
struct per_cpu_pages {
	spinlock_t lock;                 /* protects lists, count, free_factor */
	int count;                       /* pages (not blocks) on the lists */
	atomic_int high;                 /* above this, free_pcppages_bulk trims */
	atomic_int batch;                /* refill / trim chunk */
	int high_seen;                   /* the largest high since the lists last fell under it (P1) */
	int batch_seen;                  /* the largest batch since then: a refill adds a whole batch (P1) */
	short free_factor;               /* batch scaling while freeing without allocating */
	struct list_head lists[NR_PCP_LISTS];  /* [order * MIGRATE_PCPTYPES + migratetype] */
	unsigned long l2_sig;            /* pcp_check: the state its last walk passed in (0: none) */
} __attribute__((aligned(64)));

static inline unsigned int order_to_pindex(int migratetype, unsigned int order)
{
	return order * MIGRATE_PCPTYPES + (unsigned int)migratetype;
}
static inline unsigned int pindex_to_order(unsigned int pindex)
{
	return pindex / MIGRATE_PCPTYPES;
}

/*
 * pcp_allowed_order() of a kernel without CONFIG_TRANSPARENT_HUGEPAGE
 * (NR_PCP_THP 0): only orders up to PAGE_ALLOC_COSTLY_ORDER have lists.
 * With THP, Linux 6.6 adds one list for pageblock-order pages (all
 * migratetypes on it); the model has no THP.
 */
static inline bool pcp_allowed_order(unsigned int order)
{
	return order <= PAGE_ALLOC_COSTLY_ORDER;
}

int pcp_config_validate(const struct mm_config *c, char *err, size_t errlen);
int pcp_setup(struct mm *mm, char *err, size_t errlen);
int pcp_register_hotplug(struct mm *mm, char *err, size_t errlen);   /* after slab_setup(): see pcp.c */
void pcp_teardown(struct mm *mm);
void pcp_reset(struct mm *mm);
void pcp_reset_high_and_batch(struct mm *mm);
void zone_pcp_update_all(struct mm *mm);                    /* after the watermarks change */

struct page *rmqueue_pcplist(struct zone *zone, unsigned int order, int migratetype,
			     unsigned int alloc_flags);
void free_unref_page(struct mm *mm, struct page *page, unsigned int order);
void pcp_cpu_dead(struct mm *mm, int cpu);                 /* page_alloc_cpu_dead() */
struct page *__rmqueue_pcplist(struct zone *zone, unsigned int order, int migratetype,
			       unsigned int alloc_flags, struct per_cpu_pages *pcp, struct list_head *list);
struct per_cpu_pages *pcp_spin_trylock(struct zone *zone);
void pcp_spin_unlock(struct per_cpu_pages *pcp);
void free_unref_page_commit(struct zone *zone, struct per_cpu_pages *pcp, struct page *page,
			    int migratetype, unsigned int order);

/* The checker's view (check/check.c): P1, and every pcp page for B4. */
bool pcp_check(struct mm *mm, int level, struct mm_violation *v);
void pcp_lock_all(struct mm *mm);
void pcp_unlock_all(struct mm *mm);
void pcp_for_each_page_locked(struct mm *mm, mm_mark_fn fn, void *w);
void pcp_dump_zoneinfo(struct mm *mm, struct zone *zone, FILE *f);   /* the "pagesets" section */


#endif /* MM_PCP_H */

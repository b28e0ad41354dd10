/* SPDX-License-Identifier: MIT */
/*
 * pcp.c - per-cpu page lists.  First version: no lists yet; order <= 3
 * requests go straight to the buddy allocator.
 */
#include "page/pcp.h"

int pcp_config_validate(const struct mm_config *c, char *err, size_t errlen)
{
	(void)c; (void)err; (void)errlen;
	return 0;
}
int pcp_setup(struct mm *mm, char *err, size_t errlen) { (void)mm; (void)err; (void)errlen; return 0; }
void pcp_teardown(struct mm *mm) { (void)mm; }
void pcp_reset(struct mm *mm) { (void)mm; }

struct page *rmqueue_pcplist(struct zone *zone, unsigned int order, int migratetype,
			     unsigned int alloc_flags)
{
	(void)zone; (void)order; (void)migratetype; (void)alloc_flags;
	return NULL;
}

void free_unref_page(struct mm *mm, struct page *page, unsigned int order)
{
	unsigned long pfn = __page_to_pfn(mm, page), flags;
	struct zone *zone = page_zone(mm, page);

	spin_lock_irqsave(&zone->lock, flags);
	free_pages_to_buddy_locked(zone, page, order, get_pfnblock_migratetype(mm, page, pfn));
	spin_unlock_irqrestore(&zone->lock, flags);
	__count_vm_events(mm, PGFREE, 1UL << order);
}

void drain_all_pages(struct mm *mm, struct zone *zone) { (void)mm; (void)zone; }

bool pcp_check(struct mm *mm, int level, struct mm_violation *v) { (void)mm; (void)level; (void)v; return true; }
void pcp_lock_all(struct mm *mm) { (void)mm; }
void pcp_unlock_all(struct mm *mm) { (void)mm; }
void pcp_for_each_page_locked(struct mm *mm, mm_mark_fn fn, void *w) { (void)mm; (void)fn; (void)w; }
void pcp_dump_zoneinfo(struct mm *mm, struct zone *zone, FILE *f) { (void)mm; (void)zone; (void)f; }

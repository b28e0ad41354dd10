/* SPDX-License-Identifier: MIT */
/*
 * pcp.c - per-cpu page lists: a small cache of free pages per zone per vCPU
 * in front of the buddy allocator (mm/page_alloc.c, Linux 6.6).
 *
 * Locking
 * -------
 * The model follows the pcp spinlock design that replaced the 2021 thread's
 * local_lock (Linux 6.0, "mm/page_alloc: protect PCP lists with a
 * spinlock"), because it lets another vCPU drain a pcp directly:
 *
 *   pcp->lock        protects pcp->lists and pcp->count.  Taken with
 *                    preemption disabled (pcp_spin_trylock pins the task to
 *                    its vCPU first) and with interrupts ENABLED.
 *   zone->lock       taken inside pcp->lock (rmqueue_bulk, free_pcppages_bulk)
 *                    with interrupts disabled.  Lock order: pcp->lock, then
 *                    zone->lock; the checker takes every pcp->lock, then
 *                    every zone->lock.
 *
 * Because interrupts stay enabled under pcp->lock, an interrupt handler on
 * the same vCPU may try to allocate or free while the interrupted task holds
 * the lock.  It must not spin: every user takes pcp->lock with a trylock and
 * falls back to the buddy allocator under zone->lock when it fails - which
 * is also what happens while another vCPU drains this pcp.  (Only the
 * drainers, which are never in interrupt context, take it with spin_lock.)
 *
 * pcp->high and pcp->batch are written without pcp->lock by runtime updates
 * (mm_pcp_update, the percpu_pagelist_high_fraction handler) and read once
 * per operation: a user may see an old high with a new batch.
 *
 * Page states on a pcp list: no PG_buddy, refcount 0, lru linked into
 * lists[order_to_pindex(mt, order)], private = order (model aid for P1),
 * index = the migratetype it was freed as (set_pcppage_migratetype).
 */
#include <stdlib.h>
#include <string.h>

#include "page/pcp.h"

#define MIN_PERCPU_PAGELIST_HIGH_FRACTION 8

/* zone_batchsize(): ~0.1% of the zone or 1 MiB, /4, clamped to 2^n - 1, at least 1. */
static int zone_batchsize(struct zone *zone)
{
	long batch = MIN((long)zone_managed_pages(zone) >> 10, (long)((1 << 20) / MM_PAGE_SIZE));
	batch /= 4;
	if (batch < 1)
		batch = 1;
	long v = batch + batch / 2, p = 1;
	while (p * 2 <= v)
		p *= 2;
	return (int)MAX(p - 1, 1L);
}

/*
 * zone_highsize(): the low watermark (or managed / fraction) split over the
 * online vCPUs, at least 4 batches.  6.6 splits it over the node's CPUs -
 * one node here, so the online vCPUs - plus @cpu_online: the cpuhp online
 * callback runs before the new CPU is marked online, and counts it so.
 * No vCPU online (not reached: the last one never goes down) splits it
 * over every vCPU, as the kernel falls back to num_online_cpus().
 */
static int zone_highsize(struct mm *mm, struct zone *zone, int batch, int cpu_online)
{
	unsigned long total;
	unsigned int frac = mm->cfg.percpu_pagelist_high_fraction;

	if (!frac)
		total = zone_wmark_pages(zone, WMARK_LOW);
	else
		total = zone_managed_pages(zone) / frac;
	long nr_split_cpus = mm_num_online_cpus(mm) + cpu_online;
	if (nr_split_cpus <= 0)
		nr_split_cpus = mm->cfg.nr_cpus;
	long high = (long)(total / (unsigned long)nr_split_cpus);
	return (int)MAX(high, (long)batch << 2);
}

/* zone_set_pageset_high_and_batch(): every vCPU's pcp, online or not, gets the zone's new high and batch. */
static void __pcp_set_high_and_batch(struct mm *mm, struct zone *zone, int cpu_online)
{
	int batch = mm->cfg.pcp_batch ? (int)mm->cfg.pcp_batch : zone_batchsize(zone);
	int high = mm->cfg.pcp_high ? (int)mm->cfg.pcp_high : zone_highsize(mm, zone, batch, cpu_online);

	zone->pageset_batch = batch;
	zone->pageset_high = high;
	for (unsigned int cpu = 0; cpu < mm->cfg.nr_cpus; cpu++) {
		struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];
		atomic_store_explicit(&pcp->batch, batch, memory_order_relaxed);
		atomic_store_explicit(&pcp->high, high, memory_order_relaxed);
	}
}

static void pcp_set_high_and_batch(struct mm *mm, struct zone *zone)
{
	__pcp_set_high_and_batch(mm, zone, 0);
}

int pcp_config_validate(const struct mm_config *c, char *err, size_t errlen)
{
	if (c->pcp_batch > 4096) {
		snprintf(err, errlen, "config: pcp_batch %u out of range 0..4096 (0: derive)", c->pcp_batch);
		return -1;
	}
	if (c->pcp_high > (1u << 22)) {
		snprintf(err, errlen, "config: pcp_high %u out of range 0..%u (0: derive)", c->pcp_high, 1u << 22);
		return -1;
	}
	if (c->percpu_pagelist_high_fraction && c->percpu_pagelist_high_fraction < MIN_PERCPU_PAGELIST_HIGH_FRACTION) {
		snprintf(err, errlen, "config: percpu_pagelist_high_fraction %u below the minimum %d (0: default)",
			 c->percpu_pagelist_high_fraction, MIN_PERCPU_PAGELIST_HIGH_FRACTION);
		return -1;
	}
	return 0;
}

/*
 * zone_pcp_update(zone, cpu_online) of every populated zone, under
 * pcp_batch_high_lock: the hotplug callbacks' new split of the high.
 * A pcp left above its new high is trimmed by its next free, as in 6.6
 * (nothing drains it now); the checker's P1 bound allows for that
 * (high_seen).
 */
static void zone_pcp_update_cpuhp(struct mm *mm, int cpu_online)
{
	mutex_lock(&mm->pcp_batch_high_lock);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (mm->zones[z].per_cpu_pageset)
			__pcp_set_high_and_batch(mm, &mm->zones[z], cpu_online);
	mutex_unlock(&mm->pcp_batch_high_lock);
}

/* page_alloc_cpu_online(): before the vCPU is marked online - count it in the split. */
static int page_alloc_cpu_online(struct mm *mm, unsigned int cpu)
{
	(void)cpu;
	zone_pcp_update_cpuhp(mm, 1);
	return 0;
}

/* page_alloc_cpu_dead(): the dead vCPU's lists go back to the buddy; the others' high grows. */
static int page_alloc_cpu_dead(struct mm *mm, unsigned int cpu)
{
	pcp_cpu_dead(mm, (int)cpu);
	zone_pcp_update_cpuhp(mm, 0);
	return 0;
}

int pcp_setup(struct mm *mm, char *err, size_t errlen)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		if (!populated_zone(zone))
			continue;
		size_t sz = sizeof(struct per_cpu_pages) * mm->cfg.nr_cpus;
		zone->per_cpu_pageset = aligned_alloc(64, (sz + 63) & ~(size_t)63);
		if (!zone->per_cpu_pageset) {
			snprintf(err, errlen, "out of memory for the per-cpu page lists");
			return -1;
		}
		memset(zone->per_cpu_pageset, 0, sz);
		for (unsigned int cpu = 0; cpu < mm->cfg.nr_cpus; cpu++) {
			struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];
			spin_lock_init(&pcp->lock);
			for (int i = 0; i < NR_PCP_LISTS; i++)
				INIT_LIST_HEAD(&pcp->lists[i]);
		}
		pcp_set_high_and_batch(mm, zone);
	}
	return 0;
}

/*
 * CPUHP_PAGE_ALLOC (page_alloc_init_cpuhp()).  The model's states run in
 * registration order on the way up and in reverse on the way down, so the
 * order of registration stands for the kernel's enum cpuhp_state: mm_create()
 * calls this after slab_setup() registered SLUB's state, as CPUHP_SLUB_DEAD
 * comes before CPUHP_PAGE_ALLOC.  A vCPU going down then has its pcp lists
 * drained and the others' high raised (zone_pcp_update()) before
 * slub_cpu_dead() flushes its slabs, whose freed pages meet the new high, as
 * in 6.6.  Registrations survive mm_reset(); the callbacks run holding the
 * vCPU.
 */
int pcp_register_hotplug(struct mm *mm, char *err, size_t errlen)
{
	if (mm_cpuhp_register(mm, "mm/page_alloc:pcp", page_alloc_cpu_online, page_alloc_cpu_dead) < 0) {
		snprintf(err, errlen, "cannot register the pcp hotplug callback");
		return -1;
	}
	return 0;
}

void pcp_teardown(struct mm *mm)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		free(mm->zones[z].per_cpu_pageset);
		mm->zones[z].per_cpu_pageset = NULL;
	}
}

/* mm_reset(): the lists are simply emptied - every page is re-freed from the memmap. */
void pcp_reset(struct mm *mm)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		if (!zone->per_cpu_pageset)
			continue;
		for (unsigned int cpu = 0; cpu < mm->cfg.nr_cpus; cpu++) {
			struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];
			spin_lock_init(&pcp->lock);
			for (int i = 0; i < NR_PCP_LISTS; i++)
				INIT_LIST_HEAD(&pcp->lists[i]);
			pcp->count = 0;
			pcp->free_factor = 0;
			pcp->high_seen = 0;
			pcp->batch_seen = 0;
		}
		pcp_set_high_and_batch(mm, zone);
	}
}

/* The high and batch of every zone's pcp lists from the zone as it is now (relaxed stores only). */
void pcp_reset_high_and_batch(struct mm *mm)
{
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (mm->zones[z].per_cpu_pageset)
			pcp_set_high_and_batch(mm, &mm->zones[z]);
}

/*
 * zone_pcp_update() of every zone, under pcp_batch_high_lock: the end of
 * the kernel's setup_per_zone_wmarks() - the pcp high follows the low
 * watermark (zone_highsize()), so a new min_free_kbytes or
 * watermark_scale_factor changes it at once.
 */
void zone_pcp_update_all(struct mm *mm)
{
	mutex_lock(&mm->pcp_batch_high_lock);
	pcp_reset_high_and_batch(mm);
	mutex_unlock(&mm->pcp_batch_high_lock);
}

/*
 * pcp_spin_trylock(): pin the task to its vCPU (preempt_disable), then try
 * the lock of this vCPU's pcp.  NULL if it is held - by an interrupted task
 * on this vCPU or by a remote drainer.
 */
struct per_cpu_pages *pcp_spin_trylock(struct zone *zone)
{
	struct mm *mm = zone->mm;
	struct per_cpu_pages *pcp;

	(void)raw_smp_processor_id(mm);   /* attach implicitly while still preemptible */
	preempt_disable();
	pcp = this_cpu_ptr(mm, zone->per_cpu_pageset);
	/* An interrupt here uses the same pcp before this task locks it. */
	mm_preempt_point(mm, MM_PP_PCP_BEFORE_LOCK);
	if (!spin_trylock(&pcp->lock)) {
		preempt_enable();
		return NULL;
	}
	/* An interrupt here finds the pcp locked: its trylock fails, it uses the buddy. */
	mm_preempt_point(mm, MM_PP_PCP_LOCKED);
	return pcp;
}

void pcp_spin_unlock(struct per_cpu_pages *pcp)
{
	spin_unlock(&pcp->lock);
	preempt_enable();
}

/*
 * rmqueue_bulk(): take @count blocks of @order from the buddy under one
 * zone->lock, in physical order at the tail of @list.
 */
static int rmqueue_bulk(struct zone *zone, unsigned int order, int count, struct list_head *list,
			int migratetype, unsigned int alloc_flags)
{
	unsigned long flags;
	int i;

	spin_lock_irqsave(&zone->lock, flags);
	for (i = 0; i < count; ++i) {
		struct page *page = __rmqueue(zone, order, migratetype, alloc_flags);
		if (unlikely(page == NULL))
			break;
		page->private_ = order;
		list_add_tail(&page->lru, list);
	}
	/* __rmqueue() recorded each page's list type; isolated lists are never taken from. */
	__mod_zone_page_state(zone, NR_FREE_PAGES, -((long)i << order));
	spin_unlock_irqrestore(&zone->lock, flags);
	return i;
}

/* __rmqueue_pcplist(): pop from the pcp list, refilling it with a batch when empty. */
struct page *__rmqueue_pcplist(struct zone *zone, unsigned int order, int migratetype,
			       unsigned int alloc_flags, struct per_cpu_pages *pcp, struct list_head *list)
{
	struct mm *mm = zone->mm;
	struct page *page;
	int tries = 4;   /* bad pages are leaked and skipped: bounded (T1) */

	do {
		if (list_empty(list)) {
			mm_preempt_point(mm, MM_PP_PCP_REFILL);
			int batch = atomic_load_explicit(&pcp->batch, memory_order_relaxed);
			if (batch > pcp->batch_seen)
				pcp->batch_seen = batch;
			/* Scale batch relative to order if it implies pages may be stored on the pcp. */
			if (batch > 1)
				batch = MAX(batch >> order, 2);
			int alloced = rmqueue_bulk(zone, order, batch, list, migratetype, alloc_flags);
			pcp->count += alloced << order;
			if (unlikely(list_empty(list)))
				return NULL;
		}
		page = list_first_entry(list, struct page, lru);
		list_del(&page->lru);
		pcp->count -= 1 << order;
		page->private_ = 0;
	} while (check_new_pages(mm, page, order) && --tries);
	return tries ? page : NULL;
}

/* rmqueue_pcplist(): order <= PAGE_ALLOC_COSTLY_ORDER allocation through this vCPU's pcp. */
struct page *rmqueue_pcplist(struct zone *zone, unsigned int order, int migratetype,
			     unsigned int alloc_flags)
{
	struct mm *mm = zone->mm;
	struct per_cpu_pages *pcp;
	struct page *page;

	/* spin_trylock may fail due to a parallel drain or IRQ reentrancy. */
	pcp = pcp_spin_trylock(zone);
	if (!pcp)
		return NULL;
	/* On allocation, reduce the number of pages that are batch freed. */
	pcp->free_factor >>= 1;
	page = __rmqueue_pcplist(zone, order, migratetype, alloc_flags, pcp,
				 &pcp->lists[order_to_pindex(migratetype, order)]);
	pcp_spin_unlock(pcp);
	if (page) {
#ifdef MM_INJECT_PCP_STAT_ORDER
		__count_vm_events(mm, PGALLOC, 1);               /* injected: one per call */
#else
		__count_vm_events(mm, PGALLOC, 1UL << order);
#endif
	}
	return page;
}

/*
 * The 2018 prefetch (shared/seeds/pcp-prefetch-buddy-2018.txt): touch the
 * buddy's struct page before zone->lock so the merge under the lock finds it
 * in cache.  The buddy pfn may be in a hole or past the memmap, so it is
 * validated first - the check the kernel lacked (it dropped the prefetch in
 * 2022).  The model's prefetch is a real load so ASan sees what it touches.
 */
static inline void prefetch_buddy(struct mm *mm, struct page *page, unsigned int order)
{
	unsigned long pfn = __page_to_pfn(mm, page);
	unsigned long buddy_pfn = __find_buddy_pfn(pfn, order);
	struct page *buddy = page + ((long)buddy_pfn - (long)pfn);

#ifndef MM_INJECT_PCP_PREFETCH_UNVALIDATED
	if (!__pfn_valid(mm, buddy_pfn))
		return;
#endif
	__builtin_prefetch(buddy);
	(void)READ_ONCE(buddy->flags);
}

/*
 * free_pcppages_bulk(): return @count pages from the pcp to the buddy,
 * round-robin over the lists starting after @pindex, under zone->lock.
 * Called with pcp->lock held.
 */
static void free_pcppages_bulk(struct zone *zone, int count, struct per_cpu_pages *pcp, int pindex)
{
	struct mm *mm = zone->mm;
	unsigned long flags, spins = 0;
	LIST_HEAD_DECL(head);
	bool prefetch = READ_ONCE(mm->cfg.pcp_prefetch_buddy);

#ifndef MM_INJECT_PCP_BULK_COUNT_UNCLAMPED
	/* Ensure proper count is passed which otherwise would stuck in the loop below. */
	count = MIN(pcp->count, count);
#endif
	/* Ensure requested pindex is drained first. */
	pindex = pindex - 1;

	/*
	 * With the prefetch, pages are first collected off the pcp lists
	 * without zone->lock (the 2018 structure), then freed under it.
	 */
	if (!prefetch)
		spin_lock_irqsave(&zone->lock, flags);
	while (count > 0) {
		struct list_head *list;
		unsigned int order;

		/* Remove pages from lists in a round-robin fashion. */
		do {
			if (++pindex > NR_PCP_LISTS - 1)
				pindex = 0;
			list = &pcp->lists[pindex];
			if (++spins > 64UL * NR_PCP_LISTS)
				mm_hang(mm, "free_pcppages_bulk: every pcp list is empty but pages remain to free", spins);
		} while (list_empty(list));

		order = pindex_to_order((unsigned int)pindex);
		do {
			struct page *page = list_last_entry(list, struct page, lru);
			int mt;

			list_del(&page->lru);
			count -= 1 << order;
			pcp->count -= 1 << order;
			page->private_ = 0;
			if (prefetch) {
				page->private_ = order;
				list_add_tail(&page->lru, &head);
				prefetch_buddy(mm, page, order);
				continue;
			}
			/*
			 * Free with the pageblock's type now, not the one cached
			 * at free time (Linux >= 6.9): the pageblock may have been
			 * isolated, reserved or stolen meanwhile, and a stale type
			 * merges blocks across pageblocks that must stay apart.
			 */
			unsigned long pfn = __page_to_pfn(mm, page);
			mt = get_pfnblock_migratetype(mm, page, pfn);
			if (unlikely(order > mm->pageblock_order))   /* tiny pageblocks: a pcp page spans several */
				split_large_buddy(zone, page, pfn, order, FPI_NONE);
			else
				__free_one_page(zone, page, pfn, order, mt, FPI_NONE);
		} while (count > 0 && !list_empty(list));
	}
	if (prefetch) {
		spin_lock_irqsave(&zone->lock, flags);
		while (!list_empty(&head)) {
			struct page *page = list_first_entry(&head, struct page, lru);
			unsigned int order = (unsigned int)page->private_;
			unsigned long pfn = __page_to_pfn(mm, page);
			int mt;

			list_del(&page->lru);
			page->private_ = 0;
			mt = get_pfnblock_migratetype(mm, page, pfn);   /* as above */
			if (unlikely(order > mm->pageblock_order))   /* tiny pageblocks: a pcp page spans several */
				split_large_buddy(zone, page, pfn, order, FPI_NONE);
			else
				__free_one_page(zone, page, pfn, order, mt, FPI_NONE);
		}
	}
	spin_unlock_irqrestore(&zone->lock, flags);
}

/* nr_pcp_free(): how many pages to trim; doubles while freeing without allocating. */
static int nr_pcp_free(struct per_cpu_pages *pcp, int high, bool free_high)
{
	int batch = atomic_load_explicit(&pcp->batch, memory_order_relaxed);
	int min_nr_free, max_nr_free;

	/* Free everything if batch freeing high-order pages. */
	if (unlikely(free_high))
		return pcp->count;
	/* Check for PCP disabled or boot pageset */
	if (unlikely(high < batch))
		return 1;
	/* Leave at least pcp->batch pages on the list */
	min_nr_free = batch;
	max_nr_free = high - batch;
	/*
	 * The kernel never gets here with high < 2 * batch (zone_highsize()
	 * keeps high >= 4 * batch), where the clamp below would free nothing
	 * and the list would grow without bound; mm_pcp_update() can set any
	 * pair, so trim to just under high instead.
	 */
	if (unlikely(max_nr_free < min_nr_free))
		return MAX(pcp->count - high + 1, 1);
	/*
	 * Double the number of pages freed each time there is subsequent
	 * freeing without allocation, until a trim frees all it may (high -
	 * batch).  Linux 6.6 has no other cap: PCP_BATCH_SCALE_MAX (at most
	 * batch << 5 per trim) came in 6.7.  In a long: the factor (at most
	 * ~22, high <= 2^22) may have grown under a smaller batch than a
	 * runtime update set since.
	 */
	long scaled = (long)batch << pcp->free_factor;
	if (scaled < max_nr_free)
		pcp->free_factor++;
	return (int)MIN(MAX(scaled, (long)min_nr_free), (long)max_nr_free);
}

/*
 * free_unref_page_commit(): put the page on this vCPU's list; above high,
 * trim.  Called with pcp->lock held.
 */
void free_unref_page_commit(struct zone *zone, struct per_cpu_pages *pcp, struct page *page,
			    int migratetype, unsigned int order)
{
	struct mm *mm = zone->mm;
	unsigned int pindex = order_to_pindex(migratetype, order);
	int high;
	bool free_high;

#ifdef MM_INJECT_PCP_STAT_ORDER
	__count_vm_events(mm, PGFREE, 1);                      /* injected: one per call */
#else
	__count_vm_events(mm, PGFREE, 1UL << order);
#endif
	page->private_ = order;
	list_add(&page->lru, &pcp->lists[pindex]);
	pcp->count += 1 << order;

	/*
	 * High-order pages on the pcp contribute to fragmentation: when the pcp
	 * is freeing heavily without allocating, free them all.
	 */
	free_high = pcp->free_factor && order && order <= PAGE_ALLOC_COSTLY_ORDER;
	high = atomic_load_explicit(&pcp->high, memory_order_relaxed);
	if (high > pcp->high_seen)
		pcp->high_seen = high;
	int batch_now = atomic_load_explicit(&pcp->batch, memory_order_relaxed);
	if (batch_now > pcp->batch_seen)
		pcp->batch_seen = batch_now;
	if (free_high)
		high = 0;
	if (pcp->count >= high) {
#ifdef MM_INJECT_PCP_BULK_COUNT_UNCLAMPED
		/* The 2020 code: trim a whole batch, whatever count is. */
		(void)nr_pcp_free;
		free_pcppages_bulk(zone, atomic_load_explicit(&pcp->batch, memory_order_relaxed), pcp, (int)pindex);
#else
		free_pcppages_bulk(zone, nr_pcp_free(pcp, high, free_high), pcp, (int)pindex);
#endif
	}
	if (pcp->count <= atomic_load_explicit(&pcp->high, memory_order_relaxed)) {
		pcp->high_seen = atomic_load_explicit(&pcp->high, memory_order_relaxed);
		pcp->batch_seen = atomic_load_explicit(&pcp->batch, memory_order_relaxed);
	}
}

/*
 * free_unref_page(): free an order <= 3 page to this vCPU's pcp.  Pages of
 * isolated pageblocks go straight to the buddy; highatomic ones are cached
 * as movable so the area can come back.
 */
void free_unref_page(struct mm *mm, struct page *page, unsigned int order)
{
	unsigned long pfn = __page_to_pfn(mm, page), flags;
	struct zone *zone = page_zone(mm, page);
	struct per_cpu_pages *pcp;
	int migratetype, pcpmigratetype;

	migratetype = pcpmigratetype = get_pfnblock_migratetype(mm, page, pfn);
	page->index = (unsigned long)migratetype;      /* set_pcppage_migratetype() */
	if (unlikely(migratetype >= MIGRATE_PCPTYPES)) {
		if (unlikely(is_migrate_isolate(migratetype)))
			goto to_buddy;
		pcpmigratetype = MIGRATE_MOVABLE;
		page->index = MIGRATE_MOVABLE;
	}
	/*
	 * Model: with tiny pageblocks (order < 3) a pcp page spans several;
	 * one isolated among them sends the page to the buddy too, which frees
	 * it pageblock by pageblock (split_large_buddy()), as the kernel's
	 * check of the page's one pageblock does.
	 */
	if (later_pageblock_is(mm, pfn, order, is_migrate_isolate))
		goto to_buddy;
	pcp = pcp_spin_trylock(zone);
	if (pcp) {
		free_unref_page_commit(zone, pcp, page, pcpmigratetype, order);
		pcp_spin_unlock(pcp);
		return;
	}
to_buddy:
	spin_lock_irqsave(&zone->lock, flags);
	split_large_buddy(zone, page, pfn, order, FPI_NONE);
	spin_unlock_irqrestore(&zone->lock, flags);
	/*
	 * Not the kernel's: 6.6's free_one_page() fallback (isolated block,
	 * pcp trylock failed) counts no PGFREE, an undercount it has.  The
	 * model counts every freed page so that B4 (PGALLOC - PGFREE == pages
	 * allocated, check.c) holds; a port of a 6.6 hunk must keep this count.
	 */
	__count_vm_events(mm, PGFREE, 1UL << order);
}

/* drain_pages_zone(): give back everything @cpu's pcp of @zone holds (remote-safe: pcp->lock). */
static void drain_pages_zone(struct mm *mm, int cpu, struct zone *zone)
{
	struct per_cpu_pages *pcp = per_cpu_ptr(zone->per_cpu_pageset, cpu);

	spin_lock(&pcp->lock);
	mm_preempt_point(mm, MM_PP_PCP_DRAIN);
	if (pcp->count)
		free_pcppages_bulk(zone, pcp->count, pcp, 0);
	pcp->high_seen = atomic_load_explicit(&pcp->high, memory_order_relaxed);
	pcp->batch_seen = atomic_load_explicit(&pcp->batch, memory_order_relaxed);
	spin_unlock(&pcp->lock);
}

static void drain_pages(struct mm *mm, int cpu, struct zone *only)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		if (zone->per_cpu_pageset && (!only || only == zone))
			drain_pages_zone(mm, cpu, zone);
	}
}

/* drain_local_pages(): this vCPU's lists, pinned to it while draining. */
void drain_local_pages(struct mm *mm, struct zone *zone)
{
	(void)raw_smp_processor_id(mm);
	int cpu = get_cpu(mm);
	drain_pages(mm, cpu, zone);
	put_cpu();
}

/*
 * drain_all_pages(): every vCPU's lists, while their owners keep running.
 * The 6.x design takes each remote pcp->lock instead of queueing work on
 * that CPU; an owner racing with it fails its trylock and uses the buddy.
 */
void drain_all_pages(struct mm *mm, struct zone *zone)
{
	int cpu;

	/* Offline vCPUs were drained by their dead callback; hold hotplug off meanwhile. */
	cpus_read_lock(mm);
	for_each_online_cpu(cpu, mm)
		drain_pages(mm, cpu, zone);
	cpus_read_unlock(mm);
}

/* page_alloc_cpu_dead(): an offlined vCPU's lists go back to the buddy. */
void pcp_cpu_dead(struct mm *mm, int cpu)
{
	drain_pages(mm, cpu, NULL);
}


/*
 * zone_pcp_update(): new high/batch on every vCPU, without pcp->lock, under
 * pcp_batch_high_lock (a mutex: updates from two tasks - sysctl writers in
 * the kernel - are serialised, the allocation paths never take it).
 */
static void __mm_pcp_update(struct mm *mm, unsigned int high, unsigned int batch)
{
	mm->cfg.pcp_high = high;
	mm->cfg.pcp_batch = batch;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (mm->zones[z].per_cpu_pageset)
			pcp_set_high_and_batch(mm, &mm->zones[z]);
}

int mm_pcp_update(struct mm *mm, unsigned int high, unsigned int batch)
{
	if (batch > 4096 || high > (1u << 22))
		return -1;
	mutex_lock(&mm->pcp_batch_high_lock);
	__mm_pcp_update(mm, high, batch);
	mutex_unlock(&mm->pcp_batch_high_lock);
	return 0;
}

/* percpu_pagelist_high_fraction_sysctl_handler(): the same lock around the new fraction. */
int mm_set_percpu_pagelist_high_fraction(struct mm *mm, unsigned int fraction)
{
	if (fraction && fraction < MIN_PERCPU_PAGELIST_HIGH_FRACTION)
		return -1;
	mutex_lock(&mm->pcp_batch_high_lock);
	mm->cfg.percpu_pagelist_high_fraction = fraction;
	__mm_pcp_update(mm, mm->cfg.pcp_high, mm->cfg.pcp_batch);
	mutex_unlock(&mm->pcp_batch_high_lock);
	return 0;
}

void mm_set_pcp_prefetch(struct mm *mm, bool on)
{
	WRITE_ONCE(mm->cfg.pcp_prefetch_buddy, on);
}

int mm_pcp_info(struct mm *mm, enum zone_type z, int cpu, struct mm_pcp_info *info)
{
	if ((unsigned)z >= MAX_NR_ZONES || cpu < 0 || (unsigned)cpu >= mm->cfg.nr_cpus ||
	    !mm->zones[z].per_cpu_pageset)
		return -1;
	struct per_cpu_pages *pcp = &mm->zones[z].per_cpu_pageset[cpu];
	spin_lock(&pcp->lock);
	info->count = pcp->count;
	info->high = atomic_load_explicit(&pcp->high, memory_order_relaxed);
	info->batch = atomic_load_explicit(&pcp->batch, memory_order_relaxed);
	spin_unlock(&pcp->lock);
	return 0;
}

/* ---------------------------------------------------------------- checker */

void pcp_lock_all(struct mm *mm)
{
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (mm->zones[z].per_cpu_pageset)
			for (unsigned int cpu = 0; cpu < mm->cfg.nr_cpus; cpu++)
				spin_lock(&mm->zones[z].per_cpu_pageset[cpu].lock);
}

void pcp_unlock_all(struct mm *mm)
{
	for (int z = MAX_NR_ZONES - 1; z >= 0; z--)
		if (mm->zones[z].per_cpu_pageset)
			for (int cpu = (int)mm->cfg.nr_cpus - 1; cpu >= 0; cpu--)
				spin_unlock(&mm->zones[z].per_cpu_pageset[cpu].lock);
}

void pcp_for_each_page_locked(struct mm *mm, mm_mark_fn fn, void *w)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		if (!zone->per_cpu_pageset)
			continue;
		for (unsigned int cpu = 0; cpu < mm->cfg.nr_cpus; cpu++)
			for (unsigned int i = 0; i < NR_PCP_LISTS; i++) {
				struct list_head *pos;
				list_for_each(pos, &zone->per_cpu_pageset[cpu].lists[i]) {
					struct page *page = list_entry(pos, struct page, lru);
					fn(w, __page_to_pfn(mm, page), 1UL << pindex_to_order(i));
				}
			}
	}
}

/*
 * P1 for one pcp.  count <= high does not hold exactly even in the kernel:
 * a trim frees whole pages round-robin (an order-0 page may be trimmed after
 * an order-3 one was added), and a runtime update may lower high below what
 * the list holds.  The bound checked is the one the trimming guarantees:
 * count < max(high, the high in force when the list last filled) + batch
 * << P1_BATCH_SLACK_SHIFT + one costly-order page per list, where high and
 * batch are the largest in force since the lists last fell under high:
 * runtime updates do not drain (zone_pcp_update() neither).  The batch term
 * is slack for a refill (rmqueue_bulk() adds a batch to one list however
 * full the others are); a trim frees at most high - batch, so the free side
 * needs none.
 */
#define P1_BATCH_SLACK_SHIFT 5

static __mm_checker bool pcp_check_one(struct mm *mm, struct zone *zone, int cpu, struct per_cpu_pages *pcp,
			  struct mm_violation *v)
{
	long pages = 0;
	for (unsigned int i = 0; i < NR_PCP_LISTS; i++) {
		unsigned int order = pindex_to_order(i);
		struct list_head *head = &pcp->lists[i], *pos;
		unsigned long n = 0;
		for (pos = head->next; pos != head; pos = pos->next) {
			if (!pos || pos->next->prev != pos)
				return mm_violate(v, MM_INV_P1, zone->idx, cpu, ~0UL, order, 0, 0,
						  "zone %s cpu %d pcp list %u: corrupted list linkage", zone->name, cpu, i);
			if (++n > mm->nr_valid)
				return mm_violate(v, MM_INV_P1, zone->idx, cpu, ~0UL, order, 0, (long)n,
						  "zone %s cpu %d pcp list %u: a cycle", zone->name, cpu, i);
			struct page *page = list_entry(pos, struct page, lru);
			uintptr_t pp = (uintptr_t)page, lo = (uintptr_t)mm->memmap;
			if (pp < lo || pp >= (uintptr_t)(mm->memmap + (mm->end_pfn - mm->first_pfn)) ||
			    (pp - lo) % sizeof(struct page))
				return mm_violate(v, MM_INV_P1, zone->idx, cpu, ~0UL, order, 0, 0,
						  "zone %s cpu %d: pcp entry %p is not a struct page", zone->name, cpu, (void *)page);
			unsigned long pfn = __page_to_pfn(mm, page);
			if (!__pfn_valid(mm, pfn) || page_zonenum(page) != (unsigned)zone->idx ||
			    !zone_spans_pfn(zone, pfn))
				return mm_violate(v, MM_INV_P1, zone->idx, cpu, pfn, order, zone->idx, (long)page_zonenum(page),
						  "zone %s cpu %d: pcp page %#lx belongs to another zone or no zone",
						  zone->name, cpu, pfn);
			if (page->private_ != order || (pfn & ((1UL << order) - 1)))
				return mm_violate(v, MM_INV_P1, zone->idx, cpu, pfn, order, order, (long)page->private_,
						  "zone %s cpu %d: page %#lx on the order-%u pcp list records order %lu or is misaligned",
						  zone->name, cpu, pfn, order, page->private_);
			if (PageBuddy(page) || page_count(page) || page->owner_order)
				return mm_violate(v, MM_INV_P1, zone->idx, cpu, pfn, order, 0, page_count(page),
						  "zone %s cpu %d: pcp page %#lx is PageBuddy (%d) or in use (refcount %d)",
						  zone->name, cpu, pfn, (int)PageBuddy(page), page_count(page));
			pages += 1L << order;
		}
	}
	if (pages != pcp->count)
		return mm_violate(v, MM_INV_P1, zone->idx, cpu, ~0UL, 0, pages, pcp->count,
				  "zone %s cpu %d: pcp->count is %d but the lists hold %ld pages",
				  zone->name, cpu, pcp->count, pages);
	int high = atomic_load_explicit(&pcp->high, memory_order_relaxed);
	int batch = atomic_load_explicit(&pcp->batch, memory_order_relaxed);
	long bound = (long)MAX(high, pcp->high_seen) + ((long)MAX(batch, pcp->batch_seen) << P1_BATCH_SLACK_SHIFT) +
		     (long)NR_PCP_LISTS * (1L << PAGE_ALLOC_COSTLY_ORDER);
	if (pcp->count > bound)
		return mm_violate(v, MM_INV_P1, zone->idx, cpu, ~0UL, 0, bound, pcp->count,
				  "zone %s cpu %d: pcp->count %d far above high %d (bound %ld): the lists are not trimmed",
				  zone->name, cpu, pcp->count, high, bound);
	return true;
}

/* What pcp_check_one() reads but the pages: the lists' heads, count, high and batch (the P1 bound). */
static __mm_checker unsigned long pcp_l2_signature(struct per_cpu_pages *pcp)
{
	uint64_t h = MM_SIG_INIT;
	h = mm_sig_mix(h, (uint64_t)pcp->count);
	h = mm_sig_mix(h, (uint64_t)atomic_load_explicit(&pcp->high, memory_order_relaxed));
	h = mm_sig_mix(h, (uint64_t)atomic_load_explicit(&pcp->batch, memory_order_relaxed));
	h = mm_sig_mix(h, (uint64_t)pcp->high_seen);
	h = mm_sig_mix(h, (uint64_t)pcp->batch_seen);
	for (unsigned int i = 0; i < NR_PCP_LISTS; i++) {
		h = mm_sig_mix(h, (uintptr_t)pcp->lists[i].next);
		h = mm_sig_mix(h, (uintptr_t)pcp->lists[i].prev);
	}
	return h ? (unsigned long)h : 1;
}

/* P1 of every pcp; at level 2 only those changed since their last walk (mm_check). */
__mm_checker bool pcp_check(struct mm *mm, int level, struct mm_violation *v)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		if (!zone->per_cpu_pageset)
			continue;
		for (unsigned int cpu = 0; cpu < mm->cfg.nr_cpus; cpu++) {
			struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];
			bool ok = true;
			spin_lock(&pcp->lock);
			unsigned long sig = pcp_l2_signature(pcp);
			if (!mm_check_incremental(mm, level) || sig != pcp->l2_sig) {
				ok = pcp_check_one(mm, zone, (int)cpu, pcp, v);
				pcp->l2_sig = ok ? sig : 0;
			}
			spin_unlock(&pcp->lock);
			if (!ok)
				return false;
		}
	}
	return true;
}

void pcp_dump_zoneinfo(struct mm *mm, struct zone *zone, FILE *f)
{
	fprintf(f, "  pagesets\n");
	if (!zone->per_cpu_pageset)
		return;
	for (unsigned int cpu = 0; cpu < mm->cfg.nr_cpus; cpu++) {
		struct mm_pcp_info info;
		if (mm_pcp_info(mm, zone->idx, (int)cpu, &info))
			continue;
		fprintf(f, "    cpu: %u\n              count: %d\n              high:  %d\n              batch: %d\n",
			cpu, info.count, info.high, info.batch);
	}
}

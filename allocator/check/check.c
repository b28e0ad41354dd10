/* SPDX-License-Identifier: MIT */
/*
 * check.c - the invariant checker: B1-B4 (buddy), W1 (watermarks), T1 (the
 * calling task's depths), and through pcp.c P1.  See DESIGN.md, "Invariants".
 *
 * Validators return bool; the first violation is returned as data.  The
 * checker takes every zone->lock (in zone order, the only place that holds
 * more than one) so it may run while other threads are between operations;
 * a stop-the-world caller gets an exact picture.
 *
 *   level 1  counters against counters                 O(zones * orders)
 *   level 2  walk every free list: B1, B2, W1 sampled   O(free blocks)
 *   level 3  B3 and B4 over every pfn                   O(pfns)
 *   level 4  W1 exhaustive: every order, alloc_flags set and highest zone
 *
 * W1 is a pure function of a zone's free-list counts, counters, watermarks
 * and reserves: each zone remembers the signatures of the states it already
 * passed W1 in (w1_memo, cleared by mm_reset() so that what a fuzz input
 * checks depends on that input alone), and a zone an operation did not
 * change is not asked again.  Fuzz targets check after every operation,
 * and an operation changes one zone, mostly.
 *
 * Level 2 is incremental the same way (zone_l2_signature() here,
 * pcp_l2_signature() in pcp.c, cache_l2_signature() in slab/invariants.c):
 * a structure whose signature is the one its last passing walk saw is not
 * walked again.  Level 3 walks everything; mm_check_set_incremental(mm,
 * false) makes level 2 do so too.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "page/pcp.h"

static const char *const inv_names[MM_NR_INVARIANTS] = {
	"none", "B1", "B2", "B3", "B4", "P1", "S1", "S2", "S3", "W1", "C1", "T1",
};

const char *mm_invariant_name(enum mm_invariant inv)
{
	return (unsigned)inv < MM_NR_INVARIANTS ? inv_names[inv] : "?";
}

bool mm_violate(struct mm_violation *v, enum mm_invariant inv, int zone, int cpu,
		unsigned long pfn, unsigned int order, long expected, long found,
		const char *fmt, ...)
{
	if (!v)
		return false;
	va_list ap;
	char what[200];
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	memset(v, 0, sizeof(*v));
	v->inv = inv;
	v->id = mm_invariant_name(inv);
	v->zone = zone;
	v->cpu = cpu;
	v->pfn = pfn;
	v->order = order;
	v->expected = expected;
	v->found = found;
	snprintf(v->msg, sizeof(v->msg), "%s violated: %s", v->id, what);
	return false;
}

static const char *zname(int z)
{
	static const char *const n[MAX_NR_ZONES] = { "DMA", "DMA32", "Normal", "Movable" };
	return (unsigned)z < MAX_NR_ZONES ? n[z] : "?";
}

/* ---------------------------------------------------------------- T1 */

/*
 * T1 for the calling task: between operations it holds no lock, has
 * preemption, migration and interrupts enabled, is not in an interrupt
 * handler and not in reclaim (what the kernel checks on return to user
 * space: a leaked preempt count or lock is "BUG: scheduling while atomic"
 * later; a leaked PF_MEMALLOC would give the task the reserves for good).
 */
static bool check_task(struct mm_violation *v)
{
	const struct mm_task *t = get_current();
	int irqs_off = __task_irqs_disabled(t), in_irq = __task_in_interrupt(t);
	struct { const char *what; int found; } d[] = {
		{ "preempt_count", t->preempt_count },
		{ "irqs disabled", irqs_off },
		{ "locks held", t->lock_depth },
		{ "in interrupt", in_irq },
		{ "migrate_disable", t->migrate_disable },
		{ "PF_MEMALLOC", (t->flags & PF_MEMALLOC) != 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(d); i++)
		if (d[i].found)
			return mm_violate(v, MM_INV_T1, -1, -1, ~0UL, 0, 0, d[i].found,
					  "between operations %s is %d (task %s: preempt_count %d, irqs "
					  "disabled %d, locks held %d, in interrupt %d, migrate_disable %d; "
					  "all must be 0)", d[i].what, d[i].found, t->name ? t->name : "(thread)",
					  t->preempt_count, irqs_off, t->lock_depth, in_irq, t->migrate_disable);
	return true;
}

/* ---------------------------------------------------------------- B1, B2 */

struct zone_scan {
	unsigned long nr_free[MM_NR_ORDERS_LIMIT][MIGRATE_TYPES];   /* blocks per order and list */
	long free_pages;                                             /* pages on non-isolate lists */
};

/*
 * Is the block on list @mt allowed, given the types of the pageblocks it
 * covers?  Linux 6.6 keeps list and pageblock types in step only for the
 * types that do not fall back: an isolated pageblock's free blocks are all
 * on the isolate list and only there; the highatomic list holds only blocks
 * of highatomic pageblocks.  The converse does not hold for highatomic: pages
 * cached on a pcp list as movable when their pageblock became highatomic
 * come back on the movable list (6.9 made the two always agree).
 */
static bool block_mt_ok(struct mm *mm, struct zone *zone, unsigned long pfn, unsigned int order, int mt,
			int *bad_pb_mt)
{
	unsigned long nr = 1UL << order, step = MIN(nr, pageblock_nr_pages(mm));
	for (unsigned long p = pfn; p < pfn + nr; p += step) {
		int pb = get_pfnblock_migratetype(mm, __pfn_to_page(mm, p), p);
		*bad_pb_mt = pb;
		if ((mt == MIGRATE_ISOLATE) != (pb == MIGRATE_ISOLATE))
			return false;
		if (mt == MIGRATE_HIGHATOMIC && pb != MIGRATE_HIGHATOMIC)
			return false;
	}
	return true;
}

/* Is every pfn of [pfn, pfn + nr) valid?  A word of valid_bitmap at a time. */
static bool pfn_range_valid(const struct mm *mm, unsigned long pfn, unsigned long nr)
{
	const unsigned long bits = 8 * sizeof(long);
	if (pfn < mm->first_pfn || pfn >= mm->end_pfn || nr > mm->end_pfn - pfn)
		return false;
	for (unsigned long i = pfn - mm->first_pfn, e = i + nr; i < e;) {
		unsigned long bit = i % bits, span = bits - bit < e - i ? bits - bit : e - i;
		unsigned long mask = (span == bits ? ~0UL : (1UL << span) - 1) << bit;
		if ((mm->valid_bitmap[i / bits] & mask) != mask)
			return false;
		i += span;
	}
	return true;
}

/*
 * B1's per-page tests of a free block's @nr pages, every pfn of which is
 * memory, folded into one word without a branch per page: the zone in
 * flags, no reference, no owner, not PG_slab, and PageBuddy on the head
 * alone (6.6's page_is_buddy() trusts the head; __free_one_page() clears
 * the buddy's mark when it merges).  Level 3 visits every page of every
 * free block, most of a small machine's memmap, after every fuzz input;
 * a block that fails goes to the walk in check_free_block(), which names
 * the first page.
 */
static bool free_block_pages_clean(const struct page *page, unsigned long nr, unsigned int zone_idx)
{
	const unsigned long zone_bits = (unsigned long)zone_idx << ZONES_PGSHIFT;
	const unsigned long zone_mask = ZONES_MASK << ZONES_PGSHIFT;
	const unsigned long tail_flags = (1UL << PG_slab) | (1UL << PG_buddy);
	unsigned long bad = (page->flags & (1UL << PG_slab)) | ((page->flags & zone_mask) ^ zone_bits);

	bad |= (unsigned int)page_count(page) | page->owner_order;
	for (unsigned long i = 1; i < nr; i++) {
		const struct page *p = page + i;
		unsigned long f = p->flags;
		bad |= (f & tail_flags) | ((f & zone_mask) ^ zone_bits) | (unsigned int)page_count(p) | p->owner_order;
	}
	return !bad;
}

static bool check_free_block(struct mm *mm, struct zone *zone, struct page *page, unsigned int order,
			     int mt, int level, struct mm_violation *v)
{
	/* The struct page must be inside the memmap before anything is read from it. */
	uintptr_t pp = (uintptr_t)page, lo = (uintptr_t)mm->memmap;
	if (pp < lo || pp >= (uintptr_t)(mm->memmap + (mm->end_pfn - mm->first_pfn)) ||
	    (pp - lo) % sizeof(struct page))
		return mm_violate(v, MM_INV_B1, zone->idx, -1, ~0UL, order, 0, 0,
				  "zone %s order %u list %d: entry %p is not a struct page of the memmap",
				  zone->name, order, mt, (void *)page);
	unsigned long pfn = __page_to_pfn(mm, page), nr = 1UL << order;
	if (!__pfn_valid(mm, pfn))
		return mm_violate(v, MM_INV_B1, zone->idx, -1, pfn, order, 1, 0,
				  "zone %s order %u: free block at pfn %#lx which does not exist",
				  zone->name, order, pfn);
	if (!PageBuddy(page))
		return mm_violate(v, MM_INV_B1, zone->idx, -1, pfn, order, 1, 0,
				  "zone %s order %u: block at pfn %#lx on a free list is not PageBuddy",
				  zone->name, order, pfn);
	if (buddy_order(page) != order)
		return mm_violate(v, MM_INV_B1, zone->idx, -1, pfn, order, order, (long)buddy_order(page),
				  "zone %s: block at pfn %#lx on the order-%u list records order %u",
				  zone->name, pfn, order, buddy_order(page));
	if (pfn & (nr - 1))
		return mm_violate(v, MM_INV_B1, zone->idx, -1, pfn, order, 0, (long)(pfn & (nr - 1)),
				  "zone %s: order-%u block at pfn %#lx is not aligned to its order",
				  zone->name, order, pfn);
	if (!zone_spans_pfn(zone, pfn) || pfn + nr > zone_end_pfn(zone))
		return mm_violate(v, MM_INV_B1, zone->idx, -1, pfn, order, 0, 0,
				  "zone %s [%#lx, %#lx): order-%u block [%#lx, %#lx) is not inside the zone",
				  zone->name, zone->zone_start_pfn, zone_end_pfn(zone), order, pfn, pfn + nr);
	/*
	 * Every page of the block at level 3; at level 2 the head and the last
	 * page (a block merged across a zone boundary or past the end of a
	 * span ends in the wrong place), so the per-operation walk stays
	 * O(free blocks).
	 */
	bool all_valid = level >= 3 && pfn_range_valid(mm, pfn, nr);
	/* The pages to walk one by one: none when every page passed already. */
	unsigned long walk = all_valid && free_block_pages_clean(page, nr, (unsigned int)zone->idx) ? 0 : nr;
	for (unsigned long i = 0; i < walk; i = (level >= 3 || i + 1 == walk) ? i + 1 : walk - 1) {
		if (!all_valid && !__pfn_valid(mm, pfn + i))
			return mm_violate(v, MM_INV_B1, zone->idx, -1, pfn + i, order, 1, 0,
					  "zone %s: order-%u block at pfn %#lx covers pfn %#lx, which is a hole",
					  zone->name, order, pfn, pfn + i);
		struct page *p = page + i;
		if (page_zonenum(p) != (unsigned)zone->idx)
			return mm_violate(v, MM_INV_B1, zone->idx, -1, pfn + i, order, zone->idx, page_zonenum(p),
					  "order-%u block at pfn %#lx on zone %s's list covers pfn %#lx of zone %s",
					  order, pfn, zone->name, pfn + i, zname((int)page_zonenum(p)));
		if (page_count(p) != 0 || (i && PageBuddy(p)) || p->owner_order || (p->flags & (1UL << PG_slab)))
			return mm_violate(v, MM_INV_B1, zone->idx, -1, pfn + i, order, 0, page_count(p),
					  "zone %s: order-%u free block at pfn %#lx: page %#lx is in use "
					  "(refcount %d, owner order %u, buddy %d)", zone->name, order, pfn, pfn + i,
					  page_count(p), p->owner_order, (int)PageBuddy(p));
	}
	int pb_mt;
	if (!block_mt_ok(mm, zone, pfn, order, mt, &pb_mt))
		return mm_violate(v, MM_INV_B1, zone->idx, -1, pfn, order, pb_mt, mt,
				  "zone %s: order-%u block at pfn %#lx is on the migratetype-%d list but its pageblock is type %d",
				  zone->name, order, pfn, mt, pb_mt);
	return true;
}

static bool scan_zone_lists(struct mm *mm, struct zone *zone, struct zone_scan *s, int level,
			    struct mm_violation *v)
{
	memset(s, 0, sizeof(*s));
	for (unsigned int o = 0; o < MM_NR_ORDERS_LIMIT; o++) {
		unsigned long blocks = 0;
		for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
			struct list_head *head = &zone->free_area[o].free_list[mt], *pos;
			unsigned long n = 0;
			for (pos = head->next; pos != head; pos = pos->next) {
				if (!pos || pos->prev == NULL || pos->next->prev != pos)
					return mm_violate(v, MM_INV_B2, zone->idx, -1, ~0UL, o, 0, 0,
							  "zone %s order %u list %d: corrupted list linkage", zone->name, o, mt);
				if (++n > mm->nr_valid)
					return mm_violate(v, MM_INV_B2, zone->idx, -1, ~0UL, o, (long)mm->nr_valid, (long)n,
							  "zone %s order %u list %d: more entries than pages (a cycle)",
							  zone->name, o, mt);
				struct page *page = list_entry(pos, struct page, lru);
				if (o > MAX_ORDER(mm))
					return mm_violate(v, MM_INV_B1, zone->idx, -1, ~0UL, o, MAX_ORDER(mm), o,
							  "zone %s: a block on the order-%u list, above max_order %u",
							  zone->name, o, MAX_ORDER(mm));
				if (!check_free_block(mm, zone, page, o, mt, level, v))
					return false;
			}
			s->nr_free[o][mt] = n;
			blocks += n;
			if (!is_migrate_isolate(mt))
				s->free_pages += (long)(n << o);
		}
		if (blocks != zone->free_area[o].nr_free)
			return mm_violate(v, MM_INV_B2, zone->idx, -1, ~0UL, o, (long)blocks, (long)zone->free_area[o].nr_free,
					  "zone %s order %u: nr_free is %lu but the lists hold %lu blocks",
					  zone->name, o, zone->free_area[o].nr_free, blocks);
	}
	if (s->free_pages != zone_page_state(zone, NR_FREE_PAGES))
		return mm_violate(v, MM_INV_B2, zone->idx, -1, ~0UL, 0, s->free_pages, zone_page_state(zone, NR_FREE_PAGES),
				  "zone %s: NR_FREE_PAGES is %ld but the (non-isolated) free lists hold %ld pages",
				  zone->name, zone_page_state(zone, NR_FREE_PAGES), s->free_pages);
	return true;
}

/*
 * Everything the level-2 walk of @zone reads but its free blocks' struct
 * pages: the lists' heads and counts, the counters, the watermarks and
 * reserves (W1), the pageblock types (B1's list/pageblock agreement).  An
 * operation that adds, takes or moves a free block changes a list head or
 * a count; one that allocates changes NR_FREE_PAGES.
 */
static unsigned long zone_l2_signature(struct mm *mm, struct zone *z)
{
	uint64_t h = MM_SIG_INIT;
	h = mm_sig_mix(h, (uint64_t)mm->cfg.wmark_algo);
	/* The list heads and nr_free of every order: under zone->lock, which the checker holds. */
	h = mm_sig_bytes(h, z->free_area, sizeof(z->free_area));
	for (int i = 0; i < NR_VM_ZONE_STAT_ITEMS; i++)
		h = mm_sig_mix(h, (uint64_t)zone_page_state(z, (enum zone_stat_item)i));
	for (int w = 0; w < NR_WMARK; w++)
		h = mm_sig_mix(h, z->_watermark[w]);
	h = mm_sig_mix(h, z->watermark_boost);
	h = mm_sig_mix(h, z->nr_reserved_highatomic);
	for (int j = 0; j < MAX_NR_ZONES; j++)
		h = mm_sig_mix(h, (uint64_t)z->lowmem_reserve[j]);
	h = mm_sig_mix(h, (uint64_t)atomic_load(&z->managed_pages));
	if (z->pageblock_flags && populated_zone(z)) {
		/* Written under zone->lock (set_pageblock_migratetype): plain reads are safe here. */
		size_t n = ((zone_end_pfn(z) - z->pageblock_base_pfn) >> mm->pageblock_order) + 1;
		h = mm_sig_bytes(h, (const void *)z->pageblock_flags, n);
	}
	return h ? (unsigned long)h : 1;
}

/* ---------------------------------------------------------------- B3 */

static bool check_coalescing(struct mm *mm, struct zone *zone, struct mm_violation *v)
{
	for (unsigned int o = 0; o < MAX_ORDER(mm); o++) {
		for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
			struct list_head *head = &zone->free_area[o].free_list[mt], *pos;
			list_for_each(pos, head) {
				struct page *page = list_entry(pos, struct page, lru);
				unsigned long pfn = __page_to_pfn(mm, page), bpfn = __find_buddy_pfn(pfn, o);
				if (!__pfn_valid(mm, bpfn))
					continue;
				struct page *b = __pfn_to_page(mm, bpfn);
				if (!PageBuddy(b) || buddy_order(b) != o || page_zonenum(b) != (unsigned)zone->idx)
					continue;
				if (o >= mm->pageblock_order) {
					int m1 = get_pfnblock_migratetype(mm, page, pfn);
					int m2 = get_pfnblock_migratetype(mm, b, bpfn);
					if (m1 != m2 && (!migratetype_is_mergeable(m1) || !migratetype_is_mergeable(m2)))
						continue;
				}
				return mm_violate(v, MM_INV_B3, zone->idx, -1, pfn, o, 0, 1,
						  "zone %s: free order-%u blocks at pfn %#lx and its buddy %#lx were not merged",
						  zone->name, o, pfn, bpfn);
			}
		}
	}
	return true;
}

/* ---------------------------------------------------------------- B4 */

struct owner_map {
	struct mm *mm;
	unsigned char *where;     /* per pfn: 0 nowhere, else the first owner */
	unsigned long bad_pfn;
	int bad_a, bad_b;         /* the two places, or a == b == 0 for out of range */
	bool bad;
	unsigned long marked;     /* pfns with an owner */
};

enum { OWN_BUDDY = 1, OWN_PCP, OWN_CLIENT, OWN_KERNEL, OWN_SLAB };
static const char *const own_names[] = { "nowhere", "a buddy free block", "a pcp list",
					 "a client allocation", "an allocation (memmap)", "a slab" };

/* Is any of @n bytes at @p non-zero? */
static bool bytes_any_set(const unsigned char *p, unsigned long n)
{
	unsigned long i = 0, w;
	for (; i + sizeof(w) <= n; i += sizeof(w)) {
		memcpy(&w, p + i, sizeof(w));
		if (w)
			return true;
	}
	for (; i < n; i++)
		if (p[i])
			return true;
	return false;
}

static void owner_mark(struct owner_map *m, unsigned long pfn, unsigned long nr, int who)
{
	if (m->bad)
		return;
	/* The usual case, a whole block of valid pfns nobody else holds: one memset. */
	if (nr > 1 && pfn_range_valid(m->mm, pfn, nr) && !bytes_any_set(&m->where[pfn - m->mm->first_pfn], nr)) {
		memset(&m->where[pfn - m->mm->first_pfn], who, nr);
		m->marked += nr;
		return;
	}
	/* Page by page, to name the first pfn that is a hole or held twice. */
	for (unsigned long i = 0; i < nr; i++) {
		unsigned long p = pfn + i;
		if (!__pfn_valid(m->mm, p)) {
			m->bad = true;
			m->bad_pfn = p;
			m->bad_a = 0;
			m->bad_b = who;
			return;
		}
		unsigned char *w = &m->where[p - m->mm->first_pfn];
		if (*w) {
			m->bad = true;
			m->bad_pfn = p;
			m->bad_a = *w;
			m->bad_b = who;
			return;
		}
		*w = (unsigned char)who;
		m->marked++;
	}
}

static void client_mark(void *w, unsigned long pfn, unsigned long nr)
{
	owner_mark(w, pfn, nr, OWN_CLIENT);
}

static void pcp_mark(void *w, unsigned long pfn, unsigned long nr)
{
	owner_mark(w, pfn, nr, OWN_PCP);
}

static bool check_conservation(struct mm *mm, struct mm_violation *v)
{
	unsigned long span = mm->end_pfn - mm->first_pfn;
	unsigned long allocated = 0;
	bool ok = true;

	/*
	 * The map is kept for the next check: a fresh calloc() per check is
	 * fresh memory under ASan's quarantine, every page of it a fault.
	 * Callers hold every zone and pcp lock, so one check uses it at a time.
	 */
	if (!mm->check_where)
		mm->check_where = malloc(span);
	if (!mm->check_where)
		return true;   /* cannot check without memory; not a violation */
	struct owner_map m = { .mm = mm, .where = mm->check_where };
	memset(m.where, 0, span);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		for (unsigned int o = 0; o <= MAX_ORDER(mm); o++)
			for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
				struct list_head *pos;
				list_for_each(pos, &zone->free_area[o].free_list[mt]) {
					struct page *page = list_entry(pos, struct page, lru);
					owner_mark(&m, __page_to_pfn(mm, page), 1UL << o, OWN_BUDDY);
				}
			}
	}
	pcp_for_each_page_locked(mm, pcp_mark, &m);
	/*
	 * What is allocated, by the memmap: heads with a reference and their
	 * order.  Slab pages belong to SLUB, the rest to clients.  The walk
	 * steps over whole blocks (a free block's order, an allocation's), so
	 * it costs O(blocks); B1 and owner_mark() see to the pages inside.
	 */
	unsigned long client_pages = 0;
	for (unsigned long pfn = mm->first_pfn; pfn < mm->end_pfn;) {
		if (!__pfn_valid(mm, pfn)) {
			pfn++;
			continue;
		}
		struct page *p = __pfn_to_page(mm, pfn);
		unsigned long nr = 1;
		if (PageBuddy(p) && buddy_order(p) <= MAX_ORDER(mm) && !(pfn & ((1UL << buddy_order(p)) - 1))) {
			nr = 1UL << buddy_order(p);
		} else if (page_count(p) > 0 && p->owner_order) {
			nr = 1UL << (p->owner_order - 1);
			allocated += nr;
			if (PageSlab(p))
				owner_mark(&m, pfn, nr, OWN_SLAB);
			else if (!mm->client_walk)
				owner_mark(&m, pfn, nr, OWN_KERNEL);
			else
				client_pages += nr;
		}
		pfn += nr;
	}
	if (mm->client_walk) {
		/* The client's view must match the memmap's, page for page. */
		unsigned long before = m.marked;
		mm->client_walk(mm->client_ctx, client_mark, &m);
		if (!m.bad && m.marked - before != client_pages) {
			ok = mm_violate(v, MM_INV_B4, -1, -1, ~0UL, 0, (long)client_pages, (long)(m.marked - before),
					"clients hold %lu pages but the memmap shows %lu allocated to clients",
					m.marked - before, client_pages);
			goto out;
		}
	}
	if (m.bad) {
		if (!m.bad_a)
			ok = mm_violate(v, MM_INV_B4, -1, -1, m.bad_pfn, 0, 0, 1,
					"pfn %#lx, which does not exist, is in %s", m.bad_pfn, own_names[m.bad_b]);
		else
			ok = mm_violate(v, MM_INV_B4, -1, -1, m.bad_pfn, 0, 1, 2,
					"pfn %#lx is in two places: %s and %s", m.bad_pfn, own_names[m.bad_a],
					own_names[m.bad_b]);
		goto out;
	}
	/* Every mark is a distinct valid pfn: as many marks as valid pfns means none is lost. */
	for (unsigned long pfn = mm->first_pfn; m.marked != mm->nr_valid && pfn < mm->end_pfn; pfn++) {
		if (__pfn_valid(mm, pfn) && !m.where[pfn - mm->first_pfn]) {
			ok = mm_violate(v, MM_INV_B4, (int)page_zonenum(__pfn_to_page(mm, pfn)), -1, pfn, 0, 1, 0,
					"pfn %#lx is nowhere: not free, not on a pcp list, not allocated (lost)", pfn);
			goto out;
		}
	}
	/* The event counters must agree with the recount. */
	unsigned long pgalloc = mm_vm_event(mm, PGALLOC), pgfree = mm_vm_event(mm, PGFREE);
	long zone_alloc = 0;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		zone_alloc += zone_page_state(&mm->zones[z], NR_ZONE_ALLOCATED);
	if (zone_alloc != (long)allocated)
		ok = mm_violate(v, MM_INV_B4, -1, -1, ~0UL, 0, (long)allocated, zone_alloc,
				"NR_ZONE_ALLOCATED sums to %ld but %lu pages are allocated", zone_alloc, allocated);
	else if (pgalloc - pgfree != allocated)
		ok = mm_violate(v, MM_INV_B4, -1, -1, ~0UL, 0, (long)allocated, (long)(pgalloc - pgfree),
				"PGALLOC - PGFREE is %ld but %lu pages are allocated", (long)(pgalloc - pgfree), allocated);
out:
	return ok;
}

/* ---------------------------------------------------------------- W1 */

/*
 * The reference: the documented semantics of __zone_watermark_ok computed
 * from the scan (not the counters), in signed arithmetic.
 */
static bool wmark_reference(struct mm *mm, struct zone *z, const struct zone_scan *s, unsigned int order,
			    long mark, int hz, unsigned int flags, bool *servable)
{
	long free = s->free_pages, min = mark, reserve = z->lowmem_reserve[hz];

	*servable = false;
	for (unsigned int o = order; o <= MAX_ORDER(mm); o++) {
		for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++)
			*servable |= s->nr_free[o][mt] != 0;
		if (flags & (ALLOC_HIGHATOMIC | ALLOC_OOM))
			*servable |= s->nr_free[o][MIGRATE_HIGHATOMIC] != 0;
	}
	if (mm->cfg.wmark_algo == MM_WMARK_2008) {
		unsigned long nf[MM_NR_ORDERS_LIMIT] = { 0 };
		for (unsigned int o = 0; o <= MAX_ORDER(mm); o++)
			for (int mt = 0; mt < MIGRATE_TYPES; mt++)
				nf[o] += s->nr_free[o][mt];
		free -= (1L << order) - 1;
		if (flags & ALLOC_MIN_RESERVE)
			min -= min / 2;
		if (flags & ALLOC_NON_BLOCK)
			min -= min / 4;
		if (free <= min + reserve)
			return false;
		for (unsigned int o = 0; o < order; o++) {
			free -= (long)(nf[o] << o);
			min /= 2;
			if (free <= min)
				return false;
		}
		return true;
	}
	free -= (1L << order) - 1;
	if (!(flags & ALLOC_RESERVES))
		free -= (long)z->nr_reserved_highatomic;
	if (flags & ALLOC_MIN_RESERVE) {
		min -= min / 2;
		if (flags & ALLOC_NON_BLOCK)
			min -= min / 4;
	}
	if (flags & ALLOC_OOM)
		min -= min / 2;
	if (free <= min + reserve)
		return false;
	return order == 0 || *servable;
}

/* FNV-1a over everything __zone_watermark_ok and zone_watermark_fast read. */
static unsigned long w1_signature(struct mm *mm, struct zone *z, const struct zone_scan *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
#define W1_MIX(x) do { h ^= (uint64_t)(x); h *= 0x100000001b3ULL; } while (0)
	W1_MIX(mm->cfg.wmark_algo);
	W1_MIX(s->free_pages);
	for (unsigned int o = 0; o <= MAX_ORDER(mm); o++) {
		W1_MIX(z->free_area[o].nr_free);
		for (int mt = 0; mt < MIGRATE_TYPES; mt++)
			W1_MIX(s->nr_free[o][mt]);
	}
	for (int i = 0; i < NR_VM_ZONE_STAT_ITEMS; i++)
		W1_MIX(zone_page_state(z, (enum zone_stat_item)i));
	for (int w = 0; w < NR_WMARK; w++)
		W1_MIX(z->_watermark[w]);
	W1_MIX(z->watermark_boost);
	W1_MIX(z->nr_reserved_highatomic);
	for (int j = 0; j < MAX_NR_ZONES; j++)
		W1_MIX(z->lowmem_reserve[j]);
#undef W1_MIX
	return (unsigned long)h;
}

/* Did this state pass at level class @cls (0: level 2, 1: level 3, 2: level 4) or above? */
static bool w1_memo_has(const struct zone *z, unsigned long sig, unsigned int cls)
{
	for (unsigned int i = 0; i < MM_W1_MEMO; i++)
		if (z->w1_memo[i] && (z->w1_memo[i] & ~3UL) == (sig & ~3UL) && (z->w1_memo[i] & 3) >= cls)
			return true;
	return false;
}

/*
 * Which questions, by level (each compared with the reference at five
 * marks: min, low, high, 0 and exactly the free count):
 *   2  order 0 and one more order, one of three flag sets - both taken
 *      from the state's signature, so a run asks them all - the zone's own
 *      reserve: the per-operation sample;
 *   3  the same two orders with all three flag sets;
 *   4  every order, all eight flag sets, every highest zone.
 */
static bool check_watermarks(struct mm *mm, struct zone *z, const struct zone_scan *s, int level,
			     struct mm_violation *v)
{
	static const unsigned int flag_sets[] = {
		0, ALLOC_MIN_RESERVE, ALLOC_MIN_RESERVE | ALLOC_NON_BLOCK,
		ALLOC_NON_BLOCK | ALLOC_HIGHATOMIC, ALLOC_OOM, ALLOC_MIN_RESERVE | ALLOC_NON_BLOCK | ALLOC_HIGHATOMIC,
		ALLOC_HIGHATOMIC, ALLOC_OOM | ALLOC_MIN_RESERVE,
	};
	bool all = level >= 4;
	unsigned long sig = w1_signature(mm, z, s);
	unsigned int cls = all ? 2 : level >= 3 ? 1 : 0;
	unsigned int nflags = all ? ARRAY_SIZE(flag_sets) : 3, f0 = level >= 3 ? 0 : (unsigned int)(sig >> 32) % 3;
	unsigned int max_o = MAX_ORDER(mm);
	long marks[NR_WMARK + 2];

	if (w1_memo_has(z, sig, cls))
		return true;
	for (int w = 0; w < NR_WMARK; w++)
		marks[w] = (long)zone_wmark_pages(z, w);
	marks[NR_WMARK] = 0;
	marks[NR_WMARK + 1] = s->free_pages;   /* right at the boundary */

	unsigned int sampled = MAX_ORDER(mm) ? 1 + (unsigned int)(sig % MAX_ORDER(mm)) : 0;
	for (int hz = z->idx; hz < (all ? MAX_NR_ZONES : z->idx + 1); hz++)
		for (unsigned int order = 0; order <= max_o;
		     order = all ? order + 1 : order < sampled ? sampled : max_o + 1)
			for (unsigned int f = f0; f < (level >= 3 ? nflags : f0 + 1); f++)
				for (unsigned int w = 0; w < ARRAY_SIZE(marks); w++) {
					unsigned int flags = flag_sets[f];
					bool servable;
					bool ref = wmark_reference(mm, z, s, order, marks[w], hz, flags, &servable);
					bool got = __zone_watermark_ok(z, order, (unsigned long)marks[w], hz, flags,
								       zone_page_state(z, NR_FREE_PAGES));
					bool fast = mm->cfg.wmark_algo == MM_WMARK_MODERN ?
						    zone_watermark_fast(z, order, (unsigned long)marks[w], hz, flags, 0) : ref;
					if (got != ref || fast != ref)
						return mm_violate(v, MM_INV_W1, z->idx, -1, ~0UL, order, ref, got != ref ? got : fast,
								  "zone %s: %s(order %u, mark %ld, highest zone %d, alloc_flags %#x) "
								  "says %d, reference says %d (free %ld, highatomic %lu, reserve %ld)",
								  z->name, got != ref ? "__zone_watermark_ok" : "zone_watermark_fast",
								  order, marks[w], hz, flags, got != ref ? got : fast, ref,
								  s->free_pages, z->nr_reserved_highatomic, z->lowmem_reserve[hz]);
					if (got && order && !servable && mm->cfg.wmark_algo == MM_WMARK_MODERN)
						return mm_violate(v, MM_INV_W1, z->idx, -1, ~0UL, order, 0, 1,
								  "zone %s: watermark ok for order %u (alloc_flags %#x) but no "
								  "usable free block of that order exists", z->name, order, flags);
				}
	z->w1_memo[z->w1_memo_next++ % MM_W1_MEMO] = (sig & ~3UL) | cls;
	return true;
}

void mm_check_forget(struct mm *mm)
{
	for (int zi = 0; zi < MAX_NR_ZONES; zi++) {
		struct zone *zone = &mm->zones[zi];
		memset(zone->w1_memo, 0, sizeof(zone->w1_memo));
		zone->w1_memo_next = 0;
		zone->l2_sig = 0;
		for (unsigned int cpu = 0; zone->per_cpu_pageset && cpu < mm->cfg.nr_cpus; cpu++)
			zone->per_cpu_pageset[cpu].l2_sig = 0;
	}
	slab_check_forget(mm);
}

void mm_check_set_incremental(struct mm *mm, bool on)
{
	mm->check_full_walks = !on;
}

/* ---------------------------------------------------------------- entry */

static bool check_counters(struct mm *mm, struct mm_violation *v)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		long free = zone_page_state(zone, NR_FREE_PAGES), managed = atomic_load(&zone->managed_pages);
		if (free < 0 || free > managed)
			return mm_violate(v, MM_INV_B2, z, -1, ~0UL, 0, managed, free,
					  "zone %s: NR_FREE_PAGES %ld outside [0, managed %ld]", zone->name, free, managed);
		if (managed != (long)zone->present_pages)
			return mm_violate(v, MM_INV_B4, z, -1, ~0UL, 0, (long)zone->present_pages, managed,
					  "zone %s: managed pages %ld != present pages %lu", zone->name, managed,
					  zone->present_pages);
		for (unsigned int o = MAX_ORDER(mm) + 1; o < MM_NR_ORDERS_LIMIT; o++)
			if (zone->free_area[o].nr_free)
				return mm_violate(v, MM_INV_B1, z, -1, ~0UL, o, 0, (long)zone->free_area[o].nr_free,
						  "zone %s: %lu free blocks of order %u, above max_order %u",
						  zone->name, zone->free_area[o].nr_free, o, MAX_ORDER(mm));
	}
	return true;
}

static void lock_all_zones(struct mm *mm, unsigned long *flags)
{
	local_irq_save(*flags);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		spin_lock(&mm->zones[z].lock);
}

static void unlock_all_zones(struct mm *mm, unsigned long flags)
{
	for (int z = MAX_NR_ZONES - 1; z >= 0; z--)
		spin_unlock(&mm->zones[z].lock);
	local_irq_restore(flags);
}

bool mm_check(struct mm *mm, int level, struct mm_violation *v)
{
	struct zone_scan scan;
	unsigned long flags;
	bool ok = true;

	if (v)
		memset(v, 0, sizeof(*v));
	if (level <= 0)
		return true;
	if (!check_task(v))
		return false;

	lock_all_zones(mm, &flags);
	ok = check_counters(mm, v);
	for (int z = 0; ok && level >= 2 && z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		unsigned long sig = zone_l2_signature(mm, zone);
		if (mm_check_incremental(mm, level) && sig == zone->l2_sig)
			continue;       /* B1, B2 and W1 passed in this very state */
		ok = scan_zone_lists(mm, zone, &scan, level, v);
		if (ok && populated_zone(zone))
			ok = check_watermarks(mm, zone, &scan, level, v);
		if (ok && level >= 3)
			ok = check_coalescing(mm, zone, v);
		zone->l2_sig = ok ? sig : 0;
	}
	unlock_all_zones(mm, flags);
	if (ok && level >= 2)
		ok = pcp_check(mm, level, v);
	if (ok && level >= 2)
		ok = slab_check(mm, level, v);
	if (ok && level >= 3) {
		/* Lock order: every pcp->lock, then every zone->lock (page/pcp.c). */
		pcp_lock_all(mm);
		lock_all_zones(mm, &flags);
		ok = check_conservation(mm, v);
		unlock_all_zones(mm, flags);
		pcp_unlock_all(mm);
	}
	return ok;
}

void mm_set_client_walker(struct mm *mm, mm_client_walk_fn fn, void *ctx)
{
	mm->client_walk = fn;
	mm->client_ctx = ctx;
}

unsigned long mm_zone_page_state(const struct mm *mm, enum zone_type z, enum zone_stat_item item)
{
	if ((unsigned)z >= MAX_NR_ZONES || (unsigned)item >= NR_VM_ZONE_STAT_ITEMS)
		return 0;
	return (unsigned long)zone_page_state(&mm->zones[z], item);
}

/* sum_vm_event(): the tasks without a vCPU plus every vCPU's count. */
unsigned long mm_vm_event(const struct mm *mm, enum vm_event_item item)
{
	if ((unsigned)item >= NR_VM_EVENT_ITEMS)
		return 0;
	unsigned long v = atomic_load(&((struct mm *)mm)->vm_events[item]);
	for (unsigned int cpu = 0; cpu < mm->cfg.nr_cpus; cpu++)
		v += (unsigned long)atomic_load_explicit(&mm->vmstat_pcpu[cpu].ev[item], memory_order_relaxed);
	return v;
}

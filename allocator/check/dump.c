/* SPDX-License-Identifier: MIT */
/*
 * dump.c - /proc/buddyinfo, /proc/zoneinfo and /proc/pagetypeinfo in the
 * kernel's own formats (mm/vmstat.c frag_show, zoneinfo_show,
 * pagetypeinfo_show), so users read them as they read the kernel's.
 * One node: "Node 0".
 */
#include "internal.h"
#include "page/pcp.h"

static const char *const migratetype_names[MIGRATE_TYPES] = {
	"Unmovable", "Movable", "Reclaimable", "HighAtomic", "Isolate",
};

void mm_dump_buddyinfo(struct mm *mm, FILE *f)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		unsigned long flags;
		if (!populated_zone(zone))
			continue;
		fprintf(f, "Node %d, zone %8s ", 0, zone->name);
		spin_lock_irqsave(&zone->lock, flags);
		for (unsigned int o = 0; o <= MAX_ORDER(mm); o++)
			fprintf(f, "%6lu ", zone->free_area[o].nr_free);
		spin_unlock_irqrestore(&zone->lock, flags);
		fputc('\n', f);
	}
}

void mm_dump_pagetypeinfo(struct mm *mm, FILE *f)
{
	fprintf(f, "Page block order: %u\n", mm->pageblock_order);
	fprintf(f, "Pages per block:  %lu\n\n", pageblock_nr_pages(mm));
	fprintf(f, "%-43s ", "Free pages count per migrate type at order");
	for (unsigned int o = 0; o <= MAX_ORDER(mm); o++)
		fprintf(f, "%6u ", o);
	fputc('\n', f);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		unsigned long flags;
		if (!populated_zone(zone))
			continue;
		spin_lock_irqsave(&zone->lock, flags);
		for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
			fprintf(f, "Node %4d, zone %8s, type %12s ", 0, zone->name, migratetype_names[mt]);
			for (unsigned int o = 0; o <= MAX_ORDER(mm); o++) {
				unsigned long n = 0;
				struct list_head *pos;
				list_for_each(pos, &zone->free_area[o].free_list[mt])
					n++;
				fprintf(f, "%6lu ", n);
			}
			fputc('\n', f);
		}
		spin_unlock_irqrestore(&zone->lock, flags);
	}
	fprintf(f, "\n%-23s", "Number of blocks type ");
	for (int mt = 0; mt < MIGRATE_TYPES; mt++)
		fprintf(f, "%12s ", migratetype_names[mt]);
	fputc('\n', f);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		unsigned long count[MIGRATE_TYPES] = { 0 };
		if (!populated_zone(zone))
			continue;
		/*
		 * pagetypeinfo_showblockcount_print(): every pageblock the zone
		 * touches.  The kernel skips a pageblock whose first pfn has no
		 * online memmap, which happens only per memory section; the
		 * model's holes are finer, so a pageblock counts when any of its
		 * pfns inside the zone exists (it used to be skipped when its
		 * first pfn was a hole, and the counts no longer summed to the
		 * zone's pageblocks).
		 */
		for (unsigned long pfn = zone->pageblock_base_pfn; pfn < zone_end_pfn(zone); pfn += pageblock_nr_pages(mm)) {
			unsigned long p = MAX(pfn, zone->zone_start_pfn);
			unsigned long end = MIN(pfn + pageblock_nr_pages(mm), zone_end_pfn(zone));
			while (p < end && !__pfn_valid(mm, p))
				p++;
			if (p == end)
				continue;
			count[get_pfnblock_migratetype(mm, __pfn_to_page(mm, p), p)]++;
		}
		fprintf(f, "Node %d, zone %8s ", 0, zone->name);
		for (int mt = 0; mt < MIGRATE_TYPES; mt++)
			fprintf(f, "%12lu ", count[mt]);
		fputc('\n', f);
	}
}

void mm_dump_zoneinfo(struct mm *mm, FILE *f)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		/*
		 * zoneinfo_show_print(): the watermark block and the protection
		 * line are printed for every zone, populated or not (an empty
		 * zone used to get neither "cma" nor "protection:", which
		 * parsers of the kernel's format expect); the rest only for
		 * populated zones.
		 */
		fprintf(f, "Node %d, zone %8s\n", 0, zone->name);
		fprintf(f, "  pages free     %ld\n", zone_page_state(zone, NR_FREE_PAGES));
		fprintf(f, "        boost    %lu\n", zone->watermark_boost);
		fprintf(f, "        min      %lu\n", zone->_watermark[WMARK_MIN]);
		fprintf(f, "        low      %lu\n", zone->_watermark[WMARK_LOW]);
		fprintf(f, "        high     %lu\n", zone->_watermark[WMARK_HIGH]);
		fprintf(f, "        spanned  %lu\n", zone->spanned_pages);
		fprintf(f, "        present  %lu\n", zone->present_pages);
		fprintf(f, "        managed  %lu\n", zone_managed_pages(zone));
		fprintf(f, "        cma      0\n");
		fprintf(f, "        protection: (");
		for (int j = 0; j < MAX_NR_ZONES; j++)
			fprintf(f, "%s%ld", j ? ", " : "", zone->lowmem_reserve[j]);
		fprintf(f, ")\n");
		if (!populated_zone(zone))
			continue;
		fprintf(f, "      nr_free_pages %ld\n", zone_page_state(zone, NR_FREE_PAGES));
		fprintf(f, "      nr_zone_allocated %ld\n", zone_page_state(zone, NR_ZONE_ALLOCATED));
		fprintf(f, "      nr_reserved_highatomic %lu\n", zone->nr_reserved_highatomic);
		pcp_dump_zoneinfo(mm, zone, f);
		fprintf(f, "  node_unreclaimable:  0\n");
		fprintf(f, "  start_pfn:           %lu\n", zone->zone_start_pfn);
	}
}

/* SPDX-License-Identifier: MIT */
/*
 * test_dump.c - /proc/buddyinfo, /proc/zoneinfo and /proc/pagetypeinfo
 * parse the way the kernel's do (mm/vmstat.c: frag_show_print,
 * zoneinfo_show_print, pagetypeinfo_showfree_print,
 * pagetypeinfo_showblockcount_print), and say what the allocator says:
 *  - buddyinfo: one line per populated zone, byte for byte the kernel's
 *    "Node %d, zone %8s " + "%6lu " x (max_order + 1), values = nr_free;
 *  - zoneinfo: every zone (populated or not) has pages free, min, low,
 *    high, spanned, present, managed and a protection line with one entry
 *    per zone, equal to the accessors and the config; a populated zone
 *    has its "pagesets" with every vCPU's count, high and batch;
 *  - pagetypeinfo: free counts per type sum to nr_free per order; block
 *    counts per zone sum to the pageblocks that hold at least one of the
 *    zone's pfns (computed from the config), and follow steals,
 *    isolation and highatomic reservations.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "page/pcp.h"
#include "test.h"
#include "buddy_test.h"

static const char *const zone_names[MAX_NR_ZONES] = { "DMA", "DMA32", "Normal", "Movable" };
static const char *const type_names[MIGRATE_TYPES] = { "Unmovable", "Movable", "Reclaimable", "HighAtomic",
						       "Isolate" };

/* ---- buddyinfo ---- */

static void check_buddyinfo(struct mm *mm, const char *what)
{
	const struct mm_config *c = mm_get_config(mm);
	char *text = test_dump(mm, mm_dump_buddyinfo);
	/* The kernel's exact bytes, rebuilt here. */
	char *want = NULL;
	size_t wlen = 0;
	FILE *f = open_memstream(&want, &wlen);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = mm_zone(mm, z);
		if (!zone)
			continue;
		fprintf(f, "Node %d, zone %8s ", 0, zone_names[z]);
		for (unsigned int o = 0; o <= c->max_order; o++)
			fprintf(f, "%6lu ", zone_nr_free(zone, o));
		fputc('\n', f);
	}
	fclose(f);
	CHECK_MSG(strcmp(text, want) == 0, "%s: buddyinfo\n%s---- expected\n%s", what, text, want);

	/* And parse it as a reader would: columns = max_order + 1. */
	int lines = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		int node;
		char zn[16];
		int off = 0;
		CHECK(sscanf(line, "Node %d, zone %15s%n", &node, zn, &off) == 2 && node == 0);
		int z = -1;
		for (int i = 0; i < MAX_NR_ZONES; i++)
			if (!strcmp(zn, zone_names[i]))
				z = i;
		CHECK_MSG(z >= 0 && mm_zone(mm, z), "%s: buddyinfo names zone \"%s\"", what, zn);
		unsigned int cols = 0;
		char *p = line + off, *end;
		for (unsigned long v = strtoul(p, &end, 10); end != p; v = strtoul(p, &end, 10)) {
			if (z >= 0 && mm_zone(mm, z))
				CHECK(v == zone_nr_free(mm_zone(mm, z), cols));
			cols++;
			p = end;
		}
		CHECK_MSG(cols == c->max_order + 1, "%s: %u columns, max_order %u", what, cols, c->max_order);
		lines++;
	}
	int populated = 0;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		populated += mm_zone(mm, z) != NULL;
	CHECK(lines == populated);
	free(text);
	free(want);
}

/* ---- zoneinfo ---- */

struct zinfo {
	bool seen;
	long free, min, low, high, spanned, present, managed, start_pfn, nr_free_pages;
	long prot[MAX_NR_ZONES + 1];
	int nprot;
	bool has[8];   /* free min low high spanned present managed protection */
	bool pagesets; /* the "pagesets" header (populated zones), then per cpu: */
	int ncpus, cpu;                 /* "cpu: N" lines seen; the last N */
	long pcp[64][3];                /* count, high, batch of each cpu */
};

static void parse_zoneinfo(char *text, struct zinfo zi[MAX_NR_ZONES], const char *what)
{
	memset(zi, 0, sizeof(struct zinfo) * MAX_NR_ZONES);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		zi[z].start_pfn = zi[z].nr_free_pages = -1;
	int z = -1;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char zn[16];
		int node;
		long v;
		if (sscanf(line, "Node %d, zone %15s", &node, zn) == 2) {
			z = -1;
			for (int i = 0; i < MAX_NR_ZONES; i++)
				if (!strcmp(zn, zone_names[i]))
					z = i;
			CHECK_MSG(z >= 0 && !zi[z].seen, "%s: zone header \"%s\"", what, line);
			if (z >= 0)
				zi[z].seen = true;
			continue;
		}
		if (z < 0)
			continue;
		struct zinfo *q = &zi[z];
		if (sscanf(line, " pages free %ld", &v) == 1) { q->free = v; q->has[0] = true; }
		else if (sscanf(line, " min %ld", &v) == 1) { q->min = v; q->has[1] = true; }
		else if (sscanf(line, " low %ld", &v) == 1) { q->low = v; q->has[2] = true; }
		else if (sscanf(line, " high %ld", &v) == 1) { q->high = v; q->has[3] = true; }
		else if (sscanf(line, " spanned %ld", &v) == 1) { q->spanned = v; q->has[4] = true; }
		else if (sscanf(line, " present %ld", &v) == 1) { q->present = v; q->has[5] = true; }
		else if (sscanf(line, " managed %ld", &v) == 1) { q->managed = v; q->has[6] = true; }
		else if (sscanf(line, " nr_free_pages %ld", &v) == 1) q->nr_free_pages = v;
		else if (sscanf(line, " start_pfn: %ld", &v) == 1) q->start_pfn = v;
		else if (!strcmp(line, "  pagesets")) q->pagesets = true;
		else if (sscanf(line, "    cpu: %ld", &v) == 1) {
			CHECK_MSG(q->pagesets && v == q->ncpus && v < 64, "%s: \"%s\" (zone %s, %d cpus before, "
				  "pagesets header %s)", what, line, zone_names[z], q->ncpus, q->pagesets ? "seen" : "not seen");
			q->cpu = v >= 0 && v < 64 ? (int)v : 0;
			q->ncpus++;
		}
		else if (sscanf(line, " count: %ld", &v) == 1 && q->ncpus) q->pcp[q->cpu][0] = v;
		else if (sscanf(line, " high: %ld", &v) == 1 && q->ncpus) q->pcp[q->cpu][1] = v;
		else if (sscanf(line, " batch: %ld", &v) == 1 && q->ncpus) q->pcp[q->cpu][2] = v;
		else if (strstr(line, "protection: (")) {
			q->has[7] = true;
			char *p = strchr(line, '(') + 1, *end;
			for (;;) {
				long r = strtol(p, &end, 10);
				if (end == p)
					break;
				if (q->nprot <= MAX_NR_ZONES)
					q->prot[q->nprot++] = r;
				p = end;
				while (*p == ',' || *p == ' ')
					p++;
			}
			CHECK_MSG(*p == ')', "%s: protection line \"%s\" not closed", what, line);
		}
	}
}

static void check_zoneinfo(struct mm *mm, const char *what)
{
	const struct mm_config *c = mm_get_config(mm);
	char *text = test_dump(mm, mm_dump_zoneinfo);
	struct zinfo zi[MAX_NR_ZONES];
	parse_zoneinfo(text, zi, what);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zinfo *q = &zi[z];
		struct zone *zone = mm_zone(mm, z);
		CHECK_MSG(q->seen, "%s: zone %s missing", what, zone_names[z]);
		for (int k = 0; k < 8; k++)
			CHECK_MSG(q->has[k], "%s: zone %s lacks line %d (free min low high spanned present managed "
				  "protection)", what, zone_names[z], k);
		CHECK_MSG(q->nprot == MAX_NR_ZONES, "%s: zone %s protection has %d entries", what, zone_names[z],
			  q->nprot);
		unsigned long present = 0;
		for (unsigned long pfn = c->zones[z].start_pfn; pfn < c->zones[z].end_pfn; pfn++)
			present += cfg_zone_of(c, pfn) == z;
		CHECK(q->spanned == (long)(c->zones[z].end_pfn - c->zones[z].start_pfn));
		CHECK(q->present == (long)present);
		if (!zone) {
			CHECK(q->present == 0 && q->managed == 0 && q->free == 0);
			continue;
		}
		CHECK(q->managed == (long)zone_managed_pages(zone));
		CHECK(q->free == zone_free_pages(zone) && q->nr_free_pages == zone_free_pages(zone));
		CHECK(q->min == (long)zone_wmark_pages(zone, WMARK_MIN));
		CHECK(q->low == (long)zone_wmark_pages(zone, WMARK_LOW));
		CHECK(q->high == (long)zone_wmark_pages(zone, WMARK_HIGH));
		CHECK(q->min <= q->low && q->low <= q->high);
		CHECK(q->start_pfn == (long)c->zones[z].start_pfn);
		for (int j = 0; j < MAX_NR_ZONES && j < q->nprot; j++)
			CHECK_MSG(q->prot[j] == zone_lowmem_reserve(zone, j), "%s: zone %s protection[%d] %ld != %ld", what,
				  zone_names[z], j, q->prot[j], zone_lowmem_reserve(zone, j));
		/* pagesets: every vCPU's list, as mm_pcp_info() reads it */
		CHECK_MSG(q->pagesets && q->ncpus == (int)c->nr_cpus, "%s: zone %s: pagesets header %s, %d cpus of %u",
			  what, zone_names[z], q->pagesets ? "seen" : "missing", q->ncpus, c->nr_cpus);
		for (int cpu = 0; cpu < q->ncpus && cpu < 64; cpu++) {
			struct mm_pcp_info pi;
			REQUIRE(mm_pcp_info(mm, (enum zone_type)z, cpu, &pi) == 0);
			CHECK_MSG(q->pcp[cpu][0] == pi.count && q->pcp[cpu][1] == pi.high && q->pcp[cpu][2] == pi.batch,
				  "%s: zone %s cpu %d: count %ld high %ld batch %ld, mm_pcp_info says %d %d %d", what,
				  zone_names[z], cpu, q->pcp[cpu][0], q->pcp[cpu][1], q->pcp[cpu][2], pi.count, pi.high,
				  pi.batch);
		}
	}
	free(text);
}

/* ---- pagetypeinfo ---- */

/*
 * Pageblocks holding at least one valid pfn of zone @z, from the config;
 * with @boot_unmovable, only those that start MIGRATE_UNMOVABLE: 6.6's
 * memmap_init_range() types a pageblock through its first pfn, and only
 * when that pfn is memory (of any zone: the usemap is per section).
 */
static unsigned long cfg_count_pageblocks(const struct mm_config *c, int z, bool boot_unmovable)
{
	unsigned long n = 0, pb = 1UL << c->pageblock_order;
	const struct mm_span *s = &c->zones[z];
	for (unsigned long b = s->start_pfn & ~(pb - 1); b < s->end_pfn; b += pb) {
		bool any = false;
		for (unsigned long pfn = b; pfn < b + pb && !any; pfn++)
			any = cfg_zone_of(c, pfn) == z;
		n += any && (!boot_unmovable || cfg_zone_of(c, b) < 0);
	}
	return n;
}

static unsigned long cfg_pageblocks(const struct mm_config *c, int z)
{
	return cfg_count_pageblocks(c, z, false);
}

static unsigned long cfg_boot_unmovable(const struct mm_config *c, int z)
{
	return cfg_count_pageblocks(c, z, true);
}

/* Returns the block counts per zone and type; checks the rest. */
static void check_pagetypeinfo(struct mm *mm, const char *what, unsigned long blocks[MAX_NR_ZONES][MIGRATE_TYPES])
{
	const struct mm_config *c = mm_get_config(mm);
	char *text = test_dump(mm, mm_dump_pagetypeinfo);
	unsigned long freecnt[MAX_NR_ZONES][MM_NR_ORDERS_LIMIT];
	bool block_section = false, seen_free[MAX_NR_ZONES][MIGRATE_TYPES], seen_blocks[MAX_NR_ZONES];
	unsigned int pb_order = ~0u;
	unsigned long per_block = 0;
	memset(freecnt, 0, sizeof(freecnt));
	memset(seen_free, 0, sizeof(seen_free));
	memset(seen_blocks, 0, sizeof(seen_blocks));
	memset(blocks, 0, sizeof(unsigned long) * MAX_NR_ZONES * MIGRATE_TYPES);

	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char zn[16], tn[16];
		int node, off = 0;
		if (sscanf(line, "Page block order: %u", &pb_order) == 1)
			continue;
		if (sscanf(line, "Pages per block: %lu", &per_block) == 1)
			continue;
		static const char free_hdr[] = "Free pages count per migrate type at order";
		if (!strncmp(line, free_hdr, strlen(free_hdr))) {
			/* The header lists orders 0..max_order. */
			char *p = line + strlen(free_hdr), *end;
			unsigned int o = 0;
			for (long v = strtol(p, &end, 10); end != p; v = strtol(p, &end, 10), o++) {
				CHECK(v == (long)o);
				p = end;
			}
			CHECK(o == c->max_order + 1);
			continue;
		}
		if (!strncmp(line, "Number of blocks type", 21)) {
			block_section = true;
			for (int t = 0; t < MIGRATE_TYPES; t++)
				CHECK(strstr(line, type_names[t]) != NULL);
			continue;
		}
		if (!block_section && sscanf(line, "Node %d, zone %15[^,], type %15s%n", &node, zn, tn, &off) == 3) {
			int z = -1, t = -1;
			for (int i = 0; i < MAX_NR_ZONES; i++)
				if (!strcmp(zn + strspn(zn, " "), zone_names[i]))
					z = i;
			for (int i = 0; i < MIGRATE_TYPES; i++)
				if (!strcmp(tn, type_names[i]))
					t = i;
			CHECK_MSG(z >= 0 && t >= 0 && mm_zone(mm, z), "%s: line \"%s\"", what, line);
			if (z < 0 || t < 0)
				continue;
			seen_free[z][t] = true;
			char *p = line + off, *end;
			unsigned int o = 0;
			for (unsigned long v = strtoul(p, &end, 10); end != p; v = strtoul(p, &end, 10), o++) {
				if (o < MM_NR_ORDERS_LIMIT)
					freecnt[z][o] += v;
				p = end;
			}
			CHECK_MSG(o == c->max_order + 1, "%s: %u columns in \"%s\"", what, o, line);
			continue;
		}
		if (block_section && sscanf(line, "Node %d, zone %15s%n", &node, zn, &off) == 2) {
			int z = -1;
			for (int i = 0; i < MAX_NR_ZONES; i++)
				if (!strcmp(zn, zone_names[i]))
					z = i;
			CHECK_MSG(z >= 0 && mm_zone(mm, z), "%s: block line \"%s\"", what, line);
			if (z < 0)
				continue;
			seen_blocks[z] = true;
			char *p = line + off, *end;
			int t = 0;
			for (unsigned long v = strtoul(p, &end, 10); end != p; v = strtoul(p, &end, 10), t++) {
				if (t < MIGRATE_TYPES)
					blocks[z][t] = v;
				p = end;
			}
			CHECK(t == MIGRATE_TYPES);
		}
	}
	CHECK(pb_order == c->pageblock_order && per_block == 1UL << c->pageblock_order);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = mm_zone(mm, z);
		if (!zone) {
			CHECK(!seen_blocks[z]);
			continue;
		}
		for (int t = 0; t < MIGRATE_TYPES; t++)
			CHECK_MSG(seen_free[z][t], "%s: zone %s type %s missing", what, zone_names[z], type_names[t]);
		for (unsigned int o = 0; o <= c->max_order; o++)
			CHECK_MSG(freecnt[z][o] == zone_nr_free(zone, o), "%s: zone %s order %u: types sum to %lu, nr_free %lu",
				  what, zone_names[z], o, freecnt[z][o], zone_nr_free(zone, o));
		unsigned long sum = 0;
		for (int t = 0; t < MIGRATE_TYPES; t++)
			sum += blocks[z][t];
		CHECK_MSG(seen_blocks[z] && sum == cfg_pageblocks(c, z), "%s: zone %s: block counts sum to %lu, the zone "
			  "has %lu pageblocks", what, zone_names[z], sum, cfg_pageblocks(c, z));
	}
	free(text);
}

static void check_all(struct mm *mm, const char *what, unsigned long blocks[MAX_NR_ZONES][MIGRATE_TYPES])
{
	check_buddyinfo(mm, what);
	check_zoneinfo(mm, what);
	check_pagetypeinfo(mm, what, blocks);
}

int main(void)
{
	unsigned long blocks[MAX_NR_ZONES][MIGRATE_TYPES];
	struct mm_config c;

	/*
	 * The default machine at creation: every pageblock movable but those
	 * whose first pfn is not memory, which start unmovable (mm.c,
	 * pageblock_set_boot_types()).
	 */
	mm_config_default(&c);
	struct mm *mm = test_create(&c);
	check_all(mm, "default, created", blocks);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		CHECK_MSG(blocks[z][MIGRATE_MOVABLE] == cfg_pageblocks(&c, z) - cfg_boot_unmovable(&c, z) &&
			  blocks[z][MIGRATE_UNMOVABLE] == cfg_boot_unmovable(&c, z),
			  "zone %s at creation: %lu movable and %lu unmovable pageblocks, expected %lu and %lu",
			  zone_names[z], blocks[z][MIGRATE_MOVABLE], blocks[z][MIGRATE_UNMOVABLE],
			  cfg_pageblocks(&c, z) - cfg_boot_unmovable(&c, z), cfg_boot_unmovable(&c, z));
	/*
	 * By hand: DMA [1, 4096) touches pageblocks 0..7, and pfn 0 is not
	 * memory, so pageblock 0 is unmovable (x86's "DMA: 1 Unmovable" in
	 * /proc/pagetypeinfo); Normal [12288, 20000) touches 24..39.
	 */
	CHECK(blocks[ZONE_DMA][MIGRATE_MOVABLE] == 7 && blocks[ZONE_DMA][MIGRATE_UNMOVABLE] == 1);
	CHECK(blocks[ZONE_NORMAL][MIGRATE_MOVABLE] == 16 && blocks[ZONE_NORMAL][MIGRATE_UNMOVABLE] == 0);

	/* Unmovable allocations steal pageblocks; an isolated and a highatomic one show up too. */
	struct page *keep[3000];
	for (int i = 0; i < 3000; i++)
		keep[i] = alloc_pages(mm, GFP_KERNEL, i % 4);
	CHECK(keep[2999] != NULL);
	CHECK(mm_isolate_pageblock(mm, 21504) == 0);                        /* Movable zone */
	struct page *ha = alloc_pages(mm, GFP_KERNEL | __GFP_DMA32, 2);
	REQUIRE(ha && page_zonenum(ha) == ZONE_DMA32);   /* DMA32's pageblocks are all inside it */
	reserve_highatomic_pageblock(page_zone(mm, ha), ha, 2);
	check_all(mm, "default, in use", blocks);
	CHECK(blocks[ZONE_NORMAL][MIGRATE_UNMOVABLE] > 0);
	CHECK(blocks[ZONE_MOVABLE][MIGRATE_ISOLATE] == 1);
	CHECK(blocks[page_zonenum(ha)][MIGRATE_HIGHATOMIC] == 1);
	CHECK(mm_unisolate_pageblock(mm, 21504) == 0);
	for (int i = 0; i < 3000; i++)
		__free_pages(mm, keep[i], i % 4);
	__free_pages(mm, ha, 2);
	drain_all_pages(mm, NULL);
	check_all(mm, "default, freed", blocks);
	CHECK(blocks[ZONE_MOVABLE][MIGRATE_ISOLATE] == 0);
	CHECK_MM(mm, 3);
	mm_destroy(mm);

	/* The tiny machine (max_order 7: 8 columns). */
	mm_config_tiny(&c);
	mm = test_create(&c);
	check_all(mm, "tiny", blocks);
	mm_destroy(mm);

	/*
	 * Holes at pageblock starts: Normal [0, 4096), pageblocks of 512;
	 * [1024, 1030) opens pageblock 2 with a hole, [1536, 2048) is all of
	 * pageblock 3.  Pageblocks with a valid pfn: 0, 1, 2, 4, 5, 6, 7 = 7,
	 * and pageblock 2, whose first pfn is the hole's, starts unmovable.
	 * DMA32 missing; Movable [4096, 4700) unaligned at its end, DMA
	 * [4700, ...) would be out of order - so DMA is missing too.
	 */
	mm_config_default(&c);
	memset(c.zones, 0, sizeof(c.zones));
	c.zones[ZONE_NORMAL] = (struct mm_span){ 0, 4096 };
	c.zones[ZONE_MOVABLE] = (struct mm_span){ 4096, 4700 };
	c.nr_holes = 2;
	c.holes[0] = (struct mm_span){ 1024, 1030 };
	c.holes[1] = (struct mm_span){ 1536, 2048 };
	mm = test_create(&c);
	check_all(mm, "holes at pageblock starts", blocks);
	CHECK(cfg_pageblocks(&c, ZONE_NORMAL) == 7 && cfg_boot_unmovable(&c, ZONE_NORMAL) == 1);
	CHECK(blocks[ZONE_NORMAL][MIGRATE_MOVABLE] == 6 && blocks[ZONE_NORMAL][MIGRATE_UNMOVABLE] == 1);
	CHECK(get_pfnblock_migratetype(mm, pfn_to_page(mm, 1030), 1030) == MIGRATE_UNMOVABLE);
	CHECK(!list_empty(&mm_zone(mm, ZONE_NORMAL)->free_area[1].free_list[MIGRATE_UNMOVABLE]));   /* pfn 1030 */
	CHECK(blocks[ZONE_MOVABLE][MIGRATE_MOVABLE] == 2);
	mm_destroy(mm);

	/* A far first pfn, unaligned zone starts, a zone that is all hole. */
	mm_config_default(&c);
	unsigned long b = (1UL << 20) + 3;
	c.max_order = 6;
	c.pageblock_order = 4;
	c.zones[ZONE_DMA] = (struct mm_span){ b, b + 100 };
	c.zones[ZONE_DMA32] = (struct mm_span){ b + 100, b + 150 };
	c.zones[ZONE_NORMAL] = (struct mm_span){ b + 150, b + 777 };
	c.zones[ZONE_MOVABLE] = (struct mm_span){ 0, 0 };
	c.nr_holes = 2;
	c.holes[0] = (struct mm_span){ b + 100, b + 150 };
	c.holes[1] = (struct mm_span){ b + 160, b + 161 };
	mm = test_create(&c);
	CHECK(mm_zone(mm, ZONE_DMA32) == NULL && mm_zone(mm, ZONE_MOVABLE) == NULL);
	check_all(mm, "far, with an all-hole zone", blocks);
	mm_destroy(mm);
	TEST_DONE();
}

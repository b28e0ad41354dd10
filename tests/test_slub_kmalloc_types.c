/* SPDX-License-Identifier: MIT */
/*
 * test_slub_kmalloc_types.c - the kmalloc cache types of Linux 6.6
 * (kmalloc_type(), create_kmalloc_caches()): kmalloc(GFP_DMA) from
 * dma-kmalloc-N, whose slabs are ZONE_DMA pages; kmalloc(__GFP_RECLAIMABLE)
 * from kmalloc-rcl-N, whose slabs sit in MIGRATE_RECLAIMABLE pageblocks;
 * __GFP_DMA before __GFP_RECLAIMABLE; on a config without a DMA zone no
 * dma-kmalloc-N caches and __GFP_DMA selects no type (the model's
 * CONFIG_ZONE_DMA=n for slab); kfree / ksize / krealloc / kfree_bulk on
 * objects of every type; the walks over all caches (kmem_cache_next,
 * slabinfo, shrink, mm_reset) see the new caches.  Checker level 3 after
 * every step.
 *
 * Only API the allocator had before the types (no kmalloc_slab): the same
 * file builds against the single-type allocator, where it fails.
 */
#include <stdint.h>
#include <string.h>

#include "mm/mm.h"
#include "mm/slab.h"
#include "slab/slab.h"
#include "test.h"
#include "slub_test.h"

static const unsigned int classes[] = { 8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192 };
#define NR_CLASSES (sizeof(classes) / sizeof(classes[0]))

/* "<prefix><size>" with the kernel's k suffix from 1024 on (kmalloc_info[]). */
static const char *cache_name(char *buf, size_t len, const char *prefix, unsigned int size)
{
	if (size < 1024)
		snprintf(buf, len, "%s%u", prefix, size);
	else
		snprintf(buf, len, "%s%uk", prefix, size / 1024);
	return buf;
}

/* The cache an object lives in (NULL: not a slab object). */
static struct kmem_cache *cache_of(struct mm *mm, const void *p)
{
	struct page *head = slub_virt_to_head(mm, p);
	return head && PageSlab(head) ? head->slab_cache : NULL;
}

static const char *cache_name_of(struct mm *mm, const void *p)
{
	struct kmem_cache *s = cache_of(mm, p);
	return s ? kmem_cache_name(s) : "(none)";
}

static int zone_of(struct mm *mm, const void *p)
{
	struct page *page = virt_to_page(mm, p);
	return page ? (int)page_zonenum(page) : -1;
}

static int pageblock_mt_of(struct mm *mm, const void *p)
{
	struct page *page = virt_to_page(mm, p);
	REQUIRE(page);
	return get_pfnblock_migratetype(mm, page, page_to_pfn(mm, page));
}

static struct kmem_cache *find_cache(struct mm *mm, const char *name)
{
	for (struct kmem_cache *s = kmem_cache_next(mm, NULL); s; s = kmem_cache_next(mm, s))
		if (!strcmp(kmem_cache_name(s), name))
			return s;
	return NULL;
}

/* slabinfo's <num_objs> of the cache named @name (objects in its slabs); -1 if it has no line. */
static long slabinfo_objs(struct mm *mm, const char *name)
{
	char *buf = test_dump(mm, mm_dump_slabinfo), *line = buf;
	long objs = -1;

	while (line && *line) {
		char n[64];
		long active, num;
		if (sscanf(line, "%63s %ld %ld", n, &active, &num) == 3 && !strcmp(n, name)) {
			objs = num;
			break;
		}
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	free(buf);
	return objs;
}

/* (a) kmalloc(GFP_DMA) of every class: dma-kmalloc-N, ZONE_DMA slabs; DMA wins over RECLAIMABLE. */
static void test_dma_type(void)
{
	struct mm *mm = new_mm(NULL);
	long dma_free = zone_free_pages(mm_zone(mm, ZONE_DMA));
	void *objs[NR_CLASSES];
	char name[32];

	REQUIRE(mm_zone(mm, ZONE_DMA));            /* the default config has a DMA zone */
	void *p = kmalloc(mm, 64, GFP_KERNEL | __GFP_DMA);
	REQUIRE(p);
	CHECK_MSG(zone_of(mm, p) == ZONE_DMA, "kmalloc(64, GFP_DMA) is in zone %d", zone_of(mm, p));
	CHECK_MSG(!strcmp(cache_name_of(mm, p), "dma-kmalloc-64"), "kmalloc(64, GFP_DMA) from %s", cache_name_of(mm, p));
	struct kmem_cache_info info;
	CHECK(cache_of(mm, p) && !kmem_cache_get_info(cache_of(mm, p), &info) && (info.flags & SLAB_CACHE_DMA) &&
	      !(info.flags & SLAB_RECLAIM_ACCOUNT));
	/* The walks over all caches see it, with its object. */
	CHECK(find_cache(mm, "dma-kmalloc-64") == cache_of(mm, p) && cache_of(mm, p));
	CHECK_MSG(slabinfo_objs(mm, "dma-kmalloc-64") > 0, "slabinfo: %ld", slabinfo_objs(mm, "dma-kmalloc-64"));

	/* A normal kmalloc is not served from there, nor from ZONE_DMA. */
	void *q = kmalloc(mm, 64, GFP_KERNEL);
	REQUIRE(q);
	CHECK(!strcmp(cache_name_of(mm, q), "kmalloc-64") && zone_of(mm, q) == ZONE_NORMAL);
	CHECK_MM(mm, 3);

	/* Every class; __GFP_DMA with __GFP_RECLAIMABLE is DMA (kmalloc_type()'s order). */
	for (size_t i = 0; i < NR_CLASSES; i++) {
		gfp_t gfp = GFP_KERNEL | __GFP_DMA | (i & 1 ? __GFP_RECLAIMABLE : 0);
		objs[i] = kmalloc(mm, classes[i] - (i & 2 ? 3 : 0), gfp);
		REQUIRE(objs[i]);
		memset(objs[i], 0x5a, classes[i] - (i & 2 ? 3 : 0));
		cache_name(name, sizeof(name), "dma-kmalloc-", classes[i]);
		CHECK_MSG(!strcmp(cache_name_of(mm, objs[i]), name), "kmalloc(%u, %#x) from %s, want %s",
			  classes[i], gfp, cache_name_of(mm, objs[i]), name);
		CHECK_MSG(zone_of(mm, objs[i]) == ZONE_DMA, "kmalloc(%u, %#x) in zone %d", classes[i], gfp,
			  zone_of(mm, objs[i]));
	}
	CHECK(zone_free_pages(mm_zone(mm, ZONE_DMA)) < dma_free);   /* the DMA slabs are DMA pages */
	CHECK_MM(mm, 3);
	for (size_t i = 0; i < NR_CLASSES; i++)
		kfree(mm, objs[i]);
	kfree(mm, p);
	kfree(mm, q);
	kmem_cache_shrink(find_cache(mm, "dma-kmalloc-64"));
	CHECK(slabinfo_objs(mm, "dma-kmalloc-64") == 0);
	CHECK_MM(mm, 3);

	/* mm_reset takes the DMA slabs back with the rest. */
	p = kmalloc(mm, 512, GFP_DMA);
	REQUIRE(p);
	CHECK(zone_of(mm, p) == ZONE_DMA);
	REQUIRE(mm_reset(mm) == 0);
	CHECK_MM(mm, 3);
	CHECK_MSG(zone_free_pages(mm_zone(mm, ZONE_DMA)) == dma_free, "DMA free pages %ld after reset, %ld before",
		  zone_free_pages(mm_zone(mm, ZONE_DMA)), dma_free);
	CHECK(slabinfo_objs(mm, "dma-kmalloc-512") == 0);
	mm_destroy(mm);
}

/* (b) kmalloc(__GFP_RECLAIMABLE): kmalloc-rcl-N, slabs in reclaimable pageblocks. */
static void test_reclaim_type(void)
{
	struct mm *mm = new_mm(NULL);
	char name[32];

	void *n = kmalloc(mm, 64, GFP_KERNEL);
	void *p = kmalloc(mm, 64, GFP_KERNEL | __GFP_RECLAIMABLE);
	REQUIRE(n && p);
	CHECK_MSG(!strcmp(cache_name_of(mm, p), "kmalloc-rcl-64"), "kmalloc(64, __GFP_RECLAIMABLE) from %s",
		  cache_name_of(mm, p));
	CHECK_MSG(pageblock_mt_of(mm, p) == MIGRATE_RECLAIMABLE, "its slab's pageblock is migratetype %d",
		  pageblock_mt_of(mm, p));
	CHECK_MSG(pageblock_mt_of(mm, n) == MIGRATE_UNMOVABLE, "kmalloc(64)'s slab's pageblock is migratetype %d",
		  pageblock_mt_of(mm, n));
	CHECK(cache_of(mm, p) != cache_of(mm, n));
	CHECK(zone_of(mm, p) == ZONE_NORMAL);
	struct kmem_cache_info info;
	CHECK(cache_of(mm, p) && !kmem_cache_get_info(cache_of(mm, p), &info) && (info.flags & SLAB_RECLAIM_ACCOUNT) &&
	      !(info.flags & SLAB_CACHE_DMA));
	CHECK(find_cache(mm, "kmalloc-rcl-64") == cache_of(mm, p) && cache_of(mm, p));
	CHECK(slabinfo_objs(mm, "kmalloc-rcl-64") > 0);

	/* Every class. */
	for (size_t i = 0; i < NR_CLASSES; i++) {
		void *o = kmalloc(mm, classes[i], GFP_NOWAIT | __GFP_RECLAIMABLE);
		REQUIRE(o);
		cache_name(name, sizeof(name), "kmalloc-rcl-", classes[i]);
		CHECK_MSG(!strcmp(cache_name_of(mm, o), name), "kmalloc(%u, rcl) from %s", classes[i], cache_name_of(mm, o));
		CHECK_MSG(pageblock_mt_of(mm, o) == MIGRATE_RECLAIMABLE, "kmalloc(%u, rcl): pageblock migratetype %d",
			  classes[i], pageblock_mt_of(mm, o));
		kfree(mm, o);
	}
	kfree(mm, p);
	kfree(mm, n);
	kmem_cache_shrink(find_cache(mm, "kmalloc-rcl-64"));
	CHECK(slabinfo_objs(mm, "kmalloc-rcl-64") == 0);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/*
 * (c) No DMA zone: no dma-kmalloc-N caches, and __GFP_DMA selects no type
 * (6.6 without CONFIG_ZONE_DMA): small kmalloc(GFP_DMA) is a kmalloc-N
 * object, with __GFP_RECLAIMABLE a kmalloc-rcl-N one.  The page allocator
 * has no such fallback (gfp_zone(__GFP_DMA) is ZONE_DMA, empty or not), so
 * a large kmalloc(GFP_DMA) fails there.
 */
static void test_no_dma_zone(void)
{
	struct mm_config c;

	mm_config_default(&c);
	c.zones[ZONE_DMA] = (struct mm_span){ 0, 0 };
	c.quiet = true;
	struct mm *mm = test_create(&c);
	REQUIRE(!mm_zone(mm, ZONE_DMA));

	for (struct kmem_cache *s = kmem_cache_next(mm, NULL); s; s = kmem_cache_next(mm, s))
		CHECK_MSG(strncmp(kmem_cache_name(s), "dma-", 4), "a DMA cache without a DMA zone: %s",
			  kmem_cache_name(s));
	void *p = kmalloc(mm, 64, GFP_KERNEL | __GFP_DMA);
	REQUIRE(p);
	CHECK_MSG(!strcmp(cache_name_of(mm, p), "kmalloc-64"), "kmalloc(64, GFP_DMA) from %s", cache_name_of(mm, p));
	CHECK(zone_of(mm, p) == ZONE_NORMAL);
	void *r = kmalloc(mm, 64, GFP_KERNEL | __GFP_DMA | __GFP_RECLAIMABLE);
	REQUIRE(r);
	CHECK_MSG(!strcmp(cache_name_of(mm, r), "kmalloc-rcl-64"), "kmalloc(64, GFP_DMA | __GFP_RECLAIMABLE) from %s",
		  cache_name_of(mm, r));
	CHECK(kmalloc(mm, 3 * KMALLOC_MAX_CACHE_SIZE, GFP_KERNEL | __GFP_DMA | __GFP_NOWARN) == NULL);
	CHECK_MM(mm, 3);
	kfree(mm, p);
	kfree(mm, r);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/* (d) kfree, ksize, krealloc and kfree_bulk on objects of the new caches. */
static void test_free_ksize_krealloc(void)
{
	struct mm *mm = new_mm(NULL);
	static const gfp_t types[] = { GFP_KERNEL | __GFP_DMA, GFP_KERNEL | __GFP_RECLAIMABLE };
	static const char *const prefix[] = { "dma-kmalloc-", "kmalloc-rcl-" };
	char name[32];

	for (int t = 0; t < 2; t++) {
		gfp_t gfp = types[t];
		unsigned char *p = kmalloc(mm, 100, gfp);
		unsigned char *n = kmalloc(mm, 100, GFP_KERNEL);
		REQUIRE(p && n);
		CHECK_MSG(!strcmp(cache_name_of(mm, p), cache_name(name, sizeof(name), prefix[t], 128)), "%s",
			  cache_name_of(mm, p));
		CHECK(ksize(mm, p) >= 100 && ksize(mm, p) == ksize(mm, n));   /* the same layout as kmalloc-128 */
		for (int i = 0; i < 100; i++)
			p[i] = (unsigned char)(i + t);

		/* Growing: a new object of the caller's type, the data kept. */
		unsigned char *g = krealloc(mm, p, 1000, gfp);
		REQUIRE(g);
		CHECK(g != p);
		CHECK_MSG(!strcmp(cache_name_of(mm, g), cache_name(name, sizeof(name), prefix[t], 1024)), "%s",
			  cache_name_of(mm, g));
		CHECK(t ? zone_of(mm, g) == ZONE_NORMAL : zone_of(mm, g) == ZONE_DMA);
		bool kept = true;
		for (int i = 0; i < 100; i++)
			kept &= g[i] == (unsigned char)(i + t);
		CHECK(kept);
		CHECK(ksize(mm, g) >= 1000);

		/* Shrinking in place keeps the object (and its cache). */
		unsigned char *s = krealloc(mm, g, 600, gfp);
		CHECK(s == g);
		CHECK(!strcmp(cache_name_of(mm, s), name));

		/* To a class past 4k: dma-kmalloc-8k / kmalloc-rcl-8k. */
		unsigned char *b = krealloc(mm, s, 5000, gfp);
		REQUIRE(b);
		CHECK_MSG(!strcmp(cache_name_of(mm, b), cache_name(name, sizeof(name), prefix[t], 8192)), "%s",
			  cache_name_of(mm, b));
		kept = true;
		for (int i = 0; i < 100; i++)
			kept &= b[i] == (unsigned char)(i + t);
		CHECK(kept);
		CHECK_MM(mm, 3);

		/* An object that still fits stays, whatever the new flags (6.6 __do_krealloc). */
		unsigned char *k = krealloc(mm, b, 8000, GFP_KERNEL);
		CHECK(k == b);
		/* Past the classes: large pages of the new flags' zone, not a slab object. */
		unsigned char *m = krealloc(mm, k, 20000, GFP_KERNEL);
		REQUIRE(m);
		CHECK(!cache_of(mm, m) && zone_of(mm, m) == ZONE_NORMAL && ksize(mm, m) >= 20000);
		kept = true;
		for (int i = 0; i < 100; i++)
			kept &= m[i] == (unsigned char)(i + t);
		CHECK(kept);
		kfree(mm, m);
		kfree(mm, n);

		/* kfree_bulk of objects of every type, with the normal ones between. */
		void *bulk[12];
		for (int i = 0; i < 12; i++)
			bulk[i] = kmalloc(mm, 32 + 40 * (size_t)i, i % 3 ? gfp : GFP_KERNEL);
		for (int i = 0; i < 12; i++)
			REQUIRE(bulk[i]);
		kfree_bulk(mm, 12, bulk);
		CHECK_MM(mm, 3);

		/* Everything went back where it came from: every cache empty once shrunk. */
		for (size_t i = 0; i < NR_CLASSES; i++) {
			struct kmem_cache_info info;
			struct kmem_cache *c = find_cache(mm, cache_name(name, sizeof(name), prefix[t], classes[i]));
			CHECK_MSG(c, "no cache %s", name);
			if (!c)
				continue;
			kmem_cache_shrink(c);
			CHECK(!kmem_cache_get_info(c, &info));
			CHECK_MSG(info.nr_slabs == 0, "%s holds %lu slabs", name, info.nr_slabs);
		}
	}
	CHECK(mm_nr_reports(mm) == 0);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

int main(void)
{
	test_dma_type();
	test_reclaim_type();
	test_no_dma_zone();
	test_free_ksize_krealloc();
	TEST_DONE();
}

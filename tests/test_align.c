/* SPDX-License-Identifier: MIT */
/*
 * test_align.c - physical addresses aligned as the kernel's direct map,
 * and the alignment promises of Linux 6.6 that rest on it.
 *
 * In the kernel a frame's address is PAGE_OFFSET + pfn * PAGE_SIZE, with
 * PAGE_OFFSET aligned far beyond any buddy block, so a block of order k
 * (its pfn a multiple of 2^k) sits at an address aligned to
 * PAGE_SIZE << k.  On that:
 *  - kmalloc of a power-of-two size is naturally aligned: 6.6's
 *    create_boot_cache() gives those classes align = size, with no
 *    PAGE_SIZE cap (kmalloc-8k is 8 KiB aligned), whatever slub_debug
 *    adds; a large kmalloc is a whole block of order get_order(size);
 *  - kmem_cache_create() takes any power-of-two align (calculate_alignment()
 *    only raises it): objects of an 8 KiB or 16 KiB aligned cache are
 *    aligned, red zones included; an align that no slab order can hold
 *    fails with a clear error, as 6.6's kmem_cache_open() fails when
 *    calculate_order() finds no order.
 * On every named config of the fuzz targets: first pfns 1, 3, 5, 7,
 * 4096 and 2^40 + 3, max_order 0 .. 12.
 */
#include <string.h>

#include "common/configs.h"
#include "internal.h"
#include "slab/slab.h"
#include "mm/slab.h"
#include "test.h"

#define NOFAIL (__GFP_NOWARN | __GFP_NORETRY)
#define MAX_OBJS 48

/* A config with this many valid pages has room for every allocation asked here. */
#define ROOMY 1000

static size_t block_bytes(unsigned int order) { return (size_t)MM_PAGE_SIZE << order; }

/*
 * (a) The frame of every pfn that is a multiple of 2^order is aligned to
 * PAGE_SIZE << order, and virt_to_page() finds its page again; blocks the
 * buddy allocator hands out are aligned to their order.  One check per order.
 */
static void check_direct_map(struct mm *mm, const char *cfg, unsigned int max_order)
{
	unsigned long first = mm_first_pfn(mm), end = mm_end_pfn(mm);

	for (unsigned int o = 0; o <= max_order; o++) {
		unsigned long step = 1UL << o, seen = 0, bad = 0, badpfn = 0, lost = 0;
		for (unsigned long pfn = (first + step - 1) & ~(step - 1); pfn < end; pfn += step) {
			struct page *pg = pfn_to_page(mm, pfn);
			if (!pg)
				continue;
			uintptr_t va = (uintptr_t)page_address(mm, pg);
			seen++;
			if (va % block_bytes(o) && !bad++)
				badpfn = pfn;
			lost += virt_to_page(mm, (void *)(va + MM_PAGE_SIZE - 1)) != pg;
		}
		CHECK_MSG(!bad && !lost, "%s: %lu of %lu order-%u pfns misaligned (first %#lx), %lu not found again",
			  cfg, bad, seen, o, badpfn, lost);

		struct page *blk[16];
		unsigned int n = 0, misaligned = 0;
		while (n < 16 && (blk[n] = alloc_pages(mm, GFP_HIGHUSER_MOVABLE | NOFAIL, o)))
			n++;
		for (unsigned int i = 0; i < n; i++)
			misaligned += (uintptr_t)page_address(mm, blk[i]) % block_bytes(o) != 0 ||
				      page_to_pfn(mm, blk[i]) % step != 0;
		if (n)
			CHECK_MSG(!misaligned, "%s: %u of %u order-%u blocks misaligned", cfg, misaligned, n, o);
		for (unsigned int i = 0; i < n; i++)
			__free_pages(mm, blk[i], o);
	}
}

/*
 * (b) Objects of every power-of-two kmalloc class (several slabs' worth of
 * the small ones) aligned to their size; large kmallocs aligned to their
 * block.  One check per size.
 */
static void check_kmalloc(struct mm *mm, const char *cfg, const char *opts, unsigned int max_order)
{
	static void *p[MAX_OBJS];
	bool roomy = mm_nr_valid_pages(mm) >= ROOMY;

	for (size_t size = 8; size <= KMALLOC_MAX_CACHE_SIZE; size <<= 1) {
		if (!kmalloc_slab(mm, size, GFP_KERNEL))
			continue;        /* no such class here (max_order too small) */
		unsigned int n = 0, bad = 0, want = size >= 1024 ? 16 : MAX_OBJS;
		while (n < want && (p[n] = kmalloc(mm, size, GFP_KERNEL | NOFAIL)))
			n++;
		for (unsigned int i = 0; i < n; i++)
			bad += (uintptr_t)p[i] % size != 0;
		if (n || roomy)
			CHECK_MSG((n == want || !roomy) && !bad, "%s%s%s: kmalloc(%zu): %u of %u objects misaligned", cfg,
				  opts ? " " : "", opts ? opts : "", size, bad, n);
		for (unsigned int i = 0; i < n; i++)
			kfree(mm, p[i]);
	}

	static const size_t large[] = { 16384, 32768, 65536, 12000, 100000 };
	for (size_t i = 0; i < sizeof(large) / sizeof(large[0]); i++) {
		unsigned int order = get_order_size(large[i]);
		if (order > max_order)
			continue;
		void *q = kmalloc(mm, large[i], GFP_KERNEL | NOFAIL);
		if (q || roomy)
			CHECK_MSG(q && (uintptr_t)q % block_bytes(order) == 0, "%s: kmalloc(%zu) = %p, not aligned to %zu",
				  cfg, large[i], q, block_bytes(order));
		kfree(mm, q);
	}
}

/* kmem_cache_create() with its error message (the public call prints it only when not quiet). */
static struct kmem_cache *create(struct mm *mm, const char *name, unsigned int size, unsigned int align,
				 slab_flags_t flags, char *err, size_t errlen)
{
	struct slub_state *st = slub_state(mm);
	err[0] = 0;
	mutex_lock(&st->slab_mutex);
	struct kmem_cache *s = __kmem_cache_create(mm, name, size, align, flags, NULL, err, errlen);
	mutex_unlock(&st->slab_mutex);
	return s;
}

/*
 * (c) Caches aligned to 8 KiB and 16 KiB, plain and with slub_debug's red
 * zones (and the rest of FZPU): their objects aligned; an align beyond the
 * largest block refused with an error naming it; the largest block itself
 * taken when nothing widens the stride past it.
 */
static void check_caches(struct mm *mm, const char *cfg, unsigned int max_order)
{
	static const slab_flags_t flagsets[] = {
		0, SLAB_RED_ZONE, SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER,
	};
	static const unsigned int sizes[] = { 64, 5000 };
	static void *p[MAX_OBJS];
	size_t largest = block_bytes(max_order);
	bool roomy = mm_nr_valid_pages(mm) >= ROOMY;
	struct kmem_cache_info info;
	char err[200];

	for (unsigned int align = 8192; align <= 16384; align <<= 1)
		for (size_t f = 0; f < sizeof(flagsets) / sizeof(flagsets[0]); f++)
			for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
				unsigned int size = sizes[z];
				struct kmem_cache *s = create(mm, "align", size, align, flagsets[f], err, sizeof(err));
				if (align > largest) {
					CHECK_MSG(!s && strstr(err, "align"), "%s: align %u beyond the largest block (%zu): %s",
						  cfg, align, largest, s ? "created" : err);
					if (s)
						kmem_cache_destroy(s);
					continue;
				}
				/* Room for a stride of twice the align (the left red zone) and more. */
				if (4 * (size_t)align <= largest)
					CHECK_MSG(s, "%s: kmem_cache_create(%u, align %u, flags %#x): %s", cfg, size, align,
						  flagsets[f], err);
				if (!s)
					continue;
				REQUIRE(!kmem_cache_get_info(s, &info));
				unsigned int n = 0, bad = 0, want = 2 * info.objects_per_slab + 1;
				if (want > MAX_OBJS)
					want = MAX_OBJS;
				while (n < want && (p[n] = kmem_cache_alloc(s, GFP_KERNEL | NOFAIL)))
					n++;
				for (unsigned int i = 0; i < n; i++)
					bad += (uintptr_t)p[i] % align != 0;
				CHECK_MSG(info.align == align && info.size % align == 0 && info.red_left_pad % align == 0 &&
					  (n || !roomy) && !bad,
					  "%s: cache of %u bytes, align %u, flags %#x: align %u stride %u red_left_pad %u, "
					  "%u of %u objects misaligned", cfg, size, align, flagsets[f], info.align, info.size,
					  info.red_left_pad, bad, n);
				for (unsigned int i = 0; i < n; i++)
					kmem_cache_free(s, p[i]);
				kmem_cache_destroy(s);
			}

	/* The largest block as the align: one object per slab of max_order without a red zone ... */
	if (largest <= (1u << 31)) {
		struct kmem_cache *s = create(mm, "align-max", 64, (unsigned int)largest, 0, err, sizeof(err));
		CHECK_MSG(s, "%s: align %zu (the largest block): %s", cfg, largest, err);
		if (s) {
			void *q = kmem_cache_alloc(s, GFP_KERNEL | NOFAIL);
			CHECK_MSG(!q || (uintptr_t)q % largest == 0, "%s: align %zu: object %p", cfg, largest, q);
			if (q)
				kmem_cache_free(s, q);
			kmem_cache_destroy(s);
		}
		/* ... but not with one: the left red zone doubles the stride. */
		s = create(mm, "align-max-rz", 64, (unsigned int)largest, SLAB_RED_ZONE, err, sizeof(err));
		CHECK_MSG(!s && strstr(err, "does not fit"), "%s: align %zu with a red zone: %s", cfg, largest,
			  s ? "created" : err);
		if (s)
			kmem_cache_destroy(s);
	}
	/* Beyond the largest block, up to the largest unsigned power of two: refused, naming the align. */
	for (size_t a = largest << 1; a <= (1u << 31); a <<= 1) {
		struct kmem_cache *s = create(mm, "align-over", 64, (unsigned int)a, SLAB_RED_ZONE, err, sizeof(err));
		CHECK_MSG(!s && strstr(err, "align"), "%s: align %zu: %s", cfg, a, s ? "created" : err);
		if (s)
			kmem_cache_destroy(s);
	}
}

int main(void)
{
	static const char *const options[] = { NULL, "slub_debug=FZPU" };
	char err[256];

	for (int k = 0; k < MF_NR_CONFIGS; k++) {
		struct mm_config c;
		mf_config_named(&c, (enum mf_config_kind)k, 2);
		const char *cfg = mf_config_names[k];

		struct mm *mm = test_create(&c);
		check_direct_map(mm, cfg, c.max_order);
		/* mm_reset() keeps the mapping: the frames stay where they were. */
		void *base = mm_arena_base(mm);
		REQUIRE(mm_reset(mm) == 0);
		CHECK(mm_arena_base(mm) == base &&
		      mm_arena_size(mm) == (mm_end_pfn(mm) - mm_first_pfn(mm)) * MM_PAGE_SIZE);
		check_caches(mm, cfg, c.max_order);
		CHECK_MM(mm, 3);
		mm_destroy(mm);

		for (size_t o = 0; o < sizeof(options) / sizeof(options[0]); o++) {
			mm = test_create(&c);
			/*
			 * A cache the new layout does not fit keeps its old one and the
			 * call says so (order0: kmalloc-2k and -4k with red zones).
			 */
			if (options[o])
				CHECK_MSG(!mm_slub_configure(mm, options[o], err, sizeof(err)) ||
					  strstr(err, "hold slabs and keep their layout"), "%s: %s: %s", cfg, options[o], err);
			check_kmalloc(mm, cfg, options[o], c.max_order);
			CHECK_MM(mm, 3);
			mm_destroy(mm);
		}
	}
	TEST_DONE();
}

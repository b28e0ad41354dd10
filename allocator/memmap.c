/* SPDX-License-Identifier: MIT */
/*
 * memmap.c - the physical memory of one instance: page frames and the
 * struct page array (a vmemmap with holes), pfn <-> page <-> address.
 *
 * Models SPARSEMEM_VMEMMAP with CONFIG_HOLES_IN_ZONE-style holes: the memmap
 * is virtually contiguous, but the struct pages of pfns that do not exist
 * are not there.  Whole OS pages of them are PROT_NONE and, under ASan,
 * every one of them is poisoned, so code that touches the struct page of a
 * hole or of a pfn past either end of memory is caught at the access, as
 * the kernel bugs "buddy pfn outside the memmap" were.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void set_valid(struct mm *mm, unsigned long pfn)
{
	unsigned long i = pfn - mm->first_pfn;
	mm->valid_bitmap[i / (8 * sizeof(long))] |= 1UL << (i % (8 * sizeof(long)));
}

static bool pfn_in_hole(const struct mm_config *c, unsigned long pfn)
{
	for (unsigned int i = 0; i < c->nr_holes; i++)
		if (pfn >= c->holes[i].start_pfn && pfn < c->holes[i].end_pfn)
			return true;
	return false;
}

/* Calls @fn on every maximal run of valid pfns in [start, end). */
static void for_each_valid_run(const struct mm *mm, unsigned long start, unsigned long end,
			       void (*fn)(const struct mm *, unsigned long, unsigned long, void *),
			       void *arg)
{
	unsigned long pfn = start;
	while (pfn < end) {
		while (pfn < end && !__pfn_valid(mm, pfn))
			pfn++;
		unsigned long run = pfn;
		while (pfn < end && __pfn_valid(mm, pfn))
			pfn++;
		if (pfn > run)
			fn(mm, run, pfn, arg);
	}
}

static uintptr_t align_down(uintptr_t x, size_t a) { return x & ~(uintptr_t)(a - 1); }
static uintptr_t align_up(uintptr_t x, size_t a) { return (x + a - 1) & ~(uintptr_t)(a - 1); }

static void open_run(const struct mm *mm, unsigned long s, unsigned long e, void *arg)
{
	int *err = arg;
	size_t osp = prim_os_page_size();
	/* page frames: exactly the run (4 KiB pages, OS pages of the same size) */
	if (prim_protect(__page_address(mm, s), (e - s) << MM_PAGE_SHIFT, 1))
		*err = errno;
	/*
	 * memmap: every OS page that holds one of the run's struct pages.
	 * memmap_init_pages() writes each of them at once, as the kernel's
	 * memmap_init_range() does with a memmap memblock gave it already
	 * backed; faulting it in here in one call (MADV_POPULATE_WRITE) rather
	 * than one fault per OS page took a fifth of the config target's
	 * time, which creates an instance per input.  Where the OS cannot,
	 * the pages fault in as before.
	 */
	uintptr_t a = align_down((uintptr_t)__pfn_to_page(mm, s), osp);
	uintptr_t b = align_up((uintptr_t)__pfn_to_page(mm, e), osp);
	if (prim_protect((void *)a, b - a, 1))
		*err = errno;
	else
		(void)prim_populate((void *)a, b - a);
	kasan_unpoison(__pfn_to_page(mm, s), (e - s) * sizeof(struct page));
}

int memmap_create(struct mm *mm, char *err, size_t errlen)
{
	const struct mm_config *c = &mm->cfg;
	unsigned long span = mm->end_pfn - mm->first_pfn;
	size_t osp = prim_os_page_size();

	mm->valid_bitmap = calloc((span + 8 * sizeof(long) - 1) / (8 * sizeof(long)), sizeof(long));
	if (!mm->valid_bitmap)
		goto nomem;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		for (unsigned long pfn = c->zones[z].start_pfn; pfn < c->zones[z].end_pfn; pfn++)
			if (!pfn_in_hole(c, pfn)) {
				set_valid(mm, pfn);
				mm->nr_valid++;
			}

	/*
	 * The kernel's direct map (Linux 6.6, x86-64): a frame's address is
	 * PAGE_OFFSET + pfn * PAGE_SIZE with PAGE_OFFSET aligned far beyond
	 * any buddy block, so a block of order k - its pfn a multiple of
	 * 2^k - is aligned to PAGE_SIZE << k.  kmalloc's natural alignment of
	 * power-of-two sizes and caches aligned beyond a page rest on that.
	 * mmap promises an OS page only: the arena is placed so that its
	 * "PAGE_OFFSET", arena - first_pfn * PAGE_SIZE, is aligned to the
	 * largest block.  Exactly arena_len bytes stay mapped.
	 */
	size_t block = (size_t)MM_PAGE_SIZE << mm->max_order;
	mm->arena_len = span << MM_PAGE_SHIFT;
	mm->arena = prim_reserve_aligned(mm->arena_len, block, (size_t)(mm->first_pfn << MM_PAGE_SHIFT) & (block - 1));
	if (!mm->arena)
		goto nomem;

	/* Guards: a buddy pfn is at most 2^max_order away from a valid pfn. */
	mm->memmap_guard = align_up((1UL << mm->max_order) * sizeof(struct page), osp) / sizeof(struct page);
	mm->memmap_map_len = align_up((span + 2 * mm->memmap_guard) * sizeof(struct page), osp);
	mm->memmap_map = prim_reserve(mm->memmap_map_len);
	if (!mm->memmap_map)
		goto nomem;
	mm->memmap = (struct page *)mm->memmap_map + mm->memmap_guard;
	kasan_poison(mm->memmap_map, mm->memmap_map_len);
	kasan_poison(mm->arena, mm->arena_len);

	int e = 0;
	for_each_valid_run(mm, mm->first_pfn, mm->end_pfn, open_run, &e);
	if (e) {
		snprintf(err, errlen, "cannot map memory: %s", strerror(e));
		return -1;
	}
	return 0;
nomem:
	snprintf(err, errlen, "cannot reserve %lu pages of memory: %s", span, strerror(errno ? errno : ENOMEM));
	return -1;
}

void memmap_destroy(struct mm *mm)
{
	/* Unpoison before unmapping: the shadow outlives the mapping. */
	if (mm->memmap_map) {
		kasan_unpoison(mm->memmap_map, mm->memmap_map_len);
		prim_unmap(mm->memmap_map, mm->memmap_map_len);
	}
	if (mm->arena) {
		kasan_unpoison(mm->arena, mm->arena_len);
		prim_unmap(mm->arena, mm->arena_len);
	}
	free(mm->valid_bitmap);
	mm->memmap_map = NULL;
	mm->arena = NULL;
	mm->valid_bitmap = NULL;
}

/*
 * memmap_init_range(): every struct page starts reserved with a reference,
 * in its zone; memblock_free_all() then releases them to the buddy.
 */
void memmap_init_pages(struct mm *mm)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &mm->zones[z];
		for (unsigned long pfn = zone->zone_start_pfn; pfn < zone_end_pfn(zone); pfn++) {
			if (!__pfn_valid(mm, pfn))
				continue;
			struct page *p = __pfn_to_page(mm, pfn);
			memset(p, 0, sizeof(*p));
			p->flags = ((unsigned long)z << ZONES_PGSHIFT) | (1UL << PG_reserved);
			set_page_count(p, 1);
		}
	}
}

/* ---- the public pfn / page / address conversions ---- */

bool pfn_valid(const struct mm *mm, unsigned long pfn)
{
	return __pfn_valid(mm, pfn);
}

struct page *pfn_to_page(const struct mm *mm, unsigned long pfn)
{
	return __pfn_valid(mm, pfn) ? __pfn_to_page(mm, pfn) : NULL;
}

unsigned long page_to_pfn(const struct mm *mm, const struct page *page)
{
	return __page_to_pfn(mm, page);
}

void *page_address(const struct mm *mm, const struct page *page)
{
	return __page_address(mm, __page_to_pfn(mm, page));
}

struct page *virt_to_page(const struct mm *mm, const void *addr)
{
	uintptr_t a = (uintptr_t)addr, base = (uintptr_t)mm->arena;
	if (a < base || a >= base + mm->arena_len)
		return NULL;
	unsigned long pfn = mm->first_pfn + ((a - base) >> MM_PAGE_SHIFT);
	return pfn_to_page(mm, pfn);
}

void *mm_arena_base(const struct mm *mm) { return mm->arena; }
size_t mm_arena_size(const struct mm *mm) { return mm->arena_len; }
unsigned long mm_first_pfn(const struct mm *mm) { return mm->first_pfn; }
unsigned long mm_end_pfn(const struct mm *mm) { return mm->end_pfn; }
unsigned long mm_nr_valid_pages(const struct mm *mm) { return mm->nr_valid; }

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
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define BPL (8 * sizeof(long))

/* Bits [from, to) of bitmap @b set (@on) or cleared: the valid pfns, the mappings' page states. */
static __mm_plumbing void bits_assign(unsigned long *b, size_t from, size_t to, bool on)
{
	for (size_t i = from; i < to; i++) {
		if (on)
			b[i / BPL] |= 1UL << (i % BPL);
		else
			b[i / BPL] &= ~(1UL << (i % BPL));
	}
}

/*
 * The first pfn in [pfn, end) whose valid bit is @valid, or end: a word of
 * the bitmap at a time, as find_next_bit() does.
 */
static unsigned long next_with(const struct mm *mm, unsigned long pfn, unsigned long end, bool valid)
{
	const unsigned int bpl = 8 * sizeof(long);
	while (pfn < end) {
		unsigned long i = pfn - mm->first_pfn;
		unsigned long w = mm->valid_bitmap[i / bpl];
		if (!valid)
			w = ~w;
		w &= ~0UL << (i % bpl);
		if (w) {
			unsigned long at = pfn - i % bpl + (unsigned long)__builtin_ctzl(w);
			return at < end ? at : end;
		}
		pfn += bpl - i % bpl;
	}
	return end;
}

unsigned long memmap_next_valid(const struct mm *mm, unsigned long pfn, unsigned long end)
{
	return next_with(mm, pfn, end, true);
}

unsigned long memmap_next_hole(const struct mm *mm, unsigned long pfn, unsigned long end)
{
	return next_with(mm, pfn, end, false);
}

/* Calls @fn on every maximal run of valid pfns in [start, end). */
static void for_each_valid_run(const struct mm *mm, unsigned long start, unsigned long end,
			       void (*fn)(const struct mm *, unsigned long, unsigned long, void *),
			       void *arg)
{
	for (unsigned long pfn = memmap_next_valid(mm, start, end); pfn < end;) {
		unsigned long run_end = memmap_next_hole(mm, pfn, end);
		fn(mm, pfn, run_end, arg);
		pfn = memmap_next_valid(mm, run_end, end);
	}
}

static uintptr_t align_down(uintptr_t x, size_t a) { return x & ~(uintptr_t)(a - 1); }
static uintptr_t align_up(uintptr_t x, size_t a) { return (x + a - 1) & ~(uintptr_t)(a - 1); }

/* ---- kept mappings ---- */

/*
 * Mappings kept from destroyed instances - not a kernel behaviour, the
 * model's own cost.  A fresh instance maps its frames and its memmap,
 * makes the valid runs readable and writable and writes every valid
 * struct page; destroying it unmaps both.  On a guest with shadow page
 * tables (the PVM guests this project's machines are) that was 3.5 ms of
 * mmap, mprotect, munmap (TLB-shootdown IPIs) and faults for the default
 * machine, most of the config target's time, which creates an instance
 * per input.  So memmap_destroy() keeps up to MEMMAP_NR_KEPT mappings with
 * a bitmap of their readable and writable OS pages, and memmap_create()
 * takes the smallest of the same kind that can hold what it needs and
 * changes the protection of only the OS pages whose access must change.
 * The access of every page is what a fresh mapping would have: readable
 * exactly over the valid runs.  Frames are given back to the OS when kept
 * (MADV_DONTNEED: only touched ones cost anything), so they read zero as
 * in a fresh mapping; memmap pages that stay readable keep their backing,
 * and memmap_create() overwrites what they held.  Under ASan a kept
 * mapping is poisoned whole, so a use after mm_destroy() is still
 * reported; without it such a use faults only where the page is
 * PROT_NONE.
 */
#define MEMMAP_NR_KEPT    8
#define MEMMAP_KEEP_MAX   (256UL << 20)   /* larger mappings go back to the OS */
#define MEMMAP_KEEP_TOTAL (512UL << 20)   /* all kept mappings together */

struct mapping {
	char *base;             /* NULL: none (a free slot) */
	size_t len;             /* a multiple of the OS page size */
	unsigned long *rw;      /* one bit per OS page: readable and writable; NULL: none is */
	unsigned long age;
	bool memmap;            /* a memmap's, not frames': reused only as the same kind, whose
				   pages have the same pattern of access */
};

static struct mapping kept[MEMMAP_NR_KEPT];
static unsigned long kept_clock;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static __mm_plumbing unsigned long *bits_alloc(size_t npages)
{
	return calloc((npages + BPL - 1) / BPL, sizeof(long));
}

static __mm_plumbing bool bit(const unsigned long *b, size_t i)
{
	return b && (b[i / BPL] >> (i % BPL)) & 1;
}

/* Where in @m a [q, q + len) with q % align == phase % align fits; NULL if nowhere. */
static __mm_plumbing char *place(const struct mapping *m, size_t len, size_t align, size_t phase)
{
	uintptr_t b = (uintptr_t)m->base;
	uintptr_t q = b + ((phase - b) & (align - 1));
	return q + len <= b + m->len ? (char *)q : NULL;
}

static __mm_plumbing void mapping_unmap(struct mapping *m)
{
	kasan_unpoison(m->base, m->len);     /* the shadow outlives the mapping */
	prim_unmap(m->base, m->len);
	free(m->rw);
	m->base = NULL;
	m->rw = NULL;
}

/*
 * A mapping of the kind @memmap (a memmap's or frames') that holds @len
 * bytes at an address p with p % @align == @phase % @align (@align a power
 * of two, at least the OS page): the smallest kept one that fits, else a
 * fresh PROT_NONE reservation with room for any phase.  Returns p; NULL
 * with errno set.
 */
static __mm_plumbing char *mapping_take(struct mapping *out, bool memmap, size_t len, size_t align, size_t phase)
{
	int best = -1;
	pthread_mutex_lock(&kept_lock);
	for (int i = 0; i < MEMMAP_NR_KEPT; i++)
		if (kept[i].base && kept[i].memmap == memmap && place(&kept[i], len, align, phase) &&
		    (best < 0 || kept[i].len < kept[best].len))
			best = i;
	if (best >= 0) {
		*out = kept[best];
		kept[best].base = NULL;
		kept[best].rw = NULL;
	}
	pthread_mutex_unlock(&kept_lock);
	if (best >= 0)
		return place(out, len, align, phase);

	size_t osp = prim_os_page_size();
	if (len > SIZE_MAX - align) {
		errno = ENOMEM;
		return NULL;
	}
	out->len = len + align - osp;
	out->base = prim_reserve(out->len);
	out->rw = NULL;
	out->memmap = memmap;
	return out->base ? place(out, len, align, phase) : NULL;
}

/*
 * Give every OS page of @m the access @want says (a bit per page), changing
 * only those whose access differs from m->rw; the pages made readable are
 * faulted in at once when @populate (MADV_POPULATE_WRITE; see
 * memmap_create()).  0, or the errno of the mprotect() that failed.
 */
static __mm_plumbing int mapping_protect(const struct mapping *m, const unsigned long *want, bool populate)
{
	size_t osp = prim_os_page_size(), n = m->len / osp;
	for (size_t i = 0; i < n;) {
		bool rw = bit(want, i);
		if (rw == bit(m->rw, i)) {
			i++;
			continue;
		}
		size_t j = i + 1;
		while (j < n && bit(want, j) == rw && bit(m->rw, j) != rw)
			j++;
		if (prim_protect(m->base + i * osp, (j - i) * osp, rw))
			return errno;
		if (rw && populate)
			(void)prim_populate(m->base + i * osp, (j - i) * osp);
		i = j;
	}
	return 0;
}

/*
 * Keep @m (its pages' access is m->rw) for a later memmap_create(): the
 * oldest kept mappings go back to the OS while there is no free slot or
 * the kept ones would exceed MEMMAP_KEEP_TOTAL bytes (their faulted-in
 * pages stay resident).  A mapping over MEMMAP_KEEP_MAX is unmapped.
 */
static __mm_plumbing void mapping_put(struct mapping *m)
{
	struct mapping evict[MEMMAP_NR_KEPT];
	int nr_evict = 0;

	if (m->len > MEMMAP_KEEP_MAX) {
		mapping_unmap(m);
		return;
	}
	/*
	 * Frames read zero in a fresh mapping, and the model counts on it
	 * (memory never freed since mm_create() is zero: test_meminit's
	 * init_on_free objects): the frames go back to the OS, only the
	 * pages that were touched cost anything, and their PTEs stay as they
	 * are.  A memmap's valid struct pages are all written at create.
	 */
	if (!m->memmap)
		(void)prim_discard(m->base, m->len);
	kasan_poison(m->base, m->len);
	pthread_mutex_lock(&kept_lock);
	for (;;) {
		size_t total = 0;
		int free_slot = -1, oldest = -1;
		for (int i = 0; i < MEMMAP_NR_KEPT; i++) {
			if (!kept[i].base) {
				if (free_slot < 0)
					free_slot = i;
				continue;
			}
			total += kept[i].len;
			if (oldest < 0 || kept[i].age < kept[oldest].age)
				oldest = i;
		}
		if (free_slot >= 0 && total + m->len <= MEMMAP_KEEP_TOTAL) {
			m->age = ++kept_clock;
			kept[free_slot] = *m;
			break;
		}
		evict[nr_evict++] = kept[oldest];
		kept[oldest].base = NULL;
		kept[oldest].rw = NULL;
	}
	pthread_mutex_unlock(&kept_lock);
	for (int i = 0; i < nr_evict; i++)
		mapping_unmap(&evict[i]);
	m->base = NULL;
	m->rw = NULL;
}

__mm_plumbing void memmap_drop_kept(void)
{
	for (int i = 0; i < MEMMAP_NR_KEPT; i++) {
		pthread_mutex_lock(&kept_lock);
		struct mapping m = kept[i];
		kept[i].base = NULL;
		kept[i].rw = NULL;
		pthread_mutex_unlock(&kept_lock);
		if (m.base)
			mapping_unmap(&m);
	}
}

/* ---- an instance's mappings ---- */

struct want {
	unsigned long *arena, *memmap;   /* a bit per OS page of mm->arena_region, of the memmap's */
	size_t osp;
};

/*
 * The OS pages a valid run needs: its frames (4 KiB pages, OS pages of the
 * same size) and every OS page that holds one of its struct pages.
 */
static void want_run(const struct mm *mm, unsigned long s, unsigned long e, void *arg)
{
	struct want *w = arg;
	uintptr_t base = (uintptr_t)mm->arena_region;
	uintptr_t a = align_down((uintptr_t)__page_address(mm, s), w->osp);
	uintptr_t b = align_up((uintptr_t)__page_address(mm, e), w->osp);
	bits_assign(w->arena, (a - base) / w->osp, (b - base) / w->osp, true);
	base = (uintptr_t)mm->memmap_map;
	a = align_down((uintptr_t)__pfn_to_page(mm, s), w->osp);
	b = align_up((uintptr_t)__pfn_to_page(mm, e), w->osp);
	bits_assign(w->memmap, (a - base) / w->osp, (b - base) / w->osp, true);
}

static bool want_compute(const struct mm *mm, struct want *w)
{
	w->osp = prim_os_page_size();
	w->arena = bits_alloc(mm->arena_region_len / w->osp);
	w->memmap = bits_alloc(mm->memmap_region_len / w->osp);
	if (!w->arena || !w->memmap) {
		free(w->arena);
		free(w->memmap);
		return false;
	}
	for_each_valid_run(mm, mm->first_pfn, mm->end_pfn, want_run, w);
	return true;
}

/*
 * The struct pages of holes that share an OS page with a valid run's read
 * as zero, as in a fresh mapping, whatever a kept one held: nothing should
 * read them (ASan poisons them), but if something does, it reads what it
 * would have read on a fresh instance.  memmap_init_pages() writes the
 * valid ones.
 */
static void zero_run_edges(const struct mm *mm, unsigned long s, unsigned long e, void *arg)
{
	size_t osp = *(const size_t *)arg;
	char *a = (char *)__pfn_to_page(mm, s), *b = (char *)__pfn_to_page(mm, e);
	char *pa = (char *)align_down((uintptr_t)a, osp), *pb = (char *)align_up((uintptr_t)b, osp);
	memset(pa, 0, (size_t)(a - pa));
	memset(b, 0, (size_t)(pb - b));
}

static void unpoison_run(const struct mm *mm, unsigned long s, unsigned long e, void *arg)
{
	(void)arg;
	kasan_unpoison(__pfn_to_page(mm, s), (e - s) * sizeof(struct page));
}

int memmap_create(struct mm *mm, char *err, size_t errlen)
{
	const struct mm_config *c = &mm->cfg;
	unsigned long span = mm->end_pfn - mm->first_pfn;
	size_t osp = prim_os_page_size();
	struct mapping ar = { 0 }, mr = { 0 };
	struct want w;
	int e;

	mm->valid_bitmap = bits_alloc(span);
	if (!mm->valid_bitmap)
		goto nomem;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (c->zones[z].end_pfn > c->zones[z].start_pfn)
			bits_assign(mm->valid_bitmap, c->zones[z].start_pfn - mm->first_pfn,
				    c->zones[z].end_pfn - mm->first_pfn, true);
	for (unsigned int i = 0; i < c->nr_holes; i++) {
		unsigned long hs = MAX(c->holes[i].start_pfn, mm->first_pfn);
		unsigned long he = MIN(c->holes[i].end_pfn, mm->end_pfn);
		if (he > hs)
			bits_assign(mm->valid_bitmap, hs - mm->first_pfn, he - mm->first_pfn, false);
	}
	for (unsigned long pfn = memmap_next_valid(mm, mm->first_pfn, mm->end_pfn); pfn < mm->end_pfn;) {
		unsigned long run_end = memmap_next_hole(mm, pfn, mm->end_pfn);
		mm->nr_valid += run_end - pfn;
		pfn = memmap_next_valid(mm, run_end, mm->end_pfn);
	}

	/*
	 * The kernel's direct map (Linux 6.6, x86-64): a frame's address is
	 * PAGE_OFFSET + pfn * PAGE_SIZE with PAGE_OFFSET aligned far beyond
	 * any buddy block, so a block of order k - its pfn a multiple of
	 * 2^k - is aligned to PAGE_SIZE << k.  kmalloc's natural alignment of
	 * power-of-two sizes and caches aligned beyond a page rest on that.
	 * mmap promises an OS page only: the arena is placed so that its
	 * "PAGE_OFFSET", arena - first_pfn * PAGE_SIZE, is aligned to the
	 * largest block.  The rest of its mapping is PROT_NONE.
	 */
	size_t block = (size_t)MM_PAGE_SIZE << mm->max_order;
	mm->arena_len = span << MM_PAGE_SHIFT;
	mm->arena = mapping_take(&ar, false, mm->arena_len, block < osp ? osp : block,
				 (size_t)(mm->first_pfn << MM_PAGE_SHIFT) & (block - 1));
	if (!mm->arena)
		goto nomem;
	mm->arena_region = ar.base;
	mm->arena_region_len = ar.len;

	/* Guards: a buddy pfn is at most 2^max_order away from a valid pfn. */
	mm->memmap_guard = align_up((1UL << mm->max_order) * sizeof(struct page), osp) / sizeof(struct page);
	mm->memmap_map_len = align_up((span + 2 * mm->memmap_guard) * sizeof(struct page), osp);
	mm->memmap_map = mapping_take(&mr, true, mm->memmap_map_len, osp, 0);
	if (!mm->memmap_map)
		goto nomem;
	mm->memmap_region_len = mr.len;
	mm->memmap = (struct page *)mm->memmap_map + mm->memmap_guard;

	/*
	 * Frames fault in on first touch.  The memmap's OS pages are faulted
	 * in here in one call (MADV_POPULATE_WRITE) where the OS can:
	 * memmap_init_pages() writes every one of them at once, as the
	 * kernel's memmap_init_range() does with a memmap memblock gave it
	 * already backed, and one fault per OS page took a fifth of the
	 * config target's time.
	 */
	if (!want_compute(mm, &w))
		goto nomem;
	e = mapping_protect(&ar, w.arena, false);
	if (!e)
		e = mapping_protect(&mr, w.memmap, true);
	free(w.arena);
	free(w.memmap);
	free(ar.rw);
	free(mr.rw);
	ar.rw = mr.rw = NULL;
	if (e) {
		mapping_unmap(&ar);
		mapping_unmap(&mr);
		mm->arena = mm->arena_region = NULL;
		mm->memmap_map = NULL;
		mm->memmap = NULL;
		snprintf(err, errlen, "cannot map memory: %s", strerror(e));
		return -1;
	}
	kasan_unpoison(mm->memmap_map, mm->memmap_map_len);    /* a kept mapping is poisoned whole */
	for_each_valid_run(mm, mm->first_pfn, mm->end_pfn, zero_run_edges, &osp);
	kasan_poison(mm->memmap_map, mm->memmap_map_len);
	kasan_poison(mm->arena, mm->arena_len);
	for_each_valid_run(mm, mm->first_pfn, mm->end_pfn, unpoison_run, NULL);
	return 0;
nomem:
	e = errno ? errno : ENOMEM;
	if (ar.base)
		mapping_unmap(&ar);
	if (mr.base)
		mapping_unmap(&mr);
	mm->arena = mm->arena_region = NULL;
	mm->memmap_map = NULL;
	mm->memmap = NULL;
	snprintf(err, errlen, "cannot reserve %lu pages of memory: %s", span, strerror(e));
	return -1;
}

void memmap_destroy(struct mm *mm)
{
	struct want w;
	struct mapping ar = { .base = mm->arena_region, .len = mm->arena_region_len };
	struct mapping mr = { .base = mm->memmap_map, .len = mm->memmap_region_len, .memmap = true };

	if (ar.base && mr.base && want_compute(mm, &w)) {
		ar.rw = w.arena;
		mr.rw = w.memmap;
		mapping_put(&ar);
		mapping_put(&mr);
	} else {
		if (ar.base)
			mapping_unmap(&ar);
		if (mr.base)
			mapping_unmap(&mr);
	}
	free(mm->valid_bitmap);
	mm->memmap_map = NULL;
	mm->arena = mm->arena_region = NULL;
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
		unsigned long end = zone_end_pfn(zone);
		for (unsigned long pfn = memmap_next_valid(mm, zone->zone_start_pfn, end); pfn < end;) {
			unsigned long run_end = memmap_next_hole(mm, pfn, end);
			for (; pfn < run_end; pfn++) {
				struct page *p = __pfn_to_page(mm, pfn);
				memset(p, 0, sizeof(*p));
				p->flags = ((unsigned long)z << ZONES_PGSHIFT) | (1UL << PG_reserved);
				set_page_count(p, 1);
			}
			pfn = memmap_next_valid(mm, run_end, end);
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

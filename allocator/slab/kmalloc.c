/* SPDX-License-Identifier: MIT */
/*
 * kmalloc.c - the kmalloc family: size classes 8 .. 8192 (with 96 and
 * 192) served by kmalloc caches, larger sizes passed straight to the page
 * allocator as compound pages (the 2007 thread's "direct pass through":
 * kmalloc(16384) never touches SLUB), and kfree telling the two apart.
 *
 * Models mm/slab_common.c and mm/slub.c of Linux 6.6: kmalloc_index(),
 * size_index[], kmalloc_slab(), kmalloc_info[]'s names,
 * create_kmalloc_caches() with new_kmalloc_cache()'s flags per type,
 * __do_kmalloc_node(), __kmalloc_large_node(), kfree(),
 * free_large_kmalloc(), __ksize()/ksize(), kmalloc_size_roundup(); and
 * krealloc() of Linux 6.12, which keeps the kmalloc red zone and the
 * recorded request size right when an object shrinks or grows in place
 * (6.6 left them stale).
 *
 * The kmalloc cache types of 6.6 (kmalloc_type(), slab/slab.h): small
 * kmalloc with __GFP_RECLAIMABLE is served by "kmalloc-rcl-N" caches
 * (SLAB_RECLAIM_ACCOUNT: their slabs are reclaimable pages) and with
 * __GFP_DMA by "dma-kmalloc-N" (SLAB_CACHE_DMA: ZONE_DMA pages); the
 * caller's zone and mobility bits never reach new_slab(), the cache's
 * allocflags decide.  The DMA caches exist only on an instance whose
 * config populates ZONE_DMA, the model's CONFIG_ZONE_DMA: elsewhere
 * __GFP_DMA selects no cache type, as in a kernel without ZONE_DMA, and a
 * small kmalloc(GFP_DMA) is a kmalloc-N (or kmalloc-rcl-N) object.  The
 * page allocator knows no such fallback (gfp_zone(__GFP_DMA) is ZONE_DMA,
 * empty or not), so there a large kmalloc(GFP_DMA) fails.  No memcg
 * (kmalloc-cg-N) and no random kmalloc caches.
 */
#include <string.h>

#include "slab/slab.h"
#include "slab/kasan.h"

#define _RET_IP_ ((unsigned long)__builtin_return_address(0))

/* kmalloc_info[]'s names (mm/slab_common.c, 6.6), by type and kmalloc_index(). */
static const char *const kmalloc_names[NR_KMALLOC_TYPES][KMALLOC_SHIFT_HIGH + 1] = {
	[KMALLOC_NORMAL] = {
		NULL, "kmalloc-96", "kmalloc-192", "kmalloc-8", "kmalloc-16", "kmalloc-32", "kmalloc-64",
		"kmalloc-128", "kmalloc-256", "kmalloc-512", "kmalloc-1k", "kmalloc-2k", "kmalloc-4k", "kmalloc-8k",
	},
	[KMALLOC_RECLAIM] = {
		NULL, "kmalloc-rcl-96", "kmalloc-rcl-192", "kmalloc-rcl-8", "kmalloc-rcl-16", "kmalloc-rcl-32",
		"kmalloc-rcl-64", "kmalloc-rcl-128", "kmalloc-rcl-256", "kmalloc-rcl-512", "kmalloc-rcl-1k",
		"kmalloc-rcl-2k", "kmalloc-rcl-4k", "kmalloc-rcl-8k",
	},
	[KMALLOC_DMA] = {
		NULL, "dma-kmalloc-96", "dma-kmalloc-192", "dma-kmalloc-8", "dma-kmalloc-16", "dma-kmalloc-32",
		"dma-kmalloc-64", "dma-kmalloc-128", "dma-kmalloc-256", "dma-kmalloc-512", "dma-kmalloc-1k",
		"dma-kmalloc-2k", "dma-kmalloc-4k", "dma-kmalloc-8k",
	},
};
/* new_kmalloc_cache()'s flags per type, on top of SLAB_KMALLOC. */
static const slab_flags_t kmalloc_type_flags[NR_KMALLOC_TYPES] = {
	[KMALLOC_NORMAL] = 0,
	[KMALLOC_RECLAIM] = SLAB_RECLAIM_ACCOUNT,
	[KMALLOC_DMA] = SLAB_CACHE_DMA,
};
static const unsigned int kmalloc_sizes[KMALLOC_SHIFT_HIGH + 1] = {
	0, 96, 192, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192,
};

/* size_index[]: the cache index for sizes up to 192, by (size - 1) / 8. */
static const unsigned char size_index[24] = {
	3,      /* 8 */
	4,      /* 16 */
	5, 5,   /* 24, 32 */
	6, 6, 6, 6,   /* 40 .. 64 */
	1, 1, 1, 1,   /* 72 .. 96 */
	7, 7, 7, 7,   /* 104 .. 128 */
	2, 2, 2, 2, 2, 2, 2, 2,   /* 136 .. 192 */
};

/* kmalloc_index(): which size class serves @size (0 for 0), size <= KMALLOC_MAX_CACHE_SIZE. */
static __always_inline unsigned int kmalloc_index(size_t size)
{
	if (size <= 192)
		return size ? size_index[(size - 1) / 8] : 0;
	return 64 - (unsigned int)__builtin_clzl(size - 1);     /* fls(size - 1) */
}

/* kmalloc_slab() (Linux 6.6 mm/slab_common.c, less the caller: no random caches). */
struct kmem_cache *kmalloc_slab(struct mm *mm, size_t size, gfp_t flags)
{
	struct slub_state *st;

	if (!mm || !size || size > KMALLOC_MAX_CACHE_SIZE)
		return NULL;
	st = slub_state(mm);
	return st->kmalloc_caches[kmalloc_type(st, flags)][kmalloc_index(size)];
}

/*
 * new_kmalloc_cache() for every size class of @type, caller holding
 * slab_mutex.  Power-of-two classes are naturally aligned, whatever
 * slub_debug adds: 6.6's create_boot_cache() gives them align = size (at
 * least ARCH_KMALLOC_MINALIGN), with no PAGE_SIZE cap, so kmalloc-8k is
 * 8 KiB aligned.  kmalloc-96 and kmalloc-192 get align 0 (the largest
 * power-of-two divisor of the size came only in 6.11).  An instance whose
 * max_order cannot hold a class (max_order 0 has no room for kmalloc-8k)
 * goes without it: kmalloc of those sizes fails, as kmalloc beyond
 * KMALLOC_MAX_SIZE does.
 */
static int create_kmalloc_type(struct mm *mm, enum kmalloc_cache_type type, char *err, size_t errlen)
{
	struct slub_state *st = slub_state(mm);

	for (unsigned int i = 1; i <= KMALLOC_SHIFT_HIGH; i++) {
		unsigned int size = kmalloc_sizes[i];
		unsigned int align = (size & (size - 1)) ? 0 : size;

		if (size > (MM_PAGE_SIZE << MAX_ORDER(mm)))
			continue;

		st->kmalloc_caches[type][i] = __kmem_cache_create(mm, kmalloc_names[type][i], size, align,
								  SLAB_KMALLOC | kmalloc_type_flags[type], NULL,
								  err, errlen);
		/*
		 * The largest classes may still not fit a slab of max_order once
		 * red zones (KASAN's, slub_debug's) widen the stride: go without
		 * them, as above.  Any smaller class failing is a real error.
		 */
		if (!st->kmalloc_caches[type][i] && 2UL * size >= (MM_PAGE_SIZE << MAX_ORDER(mm))) {
			if (err && errlen)
				err[0] = 0;
			continue;
		}
		if (!st->kmalloc_caches[type][i])
			return -1;
	}
	return 0;
}

/*
 * create_kmalloc_caches() (Linux 6.6): every size class of every type at
 * creation, type by type (kmalloc-N, then kmalloc-rcl-N, then
 * dma-kmalloc-N), as 6.6 does at boot; the DMA type only with a populated
 * ZONE_DMA, which also makes __GFP_DMA a "not normal" bit (kmalloc_type()).
 */
int create_kmalloc_caches(struct mm *mm, char *err, size_t errlen)
{
	struct slub_state *st = slub_state(mm);
	bool has_dma = populated_zone(&mm->zones[ZONE_DMA]);
	int ret = 0;

	st->kmalloc_not_normal = __GFP_RECLAIMABLE | (has_dma ? __GFP_DMA : 0);
	mutex_lock(&st->slab_mutex);
	for (int type = KMALLOC_NORMAL; type < NR_KMALLOC_TYPES && !ret; type++)
		if (type != KMALLOC_DMA || has_dma)
			ret = create_kmalloc_type(mm, (enum kmalloc_cache_type)type, err, errlen);
	mutex_unlock(&st->slab_mutex);
	return ret;
}

/* ---------------------------------------------------------------- large */

/*
 * __kmalloc_large_node() (6.6): whole compound pages; the bytes past @size
 * stay poisoned under KASAN.  It has no size limit of its own: beyond
 * KMALLOC_MAX_SIZE the order is above MAX_ORDER, and alloc_pages() warns
 * (unless __GFP_NOWARN) and returns NULL - after kmalloc_fix_flags() has
 * reported any bad gfp bits.
 */
static void *kmalloc_large(struct mm *mm, size_t size, gfp_t gfp)
{
	unsigned int order = get_order_size(size);
	struct page *page;
	void *ptr;

	if (unlikely(gfp & GFP_SLAB_BUG_MASK))
		gfp = kmalloc_fix_flags(mm, gfp);
	page = alloc_pages(mm, gfp | __GFP_COMP, order);
	if (!page)
		return NULL;
	ptr = page_address(mm, page);
	kasan_kmalloc_large(ptr, size, order);
	return ptr;
}

/*
 * free_large_kmalloc(): @object must be the start of a compound page that
 * is not a slab; anything else is reported and left alone (the kernel
 * would free the whole folio, or WARN on an order-0 page).
 */
static void free_large_kmalloc(struct mm *mm, struct page *head, const void *object)
{
	unsigned int order = PageHead(head) ? head[1].compound_order : 0;

	if (unlikely(object != page_address(mm, head))) {
#ifdef MM_ASAN
		kasan_report_invalid_free(object, "invalid-free", "kfree", "(large kmalloc)");
#endif
		slub_report_bad_free(mm, NULL, object, "not the start of a large kmalloc (interior pointer)");
		return;
	}
#ifdef MM_ASAN
	if (!kasan_byte_accessible(object))
		kasan_report_invalid_free(object, "double-free", "kfree", "(large kmalloc)");
#endif
	if (unlikely(order == 0)) {
		slub_report_bad_free(mm, NULL, object, "not a kmalloc object (an order-0 page)");
		return;
	}
	__free_pages(mm, head, order);
}

/* ---------------------------------------------------------------- kmalloc */

void *kmalloc(struct mm *mm, size_t size, gfp_t gfp)
{
	struct slub_state *st;
	struct kmem_cache *s;

	if (unlikely(size > KMALLOC_MAX_CACHE_SIZE))
		return kmalloc_large(mm, size, gfp);
	if (unlikely(!size))
		return ZERO_SIZE_PTR;
	st = slub_state(mm);
	s = st->kmalloc_caches[kmalloc_type(st, gfp)][kmalloc_index(size)];
	if (unlikely(!s))
		return NULL;          /* a size class this instance cannot hold */
	return slab_alloc_node(s, gfp, _RET_IP_, size);
}

void *kzalloc(struct mm *mm, size_t size, gfp_t gfp)
{
	return kmalloc(mm, size, gfp | __GFP_ZERO);
}

void *kmalloc_array(struct mm *mm, size_t n, size_t size, gfp_t gfp)
{
	size_t bytes;

	if (unlikely(__builtin_mul_overflow(n, size, &bytes)))
		return NULL;
	return kmalloc(mm, bytes, gfp);
}

void *kcalloc(struct mm *mm, size_t n, size_t size, gfp_t gfp)
{
	return kmalloc_array(mm, n, size, gfp | __GFP_ZERO);
}

void *kmalloc_trace(struct kmem_cache *s, gfp_t gfp, size_t size)
{
	if (!s || size > s->object_size)
		return NULL;
	return slab_alloc_node(s, gfp, _RET_IP_, size);
}

/*
 * kfree(): a slab object goes back to its cache; anything else in memory
 * must be a large kmalloc.  NULL and ZERO_SIZE_PTR are no-ops; an address
 * outside the instance's memory is reported and ignored.
 */
void kfree(struct mm *mm, const void *object)
{
	struct page *head;
	struct kmem_cache *s;

	if (unlikely(ZERO_OR_NULL_PTR(object)))
		return;
	head = slub_virt_to_head(mm, object);
	if (unlikely(!head)) {
		slub_report_bad_free(mm, NULL, object, "address outside the instance's memory");
		return;
	}
	if (unlikely(!PageSlab(head))) {
		free_large_kmalloc(mm, head, object);
		return;
	}
	s = head->slab_cache;
	slab_free(s, head, (void *)object, NULL, (void **)&object, 1, _RET_IP_);
}

void kfree_bulk(struct mm *mm, size_t size, void **p);   /* bulk.c */

/*
 * slab_ksize(): what a client may use of an object of @s.  6.6 stops at
 * inuse only for SLAB_TYPESAFE_BY_RCU and SLAB_STORE_USER and gives a
 * constructor cache its whole stride, free pointer word included (ksize()
 * is meant for kmalloc caches, which have no constructor); the model stops
 * before an out-of-object free pointer for any reason, so a client that
 * writes all ksize() allows never overwrites it.
 */
static size_t slab_ksize(const struct kmem_cache *s)
{
	if (s->flags & (SLAB_RED_ZONE | SLAB_POISON))
		return s->object_size;
#ifdef MM_ASAN
	return s->object_size;                   /* SLAB_KASAN */
#endif
	if ((s->flags & SLAB_STORE_USER) || freeptr_outside_object(s))
		return s->inuse;
	return s->size;
}

/*
 * ksize() (Linux 6.6, reporting-only): the usable size.  It unpoisons
 * nothing: a client must ask kmalloc_size_roundup() up front to use more
 * than it requested.  The request size recorded for the kmalloc red zone
 * is widened to the object, since the caller may now use it all.
 */
size_t ksize(struct mm *mm, const void *object)
{
	struct page *head;
	struct kmem_cache *s;

	if (unlikely(ZERO_OR_NULL_PTR(object)))
		return 0;
	head = slub_virt_to_head(mm, object);
	if (!head)
		return 0;
#ifdef MM_ASAN
	if (!kasan_byte_accessible(object))
		kasan_report_invalid_free(object, "use-after-free", "ksize", PageSlab(head) ? head->slab_cache->name : "");
#endif
	if (!PageSlab(head)) {
		if (object != page_address(mm, head) || !PageHead(head))
			return 0;
		return MM_PAGE_SIZE << head[1].compound_order;
	}
	s = head->slab_cache;
	set_orig_size(s, (void *)object, s->object_size);   /* skip_orig_size_check() */
	return slab_ksize(s);
}

/*
 * kmalloc_size_roundup() (Linux 6.6): the bytes kmalloc(size) would give -
 * the bucket's object size, whole pages above the buckets up to
 * KMALLOC_MAX_SIZE (the largest block), @size itself beyond it (such a
 * kmalloc fails) and for 0.  On an instance too small for a bucket
 * (kmalloc-8k needs order-1 slabs, which a max_order 0 machine has not)
 * whole pages: the contract is "at least size".
 */
size_t kmalloc_size_roundup(struct mm *mm, size_t size)
{
	if (!size)
		return 0;
	if (size <= KMALLOC_MAX_CACHE_SIZE && kmalloc_slab(mm, size, GFP_KERNEL))
		return kmalloc_slab(mm, size, GFP_KERNEL)->object_size;
	/* Above the smaller buckets, size is a multiple of page size. */
	if (size <= (MM_PAGE_SIZE << MAX_ORDER(mm)))
		return MM_PAGE_SIZE << get_order_size(size);
	/* A very large size - kmalloc() may fail. */
	return size;
}

/*
 * krealloc() (Linux 6.12 __do_krealloc): in place while the new size fits
 * the object (zeroing as asked, the kmalloc red zone and request size
 * moved to the new end, KASAN re-poisoned to the byte), else a new object
 * with the old contents and the old one freed.  0 bytes frees and returns
 * ZERO_SIZE_PTR; on failure the old object is untouched and NULL returned.
 */
void *krealloc(struct mm *mm, const void *p, size_t new_size, gfp_t gfp)
{
	struct kmem_cache *s = NULL;
	struct page *head;
	size_t ks, orig_size = 0;
	void *ret;

	if (unlikely(!new_size)) {
		kfree(mm, p);
		return ZERO_SIZE_PTR;
	}
	if (ZERO_OR_NULL_PTR(p))
		return kmalloc(mm, new_size, gfp);

	head = slub_virt_to_head(mm, p);
	if (unlikely(!head)) {
		slub_report_bad_free(mm, NULL, p, "krealloc: address outside the instance's memory");
		return NULL;
	}
#ifdef MM_ASAN
	if (!kasan_byte_accessible(p))
		kasan_report_invalid_free(p, "use-after-free", "krealloc", PageSlab(head) ? head->slab_cache->name : "");
#endif
	if (!PageSlab(head)) {
		if (p != page_address(mm, head) || !PageHead(head)) {
			slub_report_bad_free(mm, NULL, p, "krealloc: not a kmalloc object");
			return NULL;
		}
		ks = MM_PAGE_SIZE << head[1].compound_order;
	} else {
		s = head->slab_cache;
		orig_size = get_orig_size(s, (void *)p);
		ks = s->object_size;
	}

	if (new_size > ks)
		goto alloc_new;

	/* It fits: zero what the new size exposes, or what it gives up. */
	if ((gfp & __GFP_ZERO) || slub_state(mm)->init_on_alloc) {
		kasan_unpoison((void *)p, ks);
		if (orig_size && orig_size < new_size)
			memset((char *)p + orig_size, 0, new_size - orig_size);
		else
			memset((char *)p + new_size, 0, ks - new_size);
	}
	if (s && slub_debug_orig_size(s)) {
		set_orig_size(s, (void *)p, (unsigned int)new_size);
		if ((s->flags & SLAB_RED_ZONE) && new_size < ks)
			metadata_memset((char *)p + new_size, SLUB_RED_ACTIVE, ks - new_size);
	}
	if (s)
		kasan_unpoison_alloc(s, (void *)p, new_size);
	else
		kasan_kmalloc_large((void *)p, new_size, head[1].compound_order);
	return (void *)p;

alloc_new:
	ret = kmalloc(mm, new_size, gfp);
	if (ret) {
		size_t n = orig_size ? orig_size : ks;
		kasan_unpoison((void *)p, n);         /* kasan_disable_current() around the copy */
		memcpy(ret, p, n);
		kfree(mm, p);
	}
	return ret;
}

void *krealloc_array(struct mm *mm, void *p, size_t n, size_t size, gfp_t gfp)
{
	size_t bytes;

	if (unlikely(__builtin_mul_overflow(n, size, &bytes)))
		return NULL;
	return krealloc(mm, p, bytes, gfp);
}

/* SPDX-License-Identifier: MIT */
/*
 * kasan.h - AddressSanitizer as KASAN (mm/kasan/common.c and generic.c of
 * Linux 6.6, as SLUB calls them), and the metadata accessors of slub_debug.
 *
 * Under the ASan build the allocator keeps ASan's shadow the way generic
 * KASAN keeps its own:
 *   - a new slab is poisoned whole (kasan_poison_slab); only a constructor
 *     sees an object unpoisoned, for the length of the call;
 *   - an allocation unpoisons exactly what the client may use: the object
 *     (kmem_cache_alloc) or the requested size (kmalloc: the bytes from the
 *     request to the object size stay poisoned, the "kmalloc red zone");
 *   - a free checks that the pointer is an object start (else invalid-free)
 *     and that the object is not already poisoned (else double-free), then
 *     poisons it and, with a quarantine, holds it back from reuse;
 *   - red zones, free pointers outside the object, tracking data and
 *     padding are never unpoisoned: slub_debug and the free-list code reach
 *     them through the metadata_* helpers, which ASan does not instrument
 *     (SLUB's metadata_access_enable()).
 * ASan poisons in 8-byte granules and its manual poisoning is not
 * thread-safe on a shared granule: object starts and strides are multiples
 * of 8 (calculate_sizes), so no granule is ever shared by two objects.
 *
 * Outside ASan builds every hook is an empty inline.
 */
#ifndef MM_SLAB_KASAN_H
#define MM_SLAB_KASAN_H

#include "slab/slab.h"

/* ---------------------------------------------------------------- metadata access */

/*
 * Volatile on purpose: a loop the compiler turns into memset/memcmp would go
 * through ASan's interceptors, which check the (poisoned) shadow.  The loops
 * go a word at a time where the range allows (as the kernel's memchr_inv()
 * does): they touch exactly the bytes of [p, p + n), through aligned words
 * wholly inside it, so neither ASan's granules nor TSan see a byte outside
 * the range.  Red zones, poison and slab padding checked on every debug
 * allocation and free are most of slub_debug's cost.
 *
 * Under clang the loops are left out of coverage, and not inlined so that
 * holds: how many words a scan took is the length of a red zone or of
 * padding, not progress, and the counter an instrumented loop bumps every
 * word cost more than the scan itself.
 */
typedef unsigned long __attribute__((may_alias)) metadata_word_t;
#define METADATA_WORD ((size_t)sizeof(metadata_word_t))
#define METADATA_ALIGNED(p) (((uintptr_t)(p) & (METADATA_WORD - 1)) == 0)
#if defined(__clang__)
#define __metadata_loop __no_sanitize_address __attribute__((__noinline__, no_sanitize("coverage")))
#else
#define __metadata_loop __no_sanitize_address
#endif

static inline __metadata_loop void metadata_memset(void *p, int c, size_t n)
{
	volatile unsigned char *q = p;
	metadata_word_t pat = (metadata_word_t)0x0101010101010101UL * (unsigned char)c;

	for (; n && !METADATA_ALIGNED(q); n--)
		*q++ = (unsigned char)c;
	/* the words by address, not pointer: no pointer-overflow check (UBSan) per word */
	uintptr_t a = (uintptr_t)q, wend = a + (n & ~(METADATA_WORD - 1));
	for (; a < wend; a += METADATA_WORD)
		*(volatile metadata_word_t *)a = pat;
	q = (volatile unsigned char *)a;
	for (n &= METADATA_WORD - 1; n; n--)
		*q++ = (unsigned char)c;
}
static inline __no_sanitize_address unsigned char metadata_read_byte(const void *p)
{
	return *(const volatile unsigned char *)p;
}
/* memchr_inv(): the first byte of [p, p + n) that is not @c, or NULL. */
static inline __metadata_loop unsigned char *metadata_memchr_inv(const void *p, int c, size_t n)
{
	const volatile unsigned char *q = p, *end = q + n;
	metadata_word_t pat = (metadata_word_t)0x0101010101010101UL * (unsigned char)c;

	for (; q < end && !METADATA_ALIGNED(q); q++)
		if (*q != (unsigned char)c)
			return (unsigned char *)(uintptr_t)q;
	/* whole words while they match; the byte loop below finds the odd byte of one that does not */
	uintptr_t a = (uintptr_t)q, wend = a + ((size_t)(end - q) & ~(METADATA_WORD - 1));
	while (a < wend && *(const volatile metadata_word_t *)a == pat)
		a += METADATA_WORD;
	for (q = (const volatile unsigned char *)a; q < end; q++)
		if (*q != (unsigned char)c)
			return (unsigned char *)(uintptr_t)q;
	return NULL;
}
static inline __metadata_loop void metadata_memcpy(void *dst, const void *src, size_t n)
{
	volatile unsigned char *d = dst;
	const volatile unsigned char *s = src;

	if (METADATA_ALIGNED(d) && METADATA_ALIGNED(s) && n >= METADATA_WORD) {
		uintptr_t a = (uintptr_t)d, b = (uintptr_t)s, wend = a + (n & ~(METADATA_WORD - 1));
		for (; a < wend; a += METADATA_WORD, b += METADATA_WORD)
			*(volatile metadata_word_t *)a = *(const volatile metadata_word_t *)b;
		d = (volatile unsigned char *)a;
		s = (const volatile unsigned char *)b;
		n &= METADATA_WORD - 1;
	}
	while (n--)
		*d++ = *s++;
}

/* ---------------------------------------------------------------- KASAN */

#ifdef MM_ASAN
#define KASAN_GRANULE 8UL

static inline size_t kasan_round(size_t n)
{
	return (n + KASAN_GRANULE - 1) & ~(KASAN_GRANULE - 1);
}
/* kasan_poison_slab(): a new slab is all poisoned. */
static inline void kasan_poison_slab(const struct mm *mm, struct page *slab)
{
	kasan_poison(slab_address(mm, slab), slab_size(slab));
}
/* Around a constructor call. */
static inline void kasan_unpoison_new_object(struct kmem_cache *s, void *object)
{
	kasan_unpoison(object, s->object_size);
}
static inline void kasan_poison_new_object(struct kmem_cache *s, void *object)
{
	kasan_poison(object, kasan_round(s->object_size));
}
/* kasan_slab_alloc() / kasan_kmalloc(): exactly [object, object + size) becomes usable. */
static inline void kasan_unpoison_alloc(struct kmem_cache *s, void *object, size_t size)
{
	kasan_poison(object, kasan_round(s->object_size));
	kasan_unpoison(object, size);
}
static inline void kasan_poison_free(struct kmem_cache *s, void *object)
{
	kasan_poison(object, kasan_round(s->object_size));
}
static inline bool kasan_byte_accessible(const void *p)
{
	return !__asan_address_is_poisoned(p);
}
/* kasan_kmalloc_large(): the pages past the request stay poisoned. */
static inline void kasan_kmalloc_large(void *ptr, size_t size, unsigned int order)
{
	kasan_poison(ptr, MM_PAGE_SIZE << order);
	kasan_unpoison(ptr, size);
}
/* Before the page allocator sees the pages again (it poisons on free itself). */
static inline void kasan_kfree_large(void *ptr, unsigned int order)
{
	kasan_unpoison(ptr, MM_PAGE_SIZE << order);
}
/* kasan_report_invalid_free(): KASAN's line, then ASan's report (which stops the program). */
void kasan_report_invalid_free(const void *ptr, const char *kind, const char *fn, const char *cache)
	__attribute__((noreturn));
#else
static inline void kasan_poison_slab(const struct mm *mm, struct page *slab) { (void)mm; (void)slab; }
static inline void kasan_unpoison_new_object(struct kmem_cache *s, void *o) { (void)s; (void)o; }
static inline void kasan_poison_new_object(struct kmem_cache *s, void *o) { (void)s; (void)o; }
static inline void kasan_unpoison_alloc(struct kmem_cache *s, void *o, size_t n) { (void)s; (void)o; (void)n; }
static inline void kasan_poison_free(struct kmem_cache *s, void *o) { (void)s; (void)o; }
static inline bool kasan_byte_accessible(const void *p) { (void)p; return true; }
static inline void kasan_kmalloc_large(void *p, size_t n, unsigned int o) { (void)p; (void)n; (void)o; }
static inline void kasan_kfree_large(void *p, unsigned int o) { (void)p; (void)o; }
#endif

/* The quarantine (hooks.c): true if @object was taken (freed later). */
bool slub_quarantine_put(struct kmem_cache *s, void *object);

#endif /* MM_SLAB_KASAN_H */

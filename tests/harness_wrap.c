/* SPDX-License-Identifier: MIT */
/*
 * harness_wrap.c - allocator bugs planted from outside the library, for
 * tests/harness_wrap.cmake: each block, chosen by -DWRAP_<name>, defines
 * __wrap_F for an API function F that a fuzz target (or a C reproducer)
 * links with -Wl,--wrap=F, so the target's own calls reach the bug while
 * the library stays the correct one (no bug-zoo variant to build).
 *
 *   REPORT_ON_FREE   kmem_cache_free of a 256-byte object also raises an
 *                    allocator report (a bad free of address 1): a report
 *                    in the middle of a run (--wrap=kmem_cache_free)
 *   PENDING_KEPT     an interrupt left pending with no handler is kept
 *                    pending, not dropped, and delivered once a handler is
 *                    set again (--wrap=mm_set_irq_pending,mm_set_irq_handler)
 *   FASTPATH_IGNORED mm_slub_configure() ignores slub_fastpath= tokens
 *                    (--wrap=mm_slub_configure)
 *   OFFLINE_NOOP     mm_cpu_try_offline() of a valid vCPU returns 0 and
 *                    leaves it online (--wrap=mm_cpu_try_offline)
 *
 * And crashes inside an allocator call (a fuzz run that dies there must
 * leave a C file making that call, which dies the same way):
 *   CRASH_BULK       __alloc_pages_bulk() of 13 pages (array or list)
 *                    dies of SIGSEGV (--wrap=__alloc_pages_bulk)
 *   CRASH_PCP        mm_pcp_update(mm, 77, batch) aborts; so does an order-3
 *                    alloc_pages() that may use the reserves (__GFP_HIGH:
 *                    the pcp target's interrupt handler asks GFP_ATOMIC)
 *                    (--wrap=mm_pcp_update,--wrap=alloc_pages)
 *   CRASH_SLUB       kmem_cache_create() of a 77-byte cache aborts;
 *                    kmem_cache_shrink() of an 88-byte cache dies of
 *                    SIGSEGV (--wrap=kmem_cache_create,--wrap=kmem_cache_shrink)
 *   CRASH_CONFIG     mm_config_validate() of a config of 7 vCPUs dies of
 *                    SIGSEGV (--wrap=mm_config_validate)
 *   BLOCK_OPEN       mm_pcp_update(mm, 66, batch) writes two open blocks
 *                    into the C file being written (braces also in a
 *                    comment, a string, character literals and a line
 *                    comment), then aborts: the ending must close them
 *                    (--wrap=mm_pcp_update; the fuzz binary only)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm/cpu.h"
#include "mm/mm.h"
#include "mm/slab.h"

#ifdef WRAP_REPORT_ON_FREE
void __real_kmem_cache_free(struct kmem_cache *s, void *p);
void __wrap_kmem_cache_free(struct kmem_cache *s, void *p);
void __wrap_kmem_cache_free(struct kmem_cache *s, void *p)
{
	__real_kmem_cache_free(s, p);
	if (kmem_cache_size(s) == 256)
		free_pages(kmem_cache_mm(s), 1UL, 0);
}
#endif

#ifdef WRAP_PENDING_KEPT
static int kept;
void __real_mm_set_irq_pending(struct mm *mm);
void __wrap_mm_set_irq_pending(struct mm *mm);
void __real_mm_set_irq_handler(struct mm *mm, mm_irq_handler_fn fn, void *ctx);
void __wrap_mm_set_irq_handler(struct mm *mm, mm_irq_handler_fn fn, void *ctx);
void __wrap_mm_set_irq_pending(struct mm *mm)
{
	(void)mm;
	kept = 1;
}
void __wrap_mm_set_irq_handler(struct mm *mm, mm_irq_handler_fn fn, void *ctx)
{
	__real_mm_set_irq_handler(mm, fn, ctx);
	if (fn && kept) {
		kept = 0;
		__real_mm_set_irq_pending(mm);
	}
}
#endif

#ifdef WRAP_FASTPATH_IGNORED
int __real_mm_slub_configure(struct mm *mm, const char *text, char *err, size_t errlen);
int __wrap_mm_slub_configure(struct mm *mm, const char *text, char *err, size_t errlen);
int __wrap_mm_slub_configure(struct mm *mm, const char *text, char *err, size_t errlen)
{
	char buf[2048];
	const char *s = text;
	size_t n = 0;
	if (!text)
		return __real_mm_slub_configure(mm, text, err, errlen);
	while (*s && n < sizeof(buf) - 1) {
		if (!strncmp(s, "slub_fastpath=", 14) && (s == text || s[-1] == ' ')) {
			while (*s && *s != ' ')
				s++;
			continue;
		}
		buf[n++] = *s++;
	}
	buf[n] = 0;
	return __real_mm_slub_configure(mm, buf, err, errlen);
}
#endif

#ifdef WRAP_OFFLINE_NOOP
int __real_mm_cpu_try_offline(struct mm *mm, int cpu);
int __wrap_mm_cpu_try_offline(struct mm *mm, int cpu);
int __wrap_mm_cpu_try_offline(struct mm *mm, int cpu)
{
	if (cpu >= 0 && mm_cpu_is_online(mm, cpu) && mm_num_online_cpus(mm) > 1 && mm_cpu_holder(mm, cpu) == NULL)
		return 0;
	return __real_mm_cpu_try_offline(mm, cpu);
}
#endif

#ifdef WRAP_CRASH_BULK
unsigned long __real___alloc_pages_bulk(struct mm *mm, gfp_t gfp, int nr_pages, struct list_head *page_list,
					struct page **page_array);
unsigned long __wrap___alloc_pages_bulk(struct mm *mm, gfp_t gfp, int nr_pages, struct list_head *page_list,
					struct page **page_array);
unsigned long __wrap___alloc_pages_bulk(struct mm *mm, gfp_t gfp, int nr_pages, struct list_head *page_list,
					struct page **page_array)
{
	if (nr_pages == 13)
		raise(SIGSEGV);
	return __real___alloc_pages_bulk(mm, gfp, nr_pages, page_list, page_array);
}
#endif

#ifdef WRAP_CRASH_PCP
int __real_mm_pcp_update(struct mm *mm, unsigned int high, unsigned int batch);
int __wrap_mm_pcp_update(struct mm *mm, unsigned int high, unsigned int batch);
int __wrap_mm_pcp_update(struct mm *mm, unsigned int high, unsigned int batch)
{
	if (high == 77)
		abort();
	return __real_mm_pcp_update(mm, high, batch);
}
struct page *__real_alloc_pages(struct mm *mm, gfp_t gfp, unsigned int order);
struct page *__wrap_alloc_pages(struct mm *mm, gfp_t gfp, unsigned int order);
struct page *__wrap_alloc_pages(struct mm *mm, gfp_t gfp, unsigned int order)
{
	if (order == 3 && (gfp & __GFP_HIGH))
		abort();
	return __real_alloc_pages(mm, gfp, order);
}
#endif

#ifdef WRAP_CRASH_SLUB
struct kmem_cache *__real_kmem_cache_create(struct mm *mm, const char *name, unsigned int size, unsigned int align,
					    slab_flags_t flags, void (*ctor)(void *));
struct kmem_cache *__wrap_kmem_cache_create(struct mm *mm, const char *name, unsigned int size, unsigned int align,
					    slab_flags_t flags, void (*ctor)(void *));
struct kmem_cache *__wrap_kmem_cache_create(struct mm *mm, const char *name, unsigned int size, unsigned int align,
					    slab_flags_t flags, void (*ctor)(void *))
{
	if (size == 77)
		abort();
	return __real_kmem_cache_create(mm, name, size, align, flags, ctor);
}
int __real_kmem_cache_shrink(struct kmem_cache *s);
int __wrap_kmem_cache_shrink(struct kmem_cache *s);
int __wrap_kmem_cache_shrink(struct kmem_cache *s)
{
	if (kmem_cache_size(s) == 88)
		raise(SIGSEGV);
	return __real_kmem_cache_shrink(s);
}
#endif

#ifdef WRAP_CRASH_CONFIG
int __real_mm_config_validate(const struct mm_config *cfg, char *err, size_t errlen);
int __wrap_mm_config_validate(const struct mm_config *cfg, char *err, size_t errlen);
int __wrap_mm_config_validate(const struct mm_config *cfg, char *err, size_t errlen)
{
	if (cfg->nr_cpus == 7)
		raise(SIGSEGV);
	return __real_mm_config_validate(cfg, err, errlen);
}
#endif

#ifdef WRAP_BLOCK_OPEN
FILE *mf_cgen_file(void);      /* targets/common/cgen.h: the C file being written (NULL: none) */
int __real_mm_pcp_update(struct mm *mm, unsigned int high, unsigned int batch);
int __wrap_mm_pcp_update(struct mm *mm, unsigned int high, unsigned int batch);
int __wrap_mm_pcp_update(struct mm *mm, unsigned int high, unsigned int batch)
{
	FILE *f = mf_cgen_file();
	if (high == 66 && f) {
		fputs("\tif (mm) { /* } */ (void)\"}\\\"}\"; (void)'}'; // }\n"
		      "\t{\n\t\tchar brace = '\\''; (void)brace; /* { */\n", f);
		abort();
	}
	return __real_mm_pcp_update(mm, high, batch);
}
#endif

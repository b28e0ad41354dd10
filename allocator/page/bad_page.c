/* SPDX-License-Identifier: MIT */
/*
 * bad_page.c - reports for bad input, in the spirit of mm/page_alloc.c's
 * bad_page(): what was wrong, the pfn and the page flags.  The operation
 * that found it is refused and allocator state is left as it was.  Policy
 * (config.bad_policy): report and continue, or abort (fuzzers).
 */
#include <stdarg.h>
#include <string.h>

#include "internal.h"

void mm_report(struct mm *mm, const char *kind, unsigned long pfn, unsigned long flags,
	       const char *fmt, ...)
{
	struct mm_report r;
	va_list ap;

	memset(&r, 0, sizeof(r));
	snprintf(r.kind, sizeof(r.kind), "%s", kind);
	va_start(ap, fmt);
	vsnprintf(r.reason, sizeof(r.reason), fmt, ap);
	va_end(ap);
	r.pfn = pfn;
	r.flags = flags;
	if (pfn != ~0UL)
		snprintf(r.msg, sizeof(r.msg), "BUG: %s: pfn:%#lx flags:%#lx: %s", kind, pfn, flags, r.reason);
	else
		snprintf(r.msg, sizeof(r.msg), "BUG: %s: %s", kind, r.reason);

	spin_lock_raw(&mm->report_lock);
	mm->last_report = r;
	atomic_fetch_add(&mm->nr_reports, 1);
	spin_unlock_raw(&mm->report_lock);

	if (!mm->cfg.quiet || mm->cfg.bad_policy == MM_BAD_ABORT)
		fprintf(stderr, "mmfuzz: %s\n", r.msg);
	if (mm->cfg.bad_policy == MM_BAD_ABORT)
		abort();
}

/* bad_page(): "BUG: Bad page state ... page dumped because: <reason>" */
void bad_page(struct mm *mm, struct page *page, const char *reason)
{
	unsigned long pfn = __page_to_pfn(mm, page);
	mm_report(mm, "bad_page", pfn, page->flags,
		  "Bad page state: page dumped because: %s (refcount:%d order:%u)",
		  reason, page_count(page), page->owner_order ? page->owner_order - 1 : 0);
}

unsigned long mm_nr_reports(const struct mm *mm)
{
	return atomic_load(&((struct mm *)mm)->nr_reports);
}

const struct mm_report *mm_last_report(const struct mm *mm)
{
	return &mm->last_report;
}

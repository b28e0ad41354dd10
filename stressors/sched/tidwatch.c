/* SPDX-License-Identifier: MIT */
/*
 * tidwatch.c - the tid contract watched from the vCPU (tidwatch.h).
 */
#include <stdio.h>
#include <string.h>

#include "sched/tidwatch.h"
#include "slab/slab.h"

void tidwatch_init(struct tidwatch *w, struct kmem_cache *const *caches, int ncaches, int ncpus)
{
	memset(w, 0, sizeof(*w));
	if (ncaches > TIDWATCH_MAX_CACHES)
		ncaches = TIDWATCH_MAX_CACHES;
	if (ncpus > MM_MAX_CPUS)
		ncpus = MM_MAX_CPUS;
	for (int i = 0; i < ncaches; i++)
		w->caches[i] = caches[i];
	w->ncaches = ncaches;
	w->ncpus = ncpus;
}

void tidwatch_reset(struct tidwatch *w)
{
	for (int i = 0; i < w->ncaches; i++)
		memset(w->seen[i], 0, (size_t)w->ncpus * sizeof(w->seen[i][0]));
}

/*
 * {freelist, tid} and the cpu slab as one state: read again if an
 * interrupt (a signal) moved the tid in between.  (The cpu slab changes
 * without a tid change only while the freelist is empty.)
 */
static void read_pair(const struct kmem_cache_cpu *c, unsigned long *tid, void **freelist, struct page **slab)
{
	unsigned long t;
	do {
		t = c_tid(c);
		*freelist = c_freelist(c);
		*slab = c_slab(c);
	} while (t != c_tid(c));
	*tid = t;
}

bool tidwatch_observe(struct tidwatch *w, int cpu, const char *where, char *msg, size_t len)
{
	bool ok = true;
	if (cpu < 0 || cpu >= w->ncpus)
		return true;
	for (int i = 0; i < w->ncaches; i++) {
		struct tidwatch_seen *e = &w->seen[i][cpu];
		const char *name = kmem_cache_name(w->caches[i]);
		unsigned long tid;
		void *fl;
		struct page *slab;
		read_pair(slub_cpu(w->caches[i], cpu), &tid, &fl, &slab);
		if (e->tid_plus1 == tid + 1 && e->freelist == fl && e->slab == slab) {
			e->where = where;
			continue;       /* nothing moved since the last look (the common case) */
		}
		if (ok && tid_to_cpu(tid) != (unsigned)cpu) {
			snprintf(msg, len, "T1 violated: %s: vCPU %d has tid %#lx of vCPU %u (at %s)", name, cpu,
				 tid, tid_to_cpu(tid), where);
			ok = false;
		} else if (ok && e->tid_plus1 && tid + 1 < e->tid_plus1) {
			snprintf(msg, len, "T1 violated: %s: vCPU %d tid went back from %#lx (at %s) to %#lx (at %s)",
				 name, cpu, e->tid_plus1 - 1, e->where, tid, where);
			ok = false;
		} else if (ok && e->tid_plus1 == tid + 1 && e->freelist != fl) {
			snprintf(msg, len, "T1 violated: %s: vCPU %d tid %#lx named freelist %p (at %s) and freelist "
				 "%p (at %s): the freelist changed without a tid change, so a fast path that read "
				 "this tid can commit against a freelist it never saw", name, cpu, tid, e->freelist,
				 e->where, fl, where);
			ok = false;
		} else if (ok && fl && slub_virt_to_head(w->caches[i]->mm, fl) != slab) {
			snprintf(msg, len, "S1 violated: %s: vCPU %d freelist %p (tid %#lx) is not in its cpu slab %p "
				 "(at %s)", name, cpu, fl, tid, (void *)slab, where);
			ok = false;
		}
		e->tid_plus1 = tid + 1;
		e->freelist = fl;
		e->slab = slab;
		e->where = where;
	}
	return ok;
}

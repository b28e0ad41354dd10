/* SPDX-License-Identifier: MIT */
/*
 * worker.c - the workers: one op at a time against the mode's interface,
 * each followed by the checks a thread can make without stopping others.
 *
 * A worker holds a live table of allocations (struct alloc).  An op picks
 * a slot: empty, it allocates into it; full, it frees it - on its own
 * vCPU, or by pushing it into the ring the next worker drains (a remote
 * free: allocated on one vCPU, freed on another, like mimalloc's and
 * snmalloc's stress tests).  A slot may hold any kind, so in mixed mode
 * any op may free what another mode allocated.
 *
 * Check levels (--check-level):
 *   0  ownership bitmaps only (no patterns, no T1): raw speed
 *   1  sampled patterns, checked at every free; a random live allocation
 *      re-read and mm_check(1) (T1: this task's depths) every 16 ops
 *   2  full patterns; a re-read and mm_check(1) after every op
 *   3  as 2, with stop-the-world checks four times as often and
 *      validate_slab_cache() in them
 *
 * Every allocator call is logged in the worker's op ring (the watchdog and
 * failure reports print it) and bracketed by in_alloc, so the signal
 * handler can tell interrupts inside allocator calls from the others.
 */
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "stress.h"

#define CALL(w, stmt)               \
	do {                        \
		(w)->in_alloc = 1;  \
		stmt;               \
		(w)->in_alloc = 0;  \
		(w)->win_open = 0;  \
	} while (0)

static inline int cur_cpu(void)
{
	return mm_cpu_current(S.mm);
}

static int gfp_max_zone(gfp_t gfp)
{
	if (gfp & __GFP_DMA)
		return ZONE_DMA;
	if (gfp & __GFP_DMA32)
		return ZONE_DMA32;
	if ((gfp & (__GFP_HIGHMEM | __GFP_MOVABLE)) == (__GFP_HIGHMEM | __GFP_MOVABLE))
		return ZONE_MOVABLE;
	return ZONE_NORMAL;
}

static inline uint64_t new_tag(struct worker *w)
{
	return rng_next(&w->rng) | 1;
}

/*
 * kmalloc's promise: 8 bytes; a power of two is naturally aligned (Linux
 * >= 5.4; 6.6's kmalloc-8k to 8 KiB, no page cap); large: the whole block
 * of order get_order(size), aligned to its size as the direct map aligns
 * every buddy block.
 */
static unsigned long kmalloc_align(size_t size)
{
	if (size > KMALLOC_MAX_CACHE_SIZE) {
		unsigned long b = MM_PAGE_SIZE;
		while (b < size)
			b <<= 1;
		return b;
	}
	if (size >= 8 && !(size & (size - 1)))
		return size;
	return 8;
}

static struct alloc *slot(struct worker *w)
{
	return &w->live[rng_below(&w->rng, (uint64_t)w->nlive)];
}

/* An empty slot, or NULL. */
static struct alloc *empty_slot(struct worker *w)
{
	if (w->nused >= w->nlive)
		return NULL;
	int start = (int)rng_below(&w->rng, (uint64_t)w->nlive);
	for (int i = 0; i < w->nlive; i++) {
		struct alloc *a = &w->live[(start + i) % w->nlive];
		if (a->kind == AK_NONE)
			return a;
	}
	return NULL;
}

static void put_slot(struct worker *w, struct alloc *dst, const struct alloc *a)
{
	*dst = *a;
	w->nused++;
}

static void clear_slot(struct worker *w, struct alloc *a)
{
	a->kind = AK_NONE;
	w->nused--;
}

/* Checks and marks a new allocation that will live in a slot or a batch. */
static bool took(struct worker *w, struct alloc *a, unsigned li, bool zeroed, unsigned long align, int maxz)
{
	oplog_set_ptr(&w->log, li, a->p);
	STAT_INC(w->st.allocs);
	return shadow_take(w, a, zeroed, align, maxz);
}

/* ---------------------------------------------------------------- frees */

static enum stress_op free_op(const struct alloc *a)
{
	return a->kind == AK_PAGE ? OP_FREE_PAGES : a->kind == AK_OBJ ? OP_CACHE_FREE : OP_KFREE;
}

static bool free_local(struct worker *w, const struct alloc *a)
{
	if (!shadow_give(w, a))
		return false;
	oplog_add(&w->log, free_op(a), cur_cpu(), a->kind == AK_PAGE ? a->order : a->size, a->p);
	CALL(w, alloc_free_raw(a));
	STAT_INC(w->st.ops);
	STAT_INC(w->st.frees);
	return true;
}

bool remote_push(struct worker *w, const struct alloc *a)
{
	struct ring *r = w->out;
	unsigned h = atomic_load_explicit(&r->head, memory_order_relaxed);
	if (h - atomic_load_explicit(&r->tail, memory_order_acquire) == STRESS_RING)
		return false;
	r->slot[h % STRESS_RING] = *a;
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
	oplog_add(&w->log, OP_REMOTE_PUSH, cur_cpu(), a->kind, a->p);
	STAT_INC(w->st.remote_sent);
	return true;
}

/* Free what the previous worker handed us: allocated on its vCPU, freed on ours. */
void remote_drain(struct worker *w, int max)
{
	struct ring *r = w->in;
	for (int i = 0; i < max; i++) {
		unsigned t = atomic_load_explicit(&r->tail, memory_order_relaxed);
		if (t == atomic_load_explicit(&r->head, memory_order_acquire))
			return;
		struct alloc a = r->slot[t % STRESS_RING];
		atomic_store_explicit(&r->tail, t + 1, memory_order_release);
		if (!shadow_give(w, &a))
			return;
		oplog_add(&w->log, OP_REMOTE_FREE, cur_cpu(), a.kind, a.p);
		CALL(w, alloc_free_raw(&a));
		STAT_INC(w->st.ops);
		STAT_INC(w->st.frees);
		STAT_INC(w->st.remote_freed);
	}
}

static bool free_slot(struct worker *w, struct alloc *a)
{
	if (S.cfg.remote && S.cfg.threads > 1 && (rng_next(&w->rng) & 3) == 0 && remote_push(w, a)) {
		clear_slot(w, a);
		return true;
	}
	if (!free_local(w, a))
		return false;
	clear_slot(w, a);
	return true;
}

/* ---------------------------------------------------------------- pages and pcp */

/* how: 0 alloc_pages, 1 __get_free_pages, 2 get_zeroed_page */
static bool alloc_pages_into(struct worker *w, struct alloc *dst, gfp_t gfp, unsigned order, int how)
{
	unsigned li = oplog_add(&w->log, how ? OP_ZEROED_PAGE : OP_ALLOC_PAGES, cur_cpu(), order, NULL);
	struct page *pg = NULL;
	unsigned long addr = 0;

	if (how == 0)
		CALL(w, pg = alloc_pages(S.mm, gfp, order));
	else if (how == 1)
		CALL(w, addr = __get_free_pages(S.mm, gfp, order));
	else
		CALL(w, addr = get_zeroed_page(S.mm, gfp));
	STAT_INC(w->st.ops);
	if (how == 2) {
		order = 0;
		gfp |= __GFP_ZERO;
	}
	if (how && addr) {
		pg = virt_to_page(S.mm, (void *)addr);
		if (!pg || page_address(S.mm, pg) != (void *)addr) {
			stress_fail(w, "C1 violated: __get_free_pages returned %#lx, not a page address", addr);
			return false;
		}
	}
	if (!pg) {
		STAT_INC(w->st.fails);
		return true;
	}
	struct alloc a = {
		.p = page_address(S.mm, pg), .page = pg, .tag = new_tag(w),
		.size = (uint32_t)(MM_PAGE_SIZE << order), .kind = AK_PAGE, .order = (uint8_t)order,
		.pad = how != 0,
	};
	put_slot(w, dst, &a);
	return took(w, dst, li, gfp & __GFP_ZERO, MM_PAGE_SIZE << order, gfp_max_zone(gfp));   /* a block: aligned to its order */
}

static const gfp_t pcp_gfps[] = {
	GFP_KERNEL, GFP_KERNEL | __GFP_MOVABLE, GFP_KERNEL | __GFP_RECLAIMABLE, GFP_HIGHUSER_MOVABLE,
	GFP_KERNEL, GFP_NOWAIT | __GFP_NOWARN, GFP_KERNEL | __GFP_MOVABLE, GFP_KERNEL,
};

static bool op_pcp(struct worker *w)
{
	uint64_t r = rng_next(&w->rng);
	if ((r & 1023) < 3) {
		oplog_add(&w->log, OP_DRAIN_LOCAL, cur_cpu(), 0, NULL);
		CALL(w, drain_local_pages(S.mm, NULL));
		STAT_INC(w->st.ops);
		STAT_INC(w->st.drains);
		return true;
	}
	struct alloc *a = slot(w);
	if (a->kind != AK_NONE)
		return free_slot(w, a);
	unsigned order = ((r >> 10) & 15) < 10 ? 0 : 1 + (unsigned)((r >> 14) % PAGE_ALLOC_COSTLY_ORDER);
	gfp_t gfp = pcp_gfps[(r >> 20) & 7];
	if (((r >> 24) & 15) == 0)
		gfp |= __GFP_ZERO;
	return alloc_pages_into(w, a, gfp, order, 0);
}

static const gfp_t page_gfps[] = {
	GFP_KERNEL, GFP_KERNEL | __GFP_DMA, GFP_KERNEL | __GFP_DMA32, GFP_HIGHUSER_MOVABLE,
	GFP_NOWAIT | __GFP_NOWARN, GFP_ATOMIC, GFP_KERNEL | __GFP_RECLAIMABLE, GFP_KERNEL | __GFP_NORETRY,
};

static bool op_pages(struct worker *w)
{
	uint64_t r = rng_next(&w->rng);
	unsigned max = mm_get_config(S.mm)->max_order, order;
	unsigned pick = (unsigned)(r & 63);
	/* High orders only in a few slots, so a thread cannot pin the whole machine. */
	struct alloc *a;
	if (pick < 32) {
		order = 0;
		a = slot(w);
	} else if (pick < 52) {
		order = 1 + (unsigned)((r >> 6) % 3);
		a = slot(w);
	} else if (pick < 62) {
		order = 4 + (unsigned)((r >> 6) % 3);
		a = &w->live[2 + (r >> 12) % 8];
	} else {
		order = 7 + (unsigned)((r >> 6) % 4);
		a = &w->live[(r >> 12) % 2];
	}
	if (order > max)
		order = max;
	if (a->kind != AK_NONE)
		return free_slot(w, a);
	gfp_t gfp = page_gfps[(r >> 16) & 7];
	if (((r >> 20) & 7) == 0)
		gfp |= __GFP_ZERO;
	if (((r >> 23) & 3) == 0)
		gfp |= __GFP_COMP;
	int how = ((r >> 25) & 31) == 0 ? 2 : ((r >> 25) & 31) == 1 ? 1 : 0;
	return alloc_pages_into(w, a, gfp, order, how);
}

/* ---------------------------------------------------------------- bulk */

#define GUARD ((struct page *)(uintptr_t)0x5a5a5a5a5a5a5a5aULL)

/* Hand a batch back: into empty slots, the rest freed with one bulk call. */
static bool bulk_pages_free(struct worker *w, struct page **pages, int n)
{
	bool list = rng_next(&w->rng) & 1;
	struct list_head head;
	INIT_LIST_HEAD(&head);
	unsigned li = oplog_add(&w->log, list ? OP_FREE_PAGE_LIST : OP_RELEASE_PAGES, cur_cpu(), (unsigned)n,
				n ? pages[0] : NULL);
	(void)li;
	if (list) {
		for (int i = 0; i < n; i++)
			if (pages[i])
				list_add(mm_page_lru(pages[i]), &head);
		CALL(w, free_unref_page_list(S.mm, &head));
	} else {
		CALL(w, release_pages(S.mm, pages, (unsigned long)n));   /* NULL entries are skipped */
	}
	STAT_INC(w->st.ops);
	STAT_INC(w->st.bulk_calls);
	return true;
}

/*
 * alloc_pages_bulk_array with a partly populated array: the kernel's
 * contract is to skip populated entries, return the number of populated
 * entries, and never touch past nr_pages (guards after the array).
 */
static bool op_bulk_array(struct worker *w)
{
	struct page *arr[STRESS_BULK_MAX + 2];
	struct alloc held[STRESS_BULK_MAX];           /* the shadow of each entry */
	int n = 1 + (int)rng_below(&w->rng, STRESS_BULK_MAX), pre = 0;

	memset(arr, 0, sizeof(arr));
	arr[n] = arr[n + 1] = GUARD;
	/* Populate some entries with order-0 pages we hold. */
	int want = (int)rng_below(&w->rng, (uint64_t)n / 2 + 1);
	if ((rng_next(&w->rng) & 15) == 0)
		want = n;                                 /* full: must return nr_pages at once */
	for (int tries = 0; pre < want && tries < 4 * want; tries++) {
		struct alloc *a = slot(w);
		if (a->kind != AK_PAGE || a->order != 0 || a->pad)
			continue;
		int at = (int)rng_below(&w->rng, (uint64_t)n);
		if (arr[at])
			continue;
		arr[at] = a->page;
		held[at] = *a;
		clear_slot(w, a);
		pre++;
	}
	struct page *before[STRESS_BULK_MAX];
	memcpy(before, arr, sizeof(struct page *) * (size_t)n);
	int lead = 0;                                 /* the populated prefix the allocator skips */
	while (lead < n && arr[lead])
		lead++;
	gfp_t gfp = (rng_next(&w->rng) & 1) ? GFP_KERNEL : GFP_HIGHUSER_MOVABLE;
	oplog_add(&w->log, OP_BULK_ARRAY, cur_cpu(), (unsigned)n, NULL);
	unsigned long ret;
	CALL(w, ret = alloc_pages_bulk_array(S.mm, gfp, (unsigned long)n, arr));
	STAT_INC(w->st.ops);
	STAT_INC(w->st.bulk_calls);

	/*
	 * The contract (Linux 6.6, after the 2021 fixes): nothing past
	 * nr_pages is touched, populated entries stay, and the return value
	 * is the number of populated entries *from the start of the array*:
	 * [0, ret) are all populated, ret is at least the prefix that was
	 * populated before, and a full array returns nr_pages.  With holes
	 * after the prefix, an early stop (pcp trylock failure, watermark:
	 * the single-page fallback) returns less than the number of non-NULL
	 * entries - xfs and sunrpc call again until ret == nr_pages.
	 */
	if (arr[n] != GUARD || arr[n + 1] != GUARD) {
		stress_fail(w, "bulk contract: __alloc_pages_bulk(nr_pages %d) wrote past the array", n);
		return false;
	}
	unsigned long nonnull = 0;
	for (int i = 0; i < n; i++) {
		if (before[i] && arr[i] != before[i]) {
			stress_fail(w, "bulk contract: populated entry %d of %d changed by __alloc_pages_bulk", i, n);
			return false;
		}
		nonnull += arr[i] != NULL;
	}
	bool prefix_ok = ret <= (unsigned long)n;
	for (unsigned long i = 0; prefix_ok && i < ret; i++)
		prefix_ok = arr[i] != NULL;
	if (!prefix_ok || ret < (unsigned long)lead || (lead == n && ret != (unsigned long)n)) {
		stress_fail(w, "bulk contract: __alloc_pages_bulk(nr_pages %d, %d populated, prefix %d) returned %lu; "
			    "%lu entries are populated now%s", n, pre, lead, ret, nonnull,
			    prefix_ok ? "" : ", not all of [0, ret)");
		return false;
	}
	if (nonnull < (unsigned long)n)
		STAT_INC(w->st.fails);
	for (int i = 0; i < n; i++) {
		if (!arr[i] || before[i])
			continue;
		held[i] = (struct alloc){ .p = page_address(S.mm, arr[i]), .page = arr[i], .tag = new_tag(w),
					  .size = MM_PAGE_SIZE, .kind = AK_PAGE };
		STAT_INC(w->st.allocs);
		STAT_INC(w->st.bulk_objects);
		if (!shadow_take(w, &held[i], false, MM_PAGE_SIZE, gfp_max_zone(gfp)))
			return false;
	}
	/* Keep some, free the rest in one call. */
	int nfree = 0;
	for (int i = 0; i < n; i++) {
		if (!arr[i])
			continue;
		struct alloc *dst = (rng_next(&w->rng) & 1) ? empty_slot(w) : NULL;
		if (dst) {
			put_slot(w, dst, &held[i]);
			arr[i] = NULL;
		} else {
			if (!shadow_give(w, &held[i]))
				return false;
			nfree++;
			STAT_INC(w->st.frees);
		}
	}
	return nfree ? bulk_pages_free(w, arr, n) : true;
}

static bool op_bulk_list(struct worker *w)
{
	struct list_head head;
	int n = 1 + (int)rng_below(&w->rng, STRESS_BULK_MAX);
	INIT_LIST_HEAD(&head);
	oplog_add(&w->log, OP_BULK_LIST, cur_cpu(), (unsigned)n, NULL);
	unsigned long ret;
	CALL(w, ret = alloc_pages_bulk_list(S.mm, GFP_KERNEL, (unsigned long)n, &head));
	STAT_INC(w->st.ops);
	STAT_INC(w->st.bulk_calls);
	struct page *pages[STRESS_BULK_MAX];
	unsigned long cnt = 0;
	while (!list_empty(&head) && cnt <= (unsigned long)n) {
		struct list_head *e = head.next;
		list_del(e);
		pages[cnt++] = mm_lru_to_page(e);
	}
	if (cnt != ret || ret > (unsigned long)n) {
		stress_fail(w, "bulk contract: alloc_pages_bulk_list(%d) returned %lu with %lu%s pages on the list",
			    n, ret, cnt, list_empty(&head) ? "" : "+");
		return false;
	}
	if (cnt < (unsigned long)n)
		STAT_INC(w->st.fails);
	int nfree = 0;
	struct page *tofree[STRESS_BULK_MAX];
	for (unsigned long i = 0; i < cnt; i++) {
		struct alloc a = { .p = page_address(S.mm, pages[i]), .page = pages[i], .tag = new_tag(w),
				   .size = MM_PAGE_SIZE, .kind = AK_PAGE };
		STAT_INC(w->st.allocs);
		STAT_INC(w->st.bulk_objects);
		if (!shadow_take(w, &a, false, MM_PAGE_SIZE, ZONE_NORMAL))
			return false;
		struct alloc *dst = (rng_next(&w->rng) & 1) ? empty_slot(w) : NULL;
		if (dst) {
			put_slot(w, dst, &a);
		} else {
			if (!shadow_give(w, &a))
				return false;
			tofree[nfree++] = pages[i];
			STAT_INC(w->st.frees);
		}
	}
	return nfree ? bulk_pages_free(w, tofree, nfree) : true;
}

/* Free up to @max held order-0 pages with one bulk call. */
static bool op_bulk_free_pages(struct worker *w)
{
	struct page *arr[STRESS_BULK_MAX];
	int n = 0, max = 1 + (int)rng_below(&w->rng, STRESS_BULK_MAX);
	int start = (int)rng_below(&w->rng, (uint64_t)w->nlive);
	for (int i = 0; i < w->nlive && n < max; i++) {
		struct alloc *a = &w->live[(start + i) % w->nlive];
		if (a->kind != AK_PAGE || a->order != 0)
			continue;
		if (!shadow_give(w, a))
			return false;
		arr[n++] = a->page;
		clear_slot(w, a);
		STAT_INC(w->st.frees);
		if (n < max && (rng_next(&w->rng) & 7) == 0)
			arr[n++] = NULL;                 /* release_pages skips NULL entries */
	}
	return n ? bulk_pages_free(w, arr, n) : true;
}

/* kmem_cache_alloc_bulk: all or nothing. */
static bool op_cache_bulk(struct worker *w, int ci)
{
	struct kmem_cache *s = S.caches[ci];
	void *p[STRESS_BULK_MAX + 1];
	size_t n = 1 + rng_below(&w->rng, 32);
	p[n] = (void *)GUARD;
	oplog_add(&w->log, OP_CACHE_BULK_ALLOC, cur_cpu(), n, NULL);
	int ret;
	CALL(w, ret = kmem_cache_alloc_bulk(s, GFP_KERNEL, n, p));
	STAT_INC(w->st.ops);
	STAT_INC(w->st.bulk_calls);
	if (p[n] != (void *)GUARD || (ret != 0 && (size_t)ret != n)) {
		stress_fail(w, "bulk contract: kmem_cache_alloc_bulk(%s, %zu) returned %d%s", kmem_cache_name(s), n,
			    ret, p[n] != (void *)GUARD ? " and wrote past the array" : "");
		return false;
	}
	if (!ret) {
		STAT_INC(w->st.fails);
		return true;
	}
	size_t nfree = 0;
	for (size_t i = 0; i < n; i++) {
		struct alloc a = { .p = p[i], .tag = new_tag(w), .size = kmem_cache_size(s), .kind = AK_OBJ,
				   .cache = (uint8_t)ci };
		STAT_INC(w->st.allocs);
		STAT_INC(w->st.bulk_objects);
		if (!shadow_take(w, &a, false, S.cache_align[ci], MAX_NR_ZONES))
			return false;
		struct alloc *dst = (rng_next(&w->rng) & 1) ? empty_slot(w) : NULL;
		if (dst) {
			put_slot(w, dst, &a);
		} else {
			if (!shadow_give(w, &a))
				return false;
			p[nfree++] = p[i];
			STAT_INC(w->st.frees);
		}
	}
	if (nfree) {
		oplog_add(&w->log, OP_CACHE_BULK_FREE, cur_cpu(), nfree, p[0]);
		CALL(w, kmem_cache_free_bulk(s, nfree, p));
		STAT_INC(w->st.ops);
		STAT_INC(w->st.bulk_calls);
	}
	return true;
}

/* kmem_cache_free_bulk of held objects of one cache, or kfree_bulk of kmalloc'ed ones. */
static bool op_obj_bulk_free(struct worker *w, int kind)
{
	void *p[STRESS_BULK_MAX];
	size_t n = 0, max = 1 + rng_below(&w->rng, 32);
	int ci = -1;
	int start = (int)rng_below(&w->rng, (uint64_t)w->nlive);
	for (int i = 0; i < w->nlive && n < max; i++) {
		struct alloc *a = &w->live[(start + i) % w->nlive];
		if (a->kind != kind || (kind == AK_OBJ && ci >= 0 && a->cache != ci))
			continue;
		if (!shadow_give(w, a))
			return false;
		ci = a->cache;
		p[n++] = a->p;
		clear_slot(w, a);
		STAT_INC(w->st.frees);
	}
	if (!n)
		return true;
	if (kind == AK_OBJ) {
		oplog_add(&w->log, OP_CACHE_BULK_FREE, cur_cpu(), n, p[0]);
		CALL(w, kmem_cache_free_bulk(S.caches[ci], n, p));
	} else {
		oplog_add(&w->log, OP_KFREE_BULK, cur_cpu(), n, p[0]);
		CALL(w, kfree_bulk(S.mm, n, p));
	}
	STAT_INC(w->st.ops);
	STAT_INC(w->st.bulk_calls);
	return true;
}

static int pick_cache(struct worker *w)
{
	uint64_t r = rng_next(&w->rng);
	if (S.debug_cache >= 0 && (r & 63) == 0)
		return S.debug_cache;
	int normal = S.debug_cache >= 0 ? S.ncaches - 1 : S.ncaches;
	return (int)((r >> 6) % (uint64_t)normal);
}

static bool op_bulk(struct worker *w)
{
	uint64_t r = rng_below(&w->rng, 100);
	if (r < 30)
		return op_bulk_array(w);
	if (r < 45)
		return op_bulk_list(w);
	if (r < 65)
		return op_bulk_free_pages(w);
	if (r < 80)
		return op_cache_bulk(w, pick_cache(w));
	if (r < 90)
		return op_obj_bulk_free(w, AK_OBJ);
	struct alloc *a = slot(w);               /* singles keep the table mixed */
	if (a->kind != AK_NONE)
		return free_slot(w, a);
	return alloc_pages_into(w, a, GFP_KERNEL, 0, 0);
}

/* ---------------------------------------------------------------- slub */

/*
 * One slab allocation in eight is GFP_KERNEL|__GFP_MEMALLOC (decided from
 * bits the op already drew, so that a seed's other choices stay what they
 * were): in a pressure phase it takes the reserves, and its slabs are
 * pfmemalloc slabs that the other workers' GFP_KERNEL slow paths deactivate
 * and skip while their fast paths, and remote frees, still use them.
 */
#define STRESS_GFP(memalloc) ((memalloc) ? GFP_KERNEL | __GFP_MEMALLOC : GFP_KERNEL)

static bool cache_alloc_into(struct worker *w, struct alloc *dst, int ci, bool zero, bool memalloc)
{
	struct kmem_cache *s = S.caches[ci];
	unsigned li = oplog_add(&w->log, OP_CACHE_ALLOC, cur_cpu(), (unsigned)ci, NULL);
	gfp_t gfp = STRESS_GFP(memalloc);
	void *p;
	CALL(w, p = zero ? kmem_cache_zalloc(s, gfp) : kmem_cache_alloc(s, gfp));
	STAT_INC(w->st.ops);
	if (!p) {
		STAT_INC(w->st.fails);
		return true;
	}
	struct alloc a = { .p = p, .tag = new_tag(w), .size = kmem_cache_size(s), .kind = AK_OBJ,
			   .cache = (uint8_t)ci };
	put_slot(w, dst, &a);
	return took(w, dst, li, zero, S.cache_align[ci], MAX_NR_ZONES);
}

static bool op_slub(struct worker *w)
{
	uint64_t r = rng_next(&w->rng);
	if ((r & 255) == 0)
		return op_cache_bulk(w, pick_cache(w));
	if ((r & 255) == 1)
		return op_obj_bulk_free(w, AK_OBJ);
	struct alloc *a = slot(w);
	if (a->kind != AK_NONE)
		return free_slot(w, a);
	return cache_alloc_into(w, a, pick_cache(w), ((r >> 8) & 7) == 0, ((r >> 11) & 7) == 0);
}

/* ---------------------------------------------------------------- kmalloc */

static size_t kmalloc_size(struct worker *w)
{
	uint64_t r = rng_next(&w->rng);
	unsigned c = (unsigned)(r % 100);
	r >>= 8;
	if (c < 55)
		return 1 + r % 256;
	if (c < 85)
		return 257 + r % (2048 - 256);
	if (c < 96)
		return 2049 + r % (KMALLOC_MAX_CACHE_SIZE - 2048);
	return KMALLOC_MAX_CACHE_SIZE + 1 + r % (3 * KMALLOC_MAX_CACHE_SIZE);   /* large: the page allocator */
}

/*
 * Large or not is a property of the block, not of the size asked: krealloc
 * shrinks in place, so a large block may now hold 100 bytes, and keeps its
 * order when shrunk.  ksize() tells (it unpoisons up to the usable size
 * under KASAN, so it is asked only where a block may be large).
 */
static void kmalloc_large_fix(struct alloc *a, bool maybe_large)
{
	a->pad = 0;
	a->order = 0;
	if (a->size <= KMALLOC_MAX_CACHE_SIZE && !maybe_large)
		return;
	size_t ks = ksize(S.mm, a->p);
	if (ks > KMALLOC_MAX_CACHE_SIZE) {
		a->pad = 1;
		a->order = (uint8_t)shadow_size_order(ks);
	}
}

static bool kmalloc_into(struct worker *w, struct alloc *dst)
{
	size_t size = kmalloc_size(w);
	unsigned how = (unsigned)rng_below(&w->rng, 20);
	unsigned li = oplog_add(&w->log, OP_KMALLOC, cur_cpu(), size, NULL);
	gfp_t gfp = STRESS_GFP(size % 8 == 3);   /* from the size drawn: no draw of its own */
	void *p;
	bool zero = false;
	if (how < 14) {
		CALL(w, p = kmalloc(S.mm, size, gfp));
	} else if (how < 16) {
		CALL(w, p = kzalloc(S.mm, size, gfp));
		zero = true;
	} else if (how < 18) {
		size_t n = 1 + size % 7;
		size = (size + n - 1) / n * n;
		CALL(w, p = kcalloc(S.mm, n, size / n, gfp));
		zero = true;
	} else {
		size_t n = 1 + size % 5;
		size = (size + n - 1) / n * n;
		CALL(w, p = kmalloc_array(S.mm, n, size / n, gfp));
	}
	STAT_INC(w->st.ops);
	if (!p) {
		STAT_INC(w->st.fails);
		return true;
	}
	struct alloc a = { .p = p, .tag = new_tag(w), .size = (uint32_t)size, .kind = AK_KMALLOC };
	kmalloc_large_fix(&a, false);
	put_slot(w, dst, &a);
	return took(w, dst, li, zero, kmalloc_align(size), MAX_NR_ZONES);
}

/* krealloc keeps min(old, new) bytes: the old pattern must survive in the prefix. */
static bool op_krealloc(struct worker *w, struct alloc *a)
{
	size_t nsize = kmalloc_size(w), keep = nsize < a->size ? nsize : a->size;
	shadow_stamp(a, true);                   /* every byte of the prefix defined */
	if (!shadow_give(w, a))
		return false;
	unsigned li = oplog_add(&w->log, OP_KREALLOC, cur_cpu(), nsize, a->p);
	void *p, *old = a->p;
	CALL(w, p = krealloc(S.mm, a->p, nsize, GFP_KERNEL));
	STAT_INC(w->st.ops);
	if (!p) {                                /* failed: the old block is still ours */
		STAT_INC(w->st.fails);
		/*
		 * Its alignment was checked when it was taken; a->size may since
		 * have shrunk in place (72 bytes in kmalloc-96 asked down to 64),
		 * so kmalloc_align(a->size) would demand what was never promised.
		 */
		return took(w, a, li, false, 8, MAX_NR_ZONES);
	}
	struct alloc n = *a;
	n.p = p;
	n.size = (uint32_t)nsize;
	if (!shadow_check_range(w, &n, 0, keep, "krealloc lost the contents"))
		return false;
	kmalloc_large_fix(&n, a->pad);
	n.tag = new_tag(w);
	*a = n;
	STAT_INC(w->st.frees);
	/* In place keeps the old alignment: only a moved block promises kmalloc's. */
	return took(w, a, li, false, p == old ? 8 : kmalloc_align(nsize), MAX_NR_ZONES);
}

static bool op_kmalloc(struct worker *w)
{
	uint64_t r = rng_next(&w->rng);
	if ((r & 127) == 0)
		return op_obj_bulk_free(w, AK_KMALLOC);
	struct alloc *a = slot(w);
	if (a->kind == AK_NONE)
		return kmalloc_into(w, a);
	if (a->kind == AK_KMALLOC) {
		unsigned c = (unsigned)((r >> 7) % 100);
		if (c < 12)
			return op_krealloc(w, a);
		if (c < 16) {
			oplog_add(&w->log, OP_KSIZE, cur_cpu(), a->size, a->p);
			size_t ks;
			CALL(w, ks = ksize(S.mm, a->p));
			STAT_INC(w->st.ops);
			if (ks < a->size) {
				stress_fail(w, "ksize(%p) is %zu, less than the %u bytes asked", a->p, ks, a->size);
				return false;
			}
			return true;
		}
	}
	return free_slot(w, a);
}

/* ---------------------------------------------------------------- dispatch */

bool worker_op(struct worker *w, enum stress_mode mode)
{
	switch (mode) {
	case MODE_PAGES: return op_pages(w);
	case MODE_PCP: return op_pcp(w);
	case MODE_BULK: return op_bulk(w);
	case MODE_SLUB: return op_slub(w);
	case MODE_KMALLOC: return op_kmalloc(w);
	default: {
		uint64_t r = rng_below(&w->rng, 100);
		if (r < 30)
			return op_pcp(w);
		if (r < 55)
			return op_slub(w);
		if (r < 75)
			return op_kmalloc(w);
		if (r < 88)
			return op_pages(w);
		return op_bulk(w);
	}
	}
}

void worker_release_all(struct worker *w)
{
	for (int i = 0; i < w->nlive && !atomic_load(&S.failed); i++)
		if (w->live[i].kind != AK_NONE && free_local(w, &w->live[i]))
			clear_slot(w, &w->live[i]);
	if (S.cfg.remote)
		remote_drain(w, STRESS_RING);
}

/* ---------------------------------------------------------------- the thread */

static void t1_check(struct worker *w)
{
	struct mm_violation v;
	STAT_INC(w->st.t1_checks);
	oplog_add(&w->log, OP_CHECK, cur_cpu(), 1, NULL);
	if (!mm_check(S.mm, 1, &v))
		stress_fail(w, "mm_check(1) after op %lu: %s", STAT(w->st.ops), v.msg);
}

void *worker_main(void *arg)
{
	struct worker *w = arg;
	int level = S.cfg.check_level;
	unsigned long every = level >= 2 ? 1 : 16;
	unsigned long slice = S.cfg.threads > S.cfg.cpus ? 64 : 1024;
	unsigned long n = 0;
	bool planted = false;               /* --selftest: worker 0's fault is in */

	stress_self = w;
	atomic_store(&w->tid, (int)syscall(SYS_gettid));
	stress_wait_hook_install();
	gate_start_wait();
	double t0 = stress_now();
	atomic_store(&w->state, WS_RUNNING);

	while (!atomic_load_explicit(&S.stop, memory_order_relaxed)) {
		/*
		 * --ops: then on until every injection fired, within the time
		 * bound (else VACUOUS).  No bound in ops: a small K ends in a
		 * fraction of the first stop-the-world check's period.
		 */
		if (S.cfg.ops && STAT(w->st.ops) >= S.cfg.ops &&
		    (atomic_load_explicit(&S.satisfied, memory_order_relaxed) ||
		     stress_now() - S.t0 > STRESS_OPS_EXTEND_S))
			break;
		if (gate_requested())
			gate_poll(w);
		if (!worker_op(w, S.cfg.mode))
			break;
		stress_tid_check(w, "between ops");
		if (S.cfg.remote && S.cfg.threads > 1)
			remote_drain(w, 2);
		n++;
		if (S.cfg.selftest && w->id == 0 && n >= STRESS_SELFTEST_FROM_OP && !planted)
			planted = stress_selftest_fire(w);
		if (level >= 1 && n % every == 0) {
			struct alloc *a = slot(w);
			if (a->kind != AK_NONE) {
				STAT_INC(w->st.verifies);
				if (!shadow_verify(w, a, level >= 2))
					break;
			}
			t1_check(w);
		}
		if (n % slice == 0) {
			/* a timeslice: others waiting for a vCPU get one */
			oplog_add(&w->log, OP_SLICE, cur_cpu(), 0, NULL);
			mm_cpu_detach(S.mm);
			STAT_INC(w->st.slices);
			if (S.cfg.threads > S.cfg.cpus)
				sched_yield();
		}
		atomic_store_explicit(&w->progress, n, memory_order_relaxed);
	}
	w->seconds = stress_now() - t0;
	worker_release_all(w);
	oplog_add(&w->log, OP_EXIT, cur_cpu(), 0, NULL);
	mm_cpu_detach(S.mm);
	atomic_store(&w->state, WS_DONE);
	gate_leave();
	/* Stay alive until nobody signals this thread any more. */
	while (!atomic_load(&S.aux_joined))
		usleep(1000);
	stress_self = NULL;
	return NULL;
}

/* SPDX-License-Identifier: MIT */
/*
 * slub.c - fuzz target for SLUB caches through the public API: caches of
 * fuzzed size, alignment and flags (SLAB_HWCACHE_ALIGN, the slub_debug
 * flags F/Z/P/U, DMA32, reclaim accounting) with or without a ctor;
 * kmem_cache_alloc / zalloc / free on the owning and on remote vCPUs (one
 * thread switching vCPUs with mm_cpu_attach), bulk alloc and free, shrink,
 * validate, destroy; interrupts (an irq handler that allocates and frees
 * GFP_ATOMIC objects into a small pool) and vCPU migrations injected at the
 * fast path's preemption points (TID_READ, BEFORE/AFTER_CMPXCHG,
 * SLAB_CMPXCHG, SLAB_SLOWPATH), as armed by the input; and bad frees
 * (double free, interior pointer, another cache's object).
 *
 * Checked on top of the harness's per-op mm_check and shadow (C1: every
 * object inside the arena, aligned as the cache promises, disjoint from
 * every live object, its pattern intact until it is freed):
 *  - kmem_cache_get_info agrees with what was asked (object_size, align);
 *  - zalloc'ed objects are zero; objects of a ctor cache come out
 *    constructed (the ctor's word) and are given back constructed;
 *  - bulk allocation is all or nothing;
 *  - a bad free is reported exactly once, and validate_slab_cache finds
 *    nothing afterwards;
 *  - destroying a cache whose objects are all freed reports nothing;
 *    validate_slab_cache of any cache finds nothing.
 * Teardown frees everything, destroys the input's caches and shrinks the
 * kmalloc caches, so the instance is back to its initial state.
 */
#include <string.h>

#include "common/configs.h"
#include "common/harness.h"
#include "common/instance.h"
#include "common/shadow.h"
#include "mm/cpu.h"
#include "mm/slab.h"

enum { K_OBJ = 0, K_IRQ = 1 };       /* shadow kinds: the task's objects, the irq handler's pool */

/*
 * In ASan builds the allocator's KASAN stops the program at a bad free (as
 * the kernel's KASAN does), so bad_free is skipped there; the gcc replay
 * build checks the reports.
 */
#if defined(__SANITIZE_ADDRESS__)
#define SLUB_FZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLUB_FZ_ASAN 1
#endif
#endif

#define MAX_CACHES  8
#define IRQ_POOL    16
#define CTOR_WORD   0xc7c7c7c7a5a5a5a5ULL

struct cache_slot {
	struct kmem_cache *s;
	unsigned int size, align;       /* as asked */
	unsigned int promise;           /* the alignment objects must have */
	slab_flags_t flags;
	bool ctor;
};

static const char *const points[] = { "tid_read", "before_cmpxchg", "after_cmpxchg", "slab_cmpxchg",
				      "slab_slowpath", "any" };
static const enum mm_pp point_ids[] = { MM_PP_TID_READ, MM_PP_BEFORE_CMPXCHG, MM_PP_AFTER_CMPXCHG,
					MM_PP_SLAB_CMPXCHG, MM_PP_SLAB_SLOWPATH, MM_PP_NONE };
static const char *const actions[] = { "irq", "migrate", "irq_migrate" };
enum { ACT_IRQ, ACT_MIGRATE, ACT_BOTH };
static const char *const irq_orders[] = { "lifo", "fifo" };
static const char *const aligns[] = { "0", "8", "16", "32", "64", "128", "256", "1024" };
static const unsigned int align_val[] = { 0, 8, 16, 32, 64, 128, 256, 1024 };
static const char *const bad_kinds[] = { "double", "interior", "wrong_cache", "double_fresh" };
enum { BAD_DOUBLE, BAD_INTERIOR, BAD_WRONG, BAD_DOUBLE_FRESH };
/*
 * Reports each bad free must make (mm/slab.h: every "BUG <cache>:" line and
 * every "FIX <cache>:" line counts one, as slub_kunit's slab_errors does):
 * the debug free checks report the bad object and the fix ("Object at ...
 * not freed"); cache_from_obj's "Wrong slab cache" and the hardened
 * freelist's naive double-free check are one line each.
 */
static const unsigned int expected_reports[] = { 2, 2, 1, 1 };

static const struct mf_flag cache_flags[] = {
	{ "SLAB_HWCACHE_ALIGN", SLAB_HWCACHE_ALIGN },
	{ "SLAB_CONSISTENCY_CHECKS", SLAB_CONSISTENCY_CHECKS },
	{ "SLAB_RED_ZONE", SLAB_RED_ZONE },
	{ "SLAB_POISON", SLAB_POISON },
	{ "SLAB_STORE_USER", SLAB_STORE_USER },
	{ "SLAB_CACHE_DMA32", SLAB_CACHE_DMA32 },
	{ "SLAB_RECLAIM_ACCOUNT", SLAB_RECLAIM_ACCOUNT },
	{ "SLAB_NO_MERGE", SLAB_NO_MERGE },
};
static const struct mf_flag cache_aliases[] = {
	{ "FZPU", SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER },
	{ NULL, 0 },
};

struct slub_state {
	struct mf_ctx *c;
	struct cache_slot caches[MAX_CACHES];
	unsigned int ncaches;
	int ncpus;
	/* the armed injection */
	bool armed;
	enum mm_pp point;
	int action;
	long skip, fires;
	int mig_cpu;
	unsigned int irq_cache, irq_nalloc, irq_nfree;
	bool irq_fifo;
	unsigned long irq_runs, injected;
	struct mf_alloc *pool[IRQ_POOL];
	unsigned int npool;
};

static struct slub_state ss;

/* ------------------------------------------------------------ helpers */

static void ctor_fn(void *p)
{
	uint64_t w = CTOR_WORD;
	memcpy(p, &w, sizeof(w));
}

static struct cache_slot *pick_cache(unsigned long idx)
{
	if (!ss.ncaches)
		return NULL;
	return &ss.caches[idx % ss.ncaches];
}

static unsigned int slot_of(const struct cache_slot *cs) { return (unsigned int)(cs - ss.caches); }

static void to_cpu(struct mf_ctx *c, long cpu)
{
	int r = mm_cpu_attach(c->mm, (int)(cpu % ss.ncpus));
	if (r < 0)
		mf_fail(c, "C1", "mm_cpu_attach(%ld) failed: %d", cpu % ss.ncpus, r);
}

/* Take a fresh object of @cs into the shadow after checking what the API promises. */
static struct mf_alloc *take(struct mf_ctx *c, struct cache_slot *cs, void *p, bool zeroed, unsigned int kind)
{
	if (cs->ctor && !zeroed) {
		uint64_t w;
		memcpy(&w, p, sizeof(w));
		if (w != CTOR_WORD)
			mf_fail(c, "C1", "object %p of ctor cache %s is not constructed (first word %#llx)", p,
				kmem_cache_name(cs->s), (unsigned long long)w);
	}
	struct mf_alloc *a = mf_shadow_add(c, kind, p, cs->size, cs->promise, zeroed);
	a->order = slot_of(cs);
	a->handle = cs->s;
	return a;
}

/* Check the pattern, forget the object; the caller frees it. */
static void untake(struct mf_ctx *c, struct mf_alloc *a)
{
	struct cache_slot *cs = &ss.caches[a->order];
	void *p = (void *)a->addr;
	mf_shadow_remove(c, a);
	if (cs->ctor)
		ctor_fn(p);     /* objects go back constructed */
}

static void pool_forget(struct mf_alloc *a)
{
	for (unsigned int i = 0; i < ss.npool; i++)
		if (ss.pool[i] == a) {
			memmove(&ss.pool[i], &ss.pool[i + 1], (ss.npool - i - 1) * sizeof(ss.pool[0]));
			ss.npool--;
			return;
		}
}

static void free_obj(struct mf_ctx *c, struct mf_alloc *a)
{
	struct kmem_cache *s = a->handle;
	void *p = (void *)a->addr;
	if (a->kind == K_IRQ)
		pool_forget(a);
	untake(c, a);
	kmem_cache_free(s, p);
}

/* ------------------------------------------------------------ interrupts and migrations */

static void irq_handler(struct mm *mm, int cpu, void *ctx)
{
	struct mf_ctx *c = ctx;
	(void)mm;
	(void)cpu;
	ss.irq_runs++;
	if (ss.irq_cache >= ss.ncaches || !ss.caches[ss.irq_cache].s)
		return;
	struct cache_slot *cs = &ss.caches[ss.irq_cache];
	for (unsigned int i = 0; i < ss.irq_nalloc && ss.npool < IRQ_POOL && !mf_shadow_full(c->sh); i++) {
		void *p = kmem_cache_alloc(cs->s, GFP_ATOMIC);
		if (!p)
			break;
		ss.pool[ss.npool++] = take(c, cs, p, false, K_IRQ);
	}
	for (unsigned int i = 0; i < ss.irq_nfree && ss.npool; i++) {
		struct mf_alloc *a = ss.irq_fifo ? ss.pool[0] : ss.pool[ss.npool - 1];
		free_obj(c, a);
	}
}

static void sched_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	(void)ctx;
	if (!ss.armed || ss.fires <= 0)
		return;
	if (ss.point != MM_PP_NONE && point != ss.point)
		return;
	if (ss.point == MM_PP_NONE && (point < MM_PP_TID_READ || point > MM_PP_SLAB_CMPXCHG))
		return;
	if (ss.skip > 0) {
		ss.skip--;
		return;
	}
	bool done = false;
	if (ss.action == ACT_IRQ || ss.action == ACT_BOTH)
		done |= mm_raise_irq(mm);
	if (ss.action == ACT_MIGRATE || ss.action == ACT_BOTH)
		done |= mm_migrate_current(mm, ss.mig_cpu % ss.ncpus) >= 0;
	if (done) {
		ss.injected++;
		ss.fires--;
	}
}

/* ------------------------------------------------------------ ops */

static void note_obj(FILE *f, const struct mf_op *op)
{
	if (op->res[0] == -1)
		fprintf(f, "no candidate");
	else if (op->res[0] == -2)
		fprintf(f, "skipped: the shadow is full");
	else if (op->res[0] == -3)
		fprintf(f, "the allocator said no");
	else
		fprintf(f, "a%ld in cache %ld", op->res[0], op->res[1]);
}

static void note_count(FILE *f, const struct mf_op *op) { fprintf(f, "%ld", op->res[0]); }

static void op_create(struct mf_ctx *c, struct mf_op *op)
{
	unsigned int size = (unsigned int)op->a[0], align = align_val[op->a[1]];
	slab_flags_t flags = (slab_flags_t)op->a[2];
	bool ctor = op->a[3];
	char name[32];

	op->res[0] = -1;
	if (ss.ncaches >= MAX_CACHES)
		return;
	if (ctor && size < 8)
		size = 8;
	snprintf(name, sizeof(name), "fz%u", ss.ncaches);
	struct kmem_cache *s = kmem_cache_create(c->mm, name, size, align, flags, ctor ? ctor_fn : NULL);
	if (!s) {
		op->res[0] = -3;
		return;
	}
	struct cache_slot *cs = &ss.caches[ss.ncaches++];
	cs->s = s;
	cs->size = size;
	cs->align = align;
	cs->flags = flags;
	cs->ctor = ctor;
	/* calculate_alignment(): the asked one, at least 8; with SLAB_HWCACHE_ALIGN the cache line's, halved while the object fits twice. */
	cs->promise = align < 8 ? 8 : align;
	if (flags & SLAB_HWCACHE_ALIGN) {
		unsigned int ralign = 64;
		while (size <= ralign / 2)
			ralign /= 2;
		if (ralign > cs->promise)
			cs->promise = ralign;
	}
	struct kmem_cache_info info;
	if (kmem_cache_get_info(s, &info))
		mf_fail(c, "C1", "kmem_cache_get_info failed for a new cache");
	if (info.object_size != size)
		mf_fail(c, "C1", "cache %s: object_size %u, asked for %u", name, info.object_size, size);
	if (info.align < cs->promise || (info.align & (info.align - 1)))
		mf_fail(c, "C1", "cache %s: align %u, promised %u", name, info.align, cs->promise);
	if (info.size < size)
		mf_fail(c, "C1", "cache %s: stride %u below object_size %u", name, info.size, size);
	op->res[0] = ss.ncaches - 1;
	op->res[1] = info.size;
	op->res[2] = info.objects_per_slab;
	op->res[3] = info.align;
}

static void note_create(FILE *f, const struct mf_op *op)
{
	if (op->res[0] == -1)
		fprintf(f, "too many caches");
	else if (op->res[0] == -3)
		fprintf(f, "kmem_cache_create said no");
	else
		fprintf(f, "cache %ld: stride %ld, %ld per slab, align %ld", op->res[0], op->res[1], op->res[2],
			op->res[3]);
}

static void op_alloc(struct mf_ctx *c, struct mf_op *op)
{
	struct cache_slot *cs = pick_cache((unsigned long)op->a[0]);
	bool zero = op->a[2];

	op->res[0] = -1;
	if (!cs)
		return;
	if (mf_shadow_full(c->sh)) {
		op->res[0] = -2;
		return;
	}
	if (cs->ctor)
		zero = false;   /* __GFP_ZERO with a ctor is a caller bug */
	to_cpu(c, op->a[1]);
	void *p = zero ? kmem_cache_zalloc(cs->s, GFP_KERNEL) : kmem_cache_alloc(cs->s, GFP_KERNEL);
	if (!p) {
		op->res[0] = -3;
		return;
	}
	if (mf_shadow_full(c->sh)) {    /* the irq pool filled it meanwhile */
		kmem_cache_free(cs->s, p);
		op->res[0] = -2;
		return;
	}
	struct mf_alloc *a = take(c, cs, p, zero, K_OBJ);
	op->res[0] = a->id;
	op->res[1] = slot_of(cs);
}

static void op_free(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *a = mf_shadow_pick_kind(c->sh, (unsigned long)op->a[0], 1u << K_OBJ);
	op->res[0] = -1;
	if (!a)
		return;
	op->res[0] = a->id;
	op->res[1] = a->order;
	to_cpu(c, op->a[1]);
	free_obj(c, a);
}

static void op_touch(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *a = mf_shadow_pick(c->sh, (unsigned long)op->a[0]);
	op->res[0] = -1;
	if (!a)
		return;
	op->res[0] = a->id;
	op->res[1] = a->order;
	mf_shadow_touch(c, a);
}

static void op_alloc_bulk(struct mf_ctx *c, struct mf_op *op)
{
	struct cache_slot *cs = pick_cache((unsigned long)op->a[0]);
	size_t n = (size_t)op->a[1];
	void *p[64];

	op->res[0] = -1;
	if (!cs)
		return;
	if (c->sh->nlive + n + IRQ_POOL > MF_MAX_LIVE) {
		op->res[0] = -2;
		return;
	}
	to_cpu(c, op->a[2]);
	memset(p, 0, sizeof(p));
	int got = kmem_cache_alloc_bulk(cs->s, GFP_KERNEL, n, p);
	if (got != 0 && (size_t)got != n)
		mf_fail(c, "C1", "kmem_cache_alloc_bulk of %zu returned %d: all or nothing", n, got);
	for (int i = 0; i < got; i++) {
		if (!p[i])
			mf_fail(c, "C1", "kmem_cache_alloc_bulk returned %d but p[%d] is NULL", got, i);
		take(c, cs, p[i], false, K_OBJ);
	}
	op->res[0] = got;
}

static void op_free_bulk(struct mf_ctx *c, struct mf_op *op)
{
	struct mf_alloc *first = mf_shadow_pick_kind(c->sh, (unsigned long)op->a[1], 1u << K_OBJ);
	void *p[64];
	size_t n = 0;

	op->res[0] = 0;
	if (!first)
		return;
	unsigned int slot = first->order;
	struct kmem_cache *s = first->handle;
	to_cpu(c, op->a[2]);
	/* Up to n objects of first's cache, from first on. */
	for (unsigned long k = 0; k < mf_shadow_count(c->sh) && n < (size_t)op->a[0]; k++) {
		struct mf_alloc *a = mf_shadow_pick(c->sh, (unsigned long)op->a[1] + k);
		if (a->kind != K_OBJ || a->order != slot)
			continue;
		bool dup = false;
		for (size_t j = 0; j < n; j++)
			dup |= p[j] == (void *)a->addr;
		if (dup)
			continue;
		p[n++] = (void *)a->addr;
	}
	for (size_t j = 0; j < n; j++)
		untake(c, mf_shadow_find(c->sh, (uintptr_t)p[j]));
	kmem_cache_free_bulk(s, n, p);
	op->res[0] = (long)n;
}

static void op_shrink(struct mf_ctx *c, struct mf_op *op)
{
	struct cache_slot *cs = pick_cache((unsigned long)op->a[0]);
	op->res[0] = -1;
	if (!cs)
		return;
	to_cpu(c, op->a[1]);
	op->res[0] = kmem_cache_shrink(cs->s);
}

static void op_validate(struct mf_ctx *c, struct mf_op *op)
{
	struct cache_slot *cs = pick_cache((unsigned long)op->a[0]);
	op->res[0] = -1;
	if (!cs)
		return;
	long e = validate_slab_cache(cs->s);
	if (e)
		mf_fail(c, "C1", "validate_slab_cache(%s) found %ld errors in a correct program: %s",
			kmem_cache_name(cs->s), e, mm_nr_reports(c->mm) ? mm_last_report(c->mm)->msg : "");
	op->res[0] = 0;
}

/* Free every live object of @cs (the task's and the irq pool's). */
static void free_all_of(struct mf_ctx *c, struct cache_slot *cs)
{
	for (unsigned int i = mf_shadow_count(c->sh); i-- > 0;) {
		struct mf_alloc *a = c->sh->live[i];
		if (i < mf_shadow_count(c->sh) && a->handle == cs->s)
			free_obj(c, a);
	}
}

static void destroy_slot(struct mf_ctx *c, unsigned int slot)
{
	struct cache_slot *cs = &ss.caches[slot];
	bool was = ss.armed;
	ss.armed = false;
	free_all_of(c, cs);
	unsigned long r = mm_nr_reports(c->mm);
	kmem_cache_destroy(cs->s);
	if (mm_nr_reports(c->mm) != r)
		mf_fail(c, "C1", "kmem_cache_destroy of a cache with every object freed reported: %s",
			mm_last_report(c->mm)->msg);
	/* Move the last slot into this one (and renumber its objects). */
	unsigned int last = ss.ncaches - 1;
	if (slot != last) {
		ss.caches[slot] = ss.caches[last];
		for (unsigned int i = 0; i < mf_shadow_count(c->sh); i++)
			if (c->sh->live[i]->order == last)
				c->sh->live[i]->order = slot;
	}
	if (ss.irq_cache == last)
		ss.irq_cache = slot;
	else if (ss.irq_cache == slot)
		ss.irq_cache = MAX_CACHES;
	memset(&ss.caches[last], 0, sizeof(ss.caches[last]));
	ss.ncaches--;
	ss.armed = was;
}

static void op_destroy(struct mf_ctx *c, struct mf_op *op)
{
	struct cache_slot *cs = pick_cache((unsigned long)op->a[0]);
	op->res[0] = -1;
	if (!cs)
		return;
	op->res[0] = slot_of(cs);
	to_cpu(c, op->a[1]);
	destroy_slot(c, slot_of(cs));
}

static void op_arm(struct mf_ctx *c, struct mf_op *op)
{
	ss.armed = true;
	ss.point = point_ids[op->a[0]];
	ss.action = (int)op->a[1];
	ss.skip = op->a[2];
	ss.fires = op->a[3];
	ss.mig_cpu = (int)op->a[4];
	struct cache_slot *cs = pick_cache((unsigned long)op->a[5]);
	ss.irq_cache = cs ? slot_of(cs) : MAX_CACHES;
	ss.irq_nalloc = (unsigned int)op->a[6];
	ss.irq_nfree = (unsigned int)op->a[7];
	ss.irq_fifo = op->a[8];
	(void)c;
}

static void op_disarm(struct mf_ctx *c, struct mf_op *op)
{
	(void)c;
	(void)op;
	ss.armed = false;
}

static void op_cpu(struct mf_ctx *c, struct mf_op *op)
{
	to_cpu(c, op->a[0]);
}

/* A bad free: reported exactly once, the cache validates clean afterwards. */
static void op_bad_free(struct mf_ctx *c, struct mf_op *op)
{
	int kind = (int)op->a[0];
	bool was = ss.armed;
	struct mf_alloc *a = NULL;
	struct cache_slot *cs = NULL, *other = NULL;
	void *p;

	op->res[0] = -1;
#ifdef SLUB_FZ_ASAN
	op->res[0] = -5;
	(void)was; (void)a; (void)cs; (void)other; (void)p; (void)kind;
	return;
#endif
	/* The first live object from idx on in a cache that checks (F), or any cache for double_fresh. */
	if (kind == BAD_DOUBLE_FRESH) {
		cs = pick_cache((unsigned long)op->a[1]);
		if (!cs || (cs->flags & SLAB_DEBUG_FLAGS) || mf_shadow_full(c->sh))
			return;
	} else {
		for (unsigned int k = 0; k < mf_shadow_count(c->sh) && !a; k++) {
			struct mf_alloc *x = mf_shadow_pick_kind(c->sh, (unsigned long)op->a[1] + k, 1u << K_OBJ);
			if (x && (ss.caches[x->order].flags & SLAB_CONSISTENCY_CHECKS))
				a = x;
		}
		if (!a)
			return;
		cs = &ss.caches[a->order];
		if (kind == BAD_INTERIOR && cs->size < 2)
			return;
		if (kind == BAD_WRONG) {
			for (unsigned int k = 0; k < ss.ncaches && !other; k++) {
				struct cache_slot *o = &ss.caches[(a->order + 1 + k) % ss.ncaches];
				if (o != cs && (o->flags & SLAB_CONSISTENCY_CHECKS))
					other = o;
			}
			if (!other)
				return;
		}
	}
	ss.armed = false;
	to_cpu(c, op->a[2]);
	switch (kind) {
	case BAD_DOUBLE_FRESH:
		/* Freed on the vCPU that allocated it: it is the cpu freelist's head. */
		p = kmem_cache_alloc(cs->s, GFP_KERNEL);
		if (!p) {
			op->res[0] = -3;
			ss.armed = was;
			return;
		}
		a = take(c, cs, p, false, K_OBJ);
		op->res[0] = a->id;
		free_obj(c, a);
		c->reports_before = mm_nr_reports(c->mm);
		kmem_cache_free(cs->s, p);
		break;
	case BAD_DOUBLE:
		p = (void *)a->addr;
		op->res[0] = a->id;
		free_obj(c, a);
		c->reports_before = mm_nr_reports(c->mm);
		kmem_cache_free(cs->s, p);
		break;
	case BAD_INTERIOR:
		op->res[0] = a->id;
		c->reports_before = mm_nr_reports(c->mm);
		kmem_cache_free(cs->s, (char *)a->addr + 1 + (unsigned long)op->a[3] % (cs->size - 1));
		break;
	case BAD_WRONG:
		op->res[0] = a->id;
		c->reports_before = mm_nr_reports(c->mm);
		/* Reported, and (as the kernel does) freed to the cache it belongs to. */
		p = (void *)a->addr;
		untake(c, a);
		kmem_cache_free(other->s, p);
		break;
	}
	op->res[1] = slot_of(cs);
	unsigned long n = mm_nr_reports(c->mm);
	op->res[2] = (long)(n - c->reports_before);
	if (n != c->reports_before + expected_reports[kind])
		mf_fail(c, "C1", "bad free (%s) in cache %s: expected exactly %u report(s), mm_nr_reports went "
			"from %lu to %lu%s%s", bad_kinds[kind], kmem_cache_name(cs->s), expected_reports[kind], c->reports_before, n,
			n ? ": last " : "", n ? mm_last_report(c->mm)->msg : "");
	const struct mm_report *r = mm_last_report(c->mm);
	if (!r->kind[0] || !r->msg[0])
		mf_fail(c, "C1", "bad free: the report has no kind or no message");
	c->reports_before = n;
	long e = validate_slab_cache(cs->s);
	if (e)
		mf_fail(c, "C1", "after a reported bad free (%s) validate_slab_cache(%s) found %ld errors: %s",
			bad_kinds[kind], kmem_cache_name(cs->s), e, mm_last_report(c->mm)->msg);
	c->reports_before = mm_nr_reports(c->mm);
	ss.armed = was;
}

static void note_bad(FILE *f, const struct mf_op *op)
{
	if (op->res[0] == -1)
		fprintf(f, "no candidate");
	else if (op->res[0] == -3)
		fprintf(f, "the allocator said no");
	else if (op->res[0] == -5)
		fprintf(f, "skipped: KASAN stops at bad frees in ASan builds");
	else
		fprintf(f, "a%ld in cache %ld: %ld report(s)", op->res[0], op->res[1], op->res[2]);
}

/* ------------------------------------------------------------ the table */

static const struct mf_opdesc slub_setup = {
	"setup", "the machine: a named config (targets/common/configs.c) and the number of vCPUs", NULL, NULL,
	{ MF_A_ENUM("config", mf_config_names), MF_A_INT("cpus", 1, 4) },
};

static const struct mf_opdesc slub_ops[] = {
	{ "create", "kmem_cache_create(size, align, flags, ctor?)", op_create, note_create,
	  { MF_A_INT("size", 1, 9000), MF_A_ENUM("align", aligns), MF_A_FLAGS("flags", cache_flags, cache_aliases),
	    MF_A_BOOL("ctor") } },
	{ "alloc", "kmem_cache_alloc / kmem_cache_zalloc on vCPU cpu", op_alloc, note_obj,
	  { MF_A_IDX("cache"), MF_A_INT("cpu", 0, 3), MF_A_BOOL("zero") } },
	{ "free", "kmem_cache_free of a live object on vCPU cpu (remote when not its owner)", op_free, note_obj,
	  { MF_A_IDX("idx"), MF_A_INT("cpu", 0, 3) } },
	{ "touch", "rewrite every byte of a live object (after checking it)", op_touch, note_obj,
	  { MF_A_IDX("idx") } },
	{ "alloc_bulk", "kmem_cache_alloc_bulk of n objects (all or nothing)", op_alloc_bulk, note_count,
	  { MF_A_IDX("cache"), MF_A_INT("n", 1, 64), MF_A_INT("cpu", 0, 3) } },
	{ "free_bulk", "kmem_cache_free_bulk of up to n live objects of one cache", op_free_bulk, note_count,
	  { MF_A_INT("n", 1, 64), MF_A_IDX("idx"), MF_A_INT("cpu", 0, 3) } },
	{ "shrink", "kmem_cache_shrink", op_shrink, note_count, { MF_A_IDX("cache"), MF_A_INT("cpu", 0, 3) } },
	{ "validate", "validate_slab_cache finds nothing", op_validate, note_count, { MF_A_IDX("cache") } },
	{ "destroy", "free every object of a cache, then kmem_cache_destroy (must report nothing)", op_destroy,
	  note_count, { MF_A_IDX("cache"), MF_A_INT("cpu", 0, 3) } },
	{ "arm", "at the skip-th later hit of point: raise an interrupt (the handler allocates nalloc "
	  "GFP_ATOMIC objects of cache into its pool, then frees nfree of the pool) and/or migrate to cpu; "
	  "fires times", op_arm, NULL,
	  { MF_A_ENUM("point", points), MF_A_ENUM("action", actions), MF_A_INT("skip", 0, 63),
	    MF_A_INT("fires", 1, 16), MF_A_INT("cpu", 0, 3), MF_A_IDX("cache"), MF_A_INT("nalloc", 0, 4),
	    MF_A_INT("nfree", 0, 4), MF_A_ENUM("order", irq_orders) } },
	{ "disarm", "no more injections", op_disarm, NULL, { { .name = NULL } } },
	{ "cpu", "switch the task to vCPU cpu", op_cpu, NULL, { MF_A_INT("cpu", 0, 3) } },
	{ "bad_free", "a bad free (double free / interior pointer / another cache's object on a debug "
	  "cache; double free of the cpu freelist's head on a non-debug one): reported once",
	  op_bad_free, note_bad,
	  { MF_A_ENUM("kind", bad_kinds), MF_A_IDX("idx"), MF_A_INT("cpu", 0, 3), MF_A_INT("off", 0, 65535) } },
};

/* ------------------------------------------------------------ lifecycle */

static void slub_config_of(const struct mf_op *setup, struct mm_config *cfg)
{
	mf_config_named(cfg, (enum mf_config_kind)setup->a[0], (unsigned int)setup->a[1]);
}

static bool slub_begin(struct mf_ctx *c, const struct mf_op *setup)
{
	struct mm_config cfg;

	slub_config_of(setup, &cfg);
	if (!mf_instance(c, &cfg))
		mf_fail(c, "C1", "mm_create failed for the named config %s", mf_config_names[setup->a[0]]);
	memset(&ss, 0, sizeof(ss));
	ss.c = c;
	ss.ncpus = (int)cfg.nr_cpus;
	if (ss.ncpus < 1)
		ss.ncpus = 1;
	ss.irq_cache = MAX_CACHES;
	mm_set_irq_handler(c->mm, irq_handler, c);
	mm_set_sched_hook(c->mm, sched_hook, c);
	to_cpu(c, 0);
	return true;
}

static void slub_release(struct mf_ctx *c, struct mf_alloc *a)
{
	ss.armed = false;
	free_obj(c, a);
}

static void slub_end(struct mf_ctx *c)
{
	ss.armed = false;
	while (ss.ncaches)
		destroy_slot(c, ss.ncaches - 1);
	mm_set_sched_hook(c->mm, NULL, NULL);
	mm_set_irq_handler(c->mm, NULL, NULL);
	for (struct kmem_cache *s = kmem_cache_next(c->mm, NULL); s; s = kmem_cache_next(c->mm, s))
		kmem_cache_shrink(s);
}

static const struct mf_target slub_target = {
	.name = "slub",
	.setup = &slub_setup,
	.ops = slub_ops,
	.nops = sizeof(slub_ops) / sizeof(slub_ops[0]),
	.check_level = 2,
	.final_level = 3,
	.begin = slub_begin,
	.release = slub_release,
	.end = slub_end,
	.config_of = slub_config_of,
};

MF_TARGET(slub_target)

/* SPDX-License-Identifier: MIT */
/*
 * slub.c - fuzz target for SLUB caches through the public API: caches of
 * fuzzed size, alignment and flags (SLAB_HWCACHE_ALIGN, the slub_debug
 * flags F/Z/P/U, DMA and DMA32, reclaim accounting) with or without a ctor;
 * kmem_cache_alloc / zalloc / free on the owning and on remote vCPUs (one
 * thread switching vCPUs with mm_cpu_attach), bulk alloc and free, shrink,
 * validate, destroy; interrupts (an irq handler that allocates and frees
 * GFP_ATOMIC objects into a small pool) and vCPU migrations injected at the
 * fast path's preemption points (TID_READ, BEFORE/AFTER_CMPXCHG,
 * SLAB_CMPXCHG, SLAB_SLOWPATH) and at the generic points (spin_unlock,
 * local_unlock, irq_restore, ...), raised, left pending or delivered
 * through the signal entry, as armed by the input - inside ops only; bad
 * frees (double free, interior pointer, another cache's object); SLUB's
 * options mid-run (slub_debug per cache, fast path, hardening,
 * randomisation, init_on_alloc/free, orders, failing new slabs, invalid
 * options), put back by the input's own teardown; destroy with
 * objects left (the leak report), CPU hotplug, corrupted red zones and
 * poison found by validate_slab_cache, kmem_cache_create's refusals and
 * introspection (get_info, statistics, /proc/slabinfo).
 *
 * Checked on top of the harness's per-op mm_check and shadow (C1: every
 * object inside the arena, aligned as the cache promises, disjoint from
 * every live object, its pattern intact until it is freed):
 *  - the object's page is in a zone the cache promises: ZONE_DMA or below
 *    for SLAB_CACHE_DMA, ZONE_DMA32 or below for SLAB_CACHE_DMA32 (the
 *    checker's S1-S3 look at slabs, not at their zones);
 *  - kmem_cache_get_info agrees with what was asked (object_size, align);
 *  - zalloc'ed objects, and bulk ones with __GFP_ZERO, are zero; objects
 *    of a ctor cache come out constructed (the ctor's word) and are given
 *    back constructed;
 *  - bulk allocation is all or nothing;
 *  - a bad free is reported exactly once, and validate_slab_cache finds
 *    nothing afterwards;
 *  - destroying a cache whose objects are all freed reports nothing;
 *    validate_slab_cache of any cache finds nothing;
 *  - no op reports anything it does not expect (mm_nr_reports).
 * Teardown frees everything, destroys the input's caches and shrinks the
 * kmalloc caches, so the instance is back to its initial state.
 */
#include <stdlib.h>
#include <string.h>

#include "debug.h"
#include "common/cgen.h"
#include "common/configs.h"
#include "common/harness.h"
#include "common/instance.h"
#include "common/pages.h"
#include "common/shadow.h"
#include "common/slub_opts.h"
#include "mm/cpu.h"
#include "mm/slab.h"

enum { K_OBJ = 0, K_IRQ = 1 };       /* shadow kinds: the task's objects, the irq handler's pool */

/*
 * In ASan builds the allocator's KASAN stops the program at a bad free (as
 * the kernel's KASAN does), so bad_free is skipped there; the gcc replay
 * build checks the reports.  MM_ASAN: debug.h.
 */

#define MAX_CACHES  8
#define IRQ_POOL    16
#define CTOR_WORD   0xc7c7c7c7a5a5a5a5ULL

struct cache_slot {
	struct kmem_cache *s;
	unsigned int size, align;       /* as asked */
	unsigned int promise;           /* the alignment objects must have */
	int zone;                       /* the highest zone its slab pages may be in; -1: any */
	slab_flags_t flags;             /* in force (kmem_cache_get_info): asked | slub_debug's */
	slab_flags_t asked;
	bool ctor;
	int hardened;                   /* its freelist hardening: 0, 1, or HARD_UNKNOWN */
	bool dead;                      /* destroyed with objects left: only frees of those remain */
	unsigned long singles;          /* objects the fuzz run got from kmem_cache_alloc/zalloc (not bulk) */
	unsigned int cid;               /* its creation number: name fz<cid>, s<cid> in the C reproducer */
};
#define HARD_UNKNOWN 2

/*
 * "any" is any of the fast path's own points (TID_READ .. SLAB_CMPXCHG);
 * the generic ones after it (preempt_enable, spin_unlock, the irqoff fast
 * path's irq_restore, ...) are where pending interrupts get delivered.
 */
static const char *const points[] = { "tid_read", "before_cmpxchg", "after_cmpxchg", "slab_cmpxchg",
				      "slab_slowpath", "any", "preempt_enable", "spin_unlock", "mutex_unlock",
				      "local_unlock", "irq_restore", "bulk" };
static const enum mm_pp point_ids[] = { MM_PP_TID_READ, MM_PP_BEFORE_CMPXCHG, MM_PP_AFTER_CMPXCHG,
					MM_PP_SLAB_CMPXCHG, MM_PP_SLAB_SLOWPATH, MM_PP_NONE, MM_PP_PREEMPT_ENABLE,
					MM_PP_SPIN_UNLOCK, MM_PP_MUTEX_UNLOCK, MM_PP_LOCAL_UNLOCK,
					MM_PP_IRQ_RESTORE, MM_PP_BULK };
/*
 * irq: mm_raise_irq (refused where irqs are off); pending: mark one pending,
 * as if it arrived masked (it runs at the next point with irqs on); signal:
 * the stressors' signal entry, mm_irq_from_signal (runs it now or leaves it
 * pending).
 */
static const char *const actions[] = { "irq", "migrate", "irq_migrate", "pending", "signal" };
enum { ACT_IRQ, ACT_MIGRATE, ACT_BOTH, ACT_PENDING, ACT_SIGNAL };
static const char *const irq_orders[] = { "lifo", "fifo" };
/* Beyond a page too: 6.6 bounds align by nothing but the largest slab (kmem_cache_create() refuses more). */
static const char *const aligns[] = { "0", "8", "16", "32", "64", "128", "256", "1024", "2048", "4096", "8192",
				      "16384" };
static const unsigned int align_val[] = { 0, 8, 16, 32, 64, 128, 256, 1024, 2048, 4096, 8192, 16384 };
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
	{ "SLAB_CACHE_DMA", SLAB_CACHE_DMA },   /* last: the bits above keep their place in the input bytes */
};
static const struct mf_flag cache_aliases[] = {
	{ "FZPU", SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER },
	{ NULL, 0 },
};

struct slub_state {
	struct mf_ctx *c;
	struct cache_slot caches[MAX_CACHES];
	unsigned int ncaches;
	unsigned int created;           /* caches created so far (names) */
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
	bool irq_off;                   /* the handler does nothing (destroy, validate, configure run) */
	bool in_op;                     /* an op runs (not the harness's check): injections allowed */
	/* SLUB's options as this input left them */
	bool opts_changed;
	bool st_hardened;               /* slab_freelist_hardened now */
	bool st_init_free;              /* init_on_free now */
	bool o_seen;                    /* an options op had slub_debug's O: Z, P and U may be off (O_META) */
};

static struct slub_state ss;

/* The flags slub_debug's O may take from a cache (DEBUG_METADATA_FLAGS), once an options op had an O. */
static slab_flags_t o_meta(void)
{
	return ss.o_seen ? SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER : 0;
}

/* ------------------------------------------------------------ helpers */

static void ctor_fn(void *p)
{
	uint64_t w = CTOR_WORD;
	memcpy(p, &w, sizeof(w));
}

/* The first live (not destroyed) cache from idx on. */
static struct cache_slot *pick_cache(unsigned long idx)
{
	for (unsigned int k = 0; k < ss.ncaches; k++) {
		struct cache_slot *cs = &ss.caches[(idx + k) % ss.ncaches];
		if (!cs->dead)
			return cs;
	}
	return NULL;
}

static unsigned int slot_of(const struct cache_slot *cs) { return (unsigned int)(cs - ss.caches); }

/* The first online vCPU from @cpu on (the hotplug op may have taken some offline). */
static int online_from(struct mf_ctx *c, long cpu)
{
	for (int k = 0; k < ss.ncpus; k++) {
		int v = (int)((cpu + k) % ss.ncpus);
		if (mm_cpu_is_online(c->mm, v))
			return v;
	}
	mf_fail(c, "C1", "no vCPU is online");
}

static void to_cpu(struct mf_ctx *c, long cpu)
{
	int v = online_from(c, cpu);
	mf_cgen_call(c, "(void)mm_cpu_attach(mm, %d);", v);
	int r = mm_cpu_attach(c->mm, v);
	MF_C(c, "\tmm_cpu_attach(mm, %d);\n", v);
	if (r != v)
		mf_fail(c, "C1", "mm_cpu_attach(%d) of an online vCPU returned %d", v, r);
}

/* Nothing but the op's expected reports: any other is a false positive of the allocator's checks. */
static void expect_quiet(struct mf_ctx *c, const char *what)
{
	MF_C(c, "\tquiet(%u, \"%s\");\n", c->cur, what);
	if (mm_nr_reports(c->mm) != c->reports_before)
		mf_fail(c, "C1", "%s in a correct program reported: %s", what, mm_last_report(c->mm)->msg);
}

/* The reports so far are the op's, accounted for (the C file's rep0 and reports_ok too). */
static void reports_mark(struct mf_ctx *c)
{
	mf_reports_accounted(c);
	MF_C(c, "\trep0 = mm_nr_reports(mm);\n");
}

/*
 * The C file's allocation call, before take(): the object will be o<id>.
 * NULL: the call failed in the fuzz run too (the op gives up).
 */
static void emit_alloc(struct mf_ctx *c, struct cache_slot *cs, const char *fn, const char *gfp, void *p)
{
	if (p)
		cs->singles++;
	if (!p)
		MF_C(c, "\tdiverged(%u, %s(s%u, %s) != NULL, \"the allocation succeeded; in the fuzz run it failed\");\n",
		     c->cur, fn, cs->cid, gfp);
	else
		MF_C(c, "\tvoid *o%u = %s(s%u, %s);\n\tdiverged(%u, !o%u, \"the allocation failed; in the fuzz run it "
		     "succeeded\");\n", c->sh->next_id, fn, cs->cid, gfp, c->cur, c->sh->next_id);
}

/*
 * The zone promise of a SLAB_CACHE_DMA / SLAB_CACHE_DMA32 cache: its slab
 * pages come from alloc_pages with __GFP_DMA / __GFP_DMA32 (allocflags), so
 * every object is in that zone or a lower one.  The C file gets the same
 * check as a pfn bound: the end of the highest populated zone allowed.
 */
static void check_zone(struct mf_ctx *c, const struct cache_slot *cs, void *p, unsigned int id)
{
	if (cs->zone < 0)
		return;
	const struct mm_config *cfg = mf_config(c);
	unsigned long limit = 0;
	for (int z = 0; z <= cs->zone; z++)
		if (cfg->zones[z].end_pfn > cfg->zones[z].start_pfn && cfg->zones[z].end_pfn > limit)
			limit = cfg->zones[z].end_pfn;
	MF_C(c, "\texpect(%u, virt_to_page(mm, o%u) && page_to_pfn(mm, virt_to_page(mm, o%u)) < %#lxUL, "
	     "\"the object's page is in the zone its cache promises (%s or below)\");\n", c->cur, id, id, limit,
	     mf_zone_name(cs->zone));
	struct page *page = virt_to_page(c->mm, p);
	unsigned long pfn = page ? page_to_pfn(c->mm, page) : 0;
	int z = page ? mf_zone_of_pfn(cfg, pfn) : -1;
	if (z < 0 || z > cs->zone)
		mf_fail(c, "C1", "object %p of %s cache %s is on pfn %#lx in zone %s, not in %s or below", p,
			cs->zone == ZONE_DMA ? "SLAB_CACHE_DMA" : "SLAB_CACHE_DMA32", kmem_cache_name(cs->s), pfn,
			mf_zone_name(z), mf_zone_name(cs->zone));
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
	unsigned int id = c->sh->next_id;
	if (cs->ctor && !zeroed)
		MF_C(c, "\texpect(%u, ctor_ok(o%u), \"an object of a ctor cache comes out constructed\");\n", c->cur, id);
	MF_C(c, "\texpect(%u, ((uintptr_t)o%u & %u) == 0, \"aligned as the cache promises\");\n", c->cur, id,
	     cs->promise - 1);
	check_zone(c, cs, p, id);
	if (zeroed)
		MF_C(c, "\texpect_zero(%u, o%u, %u);\n", c->cur, id, cs->size);
	MF_C(c, "\ttrack(%u, %u, o%u, %u);\n", c->cur, id, id, cs->size);
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
	MF_C(c, "\tuntrack(%u, %u);\n", c->cur, a->id);
	if (cs->ctor)
		MF_C(c, "\tctor(o%u);\n", a->id);
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
	unsigned int id = a->id, cid = ss.caches[a->order].cid;
	if (a->kind == K_IRQ)
		pool_forget(a);
	untake(c, a);
	mf_cgen_call(c, "kmem_cache_free(caches[%u], o%u);", cid, id);
	kmem_cache_free(s, p);
	MF_C(c, "\tkmem_cache_free(s%u, o%u);\n", cid, id);
}

/* ------------------------------------------------------------ interrupts and migrations */

static void irq_actions(struct mf_ctx *c)
{
	if (!ss.in_op || ss.irq_off || c->tearing_down || ss.irq_cache >= ss.ncaches || !ss.caches[ss.irq_cache].s ||
	    ss.caches[ss.irq_cache].dead)
		return;
	struct cache_slot *cs = &ss.caches[ss.irq_cache];
	for (unsigned int i = 0; i < ss.irq_nalloc && ss.npool < IRQ_POOL && !mf_shadow_full(c->sh); i++) {
		mf_cgen_call(c, "(void)kmem_cache_alloc(caches[%u], GFP_ATOMIC);", cs->cid);
		void *p = kmem_cache_alloc(cs->s, GFP_ATOMIC);
		MF_C(c, "\t{\n\tstruct kmem_cache *s%u = caches[%u];\n", cs->cid, cs->cid);
		emit_alloc(c, cs, "kmem_cache_alloc", "GFP_ATOMIC", p);
		if (!p) {
			MF_C(c, "\t}\n");
			break;
		}
		struct mf_alloc *a = take(c, cs, p, false, K_IRQ);
		ss.pool[ss.npool++] = a;
		mf_cgen_irq_keep(c, a->id, 'o');
		MF_C(c, "\t}\n");
	}
	for (unsigned int i = 0; i < ss.irq_nfree && ss.npool; i++) {
		struct mf_alloc *a = ss.irq_fifo ? ss.pool[0] : ss.pool[ss.npool - 1];
		unsigned int cid = ss.caches[a->order].cid;
		MF_C(c, "\t{\n\tstruct kmem_cache *s%u = caches[%u];\n", cid, cid);
		mf_cgen_irq_get(c, a->id, 'o');
		free_obj(c, a);
		MF_C(c, "\t}\n");
	}
}

/* The C reproducer's handler makes the calls of this run again (mf_cgen_irq_begin). */
static void irq_handler(struct mm *mm, int cpu, void *ctx)
{
	struct mf_ctx *c = ctx;
	(void)mm;
	(void)cpu;
	ss.irq_runs++;
	mf_cgen_irq_begin(c, ss.irq_runs);
	irq_actions(c);
	mf_cgen_irq_end(c);
}

static void sched_hook(struct mm *mm, enum mm_pp point, void *ctx)
{
	unsigned long n = mf_cgen_point(ss.c);   /* the C reproducer's hook counts every point too */
	(void)ctx;
	if (!ss.in_op || !ss.armed || ss.fires <= 0)
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
	int to = -1, got = 0;
	int irq = ss.action == ACT_IRQ || ss.action == ACT_BOTH ? 1 : ss.action == ACT_PENDING ? 2 :
		  ss.action == ACT_SIGNAL ? 3 : 0;
	/* The act before the interrupt: a run dying in the handler keeps it. */
	size_t act = mf_cgen_act(ss.c, n, (int)point, irq, false, 0, 0);
	if (irq == 1)
		done |= mm_raise_irq(mm);
	if (irq == 2) {
		mm_set_irq_pending(mm);
		done = true;
	}
	if (irq == 3) {
		mm_irq_from_signal();
		done = true;
	}
	if (ss.action == ACT_MIGRATE || ss.action == ACT_BOTH) {
		for (int k = 0; k < ss.ncpus && to < 0; k++)
			if (mm_cpu_is_online(mm, (ss.mig_cpu + k) % ss.ncpus))
				to = (ss.mig_cpu + k) % ss.ncpus;
		done |= to >= 0 && (got = mm_migrate_current(mm, to)) >= 0;
		if (to >= 0)
			mf_cgen_act_mig(ss.c, act, to, got);
	}
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
	/* Both zone flags: gfp_zone(__GFP_DMA | __GFP_DMA32) is GFP_ZONE_BAD, a caller bug; keep the stricter. */
	if ((flags & SLAB_CACHE_DMA) && (flags & SLAB_CACHE_DMA32))
		flags &= ~(slab_flags_t)SLAB_CACHE_DMA32;
	unsigned int cid = ss.created;
	snprintf(name, sizeof(name), "fz%u", ss.created++);   /* unique in the input: slabinfo lines, slub_debug lists */
	mf_cgen_call(c, "(void)kmem_cache_create(mm, \"%s\", %u, %u, %#x, %s);", name, size, align, (unsigned int)flags,
		     ctor ? "ctor" : "NULL");
	struct kmem_cache *s = kmem_cache_create(c->mm, name, size, align, flags, ctor ? ctor_fn : NULL);
	MF_C(c, "\tstruct kmem_cache *s%u = kmem_cache_create(mm, \"%s\", %u, %u, %#x, %s);\n", cid, name, size, align,
	     (unsigned int)flags, ctor ? "ctor" : "NULL");
	MF_C(c, "\tdiverged(%u, s%u %s NULL, \"kmem_cache_create %s; in the fuzz run it %s\");\n\tcaches[%u] = s%u;\n",
	     c->cur, cid, s ? "==" : "!=", s ? "failed" : "succeeded", s ? "succeeded" : "failed", cid, cid);
	/* No slab order meets an align beyond the largest block (6.6's calculate_order() finds none). */
	if (s && align > (MM_PAGE_SIZE << mf_config(c)->max_order))
		mf_fail(c, "C1", "kmem_cache_create(%s, align %u) succeeded, beyond the largest block (order %u)", name,
			align, mf_config(c)->max_order);
	if (!s) {
		op->res[0] = -3;
		return;
	}
	struct cache_slot *cs = &ss.caches[ss.ncaches++];
	cs->s = s;
	cs->size = size;
	cs->align = align;
	cs->flags = flags;
	cs->asked = flags;
	cs->ctor = ctor;
	cs->hardened = ss.st_hardened;
	cs->dead = false;
	cs->singles = 0;
	cs->cid = cid;
	cs->zone = (flags & SLAB_CACHE_DMA) ? ZONE_DMA : (flags & SLAB_CACHE_DMA32) ? ZONE_DMA32 : -1;
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
	MF_C(c, "\tinfo_ok(%u, s%u, %u, %u, %#x);\n", c->cur, cid, size, cs->promise, (unsigned int)(flags & ~o_meta()));
	if (kmem_cache_get_info(s, &info))
		mf_fail(c, "C1", "kmem_cache_get_info failed for a new cache");
	if (info.object_size != size)
		mf_fail(c, "C1", "cache %s: object_size %u, asked for %u", name, info.object_size, size);
	if (info.align < cs->promise || (info.align & (info.align - 1)))
		mf_fail(c, "C1", "cache %s: align %u, promised %u", name, info.align, cs->promise);
	if (info.size < size)
		mf_fail(c, "C1", "cache %s: stride %u below object_size %u", name, info.size, size);
	/*
	 * slub_debug= may have added debug flags, never removed asked ones -
	 * but its O takes red zone, poison and tracking from a cache they
	 * would move to a higher page order, asked or not (6.6's
	 * disable_higher_order_debug).
	 */
	if ((info.flags & flags & ~o_meta()) != (flags & ~o_meta()))
		mf_fail(c, "C1", "cache %s: flags %#x lack some of the asked %#x", name, info.flags, flags);
	cs->flags = info.flags;
	expect_quiet(c, "kmem_cache_create");
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
	mf_cgen_call(c, "(void)%s(caches[%u], GFP_KERNEL);", zero ? "kmem_cache_zalloc" : "kmem_cache_alloc", cs->cid);
	void *p = zero ? kmem_cache_zalloc(cs->s, GFP_KERNEL) : kmem_cache_alloc(cs->s, GFP_KERNEL);
	if (p && mf_shadow_full(c->sh))
		MF_C(c, "\t{ void *t = %s(s%u, GFP_KERNEL); kmem_cache_free(s%u, t); }   /* the fuzz run's shadow was full */\n",
		     zero ? "kmem_cache_zalloc" : "kmem_cache_alloc", cs->cid, cs->cid);
	else
		emit_alloc(c, cs, zero ? "kmem_cache_zalloc" : "kmem_cache_alloc", "GFP_KERNEL", p);
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
	expect_quiet(c, "kmem_cache_alloc");
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
	expect_quiet(c, "kmem_cache_free");
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
	MF_C(c, "\ttouch(%u, %u);\n", c->cur, a->id);
}

static void op_alloc_bulk(struct mf_ctx *c, struct mf_op *op)
{
	struct cache_slot *cs = pick_cache((unsigned long)op->a[0]);
	size_t n = (size_t)op->a[1];
	bool zero = op->a[3];
	void *p[64];

	op->res[0] = -1;
	if (!cs)
		return;
	if (c->sh->nlive + n + IRQ_POOL > MF_MAX_LIVE) {
		op->res[0] = -2;
		return;
	}
	if (cs->ctor)
		zero = false;   /* __GFP_ZERO with a ctor is a caller bug */
	to_cpu(c, op->a[2]);
	memset(p, 0, sizeof(p));
	gfp_t gfp = zero ? GFP_KERNEL | __GFP_ZERO : GFP_KERNEL;
	const char *gfp_text = zero ? "GFP_KERNEL | __GFP_ZERO" : "GFP_KERNEL";
	mf_cgen_call(c, "memset(bulk, 0, sizeof(bulk)); (void)kmem_cache_alloc_bulk(caches[%u], %s, %zu, bulk);", cs->cid,
		     gfp_text, n);
	int got = kmem_cache_alloc_bulk(cs->s, gfp, n, p);
	MF_C(c, "\tmemset(bulk, 0, sizeof(bulk));\n\tgot = kmem_cache_alloc_bulk(s%u, %s, %zu, bulk);\n"
	     "\texpect(%u, got == 0 || got == %zu, \"kmem_cache_alloc_bulk is all or nothing\");\n"
	     "\tdiverged(%u, got != %d, \"kmem_cache_alloc_bulk's result\");\n", cs->cid, gfp_text, n, c->cur, n,
	     c->cur, got);
	if (got != 0 && (size_t)got != n)
		mf_fail(c, "C1", "kmem_cache_alloc_bulk of %zu returned %d: all or nothing", n, got);
	for (int i = 0; i < got; i++) {
		if (!p[i])
			mf_fail(c, "C1", "kmem_cache_alloc_bulk returned %d but p[%d] is NULL", got, i);
		MF_C(c, "\tvoid *o%u = bulk[%d];\n", c->sh->next_id, i);
		take(c, cs, p[i], zero, K_OBJ);
	}
	op->res[0] = got;
	expect_quiet(c, "kmem_cache_alloc_bulk");
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
	for (size_t j = 0; j < n; j++) {
		struct mf_alloc *a = mf_shadow_find(c->sh, (uintptr_t)p[j]);
		MF_C(c, "\tbulk[%zu] = o%u;\n", j, a->id);
		untake(c, a);
	}
	mf_cgen_call(c, "kmem_cache_free_bulk(caches[%u], %zu, bulk);", ss.caches[slot].cid, n);
	kmem_cache_free_bulk(s, n, p);
	MF_C(c, "\tkmem_cache_free_bulk(s%u, %zu, bulk);\n", ss.caches[slot].cid, n);
	op->res[0] = (long)n;
	expect_quiet(c, "kmem_cache_free_bulk");
}

static void op_shrink(struct mf_ctx *c, struct mf_op *op)
{
	struct cache_slot *cs = pick_cache((unsigned long)op->a[0]);
	op->res[0] = -1;
	if (!cs)
		return;
	to_cpu(c, op->a[1]);
	mf_cgen_call(c, "kmem_cache_shrink(caches[%u]);", cs->cid);
	op->res[0] = kmem_cache_shrink(cs->s);
	MF_C(c, "\tkmem_cache_shrink(s%u);\n", cs->cid);
	expect_quiet(c, "kmem_cache_shrink");
}

static void op_validate(struct mf_ctx *c, struct mf_op *op)
{
	struct cache_slot *cs = pick_cache((unsigned long)op->a[0]);
	op->res[0] = -1;
	if (!cs)
		return;
	/* validate_slab_cache() wants no concurrent user of the cache: no interrupt work meanwhile. */
	ss.irq_off = true;
	mf_cgen_call(c, "(void)validate_slab_cache(caches[%u]);", cs->cid);
	long e = validate_slab_cache(cs->s);
	MF_C(c, "\texpect(%u, validate_slab_cache(s%u) == 0, \"validate_slab_cache finds nothing\");\n", c->cur, cs->cid);
	ss.irq_off = false;
	if (e)
		mf_fail(c, "C1", "validate_slab_cache(%s) found %ld errors in a correct program: %s",
			kmem_cache_name(cs->s), e, mm_nr_reports(c->mm) ? mm_last_report(c->mm)->msg : "");
	expect_quiet(c, "validate_slab_cache");
	op->res[0] = 0;
}

/* Free every live object of @cs (the task's and the irq pool's). */
/*
 * Free every object of @cs the target holds - again and again until none
 * is left: an interrupt made pending before (an `arm ... action=pending`
 * whose irq no check has delivered yet: with MMFUZZ_CHECK_LEVEL=0 nothing
 * between ops does) can arrive at a preemption point of these frees, and
 * its handler allocates from this cache into the pool - objects appended
 * to live[] behind the loop, which kmem_cache_destroy() then rightly
 * reported as still allocated.
 */
static void free_all_of(struct mf_ctx *c, struct cache_slot *cs)
{
	for (bool again = true; again;) {
		again = false;
		for (unsigned int i = mf_shadow_count(c->sh); i-- > 0;) {
			struct mf_alloc *a = c->sh->live[i];
			if (i < mf_shadow_count(c->sh) && a->handle == cs->s) {
				free_obj(c, a);
				again = true;
			}
		}
	}
}

/* Forget slot @slot (its cache is destroyed and holds no object of ours). */
static void drop_slot(struct mf_ctx *c, unsigned int slot)
{
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
}

static void destroy_slot(struct mf_ctx *c, unsigned int slot)
{
	struct cache_slot *cs = &ss.caches[slot];
	bool was = ss.armed;
	ss.armed = false;
	free_all_of(c, cs);
	if (!cs->dead) {
		unsigned long r = mm_nr_reports(c->mm);
		ss.irq_off = true;
		mf_cgen_call(c, "rep0 = mm_nr_reports(mm); kmem_cache_destroy(caches[%u]);", cs->cid);
		kmem_cache_destroy(cs->s);
		MF_C(c, "\trep0 = mm_nr_reports(mm);\n\tkmem_cache_destroy(s%u);\n"
		     "\tquiet(%u, \"kmem_cache_destroy of a cache with every object freed\");\n", cs->cid, c->cur);
		ss.irq_off = false;
		if (mm_nr_reports(c->mm) != r)
			mf_fail(c, "C1", "kmem_cache_destroy of a cache with every object freed reported: %s",
				mm_last_report(c->mm)->msg);
	}
	drop_slot(c, slot);
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
	MF_C(c, "\t/* no allocator call: the hooks act at later preemption points (hook_script() after main()) */\n");
}

static void op_disarm(struct mf_ctx *c, struct mf_op *op)
{
	(void)op;
	ss.armed = false;
	MF_C(c, "\t/* no allocator call: no more injections */\n");
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
	/*
	 * init_on_free zeroes an object in slab_free_hook(), before any check
	 * (Linux 6.6's order): a second free of it wipes the free pointer of a
	 * free object, an interior pointer wipes a neighbour - no report can
	 * undo that.  Only the wrong-cache free (of a valid object) stays.
	 */
	if (ss.st_init_free && kind != BAD_WRONG)
		return;
#ifdef MM_ASAN         /* debug.h */
	MF_C(c, "\t/* skipped in this (ASan) build: KASAN stops at bad frees */\n");
	op->res[0] = -5;
	(void)was; (void)a; (void)cs; (void)other; (void)p; (void)kind;
	return;
#endif
	/* The first live object from idx on in a cache that checks (F), or any cache for double_fresh. */
	if (kind == BAD_DOUBLE_FRESH) {
		cs = pick_cache((unsigned long)op->a[1]);
		/* Only the hardened freelist's naive check catches it (slab_freelist_hardened=0: a real double free). */
		if (!cs || (cs->flags & SLAB_DEBUG_FLAGS) || cs->hardened != 1 || mf_shadow_full(c->sh))
			return;
	} else {
		for (unsigned int k = 0; k < mf_shadow_count(c->sh) && !a; k++) {
			struct mf_alloc *x = mf_shadow_pick_kind(c->sh, (unsigned long)op->a[1] + k, 1u << K_OBJ);
			if (x && (ss.caches[x->order].flags & SLAB_CONSISTENCY_CHECKS) && !ss.caches[x->order].dead)
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
				if (o != cs && (o->flags & SLAB_CONSISTENCY_CHECKS) && !o->dead)
					other = o;
			}
			if (!other)
				return;
		}
	}
	ss.armed = false;
	ss.irq_off = true;              /* validate_slab_cache below: no interrupt work meanwhile */
	to_cpu(c, op->a[2]);
	switch (kind) {
	case BAD_DOUBLE_FRESH:
		/* Freed on the vCPU that allocated it: it is the cpu freelist's head. */
		p = kmem_cache_alloc(cs->s, GFP_KERNEL);
		emit_alloc(c, cs, "kmem_cache_alloc", "GFP_KERNEL", p);
		if (!p) {
			op->res[0] = -3;
			ss.irq_off = false;
			ss.armed = was;
			return;
		}
		a = take(c, cs, p, false, K_OBJ);
		op->res[0] = a->id;
		free_obj(c, a);
		reports_mark(c);
		mf_cgen_call(c, "kmem_cache_free(caches[%u], o%ld);", cs->cid, op->res[0]);
		kmem_cache_free(cs->s, p);
		MF_C(c, "\tkmem_cache_free(s%u, o%ld);   /* again */\n", cs->cid, op->res[0]);
		break;
	case BAD_DOUBLE:
		p = (void *)a->addr;
		op->res[0] = a->id;
		free_obj(c, a);
		reports_mark(c);
		mf_cgen_call(c, "kmem_cache_free(caches[%u], o%ld);", cs->cid, op->res[0]);
		kmem_cache_free(cs->s, p);
		MF_C(c, "\tkmem_cache_free(s%u, o%ld);   /* again */\n", cs->cid, op->res[0]);
		break;
	case BAD_INTERIOR:
		op->res[0] = a->id;
		reports_mark(c);
		mf_cgen_call(c, "kmem_cache_free(caches[%u], (char *)o%u + %lu);", cs->cid, a->id,
			     1 + (unsigned long)op->a[3] % (cs->size - 1));
		kmem_cache_free(cs->s, (char *)a->addr + 1 + (unsigned long)op->a[3] % (cs->size - 1));
		MF_C(c, "\tkmem_cache_free(s%u, (char *)o%u + %lu);   /* inside the object */\n", cs->cid, a->id,
		     1 + (unsigned long)op->a[3] % (cs->size - 1));
		break;
	case BAD_WRONG:
		op->res[0] = a->id;
		reports_mark(c);
		/* Reported, and (as the kernel does) freed to the cache it belongs to. */
		p = (void *)a->addr;
		untake(c, a);
		mf_cgen_call(c, "kmem_cache_free(caches[%u], o%ld);", other->cid, op->res[0]);
		kmem_cache_free(other->s, p);
		MF_C(c, "\tkmem_cache_free(s%u, o%ld);   /* an object of s%u */\n", other->cid, op->res[0], cs->cid);
		break;
	}
	op->res[1] = slot_of(cs);
	unsigned long n = mm_nr_reports(c->mm);
	op->res[2] = (long)(n - c->reports_before);
	/*
	 * A double free whose first free emptied the slab and had it
	 * discarded (the node already held min_partial slabs) frees into a
	 * page that is no longer a slab: cache_from_obj's one "not a Slab
	 * page" report, as the kernel's WARN, is then all there is.
	 */
	unsigned int want = expected_reports[kind];
	if (kind == BAD_DOUBLE && n == c->reports_before + 1 && strstr(mm_last_report(c->mm)->msg, "not a Slab page"))
		want = 1;
	MF_C(c, "\texpect(%u, mm_nr_reports(mm) == rep0 + %u, \"the bad free (%s) is reported exactly %u time(s)\");\n"
	     "\texpect(%u, mm_last_report(mm)->kind[0] && mm_last_report(mm)->msg[0], \"the report has a kind and a "
	     "message\");\n", c->cur, want, bad_kinds[kind], want, c->cur);
	if (n != c->reports_before + want)
		mf_fail(c, "C1", "bad free (%s) in cache %s: expected exactly %u report(s), mm_nr_reports went "
			"from %lu to %lu%s%s", bad_kinds[kind], kmem_cache_name(cs->s), want, c->reports_before, n,
			n ? ": last " : "", n ? mm_last_report(c->mm)->msg : "");
	const struct mm_report *r = mm_last_report(c->mm);
	if (!r->kind[0] || !r->msg[0])
		mf_fail(c, "C1", "bad free: the report has no kind or no message");
	reports_mark(c);
	mf_cgen_call(c, "(void)validate_slab_cache(caches[%u]);", cs->cid);
	long e = validate_slab_cache(cs->s);
	MF_C(c, "\texpect(%u, validate_slab_cache(s%u) == 0, \"validate_slab_cache finds nothing after a reported bad "
	     "free\");\n", c->cur, cs->cid);
	if (e)
		mf_fail(c, "C1", "after a reported bad free (%s) validate_slab_cache(%s) found %ld errors: %s",
			bad_kinds[kind], kmem_cache_name(cs->s), e, mm_last_report(c->mm)->msg);
	reports_mark(c);
	ss.irq_off = false;
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

/*
 * kmem_cache_destroy() of a cache that still has objects: the kernel's
 * leak report ("Objects remaining in <cache> on kmem_cache_close()" per
 * partial slab holding some, then "Slab cache still has objects (N objects
 * in M slabs)"), and the cache is kept so the objects stay valid: they can
 * still be freed (op free), nothing else. With again: destroying it a
 * second time is reported once more ("not a live cache").
 */
static void op_destroy_leak(struct mf_ctx *c, struct mf_op *op)
{
	struct cache_slot *cs = NULL;
	unsigned long live = 0;
	bool was = ss.armed;

	op->res[0] = -1;
	for (unsigned int k = 0; k < ss.ncaches && !cs; k++) {
		struct cache_slot *x = &ss.caches[((unsigned long)op->a[0] + k) % ss.ncaches];
		if (x->dead)
			continue;
		for (unsigned int i = 0; i < mf_shadow_count(c->sh); i++)
			if (c->sh->live[i]->handle == x->s) {
				cs = x;
				break;
			}
	}
	if (!cs)
		return;
	for (unsigned int i = 0; i < mf_shadow_count(c->sh); i++)
		live += c->sh->live[i]->handle == cs->s;
	ss.armed = false;
	ss.irq_off = true;
	to_cpu(c, op->a[1]);
	unsigned long before = mm_nr_reports(c->mm);
	mf_cgen_call(c, "rep0 = mm_nr_reports(mm); kmem_cache_destroy(caches[%u]);", cs->cid);
	kmem_cache_destroy(cs->s);
	MF_C(c, "\trep0 = mm_nr_reports(mm);\n\tkmem_cache_destroy(s%u);\n\tleak_report_ok(%u, %lu);\n", cs->cid, c->cur,
	     live);
	unsigned long n = mm_nr_reports(c->mm) - before;
	const struct mm_report *r = n ? mm_last_report(c->mm) : NULL;
	const char *tail = r ? strstr(r->msg, "still has objects (") : NULL;
	unsigned long objs = 0, slabs = 0;
	if (!tail || sscanf(tail, "still has objects (%lu objects in %lu slabs)", &objs, &slabs) != 2)
		mf_fail(c, "C1", "kmem_cache_destroy(%s) with %lu objects live: %lu report(s), the last not "
			"\"Slab cache still has objects (N objects in M slabs)\": %s", kmem_cache_name(cs->s), live, n,
			r ? r->msg : "(none)");
	/* One "Objects remaining" per partial slab holding some (full ones are on no list), then the summary. */
	if (objs != live || slabs < 1 || slabs > live || n < 1 || n > 1 + slabs)
		mf_fail(c, "C1", "kmem_cache_destroy(%s) with %lu objects live: %lu report(s), \"%lu objects in %lu "
			"slabs\"", kmem_cache_name(cs->s), live, n, objs, slabs);
	cs->dead = true;
	op->res[0] = slot_of(cs);
	op->res[1] = (long)live;
	op->res[2] = (long)n;
	if (op->a[2]) {
		before = mm_nr_reports(c->mm);
		mf_cgen_call(c, "rep0 = mm_nr_reports(mm); kmem_cache_destroy(caches[%u]);", cs->cid);
		kmem_cache_destroy(cs->s);
		MF_C(c, "\trep0 = mm_nr_reports(mm);\n\tkmem_cache_destroy(s%u);   /* again */\n"
		     "\texpect(%u, mm_nr_reports(mm) == rep0 + 1, \"destroying a destroyed cache is reported once\");\n",
		     cs->cid, c->cur);
		if (mm_nr_reports(c->mm) != before + 1)
			mf_fail(c, "C1", "kmem_cache_destroy of a destroyed cache: %lu reports, expected 1",
				mm_nr_reports(c->mm) - before);
		n++;
	}
	op->res[2] = (long)n;
	reports_mark(c);
	ss.irq_off = false;
	ss.armed = was;
}

static void note_leak(FILE *f, const struct mf_op *op)
{
	if (op->res[0] == -1)
		fprintf(f, "no cache with live objects");
	else
		fprintf(f, "cache %ld: %ld objects left, %ld report(s)", op->res[0], op->res[1], op->res[2]);
}

/*
 * SLUB's options (mm_slub_configure, the kernel's boot parameters) mid-run:
 * layout options reach only the caches that hold no slab (the others keep
 * theirs, -EBUSY), so every cache's flags are read back afterwards.  bad
 * puts one invalid option first (nothing applied) or last (the others
 * applied to SLUB but to no cache: -EINVAL).  Teardown undoes all of it
 * (common/slub_opts.c).  The text comes from there; these are the cache lists
 * it names.
 */
static const char *const dbg_lists[7] = { "all", "fz0", "fz1,fz3", "fz*", "kmalloc-*", "fz2,kmalloc-64", "nomatch" };

static void op_options(struct mf_ctx *c, struct mf_op *op)
{
	char buf[1024], err[256];
	struct mf_opt_effect e;
	bool empty[MAX_CACHES];
	bool was = ss.armed;

	mf_slub_options_text(op, dbg_lists, buf, sizeof(buf), &e);
	ss.o_seen |= e.o_flag;
	ss.armed = false;
	ss.irq_off = true;
	for (unsigned int i = 0; i < ss.ncaches; i++) {
		struct kmem_cache_info info;
		empty[i] = !kmem_cache_get_info(ss.caches[i].s, &info) && info.nr_slabs == 0;
	}
	ss.opts_changed = true;
	err[0] = 0;
	mf_slub_cgen_configure_call(c, buf);
	int r = mm_slub_configure(c->mm, buf, err, sizeof(err));
	ss.irq_off = false;
	ss.armed = was;
	op->res[0] = r;
	bool bad = op->a[12] != MF_OPT_BAD_NONE;
	if (c->cgen) {
		fprintf(c->cgen, "\tconfigure(%u, ", c->cur);
		mf_cgen_str(c->cgen, buf);
		fprintf(c->cgen, ", %d, %d);\n", bad, r);
	}
	if (bad ? r != -22 : (r != 0 && r != -16))
		mf_fail(c, "C1", "mm_slub_configure(\"%s\") returned %d (%s)", buf, r, err);
	if (r && !err[0])
		mf_fail(c, "C1", "mm_slub_configure(\"%s\") returned %d without a message", buf, r);
	expect_quiet(c, "mm_slub_configure");
	mf_slub_options_check(c, op, &e, buf);
	/*
	 * The probes: no options is 0, no instance -EINVAL.  " " still runs
	 * SLUB's per-cache pass (every cache gets SLUB's fast path), so only
	 * after a text that was applied, where that pass already ran: after a
	 * refused one it would push a refused slub_fastpath= into the caches,
	 * and the next op would never see what a refusal leaves.
	 */
	if (r != -22) {
		MF_C(c, "\texpect(%u, mm_slub_configure(mm, \" \", NULL, 0) == 0, \"mm_slub_configure: no options is 0\");\n",
		     c->cur);
		if (mm_slub_configure(c->mm, " ", NULL, 0))
			mf_fail(c, "C1", "mm_slub_configure: no options must be 0");
	}
	MF_C(c, "\texpect(%u, mm_slub_configure(NULL, \"slub_debug\", NULL, 0) == -22, "
	     "\"mm_slub_configure: no instance is -EINVAL\");\n", c->cur);
	if (mm_slub_configure(NULL, "slub_debug", err, sizeof(err)) != -22)
		mf_fail(c, "C1", "mm_slub_configure: no instance must be -EINVAL");
	/*
	 * Relayout ran (r != -EINVAL) on every cache without slabs - if the
	 * text has a token that asks for one (slub_debug, the hardening, the
	 * randomisation, min/max order, min_objects: hooks.c's slub_option()):
	 * an empty or fastpath-only text lays out nothing, so a cache keeps the
	 * hardening it had even when an earlier refused text already changed
	 * the setting (a double_fresh bad free then expected a report the
	 * unhardened cache cannot give - fuzz_nofp, slub, 1 in 1M).  -EBUSY may
	 * also mean one could not take the new options.
	 */
	bool relayout = op->a[0] || op->a[6] || op->a[7] || op->a[10] || op->a[11] || op->a[14];
	if (e.applied && e.hardened >= 0)
		ss.st_hardened = e.hardened;
	if (e.applied && e.init_free >= 0)
		ss.st_init_free = e.init_free;
	for (unsigned int i = 0; i < ss.ncaches; i++) {
		struct cache_slot *cs = &ss.caches[i];
		struct kmem_cache_info info;
		if (cs->dead || kmem_cache_get_info(cs->s, &info))
			continue;
		if (r != -22 && relayout && empty[i] && cs->hardened != (int)ss.st_hardened)
			cs->hardened = r == 0 ? (int)ss.st_hardened : HARD_UNKNOWN;
		MF_C(c, "\tinfo_ok(%u, s%u, %u, %u, %#x);\n", c->cur, cs->cid, cs->size, cs->promise,
		     (unsigned int)(cs->asked & ~o_meta()));
		if (!empty[i])
			MF_C(c, "\texpect(%u, flags_of(s%u) == %#x, \"a cache that holds slabs keeps its flags\");\n", c->cur,
			     cs->cid, (unsigned int)cs->flags);
		if ((info.flags & cs->asked & ~o_meta()) != (cs->asked & ~o_meta()) ||
		    info.object_size != cs->size || info.align < cs->promise)
			mf_fail(c, "C1", "after mm_slub_configure cache %s: flags %#x (were %#x), object_size %u, align %u",
				kmem_cache_name(cs->s), info.flags, cs->flags, info.object_size, info.align);
		if (!empty[i] && info.flags != cs->flags)
			mf_fail(c, "C1", "mm_slub_configure changed the flags of cache %s, which holds slabs: %#x -> %#x",
				kmem_cache_name(cs->s), cs->flags, info.flags);
		cs->flags = info.flags;
	}
}

static void note_options(FILE *f, const struct mf_op *op)
{
	mf_slub_options_note(f, op, dbg_lists);
}

/* CPU hotplug: a vCPU going dead gives its cpu slabs and cpu partial slabs back (slub_cpu_dead). */
static void op_hotplug(struct mf_ctx *c, struct mf_op *op)
{
	int cpu = (int)(op->a[0] % ss.ncpus);
	bool was = ss.armed;
	ss.armed = false;
	ss.irq_off = true;
	if (op->a[1]) {
		mf_cgen_call(c, "(void)mm_cpu_online(mm, %d);", cpu);
		op->res[0] = mm_cpu_online(c->mm, cpu);
		MF_C(c, "\texpect(%u, mm_cpu_online(mm, %d) == 0 && mm_cpu_is_online(mm, %d), \"mm_cpu_online\");\n", c->cur,
		     cpu, cpu);
		if (op->res[0] || !mm_cpu_is_online(c->mm, cpu))
			mf_fail(c, "C1", "mm_cpu_online(%d) returned %ld", cpu, op->res[0]);
	} else {
		int online = mm_num_online_cpus(c->mm);
		mf_cgen_call(c, "(void)mm_cpu_offline(mm, %d);", cpu);
		op->res[0] = mm_cpu_offline(c->mm, cpu);
		bool last = online == 1 && mm_cpu_is_online(c->mm, cpu);
		MF_C(c, "\texpect(%u, mm_cpu_offline(mm, %d) == %d, \"mm_cpu_offline (-EBUSY for the last online vCPU)\");\n",
		     c->cur, cpu, last ? -16 : 0);
		if (last ? op->res[0] != -16 : op->res[0] != 0)
			mf_fail(c, "C1", "mm_cpu_offline(%d) with %d online returned %ld", cpu, online, op->res[0]);
		/* Our own vCPU may have been the one: hold an online one again. */
		to_cpu(c, cpu);
	}
	ss.irq_off = false;
	ss.armed = was;
	expect_quiet(c, "CPU hotplug");
}

/*
 * slub_debug finding a corruption, as slub_kunit's clobber tests: one byte
 * of a red zone (left or right) of a live object, or of the red zone or
 * poison of an object just freed next to a live one (so its slab stays
 * partial), then validate_slab_cache: "BUG <cache>: ... overwritten" and
 * "FIX <cache>: Restoring ...", the byte repaired, and a second validate
 * clean.  A live object's slab may be full and unlisted (no
 * SLAB_STORE_USER): then nothing is found and the target puts the byte
 * back itself.  The write bypasses ASan (KASAN keeps those bytes poisoned).
 */
static const char *const clobbers[] = { "left_redzone", "right_redzone", "free_redzone", "free_poison" };
enum { CL_LEFT, CL_RIGHT, CL_FREE_RZ, CL_FREE_POISON };

#if defined(__clang__) || defined(__GNUC__)
__attribute__((no_sanitize("address")))
#endif
static unsigned char poke(void *addr, unsigned char v)
{
	volatile unsigned char *b = addr;
	unsigned char old = *b;
	*b = v;
	return old;
}

#if defined(__clang__) || defined(__GNUC__)
__attribute__((no_sanitize("address")))
#endif
static unsigned char peek(const void *addr)
{
	return *(const volatile unsigned char *)addr;
}

static void op_clobber(struct mf_ctx *c, struct mf_op *op)
{
	int kind = (int)op->a[0];
	struct mf_alloc *a = NULL;
	struct cache_slot *cs = NULL;
	struct kmem_cache_info info;
	bool was = ss.armed;
	unsigned char *at = NULL, want;
	void *q = NULL;

	op->res[0] = -1;
	for (unsigned int k = 0; k < mf_shadow_count(c->sh) && !a; k++) {
		struct mf_alloc *x = mf_shadow_pick_kind(c->sh, (unsigned long)op->a[1] + k, 1u << K_OBJ);
		struct cache_slot *xs = x ? &ss.caches[x->order] : NULL;
		if (!xs || xs->dead || kmem_cache_get_info(xs->s, &info))
			continue;
		if (kind == CL_FREE_POISON ? (info.flags & SLAB_POISON) && !xs->ctor : (info.flags & SLAB_RED_ZONE) != 0)
			a = x, cs = xs;
	}
	if (!a)
		return;
	ss.armed = false;
	ss.irq_off = true;
	to_cpu(c, op->a[2]);
	unsigned long off = (unsigned long)op->a[3];
	if (kind == CL_LEFT || kind == CL_RIGHT) {
		unsigned char *p = (unsigned char *)a->addr;
		at = kind == CL_LEFT ? p - info.red_left_pad + off % info.red_left_pad
				     : p + info.object_size + off % (info.inuse - info.object_size);
		want = 0xcc;                    /* SLUB_RED_ACTIVE */
	} else {
		/* An object freed next to a (live) one: its slab keeps a free object and a live one, so it is partial. */
		mf_cgen_call(c, "(void)kmem_cache_alloc(caches[%u], GFP_KERNEL);", cs->cid);
		q = kmem_cache_alloc(cs->s, GFP_KERNEL);
		MF_C(c, "\tvoid *q%u = kmem_cache_alloc(s%u, GFP_KERNEL);\n", c->cur, cs->cid);
		MF_C(c, "\tdiverged(%u, (q%u == NULL) != %d || (q%u && (virt_to_page(mm, q%u) == virt_to_page(mm, o%u)) != %d), "
		     "\"the fresh object and its page\");\n", c->cur, c->cur, !q, c->cur, c->cur, a->id,
		     q && virt_to_page(c->mm, q) == virt_to_page(c->mm, (void *)a->addr));
		if (!q || virt_to_page(c->mm, q) != virt_to_page(c->mm, (void *)a->addr)) {
			if (q) {
				mf_cgen_call(c, "kmem_cache_free(caches[%u], q%u);", cs->cid, c->cur);
				kmem_cache_free(cs->s, q);
				MF_C(c, "\tkmem_cache_free(s%u, q%u);\n", cs->cid, c->cur);
			}
			op->res[0] = q ? -4 : -3;
			ss.irq_off = false;
			ss.armed = was;
			expect_quiet(c, "clobber: alloc and free");
			return;
		}
		if (cs->ctor)
			ctor_fn(q);
		if (cs->ctor)
			MF_C(c, "\tctor(q%u);\n", c->cur);
		mf_cgen_call(c, "kmem_cache_free(caches[%u], q%u);", cs->cid, c->cur);
		kmem_cache_free(cs->s, q);
		MF_C(c, "\tkmem_cache_free(s%u, q%u);\n", cs->cid, c->cur);
		unsigned char *p = q;
		if (kind == CL_FREE_POISON) {
			at = p + off % info.object_size;
			want = at == p + info.object_size - 1 ? 0xa5 : 0x6b;    /* POISON_END, POISON_FREE */
		} else {
			at = off & 1 ? p - info.red_left_pad + (off >> 1) % info.red_left_pad
				     : p + info.object_size + (off >> 1) % (info.inuse - info.object_size);
			want = 0xbb;            /* SLUB_RED_INACTIVE */
		}
	}
	MF_C(c, "\tclobber(%u, s%u, (unsigned char *)%s%u + (%ld), %#x, %d);\n", c->cur, cs->cid, q ? "q" : "o",
	     q ? c->cur : a->id, (long)(at - (unsigned char *)(q ? q : (void *)a->addr)), want,
	     q || (info.flags & SLAB_STORE_USER));
	if (peek(at) != want)
		mf_fail(c, "S3", "clobber (%s) of cache %s: byte at offset %ld of its object is %#x before the write, "
			"expected %#x", clobbers[kind], kmem_cache_name(cs->s), (long)(at - (unsigned char *)(q ? q : (void *)a->addr)),
			peek(at), want);
	c->reports_before = mm_nr_reports(c->mm);
	poke(at, 0x12);
	long e = validate_slab_cache(cs->s);
	unsigned long n = mm_nr_reports(c->mm) - c->reports_before;
	op->res[0] = a->id;
	op->res[1] = slot_of(cs);
	op->res[2] = e;
	bool must = q || (info.flags & SLAB_STORE_USER);   /* the slab is partial, or full on the full list */
	if ((unsigned long)e != n || (e != 2 && (must || e != 0)))
		mf_fail(c, "S3", "clobber (%s) of one byte in cache %s (flags %#x): validate_slab_cache returned %ld, "
			"%lu reports; expected 2 (BUG and FIX)%s%s", clobbers[kind], kmem_cache_name(cs->s), info.flags, e,
			n, n ? ": last " : "", n ? mm_last_report(c->mm)->msg : "");
	if (e && peek(at) != want)
		mf_fail(c, "S3", "validate_slab_cache(%s) reported the clobbered byte but left it %#x, not %#x",
			kmem_cache_name(cs->s), peek(at), want);
	if (!e)
		poke(at, want);         /* unlisted full slab: not validate's to see */
	mf_reports_accounted(c);
	if ((e = validate_slab_cache(cs->s)) != 0)
		mf_fail(c, "S3", "after the repair validate_slab_cache(%s) still finds %ld errors: %s",
			kmem_cache_name(cs->s), e, mm_last_report(c->mm)->msg);
	ss.irq_off = false;
	ss.armed = was;
}

static void note_clobber(FILE *f, const struct mf_op *op)
{
	if (op->res[0] == -1)
		fprintf(f, "no candidate");
	else if (op->res[0] == -3)
		fprintf(f, "the allocator said no");
	else if (op->res[0] == -4)
		fprintf(f, "the fresh object is on another page");
	else
		fprintf(f, "a%ld in cache %ld: %ld report(s)", op->res[0], op->res[1], op->res[2]);
}

/* kmem_cache_create's refusals: NULL, no report, no cache left behind. */
static const char *const bad_creates[] = { "no_name", "empty_name", "size0", "too_big", "align_not_pow2",
					   "align_over_block", "unknown_flag" };

static void op_create_bad(struct mf_ctx *c, struct mf_op *op)
{
	const char *name = "fzbad";
	unsigned int size = 8 + (unsigned int)op->a[1], align = 0;
	slab_flags_t flags = 0;
	unsigned int before = 0, after = 0;

	switch (op->a[0]) {
	case 0: name = NULL; break;
	case 1: name = ""; break;
	case 2: size = 0; break;
	case 3: size = (unsigned int)(MM_PAGE_SIZE << mf_config(c)->max_order) + 1 + (unsigned int)op->a[1]; break;
	case 4: align = 24 + 16 * (unsigned int)(op->a[1] % 8); break;     /* never a power of two */
	case 5: align = (unsigned int)(MM_PAGE_SIZE << mf_config(c)->max_order) << (1 + op->a[1] % 3); break;  /* no slab holds it */
	case 6: flags = 0x00000001U << (op->a[1] % 2 ? 1 : 27); break;       /* bits slab.h does not know */
	}
	for (struct kmem_cache *s = kmem_cache_next(c->mm, NULL); s; s = kmem_cache_next(c->mm, s))
		before++;
	mf_cgen_call(c, "(void)kmem_cache_create(mm, %s%s%s, %u, %u, %#x, NULL);", name ? "\"" : "", name ? name : "NULL",
		     name ? "\"" : "", size, align, (unsigned int)flags);
	struct kmem_cache *s = kmem_cache_create(c->mm, name, size, align, flags, NULL);
	MF_C(c, "\tcreate_bad(%u, %s%s%s, %u, %u, %#x);\n", c->cur, name ? "\"" : "", name ? name : "NULL", name ? "\"" : "",
	     size, align, (unsigned int)flags);
	if (s)
		mf_fail(c, "C1", "kmem_cache_create(%s, size %u, align %u, flags %#x) should have failed",
			name ? name : "NULL", size, align, flags);
	for (struct kmem_cache *x = kmem_cache_next(c->mm, NULL); x; x = kmem_cache_next(c->mm, x))
		after++;
	if (after != before)
		mf_fail(c, "C1", "a failed kmem_cache_create left a cache behind (%u caches, were %u)", after, before);
	expect_quiet(c, "a refused kmem_cache_create");
	op->res[0] = 0;
}

/*
 * Introspection against the shadow: kmem_cache_get_info's counts, the
 * statistics (allocations at least the objects live), /proc/slabinfo's
 * line of each cache (active objects at least the live ones).
 */
static void op_introspect(struct mf_ctx *c, struct mf_op *op)
{
	struct cache_slot *cs = pick_cache((unsigned long)op->a[0]);
	struct kmem_cache_info info;
	unsigned long st[NR_SLUB_STAT_ITEMS];
	unsigned long live = 0;

	op->res[0] = -1;
	if (!cs)
		return;
	/* The views are compared with each other: no interrupt may change the cache between them. */
	bool was = ss.armed;
	ss.armed = false;
	ss.irq_off = true;
	for (unsigned int i = 0; i < mf_shadow_count(c->sh); i++)
		live += c->sh->live[i]->handle == cs->s;
	MF_C(c, "\tintrospect(%u, s%u, %u, %lu, %lu);\n", c->cur, cs->cid, cs->size, live, cs->singles);
	if (kmem_cache_get_info(cs->s, &info) || kmem_cache_get_info(NULL, &info) != -22)
		mf_fail(c, "C1", "kmem_cache_get_info: a live cache must work, NULL must be -EINVAL");
	kmem_cache_get_info(cs->s, &info);
	if (info.nr_objects < live ||
	    (info.nr_live >= 0 && (unsigned long)info.nr_live != live) || info.nr_partial > info.nr_slabs ||
	    kmem_cache_size(cs->s) != cs->size || kmem_cache_mm(cs->s) != c->mm || strcmp(info.name, kmem_cache_name(cs->s)))
		mf_fail(c, "C1", "kmem_cache_get_info(%s): %lu objects in %lu slabs (%lu partial), %ld live; the shadow has "
			"%lu live", info.name, info.nr_objects, info.nr_slabs, info.nr_partial, info.nr_live, live);
	/*
	 * Every kmem_cache_alloc() counts one of alloc_fastpath and
	 * alloc_slowpath (6.6); a bulk allocation counts only its trips to
	 * ___slab_alloc(), so the bound is the single allocations.
	 */
	if (kmem_cache_get_stats(cs->s, st)) {
		if (st[ALLOC_FASTPATH] + st[ALLOC_SLOWPATH] < cs->singles)
			mf_fail(c, "C1", "%s: %lu + %lu allocations counted, %lu kmem_cache_alloc calls succeeded", info.name,
				st[ALLOC_FASTPATH], st[ALLOC_SLOWPATH], cs->singles);
	}
	if (strcmp(slub_stat_name(ALLOC_FASTPATH), "alloc_fastpath") || strcmp(slub_stat_name(NR_SLUB_STAT_ITEMS), "?"))
		mf_fail(c, "C1", "slub_stat_name is wrong: %s", slub_stat_name(ALLOC_FASTPATH));
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f) {
		ss.irq_off = false;
		ss.armed = was;
		return;
	}
	mm_dump_slabinfo(c->mm, f);
	fclose(f);
	char key[40];
	snprintf(key, sizeof(key), "\n%s ", info.name);
	const char *line = strstr(buf, key);
	unsigned long active = 0, total = 0;
	if (!line || sscanf(line + strlen(key), "%lu %lu", &active, &total) != 2 || active < live ||
	    total != info.nr_objects || strncmp(buf, "slabinfo - version: 2.1\n", 24))
		mf_fail(c, "C1", "slabinfo of %s: %lu active of %lu objects, %lu live, %lu in the cache", info.name, active,
			total, live, info.nr_objects);
	free(buf);
	op->res[0] = (long)active;
	ss.irq_off = false;
	ss.armed = was;
}

/* ------------------------------------------------------------ the table */

static const struct mf_opdesc slub_setup = {
	"setup", "the machine: a named config (targets/common/configs.c) and the number of vCPUs", NULL, NULL,
	{ MF_A_ENUM("config", mf_config_names), MF_A_INT("cpus", 1, 4) },
};

/*
 * Injections happen inside ops only: the per-op mm_check that follows
 * takes slab_mutex and spinlocks whose preemption points would otherwise
 * run the interrupt handler (or a migration) in the middle of the check -
 * the checker, like the kernel's validation, is not interrupt-safe.  An
 * interrupt left pending at the end of an op runs there as a no-op.
 */
#define IN_OP(fn)                                                          \
	static void w_##fn(struct mf_ctx *c, struct mf_op *op)            \
	{                                                                  \
		ss.in_op = true;                                           \
		mf_cgen_op_start(c);                                       \
		MF_C(c, "\trep0 = mm_nr_reports(mm);\n");                 \
		fn(c, op);                                                 \
		ss.in_op = false;                                          \
	}
IN_OP(op_alloc)
IN_OP(op_alloc_bulk)
IN_OP(op_arm)
IN_OP(op_bad_free)
IN_OP(op_clobber)
IN_OP(op_cpu)
IN_OP(op_create)
IN_OP(op_create_bad)
IN_OP(op_destroy)
IN_OP(op_destroy_leak)
IN_OP(op_disarm)
IN_OP(op_free)
IN_OP(op_free_bulk)
IN_OP(op_hotplug)
IN_OP(op_introspect)
IN_OP(op_options)
IN_OP(op_shrink)
IN_OP(op_touch)
IN_OP(op_validate)

static const struct mf_opdesc slub_ops[] = {
	{ "create", "kmem_cache_create(size, align, flags, ctor?)", w_op_create, note_create,
	  { MF_A_INT("size", 1, 9000), MF_A_ENUM("align", aligns), MF_A_FLAGS("flags", cache_flags, cache_aliases),
	    MF_A_BOOL("ctor") } },
	{ "alloc", "kmem_cache_alloc / kmem_cache_zalloc on vCPU cpu", w_op_alloc, note_obj,
	  { MF_A_IDX("cache"), MF_A_INT("cpu", 0, 3), MF_A_BOOL("zero") } },
	{ "free", "kmem_cache_free of a live object on vCPU cpu (remote when not its owner)", w_op_free, note_obj,
	  { MF_A_IDX("idx"), MF_A_INT("cpu", 0, 3) } },
	{ "touch", "check a live object's pattern, then write it anew (every byte up to 512, sampled words above)", w_op_touch, note_obj,
	  { MF_A_IDX("idx") } },
	{ "alloc_bulk", "kmem_cache_alloc_bulk of n objects (all or nothing; zero: with __GFP_ZERO, the objects "
	  "zero)", w_op_alloc_bulk, note_count,
	  { MF_A_IDX("cache"), MF_A_INT("n", 1, 64), MF_A_INT("cpu", 0, 3), MF_A_BOOL("zero") } },
	{ "free_bulk", "kmem_cache_free_bulk of up to n live objects of one cache", w_op_free_bulk, note_count,
	  { MF_A_INT("n", 1, 64), MF_A_IDX("idx"), MF_A_INT("cpu", 0, 3) } },
	{ "shrink", "kmem_cache_shrink", w_op_shrink, note_count, { MF_A_IDX("cache"), MF_A_INT("cpu", 0, 3) } },
	{ "validate", "validate_slab_cache finds nothing", w_op_validate, note_count, { MF_A_IDX("cache") } },
	{ "destroy", "free every object of a cache, then kmem_cache_destroy (must report nothing)", w_op_destroy,
	  note_count, { MF_A_IDX("cache"), MF_A_INT("cpu", 0, 3) } },
	{ "arm", "at the skip-th later hit of point: raise an interrupt (the handler allocates nalloc "
	  "GFP_ATOMIC objects of cache into its pool, then frees nfree of the pool) and/or migrate to cpu; "
	  "fires times", w_op_arm, NULL,
	  { MF_A_ENUM("point", points), MF_A_ENUM("action", actions), MF_A_INT("skip", 0, 63),
	    MF_A_INT("fires", 1, 16), MF_A_INT("cpu", 0, 3), MF_A_IDX("cache"), MF_A_INT("nalloc", 0, 4),
	    MF_A_INT("nfree", 0, 4), MF_A_ENUM("order", irq_orders) } },
	{ "disarm", "no more injections", w_op_disarm, NULL, { { .name = NULL } } },
	{ "cpu", "switch the task to vCPU cpu", w_op_cpu, NULL, { MF_A_INT("cpu", 0, 3) } },
	{ "bad_free", "a bad free (double free / interior pointer / another cache's object on a debug "
	  "cache; double free of the cpu freelist's head on a non-debug one): reported once",
	  w_op_bad_free, note_bad,
	  { MF_A_ENUM("kind", bad_kinds), MF_A_IDX("idx"), MF_A_INT("cpu", 0, 3), MF_A_INT("off", 0, 65535) } },
	{ "destroy_leak", "kmem_cache_destroy of a cache with live objects: the leak report (their number), the "
	  "cache kept for their frees; again: destroy it once more (reported)", w_op_destroy_leak, note_leak,
	  { MF_A_IDX("cache"), MF_A_INT("cpu", 0, 3), MF_A_BOOL("again") } },
	{ "options", "mm_slub_configure: slub_debug (keep / plain / flags[,list] / two blocks / off), fast path, "
	  "hardening, randomisation, init_on_alloc/free, min/max order, min_objects, every Nth new slab failing, "
	  "seed; bad: one invalid option, first (nothing applied) or last", w_op_options, note_options,
	  MF_SLUB_OPTION_ARGS(dbg_lists) },
	{ "hotplug", "mm_cpu_offline (refused for the last online vCPU) or mm_cpu_online of vCPU cpu", w_op_hotplug,
	  note_count, { MF_A_INT("cpu", 0, 3), MF_A_BOOL("online") } },
	{ "clobber", "one byte of a live object's red zone, or of a just freed one's red zone or poison, then "
	  "validate_slab_cache: reported (BUG and FIX) and repaired", w_op_clobber, note_clobber,
	  { MF_A_ENUM("kind", clobbers), MF_A_IDX("idx"), MF_A_INT("cpu", 0, 3), MF_A_INT("off", 0, 65535) } },
	{ "create_bad", "kmem_cache_create that must fail (no name, empty name, size 0, too big, align not a power "
	  "of two, align beyond the largest block, unknown flags): NULL, nothing reported, no cache added", w_op_create_bad, note_count,
	  { MF_A_ENUM("kind", bad_creates), MF_A_INT("arg", 0, 255) } },
	{ "introspect", "kmem_cache_get_info, the statistics and /proc/slabinfo against the shadow", w_op_introspect,
	  note_count, { MF_A_IDX("cache") } },
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
	mf_cgen_config(c, &cfg);
	if (!mf_instance(c, &cfg))
		mf_fail(c, "C1", "mm_create failed for the named config %s", mf_config_names[setup->a[0]]);
	memset(&ss, 0, sizeof(ss));
	ss.c = c;
	ss.st_hardened = true;
	ss.ncpus = (int)cfg.nr_cpus;
	if (ss.ncpus < 1)
		ss.ncpus = 1;
	ss.irq_cache = MAX_CACHES;
	mm_set_irq_handler(c->mm, irq_handler, c);
	mm_set_sched_hook(c->mm, sched_hook, c);
	MF_C(c, "\tmm_set_irq_handler(mm, irq, NULL);\n\tmm_set_sched_hook(mm, hook, NULL);\n");
	to_cpu(c, 0);
	return true;
}

static void slub_release(struct mf_ctx *c, struct mf_alloc *a)
{
	mf_cgen_flush(c);
	ss.armed = false;
	free_obj(c, a);
}

static void slub_end(struct mf_ctx *c)
{
	mf_cgen_flush(c);
	ss.armed = false;
	while (ss.ncaches)
		destroy_slot(c, ss.ncaches - 1);
	mm_set_sched_hook(c->mm, NULL, NULL);
	mm_set_irq_handler(c->mm, NULL, NULL);
	MF_C(c, "\tmm_set_sched_hook(mm, NULL, NULL);\n\tmm_set_irq_handler(mm, NULL, NULL);\n");
	for (int cpu = 0; cpu < ss.ncpus; cpu++)
		if (!mm_cpu_is_online(c->mm, cpu)) {
			MF_C(c, "\tmm_cpu_online(mm, %d);\n", cpu);
			if (mm_cpu_online(c->mm, cpu))
				mf_fail(c, "C1", "teardown: mm_cpu_online(%d) failed", cpu);
		}
	/*
	 * A destroyed cache kept for its leaks is among these: its objects are
	 * all freed now.  The C text first: a crash in there makes it too.
	 */
	MF_C(c, "\tfor (struct kmem_cache *s = kmem_cache_next(mm, NULL); s; s = kmem_cache_next(mm, s))\n"
	     "\t\tkmem_cache_shrink(s);\n");
	for (struct kmem_cache *s = kmem_cache_next(c->mm, NULL); s; s = kmem_cache_next(c->mm, s))
		kmem_cache_shrink(s);
	if (ss.opts_changed)
		mf_slub_options_mark_dirty(c);
}

/*
 * The C file's helpers: the ctor, the bulk array, the op's report count
 * (rep0, taken at the start of every op and after each expected report)
 * and the checks of the ops that make several calls, as the ops make them.
 */
static void slub_cgen_prologue(struct mf_ctx *c, FILE *f)
{
	mf_cgen_hook_prologue(c, f);
	fprintf(f, "#define CTOR_WORD %#llxULL\n", (unsigned long long)CTOR_WORD);
	mf_slub_cgen_common(f);
	fprintf(f, "UNUSED static struct kmem_cache *caches[%d];   /* s<n>, for the interrupt handler's script */\n", MF_MAX_OPS + 1);
	fputs("UNUSED static void ctor(void *p) { uint64_t w = CTOR_WORD; memcpy(p, &w, sizeof(w)); }\n"
	      "UNUSED static int ctor_ok(const void *p) { uint64_t w; memcpy(&w, p, sizeof(w)); return w == CTOR_WORD; }\n"
	      "UNUSED static unsigned flags_of(struct kmem_cache *s)\n"
	      "{\n\tstruct kmem_cache_info i;\n\treturn kmem_cache_get_info(s, &i) ? ~0u : (unsigned)i.flags;\n}\n"
	      "UNUSED static void info_ok(int op, struct kmem_cache *s, unsigned size, unsigned promise, unsigned flags)\n"
	      "{\n\tstruct kmem_cache_info i;\n"
	      "\texpect(op, !kmem_cache_get_info(s, &i), \"kmem_cache_get_info of a new cache\");\n"
	      "\texpect(op, i.object_size == size && i.align >= promise && !(i.align & (i.align - 1)) && i.size >= size &&\n"
	      "\t       (i.flags & flags) == flags, \"kmem_cache_get_info agrees with what was asked\");\n}\n"
	      "UNUSED static void leak_report_ok(int op, unsigned long live)\n"
	      "{\n\tunsigned long n = mm_nr_reports(mm) - rep0, objs = 0, slabs = 0;\n"
	      "\tconst char *t = n ? strstr(mm_last_report(mm)->msg, \"still has objects (\") : NULL;\n"
	      "\texpect(op, t && sscanf(t, \"still has objects (%lu objects in %lu slabs)\", &objs, &slabs) == 2,\n"
	      "\t       \"the leak report ends with 'Slab cache still has objects (N objects in M slabs)'\");\n"
	      "\texpect(op, objs == live && slabs >= 1 && slabs <= live && n >= 1 && n <= 1 + slabs,\n"
	      "\t       \"the leak report counts the objects left\");\n}\n"
	      "UNUSED static unsigned nr_caches(void)\n"
	      "{\n\tunsigned n = 0;\n\tfor (struct kmem_cache *s = kmem_cache_next(mm, NULL); s; s = kmem_cache_next(mm, s))\n"
	      "\t\tn++;\n\treturn n;\n}\n"
	      "UNUSED static void create_bad(int op, const char *name, unsigned size, unsigned align, unsigned flags)\n"
	      "{\n\tunsigned n = nr_caches();\n"
	      "\texpect(op, kmem_cache_create(mm, name, size, align, flags, NULL) == NULL, \"kmem_cache_create refuses\");\n"
	      "\texpect(op, nr_caches() == n, \"a refused kmem_cache_create leaves no cache behind\");\n"
	      "\tquiet(op, \"a refused kmem_cache_create\");\n}\n"
	      "__attribute__((no_sanitize(\"address\"))) UNUSED static unsigned char peek(const void *a)\n"
	      "{\n\treturn *(const volatile unsigned char *)a;\n}\n"
	      "__attribute__((no_sanitize(\"address\"))) UNUSED static void poke(void *a, unsigned char v)\n"
	      "{\n\t*(volatile unsigned char *)a = v;\n}\n"
	      "UNUSED static void clobber(int op, struct kmem_cache *s, unsigned char *at, unsigned char want, int must)\n"
	      "{\n\texpect(op, peek(at) == want, \"the red zone / poison byte holds its pattern before the write\");\n"
	      "\trep0 = mm_nr_reports(mm);\n\tpoke(at, 0x12);\n"
	      "\tlong e = validate_slab_cache(s);\n"
	      "\texpect(op, (unsigned long)e == mm_nr_reports(mm) - rep0 && (e == 2 || (!must && e == 0)),\n"
	      "\t       \"validate_slab_cache reports the clobbered byte (BUG and FIX)\");\n"
	      "\tif (e)\n\t\texpect(op, peek(at) == want, \"validate_slab_cache repairs the byte\");\n"
	      "\telse\n\t\tpoke(at, want);\n"
	      "\trep0 = mm_nr_reports(mm);\n"
	      "\texpect(op, validate_slab_cache(s) == 0, \"after the repair validate_slab_cache finds nothing\");\n}\n"
	      "UNUSED static void introspect(int op, struct kmem_cache *s, unsigned size, unsigned long live,\n"
	      "\t\t\t\t    unsigned long singles)\n"
	      "{\n\tstruct kmem_cache_info i;\n\tunsigned long st[NR_SLUB_STAT_ITEMS];\n"
	      "\texpect(op, !kmem_cache_get_info(s, &i) && kmem_cache_get_info(NULL, &i) == -22,\n"
	      "\t       \"kmem_cache_get_info: a live cache works, NULL is -EINVAL\");\n"
	      "\tkmem_cache_get_info(s, &i);\n"
	      "\texpect(op, i.nr_objects >= live && (i.nr_live < 0 || (unsigned long)i.nr_live == live) &&\n"
	      "\t       i.nr_partial <= i.nr_slabs && kmem_cache_size(s) == size && kmem_cache_mm(s) == mm &&\n"
	      "\t       !strcmp(i.name, kmem_cache_name(s)), \"kmem_cache_get_info agrees with the objects held\");\n"
	      "\tif (kmem_cache_get_stats(s, st))\n"
	      "\t\texpect(op, st[ALLOC_FASTPATH] + st[ALLOC_SLOWPATH] >= singles, \"the statistics count the allocations\");\n"
	      "\tchar *buf = NULL, key[40];\n\tsize_t len = 0;\n\tFILE *f = open_memstream(&buf, &len);\n"
	      "\tif (!f)\n\t\treturn;\n\tmm_dump_slabinfo(mm, f);\n\tfclose(f);\n"
	      "\tsnprintf(key, sizeof(key), \"\\n%s \", i.name);\n"
	      "\tconst char *line = strstr(buf, key);\n\tunsigned long active = 0, total = 0;\n"
	      "\texpect(op, line && sscanf(line + strlen(key), \"%lu %lu\", &active, &total) == 2 && active >= live &&\n"
	      "\t       total == i.nr_objects && !strncmp(buf, \"slabinfo - version: 2.1\\n\", 24),\n"
	      "\t       \"/proc/slabinfo's line of the cache\");\n\tfree(buf);\n}\n\n", f);
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
	.cgen_prologue = slub_cgen_prologue,
	.config_of = slub_config_of,
};

MF_TARGET(slub_target)

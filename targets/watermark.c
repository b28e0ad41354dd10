/* SPDX-License-Identifier: MIT */
/*
 * watermark.c - differential fuzz target for the watermark checks (W1).
 *
 * The input builds zone states - allocations of any order and mobility,
 * frees, isolated pageblocks, highatomic reserves (high-order atomic
 * allocations), runtime tunables (min_free_kbytes, watermark_scale_factor,
 * lowmem_reserve_ratio) - and then compares, for every combination of
 * ALLOC_WMARK_*, ALLOC_MIN_RESERVE, ALLOC_NON_BLOCK, ALLOC_HIGHATOMIC,
 * ALLOC_OOM (and the irrelevant ALLOC_CPUSET | ALLOC_KSWAPD), the chosen or
 * every order and highest_zoneidx, and the zone's watermarks or a fuzzed
 * mark and free count:
 *
 *     __zone_watermark_ok, zone_watermark_ok, zone_watermark_fast
 *          against an independent reference written here from the
 *          kernel's semantics, in signed arithmetic, over a scan of the
 *          zone's free lists (not the allocator's counters);
 *     "ok for order > 0 => a free block of at least that order exists on a
 *          list the request may use" (Linux >= 4.9 algorithm);
 *     "ok at the low watermark => alloc_pages() pinned to that zone is
 *          served from it" (the serve op);
 *     zone_watermark_ok_2008 on fuzzed free counts against the 2.6.28
 *          algorithm, and the same reference on the zones when the config
 *          selects MM_WMARK_2008.
 *
 * For the 2008 algorithm the reference reads ALLOC_HIGH as
 * ALLOC_MIN_RESERVE and the old ALLOC_HARDER's watermark effect as
 * ALLOC_NON_BLOCK's (where Linux 6.3 moved it).
 */
#include <stdlib.h>
#include <string.h>

#include "common/cgen.h"
#include "common/configs.h"
#include "common/gfp_args.h"
#include "common/harness.h"
#include "common/pages.h"
#include "common/shadow.h"
#include "internal.h"       /* white-box: the free lists and nr_reserved_highatomic, for the scan */
#include "page/pcp.h"       /* and the pcp lists, for ALLOC_NOFRAGMENT's first pass */

static const char *const algo_names[] = { "modern", "2008" };
static const char *const zone_names[] = { "DMA", "DMA32", "Normal", "Movable" };
static const char *const mt_names[] = { "unmovable", "movable", "reclaimable" };
static const char *const mode_names[] = { "nowait", "atomic", "kernel", "high", "memalloc" };

static const struct mf_flag alloc_flag_bits[] = {
	{ "ALLOC_WMARK_LOW", ALLOC_WMARK_LOW },
	{ "ALLOC_WMARK_HIGH", ALLOC_WMARK_HIGH },
	{ "ALLOC_NO_WATERMARKS", ALLOC_NO_WATERMARKS },
	{ "ALLOC_OOM", ALLOC_OOM },
	{ "ALLOC_NON_BLOCK", ALLOC_NON_BLOCK },
	{ "ALLOC_MIN_RESERVE", ALLOC_MIN_RESERVE },
	{ "ALLOC_CPUSET", ALLOC_CPUSET },
	{ "ALLOC_CMA", ALLOC_CMA },
	{ "ALLOC_HIGHATOMIC", ALLOC_HIGHATOMIC },
	{ "ALLOC_KSWAPD", ALLOC_KSWAPD },
};
static const struct mf_flag alloc_flag_aliases[] = {
	{ "ALLOC_HARDER", ALLOC_HARDER },
	{ "ALLOC_HIGH", ALLOC_HIGH },
	{ NULL, 0 },
};

/* The reserve bits every comparison walks through, all 32 subsets. */
static const unsigned int reserve_bits[] = {
	ALLOC_MIN_RESERVE, ALLOC_NON_BLOCK, ALLOC_HIGHATOMIC, ALLOC_OOM, ALLOC_CPUSET | ALLOC_KSWAPD,
};

/* Calls compared per input: beyond this, compare checks only what it names, not "all". */
#define WM_BUDGET 3000

struct wm_state {
	unsigned int algo;
	unsigned long calls;        /* comparisons made by this input */
};
static struct wm_state ws;

/* ------------------------------------------------------------ the scan */

struct zone_scan {
	unsigned long blocks[MM_NR_ORDERS_LIMIT][MIGRATE_TYPES];
	long free_pages;            /* pages on every list but MIGRATE_ISOLATE: what NR_FREE_PAGES must be */
	long highatomic;            /* nr_reserved_highatomic */
};

static void scan_zone(struct zone *z, struct zone_scan *s)
{
	memset(s, 0, sizeof(*s));
	for (unsigned int o = 0; o < MM_NR_ORDERS_LIMIT; o++)
		for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
			struct list_head *pos;
			unsigned long n = 0;
			list_for_each(pos, &z->free_area[o].free_list[mt])
				n++;
			s->blocks[o][mt] = n;
			if (mt != MIGRATE_ISOLATE)
				s->free_pages += (long)(n << o);
		}
	s->highatomic = (long)READ_ONCE(z->nr_reserved_highatomic);
}

/* A free block of at least @order on a list a request with @flags may take from. */
static bool usable_block(const struct zone_scan *s, unsigned int order, unsigned int max_order, unsigned int flags)
{
	for (unsigned int o = order; o <= max_order; o++) {
		if (s->blocks[o][MIGRATE_UNMOVABLE] || s->blocks[o][MIGRATE_MOVABLE] ||
		    s->blocks[o][MIGRATE_RECLAIMABLE])
			return true;
		if ((flags & (ALLOC_HIGHATOMIC | ALLOC_OOM)) && s->blocks[o][MIGRATE_HIGHATOMIC])
			return true;
	}
	return false;
}

/*
 * The Linux 6.6 __zone_watermark_ok(), from its documented semantics: the
 * order-0 test on free pages less what this request may not count (the
 * pages below the order, the highatomic reserve unless it may use
 * reserves), against the mark lowered by the reserves it may use, plus the
 * lowmem reserve; then, for order > 0, one usable block.
 */
static bool ref_modern(const struct zone_scan *s, unsigned int max_order, unsigned int order, long mark,
		       long lowmem_reserve, unsigned int flags, long free)
{
	long min = mark;

	free -= (1L << order) - 1;
	if (!(flags & (ALLOC_NON_BLOCK | ALLOC_MIN_RESERVE | ALLOC_HIGHATOMIC | ALLOC_OOM)))
		free -= s->highatomic;
	if (flags & ALLOC_MIN_RESERVE) {
		min -= min / 2;                  /* __GFP_HIGH: half the min reserve */
		if (flags & ALLOC_NON_BLOCK)
			min -= min / 4;          /* GFP_ATOMIC: a quarter of the rest */
	}
	if (flags & ALLOC_OOM)
		min -= min / 2;                  /* OOM victims: half again */
	if (free <= min + lowmem_reserve)
		return false;
	return order == 0 || usable_block(s, order, max_order, flags);
}

/*
 * The 2.6.28 zone_watermark_ok(): ALLOC_HIGH halves the mark, ALLOC_HARDER
 * (now ALLOC_NON_BLOCK) takes a quarter off; then at each order below the request, that order's
 * pages stop counting and the mark halves.
 */
static bool ref_2008(const unsigned long *nr_free, unsigned int nr_orders, long free, unsigned int order,
		     long mark, long lowmem_reserve, unsigned int flags)
{
	long min = mark;

	free -= (1L << order) - 1;
	if (flags & ALLOC_HIGH)
		min -= min / 2;
	/*
	 * The old ALLOC_HARDER bit's watermark effect went to ALLOC_NON_BLOCK
	 * when 6.3 split it ("mm/page_alloc: split out ALLOC_HIGHATOMIC from
	 * ALLOC_HARDER"): ALLOC_HIGHATOMIC alone never lowered the mark.
	 */
	if (flags & ALLOC_NON_BLOCK)
		min -= min / 4;
	if (free <= min + lowmem_reserve)
		return false;
	for (unsigned int o = 0; o < order && o < nr_orders; o++) {
		free -= (long)(nr_free[o] << o);
		min >>= 1;
		if (free <= min)
			return false;
	}
	return true;
}

/* ------------------------------------------------------------ ops: building states */

static gfp_t make_gfp(int zone, int mt, int mode)
{
	static const gfp_t zone_bits[] = { __GFP_DMA, __GFP_DMA32, 0, __GFP_HIGHMEM | __GFP_MOVABLE };
	static const gfp_t mt_bits[] = { 0, __GFP_MOVABLE, __GFP_RECLAIMABLE };
	static const gfp_t mode_bits[] = { GFP_NOWAIT, GFP_ATOMIC, GFP_KERNEL, __GFP_HIGH, __GFP_MEMALLOC };

	/*
	 * Movable is asked for with __GFP_MOVABLE, which is also the mobility:
	 * with both hints the allocator reports the gfp, so mf_gfp_fix() makes
	 * a reclaimable request for Movable a movable one (as the allocator
	 * served it before it refused both hints).
	 */
	return (gfp_t)mf_gfp_fix(zone_bits[zone] | mt_bits[mt] | mode_bits[mode] | __GFP_NOWARN);
}

static void op_alloc(struct mf_ctx *c, struct mf_op *op)
{
	unsigned int order = (unsigned int)op->a[1] % (mf_pages.max_order + 1);
	struct mf_alloc *a = NULL;

	if (mf_shadow_full(c->sh)) {
		op->res[0] = -2;
		return;
	}
	a = mf_page_alloc(c, order, make_gfp((int)op->a[0], (int)op->a[2], (int)op->a[3]), MF_K_PAGES);
	mf_res_alloc(op, a, order);
}

static void op_alloc_many(struct mf_ctx *c, struct mf_op *op)
{
	unsigned int order = (unsigned int)op->a[2] % (mf_pages.max_order + 1);
	gfp_t gfp = make_gfp((int)op->a[1], (int)op->a[3], (int)op->a[4]);
	long got = 0;

	while (got < op->a[0] && !mf_shadow_full(c->sh) && mf_page_alloc(c, order, gfp, MF_K_PAGES))
		got++;
	op->res[0] = got;
}

static void note_tune(FILE *f, const struct mf_op *op)
{
	fprintf(f, "returned %ld", op->res[0]);
}

static void op_tune_min(struct mf_ctx *c, struct mf_op *op)
{
	mf_cgen_call(c, "(void)mm_set_min_free_kbytes(mm, %ld);", op->a[0]);
	int r = mm_set_min_free_kbytes(c->mm, (unsigned long)op->a[0]);
	MF_C(c, "\tdiverged(%u, mm_set_min_free_kbytes(mm, %ld) != %d, \"its result\");\n", c->cur, op->a[0], r);
	unsigned long total_kb = mm_nr_valid_pages(c->mm) * (MM_PAGE_SIZE / 1024);
	if ((r == 0) != ((unsigned long)op->a[0] <= total_kb))
		mf_fail(c, "C1", "mm_set_min_free_kbytes(%ld) returned %d with %lu kB of memory", op->a[0], r, total_kb);
	op->res[0] = r;
}

static void op_tune_wsf(struct mf_ctx *c, struct mf_op *op)
{
	mf_cgen_call(c, "(void)mm_set_watermark_scale_factor(mm, %ld);", op->a[0]);
	int r = mm_set_watermark_scale_factor(c->mm, (unsigned int)op->a[0]);
	MF_C(c, "\tdiverged(%u, mm_set_watermark_scale_factor(mm, %ld) != %d, \"its result\");\n", c->cur, op->a[0], r);
	if ((r == 0) != (op->a[0] >= 1 && op->a[0] <= 3000))
		mf_fail(c, "C1", "mm_set_watermark_scale_factor(%ld) returned %d (valid: 1..3000)", op->a[0], r);
	op->res[0] = r;
}

static void op_tune_ratio(struct mf_ctx *c, struct mf_op *op)
{
	unsigned int ratio[MAX_NR_ZONES];
	for (int z = 0; z < MAX_NR_ZONES; z++)
		ratio[z] = (unsigned int)op->a[z];
	mf_cgen_call(c, "{ unsigned r[4] = { %u, %u, %u, %u }; mm_set_lowmem_reserve_ratio(mm, r); }", ratio[0], ratio[1],
		     ratio[2], ratio[3]);
	int r = mm_set_lowmem_reserve_ratio(c->mm, ratio);
	MF_C(c, "\t{ unsigned r[4] = { %u, %u, %u, %u }; mm_set_lowmem_reserve_ratio(mm, r); }\n", ratio[0], ratio[1],
	     ratio[2], ratio[3]);
	op->res[0] = r;
}

/* ------------------------------------------------------------ ops: comparing */

static void fail_w1(struct mf_ctx *c, struct zone *z, const char *fn, unsigned int order, long mark, int hz,
		    unsigned int flags, long free, bool got, bool want, const struct zone_scan *s)
{
	if (!strcmp(fn, "__zone_watermark_ok"))
		MF_C(c, "\texpect(%u, __zone_watermark_ok(mm_zone(mm, %d), %u, %ld, %d, %#x, %ld) == %d, "
			"\"__zone_watermark_ok agrees with the reference\");\n", c->cur, z->idx, order, mark, hz, flags,
		     free, want);
	else
		MF_C(c, "\texpect(%u, %s(mm_zone(mm, %d), %u, %ld, %d, %#x%s) == %d, \"%s agrees with the reference\");\n",
		     c->cur, fn, z->idx, order, mark, hz, flags, strcmp(fn, "zone_watermark_fast") ? "" : ", 0", want, fn);
	mf_fail(c, "W1", "zone %s: %s(order %u, mark %ld, highest_zoneidx %d, alloc_flags %#x%s%ld) returned %d, "
		"the reference says %d (free pages by scan %ld, highatomic %ld, lowmem_reserve %ld, algorithm %s)",
		z->name, fn, order, mark, hz, flags, strcmp(fn, "__zone_watermark_ok") ? ", NR_FREE_PAGES " : ", free_pages ",
		free, got, want, s->free_pages, s->highatomic, zone_lowmem_reserve(z, (enum zone_type)hz),
		algo_names[ws.algo]);
}

static bool reference(const struct zone_scan *s, unsigned int order, long mark, long reserve, unsigned int flags,
		      long free)
{
	if (ws.algo == MM_WMARK_2008) {
		unsigned long nf[MM_NR_ORDERS_LIMIT];
		for (unsigned int o = 0; o <= mf_pages.max_order; o++) {
			nf[o] = 0;
			for (int mt = 0; mt < MIGRATE_TYPES; mt++)
				nf[o] += s->blocks[o][mt];
		}
		return ref_2008(nf, mf_pages.max_order + 1, free, order, mark, reserve, flags);
	}
	return ref_modern(s, mf_pages.max_order, order, mark, reserve, flags, free);
}

/*
 * Every flag combination for one (zone, order, highest zone).  The
 * reference's answers first, then the C file's wm_compare() - which makes
 * the same calls in the same order and compares them with those answers -
 * then the calls: a run that dies inside one leaves the C file making it.
 */
static unsigned long compare_one(struct mf_ctx *c, struct zone *z, const struct zone_scan *s, unsigned int order,
				 int hz, long custom_mark, long custom_free)
{
	long reserve = zone_lowmem_reserve(z, (enum zone_type)hz);
	unsigned long calls = 0;
	char want_bits[2 * NR_WMARK * (1u << ARRAY_SIZE(reserve_bits)) * 2 + 1];
	unsigned int nb = 0;

	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			want_bits[nb] = 0;
			MF_C(c, "\twm_compare(%u, %d, %u, %d, %ld, %ld, \"%s\");\n", c->cur, z->idx, order, hz, custom_mark,
			     custom_free, want_bits);
			nb = 0;
		}
		for (unsigned int w = 0; w < NR_WMARK; w++)
			for (unsigned int sub = 0; sub < (1u << ARRAY_SIZE(reserve_bits)); sub++) {
				unsigned int flags = w;
				for (unsigned int b = 0; b < ARRAY_SIZE(reserve_bits); b++)
					if (sub & (1u << b))
						flags |= reserve_bits[b];
				long marks[2] = { (long)zone_wmark_pages(z, (enum zone_watermarks)w), custom_mark };
				for (int m = 0; m < 2; m++) {
					long mark = marks[m];
					if (pass == 0) {
						want_bits[nb++] = (char)('0' + reference(s, order, mark, reserve, flags,
											 s->free_pages));
						want_bits[nb++] = (char)('0' + reference(s, order, mark, reserve, flags,
											 custom_free));
						continue;
					}
					bool want = want_bits[nb++] == '1', want2 = want_bits[nb++] == '1';
					bool ok = zone_watermark_ok(z, order, (unsigned long)mark, hz, flags);
					if (ok != want)
						fail_w1(c, z, "zone_watermark_ok", order, mark, hz, flags, s->free_pages, ok,
							want, s);
					bool fast = zone_watermark_fast(z, order, (unsigned long)mark, hz, flags, 0);
					if (fast != want)
						fail_w1(c, z, "zone_watermark_fast", order, mark, hz, flags, s->free_pages, fast,
							want, s);
					bool raw = __zone_watermark_ok(z, order, (unsigned long)mark, hz, flags, custom_free);
					if (raw != want2)
						fail_w1(c, z, "__zone_watermark_ok", order, mark, hz, flags, custom_free, raw,
							want2, s);
					if (ws.algo == MM_WMARK_MODERN && ok && order &&
					    !usable_block(s, order, mf_pages.max_order, flags))
						mf_fail(c, "W1", "zone %s: zone_watermark_ok(order %u, mark %ld, alloc_flags %#x) is "
							"true but no free block of order >= %u is on a list this request may use",
							z->name, order, mark, flags, order);
					calls += 3;
				}
			}
	}
	return calls;
}

static void op_compare(struct mf_ctx *c, struct mf_op *op)
{
	struct zone *z = mm_zone(c->mm, (enum zone_type)op->a[0]);
	struct zone_scan s;
	unsigned long calls = 0;

	op->res[0] = -1;
	if (!z) {
		MF_C(c, "\texpect(%u, mm_zone(mm, %ld) == NULL, \"the zone is not populated\");\n", c->cur, op->a[0]);
		return;
	}
	scan_zone(z, &s);
	MF_C(c, "\texpect(%u, zone_free_pages(mm_zone(mm, %d)) == %ld, \"NR_FREE_PAGES is what the free lists hold\");\n",
	     c->cur, z->idx, s.free_pages);
	if (s.free_pages != zone_free_pages(z))
		mf_fail(c, "W1", "zone %s: NR_FREE_PAGES %ld but the free lists (isolate excluded) hold %ld pages",
			z->name, zone_free_pages(z), s.free_pages);
	unsigned int olo = (unsigned int)op->a[1], ohi = olo;
	int hlo = (int)op->a[2], hhi = hlo;
	bool rich = ws.calls < WM_BUDGET;   /* past the budget, "all" means one */
	if (olo > mf_pages.max_order) {     /* "all" */
		olo = rich ? 0 : mf_pages.max_order;
		ohi = mf_pages.max_order;
	}
	if (hlo >= MAX_NR_ZONES) {
		hlo = rich ? 0 : MAX_NR_ZONES - 1;
		hhi = MAX_NR_ZONES - 1;
	}
	for (unsigned int o = olo; o <= ohi; o++)
		for (int hz = hlo; hz <= hhi; hz++)
			calls += compare_one(c, z, &s, o, hz, op->a[3], op->a[4]);
	ws.calls += calls;
	op->res[0] = (long)calls;
	op->res[1] = s.free_pages;
}

static void note_compare(FILE *f, const struct mf_op *op)
{
	if (op->res[0] < 0)
		fprintf(f, "zone not populated");
	else
		fprintf(f, "%ld calls agree (free %ld)", op->res[0], op->res[1]);
}

/*
 * ALLOC_NOFRAGMENT (6.6's alloc_flags_nofragment()): the first attempt of
 * a request whose preferred zone is Normal, below pageblock_order, may
 * take from Normal only a page already on its pcp list, a block of its own
 * type, or a whole free pageblock of another type (6.6's fallbacks table:
 * each of unmovable, movable and reclaimable falls back to the other two).
 * Without any of these it goes on to DMA32 and DMA.  True when Normal @z
 * holds one for this vCPU's request of @order and type @mt.
 */
static bool nofragment_first_pass_fits(struct mf_ctx *c, struct zone *z, unsigned int order, int mt)
{
	const struct mm *mm = c->mm;
	unsigned int max_order = mm->cfg.max_order;

	if (pcp_allowed_order(order) && z->per_cpu_pageset) {
		struct per_cpu_pages *pcp = &z->per_cpu_pageset[mm_cpu_current(c->mm)];
		if (!list_empty(&pcp->lists[order_to_pindex(mt, order)]))
			return true;
	}
	for (unsigned int o = order; o <= max_order; o++) {
		if (!list_empty(&z->free_area[o].free_list[mt]))
			return true;
		if (o < mm->cfg.pageblock_order)
			continue;
		for (int f = 0; f < MIGRATE_PCPTYPES; f++)
			if (f != mt && !list_empty(&z->free_area[o].free_list[f]))
				return true;
	}
	return false;
}

/*
 * ok at the low watermark => alloc_pages pinned to the zone is served from
 * it - or, under ALLOC_NOFRAGMENT, from a lower zone when Normal has nothing
 * its first pass may take.
 */
static void op_serve(struct mf_ctx *c, struct mf_op *op)
{
	int zi = (int)op->a[0];
	struct zone *z = mm_zone(c->mm, (enum zone_type)zi);
	unsigned int order = (unsigned int)op->a[1] % (mf_pages.max_order + 1);
	gfp_t gfp = make_gfp(zi, (int)op->a[2], 0) & ~__GFP_KSWAPD_RECLAIM;

	op->res[0] = -1;
	if (!z || mf_shadow_full(c->sh))
		return;
	/* The first attempt of alloc_pages: the low watermark, no reserves. */
	bool ok = zone_watermark_ok(z, order, zone_wmark_pages(z, WMARK_LOW), zi, ALLOC_WMARK_LOW);
	bool nofragment = zi == ZONE_NORMAL && order < c->mm->cfg.pageblock_order;
	bool fits = !nofragment || nofragment_first_pass_fits(c, z, order, gfp_migratetype(c->mm, gfp));
	struct mf_alloc *a = mf_page_alloc(c, order, gfp, MF_K_PAGES);
	op->res[0] = a ? (long)a->id : -1;
	op->res[1] = a ? (long)a->pfn : 0;
	op->res[2] = ok;
	if (ws.algo != MM_WMARK_MODERN || !ok)
		return;
	MF_C(c, "\texpect(%u, %s, \"watermark ok => served from the zone\");\n", c->cur,
	     a ? "1" : "0 /* alloc_pages failed although zone_watermark_ok said yes */");
	if (!a)
		mf_fail(c, "W1", "zone %s: zone_watermark_ok(order %u, low watermark) is true, but alloc_pages(%#x, %u) "
			"pinned to the zone failed", z->name, order, gfp, order);
	int served = mf_zone_of_pfn(mf_config(c), a->pfn);
	if (served < zi && !fits)
		return;   /* ALLOC_NOFRAGMENT: Normal had no block its first pass may take */
	if (served != zi)
		mf_fail(c, "W1", "zone %s: zone_watermark_ok(order %u, low watermark) is true, but alloc_pages(%#x, %u) "
			"was served from zone %s", z->name, order, gfp, order,
			mf_zone_name(mf_zone_of_pfn(mf_config(c), a->pfn)));
}

static void note_serve(FILE *f, const struct mf_op *op)
{
	if (op->res[0] < 0)
		fprintf(f, "NULL (watermark ok %ld)", op->res[2]);
	else
		fprintf(f, "a%ld pfn %#lx (watermark ok %ld)", op->res[0], op->res[1], op->res[2]);
}

/* zone_watermark_ok_2008 on fuzzed inputs against the 2.6.28 reference. */
static void op_wm2008(struct mf_ctx *c, struct mf_op *op)
{
	unsigned long nr_free[MM_NR_ORDERS_LIMIT];
	unsigned int nr_orders = (unsigned int)op->a[5];
	for (unsigned int o = 0; o < MM_NR_ORDERS_LIMIT; o++)
		nr_free[o] = (unsigned long)op->a[6 + o];
	unsigned int order = (unsigned int)op->a[0], flags = (unsigned int)op->a[4];
	long mark = op->a[1], free = op->a[2], reserve = op->a[3];
	bool want = ref_2008(nr_free, nr_orders, free, order, mark, reserve, flags);
	/* The C text (with the reference's answer) before the call: a run that dies inside it leaves the call in. */
	MF_C(c, "\t{\n\t\tunsigned long nr_free[%d] = {", MM_NR_ORDERS_LIMIT);
	for (unsigned int o = 0; o < MM_NR_ORDERS_LIMIT; o++)
		MF_C(c, " %lu,", nr_free[o]);
	MF_C(c, " };\n\t\texpect(%u, zone_watermark_ok_2008(nr_free, %u, %ld, %u, %ld, %ld, %#x) == %d, "
		"\"the 2.6.28 algorithm\");\n\t}\n", c->cur, nr_orders, free, order, mark, reserve, flags, want);
	bool got = zone_watermark_ok_2008(nr_free, nr_orders, free, order, (unsigned long)mark, reserve, flags);
	op->res[0] = got;
	if (got == want)
		return;
	mf_fail(c, "W1", "zone_watermark_ok_2008(nr_orders %u, free %ld, order %u, mark %ld, lowmem_reserve %ld, "
		"alloc_flags %#x) returned %d, the 2.6.28 reference says %d", nr_orders, free, order, mark, reserve,
		flags, got, want);
}

static void note_result(FILE *f, const struct mf_op *op)
{
	fprintf(f, "%ld", op->res[0]);
}

/* ------------------------------------------------------------ the table */

static const struct mf_opdesc wm_setup = {
	"setup", "the machine: a named config, the watermark algorithm, the number of CPUs", NULL, NULL,
	{ MF_A_ENUM("config", mf_config_names), MF_A_ENUM("algo", algo_names), MF_A_INT("cpus", 1, 4) },
};

#define N_ARGS(p) MF_A_INT(p, 0, 65535)
static const struct mf_opdesc wm_ops[] = {
	{ "alloc", "one allocation (order modulo max_order + 1) from zone and below", op_alloc, mf_note_alloc,
	  { MF_A_ENUM("zone", zone_names), MF_A_INT("order", 0, MM_MAX_ORDER_LIMIT), MF_A_ENUM("mt", mt_names),
	    MF_A_ENUM("mode", mode_names) } },
	{ "alloc_many", "up to n allocations, until one fails", op_alloc_many, mf_note_count,
	  { MF_A_INT("n", 1, 64), MF_A_ENUM("zone", zone_names), MF_A_INT("order", 0, MM_MAX_ORDER_LIMIT),
	    MF_A_ENUM("mt", mt_names), MF_A_ENUM("mode", mode_names) } },
	{ "free", "__free_pages of a live allocation", mf_op_free, mf_note_free, { MF_A_IDX("idx") } },
	{ "free_many", "free n live allocations from idx on", mf_op_free_many, mf_note_count,
	  { MF_A_INT("n", 1, 64), MF_A_IDX("idx") } },
	{ "isolate", "mm_isolate_pageblock of pageblock number block", mf_op_isolate, mf_note_isolate,
	  { MF_A_INT("block", 0, 65535) } },
	{ "unisolate", "mm_unisolate_pageblock of an isolated pageblock (any=1: of pageblock number block)",
	  mf_op_unisolate, mf_note_isolate, { MF_A_INT("block", 0, 65535), MF_A_BOOL("any") } },
	{ "tune_min", "mm_set_min_free_kbytes", op_tune_min, note_tune, { MF_A_INT("kbytes", 0, 65535) } },
	{ "tune_wsf", "mm_set_watermark_scale_factor", op_tune_wsf, note_tune, { MF_A_INT("factor", 0, 4095) } },
	{ "tune_ratio", "mm_set_lowmem_reserve_ratio", op_tune_ratio, note_tune,
	  { MF_A_INT("dma", 0, 1023), MF_A_INT("dma32", 0, 1023), MF_A_INT("normal", 0, 1023),
	    MF_A_INT("movable", 0, 1023) } },
	{ "compare", "every flag combination against the reference (order > max_order: every order; hz 4: every "
	  "highest_zoneidx - until the input has made 3000 calls)", op_compare, note_compare,
	  { MF_A_ENUM("zone", zone_names), MF_A_INT("order", 0, MM_MAX_ORDER_LIMIT + 1), MF_A_INT("hz", 0, MAX_NR_ZONES),
	    MF_A_INT("mark", 0, 1L << 32), MF_A_INT("free", -(1L << 31), 1L << 31) } },
	{ "serve", "watermark ok at low => alloc_pages pinned to the zone is served from it", op_serve, note_serve,
	  { MF_A_ENUM("zone", zone_names), MF_A_INT("order", 0, MM_MAX_ORDER_LIMIT), MF_A_ENUM("mt", mt_names) } },
	{ "wm2008", "zone_watermark_ok_2008 on explicit inputs against the 2.6.28 algorithm", op_wm2008, note_result,
	  { MF_A_INT("order", 0, MM_MAX_ORDER_LIMIT), MF_A_INT("mark", 0, 1L << 32),
	    MF_A_INT("free", -(1L << 31), 1L << 31), MF_A_INT("reserve", 0, 1L << 20),
	    MF_A_FLAGS("flags", alloc_flag_bits, alloc_flag_aliases), MF_A_INT("nr_orders", 0, MM_NR_ORDERS_LIMIT),
	    N_ARGS("n0"), N_ARGS("n1"), N_ARGS("n2"), N_ARGS("n3"), N_ARGS("n4"), N_ARGS("n5"), N_ARGS("n6"),
	    N_ARGS("n7"), N_ARGS("n8"), N_ARGS("n9"), N_ARGS("n10"), N_ARGS("n11"), N_ARGS("n12") } },
};
_Static_assert(6 + MM_NR_ORDERS_LIMIT <= MF_MAX_ARGS, "wm2008 needs an argument per order");

/* ------------------------------------------------------------ lifecycle */

static void wm_config_of(const struct mf_op *setup, struct mm_config *cfg)
{
	mf_config_named(cfg, (enum mf_config_kind)setup->a[0], (unsigned int)setup->a[2]);
	cfg->wmark_algo = setup->a[1] ? MM_WMARK_2008 : MM_WMARK_MODERN;
}

static bool wm_begin(struct mf_ctx *c, const struct mf_op *setup)
{
	struct mm_config cfg;

	wm_config_of(setup, &cfg);
	mf_cgen_config(c, &cfg);
	if (!mf_instance(c, &cfg))
		mf_fail(c, "C1", "mm_create failed for the named config %s", mf_config_names[setup->a[0]]);
	mf_pages_begin(c);
	memset(&ws, 0, sizeof(ws));
	ws.algo = cfg.wmark_algo;
	return true;
}

static void wm_release(struct mf_ctx *c, struct mf_alloc *a)
{
	mf_page_free(c, a, false);
}

/*
 * The tunables the input changed are left as they are: mm_reset() must put
 * them back (teardown compares watermarks and reserves with a fresh
 * instance's; corpus/regressions/watermark/ has the input that showed it
 * did not).
 */
static void wm_end(struct mf_ctx *c)
{
	mf_pages_end(c);
}

/*
 * wm_compare(): compare_one()'s calls, in its order, against the
 * reference's answers (two per flag set and mark: with NR_FREE_PAGES, with
 * the op's free count), as the op computed them.
 */
static void wm_cgen_prologue(struct mf_ctx *c, FILE *f)
{
	(void)c;
	fputs("static const unsigned reserve_bits[] = { ALLOC_MIN_RESERVE, ALLOC_NON_BLOCK, ALLOC_HIGHATOMIC, ALLOC_OOM,\n"
	      "\t\t\t\t\tALLOC_CPUSET | ALLOC_KSWAPD };\n"
	      "UNUSED static void wm_compare(int op, int zi, unsigned order, int hz, long custom_mark, long custom_free,\n"
	      "\t\t\t      const char *want)\n"
	      "{\n\tstruct zone *z = mm_zone(mm, (enum zone_type)zi);\n"
	      "\tfor (unsigned w = 0; w < NR_WMARK; w++)\n"
	      "\t\tfor (unsigned sub = 0; sub < 32; sub++) {\n"
	      "\t\t\tunsigned flags = w;\n"
	      "\t\t\tfor (unsigned b = 0; b < 5; b++)\n\t\t\t\tif (sub & (1u << b))\n\t\t\t\t\tflags |= reserve_bits[b];\n"
	      "\t\t\tlong marks[2] = { (long)zone_wmark_pages(z, (enum zone_watermarks)w), custom_mark };\n"
	      "\t\t\tfor (int m = 0; m < 2; m++, want += 2) {\n"
	      "\t\t\t\tint ok = zone_watermark_ok(z, order, (unsigned long)marks[m], hz, flags);\n"
	      "\t\t\t\tint fast = zone_watermark_fast(z, order, (unsigned long)marks[m], hz, flags, 0);\n"
	      "\t\t\t\tint raw = __zone_watermark_ok(z, order, (unsigned long)marks[m], hz, flags, custom_free);\n"
	      "\t\t\t\tif (ok != want[0] - '0' || fast != want[0] - '0' || raw != want[1] - '0')\n"
	      "\t\t\t\t\tfail(op, \"W1 violated: zone %d order %u mark %ld hz %d flags %#x: zone_watermark_ok %d, \"\n"
	      "\t\t\t\t\t     \"zone_watermark_fast %d, __zone_watermark_ok(free %ld) %d; the reference says %c, %c\",\n"
	      "\t\t\t\t\t     zi, order, marks[m], hz, flags, ok, fast, custom_free, raw, want[0], want[1]);\n"
	      "\t\t\t}\n\t\t}\n}\n\n", f);
}

static const struct mf_target wm_target = {
	.name = "watermark",
	.setup = &wm_setup,
	.ops = wm_ops,
	.nops = sizeof(wm_ops) / sizeof(wm_ops[0]),
	.check_level = 2,
	.final_level = 4,   /* W1 over every order, flag set and highest zone */
	.begin = wm_begin,
	.release = wm_release,
	.end = wm_end,
	.cgen_prologue = wm_cgen_prologue,
	.config_of = wm_config_of,
};

MF_TARGET(wm_target)

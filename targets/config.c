/* SPDX-License-Identifier: MIT */
/*
 * config.c - fuzz target for struct mm_config itself.
 *
 * The setup record picks a starting config (all zero, or a named one);
 * each op changes one field - to any value, in or out of range - or tries
 * mm_config_validate() / mm_create() on the config as it stands (and the
 * input always ends with one mm_create()).  For each try, an independent
 * reference validator written here from mm.h's contract lists what is
 * wrong with the config, and:
 *
 *   - invalid (the reference found a problem): mm_config_validate() != 0
 *     and mm_create() == NULL, each with a non-empty message (when the
 *     buffer holds one) that names one of the problems; nothing written
 *     past the error buffer; never a crash;
 *   - valid: mm_config_validate() == 0 and mm_create() succeeds (spans up
 *     to MAX_CREATE_SPAN pages, which every named config fits in; larger
 *     valid configs are only validated, to stay fast); the instance passes
 *     mm_check level 3, allocates a little from every zone (level 2), frees
 *     and drains (level 2), resets, passes level 3 again and is destroyed.
 *     At most MAX_BUILDS distinct configs per input: a create of a config
 *     this input has already built (every field the same), or of a fifth,
 *     is only validated (see built_before()).
 * The reference knows every rule mm_config_validate() has, the per-cpu-list
 * ones too: a refusal it cannot explain is a finding, whatever the message
 * says.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cgen.h"
#include "common/configs.h"
#include "common/harness.h"
#include "common/pages.h"

#define MAX_CREATE_SPAN   (1UL << 15)     /* pages: every named config (default: 24,575) is created;
					   larger valid configs are only validated, to stay fast */
#define ERRBUF            320
#define ADDR_LIMIT        ((~0UL >> MM_PAGE_SHIFT) - (2UL << MM_MAX_ORDER_LIMIT))   /* mm.c's bound */

static const char *const base_names[] = {
	"zero", "micro", "tiny", "default", "holes", "unaligned", "tinyzones", "highpfn", "order0", "bigorder",
};
_Static_assert(sizeof(base_names) / sizeof(base_names[0]) == MF_NR_CONFIGS + 1, "one base per named config");
static const char *const zone_names[] = { "DMA", "DMA32", "Normal", "Movable" };

static struct mm_config cfg;          /* the config being built */
static bool tried_last;               /* the last op was a create */
static unsigned long nr_valid, nr_invalid, nr_created, nr_repeats, nr_past_cap;

/*
 * The valid configs this input has built, at most MAX_BUILDS.  A create of
 * one of them again, or of another valid config once MAX_BUILDS are built,
 * is only validated.  Config is the slowest target by far, and the fuzzer
 * grows its inputs towards more builds: more builds hit the same edges more
 * often, which libFuzzer counts as new features.  The campaign's corpus
 * repeated configs (one input built the 64-vCPU default machine 13 times)
 * and built up to 10 distinct ones per input; with four it reaches the
 * same edges at 2.4 times the speed.  A build depends on nothing an earlier
 * one in the input did (each is a machine of its own), so a config past the
 * cap is the first of some other input.
 */
#define MAX_BUILDS 4
static struct mm_config built[MAX_BUILDS];
static unsigned int nr_built;

/* ------------------------------------------------------------ the reference */

struct problems {
	unsigned int n;
	const char *what[16];     /* keywords, one of which the message must contain */
};

static void problem(struct problems *p, const char *keyword)
{
	if (p->n < 16)
		p->what[p->n++] = keyword;
}

static bool zone_empty(const struct mm_config *c, int z)
{
	return c->zones[z].end_pfn == c->zones[z].start_pfn;
}

/* Everything wrong with @c, from the contract in mm.h; *span: pages from the first to the last pfn. */
static void reference(const struct mm_config *c, struct problems *p, unsigned long *span)
{
	unsigned long first = ~0UL, last = 0, zone_pages = 0, hole_pages = 0;
	int prev = -1;

	memset(p, 0, sizeof(*p));
	*span = 0;
	if (c->nr_cpus < 1 || c->nr_cpus > MM_MAX_CPUS)
		problem(p, "nr_cpus");
	if (c->max_order > MM_MAX_ORDER_LIMIT)
		problem(p, "max_order");
	if (c->pageblock_order > c->max_order)
		problem(p, "pageblock_order");
	bool zones_ok = true;
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		const struct mm_span *s = &c->zones[z];
		if (s->end_pfn < s->start_pfn) {
			problem(p, "zone");
			zones_ok = false;
			continue;
		}
		if (zone_empty(c, z))
			continue;
		if (s->end_pfn > ADDR_LIMIT) {
			problem(p, "zone");
			zones_ok = false;
		}
		if (prev >= 0 && s->start_pfn < c->zones[prev].end_pfn) {
			problem(p, "zone");
			zones_ok = false;
		}
		prev = z;
		first = s->start_pfn < first ? s->start_pfn : first;
		last = s->end_pfn > last ? s->end_pfn : last;
		zone_pages += s->end_pfn - s->start_pfn;
	}
	if (!zones_ok)
		return;            /* the rest is measured against zones that make sense */
	if (!zone_pages) {
		problem(p, "zero");
		problem(p, "empty");
		return;
	}
	*span = last - first;
	if (*span > MM_MAX_SPAN_PAGES) {
		problem(p, "span");
		problem(p, "limit");
	}
	if (c->nr_holes > MM_MAX_HOLES) {
		problem(p, "hole");
	} else {
		for (unsigned int i = 0; i < c->nr_holes; i++) {
			const struct mm_span *h = &c->holes[i];
			bool inside = false;
			if (h->end_pfn <= h->start_pfn) {
				problem(p, "hole");
				continue;
			}
			for (int z = 0; z < MAX_NR_ZONES; z++)
				inside |= !zone_empty(c, z) && h->start_pfn >= c->zones[z].start_pfn &&
					  h->end_pfn <= c->zones[z].end_pfn;
			if (!inside)
				problem(p, "hole");
			for (unsigned int j = 0; j < i; j++)
				if (h->start_pfn < c->holes[j].end_pfn && c->holes[j].start_pfn < h->end_pfn &&
				    c->holes[j].end_pfn > c->holes[j].start_pfn)
					problem(p, "hole");
			hole_pages += h->end_pfn - h->start_pfn;
		}
		if (!p->n && hole_pages >= zone_pages) {
			problem(p, "zero");
			problem(p, "hole");
		}
	}
	if (!p->n && c->min_free_kbytes > (zone_pages - hole_pages) * (MM_PAGE_SIZE / 1024))
		problem(p, "min_free_kbytes");
	if (c->watermark_scale_factor > 3000)
		problem(p, "watermark_scale_factor");
	if (c->wmark_algo != MM_WMARK_MODERN && c->wmark_algo != MM_WMARK_2008)
		problem(p, "wmark_algo");
	if (c->bad_policy != MM_BAD_REPORT && c->bad_policy != MM_BAD_ABORT)
		problem(p, "bad_policy");
	if (c->debug > 3)
		problem(p, "debug");
	if (c->pcp_batch > 4096)
		problem(p, "pcp_batch");
	if (c->pcp_high > (1u << 22))
		problem(p, "pcp_high");
	if (c->percpu_pagelist_high_fraction && c->percpu_pagelist_high_fraction < 8)
		problem(p, "percpu_pagelist_high_fraction");
}

static bool contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return true;
	return false;
}

static bool names_a_problem(const char *msg, const struct problems *p)
{
	for (unsigned int i = 0; i < p->n; i++)
		if (contains_ci(msg, p->what[i]))
			return true;
	return false;
}

/* ------------------------------------------------------------ trying a config */

/* Every field of the config being built, assigned to the C file's `cfg`. */
static void emit_fields(struct mf_ctx *c)
{
	FILE *f = c->cgen;
	if (!f)
		return;
	fprintf(f, "\tmemset(&ccfg, 0, sizeof(ccfg));\n");
	fprintf(f, "\tccfg.nr_cpus = %u; ccfg.max_order = %u; ccfg.pageblock_order = %u;\n", cfg.nr_cpus, cfg.max_order,
		cfg.pageblock_order);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		fprintf(f, "\tccfg.zones[%d] = (struct mm_span){ %#lx, %#lx };\n", z, cfg.zones[z].start_pfn,
			cfg.zones[z].end_pfn);
	fprintf(f, "\tccfg.nr_holes = %u;\n", cfg.nr_holes);
	for (int i = 0; i < MM_MAX_HOLES; i++)
		if (cfg.holes[i].start_pfn || cfg.holes[i].end_pfn)
			fprintf(f, "\tccfg.holes[%d] = (struct mm_span){ %#lx, %#lx };\n", i, cfg.holes[i].start_pfn,
				cfg.holes[i].end_pfn);
	fprintf(f, "\tccfg.min_free_kbytes = %lu; ccfg.watermark_scale_factor = %u;\n", cfg.min_free_kbytes,
		cfg.watermark_scale_factor);
	fprintf(f, "\tccfg.lowmem_reserve_ratio[0] = %u; ccfg.lowmem_reserve_ratio[1] = %u; "
		   "ccfg.lowmem_reserve_ratio[2] = %u; ccfg.lowmem_reserve_ratio[3] = %u;\n", cfg.lowmem_reserve_ratio[0],
		cfg.lowmem_reserve_ratio[1], cfg.lowmem_reserve_ratio[2], cfg.lowmem_reserve_ratio[3]);
	fprintf(f, "\tccfg.wmark_algo = %d; ccfg.pcp_batch = %u; ccfg.pcp_high = %u; ccfg.percpu_pagelist_high_fraction = %u;\n"
		   "\tccfg.pcp_prefetch_buddy = %d; ccfg.debug = %u; ccfg.bad_policy = %d; ccfg.quiet = %d;\n",
		(int)cfg.wmark_algo, cfg.pcp_batch, cfg.pcp_high, cfg.percpu_pagelist_high_fraction,
		(int)cfg.pcp_prefetch_buddy, cfg.debug, (int)cfg.bad_policy, (int)cfg.quiet);
}

/* The error buffer: errlen bytes for the message, then a canary that must stay. */
static bool canary_ok(const char *buf, unsigned int errlen)
{
	for (unsigned int i = errlen; i < ERRBUF; i++)
		if (buf[i] != (char)0xa5)
			return false;
	return true;
}

/* Field by field: the struct has padding that assignments need not keep. */
static bool same_config(const struct mm_config *a, const struct mm_config *b)
{
	if (a->nr_cpus != b->nr_cpus || a->max_order != b->max_order || a->pageblock_order != b->pageblock_order ||
	    a->nr_holes != b->nr_holes || a->min_free_kbytes != b->min_free_kbytes ||
	    a->watermark_scale_factor != b->watermark_scale_factor || a->wmark_algo != b->wmark_algo ||
	    a->pcp_batch != b->pcp_batch || a->pcp_high != b->pcp_high ||
	    a->percpu_pagelist_high_fraction != b->percpu_pagelist_high_fraction ||
	    a->pcp_prefetch_buddy != b->pcp_prefetch_buddy || a->debug != b->debug || a->bad_policy != b->bad_policy ||
	    a->quiet != b->quiet)
		return false;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (a->zones[z].start_pfn != b->zones[z].start_pfn || a->zones[z].end_pfn != b->zones[z].end_pfn ||
		    a->lowmem_reserve_ratio[z] != b->lowmem_reserve_ratio[z])
			return false;
	for (int i = 0; i < MM_MAX_HOLES; i++)
		if (a->holes[i].start_pfn != b->holes[i].start_pfn || a->holes[i].end_pfn != b->holes[i].end_pfn)
			return false;
	return true;
}

static bool built_before(const struct mm_config *c)
{
	for (unsigned int i = 0; i < nr_built; i++)
		if (same_config(&built[i], c))
			return true;
	return false;
}

static void exercise(struct mf_ctx *c, struct mm *mm)
{
	static const gfp_t zone_gfp[] = { __GFP_DMA, __GFP_DMA32, 0, __GFP_HIGHMEM | __GFP_MOVABLE };
	struct page *p[MAX_NR_ZONES][4];
	unsigned int order[4];

	struct mf_baseline base, now;
	char why[256];

	c->mm = mm;
	mf_check(c, 3);
	mf_baseline_capture(mm, &base);
	for (unsigned int o = 0; o < 4; o++)
		order[o] = o <= cfg.max_order ? o : 0;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		for (unsigned int o = 0; o < 4; o++) {
			p[z][o] = alloc_pages(mm, zone_gfp[z] | GFP_KERNEL | __GFP_NORETRY, order[o]);
			if (!p[z][o])
				continue;
			mf_page_check_placement(c, p[z][o], order[o], zone_gfp[z] | GFP_KERNEL);
			memset(page_address(mm, p[z][o]), 0x5a, MM_PAGE_SIZE << order[o]);
		}
	mf_check(c, 3);     /* B4 counts the allocated pages from the memmap (no client walker here) */
	for (int z = 0; z < MAX_NR_ZONES; z++)
		for (unsigned int o = 0; o < 4; o++)
			if (p[z][o])
				__free_pages(mm, p[z][o], order[o]);
	drain_all_pages(mm, NULL);
	mf_check(c, 2);
	/* Destroys cleanly: with everything freed and drained, every page is back where it started. */
	mf_baseline_capture(mm, &now);
	if (!mf_baseline_same(&base, &now, true, true, NULL, why, sizeof(why)))
		mf_fail(c, "C1", "a valid config after freeing and draining what it allocated: %s", why);
	if (mm_nr_reports(mm))
		mf_fail(c, "C1", "a valid config: %lu allocator report(s) for legitimate calls: %s", mm_nr_reports(mm),
			mm_last_report(mm)->msg);
	mm_reset(mm);
	mf_check(c, 3);
	c->mm = NULL;
}

static void try_config(struct mf_ctx *c, unsigned int errlen, bool create)
{
	struct problems p;
	unsigned long span;
	char e1[ERRBUF], e2[ERRBUF], full[ERRBUF];

	reference(&cfg, &p, &span);
	bool want_bad = p.n != 0;              /* invalid for the reference */
	/* A run that dies inside mm_config_validate leaves validate() in the C file (as a call in flight). */
	mf_cgen_call(c, "validate(%u, %u, %d);", c->cur, errlen, want_bad);
	/* The whole message first, in a buffer that holds it ... */
	int vf = mm_config_validate(&cfg, full, ERRBUF);
	/* ... then with the op's buffer, which may truncate it. */
	memset(e1, 0xa5, sizeof(e1));
	memset(e2, 0xa5, sizeof(e2));
	int v = mm_config_validate(&cfg, errlen ? e1 : NULL, errlen);
	MF_C(c, "\tvalidate(%u, %u, %d);\n", c->cur, errlen, want_bad);
	if (!canary_ok(e1, errlen))
		mf_fail(c, "C1", "mm_config_validate wrote past the %u-byte error buffer", errlen);
	if (!v != !vf)
		mf_fail(c, "C1", "mm_config_validate's verdict depends on the error buffer: %d with %u bytes, %d with %d",
			v, errlen, vf, ERRBUF);
	if (p.n && !v)
		mf_fail(c, "C1", "mm_config_validate accepted an invalid config (%s%s%s)", p.what[0],
			p.n > 1 ? ", " : "", p.n > 1 ? p.what[1] : "");
	if (!p.n && v)
		mf_fail(c, "C1", "mm_config_validate refused a valid config: \"%s\"", full);
	if (v && !full[0])
		mf_fail(c, "C1", "mm_config_validate refused the config with an empty message");
	if (v && p.n && !names_a_problem(full, &p))
		mf_fail(c, "C1", "mm_config_validate's message \"%s\" does not name the problem (%s)", full, p.what[0]);
	if (v && errlen && (strnlen(e1, errlen) == errlen || strncmp(e1, full, errlen - 1)))
		mf_fail(c, "C1", "with a %u-byte buffer the message is not the truncated full message \"%s\"", errlen,
			full);
	if (v)
		nr_invalid++;
	else
		nr_valid++;
	if (!create || (!v && span > MAX_CREATE_SPAN))
		return;
	if (!v && built_before(&cfg)) {
		nr_repeats++;
		return;
	}
	if (!v && nr_built == MAX_BUILDS) {
		nr_past_cap++;
		return;
	}

	/* Written before the call: create() makes mm_create and the exercise, so a run that dies in them has it. */
	MF_C(c, "\tcreate(%u, %u, %d);\n", c->cur, errlen, !!v);
	struct mm *mm = mm_create(&cfg, errlen ? e2 : NULL, errlen);
	if (!canary_ok(e2, errlen))
		mf_fail(c, "C1", "mm_create wrote past the %u-byte error buffer", errlen);
	if (v && mm)
		mf_fail(c, "C1", "mm_create accepted a config mm_config_validate refuses (\"%s\")", errlen ? e1 : "");
	if (!v && !mm)
		mf_fail(c, "C1", "mm_create refused a valid config of %lu pages: \"%s\"", span,
			errlen ? e2 : "(no buffer)");
	if (!mm) {
		if (errlen && (strnlen(e2, errlen) == errlen || strncmp(e2, full, errlen - 1)))
			mf_fail(c, "C1", "mm_create's message with a %u-byte buffer is not the truncated validation "
				"message \"%s\"", errlen, full);
		return;
	}
	nr_created++;
	exercise(c, mm);
	mm_destroy(mm);
	built[nr_built++] = cfg;
}

/* ------------------------------------------------------------ ops */

/* A field changed: no allocator call; the C file changes its `ccfg` the same way (the whole of it: short enough). */
static void set_done(struct mf_ctx *c, struct mf_op *op)
{
	tried_last = false;
	(void)op;
	emit_fields(c);
}

static void op_cpus(struct mf_ctx *c, struct mf_op *op) { cfg.nr_cpus = (unsigned int)op->a[0]; set_done(c, op); }
static void op_max_order(struct mf_ctx *c, struct mf_op *op) { cfg.max_order = (unsigned int)op->a[0]; set_done(c, op); }
static void op_pb_order(struct mf_ctx *c, struct mf_op *op) { cfg.pageblock_order = (unsigned int)op->a[0]; set_done(c, op); }

static void op_zone(struct mf_ctx *c, struct mf_op *op)
{
	cfg.zones[op->a[0]] = (struct mm_span){ (unsigned long)op->a[1], (unsigned long)op->a[2] };
	set_done(c, op);
}

static void op_hole(struct mf_ctx *c, struct mf_op *op)
{
	cfg.holes[op->a[0]] = (struct mm_span){ (unsigned long)op->a[1], (unsigned long)op->a[2] };
	if ((unsigned int)op->a[0] >= cfg.nr_holes)
		cfg.nr_holes = (unsigned int)op->a[0] + 1;
	set_done(c, op);
}

/* Move every span by delta pages (far up: a large first pfn, or past the address space). */
static void op_shift(struct mf_ctx *c, struct mf_op *op)
{
	unsigned long d = (unsigned long)op->a[0] << (op->a[1] ? 24 : 0);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (!zone_empty(&cfg, z)) {
			cfg.zones[z].start_pfn += d;
			cfg.zones[z].end_pfn += d;
		}
	for (int i = 0; i < MM_MAX_HOLES; i++) {
		cfg.holes[i].start_pfn += d;
		cfg.holes[i].end_pfn += d;
	}
	set_done(c, op);
}

static void op_nr_holes(struct mf_ctx *c, struct mf_op *op) { cfg.nr_holes = (unsigned int)op->a[0]; set_done(c, op); }

static void op_tunable(struct mf_ctx *c, struct mf_op *op)
{
	unsigned long v = (unsigned long)op->a[1];
	switch (op->a[0]) {
	case 0: cfg.min_free_kbytes = v; break;
	case 1: cfg.watermark_scale_factor = (unsigned int)v; break;
	case 2: case 3: case 4: case 5: cfg.lowmem_reserve_ratio[op->a[0] - 2] = (unsigned int)v; break;
	case 6: cfg.wmark_algo = (enum mm_wmark_algo)(v % 4); break;
	case 7: cfg.pcp_batch = (unsigned int)v; break;
	case 8: cfg.pcp_high = (unsigned int)v; break;
	case 9: cfg.percpu_pagelist_high_fraction = (unsigned int)v; break;
	case 10: cfg.pcp_prefetch_buddy = v & 1; break;
	case 11: cfg.debug = (unsigned int)(v % 8); break;
	case 12: cfg.bad_policy = (enum mm_bad_policy)(v % 4); break;
	}
	set_done(c, op);
}

static void op_validate(struct mf_ctx *c, struct mf_op *op)
{
	try_config(c, (unsigned int)op->a[0], false);
}

static void op_create(struct mf_ctx *c, struct mf_op *op)
{
	try_config(c, (unsigned int)op->a[0], true);
	tried_last = true;
}

static const char *const tunable_names[] = {
	"min_free_kbytes", "watermark_scale_factor", "ratio_dma", "ratio_dma32", "ratio_normal", "ratio_movable",
	"wmark_algo", "pcp_batch", "pcp_high", "percpu_pagelist_high_fraction", "pcp_prefetch_buddy", "debug",
	"bad_policy",
};

static const struct mf_opdesc config_setup = {
	"setup", "the starting config: all zero, or a named one", NULL, NULL,
	{ MF_A_ENUM("base", base_names) },
};

static const struct mf_opdesc config_ops[] = {
	{ "cpus", "nr_cpus", op_cpus, NULL, { MF_A_INT("n", 0, 70) } },
	{ "max_order", "max_order", op_max_order, NULL, { MF_A_INT("n", 0, 15) } },
	{ "pb_order", "pageblock_order", op_pb_order, NULL, { MF_A_INT("n", 0, 15) } },
	{ "zone", "a zone's span [start, end) (end < start: reversed; equal: empty)", op_zone, NULL,
	  { MF_A_ENUM("zone", zone_names), MF_A_INT("start", 0, 32767), MF_A_INT("end", 0, 32767) } },
	{ "zone_far", "a zone's span anywhere in 63 bits", op_zone, NULL,
	  { MF_A_ENUM("zone", zone_names), MF_A_HEX("start", 0, (long)(~0UL >> 1)), MF_A_HEX("end", 0, (long)(~0UL >> 1)) } },
	{ "hole", "hole i (nr_holes grows to cover it)", op_hole, NULL,
	  { MF_A_INT("i", 0, MM_MAX_HOLES - 1), MF_A_INT("start", 0, 32767), MF_A_INT("end", 0, 32767) } },
	{ "nr_holes", "nr_holes, up to past MM_MAX_HOLES", op_nr_holes, NULL, { MF_A_INT("n", 0, MM_MAX_HOLES + 8) } },
	{ "shift", "add delta (<< 24 when far) to every zone and hole", op_shift, NULL,
	  { MF_A_INT("delta", 0, 65535), MF_A_BOOL("far") } },
	{ "set", "one of the tunables", op_tunable, NULL,
	  { MF_A_ENUM("field", tunable_names), MF_A_INT("value", 0, 1L << 32) } },
	{ "validate", "mm_config_validate with an error buffer of errlen bytes", op_validate, NULL,
	  { MF_A_INT("errlen", 0, 300) } },
	{ "create", "mm_create (and, when valid, check / allocate / reset / destroy)", op_create, NULL,
	  { MF_A_INT("errlen", 0, 300) } },
};

static bool config_begin(struct mf_ctx *c, const struct mf_op *setup)
{
	if (setup->a[0] == 0)
		memset(&cfg, 0, sizeof(cfg));
	else
		mf_config_named(&cfg, (enum mf_config_kind)(setup->a[0] - 1), 2);
	tried_last = false;
	nr_built = 0;
	MF_C(c, "\t(void)cfg;\n\t(void)err;\n");
	emit_fields(c);
	return true;
}

static void config_release(struct mf_ctx *c, struct mf_alloc *a)
{
	(void)c;
	(void)a;
}

/* Every input ends with mm_create of the config it built. */
static void config_end(struct mf_ctx *c)
{
	if (!tried_last)
		try_config(c, ERRBUF - 20, true);
}

static void config_stats(void)
{
	if (mf_env_ulong("MMFUZZ_STATS", 0))
		fprintf(stderr, "config: %lu valid, %lu invalid, %lu created, %lu repeats and %lu past %d builds only "
			"validated\n", nr_valid, nr_invalid, nr_created, nr_repeats, nr_past_cap, MAX_BUILDS);
}

/*
 * The C file's checks: validate() as try_config() checks mm_config_validate
 * (the verdict the reference gives, the same verdict with any buffer, no
 * byte written past it); create() as mm_create is checked, then
 * exercise()d as here (the free-page counts stand for the whole baseline).
 */
static void config_cgen_prologue(struct mf_ctx *c, FILE *f)
{
	(void)c;
	fprintf(f, "#define ERRBUF %d\n", ERRBUF);
	fputs("static struct mm_config ccfg;   /* the config being built */\n"
	      "UNUSED static int canary_ok(const char *b, unsigned len)\n"
	      "{\n\tfor (unsigned i = len; i < ERRBUF; i++)\n\t\tif (b[i] != (char)0xa5)\n\t\t\treturn 0;\n\treturn 1;\n}\n"
	      "UNUSED static void validate(int op, unsigned errlen, int want_bad)\n"
	      "{\n\tchar full[ERRBUF], e[ERRBUF];\n"
	      "\tint vf = mm_config_validate(&ccfg, full, ERRBUF);\n"
	      "\tmemset(e, 0xa5, sizeof(e));\n"
	      "\tint v = mm_config_validate(&ccfg, errlen ? e : NULL, errlen);\n"
	      "\texpect(op, canary_ok(e, errlen), \"mm_config_validate writes nothing past the error buffer\");\n"
	      "\texpect(op, !v == !vf, \"mm_config_validate's verdict does not depend on the error buffer\");\n"
	      "\texpect(op, !v != !!want_bad, want_bad ? \"mm_config_validate refuses the invalid config\" :\n"
	      "\t       \"mm_config_validate accepts the valid config\");\n"
	      "\texpect(op, !v || full[0], \"a refusal has a message\");\n"
	      "}\n"
	      "UNUSED static void exercise(int op)\n"
	      "{\n\tstatic const gfp_t zg[4] = { __GFP_DMA, __GFP_DMA32, 0, __GFP_HIGHMEM | __GFP_MOVABLE };\n"
	      "\tstruct page *p[4][4];\n\tunsigned order[4];\n\tunsigned long free0[4];\n"
	      "\tcheck_at(op, 3);\n"
	      "\tfor (int z = 0; z < 4; z++)\n\t\tfree0[z] = mm_zone_page_state(mm, z, NR_FREE_PAGES);\n"
	      "\tfor (unsigned o = 0; o < 4; o++)\n\t\torder[o] = o <= ccfg.max_order ? o : 0;\n"
	      "\tfor (int z = 0; z < 4; z++)\n\t\tfor (unsigned o = 0; o < 4; o++) {\n"
	      "\t\t\tp[z][o] = alloc_pages(mm, zg[z] | GFP_KERNEL | __GFP_NORETRY, order[o]);\n"
	      "\t\t\tif (!p[z][o])\n\t\t\t\tcontinue;\n"
	      "\t\t\texpect(op, !(page_to_pfn(mm, p[z][o]) & ((1UL << order[o]) - 1)), \"aligned to its order\");\n"
	      "\t\t\tmemset(page_address(mm, p[z][o]), 0x5a, MM_PAGE_SIZE << order[o]);\n\t\t}\n"
	      "\tcheck_at(op, 3);\n"
	      "\tfor (int z = 0; z < 4; z++)\n\t\tfor (unsigned o = 0; o < 4; o++)\n\t\t\tif (p[z][o])\n"
	      "\t\t\t\t__free_pages(mm, p[z][o], order[o]);\n"
	      "\tdrain_all_pages(mm, NULL);\n\tcheck_at(op, 2);\n"
	      "\tfor (int z = 0; z < 4; z++)\n"
	      "\t\texpect(op, mm_zone_page_state(mm, z, NR_FREE_PAGES) == free0[z], \"every page freed comes back\");\n"
	      "\texpect(op, mm_nr_reports(mm) == 0, \"no allocator report for legitimate calls\");\n"
	      "\tmm_reset(mm);\n\tcheck_at(op, 3);\n}\n"
	      "UNUSED static void create(int op, unsigned errlen, int want_bad)\n"
	      "{\n\tchar e[ERRBUF];\n"
	      "\tmemset(e, 0xa5, sizeof(e));\n"
	      "\tmm = mm_create(&ccfg, errlen ? e : NULL, errlen);\n"
	      "\texpect(op, canary_ok(e, errlen), \"mm_create writes nothing past the error buffer\");\n"
	      "\texpect(op, !mm == !!want_bad, want_bad ? \"mm_create refuses the config mm_config_validate refuses\" :\n"
	      "\t       \"mm_create accepts the valid config\");\n"
	      "\tif (!mm)\n\t\treturn;\n"
	      "\texercise(op);\n\tmm_destroy(mm);\n\tmm = NULL;\n}\n\n", f);
}

static const struct mf_target config_target = {
	.name = "config",
	.setup = &config_setup,
	.ops = config_ops,
	.nops = sizeof(config_ops) / sizeof(config_ops[0]),
	.check_level = 0,
	.final_level = 3,
	.begin = config_begin,
	.release = config_release,
	.end = config_end,
	.cgen_prologue = config_cgen_prologue,
};

MF_TARGET(config_target)

__attribute__((constructor)) static void config_init(void)
{
	atexit(config_stats);
}

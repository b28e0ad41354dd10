/* SPDX-License-Identifier: MIT */
/* slub_opts.c - the slub and kmalloc targets' `options` op (slub_opts.h). */
#include <stdlib.h>
#include <string.h>

#include "cgen.h"
#include "mm/slab.h"
#include "slub_opts.h"

const struct mf_flag mf_opt_dbg_letters[7] = {
	{ "F", 1 }, { "Z", 2 }, { "P", 4 }, { "U", 8 }, { "A", 16 }, { "O", 32 }, { "reset", 64 },
};
const char *const mf_opt_dbg_modes[5] = { "keep", "plain", "flags", "two", "off" };
const char *const mf_opt_fastpaths[4] = { "keep", "cmpxchg", "locked", "irqoff" };
const char *const mf_opt_tri[3] = { "keep", "0", "1" };
const char *const mf_opt_min_orders[5] = { "keep", "0", "1", "2", "3" };
const char *const mf_opt_max_orders[6] = { "keep", "0", "1", "2", "3", "5" };
const char *const mf_opt_min_objs[7] = { "keep", "0", "1", "2", "4", "16", "200" };
const char *const mf_opt_fails[7] = { "keep", "0", "1", "2", "3", "5", "8" };
const char *const mf_opt_seeds[4] = { "keep", "1", "0x1234abcd", "0" };
const char *const mf_opt_bads[15] = { "none", "unknown", "flag", "max_order", "min_objects", "bool", "fastpath",
				      "novalue", "number", "long", "blocks", "list", "empty", "hardened_bool",
				      "init_bool" };

#define LIST_TOO_LONG ("slub_debug=F," \
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
static const char *const bad_text[15] = {
	"", "slub_bogus=1", "slub_debug=FQ", "slub_max_order=99", "slub_min_objects=40000",
	"slab_freelist_random=maybe", "slub_fastpath=fast", "slub_min_order", "slub_fail_new_slab=12x", "",
	"slub_debug=F,a;F,b;F,c;F,d;F,e;F,f;F,g;F,h;F,i",
	LIST_TOO_LONG, "slub_min_objects=", "slab_freelist_hardened=2", "init_on_alloc=maybe",
};

static void dbg_flags_text(char *out, long bits)
{
	for (unsigned int i = 0; i < 6; i++)
		if (bits & (long)mf_opt_dbg_letters[i].bit)
			*out++ = mf_opt_dbg_letters[i].name[0];
	if (bits & 64)
		*out++ = '-';
	*out = 0;
}

static void dbg_block(char *out, size_t len, long bits, long list, const char *const *lists)
{
	char f[16];
	dbg_flags_text(f, bits);
	if (list)
		snprintf(out, len, "%s,%s", f, lists[list]);
	else
		snprintf(out, len, "%s", f);
}

size_t mf_slub_options_text(const struct mf_op *op, const char *const *lists, char *buf, size_t len,
			    struct mf_opt_effect *e)
{
	char blk[64], blk2[64];
	size_t n = 0;
	bool bad_last = op->a[13] != 0;
	long bad = op->a[12];

#define OPT(...) do { if (n < len) n += (size_t)snprintf(buf + n, len - n, __VA_ARGS__); } while (0)
	buf[0] = 0;
	if (bad != MF_OPT_BAD_NONE && bad != MF_OPT_BAD_LONG && !bad_last)
		OPT("%s ", bad_text[bad]);
	switch (op->a[0]) {
	case MF_DBG_PLAIN: OPT("slub_debug "); break;
	case MF_DBG_FLAGS:
		dbg_block(blk, sizeof(blk), op->a[1], op->a[2], lists);
		OPT("slub_debug=%s ", blk);
		break;
	case MF_DBG_TWO:
		dbg_block(blk, sizeof(blk), op->a[1], op->a[2], lists);
		dbg_block(blk2, sizeof(blk2), op->a[3], op->a[4], lists);
		OPT("slub_debug=%s;%s ", blk, blk2);
		break;
	case MF_DBG_OFF: OPT("slub_debug=- "); break;
	}
	if (op->a[5])
		OPT("slub_fastpath=%s ", mf_opt_fastpaths[op->a[5]]);
	if (op->a[6])
		OPT("slab_freelist_hardened=%s ", mf_opt_tri[op->a[6]]);
	if (op->a[7])
		OPT("slab_freelist_random=%s ", mf_opt_tri[op->a[7]]);
	if (op->a[8])
		OPT("init_on_alloc=%s ", mf_opt_tri[op->a[8]]);
	if (op->a[9])
		OPT("init_on_free=%s ", mf_opt_tri[op->a[9]]);
	if (op->a[10])
		OPT("slub_min_order=%s ", mf_opt_min_orders[op->a[10]]);
	if (op->a[11])
		OPT("slub_max_order=%s ", mf_opt_max_orders[op->a[11]]);
	if (op->a[14])
		OPT("slub_min_objects=%s ", mf_opt_min_objs[op->a[14]]);
	if (op->a[15])
		OPT("slub_fail_new_slab=%s ", mf_opt_fails[op->a[15]]);
	if (op->a[15] == 1)
		OPT("kasan_quarantine=0 ");     /* with the failure injection off: no quarantine either (the default) */
	if (op->a[16])
		OPT("slub_seed=%s ", mf_opt_seeds[op->a[16]]);
	if (bad != MF_OPT_BAD_NONE && bad != MF_OPT_BAD_LONG && bad_last)
		OPT("%s", bad_text[bad]);
	if (bad == MF_OPT_BAD_LONG)
		while (n < 600 && n < len)
			OPT(" slub_seed=1");
#undef OPT
	/* What SLUB holds after the call: the tokens apply unless an invalid one before them stopped it. */
	e->applied = (bad == MF_OPT_BAD_NONE || bad_last) && bad != MF_OPT_BAD_LONG;
	e->hardened = op->a[6] ? (int)op->a[6] - 1 : -1;
	e->init_free = op->a[9] ? (int)op->a[9] - 1 : -1;
	e->o_flag = (op->a[0] == MF_DBG_FLAGS && (op->a[1] & 32)) ||
		    (op->a[0] == MF_DBG_TWO && ((op->a[1] | op->a[3]) & 32));
	return n;
}

void mf_slub_options_note(FILE *f, const struct mf_op *op, const char *const *lists)
{
	char buf[1024];
	struct mf_opt_effect e;
	size_t n = mf_slub_options_text(op, lists, buf, sizeof(buf), &e);
	fprintf(f, "%ld: \"%.*s%s\"", op->res[0], n > 120 ? 120 : (int)n, buf, n > 120 ? "..." : "");
}

/*
 * Options outlive mm_reset() (hooks.c): an input that changed them marks
 * its instance (the target's end()), and its own teardown puts back the
 * options an instance is created with (the defaults of hooks.c's
 * slab_setup(), then MMFUZZ_SLUB) right after mm_reset()
 * (mf_instance_teardown()), when every cache is empty, so every layout is
 * recomputed - from the seed, as at creation, and the random state is put
 * back to the seed afterwards - and the next input runs exactly as on a
 * fresh instance.  (Until 2026-12-01 the next input on the instance did
 * this in its begin(): then an input's path depended on what ran before
 * it, which AFL++ counted as instability.)  Only the middle call
 * relayouts (slub_seed= alone does not), and it computes nothing: each
 * cache still holds the layout it had from this very state (the layout
 * memo of allocator/slab/cache.c; tests/test_harness_slub_opts.c).
 */
#define SLUB_DEFAULTS "slub_debug=- slub_fastpath=cmpxchg slab_freelist_hardened=1 slab_freelist_random=1 " \
	"init_on_alloc=0 init_on_free=0 slub_min_order=0 slub_max_order=3 slub_min_objects=0 slub_fail_new_slab=0"
#define SLUB_DEFAULT_SEED "0x5eed"
#define NR_DIRTY 64
static struct mm *dirty[NR_DIRTY];

static void restore(struct mf_ctx *c)
{
	const char *env = getenv("MMFUZZ_SLUB"), *p;
	char buf[1024], seed[64], err[256];
	size_t n = 0;

	snprintf(seed, sizeof(seed), "slub_seed=%s", SLUB_DEFAULT_SEED);
	for (p = env; p && (p = strstr(p, "slub_seed=")); p++)
		if (p == env || p[-1] == ' ' || p[-1] == '\t') {
			n = strcspn(p, " \t\n");
			snprintf(seed, sizeof(seed), "%.*s", (int)(n < 60 ? n : 60), p);
		}
	snprintf(buf, sizeof(buf), "%s %s", SLUB_DEFAULTS, env ? env : "");
	if (mm_slub_configure(c->mm, seed, err, sizeof(err)) || mm_slub_configure(c->mm, buf, err, sizeof(err)) ||
	    mm_slub_configure(c->mm, seed, err, sizeof(err)))
		mf_fail(c, "C1", "putting SLUB's options back after mm_reset() failed: %s", err);
	/* And the layout memo as a fresh instance's: the next input computes what it would on one. */
	mm_slub_forget_layouts(c->mm);
}

void mf_slub_options_restore_if_dirty(struct mf_ctx *c)
{
	for (unsigned int i = 0; i < NR_DIRTY; i++)
		if (dirty[i] == c->mm) {
			restore(c);
			dirty[i] = NULL;
		}
}

void mf_slub_options_mark_dirty(struct mf_ctx *c)
{
	unsigned int i, free_i = ~0u;
	for (i = 0; i < NR_DIRTY && dirty[i] != c->mm; i++)
		if (!dirty[i] && free_i == ~0u)
			free_i = i;
	if (i == NR_DIRTY) {
		if (free_i == ~0u)
			mf_fail(c, "C1", "harness: more than %d instances with changed SLUB options", NR_DIRTY);
		dirty[free_i] = c->mm;
	}
}

void mf_slub_options_check(struct mf_ctx *c, const struct mf_op *op, const struct mf_opt_effect *e, const char *text)
{
	int want = e->applied && op->a[5] ? (int)op->a[5] - 1 : -1;
	enum slub_fastpath f = mm_slub_fastpath(c->mm);
	MF_C(c, "\toptions_ok(%u, %d);\n", c->cur, want);
	if (want >= 0 && f != (enum slub_fastpath)want)
		mf_fail(c, "C1", "after \"%s\" mm_slub_fastpath() is %s", text, slub_fastpath_name(f));
	if ((unsigned int)f >= SLUB_NR_FASTPATHS || strcmp(slub_fastpath_name(f), mf_opt_fastpaths[1 + f]) ||
	    strcmp(slub_fastpath_name(SLUB_NR_FASTPATHS), "?"))
		mf_fail(c, "C1", "slub_fastpath_name is wrong");
}

void mf_slub_cgen_configure_call(struct mf_ctx *c, const char *text)
{
	char q[4200];
	if (c->cgen && mf_cgen_quote(q, sizeof(q), text))
		mf_cgen_call(c, "(void)mm_slub_configure(mm, %s, NULL, 0);", q);
}

void mf_slub_cgen_common(FILE *f)
{
	fputs("static unsigned long rep0;            /* mm_nr_reports() when the op started */\n"
	      "UNUSED static void *bulk[64];\n"
	      "UNUSED static int got;\n"
	      "UNUSED static void quiet(int op, const char *what)\n"
	      "{\n\tif (mm_nr_reports(mm) != rep0)\n"
	      "\t\tfail(op, \"C1 violated: %s in a correct program reported: %s\", what, mm_last_report(mm)->msg);\n}\n"
	      "UNUSED static void configure(int op, const char *text, int bad, int r_fuzz)\n"
	      "{\n\tchar e[256];\n\te[0] = 0;\n\tint r = mm_slub_configure(mm, text, e, sizeof(e));\n"
	      "\texpect(op, bad ? r == -22 : (r == 0 || r == -16), \"mm_slub_configure's result\");\n"
	      "\texpect(op, !r || e[0], \"a refusal has a message\");\n"
	      "\tdiverged(op, r != r_fuzz, \"mm_slub_configure's result\");\n"
	      "\tquiet(op, \"mm_slub_configure\");\n}\n"
	      "UNUSED static void options_ok(int op, int fastpath)\n"
	      "{\n\tstatic const char *const names[] = { \"cmpxchg\", \"locked\", \"irqoff\" };\n"
	      "\tenum slub_fastpath fp = mm_slub_fastpath(mm);\n"
	      "\texpect(op, fastpath < 0 || (int)fp == fastpath, \"mm_slub_fastpath() is the fast path the options asked for\");\n"
	      "\texpect(op, (unsigned)fp < SLUB_NR_FASTPATHS && !strcmp(slub_fastpath_name(fp), names[fp]) &&\n"
	      "\t       !strcmp(slub_fastpath_name(SLUB_NR_FASTPATHS), \"?\"), \"slub_fastpath_name\");\n}\n", f);
}

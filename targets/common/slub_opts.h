/* SPDX-License-Identifier: MIT */
/*
 * slub_opts.h - the `options` op of the slub and kmalloc targets: SLUB's
 * options (mm_slub_configure, the kernel's boot parameters slub_debug=,
 * slub_fastpath=, slab_freelist_hardened=, init_on_alloc/free=,
 * slub_min/max_order=, slub_min_objects=, slub_fail_new_slab=, slub_seed=)
 * written as option text from the op's arguments, one invalid option put
 * first (nothing applied) or last (the rest applied) on demand; and putting
 * an instance's options back after an input changed them (options outlive
 * mm_reset()).  Each target keeps its own checks of the effect.
 */
#ifndef MF_SLUB_OPTS_H
#define MF_SLUB_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "harness.h"

/* The argument tables (sized, so MF_A_ENUM / MF_A_FLAGS can count them). */
extern const struct mf_flag mf_opt_dbg_letters[7];
extern const char *const mf_opt_dbg_modes[5];
enum { MF_DBG_KEEP, MF_DBG_PLAIN, MF_DBG_FLAGS, MF_DBG_TWO, MF_DBG_OFF };
extern const char *const mf_opt_fastpaths[4];
extern const char *const mf_opt_tri[3];
extern const char *const mf_opt_min_orders[5];
extern const char *const mf_opt_max_orders[6];
extern const char *const mf_opt_min_objs[7];
extern const char *const mf_opt_fails[7];
extern const char *const mf_opt_seeds[4];
extern const char *const mf_opt_bads[15];
enum { MF_OPT_BAD_NONE, MF_OPT_BAD_LONG = 9 };

/*
 * The op's arguments, in this order (op->a[0..16]); @lists: the target's
 * slub_debug cache lists (7 entries, [0] "all").
 */
#define MF_SLUB_OPTION_ARGS(lists)                                                                          \
	{ MF_A_ENUM("debug", mf_opt_dbg_modes), MF_A_FLAGS("dflags", mf_opt_dbg_letters, NULL),              \
	  MF_A_ENUM("dlist", lists), MF_A_FLAGS("dflags2", mf_opt_dbg_letters, NULL),                        \
	  MF_A_ENUM("dlist2", lists), MF_A_ENUM("fastpath", mf_opt_fastpaths), MF_A_ENUM("hardened", mf_opt_tri), \
	  MF_A_ENUM("random", mf_opt_tri), MF_A_ENUM("init_alloc", mf_opt_tri), MF_A_ENUM("init_free", mf_opt_tri), \
	  MF_A_ENUM("min_order", mf_opt_min_orders), MF_A_ENUM("max_order", mf_opt_max_orders),               \
	  MF_A_ENUM("bad", mf_opt_bads), MF_A_BOOL("bad_last"), MF_A_ENUM("min_objects", mf_opt_min_objs),     \
	  MF_A_ENUM("fail_new_slab", mf_opt_fails), MF_A_ENUM("seed", mf_opt_seeds) }

/* What SLUB holds after the call. */
struct mf_opt_effect {
	bool applied;                   /* the tokens reached SLUB (no invalid one before them) */
	int hardened, init_free;        /* -1: not given */
	bool o_flag;                    /* a slub_debug token with O (disable_higher_order_debug), applied or not */
};

/* The option text of an options op (also what its note prints); returns its length. */
size_t mf_slub_options_text(const struct mf_op *op, const char *const *lists, char *buf, size_t len,
			    struct mf_opt_effect *e);
/*
 * After the op's mm_slub_configure(@text) (slub and kmalloc): the fast path
 * the text asked for, when it was applied, and slub_fastpath_name(); the
 * same check written to the C file (options_ok()).
 */
void mf_slub_options_check(struct mf_ctx *c, const struct mf_op *op, const struct mf_opt_effect *e, const char *text);
/* The op's note: the return value and the text. */
void mf_slub_options_note(FILE *f, const struct mf_op *op, const char *const *lists);

/* The input changed the options of its instance (end()): its teardown puts them back. */
void mf_slub_options_mark_dirty(struct mf_ctx *c);
/* Teardown, after mm_reset(): put the options back (slab_setup()'s defaults, MMFUZZ_SLUB, its seed) if changed. */
void mf_slub_options_restore_if_dirty(struct mf_ctx *c);

/*
 * The C reproducer's helpers both SLUB targets use: rep0 (mm_nr_reports()
 * when the op started, or after its last expected report), quiet(),
 * configure() (an options op's call and checks), options_ok() (what
 * mf_slub_options_check() checks), bulk[] and got.
 */
void mf_slub_cgen_common(FILE *f);
/*
 * The op's mm_slub_configure(mm, @text) as the call in flight
 * (mf_cgen_call()), before making it: configure() writes it after.
 */
void mf_slub_cgen_configure_call(struct mf_ctx *c, const char *text);

#endif /* MF_SLUB_OPTS_H */

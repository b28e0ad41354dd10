/* SPDX-License-Identifier: MIT */
/*
 * cgen.h - writing a standalone C reproducer of one run (./mmfuzz trace
 * TARGET FILE --c OUT.c).  The targets' ops emit the allocator calls they
 * actually made, with the indices already resolved, so the file needs
 * nothing but the allocator library: no decoder, no shadow.  It checks the
 * same things in plain code: mm_check after every op, overlap and content
 * of what it holds, zeroing, report counts; and it stops with exit status 1
 * at the first violation, 2 if the run diverged from the fuzz run.
 *
 * Helpers the emitted code may call (defined by the prologue):
 *   check(op)                       mm_check at the run's per-op level
 *   check_at(op, level)
 *   track(op, id, addr, len)        overlap check, then fill with id's pattern
 *   untrack(op, id)                 pattern check, then forget
 *   expect_zero(op, addr, len)
 *   expect(op, cond, "what")        a contract check (violation: exit 1)
 *   diverged(op, cond, "what")      the run is not the fuzz run's (exit 2)
 */
#ifndef MF_CGEN_H
#define MF_CGEN_H

#include <stdio.h>

#include "harness.h"

/* Set by --c: where to write (NULL: not generating). */
void mf_cgen_open(const char *path);
FILE *mf_cgen_file(void);

void mf_cgen_begin(struct mf_ctx *c);           /* prologue, up to the opening of main() */
void mf_cgen_config(struct mf_ctx *c, const struct mm_config *cfg);   /* struct mm_config + mm_create */
void mf_cgen_after_setup(struct mf_ctx *c);
/* Close main() and the file; with @inv, record the violation the harness saw. */
void mf_cgen_finish(struct mf_ctx *c, const char *inv, const char *msg);

/*
 * What the C file cannot make as the fuzz run made it (interrupts and
 * migrations injected at preemption points: they act through the CPU
 * model's hooks, inside an allocator call).  Writes a comment at this
 * point; mf_cgen_finish then warns on stderr, naming each such op once.
 */
void mf_cgen_not_reproduced(struct mf_ctx *c, const char *op, const char *why);
/* Write @s as a C string literal. */
void mf_cgen_str(FILE *f, const char *s);

#endif /* MF_CGEN_H */

/* SPDX-License-Identifier: MIT */
/*
 * cgen.h - writing a standalone C reproducer of one run (./mmfuzz trace
 * TARGET FILE --c OUT.c).  The targets' ops emit the allocator calls they
 * actually made, with the indices already resolved, so the file needs
 * nothing but the allocator library: no decoder, no shadow.  It checks the
 * same things in plain code: mm_check after every op, overlap and content
 * of what it holds (filled with the shadow's patterns, so the memory holds
 * what it held in the fuzz run), zeroing, report counts; and it stops with
 * exit status 1 at the first violation, 2 if the run diverged from the fuzz
 * run.
 *
 * Helpers the emitted code may call (defined by the prologue):
 *   check(op)                       mm_check at the run's per-op level
 *   check_at(op, level)
 *   track(op, id, addr, len)        overlap check, then fill with id's pattern
 *   hold_pages(op, id, addr, nr)    a<id> (tracked) holds nr pages: B4's client walker counts them
 *   untrack(op, id)                 pattern check, then forget
 *   expect_zero(op, addr, len)
 *   expect(op, cond, "what")        a contract check (violation: exit 1)
 *   diverged(op, cond, "what")      the run is not the fuzz run's (exit 2)
 */
#ifndef MF_CGEN_H
#define MF_CGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "harness.h"

/* Set by --c: where to write (NULL: not generating). */
void mf_cgen_open(const char *path);
FILE *mf_cgen_file(void);

void mf_cgen_begin(struct mf_ctx *c);           /* prologue, up to the opening of main() */
void mf_cgen_config(struct mf_ctx *c, const struct mm_config *cfg);   /* struct mm_config + mm_create */
void mf_cgen_after_setup(struct mf_ctx *c);
/*
 * The instance's teardown (instance.c), after the target freed everything:
 * drain, check, compare with the state after mm_reset() (@skip_lists: per
 * zone, buddyinfo and pcp counts not compared).
 */
void mf_cgen_teardown(struct mf_ctx *c, const bool *skip_lists);
/* Close main() and the file; with @inv, record the violation the harness saw. */
void mf_cgen_finish(struct mf_ctx *c, const char *inv, const char *msg);

/*
 * Scripted hooks (targets whose scheduler hook injects interrupts and
 * migrations: pcp, bulk, slub).  The C file gets a scheduler hook and
 * an interrupt handler of its own: the hook counts the preemption points
 * from the start of each op, as the target's does, and at the ones where
 * the fuzz run's hook acted it raises the interrupt and migrates to the
 * vCPU the fuzz run went to (after checking it is the same kind of point:
 * otherwise the run diverged); the handler's n-th run makes the calls the
 * fuzz run's n-th handler run made.  Both scripts are written after main().
 *
 * The target calls: mf_cgen_hook_prologue() from its cgen_prologue (the
 * helpers: hook, irq, hook_at, irq_keep, irq_get, irq_take);
 * mf_cgen_op_start() as each op starts; mf_cgen_point() first thing in its
 * scheduler hook (the number of this point in the op), mf_cgen_act() before
 * the interrupt it makes there (irq: 1 raised, 2 marked pending, 3 through
 * the signal entry; mig false - a run that dies in the handler keeps the
 * act, and made no migration; it returns the act's number) and
 * mf_cgen_act_mig() with that number after a migration there
 * (mm_migrate_current(to) returned got);
 * mf_cgen_irq_begin() / _end() around its handler, whose
 * emitted calls go to that run's script, each page it takes kept with
 * mf_cgen_irq_keep(), each page it frees fetched first with mf_cgen_irq_get()
 * (in the C file irq_take(), which forgets it: the table of what the handler
 * holds only grows with what it holds; a genuine limit, out of memory, exits
 * 2, cannot reproduce - never 1);
 * mf_cgen_flush() before teardown frees anything.
 */
void mf_cgen_hook_prologue(struct mf_ctx *c, FILE *f);
void mf_cgen_op_start(struct mf_ctx *c);
unsigned long mf_cgen_point(struct mf_ctx *c);
size_t mf_cgen_act(struct mf_ctx *c, unsigned long n, int point, int irq, bool mig, int to, int got);
void mf_cgen_act_mig(struct mf_ctx *c, size_t act, int to, int got);
void mf_cgen_irq_begin(struct mf_ctx *c, unsigned long run);
void mf_cgen_irq_end(struct mf_ctx *c);
void mf_cgen_irq_keep(struct mf_ctx *c, unsigned int id, char kind);     /* kind: 'p' page, 'o' object */
void mf_cgen_irq_get(struct mf_ctx *c, unsigned int id, char kind);
void mf_cgen_flush(struct mf_ctx *c);

/*
 * The allocator call about to be made, as a C statement (printf-style,
 * no tab or newline): the targets write a call's text after making it,
 * with its result; if the process dies inside the call (a crash, or a
 * violation found by the interrupt handler it ran), the ending writes
 * this text, so the C file makes the call too.  It is written only when
 * nothing was written since it was registered (by the handler's run, in
 * that run's script).  A text over 4.5 KiB is not registered.  The ending
 * then closes the blocks left open (of main(), or of the handler's run),
 * so the file compiles wherever the run stopped.
 */
void mf_cgen_call(struct mf_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Write @s as a C string literal. */
void mf_cgen_str(FILE *f, const char *s);
/* The same literal into @buf (NUL-terminated), for mf_cgen_call(); false when it does not fit. */
bool mf_cgen_quote(char *buf, size_t size, const char *s);

#endif /* MF_CGEN_H */

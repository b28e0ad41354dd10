/* SPDX-License-Identifier: MIT */
/*
 * harness.h - the op-program fuzz harness shared by every target.
 *
 * An input is a setup record followed by op records (program.c says how the
 * bytes are split and read).  Every input decodes to a valid program: each
 * argument is taken into its declared range, indices into the live
 * allocations are taken modulo the live count when the op runs.  A target
 * declares its ops in a table (name, typed arguments, an execute function
 * and optionally a note printer and a C emitter); the harness decodes,
 * prints, parses and encodes programs from that one table, runs them with
 * the checker after every op, and tears the instance down to its initial
 * state after every input.
 *
 * Adding a target = one C file that fills a struct mf_target and ends with
 * MF_TARGET(that_struct), plus one line in targets/TARGETS.
 *
 * Violations: mf_fail() prints the invariant, the op index and the program
 * so far, then abort()s - which libFuzzer and AFL++ record as a crash.
 */
#ifndef MF_HARNESS_H
#define MF_HARNESS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mm/mm.h"

#define MF_MAX_ARGS   20            /* arguments of one op */
#define MF_MAX_OPS    2048          /* ops of one input; the rest is ignored */
#define MF_NR_RES     4             /* values an op records for its note */
#define MF_SEP        0x5c          /* record separator ('\\'), see program.c */

/* ------------------------------------------------------------ op tables */

enum mf_arg_kind {
	MF_INT,        /* integer in [lo, hi], printed in decimal */
	MF_HEX,        /* integer in [lo, hi], printed in hex */
	MF_BOOL,       /* 0 or 1 */
	MF_ENUM,       /* one of names[0 .. hi] */
	MF_FLAGS,      /* an OR of flags[] (each a single bit) */
	MF_IDX,        /* an index into the live allocations, taken modulo at run time */
};

struct mf_flag {
	const char *name;
	unsigned long bit;
};

struct mf_arg {
	const char *name;               /* NULL ends the list */
	enum mf_arg_kind kind;
	long lo, hi;                    /* the range (MF_ENUM: 0 .. n-1) */
	const char *const *names;       /* MF_ENUM */
	const struct mf_flag *flags;    /* MF_FLAGS: single bits, in decoding order */
	unsigned int nflags;
	const struct mf_flag *aliases;  /* MF_FLAGS: multi-bit names for text, NULL-name ended */
	unsigned long (*fix)(unsigned long v);  /* MF_FLAGS: makes a decoded value valid (NULL: any is) */
};

#define MF_A_INT(n, l, h)   { .name = (n), .kind = MF_INT, .lo = (l), .hi = (h) }
#define MF_A_HEX(n, l, h)   { .name = (n), .kind = MF_HEX, .lo = (l), .hi = (h) }
#define MF_A_BOOL(n)        { .name = (n), .kind = MF_BOOL, .lo = 0, .hi = 1 }
#define MF_A_IDX(n)         { .name = (n), .kind = MF_IDX, .lo = 0, .hi = 65535 }
#define MF_A_ENUM(n, arr)   { .name = (n), .kind = MF_ENUM, .lo = 0, \
			      .hi = (long)(sizeof(arr) / sizeof((arr)[0])) - 1, .names = (arr) }
#define MF_A_FLAGS_FIX(n, arr, al, fx) { .name = (n), .kind = MF_FLAGS, .lo = 0, .hi = 0, .flags = (arr), \
					.nflags = (unsigned)(sizeof(arr) / sizeof((arr)[0])), .aliases = (al), .fix = (fx) }
#define MF_A_FLAGS(n, arr, al) MF_A_FLAGS_FIX(n, arr, al, NULL)

struct mf_op {
	uint16_t kind;                  /* index into the target's op table */
	long a[MF_MAX_ARGS];            /* decoded arguments, in declaration order */
	long res[MF_NR_RES];            /* what the op did (for its note); set by exec */
	bool ran;                       /* exec reached */
};

struct mf_ctx;

struct mf_opdesc {
	const char *name;
	const char *help;
	void (*exec)(struct mf_ctx *c, struct mf_op *op);
	/* Optional: print what the op did, from op->res, after the op text. */
	void (*note)(FILE *f, const struct mf_op *op);
	struct mf_arg args[MF_MAX_ARGS];
};

struct mf_alloc;

struct mf_target {
	const char *name;
	const struct mf_opdesc *setup;  /* the arguments of record 0 (exec unused) */
	const struct mf_opdesc *ops;
	unsigned int nops;
	int check_level;                /* per-op mm_check level (MMFUZZ_CHECK_LEVEL overrides) */
	int final_level;                /* at teardown (MMFUZZ_FINAL_LEVEL overrides) */
	/*
	 * begin(): take an instance for this input (mf_instance()) or do
	 * without one (c->mm stays NULL); return false to skip the input.
	 */
	bool (*begin)(struct mf_ctx *c, const struct mf_op *setup);
	/* release(): free one live allocation the shadow still holds (teardown). */
	void (*release)(struct mf_ctx *c, struct mf_alloc *a);
	/* end(): after the shadow is empty: undo what else the input changed. */
	void (*end)(struct mf_ctx *c);
	/* C reproducer: the includes and helpers the emitted ops need (optional). */
	void (*cgen_prologue)(struct mf_ctx *c, FILE *f);
	/*
	 * Optional: the machine a setup record asks for.  With it the engines
	 * create every instance the target can use before fuzzing starts, so
	 * no input pays for (or gets coverage from) mm_create - which keeps
	 * AFL++'s stability at 100% and libFuzzer's coverage honest.
	 */
	void (*config_of)(const struct mf_op *setup, struct mm_config *cfg);
	/*
	 * Optional: once per instance mf_instances_warm() makes (c->mm, vCPU 0
	 * attached; no input, no shadow): what the target sets up on an
	 * instance for good, or for the process, so that no input does it
	 * first - an input whose path depends on what ran before it is
	 * instability to AFL++ (tests/fuzz_stability.c checks).
	 */
	void (*warm)(struct mf_ctx *c);
	/* No C reproducer (sched: a schedule needs the fiber scheduler): --c is refused (exit 2). */
	bool no_cgen;
};

/* ------------------------------------------------------------ run state */

struct mf_shadow;
struct mf_instance;

struct mf_ctx {
	const struct mf_target *t;
	struct mm *mm;                  /* NULL for targets without an instance */
	struct mf_instance *inst;
	struct mf_shadow *sh;
	struct mf_op setup;
	struct mf_op *prog;
	unsigned int nops;
	unsigned int cur;               /* index of the op running */
	int check_level, final_level;
	bool in_setup;                  /* checking the state setup left, before op [0] */
	bool final_check;               /* the deeper check on the state the last op left */
	bool tearing_down;
	const char *input_name;         /* file being replayed, if known */
	FILE *trace;                    /* print each op as it runs (MMFUZZ_TRACE) */
	FILE *cgen;                     /* writing a C reproducer (trace --c) */
	unsigned int cgen_tmp;          /* counter for emitted temporaries */
	unsigned long reports_before;   /* mm_nr_reports() before the current op, or when it last
					 * accounted for the reports it expected (mf_reports_accounted) */
	void *tstate;                   /* the target's own state */
	unsigned int ops_ran;           /* ops a target that runs them itself reported (mf_op_ran) */
};

/* ------------------------------------------------------------ API */

/*
 * An op that expects allocator reports (a bad free, a leak at destroy)
 * checks them itself and then calls this: the reports so far are
 * accounted for.  Any other report an op leaves behind is a finding - a
 * correct allocator reports only bad input - which the harness fails with
 * after the op ("C1: ... an unexpected report").  Also emitted into the C
 * reproducer (reports_ok).
 */
void mf_reports_accounted(struct mf_ctx *c);

/*
 * For a target whose begin() runs the ops itself (sched): call after each
 * op's exec, with c->cur naming it - what the harness's loop does there:
 * MMFUZZ_CRASH_AT_OP, and the op count of MMFUZZ_STATS (such an input's
 * CPU time counts as ops, but for its mm_check calls, which count as checks).
 */
void mf_op_ran(struct mf_ctx *c);

/* The harness's once-per-process setup (knobs, buffers); mf_instances_warm() runs it. */
void mf_harness_init(void);
/* Run one input; returns 0 (libFuzzer's convention) or aborts on a violation. */
int mf_run_input(const struct mf_target *t, const uint8_t *data, size_t size);

/* Handle the harness's own options (--print, --encode, --dict, --ops, --c); see cli.c. */
int mf_main_options(const struct mf_target *t, int *argc, char ***argv);
int mf_replay_main(const struct mf_target *t, int argc, char **argv);

/*
 * A file the options write (--c OUT.c, --encode -o OUT), whole or not at
 * all (cli.c): mf_out_open() refuses an OUT that exists and is no regular
 * file (exit 2, before anything runs) and opens a temporary file beside
 * OUT's real file (past symlinks); mf_out_commit() closes it and renames it
 * over OUT (false, said on stderr and the temporary file removed, when it
 * cannot); mf_out_drop() removes it (async-signal-safe; at exit for a file
 * never committed).
 */
struct mf_out {
	const char *opt;        /* the option that names it, for messages */
	char path[4096];        /* OUT as given */
	char real[4096];        /* OUT past its symlinks: what the rename replaces */
	char tmp[4096];         /* the temporary file beside it; "" once renamed or removed */
	FILE *f;                /* open on tmp until committed */
};
FILE *mf_out_open(struct mf_out *o, const char *opt, const char *path);
bool mf_out_commit(struct mf_out *o);
void mf_out_drop(struct mf_out *o);

/* Stop at the first violation: report and abort(). */
void mf_fail(struct mf_ctx *c, const char *inv, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));
/* mm_check at @level; a violation goes to mf_fail. */
void mf_check(struct mf_ctx *c, int level);

/* Instances: a cached instance per config, reset between inputs. */
struct mm *mf_instance(struct mf_ctx *c, const struct mm_config *cfg);
/* Create the instance of every setup the target can decode (needs config_of; engines call it once). */
void mf_instances_warm(const struct mf_target *t);
const struct mm_config *mf_config(const struct mf_ctx *c);          /* as now (runtime tunables) */
const struct mm_config *mf_instance_config(const struct mf_ctx *c); /* as created */

/* Program text (program.c). */
void mf_print_op(FILE *f, const struct mf_target *t, const struct mf_op *op, bool with_note);
void mf_print_program(FILE *f, const struct mf_target *t, const struct mf_op *setup,
		      const struct mf_op *prog, unsigned int n, int mark, bool with_notes);
/* Size the decoder's buffer for inputs of up to @size bytes now, not on the first such input. */
void mf_decode_reserve(size_t size);
/* Decode bytes into a program; returns the number of ops. */
unsigned int mf_decode(const struct mf_target *t, const uint8_t *data, size_t size,
		       struct mf_op *setup, struct mf_op *prog, unsigned int max);
/* Parse op text into a program; -1 with a message on a syntax error. */
int mf_parse_text(const struct mf_target *t, const char *text, struct mf_op *setup,
		  struct mf_op *prog, unsigned int max, char *err, size_t errlen);
/* Encode a program into bytes; returns the length (buf may be NULL to measure). */
size_t mf_encode(const struct mf_target *t, const struct mf_op *setup, const struct mf_op *prog,
		 unsigned int n, uint8_t *buf, size_t cap);
void mf_write_dict(FILE *f, const struct mf_target *t);

/* Helpers for targets. */
unsigned long mf_env_ulong(const char *name, unsigned long def);
#define MF_C(c, ...) do { if ((c)->cgen) fprintf((c)->cgen, __VA_ARGS__); } while (0)

/* The entry points every engine calls, defined once per target. */
#define MF_TARGET(tgt)                                                              \
	const struct mf_target *mf_the_target = &(tgt);                              \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);                \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)                 \
	{                                                                            \
		return mf_run_input(&(tgt), data, size);                             \
	}                                                                            \
	int LLVMFuzzerInitialize(int *argc, char ***argv);                           \
	int LLVMFuzzerInitialize(int *argc, char ***argv)                            \
	{                                                                            \
		mf_main_options(&(tgt), argc, argv);                                 \
		mf_instances_warm(&(tgt));                                           \
		return 0;                                                            \
	}

extern const struct mf_target *mf_the_target;

#endif /* MF_HARNESS_H */

/* SPDX-License-Identifier: MIT */
/*
 * cgen.c - the standalone C reproducer writer: prologue with the checking
 * helpers, the config, and the epilogue.  See cgen.h.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgen.h"
#include "mm/cpu.h"
#include "shadow.h"

static FILE *cgen_out;
static struct mf_out cgen_file;         /* OUT.c: a temporary file until mf_cgen_finish() renames it (cli.c) */

/* The scripted hooks (see cgen.h): what the C file's hook and handler do. */
struct hook_act {
	unsigned int op;        /* the op running */
	unsigned long n;        /* the point's number since it started */
	int point;              /* enum mm_pp */
	int irq;                /* 1 raise an interrupt, 2 mark one pending, 3 through the signal entry */
	bool mig;               /* then mm_migrate_current(to) ... */
	int to, got;            /* ... which returned got */
};
struct irq_run {
	unsigned long run;      /* the handler's run number */
	char *text;             /* the calls it made */
};
static struct {
	bool on;                /* the target's prologue asked for them */
	struct hook_act *acts;
	size_t nacts, cap_acts;
	struct irq_run *runs;
	size_t nruns, cap_runs;
	unsigned long n;        /* points since the op started */
	FILE *saved;            /* main()'s stream while a handler run is captured */
	char *buf;
	size_t len;
	unsigned long run;
	unsigned long runs_total;    /* handler runs (mf_cgen_irq_begin) */
	unsigned int pending[256];   /* what the handler took, not yet declared in main() */
	char pending_kind[256];      /* 'p' a struct page, 'o' an object */
	unsigned int npending;
} hk;

/*
 * mf_cgen_call(): the call in flight, [0] in main(), [1] in the handler's
 * run being captured.  Room for an options text (slub_opts.c: up to 1 KiB,
 * each byte up to four once quoted); a text that does not fit is not
 * registered - a missing call, never half a statement.
 */
static struct inflight {
	FILE *f;                /* the stream it was registered on ... */
	long pos;               /* ... at this position */
	char text[4608];
} inflight[2];

void mf_cgen_call(struct mf_ctx *c, const char *fmt, ...)
{
	va_list ap;
	if (!c->cgen)
		return;
	struct inflight *x = &inflight[hk.saved != NULL];
	x->f = c->cgen;
	x->pos = ftell(c->cgen);
	va_start(ap, fmt);
	int n = vsnprintf(x->text, sizeof(x->text), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(x->text))
		x->text[0] = 0;
}

/* An ending wrote a call in flight (in main() or in the handler's run). */
static bool inflight_made;

/* At an ending: the registered call, when the stream has nothing after it (the process died inside it). */
static void inflight_write(FILE *f, struct inflight *x)
{
	if (f && x->text[0] && x->f == f && ftell(f) == x->pos) {
		fprintf(f, "\t%s   /* the call in flight when the fuzz run stopped */\n", x->text);
		inflight_made = true;
	}
	x->text[0] = 0;
	x->f = NULL;
}

/*
 * The blocks a C text leaves open: its '{' less its '}', outside string and
 * character literals and comments.  Fed in pieces (main() is read back from
 * the file in chunks).
 */
struct braces {
	long depth;
	char state;             /* 0 code, '"' or '\'' in a literal, '*' in a comment, '/' in a line comment */
	bool esc;               /* a backslash just before, in a literal */
	char prev;
};

static void braces_feed(struct braces *b, const char *t, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		char ch = t[i];
		switch (b->state) {
		case '"':
		case '\'':
			if (b->esc)
				b->esc = false;
			else if (ch == '\\')
				b->esc = true;
			else if (ch == b->state)
				b->state = 0;
			break;
		case '*':
			if (b->prev == '*' && ch == '/') {
				b->state = 0;
				ch = 0;         /* "*" "/" "*" does not open another */
			}
			break;
		case '/':
			if (ch == '\n')
				b->state = 0;
			break;
		default:
			if (b->prev == '/' && (ch == '*' || ch == '/')) {
				b->state = ch;
				ch = 0;         /* "/" "*" "/" does not close it */
			} else if (ch == '"' || ch == '\'') {
				b->state = ch;
			} else if (ch == '{') {
				b->depth++;
			} else if (ch == '}') {
				b->depth--;
			}
		}
		b->prev = ch;
	}
}

static void braces_close(FILE *f, const struct braces *b)
{
	for (long d = b->depth; d > 0; d--)
		fputs("\t}\n", f);
}

/* A handler run cut short inside a block: close what it opened (its script must compile). */
static void close_braces(FILE *f, const char *text, size_t len)
{
	struct braces b = { 0 };
	braces_feed(&b, text, len);
	braces_close(f, &b);
}

/*
 * A run cut short inside a block of main() - a violation or a crash inside
 * an op whose C text opens one - gets it closed too, or the ending's
 * "return 0; }" would leave main() open and the file would not compile.
 * main()'s text is read back from the file (the temporary one, from
 * main_pos, the offset right after its opening brace) with open/read,
 * which a signal handler may call; a file that cannot be read back is left
 * as it is.
 */
static long main_pos = -1;

static void close_main_blocks(FILE *f)
{
	struct braces b = { 0 };
	char buf[4096];

	if (main_pos < 0 || fflush(f))
		return;
	long end = ftell(f);
	int fd = open(cgen_file.tmp, O_RDONLY);
	if (end < main_pos || fd < 0)
		goto out;
	if (lseek(fd, main_pos, SEEK_SET) != main_pos)
		goto out;
	for (long left = end - main_pos; left > 0;) {
		ssize_t n = read(fd, buf, (size_t)left < sizeof(buf) ? (size_t)left : sizeof(buf));
		if (n <= 0)
			goto out;
		braces_feed(&b, buf, (size_t)n);
		left -= n;
	}
	braces_close(f, &b);
out:
	if (fd >= 0)
		close(fd);
}

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 64;
	p = realloc(p, *cap * size);
	if (!p) {
		perror("mmfuzz: cgen");
		exit(2);
	}
	return p;
}

/*
 * OUT.c is refused here, at the option, when it exists and is no regular
 * file (exit 2); else the C file is written to a temporary file beside it,
 * which replaces it only once complete: at the end of the run, or at the
 * ending a violation or a signal writes (mf_cgen_finish).  A run that ends
 * before (an unreadable FILE) leaves OUT.c as it was - fopen(OUT.c, "w")
 * here emptied it.
 */
void mf_cgen_open(const char *path)
{
	if (cgen_out) {                 /* the first one's temporary file is removed at exit */
		fprintf(stderr, "--c given twice: one output file\n");
		exit(2);
	}
	cgen_out = mf_out_open(&cgen_file, "--c", path);
}

FILE *mf_cgen_file(void)
{
	return cgen_out;
}

static const char prologue[] =
	"#include <stdarg.h>\n"
	"#include <stdint.h>\n"
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"#include <string.h>\n"
	"\n"
	"#include \"mm/cpu.h\"\n"
	"#include \"mm/mm.h\"\n"
	"#include \"mm/slab.h\"\n"
	"\n"
	"#define UNUSED __attribute__((unused))\n"
	"/* A run cut short by a violation or a crash leaves the last op's variables unused. */\n"
	"#pragma GCC diagnostic ignored \"-Wunused-variable\"\n"
	"static struct mm *mm;\n"
	"\n"
	"UNUSED static void fail(int op, const char *fmt, ...)\n"
	"{\n"
	"\tva_list ap;\n"
	"\tfprintf(stderr, \"op %d: \", op);\n"
	"\tva_start(ap, fmt);\n"
	"\tvfprintf(stderr, fmt, ap);\n"
	"\tva_end(ap);\n"
	"\tfputc('\\n', stderr);\n"
	"\texit(1);\n"
	"}\n"
	"\n"
	"/* mm_nr_reports() the ops so far expected (a bad free's report): any other is a finding. */\n"
	"static unsigned long reports_ok;\n"
	"static struct mm *reports_mm;\n"
	"\n"
	"UNUSED static void check_at(int op, int level)\n"
	"{\n"
	"\tstruct mm_violation v;\n"
	"\tif (mm && (mm != reports_mm || op < 0)) {   /* a new instance, or its setup: nothing expected yet */\n"
	"\t\treports_mm = mm;\n"
	"\t\treports_ok = mm_nr_reports(mm);\n"
	"\t}\n"
	"\tif (mm && mm_nr_reports(mm) != reports_ok)\n"
	"\t\tfail(op, \"C1 violated: an unexpected allocator report: %s\", mm_last_report(mm)->msg);\n"
	"\tif (mm && level > 0 && !mm_check(mm, level, &v))   /* no instance between ops: nothing to check */\n"
	"\t\tfail(op, \"%s\", v.msg);\n"
	"}\n"
	"\n"
	"UNUSED static void check(int op) { check_at(op, CHECK_LEVEL); }\n"
	"\n"
	"UNUSED static void expect(int op, int cond, const char *what)\n"
	"{\n"
	"\tif (!cond)\n"
	"\t\tfail(op, \"C1 violated: %s\", what);\n"
	"}\n"
	"\n"
	"UNUSED static void diverged(int op, int cond, const char *what)\n"
	"{\n"
	"\tif (cond) {\n"
	"\t\tfprintf(stderr, \"op %d: this run diverged from the fuzz run: %s\\n\", op, what);\n"
	"\t\texit(2);\n"
	"\t}\n"
	"}\n"
	"\n"
	"UNUSED static void expect_zero(int op, const void *p, size_t len)\n"
	"{\n"
	"\tfor (size_t i = 0; i < len; i++)\n"
	"\t\tif (((const unsigned char *)p)[i])\n"
	"\t\t\tfail(op, \"C1 violated: zeroed memory %p is not zero at +%#zx\", p, i);\n"
	"}\n"
	"\n"
	"/*\n"
	" * What the program holds: overlap and content checks, with the harness's\n"
	" * patterns (shadow.c: every word up to FULL_FILL_MAX bytes, else the middle\n"
	" * word and three per 4 KiB; the bytes after the last word), so the memory\n"
	" * holds what it held in the fuzz run - a buggy allocator may read it.\n"
	" */\n"
	"static struct {\n"
	"\tunsigned id, gen;\n"
	"\tunsigned char *p;\n"
	"\tsize_t len;\n"
	"\tunsigned long pfn, nr_pages;   /* pages held (a page allocation, a large kmalloc): B4's client walker */\n"
	"} live[4096];\n"
	"static int nlive;\n"
	"\n"
	"static uint64_t pattern_word(unsigned id, unsigned gen, size_t off)\n"
	"{\n"
	"\treturn " MF_STR(MF_PATTERN_EXPR(id, gen, off)) ";\n"
	"}\n"
	"\n"
	"static void pattern_word_at(int op, int k, size_t off, size_t n, int write)\n"
	"{\n"
	"\tuint64_t v = pattern_word(live[k].id, live[k].gen, off);\n"
	"\tif (write)\n"
	"\t\tmemcpy(live[k].p + off, &v, n);\n"
	"\telse if (memcmp(live[k].p + off, &v, n))\n"
	"\t\tfail(op, \"C1 violated: contents of a%u changed at +%#zx\", live[k].id, off);\n"
	"}\n"
	"\n"
	"/* Write (or check) live[k]'s pattern. */\n"
	"static void pattern(int op, int k, int write)\n"
	"{\n"
	"\tsize_t len = live[k].len, nw = len / 8;\n"
	"\tif (len <= FULL_FILL_MAX) {\n"
	"\t\tfor (size_t w = 0; w < nw; w++)\n"
	"\t\t\tpattern_word_at(op, k, w * 8, 8, write);\n"
	"\t} else {\n"
	"\t\tif (nw)\n"
	"\t\t\tpattern_word_at(op, k, nw / 2 * 8, 8, write);\n"
	"\t\tfor (size_t chunk = 0; chunk < len; chunk += 4096) {\n"
	"\t\t\tsize_t n = (len - chunk < 4096 ? len - chunk : 4096) / 8;\n"
	"\t\t\tif (!n)\n"
	"\t\t\t\tbreak;\n"
	"\t\t\tsize_t offs[3] = { 0, (size_t)(live[k].id * 2654435761u + chunk / 4096) % n, n - 1 };\n"
	"\t\t\tfor (int j = 0; j < 3; j++)\n"
	"\t\t\t\tif (j == 0 || offs[j] != offs[j - 1])\n"
	"\t\t\t\t\tpattern_word_at(op, k, chunk + offs[j] * 8, 8, write);\n"
	"\t\t}\n"
	"\t}\n"
	"\tpattern_word_at(op, k, len & ~(size_t)7, len & 7, write);\n"
	"}\n"
	"\n"
	"static int live_index(int op, unsigned id)\n"
	"{\n"
	"\tfor (int i = 0; i < nlive; i++)\n"
	"\t\tif (live[i].id == id)\n"
	"\t\t\treturn i;\n"
	"\tfail(op, \"a%u is not live (reproducer bug)\", id);\n"
	"\treturn -1;\n"
	"}\n"
	"\n"
	"UNUSED static void track(int op, unsigned id, void *addr, size_t len)\n"
	"{\n"
	"\tunsigned char *p = addr;\n"
	"\tfor (int i = 0; i < nlive; i++)\n"
	"\t\tif (p < live[i].p + live[i].len && live[i].p < p + len)\n"
	"\t\t\tfail(op, \"C1 violated: new allocation %p (+%#zx) overlaps live allocation a%u at %p (+%#zx)\",\n"
	"\t\t\t     addr, len, live[i].id, (void *)live[i].p, live[i].len);\n"
	"\tif (nlive == 4096)\n"
	"\t\tfail(op, \"too many live allocations\");\n"
	"\tlive[nlive].id = id;\n"
	"\tlive[nlive].gen = 0;\n"
	"\tlive[nlive].p = p;\n"
	"\tlive[nlive].len = len;\n"
	"\tlive[nlive].nr_pages = 0;\n"
	"\tpattern(op, nlive++, 1);\n"
	"}\n"
	"\n"
	"UNUSED static void untrack(int op, unsigned id)\n"
	"{\n"
	"\tint k = live_index(op, id);\n"
	"\tpattern(op, k, 0);\n"
	"\tlive[k] = live[--nlive];\n"
	"}\n"
	"\n"
	"/* The allocation a<id> holds @nr_pages pages from @addr's on (after track()). */\n"
	"UNUSED static void hold_pages(int op, unsigned id, const void *addr, unsigned long nr_pages)\n"
	"{\n"
	"\tint k = live_index(op, id);\n"
	"\tstruct page *pg = virt_to_page(mm, addr);\n"
	"\texpect(op, pg != NULL, \"a page allocation is memory of this instance\");\n"
	"\tlive[k].pfn = page_to_pfn(mm, pg);\n"
	"\tlive[k].nr_pages = nr_pages;\n"
	"}\n"
	"\n"
	"/* B4: the pages the program holds, as the harness's walker reports them (mf_shadow_walk()). */\n"
	"UNUSED static void walk(void *ctx, mm_mark_fn mark, void *w)\n"
	"{\n"
	"\t(void)ctx;\n"
	"\tfor (int i = 0; i < nlive; i++)\n"
	"\t\tif (live[i].nr_pages)\n"
	"\t\t\tmark(w, live[i].pfn, live[i].nr_pages);\n"
	"}\n"
	"\n"
	"/*\n"
	" * The state right after mm_reset(), and the teardown's comparison with it\n"
	" * (instance.c): with everything freed and drained, every zone's\n"
	" * NR_FREE_PAGES, buddyinfo line and pcp counts are the initial ones.\n"
	" */\n"
	"static struct { long free; unsigned long nr_free[MM_NR_ORDERS_LIMIT]; int pcp[MM_MAX_CPUS]; } start[MAX_NR_ZONES];\n"
	"\n"
	"static void zone_state(int z, long *free, unsigned long *nr_free, int *pcp)\n"
	"{\n"
	"\tstruct zone *zone = mm_zone(mm, (enum zone_type)z);\n"
	"\tstruct mm_pcp_info info;\n"
	"\t*free = zone ? zone_free_pages(zone) : -1;\n"
	"\tfor (unsigned o = 0; o < MM_NR_ORDERS_LIMIT; o++)\n"
	"\t\tnr_free[o] = zone ? zone_nr_free(zone, o) : 0;\n"
	"\tfor (int cpu = 0; cpu < MM_MAX_CPUS; cpu++)\n"
	"\t\tpcp[cpu] = zone && mm_pcp_info(mm, (enum zone_type)z, cpu, &info) == 0 ? info.count : 0;\n"
	"}\n"
	"\n"
	"UNUSED static void capture_start(void)\n"
	"{\n"
	"\tfor (int z = 0; z < MAX_NR_ZONES; z++)\n"
	"\t\tzone_state(z, &start[z].free, start[z].nr_free, start[z].pcp);\n"
	"}\n"
	"\n"
	"/* @skip_lists: a bit per zone whose buddyinfo and pcp counts are not compared (it holds a highatomic reserve). */\n"
	"UNUSED static void back_to_start(int op, unsigned skip_lists)\n"
	"{\n"
	"\tlong free;\n"
	"\tunsigned long nr_free[MM_NR_ORDERS_LIMIT];\n"
	"\tint pcp[MM_MAX_CPUS];\n"
	"\tfor (int z = 0; z < MAX_NR_ZONES; z++) {\n"
	"\t\tzone_state(z, &free, nr_free, pcp);\n"
	"\t\tif (free != start[z].free)\n"
	"\t\t\tfail(op, \"B4 violated at teardown: zone %d: NR_FREE_PAGES %ld, initially %ld\", z, free, start[z].free);\n"
	"\t\tfor (unsigned o = 0; !(skip_lists >> z & 1) && o < MM_NR_ORDERS_LIMIT; o++)\n"
	"\t\t\tif (nr_free[o] != start[z].nr_free[o])\n"
	"\t\t\t\tfail(op, \"B4 violated at teardown: zone %d buddyinfo differs at order %u: %lu free blocks, initially %lu\",\n"
	"\t\t\t\t     z, o, nr_free[o], start[z].nr_free[o]);\n"
	"\t\tfor (int cpu = 0; !(skip_lists >> z & 1) && cpu < MM_MAX_CPUS; cpu++)\n"
	"\t\t\tif (pcp[cpu] != start[z].pcp[cpu])\n"
	"\t\t\t\tfail(op, \"B4 violated at teardown: zone %d cpu %d: %d pages on the pcp lists, initially %d\",\n"
	"\t\t\t\t     z, cpu, pcp[cpu], start[z].pcp[cpu]);\n"
	"\t}\n"
	"}\n"
	"\n"
	"UNUSED static void verify(int op, unsigned id) { pattern(op, live_index(op, id), 0); }\n"
	"\n"
	"/* The harness's touch: check, then the next generation's pattern. */\n"
	"UNUSED static void touch(int op, unsigned id)\n"
	"{\n"
	"\tint k = live_index(op, id);\n"
	"\tpattern(op, k, 0);\n"
	"\tlive[k].gen++;\n"
	"\tpattern(op, k, 1);\n"
	"}\n"
	"\n";

/*
 * A run that crashes (SIGSEGV in the allocator, a BUG() abort, ...) still
 * leaves a complete C file: the ops before the one that crashed, that op's
 * calls up to the one it died in, that call too (mf_cgen_call(): the targets
 * register each allocator call's text before making it, and write it with
 * its result checks after), then the ending mf_cgen_finish() writes, naming
 * the signal.  A call that registered no text is missing.  stdio from a
 * signal handler is not async-signal-safe; the process is dying anyway,
 * and a truncated reproducer is what the user would get otherwise.  The
 * handler runs once, puts back the handler that was there before (the
 * default, or a sanitizer's) and raises the signal again, so what happens
 * next - the sanitizer's report, the exit status, a core dump - is as
 * without it.
 *
 * A run stopped by SIGINT, SIGTERM or SIGHUP - ./mmfuzz trace's bound on a
 * hang (tools/bounded.py: SIGTERM), Ctrl-C - gets the same ending, as
 * "stopped": the C file makes the calls up to the one the run was in.
 * Without it the process died with the C file cut off mid-op, and since
 * the file is written to a temporary file renamed over OUT.c only once
 * complete (cli.c's mf_out_open), it would leave nothing.  One that comes
 * in the ending itself (cgen_ctx NULL) removes the temporary file: OUT.c
 * stays as it was.  The handlers are installed as the C file begins, as
 * they were: between the option and then (FILE read and decoded) a signal
 * takes its default course and the temporary file stays behind, as after
 * SIGKILL.
 */
#define NR_CRASH_SIGNALS 8
static struct mf_ctx *cgen_ctx;
static const int crash_signals[NR_CRASH_SIGNALS] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
						     SIGINT, SIGTERM, SIGHUP };
static struct sigaction crash_old[NR_CRASH_SIGNALS];

static void crash_finish(int sig)
{
	struct mf_ctx *c = cgen_ctx;
	bool stop = sig == SIGINT || sig == SIGTERM || sig == SIGHUP;
	char msg[96];

	cgen_ctx = NULL;
	if (c && c->cgen) {
		snprintf(msg, sizeof(msg), "the fuzz run %s signal %d (%s) in this op", stop ? "was stopped by" : "died of",
			 sig, strsignal(sig));
		mf_cgen_finish(c, stop ? "stopped" : "crash", msg);
	} else {
		mf_out_drop(&cgen_file);
	}
	for (int i = 0; i < NR_CRASH_SIGNALS; i++)
		if (crash_signals[i] == sig)
			sigaction(sig, &crash_old[i], NULL);
	raise(sig);
}

static void crash_handlers_install(void)
{
	static bool done;
	struct sigaction sa;

	if (done)
		return;
	done = true;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = crash_finish;
	sa.sa_flags = SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < NR_CRASH_SIGNALS; i++)
		sigaction(crash_signals[i], &sa, &crash_old[i]);
}

/*
 * The command that builds the C file, in its first comment.  It named a
 * build/<dir>/ to fill in; now the library of the build that wrote it,
 * by its absolute path, with that build's compiler and the flags its
 * objects need at link time (targets/CMakeLists.txt: MF_REPRO_*).  The
 * library is found from the binary, at run time: CMake puts fuzz_T in
 * BUILD/targets/ and libmmalloc.a in BUILD/allocator/ (MF_REPRO_LIB, the
 * way from one to the other).  A path compiled in would differ per build
 * directory, and a bug-zoo variant build copies this object from the
 * correct build's (tools/bugzoo/cc-reuse): its C files would name the
 * correct library, on which the bug does not reproduce.  A binary built
 * without CMake (oss-fuzz/build.sh), or without its library beside it,
 * says which library to use instead.
 */
static void build_hint(FILE *f)
{
#ifdef MF_REPRO_LIB
	char exe[4096], lib[4096 + sizeof(MF_REPRO_LIB)], *real = NULL;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = 0;
	char *slash = strrchr(exe, '/');
	if (slash) {
		*slash = 0;
		snprintf(lib, sizeof(lib), "%s/%s", exe, MF_REPRO_LIB);
		real = realpath(lib, NULL);
	}
	if (real) {
		fprintf(f, " * It uses only the allocator API; build it (as repro.c) against the library\n"
			   " * of the build that wrote it:\n"
			   " *   %s -std=gnu11%s -I%s repro.c %s -lpthread -latomic\n",
			MF_REPRO_CC, MF_REPRO_FLAGS, MF_REPRO_INCLUDE, real);
		free(real);
		return;
	}
#endif
	fprintf(f, " * It uses only the allocator API; build it (as repro.c) against the libmmalloc.a\n"
		   " * of a build without sanitizers or a fuzzing engine - the debug preset's, from\n"
		   " * the source tree:\n"
		   " *   cc -std=gnu11 -Iallocator/include repro.c build/debug/allocator/libmmalloc.a -lpthread -latomic\n");
}

void mf_cgen_begin(struct mf_ctx *c)
{
	FILE *f = c->cgen;

	cgen_ctx = c;
	crash_handlers_install();
	fprintf(f, "/*\n * Standalone reproducer written by `mmfuzz trace %s %s --c %s`.\n",
		c->t->name, c->input_name ? c->input_name : "-", cgen_file.path);
	build_hint(f);
	fprintf(f, " * Exit status: 0 no violation, 1 violation reproduced, 2 diverged from the fuzz run.\n"
		   " *\n * The op program:\n");
	fprintf(f, " *   ");
	mf_print_program(f, c->t, &c->setup, NULL, 0, -1, false);
	for (unsigned int i = 0; i < c->nops; i++) {
		fprintf(f, " *   ");
		mf_print_op(f, c->t, &c->prog[i], false);
		fputc('\n', f);
	}
	/* The shadow's rule (mf_shadow_reset(), which runs after this). */
	fprintf(f, " */\n#define CHECK_LEVEL %d\n#define FINAL_LEVEL %d\n", c->check_level, c->final_level);
	if (mf_env_ulong("MMFUZZ_FILL_FULL", 0))
		fprintf(f, "#define FULL_FILL_MAX ((size_t)-1)\n");
	else
		fprintf(f, "#define FULL_FILL_MAX %d\n", MF_FULL_FILL_MAX);
	fputs(prologue, f);
	if (c->t->cgen_prologue)
		c->t->cgen_prologue(c, f);
	fprintf(f, "int main(void)\n{\n");
	main_pos = ftell(f);
	fprintf(f, "\tstruct mm_config cfg;\n\tchar err[256];\n\n");
	/*
	 * The fuzz run's environment, as far as the allocator reads it:
	 * mm_create() applies MMFUZZ_SLUB, so the C file sets (or clears) it
	 * itself rather than depend on the environment it runs in.
	 */
	const char *slub = getenv("MMFUZZ_SLUB");
	if (slub) {
		fprintf(f, "\tsetenv(\"MMFUZZ_SLUB\", ");
		mf_cgen_str(f, slub);
		fprintf(f, ", 1);   /* the fuzz run's MMFUZZ_SLUB: options applied at mm_create() */\n");
	} else {
		fprintf(f, "\tunsetenv(\"MMFUZZ_SLUB\");   /* the fuzz run had none: options applied at mm_create() */\n");
	}
}

void mf_cgen_config(struct mf_ctx *c, const struct mm_config *g)
{
	FILE *f = c->cgen;
	if (!f)
		return;
	fprintf(f, "\tmemset(&cfg, 0, sizeof(cfg));\n");
	fprintf(f, "\tcfg.nr_cpus = %u;\n\tcfg.max_order = %u;\n\tcfg.pageblock_order = %u;\n",
		g->nr_cpus, g->max_order, g->pageblock_order);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		fprintf(f, "\tcfg.zones[%d] = (struct mm_span){ %#lx, %#lx };\n", z, g->zones[z].start_pfn,
			g->zones[z].end_pfn);
	fprintf(f, "\tcfg.nr_holes = %u;\n", g->nr_holes);
	for (unsigned int i = 0; i < g->nr_holes && i < MM_MAX_HOLES; i++)
		fprintf(f, "\tcfg.holes[%u] = (struct mm_span){ %#lx, %#lx };\n", i, g->holes[i].start_pfn,
			g->holes[i].end_pfn);
	fprintf(f, "\tcfg.min_free_kbytes = %lu;\n\tcfg.watermark_scale_factor = %u;\n", g->min_free_kbytes,
		g->watermark_scale_factor);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		fprintf(f, "\tcfg.lowmem_reserve_ratio[%d] = %u;\n", z, g->lowmem_reserve_ratio[z]);
	fprintf(f, "\tcfg.wmark_algo = %d;\n\tcfg.pcp_batch = %u;\n\tcfg.pcp_high = %u;\n"
		   "\tcfg.percpu_pagelist_high_fraction = %u;\n\tcfg.pcp_prefetch_buddy = %d;\n"
		   "\tcfg.debug = %u;\n\tcfg.bad_policy = %d;\n\tcfg.quiet = %d;\n",
		(int)g->wmark_algo, g->pcp_batch, g->pcp_high, g->percpu_pagelist_high_fraction,
		(int)g->pcp_prefetch_buddy, g->debug, (int)g->bad_policy, (int)g->quiet);
	fprintf(f, "\tmm = mm_create(&cfg, err, sizeof(err));\n"
		   "\tif (!mm) {\n\t\tfprintf(stderr, \"mm_create: %%s\\n\", err);\n\t\treturn 2;\n\t}\n"
		   "\tcheck_at(-1, 3);\n");
	/*
	 * What mf_instance() does: every input starts from mm_reset()'s state,
	 * on vCPU 0, checked at the per-op level before the first op.
	 */
	fprintf(f, "\tmm_reset(mm);\n\tcapture_start();\n"
		   "\tmm_set_client_walker(mm, walk, NULL);   /* after mm_reset(), which forgets it */\n");
	if (!mf_env_ulong("MMFUZZ_CHECK_INCREMENTAL", 1))   /* instance.c's attach() */
		fprintf(f, "\tmm_check_set_incremental(mm, false);   /* MMFUZZ_CHECK_INCREMENTAL=0 */\n");
	fprintf(f, "\tmm_cpu_attach(mm, 0);\n\tcheck(-1);\n");
}

void mf_cgen_hook_prologue(struct mf_ctx *c, FILE *f)
{
	(void)c;
	hk.on = true;
	hk.nacts = hk.nruns = 0;
	hk.n = 0;
	hk.npending = 0;
	hk.runs_total = 0;
	fputs("/* The scripted hooks: the interrupts and migrations the fuzz run injected, where it injected them. */\n"
	      "static int hook_op = -1;             /* the op running */\n"
	      "static unsigned long hook_n;         /* preemption points since it started */\n"
	      "static unsigned long irq_runs;       /* runs of the interrupt handler */\n"
	      "static void hook_script(int op, unsigned long n, int point);   /* after main() */\n"
	      "static void irq_script(unsigned long run);                      /* after main() */\n"
	      "static unsigned long acts_done;      /* hook_script() entries that acted */\n"
	      "UNUSED static void hook(struct mm *m, enum mm_pp point, void *ctx)\n"
	      "{\n\t(void)m;\n\t(void)ctx;\n\thook_script(hook_op, ++hook_n, (int)point);\n}\n"
	      "UNUSED static void irq(struct mm *m, int cpu, void *ctx)\n"
	      "{\n\t(void)m;\n\t(void)cpu;\n\t(void)ctx;\n\tirq_script(++irq_runs);\n}\n"
	      "UNUSED static void hook_at(int op) { hook_op = op; hook_n = 0; }\n"
	      "UNUSED static void act(int op, int point, int want, int irq, int mig, int to, int got)\n"
	      "{\n\tdiverged(op, point != want, \"the fuzz run's hook acted at another kind of preemption point\");\n"
	      "\tacts_done++;\n"
	      "\tif (irq == 1)\n\t\tmm_raise_irq(mm);\n"
	      "\telse if (irq == 2)\n\t\tmm_set_irq_pending(mm);\n"
	      "\telse if (irq == 3)\n\t\tmm_irq_from_signal();\n"
	      "\tif (mig)\n\t\tdiverged(op, mm_migrate_current(mm, to) != got, \"the injected migration\");\n}\n"
	      "/*\n"
	      " * What the handler took and the program has not freed through it: an\n"
	      " * entry goes when the handler frees it (irq_take); the table grows.\n"
	      " */\n"
	      "static struct irq_page { unsigned id; void *p; } *irq_pages;\n"
	      "static int nirq_pages, cap_irq_pages;\n"
	      "UNUSED static void irq_keep(unsigned id, void *p)\n"
	      "{\n\tif (nirq_pages == cap_irq_pages) {\n"
	      "\t\tcap_irq_pages = cap_irq_pages ? 2 * cap_irq_pages : 256;\n"
	      "\t\tirq_pages = realloc(irq_pages, (size_t)cap_irq_pages * sizeof(*irq_pages));\n"
	      "\t\tdiverged(hook_op, !irq_pages, \"out of memory for what the interrupt handler took: cannot reproduce\");\n"
	      "\t}\n"
	      "\tirq_pages[nirq_pages].id = id;\n\tirq_pages[nirq_pages++].p = p;\n}\n"
	      "static int irq_find(unsigned id)\n"
	      "{\n\tfor (int i = nirq_pages; i-- > 0;)\n\t\tif (irq_pages[i].id == id)\n\t\t\treturn i;\n"
	      "\tdiverged(hook_op, 1, \"the fuzz run's interrupt handler took a page or object that this run's did not\");\n"
	      "\treturn -1;\n}\n"
	      "UNUSED static void *irq_get(unsigned id) { return irq_pages[irq_find(id)].p; }\n"
	      "/* The handler frees it: fetch and forget. */\n"
	      "UNUSED static void *irq_take(unsigned id)\n"
	      "{\n\tint i = irq_find(id);\n\tvoid *p = irq_pages[i].p;\n"
	      "\tirq_pages[i] = irq_pages[--nirq_pages];\n"
	      "\treturn p;\n}\n\n", f);
}

void mf_cgen_op_start(struct mf_ctx *c)
{
	if (!c->cgen || !hk.on)
		return;
	mf_cgen_flush(c);
	hk.n = 0;
	fprintf(c->cgen, "\thook_at(%u);\n", c->cur);
}

unsigned long mf_cgen_point(struct mf_ctx *c)
{
	return c->cgen && hk.on ? ++hk.n : 0;
}

size_t mf_cgen_act(struct mf_ctx *c, unsigned long n, int point, int irq, bool mig, int to, int got)
{
	if (!c->cgen || !hk.on)
		return SIZE_MAX;
	hk.acts = grow(hk.acts, &hk.cap_acts, hk.nacts, sizeof(*hk.acts));
	hk.acts[hk.nacts] = (struct hook_act){ c->cur, n, point, irq, mig, to, got };
	return hk.nacts++;
}

void mf_cgen_act_mig(struct mf_ctx *c, size_t act, int to, int got)
{
	if (!c->cgen || !hk.on || act >= hk.nacts)
		return;
	hk.acts[act].mig = true;
	hk.acts[act].to = to;
	hk.acts[act].got = got;
}

void mf_cgen_irq_begin(struct mf_ctx *c, unsigned long run)
{
	if (!c->cgen || !hk.on || hk.saved)
		return;
	hk.runs_total = run;
	hk.saved = c->cgen;
	hk.buf = NULL;
	hk.len = 0;
	hk.run = run;
	inflight[1].text[0] = 0;
	c->cgen = open_memstream(&hk.buf, &hk.len);
	if (!c->cgen) {
		perror("mmfuzz: cgen");
		exit(2);
	}
}

void mf_cgen_irq_end(struct mf_ctx *c)
{
	if (!hk.saved)
		return;
	fclose(c->cgen);
	c->cgen = hk.saved;
	hk.saved = NULL;
	if (!hk.len) {
		free(hk.buf);
		return;
	}
	hk.runs = grow(hk.runs, &hk.cap_runs, hk.nruns, sizeof(*hk.runs));
	hk.runs[hk.nruns++] = (struct irq_run){ hk.run, hk.buf };
}

static const char *decl(char kind)
{
	return kind == 'p' ? "struct page *" : "void *";
}

void mf_cgen_irq_keep(struct mf_ctx *c, unsigned int id, char kind)
{
	if (!hk.saved)
		return;
	fprintf(c->cgen, "\tirq_keep(%u, %c%u);\n", id, kind, id);
	if (hk.npending < sizeof(hk.pending) / sizeof(hk.pending[0])) {
		hk.pending_kind[hk.npending] = kind;
		hk.pending[hk.npending++] = id;
	}
}

void mf_cgen_irq_get(struct mf_ctx *c, unsigned int id, char kind)
{
	if (!hk.saved)
		return;
	fprintf(c->cgen, "\t%s%c%u = irq_take(%u);\n", decl(kind), kind, id, id);
	/* Freed in the run that took it: main() never declares it. */
	for (unsigned int i = 0; i < hk.npending; i++)
		if (hk.pending[i] == id && hk.pending_kind[i] == kind) {
			hk.pending[i] = hk.pending[--hk.npending];
			hk.pending_kind[i] = hk.pending_kind[hk.npending];
			break;
		}
}

void mf_cgen_flush(struct mf_ctx *c)
{
	if (!c->cgen || !hk.on || hk.saved)
		return;
	for (unsigned int i = 0; i < hk.npending; i++)
		fprintf(c->cgen, "\tUNUSED %s%c%u = irq_get(%u);   /* taken by the interrupt handler */\n",
			decl(hk.pending_kind[i]), hk.pending_kind[i], hk.pending[i], hk.pending[i]);
	hk.npending = 0;
}

/* After main(): the scripts of the hook and the handler. */
static void hook_epilogue(FILE *f)
{
	if (!hk.on)
		return;
	fprintf(f, "\nstatic void hook_script(int op, unsigned long n, int point)\n{\n");
	for (size_t i = 0; i < hk.nacts; i++)
		fprintf(f, "\tif (op == %u && n == %lu)\n\t\tact(%u, point, %d, %d, %d, %d, %d);   /* %s */\n", hk.acts[i].op,
			hk.acts[i].n, hk.acts[i].op, hk.acts[i].point, hk.acts[i].irq, hk.acts[i].mig, hk.acts[i].to,
			hk.acts[i].got, mm_pp_name((enum mm_pp)hk.acts[i].point));
	fprintf(f, "\t(void)op;\n\t(void)n;\n\t(void)point;\n}\n\nstatic void irq_script(unsigned long run)\n{\n"
		   "\tswitch (run) {\n");
	for (size_t i = 0; i < hk.nruns; i++) {
		fprintf(f, "\tcase %lu:\n%s\t\tbreak;\n", hk.runs[i].run, hk.runs[i].text);
		free(hk.runs[i].text);
	}
	fprintf(f, "\tdefault:\n\t\tbreak;\n\t}\n}\n");
	hk.on = false;
	hk.nacts = hk.nruns = 0;
}

void mf_cgen_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 32 || (unsigned char)*s > 126)
			fprintf(f, "\\%03o", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

bool mf_cgen_quote(char *buf, size_t size, const char *s)
{
	size_t n = 0;
	if (size < 3)
		return false;
	buf[n++] = '"';
	for (; *s; s++) {
		int w;
		if (*s == '"' || *s == '\\')
			w = snprintf(buf + n, size - n, "\\%c", *s);
		else if ((unsigned char)*s < 32 || (unsigned char)*s > 126)
			w = snprintf(buf + n, size - n, "\\%03o", (unsigned char)*s);
		else
			w = snprintf(buf + n, size - n, "%c", *s);
		if (w < 0 || (size_t)w >= size - n)
			return false;
		n += (size_t)w;
	}
	if (n + 2 > size)
		return false;
	buf[n++] = '"';
	buf[n] = 0;
	return true;
}

void mf_cgen_after_setup(struct mf_ctx *c)
{
	(void)c;
}

void mf_cgen_teardown(struct mf_ctx *c, const bool *skip_lists)
{
	unsigned int skip = 0;

	if (!c->cgen)
		return;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		skip |= (skip_lists[z] ? 1u : 0u) << z;
	fprintf(c->cgen, "\t/* everything freed: drained, checked, and back to the state after mm_reset() */\n"
		"\tdrain_all_pages(mm, NULL);\n\tcheck_at(%u, FINAL_LEVEL < 2 ? FINAL_LEVEL : 2);\n"
		"\tback_to_start(%u, %#x);\n", c->nops, c->nops, skip);
}

void mf_cgen_finish(struct mf_ctx *c, const char *inv, const char *msg)
{
	cgen_ctx = NULL;                 /* a signal from here on does not write a second ending */
	if (hk.saved) {                  /* a violation inside the handler: its run so far goes to its script */
		inflight_write(c->cgen, &inflight[1]);
		fflush(c->cgen);
		close_braces(c->cgen, hk.buf, hk.len);
		mf_cgen_irq_end(c);
	}
	FILE *f = c->cgen;
	if (!f)
		return;
	if (inv) {
		inflight_write(f, &inflight[0]);
		close_main_blocks(f);
	}
	inflight[0].text[0] = 0;
	main_pos = -1;
	if (inv) {
		fprintf(f, "\t/* The fuzz run stopped here: %s: ", inv);
		for (const char *p = msg; *p; p++)   /* no comment terminator inside the comment */
			fputc(p[0] == '*' && p[1] == '/' ? '+' : *p, f);
		fprintf(f, " */\n");
		/*
		 * A call in flight that returns here (the crash did not
		 * reproduce) took what the C file does not track: the walker's
		 * count of the client's pages would be off, a false B4 in the
		 * checks below.  Without a walker the checker counts them
		 * through the memmap.
		 */
		if (inflight_made)
			fprintf(f, "\tif (mm)\n\t\tmm_set_client_walker(mm, NULL, NULL);   /* the call in flight's pages are "
				   "not tracked */\n");
		if (c->in_setup)        /* the per-op level's check(-1) after mm_cpu_attach() saw it */
			;
		else if (!c->tearing_down)   /* the per-op check, or the final level's on the last op's state */
			fprintf(f, "\tcheck(%u);\n\tcheck_at(%u, FINAL_LEVEL);\n", c->cur, c->cur);
		else
			fprintf(f, "\tcheck_at(%u, FINAL_LEVEL);\n", c->nops);
		if (strcmp(inv, "stopped"))
			fprintf(f, "\tfprintf(stderr, \"the violation the fuzz run saw (%s) did not reproduce here\\n\");\n",
				inv);
		else    /* a signal stopped it: nothing to reproduce but where it was (a hang?) */
			fprintf(f, "\tfprintf(stderr, \"the fuzz run was stopped here, by a signal; this run got past it\\n\");\n");
		fprintf(f, "\treturn 0;\n}\n");
	} else {
		if (hk.on)   /* the whole schedule happened: every injection, every handler run */
			fprintf(f, "\tdiverged(%u, acts_done != %zu, \"the injections the fuzz run made\");\n"
				   "\tdiverged(%u, irq_runs != %lu, \"the interrupt handler's runs\");\n", c->nops, hk.nacts,
				c->nops, hk.runs_total);
		fprintf(f, "\tif (mm)\n\t\tmm_destroy(mm);\n\tputs(\"no violation\");\n\treturn 0;\n}\n");
	}
	inflight_made = false;
	hook_epilogue(f);
	/* Complete: it replaces OUT.c now - before mf_fail()'s abort() or the signal's default action. */
	if (mf_out_commit(&cgen_file))
		fprintf(stderr, "mmfuzz: wrote %s\n", cgen_file.path);
	cgen_out = NULL;
	c->cgen = NULL;
}

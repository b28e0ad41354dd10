/* SPDX-License-Identifier: MIT */
/*
 * common.h - the timing kit every benchmark shares (header only; each
 * bench_*.c is one translation unit, so the statics below are per bench).
 *
 *   bench_rdtsc()          TSC cycles, ordered with lfence (x86-64; other
 *                          machines fall back to nanoseconds)
 *   bench_now_ns()         CLOCK_MONOTONIC in ns, as a double
 *   bench_calibrate()      TSC ticks per ns, measured against the clock
 *                          (median of 5 x 20 ms); call once in main()
 *   bench_print_machine()  one "# machine: ..." line: CPU, TSC rate, build
 *   BENCH_MEASURE(r, loops, { body })
 *                          runs body @loops times, BENCH_RUNS times over,
 *                          and keeps the fastest run (min-of-N: the least
 *                          disturbed by the rest of the machine); r->ns and
 *                          r->cycles are per iteration
 *   bench_die()            a message and exit 1, when a run cannot go on
 *   bench_parse_args()     the command line: --json FILE, --quick,
 *                          --peer-default, --help; bad arguments exit 2
 *   bench_json_*()         --json FILE output: {"bench": NAME, "machine":
 *                          {...}, "results": {KEY: NUMBER, ...}}, kept in
 *                          memory and written whole by bench_json_close()
 *                          (a run that dies leaves FILE as it was); every
 *                          function accepts NULL (no --json) and does nothing
 *
 * "cycles(tsc)" are TSC ticks - constant-rate, not core clock cycles - as
 * in the kernel's time_bench and the seed threads' tables.
 */
#ifndef MM_BENCH_COMMON_H
#define MM_BENCH_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "mm/mm.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define BENCH_HAVE_TSC 1
#endif

#ifndef BENCH_RUNS
#define BENCH_RUNS 7
#endif

struct bench_result {
	double ns;          /* per iteration, fastest run */
	double cycles;      /* TSC ticks per iteration, same run */
	double total_ns;    /* the fastest run, whole */
};

static double bench_tsc_per_ns_ = 0.0;   /* 0: not calibrated (or no TSC) */

static inline double bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline uint64_t bench_rdtsc(void)
{
#ifdef BENCH_HAVE_TSC
	_mm_lfence();                      /* earlier instructions retire first */
	uint64_t t = __rdtsc();
	_mm_lfence();                      /* and later ones do not start before */
	return t;
#else
	return (uint64_t)bench_now_ns();
#endif
}

/* Keep the compiler from deleting a computation whose result is unused. */
static inline void bench_escape(const void *p)
{
	__asm__ volatile("" : : "g"(p) : "memory");
}

static int bench_cmp_double_(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* TSC ticks per ns: the median of five 20 ms windows against CLOCK_MONOTONIC. */
static inline double bench_calibrate(void)
{
#ifdef BENCH_HAVE_TSC
	double r[5];
	for (int i = 0; i < 5; i++) {
		double t0 = bench_now_ns();
		uint64_t c0 = bench_rdtsc();
		while (bench_now_ns() - t0 < 20e6)
			;
		uint64_t c1 = bench_rdtsc();
		double t1 = bench_now_ns();
		r[i] = (double)(c1 - c0) / (t1 - t0);
	}
	qsort(r, 5, sizeof(r[0]), bench_cmp_double_);
	bench_tsc_per_ns_ = r[2];
#else
	bench_tsc_per_ns_ = 1.0;
#endif
	return bench_tsc_per_ns_;
}

static inline double bench_tsc_ghz(void)
{
	if (bench_tsc_per_ns_ == 0.0)
		bench_calibrate();
	return bench_tsc_per_ns_;
}

/* Cycles -> ns with the calibration (for loops timed only with bench_rdtsc). */
static inline double bench_cycles_to_ns(double cycles)
{
	return cycles / bench_tsc_ghz();
}

static inline void bench_cpu_model_(char *buf, size_t len)
{
	snprintf(buf, len, "unknown CPU");
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	char line[256];
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "model name", 10)) {
			char *p = strchr(line, ':');
			if (p) {
				p += 1 + strspn(p + 1, " \t");
				p[strcspn(p, "\n")] = '\0';
				snprintf(buf, len, "%s", p);
			}
			break;
		}
	}
	fclose(f);
}

#ifndef MM_DEBUG
#define MM_DEBUG 0
#endif

/*
 * The page and slab benchmarks' machine: the default config with @nr_cpus
 * vCPUs, no holes, DMA 1-4095, DMA32 to 64 Ki pages and a Normal zone of
 * 256 Ki pages (1 GiB: realistic pcp batches, 10,000 order-2 kmallocs fit).
 * On a refusal: "@name: the reason" and exit(1).
 */
static inline struct mm *bench_make_mm(const char *name, unsigned int nr_cpus, bool quiet)
{
	struct mm_config c;
	char err[256];
	mm_config_default(&c);
	c.nr_cpus = nr_cpus;
	c.nr_holes = 0;
	c.quiet = quiet;
	c.zones[ZONE_DMA] = (struct mm_span){ 1, 4096 };
	c.zones[ZONE_DMA32] = (struct mm_span){ 4096, 65536 };
	c.zones[ZONE_NORMAL] = (struct mm_span){ 65536, 65536 + 262144 };
	c.zones[ZONE_MOVABLE] = (struct mm_span){ 0, 0 };
	struct mm *mm = mm_create(&c, err, sizeof(err));
	if (!mm) {
		fprintf(stderr, "%s: %s\n", name, err);
		exit(1);
	}
	return mm;
}

static inline void bench_print_machine(void)
{
	char cpu[128];
	bench_cpu_model_(cpu, sizeof(cpu));
	printf("# machine: %s, TSC %.3f GHz, %s, MM_DEBUG=%d%s%s, min of %d runs\n", cpu, bench_tsc_ghz(),
#if defined(__clang__)
	       "clang " __clang_version__,
#elif defined(__GNUC__)
	       "gcc " __VERSION__,
#else
	       "cc",
#endif
	       MM_DEBUG,
#ifdef __OPTIMIZE__
	       ", optimized",
#else
	       ", NOT optimized (numbers meaningless)",
#endif
#ifdef MM_TEST_HOOKS
	       ", test hooks ON (preemption points call the scheduler hook)",
#else
	       ", test hooks off (preemption points compiled out)",
#endif
	       BENCH_RUNS);
}

/*
 * BENCH_MEASURE(r, loops, { body }): @body runs @loops times per run; the
 * fastest of BENCH_RUNS runs is kept.  Variadic so the body may contain
 * commas.
 */
#define BENCH_MEASURE(r, loops, ...)                                                      \
	do {                                                                              \
		struct bench_result *r_ = (r);                                            \
		unsigned long loops_ = (unsigned long)(loops);                            \
		double best_ns_ = 1e300, best_cy_ = 0;                                    \
		for (int run_ = 0; run_ < BENCH_RUNS; run_++) {                           \
			double t0_ = bench_now_ns();                                      \
			uint64_t c0_ = bench_rdtsc();                                     \
			for (unsigned long i_ = 0; i_ < loops_; i_++)                     \
				__VA_ARGS__                                               \
			uint64_t c1_ = bench_rdtsc();                                     \
			double t1_ = bench_now_ns();                                      \
			if (t1_ - t0_ < best_ns_) {                                       \
				best_ns_ = t1_ - t0_;                                     \
				best_cy_ = (double)(c1_ - c0_);                           \
			}                                                                 \
		}                                                                         \
		r_->total_ns = best_ns_;                                                  \
		r_->ns = best_ns_ / (double)(loops_ ? loops_ : 1);                        \
		r_->cycles = best_cy_ / (double)(loops_ ? loops_ : 1);                    \
	} while (0)

/*
 * A run that cannot go on: the message (printf @fmt, with the benchmark's
 * name) on stderr and exit 1 - never a silent exit; the --json FILE is left
 * as it was.
 */
__attribute__((noreturn, format(printf, 1, 2))) static inline void bench_die(const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* ---- peer allocators ---- */

/*
 * The peers measured next to the model in the same run: resolved with
 * dlopen so a missing one is a row, not a failure.  jemalloc cannot be
 * dlopen'ed (its TLS is initial-exec): it is measured in a child process of
 * the same benchmark that LD_PRELOADs it and times the default malloc
 * (bench_peer_child(); the benchmark's --peer-default mode).
 */
struct bench_peer {
	const char *name, *lib, *malloc_sym, *free_sym, *pkg;
	bool preload;
};

static const struct bench_peer bench_peers[] = {
	{ "glibc", NULL, "malloc", "free", "libc6", false },
	{ "jemalloc", "libjemalloc.so.2", "malloc", "free", "libjemalloc2", true },
	{ "mimalloc", "libmimalloc.so.2", "mi_malloc", "mi_free", "libmimalloc2.0", false },
	{ "tcmalloc", "libtcmalloc_minimal.so.4", "tc_malloc", "tc_free", "libtcmalloc-minimal4", false },
};
#define BENCH_NR_PEERS (sizeof(bench_peers) / sizeof(bench_peers[0]))

/* The peer's malloc and free (the default ones for glibc); false if its library is missing. */
static inline bool bench_peer_fns(const struct bench_peer *p, void *(**m)(size_t), void (**f)(void *))
{
	void *h = p->lib ? dlopen(p->lib, RTLD_NOW | RTLD_LOCAL) : RTLD_DEFAULT;
	if (p->lib && !h)
		return false;
	*m = (void *(*)(size_t))dlsym(h, p->malloc_sym);
	*f = (void (*)(void *))dlsym(h, p->free_sym);
	return *m && *f;
}

/*
 * The last line a --peer-default child prints: proof that the preload
 * took (the default malloc is the peer's - jemalloc's mallctl resolves).
 * Without it ld.so ignores a missing library quietly and the child times
 * glibc under the peer's name.
 */
static inline const char *bench_preload_proof(void)
{
	return dlsym(RTLD_DEFAULT, "mallctl") ? "preloaded" : "not-preloaded";
}

/* This benchmark again, with @p LD_PRELOADed and --peer-default: its stdout to parse, or NULL. */
static inline FILE *bench_peer_child(const struct bench_peer *p, bool quick)
{
	char self[512], cmd[1200];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return NULL;
	self[n] = 0;
	snprintf(cmd, sizeof(cmd), "LD_PRELOAD=%s '%s' --peer-default%s 2>/dev/null", p->lib, self,
		 quick ? " --quick" : "");
	return popen(cmd, "r");
}

/* ---- command line ---- */

/*
 * Why @path cannot be the --json FILE, or NULL when it can: a directory, a
 * directory that does not exist or cannot be written (tools/outputs.py's
 * cannot_write(), which the verbs use).  An existing file that is not a
 * regular one (/dev/stdout, a pipe) is written in place, so it only needs to
 * be writable itself.
 */
static inline const char *bench_json_cannot_(const char *path)
{
	struct stat st;
	char dir[4096];
	if (!strcmp(path, "-"))
		return NULL;
	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode))
			return "it is a directory";
		if (!S_ISREG(st.st_mode))
			return access(path, W_OK) ? "not writable" : NULL;
	}
	/* bench_json_close() renames a new file over it: its (real) directory must take one. */
	if (!realpath(path, dir))
		snprintf(dir, sizeof(dir), "%s", path);
	char *slash = strrchr(dir, '/');
	const char *d = !slash ? "." : slash == dir ? "/" : (*slash = '\0', dir);
	if (stat(d, &st) || !S_ISDIR(st.st_mode))
		return "no such directory";
	if (access(d, W_OK | X_OK))
		return "its directory is not writable";
	return NULL;
}

/* --help's text (on @f) for the options bench_parse_args() was given. */
static inline void bench_usage_(FILE *f, const char *name, const char *about, bool json, bool peer_default)
{
	fprintf(f, "usage: %s%s [--quick]%s\n%s\n\n", name, json ? " [--json FILE]" : "",
		peer_default ? " [--peer-default]" : "", about);
	if (json)
		fprintf(f, "  --json FILE     also write the figures as JSON to FILE (\"-\": stdout), whole, once\n"
			   "                  the run is done: a run that fails leaves FILE as it was\n");
	fprintf(f, "  --quick         a smoke run (short loops): the numbers mean nothing\n");
	if (peer_default)
		fprintf(f, "  --peer-default  internal: time the default malloc and print the figures; what a\n"
			   "                  run starts with each peer allocator LD_PRELOADed\n");
	fprintf(f, "  -h, --help      this text\n\n"
		   "Exit status: 0 done, 1 a measurement failed, 2 bad arguments.\n");
}

/*
 * The command line of every benchmark.  A benchmark takes the options it
 * gives a place to (NULL: it does not take that one) and says what it
 * measures in @about (--help's text):
 *   --json FILE     @json: the figures as JSON (bench_json_open())
 *   --quick         @quick: a smoke run
 *   --peer-default  @peer_default: the child bench_peer_child() starts
 * --help prints the usage on stdout and exits 0.  A bad argument - an
 * unknown option, --json without a file or with an option for one, a FILE
 * that cannot be written - prints the reason and the usage on stderr and
 * exits 2, before anything is measured.  Returns when the benchmark is to run.
 */
static inline void bench_parse_args(int argc, char **argv, const char *name, const char *about,
				    const char **json, bool *quick, bool *peer_default)
{
	char why[512] = "";
	const char *cannot;
	for (int i = 1; i < argc && !why[0]; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			bench_usage_(stdout, name, about, json != NULL, peer_default != NULL);
			exit(0);
		} else if (json && !strcmp(a, "--json")) {
			/* "-" is stdout; another leading '-' is the next option, the file forgotten. */
			if (!next || !next[0] || (next[0] == '-' && next[1]))
				snprintf(why, sizeof(why), "--json needs a file (\"-\": stdout; a name with a leading '-': ./NAME)");
			else
				*json = argv[++i];
		} else if (quick && !strcmp(a, "--quick")) {
			*quick = true;
		} else if (peer_default && !strcmp(a, "--peer-default")) {
			*peer_default = true;
		} else {
			snprintf(why, sizeof(why), "unknown option '%s'", a);
		}
	}
	if (!why[0] && json && *json && (cannot = bench_json_cannot_(*json)))
		snprintf(why, sizeof(why), "--json: cannot write '%s': %s", *json, cannot);
	if (why[0]) {
		fprintf(stderr, "%s: %s\n", name, why);
		bench_usage_(stderr, name, about, json != NULL, peer_default != NULL);
		exit(2);
	}
}

/* ---- JSON ---- */

struct bench_json {
	FILE *f;            /* open_memstream() on buf: nothing reaches @path before bench_json_close() */
	char *buf;          /* the JSON so far, @len bytes */
	size_t len;
	const char *path;   /* --json FILE; "-": stdout */
	const char *bench;  /* "pages": bench_pages, for messages */
	int n;              /* results written so far */
};

static inline void bench_json_str_(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* NULL @path: no JSON (returns NULL, which every other call accepts). */
static inline struct bench_json *bench_json_open(const char *path, const char *bench)
{
	if (!path)
		return NULL;
	struct bench_json *js = calloc(1, sizeof(*js));
	if (!js || !(js->f = open_memstream(&js->buf, &js->len))) {
		perror("bench_json_open");
		exit(1);
	}
	js->path = path;
	js->bench = bench;
	char cpu[128];
	bench_cpu_model_(cpu, sizeof(cpu));
	fprintf(js->f, "{\n  \"bench\": ");
	bench_json_str_(js->f, bench);
	fprintf(js->f, ",\n  \"machine\": {\"cpu\": ");
	bench_json_str_(js->f, cpu);
	fprintf(js->f, ", \"tsc_ghz\": %.4f, \"mm_debug\": %d, \"runs\": %d},\n  \"results\": {", bench_tsc_ghz(),
		MM_DEBUG, BENCH_RUNS);
	return js;
}

static inline void bench_json_add(struct bench_json *js, const char *key, double value)
{
	if (!js)
		return;
	fprintf(js->f, "%s\n    ", js->n++ ? "," : "");
	bench_json_str_(js->f, key);
	fprintf(js->f, ": %.6g", value);
}

static inline void bench_json_add_result(struct bench_json *js, const char *key, const struct bench_result *r)
{
	char k[160];
	snprintf(k, sizeof(k), "%s_ns", key);
	bench_json_add(js, k, r->ns);
	snprintf(k, sizeof(k), "%s_cycles", key);
	bench_json_add(js, k, r->cycles);
}

/* @len bytes to @f, closed; false (errno set) if any of it failed. */
static inline bool bench_write_close_(FILE *f, const char *buf, size_t len)
{
	bool ok = fwrite(buf, 1, len, f) == len;
	return !fclose(f) && ok;
}

/*
 * @len bytes at @path whole or not at all: a temporary file in @path's
 * directory (the real one, past a symlink), renamed over @path once written
 * and closed - so a run that dies, even by SIGKILL, leaves @path as it was.
 * An existing file that is not a regular one (/dev/stdout, a pipe) is written
 * in place, as it cannot be replaced.  False (errno set) on failure, with
 * nothing left behind.
 */
static inline bool bench_write_whole_(const char *path, const char *buf, size_t len)
{
	struct stat st;
	char real[4096], tmp[4096 + 16];
	bool exists = !stat(path, &st);
	if (exists && !S_ISREG(st.st_mode)) {
		FILE *f = fopen(path, "w");
		return f && bench_write_close_(f, buf, len);
	}
	if (!exists || !realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	snprintf(tmp, sizeof(tmp), "%s.tmp-XXXXXX", real);
	int fd = mkstemp(tmp);
	if (fd < 0)
		return false;
	/* mkstemp's 0600 would make a new FILE private: the mode fopen() gives (or FILE had). */
	mode_t mask = umask(0);
	umask(mask);
	bool ok = !fchmod(fd, exists ? st.st_mode & 07777 : 0666 & ~mask);
	FILE *f = fdopen(fd, "w");
	if (!f)
		close(fd);
	ok = f && bench_write_close_(f, buf, len) && ok;
	if (!ok || rename(tmp, real)) {
		int e = errno;
		unlink(tmp);
		errno = e;
		return false;
	}
	return true;
}

/* The end of the JSON: written to its FILE now, whole; a failure to write is exit 1. */
static inline void bench_json_close(struct bench_json *js)
{
	if (!js)
		return;
	fprintf(js->f, "\n  }\n}\n");
	fflush(stdout);   /* the table first, should FILE be stdout by another name */
	bool ok = !fclose(js->f);
	if (ok && !strcmp(js->path, "-")) {
		ok = fwrite(js->buf, 1, js->len, stdout) == js->len && !fflush(stdout);
	} else if (ok) {
		ok = bench_write_whole_(js->path, js->buf, js->len);
	}
	if (!ok) {
		fprintf(stderr, "bench_%s: --json: cannot write '%s': %s\n", js->bench, js->path, strerror(errno));
		exit(1);
	}
	free(js->buf);
	free(js);
}

#endif /* MM_BENCH_COMMON_H */

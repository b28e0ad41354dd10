/* SPDX-License-Identifier: MIT */
/*
 * fuzz_stability.c - does an input's path depend on the inputs before it?
 *
 * Issue 5 promises AFL++ persistent mode 100% stability: the teardown puts
 * the instance back exactly, so every input runs the same way however many
 * (and whichever) inputs ran before it in the process.  AFL++ measures it
 * by running an input several times and counting the map bytes that vary;
 * this is the same question asked without AFL++, in any build without a
 * sanitizer (ctest: fuzz_T_stability in the debug preset):
 *
 *   the target, the harness and the allocator are compiled with
 *   -fsanitize-coverage=trace-pc (gcc and clang): every basic block calls
 *   __sanitizer_cov_trace_pc() below, which counts the block's address.  An
 *   input's signature is its set of (block, AFL++ hit-count bucket) pairs.
 *   After mf_instances_warm() (what the libFuzzer and AFL++ mains do before
 *   fuzzing) every input given runs in the given order, then again in the
 *   reverse order: the first input of the first pass is the first of the
 *   process (as in every forked AFL++ child), and every input follows
 *   different inputs in the two passes.  Its two signatures must be equal.
 *
 * A difference is printed as the blocks that differ, as exe+OFFSET (give
 * the offsets to `addr2line -f -e EXE`), and fails the test (exit 1).
 * Before the inputs a planted history dependence - a function that takes
 * another branch after its first call (fuzz_stability_canary.c, compiled
 * with the same instrumentation) - must be seen, or the check itself is
 * broken (exit 2).  Written after AFL++ reported 98% stability (fixed in
 * 15de6c0): the harness and allocator before that commit fail it on the
 * seeds (buddy 10 of 14 inputs, slub 11 of 12, kmalloc 5 of 6), and it
 * then found what AFL++'s short runs had not: mm_reset() set the pcp high
 * from the input's tuned watermarks, the pcp target's hotplug callback,
 * the scheduler's fibers and log, the CPU model's first attach in config.
 *
 * usage: stability_T FILE|DIR...   (directories: their regular files, no
 *        recursion; op text (.txt) and dotfiles are skipped)
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"

/* ------------------------------------------------------------ the runtime */

#define NR_SLOTS (1u << 18)           /* distinct blocks one input may reach */

struct slot {
	uintptr_t pc;
	uint32_t count;
};

static struct slot table[NR_SLOTS];
static uint32_t used[NR_SLOTS], nused;
static int recording;                  /* count blocks only while an input runs */
static int overflow;

void __sanitizer_cov_trace_pc(void);
void __sanitizer_cov_trace_pc(void)
{
	if (!recording)
		return;
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	uint32_t h = (uint32_t)((pc * 0x9e3779b97f4a7c15ull) >> 40) & (NR_SLOTS - 1);
	for (uint32_t probe = 0; probe < NR_SLOTS; probe++, h = (h + 1) & (NR_SLOTS - 1)) {
		if (table[h].pc == pc) {
			table[h].count++;
			return;
		}
		if (!table[h].pc) {
			if (nused > NR_SLOTS / 2) {
				overflow = 1;
				return;
			}
			table[h].pc = pc;
			table[h].count = 1;
			used[nused++] = h;
			return;
		}
	}
}

/* AFL++'s hit-count classes: 1, 2, 3, 4-7, 8-15, 16-31, 32-127, 128+. */
static unsigned int bucket(uint32_t n)
{
	return n <= 3 ? n : n <= 7 ? 4 : n <= 15 ? 5 : n <= 31 ? 6 : n <= 127 ? 7 : 8;
}

struct edge {
	uintptr_t pc;
	unsigned int bucket;
};

struct sig {
	struct edge *e;
	size_t n;
};

static int by_pc(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static void record_begin(void)
{
	for (uint32_t i = 0; i < nused; i++)
		table[used[i]].pc = 0;
	nused = 0;
	recording = 1;
}

static struct sig record_end(void)
{
	struct sig s;
	recording = 0;
	s.n = nused;
	s.e = malloc((nused ? nused : 1) * sizeof(*s.e));
	if (!s.e) {
		fprintf(stderr, "stability: out of memory\n");
		exit(2);
	}
	for (uint32_t i = 0; i < nused; i++) {
		s.e[i].pc = table[used[i]].pc;
		s.e[i].bucket = bucket(table[used[i]].count);
	}
	qsort(s.e, s.n, sizeof(*s.e), by_pc);
	return s;
}

extern char __executable_start[];

/* Print the blocks whose presence or bucket differ; returns how many. */
static size_t diff(const struct sig *a, const struct sig *b, const char *an, const char *bn, bool print)
{
	size_t i = 0, j = 0, n = 0;
	uintptr_t base = (uintptr_t)__executable_start;
	while (i < a->n || j < b->n) {
		uintptr_t pa = i < a->n ? a->e[i].pc : UINTPTR_MAX, pb = j < b->n ? b->e[j].pc : UINTPTR_MAX;
		uintptr_t pc = pa < pb ? pa : pb;
		unsigned int ba = pa == pc ? a->e[i].bucket : 0, bb = pb == pc ? b->e[j].bucket : 0;
		if (ba != bb) {
			if (print && n < 12)
				printf("    exe+%#lx: hit-count class %u %s, %u %s\n", (unsigned long)(pc - base), ba, an, bb, bn);
			n++;
		}
		i += pa == pc;
		j += pb == pc;
	}
	if (print && n > 12)
		printf("    ... %zu blocks in all\n", n);
	return n;
}

/* ------------------------------------------------------------ inputs */

struct input {
	char *name;
	uint8_t *data;
	size_t size;
	struct sig fwd, rev;
};

static struct input *inputs;
static size_t ninputs, cap;

static void add_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "stability: cannot read %s\n", path);
		exit(2);
	}
	if (ninputs == cap) {
		cap = cap ? 2 * cap : 64;
		inputs = realloc(inputs, cap * sizeof(*inputs));
		if (!inputs)
			exit(2);
	}
	struct input *in = &inputs[ninputs++];
	memset(in, 0, sizeof(*in));
	in->name = strdup(path);
	fseek(f, 0, SEEK_END);
	long len = ftell(f);
	fseek(f, 0, SEEK_SET);
	in->size = len > 0 ? (size_t)len : 0;
	in->data = malloc(in->size ? in->size : 1);
	if (!in->name || !in->data || fread(in->data, 1, in->size, f) != in->size) {
		fprintf(stderr, "stability: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct input *)a)->name, ((const struct input *)b)->name);
}

static void add_path(const char *path)
{
	struct stat st;
	if (stat(path, &st)) {
		fprintf(stderr, "stability: no such file or directory: %s\n", path);
		exit(2);
	}
	if (!S_ISDIR(st.st_mode)) {
		add_file(path);
		return;
	}
	DIR *d = opendir(path);
	if (!d) {
		fprintf(stderr, "stability: cannot open directory %s\n", path);
		exit(2);
	}
	size_t first = ninputs;
	for (struct dirent *e; (e = readdir(d));) {
		char p[4096];
		size_t l = strlen(e->d_name);
		if (e->d_name[0] == '.' || (l > 4 && !strcmp(e->d_name + l - 4, ".txt")))
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, e->d_name);
		if (!stat(p, &st) && S_ISREG(st.st_mode))
			add_file(p);
	}
	closedir(d);
	qsort(inputs + first, ninputs - first, sizeof(*inputs), by_name);   /* readdir's order is the fs's */
}

/* ------------------------------------------------------------ main */

void fuzz_stability_canary(void);

static struct sig run(const struct input *in)
{
	record_begin();
	mf_run_input(mf_the_target, in->data, in->size);
	return record_end();
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++)
		add_path(argv[i]);
	if (!ninputs) {
		fprintf(stderr, "stability: no inputs in the paths given\n");
		return 2;
	}

	/* The check must see a planted first-call branch, or it sees nothing. */
	record_begin();
	fuzz_stability_canary();
	struct sig c1 = record_end();
	record_begin();
	fuzz_stability_canary();
	struct sig c2 = record_end();
	size_t seen = diff(&c1, &c2, "", "", false);
	free(c1.e);
	free(c2.e);
	if (!seen || !c1.n) {
		fprintf(stderr, "stability: the planted first-call branch was not seen: the block "
			"instrumentation (-fsanitize-coverage=trace-pc) is not working\n");
		return 2;
	}

	mf_instances_warm(mf_the_target);
	for (size_t i = 0; i < ninputs; i++)
		inputs[i].fwd = run(&inputs[i]);
	for (size_t i = ninputs; i-- > 0;)
		inputs[i].rev = run(&inputs[i]);
	if (overflow) {
		fprintf(stderr, "stability: an input reached more than %u blocks: raise NR_SLOTS\n", NR_SLOTS / 2);
		return 2;
	}

	size_t bad = 0, blocks = 0;
	for (size_t i = 0; i < ninputs; i++) {
		struct input *in = &inputs[i];
		blocks += in->fwd.n;
		if (!diff(&in->fwd, &in->rev, "", "", false))
			continue;
		bad++;
		printf("%s: UNSTABLE: %s runs differently after other inputs "
		       "(as input %zu of %zu, then as input %zu of %zu):\n",
		       mf_the_target->name, in->name, i + 1, ninputs, ninputs - i, ninputs);
		diff(&in->fwd, &in->rev, "in the first pass", "in the reverse pass", true);
	}
	printf("%s: stability: %zu inputs, each run after different inputs in two passes; %zu ran differently "
	       "(%.0f blocks per input; planted first-call branch seen)\n",
	       mf_the_target->name, ninputs, bad, (double)blocks / (double)ninputs);
	for (size_t i = 0; i < ninputs; i++) {
		free(inputs[i].name);
		free(inputs[i].data);
		free(inputs[i].fwd.e);
		free(inputs[i].rev.e);
	}
	free(inputs);
	return bad ? 1 : 0;
}

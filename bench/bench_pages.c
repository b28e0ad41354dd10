/* SPDX-License-Identifier: MIT */
/*
 * bench_pages.c - the page allocator's per-cpu and bulk paths, printed in
 * the 2021 thread's format (shared/seeds/pcp-local-lock-bulk-2021.txt):
 *
 *   single_page alloc+put: Per elem: N cycles(tsc) X ns
 *   time_bulk_page_alloc_free_array: Per elem: N cycles(tsc) X ns (step:K)
 *
 * The bulk rows free what they got page by page (put_page() in the
 * thread's page_bench04_bulk) and divide by the pages they got.
 *
 * Plus free_pcppages_bulk without and with the 2018 patches
 * (shared/seeds/pcp-prefetch-2018.txt) in a will-it-scale page_fault1-like
 * loop, one thread per CPU ("full load"): the model's switch
 * (mm_set_pcp_prefetch) turns on both of the series' changes - 1/2, pick
 * the pages off the pcp lists before taking zone->lock, and 2/2, prefetch
 * each page's buddy while doing so - so the thread's three rows are two
 * here.  Off and on alternate over several windows (ABBA), each timed by
 * its own clock; the medians and their spread are printed.
 *
 * And reference rows for malloc(4096)+free of the peer allocators, all
 * measured first, before the model has touched the process's heap (glibc's
 * own row measured after the model runs came out 2-3x slower).
 *
 * Usage: bench_pages [--json FILE] [--quick]
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mm/mm.h"
#include "mm/cpu.h"
#include "common.h"

static bool quick;

/* A machine large enough for realistic pcp batches (~1 GiB Normal zone). */
static struct mm *make_bench_mm(unsigned int nr_cpus)
{
	return bench_make_mm("bench_pages", nr_cpus, false);
}

static void bench_single(struct mm *mm, struct bench_result *r)
{
	unsigned long loops = quick ? 200000 : 2000000;
	/* warm the pcp */
	for (int i = 0; i < 1000; i++)
		__free_pages(mm, alloc_pages(mm, GFP_KERNEL, 0), 0);
	BENCH_MEASURE(r, loops, {
		struct page *p = alloc_pages(mm, GFP_KERNEL, 0);
		__free_pages(mm, p, 0);
	});
}

/*
 * One round of time_bulk_page_alloc_free_array (page_bench04_bulk): fill
 * the array with alloc_pages_bulk_array(), then free every page it got one
 * by one, as put_page() does.  Returns the pages it got.
 */
static unsigned long bulk_round(struct mm *mm, int step, struct page **arr)
{
	unsigned long n = alloc_pages_bulk_array(mm, GFP_KERNEL, (unsigned long)step, arr);
	for (int k = 0; k < step; k++) {
		if (arr[k])
			__free_pages(mm, arr[k], 0);
		arr[k] = NULL;
	}
	return n;
}

/* Per page got: the fastest of BENCH_RUNS runs of @loops rounds. */
static void bench_bulk(struct mm *mm, int step, struct bench_result *r)
{
	struct page *arr[128];
	unsigned long loops = (quick ? 200000UL : 2000000UL) / (unsigned long)step;
	memset(arr, 0, sizeof(arr));
	for (int i = 0; i < 100; i++)
		bulk_round(mm, step, arr);
	r->ns = 1e300;
	r->cycles = 0;
	for (int run = 0; run < BENCH_RUNS; run++) {
		unsigned long got = 0;
		double t0 = bench_now_ns();
		uint64_t c0 = bench_rdtsc();
		for (unsigned long i = 0; i < loops; i++)
			got += bulk_round(mm, step, arr);
		uint64_t c1 = bench_rdtsc();
		double t1 = bench_now_ns();
		if (!got) {
			fprintf(stderr, "bench_pages: alloc_pages_bulk_array got no page at step %d\n", step);
			exit(1);
		}
		if ((t1 - t0) / (double)got < r->ns) {
			r->ns = (t1 - t0) / (double)got;
			r->cycles = (double)(c1 - c0) / (double)got;
			r->total_ns = t1 - t0;
		}
	}
}

/*
 * page_fault1-like: each thread repeatedly "faults in" a region (allocate
 * and touch one page per fault) and unmaps it (frees the pages), so pages
 * stream through the pcp lists and free_pcppages_bulk back to the buddy.
 */
struct pf_arg {
	struct mm *mm;
	int cpu;
	double seconds;
	unsigned long ops;
	double elapsed_ns;              /* the thread's own window, as run */
};

static void *pf_thread(void *p)
{
	struct pf_arg *a = p;
	enum { REGION = 512 };
	struct page *pages[REGION];
	mm_cpu_attach(a->mm, a->cpu);
	double t0 = bench_now_ns(), end = t0 + a->seconds * 1e9;
	unsigned long ops = 0;
	while (bench_now_ns() < end) {
		for (int i = 0; i < REGION; i++) {
			pages[i] = alloc_pages(a->mm, GFP_HIGHUSER_MOVABLE, 0);
			if (pages[i])
				*(volatile char *)page_address(a->mm, pages[i]) = 1;
		}
		for (int i = 0; i < REGION; i++)
			if (pages[i])
				__free_pages(a->mm, pages[i], 0);
		ops += REGION;
	}
	a->elapsed_ns = bench_now_ns() - t0;
	mm_cpu_detach(a->mm);
	a->ops = ops;
	return NULL;
}

#define PF_MAX_THREADS 8

/* Pages per second of one window: each thread's pages over its own measured time, summed. */
static double bench_page_fault1(struct mm *mm, bool prefetch, int threads, double seconds)
{
	mm_set_pcp_prefetch(mm, prefetch);
	pthread_t th[PF_MAX_THREADS];
	struct pf_arg args[PF_MAX_THREADS];
	for (int i = 0; i < threads; i++) {
		args[i] = (struct pf_arg){ .mm = mm, .cpu = i, .seconds = seconds };
		if (pthread_create(&th[i], NULL, pf_thread, &args[i])) {
			fprintf(stderr, "bench_pages: pthread_create failed\n");
			exit(1);
		}
	}
	double rate = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		rate += (double)args[i].ops / (args[i].elapsed_ns * 1e-9);
	}
	drain_all_pages(mm, NULL);
	return rate;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of @v[0..n) (sorted in place). */
static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The 2018 comparison: @reps windows each without and with the patches on
 * one machine, in ABBA order (off on, on off, ...) so neither side always
 * runs first; the median of each side, its spread, and the median of the
 * per-pair ratios.
 */
static void bench_prefetch(struct bench_json *js)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int threads = ncpu < 1 ? 1 : ncpu > PF_MAX_THREADS ? PF_MAX_THREADS : (int)ncpu;
	int reps = quick ? 2 : 6;
	double seconds = quick ? 0.15 : 1.0;
	double off[8], on[8], ratio[8];
	struct mm *mm = make_bench_mm((unsigned)threads);

	printf("\nfree_pcppages_bulk, will-it-scale page_fault1-like, %d threads (one per CPU), "
	       "%d windows of %.2f s each side, ABBA order (pages/s):\n", threads, reps, seconds);
	bench_page_fault1(mm, false, threads, seconds / 4);         /* warm-up, not counted */
	for (int i = 0; i < reps; i++) {
		bool on_first = i % 2;
		double a = bench_page_fault1(mm, on_first, threads, seconds);
		double b = bench_page_fault1(mm, !on_first, threads, seconds);
		off[i] = on_first ? b : a;
		on[i] = on_first ? a : b;
		ratio[i] = on[i] / off[i];
	}
	mm_destroy(mm);
	double r = median(ratio, reps);
	double m_off = median(off, reps), m_on = median(on, reps);
	printf("v4.15-rc4 (neither patch):            %12.0f  (min %.0f, max %.0f)\n", m_off, off[0], off[reps - 1]);
	printf("patches 1/2 + 2/2 (pick, prefetch):   %12.0f  (min %.0f, max %.0f)  %+.1f%% (median of %d pairs; "
	       "pairs from %+.1f%% to %+.1f%%)\n", m_on, on[0], on[reps - 1], 100.0 * (r - 1), reps,
	       100.0 * (ratio[0] - 1), 100.0 * (ratio[reps - 1] - 1));
	bench_json_add(js, "page_fault1_noprefetch_pages_per_s", m_off);
	bench_json_add(js, "page_fault1_prefetch_pages_per_s", m_on);
	bench_json_add(js, "page_fault1_prefetch_ratio_median", r);
}

/* malloc(4096)+free of a peer allocator (bench/common.h resolves it; jemalloc in a child). */
static bool bench_peer_preloaded(const struct bench_peer *p, struct bench_result *r)
{
	FILE *f = bench_peer_child(p, quick);
	if (!f)
		return false;
	char line[64];
	bool ok = fscanf(f, "%lf %lf", &r->ns, &r->cycles) == 2;
	ok = ok && fscanf(f, "%63s", line) == 1 && !strcmp(line, "preloaded");
	return pclose(f) == 0 && ok;
}

static bool bench_peer(const struct bench_peer *p, struct bench_result *r)
{
	if (p->preload)
		return bench_peer_preloaded(p, r);
	void *(*m)(size_t);
	void (*f)(void *);
	if (!bench_peer_fns(p, &m, &f))
		return false;
	unsigned long loops = quick ? 500000 : 5000000;
	for (int i = 0; i < 1000; i++)
		f(m(4096));
	BENCH_MEASURE(r, loops, {
		void *x = m(4096);
		__asm__ volatile("" : : "r"(x) : "memory");
		f(x);
	});
	return true;
}

int main(int argc, char **argv)
{
	const char *json = NULL;
	bool peer_default = false;
	bench_parse_args(argc, argv, "bench_pages",
			 "  the per-cpu and bulk page paths in the 2021 thread's format, free_pcppages_bulk with\n"
			 "  and without the buddy prefetch, peer malloc(4096)+free rows from the same run",
			 &json, &quick, &peer_default);
	if (peer_default) {
		struct bench_result r;
		bench_calibrate();
		if (!bench_peer(&bench_peers[0], &r))
			return 1;
		printf("%f %f\n", r.ns, r.cycles);
		printf("%s\n", bench_preload_proof());
		return 0;
	}
	struct bench_json *js = bench_json_open(json, "pages");
	bench_calibrate();
	bench_print_machine();

	/* The peers first, in a process whose heap nothing else has used yet. */
	struct bench_result peer[BENCH_NR_PEERS];
	bool have_peer[BENCH_NR_PEERS];
	for (size_t i = 0; i < BENCH_NR_PEERS; i++)
		have_peer[i] = bench_peer(&bench_peers[i], &peer[i]);

	struct mm *mm = make_bench_mm(1);
	struct bench_result single;
	bench_single(mm, &single);
	printf("\nBASELINE\nsingle_page alloc+put: Per elem: %.0f cycles(tsc) %.3f ns\n", single.cycles, single.ns);
	bench_json_add(js, "single_page_alloc_put_ns", single.ns);

	printf("\nARRAY variant: time_bulk_page_alloc_free_array: step=bulk size\n\n");
	static const int steps[] = { 1, 2, 3, 4, 8, 16, 32, 64, 128 };
	double per128 = 0;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct bench_result r;
		bench_bulk(mm, steps[i], &r);
		printf("Per elem: %.0f cycles(tsc) %.3f ns (step:%d)\n", r.cycles, r.ns, steps[i]);
		char key[64];
		snprintf(key, sizeof(key), "bulk_array_step_%d_ns", steps[i]);
		bench_json_add(js, key, r.ns);
		if (steps[i] == 128)
			per128 = r.ns;
	}
	mm_destroy(mm);

	bench_prefetch(js);

	printf("\nReference rows (same run, measured before the model ran):\n");
	double fastest = 0;
	for (size_t i = 0; i < BENCH_NR_PEERS; i++) {
		struct bench_result r = peer[i];
		if (!have_peer[i]) {
			printf("peer malloc(4096)+free %s: not available (%s: apt-get install %s)\n", bench_peers[i].name,
			       bench_peers[i].lib ? bench_peers[i].lib : "libc.so.6", bench_peers[i].pkg);
			continue;
		}
		printf("peer malloc(4096)+free %s: %.1f ns\n", bench_peers[i].name, r.ns);
		char key[64];
		snprintf(key, sizeof(key), "peer_malloc4096_free_%s_ns", bench_peers[i].name);
		bench_json_add(js, key, r.ns);
		if (!fastest || r.ns < fastest)
			fastest = r.ns;
	}
	printf("\nGoals: single alloc+put %.1f ns vs fastest peer %.1f ns (%s); "
	       "bulk step 128 %.1f ns vs half of single %.1f ns (%s)\n",
	       single.ns, fastest, single.ns <= fastest ? "met" : "not met", per128, single.ns / 2,
	       per128 <= single.ns / 2 ? "met" : "not met");
	bench_json_close(js);
	return 0;
}

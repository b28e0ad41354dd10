/* SPDX-License-Identifier: MIT */
/*
 * bench_pages.c - the page allocator's per-cpu and bulk paths, printed in
 * the 2021 thread's format (shared/seeds/pcp-local-lock-bulk-2021.txt):
 *
 *   single_page alloc+put: Per elem: N cycles(tsc) X ns
 *   time_bulk_page_alloc_free_array: Per elem: N cycles(tsc) X ns (step:K)
 *
 * plus free_pcppages_bulk with and without the 2018 buddy prefetch in a
 * will-it-scale page_fault1-like loop (2 threads), and reference rows for
 * malloc(4096)+free of the peer allocators in the same run.
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

static void bench_bulk(struct mm *mm, int step, struct bench_result *r)
{
	struct page *arr[128];
	unsigned long loops = (quick ? 200000UL : 2000000UL) / (unsigned long)step;
	memset(arr, 0, sizeof(arr));
	for (int i = 0; i < 100; i++) {
		alloc_pages_bulk_array(mm, GFP_KERNEL, (unsigned long)step, arr);
		release_pages(mm, arr, (unsigned long)step);
		memset(arr, 0, sizeof(arr[0]) * (size_t)step);
	}
	BENCH_MEASURE(r, loops, {
		unsigned long n = alloc_pages_bulk_array(mm, GFP_KERNEL, (unsigned long)step, arr);
		release_pages(mm, arr, n);
		memset(arr, 0, sizeof(arr[0]) * (size_t)step);
	});
	r->cycles /= step;
	r->ns /= step;
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
	mm_cpu_detach(a->mm);
	a->ops = ops;
	return NULL;
}

static double bench_page_fault1(bool prefetch, int threads)
{
	struct mm *mm = make_bench_mm((unsigned)threads);
	mm_set_pcp_prefetch(mm, prefetch);
	pthread_t th[8];
	struct pf_arg args[8];
	for (int i = 0; i < threads; i++) {
		args[i] = (struct pf_arg){ .mm = mm, .cpu = i, .seconds = quick ? 0.3 : 2.0 };
		pthread_create(&th[i], NULL, pf_thread, &args[i]);
	}
	unsigned long total = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(th[i], NULL);
		total += args[i].ops;
	}
	mm_destroy(mm);
	return (double)total / (quick ? 0.3 : 2.0);
}

/* malloc(4096)+free of a peer allocator (bench/common.h resolves it; jemalloc in a child). */
static bool bench_peer_preloaded(const struct bench_peer *p, struct bench_result *r)
{
	FILE *f = bench_peer_child(p, quick);
	if (!f)
		return false;
	bool ok = fscanf(f, "%lf %lf", &r->ns, &r->cycles) == 2;
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
		return 0;
	}
	struct bench_json *js = bench_json_open(json, "pages");
	bench_calibrate();
	bench_print_machine();

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

	printf("\nfree_pcppages_bulk, will-it-scale page_fault1-like, 2 threads (pages/s):\n");
	double off = bench_page_fault1(false, 2), on = bench_page_fault1(true, 2);
	printf("page_fault1 no prefetch:   %12.0f\npage_fault1 with prefetch: %12.0f %+.1f%%\n", off, on,
	       100.0 * (on - off) / off);
	bench_json_add(js, "page_fault1_noprefetch_pages_per_s", off);
	bench_json_add(js, "page_fault1_prefetch_pages_per_s", on);

	printf("\nReference rows (same run):\n");
	double fastest = 0;
	for (size_t i = 0; i < BENCH_NR_PEERS; i++) {
		struct bench_result r;
		if (!bench_peer(&bench_peers[i], &r)) {
			printf("peer malloc(4096)+free %s: not available (%s: apt-get install %s)\n", bench_peers[i].name,
			       bench_peers[i].lib, bench_peers[i].pkg);
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

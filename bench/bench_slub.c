/* SPDX-License-Identifier: MIT */
/*
 * bench_slub.c - SLUB's fast paths, printed in the 2007 thread's table
 * format (shared/seeds/slub-cmpxchg-local-2007.txt):
 *
 *                 |  cmpxchg  |  locked  |  irqoff
 *   kmalloc(8)    |    N      |    N     |    N
 *   kfree(8)      |  ...
 *
 * in cycles(tsc) per operation: a batch of kmallocs is timed, then the
 * kfree of the batch, each divided by the batch (min of N batches).  Two
 * tables: the thread's own test (10000 kmallocs, then 10000 kfrees: slow
 * paths and new slabs included, as in 2007) and a batch of 64 that stays
 * within the cpu slab once warm (the fast path alone).  One column per
 * fast-path variant (mm_slub_configure "slub_fastpath=...").
 *
 * Then, with the default variant:
 *   kmem_cache_alloc+free pair: X ns
 *   kmem_cache_alloc_bulk+free_bulk: Per elem: N cycles(tsc) X ns (step:K)
 *   floor cmpxchg16b pop+push pair: X ns   (two lock cmpxchg16b, nothing else;
 *                                           also without the lock prefix, as the
 *                                           default variant issues it)
 * the goal (pair within 1.3x of the floor), and the same malloc-shaped loop
 * (8 and 64 bytes, pair and batch of 64) for kmalloc and the peer
 * allocators (glibc, jemalloc, mimalloc, tcmalloc) in the same run.
 *
 * Usage: bench_slub [--json FILE] [--quick]
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mm/mm.h"
#include "mm/slab.h"
#include "common.h"

static bool quick;

/* ~1 GiB Normal zone: 10000 x kmalloc(16384) (order-2 pages) fits. */
static struct mm *make_bench_mm(void)
{
	return bench_make_mm("bench_slub", 1, true);
}

static void configure(struct mm *mm, const char *opt)
{
	char err[256];
	if (mm_slub_configure(mm, opt, err, sizeof(err)) == -EINVAL) {
		fprintf(stderr, "bench_slub: %s: %s\n", opt, err);
		exit(1);
	}
}

/* ------------------------------------------------ the 2007 kmalloc table */

static const char *const variants[SLUB_NR_FASTPATHS] = { "cmpxchg", "locked", "irqoff" };
static const size_t table_sizes[3] = { 8, 64, 16384 };

/*
 * @batch kmallocs of @size timed together, then their kfrees; per op, the
 * fastest and the slowest of @reps batches for each, separately (the
 * thread's baseline column gives "min - max" over its runs).
 */
static void kmalloc_batch(struct mm *mm, size_t size, unsigned batch, unsigned reps, double *alloc_cy,
			  double *free_cy, double *alloc_max_cy, double *free_max_cy)
{
	void **v = malloc(sizeof(void *) * batch);
	double best_a = 1e300, best_f = 1e300, worst_a = 0, worst_f = 0;
	if (!v)
		exit(1);
	for (unsigned r = 0; r < reps + 2; r++) {     /* two warm-up batches */
		uint64_t c0 = bench_rdtsc();
		for (unsigned i = 0; i < batch; i++) {
			v[i] = kmalloc(mm, size, GFP_KERNEL);
			bench_escape(v[i]);
		}
		uint64_t c1 = bench_rdtsc();
		for (unsigned i = 0; i < batch; i++)
			kfree(mm, v[i]);
		uint64_t c2 = bench_rdtsc();
		for (unsigned i = 0; i < batch; i++)
			if (!v[i]) {
				fprintf(stderr, "bench_slub: kmalloc(%zu) failed\n", size);
				exit(1);
			}
		if (r < 2)
			continue;
		if ((double)(c1 - c0) < best_a)
			best_a = (double)(c1 - c0);
		if ((double)(c2 - c1) < best_f)
			best_f = (double)(c2 - c1);
		if ((double)(c1 - c0) > worst_a)
			worst_a = (double)(c1 - c0);
		if ((double)(c2 - c1) > worst_f)
			worst_f = (double)(c2 - c1);
	}
	free(v);
	*alloc_cy = best_a / batch;
	*free_cy = best_f / batch;
	*alloc_max_cy = worst_a / batch;
	*free_max_cy = worst_f / batch;
}

/* [variant][row]: rows kmalloc(8) kfree(8) kmalloc(64) kfree(64) kmalloc(16384) kfree(16384) */
static double cmpxchg_small_alloc[2], irqoff_small_alloc[2];

static void kmalloc_table(struct bench_json *js, const char *title, const char *tag, unsigned batch, unsigned reps)
{
	double cy[SLUB_NR_FASTPATHS][6], cy_max[SLUB_NR_FASTPATHS][6];
	for (int f = 0; f < SLUB_NR_FASTPATHS; f++) {
		struct mm *mm = make_bench_mm();
		char opt[64];
		snprintf(opt, sizeof(opt), "slub_fastpath=%s", variants[f]);
		configure(mm, opt);
		if ((int)mm_slub_fastpath(mm) != f) {
			fprintf(stderr, "bench_slub: %s did not take\n", opt);
			exit(1);
		}
		for (int s = 0; s < 3; s++)
			kmalloc_batch(mm, table_sizes[s], batch, table_sizes[s] > KMALLOC_MAX_CACHE_SIZE ? reps / 4 + 1 : reps,
				      &cy[f][2 * s], &cy[f][2 * s + 1], &cy_max[f][2 * s], &cy_max[f][2 * s + 1]);
		mm_destroy(mm);
	}
	printf("\n%s\n", title);
	printf("%-15s|", "cycles(tsc)/op");
	for (int f = 0; f < SLUB_NR_FASTPATHS; f++)
		printf(" %9s (min-max) %s", variants[f], f + 1 < SLUB_NR_FASTPATHS ? "|" : "\n");
	for (int row = 0; row < 6; row++) {
		char label[32];
		snprintf(label, sizeof(label), "%s(%zu)", row % 2 ? "kfree" : "kmalloc", table_sizes[row / 2]);
		printf("%-15s|", label);
		for (int f = 0; f < SLUB_NR_FASTPATHS; f++) {
			char cell[48];
			snprintf(cell, sizeof(cell), "%.0f - %.0f", cy[f][row], cy_max[f][row]);
			printf(" %19s %s", cell, f + 1 < SLUB_NR_FASTPATHS ? "|" : "\n");
			char key[96];
			snprintf(key, sizeof(key), "%s_%s_%s", tag, label, variants[f]);
			for (char *p = key; *p; p++)
				if (*p == '(' || *p == ')')
					*p = '_';
			bench_json_add(js, key, cy[f][row]);
			strncat(key, "_max", sizeof(key) - strlen(key) - 1);
			bench_json_add(js, key, cy_max[f][row]);
		}
	}
	/* kmalloc(8) and kmalloc(64): the thread's "more than twice faster" */
	int t = !strcmp(tag, "batch64");
	cmpxchg_small_alloc[t] = (cy[SLUB_FASTPATH_CMPXCHG][0] + cy[SLUB_FASTPATH_CMPXCHG][2]) / 2;
	irqoff_small_alloc[t] = (cy[SLUB_FASTPATH_IRQOFF][0] + cy[SLUB_FASTPATH_IRQOFF][2]) / 2;
	printf("irqoff/cmpxchg for small kmalloc (mean of 8 and 64, minima): %.2fx\n",
	       irqoff_small_alloc[t] / cmpxchg_small_alloc[t]);
}

/* ------------------------------------------------ kmem_cache fast path */

static void bench_cache_pair(struct kmem_cache *s, struct bench_result *r)
{
	unsigned long loops = quick ? 200000 : 5000000;
	for (int i = 0; i < 1000; i++)
		kmem_cache_free(s, kmem_cache_alloc(s, GFP_KERNEL));
	BENCH_MEASURE(r, loops, {
		void *x = kmem_cache_alloc(s, GFP_KERNEL);
		bench_escape(x);
		kmem_cache_free(s, x);
	});
}

static void bench_cache_bulk(struct kmem_cache *s, int step, struct bench_result *r)
{
	void *arr[128];
	unsigned long loops = (quick ? 200000UL : 4000000UL) / (unsigned long)step;
	for (int i = 0; i < 100; i++) {
		if (kmem_cache_alloc_bulk(s, GFP_KERNEL, (size_t)step, arr) != step)
			bench_die("bench_slub: kmem_cache_alloc_bulk of %d objects fell short (warm-up)", step);
		kmem_cache_free_bulk(s, (size_t)step, arr);
	}
	BENCH_MEASURE(r, loops, {
		kmem_cache_alloc_bulk(s, GFP_KERNEL, (size_t)step, arr);
		bench_escape(arr);
		kmem_cache_free_bulk(s, (size_t)step, arr);
	});
	r->cycles /= step;
	r->ns /= step;
}

/* ------------------------------------------------ the floor */

struct fl_pair {
	void *freelist;
	uint64_t tid;
} __attribute__((aligned(16)));

/* lock cmpxchg16b: true if *p was @old and is now @new (else @old is updated). */
static inline bool dcas(struct fl_pair *p, struct fl_pair *old, struct fl_pair new, bool locked)
{
	bool ok;
	if (locked)
		__asm__ __volatile__("lock cmpxchg16b %[p]"
				     : [p] "+m"(*p), "=@ccz"(ok), "+a"(old->freelist), "+d"(old->tid)
				     : "b"(new.freelist), "c"(new.tid)
				     : "memory");
	else
		__asm__ __volatile__("cmpxchg16b %[p]"
				     : [p] "+m"(*p), "=@ccz"(ok), "+a"(old->freelist), "+d"(old->tid)
				     : "b"(new.freelist), "c"(new.tid)
				     : "memory");
	return ok;
}

static void bench_floor(bool locked, struct bench_result *r)
{
	static struct fl_pair pair;
	static void *objs[64][8] __attribute__((aligned(64)));
	unsigned long loops = quick ? 200000 : 10000000;
	pair.freelist = NULL;
	pair.tid = 0;
	for (int i = 0; i < 64; i++) {      /* a freelist of 64 objects */
		objs[i][0] = pair.freelist;
		pair.freelist = objs[i];
	}
	BENCH_MEASURE(r, loops, {
		/* pop */
		struct fl_pair old = { __atomic_load_n(&pair.freelist, __ATOMIC_RELAXED),
				       __atomic_load_n(&pair.tid, __ATOMIC_RELAXED) };
		void *obj;
		do {
			obj = old.freelist;
		} while (!dcas(&pair, &old, (struct fl_pair){ *(void **)obj, old.tid + 1 }, locked));
		bench_escape(obj);
		/* push */
		old.freelist = __atomic_load_n(&pair.freelist, __ATOMIC_RELAXED);
		old.tid = __atomic_load_n(&pair.tid, __ATOMIC_RELAXED);
		do {
			*(void **)obj = old.freelist;
		} while (!dcas(&pair, &old, (struct fl_pair){ obj, old.tid + 1 }, locked));
	});
}

/* ------------------------------------------------ malloc-shaped loops */

struct malloc_fns {
	void *(*m)(size_t);
	void (*f)(void *);
};

/* r[0..3]: pair(8), pair(64), batch64(8), batch64(64), ns per malloc+free */
static void malloc_shape(void *(*m)(size_t, void *), void (*f)(void *, void *), void *ctx, struct bench_result r[4])
{
	unsigned long loops = quick ? 200000 : 5000000;
	static const size_t sz[2] = { 8, 64 };
	void *v[64];
	for (int k = 0; k < 2; k++) {
		for (int i = 0; i < 1000; i++)
			f(m(sz[k], ctx), ctx);
		BENCH_MEASURE(&r[k], loops, {
			void *x = m(sz[k], ctx);
			bench_escape(x);
			f(x, ctx);
		});
		BENCH_MEASURE(&r[2 + k], loops / 64, {
			for (int j = 0; j < 64; j++) {
				v[j] = m(sz[k], ctx);
				bench_escape(v[j]);
			}
			for (int j = 0; j < 64; j++)
				f(v[j], ctx);
		});
		r[2 + k].ns /= 64;
		r[2 + k].cycles /= 64;
	}
}

static void *peer_m(size_t n, void *ctx) { return ((struct malloc_fns *)ctx)->m(n); }
static void peer_f(void *p, void *ctx) { ((struct malloc_fns *)ctx)->f(p); }
static void *km_m(size_t n, void *ctx) { return kmalloc((struct mm *)ctx, n, GFP_KERNEL); }
static void km_f(void *p, void *ctx) { kfree((struct mm *)ctx, p); }

/* jemalloc's TLS is initial-exec: measured in a child that LD_PRELOADs it (bench/common.h). */
static bool bench_peer_preloaded(const struct bench_peer *p, struct bench_result r[4])
{
	FILE *f = bench_peer_child(p, quick);
	if (!f)
		return false;
	bool ok = true;
	for (int i = 0; i < 4; i++)
		ok = ok && fscanf(f, "%lf %lf", &r[i].ns, &r[i].cycles) == 2;
	char line[64];
	ok = ok && fscanf(f, "%63s", line) == 1 && !strcmp(line, "preloaded");
	return pclose(f) == 0 && ok;
}

static bool bench_peer(const struct bench_peer *p, struct bench_result r[4])
{
	if (p->preload)
		return bench_peer_preloaded(p, r);
	struct malloc_fns fns;
	if (!bench_peer_fns(p, &fns.m, &fns.f))
		return false;
	malloc_shape(peer_m, peer_f, &fns, r);
	return true;
}

static void print_shape(struct bench_json *js, const char *name, const struct bench_result r[4])
{
	printf("%-22s| %8.1f | %8.1f | %8.1f | %8.1f\n", name, r[0].ns, r[1].ns, r[2].ns, r[3].ns);
	static const char *const k[4] = { "pair8", "pair64", "batch64_8", "batch64_64" };
	for (int i = 0; i < 4; i++) {
		char key[96];
		snprintf(key, sizeof(key), "malloc_shape_%s_%s_ns", name, k[i]);
		for (char *c = key; *c; c++)
			if (*c == ' ' || *c == '(' || *c == ')')
				*c = '_';
		bench_json_add(js, key, r[i].ns);
	}
}

int main(int argc, char **argv)
{
	const char *json = NULL;
	bool peer_default = false;
	bench_parse_args(argc, argv, "bench_slub",
			 "  SLUB's fast-path variants in the 2007 thread's kmalloc table, the kmem_cache alloc+free\n"
			 "  pair and bulk against the cmpxchg16b floor, kmalloc and peer mallocs in one loop",
			 &json, &quick, &peer_default);
	if (peer_default) {
		struct bench_result r[4];
		bench_calibrate();
		if (!bench_peer(&bench_peers[0], r))
			return 1;
		for (int i = 0; i < 4; i++)
			printf("%f %f\n", r[i].ns, r[i].cycles);
		/* proof that the preload took: the default malloc is the peer's */
		printf("%s\n", bench_preload_proof());
		return 0;
	}

	struct bench_json *js = bench_json_open(json, "slub");
	bench_calibrate();
	bench_print_machine();

	kmalloc_table(js, "The 2007 thread's test: 10000 x kmalloc, then 10000 x kfree (slow paths included)",
		      "t10000", quick ? 1000 : 10000, quick ? 3 : 30);
	kmalloc_table(js, "Batch of 64 (within the cpu slab once warm: the fast path)", "batch64", 64,
		      quick ? 100 : 20000);

	/* Default variant from here on. */
	struct mm *mm = make_bench_mm();
	configure(mm, "slub_fastpath=cmpxchg");
	struct kmem_cache *s = kmem_cache_create(mm, "bench_64", 64, 0, 0, NULL);
	if (!s) {
		fprintf(stderr, "bench_slub: kmem_cache_create failed\n");
		return 1;
	}
	struct bench_result pair, floor_l, floor_u;
	bench_cache_pair(s, &pair);
	printf("\nkmem_cache_alloc+free pair: %.1f ns (%.0f cycles(tsc)), 64-byte cache, slub_fastpath=cmpxchg\n",
	       pair.ns, pair.cycles);
	bench_json_add_result(js, "kmem_cache_alloc_free_pair", &pair);

	printf("\nARRAY variant: kmem_cache_alloc_bulk+kmem_cache_free_bulk: step=bulk size\n\n");
	static const int steps[] = { 1, 2, 4, 8, 16, 32, 64, 128 };
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		struct bench_result r;
		bench_cache_bulk(s, steps[i], &r);
		printf("Per elem: %.0f cycles(tsc) %.3f ns (step:%d)\n", r.cycles, r.ns, steps[i]);
		char key[64];
		snprintf(key, sizeof(key), "bulk_step_%d_ns", steps[i]);
		bench_json_add(js, key, r.ns);
	}

	bench_floor(true, &floor_l);
	bench_floor(false, &floor_u);
	printf("\nfloor cmpxchg16b pop+push pair: %.1f ns (%.0f cycles(tsc)), lock cmpxchg16b\n", floor_l.ns, floor_l.cycles);
	printf("floor cmpxchg16b pop+push pair, no lock prefix (the default variant's instruction): %.1f ns (%.0f cycles(tsc))\n",
	       floor_u.ns, floor_u.cycles);
	bench_json_add_result(js, "floor_cmpxchg16b_pair", &floor_l);
	bench_json_add_result(js, "floor_cmpxchg16b_nolock_pair", &floor_u);
	double ratio = pair.ns / floor_l.ns, ratio_u = pair.ns / floor_u.ns;
	printf("Goal: kmem_cache_alloc+free pair within 1.3x of the floor: %.2fx (%s); "
	       "against the no-lock floor: %.2fx (%s)\n",
	       ratio, ratio <= 1.3 ? "met" : "not met", ratio_u, ratio_u <= 1.3 ? "met" : "not met");
	bench_json_add(js, "goal_ratio_pair_over_floor_nolock", ratio_u);
	bench_json_add(js, "goal_ratio_pair_over_floor", ratio);

	printf("\nSame malloc-shaped loop, ns per malloc+free (same run):\n");
	printf("%-22s| %8s | %8s | %8s | %8s\n", "", "pair 8", "pair 64", "batch 8", "batch 64");
	{
		struct bench_result r[4];
		malloc_shape(km_m, km_f, mm, r);
		print_shape(js, "mmfuzz kmalloc", r);
	}
	kmem_cache_destroy(s);
	mm_destroy(mm);
	for (size_t i = 0; i < BENCH_NR_PEERS; i++) {
		struct bench_result r[4];
		if (!bench_peer(&bench_peers[i], r)) {
			printf("%-22s| not available (%s: apt-get install %s)\n", bench_peers[i].name,
			       bench_peers[i].lib ? bench_peers[i].lib : "libc", bench_peers[i].pkg);
			continue;
		}
		print_shape(js, bench_peers[i].name, r);
	}

	/* The thread's own test is the 10000 x kmalloc one; the batch of 64 is its fast path alone. */
	bool big = irqoff_small_alloc[0] / cmpxchg_small_alloc[0] > 2.0;
	bool fast = irqoff_small_alloc[1] / cmpxchg_small_alloc[1] > 2.0;
	printf("\n2007 shape (cmpxchg over 2x faster than irqoff for small kmalloc): "
	       "10000-test %.2fx, batch-64 %.2fx (%s)\n",
	       irqoff_small_alloc[0] / cmpxchg_small_alloc[0], irqoff_small_alloc[1] / cmpxchg_small_alloc[1],
	       big && fast ? "holds in both" : big ? "holds in the 10000-test only" :
	       fast ? "holds in batch-64 only" : "does not hold here");
	bench_json_close(js);
	return 0;
}

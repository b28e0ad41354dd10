/* SPDX-License-Identifier: MIT */
/*
 * test_harness_slub_opts.c - putting SLUB's options back after an input
 * changed them (targets/common/slub_opts.c) leaves the instance exactly as
 * a fresh one: every cache's layout, its random sequence and hardening
 * word, the options and the random state.  The kmalloc and slub targets'
 * saved inputs (corpus/regressions) replay only if that holds, and so does
 * the layout memo of allocator/slab/cache.c that makes putting them back
 * cheap: this test also checks that the layouts are then the very ones
 * computed before (no layout recomputed), and that layouts computed under
 * a few option sets are, bit for bit, those the allocator computed before
 * the memo existed (the golden hashes below).
 *
 * A change to the layout model itself (calculate_sizes, the random
 * sequence, the draws from the random state) changes the golden hashes on
 * purpose: update them, and expect saved inputs to replay differently.
 */
#include <stdlib.h>
#include <string.h>

#include "common/harness.h"
#include "common/slub_opts.h"
#include "slab/slab.h"
#include "slub_test.h"     /* ASAN_BUILD */
#include "test.h"

static const struct mf_opdesc setup = { "setup", "", NULL, NULL, { { 0 } } };
static void nop(struct mf_ctx *c, struct mf_op *op) { (void)c; (void)op; }
static const struct mf_opdesc ops[] = { { "op", "", nop, NULL, { { 0 } } } };
static const struct mf_target target = { .name = "slubopts_test", .setup = &setup, .ops = ops, .nops = 1 };

#define MAX_CACHES 64

/* What a cache's layout is, as the allocator uses it. */
struct cache_snap {
	const struct kmem_cache *s;
	char name[32];
	slab_flags_t flags;
	enum slub_fastpath fastpath;
	unsigned long min_partial, fp_random, fp_swab_mask;
	unsigned int size, object_size, offset, cpu_partial, cpu_partial_slabs, inuse, align, red_left_pad;
	unsigned int oo, min, allocflags;
	unsigned int *seq;           /* a copy of random_seq (NULL: none) */
	const unsigned int *seq_ptr; /* the array itself */
};

struct snap {
	unsigned int n;
	struct cache_snap c[MAX_CACHES];
	/* the options and the random state */
	enum slub_fastpath fastpath;
	bool hardened, random, init_on_alloc, init_on_free;
	unsigned int min_order, max_order, min_objects;
	unsigned long seed, fail_new_slab, rnd;
	/* not slub_debug's blocks: "slub_debug=-" leaves one with no flags where a fresh instance has none */
};

static void take(struct mm *mm, struct snap *p)
{
	struct slub_state *st = slub_state(mm);

	memset(p, 0, sizeof(*p));
	for (struct kmem_cache *s = kmem_cache_next(mm, NULL); s; s = kmem_cache_next(mm, s)) {
		REQUIRE(p->n < MAX_CACHES);
		struct cache_snap *c = &p->c[p->n++];
		unsigned int count = oo_objects(s->oo);
		c->s = s;
		snprintf(c->name, sizeof(c->name), "%s", s->name);
		c->flags = s->flags;
		c->fastpath = s->fastpath;
		c->min_partial = s->min_partial;
		c->fp_random = s->fp_random;
		c->fp_swab_mask = s->fp_swab_mask;
		c->size = s->size;
		c->object_size = s->object_size;
		c->offset = s->offset;
		c->cpu_partial = s->cpu_partial;
		c->cpu_partial_slabs = s->cpu_partial_slabs;
		c->inuse = s->inuse;
		c->align = s->align;
		c->red_left_pad = s->red_left_pad;
		c->oo = s->oo.x;
		c->min = s->min.x;
		c->allocflags = s->allocflags;
		c->seq_ptr = s->random_seq ? s->random_seq->seq : NULL;
		if (s->random_seq) {
			REQUIRE(s->random_seq->count == count);
			c->seq = malloc(count * sizeof(unsigned int));
			REQUIRE(c->seq);
			memcpy(c->seq, slub_cache_random_seq(s->random_seq), count * sizeof(unsigned int));
		}
	}
	p->fastpath = st->fastpath;
	p->hardened = st->hardened;
	p->random = st->random;
	p->init_on_alloc = st->init_on_alloc;
	p->init_on_free = st->init_on_free;
	p->min_order = st->min_order;
	p->max_order = st->max_order;
	p->min_objects = st->min_objects;
	p->seed = st->seed;
	p->fail_new_slab = st->fail_new_slab;
	p->rnd = atomic_load(&st->rnd);
}

static void drop(struct snap *p)
{
	for (unsigned int i = 0; i < p->n; i++)
		free(p->c[i].seq);
	p->n = 0;
}

/* @got equals @want in everything but the cache pointers. */
static void same(const char *what, const struct snap *got, const struct snap *want)
{
	CHECK_MSG(got->n == want->n, "%s: %u caches, want %u", what, got->n, want->n);
	for (unsigned int i = 0; i < got->n && i < want->n; i++) {
		const struct cache_snap *a = &got->c[i], *b = &want->c[i];
		unsigned int count = b->oo & OO_MASK;
		CHECK_MSG(!strcmp(a->name, b->name), "%s: cache %u is %s, want %s", what, i, a->name, b->name);
		CHECK_MSG(a->flags == b->flags && a->fastpath == b->fastpath && a->min_partial == b->min_partial &&
			  a->fp_random == b->fp_random && a->fp_swab_mask == b->fp_swab_mask && a->size == b->size &&
			  a->object_size == b->object_size && a->offset == b->offset &&
			  a->cpu_partial == b->cpu_partial && a->cpu_partial_slabs == b->cpu_partial_slabs &&
			  a->inuse == b->inuse && a->align == b->align && a->red_left_pad == b->red_left_pad &&
			  a->oo == b->oo && a->min == b->min && a->allocflags == b->allocflags,
			  "%s: the layout of %s differs (size %u/%u offset %u/%u flags %#x/%#x oo %#x/%#x fp_random %#lx/%#lx)",
			  what, b->name, a->size, b->size, a->offset, b->offset, a->flags, b->flags, a->oo, b->oo,
			  a->fp_random, b->fp_random);
		CHECK_MSG(!a->seq == !b->seq && (!a->seq || !memcmp(a->seq, b->seq, count * sizeof(unsigned int))),
			  "%s: the random sequence of %s differs", what, b->name);
	}
	CHECK_MSG(got->fastpath == want->fastpath && got->hardened == want->hardened && got->random == want->random &&
		  got->init_on_alloc == want->init_on_alloc && got->init_on_free == want->init_on_free &&
		  got->min_order == want->min_order && got->max_order == want->max_order &&
		  got->min_objects == want->min_objects && got->seed == want->seed &&
		  got->fail_new_slab == want->fail_new_slab,
		  "%s: the options differ", what);
	CHECK_MSG(got->rnd == want->rnd, "%s: the random state is %#lx, want %#lx", what, got->rnd, want->rnd);
}

/* FNV-1a over the layouts and the random state: the golden values. */
static unsigned long long hash_snap(const struct snap *p)
{
	unsigned long long h = 0xcbf29ce484222325ULL;
#define H(v) do { unsigned long long v_ = (unsigned long long)(v); \
		for (int b_ = 0; b_ < 8; b_++) { h ^= (v_ >> (8 * b_)) & 0xff; h *= 0x100000001b3ULL; } } while (0)
	for (unsigned int i = 0; i < p->n; i++) {
		const struct cache_snap *c = &p->c[i];
		H(c->flags); H(c->min_partial); H(c->fp_random); H(c->fp_swab_mask); H(c->size); H(c->offset);
		H(c->cpu_partial); H(c->cpu_partial_slabs); H(c->inuse); H(c->red_left_pad); H(c->oo); H(c->min);
		H(c->allocflags);
		for (unsigned int j = 0; c->seq && j < (c->oo & OO_MASK); j++)
			H(c->seq[j]);
	}
	H(p->rnd);
#undef H
	return h;
}

static struct mm *new_instance(void)
{
	struct mm_config cfg;
	char err[256];
	mm_config_default(&cfg);
	cfg.quiet = true;
	struct mm *mm = mm_create(&cfg, err, sizeof(err));
	if (!mm)
		fprintf(stderr, "mm_create: %s\n", err);
	REQUIRE(mm);
	return mm;
}

static int configure(struct mm *mm, const char *text)
{
	char err[256] = "";
	return mm_slub_configure(mm, text, err, sizeof(err));
}

/* Allocations of every kmalloc size (slabs in most caches, random draws for their freelists). */
static unsigned int churn(struct mm *mm, void **held, unsigned int max)
{
	unsigned int n = 0;
	for (size_t size = 8; size <= 8192 && n < max; size = size * 3 / 2 + 8)
		if ((held[n] = kmalloc(mm, size, GFP_KERNEL)))
			n++;
	return n;
}

/* The end of an input: everything freed, mm_reset() (the harness's teardown), the options put back. */
static void end_input(struct mf_ctx *c, void **held, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		kfree(c->mm, held[i]);
	REQUIRE(mm_reset(c->mm) == 0);
	mf_slub_options_mark_dirty(c);
	mf_slub_options_restore_if_dirty(c);
}

/* Each input: its option texts, with allocations before / between them when churn is set. */
static const struct {
	const char *opts[5];
	bool churn;
} inputs[] = {
	/* one input of the layout changed at a time, from the very random state the defaults start from */
	{ { "slub_debug=FZPU" }, false },
	{ { "slub_debug=U,kmalloc-64" }, false },
	{ { "slab_freelist_hardened=0" }, false },
	{ { "slab_freelist_random=0" }, false },
	{ { "slub_min_order=1" }, false },
	{ { "slub_max_order=1" }, false },
	{ { "slub_min_objects=4" }, false },
	{ { "slub_debug=FZPU slab_freelist_hardened=0 slub_min_order=1" }, false },
	{ { "slub_debug=U,kmalloc-64 slab_freelist_random=0 slub_max_order=1 slub_seed=0x1234abcd",
	    "slub_min_objects=16 slub_fastpath=locked init_on_free=1" }, true },
	{ { "slub_debug=Z slub_bogus=1" }, false },
	{ { "slub_bogus=1 slub_debug=P" }, true },
	{ { "slub_debug=F,kmalloc-8,kmalloc-192;Z,kmalloc-1* slub_fail_new_slab=3", "slub_seed=0",
	    "slab_freelist_hardened=1 slub_max_order=0" }, true },
	/* more option changes than a cache keeps layouts: the first ones are recomputed */
	{ { "slub_min_order=1", "slub_min_order=2", "slub_min_order=3", "slub_max_order=5 slub_debug",
	    "slub_debug=- slub_seed=1" }, true },
	{ { "slub_debug=UZ init_on_alloc=1 slab_freelist_hardened=0" }, true },
};

/*
 * Golden hashes of the layouts a fresh instance (mm_config_default) has
 * right after mm_slub_configure(golden_opts[i]), and [0] after mm_reset()
 * with the defaults.  First computed by the allocator as of commit 58d94d9
 * (before the layout memo); recomputed when kmalloc-8k's align went from
 * PAGE_SIZE to 8192 (6.6's create_boot_cache() has no cap) and when the
 * instance got the kmalloc-rcl-N and dma-kmalloc-N caches (every cache
 * is hashed, and the new ones draw from the random state too).  ASan
 * builds add KASAN's red zones to every layout.
 */
static const char *const golden_opts[] = {
	NULL,
	/* one input of the layout changed at a time, from the random state the defaults' layouts start from */
	"slub_debug=FZPU",
	"slub_debug=U,kmalloc-64",
	"slab_freelist_hardened=0",
	"slab_freelist_random=0",
	"slub_min_order=1",
	"slub_max_order=1",
	"slub_min_objects=4",
	/* several, and other seeds */
	"slub_debug=FZPU slab_freelist_hardened=0 slub_min_order=1",
	"slub_debug=U,kmalloc-64 slab_freelist_random=0 slub_max_order=1 slub_seed=0x1234abcd",
	"slub_min_objects=16 slub_seed=77",
	"slub_max_order=5 slub_min_order=2 slub_debug=P,kmalloc-1*",
};
#define NR_GOLDEN (sizeof(golden_opts) / sizeof(golden_opts[0]))
static const unsigned long long golden[2][NR_GOLDEN] = {
	/* plain builds */
	{
	  0x708e3548d3cecf58ULL, 0x36cc83a2437dd4b0ULL, 0xb03b2d392d4b2b60ULL, 0x3177c0de3426f9d4ULL,
	  0x19de48777ba33ae5ULL, 0x91234a371724ec94ULL, 0xb3f922a153096872ULL, 0xe19ceff74ab38447ULL,
	  0xab7b00f1943d4ef2ULL, 0x0871b65c0119438fULL, 0xc8898d5f7f4896a4ULL, 0xb94c04bb2fea66b1ULL },
	/* ASan builds */
	{
	  0x55ddcfa81979bfd5ULL, 0x36cc83a2437dd4b0ULL, 0x8c15e6ef8519353cULL, 0x7857d64b6c490347ULL,
	  0x19c6d03fa7455681ULL, 0x96f0f23c808b9b36ULL, 0xb3d5487f9f46a4f1ULL, 0x6fe4c06c1b64d978ULL,
	  0xab7b00f1943d4ef2ULL, 0x9b73acd36fdedd97ULL, 0xba4ced290ef54494ULL, 0x309a3c986ecec7a8ULL },
};

int main(int argc, char **argv)
{
	struct snap want, got, ptrs;
	void *held[64];
	struct mf_ctx c;
	bool print = argc > 1 && !strcmp(argv[1], "--print");

	(void)argv;
	unsetenv("MMFUZZ_SLUB");

	/* The golden layouts: computed now as the allocator always computed them. */
	struct mm *ref = new_instance();
	memset(&c, 0, sizeof(c));
	c.t = &target;
	c.mm = ref;
	for (unsigned int i = 0; i < NR_GOLDEN; i++) {
		if (golden_opts[i])
			configure(ref, golden_opts[i]);
		else
			REQUIRE(mm_reset(ref) == 0);
		take(ref, &want);
		unsigned long long h = hash_snap(&want);
		if (print)
			printf("golden[%d][%u] = %#llx  (%s)\n", ASAN_BUILD, i, h, golden_opts[i] ? golden_opts[i] : "reset");
		else
			CHECK_MSG(h == golden[ASAN_BUILD][i], "layouts after \"%s\": hash %#llx, want %#llx",
				  golden_opts[i] ? golden_opts[i] : "(reset)", h, golden[ASAN_BUILD][i]);
		drop(&want);
		end_input(&c, NULL, 0);
	}
	if (print)
		return 0;

	/* What every input must start from: a fresh instance after mm_reset(). */
	REQUIRE(mm_reset(ref) == 0);
	take(ref, &want);

	struct mm *mm = new_instance();
	c.mm = mm;
	REQUIRE(mm_reset(mm) == 0);
	take(mm, &ptrs);
	same("a second fresh instance", &ptrs, &want);

	for (unsigned int i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		unsigned int n = 0;
		char what[64];
		bool evicts = inputs[i].opts[SLUB_NR_LAYOUTS - 1] != NULL;

		if (inputs[i].churn)
			n = churn(mm, held, 64);
		for (int j = 0; j < 5 && inputs[i].opts[j]; j++) {
			configure(mm, inputs[i].opts[j]);
			if (inputs[i].churn) {
				n += churn(mm, held + n, 64 - n);
				while (n > 16)
					kfree(mm, held[--n]);
			}
		}
		end_input(&c, held, n);

		snprintf(what, sizeof(what), "after input %u and putting the options back", i);
		take(mm, &got);
		same(what, &got, &want);
		/* The memo: every cache's layout is the one computed before, not a new one. */
		for (unsigned int k = 0; !evicts && k < got.n && k < ptrs.n; k++)
			CHECK_MSG(got.c[k].s == ptrs.c[k].s && got.c[k].seq_ptr == ptrs.c[k].seq_ptr,
				  "%s: %s recomputed its layout", what, got.c[k].name);
		if (evicts) {               /* from now on the recomputed ones are the ones to keep */
			drop(&ptrs);
			take(mm, &ptrs);
		}
		drop(&got);

		/* The state after it runs an input as a fresh instance does: the same draws, the same results. */
		n = churn(mm, held, 64);
		unsigned int m = churn(ref, held + n, 64 - n);
		CHECK(n == m);
		for (unsigned int k = 0; k < n && k < m; k++)
			CHECK_MSG((char *)held[k] - (char *)mm_arena_base(mm) ==
				  (char *)held[n + k] - (char *)mm_arena_base(ref),
				  "input %u: allocation %u is at another offset than on a fresh instance", i, k);
		for (unsigned int k = 0; k < n; k++)
			kfree(mm, held[k]);
		for (unsigned int k = 0; k < m; k++)
			kfree(ref, held[n + k]);
		REQUIRE(mm_reset(mm) == 0 && mm_reset(ref) == 0);
	}
	drop(&want);
	drop(&ptrs);
	mm_destroy(mm);
	mm_destroy(ref);
	TEST_DONE();
}

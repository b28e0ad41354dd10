/* SPDX-License-Identifier: MIT */
/*
 * test_harness_shadow.c - the fuzz harness's shadow model
 * (targets/common/shadow.c): C1 must fire - the process aborts with a
 * report naming C1 - for an allocation outside the arena, misaligned,
 * overlapping a live one, not zero when it should be, or whose contents
 * changed while live; and the interval and pick helpers and the B4 walker
 * report exactly what is live.  Each expected violation runs in a child
 * process, so a shadow that misses it fails this test.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/harness.h"
#include "common/shadow.h"
#include "test.h"

static void nop(struct mf_ctx *c, struct mf_op *op) { (void)c; (void)op; }
static const struct mf_opdesc setup = { "setup", "", NULL, NULL, { { 0 } } };
static const struct mf_opdesc ops[] = { { "op", "", nop, NULL, { { 0 } } } };
static const struct mf_target target = { .name = "shadowtest", .setup = &setup, .ops = ops, .nops = 1 };

static struct mf_shadow sh;
static struct mf_op prog[1];
static char *arena;
#define ARENA (64 * 4096)

static void ctx_init(struct mf_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->t = &target;
	c->sh = &sh;
	c->prog = prog;
	c->nops = 1;
	mf_shadow_reset(&sh, (uintptr_t)arena, (uintptr_t)arena + ARENA);
}

/* Run @fn in a child; true if it died of SIGABRT (mf_fail's abort). */
static bool aborts(void (*fn)(struct mf_ctx *c))
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		struct mf_ctx c;
		ctx_init(&c);
		fn(&c);
		_exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
}

static void outside(struct mf_ctx *c) { mf_shadow_add(c, 0, arena + ARENA - 4096, 8192, 4096, false); }
static void misaligned(struct mf_ctx *c) { mf_shadow_add(c, 0, arena + 8, 4096, 4096, false); }
static void overlap_tail(struct mf_ctx *c)
{
	mf_shadow_add(c, 0, arena + 4096, 3 * 4096, 4096, false);
	mf_shadow_add(c, 0, arena + 8192, 8192, 0, false);
}
static void overlap_head(struct mf_ctx *c)
{
	mf_shadow_add(c, 0, arena + 4 * 4096, 4096, 4096, false);
	mf_shadow_add(c, 0, arena + 3 * 4096, 4097, 0, false);
}
static void overlap_inside(struct mf_ctx *c)
{
	mf_shadow_add(c, 0, arena, 16 * 4096, 4096, false);
	mf_shadow_add(c, 0, arena + 5 * 4096 + 64, 64, 64, false);
}
static void not_zero(struct mf_ctx *c)
{
	memset(arena, 0, 4096);
	arena[4090] = 1;            /* a page's last word: every pattern writes it */
	mf_shadow_add(c, 0, arena, 4096, 4096, true);
}
static void not_zero_large(struct mf_ctx *c)
{
	memset(arena, 0, 16 * 4096);
	arena[9 * 4096 + 3] = 1;    /* page 9's first word */
	mf_shadow_add(c, 0, arena, 16 * 4096, 4096, true);
}
static void not_zero_small(struct mf_ctx *c)
{
	memset(arena, 0, 4096);
	arena[4096 - 200 + 150] = 1;   /* a small object is read in full */
	mf_shadow_add(c, 0, arena + 4096 - 200, 200, 8, true);
}
static void zero_large(struct mf_ctx *c)
{
	memset(arena, 0, 16 * 4096);
	mf_shadow_add(c, 0, arena, 16 * 4096, 4096, true);
}
static void changed_small(struct mf_ctx *c)
{
	struct mf_alloc *a = mf_shadow_add(c, 0, arena + 4096, 100, 4, false);
	arena[4096 + 99] ^= 1;     /* the last, partial word */
	mf_shadow_remove(c, a);
}
static void changed_large(struct mf_ctx *c)
{
	struct mf_alloc *a = mf_shadow_add(c, 0, arena, 16 * 4096, 4096, false);
	/* Sparse patterns still cover the first and last word of every page. */
	memset(arena + 7 * 4096, 0, 8);
	mf_shadow_verify(c, a);
}
static void clean(struct mf_ctx *c)
{
	struct mf_alloc *a = mf_shadow_add(c, 0, arena, 4096, 4096, false);
	struct mf_alloc *b = mf_shadow_add(c, 0, arena + 4096, 4096, 4096, false);
	mf_shadow_touch(c, a);
	mf_shadow_remove(c, a);
	mf_shadow_remove(c, b);
	a = mf_shadow_add(c, 0, arena, 8192, 4096, false);   /* the same memory again */
	mf_shadow_remove(c, a);
}

static unsigned long marked[64];
static void mark(void *w, unsigned long pfn, unsigned long nr)
{
	(void)w;
	for (unsigned long i = 0; i < nr; i++)
		marked[pfn + i]++;
}


/*
 * The shadow's treap: in order by address, every allocation in [lo, hi),
 * a max-heap by prio.  Returns the number of nodes, or -1 if any of that
 * does not hold.
 */
static long treap_ok(const struct mf_alloc *t, uintptr_t lo, uintptr_t hi)
{
	if (!t)
		return 0;
	if (t->addr < lo || t->addr >= hi || (t->tl && t->tl->prio > t->prio) || (t->tr && t->tr->prio > t->prio))
		return -1;
	long l = treap_ok(t->tl, lo, t->addr), r = treap_ok(t->tr, t->addr + 1, hi);
	return l < 0 || r < 0 ? -1 : l + r + 1;
}

/*
 * Random adds and removes of one-page allocations over the 64 page slots,
 * against a plain array: the treap stays ordered and balanced by prio,
 * mf_shadow_find() answers as a linear search does, and an add that
 * would overlap is not made (mf_shadow_add would report it: the slot map
 * says so first).
 */
static void treap_random(struct mf_ctx *c)
{
	struct mf_shadow *s = c->sh;
	struct mf_alloc *at[ARENA / 4096] = { 0 };
	uint64_t x = 88172645463325252ULL;

	while (mf_shadow_count(s))
		mf_shadow_remove(c, s->live[0]);
	CHECK(s->root == NULL);
	for (int step = 0; step < 20000; step++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		unsigned int slot = (unsigned int)(x % (ARENA / 4096));
		if (at[slot]) {
			mf_shadow_remove(c, at[slot]);
			at[slot] = NULL;
		} else if (!mf_shadow_full(s)) {
			at[slot] = mf_shadow_add(c, 0, arena + (size_t)slot * 4096, 4096, 4096, false);
		}
		if (step % 97 == 0) {
			long n = treap_ok(s->root, 0, UINTPTR_MAX);
			CHECK(n == (long)mf_shadow_count(s));
			for (unsigned int k = 0; k < ARENA / 4096; k++) {
				uintptr_t addr = (uintptr_t)arena + (uintptr_t)k * 4096 + (x % 4096);
				CHECK(mf_shadow_find(s, addr) == at[k]);
			}
		}
	}
	while (mf_shadow_count(s))
		mf_shadow_remove(c, s->live[0]);
	CHECK(s->root == NULL);
}

static void test_intervals(void)
{
	struct mf_ctx c;
	ctx_init(&c);
	struct mf_alloc *a[8];
	for (int i = 0; i < 8; i++) {
		/* Out of address order on purpose. */
		int slot = (i * 5) % 8;
		a[i] = mf_shadow_add(&c, (unsigned)(i % 2), arena + slot * 8 * 4096, 4096 * (1 + (unsigned)i % 3), 4096, false);
		a[i]->pfn = (unsigned long)slot * 8;
		a[i]->nr_pages = 1 + (unsigned long)i % 3;
	}
	CHECK(mf_shadow_count(&sh) == 8);
	for (int i = 0; i < 8; i++) {
		CHECK(mf_shadow_find(&sh, a[i]->addr) == a[i]);
		CHECK(mf_shadow_find(&sh, a[i]->addr + a[i]->len - 1) == a[i]);
	}
	CHECK(mf_shadow_find(&sh, (uintptr_t)arena + 4 * 4096) == NULL);
	for (unsigned long k = 0; k < 20; k++) {
		CHECK(mf_shadow_pick(&sh, k) == sh.live[k % 8]);
		struct mf_alloc *p = mf_shadow_pick_kind(&sh, k, 1u << 1);
		CHECK(p && p->kind == 1);
	}
	CHECK(mf_shadow_pick_kind(&sh, 0, 1u << 5) == NULL);
	memset(marked, 0, sizeof(marked));
	mf_shadow_walk(&sh, mark, NULL);
	unsigned long total = 0;
	for (int i = 0; i < 64; i++) {
		CHECK(marked[i] <= 1);
		total += marked[i];
	}
	CHECK(total == 1 + 2 + 3 + 1 + 2 + 3 + 1 + 2);
	mf_shadow_remove(&c, a[3]);
	mf_shadow_remove(&c, a[0]);
	CHECK(mf_shadow_count(&sh) == 6);
	CHECK(mf_shadow_find(&sh, a[1]->addr) == a[1]);
	for (unsigned int i = 0; i < 6; i++)
		CHECK(sh.live[i]->slot == i);
	CHECK(treap_ok(sh.root, 0, UINTPTR_MAX) == 6);
	treap_random(&c);
}

int main(void)
{
	arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	REQUIRE(arena != MAP_FAILED);
	/* The children's reports would only be noise here. */
	fflush(NULL);
	int saved = dup(2);
	REQUIRE(freopen("/dev/null", "w", stderr));
	bool r_outside = aborts(outside), r_misaligned = aborts(misaligned), r_tail = aborts(overlap_tail);
	bool r_head = aborts(overlap_head), r_inside = aborts(overlap_inside), r_zero = aborts(not_zero);
	bool r_small = aborts(changed_small), r_large = aborts(changed_large), r_clean = aborts(clean);
	bool r_zero_large = aborts(not_zero_large), r_zero_small = aborts(not_zero_small);
	bool r_zero_clean = aborts(zero_large);
	fflush(stderr);
	dup2(saved, 2);
	CHECK(r_outside);
	CHECK(r_misaligned);
	CHECK(r_tail);
	CHECK(r_head);
	CHECK(r_inside);
	CHECK(r_zero);
	CHECK(r_zero_large);
	CHECK(r_zero_small);
	CHECK(!r_zero_clean);
	CHECK(r_small);
	CHECK(r_large);
	CHECK(!r_clean);
	test_intervals();
	munmap(arena, ARENA);
	TEST_DONE();
}

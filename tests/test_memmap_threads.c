/* SPDX-License-Identifier: MIT */
/*
 * test_memmap_threads.c - instances created and destroyed on several
 * threads at once.  memmap_destroy() keeps recent mappings in one table
 * for every instance of the process and memmap_create() takes them from
 * it (memmap.c, "kept mappings"), under kept_lock: two threads must never
 * take the same kept mapping, and a mapping taken is the caller's alone.
 *
 * Each thread creates an instance of the tiny machine and of a second
 * shape in turn (so the table holds both kinds and sizes), fills every
 * free page of order 0 with a pattern of its own and reads it back before
 * it destroys the instance: an arena given to two instances at once shows
 * as the other thread's pattern, and the checker runs at level 3 on each.
 * Now and then a thread empties the table (memmap_drop_kept()) while the
 * others take from it and put into it.  In the TSan build a table update
 * outside the lock is a reported race.
 */
#include <pthread.h>
#include <stdint.h>

#include "internal.h"
#include "test.h"

#define THREADS 4
#define ROUNDS  24

struct worker {
	int id;
	unsigned long pages;        /* pages written and read back */
	char err[320];              /* the first failure, "" if none (room for a 256-byte message) */
};

static void fail(struct worker *w, const char *what)
{
	if (!w->err[0])
		snprintf(w->err, sizeof(w->err), "thread %d: %s", w->id, what);
}

static void one_instance(struct worker *w, int round)
{
	struct mm_config c;
	char err[256];
	struct mm_violation v;

	mm_config_tiny(&c);
	c.quiet = true;
	if (round % 2)
		c.nr_cpus = 1 + (unsigned int)w->id % 2;
	struct mm *mm = mm_create(&c, err, sizeof(err));
	if (!mm) {
		fail(w, err);
		return;
	}
	struct page *pages[4096];
	unsigned long n = 0;
	const uint64_t pattern = 0x5a5a000000000000ULL | (uint64_t)w->id << 32 | (uint64_t)round;

	while (n < sizeof(pages) / sizeof(pages[0]) && (pages[n] = alloc_pages(mm, GFP_KERNEL, 0)))
		n++;
	for (unsigned long i = 0; i < n; i++) {
		uint64_t *q = page_address(mm, pages[i]);
		for (size_t k = 0; k < MM_PAGE_SIZE / sizeof(*q); k += 64)
			q[k] = pattern ^ k;
	}
	for (unsigned long i = 0; i < n && !w->err[0]; i++) {
		const uint64_t *q = page_address(mm, pages[i]);
		for (size_t k = 0; k < MM_PAGE_SIZE / sizeof(*q); k += 64)
			if (q[k] != (pattern ^ k)) {
				fail(w, "a page's pattern changed under it (an arena shared with another instance)");
				break;
			}
	}
	w->pages += n;
	if (!mm_check(mm, 3, &v))
		fail(w, v.msg);
	for (unsigned long i = 0; i < n; i++)
		__free_pages(mm, pages[i], 0);
	if (!mm_check(mm, 3, &v))
		fail(w, v.msg);
	mm_destroy(mm);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	for (int r = 0; r < ROUNDS && !w->err[0]; r++) {
		one_instance(w, r);
		if (r % 6 == 5)
			memmap_drop_kept();     /* empties the table beside the others' takes and puts */
	}
	return NULL;
}

int main(void)
{
	pthread_t th[THREADS];
	struct worker w[THREADS];

	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .id = i };
		REQUIRE(pthread_create(&th[i], NULL, worker_main, &w[i]) == 0);
	}
	for (int i = 0; i < THREADS; i++)
		REQUIRE(pthread_join(th[i], NULL) == 0);
	for (int i = 0; i < THREADS; i++) {
		CHECK_MSG(!w[i].err[0], "%s", w[i].err);
		CHECK_MSG(w[i].pages > 0, "thread %d wrote no page", i);
	}
	TEST_DONE();
}

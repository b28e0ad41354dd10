/* SPDX-License-Identifier: MIT */
/*
 * test.h - a minimal assertion harness for ctest executables.  Every CHECK
 * counts; a failed one prints file:line and the expression, and the test
 * exits non-zero at the end (TEST_DONE) or at once (REQUIRE).  A test that
 * ran no check at all fails too: it could not have failed on a broken
 * allocator.  One with nothing to check in this build says so with
 * TEST_SKIP(why), the only way to pass without a check.
 */
#ifndef MM_TEST_H
#define MM_TEST_H

#include <stdio.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mm/mm.h"

static _Atomic int test_failures __attribute__((unused));   /* atomic: threads may CHECK too */
static _Atomic int test_checks __attribute__((unused));

#define CHECK(cond)                                                                   \
	do {                                                                          \
		test_checks++;                                                        \
		if (!(cond)) {                                                        \
			test_failures++;                                              \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                     \
	} while (0)

#define CHECK_MSG(cond, ...)                                                          \
	do {                                                                          \
		test_checks++;                                                        \
		if (!(cond)) {                                                        \
			test_failures++;                                              \
			fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                 \
			fputc('\n', stderr);                                          \
		}                                                                     \
	} while (0)

#define REQUIRE(cond)                                                                 \
	do {                                                                          \
		test_checks++;                                                        \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

#define REQUIRE_MSG(cond, ...)                                                        \
	do {                                                                          \
		test_checks++;                                                        \
		if (!(cond)) {                                                        \
			fprintf(stderr, "%s:%d: REQUIRE failed: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                 \
			fputc('\n', stderr);                                          \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

/* The checker must be clean; prints the violation when it is not. */
#define CHECK_MM(mm, level)                                                           \
	do {                                                                          \
		struct mm_violation v_;                                               \
		test_checks++;                                                        \
		if (!mm_check((mm), (level), &v_)) {                                  \
			test_failures++;                                              \
			fprintf(stderr, "%s:%d: mm_check: %s\n", __FILE__, __LINE__, v_.msg); \
		}                                                                     \
	} while (0)

#define TEST_DONE()                                                                   \
	do {                                                                          \
		printf("%s: %d checks, %d failed\n", __FILE__, test_checks, test_failures); \
		if (!test_checks)                                                     \
			fprintf(stderr, "%s: no check ran: a test that asserts nothing cannot fail\n", __FILE__); \
		return test_failures || !test_checks ? 1 : 0;                         \
	} while (0)

/* Nothing to check in this build: say why and pass (ends main). */
#define TEST_SKIP(why)                                                                \
	do {                                                                          \
		printf("%s: skipped: %s\n", __FILE__, (why));                        \
		return 0;                                                             \
	} while (0)

/* mm_create(@c); a refusal is said on stderr and ends the test (REQUIRE): it cannot go on without it. */
static inline struct mm *test_create(const struct mm_config *c)
{
	char err[256];
	struct mm *mm = mm_create(c, err, sizeof(err));
	if (!mm)
		fprintf(stderr, "mm_create: %s\n", err);
	REQUIRE(mm);
	return mm;
}

/*
 * The tiny config with one vCPU, quiet, no holes, and memory only in
 * ZONE_NORMAL [@start, @end), orders up to @max_order, pageblocks of
 * @pageblock_order: a machine where a test knows where every block is.
 */
static inline void test_config_normal(struct mm_config *c, unsigned long start, unsigned long end,
				      unsigned int max_order, unsigned int pageblock_order)
{
	mm_config_tiny(c);
	c->quiet = true;
	c->nr_cpus = 1;
	c->max_order = max_order;
	c->pageblock_order = pageblock_order;
	c->nr_holes = 0;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		c->zones[z] = (struct mm_span){ 0, 0 };
	c->zones[ZONE_NORMAL] = (struct mm_span){ start, end };
}

/* The tiny config (mm_config_tiny) with @nr_cpus vCPUs; NULL, said on stderr, if mm_create refuses. */
static inline struct mm *test_make_mm(unsigned int nr_cpus, bool quiet)
{
	struct mm_config c;
	char err[256];
	mm_config_tiny(&c);
	c.nr_cpus = nr_cpus;
	c.quiet = quiet;
	struct mm *mm = mm_create(&c, err, sizeof(err));
	if (!mm)
		fprintf(stderr, "mm_create: %s\n", err);
	return mm;
}

/* SplitMix64: the next of a test's reproducible pseudo-random numbers from *@state. */
static inline uint64_t test_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* What @fn (mm_dump_buddyinfo, _zoneinfo, _pagetypeinfo, ...) prints for @mm, as a string to free(). */
static inline char *test_dump(struct mm *mm, void (*fn)(struct mm *, FILE *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	REQUIRE(f);
	fn(mm, f);
	REQUIRE(fclose(f) == 0 && buf);
	return buf;
}

/* Run @fn in a forked child, its stderr to /dev/null (exit 0 if @fn returns); its wait status. */
static inline int test_run_child(void (*fn)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stderr))
			_exit(2);
		fn();
		_exit(0);
	}
	int status = 0;
	REQUIRE(waitpid(pid, &status, 0) == pid);
	return status;
}

/* Run @fn in a forked child (exit 0 if @fn returns) with its stderr read
 * into @buf (@size bytes, terminated; the rest is dropped); its wait status. */
static inline int test_run_child_stderr(void (*fn)(void), char *buf, size_t size)
{
	int pfd[2], status = 0;
	size_t len = 0;

	REQUIRE(size > 0 && pipe(pfd) == 0);
	fflush(NULL);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		dup2(pfd[1], 2);
		close(pfd[0]);
		fn();
		_exit(0);
	}
	close(pfd[1]);
	for (ssize_t n; (n = read(pfd[0], buf + len, size - 1 - len)) > 0;)
		len += (size_t)n;
	buf[len] = 0;
	close(pfd[0]);
	REQUIRE(waitpid(pid, &status, 0) == pid);
	return status;
}

/* True if @fn, run in a child (test_run_child), dies of SIGABRT (an mm_bug, MM_BAD_ABORT). */
static inline bool test_aborts(void (*fn)(void))
{
	int status = test_run_child(fn);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

#endif /* MM_TEST_H */

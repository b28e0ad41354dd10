/* SPDX-License-Identifier: MIT */
/*
 * debug.h - compile-time debug levels, as mimalloc's MI_DEBUG and the
 * kernel's CONFIG_DEBUG_VM.
 *
 *   MM_DEBUG 0  no checks (release, benchmarks)
 *   MM_DEBUG 1  cheap checks: VM_BUG_ON on O(1) conditions
 *   MM_DEBUG 2  internal asserts: VM_BUG_ON_PAGE, list sanity
 *   MM_DEBUG 3  exhaustive: mm_check(level 3) at every state change
 *
 * Below their level the macros compile to type-checked no-ops, so callers
 * never carry #ifdefs.
 */
#ifndef MM_DEBUG_H
#define MM_DEBUG_H

#include <stdio.h>
#include <stdlib.h>

#ifndef MM_DEBUG
#define MM_DEBUG 0
#endif

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define noinline    __attribute__((noinline))
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#define READ_ONCE(x)  (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif

void mm_bug(const char *file, int line, const char *cond) __attribute__((noreturn));

#define MM_BUG_ON_LEVEL(level, cond)                                  \
	do {                                                          \
		if (MM_DEBUG >= (level)) {                             \
			if (unlikely(cond))                           \
				mm_bug(__FILE__, __LINE__, #cond);    \
		} else {                                              \
			(void)sizeof(cond);                           \
		}                                                     \
	} while (0)

#define VM_BUG_ON(cond)         MM_BUG_ON_LEVEL(1, cond)
#define VM_BUG_ON_PAGE(cond, p) do { (void)(p); MM_BUG_ON_LEVEL(2, cond); } while (0)
#define VM_WARN_ON(cond)        MM_BUG_ON_LEVEL(2, cond)
#define BUG_ON(cond)            do { if (unlikely(cond)) mm_bug(__FILE__, __LINE__, #cond); } while (0)

#if defined(__SANITIZE_THREAD__)
#define MM_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MM_TSAN 1
#endif
#endif
#ifndef MM_TSAN
#define MM_TSAN 0
#endif

/*
 * __data_racy: a function whose lockless reads of lock-protected data are
 * racy by design (the kernel's data_race(): watermark checks read free lists
 * and counters without zone->lock).  TSan does not instrument it.
 */
#if MM_TSAN
#define __data_racy __attribute__((no_sanitize("thread"), __noinline__))
#else
#define __data_racy
#endif

/*
 * __mm_checker: a checker function that lives next to the code it checks
 * (pcp_check in pcp.c).  It is the oracle, not code under test: fuzzing
 * builds leave it out of coverage, so its loops neither slow the engine
 * down nor count as progress (cmake/fuzz.cmake does the same for check/).
 * The libFuzzer builds with ASan leave the oracle out of ASan as well
 * (MM_ORACLE_NO_ASAN, set by cmake/fuzz.cmake).
 */
#if defined(__clang__) && defined(MM_ORACLE_NO_ASAN)
#define __mm_checker __attribute__((no_sanitize("coverage", "address")))   /* cmake/fuzz.cmake */
#elif defined(__clang__)
#define __mm_checker __attribute__((no_sanitize("coverage")))
#else
#define __mm_checker
#endif

/*
 * __mm_plumbing: the model's own bookkeeping whose path depends on what
 * the process did before, not on the input (memmap.c's kept mappings).
 * Fuzzing builds leave it out of coverage, so an input runs the same edges
 * whatever ran before it - AFL++'s 100% stability (tests/fuzz_stability.c,
 * built with gcc, checks).
 */
#if defined(__clang__)
#define __mm_plumbing __attribute__((no_sanitize("coverage")))
#elif defined(__GNUC__) && __GNUC__ >= 12
#define __mm_plumbing __attribute__((no_sanitize_coverage))
#else
#define __mm_plumbing
#endif

/* ASan manual poisoning as KASAN: no-ops outside ASan builds. */
#if defined(__SANITIZE_ADDRESS__)
#define MM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MM_ASAN 1
#endif
#endif
#ifdef MM_ASAN
#include <sanitizer/asan_interface.h>
#define kasan_poison(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define kasan_unpoison(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#define __no_sanitize_address __attribute__((no_sanitize("address")))
#else
#define kasan_poison(p, n)   ((void)(p), (void)(n))
#define kasan_unpoison(p, n) ((void)(p), (void)(n))
#define __no_sanitize_address
#endif

#endif /* MM_DEBUG_H */

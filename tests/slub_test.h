/* SPDX-License-Identifier: MIT */
/*
 * slub_test.h - what the SLUB tests share: ASAN_BUILD (1 in an ASan
 * build: the layout has KASAN red zones, some kernel cases are compiled
 * out as in slub_kunit.c) and new_mm(), an instance with reports counted
 * quietly and SLUB options applied.
 */
#ifndef MM_SLUB_TEST_H
#define MM_SLUB_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mm/mm.h"
#include "mm/slab.h"

#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_BUILD 1
#endif
#endif
#ifndef ASAN_BUILD
#define ASAN_BUILD 0
#endif

/*
 * The default config, quiet reports, then mm_slub_configure(@options) if
 * given; on failure the reason on stderr and @die(@status) (exit, or _exit
 * in a forked child).
 */
static inline struct mm *new_mm_or(const char *options, void (*die)(int), int status)
{
	struct mm_config c;
	char err[256];
	struct mm *mm;

	mm_config_default(&c);
	c.quiet = true;
	mm = mm_create(&c, err, sizeof(err));
	if (!mm) {
		fprintf(stderr, "mm_create: %s\n", err);
		die(status);
	}
	if (options && mm_slub_configure(mm, options, err, sizeof(err))) {
		fprintf(stderr, "mm_slub_configure: %s\n", err);
		die(status);
	}
	return mm;
}

static inline struct mm *new_mm(const char *options)
{
	return new_mm_or(options, exit, 1);
}

/* In a forked child: the default instance with its reports printed (not quiet); _exit(2) if it cannot be made. */
static inline struct mm *new_loud_mm_child(void)
{
	struct mm_config c;
	char err[256];
	mm_config_default(&c);
	c.quiet = false;
	struct mm *mm = mm_create(&c, err, sizeof(err));
	if (!mm)
		_exit(2);
	return mm;
}

#endif /* MM_SLUB_TEST_H */

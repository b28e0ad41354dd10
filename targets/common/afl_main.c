/* SPDX-License-Identifier: MIT */
/*
 * afl_main.c - main() of the AFL++ build (MM_ENGINE=afl, compiled by
 * afl-clang-fast): persistent mode with shared-memory test cases.  The
 * instance and the shadow are reused across iterations; the harness's
 * teardown proves each input left the instance as it found it, so
 * persistent mode is stable.  Given files or directories on the command
 * line (no AFL++ around), it replays them like the replay build.
 */
#include <string.h>
#include <unistd.h>

#include "harness.h"

#ifndef __AFL_FUZZ_TESTCASE_LEN
/* Not compiled by afl-clang-fast: read stdin once, so the file still builds. */
static unsigned char afl_fallback_buf[1 << 20];
static ssize_t afl_fallback_len;
#define __AFL_FUZZ_INIT() void afl_fuzz_init_unused(void)
#define __AFL_INIT() ((void)0)
#define __AFL_FUZZ_TESTCASE_BUF afl_fallback_buf
#define __AFL_FUZZ_TESTCASE_LEN afl_fallback_len
#define __AFL_LOOP(n) (afl_fallback_len = read(0, afl_fallback_buf, sizeof(afl_fallback_buf)), \
		       afl_fallback_len > 0 && !afl_fallback_once++)
static int afl_fallback_once;
#endif
#ifndef __AFL_COVERAGE
#define __AFL_COVERAGE() void afl_coverage_unused(void)
#define __AFL_COVERAGE_START_OFF() void afl_coverage_start_off_unused(void)
#define __AFL_COVERAGE_ON() ((void)0)
#define __AFL_COVERAGE_OFF() ((void)0)
#endif

__AFL_FUZZ_INIT();
/*
 * Selective coverage: only what an input runs (mf_run_input) is recorded,
 * not this loop - whose back edge the first input of every forked child
 * does not take and the others do, which AFL++ counted as instability.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"     /* AFL++ 4.04c's macro declares f() */
__AFL_COVERAGE();
#pragma GCC diagnostic pop
__AFL_COVERAGE_START_OFF();

int main(int argc, char **argv)
{
	mf_main_options(mf_the_target, &argc, &argv);
	if (argc > 1)
		return mf_replay_main(mf_the_target, argc, argv);

	/*
	 * Every instance the target can use, created before the fork server
	 * starts: inputs never run mm_create, so their coverage does not
	 * depend on which inputs came before (stability).
	 */
	mf_instances_warm(mf_the_target);
	/* Deferred fork server: everything above runs once. */
	__AFL_INIT();
	/*
	 * Off before any branch of the child runs: START_OFF alone left what
	 * the first pass ran before its __AFL_COVERAGE_ON() recorded.
	 */
	__AFL_COVERAGE_OFF();
	unsigned char *buf = __AFL_FUZZ_TESTCASE_BUF;
	while (__AFL_LOOP(100000)) {
		size_t len = (size_t)__AFL_FUZZ_TESTCASE_LEN;
		__AFL_COVERAGE_ON();
		mf_run_input(mf_the_target, buf, len);
		__AFL_COVERAGE_OFF();
	}
	return 0;
}

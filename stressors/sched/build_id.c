/* SPDX-License-Identifier: MIT */
/*
 * build_id.c - the build id that sched_build_id() (artifact.c) names in
 * failure artifacts, grade reports and bench_sched's header, with the
 * source revision in it: the last commit that changed the sources,
 * SCHED_GIT_DESCRIBE, set at configure time by CMakeLists.txt.
 *
 * A file of its own, outside the library mmsched: the stressor driver, the
 * sched tests and bench_sched link it; fuzz_sched (and the builds that
 * compile the scheduler in through sched_all.c) do not, and say "unknown".
 * So a commit leaves fuzz_sched byte-identical unless it changes what the
 * binary runs, and bench/fuzz_nofp.py's per-binary execution count goes on.
 */
#include "sched_int.h"

#ifndef SCHED_GIT_DESCRIBE
#define SCHED_GIT_DESCRIBE "unknown"
#endif

const char sched_build_id_linked[] = SCHED_BUILD_ID(SCHED_GIT_DESCRIBE);

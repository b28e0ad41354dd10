/* SPDX-License-Identifier: MIT */
/*
 * sched_all.c - the deterministic scheduler as one translation unit, for
 * builds that compile a fuzz target's source alone with the allocator and
 * the harness (oss-fuzz/build.sh, the AFL++ CMPLOG variant): the target
 * includes this file instead of linking the mmsched library.  The CMake
 * build links mmsched and never compiles this.  grade.c (sched_explore,
 * sched_grade) is left out: no target needs it.
 */
#include "sched.c"
#include "run.c"
#include "policy.c"
#include "trace.c"
#include "artifact.c"
#include "fiber.c"
#include "sched_os.c"
#include "switch_x86_64.c"

# fuzz_inject_in_ops (tests/inject_in_ops.sh): the pcp and bulk targets
# inject interrupts and migrations inside their ops only, never in the
# harness's per-op mm_check, so an input injects the same at every check
# level (MMFUZZ_CHECK_LEVEL 0, 2 and 3 replay to the same trace) and the
# check after an `inject` op runs no handler.  Every replay build (MM_ENGINE
# none) without an injected bug and with MM_TEST_HOOKS (injections land at
# preemption points, which a build without them does not have); a second.
if(MM_TEST_HOOKS)
  mf_replay_script_test(fuzz_inject_in_ops inject_in_ops.sh 300 $<TARGET_FILE:fuzz_pcp> $<TARGET_FILE:fuzz_bulk>)
endif()

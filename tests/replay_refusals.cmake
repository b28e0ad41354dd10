# fuzz_replay_refusals (tests/replay_refusals.sh): the standalone replay main
# (targets/common/cli.c) refuses a FIFO and a device before opening them,
# says "no inputs to replay" (exit 2) for directories without inputs, and
# keeps its exit statuses 0 / 1 / 2 for a clean, partly and wholly unreadable
# replay.  Every replay build (MM_ENGINE none), sanitizers included: UBSan
# is what sees a qsort() of no names given NULL.  Seconds.
find_program(MF_RR_BASH bash)
if(MM_ENGINE STREQUAL "none" AND MM_INJECT STREQUAL "" AND MF_RR_BASH)
  add_test(NAME fuzz_replay_refusals
           COMMAND ${MF_RR_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/replay_refusals.sh $<TARGET_FILE:fuzz_buddy>
                   ${CMAKE_CURRENT_BINARY_DIR}/replay-refusals)
  set_tests_properties(fuzz_replay_refusals PROPERTIES TIMEOUT 300)
endif()

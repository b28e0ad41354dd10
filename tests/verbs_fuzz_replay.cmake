# ./mmfuzz fuzz: the replay of a campaign's corpus without sanitizers
# (tests/verbs/fuzz_replay.sh): fuzz_replay_clean replays the slub seeds with
# this build's replay binary; fuzz_replay_finds drives the verb's loop with a
# stand-in binary that fails on some inputs.  Seconds; the gcc replay build
# (the debug preset) only, where fuzz_slub is the standalone replay.
find_program(MF_FR_BASH bash)
find_program(MF_FR_PYTHON3 python3)
if(MM_ENGINE STREQUAL "none" AND CMAKE_C_COMPILER_ID STREQUAL "GNU" AND MM_SANITIZE STREQUAL ""
   AND MM_INJECT STREQUAL "" AND MF_FR_BASH AND MF_FR_PYTHON3)
  add_test(NAME fuzz_replay_clean
           COMMAND ${MF_FR_BASH} ${PROJECT_SOURCE_DIR}/tests/verbs/fuzz_replay.sh clean ${PROJECT_SOURCE_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/verbs/fuzz-replay-clean ${PROJECT_BINARY_DIR})
  add_test(NAME fuzz_replay_finds
           COMMAND ${MF_FR_BASH} ${PROJECT_SOURCE_DIR}/tests/verbs/fuzz_replay.sh finds ${PROJECT_SOURCE_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/verbs/fuzz-replay-finds ${PROJECT_BINARY_DIR})
  set_tests_properties(fuzz_replay_clean fuzz_replay_finds PROPERTIES TIMEOUT 300)
endif()

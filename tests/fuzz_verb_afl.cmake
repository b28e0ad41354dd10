# ./mmfuzz fuzz --engine afl's campaign loop (tools/verbs/fuzz, run_afl):
# live progress over StatsD, coverage from the map size, the instances'
# totals and stability, driven through a stand-in afl-fuzz
# (tests/fuzz_verb_afl_test.py; about 8 s, no AFL++, no build).  Once per
# `./mmfuzz test`: in the gcc replay build (debug preset).
find_program(MF_AFLV_PYTHON3 python3)
if(MM_ENGINE STREQUAL "none" AND CMAKE_C_COMPILER_ID STREQUAL "GNU" AND MM_SANITIZE STREQUAL ""
   AND MM_INJECT STREQUAL "" AND MF_AFLV_PYTHON3)
  add_test(NAME fuzz_verb_afl
           COMMAND ${MF_AFLV_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/fuzz_verb_afl_test.py -v)
  set_tests_properties(fuzz_verb_afl PROPERTIES TIMEOUT 120
                       ENVIRONMENT "MMFUZZ_ROOT=${PROJECT_SOURCE_DIR}")
endif()

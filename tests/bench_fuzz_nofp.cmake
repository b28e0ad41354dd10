# bench/fuzz_nofp.py, the no-false-positives campaign runner (issue 5): its
# chunking, the totals that continue only for the same tree and build, the
# handling of findings, interrupts and the budget, and its refusals, driven
# through a stand-in libFuzzer (tests/bench_fuzz_nofp_test.py; about 10 s, no
# build).  Once per `./mmfuzz test`: in the gcc replay build (debug preset).
find_program(MF_NOFP_PYTHON3 python3)
if(MM_ENGINE STREQUAL "none" AND CMAKE_C_COMPILER_ID STREQUAL "GNU" AND MM_SANITIZE STREQUAL ""
   AND MM_INJECT STREQUAL "" AND MF_NOFP_PYTHON3)
  add_test(NAME bench_fuzz_nofp
           COMMAND ${MF_NOFP_PYTHON3} ${PROJECT_SOURCE_DIR}/tests/bench_fuzz_nofp_test.py -v)
  set_tests_properties(bench_fuzz_nofp PROPERTIES TIMEOUT 120
                       ENVIRONMENT "MMFUZZ_ROOT=${PROJECT_SOURCE_DIR}")
endif()

# ./mmfuzz run, the main job (tools/verbs/run, tools/campaign/; the checks
# are tools/campaign/check_run.py):
#   run_verb_args      bad arguments exit 2 with a message; --help is whole
#   run_verb_campaign  a 30 s campaign on the correct allocator exits 0 with a
#                      summary row for every fuzz target and stressor mode and
#                      the output layout; the same --out again gets DIR-1; a
#                      planted failure exits 1 and lists its rerun command;
#                      the default out/run/<UTC time> is never reused; SIGINT
#                      exits 130 and still writes and prints the summary.
#   run_verb_configure the build on a stand-in tree (a stand-in cmake, a few
#                      seconds): build/fuzz with a cache but no build.ninja (a
#                      failed configure's) is configured again - every later
#                      campaign failed in ninja - and such a build/stress-rel
#                      is not built in; the deterministic stressor is reported
#                      not built because it is not configured.
# The campaign builds build/fuzz (clang, the fuzz preset) and build/stress-rel
# when they are missing or stale - from scratch about 75 s on two cores (68 s
# the fuzz targets) - and runs alone (RUN_SERIAL: its stressors want the
# cores); about 60 s with the builds up to date.  Once per
# ./mmfuzz test: in the debug preset only (gcc, Debug, no sanitizer, no engine,
# no injection), as oss_fuzz_check_build in targets/CMakeLists.txt.
find_program(MF_RUN_CLANG clang)
find_program(MF_RUN_PYTHON3 python3)
if(CMAKE_BUILD_TYPE STREQUAL "Debug" AND CMAKE_C_COMPILER_ID STREQUAL "GNU" AND MM_SANITIZE STREQUAL ""
   AND MM_ENGINE STREQUAL "none" AND "${MM_INJECT}" STREQUAL "" AND MF_RUN_CLANG AND MF_RUN_PYTHON3)
  add_test(NAME run_verb_args COMMAND ${MF_RUN_PYTHON3} ${PROJECT_SOURCE_DIR}/tools/campaign/check_run.py args)
  set_tests_properties(run_verb_args PROPERTIES TIMEOUT 120)
  add_test(NAME run_verb_configure
           COMMAND ${MF_RUN_PYTHON3} ${PROJECT_SOURCE_DIR}/tools/campaign/check_run.py configure
                   --work ${CMAKE_CURRENT_BINARY_DIR}/run_verb_configure)
  set_tests_properties(run_verb_configure PROPERTIES TIMEOUT 120)
  add_test(NAME run_verb_campaign
           COMMAND ${MF_RUN_PYTHON3} ${PROJECT_SOURCE_DIR}/tools/campaign/check_run.py campaign
                   --work ${CMAKE_CURRENT_BINARY_DIR}/run_verb)
  set_tests_properties(run_verb_campaign PROPERTIES TIMEOUT 900 RUN_SERIAL TRUE)
endif()

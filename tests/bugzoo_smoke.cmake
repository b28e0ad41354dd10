# The bug-zoo smoke (issue 7, "CI and tests"): ./mmfuzz bugzoo --smoke.
#
#   bugzoo_smoke   every bug of ../shared/BUGZOO.md that the last full run
#                  (bench/results/bugzoo.json) detected is detected again by
#                  the detector that was fastest for it, one seed, a 10 s
#                  budget, and its reproducer fails on the injected build and
#                  passes on the correct one.  A bug the full run could not
#                  detect makes the smoke fail too (the list must stay 16/16).
#
# The cost is the builds: the correct allocator once per build kind the chosen
# detectors need (build/bugzoo-none: clang ASan; build/bugzoo-gcc-none: gcc
# debug, for the no-KASAN detectors), then per bug only the targets its
# detector needs, through tools/bugzoo/cc-reuse: a variant compiles its one to
# three injected files and copies every other object from the correct build.
# Measured on two shared cores: 3.5 minutes cold (a fresh clone; 48 s of it
# the correct builds), 5 seconds warm.  It runs alone
# (RUN_SERIAL: its builds want the cores) and once per ./mmfuzz test: in the
# debug preset only (gcc, Debug, no sanitizer, no engine, no injection), like
# oss_fuzz_check_build in targets/CMakeLists.txt.
find_program(MF_ZOO_CLANG clang)
find_program(MF_ZOO_PYTHON3 python3)
if(CMAKE_BUILD_TYPE STREQUAL "Debug" AND CMAKE_C_COMPILER_ID STREQUAL "GNU" AND MM_SANITIZE STREQUAL ""
   AND MM_ENGINE STREQUAL "none" AND "${MM_INJECT}" STREQUAL "" AND MF_ZOO_CLANG AND MF_ZOO_PYTHON3)
  add_test(NAME bugzoo_smoke
           COMMAND ${MF_ZOO_PYTHON3} ${PROJECT_SOURCE_DIR}/tools/verbs/bugzoo --smoke --budget 10
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(bugzoo_smoke PROPERTIES TIMEOUT 900 RUN_SERIAL TRUE)
endif()

# cmake/fuzz.cmake - fuzz targets from one source for every engine (STYLE.md rule 15).
#
#   add_fuzzer(NAME SOURCES file.c ...)
#
# builds the executable fuzz_NAME from the sources, the shared harness
# (targets/common) and the engine's main, chosen by MM_ENGINE:
#   none       targets/common/replay_main.c: replays files and directories
#              given on the command line (any compiler; what ctest runs)
#   libfuzzer  -fsanitize=fuzzer; the allocator is built with
#              -fsanitize=fuzzer-no-link so its coverage guides the fuzzer
#   afl        targets/common/afl_main.c: AFL++ persistent mode
#              (__AFL_LOOP, shared-memory test cases); needs afl-clang-fast.
#              Also fuzz_NAME.cmplog, everything built again with
#              AFL_LLVM_CMPLOG=1, for afl-fuzz -c.
# and registers the ctest fuzz_NAME_corpus, which replays corpus/NAME/ and
# corpus/regressions/NAME/ with the checker at level 3 after every op.
# In a replay build without sanitizers (the debug preset) also
# stability_NAME and its test fuzz_NAME_stability (tests/fuzz_stability.c):
# the target, harness and allocator built again with
# -fsanitize-coverage=trace-pc, every seed run after different inputs, the
# blocks it reaches compared - AFL++'s stability, without AFL++.

set(MF_ROOT ${PROJECT_SOURCE_DIR})
set(MF_COMMON ${MF_ROOT}/targets/common)
file(GLOB MF_HARNESS_SOURCES CONFIGURE_DEPENDS ${MF_COMMON}/*.c)
list(REMOVE_ITEM MF_HARNESS_SOURCES ${MF_COMMON}/replay_main.c ${MF_COMMON}/afl_main.c)
# The allocator's sources, for the per-file coverage flags (libFuzzer) and
# for the extra copies of the library (AFL++'s CMPLOG, the stability build).
file(GLOB_RECURSE MF_ALLOC_SOURCES CONFIGURE_DEPENDS ${MF_ROOT}/allocator/*.c)

if(MM_ENGINE STREQUAL "libfuzzer")
  if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "MM_ENGINE=libfuzzer needs clang (CMAKE_C_COMPILER=clang)")
  endif()
  set(MF_MAIN "")
  set(MF_COMPILE_FLAGS -fsanitize=fuzzer-no-link -fno-sanitize-coverage=trace-cmp)
  set(MF_LINK_FLAGS -fsanitize=fuzzer)
  # Coverage of the allocator itself is what guides the fuzzer - but not of
  # its checker (allocator/check/, SLUB's slab/invariants.c; pcp_check is
  # marked __mm_checker): the oracle's branches are no progress, and its
  # compare tracing would cost more than the allocator's own.
  #
  # Edge counters only, no compare tracing (-fno-sanitize-coverage=trace-cmp):
  # an input is an op program the decoder maps into ranges, so neither the
  # allocator nor a target's ops compare a value taken straight from input
  # bytes, and the trace callbacks on pfn and counter compares cost about
  # half of an input's CPU time under ASan.  Measured from the seeds, same
  # seed, both runs at once: fuzz_buddy 45 s, the same edge coverage (1088)
  # and 1.5x the exec/s without; fuzz_sched 60 s, 1646 edges without
  # against 1476 with.
  set(MF_ALLOC_COVERAGE ${MF_COMPILE_FLAGS})
  set(MF_ORACLE_RE "/allocator/check/|/allocator/slab/invariants.c")
  set(MF_ALLOC_COVERED ${MF_ALLOC_SOURCES})
  list(FILTER MF_ALLOC_COVERED EXCLUDE REGEX ${MF_ORACLE_RE})
  set_source_files_properties(${MF_ALLOC_COVERED} DIRECTORY ${MF_ROOT}/allocator
                              PROPERTIES COMPILE_OPTIONS "${MF_ALLOC_COVERAGE}")
  # Nor does ASan instrument the oracle: every load of the checker's walks
  # (every struct page of every free block at the final level 3, the
  # signatures after every op) was shadow-checked, for no finding - the
  # checker validates a pointer before it follows it, and reads slab
  # objects through metadata_read_word(), which ASan skips anyway.  The
  # allocator, the targets and the shadow model (whose pattern fill is what
  # touches a page the allocator wrongly handed out) keep ASan; UBSan stays
  # on everywhere.  pcp_check() in pcp.c follows through __mm_checker
  # (debug.h, MM_ORACLE_NO_ASAN).
  if(MM_SANITIZE MATCHES "address")
    set(MF_ORACLE ${MF_ALLOC_SOURCES})
    list(FILTER MF_ORACLE INCLUDE REGEX ${MF_ORACLE_RE})
    set_source_files_properties(${MF_ORACLE} DIRECTORY ${MF_ROOT}/allocator
                                PROPERTIES COMPILE_OPTIONS "-fno-sanitize=address")
    set_source_files_properties(${MF_ALLOC_COVERED} DIRECTORY ${MF_ROOT}/allocator
                                PROPERTIES COMPILE_DEFINITIONS "MM_ORACLE_NO_ASAN=1")
  endif()
elseif(MM_ENGINE STREQUAL "afl")
  if(NOT CMAKE_C_COMPILER MATCHES "afl-")
    message(FATAL_ERROR "MM_ENGINE=afl needs CMAKE_C_COMPILER=afl-clang-fast (Debian package afl++)")
  endif()
  set(MF_MAIN ${MF_COMMON}/afl_main.c)
  set(MF_COMPILE_FLAGS "")
  set(MF_LINK_FLAGS "")
  # The CMPLOG build of the allocator, for the fuzz_NAME.cmplog binaries.
  add_library(mmalloc_cmplog STATIC ${MF_ALLOC_SOURCES})
  target_include_directories(mmalloc_cmplog PUBLIC ${MF_ROOT}/allocator/include ${MF_ROOT}/allocator)
  target_link_libraries(mmalloc_cmplog PUBLIC Threads::Threads)
  set_property(TARGET mmalloc_cmplog PROPERTY RULE_LAUNCH_COMPILE "env AFL_LLVM_CMPLOG=1")
elseif(MM_ENGINE STREQUAL "none")
  set(MF_MAIN ${MF_COMMON}/replay_main.c)
  set(MF_COMPILE_FLAGS "")
  set(MF_LINK_FLAGS "")
else()
  message(FATAL_ERROR "MM_ENGINE must be none, libfuzzer or afl (not '${MM_ENGINE}')")
endif()

# The harness (decoder, shadow, teardown) is not instrumented for coverage
# either: only the targets' ops and the allocator guide the fuzzer.
add_library(mmfuzz_harness STATIC ${MF_HARNESS_SOURCES})
target_include_directories(mmfuzz_harness PUBLIC ${MF_ROOT}/targets ${MF_COMMON})
target_link_libraries(mmfuzz_harness PUBLIC mmalloc_internal)

if(MM_ENGINE STREQUAL "afl")
  add_library(mmfuzz_harness_cmplog STATIC ${MF_HARNESS_SOURCES})
  target_include_directories(mmfuzz_harness_cmplog PUBLIC ${MF_ROOT}/targets ${MF_COMMON} ${MF_ROOT}/allocator)
  target_link_libraries(mmfuzz_harness_cmplog PUBLIC mmalloc_cmplog)
  set_property(TARGET mmfuzz_harness_cmplog PROPERTY RULE_LAUNCH_COMPILE "env AFL_LLVM_CMPLOG=1")
endif()

# The block-instrumented copies behind the fuzz_NAME_stability tests.
set(MF_STABILITY OFF)
if(MM_ENGINE STREQUAL "none" AND MM_SANITIZE STREQUAL "" AND NOT MM_COVERAGE AND NOT MM_INJECT)
  set(MF_STABILITY ON)
  set(MF_PCOV -fsanitize-coverage=trace-pc)
  add_library(mmalloc_pcov STATIC ${MF_ALLOC_SOURCES})
  target_include_directories(mmalloc_pcov PUBLIC ${MF_ROOT}/allocator/include ${MF_ROOT}/allocator)
  target_link_libraries(mmalloc_pcov PUBLIC Threads::Threads)
  if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
    target_link_libraries(mmalloc_pcov PUBLIC atomic)
  endif()
  target_compile_options(mmalloc_pcov PRIVATE ${MF_PCOV})
  add_library(mmfuzz_harness_pcov STATIC ${MF_HARNESS_SOURCES} ${MF_ROOT}/tests/fuzz_stability_canary.c)
  target_include_directories(mmfuzz_harness_pcov PUBLIC ${MF_ROOT}/targets ${MF_COMMON})
  target_link_libraries(mmfuzz_harness_pcov PUBLIC mmalloc_pcov)
  target_compile_options(mmfuzz_harness_pcov PRIVATE ${MF_PCOV})
  # The driver is not instrumented: its __sanitizer_cov_trace_pc() counts the others' blocks.
  add_library(mf_stability_driver STATIC ${MF_ROOT}/tests/fuzz_stability.c)
  target_link_libraries(mf_stability_driver PUBLIC mmfuzz_harness_pcov)
endif()

set(MF_ALL_FUZZERS "" CACHE INTERNAL "fuzz targets defined by add_fuzzer()")

function(add_fuzzer NAME)
  cmake_parse_arguments(F "" "" "SOURCES" ${ARGN})
  if(NOT F_SOURCES)
    message(FATAL_ERROR "add_fuzzer(${NAME}): no SOURCES")
  endif()
  add_executable(fuzz_${NAME} ${F_SOURCES} ${MF_MAIN})
  target_link_libraries(fuzz_${NAME} PRIVATE mmfuzz_harness mmalloc_internal)
  target_compile_options(fuzz_${NAME} PRIVATE ${MF_COMPILE_FLAGS})
  target_link_options(fuzz_${NAME} PRIVATE ${MF_LINK_FLAGS})
  if(MM_ENGINE STREQUAL "afl")
    add_executable(fuzz_${NAME}.cmplog ${F_SOURCES} ${MF_MAIN})
    target_link_libraries(fuzz_${NAME}.cmplog PRIVATE mmfuzz_harness_cmplog)
    set_property(TARGET fuzz_${NAME}.cmplog PROPERTY RULE_LAUNCH_COMPILE "env AFL_LLVM_CMPLOG=1")
  endif()

  set(dirs ${MF_ROOT}/corpus/${NAME})
  if(EXISTS ${MF_ROOT}/corpus/regressions/${NAME})
    list(APPEND dirs ${MF_ROOT}/corpus/regressions/${NAME})
  endif()
  set(inputs ${dirs})
  if(MM_ENGINE STREQUAL "libfuzzer")
    # libFuzzer reads directories recursively (src/*.txt would run as bytes): name the files.
    set(inputs "")
    foreach(d ${dirs})
      file(GLOB found LIST_DIRECTORIES false CONFIGURE_DEPENDS ${d}/*)
      list(APPEND inputs ${found})
    endforeach()
  endif()
  add_test(NAME fuzz_${NAME}_corpus COMMAND fuzz_${NAME} ${inputs})
  set_tests_properties(fuzz_${NAME}_corpus PROPERTIES TIMEOUT 300
                       ENVIRONMENT "MMFUZZ_CHECK_LEVEL=3;MMFUZZ_FINAL_LEVEL=3")
  # And with the checker off between ops (what `fuzz_exec`'s "off" setting
  # and MMFUZZ_CHECK_LEVEL=0 campaigns run): a check has side effects a
  # target must not lean on - it is a preemption point that delivers
  # pending interrupts, for one (corpus/regressions/slub/*-destroy-pending-irq).
  # The targets' own contract checks and the teardown's comparison with the
  # fresh instance still run.
  add_test(NAME fuzz_${NAME}_corpus_unchecked COMMAND fuzz_${NAME} ${inputs})
  set_tests_properties(fuzz_${NAME}_corpus_unchecked PROPERTIES TIMEOUT 300
                       ENVIRONMENT "MMFUZZ_CHECK_LEVEL=0;MMFUZZ_FINAL_LEVEL=0")
  # The committed seeds are exactly what their op text encodes to.
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_FOUND)
    add_test(NAME fuzz_${NAME}_seeds_match_text
             COMMAND ${Python3_EXECUTABLE} ${MF_ROOT}/tools/optext check ${NAME} --binary $<TARGET_FILE:fuzz_${NAME}>)
  endif()
  if(MF_STABILITY)
    add_executable(stability_${NAME} ${F_SOURCES})
    target_link_libraries(stability_${NAME} PRIVATE mf_stability_driver mmfuzz_harness_pcov)
    target_compile_options(stability_${NAME} PRIVATE ${MF_PCOV})
    add_test(NAME fuzz_${NAME}_stability COMMAND stability_${NAME} ${dirs})
    set_tests_properties(fuzz_${NAME}_stability PROPERTIES TIMEOUT 300)
  endif()
  set(MF_ALL_FUZZERS ${MF_ALL_FUZZERS} ${NAME} CACHE INTERNAL "")
endfunction()

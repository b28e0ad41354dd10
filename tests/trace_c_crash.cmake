# trace_c_crash: a run that crashes still leaves a complete C reproducer.
#
# fuzz_buddy --c OUT.c runs corpus/buddy/basic with MMFUZZ_CRASH_AT_OP=2
# (the harness raises SIGSEGV right after op [2]); then:
#   - the process dies of SIGSEGV (the handler that finishes the C file
#     raises the signal again: the exit status is the crash's);
#   - OUT.c names the signal at op [2], ends its main() and compiles with
#     -Wall -Wextra -Werror against this build's libmmalloc.a;
#   - it runs, exit 0, saying the crash did not reproduce (this allocator
#     does not crash there).
# Without the handler (targets/common/cgen.c) the file stops mid-op and
# does not compile.
#
# And a crash inside an allocator call: the C file makes that call too.
# fuzz_pcp of the bug-zoo variant pcp-bulk-count-unclamped (built once,
# in trace-c-crash-zoo) on "pcp_update high=2 batch=31; alloc_many n=40;
# free_many n=40" aborts in __free_pages (free_pcppages_bulk's bounded loop,
# T1); its C file must end op [2] with that __free_pages call, abort the
# same way against the variant's library, and exit 0 ("did not
# reproduce") against this build's.  (Until 2026-12-06 the C file left out
# the call the run died in, and exited 0 against the variant too.)
# Debug preset only, like trace_c; about 2 s (25 s the first time: the
# variant builds).
if(NOT CMAKE_SCRIPT_MODE_FILE)
  if(MM_TEST_HOOKS AND CMAKE_BUILD_TYPE STREQUAL "Debug" AND CMAKE_C_COMPILER_ID STREQUAL "GNU"
     AND MM_SANITIZE STREQUAL "" AND MM_ENGINE STREQUAL "none" AND "${MM_INJECT}" STREQUAL "")
    add_test(NAME trace_c_crash
             COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/trace-c-crash
                     -DCC=${CMAKE_C_COMPILER} -DLIB=$<TARGET_FILE:mmalloc> -DFUZZ=$<TARGET_FILE:fuzz_buddy>
                     -DREF=${CMAKE_BINARY_DIR} -DFLAGS=${CMAKE_C_FLAGS_DEBUG} -DDEBUG_LEVEL=${MM_DEBUG}
                     -DWERROR=${MM_WERROR}
                     -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(trace_c_crash PROPERTIES PASS_REGULAR_EXPRESSION "TRACE-C-CRASH-OK" TIMEOUT 120)
  endif()
  return()
endif()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
set(out ${WORK}/crash.c)
set(ENV{MMFUZZ_CRASH_AT_OP} 2)
execute_process(COMMAND ${FUZZ} --c ${out} ${SRC}/corpus/buddy/basic
                RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
unset(ENV{MMFUZZ_CRASH_AT_OP})
if(NOT rc MATCHES "Segmentation")
  message(FATAL_ERROR "fuzz_buddy with MMFUZZ_CRASH_AT_OP=2 should die of SIGSEGV, got '${rc}'\n${e}")
endif()
if(NOT EXISTS ${out})
  message(FATAL_ERROR "no C file after the crash\n${e}")
endif()
file(READ ${out} c)
if(NOT c MATCHES "died of signal 11 \\([^)]*\\) in this op")
  message(FATAL_ERROR "the C file does not name the signal:\n${c}")
endif()
if(NOT c MATCHES "/\\* \\[2\\] [^\n]*\n.*died of signal" OR c MATCHES "/\\* \\[3\\] [a-z]")
  message(FATAL_ERROR "the C file should end at op [2]:\n${c}")
endif()
if(NOT c MATCHES "return 0;\n}\n$")
  message(FATAL_ERROR "main() of the C file is not closed")
endif()
execute_process(COMMAND ${CC} -std=gnu11 -Wall -Wextra -Werror -I${SRC}/allocator/include ${out} ${LIB}
                        -lpthread -latomic -o ${WORK}/crash
                RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the C file of the crashed run does not compile:\n${e}")
endif()
execute_process(COMMAND ${WORK}/crash RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
if(NOT rc EQUAL 0 OR NOT e MATCHES "the violation the fuzz run saw \\(crash\\) did not reproduce here")
  message(FATAL_ERROR "the reproducer should run to its end and say the crash did not reproduce: rc ${rc}\n${o}\n${e}")
endif()

# ---------------------------------------------------------------- a crash inside an allocator call
include(${SRC}/tools/bugzoo/variant.cmake)
zoo_variant(pcp-bulk-count-unclamped ${WORK}-zoo mmalloc fuzz_pcp)
set(out ${WORK}/inflight.c)
file(WRITE ${WORK}/inflight.txt "setup config=default cpus=2 prefetch=0\npcp_update high=2 batch=31\n"
                                "alloc_many n=40 order=0 gfp=GFP_KERNEL\nfree_many n=40 idx=0\n")
execute_process(COMMAND ${WORK}-zoo/targets/fuzz_pcp --c ${out} ${WORK}/inflight.txt
                RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e TIMEOUT 60)
if(rc EQUAL 0 OR NOT e MATCHES "bounded loop exceeded in free_pcppages_bulk" OR NOT EXISTS ${out})
  message(FATAL_ERROR "fuzz_pcp of pcp-bulk-count-unclamped should abort in free_pcppages_bulk, got '${rc}'\n${e}")
endif()
file(READ ${out} c)
if(NOT c MATCHES "/\\* \\[2\\] free_many[^\n]*\n.*\n\t__free_pages\\(mm, p[0-9]+, 0\\);   /\\* the call in flight when the fuzz run stopped \\*/\n\t/\\* The fuzz run stopped here: crash: the fuzz run died of signal 6")
  message(FATAL_ERROR "the C file should end op [2] with the __free_pages call the run died in:\n${c}")
endif()
foreach(x "zoo:${WORK}-zoo/allocator/libmmalloc.a" "ref:${LIB}")
  string(REPLACE ":" ";" x "${x}")
  list(GET x 0 name)
  list(GET x 1 lib)
  execute_process(COMMAND ${CC} -std=gnu11 -Wall -Wextra -Werror -I${SRC}/allocator/include ${out} ${lib}
                          -lpthread -latomic -o ${WORK}/inflight-${name}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the C file of the crashed run does not compile against ${lib}:\n${e}")
  endif()
  execute_process(COMMAND ${WORK}/inflight-${name} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE e TIMEOUT 60)
  set(${name}_rc "${rc}")
  set(${name}_err "${e}")
endforeach()
if(zoo_rc EQUAL 0 OR NOT zoo_err MATCHES "bounded loop exceeded in free_pcppages_bulk")
  message(FATAL_ERROR "against the variant the C file should abort in free_pcppages_bulk: rc '${zoo_rc}'\n${zoo_err}")
endif()
if(NOT ref_rc EQUAL 0 OR NOT ref_err MATCHES "\\(crash\\) did not reproduce here")
  message(FATAL_ERROR "against this library the C file should run to its end: rc '${ref_rc}'\n${ref_err}")
endif()
message(STATUS "a crash in __free_pages (pcp-bulk-count-unclamped): the C file makes the call and aborts the same way")
message("TRACE-C-CRASH-OK")

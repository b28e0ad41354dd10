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
# does not compile.  Debug preset only, like trace_c; about 2 s.
if(NOT CMAKE_SCRIPT_MODE_FILE)
  if(MM_TEST_HOOKS AND CMAKE_BUILD_TYPE STREQUAL "Debug" AND CMAKE_C_COMPILER_ID STREQUAL "GNU"
     AND MM_SANITIZE STREQUAL "" AND MM_ENGINE STREQUAL "none" AND "${MM_INJECT}" STREQUAL "")
    add_test(NAME trace_c_crash
             COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/trace-c-crash
                     -DCC=${CMAKE_C_COMPILER} -DLIB=$<TARGET_FILE:mmalloc> -DFUZZ=$<TARGET_FILE:fuzz_buddy>
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
message("TRACE-C-CRASH-OK")

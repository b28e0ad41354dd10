# The helpers of the C-reproducer tests (tests/trace_c.cmake,
# tests/trace_c_cases.cmake), run in script mode (cmake -P).  Not a test
# itself: tests/CMakeLists.txt registers tests/*.cmake only.
#
# The caller sets: cflags (the compile line's flags), WORK, and optionally
# CLANG (clang: every C file must also pass clang -fsyntax-only with cflags)
# and trace_c_timeout (seconds a C file may run; default 60).

# write(T INPUT OUT [EXPECT_FAIL]): fuzz_T --c OUT INPUT (the binary in
# FUZZ_T), which must exit 0 (non-zero with EXPECT_FAIL) and leave OUT; its
# stderr in ${T}_err and write_err.
function(write t input out)
  file(REMOVE ${out})
  execute_process(COMMAND ${FUZZ_${t}} --c ${out} ${input} RESULT_VARIABLE rc OUTPUT_VARIABLE o ERROR_VARIABLE err)
  if((rc AND NOT ARGN) OR (NOT rc AND ARGN) OR NOT EXISTS ${out})
    message(FATAL_ERROR "fuzz_${t} --c ${out} ${input}: exit ${rc}\n${o}\n${err}")
  endif()
  set(${t}_err "${err}" PARENT_SCOPE)
  set(write_err "${err}" PARENT_SCOPE)
endfunction()

# build_run(C LIB STATUS [NOCLANG] [MATCH re]): compile C against LIB
# warning-free (and with clang, unless NOCLANG), run it, require STATUS
# (and re on its output).
function(build_run c lib status)
  cmake_parse_arguments(PARSE_ARGV 3 B "NOCLANG" "MATCH" "")
  get_filename_component(exe ${c} NAME_WE)
  get_filename_component(libdir ${lib} DIRECTORY)
  string(MD5 tag ${libdir})
  set(exe ${WORK}/${exe}-${tag})
  execute_process(COMMAND ${CC} ${cflags} ${c} ${lib} -lpthread -latomic -o ${exe}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc)
    message(FATAL_ERROR "${c} does not compile warning-free against ${lib}:\n${out}")
  endif()
  if(CLANG AND NOT B_NOCLANG)
    execute_process(COMMAND ${CLANG} ${cflags} -fsyntax-only ${c} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(rc)
      message(FATAL_ERROR "${c} does not compile warning-free with clang:\n${out}")
    endif()
  endif()
  if(NOT trace_c_timeout)
    set(trace_c_timeout 60)
  endif()
  execute_process(COMMAND ${exe} RESULT_VARIABLE rc OUTPUT_VARIABLE err ERROR_VARIABLE err TIMEOUT ${trace_c_timeout})
  if(NOT rc STREQUAL status)
    message(FATAL_ERROR "${c} against ${lib}: exit ${rc}, want ${status}\n${err}")
  endif()
  if(B_MATCH AND NOT err MATCHES "${B_MATCH}")
    message(FATAL_ERROR "${c} against ${lib}: output does not match '${B_MATCH}':\n${err}")
  endif()
endfunction()

# tools/bugzoo/variant.cmake - for test scripts run as `cmake -P` that need
# a bug-zoo variant of the build they test (tests/zoo_tid_contract.cmake,
# tests/trace_c.cmake).  The script's -D variables:
#   SRC          the source tree        REF          the build it tests
#   CC, FLAGS    its compiler and CMAKE_C_FLAGS_DEBUG
#   DEBUG_LEVEL  its MM_DEBUG           WERROR       its MM_WERROR (default OFF)
#
#   zoo_variant(BUG DIR TARGET...)
# configures DIR once (gcc Debug like REF, test hooks on, MM_INJECT=BUG,
# tools/bugzoo/cc-reuse copying every object without an MM_INJECT block from
# REF, so a variant compiles its injected files and links) and builds the
# targets; a failure ends the script with the configure or build log.
function(zoo_variant bug dir)
  if(NOT DEFINED WERROR)
    set(WERROR OFF)
  endif()
  # Configured is a cache and build.ninja: a failed configure leaves the cache alone, and every
  # later build then failed.
  if(NOT EXISTS ${dir}/CMakeCache.txt OR NOT EXISTS ${dir}/build.ninja)
    execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${dir} -G Ninja -DCMAKE_C_COMPILER=${CC}
                            -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_C_FLAGS_DEBUG=${FLAGS}" -DMM_DEBUG=${DEBUG_LEVEL}
                            -DMM_TEST_HOOKS=ON -DMM_WERROR=${WERROR} -DMM_SANITIZE= -DMM_ENGINE=none -DMM_INJECT=${bug}
                            "-DCMAKE_C_COMPILER_LAUNCHER=${SRC}/tools/bugzoo/cc-reuse;${REF}"
                    RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
    if(rc)
      message(FATAL_ERROR "configuring ${dir} failed:\n${log}")
    endif()
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${dir} --target ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE log ERROR_VARIABLE log)
  if(rc)
    message(FATAL_ERROR "building ${dir} failed:\n${log}")
  endif()
endfunction()

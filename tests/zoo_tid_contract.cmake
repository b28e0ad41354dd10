# The tid contract both stressors check (stressors/sched/tidwatch.h: at every
# preemption point with interrupts enabled and between ops, the vCPU's
# {freelist, tid} is a committed state and a non-empty cpu freelist starts in
# the cpu slab) against the two bug-zoo injections it is there for:
#
#   zoo_tid_contract   builds build/.../zoo-tid/<id> for slub-bulk-no-tid-bump
#                      and slub-tid-cpu-mismatch (gcc debug, like this build:
#                      tools/bugzoo/cc-reuse copies every object without an
#                      MM_INJECT block from this build, so a variant compiles
#                      one file and links), then:
#     - deterministic engine, bulk mode, 60 runs per policy of seed 1: the
#       injected build fails some runs with the contract's own message (T1
#       for the missing tid bump, the vCPU's S1 for the tid/cpu mismatch),
#       this build fails none of the same runs, and the missing tid bump
#       with --no-tid-check fails none either (so the check is what finds it);
#     - free-running stressor (bulk mode for the missing bump, slub mode for
#       the mismatch, --time 20, stopping at the first failure): FAILURE with
#       the same words.
# Measured on two shared cores: 12 s the first time (two configures, two
# compiles, links), 2 s after.  In the debug preset only (gcc, Debug, no sanitizer, no engine,
# no injection), like bugzoo_smoke.
#
# The same file is the test's script (cmake -P, CMAKE_SCRIPT_MODE_FILE set).
if(NOT CMAKE_SCRIPT_MODE_FILE)
  if(MM_TEST_HOOKS AND CMAKE_BUILD_TYPE STREQUAL "Debug" AND CMAKE_C_COMPILER_ID STREQUAL "GNU"
     AND MM_SANITIZE STREQUAL "" AND MM_ENGINE STREQUAL "none" AND "${MM_INJECT}" STREQUAL "")
    add_test(NAME zoo_tid_contract
             COMMAND ${CMAKE_COMMAND} -DSRC=${PROJECT_SOURCE_DIR} -DREF=${CMAKE_BINARY_DIR}
                     -DWORK=${CMAKE_CURRENT_BINARY_DIR}/zoo-tid -DCC=${CMAKE_C_COMPILER}
                     -DFLAGS=${CMAKE_C_FLAGS_DEBUG} -DDEBUG_LEVEL=${MM_DEBUG}
                     -P ${CMAKE_CURRENT_LIST_FILE})
    set_tests_properties(zoo_tid_contract PROPERTIES
      PASS_REGULAR_EXPRESSION "TID-CONTRACT-OK" TIMEOUT 600 RUN_SERIAL TRUE)
  endif()
  return()
endif()

# ---------------------------------------------------------------- the script

include(${SRC}/tools/bugzoo/variant.cmake)
function(zoo_build bug out)
  zoo_variant(${bug} ${WORK}/${bug} mmfuzz-stress mmfuzz-sched-stress)
  set(${out} ${WORK}/${bug} PARENT_SCOPE)
endfunction()

# expect(WHAT STATUS s MATCH re... COMMAND cmd...): run cmd; fail unless it exits s and its output matches every re.
function(expect what)
  cmake_parse_arguments(PARSE_ARGV 1 E "" "STATUS" "MATCH;COMMAND")
  execute_process(COMMAND ${E_COMMAND} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(REPLACE ";" " " cmd "${E_COMMAND}")
  set(bad "")
  if(NOT rc STREQUAL E_STATUS)
    set(bad "exit status ${rc}, want ${E_STATUS}")
  endif()
  foreach(re ${E_MATCH})
    if(NOT out MATCHES "${re}")
      set(bad "${bad} output does not match '${re}'")
    endif()
  endforeach()
  if(bad)
    message(FATAL_ERROR "${what}: ${bad}\ncommand: ${cmd}\n${out}")
  endif()
  string(REGEX MATCH "all policies: [0-9]+ failures in [0-9]+ runs" line "${out}")
  if(NOT line)
    string(REGEX MATCH "FAILURE: [^\n]*" line "${out}")
  endif()
  message(STATUS "${what}: ${line}")
endfunction()

set(grade --deterministic --grade --runs 60 --policy all --seed 1)
set(fail_re "all policies: [1-9][0-9]* failures in 180 runs")
set(pass_re "all policies: 0 failures in 180 runs")
set(t1c "T1 violated: [^\n]* named freelist [^\n]* the freelist changed without a tid change")
set(s1v "S1 violated: [^\n]* is not in its cpu slab [^\n]*[(]at [a-z_ ]+[)]")

zoo_build(slub-bulk-no-tid-bump bump)
zoo_build(slub-tid-cpu-mismatch mism)
set(sched stressors/sched/mmfuzz-sched-stress)
set(free stressors/stress/mmfuzz-stress)

expect("missing tid bump, deterministic" STATUS 1 MATCH "${fail_re}" "first failure [^\n]*${t1c}"
       COMMAND ${bump}/${sched} bulk ${grade})
expect("missing tid bump, deterministic, --no-tid-check" STATUS 0 MATCH "${pass_re}"
       COMMAND ${bump}/${sched} bulk ${grade} --no-tid-check)
expect("tid/cpu mismatch, deterministic" STATUS 1 MATCH "${fail_re}" "first failure [^\n]*${s1v}"
       COMMAND ${mism}/${sched} bulk ${grade})
expect("correct build, deterministic" STATUS 0 MATCH "${pass_re}" COMMAND ${REF}/${sched} bulk ${grade})
expect("missing tid bump, free-running" STATUS 1 MATCH "FAILURE: [^\n]*${t1c}"
       COMMAND ${bump}/${free} bulk --time 20 --seed 1 --quiet --no-replay)
expect("tid/cpu mismatch, free-running" STATUS 1 MATCH "FAILURE: [^\n]*${s1v}"
       COMMAND ${mism}/${free} slub --time 20 --seed 1 --quiet --no-replay)
message("TID-CONTRACT-OK")

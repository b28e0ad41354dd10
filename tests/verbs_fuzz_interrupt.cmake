# ./mmfuzz fuzz stopped by SIGINT (tests/verbs/fuzz_interrupt.sh), and
# findings it used to lose (tests/verbs/fuzz_findings.sh): a
# stand-in tree and engine, so no fuzz build is needed; seconds.  The gcc
# debug preset only: the verb is the same under every build.
find_program(MF_FI_BASH bash)
find_program(MF_FI_PYTHON3 python3)
if(MM_ENGINE STREQUAL "none" AND CMAKE_C_COMPILER_ID STREQUAL "GNU" AND MM_SANITIZE STREQUAL ""
   AND MM_INJECT STREQUAL "" AND MF_FI_BASH AND MF_FI_PYTHON3)
  foreach(m verb engine fork)
    add_test(NAME fuzz_interrupt_${m}
             COMMAND ${MF_FI_BASH} ${PROJECT_SOURCE_DIR}/tests/verbs/fuzz_interrupt.sh ${m} ${PROJECT_SOURCE_DIR}
                     ${CMAKE_CURRENT_BINARY_DIR}/verbs/fuzz-interrupt-${m})
    set_tests_properties(fuzz_interrupt_${m} PROPERTIES TIMEOUT 120)
  endforeach()
  # Findings the verb used to lose: AFL++'s hangs, a libFuzzer that dies without an artifact
  # (also in fork mode), the replay's failures (a traceback); a --time 1 that ran nothing;
  # a Ctrl-C in the replay that went on and made a finding of the interrupt; fixed shares of
  # --time that every engine start-up overran, then equal shares of what was left that the overruns
  # shrank (the last target fuzzed 3 s where the first had 5).
  # An input of the corpus that crashes (set aside, fuzzing goes on); the build's deps check and a
  # failed configure's cache.
  foreach(m afl-hangs no-artifact fork-no-artifact time-one replay-fails replay-interrupt
          afl-missing time-share seed-crash build)
    string(REPLACE "-" "_" _n ${m})
    add_test(NAME fuzz_findings_${_n}
             COMMAND ${MF_FI_BASH} ${PROJECT_SOURCE_DIR}/tests/verbs/fuzz_findings.sh ${m} ${PROJECT_SOURCE_DIR}
                     ${CMAKE_CURRENT_BINARY_DIR}/verbs/fuzz-findings-${m})
    set_tests_properties(fuzz_findings_${_n} PROPERTIES TIMEOUT 120)
  endforeach()
endif()

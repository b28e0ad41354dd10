# fuzz_config_repeats (tests/config_repeats.sh): the config target builds a
# valid config once per input and only validates a create of the same
# config again; any changed field, or the next input, builds it again.
# Every replay build (MM_ENGINE none) without an injected bug.
find_program(MF_CR_BASH bash)
if(MM_ENGINE STREQUAL "none" AND MM_INJECT STREQUAL "" AND MF_CR_BASH)
  add_test(NAME fuzz_config_repeats
           COMMAND ${MF_CR_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/config_repeats.sh $<TARGET_FILE:fuzz_config>
                   ${CMAKE_CURRENT_BINARY_DIR}/config-repeats)
  set_tests_properties(fuzz_config_repeats PROPERTIES TIMEOUT 120)
endif()

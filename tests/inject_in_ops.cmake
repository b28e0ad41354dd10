# fuzz_inject_in_ops (tests/inject_in_ops.sh): the pcp and bulk targets
# inject interrupts and migrations inside their ops only, never in the
# harness's per-op mm_check, so an input injects the same at every check
# level (MMFUZZ_CHECK_LEVEL 0, 2 and 3 replay to the same trace) and the
# check after an `inject` op runs no handler.  Every replay build (MM_ENGINE
# none) without an injected bug; a second.
find_program(MF_IIO_BASH bash)
if(MM_ENGINE STREQUAL "none" AND MM_INJECT STREQUAL "" AND MF_IIO_BASH)
  add_test(NAME fuzz_inject_in_ops
           COMMAND ${MF_IIO_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/inject_in_ops.sh $<TARGET_FILE:fuzz_pcp>
                   $<TARGET_FILE:fuzz_bulk> ${CMAKE_CURRENT_BINARY_DIR}/inject-in-ops)
  set_tests_properties(fuzz_inject_in_ops PROPERTIES TIMEOUT 300)
endif()

# fuzz_<T>_roundtrip: `tools/optext roundtrip` on every seed and regression
# input of target T (the bytes and their src/*.txt op text) with this build's
# own fuzz_T: bytes -> text -> bytes -> text gives the same text (the
# decoder and encoder agree on the real op tables, gfp fixing and aliases,
# which tests/test_harness_decoder.c's synthetic table does not have).
# fuzz_T_seeds_match_text checks text -> bytes only.  A few seconds a target;
# in the replay builds without sanitizers (MM_ENGINE none, no injected bug:
# the debug preset in ./mmfuzz test) only: the encoder/decoder is the same
# code in every preset, the asan and tsan builds would take 4-6 times as
# long for nothing more (their fuzz_T_corpus tests run the decoder under the
# sanitizers), and the libFuzzer and AFL builds' mains are not the replay main.  Fails with exit 1 naming the file
# whose round trip is unstable, 2 when a file does not decode or encode.
find_package(Python3 COMPONENTS Interpreter QUIET)
if(MM_ENGINE STREQUAL "none" AND "${MM_INJECT}" STREQUAL "" AND "${MM_SANITIZE}" STREQUAL "" AND Python3_FOUND)
  file(STRINGS ${PROJECT_SOURCE_DIR}/targets/TARGETS _rt_lines)
  foreach(_rt_line ${_rt_lines})
    string(REGEX REPLACE "#.*" "" _rt_t "${_rt_line}")
    string(STRIP "${_rt_t}" _rt_t)
    if(_rt_t STREQUAL "")
      continue()
    endif()
    set(_rt_files "")
    foreach(_rt_d ${PROJECT_SOURCE_DIR}/corpus/${_rt_t} ${PROJECT_SOURCE_DIR}/corpus/regressions/${_rt_t})
      file(GLOB _rt_found LIST_DIRECTORIES false CONFIGURE_DEPENDS ${_rt_d}/* ${_rt_d}/src/*.txt)
      list(FILTER _rt_found EXCLUDE REGEX "/README\\.md$")
      list(APPEND _rt_files ${_rt_found})
    endforeach()
    add_test(NAME fuzz_${_rt_t}_roundtrip
             COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/tools/optext roundtrip ${_rt_t}
                     --binary $<TARGET_FILE:fuzz_${_rt_t}> ${_rt_files})
    set_tests_properties(fuzz_${_rt_t}_roundtrip PROPERTIES TIMEOUT 120)
  endforeach()
endif()

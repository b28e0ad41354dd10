# release_syntax (tests/release_syntax.py): every C file of the build,
# compiled again by clang as the clang-release preset compiles it (MM_DEBUG=0,
# no MM_TEST_HOOKS, -O2 -DNDEBUG, -Werror) with -fsyntax-only, so a warning
# only a build without the hooks sees fails the CI run.  In the debug preset
# only (gcc, no sanitizer, no engine, no injection): the CI presets all have
# the hooks, and one run is enough.
find_program(MF_CLANG clang)
if(CMAKE_C_COMPILER_ID STREQUAL "GNU" AND MM_SANITIZE STREQUAL "" AND MM_ENGINE STREQUAL "none"
   AND "${MM_INJECT}" STREQUAL "" AND CMAKE_EXPORT_COMPILE_COMMANDS AND MF_CLANG AND MF_PYTHON3)
  add_test(NAME release_syntax
           COMMAND ${MF_PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/release_syntax.py ${MF_CLANG}
                   ${CMAKE_BINARY_DIR}/compile_commands.json)
  set_tests_properties(release_syntax PROPERTIES TIMEOUT 600)
endif()

# tools/mutants.py, the mutation audit of the tests (`tools/mutants.py
# --help`): which lines of allocator/ it mutates and how, checked on small C
# texts (tests/mutants_test.py; no build, under a second).  The audit itself
# builds and runs the tests once per mutant, so it is a tool run by hand, not
# a ctest.  Once per `./mmfuzz test`: in the gcc replay build (debug preset).
mf_add_python_test(mutants_enumerate ${PROJECT_SOURCE_DIR}/tests/mutants_test.py 60)

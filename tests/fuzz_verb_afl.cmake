# ./mmfuzz fuzz --engine afl's campaign loop (tools/verbs/fuzz, run_afl):
# live progress over StatsD, coverage from the map size, the instances'
# totals and stability, driven through a stand-in afl-fuzz
# (tests/fuzz_verb_afl_test.py; about 21 s, no AFL++, no build).  Once per
# `./mmfuzz test`: in the gcc replay build (debug preset).
mf_add_python_test(fuzz_verb_afl ${PROJECT_SOURCE_DIR}/tests/fuzz_verb_afl_test.py 120)

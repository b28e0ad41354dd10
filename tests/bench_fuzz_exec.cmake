# bench/fuzz_exec.py, the fuzz-target throughput benchmark (issue 5): its
# rates come from a run without MMFUZZ_STATS and only the split of an input's
# CPU time from the run with it, checked through a stand-in libFuzzer
# (tests/bench_fuzz_exec_test.py; a second or two, no build).  Once per
# `./mmfuzz test`: in the gcc replay build (debug preset).
mf_add_python_test(bench_fuzz_exec ${PROJECT_SOURCE_DIR}/tests/bench_fuzz_exec_test.py 60)

# bench/fuzz_nofp.py, the no-false-positives campaign runner (issue 5): its
# chunking, the totals that continue only for the same tree and build, the
# handling of findings, interrupts and the budget, and its refusals, driven
# through a stand-in libFuzzer (tests/bench_fuzz_nofp_test.py; no build, about
# 70 s alone, most of it the stand-in's timed runs, 82 s in a CI run: a limit
# of 120 s was passed once beside other work, so it has the suite's usual
# 300).  Once per `./mmfuzz test`: in the gcc replay build (debug preset).
mf_add_python_test(bench_fuzz_nofp ${PROJECT_SOURCE_DIR}/tests/bench_fuzz_nofp_test.py 300)

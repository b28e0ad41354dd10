# ./mmfuzz fuzz, repro, minimize, coverage, trace (issue 5), bench, stress and bugzoo, scripts in tests/verbs/:
#
#  verbs_fuzz_usage         bad arguments (no or two targets, unknown target or
#                           engine, --time that is no number, 0 or nan, --jobs 0,
#                           --json without a value, into a missing directory or
#                           onto a directory, an --out that cannot be made, an
#                           unknown option, an option given twice, less than
#                           1 s a target, --json or --out under /proc, an
#                           MMFUZZ_REPLAY_DIR without the binaries): exit 2 and
#                           the message, before any build or campaign
#  verbs_minimize_usage     bad arguments (no target, unknown target, unreadable
#                           file, a directory, a device, bad --time (0, nan), -o FILE onto
#                           itself or into a missing directory or one that takes no
#                           file (/proc), an unknown --inject id, an empty --corpus,
#                           --corpus with --time): exit 2 and the message
#  verbs_minimize_injected  a crashing input shrinks and still fails the same
#                           way: tests/verbs/minimize-b2.txt (op text, 13 ops) on
#                           the bug-zoo variant buddy-merge-across-zones
#                           (libFuzzer build made by the verb's --inject in this
#                           build tree) fails B2; the
#                           minimized file is smaller, fails B2 when replayed
#                           directly, the original is unchanged, both op
#                           programs are printed; an input that passes there is
#                           "nothing to minimize" (exit 1, no file written).
#                           The correct allocator has no crashing input, so
#                           only an injected build can give one.
#  verbs_coverage_usage     bad arguments (also --fail-under nan or 150, --json
#                           into a missing directory, onto one or into one that
#                           takes no new file (/proc), an --out that
#                           cannot be made - before the build), and llvm-cov /
#                           llvm-profdata missing ($MMFUZZ_LLVM_COV pointing
#                           nowhere): exit 2 and the message
#  verbs_test_usage         ./mmfuzz test's bad arguments (--jobs 0 or abc, an
#                           unknown preset, --quick with --preset, -R without a
#                           value or empty, -R/--jobs/a preset given twice):
#                           exit 2 before any toolchain check or build
#  verbs_test_regex         ./mmfuzz test -R on a stand-in tree of two presets:
#                           a preset where no test matches runs none (it was
#                           one failure, exit 1); no match anywhere is one
#  verbs_frontdoor_usage    ./mmfuzz itself: help and its forms (help help too),
#                           unknown verbs, a path or a capital as a verb
#  verbs_trace_usage        ./mmfuzz trace's bad arguments (no FILE, unknown
#                           target, a missing file, a directory, --c without a
#                           name, --c/--encode into a missing directory or onto
#                           one, or onto FILE itself, given twice, --ops with a
#                           FILE or another option) and tools/optext's (also -o
#                           into a missing directory, onto one or onto the input,
#                           -o with another command than encode, encode of two
#                           files): exit 2 and
#                           the message, before any build; on a stand-in
#                           fuzz_a, an exit status of the binary (a --c file it
#                           cannot create) is exit 2, not 1 (a violation)
#  verbs_bench_usage        ./mmfuzz bench's bad arguments (an unknown benchmark,
#                           a bad name, an unknown option, --json into a missing
#                           directory, a script with a benchmark): exit 2 and
#                           the message, before build/release is configured
#  verbs_bench_standin      ./mmfuzz bench --no-build on a stand-in tree whose
#                           benchmarks write good, half, bad or no JSON, or
#                           take no --json: the good figures kept, the others
#                           named (exit 1), no file without figures, --json
#                           with an option for its file refused; a failed
#                           configure's leftovers (a cache, no build.ninja) in
#                           build/release (--no-build) and build/stress-rel
#                           (bench_sched) are configured again
#  verbs_stress_usage       ./mmfuzz stress's bad arguments (no MODE, an unknown
#                           MODE, also with --deterministic, --build-dir without
#                           a value, --json/--artifact into a missing directory
#                           or onto one, --replay of a device or a directory):
#                           exit 2 and the message, before any build; a
#                           --build-dir with a cache but no build.ninja (a
#                           failed configure's) is configured again (a stand-in
#                           cmake and stressor)
#  verbs_bench_scripts_usage  the scripts bench/sched_grade.py, fuzz_exec.py and
#                           stress_replay.py: bad arguments (counts < 1, a bad
#                           seed, --json into a missing directory, unknown bug,
#                           target or setting): exit 2 and the message at once
#  verbs_repro_usage        ./mmfuzz repro's bad arguments (no FILE, an unknown
#                           option or target, a missing file, a directory, a
#                           device, a --timeout that is no number of seconds):
#                           exit 2 and the message, before the build
#  verbs_repro_timeout      ./mmfuzz repro on a stand-in tree whose replay hangs
#                           and ignores SIGTERM: stopped at the bound (10 x the
#                           .options timeout, or --timeout S) with its children,
#                           exit 1 - it used to wait for ever; a build/asan
#                           with a cache but no build.ninja (a failed
#                           configure's) is configured again (a stand-in cmake)
#  verbs_bugzoo_usage       ./mmfuzz bugzoo's bad arguments (unknown option, a
#                           missing value, a budget that is no number, <= 0 or
#                           nan, --seeds/--jobs 0, an unknown id, --json into a
#                           missing directory or under /proc, --store with
#                           --smoke/--only, --only naming no id, an option twice,
#                           --list with another): exit 2 and the message, before
#                           any build or detector run
#  verbs_bugzoo_interrupt   SIGINT to ./mmfuzz bugzoo on a stand-in tree during
#                           the control run: the detector stopped, the table and
#                           --json ("interrupted") written, exit 130 (was a
#                           traceback, every result lost)
#  verbs_bugzoo_configure   a build dir with a cache but no build.ninja (a failed
#                           configure's) is configured again by the runner (a
#                           stand-in cmake) and by tools/bugzoo/variant.cmake's
#                           zoo_variant() (real cmake, a stand-in source tree) -
#                           every later build failed
#  verbs_coverage_buddy     the buddy target's corpora plus an extra TARGET=DIR
#                           corpus under the coverage preset (built in this build
#                           tree): a report line for allocator/page/buddy.c with a
#                           non-zero percentage, a TOTAL, JSON whose totals add up,
#                           an HTML report
#
# The two builds (libFuzzer+ASan fuzz_buddy, ~25 s on 2 cores; coverage
# fuzz_buddy, ~10 s) make these the expensive kind: like oss_fuzz_check_build,
# once per `./mmfuzz test` run, in the gcc replay build (the debug preset).
find_program(MF_VERBS_CLANG clang)
find_program(MF_VERBS_BASH bash)
if(MM_ENGINE STREQUAL "none" AND CMAKE_C_COMPILER_ID STREQUAL "GNU" AND MM_SANITIZE STREQUAL ""
   AND MM_INJECT STREQUAL "" AND MF_VERBS_CLANG AND MF_VERBS_BASH)
  set(_v ${PROJECT_SOURCE_DIR}/tests/verbs)
  set(_w ${CMAKE_CURRENT_BINARY_DIR}/verbs)
  add_test(NAME verbs_minimize_usage
           COMMAND ${MF_VERBS_BASH} ${_v}/minimize.sh usage ${PROJECT_SOURCE_DIR} ${_w}/minimize-usage)
  add_test(NAME verbs_minimize_injected
           COMMAND ${MF_VERBS_BASH} ${_v}/minimize.sh injected ${PROJECT_SOURCE_DIR} ${_w}/minimize-injected
                   ${_w}/build-fuzz-buddy-merge-across-zones)
  add_test(NAME verbs_coverage_usage
           COMMAND ${MF_VERBS_BASH} ${_v}/coverage.sh usage ${PROJECT_SOURCE_DIR} ${_w}/coverage-usage)
  add_test(NAME verbs_coverage_buddy
           COMMAND ${MF_VERBS_BASH} ${_v}/coverage.sh buddy ${PROJECT_SOURCE_DIR} ${_w}/coverage-buddy
                   ${_w}/build-coverage)
  add_test(NAME verbs_trace_usage
           COMMAND ${MF_VERBS_BASH} ${_v}/trace.sh usage ${PROJECT_SOURCE_DIR} ${_w}/trace-usage)
  add_test(NAME verbs_bench_usage
           COMMAND ${MF_VERBS_BASH} ${_v}/bench.sh usage ${PROJECT_SOURCE_DIR} ${_w}/bench-usage)
  add_test(NAME verbs_bench_standin
           COMMAND ${MF_VERBS_BASH} ${_v}/bench.sh standin ${PROJECT_SOURCE_DIR} ${_w}/bench-standin)
  add_test(NAME verbs_stress_usage
           COMMAND ${MF_VERBS_BASH} ${_v}/stress.sh usage ${PROJECT_SOURCE_DIR} ${_w}/stress-usage)
  add_test(NAME verbs_frontdoor_usage
           COMMAND ${MF_VERBS_BASH} ${_v}/frontdoor.sh usage ${PROJECT_SOURCE_DIR} ${_w}/frontdoor-usage)
  add_test(NAME verbs_test_usage
           COMMAND ${MF_VERBS_BASH} ${_v}/test.sh usage ${PROJECT_SOURCE_DIR} ${_w}/test-usage)
  add_test(NAME verbs_test_regex
           COMMAND ${MF_VERBS_BASH} ${_v}/test.sh regex ${PROJECT_SOURCE_DIR} ${_w}/test-regex)
  set_tests_properties(verbs_minimize_usage verbs_coverage_usage verbs_bench_usage
                       verbs_bench_standin verbs_stress_usage verbs_frontdoor_usage verbs_test_usage
                       verbs_test_regex PROPERTIES TIMEOUT 120)
  # About 60 Python starts of trace and optext: 50-80 s in .ci/run beside other work, and once past
  # 120 s at -j2 on a loaded machine.
  set_tests_properties(verbs_trace_usage PROPERTIES TIMEOUT 300)
  add_test(NAME verbs_fuzz_usage
           COMMAND ${MF_VERBS_BASH} ${_v}/fuzz.sh usage ${PROJECT_SOURCE_DIR} ${_w}/fuzz-usage)
  add_test(NAME verbs_bench_scripts_usage
           COMMAND ${MF_VERBS_BASH} ${_v}/bench_scripts.sh usage ${PROJECT_SOURCE_DIR} ${_w}/bench-scripts-usage)
  add_test(NAME verbs_repro_usage
           COMMAND ${MF_VERBS_BASH} ${_v}/repro.sh usage ${PROJECT_SOURCE_DIR} ${_w}/repro-usage)
  add_test(NAME verbs_repro_timeout
           COMMAND ${MF_VERBS_BASH} ${_v}/repro.sh timeout ${PROJECT_SOURCE_DIR} ${_w}/repro-timeout)
  set_tests_properties(verbs_repro_timeout PROPERTIES TIMEOUT 120)
  add_test(NAME verbs_bugzoo_usage
           COMMAND ${MF_VERBS_BASH} ${_v}/bugzoo.sh usage ${PROJECT_SOURCE_DIR} ${_w}/bugzoo-usage)
  add_test(NAME verbs_bugzoo_interrupt
           COMMAND ${MF_VERBS_BASH} ${_v}/bugzoo.sh interrupt ${PROJECT_SOURCE_DIR} ${_w}/bugzoo-interrupt)
  add_test(NAME verbs_bugzoo_configure
           COMMAND ${MF_VERBS_BASH} ${_v}/bugzoo.sh configure ${PROJECT_SOURCE_DIR} ${_w}/bugzoo-configure)
  set_tests_properties(verbs_bugzoo_interrupt verbs_bugzoo_configure PROPERTIES TIMEOUT 120)
  set_tests_properties(verbs_bugzoo_usage verbs_fuzz_usage verbs_bench_scripts_usage verbs_repro_usage
                       PROPERTIES TIMEOUT 300)
  set_tests_properties(verbs_minimize_injected verbs_coverage_buddy PROPERTIES TIMEOUT 600)
  # Each builds with the machine's cores: not both at once.
  set_tests_properties(verbs_minimize_injected verbs_coverage_buddy PROPERTIES RESOURCE_LOCK mmfuzz_verbs_build)
endif()

# Grading of the deterministic engine (issue 6, "Grading"): the code path
# that turns N runs per policy into detections, p, a 95% Wilson interval and
# runs to the first failure.  Grading a bug-zoo build is too slow for ctest
# (bench/sched_grade.py does it); these check the grading itself:
#
#  sched_grade_wilson   the interval at known points (0/100000, 5/10, 10/10)
#  sched_grade_planted  a planted lost update (--selftest race: read,
#                       preemption point, write of a shared counter) that
#                       only some interleavings expose: grading must count
#                       some failures but not all (0 < k < n), exit 1, write
#                       JSON, and the first failure's rerun command must fail
#                       again (the "first" column is a real run index)
#  sched_grade_clean    the correct allocator: every run of every policy passes
#
# mmfuzz-sched-stress is defined later (stressors/sched/); add_test resolves
# target names at generate time.
if(MM_TEST_HOOKS)
  add_test(NAME sched_grade_wilson
    COMMAND sh -c "set -e; \
a=$(\"$0\" --wilson 0 100000); b=$(\"$0\" --wilson 5 10); c=$(\"$0\" --wilson 10 10); echo \"$a\"; echo \"$b\"; echo \"$c\"; \
case \"$a\" in *'[0.000000, 0.000038]'*) ;; *) exit 1;; esac; \
case \"$b\" in *'[0.236590, 0.763410]'*) ;; *) exit 1;; esac; \
case \"$c\" in *'[0.722460, 1.000000]'*) ;; *) exit 1;; esac; echo WILSON-OK"
      $<TARGET_FILE:mmfuzz-sched-stress>)
  set_tests_properties(sched_grade_wilson PROPERTIES PASS_REGULAR_EXPRESSION "WILSON-OK" TIMEOUT 30)

  add_test(NAME sched_grade_planted
    COMMAND sh -c "bin=$0; json=$1; \
out=$(\"$bin\" slub --deterministic --grade --runs 200 --policy all --steps 8 --tasks 3 --selftest race --json \"$json\"); rc=$?; \
echo \"$out\"; [ $rc -eq 1 ] || { echo \"exit status $rc, expected 1\"; exit 1; }; \
tot=$(echo \"$out\" | sed -n 's/^grade: all policies: \\([0-9]*\\) failures in \\([0-9]*\\) runs.*/\\1 \\2/p'); \
set -- $tot; [ -n \"$1\" ] && [ \"$1\" -gt 0 ] && [ \"$1\" -lt \"$2\" ] || { echo \"want 0 < failures < runs, got '$tot'\"; exit 1; }; \
grep -q '\"ci95\"' \"$json\" && grep -q '\"runs_to_first_failure\": [0-9]' \"$json\" || { echo 'bad JSON'; exit 1; }; \
cmd=$(echo \"$out\" | sed -n 's/^ *rerun: .\\/mmfuzz stress //p' | head -n 1); [ -n \"$cmd\" ] || exit 1; \
echo \"rerun: $cmd\"; \"$bin\" $cmd --quiet | tail -n 1 | grep -qx FAILURE || { echo 'the first failure did not fail again'; exit 1; }; \
echo PLANTED-GRADED"
      $<TARGET_FILE:mmfuzz-sched-stress> ${CMAKE_CURRENT_BINARY_DIR}/sched_grade_planted.json)
  set_tests_properties(sched_grade_planted PROPERTIES PASS_REGULAR_EXPRESSION "PLANTED-GRADED" TIMEOUT 300)

  add_test(NAME sched_grade_clean
    COMMAND mmfuzz-sched-stress slub --deterministic --grade --runs 60 --policy all --steps 8)
  set_tests_properties(sched_grade_clean PROPERTIES
    PASS_REGULAR_EXPRESSION "all policies: 0 failures in 180 runs" TIMEOUT 300)
endif()

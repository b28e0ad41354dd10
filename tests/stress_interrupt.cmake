# Ctrl-C of the free-running stressor (stressors/stress/main.c, on_interrupt):
#   stress_interrupt       SIGINT two seconds into a 60 s run: the final checks
#                          run, the report prints, the last line is INTERRUPTED,
#                          exit 130, and --json says "result": "INTERRUPTED"
#   stress_interrupt_fail  SIGINT into a run with a planted leak (--selftest
#                          leak, --check-level 0: no stop-the-world check, so only
#                          the final conservation check can see it): an
#                          interruption never hides a failure -
#                          FAILURE, exit 1
# In every preset that builds mmfuzz-stress; a few seconds each.
if(EXISTS ${PROJECT_SOURCE_DIR}/stressors/stress/CMakeLists.txt)
  set(_mf_int_script [=[
bin=$1; kind=$2; out=$(mktemp -d)
extra=""; [ "$kind" = fail ] && extra="--selftest leak --check-level 0 --no-replay"
"$bin" pcp --time 60 --quiet --seed 7 --json "$out/s.json" $extra > "$out/log" 2>&1 &
pid=$!
sleep 2
kill -INT $pid
wait $pid; rc=$?
tail -n 3 "$out/log"
last=$(tail -n 1 "$out/log")
ok=1
if [ "$kind" = ok ]; then
	[ $rc = 130 ] && case "$last" in "INTERRUPTED by SIGINT"*) true ;; *) false ;; esac &&
	grep -q '"result": "INTERRUPTED"' "$out/s.json" && grep -q '"interrupted": true' "$out/s.json" && ok=0
else
	[ $rc = 1 ] && [ "$last" = FAILURE ] && ok=0
fi
echo "exit status $rc, last line: $last"
rm -rf "$out"
exit $ok
]=])
  add_test(NAME stress_interrupt COMMAND bash -c "${_mf_int_script}" _ $<TARGET_FILE:mmfuzz-stress> ok)
  add_test(NAME stress_interrupt_fail COMMAND bash -c "${_mf_int_script}" _ $<TARGET_FILE:mmfuzz-stress> fail)
  set_tests_properties(stress_interrupt stress_interrupt_fail PROPERTIES TIMEOUT 120)
endif()

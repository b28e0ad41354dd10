#!/usr/bin/env bash
# end_of_run.sh CASE STRESS - how a mmfuzz-stress run ends: one ctest per
# CASE (stress_end_CASE; stressors/stress/CMakeLists.txt says what each
# checks).  Each case failed on the stressor before the fix it names.  The
# replay cases put a stand-in for the deterministic driver in
# MMFUZZ_SCHED_STRESS (replay.c, find_driver).
case_=$1 bin=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# has FILE REGEX [what]: FILE matches REGEX (extended).
has() {
	grep -Eq -- "$2" "$1" || fail "${3:-$1} lacks /$2/"
}
hasnt() {
	! grep -Eq -- "$2" "$1" || fail "${3:-$1} has /$2/: $(grep -Em1 -- "$2" "$1")"
}
# valid JSON (where python3 is there to say).
json_ok() {
	command -v python3 >/dev/null || return 0
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" || fail "$1 is not valid JSON"
}
last_line() {
	tail -n 1 "$1"
}
now_ms() {
	echo $(($(date +%s%N) / 1000000))
}
# wait_for SECONDS CMD...: until CMD succeeds; false when the time ran out.
wait_for() {
	local end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		(($(date +%s) < end)) || return 1
		sleep 0.05
	done
}
show() {
	echo "--- $1 (last lines)"
	tail -n "${2:-12}" "$1"
}

# scribble_fails [ARGS]: a slub run with a planted scribble (--selftest), its
# output and --json in $work; it must fail (exit 1).
scribble_fails() {
	"$bin" slub --ops 3000 --seed 7 --quiet --selftest scribble "$@" --json "$work/s.json" >"$work/out" 2>&1
	rc=$?
	show "$work/out" 3
	[ "$rc" = 1 ] || fail "exit status $rc, want 1"
}

# A stand-in driver: $1 is its body (sh).
driver() {
	printf '#!/bin/sh\n%s\n' "$1" >"$work/driver"
	chmod +x "$work/driver"
	export MMFUZZ_SCHED_STRESS=$work/driver
}

export TMPDIR=$work
case $case_ in
rerun-line)
	# The rerun line carries every setting that differs from the defaults.
	"$bin" pages --ops 50 --seed 3 --quiet --signal-us 500 --hang-timeout 7 >"$work/out" 2>&1
	rc=$?
	[ "$rc" = 0 ] || fail "exit status $rc, want 0"
	grep -m1 '^rerun:' "$work/out"
	has "$work/out" '^rerun: .* --signal-us 500( |$)'
	has "$work/out" '^rerun: .* --hang-timeout 7( |$)'
	# ... and the build: a sanitizer's, or --debug for MM_DEBUG assertions
	# (2 and up), which the verb's default release build lacks.
	# STRESS_RERUN_BUILD: what CMake expects of this binary (CMakeLists.txt).
	if [ -n "${STRESS_RERUN_BUILD-}" ]; then
		has "$work/out" "^rerun: .* $STRESS_RERUN_BUILD\$"
	elif [ "${STRESS_RERUN_BUILD+set}" = set ]; then
		hasnt "$work/out" '^rerun: .* --(debug|asan|tsan)$'
	fi
	;;
help)
	# The stop-the-world check is mm_check level 4, and there is none at level 0.
	"$bin" --help >"$work/out" 2>&1
	has "$work/out" 'stop-the-world check: every held allocation re-read'
	has "$work/out" 'mm_check level 4'
	has "$work/out" '0  the shadow bitmaps only .*no'
	hasnt "$work/out" 'level 3 with'
	;;
replay-interrupt)
	# Ctrl-C (twice) during the deterministic replay attempt: the driver is
	# killed and reaped, the failure reported (FAILURE, exit 1), at once.
	# Before the fix the replay went on for --replay-time, or the second
	# SIGINT killed the stressor (130, no FAILURE) and orphaned the driver.
	driver "echo \$\$ >'$work/driver.pid'; exec sleep 60"
	"$bin" slub --ops 3000 --seed 7 --quiet --selftest scribble --json "$work/s.json" >"$work/out" 2>&1 &
	pid=$!
	wait_for 90 test -s "$work/driver.pid" || fail "the driver never started"
	dpid=$(cat "$work/driver.pid")
	t0=$(now_ms)
	kill -INT $pid
	kill -INT $pid
	wait $pid
	rc=$?
	ms=$(($(now_ms) - t0))
	show "$work/out" 4
	echo "exit status $rc, ${ms} ms after SIGINT"
	[ "$rc" = 1 ] || fail "exit status $rc, want 1"
	[ "$ms" -lt 5000 ] || fail "${ms} ms from SIGINT to the end, want < 5000"
	[ "$(last_line "$work/out")" = FAILURE ] || fail "the last line is not FAILURE"
	has "$work/out" '^deterministic replay interrupted: SIGINT came during the runs of policy random'
	has "$work/out" 'failure: thread 0, op [0-9]+: C1 violated'
	has "$work/s.json" '"replay": \{"status": "interrupted"'
	has "$work/s.json" '"result": "FAILURE"'
	json_ok "$work/s.json"
	if kill -0 "$dpid" 2>/dev/null; then
		fail "the driver (pid $dpid) is still running: $(ps -o pid=,ppid=,args= -p "$dpid")"
		kill -KILL "$dpid"
	fi
	;;
replay-inconclusive)
	# A driver that runs nothing and says nothing: no verdict, not "0 runs passed".
	driver "exit 0"
	scribble_fails
	has "$work/out" "^deterministic replay inconclusive: no deterministic run completed: the driver .* printed no 'total:' line"
	hasnt "$work/out" 'found only by free-running mode'
	hasnt "$work/out" '0 deterministic runs'
	has "$work/s.json" '"replay": \{"status": "inconclusive"'
	;;
replay-time)
	# --replay-time bounds the whole attempt: here the failing deterministic
	# run's rerun alone hangs.  Before the fix that rerun got at least 10 s.
	driver 'case " $* " in
*" --run "*) exec sleep 60 ;;
esac
echo "run 3 seed 0x7 policy random steps 24: FAILED: planted by end_of_run.sh"
echo "rerun: ./mmfuzz stress slub --deterministic --seed 0x7 --run 3 --policy random"
exec sleep 60'
	scribble_fails --replay-time 2
	has "$work/out" '^deterministic replay inconclusive: run 3 of policy random failed \(planted by end_of_run.sh\), but its rerun alone did not end'
	secs=$(sed -n 's/.*"runs": [0-9]*, "seconds": \([0-9.]*\)}.*/\1/p' "$work/s.json")
	echo "replay attempt: ${secs:-?} s"
	awk -v s="${secs:-99}" 'BEGIN { exit !(s <= 3.0) }' || fail "the attempt took ${secs:-?} s, --replay-time 2"
	;;
failed-vacuity)
	# A run that failed stopped at its failure: which injections had not
	# fired yet is no finding, and is not reported as one.
	scribble_fails --no-replay
	has "$work/out" 'failure: thread 0, op [0-9]+: C1 violated'
	hasnt "$work/out" 'VACUOUS'
	has "$work/s.json" '"vacuous": ""'
	;;
json-stdout)
	# --json - is standard output (cli.h says so): before the fix, a file named "-".
	(cd "$work" && "$bin" pages --ops 50 --seed 3 --quiet --json - >"$work/out" 2>"$work/err")
	rc=$?
	show "$work/out" 4
	[ "$rc" = 0 ] || fail "exit status $rc, want 0"
	[ ! -e "$work/-" ] || fail "a file named '-' was written"
	[ "$(last_line "$work/out")" = SUCCESS ] || fail "the last line is not SUCCESS"
	sed -n '/^{$/,/^}$/p' "$work/out" >"$work/s.json"
	has "$work/s.json" '"result": "SUCCESS"' "the JSON on stdout"
	json_ok "$work/s.json"
	;;
json-unwritable)
	# A directory no one may create files in - root included: access() says
	# yes to root, so before the fix the run went on, then could not write.
	"$bin" pages --ops 50 --seed 3 --quiet --json /sys/mmfuzz-end-of-run.json >"$work/out" 2>&1
	rc=$?
	show "$work/out" 3
	[ "$rc" = 2 ] || fail "exit status $rc, want 2"
	has "$work/out" '--json /sys/mmfuzz-end-of-run.json: cannot write'
	hasnt "$work/out" '^(SUCCESS|FAILURE)$'
	;;
json-late)
	# The directory goes away during the run: the record cannot be written
	# at the end.  The verdict still shows, and the exit status is 3, not 0.
	# Every injection and the stop-the-world check are off: on a machine
	# loaded enough (two ctest jobs, TSan, other work) a 3-second run can
	# end before one of them fires, and then its verdict is VACUOUS, not
	# the SUCCESS this case needs.  Vacuity has tests of its own.
	mkdir "$work/d"
	"$bin" pcp --time 3 --seed 7 --quiet --no-migrate --no-irq --no-onoff --no-stutter --no-pressure \
		--no-remote --no-control --check-level 0 --json "$work/d/s.json" >"$work/out" 2>"$work/err" &
	pid=$!
	wait_for 60 grep -q '"result": "RUNNING"' "$work/d/s.json" 2>/dev/null ||
		fail "no RUNNING placeholder in d/s.json while the run went on"
	rm -rf "$work/d"
	wait $pid
	rc=$?
	show "$work/out" 2
	show "$work/err" 2
	[ "$rc" = 3 ] || fail "exit status $rc, want 3 (SUCCESS, but no --json record)"
	[ "$(last_line "$work/out")" = SUCCESS ] || fail "the last line is not SUCCESS"
	has "$work/err" "--json $work/d/s.json: cannot write"
	;;
json-killed)
	# A run killed outright writes nothing at its end: the file must not go
	# on saying what an earlier run said.
	echo '{"result": "SUCCESS"}' >"$work/s.json"
	"$bin" pcp --time 60 --seed 7 --quiet --json "$work/s.json" >"$work/out" 2>&1 &
	pid=$!
	wait_for 60 grep -q '"result": "RUNNING"' "$work/s.json" || fail "no RUNNING placeholder"
	kill -KILL $pid
	wait $pid
	cat "$work/s.json"
	has "$work/s.json" '"result": "RUNNING"'
	has "$work/s.json" '"command": \[.*"--time", "60"'
	json_ok "$work/s.json"
	ls -a "$work" | grep -q '^\.s\.json\.' && fail "a temporary file was left: $(ls -a "$work")"
	;;
json-fatal | json-fatal-thread)
	# A crash the stressor catches (on_fatal; SIGABRT as an allocator BUG_ON
	# raises it): a FAILURE record in place of the earlier SUCCESS.  kill
	# sends it to the process, which Linux gives to the main thread when it
	# can; json-fatal-thread sends it to another thread (tgkill), the way a
	# BUG in a worker raises it, while main runs on and must stay out.
	echo '{"result": "SUCCESS"}' >"$work/s.json"
	"$bin" pcp --time 60 --seed 7 --quiet --no-replay --json "$work/s.json" >"$work/out" 2>&1 &
	pid=$!
	wait_for 60 grep -q '"result": "RUNNING"' "$work/s.json" || fail "no RUNNING placeholder"
	sleep 0.5
	if [ "$case_" = json-fatal ]; then
		kill -ABRT $pid
	else
		tid=$(ls /proc/$pid/task | grep -vx "$pid" | sort -n | tail -n 1)
		python3 -c 'import ctypes, signal, sys
libc = ctypes.CDLL(None, use_errno=True)
if libc.tgkill(int(sys.argv[1]), int(sys.argv[2]), int(signal.SIGABRT)):  # glibc 2.30 and later
    sys.exit("tgkill: errno %d" % ctypes.get_errno())' $pid "$tid" || fail "cannot send SIGABRT to thread $tid"
	fi
	wait $pid
	rc=$?
	show "$work/out" 3
	cat "$work/s.json"
	[ "$rc" = 1 ] || fail "exit status $rc, want 1"
	[ "$(last_line "$work/out")" = FAILURE ] || fail "the last line is not FAILURE"
	has "$work/s.json" '"result": "FAILURE"'
	has "$work/s.json" '"failure": "abort"'
	has "$work/s.json" '"replay": \{"status": "not attempted"'
	json_ok "$work/s.json"
	# on_fatal owns the end: main, seeing the failure, must not report too
	# (a crash record has no statistics, so no end-of-test report at all).
	hasnt "$work/out" 'End of test'
	[ "$(grep -c '^FAILURE$' "$work/out")" = 1 ] || fail "FAILURE printed $(grep -c '^FAILURE$' "$work/out") times, want once"
	;;
hang-report)
	# The watchdog's hang: the end-of-test report, a T1 failure line that
	# says where, the elapsed time and an honest replay status.
	"$bin" slub --ops 3000 --seed 7 --quiet --selftest hang --json "$work/s.json" >"$work/out" 2>&1
	rc=$?
	show "$work/out" 6
	[ "$rc" = 1 ] || fail "exit status $rc, want 1"
	[ "$(last_line "$work/out")" = FAILURE ] || fail "the last line is not FAILURE"
	has "$work/out" '^--- mmfuzz-stress slub: End of test ---'
	has "$work/out" '^slub: failure: thread [0-9]+, op [0-9]+: T1 violated: hang: worker [0-9]+ completed no operation for [0-9.]+ s \(--hang-timeout 1\); its last logged op: [a-z_]+ on cpu'
	has "$work/out" '^deterministic replay not attempted: hang'
	has "$work/s.json" '"replay": \{"status": "not attempted", .*"reason": "hang'
	has "$work/s.json" '"elapsed_s": [1-9][0-9]*\.[0-9]+'
	has "$work/s.json" '"result": "FAILURE"'
	json_ok "$work/s.json"
	;;
*)
	fail "unknown case $case_"
	;;
esac
if [ "$fails" -ne 0 ]; then
	[ -f "$work/out" ] && show "$work/out" 80
	echo "$case_: $fails check(s) failed"
	exit 1
fi
echo "$case_: all checks passed"

# tests/verbs/lib.sh - sourced by the verb tests (minimize.sh, coverage.sh, ...):
# VERB must be set; after `source`, $mode $ROOT $WORK $MMFUZZ are set, WORK
# holds only $FIFO, and fail / expect count failures in $fails.
#
# $FIFO is a named pipe no one writes: the stand-in for a device given as an
# input file.  A verb that refuses it is right; one that opens it waits for
# ever (cut off by $EXPECT_TIMEOUT) - where /dev/zero would be read until
# the memory or the disk ran out.
mode=$1 ROOT=$2 WORK=$3
MMFUZZ=$ROOT/mmfuzz
fails=0
rm -rf "$WORK" && mkdir -p "$WORK"
FIFO=$WORK/fifo
mkfifo "$FIFO"

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# verdict: the last line, and exit 1 when any check failed.
verdict() {
	if ((fails)); then
		echo "$fails check(s) failed"
		exit 1
	fi
	echo "all checks passed"
}

# expect RC REGEX ARGS...: ./mmfuzz $VERB ARGS exits RC and prints REGEX
# (within $EXPECT_TIMEOUT seconds when that is set: a refusal that regressed
# into a real run is cut short, exit 124).
expect() {
	local want=$1 re=$2 out rc
	shift 2
	out=$(${EXPECT_TIMEOUT:+timeout -k 5 "$EXPECT_TIMEOUT"} "$MMFUZZ" "$VERB" "$@" 2>&1)
	rc=$?
	if [[ $rc != "$want" ]]; then
		fail "$VERB $*: exit $rc, want $want; output:"$'\n'"$out"
	elif ! grep -Eq -- "$re" <<<"$out"; then
		fail "$VERB $*: no /$re/ in:"$'\n'"$out"
	else
		echo "ok: $VERB $* -> exit $rc, /$re/"
	fi
}

# refused_before_build ARGS...: ./mmfuzz $VERB ARGS runs no cmake (no configure,
# no build: a bad argument is refused first).  The verb runs with a cmake
# stand-in first on PATH that records its calls and fails; any call fails
# this check.  (The verbs print nothing when a build succeeds, so the grep
# of their output for configuring|building alone could never fail; and the
# build tree's mtimes change with other builds too - ninja rewrites
# .ninja_log even on a no-op.)
refused_before_build() {
	local out bin=$WORK/.cmake-recorder
	mkdir -p "$bin"
	printf '#!/usr/bin/env bash\necho "cmake $*" >>%q\necho "cmake stand-in: no build here" >&2\nexit 1\n' \
		"$bin/calls" >"$bin/cmake"
	chmod +x "$bin/cmake"
	rm -f "$bin/calls"
	out=$(PATH=$bin:$PATH ${EXPECT_TIMEOUT:+timeout -k 5 "$EXPECT_TIMEOUT"} "$MMFUZZ" "$VERB" "$@" 2>&1)
	if [[ -s $bin/calls ]] || grep -Eq 'configuring|building' <<<"$out"; then
		fail "$VERB $*: configured or built before refusing ($(cat "$bin/calls" 2>/dev/null)):"$'\n'"$out"
	else
		echo "ok: $VERB $* -> refused before any configure or build"
	fi
}

# standin_cmake DIR: DIR/cmake, a cmake stand-in to put first on PATH, for the
# check that a failed configure's leftovers (a CMakeCache.txt, no build.ninja)
# are configured again.  It logs each call's arguments to $STANDIN_CMAKE; a
# configure (--preset P: build/P under the working directory, or -B DIR)
# writes the cache and build.ninja (a copy of $STANDIN_NINJA when set, else
# empty); --build DIR fails as ninja does without DIR/build.ninja, else runs
# $STANDIN_BUILD DIR TARGET... when set (what the build makes), else does
# nothing (the stand-in tree holds what the build would make).
standin_cmake() {
	mkdir -p "$1"
	cat >"$1/cmake" <<'STUB'
#!/usr/bin/env bash
echo "$*" >>"${STANDIN_CMAKE:?}"
case $1 in
--version) echo "cmake version 3.25.1"; exit 0 ;;
--build)
	[[ -e $2/build.ninja ]] || { echo "ninja: error: loading 'build.ninja': No such file or directory"; exit 1; }
	[[ -n ${STANDIN_BUILD:-} ]] && exec "$STANDIN_BUILD" "$2" "${@:4}"
	exit 0 ;;
esac
while (($#)); do
	case $1 in --preset) dir=build/$2; shift ;; -B) dir=$2; shift ;; esac
	shift
done
mkdir -p "${dir:?}" && : >"$dir/CMakeCache.txt"
if [[ -n ${STANDIN_NINJA:-} ]]; then cp "$STANDIN_NINJA" "$dir/build.ninja"; else : >"$dir/build.ninja"; fi
STUB
	chmod +x "$1/cmake"
}

# wait_started WHAT FILE: FILE (a stand-in's pid file) is written within 10 s, else fail.
wait_started() {
	for _ in $(seq 100); do
		[[ -s $2 ]] && return 0
		sleep 0.1
	done
	fail "$1 did not start"
}

# stopped_within_20s PID WHAT: PID ends within 20 s of the signal just sent;
# one still running fails ("WHAT") and is killed.  Its exit status is left
# to `wait`.
stopped_within_20s() {
	for _ in $(seq 100); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.2
	done
	fail "$2"
	kill -KILL "$1"
}

# interrupted_130 VERB_PID WHAT PIDFILE LOG: once the stand-in has written
# PIDFILE, SIGINT to VERB_PID; it must end within 20 s with exit 130 and
# no Python traceback in LOG (its output, printed here).
interrupted_130() {
	local verb=$1 what=$2 pidfile=$3 log=$4 rc
	wait_started "$what" "$pidfile"
	kill -INT "$verb"
	stopped_within_20s "$verb" "$VERB still runs 20 s after SIGINT"
	wait "$verb"
	rc=$?
	cat "$log"
	[[ $rc == 130 ]] || fail "interrupted $VERB: exit $rc, want 130"
	! grep -q Traceback "$log" || fail "interrupted $VERB: a traceback"
}

# expect_gone WHAT PIDFILE: the process in PIDFILE (a stand-in's child) is gone
# within 5 s - killed, it may stay a zombie a moment until init reaps it,
# so a zombie counts as gone; one still alive fails and is killed.
expect_gone() {
	local what=$1 pid st
	pid=$(cat "$2" 2>/dev/null)
	if [[ -z $pid ]]; then
		fail "$what: never started"
		return
	fi
	for _ in $(seq 50); do
		st=$(ps -o stat= -p "$pid" 2>/dev/null)
		[[ -z $st || $st == Z* ]] && break
		sleep 0.1
	done
	if [[ -n $st && $st != Z* ]]; then
		fail "$what $pid outlived the stop (state $st)"
		kill -9 "$pid"
	else
		echo "ok: $what is gone"
	fi
}

# rate_ok JSON: every row of fuzz's JSON table has exec_per_s = execs / the
# run's time, which "seconds" gives rounded to 0.01 s (so the time lies within
# seconds +- 0.005; a run under 0.005 s says 0.0). The rate came from seconds
# rounded to 0.1 s: a run under 0.05 s said 0.0 exec/s.
rate_ok() {
	python3 - "$1" <<'PY' || fail "exec_per_s is not execs per second of the run"
import json, sys
for r in json.load(open(sys.argv[1]))["targets"]:
    s, n, rate = r["seconds"], r["execs"], r["exec_per_s"]
    lo = n / (s + 0.005) - 0.05
    hi = n / (s - 0.005) + 0.05 if s > 0.005 else float("inf")
    assert lo <= rate <= hi, ("exec_per_s outside execs / [seconds -+ 0.005]", lo, hi, r)
    assert n == 0 or rate > 0, ("execs but no rate", r)
print("ok: exec_per_s is execs / seconds:", [(r["name"], r["exec_per_s"]) for r in json.load(open(sys.argv[1]))["targets"]])
PY
}

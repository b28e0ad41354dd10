#!/usr/bin/env bash
# tests/verbs/bench_scripts.sh usage ROOT WORK - the benchmark scripts' bad
# arguments (ctest bench_scripts_usage): each exits 2 with its message at
# once - no build, and no run that ends in a lost result (fuzz_exec.py
# --json into a missing directory ran every benchmark first; sched_grade.py
# --runs 0 built and graded).  Each is cut off at 30 s should a refusal
# regress into a run.
VERB=none
# shellcheck source=tests/verbs/lib.sh
source "$(dirname "$0")/lib.sh"
MMFUZZ=python3          # expect runs "$MMFUZZ" "$VERB" ARGS: python3 bench/SCRIPT ARGS
EXPECT_TIMEOUT=30

case $mode in
usage)
	missing=$WORK/missing/x.json
	VERB=$ROOT/bench/sched_grade.py
	expect 2 '--runs must be >= 1, not 0' --runs 0
	expect 2 '--other-runs must be >= 1, not -5' --other-runs -5
	expect 2 '--correct-runs must be >= 1' --correct-runs 0
	expect 2 "--seed wants a whole number .*, not 'zz'" --seed zz
	expect 2 "--json: cannot write '$missing': no such directory" --json "$missing"
	expect 2 "unknown bug 'nosuch'" --bugs nosuch
	VERB=$ROOT/bench/fuzz_exec.py
	expect 2 "--json: cannot write '$missing': no such directory" --json "$missing" --no-build --targets buddy
	expect 2 'unknown setting or target: nosuch' --targets nosuch --no-build
	expect 2 'unknown setting or target: loud' --settings loud --no-build
	expect 2 '--seconds must be >= 1' --seconds 0 --no-build
	expect 2 '--steady needs N1,N2' --steady 5,2 --no-build
	expect 2 '--floor must be >= 0' --floor -1 --no-build
	expect 2 '--config-floors must be >= 0' --config-floors -2 --no-build
	VERB=$ROOT/bench/stress_replay.py
	expect 2 'unrecognized arguments: --bogus' --bogus
	[[ ! -e $WORK/missing ]] || fail "a script created $WORK/missing"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
verdict

#!/usr/bin/env bash
# tests/verbs/bench.sh usage ROOT WORK - ./mmfuzz bench's bad arguments
# (ctest verbs_bench_usage): each exits 2 with its message, and none of them
# configures or builds build/release first.
VERB=bench
# shellcheck source=tests/verbs/lib.sh
source "$(dirname "$0")/lib.sh"

case $mode in
usage)
	expect 2 "no benchmark 'nosuch' \(there are: buddy pages sched slub\)" nosuch
	expect 2 "no benchmark 'nosuch'" buddy bench_nosuch
	expect 2 "not a benchmark name: 'Bad!'" 'Bad!'
	expect 2 "unknown argument '--bogus'" --bogus
	expect 2 "--json: cannot write '$WORK/missing/x.json': no such directory" --json "$WORK/missing/x.json" buddy
	expect 2 "--json: cannot write '$WORK': it is a directory" --json "$WORK" buddy
	expect 2 'run alone, not with other benchmarks' sched_grade buddy
	refused_before_build nosuch
	# --list reads the sources: the benchmarks and the scripts, nothing configured or built.
	expect 0 '^slub$' --list
	expect 0 '^fuzz_exec \(script, only when named\)$' --list
	refused_before_build --list
	[[ ! -e $WORK/missing ]] || fail "bench created $WORK/missing"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
verdict

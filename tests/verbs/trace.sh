#!/usr/bin/env bash
# tests/verbs/trace.sh usage ROOT WORK - ./mmfuzz trace's bad arguments
# and tools/optext's (ctest verbs_trace_usage): each exits 2 with its message,
# before any build (the checks come first, so none of these needs build/optext).
VERB=trace
# shellcheck source=tests/verbs/lib.sh
source "$(dirname "$0")/lib.sh"

case $mode in
usage)
	EXPECT_TIMEOUT=60
	expect 2 'usage: mmfuzz trace TARGET FILE' buddy
	expect 2 "unknown target 'nosuch'" nosuch "$ROOT/corpus/buddy"
	expect 2 'cannot read .*/missing: no such file' buddy "$WORK/missing"
	expect 2 'cannot read .*/missing: no such file' fuzz_buddy "$WORK/missing"
	expect 2 'cannot read .*: it is a directory' buddy "$ROOT/corpus/buddy"
	expect 2 "cannot read $FIFO: not a regular file" buddy "$FIFO"
	expect 2 '--c needs a file name' buddy "$ROOT/corpus/buddy" --c
	expect 2 "--c: cannot write '.*/missing/r.c': no such directory" buddy "$ROOT/corpus/buddy/basic" --c "$WORK/missing/r.c"
	expect 2 "--c: cannot write '$WORK': it is a directory" buddy "$ROOT/corpus/buddy/basic" --c "$WORK"
	expect 2 "--encode: cannot write '.*/missing/b': no such directory" buddy "$ROOT/corpus/buddy/src/basic.txt" --encode "$WORK/missing/b"
	expect 2 'the sched target has no --c' sched "$ROOT/corpus/sched/src/basic.txt" --c "$WORK/s.c"
	[[ ! -e $WORK/s.c ]] || fail "trace sched --c wrote $WORK/s.c"
	expect 2 '--encode writes bytes and runs nothing: use it without --run' buddy "$ROOT/corpus/buddy/src/basic.txt" --encode "$WORK/b" --run
	expect 2 '--encode writes bytes and runs nothing: use it without --c' buddy "$ROOT/corpus/buddy/src/basic.txt" --encode "$WORK/b" --c "$WORK/b.c"
	expect 2 '--timeout bounds a run: it goes with --run or --c' buddy "$ROOT/corpus/buddy/basic" --timeout 5
	expect 2 "--timeout wants seconds from 0 \(no bound\) to 86400, not 'nan'" buddy "$ROOT/corpus/buddy/basic" --run --timeout nan
	expect 2 '--timeout needs a value' buddy "$ROOT/corpus/buddy/basic" --run --timeout
	[[ ! -e $WORK/b && ! -e $WORK/b.c ]] || fail "trace --encode with --run/--c wrote a file"
	if [[ $(id -u) != 0 ]]; then
		: >"$WORK/unreadable" && chmod 000 "$WORK/unreadable"
		expect 2 'cannot read .*/unreadable: permission denied' buddy "$WORK/unreadable"
	fi
	# The tool behind it, tools/optext: the same refusals, and -o checked before a build.
	MMFUZZ=python3 VERB=$ROOT/tools/optext
	expect 2 "unknown target 'nosuch'" encode nosuch "$ROOT/corpus/buddy/src/basic.txt"
	expect 2 'cannot read .*/missing: no such file' decode buddy "$WORK/missing"
	expect 2 "cannot read $FIFO: not a regular file" decode buddy "$FIFO"
	expect 2 "-o: cannot write '.*/missing/x': no such directory" encode buddy "$ROOT/corpus/buddy/src/basic.txt" -o "$WORK/missing/x"
	expect 2 "-o: cannot write '$WORK': it is a directory" encode buddy "$ROOT/corpus/buddy/src/basic.txt" -o "$WORK"
	expect 2 'usage: optext roundtrip TARGET FILE' roundtrip buddy
	[[ ! -e $WORK/missing ]] || fail "trace created $WORK/missing"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
verdict

#!/usr/bin/env bash
# tests/verbs/fuzz_replay.sh - ctest for ./mmfuzz fuzz's replay of a
# campaign's corpus without sanitizers (tools/verbs/fuzz, replay_check):
#   fuzz_replay_clean  the slub seeds and regression inputs, replayed by this
#                      build's fuzz_slub (MMFUZZ_REPLAY_DIR): exit 0, "clean",
#                      nothing in crashes/
#   fuzz_replay_finds  a stand-in replay binary that fails on every input
#                      whose name starts with "bad" (naming it, as the
#                      harness's checker does) or "abort" (naming nothing, as
#                      an allocator BUG() does): exit 1, each failing input
#                      (not only the first; an unnamed one found by replaying
#                      the rest one at a time - it used to be the batch's
#                      first input, and the replay stopped there) copied to
#                      crashes/replay-<name> with its report, the good ones
#                      not; bad usage: exit 2
# usage: fuzz_replay.sh MODE ROOT WORK BUILD_DIR
VERB=fuzz
source "$(dirname "$0")/lib.sh"
BUILD=$4

if [[ $mode == clean ]]; then
	mkdir -p "$WORK/slub/corpus"
	for d in "$ROOT/corpus/slub" "$ROOT/corpus/regressions/slub"; do
		[[ -d $d ]] && find "$d" -maxdepth 1 -type f -exec cp {} "$WORK/slub/corpus/" \;
	done
	n=$(ls "$WORK/slub/corpus" | wc -l)
	(( n > 3 )) || fail "only $n slub inputs to replay"
	MMFUZZ_REPLAY_DIR=$BUILD expect 0 "slub: $n corpus inputs replayed without sanitizers: clean" \
		--replay-check slub "$WORK/slub"
	[[ -z $(ls "$WORK/slub/crashes") ]] || fail "crashes/ is not empty after a clean replay"
else
	# The stand-in: fails (exit 1, the harness's input line) on the first "bad*" file it is given.
	mkdir -p "$WORK/stub/targets" "$WORK/t/corpus"
	cat > "$WORK/stub/targets/fuzz_slub" <<'STUB'
#!/usr/bin/env bash
for f in "$@"; do
	case "$(basename "$f")" in
	bad*) echo "==mmfuzz== VIOLATION C1 in target slub (stand-in)"; echo "==mmfuzz== input: $f  (./mmfuzz repro slub $f)"; exit 1 ;;
	abort*) echo "mmfuzz: BUG at allocator/page/buddy.c:1: stand-in"; kill -ABRT $$ ;;
	esac
done
echo "slub: replayed $# inputs without a violation"
STUB
	chmod +x "$WORK/stub/targets/fuzz_slub"
	for n in a1 bad1 b2 abort1 c3 bad2; do echo "$n" > "$WORK/t/corpus/$n"; done
	MMFUZZ_REPLAY_DIR=$WORK/stub expect 1 "slub: 6 corpus inputs replayed without sanitizers: 3 failed" \
		--replay-check slub "$WORK/t"
	for n in bad1 bad2; do
		[[ -f $WORK/t/crashes/replay-$n ]] || fail "no crashes/replay-$n"
		grep -q "VIOLATION C1" "$WORK/t/crashes/replay-$n.log" 2>/dev/null || fail "no report in replay-$n.log"
	done
	[[ -f $WORK/t/crashes/replay-abort1 ]] || fail "no crashes/replay-abort1 (the input that aborted unnamed)"
	grep -q "BUG at" "$WORK/t/crashes/replay-abort1.log" 2>/dev/null || fail "no report in replay-abort1.log"
	for n in a1 b2 c3; do
		[[ ! -e $WORK/t/crashes/replay-$n ]] || fail "a passing input ($n) was kept as a finding"
	done
	expect 2 "unknown target 'nosuchtarget'.*usage: mmfuzz fuzz --replay-check" --replay-check nosuchtarget "$WORK/t"
	expect 2 "nothing-here has no corpus/ directory \(it does not exist\); usage: mmfuzz fuzz --replay-check" \
		--replay-check slub "$WORK/nothing-here"
	expect 2 "usage: mmfuzz fuzz --replay-check" --replay-check slub
	# A replay build that is not there: said in one line, not a traceback.
	MMFUZZ_REPLAY_DIR=$WORK/no-build expect 2 "MMFUZZ_REPLAY_DIR=.*/no-build: no replay binary targets/fuzz_slub" \
		--replay-check slub "$WORK/t"
fi
exit $((fails > 0))

#!/usr/bin/env bash
# tests/verbs/fuzz.sh usage ROOT WORK - ./mmfuzz fuzz's bad arguments (ctest
# verbs_fuzz_usage): each exits 2 with its message before any build or
# campaign (a run would be cut off at 30 s, exit 124, and fail the check).
VERB=fuzz
# shellcheck source=tests/verbs/lib.sh
source "$(dirname "$0")/lib.sh"
EXPECT_TIMEOUT=30

case $mode in
usage)
	expect 2 'usage: mmfuzz fuzz TARGET\|all'
	expect 2 'usage: mmfuzz fuzz TARGET\|all' buddy slub
	expect 2 "unknown target 'nosuch' \(targets: .*, all\)" nosuch
	expect 2 "unknown target 'fuzz_nosuch' \(targets: .*, all\)" fuzz_nosuch
	expect 2 "--engine must be libfuzzer or afl, not 'foo'" buddy --engine foo
	expect 2 "--time needs seconds, not 'soon'" buddy --time soon
	expect 2 '--time must be positive' buddy --time 0
	expect 2 '--time must be positive' buddy --time nan
	expect 2 "--jobs needs a positive integer, not '0'" buddy --jobs 0
	expect 2 '--json needs a value' buddy --json
	expect 2 "--json: cannot write '.*/missing/f.json': no such directory" buddy --time 1 --json "$WORK/missing/f.json"
	expect 2 "--json: cannot write '$WORK': it is a directory" buddy --time 1 --json "$WORK"
	expect 2 'unknown option --bogus' buddy --bogus
	: >"$WORK/plain"
	expect 2 "--out: cannot create '.*/plain/sub': .*/plain is not a directory" buddy --time 1 --out "$WORK/plain/sub"
	refused_before_build buddy --time 1 --json "$WORK/missing/f.json"
	expect 2 "--jobs needs a positive integer, not '²'" buddy --jobs ²    # was a traceback
	expect 2 '--no-replay-check is for libFuzzer' buddy --engine afl --no-replay-check   # was ignored
	expect 2 '--replay-check goes first, alone' buddy --replay-check "$WORK"
	# the last of two no longer wins silently
	expect 2 '--time given twice' buddy --time 1 --time 2
	expect 2 '--engine given twice' buddy --engine libfuzzer --engine afl
	expect 2 '--json given twice' buddy --json "$WORK/a.json" --json "$WORK/b.json"
	# less than 1 s a target ran nothing and was reported clean (exit 0)
	expect 2 '--time must be at least 1 s' buddy --time 0.5
	expect 2 '--time 5 gives each of the [0-9]+ targets 0\.[0-9]+ s: at least 1 s each' all --time 5
	# access() says yes to root on /proc: the --json was refused after the campaign, --out after the build
	expect 2 "--json: cannot write '/proc/mmfuzz-probe.json': its directory takes no new file" \
		buddy --time 1 --json /proc/mmfuzz-probe.json
	refused_before_build buddy --time 1 --json /proc/mmfuzz-probe.json
	expect 2 "--out: cannot create '/proc/mmfuzz-probe': /proc takes no new directory" \
		buddy --time 1 --out /proc/mmfuzz-probe
	refused_before_build buddy --time 1 --out /proc/mmfuzz-probe
	# a replay dir without the binaries: refused before the build, not after the campaign (table lost)
	MMFUZZ_REPLAY_DIR=$WORK/none expect 2 "MMFUZZ_REPLAY_DIR=.*/none: no replay binary targets/fuzz_buddy" \
		buddy --time 1
	MMFUZZ_REPLAY_DIR=$WORK/none refused_before_build buddy --time 1
	[[ ! -e $WORK/missing ]] || fail "fuzz created $WORK/missing"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
verdict

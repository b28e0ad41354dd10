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
	[[ ! -e $WORK/missing ]] || fail "fuzz created $WORK/missing"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
verdict

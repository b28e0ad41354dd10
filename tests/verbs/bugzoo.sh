#!/usr/bin/env bash
# tests/verbs/bugzoo.sh usage ROOT WORK - ./mmfuzz bugzoo's bad arguments
# (ctest verbs_bugzoo_usage): each exits 2 with its message before a build
# or a detector run starts (a run would outlast the test's timeout).
VERB=bugzoo
# shellcheck source=tests/verbs/lib.sh
source "$(dirname "$0")/lib.sh"
EXPECT_TIMEOUT=30

case $mode in
usage)
	expect 2 'unknown argument --bogus' --bogus
	expect 2 '--budget needs a value' --budget
	expect 2 '--budget, --seeds and --jobs take numbers' --budget ten
	expect 2 '--budget takes seconds > 0' --budget -1 --only pcp-stat-order
	expect 2 '--budget takes seconds > 0' --budget nan --only pcp-stat-order
	expect 2 '--seeds and --jobs whole numbers >= 1' --seeds 0 --only pcp-stat-order
	expect 2 '--seeds and --jobs whole numbers >= 1' --jobs 0 --only pcp-stat-order
	expect 2 "unknown id\(s\): nosuch \(see --list\)" --only pcp-stat-order,nosuch
	expect 2 "--json: cannot write '$WORK/missing/z.json': no such directory" --json "$WORK/missing/z.json" --only pcp-stat-order
	expect 0 'pcp-stat-order' --list
	[[ ! -e $WORK/missing ]] || fail "bugzoo created $WORK/missing"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
verdict

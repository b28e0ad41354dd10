#!/usr/bin/env bash
# tests/verbs/test.sh usage ROOT WORK - ./mmfuzz test's bad arguments (ctest
# verbs_test_usage): each exits 2 with its message and the usage, before the
# toolchain check, a configure or a build (a run of the suite from inside the
# suite would take its whole time).
VERB=test
# shellcheck source=tests/verbs/lib.sh
source "$(dirname "$0")/lib.sh"

case $mode in
usage)
	EXPECT_TIMEOUT=30
	expect 2 "--jobs wants a positive integer, not '0'" --jobs 0
	expect 2 "--jobs wants a positive integer, not 'abc'" --jobs abc
	expect 2 "no test preset 'nosuch' \(known: .*debug asan tsan" --preset nosuch
	expect 2 '--quick and --preset do not mix' --quick --preset debug
	expect 2 "unknown argument '--bogus'" --bogus
	expect 2 "unknown argument 'extra'" extra
	expect 2 '-R needs a value' -R
	expect 2 'usage: mmfuzz test \[--preset P\]' --jobs
	expect 0 'usage: mmfuzz test' --help
	;;
*)
	fail "unknown mode $mode"
	;;
esac
verdict

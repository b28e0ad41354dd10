#!/usr/bin/env bash
# tests/verbs/repro.sh usage ROOT WORK - ./mmfuzz repro's bad arguments
# (ctest verbs_repro_usage): each exits 2 with its message before the ASan
# build is made - a device among them ($FIFO: minimize copied /dev/zero until
# the disk filled, repro and trace read it until memory ran out).
VERB=repro
# shellcheck source=tests/verbs/lib.sh
source "$(dirname "$0")/lib.sh"
EXPECT_TIMEOUT=30

case $mode in
usage)
	expect 2 'usage: mmfuzz repro TARGET FILE' buddy
	expect 2 'usage: mmfuzz repro TARGET FILE' buddy "$ROOT/corpus/buddy/basic" --bogus
	expect 2 "unknown target 'nosuch'" nosuch "$ROOT/corpus/buddy/basic"
	expect 2 'cannot read .*/missing: No such file' buddy "$WORK/missing"
	expect 2 'is a directory; give one input file' buddy "$ROOT/corpus/buddy"
	expect 2 "$FIFO is not a regular file" buddy "$FIFO"
	refused_before_build buddy "$FIFO"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
verdict

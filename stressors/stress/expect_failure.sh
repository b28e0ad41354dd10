#!/bin/sh
# expect_failure.sh REGEX CMD... - run CMD; pass only if it exits 1, its last
# stdout line is FAILURE, and its output matches REGEX (extended).  For the
# stressor's planted faults: a stressor that cannot fail is worse than none.
re=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out" | tail -n 40
if [ "$rc" -ne 1 ]; then
	echo "expect_failure: exit status $rc, expected 1" >&2
	exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq -- "$re"; then
	echo "expect_failure: output does not match '$re'" >&2
	exit 1
fi
exit 0

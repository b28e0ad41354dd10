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
	# the last of two no longer wins silently; -R '' ran every test
	expect 2 '-R given twice' -R a -R b
	expect 2 '--jobs given twice' --jobs 1 -j 2
	expect 2 '--preset debug given twice' --preset debug --preset=debug
	expect 2 '-R needs a value' -R ''
	;;
regex)
	# A stand-in tree (MMFUZZ_ROOT): presets p1 (tests alpha, beta) and p2 (beta).
	# -R alpha matches nothing in p2: that was "1 failed", exit 1.
	T=$WORK/root
	mkdir -p "$T"
	ln -s "$ROOT/tools" "$T/tools"
	cat >"$T/CMakeLists.txt" <<'EOF_CM'
cmake_minimum_required(VERSION 3.21)
project(standin NONE)
enable_testing()
if(WITH_ALPHA)
  add_test(NAME alpha COMMAND true)
endif()
add_test(NAME beta COMMAND true)
EOF_CM
	cat >"$T/CMakePresets.json" <<'EOF_P'
{"version": 3,
 "configurePresets": [
  {"name": "p1", "binaryDir": "${sourceDir}/build/p1", "cacheVariables": {"WITH_ALPHA": "ON"}},
  {"name": "p2", "binaryDir": "${sourceDir}/build/p2"}],
 "buildPresets": [{"name": "p1", "configurePreset": "p1"}, {"name": "p2", "configurePreset": "p2"}],
 "testPresets": [{"name": "p1", "configurePreset": "p1"}, {"name": "p2", "configurePreset": "p2"}]}
EOF_P
	t() { MMFUZZ_ROOT=$T MMFUZZ_NO_INSTALL=1 timeout -k 5 120 "$ROOT/tools/verbs/test" "$@" 2>&1; }
	out=$(t --preset p1 --preset p2 -R alpha)
	rc=$?
	echo "$out"
	[[ $rc == 0 ]] || fail "-R alpha over p1 p2: exit $rc, want 0"
	grep -q '^mmfuzz: 1 passed, 0 failed$' <<<"$out" || fail "-R alpha over p1 p2: not '1 passed, 0 failed'"
	grep -q 'p2 .*0 tests: none matches -R alpha' <<<"$out" || fail "p2 not said to have no match"
	out=$(t --preset p1 --preset p2 -R nosuch)
	rc=$?
	echo "$out"
	[[ $rc == 1 ]] || fail "-R nosuch: exit $rc, want 1 (no test anywhere)"
	grep -q 'no test of p1 p2 matches -R nosuch' <<<"$out" || fail "-R nosuch: not said"
	grep -q '^mmfuzz: 0 passed, 1 failed$' <<<"$out" || fail "-R nosuch: not '0 passed, 1 failed'"
	out=$(t --preset p1 --preset p2)
	rc=$?
	[[ $rc == 0 ]] && grep -q '^mmfuzz: 3 passed, 0 failed$' <<<"$out" || fail "no -R: exit $rc:"$'\n'"$out"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
verdict

#!/usr/bin/env bash
# tests/verbs/bugzoo.sh MODE ROOT WORK
#   usage      ./mmfuzz bugzoo's bad arguments (ctest verbs_bugzoo_usage):
#              each exits 2 with its message before a build or a detector
#              run starts (a run would outlast the test's timeout).
#   interrupt  (ctest verbs_bugzoo_interrupt) SIGINT during a stand-in
#              detector run: table and JSON written, exit 130.
#   configure  (ctest verbs_bugzoo_configure) a build dir with a cache but no
#              build.ninja (a failed configure's) is configured again, by the
#              runner (a stand-in cmake, on interrupt's stand-in tree) and by
#              tools/bugzoo/variant.cmake's zoo_variant() (real cmake on a
#              stand-in source tree) - only a missing cache was, and every
#              later build failed.
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
	# refused after the whole run (builds, detectors), the results not stored
	expect 2 '--store records a full run only' --store --smoke --only pcp-stat-order --budget 1
	expect 2 '--store records a full run only' --store --only pcp-stat-order --budget 1
	# access() says yes to root on /proc: a traceback (exit 1) after the run, the JSON lost
	expect 2 "--json: cannot write '/proc/mmfuzz-zoo.json': its directory takes no new file" \
		--json /proc/mmfuzz-zoo.json --smoke --only pcp-stat-order --budget 1
	# no id at all: it ran nothing and said SUCCESS (exit 0)
	expect 2 '--only names no id' --only , --smoke
	# the last of two no longer wins silently; --list ignored the rest
	expect 2 '--budget given twice' --budget 1 --budget 2 --only pcp-stat-order
	expect 2 '--list takes no other option' --list --only nosuch
	for a in "--store --smoke" "--json /proc/mmfuzz-zoo.json --smoke --only pcp-stat-order" "--only , --smoke"; do
		# shellcheck disable=SC2086
		out=$(timeout -k 5 30 "$MMFUZZ" bugzoo $a --budget 1 2>&1)
		if grep -Eq '^\[[0-9:]+\] (bugzoo:|built )' <<<"$out"; then
			fail "bugzoo $a: built or ran before refusing:"$'\n'"$out"
		else
			echo "ok: bugzoo $a -> refused before any build"
		fi
	done
	[[ ! -e $WORK/missing ]] || fail "bugzoo created $WORK/missing"
	;;
interrupt | configure)
	# A stand-in tree (MMFUZZ_ROOT): build/bugzoo-none configured and "built" (phony ninja
	# targets), its sched stressor a stand-in that runs until killed.  SIGINT to the verb
	# during the control run: that detector stopped, the table and the JSON written
	# ("interrupted"), exit 130.  It was a traceback, every result lost, exit 1.
	T=$WORK/root
	B=$T/build/bugzoo-none
	mkdir -p "$T/targets" "$B/stressors/sched" "$B/stressors/stress" "$B/tests"
	ln -s "$ROOT/tools" "$T/tools"
	: >"$T/targets/TARGETS"
	printf 'MM_INJECT:STRING=\nMM_WERROR:BOOL=OFF\n' >"$B/CMakeCache.txt"
	printf 'rule nothing\n  command = true\n' >"$B/build.ninja"
	for t in mmfuzz-sched-stress mmfuzz-stress test_pcp; do
		printf 'build %s: phony\n' "$t" >>"$B/build.ninja"
	done
	printf '#!/bin/sh\necho $$ >"$STANDIN_PID"\nwhile :; do echo "run 1 seed 1"; sleep 0.1; done\n' \
		>"$B/stressors/sched/mmfuzz-sched-stress"
	chmod +x "$B/stressors/sched/mmfuzz-sched-stress"
	export STANDIN_PID=$WORK/standin.pid
	path=$PATH
	if [[ $mode == configure ]]; then
		# build/bugzoo-none as a failed configure leaves it: its cache (with the -D values), no
		# build.ninja; a stand-in cmake first on PATH writes the phony one back.
		mv "$B/build.ninja" "$WORK/build.ninja"
		standin_cmake "$WORK/bin"
		export STANDIN_CMAKE=$WORK/cmake.log STANDIN_NINJA=$WORK/build.ninja
		path=$WORK/bin:$PATH
	fi
	PATH=$path MMFUZZ_ROOT=$T python3 "$ROOT/tools/verbs/bugzoo" --only pcp-stat-order --budget 60 --seeds 1 \
		--json "$WORK/z.json" >"$WORK/log" 2>&1 &
	interrupted_130 $! "the stand-in detector" "$STANDIN_PID" "$WORK/log"
	if [[ $mode == configure ]]; then
		grep -qx -- "--preset bugzoo -B $B -DMM_INJECT= -DMM_WERROR=OFF" "$STANDIN_CMAKE" ||
			fail "build/bugzoo-none (a cache, no build.ninja) was not configured again (cmake calls: $(cat "$STANDIN_CMAKE"))"
		# zoo_variant(): real cmake on a stand-in source tree whose configure fails under
		# STANDIN_CONFIGURE_FAIL, leaving a cache and no build.ninja; then configured and built.
		V=$WORK/variant-src VB=$WORK/variant-build
		mkdir -p "$V"
		printf '%s\n' 'cmake_minimum_required(VERSION 3.16)' 'project(v NONE)' \
			'if(DEFINED ENV{STANDIN_CONFIGURE_FAIL})' '  message(FATAL_ERROR "stand-in configure failure")' \
			'endif()' 'add_custom_target(t)' >"$V/CMakeLists.txt"
		STANDIN_CONFIGURE_FAIL=1 cmake -S "$V" -B "$VB" -G Ninja >"$WORK/variant-fail.log" 2>&1 &&
			fail "the stand-in configure did not fail"
		[[ -f $VB/CMakeCache.txt && ! -e $VB/build.ninja ]] ||
			fail "the failed configure did not leave a cache without build.ninja: $(ls -A "$VB")"
		printf 'include(%s/tools/bugzoo/variant.cmake)\nzoo_variant(none ${DIR} t)\n' "$ROOT" >"$WORK/variant-test.cmake"
		if out=$(cmake -DSRC="$V" -DREF="$WORK/none" -DCC=gcc -DFLAGS= -DDEBUG_LEVEL=0 -DDIR="$VB" \
			-P "$WORK/variant-test.cmake" 2>&1) && [[ -f $VB/build.ninja ]]; then
			echo "ok: zoo_variant() configured again a build dir with a cache and no build.ninja, and built it"
		else
			fail "zoo_variant() on a cache without build.ninja:"$'\n'"$out"
		fi
		verdict
		exit
	fi
	expect_gone "the stand-in detector" "$STANDIN_PID"
	grep -q 'interrupted: the table covers what ran' "$WORK/log" || fail "the interrupt was not said"
	grep -q '^control (bugzoo-none)' "$WORK/log" || fail "no table"
	python3 - "$WORK/z.json" <<'PY' || fail "the JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["interrupted"] is True and d["bugs"] == [] and d["control"]["findings"] == 0, d
PY
	;;
*)
	fail "unknown mode $mode"
	;;
esac
verdict

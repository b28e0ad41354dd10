#!/usr/bin/env bash
# tests/verbs/stress.sh usage ROOT WORK - ./mmfuzz stress's bad arguments
# (ctest verbs_stress_usage): each exits 2 with its message, and an unknown
# MODE, or a --json/--artifact file in a missing directory, is refused before
# build/stress-* is configured or built; a build dir with a cache but no
# build.ninja (a failed configure's) is configured again (a stand-in cmake)
# - every later run failed in ninja.
VERB=stress
# shellcheck source=tests/verbs/lib.sh
source "$(dirname "$0")/lib.sh"

case $mode in
usage)
	EXPECT_TIMEOUT=60
	expect 2 'a MODE is required' --build-dir "$WORK/none"
	expect 2 '--build-dir needs a value' pages --build-dir
	expect 2 '--tsan and --asan each choose the build: give one' pages --tsan --asan
	expect 2 '--debug and --build-dir each choose the build: give one' pages --debug --build-dir "$WORK/none"
	expect 2 "unknown mode 'nosuch' \(modes: pages pcp bulk slub kmalloc mixed\)" nosuch --time 1
	expect 2 "unknown mode 'nosuch'" nosuch --deterministic --seed 1
	expect 2 "--json: cannot write '.*/missing/s.json': no such directory" pages --time 1 --json "$WORK/missing/s.json"
	expect 2 "--json: cannot write '$WORK': it is a directory" pages --json="$WORK"
	expect 2 "--artifact: cannot write '.*/missing/a.sched': no such directory" pages --deterministic --artifact "$WORK/missing/a.sched"
	expect 2 '--json needs a file name' pages --json
	expect 2 "--replay: cannot read '$FIFO': not a regular file" pages --deterministic --replay "$FIFO"
	expect 2 "--replay: cannot read '$WORK': not a regular file" pages --deterministic --replay "$WORK"
	expect 2 '--replay needs a file name' pages --deterministic --replay
	# Nothing built and --no-build: said, not a silent exit (the deterministic
	# driver's lookup once died quietly under set -e when the build was missing).
	expect 1 'stressors/sched/mmfuzz-sched-stress is not built \(--no-build runs only what is built\)' \
		pages --deterministic --seed 1 --no-build --build-dir "$WORK/none"
	expect 1 'stressors/stress/mmfuzz-stress is not built \(--no-build' pages --time 1 --no-build --build-dir "$WORK/none"
	refused_before_build nosuch --build-dir "$WORK/build"
	refused_before_build pages --json "$WORK/missing/s.json" --build-dir "$WORK/build"
	[[ ! -e $WORK/build && ! -e $WORK/none ]] || fail "stress created a build directory"
	# A failed configure's leftovers (a cache, no build.ninja) are configured again - only a missing
	# cache was, and every later run failed in ninja; a configured build dir is not.  A stand-in cmake
	# and a stand-in stressor in --build-dir.
	standin_cmake "$WORK/bin"
	export STANDIN_CMAKE=$WORK/cmake.log
	H=$WORK/half
	mkdir -p "$H/stressors/stress" && : >"$H/CMakeCache.txt"
	printf '#!/bin/sh\necho "stand-in mmfuzz-stress $*"\n' >"$H/stressors/stress/mmfuzz-stress"
	chmod +x "$H/stressors/stress/mmfuzz-stress"
	PATH=$WORK/bin:$PATH expect 0 '^stand-in mmfuzz-stress pages --time 1$' pages --time 1 --build-dir "$H"
	grep -q -- "-S $ROOT -B $H" "$STANDIN_CMAKE" ||
		fail "a cache without build.ninja was not configured again (cmake calls: $(cat "$STANDIN_CMAKE"))"
	: >"$STANDIN_CMAKE"
	PATH=$WORK/bin:$PATH expect 0 '^stand-in mmfuzz-stress pages --time 1$' pages --time 1 --build-dir "$H"
	grep -q -- "-B $H" "$STANDIN_CMAKE" && fail "a configured build dir was configured again"
	grep -qx -- "--build $H --target mmfuzz-stress" "$STANDIN_CMAKE" || fail "mmfuzz-stress was not built: $(cat "$STANDIN_CMAKE")"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
verdict

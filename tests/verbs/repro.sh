#!/usr/bin/env bash
# tests/verbs/repro.sh MODE ROOT WORK
#   usage    ./mmfuzz repro's bad arguments (ctest verbs_repro_usage): each
#            exits 2 with its message before the ASan build is made - a
#            device among them ($FIFO: minimize copied /dev/zero until the
#            disk filled, repro and trace read it until memory ran out)
#   timeout  (ctest verbs_repro_timeout) on a stand-in tree (MMFUZZ_ROOT)
#            whose replay never ends - a libFuzzer timeout-* input that
#            still hangs - and ignores SIGTERM: the replay is stopped at the
#            bound (ten times corpus/T.options' timeout, or --timeout S),
#            with what it started, and counts as failing (exit 1); it used
#            to wait for ever; a replay binary's own refusal (exit 2) is
#            exit 2, no verdict, not "still fails"; a build/asan with a
#            cache but no build.ninja (a failed configure's) is configured
#            again (a stand-in cmake) - every later repro failed in ninja
VERB=repro
# shellcheck source=tests/verbs/lib.sh
source "$(dirname "$0")/lib.sh"
EXPECT_TIMEOUT=30

case $mode in
usage)
	expect 2 'usage: mmfuzz repro TARGET FILE' buddy
	# An unknown option is named (it was only the usage line).
	expect 2 'unknown option --bogus \(see --help\)' buddy "$ROOT/corpus/buddy/basic" --bogus
	expect 2 'unknown option --no-bulid \(see --help\)' buddy "$ROOT/corpus/buddy/basic" --no-bulid
	refused_before_build buddy "$ROOT/corpus/buddy/basic" --no-bulid
	# Another target's input (any bytes decode for any target: it "passed"): refused, the right command named.
	expect 2 "corpus/buddy/basic is an input of the buddy target, not slub \(it lies under corpus/buddy/\): replay it with \./mmfuzz repro buddy " slub "$ROOT/corpus/buddy/basic"
	expect 2 'is an input of the buddy target, not watermark \(it lies under corpus/regressions/buddy/\)' watermark "$ROOT/corpus/regressions/buddy/src/2026-11-30-B3-isolate-adjacent.txt"
	ln -s "$ROOT/corpus/buddy/basic" "$WORK/seed-link"
	expect 2 'is an input of the buddy target, not slub \(it lies under corpus/buddy/\)' slub "$WORK/seed-link"
	cp "$ROOT/corpus/buddy/basic" "$WORK/clusterfuzz-testcase-minimized-fuzz_buddy-5724"
	expect 2 'is an input of the buddy target, not slub \(its name holds fuzz_buddy.*repro buddy ' slub "$WORK/clusterfuzz-testcase-minimized-fuzz_buddy-5724"
	refused_before_build slub "$ROOT/corpus/buddy/basic"
	expect 2 "unknown target 'nosuch'" nosuch "$ROOT/corpus/buddy/basic"
	expect 2 'cannot read .*/missing: No such file' buddy "$WORK/missing"
	# The fuzzer's name (OSS-Fuzz's, the binary's) names the target too.
	expect 2 'cannot read .*/missing: No such file' fuzz_buddy "$WORK/missing"
	expect 2 "unknown target 'fuzz_nosuch'" fuzz_nosuch "$ROOT/corpus/buddy/basic"
	# A deterministic stressor's artifact read as fuzz bytes once "passed": it names its own replay.
	printf '# mmfuzz deterministic scheduler failure artifact\nformat: mmfuzz-sched 1\nbuild: x\nscenario: stress\nconfig: mode=slub tasks=3 cpus=4 steps=24\n' >"$WORK/a.sched"
	expect 2 "a.sched is a deterministic-scheduler failure artifact, not a fuzz input: replay it with \./mmfuzz stress slub --deterministic --replay .*a.sched" sched "$WORK/a.sched"
	refused_before_build sched "$WORK/a.sched"
	expect 2 'is a directory; give one input file' buddy "$ROOT/corpus/buddy"
	expect 2 "$FIFO is not a regular file" buddy "$FIFO"
	refused_before_build buddy "$FIFO"
	expect 2 "--timeout wants seconds from 0 \(no bound\) to 86400, not 'soon'" buddy "$ROOT/corpus/buddy/basic" --timeout soon
	expect 2 '--timeout wants seconds' buddy "$ROOT/corpus/buddy/basic" --timeout=-1
	expect 2 '--timeout needs a value' buddy "$ROOT/corpus/buddy/basic" --timeout
	refused_before_build buddy "$ROOT/corpus/buddy/basic" --timeout soon
	;;
timeout)
	T=$WORK/root
	mkdir -p "$T/targets" "$T/corpus" "$T/build/asan/targets"
	ln -s "$ROOT/tools" "$T/tools"
	echo a >"$T/targets/TARGETS"
	printf '[libfuzzer]\ntimeout = 0.3\n' >"$T/corpus/a.options"
	echo x >"$WORK/input"
	cat >"$T/build/asan/targets/fuzz_a" <<'STUB'
#!/usr/bin/env bash
# The replay main's stand-in: --print decodes; a replay never ends, SIGTERM ignored.
# STUB_ABORT: a violation (abort); STUB_UBSAN: a sanitizer error that exits 1 (UBSan's way).
[[ $1 == --print ]] && { echo "setup config=micro"; exit 0; }
[[ $1 == --dict ]] && { echo 'op_alloc="\x5c\x00"'; exit 0; }
[[ ${STUB_PASS:-} ]] && exit 0
[[ ${STUB_ABORT:-} ]] && { echo "VIOLATION B2"; kill -ABRT $$; }
[[ ${STUB_UBSAN:-} ]] && { echo "runtime error: shift exponent 64"; exit 1; }
[[ ${STUB_REFUSE:-} ]] && { echo "fuzz_a: $1: cannot read" >&2; exit 2; }
echo "replay started"
trap '' TERM
sleep 600 &
echo $! >"${STANDIN_CHILD:?}"
sleep 600
STUB
	chmod +x "$T/build/asan/targets/fuzz_a"
	export STANDIN_CHILD=$WORK/child.pid
	# expect runs "$MMFUZZ" "$VERB" ARGS: the verb on the stand-in tree, target a.
	MMFUZZ=$WORK/repro-standin
	printf '#!/usr/bin/env bash\nMMFUZZ_ROOT=%q exec %q "$@"\n' "$T" "$ROOT/tools/verbs/repro" >"$MMFUZZ"
	chmod +x "$MMFUZZ"
	VERB=a
	expect 1 'still runs after 3 s \(ten times the timeout of 0.3 s in corpus/a.options\) and was stopped' "$WORK/input" --no-build
	expect 1 'still runs after 1 s \(--timeout\)' "$WORK/input" --no-build --timeout 1
	expect 1 'replay started' "$WORK/input" --no-build --timeout=2
	expect_gone "the replay's child" "$STANDIN_CHILD"
	STUB_PASS=1 expect 0 'PASS - .* replays without a violation' "$WORK/input" --no-build --timeout 0
	# The replay binary's own refusal (exit 2) is no verdict: it was "FAIL - still fails", exit 1.
	STUB_REFUSE=1 expect 2 'no verdict - fuzz_a exited with status 2, not a violation' "$WORK/input" --no-build
	# The main verdict: a violation (abort) or a sanitizer error exiting 1 (UBSan) still fails, exit 1.
	STUB_ABORT=1 expect 1 'FAIL - .*/input still fails \(signal 6\)' "$WORK/input" --no-build
	STUB_UBSAN=1 expect 1 'FAIL - .*/input still fails \(exit status 1\)' "$WORK/input" --no-build
	# An empty FILE replays (libFuzzer saves crashes on it) but is said; so is op text not named *.txt
	# (replayed as bytes: it "passed").  Random bytes and *.txt get no such line.
	: >"$WORK/empty"
	STUB_PASS=1 expect 0 'warning: .*/empty is empty: it runs the setup defaults and no op' "$WORK/empty" --no-build
	printf '# a seed\n\nsetup config=micro\nalloc order=1\n' >"$WORK/basic.ops"
	STUB_PASS=1 expect 0 'warning: .*/basic.ops looks like op text but is not named \*\.txt: it is replayed as input bytes' "$WORK/basic.ops" --no-build
	printf 'alloc order=1\n' >"$WORK/ops-only"
	STUB_PASS=1 expect 0 'ops-only looks like op text' "$WORK/ops-only" --no-build
	printf 'setup config=micro\n' >"$WORK/p.txt"
	head -c 64 /dev/urandom >"$WORK/bytes" && printf '\0' >>"$WORK/bytes"
	for f in p.txt bytes input; do
		out=$(STUB_PASS=1 "$MMFUZZ" a "$WORK/$f" --no-build 2>&1)
		grep -q warning <<<"$out" && fail "repro $f: a warning it should not have:"$'\n'"$out"
	done
	# The build: a failed configure's leftovers (a cache, no build.ninja) are configured again - only
	# a missing cache was, and every later repro failed in ninja; a configured build/asan is not.
	standin_cmake "$WORK/bin"
	export STANDIN_CMAKE=$WORK/cmake.log
	: >"$T/build/asan/CMakeCache.txt"
	PATH=$WORK/bin:$PATH STUB_PASS=1 expect 0 'PASS - ' "$WORK/input" --timeout 0
	grep -qx -- '--preset asan' "$STANDIN_CMAKE" ||
		fail "build/asan (a cache, no build.ninja) was not configured again (cmake calls: $(cat "$STANDIN_CMAKE"))"
	: >"$STANDIN_CMAKE"
	PATH=$WORK/bin:$PATH STUB_PASS=1 expect 0 'PASS - ' "$WORK/input" --timeout 0
	grep -q -- '--preset' "$STANDIN_CMAKE" && fail "a configured build/asan was configured again"
	grep -qx -- '--build .*/build/asan --target fuzz_a' "$STANDIN_CMAKE" || fail "fuzz_a was not built: $(cat "$STANDIN_CMAKE")"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
verdict

#!/usr/bin/env bash
# tests/verbs/minimize.sh - ctest for ./mmfuzz minimize (tests/verbs_minimize_coverage.cmake).
#
#   minimize.sh usage ROOT WORK          bad arguments: exit 2 and a message naming what is wrong;
#                                        -o onto an existing file refused without --force (it was
#                                        replaced silently), the default FILE.min replaced with a
#                                        word; on a stand-in binary, SIGINT after one kept step:
#                                        that verified input written to OUT, exit 130 (it was lost)
#   minimize.sh injected ROOT WORK BUILD a crash of a bug-zoo variant shrinks and still fails the same way
#
# The correct allocator has no crashing input (by design), so the crash comes
# from the bug-zoo variant buddy-merge-across-zones (free_one_page merges a
# block with its buddy across a zone boundary; checker B2), built as a
# libFuzzer binary in BUILD by the verb's own --inject/--build-dir.
set -u
VERB=minimize
# shellcheck source=tests/verbs/lib.sh
source "$(dirname "$0")/lib.sh"

case $mode in
usage)
	EXPECT_TIMEOUT=120
	printf 'x' >"$WORK/in"
	expect 2 'usage: mmfuzz minimize'
	expect 2 'usage: mmfuzz minimize' buddy
	expect 2 "unknown target 'nosuch'" nosuch "$WORK/in"
	expect 2 'cannot read .*/missing: No such file' buddy "$WORK/missing"
	expect 2 'cannot read .*/missing: No such file' fuzz_buddy "$WORK/missing"
	expect 2 'is a directory' buddy "$WORK"
	expect 2 "$FIFO is not a regular file" buddy "$FIFO"
	expect 2 'unknown option --frob' buddy "$WORK/in" --frob
	expect 2 '--time needs seconds' buddy "$WORK/in" --time soon
	expect 2 '--time must be positive' buddy "$WORK/in" --time 0
	expect 2 '--time must be positive' buddy "$WORK/in" --time nan
	expect 2 "-o: cannot write '.*/missing/x': no such directory" buddy "$WORK/in" -o "$WORK/missing/x"
	expect 2 '-o needs a value' buddy "$WORK/in" -o
	expect 2 'never overwrites the original' buddy "$WORK/in" -o "$WORK/in"
	expect 2 "unknown injection 'no-such-bug'" buddy "$WORK/in" --inject no-such-bug
	expect 2 'not a directory' buddy --corpus "$WORK/in"
	expect 0 'usage: mmfuzz minimize' --help
	expect 0 '-o OUT, --out OUT' --help
	# the short usage's corpus form: --build-dir and --no-build work with --corpus
	expect 2 'minimize TARGET --corpus DIR \[-o OUTDIR\] \[--build-dir DIR\] \[--no-build\]' buddy
	# -o onto an existing file (another crash, say): refused before the build, the file kept
	echo precious >"$WORK/other"
	expect 2 "-o $WORK/other exists \(9 bytes\): --force replaces it" buddy "$WORK/in" -o "$WORK/other"
	[[ $(cat "$WORK/other") == precious ]] || fail "-o without --force changed $WORK/other"
	expect 2 '--force is for -o OUT of one FILE' buddy --corpus "$WORK" --force
	# A binary that fails before it runs any input (a stand-in for a variant
	# that crashes in LLVMFuzzerInitialize): refused, not "minimized" to
	# the same size and called verified.
	mkdir -p "$WORK/stub/targets"
	printf '#!/bin/sh\necho "INFO: Seed: 1"\necho "==1==ERROR: AddressSanitizer: use-after-poison on address 0x1"\nexit 1\n' \
		>"$WORK/stub/targets/fuzz_buddy"
	chmod +x "$WORK/stub/targets/fuzz_buddy"
	expect 1 'fails before it runs any input - in its start-up, with asan:use-after-poison' \
		buddy "$WORK/in" --build-dir "$WORK/stub" --no-build
	[[ ! -e $WORK/in.min ]] || fail "minimize wrote $WORK/in.min for a start-up failure"
	# --force: past the check (to the stand-in's start-up failure)
	expect 1 'fails before it runs any input' buddy "$WORK/in" -o "$WORK/other" --force --build-dir "$WORK/stub" --no-build
	# Interrupted: a stand-in whose first minimizer step drops a byte (the replay still fails C1)
	# and whose second step hangs; SIGINT to the verb there.
	mkdir -p "$WORK/stub2/targets"
	cat >"$WORK/stub2/targets/fuzz_buddy" <<'STUB'
#!/usr/bin/env bash
for a; do last=$a; done
if [[ " $* " == *" -minimize_crash_internal_step=1 "* ]]; then
	for a; do [[ $a == -exact_artifact_path=* ]] && art=${a#*=}; done
	if [[ -e $STANDIN_STEP ]]; then echo $$ >"$STANDIN_PID"; exec sleep 600; fi
	: >"$STANDIN_STEP"
	head -c $(($(stat -c %s "$last") - 1)) "$last" >"$art"
	exit 0
fi
echo "Running: $last"
echo "==mmfuzz== VIOLATION C1 in target buddy"
exit 1
STUB
	chmod +x "$WORK/stub2/targets/fuzz_buddy"
	printf abcdefgh >"$WORK/crash"
	echo old >"$WORK/crash.min"
	export STANDIN_STEP=$WORK/step STANDIN_PID=$WORK/step.pid
	"$MMFUZZ" minimize buddy "$WORK/crash" --build-dir "$WORK/stub2" --no-build --time 100 >"$WORK/ilog" 2>&1 &
	interrupted_130 $! "the minimizer's second step" "$STANDIN_PID" "$WORK/ilog"
	grep -q "replacing .*/crash.min (4 bytes)" "$WORK/ilog" || fail "the default OUT was replaced without a word"
	grep -q "interrupted at 7 bytes (from 8): the smallest input verified so far, failing with C1, written to .*/crash.min$" \
		"$WORK/ilog" || fail "the interrupt's result was not said"
	[[ $(cat "$WORK/crash.min") == abcdefg ]] || fail "OUT is not the 7-byte input verified before the interrupt"
	expect_gone "the minimizer step" "$STANDIN_PID"
	mkdir -p "$WORK/c" "$WORK/c.min" && echo a >"$WORK/c/x" && echo b >"$WORK/c.min/y"
	expect 2 'the output directory .*/c.min \(the default; -o DIR names another\) is not empty' \
		buddy --corpus "$WORK/c" --build-dir "$WORK/stub" --no-build
	expect 2 "-o $WORK/c.min is not empty" buddy --corpus "$WORK/c" -o "$WORK/c.min" --build-dir "$WORK/stub" --no-build
	# An OUT whose directory takes no new file (/proc: access() says yes to root) was a traceback
	# (exit 1, "does not fail") after the build and the whole minimization; -o DIR there, after the build.
	expect 2 "-o: cannot write '/proc/x.min': its directory takes no new file" buddy "$WORK/in" -o /proc/x.min
	refused_before_build buddy "$WORK/in" -o /proc/x.min
	expect 2 '-o /proc/nd: cannot create it' buddy --corpus "$WORK/c" -o /proc/nd --build-dir "$WORK/stub" --no-build
	# An empty corpus is a bad argument (it was exit 1, after the build); --time with --corpus was ignored.
	mkdir -p "$WORK/e"
	expect 2 "--corpus $WORK/e has no input files" buddy --corpus "$WORK/e" --build-dir "$WORK/stub" --no-build
	[[ ! -e $WORK/e.min ]] || fail "minimize made $WORK/e.min for an empty corpus"
	expect 2 '--time bounds the crash minimizer: a corpus merge \(--corpus\) takes none' \
		buddy --corpus "$WORK/c" -o "$WORK/c2.min" --time 5 --build-dir "$WORK/stub" --no-build
	# What counts as "failing the same way": the allocator's BUG()s and bounded-loop stops by
	# their place - libFuzzer calls every abort() a deadly signal.
	python3 - "$ROOT/tools/verbs/minimize" <<'PY' && echo "ok: signature() tells BUG()s and T1 stops apart" || fail "signature()"
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.SourceFileLoader("minimize", sys.argv[1])
spec = importlib.util.spec_from_loader("minimize", loader)
m = importlib.util.module_from_spec(spec)
loader.exec_module(m)
ds = "\n==1== ERROR: libFuzzer: deadly signal\n"
a = m.signature("mmfuzz: BUG at allocator/page/buddy.c:123: PageBuddy(page)" + ds)
b = m.signature("mmfuzz: BUG at allocator/page/buddy.c:99: order" + ds)
c = m.signature("mmfuzz: T1 violated: bounded loop exceeded in free_pcppages_bulk: x after 7 iterations (a hang)" + ds)
assert a == "BUG:allocator/page/buddy.c:123", a
assert len({a, b, c, m.signature(ds)}) == 4, (a, b, c)
assert m.signature("==mmfuzz== VIOLATION B3 in target buddy" + ds) == "B3"
PY
	;;
injected)
	BUILD=$4
	in=$ROOT/tests/verbs/minimize-b2.txt    # op text: fails B2 at setup on the variant
	ok=$ROOT/tests/verbs/minimize-pass.txt  # passes on the variant
	sum0=$(sha256sum <"$in")
	out=$("$MMFUZZ" minimize buddy "$in" --inject buddy-merge-across-zones --build-dir "$BUILD" \
		--time 10 -o "$WORK/min" 2>&1)
	rc=$?
	echo "$out"
	[[ $rc == 0 ]] || fail "minimize exited $rc, want 0"
	[[ $(sha256sum <"$in") == "$sum0" ]] || fail "the original input changed"
	[[ -s $WORK/min ]] || fail "no minimized file $WORK/min"
	n0=$(sed -n "s|^== original: $in (\([0-9]*\) bytes, 13 ops) ==\$|\1|p" <<<"$out")
	n1=$(stat -c %s "$WORK/min" 2>/dev/null || echo 999999)
	[[ -n $n0 ]] || fail "no header '== original: $in (N bytes, 13 ops) ==' before the original's op program"
	((n1 < ${n0:-0})) || fail "minimized input has $n1 bytes, the original ${n0:-?}"
	grep -Eq "^== minimized: $WORK/min \($n1 bytes, [0-9]+ ops\) ==\$" <<<"$out" ||
		fail "no header '== minimized: $WORK/min ($n1 bytes, N ops) =='"
	grep -q "still fails with B2" <<<"$out" || fail "no 'still fails with B2' verdict"
	# Independently: the minimized input fails B2 on the variant, and decodes.
	rep=$("$BUILD/targets/fuzz_buddy" "$WORK/min" 2>&1)
	grep -q "==mmfuzz== VIOLATION B2" <<<"$rep" || fail "the minimized input does not fail B2 on the variant:"$'\n'"$rep"
	# The variant boots broken: the harness's check before the first op says so.
	grep -q "==mmfuzz== VIOLATION B2 in target buddy, at setup, " <<<"$rep" ||
		fail "the minimized input's B2 is not reported at setup:"$'\n'"$rep"
	"$BUILD/targets/fuzz_buddy" --print "$WORK/min" | grep -q '^setup ' || fail "the minimized input does not decode"
	# A non-failing input: nothing to minimize (exit 1), and no output file.
	expect 1 'does not fail on fuzz_buddy .*nothing to minimize' buddy "$ok" --build-dir "$BUILD" --no-build -o "$WORK/none"
	[[ ! -e $WORK/none ]] || fail "an output file was written for an input that does not fail"
	;;
*)
	echo "usage: $0 usage|injected ROOT WORK [BUILD]" >&2
	exit 2
	;;
esac
verdict

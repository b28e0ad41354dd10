#!/usr/bin/env bash
# tests/verbs/trace.sh usage ROOT WORK - ./mmfuzz trace's bad arguments
# and tools/optext's (ctest verbs_trace_usage): each exits 2 with its message,
# before any build (the checks come first, so none of these needs build/optext).
VERB=trace
# shellcheck source=tests/verbs/lib.sh
source "$(dirname "$0")/lib.sh"

case $mode in
usage)
	EXPECT_TIMEOUT=60
	expect 2 'usage: mmfuzz trace TARGET FILE' buddy
	expect 2 "unknown target 'nosuch'" nosuch "$ROOT/corpus/buddy"
	expect 2 'cannot read .*/missing: no such file' buddy "$WORK/missing"
	expect 2 'cannot read .*/missing: no such file' fuzz_buddy "$WORK/missing"
	expect 2 'cannot read .*: it is a directory' buddy "$ROOT/corpus/buddy"
	expect 2 "cannot read $FIFO: not a regular file" buddy "$FIFO"
	expect 2 '--c needs a file name' buddy "$ROOT/corpus/buddy" --c
	expect 2 "--c: cannot write '.*/missing/r.c': no such directory" buddy "$ROOT/corpus/buddy/basic" --c "$WORK/missing/r.c"
	expect 2 "--c: cannot write '$WORK': it is a directory" buddy "$ROOT/corpus/buddy/basic" --c "$WORK"
	expect 2 "--encode: cannot write '.*/missing/b': no such directory" buddy "$ROOT/corpus/buddy/src/basic.txt" --encode "$WORK/missing/b"
	# Another target's input: refused before any build, the right command named (it printed another program).
	expect 2 "corpus/buddy/basic is an input of the buddy target, not slub \(it lies under corpus/buddy/\): use \./mmfuzz trace buddy " slub "$ROOT/corpus/buddy/basic"
	expect 2 'is an input of the buddy target, not watermark \(it lies under corpus/regressions/buddy/\)' watermark "$ROOT/corpus/regressions/buddy/src/2026-11-30-B3-isolate-adjacent.txt"
	cp "$ROOT/corpus/buddy/basic" "$WORK/crash-fuzz_buddy-1"
	expect 2 'is an input of the buddy target, not slub \(its name holds fuzz_buddy' slub "$WORK/crash-fuzz_buddy-1" --run
	expect 2 'the sched target has no --c' sched "$ROOT/corpus/sched/src/basic.txt" --c "$WORK/s.c"
	[[ ! -e $WORK/s.c ]] || fail "trace sched --c wrote $WORK/s.c"
	expect 2 '--encode writes bytes and runs nothing: use it without --run' buddy "$ROOT/corpus/buddy/src/basic.txt" --encode "$WORK/b" --run
	expect 2 '--encode writes bytes and runs nothing: use it without --c' buddy "$ROOT/corpus/buddy/src/basic.txt" --encode "$WORK/b" --c "$WORK/b.c"
	expect 2 '--timeout bounds a run: it goes with --run or --c' buddy "$ROOT/corpus/buddy/basic" --timeout 5
	expect 2 "--timeout wants seconds from 0 \(no bound\) to 86400, not 'nan'" buddy "$ROOT/corpus/buddy/basic" --run --timeout nan
	expect 2 '--timeout needs a value' buddy "$ROOT/corpus/buddy/basic" --run --timeout
	[[ ! -e $WORK/b && ! -e $WORK/b.c ]] || fail "trace --encode with --run/--c wrote a file"
	# The input is never written over by what is made from it (--c wrote the C file onto the crash file,
	# --encode the bytes onto the op text): refused, the file unchanged.
	cp "$ROOT/corpus/buddy/basic" "$WORK/crash" && cp "$ROOT/corpus/buddy/src/basic.txt" "$WORK/p.txt"
	ln -s p.txt "$WORK/link.txt"
	expect 2 "--c: cannot write '.*/crash': it is the input FILE itself" buddy "$WORK/crash" --c "$WORK/crash"
	expect 2 "--c: cannot write '.*/\./crash': it is the input FILE itself" buddy "$WORK/crash" --c "$WORK/./crash"
	expect 2 "--encode: cannot write '.*/p.txt': it is the input FILE itself" buddy "$WORK/p.txt" --encode "$WORK/p.txt"
	expect 2 "--encode: cannot write '.*/link.txt': it is the input FILE itself" buddy "$WORK/p.txt" --encode "$WORK/link.txt"
	cmp -s "$WORK/crash" "$ROOT/corpus/buddy/basic" || fail "trace --c wrote over its input FILE"
	cmp -s "$WORK/p.txt" "$ROOT/corpus/buddy/src/basic.txt" || fail "trace --encode wrote over its input FILE"
	# --ops lists the op table: a FILE or an option with it was dropped unseen (exit 0).
	expect 2 '--ops lists the op table and takes no FILE or other option \(got .*/crash\)' buddy "$WORK/crash" --ops
	expect 2 '--ops lists the op table and takes no FILE or other option \(got --c\)' buddy --ops --c "$WORK/o.c"
	expect 2 '--ops lists the op table and takes no FILE or other option \(got --run\)' buddy --ops --run
	expect 2 '--ops lists the op table and takes no FILE or other option \(got --encode\)' buddy --ops --encode "$WORK/o"
	expect 2 "--c: cannot write '/proc/x.c': its directory takes no new file" buddy "$WORK/crash" --c /proc/x.c
	expect 2 "--encode: cannot write '/proc/x': its directory takes no new file" buddy "$WORK/p.txt" --encode /proc/x
	expect 2 '--c given twice' buddy "$WORK/crash" --c "$WORK/a.c" --c "$WORK/b.c"
	expect 2 '--encode given twice' buddy "$WORK/p.txt" --encode "$WORK/a" --encode "$WORK/b"
	[[ ! -e $WORK/o.c && ! -e $WORK/a.c && ! -e $WORK/b.c ]] || fail "a refused trace wrote a C file"
	# The binary's exit status is no violation (that aborts): a --c file it cannot create (/proc takes
	# none, though access() says yes to root) exited 1, "the run hit a violation".  On a stand-in tree
	# whose fuzz_a refuses as the real one does, or aborts as a violation does.
	T=$WORK/root
	mkdir -p "$T/targets/common" "$T/corpus" "$T/build/optext/targets"
	ln -s "$ROOT/tools" "$T/tools"
	echo a >"$T/targets/TARGETS"
	cat >"$T/build/optext/targets/fuzz_a" <<'STUB'
#!/usr/bin/env bash
# fuzz_a's stand-in: --print decodes; --c OUT.c that cannot be made exits 2 (cli.c); a violation aborts.
# --encode IN [-o OUT] writes the bytes BYTES; STUB_C_WRITE=1: --c OUT.c writes it (/* c */) and runs.
# A FIFO as OUT would block the real binary's open() for ever: the stand-in says so and exits 3.
[[ ( $1 == --encode && -p ${4:-} ) || ( $1 == --c && -p $2 ) ]] && { echo "fuzz_a: opening a FIFO: blocked" >&2; exit 3; }
[[ $1 == --print && ${STUB_OPS:-} ]] && { printf 'setup config=micro\nalloc order=1\n'; exit 0; }
[[ $1 == --print ]] && { echo "setup config=micro"; exit 0; }
[[ $1 == --dict ]] && { echo 'op_alloc="\x5c\x00"'; exit 0; }
[[ $1 == --encode ]] && { if [[ ${3:-} == -o ]]; then printf BYTES >"$4"; else printf BYTES; fi; exit 0; }
[[ ${STUB_ABORT:-} ]] && kill -ABRT $$
# STUB_C_SLOW=PATH: --c hangs; SIGTERM ends the C file as "stopped" (cgen.c's crash_finish()) and renames
# it over OUT.c (here: writes OUT.c); STUB_C_DEAF=1 too: SIGTERM is ignored, the binary's own temporary
# file is left behind by the SIGKILL, OUT.c stays empty; STUB_C_DONE=1: the C file is complete (no
# "stopped" ending) before it hangs.
if [[ $1 == --c && ${STUB_C_SLOW:-} ]]; then
	echo "$2" >"$STUB_C_SLOW"
	if [[ ${STUB_C_DONE:-} ]]; then     # the C file was complete, the run then hung in its teardown
		echo "/* c */" >"$2"
	elif [[ ${STUB_C_DEAF:-} ]]; then
		trap '' TERM; echo "/* partial */" >"$(dirname "$2")/.$(basename "$2").AbC123"
	else
		trap 'echo "/* The fuzz run stopped here: stopped: by SIGTERM */" >"$2"; trap - TERM; kill -TERM $$' TERM
	fi
	sleep 30 & wait; exit 0
fi
[[ $1 == --c && ${STUB_C_WRITE:-} ]] && { echo "/* c */" >"$2"; echo "mmfuzz: wrote $2" >&2; exit 0; }
[[ $1 == --c ]] && { echo "$2: No such file or directory" >&2; exit 2; }
[[ $1 == --trace ]] && echo "[0] ran" >&2
exit 0
STUB
	chmod +x "$T/build/optext/targets/fuzz_a"
	printf '#!/usr/bin/env bash\nMMFUZZ_ROOT=%q exec %q "$@"\n' "$T" "$ROOT/tools/verbs/trace" >"$WORK/trace-standin"
	chmod +x "$WORK/trace-standin"
	MMFUZZ=$WORK/trace-standin VERB=a
	# cmake's stand-in records its calls (and fails on STUB_CMAKE_FAIL=1); the tree counts as configured
	# (a cache and a build file).
	mkdir -p "$WORK/bin" && : >"$T/build/optext/CMakeCache.txt" && : >"$T/build/optext/build.ninja"
	export CMAKE_LOG=$WORK/cmake.log PATH=$WORK/bin:$PATH
	cat >"$WORK/bin/cmake" <<'STUB'
#!/usr/bin/env bash
echo "$*" >>"${CMAKE_LOG:?}"
[[ ${STUB_CMAKE_FAIL:-} ]] && { echo "stub-cmake: error in allocator/page/buddy.c"; exit 1; }
exit 0
STUB
	chmod +x "$WORK/bin/cmake"
	# The build system decides whether fuzz_a is up to date (an allocator change made it stale, unseen
	# by the old mtime check of targets/ only): cmake --build runs every time, its output on failure.
	: >"$CMAKE_LOG"
	expect 0 '^setup config=micro$' "$WORK/crash"
	grep -q -- "--build $T/build/optext --target fuzz_a" "$CMAKE_LOG" ||
		fail "trace did not run cmake --build ... --target fuzz_a (log: $(cat "$CMAKE_LOG"))"
	STUB_CMAKE_FAIL=1 expect 2 'stub-cmake: error in allocator/page/buddy.c' "$WORK/crash"
	grep -q -- "-S $T -B $T/build/optext" "$CMAKE_LOG" && fail "a configured build dir was configured again"
	# A failed configure's leftovers (a cache, no build file) are configured again: only a missing
	# cache did that, and every later run failed in the build.
	rm "$T/build/optext/build.ninja" && : >"$CMAKE_LOG"
	expect 0 '^setup config=micro$' "$WORK/crash"
	grep -q -- "-S $T -B $T/build/optext" "$CMAKE_LOG" ||
		fail "a cache without build.ninja was not configured again (log: $(cat "$CMAKE_LOG"))"
	: >"$T/build/optext/build.ninja"
	# An existing OUT is replaced, and said so (it was silent); the binary writes a temporary file beside
	# it, renamed over OUT when the run has ended: a refused run leaves OUT as it was, one cut short at
	# the bound leaves its C file cut short (as before) but never wrote OUT itself while it ran.
	echo precious >"$WORK/mine.bin" && echo precious >"$WORK/mine.c"
	expect 0 "--encode: replacing existing $WORK/mine.bin" "$WORK/p.txt" --encode "$WORK/mine.bin"
	[[ $(cat "$WORK/mine.bin") == BYTES ]] || fail "trace --encode did not replace mine.bin"
	expect 2 "no verdict on .*/crash; $WORK/mine.c is left as it was" "$WORK/crash" --c "$WORK/mine.c"
	[[ $(cat "$WORK/mine.c") == precious ]] || fail "a refused trace --c changed mine.c: $(cat "$WORK/mine.c")"
	# A run stopped at the bound ends its C file at the op it was in, marked "stopped" (it was "cut short").
	STUB_C_SLOW=$WORK/c-path expect 1 "$WORK/mine.c makes the calls up to the op the run was stopped in \(marked \"stopped\"\)" "$WORK/crash" --c "$WORK/mine.c" --timeout 1
	[[ $(cat "$WORK/c-path") != "$WORK/mine.c" && $(cat "$WORK/mine.c") == *"stopped here: stopped"* ]] ||
		fail "trace --c wrote mine.c itself while it ran ($(cat "$WORK/c-path")), or did not rename: $(cat "$WORK/mine.c")"
	STUB_C_DONE=1 STUB_C_SLOW=$WORK/c-path expect 1 "$WORK/mine.c was complete before it was stopped \(the whole program ran\)" "$WORK/crash" --c "$WORK/mine.c" --timeout 1
	[[ $(cat "$WORK/mine.c") == "/* c */" ]] || fail "trace --c did not keep the complete C file: $(cat "$WORK/mine.c")"
	# One killed before it ended its C file leaves OUT.c as it was (an empty file was renamed over it),
	# and no temporary file of the binary's behind.
	echo precious >"$WORK/mine.c"
	STUB_C_DEAF=1 STUB_C_SLOW=$WORK/c-path expect 1 "killed before it ended its C file: $WORK/mine.c is left as it was" "$WORK/crash" --c "$WORK/mine.c" --timeout 1
	[[ $(cat "$WORK/mine.c") == precious ]] || fail "a killed trace --c changed mine.c: $(cat "$WORK/mine.c")"
	[[ -z $(find "$WORK" -maxdepth 1 -name '.mine.*') ]] || fail "temporary files left: $(ls -A "$WORK")"
	# The build command names the library of the build that ran (it was build/<dir>/...).
	STUB_C_WRITE=1 expect 0 "replacing existing $WORK/mine.c" "$WORK/crash" --c "$WORK/mine.c"
	STUB_C_WRITE=1 expect 0 "wrote $WORK/mine.c; build it with" "$WORK/crash" --c "$WORK/mine.c"
	STUB_C_WRITE=1 expect 0 "^  cc -std=gnu11 -I$T/allocator/include $WORK/mine.c $T/build/optext/allocator/libmmalloc.a " "$WORK/crash" --c "$WORK/mine.c"
	[[ $(cat "$WORK/mine.c") == "/* c */" ]] || fail "trace --c did not replace mine.c"
	[[ -z $(find "$WORK" -maxdepth 1 -name '.mine.*') ]] || fail "temporary files left: $(ls -A "$WORK")"
	# An empty FILE, and op text not named *.txt (decoded as bytes), are said on stderr; a seed is not.
	: >"$WORK/empty"
	expect 0 'warning: .*/empty is empty: it runs the setup defaults and no op' "$WORK/empty"
	expect 0 'warning: .*/empty is empty' "$WORK/empty" --run
	cp "$WORK/p.txt" "$WORK/basic.ops"
	expect 0 'warning: .*/basic.ops looks like op text but is not named \*\.txt: it is replayed as input bytes' "$WORK/basic.ops"
	printf '\n# x\nalloc order=1\n' >"$WORK/ops-only"
	expect 0 'ops-only looks like op text' "$WORK/ops-only" --run
	out=$("$MMFUZZ" a "$WORK/crash" 2>&1)
	grep -q warning <<<"$out" && fail "trace of a seed's bytes warned:"$'\n'"$out"
	expect 2 'fuzz_a exited with status 2, not a violation .*: no verdict on .*/crash' "$WORK/crash" --c "$WORK/x.c"
	STUB_ABORT=1 expect 1 'died of signal 6' "$WORK/crash" --c "$WORK/x.c"
	expect 0 '^\[0\] ran$' "$WORK/crash" --run
	# An OUT that is a FIFO (or a device: any existing OUT that is not a regular file) is refused before
	# the run: --encode and --c blocked in open() for ever, optext -o replaced it by a regular file.
	expect 2 "--encode: cannot write '$FIFO': it is a FIFO \(a named pipe\), not a regular file" "$WORK/p.txt" --encode "$FIFO"
	STUB_C_WRITE=1 expect 2 "--c: cannot write '$FIFO': it is a FIFO" "$WORK/crash" --c "$FIFO"
	# A symlink OUT is written through: the file it points to gets the bytes, the link stays.
	echo old >"$WORK/target.bin" && ln -s target.bin "$WORK/out-link"
	expect 0 '' "$WORK/p.txt" --encode "$WORK/out-link"
	[[ -L $WORK/out-link && $(cat "$WORK/target.bin") == BYTES ]] || fail "trace --encode did not write through the symlink"
	# tools/optext takes the fuzzer's name too (fuzz_a), as the verbs do: it said "unknown target".
	MMFUZZ=python3 VERB=$T/tools/optext
	expect 0 '^setup config=micro$' decode fuzz_a "$WORK/crash"
	expect 2 "-o: cannot write '$FIFO': it is a FIFO \(a named pipe\), not a regular file" encode a "$WORK/p.txt" -o "$FIFO"
	# optext check: a seed or regression input without its op text fails (it was never looked at).
	mkdir -p "$T/corpus/a/src" "$T/corpus/regressions/a/src"
	cp "$WORK/p.txt" "$T/corpus/a/src/basic.txt" && printf BYTES >"$T/corpus/a/basic"
	"$T/build/optext/targets/fuzz_a" --dict >"$T/corpus/a.dict" && : >"$T/corpus/a.options"
	STUB_OPS=1 expect 0 'a: 1 seeds match their op text' check a --binary "$T/build/optext/targets/fuzz_a"
	printf BYTES >"$T/corpus/a/orphan" && printf BYTES >"$T/corpus/regressions/a/2026-old"
	STUB_OPS=1 expect 1 'corpus/a/orphan has no op text corpus/a/src/orphan.txt' check a --binary "$T/build/optext/targets/fuzz_a"
	STUB_OPS=1 expect 1 'corpus/regressions/a/2026-old has no op text' check a --binary "$T/build/optext/targets/fuzz_a"
	rm -r "$T/corpus/a" "$T/corpus/regressions"
	[[ -p $FIFO ]] || fail "optext encode -o replaced the FIFO $FIFO"
	echo old >"$WORK/target.bin"
	expect 0 'optext: replacing existing .*/out-link' encode a "$WORK/p.txt" -o "$WORK/out-link"
	[[ -L $WORK/out-link && $(cat "$WORK/target.bin") == BYTES ]] || fail "optext encode -o replaced the symlink instead of writing through it"
	MMFUZZ=$ROOT/mmfuzz VERB=trace
	if [[ $(id -u) != 0 ]]; then
		: >"$WORK/unreadable" && chmod 000 "$WORK/unreadable"
		expect 2 'cannot read .*/unreadable: permission denied' buddy "$WORK/unreadable"
	fi
	# The tool behind it, tools/optext: the same refusals, and -o checked before a build.
	MMFUZZ=python3 VERB=$ROOT/tools/optext
	expect 2 "unknown target 'nosuch'" encode nosuch "$ROOT/corpus/buddy/src/basic.txt"
	expect 2 'cannot read .*/missing: no such file' decode buddy "$WORK/missing"
	expect 2 "cannot read $FIFO: not a regular file" decode buddy "$FIFO"
	expect 2 "-o: cannot write '.*/missing/x': no such directory" encode buddy "$ROOT/corpus/buddy/src/basic.txt" -o "$WORK/missing/x"
	expect 2 "-o: cannot write '$WORK': it is a directory" encode buddy "$ROOT/corpus/buddy/src/basic.txt" -o "$WORK"
	expect 2 'usage: optext roundtrip TARGET FILE' roundtrip buddy
	# /proc takes no new file though access() says yes to root: refused before the build, not a traceback.
	expect 2 "-o: cannot write '/proc/x': its directory takes no new file" encode buddy "$ROOT/corpus/buddy/src/basic.txt" -o /proc/x
	# -o with another command than encode was dropped (decode printed to stdout, exit 0); encode's
	# files after the first were dropped; encode -o onto its input replaced the op text by bytes.
	expect 2 '-o goes with encode only \(decode writes no file' decode buddy "$ROOT/corpus/buddy/basic" -o "$WORK/d.txt"
	expect 2 '-o goes with encode only' roundtrip buddy "$ROOT/corpus/buddy/basic" -o "$WORK/d.txt"
	expect 2 '-o goes with encode only' check buddy -o "$WORK/d.txt"
	expect 2 'usage: optext targets' targets buddy
	expect 2 'usage: optext encode TARGET IN.txt .*one file; got 2' encode buddy "$WORK/p.txt" "$ROOT/corpus/buddy/src/orders.txt"
	expect 2 "-o: cannot write '.*/p.txt': it is the input file itself" encode buddy "$WORK/p.txt" -o "$WORK/p.txt"
	expect 2 "-o: cannot write '.*/link.txt': it is the input file itself" encode buddy "$WORK/p.txt" -o "$WORK/link.txt"
	cmp -s "$WORK/p.txt" "$ROOT/corpus/buddy/src/basic.txt" || fail "optext encode -o wrote over its input"
	[[ ! -e $WORK/d.txt ]] || fail "optext wrote $WORK/d.txt"
	[[ ! -e $WORK/missing ]] || fail "trace created $WORK/missing"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
verdict

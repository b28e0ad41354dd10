#!/usr/bin/env bash
# tests/replay_refusals.sh - ctest fuzz_replay_refusals: what the standalone
# replay main (targets/common/cli.c, mf_replay_main) does with arguments that
# are no input, checked by exit status and message:
#   a FIFO, /dev/null       refused before they are opened: exit 2, "not a
#                           regular file or directory (refused)" - within 20 s
#                           (an open() of the FIFO waits for a writer for ever:
#                           exit 124)
#   --print / --encode FIFO the same refusal in read_file: exit 2
#   an empty directory, one holding only a dotfile and a subdirectory
#                           exit 2, "no inputs to replay" (not "replayed 0
#                           inputs", exit 0); under UBSan (the asan preset)
#                           also no qsort() of a NULL array of no names
#   a missing path          exit 2, "No such file or directory"
#   a seed and a FIFO       exit 1, "replayed 1 inputs", "1 unreadable"
#   a seed, a seed's directory holding a FIFO too
#                           exit 0, "replayed 1 inputs without a violation"
#   op text with a NUL byte on line 2 (replayed, --print, --encode)
#                           exit 2, "line 2: a NUL byte", nothing written -
#                           not the program cut at the NUL
#   op text naming __GFP_DMA|__GFP_DMA32|__GFP_HIGHMEM
#                           encoded (exit 0: a saved input's bytes may hold
#                           such bits) with a warning that op [1] runs as
#                           gfp=__GFP_DMA
# and what --c OUT.c and --encode -o OUT do with OUT (cli.c's mf_out_open):
#   OUT a FIFO, /dev/null, a directory
#                           refused before the run: exit 2, "cannot write
#                           'OUT': it is a FIFO (a named pipe), not a regular
#                           file" (a device, a directory) - within 20 s (the
#                           FIFO's open() waited for a reader for ever)
#   an existing OUT, a run that fails (--c of a missing input, --encode of
#   text that does not parse)
#                           exit 2, OUT as it was (--c emptied it at once)
#   OUT a symlink           written through: the link kept, its file replaced
#   --c given twice         exit 2, "--c given twice", nothing written (the
#                           first OUT.c was left empty)
#   a run that crashes (MMFUZZ_CRASH_AT_OP=2) or is stopped by SIGTERM
#   mid-run, onto an existing OUT.c
#                           OUT.c replaced by the complete C file, which
#                           names the signal, ends main() and compiles
#   the C file's build command
#                           names this build's library by an absolute path
#                           (it was build/<dir>/...); run as written (with
#                           the file as repro.c) it builds the file, and that
#                           exits 0
#   and no temporary file (.OUT.XXXXXX) is left behind by any of them.
# The seed is a buddy seed, so BINARY is a replay build's fuzz_buddy.  A named
# pipe no one writes stands in for a device: /dev/zero, if read, would fill
# the memory.
# usage: replay_refusals.sh BINARY WORK
set -u
BIN=${1-} WORK=${2-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# q STRING: STRING as an extended regex matching itself (paths in messages).
q() { sed 's/[][\\.*^$+?(){}|]/\\&/g' <<<"$1"; }

# expect RC REGEX... -- ARGS...: BINARY ARGS exits RC within 20 s, and its
# output matches every REGEX.
expect() {
	local want=$1 res=() out rc re
	shift
	while [[ $1 != -- ]]; do
		res+=("$1")
		shift
	done
	shift
	out=$(timeout -k 5 20 "$BIN" "$@" 2>&1 </dev/null)
	rc=$?
	if [[ $rc != "$want" ]]; then
		fail "$(basename "$BIN") $*: exit $rc, want $want$( ((rc == 124)) && echo ' (hung)'); output:"$'\n'"$out"
		return
	fi
	for re in "${res[@]}"; do
		if ! grep -Eq -- "$re" <<<"$out"; then
			fail "$(basename "$BIN") $*: no /$re/ in:"$'\n'"$out"
			return
		fi
	done
	echo "ok: $(basename "$BIN") $* -> exit $rc$(printf ', /%s/' "${res[@]}")"
}

if [[ ! -x $BIN || -z $WORK || $WORK == / ]]; then
	echo "usage: replay_refusals.sh BINARY WORK (BINARY an executable replay build of fuzz_buddy)"
	exit 2
fi
seed=$ROOT/corpus/buddy/basic
[[ -f $seed ]] || seed=$(find "$ROOT/corpus/buddy" -maxdepth 1 -type f ! -name '.*' | sort | head -n 1)
if [[ ! -f $seed ]]; then
	echo "FAIL: no seed file in $ROOT/corpus/buddy"
	exit 1
fi

rm -rf "$WORK" && mkdir -p "$WORK"
FIFO=$WORK/fifo
mkfifo "$FIFO"
mkdir "$WORK/empty" "$WORK/dotonly" "$WORK/dotonly/sub" "$WORK/seeddir"
cp "$seed" "$WORK/dotonly/.hidden"          # would replay (exit 0) if dotfiles were read
cp "$seed" "$WORK/dotonly/sub/seed"         # likewise if subdirectories were
cp "$seed" "$WORK/seeddir/seed"
mkfifo "$WORK/seeddir/pipe"

refused='not a regular file or directory \(refused\)'
expect 2 "$(q "$FIFO"): $refused" -- "$FIFO"
expect 2 "/dev/null: $refused" -- /dev/null
expect 2 "$(q "$FIFO"): not a regular file \(refused\)" -- --print "$FIFO"
expect 2 "cannot read $(q "$FIFO") \(not a regular file\)" -- --encode "$FIFO" -o "$WORK/encoded"
[[ ! -e $WORK/encoded ]] || fail "--encode of a FIFO wrote $WORK/encoded"
expect 2 "no inputs to replay in $(q "$WORK/empty") " -- "$WORK/empty"
expect 2 "no inputs to replay in $(q "$WORK/dotonly") " -- "$WORK/dotonly"
expect 2 "$(q "$WORK/missing"): No such file or directory" 'replayed 0 inputs.*1 unreadable' -- "$WORK/missing"
expect 1 "$refused" 'replayed 1 inputs without a violation; 1 unreadable' -- "$seed" "$FIFO"
expect 0 'replayed 1 inputs without a violation$' -- "$seed"
expect 0 'replayed 1 inputs without a violation$' -- "$WORK/seeddir"

printf 'setup config=micro\nalloc order=1\0\nfree idx=0\nalloc order=2\n' >"$WORK/nul.txt"
nul="$(q "$WORK/nul.txt"): line 2: a NUL byte: op text is plain text"
expect 2 "$nul" 'replayed 0 inputs.*1 unreadable' -- "$WORK/nul.txt"
expect 2 "$nul" -- --print "$WORK/nul.txt"
expect 2 "$nul" -- --encode "$WORK/nul.txt" -o "$WORK/nul.bin"
[[ ! -e $WORK/nul.bin ]] || fail "--encode of op text with a NUL byte wrote $WORK/nul.bin"
printf 'setup config=micro\nalloc order=0\nalloc order=1 gfp=__GFP_DMA|__GFP_DMA32|__GFP_HIGHMEM\n' >"$WORK/gfp.txt"
expect 0 'warning: op \[1\] names flags the kernel refuses together: `alloc order=1 gfp=[^`]*__GFP_DMA32[^`]*` runs as `alloc order=1 gfp=__GFP_DMA`$' \
	-- --encode "$WORK/gfp.txt" -o "$WORK/gfp.bin"
[[ -s $WORK/gfp.bin ]] || fail "--encode of op text with an invalid gfp wrote nothing"

# ---------------------------------------------------------------- OUT of --c and --encode -o
txt=$ROOT/corpus/buddy/src/basic.txt
for o in --c -o; do
	args=(--c "$FIFO" "$seed")
	[[ $o == -o ]] && args=(--encode "$txt" -o "$FIFO")
	expect 2 "^$o: cannot write '$(q "$FIFO")': it is a FIFO \(a named pipe\), not a regular file" -- "${args[@]}"
	args=(--c /dev/null "$seed")
	[[ $o == -o ]] && args=(--encode "$txt" -o /dev/null)
	expect 2 "^$o: cannot write '/dev/null': it is a device, not a regular file" -- "${args[@]}"
	args=(--c "$WORK/empty" "$seed")
	[[ $o == -o ]] && args=(--encode "$txt" -o "$WORK/empty")
	expect 2 "^$o: cannot write '$(q "$WORK/empty")': it is a directory$" -- "${args[@]}"
done
[[ -p $FIFO ]] || fail "the FIFO $FIFO was replaced"

expect 2 '^--c given twice: one output file$' -- --c "$WORK/c1.c" --c "$WORK/c2.c" "$seed"
[[ ! -e $WORK/c1.c && ! -e $WORK/c2.c ]] || fail "--c given twice wrote $(ls "$WORK"/c?.c)"

echo precious >"$WORK/mine.c" && echo precious >"$WORK/mine.bin"
expect 2 "$(q "$WORK/missing"): No such file or directory" -- --c "$WORK/mine.c" "$WORK/missing"
[[ $(cat "$WORK/mine.c") == precious ]] || fail "--c with a missing input changed mine.c: $(head -c 200 "$WORK/mine.c")"
printf 'setup config=micro\nalloc order=99\n' >"$WORK/bad.txt"
expect 2 'bad\.txt: .*order' -- --encode "$WORK/bad.txt" -o "$WORK/mine.bin"
[[ $(cat "$WORK/mine.bin") == precious ]] || fail "--encode of bad op text changed mine.bin"

echo old >"$WORK/target.bin" && ln -s target.bin "$WORK/link.bin"
expect 0 '' -- --encode "$txt" -o "$WORK/link.bin"
[[ -L $WORK/link.bin ]] && cmp -s "$WORK/target.bin" "$ROOT/corpus/buddy/basic" ||
	fail "--encode -o a symlink did not write its file through it (link kept)"
echo old >"$WORK/target.c" && ln -s target.c "$WORK/link.c"
expect 0 "wrote $(q "$WORK/link.c")" -- --c "$WORK/link.c" "$seed"
[[ -L $WORK/link.c ]] && grep -q '^int main' "$WORK/target.c" || fail "--c onto a symlink did not write its file through it (link kept)"

# the build command in the C file, run as written; the file from a clean run exits 0
cmd=$(sed -n 's/^ \*   \(.* repro\.c .*\)$/\1/p' "$WORK/target.c")
read -ra words <<<"$cmd"
lib=${words[${#words[@]} - 3]}
if [[ $lib != /* || ! -f $lib ]]; then
	fail "the C file's build command names no library that exists (${lib:-nothing}): $cmd"
else
	cp "$WORK/target.c" "$WORK/repro.c"
	# (in the coverage build, its profile stays here, out of the fuzz binaries' profraw/)
	if ! out=$(cd "$WORK" && "${words[@]}" -o repro 2>&1 && LLVM_PROFILE_FILE=$WORK/repro.profraw ./repro 2>&1); then
		fail "the C file's build command, run in $WORK, did not build a reproducer that exits 0: $cmd"$'\n'"$out"
	else
		echo "ok: the C file builds with its own command ($cmd) and exits 0"
	fi
fi

# ends: a crash, and SIGTERM mid-run (a bound on a hang), onto an existing OUT.c
complete() {
	local f=$1 sig=$2 what=$3
	if ! grep -q "$what signal $sig (" "$f" || [[ $(tail -c 12 "$f") != $'return 0;\n}' ]]; then
		fail "the C file of a run that $what signal $sig does not name it or end main(): $(tail -n 5 "$f")"
	elif ! cc -std=gnu11 -fsyntax-only -I"$ROOT/allocator/include" "$f" 2>/dev/null; then
		fail "the C file of a run that $what signal $sig does not compile"
	else
		echo "ok: the run that $what signal $sig left a complete C file"
	fi
}
# The ending is written from the signal handler with stdio (cgen.c: the process is dying anyway),
# which TSan reports as a signal-unsafe call and exits 66 for: not what these checks are about.
export TSAN_OPTIONS=${TSAN_OPTIONS:+$TSAN_OPTIONS:}report_signal_unsafe=0
echo precious >"$WORK/crash.c"
(MMFUZZ_CRASH_AT_OP=2 timeout -k 5 20 "$BIN" --c "$WORK/crash.c" "$seed" >/dev/null 2>&1; exit $?) 2>/dev/null
rc=$?
((rc != 0 && rc != 124)) || fail "a run with MMFUZZ_CRASH_AT_OP=2 exited $rc, not by its crash"
complete "$WORK/crash.c" 11 "died of"
{
	echo 'setup config=default cpus=1 prefetch=0'
	echo 'alloc order=10 gfp=GFP_KERNEL'
	for ((i = 0; i < 2000; i++)); do echo 'touch idx=0'; done
} >"$WORK/slow.txt"
echo precious >"$WORK/stop.c"
MMFUZZ_FILL_FULL=1 "$BIN" --c "$WORK/stop.c" "$WORK/slow.txt" >/dev/null 2>&1 &
pid=$!
# SIGTERM once the C file has its main(): the ops are running (12 s of them in the debug build)
for ((i = 0; i < 400; i++)); do
	grep -qs '^int main' "$WORK/stop.c" "$WORK"/.stop.c.* && break
	sleep 0.05
done
kill -TERM "$pid"
wait "$pid"
rc=$?
((rc == 143)) || fail "the run sent SIGTERM exited $rc, want 143 (its own SIGTERM, raised again)"
complete "$WORK/stop.c" 15 "was stopped by"

left=$(find "$WORK" -maxdepth 1 -name '.*.??????')
[[ -z $left ]] || fail "temporary files left: $left"

if ((fails)); then
	echo "$fails check(s) failed"
	exit 1
fi
echo "all checks passed"

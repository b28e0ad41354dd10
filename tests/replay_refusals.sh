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

if ((fails)); then
	echo "$fails check(s) failed"
	exit 1
fi
echo "all checks passed"

#!/usr/bin/env bash
# tests/inject_in_ops.sh - ctest fuzz_inject_in_ops: the pcp and bulk
# targets inject their interrupts and migrations at preemption points inside
# their ops only, never in the harness's per-op mm_check (whose zone and pcp
# locks reach preemption points of their own).  Otherwise the check right
# after an `inject` op uses up the plan, and what an input injects depends
# on the check level: fuzzing checks at level 2, repro and corpus replay at
# 3, unchecked builds at 0, and a crash found by fuzzing need not replay.
#   levels      corpus/pcp/src/irq.txt, corpus/bulk/src/pcp.txt and the
#               input below replay to the same trace (every op and its
#               result: handler runs, pages, pfns) with MMFUZZ_CHECK_LEVEL
#               0, 2 and 3
#   mid-check   `inject` then `irq` (an op with no preemption point before
#               mm_raise_irq): the handler has run once, the explicit
#               interrupt, at every level - the check between them ran none;
#               the plan is still there for the next op, alloc_many, whose
#               points it acts at (the `irq` after it counts more than 2)
# usage: inject_in_ops.sh FUZZ_PCP FUZZ_BULK WORK
set -u
PCP=${1-} BULK=${2-} WORK=${3-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if [ ! -x "$PCP" ] || [ ! -x "$BULK" ] || [ -z "$WORK" ]; then
	echo "usage: inject_in_ops.sh FUZZ_PCP FUZZ_BULK WORK" >&2
	exit 2
fi
rm -rf "$WORK"
mkdir -p "$WORK"

cat > "$WORK/midcheck.txt" <<'EOF'
# Every decision of the plan an interrupt; the check after `inject` must take none.
setup config=tiny cpus=2 prefetch=0
inject plan=0x55555555 n=16 irq=0x0 order=0
irq unused=0
alloc_many n=8 order=0 gfp=GFP_KERNEL
irq unused=0
EOF

# trace BIN INPUT LEVEL: the op trace of one replay at that per-op level.
trace() {
	MMFUZZ_TRACE=1 MMFUZZ_CHECK_LEVEL=$3 "$1" "$2" > "$WORK/out" 2>&1
	local rc=$?
	if [ $rc != 0 ]; then
		fail "$(basename "$1") $2 at check level $3 exited $rc"
		cat "$WORK/out"
	fi
	grep '^\[[0-9]*\] ' "$WORK/out"
}

for case in "$PCP:$ROOT/corpus/pcp/src/irq.txt" "$BULK:$ROOT/corpus/bulk/src/pcp.txt" "$PCP:$WORK/midcheck.txt"; do
	bin=${case%%:*} in=${case#*:}
	name=$(basename "$bin")-$(basename "$in" .txt)
	for l in 0 2 3; do
		trace "$bin" "$in" $l > "$WORK/$name.$l"
	done
	same=1
	for l in 2 3; do
		if ! diff -u "$WORK/$name.0" "$WORK/$name.$l" > "$WORK/$name.diff"; then
			fail "$name: the injections differ between check levels 0 and $l"
			cat "$WORK/$name.diff"
			same=0
		fi
	done
	[ $same = 1 ] && echo "$name: $(wc -l < "$WORK/$name.0") ops, the same trace at check levels 0, 2, 3"
done

for l in 0 2 3; do
	f=$WORK/$(basename "$PCP")-midcheck.$l
	first=$(grep '^\[1\] irq ' "$f")
	second=$(grep '^\[3\] irq ' "$f")
	echo "level $l: $first"
	echo "level $l: $second"
	case "$first" in
	*"# raised 1; 1 handler runs so far,"*) ;;
	*) fail "level $l: the handler ran in the check after inject (op 1: $first)" ;;
	esac
	runs=$(sed -n 's/.*# raised 1; \([0-9]*\) handler runs so far.*/\1/p' <<<"$second")
	if [ -z "$runs" ] || [ "$runs" -le 2 ]; then
		fail "level $l: alloc_many ran no injected interrupt (op 3: $second)"
	fi
done

if [ $fails != 0 ]; then
	echo "inject_in_ops: $fails failures"
	exit 1
fi
echo "inject_in_ops: OK"

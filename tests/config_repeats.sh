#!/usr/bin/env bash
# tests/config_repeats.sh - ctest fuzz_config_repeats: the config target
# builds each distinct valid config once per input, and at most four per
# input.  A `create` of a config this input has already built (every field
# the same) is only validated, and so is one of a fifth distinct config;
# one that differs in any field, or the same config in the next input, is
# built again.  Counted by the target's MMFUZZ_STATS line.
#   one input   the default machine with 64 vCPUs built, created again
#               (repeat), 2 vCPUs (built), 64 again (repeat), debug 1
#               (built), 3 vCPUs (built: the fourth), 4 vCPUs (past the
#               cap), 3 again (a repeat, not past the cap), then an invalid
#               zone (refused, neither)
#   twice       the same file twice in one process: nothing carried over
#               from the first input, so 8 built, 6 repeats, 2 past the cap
# usage: config_repeats.sh FUZZ_CONFIG WORK
set -u
BIN=${1-} WORK=${2-}
fails=0

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if [ ! -x "$BIN" ] || [ -z "$WORK" ]; then
	echo "usage: config_repeats.sh FUZZ_CONFIG WORK" >&2
	exit 2
fi
rm -rf "$WORK"
mkdir -p "$WORK"

cat > "$WORK/repeats.txt" <<'EOF'
setup base=default
cpus n=64
create errlen=300
create errlen=0
cpus n=2
create errlen=300
cpus n=64
create errlen=10
set field=debug value=1
create errlen=300
cpus n=3
create errlen=300
cpus n=4
create errlen=300
cpus n=3
create errlen=300
zone zone=DMA start=5 end=1
create errlen=300
EOF

# stats WANT FILE...: the target's stats line after replaying the files.
stats() {
	local want=$1
	shift
	MMFUZZ_STATS=1 "$BIN" "$@" > "$WORK/out" 2>&1
	local rc=$?
	local line
	line=$(grep '^config: [0-9]* valid, ' "$WORK/out")
	echo "$* -> $line"
	if [ $rc != 0 ]; then
		fail "replay exited $rc"
		cat "$WORK/out"
	fi
	[ "$line" = "$want" ] || fail "want \"$want\""
}

stats "config: 8 valid, 1 invalid, 4 created, 3 repeats and 1 past 4 builds only validated" "$WORK/repeats.txt"
stats "config: 16 valid, 2 invalid, 8 created, 6 repeats and 2 past 4 builds only validated" "$WORK/repeats.txt" \
	"$WORK/repeats.txt"

if [ $fails != 0 ]; then
	echo "config_repeats: $fails failures"
	exit 1
fi
echo "config_repeats: OK"

#!/usr/bin/env bash
# tests/sched_stress_cli.sh BIN WORK - mmfuzz-sched-stress as a user meets it
# (ctest sched_stress_cli):
#   - the printed rerun command reproduces the failure it names, in a mode
#     whose default migrate rate is not the one given (it carries the rates);
#   - SIGTERM stops a long run and a long --grade between runs: the total
#     so far, INTERRUPTED, exit 130, the grade's JSON written with
#     "interrupted": true;
#   - --replay FILE takes no scenario option and refuses another mode's
#     artifact; the artifact line names ./mmfuzz stress ... --replay;
#   - no MODE, and a policy twice in --grade, are refused with a message;
#   - numbers are decimal or 0x hex, never octal;
#   - --json and --artifact are written whole (temporary file, rename), a
#     directory that takes no file is refused before the run, and a JSON
#     that cannot be written at the end gives the verdict and exit 3.
set -u
BIN=$1
WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 2
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# 1. The rerun line, run as printed (./mmfuzz stress -> the driver), fails the same way.
out=$("$BIN" slub --deterministic --seed 3 --runs 400 --migrate-permille 40 --selftest race --quiet --artifact "$WORK/race.sched")
rerun=$(sed -n 's/^rerun: \.\/mmfuzz stress //p' <<<"$out" | head -n 1)
[[ -n $rerun ]] || fail "no rerun line: $out"
grep -q -- '--migrate-permille 40' <<<"$rerun" || fail "the rerun line lacks the migrate rate: $rerun"
grep -q 'artifact: .*(replay: \./mmfuzz stress slub --deterministic --replay ' <<<"$out" ||
	fail "the artifact line does not name ./mmfuzz stress ... --replay: $(grep '^artifact' <<<"$out")"
# shellcheck disable=SC2086 # the rerun line is words
again=$("$BIN" $rerun)
rc=$?
[[ $rc == 1 ]] && grep -q 'FAILED: --selftest race' <<<"$again" || fail "the rerun did not fail again (rc $rc): $again"

# 2. SIGTERM between runs: the total, INTERRUPTED, 130.
term_after_1s() {   # term_after_1s OUT ARGS...: run the driver, SIGTERM after 1 s; its exit status
	"$BIN" "${@:2}" >"$1" 2>&1 &
	local pid=$!
	sleep 1
	kill -TERM $pid
	wait $pid
}
term_after_1s "$WORK/long.out" pages --deterministic --runs 1000000000 --quiet
rc=$?
[[ $rc == 130 ]] || fail "SIGTERM during runs: exit $rc, not 130"
grep -q '^total: mode pages' "$WORK/long.out" || fail "SIGTERM during runs: no total line"
[[ $(tail -n 1 "$WORK/long.out") == INTERRUPTED ]] || fail "SIGTERM during runs: last line $(tail -n 1 "$WORK/long.out")"

term_after_1s "$WORK/grade.out" pcp --deterministic --grade --policy random,pct --runs 1000000000 --json "$WORK/g.json"
rc=$?
[[ $rc == 130 ]] || fail "SIGTERM during --grade: exit $rc, not 130"
grep -q '^random ' "$WORK/grade.out" || fail "SIGTERM during --grade: no row for the policy that ran"
grep -q '^grade: all policies' "$WORK/grade.out" || fail "SIGTERM during --grade: no total"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if d["interrupted"] and d["policies"][0]["runs"] > 0 else 1)' \
	"$WORK/g.json" || fail "SIGTERM during --grade: g.json is not a JSON with \"interrupted\": true and the runs done"

# 3. --replay: the artifact brings its own scenario.
"$BIN" pages --deterministic --seed 5 --runs 3 --selftest scribble --quiet --artifact "$WORK/p.sched" >/dev/null
[[ -s $WORK/p.sched ]] || fail "no artifact written"
expect2() {   # expect2 REGEX ARGS...: exit 2 and REGEX on stderr
	local re=$1 err rc
	shift
	err=$("$BIN" "$@" 2>&1 >/dev/null)
	rc=$?
	[[ $rc == 2 ]] && grep -qE -- "$re" <<<"$err" || fail "$*: exit $rc, stderr: $err"
}
expect2 '--replay FILE runs the artifact.s own schedule .*--seed does not go with it' pages --deterministic --replay "$WORK/p.sched" --seed 9
expect2 '--tasks does not go with it' pages --deterministic --replay "$WORK/p.sched" --tasks 2
expect2 'is an artifact of mode pages, not slub' slub --deterministic --replay "$WORK/p.sched"
"$BIN" pages --deterministic --replay "$WORK/p.sched" >"$WORK/replay.out" 2>&1 || fail "the artifact's own replay: $(tail -n 3 "$WORK/replay.out")"
grep -q '^REPRODUCED' "$WORK/replay.out" || fail "the artifact's own replay did not reproduce"

# 4. Refusals with a message.
expect2 'no MODE' --deterministic --seed 1
expect2 'a list of distinct random, pct, sticky' pages --deterministic --grade --policy random,random --runs 2

# 5. Numbers: decimal, or hex after 0x - a leading 0 is not octal (./mmfuzz run reads --seed 010 as ten).
out=$("$BIN" pages --deterministic --seed 010 --runs 1 --selftest scribble --quiet --artifact "$WORK/ten.sched")
grep -q -- '--seed 0xa ' <<<"$out" || fail "--seed 010 is not ten: $(grep '^rerun' <<<"$out")"
expect2 "--seed wants a whole number .*, not '0x'" pages --deterministic --seed 0x --runs 1
expect2 "--seed wants a whole number .*, not '\\+5'" pages --deterministic --seed +5 --runs 1

# 6. Outputs are written whole or not at all, and a place that takes no file
#    is refused before the run - root included (access() says yes to root).
expect2 '--json /proc/mmfuzz-g.json: cannot write: its directory takes no new file' \
	pages --deterministic --grade --runs 2 --policy random --json /proc/mmfuzz-g.json
expect2 '--artifact /proc/mmfuzz.sched: cannot write: its directory takes no new file' \
	pages --deterministic --runs 1 --artifact /proc/mmfuzz.sched
echo '{"old": true}' >"$WORK/g.json"
"$BIN" pages --deterministic --grade --runs 2 --policy random --json "$WORK/g.json" >"$WORK/g.out" 2>&1 ||
	fail "a grade with --json: $(tail -n 3 "$WORK/g.out")"
grep -q '"runs_per_policy": 2' "$WORK/g.json" || fail "g.json not replaced: $(head -c 200 "$WORK/g.json")"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$WORK/g.json" || fail "g.json does not parse"
ls -a "$WORK" | grep -q '^\.g\.json\.\|^\.ten\.sched\.' && fail "a temporary file was left: $(ls -a "$WORK")"
# A JSON that cannot be written at the end: the verdict still shows, exit 3.
"$BIN" pages --deterministic --grade --runs 2 --policy random --json /dev/full >"$WORK/full.out" 2>&1
rc=$?
[[ $rc == 3 ]] || fail "--json /dev/full: exit $rc, want 3: $(tail -n 3 "$WORK/full.out")"
grep -q '^SUCCESS$' "$WORK/full.out" && grep -q -- "--json /dev/full: cannot write: No space left" "$WORK/full.out" ||
	fail "--json /dev/full: no verdict or no message: $(tail -n 3 "$WORK/full.out")"

[[ $failures == 0 ]] && echo "sched_stress_cli: all checks passed" || { echo "sched_stress_cli: $failures failed"; exit 1; }

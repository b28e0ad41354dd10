#!/usr/bin/env bash
# tests/verbs/fuzz_interrupt.sh MODE ROOT WORK - ./mmfuzz fuzz stopped early
# (ctest fuzz_interrupt_verb, fuzz_interrupt_engine): the campaign runs on a
# stand-in tree (MMFUZZ_ROOT) whose "libFuzzer" prints status lines until
# SIGINT, then its final stats, and exits 72 as libFuzzer does.
#   verb    SIGINT to the verb: it stops the engine, runs no further target,
#           skips the replay check, prints and writes the table of what ran
#           ("interrupted": true) and exits 130 - not a Python traceback
#   engine  SIGINT to the engine alone: the same, not "a finding" and a restart
#   fork    --jobs 2 (libFuzzer's fork mode) and SIGTERM to the verb: its
#           "libFuzzer" ignores SIGINT, as the real fork-mode parent does
#           while it waits in system() for a worker, and stops on SIGTERM;
#           its worker (a child) must not outlive it.  The verb used to send
#           SIGINT to the parent alone and go on fuzzing.  Its final stats say
#           stat::number_of_executed_units: 0, as the real fork parent's do (it
#           runs no unit itself): the execs are its last "#N:" line's (they
#           were reported 0), and its cov: is no edge count - the table's
#           coverage is the -runs=0 pass's INITED cov: over the final corpus.
# Every mode: exec_per_s is execs per second of the run (rate_ok), corpus the one file
# the stand-in added, coverage the pass's, and the last message names the
# run's directory.
VERB=fuzz
# shellcheck source=tests/verbs/lib.sh
source "$(dirname "$0")/lib.sh"

T=$WORK/root
mkdir -p "$T/targets" "$T/corpus/a" "$T/corpus/b" "$T/build/fuzz/targets"
ln -s "$ROOT/tools" "$T/tools"
printf 'a\nb\n' >"$T/targets/TARGETS"
echo x >"$T/corpus/a/seed"
echo y >"$T/corpus/b/seed"
for t in a b; do
	cat >"$T/build/fuzz/targets/fuzz_$t" <<'STUB'
#!/usr/bin/env bash
# libFuzzer's stand-in: a status line every 0.1 s; SIGINT: final stats, exit 72.
# With -fork=N: SIGINT ignored, SIGTERM does that, and a worker child runs; its
# final stat counts no unit, as the fork parent's (which runs none itself).
# -runs=0 (the verb's coverage pass over the final corpus): the INITED line.
[[ " $* " == *" -runs=0 "* ]] && { printf '#2\tINITED cov: 42 ft: 99 corp: 2/4b exec/s: 0 rss: 30Mb\n'; exit 0; }
echo new >"$1/new-1"
stop='echo "==$$== libFuzzer: run interrupted; exiting"; echo "stat::number_of_executed_units: $n"; exit 72'
if [[ " $* " == *" -fork="* ]]; then
	trap '' INT
	stop=${stop/\$n/0}
	trap "$stop" TERM
	sleep 600 &
	echo $! >"${STANDIN_WORKER:?}"
	status='#$n: cov: 3000 ft: 3000 corp: 2 exec/s: 1000 oom/timeout/crash: 0/0/0 time: 1s job: 1 dft_time: 0'
else
	trap "$stop" INT
	status='#$n	NEW    cov: 10 ft: 20 corp: 2/4b lim: 4 exec/s: 1000 rss: 30Mb'
fi
echo "$$" >"${STANDIN_PID:?}"
n=0
while :; do
	n=$((n + 100))
	eval "echo \"$status\""
	sleep 0.1
done
STUB
	chmod +x "$T/build/fuzz/targets/fuzz_$t"
done

# The replay build without sanitizers is made (here: checked) before the campaign;
# the interrupt skips the replay itself, so these never run.
mkdir -p "$WORK/replay/targets"
for t in a b; do
	printf '#!/bin/sh\nexit 0\n' >"$WORK/replay/targets/fuzz_$t"
	chmod +x "$WORK/replay/targets/fuzz_$t"
done
export MMFUZZ_REPLAY_DIR=$WORK/replay
export STANDIN_PID=$WORK/engine.pid STANDIN_WORKER=$WORK/worker.pid
jobs=1
[[ $mode == fork ]] && jobs=2
MMFUZZ_ROOT=$T "$ROOT/tools/verbs/fuzz" all --time 120 --jobs $jobs --no-build --out "$WORK/o" --json "$WORK/t.json" \
	>"$WORK/log" 2>&1 &
verb=$!
for _ in $(seq 100); do
	[[ -s $STANDIN_PID ]] && grep -q '^\[a\]' "$WORK/log" && break
	sleep 0.2
done
[[ -s $STANDIN_PID ]] || fail "the stand-in engine did not start"
case $mode in
verb) kill -INT "$verb" ;;
engine) kill -INT "$(cat "$STANDIN_PID")" ;;
fork) kill -TERM "$verb" ;;
*) fail "unknown mode $mode" ;;
esac
stopped_within_20s "$verb" "the verb still runs 20 s after the signal"
wait "$verb"
rc=$?
cat "$WORK/log"
[[ $mode == fork ]] && expect_gone "the fork-mode worker" "$WORK/worker.pid"
[[ $rc == 130 ]] || fail "exit $rc, want 130"
grep -q Traceback "$WORK/log" && fail "a Python traceback"
grep -q 'restarting' "$WORK/log" && fail "the campaign restarted the engine after the interrupt"
grep -q 'interrupted: b not run' "$WORK/log" || fail "no 'interrupted: b not run'"
grep -q 'the replay without sanitizers is skipped' "$WORK/log" || fail "the replay check was not said skipped"
grep -Eq '^a +libfuzzer +[0-9.]+ +[1-9][0-9]* ' "$WORK/log" || fail "no table row for a with its executions"
grep -Eq '^b +libfuzzer' "$WORK/log" && fail "a table row for b, which never ran"
python3 - "$WORK/t.json" "$WORK/o/summary.json" <<'PY' || fail "the JSON tables"
import json, sys
for path in sys.argv[1:]:
    t = json.load(open(path))
    assert t.get("interrupted") is True, (path, t)
    assert [r["name"] for r in t["targets"]] == ["a"], (path, t)
    assert t["targets"][0]["execs"] > 0 and t["targets"][0]["interrupted"] is True, (path, t)
PY
# The figures: execs the stand-in's last count ("#N" of its last status line), exec/s of them,
# the one corpus file it added, the coverage pass's 42 (not fork mode's cov: 3000).
last=$(grep -Eo '^#[0-9]+' "$WORK/o/a/log.txt" | tail -1)
python3 - "$WORK/t.json" "${last#\#}" <<'PY' || fail "the table's figures"
import json, sys
r = json.load(open(sys.argv[1]))["targets"][0]
assert r["execs"] == int(sys.argv[2]), ("execs, want the last #N", sys.argv[2], r)
assert r["corpus"] == 1 and r["crashes"] == 0, r
assert r["coverage"] == 42 and r["coverage_unit"] == "edges", r
PY
rate_ok "$WORK/t.json"
grep -q "interrupted: the table covers what ran; its corpus, findings and summary.json are in .*/o\$" "$WORK/log" ||
	fail "the last message does not say where the run's directory is"
verdict

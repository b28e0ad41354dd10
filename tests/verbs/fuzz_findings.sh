#!/usr/bin/env bash
# tests/verbs/fuzz_findings.sh MODE ROOT WORK - findings ./mmfuzz fuzz used to
# lose, on a stand-in tree (MMFUZZ_ROOT) with a stand-in engine:
#   afl-hangs    (ctest fuzz_findings_afl_hangs) AFL++'s hangs count as
#                findings, as libFuzzer's timeout-* artifacts do: a stand-in
#                afl-fuzz first on PATH records its arguments and leaves one
#                instance's fuzzer_stats with 2 saved hangs (files in hangs/)
#                and no crash.  The verb must run it with -t from
#                corpus/a.options' timeout (2 s: -t 2000), count 2 in the
#                crashes column, name the hangs, write "hangs": 2 in the JSON
#                and exit 1.  It reported 0 crashes and exit 0.
#   no-artifact  (ctest fuzz_findings_no_artifact) a "libFuzzer" that dies
#                at start-up with no artifact (exit 1, as a crash before
#                libFuzzer's handler is set up): counted ("engine_stops"),
#                named with its log, exit 1, and not restarted 51 times.
#                It reported 0 crashes and exit 0.
#   fork-no-artifact  (ctest fuzz_findings_fork_no_artifact) the same with
#                --jobs 2 (fork mode): it was reported clean, exit 0.
#   time-one     (ctest fuzz_findings_time_one) --time 1: the engine never
#                started (its loop wanted 1 s left after the start), the
#                table said 0 execs, exit 0.
#   replay-fails (ctest fuzz_findings_replay_fails) a stand-in replay build
#                (MMFUZZ_REPLAY_DIR) that fails every input, naming it: the
#                failures counted (exit 1) and said - the closing message was
#                a Python traceback.
#   replay-interrupt (ctest fuzz_findings_replay_interrupt) SIGINT to the
#                verb during the replay without sanitizers: the replay stops,
#                the table and JSON say interrupted, exit 130, no input
#                called failing - the replay went on (a SIGINT to the whole
#                group made a replay-batch.log "finding", exit 1).
#   time-share   (ctest fuzz_findings_time_share) `fuzz all --time 24` over
#                four stand-in targets whose engine starts 2 s late: the
#                start-ups neither run past --time (the shares were fixed
#                quarters) nor come out of the last targets' time (with an
#                equal share of what was left, the four got 5, 5, 4 and 3 s).
#   afl-missing  (ctest fuzz_findings_afl_missing) --engine afl --no-build
#                with no afl-fuzz on PATH: exit 2 and the package named, no
#                output directory - it was a Python traceback, exit 1.
#   seed-crash   (ctest fuzz_findings_seed_crash) a corpus input that crashes
#                at load: libFuzzer's "Test unit written to" artifact is
#                recognised, the input moved to corpus-crashing/ (kept) and
#                the restart fuzzes on - it re-crashed on every restart, each
#                called a stop "without writing a finding" (engine_stops).
#   build        (ctest fuzz_findings_build) the build: tools/deps.sh core is
#                run for libFuzzer too (clang missing: its message, exit 2 -
#                it was cmake's error, or a traceback without cmake), and a
#                build dir with a CMakeCache.txt but no build.ninja (a failed
#                configure's) is configured again, build/fuzz and
#                build/fuzz-replay - every later run failed in ninja.
# The table's figures (time-one, seed-crash, afl-hangs): exec_per_s is execs
# per second of the run (rate_ok: a run under 0.05 s said 0.0), corpus the files the engine added, crashes the
# crash files, coverage what the stand-in's -runs=0 pass reported.
VERB=fuzz
# shellcheck source=tests/verbs/lib.sh
source "$(dirname "$0")/lib.sh"

T=$WORK/root
mkdir -p "$T/targets" "$T/corpus/a" "$T/build/afl/targets" "$WORK/bin"
ln -s "$ROOT/tools" "$T/tools"
echo a >"$T/targets/TARGETS"
echo x >"$T/corpus/a/seed"
printf '[libfuzzer]\nmax_len = 64\ntimeout = 2\n' >"$T/corpus/a.options"
printf '#!/bin/sh\necho 1000\n' >"$T/build/afl/targets/fuzz_a"     # AFL_DUMP_MAP_SIZE=1: the map size
chmod +x "$T/build/afl/targets/fuzz_a"
cat >"$WORK/bin/afl-fuzz" <<'STUB'
#!/usr/bin/env bash
# afl-fuzz's stand-in: -o SYNC -M NAME; one instance's results, then exit 0.
echo "$*" >>"${STANDIN_ARGS:?}"
while (($#)); do
	case $1 in
	-o) sync=$2; shift ;;
	-M | -S) inst=$2; shift ;;
	--) break ;;
	esac
	shift
done
mkdir -p "$sync/$inst/hangs" "$sync/$inst/crashes" "$sync/$inst/queue"
# the queue: the seed, 3 inputs this instance found, 2 imported from another
for f in id:000000,time:0,execs:0,orig:seed id:000001,src:000000,op:havoc,+cov id:000002,src:000001,op:flip1,+cov \
	id:000003,src:000000,op:havoc id:000004,sync:sec1,src:000007 id:000005,sync:sec1,src:000009; do
	echo "$f" >"$sync/$inst/queue/$f"
done
echo x >"$sync/$inst/hangs/id:000000,src:000000,op:havoc"
echo y >"$sync/$inst/hangs/id:000001,src:000000,op:havoc"
cat >"$sync/$inst/fuzzer_stats" <<STATS
execs_done        : 500
corpus_count      : 6
corpus_found      : 3
corpus_imported   : 2
saved_crashes     : 0
saved_hangs       : 2
bitmap_cvg        : 1.00%
stability         : 100.00%
STATS
sleep 1
STUB
chmod +x "$WORK/bin/afl-fuzz"

# refused RC LOG OUT RE WHAT: the verb, run with a tool missing, exited RC
# with its output in LOG: it must be 2, with RE said, no Python traceback,
# and no output directory OUT made.
refused() {
	local rc=$1 log=$2 out=$3 re=$4 what=$5
	cat "$log"
	[[ $rc == 2 ]] || fail "$what: exit $rc, want 2"
	! grep -q Traceback "$log" || fail "$what: a Python traceback"
	grep -qF -- "$re" "$log" || fail "$what: '$re' was not said"
	[[ ! -e $out ]] || fail "$what: the output directory was made"
}

# A libFuzzer stand-in that runs: a status line, a new corpus input, exit 0.
fuzzer_ok() {
	mkdir -p "$T/build/fuzz/targets"
	cat >"$T/build/fuzz/targets/fuzz_a" <<'STUB'
#!/usr/bin/env bash
# -runs=0 (the verb's coverage pass over the final corpus): libFuzzer's INITED line.
[[ " $* " == *" -runs=0 "* ]] && { printf '#3\tINITED cov: 17 ft: 30 corp: 2/4b exec/s: 0 rss: 30Mb\n'; exit 0; }
echo x >>"${STANDIN_STARTS:?}"
echo new >"$1/new-input"          # $1: the corpus directory
printf '#100\tNEW    cov: 10 ft: 20 corp: 2/4b lim: 4 exec/s: 1000 rss: 30Mb\n'
sleep 0.3
echo "stat::number_of_executed_units: 100"
exit 0
STUB
	chmod +x "$T/build/fuzz/targets/fuzz_a"
}

# check_table JSON WANT...: the table's row for a, its figures by their definitions, and WANT (python).
check_table() {
	rate_ok "$1"
	python3 - "$@" <<'PY' || fail "the JSON table's figures"
import json, sys
r = json.load(open(sys.argv[1]))["targets"][0]
for want in sys.argv[2:]:
    assert eval(want), (want, r)
print("ok: the JSON table:", r)
PY
}

case $mode in
no-artifact | fork-no-artifact)
	mkdir -p "$T/build/fuzz/targets"
	cat >"$T/build/fuzz/targets/fuzz_a" <<'STUB'
#!/usr/bin/env bash
echo "==1== ERROR: stand-in: the target crashed in LLVMFuzzerInitialize"
echo x >>"${STANDIN_STARTS:?}"
exit 1
STUB
	chmod +x "$T/build/fuzz/targets/fuzz_a"
	export STANDIN_STARTS=$WORK/starts
	if [[ $mode == fork-no-artifact ]]; then
		MMFUZZ_ROOT=$T "$ROOT/tools/verbs/fuzz" a --time 30 --jobs 2 --no-build --no-replay-check \
			--out "$WORK/o" --json "$WORK/t.json" >"$WORK/log" 2>&1
		rc=$?
		cat "$WORK/log"
		[[ $rc == 1 ]] || fail "exit $rc, want 1 (a fork-mode libFuzzer that dies is a finding)"
		grep -q 'fork mode) stopped (exit 1) without writing a finding' "$WORK/log" || fail "the stop was not said"
		python3 - "$WORK/t.json" <<'PY' || fail "the JSON table"
import json, sys
r = json.load(open(sys.argv[1]))["targets"][0]
assert r["engine_stops"] == 1 and r["crashes"] == 0, r
PY
		verdict
		exit
	fi
	MMFUZZ_ROOT=$T "$ROOT/tools/verbs/fuzz" a --time 30 --no-build --no-replay-check \
		--out "$WORK/o" --json "$WORK/t.json" >"$WORK/log" 2>&1
	rc=$?
	cat "$WORK/log"
	[[ $rc == 1 ]] || fail "exit $rc, want 1 (a target that dies is a finding)"
	n=$(wc -l <"$WORK/starts")
	[[ $n == 3 ]] || fail "libFuzzer was started $n times, want 3"
	grep -q 'stopped 3 times (exit 1) before running any input' "$WORK/log" || fail "the start-up failure was not said"
	grep -q 'a/log.txt' "$WORK/log" || fail "the log was not named"
	python3 - "$WORK/t.json" <<'PY' || fail "the JSON table"
import json, sys
r = json.load(open(sys.argv[1]))["targets"][0]
assert r["engine_stops"] == 3 and r["crashes"] == 0, r
PY
	;;
afl-hangs)
	export STANDIN_ARGS=$WORK/args
	PATH=$WORK/bin:$PATH MMFUZZ_ROOT=$T "$ROOT/tools/verbs/fuzz" a --engine afl --time 1 --no-build \
		--out "$WORK/o" --json "$WORK/t.json" >"$WORK/log" 2>&1
	rc=$?
	cat "$WORK/log"
	[[ $rc == 1 ]] || fail "exit $rc, want 1 (hangs are findings)"
	grep -q -- '-t 2000' "$WORK/args" || fail "afl-fuzz ran without -t 2000: $(cat "$WORK/args")"
	grep -Eq '^a +afl +[0-9.]+ +500 .* 2 +100\.00%$' "$WORK/log" || fail "no table row with 500 execs and 2 crashes"
	grep -q '2 crashes (2 of them hangs' "$WORK/log" || fail "the hangs were not named"
	python3 - "$WORK/t.json" <<'PY' || fail "the JSON table"
import json, sys
r = json.load(open(sys.argv[1]))["targets"][0]
assert r["crashes"] == 2 and r["hangs"] == 2, r
PY
	# crashes: the files in hangs/; corpus: the queue entries found (not the seed, not the imports)
	check_table "$WORK/t.json" "r['crashes'] == $(ls "$WORK/o/a/afl/main/hangs" | wc -l)" "r['corpus'] == 3" \
		"r['coverage'] == 1.0 and r['coverage_unit'] == 'map_pct'"
	;;
afl-missing)
	mkdir -p "$WORK/pbin"
	ln -s "$(python3 -c 'import sys; print(sys.executable)')" "$WORK/pbin/python3"
	PATH=$WORK/pbin MMFUZZ_ROOT=$T "$ROOT/tools/verbs/fuzz" a --engine afl --time 1 --no-build \
		--out "$WORK/o" >"$WORK/log" 2>&1
	refused $? "$WORK/log" "$WORK/o" 'afl-fuzz is not on PATH (Debian package afl++' "no afl-fuzz (an engine that cannot run)"
	;;
time-share)
	mkdir -p "$T/build/fuzz/targets"
	for n in b c d; do
		echo $n >>"$T/targets/TARGETS"
		mkdir -p "$T/corpus/$n"
		echo x >"$T/corpus/$n/seed"
	done
	cat >"$T/build/fuzz/targets/fuzz_a" <<'STUB'
#!/usr/bin/env bash
# A libFuzzer whose start-up takes 2 s outside its -max_total_time, then runs for it; the table's
# coverage pass (-runs=0, after the campaign) ends at once.
for a; do [[ $a == -max_total_time=* ]] && t=${a#*=}; done
[[ ${t:-} ]] || { printf '#2\tINITED cov: 10 ft: 20 corp: 2/4b exec/s: 0 rss: 30Mb\n'; exit 0; }
echo "$(basename "$0") $t" >>"${STANDIN_TIMES:?}"
sleep $((2 + t))
printf '#100\tNEW    cov: 10 ft: 20 corp: 2/4b lim: 4 exec/s: 1000 rss: 30Mb\n'
echo "stat::number_of_executed_units: 100"
exit 0
STUB
	chmod +x "$T/build/fuzz/targets/fuzz_a"
	for n in b c d; do cp "$T/build/fuzz/targets/fuzz_a" "$T/build/fuzz/targets/fuzz_$n"; done
	export STANDIN_TIMES=$WORK/times
	start=$SECONDS
	MMFUZZ_ROOT=$T "$ROOT/tools/verbs/fuzz" all --time 24 --no-build --no-replay-check \
		--out "$WORK/o" >"$WORK/log" 2>&1
	rc=$?
	took=$((SECONDS - start))
	cat "$WORK/log" "$WORK/times"
	[[ $rc == 0 ]] || fail "exit $rc, want 0"
	# Each gets (24 - 4 x 1 s expected start-up) / 4 = 5 s, then what is left less the mean start-up so
	# far for each still to run: 4 s of libFuzzer each (5 s less the time the verb has taken, in whole
	# seconds), 3 on a slow machine.  Fixed quarters: 5 s each, 28 s in all; an equal share of what
	# was left: 5, 5, 4, 3.
	mapfile -t got < <(awk '{print $2}' "$WORK/times")
	[[ ${#got[@]} == 4 ]] || fail "not four runs: ${got[*]}"
	lo=$(printf '%s\n' "${got[@]}" | sort -n | head -1) hi=$(printf '%s\n' "${got[@]}" | sort -n | tail -1)
	((hi - lo <= 1 && lo >= 3)) ||
		fail "the shares were not even (${got[*]} s; an equal share of what was left gave 5 5 4 3)"
	((took <= 26)) || fail "fuzz all --time 24 took $took s: the start-ups ran past --time"
	;;
time-one)
	fuzzer_ok
	export STANDIN_STARTS=$WORK/starts
	# --no-build with build/fuzz-replay already built: its binaries as they are (they were built
	# again: here, with no CMakeLists.txt, a failed configure, exit 2)
	mkdir -p "$T/build/fuzz-replay/targets"
	printf '#!/bin/sh\nexit 0\n' >"$T/build/fuzz-replay/targets/fuzz_a"
	chmod +x "$T/build/fuzz-replay/targets/fuzz_a"
	MMFUZZ_ROOT=$T "$ROOT/tools/verbs/fuzz" a --time 1 --no-build \
		--out "$WORK/o" --json "$WORK/t.json" >"$WORK/log" 2>&1
	rc=$?
	cat "$WORK/log"
	[[ $rc == 0 ]] || fail "exit $rc, want 0"
	[[ -s $WORK/starts ]] || fail "--time 1: the engine never started"
	grep -q 'building the replay' "$WORK/log" && fail "--no-build built the replay binaries"
	# progress: corpus is the new entries (1), as in the table - it was the total (2, the seed too)
	grep -Eq '^\[a\] .* corpus 1 +crashes 0$' "$WORK/log" || fail "the progress line's corpus is not the 1 new entry"
	check_table "$WORK/t.json" "r['execs'] == 100" "r['corpus'] == 1 and r['crashes'] == 0" \
		"r['coverage'] == 17 and r['coverage_unit'] == 'edges'" "r['replay_inputs'] == 2"
	# the --no-build refusal when the replay binary is missing
	rm "$T/build/fuzz-replay/targets/fuzz_a"
	MMFUZZ_ROOT=$T "$ROOT/tools/verbs/fuzz" a --time 1 --no-build --out "$WORK/o2" >"$WORK/log2" 2>&1
	rc=$?
	[[ $rc == 2 ]] && grep -q 'build/fuzz-replay/targets/fuzz_a is not built' "$WORK/log2" ||
		fail "--no-build, no replay binary: exit $rc, want 2 and 'is not built':"$'\n'"$(cat "$WORK/log2")"
	;;
seed-crash)
	mkdir -p "$T/build/fuzz/targets"
	echo boom >"$T/corpus/a/boom"
	cat >"$T/build/fuzz/targets/fuzz_a" <<'STUB'
#!/usr/bin/env bash
# libFuzzer's stand-in: it runs its corpus first, and an input "boom" crashes (exit 77): the artifact
# crash-<sha1> and its "Test unit written to" line, as libFuzzer writes them; else it fuzzes and ends.
[[ " $* " == *" -runs=0 "* ]] && { printf '#3\tINITED cov: 23 ft: 30 corp: 2/4b exec/s: 0 rss: 30Mb\n'; exit 0; }
echo x >>"${STANDIN_STARTS:?}"
for a; do
	case $a in -artifact_prefix=*) prefix=${a#*=} ;; -*) ;; *) corpus=$a ;; esac
done
for f in "$corpus"/*; do
	if [[ $(cat "$f") == boom ]]; then
		art=${prefix}crash-$(sha1sum <"$f" | cut -c1-40)
		cp "$f" "$art"
		echo "==1== ERROR: libFuzzer: deadly signal"
		echo "MS: 0 ; base unit: 0000000000000000000000000000000000000000"
		echo "artifact_prefix='$prefix'; Test unit written to $art"
		echo "stat::number_of_executed_units: 1"
		exit 77
	fi
done
echo new >"$corpus/new-input"
printf '#200\tNEW    cov: 10 ft: 20 corp: 2/4b lim: 4 exec/s: 1000 rss: 30Mb\n'
echo "stat::number_of_executed_units: 200"
exit 0
STUB
	chmod +x "$T/build/fuzz/targets/fuzz_a"
	export STANDIN_STARTS=$WORK/starts
	MMFUZZ_ROOT=$T "$ROOT/tools/verbs/fuzz" a --time 5 --no-build --no-replay-check \
		--out "$WORK/o" --json "$WORK/t.json" >"$WORK/log" 2>&1
	rc=$?
	cat "$WORK/log"
	[[ $rc == 1 ]] || fail "exit $rc, want 1 (a crash)"
	grep -q 'without writing a finding' "$WORK/log" && fail "a re-crash on a saved input called a stop without a finding"
	grep -q 'the corpus input boom that crashes moved to .*o/a/corpus-crashing' "$WORK/log" || fail "the move was not said"
	[[ -e $WORK/o/a/corpus/boom ]] && fail "the crashing input is still in corpus/"
	[[ $(cat "$WORK/o/a/corpus-crashing/boom" 2>/dev/null) == boom ]] || fail "the crashing input was not kept in corpus-crashing/"
	n=$(wc -l <"$WORK/starts")
	[[ $n == 2 ]] || fail "libFuzzer was started $n times, want 2 (the crash, then a run that fuzzes)"
	ncrash=$(ls "$WORK/o/a/crashes" | grep -c '^crash-')
	# corpus: new-input only (the seed set aside is no new entry); execs: 1 + 200
	check_table "$WORK/t.json" "r['crashes'] == $ncrash == 1" "'engine_stops' not in r" "r['corpus'] == 1" \
		"r['execs'] == 201" "r['coverage'] == 23"
	;;
replay-fails | replay-interrupt)
	fuzzer_ok
	export STANDIN_STARTS=$WORK/starts STANDIN_REPLAY=$WORK/replay.pid
	mkdir -p "$WORK/replay/targets"
	if [[ $mode == replay-fails ]]; then
		printf '#!/bin/sh\necho "==mmfuzz== VIOLATION B2"; echo "==mmfuzz== input: $1"; exit 1\n' \
			>"$WORK/replay/targets/fuzz_a"
	else
		printf '#!/bin/sh\necho $$ >"$STANDIN_REPLAY"\nexec sleep 600\n' >"$WORK/replay/targets/fuzz_a"
	fi
	chmod +x "$WORK/replay/targets/fuzz_a"
	MMFUZZ_REPLAY_DIR=$WORK/replay MMFUZZ_ROOT=$T "$ROOT/tools/verbs/fuzz" a --time 1 --no-build \
		--out "$WORK/o" --json "$WORK/t.json" >"$WORK/log" 2>&1 &
	verb=$!
	if [[ $mode == replay-interrupt ]]; then
		wait_started "the stand-in replay" "$STANDIN_REPLAY"
		kill -INT "$verb"
		stopped_within_20s "$verb" "the verb still runs 20 s after the signal (the replay went on)"
	fi
	wait "$verb"
	rc=$?
	cat "$WORK/log"
	grep -q Traceback "$WORK/log" && fail "a Python traceback"
	if [[ $mode == replay-fails ]]; then
		[[ $rc == 1 ]] || fail "exit $rc, want 1 (replay failures are findings)"
		grep -q '2 inputs failed only in the replay without sanitizers' "$WORK/log" ||
			fail "the replay failures were not said"
		n=$(find "$WORK/o/a/crashes" -name 'replay-*' ! -name '*.log' | wc -l)
		[[ $n == 2 ]] || fail "$n replay-* inputs kept, want 2"
		want='r["replay_failures"] == 2 and not t.get("interrupted")'
	else
		expect_gone "the stand-in replay" "$STANDIN_REPLAY"
		[[ $rc == 130 ]] || fail "exit $rc, want 130"
		grep -q 'the replay without sanitizers stopped' "$WORK/log" || fail "the stopped replay was not said"
		ls "$WORK/o/a/crashes" | grep -q . && fail "findings after an interrupted replay: $(ls "$WORK/o/a/crashes")"
		want='r["replay_failures"] == 0 and r["replay_interrupted"] and t["interrupted"]'
	fi
	python3 - "$WORK/t.json" "$WORK/o/summary.json" "$want" <<'PY' || fail "the JSON tables"
import json, sys
for path in sys.argv[1:3]:
    t = json.load(open(path))
    r = t["targets"][0]
    assert eval(sys.argv[3]), (path, t)
PY
	;;
build)
	fuzzer_ok
	export STANDIN_STARTS=$WORK/starts STANDIN_CMAKE=$WORK/cmake.log STANDIN_FUZZER=$WORK/fuzzer
	mv "$T/build/fuzz/targets/fuzz_a" "$STANDIN_FUZZER"
	# No clang (nor the rest of deps.sh core's tools) on PATH: deps.sh's message, exit 2.
	mkdir -p "$WORK/pbin"
	for t in bash sort tr id; do ln -s "$(command -v $t)" "$WORK/pbin/$t"; done
	ln -s "$(python3 -c 'import sys; print(sys.executable)')" "$WORK/pbin/python3"
	PATH=$WORK/pbin MMFUZZ_NO_INSTALL=1 MMFUZZ_ROOT=$T "$ROOT/tools/verbs/fuzz" a --time 1 --out "$WORK/o0" \
		>"$WORK/log0" 2>&1
	refused $? "$WORK/log0" "$WORK/o0" 'mmfuzz deps: missing: clang' "no clang (deps.sh core run first)"
	# What a failed configure leaves: CMakeCache.txt, no build.ninja.  A stand-in cmake (first on PATH)
	# logs its arguments; its --build fails as ninja does without build.ninja.
	if ! MMFUZZ_NO_INSTALL=1 bash "$ROOT/tools/deps.sh" core >/dev/null 2>&1; then
		echo "skipped: the configure check (tools/deps.sh core fails on this machine)"
		verdict
		exit
	fi
	mkdir -p "$T/build/fuzz" "$T/build/fuzz-replay"
	: >"$T/build/fuzz/CMakeCache.txt"
	: >"$T/build/fuzz-replay/CMakeCache.txt"
	standin_cmake "$WORK/bin"
	# its build makes the targets: the stand-in fuzzer, and in build/fuzz-replay a replay that passes
	cat >"$WORK/build.sh" <<'STUB'
#!/usr/bin/env bash
dir=$1
shift
mkdir -p "$dir/targets"
for t; do
	if [[ $dir == */fuzz-replay ]]; then printf '#!/bin/sh\nexit 0\n' >"$dir/targets/$t"; else cp "$STANDIN_FUZZER" "$dir/targets/$t"; fi
	chmod +x "$dir/targets/$t"
done
STUB
	chmod +x "$WORK/build.sh"
	export STANDIN_BUILD=$WORK/build.sh
	PATH=$WORK/bin:$PATH MMFUZZ_NO_INSTALL=1 MMFUZZ_ROOT=$T "$ROOT/tools/verbs/fuzz" a --time 1 --out "$WORK/o" \
		>"$WORK/log" 2>&1
	rc=$?
	cat "$WORK/log" "$STANDIN_CMAKE"
	[[ $rc == 0 ]] || fail "exit $rc, want 0"
	grep -q -- '--preset fuzz' "$STANDIN_CMAKE" || fail "build/fuzz (a cache, no build.ninja) was not configured"
	grep -q -- "-B $T/build/fuzz-replay" "$STANDIN_CMAKE" || fail "build/fuzz-replay (a cache, no build.ninja) was not configured"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
verdict

#!/usr/bin/env bash
# tests/verbs/bench.sh MODE ROOT WORK [EXE...]
#   usage     ./mmfuzz bench's bad arguments (ctest verbs_bench_usage): each
#             exits 2 with its message, and none of them configures or builds
#             build/release first.
#   binaries  the benchmark executables EXE... themselves (ctest
#             bench_binaries_usage, bench/CMakeLists.txt): --help prints the
#             options each takes on stdout, exit 0 (it was stderr, and exit 2
#             for three of four); an unknown option, --json without a file
#             (--json --quick took "--quick" for the file and ran in full) or
#             into a missing directory or onto one exits 2 with its message
#             before anything is measured (it was exit 1, after perror).
#             The JSON is written whole when the run ends: one killed mid-way
#             leaves FILE as it was (it was truncated as the run began and
#             written as it went), one that ends replaces FILE, and neither
#             leaves anything else in its directory.
#   standin   ./mmfuzz bench --no-build on a stand-in tree (MMFUZZ_ROOT, ctest
#             verbs_bench_standin) whose build/release holds stand-in
#             benchmarks: bench_ok and bench_ok2 write JSON, bench_fail
#             writes half of it and exits 1, bench_garbage writes JSON that
#             does not parse, bench_silent writes none, bench_nojson takes no
#             --json.  The figures of the good ones are kept and the others
#             named, exit 1 - a failed one's half JSON was copied as the
#             figures, or with another benchmark ended in a traceback that
#             lost them all; with no figures FILE is not written ("{}" was,
#             said to be "figures written"); --json with an option or nothing
#             for its file is refused (--json --quick wrote a file "--quick").
#             Stand-in scripts: --json - reaches one whose --help takes it and
#             is refused for the others (it was dropped, and the script wrote
#             its default file, bench/results/NAME.json); --no-build, which
#             scripts ignored, is refused, and so is one --json FILE for
#             several scripts (each wrote it over the last).  A failed
#             configure's leftovers (a cache, no build.ninja) in build/release
#             (--no-build) and build/stress-rel (bench_sched) are configured
#             again - every later run failed in ninja.
VERB=bench
# shellcheck source=tests/verbs/lib.sh
source "$(dirname "$0")/lib.sh"

case $mode in
usage)
	expect 2 "no benchmark 'nosuch' \(there are: buddy pages sched slub\)" nosuch
	expect 2 "no benchmark 'nosuch'" buddy bench_nosuch
	expect 2 "not a benchmark name: 'Bad!'" 'Bad!'
	expect 2 "unknown argument '--bogus'" --bogus
	expect 2 "--json: cannot write '$WORK/missing/x.json': no such directory" --json "$WORK/missing/x.json" buddy
	expect 2 "--json: cannot write '$WORK': it is a directory" --json "$WORK" buddy
	expect 2 'run alone, not with other benchmarks' sched_grade buddy
	refused_before_build nosuch
	# --list reads the sources: the benchmarks and the scripts, nothing configured or built.
	expect 0 '^slub$' --list
	expect 0 '^fuzz_exec \(script, only when named\)$' --list
	refused_before_build --list
	[[ ! -e $WORK/missing ]] || fail "bench created $WORK/missing"
	;;
binaries)
	shift 3
	(($#)) || fail "no benchmark executables given"
	# The options each takes; one not listed here takes --quick alone.
	declare -A takes=([bench_buddy]='--json --quick' [bench_pages]='--json --quick --peer-default'
		[bench_slub]='--json --quick --peer-default' [bench_sched]='--quick')
	# expect runs "$MMFUZZ" "$VERB" ARGS: env EXE ARGS, in $WORK, cut off at 60 s
	# should a refusal regress into a full run.
	MMFUZZ='env'
	EXPECT_TIMEOUT=60
	cd "$WORK" || exit 1
	for exe in "$@"; do
		name=$(basename "$exe")
		VERB=$exe
		opts=${takes[$name]:---quick}
		for h in --help -h; do
			out=$("$exe" $h 2>"$WORK/stderr")
			rc=$?
			if ((rc != 0)) || [[ -s $WORK/stderr ]] || ! grep -q "^usage: $name " <<<"$out"; then
				fail "$name $h: exit $rc, want 0 and the usage on stdout alone; stdout:"$'\n'"$out"$'\n'"stderr:"$'\n'"$(cat "$WORK/stderr")"
			else
				echo "ok: $name $h -> exit 0, usage on stdout"
			fi
		done
		for o in --json --quick --peer-default -h; do
			if [[ " $opts -h " == *" $o "* ]]; then
				grep -q -- "^  $o" <<<"$out" || fail "$name --help does not list $o:"$'\n'"$out"
			else
				grep -q -- "$o" <<<"$out" && fail "$name --help lists $o, which it does not take:"$'\n'"$out"
			fi
		done
		expect 2 "^$name: unknown option '--bogus'" --bogus
		if [[ " $opts " != *" --json "* ]]; then
			expect 2 "^$name: unknown option '--json'" --json "$WORK/x.json"
			continue
		fi
		expect 2 "^$name: --json: cannot write '$WORK/missing/x.json': no such directory" --json "$WORK/missing/x.json"
		expect 2 "^$name: --json: cannot write '$WORK': it is a directory" --quick --json "$WORK"
		expect 2 "^$name: --json needs a file" --json --quick
		expect 2 "^$name: --json needs a file" --quick --json ''
		expect 2 "^$name: --json needs a file" --quick --json
		# Refused before anything was measured: no table, no file.
		out=$("$exe" --json "$WORK/missing/x.json" 2>/dev/null)
		[[ -z $out ]] || fail "$name measured before refusing --json into a missing directory:"$'\n'"$out"
		[[ ! -e $WORK/--quick ]] || fail "$name took --quick for the JSON file"
		rm -f -- "$WORK/--quick"
	done
	[[ ! -e $WORK/missing ]] || fail "a benchmark created $WORK/missing"
	for exe; do
		case $(basename "$exe") in
		bench_buddy) quick_exe=$exe ;;   # --quick: 0.2 s in the debug build
		bench_slub) long_exe=$exe ;;     # a full run: minutes
		esac
	done
	if [[ -n ${quick_exe:-} ]]; then
		mkdir -p "$WORK/done" && echo old >"$WORK/done/x.json"
		"$quick_exe" --quick --json "$WORK/done/x.json" >/dev/null || fail "$quick_exe --quick --json failed"
		if python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["bench"] == "buddy"' "$WORK/done/x.json"; then
			echo "ok: bench_buddy --quick --json FILE replaced FILE with its JSON"
		else
			fail "bench_buddy --quick --json FILE: not its JSON:"$'\n'"$(cat "$WORK/done/x.json")"
		fi
		[[ $(ls -A "$WORK/done") == x.json ]] || fail "bench_buddy --json left more than the file: $(ls -A "$WORK/done")"
	fi
	if [[ -n ${long_exe:-} ]]; then
		mkdir -p "$WORK/killed" && echo old >"$WORK/killed/x.json"
		"$long_exe" --json "$WORK/killed/x.json" >/dev/null &
		pid=$!
		sleep 1
		kill -KILL "$pid"
		{ wait "$pid"; } 2>/dev/null
		rc=$?
		if ((rc != 137)); then
			fail "bench_slub was not killed mid-run (exit $rc)"
		elif [[ $(cat "$WORK/killed/x.json") != old || $(ls -A "$WORK/killed") != x.json ]]; then
			fail "bench_slub killed mid-run changed its JSON file or left others: $(ls -A "$WORK/killed"):"$'\n'"$(cat "$WORK/killed/x.json")"
		else
			echo "ok: bench_slub killed mid-run left its JSON file as it was, and nothing else"
		fi
	fi
	;;
standin)
	T=$WORK/root
	mkdir -p "$T/bench" "$T/build/release/bench"
	ln -s "$ROOT/tools" "$T/tools"
	standins=(ok ok2 fail garbage silent nojson)
	{
		echo 'cmake_minimum_required(VERSION 3.16)'
		echo 'project(standin NONE)'
		echo 'if(DEFINED ENV{STANDIN_CONFIGURE_FAIL})'
		echo '  message(FATAL_ERROR "stand-in configure failure")'
		echo 'endif()'
		for n in "${standins[@]}" sched; do
			echo "add_custom_target(bench_$n)"
			: >"$T/bench/bench_$n.c"
		done
	} >"$T/CMakeLists.txt"
	cmake -S "$T" -B "$T/build/release" -G Ninja >"$WORK/configure.log" 2>&1 ||
		{ cat "$WORK/configure.log"; fail "the stand-in tree does not configure"; verdict; }
	for n in "${standins[@]}"; do
		cat >"$T/build/release/bench/bench_$n" <<'STUB'
#!/usr/bin/env bash
# A stand-in benchmark; its name says what it does with --json FILE.
name=${0##*/bench_} json=
while (($#)); do
	case $1 in
	--help)
		[[ $name == nojson ]] && echo "usage: bench_$name [--quick]" || echo "usage: bench_$name [--json FILE] [--quick]"
		exit 0 ;;
	--json) json=$2; shift 2 ;;
	--quick) shift ;;
	*) echo "bench_$name: unknown option '$1'" >&2; exit 2 ;;
	esac
done
echo "stand-in bench_$name ran"
[[ -n $json ]] || exit 0
case $name in
ok*) printf '{"bench": "%s", "results": {"x_ns": 1.5}}\n' "$name" >"$json" ;;
fail) printf '{"bench": "fail", "results": {"x_ns": 1' >"$json"; exit 1 ;;
garbage) printf '{"bench": "garbage", "results": {' >"$json" ;;
esac
exit 0
STUB
		chmod +x "$T/build/release/bench/bench_$n"
	done
	# expect runs "$MMFUZZ" "$VERB" ARGS: the verb on the stand-in tree, --no-build, in $WORK.
	MMFUZZ=$WORK/bench-standin
	printf '#!/usr/bin/env bash\nMMFUZZ_ROOT=%q exec %q "$@"\n' "$T" "$ROOT/tools/verbs/bench" >"$MMFUZZ"
	chmod +x "$MMFUZZ"
	VERB=--no-build
	EXPECT_TIMEOUT=60
	cd "$WORK" || exit 1
	# keys FILE WANT: FILE is JSON whose top-level keys are WANT (space-separated, sorted).
	keys() {
		local got
		got=$(python3 -c 'import json, sys; print(" ".join(sorted(json.load(open(sys.argv[1])))))' "$1" 2>&1)
		if [[ $got == "$2" ]]; then echo "ok: $1 holds $2"; else fail "$1: keys '$got', want '$2'"; fi
	}
	expect 0 'figures of ok, ok2 written to' ok ok2 --json "$WORK/both.json"
	keys "$WORK/both.json" 'ok ok2'
	expect 0 'figures of ok written to' ok --json "$WORK/ok.json"
	keys "$WORK/ok.json" 'bench results'

	# --json takes a file: not the next option, not nothing.
	expect 2 "--json needs a file, not the option '--quick'" ok --json --quick
	[[ ! -e $WORK/--quick ]] || fail "bench wrote a JSON file named --quick"
	expect 2 "--json needs a file, not the option '--quick'" ok --json=--quick
	expect 2 "--json needs a file, not ''" ok --json=
	expect 2 "--json needs a file, not ''" ok --json ''

	# No figures: said, and FILE not written.
	expect 0 "no figures: $WORK/nojson.json not written" nojson --json "$WORK/nojson.json"
	[[ ! -e $WORK/nojson.json ]] || fail "bench nojson wrote $WORK/nojson.json: $(cat "$WORK/nojson.json")"

	# A failed benchmark's JSON is left out, the others' kept; exit 1.
	expect 1 "left out of $WORK/fail.json: fail \(failed\)" ok fail --json "$WORK/fail.json"
	keys "$WORK/fail.json" ok
	expect 1 "no figures: $WORK/fail1.json not written" fail --json "$WORK/fail1.json"
	[[ ! -e $WORK/fail1.json ]] || fail "bench fail wrote $WORK/fail1.json: $(cat "$WORK/fail1.json")"
	expect 1 'left out of .*: garbage \(its JSON does not parse: .*\), silent \(wrote no JSON\), nojson \(no --json\)' \
		ok garbage silent nojson --json "$WORK/bad.json"
	keys "$WORK/bad.json" ok
	expect 1 "left out of $WORK/silent.json: silent \(wrote no JSON\)" silent --json "$WORK/silent.json"
	[[ ! -e $WORK/silent.json ]] || fail "bench silent wrote $WORK/silent.json"

	# Scripts: each prints the arguments it got; tostdout's --help takes --json -.
	for n in plain tostdout; do
		cat >"$T/bench/$n.py" <<EOF
import sys
if "--help" in sys.argv:
    print("usage: $n.py [--quick] [--json FILE]" + (" (--json - : stdout)" if "$n" == "tostdout" else ""))
    sys.exit(0)
print("$n got:", *sys.argv[1:])
EOF
		chmod +x "$T/bench/$n.py"
	done
	VERB=--quick
	expect 0 '^tostdout got: --quick --json -$' tostdout --json -
	expect 0 "^plain got: --quick --json $WORK/p.json\$" plain --json "$WORK/p.json"
	expect 2 "--json -: plain writes its JSON to a file only" plain --json -
	expect 2 '--no-build is for the bench_\* executables' plain --no-build
	expect 2 '--json FILE with several scripts' plain tostdout --json "$WORK/p.json"

	# A failed configure's leftovers (a cache, no build.ninja) are configured again - only a missing
	# cache was: build/release under --no-build (every later run found no benchmark), build/stress-rel
	# for bench_sched (every later build failed in ninja).  Real cmake on the stand-in tree, whose
	# configure fails under STANDIN_CONFIGURE_FAIL; bench runs tools/deps.sh core before it configures.
	export MMFUZZ_NO_INSTALL=1
	if ! bash "$ROOT/tools/deps.sh" core >/dev/null 2>&1; then
		echo "skipped: the configure checks (tools/deps.sh core fails on this machine)"
	else
		rm "$T/build/release/build.ninja"
		VERB=--no-build
		expect 0 '^stand-in bench_ok ran$' ok
		[[ -f $T/build/release/build.ninja ]] || fail "build/release (a cache, no build.ninja) was not configured again"
		S=$T/build/stress-rel
		STANDIN_CONFIGURE_FAIL=1 cmake -S "$T" -B "$S" -G Ninja >"$WORK/configure-fail.log" 2>&1 &&
			fail "the stand-in configure did not fail"
		[[ -f $S/CMakeCache.txt && ! -e $S/build.ninja ]] ||
			fail "the failed configure did not leave a cache without build.ninja: $(ls -A "$S")"
		mkdir -p "$S/bench" && cp "$T/build/release/bench/bench_ok" "$S/bench/bench_sched"
		VERB=--quick
		expect 0 '^stand-in bench_sched ran$' sched
		[[ -f $S/build.ninja ]] || fail "build/stress-rel (a cache, no build.ninja) was not configured again"
	fi
	;;
*)
	fail "unknown mode $mode"
	;;
esac
verdict

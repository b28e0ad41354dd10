#!/usr/bin/env bash
# tests/verbs/coverage.sh - ctest for ./mmfuzz coverage (tests/verbs_minimize_coverage.cmake).
#
#   coverage.sh usage ROOT WORK          bad arguments and a missing llvm-cov: exit 2 and a message;
#                                        --corpus fuzz_T=DIR taken (it was "not a directory"); a build
#                                        dir with a cache and no build.ninja configured again; SIGINT
#                                        during the replay (stand-in binary): message, exit 130, the
#                                        replay stopped (it was a traceback)
#   coverage.sh buddy ROOT WORK BUILD    the buddy target's corpora replayed under coverage (build
#                                        in BUILD): a report line for allocator/page/buddy.c with
#                                        a non-zero percentage, JSON that adds up, an HTML report
set -u
VERB=coverage
# shellcheck source=tests/verbs/lib.sh
source "$(dirname "$0")/lib.sh"

case $mode in
usage)
	mkdir -p "$WORK/anon"
	expect 2 "unknown target 'nosuch'" --targets nosuch
	expect 2 "unexpected argument '--frob'" --frob
	expect 2 "unexpected argument 'buddy'" buddy
	expect 2 '--corpus needs a value' --corpus
	expect 2 'not a directory' --corpus "$WORK/missing"
	expect 2 'cannot tell which target' --corpus "$WORK/anon"
	expect 2 '--fail-under needs a percentage' --fail-under lots
	expect 2 '--fail-under needs a percentage \(0 to 100\)' --fail-under nan
	expect 2 '--fail-under needs a percentage' --fail-under 150
	expect 2 "--json: cannot write '.*/missing/c.json': no such directory" --json "$WORK/missing/c.json"
	expect 2 "--json: cannot write '$WORK': it is a directory" --json "$WORK"
	# A directory that takes no new file (/proc: access() says yes to root): refused before the build,
	# not a traceback after every replay (a regression is cut short at 60 s).
	EXPECT_TIMEOUT=60
	expect 2 "--json: cannot write '/proc/c.json': its directory takes no new file" --json /proc/c.json --no-build
	refused_before_build --json /proc/c.json
	# --html the same: it was made only after every replay, and a failure there still exited 0.
	expect 2 "--html: cannot (create|write) '/proc/h" --html /proc/h --no-build
	refused_before_build --html /proc/h
	unset EXPECT_TIMEOUT
	: >"$WORK/plain"
	expect 2 'cannot create the output directory .*/plain/out: Not a directory' --out "$WORK/plain/out" --targets buddy
	expect 2 'contradict' --html "$WORK/h" --no-html
	expect 2 'not a regular expression' --exclude '('
	# The llvm tools missing: a clear error before anything is built.
	MMFUZZ_LLVM_COV=$WORK/no-llvm-cov expect 2 "MMFUZZ_LLVM_COV=.*no-llvm-cov: no such program" --targets buddy
	MMFUZZ_LLVM_PROFDATA=$WORK/no-profdata expect 2 "no such program" --targets buddy
	expect 0 'usage: mmfuzz coverage' --help
	# fuzz_T=DIR as --targets fuzz_T: taken, on to the build (none here: "not built")
	mkdir -p "$WORK/nobuild"
	expect 2 'targets/fuzz_buddy is not built' --targets fuzz_buddy --corpus "fuzz_buddy=$WORK/anon" \
		--build-dir "$WORK/nobuild" --no-build --out "$WORK/o15" --no-html
	# a failed configure's cache without build.ninja: configured again (a stand-in cmake fails it)
	mkdir -p "$WORK/half" "$WORK/bin"
	: >"$WORK/half/CMakeCache.txt"
	cat >"$WORK/bin/cmake" <<'STUB'
#!/bin/sh
case $1 in
--version) echo "cmake version 3.25.1"; exit 0 ;;
--build) echo "ninja: error: loading 'build.ninja': No such file or directory" ;;
*) echo "stand-in configure: $*" ;;
esac
exit 1
STUB
	chmod +x "$WORK/bin/cmake"
	if MMFUZZ_NO_INSTALL=1 PATH=$WORK/bin:$PATH bash "$ROOT/tools/deps.sh" core >/dev/null 2>&1; then
		PATH=$WORK/bin:$PATH MMFUZZ_NO_INSTALL=1 expect 2 'configuring preset coverage in .*/half' \
			--targets buddy --build-dir "$WORK/half" --out "$WORK/o5" --no-html
	fi
	# SIGINT during the replay: a stand-in coverage build whose binary hangs
	mkdir -p "$WORK/cstub/targets"
	echo 'MM_COVERAGE:BOOL=ON' >"$WORK/cstub/CMakeCache.txt"
	printf '#!/bin/sh\necho $$ >"$STANDIN_PID"\nexec sleep 600\n' >"$WORK/cstub/targets/fuzz_buddy"
	chmod +x "$WORK/cstub/targets/fuzz_buddy"
	export STANDIN_PID=$WORK/replay.pid
	"$MMFUZZ" coverage --targets buddy --build-dir "$WORK/cstub" --no-build --out "$WORK/ci" --no-html \
		>"$WORK/ilog" 2>&1 &
	interrupted_130 $! "the stand-in replay" "$STANDIN_PID" "$WORK/ilog"
	grep -q 'mmfuzz coverage: interrupted: no report' "$WORK/ilog" || fail "the interrupt was not said"
	expect_gone "the stand-in replay" "$STANDIN_PID"
	;;
buddy)
	BUILD=$4
	# An extra corpus given as TARGET=DIR: one seed copied there, replayed too.
	mkdir -p "$WORK/extra"
	cp "$ROOT/corpus/buddy/basic" "$WORK/extra/copy-of-basic"
	out=$("$MMFUZZ" coverage --targets buddy --build-dir "$BUILD" --out "$WORK/out" --json "$WORK/cov.json" \
		--corpus "buddy=$WORK/extra" 2>&1)
	rc=$?
	echo "$out"
	[[ $rc == 0 ]] || fail "coverage exited $rc, want 0"
	line=$(grep -E '^allocator/page/buddy\.c ' <<<"$out")
	if [[ -z $line ]]; then
		fail "no report line for allocator/page/buddy.c"
	else
		read -r _ lines covered lpct _ <<<"$line"
		((lines > 0 && covered > 0)) || fail "buddy.c: $covered of $lines lines covered"
		[[ $lpct =~ ^[0-9.]+%$ && ${lpct%%.*} -ge 50 ]] || fail "buddy.c line coverage '$lpct' (the seeds alone reach far more than 50%)"
	fi
	grep -Eq '^TOTAL +[0-9]+ +[0-9]+ +[0-9.]+%' <<<"$out" || fail "no TOTAL line"
	grep -q 'extra' <<<"$out" || fail "the extra corpus is not named among the replayed directories"
	[[ -s $WORK/out/html/index.html ]] || fail "no HTML report in $WORK/out/html/"
	[[ -s $WORK/out/report.txt && -s $WORK/out/merged.profdata ]] || fail "no report.txt / merged.profdata in $WORK/out"
	python3 - "$WORK/cov.json" "$ROOT" <<'PY' || fail "coverage.json is inconsistent"
import json, sys
d = json.load(open(sys.argv[1]))
files = {f["file"]: f for f in d["files"]}
b = files["allocator/page/buddy.c"]
assert 0 < b["lines_covered"] <= b["lines"] and b["line_pct"] > 0, b
assert 0 < b["branches_covered"] <= b["branches"] and b["branch_pct"] > 0, b
t = d["total"]
assert t["lines"] == sum(f["lines"] for f in d["files"]), t
assert t["lines_covered"] == sum(f["lines_covered"] for f in d["files"]), t
assert t["branches_covered"] == sum(f["branches_covered"] for f in d["files"]), t
assert all(f["file"].startswith("allocator/") for f in d["files"])
assert not d["failed"], d["failed"]
# the extra corpus replayed: among the directories, and its one input counted
import os
i = d["inputs"]["buddy"]
assert any(x.endswith("/extra") for x in i["dirs"]), ("the extra corpus is not among the replayed dirs", i)
root = sys.argv[2]
n = sum(len([f for f in os.listdir(x) if not f.startswith(".") and os.path.isfile(os.path.join(x, f))])
        for x in (os.path.join(root, "corpus", "buddy"), os.path.join(root, "corpus", "regressions", "buddy"))
        if os.path.isdir(x))
assert i["inputs"] == n + 1, ("inputs, want the seeds and regression inputs and the extra one", n + 1, i)
print("coverage.json: buddy.c %.2f%% lines, total %.2f%% of %d lines" % (b["line_pct"], t["line_pct"], t["lines"]))
PY
	# The HTML report failing at the end (an llvm-cov whose "show" fails): exit 2, said, the text
	# report still written - it was exit 0, "the report is written".
	real_cov=$(cd "$ROOT/tools/coverage" && python3 -c 'import llvmcov; print(llvmcov.find_tool("llvm-cov"))')
	printf '#!/bin/sh\n[ "$1" = show ] && { echo "planted: show fails" >&2; exit 1; }\nexec %s "$@"\n' "$real_cov" \
		>"$WORK/cov-noshow"
	chmod +x "$WORK/cov-noshow"
	out=$(MMFUZZ_LLVM_COV=$WORK/cov-noshow "$MMFUZZ" coverage --targets buddy --build-dir "$BUILD" --no-build \
		--out "$WORK/out2" 2>&1)
	rc=$?
	[[ $rc == 2 ]] || fail "coverage with a failing HTML report exited $rc, want 2"
	grep -q 'llvm-cov show (HTML) failed: no HTML report' <<<"$out" || fail "no message for the failed HTML report"
	[[ -s $WORK/out2/report.txt ]] || fail "no report.txt in $WORK/out2 when only the HTML failed"
	;;
*)
	echo "usage: $0 usage|buddy ROOT WORK [BUILD]" >&2
	exit 2
	;;
esac
verdict

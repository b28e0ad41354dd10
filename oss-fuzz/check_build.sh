#!/bin/bash
# check_build.sh - the moral equivalent of OSS-Fuzz's `helper.py check_build`
# without Docker: run oss-fuzz/build.sh with the environment OSS-Fuzz's
# builder gives it for one (engine, sanitizer) pair of oss-fuzz/project.yaml
# (infra/base-images/base-builder: compile, compile_libfuzzer, compile_afl;
# a temporary $SRC laid out as oss-fuzz/Dockerfile lays it out in its build
# context - .clusterfuzzlite/Dockerfile must give the same - $OUT and $WORK;
# $CC compiles, $CXX links), then check every fuzzer, seed corpus
# zip (exactly the files of corpus/T/, no src/), dict and options file is
# there and each fuzzer runs its whole seed corpus cleanly under the
# sanitizer options ClusterFuzz runs it with.
#
# usage: oss-fuzz/check_build.sh [--engine libfuzzer|afl] [--sanitizer address|undefined]
#   (default: libfuzzer, address; OSS-Fuzz builds AFL++ with address only)
#
#   libfuzzer  CC=clang, CFLAGS += the sanitizer's flags and
#              -fsanitize=fuzzer-no-link, LIB_FUZZING_ENGINE=-fsanitize=fuzzer
#   afl        CC=afl-clang-fast (Debian's afl++) with CMPLOG and the
#              dictionary pass on (two of compile_afl's roulette options),
#              no coverage flags, LIB_FUZZING_ENGINE=libAFLDriver.a; the
#              fuzzers then also run under afl-fuzz for a few seconds
#              (fuzz_buddy: the persistent loop, the fork server, the map)
#
# Exit status: 0 all good; 1 a check failed; 2 bad arguments; 77 the engine
# is not installed (AFL++: tools/deps.sh afl) - ctest reports that as skipped.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

engine=libfuzzer
sanitizer=address
usage() { sed -n '/^# usage:/,/^#$/{/^#$/d;s/^# \{0,1\}//p;}' "$0"; }   # the usage paragraph above
while (($#)); do
	case $1 in
	--engine) (($# >= 2)) || { echo "check_build: --engine needs a value" >&2; usage >&2; exit 2; }; engine=$2; shift 2 ;;
	--sanitizer) (($# >= 2)) || { echo "check_build: --sanitizer needs a value" >&2; usage >&2; exit 2; }; sanitizer=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	*) echo "check_build: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
	esac
done
case $engine in libfuzzer | afl) ;; *) echo "check_build: --engine: libfuzzer or afl, not '$engine'" >&2; exit 2 ;; esac
case $sanitizer in address | undefined) ;; *) echo "check_build: --sanitizer: address or undefined, not '$sanitizer'" >&2; exit 2 ;; esac
if [[ $engine == afl && $sanitizer != address ]]; then
	echo "check_build: OSS-Fuzz builds AFL++ with --sanitizer address only" >&2
	exit 2
fi
# The pair must be one project.yaml asks OSS-Fuzz for.
for want in "$engine" "$sanitizer"; do
	if ! grep -qE "^ +- +$want *\$" "$repo/oss-fuzz/project.yaml"; then
		echo "check_build: FAIL: oss-fuzz/project.yaml does not list '$want'"
		exit 1
	fi
done

afl_driver=""
if [[ $engine == afl ]]; then
	for d in /usr/lib/afl /usr/local/lib/afl /usr/lib/x86_64-linux-gnu/afl; do
		[[ -f $d/libAFLDriver.a ]] && { afl_driver=$d/libAFLDriver.a; break; }
	done
	if ! command -v afl-clang-fast >/dev/null || ! command -v afl-fuzz >/dev/null || [[ -z $afl_driver ]]; then
		echo "check_build: skipped: AFL++ (afl-clang-fast, afl-fuzz, libAFLDriver.a) is not installed; tools/deps.sh afl installs Debian's afl++"
		exit 77
	fi
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src" "$tmp/out" "$tmp/work" "$tmp/cfl-src"
# $SRC as `docker build` makes it: OSS-Fuzz builds oss-fuzz/Dockerfile with
# the project's directory (google/oss-fuzz projects/mmfuzz/, what oss-fuzz/
# holds) as the context, so the sources come from a `git clone` of
# project.yaml's main_repo (stood in for by this working tree - no network);
# ClusterFuzzLite builds .clusterfuzzlite/Dockerfile with the repository as
# the context (infra/common_utils.py build_image_impl, infra/cifuzz/
# continuous_integration.py build_external_project_docker_image).  Both must
# give the same $SRC/build.sh and WORKDIR; build.sh then runs there as
# compile runs it.
stage_dockerfile() {   # stage_dockerfile DOCKERFILE CONTEXT SRC: prints the WORKDIR
	python3 - "$repo" "$1" "$2" "$3" <<'PY'
import os, re, shlex, shutil, sys
repo, dockerfile, context, src = sys.argv[1:]
rel = os.path.relpath(dockerfile, repo)
def fail(msg):
    sys.exit("check_build: FAIL: %s: %s" % (rel, msg))
m = re.search(r'^main_repo: *"?([^"\s]+)"?', open(os.path.join(repo, "oss-fuzz/project.yaml")).read(), re.M)
main_repo = m.group(1) if m else None
norm = lambda u: re.sub(r"(\.git)?/*$", "", u)
text = re.sub(r"\\\n", " ", open(dockerfile).read())
lines = [l.strip() for l in text.splitlines() if l.strip() and not l.strip().startswith("#")]
if not lines or not re.match(r"FROM +gcr\.io/oss-fuzz-base/base-builder(:\S+)? *$", lines[0]):
    fail("the first instruction is not FROM gcr.io/oss-fuzz-base/base-builder (C projects' builder)")
workdir = src            # base-builder's WORKDIR is $SRC
def path(p):
    p = re.sub(r"^(\$\{SRC\}|\$SRC|/src)(?=/|$)", lambda _: src, p)
    return os.path.normpath(p if os.path.isabs(p) else os.path.join(workdir, p))
def put_repo(dest):
    if os.path.lexists(dest):
        fail("%s exists already" % dest)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    os.symlink(repo, dest)
for line in lines[1:]:
    op, _, arg = line.partition(" ")
    op = op.upper()
    if op == "WORKDIR":
        workdir = path(arg.strip())
    elif op == "RUN":
        for cmd in re.split(r"&&|;", arg):
            w = shlex.split(cmd)
            if w[:2] != ["git", "clone"]:
                continue
            rest, i = [], 2
            while i < len(w):
                if w[i] in ("--depth", "-b", "--branch", "-o", "--origin"):
                    i += 2
                    continue
                if not w[i].startswith("-"):
                    rest.append(w[i])
                i += 1
            if not rest or not main_repo or norm(rest[0]) != norm(main_repo):
                fail("clones %s, not oss-fuzz/project.yaml's main_repo %s" % (rest[:1], main_repo))
            put_repo(path(rest[1] if len(rest) > 1 else re.sub(r"\.git$", "", rest[0].rstrip("/").rsplit("/", 1)[-1])))
    elif op in ("COPY", "ADD"):
        w = [x for x in shlex.split(arg) if not x.startswith("--")]
        if len(w) < 2:
            fail("%s needs a source and a destination" % line)
        dest = path(w[-1])
        for s in w[:-1]:
            full = os.path.normpath(os.path.join(context, s))
            if not os.path.exists(full) or os.path.relpath(full, context).startswith(".."):
                fail("%s: %s is not in the build context %s/" % (line, s, os.path.relpath(context, repo)))
            d = os.path.join(dest, os.path.basename(full)) if (w[-1].endswith("/") or len(w) > 2 or os.path.isdir(dest)) and not os.path.isdir(full) else dest
            if os.path.isdir(full):
                if os.path.realpath(full) == os.path.realpath(repo):
                    put_repo(d)
                else:
                    shutil.copytree(full, d, dirs_exist_ok=True)
            else:
                os.makedirs(os.path.dirname(d), exist_ok=True)
                shutil.copy(full, d)
if not os.path.isfile(os.path.join(src, "build.sh")):
    fail("puts no build.sh in $SRC")
if not os.path.isdir(workdir):
    fail("WORKDIR %s does not exist in the image" % workdir)
print(workdir)
PY
}
workdir="$(stage_dockerfile "$repo/oss-fuzz/Dockerfile" "$repo/oss-fuzz" "$tmp/src")"
cfl_workdir="$(stage_dockerfile "$repo/.clusterfuzzlite/Dockerfile" "$repo" "$tmp/cfl-src")"
if [[ ${workdir#"$tmp/src"} != "${cfl_workdir#"$tmp/cfl-src"}" ]] || ! cmp -s "$tmp/src/build.sh" "$tmp/cfl-src/build.sh"; then
	echo "check_build: FAIL: .clusterfuzzlite/Dockerfile does not give the OSS-Fuzz build's \$SRC/build.sh and WORKDIR (${workdir#"$tmp/src"})"
	exit 1
fi

export SRC="$tmp/src" OUT="$tmp/out" WORK="$tmp/work" SANITIZER="$sanitizer" FUZZING_ENGINE="$engine"
# base-clang's CFLAGS, then compile's "$CFLAGS $SANITIZER_FLAGS $COVERAGE_FLAGS".
cflags="-O1 -fno-omit-frame-pointer -gline-tables-only -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"
ubsan_checks="array-bounds,bool,builtin,enum,float-divide-by-zero,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unreachable,vla-bound,vptr"
case $sanitizer in
address) sanitizer_flags="-fsanitize=address -fsanitize-address-use-after-scope" ;;
undefined) sanitizer_flags="-fsanitize=$ubsan_checks,unsigned-integer-overflow -fno-sanitize-recover=$ubsan_checks" ;;
esac
if [[ $engine == libfuzzer ]]; then
	real_cc="${CC_FOR_OSS_FUZZ:-clang}" real_cxx="${CXX_FOR_OSS_FUZZ:-clang++}"
	export CFLAGS="$cflags $sanitizer_flags -fsanitize=fuzzer-no-link"
	export LIB_FUZZING_ENGINE="-fsanitize=fuzzer"
else
	real_cc=afl-clang-fast real_cxx=afl-clang-fast++
	export CFLAGS="$cflags $sanitizer_flags"
	export LIB_FUZZING_ENGINE="$afl_driver"
	export AFL_QUIET=1 AFL_LLVM_CMPLOG=1 AFL_LLVM_DICT2FILE="$OUT/afl++.dict"
	export ASAN_OPTIONS="detect_leaks=0:symbolize=0:detect_odr_violation=0:abort_on_error=1"
fi
# base-clang: CXXFLAGS="$CFLAGS -stdlib=libc++"; this machine has no libc++
# to link with (no libc++-dev), so here $CXXFLAGS is $CFLAGS.
export CXX="$real_cxx" CXXFLAGS="$CFLAGS"
# "You must use $CXX as a linker, even if your project is written in pure C"
# (OSS-Fuzz new_project_guide; ClusterFuzzLite build_integration): this $CC
# compiles (-c, -E, -S, -M) and refuses to link.
mkdir -p "$tmp/bin"
{
	echo '#!/bin/bash'
	echo "for a; do case \$a in -c | -E | -S | -M | -MM) exec $real_cc \"\$@\" ;; esac; done"
	echo 'o=; p=; for a; do [[ $p == -o ]] && o=$a; p=$a; done'
	echo 'echo "check_build: FAIL: \$CC used as the linker (-o $o): OSS-Fuzz and ClusterFuzzLite link with \$CXX, even for C" >&2'
	echo 'exit 1'
} >"$tmp/bin/cc"
chmod +x "$tmp/bin/cc"
export CC="$tmp/bin/cc"

# ClusterFuzzLite (.clusterfuzzlite/, .github/workflows/cflite_pr.yml) must
# run this same build with the sanitizers OSS-Fuzz has: checked first, it
# needs no build.
python3 - "$repo" <<'PY'
import os, re, sys
repo = sys.argv[1]
def read(rel):
    try:
        with open(os.path.join(repo, rel)) as f:
            return f.read()
    except OSError as e:
        sys.exit("check_build: FAIL: %s: %s" % (rel, e.strerror))
def sanitizers(text):
    # The `sanitizers:` list of a project.yaml, or the workflow's matrix.
    m = re.search(r"^( *)sanitizers?:\n((?:\1 +- .*\n)+)", text, re.M)
    return {l.strip()[2:].strip() for l in m.group(2).splitlines()} if m else set()
oss = read("oss-fuzz/project.yaml")
cfl = read(".clusterfuzzlite/project.yaml")
dock = read(".clusterfuzzlite/Dockerfile")
flow = read(".github/workflows/cflite_pr.yml")
lang = re.search(r"^language: *(\S+)", oss, re.M).group(1)
bad = []
if not re.search(r"^language: *%s *$" % re.escape(lang), cfl, re.M):
    bad.append(".clusterfuzzlite/project.yaml: language is not %s (oss-fuzz/project.yaml's)" % lang)
if not re.search(r"^COPY +oss-fuzz/build\.sh +\$SRC/build\.sh *$", dock, re.M):
    bad.append(".clusterfuzzlite/Dockerfile: does not install oss-fuzz/build.sh as $SRC/build.sh")
for action in ("build_fuzzers", "run_fuzzers"):
    if "google/clusterfuzzlite/actions/%s@" % action not in flow:
        bad.append(".github/workflows/cflite_pr.yml: no %s step" % action)
if not re.search(r"^ +language: *%s *$" % re.escape(lang), flow, re.M):
    bad.append(".github/workflows/cflite_pr.yml: build_fuzzers' language is not %s" % lang)
want, have = sanitizers(oss), sanitizers(flow)
if not want or have != want:
    bad.append(".github/workflows/cflite_pr.yml: sanitizers %s, oss-fuzz/project.yaml has %s"
               % (sorted(have), sorted(want)))
for b in bad:
    print("check_build: FAIL: " + b)
if bad:
    sys.exit(1)
print("check_build: ClusterFuzzLite runs the OSS-Fuzz build (language %s, sanitizers %s)"
      % (lang, ", ".join(sorted(want))))
PY

echo "check_build: running oss-fuzz/build.sh: engine $engine, sanitizer $sanitizer, CC=$real_cc (compiling only), CXX=$CXX"
echo "check_build: CFLAGS=$CFLAGS"
if ! (cd "$workdir" && bash -eu "$SRC/build.sh") >"$tmp/build.log" 2>&1; then
	echo "check_build: FAIL: \$SRC/build.sh (oss-fuzz/Dockerfile's) failed in WORKDIR ${workdir#"$tmp/src"}:"
	tail -40 "$tmp/build.log"
	exit 1
fi
unset AFL_LLVM_CMPLOG AFL_LLVM_DICT2FILE
# What ClusterFuzz runs the fuzzers with (leaks found, unsigned overflow a
# coverage signal only - the allocator's tids and hashes wrap on purpose).
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:symbolize=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:silence_unsigned_overflow=1"

fail=0
for t in $(grep -v '^#' "$repo/targets/TARGETS" | sed '/^[[:space:]]*$/d'); do
	f="fuzz_$t"
	for need in "$f" "${f}_seed_corpus.zip" "$f.dict" "$f.options"; do
		if [ ! -s "$OUT/$need" ]; then
			echo "check_build: FAIL: \$OUT/$need missing or empty"
			fail=1
		fi
	done
	[ -x "$OUT/$f" ] || continue
	mkdir -p "$tmp/seeds/$t"
	python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
		"$OUT/${f}_seed_corpus.zip" "$tmp/seeds/$t"
	n=$(find "$tmp/seeds/$t" -type f | wc -l)
	if [ "$n" -eq 0 ]; then
		echo "check_build: FAIL: $f has an empty seed corpus"
		fail=1
		continue
	fi
	# Exactly the seeds: the regular files directly in corpus/T/ (not src/'s op text, none left out).
	want=$(find "$repo/corpus/$t" -maxdepth 1 -type f -printf '%f\n' | LC_ALL=C sort)
	have=$(python3 -c 'import sys, zipfile; print("\n".join(sorted(zipfile.ZipFile(sys.argv[1]).namelist())))' \
		"$OUT/${f}_seed_corpus.zip")
	if [[ $have != "$want" ]]; then
		echo "check_build: FAIL: ${f}_seed_corpus.zip does not hold exactly the files of corpus/$t/ (< missing, > extra):"
		diff <(echo "$want") <(echo "$have") | grep '^[<>]' | head -20 || true
		fail=1
	fi
	# libFuzzer and AFL++'s driver both run each file given on the command line once.
	args=()
	[[ $engine == libfuzzer ]] && args=(-dict="$OUT/$f.dict")
	if ! (cd "$tmp" && "$OUT/$f" "${args[@]}" $(find "$tmp/seeds/$t" -type f | sort) >"$tmp/$t.log" 2>&1); then
		echo "check_build: FAIL: $f on its seed corpus:"
		tail -20 "$tmp/$t.log"
		fail=1
		continue
	fi
	ran=$(grep -c '^Reading [0-9]* bytes from' "$tmp/$t.log" || true)
	if [[ $engine == afl && $ran -ne $n ]]; then
		echo "check_build: FAIL: $f (AFL++ driver) read $ran of its $n seeds:"
		tail -20 "$tmp/$t.log"
		fail=1
		continue
	fi
	# base-runner's bad_build_check: the sanitizer really is in the binary
	# (check_mixed_sanitizers' call counts and thresholds) and, for libFuzzer,
	# the fuzzer starts and runs with coverage (check_startup_crash,
	# check_engine: -seed=1337 -runs=4, at least 100 edges).
	objdump -dC "$OUT/$f" >"$tmp/$t.dis"
	asan=$(grep -cE 'callq?\s+[0-9a-f]+\s+<__asan' "$tmp/$t.dis" || true)
	ubsan=$(grep -cE 'callq?\s+[0-9a-f]+\s+<__ubsan' "$tmp/$t.dis" || true)
	rm -f "$tmp/$t.dis"
	bad=""
	if [[ $sanitizer == address ]]; then
		((asan >= 1000)) || bad="does not seem to be compiled with ASan ($asan __asan calls, < 1000)"
		((ubsan <= 200)) || bad="ASan build seems to be compiled with UBSan ($ubsan __ubsan calls, > 200)"
	elif [[ $engine == libfuzzer ]]; then
		((asan == 0)) || bad="UBSan build seems to be compiled with ASan ($asan __asan calls)"
		((ubsan >= 168)) || bad="does not seem to be compiled with UBSan ($ubsan __ubsan calls, < 168)"
	fi
	if [[ $engine == libfuzzer && -z $bad ]]; then
		mkdir -p "$tmp/empty"
		(cd "$tmp/empty" && "$OUT/$f" -seed=1337 -runs=4 </dev/null >"$tmp/$t.start" 2>&1) || true
		edges=$(grep -Po 'INFO: Loaded [[:digit:]]+ module.*\(.*(counters|guards)\):[[:space:]]+\K[[:digit:]]+' "$tmp/$t.start" || true)
		if ! grep -q 'Done 4 runs' "$tmp/$t.start"; then
			bad="startup crash or exit (-seed=1337 -runs=4): $(tail -3 "$tmp/$t.start" | tr '\n' ' ')"
		elif ((${edges:-0} < 100)); then
			bad="only partial coverage instrumentation (${edges:-0} edges, < 100)"
		fi
	fi
	if [[ -n $bad ]]; then
		echo "check_build: FAIL: BAD BUILD: $f $bad"
		fail=1
		continue
	fi
	echo "check_build: $f ok ($n seeds, dict, options, $asan __asan / $ubsan __ubsan calls${edges:+, $edges edges})"
done

# AFL++: the build must also fuzz - afl-fuzz finds the persistent-mode and
# deferred fork-server signatures, the map and the CMPLOG instrumentation.
# Its binary check finds the signatures, so AFL_SKIP_BIN_CHECK stays unset:
# afl-fuzz skips that check when the variable is set at all, even to 0, and
# then ran a fresh process per input from main() (LLVMFuzzerInitialize and
# every instance again: about 1 s per input, 86 in 5 s) - a persistent-mode
# build that fuzzed as a plain fork server passed, and under load the 120 s
# bound ran out in AFL++'s calibration.
if [[ $engine == afl && -x $OUT/fuzz_buddy ]]; then
	timeout_ms=$(sed -n 's/^timeout *= *\([0-9][0-9]*\) *$/\1/p' "$repo/corpus/buddy.options" | head -n 1)
	out="$tmp/afl-out"
	afl_rc=0
	(cd "$tmp" && AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
		AFL_NO_AFFINITY=1 ASAN_OPTIONS="abort_on_error=1:symbolize=0:detect_leaks=0" \
		timeout 120 afl-fuzz -V 5 -t "$((${timeout_ms:-25} * 1000))" -c 0 -i "$tmp/seeds/buddy" -o "$out" \
		-- "$OUT/fuzz_buddy" >"$tmp/afl.log" 2>&1) || afl_rc=$?
	# afl-fuzz (Debian's 4.x, -c 0) leaves one persistent-mode child behind,
	# stopped (state T) in its SIGSTOP between inputs, reparented to init:
	# one such process per run, forever.  Every process still running this
	# build's fuzz_buddy (its path is under our own mktemp directory) is ours.
	for proc in /proc/[0-9]*; do
		[[ $(readlink "$proc/exe" 2>/dev/null) == "$OUT/fuzz_buddy" ]] && kill -KILL "${proc#/proc/}" 2>/dev/null
	done
	if ((afl_rc != 0)); then
		echo "check_build: FAIL: afl-fuzz on fuzz_buddy:"
		tail -30 "$tmp/afl.log"
		fail=1
	else
		stats="$out/default/fuzzer_stats"
		execs=$(sed -n 's/^execs_done *: *//p' "$stats" 2>/dev/null)
		crashes=$(sed -n 's/^saved_crashes *: *//p' "$stats" 2>/dev/null)
		hangs=$(sed -n 's/^saved_hangs *: *//p' "$stats" 2>/dev/null)
		if [[ -z $execs || $execs -eq 0 || ${crashes:-0} -ne 0 || ${hangs:-0} -ne 0 ]]; then
			echo "check_build: FAIL: afl-fuzz on fuzz_buddy: execs_done ${execs:-none}, crashes ${crashes:-?}, hangs ${hangs:-?}"
			tail -30 "$tmp/afl.log"
			fail=1
		elif ! grep -aq 'Persistent mode binary detected' "$tmp/afl.log" ||
			! grep -aq 'Deferred forkserver binary detected' "$tmp/afl.log"; then
			echo "check_build: FAIL: afl-fuzz on fuzz_buddy did not detect persistent mode and the deferred fork server"
			tail -30 "$tmp/afl.log"
			fail=1
		else
			echo "check_build: afl-fuzz ran fuzz_buddy for 5 s in persistent mode with the deferred fork server: $execs executions, 0 crashes, 0 hangs (CMPLOG: -c 0)"
		fi
	fi
fi
[ "$fail" -eq 0 ] && echo "check_build: all fuzzers built and ran their seeds ($engine, $sanitizer)" || exit 1

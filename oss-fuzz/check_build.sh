#!/bin/bash
# check_build.sh - the moral equivalent of OSS-Fuzz's `helper.py check_build`
# without Docker: run oss-fuzz/build.sh with the environment the builder
# gives it (clang, ASan+UBSan, the libFuzzer engine, a temporary $OUT), then
# check every fuzzer, seed corpus zip, dict and options file is there and
# each fuzzer runs its whole seed corpus cleanly.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src" "$tmp/out" "$tmp/work"
ln -s "$repo" "$tmp/src/mmfuzz"

export SRC="$tmp/src" OUT="$tmp/out" WORK="$tmp/work"
export CC="${CC_FOR_OSS_FUZZ:-clang}"
export CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address,undefined -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
export LIB_FUZZING_ENGINE="-fsanitize=fuzzer"

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

echo "check_build: running oss-fuzz/build.sh with CC=$CC"
bash "$repo/oss-fuzz/build.sh"

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
	# libFuzzer runs each file given on the command line once.
	if ! (cd "$tmp" && "$OUT/$f" -dict="$OUT/$f.dict" $(find "$tmp/seeds/$t" -type f | sort) >"$tmp/$t.log" 2>&1); then
		echo "check_build: FAIL: $f on its seed corpus:"
		tail -20 "$tmp/$t.log"
		fail=1
		continue
	fi
	echo "check_build: $f ok ($n seeds, dict, options)"
done
[ "$fail" -eq 0 ] && echo "check_build: all fuzzers built and ran their seeds" || exit 1

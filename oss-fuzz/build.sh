#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build for mmfuzz.  Uses only what the builder
# gives: $CC $CFLAGS to compile, $CXX $CXXFLAGS $LIB_FUZZING_ENGINE to link
# ("You must use $CXX as a linker, even if your project is written in pure
# C": OSS-Fuzz's new_project_guide, ClusterFuzzLite's build_integration),
# $OUT $SRC (and $WORK if set).
# Every target listed in targets/TARGETS becomes $OUT/fuzz_<target> with
# fuzz_<target>_seed_corpus.zip, fuzz_<target>.dict and fuzz_<target>.options.
cd "$SRC/mmfuzz"
build="${WORK:-/tmp}/mmfuzz-oss-fuzz"
rm -rf "$build"
mkdir -p "$build"

flags="-std=gnu11 -D_GNU_SOURCE -DMM_DEBUG=2 -DMM_TEST_HOOKS=1 -mcx16"
# Edge coverage without compare tracing, as cmake/fuzz.cmake builds it: the
# inputs are decoded op programs, and the trace callbacks cost half the CPU.
case "$CFLAGS" in
*-fsanitize=fuzzer-no-link*) flags="$flags -fno-sanitize-coverage=trace-cmp" ;;
esac
incs="-Iallocator/include -Iallocator -Itargets -Itargets/common"

# With ASan, the oracle (allocator/check/, slab/invariants.c, pcp_check)
# is left out of ASan as cmake/fuzz.cmake does: its walks validate every
# pointer they follow, and their shadow checks were a third of its cost.
oracle_flags=""
alloc_flags=""
case "$CFLAGS" in
*-fsanitize=address*) oracle_flags="-fno-sanitize=address"; alloc_flags="-DMM_ORACLE_NO_ASAN=1" ;;
esac

objs=()
for f in $(find allocator -name '*.c' | sort) targets/common/*.c; do
	extra=""
	case "$f" in
	targets/common/replay_main.c | targets/common/afl_main.c) continue ;;   # the engine brings main()
	allocator/check/*.c | allocator/slab/invariants.c) extra="$alloc_flags $oracle_flags" ;;
	allocator/*) extra="$alloc_flags" ;;
	esac
	o="$build/$(echo "$f" | tr / _).o"
	$CC $CFLAGS $flags $extra $incs -c "$f" -o "$o"
	objs+=("$o")
done

zip_dir() {   # zip_dir OUT.zip DIR: the inputs of DIR (not its src/ op text)
	if command -v zip >/dev/null; then
		(cd "$2" && find . -maxdepth 1 -type f -print0 | xargs -0 -r zip -q -j "$1")
	else
		python3 - "$1" "$2" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for n in sorted(os.listdir(sys.argv[2])):
        p = os.path.join(sys.argv[2], n)
        if os.path.isfile(p):
            z.write(p, n)
PY
	fi
}

for t in $(grep -v '^#' targets/TARGETS | sed '/^[[:space:]]*$/d'); do
	$CC $CFLAGS $flags $incs -c "targets/$t.c" -o "$build/target_$t.o"
	$CXX $CXXFLAGS "$build/target_$t.o" "${objs[@]}" $LIB_FUZZING_ENGINE -lpthread -o "$OUT/fuzz_$t"
	rm -f "$OUT/fuzz_${t}_seed_corpus.zip"
	zip_dir "$OUT/fuzz_${t}_seed_corpus.zip" "corpus/$t"
	cp "corpus/$t.dict" "$OUT/fuzz_$t.dict"
	cp "corpus/$t.options" "$OUT/fuzz_$t.options"
done

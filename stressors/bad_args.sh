#!/bin/sh
# bad_args.sh STRESS SCHED_STRESS - the stressor drivers refuse a bad number
# (ctest stressors_bad_args): exit 2 and a message naming the option, never
# a run with 0 or a wrapped value in its place (cli.h).  Before cli.h,
# mmfuzz-sched-stress ran "--runs abc" as no run at all and said SUCCESS,
# took "--seed zz" as seed 0 and "--irq-permille 5000" as it came, and
# mmfuzz-stress ran "--time nan".
stress=$1 sched=$2
fails=0

# A build without MM_TEST_HOOKS (release, clang-release) has no preemption
# points to schedule at: its mmfuzz-sched-stress refuses every run with exit
# 2 and says so, and that refusal is what each of its cases must show.
sched_stub=
if "$sched" 2>&1 | grep -q 'needs MM_TEST_HOOKS'; then
	sched_stub=1
	echo "note: $sched is built without MM_TEST_HOOKS: its cases expect that refusal"
fi

# expect REGEX CMD...: CMD exits 2 and prints REGEX.
expect() {
	re=$1
	shift
	if [ -n "$sched_stub" ]; then
		for a in "$@"; do
			[ "$a" = "$sched" ] && re='^mmfuzz-sched-stress: needs MM_TEST_HOOKS \(the preemption points\)$'
		done
	fi
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -ne 2 ] || ! printf '%s\n' "$out" | grep -Eq -- "$re"; then
		echo "FAIL: $*: exit $rc, want 2 and /$re/; output:"
		printf '%s\n' "$out" | tail -n 5
		fails=$((fails + 1))
	else
		echo "ok: $* -> exit 2, /$re/"
	fi
}

expect "--runs wants a whole number in 1\.\.[0-9]+, not 'abc'" "$sched" pages --deterministic --runs abc
expect "--runs wants a whole number in 1\.\.[0-9]+, not '0'" "$sched" pages --deterministic --runs 0
expect "--seed wants a whole number in 0\.\.[0-9]+, not 'zz'" "$sched" pages --deterministic --seed zz
expect "--seed wants a whole number .*, not '-1'" "$sched" slub --deterministic --seed -1
expect "--seed wants a whole number .*, not '99999999999999999999'" "$sched" slub --seed 99999999999999999999
expect "--irq-permille wants a whole number in 0\.\.1000, not '5000'" "$sched" pages --irq-permille 5000
expect "--migrate-permille wants a whole number in 0\.\.1000, not '1e3'" "$sched" pages --migrate-permille 1e3
expect "--bounce-permille wants a whole number in 0\.\.1000, not ''" "$sched" pages --bounce-permille ''
expect "--tasks wants a whole number in 1\.\.16, not '0'" "$sched" pages --tasks 0
expect "--cpus wants a whole number in 1\.\.64, not '4x'" "$sched" pages --cpus 4x
expect "--steps wants a whole number in 1\.\.[0-9]+, not '-3'" "$sched" pages --steps -3
expect "--run wants a whole number" "$sched" pages --run last
expect "--wilson K wants a whole number in 0\.\.10, not '11'" "$sched" --wilson 11 10
expect "--seed needs a value" "$sched" pages --seed
expect "bad value for --time" "$stress" pages --time nan
expect "bad value for --time" "$stress" pages --time inf
expect "bad value for --seed" "$stress" pages --seed zz
expect "bad value for --threads" "$stress" pages --threads ''
expect "bad value for --ops" "$stress" pages --ops -5
expect "--time and --ops are alternatives: give one" "$stress" pages --time 1 --ops 10
expect "unknown option '--bogus'" "$stress" pages --bogus
expect "unknown option '--bogus'" "$stress" pages --bogus 3

# File arguments (cli.h cli_unwritable, cli_unreadable): refused before the
# run.  A named pipe no one writes stands in for a device: a driver that
# opened it instead of refusing would wait, cut off by timeout (exit 124).
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkfifo "$work/fifo"
expect "--json $work/no/such/dir/x.json: cannot write: its directory does not exist" \
	timeout -k 5 60 "$stress" pages --ops 10 --json "$work/no/such/dir/x.json"
expect "--json $work: cannot write: is a directory" timeout -k 5 60 "$stress" pages --ops 10 --json "$work"
expect "--json goes with --grade" timeout -k 5 60 "$sched" pages --deterministic --runs 1 --json "$work/g.json"
expect "--json $work/none/g.json: cannot write: its directory does not exist" \
	timeout -k 5 60 "$sched" pages --deterministic --grade --runs 1 --json "$work/none/g.json"
expect "--artifact $work: cannot write: is a directory" \
	timeout -k 5 60 "$sched" pages --deterministic --runs 1 --artifact "$work"
expect "--replay $work/fifo: cannot read: not a regular file" \
	timeout -k 5 60 "$sched" pages --deterministic --replay "$work/fifo"
expect "--replay $work/missing.sched: cannot read: No such file" \
	timeout -k 5 60 "$sched" pages --deterministic --replay "$work/missing.sched"
for f in "$work/x.json" "$work/g.json"; do
	if [ -e "$f" ]; then
		echo "FAIL: a refused run left $f"
		fails=$((fails + 1))
	fi
done

if [ "$fails" -ne 0 ]; then
	echo "$fails check(s) failed"
	exit 1
fi
echo "all checks passed"

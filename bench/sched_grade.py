#!/usr/bin/env python3
"""sched_grade.py - grading of the deterministic engine (issue 6, "Grading").

For each bug-zoo bug the deterministic engine is graded on (the five SLUB
concurrency bugs by default; --bugs all for every bug of the zoo), build the
injected variant (-DMM_INJECT=<id>) and run `mmfuzz-sched-stress MODE
--deterministic --grade --runs N --policy all` for each of the bug's modes:
per bug, mode and policy, detections / runs, the detection probability per
run with its 95% Wilson score interval, the runs to the first failure (and
the command that replays it) and runs/s.  Then the correct build: at least
--correct-runs runs per policy and mode, all of which must pass.

Builds: build/sched-grade-<id> and build/sched-grade-none (gcc, Release,
MM_DEBUG=0, MM_TEST_HOOKS=ON: the preemption points are the switch points);
only the target mmfuzz-sched-stress is built, incrementally.

Usage: bench/sched_grade.py [--runs N] [--other-runs N] [--correct-runs M] [--correct-modes LIST]
                            [--bugs LIST|all] [--seed X] [--json FILE] [--quick] [--no-build]
       ./mmfuzz bench sched_grade [--quick] [--json FILE]
Writes bench/results/sched_grade.json unless --json says otherwise (--quick
writes nothing unless --json is given).  Exit status: 0 when the correct
build passed every run, 1 when it failed one (or a build failed), 2 on bad
arguments.
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from outputs import cannot_write  # noqa: E402
import fuzz_targets  # noqa: E402

# Which mode of the scheduler's stressor exercises each bug's code.
CONCURRENCY = {
    "slub-aba-single-cmpxchg": ["slub", "bulk"],
    "slub-tid-cpu-mismatch": ["slub", "bulk"],
    "slub-bulk-no-tid-bump": ["bulk", "slub"],
    "slub-acquire-plain-store": ["slub", "bulk"],
    "slub-free-cond-flipped": ["slub", "bulk"],
}
OTHERS = {
    "slub-double-free-unchecked": ["slub"],
    "buddy-merge-across-zones": ["pages"],
    "buddy-mt-before-validate": ["pages"],
    "buddy-merge-max-order": ["pages"],
    "pcp-prefetch-unvalidated": ["pcp"],
    "pcp-bulk-count-unclamped": ["pcp"],
    "pcp-stat-order": ["pcp"],
    "wmark-unsigned-compare": ["mixed"],
    "wmark-unusable-lists": ["mixed"],
    "bulk-array-overrun": ["bulk"],
    "bulk-return-count": ["bulk"],
}


def log(msg):
    print("sched_grade: " + msg, file=sys.stderr, flush=True)


def bdir(bug):
    return os.path.join(ROOT, "build", "sched-grade-" + (bug or "none"))


def configure_hooks(d, bug):
    """A Release build with the preemption hooks and MM_INJECT=BUG in D, configured unless it is
    (a cache and build.ninja: a failed configure leaves the cache alone, and every later build then
    failed in ninja).  Shared with stress_replay.py.  cmake's output when it fails, else None."""
    if fuzz_targets.configured(d):
        return None
    r = subprocess.run(["cmake", "-S", ROOT, "-B", d, "-G", "Ninja", "-DCMAKE_C_COMPILER=gcc",
                        "-DCMAKE_BUILD_TYPE=Release", "-DMM_DEBUG=0", "-DMM_TEST_HOOKS=ON",
                        "-DMM_INJECT=" + (bug or "")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.stdout[-3000:] if r.returncode else None


def build(bug):
    d = bdir(bug)
    t0 = time.time()
    err = configure_hooks(d, bug)
    if err is not None:
        log("configure %s failed:\n%s" % (d, err))
        return None
    r = subprocess.run(["cmake", "--build", d, "--target", "mmfuzz-sched-stress", "-j", "2"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        log("build %s failed:\n%s" % (d, r.stdout[-3000:]))
        return None
    return time.time() - t0


def grade(bug, mode, runs, seed, extra):
    exe = os.path.join(bdir(bug), "stressors", "sched", "mmfuzz-sched-stress")
    jpath = os.path.join(bdir(bug), "grade-%s.json" % mode)
    if os.path.exists(jpath):
        os.unlink(jpath)
    argv = [exe, mode, "--deterministic", "--grade", "--runs", str(runs), "--policy", "all",
            "--seed", str(seed), "--json", jpath] + extra
    t0 = time.time()
    limit = 120 + runs * 3 * 0.02           # 50 runs/s would be 40 times slower than usual
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        log("%s %s: no result within %.0f s" % (bug or "correct", mode, limit))
        return {"error": "timeout after %.0f s" % limit, "seconds": round(time.time() - t0, 1)}
    secs = time.time() - t0
    sys.stdout.write(r.stdout)
    sys.stdout.flush()
    if r.returncode not in (0, 1) or not os.path.exists(jpath):
        tail = (r.stderr or "")[-1500:]
        log("%s %s: exit status %d%s" % (bug or "correct", mode, r.returncode, "\n" + tail if tail else ""))
        return {"error": "exit status %d" % r.returncode, "stderr_tail": tail, "seconds": round(secs, 1)}
    with open(jpath) as f:
        res = json.load(f)
    res["wall_seconds"] = round(secs, 1)
    return res


def row(bug, mode, pol):
    first = pol.get("runs_to_first_failure")
    lo, hi = pol["ci95"]
    rps = pol.get("runs_per_s", 0.0)
    return "%-27s %-6s %-7s %15s %9.5f  [%.5f, %.5f] %7s %7.0f" % (
        bug, mode, pol["policy"], "%d/%d" % (pol["failures"], pol["runs"]), pol["p"], lo, hi,
        "-" if first is None else str(first), rps)


def detection_summary(results):
    """Bugs detected under some policy and mode; bugs graded without a result."""
    detected, errors, seen = [], [], []
    for r in results:
        b = r["bug"]
        if b not in seen:
            seen.append(b)
        if "policies" not in r:
            if b not in errors:
                errors.append(b)
        elif any(p["failures"] for p in r["policies"]) and b not in detected:
            detected.append(b)
    return {"detected": detected, "errors": errors,
            "undetected": [b for b in seen if b not in detected and b not in errors]}


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    ap = argparse.ArgumentParser(description="grade the deterministic engine against the bug zoo")
    ap.add_argument("--runs", type=int, default=5000, help="runs per bug, mode and policy (default 5000)")
    ap.add_argument("--correct-runs", type=int, default=100000,
                    help="runs per mode and policy of the correct build (default 100000)")
    ap.add_argument("--other-runs", type=int, default=None,
                    help="runs per policy for the bugs that are not concurrency bugs (default: --runs)")
    ap.add_argument("--correct-modes", default=None,
                    help="modes that get --correct-runs on the correct build (default: every graded mode); "
                         "the other graded modes get --runs")
    ap.add_argument("--bugs", default="concurrency",
                    help="'concurrency' (default: the five SLUB concurrency bugs), 'all', or a comma list")
    ap.add_argument("--seed", default="1", help="master seed (default 1)")
    ap.add_argument("--json", help="write the results here (default bench/results/sched_grade.json)")
    ap.add_argument("--quick", action="store_true", help="smoke run: 200 runs, 2000 correct runs, no file")
    ap.add_argument("--no-build", action="store_true", help="use the builds that exist")
    a = ap.parse_args()
    if a.quick:
        a.runs, a.correct_runs = 200, 2000
    table = dict(CONCURRENCY)
    table.update(OTHERS)
    if a.bugs == "concurrency":
        bugs = list(CONCURRENCY)
    elif a.bugs == "all":
        bugs = list(table)
    else:
        bugs = [b for b in a.bugs.split(",") if b]
        for b in bugs:
            if b not in table:
                ap.error("unknown bug '%s' (known: %s)" % (b, " ".join(table)))
    for name, v in (("--runs", a.runs), ("--correct-runs", a.correct_runs), ("--other-runs", a.other_runs)):
        if v is not None and v < 1:
            ap.error("%s must be >= 1, not %d" % (name, v))
    try:
        seed = int(a.seed, 0)
        if not 0 <= seed < 1 << 64:
            raise ValueError
    except ValueError:
        ap.error("--seed wants a whole number in 0..2^64-1 (decimal or 0x hex), not '%s'" % a.seed)
    out = a.json or (None if a.quick else os.path.join(ROOT, "bench", "results", "sched_grade.json"))
    if out and cannot_write("--json", out):
        ap.error(cannot_write("--json", out))

    t_start = time.time()
    results, builds, lines = [], {}, []
    failed_build = False
    for bug in bugs:
        if not a.no_build:
            log("building %s" % bdir(bug))
            s = build(bug)
            if s is None:
                failed_build = True
                results.append({"bug": bug, "error": "build failed"})
                continue
            builds[bug] = round(s, 1)
        for mode in table[bug]:
            n = a.runs if bug in CONCURRENCY or a.other_runs is None else a.other_runs
            log("grading %s in mode %s: %d runs per policy" % (bug, mode, n))
            g = grade(bug, mode, n, seed, [])
            results.append({"bug": bug, "mode": mode, **g})
            for pol in g.get("policies", []):
                lines.append(row(bug, mode, pol))

    modes = sorted({m for b in bugs for m in table[b]})
    correct = []
    if not a.no_build:
        log("building %s" % bdir(None))
        s = build(None)
        if s is None:
            failed_build = True
        builds["none"] = round(s or 0, 1)
    correct_fail = 0
    correct_runs = 0
    correct_secs = 0.0
    full = modes if a.correct_modes is None else [m for m in a.correct_modes.split(",") if m]
    for mode in sorted(set(modes) | set(full), key=lambda m: (m not in full, m)):
        n = a.correct_runs if mode in full else a.runs
        log("correct build, mode %s: %d runs per policy" % (mode, n))
        g = grade(None, mode, n, seed, [])
        correct.append({"mode": mode, **g})
        if "policies" not in g:
            correct_fail += 1
            continue
        for pol in g["policies"]:
            lines.append(row("correct (no injection)", mode, pol))
            correct_fail += pol["failures"]
            correct_runs += pol["runs"]
            correct_secs += pol["seconds"]

    print()
    print("%-27s %-6s %-7s %15s %9s  %-18s %7s %7s" % ("bug", "mode", "policy", "detections/runs", "p",
                                                      "95% CI (Wilson)", "first", "runs/s"))
    for line in lines:
        print(line)
    summary = detection_summary(results)
    print("detected (p > 0 under some policy and mode): %d of %d bugs: %s" % (
        len(summary["detected"]), len(bugs), " ".join(summary["detected"]) or "-"))
    if summary["errors"]:
        print("no result (the driver died or timed out): %s" % " ".join(summary["errors"]))
    rate = correct_runs / correct_secs if correct_secs else 0.0
    print("correct build: %d failures in %d runs (%.0f s of runs, %.0f runs/s)" % (
        correct_fail, correct_runs, correct_secs, rate))

    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True).stdout.strip()
    doc = {
        "bench": "sched_grade",
        "date": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "machine": {"cpu": cpu_name(), "nproc": os.cpu_count(), "kernel": platform.release()},
        "commit": commit,
        "build": "gcc -O2 (CMAKE_BUILD_TYPE=Release), MM_DEBUG=0, MM_TEST_HOOKS=ON, -DMM_INJECT=<bug>",
        "scenario": "mmfuzz-sched-stress MODE --deterministic --grade, the mode's defaults: 3 tasks, 24 ops per "
                    "task, interrupts at 40 permille of eligible points; pages, pcp: 2 vCPUs, migrations at 40 "
                    "permille; slub, bulk, kmalloc, mixed: 4 vCPUs, migrations at 200 permille; after a migration "
                    "a bounce back at 500 permille of the next 3 migration decisions; the tid contract "
                    "(stressors/sched/tidwatch.h) at every preemption point with interrupts enabled and between ops",
        "seed": seed,
        "runs_per_policy": a.runs,
        "other_runs_per_policy": a.other_runs if a.other_runs is not None else a.runs,
        "correct_runs_per_policy": a.correct_runs,
        "correct_full_modes": full,
        "build_seconds": builds,
        "summary": summary,
        "results": results,
        "correct": {"modes": correct, "runs": correct_runs, "failures": correct_fail,
                    "seconds": round(correct_secs, 1), "runs_per_s": round(rate, 1)},
        "wall_seconds": round(time.time() - t_start, 1),
    }
    if out:
        with open(out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        log("results written to %s" % out)
    return 1 if (correct_fail or failed_build) else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""stress_replay.py - how many free-running stressor failures replay deterministically
(issue 6: "every failure found by any stressor reproduces: 100% of failing seeds
fail again under --deterministic replay or are reported as found only by
free-running mode, with the reason").

For each bug-zoo bug (the five SLUB concurrency bugs by default; --bugs all
for the whole zoo) build the injected variant (build/stress-replay-<id>: gcc,
Release, MM_DEBUG=0, MM_TEST_HOOKS=ON; the targets mmfuzz-stress and
mmfuzz-sched-stress), run the free-running stressor in the bug's mode for
--seeds seeds (`mmfuzz-stress MODE --time T --seed S --quiet --json F`) and
read each failure's replay report (stressors/stress/replay.c): reproduced
deterministically (with the command), or found only by free-running mode
(with the reason).  Every failure must be one or the other: a failure
without a replay verdict fails this script.

Usage: bench/stress_replay.py [--bugs LIST|all] [--seeds N] [--time S] [--json FILE] [--quick]
Writes bench/results/stress_replay.json unless --json says otherwise (--quick: nothing).
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
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sched_grade import CONCURRENCY, OTHERS, configure_hooks, cpu_name  # noqa: E402

# The free-running stressor's mode for each bug (its first mode in sched_grade's table).
MODES = {b: m[0] for b, m in list(CONCURRENCY.items()) + list(OTHERS.items())}


def log(msg):
    print("stress_replay: " + msg, file=sys.stderr, flush=True)


def bdir(bug):
    return os.path.join(ROOT, "build", "stress-replay-" + bug)


def build(bug):
    d = bdir(bug)
    err = configure_hooks(d, bug)
    if err is not None:
        log("configure %s failed:\n%s" % (d, err))
        return False
    r = subprocess.run(["cmake", "--build", d, "--target", "mmfuzz-stress", "mmfuzz-sched-stress", "-j", "2"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        log("build %s failed:\n%s" % (d, r.stdout[-3000:]))
        return False
    return True


def one(bug, mode, seed, secs):
    exe = os.path.join(bdir(bug), "stressors", "stress", "mmfuzz-stress")
    jpath = os.path.join(bdir(bug), "replay-%s-%d.json" % (mode, seed))
    if os.path.exists(jpath):
        os.unlink(jpath)
    argv = [exe, mode, "--time", "%g" % secs, "--seed", str(seed), "--quiet", "--json", jpath]
    t0 = time.time()
    try:
        r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=secs + 200)
        out, rc = r.stdout, r.returncode
    except subprocess.TimeoutExpired as e:
        out, rc = (e.stdout or b"").decode("utf-8", "replace") if isinstance(e.stdout, bytes) else (e.stdout or ""), -9
    res = {"seed": seed, "rc": rc, "seconds": round(time.time() - t0, 1), "failed": rc != 0}
    rep = None
    if os.path.exists(jpath):
        with open(jpath) as f:
            try:
                j = json.load(f)
                rep = j.get("replay")
                res["failure"] = j.get("failure", "")
            except ValueError:
                pass
    # A crash (abort) writes no JSON: read the printed verdict.
    for line in out.splitlines():
        if line.startswith("reproduced deterministically: "):
            rep = rep or {"status": "reproduced", "command": line.split(": ", 1)[1]}
        elif line.startswith("found only by free-running mode: "):
            rep = rep or {"status": "free-running only", "reason": line.split(": ", 1)[1]}
        elif line.startswith("mmfuzz-stress: FAILURE: ") and not res.get("failure"):
            res["failure"] = line.split(": ", 2)[2]
    if res["failed"]:
        res["replay"] = rep or {"status": "none"}
    return res


def main():
    ap = argparse.ArgumentParser(description="replay of free-running stressor failures")
    ap.add_argument("--bugs", default="concurrency", help="'concurrency' (default), 'all', or a comma list")
    ap.add_argument("--seeds", type=int, default=5, help="seeds per bug (default 5)")
    ap.add_argument("--time", type=float, default=6.0, help="seconds per free-running run (default 6)")
    ap.add_argument("--json", help="default bench/results/stress_replay.json")
    ap.add_argument("--quick", action="store_true", help="one seed, 2 s, no file")
    a = ap.parse_args()
    if a.quick:
        a.seeds, a.time = 1, 2.0
    bugs = list(CONCURRENCY) if a.bugs == "concurrency" else list(MODES) if a.bugs == "all" else a.bugs.split(",")
    for b in bugs:
        if b not in MODES:
            ap.error("unknown bug '%s'" % b)
    out = a.json or (None if a.quick else os.path.join(ROOT, "bench", "results", "stress_replay.json"))
    t_start = time.time()
    rows, bad = [], 0
    for bug in bugs:
        mode = MODES[bug]
        log("building %s" % bdir(bug))
        if not build(bug):
            rows.append({"bug": bug, "mode": mode, "error": "build failed"})
            bad += 1
            continue
        runs = []
        for s in range(1, a.seeds + 1):
            r = one(bug, mode, s, a.time)
            runs.append(r)
            st = r.get("replay", {}).get("status", "-") if r["failed"] else "passed"
            log("%s %s seed %d: %s" % (bug, mode, s, st))
        fails = [r for r in runs if r["failed"]]
        rep = [r for r in fails if r["replay"]["status"] == "reproduced"]
        only = [r for r in fails if r["replay"]["status"] == "free-running only"]
        none = [r for r in fails if r["replay"]["status"] not in ("reproduced", "free-running only")]
        bad += len(none)
        rows.append({"bug": bug, "mode": mode, "seeds": a.seeds, "free_failures": len(fails),
                     "reproduced": len(rep), "free_running_only": len(only), "no_verdict": len(none),
                     "runs": runs})
    print("%-27s %-6s %13s %12s %17s %10s" % ("bug", "mode", "free fails", "reproduced", "free-running only",
                                             "no verdict"))
    for r in rows:
        if "error" in r:
            print("%-27s %-6s %s" % (r["bug"], r["mode"], r["error"]))
            continue
        print("%-27s %-6s %13s %12s %17d %10d" % (r["bug"], r["mode"], "%d/%d" % (r["free_failures"], r["seeds"]),
                                                 "%d/%d" % (r["reproduced"], r["free_failures"]),
                                                 r["free_running_only"], r["no_verdict"]))
        for run in r["runs"]:
            rp = run.get("replay")
            if rp and rp["status"] == "reproduced":
                print("    seed %d: %s" % (run["seed"], rp.get("command", "")))
            elif rp:
                print("    seed %d: %s: %s" % (run["seed"], rp["status"], rp.get("reason", "")[:300]))
    commit = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True).stdout.strip()
    doc = {"bench": "stress_replay",
           "date": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
           "machine": {"cpu": cpu_name(), "nproc": os.cpu_count(), "kernel": platform.release()},
           "commit": commit,
           "build": "gcc -O2 (Release), MM_DEBUG=0, MM_TEST_HOOKS=ON, -DMM_INJECT=<bug>",
           "free_run": "mmfuzz-stress MODE --time %g --seed S --quiet (defaults: 4 threads, 2 vCPUs, every "
                       "injection on)" % a.time,
           "results": rows, "wall_seconds": round(time.time() - t_start, 1)}
    if out:
        with open(out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        log("results written to %s" % out)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

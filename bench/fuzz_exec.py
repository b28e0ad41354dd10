#!/usr/bin/env python3
"""fuzz_exec.py - fuzz-target throughput and what the checker costs (issue 5, "Goals").

For each fuzz target (targets/TARGETS): libFuzzer (the `fuzz` preset: clang,
ASan+UBSan, MM_DEBUG=2) runs for --seconds on one core from its seed corpus
(corpus/T, what oss-fuzz/build.sh zips as fuzz_T_seed_corpus.zip; with
--corpus all also corpus/regressions/T, whose long inputs libFuzzer then
mutates: at 077ae60 pcp's 113-op and sched's 1 KB regression inputs cut
those targets' exec/cpu-s 3.6- and 8-fold, bench/results/fuzz_exec-all.json;
copied: nothing is written into the repository) with
MMFUZZ_STATS=1 and once without it (the rates come from the run without:
its clock reads are system calls here; see split_run()), per checker setting:

  default   the target's own levels (per-op check, final check at the end)
  level1    MMFUZZ_CHECK_LEVEL=1 (counters only after each op)
  off       MMFUZZ_CHECK_LEVEL=0 MMFUZZ_FINAL_LEVEL=0 (teardown's own
            conservation test still runs)

and prints exec/s (executions / wall seconds, libFuzzer's own count),
exec/cpu-s (executions / CPU seconds of the libFuzzer process, start-up
and libFuzzer's own work included: the one-core rate, which the load of a
shared machine disturbs much less than the wall-clock one), the
CPU time per input split into ops, per-op checks and teardown (which holds
the final check and mm_reset), and the CPU time of one mm_check call per
level.  The machine is shared: compare the settings of one target with each
other, not across runs.

A row "steady" follows each target's default row (--steady N1,N2, default
20000,80000): the marginal exec/cpu-s of executions N1..N2 of the same
deterministic campaign, i.e. the rate of a campaign past its start, which
is what a long or continuous fuzzing run sees (see steady()).

A row "floor" follows it (--floor N, default 20000 executions; 0 = skip):
the same binary and setting on inputs of at most one byte (-max_len=1,
from a corpus of one zero byte), which decode to a program of no ops.  What
such an input costs - the harness's setup, the teardown's final check and
mm_reset(), libFuzzer's own work per execution - every input pays before
its first op: 1e6 / its us/input is the most exec/s the target could reach
with ops that cost nothing.

A row "configs" follows (--config-floors N, default 3000 executions per
config; 0 = skip): the same cost of an input of no ops on each named
machine config the target's setup offers, one config at a time (the
one-byte input whose byte picks it).  The final check and mm_reset() are
O(pfns): the 24k-page default config's no-op input costs an order of
magnitude more than the 320- to 2k-page ones, and libFuzzer's mutations
pick it for a share of all inputs.

A last line gives issue 5's throughput goal - 20,000 exec/s per target
with the per-op checker on, i.e. the default row - met or how many times
short each target is, with its floor (an input of no ops) and, when the
"off" setting ran, its exec/s with every check off beside it (the ceiling a
cheaper checker could reach: what is left is the ops, the harness and
libFuzzer); the JSON has the same under "goal".

Usage: bench/fuzz_exec.py [--seconds S] [--targets t1,t2] [--settings default,level1,off]
                          [--corpus seeds|all] [--steady N1,N2] [--floor N] [--config-floors N]
                          [--build-dir DIR] [--json FILE] [--quick] [--no-build]
       ./mmfuzz bench fuzz_exec [--quick] [--json FILE]
Writes bench/results/fuzz_exec.json unless --json says otherwise (--quick:
only with --json).  Exit status 0; 1 when a run found something (a finding
on the correct allocator is a false positive) or a build failed; 2 on bad
arguments.
"""
import argparse
import datetime
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from outputs import cannot_write  # noqa: E402
import fuzz_targets  # noqa: E402
SETTINGS = {
    "default": {},
    "level1": {"MMFUZZ_CHECK_LEVEL": "1"},
    "off": {"MMFUZZ_CHECK_LEVEL": "0", "MMFUZZ_FINAL_LEVEL": "0"},
}
STATS = re.compile(r"mmfuzz: stats: (\d+) inputs, (\d+) ops .*CPU time: ops ([\d.]+)s .*per-op checks ([\d.]+)s "
                   r".*teardown ([\d.]+)s .*; ([\d.]+) us per input")
LEVEL = re.compile(r"mmfuzz: stats: mm_check level (\d): (\d+) calls, ([\d.]+) us each")
EXECS = re.compile(r"stat::number_of_executed_units: (\d+)")
ELAPSED = re.compile(r"Done (\d+) runs in (\d+) second")


def log(msg):
    print("fuzz_exec: " + msg, file=sys.stderr, flush=True)


def targets():
    return fuzz_targets.names(ROOT)


def build(build_dir, names):
    r = subprocess.run(["cmake", "--preset", "fuzz", "-B", build_dir], cwd=ROOT,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode == 0:
        r = subprocess.run(["cmake", "--build", build_dir, "--target"] + ["fuzz_" + n for n in names],
                           cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        sys.stdout.write(r.stdout[-4000:])
        log("build failed")
        return False
    return True


CORPORA = {"seeds": ("corpus/{t}",), "all": ("corpus/{t}", "corpus/regressions/{t}")}


def run_one(binary, target, seconds, env_extra, runs=0, stats=True, corpora=CORPORA["seeds"], floor=False):
    work = tempfile.mkdtemp(prefix="fuzz_exec-")
    try:
        corpus = os.path.join(work, "corpus")
        os.mkdir(corpus)
        if floor:
            with open(os.path.join(corpus, "zero"), "wb") as f:
                f.write(b"\0")
            corpora = ()
        for d in (os.path.join(ROOT, c.format(t=target)) for c in corpora):
            if os.path.isdir(d):
                for f in sorted(os.listdir(d)):
                    p = os.path.join(d, f)
                    if os.path.isfile(p):
                        shutil.copy(p, os.path.join(corpus, "%s-%s" % (os.path.basename(d), f)))
        cmd = [binary, "-runs=%d" % runs if runs else "-max_total_time=%d" % seconds, "-print_final_stats=1",
               "-seed=1", "-artifact_prefix=%s/" % work, corpus]
        opts = os.path.join(ROOT, "corpus", target + ".dict")
        if floor:
            cmd.insert(1, "-max_len=1")
        elif os.path.isfile(opts):
            cmd.insert(1, "-dict=" + opts)
        env = dict(os.environ, MMFUZZ_STATS="1" if stats else "0", **env_extra)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        r = subprocess.run(cmd, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=(seconds + 120) if not runs else max(600, runs // 100))
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        out = r.stdout
        res = {"execs": 0, "wall_s": seconds, "exec_per_s": 0.0, "finding": r.returncode != 0,
               "cpu_s": round(cpu_s, 2)}
        m = EXECS.search(out)
        if m:
            res["execs"] = int(m.group(1))
        m = ELAPSED.search(out)
        if m:
            res["wall_s"] = max(1, int(m.group(2)))
        # A run by count (runs=) that ends at once on a finding reports no
        # elapsed time: no rate rather than a division by zero.
        res["exec_per_s"] = round(res["execs"] / res["wall_s"], 1) if res["wall_s"] else 0.0
        # The whole process's CPU time (libFuzzer's own work and start-up
        # included): what one core would run, however loaded the machine.
        res["exec_per_cpu_s"] = round(res["execs"] / cpu_s, 1) if cpu_s > 0 else 0.0
        m = STATS.search(out)
        if m:
            inputs, ops = int(m.group(1)), int(m.group(2))
            t_ops, t_chk, t_td = float(m.group(3)), float(m.group(4)), float(m.group(5))
            res.update(ops_per_input=round(ops / max(1, inputs), 1), cpu_us_per_input=float(m.group(6)),
                       ops_us=round(1e6 * t_ops / max(1, inputs), 1),
                       checks_us=round(1e6 * t_chk / max(1, inputs), 1),
                       teardown_us=round(1e6 * t_td / max(1, inputs), 1))
        res["levels"] = {m.group(1): {"calls": int(m.group(2)), "us_each": float(m.group(3))}
                         for m in LEVEL.finditer(out)}
        if res["finding"]:
            res["report"] = "\n".join(l for l in out.splitlines() if "==mmfuzz==" in l or "ERROR" in l)[:2000]
        return res
    finally:
        shutil.rmtree(work, ignore_errors=True)


SPLIT_KEYS = ("ops_per_input", "cpu_us_per_input", "ops_us", "checks_us", "teardown_us", "levels")


def split_run(binary, target, seconds, env_extra, runs=0, corpora=CORPORA["seeds"], floor=False):
    """Two runs of the same campaign (same -seed, corpus and duration): the
    rate - exec/s, exec/cpu-s, what the goal is judged on - from the one
    without MMFUZZ_STATS, and the split of an input's CPU time (ops, per-op
    checks, teardown; us per mm_check call) from the one with it, under
    "stats_run" with its own rates.  The stats clock is CLOCK_THREAD_CPUTIME_ID,
    read around every op and check: a system call, not a vDSO read.  On
    this machine's PVM guest the same 30,000-40,000 inputs took 1.15-1.7
    times the CPU time with it (buddy 1.15-1.27, bulk 1.3-1.5, kmalloc 1.7;
    session 29), so a rate read from the stats run understates the target."""
    r = run_one(binary, target, seconds, env_extra, runs=runs, stats=False, corpora=corpora, floor=floor)
    st = run_one(binary, target, seconds, env_extra, runs=runs, stats=True, corpora=corpora, floor=floor)
    r.pop("levels", None)
    for k in SPLIT_KEYS:
        if k in st:
            r[k] = st[k]
    r["stats_run"] = {k: st[k] for k in ("execs", "wall_s", "exec_per_s", "cpu_s", "exec_per_cpu_s")}
    if st["finding"] and not r["finding"]:
        r["finding"], r["report"] = True, st.get("report", "")
    return r


def steady(binary, target, n1, n2, corpora=CORPORA["seeds"]):
    """The marginal CPU cost of an execution once the campaign is past its
    start: two runs from the same seeds and -seed, -runs=n1 and -runs=n2,
    without MMFUZZ_STATS (its clock reads cost a few per cent); the first n1
    executions of both are the same, so (n2 - n1) / (cpu2 - cpu1) is the
    rate of executions n1..n2.  A 15-second run from the seeds measures the
    start, where libFuzzer writes a new corpus file every few executions,
    re-runs new inputs for leaks and its entropic bookkeeping scans the
    rarest features on every feature it sees: costs that fade as the
    campaign goes on."""
    a = run_one(binary, target, 0, {}, runs=n1, stats=False, corpora=corpora)
    b = run_one(binary, target, 0, {}, runs=n2, stats=False, corpora=corpora)
    res = {"runs": [n1, n2], "cpu_s": [a["cpu_s"], b["cpu_s"]], "finding": a["finding"] or b["finding"]}
    d = b["cpu_s"] - a["cpu_s"]
    res["exec_per_cpu_s"] = round((b["execs"] - a["execs"]) / d, 1) if d > 0 and b["execs"] > a["execs"] else 0.0
    if res["finding"]:
        res["report"] = a.get("report") or b.get("report")
    return res


SETUP_CONFIG = re.compile(r"^setup .*\bconfig=(\S+)", re.M)


def config_floors(binary, runs):
    """What an input of no ops costs on each named machine config of the
    target: a one-byte input whose byte picks the setup's config (the decoder
    takes an enum modulo its size, so bytes 0, 1, ... walk the configs until
    one repeats; the other setup arguments take their lowest values),
    executed `runs` times.  The final check (level 3) and mm_reset() are
    O(pfns), so a config's floor grows with its arena: this is where a
    target's average floor comes from.  {} for a target whose trace shows
    no `setup config=` line: config (it fuzzes mm_config itself) and sched
    (its trace is the deterministic scheduler's, and it keeps no stats)."""
    out = {}
    work = tempfile.mkdtemp(prefix="fuzz_exec-cfg-")
    try:
        for b in range(64):
            path = os.path.join(work, "b%d" % b)
            with open(path, "wb") as f:
                f.write(bytes([b]))
            env = dict(os.environ, MMFUZZ_TRACE="1", MMFUZZ_STATS="0")
            r = subprocess.run([binary, path], cwd=work, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=120)
            m = SETUP_CONFIG.search(r.stdout)
            if not m or m.group(1) in out:
                break
            env = dict(os.environ, MMFUZZ_STATS="1")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            r = subprocess.run([binary, "-runs=%d" % runs, path], cwd=work, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=max(600, runs // 100))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            st = STATS.search(r.stdout)
            lv = {x.group(1): float(x.group(3)) for x in LEVEL.finditer(r.stdout)}
            final = max((k for k in lv if k != "2"), default=None)
            out[m.group(1)] = {"byte": b, "runs": runs, "finding": r.returncode != 0,
                               "exec_per_cpu_s": round(runs / cpu_s, 1) if cpu_s > 0 else 0.0,
                               "cpu_us_per_input": float(st.group(6)) if st else None,
                               "final_check_us": lv[final] if final else None,
                               "final_level": int(final) if final else None}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return out


GOAL_EXEC_PER_S = 20000     # issue 5: per target, seed corpus, libFuzzer, ASan+UBSan, one core, per-op checker on


def goal_verdict(rows):
    """Issue 5's throughput goal against the default-setting rows (the
    target's own per-op and final check levels): per target its exec/s,
    whether it meets the goal, how many times short it is, and its floor's
    exec/cpu-s where measured - a floor under the goal means no op could be
    cheap enough, the per-input fixed cost alone misses it."""
    out = {"exec_per_s": GOAL_EXEC_PER_S, "setting": "default", "targets": {}}
    for r in rows:
        if r["checks"] != "default":
            continue
        rate = r["exec_per_s"]
        e = {"exec_per_s": rate, "met": rate >= GOAL_EXEC_PER_S,
             "short_by": round(GOAL_EXEC_PER_S / rate, 1) if 0 < rate < GOAL_EXEC_PER_S else None}
        if "floor" in r:
            e["floor_exec_per_cpu_s"] = r["floor"]["exec_per_cpu_s"]
        if "config_floors" in r:
            e["floor_us_by_config"] = {n: c["cpu_us_per_input"] for n, c in r["config_floors"].items()}
        out["targets"][r["target"]] = e
    # The same target with every check off (the "off" row, same run): what
    # the ops, the harness and libFuzzer alone allow - a ceiling no cheaper
    # checker can lift the default row above.
    for r in rows:
        e = out["targets"].get(r["target"])
        if e is not None and r["checks"] == "off" and r["exec_per_s"] > 0:
            e["checks_off_exec_per_s"] = r["exec_per_s"]
    return out


def goal_line(goal):
    """One line: how many targets meet the goal, then each short one."""
    t = goal["targets"]
    met = [n for n in t if t[n]["met"]]
    short = ["%s %.0f (%sx short%s%s)" % (n, e["exec_per_s"], e["short_by"] if e["short_by"] else "?",
                                           ", floor %.0f" % e["floor_exec_per_cpu_s"] if "floor_exec_per_cpu_s" in e else "",
                                           ", checks off %.0f" % e["checks_off_exec_per_s"]
                                           if "checks_off_exec_per_s" in e else "")
             for n, e in t.items() if not e["met"]]
    return "goal: %d exec/s per target with the per-op checker (default row): met by %d of %d%s" % (
        goal["exec_per_s"], len(met), len(t), "; " + ", ".join(short) if short else "")


def main():
    ap = argparse.ArgumentParser(description="fuzz-target throughput and checker cost")
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--targets", default="")
    ap.add_argument("--settings", default="default,level1,off")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build", "fuzz"))
    ap.add_argument("--json")
    ap.add_argument("--corpus", choices=sorted(CORPORA), default="seeds",
                    help="seeds: corpus/T, the OSS-Fuzz seed corpus (default); all: also corpus/regressions/T")
    ap.add_argument("--quick", action="store_true", help="5 s per run, default setting only")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--floor", type=int, default=20000, metavar="N",
                    help="the cost of an input of no ops: N executions of inputs of at most one byte, "
                         "default setting (0 = skip; --quick skips it)")
    ap.add_argument("--config-floors", type=int, default=3000, metavar="N",
                    help="the floor per named machine config: N executions of the no-op input of each "
                         "config (0 = skip; --quick skips it)")
    ap.add_argument("--steady", default="20000,80000", metavar="N1,N2",
                    help="steady-state exec/cpu-s of the default setting from -runs=N1 and -runs=N2 "
                         "(the marginal rate; 0 = skip; --quick skips it)")
    a = ap.parse_args()
    a.build_dir = os.path.abspath(a.build_dir)
    names = [t for t in a.targets.split(",") if t] or targets()
    settings = ["default"] if a.quick else [s for s in a.settings.split(",") if s]
    seconds = 5 if a.quick else a.seconds
    bad = [s for s in settings if s not in SETTINGS] + [t for t in names if t not in targets()]
    try:
        steady_runs = [] if a.quick or a.steady == "0" else [int(x) for x in a.steady.split(",")]
        if steady_runs and (len(steady_runs) != 2 or not 0 < steady_runs[0] < steady_runs[1]):
            raise ValueError
    except ValueError:
        ap.print_usage(sys.stderr)
        log("--steady needs N1,N2 with 0 < N1 < N2 (or 0), not '%s'" % a.steady)
        return 2
    floor_runs = 0 if a.quick else a.floor
    cfg_runs = 0 if a.quick else a.config_floors
    if bad or seconds < 1 or floor_runs < 0 or cfg_runs < 0:
        ap.print_usage(sys.stderr)
        log("unknown setting or target: %s" % ", ".join(bad) if bad else
            "--seconds must be >= 1" if seconds < 1 else
            "--floor must be >= 0" if floor_runs < 0 else "--config-floors must be >= 0")
        return 2
    if a.json and cannot_write("--json", a.json):
        ap.print_usage(sys.stderr)
        log(cannot_write("--json", a.json))
        return 2
    if not a.no_build and not build(a.build_dir, names):
        return 1
    rows, failed = [], False

    def show(res, line):
        """Print a table row; a finding marks it and prints its report.  True on a finding."""
        print(line + ("   FINDING" if res["finding"] else ""), flush=True)
        if res["finding"]:
            print(res.get("report", ""))
        return res["finding"]

    print("%-10s %-8s %9s %10s %10s %8s %9s %9s %10s %9s %9s" % (
        "target", "checks", "exec/s", "exec/cpu-s", "us/input", "ops/in", "ops us", "checks us", "teardown", "L2 us",
        "final us"))
    for t in names:
        binary = os.path.join(a.build_dir, "targets", "fuzz_" + t)
        if not os.access(binary, os.X_OK):
            log("no %s (build it, or drop --no-build)" % binary)
            return 1
        for s in settings:
            log("%s, checks %s, %d s" % (t, s, seconds))
            r = split_run(binary, t, seconds, SETTINGS[s], corpora=CORPORA[a.corpus])
            r.update(target=t, checks=s)
            rows.append(r)
            lv = r.get("levels", {})
            final = max((int(k) for k in lv if k != "2"), default=0)
            failed |= show(r, "%-10s %-8s %9.0f %10.0f %10.0f %8.1f %9.0f %9.0f %10.0f %9s %9s" % (
                t, s, r["exec_per_s"], r["exec_per_cpu_s"], r.get("cpu_us_per_input", 0), r.get("ops_per_input", 0), r.get("ops_us", 0),
                r.get("checks_us", 0), r.get("teardown_us", 0),
                "%.1f" % lv["2"]["us_each"] if "2" in lv else "-",
                "%.0f (L%d)" % (lv[str(final)]["us_each"], final) if final else "-"))
        if steady_runs and "default" in settings:
            log("%s, steady state: -runs=%d and -runs=%d" % (t, steady_runs[0], steady_runs[1]))
            st = steady(binary, t, steady_runs[0], steady_runs[1], CORPORA[a.corpus])
            next(r for r in rows if r["target"] == t and r["checks"] == "default")["steady"] = st
            failed |= show(st, "%-10s %-8s %9s %10.0f   executions %d..%d, marginal CPU rate, no stats" % (
                t, "steady", "-", st["exec_per_cpu_s"], steady_runs[0], steady_runs[1]))
        if floor_runs and "default" in settings:
            log("%s, floor: %d executions of inputs of at most one byte" % (t, floor_runs))
            fl = split_run(binary, t, 0, {}, runs=floor_runs, floor=True)
            next(r for r in rows if r["target"] == t and r["checks"] == "default")["floor"] = fl
            failed |= show(fl, "%-10s %-8s %9s %10.0f %10.0f %8.1f %9.0f %9.0f %10.0f   inputs of <= 1 byte" % (
                t, "floor", "-", fl["exec_per_cpu_s"], fl.get("cpu_us_per_input", 0), fl.get("ops_per_input", 0),
                fl.get("ops_us", 0), fl.get("checks_us", 0), fl.get("teardown_us", 0)))
        if cfg_runs and "default" in settings:
            log("%s, floor per config: %d executions of each config's no-op input" % (t, cfg_runs))
            cf = config_floors(binary, cfg_runs)
            if cf:
                next(r for r in rows if r["target"] == t and r["checks"] == "default")["config_floors"] = cf
                print("%-10s %-8s   us per no-op input by config (final check us): %s%s" % (
                    t, "configs", ", ".join("%s %.0f (%.0f)" % (n, e["cpu_us_per_input"] or 0, e["final_check_us"] or 0)
                                            for n, e in cf.items()),
                    "   FINDING" if any(e["finding"] for e in cf.values()) else ""), flush=True)
                failed |= any(e["finding"] for e in cf.values())
    goal = goal_verdict(rows)
    if goal["targets"]:
        print(goal_line(goal), flush=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True).stdout.strip()
    doc = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "commit": head or None,
           "machine": "%s, %d CPUs" % (platform.processor() or platform.machine(), os.cpu_count() or 0),
           "engine": "libfuzzer", "preset": "fuzz (clang, ASan+UBSan, MM_DEBUG=2)", "seconds": seconds,
           "corpus": " + ".join(c.format(t="T") for c in CORPORA[a.corpus]), "goal": goal, "runs": rows}
    out = a.json or (None if a.quick else os.path.join(ROOT, "bench", "results", "fuzz_exec.json"))
    if out:
        with open(out, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        log("wrote " + out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""mmfuzz run's campaign (standard library only): tools/verbs/run parses and
checks the arguments and the toolchain, then execs this.

    campaign.py --time S [--out DIR] [--seed N] [--no-build]

The campaign is a list of components, each run through an existing verb so
that what `run` does is exactly what a person can rerun by hand:

  fuzz TARGET        ./mmfuzz fuzz TARGET --no-build --time T --json F --out D
                     (libFuzzer, build/fuzz: the fuzz preset, ASan+UBSan)
  stress MODE        ./mmfuzz stress MODE --no-build --time T --seed N --json F
                     (free-running threads, build/stress-rel)
  det MODE           ./mmfuzz stress MODE --deterministic --no-build --seed N+k
                     --runs R --policy P --quiet --artifact F, in batches of
                     about 5 s, policies random / pct / sticky in turn

Time: half the budget to the fuzz targets (equal shares), half to the
stressors (each mode's share split equally between free-running and
deterministic).  Each component's share is recomputed from what is left
when it starts, less the overruns expected of the components still to run
(share()), so an overrun is spread over the components after it; the
build is not counted.  Every component runs in its own process group; a
component that cannot be built, fails to start, dies or hangs is reported
and the campaign goes on.  SIGINT/SIGTERM stop the running component and
print the summary of what ran.

Exit status: 1 when anything was found; else 2 when a component could not be
built or run; else 130 when interrupted; else 0.

For tests only: MMFUZZ_RUN_ONLY="fuzz:buddy,stress:pages,det:pages" keeps
just those components (each half's budget then goes to its kept ones), and
MMFUZZ_RUN_VIA names a wrapper to run the components through instead of
./mmfuzz (to plant failures).
"""
import datetime
import glob
import json
import os
import queue
import random
import re
import signal
import subprocess
import sys
import threading
import time
import traceback

ROOT = os.environ.get("MMFUZZ_ROOT") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # tools/
import fuzz_targets  # noqa: E402
import shares  # noqa: E402
MMFUZZ = os.environ.get("MMFUZZ_RUN_VIA") or os.environ.get("MMFUZZ") or os.path.join(ROOT, "mmfuzz")

MODES = ["pages", "pcp", "bulk", "slub", "kmalloc", "mixed"]
POLICIES = ["random", "pct", "sticky"]
FUZZ_DIR = os.path.join(ROOT, "build", "fuzz")          # the fuzz verb's libFuzzer build (fixed there)
STRESS_DIR = os.path.join(ROOT, "build", "stress-rel")  # the stress verb's default build
FUZZ_SHARE = 0.5             # of the budget; the rest goes to the stressors
MIN_SLICE = {"fuzz": 2.0, "stress": 2.0, "det": 1.0}   # seconds: the least a component gets (the fuzz
                             # verb runs nothing with under 1 s left; a short free-running run may
                             # end before a rare injection fired, and a run where one never fired fails)
OVERRUN_PRIOR = {"fuzz": 2.0}  # seconds a fuzz target runs past its share before one has been seen
                             # to (share()); the others' overruns are well under a second
PROGRESS_EVERY = 5.0         # seconds between live progress lines of one component
DET_BATCH_S = 5.0            # deterministic: seconds per batch (one process, one master seed)
STOP_GRACE = 10.0            # seconds from SIGINT to SIGKILL
CRASH_PREFIXES = ("crash-", "timeout-", "oom-", "leak-")

STOP = {"why": None, "count": 0}     # set by SIGINT/SIGTERM


def say(msg):
    print("mmfuzz run: " + msg, flush=True)


def rel(path):
    """A path as the user should type it from the repository root."""
    p = os.path.abspath(path)
    return os.path.relpath(p, ROOT) if p.startswith(ROOT + os.sep) else p


def on_signal(signum, _frame):
    STOP["why"] = "interrupted (%s)" % signal.Signals(signum).name
    STOP["count"] += 1


def sig_name(rc):
    try:
        return signal.Signals(-rc).name
    except ValueError:
        return "signal %d" % -rc


def targets():
    return fuzz_targets.names(ROOT)


# ------------------------------------------------------------------ children

class Child:
    """A verb in its own process group; its output goes to a log and a queue."""

    def __init__(self, argv, log_path, env=None):
        self.log = open(log_path, "a")
        self.log.write("$ %s\n" % " ".join(argv))
        self.log.flush()
        self.q = queue.Queue()
        self.p = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True, errors="replace", start_new_session=True,
                                  env=env)
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.p.stdout:
            self.log.write(line)
            self.log.flush()
            self.q.put(line)
        self.q.put(None)

    def kill(self, sig):
        try:
            os.killpg(self.p.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def supervise(argv, log_path, hard_s, on_line=None, on_tick=None, env=None):
    """Run argv to its end; returns (rc, how): how is "done", "timeout" or
    "interrupted".  rc < 0 is the signal that ended it."""
    c = Child(argv, log_path, env)
    start = time.monotonic()
    how, sent, signals_seen = "done", None, STOP["count"]
    while True:
        try:
            line = c.q.get(timeout=0.5)
        except queue.Empty:
            line = ""
        if line is None:
            break
        now = time.monotonic()
        try:    # a bug in the progress display must not leave the child unwatched
            if line and on_line:
                on_line(line)
            if on_tick and how == "done":
                on_tick(now - start)
        except Exception:
            c.log.write("mmfuzz run: progress callback failed:\n" + traceback.format_exc())
            on_line = on_tick = None
        if STOP["why"] and sent is None:
            how, sent = "interrupted", now
            c.kill(signal.SIGINT)
        elif hard_s and now - start > hard_s and sent is None:
            how, sent = "timeout", now
            c.log.write("mmfuzz run: killed after %.0fs (its share was %.0fs)\n" % (now - start, hard_s))
            c.kill(signal.SIGINT)
        if sent is not None and (now - sent > STOP_GRACE or STOP["count"] > signals_seen + 1):
            c.kill(signal.SIGKILL)
    rc = c.p.wait()
    c.t.join(timeout=5)
    c.log.close()
    return rc, how


def tail(path, n=12):
    try:
        with open(path, errors="replace") as f:
            return [l.rstrip("\n") for l in f.readlines()[-n:]]
    except OSError:
        return []


# ------------------------------------------------------------------ build

def build_all(run_dir, names):
    """Build what the components need; returns (seconds, steps, broken) where
    broken maps a component key ("fuzz:buddy", "stress", "det") to why."""
    bdir = os.path.join(run_dir, "build")
    steps, broken = [], {}
    t0 = time.monotonic()

    def step(name, argv, log):
        s = time.monotonic()
        say("build: %s (log %s)" % (name, rel(log)))
        rc, how = supervise(argv, log, 0)
        ok = rc == 0 and how == "done"
        steps.append({"name": name, "ok": ok, "seconds": round(time.monotonic() - s, 1), "log": rel(log)})
        if not ok and how == "done":
            for l in tail(log, 15):
                print("    " + l)
        return ok

    fuzz_log = os.path.join(bdir, "fuzz.log")
    fuzz_ok = True
    # configured, not just a cache: a failed configure leaves CMakeCache.txt without build.ninja, and
    # every later campaign then failed in the build
    if not fuzz_targets.configured(FUZZ_DIR):
        fuzz_ok = step("configure the fuzz preset (build/fuzz)", ["cmake", "--preset", "fuzz"], fuzz_log)
    if fuzz_ok and not STOP["why"]:
        fuzz_ok = step("fuzz targets in build/fuzz",
                       ["cmake", "--build", FUZZ_DIR, "--target"] + ["fuzz_" + n for n in names], fuzz_log)
        if not fuzz_ok and not STOP["why"]:
            # Find which: each target on its own, so one broken target costs only itself.
            for n in names:
                if STOP["why"]:
                    break
                if not step("fuzz_%s alone" % n, ["cmake", "--build", FUZZ_DIR, "--target", "fuzz_" + n],
                            os.path.join(bdir, "fuzz_%s.log" % n)):
                    broken["fuzz:" + n] = "fuzz_%s failed to build (log %s)" % (n, rel(os.path.join(bdir, "fuzz_%s.log" % n)))
    elif not fuzz_ok:
        for n in names:
            broken["fuzz:" + n] = "cmake --preset fuzz failed (log %s)" % rel(fuzz_log)
    if not STOP["why"]:
        # The stress verb configures and builds build/stress-rel itself; --help-binary then only prints the usage.
        log = os.path.join(bdir, "stress.log")
        if not step("mmfuzz-stress in build/stress-rel", [MMFUZZ, "stress", "pages", "--help-binary"], log):
            broken["stress"] = "mmfuzz-stress failed to build (log %s)" % rel(log)
    # The stress verb configured build/stress-rel, or its configure failed (its log says why): a cache
    # without build.ninja is no build dir to build in (that build failed in ninja, its log said only so).
    if not STOP["why"] and fuzz_targets.configured(STRESS_DIR):
        log = os.path.join(bdir, "sched.log")
        if not step("mmfuzz-sched-stress in build/stress-rel",
                    ["cmake", "--build", STRESS_DIR, "--target", "mmfuzz-sched-stress"], log):
            broken["det"] = "mmfuzz-sched-stress failed to build (log %s)" % rel(log)
    elif not STOP["why"]:
        broken["det"] = "mmfuzz-sched-stress not built: build/stress-rel is not configured (log %s)" % rel(
            os.path.join(bdir, "stress.log"))
    return round(time.monotonic() - t0, 1), steps, broken


def check_built(names, broken):
    """--no-build, and after a build: every binary a component runs must exist."""
    for n in names:
        if "fuzz:" + n not in broken and not os.access(os.path.join(FUZZ_DIR, "targets", "fuzz_" + n), os.X_OK):
            broken["fuzz:" + n] = "build/fuzz/targets/fuzz_%s is not built (drop --no-build)" % n
    if "stress" not in broken and not os.access(os.path.join(STRESS_DIR, "stressors", "stress", "mmfuzz-stress"), os.X_OK):
        broken["stress"] = "build/stress-rel/stressors/stress/mmfuzz-stress is not built (drop --no-build)"
    if "det" not in broken and not os.access(os.path.join(STRESS_DIR, "stressors", "sched", "mmfuzz-sched-stress"), os.X_OK):
        broken["det"] = "build/stress-rel/stressors/sched/mmfuzz-sched-stress is not built (drop --no-build)"


# ------------------------------------------------------------------ progress

class Progress:
    """One line per component every PROGRESS_EVERY seconds: what, how far, time left."""

    def __init__(self, camp, comp, slice_s):
        self.camp, self.comp, self.slice_s = camp, comp, slice_s
        self.last = time.monotonic()

    def line(self, elapsed, what, force=False):
        now = time.monotonic()
        if not force and now - self.last < PROGRESS_EVERY:
            return
        self.last = now
        print("  %s %.0fs/%.0fs %s | campaign %ds left" %
              (self.comp["tag"], elapsed, self.slice_s, what, max(0, round(self.camp.left()))), flush=True)


# ------------------------------------------------------------------ fuzz

FUZZ_STATUS = re.compile(r"^\[(\S+)\]\s+(\d+)s\s+execs (\d+)\s+exec/s (\S+)\s+cov (\S+)\s+corpus (\d+)\s+crashes (\d+)")


def run_fuzz(camp, comp, secs):
    n = comp["name"]
    d = os.path.join(camp.run_dir, "fuzz")
    out, js, log = os.path.join(d, n), os.path.join(d, n + ".json"), os.path.join(d, n + ".log")
    comp.update(log=rel(log), json=rel(js), crashes_dir=rel(os.path.join(out, n, "crashes")))
    prog = Progress(camp, comp, secs)
    last = {}

    def on_line(l):
        m = FUZZ_STATUS.match(l)
        if m:
            last.update(execs=int(m.group(3)), exec_per_s=float(m.group(4)), coverage=m.group(5),
                        corpus=int(m.group(6)), crashes=int(m.group(7)))
            prog.line(float(m.group(2)), "execs %s exec/s %s cov %s corpus %s crashes %s" % m.group(3, 4, 5, 6, 7))

    # --no-replay-check: the verb's replay without sanitizers would build build/fuzz-replay inside
    # this target's share of the budget; the campaign's shares are seconds, its builds are not timed.
    argv = [MMFUZZ, "fuzz", n, "--no-build", "--no-replay-check", "--time", "%.1f" % secs, "--json", js, "--out", out]
    comp["command"] = " ".join(["./mmfuzz"] + argv[1:3] + ["--time", "%.0f" % secs])
    t0 = time.monotonic()
    rc, how = supervise(argv, log, secs + 120, on_line=on_line)
    comp["seconds"] = round(time.monotonic() - t0, 1)
    res = None
    try:
        with open(js) as f:
            res = json.load(f)["targets"][0]
    except (OSError, ValueError, KeyError, IndexError):
        pass
    if res:
        for k in ("seconds", "execs", "exec_per_s", "coverage", "corpus"):
            comp[k] = res.get(k, 0)
    else:
        comp.update(execs=last.get("execs", 0), coverage=last.get("coverage", 0), corpus=last.get("corpus", 0))
        comp["exec_per_s"] = round(comp["execs"] / comp["seconds"], 1) if comp["seconds"] else 0.0
    files = sorted(f for f in glob.glob(os.path.join(out, n, "crashes", "*"))
                   if os.path.basename(f).startswith(CRASH_PREFIXES))
    for f in files:
        camp.finding(comp, "libFuzzer %s input %s" % (os.path.basename(f).split("-")[0], os.path.basename(f)), rel(f),
                     "./mmfuzz repro %s %s" % (n, rel(f)))
    stops = (res or {}).get("engine_stops", 0)
    if stops and comp.get("execs"):
        # The target died with no artifact to replay (the OOM killer, say): its log is the evidence.
        tlog = os.path.join(out, n, "log.txt")
        camp.finding(comp, "libFuzzer died %d time%s without writing an input (its log says how)" %
                     (stops, "s" if stops > 1 else ""), rel(tlog), comp["command"])
        files.append(tlog)
    if how == "interrupted":
        comp["status"] = "FOUND" if files else "interrupted"
    elif how == "timeout":
        camp.error(comp, "the fuzz verb did not finish within %.0fs of its %.0fs share; killed" % (secs + 120, secs))
    elif rc not in (0, 1) or res is None:
        camp.error(comp, "the fuzz verb exited %d%s; last lines of %s:\n%s" %
                   (rc, "" if res else " without its --json table", rel(log), "\n".join(tail(log, 8))))
    elif not comp.get("execs"):
        camp.error(comp, "libFuzzer ran no input in %.1fs (log %s)" % (comp["seconds"], rel(log)))
    if "status" not in comp:
        comp["status"] = "FOUND" if files else "ok"


# ------------------------------------------------------------------ free-running stress

def run_stress(camp, comp, secs):
    m = comp["name"]
    d = os.path.join(camp.run_dir, "stress")
    js, log = os.path.join(d, m + ".json"), os.path.join(d, m + ".log")
    comp.update(log=rel(log), json=rel(js))
    prog = Progress(camp, comp, secs)
    seen = {"rerun": None, "failure": None}

    def on_line(l):
        if l.startswith("rerun: ") and not seen["rerun"]:
            seen["rerun"] = l[len("rerun: "):].strip()
        elif "FAILURE:" in l and not seen["failure"]:
            seen["failure"] = l.split("FAILURE:", 1)[1].strip()

    argv = [MMFUZZ, "stress", m, "--no-build", "--time", "%g" % round(secs, 1), "--seed", str(camp.seed), "--json", js]
    comp["command"] = " ".join(["./mmfuzz"] + argv[1:3] + argv[4:8])
    t0 = time.monotonic()
    # A failure's deterministic replay writes its schedule to $TMPDIR (replay.c): into the run directory.
    rc, how = supervise(argv, log, secs + 60, on_line=on_line,
                        on_tick=lambda el: prog.line(el, "running (every op checked; stop-the-world checks every 200 ms)"),
                        env=dict(os.environ, TMPDIR=os.path.abspath(d)))
    comp["seconds"] = round(time.monotonic() - t0, 1)
    res = None
    try:
        with open(js) as f:
            res = json.load(f)
    except (OSError, ValueError):
        pass
    if res:
        tot = res.get("total", {})
        comp.update(seconds=res.get("elapsed_s", comp["seconds"]), ops=tot.get("ops", 0),
                    ops_per_s=tot.get("ops_per_s", 0), threads=res.get("threads"), cpus=res.get("cpus"),
                    result=res.get("result", ""))
    else:
        comp.update(ops=0, ops_per_s=0, result="")
    comp["rerun"] = seen["rerun"]
    rerun = seen["rerun"] or comp["command"]
    # The deterministic engine's replay of the failure - only when it reproduced it (replay.c):
    # the stressor names the command it tried in the other cases too.
    rep = (res or {}).get("replay") or {}
    exact = (rep.get("command") or "") if rep.get("status") == "reproduced" else ""
    # A FAILURE first: after Ctrl-C the stressor still makes its final checks, which can fail,
    # and one stopped before its report (a second signal, the kill after STOP_GRACE) printed
    # its FAILURE line already.
    failed = rc == 1 or seen["failure"] is not None or (res or {}).get("result") == "FAILURE"
    if failed and how == "interrupted":
        why = (res or {}).get("failure") or seen["failure"] or "FAILURE (see the log)"
        camp.finding(comp, why, rel(log), rerun, also=exact)
    elif how == "interrupted":
        comp["status"] = "interrupted"
    elif how == "timeout":
        camp.finding(comp, "no end after %.0fs (share %.0fs): a hang the watchdog missed" % (secs + 60, secs), rel(log), rerun)
    elif rc == 1:
        why = (res or {}).get("failure") or seen["failure"] or "FAILURE (see the log)"
        camp.finding(comp, why, rel(log), rerun, also=exact)
    elif rc < 0:
        camp.finding(comp, "the stressor died of %s" % sig_name(rc), rel(log), rerun)
    elif rc != 0 or res is None:
        camp.error(comp, "the stress verb exited %d%s; last lines of %s:\n%s" %
                   (rc, "" if res else " without its --json", rel(log), "\n".join(tail(log, 8))))
    comp.setdefault("status", "ok")


# ------------------------------------------------------------------ deterministic stress

DET_TOTAL = re.compile(r"^total: .* runs (\d+) failures (\d+) steps (\d+) switches (\d+) .* ops (\d+) trace \S+ (\S+) runs/s")
DET_FAIL = re.compile(r"^run (\d+) seed \S+ .* FAILED: (.*)$")


def run_det(camp, comp, secs):
    m = comp["name"]
    d = os.path.join(camp.run_dir, "stress")
    log = os.path.join(d, "det-" + m + ".log")
    comp.update(log=rel(log), runs=0, ops=0, switches=0, failures=0, batches=[])
    prog = Progress(camp, comp, secs)
    t0 = time.monotonic()
    runs, k = 50, 0
    comp["command"] = "./mmfuzz stress %s --deterministic --seed %d --runs N --policy P" % (m, camp.seed)
    while not STOP["why"]:
        left = secs - (time.monotonic() - t0)
        if left <= 0.05:
            break
        bseed = (camp.seed + k) & 0xFFFFFFFFFFFFFFFF
        policy = POLICIES[k % len(POLICIES)]
        art = os.path.join(d, "det-%s-%#x.sched" % (m, bseed))
        argv = [MMFUZZ, "stress", m, "--deterministic", "--no-build", "--seed", "%#x" % bseed, "--runs", str(runs),
                "--policy", policy, "--quiet", "--artifact", art]
        got = {"total": None, "rerun": None, "reason": None}

        def on_line(l):
            t = DET_TOTAL.match(l)
            if t:
                got["total"] = t
            elif l.startswith("rerun: ") and not got["rerun"]:
                got["rerun"] = l[len("rerun: "):].strip()
            else:
                f = DET_FAIL.match(l)
                if f and not got["reason"]:
                    got["reason"] = "run %s: %s" % (f.group(1), f.group(2).strip())

        b0 = time.monotonic()
        rc, how = supervise(argv, log, DET_BATCH_S * 3 + 60, on_line=on_line)
        bsecs = time.monotonic() - b0
        t = got["total"]
        batch = {"seed": "%#x" % bseed, "policy": policy, "runs": 0, "failures": 0, "rc": rc}
        if t:
            batch.update(runs=int(t.group(1)), failures=int(t.group(2)))
            comp["runs"] += int(t.group(1))
            comp["failures"] += int(t.group(2))
            comp["switches"] += int(t.group(4))
            comp["ops"] += int(t.group(5))
        comp["batches"].append(batch)
        k += 1
        if how == "interrupted":
            if got["rerun"]:        # a failure it printed before the interrupt: kept
                replay = ("./mmfuzz stress %s --deterministic --replay %s" % (m, rel(art))
                          if os.path.exists(art) else "")
                camp.finding(comp, "policy %s, seed %#x: a run failed before the interrupt: %s" %
                             (policy, bseed, got["reason"] or "?"), rel(art) if replay else rel(log),
                             got["rerun"], also=replay)
            comp.setdefault("status", "interrupted")
            break
        if how == "timeout":
            camp.finding(comp, "a batch of %d runs did not end in %.0fs (a hang)" % (runs, bsecs), rel(log), " ".join(["./mmfuzz"] + argv[1:]))
            break
        if t is None or rc not in (0, 1) or (rc == 1 and not got["rerun"]):
            if rc < 0 or (t is None and rc == 1):
                camp.finding(comp, "the driver died (%s)" % (sig_name(rc) if rc < 0 else "exit 1, no total line"), rel(log),
                             " ".join(["./mmfuzz"] + argv[1:]))
            else:
                camp.error(comp, "the deterministic driver exited %d; last lines of %s:\n%s" %
                           (rc, rel(log), "\n".join(tail(log, 8))))
            break
        if got["rerun"]:
            replay = ""
            if os.path.exists(art):
                replay = "./mmfuzz stress %s --deterministic --replay %s" % (m, rel(art))
            camp.finding(comp, "policy %s, seed %#x: %d of %d runs failed; first: %s" %
                         (policy, bseed, batch["failures"], batch["runs"], got["reason"] or "?"),
                         rel(art) if replay else rel(log), got["rerun"], also=replay)
        el = time.monotonic() - t0
        prog.line(el, "runs %d ops %d failures %d (last batch: %s, seed %#x)" %
                  (comp["runs"], comp["ops"], comp["failures"], policy, bseed))
        # Next batch: as many runs as fit in DET_BATCH_S (or what is left) at this batch's rate.
        rate = batch["runs"] / bsecs if bsecs > 0 else 1000.0
        runs = max(1, min(1000000, int(rate * min(DET_BATCH_S, secs - el))))
    comp["seconds"] = round(time.monotonic() - t0, 1)
    comp["ops_per_s"] = round(comp["ops"] / comp["seconds"], 1) if comp["seconds"] else 0.0
    comp.setdefault("status", "interrupted" if STOP["why"] else "ok")


# ------------------------------------------------------------------ the campaign

class Campaign:
    """Two halves with budgets of their own (fuzz; stressors), so that the
    fuzz targets' fixed costs (libFuzzer first runs the whole seed corpus)
    come out of the fuzz half, not out of the stressors'."""

    def __init__(self, budget, run_dir, seed):
        self.budget, self.run_dir, self.seed = budget, run_dir, seed
        self.findings, self.errors = [], []
        fuzz = round(budget * FUZZ_SHARE, 1)
        self.groups = {"fuzz": {"budget": fuzz, "start": None}, "stressors": {"budget": budget - fuzz, "start": None}}

    def group_left(self, g):
        gr = self.groups[g]
        return gr["budget"] - (time.monotonic() - gr["start"]) if gr["start"] else gr["budget"]

    def left(self):
        return sum(max(0.0, self.group_left(g)) for g in self.groups)

    def finding(self, comp, what, where, command, also=""):
        f = {"component": comp["label"], "what": what, "reproducer": where, "command": command}
        if also:
            f["replay"] = also
        self.findings.append(f)
        comp.setdefault("findings", []).append(f)
        comp["status"] = "FOUND"
        say("FOUND: %s\n    %s" % (what, command))

    def error(self, comp, what):
        self.errors.append({"component": comp["label"], "what": what})
        comp["status"] = "ERROR"
        say("ERROR in %s: %s" % (comp["label"], what))


def plan(budget, names):
    comps = []
    for n in names:
        comps.append({"kind": "fuzz", "name": n, "weight": FUZZ_SHARE / len(names)})
    for m in MODES:
        comps.append({"kind": "stress", "name": m, "weight": (1 - FUZZ_SHARE) / len(MODES) / 2})
    for m in MODES:
        comps.append({"kind": "det", "name": m, "weight": (1 - FUZZ_SHARE) / len(MODES) / 2})
    only = os.environ.get("MMFUZZ_RUN_ONLY")
    if only:
        keep = set(x.strip() for x in only.split(","))
        comps = [c for c in comps if "%s:%s" % (c["kind"], c["name"]) in keep]
    for i, c in enumerate(comps):
        c["tag"] = "[%2d/%d %s %s]" % (i + 1, len(comps), c["kind"], c["name"])
        c["label"] = "%s %s%s" % ("fuzz" if c["kind"] == "fuzz" else "stress", c["name"],
                                  " --deterministic" if c["kind"] == "det" else "")
        c["planned_s"] = round(budget * c["weight"], 1)
    return comps


def fmt_table(title, cols, rows):
    out = [title]
    widths = [max(len(c[0]), *(len(str(r[i])) for r in rows)) if rows else len(c[0]) for i, c in enumerate(cols)]
    fmt = "  " + "  ".join(("%-*s" if c[1] == "l" else "%*s") for c in cols)
    out.append(fmt % tuple(x for i, c in enumerate(cols) for x in (widths[i], c[0])))
    for r in rows:
        out.append(fmt % tuple(x for i in range(len(cols)) for x in (widths[i], r[i])))
    return out


def summary_text(s):
    L = ["", "==== mmfuzz run: summary ===="]
    L.append("out:     %s" % s["out"])
    L.append("budget:  %ds: fuzz %gs over %d targets, stressors %gs over %d modes (half free-running, half "
             "deterministic)" % (s["budget_s"], s["split"]["fuzz_s"], len(s["fuzz"]), s["split"]["stress_s"],
                                 len(MODES)))
    L.append("took:    campaign %.0fs, build %.0fs (not counted)%s, wall %.0fs" %
             (s["campaign_s"], s["build"]["seconds"], "" if s["build"]["done"] else " [--no-build]", s["wall_s"]))
    L.append("seed:    %d (every stressor; deterministic batches use seed+0, +1, ...); rerun with --seed %d" %
             (s["seed"], s["seed"]))
    if s["interrupted"]:
        L.append("STOPPED: %s; what ran is below" % s["interrupted"])
    L.append("")
    L += fmt_table("fuzz targets (libFuzzer, ASan+UBSan, build/fuzz; per target: ./mmfuzz fuzz TARGET)",
                   [("target", "l"), ("status", "l"), ("seconds", "r"), ("execs", "r"), ("exec/s", "r"),
                    ("cov(edges)", "r"), ("new corpus", "r"), ("findings", "r")],
                   [(c["name"], c["status"], "%.1f" % c.get("seconds", 0), c.get("execs", 0),
                     "%.0f" % c.get("exec_per_s", 0), c.get("coverage", 0), c.get("corpus", 0),
                     len(c.get("findings", []))) for c in s["fuzz"]])
    L.append("  (not in this run: ./mmfuzz fuzz's replay of the new corpora without sanitizers; "
             "./mmfuzz fuzz --replay-check TARGET %s/fuzz/TARGET/TARGET makes it)" % s["out"])
    L.append("")
    thr = next((c for c in s["stress"] if c.get("threads")), {})
    L += fmt_table("stressors, free-running (%sbuild/stress-rel; ./mmfuzz stress MODE)" %
                   ("%s threads over %s vCPUs, " % (thr["threads"], thr["cpus"]) if thr else ""),
                   [("mode", "l"), ("status", "l"), ("seconds", "r"), ("ops", "r"), ("ops/s", "r"),
                    ("findings", "r")],
                   [(c["name"], c["status"], "%.1f" % c.get("seconds", 0), c.get("ops", 0),
                     "%.0f" % c.get("ops_per_s", 0), len(c.get("findings", []))) for c in s["stress"]])
    L.append("")
    L += fmt_table("stressors, deterministic (fibers; policies random, pct, sticky in turn; "
                   "./mmfuzz stress MODE --deterministic)",
                   [("mode", "l"), ("status", "l"), ("seconds", "r"), ("runs", "r"), ("ops", "r"), ("ops/s", "r"),
                    ("switches", "r"), ("failed runs", "r"), ("findings", "r")],
                   [(c["name"], c["status"], "%.1f" % c.get("seconds", 0), c.get("runs", 0), c.get("ops", 0),
                     "%.0f" % c.get("ops_per_s", 0), c.get("switches", 0), c.get("failures", 0),
                     len(c.get("findings", []))) for c in s["deterministic"]])
    L.append("")
    if s["findings"]:
        L.append("findings: %d (commands from the repository root)" % len(s["findings"]))
        for i, f in enumerate(s["findings"], 1):
            L.append("  %d. %s: %s" % (i, f["component"], f["what"]))
            L.append("     reproducer: %s" % f["reproducer"])
            L.append("     replay:     %s" % f["command"])
            if f.get("replay"):
                L.append("     or exactly: %s" % f["replay"])
    else:
        L.append("findings: none")
    if s["errors"]:
        L.append("errors: %d (components that could not be built or run)" % len(s["errors"]))
        for e in s["errors"]:
            L.append("  %s: %s" % (e["component"], e["what"].replace("\n", "\n      ")))
    else:
        L.append("errors: none")
    why = {0: "clean", 1: "findings", 2: "errors", 130: "interrupted"}[s["exit_status"]]
    L.append("result: %s (exit %d); this summary: %s/summary.txt, summary.json" % (why, s["exit_status"], s["out"]))
    return "\n".join(L) + "\n"


def parse(argv):
    o = {"time": 300, "out": None, "seed": None, "build": True}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--no-build":
            o["build"] = False
            i += 1
        elif a in ("--time", "--out", "--seed") and i + 1 < len(argv):
            o[a[2:]] = argv[i + 1]
            i += 2
        else:
            print("mmfuzz run: campaign.py: bad argument '%s' (use ./mmfuzz run)" % a, file=sys.stderr)
            sys.exit(2)
    try:
        o["time"] = int(o["time"])
        # decimal (leading zeros allowed, as the run verb allows them) or 0x hex
        s = o["seed"]
        o["seed"] = None if s is None else int(s, 16) if s.lower().startswith("0x") else int(s, 10)
    except ValueError:
        print("mmfuzz run: campaign.py: --time and --seed take integers", file=sys.stderr)
        sys.exit(2)
    if o["seed"] is not None and not 0 <= o["seed"] < 1 << 64:
        print("mmfuzz run: --seed must fit in 64 bits", file=sys.stderr)
        sys.exit(2)
    if o["time"] < 1:
        print("mmfuzz run: campaign.py: --time must be at least 1", file=sys.stderr)
        sys.exit(2)
    return o


def make_run_dir(opt, stamp):
    base = os.path.abspath(opt) if opt else os.path.join(ROOT, "out", "run", stamp)
    os.makedirs(os.path.dirname(base), exist_ok=True)
    d, k = base, 0
    while True:
        try:
            os.mkdir(d)     # atomic: two runs started in the same second get different directories
            return d
        except FileExistsError:
            k += 1
            d = "%s-%d" % (base, k)


def main():
    o = parse(sys.argv[1:])
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    wall0 = time.monotonic()
    now = datetime.datetime.now(datetime.timezone.utc)
    try:
        run_dir = make_run_dir(o["out"], now.strftime("%Y%m%dT%H%M%SZ"))
    except OSError as e:
        print("mmfuzz run: cannot create the output directory: %s" % e, file=sys.stderr)
        return 2
    for sub in ("build", "fuzz", "stress"):
        os.makedirs(os.path.join(run_dir, sub))
    seed = o["seed"] if o["seed"] is not None else random.SystemRandom().randrange(1, 1 << 32)
    names = targets()
    camp = Campaign(o["time"], run_dir, seed)
    comps = plan(o["time"], names)
    fuzz_s = camp.groups["fuzz"]["budget"]
    say("output in %s" % rel(run_dir))
    say("budget %ds: fuzz %gs (%d targets, %.1fs each), stressors %gs (%d modes: %.1fs free-running + %.1fs "
        "deterministic each); seed %d" % (o["time"], fuzz_s, len(names), comps[0]["planned_s"], camp.groups["stressors"]["budget"],
                                           len(MODES), comps[-1]["planned_s"], comps[-1]["planned_s"], seed))

    build = {"done": o["build"], "seconds": 0.0, "steps": []}
    camp_t0 = None
    broken = {}
    exit_status = 0
    try:
        if o["build"]:
            say("building (not counted in the budget)")
            build["seconds"], build["steps"], broken = build_all(run_dir, names)
            say("build done in %.0fs%s" % (build["seconds"], "" if not broken else ", with failures"))
        if not STOP["why"]:
            check_built(names, broken)
        camp_t0 = time.monotonic()
        for c in comps:
            key = "fuzz:" + c["name"] if c["kind"] == "fuzz" else c["kind"]
            if key in broken and not STOP["why"]:
                c["status"] = "NOT BUILT"
                camp.error(c, broken[key])
        run = [c for c in comps if "status" not in c]
        overhead = {}       # kind -> seconds each component of it ran past its share so far
        for i, c in enumerate(run):
            if STOP["why"]:
                c["status"] = "not run"
                continue
            # This component's share of what is left of its half, among the components still to run.
            g = group(c)
            if camp.groups[g]["start"] is None:
                camp.groups[g]["start"] = time.monotonic()
            rest = [x for x in run[i:] if group(x) == g]
            secs = share(camp.group_left(g), c, rest, overhead)
            print("%s %s for %.1fs (campaign %ds left)" % (c["tag"], {"fuzz": "libFuzzer", "stress": "free-running",
                  "det": "deterministic"}[c["kind"]], secs, max(0, round(camp.left()))), flush=True)
            t_comp = time.monotonic()
            try:
                {"fuzz": run_fuzz, "stress": run_stress, "det": run_det}[c["kind"]](camp, c, secs)
            except Exception:       # a bug here must not lose the rest of the campaign
                camp.error(c, "mmfuzz run itself failed:\n" + traceback.format_exc())
            if not STOP["why"]:
                overhead.setdefault(c["kind"], []).append(max(0.0, time.monotonic() - t_comp - secs))
            print("%s %s" % (c["tag"], done_line(c)), flush=True)
    finally:
        campaign_s = time.monotonic() - camp_t0 if camp_t0 else 0.0
        for c in comps:
            c.setdefault("status", "not run")
        if camp.findings:
            exit_status = 1
        elif camp.errors:
            exit_status = 2
        elif STOP["why"]:
            exit_status = 130
        s = {
            "version": 1,
            "out": rel(run_dir),
            "started_utc": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "budget_s": o["time"],
            "split": {"fuzz_s": fuzz_s, "stress_s": camp.groups["stressors"]["budget"], "fuzz_share": FUZZ_SHARE},
            "seed": seed,
            "build": build,
            "campaign_s": round(campaign_s, 1),
            "wall_s": round(time.monotonic() - wall0, 1),
            "interrupted": STOP["why"],
            "fuzz": [strip(c) for c in comps if c["kind"] == "fuzz"],
            "stress": [strip(c) for c in comps if c["kind"] == "stress"],
            "deterministic": [strip(c) for c in comps if c["kind"] == "det"],
            "findings": camp.findings,
            "errors": camp.errors,
            "exit_status": exit_status,
        }
        with open(os.path.join(run_dir, "summary.json"), "w") as f:
            json.dump(s, f, indent=2)
            f.write("\n")
        text = summary_text(s)
        with open(os.path.join(run_dir, "summary.txt"), "w") as f:
            f.write(text)
        sys.stdout.write(text)
        sys.stdout.flush()
    return exit_status


def share(left, c, rest, overhead):
    """Component C's seconds (shares.share()): its weight's part of LEFT, what is left of its half,
    among REST (the components of that half still to run, C first), less what those are expected to
    run past their shares - each kind's mean so far in OVERHEAD, OVERRUN_PRIOR before the first has
    run (the fuzz verb's start, libFuzzer's pass over the seeds and its coverage pass after libFuzzer
    stops: 2-5 s a target on a busy machine)."""
    return shares.share(left, c["weight"], [(x["weight"], shares.expected_overrun(
        overhead.get(x["kind"]), OVERRUN_PRIOR.get(x["kind"], 0.0))) for x in rest], MIN_SLICE[c["kind"]])


def group(c):
    return "fuzz" if c["kind"] == "fuzz" else "stressors"


def strip(c):
    d = {k: v for k, v in c.items() if k not in ("weight", "tag", "kind", "label")}
    d.setdefault("findings", [])
    return d


def done_line(c):
    st = c.get("status", "?")
    if c["kind"] == "fuzz":
        what = "execs %s exec/s %.0f cov %s new corpus %s" % (c.get("execs", 0), c.get("exec_per_s", 0),
                                                              c.get("coverage", 0), c.get("corpus", 0))
    elif c["kind"] == "stress":
        what = "ops %s ops/s %.0f" % (c.get("ops", 0), c.get("ops_per_s", 0))
    else:
        what = "runs %s ops %s failed runs %s" % (c.get("runs", 0), c.get("ops", 0), c.get("failures", 0))
    return "%s in %.1fs: %s, findings %d" % (st, c.get("seconds", 0), what, len(c.get("findings", [])))


if __name__ == "__main__":
    sys.exit(main())

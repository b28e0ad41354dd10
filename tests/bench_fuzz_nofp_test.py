#!/usr/bin/env python3
"""Tests of bench/fuzz_nofp.py, the no-false-positives campaign runner (ctest
bench_fuzz_nofp, tests/bench_fuzz_nofp.cmake).  A libFuzzer build is too slow
for ctest, so the runner drives a stand-in: a script that takes libFuzzer's
flags and prints what libFuzzer prints (status lines, final stats, a checker
violation with a crash-* artifact, the interrupt exit), and logs the flags it
was given.  What is tested is the runner: chunks add up to the goal and
stop there, totals continue across invocations only for the same build and
checker settings, per target only on the same fuzz binary (another tree with
a byte-identical binary continues that target; a changed binary restarts
only its target, the old entry kept in "superseded"), findings are kept, reported and fail the run without ending the
target, interrupts and the budget keep what was counted, and a dirty tree,
a changed binary, an unreadable JSON, a second run on a busy work dir and
bad arguments are refused.  --import: the totals of result files run
elsewhere add up, each file once, only for the same build and checker settings
and, per target, the same binary (the same tree for entries without one),
with their findings tagged, under the work dir's lock.  Timeouts: a chunk's
timeout-* file (any slot) is replayed alone with the chunk's options, nice
and MMFUZZ_* settings; a fast clean replay makes it a "starved" timeout -
kept, not counted (goal, exit status, stop rule) -, one that times out again
a finding; --recheck-timeouts does it for a JSON's unrechecked timeouts
(another binary refused, a missing file a finding).
Seconds, no build.  usage: python3 tests/bench_fuzz_nofp_test.py [-v]
"""
import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.environ.get("MMFUZZ_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "bench", "fuzz_nofp.py")
spec = importlib.util.spec_from_file_location("fuzz_nofp", SCRIPT)
nofp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(nofp)

# The stand-in for a libFuzzer binary.  STUB_MODE: "ok" (default) runs
# min(-runs, 1000) inputs at once; "crash2" crashes (a checker violation, a
# crash-* file, exit 1) in its second run in this work dir; "crash" in every
# run, writing the same crash file each time (as libFuzzer does for the same
# input); "sleep" runs 200 inputs a second until -max_total_time or SIGINT
# (then, as libFuzzer: "run interrupted", the final stats, exit 72);
# "crash-s1" crashes (writing <prefix>crash-one) in the first run whose
# -artifact_prefix ends in /s1- (slot 1), every other run as "sleep";
# "slow-s1" is "sleep" at 200 inputs a second, 50 in slot 1.  Each
# run logs, besides its flags, its pid, start time and the pids of the runs
# going on in its work dir then ("live": each holds a live-<pid> file there
# while it runs), and its nice.  "timeout" times out in every run, as
# libFuzzer does (a <prefix>timeout-<run number> file, exit 70).
# Given a file instead of a corpus dir, the stand-in replays it (a recheck),
# as STUB_REPLAY says: "fast" (default) uses 0.2 s of CPU and exits 0;
# "hang" times out again (writes <prefix>timeout-replay, exits 70);
# "sleep" never ends.  Each replay logs its flags, file, nice, cwd and
# MMFUZZ_* environment to replays.log in the target's work dir (the file's
# dir's parent).
STUB = r'''#!/usr/bin/env python3
import json, os, signal, sys, time
flags = dict(a[1:].split("=", 1) for a in sys.argv[1:] if a.startswith("-"))
dirs = [a for a in sys.argv[1:] if not a.startswith("-")]
if dirs and os.path.isfile(dirs[0]):
    inp = dirs[0]
    with open(os.path.join(os.path.dirname(os.path.dirname(inp)), "replays.log"), "a") as f:
        f.write(json.dumps({"flags": flags, "file": inp, "nice": os.getpriority(os.PRIO_PROCESS, 0),
                            "cwd": os.getcwd(),
                            "mmfuzz": {k: v for k, v in os.environ.items() if k.startswith("MMFUZZ_")}}) + "\n")
    how = os.environ.get("STUB_REPLAY", "fast")
    if how == "fast":
        while time.process_time() < 0.2:
            pass
        print("Running: %s\nExecuted %s in 200 ms" % (inp, inp), flush=True)
        sys.exit(0)
    if how == "hang":
        with open(flags["artifact_prefix"] + "timeout-replay", "w") as f:
            f.write("input")
        print("ALARM: working on the last Unit for 25 seconds\nSUMMARY: libFuzzer: timeout", flush=True)
        sys.exit(70)
    while True:
        time.sleep(1)
start = time.time()
me = "live-%d" % os.getpid()
open(me, "w").close()
def bye(code):
    try:
        os.unlink(me)
    except OSError:
        pass
    sys.stdout.flush()
    os._exit(code)
live = sorted(int(x[5:]) for x in os.listdir(".") if x.startswith("live-") and x != me)
with open("argv.log", "a") as f:
    f.write(json.dumps({"flags": flags, "dirs": dirs, "corpus": sorted(os.listdir(dirs[0])), "pid": os.getpid(),
                        "start": start, "live": live, "nice": os.getpriority(os.PRIO_PROCESS, 0)}) + "\n")
runs, limit = int(flags["runs"]), int(flags["max_total_time"])
mode = os.environ.get("STUB_MODE", "ok")
n = sum(1 for _ in open("argv.log"))
prefix = flags["artifact_prefix"]
def stats(execs):
    print("#%d\tDONE   cov: 10 ft: 10 corp: 3/30b exec/s: 1 rss: 30Mb" % execs)
    print("stat::number_of_executed_units: %d" % execs)
    print("stat::peak_rss_mb: 30", flush=True)
rate = 50 if mode == "slow-s1" and prefix.endswith("/s1-") else 200
def interrupted(sig, frame):
    print("==%d== libFuzzer: run interrupted; exiting" % os.getpid())
    stats(min(runs, int(rate * (time.time() - start))))
    bye(72)
signal.signal(signal.SIGINT, interrupted)
if (mode == "crash" or (mode == "crash2" and n == 2) or
        (mode == "crash-s1" and prefix.endswith("/s1-") and not os.path.exists(prefix + "crash-one"))):
    art = prefix + {"crash": "crash-same", "crash2": "crash-%d" % n, "crash-s1": "crash-one"}[mode]
    with open(art, "w") as f:
        f.write("input")
    print("artifact_prefix='%s'; Test unit written to %s" % (prefix, art))
    print("==mmfuzz== VIOLATION B1 in target stub, at op [3] free (of 5)")
    print("==mmfuzz== B1: stand-in block on the wrong list")
    print("==42== ERROR: libFuzzer: deadly signal")
    stats(min(runs, 300))
    bye(1)
if mode == "timeout":
    art = prefix + "timeout-%d" % n
    with open(art, "w") as f:
        f.write("input")
    print("==%d== ERROR: libFuzzer: timeout after 25 seconds" % os.getpid())
    print("artifact_prefix='%s'; Test unit written to %s" % (prefix, art))
    print("SUMMARY: libFuzzer: timeout")
    stats(min(runs, 300))
    bye(70)
if mode in ("sleep", "crash-s1", "slow-s1"):
    while time.time() - start < limit and rate * (time.time() - start) < runs:
        time.sleep(0.05)
    stats(min(runs, int(rate * (time.time() - start))))
    bye(0)
stats(min(runs, 1000))
bye(0)
'''


def seeds(name):
    n = 0
    for d in (os.path.join(ROOT, "corpus", name), os.path.join(ROOT, "corpus", "regressions", name)):
        if os.path.isdir(d):
            n += sum(1 for f in os.listdir(d) if os.path.isfile(os.path.join(d, f)) and not f.startswith("."))
    return n


class Campaign(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fuzz_nofp-test-")
        self.bdir = os.path.join(self.tmp, "build")
        os.makedirs(os.path.join(self.bdir, "targets"))
        for t in nofp.all_targets():
            p = nofp.binary_path(self.bdir, t)
            with open(p, "w") as f:
                f.write(STUB)
            os.chmod(p, 0o755)
        self.work = os.path.join(self.tmp, "work")
        self.json = os.path.join(self.tmp, "nofp.json")
        self.stamp("tree-one")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def stamp(self, tree, dirty=(), build="ubsan", commit="c0ffee" * 6 + "abcd"):
        if os.path.exists(os.path.join(self.bdir, nofp.STAMP)):
            os.unlink(os.path.join(self.bdir, nofp.STAMP))
        nofp.write_stamp(self.bdir, build, {"tree": tree, "commit": commit, "dirty": list(dirty)},
                         nofp.all_targets())

    def change_binary(self, name):
        """fuzz_<name> is rebuilt into other bytes (its harness changed); returns its new sha256."""
        with open(nofp.binary_path(self.bdir, name), "a") as f:
            f.write("# %s's harness fixed\n" % name)
        return nofp.sha256(nofp.binary_path(self.bdir, name))

    def sha(self, name):
        return nofp.sha256(nofp.binary_path(self.bdir, name))

    def args(self, *extra, work=None, json=None):
        return [sys.executable, SCRIPT, "--no-build", "--build-dir", self.bdir, "--work", work or self.work,
                "--json", json or self.json, "--nice", "0"] + list(extra)

    def run_nofp(self, *extra, rc=0, env=None, work=None, json=None):
        # As ./mmfuzz runs it: MMFUZZ_ROOT set (the checkout, not a checker setting), no other MMFUZZ_*
        # of ours (./mmfuzz test runs this file with the front door's environment).
        base = {k: v for k, v in os.environ.items() if not k.startswith("MMFUZZ_")}
        base["MMFUZZ_ROOT"] = ROOT
        r = subprocess.run(self.args(*extra, work=work, json=json), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, env=dict(base, **(env or {})), timeout=60)
        self.assertEqual(r.returncode, rc, "exit status %d, want %d; output:\n%s" % (r.returncode, rc, r.stdout))
        return r.stdout

    def doc(self, path=None):
        with open(path or self.json) as f:
            return json.load(f)

    def target(self, name, path=None):
        return [e for e in self.doc(path)["targets"] if e["name"] == name][0]

    def elsewhere(self, label, *extra, rc=0, env=None):
        """A campaign in its own work dir and JSON (another machine's), with the same stamp: its JSON."""
        path = os.path.join(self.tmp, label + ".json")
        self.run_nofp(*extra, rc=rc, env=env, work=os.path.join(self.tmp, "work-" + label), json=path)
        return path

    def raw(self):
        with open(self.json, "rb") as f:
            return f.read()

    def argv_log(self, name):
        with open(os.path.join(self.work, name, "argv.log")) as f:
            return [json.loads(l) for l in f]

    def test_chunks_reach_the_goal_and_totals_continue(self):
        out = self.run_nofp("--targets", "buddy,slub", "--execs", "2500", "--chunk", "7")
        self.assertIn("starting fresh: no earlier results", out)
        self.assertRegex(out, r"\[buddy\] chunk 3: 2,500 / 2,500 execs")
        for t in ("buddy", "slub"):
            e = self.target(t)
            self.assertEqual((e["execs"], e["chunks"], e["findings"], e["goal_met"]), (2500, 3, [], True))
            runs = self.argv_log(t)
            # -runs is what is left of the goal; the target's .options and .dict go along.
            self.assertEqual([r["flags"]["runs"] for r in runs], ["2500", "1500", "500"])
            f = runs[0]["flags"]
            self.assertEqual((f["max_total_time"], f["print_final_stats"], f["timeout"], f["max_len"]),
                             ("7", "1", "25", "4096"))
            self.assertEqual(f["dict"], os.path.join(ROOT, "corpus", t + ".dict"))
            self.assertEqual(f["artifact_prefix"], os.path.join(self.work, t, "crashes") + "/")
            # The seeds, files only: never corpus/T/src/*.txt.
            self.assertEqual(runs[0]["dirs"], [os.path.join(self.work, t, "corpus")])
            self.assertEqual(len(runs[0]["corpus"]), seeds(t))
            self.assertFalse([c for c in runs[0]["corpus"] if c.endswith(".txt") or c == "src"])
        d = self.doc()
        self.assertEqual((d["tree"], d["build"], d["goal_execs"], d["bench"]), ("tree-one", "ubsan", 2500, "fuzz_nofp"))
        self.assertIn("goal met: 2 targets", out)

        # Same tree and build: the totals continue to the new goal.
        out = self.run_nofp("--targets", "buddy", "--execs", "4000", "--dry-run")
        self.assertRegex(out, r"buddy +2,500 of 4,000 executions, 0 findings, 1,500 left")
        out = self.run_nofp("--targets", "buddy", "--execs", "4000")
        self.assertIn("continuing the totals", out)
        self.assertEqual((self.target("buddy")["execs"], self.target("buddy")["chunks"]), (4000, 5))
        self.assertEqual(self.target("slub")["execs"], 2500)     # not selected: kept as it was

        # Another tree (the new semantics: per target by binary): buddy's binary
        # changed, so its count restarts, the old entry superseded, the old
        # file kept, the corpus reused; slub (not run) stays as it was.
        self.change_binary("buddy")
        self.stamp("tree-two")
        out = self.run_nofp("--targets", "buddy", "--execs", "1000")
        self.assertIn("the source differs", out)
        self.assertIn("buddy restarts from zero: fuzz_buddy changed (tree tree-one -> tree-two", out)
        self.assertEqual((self.target("buddy")["execs"], self.target("buddy")["chunks"]), (1000, 1))
        self.assertEqual([e["name"] for e in self.doc()["targets"]], ["buddy", "slub"])
        self.assertEqual(self.target("slub")["execs"], 2500)
        self.assertEqual([(o["name"], o["execs"]) for o in self.doc()["superseded"]], [("buddy", 4000)])
        kept = os.listdir(os.path.join(self.work, "previous"))
        self.assertEqual(len(kept), 1)
        with open(os.path.join(self.work, "previous", kept[0])) as f:
            self.assertEqual(json.load(f)["tree"], "tree-one")

        # Another build: fresh too.
        self.stamp("tree-two", build="asan")
        out = self.run_nofp("--targets", "buddy", "--execs", "1000", "--build", "asan")
        self.assertIn("starting fresh: the earlier results are the ubsan build's, this run is asan", out)

    def test_finding_is_kept_reported_and_fails_the_run(self):
        out = self.run_nofp("--targets", "buddy", "--execs", "2500", rc=1, env={"STUB_MODE": "crash2"})
        self.assertIn("FINDING in buddy", out)
        e = self.target("buddy")
        self.assertEqual(len(e["findings"]), 1)
        f = e["findings"][0]
        self.assertIn("VIOLATION B1 in target stub", f["summary"])
        self.assertIn("stand-in block on the wrong list", f["summary"])
        self.assertEqual(f["path"], os.path.join(self.work, "buddy", "crashes", "crash-2"))
        self.assertTrue(os.path.isfile(f["path"]) and os.path.isfile(f["log"]))
        # The target went on after the finding, to the goal: 1000 + 300 + 1000 + 200.
        self.assertEqual((e["execs"], e["chunks"], e["goal_met"]), (2500, 4, False))
        self.assertRegex(out, r"buddy +ubsan +2,500 +no +1 ")
        # A later run with no new finding still fails: the totals hold one.
        self.run_nofp("--targets", "buddy", "--execs", "3000", rc=1)

    def test_target_that_always_fails_is_stopped(self):
        out = self.run_nofp("--targets", "config", "--execs", "100000", rc=1, env={"STUB_MODE": "crash"})
        self.assertIn("config: stopped - %d chunks in a row" % nofp.STALL_LIMIT, out)
        e = self.target("config")
        self.assertEqual((e["chunks"], len(e["findings"])), (nofp.STALL_LIMIT, nofp.STALL_LIMIT))
        # The same input found again: each finding still names its file, and has its own log.
        crash = os.path.join(self.work, "config", "crashes", "crash-same")
        self.assertEqual([f["path"] for f in e["findings"]], [crash] * nofp.STALL_LIMIT)
        self.assertEqual(len(set(f["log"] for f in e["findings"])), nofp.STALL_LIMIT)

    def test_interrupt_saves_the_running_chunk_and_the_work_dir_is_locked(self):
        p = subprocess.Popen(self.args("--targets", "sched", "--execs", "1000000", "--chunk", "60"),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=dict(os.environ, STUB_MODE="sleep"))
        log = os.path.join(self.work, "sched", "argv.log")
        end = time.time() + 20
        while not os.path.exists(log) and time.time() < end:
            time.sleep(0.05)
        # While it runs: a second run on its work dir is refused, a dry run reads its totals.
        out = self.run_nofp("--targets", "sched", "--execs", "10", rc=2)
        self.assertIn("another fuzz_nofp run is using %s" % self.work, out)
        out = self.run_nofp("--targets", "sched", "--execs", "1000000", "--dry-run")
        self.assertRegex(out, r"sched +0 of 1,000,000 executions")
        time.sleep(0.5)
        p.send_signal(signal.SIGTERM)
        out = p.communicate(timeout=40)[0]
        self.assertEqual(p.returncode, 130, out)
        self.assertIn("SIGTERM: stopping the running chunk", out)
        e = self.target("sched")
        self.assertEqual((e["chunks"], e["findings"]), (1, []))
        self.assertGreater(e["execs"], 50)       # the stand-in's 200/s for about a second
        self.assertLess(e["execs"], 10000)

    def test_budget_stops_cleanly(self):
        t0 = time.time()
        out = self.run_nofp("--targets", "pcp,bulk", "--execs", "1000000", "--chunk", "2", "--budget", "3",
                            env={"STUB_MODE": "sleep"})
        self.assertLess(time.time() - t0, 15)
        self.assertIn("budget spent", out)
        self.assertIn("goal not met yet: 0 of 2", out)
        total = self.target("pcp")["execs"] + self.target("bulk")["execs"]
        self.assertGreater(total, 200)
        self.assertLess(total, 1000000)
        # What is left, in executions and CPU time at the rates so far.
        self.assertRegex(out, r"left: %s executions, about [0-9]+\.[0-9] CPU-hours at each target's exec/cpu-s"
                         r"( \(and (pcp|bulk), not run yet\))?\n" % "{:,}".format(2000000 - total))

    # ---------------------------------------------------------------- several chunks of one target (slots)

    def chunk_logs_execs(self, name):
        """The executions each slot's last chunk log reports: {log file name: execs}."""
        got = {}
        d = os.path.join(self.work, name)
        for f in sorted(os.listdir(d)):
            if f.startswith("chunk") and f.endswith(".log"):
                with open(os.path.join(d, f)) as fh:
                    got[f] = int(nofp.EXECS_RE.findall(fh.read())[-1])
        return got

    def test_slots_per_target(self):
        for jobs, targets, want in ((1, 8, 1), (3, 8, 1), (8, 8, 1), (9, 8, 2), (16, 8, 2), (4, 2, 2), (2, 3, 1),
                                    (5, 1, 5), (2, 0, 2)):
            self.assertEqual(nofp.slots_per_target(jobs, targets), want, (jobs, targets))

    def test_jobs_above_the_targets_run_two_chunks_of_each_at_once(self):
        out = self.run_nofp("--targets", "buddy,slub", "--jobs", "4", "--execs", "800", "--chunk", "30",
                            env={"STUB_MODE": "sleep"})
        self.assertIn("4 jobs", out)
        self.assertRegex(out, r"\[buddy/s1\] chunk [12]: ")
        for t in ("buddy", "slub"):
            crashes = os.path.join(self.work, t, "crashes")
            runs = self.argv_log(t)
            self.assertEqual(len(runs), 2, runs)
            # Slot 0 as without slots, slot 1 with its own artifact prefix; one corpus.
            self.assertEqual(sorted(r["flags"]["artifact_prefix"] for r in runs), [crashes + "/", crashes + "/s1-"])
            self.assertEqual(runs[0]["dirs"], [os.path.join(self.work, t, "corpus")])
            self.assertEqual(runs[1]["dirs"], runs[0]["dirs"])
            # Started together, each with half of what was left.
            self.assertEqual([r["flags"]["runs"] for r in runs], ["400", "400"])
            # At the same time: one of the two saw the other running.
            a, b = runs
            self.assertTrue(b["pid"] in a["live"] or a["pid"] in b["live"], runs)
            # Each slot has its own log; the target's total is their sum.
            logs = self.chunk_logs_execs(t)
            self.assertEqual(sorted(logs), ["chunk-s1.log", "chunk.log"])
            e = self.target(t)
            self.assertEqual((e["execs"], e["chunks"], e["findings"], e["goal_met"]),
                             (sum(logs.values()), 2, [], True))
            self.assertEqual(e["execs"], 800)
        self.assertIn("goal met: 2 targets", out)

    def test_no_chunk_for_what_a_running_chunk_will_run(self):
        # Slot 0 ends its 400 runs in 2 s, slot 1 in 8 s: the 400 left of the
        # goal are slot 1's -runs, so no third chunk starts meanwhile (one
        # did, with -runs=200, before the running chunks' -runs counted).
        out = self.run_nofp("--targets", "buddy", "--jobs", "2", "--execs", "800", "--chunk", "30",
                            env={"STUB_MODE": "slow-s1"})
        self.assertIn("goal met: 1 target", out)
        runs = self.argv_log("buddy")
        self.assertEqual([r["flags"]["runs"] for r in runs], ["400", "400"], runs)
        self.assertEqual(self.target("buddy")["execs"], 800)

    def test_a_finding_in_slot_1_is_recorded_once_for_slot_1(self):
        out = self.run_nofp("--targets", "buddy", "--jobs", "2", "--execs", "600", "--chunk", "30", rc=1,
                            env={"STUB_MODE": "crash-s1"})
        crashes = os.path.join(self.work, "buddy", "crashes")
        e = self.target("buddy")
        self.assertEqual(len(e["findings"]), 1, e["findings"])
        f = e["findings"][0]
        self.assertEqual((f["path"], f["slot"], f["exit"]), (os.path.join(crashes, "s1-crash-one"), 1, 1))
        self.assertIn("VIOLATION B1 in target stub", f["summary"])
        self.assertTrue(os.path.basename(f["log"]).startswith("s1-crash-one-chunk"), f["log"])
        with open(f["log"]) as fh:
            self.assertIn("Test unit written to %s/s1-crash-one" % crashes, fh.read())
        self.assertEqual(out.count("FINDING in buddy"), 1, out)
        self.assertRegex(out, r"FINDING in buddy \(ubsan build, chunk \d+, slot 1\): %s" % f["path"])
        self.assertEqual(sorted(x for x in os.listdir(crashes) if not x.endswith(".log")), ["s1-crash-one"])
        # Slot 0's first chunk ran alongside and ended after the s1- file was
        # written, and found nothing of its own.
        runs = self.argv_log("buddy")
        slot0 = [r for r in runs if r["flags"]["artifact_prefix"] == crashes + "/"]
        slot1 = [r for r in runs if r["flags"]["artifact_prefix"] == crashes + "/s1-"]
        self.assertTrue(slot0 and slot1, runs)
        self.assertEqual(len(slot0) + len(slot1), len(runs))
        self.assertEqual(e["chunks"], len(runs))
        self.assertGreaterEqual(e["execs"], 600)
        self.assertTrue(os.path.isfile(os.path.join(self.work, "buddy", "chunk.log")))
        self.assertTrue(os.path.isfile(os.path.join(self.work, "buddy", "chunk-s1.log")))

    def test_jobs_up_to_the_targets_run_one_chunk_per_target(self):
        self.run_nofp("--targets", "buddy", "--execs", "200")      # buddy ahead: it goes last
        out = self.run_nofp("--targets", "buddy,slub,pcp", "--jobs", "2", "--execs", "400", "--chunk", "30",
                            env={"STUB_MODE": "sleep"})
        self.assertIn("goal met: 3 targets", out)
        runs = {"buddy": self.argv_log("buddy")[1:], "slub": self.argv_log("slub"), "pcp": self.argv_log("pcp")}
        for t in ("slub", "pcp"):
            # Three targets short of the goal on two jobs: one chunk each, in
            # slot 0, with all that was left.
            self.assertEqual(len(runs[t]), 1, (t, runs[t]))
            r = runs[t][0]
            self.assertEqual((r["flags"]["artifact_prefix"], r["flags"]["runs"], r["live"]),
                             (os.path.join(self.work, t, "crashes") + "/", "400", []))
            self.assertFalse(os.path.exists(os.path.join(self.work, t, "chunk-s1.log")))
        # Fewest executions first: slub and pcp, then buddy in the first job
        # free - its chunks (one, or two when slub and pcp ended together and
        # left it both jobs) with the 200 it lacked between them.
        for r in runs["buddy"]:
            self.assertGreater(r["start"], runs["slub"][0]["start"])
            self.assertGreater(r["start"], runs["pcp"][0]["start"])
        self.assertEqual(sum(int(r["flags"]["runs"]) for r in runs["buddy"]), 200, runs["buddy"])
        self.assertEqual([self.target(t)["execs"] for t in ("buddy", "slub", "pcp")], [400, 400, 400])

    def test_the_last_target_short_of_the_goal_gets_every_job(self):
        # slub has met the goal, buddy has not: --jobs 2 on two targets was
        # one chunk per target, the second job idle for the rest of the
        # campaign; now buddy, alone, runs two chunks at once.
        self.run_nofp("--targets", "slub", "--execs", "1000")
        self.run_nofp("--targets", "buddy", "--execs", "200", "--chunk", "30", env={"STUB_MODE": "sleep"})
        out = self.run_nofp("--targets", "buddy,slub", "--jobs", "2", "--execs", "1000", "--chunk", "30",
                            env={"STUB_MODE": "sleep"})
        self.assertIn("goal met: 2 targets", out)
        runs = self.argv_log("buddy")[1:]
        crashes = os.path.join(self.work, "buddy", "crashes")
        self.assertEqual(sorted(r["flags"]["artifact_prefix"] for r in runs), [crashes + "/", crashes + "/s1-"])
        self.assertEqual([r["flags"]["runs"] for r in runs], ["400", "400"])
        a, b = runs
        self.assertTrue(b["pid"] in a["live"] or a["pid"] in b["live"], runs)
        self.assertEqual(len(self.argv_log("slub")), 1)                 # met: not run again
        self.assertEqual(self.target("buddy")["execs"], 1000)

    def test_a_chunk_runs_at_most_a_margin_over_the_targets_rate(self):
        # buddy ran 200 inputs at 200/s: with 2 s chunks, a chunk's -runs is
        # at most RUNS_MARGIN * 2 s * its rate (a little under 200/s, its wall
        # time counting the start), not the 99,800 left - which would have
        # kept a second slot of buddy idle.
        self.run_nofp("--targets", "buddy", "--execs", "200", "--chunk", "30", env={"STUB_MODE": "sleep"})
        e = self.target("buddy")
        self.run_nofp("--targets", "buddy", "--execs", "100000", "--chunk", "2", "--budget", "3",
                      env={"STUB_MODE": "sleep"})
        runs = self.argv_log("buddy")[1:]
        self.assertTrue(runs)
        cap = int(nofp.RUNS_MARGIN * 2 * e["execs"] / e["wall_s"])
        self.assertEqual(runs[0]["flags"]["runs"], str(cap), runs)
        self.assertLessEqual(cap, nofp.RUNS_MARGIN * 2 * 200)
        self.assertGreater(cap, 200)
        self.assertEqual(nofp.chunk_runs({"execs": 0, "wall_s": 0.0}, 5000, 2, 300), 2500)     # no rate yet
        self.assertEqual(nofp.chunk_runs({"execs": 1000, "wall_s": 10.0}, 5000, 1, 2), 600)
        self.assertEqual(nofp.chunk_runs({"execs": 1000, "wall_s": 10.0}, 500, 2, 300), 250)

    def test_interrupt_counts_every_slot_of_a_target(self):
        p = subprocess.Popen(self.args("--targets", "sched", "--jobs", "2", "--execs", "1000000", "--chunk", "60"),
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=dict(os.environ, STUB_MODE="sleep"))
        log = os.path.join(self.work, "sched", "argv.log")
        end = time.time() + 20
        while time.time() < end:
            if os.path.exists(log):
                with open(log) as f:
                    if sum(1 for l in f if l.endswith("\n")) >= 2:
                        break
            time.sleep(0.05)
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        out = p.communicate(timeout=40)[0]
        self.assertEqual(p.returncode, 130, out)
        self.assertIn("SIGINT: stopping the running chunks, counting what they ran", out)
        crashes = os.path.join(self.work, "sched", "crashes")
        runs = self.argv_log("sched")
        self.assertEqual(sorted(r["flags"]["artifact_prefix"] for r in runs), [crashes + "/", crashes + "/s1-"])
        self.assertEqual([r["flags"]["runs"] for r in runs], ["500000", "500000"])
        logs = self.chunk_logs_execs("sched")
        self.assertEqual(sorted(logs), ["chunk-s1.log", "chunk.log"])
        e = self.target("sched")
        self.assertEqual((e["chunks"], e["findings"], e["execs"]), (2, [], sum(logs.values())))
        self.assertTrue(all(x > 50 for x in logs.values()), logs)   # the stand-in's 200/s, both slots

    def test_refusals(self):
        # A dirty tree: refused unless --allow-dirty.
        self.stamp("tree-one+dirty-1234", dirty=["allocator/page/buddy.c"])
        out = self.run_nofp("--targets", "buddy", "--execs", "10", rc=2)
        self.assertIn("uncommitted changes in the fuzzed source (allocator/page/buddy.c)", out)
        self.assertFalse(os.path.exists(self.json))
        self.run_nofp("--targets", "buddy", "--execs", "10", "--allow-dirty")
        self.assertEqual(self.doc()["dirty"], ["allocator/page/buddy.c"])
        # A binary that is not the one built: not counted.
        self.stamp("tree-one")
        with open(nofp.binary_path(self.bdir, "kmalloc"), "a") as f:
            f.write("# rebuilt by someone else\n")
        out = self.run_nofp("--targets", "kmalloc", "--execs", "10", rc=1)
        self.assertIn("changed since fuzz_nofp.py built it", out)
        os.unlink(os.path.join(self.bdir, nofp.STAMP))
        out = self.run_nofp("--targets", "buddy", "--execs", "10", rc=1)
        self.assertIn("holds no ubsan build of fuzz_nofp.py's", out)
        # A JSON that is not ours: refused, unless --fresh.
        self.stamp("tree-one")
        with open(self.json, "w") as f:
            f.write("{not json")
        out = self.run_nofp("--targets", "buddy", "--execs", "10", rc=2)
        self.assertIn("cannot read %s" % self.json, out)
        self.run_nofp("--targets", "buddy", "--execs", "10", "--fresh")
        self.assertEqual(self.target("buddy")["execs"], 10)

    def test_bad_arguments(self):
        for args, msg in ((["--execs", "0"], "--execs: must be >= 1"),
                          (["--targets", "buddy,nosuch"], "unknown target: nosuch"),
                          (["--build", "msan"], "invalid choice: 'msan'"),
                          (["--nice", "20"], "--nice: must be between 0 and 19"),
                          (["--jobs", "two"], "--jobs: needs a number"),
                          (["--chunk", "0"], "--chunk: must be >= 1"),
                          (["--budget", "0.5"], "--budget: must be >= 1"),
                          (["--json", os.path.join(self.tmp, "no", "such", "dir.json")], "--json: no directory"),
                          (["--frobnicate"], "unrecognized arguments: --frobnicate")):
            r = subprocess.run([sys.executable, SCRIPT] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=30)
            self.assertEqual(r.returncode, 2, "%s: %s" % (args, r.stdout))
            self.assertIn(msg, r.stdout, args)
            self.assertIn("usage: bench/fuzz_nofp.py", r.stdout)

    def test_import_adds_the_totals(self):
        a = self.elsewhere("a", "--targets", "buddy,slub", "--execs", "2500", "--chunk", "7")
        b = self.elsewhere("b", "--targets", "buddy,pcp", "--execs", "1500")
        self.run_nofp("--targets", "buddy", "--execs", "1000")
        before = {t: self.target(t) for t in ("buddy",)}
        da, db = self.doc(a), self.doc(b)
        out = self.run_nofp("--import", a, "--import", b)
        self.assertIn("imported 2 files: +8,000 executions", out)
        d = self.doc()
        self.assertEqual(d["goal_execs"], 1000)            # the JSON's goal stays
        self.assertEqual([e["name"] for e in d["targets"]], ["buddy", "slub", "pcp"])

        def tgt(doc, n):
            return [e for e in doc["targets"] if e["name"] == n]
        for n in ("buddy", "slub", "pcp"):
            parts = ([before[n]] if n in before else []) + tgt(da, n) + tgt(db, n)
            e = self.target(n)
            self.assertEqual(e["execs"], sum(p["execs"] for p in parts), n)
            self.assertEqual(e["chunks"], sum(p["chunks"] for p in parts), n)
            cpu = wall = 0.0
            for p in parts:
                cpu += p["cpu_s"]
                wall += p["wall_s"]
            self.assertEqual((e["cpu_s"], e["wall_s"]), (round(cpu, 2), round(wall, 2)), n)
            self.assertEqual(e["findings"], [])
        self.assertEqual((self.target("buddy")["execs"], self.target("slub")["execs"], self.target("pcp")["execs"]),
                         (5000, 2500, 1500))
        self.assertEqual((self.target("buddy")["chunks"], self.target("buddy")["goal_met"]), (1 + 3 + 2, True))
        self.assertRegex(out, r"pcp +ubsan +1,500 +yes +0 ")
        imp = d["imports"]
        self.assertEqual([i["file"] for i in imp], ["a.json", "b.json"])
        with open(a, "rb") as f:
            self.assertEqual(imp[0]["sha256"], hashlib.sha256(f.read()).hexdigest())
        self.assertEqual(imp[0]["execs"], {"buddy": 2500, "slub": 2500})
        self.assertEqual(imp[1]["execs"], {"buddy": 1500, "pcp": 1500})
        self.assertEqual((imp[1]["machine"], imp[1]["started"], imp[1]["jobs"], imp[1]["findings"]),
                         (db["machine"], db["started"], 1, 0))
        self.assertEqual(imp[0]["cpu_s"], round(sum(e["cpu_s"] for e in da["targets"]), 2))
        # A campaign continuing the totals keeps the record of what was imported.
        out = self.run_nofp("--targets", "buddy", "--execs", "6000")
        self.assertIn("continuing the totals", out)
        self.assertEqual(self.target("buddy")["execs"], 6000)
        self.assertEqual([i["file"] for i in self.doc()["imports"]], ["a.json", "b.json"])
        out = self.run_nofp("--import", a, rc=2)
        self.assertIn("was imported into", out)

    def test_import_of_the_same_file_twice_is_refused(self):
        a = self.elsewhere("a", "--targets", "buddy", "--execs", "700")
        b = self.elsewhere("b", "--targets", "buddy", "--execs", "300")
        self.run_nofp("--targets", "buddy", "--execs", "1000")
        self.run_nofp("--import", a)
        self.assertEqual(self.target("buddy")["execs"], 1700)
        raw = self.raw()
        out = self.run_nofp("--import", a, rc=2)
        self.assertIn("this file was imported into %s before" % self.json, out)
        self.assertEqual(self.raw(), raw)
        # The same content under another name, and all or nothing: b is not merged either.
        copy = os.path.join(self.tmp, "copy-of-a.json")
        shutil.copy(a, copy)
        out = self.run_nofp("--import", b, "--import", copy, rc=2)
        self.assertIn("copy-of-a.json: this file was imported", out)
        self.assertEqual(self.raw(), raw)
        out = self.run_nofp("--import", b, "--import", b, rc=2)
        self.assertIn("this file was imported", out)
        self.assertEqual(self.raw(), raw)
        # Not a result file: refused, nothing changed.
        junk = os.path.join(self.tmp, "junk.json")
        with open(junk, "w") as f:
            json.dump({"bench": "other", "targets": []}, f)
        out = self.run_nofp("--import", b, "--import", junk, rc=2)
        self.assertIn("%s is not a fuzz_nofp result" % junk, out)
        out = self.run_nofp("--import", os.path.join(self.tmp, "nosuch.json"), rc=2)
        self.assertIn("cannot read", out)
        self.assertEqual(self.raw(), raw)
        self.run_nofp("--import", b)
        self.assertEqual(self.target("buddy")["execs"], 2000)

    def test_import_of_another_tree_is_refused(self):
        # Adapted to per-target identity: another tree is refused when the
        # imported entries record no binary (a file from before binaries
        # were recorded); with binaries, the binaries decide (tests below).
        self.run_nofp("--targets", "buddy", "--execs", "1000")
        raw = self.raw()
        self.stamp("tree-two")
        b = self.elsewhere("b", "--targets", "buddy", "--execs", "500")
        d = self.doc(b)
        for e in d["targets"]:
            del e["binary"], e["since"]
        del d["trees"]
        with open(b, "w") as f:
            json.dump(d, f)
        out = self.run_nofp("--import", b, rc=2)
        self.assertIn('its tree differs: %s has tree "tree-one", b.json has "tree-two"' % self.json, out)
        self.assertIn("fuzz_buddy entry records no binary", out)
        self.assertEqual(self.raw(), raw)
        # The same file of the same tree: its binary-less entries are added.
        self.stamp("tree-one")
        d["tree"] = "tree-one"
        with open(b, "w") as f:
            json.dump(d, f)
        self.run_nofp("--import", b)
        self.assertEqual(self.target("buddy")["execs"], 1500)
        raw = self.raw()
        self.stamp("tree-one", build="asan")
        c = self.elsewhere("c", "--targets", "buddy", "--execs", "500", "--build", "asan")
        out = self.run_nofp("--import", c, rc=2)
        self.assertIn('its build differs: %s has build "ubsan", c.json has "asan"' % self.json, out)
        self.assertEqual(self.raw(), raw)

    def test_import_of_another_checker_env_is_refused(self):
        self.run_nofp("--targets", "buddy", "--execs", "1000")
        raw = self.raw()
        b = self.elsewhere("b", "--targets", "buddy", "--execs", "500", env={"MMFUZZ_CHECK_LEVEL": "1"})
        self.assertEqual(self.doc(b)["checker_env"].get("MMFUZZ_CHECK_LEVEL"), "1")
        out = self.run_nofp("--import", b, rc=2)
        self.assertIn("its checker_env differs", out)
        self.assertIn('"MMFUZZ_CHECK_LEVEL": "1"', out)
        self.assertEqual(self.raw(), raw)

    def test_import_into_a_locked_work_dir_is_refused(self):
        self.run_nofp("--targets", "buddy", "--execs", "1000")
        b = self.elsewhere("b", "--targets", "buddy", "--execs", "500")
        raw = self.raw()
        with open(os.path.join(self.work, ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            out = self.run_nofp("--import", b, rc=2)
            self.assertIn("another fuzz_nofp run is using %s" % self.work, out)
            self.assertEqual(self.raw(), raw)
        self.run_nofp("--import", b)
        self.assertEqual(self.target("buddy")["execs"], 1500)

    def test_imported_findings_are_kept_and_fail_the_run(self):
        self.run_nofp("--targets", "buddy", "--execs", "1000")
        b = self.elsewhere("b", "--targets", "buddy", "--execs", "2500", rc=1, env={"STUB_MODE": "crash2"})
        theirs = self.target("buddy", b)["findings"]
        self.assertEqual(len(theirs), 1)
        out = self.run_nofp("--import", b, rc=1)
        self.assertIn("1 imported finding", out)
        self.assertRegex(out, r"buddy +ubsan +3,500 +no +1 ")
        e = self.target("buddy")
        self.assertEqual(e["findings"], [dict(theirs[0], imported_from="b.json", machine=self.doc(b)["machine"])])
        self.assertIn("VIOLATION B1 in target stub", e["findings"][0]["summary"])
        self.assertEqual((e["execs"], e["goal_met"]), (3500, False))
        self.assertEqual(self.doc()["imports"][0]["findings"], 1)
        # The totals hold it: a later campaign fails too.
        self.run_nofp("--targets", "buddy", "--execs", "3600", rc=1)

    def test_import_into_a_missing_json_creates_it(self):
        b = self.elsewhere("b", "--targets", "slub,pcp", "--execs", "1200")
        db = self.doc(b)
        self.assertFalse(os.path.exists(self.json))
        out = self.run_nofp("--import", b)
        self.assertIn("does not exist: creating it", out)
        self.assertIn("imported 1 file: +2,400 executions", out)
        d = self.doc()
        for k in ("bench", "commit", "tree", "dirty", "build", "build_desc", "engine", "checker_env", "goal_execs",
                  "started"):
            self.assertEqual(d[k], db[k], k)
        for n in ("slub", "pcp"):
            mine, theirs = self.target(n), self.target(n, b)
            for k in ("execs", "cpu_s", "wall_s", "chunks", "findings", "goal_met"):
                self.assertEqual(mine[k], theirs[k], (n, k))
        self.assertEqual([i["file"] for i in d["imports"]], ["b.json"])
        # A campaign of the same tree continues it.
        out = self.run_nofp("--targets", "slub", "--execs", "2000")
        self.assertIn("continuing the totals", out)
        self.assertEqual(self.target("slub")["execs"], 2000)

    def test_import_usage_errors(self):
        for extra, msg in ((["--fresh"], "--import cannot be combined with --fresh"),
                           (["--quick"], "--import cannot be combined with --quick"),
                           (["--dry-run"], "--import cannot be combined with --dry-run")):
            r = subprocess.run([sys.executable, SCRIPT, "--json", self.json, "--import", self.json + ".other"] + extra,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
            self.assertEqual(r.returncode, 2, "%s: %s" % (extra, r.stdout))
            self.assertIn(msg, r.stdout)
            self.assertIn("bench/fuzz_nofp.py --import FILE", r.stdout)
        self.assertFalse(os.path.exists(self.json))
        # A device is no result file: refused at once (json.load read /dev/zero until memory ran out).
        # A pipe no one writes stands in for it: opened, it would block until the timeout.
        fifo = os.path.join(self.tmp, "fifo")
        os.mkfifo(fifo)
        r = subprocess.run([sys.executable, SCRIPT, "--json", self.json, "--import", fifo],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("cannot read %s (not a regular file): nothing imported" % fifo, r.stdout)
        self.assertFalse(os.path.exists(self.json))
        r = subprocess.run([sys.executable, SCRIPT, "--help"], stdout=subprocess.PIPE, text=True, timeout=30)
        self.assertIn("--import FILE", r.stdout)
        self.assertIn("--no-build --build-dir DIR --json X.json", r.stdout)

    # ---------------------------------------------------------------- per-target identity by binary

    def test_tree_change_continues_identical_binaries_and_restarts_changed_ones(self):
        self.run_nofp("--targets", "sched", "--execs", "2500", rc=1, env={"STUB_MODE": "crash2"})
        self.run_nofp("--targets", "buddy,slub", "--execs", "1000")
        old_sched = self.target("sched")
        self.assertEqual(len(old_sched["findings"]), 1)
        self.assertEqual(old_sched["binary"], self.sha("sched"))
        self.assertEqual(old_sched["since"]["tree"], "tree-one")
        # A fix in targets/sched.c: a new tree, only fuzz_sched's bytes differ.
        new_sched = self.change_binary("sched")
        self.stamp("tree-two", commit="beef" * 10)
        out = self.run_nofp("--targets", "buddy,sched", "--execs", "3000")   # rc 0: sched's finding went with it
        self.assertIn("sched restarts from zero: fuzz_sched changed (tree tree-one -> tree-two", out)
        self.assertIn("its 2,500 executions and 1 finding are kept", out)
        self.assertIn("tree tree-one -> tree-two: buddy continues (binaries unchanged); sched restarts", out)
        self.assertNotIn("buddy restarts", out)
        d = self.doc()
        self.assertEqual((d["tree"], d["commit"]), ("tree-two", "beef" * 10))
        buddy, sched, slub = self.target("buddy"), self.target("sched"), self.target("slub")
        self.assertEqual((buddy["execs"], buddy["chunks"], buddy["since"]["tree"]), (3000, 3, "tree-one"))
        self.assertEqual((sched["execs"], sched["findings"], sched["goal_met"]), (3000, [], True))
        self.assertEqual((sched["binary"], sched["since"]["tree"], sched["since"]["commit"]),
                         (new_sched, "tree-two", "beef" * 10))
        self.assertEqual((slub["execs"], slub["since"]["tree"]), (1000, "tree-one"))    # not in the run: as it was
        sup = d["superseded"]
        self.assertEqual(len(sup), 1)
        self.assertEqual((sup[0]["name"], sup[0]["execs"], sup[0]["binary"], sup[0]["tree"]),
                         ("sched", 2500, old_sched["binary"], "tree-one"))
        self.assertEqual(sup[0]["findings"], old_sched["findings"])
        self.assertIn("fuzz_sched changed (tree tree-one -> tree-two", sup[0]["reason"])
        self.assertEqual(sup[0]["commit"], "c0ffee" * 6 + "abcd")
        self.assertEqual([(t["tree"], t["targets"]) for t in d["trees"]],
                         [("tree-one", ["buddy", "slub"]), ("tree-two", ["buddy", "sched"])])
        self.assertRegex(out, r"sched +ubsan +3,000 +yes +0 .* beefbee")
        self.assertRegex(out, r"buddy +ubsan +3,000 +yes +0 .* c0ffeec")

    def test_continuing_says_when_the_counts_began(self):
        # The file's "started" stays from its first count; after a restart the
        # log names the date the counts going on began, not that one.
        self.run_nofp("--targets", "buddy", "--execs", "1000")
        started = self.doc()["started"]
        time.sleep(1.1)                     # the dates are to the second
        self.change_binary("buddy")
        self.stamp("tree-two", commit="beef" * 10)
        self.run_nofp("--targets", "buddy", "--execs", "1000")
        since = self.target("buddy")["since"]["date"]
        self.assertNotEqual(since, started)
        self.assertEqual(self.doc()["started"], started)
        out = self.run_nofp("--targets", "buddy", "--execs", "2000")
        self.assertIn("continuing the totals", out)
        self.assertIn("counts since %s)" % since, out)

    def test_results_without_binaries_fill_them_on_the_same_tree_and_restart_on_another(self):
        self.run_nofp("--targets", "buddy,slub", "--execs", "1000")
        d = self.doc()
        for e in d["targets"]:              # as bench/results/fuzz_nofp.json was written before binaries
            del e["binary"], e["since"]
        del d["trees"]
        with open(self.json, "w") as f:
            json.dump(d, f)
        out = self.run_nofp("--targets", "buddy", "--execs", "2000")
        self.assertIn("continuing the totals", out)
        buddy = self.target("buddy")
        self.assertEqual((buddy["execs"], buddy["binary"]), (2000, self.sha("buddy")))
        self.assertEqual((buddy["since"]["tree"], buddy["since"]["date"]), ("tree-one", d["started"]))
        self.assertNotIn("binary", self.target("slub"))
        # Another tree, the same bytes: buddy (now with its binary) continues,
        # slub (none to compare) restarts.
        self.stamp("tree-two")
        out = self.run_nofp("--targets", "buddy,slub", "--execs", "3000")
        self.assertIn("slub restarts from zero: fuzz_slub: its count records no binary", out)
        self.assertEqual((self.target("buddy")["execs"], self.target("slub")["execs"]), (3000, 3000))
        self.assertEqual([o["name"] for o in self.doc()["superseded"]], ["slub"])
        self.assertEqual([(t["tree"], t["targets"]) for t in self.doc()["trees"]],
                         [("tree-one", ["buddy"]), ("tree-two", ["buddy", "slub"])])

    def test_changed_build_or_checker_env_still_starts_fresh(self):
        self.run_nofp("--targets", "buddy", "--execs", "1000")
        out = self.run_nofp("--targets", "buddy", "--execs", "1500", env={"MMFUZZ_CHECK_LEVEL": "1"})
        self.assertIn("starting fresh: the checker settings differ", out)
        self.assertEqual(self.target("buddy")["execs"], 1500)       # same binary, yet from zero
        self.assertNotIn("superseded", self.doc())
        self.stamp("tree-one", build="asan")
        out = self.run_nofp("--targets", "buddy", "--execs", "1200", "--build", "asan")
        self.assertIn("starting fresh: the earlier results are the ubsan build's, this run is asan", out)
        self.assertEqual((self.target("buddy")["execs"], self.doc()["build"]), (1200, "asan"))
        self.assertEqual([t["tree"] for t in self.doc()["trees"]], ["tree-one"])

    def test_dry_run_says_continue_or_restart(self):
        self.run_nofp("--targets", "buddy,sched", "--execs", "1000")
        out = self.run_nofp("--targets", "buddy,sched", "--execs", "2000", "--dry-run")
        self.assertRegex(out, r"buddy +1,000 of 2,000 executions, 0 findings, 1,000 left; continues")
        self.change_binary("sched")
        self.stamp("tree-two")
        raw = self.raw()
        out = self.run_nofp("--targets", "buddy,sched,pcp", "--execs", "2000", "--dry-run")
        self.assertRegex(out, r"buddy +1,000 of 2,000 executions, 0 findings, 1,000 left; continues: binary \w+ "
                              r"unchanged")
        self.assertRegex(out, r"sched +0 of 2,000 executions, 0 findings, 2,000 left; restarts: fuzz_sched changed "
                              r"\(tree tree-one -> tree-two; binary \w+ -> \w+\) \(1,000 executions superseded\)")
        self.assertRegex(out, r"pcp +0 of 2,000 executions, 0 findings, 2,000 left; starts \(new target\)")
        self.assertRegex(out, r"left: 5,000 executions, about [0-9]+\.[0-9] CPU-hours at each target's exec/cpu-s "
                              r"\(and sched, pcp, not run yet\)")
        self.assertEqual(self.raw(), raw)

    def test_import_with_another_binary_is_refused(self):
        self.run_nofp("--targets", "buddy,slub", "--execs", "1000")
        a = self.elsewhere("a", "--targets", "slub", "--execs", "400")     # fine on its own
        ours = self.sha("buddy")
        raw = self.raw()
        theirs = self.change_binary("buddy")
        self.stamp("tree-two")
        b = self.elsewhere("b", "--targets", "buddy,slub", "--execs", "500")
        out = self.run_nofp("--import", a, "--import", b, rc=2)
        self.assertIn("fuzz_buddy's binary differs: %s counts fuzz_buddy binary %s, b.json ran binary %s" %
                      (self.json, ours, theirs), out)
        self.assertIn("nothing imported", out)
        self.assertEqual(self.raw(), raw)
        # Two files that disagree with each other about a target the JSON lacks: refused too.
        c = self.elsewhere("c", "--targets", "pcp", "--execs", "300")
        self.change_binary("pcp")
        self.stamp("tree-three")
        e = self.elsewhere("e", "--targets", "pcp", "--execs", "300")
        out = self.run_nofp("--import", c, "--import", e, rc=2)
        self.assertIn("fuzz_pcp's binary differs", out)
        self.assertEqual(self.raw(), raw)
        self.run_nofp("--import", a)
        self.assertEqual(self.target("slub")["execs"], 1400)

    def test_import_with_the_same_binaries_from_another_tree_is_accepted(self):
        self.run_nofp("--targets", "buddy", "--execs", "1000")
        self.change_binary("sched")         # another target's fix: buddy's bytes are the same
        self.stamp("tree-two", commit="beef" * 10)
        b = self.elsewhere("b", "--targets", "buddy,pcp", "--execs", "500")
        out = self.run_nofp("--import", b)
        self.assertIn("imported 1 file: +1,000 executions", out)
        d = self.doc()
        self.assertEqual(d["tree"], "tree-one")                 # the JSON's own tree stays
        self.assertEqual((self.target("buddy")["execs"], self.target("buddy")["since"]["tree"]), (1500, "tree-one"))
        pcp = self.target("pcp")
        self.assertEqual((pcp["execs"], pcp["binary"], pcp["since"]["tree"], pcp["since"]["commit"]),
                         (500, self.sha("pcp"), "tree-two", "beef" * 10))
        self.assertEqual([(t["tree"], t["targets"]) for t in d["trees"]],
                         [("tree-one", ["buddy"]), ("tree-two", ["buddy", "pcp"])])

    # ---------------------------------------------------------------- timeout rechecks

    def replays(self, name):
        path = os.path.join(self.work, name, "replays.log")
        if not os.path.exists(path):
            return []
        with open(path) as f:
            return [json.loads(l) for l in f]

    def test_a_starved_timeout_is_rechecked_and_not_counted(self):
        # Every chunk "times out" (exit 70, a timeout-* file, as a starved
        # nice-19 chunk does), but each input replays in 0.2 CPU s: starved.
        # 4 chunks, more than STALL_LIMIT in a row, in slots 0 and 1.
        own = os.getpriority(os.PRIO_PROCESS, 0)
        out = self.run_nofp("--targets", "watermark", "--jobs", "2", "--execs", "1200", "--chunk", "30",
                            "--nice", "3", env={"STUB_MODE": "timeout", "MMFUZZ_CHECK_LEVEL": "2"})
        e = self.target("watermark")
        self.assertEqual((e["execs"], e["goal_met"]), (1200, True))
        self.assertNotIn("stopped", e)
        fs = e["findings"]
        self.assertEqual(len(fs), e["chunks"])
        self.assertGreaterEqual(len(fs), 4)
        crashes = os.path.join(self.work, "watermark", "crashes")
        names = sorted(os.path.basename(f["path"]) for f in fs)
        self.assertTrue(any(n.startswith("s1-timeout-") for n in names), names)
        self.assertTrue(any(n.startswith("timeout-") for n in names), names)
        for f in fs:
            r = f["recheck"]
            self.assertEqual((f["exit"], r["exit"], r["verdict"]), (70, 0, "starved"), f)
            self.assertEqual(sorted(r), ["cpu_s", "date", "exit", "verdict", "wall_s"])
            self.assertGreaterEqual(r["cpu_s"], 0.15, r)        # the replay's own CPU time, not ours
            self.assertLess(r["cpu_s"], 25 / 4.0)
            self.assertGreaterEqual(r["wall_s"], r["cpu_s"] * 0.5)
            self.assertTrue(os.path.isfile(f["path"]), f)       # nothing hidden
            with open(f["path"] + "-recheck.log") as fh:
                self.assertIn("Executed %s" % f["path"], fh.read())
        # Each replayed once, alone: the chunk's -timeout and options, no
        # corpus or -runs, its nice and MMFUZZ_* settings.
        reps = self.replays("watermark")
        self.assertEqual(sorted(r["file"] for r in reps), sorted(f["path"] for f in fs))
        chunk_nice = self.argv_log("watermark")[0]["nice"]
        # --nice 3: exactly 3 where we may lower our niceness (root), else no less nice than we are.
        self.assertEqual(chunk_nice, 3 if os.geteuid() == 0 else max(3, own))
        for r in reps:
            self.assertEqual((r["flags"]["timeout"], r["flags"]["max_len"], r["nice"], r["mmfuzz"]),
                             ("25", "4096", chunk_nice, {"MMFUZZ_CHECK_LEVEL": "2"}))
            self.assertNotIn("runs", r["flags"])
            self.assertNotEqual(r["cwd"], os.path.join(self.work, "watermark"))
        # Counted as none: progress, table, exit 0, goal met.
        self.assertRegex(out, r"\[watermark(/s1)?\] chunk \d+: .* 0 findings, \+\d starved timeouts?")
        self.assertIn("starved timeout (chunk 1", out)
        self.assertNotIn("FINDING", out)
        self.assertRegex(out, r"watermark +ubsan +1,200 +yes +0 .*  \+%d starved timeouts\n" % len(fs))
        self.assertIn("goal met: 1 target", out)
        self.assertIn("%d starved timeouts: libFuzzer's -timeout (wall-clock) expired" % len(fs), out)

    def test_a_timeout_that_times_out_again_is_a_finding(self):
        out = self.run_nofp("--targets", "watermark", "--execs", "300", rc=1,
                            env={"STUB_MODE": "timeout", "STUB_REPLAY": "hang"})
        e = self.target("watermark")
        self.assertEqual((e["execs"], e["goal_met"], len(e["findings"])), (300, False, 1))
        f = e["findings"][0]
        crashes = os.path.join(self.work, "watermark", "crashes")
        self.assertEqual((f["path"], f["summary"]), (os.path.join(crashes, "timeout-1"), "SUMMARY: libFuzzer: timeout"))
        self.assertEqual((f["recheck"]["exit"], f["recheck"]["verdict"]), (70, "timeout"))
        self.assertIn("FINDING in watermark", out)
        self.assertIn("recheck: exit 70", out)
        self.assertRegex(out, r"\[watermark\] chunk 1: .* 1 finding\n")
        self.assertRegex(out, r"watermark +ubsan +300 +no +1 +\d+ +\d+ c0ffeec\n")      # no "+N starved"
        # The replay's own timeout file went to a scratch dir, not crashes/.
        self.assertEqual(sorted(x for x in os.listdir(crashes) if not x.endswith(".log")), ["timeout-1"])
        # The verdict: starved only for exit 0 in under a quarter of -timeout in CPU time.
        self.assertEqual([nofp.verdict(rc, cpu, 25) for rc, cpu in ((0, 6.2), (0, 6.3), (1, 0.1), (-9, 0.0))],
                         ["starved", "timeout", "timeout", "timeout"])
        # A replay still running past its wall-clock bound is killed: a real timeout.
        t0 = time.time()
        os.environ["STUB_REPLAY"] = "sleep"
        try:
            rep = nofp.Replay("watermark", nofp.binary_path(self.bdir, "watermark"), f["path"], 0, nofp.fuzz_env(),
                              bound=0.5)
        finally:
            del os.environ["STUB_REPLAY"]
        while rep.poll() is None and time.time() - t0 < 10:
            time.sleep(0.05)
        r = rep.result
        rep.kill()                      # a no-op once it ended
        self.assertIsNotNone(r, "the replay still ran 10 s after its 0.5 s bound")
        self.assertEqual((r["exit"], r["verdict"]), (-signal.SIGKILL, "timeout"))
        self.assertLess(time.time() - t0, 10)
        self.assertLess(r["cpu_s"], 1)

    def test_recheck_timeouts_of_an_existing_json(self):
        # A JSON written before rechecks: two timeout findings without one.
        self.run_nofp("--targets", "watermark,buddy", "--execs", "300", rc=1,
                      env={"STUB_MODE": "timeout", "STUB_REPLAY": "hang", "MMFUZZ_CHECK_LEVEL": "2"})
        d = self.doc()
        for e in d["targets"]:
            for f in e["findings"]:
                del f["recheck"]
        buddy = [e for e in d["targets"] if e["name"] == "buddy"][0]
        wm = [e for e in d["targets"] if e["name"] == "watermark"][0]
        buddy["findings"][0]["path"] = os.path.relpath(buddy["findings"][0]["path"], ROOT)   # as the campaign writes it
        with open(self.json, "w") as f:
            json.dump(d, f)
        raw = self.raw()
        # Another fuzz_watermark than the one its count ran: refused, nothing rechecked.
        binary = nofp.binary_path(self.bdir, "watermark")
        with open(binary, "rb") as f:
            orig = f.read()
        new = self.change_binary("watermark")
        out = self.run_nofp("--recheck-timeouts", rc=2)
        self.assertIn("%s is not the binary %s's watermark count ran: sha256 %s, the entry's %s" %
                      (binary, self.json, new, wm["binary"]), out)
        self.assertEqual(self.raw(), raw)
        with open(binary, "wb") as f:
            f.write(orig)
        # Not while a campaign holds the work dir; not with --import.
        with open(os.path.join(self.work, ".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            out = self.run_nofp("--recheck-timeouts", rc=2)
            self.assertIn("another fuzz_nofp run is using %s" % self.work, out)
        out = self.run_nofp("--recheck-timeouts", "--import", self.json, rc=2)
        self.assertIn("--recheck-timeouts cannot be combined with --import", out)
        self.assertEqual(self.raw(), raw)
        self.assertEqual((len(self.replays("buddy")), len(self.replays("watermark"))), (1, 1))  # the campaign's
        # watermark's file is gone: "missing", a finding; buddy's replays fast:
        # starved, with the JSON's checker settings, not ours.
        os.unlink(wm["findings"][0]["path"])
        out = self.run_nofp("--recheck-timeouts", rc=1, env={"MMFUZZ_OTHER": "1"})
        lines = [l for l in out.splitlines() if not l.startswith("fuzz_nofp: ")]
        self.assertEqual(len(lines), 2, out)
        self.assertRegex(out, r"buddy %s: starved - replayed alone: exit 0, 0\.[0-9]+ CPU s" %
                         buddy["findings"][0]["path"])
        self.assertIn("watermark %s: missing - no such file; counts as a finding" % wm["findings"][0]["path"], out)
        self.assertIn("2 rechecked: 1 starved (not counted), 1 real finding", out)
        b, w = self.target("buddy"), self.target("watermark")
        self.assertEqual((b["findings"][0]["recheck"]["verdict"], b["goal_met"]), ("starved", True))
        self.assertGreaterEqual(b["findings"][0]["recheck"]["cpu_s"], 0.15)
        self.assertEqual((w["findings"][0]["recheck"]["verdict"], w["goal_met"]), ("missing", False))
        self.assertEqual(self.replays("buddy")[-1]["mmfuzz"], {"MMFUZZ_CHECK_LEVEL": "2"})
        self.assertEqual(len(self.replays("buddy")), 2)
        # Nothing left to recheck; buddy's totals no longer fail a campaign.
        out = self.run_nofp("--recheck-timeouts")
        self.assertIn("no timeout finding without a recheck", out)
        self.run_nofp("--targets", "buddy", "--execs", "600", env={"MMFUZZ_CHECK_LEVEL": "2"})
        self.run_nofp("--targets", "watermark", "--execs", "600", rc=1, env={"MMFUZZ_CHECK_LEVEL": "2"})

    def test_decide(self):
        ident = {"tree": "t", "build": "ubsan", "checker_env": {}}
        prev = {"tree": "t", "build": "ubsan", "checker_env": {}, "commit": "abc"}
        self.assertEqual(nofp.decide(prev, ident, False), (True, None))
        self.assertEqual(nofp.decide(prev, ident, True), (False, "--fresh"))
        self.assertEqual(nofp.decide(None, ident, False), (False, "no earlier results"))
        # Another tree continues the doc (each target then by its binary: plan()).
        cont, why = nofp.decide(dict(prev, tree="u"), ident, False)
        self.assertTrue(cont)
        self.assertIn("source differs", why)
        self.assertFalse(nofp.decide(dict(prev, tree="u", build="asan"), ident, False)[0])
        self.assertFalse(nofp.decide(dict(prev, tree="u", checker_env={"MMFUZZ_X": "1"}), ident, False)[0])
        self.assertIn("asan build", nofp.decide(dict(prev, build="asan"), ident, False)[1])
        self.assertIn("checker settings differ",
                      nofp.decide(dict(prev, checker_env={"MMFUZZ_CHECK_LEVEL": "1"}), ident, False)[1])


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""Tests of bench/fuzz_nofp.py, the no-false-positives campaign runner (ctest
bench_fuzz_nofp, tests/bench_fuzz_nofp.cmake).  A libFuzzer build is too slow
for ctest, so the runner drives a stand-in: a script that takes libFuzzer's
flags and prints what libFuzzer prints (status lines, final stats, a checker
violation with a crash-* artifact, the interrupt exit), and logs the flags it
was given.  What is tested is the runner: chunks add up to the goal and
stop there, totals continue across invocations only for the same tree and
build, findings are kept, reported and fail the run without ending the
target, interrupts and the budget keep what was counted, and a dirty tree,
a changed binary, an unreadable JSON, a second run on a busy work dir and
bad arguments are refused.
Seconds, no build.  usage: python3 tests/bench_fuzz_nofp_test.py [-v]
"""
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
# (then, as libFuzzer: "run interrupted", the final stats, exit 72).
STUB = r'''#!/usr/bin/env python3
import json, os, signal, sys, time
flags = dict(a[1:].split("=", 1) for a in sys.argv[1:] if a.startswith("-"))
dirs = [a for a in sys.argv[1:] if not a.startswith("-")]
with open("argv.log", "a") as f:
    f.write(json.dumps({"flags": flags, "dirs": dirs, "corpus": sorted(os.listdir(dirs[0]))}) + "\n")
runs, limit = int(flags["runs"]), int(flags["max_total_time"])
mode = os.environ.get("STUB_MODE", "ok")
n = sum(1 for _ in open("argv.log"))
start = time.time()
def stats(execs):
    print("#%d\tDONE   cov: 10 ft: 10 corp: 3/30b exec/s: 1 rss: 30Mb" % execs)
    print("stat::number_of_executed_units: %d" % execs)
    print("stat::peak_rss_mb: 30", flush=True)
def interrupted(sig, frame):
    print("==%d== libFuzzer: run interrupted; exiting" % os.getpid())
    stats(min(runs, int(200 * (time.time() - start))))
    os._exit(72)
signal.signal(signal.SIGINT, interrupted)
if mode == "crash" or (mode == "crash2" and n == 2):
    art = flags["artifact_prefix"] + ("crash-%d" % n if mode == "crash2" else "crash-same")
    with open(art, "w") as f:
        f.write("input")
    print("artifact_prefix='%s'; Test unit written to %s" % (flags["artifact_prefix"], art))
    print("==mmfuzz== VIOLATION B1 in target stub, at op [3] free (of 5)")
    print("==mmfuzz== B1: stand-in block on the wrong list")
    print("==42== ERROR: libFuzzer: deadly signal")
    stats(min(runs, 300))
    sys.exit(1)
if mode == "sleep":
    while time.time() - start < limit and 200 * (time.time() - start) < runs:
        time.sleep(0.05)
    stats(min(runs, int(200 * (time.time() - start))))
    sys.exit(0)
stats(min(runs, 1000))
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

    def stamp(self, tree, dirty=(), build="ubsan"):
        if os.path.exists(os.path.join(self.bdir, nofp.STAMP)):
            os.unlink(os.path.join(self.bdir, nofp.STAMP))
        nofp.write_stamp(self.bdir, build, {"tree": tree, "commit": "c0ffee" * 6 + "abcd", "dirty": list(dirty)},
                         nofp.all_targets())

    def args(self, *extra):
        return [sys.executable, SCRIPT, "--no-build", "--build-dir", self.bdir, "--work", self.work,
                "--json", self.json, "--nice", "0"] + list(extra)

    def run_nofp(self, *extra, rc=0, env=None):
        r = subprocess.run(self.args(*extra), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=dict(os.environ, **(env or {})), timeout=60)
        self.assertEqual(r.returncode, rc, "exit status %d, want %d; output:\n%s" % (r.returncode, rc, r.stdout))
        return r.stdout

    def doc(self):
        with open(self.json) as f:
            return json.load(f)

    def target(self, name):
        return [e for e in self.doc()["targets"] if e["name"] == name][0]

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

        # Another tree: fresh totals, the old file kept, the corpus reused.
        self.stamp("tree-two")
        out = self.run_nofp("--targets", "buddy", "--execs", "1000")
        self.assertIn("starting fresh: the source differs", out)
        self.assertEqual((self.target("buddy")["execs"], self.target("buddy")["chunks"]), (1000, 1))
        self.assertEqual([e["name"] for e in self.doc()["targets"]], ["buddy"])
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

    def test_decide(self):
        ident = {"tree": "t", "build": "ubsan", "checker_env": {}}
        prev = {"tree": "t", "build": "ubsan", "checker_env": {}, "commit": "abc"}
        self.assertEqual(nofp.decide(prev, ident, False), (True, None))
        self.assertEqual(nofp.decide(prev, ident, True), (False, "--fresh"))
        self.assertEqual(nofp.decide(None, ident, False), (False, "no earlier results"))
        self.assertIn("source differs", nofp.decide(dict(prev, tree="u"), ident, False)[1])
        self.assertIn("asan build", nofp.decide(dict(prev, build="asan"), ident, False)[1])
        self.assertIn("checker settings differ",
                      nofp.decide(dict(prev, checker_env={"MMFUZZ_CHECK_LEVEL": "1"}), ident, False)[1])


if __name__ == "__main__":
    unittest.main()

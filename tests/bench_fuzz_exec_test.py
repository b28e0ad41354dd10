#!/usr/bin/env python3
"""bench/fuzz_exec.py's split_run() (issue 5's throughput figures), driven
through a stand-in libFuzzer: the rates - what the goal is judged on - come
from the run without MMFUZZ_STATS, whose CPU-clock reads are system calls
that cost 1.15-1.7 times the CPU time on this project's machine; only the
split of an input's time (ops, checks, teardown, us per mm_check call) comes
from the run with it.  No build, a second or two."""
import importlib.util
import json
import os
import shutil
import stat
import sys
import tempfile
import unittest

ROOT = os.environ.get("MMFUZZ_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A libFuzzer that runs 1000 inputs in 2 s without MMFUZZ_STATS and 600 with
# it (and then prints the harness's stats lines); STUB_FIND=stats|plain makes
# that run a finding (exit 1).  Each run appends its MMFUZZ_* environment and
# flags to $STUB_LOG.
STUB = r'''#!/usr/bin/env python3
import json, os, sys
st = os.environ.get("MMFUZZ_STATS") == "1"
with open(os.environ["STUB_LOG"], "a") as f:
    f.write(json.dumps({"env": {k: v for k, v in os.environ.items() if k.startswith("MMFUZZ_")},
                        "argv": sys.argv[1:]}) + "\n")
n = 600 if st else 1000
print("Done %d runs in 2 second(s)" % n)
print("stat::number_of_executed_units: %d" % n)
if st:
    print("mmfuzz: stats: %d inputs, %d ops (12.0 per input); CPU time: ops 0.300s (50%%), "
          "per-op checks 0.180s (30%%), teardown 0.120s (20%%); 1000.0 us per input" % (n, 12 * n))
    print("mmfuzz: stats: mm_check level 2: %d calls, 25.0 us each (30%% of all CPU time)" % (12 * n))
    print("mmfuzz: stats: mm_check level 3: %d calls, 200.0 us each (20%% of all CPU time)" % n)
if os.environ.get("STUB_FIND") == ("stats" if st else "plain"):
    print("==mmfuzz== VIOLATION C1 in target buddy, at op [3] alloc (of 4)")
    sys.exit(1)
'''


def load():
    spec = importlib.util.spec_from_file_location("fuzz_exec", os.path.join(ROOT, "bench", "fuzz_exec.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


class SplitRun(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="bench_fuzz_exec_test-")
        self.stub = os.path.join(self.tmp, "fuzz_buddy")
        with open(self.stub, "w") as f:
            f.write(STUB)
        os.chmod(self.stub, os.stat(self.stub).st_mode | stat.S_IXUSR)
        self.log = os.path.join(self.tmp, "runs.log")
        os.environ["STUB_LOG"] = self.log
        os.environ.pop("STUB_FIND", None)
        os.environ.pop("MMFUZZ_STATS", None)
        self.fx = load()

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        os.environ.pop("STUB_FIND", None)

    def runs(self):
        with open(self.log) as f:
            return [json.loads(l) for l in f]

    def test_rates_from_the_run_without_stats_split_from_the_one_with(self):
        r = self.fx.split_run(self.stub, "buddy", 2, {"MMFUZZ_CHECK_LEVEL": "1"})
        self.assertEqual((r["execs"], r["exec_per_s"], r["finding"]), (1000, 500.0, False))
        self.assertEqual((r["stats_run"]["execs"], r["stats_run"]["exec_per_s"]), (600, 300.0))
        self.assertEqual((r["ops_per_input"], r["cpu_us_per_input"], r["ops_us"], r["checks_us"], r["teardown_us"]),
                         (12.0, 1000.0, 500.0, 300.0, 200.0))
        self.assertEqual(r["levels"], {"2": {"calls": 7200, "us_each": 25.0}, "3": {"calls": 600, "us_each": 200.0}})
        # Two runs of the same campaign: the same flags, the setting's
        # environment in both, MMFUZZ_STATS off then on.
        a, b = self.runs()
        self.assertEqual((a["env"].get("MMFUZZ_STATS"), b["env"].get("MMFUZZ_STATS")), ("0", "1"))
        self.assertEqual((a["env"]["MMFUZZ_CHECK_LEVEL"], b["env"]["MMFUZZ_CHECK_LEVEL"]), ("1", "1"))
        strip = lambda argv: [x for x in argv if not x.startswith("-artifact_prefix=") and "fuzz_exec-" not in x]
        self.assertEqual(strip(a["argv"]), strip(b["argv"]))
        self.assertIn("-seed=1", a["argv"])
        self.assertIn("-max_total_time=2", a["argv"])

    def test_floor_runs_by_count_both_times(self):
        r = self.fx.split_run(self.stub, "buddy", 0, {}, runs=1000, floor=True)
        self.assertEqual((r["execs"], r["stats_run"]["execs"], r["cpu_us_per_input"]), (1000, 600, 1000.0))
        for x in self.runs():
            self.assertIn("-runs=1000", x["argv"])
            self.assertIn("-max_len=1", x["argv"])

    def test_a_finding_in_either_run_is_the_rows(self):
        for where in ("stats", "plain"):
            os.environ["STUB_FIND"] = where
            r = self.fx.split_run(self.stub, "buddy", 2, {})
            self.assertTrue(r["finding"], where)
            self.assertIn("VIOLATION C1", r["report"], where)


if __name__ == "__main__":
    unittest.main()

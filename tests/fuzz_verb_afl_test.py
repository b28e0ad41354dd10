#!/usr/bin/env python3
"""Tests of `./mmfuzz fuzz --engine afl`'s campaign loop (tools/verbs/fuzz,
run_afl) without AFL++ (ctest fuzz_verb_afl, tests/fuzz_verb_afl.cmake).

A stand-in afl-fuzz on PATH behaves as AFL++ 4.04c does in its first minute:
it writes plot_data's header and no line, fuzzer_stats only when it exits,
and - given AFL_STATSD, AFL_STATSD_HOST and AFL_STATSD_PORT - sends its
gauges ("fuzzing.NAME:VALUE|g" lines) over UDP several times a second.  A
stand-in target binary answers AFL_DUMP_MAP_SIZE=1 with its map size.  What
is tested is the verb: its live progress lines count up from the StatsD
gauges before any file says anything (before 9004ee2 they showed the seeds'
count until the end), coverage is edges_found over the map size, every
instance (-M main, -S sec1) has its own port and the totals add both, and the
final numbers and stability come from fuzzer_stats; the table's figures are
what they say: exec_per_s = execs per second of the run (its seconds are
rounded to 0.01 s), corpus the queue entries the instances found (not the
seeds, not the inputs each imported from the other: they were counted once
per instance), coverage the union of the instances' maps (their fuzz_bitmap
files) or, without them, the largest instance's bitmap_cvg.  About 21 s, no build.
usage: python3 tests/fuzz_verb_afl_test.py [-v]
"""
import contextlib
import importlib.machinery
import importlib.util
import io
import os
import re
import shutil
import stat
import tempfile
import unittest
from unittest import mock

ROOT = os.environ.get("MMFUZZ_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VERB = os.path.join(ROOT, "tools", "verbs", "fuzz")
loader = importlib.machinery.SourceFileLoader("fuzz_verb", VERB)
spec = importlib.util.spec_from_loader("fuzz_verb", loader)
verb = importlib.util.module_from_spec(spec)
loader.exec_module(verb)

# Per tick (0.25 s): main 1000 execs, sec1 1 (so a total that is not a
# multiple of 1000 has both), 10 corpus entries, edges_found 100 + tick; at
# exit fuzzer_stats with the final execs and a stability that names the
# instance (main 100.00%, sec1 99.50%: the verb reports the lowest).
AFL_STUB = r'''#!/usr/bin/env python3
import os, socket, sys, time
args = sys.argv[1:]
sync = args[args.index("-o") + 1]
name = args[args.index("-M") + 1] if "-M" in args else args[args.index("-S") + 1]
seconds = float(args[args.index("-V") + 1])
d = os.path.join(sync, name)
os.makedirs(os.path.join(d, "queue"), exist_ok=True)
ids = [0]
def queue(what):
    with open(os.path.join(d, "queue", "id:%06d,%s" % (ids[0], what)), "w") as f:
        f.write(what)
    ids[0] += 1
queue("time:0,execs:0,orig:seed")
with open(os.path.join(d, "plot_data"), "w") as f:
    f.write("# relative_time, cycles_done, cur_item, corpus_count, pending_total, pending_favs, map_size, "
            "saved_crashes, saved_hangs, max_depth, execs_per_sec, total_execs, edges_found\n")
port = os.environ.get("AFL_STATSD_PORT")
with open(os.path.join(sync, "ports-" + name), "w") as f:
    f.write("%s %s\n" % (os.environ.get("AFL_STATSD", ""), port))
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
t0, tick = time.time(), 0
rate = 1000 if name == "main" else 1
while time.time() - t0 < seconds:
    time.sleep(0.25)
    tick += 1
    # every tick one input found; sec1 also imports one of main's (",sync:main")
    queue("src:000000,time:%d,execs:%d,op:havoc,rep:2,+cov" % (tick, rate * tick))
    if name == "sec1":
        queue("sync:main,src:%06d" % tick)
    if os.environ.get("AFL_STATSD") == "1" and port:
        msg = ("fuzzing.execs_done:%d|g\nfuzzing.corpus_count:%d|g\nfuzzing.saved_crashes:0|g\n"
               "fuzzing.edges_found:%d|g\nfuzzing.var_byte_count:0|g\n" % (rate * tick, 10 * tick, 100 + tick))
        sock.sendto(msg.encode(), (os.environ.get("AFL_STATSD_HOST", "127.0.0.1"), int(port)))
# The virgin map, as AFL++ writes it at its end: 0xff but for the edges hit,
# 12 bytes longer than the map the binary dumps (as 4.04c's is).  main's
# edges are the map's first ones; sec1's start at STUB_SEC1_FROM (default
# 500: none in common with main's).
if not os.environ.get("STUB_NO_BITMAP"):
    first = 0 if name == "main" else int(os.environ.get("STUB_SEC1_FROM", "500"))
    vmap = bytearray(b"\xff" * 1012)
    for i in range(first, first + 100 + tick):
        vmap[i] = 0xfe
    with open(os.path.join(d, "fuzz_bitmap"), "wb") as f:
        f.write(vmap)
with open(os.path.join(d, "fuzzer_stats"), "w") as f:
    f.write("execs_done        : %d\ncorpus_count      : %d\nsaved_crashes     : 0\n"
            "bitmap_cvg        : %.2f%%\nstability         : %s\n"
            % (rate * tick, ids[0], 100.0 * (100 + tick) / 1000, "100.00%" if name == "main" else "99.50%"))
'''

TARGET_STUB = r'''#!/bin/sh
if [ "$AFL_DUMP_MAP_SIZE" = 1 ]; then echo 1000; exit 255; fi
exit 0
'''


def write_exe(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


class AflCampaign(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="fuzz-verb-afl-")
        self.bin = os.path.join(self.tmp, "bin")
        self.bdir = os.path.join(self.tmp, "build")
        os.makedirs(self.bin)
        os.makedirs(os.path.join(self.bdir, "targets"))
        write_exe(os.path.join(self.bin, "afl-fuzz"), AFL_STUB)
        write_exe(os.path.join(self.bdir, "targets", "fuzz_buddy"), TARGET_STUB)
        self.old_path = os.environ["PATH"]
        os.environ["PATH"] = self.bin + os.pathsep + self.old_path
        self.out = os.path.join(self.tmp, "out")
        os.makedirs(self.out)

    def tearDown(self):
        os.environ["PATH"] = self.old_path
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_map_size_is_read_from_the_binary(self):
        self.assertEqual(verb.afl_map_edges(os.path.join(self.bdir, "targets", "fuzz_buddy")), 1000)
        self.assertEqual(verb.afl_map_edges(os.path.join(self.bdir, "targets", "missing")), 0)

    def test_live_progress_comes_from_statsd_and_adds_the_instances(self):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            res = verb.run_afl("buddy", self.bdir, 7, 2, self.out)
        lines = [l for l in buf.getvalue().splitlines() if l.startswith("[buddy]")]
        self.assertGreaterEqual(len(lines), 2, buf.getvalue())
        execs = [int(re.search(r"execs (\d+)", l).group(1)) for l in lines]
        covs = [float(re.search(r"cov ([\d.]+)%", l).group(1)) for l in lines]
        # The first line comes at 3 s, the stand-ins run 7 s: no fuzzer_stats yet,
        # plot_data has no line - only StatsD can have said anything.
        self.assertGreater(execs[0], 0, lines)
        self.assertTrue(all(b >= a for a, b in zip(execs, execs[1:])), lines)
        # Both instances counted (sec1 adds 1 a tick to main's 1000s).
        self.assertTrue(any(e % 1000 for e in execs), lines)
        # edges_found 100 + tick over a map of 1000 edges: 10.x%.
        self.assertTrue(10.0 < covs[0] < 13.0, lines)
        # Each instance had its own port.
        ports = []
        for name in ("main", "sec1"):
            with open(os.path.join(self.out, "afl", "ports-" + name)) as f:
                on, port = f.read().split()
            self.assertEqual(on, "1")
            ports.append(port)
        self.assertNotEqual(ports[0], ports[1])
        # The end: fuzzer_stats' totals, the lowest stability.
        finals = []
        for name in ("main", "sec1"):
            finals.append(int(verb.afl_stats(os.path.join(self.out, "afl", name, "fuzzer_stats"))["execs_done"]))
        self.assertEqual(res["execs"], sum(finals))
        self.assertEqual(res["stability"], 99.5)
        self.assertEqual(res["crashes"], 0)
        # seconds is the run's time rounded to 0.01 s, the rate from the unrounded time
        lo, hi = res["execs"] / (res["seconds"] + 0.005), res["execs"] / (res["seconds"] - 0.005)
        self.assertTrue(lo - 0.05 <= res["exec_per_s"] <= hi + 0.05, res)
        # corpus: what the instances found, once - not corpus_count's seeds and sec1's imports
        found = sum(1 for name in ("main", "sec1") for f in os.listdir(os.path.join(self.out, "afl", name, "queue"))
                    if "+cov" in f)
        counts = sum(int(verb.afl_stats(os.path.join(self.out, "afl", name, "fuzzer_stats"))["corpus_count"])
                     for name in ("main", "sec1"))
        self.assertGreater(found, 0)
        self.assertEqual(res["corpus"], found, (res, counts))
        # coverage: the union of the instances' maps - here none in common, so the sum of the two
        self.assertAlmostEqual(res["coverage"], sum(self.cvgs()), places=6)
        self.assertEqual(res["coverage_unit"], "map_pct")

    def run_quietly(self, seconds, jobs, **stub_env):
        """run_afl with its progress lines dropped and the stand-in's STUB_* settings in the environment."""
        with mock.patch.dict(os.environ, stub_env), contextlib.redirect_stdout(io.StringIO()):
            return verb.run_afl("buddy", self.bdir, seconds, jobs, self.out)

    def cvgs(self):
        return [float(verb.afl_stats(os.path.join(self.out, "afl", name, "fuzzer_stats"))["bitmap_cvg"].rstrip("%"))
                for name in ("main", "sec1")]

    def test_coverage_counts_an_edge_both_instances_hit_once(self):
        res = self.run_quietly(2, 2, STUB_SEC1_FROM="0")     # sec1's edges are main's first ones
        self.assertEqual(res["coverage"], max(self.cvgs()))
        self.assertEqual(verb.afl_union_edges(os.path.join(self.out, "afl")), round(10 * max(self.cvgs())))

    def test_coverage_overlapping_in_part(self):
        res = self.run_quietly(2, 2, STUB_SEC1_FROM="50")    # 50 edges main's only, the rest shared or sec1's
        main, sec1 = (round(10 * c) for c in self.cvgs())
        self.assertEqual(verb.afl_union_edges(os.path.join(self.out, "afl")), max(main, 50 + sec1))
        self.assertAlmostEqual(res["coverage"], max(main, 50 + sec1) / 10.0, places=6)

    def test_without_fuzz_bitmap_the_largest_instance_counts(self):
        res = self.run_quietly(2, 2, STUB_NO_BITMAP="1")
        self.assertIsNone(verb.afl_union_edges(os.path.join(self.out, "afl")))
        self.assertEqual(res["coverage"], max(self.cvgs()))

    def test_maps_of_two_sizes_are_no_union(self):
        sync = os.path.join(self.tmp, "sync")
        for inst, size in (("main", 1012), ("sec1", 2024)):
            os.makedirs(os.path.join(sync, inst))
            with open(os.path.join(sync, inst, "fuzz_bitmap"), "wb") as f:
                f.write(b"\x00" + b"\xff" * (size - 1))
        self.assertIsNone(verb.afl_union_edges(sync))
        os.makedirs(os.path.join(sync, "sec2"))         # an instance without a map yet
        os.remove(os.path.join(sync, "sec1", "fuzz_bitmap"))
        self.assertEqual(verb.afl_union_edges(sync), 1)

    def test_without_a_socket_the_files_still_count(self):
        class NoSocket(verb.AflStatsd):
            def __init__(self):
                self.sock = None
                self.last = {}
        real = verb.AflStatsd
        verb.AflStatsd = NoSocket
        try:
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                res = verb.run_afl("buddy", self.bdir, 1, 1, self.out)
        finally:
            verb.AflStatsd = real
        with open(os.path.join(self.out, "afl", "ports-main")) as f:
            self.assertEqual(f.read().split(), ["None"])      # no AFL_STATSD, no port
        self.assertGreater(res["execs"], 0)
        self.assertEqual(res["stability"], 100.0)


if __name__ == "__main__":
    unittest.main()

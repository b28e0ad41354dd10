#!/usr/bin/env python3
"""bench/fuzz_rss.py, the memory benchmark of a long libFuzzer run: how it
splits an smaps text into ASan's heap, ASan's shadow, other anonymous
memory and files; the growth figures it prints; the .options it passes.
(The run itself needs the fuzz preset and minutes: a benchmark, not a test.)"""
import importlib.util
import os
import unittest

ROOT = os.environ.get("MMFUZZ_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("fuzz_rss", os.path.join(ROOT, "bench", "fuzz_rss.py"))
fuzz_rss = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fuzz_rss)


def mapping(lo, hi, name, rss_kb):
    return ("%x-%x rw-p 00000000 00:00 0          %s\nSize: %d kB\nKernelPageSize: 4 kB\n"
            "Rss: %d kB\nPss: %d kB\n" % (lo, hi, name, (hi - lo) >> 10, rss_kb, rss_kb))


SMAPS = "".join([
    mapping(0x55d0c0000000, 0x55d0c0400000, "/work/main/build/fuzz/targets/fuzz_slub", 3000),
    mapping(0x602000000000, 0x602000100000, "", 700),           # an ASan size class
    mapping(0x63ffffff0000, 0x640000000000, "", 64),            # the heap's last bytes
    mapping(0x640000000000, 0x640000100000, "", 5),             # past it: anonymous
    mapping(0x7fff8000, 0x8fff7000, "", 100),                   # low shadow
    mapping(0x10007fff0000, 0x10007fff8000, "", 32),            # the end of high shadow
    mapping(0x10007fff8000, 0x10007fff9000, "", 4),             # past it
    mapping(0x7f0000000000, 0x7f0001000000, "", 9000),          # an instance's arena
    mapping(0x7f0001000000, 0x7f0001100000, "[anon:libfuzzer]", 11),
    mapping(0x7ffd00000000, 0x7ffd00021000, "[stack]", 20),
    mapping(0x7f1000000000, 0x7f1000200000, "/usr/lib/x86_64-linux-gnu/libc.so.6", 1500),
])


class Classify(unittest.TestCase):
    def test_regions(self):
        kb = fuzz_rss.classify(SMAPS)
        self.assertEqual(kb, {"asan-heap": 764, "shadow": 132, "anon": 5 + 4 + 9000 + 11 + 20, "files": 4500,
                              "anon-rw-mapped": 1024 + 4 + 16384 + 1024 + 132})

    def test_every_resident_kb_counted_once(self):
        kb = fuzz_rss.classify(SMAPS)
        total = sum(int(l.split()[1]) for l in SMAPS.splitlines() if l.startswith("Rss:"))
        self.assertEqual(sum(kb[r] for r in fuzz_rss.REGIONS), total)

    def test_only_writable_anon_counts_as_mapped(self):
        ro = SMAPS.replace("7f0000000000-7f0001000000 rw-p", "7f0000000000-7f0001000000 ---p")
        self.assertEqual(fuzz_rss.classify(SMAPS)["anon-rw-mapped"] - fuzz_rss.classify(ro)["anon-rw-mapped"],
                         16384)

    def test_empty(self):
        self.assertEqual(fuzz_rss.classify(""), dict.fromkeys(fuzz_rss.REGIONS + ("anon-rw-mapped",), 0))


class Growth(unittest.TestCase):
    def test_all_and_second_half(self):
        samples = [{"t": 60 * i, "anon": 100 + 10 * i} for i in range(5)]   # 100 .. 140
        g = fuzz_rss.growth(samples, "anon")
        self.assertEqual(g, {"all_mb": 40, "second_half_mb": 20, "second_half_minutes": 2.0})

    def test_too_few_samples(self):
        self.assertIsNone(fuzz_rss.growth([{"t": 0, "anon": 1}, {"t": 60, "anon": 2}], "anon"))


class Options(unittest.TestCase):
    def test_options_file_but_rss_limit(self):
        opts = fuzz_rss.libfuzzer_options("slub")
        self.assertIn("-max_len=4096", opts)
        self.assertIn("-timeout=25", opts)
        self.assertFalse([o for o in opts if o.startswith("-rss_limit_mb")], opts)

    def test_no_options_file(self):
        self.assertEqual(fuzz_rss.libfuzzer_options("no-such-target"), [])


class LastExecs(unittest.TestCase):
    def test_last_count(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write("INFO: Seed: 1\n#2\tINITED cov: 5\n#4096\tpulse  cov: 9\n#5000\tNEW cov: 10\nstat::x: 1\n")
        try:
            self.assertEqual(fuzz_rss.last_execs(f.name), 5000)
        finally:
            os.unlink(f.name)
        self.assertEqual(fuzz_rss.last_execs("/nonexistent/fuzz.log"), 0)


if __name__ == "__main__":
    unittest.main()

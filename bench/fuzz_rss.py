#!/usr/bin/env python3
"""fuzz_rss.py - where a long libFuzzer run's memory goes (issue 5: will an
OSS-Fuzz job stay under its 2,560 MB RSS limit?).

Runs one fuzz target of the `fuzz` preset (clang, ASan+UBSan) from its seed
corpus (corpus/T, copied to a temporary corpus directory; nothing is
written into the repository) with its dict, and every --interval seconds
reads the process's /proc/PID/smaps and splits its resident memory by
region:

  asan-heap   ASan's allocator (x86_64: 0x600000000000..0x640000000000):
              every malloc of the target and of libFuzzer, and ASan's
              quarantine of freed chunks (256 MB by default)
  shadow      ASan's shadow memory (0x7fff8000..0x10007fff8000)
  anon        every other anonymous mapping: the target's allocator
              instances (the model's arenas and memmaps, faulted in on first
              touch), ASan's and libFuzzer's own mmaps; printed with the
              size of its writable mappings, which bounds its growth while
              no new mapping appears
  files       the binary and the shared libraries

At the end it prints the growth of each region over the whole run and
over its second half, libFuzzer's final stats (executions, peak_rss_mb) and
ASan's exit statistics (ASAN_OPTIONS print_stats=1: the stack depot and the
quarantine), and with --json writes all of it.

Exit status: 0 the run ended cleanly; 1 libFuzzer exited with a failure
(a crash, a leak, its RSS limit: the log's end is printed); 2 bad
arguments or a failed build; 130 interrupted (Ctrl-C: libFuzzer stops and
prints its stats, and the summary and --json cover the run so far).

  bench/fuzz_rss.py slub --time 1800 --interval 120 --json rss.json
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
sys.path.insert(0, os.path.join(ROOT, "bench"))     # fuzz_exec, also when loaded by path (its test)
from bounded import libfuzzer_options as options_file  # noqa: E402
from fuzz_exec import build  # noqa: E402
from outputs import cannot_write  # noqa: E402
import fuzz_targets  # noqa: E402

REGIONS = ("asan-heap", "shadow", "anon", "files")
HEAP = (0x600000000000, 0x640000000000)
SHADOW = (0x7fff8000, 0x10007fff8000)
MAPPING = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$")
EXECS = re.compile(r"^#(\d+)\s")
FINAL = re.compile(r"stat::(number_of_executed_units|peak_rss_mb|new_units_added):\s+(\d+)")
ASAN_STATS = re.compile(r"^(Stats: StackDepot: .*|Stats: SizeClassAllocator64: .*|Quarantine limits: .*|"
                        r"Global quarantine stats: .*)$", re.M)


def region_of(lo, name):
    """The region of a mapping that starts at @lo, named @name in smaps."""
    if HEAP[0] <= lo < HEAP[1]:
        return "asan-heap"
    if SHADOW[0] <= lo < SHADOW[1]:
        return "shadow"
    if name and not name.startswith("["):
        return "files"
    return "anon"      # unnamed, [heap], [stack], [anon:...]


def classify(smaps):
    """Resident kB per region of an smaps text, and under "anon-rw-mapped"
    the size of the writable anon mappings: what "anon" could grow to
    without a new mapping (the instances' frames are mapped at creation and
    fault in on first touch)."""
    kb = dict.fromkeys(REGIONS + ("anon-rw-mapped",), 0)
    cur = None
    for line in smaps.splitlines():
        m = MAPPING.match(line)
        if m:
            cur = region_of(int(m.group(1), 16), m.group(4).strip())
            if cur == "anon" and m.group(3).startswith("rw"):
                kb["anon-rw-mapped"] += (int(m.group(2), 16) - int(m.group(1), 16)) >> 10
        elif line.startswith("Rss:") and cur:
            kb[cur] += int(line.split()[1])
    return kb


def growth(samples, key):
    """MB a region grew over all samples and over their second half (None with under 3 samples)."""
    if len(samples) < 3:
        return None
    mid = samples[len(samples) // 2]
    return {"all_mb": samples[-1][key] - samples[0][key], "second_half_mb": samples[-1][key] - mid[key],
            "second_half_minutes": round((samples[-1]["t"] - mid["t"]) / 60, 1)}


def last_execs(log_path):
    """The last #N libFuzzer printed, or 0."""
    try:
        with open(log_path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 65536))
            tail = f.read().decode("utf-8", "replace")
    except OSError:
        return 0
    n = 0
    for line in tail.splitlines():
        m = EXECS.match(line)
        if m:
            n = int(m.group(1))
    return n


def libfuzzer_options(target):
    """-KEY=VALUE for the [libfuzzer] section of corpus/TARGET.options (what
    OSS-Fuzz passes), but rss_limit_mb: --rss-limit-mb sets that."""
    return ["-%s=%s" % kv for kv in options_file(ROOT, target).items() if kv[0] != "rss_limit_mb"]


def row(s):
    return ("%6.1f min %9d execs  total %5d MB  asan-heap %5d  shadow %5d  anon %5d (of %d mapped rw)  "
            "files %4d" % (s["t"] / 60, s["execs"], s["total"], s["asan-heap"], s["shadow"], s["anon"],
                           s["anon-rw-mapped"], s["files"]))


def main():
    ap = argparse.ArgumentParser(description="RSS of a long libFuzzer run, split by region",
                                 epilog="Exit status: 0 clean run; 1 a crash, leak or the RSS limit; "
                                        "2 bad arguments or a failed build; 130 interrupted.")
    ap.add_argument("target", help="a fuzz target (targets/TARGETS)")
    ap.add_argument("--time", type=int, default=1800, help="seconds of fuzzing (default 1800)")
    ap.add_argument("--interval", type=int, default=120, help="seconds between samples (default 120)")
    ap.add_argument("--rss-limit-mb", type=int, default=2560, help="libFuzzer's -rss_limit_mb (default 2560, "
                    "OSS-Fuzz's)")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build", "fuzz"))
    ap.add_argument("--no-build", action="store_true", help="run what is built")
    ap.add_argument("--json", help="write the samples and the summary here")
    a = ap.parse_args()
    a.build_dir = os.path.abspath(a.build_dir)       # the fuzzer runs in a temporary directory
    names = fuzz_targets.names(ROOT)
    if a.target not in names:
        ap.error("unknown target '%s' (targets: %s)" % (a.target, ", ".join(names)))
    if a.time < 1 or a.interval < 1 or a.rss_limit_mb < 1:
        ap.error("--time, --interval and --rss-limit-mb must be positive")
    if a.json and cannot_write("--json", a.json):
        ap.error(cannot_write("--json", a.json))
    if not sys.platform.startswith("linux"):
        ap.error("needs Linux's /proc/PID/smaps")
    if not a.no_build and not build(a.build_dir, [a.target]):
        print("fuzz_rss: build of fuzz_%s failed" % a.target, file=sys.stderr)
        return 2
    binary = os.path.join(a.build_dir, "targets", "fuzz_" + a.target)
    if not os.access(binary, os.X_OK):
        print("fuzz_rss: %s is not built" % binary, file=sys.stderr)
        return 2

    work = tempfile.mkdtemp(prefix="fuzz_rss-")
    try:
        corpus = os.path.join(work, "corpus")
        os.mkdir(corpus)
        log_path = os.path.join(work, "fuzz.log")
        cmd = [binary, corpus, os.path.join(ROOT, "corpus", a.target), "-rss_limit_mb=%d" % a.rss_limit_mb,
               "-max_total_time=%d" % a.time, "-print_final_stats=1"]
        d = os.path.join(ROOT, "corpus", a.target + ".dict")
        if os.path.exists(d):
            cmd.append("-dict=" + d)
        cmd += libfuzzer_options(a.target)
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = ":".join(x for x in (env.get("ASAN_OPTIONS", ""), "print_stats=1:atexit=1") if x)
        print("fuzz_rss: %s for %d s, a sample every %d s" % (" ".join(cmd), a.time, a.interval), flush=True)
        start = time.monotonic()
        samples = []
        interrupted = False
        with open(log_path, "wb") as logf:
            p = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT, cwd=work, env=env)
            try:
                while p.poll() is None:
                    try:
                        p.wait(timeout=a.interval)
                        break
                    except subprocess.TimeoutExpired:
                        pass
                    try:
                        with open("/proc/%d/smaps" % p.pid) as f:
                            kb = classify(f.read())
                    except OSError:
                        break                          # it just exited
                    s = {"t": round(time.monotonic() - start, 1), "execs": last_execs(log_path)}
                    s.update({k: v // 1024 for k, v in kb.items()})
                    s["total"] = sum(kb[k] for k in REGIONS) // 1024
                    samples.append(s)
                    print(row(s), flush=True)
            except KeyboardInterrupt:
                interrupted = True
                p.send_signal(signal.SIGINT)          # libFuzzer prints its final stats
                p.wait()
        with open(log_path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        final = {k: int(v) for k, v in FINAL.findall(text)}
        failed = p.returncode != 0 and not interrupted
        summary = {"target": a.target, "seconds": a.time, "rss_limit_mb": a.rss_limit_mb, "command": cmd,
                   "exit_status": p.returncode, "failed": failed, "interrupted": interrupted, "final": final,
                   "asan_stats": ASAN_STATS.findall(text),
                   "growth": {k: growth(samples, k) for k in REGIONS + ("total",)}}
        print("\nfuzz_rss: %s: %s executions, peak_rss_mb %s, exit status %d" % (
            a.target, final.get("number_of_executed_units", "?"), final.get("peak_rss_mb", "?"), p.returncode))
        for k in REGIONS + ("total",):
            g = summary["growth"][k]
            if g:
                print("  %-9s %+5d MB over the run, %+5d MB over its last %.1f minutes" % (
                    k, g["all_mb"], g["second_half_mb"], g["second_half_minutes"]))
        for line in summary["asan_stats"]:
            print("  " + line)
        if failed:
            print("fuzz_rss: the run did not end cleanly; its log's end:\n" + text[-3000:], file=sys.stderr)
        if a.json:
            with open(a.json, "w") as f:
                json.dump({"samples": samples, "summary": summary}, f, indent=1)
                f.write("\n")
        return 130 if interrupted else 1 if failed else 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

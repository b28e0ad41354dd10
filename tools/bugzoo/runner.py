"""The bug-zoo runner behind `./mmfuzz bugzoo` (python3 standard library only)."""
import datetime
import json
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

from detectors import CONCURRENCY, DETECTORS, single_threaded_fuzz
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # tools/
from bounded import kill_group  # noqa: E402
from outputs import cannot_create, write_whole  # noqa: E402
import fuzz_targets as fuzz_target_list  # noqa: E402

ROOT = None
JOBS = os.cpu_count() or 2
RUN_ENV = dict(os.environ)
RUN_ENV.update({
    "ASAN_OPTIONS": "abort_on_error=0:detect_leaks=1:verify_asan_link_order=0",
    "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1",
})


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def die(msg, code=2):
    print("mmfuzz bugzoo: " + msg, file=sys.stderr)
    sys.exit(code)


# ---------------------------------------------------------------- the list

def bugzoo_md():
    for p in (os.path.join(ROOT, "..", "shared", "BUGZOO.md"), os.path.join(ROOT, "shared", "BUGZOO.md"),
              os.path.join(ROOT, "BUGZOO.md")):
        if os.path.exists(p):
            return p
    return None


def bug_table():
    """[(id, where, mistake, kernel reference)] in BUGZOO.md's order; DETECTORS' order without it."""
    rows = []
    p = bugzoo_md()
    if p:
        with open(p) as f:
            for line in f:
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if len(cells) >= 5 and re.fullmatch(r"[a-z]+(-[a-z0-9]+)+", cells[0]):
                    rows.append((cells[0], cells[1], cells[2], cells[3]))
    known = {r[0] for r in rows}
    rows += [(i, "", "", "") for i in DETECTORS if i not in known]
    return rows


def macro(bug):
    return "MM_INJECT_" + bug.upper().replace("-", "_")


def locations(bug):
    r = subprocess.run(["grep", "-rn", "--include=*.c", "--include=*.h", "-w", macro(bug), "allocator"],
                       cwd=ROOT, stdout=subprocess.PIPE, text=True)
    return [":".join(l.split(":")[:2]) for l in r.stdout.splitlines()]


def do_list():
    for bug, where, _, ref in bug_table():
        locs = locations(bug)
        print("%-28s %s" % (bug, ", ".join(locs) if locs else "(no MM_INJECT block found)"))
        if ref:
            print("%-28s %s | %s" % ("", where, ref))


# ---------------------------------------------------------------- builds
#
# A build *kind* is a preset; each bug gets one build directory per kind it
# needs, and the correct allocator one per kind ("none"), built first.  The
# variants compile through tools/bugzoo/cc-reuse, which copies from the
# correct build of the same kind every object whose sources never mention
# MM_INJECT: a variant compiles its one to three injected files and links.

KINDS = {
    # kind: (configure preset, build directory prefix, extra cmake arguments)
    "asan": ("bugzoo", "bugzoo-", []),                       # clang ASan+UBSan, standalone replay mains
    "fuzz": ("fuzz", "bugzoo-fuzz-", []),                    # clang ASan+UBSan, libFuzzer
    "gcc": ("debug", "bugzoo-gcc-", []),                     # gcc -O0, MM_DEBUG=3, no sanitizer
}


def bdir(bug, kind="asan"):
    return os.path.join(ROOT, "build", KINDS[kind][1] + bug)


def det_kind(det):
    """(kind, name) of a detector string KIND:NAME."""
    return det.split(":", 1)


def targets_of(det):
    """[(build kind, ninja target)] a detector needs."""
    kind, name = det_kind(det)
    return {
        "test": [("asan", name)],
        "test-gcc": [("gcc", name)],
        "stress": [("asan", "mmfuzz-stress")],
        "sched": [("asan", "mmfuzz-sched-stress")],
        "replay": [("asan", "fuzz_" + name)],
        "replay-gcc": [("gcc", "fuzz_" + name)],
        # libFuzzer finds it; the crash input replays on the standalone asan build (./mmfuzz repro's binary)
        "fuzz": [("fuzz", "fuzz_" + name), ("asan", "fuzz_" + name)],
    }[kind]


def fuzz_targets():
    try:
        return set(fuzz_target_list.names(ROOT))
    except OSError:
        return set()


def available(det):
    """A detector whose fuzz target is not (yet) in targets/TARGETS is left out."""
    kind, name = det_kind(det)
    if kind in ("fuzz", "replay", "replay-gcc"):
        return name in fuzz_targets()
    return True


def configure(bug, kind):
    d = bdir(bug, kind)
    preset, _, extra = KINDS[kind]
    inj = "" if bug == "none" else bug
    # -Werror off: an injection may leave a helper unused (pcp-bulk-count-unclamped leaves
    # nr_pcp_free), and a warning elsewhere must not hide the zoo; the presets' own builds
    # keep -Werror.  (It changes no object: the variants still reuse the correct build's.)
    args = ["-DMM_INJECT=" + inj, "-DMM_WERROR=OFF"] + extra
    if inj:
        args += ["-DCMAKE_C_COMPILER_LAUNCHER=%s;%s" % (
            os.path.join(ROOT, "tools", "bugzoo", "cc-reuse"), bdir("none", kind))]
    cache = os.path.join(d, "CMakeCache.txt")
    # configured, not just a cache: a failed configure leaves one (with these -D values) and no
    # build.ninja, and every later build then failed in ninja
    if fuzz_target_list.configured(d):
        with open(cache) as f:
            text = f.read()
        if ("MM_INJECT:STRING=%s\n" % inj) in text and "MM_WERROR:BOOL=OFF" in text and (not inj or "cc-reuse" in text):
            return
    env = dict(os.environ, MM_INJECT=inj)
    r = subprocess.run(["cmake", "--preset", preset, "-B", d] + args, cwd=ROOT, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        die("configuring %s failed:\n%s" % (d, r.stdout[-3000:]))


BROKEN = {}     # bug -> {(kind, target)} that failed to build (their detectors are skipped)


def build(bug, dets):
    """Build what @dets need for @bug (every kind), ninja -k 0: a target that fails to build
    (another change in progress, say) only takes its own detectors out (BROKEN).  Seconds."""
    t0 = time.time()
    need = {}
    for det in dets:
        for kind, tgt in targets_of(det):
            need.setdefault(kind, set()).add(tgt)
    broken = BROKEN.setdefault(bug, set())
    for kind in sorted(need):
        configure(bug, kind)
        d = bdir(bug, kind)
        r = subprocess.run(["ninja", "-C", d, "-k", "0", "-j", str(JOBS)] + sorted(need[kind]), cwd=ROOT,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode:
            for tgt in sorted(need[kind]):
                q = subprocess.run(["ninja", "-C", d, "-j", str(JOBS), tgt], cwd=ROOT, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.DEVNULL)
                if q.returncode:
                    broken.add((kind, tgt))
            log("BUILD FAILED in %s: %s\n%s" % (os.path.relpath(d, ROOT), " ".join(
                t for k, t in sorted(broken) if k == kind), r.stdout[-1500:]))
    log("built %-28s %5.1f s (%s)" % (bug, time.time() - t0,
                                      "; ".join("%s: %s" % (k, " ".join(sorted(v))) for k, v in sorted(need.items()))))
    return time.time() - t0


def buildable(det, bug):
    """False if a build @det needs failed for @bug or for the correct build."""
    return not any(t in BROKEN.get(bug, ()) or t in BROKEN.get("none", ()) for t in targets_of(det))


# ---------------------------------------------------------------- running

def run(argv, timeout, stop=None, budget_ok=False):
    """(rc, seconds, output, timed_out), the process group killed on timeout.

    @stop: a regex; the run ends (group killed, rc 1) as soon as an output
    line matches, and its seconds are that line's time (the program runs
    line-buffered through stdbuf for this).  @budget_ok: reaching @timeout
    is the end of the budget, not a hang (rc 0, not timed out) - unless a
    @stop line came first."""
    t0 = time.time()
    cmd = (["stdbuf", "-oL", "-eL"] + argv) if stop else argv
    p = subprocess.Popen(cmd, cwd=ROOT, env=RUN_ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    out = []
    hit = threading.Event()
    t_hit = []

    def reader():
        for raw in p.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            out.append(line)
            if stop and not hit.is_set() and re.search(stop, line):
                t_hit.append(time.time())
                hit.set()

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    to = False
    try:
        while p.poll() is None and not hit.is_set():
            if time.time() - t0 >= timeout:
                to = True
                break
            hit.wait(0.05)
    except BaseException:
        # Ctrl-C: in a session of its own the detector would not see it, and ran on
        kill_group(p)
        raise
    t_end = t_hit[0] if t_hit else time.time()
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    p.wait()
    th.join(10)
    rc = p.returncode
    if hit.is_set():
        rc, to = 1, False
    elif to and budget_ok:
        rc, to = 0, False
    return rc, t_end - t0, "\n".join(out), to


INV = re.compile(r"\b(B[1-4]|P1|S[1-3]|W1|C1|T1)\b")


def fired(rc, out, to):
    if to:
        return "hang"
    m = re.search(r"ERROR: AddressSanitizer: ([\w-]+)", out)
    if m:
        return "asan:" + m.group(1)
    m = re.search(r"ERROR: LeakSanitizer", out)
    if m:
        return "asan:leak"
    if "runtime error:" in out:
        return "ubsan"
    m = re.search(r"ERROR: libFuzzer: (timeout|out-of-memory)", out)
    if m:
        return "libfuzzer:" + m.group(1)
    lines = out.splitlines()
    bad = [l for l in lines if re.search(r"FAIL|violation|watchdog|did not finish|no progress", l, re.I)]
    for l in bad:
        if re.search(r"watchdog|no progress|did not finish|bounded loop", l, re.I) and not INV.search(l):
            return "watchdog"
        m = INV.search(l)
        if m:
            return m.group(1)
    for l in bad:
        if re.search(r"\bhang\b", l, re.I):
            return "hang"
    for l in bad:
        if "contract" in l:
            return "contract"
    if any("CHECK failed" in l for l in lines):
        return "check"
    if rc is not None and rc < 0:
        return "abort" if rc == -signal.SIGABRT else "signal:%d" % -rc
    if rc == 134:
        return "abort"
    return "fail"


def excerpt(out):
    """The first line that says what went wrong (for the JSON)."""
    for l in out.splitlines():
        if re.search(r"ERROR: |runtime error:|FAILURE:|violation|CHECK failed|FAIL", l):
            return l.strip()[:300]
    return ""


def with_dir(argv, bug):
    """The same command line against the same kind's build directory of @bug."""
    old = os.path.relpath(argv[0], ROOT).split(os.sep)
    for kind, (_, prefix, _) in sorted(KINDS.items(), key=lambda kv: -len(kv[1][1])):
        if old[1].startswith(prefix):
            old[1] = prefix + bug
            break
    return [os.path.join(ROOT, *old)] + argv[1:]


def rel(argv):
    return " ".join(os.path.relpath(a, ROOT) if os.path.isabs(a) else a for a in argv)


def read_options(target):
    """corpus/TARGET.options' [libfuzzer] section as -key=value flags."""
    flags = []
    try:
        with open(os.path.join(ROOT, "corpus", target + ".options")) as f:
            sect = None
            for l in f:
                l = l.strip()
                if l.startswith("["):
                    sect = l.strip("[]")
                elif "=" in l and sect == "libfuzzer":
                    k, v = (x.strip() for x in l.split("=", 1))
                    flags.append("-%s=%s" % (k, v))
    except OSError:
        pass
    return flags


class Runner:
    def __init__(self, budget, seeds):
        self.budget = budget
        self.seeds = seeds
        self.none_cache = {}      # argv -> (rc, seconds, out, to) on the correct builds

    def test_timeout(self):
        return max(60.0, 3.0 * self.budget)

    def one(self, argv, timeout, bug, **kw):
        if bug == "none" and not kw:
            k = tuple(argv)
            if k not in self.none_cache:
                self.none_cache[k] = run(argv, timeout)
            return self.none_cache[k]
        return run(argv, timeout, **kw)

    def corpus_files(self, target, tracked_only=False):
        """The seed corpus (files git tracks: fuzzing campaigns may have added others) and,
        unless @tracked_only, the regression inputs."""
        files = []
        dirs = [os.path.join("corpus", target)] + ([] if tracked_only else
                                                   [os.path.join("corpus", "regressions", target)])
        for d in dirs:
            r = subprocess.run(["git", "ls-files", "-z", "--", d], cwd=ROOT, stdout=subprocess.PIPE)
            listed = [f for f in r.stdout.decode().split("\0") if f]
            if r.returncode or not listed:
                ad = os.path.join(ROOT, d)
                listed = [os.path.join(d, f) for f in sorted(os.listdir(ad))] if os.path.isdir(ad) else []
            # op-text sources (src/*.txt) are not inputs; only the files right in the directory
            files += [os.path.join(ROOT, f) for f in sorted(listed)
                      if os.path.dirname(f) == d and os.path.isfile(os.path.join(ROOT, f))
                      and not os.path.basename(f).startswith(".")]
        return files

    def fuzz_argv(self, target, bug, seed):
        """libFuzzer from a fresh copy of the seed corpus, crash artifacts in the variant's zoo/ dir."""
        work = os.path.join(bdir(bug, "fuzz"), "zoo", "%s-seed%d" % (target, seed))
        shutil.rmtree(work, ignore_errors=True)
        cdir = os.path.join(work, "corpus")
        os.makedirs(cdir)
        os.makedirs(os.path.join(work, "crashes"))
        for f in self.corpus_files(target, tracked_only=True):
            shutil.copy(f, cdir)
        argv = [os.path.join(bdir(bug, "fuzz"), "targets", "fuzz_" + target)] + read_options(target) + [
            "-max_total_time=%d" % max(1, round(self.budget)), "-seed=%d" % seed, "-print_final_stats=0",
            "-artifact_prefix=%s/" % os.path.join(work, "crashes")]
        d = os.path.join(ROOT, "corpus", target + ".dict")
        if os.path.exists(d):
            argv.append("-dict=" + d)
        return argv + [cdir]

    def attempts(self, det, bug):
        """[(label, argv, timeout, run options)]: one per seed for stressors, schedulers and fuzzers."""
        kind, name = det_kind(det)
        seeds = range(1, self.seeds + 1)
        if kind in ("test", "test-gcc"):
            d = bdir(bug, "gcc" if kind == "test-gcc" else "asan")
            return [("-", [os.path.join(d, "tests", name)], self.test_timeout(), {})]
        if kind == "stress":
            # ends at its first FAILURE line (what follows - the stressor's own replay attempt - is not
            # the detection's time)
            return [(str(s), [os.path.join(bdir(bug), "stressors", "stress", "mmfuzz-stress"), name, "--time",
                              "%g" % self.budget, "--seed", str(s), "--quiet"], self.budget + 60.0,
                     {"stop": r"FAILURE"}) for s in seeds]
        if kind == "sched":
            # runs until the budget is spent; the first failed run ends it (its rerun line is the reproducer)
            # (not --quiet: the last "run I" line says which run a crash - no rerun line - was in)
            os.makedirs(os.path.join(bdir(bug), "zoo"), exist_ok=True)
            return [(str(s), [os.path.join(bdir(bug), "stressors", "sched", "mmfuzz-sched-stress"), name,
                              "--deterministic", "--seed", str(s), "--runs", "1000000",
                              "--artifact", os.path.join(bdir(bug), "zoo", "sched-%s-seed%d.sched" % (name, s))],
                     self.budget, {"stop": r"^rerun: ", "budget_ok": True}) for s in seeds]
        if kind in ("replay", "replay-gcc"):
            d = bdir(bug, "gcc" if kind == "replay-gcc" else "asan")
            return [("-", [os.path.join(d, "targets", "fuzz_" + name)] + self.corpus_files(name),
                     self.test_timeout(), {})]
        if kind == "fuzz":
            return [(str(s), self.fuzz_argv(name, bug, s), self.budget + 60.0, {}) for s in seeds]
        raise ValueError(det)

    def narrow(self, argv, bug, timeout):
        """A corpus replay failed: the first single input that fails alone is the reproducer."""
        for f in argv[1:]:
            rc, _, out, to = run([argv[0], f], timeout)
            if rc != 0 or to:
                return [argv[0], f]
        return argv

    def reproducer(self, det, bug, argv, out, timeout):
        """The command line that replays this detection on its own."""
        kind, name = det_kind(det)
        if kind in ("replay", "replay-gcc") and len(argv) > 2:
            return self.narrow(argv, bug, timeout)
        if kind == "fuzz":
            m = re.findall(r"Test unit written to (\S+)", out)
            if not m:
                return None
            return [os.path.join(bdir(bug), "targets", "fuzz_" + name), m[-1]]
        if kind == "sched":
            # the replay's own failure artifact goes to the variant's zoo/ dir, not the caller's directory
            art = ["--artifact", os.path.join(bdir(bug), "zoo", "replay-%s.sched" % name)]
            m = re.search(r"^rerun: \./mmfuzz stress (.*)$", out, re.M)
            if m:
                return [argv[0]] + m.group(1).split() + art
            # a crash (sanitizer, signal) ends the process before its rerun line: the run after
            # the last one reported; same seed and run number => the same interleaving
            runs = re.findall(r"^run (\d+) seed ", out, re.M)
            return argv[:3] + ["--seed", argv[argv.index("--seed") + 1], "--run",
                               str(int(runs[-1]) + 1 if runs else 0)] + art
        return argv

    def detector(self, det, bug, verify=True):
        """Run one detector against one build; with verify, replay each detection."""
        res = {"detector": det, "runs": []}
        for label, argv, timeout, kw in self.attempts(det, bug):
            rc, secs, out, to = self.one(argv, timeout, bug, **kw)
            failed = rc != 0 or to
            r = {"seed": label, "seconds": round(secs, 2), "rc": rc, "failed": failed}
            if failed:
                r["fired"] = fired(rc, out, to)
                r["what"] = excerpt(out)
                m = re.search(r"^rerun: (.*)$", out, re.M)
                if m:
                    r["printed_rerun"] = m.group(1).strip()
                repro = self.reproducer(det, bug, argv, out, timeout)
                r["reproducer"] = rel(repro) if repro else None
                if verify and bug != "none" and repro:
                    rtime = max(timeout, 60.0)
                    rkw = {"stop": kw["stop"]} if "stop" in kw else {}
                    rc2, _, out2, to2 = run(repro, rtime, **rkw)
                    r["replays_injected"] = rc2 != 0 or to2
                    good = with_dir(repro, "none")
                    rc3, _, out3, to3 = self.one(good, rtime, "none", **rkw)
                    r["passes_correct"] = rc3 == 0 and not to3
                    if not r["passes_correct"]:
                        r["correct_fired"] = fired(rc3, out3, to3)
                    r["detected"] = r["replays_injected"] and r["passes_correct"]
                elif verify and bug != "none":
                    r["replays_injected"] = False
                    r["detected"] = False
                else:
                    r["detected"] = True
            else:
                r["detected"] = False
            res["runs"].append(r)
            tag = ("DETECTED %s" % r["fired"]) if r["detected"] else \
                ("failed %s, did not replay (injected %s, correct %s)" % (
                    r["fired"], r.get("replays_injected"), r.get("passes_correct")) if failed else "clean")
            log("  %-28s %-24s seed %-2s %6.1f s  %s" % (bug, det, label, secs, tag))
        hits = [r for r in res["runs"] if r["detected"]]
        res["detected"] = bool(hits)
        res["hits"] = "%d/%d" % (len(hits), len(res["runs"]))
        times = [r["seconds"] for r in hits]
        res["median_seconds"] = round(statistics.median(times), 2) if times else None
        res["max_seconds"] = round(max(times), 2) if times else None
        res["fired"] = hits[0]["fired"] if hits else None
        res["reproducer"] = min(hits, key=lambda r: r["seconds"])["reproducer"] if hits else None
        return res


def best(dets):
    hit = [d for d in dets if d["detected"]]
    if not hit:
        return None

    def key(d):
        n, k = (int(x) for x in d["hits"].split("/"))
        return (-n / k, d["median_seconds"])
    return min(hit, key=key)


SMOKE_FUZZ_PENALTY = 5.0   # seconds: what a libFuzzer detector "costs" extra in the smoke's choice


def smoke_pick(b):
    """The smoke's detector for a stored bug entry: the fastest one that caught it on every seed
    (median), a libFuzzer one counted SMOKE_FUZZ_PENALTY s slower - its build tree (clang with
    coverage, the whole harness) costs more than the detection saves.  [] if none caught it."""
    if not b:
        return []
    cands = [d for d in b.get("detectors", []) if d.get("detected") and d.get("median_seconds") is not None
             and available(d["detector"])]
    full = [d for d in cands if d["hits"].split("/")[0] == d["hits"].split("/")[1]]
    cands = full or cands
    if not cands:
        return [b["best_detector"]] if b.get("best_detector") and available(b["best_detector"]) else []
    d = min(cands, key=lambda d: d["median_seconds"] + (SMOKE_FUZZ_PENALTY if d["detector"].startswith("fuzz:")
                                                        else 0.0))
    return [d["detector"]]


def bug_entry(bug, dets):
    b = best(dets)
    return {
        "id": bug,
        "detected": b is not None,
        "best_detector": b["detector"] if b else None,
        "median_seconds": b["median_seconds"] if b else None,
        "max_seconds": b["max_seconds"] if b else None,
        "fired": b["fired"] if b else None,
        "reproducer": b["reproducer"] if b else None,
        "hits": b["hits"] if b else None,
        "concurrency": bug in CONCURRENCY,
        "single_threaded_fuzz": sorted(d["detector"] for d in dets if d["detected"] and single_threaded_fuzz(d["detector"])),
        "detectors": dets,
    }


def fuzz_col(b):
    """The fastest single-threaded fuzz detector that caught @b, with its median."""
    if b.get("concurrency"):
        return "(concurrency)"
    ds = [d for d in b["detectors"] if d["detected"] and single_threaded_fuzz(d["detector"])]
    if not ds:
        return "NONE"
    d = min(ds, key=lambda d: d["median_seconds"])
    return "%s %.1f s" % (d["detector"], d["median_seconds"])


def table(bugs, control, smoke=False):
    print()
    fmt = "%-28s %-4s %-24s %6s %6s %-22s %-5s %s"
    print(fmt % ("bug", "det", "best detector", "median", "max", "fired", "hits", "single-threaded fuzz"))
    print("-" * 124)
    for b in bugs:
        print(fmt % (b["id"], "yes" if b["detected"] else "NO", b["best_detector"] or "-",
                     "%.1f" % b["median_seconds"] if b["median_seconds"] is not None else "-",
                     "%.1f" % b["max_seconds"] if b["max_seconds"] is not None else "-",
                     b["fired"] or "-", b["hits"] or "-", fuzz_col(b)))
    if control is not None:
        print(fmt % ("control (bugzoo-none)", "", "%d detectors" % len(control["detectors"]), "", "", "", "",
                     "%d findings" % control["findings"]))
        for f in control["detectors"]:
            for r in f["runs"]:
                if r["failed"]:
                    print("    FALSE POSITIVE: %s seed %s: %s %s" % (f["detector"], r["seed"], r["fired"],
                                                                  r["reproducer"]))
    n = sum(b["detected"] for b in bugs)
    meds = [b["median_seconds"] for b in bugs if b["detected"]]
    st = [b for b in bugs if not b.get("concurrency")]
    print("-" * 124)
    line = "detected %d/%d; %d with median <= 10 s" % (n, len(bugs), sum(m <= 10 for m in meds))
    if not smoke:      # the smoke runs one detector per bug: the column says nothing there
        line += "; %d/%d non-concurrency bugs caught by a single-threaded fuzz target" % (
            sum(1 for b in st if fuzz_col(b) != "NONE"), len(st))
    print(line)


def machine():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for l in f:
                if l.startswith("model name"):
                    model = l.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": model, "nproc": os.cpu_count()}


def git_head():
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    return r.stdout.strip()


# ---------------------------------------------------------------- main

def main(root, args, doc):
    global ROOT, JOBS
    ROOT = root
    opts = {"only": None, "budget": None, "seeds": None, "json": None}
    flags = set()
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-h", "--help"):
            print(doc)
            return 0
        if a in ("--list", "--smoke", "--store"):
            flags.add(a)
        elif a in ("--only", "--budget", "--seeds", "--json", "--jobs"):
            if i + 1 >= len(args):
                die("%s needs a value" % a)
            if opts.get(a[2:]) is not None:        # not the last one silently
                die("%s given twice" % a)
            opts[a[2:]] = args[i + 1]
            i += 1
        else:
            die("unknown argument %s (see --help)" % a)
        i += 1
    if "--list" in flags:
        if len(flags) > 1 or any(v is not None for v in opts.values()):
            die("--list takes no other option")
        do_list()
        return 0
    smoke = "--smoke" in flags
    # Before the builds and runs: it was refused after the whole run, its results not stored.
    if "--store" in flags and (smoke or opts["only"] is not None):
        die("--store records a full run only (no --smoke, no --only)")
    try:
        budget = float(opts["budget"] or (10 if smoke else 20))
        seeds = int(opts["seeds"] or (1 if smoke else 3))
        if opts.get("jobs"):
            JOBS = int(opts["jobs"])
    except ValueError:
        die("--budget, --seeds and --jobs take numbers")
    if not (math.isfinite(budget) and budget > 0) or seeds < 1 or JOBS < 1:
        die("--budget takes seconds > 0, --seeds and --jobs whole numbers >= 1")
    if opts["json"] is not None and cannot_create("--json", opts["json"]):
        die(cannot_create("--json", opts["json"]))
    ids = [r[0] for r in bug_table()]
    if opts["only"] is not None:
        sel = [s for s in opts["only"].split(",") if s]
        if not sel:            # it ran no bug at all and said SUCCESS
            die("--only names no id (see --list)")
        bad = [s for s in sel if s not in ids]
        if bad:
            die("unknown id(s): %s (see --list)" % ", ".join(bad))
        ids = [i for i in ids if i in sel]
    missing = [i for i in ids if i not in DETECTORS]
    if missing:
        die("no detectors listed for %s in tools/bugzoo/detectors.py" % ", ".join(missing))

    stored_path = os.path.join(ROOT, "bench", "results", "bugzoo.json")
    plan = {}
    if smoke:
        try:
            with open(stored_path) as f:
                stored = {b["id"]: b for b in json.load(f)["bugs"]}
        except (OSError, ValueError, KeyError) as e:
            die("--smoke needs %s from a full run: %s" % (os.path.relpath(stored_path, ROOT), e))
        for i in ids:
            plan[i] = smoke_pick(stored.get(i))
    else:
        plan = {i: [d for d in DETECTORS[i] if available(d)] for i in ids}

    t_start = time.time()
    R = Runner(budget, seeds)
    log("bugzoo: %d bug(s), budget %g s, seeds %d%s" % (len(ids), budget, seeds, ", smoke" if smoke else ""))
    all_dets = sorted({d for i in ids for d in plan[i]}) or ["test:test_pcp"]
    build_s = {}

    # Ctrl-C (or SIGTERM): the detector running now is stopped, no further one starts, and the
    # table (and --json, "interrupted": true) covers what ran; exit 130 unless something failed.
    # It was a traceback, every result lost.
    signal.signal(signal.SIGINT, signal.default_int_handler)     # also when started with it ignored (&)
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    control = None
    cdets = []
    bugs = []
    regress = []
    interrupted = False
    try:
        build_s = {"none": build("none", all_dets)}
        if not smoke:
            log("control: every detector against build/bugzoo-none")
            for d in all_dets:
                if buildable(d, "none"):
                    cdets.append(R.detector(d, "none", verify=False))
        run_bugs(R, ids, plan, smoke, build_s, bugs, regress)
    except KeyboardInterrupt:
        interrupted = True
        done = [b["id"] for b in bugs]
        log("interrupted: the table covers what ran (%s)" % (
            "bugs %s" % ", ".join(done) if done else "no bug" + (", control run in part" if cdets else "")))
    if not smoke:
        findings = sum(1 for d in cdets for r in d["runs"] if r["failed"])
        control = {"findings": findings, "detectors": cdets}
    wall = time.time() - t_start
    return finish(opts, flags, stored_path, smoke, budget, seeds, wall, build_s, control, bugs, regress,
                  interrupted)


def run_bugs(R, ids, plan, smoke, build_s, bugs, regress):
    """Each bug in turn: its build, its detectors; appends to @bugs and @regress as it goes."""
    for bug in ids:
        if not plan[bug]:
            log("%s: no detector recorded as detecting it - reported undetected, not run" % bug)
            bugs.append(bug_entry(bug, []))
            if smoke:
                regress.append(bug)
            continue
        build_s[bug] = build(bug, plan[bug])
        skipped = [d for d in plan[bug] if not buildable(d, bug)]
        dets = [R.detector(d, bug) for d in plan[bug] if buildable(d, bug)]
        e = bug_entry(bug, dets)
        if skipped:
            e["build_failed"] = skipped
            log("%s: not run (a build they need failed): %s" % (bug, " ".join(skipped)))
            if smoke and not e["detected"]:
                log("%s: FAILED TO BUILD what its recorded detector needs" % bug)
        bugs.append(e)
        log("%s: %s" % (bug, ("DETECTED by %s (%s) median %.1f s, max %.1f s" % (
            e["best_detector"], e["fired"], e["median_seconds"], e["max_seconds"])) if e["detected"]
            else "NOT DETECTED"))
        if smoke and not e["detected"]:
            regress.append(bug)


def finish(opts, flags, stored_path, smoke, budget, seeds, wall, build_s, control, bugs, regress, interrupted):
    """The table, --json and --store; the exit status."""
    if control is None:
        # smoke: the correct-build replays are the control
        fp = sum(1 for b in bugs for d in b["detectors"] for r in d["runs"]
                 if r["failed"] and r.get("passes_correct") is False)
        control = {"findings": 0, "detectors": [], "note": "smoke: only the reproducers' replays on bugzoo-none",
                   "replays_failing_on_correct": fp}
    table(bugs, control, smoke)
    print("wall time %.0f s (builds %.0f s)" % (wall, sum(build_s.values())))

    doc_out = {"bugs": bugs, "control": control}
    if interrupted:
        doc_out["interrupted"] = True
    meta = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"), "machine": machine(),
            "commit": git_head(), "budget_seconds": budget, "seeds": seeds, "smoke": smoke,
            "wall_seconds": round(wall, 1), "build_seconds": {k: round(v, 1) for k, v in build_s.items()}}
    unwritten = False
    if opts["json"] is not None:
        try:
            write_whole(opts["json"], data=(json.dumps(doc_out, indent=1) + "\n").encode())
        except OSError as e:
            print("mmfuzz bugzoo: cannot write --json %s: %s" % (opts["json"], e.strerror), file=sys.stderr)
            unwritten = True
    if "--store" in flags and interrupted:
        log("interrupted: %s not stored (a full run only)" % os.path.relpath(stored_path, ROOT))
    elif "--store" in flags:
        out = dict(meta)
        out.update(doc_out)
        try:
            write_whole(stored_path, data=(json.dumps(out, indent=1) + "\n").encode())
            log("stored %s" % os.path.relpath(stored_path, ROOT))
        except OSError as e:
            print("mmfuzz bugzoo: cannot store %s: %s" % (stored_path, e.strerror), file=sys.stderr)
            unwritten = True
    if control["findings"]:
        print("FAILURE: %d false positive(s) in the control run" % control["findings"])
        return 1
    if regress:
        print("FAILURE: not detected by its recorded detector: %s" % ", ".join(regress))
        return 1
    if unwritten:
        return 2
    if interrupted:
        print("INTERRUPTED")
        return 130
    print("SUCCESS")
    return 0

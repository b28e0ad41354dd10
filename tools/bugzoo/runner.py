"""The bug-zoo runner behind `./mmfuzz bugzoo` (python3 standard library only)."""
import datetime
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time

from detectors import CONCURRENCY, DETECTORS

ROOT = None
JOBS = os.cpu_count() or 2
RUN_ENV = dict(os.environ)
RUN_ENV.update({
    "ASAN_OPTIONS": "abort_on_error=0:detect_leaks=1",
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

def bdir(bug):
    return os.path.join(ROOT, "build", "bugzoo-" + bug)


def target_of(det):
    kind, name = det.split(":", 1)
    return {"test": name, "stress": "mmfuzz-stress", "replay": "fuzz_" + name}[kind]


def build(bug, dets):
    d = bdir(bug)
    inj = "" if bug == "none" else bug
    t0 = time.time()
    if not os.path.exists(os.path.join(d, "CMakeCache.txt")):
        env = dict(os.environ, MM_INJECT=inj)
        # -Werror off for injected variants: an injection may leave a helper unused
        # (pcp-bulk-count-unclamped leaves nr_pcp_free); the correct build keeps it.
        werr = [] if not inj else ["-DMM_WERROR=OFF"]
        r = subprocess.run(["cmake", "--preset", "bugzoo", "-B", d, "-DMM_INJECT=" + inj] + werr, cwd=ROOT, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode:
            die("configuring %s failed:\n%s" % (d, r.stdout[-3000:]))
    targets = sorted({target_of(x) for x in dets})
    r = subprocess.run(["ninja", "-C", d, "-j", str(JOBS)] + targets, cwd=ROOT,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        if bug == "none":
            die("building %s (%s) failed:\n%s" % (d, " ".join(targets), r.stdout[-4000:]))
        log("BUILD FAILED %s:\n%s" % (d, r.stdout[-2000:]))
        return None
    log("built %-28s %5.1f s (%s)" % ("bugzoo-" + bug, time.time() - t0, " ".join(targets)))
    return time.time() - t0


# ---------------------------------------------------------------- running

def run(argv, timeout):
    """(rc, seconds, output, timed_out); the whole process group dies on timeout."""
    t0 = time.time()
    p = subprocess.Popen(argv, cwd=ROOT, env=RUN_ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
        to = False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        to = True
    return p.returncode, time.time() - t0, out.decode("utf-8", "replace"), to


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
    """The same command line against another build directory."""
    old = os.path.relpath(argv[0], ROOT).split(os.sep)
    old[1] = "bugzoo-" + bug
    return [os.path.join(ROOT, *old)] + argv[1:]


def rel(argv):
    return " ".join(os.path.relpath(a, ROOT) if os.path.isabs(a) else a for a in argv)


class Runner:
    def __init__(self, budget, seeds):
        self.budget = budget
        self.seeds = seeds
        self.none_cache = {}      # argv -> (rc, seconds, out, to) on build/bugzoo-none

    def test_timeout(self):
        return max(60.0, 3.0 * self.budget)

    def one(self, argv, timeout, bug):
        if bug == "none":
            k = tuple(argv)
            if k not in self.none_cache:
                self.none_cache[k] = run(argv, timeout)
            return self.none_cache[k]
        return run(argv, timeout)

    def corpus_files(self, target):
        files = []
        for d in (os.path.join(ROOT, "corpus", target), os.path.join(ROOT, "corpus", "regressions", target)):
            if os.path.isdir(d):
                files += sorted(os.path.join(d, f) for f in os.listdir(d)
                                if os.path.isfile(os.path.join(d, f)) and not f.startswith("."))
        return files

    def attempts(self, det, bug):
        """[(label, argv, timeout)]: one per seed for the stressor, one for the others."""
        kind, name = det.split(":", 1)
        d = bdir(bug)
        if kind == "test":
            return [("-", [os.path.join(d, "tests", name)], self.test_timeout())]
        if kind == "stress":
            return [(str(s), [os.path.join(d, "stressors", "stress", "mmfuzz-stress"), name, "--time",
                              "%g" % self.budget, "--seed", str(s), "--quiet"], self.budget + 60.0)
                    for s in range(1, self.seeds + 1)]
        if kind == "replay":
            return [("-", [os.path.join(d, "targets", "fuzz_" + name)] + self.corpus_files(name),
                     self.test_timeout())]
        raise ValueError(det)

    def narrow(self, argv, bug, timeout):
        """A corpus replay failed: the first single input that fails alone is the reproducer."""
        for f in argv[1:]:
            rc, _, out, to = run([argv[0], f], timeout)
            if rc != 0 or to:
                return [argv[0], f]
        return argv

    def detector(self, det, bug, verify=True):
        """Run one detector against one build; with verify, replay each detection."""
        res = {"detector": det, "runs": []}
        for label, argv, timeout in self.attempts(det, bug):
            rc, secs, out, to = self.one(argv, timeout, bug)
            failed = rc != 0 or to
            r = {"seed": label, "seconds": round(secs, 2), "rc": rc, "failed": failed}
            if failed:
                r["fired"] = fired(rc, out, to)
                r["what"] = excerpt(out)
                m = re.search(r"^rerun: (.*)$", out, re.M)
                if m:
                    r["printed_rerun"] = m.group(1).strip()
                repro = argv
                if det.startswith("replay:") and len(argv) > 2:
                    repro = self.narrow(argv, bug, timeout)
                r["reproducer"] = rel(repro)
                if verify and bug != "none":
                    rc2, _, out2, to2 = run(repro, timeout)
                    r["replays_injected"] = rc2 != 0 or to2
                    good = with_dir(repro, "none")
                    rc3, _, out3, to3 = self.one(good, timeout, "none")
                    r["passes_correct"] = rc3 == 0 and not to3
                    if not r["passes_correct"]:
                        r["correct_fired"] = fired(rc3, out3, to3)
                    r["detected"] = r["replays_injected"] and r["passes_correct"]
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
        "single_threaded_fuzz": any(d["detected"] for d in dets if d["detector"].startswith("replay:")),
        "detectors": dets,
    }


def table(bugs, control):
    print()
    fmt = "%-28s %-4s %-24s %6s %6s %-22s %s"
    print(fmt % ("bug", "det", "best detector", "median", "max", "fired", "hits"))
    print("-" * 100)
    for b in bugs:
        print(fmt % (b["id"], "yes" if b["detected"] else "NO", b["best_detector"] or "-",
                     "%.1f" % b["median_seconds"] if b["median_seconds"] is not None else "-",
                     "%.1f" % b["max_seconds"] if b["max_seconds"] is not None else "-",
                     b["fired"] or "-", b["hits"] or "-"))
    if control is not None:
        print(fmt % ("control (bugzoo-none)", "", "%d detectors" % len(control["detectors"]), "", "", "",
                     "%d findings" % control["findings"]))
        for f in control["detectors"]:
            for r in f["runs"]:
                if r["failed"]:
                    print("    FALSE POSITIVE: %s seed %s: %s %s" % (f["detector"], r["seed"], r["fired"],
                                                                  r["reproducer"]))
    n = sum(b["detected"] for b in bugs)
    meds = [b["median_seconds"] for b in bugs if b["detected"]]
    print("-" * 100)
    print("detected %d/%d; %d with median <= 10 s" % (n, len(bugs), sum(m <= 10 for m in meds)))


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
            opts[a[2:]] = args[i + 1]
            i += 1
        else:
            die("unknown argument %s (see --help)" % a)
        i += 1
    if "--list" in flags:
        do_list()
        return 0
    smoke = "--smoke" in flags
    try:
        budget = float(opts["budget"] or (10 if smoke else 20))
        seeds = int(opts["seeds"] or (1 if smoke else 3))
        if opts.get("jobs"):
            JOBS = int(opts["jobs"])
    except ValueError:
        die("--budget, --seeds and --jobs take numbers")
    ids = [r[0] for r in bug_table()]
    if opts["only"]:
        sel = [s for s in opts["only"].split(",") if s]
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
            b = stored.get(i)
            plan[i] = [b["best_detector"]] if b and b.get("best_detector") else []
    else:
        plan = {i: DETECTORS[i] for i in ids}

    t_start = time.time()
    R = Runner(budget, seeds)
    log("bugzoo: %d bug(s), budget %g s, seeds %d%s" % (len(ids), budget, seeds, ", smoke" if smoke else ""))
    all_dets = sorted({d for i in ids for d in plan[i]}) or ["test:test_pcp"]
    build_s = {"none": build("none", all_dets)}

    control = None
    if not smoke:
        log("control: every detector against build/bugzoo-none")
        cdets = [R.detector(d, "none", verify=False) for d in all_dets]
        findings = sum(1 for d in cdets for r in d["runs"] if r["failed"])
        control = {"findings": findings, "detectors": cdets}

    bugs = []
    regress = []
    for bug in ids:
        if not plan[bug]:
            log("%s: no detector recorded as detecting it - reported undetected, not run" % bug)
            bugs.append(bug_entry(bug, []))
            continue
        build_s[bug] = build(bug, plan[bug])
        if build_s[bug] is None:
            build_s[bug] = 0.0
            e = bug_entry(bug, [])
            e["build_failed"] = True
            bugs.append(e)
            regress.append(bug) if smoke else None
            continue
        dets = [R.detector(d, bug) for d in plan[bug]]
        e = bug_entry(bug, dets)
        bugs.append(e)
        log("%s: %s" % (bug, ("DETECTED by %s (%s) median %.1f s, max %.1f s" % (
            e["best_detector"], e["fired"], e["median_seconds"], e["max_seconds"])) if e["detected"]
            else "NOT DETECTED"))
        if smoke and not e["detected"]:
            regress.append(bug)
    wall = time.time() - t_start
    if control is None:
        # smoke: the correct-build replays are the control
        fp = sum(1 for b in bugs for d in b["detectors"] for r in d["runs"]
                 if r["failed"] and r.get("passes_correct") is False)
        control = {"findings": 0, "detectors": [], "note": "smoke: only the reproducers' replays on bugzoo-none",
                   "replays_failing_on_correct": fp}
    table(bugs, control)
    print("wall time %.0f s (builds %.0f s)" % (wall, sum(build_s.values())))

    doc_out = {"bugs": bugs, "control": control}
    meta = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"), "machine": machine(),
            "commit": git_head(), "budget_seconds": budget, "seeds": seeds, "smoke": smoke,
            "wall_seconds": round(wall, 1), "build_seconds": {k: round(v, 1) for k, v in build_s.items()}}
    if opts["json"]:
        with open(opts["json"], "w") as f:
            json.dump(doc_out, f, indent=1)
            f.write("\n")
    if "--store" in flags:
        if smoke or opts["only"]:
            die("--store records a full run only (no --smoke, no --only)")
        out = dict(meta)
        out.update(doc_out)
        with open(stored_path, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
        log("stored %s" % os.path.relpath(stored_path, ROOT))
    if control["findings"]:
        print("FAILURE: %d false positive(s) in the control run" % control["findings"])
        return 1
    if regress:
        print("FAILURE: not detected by its recorded detector: %s" % ", ".join(regress))
        return 1
    print("SUCCESS")
    return 0

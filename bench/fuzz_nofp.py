#!/usr/bin/env python3
"""fuzz_nofp.py - the "no false positives" campaign (issue 5, "Goals": at least
10 million executions per fuzz target on the correct allocator, zero findings).

Runs libFuzzer on every fuzz target of targets/TARGETS (or --targets) until
each has --execs executions, in chunks of --chunk seconds, and keeps count:
after every chunk its executions (libFuzzer's stat::number_of_executed_units),
CPU and wall seconds and any finding go into the JSON file, written
atomically, so an interrupted run (Ctrl-C, SIGTERM, --budget) loses nothing
it has counted, and the next invocation continues the totals.

--jobs J runs J libFuzzer processes at once; J may exceed the number of
targets: then up to ceil(J / targets) chunks of one target run at once
("slots"; --jobs 16 on the 8 targets: two of each), sharing the target's
corpus, each with its own artifact prefix (slot k > 0: crashes/s<k>-crash-...)
and log, so a finding belongs to the chunk that made it.  The executions of
all the slots add up in the target's one count.

Each target's count belongs to its fuzz binary (a fuzz binary is the whole
system under test: allocator, harness and libFuzzer, statically linked): the
entry records the binary's sha256 ("binary") and where its count began
("since": tree, commit, date).  The build and the MMFUZZ_* checker settings
must match for anything to continue; then, on another source tree, a target
whose binary is byte-identical continues its count and one whose binary
changed restarts from zero, its old entry (findings included) kept in
"superseded" - a fix in one target's harness no longer costs the others.

Executions run on other machines are merged in with --import: there, a copy
of the build dir (build/nofp-<build>/targets/fuzz_* and fuzz_nofp-stamp.json)
runs `bench/fuzz_nofp.py --no-build --build-dir DIR --json X.json ...`; here,
`bench/fuzz_nofp.py --import X.json` adds X.json's executions, CPU and wall
seconds, chunks and findings to the JSON, when it counts the same build and
checker settings and each target the same binary (entries without one: the
same tree), and each file only once.

Timeouts are rechecked.  libFuzzer's -timeout (corpus/TARGET.options) is
wall-clock, and a campaign at nice 19 beside other work can be starved of
CPU until an input that takes 0.4 s "times out".  So after a chunk, each new
timeout-* artifact is replayed alone - the same binary, options, MMFUZZ_*
environment and nice, killed past 10x -timeout of wall time - and the
finding gets "recheck": {exit, cpu_s, wall_s, date, verdict}.  "starved"
(exit 0 in under a quarter of -timeout of CPU time: the input cannot have
used the timeout's worth of CPU) stays listed but is no finding: goal_met,
the exit status and the stop rule leave it out.  Anything else is "timeout",
a real finding.  --recheck-timeouts does the same for the timeout findings
already in the JSON without a "recheck" ("missing" when the file is gone: a
finding), with the binary the entry records.

Usage: bench/fuzz_nofp.py [--execs N] [--targets a,b] [--jobs J] [--budget S] ...
       bench/fuzz_nofp.py --import X.json [--import Y.json ...] [--json FILE]
       bench/fuzz_nofp.py --recheck-timeouts [--json FILE] [--targets a,b]
       ./mmfuzz bench fuzz_nofp [--quick] [--json FILE]
(the bench verb passes only --quick and --json; run the script itself for
the other options).
"""
import argparse
import datetime
import fcntl
import hashlib
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.environ.get("MMFUZZ_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from bounded import libfuzzer_options  # noqa: E402
import fuzz_targets  # noqa: E402

# The sources that decide what a fuzz target does: the allocator, the targets
# and their harness, the deterministic scheduler fuzz_sched links (stressors/
# sched), the build logic; for the asan build also the preset it uses.
# corpus/ is left out: seeds decide where fuzzing starts, not what is correct.
TREE_PATHS = ["allocator", "targets", "stressors", "cmake", "CMakeLists.txt"]

BUILDS = {
    "ubsan": {
        "dir": "build/nofp-ubsan",
        "desc": "clang -O2 -g, libFuzzer, UBSan, MM_DEBUG=2 (no ASan)",
        "tree_extra": [],
    },
    "asan": {
        "dir": "build/nofp-asan",
        "desc": "the fuzz preset: clang -O1 -g, libFuzzer, ASan+UBSan, MM_DEBUG=2",
        "tree_extra": ["CMakePresets.json"],
    },
}

ARTIFACT_PREFIXES = ("crash-", "leak-", "timeout-", "oom-")
INTERRUPT_EXIT = 72          # libFuzzer's -interrupted_exitcode default: SIGINT/SIGTERM, stats printed
EXECS_RE = re.compile(r"^stat::number_of_executed_units: (\d+)", re.M)
STATUS_RE = re.compile(r"^#(\d+)\s", re.M)
WRITTEN_RE = re.compile(r"Test unit written to (\S+)")
STAMP = "fuzz_nofp-stamp.json"
STALL_LIMIT = 3              # chunks in a row that end in a finding or run nothing: stop the target
QUICK = {"execs": 2000, "chunk": 10}
TIMEOUT_RE = re.compile(r"^(s\d+-)?timeout-")   # a timeout-* artifact, of any slot
LIBFUZZER_TIMEOUT = 1200     # libFuzzer's -timeout default, for a target whose .options set none
RECHECK_BOUND = 10           # a recheck's wall-clock bound, in -timeouts
STARVED_SHARE = 0.25         # a replay under this share of -timeout in CPU time cannot have used the timeout


class UsageError(Exception):
    """Bad arguments or a state the user must resolve: exit status 2."""


class BuildError(Exception):
    """A failed build, or binaries that are not what the stamp says: exit status 1."""


def log(msg):
    print("fuzz_nofp: " + msg, file=sys.stderr, flush=True)


def all_targets():
    return fuzz_targets.names(ROOT)


def now_utc():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def rel(p):
    return os.path.relpath(p, ROOT) if p.startswith(ROOT + os.sep) else p


def human(n):
    return "{:,}".format(int(n))


def duration(s):
    s = int(s)
    return "%dh%02dm" % (s // 3600, s % 3600 // 60) if s >= 3600 else "%dm%02ds" % (s // 60, s % 60)


# ------------------------------------------------------------------ the source's identity

def git(*args):
    r = subprocess.run(["git", "-C", ROOT] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return r.returncode, r.stdout


def tree_state(build):
    """What the fuzz binaries are built from: a hash of the committed trees of
    TREE_PATHS at HEAD, and the paths under them with uncommitted changes
    (untracked files included: CMake globs pick up new sources).  With changes,
    the hash covers them too, so that only the same dirty state continues."""
    rc, head = git("rev-parse", "--verify", "HEAD")
    if rc:
        raise UsageError("%s is not a git checkout with a commit: cannot tell which source ran" % ROOT)
    paths = TREE_PATHS + BUILDS[build]["tree_extra"]
    h = hashlib.sha1()
    for p in paths:
        rc, oid = git("rev-parse", "--verify", "--quiet", "HEAD:" + p)
        h.update(("%s %s\n" % (p, oid.decode().strip() if rc == 0 else "absent")).encode())
    tree = h.hexdigest()[:16]
    rc, st = git("status", "--porcelain", "--untracked-files=all", "--", *paths)
    dirty = sorted(set(line[3:] for line in st.decode(errors="replace").splitlines() if len(line) > 3))
    if dirty:
        d = hashlib.sha1()
        d.update(git("diff", "HEAD", "--", *paths)[1])
        for p in dirty:
            f = os.path.join(ROOT, p.split(" -> ")[-1].strip('"'))
            if os.path.isfile(f) and not git("ls-files", "--error-unmatch", "--", p)[0] == 0:
                d.update(p.encode())
                with open(f, "rb") as fh:
                    d.update(fh.read())
        tree += "+dirty-" + d.hexdigest()[:8]
    return {"tree": tree, "commit": head.decode().strip(), "dirty": dirty}


# ------------------------------------------------------------------ build

def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def binary_path(build_dir, name):
    return os.path.join(build_dir, "targets", "fuzz_" + name)


def niced(level):
    def pre():
        try:
            os.setpriority(os.PRIO_PROCESS, 0, level)
        except OSError:
            pass                # already nicer than asked, and not allowed back
    return pre


def configure_cmd(build, build_dir):
    if build == "asan":
        return ["cmake", "--preset", "fuzz", "-B", build_dir]
    return ["cmake", "-S", ROOT, "-B", build_dir, "-G", "Ninja", "-DCMAKE_C_COMPILER=clang",
            "-DCMAKE_BUILD_TYPE=RelWithDebInfo", "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g",
            "-DMM_ENGINE=libfuzzer", "-DMM_SANITIZE=undefined", "-DMM_DEBUG=2", "-DMM_TEST_HOOKS=ON",
            "-DMM_INJECT=", "-DMM_WERROR=OFF", "-DMM_COVERAGE=OFF"]


def read_stamp(build_dir):
    try:
        with open(os.path.join(build_dir, STAMP)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def write_stamp(build_dir, build, state, names):
    """Records which source tree the binaries were built from, and their hashes."""
    old = read_stamp(build_dir)
    bins = old["binaries"] if old and old.get("tree") == state["tree"] and old.get("build") == build else {}
    for n in names:
        bins[n] = sha256(binary_path(build_dir, n))
    stamp = dict(state, build=build, binaries=bins, date=now_utc())
    atomic_write(os.path.join(build_dir, STAMP), stamp)
    return stamp


def build_targets(build, build_dir, names, nice):
    """Configures and builds fuzz_<name> for names; the tree must be the same
    before and after the build (the checkout is shared), else builds again."""
    for attempt in range(3):
        before = tree_state(build)
        log("building %s (%s) in %s" % (", ".join("fuzz_" + n for n in names), BUILDS[build]["desc"], rel(build_dir)))
        for cmd in (configure_cmd(build, build_dir),
                    ["cmake", "--build", build_dir, "--target"] + ["fuzz_" + n for n in names]):
            r = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               errors="replace", preexec_fn=niced(nice))
            if r.returncode:
                sys.stderr.write(r.stdout[-4000:])
                raise BuildError("%s failed" % " ".join(cmd[:3]))
        after = tree_state(build)
        if after == before:
            return write_stamp(build_dir, build, after, names)
        log("the source changed during the build (%s -> %s): building again" % (before["tree"], after["tree"]))
    raise BuildError("the source kept changing during the build; try again when the checkout is quiet")


def check_binaries(stamp, build_dir, names):
    """The binaries are the ones the stamp describes (nobody rebuilt them since)."""
    for n in names:
        b = binary_path(build_dir, n)
        if not os.access(b, os.X_OK):
            raise BuildError("no %s (drop --no-build)" % rel(b))
        want = (stamp or {}).get("binaries", {}).get(n)
        if want is None:
            raise BuildError("%s was not built by fuzz_nofp.py: its source tree is unknown (drop --no-build)" % rel(b))
        if sha256(b) != want:
            raise BuildError("%s changed since fuzz_nofp.py built it (tree %s): rebuild (drop --no-build)" %
                             (rel(b), stamp["tree"]))


# ------------------------------------------------------------------ results: continue or start fresh

# Set by the front door (./mmfuzz) for its verbs: where the checkout is, not a checker setting.
NOT_CHECKER_ENV = ("MMFUZZ_ROOT",)


def checker_env():
    """The MMFUZZ_* settings the runs inherit (none: the targets' own check levels)."""
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith("MMFUZZ_") and k not in NOT_CHECKER_ENV}


def identity(stamp, build):
    return {"tree": stamp["tree"], "build": build, "checker_env": checker_env()}


def decide(prev, ident, fresh):
    """Whether prev's totals continue at all: (True, None) for the same tree,
    (True, why) when only the tree differs - then each target continues or
    restarts by its binary (plan()) -, (False, why) to start fresh."""
    if fresh:
        return False, "--fresh"
    if prev is None:
        return False, "no earlier results"
    if prev.get("build") != ident["build"]:
        return False, "the earlier results are the %s build's, this run is %s" % (prev.get("build"), ident["build"])
    if prev.get("checker_env", {}) != ident["checker_env"]:
        return False, ("the checker settings differ: earlier %s, now %s" %
                       (prev.get("checker_env", {}) or "the targets' own", ident["checker_env"] or "the targets' own"))
    if prev.get("tree") != ident["tree"]:
        return True, ("the source differs: the earlier executions ran tree %s (commit %s), this build is tree %s; "
                      "each target continues only if its fuzz binary is byte-identical" %
                      (prev.get("tree"), str(prev.get("commit"))[:12], ident["tree"]))
    return True, None


def short(h, n=12):
    return str(h)[:n] if h else "none"


def plan(prev, ident, stamp, names, cont):
    """What becomes of each target of names: {name: (action, why)}, action one
    of "continue", "restart", "new" (no entry yet, or a fresh start) and
    "unknown" (a dry run before a build: the build decides).  A target's count
    continues when its entry's "binary" (the sha256 of the fuzz binary its
    executions ran on) is the stamp's binary for it: a fuzz binary is the whole
    system under test (allocator, harness, libFuzzer, statically linked), so
    a byte-identical one continues the count across source trees.  An entry
    without "binary" (written before binaries were recorded) continues only
    on the same tree."""
    res = {}
    old = {e["name"]: e for e in prev["targets"]} if cont else {}
    bins = stamp.get("binaries") or {}
    same_tree = cont and prev.get("tree") == ident["tree"]
    for n in names:
        e = old.get(n)
        now = bins.get(n)
        was = e.get("binary") if e else None
        frm = (e.get("since") or {}).get("tree") if e and isinstance(e.get("since"), dict) else None
        trees = "tree %s -> %s" % (frm or prev.get("tree"), ident["tree"]) if e else ""
        if e is None:
            res[n] = ("new", None)
        elif was is None:
            res[n] = (("continue", "same tree") if same_tree else
                      ("restart", "fuzz_%s: its count records no binary (from before per-target identity; %s)" %
                       (n, trees)))
        elif now is None:
            res[n] = ("unknown", "continues if the build leaves fuzz_%s byte-identical (binary %s), else restarts" %
                      (n, short(was)))
        elif now == was:
            res[n] = ("continue", "binary %s unchanged" % short(was))
        else:
            res[n] = ("restart", "fuzz_%s changed (%s; binary %s -> %s)" % (n, trees, short(was), short(now)))
    return res


def hold_tree(doc, tree, commit, date, names):
    """doc["trees"]: the source trees whose executions the totals hold, each
    with the targets whose counts hold some ({tree, commit, first_seen, targets})."""
    trees = doc.setdefault("trees", [])
    for t in trees:
        if t.get("tree") == tree:
            t["targets"] = t.get("targets", []) + [n for n in names if n not in t.get("targets", [])]
            return
    trees.append({"tree": tree, "commit": commit, "first_seen": date, "targets": list(names)})


def release_target(doc, name):
    """name's count starts again: no tree holds its executions any more."""
    for t in doc.get("trees", []):
        t["targets"] = [x for x in t.get("targets", []) if x != name]
    doc["trees"] = [t for t in doc.get("trees", []) if t["targets"]]


def ensure_trees(doc):
    """A doc written before doc["trees"]: all its counts ran its tree."""
    if "trees" not in doc:
        doc["trees"] = []
        names = [e["name"] for e in doc["targets"] if isinstance(e, dict) and "name" in e]
        if names:
            hold_tree(doc, doc.get("tree"), doc.get("commit"), doc.get("started"), names)


def entry_tree(doc, e):
    """The tree whose executions an entry without "binary" holds (it never
    continued across trees): its since, else the first tree listing it."""
    if isinstance(e.get("since"), dict) and e["since"].get("tree"):
        return e["since"]["tree"]
    for t in doc.get("trees", []):
        if e["name"] in t.get("targets", []):
            return t.get("tree")
    return doc.get("tree")


def apply_plan(doc, prev, stamp, plans):
    """Restarts (old entry into doc["superseded"]) and fills binary/since of
    the targets of plans; returns the names restarted."""
    since = {"tree": stamp["tree"], "commit": stamp["commit"], "date": now_utc()}
    bins = stamp.get("binaries") or {}
    restarted = []
    for n, (action, why) in plans.items():
        e = entry(doc, n)
        if action == "restart":
            old = dict(e, reason=why, tree=prev.get("tree"), commit=prev.get("commit"),
                       superseded_at=now_utc(), superseded_by={"tree": stamp["tree"], "commit": stamp["commit"]})
            doc.setdefault("superseded", []).append(old)
            fresh = new_entry(n, doc["build"])
            doc["targets"][doc["targets"].index(e)] = fresh
            release_target(doc, n)
            e = fresh
            restarted.append(n)
        if action in ("restart", "new"):
            e["since"] = dict(since)
        elif action == "continue" and not isinstance(e.get("since"), dict):
            e["since"] = {"tree": prev.get("tree"), "commit": prev.get("commit"), "date": prev.get("started")}
        if bins.get(n) and (action != "unknown"):
            e["binary"] = bins[n]
    hold_tree(doc, stamp["tree"], stamp["commit"], now_utc(), [n for n, (act, _) in plans.items() if act != "unknown"])
    return restarted


def read_result(path, hint):
    """A fuzz_nofp result doc, or UsageError(... + hint)."""
    if os.path.exists(path) and not os.path.isfile(path):
        raise UsageError("cannot read %s (not a regular file)%s" % (path, hint))
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError("cannot read %s (%s)%s" % (path, e, hint))
    if not isinstance(doc, dict) or doc.get("bench") != "fuzz_nofp" or not isinstance(doc.get("targets"), list):
        raise UsageError("%s is not a fuzz_nofp result%s" % (path, hint))
    return doc


def load_previous(path):
    if not path or not os.path.exists(path):
        return None
    return read_result(path, ": move it away or pass --fresh")


def new_entry(name, build):
    return {"name": name, "build": build, "execs": 0, "cpu_s": 0.0, "wall_s": 0.0, "chunks": 0, "findings": []}


def this_machine():
    return "%s, %d CPUs" % (platform.processor() or platform.machine(), os.cpu_count() or 0)


def start_doc(prev, ident, stamp, goal, cont, build, nice, jobs):
    doc = {"bench": "fuzz_nofp", "date": now_utc(), "started": now_utc(),
           "machine": this_machine(),
           "commit": stamp["commit"], "tree": ident["tree"], "dirty": stamp["dirty"], "build": build,
           "build_desc": BUILDS[build]["desc"], "engine": "libfuzzer", "checker_env": ident["checker_env"],
           "goal_execs": goal, "nice": nice, "jobs": jobs, "targets": []}
    if cont:
        doc["started"] = prev.get("started", doc["started"])
        doc["targets"] = prev["targets"]
        if prev.get("imports"):
            doc["imports"] = prev["imports"]     # what --import merged: each file counts once
        for k in ("trees", "superseded"):
            if k in prev:
                doc[k] = prev[k]
    return doc


def entry(doc, name):
    for e in doc["targets"]:
        if e["name"] == name:
            return e
    e = new_entry(name, doc["build"])
    doc["targets"].append(e)
    return e


def finish_entry(e, goal):
    e["cpu_s"] = round(e["cpu_s"], 2)
    e["wall_s"] = round(e["wall_s"], 2)
    e["exec_per_s"] = round(e["execs"] / e["wall_s"], 1) if e["wall_s"] > 0 else 0.0
    e["exec_per_cpu_s"] = round(e["execs"] / e["cpu_s"], 1) if e["cpu_s"] > 0 else 0.0
    e["goal_met"] = e["execs"] >= goal and not real_findings(e)


def atomic_write(path, doc):
    tmp = "%s.tmp-%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def save(doc, path, goal):
    doc["date"] = now_utc()
    doc["goal_execs"] = goal
    for e in doc["targets"]:
        finish_entry(e, goal)
    if path:
        atomic_write(path, doc)


# ------------------------------------------------------------------ one chunk of libFuzzer

def copy_seeds(name, corpus):
    """corpus/<name>/ and corpus/regressions/<name>/: their files only (src/*.txt
    hold op text, not inputs; libFuzzer would read subdirectories too)."""
    os.makedirs(corpus, exist_ok=True)
    n = 0
    for d, prefix in ((os.path.join(ROOT, "corpus", name), "seed-"),
                      (os.path.join(ROOT, "corpus", "regressions", name), "reg-")):
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            p = os.path.join(d, f)
            if os.path.isfile(p) and not f.startswith("."):
                dest = os.path.join(corpus, prefix + f)
                if not os.path.exists(dest):
                    shutil.copy(p, dest)
                n += 1
    return n


def slot_prefix(slot):
    """What a chunk's artifact file names start with before crash-/leak-/...:
    nothing in slot 0 (as before slots), "s<k>-" in slot k."""
    return "s%d-" % slot if slot else ""


def artifacts(crashes, prefix=""):
    """The artifact files in crashes that a chunk with -artifact_prefix=<crashes>/<prefix>
    writes: slot 0's (prefix "") start with crash-/leak-/timeout-/oom-, slot k's
    with s<k>-crash- ...; so each file belongs to exactly one slot."""
    own = tuple(prefix + p for p in ARTIFACT_PREFIXES)
    return set(f for f in os.listdir(crashes) if f.startswith(own) and not f.endswith(".log"))


def summary_line(text, rc):
    """The report's first line worth quoting: the checker's violation, a sanitizer's summary, libFuzzer's error."""
    lines = text.splitlines()
    for i, l in enumerate(lines):
        if "==mmfuzz== VIOLATION" in l:
            nxt = lines[i + 1].strip() if i + 1 < len(lines) and "==mmfuzz==" in lines[i + 1] else ""
            return (l.strip() + (" | " + nxt if nxt else ""))[:400]
    for pat in ("SUMMARY: ", "ERROR: libFuzzer", "==ERROR:", "runtime error:"):
        for l in lines:
            if pat in l:
                return l.strip()[:400]
    return "libFuzzer exit status %d, no report line" % rc


def starved(f):
    """A timeout finding whose recheck says the chunk was starved of CPU (not a finding)."""
    return isinstance(f, dict) and isinstance(f.get("recheck"), dict) and f["recheck"].get("verdict") == "starved"


def real_findings(e):
    """e's findings that count: all but the starved timeouts."""
    return [f for f in e["findings"] if not starved(f)]


def starved_count(e):
    """How many of e's findings are starved timeouts (listed, not counted)."""
    return sum(1 for f in e["findings"] if starved(f))


def findings_text(e):
    """"N finding(s)" of the real ones, and "+M starved timeout(s)" when there are any."""
    n, m = len(real_findings(e)), starved_count(e)
    return "%d finding%s%s" % (n, "" if n == 1 else "s",
                               ", +%d starved timeout%s" % (m, "" if m == 1 else "s") if m else "")


def is_timeout(f):
    """A finding with a timeout-* artifact (any slot's prefix): the ones a recheck replays."""
    return isinstance(f, dict) and isinstance(f.get("path"), str) and bool(TIMEOUT_RE.match(os.path.basename(f["path"])))


def target_timeout(name):
    """The -timeout a chunk of name runs with, in seconds (corpus/NAME.options, else libFuzzer's default)."""
    try:
        t = float(libfuzzer_options(ROOT, name)["timeout"])
    except (KeyError, ValueError):
        return float(LIBFUZZER_TIMEOUT)
    return t if t > 0 else float(LIBFUZZER_TIMEOUT)


def fuzz_env(checker=None):
    """The environment of a chunk or replay: ours, with sanitizer defaults;
    with checker (a JSON's checker_env), exactly those MMFUZZ_* settings."""
    env = {k: v for k, v in os.environ.items() if k not in NOT_CHECKER_ENV}
    if checker is not None:
        env = {k: v for k, v in env.items() if not k.startswith("MMFUZZ_")}
        env.update(checker)
    env.setdefault("ASAN_OPTIONS", "abort_on_error=1:detect_leaks=0:symbolize=1")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    return env


def verdict(rc, cpu_s, timeout):
    """A replayed timeout input: "starved" when it ran cleanly in under
    STARVED_SHARE of -timeout in CPU time - it cannot have used the
    timeout's worth of CPU in the chunk either, which timed out on the
    wall clock only -, else "timeout" (a real finding)."""
    return "starved" if rc == 0 and cpu_s < STARVED_SHARE * timeout else "timeout"


class Replay:
    """A recheck of a timeout-* artifact: the fuzz binary on that one file,
    with the chunk's options (-timeout and the rest of corpus/NAME.options),
    environment and nice, in a session of its own, killed past bound seconds
    of wall time (default RECHECK_BOUND times -timeout).  Its output goes to
    <artifact>-recheck.log, whatever it writes itself to a scratch dir.
    poll() until it returns the "recheck" record; kill() drops it."""

    def __init__(self, name, binary, path, nice, env, bound=None):
        self.name, self.path = name, path
        self.timeout = target_timeout(name)
        self.bound = bound if bound is not None else RECHECK_BOUND * self.timeout
        self.scratch = tempfile.mkdtemp(prefix="fuzz_nofp-recheck-")
        cmd = [binary] + ["-%s=%s" % (k, v) for k, v in libfuzzer_options(ROOT, name).items() if k != "dict"]
        cmd += ["-artifact_prefix=" + self.scratch + "/", path]
        self.log = path + "-recheck.log"
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(cmd, cwd=self.scratch, stdout=out, stderr=subprocess.STDOUT, env=env,
                                         preexec_fn=niced(nice), start_new_session=True)
        self.start = time.monotonic()
        self.result = None

    def poll(self, now=None):
        """The "recheck" record once the replay ended (or was killed past its bound), else None."""
        if self.result is not None:
            return self.result
        pid, status, ru = os.wait4(self.proc.pid, os.WNOHANG)
        if pid == 0:
            if (now or time.monotonic()) - self.start > self.bound:
                self._killpg()
            return None
        wall = time.monotonic() - self.start
        rc = os.waitstatus_to_exitcode(status)
        self.proc.returncode = rc
        self._killpg()          # anything it left behind in its session
        cpu = ru.ru_utime + ru.ru_stime
        self.result = {"exit": rc, "cpu_s": round(cpu, 3), "wall_s": round(wall, 3), "date": now_utc(),
                       "verdict": verdict(rc, cpu, self.timeout)}
        shutil.rmtree(self.scratch, ignore_errors=True)
        return self.result

    def wait(self):
        """Blocks until poll() has the record."""
        while self.poll() is None:
            time.sleep(0.05)
        return self.result

    def _killpg(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def kill(self):
        """Ends the replay unfinished: no record."""
        if self.result is None and self.proc.returncode is None:
            self._killpg()
            try:
                os.waitpid(self.proc.pid, 0)
            except ChildProcessError:
                pass
            self.proc.returncode = -signal.SIGKILL
        shutil.rmtree(self.scratch, ignore_errors=True)


def recheck_line(name, f):
    """One line on a rechecked timeout finding."""
    r = f["recheck"]
    if r["verdict"] == "missing":
        return "%s %s: missing - no such file; counts as a finding" % (name, f["path"])
    return "%s %s: %s - replayed alone: exit %d, %.2f CPU s, %.2f s wall (-timeout %g s)%s" % (
        name, f["path"], r["verdict"], r["exit"], r["cpu_s"], r["wall_s"], target_timeout(name),
        "; libFuzzer's timeout is wall-clock: the chunk was starved of CPU, not a finding" if r["verdict"] == "starved"
        else "; a real finding")


class Chunk:
    """One libFuzzer run of a target, in a slot: with several chunks of one
    target at once (campaign()), each has its own slot number k, unique among
    the target's running chunks.  They share <work>/<target>/corpus; slot 0
    writes its artifacts as <work>/<target>/crashes/crash-<sha> ... and its log
    to chunk.log, slot k as crashes/s<k>-crash-<sha> ... and chunk-s<k>.log,
    so that each new file is attributed to the chunk that wrote it."""

    def __init__(self, name, e, work, binary, seconds, runs, nice, slot=0):
        self.name, self.entry, self.binary, self.slot = name, e, binary, slot
        self.label = name + ("/s%d" % slot if slot else "")
        self.prefix = slot_prefix(slot)
        self.dir = os.path.join(work, name)
        self.corpus = os.path.join(self.dir, "corpus")
        self.crashes = os.path.join(self.dir, "crashes")
        os.makedirs(self.crashes, exist_ok=True)
        copy_seeds(name, self.corpus)
        self.log = os.path.join(self.dir, "chunk-s%d.log" % slot if slot else "chunk.log")
        self.seconds, self.runs, self.nice = seconds, runs, nice
        self.before = artifacts(self.crashes, self.prefix)
        cmd = [binary, "-max_total_time=%d" % seconds, "-runs=%d" % runs, "-print_final_stats=1",
               "-artifact_prefix=" + self.crashes + "/" + self.prefix]
        d = os.path.join(ROOT, "corpus", name + ".dict")
        if os.path.isfile(d):
            cmd.append("-dict=" + d)
        for k, v in libfuzzer_options(ROOT, name).items():
            if k != "dict":
                cmd.append("-%s=%s" % (k, v))
        cmd.append(self.corpus)
        env = fuzz_env()
        with open(self.log, "w") as out:
            self.proc = subprocess.Popen(cmd, cwd=self.dir, stdout=out, stderr=subprocess.STDOUT, env=env,
                                         preexec_fn=niced(nice))
        self.start = time.monotonic()
        self.stopped_by = None  # "interrupt" (Ctrl-C, SIGTERM) or "overdue", when we stopped it

    def overdue(self, now):
        # libFuzzer stops itself at -max_total_time (one input may take -timeout more).
        return now - self.start > self.seconds + 150

    def send(self, sig, why):
        if self.proc.returncode is None:
            try:
                os.kill(self.proc.pid, sig)
            except ProcessLookupError:
                pass
            self.stopped_by = self.stopped_by or why

    def poll(self):
        """Reaps the process if it ended: (exit code, CPU seconds) or None.  The
        rusage of this child alone (wait4), so that with --jobs > 1 each chunk
        gets its own CPU time; with one job it is the RUSAGE_CHILDREN delta."""
        pid, status, ru = os.wait4(self.proc.pid, os.WNOHANG)
        if pid == 0:
            return None
        rc = os.waitstatus_to_exitcode(status)
        self.proc.returncode = rc
        return rc, ru.ru_utime + ru.ru_stime

    def finish(self, rc, cpu_s):
        """Adds this chunk to its target's totals; returns the new findings."""
        wall = time.monotonic() - self.start
        with open(self.log, errors="replace") as f:
            text = f.read()
        m = EXECS_RE.findall(text)
        if m:
            execs = int(m[-1])
        else:
            st = STATUS_RE.findall(text)
            execs = int(st[-1]) if st else 0
        e = self.entry
        e["execs"] += execs
        e["cpu_s"] += cpu_s
        e["wall_s"] += wall
        e["chunks"] += 1
        # The files libFuzzer wrote: new names, and those it says it wrote
        # (the same input found again keeps its name); this slot's only -
        # another chunk of the target may be writing into crashes/ meanwhile.
        new = artifacts(self.crashes, self.prefix) - self.before
        for w in WRITTEN_RE.findall(text):
            if os.path.dirname(os.path.abspath(w)) == self.crashes and os.path.isfile(w):
                new.add(os.path.basename(w))
        new = sorted(f for f in new if f.startswith(tuple(self.prefix + p for p in ARTIFACT_PREFIXES)) and
                     not f.endswith(".log"))
        # libFuzzer interrupted (our SIGINT after Ctrl-C or SIGTERM, or the
        # terminal's own) exits with its interrupt code after the final stats:
        # not a finding.  One we had to kill for running far past its time is.
        interrupted = ((rc == INTERRUPT_EXIT and "libFuzzer: run interrupted" in text) or
                       (self.stopped_by == "interrupt" and rc in (INTERRUPT_EXIT, -signal.SIGINT, -signal.SIGKILL)))
        findings = []
        if new or (rc != 0 and not interrupted):
            summary = summary_line(text, rc)
            if self.stopped_by == "overdue":
                summary = "killed: libFuzzer ran %d s past its -max_total_time=%d; %s" % (
                    wall - self.seconds, self.seconds, summary)
            for a in new or [None]:
                logcopy = os.path.join(self.crashes, "%s-chunk%d.log" % (a or "%sexit%d" % (self.prefix, rc),
                                                                         e["chunks"]))
                shutil.copy(self.log, logcopy)
                findings.append({"path": rel(os.path.join(self.crashes, a)) if a else None, "summary": summary,
                                 "exit": rc, "chunk": e["chunks"], "slot": self.slot, "date": now_utc(),
                                 "log": rel(logcopy)})
            e["findings"].extend(findings)
        self.execs, self.wall, self.cpu_s = execs, wall, cpu_s
        return findings


# ------------------------------------------------------------------ the campaign

STOP = []                    # the signal that asked the campaign to stop, once one came


def on_signal(signum, frame):
    if not STOP:
        STOP.append(signal.Signals(signum).name)


def report_finding(name, f, build):
    if starved(f):
        print("[%s] starved timeout (chunk %d%s, not counted): %s" %
              (name, f["chunk"], ", slot %d" % f["slot"] if f.get("slot") else "", recheck_line(name, f)), flush=True)
        return
    bar = "!" * 78
    replay = "./mmfuzz repro %s %s" % (name, f["path"]) if f["path"] else "no input file: see the log"
    r = f.get("recheck")
    if isinstance(r, dict):
        again = "\n!! recheck: " + (r["verdict"] if r.get("cpu_s") is None else "exit %s, %.2f CPU s, %.2f s wall: %s" %
                                    (r["exit"], r["cpu_s"], r["wall_s"], r["verdict"]))
    else:
        again = "\n!! recheck: none (interrupted; bench/fuzz_nofp.py --recheck-timeouts)" if is_timeout(f) else ""
    print("%s\n!! FINDING in %s (%s build, chunk %d%s): %s\n!! %s%s\n!! replay: %s\n!! log: %s\n%s" %
          (bar, name, build, f["chunk"], ", slot %d" % f["slot"] if f.get("slot") else "",
           f["path"] or "(no input file)", f["summary"], again, replay, f["log"], bar), flush=True)


def progress(c, goal, parallel=1):
    """parallel: the chunks of c's target running on (the eta assumes as many)."""
    e = c.entry
    rate = c.execs / c.wall if c.wall > 0 else 0.0
    left = max(0, goal - e["execs"])
    eta = " eta %s" % duration(left / (rate * parallel)) if left and rate > 0 else ""
    print("[%s] chunk %d: %s / %s execs (%.1f%%), %.0f exec/s, %.0f exec/cpu-s, %s%s" %
          (c.label, e["chunks"], human(e["execs"]), human(goal), min(100.0, 100.0 * e["execs"] / goal), rate,
           c.execs / c.cpu_s if c.cpu_s > 0 else 0.0, findings_text(e), eta), flush=True)


def slots_per_target(jobs, n_targets):
    """How many chunks of one target may run at once: ceil(jobs / targets), so
    that --jobs up to the number of targets runs one chunk per target (as
    before slots), and 16 jobs on 8 targets two of each.  The campaign counts
    only the targets still short of the goal: the jobs that the ones done
    leave go to the ones left."""
    return max(1, -(-jobs // max(1, n_targets)))


# A chunk's -runs is at most RUNS_MARGIN times what the target ran in that
# many seconds on average so far: a chunk that took all that is left of the
# goal would keep every other slot of its target idle (they count it).
RUNS_MARGIN = 3


def chunk_runs(e, todo, k, seconds):
    """-runs for one of k chunks of target entry e starting together, with
    todo executions left of the goal (less the running chunks' -runs): an
    even share, at least 1, and, once the target has a rate, at most
    RUNS_MARGIN times what it runs in seconds (a chunk ending short leaves
    the rest to the next)."""
    runs = max(1, -(-todo // k))
    if e["execs"] > 0 and e["wall_s"] > 0:
        runs = min(runs, max(1, int(RUNS_MARGIN * seconds * e["execs"] / e["wall_s"])))
    return runs


def campaign(doc, names, a, stamp, work, json_path):
    """Runs chunks until every target has a.execs executions, the budget is
    spent, a binary changed or a signal came (on_signal); saves after each
    chunk.  Returns (why it ended: 'done', 'budget', 'interrupted' or
    'changed', the targets stopped for findings).

    Up to a.jobs chunks at once, up to slots_per_target() of one target (its
    slots: Chunk).  The next chunk goes to the target, of those not stopped
    and short of the goal - counting the -runs its running chunks still may
    make - with the fewest chunks running, then the fewest executions, then
    the first in names.  The chunks started together are chosen first, so
    that each of k chunks of one target started together gets -runs =
    ceil(what is left of the goal, less its running chunks' -runs, / k) (at
    least 1): together they overshoot the goal by little, where one chunk per
    target gets all that is left (libFuzzer stops at -runs or
    -max_total_time, whichever comes first; a chunk that ends short leaves
    the rest to a later one).

    A chunk's new timeout-* findings are rechecked (Replay) alongside the
    chunks, each taking a job; the chunk's progress line, its findings and
    the stop rule wait for their verdicts, and a starved timeout does not
    count.  A signal ends the rechecks unfinished: their findings stay
    without "recheck", and count."""
    goal = a.execs
    deadline = time.monotonic() + a.budget if a.budget else None
    running, streak, stopped = [], {}, set()
    rechecks = []               # [Replay, its chunk, its finding]
    waiting = {}                # chunk -> (its findings, how many rechecks it still waits for)
    why = "done"
    kill_at = None

    def count(n, picked=()):
        return sum(1 for c in running if c.name == n) + sum(1 for p in picked if p == n)

    def left(n):
        """What n still needs beyond its executions and its running chunks' -runs."""
        return goal - entry(doc, n)["execs"] - sum(c.runs for c in running if c.name == n)

    def per_target():
        """slots_per_target() over the targets not stopped and short of the
        goal (running chunks' -runs not deducted): at the end of a campaign
        the slowest target gets the jobs the others no longer need."""
        short = [n for n in names if n not in stopped and entry(doc, n)["execs"] < goal]
        return slots_per_target(a.jobs, len(short))

    def next_target(picked):
        slots = per_target()
        todo = [n for n in names if n not in stopped and left(n) > 0 and count(n, picked) < slots]
        return min(todo, key=lambda n: (count(n, picked), entry(doc, n)["execs"], names.index(n))) if todo else None

    def free_slot(n):
        used = set(c.slot for c in running if c.name == n)
        return min(set(range(len(used) + 1)) - used)

    def reap(c, rc, cpu_s):
        running.remove(c)
        found = c.finish(rc, cpu_s)
        save(doc, json_path, goal)
        timeouts = [f for f in found if is_timeout(f)] if not STOP else []
        for f in timeouts:
            try:
                rechecks.append([Replay(c.name, c.binary, os.path.join(ROOT, f["path"]), c.nice, fuzz_env()), c, f])
            except OSError as e:
                log("%s: cannot recheck %s (%s): it counts as a finding" % (c.label, f["path"], e))
        mine = sum(1 for r in rechecks if r[1] is c)
        if mine:
            waiting[c] = (found, mine)
        else:
            conclude(c, found)

    def recheck_done(r, rec):
        rechecks.remove(r)
        _, c, f = r
        if rec is not None:
            f["recheck"] = rec
            save(doc, json_path, goal)
        found, n = waiting[c]
        if n > 1:
            waiting[c] = (found, n - 1)
        else:
            del waiting[c]
            conclude(c, found)

    def conclude(c, found):
        progress(c, goal, count(c.name) + 1)
        for f in found:
            report_finding(c.name, f, doc["build"])
        real = [f for f in found if not starved(f)]
        if real or c.execs == 0:
            streak[c.name] = streak.get(c.name, 0) + 1
            if streak[c.name] >= STALL_LIMIT and c.name not in stopped:
                stopped.add(c.name)
                c.entry["stopped"] = "%d chunks in a row ended in a finding or ran nothing" % STALL_LIMIT
                save(doc, json_path, goal)
                log("%s: stopped - %s (see %s)" % (c.name, c.entry["stopped"], rel(c.log)))
        elif c.name not in stopped:     # another slot's clean end does not undo a stop
            streak[c.name] = 0
            c.entry.pop("stopped", None)

    while True:
        if STOP and why != "interrupted":
            why = "interrupted"
            log("%s: stopping the running chunk%s, counting what %s ran" %
                (STOP[0], "s" if len(running) > 1 else "", "they" if len(running) > 1 else "it"))
            for c in running:
                c.send(signal.SIGINT, "interrupt")   # libFuzzer prints its final stats and exits 72
            kill_at = time.monotonic() + 30
            if rechecks:
                n = len(rechecks)
                log("%d timeout recheck%s left unfinished: %s finding%s count%s until bench/fuzz_nofp.py "
                    "--recheck-timeouts" % (n, "" if n == 1 else "s", "its" if n == 1 else "their",
                                            "" if n == 1 else "s", "s" if n == 1 else ""))
            for r in list(rechecks):
                r[0].kill()
                recheck_done(r, None)
        picked = []
        while len(running) + len(rechecks) + len(picked) < a.jobs and why == "done":
            n = next_target(picked)
            if n is None:
                break
            picked.append(n)
        share = dict((n, picked.count(n)) for n in picked)      # k: this target's chunks starting now
        todo = dict((n, left(n)) for n in picked)               # before any of them starts
        for n in picked:
            seconds = a.chunk
            if deadline is not None:
                seconds = min(seconds, int(deadline - time.monotonic()))
                if seconds < 1:
                    why = "budget"
                    break
            binary = binary_path(a.build_dir, n)
            # A binary replaced under us would count another source's executions.
            if sha256(binary) != stamp["binaries"].get(n):
                log("%s changed since fuzz_nofp.py built it (tree %s): stopping; rebuild and run again" %
                    (rel(binary), stamp["tree"]))
                why = "changed"
                break
            e = entry(doc, n)
            runs = chunk_runs(e, todo[n], share[n], seconds)
            running.append(Chunk(n, e, work, binary, seconds, runs, a.nice, free_slot(n)))
        if not running and not rechecks:
            break
        time.sleep(0.2)
        now = time.monotonic()
        for r in list(rechecks):
            rec = r[0].poll(now)
            if rec is not None:
                recheck_done(r, rec)
        for c in list(running):
            r = c.poll()
            if r is not None:
                reap(c, *r)
            elif kill_at is not None and now > kill_at:
                c.send(signal.SIGKILL, "interrupt")
            elif c.overdue(now):
                c.send(signal.SIGKILL, "overdue")
    return why, stopped


def left_line(doc, names, goal):
    """What is left of the goal: executions, and CPU time at each target's
    exec/cpu-s so far (a target that has not run is named instead); None
    when every target has met it."""
    left = cpu_left = 0
    unknown = []
    for n in names:
        e = entry(doc, n)
        todo = max(0, goal - e["execs"])
        left += todo
        rate = e["execs"] / e["cpu_s"] if e["cpu_s"] > 0 else 0.0
        if todo and rate > 0:
            cpu_left += todo / rate
        elif todo:
            unknown.append(n)
    if not left:
        return None
    return "left: %s executions, about %.1f CPU-hours at each target's exec/cpu-s%s" % (
        human(left), cpu_left / 3600, " (and %s, not run yet)" % ", ".join(unknown) if unknown else "")


def print_table(doc, names, goal):
    """The per-target table, then left_line()."""
    print(("\n%-9s %-6s %12s %8s %8s %12s %10s %-7s" % ("target", "build", "executions", "goal met", "findings",
                                                      "exec/s(wall)", "exec/cpu-s", "since")).rstrip())
    for n in names:
        e = entry(doc, n)
        finish_entry(e, goal)
        since = e.get("since") if isinstance(e.get("since"), dict) else {}
        m = starved_count(e)
        print("%-9s %-6s %12s %8s %8d %12.0f %10.0f %s%s" % (n, e["build"], human(e["execs"]),
                                                             "yes" if e["goal_met"] else "no", len(real_findings(e)),
                                                             e["exec_per_s"], e["exec_per_cpu_s"],
                                                             short(since.get("commit"), 7) if since.get("commit") else "-",
                                                             "  +%d starved timeout%s" % (m, "" if m == 1 else "s")
                                                             if m else ""))
    line = left_line(doc, names, goal)
    if line:
        print(line)


# ------------------------------------------------------------------ arguments

HELP_EPILOG = """\
builds (--build):
  ubsan  (default) build/nofp-ubsan: clang -O2 -g, -fsanitize=fuzzer
         (MM_ENGINE=libfuzzer) and UBSan (MM_SANITIZE=undefined), MM_DEBUG=2,
         test hooks on.  The checker - the only source of false positives -
         runs exactly as in the fuzz preset (the targets' own levels: level 2
         after every op, level 3 - watermark: 4 - at the end); ASan is left
         out for speed.  Without ASan the slub and kmalloc targets also run
         their bad-free ops (skipped under ASan, whose KASAN stops first) and
         check the allocator's own reports of them.
  asan   build/nofp-asan: the fuzz preset (clang -O1 -g, ASan+UBSan, MM_DEBUG=2),
         what ./mmfuzz fuzz runs.  The JSON says which build counted.
  Each build has its own build directory, so that nobody else's build of
  build/fuzz replaces the binaries during a campaign; a stamp file there
  records the source tree they were built from and their sha256, checked
  before every chunk; each target's count records its binary's.

accumulating:
  The JSON (default bench/results/fuzz_nofp.json) holds per target
  {name, build, execs, cpu_s, wall_s, chunks, findings, exec_per_s,
  exec_per_cpu_s, goal_met, binary, since} and {date, started, machine,
  commit, tree, dirty, build, goal_execs, checker_env, trees, superseded};
  it is rewritten (tmp + rename) after every chunk.  "tree" hashes the
  committed allocator/, targets/, stressors/, cmake/, CMakeLists.txt (and
  CMakePresets.json for asan) at HEAD; tree, commit and dirty are the last
  run's.  A later run starts fresh - says why, keeps the old file as
  <work>/previous/<date>-<tree>.json - when the build or the MMFUZZ_*
  checker environment differ.  Otherwise each target of the run continues
  when its entry's "binary" is the sha256 of the fuzz binary built now - on
  the same tree it is, unless the toolchain changed; on another tree only
  targets whose bytes the change left alone (the old file is kept there
  too) - and else restarts from zero with the new binary and
  "since" {tree, commit, date}, a copy of the old entry (its findings with
  it) going to "superseded" with a "reason" and the tree and commit it last
  ran; targets not in the run stay as they are.  An entry without "binary"
  (written before binaries were recorded) gets one on the same tree and
  restarts on another.  "trees" lists the trees whose executions the totals
  hold ({tree, commit, first_seen, targets}).  goal_met is per entry:
  execs >= goal and no findings (starved timeouts aside: "timeouts" below).  Uncommitted changes under those paths
  (untracked files too) are refused unless --allow-dirty; the tree then
  carries a hash of the changes.
  Each target's inputs live in <work>/<target>/corpus (the seeds of
  corpus/T and corpus/regressions/T, files only, then what libFuzzer adds), so
  later chunks and later runs continue with the grown corpus; findings in
  <work>/<target>/crashes/, each with its chunk's log (<file>-chunk<N>.log).

chunks:
  libFuzzer runs for --chunk seconds at a time (-max_total_time, -runs = what
  is left of the goal, the target's .dict and .options), at --nice; targets
  take turns, fewest executions first, --jobs chunks at once.  Up to
  ceil(J / targets short of the goal) chunks of one target run at once, in
  "slots" (--jobs 16 on 8 targets: two of each; --jobs up to the number of
  targets: one chunk per target, as without slots - until targets meet the
  goal: --jobs 2 gives both jobs to the last target left).  The next chunk
  goes to the target, not stopped and short of the goal, with the fewest
  chunks running, then the fewest executions, then the first in the target
  list.  With k chunks of a target running or starting, a new one gets -runs
  = ceil(what is left / k), at least 1, so that together they do not
  overshoot the goal badly - and at most %d times what the target ran on
  average in --chunk seconds so far, so that a chunk does not claim all that
  is left and keep a free job from the target.  The slots share
  <work>/<target>/corpus (libFuzzer reads it at the start and adds to it);
  slot 0 writes crashes/crash-<sha> (leak-, timeout-, oom-) and chunk.log,
  slot k crashes/s<k>-crash-<sha> ... and chunk-s<k>.log, and each chunk
  counts only new files of its own prefix,
  so a finding is recorded once, for the chunk that made it (its "slot" in the
  JSON).  A finding (a non-zero exit or a crash-/leak-/timeout-/oom- file) is
  kept, recorded, printed, and the target goes on with its next chunk; %d
  chunks of a target in a row (whichever slots) ending in a finding (or
  running nothing; a starved timeout is no finding) stop that target (chunks
  of it already running finish and count).  Ctrl-C or SIGTERM stops all the running chunks, counts what they
  ran and saves.

extra machines (--import):
  To add executions run elsewhere, copy build/nofp-<build>/fuzz_nofp-stamp.json
  into a directory DIR and build/nofp-<build>/targets/fuzz_* into DIR/targets/
  on the other machine (with a checkout of the same commit, for the seeds and
  options; or use another --work dir here), run there
    bench/fuzz_nofp.py --no-build --build-dir DIR --json X.json [--work W] ...
  (same --build, same MMFUZZ_* environment), bring X.json back and run here
    bench/fuzz_nofp.py --import X.json [--import Y.json ...] [--json FILE]
  Each target's execs, cpu_s, wall_s and chunks are added to the JSON's, its
  findings appended with "imported_from" (the file's name) and "machine";
  targets the JSON lacks are added with their binary and since; the FILE's
  trees join "trees", its superseded entries "superseded"; the JSON's tree
  and goal_execs stay.  The JSON records
  each file in "imports" (name, sha256, machine, started, date, jobs, execs per
  target, cpu_s, findings, imported_at).  Refused (exit 2, the JSON left as it
  was, nothing imported when any FILE is refused): a FILE that is not a
  fuzz_nofp result, one whose build or checker_env differ from the JSON's,
  one with a target whose "binary" differs from the JSON's entry for it (or
  from another FILE's; the message names the target and both sha256) -
  entries without "binary" need the JSON's tree instead -, one imported before (by its sha256, also when it was merged into
  another imported file), and any import while a campaign or import holds the
  work dir (--work, default build/nofp/<the JSON's build>).  A missing JSON is
  created from the first FILE's tree, build and goal.  Not with --quick,
  --dry-run or --fresh; no build is needed.  The table then shows every target
  in the JSON; exit 1 when an imported file holds findings.

timeouts (rechecks):
  libFuzzer's -timeout (corpus/TARGET.options; libFuzzer's default %g s) is
  wall-clock: a campaign at nice 19 beside work at nice 0 can be starved of
  CPU until an input that runs in 0.4 s "times out" (the chunk's log then
  shows a tiny stat::average_exec_per_sec).  So each new timeout-* artifact
  of a chunk (s<k>-timeout-* too) is replayed alone: the same fuzz binary on
  that one file, with the chunk's corpus/TARGET.options flags (-timeout
  included), MMFUZZ_* environment and --nice, in a session of its own,
  killed past %d times -timeout of wall time; its output goes to
  <artifact>-recheck.log.  The finding gets "recheck" {exit, cpu_s (the
  replay's user+sys), wall_s, date, verdict}: "starved" when the replay
  exits 0 in under %g x -timeout of CPU time - the input cannot have used
  the timeout's worth of CPU in the chunk either -, else "timeout", a real
  finding.  A starved timeout stays in the target's "findings" (and its file
  in crashes/), but counts for nothing: not for goal_met, the exit status or
  the stop rule; the table and progress lines show "+N starved timeout(s)"
  beside the real count.  The rechecks run beside the chunks, each taking a
  job, and may run past --budget; the chunk's progress line waits for them.
  Crashes, leaks and ooms are never rechecked.  Ctrl-C or SIGTERM ends
  unfinished rechecks: those findings keep no "recheck", and count.
  bench/fuzz_nofp.py --recheck-timeouts [--json FILE] [--targets a,b]
  rechecks the timeout findings of the JSON's targets (not "superseded")
  that have no "recheck": the path is relative to the repo root; a missing
  file gets verdict "missing" (a finding).  It replays with the JSON's
  checker_env and --nice (default 19), the binaries in --build-dir (default
  the JSON's build's), each of which must have the sha256 its entry records
  as "binary" (else refused, nothing rechecked), saves the JSON after each,
  prints a line per finding, and exits 0 when all were starved, 1 when any
  is a real timeout or missing.  Refused while a campaign or import holds
  the work dir (--work, default build/nofp/<the JSON's build>).

exit status: 0 no finding; 1 a finding in the selected targets' totals (on the
  correct allocator it is a false positive or a real bug), a stopped target, a
  failed build or a binary that changed under the campaign, findings in an
  --import FILE, a real or missing timeout by --recheck-timeouts (a starved
  timeout is no finding); 2 bad arguments or a state to resolve (dirty tree,
  unreadable JSON, another run holding the work dir, a refused --import or
  --recheck-timeouts); 130 interrupted (after saving).

  ./mmfuzz bench fuzz_nofp passes only --quick and --json; run
  bench/fuzz_nofp.py for the other options.
""" % (RUNS_MARGIN, STALL_LIMIT, LIBFUZZER_TIMEOUT, RECHECK_BOUND, STARVED_SHARE)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


def positive(kind, lo=1, hi=None):
    def conv(v):
        try:
            x = int(v.replace("_", "").replace(",", "")) if kind is int else float(v)
        except ValueError:
            raise argparse.ArgumentTypeError("needs a number, not '%s'" % v)
        if x < lo or (hi is not None and x > hi):
            raise argparse.ArgumentTypeError("must be %s, not '%s'" %
                                             ("between %s and %s" % (lo, hi) if hi is not None else ">= %s" % lo, v))
        return x
    return conv


def parse_args(argv):
    ap = Parser(prog="bench/fuzz_nofp.py", formatter_class=argparse.RawDescriptionHelpFormatter,
                description="The no-false-positives campaign (issue 5): libFuzzer on every fuzz target until\n"
                            "each has --execs executions on the correct allocator, counting executions and\n"
                            "findings across chunks and invocations.",
                epilog=HELP_EPILOG)
    ap.add_argument("--execs", type=positive(int), default=10000000, metavar="N",
                    help="executions per target (default 10000000)")
    ap.add_argument("--targets", default="", metavar="a,b", help="targets (default: all of targets/TARGETS)")
    ap.add_argument("--jobs", type=positive(int), default=1, metavar="J",
                    help="libFuzzer processes at once (default 1); more than the targets: up to "
                         "ceil(J / targets) chunks of each target at once (\"chunks\" below)")
    ap.add_argument("--nice", type=positive(int, 0, 19), default=19, metavar="K",
                    help="nice level of the builds, libFuzzer and the timeout rechecks (default 19: a shared "
                         "machine)")
    ap.add_argument("--chunk", type=positive(int), default=300, metavar="S",
                    help="seconds per libFuzzer run (default 300)")
    ap.add_argument("--budget", type=positive(float, 1), metavar="S",
                    help="overall wall-clock limit: no chunk runs past it; what was counted is kept")
    ap.add_argument("--build", choices=sorted(BUILDS), help="which build (default ubsan; below)")
    ap.add_argument("--json", metavar="FILE", help="results (default bench/results/fuzz_nofp.json)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: %d execs per target, %d s chunks, its own build and work dirs "
                         "(build/nofp-<build>-quick, build/nofp/quick-<build>), --fresh and --allow-dirty; "
                         "writes JSON only with --json" % (QUICK["execs"], QUICK["chunk"]))
    ap.add_argument("--no-build", action="store_true",
                    help="use the binaries fuzz_nofp.py built last (checked against its stamp)")
    ap.add_argument("--fresh", action="store_true", help="start the totals from zero (the corpus is kept)")
    ap.add_argument("--allow-dirty", action="store_true",
                    help="run with uncommitted changes under the source paths (see below)")
    ap.add_argument("--dry-run", action="store_true",
                    help="say, per target, whether its count would continue or restart (and why) and what is "
                         "left, then exit: no build, no run (before a build, binaries not built yet: the build decides)")
    ap.add_argument("--work", metavar="DIR", help="work dir (default build/nofp/<build>; --quick: build/nofp/quick-<build>)")
    ap.add_argument("--build-dir", metavar="DIR", help="build dir (default build/nofp-<build>)")
    ap.add_argument("--import", dest="imports", action="append", default=[], metavar="FILE",
                    help="instead of a campaign: add FILE's totals (a fuzz_nofp JSON written on another machine "
                         "or in another work dir) to the JSON; repeatable.  Same build and checker settings and, per "
                         "target, the same binary only, each file once; takes the work dir's lock (see \"extra machines\" below)")
    ap.add_argument("--recheck-timeouts", dest="recheck", action="store_true",
                    help="instead of a campaign: replay the timeout findings in the JSON that have no \"recheck\" "
                         "yet (--targets: of those targets), record each one's verdict, print a line per "
                         "finding (see \"timeouts\" below)")
    a = ap.parse_args(argv)
    if a.recheck:
        bad = [o for o, on in (("--import", a.imports), ("--quick", a.quick), ("--dry-run", a.dry_run),
                               ("--fresh", a.fresh)) if on]
        if bad:
            raise UsageError("--recheck-timeouts cannot be combined with %s" % " or ".join(bad))
    if a.imports:
        bad = [o for o, on in (("--quick", a.quick), ("--dry-run", a.dry_run), ("--fresh", a.fresh)) if on]
        if bad:
            raise UsageError("--import cannot be combined with %s" % " or ".join(bad))
    a.work_given, a.build_dir_given = a.work is not None, a.build_dir is not None
    a.build_given = a.build is not None
    a.build = a.build or "ubsan"
    known = all_targets()
    names = []
    for t in (x.strip() for x in a.targets.split(",")):
        if t and t not in names:
            names.append(t)
    bad = [t for t in names if t not in known]
    if bad:
        raise UsageError("unknown target%s: %s (targets: %s)" % ("s" if len(bad) > 1 else "", ", ".join(bad),
                                                                  ", ".join(known)))
    a.names = names or known
    if a.quick:
        a.execs, a.chunk, a.fresh, a.allow_dirty = QUICK["execs"], QUICK["chunk"], True, True
    a.json_path = os.path.abspath(a.json) if a.json else (None if a.quick else
                                                          os.path.join(ROOT, "bench", "results", "fuzz_nofp.json"))
    if a.json_path and not os.path.isdir(os.path.dirname(a.json_path)):
        raise UsageError("--json: no directory for '%s'" % a.json)
    # --quick builds and fuzzes apart from the campaign's dirs: a smoke run of
    # a dirty tree must not replace the binaries a campaign is counting with.
    a.build_dir = os.path.abspath(a.build_dir or os.path.join(ROOT, BUILDS[a.build]["dir"] +
                                                              ("-quick" if a.quick else "")))
    a.work = os.path.abspath(a.work or os.path.join(ROOT, "build", "nofp",
                                                    ("quick-" if a.quick else "") + a.build))
    return a


def main(argv):
    try:
        a = parse_args(argv)
    except UsageError as e:
        print("usage: bench/fuzz_nofp.py [--execs N] [--targets a,b] [--jobs J] [--nice K] [--chunk S] [--budget S]\n"
              "                          [--build asan|ubsan] [--json FILE] [--quick] [--no-build] [--fresh]\n"
              "                          [--allow-dirty] [--dry-run] [--work DIR] [--build-dir DIR] [--help]\n"
              "       bench/fuzz_nofp.py --import FILE [--import FILE ...] [--json FILE] [--work DIR]\n"
              "       bench/fuzz_nofp.py --recheck-timeouts [--json FILE] [--targets a,b] [--build-dir DIR] "
              "[--work DIR] [--nice K]",
              file=sys.stderr)
        log(str(e))
        return 2
    try:
        return run(a)
    except KeyboardInterrupt:
        log("interrupted before the campaign started; nothing counted")
        return 130
    except UsageError as e:
        log(str(e))
        return 2
    except BuildError as e:
        log(str(e))
        return 1


def dirty_refusal(state):
    shown = ", ".join(state["dirty"][:8]) + (" ..." if len(state["dirty"]) > 8 else "")
    return ("uncommitted changes in the fuzzed source (%s): executions would not belong to a commit.  Commit them, "
            "run from a clean checkout (git worktree add), or pass --allow-dirty (the tree then carries a hash of "
            "the changes, and only the same changes continue its totals)" % shown)


def locked(work, fn, *args):
    """fn(*args) holding the work dir's lock (one campaign or import at a time)."""
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, ".lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise UsageError("another fuzz_nofp run is using %s" % rel(work))
        return fn(*args)


def run(a):
    if a.imports:
        return run_import(a)
    if a.recheck:
        return run_recheck(a)
    if a.dry_run:                   # a dry run only reads: it may look at a running campaign's totals
        return run_locked(a)
    return locked(a.work, run_locked, a)


def run_locked(a):
    # Which source the executions will belong to.
    if a.no_build or a.dry_run:
        stamp = read_stamp(a.build_dir) if a.no_build else None
        if a.no_build and (stamp is None or stamp.get("build") != a.build):
            raise BuildError("%s holds no %s build of fuzz_nofp.py's (no %s): drop --no-build" %
                             (rel(a.build_dir), a.build, STAMP))
        if stamp is None:
            stamp = tree_state(a.build)
    else:
        stamp = tree_state(a.build)
    if stamp["dirty"] and not a.allow_dirty:
        raise UsageError(dirty_refusal(stamp))
    if not a.no_build and not a.dry_run:
        stamp = build_targets(a.build, a.build_dir, a.names, a.nice)
        if stamp["dirty"] and not a.allow_dirty:
            raise UsageError(dirty_refusal(stamp))
    if not a.dry_run:
        check_binaries(stamp, a.build_dir, a.names)

    if a.dry_run and not stamp.get("binaries"):
        # Before a build: the binaries fuzz_nofp.py built last, when built from this very tree.
        built = read_stamp(a.build_dir)
        if built and built.get("build") == a.build and built.get("tree") == stamp["tree"]:
            stamp = dict(stamp, binaries=built.get("binaries") or {})
    ident = identity(stamp, a.build)
    try:
        prev = load_previous(a.json_path)
    except UsageError:
        if not a.fresh:
            raise
        prev = None             # unreadable, and --fresh replaces it
    cont, why = decide(prev, ident, a.fresh)
    if cont:
        ensure_trees(prev)
        # The file's "started" is when its first count began; the counts
        # going on now began at their entries' since (a restart resets it).
        since = sorted(e["since"]["date"] for e in prev["targets"] if isinstance(e, dict)
                       and isinstance(e.get("since"), dict) and e["since"].get("date"))
        log("continuing the totals in %s (tree %s, %s build, counts since %s)%s" %
            (rel(a.json_path), ident["tree"], a.build, since[0] if since else prev.get("started"),
             "" if why is None else ": " + why))
        if prev.get("goal_execs") != a.execs:
            log("the goal changes from %s to %s executions per target" % (human(prev.get("goal_execs", 0)),
                                                                          human(a.execs)))
    else:
        log("starting fresh: %s" % ("--quick always does" if a.quick else why))
    doc = start_doc(prev, ident, stamp, a.execs, cont, a.build, a.nice, a.jobs)
    plans = plan(prev, ident, stamp, a.names, cont)
    olds = {n: dict(entry(doc, n)) for n in a.names if plans[n][0] == "restart"}
    restarted = apply_plan(doc, prev or {}, stamp, plans)
    for n in restarted:
        log("%s restarts from zero: %s; its %s executions and %d finding%s are kept in \"superseded\"" %
            (n, plans[n][1], human(olds[n]["execs"]), len(olds[n]["findings"]),
             "" if len(olds[n]["findings"]) == 1 else "s"))
    if cont and why is not None:
        goes_on = [n for n in a.names if plans[n][0] == "continue"]
        log("tree %s -> %s: %s continue%s (binaries unchanged); %s restart%s; %s new" %
            (prev.get("tree"), ident["tree"], ", ".join(goes_on) or "no target",
             "s" if len(goes_on) == 1 else "", ", ".join(restarted) or "none", "s" if len(restarted) == 1 else "",
             ", ".join(n for n in a.names if plans[n][0] == "new") or "none") +
            ("; %s: the build decides" % ", ".join(n for n in a.names if plans[n][0] == "unknown")
             if any(p[0] == "unknown" for p in plans.values()) else ""))
    for n in a.names:
        e = entry(doc, n)
        finish_entry(e, a.execs)
    if a.dry_run:
        words = {"continue": "continues", "restart": "restarts", "new": "starts", "unknown": "build decides"}
        for n in a.names:
            e = entry(doc, n)
            act, why_n = plans[n]
            if act == "restart":
                note = "restarts: %s (%s executions superseded)" % (why_n, human(olds[n]["execs"]))
            elif act == "new":
                note = "starts" + (" (new target)" if cont else "")
            else:
                note = "%s: %s" % (words[act], why_n) if why_n else words[act]
            print("%-10s %14s of %s executions, %s, %s left; %s" %
                  (n, human(e["execs"]), human(a.execs), findings_text(e), human(max(0, a.execs - e["execs"])), note))
        line = left_line(doc, a.names, a.execs)
        if line:
            print(line)
        return 0
    if prev is not None and os.path.exists(a.json_path) and (not cont or why is not None):
        keep = os.path.join(a.work, "previous")
        os.makedirs(keep, exist_ok=True)
        dest = os.path.join(keep, "%s-%s.json" % (str(prev.get("date", "unknown")).replace(":", ""),
                                                  str(prev.get("tree", "unknown"))[:24]))
        shutil.copy(a.json_path, dest)
        log("the earlier results are kept in %s" % rel(dest))

    log("%s build (tree %s, commit %s%s), goal %s executions per target, %s, %d s chunks, %d job%s, nice %d; "
        "work dir %s" % (a.build, ident["tree"], stamp["commit"][:12], ", dirty" if stamp["dirty"] else "",
                         human(a.execs), ", ".join(a.names), a.chunk, a.jobs, "" if a.jobs == 1 else "s", a.nice,
                         rel(a.work)))
    save(doc, a.json_path, a.execs)
    old_int, old_term = signal.signal(signal.SIGINT, on_signal), signal.signal(signal.SIGTERM, on_signal)
    try:
        why, stopped = campaign(doc, a.names, a, stamp, a.work, a.json_path)
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)
    save(doc, a.json_path, a.execs)
    print_table(doc, a.names, a.execs)
    findings = sum(len(real_findings(entry(doc, n))) for n in a.names)
    hungry = sum(len(entry(doc, n)["findings"]) for n in a.names) - findings
    met = [n for n in a.names if entry(doc, n)["goal_met"]]
    if a.json_path:
        log("results in %s" % rel(a.json_path))
    if findings:
        log("%d finding%s on the correct allocator - a false positive or a real bug each; listed in the JSON, "
            "files under %s/<target>/crashes/" % (findings, "" if findings == 1 else "s", rel(a.work)))
    if hungry:
        log("%d starved timeout%s: libFuzzer's -timeout (wall-clock) expired, but replayed alone the input ran in "
            "under a quarter of it in CPU time; listed in the JSON with its \"recheck\", not counted" %
            (hungry, "" if hungry == 1 else "s"))
    if why == "budget":
        log("budget spent; run again to continue the totals")
    if why == "interrupted":
        log("interrupted; run again to continue the totals")
        return 130
    if len(met) == len(a.names):
        log("goal met: %d target%s with >= %s executions each, zero findings" %
            (len(met), "" if len(met) == 1 else "s", human(a.execs)))
    else:
        log("goal not met yet: %d of %d targets have %s executions%s" %
            (len(met), len(a.names), human(a.execs), " and zero findings" if findings else ""))
    return 1 if findings or stopped or why == "changed" else 0



# ------------------------------------------------------------------ --import: another machine's executions

IDENTITY_FIELDS = ("build", "checker_env")      # the tree: per target, by binary (import_conflict)
CARRIED_FIELDS = ("commit", "tree", "dirty", "build", "build_desc", "engine", "checker_env")


def number(x, whole=False):
    return isinstance(x, int if whole else (int, float)) and not isinstance(x, bool) and x >= 0


def read_import(path):
    """An imported result doc, checked enough to be added: its identity and
    every target's counts."""
    doc = read_result(path, ": nothing imported")
    if not isinstance(doc.get("tree"), str) or doc.get("build") not in BUILDS:
        raise UsageError("%s is not a fuzz_nofp result (no tree or build): nothing imported" % path)
    if not isinstance(doc.get("checker_env", {}), dict):
        raise UsageError("%s is not a fuzz_nofp result (checker_env): nothing imported" % path)
    names = set()
    for i, e in enumerate(doc["targets"]):
        ok = (isinstance(e, dict) and isinstance(e.get("name"), str) and e["name"] not in names and
              number(e.get("execs"), True) and number(e.get("chunks"), True) and number(e.get("cpu_s")) and
              number(e.get("wall_s")) and isinstance(e.get("findings"), list) and
              all(isinstance(f, dict) for f in e["findings"]) and
              (e.get("binary") is None or isinstance(e["binary"], str)) and
              (e.get("since") is None or isinstance(e["since"], dict)))
        if not ok:
            raise UsageError("%s is not a fuzz_nofp result (target entry %d): nothing imported" % (path, i + 1))
        names.add(e["name"])
    return doc


def identity_difference(main, imp):
    """The first identity field that differs: (field, main's value, imp's value) or None."""
    for k in IDENTITY_FIELDS:
        default = {} if k == "checker_env" else None
        if main.get(k, default) != imp.get(k, default):
            return k, main.get(k, default), imp.get(k, default)
    return None


def import_conflict(main, doc, known, path, json_name):
    """Why doc's targets cannot be added to main's, or None.  known: the
    binary each target's count holds so far (main's, then the files checked
    before this one), updated.  Where both sides record a "binary", they
    must be equal (the tree may differ); where the imported entry records
    none (a file written before binaries were recorded), its tree must be
    main's and main's count of that target must hold that tree's
    executions; where only main's entry records none, its tree must be the
    file's."""
    base = os.path.basename(path)
    for t in doc["targets"]:
        n = t["name"]
        mine = entry_of(main, n)
        ours = known.get(n) or (mine.get("binary") if mine else None)
        theirs = t.get("binary")
        if ours and theirs:
            if ours != theirs:
                return ("fuzz_%s's binary differs: %s counts fuzz_%s binary %s, %s ran binary %s (tree %s)" %
                        (n, json_name, n, ours, base, theirs, doc.get("tree")))
        elif theirs is None:
            held = mine is None or any(x.get("tree") == main.get("tree") and n in x.get("targets", [])
                                       for x in main.get("trees", []))
            if doc.get("tree") != main.get("tree") or not held:
                return ("its tree differs: %s has tree %s, %s has %s (its fuzz_%s entry records no binary to "
                        "compare%s)" % (json_name, json.dumps(main.get("tree")), base, json.dumps(doc.get("tree")), n,
                                        "" if held else "; and the fuzz_%s count here ran another tree" % n))
        elif mine is not None and n not in known:
            want = entry_tree(main, mine)
            if doc.get("tree") != want:
                return ("its tree differs: the fuzz_%s count in %s ran tree %s and records no binary to compare, "
                        "%s has %s" % (n, json_name, json.dumps(want), base, json.dumps(doc.get("tree"))))
        if theirs:
            known[n] = theirs
    return None


def entry_of(doc, name):
    for e in doc["targets"]:
        if e.get("name") == name:
            return e
    return None


def imported_shas(doc):
    """The sha256 of every file merged into doc, also those merged into the files merged."""
    got = set()
    for i in doc.get("imports") or []:
        if isinstance(i, dict):
            got.add(i.get("sha256"))
            got.update(i.get("includes") or [])
    got.discard(None)
    return got


def import_work_dir(a, files):
    """The work dir whose lock an import takes: --work, or the campaign's
    default for the build being merged into."""
    if a.work_given:
        return a.work
    build = None
    if a.json_path and os.path.exists(a.json_path):
        try:
            build = read_result(a.json_path, "").get("build")
        except UsageError:
            pass                    # refused below, under the lock
    build = build if build in BUILDS else files[0][1]["build"]
    return os.path.join(ROOT, "build", "nofp", build)


def run_import(a):
    files = []
    for path in a.imports:
        path = os.path.abspath(path)
        if os.path.exists(path) and os.path.exists(a.json_path) and os.path.samefile(path, a.json_path):
            raise UsageError("--import %s: that is the JSON itself" % rel(path))
        doc = read_import(path)
        with open(path, "rb") as f:
            sha = hashlib.sha256(f.read()).hexdigest()
        files.append((path, doc, sha))
    return locked(import_work_dir(a, [(p, d) for p, d, _ in files]), import_locked, a, files)


def import_locked(a, files):
    main = read_result(a.json_path, ": move it away; nothing imported") if os.path.exists(a.json_path) else None
    if main is None:
        first = files[0][1]
        main = {"bench": "fuzz_nofp", "date": now_utc(), "started": first.get("started", now_utc()),
                "machine": this_machine()}
        main.update((k, first.get(k, {} if k == "checker_env" else None)) for k in CARRIED_FIELDS)
        main.update(goal_execs=first.get("goal_execs", 10000000), targets=[])
        log("%s does not exist: creating it for tree %s, %s build, from %s" %
            (rel(a.json_path), main["tree"], main["build"], os.path.basename(files[0][0])))
    ensure_trees(main)
    # Check every file before changing anything.
    seen = imported_shas(main)
    known = {}
    for path, doc, sha in files:
        diff = identity_difference(main, doc)
        if diff:
            raise UsageError("%s: its %s differs: %s has %s %s, %s has %s: nothing imported" %
                             (rel(path), diff[0], rel(a.json_path), diff[0], json.dumps(diff[1]), os.path.basename(path),
                              json.dumps(diff[2])))
        why = import_conflict(main, doc, known, path, rel(a.json_path))
        if why:
            raise UsageError("%s: %s: nothing imported" % (rel(path), why))
        twice = ({sha} | imported_shas(doc)) & seen
        if twice:
            raise UsageError("%s: %s was imported into %s before (sha256 %s): nothing imported" %
                             (rel(path), "this file" if sha in twice else "a file merged into it", rel(a.json_path),
                              sorted(twice)[0][:16]))
        seen |= {sha} | imported_shas(doc)
    goal = main.get("goal_execs")
    goal = goal if number(goal, True) and goal > 0 else 10000000
    total, findings = 0, 0
    for path, doc, sha in files:
        base = os.path.basename(path)
        machine = doc.get("machine", "unknown")
        rec = {"file": base, "sha256": sha, "machine": machine, "started": doc.get("started"),
               "date": doc.get("date"), "jobs": doc.get("jobs"), "execs": {}, "cpu_s": 0.0, "findings": 0,
               "imported_at": now_utc()}
        if imported_shas(doc):
            rec["includes"] = sorted(imported_shas(doc))
        for t in doc["targets"]:
            existed = entry_of(main, t["name"]) is not None
            e = entry(main, t["name"])
            if t.get("binary") and not e.get("binary"):
                e["binary"] = t["binary"]
            if not isinstance(e.get("since"), dict):
                if existed:         # main's count began on the tree listing it
                    x = ([x for x in main.get("trees", []) if t["name"] in x.get("targets", [])] or
                         [{"tree": main.get("tree"), "commit": main.get("commit"), "first_seen": main.get("started")}])[0]
                    e["since"] = {"tree": x.get("tree"), "commit": x.get("commit"), "date": x.get("first_seen")}
                else:
                    e["since"] = (t["since"] if isinstance(t.get("since"), dict) else
                                  {"tree": doc.get("tree"), "commit": doc.get("commit"), "date": doc.get("started")})
            holds = [x for x in doc.get("trees") or [] if isinstance(x, dict) and t["name"] in x.get("targets", [])]
            for x in holds or [{"tree": doc.get("tree"), "commit": doc.get("commit"), "first_seen": doc.get("started")}]:
                hold_tree(main, x.get("tree"), x.get("commit"), x.get("first_seen"), [t["name"]])
            e["execs"] += t["execs"]
            e["cpu_s"] += t["cpu_s"]
            e["wall_s"] += t["wall_s"]
            e["chunks"] += t["chunks"]
            e["findings"].extend(dict(f, imported_from=base, machine=machine) for f in t["findings"])
            if t.get("stopped"):
                e["stopped"] = t["stopped"]
            rec["execs"][t["name"]] = t["execs"]
            rec["cpu_s"] += t["cpu_s"]
            real = [f for f in t["findings"] if not starved(f)]
            rec["findings"] += len(real)
            if len(real) < len(t["findings"]):      # counted apart: not findings
                rec["starved"] = rec.get("starved", 0) + len(t["findings"]) - len(real)
        for old in doc.get("superseded") or []:
            if isinstance(old, dict):       # the other machine's restarted counts: not in the totals, kept
                main.setdefault("superseded", []).append(dict(old, imported_from=base, machine=machine))
        rec["cpu_s"] = round(rec["cpu_s"], 2)
        main.setdefault("imports", []).append(rec)
        total += sum(rec["execs"].values())
        findings += rec["findings"]
        log("%s (%s, started %s): +%s executions, %d finding%s%s" %
            (base, machine, doc.get("started"), human(sum(rec["execs"].values())), rec["findings"],
             "" if rec["findings"] == 1 else "s",
             ", +%d starved timeout%s" % (rec["starved"], "" if rec["starved"] == 1 else "s")
             if rec.get("starved") else ""))
    save(main, a.json_path, goal)
    print_table(main, [e["name"] for e in main["targets"]], goal)
    log("imported %d file%s: +%s executions; results in %s" %
        (len(files), "" if len(files) == 1 else "s", human(total), rel(a.json_path)))
    if findings:
        log("%d imported finding%s - a false positive or a real bug each; listed in the JSON with the file and "
            "machine they came from" % (findings, "" if findings == 1 else "s"))
        return 1
    return 0


# ------------------------------------------------------------------ --recheck-timeouts: timeouts already recorded

def run_recheck(a):
    if not a.json_path or not os.path.exists(a.json_path):
        raise UsageError("--recheck-timeouts: no %s: nothing to recheck" % (rel(a.json_path) if a.json_path else "--json"))
    doc = read_result(a.json_path, ": nothing rechecked")
    if doc.get("build") not in BUILDS:
        raise UsageError("%s names no build (%s): nothing rechecked" % (rel(a.json_path), doc.get("build")))
    if a.build_given and a.build != doc["build"]:
        raise UsageError("--build %s, but %s is the %s build's: nothing rechecked" %
                         (a.build, rel(a.json_path), doc["build"]))
    work = a.work if a.work_given else os.path.join(ROOT, "build", "nofp", doc["build"])
    return locked(work, recheck_locked, a)


class Stopped(Exception):
    """SIGTERM during --recheck-timeouts."""


def recheck_locked(a):
    doc = read_result(a.json_path, ": nothing rechecked")     # again, under the lock
    build = doc.get("build")
    if build not in BUILDS:
        raise UsageError("%s names no build (%s): nothing rechecked" % (rel(a.json_path), build))
    build_dir = a.build_dir if a.build_dir_given else os.path.join(ROOT, BUILDS[build]["dir"])
    goal = doc.get("goal_execs")
    goal = goal if number(goal, True) and goal > 0 else 10000000
    picked = set(a.names) if a.targets.strip() else set(e.get("name") for e in doc["targets"] if isinstance(e, dict))
    todo = [(e, f) for e in doc["targets"] if isinstance(e, dict) and e.get("name") in picked
            for f in e.get("findings", []) if is_timeout(f) and "recheck" not in f]
    if not todo:
        log("no timeout finding without a recheck in %s" % rel(a.json_path))
        return 0
    # Every binary a replay needs is the one its entry's executions ran on, before anything runs.
    for n in sorted(set(e["name"] for e, f in todo if os.path.isfile(os.path.join(ROOT, f["path"])))):
        e = entry_of(doc, n)
        b = binary_path(build_dir, n)
        if not e.get("binary"):
            raise UsageError("%s's %s entry records no binary: cannot tell whether %s is the one that timed out; "
                             "nothing rechecked" % (rel(a.json_path), n, rel(b)))
        if not os.access(b, os.X_OK):
            raise UsageError("no %s: the %s timeouts need fuzz_%s binary %s (--build-dir DIR: where it is); "
                             "nothing rechecked" % (rel(b), n, n, short(e["binary"])))
        have = sha256(b)
        if have != e["binary"]:
            raise UsageError("%s is not the binary %s's %s count ran: sha256 %s, the entry's %s - rebuild that tree "
                             "(%s) or pass --build-dir with that binary; nothing rechecked" %
                             (rel(b), rel(a.json_path), n, have, e["binary"],
                              (e.get("since") or {}).get("tree") if isinstance(e.get("since"), dict) else doc.get("tree")))
    env = fuzz_env(doc.get("checker_env") or {})
    log("rechecking %d timeout finding%s of %s (%s build, nice %d)" %
        (len(todo), "" if len(todo) == 1 else "s", rel(a.json_path), build, a.nice))

    def stop(signum, frame):
        raise Stopped()
    old_term = signal.signal(signal.SIGTERM, stop)
    real = done = 0
    try:
        for e, f in todo:
            path = os.path.join(ROOT, f["path"])
            if not os.path.isfile(path):
                f["recheck"] = {"exit": None, "cpu_s": None, "wall_s": None, "date": now_utc(), "verdict": "missing"}
            else:
                r = Replay(e["name"], binary_path(build_dir, e["name"]), path, a.nice, env)
                try:
                    f["recheck"] = r.wait()
                finally:
                    r.kill()
            save(doc, a.json_path, goal)
            done += 1
            real += not starved(f)
            print(recheck_line(e["name"], f), flush=True)
    except (KeyboardInterrupt, Stopped):
        log("interrupted: %d of %d rechecked and saved in %s" % (done, len(todo), rel(a.json_path)))
        return 130
    finally:
        signal.signal(signal.SIGTERM, old_term)
    log("%d rechecked: %d starved (not counted), %d real finding%s; results in %s" %
        (done, done - real, real, "" if real == 1 else "s", rel(a.json_path)))
    return 1 if real else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""Mutation audit of the tests: which small changes to allocator/ do they miss?

The bug zoo plants 16 historical bugs and shows the suite catches each.
This asks the broader question: take one line of allocator/, change one
operator (`<` to `<=`, `==` to `!=`, `&&` to `||`, drop a `!`, drop a
`+ 1`, `true` to `false`) or delete one statement (a call, `x++`, `x += y`,
an assignment), rebuild, run the fast detectors - the unit tests, the fuzz
corpora replayed with the checker at level 3 after every op, the
deterministic and free-running stressors - and record which test failed
first.  A mutant no test fails is a survivor: either it does not change
what the allocator does (an equivalent mutant), or it is a change the suite
would let through, and a test or an invariant is missing.

It never touches the tree it runs from: the tracked files are copied to
WORK/src (default build/mutants/) and built there twice, as CI's
presets: gcc without a sanitizer (debug) and clang with ASan and UBSan
(asan), both -O1, MM_DEBUG=3, the test hooks on, -Werror, the allocator as
a shared library so that a mutant relinks one .so.  Each mutant is written
there and undone; it is killed if the detectors of either build fail (the
gcc build's detectors run first).  A mutant that compiles only without -Werror is
"killed-build" (CI's builds refuse it: an uninitialised variable, a
comparison that is always true); one that does not compile at all is
"invalid"; one whose object file is byte-identical to the original's (a
line compiled out, or an operator the compiler proves redundant) is
"same-object", not run.  The detectors run in two stages, the tests that
take over 8 s last and only for a mutant the others miss; a stage that runs
past its limit (--timeout) is killed, and the mutant counts as killed by a
hang (a hang is a detection).  Results go to --json after every mutant, so
Ctrl-C loses nothing run; the summary per file follows.

python3 standard library only."""
import argparse
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What the mutants are made of: allocator/ minus the checker itself (a
# mutant there weakens a check, which no allocator test can notice without a
# bug to find) and the dumps.
DEFAULT_FILES = [
    "allocator/memmap.c", "allocator/mm.c",
    "allocator/page/alloc.c", "allocator/page/buddy.c", "allocator/page/bulk.c",
    "allocator/page/isolate.c", "allocator/page/pcp.c", "allocator/page/reclaim.c",
    "allocator/page/watermark.c", "allocator/page/bad_page.c",
    "allocator/slab/bulk.c", "allocator/slab/cache.c", "allocator/slab/debug.c",
    "allocator/slab/fastpath.c", "allocator/slab/free.c", "allocator/slab/hooks.c",
    "allocator/slab/kmalloc.c", "allocator/slab/slowpath.c",
    "allocator/cpu/hotplug.c", "allocator/cpu/irq.c", "allocator/cpu/vcpu.c",
]

# The fast detectors: every test that drives the allocator and finishes in
# seconds.  Left out: the verb and script tests (they test the front door),
# the builds of other presets (bug zoo, OSS-Fuzz, release_syntax), benches.
DEFAULT_DETECTORS = (r"^(test_.*|fuzz_[a-z]+_corpus|"
                     r"sched_stress_(pages|pcp|bulk|slub|kmalloc|mixed)|"
                     r"stress_(pages|pcp|bulk|slub|kmalloc|mixed|ops_small))$")

# The two builds a mutant must get past, as CI's presets: gcc without a
# sanitizer (the debug preset: what the allocator's own checks and the
# checker catch, and the tests that ASan builds skip) and clang with ASan
# and UBSan (the asan preset: overflows, leaks, use after free).  Both at
# -O1 for speed and MM_DEBUG=3, the test hooks on, -Werror.
COMMON = [
    "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_C_FLAGS_DEBUG=-O1", "-DMM_DEBUG=3",
    "-DMM_TEST_HOOKS=ON", "-DMM_WERROR=ON", "-DMM_ENGINE=none", "-DMM_INJECT=",
    "-DMM_COVERAGE=OFF",
    # The allocator as a shared library that the executables do not relink
    # against: a mutant rebuilds one object and one .so, not 70 executables.
    "-DCMAKE_LINK_DEPENDS_NO_SHARED=ON",
]
BUILDS = [
    ("gcc", ["-DCMAKE_C_COMPILER=gcc", "-DMM_SANITIZE="]),
    ("asan", ["-DCMAKE_C_COMPILER=clang", "-DMM_SANITIZE=address,undefined"]),
]
LLD = ["-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld=lld", "-DCMAKE_SHARED_LINKER_FLAGS=-fuse-ld=lld"]
STATIC_LIB = "add_library(mmalloc STATIC"

# Lines left alone: assertions (a mutant there only moves what a debug
# build asserts), the bug-zoo injections, and reports' text.
SKIP_LINE = re.compile(r"\b(VM_BUG_ON\w*|VM_WARN\w*|BUG_ON|BUG|WARN_ON\w*|WARN|"
                       r"BUILD_BUG_ON|assert|static_assert|_Static_assert|"
                       r"MM_BUG_ON_LEVEL|MM_INJECT\w*)\b")

# Operator replacements, as (pattern on the code with strings and comments
# blanked, replacement, kind).  The patterns refuse the neighbours that would
# make another operator (<< <<= -> >> >>=).
OPERATORS = [
    (r"(?<![<>=!-])<(?![<=])", "<=", "ror"),
    (r"(?<![<>=!])<=", "<", "ror"),
    (r"(?<![<>=!-])>(?![>=])", ">=", "ror"),
    (r"(?<![<>=!-])>=", ">", "ror"),
    (r"==", "!=", "ror"),
    (r"!=", "==", "ror"),
    (r"&&", "||", "lcr"),
    (r"\|\|", "&&", "lcr"),
    (r"!(?!=)", "", "not"),
    (r"\s\+ 1\b(?!\.)", "", "arith"),
    (r"\s- 1\b(?!\.)", "", "arith"),
    (r"\btrue\b", "false", "const"),
    (r"\bfalse\b", "true", "const"),
]

# Whole statements that can be deleted: a call, an increment, a compound or
# plain assignment - one line, ending in ';', not a declaration or a return.
STATEMENT = re.compile(r"^\s*(?:[\w.\->\[\]()*]+\s*(?:\+\+|--|[-+|&^]?=(?!=))"
                       r"[^;]*|(?:\+\+|--)[\w.\->\[\]]+|\w+\s*\([^;]*\));\s*$")
DECLARATION = re.compile(r"^\s*(?:const\s+|static\s+|unsigned\s+|struct\s+\w+\s*\*?|"
                         r"enum\s+\w+|(?:u?int\d*_t|int|long|bool|size_t|char|"
                         r"gfp_t|void)\b)")


def die(msg, code=2):
    print("tools/mutants.py: " + msg, file=sys.stderr)
    sys.exit(code)


def log(msg):
    print("[%s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


def code_view(lines):
    """Each line with comments, strings and character literals blanked
    (same length), and whether it is inside a function body and not a
    preprocessor line: (blanked, mutable) per line."""
    out, in_comment, depth, fn_body, prev_sig = [], False, 0, False, ""
    continuation = False
    for raw in lines:
        chars, i, n = list(raw), 0, len(raw)
        is_pp = continuation or raw.lstrip().startswith("#")
        continuation = is_pp and raw.rstrip("\n").endswith("\\")
        start_depth = depth
        while i < n:
            c = raw[i]
            if in_comment:
                if raw.startswith("*/", i):
                    chars[i] = chars[i + 1] = " "
                    in_comment = False
                    i += 2
                    continue
                chars[i] = " " if c != "\n" else c
                i += 1
                continue
            if raw.startswith("/*", i):
                in_comment = True
                chars[i] = chars[i + 1] = " "
                i += 2
                continue
            if raw.startswith("//", i):
                for j in range(i, n):
                    if raw[j] != "\n":
                        chars[j] = " "
                break
            if c in "\"'":
                j = i + 1
                while j < n and raw[j] != c:
                    j += 2 if raw[j] == "\\" else 1
                for k in range(i + 1, min(j, n)):
                    chars[k] = " "
                i = j + 1
                continue
            if not is_pp:
                if c == "{":
                    if depth == 0:
                        fn_body = prev_sig.rstrip().endswith(")")
                    depth += 1
                elif c == "}":
                    depth = max(depth - 1, 0)
                if not c.isspace():
                    prev_sig = (prev_sig + c)[-64:]
            i += 1
        out.append(("".join(chars), not is_pp and fn_body and start_depth > 0 and depth > 0))
    return out


def enumerate_mutants(rel, text):
    """Every mutant of one file: dicts with file, line (1-based), kind,
    the original and the mutated line."""
    lines = text.splitlines(keepends=True)
    found = []
    for no, ((code, mutable), raw) in enumerate(zip(code_view(lines), lines), 1):
        if not mutable or not code.strip() or SKIP_LINE.search(code):
            continue
        for pat, repl, kind in OPERATORS:
            for m in re.finditer(pat, code):
                if kind == "not" and code[m.end():m.end() + 1] in ("", " "):
                    continue
                s, e = m.span()
                if kind == "arith":       # "x + 1" becomes "x"
                    s += 1 if raw[s].isspace() else 0
                    mutated = raw[:s].rstrip() + raw[e:]
                else:
                    mutated = raw[:s] + repl + raw[e:]
                found.append({"file": rel, "line": no, "kind": kind, "col": s,
                              "original": raw.rstrip("\n"), "mutated": mutated.rstrip("\n")})
        stripped = code.strip()
        if (STATEMENT.match(code) and not DECLARATION.match(code)
                and not stripped.startswith(("return", "if", "while", "for", "switch",
                                             "case", "goto", "else", "do", "break", "continue"))
                and code.count("(") == code.count(")")):
            indent = raw[:len(raw) - len(raw.lstrip())]
            found.append({"file": rel, "line": no, "kind": "delete", "col": 0,
                          "original": raw.rstrip("\n"),
                          "mutated": indent + "; /* deleted */"})
    for m in found:
        m["id"] = hashlib.sha256(("%s:%d:%d:%s" % (m["file"], m["line"], m["col"], m["mutated"]))
                                 .encode()).hexdigest()[:12]
    return found


def werror_flags(failed):
    """The warning flags that broke the builds whose outputs are FAILED, as
    "-Wa,-Wb" - clang writes `[-Werror,-Wflag]`, gcc `[-Werror=flag]` - when
    every error in them is a warning made an error (the mutant compiles
    without -Werror: "killed-build"); None when any is a real compile error
    or there is no error at all (the mutant is "invalid")."""
    text = "".join(failed)
    errors = re.findall(r"error: .*", text)
    if not errors or not all("[-Werror" in e for e in errors):
        return None
    flags = set(re.findall(r"\[-Werror,(-W[\w+-]+)\]", text))
    # gcc names a warning that takes a level with its "=": [-Werror=stringop-overflow=]
    flags |= {"-W" + f for f in re.findall(r"\[-Werror=([\w+-]+)=?\]", text)}
    return ",".join(sorted(flags)) or "-Werror"


def run(cmd):
    """(exit status, stdout and stderr) of @cmd (git, cmake, ninja)."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       start_new_session=True)
    return p.returncode, p.stdout


def tree_files():
    rc, out = run(["git", "-C", ROOT, "ls-files", "-z"])
    if rc:
        die("not a git checkout: git ls-files failed")
    return [f for f in out.split("\0") if f]


def sources_hash(files):
    h = hashlib.sha256()
    for f in sorted(files):
        try:
            with open(os.path.join(ROOT, f), "rb") as fp:
                h.update(f.encode() + b"\0" + fp.read())
        except OSError:
            pass
    return h.hexdigest()[:16]


def sync_tree(files, dst, edits):
    """Make @dst hold exactly the tracked @files, each as in the tree (or
    as @edits[path](text) makes it).  A file is written only when its
    content differs, so the build in WORK stays incremental and an object
    built from a mutant left by a killed run is rebuilt (its source is
    rewritten, so it is newer).  Files that are not tracked are removed."""
    keep = set()
    for f in files:
        src = os.path.join(ROOT, f)
        if not os.path.isfile(src) or os.path.islink(src):
            continue
        keep.add(f)
        with open(src, "rb") as fp:
            data = fp.read()
        if f in edits:
            data = edits[f](data.decode()).encode()
        d = os.path.join(dst, f)
        try:
            with open(d, "rb") as fp:
                if fp.read() == data:
                    continue
        except OSError:
            pass
        os.makedirs(os.path.dirname(d), exist_ok=True)
        with open(d, "wb") as fp:
            fp.write(data)
        shutil.copymode(src, d)
    for dirpath, _, names in os.walk(dst):
        for n in names:
            rel = os.path.relpath(os.path.join(dirpath, n), dst)
            if rel not in keep:
                os.remove(os.path.join(dirpath, n))


def object_paths(build, src_abs):
    """The objects of the allocator library built from @src_abs."""
    with open(os.path.join(build, "compile_commands.json")) as fp:
        cc = json.load(fp)
    objs = []
    for e in cc:
        if os.path.abspath(e["file"]) != src_abs:
            continue
        m = re.search(r"-o\s+(\S+)", e["command"])
        if m and "/mmalloc.dir/" in m.group(1):
            objs.append(os.path.join(build, m.group(1)))
    return objs


def digest(paths):
    h = hashlib.sha256()
    for p in paths:
        with open(p, "rb") as fp:
            h.update(fp.read())
    return h.hexdigest()


FAIL_LINE = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: (\S+) \.+\**\s*(Failed|Timeout|Exception|"
                       r"Subprocess aborted|Child aborted|SEGFAULT|Not Run)", re.M)


def ctest(build, regex, exclude, jobs, limit):
    """One ctest run, killed with its tests after @limit seconds of wall
    clock (the tests' own TIMEOUT properties, 300 s for most, override
    ctest --timeout, and a mutant that deadlocks would hold every one of
    them): (rc, output; rc None when it was killed)."""
    cmd = ["ctest", "--test-dir", build, "-R", regex, "-j", str(jobs), "--stop-on-failure"]
    if exclude:
        cmd += ["-E", exclude]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=limit)
        return p.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        return None, out


START_LINE = re.compile(r"^\s*Start\s+\d+: (\S+)", re.M)
DONE_LINE = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: (\S+) ", re.M)


def detect(build, stages, jobs):
    """Run the detectors stage by stage - the quick ones, then the slow
    ones only when the quick ones all pass; @stages is [(regex, exclude,
    wall-clock limit)].  (status, first failing test or None, seconds)."""
    t0 = time.monotonic()
    for regex, exclude, limit in stages:
        rc, out = ctest(build, regex, exclude, jobs, limit)
        if rc != 0:
            break
    secs = round(time.monotonic() - t0, 1)
    if rc == 0:
        return "survived", None, secs
    if rc is None:
        running = sorted(set(START_LINE.findall(out)) - set(DONE_LINE.findall(out)))
        return "killed-timeout", ",".join(running) or "(ctest)", secs
    m = FAIL_LINE.search(out)
    if m:
        return ("killed-timeout" if m.group(2) == "Timeout" else "killed"), m.group(1), secs
    return "killed", "(ctest rc %d)" % rc, secs


PASS_LINE = re.compile(r"Test\s+#\d+: (\S+) \.+\s+Passed\s+([\d.]+) sec")


def summary(results):
    files = {}
    for r in results:
        f = files.setdefault(r["file"], {"killed": 0, "survived": 0, "same-object": 0, "invalid": 0})
        key = "killed" if r["status"].startswith("killed") else r["status"]
        f[key] += 1
    rows = []
    tot = {"killed": 0, "survived": 0, "same-object": 0, "invalid": 0}
    for name in sorted(files):
        f = files[name]
        for k in tot:
            tot[k] += f[k]
        rows.append((name, f))
    rows.append(("total", tot))
    print("\n%-28s %7s %8s %11s %7s %7s" % ("file", "killed", "survived", "same-object",
                                             "invalid", "score"))
    for name, f in rows:
        run_n = f["killed"] + f["survived"]
        score = "%.0f%%" % (100.0 * f["killed"] / run_n) if run_n else "-"
        print("%-28s %7d %8d %11d %7d %7s" % (name, f["killed"], f["survived"],
                                               f["same-object"], f["invalid"], score))
    surv = [r for r in results if r["status"] == "survived"]
    if surv:
        print("\nsurvivors (no detector failed):")
        for r in surv:
            print("  %s:%d [%s] %s\n  %s   -> %s" % (r["file"], r["line"], r["kind"], r["id"],
                                                   " " * len(r["file"]), r["mutated"].strip()))
    return tot


def main():
    ap = argparse.ArgumentParser(
        prog="tools/mutants.py",
        description="Mutation audit: mutate one line of allocator/ at a time, rebuild, "
                    "run the fast detector tests, report which mutants no test kills.",
        epilog="Exit status: 0 every mutant run was killed; 1 some survived; 2 bad arguments, "
               "or the unmutated tree does not build or fails the detectors; 130 interrupted "
               "(the results so far are in --json).  See README.md, 'Mutation audit'.")
    ap.add_argument("--count", type=int, default=40,
                    help="how many mutants to sample from all candidates (default 40; 0: all)")
    ap.add_argument("--seed", type=int, default=1, help="sampling seed (default 1)")
    ap.add_argument("--files", nargs="+", metavar="PATH",
                    help="files to mutate, relative to the repository root "
                         "(default: allocator/ but the checker and the dumps)")
    ap.add_argument("--ids", nargs="+", metavar="ID",
                    help="run these mutants (ids from a summary or --json) instead of a "
                         "sample: e.g. the survivors of a run again, after a test was added")
    ap.add_argument("--detectors", default=DEFAULT_DETECTORS,
                    help="ctest -R regex of the tests that must kill a mutant")
    ap.add_argument("--timeout", type=int, default=60,
                    help="wall-clock seconds a stage of the detectors may take, or three times "
                         "what it took on the unmutated tree if longer; past it the mutant "
                         "counts as killed by a hang (default 60)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="ctest -j")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "mutants"),
                    help="working directory for src/, build-gcc/ and build-asan/, kept between "
                         "runs so that they build incrementally (default build/mutants)")
    ap.add_argument("--json", default=None,
                    help="write the results here after every mutant (default WORK/mutants.json)")
    ap.add_argument("--list", action="store_true",
                    help="print the sampled mutants and their counts per kind; build nothing")
    a = ap.parse_args()
    if a.count < 0:
        die("--count must be 0 (all) or more, not %d" % a.count)
    if a.timeout < 1:
        die("--timeout must be at least 1 second")
    if a.jobs < 1:
        die("--jobs must be at least 1")
    try:
        re.compile(a.detectors)
    except re.error as e:
        die("--detectors is not a regex: %s" % e)

    files = tree_files()
    targets = a.files or DEFAULT_FILES
    for f in targets:
        if f not in files or not f.endswith(".c"):
            die("%s: not a tracked C file of this repository" % f)
    candidates = []
    for f in targets:
        with open(os.path.join(ROOT, f)) as fp:
            candidates += enumerate_mutants(f, fp.read())
    rng = random.Random(a.seed)
    if a.ids:
        by_id = {m["id"]: m for m in candidates}
        unknown = [i for i in a.ids if i not in by_id]
        if unknown:
            die("no such mutant in the current sources: %s (a changed line changes its id)"
                % ", ".join(unknown))
        sample = [by_id[i] for i in dict.fromkeys(a.ids)]
    elif a.count == 0 or a.count >= len(candidates):
        sample = candidates
    else:
        sample = rng.sample(candidates, a.count)
    sample.sort(key=lambda m: (m["file"], m["line"], m["col"]))
    kinds = {}
    for m in candidates:
        kinds[m["kind"]] = kinds.get(m["kind"], 0) + 1
    log("%d candidate mutants in %d files (%s); %s"
        % (len(candidates), len(targets),
           ", ".join("%s %d" % kv for kv in sorted(kinds.items())),
           "%d chosen by id" % len(sample) if a.ids else
           "sampled %d with seed %d" % (len(sample), a.seed)))
    if a.list:
        for m in sample:
            print("%s:%d [%s] %s\n    %s\n -> %s" % (m["file"], m["line"], m["kind"], m["id"],
                                                     m["original"].strip(), m["mutated"].strip()))
        return 0

    work = os.path.abspath(a.work)
    src = os.path.join(work, "src")
    out_json = a.json or os.path.join(work, "mutants.json")
    if os.path.realpath(work) in (os.path.realpath(ROOT), os.path.realpath(os.path.dirname(ROOT))):
        die("--work must not be the repository or its parent")

    def shared_lib(text):
        if STATIC_LIB not in text:
            die("allocator/CMakeLists.txt no longer has '%s': update tools/mutants.py" % STATIC_LIB)
        return text.replace(STATIC_LIB, "add_library(mmalloc SHARED")
    os.makedirs(src, exist_ok=True)
    sync_tree(files, src, {"allocator/CMakeLists.txt": shared_lib})
    log("copied the tree to %s; configuring and building %s"
        % (src, ", ".join(os.path.join(work, "build-" + n) for n, _ in BUILDS)))
    builds = []
    for name, flags in BUILDS:
        build = os.path.join(work, "build-" + name)
        lld = LLD if name == "asan" and shutil.which("ld.lld") else []
        rc, out = run(["cmake", "-S", src, "-B", build] + COMMON + flags + lld)
        if rc:
            sys.stderr.write(out[-3000:])
            die("cmake failed on the unmutated tree (%s build)" % name)
        rc, out = run(["ninja", "-C", build])
        if rc:
            sys.stderr.write(out[-3000:])
            die("the unmutated tree does not build (%s build)" % name)
        t0 = time.monotonic()
        rc, out = ctest(build, a.detectors, None, a.jobs, 3600)
        secs = round(time.monotonic() - t0, 1)
        if rc:
            m = FAIL_LINE.search(out)
            die("the unmutated tree fails the detectors in the %s build (%s): fix that first"
                % (name, m.group(1) if m else "ctest rc %s" % rc))
        # Tests of more than 8 s run last, and only for a mutant the rest miss.
        times = {n: float(t) for n, t in PASS_LINE.findall(out)}
        slow_names = sorted(n for n, t in times.items() if t > 8)
        slow = "^(%s)$" % "|".join(re.escape(n) for n in slow_names) if slow_names else None
        # Each stage may take --timeout, or three times what it took here if
        # that is longer; past it the mutant is a hang.
        quick_s = sum(t for n, t in times.items() if n not in slow_names) / a.jobs
        slow_s = max([times[n] for n in slow_names] + [sum(times[n] for n in slow_names) / a.jobs])
        stages = [(a.detectors, slow, max(a.timeout, 3 * quick_s))]
        if slow:
            stages.append((slow, None, max(a.timeout, 3 * slow_s)))
        n_det = len(times)
        log("%s build: the unmutated tree passes %d detector tests in %.1f s; run last: %s"
            % (name, n_det, secs, ", ".join(slow_names) or "none"))
        builds.append({"name": name, "dir": build, "stages": stages, "detector_tests": n_det,
                       "baseline_s": secs, "run_last": slow_names})

    doc = {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "sources": sources_hash(files),
           "builds": [{"name": b["name"], "flags": COMMON + dict(BUILDS)[b["name"]],
                       "detector_tests": b["detector_tests"], "baseline_s": b["baseline_s"],
                       "run_last": b["run_last"],
                       "stage_limits_s": [round(st[2], 1) for st in b["stages"]]} for b in builds],
           "detectors": a.detectors, "timeout_s": a.timeout,
           "seed": None if a.ids else a.seed, "ids": a.ids, "candidates": len(candidates),
           "candidates_by_kind": kinds, "sampled": len(sample), "results": []}

    def save():
        tmp = out_json + ".tmp"
        with open(tmp, "w") as fp:
            json.dump(doc, fp, indent=1)
            fp.write("\n")
        os.replace(tmp, out_json)

    # The original objects' digests, taken before any mutant is built: after
    # a mutant the restored source is rebuilt only with the next mutant.
    baseline = {}
    for f in set(m["file"] for m in sample):
        objs = [o for b in builds for o in object_paths(b["dir"], os.path.join(src, f))]
        baseline[f] = (objs, digest(objs) if objs else None)
    originals = {}
    interrupted = False

    def restore_all():
        for path, text in originals.items():
            with open(path, "w") as fp:
                fp.write(text)

    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    try:
        for i, m in enumerate(sample, 1):
            path = os.path.join(src, m["file"])
            if path not in originals:
                with open(path) as fp:
                    originals[path] = fp.read()
            objs, before = baseline[m["file"]]
            lines = originals[path].splitlines(keepends=True)
            nl = "\n" if lines[m["line"] - 1].endswith("\n") else ""
            lines[m["line"] - 1] = m["mutated"] + nl
            with open(path, "w") as fp:
                fp.write("".join(lines))
            r = dict(m)
            outs = [run(["ninja", "-C", b["dir"]]) for b in builds]
            failed = [out for rc, out in outs if rc]
            werror = werror_flags(failed)
            if werror:
                r.update(status="killed-build", test=werror, seconds=0)
            elif failed:
                r.update(status="invalid", test=None, seconds=0)
            elif objs and digest(objs) == before:
                r.update(status="same-object", test=None, seconds=0)
            else:
                secs = 0
                for b in builds:
                    st, test, t = detect(b["dir"], b["stages"], a.jobs)
                    secs += t
                    if st != "survived":
                        break
                r.update(status=st, test=b["name"] + ":" + test if test else None,
                         seconds=round(secs, 1))
            with open(path, "w") as fp:
                fp.write(originals[path])
            doc["results"].append(r)
            save()
            log("%d/%d %s:%d [%s] %s%s" % (i, len(sample), m["file"], m["line"], m["kind"],
                                          r["status"], " by " + r["test"] if r.get("test") else ""))
    except KeyboardInterrupt:
        interrupted = True
        log("interrupted: the mutated file is restored; %d mutants were run" % len(doc["results"]))
    finally:
        restore_all()
    doc["interrupted"] = interrupted
    save()
    tot = summary(doc["results"])
    print("\nresults: %s" % out_json)
    if interrupted:
        return 130
    return 1 if tot["survived"] else 0


if __name__ == "__main__":
    sys.exit(main())

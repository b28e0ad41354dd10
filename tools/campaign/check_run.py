#!/usr/bin/env python3
"""Tests of ./mmfuzz run (ctest, tests/run_verb.cmake; standard library only).

    check_run.py args                 bad arguments: exit 2 and a message naming
                                      the problem; --help: exit 0, every option;
                                      the components' shares (test_share)
    check_run.py campaign --work DIR  a short campaign on the correct allocator,
                                      then a planted failure, then the default
                                      output directory's naming
    check_run.py configure --work DIR the build on a stand-in tree: a failed
                                      configure's leftovers (a cache, no
                                      build.ninja) in build/fuzz are configured
                                      again, none built in in build/stress-rel

campaign:
 1. ./mmfuzz run --time 30 --out DIR/out/r (builds build/fuzz and
    build/stress-rel when needed): exit 0; a summary row for every target of
    targets/TARGETS and for every stressor mode (free-running and
    deterministic), each "ok" with work done (execs, ops, runs > 0); the
    output layout (summary.txt, summary.json, build/, fuzz/, stress/ and
    each component's logs); summary.txt is the summary printed.
 2. The same --out again, through a front door that plants a scribble in the
    free-running pages stressor (--selftest scribble), only that component:
    it gets DIR/out/r-1, leaves run 1's files alone, exits 1 and lists the
    finding with the stressor's rerun command.
 3. Two runs without --out (one deterministic mode, 1 s): each gets its own
    out/run/<UTC time>[-N]; removed afterwards.
 4. SIGINT (Ctrl-C) 3 s into a run of two stressor components: exit 130, the
    running one "interrupted", the next "not run", and the summary printed
    and written all the same.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import fuzz_targets  # noqa: E402
MMFUZZ = os.path.join(ROOT, "mmfuzz")
MODES = ["pages", "pcp", "bulk", "slub", "kmalloc", "mixed"]
FAILED = []


def check(cond, what):
    print("%s: %s" % ("ok  " if cond else "FAIL", what), flush=True)
    if not cond:
        FAILED.append(what)
    return cond


def run(args, env=None, timeout=900):
    t0 = time.monotonic()
    p = subprocess.run([MMFUZZ, "run"] + args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, errors="replace", env=dict(os.environ, **(env or {})), timeout=timeout)
    return p.returncode, p.stdout, time.monotonic() - t0


def targets():
    return fuzz_targets.names(ROOT)


def test_args():
    bad = [
        (["--time"], "--time needs a value"),
        (["--time", "0"], "--time wants whole seconds"),
        (["--time", "abc"], "--time wants whole seconds"),
        (["--time", "-5"], "--time wants whole seconds"),
        (["--time=1.5"], "--time wants whole seconds"),
        (["--seed", "x"], "--seed wants a non-negative integer"),
        (["--seed", "123456789012345678901"], "--seed wants a non-negative integer"),
        (["--out"], "--out needs a value"),
        (["--out="], "--out needs a value"),
        (["--seed="], "--seed needs a value"),
        (["--out", MMFUZZ], "--out '%s' exists and is not a directory" % MMFUZZ),
        (["--out", MMFUZZ + "/sub"], "--out: cannot create '%s/sub': %s is not a directory" % (MMFUZZ, MMFUZZ)),
        (["--bogus"], "unknown option '--bogus'"),
        (["pages"], "unexpected argument 'pages'"),
    ]
    for args, msg in bad:
        rc, out, _ = run(args, timeout=60)
        check(rc == 2, "run %s exits 2 (got %d)" % (" ".join(args), rc))
        check(("mmfuzz run: " + msg) in out and "usage: mmfuzz run" in out,
              "run %s says '%s' and the usage" % (" ".join(args), msg))
    rc, out, _ = run(["--help"], timeout=60)
    check(rc == 0, "run --help exits 0")
    for opt in ("--time S", "--out DIR", "--seed N", "--no-build", "Exit status"):
        check(opt in out, "run --help documents %s" % opt)
    check(all(t in out for t in targets()), "run --help names every fuzz target")
    rc2, out2, _ = run(["-h"], timeout=60)
    check(rc2 == 0 and out2 == out, "run -h is run --help")
    test_share()


def table_rows(text, title_prefix, names):
    """The rows of the summary table whose title starts with title_prefix: {name: [cells]}."""
    lines = text.splitlines()
    rows = {}
    for i, l in enumerate(lines):
        if l.startswith(title_prefix):
            for r in lines[i + 2:]:
                if not r.startswith("  "):
                    break
                cells = r.split()
                if cells and cells[0] in names:
                    rows[cells[0]] = cells
            break
    return rows


def check_summary(text, d, names):
    fz = table_rows(text, "fuzz targets", names)
    fr = table_rows(text, "stressors, free-running", MODES)
    dt = table_rows(text, "stressors, deterministic", MODES)
    for t in names:
        check(t in fz and fz[t][1] == "ok" and int(fz[t][3]) > 0, "summary: fuzz row '%s' ok with execs > 0: %s" %
              (t, fz.get(t)))
    for m in MODES:
        check(m in fr and fr[m][1] == "ok" and int(fr[m][3]) > 0, "summary: free-running row '%s' ok with ops > 0: %s" %
              (m, fr.get(m)))
        check(m in dt and dt[m][1] == "ok" and int(dt[m][3]) > 0, "summary: deterministic row '%s' ok with runs > 0: %s" %
              (m, dt.get(m)))
    check("findings: none" in text and "errors: none" in text, "summary: no findings, no errors")
    check("result: clean (exit 0)" in text, "summary: result clean")


def check_layout(d, names):
    for f in ("summary.txt", "summary.json"):
        check(os.path.isfile(os.path.join(d, f)), "layout: %s" % f)
    for sub in ("build", "fuzz", "stress"):
        check(os.path.isdir(os.path.join(d, sub)), "layout: %s/" % sub)
    for t in names:
        for f in ("fuzz/%s.log" % t, "fuzz/%s.json" % t):
            check(os.path.isfile(os.path.join(d, f)), "layout: %s" % f)
        for sub in ("corpus", "crashes"):
            check(os.path.isdir(os.path.join(d, "fuzz", t, t, sub)), "layout: fuzz/%s/%s/%s/" % (t, t, sub))
    for m in MODES:
        for f in ("stress/%s.log" % m, "stress/%s.json" % m, "stress/det-%s.log" % m):
            check(os.path.isfile(os.path.join(d, f)), "layout: %s" % f)
    try:
        s = json.load(open(os.path.join(d, "summary.json")))
    except (OSError, ValueError) as e:
        check(False, "summary.json reads: %s" % e)
        return
    check(s.get("exit_status") == 0 and s.get("findings") == [] and s.get("errors") == [],
          "summary.json: exit_status 0, no findings, no errors")
    check([c["name"] for c in s.get("fuzz", [])] == names, "summary.json: every fuzz target")
    check(all(c.get("execs", 0) > 0 and c.get("coverage", 0) for c in s.get("fuzz", [])),
          "summary.json: execs and coverage for every target")
    check([c["name"] for c in s.get("stress", [])] == MODES and all(c.get("ops", 0) > 0 for c in s["stress"]),
          "summary.json: ops for every free-running mode")
    check([c["name"] for c in s.get("deterministic", [])] == MODES and
          all(c.get("runs", 0) > 0 and c.get("ops", 0) > 0 for c in s["deterministic"]),
          "summary.json: runs and ops for every deterministic mode")


def test_campaign(work):
    names = targets()
    out = os.path.join(work, "out")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    r = os.path.join(out, "r")

    # 1. The campaign, clean.
    rc, text, secs = run(["--time", "30", "--out", r])
    m = re.search(r"build done in (\d+)s", text)
    print("run 1: exit %d in %.0fs (build %ss, not counted in the budget)" % (rc, secs, m.group(1) if m else "?"))
    if not check(rc == 0, "run --time 30 exits 0 (got %d)" % rc):
        print(text[-6000:])
    check(re.search(r"\[ ?1/%d fuzz %s\]" % (len(names) + 12, names[0]), text) is not None,
          "progress: the first component announced with its index")
    check("campaign" in text and "s left" in text, "progress: campaign time left shown")
    check_summary(text, r, names)
    check_layout(r, names)
    try:
        txt = open(os.path.join(r, "summary.txt")).read()
        check(txt.strip() in text, "summary.txt is the summary printed")
    except OSError:
        check(False, "summary.txt reads")

    # 2. Same --out: a new directory; a planted failure is found, exit 1.
    before = {f: os.path.getmtime(os.path.join(r, f)) for f in ("summary.json", "summary.txt")}
    wrap = os.path.join(work, "plant-scribble.sh")
    with open(wrap, "w") as f:
        f.write('#!/bin/sh\n# the front door, plus a planted scribble in the free-running stressor\n'
                'if [ "$1" = stress ]; then exec "%s" "$@" --selftest scribble; fi\nexec "%s" "$@"\n' % (MMFUZZ, MMFUZZ))
    os.chmod(wrap, 0o755)
    rc, text, secs = run(["--time", "4", "--no-build", "--out", r],
                         env={"MMFUZZ_RUN_VIA": wrap, "MMFUZZ_RUN_ONLY": "stress:pages"}, timeout=300)
    print("run 2: exit %d in %.0fs" % (rc, secs))
    r1 = r + "-1"
    check(os.path.isfile(os.path.join(r1, "summary.json")), "run 2 with the same --out got %s" % r1)
    check(before == {f: os.path.getmtime(os.path.join(r, f)) for f in before}, "run 1's summary untouched by run 2")
    if not check(rc == 1, "a planted scribble: exit 1 (got %d)" % rc):
        print(text[-4000:])
    check(re.search(r"findings: 1 .*\n  1\. stress pages: .*C1 violated", text) is not None,
          "the finding is listed with what the checker said")
    check(re.search(r"replay: +\./mmfuzz stress pages .*--seed \S+ .*--selftest scribble", text) is not None,
          "the finding's replay command is the stressor's rerun line")
    try:
        s = json.load(open(os.path.join(r1, "summary.json")))
        check(s["exit_status"] == 1 and len(s["findings"]) == 1 and "rerun" not in s["findings"][0]["command"],
              "summary.json: exit_status 1, the finding and its command")
    except (OSError, ValueError, KeyError) as e:
        check(False, "run 2's summary.json: %s" % e)

    # 3. The default directory: out/run/<UTC time>, never reused.
    dirs = []
    for i in range(2):
        rc, text, _ = run(["--time", "1", "--no-build"], env={"MMFUZZ_RUN_ONLY": "det:pcp"}, timeout=120)
        m = re.search(r"output in (\S+)", text)
        check(rc == 0 and m is not None, "default --out run %d exits 0 and names its directory" % (i + 1))
        if m:
            dirs.append(m.group(1))
    check(len(dirs) == 2 and dirs[0] != dirs[1], "two runs, two directories: %s" % dirs)
    check(all(re.fullmatch(r"out/run/\d{8}T\d{6}Z(-\d+)?", d) for d in dirs), "named out/run/<UTC time>[-N]")
    for d in dirs:
        p = os.path.join(ROOT, d)
        if re.fullmatch(r"out/run/\d{8}T\d{6}Z(-\d+)?", d) and os.path.isfile(os.path.join(p, "summary.json")):
            shutil.rmtree(p)


def run_interrupted(d, env):
    """./mmfuzz run --time 40 into @d with @env added, SIGINT after 3 s: (exit status, output)."""
    p = subprocess.Popen([MMFUZZ, "run", "--time", "40", "--no-build", "--out", d], cwd=ROOT,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                         env=dict(os.environ, **env))
    time.sleep(3)
    p.send_signal(signal.SIGINT)
    try:
        text, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        text, _ = p.communicate()
    return p.returncode, text


def test_interrupt(out):
    d = os.path.join(out, "int")
    rc, text = run_interrupted(d, {"MMFUZZ_RUN_ONLY": "stress:pcp,det:pcp"})
    check(rc == 130, "SIGINT: exit 130 (got %s)" % rc)
    check("STOPPED: interrupted (SIGINT)" in text, "SIGINT: the summary says it was stopped")
    fr = table_rows(text, "stressors, free-running", MODES)
    dt = table_rows(text, "stressors, deterministic", MODES)
    check(fr.get("pcp", [None, None])[1] == "interrupted" and dt.get("pcp", [None, None])[1] == "not",
          "SIGINT: the running component interrupted, the next not run: %s %s" % (fr.get("pcp"), dt.get("pcp")))
    try:
        s = json.load(open(os.path.join(d, "summary.json")))
        check(s["exit_status"] == 130 and s["stress"][0]["status"] == "interrupted",
              "SIGINT: summary.json written, exit_status 130")
    except (OSError, ValueError, KeyError, IndexError) as e:
        check(False, "SIGINT: summary.json: %s" % e)


def test_interrupt_finding(out):
    """A stressor that printed its FAILURE line and is then stopped by the
    interrupt (exit 130, no report) is still a finding; a replay command the
    stressor did not reproduce with is not offered as an exact replay."""
    d = os.path.join(out, "int-found")
    stub = os.path.join(out, "stub-stress.sh")
    with open(stub, "w") as f:
        f.write("#!/bin/sh\n"
                "# The front door, except that `stress` is a stressor that fails at once, says so,\n"
                "# names a deterministic replay that did not reproduce, and then waits to be stopped.\n"
                "if [ \"$1\" != stress ]; then exec \"%s\" \"$@\"; fi\n"
                "js=\"\"\n"
                "while [ $# -gt 0 ]; do [ \"$1\" = --json ] && js=$2; shift; done\n"
                "echo \"mmfuzz-stress: FAILURE: C1 violated: planted by check_run\"\n"
                "echo \"rerun: ./mmfuzz stress pcp --threads 2 --seed 0x1\"\n"
                "printf '{\"result\": \"FAILURE\", \"failure\": \"C1 violated: planted by check_run\", "
                "\"replay\": {\"status\": \"free-running only\", "
                "\"command\": \"./mmfuzz stress pcp --deterministic --seed 0x1 --run 3\"}}\\n' >\"$js\"\n"
                "trap 'exit 130' INT TERM\n"
                "while :; do sleep 0.1; done\n" % MMFUZZ)
    os.chmod(stub, 0o755)
    rc, text = run_interrupted(d, {"MMFUZZ_RUN_ONLY": "stress:pcp", "MMFUZZ_RUN_VIA": stub})
    if not check(rc == 1, "interrupted after a FAILURE line: exit 1, a finding (got %s)" % rc):
        print(text[-3000:])
    check(re.search(r"findings: 1 .*\n  1\. stress pcp: .*planted by check_run", text) is not None,
          "interrupted after a FAILURE line: the finding is listed")

    # The same stressor ending by itself, exit 1: its replay command was not reproduced with.
    with open(stub) as f:
        body = f.read()
    with open(stub, "w") as f:
        f.write(body.replace("trap 'exit 130' INT TERM\n", "exit 1\n"))
    rc, text, _ = run(["--time", "4", "--no-build", "--out", d + "-exit1"],
                      env={"MMFUZZ_RUN_ONLY": "stress:pcp", "MMFUZZ_RUN_VIA": stub}, timeout=120)
    check(rc == 1 and "planted by check_run" in text, "a stressor's FAILURE and exit 1: a finding (got %d)" % rc)
    check("or exactly" not in text, "a replay the stressor did not reproduce with is not called exact")


STANDIN_CMAKE = r"""#!/usr/bin/env bash
# cmake's stand-in: logs its arguments; a configure (--preset P, run in the tree) writes build/P's cache
# and build.ninja; --build DIR fails as ninja does without DIR/build.ninja, else makes its targets.
echo "$*" >>"${STANDIN_CMAKE_LOG:?}"
if [[ $1 == --build ]]; then
	[[ -e $2/build.ninja ]] || { echo "ninja: error: loading 'build.ninja': No such file or directory"; exit 1; }
	dir=$2
	shift 3
	mkdir -p "$dir/targets"
	for t; do printf '#!/bin/sh\nexit 0\n' >"$dir/targets/$t" && chmod +x "$dir/targets/$t"; done
	exit 0
fi
[[ $1 == --preset ]] && : >"build/$2/CMakeCache.txt" && : >"build/$2/build.ninja"
"""


def test_share():
    """campaign.share(): overruns spread over the components still to run.  A fuzz half of 150 s over
    8 targets where each one runs 5 s past its share (the verb's start and coverage pass): every
    target after the first gets the same share, and the half ends on time.  The share was the
    weight's part of what was left, so the overruns came out of the last target: 18.75 s for the
    first, 5.8 s for the last (a 300 s ./mmfuzz run: buddy 18.7 s, sched 4.5 s)."""
    sys.path.insert(0, os.path.join(ROOT, "tools", "campaign"))
    import campaign
    comps = [{"kind": "fuzz", "weight": 0.5 / 8} for _ in range(8)]
    left, got, overhead = 150.0, [], {}
    for i, c in enumerate(comps):
        secs = campaign.share(left, c, comps[i:], overhead)
        got.append(secs)
        left -= secs + 5.0
        overhead.setdefault("fuzz", []).append(5.0)
    print("shares: %s, left at the end %.2f s" % (" ".join("%.2f" % x for x in got), left))
    prior = campaign.OVERRUN_PRIOR["fuzz"]
    check(abs(got[0] - (150.0 - 8 * prior) / 8) < 1e-9,
          "the first target: 150 s / 8 less the prior overrun (%.1f s), none seen yet" % prior)
    check(max(got[1:]) - min(got[1:]) < 1e-6, "every later target the same share")
    check(abs(left) < 1e-6, "the half ends on time (overruns included)")
    # a kind with no overrun known reserves nothing; the least share holds when the reserve is all
    stress, det = {"kind": "stress", "weight": 0.25}, {"kind": "det", "weight": 0.25}
    check(abs(campaign.share(20.0, stress, [stress, det], {"det": [2.0, 4.0]}) - 8.5) < 1e-9,
          "stress and det: the det run's mean overrun (3 s) reserved, the rest split by weight")
    check(campaign.share(5.0, det, [det], {"det": [9.0]}) == campaign.MIN_SLICE["det"],
          "a reserve above what is left: the least share")


def test_configure(work):
    """A failed configure's leftovers (CMakeCache.txt, no build.ninja) in build/fuzz and build/stress-rel,
    on a stand-in tree (MMFUZZ_ROOT, target a) with a stand-in cmake and a front door whose stress verb
    fails to configure again: build/fuzz is configured again (only a missing cache was, and every later
    campaign failed in ninja), build/stress-rel is not built in, and the deterministic stressor is
    reported not built for that reason (it was a ninja error in sched.log)."""
    shutil.rmtree(work, ignore_errors=True)
    t, bin_dir = os.path.join(work, "root"), os.path.join(work, "bin")
    for d in ("targets", "build/fuzz", "build/stress-rel"):
        os.makedirs(os.path.join(t, d))
    os.makedirs(bin_dir)
    os.symlink(os.path.join(ROOT, "tools"), os.path.join(t, "tools"))
    with open(os.path.join(t, "targets", "TARGETS"), "w") as f:
        f.write("a\n")
    for d in ("fuzz", "stress-rel"):
        open(os.path.join(t, "build", d, "CMakeCache.txt"), "w").close()
    with open(os.path.join(bin_dir, "cmake"), "w") as f:
        f.write(STANDIN_CMAKE)
    door = os.path.join(work, "door.sh")
    with open(door, "w") as f:
        f.write('#!/bin/sh\n# the front door: the stress verb\'s configure fails (again)\n'
                'echo "mmfuzz stress: configure failed"\nexit 1\n')
    for x in (door, os.path.join(bin_dir, "cmake")):
        os.chmod(x, 0o755)
    log = os.path.join(work, "cmake.log")
    out = os.path.join(work, "out")
    env = dict(os.environ, MMFUZZ_ROOT=t, MMFUZZ_RUN_VIA=door, MMFUZZ_RUN_ONLY="det:pages",
               STANDIN_CMAKE_LOG=log, PATH=bin_dir + os.pathsep + os.environ["PATH"])
    p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "campaign", "campaign.py"), "--time", "1",
                        "--out", out], cwd=t, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, errors="replace", timeout=120)
    print(p.stdout)
    calls = open(log).read() if os.path.exists(log) else ""
    print("cmake calls:\n" + calls)
    check("--preset fuzz" in calls.splitlines(), "build/fuzz (a cache, no build.ninja) is configured again")
    check(("--build %s/build/fuzz --target fuzz_a" % t) in calls.splitlines(), "fuzz_a is built")
    check(("--build %s/build/stress-rel" % t) not in calls, "no build in build/stress-rel (a cache, no build.ninja)")
    try:
        s = json.load(open(os.path.join(out, "summary.json")))
    except (OSError, ValueError) as e:
        check(False, "summary.json reads: %s" % e)
        return
    errs = [e["what"] for e in s.get("errors", [])]
    check(len(errs) == 1 and re.fullmatch(r"mmfuzz-sched-stress not built: build/stress-rel is not configured "
                                          r"\(log \S*/build/stress\.log\)", errs[0]) is not None,
          "the deterministic stressor: not built, build/stress-rel not configured, the stress log named: %s" % errs)
    check(p.returncode == 2, "exit 2, a component not built (got %d)" % p.returncode)


def main():
    a = sys.argv[1:]
    if a[:1] == ["args"]:
        test_args()
    elif a[:2] == ["configure", "--work"] and len(a) == 3:
        test_configure(os.path.abspath(a[2]))
    elif a[:2] == ["campaign", "--work"] and len(a) == 3:
        os.makedirs(a[2], exist_ok=True)
        test_campaign(os.path.abspath(a[2]))
        test_interrupt(os.path.join(os.path.abspath(a[2]), "out"))
        test_interrupt_finding(os.path.join(os.path.abspath(a[2]), "out"))
    else:
        print(__doc__)
        return 2
    if FAILED:
        print("%d check(s) failed:\n  %s" % (len(FAILED), "\n  ".join(FAILED)))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

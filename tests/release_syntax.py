#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""release_syntax.py CLANG COMPILE_COMMANDS.json - every C file of this build,
compiled again by clang the way the clang-release preset compiles it
(MM_DEBUG=0, no MM_TEST_HOOKS, -O2 -DNDEBUG, -Werror), syntax and semantic
checks only (-fsyntax-only): a warning that only a build without the test
hooks or the debug checks sees fails here, in the debug preset that CI runs.

Why: clang-release stopped building with 0b4a563 (2026-11-30: a function
of a test used only under MM_TEST_HOOKS, -Wunused-function, -Werror) and
stayed broken for a week without a test noticing, because no CI preset
builds without the hooks.

Exit 0 when every file passes, 1 when any fails (its diagnostics printed),
2 on bad arguments or an unreadable compile_commands.json.
"""
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys

# Flags of this build that clang-release does not have.
DROP_PREFIXES = ("-DMM_DEBUG=", "-DMM_TEST_HOOKS", "-fsanitize", "-fno-sanitize", "-fprofile",
                 "-fcoverage", "-O", "-g", "-Werror", "-fanalyzer", "-MD")
DROP_WITH_ARG = ("-o", "-MF", "-MT", "-c")
# gcc-only warning switches clang would reject as unknown
GCC_ONLY_WARNINGS = ("-Wlogical-op", "-Wduplicated-cond", "-Wduplicated-branches")


def release_argv(clang, entry):
    """The clang-release command for one compile_commands.json entry."""
    argv = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
    out = [clang]
    skip = False
    for a in argv[1:]:
        if skip:
            skip = False
            continue
        if a in DROP_WITH_ARG:
            skip = True
            continue
        if a.startswith(DROP_PREFIXES) or a == entry["file"]:
            continue
        if a in GCC_ONLY_WARNINGS:
            continue
        out.append(a)
    out += ["-DMM_DEBUG=0", "-O2", "-DNDEBUG", "-Werror", "-fsyntax-only", entry["file"]]
    return out


def main(argv):
    if len(argv) != 3:
        print("usage: release_syntax.py CLANG COMPILE_COMMANDS.json", file=sys.stderr)
        return 2
    clang, path = argv[1], argv[2]
    try:
        with open(path, encoding="utf-8") as f:
            entries = json.load(f)
    except (OSError, ValueError) as e:
        print(f"release_syntax: cannot read {path}: {e}", file=sys.stderr)
        return 2
    # One check per (file, flags): the same source in two libraries with the same flags is one.
    jobs = {}
    for e in entries:
        if not e.get("file", "").endswith(".c"):
            continue
        cmd = release_argv(clang, e)
        jobs.setdefault(tuple(cmd), e)
    if not jobs:
        print(f"release_syntax: {path} names no C file", file=sys.stderr)
        return 2

    def run(cmd):
        p = subprocess.run(list(cmd), cwd=jobs[cmd].get("directory"), capture_output=True, text=True)
        return cmd, p.returncode, p.stdout + p.stderr

    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for cmd, rc, text in pool.map(run, sorted(jobs)):
            if rc != 0:
                failed += 1
                print(f"FAIL: {shlex.join(cmd)}\n{text}")
    files = len({cmd[-1] for cmd in jobs})
    print(f"release_syntax: {len(jobs)} compiles of {files} files as clang-release would: "
          f"{len(jobs) - failed} clean, {failed} with warnings or errors")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

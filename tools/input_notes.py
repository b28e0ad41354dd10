"""input_notes.py - what repro and trace say about FILE besides replaying it:
an input of another target (refused), an empty input or op text not named
*.txt (warned: both replay, as libFuzzer would).  Standard library only."""
import os
import re
import subprocess

import fuzz_targets


def other_target(root, t, path):
    """(OTHER, why) when FILE belongs to another target than @t: it lies under
    ROOT's corpus/OTHER/ or corpus/regressions/OTHER/ (paths resolved), or its
    name holds fuzz_OTHER (a ClusterFuzz testcase's) and not fuzz_T; else None."""
    names = fuzz_targets.names(root)
    real = os.path.realpath(path)
    corpus = os.path.realpath(os.path.join(root, "corpus"))
    for base in (corpus, os.path.join(corpus, "regressions")):
        rel = os.path.relpath(real, base)
        first = rel.split(os.sep)[0]
        if not rel.startswith("..") and os.sep in rel and first in names and first != t:
            return first, "it lies under %s/" % os.path.relpath(os.path.join(base, first), root)
    named = [n for n in names if re.search(r"fuzz_%s(?![A-Za-z0-9_])" % re.escape(n), os.path.basename(path))]
    if named and t not in named:
        return named[0], "its name holds fuzz_%s, the fuzzer of a ClusterFuzz testcase" % named[0]
    return None


def op_names(binary):
    """The target's op names, from `BINARY --dict` (op_NAME=...); [] when it cannot say."""
    try:
        r = subprocess.run([binary, "--dict"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True, errors="replace", timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return re.findall(r"^op_(\w+)=", r.stdout, re.M) if r.returncode == 0 else []


def warnings(path, binary):
    """The lines to print before the verdict on FILE: it is empty; or it is
    not named *.txt but reads as op text (printable ASCII, its first line that
    is no blank or # comment starts with setup or an op name)."""
    try:
        with open(path, "rb") as f:
            data = f.read(1 << 20)
    except OSError:
        return []
    if not data:
        return ["%s is empty: it runs the setup defaults and no op" % path]
    if path.endswith(".txt") or not all(32 <= c < 127 or c in b"\t\n\r" for c in data):
        return []
    first = next((ln.split()[0] for ln in data.decode().splitlines()
                  if ln.strip() and not ln.lstrip().startswith("#")), None)
    if first and (first == "setup" or first in op_names(binary)):
        return ["%s looks like op text but is not named *.txt: it is replayed as input bytes" % path]
    return []

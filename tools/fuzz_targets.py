"""fuzz_targets.py - the fuzz targets, as targets/TARGETS lists them, and
the names a user may give one: the target itself (buddy) or its fuzzer's
name (fuzz_buddy: the binary's, and the one OSS-Fuzz and ClusterFuzz put in
a crash report).  Standard library only."""
import os


def configured(bdir):
    """A build directory cmake finished configuring: its cache and its build file.  A failed
    configure leaves the cache without build.ninja, and every later build then failed in ninja."""
    return (os.path.exists(os.path.join(bdir, "CMakeCache.txt")) and
            any(os.path.exists(os.path.join(bdir, f)) for f in ("build.ninja", "Makefile")))


def names(root):
    """The targets of ROOT/targets/TARGETS, in its order ('#' starts a comment)."""
    with open(os.path.join(root, "targets", "TARGETS")) as f:
        return [w for line in f for w in [line.split("#")[0].strip()] if w]


def resolve(root, name):
    """The target NAME names - NAME itself or fuzz_NAME's NAME - or None."""
    known = names(root)
    if name in known:
        return name
    if name.startswith("fuzz_") and name[len("fuzz_"):] in known:
        return name[len("fuzz_"):]
    return None

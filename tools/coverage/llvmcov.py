"""llvmcov.py - the llvm coverage tools for ./mmfuzz coverage (python3 standard library only).

  find_tool(name)            llvm-profdata / llvm-cov matching clang's major version
  merge(profdata, raws, out) llvm-profdata merge -sparse of .profraw files
  export_summary(...)        llvm-cov export -summary-only, as parsed JSON
  file_rows(summary, ...)    per-file line and branch counts under one directory
  total_of(rows)             their sum
  table(rows, total)         the printed table

A row is {"file", "lines", "lines_covered", "line_pct", "branches",
"branches_covered", "branch_pct"}, the shape ./mmfuzz coverage --json writes;
a percentage is None where a file has no lines (or no branches).
"""
import json
import os
import re
import shutil
import subprocess


class ToolMissing(Exception):
    pass


def clang_major():
    try:
        r = subprocess.run(["clang", "-dumpversion"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        return r.stdout.strip().split(".")[0] if r.returncode == 0 else None
    except OSError:
        return None


def find_tool(name):
    """Path of llvm-cov / llvm-profdata.  $MMFUZZ_LLVM_COV / $MMFUZZ_LLVM_PROFDATA
    override; else the one of clang's major version (its raw profile format is
    the compiler's), else the unversioned one.  Raises ToolMissing."""
    env = "MMFUZZ_" + name.upper().replace("-", "_")
    if os.environ.get(env):
        p = shutil.which(os.environ[env])
        if not p:
            raise ToolMissing("%s=%s: no such program" % (env, os.environ[env]))
        return p
    major = clang_major()
    for cand in ([name + "-" + major] if major else []) + [name]:
        p = shutil.which(cand)
        if p:
            return p
    raise ToolMissing("%s not found (tried %s; Debian package llvm: apt-get install llvm, or tools/deps.sh as root)"
                      % (name, ", ".join(([name + "-" + major] if major else []) + [name])))


def merge(profdata, raws, out, listfile):
    """Merge .profraw files into out; (ok, message)."""
    with open(listfile, "w") as f:
        for r in raws:
            f.write(r + "\n")
    r = subprocess.run([profdata, "merge", "-sparse", "-f", listfile, "-o", out], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    return r.returncode == 0, r.stdout


def objects_args(binaries):
    """llvm-cov's binary arguments: the first positional, the rest with -object."""
    args = [binaries[0]]
    for b in binaries[1:]:
        args += ["-object", b]
    return args


def export_summary(cov, profdata, binaries, sources):
    """llvm-cov export -summary-only over the binaries, restricted to the source paths."""
    r = subprocess.run([cov, "export", "-summary-only", "-format=text", "-instr-profile=" + profdata]
                       + objects_args(binaries) + sources,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode:
        raise RuntimeError("llvm-cov export failed:\n" + r.stderr[-3000:])
    return json.loads(r.stdout), r.stderr


def show_html(cov, profdata, binaries, sources, outdir):
    r = subprocess.run([cov, "show", "-format=html", "-output-dir=" + outdir, "-instr-profile=" + profdata,
                        "-show-line-counts-or-regions", "-show-branches=count", "-show-expansions"]
                       + objects_args(binaries) + sources,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.returncode == 0, r.stdout


def pct(covered, count):
    return round(100.0 * covered / count, 2) if count else None


def file_rows(export, root, under="allocator"):
    """Rows for the files under root/under, sorted by path; files without code are left out."""
    base = os.path.realpath(os.path.join(root, under)) + os.sep
    rows = []
    for f in export["data"][0]["files"]:
        path = os.path.realpath(f["filename"])
        if not path.startswith(base):
            continue
        s = f["summary"]
        lines, branches = s["lines"], s.get("branches", {"count": 0, "covered": 0})
        if not lines["count"]:
            continue
        rows.append({
            "file": os.path.relpath(path, os.path.realpath(root)),
            "lines": lines["count"], "lines_covered": lines["covered"],
            "line_pct": pct(lines["covered"], lines["count"]),
            "branches": branches["count"], "branches_covered": branches["covered"],
            "branch_pct": pct(branches["covered"], branches["count"]),
        })
    rows.sort(key=lambda r: r["file"])
    return rows


def total_of(rows, name="TOTAL"):
    t = {"file": name, "lines": 0, "lines_covered": 0, "branches": 0, "branches_covered": 0}
    for r in rows:
        for k in ("lines", "lines_covered", "branches", "branches_covered"):
            t[k] += r[k]
    t["line_pct"] = pct(t["lines_covered"], t["lines"])
    t["branch_pct"] = pct(t["branches_covered"], t["branches"])
    return t


def unlinked_sources(root, rows, under="allocator"):
    """C files under root/under that no binary contains (so no row): they would be 0%."""
    seen = {r["file"] for r in rows}
    out = []
    for d, _, files in os.walk(os.path.join(root, under)):
        for f in files:
            if f.endswith(".c"):
                rel = os.path.relpath(os.path.join(d, f), root)
                if rel not in seen:
                    out.append(rel)
    return sorted(out)


def _fmt_pct(p):
    return "%6.2f%%" % p if p is not None else "      -"


def table(rows, subtotals, total):
    w = max([len(r["file"]) for r in rows + subtotals + [total]] + [10])
    head = "%-*s %8s %8s %8s   %8s %8s %8s" % (w, "file", "lines", "covered", "line%", "branches", "covered",
                                                 "branch%")
    out = [head, "-" * len(head)]

    def line(r):
        return "%-*s %8d %8d %8s   %8d %8d %8s" % (w, r["file"], r["lines"], r["lines_covered"], _fmt_pct(r["line_pct"]),
                                                  r["branches"], r["branches_covered"], _fmt_pct(r["branch_pct"]))
    out += [line(r) for r in rows]
    if subtotals:
        out.append("-" * len(head))
        out += [line(r) for r in subtotals]
    out.append("-" * len(head))
    out.append(line(total))
    return "\n".join(out)


def subtotals(rows, depth=2):
    """One sum per directory (allocator/page/, allocator/slab/, ...); files directly in allocator/ as allocator/."""
    groups = {}
    for r in rows:
        parts = r["file"].split("/")
        key = "/".join(parts[:depth]) + "/" if len(parts) > depth else "/".join(parts[:depth - 1]) + "/ (top)"
        groups.setdefault(key, []).append(r)
    return [total_of(g, k) for k, g in sorted(groups.items())]


def mismatch_count(stderr):
    m = re.search(r"(\d+) functions have mismatched data", stderr or "")
    return int(m.group(1)) if m else 0

#!/usr/bin/env bash
# bench/results/fuzz_nofp-pending/land.sh - land the held-back patches once
# bench/fuzz_nofp.py --dry-run says "left: 0" (run from the repository root,
# with no campaign running).  Keeps a copy of the goal-met results in
# bench/results/fuzz_nofp-previous/, applies 0*.patch with git am, removes
# this folder and updates the README's two paragraphs; then run .ci/run
# on a clean clone, and start the next campaign on the new binaries.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
pending=bench/results/fuzz_nofp-pending
# --dry-run prints one line per target and, while the goal is unmet, a last
# "left: N executions ..." line; met means no such line and 0 findings everywhere.
plan=$(python3 bench/fuzz_nofp.py --dry-run 2>/dev/null)
if grep -q '^left:' <<<"$plan" || grep -v ' 0 findings, 0 left;' <<<"$plan" | grep -q .; then
	echo "land.sh: the campaign has not met its goal:" >&2; echo "$plan" >&2; exit 1
fi
[[ -z $(git status --porcelain -- allocator targets stressors cmake CMakeLists.txt README.md) ]] ||
	{ echo "land.sh: uncommitted changes in the source or README" >&2; exit 1; }
tree=$(python3 -c 'import json; print(json.load(open("bench/results/fuzz_nofp.json"))["tree"][:8])')
day=$(date -u +%Y-%m-%d)
keep=bench/results/fuzz_nofp-previous/$day-goal-met-tree-$tree.json
cp bench/results/fuzz_nofp.json "$keep"
git add bench/results/fuzz_nofp.json "$keep"
git commit -q -m "bench/results/fuzz_nofp.json: the goal met - every target 10M executions, 0 findings, tree $tree; a copy in fuzz_nofp-previous/ for when the next campaign restarts the counts" -- bench/results/fuzz_nofp.json "$keep"
git am -q "$pending"/0*.patch
git rm -r -q "$pending"
KEEP=$keep TREE=$tree DAY=$day python3 - <<'E'
import os
p = 'README.md'
s = open(p).read()
old = "The fuzz targets check at\nlevel 2 after every op,"
new = ("The fuzz targets check at\nlevel 2 on the state an input starts from (an allocator that boots broken is\n"
       "reported \"at setup, before op [0]\"), after every op,")
assert old in s, "README: the harness paragraph moved"
s = s.replace(old, new, 1)
old = ("Changes that would alter the fuzz binaries while the campaign is short of\n"
       "its goal wait as patches in `bench/results/fuzz_nofp-pending/` (its README\n"
       "says what they do and how to apply them).")
new = ("Changes that would alter the fuzz binaries while the campaign is short of\n"
       "its goal wait as patches in `bench/results/fuzz_nofp-pending/` (with a README\n"
       "saying what they do and how to apply them). None wait now: the campaign on\n"
       "tree %s met its goal on %s - every target 10 million executions, 0\n"
       "findings (`%s`) - and the patches held back for it landed then; the counts in\n"
       "`bench/results/fuzz_nofp.json` start again on the new binaries."
       % (os.environ["TREE"], os.environ["DAY"], os.environ["KEEP"]))
assert old in s, "README: the pending paragraph moved"
s = s.replace(old, new, 1)
open(p, 'w').write(s)
E
git add README.md
git commit -q -m "land the patches held back for fuzz_nofp (fuzz_nofp-pending/ removed); README: the harness's setup check, and that nothing waits now"
git log --oneline -16 | cat

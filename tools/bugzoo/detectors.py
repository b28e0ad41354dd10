"""Which detectors are relevant to which bug-zoo entry.

Chosen from where the bug lives (BUGZOO.md's "where" column), not from which
detector happens to fire: tests of the subsystem, the stressor mode and the
deterministic-scheduler mode that exercise it, and the fuzz targets that
reach it.  Kinds (the build each runs in is in runner.py's targets_of()):
  test:NAME        tests/NAME.c in the asan build (clang ASan+UBSan)
  test-gcc:NAME    the same test in the gcc debug build: no KASAN, so what
                   the allocator's own checks (hardening, slub_debug) must
                   catch is not stopped first by ASan
  stress:MODE      mmfuzz-stress MODE --time BUDGET --seed S (free-running threads)
  sched:MODE       mmfuzz-sched-stress MODE --deterministic --seed S, runs until
                   the budget is spent or one fails; its rerun line is the reproducer
  replay:TARGET    the fuzz target's standalone replay of its seed corpus and
                   regression inputs (asan build)
  replay-gcc:TARGET  the same in the gcc debug build
  fuzz:TARGET      libFuzzer from a copy of the seed corpus for the budget
                   (-seed=S); the crash artifact is the reproducer, replayed
                   by the asan build's standalone fuzz_TARGET (./mmfuzz repro)
Detectors of fuzz targets not in targets/TARGETS are left out.
"""

_SLUB_MT = ["test:test_slub_preempt", "test:test_slub_mt", "stress:slub", "sched:slub", "fuzz:slub",
            "fuzz:sched", "replay:slub"]

DETECTORS = {
    "slub-aba-single-cmpxchg": _SLUB_MT,
    "slub-free-cond-flipped": _SLUB_MT + ["fuzz:kmalloc"],
    # kmem_cache_alloc_bulk is what the bulk modes drive; the tid contract (sched/tidwatch.h) is
    # checked by both engines at every preemption point with interrupts enabled
    "slub-bulk-no-tid-bump": ["test:test_zoo_slub_tid", "test:test_slub_bulk", "test:test_slub_preempt",
                              "stress:slub", "stress:bulk", "sched:slub", "sched:bulk", "fuzz:slub", "fuzz:sched"],
    # the fast paths of both slub and bulk modes (bulk frees run dry cpu freelists, where it shows)
    "slub-tid-cpu-mismatch": _SLUB_MT + ["stress:bulk", "sched:bulk"],
    "slub-acquire-plain-store": _SLUB_MT,
    "slub-double-free-unchecked": ["test-gcc:test_slub_debug", "test:test_slub_debug", "test:test_slub_kunit",
                                   "replay-gcc:slub", "stress:slub", "fuzz:slub"],
    "buddy-merge-across-zones": ["test:test_config_shapes", "test:test_buddy_fill", "stress:pages", "sched:pages",
                                 "replay:buddy", "replay:config", "fuzz:buddy", "fuzz:config"],
    "buddy-mt-before-validate": ["test:test_buddy_fill", "test:test_config_shapes", "stress:pages", "sched:pages",
                                 "replay:buddy", "fuzz:buddy", "fuzz:config"],
    "buddy-merge-max-order": ["test:test_buddy_fill", "test:test_config_shapes", "stress:pages", "sched:pages",
                              "replay:buddy", "replay:config", "fuzz:buddy", "fuzz:config"],
    "pcp-prefetch-unvalidated": ["test:test_pcp", "stress:pcp", "sched:pcp", "replay:buddy", "replay:pcp",
                                 "fuzz:pcp", "fuzz:buddy"],
    "pcp-bulk-count-unclamped": ["test:test_pcp", "test:test_pcp_irq", "stress:pcp", "sched:pcp", "replay:buddy",
                                 "replay:pcp", "fuzz:pcp"],
    "pcp-stat-order": ["test:test_pcp", "stress:pcp", "sched:pcp", "replay:buddy", "replay:pcp", "fuzz:pcp",
                       "fuzz:buddy"],
    "wmark-unsigned-compare": ["test:test_watermark_decide", "test:test_watermark_lowmem", "stress:mixed",
                               "sched:mixed", "replay:watermark", "fuzz:watermark"],
    "wmark-unusable-lists": ["test:test_watermark_decide", "test:test_watermark_lowmem", "replay:watermark",
                             "fuzz:watermark"],
    "bulk-array-overrun": ["test:test_bulk", "stress:bulk", "sched:bulk", "replay:buddy", "replay:bulk",
                           "fuzz:bulk"],
    "bulk-return-count": ["test:test_bulk", "stress:bulk", "sched:bulk", "replay:buddy", "replay:bulk",
                          "fuzz:bulk"],
}

# The concurrency bugs: a single-threaded fuzz target is not expected to see them.
CONCURRENCY = {"slub-aba-single-cmpxchg", "slub-free-cond-flipped", "slub-bulk-no-tid-bump",
               "slub-tid-cpu-mismatch", "slub-acquire-plain-store"}

# Detectors that count as "a single-threaded fuzz target" (issue 7's goal): corpus replays and
# libFuzzer runs of the op-sequence targets, not the scheduler target (fibers, interleavings).
def single_threaded_fuzz(det):
    kind, name = det.split(":", 1)
    return kind in ("replay", "replay-gcc", "fuzz") and name != "sched"

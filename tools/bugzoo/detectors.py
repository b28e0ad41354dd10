"""Which detectors are relevant to which bug-zoo entry.

Chosen from where the bug lives (BUGZOO.md's "where" column), not from which
detector happens to fire: tests of the subsystem, the stressor mode that
exercises it, and the single-threaded fuzz targets that reach it.
Kinds: test:NAME (tests/NAME.c), stress:MODE, replay:TARGET (corpus replay).
"""

DETECTORS = {
    "slub-aba-single-cmpxchg": ["test:test_slub_preempt", "test:test_slub_mt", "stress:slub"],
    "slub-free-cond-flipped": ["test:test_slub_preempt", "test:test_slub_mt", "stress:slub"],
    "slub-bulk-no-tid-bump": ["test:test_slub_bulk", "test:test_slub_preempt", "stress:bulk", "stress:slub"],
    "slub-tid-cpu-mismatch": ["test:test_slub_preempt", "test:test_slub_mt", "stress:slub"],
    "slub-acquire-plain-store": ["test:test_slub_mt", "test:test_slub_preempt", "stress:slub"],
    "slub-double-free-unchecked": ["test:test_slub_debug", "test:test_slub_kunit", "stress:slub"],
    "buddy-merge-across-zones": ["test:test_config_shapes", "test:test_buddy_fill", "stress:pages",
                                 "replay:buddy", "replay:config"],
    "buddy-mt-before-validate": ["test:test_buddy_fill", "test:test_config_shapes", "stress:pages",
                                 "replay:buddy"],
    "buddy-merge-max-order": ["test:test_buddy_fill", "test:test_config_shapes", "stress:pages",
                              "replay:buddy", "replay:config"],
    "pcp-prefetch-unvalidated": ["test:test_pcp", "stress:pcp", "replay:buddy"],
    "pcp-bulk-count-unclamped": ["test:test_pcp", "test:test_pcp_irq", "stress:pcp", "replay:buddy"],
    "pcp-stat-order": ["test:test_pcp", "stress:pcp", "replay:buddy"],
    "wmark-unsigned-compare": ["test:test_watermark_decide", "test:test_watermark_lowmem", "stress:mixed",
                               "replay:watermark"],
    "wmark-unusable-lists": ["test:test_watermark_decide", "test:test_watermark_lowmem", "replay:watermark"],
    "bulk-array-overrun": ["test:test_bulk", "stress:bulk", "replay:buddy"],
    "bulk-return-count": ["test:test_bulk", "stress:bulk", "replay:buddy"],
}

# The concurrency bugs: a single-threaded fuzz target is not expected to see them.
CONCURRENCY = {"slub-aba-single-cmpxchg", "slub-free-cond-flipped", "slub-bulk-no-tid-bump",
               "slub-tid-cpu-mismatch", "slub-acquire-plain-store"}

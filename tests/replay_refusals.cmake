# fuzz_replay_refusals (tests/replay_refusals.sh): the standalone replay main
# (targets/common/cli.c) refuses a FIFO and a device before opening them,
# says "no inputs to replay" (exit 2) for directories without inputs, and
# keeps its exit statuses 0 / 1 / 2 for a clean, partly and wholly unreadable
# replay.  Every replay build (MM_ENGINE none), sanitizers included: UBSan
# is what sees a qsort() of no names given NULL.  Seconds.
mf_replay_script_test(fuzz_replay_refusals replay_refusals.sh 300 $<TARGET_FILE:fuzz_buddy>)

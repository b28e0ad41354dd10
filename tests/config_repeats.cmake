# fuzz_config_repeats (tests/config_repeats.sh): the config target builds a
# valid config once per input and at most four per input, and only
# validates a create of the same config again or of a fifth; any changed
# field, or the next input, builds it again.
# Every replay build (MM_ENGINE none) without an injected bug.
mf_replay_script_test(fuzz_config_repeats config_repeats.sh 120 $<TARGET_FILE:fuzz_config>)

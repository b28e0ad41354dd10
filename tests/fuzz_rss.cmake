# bench/fuzz_rss.py, the RSS benchmark of a long libFuzzer run: its smaps
# classifier, growth figures and .options handling, on synthetic texts
# (tests/fuzz_rss_test.py; no build, under a second).  The benchmark itself
# fuzzes for minutes in the fuzz preset: run by hand.  In the debug preset.
mf_add_python_test(fuzz_rss_unit ${PROJECT_SOURCE_DIR}/tests/fuzz_rss_test.py 60)

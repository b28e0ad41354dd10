#!/usr/bin/env bash
# tests/verbs/frontdoor.sh usage ROOT WORK - ./mmfuzz itself (ctest
# verbs_frontdoor_usage): help and its forms exit 0 with the usage; an
# unknown verb, a name that is no verb's (a path, a capital), or help with
# two verbs exits 2 with a message that names it; tools/deps.sh run with
# two words (the second was ignored) or an unknown one exits 2 with its usage.
VERB=help
# shellcheck source=tests/verbs/lib.sh
source "$(dirname "$0")/lib.sh"

case $mode in
usage)
	EXPECT_TIMEOUT=30
	expect 0 'usage: mmfuzz VERB'
	expect 0 'usage: mmfuzz VERB' help
	expect 0 'usage: mmfuzz VERB' --help
	expect 0 'usage: mmfuzz fuzz TARGET' fuzz
	expect 0 'usage: mmfuzz trace TARGET FILE' trace
	expect 2 "unknown verb 'nosuch'" nosuch
	expect 2 'help takes at most one verb' fuzz trace
	for v in nosuch ../x Fuzz; do
		VERB=$v expect 2 "unknown verb '$v'"
	done
	VERB=-h expect 0 'usage: mmfuzz VERB'
	out=$("$MMFUZZ" 2>&1) && grep -q 'usage: mmfuzz VERB' <<<"$out" || fail "./mmfuzz alone: no usage, or not exit 0"
	# tools/deps.sh as a script: one word; a second was ignored (core afl: core only, exit 0)
	out=$(MMFUZZ_NO_INSTALL=1 bash "$ROOT/tools/deps.sh" core afl 2>&1)
	rc=$?
	[[ $rc == 2 ]] && grep -q 'usage: tools/deps.sh \[core|afl|all\]' <<<"$out" ||
		fail "tools/deps.sh core afl: exit $rc, want 2 and the usage:"$'\n'"$out"
	out=$(MMFUZZ_NO_INSTALL=1 bash "$ROOT/tools/deps.sh" bogus 2>&1)
	[[ $? == 2 ]] || fail "tools/deps.sh bogus: not exit 2"
	# oss-fuzz/check_build.sh --help printed two lines of its description, not its usage.
	out=$(bash "$ROOT/oss-fuzz/check_build.sh" --help 2>&1)
	[[ $? == 0 && $out == "usage: oss-fuzz/check_build.sh "* ]] ||
		fail "oss-fuzz/check_build.sh --help: not its usage:"$'\n'"$out"
	out=$(bash "$ROOT/oss-fuzz/check_build.sh" --bogus 2>&1)
	[[ $? == 2 ]] && grep -q '^usage: oss-fuzz/check_build.sh ' <<<"$out" ||
		fail "oss-fuzz/check_build.sh --bogus: not exit 2 with the usage:"$'\n'"$out"
	;;
*)
	fail "unknown mode $mode"
	;;
esac
verdict

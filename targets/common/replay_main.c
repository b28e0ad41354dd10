/* SPDX-License-Identifier: MIT */
/*
 * replay_main.c - main() of the engine-less build (MM_ENGINE=none): replays
 * the files and directories given on the command line through the same
 * LLVMFuzzerTestOneInput every engine calls.  Used by ctest (gcc builds
 * included) and by ./mmfuzz repro / trace.
 */
#include "harness.h"

int main(int argc, char **argv)
{
	return mf_replay_main(mf_the_target, argc, argv);
}

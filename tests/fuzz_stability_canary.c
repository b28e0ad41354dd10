/* SPDX-License-Identifier: MIT */
/*
 * fuzz_stability_canary.c - a planted history dependence for
 * fuzz_stability.c's self-check, compiled with the same block
 * instrumentation: its first call takes a branch later calls do not (the
 * shape of a lazy once-per-process initialisation inside an input).
 */
void fuzz_stability_canary(void);

static volatile int calls;

void fuzz_stability_canary(void)
{
	if (calls++ == 0)
		calls += 2;
	else
		calls--;
}

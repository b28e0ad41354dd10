/* SPDX-License-Identifier: MIT */
/*
 * fuzz_stability_canary.c - a planted history dependence for
 * fuzz_stability.c's self-check, compiled with the same block
 * instrumentation: its first call takes a branch later calls do not (the
 * shape of a lazy once-per-process initialisation inside an input).
 *
 * The first call's branch calls a function of its own, which no optimiser
 * may turn into a select: at -O2 clang made the two arms of a plain
 * if/else (one volatile update each) a single block, and the self-check
 * saw no history dependence to find.
 */
void fuzz_stability_canary(void);

static volatile int calls;

static __attribute__((noinline)) void canary_first_call(void)
{
	calls += 2;
	__asm__ volatile("" ::: "memory");
}

void fuzz_stability_canary(void)
{
	if (calls++ == 0)
		canary_first_call();
	else
		calls--;
}

/* SPDX-License-Identifier: MIT */
/*
 * cli.h - the stressor drivers' number arguments (mmfuzz-stress,
 * mmfuzz-sched-stress): a whole number or a count of seconds, all of the
 * text, inside its range - or false, and the driver refuses the argument
 * (exit 2) instead of running with 0 or a wrapped value, as strtoul/atoi
 * alone would ("--runs abc" ran no run and said SUCCESS).
 */
#ifndef MM_STRESSORS_CLI_H
#define MM_STRESSORS_CLI_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

/* @v as a whole number (decimal, 0x hex or 0 octal) in [@lo, @hi]. */
static inline bool cli_ulong(const char *v, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;

	if (!v || !*v || *v == '-' || *v == ' ')
		return false;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 0);
	if (errno || *end || x < lo || x > hi)
		return false;
	*out = (unsigned long)x;
	return true;
}

/* @v as seconds: a finite number > 0 and at most @max (nan and inf are refused). */
static inline bool cli_seconds(const char *v, double max, double *out)
{
	char *end;

	if (!v || !*v)
		return false;
	double x = strtod(v, &end);
	if (*end || !(x > 0 && x <= max))
		return false;
	*out = x;
	return true;
}

#endif /* MM_STRESSORS_CLI_H */

/* SPDX-License-Identifier: MIT */
/*
 * cli.h - the stressor drivers' number arguments (mmfuzz-stress,
 * mmfuzz-sched-stress): a whole number or a count of seconds, all of the
 * text, inside its range - or false, and the driver refuses the argument
 * (exit 2) instead of running with 0 or a wrapped value, as strtoul/atoi
 * alone would ("--runs abc" ran no run and said SUCCESS).  And its file
 * arguments: an output it could not write is refused before the run (a
 * grade of an hour whose JSON then could not be written lost the hour), an
 * input that is not a regular file before it is opened (a device or a pipe
 * would be read for ever).
 */
#ifndef MM_STRESSORS_CLI_H
#define MM_STRESSORS_CLI_H

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/*
 * Why @path cannot be written as an output file, or NULL when it can: "-"
 * (standard output) and an existing writable file or device can; a
 * directory cannot, nor a new file whose directory is missing or not
 * writable.  Nothing is created.
 */
static inline const char *cli_unwritable(const char *path)
{
	struct stat st;
	char dir[PATH_MAX];

	if (!path || !*path)
		return "an empty path";
	if (!strcmp(path, "-"))
		return NULL;
	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode))
			return "is a directory";
		return access(path, W_OK) ? strerror(errno) : NULL;
	}
	if (errno != ENOENT)
		return strerror(errno);
	snprintf(dir, sizeof(dir), "%s", path);
	const char *d = dirname(dir);
	if (stat(d, &st))
		return "its directory does not exist";
	if (!S_ISDIR(st.st_mode))
		return "its directory is not a directory";
	return access(d, W_OK | X_OK) ? "its directory is not writable" : NULL;
}

/* Why @path cannot be read as an input file, or NULL: it must be a readable regular file. */
static inline const char *cli_unreadable(const char *path)
{
	struct stat st;

	if (!path || !*path)
		return "an empty path";
	if (stat(path, &st))
		return strerror(errno);
	if (S_ISDIR(st.st_mode))
		return "is a directory";
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	return access(path, R_OK) ? strerror(errno) : NULL;
}

#endif /* MM_STRESSORS_CLI_H */

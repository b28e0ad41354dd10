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
 * would be read for ever).  Outputs are written whole or not at all
 * (cli_out_open/cli_out_commit).
 */
#ifndef MM_STRESSORS_CLI_H
#define MM_STRESSORS_CLI_H

#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

/*
 * @v as a whole number in [@lo, @hi]: decimal, or hex after 0x (the rerun
 * lines print seeds so).  A leading 0 is a decimal digit, not octal:
 * "--seed 010" is ten, as ./mmfuzz run reads it.
 */
static inline bool cli_ulong(const char *v, unsigned long lo, unsigned long hi, unsigned long *out)
{
	char *end;
	int base = 10;

	if (!v || !*v || *v == '-' || *v == '+' || *v == ' ')
		return false;
	if (v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
		base = 16;
		v += 2;
		if (!isxdigit((unsigned char)*v))
			return false;
	}
	errno = 0;
	unsigned long long x = strtoull(v, &end, base);
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
 * Output files (--json, --artifact) are written whole or not at all: into a
 * temporary file beside the target (".NAME.XXXXXX", mode 0666 less the
 * umask), renamed over it when complete, so a killed run or a full disk
 * leaves the earlier file, never half of one.  "-" is standard output; an
 * existing device or pipe is written in place (a rename would replace the
 * node).  Symlinks are followed to the file they name.
 */
struct cli_out {
	FILE *f;
	char target[PATH_MAX];
	char tmp[PATH_MAX + 16];          /* "" when written in place */
};

/* @path with symlinks followed into @o->target; true when it is written in place (not a regular file). */
static inline bool cli_out_target(struct cli_out *o, const char *path)
{
	struct stat st;

	if (!realpath(path, o->target))
		snprintf(o->target, sizeof(o->target), "%s", path);    /* a new file, or a dangling link */
	return !stat(o->target, &st) && !S_ISREG(st.st_mode);
}

/* A new temporary file beside @o->target: its fd (mode 0666 less the umask), or -errno. */
static inline int cli_out_tmp(struct cli_out *o)
{
	const char *slash = strrchr(o->target, '/');
	int dirlen = slash ? (int)(slash - o->target + 1) : 0;
	int n = snprintf(o->tmp, sizeof(o->tmp), "%.*s.%s.XXXXXX", dirlen, o->target,
			 slash ? slash + 1 : o->target);
	if (n < 0 || (size_t)n >= sizeof(o->tmp)) {
		o->tmp[0] = 0;
		return -ENAMETOOLONG;
	}
	int fd = mkstemp(o->tmp);
	if (fd < 0) {
		int e = errno;
		o->tmp[0] = 0;
		return -e;
	}
	mode_t um = umask(0);
	umask(um);
	if (fchmod(fd, 0666 & ~um)) {
		int e = errno;
		close(fd);
		unlink(o->tmp);
		o->tmp[0] = 0;
		return -e;
	}
	return fd;
}

/* Open @path for writing as above: the stream, or NULL with errno set. */
static inline FILE *cli_out_open(struct cli_out *o, const char *path)
{
	o->f = NULL;
	o->tmp[0] = 0;
	if (!strcmp(path, "-")) {
		fflush(stdout);
		return o->f = stdout;
	}
	if (cli_out_target(o, path))
		return o->f = fopen(o->target, "w");
	int fd = cli_out_tmp(o);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	if (!(o->f = fdopen(fd, "w"))) {
		int e = errno;
		close(fd);
		unlink(o->tmp);
		o->tmp[0] = 0;
		errno = e;
	}
	return o->f;
}

/* Finish what cli_out_open began: 0, or an errno value (the earlier file then stays as it was). */
static inline int cli_out_commit(struct cli_out *o)
{
	int e = 0;

	if (o->f == stdout)
		return fflush(stdout) || ferror(stdout) ? (errno ? errno : EIO) : 0;
	if (ferror(o->f))
		e = errno ? errno : EIO;
	if (fclose(o->f) && !e)
		e = errno ? errno : EIO;
	o->f = NULL;
	if (o->tmp[0]) {
		if (!e && rename(o->tmp, o->target))
			e = errno;
		if (e)
			unlink(o->tmp);
		o->tmp[0] = 0;
	}
	return e;
}

/*
 * Why @path cannot be written as an output file, or NULL when it can: "-"
 * (standard output) and an existing writable device or pipe can; a
 * directory cannot, nor a file (new or old) whose directory is missing or
 * takes no new file - the test is to create one there and remove it
 * again, as cli_out_open will: access() says yes to root for any
 * directory, /sys and read-only mounts included, and a grade of an hour
 * whose JSON then could not be written lost the hour.  An existing file
 * must itself be writable too (it is replaced, not written into).
 */
static inline const char *cli_unwritable(const char *path)
{
	struct cli_out o;
	struct stat st;
	static char why[96];

	if (!path || !*path)
		return "an empty path";
	if (!strcmp(path, "-"))
		return NULL;
	bool in_place = cli_out_target(&o, path);
	if (!stat(o.target, &st)) {
		if (S_ISDIR(st.st_mode))
			return "is a directory";
		if (access(o.target, W_OK))
			return strerror(errno);
		if (in_place)
			return NULL;
	} else if (errno != ENOENT) {
		return strerror(errno);
	} else {
		char dir[PATH_MAX];
		snprintf(dir, sizeof(dir), "%s", o.target);
		if (stat(dirname(dir), &st))
			return "its directory does not exist";
		if (!S_ISDIR(st.st_mode))
			return "its directory is not a directory";
	}
	int fd = cli_out_tmp(&o);
	if (fd < 0) {
		snprintf(why, sizeof(why), "its directory takes no new file (%s)", strerror(-fd));
		return why;
	}
	close(fd);
	unlink(o.tmp);
	return NULL;
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

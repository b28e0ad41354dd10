/* SPDX-License-Identifier: MIT */
/*
 * jsonfile.c - the --json file: never half written, never stale.
 *
 * Where it goes.  "-" is standard output (cli.h accepts it as that).  Any
 * other path is followed through symlinks to its target, then:
 *   - a regular file, new or old, is written whole into a temporary file
 *     beside it (".NAME.XXXXXX", mkstemp, mode 0666 less the umask) and
 *     renamed over it: a reader sees the old record or the new one, never
 *     a part, and a write that fails (a full disk, the directory gone)
 *     leaves the old file and is reported;
 *   - an existing device or pipe is written in place (a rename would
 *     replace the node itself); it gets no placeholder.
 *
 * One run's file (main.c):
 *   json_begin        after the command line, before the instance: a
 *                     placeholder, "result": "RUNNING", with the command
 *                     line and the pid.  Writing it is the writability
 *                     check - access() says yes to root for any directory,
 *                     /sys included - and a run that dies without reaching
 *                     its end (SIGKILL, a sanitizer report, the OOM killer)
 *                     leaves a file that says it never finished instead of
 *                     an earlier run's SUCCESS.
 *   json_open/commit  the end of the run: the full record (report.c).
 *   json_write_fatal  a crash the stressor catches (on_fatal, main.c): a
 *                     short FAILURE record without the statistics -
 *                     collecting them takes the allocator's locks, which
 *                     the crashed thread may hold.  Built in a static
 *                     buffer with snprintf, written with open/write/rename:
 *                     no malloc, no stdio stream.  Also a run that could
 *                     not start (setup failed, exit 2): "result": "ERROR".
 *
 * Everything but json_write_fatal runs on the main thread (the watchdog's
 * hang report too, while main waits to join it).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stress.h"

static struct {
	bool on;                    /* --json given, json_begin done */
	bool to_stdout;             /* "-" */
	bool in_place;              /* an existing device or pipe */
	mode_t mode;                /* a new file's: 0666 less the umask */
	char target[PATH_MAX];      /* the path written (symlinks followed) */
} J;

/* ---------------------------------------------------------------- text */

void jb_printf(struct jbuf *j, const char *fmt, ...)
{
	va_list ap;
	if (j->n >= j->cap)
		return;
	va_start(ap, fmt);
	int k = vsnprintf(j->b + j->n, j->cap - j->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		j->n = j->n + (size_t)k < j->cap ? j->n + (size_t)k : j->cap - 1;
}

/* A JSON string: quotes and backslashes escaped, control characters as spaces. */
void jb_str(struct jbuf *j, const char *s)
{
	jb_printf(j, "\"");
	for (; s && *s && j->n + 3 < j->cap; s++) {
		if (*s == '"' || *s == '\\')
			j->b[j->n++] = '\\';
		j->b[j->n++] = (unsigned char)*s < 0x20 ? ' ' : *s;
	}
	j->b[j->n] = 0;
	jb_printf(j, "\"");
}

/* What every record starts with: the run's identity and its command line. */
void json_head(struct jbuf *j)
{
	const struct stress_config *c = &S.cfg;
	jb_printf(j, "{\n  \"mode\": \"%s\", \"threads\": %d, \"cpus\": %d, \"seed\": %llu, \"ops_per_thread\": %lu,\n",
		  stress_mode_name(c->mode), c->threads, c->cpus, (unsigned long long)c->seed, c->ops);
	jb_printf(j, "  \"pid\": %d, \"command\": [", (int)getpid());
	for (int i = 0; i < c->argc; i++) {
		jb_printf(j, "%s", i ? ", " : "");
		jb_str(j, c->argv[i]);
	}
	jb_printf(j, "],\n");
}

/* "replay": {...} - the deterministic engine's verdict (replay.c). */
void json_replay(struct jbuf *j)
{
	const struct stress_replay *r = &S.replay;
	jb_printf(j, "  \"replay\": {\"status\": \"%s\", \"command\": ", stress_replay_status_name(r->status));
	jb_str(j, r->command);
	jb_printf(j, ", \"deterministic_failure\": ");
	jb_str(j, r->det_failure);
	jb_printf(j, ", \"reason\": ");
	jb_str(j, r->reason);
	jb_printf(j, ", \"runs\": %lu, \"seconds\": %.1f},\n", r->runs, r->seconds);
}

/* ---------------------------------------------------------------- the file */

/* The temporary file beside the target, for mkstemp; false if the name is too long. */
static bool tmp_name(char *tmp, size_t len)
{
	const char *slash = strrchr(J.target, '/');
	int dirlen = slash ? (int)(slash - J.target + 1) : 0;
	const char *base = slash ? slash + 1 : J.target;
	int n = snprintf(tmp, len, "%.*s.%s.XXXXXX", dirlen, J.target, base);
	return n > 0 && (size_t)n < len;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t k = write(fd, buf, len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : EIO;
		buf += k;
		len -= (size_t)k;
	}
	return 0;
}

/* A temporary file beside the target, opened for writing: its fd, or -errno. */
static int tmp_open(char *tmp, size_t len)
{
	if (!tmp_name(tmp, len))
		return -ENAMETOOLONG;
	int fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, J.mode)) {
		int e = errno;
		close(fd);
		unlink(tmp);
		return -e;
	}
	return fd;
}

/* @buf as the whole file; 0 or an errno value.  No malloc, no stdio stream. */
static int write_whole(const char *buf, size_t len)
{
	if (J.to_stdout)
		return write_all(1, buf, len);
	if (J.in_place) {
		int fd = open(J.target, O_WRONLY | O_TRUNC | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			return errno;
		int e = write_all(fd, buf, len);
		if (close(fd) && !e)
			e = errno;
		return e;
	}
	char tmp[PATH_MAX + 16];
	int fd = tmp_open(tmp, sizeof(tmp));
	if (fd < 0)
		return -fd;
	int e = write_all(fd, buf, len);
	if (close(fd) && !e)
		e = errno;
	if (!e && rename(tmp, J.target))
		e = errno;
	if (e)
		unlink(tmp);
	return e;
}

int json_begin(const char *path)
{
	struct stat st;

	J.on = false;
	J.to_stdout = !strcmp(path, "-");
	J.in_place = false;
	mode_t um = umask(0);                   /* read it: single-threaded here */
	umask(um);
	J.mode = 0666 & ~um;
	if (!J.to_stdout) {
		if (!realpath(path, J.target)) {
			if (errno != ENOENT)
				return errno;
			snprintf(J.target, sizeof(J.target), "%s", path);   /* a new file (or a dangling link) */
		}
		J.in_place = !stat(J.target, &st) && !S_ISREG(st.st_mode);
	}
	J.on = true;
	if (J.to_stdout || J.in_place)
		return 0;                       /* no placeholder on stdout, a device or a pipe */
	static char buf[8192];
	struct jbuf j = { buf, sizeof(buf), 0 };
	json_head(&j);
	jb_printf(&j, "  \"note\": \"the run has not ended: if process %d is gone, it died without writing its "
		  "result (SIGKILL, a sanitizer report, the OOM killer)\",\n", (int)getpid());
	jb_printf(&j, "  \"result\": \"RUNNING\"\n}\n");
	return write_whole(buf, j.n);
}

FILE *json_open(struct json_file *jf)
{
	jf->tmp[0] = 0;
	jf->f = NULL;
	if (!J.on) {
		errno = EINVAL;
		return NULL;
	}
	if (J.to_stdout) {
		fflush(stdout);
		jf->f = stdout;
	} else if (J.in_place) {
		jf->f = fopen(J.target, "w");
	} else {
		int fd = tmp_open(jf->tmp, sizeof(jf->tmp));
		if (fd < 0) {
			errno = -fd;
			jf->tmp[0] = 0;
			return NULL;
		}
		jf->f = fdopen(fd, "w");
		if (!jf->f) {
			int e = errno;
			close(fd);
			unlink(jf->tmp);
			errno = e;
		}
	}
	return jf->f;
}

int json_commit(struct json_file *jf)
{
	int e = 0;
	if (jf->f == stdout) {
		if (fflush(stdout) || ferror(stdout))
			e = errno ? errno : EIO;
		return e;
	}
	if (ferror(jf->f))
		e = errno ? errno : EIO;
	if (fclose(jf->f) && !e)
		e = errno ? errno : EIO;
	if (jf->tmp[0]) {
		if (!e && rename(jf->tmp, J.target))
			e = errno;
		if (e)
			unlink(jf->tmp);
	}
	return e;
}

int json_write_fatal(const char *result)
{
	static char buf[12288];
	struct jbuf j = { buf, sizeof(buf), 0 };

	if (!J.on)
		return 0;
	json_head(&j);
	jb_printf(&j, "  \"elapsed_s\": %.3f,\n", S.elapsed);
	jb_printf(&j, "  \"failure\": ");
	jb_str(&j, S.failure);
	jb_printf(&j, ",\n");
	json_replay(&j);
	jb_printf(&j, "  \"interrupted\": %s,\n", atomic_load(&S.interrupted) ? "true" : "false");
	if (!strcmp(result, "FAILURE"))
		jb_printf(&j, "  \"statistics\": \"none: the stressor crashed (abort or fatal signal); collecting "
			  "them would take the allocator's locks, which the crashed thread may hold\",\n");
	jb_printf(&j, "  \"result\": \"%s\"\n}\n", result);
	return write_whole(buf, j.n);
}

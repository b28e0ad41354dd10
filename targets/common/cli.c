/* SPDX-License-Identifier: MIT */
/*
 * cli.c - the harness's own command line, the same in every engine build
 * (libFuzzer calls it from LLVMFuzzerInitialize, the replay and AFL++ mains
 * call it first), and the standalone replay main.
 *
 *   fuzz_T --print FILE...        decode and print the op program (no run)
 *   fuzz_T --encode TEXT [-o OUT] op text -> input bytes (stdout without -o)
 *   fuzz_T --dict                 the dictionary for libFuzzer / AFL++
 *   fuzz_T --ops                  the op table: every op and its arguments
 *   fuzz_T --trace ...            run, printing each op and what it did
 *   fuzz_T --c OUT.c FILE         run FILE, writing a standalone C reproducer
 *                                 (exit 2, nothing written, for a target without one: sched)
 *
 * Replay (engine none, and AFL++ builds given files): every FILE, and every
 * regular file directly inside each DIR, in name order.  A FILE ending in
 * .txt is op text and is encoded first.  A violation aborts (exit by
 * SIGABRT); otherwise the exit status is 0, 1 when some argument was
 * unreadable, or 2 when nothing was readable or there was nothing to replay
 * (only empty directories).
 *
 * Only regular files are read, here and by --print and --encode: anything
 * else (a FIFO, a socket, a device) is refused before it is opened - a FIFO
 * blocks open() and read() until someone writes, /dev/zero never ends.
 * OUT.c and OUT are written whole or not at all (mf_out_open, below): one
 * that exists and is no regular file is refused (exit 2), and an existing
 * file is replaced only by a complete one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgen.h"
#include "harness.h"

void mf_set_input_name(const char *name);

static struct mf_op cli_prog[MF_MAX_OPS];

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

/*
 * The bytes of the regular file @path (malloc'ed, NUL-terminated), or NULL
 * with errno set.  stat() decides before anything is opened (opening a
 * device can have effects of its own); the open() cannot block on a FIFO
 * put there since (O_NONBLOCK), and fstat() checks what was opened.
 * Anything but a regular file sets *refused (errno is then meaningless).
 */
static uint8_t *read_file(const char *path, size_t *len, bool *refused)
{
	struct stat st;
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0;

	*refused = false;
	if (stat(path, &st))
		return NULL;
	if (!S_ISREG(st.st_mode)) {
		*refused = true;
		return NULL;
	}
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	FILE *f = NULL;
	if (!fstat(fd, &st)) {
		*refused = !S_ISREG(st.st_mode);        /* replaced since the stat() */
		if (!*refused)
			f = fdopen(fd, "rb");
	}
	if (!f) {
		int err = errno;
		close(fd);
		errno = err;
		return NULL;
	}
	for (;;) {
		if (n == cap) {
			cap = cap ? 2 * cap : 4096;
			uint8_t *nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		size_t r = fread(buf + n, 1, cap - n, f);
		n += r;
		if (r == 0)
			break;
	}
	bool err = ferror(f);
	fclose(f);
	if (err) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

/*
 * An op whose flags argument names bits the decoder will change (mf_gfp_fix:
 * several zone modifiers, both mobility hints) runs as another op than the
 * text says: the encoder keeps the bits, as a saved input's bytes do, and
 * the decoder fixes them.  Said on stderr, with what it runs as.  (No
 * target's setup has such an argument.)
 */
static void warn_fixed_flags(const struct mf_target *t, const char *path, const struct mf_op *prog, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		const struct mf_opdesc *d = &t->ops[prog[i].kind];
		struct mf_op fixed = prog[i];
		bool changed = false;
		for (unsigned int k = 0; k < MF_MAX_ARGS && d->args[k].name; k++)
			if (d->args[k].kind == MF_FLAGS && d->args[k].fix) {
				fixed.a[k] = (long)d->args[k].fix((unsigned long)prog[i].a[k]);
				changed |= fixed.a[k] != prog[i].a[k];
			}
		if (!changed)
			continue;
		fprintf(stderr, "%s: warning: op [%u] names flags the kernel refuses together: `", path, i);
		mf_print_op(stderr, t, &prog[i], false);
		fputs("` runs as `", stderr);
		mf_print_op(stderr, t, &fixed, false);
		fputs("`\n", stderr);
	}
}

/* Op text -> bytes (malloc'ed); NULL with a message on a syntax error or a NUL byte. */
static uint8_t *text_to_bytes(const struct mf_target *t, const char *path, const char *text, size_t textlen,
			      size_t *len)
{
	struct mf_op setup;
	char err[512];
	const char *nul = memchr(text, 0, textlen);
	if (nul) {
		unsigned int line = 1;
		for (const char *q = text; q < nul; q++)
			line += *q == '\n';
		fprintf(stderr, "%s: line %u: a NUL byte: op text is plain text (input bytes in a .txt file?)\n", path,
			line);
		return NULL;
	}
	int n = mf_parse_text(t, text, &setup, cli_prog, MF_MAX_OPS, err, sizeof(err));
	if (n < 0) {
		fprintf(stderr, "%s: %s\n", path, err);
		return NULL;
	}
	warn_fixed_flags(t, path, cli_prog, (unsigned int)n);
	*len = mf_encode(t, &setup, cli_prog, (unsigned)n, NULL, 0);
	uint8_t *buf = malloc(*len + 1);
	if (buf)
		mf_encode(t, &setup, cli_prog, (unsigned)n, buf, *len);
	return buf;
}

/* The input bytes of @path: read, and encoded first when it is op text. */
static uint8_t *load_input(const struct mf_target *t, const char *path, size_t *len)
{
	bool refused;
	uint8_t *data = read_file(path, len, &refused);
	if (!data) {
		if (refused)
			fprintf(stderr, "%s: not a regular file (refused)\n", path);
		else
			fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno ? errno : EIO));
		return NULL;
	}
	if (!ends_with(path, ".txt"))
		return data;
	uint8_t *bytes = text_to_bytes(t, path, (const char *)data, *len, len);
	free(data);
	return bytes;
}

static void print_ops(const struct mf_target *t)
{
	const struct mf_opdesc *all[1 + 256];
	unsigned int n = 0;
	all[n++] = t->setup;
	for (unsigned int i = 0; i < t->nops && n < 257; i++)
		all[n++] = &t->ops[i];
	printf("target %s: the first line is `%s`, then one op per line (name key=value ...)\n",
	       t->name, t->setup->name);
	for (unsigned int i = 0; i < n; i++) {
		const struct mf_opdesc *d = all[i];
		printf("\n%s%s  -- %s\n", d->name, i ? "" : " (setup)", d->help ? d->help : "");
		for (const struct mf_arg *a = d->args; a < d->args + MF_MAX_ARGS && a->name; a++) {
			printf("    %-10s ", a->name);
			switch (a->kind) {
			case MF_ENUM:
				for (long k = 0; k <= a->hi; k++)
					printf("%s%s", k ? "|" : "one of ", a->names[k]);
				break;
			case MF_FLAGS:
				for (unsigned int k = 0; k < a->nflags; k++)
					printf("%s%s", k ? "|" : "flags ", a->flags[k].name);
				break;
			case MF_BOOL:
				printf("0 or 1");
				break;
			case MF_IDX:
				printf("index into the live allocations, taken modulo their count (0..65535)");
				break;
			default:
				printf("integer in [%ld, %ld]", a->lo, a->hi);
			}
			putchar('\n');
		}
	}
}

static void remove_args(int *argc, char ***argv, int at, int n)
{
	for (int i = at; i + n <= *argc; i++)
		(*argv)[i] = (*argv)[i + n];
	*argc -= n;
}

/*
 * The files the options write, --c OUT.c and --encode TEXT -o OUT, as
 * tools/outputs.py writes the verbs' (cannot_create, temp_beside,
 * replace_with), with its messages.  They were opened with fopen(OUT, "w")
 * at the option: an existing OUT was emptied before a run that might then
 * fail (--c with an unreadable input left an empty file), a FIFO blocked
 * the open() for ever and a device was written to.  Now:
 *   - an OUT that exists and is no regular file (a directory, a FIFO, a
 *     device, a socket) is refused before anything runs: exit 2;
 *   - a symlink is written through: the file it points to is replaced, the
 *     link kept (a dangling one makes that file, as fopen() did);
 *   - the bytes go to a temporary file beside that file (.NAME.XXXXXX, with
 *     the mode the old file had, or a new file's), renamed over it once
 *     they are complete (mf_out_commit); one never renamed is removed, at
 *     exit for a run that ended first.  A process killed outright (SIGKILL)
 *     leaves it behind, and OUT as it was.
 */
static struct mf_out *outs[2];          /* opened, for the removal at exit */
static unsigned int nouts;

static void outs_drop(void)
{
	for (unsigned int i = 0; i < nouts; i++)
		mf_out_drop(outs[i]);
}

/* What an existing file that is no regular file is (outputs.py's not_regular()). */
static const char *not_regular(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO (a named pipe)" :
	       S_ISCHR(m) || S_ISBLK(m) ? "a device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/*
 * @path past its symlinks, into @real: where a write through it lands (a
 * relative link is relative to its own directory).  A path that does not
 * exist is itself.  False with errno.
 */
static bool past_links(const char *path, char *real, size_t size)
{
	char link[4096];
	struct stat st;

	if ((size_t)snprintf(real, size, "%s", path) >= size)
		goto too_long;
	for (int hops = 0; hops < 40; hops++) {          /* the kernel's MAXSYMLINKS */
		if (lstat(real, &st) || !S_ISLNK(st.st_mode))
			return true;
		ssize_t n = readlink(real, link, sizeof(link) - 1);
		if (n < 0)
			return false;
		link[n] = 0;
		char *slash = strrchr(real, '/');
		size_t dir = link[0] != '/' && slash ? (size_t)(slash + 1 - real) : 0;
		if (dir + (size_t)n >= size)
			goto too_long;
		memcpy(real + dir, link, (size_t)n + 1);
	}
	errno = ELOOP;
	return false;
too_long:
	errno = ENAMETOOLONG;
	return false;
}

FILE *mf_out_open(struct mf_out *o, const char *opt, const char *path)
{
	char why[256] = "";
	struct stat st;
	bool exists = false;
	int fd = -1;

	memset(o, 0, sizeof(*o));
	o->opt = opt;
	snprintf(o->path, sizeof(o->path), "%s", path);
	if (!past_links(path, o->real, sizeof(o->real))) {
		snprintf(why, sizeof(why), "%s", strerror(errno));
	} else if (!stat(o->real, &st)) {
		exists = true;
		if (S_ISDIR(st.st_mode))
			snprintf(why, sizeof(why), "it is a directory");
		else if (!S_ISREG(st.st_mode))
			snprintf(why, sizeof(why), "it is %s, not a regular file (name a file)", not_regular(st.st_mode));
	}
	if (!why[0]) {
		const char *slash = strrchr(o->real, '/');
		int dirlen = slash ? (int)(slash - o->real) : 0;
		if ((size_t)snprintf(o->tmp, sizeof(o->tmp), "%.*s%s.%s.XXXXXX", dirlen, o->real, slash ? "/" : "",
				     slash ? slash + 1 : o->real) >= sizeof(o->tmp)) {
			o->tmp[0] = 0;
			snprintf(why, sizeof(why), "%s", strerror(ENAMETOOLONG));
		} else if ((fd = mkstemp(o->tmp)) < 0) {
			int err = errno;
			o->tmp[0] = 0;
			if (err == ENOENT || err == ENOTDIR)
				snprintf(why, sizeof(why), "no such directory");
			else
				snprintf(why, sizeof(why), "its directory takes no new file (%s)", strerror(err));
		}
	}
	if (!why[0]) {
		mode_t mask = umask(0);
		umask(mask);
		if (fchmod(fd, exists ? st.st_mode & 07777 : 0666 & ~mask) || !(o->f = fdopen(fd, "wb")))
			snprintf(why, sizeof(why), "%s", strerror(errno));
	}
	if (why[0]) {
		if (fd >= 0)
			close(fd);
		mf_out_drop(o);
		fprintf(stderr, "%s: cannot write '%s': %s\n", opt, path, why);
		exit(2);
	}
	if (!nouts)
		atexit(outs_drop);
	if (nouts < sizeof(outs) / sizeof(outs[0]))
		outs[nouts++] = o;
	return o->f;
}

bool mf_out_commit(struct mf_out *o)
{
	char why[256] = "";
	struct stat st;

	if (fclose(o->f))
		snprintf(why, sizeof(why), "%s", strerror(errno));
	/* Put there since it was opened: a FIFO or a device is never replaced by a file either. */
	else if (!stat(o->real, &st) && !S_ISREG(st.st_mode))
		snprintf(why, sizeof(why), "it is %s now, not a regular file", not_regular(st.st_mode));
	else if (rename(o->tmp, o->real))
		snprintf(why, sizeof(why), "%s", strerror(errno));
	o->f = NULL;
	if (why[0]) {
		mf_out_drop(o);
		fprintf(stderr, "%s: cannot write '%s': %s (left as it was)\n", o->opt, o->path, why);
		return false;
	}
	o->tmp[0] = 0;
	return true;
}

void mf_out_drop(struct mf_out *o)
{
	if (o->tmp[0])
		unlink(o->tmp);
	o->tmp[0] = 0;
}

int mf_main_options(const struct mf_target *t, int *argc, char ***argv)
{
	for (int i = 1; i < *argc; i++) {
		const char *a = (*argv)[i];
		if (!strcmp(a, "--dict")) {
			mf_write_dict(stdout, t);
			exit(0);
		}
		if (!strcmp(a, "--ops")) {
			print_ops(t);
			exit(0);
		}
		if (!strcmp(a, "--print")) {
			int status = 0;
			for (int k = i + 1; k < *argc; k++) {
				size_t len;
				struct mf_op setup;
				uint8_t *data = load_input(t, (*argv)[k], &len);
				if (!data) {
					status = 2;
					continue;
				}
				unsigned int n = mf_decode(t, data, len, &setup, cli_prog, MF_MAX_OPS);
				if (*argc > i + 2)
					printf("# %s\n", (*argv)[k]);
				mf_print_program(stdout, t, &setup, cli_prog, n, -1, false);
				free(data);
			}
			exit(*argc > i + 1 ? status : 2);
		}
		if (!strcmp(a, "--encode")) {
			static struct mf_out o;
			const char *in = i + 1 < *argc ? (*argv)[i + 1] : NULL, *out = NULL;
			if (i + 3 < *argc && !strcmp((*argv)[i + 2], "-o"))
				out = (*argv)[i + 3];
			size_t len, tlen;
			bool refused = false;
			/* OUT first: one that cannot be written is said before the work (then the text's errors). */
			FILE *f = in && out ? mf_out_open(&o, "-o", out) : stdout;
			uint8_t *text = in ? read_file(in, &tlen, &refused) : NULL;
			if (!text) {
				fprintf(stderr, "usage: %s --encode TEXT [-o OUT]%s%s%s\n", (*argv)[0],
					in ? ": cannot read " : "", in ? in : "",
					refused ? " (not a regular file)" : "");
				exit(2);
			}
			uint8_t *bytes = text_to_bytes(t, in, (const char *)text, tlen, &len);
			free(text);
			if (!bytes)
				exit(2);
			if (fwrite(bytes, 1, len, f) != len) {
				perror(out ? out : "stdout");
				exit(2);        /* the temporary file is removed at exit */
			}
			free(bytes);
			exit(!out || mf_out_commit(&o) ? 0 : 2);
		}
		if (!strcmp(a, "--trace")) {
			setenv("MMFUZZ_TRACE", "1", 1);
			remove_args(argc, argv, i--, 1);
			continue;
		}
		if (!strcmp(a, "--c")) {
			if (i + 1 >= *argc) {
				fprintf(stderr, "usage: %s --c OUT.c FILE\n", (*argv)[0]);
				exit(2);
			}
			if (t->no_cgen) {
				fprintf(stderr, "%s: --c: target %s has no C reproducer; nothing written\n", (*argv)[0],
					t->name);
				exit(2);
			}
			mf_cgen_open((*argv)[i + 1]);
			remove_args(argc, argv, i--, 2);
			continue;
		}
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_file(const struct mf_target *t, const char *path)
{
	size_t len;
	uint8_t *data = load_input(t, path, &len);
	if (!data)
		return -1;
	mf_set_input_name(path);
	mf_run_input(t, data, len);
	mf_set_input_name(NULL);
	free(data);
	return 0;
}

int mf_replay_main(const struct mf_target *t, int argc, char **argv)
{
	unsigned long ok = 0, bad = 0;

	mf_main_options(t, &argc, &argv);
	if (argc < 2) {
		fprintf(stderr, "usage: %s [--trace]%s FILE|DIR...   (replay inputs)\n"
			"       %s --print FILE... | --encode TEXT [-o OUT] | --dict | --ops\n", argv[0],
			t->no_cgen ? "" : " [--c OUT.c]", argv[0]);
		return 2;
	}
	const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "%s: ignoring option %s (this is the replay build)\n", argv[0], argv[i]);
			continue;
		}
		if (stat(argv[i], &st)) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			bad++;
			continue;
		}
		if (S_ISREG(st.st_mode)) {
			replay_file(t, argv[i]) ? bad++ : ok++;
			continue;
		}
		/* Decided on stat() alone: opening a FIFO would wait for a writer. */
		if (!S_ISDIR(st.st_mode)) {
			fprintf(stderr, "%s: %s: not a regular file or directory (refused)\n", prog, argv[i]);
			bad++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		if (!d) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(errno));
			bad++;
			continue;
		}
		char **names = NULL;
		size_t n = 0, cap = 0;
		for (struct dirent *e; (e = readdir(d));) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (e->d_name[0] == '.' || stat(path, &st) || !S_ISREG(st.st_mode))
				continue;
			if (n == cap) {
				size_t ncap = cap ? 2 * cap : 64;
				char **nn = realloc(names, ncap * sizeof(*names));
				if (nn) {
					names = nn;
					cap = ncap;
				}
			}
			char *name = n < cap ? strdup(path) : NULL;
			if (!name) {
				/* Not a silent partial replay: the rest of DIR counts as unreadable. */
				fprintf(stderr, "%s: %s: out of memory listing it\n", prog, argv[i]);
				bad++;
				break;
			}
			names[n++] = name;
		}
		closedir(d);
		/* qsort()'s base must not be NULL, even for no elements (C11 7.22.5). */
		if (n)
			qsort(names, n, sizeof(*names), by_name);
		for (size_t k = 0; k < n; k++) {
			replay_file(t, names[k]) ? bad++ : ok++;
			free(names[k]);
		}
		free(names);
	}
	if (!ok && !bad) {
		/*
		 * Every argument an empty directory (or an option): a corpus path
		 * gone wrong would otherwise pass as "replayed 0 inputs".
		 */
		unsigned int dirs = 0;
		fprintf(stderr, "%s: no inputs to replay", prog);
		for (int i = 1; i < argc; i++)
			if (argv[i][0] != '-' || !argv[i][1])
				fprintf(stderr, "%s%s", dirs++ ? ", " : " in ", argv[i]);
		fprintf(stderr, "%s\n", dirs ? " (a DIR's inputs are the regular files directly inside it, not dotfiles)"
			: " (only options given)");
		return 2;
	}
	fprintf(stderr, "%s: replayed %lu inputs without a violation%s", t->name, ok, bad ? "" : "\n");
	if (bad)
		fprintf(stderr, "; %lu unreadable\n", bad);
	return bad && !ok ? 2 : bad ? 1 : 0;
}

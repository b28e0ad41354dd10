/* SPDX-License-Identifier: MIT */
/*
 * program.c - op programs: bytes -> program (the decoder), program -> text,
 * text -> program, program -> bytes (the encoder).  One op table per target
 * drives all four, so the text a person writes and the bytes a fuzzer
 * mutates can never disagree.
 *
 * The byte format, in the spirit of libFuzzer's FuzzedDataProvider:
 *
 *   input   = record ( SEP opcode record )*
 *   record  = arguments, with every literal SEP byte doubled
 *
 * SEP is '\\' (0x5c), as in FuzzedDataProvider::ConsumeRandomLengthString:
 * a backslash followed by a backslash is one literal backslash; a backslash
 * followed by anything else ends the record, and that next byte is the
 * opcode of the next op (taken modulo the number of ops).  The first record
 * has no opcode: it is the setup (the target's header: config choice ...).
 * Record lengths are thus found in the data, never counted in advance:
 * inserting or deleting a byte inside one op changes that op alone, the
 * ops after it decode as before.
 *
 * Inside a record each argument takes the fewest bytes that cover its range
 * (little-endian), reduced modulo the range: an integer in [lo, hi] takes
 * ceil(log256(hi - lo + 1)) bytes, a bool one, a flags word one bit per
 * flag.  Missing bytes read as zero and extra bytes are ignored, so every
 * byte string decodes to a valid program.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* ------------------------------------------------------------ widths */

static unsigned int range_bytes(unsigned long range)
{
	unsigned int k = 0;
	while (range) {
		k++;
		range >>= 8;
	}
	return k;
}

static unsigned int arg_bytes(const struct mf_arg *a)
{
	if (a->kind == MF_FLAGS)
		return (a->nflags + 7) / 8;
	return range_bytes((unsigned long)a->hi - (unsigned long)a->lo);
}

static unsigned int nargs(const struct mf_opdesc *d)
{
	unsigned int n = 0;
	while (n < MF_MAX_ARGS && d->args[n].name)
		n++;
	return n;
}

/* ------------------------------------------------------------ decoding */

struct reader {
	const uint8_t *p;
	size_t n, pos;
};

static unsigned long read_raw(struct reader *r, unsigned int k)
{
	unsigned long v = 0;
	for (unsigned int i = 0; i < k; i++) {
		unsigned long b = r->pos < r->n ? r->p[r->pos++] : 0;
		v |= b << (8 * i);
	}
	return v;
}

static long read_arg(struct reader *r, const struct mf_arg *a)
{
	unsigned long raw = read_raw(r, arg_bytes(a));

	if (a->kind == MF_FLAGS) {
		unsigned long v = 0;
		for (unsigned int i = 0; i < a->nflags; i++)
			if (raw & (1UL << i))
				v |= a->flags[i].bit;
		return (long)(a->fix ? a->fix(v) : v);
	}
	unsigned long range = (unsigned long)a->hi - (unsigned long)a->lo;
	if (range != ULONG_MAX)
		raw %= range + 1;
	return (long)((unsigned long)a->lo + raw);
}

static void decode_args(const struct mf_opdesc *d, const uint8_t *p, size_t n, struct mf_op *op)
{
	struct reader r = { p, n, 0 };
	unsigned int na = nargs(d);
	for (unsigned int i = 0; i < na; i++)
		op->a[i] = read_arg(&r, &d->args[i]);
}

/*
 * Split into records, unescaping into a scratch buffer; each record is
 * decoded as soon as it ends.  Returns the number of ops.
 */
static uint8_t *scratch;
static size_t scratch_cap;

void mf_decode_reserve(size_t size)
{
	if (size + 1 <= scratch_cap)
		return;
	free(scratch);
	scratch_cap = size + 1 > 4096 ? size + 1 : 4096;
	scratch = malloc(scratch_cap);
	if (!scratch) {
		fprintf(stderr, "mmfuzz: out of memory decoding %zu bytes\n", size);
		abort();
	}
}

unsigned int mf_decode(const struct mf_target *t, const uint8_t *data, size_t size,
		       struct mf_op *setup, struct mf_op *prog, unsigned int max)
{
	unsigned int nops = 0;
	size_t pos = 0, len = 0;
	bool header = true;

	mf_decode_reserve(size);
	memset(setup, 0, sizeof(*setup));
	for (;;) {
		bool end = pos >= size;
		if (!end && data[pos] == MF_SEP && pos + 1 < size && data[pos + 1] == MF_SEP) {
			scratch[len++] = MF_SEP;
			pos += 2;
			continue;
		}
		if (!end && data[pos] != MF_SEP) {
			scratch[len++] = data[pos++];
			continue;
		}
		/* End of a record: at the end of the data or at SEP + opcode. */
		if (header) {
			decode_args(t->setup, scratch, len, setup);
			header = false;
		} else if (len && nops < max) {
			struct mf_op *op = &prog[nops++];
			memset(op, 0, sizeof(*op));
			op->kind = (uint16_t)(scratch[0] % t->nops);
			decode_args(&t->ops[op->kind], scratch + 1, len - 1, op);
		}
		if (end || pos + 1 >= size || nops >= max)
			break;
		pos++;                       /* the SEP */
		len = 0;
		scratch[len++] = data[pos++]; /* the opcode, never SEP here */
	}
	return nops;
}

/* ------------------------------------------------------------ encoding */

struct writer {
	uint8_t *buf;
	size_t cap, len;
};

static void put_byte(struct writer *w, uint8_t b)
{
	if (w->buf && w->len < w->cap)
		w->buf[w->len] = b;
	w->len++;
}

static void put_escaped(struct writer *w, uint8_t b)
{
	put_byte(w, b);
	if (b == MF_SEP)
		put_byte(w, MF_SEP);
}

static unsigned long arg_raw(const struct mf_arg *a, long v)
{
	if (a->kind == MF_FLAGS) {
		unsigned long raw = 0;
		for (unsigned int i = 0; i < a->nflags; i++)
			if ((unsigned long)v & a->flags[i].bit)
				raw |= 1UL << i;
		return raw;
	}
	return (unsigned long)v - (unsigned long)a->lo;
}

static void encode_args(struct writer *w, const struct mf_opdesc *d, const struct mf_op *op)
{
	unsigned int na = nargs(d), last = 0;
	uint8_t tmp[MF_MAX_ARGS * 8];
	size_t n = 0;

	for (unsigned int i = 0; i < na; i++) {
		unsigned long raw = arg_raw(&d->args[i], op->a[i]);
		for (unsigned int k = 0; k < arg_bytes(&d->args[i]); k++) {
			tmp[n++] = (uint8_t)(raw >> (8 * k));
			if (tmp[n - 1])
				last = (unsigned)n;
		}
	}
	/* Trailing zero bytes read back as zero: leave them out. */
	for (unsigned int i = 0; i < last; i++)
		put_escaped(w, tmp[i]);
}

static uint8_t opcode_byte(const struct mf_target *t, unsigned int kind)
{
	unsigned int b = kind;
	while (b == MF_SEP)
		b += t->nops;
	return (uint8_t)b;
}

size_t mf_encode(const struct mf_target *t, const struct mf_op *setup, const struct mf_op *prog,
		 unsigned int n, uint8_t *buf, size_t cap)
{
	struct writer w = { buf, cap, 0 };
	encode_args(&w, t->setup, setup);
	for (unsigned int i = 0; i < n; i++) {
		put_byte(&w, MF_SEP);
		put_byte(&w, opcode_byte(t, prog[i].kind));
		encode_args(&w, &t->ops[prog[i].kind], &prog[i]);
	}
	return w.len;
}

/* A libFuzzer / AFL++ dictionary: the separator with every opcode. */
void mf_write_dict(FILE *f, const struct mf_target *t)
{
	fprintf(f, "# %s: generated by fuzz_%s --dict (the op separator and opcode of each op)\n",
		t->name, t->name);
	for (unsigned int i = 0; i < t->nops; i++)
		fprintf(f, "op_%s=\"\\x%02x\\x%02x\"\n", t->ops[i].name, MF_SEP, opcode_byte(t, i));
	fprintf(f, "literal_sep=\"\\x%02x\\x%02x\"\n", MF_SEP, MF_SEP);
}

/* ------------------------------------------------------------ text out */

static void print_flags(FILE *f, const struct mf_arg *a, unsigned long v)
{
	bool first = true;
	if (!v) {
		fputc('0', f);
		return;
	}
	/* Multi-bit aliases only: a one-bit alias merely renames a flag for the parser. */
	for (const struct mf_flag *al = a->aliases; al && al->name; al++) {
		if (__builtin_popcountl(al->bit) > 1 && (v & al->bit) == al->bit) {
			fprintf(f, "%s%s", first ? "" : "|", al->name);
			v &= ~al->bit;
			first = false;
		}
	}
	for (unsigned int i = 0; i < a->nflags && v; i++) {
		if (v & a->flags[i].bit) {
			fprintf(f, "%s%s", first ? "" : "|", a->flags[i].name);
			v &= ~a->flags[i].bit;
			first = false;
		}
	}
	if (v)
		fprintf(f, "%s%#lx", first ? "" : "|", v);
}

static void print_args(FILE *f, const struct mf_opdesc *d, const struct mf_op *op)
{
	unsigned int na = nargs(d);
	fputs(d->name, f);
	for (unsigned int i = 0; i < na; i++) {
		const struct mf_arg *a = &d->args[i];
		fprintf(f, " %s=", a->name);
		switch (a->kind) {
		case MF_HEX:
			fprintf(f, "%#lx", op->a[i]);
			break;
		case MF_ENUM:
			if (op->a[i] >= 0 && op->a[i] <= a->hi)
				fputs(a->names[op->a[i]], f);
			else
				fprintf(f, "%ld", op->a[i]);
			break;
		case MF_FLAGS:
			print_flags(f, a, (unsigned long)op->a[i]);
			break;
		default:
			fprintf(f, "%ld", op->a[i]);
		}
	}
}

void mf_print_op(FILE *f, const struct mf_target *t, const struct mf_op *op, bool with_note)
{
	const struct mf_opdesc *d = &t->ops[op->kind];
	print_args(f, d, op);
	if (with_note && op->ran && d->note) {
		fputs("    # ", f);
		d->note(f, op);
	}
}

void mf_print_program(FILE *f, const struct mf_target *t, const struct mf_op *setup,
		      const struct mf_op *prog, unsigned int n, int mark, bool with_notes)
{
	print_args(f, t->setup, setup);
	fputc('\n', f);
	for (unsigned int i = 0; i < n; i++) {
		const struct mf_opdesc *d = &t->ops[prog[i].kind];
		print_args(f, d, &prog[i]);
		fprintf(f, "    # [%u]", i);
		if (with_notes && prog[i].ran && d->note) {
			fputc(' ', f);
			d->note(f, &prog[i]);
		}
		if ((int)i == mark)
			fputs("   <== violation here", f);
		fputc('\n', f);
	}
}

/* ------------------------------------------------------------ text in */

#define MF_TEXT_LINE 2048        /* the longest line of op text, its NUL included */

static int perr(char *err, size_t errlen, unsigned int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int perr(char *err, size_t errlen, unsigned int line, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, errlen, "line %u: ", line);
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < errlen)
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

/*
 * A number in op text: decimal, or hex after 0x, with an optional '-'.  A
 * leading 0 is a decimal digit, not octal ("order=010" is ten, as the
 * stressors and ./mmfuzz run read numbers).  Values past LONG_MAX up to
 * ULONG_MAX are taken as their unsigned bits (flag words).
 */
static bool parse_number(const char *s, long *v)
{
	const char *p = s;
	bool neg = *p == '-';
	int base = 10;
	char *end;

	if (neg)
		p++;
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (!(base == 16 ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p)))
		return false;
	errno = 0;
	unsigned long u = strtoul(p, &end, base);
	if (errno || *end)
		return false;
	if (neg) {
		if (u > (unsigned long)LONG_MAX + 1)
			return false;
		*v = (long)(0 - u);
	} else {
		*v = (long)u;
	}
	return true;
}

static bool flag_lookup(const struct mf_arg *a, const char *name, unsigned long *bits)
{
	for (unsigned int i = 0; i < a->nflags; i++)
		if (!strcmp(a->flags[i].name, name)) {
			*bits = a->flags[i].bit;
			return true;
		}
	for (const struct mf_flag *al = a->aliases; al && al->name; al++)
		if (!strcmp(al->name, name)) {
			*bits = al->bit;
			return true;
		}
	long v;
	if (parse_number(name, &v)) {
		*bits = (unsigned long)v;
		return true;
	}
	return false;
}

static int parse_value(const struct mf_arg *a, const char *s, long *out, char *err, size_t errlen,
		       unsigned int line)
{
	long v;
	switch (a->kind) {
	case MF_ENUM:
		for (long i = 0; i <= a->hi; i++)
			if (!strcmp(a->names[i], s)) {
				*out = i;
				return 0;
			}
		if (!parse_number(s, &v) || v < 0 || v > a->hi)
			return perr(err, errlen, line, "%s: '%s' is not one of its names", a->name, s);
		*out = v;
		return 0;
	case MF_FLAGS: {
		unsigned long bits = 0, all = 0;
		char buf[MF_TEXT_LINE];
		if (strlen(s) >= sizeof(buf))
			return perr(err, errlen, line, "%s: value too long", a->name);
		snprintf(buf, sizeof(buf), "%s", s);
		char *save = NULL;
		for (char *tok = strtok_r(buf, "|", &save); tok; tok = strtok_r(NULL, "|", &save)) {
			unsigned long b;
			if (!flag_lookup(a, tok, &b))
				return perr(err, errlen, line, "%s: unknown flag '%s'", a->name, tok);
			bits |= b;
		}
		for (unsigned int i = 0; i < a->nflags; i++)
			all |= a->flags[i].bit;
		if (bits & ~all)
			return perr(err, errlen, line, "%s: bits %#lx cannot be encoded", a->name, bits & ~all);
		*out = (long)bits;
		return 0;
	}
	case MF_BOOL:
		if (!strcmp(s, "true") || !strcmp(s, "yes")) {
			*out = 1;
			return 0;
		}
		if (!strcmp(s, "false") || !strcmp(s, "no")) {
			*out = 0;
			return 0;
		}
		/* fall through */
	default:
		if (!parse_number(s, &v))
			return perr(err, errlen, line, "%s: '%s' is not a number", a->name, s);
		if ((unsigned long)v - (unsigned long)a->lo > (unsigned long)a->hi - (unsigned long)a->lo)
			return perr(err, errlen, line, "%s: %s is outside [%ld, %ld]", a->name, s, a->lo, a->hi);
		*out = v;
		return 0;
	}
}

static int parse_args(const struct mf_opdesc *d, char *rest, struct mf_op *op, char *err, size_t errlen,
		      unsigned int line)
{
	unsigned int na = nargs(d), pos = 0;
	bool given[MF_MAX_ARGS] = { false };
	for (unsigned int i = 0; i < na; i++)
		op->a[i] = d->args[i].kind == MF_FLAGS ? 0 : d->args[i].lo;
	char *save = NULL;
	for (char *tok = strtok_r(rest, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *eq = strchr(tok, '=');
		unsigned int i;
		if (eq) {
			*eq = 0;
			for (i = 0; i < na && strcmp(d->args[i].name, tok); i++)
				;
			if (i == na)
				return perr(err, errlen, line, "%s has no argument '%s'", d->name, tok);
			tok = eq + 1;
		} else {
			i = pos;   /* positional */
			if (i >= na)
				return perr(err, errlen, line, "%s takes %u arguments", d->name, na);
		}
		/* "alloc order=1 order=2": which one was meant?  The last one silently won. */
		if (given[i])
			return perr(err, errlen, line, "%s: argument '%s' given twice", d->name, d->args[i].name);
		given[i] = true;
		if (parse_value(&d->args[i], tok, &op->a[i], err, errlen, line))
			return -1;
		pos = i + 1;
	}
	return 0;
}

int mf_parse_text(const struct mf_target *t, const char *text, struct mf_op *setup,
		  struct mf_op *prog, unsigned int max, char *err, size_t errlen)
{
	unsigned int n = 0, line = 0;
	bool seen_first = false;
	const char *p = text;

	memset(setup, 0, sizeof(*setup));
	parse_args(t->setup, (char[]){ "" }, setup, err, errlen, 0);
	while (*p) {
		char buf[MF_TEXT_LINE];
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		line++;
		if (len >= sizeof(buf))
			return perr(err, errlen, line, "line too long (at most %zu characters)", sizeof(buf) - 1);
		memcpy(buf, p, len);
		buf[len] = 0;
		p += len + (nl ? 1 : 0);
		/* Text saved with CRLF line ends (an editor, a mail client): the CR is no part of a value. */
		while (len && (buf[len - 1] == '\r' || buf[len - 1] == ' ' || buf[len - 1] == '\t'))
			buf[--len] = 0;
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = 0;
		char *s = buf;
		while (isspace((unsigned char)*s))
			s++;
		if (!*s)
			continue;
		char *name = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		if (*s)
			*s++ = 0;
		if (!seen_first && !strcmp(name, t->setup->name)) {
			seen_first = true;
			if (parse_args(t->setup, s, setup, err, errlen, line))
				return -1;
			continue;
		}
		seen_first = true;
		unsigned int k;
		for (k = 0; k < t->nops && strcmp(t->ops[k].name, name); k++)
			;
		if (k == t->nops) {
			if (!strcmp(name, t->setup->name))
				return perr(err, errlen, line, "'%s' must be the first line", name);
			return perr(err, errlen, line, "unknown op '%s' for target %s", name, t->name);
		}
		if (n >= max)
			return perr(err, errlen, line, "more than %u ops", max);
		memset(&prog[n], 0, sizeof(prog[n]));
		prog[n].kind = (uint16_t)k;
		if (parse_args(&t->ops[k], s, &prog[n], err, errlen, line))
			return -1;
		n++;
	}
	return (int)n;
}

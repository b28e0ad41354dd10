/* SPDX-License-Identifier: MIT */
/*
 * test_harness_decoder.c - the fuzz harness's op-program codec
 * (targets/common/program.c): every byte string decodes to a valid
 * program; text -> bytes -> program is exact; a byte inserted inside one op
 * changes that op only; separators inside arguments are escaped; op text
 * errors name the line; numbers are decimal or 0x hex, never octal.
 */
#include <stdlib.h>
#include <string.h>

#include "common/gfp_args.h"
#include "common/harness.h"
#include "test.h"

static const char *const colours[] = { "red", "green", "blue" };
static const struct mf_flag bits[] = { { "A", 1 }, { "B", 2 }, { "C", 0x40 }, { "D", 0x5c00 } };
static const struct mf_flag aliases[] = { { "AB", 3 }, { "ALSO_A", 1 }, { NULL, 0 } };

static void nop(struct mf_ctx *c, struct mf_op *op) { (void)c; (void)op; }

static const struct mf_opdesc setup = { "setup", "", NULL, NULL, { MF_A_ENUM("colour", colours), MF_A_INT("n", 1, 4) } };
static const struct mf_opdesc ops[] = {
	{ "small", "", nop, NULL, { MF_A_INT("x", -3, 3), MF_A_BOOL("b") } },
	{ "wide", "", nop, NULL, { MF_A_HEX("big", 0, 1L << 40), MF_A_INT("neg", -(1L << 31), 1L << 31) } },
	{ "pick", "", nop, NULL, { MF_A_IDX("idx"), MF_A_ENUM("c", colours), MF_A_FLAGS("f", bits, aliases) } },
	{ "none", "", nop, NULL, { { 0 } } },
	{ "sep", "", nop, NULL, { MF_A_INT("v", 0, 255), MF_A_INT("w", 0, 65535) } },
};
static const struct mf_target target = {
	.name = "test", .setup = &setup, .ops = ops, .nops = sizeof(ops) / sizeof(ops[0]),
};

static struct mf_op prog[MF_MAX_OPS], prog2[MF_MAX_OPS];

static unsigned long long rng = 88172645463325252ULL;
static unsigned int rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned int)rng;
}

static unsigned int nargs(const struct mf_opdesc *d)
{
	unsigned int n = 0;
	while (n < MF_MAX_ARGS && d->args[n].name)
		n++;
	return n;
}

static bool same_args(const struct mf_op *a, const struct mf_op *b)
{
	if (a->kind != b->kind)
		return false;
	for (unsigned int i = 0; i < nargs(&ops[a->kind]); i++)
		if (a->a[i] != b->a[i])
			return false;
	return true;
}

static bool arg_valid(const struct mf_arg *a, long v)
{
	if (a->kind == MF_FLAGS) {
		unsigned long all = 0;
		for (unsigned int i = 0; i < a->nflags; i++)
			all |= a->flags[i].bit;
		return ((unsigned long)v & ~all) == 0;
	}
	return v >= a->lo && v <= a->hi;
}

/* Every byte string decodes to ops and arguments inside their declared ranges. */
static void test_any_bytes_valid(void)
{
	uint8_t buf[512];
	struct mf_op s;
	for (int iter = 0; iter < 2000; iter++) {
		size_t n = rnd() % sizeof(buf);
		for (size_t i = 0; i < n; i++)
			buf[i] = (rnd() % 4 == 0) ? MF_SEP : (uint8_t)rnd();
		unsigned int k = mf_decode(&target, buf, n, &s, prog, MF_MAX_OPS);
		CHECK(s.a[0] >= 0 && s.a[0] <= 2 && s.a[1] >= 1 && s.a[1] <= 4);
		for (unsigned int i = 0; i < k; i++) {
			CHECK(prog[i].kind < target.nops);
			const struct mf_opdesc *d = &ops[prog[i].kind];
			for (unsigned int j = 0; j < nargs(d); j++)
				CHECK_MSG(arg_valid(&d->args[j], prog[i].a[j]), "op %s arg %s = %ld", d->name,
					  d->args[j].name, prog[i].a[j]);
		}
	}
	/* Nothing at all: the setup's lowest values, no ops. */
	CHECK(mf_decode(&target, buf, 0, &s, prog, MF_MAX_OPS) == 0);
	CHECK(s.a[0] == 0 && s.a[1] == 1);
}

/* Text -> program -> bytes -> program is exact, extremes and separators included. */
static void test_text_roundtrip(void)
{
	const char *text =
		"# a comment line\n"
		"setup colour=blue n=3\n"
		"small x=-3 b=1     # trailing comment\n"
		"small 3 0\n"
		"wide big=0x10000000000 neg=-2147483648\n"
		"wide big=92 neg=2147483648\n"
		"pick idx=92 c=green f=AB|C|D\n"
		"pick idx=23644 c=2 f=0\n"
		"none\n"
		"sep v=92 w=23644\n"
		"sep v=0 w=0\n";
	struct mf_op s, s2;
	char err[256];
	int n = mf_parse_text(&target, text, &s, prog, MF_MAX_OPS, err, sizeof(err));
	REQUIRE(n == 9);
	CHECK(s.a[0] == 2 && s.a[1] == 3);
	CHECK(prog[0].kind == 0 && prog[0].a[0] == -3 && prog[0].a[1] == 1);
	CHECK(prog[1].a[0] == 3 && prog[1].a[1] == 0);
	CHECK(prog[2].a[0] == 1L << 40 && prog[2].a[1] == -(1L << 31));
	CHECK(prog[4].a[2] == (3 | 0x40 | 0x5c00));

	uint8_t buf[1024];
	size_t len = mf_encode(&target, &s, prog, (unsigned)n, buf, sizeof(buf));
	REQUIRE(len <= sizeof(buf));
	CHECK(mf_encode(&target, &s, prog, (unsigned)n, NULL, 0) == len);
	/* 92 is the separator: it must have been doubled wherever it is an argument byte. */
	unsigned int k = mf_decode(&target, buf, len, &s2, prog2, MF_MAX_OPS);
	CHECK(k == (unsigned)n);
	CHECK(s2.a[0] == s.a[0] && s2.a[1] == s.a[1]);
	for (int i = 0; i < n && i < (int)k; i++)
		CHECK_MSG(same_args(&prog[i], &prog2[i]), "op %d differs after encode/decode", i);

	/* And the printed program parses back to the same. */
	char *out = NULL;
	size_t outlen = 0;
	FILE *f = open_memstream(&out, &outlen);
	mf_print_program(f, &target, &s, prog, (unsigned)n, -1, false);
	fclose(f);
	int n2 = mf_parse_text(&target, out, &s2, prog2, MF_MAX_OPS, err, sizeof(err));
	CHECK_MSG(n2 == n, "printed program parses to %d ops: %s", n2, n2 < 0 ? err : "");
	for (int i = 0; i < n && i < n2; i++)
		CHECK(same_args(&prog[i], &prog2[i]));
	free(out);
}

/*
 * A gfp argument decodes to a combination the kernel accepts, whatever the
 * bits (mf_gfp_fix()): at most one of __GFP_DMA, __GFP_DMA32 and
 * __GFP_HIGHMEM, the lowest zone's kept; not both mobility hints,
 * __GFP_MOVABLE kept; every other bit as it was.  The encoder keeps what
 * op text names, so text with a bad combination still encodes to the same
 * bytes (committed seeds stay what their text says).
 */
static const struct mf_opdesc gfp_setup = { "setup", "", NULL, NULL, { MF_A_INT("n", 0, 0) } };
static const struct mf_opdesc gfp_ops[] = { { "alloc", "", nop, NULL, { MF_A_GFP("gfp") } } };
static const struct mf_target gfp_target = {
	.name = "gfp", .setup = &gfp_setup, .ops = gfp_ops, .nops = 1,
};

static void test_gfp_fixed(void)
{
	const unsigned int nflags = sizeof(mf_gfp_flags) / sizeof(mf_gfp_flags[0]);
	unsigned long bad = 0;

	for (unsigned long set = 0; set < (1UL << nflags); set++) {
		char text[1024] = "alloc gfp=0";
		unsigned long gfp_bits = 0;
		for (unsigned int i = 0; i < nflags; i++)
			if (set & (1UL << i)) {
				gfp_bits |= mf_gfp_flags[i].bit;
				snprintf(text + strlen(text), sizeof(text) - strlen(text), "|%s", mf_gfp_flags[i].name);
			}
		struct mf_op s, s2;
		char err[256];
		uint8_t buf[64];
		if (mf_parse_text(&gfp_target, text, &s, prog, MF_MAX_OPS, err, sizeof(err)) != 1) {
			CHECK_MSG(false, "%s: %s", text, err);
			continue;
		}
		CHECK_MSG((unsigned long)prog[0].a[0] == gfp_bits, "%s parsed to %#lx", text, prog[0].a[0]);
		size_t len = mf_encode(&gfp_target, &s, prog, 1, buf, sizeof(buf));
		REQUIRE(len <= sizeof(buf));
		REQUIRE(mf_decode(&gfp_target, buf, len, &s2, prog2, MF_MAX_OPS) == 1);
		unsigned long got = (unsigned long)prog2[0].a[0], want = gfp_bits;
		if (want & __GFP_DMA)
			want &= ~(unsigned long)(__GFP_DMA32 | __GFP_HIGHMEM);
		if (want & __GFP_DMA32)
			want &= ~(unsigned long)__GFP_HIGHMEM;
		if ((want & __GFP_MOVABLE) && (want & __GFP_RECLAIMABLE))
			want &= ~(unsigned long)__GFP_RECLAIMABLE;
		bad += want != gfp_bits;
		CHECK_MSG(got == want, "%#lx decoded to %#lx, expected %#lx", gfp_bits, got, want);
		unsigned long zones = got & (__GFP_DMA | __GFP_DMA32 | __GFP_HIGHMEM);
		CHECK_MSG((zones & (zones - 1)) == 0, "%#lx decoded to several zone modifiers: %#lx", gfp_bits, got);
		CHECK_MSG(!((got & __GFP_MOVABLE) && (got & __GFP_RECLAIMABLE)), "%#lx decoded to both mobility hints",
			  gfp_bits);
	}
	CHECK(bad > 0);   /* the loop met the bad combinations */
}

/* A byte inserted inside one op's arguments changes that op and no other. */
static void test_insertion_is_local(void)
{
	struct mf_op s;
	uint8_t buf[2048], mut[2049];
	int tested = 0;
	for (int iter = 0; iter < 500; iter++) {
		unsigned int n = 2 + rnd() % 20;
		memset(prog, 0, sizeof(prog[0]) * n);
		for (unsigned int i = 0; i < n; i++) {
			prog[i].kind = (uint16_t)(rnd() % target.nops);
			const struct mf_opdesc *d = &ops[prog[i].kind];
			for (unsigned int j = 0; j < nargs(d); j++) {
				const struct mf_arg *a = &d->args[j];
				prog[i].a[j] = a->kind == MF_FLAGS ? (long)(a->flags[rnd() % a->nflags].bit)
					       : a->lo + (long)(rnd() % (unsigned long)(a->hi - a->lo + 1));
			}
		}
		memset(&s, 0, sizeof(s));
		size_t len = mf_encode(&target, &s, prog, n, buf, sizeof(buf));
		/* Find op k's record: the k-th separator that is followed by an opcode. */
		unsigned int k = 1 + rnd() % (n - 1), seen = 0;
		size_t pos = 0, at = 0;
		for (pos = 0; pos + 1 < len; pos++) {
			if (buf[pos] == MF_SEP && buf[pos + 1] == MF_SEP) {
				pos++;
				continue;
			}
			if (buf[pos] == MF_SEP && seen++ == k) {
				at = pos + 2;   /* just after op k's opcode */
				break;
			}
		}
		if (!at || at > len)
			continue;
		memcpy(mut, buf, at);
		mut[at] = (uint8_t)(rnd() % 91);   /* never the separator */
		memcpy(mut + at + 1, buf + at, len - at);
		unsigned int m = mf_decode(&target, mut, len + 1, &s, prog2, MF_MAX_OPS);
		CHECK(m == n);
		for (unsigned int i = 0; i < n && i < m; i++)
			if (i != k)
				CHECK_MSG(same_args(&prog[i], &prog2[i]), "inserting into op %u changed op %u", k, i);
		tested++;
	}
	CHECK(tested > 100);
}

static void test_text_errors(void)
{
	struct mf_op s;
	char err[256];
	CHECK(mf_parse_text(&target, "setup\nbogus x=1\n", &s, prog, MF_MAX_OPS, err, sizeof(err)) < 0);
	CHECK_MSG(strstr(err, "line 2") && strstr(err, "bogus"), "%s", err);
	CHECK(mf_parse_text(&target, "small x=4\n", &s, prog, MF_MAX_OPS, err, sizeof(err)) < 0);
	CHECK_MSG(strstr(err, "line 1") && strstr(err, "outside"), "%s", err);
	CHECK(mf_parse_text(&target, "pick c=purple\n", &s, prog, MF_MAX_OPS, err, sizeof(err)) < 0);
	CHECK(mf_parse_text(&target, "pick f=A|E\n", &s, prog, MF_MAX_OPS, err, sizeof(err)) < 0);
	CHECK(mf_parse_text(&target, "pick f=0x100\n", &s, prog, MF_MAX_OPS, err, sizeof(err)) < 0);
	CHECK(mf_parse_text(&target, "small y=1\n", &s, prog, MF_MAX_OPS, err, sizeof(err)) < 0);
	CHECK(mf_parse_text(&target, "small\nsetup\n", &s, prog, MF_MAX_OPS, err, sizeof(err)) < 0);
	/* A one-bit alias parses, but prints as its canonical name. */
	REQUIRE(mf_parse_text(&target, "pick f=ALSO_A\n", &s, prog, MF_MAX_OPS, err, sizeof(err)) == 1);
	char *out = NULL;
	size_t outlen = 0;
	FILE *f = open_memstream(&out, &outlen);
	mf_print_op(f, &target, &prog[0], false);
	fclose(f);
	CHECK_MSG(strstr(out, "f=A") && !strstr(out, "ALSO_A"), "%s", out);
	free(out);
}

/*
 * Numbers are decimal or 0x hex (a leading 0 is not octal); a value is
 * never cut short; an argument given twice is refused; CRLF text reads as LF.
 */
static void test_text_numbers_and_lines(void)
{
	struct mf_op s;
	char err[256];

	REQUIRE(mf_parse_text(&target, "wide big=010 neg=-010\n", &s, prog, MF_MAX_OPS, err, sizeof(err)) == 1);
	CHECK_MSG(prog[0].a[0] == 10 && prog[0].a[1] == -10, "big %ld neg %ld", prog[0].a[0], prog[0].a[1]);
	REQUIRE(mf_parse_text(&target, "wide big=0x10 neg=-0x10\n", &s, prog, MF_MAX_OPS, err, sizeof(err)) == 1);
	CHECK_MSG(prog[0].a[0] == 16 && prog[0].a[1] == -16, "big %ld neg %ld", prog[0].a[0], prog[0].a[1]);
	CHECK(mf_parse_text(&target, "small x=08\n", &s, prog, MF_MAX_OPS, err, sizeof(err)) < 0);
	CHECK_MSG(strstr(err, "outside"), "08 is eight, outside x's range: %s", err);
	CHECK(mf_parse_text(&target, "wide big=0x\n", &s, prog, MF_MAX_OPS, err, sizeof(err)) < 0);
	CHECK(mf_parse_text(&target, "wide big=+5\n", &s, prog, MF_MAX_OPS, err, sizeof(err)) < 0);

	/* "x=0000...0003", longer than the old 512-byte copy: it was cut to x=0. */
	char line[1200] = "small x=";
	memset(line + 8, '0', 1000);
	snprintf(line + 1008, sizeof(line) - 1008, "3\n");
	REQUIRE(mf_parse_text(&target, line, &s, prog, MF_MAX_OPS, err, sizeof(err)) == 1);
	CHECK_MSG(prog[0].a[0] == 3, "x %ld", prog[0].a[0]);

	CHECK(mf_parse_text(&target, "small x=1 x=2\n", &s, prog, MF_MAX_OPS, err, sizeof(err)) < 0);
	CHECK_MSG(strstr(err, "given twice"), "%s", err);
	CHECK(mf_parse_text(&target, "small 1 x=2\n", &s, prog, MF_MAX_OPS, err, sizeof(err)) < 0);

	REQUIRE(mf_parse_text(&target, "setup colour=blue n=2\r\npick 0 green A|B\r\n", &s, prog, MF_MAX_OPS, err,
			      sizeof(err)) == 1);
	CHECK(s.a[0] == 2 && s.a[1] == 2);
	CHECK(prog[0].a[1] == 1 && prog[0].a[2] == 3);
}

int main(void)
{
	test_any_bytes_valid();
	test_text_roundtrip();
	test_insertion_is_local();
	test_text_errors();
	test_text_numbers_and_lines();
	test_gfp_fixed();
	TEST_DONE();
}

/* SPDX-License-Identifier: MIT */
/*
 * test_harness_reports.c - an allocator report that no op expected is a
 * finding.  A correct allocator reports only bad input (a bad free, an
 * order above max_order); an op that makes one on purpose checks it and
 * calls mf_reports_accounted().  Any other report - during an op or during
 * teardown - fails the input with C1, naming the report.  Before, only the
 * SLUB targets and a few bulk ops looked: a buddy or pcp op whose
 * allocator reported (a bad_page() on a good page, say) passed.
 *
 * A small target whose ops free a bad address, with and without
 * accounting for the report, runs in a child process per input; the parent
 * checks how the child ended and what it printed.
 *
 * Also: a bad free that is reported must change nothing
 * (mf_expect_refused()), and the baseline it compares now holds each
 * vCPU's pcp count - a page queued on a pcp list changes neither
 * NR_FREE_PAGES nor the buddyinfo line, so before it went unseen.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/harness.h"
#include "common/instance.h"
#include "test.h"

static void op_quiet(struct mf_ctx *c, struct mf_op *op) { (void)c; (void)op; }

static void op_stray(struct mf_ctx *c, struct mf_op *op)
{
	(void)op;
	free_pages(c->mm, 1UL, 0);              /* outside memory: one "bad_free" report */
}

static void op_accounted(struct mf_ctx *c, struct mf_op *op)
{
	op_stray(c, op);
	if (mm_nr_reports(c->mm) == c->reports_before + 1)
		mf_reports_accounted(c);
}

static bool stray_at_end;
static void end(struct mf_ctx *c)
{
	if (stray_at_end)
		free_pages(c->mm, 1UL, 0);
}

static bool begin(struct mf_ctx *c, const struct mf_op *setup)
{
	struct mm_config cfg;
	(void)setup;
	mm_config_tiny(&cfg);
	cfg.quiet = true;
	return mf_instance(c, &cfg) != NULL;
}

static void release(struct mf_ctx *c, struct mf_alloc *a) { (void)c; (void)a; }

static const struct mf_opdesc setup = { "setup", "", NULL, NULL, { { 0 } } };
static const struct mf_opdesc ops[] = {
	{ "quiet", "", op_quiet, NULL, { { 0 } } },
	{ "stray", "", op_stray, NULL, { { 0 } } },
	{ "accounted", "", op_accounted, NULL, { { 0 } } },
};
static const struct mf_target target = {
	.name = "reporttest", .setup = &setup, .ops = ops, .nops = 3, .check_level = 1, .final_level = 2,
	.begin = begin, .release = release, .end = end,
};

/* The input the child runs (run()). */
static uint8_t run_in[32];
static size_t run_len;

static void run_input(void)
{
	mf_run_input(&target, run_in, run_len);
}

/* Run @n ops (opcodes @code) in a child; its exit status and stderr (static buffer). */
static const char *run(const uint8_t *code, int n, bool at_end, int *status)
{
	static char buf[1 << 14];

	run_len = 0;
	for (int i = 0; i < n; i++) {
		run_in[run_len++] = 0x5c;           /* SEP: the next byte is an opcode */
		run_in[run_len++] = code[i];
	}
	stray_at_end = at_end;
	*status = test_run_child_stderr(run_input, buf, sizeof(buf));
	return buf;
}

static void expect_clean(const char *what, const uint8_t *code, int n)
{
	int st;
	const char *out = run(code, n, false, &st);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the input failed:\n%s", what, out);
}

static void expect_finding(const char *what, const uint8_t *code, int n, bool at_end, const char *needle)
{
	int st;
	const char *out = run(code, n, at_end, &st);
	CHECK_MSG(!(WIFEXITED(st) && WEXITSTATUS(st) == 0), "%s: the input passed", what);
	CHECK_MSG(strstr(out, "C1") && strstr(out, needle) && strstr(out, "bad_free"), "%s: no \"%s\" naming the report "
		  "in:\n%s", what, needle, out);
}

static void test_baseline_sees_pcp(void)
{
	struct mm_config cfg;
	struct mf_baseline a, b;
	char why[256] = "";
	mm_config_tiny(&cfg);
	cfg.quiet = true;
	struct mm *mm = test_create(&cfg);
	struct page *p = alloc_pages(mm, GFP_KERNEL, 0);
	REQUIRE(p);
	mf_baseline_capture(mm, &a);
	__free_pages(mm, p, 0);                 /* onto this vCPU's pcp list: no buddy change */
	mf_baseline_capture(mm, &b);
	CHECK_MSG(!mf_baseline_same(&a, &b, true, true, NULL, why, sizeof(why)),
		  "a page freed onto a pcp list left the baseline the same");
	CHECK_MSG(strstr(why, "pcp"), "the difference named: %s", why);
	CHECK(mf_baseline_same(&b, &b, true, true, NULL, why, sizeof(why)));
	mm_destroy(mm);
}

int main(void)
{
	test_baseline_sees_pcp();
	expect_clean("quiet ops", (const uint8_t[]){ 0, 0 }, 2);
	expect_clean("a report the op accounted for", (const uint8_t[]){ 0, 2, 0 }, 3);
	expect_finding("a report no op expected", (const uint8_t[]){ 0, 1, 0 }, 3, false,
		       "stray left an unexpected allocator report");
	expect_finding("a report after an accounted one", (const uint8_t[]){ 2, 0, 1 }, 3, false,
		       "stray left an unexpected allocator report");
	expect_finding("a report during teardown", (const uint8_t[]){ 0 }, 1, true,
		       "teardown left an unexpected allocator report");
	TEST_DONE();
}

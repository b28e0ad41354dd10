#!/usr/bin/env python3
"""tools/mutants.py, the mutation audit: which lines it mutates and how,
checked on small C texts (no build, well under a second).  A mutant in a
comment, a string, a preprocessor line, an assertion or outside a function
would be noise - it changes nothing the tests can see - and one operator
read as another (`->` as `>`, `<<` as `<`) would not compile."""
import importlib.util
import os
import unittest

ROOT = os.environ.get("MMFUZZ_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("mutants", os.path.join(ROOT, "tools", "mutants.py"))
mutants = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mutants)

SRC = r'''#include <stdint.h>
#define LIMIT(x) ((x) < 8)
static const int table[2] = { 1 < 2, 3 };
/* a comment with a < b and x++; */
struct s { int a; };
static int f(struct s *p, int n)
{
	const char *msg = "a < b && c";	// n < 3 here
	int i = 0;
	VM_BUG_ON(n < 0);
	if (p->a < n && n != 4)
		i++;
	i = (i << 2) + 1;
	update(p, true);
	return i >= n;
}
'''


def mutants_by_line(text):
    out = {}
    for m in mutants.enumerate_mutants("x.c", text):
        out.setdefault(m["line"], []).append(m)
    return out


class Enumerate(unittest.TestCase):
    def setUp(self):
        self.by_line = mutants_by_line(SRC)

    def test_only_function_bodies(self):
        # Lines 1-7 are includes, macros, a table, a comment, a struct and the
        # signature; line 10 is an assertion.  None is mutated.
        for no in (1, 2, 3, 4, 5, 6, 7, 10):
            self.assertNotIn(no, self.by_line, "line %d should not be mutated" % no)

    def test_strings_and_comments_blank(self):
        # Line 8: the '<' and '&&' are in a string and a // comment; a
        # declaration is not deleted.
        self.assertNotIn(8, self.by_line)

    def test_operators(self):
        got = sorted(m["mutated"].strip() for m in self.by_line[11])
        self.assertEqual(got, sorted([
            "if (p->a <= n && n != 4)",     # ror; '->' is left alone
            "if (p->a < n || n != 4)",      # lcr
            "if (p->a < n && n == 4)",      # ror
        ]))
        self.assertEqual([m["mutated"].strip() for m in self.by_line[15]], ["return i > n;"])

    def test_shift_and_arith(self):
        got = sorted((m["kind"], m["mutated"].strip()) for m in self.by_line[13])
        # '<<' is not a comparison; '+ 1' is dropped; the assignment deleted.
        self.assertEqual(got, [("arith", "i = (i << 2);"), ("delete", "; /* deleted */")])

    def test_delete_and_const(self):
        self.assertEqual([(m["kind"], m["mutated"].strip()) for m in self.by_line[12]],
                         [("delete", "; /* deleted */")])
        got = sorted((m["kind"], m["mutated"].strip()) for m in self.by_line[14])
        self.assertEqual(got, [("const", "update(p, false);"), ("delete", "; /* deleted */")])

    def test_ids_stable_and_distinct(self):
        a = mutants.enumerate_mutants("x.c", SRC)
        b = mutants.enumerate_mutants("x.c", SRC)
        self.assertEqual([m["id"] for m in a], [m["id"] for m in b])
        self.assertEqual(len({m["id"] for m in a}), len(a))

    def test_allocator_files_all_exist(self):
        # The default file list follows the tree: a renamed file must be
        # renamed here too, or the audit would refuse to start.
        for f in mutants.DEFAULT_FILES:
            self.assertTrue(os.path.isfile(os.path.join(ROOT, f)), f)
        n = 0
        for f in mutants.DEFAULT_FILES:
            with open(os.path.join(ROOT, f)) as fp:
                n += len(mutants.enumerate_mutants(f, fp.read()))
        self.assertGreater(n, 1000)


class BuildFailure(unittest.TestCase):
    # Real messages of gcc 12 and clang 14 (a comparison that is always
    # true, a variable used uninitialised, a syntax error).
    GCC = ("w.c:2:35: error: comparison of unsigned expression in '>= 0' is always true "
           "[-Werror=type-limits]\ncc1: all warnings being treated as errors\n")
    CLANG = ("w.c:1:27: error: variable 'x' is used uninitialized whenever 'if' condition "
             "is false [-Werror,-Wsometimes-uninitialized]\n1 error generated.\n")
    SYNTAX = "bad.c:1:8: error: expected declaration specifiers or '...' before '{' token\n"

    def test_clang_flag(self):
        self.assertEqual(mutants.werror_flags([self.CLANG]), "-Wsometimes-uninitialized")

    def test_gcc_flag(self):
        # gcc's form is [-Werror=flag]; it used to be reported as plain "-Werror".
        self.assertEqual(mutants.werror_flags([self.GCC]), "-Wtype-limits")

    def test_gcc_flag_with_level(self):
        # A warning that takes a level ends in "=" (seed 9's slab/free.c:211).
        out = ("allocator/cpu/spinlock.h:79:9: error: '__atomic_store_8' writing 8 bytes into a region of "
               "size 0 overflows the destination [-Werror=stringop-overflow=]\n"
               "cc1: all warnings being treated as errors\n")
        self.assertEqual(mutants.werror_flags([out]), "-Wstringop-overflow")

    def test_both_builds(self):
        self.assertEqual(mutants.werror_flags([self.GCC, self.CLANG]),
                         "-Wsometimes-uninitialized,-Wtype-limits")

    def test_real_error_is_invalid(self):
        self.assertIsNone(mutants.werror_flags([self.SYNTAX]))
        self.assertIsNone(mutants.werror_flags([self.GCC, self.SYNTAX]))

    def test_no_error_text(self):
        # A build that failed without a compiler error (a link, ninja itself).
        self.assertIsNone(mutants.werror_flags(["ninja: build stopped: subcommand failed.\n"]))
        self.assertIsNone(mutants.werror_flags([]))


if __name__ == "__main__":
    unittest.main()

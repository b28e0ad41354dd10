/* SPDX-License-Identifier: MIT */
/*
 * test_memmap_fail.c - memmap_create() when the OS says no.  mm_create()
 * must fail with its message, leave nothing mapped that it mapped, and
 * leave memmap.c's kept mappings usable: the next mm_create() works.
 *
 *   - mprotect() refused (ENOMEM, as a kernel out of VMAs or memory gives
 *     it): this file defines mprotect(), so memmap.c's calls - through
 *     prim_protect() - come here, and the k-th call of a create fails, for
 *     every k a create makes; "cannot map memory: <strerror>", and every
 *     address those calls named is unmapped afterwards (/proc/self/maps).
 *     Once more on a create that takes a kept mapping: that mapping is
 *     given back to the OS, not kept half-protected.  No range is
 *     unmapped twice (this file defines munmap() too).
 *   - mmap() refused: in a child whose address space is limited
 *     (RLIMIT_AS) to a little more than it uses, a 4 GiB machine cannot be
 *     reserved - its frames, or (with room for those) its memmap: "cannot
 *     reserve N pages of memory: <strerror>", the address space as it was
 *     before (a frame mapping that was reserved is given back), and a
 *     small machine is created afterwards in the same child.
 *
 * The mprotect() here passes every other call to the kernel (syscall(2)),
 * so the sanitizer runtimes and libc see the real one.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "memmap_test.h"
#include "test.h"

/* ---- mprotect() that fails on demand ---- */

#define MAX_CALLS 4096

static bool armed;               /* counting (and maybe failing) memmap.c's calls */
static int fail_at;              /* fail the fail_at-th call while armed; 0: none */
static int nr_calls;             /* calls while armed */
static uintptr_t call_addr[MAX_CALLS];

int mprotect(void *addr, size_t len, int prot)
{
	if (armed) {
		if (nr_calls < MAX_CALLS)
			call_addr[nr_calls] = (uintptr_t)addr;
		if (++nr_calls == fail_at) {
			errno = ENOMEM;
			return -1;
		}
	}
	return (int)syscall(SYS_mprotect, addr, len, prot);
}

/*
 * munmap() too, to see that no range is given back twice: a second munmap()
 * of a range some other mapping may have taken meanwhile (another thread's
 * mmap()) would take that mapping away.
 */
static int nr_unmaps;
static uintptr_t unmap_lo[MAX_CALLS], unmap_hi[MAX_CALLS];

int munmap(void *addr, size_t len)
{
	if (armed && nr_unmaps < MAX_CALLS) {
		unmap_lo[nr_unmaps] = (uintptr_t)addr;
		unmap_hi[nr_unmaps++] = (uintptr_t)addr + len;
	}
	return (int)syscall(SYS_munmap, addr, len);
}

static void arm(int k)
{
	nr_unmaps = 0;
	nr_calls = 0;
	fail_at = k;
	armed = true;
}

static void disarm(void)
{
	armed = false;
	fail_at = 0;
}

/* ---- machines ---- */

/* 16k pages over three zones (memmap_test_machine); with @holes, four holes, some mid-OS-page in the memmap. */
static void machine(struct mm_config *c, unsigned long first, unsigned long end, bool holes)
{
	memmap_test_machine(c, first, end, 10);
	if (holes) {
		c->nr_holes = 4;
		c->holes[0] = (struct mm_span){ first + 100, first + 101 };
		c->holes[1] = (struct mm_span){ first + 700, first + 1500 };
		c->holes[2] = (struct mm_span){ first + 5000, first + 5003 };
		c->holes[3] = (struct mm_span){ first + 9000, first + 9999 };
	}
}

/* Every address the armed calls named is unmapped now. */
static void check_unmapped(const char *what)
{
	int mapped = 0, first = -1;
	proc_maps_load();
	for (int i = 0; i < nr_calls && i < MAX_CALLS; i++)
		if (proc_access_at(call_addr[i]) != -1 && !mapped++)
			first = i;
	CHECK_MSG(mapped == 0, "%s: %d of the %d addresses given to mprotect() still mapped after the failed create "
		  "(the first, call %d: %#lx)", what, mapped, nr_calls, first + 1,
		  first >= 0 ? (unsigned long)call_addr[first] : 0UL);
}

/* No two munmap() calls of the armed create overlap. */
static void check_unmapped_once(const char *what)
{
	int a = -1, b = -1;
	for (int i = 0; i < nr_unmaps && a < 0; i++)
		for (int j = i + 1; j < nr_unmaps && a < 0; j++)
			if (unmap_lo[i] < unmap_hi[j] && unmap_lo[j] < unmap_hi[i])
				a = i, b = j;
	CHECK_MSG(a < 0, "%s: munmap() calls %d and %d of %d both gave back %#lx", what, a + 1, b + 1, nr_unmaps,
		  a < 0 ? 0UL : (unsigned long)(unmap_lo[a] > unmap_lo[b] ? unmap_lo[a] : unmap_lo[b]));
}

static void test_mprotect_fails(void)
{
	struct mm_config c;
	char err[256], want[256];
	snprintf(want, sizeof(want), "cannot map memory: %s", strerror(ENOMEM));

	/* How many calls a fresh create of the machine with holes makes. */
	machine(&c, 0, 16384, true);
	memmap_drop_kept();
	arm(0);
	struct mm *mm = test_create(&c);
	disarm();
	int calls = nr_calls;
	CHECK_MSG(calls >= 4, "a fresh create with holes made only %d mprotect() calls", calls);
	mm_destroy(mm);

	int seen_unmaps = 0;
	for (int k = 1; k <= calls; k++) {
		char what[64];
		snprintf(what, sizeof(what), "mprotect() call %d of %d refused", k, calls);
		memmap_drop_kept();
		strcpy(err, "(untouched)");
		arm(k);
		mm = mm_create(&c, err, sizeof(err));
		disarm();
		CHECK_MSG(mm == NULL, "%s: mm_create succeeded", what);
		if (mm) {
			mm_destroy(mm);
			continue;
		}
		CHECK_MSG(nr_calls == k, "%s: %d calls made, not stopped at the failure", what, nr_calls);
		CHECK_MSG(strcmp(err, want) == 0, "%s: error \"%s\", want \"%s\"", what, err, want);
		check_unmapped(what);
		check_unmapped_once(what);
		seen_unmaps += nr_unmaps;
	}
	CHECK_MSG(seen_unmaps >= calls, "the failed creates made %d munmap() calls (this file's saw none?)", seen_unmaps);

	/* No error buffer, whatever the length says (mm.h): the failure is still a clean NULL. */
	for (size_t len = 0; len <= sizeof(err); len += sizeof(err)) {
		memmap_drop_kept();
		arm(1);
		mm = mm_create(&c, NULL, len);
		disarm();
		CHECK_MSG(mm == NULL, "mprotect() refused, no error buffer, length %zu: created", len);
	}

	/* Kept mappings: A is kept at its destroy; B takes it and fails. */
	struct mm_config a;
	machine(&a, 0, 16384, false);
	memmap_drop_kept();
	mm = test_create(&a);
	char *region_a = mm->arena_region;
	mm_destroy(mm);
	arm(1);
	mm = mm_create(&c, err, sizeof(err));
	disarm();
	CHECK_MSG(mm == NULL, "create in a kept mapping with mprotect() refused succeeded");
	if (mm)
		mm_destroy(mm);
	CHECK_MSG(nr_calls == 1 && call_addr[0] >= (uintptr_t)region_a &&
			  call_addr[0] < (uintptr_t)region_a + (16384UL << MM_PAGE_SHIFT) + (4UL << 20),
		  "the failed create did not work in A's kept mapping %p (%d calls, the first at %#lx)",
		  (void *)region_a, nr_calls, nr_calls ? (unsigned long)call_addr[0] : 0UL);
	proc_maps_load();
	CHECK_MSG(proc_access_at((uintptr_t)region_a) == -1,
		  "A's kept mapping still mapped after a create in it failed (kept half-protected or leaked)");

	/* And after all that, both machines are created and every page works. */
	mm = test_create(&c);
	CHECK_MM(mm, 3);
	memmap_test_use_all(mm, "machine with holes after the failures");
	mm_destroy(mm);
	mm = test_create(&a);
	memmap_test_use_all(mm, "machine A after the failures");
	mm_destroy(mm);
	memmap_drop_kept();
}

/* ---- mmap() refused: a limited address space ---- */

static unsigned long vm_size_bytes(void)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f || fscanf(f, "%lu", &pages) != 1)
		pages = 0;
	if (f)
		fclose(f);
	return pages * (unsigned long)sysconf(_SC_PAGESIZE);
}

/*
 * A create of @big that the address space limit @limit (bytes over what the
 * child maps now) refuses: its message on stderr; it must leave the child's
 * address space as it found it (within @slack, the allocator's own
 * mallocs) and a small machine is created after it.  0, or the exit
 * status for reserve_child().
 */
static int refused_create(const struct mm_config *big, unsigned long limit, unsigned long slack)
{
	struct mm_config small;
	char err[256];
	unsigned long vm = vm_size_bytes();
	struct rlimit rl;

	if (!vm || getrlimit(RLIMIT_AS, &rl))
		return 3;
	rl.rlim_cur = vm + limit;               /* the soft limit only: raised again below */
	if (setrlimit(RLIMIT_AS, &rl))
		return 4;
	struct mm *mm = mm_create(big, err, sizeof(err));
	if (mm)
		return 5;
	fprintf(stderr, "%s\n", err);
	if (vm_size_bytes() > vm + slack)
		return 6;
	memmap_test_machine(&small, 0, 4096, 10);
	mm = mm_create(&small, err, sizeof(err));
	if (!mm) {
		fprintf(stderr, "small: %s\n", err);
		return 7;
	}
	bool ok = mm_check(mm, 3, NULL);
	mm_destroy(mm);
	memmap_drop_kept();
	rl.rlim_cur = RLIM_INFINITY;
	if (!ok || setrlimit(RLIMIT_AS, &rl))
		return 8;
	return 0;
}

/*
 * In a child: a 4 GiB machine (1M pages, max_order 10: its frame mapping
 * 4 GiB + 4 MiB, its memmap about 64 MiB) where the frames cannot be
 * reserved (512 MiB allowed), then where they can but the memmap cannot
 * (4 GiB + 20 MiB allowed: the frame mapping must be given back).  Exit 0
 * when both went as they should.
 */
static void reserve_child(void)
{
	struct mm_config big;
	int rc;

	memmap_drop_kept();
	memmap_test_machine(&big, 0, 1UL << 20, 10);
	if ((rc = refused_create(&big, 512UL << 20, 16UL << 20)))
		_exit(rc);
	if ((rc = refused_create(&big, (4UL << 30) + (20UL << 20), 16UL << 20)))
		_exit(10 + rc);
	_exit(0);
}

static void test_reserve_fails(void)
{
	char out[1024], want[256];
	int status = test_run_child_stderr(reserve_child, out, sizeof(out));
	snprintf(want, sizeof(want), "cannot reserve %lu pages of memory: %s\n", 1UL << 20, strerror(ENOMEM));
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		  "the child with a limited address space: status %#x (exit 5: the 4 GiB machine was created, "
		  "6: the failed create left its address space larger, 7: the small one then failed, 8: it "
		  "failed the checker; 1x: the same where only the memmap could not be reserved), stderr:\n%s",
		  status, out);
	size_t n = strlen(want);
	CHECK_MSG(strncmp(out, want, n) == 0, "the refused frame reservation said \"%s\", want \"%s\"", out, want);
	CHECK_MSG(strlen(out) >= n && strncmp(out + n, want, n) == 0,
		  "the refused memmap reservation said \"%s\", want \"%s\"", strlen(out) >= n ? out + n : "", want);
}

int main(void)
{
	test_mprotect_fails();
	test_reserve_fails();
	TEST_DONE();
}

/* SPDX-License-Identifier: MIT */
/*
 * prim.c - mmap/mprotect wrappers; see prim.h for the contract.  Which of
 * them run, and how often, depends on the mappings memmap.c kept from
 * earlier instances, so none is in fuzzing coverage (__mm_plumbing).
 */
#include "os/prim.h"
#include "debug.h"

#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

__mm_plumbing size_t prim_os_page_size(void)
{
	long v = sysconf(_SC_PAGESIZE);
	return v > 0 ? (size_t)v : 4096;
}

__mm_plumbing void *prim_reserve(size_t len)
{
	void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

__mm_plumbing int prim_protect(void *addr, size_t len, int rw)
{
	if (len == 0)
		return 0;
	return mprotect(addr, len, rw ? PROT_READ | PROT_WRITE : PROT_NONE);
}

__mm_plumbing int prim_populate(void *addr, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	if (len && madvise(addr, len, MADV_POPULATE_WRITE) == 0)
		return 0;
#endif
	(void)addr;
	(void)len;
	return -1;
}

__mm_plumbing int prim_discard(void *addr, size_t len)
{
	if (len == 0)
		return 0;
	return madvise(addr, len, MADV_DONTNEED);
}

__mm_plumbing int prim_unmap(void *addr, size_t len)
{
	return munmap(addr, len);
}

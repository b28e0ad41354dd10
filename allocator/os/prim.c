/* SPDX-License-Identifier: MIT */
/* prim.c - mmap/mprotect wrappers; see prim.h for the contract. */
#include "os/prim.h"

#include <sys/mman.h>
#include <unistd.h>

size_t prim_os_page_size(void)
{
	long v = sysconf(_SC_PAGESIZE);
	return v > 0 ? (size_t)v : 4096;
}

void *prim_reserve(size_t len)
{
	void *p = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

int prim_protect(void *addr, size_t len, int rw)
{
	if (len == 0)
		return 0;
	return mprotect(addr, len, rw ? PROT_READ | PROT_WRITE : PROT_NONE);
}

int prim_discard(void *addr, size_t len)
{
	if (len == 0)
		return 0;
	return madvise(addr, len, MADV_DONTNEED);
}

int prim_unmap(void *addr, size_t len)
{
	return munmap(addr, len);
}

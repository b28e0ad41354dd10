/* SPDX-License-Identifier: MIT */
/* prim.c - mmap/mprotect wrappers; see prim.h for the contract. */
#include "os/prim.h"

#include <errno.h>
#include <stdint.h>
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

void *prim_reserve_aligned(size_t len, size_t align, size_t phase)
{
	size_t osp = prim_os_page_size();

	if (!align || (align & (align - 1)) || phase % osp) {
		errno = EINVAL;
		return NULL;
	}
	if (align <= osp)
		return prim_reserve(len);
	len = (len + osp - 1) & ~(osp - 1);     /* what mmap maps, and munmap takes back */
	if (len > SIZE_MAX - align) {
		errno = ENOMEM;
		return NULL;
	}
	/* mmap gives an OS-page boundary: at most align - osp bytes before the phase. */
	size_t total = len + align - osp;
	char *raw = prim_reserve(total);
	if (!raw)
		return NULL;
	size_t head = (size_t)(phase - (uintptr_t)raw) & (align - 1);
	size_t tail = total - head - len;
	if (head)
		munmap(raw, head);
	if (tail)
		munmap(raw + head + len, tail);
	return raw + head;
}

int prim_protect(void *addr, size_t len, int rw)
{
	if (len == 0)
		return 0;
	return mprotect(addr, len, rw ? PROT_READ | PROT_WRITE : PROT_NONE);
}

int prim_populate(void *addr, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	if (len && madvise(addr, len, MADV_POPULATE_WRITE) == 0)
		return 0;
#endif
	(void)addr;
	(void)len;
	return -1;
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

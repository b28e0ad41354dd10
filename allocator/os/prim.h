/* SPDX-License-Identifier: MIT */
/*
 * prim.h - the one OS layer (mimalloc's prim.h, musl's glue.h).  Only
 * os/prim.c calls mmap, mprotect, munmap or reads the OS page size.
 *
 * Error convention: functions that can fail return NULL or -1 and leave
 * errno as the system call set it; none of them aborts.  Preconditions:
 * addresses and lengths given to prim_protect / prim_unmap are multiples of
 * prim_os_page_size() and lie inside a region prim_reserve or prim_reserve_aligned
 * returned.
 */
#ifndef MM_PRIM_H
#define MM_PRIM_H

#include <stddef.h>

size_t prim_os_page_size(void);
/* Reserve @len bytes of address space, inaccessible (PROT_NONE), not committed. */
void *prim_reserve(size_t len);
/*
 * prim_reserve() at an address p with p % @align == @phase % @align: the
 * whole of [p, p + @len) is mapped and nothing else (the over-reserved
 * head and tail go back), so prim_unmap(p, @len) undoes it exactly.
 * @align a power of two; @phase a multiple of prim_os_page_size(); NULL
 * with errno EINVAL otherwise.
 */
void *prim_reserve_aligned(size_t len, size_t align, size_t phase);
/* Make [addr, addr+len) readable and writable (1) or inaccessible (0). */
int prim_protect(void *addr, size_t len, int rw);
/*
 * Fault the readable and writable [addr, addr+len) in now, in one call
 * (MADV_POPULATE_WRITE, Linux 5.14); -1 where the OS cannot (the pages
 * then fault in on first touch, as without it).
 */
int prim_populate(void *addr, size_t len);
/* Give pages back to the OS; they read as zero afterwards. */
int prim_discard(void *addr, size_t len);
int prim_unmap(void *addr, size_t len);

#endif /* MM_PRIM_H */

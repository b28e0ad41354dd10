/* SPDX-License-Identifier: MIT */
/*
 * prim.h - the one OS layer (mimalloc's prim.h, musl's glue.h).  Only
 * os/prim.c calls mmap, mprotect, munmap or reads the OS page size.
 *
 * Error convention: functions that can fail return NULL or -1 and leave
 * errno as the system call set it; none of them aborts.  Preconditions:
 * addresses and lengths given to prim_protect / prim_unmap are multiples of
 * prim_os_page_size() and lie inside a region prim_reserve returned.
 */
#ifndef MM_PRIM_H
#define MM_PRIM_H

#include <stddef.h>

size_t prim_os_page_size(void);
/* Reserve @len bytes of address space, inaccessible (PROT_NONE), not committed. */
void *prim_reserve(size_t len);
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

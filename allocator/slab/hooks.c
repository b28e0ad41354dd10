/* SPDX-License-Identifier: MIT */
/*
 * hooks.c - what the rest of the allocator calls into SLUB for.  (First
 * version: no caches yet; SLUB replaces these.)
 */
#include "internal.h"

int slab_setup(struct mm *mm, char *err, size_t errlen) { (void)mm; (void)err; (void)errlen; return 0; }
void slab_teardown(struct mm *mm) { (void)mm; }
void slab_reset(struct mm *mm) { (void)mm; }
bool slab_check(struct mm *mm, int level, struct mm_violation *v) { (void)mm; (void)level; (void)v; return true; }
void slab_cpu_dead(struct mm *mm, int cpu) { (void)mm; (void)cpu; }

/* SPDX-License-Identifier: MIT */
/*
 * configs.h - the named machine configs the fuzz targets choose from with
 * their first bytes: small ones (fast resets) that between them reach every
 * shape of memory the allocator must handle.
 */
#ifndef MF_CONFIGS_H
#define MF_CONFIGS_H

#include "mm/mm.h"

enum mf_config_kind {
	MF_CFG_MICRO,       /* 320 pages, max_order 5: the cheapest to reset and check */
	MF_CFG_TINY,        /* mm_config_tiny(): ~1.5k pages, max_order 7 */
	MF_CFG_DEFAULT,     /* mm_config_default(): ~24k pages, max_order 10 */
	MF_CFG_HOLES,       /* many holes: single pfns, at zone and pageblock edges, whole pageblocks */
	MF_CFG_UNALIGNED,   /* every zone boundary at an odd pfn */
	MF_CFG_TINYZONES,   /* zones of a few pages, an empty zone */
	MF_CFG_HIGHPFN,     /* first pfn near 2^40 */
	MF_CFG_ORDER0,      /* max_order 0: single pages only */
	MF_CFG_BIGORDER,    /* max_order 12 (the limit), pageblock_order 12 */
	MF_NR_CONFIGS
};

extern const char *const mf_config_names[MF_NR_CONFIGS];

/* Fill @c with config @kind: quiet, MM_BAD_REPORT, nr_cpus @cpus (1..). */
void mf_config_named(struct mm_config *c, enum mf_config_kind kind, unsigned int cpus);

#endif /* MF_CONFIGS_H */

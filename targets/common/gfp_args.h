/* SPDX-License-Identifier: MIT */
/*
 * gfp_args.h - the gfp_t argument shared by the page-allocator targets:
 * every flag of gfp.h as one decodable bit, and the kernel's composite
 * masks as names for op text.  Also gfp_zone() as the kernel documents it,
 * written here independently of the allocator's.
 */
#ifndef MF_GFP_ARGS_H
#define MF_GFP_ARGS_H

#include "harness.h"
#include "mm/gfp.h"

static const struct mf_flag mf_gfp_flags[] = {
	{ "__GFP_DMA", __GFP_DMA },
	{ "__GFP_HIGHMEM", __GFP_HIGHMEM },
	{ "__GFP_DMA32", __GFP_DMA32 },
	{ "__GFP_MOVABLE", __GFP_MOVABLE },
	{ "__GFP_RECLAIMABLE", __GFP_RECLAIMABLE },
	{ "__GFP_HIGH", __GFP_HIGH },
	{ "__GFP_MEMALLOC", __GFP_MEMALLOC },
	{ "__GFP_NOMEMALLOC", __GFP_NOMEMALLOC },
	{ "__GFP_IO", __GFP_IO },
	{ "__GFP_FS", __GFP_FS },
	{ "__GFP_DIRECT_RECLAIM", __GFP_DIRECT_RECLAIM },
	{ "__GFP_KSWAPD_RECLAIM", __GFP_KSWAPD_RECLAIM },
	{ "__GFP_NORETRY", __GFP_NORETRY },
	{ "__GFP_NOWARN", __GFP_NOWARN },
	{ "__GFP_COMP", __GFP_COMP },
	{ "__GFP_ZERO", __GFP_ZERO },
};

/* Longest first: the printer takes the first alias whose bits are all set. */
static const struct mf_flag mf_gfp_aliases[] = {
	{ "GFP_HIGHUSER_MOVABLE", GFP_HIGHUSER_MOVABLE },
	{ "GFP_KERNEL", GFP_KERNEL },
	{ "GFP_NOFS", GFP_NOFS },
	{ "GFP_ATOMIC", GFP_ATOMIC },
	{ "GFP_NOIO", GFP_NOIO },
	{ "GFP_NOWAIT", GFP_NOWAIT },
	{ "GFP_USER", GFP_USER },
	{ "GFP_HIGHUSER", GFP_HIGHUSER },
	{ "GFP_DMA", GFP_DMA },
	{ "GFP_DMA32", GFP_DMA32 },
	{ NULL, 0 },
};

/*
 * Every decoded gfp is one the kernel accepts: of several zone modifiers
 * (GFP_ZONE_BAD) the lowest zone's stays, of both mobility hints
 * __GFP_MOVABLE - the zone and free lists the allocator served such a gfp
 * from before it refused them, so an older input still makes the same
 * allocations.  Op text may name any bits (the encoder keeps them; the
 * decoder fixes them, as it fixes the fuzzer's bytes).  The bad_gfp ops
 * make the invalid combinations on purpose.
 */
static inline unsigned long mf_gfp_fix(unsigned long v)
{
	if (v & __GFP_DMA)
		v &= ~(unsigned long)(__GFP_DMA32 | __GFP_HIGHMEM);
	else if (v & __GFP_DMA32)
		v &= ~(unsigned long)__GFP_HIGHMEM;
	if ((v & GFP_MOVABLE_MASK) == GFP_MOVABLE_MASK)
		v &= ~(unsigned long)__GFP_RECLAIMABLE;
	return v;
}

#define MF_A_GFP(n) MF_A_FLAGS_FIX(n, mf_gfp_flags, mf_gfp_aliases, mf_gfp_fix)

/* The highest zone a valid gfp (mf_gfp_fix()) may use (GFP_ZONE_TABLE on 64-bit). */
static inline int mf_gfp_zone(gfp_t gfp)
{
	if (gfp & __GFP_DMA)
		return ZONE_DMA;
	if (gfp & __GFP_DMA32)
		return ZONE_DMA32;
	if ((gfp & __GFP_HIGHMEM) && (gfp & __GFP_MOVABLE))
		return ZONE_MOVABLE;
	return ZONE_NORMAL;
}

#endif /* MF_GFP_ARGS_H */

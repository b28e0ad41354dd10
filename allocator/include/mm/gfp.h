/* SPDX-License-Identifier: MIT */
/*
 * gfp.h - allocation flags, as include/linux/gfp_types.h (Linux 6.6).
 *
 * The bit values are the project's own; the meaning of each flag and the
 * composite masks follow the kernel. Only the flags the model acts on exist.
 */
#ifndef MM_GFP_H
#define MM_GFP_H

typedef unsigned int gfp_t;

/* Zone modifiers (gfp_zone) */
#define __GFP_DMA            0x01u
#define __GFP_HIGHMEM        0x02u
#define __GFP_DMA32          0x04u
#define __GFP_MOVABLE        0x08u   /* also a mobility (migratetype) hint */
#define GFP_ZONEMASK         (__GFP_DMA | __GFP_HIGHMEM | __GFP_DMA32 | __GFP_MOVABLE)
/*
 * More than one of these is GFP_ZONE_BAD (gfp_zone() VM_BUG_ONs); with
 * __GFP_MOVABLE each still names one zone (DMA, DMA32, Movable).
 */
#define GFP_ZONE_MODIFIERS   (__GFP_DMA | __GFP_HIGHMEM | __GFP_DMA32)

/* Mobility */
#define __GFP_RECLAIMABLE    0x10u
#define GFP_MOVABLE_MASK     (__GFP_RECLAIMABLE | __GFP_MOVABLE)   /* both at once: gfp_migratetype() warns */

/* Watermark modifiers */
#define __GFP_HIGH           0x20u   /* may use part of the min reserve (ALLOC_MIN_RESERVE) */
#define __GFP_MEMALLOC       0x40u   /* ignore watermarks (ALLOC_NO_WATERMARKS) */
#define __GFP_NOMEMALLOC     0x80u   /* never use emergency reserves */

/* Reclaim modifiers */
#define __GFP_IO             0x100u
#define __GFP_FS             0x200u
#define __GFP_DIRECT_RECLAIM 0x400u  /* caller may enter direct reclaim (shrinkers) */
#define __GFP_KSWAPD_RECLAIM 0x800u
#define __GFP_RECLAIM        (__GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM)
#define __GFP_NORETRY        0x1000u /* one reclaim attempt, then fail */
#define __GFP_NOWARN         0x2000u

/* Action modifiers */
#define __GFP_COMP           0x4000u /* compound page (head + tails) */
#define __GFP_ZERO           0x8000u /* zero the returned memory */

#define MM_GFP_VALID_MASK    0xffffu

/* What slab pages may not be asked with: kmalloc_fix_flags() warns and clears it. */
#define GFP_SLAB_BUG_MASK    (__GFP_DMA32 | __GFP_HIGHMEM | ~MM_GFP_VALID_MASK)

/* Composite masks, as the kernel defines them */
#define GFP_ATOMIC           (__GFP_HIGH | __GFP_KSWAPD_RECLAIM)
#define GFP_KERNEL           (__GFP_RECLAIM | __GFP_IO | __GFP_FS)
#define GFP_NOWAIT           (__GFP_KSWAPD_RECLAIM)
#define GFP_NOIO             (__GFP_RECLAIM)
#define GFP_NOFS             (__GFP_RECLAIM | __GFP_IO)
#define GFP_USER             (__GFP_RECLAIM | __GFP_IO | __GFP_FS)
#define GFP_DMA              __GFP_DMA
#define GFP_DMA32            __GFP_DMA32
#define GFP_HIGHUSER         (GFP_USER | __GFP_HIGHMEM)
#define GFP_HIGHUSER_MOVABLE (GFP_HIGHUSER | __GFP_MOVABLE)

#endif /* MM_GFP_H */

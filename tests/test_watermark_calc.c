/* SPDX-License-Identifier: MIT */
/*
 * test_watermark_calc.c - min/low/high and lowmem_reserve against the
 * kernel's formulas (Linux 6.6 calculate_min_free_kbytes,
 * __setup_per_zone_wmarks, setup_per_zone_lowmem_reserve), hand-computed
 * for the default and the tiny config, and recomputed after the runtime
 * tunables change (min_free_kbytes, watermark_scale_factor,
 * lowmem_reserve_ratio).
 *
 * The hand computation for mm_config_default() (4 KiB pages):
 *   managed: DMA [1,4096) = 4095; DMA32 [4096,12288) minus hole
 *   [6000,6100) = 8092; Normal [12288,20000) minus [14000,14017) = 7695;
 *   Movable [20000,24576) = 4576.
 *   lowmem (all but Movable) = 19882 pages = 79528 kB;
 *   min_free_kbytes = int_sqrt(79528 * 16 = 1272448) = 1128 (1128^2 =
 *   1272384, 1129^2 = 1274641), inside [128, 262144]; pages_min = 282.
 *   min: DMA 282*4095/19882 = 58, DMA32 282*8092/19882 = 114,
 *        Normal 282*7695/19882 = 109, Movable clamp(4576/1024, 32, 128) = 32
 *        (its proportional share, 282*4576/19882 = 64, still sets the gap).
 *   gap = max(share/4, managed*10/10000): DMA max(14, 4) = 14,
 *        DMA32 max(28, 8) = 28, Normal max(27, 7) = 27, Movable max(16, 4) = 16.
 *   low = min + gap, high = low + gap:
 *        DMA 58/72/86, DMA32 114/142/170, Normal 109/136/163, Movable 32/48/64.
 *   lowmem_reserve (ratio 256 256 32 0), zone i against zone j > i:
 *        DMA:   8092/256 = 31, 15787/256 = 61, 20363/256 = 79
 *        DMA32: 7695/256 = 30, 12271/256 = 47
 *        Normal: 4576/32 = 143
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "test.h"

struct wm {
	unsigned long min, low, high;
	long reserve[MAX_NR_ZONES];
};

static void get_wm(struct mm *mm, struct wm out[MAX_NR_ZONES])
{
	memset(out, 0, sizeof(struct wm) * MAX_NR_ZONES);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = mm_zone(mm, z);
		if (!zone)
			continue;
		out[z].min = zone_wmark_pages(zone, WMARK_MIN);
		out[z].low = zone_wmark_pages(zone, WMARK_LOW);
		out[z].high = zone_wmark_pages(zone, WMARK_HIGH);
		for (int j = 0; j < MAX_NR_ZONES; j++)
			out[z].reserve[j] = zone_lowmem_reserve(zone, j);
	}
}

static unsigned long isqrt(unsigned long x)
{
	unsigned long r = 0;
	while ((r + 1) * (r + 1) <= x)
		r++;
	return r;
}

/*
 * The same formulas, written again from the kernel's text (not from
 * watermark.c), over the managed pages the config gives.
 */
static void formula(const unsigned long managed[MAX_NR_ZONES], unsigned long min_free_kbytes, unsigned int wsf,
		    const unsigned int ratio[MAX_NR_ZONES], struct wm out[MAX_NR_ZONES], unsigned long *mfk_out)
{
	unsigned long lowmem = managed[ZONE_DMA] + managed[ZONE_DMA32] + managed[ZONE_NORMAL];
	if (!min_free_kbytes) {
		min_free_kbytes = isqrt(lowmem * 4 * 16);
		if (min_free_kbytes < 128)
			min_free_kbytes = 128;
		if (min_free_kbytes > 262144)
			min_free_kbytes = 262144;
	}
	*mfk_out = min_free_kbytes;
	unsigned long pages_min = min_free_kbytes / 4;
	memset(out, 0, sizeof(struct wm) * MAX_NR_ZONES);
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		if (!managed[z])
			continue;
		unsigned long share = lowmem ? pages_min * managed[z] / lowmem : 0;
		if (z == ZONE_MOVABLE) {
			unsigned long m = managed[z] / 1024;
			out[z].min = m < 32 ? 32 : m > 128 ? 128 : m;
		} else {
			out[z].min = share;
		}
		unsigned long gap = share / 4, scaled = managed[z] * wsf / 10000;
		if (scaled > gap)
			gap = scaled;
		out[z].low = out[z].min + gap;
		out[z].high = out[z].low + gap;
		unsigned long above = 0;
		for (int j = z + 1; j < MAX_NR_ZONES; j++) {
			above += managed[j];
			out[z].reserve[j] = ratio[z] ? (long)(above / ratio[z]) : 0;
		}
	}
}

static void managed_of(struct mm *mm, unsigned long managed[MAX_NR_ZONES])
{
	for (int z = 0; z < MAX_NR_ZONES; z++)
		managed[z] = mm_zone(mm, z) ? zone_managed_pages(mm_zone(mm, z)) : 0;
}

static void check_wm(const char *what, const struct wm got[MAX_NR_ZONES], const struct wm want[MAX_NR_ZONES])
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		CHECK_MSG(got[z].min == want[z].min && got[z].low == want[z].low && got[z].high == want[z].high,
			  "%s: zone %d min/low/high %lu/%lu/%lu, expected %lu/%lu/%lu", what, z, got[z].min, got[z].low,
			  got[z].high, want[z].min, want[z].low, want[z].high);
		for (int j = 0; j < MAX_NR_ZONES; j++)
			CHECK_MSG(got[z].reserve[j] == want[z].reserve[j], "%s: zone %d lowmem_reserve[%d] %ld, expected %ld",
				  what, z, j, got[z].reserve[j], want[z].reserve[j]);
	}
}

static const struct wm default_wm[MAX_NR_ZONES] = {
	[ZONE_DMA] = { 58, 72, 86, { 0, 31, 61, 79 } },
	[ZONE_DMA32] = { 114, 142, 170, { 0, 0, 30, 47 } },
	[ZONE_NORMAL] = { 109, 136, 163, { 0, 0, 0, 143 } },
	[ZONE_MOVABLE] = { 32, 48, 64, { 0, 0, 0, 0 } },
};

static void test_default_by_hand(void)
{
	struct mm_config c;
	struct wm got[MAX_NR_ZONES];
	mm_config_default(&c);
	struct mm *mm = test_create(&c);
	unsigned long managed[MAX_NR_ZONES];
	managed_of(mm, managed);
	CHECK(managed[ZONE_DMA] == 4095 && managed[ZONE_DMA32] == 8092 && managed[ZONE_NORMAL] == 7695 &&
	      managed[ZONE_MOVABLE] == 4576);
	get_wm(mm, got);
	check_wm("default config, by hand", got, default_wm);

	/* The formula agrees with the hand computation (so it can be trusted below). */
	struct wm f[MAX_NR_ZONES];
	unsigned long mfk;
	formula(managed, 0, 10, c.lowmem_reserve_ratio, f, &mfk);
	CHECK(mfk == 1128);
	check_wm("default config, formula", f, default_wm);

	/*
	 * min_free_kbytes = 4096: pages_min 1024.  By hand for DMA:
	 * 1024*4095/19882 = 210, gap max(52, 4) = 52 -> 210/262/314; Movable
	 * keeps min 32, its share 1024*4576/19882 = 235 gives gap 58 -> 32/90/148.
	 */
	CHECK(mm_set_min_free_kbytes(mm, 4096) == 0);
	get_wm(mm, got);
	CHECK(got[ZONE_DMA].min == 210 && got[ZONE_DMA].low == 262 && got[ZONE_DMA].high == 314);
	CHECK(got[ZONE_MOVABLE].min == 32 && got[ZONE_MOVABLE].low == 90 && got[ZONE_MOVABLE].high == 148);
	formula(managed, 4096, 10, c.lowmem_reserve_ratio, f, &mfk);
	check_wm("min_free_kbytes 4096", got, f);
	/* Too much: refused, nothing changes. */
	CHECK(mm_set_min_free_kbytes(mm, 24458UL * 4 + 4) != 0);
	struct wm again[MAX_NR_ZONES];
	get_wm(mm, again);
	check_wm("refused min_free_kbytes", again, f);

	/*
	 * watermark_scale_factor 1000 (10%), min_free_kbytes back to 1128: the
	 * gap becomes managed/10 wherever that beats share/4.  By hand, DMA:
	 * max(14, 4095*1000/10000 = 409) = 409 -> 58/467/876.
	 */
	CHECK(mm_set_min_free_kbytes(mm, 1128) == 0);
	CHECK(mm_set_watermark_scale_factor(mm, 1000) == 0);
	get_wm(mm, got);
	CHECK(got[ZONE_DMA].min == 58 && got[ZONE_DMA].low == 467 && got[ZONE_DMA].high == 876);
	formula(managed, 1128, 1000, c.lowmem_reserve_ratio, f, &mfk);
	check_wm("watermark_scale_factor 1000", got, f);
	CHECK(mm_set_watermark_scale_factor(mm, 0) != 0);      /* the kernel's range is 1..3000 */
	CHECK(mm_set_watermark_scale_factor(mm, 3001) != 0);
	get_wm(mm, again);
	check_wm("refused watermark_scale_factor", again, f);
	CHECK(mm_set_watermark_scale_factor(mm, 10) == 0);
	get_wm(mm, got);
	check_wm("watermark_scale_factor back to 10", got, default_wm);

	/*
	 * lowmem_reserve_ratio 32 64 8 0.  By hand: DMA 8092/32 = 252,
	 * 15787/32 = 493, 20363/32 = 636; DMA32 7695/64 = 120, 12271/64 = 191;
	 * Normal 4576/8 = 572.
	 */
	const unsigned int r1[MAX_NR_ZONES] = { 32, 64, 8, 0 };
	CHECK(mm_set_lowmem_reserve_ratio(mm, r1) == 0);
	get_wm(mm, got);
	CHECK(got[ZONE_DMA].reserve[1] == 252 && got[ZONE_DMA].reserve[2] == 493 && got[ZONE_DMA].reserve[3] == 636);
	CHECK(got[ZONE_DMA32].reserve[2] == 120 && got[ZONE_DMA32].reserve[3] == 191);
	CHECK(got[ZONE_NORMAL].reserve[3] == 572);
	formula(managed, 1128, 10, r1, f, &mfk);
	check_wm("lowmem_reserve_ratio 32 64 8 0", got, f);
	/* A ratio of 0 switches a zone's protection off. */
	const unsigned int r2[MAX_NR_ZONES] = { 0, 256, 0, 0 };
	CHECK(mm_set_lowmem_reserve_ratio(mm, r2) == 0);
	get_wm(mm, got);
	formula(managed, 1128, 10, r2, f, &mfk);
	check_wm("lowmem_reserve_ratio 0 256 0 0", got, f);
	CHECK(got[ZONE_DMA].reserve[3] == 0 && got[ZONE_NORMAL].reserve[3] == 0 && got[ZONE_DMA32].reserve[3] == 47);
	/* NULL: the kernel's defaults. */
	CHECK(mm_set_lowmem_reserve_ratio(mm, NULL) == 0);
	get_wm(mm, got);
	check_wm("lowmem_reserve_ratio defaults", got, default_wm);

	/* The zoneinfo dump shows what the accessors show. */
	char *buf = test_dump(mm, mm_dump_zoneinfo);
	CHECK(strstr(buf, "        min      58\n        low      72\n        high     86\n") != NULL);
	CHECK(strstr(buf, "protection: (0, 31, 61, 79)") != NULL);
	CHECK(strstr(buf, "protection: (0, 0, 0, 143)") != NULL);
	free(buf);

	/* mm_reset goes back to the state mm_create() left - tunables included. */
	CHECK(mm_set_min_free_kbytes(mm, 4096) == 0);
	CHECK(mm_set_watermark_scale_factor(mm, 500) == 0);
	CHECK(mm_set_lowmem_reserve_ratio(mm, r1) == 0);
	mm_reset(mm);
	get_wm(mm, got);
	bool same = true;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		same &= got[z].min == default_wm[z].min && got[z].low == default_wm[z].low &&
			got[z].high == default_wm[z].high &&
			memcmp(got[z].reserve, default_wm[z].reserve, sizeof(got[z].reserve)) == 0;
	CHECK_MSG(same, "mm_reset keeps runtime tunables: DMA min/low/high %lu/%lu/%lu reserve[3] %ld after reset, "
		  "58/72/86 and 79 at creation (mm_set_* write mm->cfg, which mm_reset reuses)",
		  got[ZONE_DMA].min, got[ZONE_DMA].low, got[ZONE_DMA].high, got[ZONE_DMA].reserve[3]);
	CHECK_MM(mm, 3);
	mm_destroy(mm);
}

/*
 * mm_config_tiny(): lowmem 297 + 400 + 513 = 1210 pages = 4840 kB,
 * min_free_kbytes = int_sqrt(4840 * 16 = 77440) = 278 (inside the clamp),
 * pages_min = 278 / 4 = 69:
 * DMA 69*297/1210 = 16, DMA32 69*400/1210 = 22, Normal 69*513/1210 = 29;
 * gaps max(share/4, 0): 4, 5, 7; Movable min 32, share 69*250/1210 = 14,
 * gap 3.  -> DMA 16/20/24, DMA32 22/27/32, Normal 29/36/43, Movable 32/35/38.
 * lowmem_reserve: DMA 400/256 = 1, 913/256 = 3, 1163/256 = 4; DMA32
 * 513/256 = 2, 763/256 = 2; Normal 250/32 = 7.
 */
static void test_tiny_by_hand(void)
{
	static const struct wm tiny_wm[MAX_NR_ZONES] = {
		[ZONE_DMA] = { 16, 20, 24, { 0, 1, 3, 4 } },
		[ZONE_DMA32] = { 22, 27, 32, { 0, 0, 2, 2 } },
		[ZONE_NORMAL] = { 29, 36, 43, { 0, 0, 0, 7 } },
		[ZONE_MOVABLE] = { 32, 35, 38, { 0, 0, 0, 0 } },
	};
	struct mm_config c;
	struct wm got[MAX_NR_ZONES], f[MAX_NR_ZONES];
	unsigned long managed[MAX_NR_ZONES], mfk;
	mm_config_tiny(&c);
	struct mm *mm = test_create(&c);
	managed_of(mm, managed);
	CHECK(managed[0] == 297 && managed[1] == 400 && managed[2] == 513 && managed[3] == 250);
	get_wm(mm, got);
	check_wm("tiny config, by hand", got, tiny_wm);
	formula(managed, 0, 10, c.lowmem_reserve_ratio, f, &mfk);
	CHECK(mfk == 278);
	check_wm("tiny config, formula", f, tiny_wm);
	mm_destroy(mm);

	/* Smaller still: the root falls under 128 kB and the clamp lifts it to 128. */
	mm_config_tiny(&c);
	memset(c.zones, 0, sizeof(c.zones));
	c.nr_holes = 0;
	c.zones[ZONE_NORMAL] = (struct mm_span){ 0, 200 };   /* 800 kB: int_sqrt(12800) = 113 */
	mm = test_create(&c);
	managed_of(mm, managed);
	formula(managed, 0, 10, c.lowmem_reserve_ratio, f, &mfk);
	CHECK(mfk == 128);
	CHECK(f[ZONE_NORMAL].min == 32);
	get_wm(mm, got);
	check_wm("200-page machine", got, f);
	mm_destroy(mm);

	/* Explicit min_free_kbytes and scale factor in the config. */
	mm_config_default(&c);
	c.min_free_kbytes = 2000;
	c.watermark_scale_factor = 250;
	mm = test_create(&c);
	managed_of(mm, managed);
	formula(managed, 2000, 250, c.lowmem_reserve_ratio, f, &mfk);
	get_wm(mm, got);
	check_wm("min_free_kbytes 2000, watermark_scale_factor 250", got, f);
	mm_destroy(mm);
}

int main(void)
{
	test_default_by_hand();
	test_tiny_by_hand();
	TEST_DONE();
}

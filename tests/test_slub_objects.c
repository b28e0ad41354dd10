/* SPDX-License-Identifier: MIT */
/*
 * test_slub_objects.c - a slab's object count is exactly what fits in it.
 * allocate_slab() always sets objects = slab size / object size, so a slab
 * claiming fewer is as corrupt as one claiming more: 6.6's on_freelist()
 * reports "Wrong number of objects" for any difference (and fixes it),
 * and the checker's S1 wants the same.  The corruption made here is one a
 * wrong order or size in allocate_slab() would make: a full slab whose
 * counters say one object fewer, consistently (objects and inuse both one
 * lower, the last object lost), so nothing else in the slab disagrees.
 * Before, validate_slab_cache() found nothing and the checker caught it
 * only as the node's object total (S2), not as the slab that is wrong.
 */
#include <string.h>

#include "internal.h"
#include "slab/slab.h"
#include "mm/slab.h"
#include "test.h"

#define MANY 256

/* A full slab among @p[0..n): the first object's slab once every object of it is allocated. */
static struct page *full_slab_of(struct mm *mm, void **p, int n)
{
	struct page *slab = virt_to_slab(mm, p[0]);
	REQUIRE(slab);
	unsigned int mine = 0;
	for (int i = 0; i < n; i++)
		mine += virt_to_slab(mm, p[i]) == slab;
	REQUIRE(mine == slab_objects(slab) && slab_inuse(slab) == slab_objects(slab));
	return slab;
}

static void shrink_counts(struct page *slab, int by)
{
	union slab_ctr ctr = slab_ctr(slab);
	ctr.c.objects = (unsigned)(ctr.c.objects + (unsigned)by) & 0x7fff;
	ctr.c.inuse = (unsigned)(ctr.c.inuse + (unsigned)by) & 0xffff;
	slab_set_counters(slab, ctr.counters);
}

static void run(const char *options, bool validate)
{
	struct mm_config c;
	char err[256];
	mm_config_default(&c);
	c.quiet = true;
	struct mm *mm = test_create(&c);
	if (options)
		REQUIRE(mm_slub_configure(mm, options, err, sizeof(err)) == 0);
	struct kmem_cache *s = kmem_cache_create(mm, "objects", 256, 0, 0, NULL);
	REQUIRE(s);
	void *p[MANY];
	for (int i = 0; i < MANY; i++)
		REQUIRE((p[i] = kmem_cache_alloc(s, GFP_KERNEL)));
	struct page *slab = full_slab_of(mm, p, MANY);
	unsigned int full = slab_objects(slab);
	CHECK_MM(mm, 3);

	shrink_counts(slab, -1);
	struct mm_violation v;
	bool clean = mm_check(mm, 3, &v);
	CHECK_MSG(!clean, "%s: a slab claiming %u of its %u objects passed the checker", options ? options : "no debug",
		  slab_objects(slab), full);
	if (!clean)
		CHECK_MSG(v.inv == MM_INV_S1 && strstr(v.msg, "room for"), "%s: %s", options ? options : "", v.msg);
	if (validate) {
		unsigned long reports = mm_nr_reports(mm);
		long e = validate_slab_cache(s);
		/* four reports: "Wrong number of objects" and its fix, then the in-use count's error and fix */
		CHECK_MSG(e == 4 && mm_nr_reports(mm) == reports + 4, "%s: validate_slab_cache found %ld errors, "
			  "%lu reports, want 4 and 4", options, e, mm_nr_reports(mm) - reports);
		/* on_freelist() repairs both: objects back to what fits, inuse to what it counted */
		CHECK_MSG(slab_objects(slab) == full && slab_inuse(slab) == full, "%s: after validation %u objects, %u in use, want %u",
			  options, slab_objects(slab), slab_inuse(slab), full);
		/* The repair counts the lost object as newly in use; the corruption never uncounted it. */
		slub_count_live(s, -1);
	} else {
		shrink_counts(slab, +1);
	}
	CHECK_MM(mm, 3);
	for (int i = 0; i < MANY; i++)
		kmem_cache_free(s, p[i]);
	kmem_cache_destroy(s);
	mm_destroy(mm);
}

int main(void)
{
	run(NULL, false);
	run("slub_debug=FU,objects", true);
	TEST_DONE();
}

/* SPDX-License-Identifier: MIT */
/*
 * instance.c - allocator instances for the fuzz targets: a small cache of
 * instances keyed by their config (creating one costs mmap/mprotect calls;
 * mm_reset() between inputs costs none), the initial state captured right
 * after mm_create(), and the teardown that proves every input left the
 * instance exactly as it found it:
 *
 *   1. the target has freed everything it held and undone isolation;
 *   2. drain_all_pages(): pcp pages go back to the buddy lists;
 *   3. mm_check at level 2 (the final level, 3 by default, already ran on
 *      the state the last op left);
 *   4. every zone's NR_FREE_PAGES and buddyinfo line equal the initial ones
 *      (the buddyinfo line only for zones without highatomic pageblocks:
 *      the allocator legitimately keeps that reserve, and its free blocks
 *      do not merge with their neighbours);
 *   5. mm_reset(), SLUB's options put back if the input changed them,
 *      then the whole initial state again, watermarks and lowmem reserves
 *      included, and no reports left over.
 * Step 5 is what makes AFL++ persistent mode 100% stable: the next input
 * starts from a state equal to a fresh instance's.
 */
#include <stdlib.h>
#include <string.h>

#include "cgen.h"
#include "configs.h"
#include "harness.h"
#include "instance.h"
#include "mm/cpu.h"
#include "shadow.h"
#include "slub_opts.h"
#include "internal.h"     /* zone->nr_reserved_highatomic, for step 4 only */

#define MF_NR_INSTANCES 160  /* more than any target's setups (buddy: 9 machines x 4 cpus x 2) */

struct mf_instance {
	struct mm_config cfg;
	struct mm *mm;
	struct mf_baseline base;
	unsigned long last_use;
};

static struct mf_instance cache[MF_NR_INSTANCES];
static unsigned long use_clock;
static int incremental = -1;          /* MMFUZZ_CHECK_INCREMENTAL, read once */

static bool check_incremental(void)
{
	if (incremental < 0)
		incremental = mf_env_ulong("MMFUZZ_CHECK_INCREMENTAL", 1) != 0;
	return incremental;
}

void mf_baseline_capture(struct mm *mm, struct mf_baseline *b)
{
	memset(b, 0, sizeof(*b));
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = mm_zone(mm, (enum zone_type)z);
		struct mf_zone_base *zb = &b->z[z];
		if (!zone)
			continue;
		zb->populated = true;
		zb->free_pages = zone_free_pages(zone);
		for (unsigned int o = 0; o < MM_NR_ORDERS_LIMIT; o++)
			zb->nr_free[o] = zone_nr_free(zone, o);
		for (int w = 0; w < NR_WMARK; w++)
			zb->wmark[w] = zone_wmark_pages(zone, (enum zone_watermarks)w);
		for (int j = 0; j < MAX_NR_ZONES; j++)
			zb->reserve[j] = zone_lowmem_reserve(zone, (enum zone_type)j);
		zb->managed = zone_managed_pages(zone);
		zb->pcp_high = zone->pageset_high;
		zb->pcp_batch = zone->pageset_batch;
		struct mm_pcp_info info;
		for (int cpu = 0; cpu < MM_MAX_CPUS && mm_pcp_info(mm, (enum zone_type)z, cpu, &info) == 0; cpu++)
			zb->pcp_count[cpu] = info.count;
	}
}

static const char *const zone_name[MAX_NR_ZONES] = { "DMA", "DMA32", "Normal", "Movable" };

bool mf_baseline_same(const struct mf_baseline *base, const struct mf_baseline *now, bool lists,
		      bool tunables, const bool *skip_lists_zone, char *why, size_t whylen)
{
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		const struct mf_zone_base *a = &base->z[z], *b = &now->z[z];
		if (a->populated != b->populated) {
			snprintf(why, whylen, "zone %s populated %d, initially %d", zone_name[z], b->populated,
				 a->populated);
			return false;
		}
		if (a->free_pages != b->free_pages || a->managed != b->managed) {
			snprintf(why, whylen, "zone %s: NR_FREE_PAGES %ld managed %lu, initially %ld and %lu",
				 zone_name[z], b->free_pages, b->managed, a->free_pages, a->managed);
			return false;
		}
		for (unsigned int o = 0; lists && !(skip_lists_zone && skip_lists_zone[z]) && o < MM_NR_ORDERS_LIMIT; o++)
			if (a->nr_free[o] != b->nr_free[o]) {
				snprintf(why, whylen, "zone %s buddyinfo differs at order %u: %lu free blocks, initially %lu",
					 zone_name[z], o, b->nr_free[o], a->nr_free[o]);
				return false;
			}
		for (int cpu = 0; lists && !(skip_lists_zone && skip_lists_zone[z]) && cpu < MM_MAX_CPUS; cpu++)
			if (a->pcp_count[cpu] != b->pcp_count[cpu]) {
				snprintf(why, whylen, "zone %s cpu %d: %d pages on the pcp lists, initially %d",
					 zone_name[z], cpu, b->pcp_count[cpu], a->pcp_count[cpu]);
				return false;
			}
		if (!tunables)
			continue;
		for (int w = 0; w < NR_WMARK; w++)
			if (a->wmark[w] != b->wmark[w]) {
				snprintf(why, whylen, "zone %s watermark %d is %lu, initially %lu", zone_name[z], w,
					 b->wmark[w], a->wmark[w]);
				return false;
			}
		if (a->pcp_high != b->pcp_high || a->pcp_batch != b->pcp_batch) {
			snprintf(why, whylen, "zone %s pcp high %d batch %d, initially %d and %d", zone_name[z],
				 b->pcp_high, b->pcp_batch, a->pcp_high, a->pcp_batch);
			return false;
		}
		for (int j = 0; j < MAX_NR_ZONES; j++)
			if (a->reserve[j] != b->reserve[j]) {
				snprintf(why, whylen, "zone %s lowmem_reserve[%d] is %ld, initially %ld", zone_name[z], j,
					 b->reserve[j], a->reserve[j]);
				return false;
			}
	}
	return true;
}

unsigned long mf_zone_reserved_highatomic(struct mm *mm, int z)
{
	struct zone *zone = mm_zone(mm, (enum zone_type)z);
	return zone ? READ_ONCE(zone->nr_reserved_highatomic) : 0;
}

static void attach(struct mf_ctx *c, struct mf_instance *in)
{
	in->last_use = ++use_clock;
	c->inst = in;
	c->mm = in->mm;
	/* mm_reset() forgets the walker: B4 must count what the shadow holds. */
	mm_set_client_walker(in->mm, mf_shadow_walk, c->sh);
	mm_check_set_incremental(in->mm, check_incremental());
	/*
	 * Run the input on vCPU 0, attached before the first op, so no path
	 * depends on when the per-CPU code first attached implicitly; teardown's
	 * mm_reset() detaches.
	 */
	mm_cpu_attach(in->mm, 0);
}

/* The cached instance for @cfg, created (and its initial state captured) on a miss. */
static struct mf_instance *lookup(const struct mm_config *cfg, const char *who)
{
	struct mf_instance *victim = &cache[0];
	char err[256];

	/*
	 * A hit takes the same path whatever ran before: the least recently
	 * used instance is looked for only on a miss (with every instance made
	 * by mf_instances_warm(), never while fuzzing).
	 */
	for (int i = 0; i < MF_NR_INSTANCES; i++)
		if (cache[i].mm && !memcmp(&cache[i].cfg, cfg, sizeof(*cfg)))
			return &cache[i];
	for (int i = 0; i < MF_NR_INSTANCES; i++)
		if (!cache[i].mm || (victim->mm && cache[i].last_use < victim->last_use))
			victim = &cache[i];
	if (victim->mm)
		mm_destroy(victim->mm);
	victim->mm = mm_create(cfg, err, sizeof(err));
	if (!victim->mm) {
		if (who)
			fprintf(stderr, "mmfuzz: %s: mm_create failed for the input's config: %s\n", who, err);
		return NULL;
	}
	victim->cfg = *cfg;
	victim->last_use = ++use_clock;
	mf_baseline_capture(victim->mm, &victim->base);
	/*
	 * Every input starts from the state mm_reset() leaves - the first one
	 * on this instance too - so no input's path depends on whether the
	 * instance was new.  (Teardown compares that state with the fresh one.)
	 */
	mm_reset(victim->mm);
	return victim;
}

struct mm *mf_instance(struct mf_ctx *c, const struct mm_config *cfg)
{
	struct mf_instance *in = lookup(cfg, c->t->name);
	if (!in)
		return NULL;
	attach(c, in);
	/*
	 * The state the input starts from is checked before its first op, at
	 * the per-op level, as the C reproducer checks it after mm_create(): an
	 * allocator that boots broken (a bug in the boot frees, say) is
	 * reported at setup, not as a crash in whichever op first touches what
	 * is broken.  Here, before begin() installs the target's hooks, so the
	 * check takes none of the input's preemption-point decisions.
	 */
	c->in_setup = true;
	mf_check(c, c->check_level);
	c->in_setup = false;
	return c->mm;
}

/*
 * The checker allocates its walk buffers on an instance's first deep check:
 * make that check here, before fuzzing (and before AFL++'s fork server), so
 * no input's first check on an instance takes a path later ones do not.
 * Its verdict is not used: a broken allocator (the bug zoo's) may break a
 * fresh instance, and the first input's checks report that, with the
 * input.  Then reset again: the checker's incremental state is forgotten,
 * as after every input's teardown.
 */
static void warm_check(struct mf_instance *in)
{
	struct mm_violation v;

	mm_cpu_attach(in->mm, 0);
	(void)mm_check(in->mm, 4, &v);
	mm_cpu_detach(in->mm);
	mm_reset(in->mm);
}

/* Every combination of the setup's arguments (when there are few), mapped by config_of. */
void mf_instances_warm(const struct mf_target *t)
{
	const struct mf_opdesc *d = t->setup;
	unsigned long combos = 1;
	unsigned int n = 0;

	mf_harness_init();
	check_incremental();
	/*
	 * The CPU model initialises the thread's task lazily on its first
	 * attach (pthread_once, an exit key, the task's pid): do that here, or
	 * the first input of every forked AFL++ child covers edges the others
	 * do not - also for a target that makes its own instances (config).
	 */
	struct mm_config cpu_cfg;
	char err[256];
	mf_config_named(&cpu_cfg, (enum mf_config_kind)0, 1);
	struct mm *tmp = mm_create(&cpu_cfg, err, sizeof(err));
	if (tmp) {
		mm_cpu_attach(tmp, 0);
		mm_cpu_detach(tmp);
		mm_destroy(tmp);
	}
	if (!t->config_of)
		return;
	for (; n < MF_MAX_ARGS && d->args[n].name; n++) {
		if (d->args[n].kind == MF_FLAGS || d->args[n].kind == MF_IDX)
			return;
		combos *= (unsigned long)(d->args[n].hi - d->args[n].lo + 1);
		if (combos > MF_NR_INSTANCES)
			return;
	}
	for (unsigned long k = 0; k < combos; k++) {
		struct mf_op setup;
		struct mm_config cfg;
		unsigned long rest = k;
		memset(&setup, 0, sizeof(setup));
		for (unsigned int i = 0; i < n; i++) {
			unsigned long span = (unsigned long)(d->args[i].hi - d->args[i].lo + 1);
			setup.a[i] = d->args[i].lo + (long)(rest % span);
			rest /= span;
		}
		t->config_of(&setup, &cfg);
		struct mf_instance *in = lookup(&cfg, NULL);  /* a refused config fails later, in the input that asks */
		if (!in)
			continue;
		if (t->warm) {
			struct mf_ctx c;
			memset(&c, 0, sizeof(c));
			c.t = t;
			c.mm = in->mm;
			c.inst = in;
			mm_cpu_attach(in->mm, 0);
			t->warm(&c);
			mm_cpu_detach(in->mm);
		}
		warm_check(in);
	}
}

const struct mm_config *mf_config(const struct mf_ctx *c)
{
	return mm_get_config(c->mm);
}

const struct mm_config *mf_instance_config(const struct mf_ctx *c)
{
	return &c->inst->cfg;
}

void mf_instance_teardown(struct mf_ctx *c)
{
	struct mf_instance *in = c->inst;
	struct mf_baseline now;
	bool skip[MAX_NR_ZONES];
	char why[256];

	/*
	 * Level 2 is enough here: the deep check ran on the state the ops left
	 * (harness.c), and step 4 below proves the rest - a lost page changes
	 * NR_FREE_PAGES, a missed merge changes the buddyinfo line.
	 */
	drain_all_pages(c->mm, NULL);
	mf_check(c, c->final_level < 2 ? c->final_level : 2);
	mf_baseline_capture(c->mm, &now);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		skip[z] = mf_zone_reserved_highatomic(c->mm, z) != 0;
	mf_cgen_teardown(c, skip);
	if (!mf_baseline_same(&in->base, &now, true, false, skip, why, sizeof(why)))
		mf_fail(c, "B4", "teardown: everything was freed and drained, but the instance is not back "
			"to its initial state: %s", why);
	/* The teardown's frees, drains and destroys expect no report (mm_reset() below zeroes the count). */
	if (mm_nr_reports(c->mm) != c->reports_before)
		mf_fail(c, "C1", "teardown left an unexpected allocator report (%lu new): %s",
			mm_nr_reports(c->mm) - c->reports_before, mm_last_report(c->mm)->msg);

	mm_reset(c->mm);
	/*
	 * SLUB's options outlive mm_reset(): the input that changed them puts
	 * them back now, while every cache is empty, so the next input starts
	 * as on a fresh instance whatever ran before it (slub_opts.c).
	 */
	mf_slub_options_restore_if_dirty(c);
	mf_baseline_capture(c->mm, &now);
	if (!mf_baseline_same(&in->base, &now, true, true, NULL, why, sizeof(why)))
		mf_fail(c, "B4", "after mm_reset() the instance differs from a fresh one: %s", why);
	if (mm_nr_reports(c->mm))
		mf_fail(c, "B4", "after mm_reset() mm_nr_reports() is %lu, not 0", mm_nr_reports(c->mm));
	c->mm = NULL;
	c->inst = NULL;
}

void mf_instances_destroy(void)
{
	for (int i = 0; i < MF_NR_INSTANCES; i++) {
		mm_destroy(cache[i].mm);
		cache[i].mm = NULL;
	}
}

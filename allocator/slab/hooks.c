/* SPDX-License-Identifier: MIT */
/*
 * hooks.c - what the rest of the allocator calls into SLUB for (setup,
 * teardown, reset, CPU death), SLUB's options (the kernel's boot
 * parameters, as mm_slub_configure() and the MMFUZZ_SLUB environment
 * variable), and the KASAN quarantine.
 *
 * mm_reset() and the caches: slab_reset() runs first, before the page
 * allocator takes all memory back, and only reinitialises SLUB's own
 * structures.  Every cache survives, empty: the kmalloc caches and the
 * caches clients created keep their name, flags and layout, so a client
 * may keep using (or destroy) its cache pointers across a reset.  Caches
 * that kmem_cache_destroy() kept because of leaks are released: their
 * leaked objects are gone with the memory.  Options and the random seed
 * state are kept; the tids restart at their vCPU numbers.
 */
#include <stdlib.h>
#include <string.h>

#include "slab/slab.h"
#include "slab/kasan.h"

/* ---------------------------------------------------------------- options */

static const char *const fastpath_names[SLUB_NR_FASTPATHS] = { "cmpxchg", "locked", "irqoff" };

const char *slub_fastpath_name(enum slub_fastpath f)
{
	return (unsigned)f < SLUB_NR_FASTPATHS ? fastpath_names[f] : "?";
}

enum slub_fastpath mm_slub_fastpath(const struct mm *mm)
{
	return slub_state(mm)->fastpath;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "1") || !strcmp(v, "on") || !strcmp(v, "y") || !strcmp(v, "yes")) {
		*out = true;
		return 0;
	}
	if (!strcmp(v, "0") || !strcmp(v, "off") || !strcmp(v, "n") || !strcmp(v, "no")) {
		*out = false;
		return 0;
	}
	return -1;
}

static int parse_ulong(const char *v, unsigned long *out)
{
	char *end;
	if (!*v)
		return -1;
	*out = strtoul(v, &end, 0);
	return *end ? -1 : 0;
}

/* One "key[=value]" token.  *relayout is set when cache layouts must be recomputed. */
static int slub_option(struct slub_state *st, const char *key, const char *val, bool *relayout,
		       char *err, size_t errlen)
{
	unsigned long n;
	bool b;

	if (!strcmp(key, "slub_debug") || !strcmp(key, "slab_debug")) {
		*relayout = true;
		return slub_parse_debug(st, val ? val : "", err, errlen);
	}
	if (!val)
		goto bad;
	if (!strcmp(key, "slub_fastpath")) {
		for (int i = 0; i < SLUB_NR_FASTPATHS; i++)
			if (!strcmp(val, fastpath_names[i])) {
				st->fastpath = (enum slub_fastpath)i;
				return 0;
			}
		goto bad;
	}
	if (!strcmp(key, "slab_freelist_hardened")) {
		if (parse_bool(val, &b))
			goto bad;
		st->hardened = b;
		*relayout = true;
		return 0;
	}
	if (!strcmp(key, "slab_freelist_random")) {
		if (parse_bool(val, &b))
			goto bad;
		st->random = b;
		*relayout = true;
		return 0;
	}
	if (!strcmp(key, "init_on_alloc") || !strcmp(key, "init_on_free")) {
		if (parse_bool(val, &b))
			goto bad;
		/* Boot options of the whole kernel: the page allocator applies them too. */
		if (key[8] == 'a')
			st->init_on_alloc = st->mm->init_on_alloc = b;
		else
			st->init_on_free = st->mm->init_on_free = b;
		return 0;
	}
	if (parse_ulong(val, &n))
		goto bad;
	if (!strcmp(key, "slub_min_order") || !strcmp(key, "slub_max_order")) {
		if (n > MM_MAX_ORDER_LIMIT)
			goto bad;
		if (key[5] == 'm' && key[6] == 'i')
			st->min_order = (unsigned int)n;
		else
			st->max_order = (unsigned int)n;
		*relayout = true;
		return 0;
	}
	if (!strcmp(key, "slub_min_objects")) {
		if (n > MAX_OBJS_PER_PAGE)
			goto bad;
		st->min_objects = (unsigned int)n;
		*relayout = true;
		return 0;
	}
	if (!strcmp(key, "slub_seed")) {
		st->seed = n;
		atomic_store(&st->rnd, n);
		return 0;
	}
	if (!strcmp(key, "slub_fail_new_slab")) {
		st->fail_new_slab = n;
		atomic_store(&st->new_slab_count, 0);
		return 0;
	}
	if (!strcmp(key, "kasan_quarantine")) {
#ifdef MM_ASAN
		__atomic_store_n(&st->q_limit, n, __ATOMIC_RELAXED);   /* read without q_lock */
#endif
		return 0;
	}
bad:
	snprintf(err, errlen, "slub option '%s%s%s' not understood", key, val ? "=" : "", val ? val : "");
	return -22;
}

static int slub_apply_options(struct slub_state *st, const char *options, char *err, size_t errlen)
{
	char buf[512], *tok, *save = NULL;
	bool relayout = false;
	int ret = 0, busy = 0;

	if (!options)
		return 0;
	if (strlen(options) >= sizeof(buf)) {
		snprintf(err, errlen, "slub options: longer than %zu characters", sizeof(buf) - 1);
		return -22;
	}
	strcpy(buf, options);
	for (tok = strtok_r(buf, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		char *eq = strchr(tok, '=');
		if (eq)
			*eq++ = 0;
		ret = slub_option(st, tok, eq, &relayout, err, errlen);
		if (ret)
			return ret;
	}
	for (struct list_head *pos = st->caches.next; pos != &st->caches; pos = pos->next) {
		struct kmem_cache *s = list_entry(pos, struct kmem_cache, list);
		s->fastpath = st->fastpath;
		if (relayout && slub_cache_relayout(s))
			busy++;
	}
	if (busy) {
		snprintf(err, errlen, "%d cache(s) hold slabs and keep their layout", busy);
		return -16;   /* EBUSY */
	}
	return 0;
}

int mm_slub_configure(struct mm *mm, const char *options, char *err, size_t errlen)
{
	struct slub_state *st;
	char dummy[8];
	int ret;

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	if (!mm || !(st = slub_state(mm))) {
		snprintf(err, errlen, "no SLUB in this instance");
		return -22;
	}
	mutex_lock(&st->slab_mutex);
	ret = slub_apply_options(st, options, err, errlen);
	mutex_unlock(&st->slab_mutex);
	return ret;
}

void mm_slub_forget_layouts(struct mm *mm)
{
	struct slub_state *st = mm ? slub_state(mm) : NULL;
	struct list_head *pos;

	if (!st)
		return;
	mutex_lock(&st->slab_mutex);
	list_for_each(pos, &st->caches)
		slub_cache_forget_layouts(list_entry(pos, struct kmem_cache, list));
	mutex_unlock(&st->slab_mutex);
}

/* ---------------------------------------------------------------- the quarantine */

#ifdef MM_ASAN
/* The quarantine links objects through their free pointer word (raw, not encoded). */
static void *qlink_next(struct mm *mm, void *object)
{
	struct kmem_cache *s = virt_to_slab(mm, object)->slab_cache;
	return (void *)metadata_read_word((char *)object + s->offset);
}

/*
 * qlink_free(): the quarantine's link is KASAN's free metadata in the
 * kernel, never SLUB's free pointer, so an object leaves the quarantine
 * with the free pointer word as valid as it entered.  Here the link lives
 * in that word: put an encoded NULL back before the free, or a debug
 * cache's check_object() (the free pointer outside the object: poison,
 * red zone + user tracking, a ctor) decodes the raw link as "Freepointer
 * corrupt" and keeps the object.
 */
static void qlink_free_list(struct mm *mm, void *list)
{
	while (list) {
		struct page *slab = virt_to_slab(mm, list);
		void *next = qlink_next(mm, list);
		set_freepointer(slab->slab_cache, list, NULL);
		do_slab_free(slab->slab_cache, slab, list, NULL, 1, 0);
		list = next;
	}
}

/* kasan_slab_free() with a quarantine: hold the (poisoned) object back, free the oldest ones. */
bool slub_quarantine_put(struct kmem_cache *s, void *object)
{
	struct slub_state *st = slub_state(s->mm);
	void *evict = NULL;

	if (!__atomic_load_n(&st->q_limit, __ATOMIC_RELAXED))
		return false;
	metadata_write_word((char *)object + s->offset, 0);
	spin_lock(&st->q_lock);
	if (st->q_tail)
		metadata_write_word((char *)st->q_tail + virt_to_slab(s->mm, st->q_tail)->slab_cache->offset,
				    (uintptr_t)object);
	else
		st->q_head = object;
	st->q_tail = object;
	st->q_bytes += s->size;
	while (st->q_bytes > st->q_limit && st->q_head) {
		void *old = st->q_head;
		struct kmem_cache *os = virt_to_slab(s->mm, old)->slab_cache;
		st->q_head = (void *)metadata_read_word((char *)old + os->offset);
		if (!st->q_head)
			st->q_tail = NULL;
		st->q_bytes -= os->size;
		metadata_write_word((char *)old + os->offset, (uintptr_t)evict);   /* onto the local list */
		evict = old;
	}
	spin_unlock(&st->q_lock);
	qlink_free_list(s->mm, evict);
	return true;
}

/* kasan_cache_shutdown() / quarantine_remove_cache(): free what the quarantine holds of @only (NULL: all). */
void slub_quarantine_drain(struct mm *mm, struct kmem_cache *only)
{
	struct slub_state *st = slub_state(mm);
	void *keep_head = NULL, *keep_tail = NULL, *evict = NULL, *p;
	size_t keep_bytes = 0;

	spin_lock(&st->q_lock);
	p = st->q_head;
	while (p) {
		struct kmem_cache *s = virt_to_slab(mm, p)->slab_cache;
		void *next = (void *)metadata_read_word((char *)p + s->offset);
		if (!only || s == only) {
			metadata_write_word((char *)p + s->offset, (uintptr_t)evict);
			evict = p;
		} else {
			metadata_write_word((char *)p + s->offset, 0);
			if (keep_tail)
				metadata_write_word((char *)keep_tail + virt_to_slab(mm, keep_tail)->slab_cache->offset,
						    (uintptr_t)p);
			else
				keep_head = p;
			keep_tail = p;
			keep_bytes += s->size;
		}
		p = next;
	}
	st->q_head = keep_head;
	st->q_tail = keep_tail;
	st->q_bytes = keep_bytes;
	spin_unlock(&st->q_lock);
	qlink_free_list(mm, evict);
}

/* kasan_report_invalid_free(): KASAN's first line, then ASan's own report, which stops the program. */
void kasan_report_invalid_free(const void *ptr, const char *kind, const char *fn, const char *cache)
{
	fprintf(stderr, "==================================================================\n"
			"BUG: KASAN: %s in %s\n"
			"Free of addr %p by task (the model's current thread)\n"
			"The buggy address belongs to the object at %p which belongs to the cache %s\n",
		kind, fn, ptr, ptr, cache && *cache ? cache : "?");
	__asan_report_error(__builtin_return_address(0), __builtin_frame_address(0),
			    __builtin_frame_address(0), (void *)ptr, 1, 1);
	abort();
}
#else
bool slub_quarantine_put(struct kmem_cache *s, void *object)
{
	(void)s;
	(void)object;
	return false;
}

void slub_quarantine_drain(struct mm *mm, struct kmem_cache *only)
{
	(void)mm;
	(void)only;
}
#endif

/* ---------------------------------------------------------------- hooks */

static int slub_cpu_dead(struct mm *mm, unsigned int cpu)
{
	slab_cpu_dead(mm, (int)cpu);
	return 0;
}

int slab_setup(struct mm *mm, char *err, size_t errlen)
{
	struct slub_state *st = calloc(1, sizeof(*st));

	if (!st) {
		snprintf(err, errlen, "out of memory for SLUB");
		return -1;
	}
	st->mm = mm;
	mutex_init(&st->slab_mutex);
	spin_lock_init(&st->q_lock);
	INIT_LIST_HEAD(&st->caches);
	st->fastpath = SLUB_FASTPATH_CMPXCHG;
	st->hardened = true;               /* as distribution kernels */
	st->random = true;
	st->max_order = PAGE_ALLOC_COSTLY_ORDER;
	st->seed = 0x5eedULL;
	atomic_init(&st->rnd, st->seed);
	atomic_init(&st->clock, 1);
	atomic_init(&st->new_slab_count, 0);
	mm->slab_state = st;

	if (slub_apply_options(st, getenv("MMFUZZ_SLUB"), err, errlen) ||
	    create_kmalloc_caches(mm, err, errlen)) {
		slab_teardown(mm);
		return -1;
	}
	if (mm_cpuhp_register(mm, "mm/slub:dead", NULL, slub_cpu_dead) < 0) {
		snprintf(err, errlen, "SLUB: no room for a CPU hotplug callback");
		slab_teardown(mm);
		return -1;
	}
	return 0;
}

void slab_teardown(struct mm *mm)
{
	struct slub_state *st = slub_state(mm);

	if (!st)
		return;
	while (!list_empty(&st->caches)) {
		struct kmem_cache *s = list_entry(st->caches.next, struct kmem_cache, list);
		list_del(&s->list);
		__kmem_cache_release(s);
	}
	free(st->check_map);
	free(st->check_owner);
	free(st);
	mm->slab_state = NULL;
}

/* Every cache empty again; the page allocator then takes all memory back. */
void slub_cache_reset(struct kmem_cache *s)
{
	struct kmem_cache_node *n = get_node(s, 0);

	slub_cache_init_cpus(s);
	INIT_LIST_HEAD(&n->partial);
	INIT_LIST_HEAD(&n->full);
	n->nr_partial = 0;
	atomic_store(&n->nr_slabs, 0);
	atomic_store(&n->total_objects, 0);
	atomic_store(&s->nr_isolated, 0);
}

void slab_reset(struct mm *mm)
{
	struct slub_state *st = slub_state(mm);
	struct list_head *pos, *tmp;

	if (!st)
		return;
	mutex_lock(&st->slab_mutex);
	list_for_each_safe(pos, tmp, &st->caches) {
		struct kmem_cache *s = list_entry(pos, struct kmem_cache, list);
		if (s->refcount <= 0) {             /* destroyed, kept only for its leaks */
			list_del(&s->list);
			__kmem_cache_release(s);
			continue;
		}
		slub_cache_reset(s);
	}
	atomic_store(&st->rnd, st->seed);
	atomic_store(&st->new_slab_count, 0);
	spin_lock(&st->q_lock);
	st->q_head = st->q_tail = NULL;
	st->q_bytes = 0;
	spin_unlock(&st->q_lock);
	mutex_unlock(&st->slab_mutex);
}

/* slub_cpu_dead() (Linux 6.6): a dead vCPU's cpu slab and cpu partial slabs go back.
 * Runs as the CPU model's "dead" callback, holding the vCPU. */
void slab_cpu_dead(struct mm *mm, int cpu)
{
	struct slub_state *st = slub_state(mm);
	struct list_head *pos;

	if (!st || cpu < 0 || (unsigned)cpu >= mm->cfg.nr_cpus)
		return;
	mutex_lock(&st->slab_mutex);
	list_for_each(pos, &st->caches)
		__flush_cpu_slab(list_entry(pos, struct kmem_cache, list), cpu);
	mutex_unlock(&st->slab_mutex);
}

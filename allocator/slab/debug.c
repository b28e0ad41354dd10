/* SPDX-License-Identifier: MIT */
/*
 * debug.c - slub_debug: the debug flags of caches and the boot option,
 * object and slab checks with the kernel's reports, repair, user tracking,
 * the debug caches' allocation and free paths, validate_slab_cache().
 *
 * Models the CONFIG_SLUB_DEBUG parts of mm/slub.c, Linux 6.6:
 * parse_slub_debug_flags(), kmem_cache_flags(), init_object(),
 * check_bytes_and_report(), check_pad_bytes(), slab_pad_check(),
 * check_object(), check_slab(), on_freelist(), alloc_debug_processing(),
 * free_debug_processing(), alloc_single_from_partial(),
 * alloc_single_from_new_slab(), free_to_partial_list(), validate_slab(),
 * validate_slab_cache(), list_slab_objects().
 *
 * Reports go through mm_report() (the instance's counter and bad_policy):
 * every "BUG <cache>: ..." (slab_bug, slab_err, object_err) counts one and
 * every "FIX <cache>: ..." (slab_fix) counts one, as slub_kunit's
 * slab_errors does.  Under MM_BAD_ABORT the first BUG aborts; under
 * MM_BAD_REPORT the damage is repaired as the kernel does (bytes restored,
 * chains cut, slabs isolated, objects not freed) and execution continues.
 * Detail lines (the "INFO:" lines) go to stderr unless the instance is quiet.
 *
 * Concurrency: debug caches do everything under list_lock (they have no
 * cpu slabs), so the checks and repairs never race with the lockless paths.
 */
#include <ctype.h>
#include <stdarg.h>
#include <string.h>

#include "slab/slab.h"
#include "slab/kasan.h"

#define DEBUG_DEFAULT_FLAGS (SLAB_CONSISTENCY_CHECKS | SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER)

/* ---------------------------------------------------------------- the option */

/*
 * parse_slub_debug_flags(): "FZPU,cache,cache" blocks separated by ';'.
 * No letters means DEBUG_DEFAULT_FLAGS; '-' means none; a block without
 * caches sets the flags for every cache not named by another block.
 */
int slub_parse_debug(struct slub_state *st, const char *str, char *err, size_t errlen)
{
	st->nr_debug = 0;
	st->disable_higher_order_debug = false;
	if (!str)
		return 0;
	if (!*str) {                      /* plain "slub_debug" */
		st->debug[0].flags = DEBUG_DEFAULT_FLAGS;
		st->debug[0].names[0] = 0;
		st->nr_debug = 1;
		return 0;
	}
	while (*str) {
		struct slub_debug_block *b;
		const char *end = strchr(str, ';');
		size_t len = end ? (size_t)(end - str) : strlen(str);
		slab_flags_t flags = 0;
		bool any = false;
		size_t i = 0;

		if (st->nr_debug >= SLUB_DEBUG_MAX) {
			snprintf(err, errlen, "slub_debug: more than %d blocks", SLUB_DEBUG_MAX);
			return -22;
		}
		b = &st->debug[st->nr_debug];
		for (; i < len && str[i] != ','; i++) {
			any = true;
			switch (tolower((unsigned char)str[i])) {
			case 'f': flags |= SLAB_CONSISTENCY_CHECKS; break;
			case 'z': flags |= SLAB_RED_ZONE; break;
			case 'p': flags |= SLAB_POISON; break;
			case 'u': flags |= SLAB_STORE_USER; break;
			case 't': flags |= SLAB_TRACE; break;
			case 'a': break;                     /* failslab: accepted, no effect */
			/* Avoid enabling debugging on caches if its minimum order would increase as a result. */
			case 'o': st->disable_higher_order_debug = true; break;
			case '-': flags = 0; break;
			default:
				snprintf(err, errlen, "slub_debug: unknown flag '%c'", str[i]);
				return -22;
			}
		}
		if (!any)
			flags = DEBUG_DEFAULT_FLAGS;
		b->flags = flags;
		if (i < len) {                           /* the cache list */
			size_t n = len - i - 1;
			if (n >= sizeof(b->names)) {
				snprintf(err, errlen, "slub_debug: cache list too long");
				return -22;
			}
			memcpy(b->names, str + i + 1, n);
			b->names[n] = 0;
		} else {
			b->names[0] = 0;
		}
		st->nr_debug++;
		str += len;
		if (*str == ';')
			str++;
	}
	/*
	 * "slub_debug=-" alone is the kernel's slub_debug = 0 with no per-cache
	 * block: the state of an instance created without the option, so a
	 * client putting the options back gets that state, not a block that
	 * kmem_cache_flags() then walks for nothing.
	 */
	if (st->nr_debug == 1 && !st->debug[0].flags && !st->debug[0].names[0])
		st->nr_debug = 0;
	return 0;
}

/* Does @name match an entry of the comma-separated @list ("kmalloc-*" globs)? */
static bool name_in_list(const char *name, const char *list)
{
	size_t len = strlen(name);

	while (*list) {
		const char *end = strchr(list, ',');
		size_t n = end ? (size_t)(end - list) : strlen(list);
		const char *glob = memchr(list, '*', n);
		if (glob) {                      /* 6.6: the part before the first '*' is a prefix; the rest is ignored */
			if (!strncmp(name, list, (size_t)(glob - list)))
				return true;
		} else if (n == len && !strncmp(name, list, n)) {
			return true;
		}
		list += n;
		if (*list == ',')
			list++;
	}
	return false;
}

/* kmem_cache_flags(): the creation flags plus slub_debug's for this cache. */
slab_flags_t kmem_cache_flags(struct slub_state *st, const char *name, slab_flags_t flags)
{
	slab_flags_t global = 0;

	for (int i = 0; i < st->nr_debug; i++) {
		if (!st->debug[i].names[0])
			global = st->debug[i].flags;
		else if (name_in_list(name, st->debug[i].names))
			return flags | st->debug[i].flags;
	}
	return flags | global;
}

/* ---------------------------------------------------------------- reports */

static bool slub_quiet(const struct kmem_cache *s)
{
	return s->mm->cfg.quiet;
}

static void info(const struct kmem_cache *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void info(const struct kmem_cache *s, const char *fmt, ...)
{
	va_list ap;

	if (slub_quiet(s))
		return;
	va_start(ap, fmt);
	fprintf(stderr, "mmfuzz: INFO: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static unsigned long slab_pfn(const struct kmem_cache *s, const struct page *slab)
{
	return slab ? __page_to_pfn(s->mm, slab) : ~0UL;
}

static void print_slab_info(const struct kmem_cache *s, const struct page *slab)
{
	union slab_ctr ctr = slab_ctr(slab);
	info(s, "Slab pfn %#lx objects=%u used=%u fp=%p flags=%#lx", slab_pfn(s, slab), ctr.c.objects,
	     ctr.c.inuse, slab_freelist(slab), slab->flags);
}

/* slab_err(): "BUG <cache>: <message>" about a slab. */
void slab_err(struct kmem_cache *s, struct page *slab, const char *fmt, ...)
{
	char buf[MM_REPORT_REASON_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	mm_report(s->mm, "slub", slab_pfn(s, slab), slab ? slab->flags : 0, "BUG %s: %s", s->name, buf);
	if (slab)
		print_slab_info(s, slab);
}

static struct track *get_track(struct kmem_cache *s, void *object, enum track_item alloc)
{
	return (struct track *)((char *)object + get_info_end(s)) + alloc;
}

static void print_tracking(struct kmem_cache *s, void *object)
{
	struct track t;

	if (!(s->flags & SLAB_STORE_USER))
		return;
	for (int i = TRACK_ALLOC; i <= TRACK_FREE; i++) {
		metadata_memcpy(&t, get_track(s, object, i), sizeof(t));
		if (t.addr)
			info(s, "%s in %#lx age=%lu cpu=%d pid=%d", i == TRACK_ALLOC ? "Allocated" : "Freed",
			     t.addr, atomic_load(&slub_state(s->mm)->clock) - t.when, t.cpu, t.pid);
	}
}

/* object_err(): "BUG <cache>: <reason>" about an object, with where it is. */
void object_err(struct kmem_cache *s, struct page *slab, void *object, const char *reason)
{
	char *base = slab_address(s->mm, slab);

	mm_report(s->mm, "slub", slab_pfn(s, slab), slab->flags, "BUG %s: %s: object %p @offset=%ld",
		  s->name, reason, object, (long)((char *)object - base));
	print_slab_info(s, slab);
	print_tracking(s, object);
}

/* slab_fix(): "FIX <cache>: <what was done>". */
void slab_fix(struct kmem_cache *s, const char *fmt, ...)
{
	char buf[MM_REPORT_REASON_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	mm_report(s->mm, "slub_fix", ~0UL, 0, "FIX %s: %s", s->name, buf);
}

/* A free of something that is no object of @s (or of no cache: @s NULL). */
void slub_report_bad_free(struct mm *mm, struct kmem_cache *s, const void *x, const char *why)
{
	mm_report(mm, "slub", ~0UL, 0, "%s: %s: %p (not freed)", s ? s->name : "kfree", why, x);
}

/* ---------------------------------------------------------------- tracking */

void set_track(struct kmem_cache *s, void *object, enum track_item alloc, unsigned long addr)
{
	struct track t = { 0 };

	if (addr) {
		t.addr = addr;
		t.cpu = slub_this_cpu(s->mm);
		t.pid = get_current()->pid;     /* the task's (vCPU model), not the thread's */
		t.when = atomic_fetch_add(&slub_state(s->mm)->clock, 1);
	}
	metadata_memcpy(get_track(s, object, alloc), &t, sizeof(t));
}

static void init_tracking(struct kmem_cache *s, void *object)
{
	if (!(s->flags & SLAB_STORE_USER))
		return;
	set_track(s, object, TRACK_FREE, 0);
	set_track(s, object, TRACK_ALLOC, 0);
}

static unsigned int *orig_size_ptr(struct kmem_cache *s, void *object)
{
	return (unsigned int *)(void *)((char *)object + get_info_end(s) + 2 * sizeof(struct track));
}

/* get_orig_size(): the kmalloc request, or the object size without tracking. */
unsigned int get_orig_size(struct kmem_cache *s, void *object)
{
	unsigned int v;

	if (!slub_debug_orig_size(s))
		return s->object_size;
	metadata_memcpy(&v, orig_size_ptr(s, object), sizeof(v));
	return v;
}

void set_orig_size(struct kmem_cache *s, void *object, unsigned int orig_size)
{
	if (!slub_debug_orig_size(s))
		return;
	metadata_memcpy(orig_size_ptr(s, object), &orig_size, sizeof(orig_size));
}

/* SLAB_TRACE: a line per allocation and free. */
static void trace(struct kmem_cache *s, struct page *slab, void *object, int alloc)
{
	if (!(s->flags & SLAB_TRACE))
		return;
	fprintf(stderr, "mmfuzz: TRACE %s %s %p inuse=%u fp=%p\n", s->name, alloc ? "alloc" : "free",
		object, slab_inuse(slab), slab_freelist(slab));
}

/* ---------------------------------------------------------------- patterns */

/* init_object() (Linux 6.6): red zones to @val, the object poisoned if it may be. */
void init_object(struct kmem_cache *s, void *object, unsigned char val)
{
	unsigned char *p = object;
	unsigned int poison_size = s->object_size;

	if (s->flags & SLAB_RED_ZONE) {
		metadata_memset(p - s->red_left_pad, val, s->red_left_pad);
		/* a kmalloc's unused tail is red zone too, and is not poisoned */
		if (slub_debug_orig_size(s) && val == SLUB_RED_ACTIVE)
			poison_size = get_orig_size(s, object);
	}
	if ((s->flags & __OBJECT_POISON) && poison_size) {
		metadata_memset(p, POISON_FREE, poison_size - 1);
		metadata_memset(p + poison_size - 1, POISON_END, 1);
	}
	if (s->flags & SLAB_RED_ZONE)
		metadata_memset(p + poison_size, val, s->inuse - poison_size);
}

void setup_object_debug(struct kmem_cache *s, void *object)
{
	if (!kmem_cache_debug_flags(s, SLAB_STORE_USER | SLAB_RED_ZONE | __OBJECT_POISON))
		return;
	init_object(s, object, SLUB_RED_INACTIVE);
	init_tracking(s, object);
}

/* setup_slab_debug(): with poisoning, the whole slab starts as POISON_INUSE (padding included). */
void setup_slab_debug(struct kmem_cache *s, struct page *slab, void *addr)
{
	if (!kmem_cache_debug_flags(s, SLAB_POISON))
		return;
	metadata_memset(addr, POISON_INUSE, slab_size(slab));
}

/* ---------------------------------------------------------------- checks */

static void restore_bytes(struct kmem_cache *s, const char *message, unsigned char data,
			  unsigned char *from, unsigned char *to)
{
	slab_fix(s, "Restoring %s %p-%p=0x%x", message, from, to - 1, data);
	metadata_memset(from, data, (size_t)(to - from));
}

/*
 * check_bytes_and_report(): [start, start + bytes) must all be @value;
 * otherwise "BUG <cache>: <what> overwritten", the object and the offset
 * of the first bad byte from it, and the bytes restored.
 */
static bool check_bytes_and_report(struct kmem_cache *s, struct page *slab, unsigned char *object,
				   const char *what, unsigned char *start, unsigned char value, size_t bytes)
{
	unsigned char *fault, *end;

	fault = metadata_memchr_inv(start, value, bytes);
	if (!fault)
		return true;
	end = start + bytes;
	while (end > fault && metadata_read_byte(end - 1) == value)
		end--;

	mm_report(s->mm, "slub", slab_pfn(s, slab), slab->flags,
		  "BUG %s: %s overwritten: object %p @offset=%ld: 0x%02x instead of 0x%02x",
		  s->name, what, object, (long)(fault - object), metadata_read_byte(fault), value);
	info(s, "%p-%p @offset=%ld. First byte 0x%x instead of 0x%x", fault, end - 1,
	     (long)(fault - object), metadata_read_byte(fault), value);
	print_slab_info(s, slab);
	print_tracking(s, object);
	restore_bytes(s, what, value, fault, end);
	return false;
}

/* check_pad_bytes(): the padding after the metadata is still POISON_INUSE. */
static bool check_pad_bytes(struct kmem_cache *s, struct page *slab, unsigned char *p)
{
	unsigned long off = get_info_end(s);
	unsigned long size_from_object = s->size - ((s->flags & SLAB_RED_ZONE) ? s->red_left_pad : 0);

	if (s->flags & SLAB_STORE_USER) {
		off += 2 * sizeof(struct track);
		if (s->flags & SLAB_KMALLOC)
			off += sizeof(unsigned int);
	}
	if (size_from_object == off)
		return true;
	return check_bytes_and_report(s, slab, p, "Object padding", p + off, POISON_INUSE,
				      size_from_object - off);
}

/* slab_pad_check(): the bytes after the last object of a poisoned slab. */
void slab_pad_check(struct kmem_cache *s, struct page *slab)
{
	unsigned char *start, *end, *pad, *fault;
	size_t length, remainder;

	if (!(s->flags & SLAB_POISON))
		return;
	start = slab_address(s->mm, slab);
	length = slab_size(slab);
	end = start + length;
	remainder = length % s->size;
	if (!remainder)
		return;
	pad = end - remainder;
	fault = metadata_memchr_inv(pad, POISON_INUSE, remainder);
	if (!fault)
		return;
	while (end > fault && metadata_read_byte(end - 1) == POISON_INUSE)
		end--;
	slab_err(s, slab, "Padding overwritten. %p-%p @offset=%ld", fault, end - 1, (long)(fault - start));
	restore_bytes(s, "slab padding", POISON_INUSE, fault, end);
}

/*
 * check_object() (Linux 6.6): red zones (left, right, and a kmalloc's
 * unused tail), poison of a free object, padding, and - where the object
 * does not overlay it - the free pointer.  @val: SLUB_RED_ACTIVE for an
 * allocated object, SLUB_RED_INACTIVE for a free one.
 *
 * As in 6.6, the first bad red zone or poison fails the object at once
 * (what lies after it goes unchecked), while bad alignment padding and
 * bad padding after the metadata are reported and restored but do not
 * fail it: such an object is still freed or allocated.  (Later kernels
 * check everything and fail the object on any of it.)
 */
bool check_object(struct kmem_cache *s, struct page *slab, void *object, unsigned char val)
{
	unsigned char *p = object, *endobject = p + s->object_size;

	if (s->flags & SLAB_RED_ZONE) {
		if (!check_bytes_and_report(s, slab, p, "Left Redzone", p - s->red_left_pad, val, s->red_left_pad))
			return false;
		if (!check_bytes_and_report(s, slab, p, "Right Redzone", endobject, val, s->inuse - s->object_size))
			return false;
		if (slub_debug_orig_size(s) && val == SLUB_RED_ACTIVE) {
			unsigned int orig_size = get_orig_size(s, object);
			if (s->object_size > orig_size &&
			    !check_bytes_and_report(s, slab, p, "kmalloc Redzone", p + orig_size, val,
						    s->object_size - orig_size))
				return false;
		}
	} else if ((s->flags & SLAB_POISON) && s->object_size < s->inuse) {
		/* Reported and restored; not a reason to fail the object. */
		(void)check_bytes_and_report(s, slab, p, "Alignment padding", endobject, POISON_INUSE,
					     s->inuse - s->object_size);
	}

	if (s->flags & SLAB_POISON) {
		if (val != SLUB_RED_ACTIVE && (s->flags & __OBJECT_POISON)) {
			if (s->object_size > 1 &&
			    !check_bytes_and_report(s, slab, p, "Poison", p, POISON_FREE, s->object_size - 1))
				return false;
			if (!check_bytes_and_report(s, slab, p, "End Poison", p + s->object_size - 1, POISON_END, 1))
				return false;
		}
		/* check_pad_bytes() cleans up on its own: not a failure either. */
		(void)check_pad_bytes(s, slab, p);
	}

	/* An allocated object overlaying its free pointer has no free pointer to check. */
	if (!freeptr_outside_object(s) && val == SLUB_RED_ACTIVE)
		return true;

	if (!check_valid_pointer(s, s->mm, slab, get_freepointer(s, p))) {
		object_err(s, slab, p, "Freepointer corrupt");
		/* Zap it: the rest of this free list is lost (and counted wrong next). */
		set_freepointer(s, p, NULL);
		return false;
	}
	return true;
}

static unsigned int max_objects_of(struct kmem_cache *s, struct page *slab)
{
	size_t n = slab_size(slab) / s->size;
	return (unsigned int)MIN(n, (size_t)MAX_OBJS_PER_PAGE);
}

/* check_slab(): the slab's own fields are plausible. */
static bool check_slab(struct kmem_cache *s, struct page *slab)
{
	union slab_ctr ctr;
	unsigned int maxobj;

	if (!PageSlab(slab)) {
		slab_err(s, slab, "Not a valid slab page");
		return false;
	}
	ctr = slab_ctr(slab);
	maxobj = max_objects_of(s, slab);
	if (ctr.c.objects > maxobj) {
		slab_err(s, slab, "objects %u > max %u", ctr.c.objects, maxobj);
		return false;
	}
	if (ctr.c.inuse > ctr.c.objects) {
		slab_err(s, slab, "inuse %u > max %u", ctr.c.inuse, ctr.c.objects);
		return false;
	}
	slab_pad_check(s, slab);
	return true;
}

/* Debug repairs change inuse: keep the live-object accounting of S1 right. */
static void set_inuse_repair(struct kmem_cache *s, struct page *slab, unsigned int inuse)
{
	union slab_ctr ctr = slab_ctr(slab);
	atomic_fetch_add(&s->nr_isolated, (long)inuse - (long)ctr.c.inuse);
	ctr.c.inuse = inuse & 0xffff;
	slab_set_counters(slab, ctr.counters);
}

/*
 * on_freelist() (Linux 6.6): is @search on the slab's freelist?  The walk
 * also validates the list and the counters, and repairs them: a bad
 * pointer cuts the chain, inuse is recounted.  A cycle (more entries than
 * objects) is the model's own repair: 6.6 has no cycle test (its inuse
 * wraps to objects - (objects + 1) and validate_slab() then walks the
 * cycle for ever).  The chain is cut as after a bad pointer and the
 * entries left are counted, so inuse agrees with the list (S1) and the
 * slab, with free objects left, may stay on the partial list (S2); 6.14
 * clears the whole list instead ("slub: Handle freelist cycle in
 * on_freelist()"), which would leave a full slab there.  Caller holds
 * list_lock (debug caches).
 */
static bool on_freelist(struct kmem_cache *s, struct page *slab, void *search)
{
	unsigned int nr = 0, max_objects, objects = slab_objects(slab);
	void *fp = slab_freelist(slab), *object = NULL;

	while (fp && nr <= objects) {
		if (fp == search)
			return true;
		if (!check_valid_pointer(s, s->mm, slab, fp)) {
			if (object) {
				object_err(s, slab, object, "Freechain corrupt");
				set_freepointer(s, object, NULL);
			} else {
				slab_err(s, slab, "Freepointer corrupt");
				slab_set_freelist(slab, NULL);
				set_inuse_repair(s, slab, objects);
				slab_fix(s, "Freelist cleared");
				return false;
			}
			break;
		}
		object = fp;
		fp = get_freepointer(s, object);
		nr++;
	}
	if (fp && nr > objects) {
		/* more entries than objects: a cycle, cut after @object (on it), then what is left counted */
		object_err(s, slab, object, "Freechain corrupt");
		set_freepointer(s, object, NULL);
		slab_fix(s, "Isolate corrupted freechain");
		nr = 0;
		for (fp = slab_freelist(slab); fp; fp = get_freepointer(s, fp))
			nr++;
	}

	max_objects = max_objects_of(s, slab);
	if (objects != max_objects) {                   /* too few is as wrong as too many (6.6) */
		slab_err(s, slab, "Wrong number of objects. Found %u but should be %u", objects, max_objects);
		union slab_ctr ctr = slab_ctr(slab);
		ctr.c.objects = max_objects & 0x7fff;
		slab_set_counters(slab, ctr.counters);
		objects = max_objects;
		slab_fix(s, "Number of objects adjusted");
	}
	if (slab_inuse(slab) != objects - nr) {
		slab_err(s, slab, "Wrong object count. Counter is %u but counted were %u", slab_inuse(slab),
			 objects - nr);
		set_inuse_repair(s, slab, objects - nr);
		slab_fix(s, "Object count adjusted");
	}
	return search == NULL;
}

/* ---------------------------------------------------------------- debug processing */

/* alloc_debug_processing(): a free object is about to be handed out. */
static bool alloc_debug_processing(struct kmem_cache *s, struct page *slab, void *object, unsigned int orig_size)
{
	if (s->flags & SLAB_CONSISTENCY_CHECKS) {
		if (!check_slab(s, slab))
			goto bad;
		if (!check_valid_pointer(s, s->mm, slab, object)) {
			object_err(s, slab, object, "Freelist Pointer check fails");
			goto bad;
		}
		if (!check_object(s, slab, object, SLUB_RED_INACTIVE))
			goto bad;
	}
	trace(s, slab, object, 1);
	set_orig_size(s, object, orig_size);
	init_object(s, object, SLUB_RED_ACTIVE);
	return true;
bad:
	if (PageSlab(slab)) {
		/*
		 * Touch none of its objects again: all "in use", nothing free.
		 * Both callers counted @object in inuse before the checks (as
		 * 6.6's alloc_single_from_partial() and _new_slab() do), and it
		 * is not handed out either: it is isolated with the rest, so
		 * the model's count of isolated objects (S1) takes it too.
		 */
		slab_fix(s, "Marking all objects used");
		atomic_fetch_add(&s->nr_isolated, 1);
		set_inuse_repair(s, slab, slab_objects(slab));
		slab_set_freelist(slab, NULL);
	}
	return false;
}

/*
 * free_consistency_checks(): @object must be an allocated object of this
 * slab of this cache: "Invalid object pointer", "Object already free",
 * a damaged object, or another cache's slab are refused.
 */
static bool free_consistency_checks(struct kmem_cache *s, struct page *slab, void *object)
{
	if (!check_valid_pointer(s, s->mm, slab, object)) {
		slab_err(s, slab, "Invalid object pointer %p", object);
		return false;
	}
	if (on_freelist(s, slab, object)) {
		object_err(s, slab, object, "Object already free");
		return false;
	}
	if (!check_object(s, slab, object, SLUB_RED_ACTIVE))
		return false;
	if (unlikely(s != slab->slab_cache)) {
		if (!PageSlab(slab))
			slab_err(s, slab, "Attempt to free object(%p) outside of slab", object);
		else
			object_err(s, slab, object, "page slab pointer corrupt.");
		return false;
	}
	return true;
}

/* free_debug_processing(): every object of [head .. tail]; *bulk_cnt is corrected. */
static bool free_debug_processing(struct kmem_cache *s, struct page *slab, void *head, void *tail,
				  int *bulk_cnt, unsigned long addr)
{
	bool checks_ok = false;
	void *object = head;
	int cnt = 0;

	if (s->flags & SLAB_CONSISTENCY_CHECKS) {
		if (!check_slab(s, slab))
			goto out;
	}
	if ((int)slab_inuse(slab) < *bulk_cnt) {
		slab_err(s, slab, "Slab has %u allocated objects but %d are to be freed", slab_inuse(slab), *bulk_cnt);
		goto out;
	}
next_object:
	if (++cnt > *bulk_cnt)
		goto out_cnt;
	if (s->flags & SLAB_CONSISTENCY_CHECKS) {
		if (!free_consistency_checks(s, slab, object))
			goto out;
	}
	if (s->flags & SLAB_STORE_USER)
		set_track(s, object, TRACK_FREE, addr);
	trace(s, slab, object, 0);
	init_object(s, object, SLUB_RED_INACTIVE);   /* the free pointer is outside or rewritten next */
	if (object != tail) {
		object = get_freepointer(s, object);
		goto next_object;
	}
	checks_ok = true;
out_cnt:
	if (cnt != *bulk_cnt) {
		slab_err(s, slab, "Bulk free expected %d objects but found %d", *bulk_cnt, cnt);
		*bulk_cnt = cnt;
	}
out:
	if (!checks_ok)
		slab_fix(s, "Object at %p not freed", object);
	return checks_ok;
}

/* ---------------------------------------------------------------- debug cache paths */

void add_full(struct kmem_cache *s, struct kmem_cache_node *n, struct page *slab)
{
	if (!(s->flags & SLAB_STORE_USER))
		return;
	list_add(&slab->slab_list, &n->full);
}

void remove_full(struct kmem_cache *s, struct kmem_cache_node *n, struct page *slab)
{
	if (!(s->flags & SLAB_STORE_USER))
		return;
	list_del(&slab->slab_list);
	slab->slab_list.next = slab->slab_list.prev = NULL;
}

/* alloc_single_from_partial(): one object off a node partial slab, list_lock held. */
void *alloc_single_from_partial(struct kmem_cache *s, struct kmem_cache_node *n, struct page *slab,
				unsigned int orig_size)
{
	union slab_ctr ctr = slab_ctr(slab);
	void *object = slab_freelist(slab);

	slab_set_freelist(slab, get_freepointer(s, object));
	ctr.c.inuse++;
	slab_set_counters(slab, ctr.counters);

	if (!alloc_debug_processing(s, slab, object, orig_size)) {
		remove_partial(n, slab);
		return NULL;
	}
	if (slab_inuse(slab) == slab_objects(slab)) {
		remove_partial(n, slab);
		add_full(s, n, slab);
	}
	return object;
}

/* alloc_single_from_new_slab(): the first object of a new slab, which then joins the node lists. */
void *alloc_single_from_new_slab(struct kmem_cache *s, struct page *slab, unsigned int orig_size)
{
	struct kmem_cache_node *n = get_node(s, 0);
	union slab_ctr ctr = slab_ctr(slab);
	void *object = slab_freelist(slab);
	unsigned long flags;

	slab_set_freelist(slab, get_freepointer(s, object));
	ctr.c.inuse = 1;
	slab_set_counters(slab, ctr.counters);

	if (!alloc_debug_processing(s, slab, object, orig_size)) {
		/* Not expected on a fresh slab; a concurrent corruption could. The
		 * slab is marked all used and stays on no list. */
		return NULL;
	}
	spin_lock_irqsave(&n->list_lock, flags);
	if (slab_inuse(slab) == slab_objects(slab))
		add_full(s, n, slab);
	else
		add_partial(n, slab, false);
	inc_slabs_node(s, slab_objects(slab));
	spin_unlock_irqrestore(&n->list_lock, flags);
	return object;
}

/* free_to_partial_list(): the free path of debug caches, all under list_lock. */
void free_to_partial_list(struct kmem_cache *s, struct page *slab, void *head, void *tail, int bulk_cnt,
			  unsigned long addr)
{
	struct kmem_cache_node *n = get_node(s, 0);
	struct page *slab_free = NULL;
	int cnt = bulk_cnt;
	unsigned long flags;

	spin_lock_irqsave(&n->list_lock, flags);
	if (free_debug_processing(s, slab, head, tail, &cnt, addr)) {
		void *prior = slab_freelist(slab);
		union slab_ctr ctr = slab_ctr(slab);

		/*
		 * set_freepointer(s, tail, prior) below is where the kernel's
		 * hardened build catches a double free of the freelist head on
		 * this path too: without SLAB_CONSISTENCY_CHECKS nothing before
		 * it looks at the object's state.
		 */
		if (unlikely(slab_free_naive_double_free(s, slab, tail, prior))) {
			spin_unlock_irqrestore(&n->list_lock, flags);
			return;
		}
		ctr.c.inuse -= cnt;
		slab_set_counters(slab, ctr.counters);
		set_freepointer(s, tail, prior);
		slab_set_freelist(slab, head);
		slub_count_live(s, -cnt);

		/* Empty and enough partial slabs on the node: give it back. */
		if (ctr.c.inuse == 0 && node_nr_partial(n) >= s->min_partial)
			slab_free = slab;
		if (!prior) {
			remove_full(s, n, slab);      /* it was full */
			if (!slab_free) {
				add_partial(n, slab, true);
				stat(s, FREE_ADD_PARTIAL);
			}
		} else if (slab_free) {
			remove_partial(n, slab);
			stat(s, FREE_REMOVE_PARTIAL);
		}
	}
	/* Uncounted while still under list_lock: validation never sees it half gone. */
	if (slab_free)
		dec_slabs_node(s, slab_objects(slab_free));
	spin_unlock_irqrestore(&n->list_lock, flags);
	if (slab_free) {
		stat(s, FREE_SLAB);
		free_slab(s, slab_free);
	}
}

/* ---------------------------------------------------------------- validation */

/* validate_slab(): the list and counters first, then every object as what it is. */
static void validate_slab(struct kmem_cache *s, struct page *slab, unsigned char *map)
{
	char *addr = slab_address(s->mm, slab);
	unsigned int objects;
	void *p;

	if (!check_slab(s, slab) || !on_freelist(s, slab, NULL))
		return;
	objects = slab_objects(slab);
	memset(map, 0, objects);
	/* on_freelist() just made the list valid and acyclic */
	for (p = slab_freelist(slab); p; p = get_freepointer(s, p))
		map[obj_to_index(s, addr, p)] = 1;
	for_each_object(p, s, addr, objects) {
		unsigned char val = map[obj_to_index(s, addr, p)] ? SLUB_RED_INACTIVE : SLUB_RED_ACTIVE;
		if (!check_object(s, slab, p, val))
			break;
	}
}

static unsigned long validate_slab_node(struct kmem_cache *s, struct kmem_cache_node *n, unsigned char *map)
{
	unsigned long count = 0, flags;
	struct list_head *pos;

	spin_lock_irqsave(&n->list_lock, flags);
	list_for_each(pos, &n->partial) {
		validate_slab(s, list_entry(pos, struct page, slab_list), map);
		count++;
	}
	if (count != node_nr_partial(n))
		mm_report(s->mm, "slub", ~0UL, 0, "SLUB %s: %lu partial slabs counted but counter=%lu", s->name,
			  count, node_nr_partial(n));
	if (s->flags & SLAB_STORE_USER) {
		list_for_each(pos, &n->full) {
			validate_slab(s, list_entry(pos, struct page, slab_list), map);
			count++;
		}
		if (count != (unsigned long)atomic_load(&n->nr_slabs))
			mm_report(s->mm, "slub", ~0UL, 0, "SLUB: %s %lu slabs counted but counter=%ld", s->name,
				  count, atomic_load(&n->nr_slabs));
	}
	spin_unlock_irqrestore(&n->list_lock, flags);
	return count;
}

/*
 * validate_slab_cache(): flush the vCPUs, then check every listed slab
 * (partial ones; full ones too where SLAB_STORE_USER keeps a full list).
 * Returns the number of reports made (each BUG and each FIX line).  For a
 * cache without debug flags, only while nobody frees into it.
 */
long validate_slab_cache(struct kmem_cache *s)
{
	unsigned long before;
	unsigned char *map;

	if (!s)
		return 0;
	map = malloc(MAX_OBJS_PER_PAGE + 1);
	if (!map)
		return 0;
	before = mm_nr_reports(s->mm);
	flush_all(s, true);
	validate_slab_node(s, get_node(s, 0), map);
	free(map);
	return (long)(mm_nr_reports(s->mm) - before);
}

/* list_slab_objects(): the leak report of kmem_cache_destroy for one slab. */
void list_slab_objects(struct kmem_cache *s, struct page *slab)
{
	char *addr = slab_address(s->mm, slab);
	unsigned int objects = slab_objects(slab), inuse = slab_inuse(slab);
	unsigned char *map = calloc(objects + 1, 1);
	unsigned int nr = 0;
	void *p;

	slab_err(s, slab, "Objects remaining in %s on kmem_cache_close(): %u of %u objects", s->name, inuse,
		 objects);
	if (!map)
		return;
	for (p = slab_freelist(slab); p && nr++ < objects && check_valid_pointer(s, s->mm, slab, p);
	     p = get_freepointer(s, p))
		map[obj_to_index(s, addr, p)] = 1;
	for_each_object(p, s, addr, objects) {
		if (!map[obj_to_index(s, addr, p)]) {
			info(s, "Object %p @offset=%ld", p, (long)((char *)p - addr));
			print_tracking(s, p);
		}
	}
	free(map);
}
